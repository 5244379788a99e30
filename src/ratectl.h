/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Rate control: which of a window's codings at a grid of steps each -q
 * keeps. Encoder side. */
#ifndef PNMF_RATECTL_H
#define PNMF_RATECTL_H

#include "pnmf/common.h"

/*
 * Rate control's choice of a window's coding above -q PNMF_PICK_FLOOR
 * (enc_rate.c, choose_step). The steps it may code are those of -q
 * PNMF_PICK_FLOOR, + PNMF_PICK_GRID, ..., PNMF_MAX_QUALITY (the grid,
 * PNMF_PICK_CODINGS steps, numbered from 0), the same whatever -q is; a
 * search codes a few of them, told which by pnmf_step_search_next(), and
 * keeps one. For -q q, lo is the grid step at or below q's and t how far
 * q lies past it towards the next (0 .. 3/4).
 *
 * The pick, over the codings made: the lowest d + lambda * r, then the
 * fewer bytes, then the finer step (with an infinite lambda, the fewest
 * bytes, then the least error), lambda rising with q, among those with
 * - no more bytes and no less error than the coding at step 0 (what -q
 *   PNMF_PICK_FLOOR keeps);
 * - an error within q's bound: the largest error of the codings made at
 *   lo's step and finer, and where the coding at lo + 1 is made and has
 *   more error, t of the way from that to its error.
 *
 * The search: steps 0, lo and lo - 1 (above step 0), then one step finer
 * at a time while the finest coding made is the pick or costs less than
 * the one above it (the cost still falls towards the finer steps), then,
 * where the error at lo's step is no more than step 0's (content the
 * steps code exactly, where a coarser step can have no more error and
 * fewer bytes), one step coarser than lo at a time until two in a row
 * past lo's step exceed the bound; where instead the error at lo's step
 * is under 1 / PNMF_PICK_EXACT_NOISE of a uniform quantizer's there
 * (content coded mostly exactly, screen content: blocks kept or dropped
 * whole, so a coarser step can have less error than lo's), lo + 1 alone,
 * where the pick so far is lo's step or the one below it (not step 0).
 * Where the cost has one
 * minimum over the grid, that is the pick an exhaustive sweep of the grid
 * makes with the same rule (tests/test_step_pick.c), found with two or
 * three codings besides step 0 instead of up to PNMF_PICK_CODINGS - 1. A
 * higher -q still weighs bytes more and allows more error, but it sees
 * other codings than a lower one, so its pick is no longer bound to have
 * no more bytes and no less error in every window.
 */
#define PNMF_PICK_FLOOR   16
#define PNMF_PICK_GRID    4
#define PNMF_PICK_CODINGS ((PNMF_MAX_QUALITY - PNMF_PICK_FLOOR) / PNMF_PICK_GRID + 1)

typedef struct PnmfStepSearch {
    int q, lo;                 /* -q; the grid step at or below q's */
    double t, lambda;          /* q's place past lo (0 .. 1); the weight of a byte */
    double noise;              /* a uniform quantizer's squared error at lo's step over the window */
    int ahead;                 /* the finer walk stops where the next coding, foretold, cannot win (ratectl.c) */
    unsigned char have[PNMF_PICK_CODINGS];
    double r[PNMF_PICK_CODINGS], d[PNMF_PICK_CODINGS];
} PnmfStepSearch;

/* noise: the squared error a uniform quantizer at lo's step leaves on
 * the window (pixels * step^2 / 12), against which the search tells
 * content coded mostly exactly (0: never). */
void pnmf_step_search_init(PnmfStepSearch *s, int q, double lambda, double noise);
/* The next step to code, -1 when the search is done. With s->ahead set
 * (0 after init; the encoder sets it), the walk to finer steps also stops
 * where the next one's bytes and error, foretold by going on with the
 * ratios from the step above the finest made to the finest, cost at least
 * PNMF_PICK_AHEAD times the finest's: on a curve convex in the log of the
 * step (each finer step adds more bytes and saves less error than the
 * one before) that coding cannot win, and the search saves it. */
int  pnmf_step_search_next(const PnmfStepSearch *s);
/* The coding at step i: its bytes r and squared error d. */
void pnmf_step_search_add(PnmfStepSearch *s, int i, double r, double d);
/* The pick among the codings made so far (0 before step 0 is). */
int  pnmf_step_search_pick(const PnmfStepSearch *s);

