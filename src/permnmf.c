/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Permutation NMF: the paper's ALS (section 3) and the improved algorithm
 * (greedy atom order with keep-best, exact HALS W step, median/residual
 * initialisation), which reaches lower objectives on the same data.
 *
 * The H step keeps each frame's residual in the frequency domain: a
 * coordinate step adds the atom back with a phase ramp, correlates with
 * one inverse FFT, and subtracts the new atom.
 *
 * Monotonicity. In exact arithmetic every step here is a block minimisation
 * (or, for PG, a descent step with a safe step size), so the objective never
 * rises. The float FFTs can make a step a hair worse than the one it
 * replaces, so each step's result is checked against the objective computed
 * directly in double and undone if it is higher: the objective reported
 * after every iteration never increases. Rescaling components uses powers
 * of two, which is exact.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fftcorr.h"
#include "internal.h"
#include "log.h"
#include "permnmf.h"
#include "tuning.h"
#include "pnmf/pnmf.h"

/* ---- definitions ------------------------------------------------------- */

void pnmf_shift_add(int rows, int cols, float *dst, const float *src, float r, int p)
{
    const int py = p / cols, px = p % cols, split = cols - px;
    for (int y = 0; y < rows; y++) {
        const float *s = src + (size_t)y * cols;
        int ty = y + py;
        if (ty >= rows) ty -= rows;
        float *d = dst + (size_t)ty * cols;
        for (int x = 0; x < split; x++) d[x + px] += r * s[x];
        for (int x = split; x < cols; x++) d[x - split] += r * s[x];
    }
}

void pnmf_unshift_add(int rows, int cols, float *dst, const float *src, float r, int p)
{
    const int py = p / cols, px = p % cols, split = cols - px;
    for (int y = 0; y < rows; y++) {
        float *d = dst + (size_t)y * cols;
        int ty = y + py;
        if (ty >= rows) ty -= rows;
        const float *s = src + (size_t)ty * cols;
        for (int x = 0; x < split; x++) d[x] += r * s[x + px];
        for (int x = split; x < cols; x++) d[x] += r * s[x - split];
    }
}

void pnmf_diamond(int rows, int cols, const float *W, int k, const PnmfAtom *h, float *out)
{
    const size_t n = (size_t)rows * cols;
    memset(out, 0, n * sizeof(*out));
    for (int i = 0; i < k; i++)
        if (h[i].r != 0) pnmf_shift_add(rows, cols, out, W + i * n, h[i].r, h[i].p);
}

/* A component's support: the rows y0..y1-1 and columns x0..x1-1 that
 * hold its nonzero pixels (empty: y0 = y1). */
typedef struct Box {
    int y0, y1, x0, x1;
} Box;

static Box find_box(int rows, int cols, const float *w)
{
    Box b = { rows, 0, cols, 0 };
    for (int y = 0; y < rows; y++) {
        const float *r = w + (size_t)y * cols;
        int x0 = 0, x1 = cols;
        while (x0 < cols && r[x0] == 0) x0++;
        if (x0 == cols) continue;
        while (r[x1 - 1] == 0) x1--;
        if (y < b.y0) b.y0 = y;
        b.y1 = y + 1;
        if (x0 < b.x0) b.x0 = x0;
        if (x1 > b.x1) b.x1 = x1;
    }
    if (b.y1 == 0) b.y0 = b.x0 = 0;
    return b;
}

/* pnmf_shift_add over the box of src only: the pixels outside it add
 * zeros, so the sums are the same. */
static void shift_add_box(int rows, int cols, float *dst, const float *src, float r, int p, Box b)
{
    const int py = p / cols, px = p % cols, split = cols - px;
    const int xa = b.x1 < split ? b.x1 : split, xb = b.x0 > split ? b.x0 : split;
    for (int y = b.y0; y < b.y1; y++) {
        const float *s = src + (size_t)y * cols;
        int ty = y + py;
        if (ty >= rows) ty -= rows;
        float *d = dst + (size_t)ty * cols;
        for (int x = b.x0; x < xa; x++) d[x + px] += r * s[x];
        for (int x = xb; x < b.x1; x++) d[x - split] += r * s[x];
    }
}

/* e = a - W <> h; returns ||e||^2 in double. With box (the components'
 * supports), only they are added. */
static double frame_residual(int rows, int cols, const float *a, const float *W, int k,
                             const PnmfAtom *h, const Box *box, float *e)
{
    const size_t n = (size_t)rows * cols;
    for (size_t x = 0; x < n; x++) e[x] = a[x];
    for (int i = 0; i < k; i++) {
        if (h[i].r == 0) continue;
        if (box) shift_add_box(rows, cols, e, W + i * n, -h[i].r, h[i].p, box[i]);
        else pnmf_shift_add(rows, cols, e, W + i * n, -h[i].r, h[i].p);
    }
    double s = 0;
    for (size_t x = 0; x < n; x++) s += (double)e[x] * e[x];
    return s;
}

double pnmf_objective(int rows, int cols, const float *A, int m, const float *W, int k,
                      const PnmfAtom *H)
{
    const size_t n = (size_t)rows * cols;
    float *e = pnmf_malloc_array(n, sizeof(float));
    if (!e) return NAN;
    double f = 0;
    for (int j = 0; j < m; j++) f += frame_residual(rows, cols, A + j * n, W, k, H + j * k, NULL, e);
    pnmf_free(e);
    return f;
}

void pnmf_w_gradient(int rows, int cols, const float *A, int m, const float *W, int k,
                     const PnmfAtom *H, float *G)
{
    const size_t n = (size_t)rows * cols;
    float *e = pnmf_malloc_array(n, sizeof(float));
    memset(G, 0, (size_t)k * n * sizeof(*G));
    if (!e) return;
    for (int j = 0; j < m; j++) {
        frame_residual(rows, cols, A + j * n, W, k, H + j * k, NULL, e);
        for (int i = 0; i < k; i++) {
            const PnmfAtom a = H[j * k + i];
            if (a.r != 0) pnmf_unshift_add(rows, cols, G + i * n, e, -2 * a.r, a.p);
        }
    }
    pnmf_free(e);
}

static int argmax_first(const float *c, size_t n)
{
    size_t best = 0;
    for (size_t x = 1; x < n; x++)
        if (c[x] > c[best]) best = x;
    return (int)best;
}

PnmfAtom pnmf_spnnls(int rows, int cols, const float *v, const float *w)
{
    PnmfAtom a = { 0, 0 };
    PnmfFft *f;
    if (pnmf_fft_open(&f, rows, cols) < 0) return a;
    const size_t n = (size_t)rows * cols;
    float *x = pnmf_fft_alloc_real(f), *V = pnmf_fft_alloc_spec(f);
    float *Wf = pnmf_fft_alloc_spec(f), *tmp = pnmf_fft_alloc_spec(f);
    if (x && V && Wf && tmp) {
        double w2 = 0;
        for (size_t i = 0; i < n; i++) w2 += (double)w[i] * w[i];
        memcpy(x, v, n * sizeof(float));
        pnmf_fft_forward(f, x, V);
        memcpy(x, w, n * sizeof(float));
        pnmf_fft_forward(f, x, Wf);
        pnmf_fft_corr(f, V, Wf, tmp, x);
        const int p = argmax_first(x, n);
        if (w2 > 0 && x[p] > 0) {
            a.r = (float)(x[p] / w2);
            a.p = p;
        }
    }
    pnmf_fft_free(x);
    pnmf_fft_free(V);
    pnmf_fft_free(Wf);
    pnmf_fft_free(tmp);
    pnmf_fft_close(&f);
    return a;
}

