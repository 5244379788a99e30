/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading clips as 8-bit gray frames. The only place (with output/) where
 * FFmpeg is used: libpnmf itself takes plain gray8 buffers.
 */
#ifndef PNMF_TOOLS_DEMUXER_H
#define PNMF_TOOLS_DEMUXER_H

#include <stddef.h>
#include <stdint.h>

typedef struct PnmfInput PnmfInput;

typedef struct PnmfInputInfo {
    int width, height;
    int fps_num, fps_den;   /* frame rate as a fraction (25/1 when the clip has none) */
    int64_t frame_estimate; /* frames the container claims, or -1 if unknown */
} PnmfInputInfo;

/* Open any clip FFmpeg can read (a file, or an image-sequence pattern such
 * as dir/frame_%06d.png) and its first video stream. The first frame is
 * decoded here so the size is known. On failure returns NULL and writes a
 * one-line reason (without the file name) into err. */
PnmfInput *pnmf_input_open(const char *path, PnmfInputInfo *info, char *err, size_t errlen);

/* Next frame as gray8 into buf (info.width x info.height, rows stride
 * apart): the luma plane of YUV/gray input as stored (no range change),
 * BT.601 full-range luma of RGB input. Returns 1 with a frame, 0 at the end
 * of the clip, -1 on error (reason in err; a mid-stream frame size change
 * is an error). */
int pnmf_input_read(PnmfInput *in, uint8_t *buf, ptrdiff_t stride, char *err, size_t errlen);

/* Make frame (0-based) the next one pnmf_input_read() returns. Where the
 * demuxer can seek and the timestamps number the frames at a constant
 * rate, through a seek to the key frame before it; otherwise by decoding
 * and discarding the frames before it (from the clip's start to go back).
 * The frames read after it are those a plain read from the start gives.
 * Returns 1, 0 when the clip ends before that frame (err says how many it
 * has), -1 on error (reason in err). */
int pnmf_input_seek(PnmfInput *in, int64_t frame, char *err, size_t errlen);

void pnmf_input_close(PnmfInput **in);

#endif /* PNMF_TOOLS_DEMUXER_H */