/*
 * A finer step's coding weighed on the window's first frames (enc_rate.c):
 * in a window searched without step 0's coding (filmed and rendered
 * footage), the step search's codings finer than lo's step are coded on
 * the window's first p frames first, and their cost over the whole
 * window foretold from those by pnmf_pick_foretell(): where that is over
 * 1 + PNMF_PICK_PREFIX_MARGIN times the coding one step coarser's,
 * foretold the same way, it goes no further (pnmf_pick_prefix_cut()) and
 * is added to the search as pnmf_step_search_add(s, i, INFINITY, 0): a
 * coding no pick takes, no bound moves by, and which ends the walk to
 * finer steps. Where the foretold costs are in the order of the whole
 * window's, a coding cut is one that costs more than the one above it,
 * which the search would neither pick nor walk on from, so the pick is
 * the one it makes with the coding made whole (tests/test_step_pick.c).
 * On the smooth development clips' windows from -q 26 to 54, a cut
 * costs a window three quarters of a coding.
 */
/* j1: the cost (squared error + lambda * bytes) of the window's first
 * frame alone, jp: of its first p frames (each as if the window ended
 * there; p >= 2): j1 + (jp - j1) (m - 1) / (p - 1), the first frame (a
 * key window's, coded finer) apart from the frames after it. */
double pnmf_pick_foretell(double j1, double jp, int p, int m);
/* Whether a coding foretold to cost jf goes no further against the one
 * step coarser, foretold to cost jabove. */
int  pnmf_pick_prefix_cut(double jf, double jabove);

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

/*
 * The search below the floor: which of the PNMF_FINE_CODINGS steps to
 * code, the pick being pnmf_fine_pick's over the codings made (in the
 * grid's order). -q 0 codes only the last (lossless): the least error.
 * Above it: the first (the floor's), then the step of -q +
 * PNMF_FINE_LAMBDA_Q (the start: where the cost of a smooth curve is
 * lowest; from -q 16 - PNMF_FINE_LAMBDA_Q up, where that is the floor's,
 * the one finer), and no more, unless the floor's coding has an error under
 * 1 / PNMF_FINE_EXACT_NOISE of a uniform quantizer's at its step (content
 * coded mostly exactly: screen captures, whose lossless coding follows
 * exact repeats rather than the step and can cost less than every step
 * near it). There it codes the last (lossless), the start and its two
 * neighbours, then one step further either way while the outermost coding
 * made on that side is the pick or costs less than its neighbour inside,
 * and where the cost, lossless aside, has one minimum, the pick is
 * pnmf_fine_pick's over all the codings (tests/test_step_pick.c). On
 * camera and rendered footage (floor's error 0.09 to 0.87 of a uniform
 * quantizer's on the development set, screen captures 0.006 to 0.045) a
 * window costs one coding besides the floor's.
 */
typedef struct PnmfFineSearch {
    int q, start;              /* -q; the step the search starts from */
    int one;                   /* the one step coded on content not coded exactly */
    double lambda;
    double noise;              /* a uniform quantizer's squared error at the floor's step over the window */
    unsigned char have[PNMF_FINE_CODINGS];
    double r[PNMF_FINE_CODINGS], d[PNMF_FINE_CODINGS];
} PnmfFineSearch;

/* noise: the squared error a uniform quantizer at the floor's step leaves
 * on the window (pixels * step^2 / 12; 0: no content looks exact). */
void pnmf_fine_search_init(PnmfFineSearch *s, int q, double lambda, double noise);
/* Whether the floor's coding, made, has an error under
 * 1 / PNMF_FINE_EXACT_NOISE of noise (content coded mostly exactly). */
int  pnmf_fine_search_exact(const PnmfFineSearch *s);
/* The next step to code (an index of the grid above), -1 when done. */
int  pnmf_fine_search_next(const PnmfFineSearch *s);
void pnmf_fine_search_add(PnmfFineSearch *s, int i, double r, double d);
/* The pick among the codings made (the last at -q 0). */
int  pnmf_fine_search_pick(const PnmfFineSearch *s);

#endif /* PNMF_RATECTL_H */
