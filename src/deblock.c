/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The in-loop deblocking filter of the residual layer (deblock.h,
 * docs/format.md "Deblocking filter"): the edge filter of H.264's luma
 * for boundary strengths below 4 (ITU-T H.264 8.7.2.3), with its alpha,
 * beta and tc0 tables, on pnmf's blocks and quantizers. */
#include <string.h>
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
#include <emmintrin.h>
#endif

#include "deblock.h"
#include "internal.h"

/* alpha and beta by index 16..51 (0 below 16: nothing is filtered). */
static const uint8_t alpha_tab[36] = { 4,  4,  5,  6,  7,  8,  9,  10, 12,  13,  15,  17,  20,  22,  25,  28,  32,  36,
                                       40, 45, 50, 56, 63, 71, 80, 90, 101, 113, 127, 144, 162, 182, 203, 226, 255, 255 };
static const uint8_t beta_tab[36] = { 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 6, 6, 7, 7, 8, 8, 9, 9,
                                      10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15, 16, 16, 17, 17, 18, 18 };
/* tc0 by index 17..51 and strength class 1..3 (0 below 17). */
static const uint8_t tc0_tab[35][3] = {
    { 0, 0, 1 },  { 0, 0, 1 },  { 0, 0, 1 },  { 0, 0, 1 },   { 0, 1, 1 },   { 0, 1, 1 },   { 1, 1, 1 },
    { 1, 1, 1 },  { 1, 1, 1 },  { 1, 1, 1 },  { 1, 1, 2 },   { 1, 1, 2 },   { 1, 1, 2 },   { 1, 1, 2 },
    { 1, 2, 3 },  { 1, 2, 3 },  { 2, 2, 3 },  { 2, 2, 4 },   { 2, 3, 4 },   { 2, 3, 4 },   { 3, 3, 5 },
    { 3, 4, 6 },  { 3, 4, 6 },  { 4, 5, 7 },  { 4, 5, 8 },   { 4, 6, 9 },   { 5, 7, 10 },  { 6, 8, 11 },
    { 6, 8, 13 }, { 7, 10, 14 }, { 8, 11, 16 }, { 9, 12, 18 }, { 10, 13, 20 }, { 11, 15, 23 }, { 13, 17, 25 },
};
/* The transform's step at qp 0..5 in 1/16 gray level (0.625 * 2^(qp/6)),
 * doubling every 6. */
static const uint8_t qstep16[6] = { 10, 11, 13, 14, 16, 18 };

int pnmf_deblock_step_index(int step16)
{
    int q = 0;
    while (q < PNMF_RES_MAX_QP && (qstep16[(q + 1) % 6] << ((q + 1) / 6)) <= step16) q++;
    return q;
}

int pnmf_deblock_alpha(int index) { return index < 16 ? 0 : alpha_tab[index - 16]; }
int pnmf_deblock_beta(int index) { return index < 16 ? 0 : beta_tab[index - 16]; }
int pnmf_deblock_tc0(int index, int strength) { return index < 17 ? 0 : tc0_tab[index - 17][strength - 1]; }

static inline int iabs(int v) { return v < 0 ? -v : v; }
static inline int clip3(int lo, int hi, int v) { return v < lo ? lo : v > hi ? hi : v; }

/* The thresholds of one edge, looked up once for all its lines. */
typedef struct Edge {
    int alpha, beta, tc0;
} Edge;

static inline void filter_line(uint8_t *p, int s, const Edge *e)
{
    const int p0 = p[-s], q0 = p[0];
    if (iabs(p0 - q0) >= e->alpha) return;
    const int p1 = p[-2 * s], q1 = p[s];
    if (iabs(p1 - p0) >= e->beta || iabs(q1 - q0) >= e->beta) return;
    const int p2 = p[-3 * s], q2 = p[2 * s];
    const int ap = iabs(p2 - p0) < e->beta, aq = iabs(q2 - q0) < e->beta;
    const int tc = e->tc0 + ap + aq;
    const int delta = clip3(-tc, tc, ((q0 - p0) * 4 + (p1 - q1) + 4) >> 3);
    p[-s] = (uint8_t)pnmf_residual_clip8(p0 + delta);
    p[0] = (uint8_t)pnmf_residual_clip8(q0 - delta);
    const int avg = (p0 + q0 + 1) >> 1;
    if (ap) p[-2 * s] = (uint8_t)(p1 + clip3(-e->tc0, e->tc0, (p2 + avg - 2 * p1) >> 1));
    if (aq) p[s] = (uint8_t)(q1 + clip3(-e->tc0, e->tc0, (q2 + avg - 2 * q1) >> 1));
}

