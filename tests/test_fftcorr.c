/* SPDX-License-Identifier: GPL-2.0-or-later */
/* FFT correlation conventions (fftcorr.h) against direct loops. */
#include <stdlib.h>
#include <string.h>

#include "fftcorr.h"
#include "permnmf.h"
#include "test.h"

static double urand(unsigned *s) { *s = *s * 1103515245u + 12345u; return ((*s >> 8) & 0xFFFF) / 65536.0; }

static void check_geometry(int rows, int cols, unsigned seed)
{
    const int n = rows * cols;
    PnmfFft *f;
    CHECK(pnmf_fft_open(&f, rows, cols) == 0);
    float *a = pnmf_fft_alloc_real(f), *w = pnmf_fft_alloc_real(f), *c = pnmf_fft_alloc_real(f);
    float *sw = pnmf_fft_alloc_real(f);
    float *A = pnmf_fft_alloc_spec(f), *W = pnmf_fft_alloc_spec(f), *T = pnmf_fft_alloc_spec(f);
    float *X = pnmf_fft_alloc_spec(f);
    for (int i = 0; i < n; i++) a[i] = (float)urand(&seed), w[i] = (float)urand(&seed);
    pnmf_fft_forward(f, a, A);
    pnmf_fft_forward(f, w, W);
    pnmf_fft_corr(f, A, W, T, c);
    /* corr(a,w)[p] = sum_x a[x] (S_p w)[x], S_p from its definition */
    double maxerr = 0, scale = 0;
    for (int p = 0; p < n; p++) {
        const int py = p / cols, px = p % cols;
        double s = 0;
        for (int y = 0; y < rows; y++)
            for (int x = 0; x < cols; x++) {
                const int sy = ((y - py) % rows + rows) % rows, sx = ((x - px) % cols + cols) % cols;
                s += (double)a[y * cols + x] * w[sy * cols + sx];
            }
        maxerr = fmax(maxerr, fabs(s - c[p]));
        scale = fmax(scale, fabs(s));
    }
    CHECK_MSG(maxerr <= 1e-5 * scale, "%dx%d corr err %g of %g", rows, cols, maxerr, scale);

    /* the phase ramp equals the FFT of the shifted image */
    for (int t = 0; t < 5; t++) {
        const int p = (int)(urand(&seed) * n) % n;
        memset(sw, 0, n * sizeof(float));
        pnmf_shift_add(rows, cols, sw, w, 1.0f, p);
        pnmf_fft_forward(f, sw, X);
        memset(T, 0, pnmf_fft_spec_len(f) * 2 * sizeof(float));
        pnmf_fft_shift_add(f, T, W, 1.0f, p);
        double e = 0, m = 0;
        for (size_t i = 0; i < 2 * pnmf_fft_spec_len(f); i++) e = fmax(e, fabs(T[i] - X[i])), m = fmax(m, fabs(X[i]));
        CHECK_MSG(e <= 1e-5 * m, "%dx%d ramp p=%d err %g", rows, cols, p, e);
    }
    /* Parseval */
    double e2 = 0;
    for (int i = 0; i < n; i++) e2 += (double)a[i] * a[i];
    CHECK_NEAR(pnmf_fft_energy(f, A), e2, 1e-5);

    pnmf_fft_free(a), pnmf_fft_free(w), pnmf_fft_free(c), pnmf_fft_free(sw);
    pnmf_fft_free(A), pnmf_fft_free(W), pnmf_fft_free(T), pnmf_fft_free(X);
    pnmf_fft_close(&f);
}

int main(void)
{
    check_geometry(1, 20, 1);
    check_geometry(1, 37, 2);
    check_geometry(5, 7, 3);
    check_geometry(8, 8, 4);
    check_geometry(6, 9, 5);
    check_geometry(12, 10, 6);
    /* half spectra wider than the phase ramp's chunk of 512 columns */
    check_geometry(2, 1100, 7);
    check_geometry(1, 1031, 8);
    return test_summary("test_fftcorr");
}
