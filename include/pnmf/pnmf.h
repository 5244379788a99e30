/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * @file pnmf.h
 * The pnmf encoder and decoder API.
 *
 * Frames are 8-bit grayscale images. The encoder takes them one at a time,
 * fits Permutation NMF over each window of frames and writes a .pnmf
 * container to a seekable FILE. The decoder reads a .pnmf container and
 * returns the frames one at a time; its output is bit-exact on every build.
 */
#ifndef PNMF_PNMF_H
#define PNMF_PNMF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pnmf/common.h"
#include "pnmf/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How a component is moved over the frame (recorded in the file). */
enum PnmfShiftModel {
    PNMF_SHIFT_VECTOR = 0, ///< the paper's 1-D cyclic shift of the column-stacked frame
    PNMF_SHIFT_TORUS  = 1, ///< a 2-D cyclic shift (dy, dx) of the frame
    PNMF_SHIFT_CANVAS = 2, ///< a 2-D cyclic shift on a canvas larger than the frame, which shows its top-left corner
};

/** Which algorithms the fit uses. */
enum PnmfAlgo {
    PNMF_ALGO_PAPER    = 0, ///< random init, cyclic coordinate sweep, projected-gradient W step
    PNMF_ALGO_IMPROVED = 1, ///< median/residual init, greedy atom order + sweep (keep best), exact HALS W step
};

/** PnmfEncSettings.half: decide from the first frames. */
#define PNMF_HALF_AUTO 2

typedef struct PnmfEncSettings {
    int components;  ///< -k: components per window (default 8, 1..255)
    int window;      ///< -w: frames per window (default 60, 1..1024)
    int quality;     ///< -q: quantizer, lower is better (default 16, 0..PNMF_MAX_QUALITY)
    int shift_model; ///< enum PnmfShiftModel (default PNMF_SHIFT_TORUS)
    int algo;        ///< enum PnmfAlgo (default PNMF_ALGO_IMPROVED)
    int iterations;  ///< maximum ALS iterations per restart (default 30)
    int inner_iters; ///< sweeps in Multiple Permutation NNLS and PG steps (default 10, as in the paper)
    int restarts;    ///< fits per window, best objective kept (default 1)
    uint64_t seed;   ///< seed of the restarts' random numbers (default 1)
    int threads;     ///< worker threads, 0 = one per core (default 0); output is the same for any value
    int zstd_level;  ///< zstd compression level (default 19)
    int refine;      ///< passes of W step + requantization + H refit after the fit (default 4, 0..100)
    int signed_components; ///< components may hold negative pixels, so a part can darken what is under it (default 0)
    int canvas_pad;  ///< canvas model: margin added to the height and to the width, 0 = automatic (default 0)
    int residual;    ///< residual layer: what the parts miss, coded per 8x8 block against the model, the previous frame or the neighbours (default 1; not with PNMF_SHIFT_VECTOR)
    float target_psnr; ///< > 0: per window, the coarsest residual step whose PSNR-Y reaches this (dB); -q still sets the model's steps (default 0, off; needs residual)
    int two_level;   ///< > 0: the paper's two-level decomposition (3.4) with this many level-1 components, then `components` level-2 ones: a frame may hold one component several times (default 0, off; torus or vector shifts)
    int key_interval; ///< residual layer: a window whose first frame is this many frames or more after the last key window's starts a new key window (decodes on its own); the others predict from the window before them (default 250, like x264's keyint; 1: every window is a key window)
    int auto_k;      ///< 1: the full fit picks its number of components, growing while each new one lowers the fit's squared error by more than the residual layer's lambda times its estimated bits; -k is the cap (default 1; 0: always -k)
    int scene_cut;   ///< 1: a scene cut (a frame whose gray-level histogram and pixels both differ from the previous one's by far) ends the window before it, and the window it starts is a key window (default 1; 0: windows of -w frames only)
    int repeats;     ///< 1: after the fit, each frame may place a component again where that lowers the squared error by more than the residual layer's lambda times the entry's estimated bits (the same sprite twice; measured, it has not paid on the development set: off by default); 0: one entry per component and frame, as in the paper (default)
    int recentre;    ///< 1: after each W step of a fit, each component is moved so that its centre of mass is at the torus centre, and its shifts to match (the shift ambiguity; no reconstruction changes). Measured, it did not pay: off by default
    int carry;       ///< 1: a window that continues the one before may carry the last model's components over as they are, only its entries coded, when that costs less than the residual layer alone; the probe and the full fit are then skipped (default 1; 0: each window's model sends its components)
    PnmfLogger logger; ///< where the encoder's messages go (default: nowhere)
    int64_t time_start;  ///< with a time base: the first frame's time, 0..2^62, in time_base units (default 0)
    int time_base_num;   ///< > 0 with time_base_den: the file keeps every frame's time and duration in units of
    int time_base_den;   ///< time_base_num / time_base_den seconds (pnmf_enc_push_frame_timed()); 0, 0: no frame times (default)
    int color_range;     ///< the frames' levels, FFmpeg's AVColorRange: 0 unspecified (default), 1 limited (16..235), 2 full
    int color_primaries; ///< ITU-T H.273 colour primaries (FFmpeg's AVColorPrimaries); 0 or 2: unspecified (default)
    int color_trc;       ///< H.273 transfer characteristics (AVColorTransferCharacteristic); 0 or 2: unspecified
    int colorspace;      ///< H.273 matrix coefficients the luma was made with (AVColorSpace); 0 or 2: unspecified
    int sprites;     ///< 1: each window first looks for opaque sprites (poses pasted at positions over a background), kept in a dictionary across windows, whose composite the residual layer predicts from where that costs less than without; with components > 0, the torus shift model and the improved algorithm only (default 1; 0: off)
    int half;        ///< 1: the frames are coded at half their width and height (2 x 2 means) and the decoder scales them up to their size (format 17): fewer bytes at coarse steps of large frames, never exact; not with PNMF_SHIFT_CANVAS. 0: at their size. PNMF_HALF_AUTO (default): half size where the first frames coded both ways say it costs less (from -q PNMF_HALF_MIN_Q on, torus shifts with the residual layer, no target PSNR)
    int restoration; ///< 1: lossy windows of smooth content (camera footage, rendered and drawn animation) are shown through a restoration filter fitted to their frames where it pays for its taps (format 19; default 1; 0: off)
    uint8_t reserved[20]; ///< must be zero (pnmf_enc_default_settings() clears it): room for new settings
} PnmfEncSettings;

