/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The restoration filter (pfilter.h): on a padded copy of the frame every
 * block reads its neighbours at fixed offsets; two blocks at a time in
 * SSE2, the portable C the same integers (the same bytes). */
#include <stdlib.h>
#include <string.h>

#include "pfilter.h"

#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
#include <emmintrin.h>
#define PF_SSE2 1
#endif

const int8_t pnmf_pf_off[PNMF_PF_TAPS][2] = {
    { 0, 1 }, { 0, 2 }, { 1, -1 }, { 1, 0 }, { 1, 1 }, { 2, 0 },
};

/* activity thresholds of the classes (pnmf_pf_classes()) */
#define PF_ACTS 5
static const int pf_th[PF_ACTS - 1] = { 16, 48, 128, 320 };

int pnmf_pf_centre(const int16_t *c)
{
    int s = 0;
    for (int i = 0; i < PNMF_PF_TAPS; i++) s += c[i];
    return (1 << PNMF_PF_LOG2) - 2 * s;
}

size_t pnmf_pf_padded_size(int h, int w, ptrdiff_t *stride)
{
    *stride = ((ptrdiff_t)w + 2 * PNMF_PF_PADX + 15) & ~(ptrdiff_t)15;
    return (size_t)*stride * ((size_t)h + 2 * PNMF_PF_PADY);
}

void pnmf_pf_pad(uint8_t *org, ptrdiff_t stride, int h, int w)
{
    const size_t right = (size_t)stride - PNMF_PF_PADX - (size_t)w;
    for (int y = 0; y < h; y++) {
        uint8_t *r = org + y * stride;
        memset(r - PNMF_PF_PADX, r[0], PNMF_PF_PADX);
        memset(r + w, r[w - 1], right);
    }
    for (int y = 1; y <= PNMF_PF_PADY; y++) {
        memcpy(org - y * stride - PNMF_PF_PADX, org - PNMF_PF_PADX, (size_t)stride);
        memcpy(org + (h - 1 + y) * stride - PNMF_PF_PADX, org + (h - 1) * stride - PNMF_PF_PADX, (size_t)stride);
    }
}

/* The class of a block whose sums of second differences across and down are hz and vt. */
static inline int pf_class_of(int hz, int vt)
{
    const int t = hz + vt;
    /* the thresholds exceeded, counted without branches */
    const int a = (t > pf_th[0]) + (t > pf_th[1]) + (t > pf_th[2]) + (t > pf_th[3]);
    return 3 * a + (hz > 2 * vt ? 1 : vt > 2 * hz ? 2 : 0);
}

/* The class of the block at (y0, x0) of a padded frame. */
static inline int pf_class(const uint8_t *org, ptrdiff_t stride, int y0, int x0)
{
    int hz = 0, vt = 0;
    for (int y = y0; y < y0 + PNMF_PF_BLOCK; y++) {
        const uint8_t *r = org + y * stride;
        for (int x = x0; x < x0 + PNMF_PF_BLOCK; x++) {
            const int p2 = 2 * r[x];
            hz += abs(p2 - r[x - 1] - r[x + 1]), vt += abs(p2 - r[x - stride] - r[x + stride]);
        }
    }
    return pf_class_of(hz, vt);
}

/* Sample p of a padded frame filtered with taps c and centre ctr. */
static inline uint8_t pf_sample(const uint8_t *p, ptrdiff_t stride, const int16_t *c, int ctr)
{
    int v = ctr * p[0] + (1 << (PNMF_PF_LOG2 - 1));
    for (int i = 0; i < PNMF_PF_TAPS; i++) {
        const ptrdiff_t o = pnmf_pf_off[i][0] * stride + pnmf_pf_off[i][1];
        v += c[i] * (p[o] + p[-o]);
    }
    return (uint8_t)(v < 0 ? 0 : v >> PNMF_PF_LOG2 > 255 ? 255 : v >> PNMF_PF_LOG2);
}

#ifdef PF_SSE2
static inline __m128i load8(const uint8_t *p)
{
    return _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)p), _mm_setzero_si128());
}

static inline __m128i abs16(__m128i v) { return _mm_max_epi16(v, _mm_sub_epi16(_mm_setzero_si128(), v)); }

