/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * FFT correlations, for the H step's coordinate steps. Plans are made once per geometry with
 * FFTW_ESTIMATE, never FFTW_MEASURE: a measured plan may pick a different
 * algorithm from one run to the next, and with it different rounding, which
 * would break "same input, same seed, same bytes". Buffers all come from
 * fftwf_malloc so the new-array execute functions see the alignment the
 * plans were made with; those functions are thread-safe, the planner is not.
 */
#include <fftw3.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "fftcorr.h"
#include "internal.h"

struct PnmfFft {
    int rows, cols, hc;      /* hc = cols/2 + 1 */
    size_t n, spec_len;
    fftwf_plan fwd, inv;
    float *rowtab, *coltab;  /* exp(-2 pi i t / rows), exp(-2 pi i t / cols): re, im pairs */
};

static pthread_mutex_t planner_lock = PTHREAD_MUTEX_INITIALIZER;

int pnmf_fft_open(PnmfFft **out, int rows, int cols)
{
    *out = NULL;
    if (rows < 1 || cols < 1) return PNMF_ERR_ARG;
    PnmfFft *f = pnmf_calloc(1, sizeof(*f));
    if (!f) return PNMF_ERR_NOMEM;
    f->rows = rows;
    f->cols = cols;
    f->hc = cols / 2 + 1;
    f->n = (size_t)rows * cols;
    f->spec_len = (size_t)rows * f->hc;
    f->rowtab = pnmf_malloc_array((size_t)2 * rows, sizeof(float));
    f->coltab = pnmf_malloc_array((size_t)2 * cols, sizeof(float));
    float *x = pnmf_fft_alloc_real(f);
    float *X = pnmf_fft_alloc_spec(f);
    if (!f->rowtab || !f->coltab || !x || !X) goto nomem;
    for (int t = 0; t < rows; t++) {
        f->rowtab[2 * t] = (float)cos(2 * M_PI * t / rows);
        f->rowtab[2 * t + 1] = (float)-sin(2 * M_PI * t / rows);
    }
    for (int t = 0; t < cols; t++) {
        f->coltab[2 * t] = (float)cos(2 * M_PI * t / cols);
        f->coltab[2 * t + 1] = (float)-sin(2 * M_PI * t / cols);
    }
    pthread_mutex_lock(&planner_lock);
    f->fwd = fftwf_plan_dft_r2c_2d(rows, cols, x, (fftwf_complex *)X, FFTW_ESTIMATE);
    f->inv = fftwf_plan_dft_c2r_2d(rows, cols, (fftwf_complex *)X, x, FFTW_ESTIMATE);
    pthread_mutex_unlock(&planner_lock);
    fftwf_free(x);
    fftwf_free(X);
    if (!f->fwd || !f->inv) {
        pnmf_fft_close(&f);
        return PNMF_ERR_NOMEM;
    }
    *out = f;
    return 0;
nomem:
    fftwf_free(x);
    fftwf_free(X);
    pnmf_fft_close(&f);
    return PNMF_ERR_NOMEM;
}

void pnmf_fft_close(PnmfFft **pf)
{
    PnmfFft *f = *pf;
    if (!f) return;
    pthread_mutex_lock(&planner_lock);
    if (f->fwd) fftwf_destroy_plan(f->fwd);
    if (f->inv) fftwf_destroy_plan(f->inv);
    pthread_mutex_unlock(&planner_lock);
    pnmf_free(f->rowtab);
    pnmf_free(f->coltab);
    pnmf_freep(pf);
}

size_t pnmf_fft_spec_len(const PnmfFft *f) { return f->spec_len; }

float *pnmf_fft_alloc_real(const PnmfFft *f) { return fftwf_malloc(sizeof(float) * f->n); }

float *pnmf_fft_alloc_spec(const PnmfFft *f) { return fftwf_malloc(sizeof(float) * 2 * f->spec_len); }