/** What a stream is: the file header, as the decoder sees it. */
typedef struct PnmfStreamInfo {
    int width, height;       ///< frame size in pixels
    int fps_num, fps_den;    ///< frame rate as a fraction
    int frame_count;         ///< frames in the stream
    int window;              ///< frames per window
    int components;          ///< the encoder's component cap per window
    int shift_model;         ///< enum PnmfShiftModel
    int quality;             ///< the -q the stream was made with
    int canvas_height;       ///< the torus components live on: the frame's size except
    int canvas_width;        ///< with the canvas model
    /* Metadata (format version 8; a file without it reads as range 0, the
     * others 2, and frames timed at the frame rate). */
    int color_range;         ///< FFmpeg's AVColorRange: 0 unspecified, 1 limited (16..235), 2 full
    int color_primaries;     ///< ITU-T H.273 code (FFmpeg's AVColorPrimaries), 2 unspecified
    int color_trc;           ///< H.273 transfer characteristics, 2 unspecified
    int colorspace;          ///< H.273 matrix coefficients, 2 unspecified
    int timed;               ///< 1: the file keeps each frame's time (pnmf_dec_frame_time()); 0: frame n is at
                             ///< time n in units of 1 / frame rate
    int time_base_num;       ///< the unit of pnmf_dec_frame_time(), in seconds: the file's time base, or
    int time_base_den;       ///< fps_den / fps_num when it has none
    int half;                ///< 1: the frames are coded at half size and scaled up as they are read (format 17)
} PnmfStreamInfo;

