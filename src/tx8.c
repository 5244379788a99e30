/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The 8x8 transform of the residual layer (tx8.h): the normative
 * dequantization and inverse transform, the encoder's forward transform,
 * and the levels stream's decisions of an 8x8 block as the reader reads
 * them (tx8_enc.c writes them). */
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
#include <emmintrin.h>
#endif

#include "tx8.h"

const uint8_t pnmf_tx8_zigzag[64] = { 0,  1,  8,  16, 9,  2,  3,  10, 17, 24, 32, 25, 18, 11, 4,  5,
                                      12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6,  7,  14, 21, 28,
                                      35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51,
                                      58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63 };

/* H.264's normAdjust8x8 values v, by qp % 6 and pnmf_tx8_classes[]. */
static const int tx8_v[6][6] = { { 20, 18, 32, 19, 25, 24 }, { 22, 19, 35, 21, 28, 26 },
                                 { 26, 23, 42, 24, 33, 31 }, { 28, 25, 45, 26, 35, 33 },
                                 { 32, 28, 51, 30, 40, 38 }, { 36, 32, 58, 34, 46, 43 } };

/* The forward quantizer's multipliers (tx8.h), about 2^22 / (v * the squared norm
 * of the forward basis), as x264 has them (common/set.c, quant8_scale). */
const int pnmf_tx8_quant[6][6] = { { 13107, 11428, 20972, 12222, 16777, 15481 },
                                  { 11916, 10826, 19174, 11058, 14980, 14290 },
                                  { 10082, 8943, 15978, 9675, 12710, 11985 },
                                  { 9362, 8228, 14913, 8931, 11984, 11259 },
                                  { 8192, 7346, 13159, 7740, 10486, 9777 },
                                  { 7282, 6428, 11570, 6830, 9118, 8640 } };

/* The class of each raster position: 0 both indices multiples of 4; 1
 * both odd; 2 both 2 mod 4; 3 one a multiple of 4, the other odd; 4 one a
 * multiple of 4, the other 2 mod 4; 5 the rest (one odd, one 2 mod 4). */
const uint8_t pnmf_tx8_classes[64] = { 0, 3, 4, 3, 0, 3, 4, 3, 3, 1, 5, 1, 3, 1, 5, 1, 4, 5, 2, 5, 4, 5,
                                     2, 5, 3, 1, 5, 1, 3, 1, 5, 1, 0, 3, 4, 3, 0, 3, 4, 3, 3, 1, 5, 1,
                                     3, 1, 5, 1, 4, 5, 2, 5, 4, 5, 2, 5, 3, 1, 5, 1, 3, 1, 5, 1 };


/* LevelScale8 = 16 * v (flat scaling), then H.264's 8.5.13.1 shift. */
int32_t pnmf_tx8_dequant(int l, int qp, int q)
{
    const int32_t s = (int32_t)l * 16 * tx8_v[qp % 6][pnmf_tx8_classes[q]];
    if (qp >= 36) return s * (1 << (qp / 6 - 6));
    return (s + (1 << (5 - qp / 6))) >> (6 - qp / 6);
}

/* One 8-point inverse of H.264 (8.5.13.2) on d[0], d[s], .. d[7 s], in place. */
static inline void idct8_1d(int32_t *d, int s)
{
    const int32_t d0 = d[0], d1 = d[s], d2 = d[2 * s], d3 = d[3 * s];
    const int32_t d4 = d[4 * s], d5 = d[5 * s], d6 = d[6 * s], d7 = d[7 * s];
    const int32_t e0 = d0 + d4, e1 = d0 - d4, e2 = (d2 >> 1) - d6, e3 = d2 + (d6 >> 1);
    const int32_t e4 = -d3 + d5 - d7 - (d7 >> 1), e5 = d1 + d7 - d3 - (d3 >> 1);
    const int32_t e6 = -d1 + d7 + d5 + (d5 >> 1), e7 = d3 + d5 + d1 + (d1 >> 1);
    const int32_t f0 = e0 + e3, f2 = e1 + e2, f4 = e1 - e2, f6 = e0 - e3;
    const int32_t f1 = e4 + (e7 >> 2), f3 = e5 + (e6 >> 2), f5 = (e5 >> 2) - e6, f7 = e7 - (e4 >> 2);
    d[0] = f0 + f7, d[s] = f2 + f5, d[2 * s] = f4 + f3, d[3 * s] = f6 + f1;
    d[4 * s] = f6 - f1, d[5 * s] = f4 - f3, d[6 * s] = f2 - f5, d[7 * s] = f0 - f7;
}