/* ---- threads ----------------------------------------------------------- */

typedef void (*TaskFn)(void *ctx, int tid, int nthreads);

typedef struct Task {
    TaskFn fn;
    void *ctx;
    int tid, nthreads;
} Task;

static void *task_main(void *arg)
{
    Task *t = arg;
    t->fn(t->ctx, t->tid, t->nthreads);
    return NULL;
}

/* Run fn(ctx, tid, T) for tid = 0..T-1 on T threads. Work is split by tid
 * only, so results never depend on scheduling. */
static void parallel_run(int T, TaskFn fn, void *ctx)
{
    enum { MAXT = 64 };
    pthread_t th[MAXT];
    Task task[MAXT];
    int started = 0;
    if (T > MAXT) T = MAXT;
    for (int t = 1; t < T; t++) {
        task[t] = (Task){ fn, ctx, t, T };
        if (pthread_create(&th[t], NULL, task_main, &task[t]) != 0) break;
        started = t;
    }
    /* Threads that failed to start have their share done here. */
    fn(ctx, 0, T);
    for (int t = started + 1; t < T; t++) fn(ctx, t, T);
    for (int t = 1; t <= started; t++) pthread_join(th[t], NULL);
}

/* ---- the fitter -------------------------------------------------------- */

typedef struct Scratch {
    float *R, *R2, *tmp;   /* spectra */
    float *corr, *e;       /* real */
    float *cc;             /* max_k x n: greedy's correlations, with Gcross */
    PnmfAtom *x1, *x2;
    int guard_rejects;
    double guard_rise;     /* the largest rise undone, relative to the frame's energy */
} Scratch;

struct PnmfFitter {
    int rows, cols, max_m, max_k, threads;
    size_t n, spec2;       /* spec2: floats in a spectrum */
    PnmfFft *fft;
    const float *A;
    int m;
    int vis_rows, vis_cols; /* the visible corner (canvas model); rows, cols when all is */
    int signed_w;          /* components may go negative */
    float *Aown;           /* max_m x n: the frames with their invisible part imputed */
    float *Wspec;          /* k spectra; a frame's is made where the H step needs it */
    float *Gauto;          /* k x n: corr(w_i, w_i), the autocorrelations */
    float *Gcross;         /* k x k slices of nstride: corr(w_i, w_l), or NULL when too big */
    size_t nstride;        /* n rounded up to PNMF_FFT_ALIGN: FFTW's alignment for every slice */
    int gcross_k;          /* components Gcross holds now (0: stale) */
    double *wnorm2;
    Box *box;              /* max_k: the components' supports */
    float *E;              /* m x n spatial residuals (W step, init) */
    float *num;            /* n */
    float *Wold;           /* k x n */
    double *fobj;          /* per-frame objective after the H step */
    double w_rise;         /* the last W step undone: its rise, relative to the frames' energy */
    Scratch *scr;
};

int pnmf_fitter_open(PnmfFitter **out, int rows, int cols, int max_m, int max_k, int threads)
{
    *out = NULL;
    if (rows < 1 || cols < 1 || max_m < 1 || max_k < 1) return PNMF_ERR_ARG;
    if (threads < 1) threads = 1;
    if (threads > 64) threads = 64;
    PnmfFitter *ft = pnmf_calloc(1, sizeof(*ft));
    if (!ft) return PNMF_ERR_NOMEM;
    ft->rows = rows;
    ft->cols = cols;
    ft->n = (size_t)rows * cols;
    ft->max_m = max_m;
    ft->max_k = max_k;
    ft->threads = threads;
    ft->vis_rows = rows, ft->vis_cols = cols;
    int ret = pnmf_fft_open(&ft->fft, rows, cols);
    if (ret < 0) goto fail;
    ret = PNMF_ERR_NOMEM;
    ft->spec2 = 2 * pnmf_fft_spec_len(ft->fft);
    ft->Wspec = pnmf_malloc_array((size_t)max_k * ft->spec2, sizeof(float));
    ft->Gauto = pnmf_malloc_array((size_t)max_k * ft->n, sizeof(float));
    /* the greedy order's shortcut, when its k^2 correlations fit in 256 MiB */
    ft->nstride = (ft->n + PNMF_FFT_ALIGN - 1) / PNMF_FFT_ALIGN * PNMF_FFT_ALIGN;
    const int cross = (double)max_k * max_k * ft->nstride * sizeof(float) <= 256.0 * 1024 * 1024;
    if (cross) {
        ft->Gcross = pnmf_fft_alloc_floats((size_t)max_k * max_k * ft->nstride);
        if (!ft->Gcross) goto fail;
    }
    ft->wnorm2 = pnmf_calloc(max_k, sizeof(double));
    ft->box = pnmf_calloc(max_k, sizeof(Box));
    ft->E = pnmf_malloc_array((size_t)max_m * ft->n, sizeof(float));
    ft->num = pnmf_malloc_array(ft->n, sizeof(float));
    ft->Wold = pnmf_malloc_array((size_t)max_k * ft->n, sizeof(float));
    ft->fobj = pnmf_calloc(max_m, sizeof(double));
    ft->scr = pnmf_calloc(threads, sizeof(Scratch));
    if (!ft->Wspec || !ft->Gauto || !ft->wnorm2 || !ft->box || !ft->E || !ft->num || !ft->Wold ||
        !ft->fobj || !ft->scr)
        goto fail;
    for (int t = 0; t < threads; t++) {
        Scratch *s = &ft->scr[t];
        s->R = pnmf_fft_alloc_spec(ft->fft);
        s->R2 = pnmf_fft_alloc_spec(ft->fft);
        s->tmp = pnmf_fft_alloc_spec(ft->fft);
        s->corr = pnmf_fft_alloc_real(ft->fft);
        s->e = pnmf_fft_alloc_real(ft->fft);
        s->x1 = pnmf_malloc_array(max_k, sizeof(PnmfAtom));
        s->x2 = pnmf_malloc_array(max_k, sizeof(PnmfAtom));
        if (cross) {
            s->cc = pnmf_fft_alloc_floats((size_t)max_k * ft->nstride);
            if (!s->cc) goto fail;
        }
        if (!s->R || !s->R2 || !s->tmp || !s->corr || !s->e || !s->x1 || !s->x2) goto fail;
    }
    *out = ft;
    return 0;
fail:
    pnmf_fitter_close(&ft);
    return ret;
}

void pnmf_fitter_close(PnmfFitter **pft)
{
    PnmfFitter *ft = *pft;
    if (!ft) return;
    if (ft->scr)
        for (int t = 0; t < ft->threads; t++) {
            Scratch *s = &ft->scr[t];
            pnmf_fft_free(s->R);
            pnmf_fft_free(s->R2);
            pnmf_fft_free(s->tmp);
            pnmf_fft_free(s->corr);
            pnmf_fft_free(s->e);
            pnmf_free(s->x1);
            pnmf_free(s->x2);
            pnmf_fft_free(s->cc);
        }
    pnmf_free(ft->scr);
    pnmf_free(ft->Aown);
    pnmf_free(ft->Wspec);
    pnmf_free(ft->Gauto);
    pnmf_fft_free(ft->Gcross);
    pnmf_free(ft->wnorm2);
    pnmf_free(ft->box);
    pnmf_free(ft->E);
    pnmf_free(ft->num);
    pnmf_free(ft->Wold);
    pnmf_free(ft->fobj);
    pnmf_fft_close(&ft->fft);
    pnmf_freep(pft);
}

