/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The residual layer (residual.h): its reconstruction, which the decoder
 * runs and the encoder repeats to measure what the decoder shows, and the
 * levels stream's reader. The encoder's choice of modes and levels is
 * residual_search.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
#include <emmintrin.h>
#endif

#include "deblock.h"
#include "internal.h"
#include "intra.h"
#include "lossless.h"
#include "residual.h"
#include "tx8.h"

int pnmf_residual_alloc(PnmfResidual *r, int m, int rows, int cols, int step16, int key_step16)
{
    memset(r, 0, sizeof(*r));
    r->step16 = step16;
    r->key_step16 = key_step16;
    r->qp = pnmf_residual_qp(step16);
    r->key_qp = pnmf_residual_qp(key_step16);
    r->m = m, r->rows = rows, r->cols = cols;
    rc_mode_ctx_init(&r->enc_modes);
    rc_vec_ctx_init(&r->enc_vectors);
    rc_bi_ctx_init(&r->enc_bictx);
    rc_lev_ctx_init(&r->enc_levels);
    pnmf_pal_ctx_init(&r->enc_pal);
    r->bx = pnmf_residual_blocks(cols);
    r->by = pnmf_residual_blocks(rows);
    r->modes = pnmf_calloc((size_t)m * r->bx * r->by, 1);
    r->tx8 = pnmf_calloc((size_t)m * r->bx * r->by, 1);
    r->idir = pnmf_calloc((size_t)m * r->bx * r->by, 1);
    r->start = pnmf_calloc((size_t)m + 1, sizeof(size_t));
    r->mvstart = pnmf_calloc((size_t)m + 1, sizeof(size_t));
    r->gmv = pnmf_calloc((size_t)m * 2, sizeof(int16_t));
    r->gw = pnmf_calloc((size_t)m * PNMF_RES_WARP_N, sizeof(int32_t));
    r->wp = pnmf_malloc_array((size_t)m * 2, sizeof(int16_t));
    r->palstart = pnmf_calloc((size_t)m + 1, sizeof(size_t));
    r->dbk = pnmf_malloc_array((size_t)r->bx * r->by, sizeof(*r->dbk));
    if (!r->modes || !r->tx8 || !r->idir || !r->start || !r->mvstart || !r->gmv || !r->gw || !r->wp || !r->dbk || !r->palstart) {
        pnmf_residual_free(r);
        return PNMF_ERR_NOMEM;
    }
    for (int j = 0; j < m; j++) r->wp[2 * j] = PNMF_RES_WP_ONE, r->wp[2 * j + 1] = 0;
    return 0;
}

void pnmf_residual_free(PnmfResidual *r)
{
    pnmf_free(r->modes);
    pnmf_free(r->tx8);
    pnmf_free(r->idir);
    pnmf_free(r->lev);
    pnmf_free(r->start);
    pnmf_free(r->mv);
    pnmf_free(r->mvref);
    pnmf_free(r->mvbi);
    pnmf_free(r->mv2);
    pnmf_free(r->mvstart);
    pnmf_free(r->gmv);
    pnmf_free(r->gw);
    pnmf_free(r->wp);
    pnmf_free(r->pal);
    pnmf_free(r->palstart);
    pnmf_free(r->dbk);
    pnmf_free(r->enc_prev_mv);
    pnmf_free(r->enc_dec);
    pnmf_free(r->enc_lxn);
    pnmf_free(r->enc_lxp);
    pnmf_lx_free(r->lx);
    if (r->enc_match_free) r->enc_match_free(r->enc_match);
    memset(r, 0, sizeof(*r));
}

/* The inverse 4x4 integer transform of H.264 (ITU-T H.264 (2003)
 * 8.5.12): the standard's normAdjust values v, by qp % 6 and the column
 * pnmf_residual_coef_class() gives. */
static const int tr_v[6][3] = { { 10, 16, 13 }, { 11, 18, 14 }, { 13, 20, 16 },
                                { 14, 23, 18 }, { 16, 25, 20 }, { 18, 29, 23 } };
const uint8_t pnmf_residual_zigzag4[16] = { 0, 1, 4, 8, 5, 2, 3, 6, 9, 12, 13, 10, 7, 11, 14, 15 };

int pnmf_residual_qp(int step16)
{
    /* qp whose step 0.625 * 2^(qp/6) is nearest step16 / 16 (in log) */
    const double qp = 6.0 * log2(step16 / 16.0 / 0.625);
    const long r = lrint(qp);
    return r < 0 ? 0 : r > PNMF_RES_MAX_QP ? PNMF_RES_MAX_QP : (int)r;
}

/* The dequantized coefficients of 16 levels in zigzag order, in raster
 * order: lev * v << (qp / 6), with v by qp % 6 and the position's column. */
static inline void dequant4(const int16_t *lev, int qp, int32_t *d)
{
    const int *v = tr_v[qp % 6], sh = qp / 6;
    for (int z = 0; z < 16; z++) {
        const int q = pnmf_residual_zigzag4[z];
        d[q] = (int32_t)(lev[z] * v[pnmf_residual_coef_class(q)]) * (1 << sh);
    }
}

/* The butterflies of H.264's inverse 4x4 transform on d (raster), rows
 * then columns, with (x + 32) >> 6 into r. */
static inline void idct4_core(const int32_t *d, int *r)
{
    int32_t t[16];
    for (int i = 0; i < 4; i++) {
        const int32_t *c = d + 4 * i;
        const int32_t e0 = c[0] + c[2], e1 = c[0] - c[2], e2 = (c[1] >> 1) - c[3], e3 = c[1] + (c[3] >> 1);
        t[4 * i] = e0 + e3, t[4 * i + 1] = e1 + e2, t[4 * i + 2] = e1 - e2, t[4 * i + 3] = e0 - e3;
    }
    for (int j = 0; j < 4; j++) {
        const int32_t e0 = t[j] + t[8 + j], e1 = t[j] - t[8 + j];
        const int32_t e2 = (t[4 + j] >> 1) - t[12 + j], e3 = t[4 + j] + (t[12 + j] >> 1);
        r[j] = (e0 + e3 + 32) >> 6, r[4 + j] = (e1 + e2 + 32) >> 6;
        r[8 + j] = (e1 - e2 + 32) >> 6, r[12 + j] = (e0 - e3 + 32) >> 6;
    }
}

/* lev: 16 levels in zigzag order; r: the residual in raster order. */
void pnmf_residual_idct4(const int16_t *lev, int qp, int *r)
{
    int32_t d[16];
    dequant4(lev, qp, d);
    idct4_core(d, r);
}

