/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The warp of a frame (window flags bit 23, format 20), as the encoder
 * estimates it: each textured block of a sparse grid matched in the
 * reference to a quarter sample around the frame's global vector, then a
 * plane through each component of those vectors over the blocks' places,
 * fitted by least squares with the blocks far off it left out (a moving
 * object over a zooming background). The decoder's field is that plane,
 * rounded (pnmf_residual_warp_mv()).
 */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "enc_warp.h"
#include "internal.h"
#include "residual.h"
#include "tuning.h"

#define B PNMF_RES_BLOCK

static int sad_at(const uint8_t *src, const uint8_t *ref, int cols, int y0, int x0, int dy, int dx)
{
    int s = 0;
    for (int y = 0; y < B; y++) {
        const uint8_t *a = src + (size_t)(y0 + y) * cols + x0, *b = ref + (size_t)(y0 + y + dy) * cols + x0 + dx;
        for (int x = 0; x < B; x++) s += abs(a[x] - b[x]);
    }
    return s;
}

static int sad_pred(const uint8_t *src, int cols, int y0, int x0, const uint8_t *p)
{
    int s = 0;
    for (int y = 0; y < B; y++)
        for (int x = 0; x < B; x++) s += abs(src[(size_t)(y0 + y) * cols + x0 + x] - p[y * B + x]);
    return s;
}

/* Solve the 3 x 3 system a x = b (Cramer); 0 when it is singular. */
static int solve3(const double a[3][3], const double b[3], double x[3])
{
    const double det = a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
                       a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
                       a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
    if (fabs(det) < 1e-9) return 0;
    for (int c = 0; c < 3; c++) {
        double m[3][3];
        memcpy(m, a, sizeof(m));
        for (int r = 0; r < 3; r++) m[r][c] = b[r];
        x[c] = (m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])) /
               det;
    }
    return 1;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int32_t clampi(double v, int32_t lim)
{
    const double r = floor(v + 0.5);
    return r < -lim ? -lim : r > lim ? lim : (int32_t)r;
}

