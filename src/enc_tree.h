/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The encoder's propagation weights: how much of each block of a window's
 * source frames the later frames inherit through their motion, as the
 * block weights (residual.h, enc_weight) that divide its lambda. */
#ifndef PNMF_ENC_TREE_H
#define PNMF_ENC_TREE_H

#include <stddef.h>
#include <stdint.h>

/* Raises w (m frames of blocks, as pnmf_residual_copy_weights() lays it
 * out) by the propagation of the m source frames (rows x cols, stride
 * samples apart). Each block of frame j > 0 is matched in frame j - 1
 * (whole-sample SAD search) and predicted from its own neighbours (the
 * least SAD of DC, vertical and horizontal); the share 1 - inter / intra
 * of what it carries (its intra cost plus what later frames inherit from
 * it) passes to the blocks of frame j - 1 under its match, by area. A
 * block that carries p over its intra cost i gets the class
 * round(2 * PNMF_TREE_STRENGTH * log2(1 + p / i)), so its lambda is
 * divided by (1 + p / i)^PNMF_TREE_STRENGTH; w keeps the larger class.
 * 0 or PNMF_ERR_NOMEM. */
int pnmf_enc_tree_weights(const uint8_t *frames, int m, size_t stride, int rows, int cols, uint8_t *w);

#endif
