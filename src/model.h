/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A window's quantized model, what a WIND chunk carries (docs/format.md,
 * "Window payload"), and its byte serialization.
 *
 * Geometry: frames are rows x cols tori (torus model: height x width; vector
 * model: 1 x (width*height) in column-stacked order). Component i is a
 * bh x bw block of integer levels placed at the torus origin; entry (j, i)
 * places it in frame j shifted by p = py*cols + px with coefficient level c
 * (c = 0: absent). The decoder's integer reconstruction (diamond.c) is
 *   pixel = clamp((sum_i (c * r_step) * (level * w_step) + 2^11) >> 12, 0, 255)
 * i.e. components in units of 1/256 and coefficients in units of 1/16.
 */
#ifndef PNMF_MODEL_H
#define PNMF_MODEL_H

#include <stddef.h>
#include <stdint.h>

#define PNMF_MAX_LEVEL_VALUE 4096    /* level * w_step */
#define PNMF_MAX_COEF_VALUE  65535   /* c * r_step */
#define PNMF_FRAC_BITS       12      /* 8 (components) + 4 (coefficients) */

/* Decode work: a window of m frames of `pixels` pixels may ask for at most
 * m * (PNMF_WORK_PER_FRAME + PNMF_WORK_PER_PIXEL * pixels) sample updates
 * (docs/format.md, "Limits"), the sum over its present entries of their
 * components' block areas. */
#define PNMF_WORK_PER_FRAME  (1u << 28)
#define PNMF_WORK_PER_PIXEL  32

typedef struct PnmfComp {
    int bh, bw;        /* block size, 0 x 0 for an unused component */
    uint16_t *lev;     /* bh * bw levels, row-major */
} PnmfComp;

typedef struct PnmfEntry {
    uint32_t c;        /* coefficient level, 0 = absent */
    int32_t p;         /* shift py * cols + px */
} PnmfEntry;

typedef struct PnmfWindowModel {
    int rows, cols;
    int m, k;
    PnmfComp *comp;    /* k */
    PnmfEntry *ent;    /* m x k, ent[j * k + i] */
} PnmfWindowModel;

/* Allocate comp and ent for m frames and k components (levels not yet). */
int  pnmf_model_alloc(PnmfWindowModel *md, int rows, int cols, int m, int k);
void pnmf_model_free(PnmfWindowModel *md);

/* The decode work of a model (sum over entries with c > 0 of the block area)
 * and the most a window of m frames on a rows x cols torus may have. */
uint64_t pnmf_model_work(const PnmfWindowModel *md);
uint64_t pnmf_model_max_work(int rows, int cols, int m);

/* Serialize into a newly allocated buffer (pnmf_free it). A model whose
 * work is over pnmf_model_max_work() is refused (PNMF_ERR_LIMIT): a reader
 * would refuse it. */
int  pnmf_model_write(const PnmfWindowModel *md, uint8_t **buf, size_t *size);

/* Parse a payload for a window of exactly m frames on a rows x cols torus,
 * with at most max_k components and the header's quantizer steps; every
 * value is checked against its limit before use, the levels' memory against
 * the payload's size, and the decode work against pnmf_model_max_work()
 * (PNMF_ERR_LIMIT) before anything is reconstructed. */
int  pnmf_model_read(const uint8_t *buf, size_t size, int rows, int cols, int m, int max_k,
                     int w_step, int r_step, PnmfWindowModel *md, char *err, size_t errlen);

#endif /* PNMF_MODEL_H */
