/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Writing decoded gray8 frames: PNG files, PGM files or a y4m stream. */
#ifndef PNMF_TOOLS_MUXER_H
#define PNMF_TOOLS_MUXER_H

#include <stddef.h>
#include <stdint.h>

typedef struct PnmfOutput PnmfOutput;

typedef struct PnmfOutputInfo {
    int width, height;
    int fps_num, fps_den;
} PnmfOutputInfo;

/* format: "png", "pgm" or "y4m". For png and pgm, dest is a directory
 * (created if missing) that receives frame_000001.png, ... each written to
 * a temporary file and renamed when complete. For y4m, dest is a file
 * path, or "-" for stdout. Returns NULL with a reason in err on failure. */
PnmfOutput *pnmf_output_open(const char *format, const char *dest,
                             const PnmfOutputInfo *info, char *err, size_t errlen);

/* Write the next frame. Returns 0 or -1 (reason in err). */
int pnmf_output_write(PnmfOutput *out, const uint8_t *gray, ptrdiff_t stride,
                      char *err, size_t errlen);

/* Flush and close; returns 0 or -1 (reason in err). NULL-safe. */
int pnmf_output_close(PnmfOutput **out, char *err, size_t errlen);

#endif /* PNMF_TOOLS_MUXER_H */
