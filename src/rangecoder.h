/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A binary adaptive range coder, and the residual layer's modes and
 * vectors coded with it (format 4; docs/format.md, "Range-coded streams").
 *
 * The coder keeps a 32-bit range and codes one binary decision at a time
 * with an adaptive probability: an 11-bit estimate p of the decision being
 * 0, which moves 1/16 of the way toward each decision coded. Bytes leave
 * the encoder's 64-bit low end through a one-byte cache and a count of
 * pending 0xFF bytes, so that a carry can still reach them (the scheme of
 * G. N. N. Martin's range coder as LZMA uses it). A stream of N
 * renormalizations is N + 5 bytes, the first 0; the decoder reads exactly
 * that many, which lets a reader refuse a stream that is cut short or has
 * bytes left over.
 */
#ifndef PNMF_RANGECODER_H
#define PNMF_RANGECODER_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "varint.h"

#define RC_PROB_BITS 11
#define RC_PROB_ONE  (1u << RC_PROB_BITS)
#define RC_ADAPT     4
#define RC_TOP       (1u << 24)

typedef uint16_t RcProb;

static inline void rc_probs_init(RcProb *p, size_t n)
{
    for (size_t i = 0; i < n; i++) p[i] = RC_PROB_ONE / 2;
}

typedef struct RcEnc {
    uint64_t low;
    uint32_t range;
    uint8_t cache;
    uint64_t pending; /* bytes owed: the cache and the 0xFF bytes after it */
    Buf *out;
} RcEnc;

static inline void rc_enc_init(RcEnc *e, Buf *out)
{
    e->low = 0, e->range = 0xFFFFFFFFu, e->cache = 0, e->pending = 1, e->out = out;
}

static inline void rc_shift_low(RcEnc *e)
{
    if ((uint32_t)e->low < 0xFF000000u || (e->low >> 32)) {
        const uint8_t carry = (uint8_t)(e->low >> 32);
        uint8_t v = e->cache;
        for (; e->pending; e->pending--, v = 0xFF) put_byte(e->out, (uint8_t)(v + carry));
        e->cache = (uint8_t)(e->low >> 24);
    }
    e->pending++;
    e->low = (e->low & 0x00FFFFFFu) << 8;
}

static inline void rc_encode(RcEnc *e, RcProb *p, int bit)
{
    const uint32_t bound = (e->range >> RC_PROB_BITS) * *p;
    if (!bit) {
        e->range = bound;
        *p += (RcProb)((RC_PROB_ONE - *p) >> RC_ADAPT);
    } else {
        e->low += bound;
        e->range -= bound;
        *p -= (RcProb)(*p >> RC_ADAPT);
    }
    while (e->range < RC_TOP) e->range <<= 8, rc_shift_low(e);
}

/* A decision of probability 1/2, not adapted. */
static inline void rc_encode_direct(RcEnc *e, int bit)
{
    e->range >>= 1;
    if (bit) e->low += e->range;
    while (e->range < RC_TOP) e->range <<= 8, rc_shift_low(e);
}

static inline void rc_enc_finish(RcEnc *e)
{
    for (int i = 0; i < 5; i++) rc_shift_low(e);
}

typedef struct RcDec {
    const uint8_t *p, *end;
    uint32_t range, code;
    int over; /* bytes read past the end (as 0) */
} RcDec;

static inline uint8_t rc_next(RcDec *d)
{
    if (d->p < d->end) return *d->p++;
    d->over = 1;
    return 0;
}

static inline void rc_dec_init(RcDec *d, const uint8_t *p, size_t n)
{
    d->p = p, d->end = p + n, d->range = 0xFFFFFFFFu, d->code = 0, d->over = 0;
    for (int i = 0; i < 5; i++) d->code = (d->code << 8) | rc_next(d);
}

static inline int rc_decode(RcDec *d, RcProb *p)
{
    const uint32_t bound = (d->range >> RC_PROB_BITS) * *p;
    int bit;
    if (d->code < bound) {
        d->range = bound;
        *p += (RcProb)((RC_PROB_ONE - *p) >> RC_ADAPT);
        bit = 0;
    } else {
        d->code -= bound;
        d->range -= bound;
        *p -= (RcProb)(*p >> RC_ADAPT);
        bit = 1;
    }
    while (d->range < RC_TOP) d->range <<= 8, d->code = (d->code << 8) | rc_next(d);
    return bit;
}

static inline int rc_decode_direct(RcDec *d)
{
    d->range >>= 1;
    int bit = 0;
    if (d->code >= d->range) d->code -= d->range, bit = 1;
    while (d->range < RC_TOP) d->range <<= 8, d->code = (d->code << 8) | rc_next(d);
    return bit;
}

/* The stream was read whole and no further: a first byte of 0 (what
 * every encoder writes; with any other the code can exceed the range),
 * no byte read past the end, none left over. */
static inline int rc_dec_exact(const RcDec *d, const uint8_t *start)
{
    return !d->over && d->p == d->end && d->end - start >= 5 && start[0] == 0;
}

/* ---- the residual layer's modes and vectors ------------------------------ */

/* Contexts of the modes stream: for block b of frame j, L, A, P are the
 * modes of the block to its left, above it, and at its place in frame
 * j - 1 (-1 where there is none). */
typedef struct RcModeCtx {
    RcProb left[32][2][2];  /* mode == L?  by L, L == A, L == P */
    RcProb above[32][2];    /* mode == A?  by A, A == P */
    RcProb prev[32];        /* mode == P?  by P */
    RcProb tree[33][32];    /* the 5 bits, by L + 1 */
} RcModeCtx;

#define RC_MV_UNARY 8
typedef struct RcVecCtx {
    RcProb same_ref[2];            /* t == the frame's last reference? by last != 0 */
    RcProb ref_tree[16];           /* t, 4 bits */
    RcProb zero[2][2][2];          /* component c == 0? by c, last difference zero, (c = 1) dy == 0 */
    RcProb sign[2];
    RcProb mag[2][4];              /* unary bins of |d| - 1, by c and min(bin, 3) */
    RcProb merge[2][2];            /* format 7: a candidate? by two candidates, the last vector one */
    RcProb merge_idx;              /* which of two */
} RcVecCtx;

/* Format 7: before a vector, up to two candidates it may copy with no
 * reference or difference coded: the vector (dy, dx, t) of the block above
 * when that block is shifted, then the one the frame had before its last
 * change of vector; each only when it differs from the implicit
 * prediction (reference lastref, the last vector of lastref) and from the
 * first. */
typedef struct RcVecCand {
    int n;
    int16_t c[2][3];
} RcVecCand;

static inline void rc_vec_cands(RcVecCand *k, const int16_t *above, const int16_t *prev, int lastref, int ly, int lx)
{
    const int16_t *src[2] = { above, prev };
    k->n = 0;
    for (int i = 0; i < 2; i++) {
        const int16_t *v = src[i];
        if (!v || v[2] < 0 || (v[2] == lastref && v[0] == ly && v[1] == lx)) continue;
        if (k->n && k->c[0][0] == v[0] && k->c[0][1] == v[1] && k->c[0][2] == v[2]) continue;
        k->c[k->n][0] = v[0], k->c[k->n][1] = v[1], k->c[k->n][2] = v[2];
        k->n++;
    }
}

/* The candidate (dy, dx, t) is, or -1. */
static inline int rc_vec_cand_index(const RcVecCand *k, int dy, int dx, int t)
{
    for (int i = 0; i < k->n; i++)
        if (k->c[i][0] == dy && k->c[i][1] == dx && k->c[i][2] == t) return i;
    return -1;
}

static inline void rc_mode_ctx_init(RcModeCtx *c) { rc_probs_init(&c->left[0][0][0], sizeof(*c) / sizeof(RcProb)); }
static inline void rc_vec_ctx_init(RcVecCtx *c) { rc_probs_init(c->same_ref, sizeof(*c) / sizeof(RcProb)); }

static inline void rc_encode_mode(RcEnc *e, RcModeCtx *c, int mode, int L, int A, int P)
{
    if (L >= 0) {
        rc_encode(e, &c->left[L][L == A][L == P], mode != L);
        if (mode == L) return;
    }
    if (A >= 0 && A != L) {
        rc_encode(e, &c->above[A][A == P], mode != A);
        if (mode == A) return;
    }
    if (P >= 0 && P != L && P != A) {
        rc_encode(e, &c->prev[P], mode != P);
        if (mode == P) return;
    }
    RcProb *t = c->tree[L + 1];
    for (int i = 4, node = 1; i >= 0; i--) {
        const int bit = (mode >> i) & 1;
        rc_encode(e, &t[node], bit);
        node = 2 * node + bit;
    }
}

static inline int rc_decode_mode(RcDec *d, RcModeCtx *c, int L, int A, int P)
{
    if (L >= 0 && !rc_decode(d, &c->left[L][L == A][L == P])) return L;
    if (A >= 0 && A != L && !rc_decode(d, &c->above[A][A == P])) return A;
    if (P >= 0 && P != L && P != A && !rc_decode(d, &c->prev[P])) return P;
    RcProb *t = c->tree[L + 1];
    int node = 1;
    for (int i = 0; i < 5; i++) node = 2 * node + rc_decode(d, &t[node]);
    return node - 32;
}

/* One vector component's difference v (|v| <= 2 * PNMF_RES_MAX_MV): zero?,
 * sign, |v| - 1 in unary up to RC_MV_UNARY, the rest as an Exp-Golomb code
 * of direct bits. z0: the previous vector's difference was (0, 0); z1: for
 * dx, dy == 0. */
static inline void rc_encode_mvd(RcEnc *e, RcVecCtx *c, int comp, int z0, int z1, int v)
{
    rc_encode(e, &c->zero[comp][z0][z1], v != 0);
    if (!v) return;
    rc_encode(e, &c->sign[comp], v < 0);
    const int a = (v < 0 ? -v : v) - 1;
    for (int i = 0; i < RC_MV_UNARY; i++) {
        rc_encode(e, &c->mag[comp][i < 3 ? i : 3], a > i);
        if (a <= i) return;
    }
    const unsigned x = (unsigned)(a - RC_MV_UNARY) + 1;
    int n = 0;
    while (x >> (n + 1)) n++;
    for (int i = 0; i < n; i++) rc_encode_direct(e, 1);
    rc_encode_direct(e, 0);
    for (int i = n - 1; i >= 0; i--) rc_encode_direct(e, (x >> i) & 1);
}

/* Returns the difference, or INT32_MIN when the Exp-Golomb prefix is
 * longer than any difference needs. */
static inline int32_t rc_decode_mvd(RcDec *d, RcVecCtx *c, int comp, int z0, int z1)
{
    if (!rc_decode(d, &c->zero[comp][z0][z1])) return 0;
    const int neg = rc_decode(d, &c->sign[comp]);
    int a = 0;
    while (a < RC_MV_UNARY && rc_decode(d, &c->mag[comp][a < 3 ? a : 3])) a++;
    if (a == RC_MV_UNARY) {
        int n = 0;
        while (rc_decode_direct(d))
            if (++n > 16) return INT32_MIN;
        unsigned x = 1;
        for (int i = 0; i < n; i++) x = (x << 1) | (unsigned)rc_decode_direct(d);
        a = RC_MV_UNARY + (int)(x - 1);
    }
    return neg ? -(a + 1) : a + 1;
}

/* A whole vector as the vectors stream codes it: its reference t after
 * the frame's last one (lastref), then its differences (dy, dx) from the
 * last vector of t; z0 as in rc_encode_mvd(). */
static inline void rc_encode_vector(RcEnc *e, RcVecCtx *c, int t, int lastref, int z0, int dy, int dx)
{
    rc_encode(e, &c->same_ref[lastref != 0], t != lastref);
    if (t != lastref)
        for (int i = 3, node = 1; i >= 0; i--) {
            const int bit = (t >> i) & 1;
            rc_encode(e, &c->ref_tree[node], bit);
            node = 2 * node + bit;
        }
    rc_encode_mvd(e, c, 0, z0, 0, dy);
    rc_encode_mvd(e, c, 1, z0, dy == 0, dx);
}

/* Whether the vector is candidate idx (-1: none), when there are
 * candidates; lm: the frame's last vector was one. */
static inline void rc_encode_merge(RcEnc *e, RcVecCtx *c, const RcVecCand *k, int lm, int idx)
{
    if (!k->n) return;
    rc_encode(e, &c->merge[k->n == 2][lm], idx >= 0);
    if (idx >= 0 && k->n == 2) rc_encode(e, &c->merge_idx, idx);
}

static inline int rc_decode_merge(RcDec *d, RcVecCtx *c, const RcVecCand *k, int lm)
{
    if (!k->n || !rc_decode(d, &c->merge[k->n == 2][lm])) return -1;
    return k->n == 2 ? rc_decode(d, &c->merge_idx) : 0;
}

/* The reference of the next vector (its differences: rc_decode_mvd()). */
static inline int rc_decode_ref(RcDec *d, RcVecCtx *c, int lastref)
{
    if (!rc_decode(d, &c->same_ref[lastref != 0])) return lastref;
    int node = 1;
    for (int i = 0; i < 4; i++) node = 2 * node + rc_decode(d, &c->ref_tree[node]);
    return node - 16;
}

/* ---- the encoder's estimates ---------------------------------------------
 * What a decision costs in bits with the probabilities as they stand
 * (rc_cost_table: -log2(p / 2048) for p = 0..2048, filled once by
 * rc_cost_init()), and the probabilities moved as coding it would move
 * them, without coding: the residual encoder keeps the streams' contexts
 * as the writer will have them, block by block. */
extern float rc_cost_table[RC_PROB_ONE + 1];
void rc_cost_init(void);

static inline double rc_cost(RcProb p, int bit) { return rc_cost_table[bit ? RC_PROB_ONE - p : p]; }

static inline void rc_adapt(RcProb *p, int bit)
{
    if (!bit) *p += (RcProb)((RC_PROB_ONE - *p) >> RC_ADAPT);
    else *p -= (RcProb)(*p >> RC_ADAPT);
}

/* The bits of mode (update 0) or the update of the contexts (update 1). */
static inline double rc_mode_step(RcModeCtx *c, int mode, int L, int A, int P, int update)
{
    double bits = 0;
    RcProb *q;
    if (L >= 0) {
        q = &c->left[L][L == A][L == P];
        bits += rc_cost(*q, mode != L);
        if (update) rc_adapt(q, mode != L);
        if (mode == L) return bits;
    }
    if (A >= 0 && A != L) {
        q = &c->above[A][A == P];
        bits += rc_cost(*q, mode != A);
        if (update) rc_adapt(q, mode != A);
        if (mode == A) return bits;
    }
    if (P >= 0 && P != L && P != A) {
        q = &c->prev[P];
        bits += rc_cost(*q, mode != P);
        if (update) rc_adapt(q, mode != P);
        if (mode == P) return bits;
    }
    RcProb *t = c->tree[L + 1];
    for (int i = 4, node = 1; i >= 0; i--) {
        const int bit = (mode >> i) & 1;
        bits += rc_cost(t[node], bit);
        if (update) rc_adapt(&t[node], bit);
        node = 2 * node + bit;
    }
    return bits;
}

static inline double rc_mvd_step(RcVecCtx *c, int comp, int z0, int z1, int v, int update)
{
    RcProb *q = &c->zero[comp][z0][z1];
    double bits = rc_cost(*q, v != 0);
    if (update) rc_adapt(q, v != 0);
    if (!v) return bits;
    bits += rc_cost(c->sign[comp], v < 0);
    if (update) rc_adapt(&c->sign[comp], v < 0);
    const int a = (v < 0 ? -v : v) - 1;
    for (int i = 0; i < RC_MV_UNARY; i++) {
        q = &c->mag[comp][i < 3 ? i : 3];
        bits += rc_cost(*q, a > i);
        if (update) rc_adapt(q, a > i);
        if (a <= i) return bits;
    }
    int n = 0;
    while (((unsigned)(a - RC_MV_UNARY) + 1) >> (n + 1)) n++;
    return bits + 2 * n + 1;
}

/* rc_encode_merge()'s bits, or its update of the contexts. */
static inline double rc_merge_step(RcVecCtx *c, const RcVecCand *k, int lm, int idx, int update)
{
    if (!k->n) return 0;
    RcProb *q = &c->merge[k->n == 2][lm];
    double bits = rc_cost(*q, idx >= 0);
    if (update) rc_adapt(q, idx >= 0);
    if (idx >= 0 && k->n == 2) {
        bits += rc_cost(c->merge_idx, idx);
        if (update) rc_adapt(&c->merge_idx, idx);
    }
    return bits;
}

/* rc_encode_vector()'s bits, or its update of the contexts. */
static inline double rc_vector_step(RcVecCtx *c, int t, int lastref, int z0, int dy, int dx, int update)
{
    RcProb *q = &c->same_ref[lastref != 0];
    double bits = rc_cost(*q, t != lastref);
    if (update) rc_adapt(q, t != lastref);
    if (t != lastref)
        for (int i = 3, node = 1; i >= 0; i--) {
            const int bit = (t >> i) & 1;
            bits += rc_cost(c->ref_tree[node], bit);
            if (update) rc_adapt(&c->ref_tree[node], bit);
            node = 2 * node + bit;
        }
    bits += rc_mvd_step(c, 0, z0, 0, dy, update);
    return bits + rc_mvd_step(c, 1, z0, dy == 0, dx, update);
}

/* ---- the residual layer's levels (format 6) ------------------------------
 * One binarization for the three uses: the writer codes it (RcBin.enc),
 * the reader decodes it (RcBin.dec), the encoder prices it (neither: the
 * bits add up in RcBin.bits, and the contexts move when RcBin.update). */
typedef struct RcBin {
    RcEnc *enc;
    RcDec *dec;
    double bits;
    int update;
} RcBin;

static inline int rc_bin(RcBin *o, RcProb *p, int bit)
{
    if (o->dec) return rc_decode(o->dec, p);
    if (o->enc) {
        rc_encode(o->enc, p, bit);
    } else {
        o->bits += rc_cost(*p, bit);
        if (o->update) rc_adapt(p, bit);
    }
    return bit;
}

static inline int rc_bin_direct(RcBin *o, int bit)
{
    if (o->dec) return rc_decode_direct(o->dec);
    if (o->enc) rc_encode_direct(o->enc, bit);
    else o->bits += 1.0;
    return bit;
}

#define RC_LEV_UNARY 14 /* unary bins of a magnitude before the Exp-Golomb escape */
#define RC_LEV_CLASSES 6
#define RC_LEV_KINDS 4 /* rc_lev_kind() */

/* Contexts of the levels stream, each by the block's kind (rc_lev_kind):
 * bit 0, not frame 0 of the window (frame 0 of a key window has a finer
 * step); bit 1, the spatial prediction (new content, not a copy). */
typedef struct RcLevCtx {
    /* pixel levels, by the class of |left| + |above| in the block */
    RcProb pzero[RC_LEV_KINDS][RC_LEV_CLASSES];   /* level != 0? */
    RcProb psign[RC_LEV_KINDS][3];                /* level < 0? by the sign of left + above */
    RcProb pgt1[RC_LEV_KINDS][RC_LEV_CLASSES];    /* |level| > 1? */
    RcProb pmag[RC_LEV_KINDS][RC_LEV_CLASSES][4]; /* unary bins of |level| - 2, by min(bin, 3) */
    /* transform coefficients, per 4x4 quarter in zigzag order */
    RcProb cbf[RC_LEV_KINDS][4][3];               /* quarter has a level? by quarter, coded neighbours */
    RcProb sig[RC_LEV_KINDS][15];                 /* level != 0? by zigzag position */
    RcProb last[RC_LEV_KINDS][15];                /* the last one? by zigzag position */
    RcProb tgt1[RC_LEV_KINDS][5];                 /* |level| > 1? by the levels after it (>1 seen: 0; else 1 + ones, at most 4) */
    RcProb tmag[RC_LEV_KINDS][5];                 /* unary bins of |level| - 2, by min(levels > 1 after it, 4) */
} RcLevCtx;

static inline int rc_lev_kind(int j, int mode) { return (j != 0) | ((mode & 7) == 3 || (mode & 7) >= 5) << 1; }

static inline void rc_lev_ctx_init(RcLevCtx *c) { rc_probs_init(&c->pzero[0][0], sizeof(*c) / sizeof(RcProb)); }

/* a magnitude's remainder r >= 0 after its first bins: unary under
 * ctx[min(i, 3)] up to RC_LEV_UNARY (stride: the distance between the
 * contexts of bins i and i + 1, 0 for one context), then Exp-Golomb of
 * direct bits. Returns r, or -1 for an escape longer than 16 bits. */
static inline int rc_lev_rem(RcBin *o, RcProb *ctx, int stride, int r)
{
    if (!o->dec && !o->enc && !o->update) { /* a price: the bins past the third share a context */
        const int n = r < RC_LEV_UNARY ? r : RC_LEV_UNARY;
        double bits = 0;
        for (int i = 0; i < n && i < 3; i++) bits += rc_cost(ctx[i * stride], 1);
        if (n > 3) bits += (n - 3) * rc_cost(ctx[3 * stride], 1);
        if (r < RC_LEV_UNARY) {
            bits += rc_cost(ctx[(r < 3 ? r : 3) * stride], 0);
        } else {
            const unsigned x = (unsigned)(r - RC_LEV_UNARY) + 1;
            int e = 0;
            while (x >> (e + 1)) e++;
            bits += 2 * e + 1;
        }
        o->bits += bits;
        return r;
    }
    int i = 0;
    for (; i < RC_LEV_UNARY; i++)
        if (!rc_bin(o, ctx + (i < 3 ? i : 3) * stride, r > i)) return i;
    unsigned x = (unsigned)(r - RC_LEV_UNARY) + 1;
    int n = 0;
    if (o->dec) {
        while (rc_bin_direct(o, 1))
            if (++n > 16) return -1;
        x = 1;
        for (int b = 0; b < n; b++) x = (x << 1) | (unsigned)rc_bin_direct(o, 0);
        return RC_LEV_UNARY + (int)(x - 1);
    }
    while (x >> (n + 1)) n++;
    for (int b = 0; b < n; b++) rc_bin_direct(o, 1);
    rc_bin_direct(o, 0);
    for (int b = n - 1; b >= 0; b--) rc_bin_direct(o, (x >> b) & 1);
    return r;
}

static inline int rc_lev_class(int s) { return s < 3 ? s : s <= 4 ? 3 : s <= 8 ? 4 : 5; }

/* The levels of one pixel-coded block, h x w in row-major order. Decoding
 * writes lev[]; returns -1 when a magnitude exceeds max_l. */
static inline int rc_pixel_levels(RcBin *o, RcLevCtx *c, int kind, int h, int w, int16_t *lev, int max_l)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const int L = x ? lev[y * w + x - 1] : 0, A = y ? lev[(y - 1) * w + x] : 0;
            const int cls = rc_lev_class(abs(L) + abs(A)), sn = L + A;
            const int l = o->dec ? 0 : lev[y * w + x];
            if (!rc_bin(o, &c->pzero[kind][cls], l != 0)) {
                lev[y * w + x] = 0;
                continue;
            }
            const int neg = rc_bin(o, &c->psign[kind][sn < 0 ? 0 : sn == 0 ? 1 : 2], l < 0);
            int a = abs(l);
            if (rc_bin(o, &c->pgt1[kind][cls], a > 1)) {
                const int r = rc_lev_rem(o, c->pmag[kind][cls], 1, a - 2);
                if (r < 0 || r + 2 > max_l) return -1;
                a = r + 2;
            } else {
                a = 1;
            }
            lev[y * w + x] = (int16_t)(neg ? -a : a);
        }
    return 0;
}