/* Most quarters have no level or only the first: no level leaves the
 * prediction; a first level alone passes the butterflies unchanged to
 * every sample (its rows and columns of zeros add nothing), one value.
 * Inlined into the frame's loop, where pred's rows are a block apart. */
static inline void idct4_add(const int16_t *lev, int qp, const uint8_t *pred, int pstride, uint8_t *dst,
                             ptrdiff_t stride)
{
    /* the 15 levels after the first, OR-ed: 1..3 one by one, 4..15 64 bits
     * at a time (loads of lev itself: a copy with lev[0] cleared on the
     * stack would be read back wider than the store that wrote it, a stall) */
    uint64_t w[3];
    memcpy(w, lev + 4, sizeof(w));
    const int ac = ((lev[1] | lev[2] | lev[3]) != 0) | ((w[0] | w[1] | w[2]) != 0);
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
    /* the residual's four rows as 32-bit lanes */
    __m128i r0, r1, r2, r3;
    if (!ac) {
        r0 = r1 = r2 = r3 = _mm_set1_epi32((lev[0] * tr_v[qp % 6][0] * (1 << (qp / 6)) + 32) >> 6);
    } else {
        /* the butterflies of idct4_core() with the same 32-bit arithmetic,
         * four rows (then columns) at once: the dequantized block
         * transposed, the row pass, transposed back, the column pass */
        int32_t d[16];
        dequant4(lev, qp, d);
        __m128i c0 = _mm_setr_epi32(d[0], d[4], d[8], d[12]), c1 = _mm_setr_epi32(d[1], d[5], d[9], d[13]);
        __m128i c2 = _mm_setr_epi32(d[2], d[6], d[10], d[14]), c3 = _mm_setr_epi32(d[3], d[7], d[11], d[15]);
        __m128i e0 = _mm_add_epi32(c0, c2), e1 = _mm_sub_epi32(c0, c2);
        __m128i e2 = _mm_sub_epi32(_mm_srai_epi32(c1, 1), c3), e3 = _mm_add_epi32(c1, _mm_srai_epi32(c3, 1));
        /* t0..t3: column k of t (t[4 i + k] in lane i) */
        const __m128i t0 = _mm_add_epi32(e0, e3), t1 = _mm_add_epi32(e1, e2);
        const __m128i t2 = _mm_sub_epi32(e1, e2), t3 = _mm_sub_epi32(e0, e3);
        /* transposed: row i of t in T_i */
        const __m128i u0 = _mm_unpacklo_epi32(t0, t1), u1 = _mm_unpacklo_epi32(t2, t3);
        const __m128i u2 = _mm_unpackhi_epi32(t0, t1), u3 = _mm_unpackhi_epi32(t2, t3);
        const __m128i T0 = _mm_unpacklo_epi64(u0, u1), T1 = _mm_unpackhi_epi64(u0, u1);
        const __m128i T2 = _mm_unpacklo_epi64(u2, u3), T3 = _mm_unpackhi_epi64(u2, u3);
        const __m128i rnd = _mm_set1_epi32(32);
        e0 = _mm_add_epi32(_mm_add_epi32(T0, T2), rnd), e1 = _mm_add_epi32(_mm_sub_epi32(T0, T2), rnd);
        e2 = _mm_sub_epi32(_mm_srai_epi32(T1, 1), T3), e3 = _mm_add_epi32(T1, _mm_srai_epi32(T3, 1));
        r0 = _mm_srai_epi32(_mm_add_epi32(e0, e3), 6), r1 = _mm_srai_epi32(_mm_add_epi32(e1, e2), 6);
        r2 = _mm_srai_epi32(_mm_sub_epi32(e1, e2), 6), r3 = _mm_srai_epi32(_mm_sub_epi32(e0, e3), 6);
    }
    /* two rows at a time: the residual saturated to 16 bits, the sum
     * saturated again, then to 0..255 (the same as clamping the exact sum) */
    const __m128i zero = _mm_setzero_si128();
    for (int y = 0; y < 4; y += 2) {
        uint32_t p0, p1;
        memcpy(&p0, pred + y * pstride, 4), memcpy(&p1, pred + (y + 1) * pstride, 4);
        const __m128i p = _mm_unpacklo_epi8(_mm_unpacklo_epi32(_mm_cvtsi32_si128((int)p0), _mm_cvtsi32_si128((int)p1)), zero);
        const __m128i r = y ? _mm_packs_epi32(r2, r3) : _mm_packs_epi32(r0, r1);
        const __m128i o = _mm_packus_epi16(_mm_adds_epi16(p, r), zero);
        const uint32_t o0 = (uint32_t)_mm_cvtsi128_si32(o), o1 = (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(o, 4));
        memcpy(dst + y * stride, &o0, 4), memcpy(dst + (y + 1) * stride, &o1, 4);
    }
#else
    int res[16];
    if (!ac) {
        const int v = (lev[0] * tr_v[qp % 6][0] * (1 << (qp / 6)) + 32) >> 6;
        for (int q = 0; q < 16; q++) res[q] = v;
    } else {
        int32_t d[16];
        dequant4(lev, qp, d);
        idct4_core(d, res);
    }
    for (int y = 0; y < 4; y++) {
        uint8_t *o = dst + y * stride;
        const uint8_t *p = pred + y * pstride;
        for (int x = 0; x < 4; x++) o[x] = (uint8_t)pnmf_residual_clip8(p[x] + res[4 * y + x]);
    }
#endif
}

void pnmf_residual_idct4_add(const int16_t *lev, int qp, const uint8_t *pred, int pstride, uint8_t *dst,
                             ptrdiff_t stride)
{
    idct4_add(lev, qp, pred, pstride, dst, stride);
}

/* Row y of pred (rows ps apart) set to v over w samples: a whole row is
 * one store the compiler inlines, other widths a call (as copy_row()). */
static inline void fill_row(uint8_t *pred, size_t ps, int y, int v, int w)
{
    if (w == PNMF_RES_BLOCK) memset(pred + y * ps, v, PNMF_RES_BLOCK);
    else memset(pred + y * ps, v, (size_t)w);
}

/* The intra predictions (modes 5-7) of [y0, y1) x [x0, x1) from the
 * decoded row above it and column left of it in D: their mean (DC), the
 * row carried down (V) or the column carried across (H). A side the frame
 * lacks repeats the first sample of the other; with neither, 128. Into
 * pred, rows ps apart: the block's own place in D too, as it reads only
 * samples outside the block. */
