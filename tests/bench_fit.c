/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench-fit: the paper's algorithm against the improved one on synthetic
 * sprite scenes with known components. Prints, per
 * configuration, over several seeds: the final objective relative to the
 * ground truth's, the recovery (every true component matched with a
 * normalized cross-correlation, maximum over shifts, of at least 0.95),
 * the smallest such NCC, and the time. A benchmark that prints figures,
 * not a test: nothing here asserts.
 *
 * usage: bench-fit [seeds] [rows cols frames k]
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "permnmf.h"
#include "pnmf/pnmf.h"
#include "test.h"

static unsigned rs;
static double urand(void) { rs = rs * 1103515245u + 12345u; return ((rs >> 8) & 0xFFFF) / 65536.0; }

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* k sprites of 5..9 pixels a side with random texture, random shifts,
 * coefficients in [0.5, 1.5] x 100, uniform noise of mean 3 (of 255). */
static void make_scene(int rows, int cols, int m, int k, float *A, float *Wt, PnmfAtom *Ht)
{
    const int n = rows * cols;
    memset(Wt, 0, sizeof(float) * k * n);
    for (int i = 0; i < k; i++) {
        const int h = 5 + (int)(urand() * 5), w = 5 + (int)(urand() * 5);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                if (urand() < 0.7) Wt[i * n + y * cols + x] = (float)(0.3 + 0.7 * urand());
    }
    for (int j = 0; j < m; j++) {
        memset(A + j * n, 0, sizeof(float) * n);
        for (int i = 0; i < k; i++) {
            PnmfAtom a = { (float)(100 * (0.5 + urand())), (int)(urand() * n) % n };
            Ht[j * k + i] = a;
            pnmf_shift_add(rows, cols, A + j * n, Wt + i * n, a.r, a.p);
        }
        for (int x = 0; x < n; x++) A[j * n + x] += (float)(6 * urand());
    }
}

static double max_ncc(int rows, int cols, const float *a, const float *b, float *s)
{
    const int n = rows * cols;
    double na = 0, nb = 0, best = 0;
    for (int i = 0; i < n; i++) na += (double)a[i] * a[i], nb += (double)b[i] * b[i];
    if (na == 0 || nb == 0) return 0;
    for (int p = 0; p < n; p++) {
        memset(s, 0, sizeof(float) * n);
        pnmf_shift_add(rows, cols, s, b, 1, p);
        double c = 0;
        for (int i = 0; i < n; i++) c += (double)a[i] * s[i];
        best = fmax(best, c / sqrt(na * nb));
    }
    return best;
}

int main(int argc, char **argv)
{
    const int seeds = argc > 1 ? atoi(argv[1]) : 10;
    const int rows = argc > 5 ? atoi(argv[2]) : 32, cols = argc > 5 ? atoi(argv[3]) : 40;
    const int m = argc > 5 ? atoi(argv[4]) : 20, k = argc > 5 ? atoi(argv[5]) : 3;
    const int n = rows * cols;
    static const struct { const char *name; int algo, restarts; } cfg[] = {
        { "paper, 1 start", PNMF_ALGO_PAPER, 1 },
        { "paper, 10 restarts", PNMF_ALGO_PAPER, 10 },
        { "improved, 1 start", PNMF_ALGO_IMPROVED, 1 },
    };
    float *A = malloc(sizeof(float) * m * n), *Wt = malloc(sizeof(float) * k * n);
    float *W = malloc(sizeof(float) * k * n), *s = malloc(sizeof(float) * n);
    PnmfAtom *Ht = malloc(sizeof(PnmfAtom) * m * k), *H = malloc(sizeof(PnmfAtom) * m * k);
    printf("torus %dx%d, %d frames, k = %d, %d seeds\n\n", rows, cols, m, k, seeds);
    printf("| algorithm | objective / ground truth (median) | recovered | mean min NCC | seconds per fit |\n");
    printf("|---|---|---|---|---|\n");
    for (size_t c = 0; c < sizeof(cfg) / sizeof(cfg[0]); c++) {
        double *ratio = malloc(sizeof(double) * seeds), ncc_sum = 0, t = 0;
        int recovered = 0;
        for (int sd = 0; sd < seeds; sd++) {
            rs = 1000u + (unsigned)sd;
            make_scene(rows, cols, m, k, A, Wt, Ht);
            PnmfFitter *ft;
            if (pnmf_fitter_open(&ft, rows, cols, m, k, 1) < 0) return 1;
            pnmf_fitter_set_frames(ft, A, m);
            PnmfFitParams p = { k, cfg[c].algo, 30, 10, cfg[c].restarts, (uint64_t)sd + 1, 1e-4, 0, 0, 0, 0, 0, NULL };
            PnmfFitStats st = { 0 };
            const double t0 = now();
            pnmf_fitter_fit(ft, &p, W, H, &st);
            t += now() - t0;
            ratio[sd] = st.objective / pnmf_objective(rows, cols, A, m, Wt, k, Ht);
            double mn = 1;
            for (int i = 0; i < k; i++) {
                double b = 0;
                for (int l = 0; l < k; l++) b = fmax(b, max_ncc(rows, cols, Wt + i * n, W + l * n, s));
                mn = fmin(mn, b);
            }
            ncc_sum += mn;
            recovered += mn >= 0.95;
            pnmf_fitter_close(&ft);
        }
        for (int a = 1; a < seeds; a++) /* insertion sort for the median */
            for (int b = a; b > 0 && ratio[b] < ratio[b - 1]; b--) {
                double x = ratio[b]; ratio[b] = ratio[b - 1]; ratio[b - 1] = x;
            }
        printf("| %s | %.3g | %d/%d | %.3f | %.3f |\n", cfg[c].name, ratio[seeds / 2], recovered, seeds,
               ncc_sum / seeds, t / seeds);
        free(ratio);
    }
    free(A), free(Wt), free(W), free(s), free(Ht), free(H);
    return 0;
}