/* The classes of the two blocks at (y, x) and (y, x + 4) of a padded frame. */
static inline void pf_class2(const uint8_t *org, ptrdiff_t stride, int y, int x, int k[2])
{
    __m128i ah = _mm_setzero_si128(), av = _mm_setzero_si128();
    for (int r = 0; r < PNMF_PF_BLOCK; r++) {
        const uint8_t *p = org + (y + r) * stride + x;
        const __m128i c = load8(p), c2 = _mm_add_epi16(c, c);
        ah = _mm_add_epi16(ah, abs16(_mm_sub_epi16(_mm_sub_epi16(c2, load8(p - 1)), load8(p + 1))));
        av = _mm_add_epi16(av, abs16(_mm_sub_epi16(_mm_sub_epi16(c2, load8(p - stride)), load8(p + stride))));
    }
    /* at most 4 * 1020 a column: the four columns of each block summed,
     * across in the even lanes and down in the odd ones */
    const __m128i one = _mm_set1_epi16(1);
    const __m128i sh = _mm_madd_epi16(ah, one), sv = _mm_madd_epi16(av, one);
    const __m128i th = _mm_add_epi32(sh, _mm_shuffle_epi32(sh, _MM_SHUFFLE(2, 3, 0, 1)));
    const __m128i tv = _mm_add_epi32(sv, _mm_shuffle_epi32(sv, _MM_SHUFFLE(2, 3, 0, 1)));
    k[0] = pf_class_of(_mm_cvtsi128_si32(th), _mm_cvtsi128_si32(tv));
    k[1] = pf_class_of(_mm_cvtsi128_si32(_mm_unpackhi_epi64(th, th)), _mm_cvtsi128_si32(_mm_unpackhi_epi64(tv, tv)));
}

/* The taps of a class, interleaved for _mm_madd_epi16: pairs (c0, c1),
 * (c2, c3), (c4, c5), then (centre, rounding). */
typedef struct PfVec {
    __m128i k[4];
} PfVec;

/* Eight samples from p of a padded frame, the left four filtered with l,
 * the right four with r, into out. */
static inline void pf_filter8(const uint8_t *p, ptrdiff_t stride, const PfVec *l, const PfVec *r, uint8_t *out)
{
    const __m128i c = load8(p);
    const __m128i s0 = _mm_add_epi16(load8(p + 1), load8(p - 1));
    const __m128i s1 = _mm_add_epi16(load8(p + 2), load8(p - 2));
    const __m128i s2 = _mm_add_epi16(load8(p + stride - 1), load8(p - stride + 1));
    const __m128i s3 = _mm_add_epi16(load8(p + stride), load8(p - stride));
    const __m128i s4 = _mm_add_epi16(load8(p + stride + 1), load8(p - stride - 1));
    const __m128i s5 = _mm_add_epi16(load8(p + 2 * stride), load8(p - 2 * stride));
    const __m128i one = _mm_set1_epi16(1);
    __m128i lo = _mm_madd_epi16(_mm_unpacklo_epi16(s0, s1), l->k[0]);
    __m128i hi = _mm_madd_epi16(_mm_unpackhi_epi16(s0, s1), r->k[0]);
    lo = _mm_add_epi32(lo, _mm_madd_epi16(_mm_unpacklo_epi16(s2, s3), l->k[1]));
    hi = _mm_add_epi32(hi, _mm_madd_epi16(_mm_unpackhi_epi16(s2, s3), r->k[1]));
    lo = _mm_add_epi32(lo, _mm_madd_epi16(_mm_unpacklo_epi16(s4, s5), l->k[2]));
    hi = _mm_add_epi32(hi, _mm_madd_epi16(_mm_unpackhi_epi16(s4, s5), r->k[2]));
    lo = _mm_add_epi32(lo, _mm_madd_epi16(_mm_unpacklo_epi16(c, one), l->k[3]));
    hi = _mm_add_epi32(hi, _mm_madd_epi16(_mm_unpackhi_epi16(c, one), r->k[3]));
    /* floored by the arithmetic shift, clamped by the two packs */
    const __m128i v = _mm_packs_epi32(_mm_srai_epi32(lo, PNMF_PF_LOG2), _mm_srai_epi32(hi, PNMF_PF_LOG2));
    _mm_storel_epi64((__m128i *)out, _mm_packus_epi16(v, v));
}
#endif

