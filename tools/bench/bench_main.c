/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pnmf-bench: how fast pnmf is, in one command anyone can rerun on one
 * clip. Prints Markdown tables on stdout:
 *
 *  1. throughput: pnmf's encoder (the given settings, N threads) and its
 *     decoder (1 thread, into memory), against libx264 preset medium (N
 *     threads) at the CRF whose PSNR-Y is nearest pnmf's, and libavcodec's
 *     h264 decoder (1 thread); each decode is the fastest of DEC_RUNS, each
 *     encode the fastest of ENC_RUNS, pnmf's and x264's runs alternating so
 *     that both see the same load on a shared machine;
 *  2. scaling: the time of the model fit (no residual layer, 1 thread)
 *     against the frame size n, the window length m and the components k,
 *     with the exponent b of time ~ a x^b fitted to each;
 *  3. peak memory: encode + decode of the clip and of the clip 10 times
 *     over, each in a forked child (it must not grow with the length);
 *  4. with --memory-sizes, the encoder's peak memory on one window of the
 *     clip resized to 320x240, 1280x720 and 1920x1080 (it must stay within
 *     600 MB at 1080p at default settings, docs/scaling.md).
 *
 * Every measurement runs in a forked child (measure/run.c, shared with
 * pnmf-compare), so its memory and CPU time are its own and the parent
 * stays small: it holds the clip, read once into memory before any timing.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libavcodec/avcodec.h>
#include <libavutil/log.h>

#include "bench_stats.h"
#include "cli_util.h"
#include "enc_opts.h"
#include "measure/measure.h"
#include "measure/metrics.h"

static const char *prog = "pnmf-bench";

#define DEC_RUNS 3        /* decodes per stream, the fastest kept */
#define ENC_RUNS 3        /* encodes of pnmf and of x264 at the chosen CRF, alternating; the fastest kept */
#define MEM_REPEAT 10     /* the long run of the memory table: the clip this many times */
#define SCALE_ITERS 5     /* ALS iterations of the scaling runs */
#define SCALE_MAX_M 60    /* the longest window of the scaling runs */
#define CRF_MAX 51

typedef struct Args {
    PnmfEncSettings s; /* pnmf-enc's options (enc_opts.h), the threads resolved */
    long long frames;  /* --frames, -1: all */
    int threads;       /* encoder threads, --threads 0 resolved to the cores */
    int scaling, memory, quiet;
    int mem_k;         /* components of the memory runs */
    int mem_sizes;     /* the encoder's peak memory at three frame sizes */
    const char *csv;
} Args;

/* ---- CSV (--csv): one measurement a row ---- */

static FILE *csv_file;

static void csv_put(const char *section, const char *item, const char *key, double value)
{
    if (csv_file) fprintf(csv_file, "%s,%s,%s,%.6g\n", section, item, key, value);
}

/* ---- a clip as pnmf's encoder sees it: a crop, maybe repeated ---- */

typedef struct Source {
    const CmpClip *clip;
    int x0, y0, width, height; /* the crop of every frame */
    int frames;                /* frames given: the clip's, again and again */
} Source;

static Source whole_clip(const CmpClip *clip, int frames)
{
    Source s = { clip, 0, 0, clip->width, clip->height, frames };
    return s;
}

static const uint8_t *source_frame(const Source *src, int i)
{
    const CmpClip *c = src->clip;
    return cmp_clip_frame(c, i % c->frames) + (size_t)src->y0 * c->width + src->x0;
}

/* Encode src into f; wall seconds of the encoder's calls into *secs. 0, or
 * -1 with the reason in err. */
static int encode_source(const Source *src, const PnmfEncSettings *s, FILE *f, PnmfEncStats *st, double *secs,
                         char *err, size_t len)
{
    const CmpClip *c = src->clip;
    PnmfEncoder *enc = NULL;
    const double t0 = cli_now();
    int ret = pnmf_enc_open(&enc, s, src->width, src->height, c->fps_num, c->fps_den, f);
    for (int i = 0; ret >= 0 && i < src->frames; i++) ret = pnmf_enc_push_frame(enc, source_frame(src, i), c->width);
    if (ret >= 0) ret = pnmf_enc_finish(enc);
    if (ret >= 0 && fflush(f) != 0) ret = PNMF_ERR_IO;
    *secs = cli_now() - t0;
    if (ret < 0) {
        const char *m = enc ? pnmf_enc_errmsg(enc) : "";
        snprintf(err, len, "pnmf encoder: %s", *m ? m : pnmf_strerror(ret));
    } else {
        pnmf_enc_get_stats(enc, st);
    }
    pnmf_enc_close(&enc);
    return ret < 0 ? -1 : 0;
}

/* Decode every frame of f into buf (one frame, reused); the time of the
 * decoder's calls on both clocks into *secs. With sse, the squared error against src's
 * frames is added to it (not timed). 0, or -1 with the reason in err. */
static int decode_stream(FILE *f, const Source *src, uint8_t *buf, double *sse, int *frames, CmpClock *secs,
                         char *err, size_t len)
{
    PnmfDecoder *dec = NULL;
    CmpClock t = { 0, 0 }, t0 = cmp_clock_now();
    int ret = pnmf_dec_open(&dec, f);
    cmp_clock_add(&t, t0);
    int n = 0;
    while (ret >= 0) {
        t0 = cmp_clock_now();
        ret = pnmf_dec_read_frame(dec, buf, src->width);
        cmp_clock_add(&t, t0);
        if (ret < 0) break;
        if (n >= src->frames) {
            snprintf(err, len, "pnmf decoder: more frames than the %d encoded", src->frames);
            pnmf_dec_close(&dec);
            return -1;
        }
        if (sse) *sse += (double)cmp_sse_plane(source_frame(src, n), src->clip->width, buf, src->width,
                                               src->width, src->height);
        n++;
    }
    if (ret != PNMF_ERR_EOF) {
        const char *m = dec ? pnmf_dec_errmsg(dec) : "";
        snprintf(err, len, "pnmf decoder: %s", *m ? m : pnmf_strerror(ret));
    } else if (n != src->frames) {
        snprintf(err, len, "pnmf decoder: %d frames of %d", n, src->frames);
    }
    pnmf_dec_close(&dec);
    *secs = t;
    *frames = n;
    return ret == PNMF_ERR_EOF && n == src->frames ? 0 : -1;
}

/* ---- throughput: pnmf ---- */

