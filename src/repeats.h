/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Repeated entries: one component placed several
 * times in a frame (the same sprite twice). The fit (permnmf.h) places
 * each component once a frame; from its result, rounds of
 *   - a greedy search in every frame: the (component, shift) whose
 *     correlation with the frame's residual is largest, added while it
 *     lowers the squared error by more than lambda * PNMF_REPEAT_BITS,
 *     what one more entry costs (a rate-distortion stop); from the second
 *     round each frame is also searched again from no entries, and the
 *     cheaper of the two kept;
 *   - every coefficient refitted at its shift (exact coordinate steps),
 *     and each entry of a component placed more than once in its frame
 *     removed when it does not pay for its bits;
 *   - a W step for entries that repeat: the HALS step is not exact
 *     there (the copies of a component overlap in its Hessian), so each
 *     pixel takes the step of the majorizer
 *       den[x] = sum_j (sum_a r_a) (sum_a r_a vis_a[x])
 *     over the entries a of the component in frame j (vis_a[x]: 1 where
 *     entry a shows sample x of the component), which bounds the change
 *     of the squared error from above (Cauchy-Schwarz): the step never
 *     raises it.
 * Every step lowers the squared error plus lambda * PNMF_REPEAT_BITS per
 * entry beyond the first of its component in its frame
 * (pnmf_repfit_cost()), so that cost never rises from round to round.
 * Geometry as in permnmf.h: components on a rows x cols torus, the frame
 * its top-left vis_rows x vis_cols corner, which alone counts.
 */
#ifndef PNMF_REPEATS_H
#define PNMF_REPEATS_H

#include <stddef.h>

#include "fftcorr.h"
#include "permnmf.h"

#define PNMF_REPEAT_MAX    8     /* entries a frame beyond one per component, at most */
#define PNMF_REPEAT_ROUNDS 12
#define PNMF_REPEAT_BITS   32.0  /* one entry: a coefficient ~11 bits, shifts without a
                                  * previous occurrence to predict them ~2 x 10 */

typedef struct PnmfRepEnt {
    int i, p;  /* component, shift py * cols + px */
    float r;   /* coefficient, > 0 */
} PnmfRepEnt;

typedef struct PnmfRepFit {
    int rows, cols, vis_rows, vis_cols;
    size_t n;               /* rows * cols */
    int m, k, cap;          /* frames, components; cap: entries a frame, k + PNMF_REPEAT_MAX */
    int signed_w;           /* components may be negative */
    const float *A;         /* m frames on the torus (the caller's) */
    double lambda;          /* squared error per bit */
    PnmfRepEnt *ent;        /* m * cap: frame j's entries in component order */
    int *cnt;               /* m: entries of each frame */
    float *W;               /* k * n: the components */
    float *E;               /* m * n: frame minus model on the visible samples, 0 elsewhere */
    int added;              /* entries the searches added */
    /* scratch */
    PnmfFft *fft;
    float *RS, *tmp, *corr, *Ws, *g, *den, *dw;
    size_t stride;
    double *norm;
    PnmfRepEnt *saveL;
} PnmfRepFit;

int    pnmf_repfit_open(PnmfRepFit *f, int rows, int cols, int vis_rows, int vis_cols, int m, int k,
                        const float *A, double lambda, int signed_w);
void   pnmf_repfit_close(PnmfRepFit *f);

/* From W0 (k components) and H0 (m x k atoms, one a component and frame;
 * r = 0: none): the rounds above, into f->W, f->ent, f->cnt, f->E.
 * trace, if not NULL, gets pnmf_repfit_cost() before the first round and
 * after each (PNMF_REPEAT_ROUNDS + 1 values at most); returns the rounds
 * run (0 when no search added an entry: then nothing repeats). */
int    pnmf_repfit_run(PnmfRepFit *f, const float *W0, const PnmfAtom *H0, double *trace);

/* f->E from the frames and the entries with the components W. */
void   pnmf_repfit_residuals(PnmfRepFit *f, const float *W);
/* Every coefficient refitted at its shift against W (entries at 0 dropped). */
void   pnmf_repfit_coefs(PnmfRepFit *f, const float *W);
/* The repeated entries that no longer pay for their bits dropped. */
void   pnmf_repfit_prune(PnmfRepFit *f, const float *W);
/* The majorized W step of f->W (exposed for the tests). */
void   pnmf_repfit_w_step(PnmfRepFit *f);
/* Squared error over the visible samples; the same plus the repeated
 * entries' bits. */
double pnmf_repfit_energy(const PnmfRepFit *f);
double pnmf_repfit_cost(const PnmfRepFit *f);

#endif /* PNMF_REPEATS_H */
