/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * @file info.h
 * Inspection of a .pnmf file: its header, per-window statistics (entries,
 * block sizes, where the bytes go) and a window's component blocks.
 *
 * The reader walks the windows in file order, one in memory at a time,
 * with the same checks as the decoder: every window it returns is one the
 * decoder would decode.
 */
#ifndef PNMF_INFO_H
#define PNMF_INFO_H

#include <stdint.h>
#include <stdio.h>

#include "pnmf/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The file header and the file's size. */
typedef struct PnmfInfoHeader {
    int version;             ///< format version of the writer
    int min_reader_version;  ///< oldest reader version that reads the file
    int header_bytes;        ///< size of the header in the file
    int width, height;       ///< frame size in pixels
    int fps_num, fps_den;    ///< frame rate as a fraction
    int frame_count;         ///< frames in the stream
    int window;              ///< frames per window (the last may be shorter)
    int components;          ///< the encoder's component cap per window
    int shift_model;         ///< enum PnmfShiftModel
    int quality;             ///< the -q the stream was made with
    int w_step;              ///< component step: a level l is l * w_step / 256
    int r_step;              ///< coefficient step: a level c is c * r_step / 16
    int canvas_height;       ///< the torus the components live on (rows x cols):
    int canvas_width;        ///< the frame for torus, 1 x (w*h) for vector, the canvas for canvas
    uint64_t file_bytes;     ///< size of the file
    int color_range;         ///< FFmpeg's AVColorRange: 0 unspecified, 1 limited, 2 full
    int color_primaries;     ///< ITU-T H.273 codes, 2 unspecified
    int color_trc;
    int colorspace;
    int time_base_num;       ///< the frame times' time base; 0/0: the file has none
    int time_base_den;
    int half;                ///< 1: the frames are coded at half size, ceil(width/2) x ceil(height/2) (format 17)
} PnmfInfoHeader;

/** The parts of a window payload, in payload order (docs/format.md,
 *  "Window payload"); their byte counts add up to the payload's size. */
enum PnmfInfoSection {
    PNMF_INFO_SEC_HEAD = 0,   ///< flags and component count
    PNMF_INFO_SEC_SIZES,      ///< 2k block sizes
    PNMF_INFO_SEC_LEVELS,     ///< sum(bh * bw) component levels
    PNMF_INFO_SEC_COUNTS,     ///< k * m occurrence counts
    PNMF_INFO_SEC_COEFS,      ///< N coefficients, N = the entries
    PNMF_INFO_SEC_ROWSHIFTS,  ///< N row shifts
    PNMF_INFO_SEC_COLSHIFTS,  ///< N column shifts
    PNMF_INFO_SEC_SPRITES,    ///< sprite layer (format 8): new poses (frame, box, mask) and placements
    PNMF_INFO_SEC_RES_HEAD,   ///< residual layer: steps, transform quantizers and block size (0 or 5 values)
    PNMF_INFO_SEC_RES_MODES,  ///< residual layer: a mode per 8x8 block and frame
    PNMF_INFO_SEC_RES_VECTORS,///< residual layer: (reference, dy, dx) of the shifted blocks
    PNMF_INFO_SEC_RES_LEVELS, ///< residual layer: the levels of the coded blocks
    PNMF_INFO_SECTIONS        ///< the number of sections
};

typedef struct PnmfInfoSectionBytes {
    uint64_t values;         ///< varints in the section
    uint64_t raw_bytes;      ///< bytes of those varints in the payload
    uint64_t zstd_bytes;     ///< the section compressed alone (one zstd frame, as the
                             ///< container stores one: header and checksum included);
                             ///< 0 when not asked for (zstd_level 0)
} PnmfInfoSectionBytes;

/** Statistics of one window. The arrays it points to belong to the
 *  PnmfInfo and are valid until the next pnmf_info_next_window() call. */
