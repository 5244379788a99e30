/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef PNMF_ENC_WARP_H
#define PNMF_ENC_WARP_H

/* The encoder's estimate of a frame's warp (window flags bit 23, format
 * 20; docs/format.md, "Global warp"): how the previous prediction's
 * quarter-sample vector changes across the frame when the camera zooms or
 * turns. */

#include <stdint.h>

/* Fit the warp of frame src against its reference ref (both rows x cols):
 * block vectors found by a search around the global vector (*gy, *gx)
 * (whole samples), then a robust least-squares plane through each
 * component. On success (1) *gy, *gx become the plane's whole part at the
 * frame's centre and w the rest in the units of pnmf_residual_warp_mv();
 * 0 (w zeros, *gy, *gx kept) where too few blocks show the motion. sharp:
 * the window's interpolation (window flags bit 20). */
int pnmf_enc_warp_fit(const uint8_t *src, const uint8_t *ref, int rows, int cols, int sharp, int *gy, int *gx,
                      int32_t w[6]);

/* The SAD of the previous prediction of src from ref (rows x cols) over
 * all the frame's blocks, at the global vector (gy, gx) and the warp w
 * (zeros: the plain global vector), through the window's filter. */
int64_t pnmf_enc_warp_sad(const uint8_t *src, const uint8_t *ref, int rows, int cols, int sharp, int gy, int gx,
                          const int32_t w[6]);

#endif