static void edge_init(Edge *e, int index, int strength)
{
    e->alpha = pnmf_deblock_alpha(index), e->beta = pnmf_deblock_beta(index);
    e->tc0 = pnmf_deblock_tc0(index, strength);
}

#define BF_INTRA 1
#define BF_CODED 2
#define BF_TRANSFORM 4
typedef struct PnmfDeblockBlock BlockInfo;

/* The strength class of the edge between blocks a and b. */
static int strength(const BlockInfo *a, const BlockInfo *b)
{
    const int f = a->flags | b->flags;
    if (f & BF_INTRA) return PNMF_DEBLOCK_INTRA;
    if (f & BF_CODED) return PNMF_DEBLOCK_CODED;
    /* different predictions, or copies of different vectors or references
     * (only a copy has a vector or a reference: the key holds them) */
    return a->key != b->key ? PNMF_DEBLOCK_MOTION : PNMF_DEBLOCK_SAME;
}

/* The strength class of the 4x4 edge inside transform block a between
 * its quarters s0 and s1. */
static int strength_inner(const BlockInfo *a, int s0, int s1)
{
    if (a->flags & BF_INTRA) return PNMF_DEBLOCK_INTRA;
    return (a->nz >> s0 & 1) || (a->nz >> s1 & 1) ? PNMF_DEBLOCK_CODED : PNMF_DEBLOCK_SAME;
}

#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
/* filter_line on 8 lines at once, one per 16-bit lane: p2 .. q2 are the
 * six samples across the edge. Returns the filtered p1, p0, q0, q1 in
 * place. The arithmetic is filter_line's: every intermediate value fits
 * in 16 bits, a line that fails a threshold gets zero changes, and the
 * unsigned saturation of the final pack is filter_line's clip to 0..255
 * (p1 and q1 move towards a mean of samples, so they never leave it). */
static inline void filter8(__m128i p2, __m128i *p1, __m128i *p0, __m128i *q0, __m128i *q1, __m128i q2, const Edge *e)
{
    const __m128i alpha = _mm_set1_epi16((short)e->alpha), beta = _mm_set1_epi16((short)e->beta);
    const __m128i tc0 = _mm_set1_epi16((short)e->tc0), ntc0 = _mm_sub_epi16(_mm_setzero_si128(), tc0);
    const __m128i P1 = *p1, P0 = *p0, Q0 = *q0, Q1 = *q1;
#define ABSD(a, b) _mm_max_epi16(_mm_sub_epi16(a, b), _mm_sub_epi16(b, a))
    const __m128i on = _mm_and_si128(_mm_cmplt_epi16(ABSD(P0, Q0), alpha),
                                     _mm_and_si128(_mm_cmplt_epi16(ABSD(P1, P0), beta), _mm_cmplt_epi16(ABSD(Q1, Q0), beta)));
    const __m128i ap = _mm_and_si128(on, _mm_cmplt_epi16(ABSD(p2, P0), beta));
    const __m128i aq = _mm_and_si128(on, _mm_cmplt_epi16(ABSD(q2, Q0), beta));
#undef ABSD
    /* the masks are -1 where true: tc = tc0 + ap + aq */
    const __m128i tc = _mm_sub_epi16(_mm_sub_epi16(tc0, ap), aq), ntc = _mm_sub_epi16(_mm_setzero_si128(), tc);
    __m128i d = _mm_add_epi16(_mm_slli_epi16(_mm_sub_epi16(Q0, P0), 2), _mm_sub_epi16(P1, Q1));
    d = _mm_srai_epi16(_mm_add_epi16(d, _mm_set1_epi16(4)), 3);
    d = _mm_and_si128(on, _mm_min_epi16(_mm_max_epi16(d, ntc), tc));
    const __m128i avg = _mm_srli_epi16(_mm_add_epi16(_mm_add_epi16(P0, Q0), _mm_set1_epi16(1)), 1);
    __m128i dp = _mm_srai_epi16(_mm_sub_epi16(_mm_add_epi16(p2, avg), _mm_slli_epi16(P1, 1)), 1);
    __m128i dq = _mm_srai_epi16(_mm_sub_epi16(_mm_add_epi16(q2, avg), _mm_slli_epi16(Q1, 1)), 1);
    dp = _mm_and_si128(ap, _mm_min_epi16(_mm_max_epi16(dp, ntc0), tc0));
    dq = _mm_and_si128(aq, _mm_min_epi16(_mm_max_epi16(dq, ntc0), tc0));
    *p1 = _mm_add_epi16(P1, dp), *p0 = _mm_add_epi16(P0, d);
    *q0 = _mm_sub_epi16(Q0, d), *q1 = _mm_add_epi16(Q1, dq);
}