/** What the encoder measured, on exactly what the decoder will show. */
typedef struct PnmfEncStats {
    int frames;              ///< frames encoded so far
    int windows;             ///< windows written so far
    uint64_t bytes;          ///< bytes written so far (the whole file once finished)
    double sse;              ///< sum of squared errors of decoded versus input luma (with `half`, the decoded frames scaled up, as a reader shows them)
    double psnr;             ///< PSNR-Y in dB from the global mean squared error (999 if exact)
    double fit_objective;    ///< sum over windows of the float fit's objective ||A - W<>H^T||^2
    /* Where the time went: wall seconds in each stage of the windows so far. */
    double seconds_probe;    ///< model probes' one-iteration fits (their coding counts as residual)
    double seconds_fit;      ///< full fits: the fit, quantization and --refine
    double seconds_residual; ///< the residual layer's coding (with and without a model)
    double seconds_write;    ///< serializing the windows, zstd, the container
    double seconds_total;    ///< all of the windows' encoding (the stages and the rest)
    int scene_cuts;          ///< scene cuts found so far (each ended a window early or made one a key window)
    int carried;             ///< windows that carried the last model's components over
    int rc_levels;           ///< windows whose residual levels are range-coded (format 6)
    int repeated;            ///< entries placed by the repeat search (a component placed again in a frame)
    int fits_stopped;        ///< full fits stopped after two iterations: their model would not pay
} PnmfEncStats;

typedef struct PnmfEncoder PnmfEncoder;
typedef struct PnmfDecoder PnmfDecoder;

/**
 * Where a stream's bytes come from or go to, for pnmf_enc_open_io() and
 * pnmf_dec_open_io(). The library copies the struct; @p opaque stays the
 * caller's. Callbacks are called from the thread that called the library.
 */
typedef struct PnmfIO {
    void *opaque; ///< passed back to every callback as it is
    /** Read up to @p n bytes into @p buf: the count read (0 only at the end
     *  of the stream), or a negative PNMF_ERR code. Needed by the decoder. */
    ptrdiff_t (*read)(void *opaque, uint8_t *buf, size_t n);
    /** Write all @p n bytes: 0, or a negative PNMF_ERR code. Needed by the encoder. */
    int (*write)(void *opaque, const uint8_t *buf, size_t n);
    /** Move to @p offset from the start (SEEK_SET), the current position
     *  (SEEK_CUR) or the end (SEEK_END): the new position from the start,
     *  or a negative value if the stream cannot seek. The encoder needs it
     *  (the header is rewritten at the end); a decoder without it (NULL, or
     *  failing: a pipe) reads the stream once from the start and cannot seek. */
    int64_t (*seek)(void *opaque, int64_t offset, int whence);
} PnmfIO;

/**
 * Fill @p io with callbacks over @p f (which stays the caller's): for
 * reading when @p writing is 0 (a pipe works, without seeking), else for
 * writing, where seeking first flushes, so a write error (a full disk)
 * shows in the seek that ends the stream. The same callbacks pnmf_enc_open()
 * and pnmf_dec_open() use.
 */
PNMF_API void pnmf_io_file(PnmfIO *io, FILE *f, int writing);

/** The decoder's settings. */
typedef struct PnmfDecSettings {
    int64_t max_frame_pixels; ///< refuse a stream whose frames have more pixels than this (PNMF_ERR_LIMIT), 1..2^26 (default 2^26, the format's limit)
    int64_t max_frames;       ///< refuse a stream of more frames than this (PNMF_ERR_LIMIT), 1..2^28 (default 2^28, the format's limit)
    PnmfLogger logger;        ///< where the decoder's messages go (default: nowhere)
    uint8_t reserved[64];     ///< must be zero (pnmf_dec_default_settings() clears it): room for new settings
} PnmfDecSettings;

/** The library's version, PNMF_VERSION_INT of the build that made it:
 *  (major << 16) | (minor << 8) | patch. May differ from the header's
 *  PNMF_VERSION_INT when a program runs against a newer shared library. */
PNMF_API unsigned pnmf_version(void);

/** The library's version as "major.minor.patch". */
PNMF_API const char *pnmf_version_string(void);

/** Fill @p s with the defaults listed above. */
PNMF_API void pnmf_enc_default_settings(PnmfEncSettings *s);

