/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The model on the scenes real animation is made of: an object that
 * leaves the frame, a background that pans, a dark sprite over a bright
 * background. Each scene is built from known parts, fitted with the fitter
 * the encoder uses, and checked against those parts with dense arithmetic
 * (every pixel, every frame); the steps must descend without the fit's
 * guards having to undo more than rounding.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "permnmf.h"
#include "pnmf/pnmf.h"
#include "test.h"

/* The objective over the visible vr x vc corner of each rows x cols frame,
 * by the definition: every entry's component shifted cyclically on the
 * torus, summed, compared pixel by pixel. */
static double visible_objective(int rows, int cols, int vr, int vc, const float *A, int m, const float *W,
                                int k, const PnmfAtom *H, double *energy)
{
    double f = 0, e = 0;
    for (int j = 0; j < m; j++)
        for (int y = 0; y < vr; y++)
            for (int x = 0; x < vc; x++) {
                double v = 0;
                for (int i = 0; i < k; i++) {
                    const PnmfAtom a = H[j * k + i];
                    if (a.r == 0) continue;
                    const int py = a.p / cols, px = a.p % cols;
                    const int sy = ((y - py) % rows + rows) % rows, sx = ((x - px) % cols + cols) % cols;
                    v += a.r * W[(size_t)i * rows * cols + (size_t)sy * cols + sx];
                }
                const double a = A[(size_t)j * rows * cols + (size_t)y * cols + x];
                f += (a - v) * (a - v);
                e += a * a;
            }
    if (energy) *energy = e;
    return f;
}

/* Fit with p; checks that the guards which undo a step made worse by
 * float rounding (and so keep the trace monotone whatever the steps do)
 * acted on rounding only: no step undone that rose by more than 1e-6 of
 * the frames' energy (rounding stays below 1e-7). Returns the objective
 * (st, when not NULL, receives the fit's statistics). */
static double fit_params_traced(PnmfFitter *ft, const PnmfFitParams *p, float *W, PnmfAtom *H, PnmfFitStats *out,
                                const char *what)
{
    double trace[201];
    PnmfFitStats st = { 0 };
    st.trace = trace;
    CHECK(p->iterations <= 200);
    CHECK_MSG(pnmf_fitter_fit(ft, p, W, H, &st) == 0, "%s: fit failed", what);
    CHECK_MSG(st.guard_rise_h < 1e-6 && st.guard_rise_w < 1e-6, "%s: a step undone rose by %g (H), %g (W)", what,
              st.guard_rise_h, st.guard_rise_w);
    if (out) *out = st, out->trace = NULL;
    return st.objective;
}

static double fit_traced(PnmfFitter *ft, int k, float *W, PnmfAtom *H, int iters, const char *what)
{
    const PnmfFitParams p = { k, PNMF_ALGO_IMPROVED, iters, 10, 1, 1, 1e-9, 0, 0, 0, 0, 0, NULL };
    return fit_params_traced(ft, &p, W, H, NULL, what);
}

/* Best normalized cross-correlation of the sprite s (sh x sw) against the
 * component w over every cyclic placement on the rows x cols torus. */
static double best_ncc(int rows, int cols, const float *w, const float *s, int sh, int sw, int *by, int *bx)
{
    double ss = 0, best = -1;
    for (int q = 0; q < sh * sw; q++) ss += (double)s[q] * s[q];
    for (int py = 0; py < rows; py++)
        for (int px = 0; px < cols; px++) {
            double dot = 0, ww = 0;
            for (int y = 0; y < sh; y++)
                for (int x = 0; x < sw; x++) {
                    const double v = w[(size_t)((py + y) % rows) * cols + (px + x) % cols];
                    dot += v * s[y * sw + x], ww += v * v;
                }
            const double c = ww > 0 ? dot / sqrt(ww * ss) : 0;
            if (c > best) best = c, *by = py, *bx = px;
        }
    return best;
}

/* A sprite with texture, so that it has one true placement. */
static void make_sprite(int sh, int sw, float *s)
{
    for (int y = 0; y < sh; y++)
        for (int x = 0; x < sw; x++) s[y * sw + x] = 0.3f + 0.7f * (float)(((y * 7 + x * 3) % 5) / 4.0);
}

/* An object that crosses the frame from left to right and leaves it: the
 * canvas model must hold it whole (every pixel of the sprite, although the
 * last frames show only part of it), and must not wrap it to the left
 * edge, which the visible-part loss forbids. */
