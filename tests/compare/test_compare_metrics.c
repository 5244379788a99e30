/* SPDX-License-Identifier: GPL-2.0-or-later */
/* PSNR-Y and SSIM-Y of pnmf-compare against straightforward computations
 * written from the definitions (tools/measure/metrics.h) on small synthetic
 * clips, and the exactness check of --lossless on gray and RGB frames. */
#include <stdint.h>
#include <stdlib.h>

#include "measure/metrics.h"
#include "test.h"

static uint32_t rng = 12345;
static int next_rand(void)
{
    rng = rng * 1664525u + 1013904223u;
    return (int)(rng >> 8);
}

/* A frame with edges, gradients and texture; its distorted copy adds noise
 * of the given amplitude and a brightness offset, clipped. */
static void make_pair(uint8_t *ref, uint8_t *dis, int w, int h, int t, int noise, int offset)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int v = (x * 7 + y * 3 + t * 11) % 256;
            if (((x + t) / 5 + y / 6) % 2) v = 255 - v / 2;
            if (x > w / 2 && y < h / 3) v = 40;
            ref[y * w + x] = (uint8_t)v;
            int d = v + offset + (noise ? next_rand() % (2 * noise + 1) - noise : 0);
            dis[y * w + x] = (uint8_t)(d < 0 ? 0 : d > 255 ? 255 : d);
        }
}

/* PSNR from the definition: MSE over every pixel of every frame. */
static double direct_psnr(uint8_t **ref, uint8_t **dis, int frames, int w, int h)
{
    double se = 0;
    for (int f = 0; f < frames; f++)
        for (int i = 0; i < w * h; i++) {
            const double e = (double)ref[f][i] - dis[f][i];
            se += e * e;
        }
    const double mse = se / ((double)frames * w * h);
    return mse == 0 ? 999 : 10 * log10(255.0 * 255.0 / mse);
}

/* SSIM of one window (x0, y0, ww x wh) as the formula reads: two-pass
 * means, unbiased (1/(n-1)) variances and covariance, C1/n and C2. */
static double direct_window(const uint8_t *a, const uint8_t *b, int w, int x0, int y0, int ww, int wh)
{
    const double n = (double)ww * wh;
    double ma = 0, mb = 0;
    for (int y = y0; y < y0 + wh; y++)
        for (int x = x0; x < x0 + ww; x++) {
            ma += a[y * w + x];
            mb += b[y * w + x];
        }
    ma /= n;
    mb /= n;
    double va = 0, vb = 0, cov = 0;
    for (int y = y0; y < y0 + wh; y++)
        for (int x = x0; x < x0 + ww; x++) {
            const double da = a[y * w + x] - ma, db = b[y * w + x] - mb;
            va += da * da;
            vb += db * db;
            cov += da * db;
        }
    va /= n - 1;
    vb /= n - 1;
    cov /= n - 1;
    const double c1 = (0.01 * 255) * (0.01 * 255) / n, c2 = (0.03 * 255) * (0.03 * 255);
    return (2 * ma * mb + c1) * (2 * cov + c2) / ((ma * ma + mb * mb + c1) * (va + vb + c2));
}

/* Frame SSIM: 8x8 windows with corners on the 4-pixel grid, wholly inside
 * the frame's largest multiple-of-4 part; one window for tiny frames. */
static double direct_ssim(const uint8_t *a, const uint8_t *b, int w, int h)
{
    if (w < 8 || h < 8) return direct_window(a, b, w, 0, 0, w, h);
    double s = 0;
    int n = 0;
    for (int y0 = 0; y0 + 8 <= h / 4 * 4; y0 += 4)
        for (int x0 = 0; x0 + 8 <= w / 4 * 4; x0 += 4) {
            s += direct_window(a, b, w, x0, y0, 8, 8);
            n++;
        }
    return s / n;
}