/* The 8x8 byte transpose of the low halves of r[0..7], into r[0..7]. */
static inline void transpose8(__m128i r[8])
{
    const __m128i a0 = _mm_unpacklo_epi8(r[0], r[1]), a1 = _mm_unpacklo_epi8(r[2], r[3]);
    const __m128i a2 = _mm_unpacklo_epi8(r[4], r[5]), a3 = _mm_unpacklo_epi8(r[6], r[7]);
    const __m128i b0 = _mm_unpacklo_epi16(a0, a1), b1 = _mm_unpackhi_epi16(a0, a1);
    const __m128i b2 = _mm_unpacklo_epi16(a2, a3), b3 = _mm_unpackhi_epi16(a2, a3);
    const __m128i c0 = _mm_unpacklo_epi32(b0, b2), c1 = _mm_unpackhi_epi32(b0, b2);
    const __m128i c2 = _mm_unpacklo_epi32(b1, b3), c3 = _mm_unpackhi_epi32(b1, b3);
    r[0] = c0, r[1] = _mm_srli_si128(c0, 8), r[2] = c1, r[3] = _mm_srli_si128(c1, 8);
    r[4] = c2, r[5] = _mm_srli_si128(c2, 8), r[6] = c3, r[7] = _mm_srli_si128(c3, 8);
}

/* Lines [l0, l1) (at most 8) of a vertical edge at column at, with
 * samples at - 4 .. at + 3 in the frame: rows loaded, transposed so that
 * each column is a vector, filtered, transposed back and stored. */
static void vedge_simd(uint8_t *D, int cols, int at, int l0, int l1, const Edge *e)
{
    const __m128i z = _mm_setzero_si128();
    __m128i r[8];
    const int n = l1 - l0;
    for (int i = 0; i < 8; i++)
        r[i] = i < n ? _mm_loadl_epi64((const __m128i *)(D + (size_t)(l0 + i) * cols + at - 4)) : z;
    transpose8(r);
    __m128i p1 = _mm_unpacklo_epi8(r[2], z), p0 = _mm_unpacklo_epi8(r[3], z);
    __m128i q0 = _mm_unpacklo_epi8(r[4], z), q1 = _mm_unpacklo_epi8(r[5], z);
    filter8(_mm_unpacklo_epi8(r[1], z), &p1, &p0, &q0, &q1, _mm_unpacklo_epi8(r[6], z), e);
    const __m128i a = _mm_packus_epi16(p1, p0), b = _mm_packus_epi16(q0, q1);
    r[2] = a, r[3] = _mm_srli_si128(a, 8), r[4] = b, r[5] = _mm_srli_si128(b, 8);
    transpose8(r);
    for (int i = 0; i < n; i++) _mm_storel_epi64((__m128i *)(D + (size_t)(l0 + i) * cols + at - 4), r[i]);
}

/* Lines [l0, l1) (at most 8) of a horizontal edge at row at: the rows
 * at - 3 .. at + 2, each a vector over the lines. */
static void hedge_simd(uint8_t *D, int cols, int at, int l0, int l1, const Edge *e)
{
    const __m128i z = _mm_setzero_si128();
    const int n = l1 - l0;
    uint8_t *p = D + (size_t)at * cols + l0;
    __m128i v[6];
    for (int i = 0; i < 6; i++) {
        const uint8_t *row = p + (ptrdiff_t)(i - 3) * cols;
        if (n == 8) {
            v[i] = _mm_loadl_epi64((const __m128i *)row);
        } else if (n == 4) {
            int32_t t;
            memcpy(&t, row, 4);
            v[i] = _mm_cvtsi32_si128(t);
        } else {
            uint8_t t[8] = { 0 };
            memcpy(t, row, (size_t)n);
            v[i] = _mm_loadl_epi64((const __m128i *)t);
        }
        v[i] = _mm_unpacklo_epi8(v[i], z);
    }
    filter8(v[0], &v[1], &v[2], &v[3], &v[4], v[5], e);
    for (int i = 1; i < 5; i++) {
        uint8_t *row = p + (ptrdiff_t)(i - 3) * cols;
        const __m128i b = _mm_packus_epi16(v[i], v[i]);
        if (n == 8) {
            _mm_storel_epi64((__m128i *)row, b);
        } else if (n == 4) {
            const int32_t t = _mm_cvtsi128_si32(b);
            memcpy(row, &t, 4);
        } else {
            uint8_t t[8];
            _mm_storel_epi64((__m128i *)t, b);
            memcpy(row, t, (size_t)n);
        }
    }
}
#endif

