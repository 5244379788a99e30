/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Repeated entries after the fit (repeats.h). */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "repeats.h"

void pnmf_repfit_close(PnmfRepFit *f)
{
    pnmf_free(f->ent), pnmf_free(f->cnt), pnmf_free(f->W), pnmf_free(f->E);
    pnmf_fft_close(&f->fft);
    pnmf_fft_free(f->RS), pnmf_fft_free(f->tmp), pnmf_fft_free(f->corr), pnmf_fft_free(f->Ws);
    pnmf_free(f->g), pnmf_free(f->den), pnmf_free(f->dw), pnmf_free(f->norm), pnmf_free(f->saveL);
    memset(f, 0, sizeof(*f));
}

/* E -= r * S_p w over the visible samples (E: one frame). */
static void rep_place(const PnmfRepFit *f, float *E, const float *w, float r, int p)
{
    const int py = p / f->cols, px = p % f->cols;
    for (int ty = 0; ty < f->vis_rows; ty++) {
        const float *wr = w + (size_t)((ty - py + f->rows) % f->rows) * f->cols;
        float *er = E + (size_t)ty * f->cols;
        for (int tx = 0; tx < f->vis_cols; tx++) er[tx] -= r * wr[(tx - px + f->cols) % f->cols];
    }
}

/* <E, S_p w> and ||S_p w||^2 over the visible samples. */
static void rep_dot(const PnmfRepFit *f, const float *E, const float *w, int p, double *c, double *d)
{
    const int py = p / f->cols, px = p % f->cols;
    double sc = 0, sd = 0;
    for (int ty = 0; ty < f->vis_rows; ty++) {
        const float *wr = w + (size_t)((ty - py + f->rows) % f->rows) * f->cols;
        const float *er = E + (size_t)ty * f->cols;
        for (int tx = 0; tx < f->vis_cols; tx++) {
            const double v = wr[(tx - px + f->cols) % f->cols];
            sc += er[tx] * v, sd += v * v;
        }
    }
    *c = sc, *d = sd;
}

/* Frame j's squared error over the visible samples. */
static double frame_energy(const PnmfRepFit *f, int j)
{
    double s = 0;
    for (int y = 0; y < f->vis_rows; y++) {
        const float *er = f->E + (size_t)j * f->n + (size_t)y * f->cols;
        for (int x = 0; x < f->vis_cols; x++) s += (double)er[x] * er[x];
    }
    return s;
}

double pnmf_repfit_energy(const PnmfRepFit *f)
{
    double s = 0;
    for (int j = 0; j < f->m; j++) s += frame_energy(f, j);
    return s;
}

/* Frame j's residual with no entry: the frame on the visible samples, 0
 * elsewhere. */
static void frame_reset(PnmfRepFit *f, int j)
{
    float *E = f->E + (size_t)j * f->n;
    memset(E, 0, f->n * sizeof(float));
    for (int y = 0; y < f->vis_rows; y++)
        memcpy(E + (size_t)y * f->cols, f->A + (size_t)j * f->n + (size_t)y * f->cols,
               (size_t)f->vis_cols * sizeof(float));
}

/* E from the frames and the entries, with the components W. */
void pnmf_repfit_residuals(PnmfRepFit *f, const float *W)
{
    for (int j = 0; j < f->m; j++) {
        float *E = f->E + (size_t)j * f->n;
        frame_reset(f, j);
        for (int a = 0; a < f->cnt[j]; a++) {
            const PnmfRepEnt *t = &f->ent[(size_t)j * f->cap + a];
            rep_place(f, E, W + (size_t)t->i * f->n, t->r, t->p);
        }
    }
}

/* Refit every coefficient at its shift, one exact step each; entries
 * that fall to 0 are dropped. */
static void rep_coefs_frame(PnmfRepFit *f, const float *W, int j)
{
    float *E = f->E + (size_t)j * f->n;
    PnmfRepEnt *L = f->ent + (size_t)j * f->cap;
    int n = 0;
    for (int a = 0; a < f->cnt[j]; a++) {
        PnmfRepEnt t = L[a];
        const float *w = W + (size_t)t.i * f->n;
        double c, d;
        rep_dot(f, E, w, t.p, &c, &d);
        if (d > 0) {
            const float r = (float)fmax(0.0, t.r + c / d);
            rep_place(f, E, w, r - t.r, t.p);
            t.r = r;
        }
        if (t.r > 0) L[n++] = t;
    }
    f->cnt[j] = n;
}

