/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The paper's algorithms against their definitions: dense permutation
 * matrices (section 2), brute force over shifts (3.1, 3.2), finite
 * differences (Appendix A), the W steps computed densely, how often the
 * fit's guards act, and recovery of known components. */
#include <stdlib.h>
#include <string.h>

#include "permnmf.h"
#include "pnmf/pnmf.h"
#include "test.h"

static unsigned rs = 12345;
static double urand(void) { rs = rs * 1103515245u + 12345u; return ((rs >> 8) & 0xFFFF) / 65536.0; }

/* The paper's sigma_p as a dense permutation matrix C^p: (C^p v)_i = v_{i+p}. */
static void dense_cp(int n, int p, double *P)
{
    memset(P, 0, sizeof(double) * n * n);
    for (int i = 0; i < n; i++) P[i * n + ((i + p) % n + n) % n] = 1;
}

/* 2-D: the matrix moving pixel (y,x) to (y+py, x+px) on the torus. */
static void dense_torus(int rows, int cols, int p, double *P)
{
    const int n = rows * cols, py = p / cols, px = p % cols;
    memset(P, 0, sizeof(double) * n * n);
    for (int y = 0; y < rows; y++)
        for (int x = 0; x < cols; x++)
            P[(((y + py) % rows) * cols + (x + px) % cols) * n + y * cols + x] = 1;
}

static void test_diamond(void)
{
    /* vector model: S_p = sigma_{-p} = C^{n-p}; the diamond product column
     * is sum_i h_i(w_i) = sum_i r_i P_{sigma} w_i (paper 2.1). */
    enum { N = 12, K = 3 };
    double P[N * N];
    float W[K * N], out[N];
    PnmfAtom h[K];
    for (int t = 0; t < 20; t++) {
        for (int i = 0; i < K * N; i++) W[i] = (float)urand();
        for (int i = 0; i < K; i++) h[i] = (PnmfAtom){ (float)urand(), (int)(urand() * N) % N };
        if (t == 0) h[1].r = 0;
        pnmf_diamond(1, N, W, K, h, out);
        double maxerr = 0;
        for (int r = 0; r < N; r++) {
            double s = 0;
            for (int i = 0; i < K; i++) {
                dense_cp(N, N - h[i].p, P);
                for (int c = 0; c < N; c++) s += h[i].r * P[r * N + c] * W[i * N + c];
            }
            maxerr = fmax(maxerr, fabs(s - out[r]));
        }
        CHECK_MSG(maxerr < 1e-5, "vector diamond err %g", maxerr);
    }
    /* torus model against the 2-D permutation matrix */
    enum { R = 3, C = 4, M = R * C };
    double Q[M * M];
    float W2[2 * M], out2[M];
    for (int t = 0; t < 20; t++) {
        for (int i = 0; i < 2 * M; i++) W2[i] = (float)urand();
        PnmfAtom h2[2] = { { (float)urand(), (int)(urand() * M) % M }, { (float)urand(), (int)(urand() * M) % M } };
        pnmf_diamond(R, C, W2, 2, h2, out2);
        double maxerr = 0;
        for (int r = 0; r < M; r++) {
            double s = 0;
            for (int i = 0; i < 2; i++) {
                dense_torus(R, C, h2[i].p, Q);
                for (int c = 0; c < M; c++) s += h2[i].r * Q[r * M + c] * W2[i * M + c];
            }
            maxerr = fmax(maxerr, fabs(s - out2[r]));
        }
        CHECK_MSG(maxerr < 1e-5, "torus diamond err %g", maxerr);
    }
    /* unshift is the transpose: <S_p a, b> = <a, S_{-p} b> */
    float a[M], b[M], sa[M], ub[M];
    for (int i = 0; i < M; i++) a[i] = (float)urand(), b[i] = (float)urand();
    for (int p = 0; p < M; p++) {
        memset(sa, 0, sizeof sa), memset(ub, 0, sizeof ub);
        pnmf_shift_add(R, C, sa, a, 1, p);
        pnmf_unshift_add(R, C, ub, b, 1, p);
        double l = 0, r = 0;
        for (int i = 0; i < M; i++) l += sa[i] * b[i], r += a[i] * ub[i];
        CHECK_NEAR(l, r, 1e-6);
    }
}

static double err_at(int rows, int cols, const float *v, const float *w, float r, int p)
{
    const int n = rows * cols;
    float *sw = calloc(n, sizeof(float));
    pnmf_shift_add(rows, cols, sw, w, r, p);
    double e = 0;
    for (int i = 0; i < n; i++) e += ((double)v[i] - sw[i]) * ((double)v[i] - sw[i]);
    free(sw);
    return e;
}

