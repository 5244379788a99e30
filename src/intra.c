/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The directional intra predictions (intra.h) and the levels stream's
 * reader of a block's direction. */
#include "intra.h"

#include "rangecoder.h"
#include "residual.h"

void pnmf_intra_edge(const uint8_t *D, int cols, int y0, int x0, PnmfIntraEdge *e)
{
    const uint8_t *a = y0 ? D + (size_t)(y0 - 1) * cols : NULL; /* the row above */
    const int l0 = x0 ? D[(size_t)y0 * cols + x0 - 1] : 0;
    for (int i = 0; i < 16; i++) /* past the right edge: the row's last sample */
        e->T[i] = a ? a[x0 + i < cols ? x0 + i : cols - 1] : x0 ? l0 : 128;
    for (int i = 0; i < 8; i++) e->L[i] = x0 ? D[(size_t)(y0 + i) * cols + x0 - 1] : a ? a[x0] : 128;
    e->C = a && x0 ? a[x0 - 1] : a ? a[x0] : x0 ? l0 : 128;
}

/* p(i) = T[i] for i >= 0, C for -1; q(i) = L[i] for i >= 0, C for -1
 * (H.264's p[i, -1] and p[-1, i]) */
static inline int top(const PnmfIntraEdge *e, int i) { return i < 0 ? e->C : e->T[i]; }
static inline int lft(const PnmfIntraEdge *e, int i) { return i < 0 ? e->C : e->L[i]; }
static inline int f2(int a, int b) { return (a + b + 1) >> 1; }
static inline int f3(int a, int b, int c) { return (a + 2 * b + c + 2) >> 2; }

static int angular(int dir, const PnmfIntraEdge *e, int x, int y)
{
    switch (dir) {
    case PNMF_INTRA_DDL:
        if (x == 7 && y == 7) return (e->T[14] + 3 * e->T[15] + 2) >> 2;
        return f3(e->T[x + y], e->T[x + y + 1], e->T[x + y + 2]);
    case PNMF_INTRA_DDR:
        if (x > y) return f3(top(e, x - y - 2), top(e, x - y - 1), e->T[x - y]);
        if (x < y) return f3(lft(e, y - x - 2), lft(e, y - x - 1), e->L[y - x]);
        return f3(e->T[0], e->C, e->L[0]);
    case PNMF_INTRA_VR: {
        const int z = 2 * x - y;
        if (z >= 0 && !(z & 1)) return f2(top(e, x - (y >> 1) - 1), e->T[x - (y >> 1)]);
        if (z > 0) return f3(top(e, x - (y >> 1) - 2), top(e, x - (y >> 1) - 1), e->T[x - (y >> 1)]);
        if (z == -1) return f3(e->L[0], e->C, e->T[0]);
        return f3(lft(e, y - 2 * x - 1), lft(e, y - 2 * x - 2), lft(e, y - 2 * x - 3));
    }
    case PNMF_INTRA_HD: {
        const int z = 2 * y - x;
        if (z >= 0 && !(z & 1)) return f2(lft(e, y - (x >> 1) - 1), e->L[y - (x >> 1)]);
        if (z > 0) return f3(lft(e, y - (x >> 1) - 2), lft(e, y - (x >> 1) - 1), e->L[y - (x >> 1)]);
        if (z == -1) return f3(e->L[0], e->C, e->T[0]);
        return f3(top(e, x - 2 * y - 1), top(e, x - 2 * y - 2), top(e, x - 2 * y - 3));
    }
    case PNMF_INTRA_VL:
        if (!(y & 1)) return f2(e->T[x + (y >> 1)], e->T[x + (y >> 1) + 1]);
        return f3(e->T[x + (y >> 1)], e->T[x + (y >> 1) + 1], e->T[x + (y >> 1) + 2]);
    default: { /* PNMF_INTRA_HU */
        const int z = x + 2 * y;
        if (z > 13) return e->L[7];
        if (z == 13) return (e->L[6] + 3 * e->L[7] + 2) >> 2;
        if (!(z & 1)) return f2(e->L[y + (x >> 1)], e->L[y + (x >> 1) + 1]);
        return f3(e->L[y + (x >> 1)], e->L[y + (x >> 1) + 1], e->L[y + (x >> 1) + 2]);
    }
    }
}

