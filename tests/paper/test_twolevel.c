/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The two-level decomposition (paper 3.4) and the shift models of
 * pnmf/fit.h against their definitions:
 *  - the combined H2^T <> H1^T against dense permutation matrices
 *    (paper 2.1: (A <> M) <> N = A <> (M <> N));
 *  - a tiny noise-free two-level fit whose combined entries are, shift for
 *    shift, the copies placed in the data;
 *  - the vector model equals the torus model exactly when no pixel of the
 *    object crosses the top/bottom edge, for the
 *    shift operator and for the best fit of a known component;
 *  - argument checks of the public entry points.
 */
#include <stdlib.h>
#include <string.h>

#include "pnmf/fit.h"
#include "test.h"
#include "twolevel.h"

static unsigned rs = 4242;
static double urand(void) { rs = rs * 1103515245u + 12345u; return ((rs >> 8) & 0xFFFF) / 65536.0; }

/* ---- dense definitions --------------------------------------------------- */

/* The n x n matrix of S_p in image coordinates, from the definitions:
 * torus: pixel (y,x) goes to (y+dy mod H, x+dx mod W); vector: the
 * column-stacked index x*H+y goes to x*H+y+p mod n. P[dst * n + src]. */
static void dense_shift(int model, int W, int H, int32_t p, double *P)
{
    const int n = W * H;
    memset(P, 0, sizeof(double) * n * n);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            int ty, tx;
            if (model == PNMF_SHIFT_TORUS) {
                ty = (y + p / W) % H, tx = (x + p % W) % W;
            } else {
                const int q = (x * H + y + p) % n;
                ty = q % H, tx = q / H;
            }
            P[(ty * W + tx) * n + y * W + x] = 1;
        }
}

/* out += r * P v */
static void dense_apply(int n, const double *P, double r, const double *v, double *out)
{
    for (int a = 0; a < n; a++) {
        double s = 0;
        for (int b = 0; b < n; b++) s += P[a * n + b] * v[b];
        out[a] += r * s;
    }
}

/* ---- combine against the dense product ----------------------------------- */