static void test_spnnls(void)
{
    static const int geo[][2] = { { 1, 23 }, { 1, 40 }, { 5, 6 }, { 8, 8 }, { 7, 9 } };
    int agree = 0, total = 0;
    for (int g = 0; g < 5; g++) {
        const int rows = geo[g][0], cols = geo[g][1], n = rows * cols;
        float *v = malloc(n * sizeof(float)), *w = malloc(n * sizeof(float));
        for (int t = 0; t < 40; t++) {
            double w2 = 0;
            for (int i = 0; i < n; i++) {
                v[i] = (float)(urand() - (t % 4 == 3 ? 0.7 : 0.2));
                w[i] = urand() < 0.3 ? (float)urand() : 0;
                w2 += (double)w[i] * w[i];
            }
            if (w2 == 0) w[0] = 1, w2 = 1;
            /* brute force: every shift, explicit inner products */
            double best = err_at(rows, cols, v, w, 0, 0);
            int bp = -1;
            for (int p = 0; p < n; p++) {
                float sw[4096] = { 0 };
                pnmf_shift_add(rows, cols, sw, w, 1, p);
                double c = 0;
                for (int i = 0; i < n; i++) c += (double)v[i] * sw[i];
                const double r = c > 0 ? c / w2 : 0;
                const double e = err_at(rows, cols, v, w, (float)r, p);
                if (e < best - 1e-9) best = e, bp = p;
            }
            PnmfAtom a = pnmf_spnnls(rows, cols, v, w);
            const double e = err_at(rows, cols, v, w, a.r, a.p);
            CHECK_MSG(e <= best + 1e-4 * (1 + best), "%dx%d: fft %g brute %g", rows, cols, e, best);
            if (bp < 0) CHECK(a.r == 0);
            agree += bp < 0 || a.p == bp;
            total++;
        }
        free(v), free(w);
    }
    CHECK_MSG(agree >= total - 2, "shift agreement %d/%d", agree, total);
}

/* n = 20, k = 2: the fraction of frames where the H solver reaches the
 * global optimum over all n^2 shift pairs x 2-variable NNLS. */
static double two_var_best(const float *v, const float *W, int n)
{
    double best = 0;
    for (int i = 0; i < n; i++) best += (double)v[i] * v[i];
    float s1[64], s2[64];
    for (int p1 = 0; p1 < n; p1++)
        for (int p2 = 0; p2 < n; p2++) {
            memset(s1, 0, sizeof s1), memset(s2, 0, sizeof s2);
            pnmf_shift_add(1, n, s1, W, 1, p1);
            pnmf_shift_add(1, n, s2, W + n, 1, p2);
            double a11 = 0, a12 = 0, a22 = 0, b1 = 0, b2 = 0;
            for (int i = 0; i < n; i++)
                a11 += s1[i] * s1[i], a12 += s1[i] * s2[i], a22 += s2[i] * s2[i], b1 += v[i] * s1[i], b2 += v[i] * s2[i];
            /* candidates: both free, each alone, none */
            double cand[4][2] = { { 0, 0 }, { b1 > 0 ? b1 / a11 : 0, 0 }, { 0, b2 > 0 ? b2 / a22 : 0 }, { 0, 0 } };
            const double det = a11 * a22 - a12 * a12;
            if (fabs(det) > 1e-12) {
                cand[3][0] = (b1 * a22 - b2 * a12) / det;
                cand[3][1] = (b2 * a11 - b1 * a12) / det;
            }
            for (int c = 0; c < 4; c++) {
                if (cand[c][0] < 0 || cand[c][1] < 0) continue;
                double e = 0;
                for (int i = 0; i < n; i++) {
                    const double d = v[i] - cand[c][0] * s1[i] - cand[c][1] * s2[i];
                    e += d * d;
                }
                if (e < best) best = e;
            }
        }
    return best;
}

/* One sweep of the paper's Multiple Permutation NNLS on the frame a, by
 * the definition: each component in turn gets the Single Permutation NNLS
 * of the frame minus the other atoms, every shift tried, with the dense
 * matrices S (S + p n^2 is S_p = C^{n-p}). A component that correlates
 * with no shift positively gets r = 0 and keeps its shift. */
static void ref_sweep(int n, const double *S, const float *a, const float *W, int k, PnmfAtom *h)
{
    double v[64];
    for (int i = 0; i < k; i++) {
        for (int x = 0; x < n; x++) v[x] = a[x];
        for (int l = 0; l < k; l++) {
            if (l == i || h[l].r == 0) continue;
            const double *P = S + (size_t)h[l].p * n * n;
            for (int x = 0; x < n; x++)
                for (int c = 0; c < n; c++) v[x] -= h[l].r * P[x * n + c] * W[l * n + c];
        }
        double w2 = 0, best = 0;
        int bp = -1;
        for (int x = 0; x < n; x++) w2 += (double)W[i * n + x] * W[i * n + x];
        for (int p = 0; p < n; p++) {
            const double *P = S + (size_t)p * n * n;
            double c = 0;
            for (int x = 0; x < n; x++)
                for (int y = 0; y < n; y++) c += v[x] * P[x * n + y] * W[i * n + y];
            if (c > best) best = c, bp = p;
        }
        if (bp >= 0) h[i] = (PnmfAtom){ (float)(best / w2), bp };
        else h[i].r = 0;
    }
}

/* n = 20, k = 2, on frames made hard for the paper's fixed order: the
 * second component is half the first's pattern, half its own, and twice
 * as bright. Visiting the first component first puts it on the brighter
 * copy of its pattern, and the sweeps then settle with the two swapped;
 * the greedy order places the atom that removes the most energy first,
 * the bright one where it is. */