/* Spectra through an aligned scratch buffer: the caller's arrays need not
 * be aligned like FFTW's. */
static void forward_any(PnmfFitter *ft, const float *x, float *X, Scratch *s)
{
    memcpy(s->corr, x, ft->n * sizeof(float));
    pnmf_fft_forward(ft->fft, s->corr, s->tmp);
    memcpy(X, s->tmp, ft->spec2 * sizeof(float));
}

static int masked(const PnmfFitter *ft) { return ft->vis_rows < ft->rows || ft->vis_cols < ft->cols; }

int pnmf_fitter_set_options(PnmfFitter *ft, int vis_rows, int vis_cols, int signed_w)
{
    if (vis_rows < 1 || vis_cols < 1 || vis_rows > ft->rows || vis_cols > ft->cols) return PNMF_ERR_ARG;
    ft->vis_rows = vis_rows, ft->vis_cols = vis_cols;
    ft->signed_w = !!signed_w;
    ft->A = NULL, ft->m = 0;
    if (masked(ft) && !ft->Aown) {
        ft->Aown = pnmf_malloc_array((size_t)ft->max_m * ft->n, sizeof(float));
        if (!ft->Aown) return PNMF_ERR_NOMEM;
    }
    return 0;
}

int pnmf_fitter_set_frames(PnmfFitter *ft, const float *A, int m)
{
    if (m < 1 || m > ft->max_m) return PNMF_ERR_ARG;
    ft->A = A;
    ft->m = m;
    if (masked(ft)) {
        /* the invisible part starts as the visible part's mean */
        for (int j = 0; j < m; j++) {
            const float *a = A + (size_t)j * ft->n;
            float *d = ft->Aown + (size_t)j * ft->n;
            double mean = 0;
            for (int y = 0; y < ft->vis_rows; y++)
                for (int x = 0; x < ft->vis_cols; x++) mean += a[(size_t)y * ft->cols + x];
            mean /= (double)ft->vis_rows * ft->vis_cols;
            for (int y = 0; y < ft->rows; y++)
                for (int x = 0; x < ft->cols; x++) {
                    const size_t q = (size_t)y * ft->cols + x;
                    d[q] = y < ft->vis_rows && x < ft->vis_cols ? a[q] : (float)mean;
                }
        }
        ft->A = ft->Aown;
    }
    return 0;
}

int pnmf_fitter_impute(PnmfFitter *ft, const float *W, int k, const PnmfAtom *H)
{
    if (!ft->A || k < 1 || k > ft->max_k) return PNMF_ERR_ARG;
    if (!masked(ft)) return 0;
    float *rec = ft->E; /* scratch: the W step refills it */
    for (int j = 0; j < ft->m; j++) {
        pnmf_diamond(ft->rows, ft->cols, W, k, H + (size_t)j * k, rec);
        float *d = ft->Aown + (size_t)j * ft->n;
        for (int y = 0; y < ft->rows; y++)
            for (int x = 0; x < ft->cols; x++)
                if (y >= ft->vis_rows || x >= ft->vis_cols) d[(size_t)y * ft->cols + x] = rec[(size_t)y * ft->cols + x];
    }
    return 0;
}

static void find_boxes(PnmfFitter *ft, const float *W, int k)
{
    for (int i = 0; i < k; i++) ft->box[i] = find_box(ft->rows, ft->cols, W + (size_t)i * ft->n);
}

double pnmf_fitter_objective(PnmfFitter *ft, const float *W, int k, const PnmfAtom *H)
{
    find_boxes(ft, W, k);
    float *e = ft->E;
    double f = 0;
    for (int j = 0; j < ft->m; j++) {
        frame_residual(ft->rows, ft->cols, ft->A + (size_t)j * ft->n, W, k, H + (size_t)j * k, ft->box, e);
        for (int y = 0; y < ft->vis_rows; y++)
            for (int x = 0; x < ft->vis_cols; x++) {
                const double v = e[(size_t)y * ft->cols + x];
                f += v * v;
            }
    }
    return f;
}

/* Component i's norm, spectrum and autocorrelation from W. */
static void set_component(PnmfFitter *ft, const float *W, int i)
{
    const float *w = W + i * ft->n;
    double s = 0;
    for (size_t x = 0; x < ft->n; x++) s += (double)w[x] * w[x];
    ft->wnorm2[i] = s;
    ft->box[i] = find_box(ft->rows, ft->cols, w);
    float *Wi = ft->Wspec + i * ft->spec2;
    forward_any(ft, w, Wi, &ft->scr[0]);
    pnmf_fft_corr(ft->fft, Wi, Wi, ft->scr[0].tmp, ft->scr[0].corr);
    memcpy(ft->Gauto + i * ft->n, ft->scr[0].corr, ft->n * sizeof(float));
    ft->gcross_k = 0;
}

static void set_components(PnmfFitter *ft, const float *W, int k)
{
    for (int i = 0; i < k; i++) set_component(ft, W, i);
}

/* G_il = corr(w_i, w_l) for every pair, for the greedy order: G_li is G_il
 * read at -q, so half of them cost a transform. */
static void set_cross(PnmfFitter *ft, int k)
{
    const int rows = ft->rows, cols = ft->cols, mk = ft->max_k;
    Scratch *s = &ft->scr[0];
    for (int i = 0; i < k; i++)
        for (int l = i; l < k; l++) {
            float *g = ft->Gcross + ((size_t)i * mk + l) * ft->nstride;
            pnmf_fft_corr(ft->fft, ft->Wspec + i * ft->spec2, ft->Wspec + l * ft->spec2, s->tmp, g);
            if (l == i) continue;
            float *t = ft->Gcross + ((size_t)l * mk + i) * ft->nstride;
            for (int y = 0; y < rows; y++)
                for (int x = 0; x < cols; x++)
                    t[(size_t)y * cols + x] = g[(size_t)((rows - y) % rows) * cols + (cols - x) % cols];
        }
    ft->gcross_k = k;
}

/* ---- H step ------------------------------------------------------------ */

/* One exact coordinate step (Single Permutation NNLS on the residual
 * without atom i), on the spectral residual R, which has atom i taken out.
 * The correlation of the residual without the atom is
 *   corr(R + r S_p w, w) = corr(R, w) + r G[. - p],  G = corr(w, w),
 * so the atom is put back in the correlation, not in the spectrum, and R
 * changes only when the atom does. */
static void coord_step(PnmfFitter *ft, Scratch *s, float *R, int i, PnmfAtom *a)
{
    const float *Wi = ft->Wspec + i * ft->spec2;
    pnmf_fft_corr(ft->fft, R, Wi, s->tmp, s->corr);
    if (a->r != 0) pnmf_shift_add(ft->rows, ft->cols, s->corr, ft->Gauto + i * ft->n, a->r, a->p);
    const int p = argmax_first(s->corr, ft->n);
    const float c = s->corr[p];
    PnmfAtom nw = *a;
    if (c > 0) {
        nw.r = (float)(c / ft->wnorm2[i]);
        nw.p = p;
    } else {
        nw.r = 0; /* keep the old shift: cheaper to code */
    }
    /* the same atom, up to float noise: leave it and R alone */
    if (nw.p == a->p && fabsf(nw.r - a->r) <= 1e-5f * a->r) return;
    if (nw.p == a->p) {
        pnmf_fft_shift_add(ft->fft, R, Wi, a->r - nw.r, a->p);
    } else {
        pnmf_fft_shift_add(ft->fft, R, Wi, a->r, a->p);
        pnmf_fft_shift_add(ft->fft, R, Wi, -nw.r, nw.p);
    }
    *a = nw;
}

