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
    /* The levels of the gray frames, FFmpeg's AVColorRange, as FFmpeg
     * takes them: 1 limited (16..235: YUV tagged so or untagged), 2 full
     * (tagged so, yuvj formats, the luma of RGB input, and gray that says
     * nothing, such as PGM, which color_range_assumed then marks). */
    int color_range;
    int color_range_assumed;
    int color_primaries, color_trc, colorspace; /* H.273 codes of the first frame, 2 unspecified */
    int time_base_num, time_base_den;           /* the unit of pnmf_input_last_time() */
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

/* The time of the frame pnmf_input_read() returned last, from the clip's
 * first frame, in the info's time base, and its duration as the demuxer
 * gives it (0 when it does not): -1 for both when the frame has no time (a
 * concealed frame, a timestamp before the first one). */
void pnmf_input_last_time(const PnmfInput *in, int64_t *pts, int64_t *duration);

/* How pnmf_input_open_opts() reads. */
typedef struct PnmfInputOptions {
    /* An image-sequence pattern's first number (FFmpeg image2's
     * start_number); -1: image2 looks for one from 0 to 4. */
    int start_number;
    /* 1: a frame the demuxer or decoder cannot read, or one the decoder
     * flags as damaged, is an error. 0: it is concealed, the last good
     * frame given again in its place, and counted. */
    int strict;
    /* Called with one line (no file name, no newline) the first time the
     * input has each of: colour, alpha, samples of more than 8 bits, audio,
     * a concealed frame. NULL: nothing said. */
    void (*warn)(void *cookie, const char *msg);
    void *cookie;
} PnmfInputOptions;

/* start_number -1, strict 0, no warn callback. */
void pnmf_input_default_options(PnmfInputOptions *o);

/* As pnmf_input_open() (which reads strictly, with no warnings), with
 * options: "-" reads stdin (FFmpeg's pipe:0); a path that does not exist
 * and holds '*', '?' or '[' is a glob pattern of images (image2's
 * pattern_type glob). */
PnmfInput *pnmf_input_open_opts(const char *path, const PnmfInputOptions *opts, PnmfInputInfo *info,
                                char *err, size_t errlen);

/* Frames concealed so far (options.strict 0). */
int64_t pnmf_input_concealed(const PnmfInput *in);

/* FFmpeg's log level, by name (quiet, panic, fatal, error, warning, info,
 * verbose, debug, trace): 0, or -1 for another name. Until it is called,
 * FFmpeg prints nothing below a fatal error (everything with PNMF_DEBUG in
 * the environment): the tools say what went wrong in their own words. */
int pnmf_av_log_level(const char *name);

#endif /* PNMF_TOOLS_DEMUXER_H */
