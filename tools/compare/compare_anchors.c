/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pnmf-compare --anchors FILE: the points of codecs measured in an earlier
 * run, read back from its rd.csv, so that a change to pnmf is compared
 * with the same anchors without encoding them again. The file must have
 * been measured on the same frames (count and size); what it says is
 * taken as it stands (bytes, PSNR-Y, SSIM-Y, speeds).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"

#define RD_HEADER "codec,knob,value,frames,width,height,bytes,bpp,psnr_y,ssim_y,enc_fps,dec_fps,enc_cpu_s," \
                  "peak_mib,sei_bytes,status"
#define RD_FIELDS 16

/* A field as a number; "" (a failed point's) or "n/a" as unknown (-1).
 * Returns 0, or -1 when it is something else. */
static int field_num(const char *s, double *v)
{
    if (!*s || !strcmp(s, "n/a")) {
        *v = -1;
        return 0;
    }
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return errno || *end || !isfinite(*v) ? -1 : 0;
}

/* A field as an integer in lo..hi; -1 when it is not one. */
static int field_int(const char *s, long long lo, long long hi, long long *v)
{
    char *end;
    errno = 0;
    *v = strtoll(s, &end, 10);
    return errno || end == s || *end || *v < lo || *v > hi ? -1 : 0;
}

/* Split line (no newline) into RD_FIELDS fields in place: the first 15 at
 * commas, the last (the status, quoted when it is a reason) as the rest.
 * Returns 0, or -1 when there are too few. */
static int split(char *line, char **f)
{
    char *p = line;
    for (int i = 0; i < RD_FIELDS - 1; i++) {
        f[i] = p;
        p = strchr(p, ',');
        if (!p) return -1;
        *p++ = 0;
    }
    f[RD_FIELDS - 1] = p;
    size_t n = strlen(p);
    if (n >= 2 && p[0] == '"' && p[n - 1] == '"') { /* unquote: "" is one " */
        char *w = p;
        for (size_t i = 1; i + 1 < n; i++) {
            *w++ = p[i];
            if (p[i] == '"' && p[i + 1] == '"') i++;
        }
        *w = 0;
    }
    return 0;
}

static CmpRun *run_of(CmpRun *runs, int *nruns, int max_runs, const CmpCodec *c)
{
    for (int r = 0; r < *nruns; r++)
        if (runs[r].codec == c) return &runs[r];
    if (*nruns == max_runs) return NULL;
    CmpRun *run = &runs[(*nruns)++];
    memset(run, 0, sizeof(*run));
    run->codec = c;
    return run;
}