static void test_mpnnls(void)
{
    enum { N = 20, M = 200 };
    float W[2 * N], *A = malloc(sizeof(float) * M * N);
    PnmfAtom *H = calloc(M * 2, sizeof(PnmfAtom)), *Hg = calloc(M * 2, sizeof(PnmfAtom));
    PnmfAtom *Hk = calloc(M * 2, sizeof(PnmfAtom)), *H0 = malloc(sizeof(PnmfAtom) * M * 2);
    double *S = malloc(sizeof(double) * N * N * N);
    rs = 12345; /* this test's figures do not depend on what ran before it */
    for (int p = 0; p < N; p++) dense_cp(N, (N - p) % N, S + (size_t)p * N * N);
    for (int i = 0; i < N; i++) W[i] = urand() < 0.5 ? (float)urand() : 0;
    for (int i = 0; i < N; i++) W[N + i] = (float)(0.5 * W[i] + 0.5 * (urand() < 0.5 ? urand() : 0));
    for (int j = 0; j < M; j++) {
        memset(A + j * N, 0, N * sizeof(float));
        pnmf_shift_add(1, N, A + j * N, W, (float)(0.5 + urand()), (int)(urand() * N) % N);
        pnmf_shift_add(1, N, A + j * N, W + N, (float)(2 * (0.5 + urand())), (int)(urand() * N) % N);
        for (int i = 0; i < N; i++) A[j * N + i] += (float)(0.05 * urand());
    }
    PnmfFitter *ft;
    CHECK(pnmf_fitter_open(&ft, 1, N, M, 2, 1) == 0);
    pnmf_fitter_set_frames(ft, A, M);

    /* one cyclic sweep from arbitrary atoms against the definition */
    for (int q = 0; q < 2 * M; q++) H0[q] = (PnmfAtom){ (float)(0.5 + 2 * urand()), (int)(urand() * N) % N };
    memcpy(H, H0, sizeof(PnmfAtom) * M * 2);
    CHECK_MSG(pnmf_fitter_h_step(ft, W, 2, H, PNMF_H_CYCLIC, 1) == 0, "a sweep had to be undone");
    int same = 0;
    double worst_r = 0;
    for (int j = 0; j < M; j++) {
        PnmfAtom ref[2] = { H0[2 * j], H0[2 * j + 1] };
        ref_sweep(N, S, A + j * N, W, 2, ref);
        int ok = 1;
        for (int i = 0; i < 2; i++) {
            const PnmfAtom x = H[2 * j + i];
            const double d = fabs((double)x.r - ref[i].r) / fmax(1e-6, ref[i].r);
            ok &= x.p == ref[i].p && d <= 1e-4;
            if (x.p == ref[i].p) worst_r = fmax(worst_r, d);
        }
        same += ok;
    }
    printf("one cyclic sweep by the definition: %d/%d frames the same (coefficients within %.1e)\n", same, M, worst_r);
    CHECK_MSG(same >= M - 2, "the sweep differs from the definition in %d frames", M - same);

    /* converged sweeps from zero: the paper's order, the greedy order alone,
     * and the fit's keep-the-better of the two */
    memset(H, 0, sizeof(PnmfAtom) * M * 2);
    CHECK_MSG(pnmf_fitter_h_step(ft, W, 2, H, PNMF_H_CYCLIC, 10) == 0, "cyclic sweeps undone");
    CHECK(pnmf_fitter_h_step(ft, W, 2, Hg, PNMF_H_GREEDY_ONLY, 10) == 0);
    CHECK_MSG(pnmf_fitter_h_step(ft, W, 2, Hk, PNMF_H_GREEDY, 10) == 0, "cyclic sweeps undone");
    int hit_c = 0, hit_g = 0, hit_k = 0, c_wins = 0, g_wins = 0, fixed = 0;
    worst_r = 0;
    for (int j = 0; j < M; j++) {
        const double best = two_var_best(A + j * N, W, N);
        const double ec = pnmf_objective(1, N, A + j * N, 1, W, 2, H + 2 * j);
        const double eg = pnmf_objective(1, N, A + j * N, 1, W, 2, Hg + 2 * j);
        const double ek = pnmf_objective(1, N, A + j * N, 1, W, 2, Hk + 2 * j);
        /* within 1%: the sweeps stop while the coefficients of overlapping
         * components still creep towards their optimum (the fixed-point
         * check below), so a tighter bound would count sweeps, not the
         * shifts each order finds */
        hit_c += ec <= best * (1 + 1e-2) + 1e-6;
        hit_g += eg <= best * (1 + 1e-2) + 1e-6;
        hit_k += ek <= best * (1 + 1e-2) + 1e-6;
        c_wins += ec < eg * (1 - 1e-2);
        g_wins += eg < ec * (1 - 1e-2);
        /* nothing beats the global optimum */
        CHECK(fmin(ec, fmin(eg, ek)) >= best * (1 - 1e-4) - 1e-6);
        /* converged sweeps are a fixed point in the shifts: each atom's
         * shift is the Single Permutation NNLS's on the residual without
         * it; the last atom of the order is that minimiser exactly, the
         * first within what the sweeps' stopping rule leaves (a sweep
         * stops them once no coefficient moves 0.1%, and with overlapping
         * components each sweep closes only part of the remaining gap:
         * 1.8% here, 5% allowed) */
        int ok = 1;
        for (int i = 0; i < 2; i++) {
            float v[N];
            memcpy(v, A + j * N, sizeof v);
            const PnmfAtom o = H[2 * j + 1 - i], h = H[2 * j + i];
            pnmf_shift_add(1, N, v, W + (1 - i) * N, -o.r, o.p);
            PnmfAtom a = pnmf_spnnls(1, N, v, W + i * N);
            ok &= a.r > 0 && h.r > 0 && a.p == h.p;
            if (i == 1) ok &= err_at(1, N, v, W + N, h.r, h.p) <= err_at(1, N, v, W + N, a.r, a.p) * (1 + 1e-4) + 1e-6;
            else worst_r = fmax(worst_r, fabs(h.r - a.r) / a.r);
        }
        fixed += ok;
    }
    printf("n=20 k=2 global optimum: cyclic %d/%d, greedy %d/%d, keep the better %d/%d; lower objective: "
           "greedy %d, cyclic %d frames; fixed points %d/%d (first coefficient within %.2g)\n",
           hit_c, M, hit_g, M, hit_k, M, g_wins, c_wins, fixed, M, worst_r);
    /* The margins hold on each of eight other draws of this data (seeds
     * 1-8): cyclic 58-179 optima, greedy 170-196, keep the better 180-200;
     * greedy lower in 20-140 frames, cyclic in 2-14. The greedy order run
     * in the paper's fixed order instead fails them (2 more optima than
     * cyclic, lower in 11 frames): what they measure is the order. */
    CHECK_MSG(hit_g >= hit_c + M / 20, "greedy %d optima, cyclic %d", hit_g, hit_c);
    CHECK_MSG(g_wins >= 3 * c_wins && g_wins >= M / 10, "greedy lower in %d frames, cyclic in %d", g_wins, c_wins);
    CHECK_MSG(hit_k >= 0.85 * M, "keep the better reached the optimum in %d/%d frames", hit_k, M);
    CHECK_MSG(fixed >= M - 2 && worst_r < 0.05, "fixed points %d/%d, first coefficient within %g", fixed, M, worst_r);
    pnmf_fitter_close(&ft);
    free(A), free(H), free(Hg), free(Hk), free(H0), free(S);
}

