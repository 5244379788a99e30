/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The sample-context levels stream (lossless.h): the decoder's side; the
 * writer's is lossless_enc.c. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lossless.h"
#include "residual.h"

/* ---- the decoder ---------------------------------------------------------- */

PnmfLx *pnmf_lx_new(const uint8_t *p, size_t len, int from, int m, int rows, int cols, int version, int lossy,
                    int maxlev)
{
    PnmfLx *s = pnmf_calloc(1, sizeof(*s));
    if (!s) return NULL;
    s->stream = pnmf_malloc_array(len ? len : 1, 1);
    s->e = pnmf_calloc((size_t)rows * cols, sizeof(int16_t));
    s->ep = pnmf_calloc((size_t)rows * cols, sizeof(int16_t));
    const size_t nb = (size_t)((rows + PNMF_RES_BLOCK - 1) / PNMF_RES_BLOCK) * ((cols + PNMF_RES_BLOCK - 1) / PNMF_RES_BLOCK);
    s->bl = pnmf_malloc_array(nb ? nb : 1, sizeof(uint64_t));
    s->blp = pnmf_malloc_array(nb ? nb : 1, sizeof(uint64_t));
    if (!s->stream || !s->e || !s->ep || !s->bl || !s->blp) {
        pnmf_lx_free(s);
        return NULL;
    }
    if (len) memcpy(s->stream, p, len);
    s->len = len, s->from = from, s->m = m, s->rows = rows, s->cols = cols, s->version = version;
    s->lossy = lossy, s->maxlev = lossy ? maxlev : 255;
    return s;
}

void pnmf_lx_free(PnmfLx *s)
{
    if (!s) return;
    pnmf_free(s->stream);
    pnmf_free(s->e);
    pnmf_free(s->ep);
    pnmf_free(s->bl);
    pnmf_free(s->blp);
    pnmf_free(s);
}

void pnmf_lx_frame_start(PnmfLx *s, int j)
{
    if (j < s->from) return;
    const size_t n = (size_t)s->rows * s->cols;
    if (j == s->from) { /* the stream starts; no frame before it has levels here */
        rc_probs_init(&s->c.zero[0], sizeof(s->c) / sizeof(RcProb));
        rc_dec_init(&s->d, s->stream, s->len, s->version);
        s->err = 0;
        memset(s->e, 0, n * sizeof(int16_t));
        memset(s->ep, 0, n * sizeof(int16_t));
        s->nbl = s->nblp = 0;
    }
    int16_t *t = s->ep;
    s->ep = s->e, s->e = t;
    uint64_t *tb = s->blp;
    s->blp = s->bl, s->bl = tb;
    const size_t tn = s->nblp;
    s->nblp = s->nbl, s->nbl = tn;
    /* e held frame j - 2's levels: cleared where that frame wrote them */
    for (size_t i = 0; i < s->nbl; i++) {
        const uint64_t r = s->bl[i];
        const int y0 = (int)(r & 0xFFFF), y1 = (int)(r >> 16 & 0xFFFF), x0 = (int)(r >> 32 & 0xFFFF);
        const int x1 = (int)(r >> 48);
        for (int y = y0; y < y1; y++) memset(s->e + (size_t)y * s->cols + x0, 0, (size_t)(x1 - x0) * sizeof(int16_t));
    }
    s->nbl = 0;
}

void pnmf_lx_frame_end(PnmfLx *s, int j)
{
    if (j == s->m - 1 && !s->err && !rc_dec_exact(&s->d, s->stream)) s->err = -2;
}

static int lx_decode(PnmfLx *s, const LxSample *o, int p)
{
    RcDec *d = &s->d;
    PnmfLxCtx *c = &s->c;
    if (!rc_decode(d, &c->zero[o->set])) return 0;
    for (int i = 0; i < o->ncand; i++)
        if (rc_decode(d, &c->cand[o->kind][o->cls][o->idx[i]])) return o->cand[i] - p;
    const int neg = rc_decode(d, &c->sign[o->set][o->sc]);
    int a = 1;
    if (rc_decode(d, &c->gt1[o->set])) {
        const int r = rc_decode_lev_rem(d, c->mag[o->set], 1);
        if (r < 0 || r + 2 > s->maxlev) {
            s->err = -1;
            return 0;
        }
        a = r + 2;
    }
    return neg ? -a : a;
}

