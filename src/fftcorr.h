/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * FFT correlations on a torus of rows x cols samples (the vector shift model
 * is the 1 x n torus of the column-stacked frame). The only file that calls
 * FFTW. Spectra are the r2c half spectra, rows x (cols/2+1) complex values
 * stored as interleaved float pairs.
 *
 * Conventions:
 *   (S_p w)[y,x] = w[(y-py) mod rows, (x-px) mod cols]   content moves by +p
 *   corr(a,w)[p] = <a, S_p w> = sum_x a[x] w[x-p]
 * The paper's sigma_p (w_i = v_{i+p}) is S_{-p}.
 */
#ifndef PNMF_FFTCORR_H
#define PNMF_FFTCORR_H

#include <stddef.h>

typedef struct PnmfFft PnmfFft;

int    pnmf_fft_open(PnmfFft **f, int rows, int cols);
void   pnmf_fft_close(PnmfFft **f);
/* Complex values in a half spectrum (rows * (cols/2+1)). */
size_t pnmf_fft_spec_len(const PnmfFft *f);

/* Aligned buffers for everything passed to the functions below. */
float *pnmf_fft_alloc_real(const PnmfFft *f);  /* rows*cols floats */
float *pnmf_fft_alloc_spec(const PnmfFft *f);  /* 2*spec_len floats */
/* count floats, aligned as FFTW wants; slices of it passed to the
 * functions below must start at multiples of PNMF_FFT_ALIGN floats. */
#define PNMF_FFT_ALIGN 16
float *pnmf_fft_alloc_floats(size_t count);
void   pnmf_fft_free(void *p);

/* X = FFT(x). x is kept. Thread-safe. */
void   pnmf_fft_forward(const PnmfFft *f, const float *x, float *X);

/* out[p] = corr(a, w)[p] for every shift p, from the spectra A and W;
 * tmp is a spectrum-sized scratch buffer. Thread-safe. */
void   pnmf_fft_corr(const PnmfFft *f, const float *A, const float *W, float *tmp, float *out);

/* X += r * FFT(S_p w), given W = FFT(w): a phase ramp, no transform. */
void   pnmf_fft_shift_add(const PnmfFft *f, float *X, const float *W, float r, int p);

/* ||x||^2 from X = FFT(x) (Parseval on the half spectrum), in double. */
double pnmf_fft_energy(const PnmfFft *f, const float *X);

#endif /* PNMF_FFTCORR_H */