typedef struct PnmfSpeed {
    int ok;
    int windows;
    uint64_t bytes;
    double enc_psnr, dec_psnr;
    double enc_seconds, enc_cpu_seconds;
    double stage[5]; /* PnmfEncStats' seconds: probe, fit, residual, write, total */
    double dec_seconds, dec_cpu_seconds; /* the least of DEC_RUNS, each clock */
    char err[200];
} PnmfSpeed;

typedef struct SpeedJob {
    const CmpClip *clip;
    const PnmfEncSettings *s;
} SpeedJob;

/* In the child: encode to a temporary file, read the stream into memory,
 * decode it from there DEC_RUNS times (the first one scored). */
static void pnmf_speed_child(void *ctx, void *out)
{
    const SpeedJob *j = ctx;
    PnmfSpeed *r = out;
    const Source src = whole_clip(j->clip, j->clip->frames);
    uint8_t *data = NULL, *buf = NULL;
    FILE *f = tmpfile();
    if (!f) {
        snprintf(r->err, sizeof(r->err), "cannot create a temporary file: %s", strerror(errno));
        return;
    }
    PnmfEncStats st;
    const double cpu0 = cmp_measure_cpu();
    if (encode_source(&src, j->s, f, &st, &r->enc_seconds, r->err, sizeof(r->err)) < 0) goto end;
    r->enc_cpu_seconds = cmp_measure_cpu() - cpu0;
    r->bytes = st.bytes;
    r->windows = st.windows;
    r->enc_psnr = st.psnr;
    r->stage[0] = st.seconds_probe, r->stage[1] = st.seconds_fit, r->stage[2] = st.seconds_residual;
    r->stage[3] = st.seconds_write, r->stage[4] = st.seconds_total;

    const size_t size = (size_t)st.bytes;
    data = malloc(size ? size : 1);
    buf = malloc((size_t)src.width * src.height);
    if (!data || !buf) {
        snprintf(r->err, sizeof(r->err), "out of memory");
        goto end;
    }
    rewind(f);
    if (fread(data, 1, size, f) != size) {
        snprintf(r->err, sizeof(r->err), "cannot read the %zu bytes of the stream back", size);
        goto end;
    }
    double sse = 0;
    for (int run = 0; run < DEC_RUNS; run++) {
        FILE *m = fmemopen(data, size, "r");
        if (!m) {
            snprintf(r->err, sizeof(r->err), "fmemopen: %s", strerror(errno));
            goto end;
        }
        CmpClock t;
        int n;
        const int ret = decode_stream(m, &src, buf, run == 0 ? &sse : NULL, &n, &t, r->err, sizeof(r->err));
        fclose(m);
        if (ret < 0) goto end;
        if (run == 0 || t.wall < r->dec_seconds) r->dec_seconds = t.wall;
        if (run == 0 || t.cpu < r->dec_cpu_seconds) r->dec_cpu_seconds = t.cpu;
    }
    r->dec_psnr = cmp_psnr(sse, (double)src.frames * src.width * src.height);
    r->ok = 1;
end:
    free(data);
    free(buf);
    fclose(f);
}

/* ---- throughput: x264, a codec of measure/lavc.c ---- */

typedef struct LavcJob {
    const CmpCodec *c;
    const CmpClip *clip;
    const CmpOptions *o;
    int crf;
} LavcJob;

static void lavc_child(void *ctx, void *out)
{
    const LavcJob *j = ctx;
    j->c->run(j->c, j->clip, j->o, j->crf, out);
}

/* Why a child gave nothing back, into err. */
static void child_failed(int status, const char *what, char *err, size_t len)
{
    if (WIFSIGNALED(status))
        snprintf(err, len, "%s: the process died (%s)", what, strsignal(WTERMSIG(status)));
    else
        snprintf(err, len, "%s: the process exited with status %d", what, WEXITSTATUS(status));
}

static int x264_point(const LavcJob *job, CmpPoint *pt, int quiet)
{
    memset(pt, 0, sizeof(*pt));
    pt->param = job->crf;
    int status;
    if (cmp_run_child(lavc_child, (void *)job, pt, sizeof(*pt), &status) < 0) {
        char what[32];
        snprintf(what, sizeof(what), "x264 crf %d", job->crf);
        memset(pt, 0, sizeof(*pt));
        pt->param = job->crf;
        child_failed(status, what, pt->err, sizeof(pt->err));
    }
    if (!pt->ok) {
        fprintf(stderr, "%s: %s: %s\n", prog, job->clip->path, pt->err);
        return -1;
    }
    if (!quiet)
        fprintf(stderr, "%s: x264 crf %d: %llu bytes, PSNR-Y %.2f dB\n", prog, job->crf,
                (unsigned long long)pt->bytes, pt->psnr);
    return 0;
}

/* ---- the report's pieces ---- */

static double fps(int frames, double seconds)
{
    return seconds > 0 ? frames / seconds : 0;
}

static double bpp(const CmpClip *c, uint64_t bytes)
{
    return 8.0 * (double)bytes / ((double)c->frames * c->width * c->height);
}

/* pnmf's settings as pnmf-enc's options (the threads apart). */
static void pnmf_setting(char *buf, size_t len, const PnmfEncSettings *s)
{
    char opts[256];
    enc_opts_describe(opts, sizeof(opts), s, ENC_OPT_THREADS);
    snprintf(buf, len, "%s, other options pnmf-enc's defaults", opts);
}

static const char *psnr_str(char *buf, size_t len, double psnr)
{
    if (psnr >= 999) snprintf(buf, len, "lossless");
    else snprintf(buf, len, "%.2f", psnr);
    return buf;
}

/* ---- 1. throughput ---- */

