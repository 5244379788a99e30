/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The binary adaptive range decoder, and the residual layer's modes,
 * vectors and levels as the reader decodes them (docs/format.md,
 * "Range-coded streams"). The encoder's side, which writes the same
 * decisions and prices them, is rangecoder_enc.h.
 *
 * The coder keeps a 32-bit range and codes one binary decision at a time
 * with an adaptive probability. Each context holds two 15-bit estimates a
 * and b of the decision being 0 and the count n of decisions it has coded;
 * their mean splits the range. Format 13 moves a by 2^-s1 and b by 2^-s2
 * of the way toward each decision, the shifts growing with n (rc_rates13):
 * a context learns fast from its first decisions, then averages a fast
 * and a slow estimate, which costs near-certain decisions less. Formats
 * up to 12 move an 11-bit estimate 1/16 of the way; a = b = 16 times it,
 * updated in steps of 16, reproduce it exactly (rc_rates12, RC_AMASK12).
 * A stream of N renormalizations is N + 5 bytes, the first 0; the decoder
 * reads exactly that many, which lets a reader refuse a stream that is
 * cut short or has bytes left over.
 */
#ifndef PNMF_RANGECODER_H
#define PNMF_RANGECODER_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RC_PROB_BITS 15
#define RC_PROB_ONE  (1u << RC_PROB_BITS)
#define RC_TOP       (1u << 24)
#define RC_COUNT_MAX 126 /* a context's count stops here: both shifts are final from it on */
#define RC_V13       13  /* the first format of the adaptation by count */

/* A context: the estimates a, b (1..32767) and the count n. */
typedef struct RcProb {
    uint16_t a, b, n;
} RcProb;

/* The shifts (s1 | s2 << 4) by count, format 13: s1 = min(max(floor(log2(n + 2)), 2), 4),
 * s2 = min(max(floor(log2(n + 2)), 2), 7). */
static const uint8_t rc_rates13[RC_COUNT_MAX + 1] = {
    0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x33, 0x33, 0x33, 0x33, 0x33, 0x33, 0x33, 0x33, 0x44, 0x44,
    0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x54, 0x54,
    0x54, 0x54, 0x54, 0x54, 0x54, 0x54, 0x54, 0x54, 0x54, 0x54, 0x54, 0x54, 0x54, 0x54, 0x54, 0x54,
    0x54, 0x54, 0x54, 0x54, 0x54, 0x54, 0x54, 0x54, 0x54, 0x54, 0x54, 0x54, 0x54, 0x54, 0x64, 0x64,
    0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64,
    0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64,
    0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64,
    0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x64, 0x74,
};
/* Formats up to 12: 1/16 for every count, in steps of 16 (RC_AMASK12), the
 * range split at 11 bits (RC_RMASK12). */
static const uint8_t rc_rates12[RC_COUNT_MAX + 1] = {
#define RC_X8 0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44
    RC_X8, RC_X8, RC_X8, RC_X8, RC_X8, RC_X8, RC_X8, RC_X8, RC_X8, RC_X8, RC_X8, RC_X8, RC_X8, RC_X8, RC_X8,
    0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44,
#undef RC_X8
};
#define RC_AMASK12 (~15u)
#define RC_RMASK12 (~2047u)
#define RC_AMASK13 (~0u)
#define RC_RMASK13 (~32767u)

static inline void rc_probs_init(RcProb *p, size_t n)
{
    for (size_t i = 0; i < n; i++) p[i].a = p[i].b = RC_PROB_ONE / 2, p[i].n = 0;
}

/* The estimate that splits the range. */
static inline uint32_t rc_prob(RcProb p) { return ((uint32_t)p.a + p.b) >> 1; }

/* The context moved toward the decision bit by the shifts rate[n], each
 * step masked by amask. */
static inline void rc_update(RcProb *p, int bit, const uint8_t *rate, uint32_t amask)
{
    const unsigned r = rate[p->n], s1 = r & 15, s2 = r >> 4;
    const uint32_t a = p->a, b = p->b;
    if (bit) {
        p->a = (uint16_t)(a - ((a >> s1) & amask));
        p->b = (uint16_t)(b - ((b >> s2) & amask));
    } else {
        p->a = (uint16_t)(a + (((RC_PROB_ONE - a) >> s1) & amask));
        p->b = (uint16_t)(b + (((RC_PROB_ONE - b) >> s2) & amask));
    }
    p->n = (uint16_t)(p->n + (p->n < RC_COUNT_MAX));
}

