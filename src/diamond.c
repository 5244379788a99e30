/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Integer diamond product: frame j = sum over its entries of
 * (c * r_step) * S_p (levels * w_step), then rounded by PNMF_FRAC_BITS and
 * clamped to 8 bits, on the visible vis_rows x vis_cols corner of the
 * torus. Only the components' blocks are touched; the wrap around the
 * torus splits each block row into at most two runs, each clipped to the
 * visible columns.
 */
#include <string.h>

#include "diamond.h"
#include "pnmf/pnmf.h"

static void add_run(int64_t *a, const int16_t *l, int n, int64_t coef)
{
    for (int x = 0; x < n; x++) a[x] += coef * l[x];
}

void pnmf_diamond_int(const PnmfWindowModel *md, int j, int w_step, int r_step, int64_t *acc,
                      uint8_t *out)
{
    const int rows = md->rows, cols = md->cols, vr = md->vis_rows, vc = md->vis_cols;
    const size_t n = (size_t)vr * vc;
    if (md->first[j] == md->first[j + 1]) { /* no entries: every sample rounds to 0 */
        memset(out, 0, n);
        return;
    }
    memset(acc, 0, n * sizeof(*acc));
    for (int q = md->first[j]; q < md->first[j + 1]; q++) {
        const PnmfEntry *e = &md->ent[q];
        const PnmfComp *c = &md->comp[e->i];
        const int64_t coef = (int64_t)e->c * r_step * w_step;
        const int py = e->p / cols, px = e->p % cols;
        /* block columns x < split land at x + px, the rest wrap to x - split */
        const int split = cols - px < c->bw ? cols - px : c->bw;
        /* visible parts of the two runs: [0, n1) at px, [split, split + n2) at 0 */
        const int n1 = px >= vc ? 0 : (split < vc - px ? split : vc - px);
        const int n2 = c->bw - split < vc ? c->bw - split : vc;
        for (int y = 0; y < c->bh; y++) {
            int ty = y + py;
            if (ty >= rows) ty -= rows;
            if (ty >= vr) continue;
            int64_t *a = acc + (size_t)ty * vc;
            const int16_t *l = c->lev + (size_t)y * c->bw;
            if (n1 > 0) add_run(a + px, l, n1, coef);
            if (n2 > 0) add_run(a, l + split, n2, coef);
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
    if (shift_model != PNMF_SHIFT_VECTOR) { /* the same raster: row copies, one when the rows are contiguous */
        if (stride == width) {
            memcpy(frame, layout, (size_t)width * height);
            return;
        }
        for (int y = 0; y < height; y++) memcpy(frame + y * stride, layout + (size_t)y * width, (size_t)width);
        return;
    }
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++)
            frame[y * stride + x] = layout[(size_t)x * height + y];
}

int pnmf_canvas_size(int dim, int pad)
{
    if (pad <= 0) pad = dim / 8 > 16 ? dim / 8 : 16;
    for (int n = dim + pad;; n++) {
        int r = n;
        while (r % 2 == 0) r /= 2;
        while (r % 3 == 0) r /= 3;
        while (r % 5 == 0) r /= 5;
        if (r == 1) return n;
    }
}