static int bench_throughput(const Args *a, const CmpClip *clip)
{
    int failed = 0;
    char b1[32], b2[32], set[300];
    if (!a->quiet)
        fprintf(stderr, "%s: pnmf: encoding %d frames, decoding them %d times\n", prog, clip->frames, DEC_RUNS);
    PnmfSpeed p;
    memset(&p, 0, sizeof(p));
    SpeedJob sj = { clip, &a->s };
    int status;
    if (cmp_run_child(pnmf_speed_child, &sj, &p, sizeof(p), &status) < 0) {
        memset(&p, 0, sizeof(p));
        child_failed(status, "pnmf", p.err, sizeof(p.err));
    }
    printf("## Throughput\n\n");
    if (!p.ok) {
        fprintf(stderr, "%s: %s: %s\n", prog, clip->path, p.err);
        printf("pnmf failed: %s\n\n", p.err);
        return 1;
    }

    /* x264: bisection of the CRF for the PSNR-Y nearest pnmf's */
    const CmpCodec *x264 = NULL;
    for (int i = 0; cmp_lavc_codecs[i]; i++)
        if (!strcmp(cmp_lavc_codecs[i]->name, "x264")) x264 = cmp_lavc_codecs[i];
    char why[160] = "this build has no x264 codec";
    int have_x264 = x264 && x264->available(x264, why, sizeof(why)) == 0;
    CmpOptions o;
    memset(&o, 0, sizeof(o));
    o.threads = a->threads;
    o.dec_threads = 1;
    o.dec_runs = DEC_RUNS;
    o.pnmf = a->s;
    CmpPoint tried[CRF_MAX + 1], best;
    int ntried = 0, above = 0;
    memset(&best, 0, sizeof(best));
    if (have_x264) {
        LavcJob job = { x264, clip, &o, 0 };
        if (x264_point(&job, &tried[ntried++], a->quiet) < 0) {
            have_x264 = 0, failed = 1;
        } else if (tried[0].psnr < p.dec_psnr) {
            above = 1;
            best = tried[0];
        } else {
            /* crf lo reaches pnmf's PSNR-Y, crf hi does not (52: none tried yet) */
            CmpPoint lo = tried[0], hi = tried[0];
            int hi_crf = CRF_MAX + 1;
            while (hi_crf - lo.param > 1) {
                job.crf = (lo.param + hi_crf) / 2;
                CmpPoint *pt = &tried[ntried++];
                if (x264_point(&job, pt, a->quiet) < 0) {
                    have_x264 = 0, failed = 1;
                    break;
                }
                if (pt->psnr >= p.dec_psnr) {
                    lo = *pt;
                } else {
                    hi = *pt;
                    hi_crf = pt->param;
                }
            }
            best = lo;
            if (hi_crf <= CRF_MAX && fabs(hi.psnr - p.dec_psnr) < fabs(lo.psnr - p.dec_psnr)) best = hi;
        }
    } else if (x264) {
        fprintf(stderr, "%s: x264 is not available: %s\n", prog, why);
    }
    /* the timing runs: more encodes (and decodes) of both at the settings
     * compared, alternating; each codec's fastest */
    for (int run = 1; run < ENC_RUNS && !failed; run++) {
        PnmfSpeed q;
        memset(&q, 0, sizeof(q));
        if (cmp_run_child(pnmf_speed_child, &sj, &q, sizeof(q), &status) < 0 || !q.ok) {
            fprintf(stderr, "%s: %s: pnmf's timing run %d failed: %s\n", prog, clip->path, run + 1, q.err);
            failed = 1;
            break;
        }
        if (q.enc_seconds < p.enc_seconds) {
            p.enc_seconds = q.enc_seconds;
            memcpy(p.stage, q.stage, sizeof(p.stage));
        }
        if (q.enc_cpu_seconds < p.enc_cpu_seconds) p.enc_cpu_seconds = q.enc_cpu_seconds;
        if (q.dec_seconds < p.dec_seconds) p.dec_seconds = q.dec_seconds;
        if (q.dec_cpu_seconds < p.dec_cpu_seconds) p.dec_cpu_seconds = q.dec_cpu_seconds;
        if (!have_x264) continue;
        LavcJob job = { x264, clip, &o, best.param };
        CmpPoint pt;
        if (x264_point(&job, &pt, 1) < 0) {
            have_x264 = 0, failed = 1;
            break;
        }
        if (pt.enc_seconds < best.enc_seconds) best.enc_seconds = pt.enc_seconds;
        if (pt.enc_cpu_seconds < best.enc_cpu_seconds) best.enc_cpu_seconds = pt.enc_cpu_seconds;
        if (pt.dec_seconds < best.dec_seconds) best.dec_seconds = pt.dec_seconds;
        if (pt.dec_cpu_seconds < best.dec_cpu_seconds) best.dec_cpu_seconds = pt.dec_cpu_seconds;
    }

    printf("Encoders with %d thread%s, the fastest of %d encodes (pnmf's and x264's alternating); decoders "
           "with 1 thread, into memory (no output file), the fastest of %d decodes of each encode. Wall clock "
           "(CLOCK_MONOTONIC) in the codecs' calls; CPU: encoders, user + system of all threads; decoders, the "
           "process's CPU time in their calls; the least of the runs. fps are from the wall clock; the decode "
           "ratio below is from CPU time, which a loaded machine does not skew.\n\n",
           a->threads, a->threads == 1 ? "" : "s", ENC_RUNS, ENC_RUNS * DEC_RUNS);
    printf("| step | setting | threads | seconds | CPU s | fps |\n");
    printf("|---|---|---:|---:|---:|---:|\n");
    pnmf_setting(set, sizeof(set), &a->s);
    printf("| pnmf encode | %s | %d | %.4g | %.4g | %.2f |\n", set, a->threads, p.enc_seconds, p.enc_cpu_seconds,
           fps(clip->frames, p.enc_seconds));
    printf("| pnmf decode | libpnmf | 1 | %.4g | %.4g | %.1f |\n", p.dec_seconds, p.dec_cpu_seconds,
           fps(clip->frames, p.dec_seconds));
    if (have_x264) {
        printf("| x264 encode | %s, crf %d | %d | %.4g | %.4g | %.2f |\n", x264->describe, best.param, a->threads,
               best.enc_seconds, best.enc_cpu_seconds, fps(clip->frames, best.enc_seconds));
        printf("| h264 decode | libavcodec h264 | 1 | %.4g | %.4g | %.1f |\n", best.dec_seconds,
               best.dec_cpu_seconds, fps(clip->frames, best.dec_seconds));
    }
    printf("\n| codec | setting | bytes | bpp | PSNR-Y dB (encoder) | PSNR-Y dB (decoded) |\n");
    printf("|---|---|---:|---:|---:|---:|\n");
    printf("| pnmf | q %d | %llu | %.4f | %s | %s |\n", a->s.quality, (unsigned long long)p.bytes,
           bpp(clip, p.bytes), psnr_str(b1, sizeof(b1), p.enc_psnr), psnr_str(b2, sizeof(b2), p.dec_psnr));
    if (have_x264)
        printf("| x264 | crf %d | %llu | %.4f | — | %s |\n", best.param, (unsigned long long)best.bytes,
               bpp(clip, best.bytes), psnr_str(b1, sizeof(b1), best.psnr));
    printf("\n");
    csv_put("throughput", "pnmf encode", "seconds", p.enc_seconds);
    csv_put("throughput", "pnmf encode", "cpu_seconds", p.enc_cpu_seconds);
    csv_put("throughput", "pnmf encode", "fps", fps(clip->frames, p.enc_seconds));
    csv_put("throughput", "pnmf decode", "seconds", p.dec_seconds);
    csv_put("throughput", "pnmf decode", "cpu_seconds", p.dec_cpu_seconds);
    csv_put("throughput", "pnmf decode", "fps", fps(clip->frames, p.dec_seconds));
    csv_put("throughput", "pnmf", "bytes", (double)p.bytes);
    csv_put("throughput", "pnmf", "psnr_y_encoder", p.enc_psnr);
    csv_put("throughput", "pnmf", "psnr_y_decoded", p.dec_psnr);
    if (!have_x264) {
        printf("x264: %s.\n\n", failed ? "failed (see stderr)" : why);
        return failed;
    }
    csv_put("throughput", "x264 encode", "crf", best.param);
    csv_put("throughput", "x264 encode", "seconds", best.enc_seconds);
    csv_put("throughput", "x264 encode", "cpu_seconds", best.enc_cpu_seconds);
    csv_put("throughput", "x264 encode", "fps", fps(clip->frames, best.enc_seconds));
    csv_put("throughput", "h264 decode", "seconds", best.dec_seconds);
    csv_put("throughput", "h264 decode", "cpu_seconds", best.dec_cpu_seconds);
    csv_put("throughput", "h264 decode", "fps", fps(clip->frames, best.dec_seconds));
    csv_put("throughput", "x264", "bytes", (double)best.bytes);
    csv_put("throughput", "x264", "psnr_y_decoded", best.psnr);

    if (above) {
        printf("x264's CRF: pnmf's PSNR-Y (%s dB) is above what crf 0 reaches (%s dB): crf 0 used.\n",
               psnr_str(b1, sizeof(b1), p.dec_psnr), psnr_str(b2, sizeof(b2), tried[0].psnr));
    } else {
        printf("x264's CRF: bisection over 0..%d for the PSNR-Y nearest pnmf's %s dB, %d encodes (", CRF_MAX,
               psnr_str(b1, sizeof(b1), p.dec_psnr), ntried);
        for (int i = 0; i < ntried; i++)
            printf("%scrf %d: %s", i ? ", " : "", tried[i].param, psnr_str(b2, sizeof(b2), tried[i].psnr));
        printf("): crf %d, %s dB.\n", best.param, psnr_str(b2, sizeof(b2), best.psnr));
    }
    if (best.sei_bytes)
        printf("x264's bytes leave out its SEI messages (version and settings text, %llu bytes), as pnmf-compare "
               "does.\n",
               (unsigned long long)best.sei_bytes);
    const double enc_ratio = best.enc_seconds > 0 ? p.enc_seconds / best.enc_seconds : 0;
    const double cpu_ratio = best.enc_cpu_seconds > 0 ? p.enc_cpu_seconds / best.enc_cpu_seconds : 0;
    const double dec_ratio =
        best.dec_cpu_seconds > 0 && p.dec_cpu_seconds > 0 ? best.dec_cpu_seconds / p.dec_cpu_seconds : 0;
    printf("\n| pnmf against x264 | ratio |\n");
    printf("|---|---:|\n");
    printf("| encode time, pnmf s / x264 s | %.2f |\n", enc_ratio);
    printf("| encode CPU time, pnmf / x264 | %.2f |\n", cpu_ratio);
    printf("| decode speed, h264 CPU s / pnmf CPU s | %.2f |\n", dec_ratio);
    printf("| bytes, pnmf / x264 | %.2f |\n\n", best.bytes ? (double)p.bytes / best.bytes : 0);
    csv_put("throughput", "ratio", "encode_time_pnmf_over_x264", enc_ratio);
    csv_put("throughput", "ratio", "encode_cpu_pnmf_over_x264", cpu_ratio);
    csv_put("throughput", "ratio", "decode_cpu_h264_over_pnmf", dec_ratio);
    /* where pnmf's encode time went, as the encoder timed its stages */
    static const char *const stage_name[4] = {
        "model probe: its one-iteration fit",
        "full model fit (fit, quantization, --refine)",
        "residual layer: block search and coding, with and without a model",
        "serializing, zstd, container",
    };
    static const char *const stage_key[4] = { "probe", "fit", "residual", "write" };
    printf("Where pnmf's encode time went (the encoder's own stage timers, wall clock):\n\n");
    printf("| stage | seconds | %% of the encode |\n");
    printf("|---|---:|---:|\n");
    double staged = 0;
    for (int i = 0; i < 4; i++) {
        staged += p.stage[i];
        printf("| %s | %.3f | %.1f |\n", stage_name[i], p.stage[i],
               p.enc_seconds > 0 ? 100 * p.stage[i] / p.enc_seconds : 0);
        csv_put("profile", stage_key[i], "seconds", p.stage[i]);
    }
    const double rest = p.enc_seconds - staged;
    printf("| the rest (frame copies, opening, the index) | %.3f | %.1f |\n\n", rest > 0 ? rest : 0,
           p.enc_seconds > 0 && rest > 0 ? 100 * rest / p.enc_seconds : 0);
    return failed;
}

