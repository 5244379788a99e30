/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Integer diamond product: frame j = sum over its entries of
 * (c * r_step) * S_p (levels * w_step), then rounded by PNMF_FRAC_BITS and
 * clamped to 8 bits. Only the components' blocks are touched; the wrap
 * around the torus splits each block row into at most two runs.
 */
#include <string.h>

#include "diamond.h"
#include "pnmf/pnmf.h"

void pnmf_diamond_int(const PnmfWindowModel *md, int j, int w_step, int r_step, int64_t *acc,
                      uint8_t *out)
{
    const int rows = md->rows, cols = md->cols, k = md->k;
    const size_t n = (size_t)rows * cols;
    memset(acc, 0, n * sizeof(*acc));
    for (int i = 0; i < k; i++) {
        const PnmfEntry *e = &md->ent[(size_t)j * k + i];
        const PnmfComp *c = &md->comp[i];
        if (!e->c || !c->bh) continue;
        const int64_t coef = (int64_t)e->c * r_step * w_step;
        const int py = e->p / cols, px = e->p % cols;
        /* columns x < split land at x + px, the rest wrap to x - split */
        const int split = cols - px < c->bw ? cols - px : c->bw;
        for (int y = 0; y < c->bh; y++) {
            int ty = y + py;
            if (ty >= rows) ty -= rows;
            int64_t *a = acc + (size_t)ty * cols;
            const uint16_t *l = c->lev + (size_t)y * c->bw;
            for (int x = 0; x < split; x++) a[x + px] += coef * l[x];
            for (int x = split; x < c->bw; x++) a[x + px - cols] += coef * l[x];
        }
    }
    const int64_t half = (int64_t)1 << (PNMF_FRAC_BITS - 1);
    for (size_t q = 0; q < n; q++) {
        const int64_t v = (acc[q] + half) >> PNMF_FRAC_BITS;
        out[q] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
}

void pnmf_layout_from_frame(int shift_model, int width, int height, const uint8_t *frame,
                            ptrdiff_t stride, uint8_t *layout)
{
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++)
            layout[shift_model == PNMF_SHIFT_VECTOR ? (size_t)x * height + y : (size_t)y * width + x] =
                frame[y * stride + x];
}

void pnmf_layout_to_frame(int shift_model, int width, int height, const uint8_t *layout,
                          uint8_t *frame, ptrdiff_t stride)
{
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++)
            frame[y * stride + x] =
                layout[shift_model == PNMF_SHIFT_VECTOR ? (size_t)x * height + y : (size_t)y * width + x];
}
