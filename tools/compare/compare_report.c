/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pnmf-compare's output: the Markdown tables on stdout, rd.csv and bd.csv,
 * and the RD plot, drawn by gnuplot driven through a pipe.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_util.h"
#include "compare.h"
#include "compare_bd.h"

static double bpp(const CmpClip *clip, const CmpPoint *p)
{
    return 8.0 * (double)p->bytes / ((double)clip->frames * clip->width * clip->height);
}

static int usable(const CmpPoint *p)
{
    return p->ok && p->psnr < 999;
}

/* "12.3", or "n/a" for an unknown value (negative or infinite). */
static const char *num(char *buf, size_t len, const char *fmt, double v)
{
    if (!(v >= 0) || v > 1e12) snprintf(buf, len, "n/a");
    else snprintf(buf, len, fmt, v);
    return buf;
}

static double fps(const CmpPoint *p, double seconds)
{
    return seconds > 0 ? p->frames / seconds : -1;
}

/* The bullet line of pnmf's settings; extra goes after "libpnmf". */
static void pnmf_settings(FILE *f, const CmpOptions *o, const char *extra)
{
    const PnmfEncSettings *s = &o->pnmf;
    fprintf(f, "- pnmf: libpnmf%s, -k %d --%s -w %d --%s --%s --%s%s --shift %s --canvas-pad %d --%s --%s --algo %s "
               "--iterations %d --inner %d --refine %d --restarts %d --seed %llu --zstd-level %d\n",
            extra, s->components, s->auto_k ? "auto-k" : "fixed-k", s->window,
            s->scene_cut ? "scenecut" : "no-scenecut", s->carry ? "carry" : "no-carry",
            s->repeats ? "repeats" : "no-repeats", s->recentre ? " --recentre" : "",
            s->shift_model == PNMF_SHIFT_CANVAS ? "canvas" : s->shift_model == PNMF_SHIFT_TORUS ? "torus" : "vector",
            s->canvas_pad, s->signed_components ? "signed" : "unsigned", s->residual ? "residual" : "no-residual",
            s->algo == PNMF_ALGO_IMPROVED ? "improved" : "paper", s->iterations, s->inner_iters, s->refine,
            s->restarts, (unsigned long long)s->seed, s->zstd_level);
}