static void test_gradient(void)
{
    enum { R = 5, C = 6, N = R * C, K = 2, M = 4 };
    float A[M * N], W[K * N], G[K * N];
    PnmfAtom H[M * K];
    for (int i = 0; i < M * N; i++) A[i] = (float)urand();
    for (int i = 0; i < K * N; i++) W[i] = (float)urand();
    for (int i = 0; i < M * K; i++) H[i] = (PnmfAtom){ (float)(0.2 + urand()), (int)(urand() * N) % N };
    pnmf_w_gradient(R, C, A, M, W, K, H, G);
    double maxrel = 0;
    for (int q = 0; q < K * N; q++) {
        const float h = 1.0f / 64, w0 = W[q];
        W[q] = w0 + h;
        const double fp = pnmf_objective(R, C, A, M, W, K, H);
        W[q] = w0 - h;
        const double fm = pnmf_objective(R, C, A, M, W, K, H);
        W[q] = w0;
        const double fd = (fp - fm) / (2 * h); /* exact for a quadratic */
        maxrel = fmax(maxrel, fabs(fd - G[q]) / fmax(1, fabs(fd)));
    }
    CHECK_MSG(maxrel < 1e-3, "gradient vs finite differences: %g", maxrel);
}

/* Synthetic sprites: k textured blobs moving on a torus. */
static void make_scene(int rows, int cols, int m, int k, float *A, float *Wt, PnmfAtom *Ht, int noise)
{
    const int n = rows * cols;
    memset(Wt, 0, sizeof(float) * k * n);
    for (int i = 0; i < k; i++)
        for (int y = 0; y < 4 + i; y++)
            for (int x = 0; x < 5; x++)
                if ((x + y * i) % 3 || i == 0) Wt[i * n + y * cols + x] = (float)(0.5 + 0.5 * urand());
    for (int j = 0; j < m; j++) {
        memset(A + j * n, 0, sizeof(float) * n);
        for (int i = 0; i < k; i++) {
            PnmfAtom a = { (float)(100 + 100 * urand()), (int)(urand() * n) % n };
            Ht[j * k + i] = a;
            pnmf_shift_add(rows, cols, A + j * n, Wt + i * n, a.r, a.p);
        }
        for (int x = 0; x < n; x++) A[j * n + x] += (float)(noise * urand());
    }
}

/* Max over all shifts of the normalised cross-correlation. */
static double max_ncc(int rows, int cols, const float *a, const float *b)
{
    const int n = rows * cols;
    double na = 0, nb = 0, best = 0;
    for (int i = 0; i < n; i++) na += (double)a[i] * a[i], nb += (double)b[i] * b[i];
    if (na == 0 || nb == 0) return 0;
    float *s = malloc(sizeof(float) * n);
    for (int p = 0; p < n; p++) {
        memset(s, 0, sizeof(float) * n);
        pnmf_shift_add(rows, cols, s, b, 1, p);
        double c = 0;
        for (int i = 0; i < n; i++) c += (double)a[i] * s[i];
        best = fmax(best, c / sqrt(na * nb));
    }
    free(s);
    return best;
}

/* The worst match of a true component among the fitted ones (the best
 * normalized circular cross-correlation of each true component). */
static double recovery(int rows, int cols, int k, const float *Wt, const float *W)
{
    const size_t n = (size_t)rows * cols;
    double worst = 1;
    for (int i = 0; i < k; i++) {
        double b = 0;
        for (int l = 0; l < k; l++) b = fmax(b, max_ncc(rows, cols, Wt + i * n, W + l * n));
        worst = fmin(worst, b);
    }
    return worst;
}