/**
 * Open an encoder writing to @p out, which must be seekable (the header is
 * rewritten when the encoder finishes). The FILE stays owned by the caller.
 * @p width, @p height, @p fps_num and @p fps_den describe the frames.
 * On failure *enc may still be set so pnmf_enc_errmsg() can explain;
 * pnmf_enc_close() it either way.
 * @return 0 on success, or a negative PNMF_ERR code.
 */
PNMF_API int pnmf_enc_open(PnmfEncoder **enc, const PnmfEncSettings *s,
                           int width, int height, int fps_num, int fps_den,
                           FILE *out);

/**
 * As pnmf_enc_open(), writing through @p io (its write and seek callbacks
 * are needed), for output to memory, a socket with a seekable buffer, or
 * anything else. @p io is copied; its opaque stays the caller's.
 */
PNMF_API int pnmf_enc_open_io(PnmfEncoder **enc, const PnmfEncSettings *s,
                              int width, int height, int fps_num, int fps_den,
                              const PnmfIO *io);

/** Give the encoder one frame (width x height bytes, rows @p stride apart).
 *  The encoder copies it. A window is fitted and written each time one fills. */
PNMF_API int pnmf_enc_push_frame(PnmfEncoder *enc, const uint8_t *gray, ptrdiff_t stride);

/**
 * As pnmf_enc_push_frame(), with the frame's duration in units of the
 * settings' time base, 1..2^32-1 (the next frame's time minus this one's).
 * Needs a time base in the settings; pnmf_enc_push_frame() there gives a
 * frame the duration of one frame at the frame rate (at least 1).
 */
PNMF_API int pnmf_enc_push_frame_timed(PnmfEncoder *enc, const uint8_t *gray, ptrdiff_t stride, int64_t duration);

/**
 * Whether the encoder's scene-cut detector (PnmfEncSettings.scene_cut)
 * cuts the clip before frame @p cur, which follows @p prev (both width x
 * height, rows @p stride apart); @p since_cut counts the frames from the
 * last cut (or the clip's start) to @p cur (after a flat @p prev, a
 * black leader, a cut may come whatever @p since_cut). A tool that
 * splits a clip for encoding in parts finds with it the frames where the
 * encoder starts a key window anyway.
 * @return 1 (a cut), 0, or a negative PNMF_ERR code.
 */
PNMF_API int pnmf_scene_cut(const uint8_t *prev, const uint8_t *cur, ptrdiff_t stride, int width, int height,
                            int since_cut);

/** Fit and write the last window, the index, and the final header. */
PNMF_API int pnmf_enc_finish(PnmfEncoder *enc);

/** Statistics so far. */
PNMF_API void pnmf_enc_get_stats(const PnmfEncoder *enc, PnmfEncStats *st);

/** Detail of the last error, a short lower-case phrase ("" if none). */
PNMF_API const char *pnmf_enc_errmsg(const PnmfEncoder *enc);

/** Free the encoder; sets *enc = NULL; NULL-safe. Does not close the FILE. */
PNMF_API void pnmf_enc_close(PnmfEncoder **enc);

/**
 * Open a decoder on @p in (owned by the caller) and read the header.
 * On failure *dec is still set when possible so pnmf_dec_errmsg() can
 * explain; pnmf_dec_close() it either way.
 */
PNMF_API int pnmf_dec_open(PnmfDecoder **dec, FILE *in);

/** Fill @p s with the defaults listed above. */
PNMF_API void pnmf_dec_default_settings(PnmfDecSettings *s);

/**
 * Open a decoder with settings @p s (NULL: the defaults) reading through
 * @p io (its read callback is needed; seek for pnmf_dec_seek()). @p io is
 * copied; its opaque stays the caller's. Otherwise as pnmf_dec_open().
 */
PNMF_API int pnmf_dec_open_io(PnmfDecoder **dec, const PnmfDecSettings *s, const PnmfIO *io);

/**
 * Open a decoder on a whole stream in memory, @p size bytes at @p data,
 * which stay the caller's and must not change until pnmf_dec_close().
 * Otherwise as pnmf_dec_open_io().
 */