void cmp_report_table(FILE *f, const CmpClip *clip, const CmpOptions *o, const CmpRun *runs, int nruns)
{
    fprintf(f, "Clip `%s`: %d frames of %dx%d at %g fps, luma only; %d thread%s per codec.\n\n", clip->path,
            clip->frames, clip->width, clip->height, (double)clip->fps_num / clip->fps_den, o->threads,
            o->threads == 1 ? "" : "s");
    fprintf(f, "| codec | setting | bytes | bpp | PSNR-Y dB | SSIM-Y | enc fps | dec fps | peak MiB |\n");
    fprintf(f, "|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    int nfail = 0;
    for (int r = 0; r < nruns; r++) {
        const CmpRun *run = &runs[r];
        for (int i = 0; i < run->npoints; i++) {
            const CmpPoint *p = &run->points[i];
            if (!p->ok) {
                nfail++;
                fprintf(f, "| %s | %s %d | failed | | | | | | |\n", run->codec->name, run->codec->param_name,
                        p->param);
                continue;
            }
            char b1[32], b2[32], b3[32];
            fprintf(f, "| %s | %s %d | %llu | %.4f | %.2f | %.4f | %s | %s | %s |\n", run->codec->name,
                    run->codec->param_name, p->param, (unsigned long long)p->bytes, bpp(clip, p), p->psnr,
                    p->ssim, num(b1, sizeof(b1), "%.1f", fps(p, p->enc_seconds)),
                    num(b2, sizeof(b2), "%.1f", fps(p, p->dec_seconds)),
                    num(b3, sizeof(b3), "%.1f", p->peak_mib));
        }
    }
    fprintf(f, "\n");
    for (int r = 0; r < nruns; r++) {
        const CmpCodec *c = runs[r].codec;
        if (c == &cmp_pnmf_codec) {
            pnmf_settings(f, o, "");
        } else {
            uint64_t sei = 0;
            for (int i = 0; i < runs[r].npoints; i++)
                if (runs[r].points[i].sei_bytes > sei) sei = runs[r].points[i].sei_bytes;
            fprintf(f, "- %s: %s", c->name, c->describe);
            if (sei) fprintf(f, "; its SEI messages (version and settings text, %llu bytes) not counted",
                             (unsigned long long)sei);
            fprintf(f, "\n");
        }
    }
    if (nfail) {
        fprintf(f, "\nFailed points:\n\n");
        for (int r = 0; r < nruns; r++)
            for (int i = 0; i < runs[r].npoints; i++)
                if (!runs[r].points[i].ok) fprintf(f, "- %s\n", runs[r].points[i].err);
    }
    fprintf(f, "\n");
}

/* ---- Bjøntegaard deltas ---- */

typedef struct BdRow {
    CmpBd rate, psnr, cubic;
} BdRow;

static const CmpRun *find_pnmf(const CmpRun *runs, int nruns)
{
    for (int r = 0; r < nruns; r++)
        if (runs[r].codec == &cmp_pnmf_codec) return &runs[r];
    return NULL;
}

/* A dominated point: another usable point of the run has no more bytes
 * and a higher PSNR (or as high with fewer bytes). A user would never
 * choose it, so the BD fit leaves it out (and the table says so). */
static int dominated(const CmpRun *run, int i)
{
    const CmpPoint *p = &run->points[i];
    for (int t = 0; t < run->npoints; t++) {
        const CmpPoint *o = &run->points[t];
        if (t == i || !usable(o)) continue;
        if ((o->bytes <= p->bytes && o->psnr > p->psnr) || (o->bytes < p->bytes && o->psnr >= p->psnr))
            return 1;
    }
    return 0;
}

/* A run's usable, undominated points as (bytes, PSNR) arrays; returns the
 * count. */
static int curve(const CmpRun *run, double *rate, double *psnr)
{
    int n = 0;
    for (int i = 0; i < run->npoints && n < CMP_BD_MAX_POINTS; i++)
        if (usable(&run->points[i]) && !dominated(run, i)) {
            rate[n] = (double)run->points[i].bytes;
            psnr[n] = run->points[i].psnr;
            n++;
        }
    return n;
}

/* Name the curves in a refusal: "anchor: ..." becomes "x264: ...". */
static void name_reason(CmpBd *b, const char *anchor)
{
    if (b->ok) return;
    char t[sizeof(b->reason)];
    if (!strncmp(b->reason, "anchor:", 7)) snprintf(t, sizeof(t), "%s:%s", anchor, b->reason + 7);
    else if (!strncmp(b->reason, "test:", 5)) snprintf(t, sizeof(t), "pnmf:%s", b->reason + 5);
    else return;
    memcpy(b->reason, t, sizeof(t));
}

static void bd_row(const CmpRun *test, const CmpRun *anchor, BdRow *row)
{
    double ar[CMP_BD_MAX_POINTS], ap[CMP_BD_MAX_POINTS], tr[CMP_BD_MAX_POINTS], tp[CMP_BD_MAX_POINTS];
    const int na = curve(anchor, ar, ap), nt = curve(test, tr, tp);
    cmp_bd_rate(ar, ap, na, tr, tp, nt, CMP_BD_PCHIP, &row->rate);
    cmp_bd_psnr(ar, ap, na, tr, tp, nt, CMP_BD_PCHIP, &row->psnr);
    cmp_bd_rate(ar, ap, na, tr, tp, nt, CMP_BD_CUBIC, &row->cubic);
    name_reason(&row->rate, anchor->codec->name);
    name_reason(&row->psnr, anchor->codec->name);
    name_reason(&row->cubic, anchor->codec->name);
}

/* A Markdown cell may not hold '|'. */
static void cell(FILE *f, const char *s)
{
    for (; *s; s++) fputc(*s == '|' ? '/' : *s, f);
}

void cmp_report_bd(FILE *f, const CmpRun *runs, int nruns)
{
    const CmpRun *pnmf = find_pnmf(runs, nruns);
    if (!pnmf || nruns < 2) {
        fprintf(f, "No Bjøntegaard deltas: they compare pnmf with the other codecs, and --codecs "
                   "has %s.\n\n", pnmf ? "no other" : "no pnmf");
        return;
    }
    fprintf(f, "Bjøntegaard deltas of pnmf (test) against each codec (anchor), PCHIP fit, over the "
               "overlapping range only (negative BD-rate, positive BD-PSNR: pnmf is better):\n\n");
    fprintf(f, "| anchor | BD-rate %% | BD-PSNR dB | BD-rate %% (cubic) | PSNR-Y overlap dB |\n");
    fprintf(f, "|---|---:|---:|---:|---:|\n");
    for (int r = 0; r < nruns; r++) {
        if (&runs[r] == pnmf) continue;
        BdRow row;
        bd_row(pnmf, &runs[r], &row);
        fprintf(f, "| %s | ", runs[r].codec->name);
        if (row.rate.ok) fprintf(f, "%+.2f", row.rate.value);
        else {
            fputs("refused: ", f);
            cell(f, row.rate.reason);
        }
        fputs(" | ", f);
        if (row.psnr.ok) fprintf(f, "%+.3f", row.psnr.value);
        else if (row.rate.ok || strcmp(row.psnr.reason, row.rate.reason)) {
            fputs("refused: ", f);
            cell(f, row.psnr.reason);
        } else fputs("—", f);
        fputs(" | ", f);
        if (row.cubic.ok) fprintf(f, "%+.2f", row.cubic.value);
        else fputs("—", f);
        fputs(" | ", f);
        if (row.rate.ok) fprintf(f, "%.2f–%.2f", row.rate.lo, row.rate.hi);
        else fputs("—", f);
        fputs(" |\n", f);
    }
    fprintf(f, "\n");
    int any = 0;
    for (int r = 0; r < nruns; r++)
        for (int i = 0; i < runs[r].npoints; i++)
            if (usable(&runs[r].points[i]) && dominated(&runs[r], i)) {
                fprintf(f, "%s %s %s %d", any ? "," : "Left out of the fits, dominated by another point of "
                                                      "their codec (as many bytes or more, and less PSNR):",
                        runs[r].codec->name, runs[r].codec->param_name, runs[r].points[i].param);
                any = 1;
            }
    if (any) fprintf(f, ".\n\n");
}

/* ---- CSV ---- */

static void csv_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* Write dir/name through a temporary file renamed when complete. */
static int write_file(const char *dir, const char *name, void (*body)(FILE *, const void *), const void *arg,
                      char *err, size_t errlen)
{
    char path[4096];
    if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path)) {
        snprintf(err, errlen, "%s/%s: path too long", dir, name);
        return -1;
    }
    FILE *f = cli_tmp_open(path);
    if (!f) {
        snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
        return -1;
    }
    body(f, arg);
    if (ferror(f)) {
        const int e = errno;
        cli_tmp_discard(f);
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(e));
        return -1;
    }
    if (cli_tmp_commit(f, path) < 0) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