static void predict_intra(int mode, const uint8_t *D, int cols, int y0, int y1, int x0, int x1, uint8_t *pred,
                          size_t ps)
{
    const int h = y1 - y0, w = x1 - x0;
    /* the row above and the column left, where the frame has them */
    const uint8_t *a = y0 ? D + (size_t)(y0 - 1) * cols + x0 : NULL, *l = x0 ? D + (size_t)y0 * cols + x0 - 1 : NULL;
    if (mode == PNMF_RES_INTRA_V) {
        uint8_t row[PNMF_RES_BLOCK];
        if (a) memcpy(row, a, (size_t)w);
        else memset(row, l ? l[0] : 128, (size_t)w);
        for (int y = 0; y < h; y++)
            if (w == PNMF_RES_BLOCK) memcpy(pred + y * ps, row, PNMF_RES_BLOCK);
            else memcpy(pred + y * ps, row, (size_t)w);
        return;
    }
    if (mode == PNMF_RES_INTRA_H) {
        for (int y = 0; y < h; y++) fill_row(pred, ps, y, l ? l[(size_t)y * cols] : a ? a[0] : 128, w);
        return;
    }
    /* DC: a missing side counts w (or h) times the sample it repeats */
    int sum = (w + h) / 2;
    if (a)
        for (int i = 0; i < w; i++) sum += a[i];
    else
        sum += w * (l ? l[0] : 128);
    if (l)
        for (int i = 0; i < h; i++) sum += l[(size_t)i * cols];
    else
        sum += h * (a ? a[0] : 128);
    for (int y = 0; y < h; y++) fill_row(pred, ps, y, sum / (w + h), w);
}

/* predict_intra() of the 4 x 4 quarter at (y0, x0), its sizes constants:
 * rows of 4 bytes the compiler writes whole, no calls. */
static inline void predict_intra4(int mode, const uint8_t *D, int cols, int y0, int x0, uint8_t *pred)
{
    const uint8_t *a = y0 ? D + (size_t)(y0 - 1) * cols + x0 : NULL, *l = x0 ? D + (size_t)y0 * cols + x0 - 1 : NULL;
    if (mode == PNMF_RES_INTRA_V) {
        uint8_t row[4];
        if (a) memcpy(row, a, 4);
        else memset(row, l ? l[0] : 128, 4);
        for (int y = 0; y < 4; y++) memcpy(pred + y * PNMF_RES_BLOCK, row, 4);
        return;
    }
    if (mode == PNMF_RES_INTRA_H) {
        for (int y = 0; y < 4; y++) memset(pred + y * PNMF_RES_BLOCK, l ? l[(size_t)y * cols] : a ? a[0] : 128, 4);
        return;
    }
    int sum = 4;
    if (a) sum += a[0] + a[1] + a[2] + a[3];
    else sum += 4 * (l ? l[0] : 128);
    if (l) sum += l[0] + l[cols] + l[2 * (size_t)cols] + l[3 * (size_t)cols];
    else sum += 4 * (a ? a[0] : 128);
    for (int y = 0; y < 4; y++) memset(pred + y * PNMF_RES_BLOCK, sum / 8, 4);
}

/* A whole block row (8 bytes) is one move the compiler inlines; other widths a call. */
static inline void copy_row(uint8_t *dst, const uint8_t *src, int w)
{
    if (w == PNMF_RES_BLOCK) memcpy(dst, src, PNMF_RES_BLOCK);
    else memcpy(dst, src, (size_t)w);
}

/* The 6-tap filter's taps (residual.h). */
const int16_t pnmf_sharp_taps[4][6] = {
    { 0, 0, 64, 0, 0, 0 }, { 1, -5, 52, 20, -5, 1 }, { 2, -10, 40, 40, -10, 2 }, { 1, -5, 20, 52, -5, 1 },
};

/* The sharp quarter-sample prediction: the rows' horizontal sums t kept
 * whole, then (sum of the columns' taps times t + 2048) >> 12, clamped to
 * 0..255 (a negative sum is 0); coordinates clamped to the frame. */
static void subpel_sharp(const uint8_t *R, int rows, int cols, int y0, int y1, int x0, int x1, int fy, int fx, int iy,
                         int ix, uint8_t *pred)
{
    const int16_t *ky = pnmf_sharp_taps[fy], *kx = pnmf_sharp_taps[fx];
    const int h = y1 - y0, w = x1 - x0;
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
    /* every tap's sample inside the frame: rows of 8 in 16 bits (a row's
     * sum is within -20 * 255 .. 84 * 255), the columns' sums in 32 */
    if (w == PNMF_RES_BLOCK && y0 + iy - 2 >= 0 && y1 + iy + 3 <= rows && x0 + ix - 2 >= 0 && x1 + ix + 3 <= cols) {
        const __m128i zero = _mm_setzero_si128(), r32 = _mm_set1_epi16(32);
        __m128i t[PNMF_RES_BLOCK + 5], kh[6], kv[3];
        if (!fy || !fx) { /* one filter of 64 (0 * taps + 64 * u + 2048) >> 12 = (u + 32) >> 6, u in 16 bits */
            const int16_t *kk = fy ? ky : kx;
            for (int k = 0; k < 6; k++) kh[k] = _mm_set1_epi16(kk[k]);
            const size_t dk = fy ? (size_t)cols : 1; /* the taps down a column or along a row */
            for (int y = 0; y < h; y++) {
                const uint8_t *a = R + (size_t)(y0 + y + iy) * cols + x0 + ix - 2 * dk;
                __m128i s = r32;
                for (int k = 0; k < 6; k++)
                    s = _mm_add_epi16(s, _mm_mullo_epi16(_mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(a + k * dk)),
                                                                           zero),
                                                         kh[k]));
                _mm_storel_epi64((__m128i *)(pred + y * PNMF_RES_BLOCK), _mm_packus_epi16(_mm_srai_epi16(s, 6), zero));
            }
            return;
        }
        for (int k = 0; k < 6; k++) kh[k] = _mm_set1_epi16(kx[k]);
        for (int k = 0; k < 3; k++)
            kv[k] = _mm_set1_epi32((int)((uint32_t)(uint16_t)ky[2 * k] | (uint32_t)(uint16_t)ky[2 * k + 1] << 16));
        for (int i = 0; i < h + 5; i++) {
            const uint8_t *a = R + (size_t)(y0 + iy - 2 + i) * cols + x0 + ix - 2;
            __m128i s = _mm_mullo_epi16(_mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)a), zero), kh[0]);
            for (int k = 1; k < 6; k++)
                s = _mm_add_epi16(s, _mm_mullo_epi16(_mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(a + k)), zero),
                                                     kh[k]));
            t[i] = s;
        }
        const __m128i rnd = _mm_set1_epi32(2048);
        for (int y = 0; y < h; y++) {
            __m128i lo = rnd, hi = rnd;
            for (int k = 0; k < 3; k++) { /* rows y + 2k and y + 2k + 1, a pair of taps a lane */
                lo = _mm_add_epi32(lo, _mm_madd_epi16(_mm_unpacklo_epi16(t[y + 2 * k], t[y + 2 * k + 1]), kv[k]));
                hi = _mm_add_epi32(hi, _mm_madd_epi16(_mm_unpackhi_epi16(t[y + 2 * k], t[y + 2 * k + 1]), kv[k]));
            }
            const __m128i v = _mm_packs_epi32(_mm_srai_epi32(lo, 12), _mm_srai_epi32(hi, 12));
            _mm_storel_epi64((__m128i *)(pred + y * PNMF_RES_BLOCK), _mm_packus_epi16(v, zero));
        }
        return;
    }
