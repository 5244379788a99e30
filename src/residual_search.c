/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The encoder's side of the residual layer (residual_search.h): for each
 * block, the mode, vector and levels of least squared error + lambda *
 * estimated bits, decoded as pnmf_residual_frame() decodes them. */
#include <math.h>
#include <pthread.h>
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
#include <emmintrin.h>
#endif
#include <stdlib.h>
#include <string.h>

#include "deblock.h"
#include "internal.h"
#include "intra.h"
#include "lossless.h"
#include "lossless_match.h"
#include "palette_enc.h"
#include "residual_search.h"
#include "enc_warp.h"
#include "tuning.h"
#include "tx8.h"

/* The step for quality q: 2^(q/8) gray levels. */
int pnmf_residual_step(int q)
{
    if (q < 0) q = 0;
    if (q > PNMF_MAX_QUALITY) q = PNMF_MAX_QUALITY;
    return (int)lrint(16.0 * pow(2.0, q / 8.0));
}

/* The forward quantizer of the 4x4 transform: MF = 2^15 / (v * scale) for
 * the standard's normAdjust values v (I. Richardson, "H.264 and MPEG-4
 * Video Compression", 2003, 6.4.8), by qp % 6 and the column
 * pnmf_residual_coef_class() gives. */
static const int tr_mf[6][3] = { { 13107, 5243, 8066 }, { 11916, 4660, 7490 }, { 10082, 4194, 6554 },
                                 { 9362, 3647, 5825 },  { 8192, 3355, 5243 },  { 7282, 2893, 4559 } };

void pnmf_residual_fdct4(const int *x, int *w)
{
    int t[16];
    for (int i = 0; i < 4; i++) {
        const int *r = x + 4 * i;
        const int a = r[0] + r[3], b = r[1] + r[2], c = r[1] - r[2], d = r[0] - r[3];
        t[4 * i] = a + b, t[4 * i + 1] = 2 * d + c, t[4 * i + 2] = a - b, t[4 * i + 3] = d - 2 * c;
    }
    for (int j = 0; j < 4; j++) {
        const int a = t[j] + t[12 + j], b = t[4 + j] + t[8 + j], c = t[4 + j] - t[8 + j], d = t[j] - t[12 + j];
        w[j] = a + b, w[4 + j] = 2 * d + c, w[8 + j] = a - b, w[12 + j] = d - 2 * c;
    }
}

/* LOCO-I's median edge detector on the decoded frame D; 128 at the origin
 * (the spatial prediction, mode 3). */
static inline int spatial(const uint8_t *D, int cols, int y, int x)
{
    const size_t q = (size_t)y * cols + x;
    if (!y) return x ? D[q - 1] : 128;
    if (!x) return D[q - cols];
    const int a = D[q - 1], b = D[q - cols], c = D[q - cols - 1];
    const int mx = a > b ? a : b, mn = a < b ? a : b;
    return c >= mx ? mn : c <= mn ? mx : a + b - c;
}

/* An intra transform block's direction (intra.h) in the levels stream:
 * whether it has one, then its index in the family of its prediction. */
static void intra_dir_code(RcBin *o, RcLevCtx *c, int kind, int mode, int dir)
{
    const int f = mode - PNMF_RES_INTRA_DC;
    int fm, k;
    rc_bin(o, &c->idir[kind & 1][f], dir != 0);
    if (!dir) return;
    pnmf_intra_family(dir, &fm, &k);
    rc_bin(o, &c->idk[f][0], k >> 1);
    rc_bin(o, &c->idk[f][1 + (k >> 1)], k & 1);
}

int pnmf_residual_levels_stream(RcBin *o, RcLevCtx *c, const PnmfResidual *r, int from, int max_pixel)
{
    const size_t nb = (size_t)r->bx * r->by;
    rc_lev_ctx_init(c);
    const int tx8_on = pnmf_tx8_used(r, from, r->m); /* format 9: window flags bit 8 */
    const int idir_on = pnmf_intra_used(r, from, r->m); /* and bit 10 */
    for (int j = from; j < r->m; j++)
        for (size_t b = 0, q = r->start[j]; b < nb; b++) {
            const uint8_t mode = r->modes[(size_t)j * nb + b];
            if (!(mode & PNMF_RES_CODED)) continue;
            int y0, y1, x0, x1;
            pnmf_residual_block(r->bx, r->rows, r->cols, b, &y0, &y1, &x0, &x1);
            const int kind = rc_lev_kind(j, mode);
            if (r->ctx_levels && !(mode & PNMF_RES_TRANSFORM)) { /* in the sample-context stream */
                q += (size_t)(y1 - y0) * (x1 - x0);
                continue;
            }
            const int tx8 = r->tx8[(size_t)j * nb + b];
            if (idir_on && (mode & PNMF_RES_TRANSFORM) && (mode & 7) >= PNMF_RES_INTRA_DC)
                intra_dir_code(o, c, kind, mode & 7, r->idir[(size_t)j * nb + b]);
            if (tx8_on && (mode & PNMF_RES_TRANSFORM)) rc_bin(o, &c->t8[kind][pnmf_tx8_ctx(r, j, b)], tx8);
            if (tx8 ? pnmf_tx8_levels(o, c, kind, r->lev + q, PNMF_TX8_MAX_COEF)
                : mode & PNMF_RES_TRANSFORM
                    ? rc_transform_levels(o, c, kind, r->lev + q, PNMF_RES_MAX_COEF)
                    : rc_pixel_levels(o, c, kind, y1 - y0, x1 - x0, r->lev + q, max_pixel))
                return -1;
            q += (size_t)(y1 - y0) * (x1 - x0);
        }
    return 0;
}

/* The range coder's price of a decision (rangecoder_enc.h). */
float rc_cost_table[(1 << RC_COST_BITS) + 1];
int64_t rc_cost_fixed_table[(1 << RC_COST_BITS) + 1];
void rc_cost_init(void)
{
    rc_cost_table[0] = 12.0f; /* a probability under 2^-12 (rare): the price of 2^-12 */
    for (int p = 1; p <= 1 << RC_COST_BITS; p++) rc_cost_table[p] = (float)-log2((double)p / (1 << RC_COST_BITS));
    for (int p = 0; p <= 1 << RC_COST_BITS; p++) rc_cost_fixed_table[p] = (int64_t)(rc_cost_table[p] * 0x1p34f);
}

/* Estimated bits of a level once zstd has seen the layer: zeros are cheap
 * in runs, larger magnitudes cost about two bits per doubling (fitted to
 * the development set, samples/devset, not derived). */
#define LEVEL_BITS_TABLE 4097
static double level_bits_table[LEVEL_BITS_TABLE];
static double log2_1p_table[LEVEL_BITS_TABLE]; /* log2(1 + a) */
static pthread_once_t level_bits_once = PTHREAD_ONCE_INIT;

/* A transform quantizer's step, 0.625 * 2^(qp / 6), by qp. */
static double qstep_table[PNMF_RES_MAX_QP + 1];

/* The forward quantizers' multipliers by qp % 6 in raster order, as
 * doubles: |w| * it is the integer product, exact (under 2^53). */
static double tx4_mf[6][16], tx8_mf[6][64];

static void level_bits_init(void)
{
    rc_cost_init();
    for (int qp = 0; qp <= PNMF_RES_MAX_QP; qp++) qstep_table[qp] = 0.625 * pow(2.0, qp / 6.0);
    level_bits_table[0] = PNMF_LEVEL_BITS_ZERO;
    for (int a = 1; a < LEVEL_BITS_TABLE; a++) level_bits_table[a] = PNMF_LEVEL_BITS_BASE + 2.0 * log2((double)a);
    for (int a = 0; a < LEVEL_BITS_TABLE; a++) log2_1p_table[a] = log2(1.0 + a);
    for (int m = 0; m < 6; m++) {
        for (int q = 0; q < 16; q++) tx4_mf[m][q] = tr_mf[m][pnmf_residual_coef_class(q)];
        for (int q = 0; q < 64; q++) tx8_mf[m][q] = pnmf_tx8_mf(m, q);
    }
}
static inline double level_bits(int l)
{
    const int a = l < 0 ? -l : l;
    if (a < LEVEL_BITS_TABLE) return level_bits_table[a];
    return PNMF_LEVEL_BITS_BASE + 2.0 * log2((double)a);
}
/* Level for difference d (in gray levels) minimizing error^2 + lambda * bits,
 * among the rounded level, one step toward zero, and zero. */
static inline int choose_level(int d, int pred, int step16, double lambda)
{
    const int a = d < 0 ? -d : d;
    int l0 = (a * 16 + step16 / 2) / step16;
    int best = 0;
    double bj = 1e300;
    for (int c = 0; c < 3; c++) {
        const int l = c == 0 ? l0 : c == 1 ? l0 - 1 : 0;
        if (l < 0 || (c == 2 && (l0 == 0 || l0 == 1))) continue;
        const int sl = d < 0 ? -l : l;
        const int e = d + pred - pnmf_residual_clip8(pred + pnmf_residual_dequant(sl, step16));
        const double jj = (double)e * e + lambda * level_bits(l);
        if (jj < bj) bj = jj, best = sl;
    }
    return best;
}

/* choose_level for every difference d = -255..255 where no candidate
 * level's reconstruction clips (pred + dequant(level) within 0..255): then
 * the choice does not depend on pred. try_block looks it up and falls back
 * on choose_level when the largest candidate would clip (the same levels,
 * 3-5x fewer operations per sample). */
typedef struct LevelTab {
    int16_t l[511];   /* the level chosen for d */
    int16_t dq[511];  /* dequant of it */
    int16_t dq0[511]; /* dequant of the largest candidate (the rounded level) */
    double bits[511]; /* level_bits of it */
    int elo, ehi;     /* l[d + 255] == d for every d of elo..ehi (lx_estimate()) */
} LevelTab;

static void level_tab_init(LevelTab *t, int step16, double lambda)
{
    for (int d = -255; d <= 255; d++) {
        const int a = d < 0 ? -d : d;
        const int l0 = (a * 16 + step16 / 2) / step16;
        int best = 0;
        double bj = 1e300;
        for (int c = 0; c < 3; c++) { /* choose_level's candidates, unclipped */
            const int l = c == 0 ? l0 : c == 1 ? l0 - 1 : 0;
            if (l < 0 || (c == 2 && (l0 == 0 || l0 == 1))) continue;
            const int sl = d < 0 ? -l : l;
            const int e = d - pnmf_residual_dequant(sl, step16);
            const double jj = (double)e * e + lambda * level_bits(l);
            if (jj < bj) bj = jj, best = sl;
        }
        t->l[d + 255] = (int16_t)best;
        t->dq[d + 255] = (int16_t)pnmf_residual_dequant(best, step16);
        t->dq0[d + 255] = (int16_t)pnmf_residual_dequant(d < 0 ? -l0 : l0, step16);
        t->bits[d + 255] = level_bits(best);
    }
    t->elo = t->ehi = 0;
    while (t->ehi < 255 && t->l[t->ehi + 1 + 255] == t->ehi + 1) t->ehi++;
    while (t->elo > -255 && t->l[t->elo - 1 + 255] == t->elo - 1) t->elo--;
}

/* An uncoded trial's rows y0 .. y1 - 1 of a whole-width block: the
 * prediction pb (rows PNMF_RES_BLOCK apart) written to D at (y, x0) as
 * it is, the squared error against src summed row by row; -1 once lb +
 * the sum reaches bj after a row (the rows after it not written). Each
 * row's sum in one PMADDWD in SSE2. */
static inline int uncoded_rows(const uint8_t *src, int cols, const uint8_t *pb, uint8_t *D, int y0, int y1, int x0,
                               double lb, double bj)
{
    int sse = 0;
    for (int y = y0; y < y1; y++) {
        const uint8_t *p = pb + (y - y0) * PNMF_RES_BLOCK, *s = src + (size_t)y * cols + x0;
        memcpy(D + (size_t)y * cols + x0, p, PNMF_RES_BLOCK);
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
        const __m128i zero = _mm_setzero_si128();
        const __m128i e = _mm_sub_epi16(_mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)s), zero),
                                        _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)p), zero));
        __m128i q = _mm_madd_epi16(e, e);
        q = _mm_add_epi32(q, _mm_shuffle_epi32(q, _MM_SHUFFLE(1, 0, 3, 2)));
        q = _mm_add_epi32(q, _mm_shuffle_epi32(q, _MM_SHUFFLE(2, 3, 0, 1)));
        sse += _mm_cvtsi128_si32(q);
#else
        for (int x = 0; x < PNMF_RES_BLOCK; x++) sse += ((int)s[x] - p[x]) * ((int)s[x] - p[x]);
#endif
        if (lb + sse >= bj) return -1;
    }
    return sse;
}

int pnmf_residual_uncoded_sse(const uint8_t *src, int cols, const uint8_t *pred, uint8_t *D, int y0, int y1, int x0,
                              double lb, double bj)
{
    return uncoded_rows(src, cols, pred, D, y0, y1, x0, lb, bj);
}

void pnmf_residual_sums(const uint8_t *a, size_t n, uint64_t *sum, uint64_t *sq)
{
    uint64_t s = 0, s2 = 0;
    size_t q = 0;
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
    /* 16 samples at a time: PSADBW against zero sums them, PMADDWD their
     * squares in pairs; the squares' 32-bit lanes take at most 2^12 steps
     * of 2 * 2 * 255^2 each (under 2^31), then move to 64 bits */
    const __m128i zero = _mm_setzero_si128();
    while (q + 16 <= n) {
        __m128i acc = zero, acc2 = zero;
        for (int i = 0; i < 4096 && q + 16 <= n; i++, q += 16) {
            const __m128i v = _mm_loadu_si128((const __m128i *)(a + q));
            const __m128i lo = _mm_unpacklo_epi8(v, zero), hi = _mm_unpackhi_epi8(v, zero);
            acc = _mm_add_epi64(acc, _mm_sad_epu8(v, zero));
            acc2 = _mm_add_epi32(acc2, _mm_add_epi32(_mm_madd_epi16(lo, lo), _mm_madd_epi16(hi, hi)));
        }
        uint32_t l[4];
        _mm_storeu_si128((__m128i *)l, acc2);
        s += (uint64_t)(uint32_t)_mm_cvtsi128_si32(acc) + (uint64_t)(uint32_t)_mm_cvtsi128_si32(_mm_unpackhi_epi64(acc, acc));
        s2 += (uint64_t)l[0] + l[1] + l[2] + l[3];
    }
#endif
    for (; q < n; q++) s += a[q], s2 += (uint32_t)a[q] * a[q];
    *sum = s, *sq = s2;
}

int64_t pnmf_residual_weighted_runs(const int32_t *ssum, const uint8_t *R, size_t n, int w, int o)
{
    int64_t s = 0;
    size_t k = 0, q = 0;
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD) && PNMF_WP_RUN == 16
    /* 16 samples weighed at once: v w + 2^(LOG2 - 1) fits 16 bits
     * unsigned (255 * 255 + 32), shifted logically; + o within 16 bits
     * signed; PACKUSWB clamps to 0..255 as pnmf_residual_weigh() does;
     * PSADBW against zero sums the run */
    const __m128i zero = _mm_setzero_si128(), vw = _mm_set1_epi16((short)w), vo = _mm_set1_epi16((short)o);
    const __m128i rnd = _mm_set1_epi16(1 << (PNMF_RES_WP_LOG2 - 1));
    for (; q + 16 <= n; k++, q += 16) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(R + q));
        __m128i lo = _mm_mullo_epi16(_mm_unpacklo_epi8(v, zero), vw), hi = _mm_mullo_epi16(_mm_unpackhi_epi8(v, zero), vw);
        lo = _mm_add_epi16(_mm_srli_epi16(_mm_add_epi16(lo, rnd), PNMF_RES_WP_LOG2), vo);
        hi = _mm_add_epi16(_mm_srli_epi16(_mm_add_epi16(hi, rnd), PNMF_RES_WP_LOG2), vo);
        const __m128i t = _mm_sad_epu8(_mm_packus_epi16(lo, hi), zero);
        const int r = _mm_cvtsi128_si32(t) + _mm_extract_epi16(t, 4);
        s += abs(ssum[k] - r);
    }
#endif
    uint8_t lut[256];
    for (int v = 0; v < 256; v++) lut[v] = (uint8_t)pnmf_residual_weigh(v, w, o);
    for (; q + PNMF_WP_RUN <= n; k++, q += PNMF_WP_RUN) {
        int r = 0;
        for (int i = 0; i < PNMF_WP_RUN; i++) r += lut[R[q + i]];
        s += abs(ssum[k] - r);
    }
    return s;
}

/* A lossless coded trial put off until its estimate is weighed against the
 * others' (pnmf_residual_encode_frame()). */
typedef struct LxTrial {
    double lb, est; /* the mode's and vector's cost and the error; the levels' fixed-table bits */
    int byte, pm, dy, dx, t;
    int same;   /* an earlier trial of the same prediction and price kind (so the same levels), or -1 */
    int priced; /* bits holds the levels' whole price with the contexts */
    double bits;
    int16_t lv[PNMF_RES_BLOCK * PNMF_RES_BLOCK]; /* its levels */
    uint8_t pb[PNMF_RES_BLOCK * PNMF_RES_BLOCK]; /* its prediction (a whole block, not spatial) */
} LxTrial;

/* Estimated bits of a block's vector, coded as the difference from the
 * previous shifted block's vector in the frame: a cheap guess for the
 * search's many candidates; each reference's winner and the block's mode
 * are then priced with the range coder's contexts (rc_vector_step). */
static inline double log2_1p(int a) { return a < LEVEL_BITS_TABLE ? log2_1p_table[a] : log2(1.0 + a); }

/* mv_bits() of a vector other than the prediction, from log2(1 + |d|) of
 * its two differences (a grid of vectors takes each row's and column's
 * once) */
static inline double mv_bits_logs(double ly, double lx) { return PNMF_MV_BITS_BASE + 2.0 * (ly + lx); }

static inline double mv_bits(int dy, int dx, int py, int px)
{
    if (dy == py && dx == px) return PNMF_MV_BITS_SAME;
    return mv_bits_logs(log2_1p(abs(dy - py)), log2_1p(abs(dx - px)));
}

/* A coded sample of a pixel trial: its level *l for the difference d
 * from pred, from the table where its value stays within 0..255, else
 * chosen here; the table's bits added to *bits when tb. Returns the
 * reconstructed value. */
static inline int coded_sample(const LevelTab *lt, int pred, int d, int step16, double lambda, int tb,
                               double *bits, int *l)
{
    if ((unsigned)(pred + lt->dq0[d + 255]) <= 255) {
        *l = lt->l[d + 255];
        if (tb) *bits += lt->bits[d + 255];
        return pred + lt->dq[d + 255];
    }
    *l = choose_level(d, pred, step16, lambda);
    if (tb) *bits += level_bits(*l);
    return pnmf_residual_clip8(pred + pnmf_residual_dequant(*l, step16));
}

/* Run one (mode, coded) choice over a block, writing D and, when levs is
 * not NULL, the levels; returns squared error + lambda * bits (the
 * vector's bits not included). est (may be NULL): the levels' bits by
 * the fixed table; priced with the contexts (lc) only when that is at
 * most est_cap, else 1e300; est_cap < 0: not priced, the squared error
 * alone returned (the levels in levs, for the caller to price); levs
 * and lc with est_cap >= 0 (the block committed): the contexts moved as
 * coding its levels moves them, the squared error alone returned. exact:
 * 1e300 unless the block is reproduced
 * exactly (a lossless coding's uncoded trial: an error of one gray level
 * outweighs what levels cost). lb, bj: 1e300 once lb + the squared error
 * reaches bj (the caller adds the result to lb and keeps it below bj
 * only); INFINITY: never. */