typedef struct CsvArgs {
    const CmpClip *clip;
    const CmpRun *runs;
    int nruns;
} CsvArgs;

static void rd_csv(FILE *f, const void *arg)
{
    const CsvArgs *a = arg;
    fprintf(f, "codec,knob,value,frames,width,height,bytes,bpp,psnr_y,ssim_y,enc_fps,dec_fps,enc_cpu_s,"
               "peak_mib,sei_bytes,status\n");
    for (int r = 0; r < a->nruns; r++) {
        const CmpRun *run = &a->runs[r];
        for (int i = 0; i < run->npoints; i++) {
            const CmpPoint *p = &run->points[i];
            fprintf(f, "%s,%s,%d,", run->codec->name, run->codec->param_name, p->param);
            if (!p->ok) {
                fprintf(f, "%d,%d,%d,,,,,,,,,,", a->clip->frames, a->clip->width, a->clip->height);
                csv_string(f, p->err);
                fputc('\n', f);
                continue;
            }
            char b1[32], b2[32], b3[32];
            fprintf(f, "%d,%d,%d,%llu,%.6f,%.4f,%.6f,%s,%s,%.3f,%s,%llu,ok\n", p->frames, a->clip->width,
                    a->clip->height, (unsigned long long)p->bytes, bpp(a->clip, p), p->psnr, p->ssim,
                    num(b1, sizeof(b1), "%.3f", fps(p, p->enc_seconds)),
                    num(b2, sizeof(b2), "%.3f", fps(p, p->dec_seconds)), p->enc_cpu_seconds,
                    num(b3, sizeof(b3), "%.2f", p->peak_mib), (unsigned long long)p->sei_bytes);
        }
    }
}