int pnmf_enc_warp_fit(const uint8_t *src, const uint8_t *ref, int rows, int cols, int sharp, int *gy, int *gx,
                      int32_t w[6])
{
    memset(w, 0, 6 * sizeof(*w));
    const int R = PNMF_WARP_RANGE, M = R + 3; /* the search's reach and the 6-tap filter's */
    const int ny = rows / (2 * B), nx = cols / (2 * B);
    if (ny < 2 || nx < 2) return 0;
    double(*pt)[4] = pnmf_malloc_array((size_t)ny * nx, sizeof(*pt)); /* py, px, qy, qx */
    double *res = pnmf_malloc_array((size_t)ny * nx * 2, sizeof(double)); /* each block's distance, then sorted */
    if (!pt || !res) {
        pnmf_free(pt), pnmf_free(res);
        return 0;
    }
    int n = 0;
    uint8_t pb[B * B];
    for (int y0 = B; y0 + 2 * B <= rows; y0 += 2 * B)
        for (int x0 = B; x0 + 2 * B <= cols; x0 += 2 * B) {
            if (y0 + *gy - M < 0 || y0 + B + *gy + M > rows || x0 + *gx - M < 0 || x0 + B + *gx + M > cols) continue;
            /* textured both ways: a flat block or a straight edge matches anywhere along it */
            int tx = 0, ty = 0;
            for (int y = 0; y < B - 1; y++)
                for (int x = 0; x < B - 1; x++) {
                    const uint8_t *s = src + (size_t)(y0 + y) * cols + x0 + x;
                    tx += abs(s[1] - s[0]), ty += abs(s[cols] - s[0]);
                }
            if (tx < PNMF_WARP_MIN_TEXTURE || ty < PNMF_WARP_MIN_TEXTURE) continue;
            int best = INT32_MAX, by = 0, bx = 0;
            for (int dy = -R; dy <= R; dy++)
                for (int dx = -R; dx <= R; dx++) {
                    const int s = sad_at(src, ref, cols, y0, x0, *gy + dy, *gx + dx);
                    if (s < best) best = s, by = dy, bx = dx;
                }
            if (abs(by) == R || abs(bx) == R) continue; /* at the search's edge: the motion may lie beyond */
            int qy = 4 * (*gy + by), qx = 4 * (*gx + bx);
            for (int stp = 2; stp >= 1; stp--) { /* half samples, then quarters */
                int cy = qy, cx = qx;
                for (int oy = -stp; oy <= stp; oy += stp)
                    for (int ox = -stp; ox <= stp; ox += stp) {
                        if (!oy && !ox) continue;
                        pnmf_residual_subpel(ref, rows, cols, y0, y0 + B, x0, x0 + B, qy + oy, qx + ox, sharp, pb);
                        const int s = sad_pred(src, cols, y0, x0, pb);
                        if (s < best) best = s, cy = qy + oy, cx = qx + ox;
                    }
                qy = cy, qx = cx;
            }
            pt[n][0] = 2 * y0 + B - rows, pt[n][1] = 2 * x0 + B - cols, pt[n][2] = qy, pt[n][3] = qx;
            n++;
        }
    int ok = 0;
    double cf[2][3] = { { 0 } };
    if (n >= PNMF_WARP_MIN_BLOCKS) {
        uint8_t *in = pnmf_malloc_array((size_t)n, 1);
        if (in) {
            memset(in, 1, (size_t)n);
            for (int it = 0; it < PNMF_WARP_ITERS; it++) {
                int used = 0;
                for (int c = 0; c < 2; c++) {
                    double a[3][3] = { { 0 } }, b[3] = { 0 };
                    for (int i = 0; i < n; i++) {
                        if (!in[i]) continue;
                        const double v[3] = { 1, pt[i][1], pt[i][0] };
                        for (int r = 0; r < 3; r++) {
                            for (int k = 0; k < 3; k++) a[r][k] += v[r] * v[k];
                            b[r] += v[r] * pt[i][2 + c];
                        }
                        used += !c;
                    }
                    if (used < PNMF_WARP_MIN_BLOCKS || !solve3((const double(*)[3])a, b, cf[c])) goto done;
                }
                /* the blocks off the planes by more than PNMF_WARP_OUTLIER times the median, or a quarter sample */
                int k = 0;
                for (int i = 0; i < n; i++) {
                    res[i] = fabs(pt[i][2] - (cf[0][0] + cf[0][1] * pt[i][1] + cf[0][2] * pt[i][0])) +
                             fabs(pt[i][3] - (cf[1][0] + cf[1][1] * pt[i][1] + cf[1][2] * pt[i][0]));
                    res[n + k++] = res[i];
                }
                qsort(res + n, (size_t)k, sizeof(double), cmp_double);
                double thr = PNMF_WARP_OUTLIER * res[n + k / 2];
                if (thr < 1.0) thr = 1.0;
                for (int i = 0; i < n; i++) in[i] = res[i] <= thr;
            }
            int used = 0;
            for (int i = 0; i < n; i++) used += in[i];
            ok = used >= PNMF_WARP_MIN_BLOCKS;
        done:
            pnmf_free(in);
        }
    }
    pnmf_free(pt), pnmf_free(res);
    if (!ok) return 0;
    /* the plane at the frame's centre: whole samples as the global vector, the rest as the offsets */
    int g[2];
    for (int c = 0; c < 2; c++) {
        g[c] = (int)floor(cf[c][0] / 4 + 0.5);
        if (g[c] < -PNMF_RES_MAX_MV) g[c] = -PNMF_RES_MAX_MV;
        if (g[c] > PNMF_RES_MAX_MV) g[c] = PNMF_RES_MAX_MV;
        w[3 * c] = clampi((cf[c][0] - 4 * g[c]) * 32768, PNMF_RES_WARP_MAX_O);
        w[3 * c + 1] = clampi(cf[c][1] * 32768, PNMF_RES_WARP_MAX_S);
        w[3 * c + 2] = clampi(cf[c][2] * 32768, PNMF_RES_WARP_MAX_S);
    }
    *gy = g[0], *gx = g[1];
    return 1;
}

int64_t pnmf_enc_warp_sad(const uint8_t *src, const uint8_t *ref, int rows, int cols, int sharp, int gy, int gx,
                          const int32_t w[6])
{
    /* a residual layer of one frame holding the warp, for pnmf_residual_warp_mv() */
    int16_t g[2] = { (int16_t)gy, (int16_t)gx };
    PnmfResidual r = { .rows = rows, .cols = cols, .gmv = g, .gw = (int32_t *)w };
    int64_t s = 0;
    uint8_t pb[B * B];
    for (int y0 = 0; y0 < rows; y0 += B)
        for (int x0 = 0; x0 < cols; x0 += B) {
            const int y1 = y0 + B < rows ? y0 + B : rows, x1 = x0 + B < cols ? x0 + B : cols;
            int vy, vx;
            pnmf_residual_warp_mv(&r, 0, y0, y1, x0, x1, &vy, &vx);
            pnmf_residual_subpel(ref, rows, cols, y0, y1, x0, x1, vy, vx, sharp, pb);
            for (int y = y0; y < y1; y++)
                for (int x = x0; x < x1; x++) s += abs(src[(size_t)y * cols + x] - pb[(y - y0) * B + x - x0]);
        }
    return s;
}