typedef struct RcDec {
    const uint8_t *p, *end;
    uint32_t range, code;
    int over;              /* bytes read past the end (as 0) */
    uint32_t rmask, amask; /* the format's split of the range and steps (RC_RMASK13, ...) */
    const uint8_t *rate;   /* and its shifts by count */
    unsigned nmax;         /* the count a context stops at: RC_COUNT_MAX, or 0 for formats up to
                            * 12 (their shifts do not depend on it), so that a context at
                            * RC_COUNT_MAX is one of format 13 with its final shifts */
} RcDec;

static inline uint8_t rc_next(RcDec *d)
{
    if (d->p < d->end) return *d->p++;
    d->over = 1;
    return 0;
}

/* A stream of a file of format version. */
static inline void rc_dec_init(RcDec *d, const uint8_t *p, size_t n, int version)
{
    d->p = p, d->end = p + n, d->range = 0xFFFFFFFFu, d->code = 0, d->over = 0;
    const int v13 = version >= RC_V13;
    d->rmask = v13 ? RC_RMASK13 : RC_RMASK12, d->amask = v13 ? RC_AMASK13 : RC_AMASK12;
    d->rate = v13 ? rc_rates13 : rc_rates12;
    d->nmax = v13 ? RC_COUNT_MAX : 0;
    for (int i = 0; i < 5; i++) d->code = (d->code << 8) | rc_next(d);
}

/* The range's part for a 0: (range >> 15) * p, or for formats up to 12
 * (range >> 11) * (p / 16), as one product of the masked range. */
static inline uint32_t rc_bound(const RcDec *d, uint32_t v)
{
    return (uint32_t)(((uint64_t)(d->range & d->rmask) * v) >> RC_PROB_BITS);
}

/* Restores a range under 2^24. A decision leaves at least
 * (2^24 >> 15) * 1 = 2^9 (of format 13; 2^16 of formats up to 12, whose
 * estimates stay within [15, 2033] / 2048): two bytes restore it. */
static inline void rc_dec_norm(RcDec *d)
{
    if (d->range < RC_TOP) {
        d->range <<= 8, d->code = (d->code << 8) | rc_next(d);
        if (d->range < RC_TOP) d->range <<= 8, d->code = (d->code << 8) | rc_next(d);
    }
}

/* The final shifts of format 13 (rc_rates13[RC_COUNT_MAX]) as constants:
 * most decisions are of contexts whose count has stopped. */
#define RC_S1_FINAL 4
#define RC_S2_FINAL 7

/* A condition that holds for most decisions: its code in line, the rest
 * out of the way of the registers of the loops around it. */
#if defined(__GNUC__) || defined(__clang__)
#define RC_LIKELY(x) __builtin_expect(!!(x), 1)
#else
#define RC_LIKELY(x) (x)
#endif

/* The context moved toward the decision bit of a decoder of d's format
 * (rc_update(), with the count stopping at d->nmax). */
static inline void rc_dec_update(const RcDec *d, RcProb *p, int bit)
{
    const unsigned n = p->n, r = d->rate[n], s1 = r & 15, s2 = r >> 4;
    const uint32_t a = p->a, b = p->b;
    if (bit) {
        p->a = (uint16_t)(a - ((a >> s1) & d->amask));
        p->b = (uint16_t)(b - ((b >> s2) & d->amask));
    } else {
        p->a = (uint16_t)(a + (((RC_PROB_ONE - a) >> s1) & d->amask));
        p->b = (uint16_t)(b + (((RC_PROB_ONE - b) >> s2) & d->amask));
    }
    p->n = (uint16_t)(n + (n < d->nmax));
}

/* One decision. A context whose count has stopped at RC_COUNT_MAX is of
 * format 13 (d->nmax): its split (range >> 15) * p is the product of the
 * masked range exactly and fits 32 bits, its shifts are constants. */