static void test_fit(int algo, int threads_check)
{
    enum { R = 16, C = 20, N = R * C, M = 12, K = 3 };
    float *A = malloc(sizeof(float) * M * N), Wt[K * N], W[K * N], W2[K * N];
    PnmfAtom Ht[M * K], H[M * K], H2[M * K];
    make_scene(R, C, M, K, A, Wt, Ht, 4);
    PnmfFitter *ft;
    CHECK(pnmf_fitter_open(&ft, R, C, M, K, 1) == 0);
    pnmf_fitter_set_frames(ft, A, M);
    double trace[41];
    PnmfFitParams p = { K, algo, 40, 10, algo == PNMF_ALGO_PAPER ? 10 : 1, 7, 1e-6, 0, 0, 0, 0, 0, NULL };
    PnmfFitStats st = { 0 };
    st.trace = trace;
    CHECK(pnmf_fitter_fit(ft, &p, W, H, &st) == 0);
    /* Every step is a block minimisation or a safe descent step, so the
     * objective falls by the mathematics; the guards that undo a step made
     * worse by float rounding keep the trace monotone whatever happens, so
     * what is checked is how often and by how much they had to act: never
     * for W; for H, in a few frames near convergence, where a sweep moves
     * coefficients by float noise, and by rises of rounding size only
     * (below 1e-7 of the frame's energy; 1e-6 allowed) */
    CHECK_MSG(st.guard_rejects_w == 0, "W steps undone: %d", st.guard_rejects_w);
    CHECK_MSG(st.guard_rejects_h * 10 <= M * (p.iterations + 1) * p.restarts, "frame H steps undone: %d",
              st.guard_rejects_h);
    CHECK_MSG(st.guard_rise_h < 1e-6, "a frame H step undone rose by %g of the frame's energy", st.guard_rise_h);
    CHECK_MSG(trace[st.iterations] < 0.2 * trace[0], "the fit barely descends: %g -> %g", trace[0],
              trace[st.iterations]);
    CHECK_NEAR(st.objective, pnmf_objective(R, C, A, M, W, K, H), 1e-9);
    const double minncc = recovery(R, C, K, Wt, W);
    const double fgt = pnmf_objective(R, C, A, M, Wt, K, Ht);
    printf("algo %s: objective %.4g (ground truth %.4g), %d iterations, restart %d kept, min NCC %.4f, guard rejects %d (largest rise %.2g)\n",
           algo ? "improved" : "paper", st.objective, fgt, st.iterations, st.best_restart, minncc,
           st.guard_rejects_h + st.guard_rejects_w, st.guard_rise_h);
    if (algo == PNMF_ALGO_IMPROVED) CHECK_MSG(minncc > 0.95, "recovery NCC %g", minncc);
    if (threads_check) {
        PnmfFitter *ft2;
        CHECK(pnmf_fitter_open(&ft2, R, C, M, K, 3) == 0);
        pnmf_fitter_set_frames(ft2, A, M);
        st.trace = NULL;
        CHECK(pnmf_fitter_fit(ft2, &p, W2, H2, &st) == 0);
        CHECK(memcmp(W, W2, sizeof W) == 0 && memcmp(H, H2, sizeof H) == 0);
        pnmf_fitter_close(&ft2);
        /* the canvas model's mask covering the whole torus (all ones) is
         * the torus model: the same components and entries, bit for bit */
        CHECK(pnmf_fitter_open(&ft2, R, C, M, K, 1) == 0);
        CHECK(pnmf_fitter_set_options(ft2, R, C, 0) == 0);
        pnmf_fitter_set_frames(ft2, A, M);
        CHECK(pnmf_fitter_fit(ft2, &p, W2, H2, &st) == 0);
        CHECK(memcmp(W, W2, sizeof W) == 0 && memcmp(H, H2, sizeof H) == 0);
        CHECK_NEAR(pnmf_fitter_objective(ft2, W2, K, H2), pnmf_objective(R, C, A, M, W, K, H), 1e-9);
        pnmf_fitter_close(&ft2);
    }
    pnmf_fitter_close(&ft);
    free(A);
}

/* The W steps by their definitions, in double with the dense torus
 * matrices S (S + p n^2 is S_p): E_j = a_j - sum_i r_ji S_ji w_i. */
static void ref_residuals(int n, const double *S, const float *A, int m, const double *W, int k,
                          const PnmfAtom *H, double *E)
{
    for (int j = 0; j < m; j++)
        for (int d = 0; d < n; d++) {
            double v = A[j * n + d];
            for (int i = 0; i < k; i++) {
                const PnmfAtom a = H[j * k + i];
                const double *P = S + (size_t)a.p * n * n + (size_t)d * n;
                for (int x = 0; x < n; x++) v -= a.r * P[x] * W[i * n + x];
            }
            E[j * n + d] = v;
        }
}

/* HALS: for each component in turn, the exact minimiser over w_i >= 0 with
 * the others fixed. S_p^T S_p = I makes the block's Hessian
 * 2 sum_j r_ji^2 I, so it is w_i + sum_j r_ji S_ji^T E_j / sum_j r_ji^2,
 * clamped at 0. */
static void ref_hals(int n, const double *S, const float *A, int m, double *W, int k, const PnmfAtom *H)
{
    double *E = malloc(sizeof(double) * m * n), *dw = malloc(sizeof(double) * n);
    ref_residuals(n, S, A, m, W, k, H, E);
    for (int i = 0; i < k; i++) {
        double den = 0;
        for (int j = 0; j < m; j++) den += (double)H[j * k + i].r * H[j * k + i].r;
        if (den <= 0) continue;
        for (int x = 0; x < n; x++) {
            double g = 0;
            for (int j = 0; j < m; j++) {
                const PnmfAtom a = H[j * k + i];
                const double *P = S + (size_t)a.p * n * n;
                for (int d = 0; d < n; d++) g += a.r * P[d * n + x] * E[j * n + d];
            }
            dw[x] = fmax(0, W[i * n + x] + g / den) - W[i * n + x];
        }
        for (int j = 0; j < m; j++) {
            const PnmfAtom a = H[j * k + i];
            const double *P = S + (size_t)a.p * n * n;
            for (int d = 0; d < n; d++)
                for (int x = 0; x < n; x++) E[j * n + d] -= a.r * P[d * n + x] * dw[x];
        }
        for (int x = 0; x < n; x++) W[i * n + x] += dw[x];
    }
    free(E), free(dw);
}

/* The gradient G = -2 sum_j r_ji S_ji^T E_j (Appendix A), and the largest
 * eigenvalue of B^T B, B the linear map W -> (sum_i r_ji S_ji w_i)_j: the
 * gradient's Lipschitz constant is twice it. Power iteration on the dense
 * products, from below. */
