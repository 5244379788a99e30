/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Quantization of the model (pure): the -q steps, components and
 * coefficients. Encoder side: the decoder reconstructs from the levels
 * with diamond.c. */
#ifndef PNMF_QUANT_H
#define PNMF_QUANT_H

#include <stdint.h>

#include "model.h"

/* Quantizer steps for -q (0..PNMF_MAX_QUALITY): the component step doubles
 * every 8 steps of q (1 at q=0, 4 at q=16, 64 at q=48). */
void pnmf_quant_steps(int q, int *w_step, int *r_step);

/*
 * Quantize a component w (rows x cols, signed) to a block of levels:
 * w ~= scale * S_q0(block), where the block is the smallest cyclic bounding
 * box of the quantized support, moved to the origin (this also fixes the
 * component's shift ambiguity), and block levels are round(w / scale * 256
 * / w_step) with max|w| / scale = 1. An all-zero component gives a 0 x 0
 * block and scale 0.
 */
int  pnmf_quant_component(int rows, int cols, const float *w, int w_step, PnmfComp *c,
                          float *scale, int *q0);

/* The dequantized block as a rows x cols image (block at the origin). */
void pnmf_dequant_component(int rows, int cols, const PnmfComp *c, int w_step, float *w);

uint32_t pnmf_quant_coef(float r, int r_step);
float    pnmf_dequant_coef(uint32_t c, int r_step);

/* p + q on the rows x cols torus. */
int  pnmf_shift_compose(int rows, int cols, int p, int q);

#endif /* PNMF_QUANT_H */