#endif
    int32_t t[(PNMF_RES_BLOCK + 5) * PNMF_RES_BLOCK];
    int xs[PNMF_RES_BLOCK + 5];
    for (int k = 0; k < w + 5; k++) {
        const int sx = x0 + ix - 2 + k;
        xs[k] = sx < 0 ? 0 : sx >= cols ? cols - 1 : sx;
    }
    for (int i = 0; i < h + 5; i++) {
        int sy = y0 + iy - 2 + i;
        sy = sy < 0 ? 0 : sy >= rows ? rows - 1 : sy;
        const uint8_t *a = R + (size_t)sy * cols;
        for (int x = 0; x < w; x++) {
            int32_t s = 0;
            for (int k = 0; k < 6; k++) s += kx[k] * a[xs[x + k]];
            t[i * PNMF_RES_BLOCK + x] = s;
        }
    }
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int32_t s = 2048;
            for (int k = 0; k < 6; k++) s += ky[k] * t[(y + k) * PNMF_RES_BLOCK + x];
            s = s < 0 ? 0 : s >> 12;
            pred[y * PNMF_RES_BLOCK + x] = (uint8_t)(s > 255 ? 255 : s);
        }
}

/* The quarter-sample prediction (residual.h): bilinear between the four
 * whole samples around each position, coordinates clamped to the frame;
 * or the sharp filter's. */
void pnmf_residual_subpel(const uint8_t *R, int rows, int cols, int y0, int y1, int x0, int x1, int qy, int qx,
                          int sharp, uint8_t *pred)
{
    /* qy = 4 iy + fy, fy in 0..3 (the same for every sample) */
    const int fy = (qy % 4 + 4) % 4, fx = (qx % 4 + 4) % 4, iy = (qy - fy) / 4, ix = (qx - fx) / 4;
    if (sharp && (fy || fx)) { /* a whole vector: both filters copy */
        subpel_sharp(R, rows, cols, y0, y1, x0, x1, fy, fx, iy, ix, pred);
        return;
    }
    const int wa = (4 - fy) * (4 - fx), wb = (4 - fy) * fx, wc = fy * (4 - fx), wd = fy * fx;
    const int w = x1 - x0;
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
    /* a row of 8 whose samples of non-zero weight lie inside the frame (a
     * sample of weight 0 adds nothing, clamped or not): no clamping, in 16
     * bits (the weights sum to 16, at most 16 * 255 + 8) */
    if (w == PNMF_RES_BLOCK && y0 + iy >= 0 && y1 + iy + (fy != 0) <= rows && x0 + ix >= 0 &&
        x1 + ix + (fx != 0) <= cols) {
        const __m128i zero = _mm_setzero_si128(), rnd = _mm_set1_epi16(8);
        const __m128i ka = _mm_set1_epi16((short)wa), kb = _mm_set1_epi16((short)wb);
        const __m128i kc = _mm_set1_epi16((short)wc), kd = _mm_set1_epi16((short)wd);
        if (!fy && !fx) { /* a whole vector: the rows copied */
            for (int y = y0; y < y1; y++)
                memcpy(pred + (y - y0) * PNMF_RES_BLOCK, R + (size_t)(y + iy) * cols + x0 + ix, PNMF_RES_BLOCK);
            return;
        }
        if (!fy) { /* a horizontal fraction alone: the lower row's weights are 0 */
            for (int y = y0; y < y1; y++) {
                const uint8_t *a = R + (size_t)(y + iy) * cols + x0 + ix;
                const __m128i a0 = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)a), zero);
                const __m128i a1 = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(a + 1)), zero);
                __m128i t = _mm_add_epi16(_mm_mullo_epi16(a0, ka), _mm_mullo_epi16(a1, kb));
                t = _mm_srli_epi16(_mm_add_epi16(t, rnd), 4);
                _mm_storel_epi64((__m128i *)(pred + (y - y0) * PNMF_RES_BLOCK), _mm_packus_epi16(t, zero));
            }
            return;
        }
        if (!fx) { /* a vertical fraction alone: the right column's weights are 0 */
            for (int y = y0; y < y1; y++) {
                const uint8_t *a = R + (size_t)(y + iy) * cols + x0 + ix, *b = a + cols;
                const __m128i a0 = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)a), zero);
                const __m128i b0 = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)b), zero);
                __m128i t = _mm_add_epi16(_mm_mullo_epi16(a0, ka), _mm_mullo_epi16(b0, kc));
                t = _mm_srli_epi16(_mm_add_epi16(t, rnd), 4);
                _mm_storel_epi64((__m128i *)(pred + (y - y0) * PNMF_RES_BLOCK), _mm_packus_epi16(t, zero));
            }
            return;
        }
        for (int y = y0; y < y1; y++) {
            const uint8_t *a = R + (size_t)(y + iy) * cols + x0 + ix, *b = a + cols;
            const __m128i a0 = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)a), zero);
            const __m128i a1 = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(a + 1)), zero);
            const __m128i b0 = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)b), zero);
            const __m128i b1 = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(b + 1)), zero);
            __m128i t = _mm_add_epi16(_mm_mullo_epi16(a0, ka), _mm_mullo_epi16(a1, kb));
            t = _mm_add_epi16(t, _mm_add_epi16(_mm_mullo_epi16(b0, kc), _mm_mullo_epi16(b1, kd)));
            t = _mm_srli_epi16(_mm_add_epi16(t, rnd), 4);
            _mm_storel_epi64((__m128i *)(pred + (y - y0) * PNMF_RES_BLOCK), _mm_packus_epi16(t, zero));
        }
        return;
    }