static double try_block(int mode, int coded, const LevelTab *lt, int step16, double lambda, const uint8_t *src,
                        const uint8_t *P, const uint8_t *Pp, const uint8_t *Dp, const uint8_t *Dr, uint8_t *D,
                        int rows, int cols, int y0, int y1, int x0, int x1, int dy, int dx, int16_t *levs,
                        RcLevCtx *lc, int kind, double est_cap, double *est, int exact, double lb, double bj,
                        const uint8_t *pre)
{
    int16_t lv[PNMF_RES_BLOCK * PNMF_RES_BLOCK];
    int16_t *out = levs;
    if (lc && coded) levs = lv;
    double bits = 0;
    int sse = 0, nz = 0; /* at most 64 * 255^2: exact, and no floating-point chain */
    uint8_t pb[PNMF_RES_BLOCK * PNMF_RES_BLOCK];
    const int spat = mode == PNMF_RES_SPATIAL;
    if (exact && !coded) {
        /* a lossless coding's uncoded trial: the prediction equals the
         * source or the trial fails. It writes no sample of D: the block's
         * commit writes each before anything reads it (the spatial
         * prediction reads the samples before it in raster order), and
         * the frame decoded so far is the source, which the spatial
         * prediction reads here (as lx_estimate()) */
        if (lb >= bj) return 1e300;
        const int w = x1 - x0;
        if (spat) {
            for (int y = y0; y < y1; y++)
                for (int x = x0; x < x1; x++)
                    if (src[(size_t)y * cols + x] != spatial(src, cols, y, x)) return 1e300;
            return 0;
        }
        const uint8_t *p = pre;
        if (!p) pnmf_residual_predict(mode, P, Pp, Dp, Dr, D, rows, cols, y0, y1, x0, x1, dy, dx, pb), p = pb;
        for (int y = y0; y < y1; y++, p += PNMF_RES_BLOCK) {
            const uint8_t *s = src + (size_t)y * cols + x0;
            if (w == PNMF_RES_BLOCK) { /* a whole row: one 8-byte word each */
                uint64_t a, b;
                memcpy(&a, s, 8), memcpy(&b, p, 8);
                if (a != b) return 1e300;
            } else if (memcmp(s, p, (size_t)w)) {
                return 1e300;
            }
        }
        return 0;
    }
    /* the fixed table's bits are wanted unless the contexts price the
     * levels and no estimate is asked for */
    const int tb = !(lc && coded) || est;
    if (pre) memcpy(pb, pre, (size_t)(y1 - y0) * PNMF_RES_BLOCK); /* made by the caller (compound) */
    else if (!spat) pnmf_residual_predict(mode, P, Pp, Dp, Dr, D, rows, cols, y0, y1, x0, x1, dy, dx, pb);
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
    if (!coded && !spat && !exact && x1 - x0 == PNMF_RES_BLOCK) { /* (the test after each row the same) */
        sse = uncoded_rows(src, cols, pb, D, y0, y1, x0, lb, bj);
        if (sse < 0) return 1e300;
        if (est) *est = bits;
        return (double)sse + lambda * bits;
    }
#endif
    int yg = y0; /* the first row of the loop below */
    if (coded && !spat && x1 - x0 == PNMF_RES_BLOCK) {
        /* a coded trial of a whole-width block from a prediction made: the
         * loop below without its per-sample choice of prediction, each
         * row's samples and levels kept apart and written at once (D is
         * no source the row reads) */
        for (int y = y0; y < y1; y++) {
            const uint8_t *s = src + (size_t)y * cols + x0, *p = pb + (y - y0) * PNMF_RES_BLOCK;
            uint8_t row[PNMF_RES_BLOCK];
            int16_t lr[PNMF_RES_BLOCK];
            for (int x = 0; x < PNMF_RES_BLOCK; x++) {
                int l;
                const int v = coded_sample(lt, p[x], (int)s[x] - p[x], step16, lambda, tb, &bits, &l);
                nz |= l;
                lr[x] = (int16_t)l;
                row[x] = (uint8_t)v;
                const int e = (int)s[x] - v;
                sse += e * e;
            }
            if (levs) memcpy(levs, lr, sizeof(lr)), levs += PNMF_RES_BLOCK;
            memcpy(D + (size_t)y * cols + x0, row, PNMF_RES_BLOCK);
            if ((exact && sse) || lb + sse >= bj) return 1e300;
        }
        yg = y1;
    }
    for (int y = yg; y < y1; y++) {
        for (int x = x0; x < x1; x++) {
            const size_t q = (size_t)y * cols + x;
            const int pred = spat ? spatial(D, cols, y, x) : pb[(y - y0) * PNMF_RES_BLOCK + x - x0];
            int v = pred;
            if (coded) {
                int l;
                v = coded_sample(lt, pred, (int)src[q] - pred, step16, lambda, tb, &bits, &l);
                nz |= l;
                if (levs) *levs++ = (int16_t)l;
            }
            D[q] = (uint8_t)v;
            const int e = (int)src[q] - v;
            sse += e * e;
        }
        /* exact: a sample of the row missed; else the error alone
         * reaches the best: lb + it, the least the caller's sum can be,
         * cannot win (checked by rows: a test per sample on its error
         * costs more in mispredicted branches than it saves) */
        if ((exact && sse) || lb + sse >= bj) return 1e300;
    }
    if (coded && !nz) return 1e300; /* the skip block is the same and cheaper */
    if (est) *est = bits;
    if (lc && coded && est_cap < 0) { /* the levels kept for a later price: the error alone */
        if (out) memcpy(out, lv, (size_t)(y1 - y0) * (x1 - x0) * sizeof(*lv));
        return (double)sse;
    }
    if (lc && coded && bits > est_cap) return 1e300;
    if (lc && coded && !out) { /* a trial's price, stopped once the caller's sum reaches bj */
        RcBin o = { .update = 0 };
        if (rc_pixel_levels_fixed_upto(&o, lc, kind | pnmf_residual_is_intra(mode) << 1, y1 - y0, x1 - x0, lv,
                                       INT16_MAX, lb, (double)sse, lambda, bj))
            return 1e300;
        return (double)sse + lambda * o.bits;
    }
    if (lc && coded) { /* the block committed: its contexts moved, no price */
        rc_pixel_levels_adapt(lc, kind | pnmf_residual_is_intra(mode) << 1, y1 - y0, x1 - x0, lv);
        memcpy(out, lv, (size_t)(y1 - y0) * (x1 - x0) * sizeof(*lv));
        return (double)sse;
    }
    return (double)sse + lambda * bits;
}

/* A lossless coding's estimate of a coded trial (the caller's est_cap < 0 of
 * try_block(), without its reconstruction): every coding is exact, so
 * the levels are the samples less the prediction, written to lv, and
 * the frame decoded so far is the source, which the spatial prediction
 * reads. *est: the levels' fixed-table bits. Returns 1, 0 when every
 * level is 0 (the uncoded trial is the same), -1 when a level's table
 * entry does not reconstruct its sample (the caller runs try_block()). made: the
 * prediction, or NULL to make it here. */
static int lx_estimate(int mode, const LevelTab *lt, const uint8_t *src, const uint8_t *P, const uint8_t *Pp,
                       const uint8_t *Dp, const uint8_t *Dr, const uint8_t *D, int rows, int cols, int y0, int y1,
                       int x0, int x1, int dy, int dx, int16_t *lv, double *est, const uint8_t *made)
{
    uint8_t own[PNMF_RES_BLOCK * PNMF_RES_BLOCK];
    const uint8_t *pb = made ? made : own; /* the prediction, made by the caller or here */
    const int spat = mode == PNMF_RES_SPATIAL;
    if (!spat && !made) pnmf_residual_predict(mode, P, Pp, Dp, Dr, D, rows, cols, y0, y1, x0, x1, dy, dx, own);
    /* the levels and their range first (a loop without a dependence
     * from sample to sample), then the table's test only where the range
     * leaves its exact span, then the bits added in the samples' order
     * (the same double) */
    int nz = 0, off = 0, dmin = 0, dmax = 0;
    const int n = (y1 - y0) * (x1 - x0);
    int16_t *l0 = lv;
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
    if (!spat && x1 - x0 == PNMF_RES_BLOCK) { /* a row of eight levels at a time */
        const __m128i z = _mm_setzero_si128();
        __m128i lo = z, hi = z;
        for (int y = y0; y < y1; y++, lv += PNMF_RES_BLOCK) {
            const __m128i a = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(src + (size_t)y * cols + x0)), z);
            const __m128i b = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(pb + (y - y0) * PNMF_RES_BLOCK)), z);
            const __m128i d = _mm_sub_epi16(a, b);
            _mm_storeu_si128((__m128i *)lv, d);
            lo = _mm_min_epi16(lo, d), hi = _mm_max_epi16(hi, d);
        }
        int16_t l8[8], h8[8];
        _mm_storeu_si128((__m128i *)l8, lo), _mm_storeu_si128((__m128i *)h8, hi);
        for (int k = 0; k < 8; k++) {
            dmin = l8[k] < dmin ? l8[k] : dmin, dmax = h8[k] > dmax ? h8[k] : dmax;
        }
        nz = dmin | dmax;
    } else
#endif
    {
        for (int y = y0; y < y1; y++) {
            const uint8_t *s = src + (size_t)y * cols, *p = pb + (y - y0) * PNMF_RES_BLOCK - x0;
            for (int x = x0; x < x1; x++) {
                const int d = (int)s[x] - (spat ? spatial(src, cols, y, x) : p[x]);
                dmin = d < dmin ? d : dmin, dmax = d > dmax ? d : dmax;
                nz |= d;
                *lv++ = (int16_t)d;
            }
        }
    }
    if (dmin < lt->elo || dmax > lt->ehi)
        for (int i = 0; i < n; i++) off |= lt->l[l0[i] + 255] != l0[i];
    const double *tb = lt->bits + 255;
    double bits = 0;
    int i = 0;
    for (; i + 8 <= n; i += 8) { /* one sum, in the samples' order */
        bits += tb[l0[i]], bits += tb[l0[i + 1]], bits += tb[l0[i + 2]], bits += tb[l0[i + 3]];
        bits += tb[l0[i + 4]], bits += tb[l0[i + 5]], bits += tb[l0[i + 6]], bits += tb[l0[i + 7]];
    }
    for (; i < n; i++) bits += tb[l0[i]];
    *est = bits;
    return off ? -1 : nz != 0;
}

/* A transform coefficient's level: xr its magnitude in steps of size
 * sqrt(q2), the level of 0, floor(xr) and floor(xr) + 1 (at least 1) with
 * the least squared error + lambda * bits; lb[l] = lambda * level_bits(l)
 * for l < 3. Below 0.5, 0 is nearer and cheaper. */
static inline int64_t coef_level(double xr, double q2, const double lb[3], double lambda)
{
    int64_t l = 0;
    if (xr >= 0.5) {
        const int64_t lf = (int64_t)xr;
        double bc = xr * xr * q2 + lb[0];
        for (int64_t c = lf > 1 ? lf : 1; c <= lf + 1; c++) {
            const double jc = (xr - (double)c) * (xr - (double)c) * q2 + (c < 3 ? lb[c] : lambda * level_bits((int)c));
            if (jc < bc) bc = jc, l = c;
        }
    }
    return l;
}

/* The bits of one 4x4 quarter's levels (zigzag order) in the levels
 * stream, with its contexts as they stand (not moved): the quarter's coded
 * flag in context nb (its coded neighbours in the block), then what
 * rc_transform_levels() codes of it. */
static double quarter_bits(RcLevCtx *c, int kind, int sb, int nb, const int16_t *lv)
{
    RcBin o = { .update = 0 };
    rc_transform_quarter(&o, c, kind, sb, nb, lv, PNMF_RES_MAX_COEF);
    return o.bits;
}

/* The bits of an 8x8 transform block's levels with the contexts as they
 * stand; an all-zero block costs nothing here (its 8x8 decision is priced
 * apart, and such a block is not coded). */
static double tx8_bits(RcLevCtx *c, int kind, const int16_t *lv)
{
    RcBin o = { .update = 0 };
    pnmf_tx8_levels(&o, c, kind, lv, PNMF_TX8_MAX_COEF);
    return o.bits;
}

/* Rate-distortion optimised quantization of n levels lv (zigzag order) of
 * coefficients of magnitudes xr (in steps of size sqrt(q2)), priced with
 * the levels stream's contexts: from the last level toward the first, each
 * level lowered by one where the squared error that adds is less than
 * lambda times the bits it saves. coef_level() weighs each level alone
 * with fixed bits; the contexts price what a level costs where it stands
 * (a lone level far down the zigzag costs its significance and last
 * flags and the zeros that lead up to it). n 16: quarter sb
 * of a 4x4 block, its coded flag in context nb, and then the whole
 * quarter zeroed where that pays; n 64: an 8x8 block. tail: only the
 * last levels, while they are 1 and lowering them pays (a trial's
 * cheaper search), then the quarter's zeroing as above. Returns the
 * levels' bits. */
static double rdoq_levels(int16_t *lv, const double *xr, int n, double q2, double lambda, RcLevCtx *c, int kind,
                          int sb, int nb, int tail)
{
    double bits = n == 16 ? quarter_bits(c, kind, sb, nb, lv) : tx8_bits(c, kind, lv);
    for (int z = n - 1; z >= 0; z--) {
        if (!lv[z]) continue;
        const int16_t keep = lv[z];
        const int a = abs(keep);
        if (tail && a > 1) break;
        const double dd = ((xr[z] - (a - 1)) * (xr[z] - (a - 1)) - (xr[z] - a) * (xr[z] - a)) * q2;
        if (dd >= lambda * bits) { /* it cannot save that many bits */
            if (tail) break;
            continue;
        }
        lv[z] = (int16_t)(keep < 0 ? -(a - 1) : a - 1);
        int any = 0;
        for (int i = 0; i < n && !any; i++) any = lv[i] != 0;
        if (!any && n == 64) { /* an 8x8 block keeps a level */
            lv[z] = keep;
            continue;
        }
        const double b2 = n == 16 ? quarter_bits(c, kind, sb, nb, lv) : tx8_bits(c, kind, lv);
        if (dd + lambda * b2 < lambda * bits) {
            bits = b2;
        } else {
            lv[z] = keep;
            if (tail) break;
        }
    }
    if (n != 16) return bits;
    double dz = 0; /* the whole quarter zeroed */
    for (int z = 0; z < 16; z++)
        if (lv[z]) {
            const double a = abs(lv[z]);
            dz += (xr[z] * xr[z] - (xr[z] - a) * (xr[z] - a)) * q2;
        }
    if (dz > 0) {
        RcBin o = { .update = 0 };
        rc_bin(&o, &c->cbf[kind][sb][nb], 0);
        if (dz + lambda * o.bits < lambda * bits) memset(lv, 0, 16 * sizeof(*lv)), bits = o.bits;
    }
    return bits;
}

/* A transform-coded block (whole 8x8 only): quantize the four quarters'
 * coefficients with a dead zone, writing D and, when levs is not NULL,
 * the levels; returns squared error + lambda * bits, or 1e300 when every
 * level is 0 (the skip block is the same). rdoq_on (with lc): the chosen
 * block's levels (levs) lowered by rdoq_levels(), and with
 * PNMF_RDOQ_TRIALS every trial's last levels of 1 and zeroed quarters.
 * rdoq_levels() may zero every quarter of the chosen block: it stays a
 * transform block of zero levels, which the writer codes (four quarter
 * flags) and the pricing contexts here do not see; coding such a block
 * with its levels instead costs natural_cup 1.0 % BD-rate
 * (docs/measurements.md, "The development set at commit d4658f0").
 * jlb, bj as try_block()'s lb, bj (the quarters' error so far). */
static double try_transform(int mode, int qp, double lambda, const uint8_t *src, const uint8_t *P,
                            const uint8_t *Pp, const uint8_t *Dp, const uint8_t *Dr, uint8_t *D, int rows, int cols,
                            int y0, int x0, int dy, int dx, int16_t *levs, RcLevCtx *lc, int kind, int rdoq_on,
                            const uint8_t *pre, double jlb, double bj)
{
    int16_t all[64];
    double sse = 0, bits = 0;
    int nz = 0;
    const int shift = 15 + qp / 6;
    /* each coefficient's level: of 0, the one below its value and the one
     * above, the least (x - l)^2 step^2 + lambda * bits, x the value in
     * steps (the transform with H.264's scaling is orthonormal, so that is
     * the squared error it adds); a rate-distortion choice rather than
     * H.264's fixed dead zone */
    const double qs = qstep_table[qp], q2 = qs * qs;
    const double inv = 1.0 / (double)((int64_t)1 << shift);
    double lb[3];
    for (int l = 0; l < 3; l++) lb[l] = lambda * level_bits(l);
    const int tk = kind | pnmf_residual_is_intra(mode) << 1;
    const int rdoq = lc && rdoq_on && (levs || PNMF_RDOQ_TRIALS);
    /* each zigzag position's quantizer factor over 2^shift: |w| times it
     * is xr exactly (a power of two scales the exact integer product) */
    const double *mf = tx4_mf[qp % 6];
    int coded[4];
    double rbits = 0; /* the levels' price rdoq_levels() gives (the contexts not moved) */
    /* a prediction that does not read the frame being decoded (not intra):
     * the whole block's at once, each quarter the same samples */
    uint8_t whole[PNMF_RES_BLOCK * PNMF_RES_BLOCK];
    if (!pre && !pnmf_residual_is_intra(mode)) {
        pnmf_residual_predict(mode, P, Pp, Dp, Dr, D, rows, cols, y0, y0 + 8, x0, x0 + 8, dy, dx, whole);
        pre = whole;
    }
    for (int sb = 0; sb < 4; sb++) {
        const int sy = y0 + (sb >> 1) * 4, sx = x0 + (sb & 1) * 4;
        int x[16], w[16], res[16];
        int16_t lv[16];
        double xm[16];
        uint8_t pb[PNMF_RES_BLOCK * PNMF_RES_BLOCK];
        if (pre) /* a direction: the whole block predicted at once */
            for (int y = 0; y < 4; y++) memcpy(pb + y * PNMF_RES_BLOCK, pre + (sy - y0 + y) * PNMF_RES_BLOCK + sx - x0, 4);
        else
            pnmf_residual_predict(mode, P, Pp, Dp, Dr, D, rows, cols, sy, sy + 4, sx, sx + 4, dy, dx, pb);
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
        for (int y = 0; y < 4; y++) { /* a row's four differences, widened to 32 bits */
            uint32_t a, p;
            memcpy(&a, src + (size_t)(sy + y) * cols + sx, 4);
            memcpy(&p, pb + y * PNMF_RES_BLOCK, 4);
            const __m128i z = _mm_setzero_si128();
            const __m128i d = _mm_sub_epi16(_mm_unpacklo_epi8(_mm_cvtsi32_si128((int)a), z),
                                            _mm_unpacklo_epi8(_mm_cvtsi32_si128((int)p), z));
            _mm_storeu_si128((__m128i *)(x + 4 * y), _mm_srai_epi32(_mm_unpacklo_epi16(d, d), 16));
        }
#else
        for (int y = 0; y < 4; y++) {
            const uint8_t *s = src + (size_t)(sy + y) * cols + sx;
            for (int k = 0; k < 4; k++) x[4 * y + k] = (int)s[k] - pb[y * PNMF_RES_BLOCK + k];
        }
#endif
        pnmf_residual_fdct4(x, w);
        double xq[16]; /* the magnitudes in raster order */
        for (int q = 0; q < 16; q++) xq[q] = fabs((double)w[q]) * mf[q] * inv;
        for (int z = 0; z < 16; z++) {
            const int q = pnmf_residual_zigzag4[z];
            const double xr = xm[z] = xq[q];
            if (xr < 0.5) { /* under half a step: level 0 */
                lv[z] = 0;
                continue;
            }
            int64_t l = coef_level(xr, q2, lb, lambda);
            if (l > PNMF_RES_MAX_COEF) l = PNMF_RES_MAX_COEF;
            lv[z] = (int16_t)(w[q] < 0 ? -l : l);
        }
        if (rdoq)
            rbits += rdoq_levels(lv, xm, 16, q2, lambda, lc, tk, sb,
                                 ((sb & 1) ? coded[sb - 1] : 0) + ((sb & 2) ? coded[sb - 2] : 0), !levs);
        coded[sb] = 0;
        if (lc) /* the contexts price the levels below */
            for (int z = 0; z < 16; z++) coded[sb] |= lv[z] != 0;
        else
            for (int z = 0; z < 16; z++) bits += level_bits(lv[z]), coded[sb] |= lv[z] != 0;
        nz |= coded[sb];
        pnmf_residual_idct4(lv, qp, res);
        int qe = 0; /* the quarter's squared error: integers, so the sum is exact in either order */
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
        {
            /* the saturations of the 16-bit packing and sum and the
             * unsigned packing give pnmf_residual_clip8() of the sum */
            const __m128i z = _mm_setzero_si128();
            __m128i acc = z;
            for (int y = 0; y < 4; y += 2) {
                const __m128i r = _mm_packs_epi32(_mm_loadu_si128((const __m128i *)(res + 4 * y)),
                                                  _mm_loadu_si128((const __m128i *)(res + 4 * y + 4)));
                uint32_t p0, p1, s0, s1;
                memcpy(&p0, pb + y * PNMF_RES_BLOCK, 4), memcpy(&p1, pb + (y + 1) * PNMF_RES_BLOCK, 4);
                uint8_t *d0 = D + (size_t)(sy + y) * cols + sx, *d1 = d0 + cols;
                memcpy(&s0, src + (size_t)(sy + y) * cols + sx, 4), memcpy(&s1, src + (size_t)(sy + y + 1) * cols + sx, 4);
                const __m128i p = _mm_unpacklo_epi8(_mm_unpacklo_epi32(_mm_cvtsi32_si128((int)p0), _mm_cvtsi32_si128((int)p1)), z);
                const __m128i sv = _mm_unpacklo_epi8(_mm_unpacklo_epi32(_mm_cvtsi32_si128((int)s0), _mm_cvtsi32_si128((int)s1)), z);
                const __m128i v8 = _mm_packus_epi16(_mm_adds_epi16(p, r), z);
                const uint32_t v0 = (uint32_t)_mm_cvtsi128_si32(v8), v1 = (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(v8, 4));
                memcpy(d0, &v0, 4), memcpy(d1, &v1, 4);
                const __m128i e = _mm_sub_epi16(sv, _mm_unpacklo_epi8(v8, z));
                acc = _mm_add_epi32(acc, _mm_madd_epi16(e, e));
            }
            acc = _mm_add_epi32(acc, _mm_srli_si128(acc, 8));
            acc = _mm_add_epi32(acc, _mm_srli_si128(acc, 4));
            qe = _mm_cvtsi128_si32(acc);
        }
#else
        for (int y = 0; y < 4; y++) {
            const uint8_t *s = src + (size_t)(sy + y) * cols + sx;
            uint8_t *d = D + (size_t)(sy + y) * cols + sx;
            for (int k = 0; k < 4; k++) {
                const int v = pnmf_residual_clip8(pb[y * PNMF_RES_BLOCK + k] + res[4 * y + k]);
                d[k] = (uint8_t)v;
                const int e = (int)s[k] - v;
                qe += e * e;
            }
        }
#endif
        sse += qe;
        memcpy(all + 16 * sb, lv, sizeof(lv));
        /* the error alone reaches the best: jlb + it, the least the
         * caller's sum can be, cannot win */
        if (jlb + sse >= bj) return 1e300;
    }
    if (levs) memcpy(levs, all, sizeof(all));
    if (!nz) return 1e300;
    if (lc && rdoq && !levs) {
        bits = rbits;
    } else if (lc) {
        RcBin o = { .update = levs != NULL };
        rc_transform_levels(&o, lc, tk, all, PNMF_RES_MAX_COEF);
        bits = o.bits;
    }
    return sse + lambda * bits;
}

/* try_transform() with one 8x8 transform (tx8.h) instead of four 4x4
 * quarters; an intra prediction predicts the whole block. A block whose
 * squared error alone reaches budget is not priced (it cannot win);
 * rdoq_on as there. */