void pnmf_repfit_coefs(PnmfRepFit *f, const float *W)
{
    for (int j = 0; j < f->m; j++) rep_coefs_frame(f, W, j);
}

static int rep_search(PnmfRepFit *f, const float *W, const double *norm, int j, int *budget);

/* Drop each entry of a component placed more than once in its frame
 * whose removal raises the squared error by less than its bits are worth
 * (lambda * PNMF_REPEAT_BITS): early rounds place pieces of a component the W
 * steps then reshape, which stop paying. */
static void rep_prune_frame(PnmfRepFit *f, const float *W, int j)
{
    float *E = f->E + (size_t)j * f->n;
    PnmfRepEnt *L = f->ent + (size_t)j * f->cap;
    for (int a = f->cnt[j] - 1; a >= 0; a--) {
        int copies = 0;
        for (int b = 0; b < f->cnt[j]; b++) copies += L[b].i == L[a].i;
        if (copies < 2) continue;
        const float *w = W + (size_t)L[a].i * f->n;
        double c, d;
        rep_dot(f, E, w, L[a].p, &c, &d);
        if (2 * L[a].r * c + (double)L[a].r * L[a].r * d >= f->lambda * PNMF_REPEAT_BITS) continue;
        rep_place(f, E, w, -L[a].r, L[a].p);
        memmove(L + a, L + a + 1, (size_t)(f->cnt[j] - a - 1) * sizeof(*L));
        f->cnt[j]--;
    }
}

void pnmf_repfit_prune(PnmfRepFit *f, const float *W)
{
    for (int j = 0; j < f->m; j++) rep_prune_frame(f, W, j);
}

/* Frame j's squared error plus lambda * PNMF_REPEAT_BITS for each entry of a
 * component beyond its first in the frame. */
static double rep_frame_cost(const PnmfRepFit *f, int j)
{
    const PnmfRepEnt *L = f->ent + (size_t)j * f->cap;
    int extra = 0;
    for (int a = 0; a < f->cnt[j]; a++) {
        int first = 1;
        for (int b = 0; b < a && first; b++) first = L[b].i != L[a].i;
        extra += !first;
    }
    return frame_energy(f, j) + f->lambda * PNMF_REPEAT_BITS * extra;
}

/* The whole window's: what the rounds lower (the encoder logs it at debug level). */
double pnmf_repfit_cost(const PnmfRepFit *f)
{
    double s = 0;
    for (int j = 0; j < f->m; j++) s += rep_frame_cost(f, j);
    return s;
}

/* Frame j's entries searched again from none with the current components
 * (the order of the greedy search, which rescues entries stuck where the
 * components were before the W steps); kept when that costs less. */
static void rep_fresh(PnmfRepFit *f, const float *W, const double *norm, int j, float *saveE,
                      PnmfRepEnt *saveL)
{
    float *E = f->E + (size_t)j * f->n;
    PnmfRepEnt *L = f->ent + (size_t)j * f->cap;
    const double warm = rep_frame_cost(f, j);
    const int n0 = f->cnt[j];
    memcpy(saveE, E, f->n * sizeof(float));
    memcpy(saveL, L, (size_t)n0 * sizeof(*L));
    frame_reset(f, j);
    f->cnt[j] = 0;
    int budget = f->cap;
    rep_search(f, W, norm, j, &budget);
    rep_coefs_frame(f, W, j);
    rep_prune_frame(f, W, j);
    if (rep_frame_cost(f, j) < warm) return;
    memcpy(E, saveE, f->n * sizeof(float));
    memcpy(L, saveL, (size_t)n0 * sizeof(*L));
    f->cnt[j] = n0;
}

