/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pnmf-compare: the pieces shared by its files. A codec is a CmpCodec
 * (measure/measure.h): pnmf's (compare_pnmf.c) and the standard ones
 * (measure/lavc.c), listed by compare_codecs.c; each point of a codec's
 * quality ladder is encoded, decoded and scored in a forked child
 * (compare_main.c, through measure/run.c), which hands back one CmpPoint.
 */
#ifndef PNMF_COMPARE_H
#define PNMF_COMPARE_H

#include <stddef.h>
#include <stdio.h>

#include "measure/measure.h"

extern const CmpCodec cmp_pnmf_codec;           /* compare_pnmf.c */
extern const CmpCodec cmp_pnmf_k0_codec;        /* compare_pnmf.c: -k 0, only when --codecs names it */
extern const CmpCodec cmp_zstd_codec;           /* compare_zstd.c (--lossless) */

/* The codecs --codecs names, pnmf first then cmp_lavc_codecs: the i-th, or
 * NULL past the last (compare_codecs.c). */
const CmpCodec *cmp_codec_at(int i);
/* The codec --codecs calls name (len bytes), or NULL (compare_codecs.c). */
const CmpCodec *cmp_codec_by_name(const char *name, size_t len);

/* The codecs of --lossless: pnmf (at -q 0), cmp_lavc_lossless_codecs,
 * zstd; by position and by name, as above (compare_codecs.c). */
const CmpCodec *cmp_lossless_codec_at(int i);
const CmpCodec *cmp_lossless_codec_by_name(const char *name, size_t len);

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

/* --lossless: every run has one point. The table (bytes, bits per pixel,
 * speeds, and whether the decoded frames are the source's exactly), the
 * CSV dir/lossless.csv, and the bar chart of bits per pixel
 * dir/lossless.FORMAT (returns as cmp_report_plot). */
void cmp_report_lossless(FILE *f, const CmpClip *clip, const CmpOptions *o, const CmpRun *runs, int nruns);
int cmp_report_lossless_csv(const char *dir, const CmpClip *clip, const CmpRun *runs, int nruns, char *err,
                            size_t errlen);
int cmp_report_lossless_plot(const char *dir, const char *format, const CmpClip *clip, const CmpRun *runs,
                             int nruns, char *path, size_t pathlen, char *err, size_t errlen);

#endif /* PNMF_COMPARE_H */
