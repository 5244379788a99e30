/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Writing decoded gray8 frames: PNG files, PGM files, a y4m stream, or the
 * MD5 of their pixels. */
#ifndef PNMF_TOOLS_MUXER_H
#define PNMF_TOOLS_MUXER_H

#include <stddef.h>
#include <stdint.h>

typedef struct PnmfOutput PnmfOutput;

typedef struct PnmfOutputInfo {
    int width, height;
    int fps_num, fps_den;
    const char *codec;      /* mkv, mp4, webm, gif, apng: the encoder (NULL: the container's default) */
} PnmfOutputInfo;

/* pnmf_output_close()'s result when a digest differs from the one given to
 * pnmf_output_verify() (err says both). */
#define PNMF_OUTPUT_MISMATCH (-2)

/* format: "png", "pgm", "y4m", "md5", or a video container ("mkv", "mp4",
 * "webm", "gif", "apng"; output/lavf_out.c). For png and pgm, dest is a
 * directory (created if missing) that receives frame_000001.png, ... each
 * written to a temporary file and renamed when complete. For y4m and md5,
 * dest is a file path, or "-" for stdout; for a container, a file path.
 * Returns NULL with a reason in err on failure. */
PnmfOutput *pnmf_output_open(const char *format, const char *dest,
                             const PnmfOutputInfo *info, char *err, size_t errlen);

/* For a format that writes a digest (md5): compare it with hex at close
 * instead of writing it. 0, or -1 (reason in err) when the format has no
 * digest or hex is not one. Call before the first write. */
int pnmf_output_verify(PnmfOutput *out, const char *hex, char *err, size_t errlen);

/* Write the next frame. Returns 0 or -1 (reason in err). */
int pnmf_output_write(PnmfOutput *out, const uint8_t *gray, ptrdiff_t stride,
                      char *err, size_t errlen);

/* Flush and close; returns 0, -1 or PNMF_OUTPUT_MISMATCH (reason in err).
 * NULL-safe. */
int pnmf_output_close(PnmfOutput **out, char *err, size_t errlen);

/* The format a file name's extension asks for (".mkv" -> "mkv", ".y4m" ->
 * "y4m", ...), or NULL. */
const char *pnmf_output_format_of(const char *path);

#endif /* PNMF_TOOLS_MUXER_H */