/* The activity class of |prediction - median| times 2 (its place in a set), t <= 255. */
static const uint8_t lx_act2[256] = {
    0, 2, 2, 4, 4, 4, 4, 4, 4, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6,
    6, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8,
    8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8,
    8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8,
    8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8,
    8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8,
    8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8,
    8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8,
};

/* The class part of a lossy sample's set, rc_lev_class(s) * LX_ACTS * 2,
 * by the class sum s capped at 9 in each of its two terms (the classes
 * do not tell sums from 9 on apart). */
#define LXQ_SUM_CAP 9
#define LXQ_C(k) ((k) * LX_ACTS * 2)
static const uint8_t lxq_cls[2 * LXQ_SUM_CAP + 1] = {
    LXQ_C(0), LXQ_C(1), LXQ_C(2), LXQ_C(3), LXQ_C(3), LXQ_C(4), LXQ_C(4), LXQ_C(4), LXQ_C(4), LXQ_C(5),
    LXQ_C(5), LXQ_C(5), LXQ_C(5), LXQ_C(5), LXQ_C(5), LXQ_C(5), LXQ_C(5), LXQ_C(5), LXQ_C(5),
};

/* One level of a lossy window (window flags bit 24) under set, the sign's
 * context by sn (the left and above levels' sum); 0 after an error. */
static inline int lxq_level(PnmfLxCtx *c, RcDec *d, int set, int sn, int maxr, int *err)
{
    if (*err || !rc_decode(d, &c->zero[set])) return 0;
    const int neg = rc_decode(d, &c->sign[set][sn < 0 ? 0 : sn == 0 ? 1 : 2]);
    int a = 1;
    if (rc_decode(d, &c->gt1[set])) {
        const int r = rc_decode_lev_rem(d, c->mag[set], 1);
        if (r < 0 || r > maxr) {
            *err = -1;
            return 0;
        }
        a = r + 2;
    }
    return neg ? -a : a;
}

/* One sample of lxq_block() whose neighbours' levels are la, lb, lc, ld
 * and whose prediction p and median med, g its gradient bit: its level
 * decoded, the sample and the level written to *out, *e and **lev.
 * Returns the level. */
static inline int lxq_sample(PnmfLxCtx *c, RcDec *d, int kbase, int la, int lb, int lc, int ld, int p, int med, int g,
                             int maxr, int *err, const int16_t *dq, uint8_t *out, int16_t *e, int16_t **lev)
{
    const int set =
        (kbase + rc_lev_class(abs(la) + abs(lb) + (abs(lc) + abs(ld)) / 2)) * LX_ACTS * 2 + lx_act2[abs(p - med)] + g;
    const int l = lxq_level(c, d, set, la + lb, maxr, err);
    *out = (uint8_t)pnmf_residual_clip8(p + dq[l]);
    *e = (int16_t)l;
    *(*lev)++ = (int16_t)l;
    return l;
}

/* lxq_block() for a whole 8x8 block inside the frame (a row above it, a
 * column left and right of it): its samples and levels decoded in local
 * rows (its row above and left column copied in), then stored to the
 * frame and the level map, so that the chain of decisions works on one
 * small set of arrays rather than on two rows each of the frame and the
 * level map. The same decisions in the same order as lxq_block() makes
 * for such a block. */