#endif
    if (y0 + iy >= 0 && y1 + iy < rows && x0 + ix >= 0 && x1 + ix < cols) {
        /* inside the frame: no clamping, straight rows the compiler vectorizes */
        for (int y = y0; y < y1; y++) {
            const uint8_t *a = R + (size_t)(y + iy) * cols + x0 + ix, *b = a + cols;
            uint8_t *o = pred + (y - y0) * PNMF_RES_BLOCK;
            for (int x = 0; x < w; x++)
                o[x] = (uint8_t)((wa * a[x] + wb * a[x + 1] + wc * b[x] + wd * b[x + 1] + 8) >> 4);
        }
        return;
    }
    int xs[PNMF_RES_BLOCK + 1]; /* the columns x + ix, x + ix + 1, clamped */
    for (int x = 0; x <= w; x++) {
        const int sx = x0 + x + ix;
        xs[x] = sx < 0 ? 0 : sx >= cols ? cols - 1 : sx;
    }
    for (int y = y0; y < y1; y++) {
        int sa = y + iy, sb = sa + 1;
        sa = sa < 0 ? 0 : sa >= rows ? rows - 1 : sa;
        sb = sb < 0 ? 0 : sb >= rows ? rows - 1 : sb;
        const uint8_t *a = R + (size_t)sa * cols, *b = R + (size_t)sb * cols;
        uint8_t *o = pred + (y - y0) * PNMF_RES_BLOCK;
        for (int x = 0; x < w; x++)
            o[x] = (uint8_t)((wa * a[xs[x]] + wb * a[xs[x + 1]] + wc * b[xs[x]] + wd * b[xs[x + 1]] + 8) >> 4);
    }
}

/* The average of two single predictions (residual.h), rounded up at
 * halves: (a + b + 1) >> 1 is what the SSE2 average computes. */
void pnmf_residual_compound(const uint8_t *R1, int qy1, int qx1, const uint8_t *R2, int qy2, int qx2, int rows,
                            int cols, int y0, int y1, int x0, int x1, int sharp, uint8_t *pred)
{
    uint8_t p2[PNMF_RES_BLOCK * PNMF_RES_BLOCK];
    pnmf_residual_subpel(R1, rows, cols, y0, y1, x0, x1, qy1, qx1, sharp, pred);
    pnmf_residual_subpel(R2, rows, cols, y0, y1, x0, x1, qy2, qx2, sharp, p2);
    const int n = (y1 - y0) * PNMF_RES_BLOCK;
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
    for (int i = 0; i < n; i += 16) { /* rows past the block's width are scratch: averaged all the same */
        const __m128i a = _mm_loadu_si128((const __m128i *)(pred + i)), b = _mm_loadu_si128((const __m128i *)(p2 + i));
        if (n - i >= 16) _mm_storeu_si128((__m128i *)(pred + i), _mm_avg_epu8(a, b));
        else _mm_storel_epi64((__m128i *)(pred + i), _mm_avg_epu8(a, b));
    }
#else
    for (int i = 0; i < n; i++) pred[i] = (uint8_t)((pred[i] + p2[i] + 1) >> 1);
#endif
}

/* Row copies where the mode is a copy. */
void pnmf_residual_predict(int mode, const uint8_t *P, const uint8_t *Pp, const uint8_t *Dp, const uint8_t *Dr,
                           const uint8_t *D, int rows, int cols, int y0, int y1, int x0, int x1, int dy, int dx,
                           uint8_t *pred)
{
    if (mode == PNMF_RES_SHIFTED_QPEL || mode == PNMF_RES_SHIFTED_SHARP) {
        pnmf_residual_subpel(Dr, rows, cols, y0, y1, x0, x1, dy, dx, mode == PNMF_RES_SHIFTED_SHARP, pred);
        return;
    }
    if (mode >= PNMF_RES_INTRA_DC) {
        predict_intra(mode, D, cols, y0, y1, x0, x1, pred, PNMF_RES_BLOCK);
        return;
    }
    const int w = x1 - x0;
    const int inside_x = x0 + dx >= 0 && x1 + dx <= cols, inside = inside_x && y0 + dy >= 0 && y1 + dy <= rows;
    /* a copy across the frame's side: its columns clamped once for all rows */
    int xs[PNMF_RES_BLOCK];
    if (mode == PNMF_RES_SHIFTED && !inside_x)
        for (int x = 0; x < w; x++) {
            const int sx = x0 + x + dx;
            xs[x] = sx < 0 ? 0 : sx >= cols ? cols - 1 : sx;
        }
    for (int y = y0; y < y1; y++) {
        uint8_t *o = pred + (y - y0) * PNMF_RES_BLOCK;
        const size_t row = (size_t)y * cols + x0;
        switch (mode) {
        case PNMF_RES_MODEL: copy_row(o, P + row, w); break;
        case PNMF_RES_PREVIOUS: copy_row(o, Dp + row, w); break;
        case PNMF_RES_MOTION:
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
            if (w == PNMF_RES_BLOCK) { /* in 16 bits, exact (-255..510), then clamped to 0..255 */
                const __m128i zero = _mm_setzero_si128();
                const __m128i a = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(Dp + row)), zero);
                const __m128i b = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(P + row)), zero);
                const __m128i c = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(Pp + row)), zero);
                _mm_storel_epi64((__m128i *)o, _mm_packus_epi16(_mm_sub_epi16(_mm_add_epi16(a, b), c), zero));
                break;
            }
#endif
            for (int x = 0; x < w; x++) o[x] = (uint8_t)pnmf_residual_clip8(Dp[row + x] + P[row + x] - Pp[row + x]);
            break;
        default:
            if (inside) {
                copy_row(o, Dr + (size_t)(y + dy) * cols + x0 + dx, w);
            } else {
                int sy = y + dy;
                sy = sy < 0 ? 0 : sy >= rows ? rows - 1 : sy;
                const uint8_t *sr = Dr + (size_t)sy * cols;
                if (inside_x) /* a row clamped, the columns inside */
                    copy_row(o, sr + x0 + dx, w);
                else
                    for (int x = 0; x < w; x++) o[x] = sr[xs[x]];
            }
            break;
        }
    }
}