PNMF_API int pnmf_dec_open_memory(PnmfDecoder **dec, const PnmfDecSettings *s,
                                  const uint8_t *data, size_t size);

PNMF_API const PnmfStreamInfo *pnmf_dec_info(const PnmfDecoder *dec);

/** Decode the next frame into @p gray (width x height, rows @p stride apart).
 *  @return 0, PNMF_ERR_EOF after the last frame, or another negative code. */
PNMF_API int pnmf_dec_read_frame(PnmfDecoder *dec, uint8_t *gray, ptrdiff_t stride);

/** The time of the frame pnmf_dec_read_frame() returned last and its
 *  duration, in units of PnmfStreamInfo's time base.
 *  @return 0, or PNMF_ERR_ARG before the first frame. */
PNMF_API int pnmf_dec_frame_time(const PnmfDecoder *dec, int64_t *pts, int64_t *duration);

/** A sprite painted in a frame (pnmf_dec_frame_sprites()). */
typedef struct PnmfSpritePlacement {
    int sprite;              ///< its id in the decoder's dictionary (pnmf_dec_sprite())
    int x, y;                ///< the top-left corner of its box in the frame; negative or past
                             ///< the frame where the edge cuts it
} PnmfSpritePlacement;

/** The sprites painted in the frame pnmf_dec_read_frame() returned last,
 *  in paint order (back first): up to @p max of them into @p out.
 *  @return their number (may exceed @p max), 0 in a window without a sprite
 *          layer or before the first frame read since the open or a seek,
 *          or a negative code. */
PNMF_API int pnmf_dec_frame_sprites(const PnmfDecoder *dec, PnmfSpritePlacement *out, int max);

/** A sprite of the decoder's dictionary: an opaque image and its mask,
 *  cropped to the mask's bounding box. */
typedef struct PnmfSprite {
    int w, h;                ///< box size
    const uint8_t *pix;      ///< w * h luma, row-major; 0 outside the mask
    const uint8_t *mask;     ///< w * h: 1 opaque, 0 transparent
} PnmfSprite;

/** Sprite @p sprite (an id from pnmf_dec_frame_sprites()) of the dictionary
 *  as it stands after the last frame read; the dictionary lives from a key
 *  window to the next, so an id names a sprite until then. The pointers stay
 *  valid until the next read, seek or close.
 *  @return 0, or PNMF_ERR_ARG for an id out of range. */
PNMF_API int pnmf_dec_sprite(const PnmfDecoder *dec, int sprite, PnmfSprite *out);

/** Position the decoder so the next frame read is frame @p frame (0-based),
 *  through the file's index. */
PNMF_API int pnmf_dec_seek(PnmfDecoder *dec, int frame);

PNMF_API const char *pnmf_dec_errmsg(const PnmfDecoder *dec);

PNMF_API void pnmf_dec_close(PnmfDecoder **dec);

/**
 * Join the streams @p in[0] .. @p in[n-1] (n >= 1) into one stream written
 * to @p out (its write and seek callbacks are needed; each input needs
 * read, and is read from its current position): their frames in order,
 * each part's window chunks copied as they are stored (nothing decoded or
 * encoded again), with the frame numbers, the index and the header's frame
 * count made anew. The parts must agree on every header field the decoder
 * uses (frame size and rate, window, components, shift model and canvas,
 * quality and its steps, format version), and each is checked as the
 * decoder reads it (CRCs, zstd frames, index, trailer), so a damaged part
 * is refused. On failure @p out holds a partial stream, to be discarded.
 * @param bad   when not NULL, receives the index of the input an error is
 *              about, or -1 (the output, the arguments, the total)
 * @param err   when not NULL, receives a one-line lower-case reason
 *              (@p errlen bytes), such as "frame size 320x240, not 160x120
 *              as in the first part"
 * @return 0, or a negative PNMF_ERR code (PNMF_ERR_ARG for parts that do
 *         not match).
 */
PNMF_API int pnmf_cat(const PnmfIO *out, const PnmfIO *const *in, int n, int *bad, char *err, size_t errlen);

/** A fixed string for a PNMF_ERR code. */
PNMF_API const char *pnmf_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* PNMF_PNMF_H */
