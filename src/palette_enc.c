/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Palette blocks (palette.h): the writer's decisions, which the encoder
 * also prices, and the encoder's choice of a block's palette. */
#include "palette.h"
#include "palette_enc.h"
#include "rangecoder_enc.h"
#include "tuning.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* pnmf_pal_code(), a price that stops (returning 1) after a row of
 * indices where base + lambda * the bits so far reaches best: that price
 * cannot come out under best, as the bits only grow (the same sum and
 * product as the caller's test of the whole price). */
static int pal_code_upto(RcBin *o, PnmfPalCtx *c, const PnmfPalBlock *left, const PnmfPalBlock *above, int h, int w,
                         const PnmfPalBlock *p, double base, double lambda, double best)
{
    const int n = p->n;
    if (n < 1 || n > PNMF_PAL_MAX) return -1;
    for (int i = 1; i < n; i++)
        if (p->col[i] <= p->col[i - 1]) return -1;
    for (int i = 2, node = 1; i >= 0; i--) {
        const int bit = ((n - 1) >> i) & 1;
        rc_bin(o, &c->size[node], bit);
        node = 2 * node + bit;
    }
    uint8_t k[PNMF_PAL_CACHE], cls[PNMF_PAL_CACHE], inpal[PNMF_PAL_MAX] = { 0 };
    const int nk = pnmf_pal_cache(left, above, k, cls);
    int got = 0;
    for (int i = 0; i < nk && got < n; i++) {
        int u = 0;
        for (int q = 0; q < n; q++)
            if (p->col[q] == k[i]) u = 1, inpal[q] = 1;
        rc_bin(o, &c->use[cls[i]], u);
        got += u;
    }
    int prev = -1;
    for (int q = 0; q < n; q++) {
        if (inpal[q]) continue;
        if (prev < 0)
            for (int b = 7; b >= 0; b--) rc_bin_direct(o, (p->col[q] >> b) & 1);
        else
            rc_bin_eg(o, (unsigned)(p->col[q] - prev));
        prev = p->col[q];
    }
    if (n == 1) return 0;
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            int C[2], e;
            const int nc = pnmf_pal_cands(p, y, x, C, &e), v = p->idx[y * 8 + x];
            if (v >= n) return -1;
            if (nc && rc_bin(o, &c->hit[e], v == C[0])) continue;
            if (nc == 2 && n == 2) continue;
            if (nc == 2 && rc_bin(o, &c->hit2, v == C[1])) continue;
            const int m = n - nc;
            if (m <= 1) continue;
            int r = 0;
            for (int q = 0; q < v; q++) r += !(nc > 0 && q == C[0]) && !(nc > 1 && q == C[1]);
            const int nbits = pnmf_pal_rank_bits(m);
            RcProb *t = c->rem[m - 2];
            for (int i = nbits - 1, nd = 1; i >= 0; i--) {
                const int bit = (r >> i) & 1;
                rc_bin(o, &t[nd], bit);
                nd = 2 * nd + bit;
            }
        }
        if (!o->enc && base + lambda * o->bits >= best) return 1;
    }
    return 0;
}

int pnmf_pal_code(RcBin *o, PnmfPalCtx *c, const PnmfPalBlock *left, const PnmfPalBlock *above, int h, int w,
                  const PnmfPalBlock *p)
{
    return pal_code_upto(o, c, left, above, h, w, p, 0, 0, INFINITY);
}

/* The palette block of colours col[0..n) (ascending) for the samples:
 * each sample the nearest colour; its squared error. */
static long pal_fit(const uint8_t *src, size_t cols, int h, int w, PnmfPalBlock *p)
{
    uint8_t near[256];
    for (int v = 0, q = 0; v < 256; v++) {
        while (q + 1 < p->n && abs(p->col[q + 1] - v) < abs(p->col[q] - v)) q++;
        near[v] = (uint8_t)q;
    }
    long sse = 0;
    memset(p->idx, 0, sizeof(p->idx));
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const int s = src[(size_t)y * cols + x], q = near[s], e = s - p->col[q];
            p->idx[y * 8 + x] = (uint8_t)q;
            sse += e * e;
        }
    return sse;
}