static void test_combine_dense(int model)
{
    enum { W = 4, H = 3, N = W * H, M = 5, K = 4, Kk = 3 };
    const int rows = model == PNMF_SHIFT_TORUS ? H : 1, cols = model == PNMF_SHIFT_TORUS ? W : N;
    double *P = malloc(sizeof(double) * N * N);
    double V[Kk * N], W1[K * N], lhs[N], rhs[N];
    PnmfAtom H1[M * K], H2[K * Kk];
    int start[M + 1];
    PnmfTwoLevelEntry ent[M * K * Kk];
    for (int trial = 0; trial < 20; trial++) {
        for (int q = 0; q < Kk * N; q++) V[q] = urand();
        for (int q = 0; q < M * K; q++)
            H1[q] = (PnmfAtom){ urand() < 0.25 ? 0 : (float)urand(), (int)(urand() * N) % N };
        for (int q = 0; q < K * Kk; q++)
            H2[q] = (PnmfAtom){ urand() < 0.3 ? 0 : (float)urand(), (int)(urand() * N) % N };
        if (trial == 0) {
            /* two level-1 components that land on the same (i, shift):
             * S_a S_b = S_b S_a, so swapping the shifts gives the same
             * product, which must come out merged */
            H1[0] = (PnmfAtom){ 0.5f, 3 }, H1[1] = (PnmfAtom){ 0.25f, 7 };
            for (int i = 0; i < Kk; i++) H2[0 * Kk + i].r = 0, H2[1 * Kk + i].r = 0;
            H2[0 * Kk + 1] = (PnmfAtom){ 2.0f, 7 }, H2[1 * Kk + 1] = (PnmfAtom){ 4.0f, 3 };
        }
        const int ne = pnmf_twolevel_combine(rows, cols, M, K, Kk, H1, H2, start, ent);
        CHECK(ne >= 0 && start[0] == 0 && start[M] == ne);
        if (ne < 0) continue;
        /* level 1 components from level 2, densely: W1_I = sum_i r2 P v_i */
        memset(W1, 0, sizeof(W1));
        for (int I = 0; I < K; I++)
            for (int i = 0; i < Kk; i++)
                if (H2[I * Kk + i].r != 0) {
                    dense_shift(model, W, H, H2[I * Kk + i].p, P);
                    dense_apply(N, P, H2[I * Kk + i].r, V + i * N, W1 + I * N);
                }
        double maxerr = 0;
        int sorted = 1, positive = 1;
        for (int j = 0; j < M; j++) {
            memset(lhs, 0, sizeof(lhs));
            memset(rhs, 0, sizeof(rhs));
            for (int I = 0; I < K; I++)
                if (H1[j * K + I].r != 0) {
                    dense_shift(model, W, H, H1[j * K + I].p, P);
                    dense_apply(N, P, H1[j * K + I].r, W1 + I * N, lhs);
                }
            for (int e = start[j]; e < start[j + 1]; e++) {
                dense_shift(model, W, H, ent[e].p, P);
                dense_apply(N, P, ent[e].r, V + ent[e].component * N, rhs);
                positive &= ent[e].r > 0 && ent[e].p >= 0 && ent[e].p < N &&
                            ent[e].component >= 0 && ent[e].component < Kk;
                if (e > start[j])
                    sorted &= ent[e - 1].component < ent[e].component ||
                              (ent[e - 1].component == ent[e].component && ent[e - 1].p < ent[e].p);
            }
            for (int q = 0; q < N; q++) maxerr = fmax(maxerr, fabs(lhs[q] - rhs[q]));
        }
        CHECK_MSG(maxerr < 1e-5, "model %d trial %d: (V<>H2^T)<>H1^T vs V<>(H2^T<>H1^T): %g", model,
                  trial, maxerr);
        CHECK_MSG(sorted, "entries sorted by component then shift, no duplicates (trial %d)", trial);
        CHECK_MSG(positive, "coefficients > 0, shifts and components in range (trial %d)", trial);
        if (trial == 0) {
            /* 0.5 * 2 + 0.25 * 4 at shift 3 + 7 = 10, component 1, one entry */
            const int32_t p10 = model == PNMF_SHIFT_TORUS ? (3 / W + 7 / W) % H * W + (3 % W + 7 % W) % W : 10;
            int hits = 0;
            float r = 0;
            for (int e = start[0]; e < start[1]; e++)
                if (ent[e].component == 1 && ent[e].p == p10) hits++, r = ent[e].r;
            CHECK_MSG(hits == 1 && fabs(r - 2.0) < 1e-6, "merged entry: %d hits, r %g", hits, r);
        }
    }
    free(P);
}

/* ---- a tiny two-level fit -------------------------------------------------- */

/* Two figures on a 12 x 12 torus, noise free: an L of 5 pixels and a bar
 * of 4 with a knob. Each frame has the L twice and the bar once or twice,
 * with coefficients in [0.6, 1.4]: at most 4 copies, so K = 4, k = 2. */
