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
    /* The frames' levels (FFmpeg's AVColorRange; 0 unknown: written as they
     * are) and colour (H.273 codes, 2 unspecified): limited-range frames are
     * expanded to full range for PNG, GIF and APNG (whose pixels are full
     * range, as FFmpeg converts them), tagged in the other videos and the y4m
     * header; PGM and md5 take the samples as they are. */
    int color_range, color_primaries, color_trc, colorspace;
    /* The unit of pnmf_output_write_timed()'s times (0/0: 1 / frame rate). */
    int time_base_num, time_base_den;
    /* png only, 1: each row of a frame is width (gray, alpha) byte pairs,
     * written as gray+alpha (the alpha kept as it is). */
    int alpha;
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
/* The same with the frame's time and duration in the info's time base
 * (increasing times); pnmf_output_write() numbers frames 0, 1, ... at the
 * frame rate. A video keeps them; the other formats have no clock (y4m
 * has the nominal frame rate). */
int pnmf_output_write_timed(PnmfOutput *out, const uint8_t *gray, ptrdiff_t stride, int64_t pts,
                            int64_t duration, char *err, size_t errlen);

/* Flush and close; returns 0, -1 or PNMF_OUTPUT_MISMATCH (reason in err).
 * NULL-safe. */
int pnmf_output_close(PnmfOutput **out, char *err, size_t errlen);

/* lut[v]: limited-range level v expanded to full range as libswscale
 * expands luma, (v - 16) * 255 / 219 rounded and clamped to 0..255. */
void pnmf_output_range_lut(uint8_t lut[256]);

/* Create dir and any missing parents (mkdir -p). 0 or -1. */
int pnmf_output_mkdir(const char *dir, char *err, size_t errlen);

/* The format a file name's extension asks for (".mkv" -> "mkv", ".y4m" ->
 * "y4m", ...), or NULL. */
const char *pnmf_output_format_of(const char *path);

#endif /* PNMF_TOOLS_MUXER_H */