static void bd_csv(FILE *f, const void *arg)
{
    const CsvArgs *a = arg;
    fprintf(f, "test,anchor,bd_rate_pct,bd_psnr_db,bd_rate_cubic_pct,overlap_lo_db,overlap_hi_db,"
               "bd_rate_status,bd_psnr_status\n");
    const CmpRun *pnmf = find_pnmf(a->runs, a->nruns);
    if (!pnmf) return;
    for (int r = 0; r < a->nruns; r++) {
        if (&a->runs[r] == pnmf) continue;
        BdRow row;
        bd_row(pnmf, &a->runs[r], &row);
        fprintf(f, "pnmf,%s,", a->runs[r].codec->name);
        if (row.rate.ok) fprintf(f, "%.4f,", row.rate.value);
        else fputc(',', f);
        if (row.psnr.ok) fprintf(f, "%.4f,", row.psnr.value);
        else fputc(',', f);
        if (row.cubic.ok) fprintf(f, "%.4f,", row.cubic.value);
        else fputc(',', f);
        if (row.rate.ok) fprintf(f, "%.3f,%.3f,ok,", row.rate.lo, row.rate.hi);
        else {
            fputs(",,", f);
            csv_string(f, row.rate.reason);
            fputc(',', f);
        }
        if (row.psnr.ok) fputs("ok", f);
        else csv_string(f, row.psnr.reason);
        fputc('\n', f);
    }
}

int cmp_report_csv(const char *dir, const CmpClip *clip, const CmpRun *runs, int nruns, char *err,
                   size_t errlen)
{
    const CsvArgs a = { clip, runs, nruns };
    if (write_file(dir, "rd.csv", rd_csv, &a, err, errlen) < 0) return -1;
    return write_file(dir, "bd.csv", bd_csv, &a, err, errlen);
}

/* ---- --lossless ---- */

static int exact(const CmpClip *clip, const CmpPoint *p)
{
    return p->ok && p->frames == clip->frames && p->diff_pixels == 0;
}

/* The pnmf run's point when it is measured and exact, else NULL. */
static const CmpPoint *pnmf_lossless(const CmpClip *clip, const CmpRun *runs, int nruns)
{
    const CmpRun *r = find_pnmf(runs, nruns);
    return r && r->npoints == 1 && exact(clip, &r->points[0]) ? &r->points[0] : NULL;
}