void pnmf_residual_weigh_frame(const uint8_t *R, size_t n, int w, int o, uint8_t *out)
{
    size_t q = 0;
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
    /* 8 samples at once in 16 bits, exact: v * w + 32 <= 65057 fits unsigned,
     * >> 6 then + o lies in -255..1271, which the signed pack clamps to 0..255 */
    const __m128i zero = _mm_setzero_si128(), vw = _mm_set1_epi16((short)w);
    const __m128i half = _mm_set1_epi16(1 << (PNMF_RES_WP_LOG2 - 1)), vo = _mm_set1_epi16((short)o);
    for (; q + 16 <= n; q += 16) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(R + q));
        __m128i lo = _mm_unpacklo_epi8(v, zero), hi = _mm_unpackhi_epi8(v, zero);
        lo = _mm_add_epi16(_mm_srli_epi16(_mm_add_epi16(_mm_mullo_epi16(lo, vw), half), PNMF_RES_WP_LOG2), vo);
        hi = _mm_add_epi16(_mm_srli_epi16(_mm_add_epi16(_mm_mullo_epi16(hi, vw), half), PNMF_RES_WP_LOG2), vo);
        _mm_storeu_si128((__m128i *)(out + q), _mm_packus_epi16(lo, hi));
    }
#endif
    for (; q < n; q++) out[q] = (uint8_t)pnmf_residual_weigh(R[q], w, o);
}

const uint8_t *const *pnmf_residual_frame_refs(const PnmfResidual *r, int j, const uint8_t *const *ref, int nref,
                                               uint8_t *const *scratch, const uint8_t **out)
{
    for (int t = 0; t < PNMF_RES_REFS; t++) out[t] = ref ? ref[t] : NULL;
    if (ref && r->lterm && r->key0) out[PNMF_RES_LTERM_T] = r->key0; /* window flags bit 21 */
    if (!ref || !pnmf_residual_weighted(r, j)) return out;
    uint8_t use[PNMF_RES_REFS] = { 0 };
    if (nref >= 0) {
        for (int t = 0; t < nref && t < PNMF_RES_REFS; t++) use[t] = 1;
    } else { /* the references the frame's blocks read: D_{j-1} for modes 1 and 2, and the vectors' */
        const size_t nb = (size_t)r->bx * r->by;
        const uint8_t *mo = r->modes + (size_t)j * nb;
        for (size_t b = 0; b < nb && !use[0]; b++)
            use[0] = (mo[b] & 7) == PNMF_RES_PREVIOUS || (mo[b] & 7) == PNMF_RES_MOTION;
        for (size_t q = r->mvstart[j]; q < r->mvstart[j + 1]; q++) {
            use[r->mvref[q]] = 1;
            if (r->mvbi && r->mvbi[q]) use[r->mvbi[q] - 1] = 1;
        }
    }
    const size_t n = (size_t)r->rows * r->cols;
    for (int t = 0; t < PNMF_RES_REFS; t++)
        if (use[t]) pnmf_residual_weigh_frame(out[t], n, r->wp[2 * j], r->wp[2 * j + 1], scratch[t]), out[t] = scratch[t];
    return out;
}

#define DQ_RANGE (255 * 16 / PNMF_RES_MIN_STEP + 1)