static double ref_gradient_lmax(int n, const double *S, const float *A, int m, const double *W, int k,
                                const PnmfAtom *H, double *G)
{
    double *E = malloc(sizeof(double) * m * n), *v = malloc(sizeof(double) * k * n);
    double *u = malloc(sizeof(double) * m * n), *z = malloc(sizeof(double) * k * n);
    ref_residuals(n, S, A, m, W, k, H, E);
    for (int i = 0; i < k; i++)
        for (int x = 0; x < n; x++) {
            double g = 0;
            for (int j = 0; j < m; j++) {
                const PnmfAtom a = H[j * k + i];
                for (int d = 0; d < n; d++) g += a.r * S[(size_t)a.p * n * n + (size_t)d * n + x] * E[j * n + d];
            }
            G[i * n + x] = -2 * g;
        }
    for (int q = 0; q < k * n; q++) v[q] = 1 + 0.1 * (q % 7);
    double lam = 0;
    for (int it = 0; it < 300; it++) {
        /* u = B v, z = B^T u */
        for (int j = 0; j < m; j++)
            for (int d = 0; d < n; d++) {
                double s = 0;
                for (int i = 0; i < k; i++) {
                    const PnmfAtom a = H[j * k + i];
                    const double *P = S + (size_t)a.p * n * n + (size_t)d * n;
                    for (int x = 0; x < n; x++) s += a.r * P[x] * v[i * n + x];
                }
                u[j * n + d] = s;
            }
        double nz = 0;
        for (int i = 0; i < k; i++)
            for (int x = 0; x < n; x++) {
                double s = 0;
                for (int j = 0; j < m; j++) {
                    const PnmfAtom a = H[j * k + i];
                    for (int d = 0; d < n; d++) s += a.r * S[(size_t)a.p * n * n + (size_t)d * n + x] * u[j * n + d];
                }
                z[i * n + x] = s;
                nz += s * s;
            }
        nz = sqrt(nz);
        double nv = 0;
        for (int q = 0; q < k * n; q++) nv += v[q] * v[q];
        lam = nz / sqrt(nv);
        for (int q = 0; q < k * n; q++) v[q] = z[q] / nz;
    }
    free(E), free(v), free(u), free(z);
    return lam;
}

static void test_w_steps(void)
{
    enum { R = 6, C = 7, N = R * C, M = 8, K = 3 };
    float A[M * N], W[K * N], Wb[K * N], G[K * N];
    double Wd[K * N], Gd[K * N];
    PnmfAtom H[M * K];
    double *S = malloc(sizeof(double) * N * N * N);
    for (int p = 0; p < N; p++) dense_torus(R, C, p, S + (size_t)p * N * N);
    for (int i = 0; i < M * N; i++) A[i] = (float)(10 * urand());
    for (int mode = 0; mode < 2; mode++) {
        for (int i = 0; i < K * N; i++) W[i] = (float)urand();
        for (int i = 0; i < M * K; i++) H[i] = (PnmfAtom){ (float)(0.5 + urand()), (int)(urand() * N) % N };
        PnmfFitter *ft;
        pnmf_fitter_open(&ft, R, C, M, K, 2);
        pnmf_fitter_set_frames(ft, A, M);
        const double f0 = pnmf_objective(R, C, A, M, W, K, H);
        double maxerr = 0, Lmin = INFINITY, Lmax = 0, lam = 0;
        int undone = 0;
        for (int it = 0; it < 10; it++) {
            /* the guard that undoes a step made worse by rounding must not
             * act: the step itself descends */
            memcpy(Wb, W, sizeof W);
            undone += pnmf_fitter_w_step(ft, W, K, H, mode, 1) != 0;
            double wmax = 1;
            for (int q = 0; q < K * N; q++) Wd[q] = Wb[q], wmax = fmax(wmax, fabs(Wb[q]));
            if (mode == PNMF_W_HALS) {
                ref_hals(N, S, A, M, Wd, K, H);
            } else {
                /* one projected gradient step max(0, W - G / L): L from the
                 * step's unclamped entries by least squares, then every
                 * entry against it */
                lam = ref_gradient_lmax(N, S, A, M, Wd, K, H, Gd);
                double num = 0, den = 0;
                for (int q = 0; q < K * N; q++)
                    if (W[q] > 0) num += (Wb[q] - W[q]) * Gd[q], den += Gd[q] * Gd[q];
                const double t = num / den;
                Lmin = fmin(Lmin, 1 / (t * lam)), Lmax = fmax(Lmax, 1 / (t * lam));
                for (int q = 0; q < K * N; q++) Wd[q] = fmax(0, Wb[q] - t * Gd[q]);
            }
            for (int q = 0; q < K * N; q++) maxerr = fmax(maxerr, fabs(W[q] - Wd[q]) / wmax);
        }
        const double f = pnmf_objective(R, C, A, M, W, K, H);
        printf("W step %s: objective %.4g -> %.4g in 10 steps, off the definition by %.2g", mode ? "HALS" : "PG", f0,
               f, maxerr);
        if (mode == PNMF_W_PG) printf(", L = %.4f..%.4f lambda_max(B^T B)", Lmin, Lmax);
        printf("\n");
        CHECK_MSG(maxerr < 1e-4, "W step mode %d off its definition by %g", mode, maxerr);
        /* 1/L with L at least the gradient's Lipschitz constant 2 lambda_max
         * makes the step a descent step; the bound is about 1% above it */
        if (mode == PNMF_W_PG) CHECK_MSG(Lmin >= 2 * (1 - 1e-4) && Lmax <= 2 * 1.02, "L/lambda %g..%g", Lmin, Lmax);
        CHECK_MSG(undone == 0, "W step mode %d was undone %d times", mode, undone);
        CHECK_MSG(f < 0.5 * f0, "W step mode %d barely descends: %g -> %g", mode, f0, f);
        if (mode == PNMF_W_HALS) {
            /* the last component of a sweep is an exact block minimiser:
             * KKT, gradient ~0 where w > 0 and >= 0 where w = 0 */
            pnmf_w_gradient(R, C, A, M, W, K, H, G);
            double viol = 0, scale = 0;
            for (int x = 0; x < N; x++) {
                const float g = G[(K - 1) * N + x];
                scale = fmax(scale, fabs(g));
                viol = fmax(viol, W[(K - 1) * N + x] > 0 ? fabs(g) : fmax(0, -g));
            }
            CHECK_MSG(viol <= 1e-3 * fmax(1, scale), "HALS KKT violation %g (scale %g)", viol, scale);
        }
        pnmf_fitter_close(&ft);
    }
    free(S);
}

