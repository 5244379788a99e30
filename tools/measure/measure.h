/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Measuring codecs on one clip, for pnmf-compare and pnmf-bench: the clip
 * read once into memory, libavcodec's standard encoders and decoders as
 * rows of a codec table (lavc.c), and each measurement run in a forked
 * child that hands back a plain struct (run.c), so its peak memory and CPU
 * time are its own and a crash costs one measurement. The scores are
 * metrics.h's.
 */
#ifndef PNMF_TOOLS_MEASURE_H
#define PNMF_TOOLS_MEASURE_H

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
    int keep_sei;         /* count x264's and x265's informational SEI (lavc.c) */
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
    uint64_t sei_bytes;    /* SEI bytes removed before counting (x264, x265; see lavc.c) */
    double sse;            /* sum of squared luma errors over all frames */
    uint64_t diff_pixels;  /* pixels not decoded exactly; 0: lossless */
    int max_diff;          /* the largest difference of a decoded sample from its source */
    double psnr;           /* PSNR-Y in dB from the global MSE, 999 if exact */
    double ssim;           /* SSIM-Y, mean over frames (metrics.h) */
    double enc_seconds;    /* wall clock in the encoder's calls */
    double dec_seconds;    /* wall clock in the decoder's calls (scoring excluded; the fastest of dec_runs) */
    double dec_cpu_seconds;/* CPU time of the process in the same calls (the least of dec_runs) */
    double enc_cpu_seconds;/* user + system CPU of the encode, all threads */
    double rss_base_mib;   /* resident memory when the child started */
    double peak_mib;       /* peak resident memory during the encode above that base, <0 unknown */
    char err[200];         /* why it failed */
} CmpPoint;

struct CmpScore;
/* A point's scores from the frames scored into s (metrics.h): frames,
 * error, exactness, PSNR-Y and SSIM-Y; ok set. */
void cmp_point_scored(CmpPoint *pt, const struct CmpScore *s);

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

extern const CmpCodec *const cmp_lavc_codecs[]; /* NULL-terminated, lavc.c */
/* The lossless codecs (pnmf-compare --lossless), NULL-terminated, lavc.c:
 * one point each, the param ignored. */
extern const CmpCodec *const cmp_lavc_lossless_codecs[];

/* ---- measuring (run.c) ---- */

/* Called by a codec's run() right after its encode finishes: records the
 * encode's peak memory and CPU time since cmp_measure_start(). */
void cmp_mark_encoded(CmpPoint *pt);

/* Start measuring: reset the peak resident size to the current one (Linux
 * clear_refs), so the peak is this process's from now on, not its parent's. */
void cmp_measure_start(void);
/* User + system CPU seconds of every thread since cmp_measure_start(). */
double cmp_measure_cpu(void);

/* Time in a decoder's calls on two clocks: wall (CLOCK_MONOTONIC) and the
 * process's CPU time (CLOCK_PROCESS_CPUTIME_ID). The decoders run on one
 * thread, so CPU time is what they cost whatever else loads the machine. */
typedef struct CmpClock {
    double wall, cpu;
} CmpClock;

/* Both clocks now. */
CmpClock cmp_clock_now(void);
/* Adds the time since t0 to *acc, on both clocks. */
void cmp_clock_add(CmpClock *acc, CmpClock t0);
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

#endif /* PNMF_TOOLS_MEASURE_H */