/* ---- 2. scaling of the model fit ---- */

typedef struct ScaleRun {
    int width, height, m, k;
    double seconds;
} ScaleRun;

/* Is v a product of 2, 3 and 5 only (a fast FFT length)? */
static int smooth235(int v)
{
    static const int p[3] = { 2, 3, 5 };
    for (int i = 0; i < 3; i++)
        while (v % p[i] == 0) v /= p[i];
    return v == 1;
}

/* The even 2,3,5-smooth length nearest to target, 8..max (max if none). */
static int crop_side(double target, int max)
{
    int best = max;
    for (int v = 8; v <= max; v += 2)
        if (smooth235(v) && (best == max || fabs(v - target) < fabs(best - target))) best = v;
    return best;
}

/* The centred crop with about frac of the pixels; sides are even 2,3,5-smooth
 * lengths, so the FFT sizes do not change the cost more than the size does. */
static void crop_for(const CmpClip *c, double frac, int *w, int *h)
{
    if (frac >= 1) {
        *w = c->width, *h = c->height;
        return;
    }
    *w = crop_side(c->width * sqrt(frac), c->width);
    *h = crop_side(c->height * sqrt(frac), c->height);
}

typedef struct ScaleJob {
    const Args *a;
    const CmpClip *clip;
    const ScaleRun *r;
} ScaleJob;