/* The 64 levels of one transform block: its four quarters, 16 each in
 * zigzag order. Decoding writes lev[]; returns -1 when a magnitude exceeds
 * max_l. */
static inline int rc_transform_levels(RcBin *o, RcLevCtx *c, int kind, int16_t *lev, int max_l)
{
    int coded[4];
    for (int sb = 0; sb < 4; sb++) {
        int16_t *lv = lev + 16 * sb;
        int last = -1;
        if (!o->dec)
            for (int i = 0; i < 16; i++)
                if (lv[i]) last = i;
        const int nb = ((sb & 1) ? coded[sb - 1] : 0) + ((sb & 2) ? coded[sb - 2] : 0);
        coded[sb] = rc_bin(o, &c->cbf[kind][sb][nb], last >= 0);
        if (!coded[sb]) {
            if (o->dec) memset(lv, 0, 16 * sizeof(*lv));
            continue;
        }
        int i = 0, end = 15;
        for (; i < 15; i++) {
            const int s = rc_bin(o, &c->sig[kind][i], !o->dec && lv[i] != 0);
            if (o->dec) lv[i] = (int16_t)s;
            if (s && rc_bin(o, &c->last[kind][i], i == last)) {
                end = i;
                break;
            }
        }
        if (o->dec) {
            for (int t = end + 1; t < 16; t++) lv[t] = 0;
            if (end == 15) lv[15] = 1;
        }
        int gt1 = 0, ones = 0;
        for (i = end; i >= 0; i--) {
            if (!lv[i]) continue;
            int a = abs(lv[i]);
            if (rc_bin(o, &c->tgt1[kind][gt1 ? 0 : 1 + (ones < 3 ? ones : 3)], a > 1)) {
                const int r = rc_lev_rem(o, c->tmag[kind] + (gt1 < 4 ? gt1 : 4), 0, a - 2);
                if (r < 0 || r + 2 > max_l) return -1;
                a = r + 2;
                gt1++;
            } else {
                a = 1;
                ones++;
            }
            const int neg = rc_bin_direct(o, !o->dec && lv[i] < 0);
            lv[i] = (int16_t)(neg ? -a : a);
        }
    }
    return 0;
}

#endif /* PNMF_RANGECODER_H */
