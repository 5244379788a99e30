/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The encoder's side of the range coder (rangecoder.h): the encoder, the
 * residual layer's modes, vectors and levels written with it, and the
 * estimates of what they cost. Only the encoder includes this.
 *
 * Bytes leave the encoder's 64-bit low end through a one-byte cache and a
 * count of pending 0xFF bytes, so that a carry can still reach them (the
 * scheme of G. N. N. Martin's range coder as LZMA uses it).
 */
#ifndef PNMF_RANGECODER_ENC_H
#define PNMF_RANGECODER_ENC_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "rangecoder.h"
#include "tuning.h"
#include "varint.h"

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

/* A decision, with the adaptation of the newest format (the writer
 * writes no other). */
static inline void rc_encode(RcEnc *e, RcProb *p, int bit)
{
    const uint32_t bound = (e->range >> RC_PROB_BITS) * rc_prob(*p);
    if (!bit) {
        e->range = bound;
    } else {
        e->low += bound;
        e->range -= bound;
    }
    rc_update(p, bit, rc_rates13, RC_AMASK13);
    while (e->range < RC_TOP) e->range <<= 8, rc_shift_low(e);
}

/* A decision of probability 1/2, not adapted. */
static inline void rc_encode_direct(RcEnc *e, int bit)
{
    e->range >>= 1;
    if (bit) e->low += e->range;
    while (e->range < RC_TOP) e->range <<= 8, rc_shift_low(e);
}

/* The exponent n of an Exp-Golomb number x >= 1 (the escapes of the
 * vectors' and levels' magnitudes): x's top bit is bit n, the code is n
 * ones, a zero and x's n bits below the top one, 2 n + 1 direct bins. */
static inline int rc_eg_exp(unsigned x)
{
    int n = 0;
    while (x >> (n + 1)) n++;
    return n;
}

/* Decisions for two uses: the writer codes them (RcBin.enc), the encoder
 * prices them (enc NULL: the bits add up in RcBin.bits, and the contexts
 * move when RcBin.update). */
typedef struct RcBin {
    RcEnc *enc;
    double bits;
    int update;
} RcBin;

static inline int rc_bin_direct(RcBin *o, int bit)
{
    if (o->enc) rc_encode_direct(o->enc, bit);
    else o->bits += 1.0;
    return bit;
}

/* x >= 1 as an Exp-Golomb number of direct bins, coded or priced (each
 * direct bin 1.0 added). */
static inline void rc_bin_eg(RcBin *o, unsigned x)
{
    const int n = rc_eg_exp(x);
    for (int b = 0; b < n; b++) rc_bin_direct(o, 1);
    rc_bin_direct(o, 0);
    for (int b = n - 1; b >= 0; b--) rc_bin_direct(o, (x >> b) & 1);
}

/* rc_bin_eg() coded. */
static inline void rc_encode_eg(RcEnc *e, unsigned x)
{
    RcBin o = { e, 0, 0 };
    rc_bin_eg(&o, x);
}

static inline void rc_enc_finish(RcEnc *e)
{
    for (int i = 0; i < 5; i++) rc_shift_low(e);
}

/* ---- the residual layer's modes and vectors ------------------------------ */

/* rc_decode_mode()'s decisions. */
static inline void rc_encode_mode(RcEnc *e, RcModeCtx *c, int mode, int L, int A, int P)
{
    if (L >= 0) {
        rc_encode(e, rc_mode_left(c, L, A, P), mode != L);
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

/* rc_decode_mvd()'s decisions for the difference v. */
static inline void rc_encode_mvd(RcEnc *e, RcVecCtx *c, int comp, int z0, int z1, int v)
{
    rc_encode(e, rc_mvd_zero(c, comp, z0, z1), v != 0);
    if (!v) return;
    rc_encode(e, &c->sign[comp], v < 0);
    const int a = (v < 0 ? -v : v) - 1, un = c->on ? RC_MV_UNARY_NB : RC_MV_UNARY;
    for (int i = 0; i < un; i++) {
        rc_encode(e, &c->mag[comp][i < 3 ? i : 3], a > i);
        if (a <= i) return;
    }
    rc_encode_eg(e, (unsigned)(a - un) + 1);
}

/* A whole vector as the vectors stream codes it: its reference t after
 * the frame's last one (lastref), then its differences (dy, dx) from the
 * last vector of t; z0 as in rc_decode_mvd(). */
static inline void rc_encode_vector(RcEnc *e, RcVecCtx *c, int t, int lastref, int z0, int dy, int dx)
{
    rc_encode(e, &c->same_ref[lastref != 0], t != lastref);
    RcProb *rt = rc_ref_tree(c, lastref);
    if (t != lastref)
        for (int i = 3, node = 1; i >= 0; i--) {
            const int bit = (t >> i) & 1;
            rc_encode(e, &rt[node], bit);
            node = 2 * node + bit;
        }
    c->tnew = t != lastref;
    rc_encode_mvd(e, c, 0, z0, 0, dy);
    rc_encode_mvd(e, c, 1, z0, dy == 0, dx);
}

/* Whether the vector is candidate idx (-1: none), when there are
 * candidates; lm: the frame's last vector was one. */
static inline void rc_encode_merge(RcEnc *e, RcVecCtx *c, const RcVecCand *k, int lm, int idx)
{
    if (!k->n) return;
    rc_encode(e, &c->merge[k->n >= 2][lm], idx >= 0);
    for (int i = 0; idx >= 0 && i < k->n - 1; i++) {
        rc_encode(e, i ? &c->merge_idx2[i - 1] : &c->merge_idx, idx > i);
        if (idx == i) break;
    }
}

/* ---- the encoder's estimates ---------------------------------------------
 * What a decision costs in bits with the probabilities as they stand
 * (rc_cost_table: -log2(i / 2^RC_COST_BITS) for i = 0..2^RC_COST_BITS,
 * the probability of the decision rounded to RC_COST_BITS bits, filled once by
 * rc_cost_init()), and the probabilities moved as coding it would move
 * them, without coding: the residual encoder keeps the streams' contexts
 * as the writer will have them, block by block. */
#define RC_COST_BITS PNMF_RC_COST_BITS
extern float rc_cost_table[(1 << RC_COST_BITS) + 1];
/* rc_cost_table's entries as integer counts of 2^-34 bits (rc_cost_fixed()) */
extern int64_t rc_cost_fixed_table[(1 << RC_COST_BITS) + 1];
void rc_cost_init(void);

static inline int rc_cost_index(RcProb p, int bit)
{
    const uint32_t v = rc_prob(p), sh = RC_PROB_BITS - RC_COST_BITS;
    return (int)(((bit ? RC_PROB_ONE - v : v) + (1u << sh >> 1)) >> sh);
}

static inline double rc_cost(RcProb p, int bit) { return rc_cost_table[rc_cost_index(p, bit)]; }

static inline void rc_adapt(RcProb *p, int bit) { rc_update(p, bit, rc_rates13, RC_AMASK13); }

/* The bits of mode (update 0) or the update of the contexts (update 1). */
static inline double rc_mode_step(RcModeCtx *c, int mode, int L, int A, int P, int update)
{
    double bits = 0;
    RcProb *q;
    if (L >= 0) {
        q = rc_mode_left(c, L, A, P);
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
    RcProb *q = rc_mvd_zero(c, comp, z0, z1);
    double bits = rc_cost(*q, v != 0);
    if (update) rc_adapt(q, v != 0);
    if (!v) return bits;
    bits += rc_cost(c->sign[comp], v < 0);
    if (update) rc_adapt(&c->sign[comp], v < 0);
    const int a = (v < 0 ? -v : v) - 1, un = c->on ? RC_MV_UNARY_NB : RC_MV_UNARY;
    for (int i = 0; i < un; i++) {
        q = &c->mag[comp][i < 3 ? i : 3];
        bits += rc_cost(*q, a > i);
        if (update) rc_adapt(q, a > i);
        if (a <= i) return bits;
    }
    return bits + 2 * rc_eg_exp((unsigned)(a - un) + 1) + 1;
}

/* rc_encode_merge()'s bits, or its update of the contexts. */
static inline double rc_merge_step(RcVecCtx *c, const RcVecCand *k, int lm, int idx, int update)
{
    if (!k->n) return 0;
    RcProb *q = &c->merge[k->n >= 2][lm];
    double bits = rc_cost(*q, idx >= 0);
    if (update) rc_adapt(q, idx >= 0);
    for (int i = 0; idx >= 0 && i < k->n - 1; i++) {
        q = i ? &c->merge_idx2[i - 1] : &c->merge_idx;
        bits += rc_cost(*q, idx > i);
        if (update) rc_adapt(q, idx > i);
        if (idx == i) break;
    }
    return bits;
}

/* rc_encode_vector()'s bits, or its update of the contexts. */
static inline double rc_vector_step(RcVecCtx *c, int t, int lastref, int z0, int dy, int dx, int update)
{
    RcProb *q = &c->same_ref[lastref != 0];
    double bits = rc_cost(*q, t != lastref);
    if (update) rc_adapt(q, t != lastref);
    RcProb *rt = rc_ref_tree(c, lastref);
    if (t != lastref)
        for (int i = 3, node = 1; i >= 0; i--) {
            const int bit = (t >> i) & 1;
            bits += rc_cost(rt[node], bit);
            if (update) rc_adapt(&rt[node], bit);
            node = 2 * node + bit;
        }
    c->tnew = t != lastref;
    bits += rc_mvd_step(c, 0, z0, 0, dy, update);
    return bits + rc_mvd_step(c, 1, z0, dy == 0, dx, update);
}

/* Window flags bit 17: rc_decode_bi()'s decisions and the differences
 * (ddy, ddx) of the second vector, t2 -1 for none; their bits, or (update)
 * the update of the contexts, or (e not NULL) coded. */
static inline double rc_bi_step(RcEnc *e, RcBiCtx *c, int ctx, int t2, int ddy, int ddx, int update)
{
    if (e) {
        rc_encode(e, &c->on[ctx], t2 >= 0);
        if (t2 < 0) return 0;
        for (int i = 3, node = 1; i >= 0; i--) {
            const int bit = (t2 >> i) & 1;
            rc_encode(e, &c->ref[node], bit);
            node = 2 * node + bit;
        }
        rc_encode_mvd(e, &c->d, 0, 1, 0, ddy);
        rc_encode_mvd(e, &c->d, 1, 1, ddy == 0, ddx);
        return 0;
    }
    RcProb *q = &c->on[ctx];
    double bits = rc_cost(*q, t2 >= 0);
    if (update) rc_adapt(q, t2 >= 0);
    if (t2 < 0) return bits;
    for (int i = 3, node = 1; i >= 0; i--) {
        const int bit = (t2 >> i) & 1;
        bits += rc_cost(c->ref[node], bit);
        if (update) rc_adapt(&c->ref[node], bit);
        node = 2 * node + bit;
    }
    bits += rc_mvd_step(&c->d, 0, 1, 0, ddy, update);
    return bits + rc_mvd_step(&c->d, 1, 1, ddy == 0, ddx, update);
}

/* ---- the residual layer's levels (format 6) ------------------------------
 * The decisions rc_decode_pixel_levels() and rc_decode_transform_levels()
 * read, coded or priced through RcBin. */

static inline int rc_bin(RcBin *o, RcProb *p, int bit)
{
    if (o->enc) {
        rc_encode(o->enc, p, bit);
    } else {
        o->bits += rc_cost(*p, bit);
        if (o->update) rc_adapt(p, bit);
    }
    return bit;
}

/* rc_decode_warp()'s difference d, coded or priced. */
static inline void rc_bin_warp(RcBin *o, RcProb *p, int32_t d)
{
    rc_bin(o, p, d != 0);
    if (!d) return;
    rc_bin_direct(o, d < 0);
    rc_bin_eg(o, (unsigned)(d < 0 ? -d : d));
}

/* rc_decode_lev_rem()'s decisions for the remainder r. */
static inline int rc_lev_rem(RcBin *o, RcProb *ctx, int stride, int r)
{
    if (!o->enc && !o->update) { /* a price: the bins past the third share a context */
        const int n = r < RC_LEV_UNARY ? r : RC_LEV_UNARY;
        double bits = 0;
        for (int i = 0; i < n && i < 3; i++) bits += rc_cost(ctx[i * stride], 1);
        if (n > 3) bits += (n - 3) * rc_cost(ctx[3 * stride], 1);
        if (r < RC_LEV_UNARY) {
            bits += rc_cost(ctx[(r < 3 ? r : 3) * stride], 0);
        } else {
            bits += 2 * rc_eg_exp((unsigned)(r - RC_LEV_UNARY) + 1) + 1;
        }
        o->bits += bits;
        return r;
    }
    for (int i = 0; i < RC_LEV_UNARY; i++)
        if (!rc_bin(o, ctx + (i < 3 ? i : 3) * stride, r > i)) return i;
    rc_bin_eg(o, (unsigned)(r - RC_LEV_UNARY) + 1);
    return r;
}

/* A cost of rc_cost_table as an integer count of 2^-34 bits: every entry
 * is 0 or at least 2^-11 (-log2(2047 / 2048), RC_COST_BITS at most 11), and a float, so a whole
 * multiple of 2^-34; the product is exact, and so is its conversion
 * (rc_cost_init() fills rc_cost_fixed_table with them). */
static inline int64_t rc_cost_fixed(RcProb p, int bit)
{
    return rc_cost_fixed_table[rc_cost_index(p, bit)];
}

/* rc_pixel_levels_fixed() (below) that may stop after a row once lb +
 * (base + lambda * the bits so far) reaches stop (then returns 1, o->bits
 * holding those bits): the costs are not negative and the rounded product
 * and sums do not fall as the bits grow, so a price whose lb + (base +
 * lambda * bits) is below stop runs to the end and is the same. */
static inline int rc_pixel_levels_fixed_upto(RcBin *o, const RcLevCtx *c, int kind, int h, int w,
                                             const int16_t *lev, int max_l, double lb, double base, double lambda,
                                             double stop)
{
    /* the costs of the zero, sign and > 1 decisions under each of the
     * kind's contexts, looked up once for the block's levels (an integer
     * sum: the same in any order) */
    int64_t zc[RC_LEV_CLASSES][2], gc[RC_LEV_CLASSES][2], sc[3][2];
    for (int k = 0; k < RC_LEV_CLASSES; k++)
        for (int bit = 0; bit < 2; bit++)
            zc[k][bit] = rc_cost_fixed(c->pzero[kind][k], bit), gc[k][bit] = rc_cost_fixed(c->pgt1[kind][k], bit);
    for (int k = 0; k < 3; k++)
        for (int bit = 0; bit < 2; bit++) sc[k][bit] = rc_cost_fixed(c->psign[kind][k], bit);
    int64_t bits = 0;
    int ret = 0;
    for (int y = 0; y < h && !ret; y++) {
        if (y && lb + (base + lambda * ((double)bits * 0x1p-34)) >= stop) {
            ret = 1;
            break;
        }
        const int16_t *row = lev + y * w, *ar = y ? row - w : NULL; /* the row and the one above */
        int L = 0; /* the level left of x, 0 at the row's start */
        for (int x = 0; x < w; x++) {
            const int A = ar ? ar[x] : 0;
            const int cls = rc_lev_class(abs(L) + abs(A)), sn = L + A;
            const int l = row[x];
            L = l;
            bits += zc[cls][l != 0];
            if (!l) continue;
            bits += sc[sn < 0 ? 0 : sn == 0 ? 1 : 2][l < 0];
            const int a = abs(l);
            bits += gc[cls][a > 1];
            if (a <= 1) continue;
            const int r = a - 2;
            const RcProb *ctx = c->pmag[kind][cls];
            const int n = r < RC_LEV_UNARY ? r : RC_LEV_UNARY;
            for (int i = 0; i < n && i < 3; i++) bits += rc_cost_fixed(ctx[i], 1);
            if (n > 3) bits += (n - 3) * rc_cost_fixed(ctx[3], 1);
            if (r < RC_LEV_UNARY) {
                bits += rc_cost_fixed(ctx[r < 3 ? r : 3], 0);
            } else {
                bits += (int64_t)(2 * rc_eg_exp((unsigned)(r - RC_LEV_UNARY) + 1) + 1) << 34;
            }
            if (r + 2 > max_l) {
                ret = -1;
                break;
            }
        }
    }
    o->bits = (double)bits * 0x1p-34;
    return ret;
}

/* The contexts moved as rc_pixel_levels() moves them (with o->update),
 * without the price. */
static inline void rc_pixel_levels_adapt(RcLevCtx *c, int kind, int h, int w, const int16_t *lev)
{
    for (int y = 0; y < h; y++) {
        const int16_t *row = lev + y * w, *ar = y ? row - w : NULL; /* the row and the one above */
        int L = 0; /* the level left of x, 0 at the row's start */
        for (int x = 0; x < w; x++) {
            const int A = ar ? ar[x] : 0;
            const int cls = rc_lev_class(abs(L) + abs(A)), sn = L + A;
            const int l = row[x];
            L = l;
            rc_adapt(&c->pzero[kind][cls], l != 0);
            if (!l) continue;
            rc_adapt(&c->psign[kind][sn < 0 ? 0 : sn == 0 ? 1 : 2], l < 0);
            const int a = abs(l);
            rc_adapt(&c->pgt1[kind][cls], a > 1);
            if (a <= 1) continue;
            const int r = a - 2;
            RcProb *ctx = c->pmag[kind][cls];
            for (int i = 0; i < RC_LEV_UNARY; i++) {
                rc_adapt(ctx + (i < 3 ? i : 3), r > i);
                if (r <= i) break;
            }
        }
    }
}

/* rc_pixel_levels() priced from 0 bits without moving the contexts: each
 * cost is a multiple of 2^-34 (rc_cost_fixed()) and a block's sum stays
 * under 2^15 bits (64 levels of at most 17 bins of at most 24 bits and 33
 * direct bins each), so every partial sum of rc_bin()'s double additions
 * is exact (under 2^53 units) and equals the integer sum here. */
static inline int rc_pixel_levels_fixed(RcBin *o, const RcLevCtx *c, int kind, int h, int w, const int16_t *lev,
                                        int max_l)
{
    return rc_pixel_levels_fixed_upto(o, c, kind, h, w, lev, max_l, 0, 0, 0, INFINITY);
}

/* rc_pixel_levels() coded (o->enc): the encoder's state held in locals
 * for the block, the same bytes out. */
static inline int rc_pixel_levels_enc(RcBin *o, RcLevCtx *c, int kind, int h, int w, const int16_t *lev, int max_l)
{
    RcEnc e = *o->enc;
    int ret = 0;
    for (int y = 0; y < h && !ret; y++) {
        const int16_t *row = lev + y * w, *ar = y ? row - w : NULL; /* the row and the one above */
        int L = 0; /* the level left of x, 0 at the row's start */
        for (int x = 0; x < w; x++) {
            const int A = ar ? ar[x] : 0;
            const int cls = rc_lev_class(abs(L) + abs(A)), sn = L + A;
            const int l = row[x];
            L = l;
            rc_encode(&e, &c->pzero[kind][cls], l != 0);
            if (!l) continue;
            rc_encode(&e, &c->psign[kind][sn < 0 ? 0 : sn == 0 ? 1 : 2], l < 0);
            const int a = abs(l);
            rc_encode(&e, &c->pgt1[kind][cls], a > 1);
            if (a <= 1) continue;
            const int r = a - 2;
            RcProb *ctx = c->pmag[kind][cls];
            int i = 0; /* rc_lev_rem()'s bins */
            for (; i < RC_LEV_UNARY; i++) {
                rc_encode(&e, ctx + (i < 3 ? i : 3), r > i);
                if (r <= i) break;
            }
            if (i == RC_LEV_UNARY) rc_encode_eg(&e, (unsigned)(r - RC_LEV_UNARY) + 1);
            if (r + 2 > max_l) {
                ret = -1;
                break;
            }
        }
    }
    *o->enc = e;
    return ret;
}

/* rc_pixel_levels() priced (o->enc NULL): the same decisions, their costs
 * added in the same order as rc_bin() and rc_lev_rem() add them, so the
 * same sum, held in a register rather than in o between the decisions. */
static inline int rc_pixel_levels_price(RcBin *o, RcLevCtx *c, int kind, int h, int w, const int16_t *lev,
                                        int max_l)
{
    if (!o->update && o->bits == 0) return rc_pixel_levels_fixed(o, c, kind, h, w, lev, max_l);
    double bits = o->bits;
    const int up = o->update;
    int ret = 0;
    for (int y = 0; y < h && !ret; y++) {
        const int16_t *row = lev + y * w, *ar = y ? row - w : NULL; /* the row and the one above */
        int L = 0; /* the level left of x, 0 at the row's start */
        for (int x = 0; x < w; x++) {
            const int A = ar ? ar[x] : 0;
            const int cls = rc_lev_class(abs(L) + abs(A)), sn = L + A;
            const int l = row[x];
            L = l;
            RcProb *pz = &c->pzero[kind][cls];
            bits += rc_cost(*pz, l != 0);
            if (up) rc_adapt(pz, l != 0);
            if (!l) continue;
            RcProb *ps = &c->psign[kind][sn < 0 ? 0 : sn == 0 ? 1 : 2];
            bits += rc_cost(*ps, l < 0);
            if (up) rc_adapt(ps, l < 0);
            const int a = abs(l);
            RcProb *pg = &c->pgt1[kind][cls];
            bits += rc_cost(*pg, a > 1);
            if (up) rc_adapt(pg, a > 1);
            if (a <= 1) continue;
            const int r = a - 2;
            RcProb *ctx = c->pmag[kind][cls];
            if (!up) { /* rc_lev_rem()'s price */
                const int n = r < RC_LEV_UNARY ? r : RC_LEV_UNARY;
                double rb = 0;
                for (int i = 0; i < n && i < 3; i++) rb += rc_cost(ctx[i], 1);
                if (n > 3) rb += (n - 3) * rc_cost(ctx[3], 1);
                if (r < RC_LEV_UNARY) {
                    rb += rc_cost(ctx[r < 3 ? r : 3], 0);
                } else {
                    rb += 2 * rc_eg_exp((unsigned)(r - RC_LEV_UNARY) + 1) + 1;
                }
                bits += rb;
            } else { /* rc_lev_rem()'s bins, each added and adapted */
                int i = 0;
                for (; i < RC_LEV_UNARY; i++) {
                    RcProb *q = ctx + (i < 3 ? i : 3);
                    bits += rc_cost(*q, r > i);
                    rc_adapt(q, r > i);
                    if (r <= i) break;
                }
                if (i == RC_LEV_UNARY) { /* the escape: 2 n + 1 direct bins, each 1.0 added */
                    const int n = rc_eg_exp((unsigned)(r - RC_LEV_UNARY) + 1);
                    for (int b = 0; b < 2 * n + 1; b++) bits += 1.0;
                }
            }
            if (r + 2 > max_l) {
                ret = -1;
                break;
            }
        }
    }
    o->bits = bits;
    return ret;
}

/* rc_decode_pixel_levels()'s decisions for the levels lev[] of an h x w
 * block. Returns -1 when a magnitude exceeds max_l. */
static inline int rc_pixel_levels(RcBin *o, RcLevCtx *c, int kind, int h, int w, const int16_t *lev, int max_l)
{
    return o->enc ? rc_pixel_levels_enc(o, c, kind, h, w, lev, max_l)
                  : rc_pixel_levels_price(o, c, kind, h, w, lev, max_l);
}

/* The decisions of rc_transform_levels() for quarter sb (16 levels lv[] in
 * zigzag order), its coded flag in context nb (its coded neighbours in the
 * block). Returns whether it is coded, or -1 when a magnitude exceeds
 * max_l. */
static inline int rc_transform_quarter(RcBin *o, RcLevCtx *c, int kind, int sb, int nb, const int16_t *lv, int max_l)
{
    int last = -1;
    for (int i = 0; i < 16; i++)
        if (lv[i]) last = i;
    if (!rc_bin(o, &c->cbf[kind][sb][nb], last >= 0)) return 0;
    int i = 0, end = 15;
    for (; i < 15; i++) {
        const int s = rc_bin(o, &c->sig[kind][i], lv[i] != 0);
        if (s && rc_bin(o, &c->last[kind][i], i == last)) {
            end = i;
            break;
        }
    }
    int gt1 = 0, ones = 0;
    for (i = end; i >= 0; i--) {
        if (!lv[i]) continue;
        const int a = abs(lv[i]);
        if (rc_bin(o, &c->tgt1[kind][gt1 ? 0 : 1 + (ones < 3 ? ones : 3)], a > 1)) {
            const int r = rc_lev_rem(o, c->tmag[kind] + (gt1 < 4 ? gt1 : 4), 0, a - 2);
            if (r < 0 || r + 2 > max_l) return -1;
            gt1++;
        } else {
            ones++;
        }
        rc_bin_direct(o, lv[i] < 0);
    }
    return 1;
}

/* rc_decode_transform_levels()'s decisions for the 64 levels lev[] of a
 * transform block. Returns -1 when a magnitude exceeds max_l. */
static inline int rc_transform_levels(RcBin *o, RcLevCtx *c, int kind, const int16_t *lev, int max_l)
{
    int coded[4];
    for (int sb = 0; sb < 4; sb++) {
        const int nb = ((sb & 1) ? coded[sb - 1] : 0) + ((sb & 2) ? coded[sb - 2] : 0);
        coded[sb] = rc_transform_quarter(o, c, kind, sb, nb, lev + 16 * sb, max_l);
        if (coded[sb] < 0) return -1;
    }
    return 0;
}

#endif /* PNMF_RANGECODER_ENC_H */
