/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Repeated entries (src/repeats.h) against their definitions, on dense
 * arrays: the residuals the module keeps equal the frames minus the sum
 * of the entries' shifted components computed pixel by pixel; the W step
 * for repeated entries never raises the squared error, and with one entry
 * per component and frame on the whole torus it is the exact HALS
 * minimiser (zero gradient where the component is not clamped); the
 * greedy search finds both copies of a sprite at their shifts and stops
 * where an entry is worth less than its bits; and the rounds' cost never
 * rises.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "repeats.h"
#include "test.h"

static unsigned rs = 4242;
static double urand(void) { rs = rs * 1103515245u + 12345u; return ((rs >> 8) & 0xFFFFFF) / 16777216.0; }
static int uint_(int n) { return (int)(urand() * n) % n; }

/* The squared error over the visible samples of frames A minus the
 * entries, pixel by pixel from the definition (S_p w)[y,x] = w[y-py, x-px]. */
static double dense_sse(const PnmfRepFit *f, const float *W, float *E)
{
    double s = 0;
    for (int j = 0; j < f->m; j++)
        for (int y = 0; y < f->rows; y++)
            for (int x = 0; x < f->cols; x++) {
                double v = 0;
                if (y < f->vis_rows && x < f->vis_cols) {
                    v = f->A[(size_t)j * f->n + (size_t)y * f->cols + x];
                    for (int a = 0; a < f->cnt[j]; a++) {
                        const PnmfRepEnt *t = &f->ent[(size_t)j * f->cap + a];
                        const int py = t->p / f->cols, px = t->p % f->cols;
                        const int sy = ((y - py) % f->rows + f->rows) % f->rows;
                        const int sx = ((x - px) % f->cols + f->cols) % f->cols;
                        v -= t->r * W[(size_t)t->i * f->n + (size_t)sy * f->cols + sx];
                    }
                    s += v * v;
                }
                if (E) E[(size_t)j * f->n + (size_t)y * f->cols + x] = (float)v;
            }
    return s;
}

static void test_w_step(void)
{
    int rises = 0, mismatches = 0, hals_bad = 0, cases = 0;
    for (int t = 0; t < 60; t++) {
        const int rows = 3 + uint_(6), cols = 3 + uint_(7), m = 1 + uint_(4), k = t % 2 ? 1 : 1 + uint_(3);
        const int canvas = t % 3 == 0, single = t % 4 == 1, signed_w = t % 5 == 2;
        const int vr = canvas ? 1 + uint_(rows) : rows, vc = canvas ? 1 + uint_(cols) : cols;
        const size_t n = (size_t)rows * cols;
        float *A = malloc(m * n * sizeof(float)), *W = malloc(k * n * sizeof(float));
        float *E = malloc(m * n * sizeof(float));
        for (size_t q = 0; q < m * n; q++) A[q] = (float)(255 * urand());
        for (size_t q = 0; q < k * n; q++) W[q] = (float)(signed_w ? urand() - 0.3 : urand());
        PnmfRepFit f;
        CHECK(pnmf_repfit_open(&f, rows, cols, vr, vc, m, k, A, 1.0, signed_w) == 0);
        memcpy(f.W, W, k * n * sizeof(float));
        for (int j = 0; j < m; j++) {
            f.cnt[j] = 0;
            for (int i = 0; i < k; i++) {
                const int copies = single ? 1 : 1 + uint_(3);
                for (int c = 0; c < copies; c++)
                    f.ent[(size_t)j * f.cap + f.cnt[j]++] = (PnmfRepEnt){ i, uint_(rows * cols), (float)(0.2 + 2 * urand()) };
            }
        }
        pnmf_repfit_residuals(&f, f.W);
        const double before = dense_sse(&f, f.W, NULL);
        CHECK_NEAR(pnmf_repfit_energy(&f), before, 1e-4);
        pnmf_repfit_w_step(&f);
        const double after = dense_sse(&f, f.W, E);
        rises += after > before * (1 + 1e-5) + 1e-3;
        /* the residuals it kept are the definition's */
        for (int j = 0; j < m; j++)
            for (int y = 0; y < vr; y++)
                for (int x = 0; x < vc; x++) {
                    const size_t q = (size_t)j * n + (size_t)y * cols + x;
                    mismatches += fabsf(f.E[q] - E[q]) > 1e-2f * (1 + fabsf(E[q]));
                }
        if (single && !canvas && k == 1) {
            /* one entry a frame, one component: the exact HALS step, so
             * the gradient sum_j r_j S_{-p_j} E_j vanishes where w is free
             * (with more components, the later ones' steps move it) */
            cases++;
            for (int i = 0; i < k; i++)
                for (size_t x = 0; x < n; x++) {
                    if (!signed_w && f.W[(size_t)i * n + x] <= 0) continue;
                    double g = 0, h = 0;
                    for (int j = 0; j < m; j++)
                        for (int a = 0; a < f.cnt[j]; a++) {
                            const PnmfRepEnt *e = &f.ent[(size_t)j * f.cap + a];
                            if (e->i != i) continue;
                            const int py = e->p / cols, px = e->p % cols;
                            const size_t tq = (size_t)(((int)(x / cols) + py) % rows) * cols + ((int)(x % cols) + px) % cols;
                            g += e->r * E[(size_t)j * n + tq], h += (double)e->r * e->r;
                        }
                    hals_bad += fabs(g) > 1e-3 * (1 + 255 * sqrt(h));
                }
        }
        pnmf_repfit_close(&f);
        free(A), free(W), free(E);
    }
    CHECK_MSG(rises == 0, "%d W steps raised the squared error", rises);
    CHECK_MSG(mismatches == 0, "%d residual samples differ from the definition", mismatches);
    CHECK_MSG(cases > 5 && hals_bad == 0, "%d of the single-entry cases' pixels with a gradient (%d cases)", hals_bad,
              cases);
}

