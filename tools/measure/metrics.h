/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Luma quality metrics of pnmf-compare and pnmf-bench (pure, no I/O).
 *
 * PSNR-Y is global: 10 log10(255^2 / MSE) with the MSE taken over every
 * pixel of every frame (not a mean of per-frame PSNRs); 999 when the clips
 * are identical.
 *
 * SSIM-Y is the SSIM of x264 and of FFmpeg's ssim filter (its "SSIM Y"
 * value, to the printed digits): Z. Wang, A. C. Bovik, H. R. Sheikh,
 * E. P. Simoncelli, "Image quality assessment: from error visibility to
 * structural similarity", IEEE TIP 13(4), 2004, eq. 13, on unweighted 8x8
 * windows whose corners lie on a 4-pixel grid, with the means mu, the
 * unbiased (1/63) variances sigma^2 and covariance sigma_xy of each window:
 *   SSIM = (2 mu_x mu_y + C1/64) (2 sigma_xy + C2)
 *          / ((mu_x^2 + mu_y^2 + C1/64) (sigma_x^2 + sigma_y^2 + C2)),
 *   C1 = (0.01 * 255)^2, C2 = (0.03 * 255)^2
 * (the C1/64 is x264's, kept so the figures match FFmpeg's). A frame's
 * SSIM is the mean over its (floor(w/4) - 1) x (floor(h/4) - 1) windows
 * (pixels past the last multiple of 4 are in none); a frame smaller than
 * 8x8 is one window of all its n pixels (C1/n, moments over n - 1).
 * SSIM-Y of a clip is the mean of its frames' SSIM.
 */
#ifndef PNMF_TOOLS_MEASURE_METRICS_H
#define PNMF_TOOLS_MEASURE_METRICS_H

#include <stddef.h>
#include <stdint.h>

/* Sum of squared differences of two w x h gray planes. */
uint64_t cmp_sse_plane(const uint8_t *a, ptrdiff_t astride, const uint8_t *b, ptrdiff_t bstride,
                       int w, int h);

/* Pixels where two w x h gray planes differ; the largest absolute
 * difference goes to *max_diff (0 when equal). */
uint64_t cmp_diff_plane(const uint8_t *a, ptrdiff_t astride, const uint8_t *b, ptrdiff_t bstride,
                        int w, int h, int *max_diff);

/* PSNR in dB of a total squared error over npixels 8-bit samples (999 when sse == 0). */
double cmp_psnr(double sse, double npixels);

/* SSIM of two w x h gray planes, as above (-1..1). NaN when out of memory. */
double cmp_ssim_plane(const uint8_t *a, ptrdiff_t astride, const uint8_t *b, ptrdiff_t bstride,
                      int w, int h);

/* Accumulates a clip's scores frame by frame. */
typedef struct CmpScore {
    int frames;
    double npixels;
    double sse;
    double ssim_sum;
    uint64_t diff_pixels; /* pixels not decoded exactly (the lossless check) */
    int max_diff;         /* the largest difference of a sample from its source */
} CmpScore;

void cmp_score_init(CmpScore *s);
/* Score one decoded frame b against its source a; 0, or -1 out of memory. */
int cmp_score_frame(CmpScore *s, const uint8_t *a, ptrdiff_t astride, const uint8_t *b,
                    ptrdiff_t bstride, int w, int h);
/* Score one decoded frame of packed 8-bit RGB (step bytes a pixel, the
 * red, green and blue samples at offsets ro, go, bo) against its gray
 * source a: scored on its BT.601 full-range luma (0.299 R + 0.587 G +
 * 0.114 B, rounded), as pnmf reads RGB input; a pixel counts as differing
 * unless all three samples equal the source's. 0, or -1 out of memory. */
int cmp_score_rgb_frame(CmpScore *s, const uint8_t *a, ptrdiff_t astride, const uint8_t *rgb,
                        ptrdiff_t rstride, int step, int ro, int go, int bo, int w, int h);
double cmp_score_psnr(const CmpScore *s);
double cmp_score_ssim(const CmpScore *s);

#endif /* PNMF_TOOLS_MEASURE_METRICS_H */