/* The dequantized coefficients of lev (zigzag) into d (raster, zeroed
 * where the level is 0); returns a bit per row of d that has a level.
 * Levels are few and early in the zigzag: runs of 8 without one are
 * passed over whole. */
static inline unsigned tx8_dequant_block(const int16_t *lev, int qp, int32_t *d)
{
    unsigned rows = 0;
    memset(d, 0, 64 * sizeof(*d));
    for (int z0 = 0; z0 < 64; z0 += 8) {
        int any = 0;
        for (int z = z0; z < z0 + 8; z++) any |= lev[z];
        if (!any) continue;
        for (int z = z0; z < z0 + 8; z++)
            if (lev[z]) {
                const int q = pnmf_tx8_zigzag[z];
                d[q] = pnmf_tx8_dequant(lev[z], qp, q);
                rows |= 1u << (q >> 3);
            }
    }
    return rows;
}

/* The row pass skips rows of zeros, which the butterflies leave zero. */
static inline void tx8_core(int32_t *d, unsigned rows)
{
    for (int i = 0; i < 8; i++)
        if (rows >> i & 1) idct8_1d(d + 8 * i, 1); /* rows */
    for (int j = 0; j < 8; j++) idct8_1d(d + j, 8); /* then columns */
}

void pnmf_tx8_idct(const int16_t *lev, int qp, int *r)
{
    int32_t d[64];
    tx8_core(d, tx8_dequant_block(lev, qp, d));
    for (int q = 0; q < 64; q++) r[q] = (d[q] + 32) >> 6;
}

/* A first level alone passes the butterflies unchanged to every sample:
 * one value added. */
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
/* idct8_1d() on four columns at once: v[k] holds row k's four. */
static inline void idct8_1d_x4(__m128i *v)
{
    const __m128i d0 = v[0], d1 = v[1], d2 = v[2], d3 = v[3], d4 = v[4], d5 = v[5], d6 = v[6], d7 = v[7];
    const __m128i e0 = _mm_add_epi32(d0, d4), e1 = _mm_sub_epi32(d0, d4);
    const __m128i e2 = _mm_sub_epi32(_mm_srai_epi32(d2, 1), d6), e3 = _mm_add_epi32(d2, _mm_srai_epi32(d6, 1));
    const __m128i e4 = _mm_sub_epi32(_mm_sub_epi32(_mm_sub_epi32(d5, d3), d7), _mm_srai_epi32(d7, 1));
    const __m128i e5 = _mm_sub_epi32(_mm_sub_epi32(_mm_add_epi32(d1, d7), d3), _mm_srai_epi32(d3, 1));
    const __m128i e6 = _mm_add_epi32(_mm_add_epi32(_mm_sub_epi32(d7, d1), d5), _mm_srai_epi32(d5, 1));
    const __m128i e7 = _mm_add_epi32(_mm_add_epi32(_mm_add_epi32(d3, d5), d1), _mm_srai_epi32(d1, 1));
    const __m128i f0 = _mm_add_epi32(e0, e3), f2 = _mm_add_epi32(e1, e2);
    const __m128i f4 = _mm_sub_epi32(e1, e2), f6 = _mm_sub_epi32(e0, e3);
    const __m128i f1 = _mm_add_epi32(e4, _mm_srai_epi32(e7, 2)), f3 = _mm_add_epi32(e5, _mm_srai_epi32(e6, 2));
    const __m128i f5 = _mm_sub_epi32(_mm_srai_epi32(e5, 2), e6), f7 = _mm_sub_epi32(e7, _mm_srai_epi32(e4, 2));
    v[0] = _mm_add_epi32(f0, f7), v[1] = _mm_add_epi32(f2, f5), v[2] = _mm_add_epi32(f4, f3);
    v[3] = _mm_add_epi32(f6, f1), v[4] = _mm_sub_epi32(f6, f1), v[5] = _mm_sub_epi32(f4, f3);
    v[6] = _mm_sub_epi32(f2, f5), v[7] = _mm_sub_epi32(f0, f7);
}
#endif