/* Filter the lines [l0, l1) of the edge at position at (a column for a
 * vertical edge, a row for a horizontal one). */
static void filter_edge(uint8_t *D, int cols, int vertical, int at, int l0, int l1, int index, int s)
{
    if (!s) return;
    Edge e;
    edge_init(&e, index, s);
    if (!e.alpha) return;
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
    /* at most 8 lines an edge (a block's side); a vertical edge's SIMD
     * load reads columns at - 4 .. at + 3, so it needs at + 4 <= cols */
    if (l1 - l0 <= 8 && (!vertical || at + 4 <= cols)) {
        if (vertical)
            vedge_simd(D, cols, at, l0, l1, &e);
        else
            hedge_simd(D, cols, at, l0, l1, &e);
        return;
    }
#endif
    if (vertical)
        for (int y = l0; y < l1; y++) filter_line(D + (size_t)y * cols + at, 1, &e);
    else
        for (int x = l0; x < l1; x++) filter_line(D + (size_t)at * cols + x, cols, &e);
}

/* A transform block's middle edge, lines [l0, l1), its first half of
 * strength s0 and its second of s1: the lines are filtered apart, so
 * halves of one strength are one call over both. */
static void inner_edge(uint8_t *D, int cols, int vertical, int at, int l0, int l1, int index, int s0, int s1)
{
    if (s0 == s1) {
        filter_edge(D, cols, vertical, at, l0, l1, index, s0);
    } else {
        filter_edge(D, cols, vertical, at, l0, l0 + 4, index, s0);
        filter_edge(D, cols, vertical, at, l0 + 4, l1, index, s1);
    }
}

