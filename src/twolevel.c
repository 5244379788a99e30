/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Two-level decomposition (paper section 3.4).
 *
 * A component of PermNMF is placed at most once per frame, so a frame with
 * two copies of an object needs two components for it. The paper's way
 * out: fit K components, K at least the objects of a frame counted with
 * multiplicity, so that each level-1 component is one placed copy; drop
 * the level-1 components with little weight; then fit the K components
 * themselves, as frames, with k components, one per distinct object. By
 * associativity of the diamond product, (V <> H2^T) <> H1^T =
 * V <> (H2^T <> H1^T), and the combined matrix holds, for every frame,
 * each object with its multiplicity. On the torus S_a S_b = S_{a+b}, so
 * the combined shifts are sums, per axis, modulo the torus.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "twolevel.h"

static int entry_cmp(const void *va, const void *vb)
{
    const PnmfTwoLevelEntry *a = va, *b = vb;
    if (a->component != b->component) return a->component < b->component ? -1 : 1;
    return (a->p > b->p) - (a->p < b->p);
}

int pnmf_twolevel_combine(int rows, int cols, int m, int K, int k, const PnmfAtom *H1,
                          const PnmfAtom *H2, int *frame_start, PnmfTwoLevelEntry *entries)
{
    int total = 0;
    for (int j = 0; j < m; j++) {
        PnmfTwoLevelEntry *e = entries + total;
        int c = 0;
        for (int I = 0; I < K; I++) {
            const PnmfAtom a = H1[(size_t)j * K + I];
            if (a.r == 0) continue;
            for (int i = 0; i < k; i++) {
                const PnmfAtom b = H2[(size_t)I * k + i];
                const float r = a.r * b.r;
                if (r == 0) continue;
                int py = a.p / cols + b.p / cols, px = a.p % cols + b.p % cols;
                if (py >= rows) py -= rows;
                if (px >= cols) px -= cols;
                e[c++] = (PnmfTwoLevelEntry){ i, r, py * cols + px };
            }
        }
        qsort(e, (size_t)c, sizeof(*e), entry_cmp);
        /* merge equal (component, shift) pairs: S_p w_i twice is 2 S_p w_i */
        int out = 0;
        for (int t = 0; t < c; t++) {
            if (out > 0 && e[out - 1].component == e[t].component && e[out - 1].p == e[t].p)
                e[out - 1].r += e[t].r;
            else
                e[out++] = e[t];
        }
        frame_start[j] = total;
        total += out;
    }
    frame_start[m] = total;
    return total;
}

int pnmf_twolevel_run(int rows, int cols, const float *A, int m, const PnmfFitParams *p1,
                      const PnmfFitParams *p2, float drop, int threads, float *W1, PnmfAtom *H1,
                      float *W, PnmfAtom *H2, int *kept, PnmfFitStats *st1, PnmfFitStats *st2)
{
    const int K = p1->k, k = p2->k;
    const size_t n = (size_t)rows * cols;
    PnmfFitter *ft = NULL;
    float *Wk = pnmf_malloc_array((size_t)K * n, sizeof(float));
    PnmfAtom *H2k = pnmf_malloc_array((size_t)K * k, sizeof(PnmfAtom));
    double *energy = pnmf_malloc_array((size_t)K, sizeof(double));
    int *index = pnmf_malloc_array((size_t)K, sizeof(int));
    int ret = PNMF_ERR_NOMEM;
    *kept = 0;
    memset(W, 0, (size_t)k * n * sizeof(float));
    memset(H2, 0, (size_t)K * k * sizeof(PnmfAtom));
    if (!Wk || !H2k || !energy || !index) goto done;
    ret = pnmf_fitter_open(&ft, rows, cols, m > K ? m : K, K > k ? K : k, threads);
    if (ret < 0) goto done;

    /* level 1: the frames with K components */
    if ((ret = pnmf_fitter_set_frames(ft, A, m)) < 0) goto done;
    if ((ret = pnmf_fitter_fit(ft, p1, W1, H1, st1)) < 0) goto done;

    /* drop what the fit hardly uses (the paper: "discard the found
     * components with low coefficients"): by the energy each component
     * contributes, sum_j r_jI^2 ||w_I||^2, against the largest */
    double emax = 0;
    for (int I = 0; I < K; I++) {
        double w2 = 0, r2 = 0;
        for (size_t x = 0; x < n; x++) w2 += (double)W1[I * n + x] * W1[I * n + x];
        for (int j = 0; j < m; j++) r2 += (double)H1[(size_t)j * K + I].r * H1[(size_t)j * K + I].r;
        energy[I] = w2 * r2;
        if (energy[I] > emax) emax = energy[I];
    }
    int nk = 0;
    for (int I = 0; I < K; I++)
        if (energy[I] > 0 && energy[I] >= drop * emax) {
            memcpy(Wk + (size_t)nk * n, W1 + (size_t)I * n, n * sizeof(float));
            index[nk++] = I;
        }
    *kept = nk;

    /* level 2: the kept components, as frames, with k components */
    if (nk > 0) {
        if ((ret = pnmf_fitter_set_frames(ft, Wk, nk)) < 0) goto done;
        if ((ret = pnmf_fitter_fit(ft, p2, W, H2k, st2)) < 0) goto done;
        for (int t = 0; t < nk; t++)
            memcpy(H2 + (size_t)index[t] * k, H2k + (size_t)t * k, (size_t)k * sizeof(PnmfAtom));
    } else if (st2) {
        memset(st2, 0, sizeof(*st2));
    }
    ret = 0;
done:
    pnmf_fitter_close(&ft);
    pnmf_free(Wk);
    pnmf_free(H2k);
    pnmf_free(energy);
    pnmf_free(index);
    return ret;
}