/* A first level alone passes the butterflies unchanged to every sample:
 * one value added. */
void pnmf_tx8_idct_add(const int16_t *lev, int qp, const uint8_t *pred, int pstride, uint8_t *dst, ptrdiff_t stride)
{
    int ac = 0;
    for (int z = 1; z < 64; z++) ac |= lev[z];
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
    /* the residual's left and right halves of each row as 32-bit lanes */
    __m128i lo[8], hi[8];
    const __m128i rnd = _mm_set1_epi32(32);
    if (!ac) {
        const int32_t v = lev[0] ? pnmf_tx8_dequant(lev[0], qp, 0) : 0;
        for (int y = 0; y < 8; y++) lo[y] = hi[y] = _mm_srai_epi32(_mm_add_epi32(_mm_set1_epi32(v), rnd), 6);
    } else {
        /* the rows with levels as tx8_core() passes them, then the
         * columns four at a time, the same 32-bit arithmetic */
        int32_t d[64];
        const unsigned rows = tx8_dequant_block(lev, qp, d);
        for (int i = 0; i < 8; i++)
            if (rows >> i & 1) idct8_1d(d + 8 * i, 1);
        for (int y = 0; y < 8; y++)
            lo[y] = _mm_loadu_si128((const __m128i *)(d + 8 * y)), hi[y] = _mm_loadu_si128((const __m128i *)(d + 8 * y + 4));
        idct8_1d_x4(lo), idct8_1d_x4(hi);
        for (int y = 0; y < 8; y++)
            lo[y] = _mm_srai_epi32(_mm_add_epi32(lo[y], rnd), 6), hi[y] = _mm_srai_epi32(_mm_add_epi32(hi[y], rnd), 6);
    }
    /* a row at a time: the residual saturated to 16 bits, the sum saturated
     * again, then to 0..255 (the same as clamping the exact sum) */
    const __m128i zero = _mm_setzero_si128();
    for (int y = 0; y < 8; y++) {
        const __m128i p = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(pred + y * pstride)), zero);
        const __m128i o = _mm_packus_epi16(_mm_adds_epi16(p, _mm_packs_epi32(lo[y], hi[y])), zero);
        _mm_storel_epi64((__m128i *)(dst + y * stride), o);
    }
#else
    int32_t d[64];
    if (!ac) {
        const int32_t v = lev[0] ? pnmf_tx8_dequant(lev[0], qp, 0) : 0;
        for (int q = 0; q < 64; q++) d[q] = v;
    } else {
        tx8_core(d, tx8_dequant_block(lev, qp, d));
    }
    for (int y = 0; y < 8; y++) {
        uint8_t *o = dst + y * stride;
        const uint8_t *p = pred + y * pstride;
        for (int x = 0; x < 8; x++) o[x] = (uint8_t)pnmf_residual_clip8(p[x] + ((d[8 * y + x] + 32) >> 6));
    }
#endif
}

/* x264's 8-point forward transform (common/dct.c) on x[0], x[s], ..., into w. */
static inline void fdct8_1d(const int *x, int *w, int s)
{
    const int s07 = x[0] + x[7 * s], s16 = x[s] + x[6 * s], s25 = x[2 * s] + x[5 * s], s34 = x[3 * s] + x[4 * s];
    const int a0 = s07 + s34, a1 = s16 + s25, a2 = s07 - s34, a3 = s16 - s25;
    const int d07 = x[0] - x[7 * s], d16 = x[s] - x[6 * s], d25 = x[2 * s] - x[5 * s], d34 = x[3 * s] - x[4 * s];
    const int a4 = d16 + d25 + (d07 + (d07 >> 1)), a5 = d07 - d34 - (d25 + (d25 >> 1));
    const int a6 = d07 + d34 - (d16 + (d16 >> 1)), a7 = d16 - d25 + (d34 + (d34 >> 1));
    w[0] = a0 + a1, w[s] = a4 + (a7 >> 2), w[2 * s] = a2 + (a3 >> 1), w[3 * s] = a5 + (a6 >> 2);
    w[4 * s] = a0 - a1, w[5 * s] = a6 - (a5 >> 2), w[6 * s] = (a2 >> 1) - a3, w[7 * s] = (a4 >> 2) - a7;
}