/* The paper's Multiple Permutation NNLS: fixed-order sweeps. A sweep that
 * moves no shift and changes no coefficient by more than 0.1% ends them:
 * with overlapping components (a background under every sprite) the
 * coefficients creep towards their optimum for many sweeps, at a full
 * correlation each, for a negligible gain; the outer iterations finish it. */
static void cyclic_sweeps(PnmfFitter *ft, Scratch *s, float *R, PnmfAtom *x, int k, int sweeps)
{
    for (int it = 0; it < sweeps; it++) {
        int moved = 0;
        float maxrel = 0;
        for (int i = 0; i < k; i++) {
            if (ft->wnorm2[i] <= 0) continue;
            PnmfAtom old = x[i];
            coord_step(ft, s, R, i, &x[i]);
            if (old.p != x[i].p || (old.r == 0) != (x[i].r == 0)) moved = 1;
            else if (old.r > 0) {
                const float rel = fabsf(x[i].r - old.r) / old.r;
                maxrel = rel > maxrel ? rel : maxrel;
            }
        }
        if (!moved && maxrel < 1e-3f) break;
    }
}

/* Matching-pursuit order: repeatedly place the (component, shift) whose
 * atom removes the most energy, c^2 / ||w||^2, each component once.
 * With the cross-correlations G at hand, placing r S_p w_i changes the
 * correlation with w_l by -r G_il[. - p]: k inverse FFTs a frame instead of
 * k^2/2. */
static void greedy_atoms(PnmfFitter *ft, Scratch *s, float *R, PnmfAtom *x, int k)
{
    const int cross = ft->gcross_k == k && s->cc;
    for (int i = 0; i < k; i++) x[i] = (PnmfAtom){ 0, 0 };
    if (cross)
        for (int i = 0; i < k; i++)
            if (ft->wnorm2[i] > 0)
                pnmf_fft_corr(ft->fft, R, ft->Wspec + i * ft->spec2, s->tmp, s->cc + i * ft->nstride);
    for (int t = 0; t < k; t++) {
        double best_gain = 0;
        int best_i = -1;
        PnmfAtom best = { 0, 0 };
        for (int i = 0; i < k; i++) {
            if (x[i].r != 0 || ft->wnorm2[i] <= 0) continue;
            float *c_i = cross ? s->cc + i * ft->nstride : s->corr;
            if (!cross) pnmf_fft_corr(ft->fft, R, ft->Wspec + i * ft->spec2, s->tmp, c_i);
            const int p = argmax_first(c_i, ft->n);
            const double c = c_i[p];
            if (c <= 0) continue;
            const double gain = c * c / ft->wnorm2[i];
            if (gain > best_gain) {
                best_gain = gain;
                best_i = i;
                best = (PnmfAtom){ (float)(c / ft->wnorm2[i]), p };
            }
        }
        if (best_i < 0) break;
        x[best_i] = best;
        pnmf_fft_shift_add(ft->fft, R, ft->Wspec + best_i * ft->spec2, -best.r, best.p);
        if (cross)
            for (int l = 0; l < k; l++)
                if (x[l].r == 0 && ft->wnorm2[l] > 0)
                    pnmf_shift_add(ft->rows, ft->cols, s->cc + l * ft->nstride,
                                   ft->Gcross + ((size_t)best_i * ft->max_k + l) * ft->nstride, -best.r, best.p);
    }
}

typedef struct HCtx {
    PnmfFitter *ft;
    const float *W;
    int k, mode, sweeps;
    PnmfAtom *H;
} HCtx;

static void h_task(void *vctx, int tid, int T)
{
    HCtx *c = vctx;
    PnmfFitter *ft = c->ft;
    Scratch *s = &ft->scr[tid];
    const int k = c->k;
    for (int j = tid; j < ft->m; j += T) {
        const float *a = ft->A + j * ft->n;
        PnmfAtom *h = c->H + j * k;
        double best = frame_residual(ft->rows, ft->cols, a, c->W, k, h, ft->box, s->e);
        int pick = 0;

        /* the paper's sweep, warm-started from the current atoms */
        /* its spectral residual: one FFT of the spatial residual costs
         * less than k phase ramps */
        if (c->mode != PNMF_H_GREEDY_ONLY) {
            memcpy(s->x1, h, k * sizeof(PnmfAtom));
            pnmf_fft_forward(ft->fft, s->e, s->R);
            cyclic_sweeps(ft, s, s->R, s->x1, k, c->sweeps);
            double f1 = frame_residual(ft->rows, ft->cols, a, c->W, k, s->x1, ft->box, s->e);
            if (f1 <= best) {
                best = f1, pick = 1;
            } else {
                double energy = 0;
                for (size_t x = 0; x < ft->n; x++) energy += (double)a[x] * a[x];
                const double rise = energy > 0 ? (f1 - best) / energy : INFINITY;
                s->guard_rejects++;
                if (rise > s->guard_rise) s->guard_rise = rise;
            }
        }

        if (c->mode != PNMF_H_CYCLIC) {
            /* the frame's spectrum, made here rather than kept for the
             * window: m spectra in float are the window's largest buffer */
            memcpy(s->corr, a, ft->n * sizeof(float));
            pnmf_fft_forward(ft->fft, s->corr, s->R2);
            greedy_atoms(ft, s, s->R2, s->x2, k);
            cyclic_sweeps(ft, s, s->R2, s->x2, k, c->sweeps);
            double f2 = frame_residual(ft->rows, ft->cols, a, c->W, k, s->x2, ft->box, s->e);
            if (f2 < best || c->mode == PNMF_H_GREEDY_ONLY) best = f2, pick = 2;
        }
        if (pick == 1) memcpy(h, s->x1, k * sizeof(PnmfAtom));
        if (pick == 2) memcpy(h, s->x2, k * sizeof(PnmfAtom));
        ft->fobj[j] = best;
    }
}

int pnmf_fitter_h_step(PnmfFitter *ft, const float *W, int k, PnmfAtom *H, int mode, int sweeps)
{
    if (k < 1 || k > ft->max_k || !ft->A) return PNMF_ERR_ARG;
    set_components(ft, W, k);
    if (mode != PNMF_H_CYCLIC && ft->Gcross) set_cross(ft, k);
    int rejects = 0;
    for (int t = 0; t < ft->threads; t++) rejects -= ft->scr[t].guard_rejects;
    HCtx c = { ft, W, k, mode, sweeps, H };
    parallel_run(ft->threads < ft->m ? ft->threads : ft->m, h_task, &c);
    for (int t = 0; t < ft->threads; t++) rejects += ft->scr[t].guard_rejects;
    return rejects;
}

/* ---- W step ------------------------------------------------------------ */

static double all_residuals(PnmfFitter *ft, const float *W, int k, const PnmfAtom *H)
{
    find_boxes(ft, W, k);
    double f = 0;
    for (int j = 0; j < ft->m; j++)
        f += frame_residual(ft->rows, ft->cols, ft->A + j * ft->n, W, k, H + j * k, ft->box,
                            ft->E + j * ft->n);
    return f;
}

typedef struct WCtx {
    PnmfFitter *ft;
    float *W;
    int k, i;
    const PnmfAtom *H;
    double den;
} WCtx;

/* Exact HALS for component i, rows of the component split between threads.
 * For a pixel x of w_i, frame j sees it at x + p_ji: each thread reads and
 * writes only the residual rows its own component rows map to, and the
 * sum over frames runs in frame order, whatever the thread count. */
