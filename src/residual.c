/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The residual layer (residual.h): reconstruction, shared by encoder and
 * decoder, and the encoder's rate-distortion choice of modes and levels. */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "residual.h"

int pnmf_residual_alloc(PnmfResidual *r, int m, int rows, int cols, int step16, int key_step16)
{
    memset(r, 0, sizeof(*r));
    r->step16 = step16;
    r->key_step16 = key_step16;
    r->m = m, r->rows = rows, r->cols = cols;
    r->bx = (cols + PNMF_RES_BLOCK - 1) / PNMF_RES_BLOCK;
    r->by = (rows + PNMF_RES_BLOCK - 1) / PNMF_RES_BLOCK;
    r->modes = pnmf_calloc((size_t)m * r->bx * r->by, 1);
    r->start = pnmf_calloc((size_t)m + 1, sizeof(size_t));
    if (!r->modes || !r->start) {
        pnmf_residual_free(r);
        return PNMF_ERR_NOMEM;
    }
    return 0;
}

void pnmf_residual_free(PnmfResidual *r)
{
    pnmf_free(r->modes);
    pnmf_free(r->lev);
    pnmf_free(r->start);
    memset(r, 0, sizeof(*r));
}

int pnmf_residual_step(int q)
{
    if (q < 0) q = 0;
    if (q > 48) q = 48;
    return (int)lrint(16.0 * pow(2.0, q / 8.0));
}

static inline int clip8(int v) { return v < 0 ? 0 : v > 255 ? 255 : v; }

static inline int dequant(int l, int step16)
{
    return (l * step16 + (l > 0 ? 8 : l < 0 ? -8 : 0)) / 16;
}

/* LOCO-I's median edge detector on the decoded frame D; 128 at the origin. */
static inline int spatial(const uint8_t *D, int cols, int y, int x)
{
    const size_t q = (size_t)y * cols + x;
    if (!y) return x ? D[q - 1] : 128;
    if (!x) return D[q - cols];
    const int a = D[q - 1], b = D[q - cols], c = D[q - cols - 1];
    const int mx = a > b ? a : b, mn = a < b ? a : b;
    return c >= mx ? mn : c <= mn ? mx : a + b - c;
}

static inline int predict(int mode, const uint8_t *P, const uint8_t *Pp, const uint8_t *Dp,
                          const uint8_t *D, int cols, int y, int x)
{
    const size_t q = (size_t)y * cols + x;
    switch (mode) {
    case PNMF_RES_MODEL: return P[q];
    case PNMF_RES_PREVIOUS: return Dp[q];
    case PNMF_RES_MOTION: return clip8(Dp[q] + P[q] - Pp[q]);
    default: return spatial(D, cols, y, x);
    }
}

void pnmf_residual_frame(const PnmfResidual *r, int j, const uint8_t *P, const uint8_t *Pp,
                         const uint8_t *Dp, uint8_t *D)
{
    const int16_t *lev = r->lev + r->start[j];
    const int step16 = j ? r->step16 : r->key_step16;
    const uint8_t *modes = r->modes + (size_t)j * r->bx * r->by;
    for (int b = 0; b < r->bx * r->by; b++) {
        const int y0 = b / r->bx * PNMF_RES_BLOCK, x0 = b % r->bx * PNMF_RES_BLOCK;
        const int y1 = y0 + PNMF_RES_BLOCK < r->rows ? y0 + PNMF_RES_BLOCK : r->rows;
        const int x1 = x0 + PNMF_RES_BLOCK < r->cols ? x0 + PNMF_RES_BLOCK : r->cols;
        const int mode = modes[b] & 3, coded = modes[b] & PNMF_RES_CODED;
        for (int y = y0; y < y1; y++)
            for (int x = x0; x < x1; x++) {
                int v = predict(mode, P, Pp, Dp, D, r->cols, y, x);
                if (coded) v = clip8(v + dequant(*lev++, step16));
                D[(size_t)y * r->cols + x] = (uint8_t)v;
            }
    }
}

/* ---- encoder ------------------------------------------------------------ */

/* Estimated bits of a level once zstd has seen the layer: zeros are cheap
 * in runs, larger magnitudes cost about two bits per doubling. Measured
 * on the development set (samples/devset), not derived. */
static inline double level_bits(int l)
{
    if (!l) return 0.6;
    const int a = l < 0 ? -l : l;
    return 4.0 + 2.0 * log2((double)a);
}
#define MODE_BITS_SKIP  1.0
#define MODE_BITS_CODED 3.0