void pnmf_intra_predict_edge(int dir, const PnmfIntraEdge *e, uint8_t *pred, int stride)
{
    if (dir == PNMF_INTRA_PLANAR) {
        /* (7 - x) L[y] + (x + 1) T[8] and (7 - y) T[x] + (y + 1) L[7]: the
         * row from the left sample to the one above-right, the column from
         * the one above to the last left one, averaged */
        for (int y = 0; y < 8; y++)
            for (int x = 0; x < 8; x++)
                pred[y * stride + x] = (uint8_t)(((7 - x) * e->L[y] + (x + 1) * e->T[8] + (7 - y) * e->T[x] +
                                                  (y + 1) * e->L[7] + 8) >> 4);
        return;
    }
    if (dir == PNMF_INTRA_PLANE) { /* H.264's 8x8 plane: the gradients of the two edges */
        int H = 0, V = 0;
        for (int i = 0; i < 4; i++) {
            H += (i + 1) * (e->T[4 + i] - top(e, 2 - i));
            V += (i + 1) * (e->L[4 + i] - lft(e, 2 - i));
        }
        const int b = (34 * H + 32) >> 6, c = (34 * V + 32) >> 6, a = 16 * (e->L[7] + e->T[7]);
        for (int y = 0; y < 8; y++)
            for (int x = 0; x < 8; x++)
                pred[y * stride + x] = (uint8_t)pnmf_residual_clip8((a + b * (x - 3) + c * (y - 3) + 16) >> 5);
        return;
    }
    for (int y = 0; y < 8; y++)
        for (int x = 0; x < 8; x++) pred[y * stride + x] = (uint8_t)angular(dir, e, x, y);
}

void pnmf_intra_predict(int dir, const uint8_t *D, int cols, int y0, int x0, uint8_t *pred, int stride)
{
    PnmfIntraEdge e;
    pnmf_intra_edge(D, cols, y0, x0, &e);
    pnmf_intra_predict_edge(dir, &e, pred, stride);
}

/* the directions of predictions 5, 6, 7, in the order of their index */
static const uint8_t family[3][PNMF_INTRA_FAMILY] = { { PNMF_INTRA_PLANAR, PNMF_INTRA_PLANE, 0 },
                                                      { PNMF_INTRA_VR, PNMF_INTRA_VL, PNMF_INTRA_DDL },
                                                      { PNMF_INTRA_HD, PNMF_INTRA_HU, PNMF_INTRA_DDR } };

int pnmf_intra_count(int mode)
{
    return mode == PNMF_RES_INTRA_DC ? 2 : mode == PNMF_RES_INTRA_V || mode == PNMF_RES_INTRA_H ? 3 : 0;
}

int pnmf_intra_dir(int mode, int k)
{
    return k >= 0 && k < pnmf_intra_count(mode) ? family[mode - PNMF_RES_INTRA_DC][k] : 0;
}

void pnmf_intra_family(int dir, int *mode, int *k)
{
    for (int f = 0; f < 3; f++)
        for (int i = 0; i < PNMF_INTRA_FAMILY; i++)
            if (family[f][i] == dir && dir) {
                *mode = PNMF_RES_INTRA_DC + f, *k = i;
                return;
            }
    *mode = 0, *k = 0;
}

int pnmf_intra_read(RcDec *d, RcLevCtx *c, int kind, int mode)
{
    const int f = mode - PNMF_RES_INTRA_DC;
    if (!rc_decode(d, &c->idir[kind & 1][f])) return PNMF_INTRA_NONE;
    const int hi = rc_decode(d, &c->idk[f][0]);
    const int k = 2 * hi + rc_decode(d, &c->idk[f][1 + hi]);
    const int dir = pnmf_intra_dir(mode, k);
    return dir ? dir : -1;
}

int pnmf_intra_used(const PnmfResidual *r, int from, int to)
{
    const size_t nb = (size_t)r->bx * r->by;
    if (!r->idir || from >= to) return 0;
    for (const uint8_t *t = r->idir + (size_t)from * nb, *e = r->idir + (size_t)to * nb; t < e; t++)
        if (*t) return 1;
    return 0;
}
