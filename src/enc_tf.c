/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The encoder's motion-compensated temporal filter of the source
 * (enc_tf.h): a noise estimate, a block match per neighbour, and a
 * per-pixel weighted average whose weights fall with the match error
 * relative to the noise.
 */
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
#include <emmintrin.h>
#endif

#include "enc_tf.h"
#include "internal.h"
#include "pnmf/common.h"
#include "residual.h"
#include "tuning.h"

/* The sum of absolute differences of an h x w area of a (stride s) and
 * b (the same stride). */
static uint32_t area_sad(const uint8_t *a, const uint8_t *b, ptrdiff_t s, int h, int w)
{
    uint32_t sad = 0;
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
    if (w == 16) {
        __m128i acc = _mm_setzero_si128();
        for (int y = 0; y < h; y++)
            acc = _mm_add_epi64(acc, _mm_sad_epu8(_mm_loadu_si128((const __m128i *)(a + y * s)),
                                                  _mm_loadu_si128((const __m128i *)(b + y * s))));
        return (uint32_t)_mm_cvtsi128_si32(acc) + (uint32_t)_mm_cvtsi128_si32(_mm_unpackhi_epi64(acc, acc));
    }
#endif
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) sad += (uint32_t)abs(a[y * s + x] - b[y * s + x]);
    return sad;
}

/* The vector (*dy, *dx on entry: the search's centre) of the h x w block
 * at (y0, x0) of cur in f: the smallest sum of absolute differences over
 * the block and 4 samples around it, in the frame, within PNMF_TF_RANGE
 * of the centre; ties keep the vector nearer the centre. */
static void block_match(const uint8_t *cur, const uint8_t *f, int rows, int cols, int y0, int x0, int h, int w,
                        int *pdy, int *pdx)
{
    const int R = PNMF_TF_RANGE;
    const int sy0 = y0 - 4 < 0 ? 0 : y0 - 4, sx0 = x0 - 4 < 0 ? 0 : x0 - 4;
    const int sy1 = y0 + h + 4 > rows ? rows : y0 + h + 4, sx1 = x0 + w + 4 > cols ? cols : x0 + w + 4;
    const int cy = *pdy, cx = *pdx;
    int bdy = cy, bdx = cx;
    uint32_t best = area_sad(cur + (size_t)sy0 * cols + sx0, f + (ptrdiff_t)(sy0 + cy) * cols + sx0 + cx, cols,
                             sy1 - sy0, sx1 - sx0);
    for (int dy = cy - R; dy <= cy + R && best; dy++) {
        if (sy0 + dy < 0 || sy1 + dy > rows) continue;
        for (int dx = cx - R; dx <= cx + R; dx++) {
            if (sx0 + dx < 0 || sx1 + dx > cols || (dy == cy && dx == cx)) continue;
            const uint32_t sad = area_sad(cur + (size_t)sy0 * cols + sx0, f + (ptrdiff_t)(sy0 + dy) * cols + sx0 + dx,
                                          cols, sy1 - sy0, sx1 - sx0);
            const int d0 = abs(dy - cy) + abs(dx - cx), d1 = abs(bdy - cy) + abs(bdx - cx);
            if (sad < best || (sad == best && d0 < d1)) best = sad, bdy = dy, bdx = dx;
        }
    }
    *pdy = bdy, *pdx = bdx;
}

double pnmf_tf_noise(const uint8_t *cur, const uint8_t *next, int rows, int cols)
{
    /* per whole 8x8 block, its squared error at its vector in 1/64: a
     * histogram of the mean squared error in 1/8 of a squared gray level */
    enum { BINS = 1024 };
    uint32_t hist[BINS];
    memset(hist, 0, sizeof(hist));
    uint32_t nblocks = 0;
    for (int y0 = 0; y0 + 8 <= rows; y0 += 8)
        for (int x0 = 0; x0 + 8 <= cols; x0 += 8) {
            int dy = 0, dx = 0;
            block_match(cur, next, rows, cols, y0, x0, 8, 8, &dy, &dx);
            uint32_t sse = 0;
            for (int y = 0; y < 8; y++)
                for (int x = 0; x < 8; x++) {
                    const int d = cur[(size_t)(y0 + y) * cols + x0 + x] - next[(size_t)(y0 + y + dy) * cols + x0 + x + dx];
                    sse += (uint32_t)(d * d);
                }
            hist[sse / 8 < BINS ? sse / 8 : BINS - 1]++;
            nblocks++;
        }
    if (!nblocks) return 0;
    /* the quantile: the blocks that match best are flat and still, their
     * error two frames' noise; a rendered frame's still blocks match exactly */
    const uint32_t want = nblocks / PNMF_TF_NOISE_QUANT;
    uint32_t seen = 0;
    int b = 0;
    while (b < BINS - 1 && seen + hist[b] <= want) seen += hist[b++];
    return (b + 0.5) / 8 / 2;
}

/* The sample of f (rows x cols) at (Y, X) in quarter samples, in 1/16
 * gray level: bilinear between the four whole samples around it, each
 * clamped to the frame (the codec's sub-pixel prediction, without its
 * rounding). */