void pnmf_deblock_frame(const PnmfResidual *r, int j, const uint8_t *P, const uint8_t *Pp, uint8_t *D)
{
    const int nb = r->bx * r->by, rows = r->rows, cols = r->cols;
    const uint8_t *modes = r->modes + (size_t)j * nb;
    const int16_t *lev = r->lev + r->start[j];
    const int16_t *mv = r->mv + 2 * r->mvstart[j];
    const uint8_t *mvref = r->mvref + r->mvstart[j];
    const int qp = pnmf_residual_frame_qp(r, j), qs = pnmf_deblock_step_index(pnmf_residual_frame_step(r, j));
    /* every edge's index is qp, qs or their mean: below 16 none is filtered */
    if (!pnmf_deblock_alpha(qp > qs ? qp : qs)) return;
    const int gy = r->gmv[2 * j], gx = r->gmv[2 * j + 1];
    BlockInfo *bi = r->dbk;
    /* block b's rectangle (pnmf_residual_block()) stepped along, not divided out */
    for (int b = 0, y0 = 0, x0 = 0; b < nb; b++, x0 = x0 + PNMF_RES_BLOCK < cols ? x0 + PNMF_RES_BLOCK : (y0 += PNMF_RES_BLOCK, 0)) {
        const int y1 = y0 + PNMF_RES_BLOCK < rows ? y0 + PNMF_RES_BLOCK : rows;
        const int x1 = x0 + PNMF_RES_BLOCK < cols ? x0 + PNMF_RES_BLOCK : cols;
        const int m = modes[b];
        BlockInfo *o = &bi[b];
        if (m == PNMF_RES_MODEL) { /* an uncoded model copy, the commonest block: what the switch below gives */
            o->flags = 0, o->q = (uint8_t)qs, o->nz = 0, o->dy = o->dx = 0, o->t = 0;
            o->pred = PNMF_DEBLOCK_MODEL;
            o->key = PNMF_DEBLOCK_MODEL;
            continue;
        }
        if (m == PNMF_RES_PALETTE) { /* window flags bit 13: intra, of the pixel step's index */
            o->flags = BF_INTRA, o->q = (uint8_t)qs, o->nz = 0, o->dy = o->dx = 0, o->t = 0;
            o->pred = PNMF_DEBLOCK_COPY;
            o->key = PNMF_DEBLOCK_COPY;
            continue;
        }
        o->flags = (uint8_t)((pnmf_residual_is_intra(m) ? BF_INTRA : 0) | (m & PNMF_RES_CODED ? BF_CODED : 0) |
                             (m & PNMF_RES_TRANSFORM ? BF_TRANSFORM : 0));
        o->q = (uint8_t)(m & PNMF_RES_TRANSFORM ? qp : qs);
        o->nz = 0, o->dy = o->dx = 0, o->t = 0;
        /* what the prediction copies: the previous prediction and a motion
         * prediction where the model is still are copies of D_{j-1} */
        o->pred = PNMF_DEBLOCK_COPY;
        switch (m & 7) {
        case PNMF_RES_MODEL: o->pred = PNMF_DEBLOCK_MODEL; break;
        case PNMF_RES_PREVIOUS: o->dy = (int16_t)gy, o->dx = (int16_t)gx; break;
        case PNMF_RES_MOTION:
            if (!pnmf_residual_model_still(P, Pp, cols, y0, y1, x0, x1)) o->pred = PNMF_DEBLOCK_MOVED;
            break;
        case PNMF_RES_SHIFTED: o->dy = mv[0], o->dx = mv[1], o->t = *mvref++, mv += 2; break;
        default: break; /* intra: its class decides */
        }
        o->key = o->pred | (uint64_t)(uint16_t)o->dy << 8 | (uint64_t)(uint16_t)o->dx << 24 | (uint64_t)(uint32_t)o->t << 40;
        /* window flags bit 17: a compound block is alike to no other block
         * (bit 63 and its index make its key unique) */
        if ((m & 7) == PNMF_RES_SHIFTED && r->mvbi && r->mvbi[mvref - 1 - r->mvref])
            o->key = (uint64_t)1 << 63 | (uint64_t)(uint32_t)b;
        if (m & PNMF_RES_TRANSFORM) {
            /* a quarter's 16 levels, tested 4 at a time */
            for (int q = 0; q < 4; q++) {
                uint64_t w[4];
                memcpy(w, lev + 16 * q, sizeof(w));
                if (w[0] | w[1] | w[2] | w[3]) o->nz |= (uint8_t)(1 << q);
            }
            lev += 64;
        } else if (m & PNMF_RES_CODED) {
            lev += (size_t)(y1 - y0) * (x1 - x0);
        }
    }
    /* vertical edges, left to right: block edges where three samples lie
     * on each side, and the middle of transform blocks (a row of blocks at
     * a time: the rows of samples of one do not meet another's); a block's
     * left edge, then its middle one */
    for (int by = 0; by < r->by; by++) {
        const int y0 = by * PNMF_RES_BLOCK, y1 = y0 + PNMF_RES_BLOCK < rows ? y0 + PNMF_RES_BLOCK : rows;
        const BlockInfo *q = bi + (size_t)by * r->bx;
        for (int x = 0; x + 2 < cols; x += PNMF_RES_BLOCK, q++) {
            if (x) {
                const int st = strength(q - 1, q);
                if (st) filter_edge(D, cols, 1, x, y0, y1, (q[-1].q + q->q + 1) >> 1, st);
            }
            if ((q->flags & BF_TRANSFORM) && x + 6 < cols) {
                inner_edge(D, cols, 1, x + 4, y0, y1, q->q, strength_inner(q, 0, 1), strength_inner(q, 2, 3));
            }
        }
    }
    /* then horizontal edges, top to bottom, on the vertically filtered
     * frame: a block's top edge, then its middle one (the columns of one
     * block do not meet another's, so this is the order of rows) */
    for (int by = 0; by < r->by; by++) {
        const int y = by * PNMF_RES_BLOCK;
        if (y + 2 >= rows) break;
        const BlockInfo *q = bi + (size_t)by * r->bx;
        for (int bx = 0; bx < r->bx; bx++, q++) {
            const int x0 = bx * PNMF_RES_BLOCK, x1 = x0 + PNMF_RES_BLOCK < cols ? x0 + PNMF_RES_BLOCK : cols;
            if (y) {
                const BlockInfo *p = q - r->bx;
                const int st = strength(p, q);
                if (st) filter_edge(D, cols, 0, y, x0, x1, (p->q + q->q + 1) >> 1, st);
            }
            if ((q->flags & BF_TRANSFORM) && y + 6 < rows) {
                inner_edge(D, cols, 0, y + 4, x0, x1, q->q, strength_inner(q, 0, 2), strength_inner(q, 1, 3));
            }
        }
    }
}