int cmp_read_anchors(const char *path, const CmpClip *clip, const CmpCodec *const *measured, int nmeasured,
                     CmpRun *runs, int *nruns, int max_runs, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    const int first = *nruns;
    char line[1024], *fl[RD_FIELDS];
    int lineno = 0, rows = 0, ret = -1;
    const char *why = NULL;
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        size_t n = strlen(line);
        if (n && line[n - 1] == '\n') line[--n] = 0;
        else if (!feof(f)) {
            why = "line too long";
            goto bad;
        }
        if (n && line[n - 1] == '\r') line[--n] = 0;
        if (lineno == 1) {
            if (strcmp(line, RD_HEADER)) {
                snprintf(err, errlen, "%s: not an rd.csv of pnmf-compare (its first line is not the header)",
                         path);
                goto out;
            }
            continue;
        }
        if (!n) continue;
        if (split(line, fl) < 0) {
            why = "too few fields";
            goto bad;
        }
        const CmpCodec *c = cmp_codec_by_name(fl[0], strlen(fl[0]));
        if (!c) {
            snprintf(err, errlen, "%s: line %d: unknown codec '%s'", path, lineno, fl[0]);
            goto out;
        }
        long long value, frames, w, h;
        if (field_int(fl[3], 1, 1LL << 30, &frames) < 0 || field_int(fl[4], 1, 1 << 20, &w) < 0 ||
            field_int(fl[5], 1, 1 << 20, &h) < 0) {
            why = "frames, width or height is not a number";
            goto bad;
        }
        if (frames != clip->frames || w != clip->width || h != clip->height) {
            snprintf(err, errlen,
                     "%s: line %d: measured on %lld frames of %lldx%lld, this run has %d frames of %dx%d "
                     "(see --frames)",
                     path, lineno, frames, w, h, clip->frames, clip->width, clip->height);
            goto out;
        }
        int skip = 0;
        for (int i = 0; i < nmeasured; i++) skip |= measured[i] == c;
        if (skip) continue; /* measured in this run */
        if (strcmp(fl[1], c->param_name) || field_int(fl[2], c->param_min, c->param_max, &value) < 0) {
            snprintf(err, errlen, "%s: line %d: '%s %s' is not a setting of %s (%s %d..%d)", path, lineno,
                     fl[1], fl[2], c->name, c->param_name, c->param_min, c->param_max);
            goto out;
        }
        CmpRun *run = run_of(runs, nruns, max_runs, c);
        if (!run) {
            why = "too many codecs";
            goto bad;
        }
        if (run->npoints == 64) {
            why = "more than 64 points of one codec";
            goto bad;
        }
        CmpPoint *pts = realloc(run->points, (size_t)(run->npoints + 1) * sizeof(*pts));
        if (!pts) {
            snprintf(err, errlen, "%s: out of memory", path);
            goto out;
        }
        run->points = pts;
        CmpPoint *p = &pts[run->npoints++];
        memset(p, 0, sizeof(*p));
        p->param = (int)value;
        p->frames = (int)frames;
        p->peak_mib = -1;
        if (run->npoints == 1 || value < run->lo) run->lo = (int)value;
        if (run->npoints == 1 || value > run->hi) run->hi = (int)value;
        rows++;
        if (strcmp(fl[15], "ok")) { /* a failed point, and why */
            snprintf(p->err, sizeof(p->err), "%s", fl[15]);
            continue;
        }
        long long bytes, sei;
        double bpp, psnr, ssim, efps, dfps, cpu, peak;
        if (field_int(fl[6], 1, 1LL << 50, &bytes) < 0 || field_num(fl[7], &bpp) < 0 ||
            field_num(fl[8], &psnr) < 0 || field_num(fl[9], &ssim) < 0 || field_num(fl[10], &efps) < 0 ||
            field_num(fl[11], &dfps) < 0 || field_num(fl[12], &cpu) < 0 || field_num(fl[13], &peak) < 0 ||
            field_int(fl[14], 0, 1LL << 50, &sei) < 0 || !(psnr > 0) || !(ssim >= 0 && ssim <= 1)) {
            why = "a measured field is not a number in its range";
            goto bad;
        }
        p->ok = 1;
        p->bytes = (uint64_t)bytes;
        p->sei_bytes = (uint64_t)sei;
        p->psnr = psnr;
        p->ssim = ssim;
        p->sse = psnr >= 999 ? 0 : (double)frames * w * h * 255.0 * 255.0 / pow(10, psnr / 10);
        p->enc_seconds = efps > 0 ? frames / efps : 0;
        p->dec_seconds = dfps > 0 ? frames / dfps : 0;
        p->enc_cpu_seconds = cpu;
        p->peak_mib = peak;
    }
    if (ferror(f)) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        goto out;
    }
    if (lineno == 0) {
        snprintf(err, errlen, "%s: empty (not an rd.csv of pnmf-compare)", path);
        goto out;
    }
    if (!rows) {
        snprintf(err, errlen, "%s: no point of a codec this run does not measure", path);
        goto out;
    }
    ret = 0;
    goto out;
bad:
    snprintf(err, errlen, "%s: line %d: %s", path, lineno, why);
out:
    fclose(f);
    if (ret < 0) {
        for (int r = first; r < *nruns; r++) free(runs[r].points);
        *nruns = first;
    }
    return ret;
}