static void test_tiny_twolevel(int model)
{
    enum { W = 12, H = 12, N = W * H, M = 6, K = 4, Kk = 2 };
    static const int fig_px[2][5][2] = {
        { { 0, 0 }, { 1, 0 }, { 2, 0 }, { 2, 1 }, { 2, 2 } },
        { { 0, 0 }, { 0, 1 }, { 0, 2 }, { 0, 3 }, { 1, 1 } },
    };
    /* placements: frame, figure, y, x, r; all inside the frame and apart */
    static const struct { int j, f, y, x; float r; } pl[] = {
        { 0, 0, 1, 1, 1.0f }, { 0, 0, 6, 7, 0.8f }, { 0, 1, 9, 1, 1.2f },
        { 1, 0, 2, 6, 0.7f }, { 1, 0, 8, 2, 1.3f }, { 1, 1, 1, 1, 0.9f }, { 1, 1, 9, 7, 1.1f },
        { 2, 0, 5, 5, 1.4f }, { 2, 0, 0, 9, 0.6f }, { 2, 1, 2, 0, 1.0f },
        { 3, 0, 7, 0, 0.9f }, { 3, 0, 1, 4, 1.2f }, { 3, 1, 5, 6, 0.8f }, { 3, 1, 10, 5, 1.0f },
        { 4, 0, 3, 8, 1.1f }, { 4, 0, 8, 4, 0.9f }, { 4, 1, 0, 0, 1.3f },
        { 5, 0, 0, 2, 1.0f }, { 5, 0, 6, 8, 1.2f }, { 5, 1, 4, 0, 0.7f }, { 5, 1, 10, 6, 1.4f },
    };
    const int npl = (int)(sizeof(pl) / sizeof(pl[0]));
    float fig[2][N], A[M * N];
    memset(fig, 0, sizeof(fig));
    for (int f = 0; f < 2; f++)
        for (int t = 0; t < 5; t++) fig[f][fig_px[f][t][0] * W + fig_px[f][t][1]] = 1;
    memset(A, 0, sizeof(A));
    for (int t = 0; t < npl; t++)
        pnmf_fit_shift_add(model, W, H, A + pl[t].j * N, fig[pl[t].f], pl[t].r,
                           pnmf_fit_shift_make(model, W, H, pl[t].y, pl[t].x));

    PnmfTwoLevelSettings s;
    pnmf_twolevel_default_settings(&s);
    s.fit.width = W, s.fit.height = H, s.fit.shift_model = model;
    s.fit.algo = PNMF_ALGO_IMPROVED;
    s.fit.iterations = 100;
    s.fit.tol = 1e-7;
    s.K = K, s.k = Kk;
    PnmfTwoLevelResult *r = NULL;
    const int ret = pnmf_twolevel(&s, A, M, &r);
    CHECK_MSG(ret == 0 && r, "pnmf_twolevel: %d", ret);
    if (!r) return;
    CHECK_MSG(r->kept == K, "kept %d of %d level-1 components", r->kept, K);

    /* the combined objective is the explicit ||A - sum r S_p w_i||^2, and
     * on noise-free data near zero (the data's energy is about 120) */
    double f = 0;
    float rec[N];
    for (int j = 0; j < M; j++) {
        memset(rec, 0, sizeof(rec));
        for (int e = r->frame_start[j]; e < r->frame_start[j + 1]; e++)
            pnmf_fit_shift_add(model, W, H, rec, r->W + r->entries[e].component * N, r->entries[e].r,
                               r->entries[e].p);
        for (int q = 0; q < N; q++) f += ((double)A[j * N + q] - rec[q]) * (A[j * N + q] - rec[q]);
    }
    CHECK_NEAR(f, r->objective, 1e-6);
    CHECK_MSG(r->objective < 1e-4, "combined objective %g", r->objective);

    /* each final component is a figure, exactly: w_i = c_i S_{q_i} fig_f */
    int comp[2] = { -1, -1 };
    int32_t q[2] = { 0, 0 };
    float c[2] = { 0, 0 };
    for (int ff = 0; ff < 2; ff++)
        for (int i = 0; i < Kk && comp[ff] < 0; i++)
            for (int32_t p = 0; p < N && comp[ff] < 0; p++) {
                float sh[N];
                memset(sh, 0, sizeof(sh));
                pnmf_fit_shift_add(model, W, H, sh, fig[ff], 1, p);
                /* c from the figure's first pixel, then every pixel must agree */
                float ci = 0;
                for (int x = 0; x < N; x++)
                    if (sh[x] > 0) { ci = r->W[i * N + x]; break; }
                if (ci <= 0) continue;
                double err = 0;
                for (int x = 0; x < N; x++) err = fmax(err, fabs(r->W[i * N + x] - ci * sh[x]));
                if (err < 1e-3 * ci) comp[ff] = i, q[ff] = p, c[ff] = ci;
            }
    CHECK_MSG(comp[0] >= 0 && comp[1] >= 0 && comp[0] != comp[1], "components are the figures: %d %d",
              comp[0], comp[1]);
    if (comp[0] < 0 || comp[1] < 0 || comp[0] == comp[1]) {
        pnmf_twolevel_free(&r);
        return;
    }
    /* entries, shift for shift: entry r S_p w_i = r c S_{p+q} fig. Every
     * placement has exactly one entry with its shift and coefficient, and
     * nothing else carries weight. */
    int matched = 0, extra = 0;
    for (int j = 0; j < M; j++)
        for (int e = r->frame_start[j]; e < r->frame_start[j + 1]; e++) {
            const PnmfTwoLevelEntry *en = &r->entries[e];
            const int ff = en->component == comp[0] ? 0 : 1;
            const int32_t at = pnmf_fit_shift_compose(model, W, H, en->p, q[ff]);
            const float coef = en->r * c[ff];
            int hit = 0;
            for (int t = 0; t < npl; t++)
                if (pl[t].j == j && pl[t].f == ff && pnmf_fit_shift_make(model, W, H, pl[t].y, pl[t].x) == at) {
                    hit = 1;
                    CHECK_MSG(fabs(coef - pl[t].r) < 1e-3, "frame %d figure %d: coefficient %g, placed %g", j, ff,
                              coef, pl[t].r);
                }
            if (hit) matched++;
            else if (coef > 1e-3) extra++;
        }
    CHECK_MSG(matched == npl && extra == 0, "model %d: %d of %d placements as entries, %d others", model,
              matched, npl, extra);
    pnmf_twolevel_free(&r);
}