static int qsample(const uint8_t *f, int rows, int cols, int Y, int X)
{
    const int fy = Y & 3, fx = X & 3, iy = Y >> 2, ix = X >> 2;
    const int y0 = iy < 0 ? 0 : iy >= rows ? rows - 1 : iy, y1 = iy + 1 < 0 ? 0 : iy + 1 >= rows ? rows - 1 : iy + 1;
    const int x0 = ix < 0 ? 0 : ix >= cols ? cols - 1 : ix, x1 = ix + 1 < 0 ? 0 : ix + 1 >= cols ? cols - 1 : ix + 1;
    return (4 - fy) * ((4 - fx) * f[(size_t)y0 * cols + x0] + fx * f[(size_t)y0 * cols + x1]) +
           fy * ((4 - fx) * f[(size_t)y1 * cols + x0] + fx * f[(size_t)y1 * cols + x1]);
}

/* The same by the 6-tap filter (residual.h, pnmf_sharp_taps). */
static int qsample6(const uint8_t *f, int rows, int cols, int Y, int X)
{
    const int16_t(*K)[6] = pnmf_sharp_taps;
    const int fy = Y & 3, fx = X & 3, iy = Y >> 2, ix = X >> 2;
    int s = 128;
    for (int i = 0; i < 6; i++) {
        const int u = iy - 2 + i < 0 ? 0 : iy - 2 + i >= rows ? rows - 1 : iy - 2 + i;
        int h = 0;
        for (int k = 0; k < 6; k++) {
            const int v = ix - 2 + k < 0 ? 0 : ix - 2 + k >= cols ? cols - 1 : ix - 2 + k;
            h += K[fx][k] * f[(size_t)u * cols + v];
        }
        s += K[fy][i] * h;
    }
    return s < 0 ? 0 : s >> 8 > 255 * 16 ? 255 * 16 : s >> 8;
}

int pnmf_tf_sample(const uint8_t *f, int rows, int cols, int Y, int X, int sharp)
{
    return sharp ? qsample6(f, rows, cols, Y, X) : qsample(f, rows, cols, Y, X);
}

/* The squared error (in 1/256) of the h x w block at (y0, x0) of cur
 * against f displaced by the quarter-sample vector (qy, qx). */
static uint64_t q_sse(const uint8_t *cur, const uint8_t *f, int rows, int cols, int y0, int x0, int h, int w, int qy,
                      int qx, int sharp)
{
    uint64_t s = 0;
    const int fy = qy & 3, fx = qx & 3, oy = qy >> 2, ox = qx >> 2;
    if (!sharp && y0 + oy >= 0 && y0 + h + oy < rows && x0 + ox >= 0 && x0 + w + ox < cols) {
        /* every sample qsample() reads inside the frame: its sums without the clamps */
        for (int y = 0; y < h; y++) {
            const uint8_t *c = cur + (size_t)(y0 + y) * cols + x0, *a = f + (size_t)(y0 + y + oy) * cols + x0 + ox;
            const uint8_t *b = a + cols;
            for (int x = 0; x < w; x++) {
                const int d = 16 * c[x] - ((4 - fy) * ((4 - fx) * a[x] + fx * a[x + 1]) +
                                           fy * ((4 - fx) * b[x] + fx * b[x + 1]));
                s += (uint64_t)(d * d);
            }
        }
        return s;
    }
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const int d = 16 * cur[(size_t)(y0 + y) * cols + x0 + x] -
                          pnmf_tf_sample(f, rows, cols, 4 * (y0 + y) + qy, 4 * (x0 + x) + qx, sharp);
            s += (uint64_t)(d * d);
        }
    return s;
}