static double try_transform8(int mode, int qp, double lambda, const uint8_t *src, const uint8_t *P,
                             const uint8_t *Pp, const uint8_t *Dp, const uint8_t *Dr, uint8_t *D, int rows,
                             int cols, int y0, int x0, int dy, int dx, int16_t *levs, RcLevCtx *lc, int kind,
                             int rdoq_on, double budget, const uint8_t *pre)
{
    int16_t lv[64];
    int x[64], w[64], res[64];
    double xm[64];
    uint8_t pb[PNMF_RES_BLOCK * PNMF_RES_BLOCK];
    double bits = 0;
    int nz = 0;
    const int shift = 16 + qp / 6;
    /* each level as try_transform() chooses it: the H.264 8x8 transform
     * with its scaling is near orthonormal too, with the same step */
    const double qs = qstep_table[qp], q2 = qs * qs;
    const double inv = 1.0 / (double)((int64_t)1 << shift);
    double lb[3];
    for (int l = 0; l < 3; l++) lb[l] = lambda * level_bits(l);
    /* the squared error the levels add, in the transform's domain: past
     * budget with a margin for the rounding and clipping of the samples,
     * the block is not finished */
    double dist = 0;
    const double cut = PNMF_TX8_PRUNE * budget + 64;
    if (pre) memcpy(pb, pre, sizeof(pb));
    else pnmf_residual_predict(mode, P, Pp, Dp, Dr, D, rows, cols, y0, y0 + 8, x0, x0 + 8, dy, dx, pb);
    for (int y = 0; y < 8; y++) { /* a row at a time: one address per row */
        const uint8_t *s = src + (size_t)(y0 + y) * cols + x0;
        for (int k = 0; k < 8; k++) x[8 * y + k] = (int)s[k] - pb[8 * y + k];
    }
    pnmf_tx8_fdct(x, w);
    /* each magnitude in steps: |w| times the multiplier over 2^shift is
     * the exact integer product scaled by a power of two */
    double xq[64]; /* in raster order */
    const double *mf = tx8_mf[qp % 6];
    for (int q = 0; q < 64; q++) xq[q] = fabs((double)w[q]) * mf[q] * inv;
    const double b0 = level_bits(0);
    for (int z = 0; z < 64; z++) {
        const int q = pnmf_tx8_zigzag[z];
        const double xr = xm[z] = xq[q];
        if (xr < 0.5) { /* level 0, as coef_level() has it */
            lv[z] = 0;
            bits += b0;
            dist += xr * xr * q2;
            if (dist > cut) return dist + lambda * bits;
            continue;
        }
        int64_t l = coef_level(xr, q2, lb, lambda);
        if (l > PNMF_TX8_MAX_COEF) l = PNMF_TX8_MAX_COEF;
        lv[z] = (int16_t)(w[q] < 0 ? -l : l);
        bits += level_bits((int)l);
        nz |= lv[z];
        dist += (xr - (double)l) * (xr - (double)l) * q2;
        if (dist > cut) return dist + lambda * bits; /* the error it adds already loses */
    }
    double rbits = -1; /* the levels' price rdoq_levels() gives (the contexts not moved) */
    /* nz: a block of zeros is the skip block; a trial whose error alone
     * reaches budget cannot win whatever its levels cost */
    if (nz && lc && rdoq_on && (levs || (PNMF_RDOQ_TRIALS && dist < budget)))
        rbits = rdoq_levels(lv, xm, 64, q2, lambda, lc, kind | pnmf_residual_is_intra(mode) << 1, 0, 0, !levs);
    if (levs) memcpy(levs, lv, sizeof(lv));
    if (!nz) return 1e300;
    pnmf_tx8_idct(lv, qp, res);
    int sse = 0;
    for (int y = 0; y < 8; y++) {
        const uint8_t *s = src + (size_t)(y0 + y) * cols + x0;
        uint8_t *d = D + (size_t)(y0 + y) * cols + x0;
        for (int k = 0; k < 8; k++) {
            const int v = pnmf_residual_clip8(pb[8 * y + k] + res[8 * y + k]);
            d[k] = (uint8_t)v;
            const int e = (int)s[k] - v;
            sse += e * e;
        }
    }
    if (lc && sse < budget && rbits >= 0 && !levs) {
        bits = rbits;
    } else if (lc && sse < budget) {
        RcBin o = { .update = levs != NULL };
        pnmf_tx8_levels(&o, lc, kind | pnmf_residual_is_intra(mode) << 1, lv, PNMF_TX8_MAX_COEF);
        bits = o.bits;
    }
    return (double)sse + lambda * bits;
}

/* The PNMF_INTRA_TRY directions (intra.h) whose predictions of the 8 x 8
 * block at (y0, x0) (into pred[dir], from the decoded frame D) have the
 * least SAD against src, into dir[] (best first). */
static void intra_dir_pick(const uint8_t *src, const uint8_t *D, int cols, int y0, int x0,
                           uint8_t (*pred)[PNMF_RES_BLOCK * PNMF_RES_BLOCK], int *dir)
{
    PnmfIntraEdge e;
    int best[PNMF_INTRA_TRY];
    pnmf_intra_edge(D, cols, y0, x0, &e);
    for (int i = 0; i < PNMF_INTRA_TRY; i++) best[i] = 0x7fffffff, dir[i] = 0;
    for (int d = 1; d < PNMF_INTRA_DIRS; d++) {
        pnmf_intra_predict_edge(d, &e, pred[d], PNMF_RES_BLOCK);
        int sad = 0;
        for (int q = 0; q < 64; q++) sad += abs((int)src[(size_t)(y0 + (q >> 3)) * cols + x0 + (q & 7)] - pred[d][q]);
        for (int i = 0; i < PNMF_INTRA_TRY; i++)
            if (sad < best[i]) {
                for (int k = PNMF_INTRA_TRY - 1; k > i; k--) best[k] = best[k - 1], dir[k] = dir[k - 1];
                best[i] = sad, dir[i] = d;
                break;
            }
    }
}

/* The bits of a transform block's 8x8 decision (format 9), with the
 * levels stream's contexts when the encoder prices with them (moved when
 * update), else one bit. */
static double tx8_flag_bits(const PnmfResidual *r, RcLevCtx *lc, int j, size_t b, int kind, int bit, int update)
{
    if (!lc) return 1.0;
    RcBin o = { .update = update };
    rc_bin(&o, &lc->t8[kind][pnmf_tx8_ctx(r, j, b)], bit);
    return o.bits;
}

/* The bits of an intra transform block's direction (0: none), with the
 * levels stream's contexts when the encoder prices with them (moved when
 * update), else a guess. */
static double intra_dir_bits(RcLevCtx *lc, int kind, int mode, int dir, int update)
{
    if (!lc) return dir ? PNMF_INTRA_DIR_BITS : PNMF_INTRA_NODIR_BITS;
    RcBin o = { .update = update };
    intra_dir_code(&o, lc, kind, mode, dir);
    return o.bits;
}

/* The SAD of the 8 x 8 samples at s (rows cols apart) against those at d
 * (rows dcols apart). */
static inline int sad8x8(const uint8_t *s, const uint8_t *d, int cols, int dcols)
{
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
    __m128i acc = _mm_setzero_si128();
    for (int y = 0; y < 8; y += 2, s += 2 * (size_t)cols, d += 2 * (size_t)dcols) {
        const __m128i a = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)s),
                                             _mm_loadl_epi64((const __m128i *)(s + cols)));
        const __m128i b = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)d),
                                             _mm_loadl_epi64((const __m128i *)(d + dcols)));
        acc = _mm_add_epi64(acc, _mm_sad_epu8(a, b));
    }
    return _mm_cvtsi128_si32(acc) + _mm_extract_epi16(acc, 4);
#else
    int sad = 0;
    for (int y = 0; y < 8; y++, s += cols, d += dcols)
        for (int x = 0; x < 8; x++) sad += abs((int)s[x] - d[x]);
    return sad;
#endif
}

#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
/* sad8x8() of a block whose rows are loaded, two to a register (rows 2k
 * and 2k + 1 in s[k]), against the 8 x 8 samples at d (rows dcols apart). */
static inline int sad8x8_rows(const __m128i s[4], const uint8_t *d, int dcols)
{
    __m128i acc = _mm_setzero_si128();
    for (int k = 0; k < 4; k++, d += 2 * (size_t)dcols) {
        const __m128i b = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)d),
                                             _mm_loadl_epi64((const __m128i *)(d + dcols)));
        acc = _mm_add_epi64(acc, _mm_sad_epu8(s[k], b));
    }
    return _mm_cvtsi128_si32(acc) + _mm_extract_epi16(acc, 4);
}
#endif

/* The sum of absolute 8x8 Hadamard coefficients of the 8 x 8 samples at s
 * (rows cols apart) less pred (rows 8 apart): a prediction's residual
 * as a transform sees it, where SAD overrates smooth residuals. */
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
/* One 8-point Hadamard transform across the eight vectors v[] (element
 * by element), in 16 bits: |v| <= 2^15 / 8 on entry stays in range. */
static inline void hadamard8_cols(__m128i v[8])
{
    for (int h = 1; h < 8; h *= 2)
        for (int i = 0; i < 8; i++)
            if (!(i & h)) {
                const __m128i a = v[i], b = v[i + h];
                v[i] = _mm_add_epi16(a, b), v[i + h] = _mm_sub_epi16(a, b);
            }
}
#endif

static int satd8x8(const uint8_t *s, const uint8_t *pred, int cols)
{
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
    /* the same 64 coefficients up to their order (the 8x8 Hadamard
     * transform is separable, each row of it a Walsh function): the
     * columns' transform, a transpose, the rows'; every coefficient at
     * most 64 * 255 in magnitude, exact in 16 bits */
    const __m128i zero = _mm_setzero_si128();
    __m128i v[8];
    for (int y = 0; y < 8; y++)
        v[y] = _mm_sub_epi16(_mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(s + (size_t)y * cols)), zero),
                             _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(pred + 8 * y)), zero));
    hadamard8_cols(v);
    const __m128i a0 = _mm_unpacklo_epi16(v[0], v[1]), a1 = _mm_unpackhi_epi16(v[0], v[1]);
    const __m128i a2 = _mm_unpacklo_epi16(v[2], v[3]), a3 = _mm_unpackhi_epi16(v[2], v[3]);
    const __m128i a4 = _mm_unpacklo_epi16(v[4], v[5]), a5 = _mm_unpackhi_epi16(v[4], v[5]);
    const __m128i a6 = _mm_unpacklo_epi16(v[6], v[7]), a7 = _mm_unpackhi_epi16(v[6], v[7]);
    const __m128i b0 = _mm_unpacklo_epi32(a0, a2), b1 = _mm_unpackhi_epi32(a0, a2);
    const __m128i b2 = _mm_unpacklo_epi32(a1, a3), b3 = _mm_unpackhi_epi32(a1, a3);
    const __m128i b4 = _mm_unpacklo_epi32(a4, a6), b5 = _mm_unpackhi_epi32(a4, a6);
    const __m128i b6 = _mm_unpacklo_epi32(a5, a7), b7 = _mm_unpackhi_epi32(a5, a7);
    v[0] = _mm_unpacklo_epi64(b0, b4), v[1] = _mm_unpackhi_epi64(b0, b4);
    v[2] = _mm_unpacklo_epi64(b1, b5), v[3] = _mm_unpackhi_epi64(b1, b5);
    v[4] = _mm_unpacklo_epi64(b2, b6), v[5] = _mm_unpackhi_epi64(b2, b6);
    v[6] = _mm_unpacklo_epi64(b3, b7), v[7] = _mm_unpackhi_epi64(b3, b7);
    hadamard8_cols(v);
    __m128i acc = zero;
    const __m128i one = _mm_set1_epi16(1);
    for (int i = 0; i < 8; i++) /* |x| as max(x, -x), pairs summed in 32 bits */
        acc = _mm_add_epi32(acc, _mm_madd_epi16(_mm_max_epi16(v[i], _mm_sub_epi16(zero, v[i])), one));
    acc = _mm_add_epi32(acc, _mm_shuffle_epi32(acc, _MM_SHUFFLE(1, 0, 3, 2)));
    acc = _mm_add_epi32(acc, _mm_shuffle_epi32(acc, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(acc);
#else
    int t[64];
    for (int y = 0; y < 8; y++) {
        int d[8];
        for (int x = 0; x < 8; x++) d[x] = (int)s[(size_t)y * cols + x] - pred[8 * y + x];
        const int a0 = d[0] + d[4], a1 = d[1] + d[5], a2 = d[2] + d[6], a3 = d[3] + d[7];
        const int a4 = d[0] - d[4], a5 = d[1] - d[5], a6 = d[2] - d[6], a7 = d[3] - d[7];
        const int b0 = a0 + a2, b1 = a1 + a3, b2 = a0 - a2, b3 = a1 - a3;
        const int b4 = a4 + a6, b5 = a5 + a7, b6 = a4 - a6, b7 = a5 - a7;
        int *o = t + 8 * y;
        o[0] = b0 + b1, o[1] = b0 - b1, o[2] = b2 + b3, o[3] = b2 - b3;
        o[4] = b4 + b5, o[5] = b4 - b5, o[6] = b6 + b7, o[7] = b6 - b7;
    }
    int sum = 0;
    for (int x = 0; x < 8; x++) {
        const int *c = t + x;
        const int a0 = c[0] + c[32], a1 = c[8] + c[40], a2 = c[16] + c[48], a3 = c[24] + c[56];
        const int a4 = c[0] - c[32], a5 = c[8] - c[40], a6 = c[16] - c[48], a7 = c[24] - c[56];
        const int b0 = a0 + a2, b1 = a1 + a3, b2 = a0 - a2, b3 = a1 - a3;
        const int b4 = a4 + a6, b5 = a5 + a7, b6 = a4 - a6, b7 = a5 - a7;
        sum += abs(b0 + b1) + abs(b0 - b1) + abs(b2 + b3) + abs(b2 - b3);
        sum += abs(b4 + b5) + abs(b4 - b5) + abs(b6 + b7) + abs(b6 - b7);
    }
    return sum;
#endif
}

int pnmf_residual_satd8x8(const uint8_t *s, const uint8_t *pred, int cols) { return satd8x8(s, pred, cols); }

/* Sum of absolute differences of the block of src against Dp displaced by
 * (dy, dx), possibly stopping once over limit (a whole 8x8 block does not:
 * four PSADBW cost less than the branches). */
static int block_sad(const uint8_t *src, const uint8_t *Dp, int rows, int cols, int y0, int y1,
                     int x0, int x1, int dy, int dx, int limit)
{
    int sad = 0;
    const int inside = y0 + dy >= 0 && y1 + dy <= rows && x0 + dx >= 0 && x1 + dx <= cols;
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
    if (inside && x1 - x0 == 8 && y1 - y0 == 8) /* a whole block: four PSADBW, no branch */
        return sad8x8(src + (size_t)y0 * cols + x0, Dp + (size_t)(y0 + dy) * cols + x0 + dx, cols, cols);
    if (x1 - x0 == 8 && y1 - y0 == 8) { /* a whole block reaching out of the frame: its rows clamped */
        uint8_t t[64];
        const int xin = x0 + dx >= 0 && x1 + dx <= cols;
        /* the columns read: left of the frame its first, right of it its last */
        int cx[8];
        for (int i = 0; i < 8 && !xin; i++) {
            const int xa = x0 + dx + i;
            cx[i] = xa < 0 ? 0 : xa >= cols ? cols - 1 : xa;
        }
        for (int y = 0; y < 8; y++) {
            int sy = y0 + y + dy;
            sy = sy < 0 ? 0 : sy >= rows ? rows - 1 : sy;
            const uint8_t *d = Dp + (size_t)sy * cols;
            if (xin) memcpy(t + 8 * y, d + x0 + dx, 8);
            else
                for (int i = 0; i < 8; i++) t[8 * y + i] = d[cx[i]];
        }
        return sad8x8(src + (size_t)y0 * cols + x0, t, cols, 8);
    }
    if (inside && x1 - x0 == 8) { /* two 8-sample rows per PSADBW */
        int y = y0;
        for (; y + 1 < y1; y += 2) {
            const uint8_t *s = src + (size_t)y * cols + x0, *d = Dp + (size_t)(y + dy) * cols + x0 + dx;
            const __m128i a = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)s),
                                                 _mm_loadl_epi64((const __m128i *)(s + cols)));
            const __m128i b = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)d),
                                                 _mm_loadl_epi64((const __m128i *)(d + cols)));
            const __m128i v = _mm_sad_epu8(a, b);
            sad += _mm_cvtsi128_si32(v) + _mm_extract_epi16(v, 4);
            if (sad >= limit) return sad;
        }
        if (y < y1) {
            const uint8_t *s = src + (size_t)y * cols + x0, *d = Dp + (size_t)(y + dy) * cols + x0 + dx;
            const __m128i v = _mm_sad_epu8(_mm_loadl_epi64((const __m128i *)s), _mm_loadl_epi64((const __m128i *)d));
            sad += _mm_cvtsi128_si32(v);
        }
        return sad;
    }
#endif
    for (int y = y0; y < y1; y++) {
        const uint8_t *s = src + (size_t)y * cols;
        if (inside) {
            const uint8_t *d = Dp + (size_t)(y + dy) * cols + dx;
            for (int x = x0; x < x1; x++) sad += abs((int)s[x] - d[x]);
        } else {
            int sy = y + dy;
            sy = sy < 0 ? 0 : sy >= rows ? rows - 1 : sy;
            for (int x = x0; x < x1; x++) {
                int sx = x + dx;
                sx = sx < 0 ? 0 : sx >= cols ? cols - 1 : sx;
                sad += abs((int)s[x] - Dp[(size_t)sy * cols + sx]);
            }
        }
        if (sad >= limit) return sad;
    }
    return sad;
}

/* The sparse-grid SAD (samples y, x = 2, 6, 10, ...) of src against Dp
 * displaced by (dy, dx), samples outside the frame clamped to its edge;
 * stops once over best (best < 0: never). sg: src's grid samples packed
 * (grid_pack()), or NULL. */
static long grid_sad(const uint8_t *src, const uint8_t *sg, const uint8_t *Dp, int rows, int cols, int dy, int dx,
                     long best)
{
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
    const __m128i low = _mm_set1_epi32(0xff);
    const size_t gw = (size_t)(cols + 1) / 4; /* sg's samples a row */
#else
    (void)sg;
#endif
    long sad = 0;
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
    /* bytes 2, 6, 10 and 14 of 16: four grid samples per PSADBW */
    const __m128i keep = _mm_set1_epi32(0x00ff0000);
#endif
    for (int y = 2; y < rows && (best < 0 || sad <= best); y += 4) {
        int sy = y + dy;
        sy = sy < 0 ? 0 : sy >= rows ? rows - 1 : sy;
        const uint8_t *s = src + (size_t)y * cols, *d = Dp + (size_t)sy * cols;
        /* three runs: x + dx left of the frame (clamped to column 0),
         * inside it, right of it */
        int x = 2;
        for (; x < cols && x + dx < 0; x += 4) sad += abs((int)s[x] - d[0]);
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
        for (; x < cols && x + dx < cols && x - 2 + dx < 0; x += 4) sad += abs((int)s[x] - d[x + dx]);
        /* (the row's sums held in the two 64-bit lanes, added once) */
        __m128i acc = _mm_setzero_si128();
        /* sixteen grid samples of 64 bytes of Dp against sixteen of sg:
         * the first byte of each 32-bit word kept, packed */
        for (const uint8_t *g = sg ? sg + (size_t)(y / 4) * gw : NULL; g && x + 61 <= cols && x + dx + 64 <= cols;
             x += 64) {
            const uint8_t *q = d + x + dx;
            const __m128i v0 = _mm_and_si128(_mm_loadu_si128((const __m128i *)q), low);
            const __m128i v1 = _mm_and_si128(_mm_loadu_si128((const __m128i *)(q + 16)), low);
            const __m128i v2 = _mm_and_si128(_mm_loadu_si128((const __m128i *)(q + 32)), low);
            const __m128i v3 = _mm_and_si128(_mm_loadu_si128((const __m128i *)(q + 48)), low);
            const __m128i b = _mm_packus_epi16(_mm_packs_epi32(v0, v1), _mm_packs_epi32(v2, v3));
            acc = _mm_add_epi64(acc, _mm_sad_epu8(_mm_loadu_si128((const __m128i *)(g + (x - 2) / 4)), b));
        }
        for (; x + 14 <= cols && x + dx + 14 <= cols; x += 16) { /* 16 bytes from x - 2 in both rows */
            const __m128i a = _mm_and_si128(_mm_loadu_si128((const __m128i *)(s + x - 2)), keep);
            const __m128i b = _mm_and_si128(_mm_loadu_si128((const __m128i *)(d + x + dx - 2)), keep);
            acc = _mm_add_epi64(acc, _mm_sad_epu8(a, b));
        }
        sad += _mm_cvtsi128_si32(acc) + _mm_cvtsi128_si32(_mm_unpackhi_epi64(acc, acc));
#endif
        for (; x < cols && x + dx < cols; x += 4) sad += abs((int)s[x] - d[x + dx]);
        for (; x < cols; x += 4) sad += abs((int)s[x] - d[cols - 1]);
    }
    return sad;
}

/* The samples of f's sparse grid (grid_sad()) packed: row (y - 2) / 4
 * holds those of row y, (cols + 1) / 4 a row. */
static void grid_pack(const uint8_t *f, int rows, int cols, uint8_t *g)
{
    const int gw = (cols + 1) / 4;
    for (int y = 2; y < rows; y += 4, g += gw)
        for (int i = 0; i < gw; i++) g[i] = f[(size_t)y * cols + 2 + 4 * i];
}

