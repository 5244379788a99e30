/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The encoder's estimate of how much of a window's first frame its later
 * frames inherit (enc_prop.c), which sets how much finer than the
 * window's step a key window's first frame is coded. */
#ifndef PNMF_ENC_PROP_H
#define PNMF_ENC_PROP_H

#include <stddef.h>
#include <stdint.h>

/* The propagation weight of the first of m frames (rows x cols, stride
 * samples apart): the frame's cost to code alone plus what the later
 * frames copy of it through motion, over its cost alone, as a macroblock
 * tree counts it on 16x16 blocks of the frames scaled down by 4. 1: the
 * later frames copy nothing of it; m: each copies all of it. 0 where
 * the frames are too small to tell (under 64 samples a side). */
double pnmf_enc_propagation(const uint8_t *frames, int m, size_t stride, int rows, int cols);

#endif