float *pnmf_fft_alloc_floats(size_t count)
{
    if (count > SIZE_MAX / sizeof(float)) return NULL;
    return fftwf_malloc(sizeof(float) * (count ? count : 1));
}

void pnmf_fft_free(void *p) { fftwf_free(p); }

void pnmf_fft_forward(const PnmfFft *f, const float *x, float *X)
{
    /* r2c keeps its input for out-of-place plans (FFTW_DESTROY_INPUT is
     * only the default for c2r), so the cast is safe. */
    fftwf_execute_dft_r2c(f->fwd, (float *)x, (fftwf_complex *)X);
}

void pnmf_fft_corr(const PnmfFft *f, const float *A, const float *W, float *tmp, float *out)
{
    const float s = 1.0f / (float)f->n;
    for (size_t i = 0; i < f->spec_len; i++) {
        float ar = A[2 * i], ai = A[2 * i + 1], wr = W[2 * i], wi = W[2 * i + 1];
        tmp[2 * i] = (ar * wr + ai * wi) * s;     /* A * conj(W) / n */
        tmp[2 * i + 1] = (ai * wr - ar * wi) * s;
    }
    fftwf_execute_dft_c2r(f->inv, (fftwf_complex *)tmp, out);
}

/* Columns of the half spectrum whose phases pnmf_fft_shift_add gathers at
 * a time, on the stack. */
#define SHIFT_ADD_CHUNK 512

void pnmf_fft_shift_add(const PnmfFft *f, float *X, const float *W, float r, int p)
{
    if (r == 0) return;
    const int py = p / f->cols, px = p % f->cols;
    /* the columns' phases gathered first, a chunk at a time, so the rows'
     * loop runs over contiguous arrays (vectorized; the same arithmetic) */
    float col[2 * SHIFT_ADD_CHUNK];
    for (int c0 = 0; c0 < f->hc; c0 += SHIFT_ADD_CHUNK) {
        const int len = f->hc - c0 < SHIFT_ADD_CHUNK ? f->hc - c0 : SHIFT_ADD_CHUNK;
        int tx = (int)(((long long)c0 * px) % f->cols);
        for (int c = 0; c < len; c++) {
            col[2 * c] = f->coltab[2 * tx], col[2 * c + 1] = f->coltab[2 * tx + 1];
            tx += px;
            if (tx >= f->cols) tx -= f->cols;
        }
        for (int ky = 0; ky < f->rows; ky++) {
            const int ty = (int)(((long long)ky * py) % f->rows);
            /* the row's phase, with r folded in */
            const float rr = r * f->rowtab[2 * ty], ri = r * f->rowtab[2 * ty + 1];
            float *restrict x = X + 2 * ((size_t)ky * f->hc + c0);
            const float *restrict w = W + 2 * ((size_t)ky * f->hc + c0);
            for (int c = 0; c < len; c++) {
                const float cr = col[2 * c], ci = col[2 * c + 1];
                const float phr = rr * cr - ri * ci, phi = rr * ci + ri * cr;
                x[2 * c] += phr * w[2 * c] - phi * w[2 * c + 1];
                x[2 * c + 1] += phr * w[2 * c + 1] + phi * w[2 * c];
            }
        }
    }
}

double pnmf_fft_energy(const PnmfFft *f, const float *X)
{
    /* Columns kx and cols-kx are conjugate twins: every column of the half
     * spectrum but kx = 0 (and kx = cols/2 for even cols) counts twice. */
    double e = 0;
    const int last_single = (f->cols % 2 == 0) ? f->hc - 1 : -1;
    for (int ky = 0; ky < f->rows; ky++) {
        const float *x = X + (size_t)2 * ky * f->hc;
        for (int kx = 0; kx < f->hc; kx++) {
            double m = (double)x[2 * kx] * x[2 * kx] + (double)x[2 * kx + 1] * x[2 * kx + 1];
            e += (kx == 0 || kx == last_single) ? m : 2 * m;
        }
    }
    return e / (double)f->n;
}
