/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Frames coded at half size (format 17, the header's `half`) and their
 * normative scaling up to the frame size (docs/format.md, "Half size"). */
#ifndef PNMF_UPSAMPLE_H
#define PNMF_UPSAMPLE_H

#include <stddef.h>
#include <stdint.h>

/* The coded size of a side of n samples at half size. */
static inline int pnmf_half_size(int n) { return (n + 1) / 2; }

/* The ch x cw frame src (rows cw apart) scaled up into the h x w frame
 * dst (rows stride apart), h <= 2 ch, w <= 2 cw: sample (y, x) lies a
 * quarter of a coded sample before coded sample y / 2 when y is even and
 * a quarter after it when y is odd (the same across), and is the 6-tap
 * filter's quarter phases (pnmf_sharp_taps[3] and [1]) applied across
 * then down, the coded samples clamped at the edges, the sum in 1/4096
 * rounded and clamped to 0..255. tmp: ch * w int32_t. */
void pnmf_upsample2(const uint8_t *src, int ch, int cw, uint8_t *dst, ptrdiff_t stride, int h, int w, int32_t *tmp);

/* The h x w frame src (rows stride apart) scaled down into the ch x cw
 * frame dst: each coded sample the rounded mean of the 2 x 2 samples it
 * covers (the ones inside the frame). The encoder's, not normative. */
void pnmf_downsample2(const uint8_t *src, ptrdiff_t stride, int h, int w, uint8_t *dst);

#endif