static void test_leaving_object(void)
{
    enum { VR = 20, VC = 30, R = 24, C = 40, N = R * C, M = 10, SH = 6, SW = 7 };
    float spr[SH * SW], *A = calloc((size_t)M * N, sizeof(float)), W[N];
    PnmfAtom H[M];
    make_sprite(SH, SW, spr);
    /* frame j: the sprite's left edge at column 3j: fully visible up to
     * j = 7 (columns 21..27), then cut by the right edge (6 and 3 of its
     * 7 columns show) */
    for (int j = 0; j < M; j++)
        for (int y = 0; y < SH; y++)
            for (int x = 0; x < SW; x++) {
                const int fy = 7 + y, fx = 3 * j + x;
                if (fx < VC) A[(size_t)j * N + fy * C + fx] = spr[y * SW + x];
            }
    PnmfFitter *ft;
    CHECK(pnmf_fitter_open(&ft, R, C, M, 1, 1) == 0);
    CHECK(pnmf_fitter_set_options(ft, VR, VC, 0) == 0);
    CHECK(pnmf_fitter_set_frames(ft, A, M) == 0);
    const double f = fit_traced(ft, 1, W, H, 60, "leaving object");
    double energy;
    const double fv = visible_objective(R, C, VR, VC, A, M, W, 1, H, &energy);
    CHECK_NEAR(fv, f, 1e-6 * energy);
    CHECK_MSG(fv < 1e-4 * energy, "leaving object: relative error %g", fv / energy);
    int by, bx;
    const double ncc = best_ncc(R, C, W, spr, SH, SW, &by, &bx);
    CHECK_MSG(ncc > 0.999, "leaving object: the component is not the whole sprite (NCC %g)", ncc);
    /* each frame's shift places the sprite where it is, also where it is
     * cut: the step is 3 columns a frame */
    int steps_ok = 1;
    for (int j = 1; j < M; j++) {
        const int dx = ((H[j].p % C) - (H[j - 1].p % C) + C) % C, dy = ((H[j].p / C) - (H[j - 1].p / C) + R) % R;
        steps_ok &= dx == 3 && dy == 0 && H[j].r > 0;
    }
    CHECK_MSG(steps_ok, "leaving object: shifts do not follow the motion");
    printf("leaving object: relative error %.2g, sprite NCC %.6f\n", fv / energy, ncc);
    pnmf_fitter_close(&ft);
    free(A);
}

/* A background wider than the frame, seen through a window that pans 2
 * columns a frame: one canvas component, one entry a frame, shifts 2
 * apart, and the whole strip the frames saw recovered. */
static void test_panning_background(void)
{
    enum { VR = 16, VC = 24, R = 20, C = 48, N = R * C, M = 10, PAN = 2, BW = VC + PAN * (M - 1) };
    float bg[VR * BW], *A = calloc((size_t)M * N, sizeof(float)), W[N];
    PnmfAtom H[M];
    unsigned rs = 2024;
    for (int q = 0; q < VR * BW; q++) {
        rs = rs * 1103515245u + 12345u;
        bg[q] = 0.2f + 0.8f * (float)((rs >> 8) & 0xffff) / 65535.0f; /* no period: one true offset */
    }
    for (int j = 0; j < M; j++)
        for (int y = 0; y < VR; y++)
            for (int x = 0; x < VC; x++) A[(size_t)j * N + y * C + x] = bg[y * BW + x + PAN * j];
    PnmfFitter *ft;
    CHECK(pnmf_fitter_open(&ft, R, C, M, 1, 1) == 0);
    CHECK(pnmf_fitter_set_options(ft, VR, VC, 0) == 0);
    CHECK(pnmf_fitter_set_frames(ft, A, M) == 0);
    fit_traced(ft, 1, W, H, 60, "panning background");
    double energy;
    const double fv = visible_objective(R, C, VR, VC, A, M, W, 1, H, &energy);
    CHECK_MSG(fv < 1e-4 * energy, "panning background: one component leaves relative error %g", fv / energy);
    int steps_ok = 1;
    for (int j = 1; j < M; j++) {
        const int dx = ((H[j - 1].p % C) - (H[j].p % C) + C) % C, dy = ((H[j].p / C) - (H[j - 1].p / C) + R) % R;
        steps_ok &= dx == PAN && dy == 0;
    }
    CHECK_MSG(steps_ok, "panning background: shifts are not %d columns apart", PAN);
    int by, bx;
    const double ncc = best_ncc(R, C, W, bg, VR, BW, &by, &bx);
    CHECK_MSG(ncc > 0.999, "panning background: the component is not the %d-wide strip (NCC %g)", BW, ncc);
    printf("panning background: relative error %.2g, strip NCC %.6f\n", fv / energy, ncc);
    pnmf_fitter_close(&ft);
    free(A);
}

