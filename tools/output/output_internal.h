/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The output formats behind muxer.h: one vtable per format, and the helpers
 * the per-frame file formats (png, pgm) share. Private to tools/output/. */
#ifndef PNMF_TOOLS_OUTPUT_INTERNAL_H
#define PNMF_TOOLS_OUTPUT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "output/muxer.h"

typedef struct PnmfOutputFormat {
    const char *name;       /* as given to pnmf_output_open() */
    size_t priv_size;       /* zeroed state handed to the callbacks */
    int ffmpeg;             /* 1: encodes with FFmpeg (pnmf_av_load() ahead of open) */
    /* info has been checked: positive size and frame rate. */
    int (*open)(void *priv, const char *dest, const PnmfOutputInfo *info,
                char *err, size_t errlen);
    /* Frame number index (1-based) of info's size, at time pts for
     * duration (info's time base). 0 or -1. */
    int (*write)(void *priv, unsigned index, const uint8_t *gray, ptrdiff_t stride, int64_t pts,
                 int64_t duration, char *err, size_t errlen);
    /* NULL, or: compare the digest with hex at close instead of writing
     * it. 0 or -1. */
    int (*verify)(void *priv, const char *hex, char *err, size_t errlen);
    /* Called once after a successful open, also after failed writes; frees
     * everything priv holds. 0, -1 or PNMF_OUTPUT_MISMATCH. */
    int (*close)(void *priv, char *err, size_t errlen);
} PnmfOutputFormat;

extern const PnmfOutputFormat pnmf_output_png;
extern const PnmfOutputFormat pnmf_output_pgm;
extern const PnmfOutputFormat pnmf_output_y4m;
extern const PnmfOutputFormat pnmf_output_md5;
extern const PnmfOutputFormat pnmf_output_mkv;
extern const PnmfOutputFormat pnmf_output_mp4;
extern const PnmfOutputFormat pnmf_output_webm;
extern const PnmfOutputFormat pnmf_output_gif;
extern const PnmfOutputFormat pnmf_output_apng;

void pnmf_output_set_err(char *err, size_t errlen, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* strerror(errnum) lower-cased to fit a reason line, in buf. */
const char *pnmf_output_strerror(int errnum, char *buf, size_t size);
#define PNMF_OUT_STRERROR(e) pnmf_output_strerror((e), (char[128]){ 0 }, 128)

/* Write dir/frame_NNNNNN.ext (index as %06u) from two byte ranges (head may
 * be NULL): into dir/.frame_NNNNNN.ext.tmp first, renamed into place once
 * complete; the temporary file is removed on failure. 0 or -1. */
int pnmf_output_put_frame_file(const char *dir, unsigned index, const char *ext,
                               const uint8_t *head, size_t head_size,
                               const uint8_t *body, size_t body_size,
                               char *err, size_t errlen);

#endif /* PNMF_TOOLS_OUTPUT_INTERNAL_H */