static void check_clip(int w, int h, int frames, int noise, int offset)
{
    uint8_t *ref[8], *dis[8];
    CmpScore sc;
    cmp_score_init(&sc);
    double ssim_sum = 0;
    for (int f = 0; f < frames; f++) {
        ref[f] = malloc((size_t)w * h);
        dis[f] = malloc((size_t)w * h);
        make_pair(ref[f], dis[f], w, h, f, noise * (f + 1), offset);
        CHECK(cmp_score_frame(&sc, ref[f], w, dis[f], w, w, h) == 0);
        ssim_sum += direct_ssim(ref[f], dis[f], w, h);
    }
    const double psnr = direct_psnr(ref, dis, frames, w, h);
    CHECK_MSG(fabs(cmp_score_psnr(&sc) - psnr) < 0.01, "%dx%d: PSNR %.6f vs %.6f", w, h,
              cmp_score_psnr(&sc), psnr);
    CHECK_MSG(fabs(cmp_score_ssim(&sc) - ssim_sum / frames) < 1e-9, "%dx%d: SSIM %.9f vs %.9f", w, h,
              cmp_score_ssim(&sc), ssim_sum / frames);
    CHECK(sc.frames == frames);
    /* the global PSNR is not the mean of per-frame PSNRs */
    if (frames > 1 && noise) {
        double mean = 0;
        for (int f = 0; f < frames; f++) mean += direct_psnr(&ref[f], &dis[f], 1, w, h);
        mean /= frames;
        CHECK_MSG(fabs(mean - psnr) > 0.01, "frames too alike to tell the PSNRs apart");
    }
    for (int f = 0; f < frames; f++) {
        free(ref[f]);
        free(dis[f]);
    }
}

/* A known answer: FFmpeg 5.1's ssim filter prints "SSIM Y:0.915423" for this
 * pair (written as PGM, `ffmpeg -i b.pgm -i a.pgm -lavfi ssim -f null -`).
 * The variants of the definition differ here from the fourth decimal on
 * (population moments 0.915975, C1 without the /64 0.915849). */
static void test_ffmpeg_value(void)
{
    const int w = 64, h = 48;
    uint8_t *a = malloc((size_t)w * h), *b = malloc((size_t)w * h);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const int v = ((x * x + 3 * y * y / 4 + (x / 8) * 40) & 255) / 5;
            int d = v * 4 / 5 + (x * 7 + y * 13) % 9 - 4 + ((x / 16 + y / 12) % 2 ? 6 : -3);
            a[y * w + x] = (uint8_t)v;
            b[y * w + x] = (uint8_t)(d < 0 ? 0 : d > 255 ? 255 : d);
        }
    const double s = cmp_ssim_plane(b, w, a, w, w, h);
    CHECK_MSG(fabs(s - 0.915423) < 1e-6, "SSIM %.7f, FFmpeg 0.915423", s);
    free(a);
    free(b);
}

/* The lossless check: b is a (32x24) with pixel 100 off by 16. Gray
 * frames count the differing pixels and the largest difference; an RGB
 * frame is exact only when all three samples equal the source, and is
 * scored on its BT.601 luma. */