double pnmf_pal_search(const uint8_t *src, size_t cols, int h, int w, const PnmfPalBlock *left,
                       const PnmfPalBlock *above, const PnmfPalCtx *c, double lambda, double bound, PnmfPalBlock *p,
                       double *bits)
{
    int cnt[256] = { 0 };
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) cnt[src[(size_t)y * cols + x]]++;
    /* clusters of neighbouring gray levels: value range, count, sum, sum of squares */
    int lo[PNMF_PAL_SEARCH_MAX], hi[PNMF_PAL_SEARCH_MAX];
    long n_[PNMF_PAL_SEARCH_MAX], s1[PNMF_PAL_SEARCH_MAX], s2[PNMF_PAL_SEARCH_MAX];
    int nc = 0;
    for (int v = 0; v < 256; v++) {
        if (!cnt[v]) continue;
        if (nc == PNMF_PAL_SEARCH_MAX) return 1e300;
        lo[nc] = hi[nc] = v, n_[nc] = cnt[v], s1[nc] = (long)cnt[v] * v, s2[nc] = (long)cnt[v] * v * v;
        nc++;
    }
    uint8_t k[PNMF_PAL_CACHE], cls[PNMF_PAL_CACHE];
    const int nk = pnmf_pal_cache(left, above, k, cls);
    double best = bound; /* a palette must cost less: below it once one is kept */
    PnmfPalBlock t;
    while (nc >= 1) {
        if (nc <= PNMF_PAL_MAX) {
            /* each cluster's colour: its rounded mean, or a neighbour's
             * colour within its range when that costs less error than a
             * new colour's bits */
            t.n = (uint8_t)nc;
            int ok = 1;
            for (int i = 0; i < nc; i++) {
                int m = (int)((2 * s1[i] + n_[i]) / (2 * n_[i]));
                for (int q = 0; q < nk; q++) {
                    if (k[q] < lo[i] || k[q] > hi[i]) continue;
                    const long dm = n_[i] * (long)(k[q] - m) * (k[q] - m);
                    if ((double)dm < lambda * 6) m = k[q];
                }
                t.col[i] = (uint8_t)m;
                if (i && t.col[i] <= t.col[i - 1]) ok = 0;
            }
            if (ok) {
                const long sse = pal_fit(src, cols, h, w, &t);
                if ((double)sse < best) {
                    PnmfPalCtx cc = *c;
                    RcBin o = { .enc = NULL, .bits = 0, .update = 1 };
                    if (pal_code_upto(&o, &cc, left, above, h, w, &t, (double)sse, lambda, best) == 0) {
                        const double j = (double)sse + lambda * o.bits;
                        if (j < best) best = j, *p = t, *bits = o.bits;
                    }
                }
            }
        }
        if (nc == 1) break;
        /* merge the two neighbouring clusters whose union adds the least error */
        int bi = 0;
        double bd = 1e300;
        for (int i = 0; i + 1 < nc; i++) {
            const double a = (double)s2[i] - (double)s1[i] * s1[i] / n_[i];
            const double b = (double)s2[i + 1] - (double)s1[i + 1] * s1[i + 1] / n_[i + 1];
            const long nn = n_[i] + n_[i + 1], ss = s1[i] + s1[i + 1];
            const double u = (double)(s2[i] + s2[i + 1]) - (double)ss * ss / nn;
            if (u - a - b < bd) bd = u - a - b, bi = i;
        }
        hi[bi] = hi[bi + 1], n_[bi] += n_[bi + 1], s1[bi] += s1[bi + 1], s2[bi] += s2[bi + 1];
        for (int i = bi + 1; i + 1 < nc; i++)
            lo[i] = lo[i + 1], hi[i] = hi[i + 1], n_[i] = n_[i + 1], s1[i] = s1[i + 1], s2[i] = s2[i + 1];
        nc--;
    }
    return best < bound ? best : 1e300;
}

int pnmf_pal_screen_like(const uint8_t *src, int rows, int cols)
{
    long few = 0, all = 0;
    for (int y0 = 0; y0 + 8 <= rows; y0 += 8)
        for (int x0 = 0; x0 + 8 <= cols; x0 += 8) {
            uint32_t seen[8] = { 0 };
            int n = 0;
            for (int y = 0; y < 8 && n <= PNMF_PAL_MAX; y++)
                for (int x = 0; x < 8; x++) {
                    const int v = src[(size_t)(y0 + y) * cols + x0 + x];
                    if (!(seen[v >> 5] >> (v & 31) & 1)) seen[v >> 5] |= 1u << (v & 31), n++;
                }
            few += n <= PNMF_PAL_MAX, all++;
        }
    return all && (double)few >= PNMF_PAL_SCREEN_SHARE * (double)all;
}