enum { LXQ_W = 16 }; /* a local row: the column left, 8 samples, the column right */
/* the kind's part of a set plus the gradient bit fits the byte lxq_inner() keeps it in */
typedef char lxq_gb_fits[(RC_LEV_KINDS - 1) * RC_LEV_CLASSES * LX_ACTS * 2 + 1 <= UINT8_MAX ? 1 : -1];
static void lxq_inner(PnmfLx *s, int kind, const uint8_t *pred, uint8_t *D, int y0, int x0, int16_t *lev,
                      const int16_t *dq)
{
    enum { N = PNMF_RES_BLOCK };
    const int cols = s->cols, maxr = s->maxlev - 2;
    RcDec d = s->d;
    PnmfLxCtx *c = &s->c;
    int err = s->err;
    const int kbase2 = kind * RC_LEV_CLASSES * LX_ACTS * 2;
    uint8_t S[N + 1][LXQ_W];
    int16_t E[N + 1][LXQ_W];
    uint8_t gb[N][N]; /* each sample's gradient bit plus the kind's part of its set */
    const uint8_t *up = D + (size_t)(y0 - 1) * cols + x0 - 1;
    const int16_t *eu = s->e + (size_t)(y0 - 1) * cols + x0 - 1;
    for (int i = 0; i < N + 2; i++) S[0][i] = up[i], E[0][i] = eu[i];
    for (int r = 1; r <= N; r++) {
        S[r][0] = up[(size_t)r * cols], E[r][0] = eu[(size_t)r * cols];
        E[r][N + 1] = eu[(size_t)r * cols + N + 1];
        for (int i = 0; i < N; i++) gb[r - 1][i] = (uint8_t)(kbase2 + pnmf_lxq_grad(pred, r - 1, i, N, N));
    }
    for (int r = 1; r <= N; r++) {
        /* the row above's part of each sample's class sum, ahead of the chain */
        uint8_t ua[N];
        for (int i = 1; i <= N; i++) {
            const int u = abs(E[r - 1][i]) + (abs(E[r - 1][i - 1]) + abs(E[r - 1][i + 1])) / 2;
            ua[i - 1] = (uint8_t)(u < LXQ_SUM_CAP ? u : LXQ_SUM_CAP);
        }
        const uint8_t *pr = pred ? pred + (r - 1) * N : NULL;
        int la = E[r][0];
        for (int i = 1; i <= N; i++) {
            const int med = pnmf_lx_med(S[r][i - 1], S[r - 1][i], S[r - 1][i - 1]);
            const int p = pr ? pr[i - 1] : med;
            const int al = abs(la) < LXQ_SUM_CAP ? abs(la) : LXQ_SUM_CAP;
            const int set = gb[r - 1][i - 1] + lxq_cls[al + ua[i - 1]] + lx_act2[abs(p - med)];
            const int l = lxq_level(c, &d, set, la + E[r - 1][i], maxr, &err);
            S[r][i] = (uint8_t)pnmf_residual_clip8(p + dq[l]);
            E[r][i] = (int16_t)l;
            *lev++ = (int16_t)l;
            la = l;
        }
    }
    for (int r = 1; r <= N; r++) {
        memcpy(D + (size_t)(y0 + r - 1) * cols + x0, &S[r][1], N);
        memcpy(s->e + (size_t)(y0 + r - 1) * cols + x0, &E[r][1], N * sizeof(int16_t));
    }
    if (d.over && !err) err = -2;
    s->err = err;
    s->d = d;
}

/* pnmf_lx_block() at a lossy step (window flags bit 24): the contexts of
 * pnmf_lx_sample() without the candidates (nor the sample above-right,
 * which only they read), the set's last bit the prediction's gradient
 * (pnmf_lxq_grad()) instead of the frame before's level, the decoder's
 * state in a local copy; every sample by the edges' rules (the blocks at
 * the frame's edges and those it clips: lxq_inner() takes the others). */