void pnmf_pf_classes(const uint8_t *org, ptrdiff_t stride, int h, int w, uint8_t *cls)
{
    const int nby = (h + PNMF_PF_BLOCK - 1) / PNMF_PF_BLOCK, nbx = (w + PNMF_PF_BLOCK - 1) / PNMF_PF_BLOCK;
    for (int by = 0; by < nby; by++) {
        uint8_t *row = cls + (size_t)by * nbx;
        int bx = 0;
#ifdef PF_SSE2
        for (; bx + 1 < nbx; bx += 2) {
            int k[2];
            pf_class2(org, stride, by * PNMF_PF_BLOCK, bx * PNMF_PF_BLOCK, k);
            row[bx] = (uint8_t)k[0], row[bx + 1] = (uint8_t)k[1];
        }
#endif
        for (; bx < nbx; bx++) row[bx] = (uint8_t)pf_class(org, stride, by * PNMF_PF_BLOCK, bx * PNMF_PF_BLOCK);
    }
}

void pnmf_pf_apply(const PnmfPFilter *pf, const uint8_t *org, ptrdiff_t stride, int h, int w, uint8_t *dst,
                   ptrdiff_t dstride, uint8_t *cls)
{
    int16_t c[PNMF_PF_CLASSES][PNMF_PF_TAPS];
    int ctr[PNMF_PF_CLASSES];
    /* a class left out is the identity: no taps, the centre whole */
    for (int k = 0; k < PNMF_PF_CLASSES; k++) {
        for (int i = 0; i < PNMF_PF_TAPS; i++) c[k][i] = pf->mask >> k & 1 ? pf->c[k][i] : 0;
        ctr[k] = pnmf_pf_centre(c[k]);
    }
#ifdef PF_SSE2
    PfVec vec[PNMF_PF_CLASSES];
    for (int k = 0; k < PNMF_PF_CLASSES; k++) {
        for (int i = 0; i < 3; i++)
            vec[k].k[i] = _mm_set_epi16(c[k][2 * i + 1], c[k][2 * i], c[k][2 * i + 1], c[k][2 * i], c[k][2 * i + 1],
                                        c[k][2 * i], c[k][2 * i + 1], c[k][2 * i]);
        const short rnd = 1 << (PNMF_PF_LOG2 - 1), cc = (short)ctr[k];
        vec[k].k[3] = _mm_set_epi16(rnd, cc, rnd, cc, rnd, cc, rnd, cc);
    }
#endif
    const int nby = (h + PNMF_PF_BLOCK - 1) / PNMF_PF_BLOCK, nbx = (w + PNMF_PF_BLOCK - 1) / PNMF_PF_BLOCK;
    for (int by = 0; by < nby; by++) {
        const int y0 = by * PNMF_PF_BLOCK, y1 = y0 + PNMF_PF_BLOCK < h ? y0 + PNMF_PF_BLOCK : h;
        pnmf_pf_classes(org + y0 * stride, stride, PNMF_PF_BLOCK, w, cls);
        int bx = 0;
#ifdef PF_SSE2
        for (; bx + 1 < nbx; bx += 2) {
            const int x = bx * PNMF_PF_BLOCK, n = w - x < 8 ? w - x : 8;
            const int kl = cls[bx], kr = cls[bx + 1];
            const uint8_t *in = org + y0 * stride + x;
            uint8_t *out = dst + y0 * dstride + x;
            if (!(pf->mask >> kl & 1) && !(pf->mask >> kr & 1)) { /* both shown as decoded */
                for (int y = y0; y < y1; y++, in += stride, out += dstride)
                    if (n == 8) _mm_storel_epi64((__m128i *)out, _mm_loadl_epi64((const __m128i *)in));
                    else memcpy(out, in, (size_t)n);
            } else if (n == 8) {
                for (int y = y0; y < y1; y++, in += stride, out += dstride)
                    pf_filter8(in, stride, &vec[kl], &vec[kr], out);
            } else {
                for (int y = y0; y < y1; y++, in += stride, out += dstride) {
                    uint8_t t[8];
                    pf_filter8(in, stride, &vec[kl], &vec[kr], t);
                    memcpy(out, t, (size_t)n);
                }
            }
        }
#endif
        for (; bx < nbx; bx++) {
            const int x0 = bx * PNMF_PF_BLOCK, x1 = x0 + PNMF_PF_BLOCK < w ? x0 + PNMF_PF_BLOCK : w;
            const int k = cls[bx];
            for (int y = y0; y < y1; y++) {
                const uint8_t *p = org + y * stride;
                uint8_t *out = dst + y * dstride;
                if (!(pf->mask >> k & 1)) memcpy(out + x0, p + x0, (size_t)(x1 - x0));
                else
                    for (int x = x0; x < x1; x++) out[x] = pf_sample(p + x, stride, c[k], ctr[k]);
            }
        }
    }
}