typedef struct PnmfInfoWindow {
    int index;               ///< 0-based window number
    int first_frame;         ///< 0-based first frame
    int frames;              ///< frames in the window (m)
    int key;                 ///< 1 if it decodes on its own: no residual layer, or one that does not predict from the window before
    int components;          ///< components the payload lists (k)
    int carried;             ///< 1 if they are the last model's, carried over (the payload has no block sizes or levels)
    int rc_levels;           ///< its residual levels: 0 varints for zstd, 1 a range-coded stream (format 6), 2 frame 0's varints and the others' the stream; 3 and 4: 1 and 2 with the pixel levels in the sample-context stream (format 9)
    int nonempty;            ///< components with a block (bh, bw > 0)
    int used;                ///< components with at least one entry
    int signed_levels;       ///< 1 if a component holds a negative level
    uint64_t entries;        ///< (component, coefficient, shift) entries of all frames
    int repeat_frames;       ///< frames in which a component appears more than once
    int max_occurrences;     ///< most entries of one component in one frame
    uint64_t levels;         ///< sum over components of bh * bw
    const int *block_h;      ///< k block heights (0 for an empty component)
    const int *block_w;      ///< k block widths
    const uint64_t *comp_entries; ///< k: entries of each component in the window
    uint64_t chunk_bytes;    ///< file bytes of the window's chunk: 20 bytes of framing
                             ///< and the zstd frame (and any unknown chunk skipped before it)
    uint64_t payload_bytes;  ///< decompressed payload
    uint64_t payload_zstd_bytes; ///< the whole payload compressed again at zstd_level (0 if not asked)
    PnmfInfoSectionBytes sec[PNMF_INFO_SECTIONS]; ///< indexed by enum PnmfInfoSection
    uint64_t res_pred[8];    ///< residual layer: blocks of each prediction (0 model, 1 previous, 2 motion,
                             ///< 3 spatial, 4 shifted, 5 intra DC, 6 intra V, 7 intra H), all frames
    uint64_t res_coded;      ///< of those, blocks with levels
    uint64_t res_transform;  ///< of those, transform-coded
    int sprites;             ///< 1 if the window has a sprite layer
    int sprite_poses;        ///< poses it adds to the sprite dictionary
    uint64_t sprite_places;  ///< its placements, all frames
    uint64_t flags;          ///< the payload's flags (docs/format.md, "Window payload" item 1):
                             ///< bit 6 sub-pixel vectors, 7 deblocking, 8 8x8 transform,
                             ///< 9 sample-context levels, 10 intra directions, 11 context-coded sprite masks,
                             ///< 13 palette blocks, 16 context-coded sprite placements,
                             ///< 17 compound prediction, and the others the format lists
    uint64_t res_palette;    ///< residual layer: palette blocks (format 9; counted in res_pred[0] too)
} PnmfInfoWindow;

/** A window's components as stored: signed levels, l * w_step / 256 being
 *  the component's value (1.0 is the encoder's peak). One allocation;
 *  free it with pnmf_info_blocks_free(). */
typedef struct PnmfInfoBlocks {
    int window;              ///< 0-based window number
    int count;               ///< k
    int w_step;              ///< the file's component step
    int *bh, *bw;            ///< count block sizes (0 x 0 for an empty component)
    int16_t **lev;           ///< count blocks of bh[i] * bw[i] levels, row-major (NULL if empty)
} PnmfInfoBlocks;

typedef struct PnmfInfo PnmfInfo;

/**
 * Open @p in (owned by the caller; it must be seekable) and read the
 * header. On failure *info may still be set so pnmf_info_errmsg() can
 * explain; pnmf_info_close() it either way.
 * @return 0 on success, or a negative PNMF_ERR code.
 */
PNMF_API int pnmf_info_open(PnmfInfo **info, FILE *in);

/** The header; NULL if pnmf_info_open() failed. */
PNMF_API const PnmfInfoHeader *pnmf_info_header(const PnmfInfo *info);

/**
 * Read the next window and fill @p st. @p zstd_level 1..22 also measures
 * each section and the whole payload compressed alone at that level
 * (default of the encoder: 19; the file does not record its level); 0
 * skips that work.
 * @return 1 with a window, 0 after the last one (the index, the trailer
 *         and the end of the file then checked), or a negative PNMF_ERR code.
 */
PNMF_API int pnmf_info_next_window(PnmfInfo *info, PnmfInfoWindow *st, int zstd_level);

/**
 * Copy the components of the window pnmf_info_next_window() returned last
 * into a new allocation, *out (the caller owns it: pnmf_info_blocks_free()).
 * @return 0, PNMF_ERR_ARG if no window has been read, or PNMF_ERR_NOMEM.
 */
PNMF_API int pnmf_info_window_blocks(const PnmfInfo *info, PnmfInfoBlocks **out);

/** Free blocks from pnmf_info_window_blocks(); sets *b = NULL; NULL-safe. */
PNMF_API void pnmf_info_blocks_free(PnmfInfoBlocks **b);

/**
 * The frame times of the window pnmf_info_next_window() returned last, in
 * units of the header's time base: its first frame's time, the end of its
 * last frame, and the number of runs of equal durations it is stored as.
 * @return 1, 0 when the file keeps no frame times, PNMF_ERR_ARG before the
 *         first window.
 */
PNMF_API int pnmf_info_window_time(const PnmfInfo *info, int64_t *start, int64_t *end, int *runs);

/** Detail of the last error, a short lower-case phrase ("" if none). */
PNMF_API const char *pnmf_info_errmsg(const PnmfInfo *info);

/** The name of a section ("levels", ...), or "?" out of range. */
PNMF_API const char *pnmf_info_section_name(int section);

/** Free the context; sets *info = NULL; NULL-safe. Does not close the FILE. */
PNMF_API void pnmf_info_close(PnmfInfo **info);

#ifdef __cplusplus
}
#endif

#endif /* PNMF_INFO_H */