typedef struct ScaleResult {
    int ok;
    double seconds;
    char err[200];
} ScaleResult;

/* In the child: encode the first m frames of the crop as one window. */
static void scale_child(void *ctx, void *out)
{
    const ScaleJob *j = ctx;
    const ScaleRun *r = j->r;
    ScaleResult *res = out;
    PnmfEncSettings s;
    pnmf_enc_default_settings(&s);
    s.quality = j->a->s.quality;
    s.components = r->k;
    s.window = r->m;
    s.residual = 0;
    s.threads = 1;
    s.iterations = SCALE_ITERS;
    s.refine = 0;
    const CmpClip *c = j->clip;
    Source src = { c, (c->width - r->width) / 2, (c->height - r->height) / 2, r->width, r->height, r->m };
    FILE *f = tmpfile();
    if (!f) {
        snprintf(res->err, sizeof(res->err), "cannot create a temporary file: %s", strerror(errno));
        return;
    }
    PnmfEncStats st;
    res->ok = encode_source(&src, &s, f, &st, &res->seconds, res->err, sizeof(res->err)) == 0;
    fclose(f);
}

static int scale_run(const Args *a, const CmpClip *clip, ScaleRun *r, char *err, size_t len)
{
    ScaleJob job = { a, clip, r };
    ScaleResult res;
    memset(&res, 0, sizeof(res));
    int status;
    if (cmp_run_child(scale_child, &job, &res, sizeof(res), &status) < 0) {
        memset(&res, 0, sizeof(res));
        child_failed(status, "scaling run", res.err, sizeof(res.err));
    }
    if (!res.ok) {
        snprintf(err, len, "%s", res.err);
        return -1;
    }
    r->seconds = res.seconds;
    if (!a->quiet)
        fprintf(stderr, "%s: scaling: %dx%d, m %d, k %d: %.3f s\n", prog, r->width, r->height, r->m, r->k,
                r->seconds);
    return 0;
}

static int bench_scaling(const Args *a, const CmpClip *clip)
{
    printf("## Scaling of the model fit\n\n");
    const int mmax = clip->frames < SCALE_MAX_M ? clip->frames : SCALE_MAX_M;
    if (mmax / 4 < 2) {
        printf("Skipped: the clip has %d frames, 8 are needed.\n\n", clip->frames);
        return 0;
    }
    /* one knob at a time over three values, the others at the middle one */
    const double fracs[3] = { 0.25, 0.5, 1 };
    const int ms[3] = { mmax / 4, mmax / 2, mmax };
    const int ks[3] = { 2, 4, 8 };
    ScaleRun runs[3][3]; /* [n, m, k][value] */
    for (int v = 0; v < 3; v++)
        for (int i = 0; i < 3; i++) {
            ScaleRun *r = &runs[v][i];
            const int at = v == 0 ? i : 1;
            crop_for(clip, fracs[at], &r->width, &r->height);
            r->m = ms[v == 1 ? i : 1];
            r->k = ks[v == 2 ? i : 1];
            r->seconds = -1;
        }
    char err[256];
    for (int v = 0; v < 3; v++)
        for (int i = 0; i < 3; i++) {
            ScaleRun *r = &runs[v][i];
            if (v > 0 && i == 1) { /* the middle point: measured once */
                r->seconds = runs[0][1].seconds;
                continue;
            }
            if (scale_run(a, clip, r, err, sizeof(err)) < 0) {
                fprintf(stderr, "%s: %s: scaling: %s\n", prog, clip->path, err);
                printf("Failed: %s\n\n", err);
                return 1;
            }
        }
    printf("pnmf encode time of one window of m frames, the model alone: -q %d --no-residual --iterations %d "
           "--refine 0, 1 thread, other options pnmf-enc's defaults. n is the pixels per frame (a centred crop "
           "of the clip), m the window length, k the components; one varied at a time, the others at the "
           "middle values (n = %d, m = %d, k = %d), measured once.\n\n",
           a->s.quality, SCALE_ITERS, runs[0][1].width * runs[0][1].height, ms[1], ks[1]);
    printf("| varied | frame (n pixels) | m frames | k | seconds |\n");
    printf("|---|---|---:|---:|---:|\n");
    static const char *names[3] = { "n", "m", "k" };
    for (int v = 0; v < 3; v++)
        for (int i = 0; i < 3; i++) {
            const ScaleRun *r = &runs[v][i];
            printf("| %s | %dx%d (%d) | %d | %d | %.3f |\n", names[v], r->width, r->height, r->width * r->height,
                   r->m, r->k, r->seconds);
            char item[64];
            snprintf(item, sizeof(item), "%s=%d", names[v],
                     v == 0 ? r->width * r->height : v == 1 ? r->m : r->k);
            csv_put("scaling", item, "seconds", r->seconds);
        }
    printf("\n| x | values | exponent b of time ≈ a·x^b | R² |\n");
    printf("|---|---|---:|---:|\n");
    for (int v = 0; v < 3; v++) {
        double x[3], y[3], fa, fb, r2;
        for (int i = 0; i < 3; i++) {
            const ScaleRun *r = &runs[v][i];
            x[i] = v == 0 ? (double)r->width * r->height : v == 1 ? r->m : r->k;
            y[i] = r->seconds;
        }
        printf("| %s | %g, %g, %g | ", names[v], x[0], x[1], x[2]);
        if (bench_power_fit(x, y, 3, &fa, &fb, &r2) == 0) {
            printf("%.2f | %.3f |\n", fb, r2);
            csv_put("scaling", names[v], "exponent", fb);
        } else {
            printf("n/a | n/a |\n");
        }
    }
    printf("\n");
    return 0;
}

/* ---- 3. peak memory ---- */

typedef struct MemRun {
    int ok;
    int frames, windows;
    uint64_t bytes;
    double psnr, seconds;
    double base_kib, peak_kib;
    char err[200];
} MemRun;

typedef struct MemJob {
    const CmpClip *clip;
    const PnmfEncSettings *s;
    int repeat;
} MemJob;

/* In the child: the clip repeat times over, encoded to a temporary file and
 * decoded from it a frame at a time; frames come from the clip held once. */
