/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The encoder's coding order (window flags bit 19): whether a window's
 * frames follow a rigid whole-sample pan, and its frames put in coding
 * order (residual.h, pnmf_order_coded()). */
#ifndef PNMF_ENC_ORDER_H
#define PNMF_ENC_ORDER_H

#include <stddef.h>
#include <stdint.h>

/* Whether the m frames (rows x cols, stride samples apart) pan over a
 * textured picture: the first frame's mean absolute difference between
 * neighbouring samples is PNMF_ORDER_MIN_ACTIVITY or more, and in most
 * probed pairs of consecutive frames, one whole-sample displacement other
 * than none matches most of a sparse grid of the later frame exactly, and
 * at least twice the grid's samples that no displacement matches. */
int pnmf_enc_order_pan(const uint8_t *frames, int m, size_t stride, int rows, int cols);

/* Reorders the m frames (stride samples each) from their order to the
 * coding order of groups of g; tmp holds a frame. */
void pnmf_enc_order_frames(uint8_t *frames, int m, size_t stride, int g, uint8_t *tmp);

#endif