/* Level for difference d (in gray levels) minimizing error^2 + lambda * bits,
 * among the rounded level, one step toward zero, and zero. */
static inline int choose_level(int d, int pred, int step16, double lambda)
{
    const int a = d < 0 ? -d : d;
    int l0 = (a * 16 + step16 / 2) / step16;
    int best = 0;
    double bj = 1e300;
    for (int c = 0; c < 3; c++) {
        const int l = c == 0 ? l0 : c == 1 ? l0 - 1 : 0;
        if (l < 0 || (c == 2 && (l0 == 0 || l0 == 1))) continue;
        const int sl = d < 0 ? -l : l;
        const int e = d + pred - clip8(pred + dequant(sl, step16));
        const double jj = (double)e * e + lambda * level_bits(l);
        if (jj < bj) bj = jj, best = sl;
    }
    return best;
}

/* Run one (mode, coded) choice over a block, writing D and, when levs is
 * not NULL, the levels; returns squared error + lambda * bits. */
static double try_block(int mode, int coded, int step16, double lambda, const uint8_t *src,
                        const uint8_t *P, const uint8_t *Pp, const uint8_t *Dp, uint8_t *D,
                        int cols, int y0, int y1, int x0, int x1, int16_t *levs)
{
    double sse = 0, bits = coded ? MODE_BITS_CODED : MODE_BITS_SKIP;
    int nz = 0;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) {
            const size_t q = (size_t)y * cols + x;
            const int pred = predict(mode, P, Pp, Dp, D, cols, y, x);
            int v = pred;
            if (coded) {
                const int l = choose_level((int)src[q] - pred, pred, step16, lambda);
                bits += level_bits(l);
                nz |= l;
                v = clip8(pred + dequant(l, step16));
                if (levs) *levs++ = (int16_t)l;
            }
            D[q] = (uint8_t)v;
            const int e = (int)src[q] - v;
            sse += (double)e * e;
        }
    if (coded && !nz) return 1e300; /* the skip block is the same and cheaper */
    return sse + lambda * bits;
}

int pnmf_residual_encode_frame(PnmfResidual *r, int j, const uint8_t *src, const uint8_t *P,
                               const uint8_t *Pp, const uint8_t *Dp, uint8_t *D, double lambda)
{
    const size_t nb = (size_t)r->bx * r->by;
    uint8_t *modes = r->modes + (size_t)j * nb;
    const int step16 = j ? r->step16 : r->key_step16;
    r->start[j] = r->nlev;
    for (size_t b = 0; b < nb; b++) {
        const int y0 = (int)(b / r->bx) * PNMF_RES_BLOCK, x0 = (int)(b % r->bx) * PNMF_RES_BLOCK;
        const int y1 = y0 + PNMF_RES_BLOCK < r->rows ? y0 + PNMF_RES_BLOCK : r->rows;
        const int x1 = x0 + PNMF_RES_BLOCK < r->cols ? x0 + PNMF_RES_BLOCK : r->cols;
        int best = PNMF_RES_MODEL;
        double bj = 1e300;
        for (int mode = 0; mode < 4; mode++) {
            if (j == 0 && (mode == PNMF_RES_PREVIOUS || mode == PNMF_RES_MOTION)) continue;
            for (int coded = 0; coded < 2; coded++) {
                const double jj = try_block(mode, coded, step16, lambda, src, P, Pp, Dp, D,
                                            r->cols, y0, y1, x0, x1, NULL);
                if (jj < bj) bj = jj, best = mode | (coded ? PNMF_RES_CODED : 0);
            }
        }
        modes[b] = (uint8_t)best;
        const size_t area = (size_t)(y1 - y0) * (x1 - x0);
        int16_t *levs = NULL;
        if (best & PNMF_RES_CODED) {
            if (r->cap - r->nlev < area) {
                size_t cap = r->cap ? 2 * r->cap : 65536;
                int16_t *p = pnmf_realloc(r->lev, cap * sizeof(int16_t));
                if (!p) return PNMF_ERR_NOMEM;
                r->lev = p, r->cap = cap;
            }
            levs = r->lev + r->nlev;
            r->nlev += area;
        }
        try_block(best & 3, best & PNMF_RES_CODED, step16, lambda, src, P, Pp, Dp, D, r->cols,
                  y0, y1, x0, x1, levs);
    }
    r->start[j + 1] = r->nlev;
    return 0;
}
