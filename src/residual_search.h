/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The encoder's side of the residual layer (residual.h): the choice of
 * each block's mode, vector and levels by rate and distortion, the block
 * weights that scale its lambda, and the levels stream written or priced.
 * Only the encoder includes this.
 */
#ifndef PNMF_RESIDUAL_SEARCH_H
#define PNMF_RESIDUAL_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "rangecoder_enc.h"
#include "residual.h"

/* The step (1/16 gray level) for the quality q, 0..PNMF_MAX_QUALITY (64):
 * 2^(q/8) gray levels, 1 at q = 0 (lossless), 4 at 16, 16 at 32, 64 at 48,
 * 256 at 64 (PNMF_RES_MAX_STEP). */
int  pnmf_residual_step(int q);

/* The forward 4x4 integer transform of H.264, unnormalized (x to w), both
 * in raster order: the inverse of pnmf_residual_idct4() up to its scaling. */
void pnmf_residual_fdct4(const int *x, int *w);

/* The sum of the absolute values of the 8x8 Hadamard transform of s - pred
 * (s: rows cols apart, pred: 8x8, rows 8 apart), the transform trials'
 * SATD cut. */
int  pnmf_residual_satd8x8(const uint8_t *s, const uint8_t *pred, int cols);

/* The SADs of the whole 8 x 8 block of src at (y0, x0) against Dp (both
 * rows x cols) displaced by each vector (dy, dx) = (-R + g i, -R + g k)
 * of the block search's grid (R = PNMF_LOCAL_RANGE, i, k = 0 .. n - 1,
 * n = 2R / g + 1), samples outside the frame clamped to its edge, in
 * out[i * n + k]. */
void pnmf_residual_grid_sads(const uint8_t *src, const uint8_t *Dp, int rows, int cols, int y0, int x0, int g,
                             int *out);

/* An uncoded pixel trial of the 8-sample-wide rows y0 .. y1 - 1 of the
 * block of src at (y0, x0) (rows cols apart): the prediction pred (rows
 * 8 apart) written to D there as it is, and the sum of squared errors,
 * or -1 as soon as lb + the sum after a row reaches bj (later rows of D
 * then not written). */
int  pnmf_residual_uncoded_sse(const uint8_t *src, int cols, const uint8_t *pred, uint8_t *D, int y0, int y1, int x0,
                               double lb, double bj);

/* The sum of a's n samples and the sum of their squares. */
void pnmf_residual_sums(const uint8_t *a, size_t n, uint64_t *sum, uint64_t *sq);

/* The sum over the runs of PNMF_WP_RUN samples of n (the last partial run
 * left out) of |ssum[k] - the sum of run k's samples of R weighted with
 * (w, o) (pnmf_residual_weigh())|: the weights' estimate's measure
 * (enc_residual.c). */
int64_t pnmf_residual_weighted_runs(const int32_t *ssum, const uint8_t *R, size_t n, int w, int o);

/* The encoder's side of pnmf_residual_frame(): choose frame j's modes and
 * levels (frames in order 0, 1, ...; nref of ref[] are decoded frames
 * available) against the source src, minimizing
 * squared error + lambda * estimated bits per block, append them to r and
 * write the decoded frame to D, exactly what pnmf_residual_frame() gives. */
int  pnmf_residual_encode_frame(PnmfResidual *r, int j, const uint8_t *src, const uint8_t *P,
                                const uint8_t *Pp, const uint8_t *const *ref, int nref, uint8_t *D,
                                double lambda);

/* pnmf_residual_encode_frame() given the previous source frame too
 * (src_prev, NULL where there is none), by which the search of a block
 * whose source stands still is cut short at coarse steps: the same
 * decoded frame where src_prev is NULL. */
int  pnmf_residual_encode_frame_src(PnmfResidual *r, int j, const uint8_t *src, const uint8_t *src_prev,
                                    const uint8_t *P, const uint8_t *Pp, const uint8_t *const *ref, int nref,
                                    uint8_t *D, double lambda);

/* The encoder's block weights (enc_weight) of m frames (rows x cols, each
 * stride samples after the last): for frame j's block b, the number k of
 * frames after it in which the block stays exactly the same (frames j+1 ..
 * j+k equal to frame j there), as round(2 log2(1 + k)) up to
 * PNMF_RES_WEIGHTS - 1; w[j * blocks + b]. The block's lambda is then
 * lambda / (1 + k). 0 or PNMF_ERR_NOMEM. */
int  pnmf_residual_copy_weights(const uint8_t *frames, int m, size_t stride, int rows, int cols, uint8_t *w);

/* Raises w (as pnmf_residual_copy_weights() gives it) where a block's
 * samples move into later frames unchanged: a whole 8 x 8 block of frame
 * j equal to frame j - 1's samples in place, or else at the first place
 * (raster order) that has them if that is within PNMF_RES_MAX_MV of it
 * (what the encoder's vectors reach), passes on to the
 * blocks of frame j - 1 under that place their area's share (in blocks)
 * of its weight, 1 + what it gets from frame j + 1 and on; the class is
 * round(2 log2(1 + the sum)), at most PNMF_RES_WEIGHTS - 1. 0 or
 * PNMF_ERR_NOMEM. */
int  pnmf_residual_match_weights(const uint8_t *frames, int m, size_t stride, int rows, int cols, uint8_t *w);

/* Whether a window of m source frames (frame j at frames + j * stride)
 * should code its shifted blocks' vectors in quarter samples (window flags
 * bit 6): the share of the SAD of changed blocks that quarter positions
 * save (*gain) and the share of changed blocks a whole vector matches
 * exactly (*exact), measured on a few frames, against PNMF_SUBPEL_MIN_GAIN
 * and PNMF_SUBPEL_MAX_EXACT. */
int  pnmf_residual_subpel_pays(const uint8_t *frames, int m, size_t stride, int rows, int cols, double *gain,
                               double *exact);

/* The levels of frames from..m-1 of r through the levels stream's
 * decisions (rangecoder_enc.h), coded or priced as o says, with fresh
 * contexts c, in the order pnmf_residual_levels_read() reads them; pixel
 * levels bounded by max_pixel. Returns 0, or -1 for a level out of
 * range. */
int  pnmf_residual_levels_stream(RcBin *o, RcLevCtx *c, const PnmfResidual *r, int from, int max_pixel);

#endif /* PNMF_RESIDUAL_SEARCH_H */