void cmp_report_lossless(FILE *f, const CmpClip *clip, const CmpOptions *o, const CmpRun *runs, int nruns)
{
    const double raw = (double)clip->frames * clip->width * clip->height;
    fprintf(f, "Clip `%s`: %d frames of %dx%d at %g fps, luma only (%.0f bytes raw); %d thread%s per codec. "
               "Lossless: every decoded frame compared with the source's gray frame.\n\n",
            clip->path, clip->frames, clip->width, clip->height, (double)clip->fps_num / clip->fps_den, raw,
            o->threads, o->threads == 1 ? "" : "s");
    const CmpPoint *ref = pnmf_lossless(clip, runs, nruns);
    fprintf(f, "| codec | bytes | bpp | vs pnmf | enc fps | dec fps | peak MiB | lossless |\n");
    fprintf(f, "|---|---:|---:|---:|---:|---:|---:|---|\n");
    int nfail = 0;
    for (int r = 0; r < nruns; r++) {
        const CmpPoint *p = &runs[r].points[0];
        if (!p->ok) {
            nfail++;
            fprintf(f, "| %s | failed | | | | | | |\n", runs[r].codec->name);
            continue;
        }
        char b1[32], b2[32], b3[32], vs[32] = "—";
        if (ref && p != ref && exact(clip, p))
            snprintf(vs, sizeof(vs), "%+.1f %%", 100.0 * ((double)p->bytes / (double)ref->bytes - 1));
        fprintf(f, "| %s | %llu | %.4f | %s | %s | %s | %s | ", runs[r].codec->name, (unsigned long long)p->bytes,
                bpp(clip, p), vs, num(b1, sizeof(b1), "%.1f", fps(p, p->enc_seconds)),
                num(b2, sizeof(b2), "%.1f", fps(p, p->dec_seconds)), num(b3, sizeof(b3), "%.1f", p->peak_mib));
        if (exact(clip, p)) fprintf(f, "yes |\n");
        else
            fprintf(f, "**not lossless**: %llu of %.0f pixels differ (by up to %d), PSNR-Y %.2f dB |\n",
                    (unsigned long long)p->diff_pixels, raw, p->max_diff, p->psnr);
    }
    fprintf(f, "\n");
    for (int r = 0; r < nruns; r++) {
        const CmpCodec *c = runs[r].codec;
        if (c == &cmp_pnmf_codec) pnmf_settings(f, o, " -q 0");
        else fprintf(f, "- %s: %s\n", c->name, c->describe);
    }
    if (nfail) {
        fprintf(f, "\nFailed:\n\n");
        for (int r = 0; r < nruns; r++)
            if (!runs[r].points[0].ok) fprintf(f, "- %s\n", runs[r].points[0].err);
    }
    fprintf(f, "\n");
}

static void lossless_csv(FILE *f, const void *arg)
{
    const CsvArgs *a = arg;
    fprintf(f, "codec,frames,width,height,bytes,bpp,enc_fps,dec_fps,enc_cpu_s,peak_mib,lossless,diff_pixels,"
               "max_diff,psnr_y,status\n");
    for (int r = 0; r < a->nruns; r++) {
        const CmpPoint *p = &a->runs[r].points[0];
        fprintf(f, "%s,", a->runs[r].codec->name);
        if (!p->ok) {
            fprintf(f, "%d,%d,%d,,,,,,,,,,,", a->clip->frames, a->clip->width, a->clip->height);
            csv_string(f, p->err);
            fputc('\n', f);
            continue;
        }
        char b1[32], b2[32], b3[32];
        fprintf(f, "%d,%d,%d,%llu,%.6f,%s,%s,%.3f,%s,%s,%llu,%d,%.4f,ok\n", p->frames, a->clip->width,
                a->clip->height, (unsigned long long)p->bytes, bpp(a->clip, p),
                num(b1, sizeof(b1), "%.3f", fps(p, p->enc_seconds)), num(b2, sizeof(b2), "%.3f", fps(p, p->dec_seconds)),
                p->enc_cpu_seconds, num(b3, sizeof(b3), "%.2f", p->peak_mib), exact(a->clip, p) ? "yes" : "no",
                (unsigned long long)p->diff_pixels, p->max_diff, p->psnr);
    }
}

int cmp_report_lossless_csv(const char *dir, const CmpClip *clip, const CmpRun *runs, int nruns, char *err,
                            size_t errlen)
{
    const CsvArgs a = { clip, runs, nruns };
    return write_file(dir, "lossless.csv", lossless_csv, &a, err, errlen);
}

/* ---- plot ---- */

/* Is prog an executable file in a $PATH directory? */
static int in_path(const char *name)
{
    const char *path = getenv("PATH");
    if (!path) return 0;
    char buf[4096];
    while (*path) {
        const char *e = strchr(path, ':');
        const size_t len = e ? (size_t)(e - path) : strlen(path);
        if (len > 0 && snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, path, name) < (int)sizeof(buf)) {
            struct stat st;
            if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0) return 1;
        }
        if (!e) break;
        path = e + 1;
    }
    return 0;
}

/* A gnuplot single-quoted string: a quote inside is doubled. */
static void gp_string(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'') fputc('\'', f);
        if (*s != '\n') fputc(*s, f);
    }
    fputc('\'', f);
}