/* The fitter adds each component over its support only (the box of its
 * nonzero pixels): the objective must be the definition's, to the bit,
 * with supports near the torus's edges, shifts that wrap them round, a
 * component with one pixel and one with none. */
static void test_supports(void)
{
    enum { R = 9, C = 11, N = R * C, M = 6, K = 4 };
    static float A[M * N], W[K * N];
    static PnmfAtom H[M * K];
    unsigned seed = 7;
    for (int q = 0; q < M * N; q++) seed = seed * 1103515245u + 12345u, A[q] = (float)((seed >> 9) % 1000) / 7.0f;
    memset(W, 0, sizeof W);
    for (int y = 6; y < 9; y++) /* a 3x4 block in the bottom right corner */
        for (int x = 7; x < 11; x++) W[y * C + x] = 1.0f + (float)(y * x % 5);
    for (int y = 0; y < R; y++) W[N + y * C + 0] = 0.5f + y, W[N + y * C + 10] = 2.0f; /* two edge columns */
    W[2 * N + 4 * C + 5] = 3.0f; /* one pixel; component 3 stays empty */
    for (int j = 0; j < M; j++)
        for (int i = 0; i < K; i++) {
            seed = seed * 1103515245u + 12345u;
            H[j * K + i] = (PnmfAtom){ (j + i) % 3 ? 0.25f + (float)((seed >> 12) % 9) : 0, (int)((seed >> 4) % N) };
        }
    PnmfFitter *ft;
    CHECK(pnmf_fitter_open(&ft, R, C, M, K, 2) == 0);
    for (int j = 0; j < M; j++) { /* a frame at a time: both sum its squares in the same order */
        CHECK(pnmf_fitter_set_frames(ft, A + j * N, 1) == 0);
        const double f = pnmf_fitter_objective(ft, W, K, H + j * K);
        const double g = pnmf_objective(R, C, A + j * N, 1, W, K, H + j * K);
        CHECK_MSG(f == g, "frame %d: objective over the supports %.17g, by the definition %.17g", j, f, g);
    }
    pnmf_fitter_close(&ft);
}

/* The shift ambiguity (pnmf_recentre): components whose supports straddle
 * the torus edges, moved so that their centres of mass sit at the torus
 * centre, with every shift moved to match, reconstruct every frame to the
 * bit; a fit that recentres after each W step still descends without its
 * guards acting, recovers the parts, and leaves them centred. */