static void lxq_block(PnmfLx *s, int kind, const uint8_t *pred, uint8_t *D, int y0, int y1, int x0, int x1,
                      int16_t *lev, const int16_t *dq)
{
    const int cols = s->cols, maxr = s->maxlev - 2, h = y1 - y0, w = x1 - x0;
    RcDec d = s->d;
    PnmfLxCtx *c = &s->c;
    int err = s->err;
    const int kbase = kind * RC_LEV_CLASSES;
    /* the gradient bits of the block's samples, ahead of the levels they
     * do not depend on */
    uint8_t gm[PNMF_RES_BLOCK * PNMF_RES_BLOCK];
    for (int by = 0; by < h; by++)
        for (int bx = 0; bx < w; bx++) gm[by * PNMF_RES_BLOCK + bx] = (uint8_t)pnmf_lxq_grad(pred, by, bx, h, w);
    for (int y = y0; y < y1; y++) {
        uint8_t *row = D + (size_t)y * cols;
        const uint8_t *up = row - cols;
        int16_t *er = s->e + (size_t)y * cols;
        const int16_t *eu = er - cols;
        const uint8_t *pr = pred ? pred + (y - y0) * PNMF_RES_BLOCK - x0 : NULL;
        const uint8_t *g = gm + (y - y0) * PNMF_RES_BLOCK - x0;
        for (int x = x0; x < x1; x++) {
            int n0, n1, n2, la, lb, lc, ld;
            if (y) {
                n1 = up[x], lb = eu[x], ld = x + 1 < cols ? eu[x + 1] : 0;
                if (x) n0 = row[x - 1], n2 = up[x - 1], la = er[x - 1], lc = eu[x - 1];
                else n0 = n2 = n1, la = lc = 0;
            } else {
                n0 = n1 = n2 = x ? row[x - 1] : 128;
                la = x ? er[x - 1] : 0, lb = lc = ld = 0;
            }
            /* the spatial prediction (pred NULL) is the median of the same three */
            const int med = pnmf_lx_med(n0, n1, n2);
            const int p = pr ? pr[x] : !y ? n0 : !x ? n1 : med;
            lxq_sample(c, &d, kbase, la, lb, lc, ld, p, med, g[x], maxr, &err, dq, row + x, er + x, &lev);
        }
    }
    if (d.over && !err) err = -2;
    s->err = err;
    s->d = d;
}

void pnmf_lx_block(PnmfLx *s, int j, int mode, const uint8_t *pred, uint8_t *D, int y0, int y1, int x0, int x1,
                   int16_t *lev, const int16_t *dq)
{
    const int cols = s->cols, kind = rc_lev_kind(j, mode);
    s->bl[s->nbl++] = (uint64_t)y0 | (uint64_t)y1 << 16 | (uint64_t)x0 << 32 | (uint64_t)x1 << 48;
    if (s->lossy) {
        if (y0 > 0 && x0 > 0 && y1 - y0 == PNMF_RES_BLOCK && x1 - x0 == PNMF_RES_BLOCK && x1 < cols)
            lxq_inner(s, kind, pred, D, y0, x0, lev, dq);
        else
            lxq_block(s, kind, pred, D, y0, y1, x0, x1, lev, dq);
        return;
    }
    for (int y = y0; y < y1; y++) {
        uint8_t *row = D + (size_t)y * cols;
        for (int x = x0; x < x1; x++) {
            int p;
            if (pred) p = pred[(y - y0) * PNMF_RES_BLOCK + x - x0];
            else if (!y) p = x ? row[x - 1] : 128;
            else if (!x) p = row[-cols];
            else p = pnmf_lx_med(row[x - 1], row[x - cols], row[x - cols - 1]);
            int l = 0;
            if (!s->err) {
                LxSample o;
                pnmf_lx_sample(s, s->e, s->ep, D, y, x, y0, x1, p, kind, &o);
                l = lx_decode(s, &o, p);
                if (s->d.over && !s->err) s->err = -2;
            }
            row[x] = (uint8_t)pnmf_residual_clip8(p + (dq ? dq[l] : l));
            s->e[(size_t)y * cols + x] = (int16_t)l;
            *lev++ = (int16_t)l;
        }
    }
}

