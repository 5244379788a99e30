/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The residual layer's directional intra predictions (format 9, window
 * flags bit 10; docs/format.md, "Directional intra"): an intra transform
 * block (prediction 5, 6 or 7 with mode bits 3 and 4) may carry a
 * *direction* in the levels stream that replaces its DC, vertical or
 * horizontal prediction by one of its family:
 *
 *   prediction 5 (DC):         planar, plane
 *   prediction 6 (vertical):   vertical-right, vertical-left, diagonal down-left
 *   prediction 7 (horizontal): horizontal-down, horizontal-up, diagonal down-right
 *
 * Smooth gradients and antialiased diagonal edges (cartoons, rendered
 * animation, camera footage) are what DC, V and H predict poorly. The
 * prediction is made for the whole 8 x 8 block from the decoded row above
 * (with the 8 samples above-right), the column left and the corner; the
 * angular ones are H.264's 8x8 luma formulas (ITU-T H.264, 8.3.2.2) on the
 * unfiltered neighbours, plane is H.264's 8x8 plane (8.3.4.4), planar the
 * mean of a horizontal and a vertical linear interpolation.
 */
#ifndef PNMF_INTRA_H
#define PNMF_INTRA_H

#include <stdint.h>

#include "rangecoder.h"

#define PNMF_INTRA_NONE     0 /* the block's prediction 5, 6 or 7 as it is */
#define PNMF_INTRA_PLANAR   1
#define PNMF_INTRA_PLANE    2
#define PNMF_INTRA_VR       3 /* vertical-right */
#define PNMF_INTRA_VL       4 /* vertical-left */
#define PNMF_INTRA_DDL      5 /* diagonal down-left */
#define PNMF_INTRA_HD       6 /* horizontal-down */
#define PNMF_INTRA_HU       7 /* horizontal-up */
#define PNMF_INTRA_DDR      8 /* diagonal down-right */
#define PNMF_INTRA_DIRS     9 /* directions 0..8 */
#define PNMF_INTRA_FAMILY   3 /* at most 3 directions a prediction */

/* The neighbours of the 8 x 8 block at (y0, x0) in the decoded frame D
 * (rows x cols): T[0..15] the row above and above-right, L[0..7] the
 * column left, C the corner, substituted where the frame lacks them. */
typedef struct PnmfIntraEdge {
    int T[16], L[8], C;
} PnmfIntraEdge;

void pnmf_intra_edge(const uint8_t *D, int cols, int y0, int x0, PnmfIntraEdge *e);

/* The prediction of direction dir (1..8) of the 8 x 8 block whose
 * neighbours are e, into pred (rows `stride` apart). */
void pnmf_intra_predict_edge(int dir, const PnmfIntraEdge *e, uint8_t *pred, int stride);

/* The same from the decoded frame D: the whole 8 x 8 block at (y0, x0),
 * which must lie inside the frame. */
void pnmf_intra_predict(int dir, const uint8_t *D, int cols, int y0, int x0, uint8_t *pred, int stride);

/* The directions of prediction mode (5, 6 or 7; 0 for any other) and the
 * k-th of them (k < pnmf_intra_count(mode)), and the inverse: the
 * prediction (5..7) and index of direction dir (1..8). */
int  pnmf_intra_count(int mode);
int  pnmf_intra_dir(int mode, int k);
void pnmf_intra_family(int dir, int *mode, int *k);

/* The direction of an intra transform block of prediction mode (5..7)
 * from the levels stream (kind as rc_lev_kind()): whether it has one, then
 * its index in two decisions. Returns 0 for none, the direction, or -1 for
 * an index past the family's (corrupt). */
int  pnmf_intra_read(RcDec *d, RcLevCtx *c, int kind, int mode);

/* Whether a block of frames from..to-1 of r has a direction. */
struct PnmfResidual;
int  pnmf_intra_used(const struct PnmfResidual *r, int from, int to);

#endif /* PNMF_INTRA_H */