static inline int rc_decode(RcDec *d, RcProb *p)
{
    const uint32_t a = p->a, b = p->b;
    int bit;
    if (RC_LIKELY(p->n == RC_COUNT_MAX)) {
        const uint32_t bound = (d->range >> RC_PROB_BITS) * ((a + b) >> 1);
        if (d->code < bound) {
            d->range = bound;
            p->a = (uint16_t)(a + ((RC_PROB_ONE - a) >> RC_S1_FINAL));
            p->b = (uint16_t)(b + ((RC_PROB_ONE - b) >> RC_S2_FINAL));
            bit = 0;
        } else {
            d->code -= bound;
            d->range -= bound;
            p->a = (uint16_t)(a - (a >> RC_S1_FINAL));
            p->b = (uint16_t)(b - (b >> RC_S2_FINAL));
            bit = 1;
        }
    } else {
        const uint32_t bound = rc_bound(d, (a + b) >> 1);
        if (d->code < bound) {
            d->range = bound;
            bit = 0;
        } else {
            d->code -= bound;
            d->range -= bound;
            bit = 1;
        }
        rc_dec_update(d, p, bit);
    }
    rc_dec_norm(d);
    return bit;
}

/* As rc_decode(), without a branch on the decision: masks pick the code
 * and range of either outcome, so a decision the caller does not branch
 * on (a sign) costs no misprediction. */
static inline int rc_decode_data(RcDec *d, RcProb *p)
{
    const uint32_t a = p->a, b = p->b;
    const int fin = p->n == RC_COUNT_MAX;
    const uint32_t bound = fin ? (d->range >> RC_PROB_BITS) * ((a + b) >> 1) : rc_bound(d, (a + b) >> 1);
    const int bit = d->code >= bound;
    const uint32_t m = 0u - (uint32_t)bit;
    d->code -= bound & m;
    d->range = bound ^ ((bound ^ (d->range - bound)) & m);
    if (fin) {
        /* x + ((ONE - x) >> s) = ((2^s - 1) x + ONE) >> s and
         * x - (x >> s) = ((2^s - 1) x + 2^s - 1) >> s: one product and
         * the addend picked by the mask */
        const uint32_t ka = (1u << RC_S1_FINAL) - 1, kb = (1u << RC_S2_FINAL) - 1;
        p->a = (uint16_t)((ka * a + (RC_PROB_ONE - ((RC_PROB_ONE - ka) & m))) >> RC_S1_FINAL);
        p->b = (uint16_t)((kb * b + (RC_PROB_ONE - ((RC_PROB_ONE - kb) & m))) >> RC_S2_FINAL);
    } else {
        rc_dec_update(d, p, bit);
    }
    rc_dec_norm(d);
    return bit;
}

/* A decision of probability 1/2, not adapted (the range halves: one byte
 * restores it). */
static inline int rc_decode_direct(RcDec *d)
{
    d->range >>= 1;
    const int bit = d->code >= d->range; /* no branch: a sign bit is data */
    d->code -= d->range & (0u - (uint32_t)bit);
    if (d->range < RC_TOP) d->range <<= 8, d->code = (d->code << 8) | rc_next(d);
    return bit;
}

/* The stream was read whole and no further: a first byte of 0 (what
 * every encoder writes; with any other the code can exceed the range),
 * no byte read past the end, none left over. */
static inline int rc_dec_exact(const RcDec *d, const uint8_t *start)
{
    return !d->over && d->p == d->end && d->end - start >= 5 && start[0] == 0;
}

/* Decisions under the context p, whose count has stopped at
 * RC_COUNT_MAX, while they are 1, at most max of them: the number of
 * 1s. Its estimates stay in registers until the run ends (the decisions
 * of rc_decode()). */
static inline int rc_decode_ones_final(RcDec *d, RcProb *p, int max)
{
    uint32_t a = p->a, b = p->b;
    int i = 0;
    for (; i < max; i++) {
        const uint32_t bound = (d->range >> RC_PROB_BITS) * ((a + b) >> 1);
        if (d->code < bound) {
            d->range = bound;
            a += (RC_PROB_ONE - a) >> RC_S1_FINAL, b += (RC_PROB_ONE - b) >> RC_S2_FINAL;
            rc_dec_norm(d);
            break;
        }
        d->code -= bound, d->range -= bound;
        a -= a >> RC_S1_FINAL, b -= b >> RC_S2_FINAL;
        rc_dec_norm(d);
    }
    p->a = (uint16_t)a, p->b = (uint16_t)b;
    return i;
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
    RcProb left_nb[32][2][2][4]; /* window flags bit 14: mode == L? by L, L == A, L == P and nb */
    int nb;                 /* window flags bit 14: the block's neighbour context 0..3, set
                             * before each mode (pnmf_residual_mode_nb()); -1 without the bit */
} RcModeCtx;