static void test_lossless_check(const uint8_t *a, const uint8_t *b)
{
    int m = -1;
    CHECK(cmp_diff_plane(a, 32, a, 32, 32, 24, &m) == 0 && m == 0);
    CHECK(cmp_diff_plane(a, 32, b, 32, 32, 24, &m) == 1 && m == 16);
    CmpScore sc;
    cmp_score_init(&sc);
    CHECK(cmp_score_frame(&sc, a, 32, a, 32, 32, 24) == 0 && cmp_score_frame(&sc, a, 32, b, 32, 32, 24) == 0);
    CHECK_MSG(sc.diff_pixels == 1 && sc.max_diff == 16, "gray: %llu pixels differ by up to %d",
              (unsigned long long)sc.diff_pixels, sc.max_diff);

    /* BGRA (offsets 2, 1, 0 of 4) with R = G = B = the source: exact */
    uint8_t rgb[32 * 24 * 4];
    for (int i = 0; i < 32 * 24; i++) rgb[4 * i] = rgb[4 * i + 1] = rgb[4 * i + 2] = a[i], rgb[4 * i + 3] = 255;
    cmp_score_init(&sc);
    CHECK(cmp_score_rgb_frame(&sc, a, 32, rgb, 32 * 4, 4, 2, 1, 0, 32, 24) == 0);
    CHECK(sc.diff_pixels == 0 && sc.max_diff == 0 && cmp_score_psnr(&sc) == 999 && sc.frames == 1);
    /* a tint the luma hides: R + 1, B - 5 keeps 0.299 R + 0.587 G + 0.114 B
     * within rounding of G, yet the pixel is not the source's */
    int i = 0;
    while (a[i] < 8 || a[i] > 240) i++;
    rgb[4 * i + 2] = (uint8_t)(a[i] + 1);
    rgb[4 * i] = (uint8_t)(a[i] - 5);
    const int l = (299 * (a[i] + 1) + 587 * a[i] + 114 * (a[i] - 5) + 500) / 1000;
    CHECK(l == a[i]);
    cmp_score_init(&sc);
    CHECK(cmp_score_rgb_frame(&sc, a, 32, rgb, 32 * 4, 4, 2, 1, 0, 32, 24) == 0);
    CHECK_MSG(sc.diff_pixels == 1 && sc.max_diff == 5 && sc.sse == 0, "tint: %llu pixels, max %d, sse %g",
              (unsigned long long)sc.diff_pixels, sc.max_diff, sc.sse);
    /* a gray pixel off by 16 in all three: one pixel, counted once, SSE 256 */
    rgb[4 * i] = rgb[4 * i + 2] = a[i];
    const int j = 100;
    rgb[4 * j] = rgb[4 * j + 1] = rgb[4 * j + 2] = b[j];
    cmp_score_init(&sc);
    CHECK(cmp_score_rgb_frame(&sc, a, 32, rgb, 32 * 4, 4, 2, 1, 0, 32, 24) == 0);
    CHECK_MSG(sc.diff_pixels == 1 && sc.max_diff == 16 && sc.sse == 256, "gray in RGB: %llu pixels, max %d, sse %g",
              (unsigned long long)sc.diff_pixels, sc.max_diff, sc.sse);
}

int main(void)
{
    test_ffmpeg_value();
    check_clip(37, 29, 5, 6, 0);   /* odd size: pixels past the 4-grid are outside SSIM windows */
    check_clip(64, 48, 4, 20, -9); /* heavy noise and an offset */
    check_clip(160, 120, 3, 2, 3);
    check_clip(7, 5, 2, 10, 0);    /* smaller than a window */
    check_clip(8, 8, 2, 3, 1);     /* exactly one window */

    /* identical clips: PSNR 999 (the convention), SSIM 1 */
    uint8_t a[32 * 24], b[32 * 24];
    make_pair(a, b, 32, 24, 0, 0, 0);
    CmpScore sc;
    cmp_score_init(&sc);
    cmp_score_frame(&sc, a, 32, b, 32, 32, 24);
    CHECK(cmp_score_psnr(&sc) == 999);
    CHECK_NEAR(cmp_score_ssim(&sc), 1.0, 1e-12);
    /* one known error: a single pixel off by 16 in 32x24 */
    b[100] = (uint8_t)(b[100] + (b[100] > 128 ? -16 : 16));
    CHECK(cmp_sse_plane(a, 32, b, 32, 32, 24) == 256);
    CHECK_NEAR(cmp_psnr(256, 32 * 24), 10 * log10(255.0 * 255.0 * 32 * 24 / 256), 1e-12);
    /* strides are honoured: the same frame inside a wider buffer */
    uint8_t wa[40 * 24], wb[40 * 24];
    for (int y = 0; y < 24; y++)
        for (int x = 0; x < 40; x++) {
            wa[y * 40 + x] = x < 32 ? a[y * 32 + x] : 0;
            wb[y * 40 + x] = x < 32 ? b[y * 32 + x] : 255;
        }
    CHECK(cmp_sse_plane(wa, 40, wb, 40, 32, 24) == 256);
    CHECK_NEAR(cmp_ssim_plane(wa, 40, wb, 40, 32, 24), cmp_ssim_plane(a, 32, b, 32, 32, 24), 1e-12);
    /* SSIM is symmetric and below 1 for a changed frame */
    CHECK_NEAR(cmp_ssim_plane(a, 32, b, 32, 32, 24), cmp_ssim_plane(b, 32, a, 32, 32, 24), 1e-12);
    CHECK(cmp_ssim_plane(a, 32, b, 32, 32, 24) < 1);
    test_lossless_check(a, b);
    return test_summary("test_compare_metrics");
}
