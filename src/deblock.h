/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The residual layer's in-loop deblocking filter (docs/format.md,
 * "Deblocking filter"; window flags bit 7, format 9): once a frame of the
 * window is fully reconstructed, its samples are smoothed across the 8x8
 * block edges and the 4x4 edges inside transform blocks, vertical edges
 * first, then horizontal ones. The decoder shows the filtered frame and
 * later frames predict from it; the encoder filters its reconstruction by
 * the same call, so the two never drift apart.
 */
#ifndef PNMF_DEBLOCK_H
#define PNMF_DEBLOCK_H

#include <stdint.h>

#include "residual.h"

/* The strength classes of an edge (the boundary strength): 0 not filtered. */
#define PNMF_DEBLOCK_SAME   0 /* two uncoded blocks predicted alike */
#define PNMF_DEBLOCK_MOTION 1 /* uncoded blocks predicted differently */
#define PNMF_DEBLOCK_CODED  2 /* a side has levels */
#define PNMF_DEBLOCK_INTRA  3 /* a side predicts from this frame (predictions 3, 5, 6, 7) */

/* What the strength of an edge needs to know of a block (the filter's
 * scratch, one per block of a frame in PnmfResidual.dbk). */
struct PnmfDeblockBlock {
    uint8_t q;      /* its quantizer index */
    uint8_t flags;  /* intra 1, coded 2, transform 4 */
    uint8_t pred;   /* what an uncoded block copies: PNMF_DEBLOCK_MODEL, _COPY or _MOVED */
    uint8_t nz;     /* a transform block: bit s for a quarter s with a nonzero level */
    int16_t dy, dx; /* a copy: of D_{j-1-t} displaced by (dy, dx) */
    int t;
    uint64_t key;   /* pred, dy, dx and t in one word: equal keys predict alike */
};

/* What an uncoded block's prediction is, for the strength of its edges:
 * two blocks are predicted alike when both are the model frame, both the
 * same displaced copy of one decoded frame, or both the motion prediction
 * where the model moves. */
#define PNMF_DEBLOCK_MODEL 0 /* prediction 0: P_j */
#define PNMF_DEBLOCK_COPY  1 /* predictions 1, 4, and 2 where P_j = P_{j-1} on the block */
#define PNMF_DEBLOCK_MOVED 2 /* prediction 2 where the model moves */

/* The quantizer index (the transform's qp scale, 0..51) of a pixel step in
 * 1/16 gray level: the largest qp whose step is at most step16, 0 if none. */
int pnmf_deblock_step_index(int step16);

/* The edge thresholds of an index 0..51: alpha, beta and tc0 for strength
 * classes 1..3 (tc0[s - 1]). */
int pnmf_deblock_alpha(int index);
int pnmf_deblock_beta(int index);
int pnmf_deblock_tc0(int index, int strength);

/* Filter decoded frame j of r (r->rows x r->cols, contiguous) in place, as
 * its modes, vectors, levels and quantizers say; P and Pp are the model
 * frames j and j - 1 (read only where a block has prediction 2). The
 * frame's modes, vectors and levels must be in r (r->start[j + 1],
 * r->mvstart[j + 1] set). */
void pnmf_deblock_frame(const PnmfResidual *r, int j, const uint8_t *P, const uint8_t *Pp, uint8_t *D);

#endif /* PNMF_DEBLOCK_H */