#define RC_MV_UNARY 8
#define RC_VEC_CANDS 4 /* a vector's candidates, at most (two before format 10) */
typedef struct RcVecCtx {
    RcProb same_ref[2];            /* t == the frame's last reference? by last != 0 */
    RcProb ref_tree[16];           /* t, 4 bits */
    RcProb zero[2][2][2];          /* component c == 0? by c, last difference zero, (c = 1) dy == 0 */
    RcProb sign[2];
    RcProb mag[2][4];              /* unary bins of |d| - 1, by c and min(bin, 3) */
    RcProb merge[2][2];            /* format 7: a candidate? by two candidates, the last vector one */
    RcProb merge_idx;              /* which of two (of more: the first?) */
    RcProb merge_idx2[RC_VEC_CANDS - 2]; /* window flags bit 15: of more than two, the i-th? (i >= 1) */
    RcProb zero_nb[2][2][2][2][2]; /* window flags bit 14: zero? by c, z0, z1, lsh, t != lastref */
    RcProb ref_nb[3][16];          /* window flags bit 14: t's 4 bits by min(lastref, 2) */
    int on;                        /* window flags bit 14: the contexts above, RC_MV_UNARY_NB bins */
    int lsh;                       /* with on: the block to the left is shifted (set before each vector) */
    int tnew;                      /* with on: the vector's reference is not lastref (set by its reference) */
} RcVecCtx;

/* Window flags bit 14: unary bins of a vector difference's magnitude. */
#define RC_MV_UNARY_NB 16

/* Format 7: before a vector, up to two candidates it may copy with no
 * reference or difference coded: the vector (dy, dx, t) of the block above
 * when that block is shifted, then the one the frame had before its last
 * change of vector; each only when it differs from the implicit
 * prediction (reference lastref, the last vector of lastref) and from the
 * ones before it. Window flags bit 15 (format 10) adds two more sources
 * after them (up to four candidates). */
typedef struct RcVecCand {
    int n;
    int16_t c[RC_VEC_CANDS][3];
} RcVecCand;