int pnmf_tf_filter(uint8_t *out, const uint8_t *cur, const uint8_t *const *nb, int nnb, int rows, int cols,
                   double noise, double strength, int sharp)
{
    const size_t n = (size_t)rows * cols;
    const double t = 2 * noise * strength;
    double half6 = 0;
    for (int k = 0; k < 6; k++) half6 += pnmf_sharp_taps[2][k] * pnmf_sharp_taps[2][k] / 4096.0;
    if (nnb < 1 || !(t > 0)) {
        if (out != cur) memmove(out, cur, n);
        return 0;
    }
    const int bx = (cols + 7) / 8, by = (rows + 7) / 8;
    int *vec = pnmf_calloc((size_t)bx * by * 2, sizeof(int));      /* per block: dy, dx in the last neighbour */
    uint32_t *acc = pnmf_malloc_array(n, sizeof(uint32_t));          /* weighted sums in 1/16, weights in 1/1024 */
    uint32_t *norm = pnmf_malloc_array(n, sizeof(uint32_t));
    if (!vec || !acc || !norm) {
        pnmf_free(vec), pnmf_free(acc), pnmf_free(norm);
        return PNMF_ERR_NOMEM;
    }
    for (size_t i = 0; i < n; i++) acc[i] = 16u * 1024u * cur[i], norm[i] = 1024;
    for (int k = 0; k < nnb; k++) {
        const uint8_t *f = nb[k];
        for (int b = 0; b < bx * by; b++) {
            const int y0 = b / bx * 8, x0 = b % bx * 8;
            const int h = rows - y0 < 8 ? rows - y0 : 8, w = cols - x0 < 8 ? cols - x0 : 8;
            int bdy = vec[2 * b], bdx = vec[2 * b + 1];
            block_match(cur, f, rows, cols, y0, x0, h, w, &bdy, &bdx);
            vec[2 * b] = bdy, vec[2 * b + 1] = bdx;
            /* the half-sample vector around the whole one: the smallest
             * squared error over the block, each vector's plus the noise
             * variance its interpolation takes out of the neighbour (an
             * average of two or four samples halves or quarters it), so
             * that a half sample wins by the alignment, not by smoothing
             * the neighbour's noise */
            int qy = 4 * bdy, qx = 4 * bdx;
            if (PNMF_TF_HALF) {
                const int cy = qy, cx = qx;
                double best = (double)q_sse(cur, f, rows, cols, y0, x0, h, w, cy, cx, sharp);
                /* the share of the noise variance a half sample keeps: 1/2
                 * bilinear, the squared taps' sum over 64^2 the 6-tap */
                const double half = sharp ? half6 : 0.5;
                for (int u = -2; u <= 2; u += 2)
                    for (int v = -2; v <= 2; v += 2) {
                        if (!u && !v) continue;
                        /* the share of the noise variance the interpolation keeps */
                        const double keep = (u ? half : 1) * (v ? half : 1);
                        const double cost = (double)q_sse(cur, f, rows, cols, y0, x0, h, w, cy + u, cx + v, sharp) +
                                          (double)h * w * 256 * noise * (1 - keep);
                        if (cost < best) best = cost, qy = cy + u, qx = cx + v;
                    }
            }
            /* the aligned neighbour over the block and one sample around it
             * (in 1/16), and the squared differences (in 1/256) where cur
             * has the sample (-1: none) */
            int p[10][10], e2[10][10];
            uint64_t bsum = 0;
            const int fy = qy & 3, fx = qx & 3, oy = qy >> 2, ox = qx >> 2;
            if (!sharp && y0 >= 1 && y0 + h < rows && x0 >= 1 && x0 + w < cols && y0 - 1 + oy >= 0 &&
                y0 + h + oy + 1 < rows && x0 - 1 + ox >= 0 && x0 + w + ox + 1 < cols) {
                /* the area and every sample qsample() reads of it inside the frame: its sums without the clamps */
                for (int y = -1; y <= h; y++) {
                    const uint8_t *c = cur + (size_t)(y0 + y) * cols + x0;
                    const uint8_t *ra = f + (size_t)(y0 + y + oy) * cols + x0 + ox, *rb = ra + cols;
                    for (int x = -1; x <= w; x++) {
                        const int P =
                            (4 - fy) * ((4 - fx) * ra[x] + fx * ra[x + 1]) + fy * ((4 - fx) * rb[x] + fx * rb[x + 1]);
                        const int d = 16 * c[x] - P;
                        p[y + 1][x + 1] = P, e2[y + 1][x + 1] = d * d;
                    }
                }
                for (int y = 0; y < h; y++)
                    for (int x = 0; x < w; x++) bsum += (uint64_t)e2[y + 1][x + 1];
            } else {
                for (int y = -1; y <= h; y++)
                    for (int x = -1; x <= w; x++) {
                        const int py = y0 + y, px = x0 + x;
                        int v = -1;
                        if (py >= 0 && py < rows && px >= 0 && px < cols) {
                            const int P = pnmf_tf_sample(f, rows, cols, 4 * py + qy, 4 * px + qx, sharp);
                            const int d = 16 * cur[(size_t)py * cols + px] - P;
                            p[y + 1][x + 1] = P;
                            v = d * d;
                        }
                        e2[y + 1][x + 1] = v;
                        if (y >= 0 && y < h && x >= 0 && x < w) bsum += (uint64_t)v;
                    }
            }
            const double blk = (double)bsum / (h * w) / 256;
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++) {
                    int s = 0, c = 0;
                    for (int u = 0; u < 3; u++)
                        for (int v = 0; v < 3; v++)
                            if (e2[y + u][x + v] >= 0) s += e2[y + u][x + v], c++;
                    const double d = ((double)s / c / 256 + blk) / 2, r = d / t;
                    const uint32_t wq = (uint32_t)(1024.0 / (1 + r * r) + 0.5);
                    const size_t i = (size_t)(y0 + y) * cols + x0 + x;
                    acc[i] += wq * (uint32_t)p[y + 1][x + 1];
                    norm[i] += wq;
                }
        }
    }
    for (size_t i = 0; i < n; i++) out[i] = (uint8_t)((acc[i] + 8 * norm[i]) / (16 * norm[i]));
    pnmf_free(vec), pnmf_free(acc), pnmf_free(norm);
    return 0;
}