void pnmf_residual_frame(const PnmfResidual *r, int j, const uint8_t *P, const uint8_t *Pp,
                         const uint8_t *const *ref, uint8_t *D)
{
    const int16_t *lev = r->lev + r->start[j];
    const int16_t *mv = r->mv + 2 * r->mvstart[j];
    const uint8_t *mvref = r->mvref + r->mvstart[j];
    const PnmfPalBlock *pal = r->pal ? r->pal + r->palstart[j] : NULL;
    const uint8_t *Dp = ref ? ref[0] : NULL, *Dr = Dp;
    const int step16 = pnmf_residual_frame_step(r, j);
    const int qp = pnmf_residual_frame_qp(r, j);
    const uint8_t *modes = r->modes + (size_t)j * r->bx * r->by;
    const int gy = r->gmv[2 * j], gx = r->gmv[2 * j + 1];
    uint8_t pred[PNMF_RES_BLOCK * PNMF_RES_BLOCK];
    /* a pixel level's value, looked up: |level| <= 255 * 16 / step + 1
     * (the reader checks it), at most DQ_RANGE for any step */
    int16_t dqt[2 * DQ_RANGE + 1];
    for (int l = -DQ_RANGE; l <= DQ_RANGE; l++) dqt[l + DQ_RANGE] = (int16_t)pnmf_residual_dequant(l, step16);
    const int16_t *dq = dqt + DQ_RANGE;
    /* window flags bit 9: the pixel levels decoded as the samples are */
    PnmfLx *lx = r->lx && j >= r->lx->from ? r->lx : NULL;
    if (lx) pnmf_lx_frame_start(lx, j);
    /* block b's column and row stepped along, not divided out */
    const int nbk = r->bx * r->by, rows = r->rows, cols = r->cols;
    /* neighbouring copies of one source and displacement in a row of
     * blocks are copied together, their rows whole: [run_x0, run_x1) of the
     * rows from run_y0 of the block row, from run_src at D's offsets; copied
     * before any other block is decoded (it may read them in D) */
    const uint8_t *run_src = NULL;
    int run_y0 = 0, run_y1 = 0, run_x0 = 0, run_x1 = 0;
#define FLUSH_RUN()                                                                                          \
    do {                                                                                                     \
        if (run_src)                                                                                         \
            for (int y_ = run_y0; y_ < run_y1; y_++)                                                         \
                copy_row(D + (size_t)y_ * cols + run_x0, run_src + (size_t)y_ * cols + run_x0,               \
                         run_x1 - run_x0);                                                                   \
        run_src = NULL;                                                                                      \
    } while (0)
    for (int b = 0, y0 = 0, x0 = 0; b < nbk; b++, x0 = x0 + PNMF_RES_BLOCK < cols ? x0 + PNMF_RES_BLOCK : (y0 += PNMF_RES_BLOCK, 0)) {
        const int y1 = y0 + PNMF_RES_BLOCK < rows ? y0 + PNMF_RES_BLOCK : rows;
        const int x1 = x0 + PNMF_RES_BLOCK < cols ? x0 + PNMF_RES_BLOCK : cols;
        if (modes[b] == PNMF_RES_MODEL) {
            /* an uncoded copy of the model, most blocks of a sprite clip:
             * it and the uncoded model copies after it in the row join
             * the run, as the copies below do one at a time */
            const int xa = x0;
            int xe = x1;
            while (xe < cols && modes[b + 1] == PNMF_RES_MODEL)
                b++, x0 = xe, xe = x0 + PNMF_RES_BLOCK < cols ? x0 + PNMF_RES_BLOCK : cols;
            if (run_src != P || run_y0 != y0 || run_x1 != xa) {
                FLUSH_RUN();
                run_src = P, run_y0 = y0, run_y1 = y1, run_x0 = xa;
            }
            run_x1 = xe;
            continue;
        }
        if (modes[b] == PNMF_RES_PALETTE) {
            FLUSH_RUN(); /* window flags bit 13: drawn from its palette */
            pnmf_pal_draw(pal++, y1 - y0, x1 - x0, D + (size_t)y0 * cols + x0, (size_t)cols);
            continue;
        }
        int mode = modes[b] & 7;
        const int coded = modes[b] & PNMF_RES_CODED;
        int dy = 0, dx = 0, frac = 0;
        /* window flags bit 17: the vector's second hypothesis, when it has one */
        const size_t vi = (size_t)(mvref - r->mvref);
        const int bi = mode == PNMF_RES_SHIFTED && r->mvbi && r->mvbi[vi];
        if (mode == PNMF_RES_SHIFTED) dy = mv[0], dx = mv[1], mv += 2, Dr = ref[*mvref++];
        if (mode == PNMF_RES_SHIFTED && r->subpel) { /* quarter samples: whole ones are copies */
            frac = (dy % 4) || (dx % 4);
            if (!frac) dy /= 4, dx /= 4;
        }
        if (bi) { /* not a copy: the average of two predictions, made here */
            const int u = r->subpel ? 1 : 4, s1 = frac ? 1 : 4; /* both vectors in quarter samples */
            pnmf_residual_compound(Dr, dy * s1, dx * s1, ref[r->mvbi[vi] - 1], r->mv2[2 * vi] * u,
                                   r->mv2[2 * vi + 1] * u, rows, cols, y0, y1, x0, x1, r->sharp, pred);
            frac = 2;
        }
        if (mode == PNMF_RES_PREVIOUS && r->warp) { /* window flags bit 23: along the frame's warp */
            int vy, vx;
            pnmf_residual_warp_mv(r, j, y0, y1, x0, x1, &vy, &vx);
            mode = PNMF_RES_SHIFTED, Dr = Dp;
            frac = (vy % 4) || (vx % 4);
            dy = frac ? vy : vy / 4, dx = frac ? vx : vx / 4;
        } else if (mode == PNMF_RES_PREVIOUS && (gy || gx)) { /* the previous frame, displaced */
            mode = PNMF_RES_SHIFTED, dy = gy, dx = gx, Dr = Dp;
        }
        if (mode == PNMF_RES_MOTION && !coded && pnmf_residual_model_still(P, Pp, cols, y0, y1, x0, x1))
            mode = PNMF_RES_SHIFTED, dy = dx = 0, Dr = Dp; /* the model did not move here: a copy in place */
        const int w = x1 - x0;
        if (!coded && !frac && mode != PNMF_RES_MOTION && mode != PNMF_RES_SPATIAL && mode < PNMF_RES_INTRA_DC &&
            (mode != PNMF_RES_SHIFTED || (y0 + dy >= 0 && y1 + dy <= rows && x0 + dx >= 0 && x1 + dx <= cols))) {
            /* a copy: from where the prediction lies straight into D, with the run before it if it continues it */
            const uint8_t *src = mode == PNMF_RES_MODEL ? P : mode == PNMF_RES_PREVIOUS ? Dp : Dr + dy * cols + dx;
            if (run_src != src || run_y0 != y0 || run_x1 != x0) {
                FLUSH_RUN();
                run_src = src, run_y0 = y0, run_y1 = y1, run_x0 = x0;
            }
            run_x1 = x1;
            continue;
        }
        FLUSH_RUN();
        if (lx && coded && !(modes[b] & PNMF_RES_TRANSFORM)) {
            if (frac == 2) /* compound: made above */
                ;
            else if (frac) /* a quarter-sample vector (window flags bit 6) */
                pnmf_residual_subpel(Dr, rows, cols, y0, y1, x0, x1, dy, dx, r->sharp, pred);
            else if (mode != PNMF_RES_SPATIAL)
                pnmf_residual_predict(mode, P, Pp, Dp, Dr, D, rows, cols, y0, y1, x0, x1, dy, dx, pred);
            pnmf_lx_block(lx, j, modes[b], mode == PNMF_RES_SPATIAL ? NULL : pred, D, y0, y1, x0, x1, (int16_t *)lev,
                          lx->lossy ? dq : NULL);
            lev += (size_t)(y1 - y0) * (x1 - x0);
            continue;
        }
        if (mode == PNMF_RES_SPATIAL) { /* reads what it has just corrected: sample by sample */
            /* the median edge predictor on row pointers, the left sample
             * carried in a register: D may alias anything, so what the
             * loop reads of r sits in locals, not reloaded for every sample */
            for (int y = y0; y < y1; y++) {
                uint8_t *row = D + (size_t)y * cols;
                const uint8_t *up = row - cols;
                int a = x0 ? row[x0 - 1] : 0;
                if (y && x0) { /* inside the frame: no edge rule in the loop */
                    /* uncoded, with the left sample and the row above
                     * (from above-left) all one value: MED gives that value
                     * at every sample (a flat area of screen content) */
                    if (!coded && up[x0 - 1] == a) {
                        int flat = 1;
                        if (x1 - x0 == PNMF_RES_BLOCK) { /* the eight samples above as one word */
                            const uint64_t aa = 0x0101010101010101ull * (uint64_t)a;
                            uint64_t u8;
                            memcpy(&u8, up + x0, 8);
                            if ((flat = u8 == aa)) memcpy(row + x0, &aa, 8);
                        } else {
                            for (int x = x0; flat && x < x1; x++) flat = up[x] == a;
                            if (flat) memset(row + x0, a, (size_t)(x1 - x0));
                        }
                        if (flat) continue;
                    }
                    for (int x = x0; x < x1; x++) {
                        int v = pnmf_lx_med(a, up[x], up[x - 1]);
                        if (coded) v = pnmf_residual_clip8(v + dq[*lev++]);
                        row[x] = (uint8_t)v;
                        a = v;
                    }
                    continue;
                }
                for (int x = x0; x < x1; x++) {
                    int v;
                    if (!y) {
                        v = x ? a : 128;
                    } else if (!x) {
                        v = up[0];
                    } else {
                        v = pnmf_lx_med(a, up[x], up[x - 1]);
                    }
                    if (coded) v = pnmf_residual_clip8(v + dq[*lev++]);
                    row[x] = (uint8_t)v;
                    a = v;
                }
            }
            continue;
        }
        const int intra = mode >= PNMF_RES_INTRA_DC;
        const int tx8 = r->tx8[(size_t)j * r->bx * r->by + b];
        const int dir = r->idir[(size_t)j * r->bx * r->by + b]; /* window flags bit 10 */
        if (intra && !coded && !dir && !tx8) { /* uncoded: predicted straight into D */
            predict_intra(mode, D, cols, y0, y1, x0, x1, D + (size_t)y0 * cols + x0, (size_t)cols);
            continue;
        }
        if (frac == 1)
            pnmf_residual_subpel(Dr, rows, cols, y0, y1, x0, x1, dy, dx, r->sharp, pred);
        else if (frac)
            ; /* compound: made above */
        else if (dir)
            pnmf_intra_predict(dir, D, cols, y0, x0, pred, PNMF_RES_BLOCK);
        else if (!intra || !(modes[b] & PNMF_RES_TRANSFORM) || tx8)
            pnmf_residual_predict(mode, P, Pp, Dp, Dr, D, rows, cols, y0, y1, x0, x1, dy, dx, pred);
        uint8_t *dst = D + (size_t)y0 * cols + x0;
        if (tx8) { /* one 8x8 transform, an intra prediction of the whole block */
            pnmf_tx8_idct_add(lev, qp, pred, PNMF_RES_BLOCK, dst, cols);
            lev += 64;
        } else if (modes[b] & PNMF_RES_TRANSFORM) { /* whole 8x8 blocks only (the reader checks) */
            for (int sb = 0; sb < 4; sb++) {
                const int sy = (sb >> 1) * 4, sx = (sb & 1) * 4;
                /* an intra block predicts each quarter from the samples
                 * around it, those of the quarters before it decoded */
                if (intra && !dir) predict_intra4(mode, D, cols, y0 + sy, x0 + sx, pred + sy * PNMF_RES_BLOCK + sx);
                idct4_add(lev, qp, pred + sy * PNMF_RES_BLOCK + sx, PNMF_RES_BLOCK, dst + (size_t)sy * cols + sx,
                          cols);
                lev += 16;
            }
        } else if (coded) {
            for (int y = y0; y < y1; y++) {
                uint8_t *o = D + (size_t)y * cols + x0;
                const uint8_t *p = pred + (y - y0) * PNMF_RES_BLOCK;
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
                if (w == PNMF_RES_BLOCK) { /* a saturated 16-bit sum, then 0..255: the exact sum clamped */
                    const __m128i v = _mm_setr_epi16(dq[lev[0]], dq[lev[1]], dq[lev[2]], dq[lev[3]], dq[lev[4]],
                                                     dq[lev[5]], dq[lev[6]], dq[lev[7]]);
                    const __m128i zero = _mm_setzero_si128();
                    const __m128i q = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)p), zero);
                    _mm_storel_epi64((__m128i *)o, _mm_packus_epi16(_mm_adds_epi16(q, v), zero));
                    lev += w;
                    continue;
                }
#endif
                for (int x = 0; x < w; x++) o[x] = (uint8_t)pnmf_residual_clip8(p[x] + dq[lev[x]]);
                lev += w;
            }
        } else {
            for (int y = y0; y < y1; y++)
                copy_row(D + (size_t)y * cols + x0, pred + (y - y0) * PNMF_RES_BLOCK, w);
        }
    }
    FLUSH_RUN();