static void test_recentre(void)
{
    enum { R = 16, C = 20, N = R * C, M = 12, K = 3 };
    float W[K * N], W0[K * N], out[N], out0[N];
    PnmfAtom H[M * K], H0[M * K];
    for (int i = 0; i < K; i++)
        for (int q = 0; q < N; q++) {
            const int y = q / C, x = q % C;
            /* a 5 x 6 patch whose top-left corner is near the torus corner, so it wraps */
            const int dy = (y - (R - 2 - i) + R) % R, dx = (x - (C - 3 + i) + C) % C;
            W[i * N + q] = dy < 5 && dx < 6 ? (float)(0.2 + urand()) : 0.0f;
        }
    for (int q = 0; q < M * K; q++) H[q].r = (float)(0.5 + urand()), H[q].p = (int32_t)(urand() * N);
    memcpy(W0, W, sizeof W), memcpy(H0, H, sizeof H);
    pnmf_recentre(R, C, W, K, H, M);
    int same = 1, moved = 0;
    for (int j = 0; j < M; j++) {
        pnmf_diamond(R, C, W0, K, H0 + j * K, out0);
        pnmf_diamond(R, C, W, K, H + j * K, out);
        same &= !memcmp(out, out0, sizeof out);
        for (int i = 0; i < K; i++) moved += H[j * K + i].p != H0[j * K + i].p;
    }
    CHECK_MSG(same && moved == M * K, "reconstruction changed (%d) or shifts not moved (%d of %d)", !same, moved,
              M * K);
    /* centred: the box of each support is around (R/2, C/2), not wrapping */
    for (int i = 0; i < K; i++) {
        int y0 = R, y1 = -1, x0 = C, x1 = -1;
        for (int q = 0; q < N; q++)
            if (W[i * N + q] != 0) {
                const int y = q / C, x = q % C;
                y0 = y < y0 ? y : y0, y1 = y > y1 ? y : y1, x0 = x < x0 ? x : x0, x1 = x > x1 ? x : x1;
            }
        CHECK_MSG(y1 - y0 == 4 && x1 - x0 == 5 && abs((y0 + y1) / 2 - R / 2) <= 1 && abs((x0 + x1) / 2 - C / 2) <= 1,
                  "component %d at rows %d..%d, columns %d..%d", i, y0, y1, x0, x1);
    }
    /* a whole fit with recentring */
    float *A = malloc(sizeof(float) * M * N), Wt[K * N];
    PnmfAtom Ht[M * K];
    make_scene(R, C, M, K, A, Wt, Ht, 4);
    PnmfFitter *ft;
    CHECK(pnmf_fitter_open(&ft, R, C, M, K, 1) == 0);
    pnmf_fitter_set_frames(ft, A, M);
    double trace[41];
    PnmfFitParams p = { K, PNMF_ALGO_IMPROVED, 40, 10, 1, 7, 1e-6, 0, 0, 1, 0, 0, NULL };
    PnmfFitStats st = { 0 };
    st.trace = trace;
    CHECK(pnmf_fitter_fit(ft, &p, W, H, &st) == 0);
    /* recentring changes no reconstruction: the steps still descend by
     * themselves, the guards acting on rounding only (as in test_fit) */
    CHECK_MSG(st.guard_rejects_w == 0, "W steps undone with recentring: %d", st.guard_rejects_w);
    CHECK_MSG(st.guard_rejects_h * 10 <= M * (p.iterations + 1), "frame H steps undone with recentring: %d",
              st.guard_rejects_h);
    CHECK_MSG(st.guard_rise_h < 1e-6, "a frame H step undone rose by %g of the frame's energy", st.guard_rise_h);
    printf("recentring fit: objective %.4g -> %.4g, guard rejects %d (largest rise %.2g)\n", trace[0],
           trace[st.iterations], st.guard_rejects_h + st.guard_rejects_w, st.guard_rise_h);
    CHECK_MSG(trace[st.iterations] < 0.2 * trace[0], "the fit with recentring barely descends: %g -> %g", trace[0],
              trace[st.iterations]);
    CHECK_NEAR(st.objective, pnmf_objective(R, C, A, M, W, K, H), 1e-9);
    const double minncc = recovery(R, C, K, Wt, W);
    CHECK_MSG(minncc > 0.95, "recovery NCC %g with recentring", minncc);
    pnmf_fitter_close(&ft);
    free(A);
}

/* PnmfFitParams.warm_k / warm_it: a fit of n iterations, stopped and
 * continued for m more, is the fit of n + m iterations, bit for bit, even
 * when the frames' invisible part was imputed from another model in
 * between (the encoder codes the model at the stop) and the automatic
 * size chose fewer components than k. */
static void test_warm_continue(void)
{
    enum { R = 16, C = 20, M = 8, K = 3, N = R * C };
    float *A = malloc(sizeof(float) * M * N), Wt[K * N], W1[K * N], W2[K * N], Wx[K * N];
    PnmfAtom Ht[M * K], H1[M * K], H2[M * K];
    make_scene(R, C, M, K, A, Wt, Ht, 4);
    PnmfFitter *ft;
    CHECK(pnmf_fitter_open(&ft, R, C, M, K, 1) == 0);
    CHECK(pnmf_fitter_set_options(ft, R - 3, C - 2, 0) == 0); /* masked, as a padded frame */
    for (int auto_size = 0; auto_size < 2; auto_size++) {
        PnmfFitParams p = { K, PNMF_ALGO_IMPROVED, 12, 10, 1, 3, 0, auto_size ? 5000.0 : 0, 0, 0, 0, 0, NULL };
        PnmfFitStats s1 = { 0 }, s2 = { 0 }, s3 = { 0 };
        pnmf_fitter_set_frames(ft, A, M);
        CHECK(pnmf_fitter_fit(ft, &p, W1, H1, &s1) == 0);
        CHECK_MSG(s1.iterations == 12, "the whole fit ran %d iterations", s1.iterations);
        pnmf_fitter_set_frames(ft, A, M);
        p.iterations = 5;
        CHECK(pnmf_fitter_fit(ft, &p, W2, H2, &s2) == 0);
        /* another model's imputation, then the fit's own again */
        for (int q = 0; q < K * N; q++) Wx[q] = W2[q] * 0.5f + 0.25f;
        CHECK(pnmf_fitter_impute(ft, Wx, K, H2) == 0);
        CHECK(pnmf_fitter_impute(ft, W2, K, H2) == 0);
        p.warm_k = s2.k_used, p.warm_it = 5, p.add_lambda = 0, p.iterations = 7;
        CHECK(pnmf_fitter_fit(ft, &p, W2, H2, &s3) == 0);
        CHECK_MSG(s1.k_used == s2.k_used, "sizes %d and %d", s1.k_used, s2.k_used);
        CHECK_MSG(!memcmp(W1, W2, sizeof(W1)) && !memcmp(H1, H2, sizeof(H1)),
                  "continued fit differs from the whole one (automatic size %d)", auto_size);
        CHECK(s3.objective == s1.objective);
        CHECK_MSG(auto_size ? s1.k_used < K : s1.k_used == K, "%d components used", s1.k_used);
        /* counted from 1 instead (warm_it 0) the greedy H steps fall elsewhere, and both differ */
    }
    pnmf_fitter_close(&ft);
    free(A);
}

int main(void)
{
    test_recentre();
    test_supports();
    test_diamond();
    test_spnnls();
    test_mpnnls();
    test_gradient();
    test_w_steps();
    test_fit(PNMF_ALGO_IMPROVED, 1);
    test_fit(PNMF_ALGO_PAPER, 0);
    test_warm_continue();
    return test_summary("test_permnmf");
}
