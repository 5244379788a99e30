/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The encoder's tuning constants, one place for all of them. None is part
 * of the format: changing one changes what the encoder chooses (and so its
 * output bytes), never what a decoder can read.
 */
#ifndef PNMF_TUNING_H
#define PNMF_TUNING_H

/* Model and rate-distortion weights */

/* The -q at which the model is fitted, quantized and weighed wherever the step is picked. */
#define PNMF_MODEL_Q 52
/* Squared error per bit at the finest step: so small a weight that the coding is lossless. */
#define PNMF_LOSSLESS_LAMBDA 1e-3
/* Bits a coefficient equal to its value in the frame before is worth keeping it for. */
#define PNMF_COEF_STICK_BITS 32.0
/* How many times finer than the window's step a key window's first frame is coded. */
#define PNMF_KEY_STEP_DIV 4

/* Step choice */

/* Above the pick's floor, a byte weighs as at the step of -q + this. */
#define PNMF_PICK_LAMBDA_Q 4
/* Below the pick's floor, a byte weighs as at the step of -q + this. */
#define PNMF_FINE_LAMBDA_Q 8

/* The full fit and its check */

/* Relative objective decrease below which a fit stops iterating. */
#define PNMF_FIT_TOL 1e-4
/* Iterations after which a full fit that follows a probe is checked against no model. */
#define PNMF_CHECK_ITERS 2
/* The checked fit stops when its cost is above this many times the residual layer alone's. */
#define PNMF_CHECK_MARGIN 1.3
/* --two-level: level-1 components with less energy than this share of the strongest are dropped. */
#define PNMF_TWO_LEVEL_DROP 0.05f
/* zstd level of the byte counts that decide between codings (the container compresses again). */
#define PNMF_ESTIMATE_ZSTD_LEVEL 3

/* The probe: one cheap fit that decides whether a full fit can pay */

/* The probe drops the model when its cost is above this many times the residual layer alone's. */
#define PNMF_PROBE_MARGIN 1.7
/* The same where the step is picked (bytes weighed as at PNMF_MODEL_Q). */
#define PNMF_PROBE_MARGIN_FIXED 1.2
/* Sweeps of the probe's H steps. */
#define PNMF_PROBE_SWEEPS 1
/* The probe drops the model when its bytes are above this many times the residual layer alone's. */
#define PNMF_PROBE_BYTES 2.0
/* A probe whose cost ratio is above this skips the probe (and the model) in the next windows. */
#define PNMF_PROBE_FAR 1.5
/* How many windows such a probe, or a stopped fit, leaves without a model, unprobed. */
#define PNMF_PROBE_SKIPS 2

/* Scene cuts */

/* Share of the pixels by which two frames' 64-bin gray histograms must differ at a cut. */
#define PNMF_CUT_HIST 0.15
/* Mean absolute pixel difference (gray levels) two frames must exceed at a cut. */
#define PNMF_CUT_PIXEL 20.0
/* Fewest frames between two cuts (or after the first frame): a flash is not two cuts. */
#define PNMF_CUT_MIN_GAP 4

#endif /* PNMF_TUNING_H */