static void hals_task(void *vctx, int tid, int T)
{
    WCtx *c = vctx;
    PnmfFitter *ft = c->ft;
    const int rows = ft->rows, cols = ft->cols, k = c->k, i = c->i;
    const int y0 = (int)((long long)rows * tid / T), y1 = (int)((long long)rows * (tid + 1) / T);
    float *w = c->W + i * ft->n;
    float *num = ft->num;
    for (int y = y0; y < y1; y++) memset(num + (size_t)y * cols, 0, cols * sizeof(float));
    for (int j = 0; j < ft->m; j++) {
        const PnmfAtom a = c->H[j * k + i];
        if (a.r == 0) continue;
        const int py = a.p / cols, px = a.p % cols, split = cols - px;
        const float *E = ft->E + j * ft->n;
        for (int y = y0; y < y1; y++) {
            int ty = y + py;
            if (ty >= rows) ty -= rows;
            const float *e = E + (size_t)ty * cols;
            float *nm = num + (size_t)y * cols;
            for (int x = 0; x < split; x++) nm[x] += a.r * e[x + px];
            for (int x = split; x < cols; x++) nm[x] += a.r * e[x - split];
        }
    }
    /* num becomes the change of w */
    const float inv = (float)(1.0 / c->den);
    for (int y = y0; y < y1; y++)
        for (int x = 0; x < cols; x++) {
            const size_t q = (size_t)y * cols + x;
            float nw = w[q] + num[q] * inv;
            if (!(nw > 0) && !ft->signed_w) nw = 0;
            num[q] = nw - w[q];
            w[q] = nw;
        }
    for (int j = 0; j < ft->m; j++) {
        const PnmfAtom a = c->H[j * k + i];
        if (a.r == 0) continue;
        const int py = a.p / cols, px = a.p % cols, split = cols - px;
        float *E = ft->E + j * ft->n;
        for (int y = y0; y < y1; y++) {
            int ty = y + py;
            if (ty >= rows) ty -= rows;
            float *e = E + (size_t)ty * cols;
            const float *d = num + (size_t)y * cols;
            for (int x = 0; x < split; x++) e[x + px] -= a.r * d[x];
            for (int x = split; x < cols; x++) e[x - split] -= a.r * d[x];
        }
    }
}

/* Largest eigenvalue of R^T R (R: m x k coefficients), from above: power
 * iteration approaches it from below, so take the smaller of 1.01 times
 * that and the Gershgorin bound. Returns -1 if out of memory. */
static double lambda_max_rtr(const PnmfAtom *H, int m, int k)
{
    double *M = pnmf_malloc_array((size_t)k * k + 2 * (size_t)k, sizeof(double));
    if (!M) return -1;
    double *v = M + (size_t)k * k, *u = v + k;
    for (int a = 0; a < k; a++)
        for (int b = 0; b < k; b++) {
            double s = 0;
            for (int j = 0; j < m; j++) s += (double)H[j * k + a].r * H[j * k + b].r;
            M[a * k + b] = s;
        }
    for (int a = 0; a < k; a++) v[a] = 1.0;
    double lam = 0;
    for (int it = 0; it < 100; it++) {
        double nrm = 0;
        for (int a = 0; a < k; a++) {
            double s = 0;
            for (int b = 0; b < k; b++) s += M[a * k + b] * v[b];
            u[a] = s;
            nrm += s * s;
        }
        nrm = sqrt(nrm);
        if (nrm == 0) break;
        for (int a = 0; a < k; a++) v[a] = u[a] / nrm;
        lam = nrm;
    }
    double gmax = 0;
    for (int a = 0; a < k; a++) {
        double s = 0;
        for (int b = 0; b < k; b++) s += fabs(M[a * k + b]);
        if (s > gmax) gmax = s;
    }
    pnmf_free(M);
    return lam * 1.01 < gmax ? lam * 1.01 : gmax;
}

int pnmf_fitter_w_step(PnmfFitter *ft, float *W, int k, const PnmfAtom *H, int mode, int iters)
{
    if (k < 1 || k > ft->max_k || !ft->A) return PNMF_ERR_ARG;
    const size_t kn = (size_t)k * ft->n;
    const double f_old = all_residuals(ft, W, k, H);
    memcpy(ft->Wold, W, kn * sizeof(float));
    if (mode == PNMF_W_HALS) {
        for (int i = 0; i < k; i++) {
            double den = 0;
            for (int j = 0; j < ft->m; j++) den += (double)H[j * k + i].r * H[j * k + i].r;
            if (den <= 0) continue;
            WCtx c = { ft, W, k, i, H, den };
            parallel_run(ft->threads < ft->rows ? ft->threads : ft->rows, hals_task, &c);
        }
    } else {
        /* The paper's PG (section 3) steps by 1/i on the raw gradient, which
         * diverges or crawls depending on the data's scale; 1/L with
         * L = 2 lambda_max(R^T R) bounds the Hessian (on the torus it is
         * the gradient's Lipschitz constant: ||sum_i r_i S_i w_i|| <=
         * sum_i r_i ||w_i||, with equality for constant images) and makes
         * every projected step a descent step. */
        const double L = 2 * lambda_max_rtr(H, ft->m, k);
        if (L < 0) return PNMF_ERR_NOMEM;
        if (L > 0) {
            float *G = pnmf_malloc_array(kn, sizeof(float));
            if (!G) return PNMF_ERR_NOMEM;
            for (int it = 0; it < iters; it++) {
                memset(G, 0, kn * sizeof(float));
                for (int j = 0; j < ft->m; j++)
                    for (int i = 0; i < k; i++) {
                        const PnmfAtom a = H[j * k + i];
                        if (a.r != 0)
                            pnmf_unshift_add(ft->rows, ft->cols, G + i * ft->n, ft->E + j * ft->n,
                                             -2 * a.r, a.p);
                    }
                double g2 = 0;
                for (size_t q = 0; q < kn; q++) {
                    float nw = W[q] - (float)(G[q] / L);
                    W[q] = nw > 0 || ft->signed_w ? nw : 0;
                    g2 += (double)G[q] * G[q];
                }
                all_residuals(ft, W, k, H);
                if (g2 < 1e-6) break;
            }
            pnmf_free(G);
        }
    }
    const double f_new = all_residuals(ft, W, k, H);
    if (!(f_new <= f_old)) {
        double energy = 0;
        for (size_t q = 0; q < (size_t)ft->m * ft->n; q++) energy += (double)ft->A[q] * ft->A[q];
        ft->w_rise = energy > 0 ? (f_new - f_old) / energy : INFINITY;
        memcpy(W, ft->Wold, kn * sizeof(float));
        all_residuals(ft, W, k, H);
        return 1;
    }
    return 0;
}

