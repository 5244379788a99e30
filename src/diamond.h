/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The decoder's reconstruction: the diamond product in integers. Normative:
 * encoder and decoder both call it, so the encoder measures exactly what
 * the decoder shows, on every build. */
#ifndef PNMF_DIAMOND_H
#define PNMF_DIAMOND_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* Frame j of the window: the visible vis_rows x vis_cols corner of the
 * torus, in layout order. acc is scratch space for vis_rows*vis_cols int64
 * values. */
void pnmf_diamond_int(const PnmfWindowModel *md, int j, int w_step, int r_step, int64_t *acc,
                      uint8_t *out);

/* The layout the fit works in: the frame itself for the torus model, the
 * column-stacked frame (index x*height + y) for the vector model. */
void pnmf_layout_from_frame(int shift_model, int width, int height, const uint8_t *frame,
                            ptrdiff_t stride, uint8_t *layout);
void pnmf_layout_to_frame(int shift_model, int width, int height, const uint8_t *layout,
                          uint8_t *frame, ptrdiff_t stride);

/* The canvas model's torus side for a frame side dim: at least dim + pad
 * (pad 0: automatic, max(16, dim / 8)), rounded up to a size whose only
 * prime factors are 2, 3 and 5, which FFTs handle fast. */
int pnmf_canvas_size(int dim, int pad);

#endif /* PNMF_DIAMOND_H */