/* A dark sprite walking over a bright textured background. Nonnegative
 * parts can only add light, so the paper's model draws the sprite's
 * footprint badly; signed components (a background, and the sprite as its
 * difference from it) draw it. Both PSNRs are printed; the signed one must
 * stay above a floor and above the nonnegative one. */
static void test_dark_sprite(void)
{
    enum { R = 24, C = 32, N = R * C, M = 12, SH = 6, SW = 6, K = 2 };
    float bgi[N], *A = calloc((size_t)M * N, sizeof(float)), W[K * N];
    PnmfAtom H[M * K];
    for (int y = 0; y < R; y++)
        for (int x = 0; x < C; x++) bgi[y * C + x] = 0.75f + 0.2f * (float)((x * 3 + y * 5) % 9) / 8;
    for (int j = 0; j < M; j++) {
        float *a = A + (size_t)j * N;
        memcpy(a, bgi, sizeof(bgi));
        for (int y = 0; y < SH; y++)
            for (int x = 0; x < SW; x++) a[(8 + y) * C + 2 + 2 * j + x] = 0.05f + 0.05f * (float)((x + y) % 2);
    }
    double psnr[2];
    for (int sgn = 0; sgn < 2; sgn++) {
        PnmfFitter *ft;
        CHECK(pnmf_fitter_open(&ft, R, C, M, K, 1) == 0);
        CHECK(pnmf_fitter_set_options(ft, R, C, sgn) == 0);
        CHECK(pnmf_fitter_set_frames(ft, A, M) == 0);
        const double f = fit_traced(ft, K, W, H, 100, sgn ? "dark sprite, signed" : "dark sprite, nonnegative");
        const double fd = visible_objective(R, C, R, C, A, M, W, K, H, NULL);
        CHECK_NEAR(fd, f, 1e-6 * (double)M * N);
        int neg = 0;
        for (int q = 0; q < K * N; q++) neg |= W[q] < 0;
        CHECK_MSG(sgn || !neg, "nonnegative model: a negative pixel");
        psnr[sgn] = 10 * log10((double)M * N / (fd > 1e-30 ? fd : 1e-30)); /* peak 1 */
        pnmf_fitter_close(&ft);
    }
    printf("dark sprite over a bright background, k = 2: PSNR %.2f dB signed, %.2f dB nonnegative\n", psnr[1],
           psnr[0]);
    /* the signed model's floor is about 38.70 dB (none is exact: the
     * sprite hides a textured background, so its difference from it
     * changes as it moves); the nonnegative model gives 24.51 dB */
    CHECK_MSG(psnr[1] > 36, "signed model: %.2f dB", psnr[1]);
    CHECK_MSG(psnr[1] > psnr[0] + 3, "signed %.2f dB is not clearly above nonnegative %.2f dB", psnr[1], psnr[0]);
    free(A);
}

/* The automatic size: a textured background and three different sprites
 * moving over it (frames exactly the sum of 4 parts). With k = 8 as the
 * cap, growing stops at 4 components (the background and the three), the
 * fit still explains the frames, and the components left over are empty;
 * without the automatic size all 8 are used. */
/* A background and three sprites on paths that never overlap. */
enum { SC_R = 24, SC_C = 32, SC_N = SC_R * SC_C, SC_M = 12, SC_S = 3, SC_SH = 5, SC_SW = 6 };
static void three_sprites(float *A)
{
    enum { R = SC_R, C = SC_C, N = SC_N, M = SC_M, S = SC_S, SH = SC_SH, SW = SC_SW };
    float spr[S][SH * SW];
    unsigned rs = 77;
    for (int s = 0; s < S; s++)
        for (int q = 0; q < SH * SW; q++) rs = rs * 1103515245u + 12345u, spr[s][q] = 0.3f + 0.7f * (float)((rs >> 9) % 1000) / 999;
    for (int j = 0; j < M; j++) {
        float *a = A + (size_t)j * N;
        for (int y = 0; y < R; y++)
            for (int x = 0; x < C; x++) a[y * C + x] = 0.1f + 0.05f * (float)((x * 3 + y * 7) % 5);
        /* three paths that never overlap: rows 1, 9 and 17 */
        for (int s = 0; s < S; s++) {
            const int y0 = 1 + 8 * s, x0 = (s * 9 + j * (s + 1)) % (C - SW);
            for (int y = 0; y < SH; y++)
                for (int x = 0; x < SW; x++) a[(y0 + y) * C + x0 + x] += spr[s][y * SW + x];
        }
    }
}