/* ---- initialisation and the whole fit ---------------------------------- */

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static uint64_t rng_next(uint64_t *s)
{
    /* splitmix64 */
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double rng_unit(uint64_t *s) { return (rng_next(s) >> 11) * (1.0 / 9007199254740992.0); }

/* Scale each component by a power of two so its maximum lies in (0.5, 1],
 * and its coefficients the other way: exact in floating point. */
static void normalize_pow2(int n, float *W, int k, PnmfAtom *H, int m)
{
    for (int i = 0; i < k; i++) {
        float *w = W + (size_t)i * n;
        float mx = 0;
        for (int x = 0; x < n; x++) mx = fabsf(w[x]) > mx ? fabsf(w[x]) : mx;
        if (mx <= 0) continue;
        int e;
        frexpf(mx, &e); /* mx = f * 2^e, f in [0.5, 1) */
        if (e == 0 || (e == 1 && mx == 1.0f)) continue;
        if (mx == ldexpf(1.0f, e - 1)) e -= 1; /* exact powers of two go to 1 */
        for (int x = 0; x < n; x++) w[x] = ldexpf(w[x], -e);
        for (int j = 0; j < m; j++) H[j * k + i].r = ldexpf(H[j * k + i].r, e);
    }
}

/* The shift ambiguity: S_{p+q} (S_{-q} w) = S_p w, so
 * moving a component by -q and every shift of it by +q changes no
 * reconstruction. Each component is moved so that its centre of mass (the
 * circular mean of |w| along each axis) lands on the torus centre: its
 * shifts then say where its middle is, and its support does not straddle
 * the torus edges. */
#define TAU 6.283185307179586
static int circular_centre(const double *mass, int len)
{
    double c = 0, s = 0;
    for (int t = 0; t < len; t++) {
        const double a = TAU * t / len;
        c += mass[t] * cos(a), s += mass[t] * sin(a);
    }
    if (c == 0 && s == 0) return -1;
    double a = atan2(s, c);
    if (a < 0) a += TAU;
    const int t = (int)lrint(a * len / TAU);
    return t >= len ? t - len : t;
}

void pnmf_recentre(int rows, int cols, float *W, int k, PnmfAtom *H, int m)
{
    const size_t n = (size_t)rows * cols;
    double *mass = pnmf_malloc_array((size_t)(rows > cols ? rows : cols), sizeof(double));
    float *t = pnmf_malloc_array(n, sizeof(float));
    if (!mass || !t) {
        pnmf_free(mass), pnmf_free(t);
        return; /* nothing changes without it but where the components sit */
    }
    for (int i = 0; i < k; i++) {
        float *w = W + (size_t)i * n;
        for (int y = 0; y < rows; y++) {
            mass[y] = 0;
            for (int x = 0; x < cols; x++) mass[y] += fabsf(w[(size_t)y * cols + x]);
        }
        const int cy = circular_centre(mass, rows);
        for (int x = 0; x < cols; x++) {
            mass[x] = 0;
            for (int y = 0; y < rows; y++) mass[x] += fabsf(w[(size_t)y * cols + x]);
        }
        const int cx = circular_centre(mass, cols);
        if (cy < 0 || cx < 0) continue; /* empty */
        const int qy = ((cy - rows / 2) % rows + rows) % rows, qx = ((cx - cols / 2) % cols + cols) % cols;
        if (!qy && !qx) continue;
        /* w'[y][x] = w[y + qy][x + qx]: S_{-q} w */
        memcpy(t, w, n * sizeof(float));
        for (int y = 0; y < rows; y++) {
            const float *src = t + (size_t)((y + qy) % rows) * cols;
            float *dst = w + (size_t)y * cols;
            memcpy(dst, src + qx, (size_t)(cols - qx) * sizeof(float));
            memcpy(dst + cols - qx, src, (size_t)qx * sizeof(float));
        }
        for (int j = 0; j < m; j++) {
            PnmfAtom *a = &H[(size_t)j * k + i];
            const int py = (a->p / cols + qy) % rows, px = (a->p % cols + qx) % cols;
            a->p = py * cols + px;
        }
    }
    pnmf_free(mass), pnmf_free(t);
}

/* Put into w the box of the positive residual with the most energy over
 * all frames: a new component starts where the model explains least.
 * Each frame's best box in parallel (an integral image of the squared
 * positive residual), then the frames' in order. */
typedef struct SeedCtx {
    PnmfFitter *ft;
    int bh, bw;
    double *best; /* m: each frame's largest box energy */
    int *at;      /* m: where, y * cols + x */
} SeedCtx;

static void seed_task(void *vctx, int tid, int T)
{
    SeedCtx *c = vctx;
    PnmfFitter *ft = c->ft;
    const int rows = ft->vis_rows, cols = ft->vis_cols, stride = ft->cols, bh = c->bh, bw = c->bw;
    const int sg = ft->signed_w;
    double *I = pnmf_malloc_array((size_t)(rows + 1) * (cols + 1), sizeof(double));
    for (int j = tid; j < ft->m; j += T) {
        c->best[j] = 0, c->at[j] = -1;
        if (!I) continue;
        const float *e = ft->E + j * ft->n;
        for (int x = 0; x <= cols; x++) I[x] = 0;
        for (int y = 0; y < rows; y++) {
            double rs = 0;
            I[(size_t)(y + 1) * (cols + 1)] = 0;
            for (int x = 0; x < cols; x++) {
                const double v = e[(size_t)y * stride + x] > 0 || sg ? e[(size_t)y * stride + x] : 0;
                rs += v * v;
                I[(size_t)(y + 1) * (cols + 1) + x + 1] = I[(size_t)y * (cols + 1) + x + 1] + rs;
            }
        }
        double best = 0;
        for (int y = 0; y + bh <= rows; y++)
            for (int x = 0; x + bw <= cols; x++) {
                const double s = I[(size_t)(y + bh) * (cols + 1) + x + bw] -
                                 I[(size_t)y * (cols + 1) + x + bw] -
                                 I[(size_t)(y + bh) * (cols + 1) + x] + I[(size_t)y * (cols + 1) + x];
                if (s > best * (1 + 1e-12)) best = s, c->at[j] = y * cols + x;
            }
        c->best[j] = best;
    }
    pnmf_free(I);
}

static void seed_from_residual(PnmfFitter *ft, float *w)
{
    const int rows = ft->vis_rows, cols = ft->vis_cols, stride = ft->cols;
    const int sg = ft->signed_w;
    int bh = rows / 4, bw = cols / 4;
    if (rows == 1) bw = cols / 16;
    bh = bh < 1 ? 1 : bh > 48 ? 48 : bh;
    bw = bw < 1 ? 1 : bw > (rows == 1 ? 4096 : 48) ? (rows == 1 ? 4096 : 48) : bw;
    memset(w, 0, ft->n * sizeof(float));
    SeedCtx c = { ft, bh, bw, pnmf_malloc_array(ft->m, sizeof(double)), pnmf_malloc_array(ft->m, sizeof(int)) };
    if (c.best && c.at) parallel_run(ft->threads < ft->m ? ft->threads : ft->m, seed_task, &c);
    double best = 0;
    int bj = -1;
    for (int j = 0; c.best && c.at && j < ft->m; j++)
        if (c.at[j] >= 0 && c.best[j] > best * (1 + 1e-12)) best = c.best[j], bj = j;
    const int at = bj >= 0 ? c.at[bj] : 0;
    pnmf_free(c.best);
    pnmf_free(c.at);
    if (bj < 0) return;
    const int by = at / cols, bx = at % cols;
    const float *e = ft->E + bj * ft->n;
    for (int y = by; y < by + bh; y++)
        for (int x = bx; x < bx + bw; x++) {
            const float v = e[(size_t)y * stride + x];
            w[(size_t)y * stride + x] = v > 0 || sg ? v : 0;
        }
}

/* The k-th smallest of a[0..n-1] (k from 0), by quickselect: a[0..k-1]
 * end no larger and a[k+1..n-1] no smaller. */
static float select_kth(float *a, int n, int k)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        const float pivot = a[lo + (hi - lo) / 2];
        int i = lo, j = hi;
        while (i <= j) {
            while (a[i] < pivot) i++;
            while (a[j] > pivot) j--;
            if (i <= j) {
                const float t = a[i];
                a[i++] = a[j], a[j--] = t;
            }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else break; /* a[j+1..i-1] all equal the pivot */
    }
    return a[k];
}