static int cmp_bpp(const void *a, const void *b)
{
    const double x = ((const double *)a)[0], y = ((const double *)b)[0];
    return x < y ? -1 : x > y;
}

/* Start a plot dir/NAME.FORMAT: gnuplot through a pipe, its terminal set
 * and its output a temporary file (tmp), the title the clip's. Returns 0
 * with *gp open, 1 when gnuplot is not installed, -1 on failure. */
static int gp_begin(const char *dir, const char *name, const char *format, const CmpClip *clip,
                    const char *what, char *path, size_t pathlen, char *tmp, size_t tmplen, FILE **gp,
                    char *err, size_t errlen)
{
    if (snprintf(path, pathlen, "%s/%s.%s", dir, name, format) >= (int)pathlen ||
        snprintf(tmp, tmplen, "%s/.%s.%s.tmp.%ld", dir, name, format, (long)getpid()) >= (int)tmplen) {
        snprintf(err, errlen, "%s: path too long", dir);
        return -1;
    }
    if (!in_path("gnuplot")) return 1;
    *gp = popen("gnuplot", "w");
    if (!*gp) {
        snprintf(err, errlen, "%s: cannot run gnuplot: %s", path, strerror(errno));
        return -1;
    }
    if (!strcmp(format, "png")) fprintf(*gp, "set terminal pngcairo size 960,640 font 'sans,11' noenhanced\n");
    else fprintf(*gp, "set terminal svg size 960,640 font 'sans,13' noenhanced background rgb 'white'\n");
    fputs("set output ", *gp);
    gp_string(*gp, tmp);
    fputc('\n', *gp);
    char title[1024];
    const char *base = strrchr(clip->path, '/');
    snprintf(title, sizeof(title), "%s: %s%d frames of %dx%d, luma", base ? base + 1 : clip->path, what,
             clip->frames, clip->width, clip->height);
    fputs("set title ", *gp);
    gp_string(*gp, title);
    fputc('\n', *gp);
    return 0;
}

