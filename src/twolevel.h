/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The two-level decomposition of paper section 3.4, on the fitter's
 * rows x cols torus (the vector model is the 1 x n torus of the
 * column-stacked frame; see permnmf.h):
 *   A ~ W1 <> H1^T,  W1 ~ W <> H2^T,  so  A ~ W <> (H2^T <> H1^T).
 * Both levels are pnmf_fitter_fit() runs; nothing here fits by itself.
 */
#ifndef PNMF_TWOLEVEL_H
#define PNMF_TWOLEVEL_H

#include "permnmf.h"
#include "pnmf/fit.h"

/* The combined H2^T <> H1^T (paper 2.1, product of permutation-algebra
 * matrices): frame j gets r1[j,I] * r2[I,i] * S_{p1[j,I] + p2[I,i]} w_i for
 * every I, i with both coefficients nonzero; equal (i, shift) pairs are
 * merged by adding coefficients, and products that are zero are left out.
 * H1: m x K, H2: K x k. frame_start: m + 1 ints; entries: room for
 * m * K * k. Entries of a frame are sorted by component, then shift.
 * Returns the number of entries, or PNMF_ERR_NOMEM. */
int pnmf_twolevel_combine(int rows, int cols, int m, int K, int k, const PnmfAtom *H1,
                          const PnmfAtom *H2, int *frame_start, PnmfTwoLevelEntry *entries);

/* Level 1 with p1 (p1->k = K) on the m frames A, drop, level 2 with p2
 * (p2->k = k) on the kept level-1 components. Outputs: W1 (K x n),
 * H1 (m x K), W (k x n), H2 (K x k, zero rows for dropped components),
 * *kept; st1 and st2 (may be NULL) the two fits' statistics. */
int pnmf_twolevel_run(int rows, int cols, const float *A, int m, const PnmfFitParams *p1,
                      const PnmfFitParams *p2, float drop, int threads, float *W1, PnmfAtom *H1,
                      float *W, PnmfAtom *H2, int *kept, PnmfFitStats *st1, PnmfFitStats *st2);

#endif /* PNMF_TWOLEVEL_H */