static void median_frame(PnmfFitter *ft, float *w)
{
    float buf[1024]; /* m <= PNMF_MAX_WINDOW, checked by the caller */
    const int m = ft->m;
    for (size_t x = 0; x < ft->n; x++) {
        for (int j = 0; j < m; j++) buf[j] = ft->A[j * ft->n + x];
        const float hi = select_kth(buf, m, m / 2);
        if (m & 1) {
            w[x] = hi;
        } else { /* the lower middle: the largest below m / 2 */
            float lo = buf[0];
            for (int j = 1; j < m / 2; j++) lo = buf[j] > lo ? buf[j] : lo;
            w[x] = 0.5f * (lo + hi);
        }
    }
}

static void init_random(PnmfFitter *ft, int k, float *W, PnmfAtom *H, uint64_t *rng, int random_h)
{
    double mean = 0;
    for (size_t q = 0; q < (size_t)ft->m * ft->n; q++) mean += ft->A[q];
    mean /= (double)ft->m * ft->n;
    for (size_t q = 0; q < (size_t)k * ft->n; q++) W[q] = (float)rng_unit(rng);
    for (int j = 0; j < ft->m; j++)
        for (int i = 0; i < k; i++) {
            PnmfAtom a = { 0, 0 };
            if (random_h) {
                a.r = (float)(rng_unit(rng) * 2 * mean / (k * 0.5 + 1e-9));
                a.p = (int)(rng_next(rng) % ft->n);
            }
            H[j * k + i] = a;
        }
}

/* The bits a component would cost, as the automatic size prices it: about
 * two a pixel of its support (zstd-coded levels) and 24 an entry. A rough
 * figure: it only has to tell a part from noise. */
static double component_bits(const PnmfFitter *ft, const float *w, const PnmfAtom *H, int k, int i)
{
    float mx = 0;
    for (size_t x = 0; x < ft->n; x++) mx = fmaxf(mx, fabsf(w[x]));
    size_t support = 0;
    for (size_t x = 0; x < ft->n; x++) support += fabsf(w[x]) > 0.01f * mx;
    int entries = 0;
    for (int j = 0; j < ft->m; j++) entries += H[j * k + i].r != 0;
    return 2.0 * (double)support + 24.0 * entries;
}

/* The light initialisation's step: component i, just seeded, placed in
 * each frame by one exact coordinate step on the residual of the others
 * (ft->E), which stay where they are. */
typedef struct PlaceCtx {
    PnmfFitter *ft;
    const float *W;
    int k, i;
    PnmfAtom *H;
} PlaceCtx;

static void place_task(void *vctx, int tid, int T)
{
    PlaceCtx *c = vctx;
    PnmfFitter *ft = c->ft;
    Scratch *s = &ft->scr[tid];
    for (int j = tid; j < ft->m; j += T) {
        PnmfAtom a = { 0, 0 };
        forward_any(ft, ft->E + j * ft->n, s->R, s);
        coord_step(ft, s, s->R, c->i, &a);
        c->H[j * c->k + c->i] = a;
        /* the residual with it placed: what all_residuals() would give,
         * the components subtracted in the same order */
        if (a.r != 0)
            shift_add_box(ft->rows, ft->cols, ft->E + j * ft->n, c->W + c->i * ft->n, -a.r, a.p, ft->box[c->i]);
    }
}

/* The temporal median, then components seeded one at a time from the
 * largest residual; after each seed, a greedy H step of all components
 * so far, or (light) the new one's placement alone: k - 1 correlations a
 * frame in all instead of about k^2 / 2 greedy ones. */
static int init_improved(PnmfFitter *ft, int k, float *W, PnmfAtom *H, int sweeps, int light)
{
    memset(W, 0, (size_t)k * ft->n * sizeof(float));
    memset(H, 0, (size_t)ft->m * k * sizeof(PnmfAtom));
    if (ft->m > 1024) return PNMF_ERR_ARG;
    median_frame(ft, W);
    for (int j = 0; j < ft->m; j++) H[j * k] = (PnmfAtom){ 1, 0 };
    for (int i = 1; i < k; i++) {
        if (!light || i == 1) all_residuals(ft, W, k, H); /* the light start keeps them up to date */
        seed_from_residual(ft, W + i * ft->n);
        if (light) {
            set_component(ft, W, i); /* the others' are unchanged since their seeding */
            if (ft->wnorm2[i] <= 0) continue;
            PlaceCtx c = { ft, W, k, i, H };
            parallel_run(ft->threads < ft->m ? ft->threads : ft->m, place_task, &c);
        } else {
            PNMF_CHECK(pnmf_fitter_h_step(ft, W, k, H, PNMF_H_GREEDY, sweeps));
        }
    }
    return 0;
}

/* Components never used get a fresh seed from the residual; their
 * coefficients are all zero, so the objective does not change. */
static void reseed_dead(PnmfFitter *ft, float *W, int k, const PnmfAtom *H)
{
    int residuals_ready = 0;
    for (int i = 0; i < k; i++) {
        int used = 0;
        for (int j = 0; j < ft->m && !used; j++) used = H[j * k + i].r != 0;
        if (used) continue;
        if (!residuals_ready) all_residuals(ft, W, k, H), residuals_ready = 1;
        seed_from_residual(ft, W + i * ft->n);
    }
}

/* What the ALS loop of one start accumulates. */
typedef struct AlsRun {
    double t_h, t_w;
    int w_rejects;
    double w_rise; /* the largest rise of a W step undone, relative to the frames' energy */
} AlsRun;

/* Up to iters ALS iterations of kk components from Wc, Hc (H with kk a
 * frame); the objective after each into trace[1..] (trace[0]: before);
 * returns the number made, or a negative error; *f: the last objective. */
static int als(PnmfFitter *ft, const PnmfFitParams *p, int kk, float *Wc, PnmfAtom *Hc, int iters, double *trace,
               double *f, AlsRun *run)
{
    const int improved = p->algo == PNMF_ALGO_IMPROVED;
    const int hmode = improved ? PNMF_H_GREEDY : PNMF_H_CYCLIC;
    const int wmode = improved ? PNMF_W_HALS : PNMF_W_PG;
    const int sweeps = p->inner_iters > 0 ? p->inner_iters : 10;
    *f = all_residuals(ft, Wc, kk, Hc);
    if (trace) trace[0] = *f;
    int it;
    for (it = 1; it <= iters; it++) {
        /* The greedy order rescues frames stuck in a wrong shift, but
         * costs k/2 times a sweep; once the components settle the
         * warm sweep alone rarely loses to it. */
        const int at = it + (p->warm_k > 0 ? p->warm_it : 0); /* counting a warm start's iterations */
        const int greedy_now = hmode == PNMF_H_GREEDY && (at <= 2 || at % 5 == 0);
        const double t0 = seconds();
        pnmf_fitter_h_step(ft, Wc, kk, Hc, greedy_now ? PNMF_H_GREEDY : PNMF_H_CYCLIC, sweeps);
        const double t1 = seconds();
        run->t_h += t1 - t0;
        const int ret = pnmf_fitter_w_step(ft, Wc, kk, Hc, wmode, sweeps);
        run->t_w += seconds() - t1;
        if (ret < 0) return ret;
        run->w_rejects += ret;
        if (ret && ft->w_rise > run->w_rise) run->w_rise = ft->w_rise;
        normalize_pow2((int)ft->n, Wc, kk, Hc, ft->m);
        if (improved) reseed_dead(ft, Wc, kk, Hc);
        if (improved && p->recentre) pnmf_recentre(ft->rows, ft->cols, Wc, kk, Hc, ft->m);
        /* EM for the masked loss: the invisible part
         * of each frame becomes what the model shows there, so the
         * circular algorithm's objective is the visible part's */
        if (masked(ft)) pnmf_fitter_impute(ft, Wc, kk, Hc);
        const double fn = all_residuals(ft, Wc, kk, Hc);
        if (trace) trace[it] = fn;
        const int converged = *f - fn <= p->tol * fn;
        *f = fn;
        if (converged) break;
    }
    return it > iters ? iters : it;
}


