/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Palette blocks of the residual layer (format 9, window flags bit 13;
 * docs/format.md, "Palette blocks"): a block of mode 16 (the transform
 * bit without levels, otherwise unused) is drawn from a palette of 1..8
 * gray levels, one index per sample. Captured screens and sprites have
 * blocks of a few flat colours with sharp edges (a fish's stripes, an
 * outline on the background) that neither the transform nor the pixel
 * levels code cheaply: there the palette and its indices cost less than
 * the levels of any prediction.
 *
 * The palette and the indices follow the block's mode in the modes stream
 * (so a reader knows every block's samples before reconstruction): the
 * palette's size, which colours of the left and above blocks' palettes it
 * reuses, its new colours in ascending order, then each sample's index
 * coded against the indices of its left and above neighbours in the block.
 */
#ifndef PNMF_PALETTE_H
#define PNMF_PALETTE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rangecoder.h"

struct RcBin; /* rangecoder_enc.h, the encoder's */

#define PNMF_RES_PALETTE  16 /* the mode byte of a palette block */
#define PNMF_FLAG_PALETTE 8192 /* window flags bit 13 (format 9): palette blocks */
#define PNMF_PAL_MAX      8  /* colours of a palette */
#define PNMF_PAL_CACHE    (2 * PNMF_PAL_MAX) /* colours the left and above palettes offer */

/* One palette block: n colours in ascending order and the index of each
 * sample (clipped to the frame: h x w of them, row-major, at idx[y * 8 + x]). */
typedef struct PnmfPalBlock {
    uint8_t n;
    uint8_t col[PNMF_PAL_MAX];
    uint8_t idx[64];
} PnmfPalBlock;

/* The palette decisions' contexts, all at 1024 when a modes stream starts. */
typedef struct PnmfPalCtx {
    RcProb size[8];     /* n - 1 as a 3-bit tree */
    RcProb use[3];      /* a neighbour's colour reused: in the left palette only, the above only, both */
    RcProb hit[3];      /* the index is the first candidate: one neighbour, two equal, two distinct */
    RcProb hit2;        /* ... else the second */
    RcProb rem[7][8];   /* the rank among the other indices, by how many there are (2..8), as a tree */
} PnmfPalCtx;

static inline void pnmf_pal_ctx_init(PnmfPalCtx *c) { rc_probs_init(c->size, sizeof(*c) / sizeof(RcProb)); }

/* The cache of a block: the distinct colours of the palettes of its left
 * and above blocks (each NULL when that block is not a palette block or
 * lies outside the frame), ascending, into k; cls[i] 0 when k[i] is the
 * left one's only, 1 the above one's only, 2 both. Returns their number. */
int pnmf_pal_cache(const PnmfPalBlock *left, const PnmfPalBlock *above, uint8_t *k, uint8_t *cls);

/* Read a palette block of h x w samples from the modes stream into p.
 * Returns 0, or -1 for a value the format refuses. */
int pnmf_pal_read(RcDec *d, PnmfPalCtx *c, const PnmfPalBlock *left, const PnmfPalBlock *above, int h, int w,
                  PnmfPalBlock *p);

/* The decisions of palette block p: coded when o->enc, else priced (the
 * contexts moved when o->update). Returns 0, or -1 for a block the format
 * cannot code (colours not ascending, an index out of the palette). */
int pnmf_pal_code(struct RcBin *o, PnmfPalCtx *c, const PnmfPalBlock *left, const PnmfPalBlock *above, int h,
                  int w, const PnmfPalBlock *p);

/* The candidates of sample (y, x)'s index in p (the indices to its left
 * and above in the block, those decoded): C[0], C[1] (distinct), their
 * number, and *e the context of the first: 0 one neighbour, 1 two equal,
 * 2 two distinct. */
static inline int pnmf_pal_cands(const PnmfPalBlock *p, int y, int x, int C[2], int *e)
{
    const int a = x ? p->idx[y * 8 + x - 1] : -1, b = y ? p->idx[(y - 1) * 8 + x] : -1;
    int k = 0;
    if (a >= 0) C[k++] = a;
    if (b >= 0 && b != a) C[k++] = b;
    *e = a >= 0 && b >= 0 ? (a == b ? 1 : 2) : 0;
    return k;
}

/* The bits of the tree that codes a rank among m (2..8) indices. */
static inline int pnmf_pal_rank_bits(int m) { return m <= 2 ? 1 : m <= 4 ? 2 : 3; }

/* Draw palette block p into the h x w samples at D (rows cols apart). */
static inline void pnmf_pal_draw(const PnmfPalBlock *p, int h, int w, uint8_t *D, size_t cols)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) D[(size_t)y * cols + x] = p->col[p->idx[y * 8 + x]];
}

#endif