void pnmf_tx8_fdct(const int *x, int *w)
{
    int t[64];
    for (int i = 0; i < 8; i++) fdct8_1d(x + 8 * i, t + 8 * i, 1);
    for (int j = 0; j < 8; j++) fdct8_1d(t + j, w + j, 8);
}

int pnmf_tx8_ctx(const PnmfResidual *r, int j, size_t b)
{
    const uint8_t *t = r->tx8 + (size_t)j * r->bx * r->by;
    return (b % (size_t)r->bx ? t[b - 1] : 0) + (b >= (size_t)r->bx ? t[b - r->bx] : 0);
}

int pnmf_tx8_used(const PnmfResidual *r, int from, int to)
{
    const size_t nb = (size_t)r->bx * r->by;
    if (!r->tx8 || from >= to) return 0;
    const uint8_t *t = r->tx8 + (size_t)from * nb, *e = r->tx8 + (size_t)to * nb;
    for (; t < e; t++)
        if (*t) return 1;
    return 0;
}

/* On a copy of *dp in registers, as rc_decode_transform_levels(). */
int pnmf_tx8_levels_read(RcDec *dp, RcLevCtx *c, int kind, int16_t *lev, int max_l)
{
    /* rc_tx8_pos() of each position, looked up */
    static const uint8_t cls[63] = { 0,  1,  2,  3,  4,  5,  6,  7,  8,  8,  8,  8,  9,  9,  9,  9,
                                     10, 10, 10, 10, 10, 10, 10, 10, 11, 11, 11, 11, 11, 11, 11, 11,
                                     12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12,
                                     13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13 };
    RcDec d = *dp;
    /* the kind's contexts on the stack, one base address (as in
     * rc_decode_pixel_levels()) */
    struct {
        RcProb sig[RC_TX8_POS], last[RC_TX8_POS], tgt1[5], tmag[5];
    } kc;
    memcpy(kc.sig, c->sig8[kind], sizeof(kc.sig));
    memcpy(kc.last, c->last8[kind], sizeof(kc.last));
    memcpy(kc.tgt1, c->tgt1_8[kind], sizeof(kc.tgt1));
    memcpy(kc.tmag, c->tmag8[kind], sizeof(kc.tmag));
    RcProb *sig = kc.sig, *last = kc.last, *tgt1 = kc.tgt1, *tmag = kc.tmag;
    /* the positions of the levels, then their magnitudes from the last back */
    uint8_t pos[64];
    int n = 0, i = 0, ret = 0;
    memset(lev, 0, 64 * sizeof(*lev));
    for (; i < 63; i++) {
        const int k = cls[i];
        if (rc_decode(&d, &sig[k])) {
            pos[n++] = (uint8_t)i;
            if (rc_decode(&d, &last[k])) break;
        }
    }
    if (i == 63) pos[n++] = 63; /* no level before it was the last: it has one */
    int gt1 = 0, ones = 0;
    while (n--) {
        int a = 1;
        if (rc_decode(&d, &tgt1[gt1 ? 0 : 1 + (ones < 3 ? ones : 3)])) {
            const int r = rc_decode_lev_rem(&d, tmag + (gt1 < 4 ? gt1 : 4), 0);
            if (r < 0 || r + 2 > max_l) {
                ret = -1;
                break;
            }
            a = r + 2;
            gt1++;
        } else {
            ones++;
        }
        lev[pos[n]] = (int16_t)(rc_decode_direct(&d) ? -a : a);
    }
    memcpy(c->sig8[kind], kc.sig, sizeof(kc.sig));
    memcpy(c->last8[kind], kc.last, sizeof(kc.last));
    memcpy(c->tgt1_8[kind], kc.tgt1, sizeof(kc.tgt1));
    memcpy(c->tmag8[kind], kc.tmag, sizeof(kc.tmag));
    *dp = d;
    return ret;
}

