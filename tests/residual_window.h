/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A residual layer coded and decoded frame by frame over a whole window,
 * each frame predicting from the frames before it (up to PNMF_RES_REFS),
 * as the encoder and the decoder run it: for the tests of the residual
 * layer's optional tools. The window's size is the layer's (r->m frames of
 * r->rows x r->cols); src, P and the decoded frames are m such frames.
 */
#ifndef PNMF_TEST_RESIDUAL_WINDOW_H
#define PNMF_TEST_RESIDUAL_WINDOW_H

#include "residual.h"
#include "residual_search.h"
#include "test.h"

/* The encoder's decisions over the window, its decoded frames into Denc. */
static inline void encode_window(PnmfResidual *r, const uint8_t *src, const uint8_t *P, double lambda, uint8_t *Denc)
{
    const size_t n = (size_t)r->rows * r->cols;
    for (int j = 0; j < r->m; j++) {
        const uint8_t *ref[PNMF_RES_REFS];
        for (int t = 0; t < PNMF_RES_REFS; t++) ref[t] = j - 1 - t >= 0 ? Denc + (j - 1 - t) * n : NULL;
        CHECK(pnmf_residual_encode_frame(r, j, src + j * n, P + j * n, j ? P + (j - 1) * n : NULL, ref,
                                         j < PNMF_RES_REFS ? j : PNMF_RES_REFS, Denc + j * n, lambda) == 0);
    }
}

/* The decoder's frames of the window into D. */
static inline void decode_window(const PnmfResidual *r, const uint8_t *P, uint8_t *D)
{
    const size_t n = (size_t)r->rows * r->cols;
    for (int j = 0; j < r->m; j++) {
        const uint8_t *ref[PNMF_RES_REFS];
        for (int t = 0; t < PNMF_RES_REFS; t++) ref[t] = j - 1 - t >= 0 ? D + (j - 1 - t) * n : NULL;
        pnmf_residual_frame(r, j, P + j * n, j ? P + (j - 1) * n : NULL, ref, D + j * n);
    }
}

/* A window read back from a changed payload, decoded where the harness
 * has what it predicts from: a key window. A continuing one predicts frame
 * 0 from the previous window's last frame, which the container's reader
 * supplies and this harness does not (its references there are NULL). */
static inline void decode_key_window(const PnmfResidual *r, const uint8_t *P, uint8_t *D)
{
    if (!r->continues) decode_window(r, P, D);
}

#endif /* PNMF_TEST_RESIDUAL_WINDOW_H */