/* The candidates of ns sources src[] ((dy, dx, t), NULL or t -1 where none). */
static inline void rc_vec_cands(RcVecCand *k, const int16_t *const *src, int ns, int lastref, int ly, int lx)
{
    k->n = 0;
    for (int i = 0; i < ns; i++) {
        const int16_t *v = src[i];
        if (!v || v[2] < 0 || (v[2] == lastref && v[0] == ly && v[1] == lx)) continue;
        int dup = 0;
        for (int e = 0; e < k->n && !dup; e++) dup = k->c[e][0] == v[0] && k->c[e][1] == v[1] && k->c[e][2] == v[2];
        if (dup) continue;
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

/* Fresh contexts, without window flags bit 14 (the caller sets nb, on). */
static inline void rc_mode_ctx_init(RcModeCtx *c)
{
    rc_probs_init(&c->left[0][0][0], offsetof(RcModeCtx, nb) / sizeof(RcProb));
    c->nb = -1;
}
static inline void rc_vec_ctx_init(RcVecCtx *c)
{
    rc_probs_init(c->same_ref, offsetof(RcVecCtx, on) / sizeof(RcProb));
    c->on = c->lsh = c->tnew = 0;
}

/* The context of the question mode == L?: by its neighbour context too
 * under window flags bit 14. */
static inline RcProb *rc_mode_left(RcModeCtx *c, int L, int A, int P)
{
    return c->nb >= 0 ? &c->left_nb[L][L == A][L == P][c->nb] : &c->left[L][L == A][L == P];
}

/* The context of a vector component's zero? question (rc_decode_mvd()). */
static inline RcProb *rc_mvd_zero(RcVecCtx *c, int comp, int z0, int z1)
{
    return c->on ? &c->zero_nb[comp][z0][z1][c->lsh][c->tnew] : &c->zero[comp][z0][z1];
}

/* The contexts of a reference's 4 bits after lastref. */
static inline RcProb *rc_ref_tree(RcVecCtx *c, int lastref)
{
    return c->on ? c->ref_nb[lastref < 2 ? lastref : 2] : c->ref_tree;
}

/* A mode: equal to L?, to A?, to P? (each asked only when it can be
 * new), else its 5 bits under the tree of L. */
static inline int rc_decode_mode(RcDec *d, RcModeCtx *c, int L, int A, int P)
{
    if (L >= 0 && !rc_decode(d, rc_mode_left(c, L, A, P))) return L;
    if (A >= 0 && A != L && !rc_decode(d, &c->above[A][A == P])) return A;
    if (P >= 0 && P != L && P != A && !rc_decode(d, &c->prev[P])) return P;
    RcProb *t = c->tree[L + 1];
    int node = 1;
    for (int i = 0; i < 5; i++) node = 2 * node + rc_decode(d, &t[node]);
    return node - 32;
}

/* One vector component's difference v (|v| <= 2 * PNMF_RES_MAX_MV): zero?,
 * sign, |v| - 1 in unary up to RC_MV_UNARY (RC_MV_UNARY_NB with c->on),
 * the rest as an Exp-Golomb code
 * of direct bits. z0: the previous vector's difference was (0, 0); z1: for
 * dx, dy == 0. Returns the difference, or INT32_MIN when the Exp-Golomb
 * prefix is longer than any difference needs. */
static inline int32_t rc_decode_mvd(RcDec *d, RcVecCtx *c, int comp, int z0, int z1)
{
    if (!rc_decode(d, rc_mvd_zero(c, comp, z0, z1))) return 0;
    const int neg = rc_decode_data(d, &c->sign[comp]);
    const int un = c->on ? RC_MV_UNARY_NB : RC_MV_UNARY;
    int a = 0;
    while (a < 3 && rc_decode(d, &c->mag[comp][a])) a++;
    if (a == 3) { /* the bins from 3 on under one context */
        RcProb *p = &c->mag[comp][3];
        if (p->n == RC_COUNT_MAX)
            a += rc_decode_ones_final(d, p, un - 3);
        else
            while (a < un && rc_decode(d, p)) a++;
    }
    if (a == un) {
        int n = 0;
        while (rc_decode_direct(d))
            if (++n > 16) return INT32_MIN;
        unsigned x = 1;
        for (int i = 0; i < n; i++) x = (x << 1) | (unsigned)rc_decode_direct(d);
        a = un + (int)(x - 1);
    }
    return neg ? -(a + 1) : a + 1;
}

/* Window flags bit 23 (format 20): a warp parameter's difference d from
 * the frame before's: a decision under p (0: d = 0), else the sign as a
 * direct decision (1: negative) and |d| as an Exp-Golomb number of direct
 * decisions (n ones, a zero, n bits). Returns d, or INT32_MIN when n is
 * over 18. */
#define RC_WARP_MAX_EXP 18
static inline int32_t rc_decode_warp(RcDec *d, RcProb *p)
{
    if (!rc_decode(d, p)) return 0;
    const int neg = rc_decode_direct(d);
    int n = 0;
    while (rc_decode_direct(d))
        if (++n > RC_WARP_MAX_EXP) return INT32_MIN;
    int32_t x = 1;
    for (int i = 0; i < n; i++) x = (x << 1) | rc_decode_direct(d);
    return neg ? -x : x;
}

/* Whether the next vector is a candidate of k, and which (-1: none; the
 * question is asked only when there are candidates); lm: the frame's last
 * vector was one. */
static inline int rc_decode_merge(RcDec *d, RcVecCtx *c, const RcVecCand *k, int lm)
{
    if (!k->n || !rc_decode(d, &c->merge[k->n >= 2][lm])) return -1;
    int i = 0; /* the index in truncated unary: the first decision under merge_idx */
    while (i < k->n - 1 && rc_decode(d, i ? &c->merge_idx2[i - 1] : &c->merge_idx)) i++;
    return i;
}

/* The reference t of the next vector: equal to the frame's last one
 * (lastref)?, else its 4 bits. Its differences (dy, dx) from the last
 * vector of t follow (rc_decode_mvd(), z0 as there). */
static inline int rc_decode_ref(RcDec *d, RcVecCtx *c, int lastref)
{
    c->tnew = 0;
    if (!rc_decode(d, &c->same_ref[lastref != 0])) return lastref;
    RcProb *rt = rc_ref_tree(c, lastref);
    int node = 1;
    for (int i = 0; i < 4; i++) node = 2 * node + rc_decode(d, &rt[node]);
    c->tnew = node - 16 != lastref;
    return node - 16;
}

/* Window flags bit 17 (format 12): after a vector, whether its block has
 * a second hypothesis, and if so that one's reference and vector. */
typedef struct RcBiCtx {
    RcProb on[3];   /* a second hypothesis? by how many of the left and above blocks have one */
    RcProb ref[16]; /* its reference t2, 4 bits */
    RcVecCtx d;     /* its vector's differences: zero, sign and mag of their own (on = 0) */
} RcBiCtx;

static inline void rc_bi_ctx_init(RcBiCtx *c)
{
    rc_probs_init(c->on, 3);
    rc_probs_init(c->ref, 16);
    rc_vec_ctx_init(&c->d);
}

/* The second hypothesis's reference t2, or -1 for none; ctx: the left
 * and above blocks with one (0..2). Its differences follow, each
 * rc_decode_mvd(d, &c->d, comp, 1, comp && dy's difference == 0). */
static inline int rc_decode_bi(RcDec *d, RcBiCtx *c, int ctx)
{
    if (!rc_decode(d, &c->on[ctx])) return -1;
    int node = 1;
    for (int i = 0; i < 4; i++) node = 2 * node + rc_decode(d, &c->ref[node]);
    return node - 16;
}

/* ---- the residual layer's levels (format 6) ------------------------------ */

#define RC_LEV_UNARY 14 /* unary bins of a magnitude before the Exp-Golomb escape */
#define RC_LEV_CLASSES 6
#define RC_LEV_KINDS 4 /* rc_lev_kind() */
#define RC_TX8_POS 14  /* rc_tx8_pos() */

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
    /* format 9: the 8x8 transform (tx8.h) */
    RcProb t8[RC_LEV_KINDS][3];                   /* one 8x8 transform? by the neighbours that are */
    RcProb sig8[RC_LEV_KINDS][RC_TX8_POS];        /* level != 0? by class of zigzag position */
    RcProb last8[RC_LEV_KINDS][RC_TX8_POS];       /* the last one? by class of zigzag position */
    RcProb tgt1_8[RC_LEV_KINDS][5];               /* as tgt1 */
    RcProb tmag8[RC_LEV_KINDS][5];                /* as tmag */
    /* format 9: directional intra (intra.h) */
    RcProb idir[2][3];                            /* a direction? by frame 0 or not, prediction 5..7 */
    RcProb idk[3][3];                             /* its index: high bit, low bit by the high one */
} RcLevCtx;

/* The context class of zigzag position i (0..62) of an 8x8 block: one per
 * position where levels are frequent, wider toward the high frequencies. */
static inline int rc_tx8_pos(int i) { return i < 8 ? i : i < 16 ? 8 + (i - 8) / 4 : i < 32 ? 10 + (i - 16) / 8 : 12 + (i - 32) / 16; }

static inline int rc_lev_kind(int j, int mode) { return (j != 0) | ((mode & 7) == 3 || (mode & 7) >= 5) << 1; }

static inline void rc_lev_ctx_init(RcLevCtx *c) { rc_probs_init(&c->pzero[0][0], sizeof(*c) / sizeof(RcProb)); }

static inline int rc_lev_class(int s)
{
    static const uint8_t cls[10] = { 0, 1, 2, 3, 3, 4, 4, 4, 4, 5 }; /* a lookup, not a chain of branches */
    return cls[s < 9 ? s : 9];
}

/* A magnitude's remainder r >= 0 after its first bins: unary under
 * ctx[min(i, 3) * stride] up to RC_LEV_UNARY (stride: the distance between
 * the contexts of bins i and i + 1, 0 for one context), then Exp-Golomb of
 * direct bits. Returns r, or -1 for an escape longer than 16 bits. The
 * bins under one context whose count has stopped run in
 * rc_decode_ones_final(). */
static inline int rc_decode_lev_rem(RcDec *d, RcProb *ctx, int stride)
{
    int i = 0;
    if (stride)
        for (; i < 3; i++)
            if (!rc_decode(d, ctx + i * stride)) return i;
    RcProb *p = ctx + 3 * stride;
    if (p->n == RC_COUNT_MAX) {
        i += rc_decode_ones_final(d, p, RC_LEV_UNARY - i);
        if (i < RC_LEV_UNARY) return i;
    } else {
        for (; i < RC_LEV_UNARY; i++)
            if (!rc_decode(d, p)) return i;
    }
    int n = 0;
    while (rc_decode_direct(d))
        if (++n > 16) return -1;
    unsigned x = 1;
    for (int b = 0; b < n; b++) x = (x << 1) | (unsigned)rc_decode_direct(d);
    return RC_LEV_UNARY + (int)(x - 1);
}

/* The level functions below run the decoder on a copy of *d held in
 * registers, written back at the end: through the pointer every decision
 * would store and reload the range and code (a byte store may alias them). */

/* The levels of one pixel-coded block, h x w (w <= 8) in row-major order, into
 * lev[]: each level != 0?, its sign, |level| > 1?, |level| - 2 (the
 * contexts by its left and above levels). Returns -1 when a magnitude
 * exceeds max_l. */
static inline int rc_decode_pixel_levels(RcDec *dp, RcLevCtx *c, int kind, int h, int w, int16_t *lev, int max_l)
{
    RcDec d = *dp;
    /* the kind's contexts copied to one block on the stack, written back
     * at the end: one base address for all of them leaves the registers
     * to the decoder and the loop */
    struct {
        RcProb z[RC_LEV_CLASSES], g[RC_LEV_CLASSES], m[RC_LEV_CLASSES][4], s[3];
    } k;
    memcpy(k.z, c->pzero[kind], sizeof(k.z));
    memcpy(k.g, c->pgt1[kind], sizeof(k.g));
    memcpy(k.m, c->pmag[kind], sizeof(k.m));
    memcpy(k.s, c->psign[kind], sizeof(k.s));
    int ret = 0;
    /* the class by rc_lev_class() of a sum of two magnitudes each capped
     * at 9 (the classes do not tell sums from 9 on apart) */
    static const uint8_t cls18[19] = { 0, 1, 2, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5 };
    /* per column x, at e[x + 1]: the level l last decoded in it and its
     * magnitude m capped at 9, as m + l * 2^16 (|l| <= max_l, under 2^15
     * from every reader); e[0], left of a row's first sample, stays 0.
     * At the sample at x, e[x] holds its left neighbour and e[x + 1] the
     * one above it: the sum of their m is the low byte of the sum of the
     * entries, and a zero level one store. */
    int32_t e[9] = { 0 };
    for (int y = 0; y < h; y++) {
        int16_t *out = lev + y * w;
        for (int x = 0; x < w; x++) {
            int cls;
            if (!(e[x] | e[x + 1]) && k.z[0].n == RC_COUNT_MAX) {
                /* a run of samples of class 0 (no level left or above),
                 * their context's estimates in registers: the decisions
                 * of rc_decode() for a count that has stopped */
                uint32_t za = k.z[0].a, zb = k.z[0].b;
                int one = 0;
                for (;;) {
                    const uint32_t bound = (d.range >> RC_PROB_BITS) * ((za + zb) >> 1);
                    if (d.code >= bound) {
                        d.code -= bound, d.range -= bound;
                        za -= za >> RC_S1_FINAL, zb -= zb >> RC_S2_FINAL;
                        one = 1;
                        rc_dec_norm(&d);
                        break;
                    }
                    d.range = bound;
                    za += (RC_PROB_ONE - za) >> RC_S1_FINAL, zb += (RC_PROB_ONE - zb) >> RC_S2_FINAL;
                    rc_dec_norm(&d);
                    out[x] = 0; /* e[x + 1] is 0 already */
                    if (++x == w || e[x + 1]) break;
                }
                k.z[0].a = (uint16_t)za, k.z[0].b = (uint16_t)zb;
                if (!one) {
                    x--; /* the loop's step */
                    continue;
                }
                cls = 0;
            } else {
                cls = cls18[((uint32_t)e[x] + (uint32_t)e[x + 1]) & 0xFF];
                if (!rc_decode(&d, &k.z[cls])) {
                    e[x + 1] = 0, out[x] = 0;
                    continue;
                }
            }
            const int sn = (e[x] >> 16) + (e[x + 1] >> 16);
            const int neg = rc_decode_data(&d, &k.s[(sn > 0) - (sn < 0) + 1]);
            int a = 1;
            if (rc_decode(&d, &k.g[cls])) {
                const int r = rc_decode_lev_rem(&d, k.m[cls], 1);
                if (r < 0 || r + 2 > max_l) {
                    ret = -1;
                    goto end;
                }
                a = r + 2;
            }
            const int l = neg ? -a : a;
            e[x + 1] = (a < 9 ? a : 9) + l * 65536;
            out[x] = (int16_t)l;
        }
    }
end:
    memcpy(c->pzero[kind], k.z, sizeof(k.z));
    memcpy(c->pgt1[kind], k.g, sizeof(k.g));
    memcpy(c->pmag[kind], k.m, sizeof(k.m));
    memcpy(c->psign[kind], k.s, sizeof(k.s));
    *dp = d;
    return ret;
}

/* The 64 levels of one transform block into lev[]: its four quarters, 16
 * each in zigzag order; per quarter, whether it has a level, the
 * positions of its levels (significant?, the last?), then from the last
 * back to the first the magnitudes (> 1?, |level| - 2) and a direct sign
 * bit. Returns -1 when a magnitude exceeds max_l. */
static inline int rc_decode_transform_levels(RcDec *dp, RcLevCtx *c, int kind, int16_t *lev, int max_l)
{
    RcDec d = *dp;
    /* the kind's contexts of the levels on the stack, one base address (as
     * in rc_decode_pixel_levels()), copied at the block's first quarter
     * with a level: many blocks have none */
    struct {
        RcProb sig[15], last[15], tgt1[5], tmag[5];
    } k;
    RcProb *sig = k.sig, *last = k.last, *tgt1 = k.tgt1, *tmag = k.tmag;
    int coded[4], ret = 0, copied = 0;
    memset(lev, 0, 64 * sizeof(*lev));
    for (int sb = 0; sb < 4; sb++) {
        int16_t *lv = lev + 16 * sb;
        const int nb = ((sb & 1) ? coded[sb - 1] : 0) + ((sb & 2) ? coded[sb - 2] : 0);
        coded[sb] = rc_decode(&d, &c->cbf[kind][sb][nb]);
        if (!coded[sb]) continue;
        if (!copied) {
            memcpy(k.sig, c->sig[kind], sizeof(k.sig));
            memcpy(k.last, c->last[kind], sizeof(k.last));
            memcpy(k.tgt1, c->tgt1[kind], sizeof(k.tgt1));
            memcpy(k.tmag, c->tmag[kind], sizeof(k.tmag));
            copied = 1;
        }
        /* the positions of the levels, then their magnitudes from the last back */
        uint8_t pos[16];
        int n = 0, i = 0;
        for (; i < 15; i++)
            if (rc_decode(&d, &sig[i])) {
                pos[n++] = (uint8_t)i;
                if (rc_decode(&d, &last[i])) break;
            }
        if (i == 15) pos[n++] = 15; /* no level before it was the last: it has one */
        int gt1 = 0, ones = 0;
        while (n--) {
            int a = 1;
            if (rc_decode(&d, &tgt1[gt1 ? 0 : 1 + (ones < 3 ? ones : 3)])) {
                const int r = rc_decode_lev_rem(&d, tmag + (gt1 < 4 ? gt1 : 4), 0);
                if (r < 0 || r + 2 > max_l) {
                    ret = -1;
                    goto end;
                }
                a = r + 2;
                gt1++;
            } else {
                ones++;
            }
            lv[pos[n]] = (int16_t)(rc_decode_direct(&d) ? -a : a);
        }
    }
end:
    if (copied) {
        memcpy(c->sig[kind], k.sig, sizeof(k.sig));
        memcpy(c->last[kind], k.last, sizeof(k.last));
        memcpy(c->tgt1[kind], k.tgt1, sizeof(k.tgt1));
        memcpy(c->tmag[kind], k.tmag, sizeof(k.tmag));
    }
    *dp = d;
    return ret;
}

#endif /* PNMF_RANGECODER_H */