/* The mean of each 4x4 box of f (rows and cols multiples of 4 used). */
static void shrink4(const uint8_t *f, int cols, uint8_t *o, int r4, int c4)
{
    for (int y = 0; y < r4; y++) {
        int x = 0;
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
        /* four means from 16 columns: the rows summed in 16 bits, then
         * adjacent pairs twice (the same integer sums) */
        const __m128i z = _mm_setzero_si128(), one = _mm_set1_epi16(1), eight = _mm_set1_epi32(8);
        for (; x + 4 <= c4; x += 4) {
            const uint8_t *p = f + (size_t)(4 * y) * cols + 4 * x;
            __m128i lo = z, hi = z;
            for (int v = 0; v < 4; v++) {
                const __m128i a = _mm_loadu_si128((const __m128i *)(p + (size_t)v * cols));
                lo = _mm_add_epi16(lo, _mm_unpacklo_epi8(a, z));
                hi = _mm_add_epi16(hi, _mm_unpackhi_epi8(a, z));
            }
            const __m128i pairs = _mm_packs_epi32(_mm_madd_epi16(lo, one), _mm_madd_epi16(hi, one));
            const __m128i q = _mm_srli_epi32(_mm_add_epi32(_mm_madd_epi16(pairs, one), eight), 4);
            const int32_t b = _mm_cvtsi128_si32(_mm_packus_epi16(_mm_packs_epi32(q, z), z));
            memcpy(o + (size_t)y * c4 + x, &b, 4);
        }
#endif
        for (; x < c4; x++) {
            int sum = 0;
            for (int v = 0; v < 4; v++) {
                const uint8_t *p = f + (size_t)(4 * y + v) * cols + 4 * x;
                sum += p[0] + p[1] + p[2] + p[3];
            }
            o[(size_t)y * c4 + x] = (uint8_t)((sum + 8) >> 4);
        }
    }
}

/* The frame's dominant displacement (a pan) within +-PNMF_GLOBAL_RANGE:
 * coarse to fine, far cheaper than an exhaustive search on the sparse
 * grid. The displacement of least SAD between the 4x4 box means of the
 * frames (every sample, +-PNMF_GLOBAL_RANGE / 4), then, at full resolution on a
 * sparse grid, the best of the 7x7 around it, around (0, 0) and around the
 * previous frame's vector (*gy, *gx on entry). boxes: the box means of
 * src, then of Dp (r4 x c4 each), or NULL where the frame is too small
 * for them or they could not be made (the sparse grid alone). */
static void global_motion(const uint8_t *src, const uint8_t *Dp, int rows, int cols, const uint8_t *boxes, int *gy,
                          int *gx)
{
    const int r4 = rows / 4, c4 = cols / 4, R4 = PNMF_GLOBAL_RANGE / 4;
    int cy = 0, cx = 0;
    /* Dp's box means with each row's first and last R4 times on either
     * side: every displaced sample a plain read (no memory: the sparse
     * grid alone) */
    const int pw = c4 + 2 * R4;
    uint8_t *pad = boxes ? pnmf_malloc_array((size_t)r4, (size_t)pw) : NULL;
    if (pad) {
        const uint8_t *a = boxes, *b = a + (size_t)r4 * c4;
        for (int y = 0; y < r4; y++) {
            const uint8_t *d = b + (size_t)y * c4;
            uint8_t *p = pad + (size_t)y * pw;
            memset(p, d[0], (size_t)R4);
            memcpy(p + R4, d, (size_t)c4);
            memset(p + R4 + c4, d[c4 - 1], (size_t)R4);
        }
        long best = -1;
        for (int c = -1; c < (2 * R4 + 1) * (2 * R4 + 1); c++) { /* (0, 0) first */
            const int dy = c < 0 ? 0 : c / (2 * R4 + 1) - R4, dx = c < 0 ? 0 : c % (2 * R4 + 1) - R4;
            if (c >= 0 && !dy && !dx) continue;
            long sad = 0;
            for (int y = 0; y < r4 && (best < 0 || sad < best); y++) {
                int sy = y + dy;
                sy = sy < 0 ? 0 : sy >= r4 ? r4 - 1 : sy;
                const uint8_t *s = a + (size_t)y * c4, *d = pad + (size_t)sy * pw + R4 + dx;
                int x = 0;
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
                /* (the same integer sums, sixteen or eight samples at a
                 * time, held in the register's two 64-bit lanes) */
                __m128i acc = _mm_setzero_si128();
                for (; x + 16 <= c4; x += 16)
                    acc = _mm_add_epi64(acc, _mm_sad_epu8(_mm_loadu_si128((const __m128i *)(s + x)),
                                                          _mm_loadu_si128((const __m128i *)(d + x))));
                for (; x + 8 <= c4; x += 8)
                    acc = _mm_add_epi64(acc, _mm_sad_epu8(_mm_loadl_epi64((const __m128i *)(s + x)),
                                                          _mm_loadl_epi64((const __m128i *)(d + x))));
                sad += _mm_cvtsi128_si32(acc) + _mm_cvtsi128_si32(_mm_unpackhi_epi64(acc, acc));
#endif
                for (; x < c4; x++) sad += abs((int)s[x] - d[x]);
            }
            if (best < 0 || sad < best) best = sad, cy = 4 * dy, cx = 4 * dx;
        }
        pnmf_free(pad);
    }
    /* the least sparse-grid SAD around the coarse vector, (0, 0) and the
     * previous one (box means miss the motion of fine texture); ties to the
     * first measured */
    const int centre[3][2] = { { 0, 0 }, { *gy, *gx }, { cy, cx } };
    long best = -1;
    /* src's grid samples packed once for the 147 measures (none without memory) */
    uint8_t *sg = rows > 2 && cols > 2 ? pnmf_malloc_array((size_t)(rows + 1) / 4, (size_t)(cols + 1) / 4) : NULL;
    if (sg) grid_pack(src, rows, cols, sg);
    for (int c = 0; c < 3 * 49; c++) {
        const int dy = centre[c / 49][0] + (c % 49) / 7 - 3, dx = centre[c / 49][1] + c % 7 - 3;
        if (abs(dy) > PNMF_GLOBAL_RANGE || abs(dx) > PNMF_GLOBAL_RANGE) continue;
        /* a displacement an earlier centre's square holds was measured:
         * equal, it cannot replace the first */
        int seen = 0;
        for (int k = 0; k < c / 49 && !seen; k++)
            seen = abs(dy - centre[k][0]) <= 3 && abs(dx - centre[k][1]) <= 3;
        if (seen) continue;
        const long sad = grid_sad(src, sg, Dp, rows, cols, dy, dx, best);
        if (best < 0 || sad < best) best = sad, *gy = dy, *gx = dx;
    }
    pnmf_free(sg);
}

/* The wide search: for a block the candidates and the grid leave poorly
 * predicted (a SAD over PNMF_WIDE_POOR a sample), the 16 x 16 area around it
 * is matched on the 4x4 box means of the frame and the reference over
 * +-PNMF_WIDE_RANGE (every fourth pixel), and the 5 x 5 vectors around each of
 * the PNMF_WIDE_KEEP best are tried at full resolution: a sprite that jumps
 * far, or whose pose came back further than its last motion says. Each
 * reference in turn, until one matches well (a SAD of at most PNMF_WIDE_POOR a
 * sample): a walk cycle comes back after more than a few frames, and
 * searching every reference whatever matched before costs far more for
 * little. */
typedef struct Coarse {
    const uint8_t *src, *ref; /* 4x4 box means, r4 x c4 */
    int r4, c4;
} Coarse;

/* the 4 x 4 samples at p (rows c4 apart) as 16 bytes */
static inline void load16(const uint8_t *p, int c4, uint8_t *o)
{
    for (int y = 0; y < 4; y++) memcpy(o + 4 * y, p + (size_t)y * c4, 4);
}

static inline int sad16_coarse(const uint8_t *a16, const uint8_t *b, int c4)
{
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
    /* the four rows of 4 bytes straight into the register (four narrow
     * stores then a wide load of them would wait on the stores) */
    int32_t r[4];
    for (int y = 0; y < 4; y++) memcpy(&r[y], b + (size_t)y * c4, 4);
    const __m128i t = _mm_unpacklo_epi64(_mm_unpacklo_epi32(_mm_cvtsi32_si128(r[0]), _mm_cvtsi32_si128(r[1])),
                                         _mm_unpacklo_epi32(_mm_cvtsi32_si128(r[2]), _mm_cvtsi32_si128(r[3])));
    const __m128i s = _mm_sad_epu8(_mm_loadu_si128((const __m128i *)a16), t);
    return _mm_cvtsi128_si32(s) + _mm_extract_epi16(s, 4);
#else
    uint8_t t[16];
    load16(b, c4, t);
    int s = 0;
    for (int q = 0; q < 16; q++) s += abs((int)a16[q] - t[q]);
    return s;
#endif
}

/* keep (sd, dy, dx) among the n best of best[] (ascending), n < cap */
static inline void keep_best(int *best, int (*bv)[2], int *n, int cap, int sd, int dy, int dx)
{
    int k = *n < cap ? (*n)++ : cap;
    if (k == cap) {
        if (sd >= best[cap - 1]) return;
        k = cap - 1;
    }
    for (; k > 0 && best[k - 1] > sd; k--) best[k] = best[k - 1], bv[k][0] = bv[k - 1][0], bv[k][1] = bv[k - 1][1];
    best[k] = sd, bv[k][0] = dy, bv[k][1] = dx;
}

/* keep_best() of coarse_search()'s first pass, whose offsets come in
 * ascending (dy, dx): an offset as the key sd << 16 | (dy + R) << 8 |
 * (dx + R) (R = PNMF_WIDE_RANGE / 4), which orders the keys as keep_best()
 * orders the offsets (by SAD, ties to the one measured first); one word
 * moved per step. */
static inline void keep_key(uint32_t *key, int *n, int cap, uint32_t k)
{
    int i = *n < cap ? (*n)++ : cap;
    if (i == cap) {
        if (k > key[cap - 1]) return;
        i = cap - 1;
    }
    for (; i > 0 && key[i - 1] > k; i--) key[i] = key[i - 1];
    key[i] = k;
}

#if PNMF_WIDE_RANGE / 4 > 127
#error "coarse_search()'s keys hold dy + R and dx + R in a byte each"
#endif

/* The PNMF_WIDE_KEEP best coarse vectors (full-resolution pixels) for the
 * block at (y0, x0); returns how many. Coarse to fine on the box means:
 * every other offset first (a quarter of them), the PNMF_COARSE_KEEP best
 * kept, then the 8 offsets around each (nearly what every offset finds,
 * in far fewer operations). */
static int coarse_search(const Coarse *c, int y0, int x0, int16_t (*out)[2])
{
    /* the 4x4 box means around the block, moved inside the frame at its edges */
    if (c->r4 < 4 || c->c4 < 4) return 0;
    const int R = PNMF_WIDE_RANGE / 4;
    int by = y0 / 4 - 1, bx = x0 / 4 - 1;
    by = by < 0 ? 0 : by + 4 > c->r4 ? c->r4 - 4 : by;
    bx = bx < 0 ? 0 : bx + 4 > c->c4 ? c->c4 - 4 : bx;
    uint8_t a[16];
    load16(c->src + (size_t)by * c->c4 + bx, c->c4, a);
    const int ylo = -by > -R ? -by : -R, yhi = c->r4 - 4 - by < R ? c->r4 - 4 - by : R;
    const int xlo = -bx > -R ? -bx : -R, xhi = c->c4 - 4 - bx < R ? c->c4 - 4 - bx : R;
    int cb[PNMF_COARSE_KEEP], cv[PNMF_COARSE_KEEP][2], nc = 0;
    uint32_t key[PNMF_COARSE_KEEP];
    for (int dy = ylo + ((ylo - R) & 1); dy <= yhi; dy += 2)
        for (int dx = xlo + ((xlo - R) & 1); dx <= xhi; dx += 2)
            keep_key(key, &nc, PNMF_COARSE_KEEP,
                     (uint32_t)sad16_coarse(a, c->ref + (size_t)(by + dy) * c->c4 + bx + dx, c->c4) << 16 |
                         (uint32_t)(dy + R) << 8 | (uint32_t)(dx + R));
    for (int k = 0; k < nc; k++)
        cb[k] = (int)(key[k] >> 16), cv[k][0] = (int)(key[k] >> 8 & 255) - R, cv[k][1] = (int)(key[k] & 255) - R;
    int best[PNMF_WIDE_KEEP], bv[PNMF_WIDE_KEEP][2], n = 0;
    for (int k = 0; k < nc; k++) {
        keep_best(best, bv, &n, PNMF_WIDE_KEEP, cb[k], cv[k][0], cv[k][1]);
        for (int q = 0; q < 9; q++) {
            const int dy = cv[k][0] + q / 3 - 1, dx = cv[k][1] + q % 3 - 1;
            if (q == 4 || dy < ylo || dy > yhi || dx < xlo || dx > xhi) continue;
            int seen = 0; /* a neighbour of two kept offsets: once */
            for (int t = 0; t < n; t++) seen |= bv[t][0] == dy && bv[t][1] == dx;
            if (!seen)
                keep_best(best, bv, &n, PNMF_WIDE_KEEP, sad16_coarse(a, c->ref + (size_t)(by + dy) * c->c4 + bx + dx, c->c4),
                          dy, dx);
        }
    }
    for (int k = 0; k < n; k++) out[k][0] = (int16_t)(4 * bv[k][0]), out[k][1] = (int16_t)(4 * bv[k][1]);
    return n;
}

/* The bits of vector (vy, vx) of reference t in the vectors stream, a
 * candidate of k or coded (or the update of the contexts). */
static double vector_bits(PnmfResidual *r, const PnmfVecState *vs, const RcVecCand *k, int t, int vy, int vx,
                          int update)
{
    const int idx = rc_vec_cand_index(k, vy, vx, t);
    double bits = rc_merge_step(&r->enc_vectors, k, vs->lm, idx, update);
    int p[2];
    pnmf_vec_pred(vs, t, p);
    if (idx < 0)
        bits += rc_vector_step(&r->enc_vectors, t, vs->lastref, vs->z0, vy - p[0], vx - p[1], update);
    return bits;
}

/* The vectors one search has measured: at[(dy + M) * (2M + 1) + dx + M]
 * (M = PNMF_RES_MAX_MV) equal to stamp, a new stamp per search. */
typedef struct SeenMap {
    uint16_t at[(2 * PNMF_RES_MAX_MV + 1) * (2 * PNMF_RES_MAX_MV + 1)];
    uint16_t stamp;
} SeenMap;

#if PNMF_LOCAL_RANGE > PNMF_RES_MAX_MV
#error "search_block()'s grid marks its vectors in the SeenMap: PNMF_LOCAL_RANGE within PNMF_RES_MAX_MV"
#endif

/* The grid's span: the samples a grid of vectors within +-PNMF_LOCAL_RANGE
 * reads around an 8 x 8 block, along each axis. */
#define GRID_SPAN (2 * PNMF_LOCAL_RANGE + 8)

/* The SADs of the 8 x 8 block at s (rows cols apart) against the 8 x 8
 * samples of d (rows ds apart) at (R + dy, R + dx) (R = PNMF_LOCAL_RANGE)
 * for each vector of the grid dy, dx = -R, -R + g, ..., up to R, in
 * out[i * n + k] for (dy, dx) = (-R + g i, -R + g k), n = 2R / g + 1; d
 * holds GRID_SPAN rows of GRID_SPAN samples. In SSE2 one PSADBW of a row
 * against 16 samples gives two vectors: dx in its low half, dx + 8 in its
 * high half. */
static inline void grid_sads(const uint8_t *s, int cols, const uint8_t *d, size_t ds, int g, int *out)
{
    const int R = PNMF_LOCAL_RANGE, n = 2 * R / g + 1;
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
    __m128i sr[8]; /* the block's rows, each in both halves */
    for (int y = 0; y < 8; y++) {
        const __m128i v = _mm_loadl_epi64((const __m128i *)(s + (size_t)y * cols));
        sr[y] = _mm_unpacklo_epi64(v, v);
    }
    const int pair = 8 % g ? 0 : 8 / g; /* k's of dx and dx + 8 apart; 0: dx + 8 off the grid */
    for (int i = 0; i < n; i++) {
        const uint8_t *row = d + (size_t)(g * i) * ds;
        for (int k = 0; k < n; k++) {
            const int dx = -R + g * k;
            /* on the grid as the high half of dx - 8's load */
            if (pair && (dx + R) % 16 >= 8) continue;
            /* the load's 16 samples within the span: from dx, or else
             * from dx - 8, only its high half kept */
            const int from = dx + 8 <= R ? dx : dx - 8;
            const uint8_t *q = row + from + R;
            __m128i acc = _mm_sad_epu8(sr[0], _mm_loadu_si128((const __m128i *)q));
            for (int y = 1; y < 8; y++)
                acc = _mm_add_epi64(acc, _mm_sad_epu8(sr[y], _mm_loadu_si128((const __m128i *)(q + (size_t)y * ds))));
            if (from == dx) {
                out[i * n + k] = _mm_cvtsi128_si32(acc);
                if (pair) out[i * n + k + pair] = _mm_extract_epi16(acc, 4);
            } else {
                out[i * n + k] = _mm_extract_epi16(acc, 4);
            }
        }
    }
#else
    for (int i = 0; i < n; i++)
        for (int k = 0; k < n; k++) {
            const uint8_t *q = d + (size_t)(g * i) * ds + g * k;
            int sad = 0;
            for (int y = 0; y < 8; y++)
                for (int x = 0; x < 8; x++) sad += abs((int)s[(size_t)y * cols + x] - q[(size_t)y * ds + x]);
            out[i * n + k] = sad;
        }
#endif
}

/* grid_sads() of the whole block of src at (y0, x0) against Dp (rows x
 * cols), samples outside the frame clamped to its edge (as block_sad()
 * reads them): straight from Dp where the span lies inside the frame,
 * else from the span gathered into buf (GRID_SPAN x GRID_SPAN); the two
 * grids of the search (PNMF_GRID_STEP, PNMF_GRID_STEP_FAR) with their
 * spacing known to the compiler. */
static void grid_sads_frame(const uint8_t *src, const uint8_t *Dp, int rows, int cols, int y0, int x0, int g,
                            uint8_t *buf, int *out)
{
    const int R = PNMF_LOCAL_RANGE;
    const uint8_t *s = src + (size_t)y0 * cols + x0, *d = buf;
    size_t ds = GRID_SPAN;
    if (y0 - R >= 0 && y0 + R + 8 <= rows && x0 - R >= 0 && x0 + R + 8 <= cols) {
        d = Dp + (size_t)(y0 - R) * cols + x0 - R, ds = (size_t)cols;
    } else {
        /* each row: left of the frame its first sample, right of it its
         * last (the span's columns xl .. xr - 1 inside) */
        const int xl = x0 - R < 0 ? R - x0 : 0, xr = x0 + R + 8 > cols ? cols - (x0 - R) : GRID_SPAN;
        for (int y = 0; y < GRID_SPAN; y++) {
            int sy = y0 - R + y;
            sy = sy < 0 ? 0 : sy >= rows ? rows - 1 : sy;
            const uint8_t *p = Dp + (size_t)sy * cols;
            uint8_t *o = buf + y * GRID_SPAN;
            if (xl) memset(o, p[0], (size_t)xl);
            memcpy(o + xl, p + x0 - R + xl, (size_t)(xr - xl));
            if (xr < GRID_SPAN) memset(o + xr, p[cols - 1], (size_t)(GRID_SPAN - xr));
        }
    }
    if (g == PNMF_GRID_STEP) grid_sads(s, cols, d, ds, PNMF_GRID_STEP, out);
    else if (g == PNMF_GRID_STEP_FAR) grid_sads(s, cols, d, ds, PNMF_GRID_STEP_FAR, out);
    else grid_sads(s, cols, d, ds, g, out);
}

void pnmf_residual_grid_sads(const uint8_t *src, const uint8_t *Dp, int rows, int cols, int y0, int x0, int g,
                             int *out)
{
    uint8_t buf[GRID_SPAN * GRID_SPAN];
    grid_sads_frame(src, Dp, rows, cols, y0, x0, g, buf, out);
}

/* A vector for the block: the best by SAD among candidates (zero, the
 * previous shifted block's, the block's neighbours', the global one and a
 * coarse grid; with wide, the wide search for a poorly predicted block),
 * refined by two-, then one-pixel steps; returns its SAD. The candidates
 * alone when none costs less than go. */
static int search_block(const uint8_t *src, const uint8_t *Dp, int rows, int cols, int y0, int y1,
                        int x0, int x1, const int16_t (*cand)[2], int ncand, int py, int px, double lam,
                        int grid, const Coarse *wide, int exact, double go, SeenMap *seen, int *by, int *bx)
{
    /* cost: SAD + lam * the vector's bits, so that among near-equal
     * matches (flat areas) the predicted vector wins */
    double best = 1e300;
    int vy = 0, vx = 0, bsad = 1;
    /* the vectors measured (marked in seen): a vector measured again cannot
     * beat the best, which is at most its cost then; nor can one whose
     * bits alone cost as much (the SAD adds to them) */
    if (!++seen->stamp) { /* the stamps wrapped: every mark cleared */
        memset(seen->at, 0, sizeof(seen->at));
        seen->stamp = 1;
    }
    uint16_t *const at = seen->at, st = seen->stamp;
    /* a whole block whose vectors stay inside the frame: its SAD inline,
     * the block's rows loaded once */
    const int whole = y1 - y0 == 8 && x1 - x0 == 8;
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
    __m128i srow[4] = { _mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128() };
    if (whole)
        for (int k = 0; k < 4; k++) {
            const uint8_t *s = src + (size_t)(y0 + 2 * k) * cols + x0;
            srow[k] = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)s),
                                         _mm_loadl_epi64((const __m128i *)(s + cols)));
        }
#define SAD_WHOLE(d) sad8x8_rows(srow, (d), cols)
#else
#define SAD_WHOLE(d) sad8x8(src + (size_t)y0 * cols + x0, (d), cols, cols)
#endif
    /* a vector (ty, tx), in: whether it is within the marks' bound, bits:
     * lam * mv_bits(ty, tx, py, px) */
#define TRYB(ty, tx, in, bits) do { \
        const int ty_ = (ty), tx_ = (tx); \
        const int k_ = (ty_ + PNMF_RES_MAX_MV) * (2 * PNMF_RES_MAX_MV + 1) + tx_ + PNMF_RES_MAX_MV; \
        const int in_ = (in); \
        if (in_ && at[k_] == st) break; \
        if (in_) at[k_] = st; \
        const double b_ = (bits); \
        if (b_ >= best) break; \
        const int s_ = whole && y0 + ty_ >= 0 && y1 + ty_ <= rows && x0 + tx_ >= 0 && x1 + tx_ <= cols \
                           ? SAD_WHOLE(Dp + (size_t)(y0 + ty_) * cols + x0 + tx_) \
                           : block_sad(src, Dp, rows, cols, y0, y1, x0, x1, ty_, tx_, \
                                       best > 0x7ffffff0 ? 0x7fffffff : (int)best + 1); \
        const double c_ = s_ + b_; \
        if (c_ < best) best = c_, vy = ty_, vx = tx_, moved = 1, bsad = s_; \
    } while (0)