/* The greedy search of one frame (above); returns the entries added. */
static int rep_search(PnmfRepFit *f, const float *W, const double *norm, int j, int *budget)
{
    float *E = f->E + (size_t)j * f->n;
    PnmfRepEnt *L = f->ent + (size_t)j * f->cap;
    int added = 0;
    while (f->cnt[j] < f->cap && *budget > 0) {
        pnmf_fft_forward(f->fft, E, f->RS);
        int bi = -1, bp = 0;
        double bg = 0;
        for (int i = 0; i < f->k; i++) {
            if (norm[i] <= 0) continue;
            pnmf_fft_corr(f->fft, f->RS, f->Ws + (size_t)i * f->stride, f->tmp, f->corr);
            for (size_t q = 0; q < f->n; q++) {
                const double c = f->corr[q];
                if (c <= 0 || c * c <= bg * norm[i]) continue;
                int dup = 0; /* not where the component already is */
                for (int a = 0; a < f->cnt[j] && !dup; a++) dup = L[a].i == i && L[a].p == (int)q;
                if (!dup) bg = c * c / norm[i], bi = i, bp = (int)q;
            }
        }
        if (bi < 0) break;
        const float *w = W + (size_t)bi * f->n;
        double c, d;
        rep_dot(f, E, w, bp, &c, &d);
        if (d <= 0 || c <= 0 || c * c / d <= f->lambda * PNMF_REPEAT_BITS) break;
        const float r = (float)(c / d);
        rep_place(f, E, w, r, bp);
        int at = f->cnt[j]; /* in component order */
        while (at > 0 && L[at - 1].i > bi) at--;
        memmove(L + at + 1, L + at, (size_t)(f->cnt[j] - at) * sizeof(*L));
        L[at] = (PnmfRepEnt){ bi, bp, r };
        f->cnt[j]++, added++, (*budget)--;
    }
    return added;
}

/* The majorized W step (above), component by component. */
void pnmf_repfit_w_step(PnmfRepFit *f)
{
    const int signed_w = f->signed_w;
    for (int i = 0; i < f->k; i++) {
        memset(f->g, 0, f->n * sizeof(float));
        memset(f->den, 0, f->n * sizeof(float));
        int any = 0;
        for (int j = 0; j < f->m; j++) {
            const PnmfRepEnt *L = f->ent + (size_t)j * f->cap;
            const float *E = f->E + (size_t)j * f->n;
            double sr = 0;
            for (int a = 0; a < f->cnt[j]; a++)
                if (L[a].i == i) sr += L[a].r;
            if (sr <= 0) continue;
            any = 1;
            for (int a = 0; a < f->cnt[j]; a++) {
                if (L[a].i != i) continue;
                const int py = L[a].p / f->cols, px = L[a].p % f->cols;
                const float r = L[a].r, rs = (float)(sr * L[a].r);
                for (int ty = 0; ty < f->vis_rows; ty++) {
                    const size_t y = (size_t)((ty - py + f->rows) % f->rows) * f->cols;
                    const float *er = E + (size_t)ty * f->cols;
                    for (int tx = 0; tx < f->vis_cols; tx++) {
                        const size_t x = y + (size_t)((tx - px + f->cols) % f->cols);
                        f->g[x] += r * er[tx], f->den[x] += rs;
                    }
                }
            }
        }
        if (!any) continue;
        float *w = f->W + (size_t)i * f->n;
        for (size_t x = 0; x < f->n; x++) {
            float v = w[x];
            if (f->den[x] > 0) v += f->g[x] / f->den[x];
            if (!signed_w && v < 0) v = 0;
            f->dw[x] = v - w[x], w[x] = v;
        }
        for (int j = 0; j < f->m; j++) {
            const PnmfRepEnt *L = f->ent + (size_t)j * f->cap;
            for (int a = 0; a < f->cnt[j]; a++)
                if (L[a].i == i) rep_place(f, f->E + (size_t)j * f->n, f->dw, L[a].r, L[a].p);
        }
    }
}

/* The components' spectra and energies, for the greedy search. */
static void rep_spectra(PnmfRepFit *f, const float *W, double *norm)
{
    for (int i = 0; i < f->k; i++) {
        const float *w = W + (size_t)i * f->n;
        double s = 0;
        for (size_t q = 0; q < f->n; q++) s += (double)w[q] * w[q];
        norm[i] = s;
        pnmf_fft_forward(f->fft, w, f->Ws + (size_t)i * f->stride);
    }
}