static void mem_child(void *ctx, void *out)
{
    const MemJob *j = ctx;
    MemRun *r = out;
    const Source src = whole_clip(j->clip, j->clip->frames * j->repeat);
    uint8_t *buf = malloc((size_t)src.width * src.height);
    FILE *f = tmpfile();
    if (!f || !buf) {
        snprintf(r->err, sizeof(r->err), "%s", !buf ? "out of memory" : "cannot create a temporary file");
        goto end;
    }
    const double t0 = cli_now();
    PnmfEncStats st;
    double t, sse = 0;
    CmpClock dt;
    if (encode_source(&src, j->s, f, &st, &t, r->err, sizeof(r->err)) < 0) goto end;
    rewind(f);
    if (decode_stream(f, &src, buf, &sse, &r->frames, &dt, r->err, sizeof(r->err)) < 0) goto end;
    r->seconds = cli_now() - t0;
    r->windows = st.windows;
    r->bytes = st.bytes;
    r->psnr = cmp_psnr(sse, (double)src.frames * src.width * src.height);
    r->base_kib = cmp_measure_base_kib();
    r->peak_kib = cmp_measure_peak_kib();
    r->ok = 1;
end:
    free(buf);
    if (f) fclose(f);
}

static int bench_memory(const Args *a, const CmpClip *clip)
{
    printf("## Peak memory\n\n");
    PnmfEncSettings s = a->s;
    s.components = a->mem_k;
    /* the short run holds two windows at least: a window that predicts from
     * the one before it holds more than the first one does */
    const int max_window = clip->frames / 2 > 1 ? clip->frames / 2 : 1;
    const int lowered = s.window > max_window;
    if (lowered) s.window = max_window;
    const int repeats[2] = { 1, MEM_REPEAT };
    MemRun runs[2];
    for (int i = 0; i < 2; i++) {
        if (!a->quiet)
            fprintf(stderr, "%s: memory: encoding and decoding %d frames\n", prog, clip->frames * repeats[i]);
        MemJob job = { clip, &s, repeats[i] };
        MemRun *r = &runs[i];
        memset(r, 0, sizeof(*r));
        int status;
        if (cmp_run_child(mem_child, &job, r, sizeof(*r), &status) < 0) {
            memset(r, 0, sizeof(*r));
            child_failed(status, "memory run", r->err, sizeof(r->err));
        }
        if (!r->ok) {
            fprintf(stderr, "%s: %s: %s\n", prog, clip->path, r->err);
            printf("Failed: %s\n\n", r->err);
            return 1;
        }
    }
    const double clip_mib = (double)clip->frames * clip->width * clip->height / (1024.0 * 1024.0);
    char set[300];
    pnmf_setting(set, sizeof(set), &s);
    printf("pnmf encode to a temporary file, then decode from it a frame at a time, in a forked child, for "
           "the clip and for the clip %d times over; settings %s, %d thread%s.",
           MEM_REPEAT, set, s.threads, s.threads == 1 ? "" : "s");
    if (a->mem_k == 0) printf(" -k 0 (the residual layer alone, --memory-k's default) keeps the long run short.");
    if (lowered)
        printf(" -w is lowered to half the clip so that the 1x run holds two windows, like the long run: a "
               "window that predicts from the one before holds more memory than the first.");
    printf(" Peak RSS is the child's VmHWM (reset at its start); the 1x clip (%.1f MiB) is held in memory once "
           "in both runs and the %dx run takes its frames from it, so both start the same and the ratio is "
           "fair.\n\n",
           clip_mib, MEM_REPEAT);
    printf("| run | frames | windows | bytes | PSNR-Y dB | seconds | peak RSS MiB | RSS at start MiB | "
           "growth MiB |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    char b[32];
    for (int i = 0; i < 2; i++) {
        const MemRun *r = &runs[i];
        printf("| %dx | %d | %d | %llu | %s | %.2f | %.1f | %.1f | %.1f |\n", repeats[i], r->frames, r->windows,
               (unsigned long long)r->bytes, psnr_str(b, sizeof(b), r->psnr), r->seconds, r->peak_kib / 1024,
               r->base_kib / 1024, (r->peak_kib - r->base_kib) / 1024);
        char item[16];
        snprintf(item, sizeof(item), "%dx", repeats[i]);
        csv_put("memory", item, "peak_mib", r->peak_kib / 1024);
        csv_put("memory", item, "start_mib", r->base_kib / 1024);
    }
    const double ratio = runs[0].peak_kib > 0 ? runs[1].peak_kib / runs[0].peak_kib : 0;
    const double g0 = runs[0].peak_kib - runs[0].base_kib, g1 = runs[1].peak_kib - runs[1].base_kib;
    printf("\nPeak RSS ratio, %dx / 1x: %.3f (growth above the start: %.1f MiB / %.1f MiB = %.3f).\n\n", MEM_REPEAT,
           ratio, g1 / 1024, g0 / 1024, g0 > 0 ? g1 / g0 : 0);
    csv_put("memory", "ratio", "peak_10x_over_1x", ratio);
    return 0;
}

/* ---- 4. peak memory by frame size ---- */

typedef struct SizeJob {
    const CmpClip *clip;
    const PnmfEncSettings *s;
    int width, height, frames;
} SizeJob;

/* Bilinear taps from a line of `from` samples onto `to`: for output i,
 * the first input sample and the weight of the next, in 1/256. */
static void resize_taps(int from, int to, int *idx, int *wt)
{
    for (int i = 0; i < to; i++) {
        double x = ((double)i + 0.5) * from / to - 0.5;
        if (x < 0) x = 0;
        int x0 = (int)x;
        if (x0 > from - 2) x0 = from > 1 ? from - 2 : 0;
        double f = x - x0;
        if (f > 1) f = 1;
        idx[i] = x0;
        wt[i] = from > 1 ? (int)lrint(f * 256) : 0;
    }
}

/* In the child: the clip's first frames resized (bilinear), one frame at
 * a time, into the encoder, which writes a temporary file; the child's
 * peak RSS is then the encoder's (and the clip's, held by the parent). */
static void size_child(void *ctx, void *out)
{
    const SizeJob *j = ctx;
    MemRun *r = out;
    const CmpClip *c = j->clip;
    const int W = j->width, H = j->height;
    uint8_t *buf = malloc((size_t)W * H);
    int *xi = malloc(sizeof(int) * (size_t)(2 * W + 2 * H)), *xw = xi + W, *yi = xw + W, *yw = yi + H;
    FILE *f = tmpfile();
    PnmfEncoder *enc = NULL;
    if (!f || !buf || !xi) {
        snprintf(r->err, sizeof(r->err), "%s", !f ? "cannot create a temporary file" : "out of memory");
        goto end;
    }
    resize_taps(c->width, W, xi, xw);
    resize_taps(c->height, H, yi, yw);
    const double t0 = cli_now();
    int ret = pnmf_enc_open(&enc, j->s, W, H, c->fps_num, c->fps_den, f);
    for (int i = 0; ret >= 0 && i < j->frames; i++) {
        const uint8_t *src = cmp_clip_frame(c, i % c->frames);
        const int cw = c->width, ch = c->height;
        for (int y = 0; y < H; y++) {
            const uint8_t *r0 = src + (size_t)yi[y] * cw, *r1 = ch > 1 ? r0 + cw : r0;
            for (int x = 0; x < W; x++) {
                const int x0 = xi[x], x1 = cw > 1 ? x0 + 1 : x0;
                const int top = r0[x0] * (256 - xw[x]) + r0[x1] * xw[x];
                const int bot = r1[x0] * (256 - xw[x]) + r1[x1] * xw[x];
                buf[(size_t)y * W + x] = (uint8_t)((top * (256 - yw[y]) + bot * yw[y] + 32768) >> 16);
            }
        }
        ret = pnmf_enc_push_frame(enc, buf, W);
    }
    if (ret >= 0) ret = pnmf_enc_finish(enc);
    if (ret < 0) {
        const char *m = enc ? pnmf_enc_errmsg(enc) : "";
        snprintf(r->err, sizeof(r->err), "pnmf encoder: %s", *m ? m : pnmf_strerror(ret));
        goto end;
    }
    PnmfEncStats st;
    pnmf_enc_get_stats(enc, &st);
    r->seconds = cli_now() - t0;
    r->frames = st.frames;
    r->windows = st.windows;
    r->bytes = st.bytes;
    r->psnr = st.psnr;
    r->base_kib = cmp_measure_base_kib();
    r->peak_kib = cmp_measure_peak_kib();
    r->ok = 1;
end:
    pnmf_enc_close(&enc);
    free(buf);
    free(xi);
    if (f) fclose(f);
}

static int bench_memory_sizes(const Args *a, const CmpClip *clip)
{
    static const int sizes[3][2] = { { 320, 240 }, { 1280, 720 }, { 1920, 1080 } };
    printf("## Peak memory by frame size\n\n");
    const int frames = clip->frames < a->s.window ? clip->frames : a->s.window;
    char set[300];
    pnmf_setting(set, sizeof(set), &a->s);
    printf("pnmf encode of the clip's first %d frames (one window at most), each frame resized (bilinear) to "
           "the size, to a temporary file, in a forked child; settings %s, %d thread%s. Peak RSS is the child's "
           "VmHWM (reset at its start), which includes the clip held in memory (RSS at start).\n\n",
           frames, set, a->s.threads, a->s.threads == 1 ? "" : "s");
    printf("| size | frames | bytes | PSNR-Y dB | seconds | peak RSS MiB | peak RSS MB | RSS at start MiB |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
    int failed = 0;
    char b[32], item[32];
    for (int i = 0; i < 3; i++) {
        if (!a->quiet) fprintf(stderr, "%s: memory: %d frames at %dx%d\n", prog, frames, sizes[i][0], sizes[i][1]);
        SizeJob job = { clip, &a->s, sizes[i][0], sizes[i][1], frames };
        MemRun r;
        memset(&r, 0, sizeof(r));
        int status;
        if (cmp_run_child(size_child, &job, &r, sizeof(r), &status) < 0) {
            memset(&r, 0, sizeof(r));
            child_failed(status, "memory run", r.err, sizeof(r.err));
        }
        if (!r.ok) {
            fprintf(stderr, "%s: %s: %dx%d: %s\n", prog, clip->path, sizes[i][0], sizes[i][1], r.err);
            printf("| %dx%d | failed: %s |\n", sizes[i][0], sizes[i][1], r.err);
            failed = 1;
            continue;
        }
        printf("| %dx%d | %d | %llu | %s | %.2f | %.1f | %.1f | %.1f |\n", sizes[i][0], sizes[i][1], r.frames,
               (unsigned long long)r.bytes, psnr_str(b, sizeof(b), r.psnr), r.seconds, r.peak_kib / 1024,
               r.peak_kib * 1024 / 1e6, r.base_kib / 1024);
        snprintf(item, sizeof(item), "%dx%d", sizes[i][0], sizes[i][1]);
        csv_put("memory_size", item, "peak_mib", r.peak_kib / 1024);
        csv_put("memory_size", item, "seconds", r.seconds);
    }
    printf("\n");
    return failed;
}

/* ---- command line ---- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: pnmf-bench [options] CLIP\n"
            "Measure pnmf's speed on the gray (luma) frames of CLIP, any clip FFmpeg reads, and\n"
            "print Markdown tables: encode and decode throughput against libx264 preset medium at\n"
            "the CRF of the same PSNR-Y; the model fit's time against frame size, window length\n"
            "and components; the peak memory of the clip and of the clip %d times over.\n"
            "\n"
            "      --frames N       use only the first N frames (default: all)\n"
            "      --threads N      encoder threads, pnmf's and x264's, 0 = one per core, 0..64\n"
            "                       (default 0); the decoders always use 1\n"
            "      --scaling        time the model fit against n, m and k (default)\n"
            "      --no-scaling     skip it\n"
            "      --memory         measure the peak memory (default)\n"
            "      --no-memory      skip it\n"
            "      --memory-k N     components of the memory runs, 0..255 (default 0: the residual\n"
            "                       layer alone, so the %dx run stays short)\n"
            "      --memory-sizes   also the encoder's peak memory on one window of the clip\n"
            "                       resized to 320x240, 1280x720 and 1920x1080, at the settings\n"
            "                       given (minutes at 1080p; default: off)\n"
            "      --csv FILE       also write every figure to FILE (section,item,key,value)\n"
            "  -Q, --quiet          no progress lines on stderr\n"
            "  -h, --help           this help\n"
            "  -V, --version        print the version\n"
            "pnmf's own options (pnmf-enc's; --threads the one above):\n",
            MEM_REPEAT, MEM_REPEAT);
    enc_opts_usage(f, ENC_OPT_THREADS);
    fprintf(f,
            "\n"
            "Exit status: 0 ok, 2 usage, 3 cannot read the clip, 5 cannot write the CSV file,\n"
            "1 a measurement failed (the rest is still reported).\n");
}

enum { OPT_FRAMES = 256, OPT_THREADS, OPT_SCALING, OPT_NO_SCALING, OPT_MEMORY, OPT_NO_MEMORY, OPT_MEMORY_K,
       OPT_MEMORY_SIZES, OPT_CSV };

/* Returns -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, Args *a)
{
    static const struct option own[] = {
        { "frames", required_argument, NULL, OPT_FRAMES },
        { "threads", required_argument, NULL, OPT_THREADS }, { "scaling", no_argument, NULL, OPT_SCALING },
        { "no-scaling", no_argument, NULL, OPT_NO_SCALING }, { "memory", no_argument, NULL, OPT_MEMORY },
        { "no-memory", no_argument, NULL, OPT_NO_MEMORY }, { "memory-k", required_argument, NULL, OPT_MEMORY_K },
        { "memory-sizes", no_argument, NULL, OPT_MEMORY_SIZES }, { "csv", required_argument, NULL, OPT_CSV },      { "quiet", no_argument, NULL, 'Q' },
        { "help", no_argument, NULL, 'h' },               { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    struct option longopts[sizeof(own) / sizeof(own[0]) + ENC_OPTS_MAX];
    char optstring[64];
    enc_opts_longopts(longopts, own, ENC_OPT_THREADS);
    enc_opts_optstring(optstring, sizeof(optstring), "QhV", ENC_OPT_THREADS);
    long long v;
    int c, got, threads = 0;
    memset(a, 0, sizeof(*a));
    EncOpts eo;
    enc_opts_init(&eo, ENC_OPT_THREADS);
    a->frames = -1;
    a->scaling = a->memory = 1;
#define INT_OPT(name, lo, hi, dst) \
    do { \
        if (cli_parse_int(prog, name, optarg, lo, hi, &v)) return PNMF_EXIT_USAGE; \
        dst = (int)v; \
    } while (0)
    opterr = 0; /* one line per error, ours */
    while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
        if ((got = enc_opts_parse(&eo, prog, c, optarg)) < 0) return PNMF_EXIT_USAGE;
        if (got > 0) continue;
        switch (c) {
        case OPT_FRAMES:
            if (cli_parse_int(prog, "--frames", optarg, 1, 1LL << 28, &v)) return PNMF_EXIT_USAGE;
            a->frames = v;
            break;
        case OPT_THREADS: INT_OPT("--threads", 0, 64, threads); break;
        case OPT_SCALING: a->scaling = 1; break;
        case OPT_NO_SCALING: a->scaling = 0; break;
        case OPT_MEMORY: a->memory = 1; break;
        case OPT_NO_MEMORY: a->memory = 0; break;
        case OPT_MEMORY_K: INT_OPT("--memory-k", 0, 255, a->mem_k); break;
        case OPT_MEMORY_SIZES: a->mem_sizes = 1; break;
        case OPT_CSV: a->csv = optarg; break;
        case 'Q': a->quiet = 1; break;
        case 'h': usage(stdout); return PNMF_EXIT_OK;
        case 'V': printf("pnmf-bench %s\n", PNMF_VERSION_STRING); return PNMF_EXIT_OK;
        default: cli_bad_option(prog, argv, c); return PNMF_EXIT_USAGE;
        }
    }
#undef INT_OPT
    if (argc - optind != 1) {
        fprintf(stderr, "%s: expected one CLIP; try '%s --help'\n", prog, prog);
        return PNMF_EXIT_USAGE;
    }
    if (enc_opts_finish(&eo, prog) < 0) return PNMF_EXIT_USAGE;
    a->s = eo.s;
    if (threads == 0) {
        const long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n < 1 ? 1 : n > 64 ? 64 : (int)n;
    }
    a->threads = threads;
    a->s.threads = threads;
    return -1;
}

