/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The restoration filter (format 19, window flags bit 22; docs/format.md,
 * "Restoration filter"): a symmetric filter over the 13 samples within
 * |dy| + |dx| <= 2 (a 5x5 rhombus) applied to every frame of the window
 * as it is shown, its taps chosen by the encoder per class of 4x4 blocks
 * (their activity and direction). Out of the loop: the residual layer's references are
 * the frames before it. Samples outside the frame are the nearest edge
 * sample (coordinates clamped), which a padded copy of the frame holds. */
#ifndef PNMF_PFILTER_H
#define PNMF_PFILTER_H

#include <stddef.h>
#include <stdint.h>

#define PNMF_FLAG_PFILTER  4194304 /* window flags bit 22 (format 19): the restoration filter */
#define PNMF_PF_CLASSES    15     /* classes of 4x4 blocks: 5 of activity times 3 of direction */
#define PNMF_PF_TAPS       6      /* coded taps: one per pair of opposite samples of the rhombus */
#define PNMF_PF_LOG2       8      /* the taps' denominator: c / 2^8 */
#define PNMF_PF_MAX_TAP    255    /* |c| of a coded tap */
#define PNMF_PF_BLOCK      4      /* the classes' blocks */
#define PNMF_PF_PADX       16     /* a padded frame's columns left and right of the frame */
#define PNMF_PF_PADY       4      /* and its rows above and below */

/* The coded taps' offsets (dy, dx), in their order: the half of the
 * rhombus |dy| + |dx| <= 2 after the centre in raster order; each tap
 * weighs the samples at (dy, dx) and (-dy, -dx). */
extern const int8_t pnmf_pf_off[PNMF_PF_TAPS][2];

typedef struct PnmfPFilter {
    int on;                                  /* 0: frames are shown as decoded */
    int mask;                                /* bit k: class k is filtered (15 bits) */
    int16_t c[PNMF_PF_CLASSES][PNMF_PF_TAPS]; /* each class's coded taps */
} PnmfPFilter;

/* The centre tap of a class: the taps sum to 2^PNMF_PF_LOG2 (a flat
 * frame stays as it is). */
int pnmf_pf_centre(const int16_t *c);

/* A padded copy of an h x w frame: its bytes, and its rows' stride; the
 * frame's sample (0, 0) is at pnmf_pf_origin() of the buffer. */
size_t pnmf_pf_padded_size(int h, int w, ptrdiff_t *stride);
static inline uint8_t *pnmf_pf_origin(uint8_t *buf, ptrdiff_t stride)
{
    return buf + PNMF_PF_PADY * stride + PNMF_PF_PADX;
}

/* The frame at org (h x w, rows stride apart) padded: every sample around
 * it within the margins the nearest of its edge samples. */
void pnmf_pf_pad(uint8_t *org, ptrdiff_t stride, int h, int w);

/* The classes of every 4x4 block of the padded frame org, in raster order,
 * into cls (ceil(h / 4) * ceil(w / 4) of them): with H and V the sums over
 * the block's 16 positions (those past the frame's edge clamped to it) of
 * |2 p - left - right| and |2 p - above - below|, the class is 3 a + d,
 * a the number of the thresholds 16, 48, 128 and 320 that H + V exceeds,
 * d 1 where H > 2 V, 2 where V > 2 H, else 0. */
void pnmf_pf_classes(const uint8_t *org, ptrdiff_t stride, int h, int w, uint8_t *cls);

/* The padded frame org (h x w) filtered into dst (rows dstride apart): the
 * samples of a block whose class is in the mask are (sum of c_i (p(y +
 * dy_i, x + dx_i) + p(y - dy_i, x - dx_i)) + centre p(y, x) + 128) >> 8,
 * floored and clamped to 0..255; the others are copied. cls: scratch of
 * ceil(w / 4) bytes. */
void pnmf_pf_apply(const PnmfPFilter *pf, const uint8_t *org, ptrdiff_t stride, int h, int w, uint8_t *dst,
                   ptrdiff_t dstride, uint8_t *cls);

#endif