/* ---- the 16-point transform of a 16x16 residual's low 8x8 (tx8.h) ------- */

/* The first eight rows of the 16-point integer DCT matrix of ITU-T H.265,
 * 8.6.4.2 (transMatrix, nTbS 16): row k is about 64 sqrt(2) cos((2n + 1) k pi / 32),
 * row 0 is 64. */
const int8_t pnmf_tx16_matrix[8][16] = {
    { 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64 },
    { 90, 87, 80, 70, 57, 43, 25, 9, -9, -25, -43, -57, -70, -80, -87, -90 },
    { 89, 75, 50, 18, -18, -50, -75, -89, -89, -75, -50, -18, 18, 50, 75, 89 },
    { 87, 57, 9, -43, -80, -90, -70, -25, 25, 70, 90, 80, 43, -9, -57, -87 },
    { 83, 36, -36, -83, -83, -36, 36, 83, 83, 36, -36, -83, -83, -36, 36, 83 },
    { 80, 9, -70, -87, -25, 57, 90, 43, -43, -90, -57, 25, 87, 70, -9, -80 },
    { 75, -18, -89, -50, 50, 89, 18, -75, -75, 18, 89, 50, -50, -89, -18, 75 },
    { 70, -43, -87, 9, 90, 25, -80, -57, 57, 80, -25, -90, -9, 87, 43, -70 },
};

/* H.265's levelScale (8.6.3) by qp % 6. */
static const int tx16_scale[6] = { 40, 45, 51, 57, 64, 72 };

static inline int32_t clip16(int64_t v) { return v < -32768 ? -32768 : v > 32767 ? 32767 : (int32_t)v; }

int32_t pnmf_tx16_dequant(int l, int qp)
{
    return clip16(((int64_t)l * 16 * tx16_scale[qp % 6] * (1 << (qp / 6)) + 64) >> 7);
}

/* The 16 sums of one inverse pass over the eight coefficients d[0], d[s],
 * .. d[7 s]: out[n] = sum_k pnmf_tx16_matrix[k][n] d[k s], by the matrix's
 * symmetries (row k even: n and 15 - n alike; odd: opposite). */
static inline void tx16_sums(const int32_t *d, int s, int64_t *out)
{
    const int8_t (*c)[16] = pnmf_tx16_matrix;
    const int64_t d0 = d[0], d1 = d[s], d2 = d[2 * s], d3 = d[3 * s];
    const int64_t d4 = d[4 * s], d5 = d[5 * s], d6 = d[6 * s], d7 = d[7 * s];
    for (int n = 0; n < 4; n++) {
        const int64_t ee = 64 * d0 + c[4][n] * d4, eo = c[2][n] * d2 + c[6][n] * d6;
        const int64_t e = ee + eo, e7 = ee - eo; /* E[n], E[7 - n] */
        const int64_t o = c[1][n] * d1 + c[3][n] * d3 + c[5][n] * d5 + c[7][n] * d7;
        const int64_t o7 = c[1][7 - n] * d1 + c[3][7 - n] * d3 + c[5][7 - n] * d5 + c[7][7 - n] * d7;
        out[n] = e + o, out[15 - n] = e - o;
        out[7 - n] = e7 + o7, out[8 + n] = e7 - o7;
    }
}

void pnmf_tx16_idct(const int16_t *lev, int qp, int *r)
{
    int32_t d[64], g[16 * 8];
    int64_t s[16];
    memset(d, 0, sizeof(d));
    for (int z = 0; z < 64; z++)
        if (lev[z]) d[pnmf_tx8_zigzag[z]] = pnmf_tx16_dequant(lev[z], qp);
    for (int v = 0; v < 8; v++) { /* columns: g[n][v], n the row */
        tx16_sums(d + v, 8, s);
        for (int n = 0; n < 16; n++) g[8 * n + v] = clip16((s[n] + 64) >> 7);
    }
    for (int n = 0; n < 16; n++) { /* then rows */
        tx16_sums(g + 8 * n, 1, s);
        for (int m = 0; m < 16; m++) r[16 * n + m] = (int)((s[m] + 2048) >> 12);
    }
}
