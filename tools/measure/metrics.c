/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * PSNR-Y and SSIM-Y (metrics.h). SSIM keeps two rows of 4x4 block
 * sums (x, y, x^2, y^2, xy) and adds 2x2 neighbouring blocks into each
 * 8x8 window, so every pixel is read once.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "measure/metrics.h"

/* Wang et al.'s constants for 8-bit samples */
#define SSIM_C1 (0.01 * 255 * 0.01 * 255)
#define SSIM_C2 (0.03 * 255 * 0.03 * 255)

uint64_t cmp_sse_plane(const uint8_t *a, ptrdiff_t astride, const uint8_t *b, ptrdiff_t bstride,
                       int w, int h)
{
    uint64_t sse = 0;
    for (int y = 0; y < h; y++, a += astride, b += bstride) {
        uint32_t row = 0; /* at most 65535 * 255^2 < 2^32 per 65535 pixels */
        for (int x = 0; x < w; x++) {
            const int d = a[x] - b[x];
            row += (uint32_t)(d * d);
            if ((x & 0xffff) == 0xffff) {
                sse += row;
                row = 0;
            }
        }
        sse += row;
    }
    return sse;
}

uint64_t cmp_diff_plane(const uint8_t *a, ptrdiff_t astride, const uint8_t *b, ptrdiff_t bstride,
                        int w, int h, int *max_diff)
{
    uint64_t n = 0;
    int m = 0;
    for (int y = 0; y < h; y++, a += astride, b += bstride)
        for (int x = 0; x < w; x++) {
            const int d = a[x] > b[x] ? a[x] - b[x] : b[x] - a[x];
            n += d != 0;
            if (d > m) m = d;
        }
    *max_diff = m;
    return n;
}

double cmp_psnr(double sse, double npixels)
{
    if (sse <= 0 || npixels <= 0) return 999.0;
    return 10.0 * log10(255.0 * 255.0 * npixels / sse);
}

/* SSIM of one window of n pixels from its sums (x264's and FFmpeg's form:
 * multiplied through by n and n - 1, so that the structure term uses the
 * unbiased moments with C2 and the luminance term C1 / n; see the header). */
static double ssim_window(double n, double sa, double sb, double saa, double sbb, double sab)
{
    const double c1 = SSIM_C1 * n, c2 = SSIM_C2 * n * (n - 1);
    if (n < 2) return (2 * sa * sb + c1) / (sa * sa + sb * sb + c1); /* one pixel: no structure */
    const double vars = n * (saa + sbb) - sa * sa - sb * sb, covar = n * sab - sa * sb;
    return (2 * sa * sb + c1) * (2 * covar + c2) / ((sa * sa + sb * sb + c1) * (vars + c2));
}

typedef struct BlockSums {
    uint32_t sa, sb, saa, sbb, sab;
} BlockSums;

static void block_row(const uint8_t *a, ptrdiff_t astride, const uint8_t *b, ptrdiff_t bstride,
                      int bw, BlockSums *out)
{
    for (int bx = 0; bx < bw; bx++) {
        BlockSums s = { 0, 0, 0, 0, 0 };
        for (int y = 0; y < 4; y++) {
            const uint8_t *pa = a + y * astride + 4 * bx, *pb = b + y * bstride + 4 * bx;
            for (int x = 0; x < 4; x++) {
                const uint32_t u = pa[x], v = pb[x];
                s.sa += u;
                s.sb += v;
                s.saa += u * u;
                s.sbb += v * v;
                s.sab += u * v;
            }
        }
        out[bx] = s;
    }
}

double cmp_ssim_plane(const uint8_t *a, ptrdiff_t astride, const uint8_t *b, ptrdiff_t bstride,
                      int w, int h)
{
    if (w < 8 || h < 8) {
        double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                const double u = a[y * astride + x], v = b[y * bstride + x];
                sa += u;
                sb += v;
                saa += u * u;
                sbb += v * v;
                sab += u * v;
            }
        return ssim_window((double)w * h, sa, sb, saa, sbb, sab);
    }
    const int bw = w / 4, bh = h / 4;
    BlockSums *rows = malloc(2 * (size_t)bw * sizeof(*rows));
    if (!rows) return NAN;
    BlockSums *prev = rows, *cur = rows + bw;
    double sum = 0;
    block_row(a, astride, b, bstride, bw, prev);
    for (int by = 1; by < bh; by++) {
        block_row(a + 4 * by * astride, astride, b + 4 * by * bstride, bstride, bw, cur);
        for (int bx = 0; bx < bw - 1; bx++) {
            const BlockSums *p = prev + bx, *c = cur + bx;
            sum += ssim_window(64, p[0].sa + p[1].sa + c[0].sa + c[1].sa,
                               p[0].sb + p[1].sb + c[0].sb + c[1].sb,
                               (double)p[0].saa + p[1].saa + c[0].saa + c[1].saa,
                               (double)p[0].sbb + p[1].sbb + c[0].sbb + c[1].sbb,
                               (double)p[0].sab + p[1].sab + c[0].sab + c[1].sab);
        }
        BlockSums *t = prev;
        prev = cur;
        cur = t;
    }
    free(rows);
    return sum / ((double)(bw - 1) * (bh - 1));
}

void cmp_score_init(CmpScore *s)
{
    memset(s, 0, sizeof(*s));
}

int cmp_score_frame(CmpScore *s, const uint8_t *a, ptrdiff_t astride, const uint8_t *b,
                    ptrdiff_t bstride, int w, int h)
{
    const double ssim = cmp_ssim_plane(a, astride, b, bstride, w, h);
    if (isnan(ssim)) return -1;
    int m;
    s->sse += (double)cmp_sse_plane(a, astride, b, bstride, w, h);
    s->diff_pixels += cmp_diff_plane(a, astride, b, bstride, w, h, &m);
    if (m > s->max_diff) s->max_diff = m;
    s->npixels += (double)w * h;
    s->ssim_sum += ssim;
    s->frames++;
    return 0;
}

int cmp_score_rgb_frame(CmpScore *s, const uint8_t *a, ptrdiff_t astride, const uint8_t *rgb,
                        ptrdiff_t rstride, int step, int ro, int go, int bo, int w, int h)
{
    uint8_t *luma = malloc((size_t)w * h);
    if (!luma) return -1;
    uint64_t coloured = 0; /* luma exact, yet not gray */
    int m = 0;
    for (int y = 0; y < h; y++) {
        const uint8_t *p = rgb + y * rstride, *src = a + y * astride;
        for (int x = 0; x < w; x++, p += step) {
            const int r = p[ro], g = p[go], b = p[bo], v = src[x];
            const int l = (299 * r + 587 * g + 114 * b + 500) / 1000;
            luma[(size_t)y * w + x] = (uint8_t)l;
            const int dr = r > v ? r - v : v - r, dg = g > v ? g - v : v - g, db = b > v ? b - v : v - b;
            const int d = dr > dg ? (dr > db ? dr : db) : (dg > db ? dg : db);
            if (d > m) m = d;
            coloured += d != 0 && l == v;
        }
    }
    const int ret = cmp_score_frame(s, a, astride, luma, w, w, h);
    free(luma);
    if (ret < 0) return ret;
    s->diff_pixels += coloured;
    if (m > s->max_diff) s->max_diff = m;
    return 0;
}

double cmp_score_psnr(const CmpScore *s)
{
    return cmp_psnr(s->sse, s->npixels);
}

double cmp_score_ssim(const CmpScore *s)
{
    return s->frames ? s->ssim_sum / s->frames : 0;
}