/* ---- vector against torus -------------------------------------------------- */

/* An asymmetric sprite at every shift of a 6 x 7 frame: the two models give
 * the same picture exactly when no pixel has y + dy >= H, i.e. when the
 * object does not cross the bottom (or, moved up, the top) edge; crossing
 * the left or right edge alone wraps the same way in both. */
static void test_vector_vs_torus_shifts(void)
{
    enum { W = 7, H = 6, N = W * H };
    float spr[N], a[N], b[N];
    double P[N * N], v[N], out[N];
    memset(spr, 0, sizeof(spr));
    spr[0 * W + 0] = 1, spr[0 * W + 1] = 0.5f, spr[1 * W + 0] = 0.25f, spr[2 * W + 1] = 2;
    int same = 0, differ = 0, lr_wrap_same = 0, bad = 0, dense_bad = 0;
    for (int dy = 0; dy < H; dy++)
        for (int dx = 0; dx < W; dx++) {
            memset(a, 0, sizeof(a)), memset(b, 0, sizeof(b));
            const int32_t pv = pnmf_fit_shift_make(PNMF_SHIFT_VECTOR, W, H, dy, dx);
            const int32_t pt = pnmf_fit_shift_make(PNMF_SHIFT_TORUS, W, H, dy, dx);
            pnmf_fit_shift_add(PNMF_SHIFT_VECTOR, W, H, a, spr, 1, pv);
            pnmf_fit_shift_add(PNMF_SHIFT_TORUS, W, H, b, spr, 1, pt);
            int crosses = 0, lr = 0;
            for (int y = 0; y < H; y++)
                for (int x = 0; x < W; x++)
                    if (spr[y * W + x] != 0) crosses |= y + dy >= H, lr |= x + dx >= W;
            const int eq = !memcmp(a, b, sizeof(a));
            if (eq != !crosses) bad++;
            if (eq) same++;
            else differ++;
            if (eq && lr) lr_wrap_same++;
            /* and the vector shift is the 1-D cyclic shift of the stacked column */
            for (int q = 0; q < N; q++) v[q] = spr[q];
            memset(out, 0, sizeof(out));
            dense_shift(PNMF_SHIFT_VECTOR, W, H, pv, P);
            dense_apply(N, P, 1, v, out);
            for (int q = 0; q < N; q++) dense_bad += fabs(out[q] - a[q]) > 0;
        }
    CHECK_MSG(bad == 0, "%d shifts where equality of the models is not 'no top/bottom crossing'", bad);
    CHECK_MSG(same > 0 && differ > 0 && lr_wrap_same > 0, "same %d, differ %d, left/right wraps alike %d",
              same, differ, lr_wrap_same);
    CHECK(dense_bad == 0);
    /* shifts compose as the group they are */
    for (int t = 0; t < 50; t++) {
        const int32_t p1 = (int32_t)(urand() * N), p2 = (int32_t)(urand() * N);
        for (int model = 0; model < 2; model++) {
            memset(a, 0, sizeof(a)), memset(b, 0, sizeof(b));
            float mid[N];
            memset(mid, 0, sizeof(mid));
            pnmf_fit_shift_add(model, W, H, mid, spr, 1, p2);
            pnmf_fit_shift_add(model, W, H, a, mid, 1, p1);
            pnmf_fit_shift_add(model, W, H, b, spr, 1, pnmf_fit_shift_compose(model, W, H, p1, p2));
            CHECK(!memcmp(a, b, sizeof(a)));
        }
    }
}