#undef FLUSH_RUN
    if (lx) pnmf_lx_frame_end(lx, j);
    if (r->deblock) pnmf_deblock_frame(r, j, P, Pp, D);
}

int pnmf_residual_levels_read(RcDec *d, RcLevCtx *c, PnmfResidual *r, int from, int max_pixel)
{
    const size_t nb = (size_t)r->bx * r->by;
    rc_lev_ctx_init(c);
    for (int j = from; j < r->m; j++)
        /* block b's column and row stepped along, not divided out */
        for (size_t b = 0, q = r->start[j], bcol = 0, brow = 0; b < nb;
             b++, bcol + 1 < (size_t)r->bx ? bcol++ : (bcol = 0, brow++)) {
            const uint8_t mode = r->modes[(size_t)j * nb + b];
            if (!(mode & PNMF_RES_CODED)) continue;
            int y0, y1, x0, x1;
            pnmf_residual_block_at((int)brow, (int)bcol, r->rows, r->cols, &y0, &y1, &x0, &x1);
            const int kind = rc_lev_kind(j, mode);
            if (r->ctx_levels && !(mode & PNMF_RES_TRANSFORM)) { /* in the sample-context stream */
                r->tx8[(size_t)j * nb + b] = r->idir[(size_t)j * nb + b] = 0;
                q += (size_t)(y1 - y0) * (x1 - x0);
                continue;
            }
            /* format 9: an intra transform block's direction first */
            int dir = 0;
            if (r->idir_on && (mode & PNMF_RES_TRANSFORM) && (mode & 7) >= PNMF_RES_INTRA_DC &&
                (dir = pnmf_intra_read(d, c, kind, mode & 7)) < 0)
                return -3;
            r->idir[(size_t)j * nb + b] = (uint8_t)dir;
            /* then a transform block's 8x8 decision (context: pnmf_tx8_ctx()) */
            const int tx8 = r->tx8_on && (mode & PNMF_RES_TRANSFORM) &&
                            rc_decode(d, &c->t8[kind][(x0 ? r->tx8[(size_t)j * nb + b - 1] : 0) +
                                                   (y0 ? r->tx8[(size_t)j * nb + b - (size_t)r->bx] : 0)]);
            r->tx8[(size_t)j * nb + b] = (uint8_t)tx8;
            if (tx8 ? pnmf_tx8_levels_read(d, c, kind, r->lev + q, PNMF_TX8_MAX_COEF)
                : mode & PNMF_RES_TRANSFORM
                    ? rc_decode_transform_levels(d, c, kind, r->lev + q, PNMF_RES_MAX_COEF)
                    : rc_decode_pixel_levels(d, c, kind, y1 - y0, x1 - x0, r->lev + q, max_pixel))
                return -1;
            if (d->over) return -2;
            q += (size_t)(y1 - y0) * (x1 - x0);
        }
    return 0;
}