/* The automatic size (p->add_lambda > 0): fits of 1, 2, ... components,
 * each from the improved initialisation (the temporal median, then
 * components seeded one at a time from the largest residual) and
 * PNMF_GROW_ITERS ALS iterations; a size is kept only if its objective is
 * below the previous size's by more than add_lambda times the bits of
 * its last-seeded component. The first size that does not pay, or the
 * cap k, stops the growth; Wc, Hc end with the last size kept, *kk
 * components (H with *kk a frame). Each size starts afresh, so the
 * components so far are not frozen into the shapes a smaller fit gave
 * them (growing by warm starts stalls: samples in tests/test_scenes.c). */
static int grow(PnmfFitter *ft, const PnmfFitParams *p, float *Wc, PnmfAtom *Hc, int *kk, AlsRun *run)
{
    const int k = p->k, m = ft->m;
    const size_t n = ft->n;
    const int sweeps = p->inner_iters > 0 ? p->inner_iters : 10;
    float *Wt = pnmf_malloc_array((size_t)k * n, sizeof(float));
    PnmfAtom *Ht = pnmf_malloc_array((size_t)m * k, sizeof(PnmfAtom));
    if (!Wt || !Ht) {
        pnmf_free(Wt), pnmf_free(Ht);
        return PNMF_ERR_NOMEM;
    }
    int ret = 0;
    double f = INFINITY;
    *kk = 0;
    for (int c = 1; c <= k; c++) {
        double fn;
        ret = init_improved(ft, c, Wt, Ht, sweeps, 0);
        if (ret < 0) break;
        normalize_pow2((int)n, Wt, c, Ht, m);
        PnmfFitParams pg = *p;
        pg.inner_iters = PNMF_GROW_SWEEPS < sweeps ? PNMF_GROW_SWEEPS : sweeps;
        ret = als(ft, &pg, c, Wt, Ht, PNMF_GROW_ITERS, NULL, &fn, run);
        if (ret < 0) break;
        const double bits = c > 1 ? component_bits(ft, Wt + (size_t)(c - 1) * n, Ht, c, c - 1) : 0;
        pnmf_log(p->log, PNMF_LOG_DEBUG, "automatic size: %d components: objective %.6g (%.0f bits for the last)",
                 c, fn, bits);
        if (c > 1 && f - fn <= p->add_lambda * bits) break; /* it does not pay */
        memcpy(Wc, Wt, (size_t)c * n * sizeof(float));
        memcpy(Hc, Ht, (size_t)m * c * sizeof(PnmfAtom));
        f = fn;
        *kk = c;
    }
    pnmf_free(Wt);
    pnmf_free(Ht);
    return ret < 0 ? ret : 0;
}

int pnmf_fitter_fit(PnmfFitter *ft, const PnmfFitParams *p, float *W, PnmfAtom *H, PnmfFitStats *st)
{
    const int k = p->k, m = ft->m;
    if (k < 1 || k > ft->max_k || !ft->A) return PNMF_ERR_ARG;
    const int improved = p->algo == PNMF_ALGO_IMPROVED;
    const int sweeps = p->inner_iters > 0 ? p->inner_iters : 10;
    const size_t kn = (size_t)k * ft->n;
    float *Wc = pnmf_malloc_array(kn, sizeof(float));
    PnmfAtom *Hc = pnmf_malloc_array((size_t)m * k, sizeof(PnmfAtom));
    double *trace = pnmf_malloc_array((size_t)p->iterations + 1, sizeof(double));
    if (!Wc || !Hc || !trace) {
        pnmf_free(Wc), pnmf_free(Hc), pnmf_free(trace);
        return PNMF_ERR_NOMEM;
    }
    for (int t = 0; t < ft->threads; t++) ft->scr[t].guard_rejects = 0, ft->scr[t].guard_rise = 0;
    double best = INFINITY, t_init = 0;
    AlsRun run = { 0, 0, 0, 0 };
    int ret = 0;
    const int restarts = p->restarts > 0 ? p->restarts : 1;
    int kk = k; /* components in use: fewer than k when the automatic size stops early */
    for (int rs = 0; rs < restarts; rs++) {
        uint64_t rng = p->seed * 0x9E3779B97F4A7C15ull + (uint64_t)rs * 7919 + 1;
        const double t0 = seconds();
        if (rs == 0 && p->warm_k > 0) {
            kk = p->warm_k < k ? p->warm_k : k;
            memcpy(Wc, W, (size_t)kk * ft->n * sizeof(float));
            for (int j = 0; j < m; j++)
                for (int i = 0; i < kk; i++) Hc[(size_t)j * kk + i] = H[(size_t)j * k + i];
        } else if (improved && rs == 0 && p->add_lambda > 0) {
            ret = grow(ft, p, Wc, Hc, &kk, &run);
        } else if (improved && rs == 0) {
            ret = init_improved(ft, k, Wc, Hc, sweeps, p->light_init);
        } else {
            init_random(ft, kk, Wc, Hc, &rng, !improved);
            if (improved) pnmf_fitter_h_step(ft, Wc, kk, Hc, PNMF_H_GREEDY, sweeps);
        }
        if (ret < 0) break;
        normalize_pow2((int)ft->n, Wc, kk, Hc, m);
        t_init += seconds() - t0;
        double f;
        const int it = als(ft, p, kk, Wc, Hc, p->iterations, trace, &f, &run);
        if (it < 0) {
            ret = it;
            break;
        }
        if (f < best) {
            best = f;
            memcpy(W, Wc, (size_t)kk * ft->n * sizeof(float));
            memset(W + (size_t)kk * ft->n, 0, (size_t)(k - kk) * ft->n * sizeof(float));
            for (int j = 0; j < m; j++)
                for (int i = 0; i < k; i++) H[(size_t)j * k + i] = i < kk ? Hc[(size_t)j * kk + i] : (PnmfAtom){ 0, 0 };
            if (st) {
                st->objective = f;
                st->iterations = it;
                st->best_restart = rs;
                st->k_used = kk;
                if (st->trace) memcpy(st->trace, trace, (size_t)(it + 1) * sizeof(double));
            }
        }
    }
    if (st) {
        st->seconds_init = t_init, st->seconds_h = run.t_h, st->seconds_w = run.t_w;
        st->guard_rejects_h = 0;
        st->guard_rise_h = 0;
        for (int t = 0; t < ft->threads; t++) {
            st->guard_rejects_h += ft->scr[t].guard_rejects;
            if (ft->scr[t].guard_rise > st->guard_rise_h) st->guard_rise_h = ft->scr[t].guard_rise;
        }
        st->guard_rejects_w = run.w_rejects;
        st->guard_rise_w = run.w_rise;
    }
    pnmf_free(Wc);
    pnmf_free(Hc);
    pnmf_free(trace);
    return ret < 0 ? ret : 0;
}