#define TRY(ty, tx) TRYB(ty, tx, abs(ty_) <= PNMF_RES_MAX_MV && abs(tx_) <= PNMF_RES_MAX_MV, \
                         lam * mv_bits(ty_, tx_, py, px))
    int moved = 0;
    for (int c = 0; c < ncand; c++) TRY(cand[c][0], cand[c][1]);
    /* exact (a lossless coding): a candidate that predicts the block
     * exactly is kept, the grid and the refinement could only save a few
     * bits of its vector; exact 2 (a candidate is known to predict the
     * block exactly): the candidates alone, which may cost fewer bits;
     * exact 3: as 1, but no grid, the wide search only for a block
     * predicted worse than PNMF_LXM_WIDE_POOR a sample, and no
     * refinement (a farther reference's inexact vector seldom wins) */
    if ((exact && !bsad) || exact == 2 || best >= go) {
        *by = vy, *bx = vx;
        return bsad;
    }
    if (exact != 3) {
        /* the grid (within the marks' bound): mv_bits()'s terms of its
         * rows and columns once, the same sums */
        double lgy[2 * PNMF_LOCAL_RANGE + 1], lgx[2 * PNMF_LOCAL_RANGE + 1];
        for (int d = -PNMF_LOCAL_RANGE; d <= PNMF_LOCAL_RANGE; d += grid)
            lgy[d + PNMF_LOCAL_RANGE] = log2_1p(abs(d - py)), lgx[d + PNMF_LOCAL_RANGE] = log2_1p(abs(d - px));
        if (whole) {
            /* every SAD of the grid at once, then the same choice: the
             * first of least cost SAD + bits below the best; a vector
             * measured already (a candidate) or whose bits alone reach
             * the best costs at least the best, and the strict < keeps
             * the best then, so those need no test here */
            int sg[(2 * PNMF_LOCAL_RANGE + 1) * (2 * PNMF_LOCAL_RANGE + 1)];
            uint8_t gbuf[GRID_SPAN * GRID_SPAN];
            grid_sads_frame(src, Dp, rows, cols, y0, x0, grid, gbuf, sg);
            const int n = 2 * PNMF_LOCAL_RANGE / grid + 1;
            for (int i = 0; i < n; i++) {
                uint16_t *const mk = at + (-PNMF_LOCAL_RANGE + grid * i + PNMF_RES_MAX_MV) * (2 * PNMF_RES_MAX_MV + 1) +
                                     PNMF_RES_MAX_MV;
                for (int k = 0; k < n; k++) mk[-PNMF_LOCAL_RANGE + grid * k] = st;
            }
            /* the costs (mv_bits_logs()'s operations, in the same order),
             * their least, then the first vector that has it */
            double cg[(2 * PNMF_LOCAL_RANGE + 1) * (2 * PNMF_LOCAL_RANGE + 1)], lk[2 * PNMF_LOCAL_RANGE + 2];
            for (int k = 0; k < n; k++) lk[k] = lgx[grid * k];
            double least;
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
            const __m128d vlam = _mm_set1_pd(lam), two = _mm_set1_pd(2.0), base = _mm_set1_pd(PNMF_MV_BITS_BASE);
            __m128d vmin = _mm_set1_pd(INFINITY);
            for (int i = 0; i < n; i++) {
                const __m128d ly = _mm_set1_pd(lgy[grid * i]);
                int k = 0;
                for (; k + 2 <= n; k += 2) {
                    const __m128d b = _mm_mul_pd(vlam, _mm_add_pd(base, _mm_mul_pd(two, _mm_add_pd(ly, _mm_loadu_pd(lk + k)))));
                    const __m128d c = _mm_add_pd(_mm_cvtepi32_pd(_mm_loadl_epi64((const __m128i *)(sg + i * n + k))), b);
                    _mm_storeu_pd(cg + i * n + k, c);
                    vmin = _mm_min_pd(vmin, c);
                }
                for (; k < n; k++) {
                    cg[i * n + k] = sg[i * n + k] + lam * mv_bits_logs(lgy[grid * i], lk[k]);
                    vmin = _mm_min_pd(vmin, _mm_set1_pd(cg[i * n + k]));
                }
            }
            least = _mm_cvtsd_f64(_mm_min_sd(vmin, _mm_unpackhi_pd(vmin, vmin)));
#else
            least = INFINITY;
            for (int i = 0; i < n; i++)
                for (int k = 0; k < n; k++) {
                    cg[i * n + k] = sg[i * n + k] + lam * mv_bits_logs(lgy[grid * i], lk[k]);
                    least = cg[i * n + k] < least ? cg[i * n + k] : least;
                }
#endif
            /* the predicted vector, on the grid, costs PNMF_MV_BITS_SAME
             * (fewer bits than the others' formula gives it) */
            if ((py + PNMF_LOCAL_RANGE) % grid == 0 && (px + PNMF_LOCAL_RANGE) % grid == 0 && abs(py) <= PNMF_LOCAL_RANGE &&
                abs(px) <= PNMF_LOCAL_RANGE) {
                const int q = (py + PNMF_LOCAL_RANGE) / grid * n + (px + PNMF_LOCAL_RANGE) / grid;
                cg[q] = sg[q] + lam * PNMF_MV_BITS_SAME;
                least = cg[q] < least ? cg[q] : least;
            }
            if (least < best) {
                int q = 0;
                while (cg[q] != least) q++;
                best = least, vy = -PNMF_LOCAL_RANGE + grid * (q / n), vx = -PNMF_LOCAL_RANGE + grid * (q % n);
                bsad = sg[q];
            }
        } else {
            for (int dy = -PNMF_LOCAL_RANGE; dy <= PNMF_LOCAL_RANGE; dy += grid) {
                const double ly = lgy[dy + PNMF_LOCAL_RANGE];
                for (int dx = -PNMF_LOCAL_RANGE; dx <= PNMF_LOCAL_RANGE; dx += grid)
                    TRYB(dy, dx, 1,
                         lam * (dy == py && dx == px ? PNMF_MV_BITS_SAME
                                                     : mv_bits_logs(ly, lgx[dx + PNMF_LOCAL_RANGE])));
            }
        }
    }
    const int poor = exact == 3 ? PNMF_LXM_WIDE_POOR : PNMF_WIDE_POOR;
    if (wide && bsad > poor * (y1 - y0) * (x1 - x0)) {
        int16_t wc[PNMF_WIDE_KEEP][2];
        const int nw = coarse_search(wide, y0, x0, wc);
        for (int k = 0; k < nw; k++)
            for (int q = 0; q < 25; q++) {
                const int ty = wc[k][0] + q / 5 - 2, tx = wc[k][1] + q % 5 - 2;
                if (abs(ty) <= PNMF_RES_MAX_MV && abs(tx) <= PNMF_RES_MAX_MV) TRY(ty, tx);
            }
    }
    for (int step = 2; step >= 1 && exact != 3; step--) {
        moved = 1;
        for (int it = 0; moved && it < PNMF_REFINE_ITERS; it++) {
            moved = 0;
            static const int dir[4][2] = { { -1, 0 }, { 1, 0 }, { 0, -1 }, { 0, 1 } };
            const int cy = vy, cx = vx;
            for (int d = 0; d < 4; d++) {
                const int ty = cy + dir[d][0] * step, tx = cx + dir[d][1] * step;
                if (abs(ty) > PNMF_RES_MAX_MV || abs(tx) > PNMF_RES_MAX_MV) continue;
                TRY(ty, tx);
            }
        }
    }
#undef TRY
#undef TRYB
#undef SAD_WHOLE
    *by = vy, *bx = vx;
    return bsad;
}

/* ---- sub-pixel refinement (window flags bit 6) ---------------------------- */

/* Under sub-pixel motion at steps up to -q PNMF_SUBPEL_PRUNE_Q's (the
 * lambdas where a vector's bits weigh little against its SAD), references
 * from PNMF_SUBPEL_FULL_REFS on are searched past their candidates only
 * where one costs less than PNMF_SUBPEL_REF_GO times the best vector of
 * the nearer ones (docs/speed.md, "The block search"). */
#define PNMF_SUBPEL_PRUNE_Q 26
/* References searched whole, whatever the candidates cost, under it. */
#define PNMF_SUBPEL_FULL_REFS 1
/* The candidates' cost over the nearer references' best that stops a search. */
#define PNMF_SUBPEL_REF_GO 1.25

/* v quarter samples rounded to the nearest whole sample (halves up). */
static inline int qround(int v)
{
    const int t = v + 2;
    return t >= 0 ? t / 4 : -((-t + 3) / 4);
}

/* The SAD of the h x w block of src at (y0, x0) against pred (rows
 * PNMF_RES_BLOCK apart). */
static int pred_sad(const uint8_t *src, int cols, int y0, int x0, int h, int w, const uint8_t *pred)
{
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
    if (h == 8 && w == 8) return sad8x8(src + (size_t)y0 * cols + x0, pred, cols, PNMF_RES_BLOCK);
#endif
    int sad = 0;
    for (int y = 0; y < h; y++) {
        const uint8_t *s = src + (size_t)(y0 + y) * cols + x0, *p = pred + y * PNMF_RES_BLOCK;
        for (int x = 0; x < w; x++) sad += abs((int)s[x] - p[x]);
    }
    return sad;
}

/* The block's integer vector (iy, ix) refined in quarter samples: the
 * fractional candidates (in quarter samples; those the whole-sample search
 * could only try rounded), then the eight half positions around the best,
 * then the eight quarter positions around that, each kept only where SAD +
 * lam * the vector's bits (from (qpy, qpx)) is lower; with half (a
 * lossless coding, where a vector's fraction saves few levels on the
 * noise that keeps a block inexact) the eight half positions alone.
 * Returns the SAD of the vector left in (*qy, *qx). */
static int refine_qpel(const uint8_t *src, const uint8_t *R, int rows, int cols, int y0, int y1, int x0, int x1,
                       int sharp, const int16_t (*cand)[2], int ncand, int qpy, int qpx, double lam, int iy, int ix,
                       int half, int *qy, int *qx)
{
    const int h = y1 - y0, w = x1 - x0;
    uint8_t pred[PNMF_RES_BLOCK * PNMF_RES_BLOCK];
    int vy = 4 * iy, vx = 4 * ix;
    int bsad = block_sad(src, R, rows, cols, y0, y1, x0, x1, iy, ix, 0x7fffffff);
    double best = bsad + lam * mv_bits(vy, vx, qpy, qpx);
#define TRYQ(ty, tx) do { \
        const int ty_ = (ty), tx_ = (tx); \
        if (abs(ty_) > PNMF_RES_QPEL_MAX_MV || abs(tx_) > PNMF_RES_QPEL_MAX_MV) break; \
        pnmf_residual_subpel(R, rows, cols, y0, y1, x0, x1, ty_, tx_, sharp, pred); \
        const int sad_ = pred_sad(src, cols, y0, x0, h, w, pred); \
        const double c_ = sad_ + lam * mv_bits(ty_, tx_, qpy, qpx); \
        if (c_ < best) best = c_, bsad = sad_, vy = ty_, vx = tx_; \
    } while (0)
    for (int c = 0; c < ncand && !half; c++)
        if ((cand[c][0] & 3) || (cand[c][1] & 3)) TRYQ(cand[c][0], cand[c][1]);
    for (int step = 2; step >= 1 + half; step--) {
        const int cy = vy, cx = vx;
        for (int d = 0; d < 9; d++)
            if (d != 4) TRYQ(cy + (d / 3 - 1) * step, cx + (d % 3 - 1) * step);
    }
#undef TRYQ
    *qy = vy, *qx = vx;
    return bsad;
}

/* The prediction a shifted block's vector (dy, dx) makes: under window
 * flags bit 6 the vector is in quarter samples, a whole one a plain copy
 * ((dy, dx) then in samples). */
static inline int shifted_pred(const PnmfResidual *r, int *dy, int *dx)
{
    if (!r->subpel) return PNMF_RES_SHIFTED;
    if (*dy % 4 || *dx % 4) return r->sharp ? PNMF_RES_SHIFTED_SHARP : PNMF_RES_SHIFTED_QPEL;
    *dy /= 4, *dx /= 4;
    return PNMF_RES_SHIFTED;
}

/* ---- compound prediction (window flags bit 17) ---------------------------- */

/* The SAD of the h x w block of src at (y0, x0) against the rounded
 * average of p1 (rows PNMF_RES_BLOCK apart) and p2 (rows s2 apart), the
 * compound prediction they make. */
static int avg_sad(const uint8_t *src, int cols, int y0, int x0, int h, int w, const uint8_t *p1, const uint8_t *p2,
                   size_t s2)
{
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
    if (h == 8 && w == 8) { /* PAVGB's average is (a + b + 1) >> 1 */
        __m128i acc = _mm_setzero_si128();
        for (int y = 0; y < 8; y += 2) {
            const uint8_t *s = src + (size_t)(y0 + y) * cols + x0;
            const __m128i sv = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)s),
                                                  _mm_loadl_epi64((const __m128i *)(s + cols)));
            const uint8_t *b = p2 + (size_t)y * s2;
            const __m128i bv = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)b),
                                                  _mm_loadl_epi64((const __m128i *)(b + s2)));
            const __m128i av = _mm_avg_epu8(_mm_loadu_si128((const __m128i *)(p1 + y * PNMF_RES_BLOCK)), bv);
            acc = _mm_add_epi64(acc, _mm_sad_epu8(sv, av));
        }
        return _mm_cvtsi128_si32(acc) + _mm_extract_epi16(acc, 4);
    }
#endif
    int sad = 0;
    for (int y = 0; y < h; y++) {
        const uint8_t *s = src + (size_t)(y0 + y) * cols + x0, *a = p1 + y * PNMF_RES_BLOCK, *b = p2 + (size_t)y * s2;
        for (int x = 0; x < w; x++) sad += abs((int)s[x] - ((a[x] + b[x] + 1) >> 1));
    }
    return sad;
}

/* The second hypothesis for a shifted block whose first is (t, vy, vx)
 * (vector units: quarter samples with qs 4, whole ones with 1), its
 * prediction p1 made: for each of the PNMF_BI_REFS references (t among
 * them with PNMF_BI_SAME) whose own best vector (rv[tt], its cost rc[tt])
 * cost least, that
 * vector and the first one scaled to it (pnmf_bi_scale(), the prediction
 * the difference is coded from), then around the better the eight
 * vectors at a half and at a quarter sample (at one sample with qs 1),
 * each by SAD of the average + lam * its bits (ctx the question's
 * context), those the stream can code (components and their differences
 * from the scaled first vector in bounds); the least kept in (*t2, *v2y, *v2x), its compound prediction
 * in pred. Returns that cost, 1e300 with none. */
static double bi_search(const PnmfResidual *r, const uint8_t *src, const uint8_t *const *ref, int nref, int y0, int y1,
                        int x0, int x1, int t, int vy, int vx, const uint8_t *p1, const double *rc,
                        const int16_t (*rv)[2], double lam, int ctx, int *t2, int *v2y, int *v2x, uint8_t *pred)
{
    const int qs = r->subpel ? 4 : 1, maxv = qs * PNMF_RES_MAX_MV, h = y1 - y0, w = x1 - x0;
    RcBiCtx *bc = (RcBiCtx *)&r->enc_bictx; /* priced only: not moved */
    int pick[PNMF_BI_REFS], np = 0;
    for (int k = 0; k < PNMF_BI_REFS; k++) { /* the references of least cost, in order (ties: the nearer) */
        int bt = -1;
        for (int tt = 0; tt < nref; tt++) {
            int used = (tt == t && !PNMF_BI_SAME) || rc[tt] >= 1e300;
            for (int i = 0; i < np; i++) used |= pick[i] == tt;
            if (!used && (bt < 0 || rc[tt] < rc[bt])) bt = tt;
        }
        if (bt >= 0) pick[np++] = bt;
    }
    double best = 1e300;
    uint8_t p2[PNMF_RES_BLOCK * PNMF_RES_BLOCK];
    for (int i = 0; i < np; i++) {
        const int tt = pick[i], sy = pnmf_bi_scale(vy, t, tt), sx = pnmf_bi_scale(vx, t, tt);
        double bl = 1e300;
        int by = 0, bx = 0;
#define TRYB(ty, tx) do { \
        const int ty_ = (ty), tx_ = (tx); \
        if (abs(ty_) > maxv || abs(tx_) > maxv || abs(ty_ - sy) > 2 * maxv || abs(tx_ - sx) > 2 * maxv) break; \
        /* the bits alone reaching the best: the SAD only adds to them */ \
        const double b_ = lam * rc_bi_step(NULL, bc, ctx, tt, ty_ - sy, tx_ - sx, 0); \
        if (b_ >= bl) break; \
        /* a whole vector inside the frame predicts its rows of ref[tt] \
         * themselves (pnmf_residual_subpel()'s copy): read in place */ \
        const int iy_ = ty_ * (4 / qs) / 4, ix_ = tx_ * (4 / qs) / 4; \
        int sad_; \
        if (!(ty_ * (4 / qs) & 3) && !(tx_ * (4 / qs) & 3) && y0 + iy_ >= 0 && y1 + iy_ <= r->rows && x0 + ix_ >= 0 && \
            x1 + ix_ <= r->cols) { \
            sad_ = avg_sad(src, r->cols, y0, x0, h, w, p1, ref[tt] + (size_t)(y0 + iy_) * r->cols + x0 + ix_, \
                           (size_t)r->cols); \
        } else { \
            pnmf_residual_subpel(ref[tt], r->rows, r->cols, y0, y1, x0, x1, ty_ * (4 / qs), tx_ * (4 / qs), r->sharp, \
                                 p2); \
            sad_ = avg_sad(src, r->cols, y0, x0, h, w, p1, p2, PNMF_RES_BLOCK); \
        } \
        const double c_ = sad_ + b_; \
        if (c_ < bl) bl = c_, by = ty_, bx = tx_; \
    } while (0)
        TRYB(sy, sx);
        if (rv[tt][0] != sy || rv[tt][1] != sx) TRYB(rv[tt][0], rv[tt][1]);
        for (int step = qs == 4 ? 2 : 1; step >= 1; step--) {
            const int cy = by, cx = bx;
            for (int d = 0; d < 9; d++)
                if (d != 4) TRYB(cy + (d / 3 - 1) * step, cx + (d % 3 - 1) * step);
        }
#undef TRYB
        if (bl < best) best = bl, *t2 = tt, *v2y = by, *v2x = bx;
    }
    if (best < 1e300) /* the decoder's prediction */
        pnmf_residual_compound(ref[t], vy * (4 / qs), vx * (4 / qs), ref[*t2], *v2y * (4 / qs), *v2x * (4 / qs),
                               r->rows, r->cols, y0, y1, x0, x1, r->sharp, pred);
    return best;
}

/* Whether sub-pixel vectors pay in a window of m source frames (see
 * residual_search.h): in the first PNMF_SUBPEL_PROBE_FRAMES frames after
 * the first (or, where no block of them changed, a still start, in as
 * many frames spread over the window), every other block that changed,
 * matched against the frame
 * before it at the whole-sample vectors within +-PNMF_SUBPEL_PROBE_RANGE,
 * then at the quarter positions around the best. Blocks some whole vector
 * matches exactly (screen content, sprites) gain nothing from sub-pixel
 * vectors and count against them; the others count the share of their
 * SAD the quarter positions save. */
int pnmf_residual_subpel_pays(const uint8_t *frames, int m, size_t stride, int rows, int cols, double *gain,
                              double *exact)
{
    const int bx = pnmf_residual_blocks(cols), by = pnmf_residual_blocks(rows), R = PNMF_SUBPEL_PROBE_RANGE;
    const int n = PNMF_SUBPEL_PROBE_FRAMES;
    double sad_int = 0, sad_q = 0;
    long changed = 0, exact_n = 0;
    for (int i = 0, last = 0; i < 2 * n; i++) {
        if (i == n && changed) break;
        const int j = i < n ? 1 + i : 1 + (int)((int64_t)(i - n) * (m - 1) / n);
        if (j >= m || (i >= n && j <= last)) continue;
        last = j;
        const uint8_t *src = frames + (size_t)j * stride, *prev = src - stride;
        for (int b = 0; b < bx * by; b++) {
            int y0, y1, x0, x1;
            if (((b % bx) + (b / bx)) & 1) continue; /* a checkerboard of the blocks */
            pnmf_residual_block(bx, rows, cols, (size_t)b, &y0, &y1, &x0, &x1);
            if (y1 - y0 < PNMF_RES_BLOCK || x1 - x0 < PNMF_RES_BLOCK) continue;
            int best = block_sad(src, prev, rows, cols, y0, y1, x0, x1, 0, 0, 0x7fffffff), iy = 0, ix = 0;
            if (!best) continue; /* unchanged */
            changed++;
            for (int dy = -R; dy <= R && best; dy++)
                for (int dx = -R; dx <= R && best; dx++) {
                    const int sad = block_sad(src, prev, rows, cols, y0, y1, x0, x1, dy, dx, best);
                    if (sad < best) best = sad, iy = dy, ix = dx;
                }
            if (!best) {
                exact_n++;
                continue;
            }
            int qy, qx;
            const int q = refine_qpel(src, prev, rows, cols, y0, y1, x0, x1, 0, NULL, 0, 4 * iy, 4 * ix, 0.0, iy, ix, 0,
                                      &qy, &qx);
            sad_int += best, sad_q += q;
        }
    }
    *gain = sad_int > 0 ? (sad_int - sad_q) / sad_int : 0;
    *exact = changed ? (double)exact_n / changed : 0;
    return changed > 0 && *exact <= PNMF_SUBPEL_MAX_EXACT && *gain >= PNMF_SUBPEL_MIN_GAIN;
}

