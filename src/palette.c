/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Palette blocks (palette.h): the reader's side, the cache both sides use. */
#include "palette.h"

int pnmf_pal_cache(const PnmfPalBlock *left, const PnmfPalBlock *above, uint8_t *k, uint8_t *cls)
{
    int n = 0, i = 0, j = 0;
    const int nl = left ? left->n : 0, na = above ? above->n : 0;
    /* both palettes are ascending: merge them */
    while (i < nl || j < na) {
        if (j >= na || (i < nl && left->col[i] < above->col[j])) k[n] = left->col[i++], cls[n++] = 0;
        else if (i >= nl || above->col[j] < left->col[i]) k[n] = above->col[j++], cls[n++] = 1;
        else k[n] = left->col[i++], cls[n++] = 2, j++;
    }
    return n;
}

/* An Exp-Golomb number x >= 1 of direct decisions: n ones, a zero, n bits;
 * -1 when n is over 8 */
static int read_eg(RcDec *d)
{
    int n = 0;
    while (rc_decode_direct(d))
        if (++n > 8) return -1;
    int x = 1;
    for (int i = 0; i < n; i++) x = 2 * x + rc_decode_direct(d);
    return x;
}

int pnmf_pal_read(RcDec *d, PnmfPalCtx *c, const PnmfPalBlock *left, const PnmfPalBlock *above, int h, int w,
                  PnmfPalBlock *p)
{
    int node = 1;
    for (int i = 0; i < 3; i++) node = 2 * node + rc_decode(d, &c->size[node]);
    const int n = node - 8 + 1;
    uint8_t k[PNMF_PAL_CACHE], cls[PNMF_PAL_CACHE];
    const int nk = pnmf_pal_cache(left, above, k, cls);
    uint8_t used[PNMF_PAL_CACHE] = { 0 };
    int got = 0;
    for (int i = 0; i < nk && got < n; i++)
        if (rc_decode(d, &c->use[cls[i]])) used[i] = 1, got++;
    /* the new colours, ascending, none a colour of the cache */
    uint8_t fresh[PNMF_PAL_MAX];
    int prev = -1;
    for (int i = 0; got + i < n; i++) {
        int v;
        if (prev < 0) {
            v = 0;
            for (int b = 0; b < 8; b++) v = 2 * v + rc_decode_direct(d);
        } else {
            const int x = read_eg(d);
            if (x < 0) return -1;
            v = prev + x; /* prev + 1 + (x - 1) */
        }
        if (v > 255) return -1;
        for (int q = 0; q < nk; q++)
            if (k[q] == v) return -1;
        fresh[i] = (uint8_t)v, prev = v;
    }
    /* the palette: reused and new colours merged, ascending */
    int a = 0, b = 0, nf = n - got;
    p->n = (uint8_t)n;
    for (int i = 0; i < n; i++) {
        while (a < nk && !used[a]) a++;
        if (b >= nf || (a < nk && k[a] < fresh[b])) p->col[i] = k[a++];
        else p->col[i] = fresh[b++];
    }
    memset(p->idx, 0, sizeof(p->idx));
    if (n == 1) return 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int C[2], e;
            const int nc = pnmf_pal_cands(p, y, x, C, &e);
            int v = -1;
            if (nc && rc_decode(d, &c->hit[e])) v = C[0];
            else if (nc == 2 && n == 2) v = C[1];
            else if (nc == 2 && rc_decode(d, &c->hit2)) v = C[1];
            if (v < 0) { /* the rank among the indices not a candidate */
                const int m = n - nc;
                int r = 0;
                if (m > 1) {
                    const int nbits = pnmf_pal_rank_bits(m);
                    RcProb *t = c->rem[m - 2];
                    int nd = 1;
                    for (int i = 0; i < nbits; i++) nd = 2 * nd + rc_decode(d, &t[nd]);
                    r = nd - (1 << nbits);
                    if (r >= m) return -1;
                }
                for (v = 0;; v++)
                    if (!(nc > 0 && v == C[0]) && !(nc > 1 && v == C[1]) && r-- == 0) break;
            }
            p->idx[y * 8 + x] = (uint8_t)v;
        }
    return 0;
}