/* A textured 6x5 sprite; two copies of it (and a third, faint one) in
 * each of m frames of a 24x30 torus, at known places. */
enum { R = 24, C = 30, M = 5, SH = 6, SW = 5 };

static void sprite(float *w)
{
    memset(w, 0, R * C * sizeof(float));
    for (int y = 0; y < SH; y++)
        for (int x = 0; x < SW; x++) w[y * C + x] = (float)(80 + 20 * ((3 * x + 5 * y) % 7));
}

static void scene(float *A, float *w, int py[M][3], int px[M][3], float faint)
{
    sprite(w);
    memset(A, 0, M * R * C * sizeof(float));
    for (int j = 0; j < M; j++) {
        py[j][0] = 2 + j, px[j][0] = 1 + 2 * j;
        py[j][1] = 14, px[j][1] = 20 - 3 * j;
        py[j][2] = 3, px[j][2] = 18;
        for (int c = 0; c < 3; c++) {
            const float a = c == 2 ? faint : 1.0f;
            for (int y = 0; y < SH; y++)
                for (int x = 0; x < SW; x++)
                    A[(size_t)j * R * C + (size_t)((y + py[j][c]) % R) * C + (x + px[j][c]) % C] += a * w[y * C + x];
        }
    }
}

static void test_search(void)
{
    static float A[M * R * C], w[R * C];
    int py[M][3], px[M][3];
    /* a faint third copy: worth 0.05^2 * |w|^2 (about 600) of squared
     * error, less than lambda * bits at lambda 100, more at lambda 1 */
    scene(A, w, py, px, 0.05f);
    for (int big = 0; big < 2; big++) {
        const double lambda = big ? 100.0 : 1.0;
        PnmfRepFit f;
        CHECK(pnmf_repfit_open(&f, R, C, R, C, M, 1, A, lambda, 0) == 0);
        PnmfAtom H0[M];
        for (int j = 0; j < M; j++) H0[j] = (PnmfAtom){ 1.0f, py[j][0] * C + px[j][0] };
        double trace[PNMF_REPEAT_ROUNDS + 1];
        const int rounds = pnmf_repfit_run(&f, w, H0, trace);
        CHECK(rounds >= 1);
        int found = 1, faint = 0;
        for (int j = 0; j < M; j++) {
            int have[3] = { 0, 0, 0 };
            for (int a = 0; a < f.cnt[j]; a++) {
                const PnmfRepEnt *e = &f.ent[(size_t)j * f.cap + a];
                for (int c = 0; c < 3; c++)
                    if (e->p == py[j][c] * C + px[j][c]) have[c] = 1;
            }
            found &= have[0] && have[1];
            faint += have[2];
        }
        CHECK_MSG(found, "lambda %g: a copy missing from its shift", lambda);
        if (big) CHECK_MSG(faint == 0, "lambda 100: the faint copy (worth less than its bits) placed %d times", faint);
        else CHECK_MSG(faint == M, "lambda 1: the faint copy placed in %d of %d frames", faint, M);
        for (int t = 1; t <= rounds; t++) CHECK_MSG(trace[t] <= trace[t - 1] * (1 + 1e-6), "round %d: the cost rose", t);
        pnmf_repfit_close(&f);
    }
}

/* From a blurred start (the sprite plus noise, one entry a frame at the
 * first copy), the rounds' cost never rises and ends far below where it
 * began, the component close to the sprite. */
static void test_rounds(void)
{
    static float A[M * R * C], w[R * C], w0[R * C];
    int py[M][3], px[M][3];
    scene(A, w, py, px, 0.0f);
    for (int q = 0; q < R * C; q++) w0[q] = w[q] * (float)(0.6 + 0.8 * urand()) + (q % 7 == 0 ? 30.0f * (float)urand() : 0);
    PnmfRepFit f;
    CHECK(pnmf_repfit_open(&f, R, C, R, C, M, 1, A, 10.0, 0) == 0);
    PnmfAtom H0[M];
    for (int j = 0; j < M; j++) H0[j] = (PnmfAtom){ 1.0f, py[j][0] * C + px[j][0] };
    double trace[PNMF_REPEAT_ROUNDS + 1];
    const int rounds = pnmf_repfit_run(&f, w0, H0, trace);
    CHECK(rounds >= 2);
    int rises = 0;
    for (int t = 1; t <= rounds; t++) rises += trace[t] > trace[t - 1] * (1 + 1e-6);
    CHECK_MSG(rises == 0, "the cost rose in %d of %d rounds", rises, rounds);
    CHECK_MSG(trace[rounds] < 0.05 * trace[0], "cost %.6g after %d rounds from %.6g", trace[rounds], rounds, trace[0]);
    double num = 0, den = 0;
    for (int q = 0; q < R * C; q++) num += (double)(f.W[q] - w[q]) * (f.W[q] - w[q]), den += (double)w[q] * w[q];
    CHECK_MSG(num < 0.02 * den, "component error %.4f of the sprite's energy", num / den);
    pnmf_repfit_close(&f);
}

int main(void)
{
    test_w_step();
    test_search();
    test_rounds();
    return test_summary("test_repeats");
}