/* The frame's motions per frame (each shifted block's vector over the
 * frames back to its reference, where that divides), the most used first
 * (ties: the shorter, then the first met): the next frame's candidates. */
static void frame_motions(PnmfResidual *r, const int16_t (*bmv)[3], size_t nb)
{
    int16_t v[PNMF_MOTION_SLOTS][2];
    int cnt[PNMF_MOTION_SLOTS], n = 0;
    for (size_t b = 0; b < nb; b++) {
        const int t = bmv[b][2] + 1;
        if (t <= 0 || bmv[b][0] % t || bmv[b][1] % t || (!bmv[b][0] && !bmv[b][1])) continue;
        const int16_t y = (int16_t)(bmv[b][0] / t), x = (int16_t)(bmv[b][1] / t);
        int k = 0;
        while (k < n && (v[k][0] != y || v[k][1] != x)) k++;
        if (k == n) {
            if (n == PNMF_MOTION_SLOTS) continue;
            v[n][0] = y, v[n][1] = x, cnt[n++] = 0;
        }
        cnt[k]++;
    }
    r->enc_nmot = 0;
    for (int pick = 0; pick < PNMF_RES_MOTIONS; pick++) {
        int best = -1;
        for (int k = 0; k < n; k++)
            if (cnt[k] > 0 && (best < 0 || cnt[k] > cnt[best] ||
                               (cnt[k] == cnt[best] && abs(v[k][0]) + abs(v[k][1]) < abs(v[best][0]) + abs(v[best][1]))))
                best = k;
        if (best < 0) break;
        r->enc_mot[r->enc_nmot][0] = v[best][0], r->enc_mot[r->enc_nmot][1] = v[best][1];
        r->enc_nmot++;
        cnt[best] = 0;
    }
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (*cap >= need) return 0;
    size_t c = *cap ? *cap : 4096;
    while (c < need) c *= 2;
    void *q = pnmf_realloc(*p, c * elem);
    if (!q) return PNMF_ERR_NOMEM;
    *p = q, *cap = c;
    return 0;
}

int pnmf_residual_copy_weights(const uint8_t *frames, int m, size_t stride, int rows, int cols, uint8_t *w)
{
    const int bx = pnmf_residual_blocks(cols), by = pnmf_residual_blocks(rows);
    const size_t nb = (size_t)bx * by;
    if (m < 1) return 0;
    uint32_t *run = pnmf_calloc(nb, sizeof(uint32_t)); /* frames after j the block lasts */
    if (!run) return PNMF_ERR_NOMEM;
    /* k's class round(2 log2(1 + k)) is c from k = up[c] on */
    int up[PNMF_RES_WEIGHTS];
    for (int c = 0; c < PNMF_RES_WEIGHTS; c++) up[c] = c ? (int)ceil(exp2((c - 0.5) / 2) - 1) : 0;
    memset(w + (size_t)(m - 1) * nb, 0, nb);
    for (int j = m - 2; j >= 0; j--) {
        const uint8_t *a = frames + (size_t)j * stride, *c = a + stride;
        for (size_t b = 0; b < nb; b++) {
            int y0, y1, x0, x1;
            pnmf_residual_block(bx, rows, cols, b, &y0, &y1, &x0, &x1);
            int same = 1;
            if (x1 - x0 == 8) { /* (a whole block's rows as words: no call per row) */
                for (int y = y0; same && y < y1; y++) {
                    uint64_t u, v;
                    memcpy(&u, a + (size_t)y * cols + x0, 8);
                    memcpy(&v, c + (size_t)y * cols + x0, 8);
                    same = u == v;
                }
            }
            for (int y = y0; x1 - x0 != 8 && same && y < y1; y++)
                same = !memcmp(a + (size_t)y * cols + x0, c + (size_t)y * cols + x0, (size_t)(x1 - x0));
            run[b] = same ? run[b] + 1 : 0;
            int cl = 0;
            while (cl + 1 < PNMF_RES_WEIGHTS && run[b] >= (uint32_t)up[cl + 1]) cl++;
            w[(size_t)j * nb + b] = (uint8_t)cl;
        }
    }
    pnmf_free(run);
    return 0;
}

/* The key of the 8 x 8 samples at p (rows stride apart): the rows, 8
 * bytes each, mixed (a hash; equal samples give equal keys) */
static uint64_t block_key(const uint8_t *p, size_t stride)
{
    uint64_t h = 0;
    for (int y = 0; y < PNMF_RES_BLOCK; y++) {
        uint64_t v;
        memcpy(&v, p + (size_t)y * stride, 8);
        h = (h ^ v) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
    }
    return h | 1; /* 0 marks an empty slot */
}

/* The slot of key k in the table of size (a power of 2) slots, or the
 * empty slot where it would go (open addressing, linear probing). */
static size_t key_slot(const uint64_t *key, size_t size, uint64_t k)
{
    size_t s = (size_t)(k >> 17) & (size - 1);
    while (key[s] && key[s] != k) s = (s + 1) & (size - 1);
    return s;
}

int pnmf_residual_match_weights(const uint8_t *frames, int m, size_t stride, int rows, int cols, uint8_t *w)
{
    const int bx = pnmf_residual_blocks(cols), by = pnmf_residual_blocks(rows);
    const size_t nb = (size_t)bx * by;
    if (m < 2 || rows < PNMF_RES_BLOCK || cols < PNMF_RES_BLOCK) return 0;
    size_t size = 1;
    /* at most 1/8 full: most positions look up a key that is not there,
     * which ends at the first empty slot */
    while (size < 8 * nb) size *= 2;
    /* a[j * nb + b]: the blocks of later frames that copy frame j's block b */
    float *a = pnmf_calloc((size_t)m * nb, sizeof(float));
    uint64_t *key = pnmf_malloc_array(size, sizeof(uint64_t));
    int32_t *pos = pnmf_malloc_array(size, sizeof(int32_t));
    int32_t *at = pnmf_malloc_array(nb, sizeof(int32_t)); /* block b's slot, -1: found in place, or not full */
    if (!a || !key || !pos || !at) {
        pnmf_free(a), pnmf_free(key), pnmf_free(pos), pnmf_free(at);
        return PNMF_ERR_NOMEM;
    }
    const int span = cols - PNMF_RES_BLOCK + 1;
    for (int j = m - 1; j >= 1; j--) {
        const uint8_t *cur = frames + (size_t)j * stride, *prev = cur - stride;
        /* the keys of frame j's blocks that frame j - 1 does not hold in
         * place, then frame j - 1's 8 x 8 blocks at every position in
         * raster order: each key's first position (a table of the few
         * keys looked for, not of every position: the same first
         * positions, in far less memory) */
        memset(key, 0, size * sizeof(uint64_t));
        size_t left = 0; /* keys without a position yet */
        for (size_t b = 0; b < nb; b++) {
            int y0, y1, x0, x1;
            at[b] = -1;
            pnmf_residual_block(bx, rows, cols, b, &y0, &y1, &x0, &x1);
            if (y1 - y0 < PNMF_RES_BLOCK || x1 - x0 < PNMF_RES_BLOCK) continue;
            const uint8_t *blk = cur + (size_t)y0 * cols + x0;
            if (pnmf_residual_same_block(blk, prev + (size_t)y0 * cols + x0, (size_t)cols)) continue;
            const uint64_t k = block_key(blk, (size_t)cols);
            const size_t sl = key_slot(key, size, k);
            if (!key[sl]) key[sl] = k, pos[sl] = -1, left++;
            at[b] = (int32_t)sl;
        }
        for (int y = 0; left && y + PNMF_RES_BLOCK <= rows; y++)
            for (int x = 0; x + PNMF_RES_BLOCK <= cols; x++) {
                const size_t sl = key_slot(key, size, block_key(prev + (size_t)y * cols + x, (size_t)cols));
                if (key[sl] && pos[sl] < 0) pos[sl] = y * span + x, left--;
            }
        for (size_t b = 0; b < nb; b++) {
            int y0, y1, x0, x1;
            pnmf_residual_block(bx, rows, cols, b, &y0, &y1, &x0, &x1);
            if (y1 - y0 < PNMF_RES_BLOCK || x1 - x0 < PNMF_RES_BLOCK) continue;
            const uint8_t *blk = cur + (size_t)y0 * cols + x0;
            int dy = 0, dx = 0, found = at[b] < 0;
            if (!found && pos[at[b]] >= 0) {
                const int sy = pos[at[b]] / span, sx = pos[at[b]] % span;
                dy = sy - y0, dx = sx - x0;
                found = abs(dy) <= PNMF_RES_MAX_MV && abs(dx) <= PNMF_RES_MAX_MV &&
                        pnmf_residual_same_block(blk, prev + (size_t)sy * cols + sx, (size_t)cols);
            }
            if (!found) continue;
            /* frame j - 1's samples [y0 + dy, +8) x [x0 + dx, +8), by block */
            const double share = (1.0 + a[(size_t)j * nb + b]) / (PNMF_RES_BLOCK * PNMF_RES_BLOCK);
            const int sy0 = y0 + dy, sx0 = x0 + dx, sy1 = sy0 + PNMF_RES_BLOCK, sx1 = sx0 + PNMF_RES_BLOCK;
            for (int yb = sy0 / PNMF_RES_BLOCK; yb * PNMF_RES_BLOCK < sy1; yb++)
                for (int xb = sx0 / PNMF_RES_BLOCK; xb * PNMF_RES_BLOCK < sx1; xb++) {
                    const int ly = yb * PNMF_RES_BLOCK > sy0 ? yb * PNMF_RES_BLOCK : sy0;
                    const int lx = xb * PNMF_RES_BLOCK > sx0 ? xb * PNMF_RES_BLOCK : sx0;
                    const int hy = (yb + 1) * PNMF_RES_BLOCK < sy1 ? (yb + 1) * PNMF_RES_BLOCK : sy1;
                    const int hx = (xb + 1) * PNMF_RES_BLOCK < sx1 ? (xb + 1) * PNMF_RES_BLOCK : sx1;
                    a[(size_t)(j - 1) * nb + (size_t)yb * bx + xb] += (float)(share * (hy - ly) * (hx - lx));
                }
        }
    }
    for (size_t i = 0; i < (size_t)m * nb; i++) {
        const double c = floor(2 * log2(1.0 + a[i]) + 0.5);
        const int cl = c > PNMF_RES_WEIGHTS - 1 ? PNMF_RES_WEIGHTS - 1 : (int)c;
        if (cl > w[i]) w[i] = (uint8_t)cl;
    }
    pnmf_free(a), pnmf_free(key), pnmf_free(pos), pnmf_free(at);
    return 0;
}

/* ---- palette blocks (window flags bit 13, palette.h) ---------------------- */

/* The palettes of block b's left and above neighbours in this frame, from
 * at[] (each palette block's place in r->pal, -1 for other modes). */
static void palette_neighbours(const PnmfResidual *r, const int32_t *at, size_t b, const PnmfPalBlock **left,
                               const PnmfPalBlock **above)
{
    *left = b % (size_t)r->bx && at[b - 1] >= 0 ? r->pal + at[b - 1] : NULL;
    *above = b >= (size_t)r->bx && at[b - r->bx] >= 0 ? r->pal + at[b - r->bx] : NULL;
}

/* The cost of block b as a palette block (its best palette into *p), or
 * 1e300 when it cannot beat bj, the best cost so far. lambda is the
 * frame's, without the block's weight: a palette makes a block of few
 * gray levels exact, and the weight (the error later frames copy) would
 * buy that exactness at any price where the other modes cannot reach it,
 * as in the new edge of a panning sky. */
static double palette_try(PnmfResidual *r, const int32_t *at, size_t b, const uint8_t *src, int y0, int y1, int x0,
                          int x1, int L, int A, int Pm, double lambda, double bj, PnmfPalBlock *p)
{
    const double mb = lambda * rc_mode_step(&r->enc_modes, PNMF_RES_PALETTE, L, A, Pm, 0);
    if (mb >= bj) return 1e300;
    const PnmfPalBlock *left, *above;
    palette_neighbours(r, at, b, &left, &above);
    double bits = 0;
    /* no palette whose cost reaches bj - mb can win: those are not
     * weighed (the bound a little above it, so that no palette that wins
     * by mb + its cost < bj is left out for the rounding of the difference) */
    const double bound = bj >= 1e300 ? 1e300 : bj - mb + 1e-9 * (fabs(bj) + 1.0);
    const double jp = pnmf_pal_search(src + (size_t)y0 * r->cols + x0, (size_t)r->cols, y1 - y0, x1 - x0, left, above,
                                      &r->enc_pal, lambda, bound, p, &bits);
    return jp >= 1e300 ? 1e300 : mb + jp;
}

/* Block b coded as palette block p: kept in r->pal, the palette contexts
 * moved as the writer will move them, its samples drawn into D. */
static int palette_commit(PnmfResidual *r, int32_t *at, size_t b, const PnmfPalBlock *p, int y0, int y1, int x0,
                          int x1, uint8_t *D)
{
    if (r->npal == r->palcap) {
        const size_t cap = r->palcap ? 2 * r->palcap : 64;
        PnmfPalBlock *np = pnmf_realloc(r->pal, cap * sizeof(*np));
        if (!np) return PNMF_ERR_NOMEM;
        r->pal = np, r->palcap = cap;
    }
    const PnmfPalBlock *left, *above;
    palette_neighbours(r, at, b, &left, &above);
    RcBin o = { .enc = NULL, .update = 1 };
    pnmf_pal_code(&o, &r->enc_pal, left, above, y1 - y0, x1 - x0, p);
    r->pal[r->npal] = *p;
    at[b] = (int32_t)r->npal++;
    pnmf_pal_draw(p, y1 - y0, x1 - x0, D + (size_t)y0 * r->cols + x0, (size_t)r->cols);
    return 0;
}

/* Window flags bit 24: what the writer's sample contexts read of pixel-coded
 * block b of frame j, kept before its levels are added (lossless.h,
 * PnmfResidual.enc_lxn and enc_lxp): its decoded neighbours in D, and its
 * prediction (pre, or made here as try_block() makes it; none for the
 * spatial prediction, which the writer makes sample by sample) at level q
 * on. Returns 0 or PNMF_ERR_NOMEM. */
static int lx_keep(PnmfResidual *r, int j, size_t b, int em, const uint8_t *pre, const uint8_t *P, const uint8_t *Pp,
                   const uint8_t *Dp, const uint8_t *Dr, const uint8_t *D, int y0, int y1, int x0, int x1, int vy,
                   int vx, size_t q)
{
    const int rows = r->rows, cols = r->cols, h = y1 - y0, w = x1 - x0;
    uint8_t *nbk = r->enc_lxn + ((size_t)j * r->bx * r->by + b) * PNMF_LX_NB;
    for (int i = 0; i < 10; i++) {
        const int x = x0 - 1 + i;
        nbk[i] = y0 > 0 && x >= 0 && x < cols ? D[(size_t)(y0 - 1) * cols + x] : 0;
    }
    for (int i = 0; i < 8; i++) nbk[10 + i] = x0 > 0 && y0 + i < rows ? D[(size_t)(y0 + i) * cols + x0 - 1] : 0;
    if (em == PNMF_RES_SPATIAL) return 0;
    if (q + (size_t)h * w > r->enc_lxp_cap) {
        size_t cap = r->enc_lxp_cap ? r->enc_lxp_cap : 4096;
        while (cap < q + (size_t)h * w) cap *= 2;
        uint8_t *np = pnmf_realloc(r->enc_lxp, cap);
        if (!np) return PNMF_ERR_NOMEM;
        r->enc_lxp = np, r->enc_lxp_cap = cap;
    }
    uint8_t pb[PNMF_RES_BLOCK * PNMF_RES_BLOCK];
    if (!pre) pnmf_residual_predict(em, P, Pp, Dp, Dr, D, rows, cols, y0, y1, x0, x1, vy, vx, pb), pre = pb;
    for (int y = 0; y < h; y++) memcpy(r->enc_lxp + q + (size_t)y * w, pre + y * PNMF_RES_BLOCK, (size_t)w);
    return 0;
}

/* The block (y0..y1, x0..x1) of src into D (both cols wide): what a
 * lossless window decodes where its levels make the prediction the source. */
static void copy_source(uint8_t *D, const uint8_t *src, int cols, int y0, int y1, int x0, int x1)
{
    if (x1 - x0 == 8) /* (a whole block's rows as words: no call per row) */
        for (int y = y0; y < y1; y++) memcpy(D + (size_t)y * cols + x0, src + (size_t)y * cols + x0, 8);
    else
        for (int y = y0; y < y1; y++)
            memcpy(D + (size_t)y * cols + x0, src + (size_t)y * cols + x0, (size_t)(x1 - x0));
}

int pnmf_residual_encode_frame(PnmfResidual *r, int j, const uint8_t *src, const uint8_t *P,
                               const uint8_t *Pp, const uint8_t *const *ref, int nref, uint8_t *D,
                               double lambda)
{
    return pnmf_residual_encode_frame_src(r, j, src, NULL, P, Pp, ref, nref, D, lambda);
}

