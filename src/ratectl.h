/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Rate control: which of a window's codings at a grid of steps each -q
 * keeps. Encoder side. */
#ifndef PNMF_RATECTL_H
#define PNMF_RATECTL_H

#include "pnmf/common.h"

/*
 * Rate control's choice of a window's coding (encode.c, choose_step): the
 * window is coded at the steps of -q PNMF_PICK_FLOOR, + PNMF_PICK_GRID,
 * ..., PNMF_MAX_QUALITY (PNMF_PICK_CODINGS codings, the same whatever -q
 * is), offered here in that order with their bytes r and squared errors
 * d. The bound of a -q: at a -q of the grid, the largest error of the
 * codings at its step and the finer ones; between two -q of the grid, a
 * line from one's bound to the next's. A -q q above PNMF_PICK_FLOOR is
 * offered codings until two in a row past its grid step exceed its bound
 * (done is set then: the caller codes no more), and it picks the coding
 * with the lowest d + lambda * r (then the fewer bytes, then the first;
 * with an infinite lambda, the fewest bytes, then the least error), lambda
 * rising with q, among those with
 * - no more bytes and no less error than the first coding's (what -q
 *   PNMF_PICK_FLOOR keeps);
 * - an error within q's bound;
 * - an error above the bound of each lower -q that was not offered it.
 * A higher q has a bound no lower and is offered no fewer codings, so it
 * picks from more codings with a larger lambda: no more bytes and no
 * less error (where its pick was open to the lower q, as on a convex
 * hull; where it was not, its error is above the lower q's bound, and
 * its cost, no higher than the lower q's pick's, then needs fewer
 * bytes).
 */
#define PNMF_PICK_FLOOR   16
#define PNMF_PICK_GRID    4
#define PNMF_PICK_CODINGS ((PNMF_MAX_QUALITY - PNMF_PICK_FLOOR) / PNMF_PICK_GRID + 1)

typedef struct PnmfStepPick {
    int q, n, best, done;      /* -q; codings offered; the pick (-1: none); no more needed */
    double lambda;             /* the weight of a byte */
    double r[PNMF_PICK_CODINGS], d[PNMF_PICK_CODINGS];
    double br, bd, bj;         /* the pick's bytes, error and cost */
} PnmfStepPick;

void pnmf_step_pick_init(PnmfStepPick *p, int q, double lambda);
/* The next coding of the grid: 1 when it is now the pick. */
int  pnmf_step_pick_offer(PnmfStepPick *p, double r, double d);
/* Whether the next coding offered may set done (a caller coding two at
 * once codes one only then). */
int  pnmf_step_pick_may_end(const PnmfStepPick *p);

/*
 * Below PNMF_PICK_FLOOR: the window is coded at the steps of -q
 * PNMF_PICK_FLOOR, PNMF_PICK_FLOOR - PNMF_FINE_GRID, ..., 0 (PNMF_FINE_CODINGS
 * codings, all of them, the same for every -q under the floor), offered
 * in that order with their bytes r and squared errors d, and -q picks the
 * one with the lowest d + lambda * r, then the fewer bytes, then the first,
 * among those with no more error than the first (the floor's own coding),
 * lambda rising with -q (0 at -q 0: the least error, then the fewest
 * bytes, lossless where a coding is). Over a fixed set a larger lambda
 * never picks more bytes or less error, so from -q 0 up to the floor bytes
 * never rise and errors never fall, but for the floor's own bytes: where
 * a finer coding has fewer bytes than the floor's and no more error (a
 * lossless window on screen content), -q 1 .. floor - 1 may keep it, and
 * the floor's -q, which sees no finer coding, costs more.
 * Returns the index of the pick (0 when n is 0).
 */
#define PNMF_FINE_GRID    2
#define PNMF_FINE_CODINGS (PNMF_PICK_FLOOR / PNMF_FINE_GRID + 1)
int pnmf_fine_pick(const double *r, const double *d, int n, double lambda);

#endif /* PNMF_RATECTL_H */