/* The light initialisation (the encoder's probe): each seeded component
 * placed alone. After one iteration its objective must be near the greedy
 * initialisation's, and a full fit from it must find the scene. */
static void test_light_init(void)
{
    enum { R = SC_R, C = SC_C, N = SC_N, M = SC_M, K = 1 + SC_S };
    float *A = calloc((size_t)M * N, sizeof(float)), W[K * N];
    PnmfAtom H[M * K];
    three_sprites(A);
    PnmfFitter *ft;
    CHECK(pnmf_fitter_open(&ft, R, C, M, K, 2) == 0);
    CHECK(pnmf_fitter_set_frames(ft, A, M) == 0);
    double f[2][2], energy = 0;
    for (int light = 0; light < 2; light++)
        for (int full = 0; full < 2; full++) {
            const PnmfFitParams p = { K, PNMF_ALGO_IMPROVED, full ? 60 : 1, 10, 1, 1, 1e-9, 0, light, 0, 0, 0, NULL };
            fit_params_traced(ft, &p, W, H, NULL, light ? "light init" : "greedy init");
            f[light][full] = visible_objective(R, C, R, C, A, M, W, K, H, &energy);
        }
    printf("light init: relative error after 1 iteration %.3g (greedy init %.3g), after the fit %.3g (greedy %.3g)\n",
           f[1][0] / energy, f[0][0] / energy, f[1][1] / energy, f[0][1] / energy);
    CHECK_MSG(f[1][0] <= 2 * f[0][0] + 1e-6 * energy, "light init: one iteration %g, greedy's %g", f[1][0], f[0][0]);
    CHECK_MSG(f[1][1] < 1e-3 * energy, "light init: the full fit's relative error %g", f[1][1] / energy);
    pnmf_fitter_close(&ft);
    free(A);
}

static void test_auto_size(void)
{
    enum { R = SC_R, C = SC_C, N = SC_N, M = SC_M, K = 8, S = SC_S };
    float *A = calloc((size_t)M * N, sizeof(float)), W[K * N];
    PnmfAtom H[M * K];
    three_sprites(A);
    PnmfFitter *ft;
    CHECK(pnmf_fitter_open(&ft, R, C, M, K, 1) == 0);
    CHECK(pnmf_fitter_set_frames(ft, A, M) == 0);
    for (int auto_size = 1; auto_size >= 0; auto_size--) {
        const PnmfFitParams p = { K, PNMF_ALGO_IMPROVED, 60, 10, 1, 1, 1e-9, auto_size ? 1e-3 : 0, 0, 0, 0, 0, NULL };
        PnmfFitStats st;
        fit_params_traced(ft, &p, W, H, &st, auto_size ? "auto size on" : "auto size off");
        double energy;
        const double f = visible_objective(R, C, R, C, A, M, W, K, H, &energy);
        int used = 0, empty_ok = 1;
        for (int i = 0; i < K; i++) {
            int any = 0;
            for (int j = 0; j < M; j++) any |= H[j * K + i].r != 0;
            used += any;
            if (i >= st.k_used) {
                for (int q = 0; q < N; q++) empty_ok &= W[i * N + q] == 0;
                empty_ok &= !any;
            }
        }
        printf("auto size %s: %d components in use (k_used %d), relative error %.2g\n", auto_size ? "on" : "off",
               used, st.k_used, f / energy);
        if (auto_size) {
            CHECK_MSG(st.k_used == 1 + S, "automatic size: %d components, the scene has %d parts", st.k_used, 1 + S);
            CHECK_MSG(empty_ok, "automatic size: a component past k_used is not empty");
            CHECK_MSG(f < 1e-3 * energy, "automatic size: relative error %g", f / energy);
        } else {
            CHECK(st.k_used == K);
        }
    }
    pnmf_fitter_close(&ft);
    free(A);
}

int main(void)
{
    test_leaving_object();
    test_panning_background();
    test_dark_sprite();
    test_auto_size();
    test_light_init();
    return test_summary("test_scenes");
}