/* The "model name" of /proc/cpuinfo, or "unknown CPU". */
static void cpu_name(char *buf, size_t len)
{
    snprintf(buf, len, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof(line), f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) || !colon) continue;
        colon += 1 + strspn(colon + 1, " \t");
        colon[strcspn(colon, "\n")] = 0;
        snprintf(buf, len, "%s", colon);
        break;
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    cli_init();
    Args a;
    int code = parse_args(argc, argv, &a);
    if (code >= 0) return code;
    const char *clip_path = argv[optind];
    av_log_set_level(AV_LOG_ERROR);

    CmpClip clip;
    if ((code = cmp_read_clip(prog, clip_path, a.frames, &clip)) != PNMF_EXIT_OK) return code;
    if (a.csv) {
        if (!(csv_file = fopen(a.csv, "w"))) {
            fprintf(stderr, "%s: %s: cannot write: %s\n", prog, a.csv, strerror(errno));
            free(clip.pixels);
            return PNMF_EXIT_OUTPUT;
        }
        fprintf(csv_file, "section,item,key,value\n");
    }

    char cpu[256];
    cpu_name(cpu, sizeof(cpu));
    const unsigned lavc = avcodec_version();
    printf("# pnmf-bench\n\n");
    printf("Clip `%s`: %d frames of %dx%d at %g fps, luma only. Machine: %s, %ld cores online; pnmf %s, "
           "libavcodec %u.%u.%u.\n\n",
           clip_path, clip.frames, clip.width, clip.height, (double)clip.fps_num / clip.fps_den, cpu,
           sysconf(_SC_NPROCESSORS_ONLN), PNMF_VERSION_STRING, lavc >> 16, (lavc >> 8) & 255, lavc & 255);
    int failed = bench_throughput(&a, &clip);
    fflush(stdout);
    if (a.scaling) failed |= bench_scaling(&a, &clip);
    fflush(stdout);
    if (a.memory) failed |= bench_memory(&a, &clip);
    fflush(stdout);
    if (a.mem_sizes) failed |= bench_memory_sizes(&a, &clip);
    fflush(stdout);
    free(clip.pixels);
    code = failed ? PNMF_EXIT_FAIL : PNMF_EXIT_OK;
    if (csv_file && (ferror(csv_file) | fclose(csv_file))) {
        fprintf(stderr, "%s: %s: cannot write: %s\n", prog, a.csv, strerror(errno));
        code = PNMF_EXIT_OUTPUT;
    }
    return code;
}
