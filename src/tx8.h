/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The residual layer's 8x8 transform (format 9, window flags bit 8;
 * docs/format.md, "8x8 transform"): a transform block (mode bit 4) may be
 * one 8x8 integer transform of H.264 (ITU-T H.264, 8.5.13, flat scaling)
 * instead of four 4x4 quarters. Smooth content (camera footage, rendered
 * animation) has residuals whose energy an 8x8 basis gathers in fewer
 * coefficients than four 4x4 ones.
 *
 * The decision is coded in the levels stream before the block's
 * coefficients, so only windows with a levels stream (flags bit 3) carry
 * it; the 64 coefficients take the place of the four quarters' 64 levels
 * in the residual's level array, in the 8x8 zigzag order.
 */
#ifndef PNMF_TX8_H
#define PNMF_TX8_H

#include <stddef.h>
#include <stdint.h>

#include "rangecoder.h"
#include "residual.h"

struct RcBin; /* rangecoder_enc.h, the encoder's */

#define PNMF_TX8_MAX_COEF 4096 /* |level| of an 8x8 coefficient: keeps the inverse within 32 bits */

/* The zigzag order of an 8x8 block's coefficients (raster positions). */
extern const uint8_t pnmf_tx8_zigzag[64];

/* The dequantization's column (0..5) of each raster position of an 8x8 block. */
extern const uint8_t pnmf_tx8_classes[64];
static inline int pnmf_tx8_class(int q) { return pnmf_tx8_classes[q]; }

/* The dequantized coefficient of level l at raster position q (normative). */
int32_t pnmf_tx8_dequant(int l, int qp, int q);

/* The normative dequantization and inverse 8x8 transform of 64 levels in
 * zigzag order into the residual r in raster order, (x + 32) >> 6. */
void pnmf_tx8_idct(const int16_t *lev, int qp, int *r);
/* The same residual added to the 8x8 prediction at pred (rows pstride
 * apart), clamped to 0..255, into dst (rows stride apart). */
void pnmf_tx8_idct_add(const int16_t *lev, int qp, const uint8_t *pred, int pstride, uint8_t *dst, ptrdiff_t stride);

/* The encoder's forward 8x8 integer transform of the residual x (raster)
 * into w (raster); a level is about |w| * pnmf_tx8_mf(qp, q) / 2^(16 + qp / 6). */
void pnmf_tx8_fdct(const int *x, int *w);
extern const int pnmf_tx8_quant[6][6];
static inline int pnmf_tx8_mf(int qp, int q) { return pnmf_tx8_quant[qp % 6][pnmf_tx8_classes[q]]; }

/* The context of block b's decision in frame j: how many of the blocks to
 * its left and above in the frame are 8x8 transform blocks (0..2). */
int  pnmf_tx8_ctx(const PnmfResidual *r, int j, size_t b);

/* Whether a block of frames from..to-1 of r is an 8x8 transform block. */
int  pnmf_tx8_used(const PnmfResidual *r, int from, int to);

/* The levels stream's decisions of one 8x8 block: read into lev[] (64, in
 * zigzag order), or written or priced (RcBin). Both return -1 when a
 * magnitude exceeds max_l. */
int  pnmf_tx8_levels_read(RcDec *d, RcLevCtx *c, int kind, int16_t *lev, int max_l);
int  pnmf_tx8_levels(struct RcBin *o, RcLevCtx *c, int kind, const int16_t *lev, int max_l);

/* The 16-point transform of a 16x16 residual of which only the low 8x8
 * frequencies are kept (as AV1 keeps the low 32x32 of a 64x64 transform):
 * 64 levels in pnmf_tx8_zigzag order, raster position q the vertical
 * frequency q >> 3 and the horizontal q & 7. It is no tool of the format:
 * docs/measurements.md, "Big blocks on smooth clips", estimates such a
 * tool with it. */
extern const int8_t pnmf_tx16_matrix[8][16];
/* The dequantized coefficient of level l: clip16((l 16 levelScale[qp % 6]
 * 2^(qp / 6) + 64) >> 7), H.265's scaling (8.6.3) for a 16x16 block. */
int32_t pnmf_tx16_dequant(int l, int qp);
/* The normative inverse: the 16x16 residual r (raster) of 64 levels, the
 * columns' sums clip16((x + 64) >> 7), the rows' (x + 2048) >> 12. */
void pnmf_tx16_idct(const int16_t *lev, int qp, int *r);

#endif /* PNMF_TX8_H */