int pnmf_residual_encode_frame_src(PnmfResidual *r, int j, const uint8_t *src, const uint8_t *src_prev,
                                   const uint8_t *P, const uint8_t *Pp, const uint8_t *const *ref, int nref,
                                   uint8_t *D, double lambda)
{
    pthread_once(&level_bits_once, level_bits_init);
    const size_t nb = (size_t)r->bx * r->by;
    uint8_t *modes = r->modes + (size_t)j * nb;
    const int step16 = pnmf_residual_frame_step(r, j), qp = pnmf_residual_frame_qp(r, j);
    const uint8_t *Dp = nref > 0 ? ref[0] : NULL;
    if (nref > PNMF_RES_REFS) nref = PNMF_RES_REFS;
    if (j == 0 && !r->continues) nref = 0;
    r->start[j] = r->nlev;
    r->mvstart[j] = r->nmv;
    int gy = r->enc_gy, gx = r->enc_gx;
    PnmfVecState vs; /* the vectors stream's state, as the writer will have it */
    pnmf_vec_init(&vs);
    vs.med = r->median && r->enc_median; /* priced as window flags bit 15 codes them */
    r->enc_vectors.on = r->nbctx; /* window flags bit 14 */
    /* the box means of the frame and of the references, made when the wide
     * search first needs them (wide[t].ref NULL until then); the nearest
     * reference's at once, as the global motion's search reads them too */
    Coarse wide[PNMF_RES_REFS];
    const int r4 = r->rows / 4, c4 = r->cols / 4;
    int nwide = nref;
    uint8_t *cbuf = nwide && r4 >= 4 && c4 >= 4 ? pnmf_malloc_array((size_t)(nwide + 1) * r4, (size_t)c4) : NULL;
    if (!cbuf) nwide = 0;
    if (nwide) shrink4(src, r->cols, cbuf, r4, c4);
    for (int t = 0; t < nwide; t++) wide[t].src = cbuf, wide[t].ref = NULL, wide[t].r4 = r4, wide[t].c4 = c4;
    if (nwide) shrink4(Dp, r->cols, cbuf + (size_t)r4 * c4, r4, c4), wide[0].ref = cbuf + (size_t)r4 * c4;
    if (nref) global_motion(src, Dp, r->rows, r->cols, nwide ? cbuf : NULL, &gy, &gx);
    r->enc_gy = gy, r->enc_gx = gx;
    /* the frame's global vector (format 7), which displaces the previous
     * prediction: the dominant displacement whenever it predicts the frame
     * (its sparse grid) better than none. A pan then costs no vector per
     * block; stricter rules (its error under half of none's, or more
     * blocks matching displaced than in place) miss pans whose still and
     * flat parts keep the error in place low. */
    int fgy = 0, fgx = 0;
    if (nref && (gy || gx) &&
        grid_sad(src, NULL, Dp, r->rows, r->cols, gy, gx, -1) < grid_sad(src, NULL, Dp, r->rows, r->cols, 0, 0, -1))
        fgy = gy, fgx = gx;
    /* window flags bit 23: the frame's warp, fitted around the global
     * motion, whose whole part at the frame's centre is then the global
     * vector; the previous prediction of each block follows it */
    int32_t *gw = r->gw + (size_t)PNMF_RES_WARP_N * j;
    memset(gw, 0, PNMF_RES_WARP_N * sizeof(*gw));
    const int warp = r->warp && r->subpel && nref;
    if (warp) {
        /* kept where it takes PNMF_WARP_GAIN of the previous prediction's
         * SAD away: a still camera's copies stay whole (the fit's small
         * remainder would blur them through the filter) */
        int wy = gy, wx = gx;
        int32_t w6[PNMF_RES_WARP_N];
        if (pnmf_enc_warp_fit(src, Dp, r->rows, r->cols, r->sharp, &wy, &wx, w6)) {
            const int32_t none[PNMF_RES_WARP_N] = { 0 };
            const int64_t s0 = pnmf_enc_warp_sad(src, Dp, r->rows, r->cols, r->sharp, fgy, fgx, none);
            const int64_t s1 = pnmf_enc_warp_sad(src, Dp, r->rows, r->cols, r->sharp, wy, wx, w6);
            if ((double)s1 < (1.0 - PNMF_WARP_GAIN) * (double)s0) fgy = wy, fgx = wx, memcpy(gw, w6, sizeof(w6));
        }
    }
    r->gmv[2 * j] = (int16_t)fgy, r->gmv[2 * j + 1] = (int16_t)fgx;
    /* the previous prediction as the block functions see it */
    const int prev_mode = fgy || fgx ? PNMF_RES_SHIFTED : PNMF_RES_PREVIOUS;
    /* vectors of shifted blocks in quarter samples under window flags bit 6:
     * their bound, and the global vectors in their unit */
    const int qs = r->subpel ? 4 : 1, maxv = qs * PNMF_RES_MAX_MV;
    /* the vector and reference chosen so far in this frame, per block */
    int16_t (*bmv)[3] = pnmf_calloc(nb, sizeof(*bmv));
    if (!bmv) {
        pnmf_free(cbuf);
        return PNMF_ERR_NOMEM;
    }
    /* window flags bit 13: each block's place in r->pal, -1 for other modes */
    int32_t *palat = r->enc_palette ? pnmf_malloc_array(nb, sizeof(int32_t)) : NULL;
    if (r->enc_palette && !palat) {
        pnmf_free(bmv), pnmf_free(cbuf);
        return PNMF_ERR_NOMEM;
    }
    if (palat) memset(palat, 0xff, nb * sizeof(int32_t));
    r->palstart[j] = r->npal;
    /* window flags bit 17 (tried in lossy windows): the blocks with a second hypothesis */
    uint8_t *bihas = r->enc_bi && !r->enc_dec && nref ? pnmf_calloc(nb, 1) : NULL;
    if (r->enc_bi && !r->enc_dec && nref && !bihas) {
        pnmf_free(bmv), pnmf_free(palat), pnmf_free(cbuf);
        return PNMF_ERR_NOMEM;
    }
    /* the last frame's, when it was coded just before with these references */
    const int16_t (*pm)[3] = j && nref ? (const int16_t (*)[3])r->enc_prev_mv : NULL;
    /* a lossy window with sub-pixel motion (camera footage, rendered
     * animation): a finer balance, as its decoded frames are what every
     * later frame's blocks predict from */
    if (r->subpel && step16 > PNMF_RES_MIN_STEP)
        lambda *= step16 > pnmf_residual_step(PNMF_SUBPEL_COARSE_Q) ? PNMF_SUBPEL_LAMBDA_COARSE : PNMF_SUBPEL_LAMBDA;
    const double lambda0 = lambda;
    /* a level table per block weight, made when a block first needs it;
     * after them, the vector searches' marks (search_block()) */
    const size_t nlt = r->enc_weight ? PNMF_RES_WEIGHTS : 1;
    LevelTab *lts = pnmf_malloc_array(1, nlt * sizeof(LevelTab) + sizeof(SeenMap));
    uint8_t lt_made[PNMF_RES_WEIGHTS] = { 0 };
    if (!lts) {
        pnmf_free(bmv), pnmf_free(cbuf), pnmf_free(palat), pnmf_free(bihas);
        return PNMF_ERR_NOMEM;
    }
    SeenMap *seen = (SeenMap *)(lts + nlt);
    memset(seen, 0, sizeof(*seen));
    RcLevCtx *lc = r->enc_rc_price ? &r->enc_levels : NULL;
    /* the transform levels weighed with the contexts' prices (rdoq_levels())
     * where the encoder asks (smooth content's many small levels) */
    const int rdoq = r->enc_rdoq && lc;
    const int kind = j != 0;
    /* a lossless window (its decoded frames kept for the sample-context
     * stream): no transform block is exact, an exact vector ends the
     * search, and the trials are pruned (lossless_match.h) */
    const int exact = r->enc_dec != NULL;
    /* a lossy window with sub-pixel motion at a fine step: the farther
     * references' searches pruned (search_block()'s go) */
    const int prune = r->subpel && !exact && step16 <= pnmf_residual_step(PNMF_SUBPEL_PRUNE_Q);
    /* a lossy window of smooth content (sub-pixel motion or a cartoon's,
     * the windows whose vectors are priced with the median, enc_median):
     * the vectors a shifted block copies by a merge index are tried as
     * its vector too, each weighed whole. The search ranks vectors by SAD
     * and an estimate of a coded vector's bits (PNMF_MV_BITS_BASE), which
     * prices a merge index as a coded difference; a candidate whose SAD
     * and bits cost over PNMF_MERGE_GO times the searched vector's is not
     * tried. In the other lossy windows (PNMF_MERGE_SCREEN) the trials
     * gain too, but the sprite gate then drops layers that paid */
    const int merge = PNMF_MERGE_TRIALS && (r->enc_median || PNMF_MERGE_SCREEN) && !exact && nref &&
                      step16 > PNMF_RES_MIN_STEP;
    /* a lossy window with sub-pixel motion (camera footage, rendered
     * animation; in cartoons and sprite animation the coarsest steps lose
     * by it: pingus_pan +2.3 % BD-rate) at steps coarser
     * than -q PNMF_SRC_STILL_Q's: a block whose source equals the previous
     * source frame's where the previous prediction takes it (in place, or
     * displaced by the frame's global vector) is searched on its candidates alone (among
     * them the zero vector of every reference). Its content did not move;
     * the references differ from it by their coding noise alone, which no
     * other vector undoes, and at coarse steps few such blocks are
     * decoded exactly (the still blocks below), so the whole search ran
     * on most of them (docs/speed.md, "Blocks whose source stands still") */
    const int src_still_on = src_prev && !exact && step16 > pnmf_residual_step(PNMF_SRC_STILL_Q) &&
                             (r->subpel || (r->enc_bi && step16 <= pnmf_residual_step(PNMF_SRC_STILL_DRAWN_Q)));
    /* and its references indexed for exact block matches (lossless_match.h) */
    PnmfLxMatch *lxm = NULL;
    /* under sub-pixel motion (camera footage, where no block is found
     * exactly): no index, the searches as if it found nothing */
    const int nomatch = exact && r->subpel;
    if (exact && nref && !nomatch) {
        if (!r->enc_match && (r->enc_match = pnmf_lxm_new(r->rows, r->cols, 1))) r->enc_match_free = pnmf_lxm_free;
        lxm = r->enc_match;
        if (lxm && pnmf_lxm_refs(lxm, j, ref, nref) < 0) {
            pnmf_free(bmv), pnmf_free(cbuf), pnmf_free(lts), pnmf_free(palat), pnmf_free(bihas);
            return PNMF_ERR_NOMEM;
        }
        /* the nearest reference's box means, made above, kept for the next frames */
        int fresh = 0;
        uint8_t *c0 = lxm && nwide ? pnmf_lxm_coarse(lxm, 0, (size_t)r4 * c4, &fresh) : NULL;
        if (c0 && fresh) memcpy(c0, cbuf + (size_t)r4 * c4, (size_t)r4 * c4);
    }
    for (size_t b = 0; b < nb; b++) {
        const int wc = r->enc_weight && r->enc_weight[b] < PNMF_RES_WEIGHTS ? r->enc_weight[b] : 0;
        lambda = wc ? lambda0 * exp2(-0.5 * wc) : lambda0;
        if (!lt_made[wc]) level_tab_init(&lts[wc], step16, lambda), lt_made[wc] = 1;
        const LevelTab *ltp = &lts[wc];
        const double lam_sad = sqrt(lambda);
        int y0, y1, x0, x1;
        pnmf_residual_block(r->bx, r->rows, r->cols, b, &y0, &y1, &x0, &x1);
        int best = PNMF_RES_MODEL, vy = 0, vx = 0, vt = 0, best8 = 0, bdir = 0;
        /* window flags bit 17: the chosen block's second hypothesis (vb -1: none), and the one
         * the search found (bt2 -1: none) with its compound prediction */
        int vb = -1, vy2 = 0, vx2 = 0, bt2 = -1, bv2y = 0, bv2x = 0, s_t = 0, s_dy = 0, s_dx = 0;
        uint8_t bpred[PNMF_RES_BLOCK * PNMF_RES_BLOCK];
        const int bictx = bihas ? pnmf_bi_ctx(bihas, r->bx, b) : 0;
        /* each reference's best vector and its cost (SAD + lam * bits), for the second hypothesis */
        double rcost[PNMF_RES_REFS];
        int16_t rvec[PNMF_RES_REFS][2];
        for (int tt = 0; tt < PNMF_RES_REFS; tt++) rcost[tt] = 1e300;
        const int left = b % r->bx ? modes[b - 1] : -1, above = b >= (size_t)r->bx ? modes[b - r->bx] : -1;
        const int prev = j ? modes[b - nb] : -1;
        r->enc_modes.nb = r->nbctx ? pnmf_residual_mode_nb(modes, r->bx, nb, b, j) : -1; /* bit 14 */
        r->enc_vectors.lsh = b % r->bx && (modes[b - 1] & 7) == PNMF_RES_SHIFTED;
        const int full = y1 - y0 == PNMF_RES_BLOCK && x1 - x0 == PNMF_RES_BLOCK;
        /* a block the previous frame predicts exactly needs no vector: the
         * shifted prediction cannot beat zero error for fewer bits */
        /* the previous prediction here: the mode the block functions
         * make it with, its displacement in their unit, and in the
         * vectors' (qs) */
        int pmode = prev_mode, pdy0 = fgy, pdx0 = fgx, pvy = qs * fgy, pvx = qs * fgx;
        if (warp) {
            pnmf_residual_warp_mv(r, j, y0, y1, x0, x1, &pvy, &pvx);
            const int fr = pvy % 4 || pvx % 4;
            pmode = fr ? (r->sharp ? PNMF_RES_SHIFTED_SHARP : PNMF_RES_SHIFTED_QPEL)
                       : pvy || pvx ? PNMF_RES_SHIFTED : PNMF_RES_PREVIOUS;
            pdy0 = fr ? pvy : pvy / 4, pdx0 = fr ? pvx : pvx / 4;
        }
        const int pwhole = pmode == PNMF_RES_SHIFTED || pmode == PNMF_RES_PREVIOUS;
        int still = nref && pwhole && !block_sad(src, Dp, r->rows, r->cols, y0, y1, x0, x1, pdy0, pdx0, 1);
        const int src_still = src_still_on && nref && !still &&
                              !block_sad(src, src_prev, r->rows, r->cols, y0, y1, x0, x1, fgy, fgx, 1);
        if (nref && !still && (fgy || fgx) && P && Pp) {
            /* or exactly in place where the model did not move (P_j = P_{j-1}
             * there): the motion prediction copies it, for no vector */
            still = pnmf_residual_model_still(P, Pp, r->cols, y0, y1, x0, x1) &&
                    !block_sad(src, Dp, r->rows, r->cols, y0, y1, x0, x1, 0, 0, 1);
        }
        /* window flags bit 15: the neighbours the vector is predicted from, and the
         * previous frame's vector at the block, candidates too */
        pnmf_vec_nb(&vs, (const int16_t (*)[3])bmv, modes, r->bx, b);
        vs.col = pm && (modes[(ptrdiff_t)b - (ptrdiff_t)nb] & 7) == PNMF_RES_SHIFTED ? pm[b] : NULL;
        RcVecCand vk; /* the vectors a shifted block here copies without coding them */
        pnmf_vec_cands(&vs, b >= (size_t)r->bx && (modes[b - r->bx] & 7) == PNMF_RES_SHIFTED ? bmv[b - r->bx] : NULL,
                       &vk);
        /* format 9: the intra directions worth a transform's trial, those of
         * least SAD (window flags bit 10), picked when an intra transform
         * trial first needs them (most blocks of later frames try none) */
        int tdir[PNMF_INTRA_TRY] = { 0 }, picked = 0;
        uint8_t dpred[PNMF_INTRA_DIRS][PNMF_RES_BLOCK * PNMF_RES_BLOCK];
        /* the transform trials of a prediction whose SATD is over
         * PNMF_TX_TRIAL_RATIO times the least prediction's are skipped:
         * the levels that make up for it cost more than the better
         * prediction's (the shifted prediction's SATD joins once its
         * vector is found); at coarse steps, where a transform of a poor
         * but smooth prediction codes for few bits, every one is tried, as
         * in windows with palette blocks (screen content, whose sharp
         * edges the SATD misjudges) */
        int psad[PNMF_RES_PREDS], minsad = INT32_MAX;
        const int txcut = full && !exact && !r->enc_palette && step16 <= pnmf_residual_step(PNMF_TX_TRIAL_Q);
        for (int m = 0; m < PNMF_RES_PREDS; m++) psad[m] = 0;
        if (txcut) {
            for (int m = 0; m < PNMF_RES_PREDS; m++) {
                psad[m] = INT32_MAX;
                if (m == PNMF_RES_SPATIAL || m == PNMF_RES_SHIFTED) continue;
                if ((m == PNMF_RES_PREVIOUS || m == PNMF_RES_MOTION) && !nref) continue;
                uint8_t pb[PNMF_RES_BLOCK * PNMF_RES_BLOCK];
                const int em = m == PNMF_RES_PREVIOUS ? pmode : m;
                pnmf_residual_predict(em, P, Pp, Dp, Dp, D, r->rows, r->cols, y0, y1, x0, x1,
                                      m == PNMF_RES_PREVIOUS ? pdy0 : 0, m == PNMF_RES_PREVIOUS ? pdx0 : 0, pb);
                psad[m] = satd8x8(src + (size_t)y0 * r->cols + x0, pb, r->cols);
                if (psad[m] < minsad) minsad = psad[m];
            }
        }
        double bj = 1e300;
        /* a lossy block the previous or the motion prediction copies
         * exactly (still): those two uncoded trials first, as the loop
         * below makes them, and the least of their costs (a mode's bits)
         * bounds the trials from the start, just above it: a trial that
         * costs more cannot win, and one that costs as much or less is
         * weighed whole as without the bound, the earlier mode taking a
         * tie, so the block's choice is the same. The trials of the model
         * and the transforms then stop at their first rows */
        if (still && !exact) {
            double seed = 1e300;
            for (int mode = PNMF_RES_PREVIOUS; mode <= PNMF_RES_MOTION; mode++) {
                const int em = mode == PNMF_RES_PREVIOUS ? pmode : mode;
                const int dy = mode == PNMF_RES_PREVIOUS ? pdy0 : 0, dx = mode == PNMF_RES_PREVIOUS ? pdx0 : 0;
                const double lb = lambda * rc_mode_step(&r->enc_modes, mode, left, above, prev, 0);
                const double jj = lb + try_block(em, 0, ltp, step16, lambda, src, P, Pp, Dp, Dp, D, r->rows, r->cols,
                                                 y0, y1, x0, x1, dy, dx, NULL, lc, kind, INFINITY, NULL, 0, lb, 1e300,
                                                 NULL);
                if (jj < seed) seed = jj;
            }
            if (seed < 1e300) bj = nextafter(seed, INFINITY);
        }
        /* a lossless coding with the levels priced by their contexts: the coded trials'
         * levels are estimated with the fixed table first, and only those
         * within PNMF_LX_TRIAL_PRUNE of the least estimate are priced
         * (after the predictions' loop); an uncoded trial is cut short at
         * its first inexact sample, and once one is exact (xfound), no
         * coded trial is made */
        LxTrial dt[PNMF_RES_PREDS];
        int ndt = 0, xfound = 0, won = -1; /* won: the put-off trial chosen */
        double est_best = INFINITY;
        /* the shifted trial's vector (sh_t -1: none searched), and the
         * price of no second hypothesis, for the merge trials */
        int sh_t = -1, sh_dy = 0, sh_dx = 0;
        double sh_cost = 1e300; /* its SAD + lam_sad * bits */
        double bi0 = 0;
        /* the predictions, then (comp, window flags bit 17) the shifted one with
         * the second hypothesis its search found, then (mrg) the shifted
         * one with each vector a block here copies by its merge index */
        for (int mi = 0; mi <= PNMF_RES_PREDS + (merge ? vk.n : 0); mi++) {
            const int comp = mi == PNMF_RES_PREDS, mrg = mi - PNMF_RES_PREDS - 1;
            const int mode = comp || mrg >= 0 ? PNMF_RES_SHIFTED : mi;
            if (comp && bt2 < 0) continue;
            const int needs_prev = mode == PNMF_RES_PREVIOUS || mode == PNMF_RES_MOTION || mode == PNMF_RES_SHIFTED;
            if (needs_prev && !nref) continue;
            int dy = 0, dx = 0, t = 0;
            double extra = 0;
            const uint8_t *Dr = Dp;
            const uint8_t *cpre = comp ? bpred : NULL; /* the prediction, when made here */
            const int em = mode == PNMF_RES_PREVIOUS ? pmode : mode; /* the prediction made */
            if (mode == PNMF_RES_PREVIOUS) dy = pdy0, dx = pdx0;
            if (mrg >= 0) {
                /* a candidate the search's SAD priced as a coded vector:
                 * weighed whole at its merge index's price */
                dy = vk.c[mrg][0], dx = vk.c[mrg][1], t = vk.c[mrg][2];
                if (still || t < 0 || t >= nref || (t == sh_t && dy == sh_dy && dx == sh_dx)) continue;
                if (!t && dy == pvy && dx == pvx) continue; /* the previous prediction, cheaper */
                Dr = ref[t];
                const double vb_ = vector_bits(r, &vs, &vk, t, dy, dx, 0);
                if (sh_cost < 1e300) { /* past PNMF_MERGE_GO times the search's vector by its measure: no trial */
                    uint8_t pb[PNMF_RES_BLOCK * PNMF_RES_BLOCK];
                    pnmf_residual_subpel(Dr, r->rows, r->cols, y0, y1, x0, x1, dy * (4 / qs), dx * (4 / qs), r->sharp,
                                         pb);
                    if (pred_sad(src, r->cols, y0, x0, y1 - y0, x1 - x0, pb) + lam_sad * vb_ > PNMF_MERGE_GO * sh_cost)
                        continue;
                }
                extra = lambda * (vb_ + bi0);
            } else if (comp) {
                dy = s_dy, dx = s_dx, t = s_t, Dr = ref[t];
                extra = lambda * (vector_bits(r, &vs, &vk, t, dy, dx, 0) +
                                  rc_bi_step(NULL, &r->enc_bictx, bictx, bt2, bv2y - pnmf_bi_scale(dy, t, bt2),
                                             bv2x - pnmf_bi_scale(dx, t, bt2), 0));
            } else if (mode == PNMF_RES_SHIFTED) {
                if (still) continue;
                /* no search when the mode's bits alone already cost more
                 * than the best so far (every option below costs them and
                 * more; ties go to the earlier mode) */
                double mb = rc_mode_step(&r->enc_modes, mode, left, above, prev, 0);
                const double mc = rc_mode_step(&r->enc_modes, mode | PNMF_RES_CODED, left, above, prev, 0);
                mb = mc < mb ? mc : mb;
                if (full) {
                    const double mt = rc_mode_step(&r->enc_modes, mode | PNMF_RES_CODED | PNMF_RES_TRANSFORM, left,
                                                   above, prev, 0);
                    mb = mt < mb ? mt : mb;
                }
                if (lambda * mb >= bj) continue;
                /* each reference's best vector by SAD + lam * bits; the best of those */
                double bc = 1e300;
                int good = 0; /* a reference so far matched well: no wide search in the next */
                int16_t qcand[6 + 3 + PNMF_RES_MOTIONS + PNMF_LXM_CAP][2]; /* the best reference's candidates */
                int nq = 0;
                int hit = 0; /* exact: a reference so far predicts the block exactly */
                int bsad = 0; /* the SAD of the best reference's vector */
                for (int tt = 0; tt < nref; tt++) {
                    /* a lossless coding under sub-pixel motion finds no
                     * block by its hash (no index: nomatch): the skips
                     * below that follow from that, before the candidates
                     * are gathered */
                    if (nomatch && (tt >= PNMF_LX_SUBPEL_REFS || (full && hit))) continue;
                    int pv[2]; /* the vectors stream's prediction of tt's vector */
                    pnmf_vec_pred(&vs, tt, pv);
                    int16_t cand[6 + 3 + PNMF_RES_MOTIONS + PNMF_LXM_CAP][2] = { { 0, 0 },
                                                                  { (int16_t)pv[0], (int16_t)pv[1] } };
                    int nc = 2;
                    for (int i = 0; i < vk.n; i++) /* the vectors it may copy for nothing */
                        if (vk.c[i][2] == tt) cand[nc][0] = vk.c[i][0], cand[nc][1] = vk.c[i][1], nc++;
                    /* motion goes on: this block's vector in the last frame and the
                     * last frame's most used motions, each per frame, times the
                     * frames back to tt */
                    if (pm && pm[b][2] >= 0 && pm[b][0] % (pm[b][2] + 1) == 0 && pm[b][1] % (pm[b][2] + 1) == 0) {
                        const int sy = pm[b][0] / (pm[b][2] + 1) * (tt + 1), sx = pm[b][1] / (pm[b][2] + 1) * (tt + 1);
                        if (abs(sy) <= maxv && abs(sx) <= maxv)
                            cand[nc][0] = (int16_t)sy, cand[nc][1] = (int16_t)sx, nc++;
                    }
                    for (int k = 0; k < r->enc_nmot; k++) {
                        const int sy = r->enc_mot[k][0] * (tt + 1), sx = r->enc_mot[k][1] * (tt + 1);
                        if (abs(sy) <= maxv && abs(sx) <= maxv)
                            cand[nc][0] = (int16_t)sy, cand[nc][1] = (int16_t)sx, nc++;
                    }
                    if (tt == 0) cand[nc][0] = (int16_t)(qs * gy), cand[nc][1] = (int16_t)(qs * gx), nc++;
                    if (b % r->bx && bmv[b - 1][2] == tt) cand[nc][0] = bmv[b - 1][0], cand[nc][1] = bmv[b - 1][1], nc++;
                    if (b >= (size_t)r->bx && bmv[b - r->bx][2] == tt)
                        cand[nc][0] = bmv[b - r->bx][0], cand[nc][1] = bmv[b - r->bx][1], nc++;
                    /* lossless: the places of reference tt that hold the
                     * block exactly, found by its hash, are candidates (then
                     * the candidates alone are measured); a block no
                     * reference holds is searched whole in the nearest
                     * references, and in the farther ones without the grid
                     * (the wide search finds what pays there: a part that
                     * jumped far; the grid's near vectors seldom beat the
                     * nearer references') */
                    int xs = 0;
                    if (exact) {
                        int16_t hv[PNMF_LXM_CAP][2];
                        int nh = lxm && full ? pnmf_lxm_find(lxm, tt, src, y0, x0, PNMF_RES_MAX_MV,
                                                             qround(pv[0] * 4 / qs),
                                                             qround(pv[1] * 4 / qs), hv, PNMF_LXM_CAP)
                                             : 0;
                        if (nh < 0) lxm = NULL, nh = 0; /* no memory for an index: the searches alone */
                        /* a nearer reference predicts the block exactly and
                         * this one holds it nowhere: none of its vectors can
                         * do better */
                        if ((lxm || nomatch) && full && hit && !nh) continue;
                        /* a lossless coding under sub-pixel motion (camera
                         * footage, whose noise no farther reference
                         * repeats): the nearest references alone */
                        if (exact && r->subpel && !nh && tt >= PNMF_LX_SUBPEL_REFS) continue;
                        for (int k = 0; k < nh; k++) cand[nc][0] = (int16_t)(qs * hv[k][0]), cand[nc][1] = (int16_t)(qs * hv[k][1]), nc++;
                        xs = hit || nh ? 2 : (lxm || nomatch) && full && tt >= PNMF_LXM_FULL_REFS ? 3 : 1;
                    }
                    int ty, tx;
                    if (tt < nwide && !good && !wide[tt].ref) {
                        /* lossless: each reference's box means kept by the
                         * matcher, made once for the frames that take it */
                        int fresh = 1;
                        uint8_t *o = lxm ? pnmf_lxm_coarse(lxm, tt, (size_t)r4 * c4, &fresh) : NULL;
                        if (!o) o = cbuf + (size_t)(tt + 1) * r4 * c4, fresh = 1;
                        if (fresh) shrink4(ref[tt], r->cols, o, r4, c4);
                        wide[tt].ref = o;
                    }
                    int sad;
                    if (!r->subpel) {
                        sad = search_block(src, ref[tt], r->rows, r->cols, y0, y1, x0, x1,
                                                 (const int16_t (*)[2])cand, nc, pv[0], pv[1], lam_sad,
                                                 tt < PNMF_GRID_REFS ? PNMF_GRID_STEP : PNMF_GRID_STEP_FAR, tt < nwide && !good ? &wide[tt] : NULL, xs, src_still ? 0 : INFINITY, seen,
                                                 &ty, &tx);
                    } else { /* the whole-sample search on the candidates rounded, then the refinement */
                        int16_t icand[sizeof(cand) / sizeof(cand[0])][2];
                        for (int c = 0; c < nc; c++)
                            icand[c][0] = (int16_t)qround(cand[c][0]), icand[c][1] = (int16_t)qround(cand[c][1]);
                        int iy, ix;
                        sad = search_block(src, ref[tt], r->rows, r->cols, y0, y1, x0, x1, (const int16_t (*)[2])icand,
                                           nc, qround(pv[0]), qround(pv[1]), lam_sad,
                                           tt < PNMF_GRID_REFS ? PNMF_GRID_STEP : PNMF_GRID_STEP_FAR,
                                           tt < nwide && !good ? &wide[tt] : NULL, xs,
                                           src_still                                ? 0
                                           : prune && tt >= PNMF_SUBPEL_FULL_REFS ? PNMF_SUBPEL_REF_GO * bc
                                                                                  : INFINITY,
                                           seen, &iy, &ix);
                        ty = 4 * iy, tx = 4 * ix;
                    }
                    good |= sad <= PNMF_WIDE_POOR * (y1 - y0) * (x1 - x0);
                    hit |= !sad;
                    const double c = sad + lam_sad * vector_bits(r, &vs, &vk, tt, ty, tx, 0);
                    rcost[tt] = c, rvec[tt][0] = (int16_t)ty, rvec[tt][1] = (int16_t)tx;
                    if (c < bc) {
                        bc = c, dy = ty, dx = tx, t = tt, bsad = sad;
                        if (r->subpel) memcpy(qcand, cand, (size_t)nc * sizeof(cand[0])), nq = nc;
                    }
                }
                if (r->subpel && bc < 1e300) { /* the best reference's vector to quarter samples */
                    int pv[2];
                    pnmf_vec_pred(&vs, t, pv);
                    bsad = refine_qpel(src, ref[t], r->rows, r->cols, y0, y1, x0, x1, r->sharp,
                                       (const int16_t (*)[2])qcand, nq, pv[0], pv[1], lam_sad, dy / 4, dx / 4, exact,
                                       &dy, &dx);
                }
                /* window flags bit 17: the question's price for a block without a second hypothesis */
                bi0 = bihas ? rc_bi_step(NULL, &r->enc_bictx, bictx, -1, 0, 0, 0) : 0;
                if (bihas && bc < 1e300) { /* and a second hypothesis, kept for the trials after the predictions' */
                    uint8_t p1[PNMF_RES_BLOCK * PNMF_RES_BLOCK];
                    pnmf_residual_subpel(ref[t], r->rows, r->cols, y0, y1, x0, x1, dy * (4 / qs), dx * (4 / qs), r->sharp,
                                         p1);
                    const int sad1 = pred_sad(src, r->cols, y0, x0, y1 - y0, x1 - x0, p1);
                    const double cb = bi_search(r, src, ref, nref, y0, y1, x0, x1, t, dy, dx, p1, rcost,
                                                (const int16_t (*)[2])rvec, lam_sad, bictx, &bt2, &bv2y, &bv2x, bpred);
                    if (cb < 1e300 && cb < PNMF_BI_GO * (sad1 + lam_sad * bi0)) s_t = t, s_dy = dy, s_dx = dx;
                    else bt2 = -1;
                }
                sh_t = t, sh_dy = dy, sh_dx = dx;
                if (bc < 1e300) sh_cost = bsad + lam_sad * vector_bits(r, &vs, &vk, t, dy, dx, 0);
                if (!t && dy == pvy && dx == pvx) continue; /* the previous prediction, cheaper */
                Dr = ref[t];
                extra = lambda * (vector_bits(r, &vs, &vk, t, dy, dx, 0) + bi0);
            }
            int pdy = dy, pdx = dx; /* the prediction's displacement */
            const int pm_ = mode == PNMF_RES_SHIFTED ? shifted_pred(r, &pdy, &pdx) : em;
            uint8_t spb[PNMF_RES_BLOCK * PNMF_RES_BLOCK]; /* a shifted prediction made here, for its trials too */
            if (mode == PNMF_RES_SHIFTED && txcut) {
                if (!comp) {
                    pnmf_residual_predict(pm_, P, Pp, Dp, Dr, D, r->rows, r->cols, y0, y1, x0, x1, pdy, pdx, spb);
                    cpre = spb;
                }
                psad[mode] = satd8x8(src + (size_t)y0 * r->cols + x0, cpre, r->cols);
                if (psad[mode] < minsad) minsad = psad[mode];
            }
            /* lossless: a block the previous prediction copies exactly
             * costs only its mode's bits; levels (64 decisions, one at
             * least not zero) cost more: the uncoded trials alone */
            for (int coded = 0; coded < 2 - (exact && still); coded++) {
                const int byte = mode | (coded ? PNMF_RES_CODED : 0);
                /* the block's error and levels only add to what the mode
                 * and vector cost: past the best so far, it cannot win */
                const double lb = extra + lambda * rc_mode_step(&r->enc_modes, byte, left, above, prev, 0);
                if (lb >= bj) continue;
                if (exact && coded && xfound) continue; /* a prediction exact: levels only cost more */
                if (exact && coded && lc) { /* estimated here, priced after the loop */
                    double est = INFINITY, e2 = 0;
                    /* a whole block's prediction made by an earlier trial
                     * of the same price kind (as the motion prediction
                     * where the model is still, and the previous one):
                     * its levels, estimate and price are that trial's */
                    LxTrial *dn = &dt[ndt];
                    const int pk = pnmf_residual_is_intra(pm_), mk = full && pm_ != PNMF_RES_SPATIAL;
                    int same = -1, xe;
                    if (mk) {
                        pnmf_residual_predict(pm_, P, Pp, Dp, Dr, D, r->rows, r->cols, y0, y1, x0, x1, pdy, pdx, dn->pb);
                        for (int i = 0; i < ndt && same < 0; i++)
                            if (dt[i].same == -2 - pk && !memcmp(dt[i].pb, dn->pb, sizeof(dn->pb))) same = i;
                    }
                    if (same >= 0) {
                        memcpy(dn->lv, dt[same].lv, sizeof(dn->lv));
                        est = dt[same].est, xe = 1;
                    } else {
                        xe = lx_estimate(pm_, ltp, src, P, Pp, Dp, Dr, D, r->rows, r->cols, y0, y1, x0, x1, pdy, pdx,
                                         dn->lv, &est, mk ? dn->pb : NULL);
                    }
                    if (!xe) est = INFINITY;
                    if (xe < 0)
                        e2 = try_block(pm_, 1, ltp, step16, lambda, src, P, Pp, Dp, Dr, D, r->rows, r->cols, y0, y1,
                                       x0, x1, pdy, pdx, dt[ndt].lv, lc, kind, -1, &est, 0, 0, INFINITY, NULL);
                    if (est < INFINITY) {
                        LxTrial *d = &dt[ndt++];
                        d->lb = lb + e2, d->est = est, d->byte = byte, d->pm = pm_, d->dy = dy, d->dx = dx, d->t = t;
                        /* same: the earlier trial; -2 - the price kind where this
                         * one's estimate is its prediction's (matched by later ones) */
                        d->same = same >= 0 ? same : mk && xe > 0 ? -2 - pk : -1, d->priced = 0;
                        if (est < est_best) est_best = est;
                    }
                    continue;
                }
                int xe = -1; /* lossless with the fixed table's prices: the estimate is the price */
                double est = 0;
                if (exact && coded) {
                    int16_t lv[PNMF_RES_BLOCK * PNMF_RES_BLOCK];
                    xe = lx_estimate(pm_, ltp, src, P, Pp, Dp, Dr, D, r->rows, r->cols, y0, y1, x0, x1, pdy, pdx, lv,
                                     &est, NULL);
                }
                const double jj = xe == 0 ? 1e300
                                  : xe > 0 ? lb + lambda * est
                                           : lb + try_block(pm_, coded, ltp, step16, lambda, src, P, Pp, Dp, Dr, D,
                                                            r->rows, r->cols, y0, y1, x0, x1, pdy, pdx, NULL, lc, kind,
                                                            INFINITY, NULL, exact && !coded, lb, bj, cpre);
                if (jj < bj) bj = jj, best = byte, vy = dy, vx = dx, vt = t, vb = comp ? bt2 : -1, best8 = 0, bdir = 0, xfound |= !coded;
            }
            if (mode != PNMF_RES_SPATIAL && full && !exact &&
                (!txcut || psad[mode] <= PNMF_TX_TRIAL_RATIO * minsad + PNMF_TX_TRIAL_SLACK)) { /* intra too: each quarter from the ones before */
                const int byte = mode | PNMF_RES_CODED | PNMF_RES_TRANSFORM;
                const double lb = extra + lambda * rc_mode_step(&r->enc_modes, byte, left, above, prev, 0);
                const int tk = kind | pnmf_residual_is_intra(mode) << 1;
                const int dirs = r->enc_idir && mode >= PNMF_RES_INTRA_DC; /* the block codes its direction */
                if (dirs && !picked) intra_dir_pick(src, D, r->cols, y0, x0, dpred, tdir), picked = 1;
                const double fd = dirs ? lambda * intra_dir_bits(lc, tk, mode, 0, 0) : 0;
                const double f4 = fd + (r->enc_tx8 ? lambda * tx8_flag_bits(r, lc, j, b, tk, 0, 0) : 0);
                const double jj = lb + f4 >= bj ? lb + f4
                                                : lb + f4 + try_transform(pm_, qp, lambda, src, P, Pp, Dp, Dr, D,
                                                                          r->rows, r->cols, y0, x0, pdy, pdx, NULL, lc,
                                                                          kind, rdoq, cpre, lb + f4, bj);
                if (jj < bj) bj = jj, best = byte, vy = dy, vx = dx, vt = t, vb = comp ? bt2 : -1, best8 = 0, bdir = 0;
                if (r->enc_tx8) { /* format 9: or one 8x8 transform */
                    const double f8 = lb + fd + lambda * tx8_flag_bits(r, lc, j, b, tk, 1, 0);
                    const double j8 = f8 >= bj ? f8
                                               : f8 + try_transform8(pm_, qp, lambda, src, P, Pp, Dp, Dr, D, r->rows,
                                                                     r->cols, y0, x0, pdy, pdx, NULL, lc, kind, rdoq,
                                                                     bj - f8, cpre);
                    if (j8 < bj) bj = j8, best = byte, vy = dy, vx = dx, vt = t, vb = comp ? bt2 : -1, best8 = 1, bdir = 0;
                }
                for (int i = 0; dirs && i < PNMF_INTRA_TRY; i++) { /* format 9: a direction of its family */
                    int fm, k;
                    pnmf_intra_family(tdir[i], &fm, &k);
                    if (!tdir[i] || fm != mode) continue;
                    const double fdi = lb + lambda * intra_dir_bits(lc, tk, mode, tdir[i], 0);
                    for (int e8 = 0; e8 <= r->enc_tx8; e8++) {
                        const double fl = fdi + (r->enc_tx8 ? lambda * tx8_flag_bits(r, lc, j, b, tk, e8, 0) : 0);
                        const double jd = fl >= bj ? fl
                                          : fl + (e8 ? try_transform8(pm_, qp, lambda, src, P, Pp, Dp, Dr, D, r->rows,
                                                                      r->cols, y0, x0, pdy, pdx, NULL, lc, kind, rdoq,
                                                                      bj - fl, dpred[tdir[i]])
                                                     : try_transform(pm_, qp, lambda, src, P, Pp, Dp, Dr, D, r->rows,
                                                                     r->cols, y0, x0, pdy, pdx, NULL, lc, kind, rdoq,
                                                                     dpred[tdir[i]], fl, bj));
                        if (jd < bj) bj = jd, best = byte, vy = dy, vx = dx, vt = t, vb = comp ? bt2 : -1, best8 = e8, bdir = tdir[i];
                    }
                }
            }
        }
        for (int i = 0; i < ndt; i++) {
            LxTrial *d = &dt[i];
            if (d->est > est_best * PNMF_LX_TRIAL_PRUNE || d->lb >= bj || xfound) continue;
            if (d->same >= 0 && dt[d->same].priced) { /* the same levels and contexts: the same price */
                d->bits = dt[d->same].bits, d->priced = 1;
            } else {
                RcBin o = { .update = 0 }; /* stopped once it cannot win */
                d->priced = !rc_pixel_levels_fixed_upto(&o, lc, kind | pnmf_residual_is_intra(d->pm) << 1, y1 - y0,
                                                        x1 - x0, d->lv, INT16_MAX, d->lb, 0, lambda, bj);
                d->bits = o.bits;
            }
            const double jj = d->lb + lambda * d->bits;
            if (jj < bj) bj = jj, best = d->byte, vy = d->dy, vx = d->dx, vt = d->t, vb = -1, best8 = 0, bdir = 0, won = i;
        }
        PnmfPalBlock pal;
        if (palat) {
            const double jp = palette_try(r, palat, b, src, y0, y1, x0, x1, left, above, prev, lambda0, bj, &pal);
            if (jp < bj) bj = jp, best = PNMF_RES_PALETTE, vy = vx = vt = 0, vb = -1, best8 = 0;
        }
        modes[b] = (uint8_t)best;
        rc_mode_step(&r->enc_modes, best, left, above, prev, 1);
        const uint8_t *Dr = Dp;
        if ((best & 7) == PNMF_RES_SHIFTED) {
            uint8_t *nr = NULL;
            if (grow((void **)&r->mv, &r->mvcap, 2 * (r->nmv + 1), sizeof(int16_t)) < 0 ||
                !(nr = pnmf_realloc(r->mvref, r->mvcap / 2 + 1))) {
                pnmf_free(bmv), pnmf_free(cbuf), pnmf_free(lts), pnmf_free(palat), pnmf_free(bihas);
                return PNMF_ERR_NOMEM;
            }
            r->mvref = nr;
            r->mv[2 * r->nmv] = (int16_t)vy, r->mv[2 * r->nmv + 1] = (int16_t)vx;
            r->mvref[r->nmv] = (uint8_t)vt;
            if (r->enc_bi) { /* window flags bit 17: the second hypothesis, or none */
                uint8_t *nbi = pnmf_realloc(r->mvbi, r->mvcap / 2 + 1);
                if (nbi) r->mvbi = nbi;
                int16_t *nv2 = nbi ? pnmf_realloc(r->mv2, (r->mvcap + 2) * sizeof(int16_t)) : NULL;
                if (!nv2) {
                    pnmf_free(bmv), pnmf_free(cbuf), pnmf_free(lts), pnmf_free(palat), pnmf_free(bihas);
                    return PNMF_ERR_NOMEM;
                }
                r->mv2 = nv2;
                if (vb >= 0) vy2 = bv2y, vx2 = bv2x;
                r->mvbi[r->nmv] = (uint8_t)(vb + 1);
                r->mv2[2 * r->nmv] = (int16_t)vy2, r->mv2[2 * r->nmv + 1] = (int16_t)vx2;
                rc_bi_step(NULL, &r->enc_bictx, bictx, vb, vy2 - pnmf_bi_scale(vy, vt, vb < 0 ? vt : vb),
                           vx2 - pnmf_bi_scale(vx, vt, vb < 0 ? vt : vb), 1);
                if (bihas) bihas[b] = vb >= 0;
                if (vb + 1 - j > r->reach) r->reach = vb + 1 - j;
            }
            r->nmv++;
            vector_bits(r, &vs, &vk, vt, vy, vx, 1);
            pnmf_vec_push(&vs, vy, vx, vt, rc_vec_cand_index(&vk, vy, vx, vt) >= 0);
            Dr = ref[vt];
            if (vt + 1 - j > r->reach) r->reach = vt + 1 - j; /* D_{j-1-vt} before the window */
            bmv[b][0] = (int16_t)vy, bmv[b][1] = (int16_t)vx, bmv[b][2] = (int16_t)vt;
        } else {
            /* a displaced previous block moved as the pan: a motion the
             * next frame and the neighbours' searches try (not a vector of
             * the stream: no candidate) */
            bmv[b][0] = (int16_t)pvy, bmv[b][1] = (int16_t)pvx;
            bmv[b][2] = (int16_t)((best & 7) == PNMF_RES_PREVIOUS && (pvy || pvx) ? 0 : -1);
        }
        const size_t area = (size_t)(y1 - y0) * (x1 - x0); /* 64 for a transform block */
        int16_t *levs = NULL;
        if (best & PNMF_RES_CODED) {
            if (grow((void **)&r->lev, &r->cap, r->nlev + area, sizeof(int16_t)) < 0) {
                pnmf_free(bmv), pnmf_free(cbuf), pnmf_free(lts), pnmf_free(palat), pnmf_free(bihas);
                return PNMF_ERR_NOMEM;
            }
            levs = r->lev + r->nlev;
            r->nlev += area;
        }
        int em = (best & 7) == PNMF_RES_PREVIOUS ? pmode : best & 7;
        if ((best & 7) == PNMF_RES_SHIFTED) em = shifted_pred(r, &vy, &vx);
        if ((best & PNMF_RES_CODED) && (best & PNMF_RES_TRANSFORM) && r->enc_idir && (best & 7) >= PNMF_RES_INTRA_DC)
            intra_dir_bits(lc, kind | 2, best & 7, bdir, 1);
        if ((best & PNMF_RES_CODED) && (best & PNMF_RES_TRANSFORM) && r->enc_tx8)
            tx8_flag_bits(r, lc, j, b, kind | pnmf_residual_is_intra(best) << 1, best8, 1);
        r->tx8[(size_t)j * nb + b] = (uint8_t)best8;
        r->idir[(size_t)j * nb + b] = (uint8_t)bdir;
        const uint8_t *pre = bdir ? dpred[bdir] : vb >= 0 ? bpred : NULL; /* a direction's or a compound prediction */
        if (r->enc_lxn && (best & PNMF_RES_CODED) && !(best & PNMF_RES_TRANSFORM) && best != PNMF_RES_PALETTE &&
            lx_keep(r, j, b, em, pre, P, Pp, Dp, Dr, D, y0, y1, x0, x1, vy, vx, (size_t)(levs - r->lev)) < 0) {
            pnmf_free(bmv), pnmf_free(cbuf), pnmf_free(lts), pnmf_free(palat), pnmf_free(bihas);
            return PNMF_ERR_NOMEM;
        }
        if (best == PNMF_RES_PALETTE) {
            if (palette_commit(r, palat, b, &pal, y0, y1, x0, x1, D) < 0) {
                pnmf_free(bmv), pnmf_free(cbuf), pnmf_free(lts), pnmf_free(palat), pnmf_free(bihas);
                return PNMF_ERR_NOMEM;
            }
        } else if (best8)
            try_transform8(em, qp, lambda, src, P, Pp, Dp, Dr, D, r->rows, r->cols, y0, x0, vy, vx, levs, lc, kind,
                           rdoq, 1e300, pre);
        else if (best & PNMF_RES_TRANSFORM)
            try_transform(em, qp, lambda, src, P, Pp, Dp, Dr, D, r->rows, r->cols, y0, x0, vy, vx, levs, lc, kind, rdoq,
                          pre, 0, INFINITY);
        else if (won >= 0 && won < ndt && dt[won].byte == best) { /* its levels known: the block is the source */
            const int h = y1 - y0, w = x1 - x0;
            copy_source(D, src, r->cols, y0, y1, x0, x1);
            memcpy(levs, dt[won].lv, (size_t)h * w * sizeof(*levs));
            rc_pixel_levels_adapt(lc, kind | pnmf_residual_is_intra(em) << 1, h, w, levs);
        } else if (exact && !(best & PNMF_RES_CODED)) { /* lossless, uncoded: its prediction is the source */
            copy_source(D, src, r->cols, y0, y1, x0, x1);
        } else
            try_block(em, best & PNMF_RES_CODED, ltp, step16, lambda, src, P, Pp, Dp, Dr, D, r->rows, r->cols, y0, y1,
                      x0, x1, vy, vx, levs, lc, kind, INFINITY, NULL, 0, 0, INFINITY, pre);
    }
    pnmf_free(cbuf);
    pnmf_free(lts);
    pnmf_free(palat);
    pnmf_free(bihas);
    r->palstart[j + 1] = r->npal;
    frame_motions(r, bmv, nb);
    pnmf_free(r->enc_prev_mv);
    r->enc_prev_mv = bmv;
    r->start[j + 1] = r->nlev;
    r->mvstart[j + 1] = r->nmv;
    if (r->deblock) pnmf_deblock_frame(r, j, P, Pp, D);
    return 0;
}