int pnmf_repfit_open(PnmfRepFit *f, int rows, int cols, int vis_rows, int vis_cols, int m, int k,
                     const float *A, double lambda, int signed_w)
{
    memset(f, 0, sizeof(*f));
    f->rows = rows, f->cols = cols, f->vis_rows = vis_rows, f->vis_cols = vis_cols;
    f->n = (size_t)rows * cols;
    f->m = m, f->k = k, f->cap = k + PNMF_REPEAT_MAX;
    f->A = A, f->lambda = lambda, f->signed_w = signed_w;
    int ret = pnmf_fft_open(&f->fft, rows, cols);
    if (ret < 0) return ret;
    f->stride = (2 * pnmf_fft_spec_len(f->fft) + PNMF_FFT_ALIGN - 1) / PNMF_FFT_ALIGN * PNMF_FFT_ALIGN;
    f->ent = pnmf_malloc_array((size_t)m * f->cap, sizeof(PnmfRepEnt));
    f->cnt = pnmf_calloc(m, sizeof(int));
    f->W = pnmf_malloc_array((size_t)k * f->n, sizeof(float));
    f->E = pnmf_malloc_array((size_t)m * f->n, sizeof(float));
    f->RS = pnmf_fft_alloc_spec(f->fft), f->tmp = pnmf_fft_alloc_spec(f->fft);
    f->corr = pnmf_fft_alloc_real(f->fft), f->Ws = pnmf_fft_alloc_floats((size_t)k * f->stride);
    f->g = pnmf_malloc_array(f->n, sizeof(float)), f->den = pnmf_malloc_array(f->n, sizeof(float));
    f->dw = pnmf_malloc_array(f->n, sizeof(float));
    f->norm = pnmf_calloc(k, sizeof(double));
    f->saveL = pnmf_malloc_array(f->cap, sizeof(PnmfRepEnt));
    if (!f->ent || !f->cnt || !f->W || !f->E || !f->RS || !f->tmp || !f->corr || !f->Ws || !f->g || !f->den ||
        !f->dw || !f->norm || !f->saveL) {
        pnmf_repfit_close(f);
        return PNMF_ERR_NOMEM;
    }
    return 0;
}

int pnmf_repfit_run(PnmfRepFit *f, const float *W0, const PnmfAtom *H0, double *trace)
{
    const int k = f->k;
    memcpy(f->W, W0, (size_t)k * f->n * sizeof(float));
    f->added = 0;
    for (int j = 0; j < f->m; j++) {
        f->cnt[j] = 0;
        for (int i = 0; i < k; i++)
            if (H0[j * k + i].r > 0)
                f->ent[(size_t)j * f->cap + f->cnt[j]++] = (PnmfRepEnt){ i, H0[j * k + i].p, H0[j * k + i].r };
    }
    pnmf_repfit_residuals(f, f->W);
    double cost = pnmf_repfit_cost(f);
    if (trace) trace[0] = cost;
    int rounds = 0;
    for (int round = 0; round < PNMF_REPEAT_ROUNDS; round++) {
        rep_spectra(f, f->W, f->norm);
        int added = 0;
        for (int j = 0; j < f->m; j++) {
            int budget = PNMF_REPEAT_MAX - (f->cnt[j] - k > 0 ? f->cnt[j] - k : 0);
            added += rep_search(f, f->W, f->norm, j, &budget);
            /* f->g: scratch here, the W step's gradient later */
            if (round > 0 && f->added) rep_fresh(f, f->W, f->norm, j, f->g, f->saveL);
        }
        f->added += added;
        if (!f->added) break; /* nothing repeats: the one-entry model stands */
        pnmf_repfit_coefs(f, f->W);
        pnmf_repfit_w_step(f);
        pnmf_repfit_coefs(f, f->W);
        pnmf_repfit_prune(f, f->W);
        const double now_cost = pnmf_repfit_cost(f);
        rounds++;
        if (trace) trace[rounds] = now_cost;
        const double drop = cost - now_cost;
        cost = now_cost;
        if (!added && drop < 1e-3 * cost) break;
    }
    return rounds;
}