/* The best single-atom fit of the true sprite, by brute force over every
 * shift: sum over frames of min_{r>=0, p} ||a - r S_p w||^2. */
static double best_fit(int model, int W, int H, const float *A, int m, const float *w)
{
    const int n = W * H;
    float *s = malloc(sizeof(float) * n);
    double total = 0, w2 = 0;
    for (int x = 0; x < n; x++) w2 += (double)w[x] * w[x];
    for (int j = 0; j < m; j++) {
        double a2 = 0, best = 0;
        for (int x = 0; x < n; x++) a2 += (double)A[j * n + x] * A[j * n + x];
        for (int32_t p = 0; p < n; p++) {
            memset(s, 0, sizeof(float) * n);
            pnmf_fit_shift_add(model, W, H, s, w, 1, p);
            double c = 0;
            for (int x = 0; x < n; x++) c += (double)A[j * n + x] * s[x];
            if (c > 0 && c * c / w2 > best) best = c * c / w2;
        }
        total += a2 - best;
    }
    free(s);
    return total;
}

/* Frames of a moving sprite (2-D motion): while it stays clear of the
 * top/bottom edge both models explain it exactly with the sprite as the
 * component; once it crosses that edge only the torus model does. A
 * sprite crossing the left/right edge is fine for both. Then the whole
 * fit (k = 1) sees the same thing. */
static void test_vector_vs_torus_fit(void)
{
    enum { W = 10, H = 8, N = W * H, M = 4 };
    float spr[N], clear[M * N], lr[M * N], tb[M * N], Wf[N];
    memset(spr, 0, sizeof(spr));
    spr[0] = 1, spr[1] = 1, spr[W] = 1, spr[W + 1] = 0.5f, spr[2 * W + 1] = 1;
    memset(clear, 0, sizeof(clear)), memset(lr, 0, sizeof(lr)), memset(tb, 0, sizeof(tb));
    for (int j = 0; j < M; j++) {
        /* the torus model draws each data set */
        pnmf_fit_shift_add(PNMF_SHIFT_TORUS, W, H, clear + j * N, spr, 1,
                           pnmf_fit_shift_make(PNMF_SHIFT_TORUS, W, H, 1 + j, 2 + j));
        pnmf_fit_shift_add(PNMF_SHIFT_TORUS, W, H, lr + j * N, spr, 1,
                           pnmf_fit_shift_make(PNMF_SHIFT_TORUS, W, H, 2 + j, 6 + j));   /* x to 6..9+1 */
        pnmf_fit_shift_add(PNMF_SHIFT_TORUS, W, H, tb + j * N, spr, 1,
                           pnmf_fit_shift_make(PNMF_SHIFT_TORUS, W, H, 4 + j, 3 + j));   /* y to 4..9 */
    }
    CHECK(best_fit(PNMF_SHIFT_VECTOR, W, H, clear, M, spr) < 1e-9);
    CHECK(best_fit(PNMF_SHIFT_TORUS, W, H, clear, M, spr) < 1e-9);
    CHECK(best_fit(PNMF_SHIFT_VECTOR, W, H, lr, M, spr) < 1e-9);
    CHECK(best_fit(PNMF_SHIFT_TORUS, W, H, lr, M, spr) < 1e-9);
    CHECK(best_fit(PNMF_SHIFT_TORUS, W, H, tb, M, spr) < 1e-9);
    const double fv = best_fit(PNMF_SHIFT_VECTOR, W, H, tb, M, spr);
    CHECK_MSG(fv > 0.5, "vector model on a sprite crossing the bottom edge: %g", fv);

    PnmfFitSettings s;
    pnmf_fit_default_settings(&s);
    s.width = W, s.height = H, s.k = 1;
    s.restarts = 4; /* the improved start of k = 1 is the median frame, ~0 here: add random ones */
    PnmfFitAtom Hf[M];
    PnmfFitInfo info;
    const struct { const float *A; int model; int exact; } cases[] = {
        { clear, PNMF_SHIFT_VECTOR, 1 }, { clear, PNMF_SHIFT_TORUS, 1 },
        { lr, PNMF_SHIFT_VECTOR, 1 },    { lr, PNMF_SHIFT_TORUS, 1 },
        { tb, PNMF_SHIFT_TORUS, 1 },     { tb, PNMF_SHIFT_VECTOR, 0 },
    };
    for (size_t t = 0; t < sizeof(cases) / sizeof(cases[0]); t++) {
        s.shift_model = cases[t].model;
        CHECK(pnmf_fit(&s, cases[t].A, M, Wf, Hf, &info) == 0);
        if (cases[t].exact) CHECK_MSG(info.objective < 1e-6, "case %zu: objective %g", t, info.objective);
        /* one component cannot fit the sheared copies: the data's energy is 18 */
        else CHECK_MSG(info.objective > 0.5, "case %zu: objective %g", t, info.objective);
    }
}

