/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pnmf-compare: the pieces shared by its files. A codec is a row of a
 * NULL-terminated table (compare_lavc.c, compare_pnmf.c); each point of a
 * codec's quality ladder is encoded, decoded and scored in a forked child
 * (compare_main.c, through compare_run.c), which hands back one CmpPoint.
 */
#ifndef PNMF_COMPARE_H
#define PNMF_COMPARE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pnmf/pnmf.h"

/* The source clip, gray8, held in memory once for every encode. */
typedef struct CmpClip {
    const char *path;
    int width, height;
    int fps_num, fps_den;
    int frames;
    uint8_t *pixels; /* frames * width * height bytes, rows width apart */
} CmpClip;

static inline const uint8_t *cmp_clip_frame(const CmpClip *c, int i)
{
    return c->pixels + (size_t)i * c->width * c->height;
}

/* What the command line sets for every codec. */
typedef struct CmpOptions {
    int threads;          /* encoder and decoder threads, every codec (default 1) */
    int verbose;          /* let the codec libraries log warnings */
    int keep_sei;         /* count x264's and x265's informational SEI (compare_lavc.c) */
    int dec_threads;      /* threads of the standard codecs' decoders, 0: as threads (pnmf-bench: 1) */
    int dec_runs;         /* decode each stream this many times, keep the fastest; 0 or 1: once */
    PnmfEncSettings pnmf; /* pnmf's own options; quality is the ladder's */
} CmpOptions;

/* One point of a ladder: what the child measured. Plain data, so it can
 * cross the pipe from the child as bytes. */
typedef struct CmpPoint {
    int ok;                /* 1 measured, 0 failed (err says why) */
    int param;             /* the ladder's value: crf or pnmf's -q */
    int frames;            /* frames decoded and scored */
    uint64_t bytes;        /* elementary stream bytes (pnmf: the whole .pnmf) */
    uint64_t sei_bytes;    /* SEI bytes removed before counting (x264, x265; see compare_lavc.c) */
    double sse;            /* sum of squared luma errors over all frames */
    double psnr;           /* PSNR-Y in dB from the global MSE, 999 if exact */
    double ssim;           /* SSIM-Y, mean over frames (compare_metrics.h) */
    double enc_seconds;    /* wall clock in the encoder's calls */
    double dec_seconds;    /* wall clock in the decoder's calls (scoring excluded; the fastest of dec_runs) */
    double enc_cpu_seconds;/* user + system CPU of the encode, all threads */
    double rss_base_mib;   /* resident memory when the child started */
    double peak_mib;       /* peak resident memory during the encode above that base, <0 unknown */
    char err[200];         /* why it failed */
} CmpPoint;

typedef struct CmpCodec CmpCodec;

/* A codec the tool compares. */
struct CmpCodec {
    const char *name;       /* what --codecs calls it: "x264" */
    const char *describe;   /* how it is run: "libx264 preset medium" */
    const char *param_name; /* the ladder's knob: "crf", "q" */
    int param_min, param_max;     /* the knob's legal range */
    int ladder_lo, ladder_hi;     /* the default ladder: from best quality to worst */
    /* 0 when it can run here; otherwise fills why (a phrase) and returns -1 */
    int (*available)(const CmpCodec *c, char *why, size_t len);
    /* Encode the clip at param, decode it, score it into pt (pt->ok, pt->err
     * and everything measured). Called in the child; pt->rss fields are
     * filled by cmp_mark_encoded(). */
    void (*run)(const CmpCodec *c, const CmpClip *clip, const CmpOptions *o, int param,
                CmpPoint *pt);
    const void *priv;
};

extern const CmpCodec *const cmp_lavc_codecs[]; /* NULL-terminated, compare_lavc.c */
extern const CmpCodec cmp_pnmf_codec;           /* compare_pnmf.c */

/* The codec --codecs calls name (len bytes), or NULL (compare_main.c). */
const CmpCodec *cmp_codec_by_name(const char *name, size_t len);

/* ---- measuring (compare_run.c, shared with pnmf-bench) ---- */

/* Called by a codec's run() right after its encode finishes: records the
 * encode's peak memory and CPU time since cmp_measure_start(). */
void cmp_mark_encoded(CmpPoint *pt);

/* Start measuring: reset the peak resident size to the current one (Linux
 * clear_refs), so the peak is this process's from now on, not its parent's. */
void cmp_measure_start(void);
/* User + system CPU seconds of every thread since cmp_measure_start(). */
double cmp_measure_cpu(void);
/* Resident KiB at cmp_measure_start(), and the peak since (either -1 unknown). */
double cmp_measure_base_kib(void);
double cmp_measure_peak_kib(void);

/* Run fn(ctx, out) in a forked child that calls cmp_measure_start() first
 * and hands the size bytes of *out (plain data) back through a pipe; run
 * it in-process when no child can be made. Returns 0 when *out was filled,
 * -1 when the child died or exited without handing it back: *status is
 * then its wait status. */
typedef void (*CmpChildFn)(void *ctx, void *out);
int cmp_run_child(CmpChildFn fn, void *ctx, void *out, size_t size, int *status);

/* Read up to max frames (all if < 0) of the clip at path as gray8, into
 * memory. Returns PNMF_EXIT_OK, or the exit code after printing one line
 * "PROG: PATH: reason" on stderr. */
int cmp_read_clip(const char *prog, const char *path, long long max, CmpClip *clip);

/* The ladder's i-th of n values from lo to hi, evenly spaced and rounded. */
int cmp_ladder_value(int lo, int hi, int i, int n);

/* Output (compare_report.c). */
typedef struct CmpRun {
    const CmpCodec *codec;
    int lo, hi;       /* this run's ladder */
    int npoints;
    CmpPoint *points; /* npoints, in ladder order */
} CmpRun;

/* --anchors (compare_anchors.c): append to runs (*nruns of max_runs used) a
 * run for every codec of the rd.csv at path but the nmeasured in measured,
 * with the points the file gives it, in its order. The file must have
 * been measured on clip's frame count and size. Returns 0, or -1 with a
 * one-line reason naming path (and the line) in err, runs as they were. */
int cmp_read_anchors(const char *path, const CmpClip *clip, const CmpCodec *const *measured, int nmeasured,
                     CmpRun *runs, int *nruns, int max_runs, char *err, size_t errlen);

void cmp_report_table(FILE *f, const CmpClip *clip, const CmpOptions *o, const CmpRun *runs, int nruns);
/* The BD table of the pnmf run against every other; nothing if no pnmf. */
void cmp_report_bd(FILE *f, const CmpRun *runs, int nruns);
/* Write rd.csv and bd.csv into dir; 0 or -1 with a one-line reason in err. */
int cmp_report_csv(const char *dir, const CmpClip *clip, const CmpRun *runs, int nruns, char *err,
                   size_t errlen);
/* Plot bpp against PSNR-Y with gnuplot into dir/rd.FORMAT ("svg" or "png").
 * Returns 0 written, 1 gnuplot is not installed (nothing written), -1 on
 * failure (reason in err). */
int cmp_report_plot(const char *dir, const char *format, const CmpClip *clip, const CmpRun *runs,
                    int nruns, char *path, size_t pathlen, char *err, size_t errlen);

#endif /* PNMF_COMPARE_H */
