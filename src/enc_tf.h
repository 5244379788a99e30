/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The encoder's motion-compensated temporal filter of the source: a frame
 * that later frames predict from (the first frame of a key window, coded
 * at a finer step) is averaged with its motion-aligned neighbours, each
 * pixel weighted by how well its neighbourhood matches relative to the
 * clip's noise, so that camera noise is not coded finely in a frame whose
 * errors the following frames copy. Encoder only: the decoder never sees
 * the filter. Private to the library.
 */
#ifndef PNMF_ENC_TF_H
#define PNMF_ENC_TF_H

#include <stddef.h>
#include <stdint.h>

/* The variance of the noise of cur (rows x cols, contiguous rows) in
 * squared gray levels, from the frame after it, next: each whole 8x8
 * block of cur is matched in next (pnmf_tf_filter's match), and half the
 * mean squared error of the block at the 1/PNMF_TF_NOISE_QUANT quantile is
 * the noise (the best matches are flat, still areas, where two frames
 * differ by their noise alone). Rendered, drawn and captured frames, whose
 * still areas repeat exactly, measure about 0. */
double pnmf_tf_noise(const uint8_t *cur, const uint8_t *next, int rows, int cols);

/* cur filtered into out (both rows x cols; out may be cur) with the
 * neighbours nb[0..nnb-1] (the frames after it, in order): each 8x8 block
 * of cur is matched in each neighbour (whole samples, within
 * PNMF_TF_RANGE of the vector found in the previous neighbour; then, with
 * PNMF_TF_HALF, the best of the 8 half samples around it, by
 * pnmf_tf_sample(), each one's squared error plus the noise variance its
 * interpolation averages out of the neighbour), and each pixel is averaged with the aligned
 * neighbours' pixels (in 1/16 of a gray level), weighted by
 * 1 / (1 + (d / t)^2), d the mean squared difference of its 3x3
 * neighbourhood and of its block, t = 2 * noise * strength (two noisy
 * copies of one frame differ by 2 * noise).
 * Where a neighbour matches exactly the pixel keeps its value.
 * Returns 0 or PNMF_ERR_NOMEM. */
int pnmf_tf_filter(uint8_t *out, const uint8_t *cur, const uint8_t *const *nb, int nnb, int rows, int cols,
                   double noise, double strength, int sharp);

/* The sample of f (rows x cols) at (Y, X) in quarter samples, in 1/16 of a
 * gray level, every coordinate clamped to the frame: bilinear between the
 * four whole samples around it (the codec's sub-pixel prediction without
 * its rounding), or with sharp by the codec's 6-tap filter (window flags
 * bit 20), its sum in 1/4096 plus 128, shifted down by 8 and clamped to
 * 0..255 * 16: the filter the window's predictions use. */
int pnmf_tf_sample(const uint8_t *f, int rows, int cols, int Y, int X, int sharp);

#endif /* PNMF_ENC_TF_H */