/* ---- argument checks ------------------------------------------------------- */

static void test_args(void)
{
    float A[16] = { 0 }, W[32];
    PnmfFitAtom Hf[8];
    PnmfFitSettings s;
    pnmf_fit_default_settings(&s);
    s.width = 4, s.height = 4, s.k = 2;
    A[5] = 1;
    CHECK(pnmf_fit(&s, A, 1, W, Hf, NULL) == 0);
    CHECK(pnmf_fit(NULL, A, 1, W, Hf, NULL) == PNMF_ERR_ARG);
    CHECK(pnmf_fit(&s, NULL, 1, W, Hf, NULL) == PNMF_ERR_ARG);
    CHECK(pnmf_fit(&s, A, 0, W, Hf, NULL) == PNMF_ERR_ARG);
    PnmfFitSettings b = s;
    b.k = 0;
    CHECK(pnmf_fit(&b, A, 1, W, Hf, NULL) == PNMF_ERR_ARG);
    b = s, b.shift_model = 7;
    CHECK(pnmf_fit(&b, A, 1, W, Hf, NULL) == PNMF_ERR_ARG);
    b = s, b.width = 0;
    CHECK(pnmf_fit(&b, A, 1, W, Hf, NULL) == PNMF_ERR_ARG);
    b = s, b.algo = 9;
    CHECK(pnmf_fit(&b, A, 1, W, Hf, NULL) == PNMF_ERR_ARG);
    b = s, b.reserved[3] = 1;
    CHECK(pnmf_fit(&b, A, 1, W, Hf, NULL) == PNMF_ERR_ARG);
    A[2] = -1;
    CHECK(pnmf_fit(&s, A, 1, W, Hf, NULL) == PNMF_ERR_ARG);
    A[2] = NAN;
    CHECK(pnmf_fit(&s, A, 1, W, Hf, NULL) == PNMF_ERR_ARG);
    A[2] = 0;

    PnmfTwoLevelSettings t;
    pnmf_twolevel_default_settings(&t);
    t.fit.width = 4, t.fit.height = 4;
    PnmfTwoLevelResult *r = (PnmfTwoLevelResult *)&t; /* must be reset to NULL on failure */
    t.K = 2, t.k = 3;
    CHECK(pnmf_twolevel(&t, A, 1, &r) == PNMF_ERR_ARG && r == NULL);
    t.K = 2, t.k = 1, t.drop = 2;
    CHECK(pnmf_twolevel(&t, A, 1, &r) == PNMF_ERR_ARG);
    t.drop = 0.05f;
    CHECK(pnmf_twolevel(&t, A, 1, NULL) == PNMF_ERR_ARG);
    CHECK(pnmf_twolevel(&t, A, 1, &r) == 0 && r && r->frame_start[1] == r->n_entries);
    pnmf_twolevel_free(&r);
    CHECK(r == NULL);
    pnmf_twolevel_free(&r); /* NULL-safe */
}

int main(void)
{
    test_combine_dense(PNMF_SHIFT_TORUS);
    test_combine_dense(PNMF_SHIFT_VECTOR);
    test_tiny_twolevel(PNMF_SHIFT_TORUS);
    test_tiny_twolevel(PNMF_SHIFT_VECTOR);
    test_vector_vs_torus_shifts();
    test_vector_vs_torus_fit();
    test_args();
    return test_summary("test_twolevel");
}