/* Finish the plot: close gnuplot and rename tmp to path when it wrote one. */
static int gp_end(FILE *gp, const char *tmp, const char *path, char *err, size_t errlen)
{
    fputs("\nunset output\nquit\n", gp);
    const int st = pclose(gp);
    struct stat sb;
    if (st != 0 || stat(tmp, &sb) < 0 || sb.st_size == 0) {
        unlink(tmp);
        snprintf(err, errlen, "%s: gnuplot failed (status %d)", path, st);
        return -1;
    }
    if (rename(tmp, path) < 0) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* pnmf thick and black, the others in the Okabe-Ito colour-blind-safe
 * palette, then two of Paul Tol's (the lossless chart has nine others) */
static const char *const palette[] = { "#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00",
                                       "#CC79A7", "#999999", "#882255", "#117733" };
#define NPALETTE ((int)(sizeof(palette) / sizeof(palette[0])))

int cmp_report_plot(const char *dir, const char *format, const CmpClip *clip, const CmpRun *runs,
                    int nruns, char *path, size_t pathlen, char *err, size_t errlen)
{
    char tmp[4096];
    FILE *gp = NULL;
    const int b = gp_begin(dir, "rd", format, clip, "", path, pathlen, tmp, sizeof(tmp), &gp, err, errlen);
    if (b != 0) return b;
    fputs("set xlabel 'bits per pixel'\nset ylabel 'PSNR-Y (dB)'\nset logscale x\n"
          "set grid xtics ytics mxtics\nset key bottom right box opaque width 1 spacing 1.2\n",
          gp);
    /* one datablock per codec, points sorted by bpp */
    int nplotted = 0;
    for (int r = 0; r < nruns; r++) {
        double pts[2 * 64];
        int n = 0;
        for (int i = 0; i < runs[r].npoints && n < 64; i++)
            if (usable(&runs[r].points[i])) {
                pts[2 * n] = bpp(clip, &runs[r].points[i]);
                pts[2 * n + 1] = runs[r].points[i].psnr;
                n++;
            }
        qsort(pts, (size_t)n, 2 * sizeof(double), cmp_bpp);
        fprintf(gp, "$d%d << EOD\n", r);
        for (int i = 0; i < n; i++) fprintf(gp, "%.8g %.4f\n", pts[2 * i], pts[2 * i + 1]);
        fprintf(gp, "EOD\n");
        nplotted += n > 0;
    }
    fputs("plot ", gp);
    int first = 1, k = 0;
    for (int r = 0; r < nruns; r++) {
        int any = 0;
        for (int i = 0; i < runs[r].npoints; i++) any |= usable(&runs[r].points[i]);
        if (!any) continue;
        const int is_pnmf = runs[r].codec == &cmp_pnmf_codec;
        fprintf(gp, "%s$d%d using 1:2 with linespoints lw %s lc rgb '%s' pt %d ps 1.2 title ",
                first ? "" : ", ", r, is_pnmf ? "3" : "1.5", is_pnmf ? "#000000" : palette[k % NPALETTE],
                is_pnmf ? 5 : 7 + 2 * (k % 5));
        if (!is_pnmf) k++;
        gp_string(gp, runs[r].codec->name);
        first = 0;
    }
    if (!nplotted) fputs("NaN notitle", gp);
    return gp_end(gp, tmp, path, err, errlen);
}

int cmp_report_lossless_plot(const char *dir, const char *format, const CmpClip *clip, const CmpRun *runs,
                             int nruns, char *path, size_t pathlen, char *err, size_t errlen)
{
    char tmp[4096];
    FILE *gp = NULL;
    const int b = gp_begin(dir, "lossless", format, clip, "lossless, ", path, pathlen, tmp, sizeof(tmp), &gp, err,
                           errlen);
    if (b != 0) return b;
    /* one bar per measured codec, in the table's order: the exact ones
     * solid, the others hatched and labelled */
    fputs("set ylabel 'bits per pixel'\nset yrange [0:*]\nset grid ytics\nunset key\n"
          "set boxwidth 0.7\nset xtics nomirror\nset offsets 0.6, 0.6, graph 0.08, 0\n",
          gp);
    int n = 0, k = 0, nok = 0, nbad = 0;
    fputs("$ok << EOD\n", gp);
    for (int r = 0; r < nruns; r++) {
        const CmpPoint *p = &runs[r].points[0];
        if (!p->ok) continue;
        const int is_pnmf = runs[r].codec == &cmp_pnmf_codec;
        const char *col = is_pnmf ? "#000000" : palette[k++ % NPALETTE];
        if (exact(clip, p) && ++nok) fprintf(gp, "%d \"%s\" %.8g %ld \"%.3g\"\n", n, runs[r].codec->name, bpp(clip, p),
                                    strtol(col + 1, NULL, 16), bpp(clip, p));
        n++;
    }
    fputs("EOD\n$bad << EOD\n", gp);
    n = k = 0;
    for (int r = 0; r < nruns; r++) {
        const CmpPoint *p = &runs[r].points[0];
        if (!p->ok) continue;
        const int is_pnmf = runs[r].codec == &cmp_pnmf_codec;
        const char *col = is_pnmf ? "#000000" : palette[k++ % NPALETTE];
        if (!exact(clip, p) && ++nbad) fprintf(gp, "%d \"%s\" %.8g %ld \"%.3g, not lossless\"\n", n, runs[r].codec->name,
                                     bpp(clip, p), strtol(col + 1, NULL, 16), bpp(clip, p));
        n++;
    }
    fputs("EOD\n", gp);
    fputs("plot ", gp);
    if (nok)
        fputs("$ok using 1:3:4:xtic(2) with boxes fs solid 0.85 border rgb '#333333' lc rgb variable, "
              "$ok using 1:3:5 with labels offset 0,0.8",
              gp);
    if (nbad)
        fprintf(gp, "%s$bad using 1:3:4:xtic(2) with boxes fs pattern 2 border rgb '#333333' lc rgb variable, "
                    "$bad using 1:3:5 with labels offset 0,0.8 textcolor rgb '#D55E00'",
                nok ? ", " : "");
    if (!n) fputs("NaN notitle", gp);
    return gp_end(gp, tmp, path, err, errlen);
}
