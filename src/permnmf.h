/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Permutation NMF (paper sections 2-3): A ~ W <> H^T.
 *
 * Frames and components are images on a torus of rows x cols samples; the
 * paper's vector model is the 1 x n torus of the column-stacked frame, the
 * torus model the rows x cols frame itself. An atom [r, p] places component
 * i in frame j as r * S_p w_i, with p = py * cols + px and
 *   (S_p w)[y,x] = w[(y-py) mod rows, (x-px) mod cols]
 * (the paper's sigma_p is S_{-p}; see fftcorr.h). H holds one atom per
 * (frame, component), r = 0 meaning the component is absent from the frame.
 *
 * Pure maths, no I/O. FFTs go through fftcorr.h.
 */
#ifndef PNMF_PERMNMF_H
#define PNMF_PERMNMF_H

#include <stdint.h>

#include "pnmf/common.h"

typedef struct PnmfAtom {
    float r;   /* coefficient, >= 0 */
    int32_t p; /* shift, 0 <= p < rows*cols */
} PnmfAtom;

/* Move each of the k components so that its centre of mass (the circular
 * mean of |w| along each axis) is at the torus centre, and each of its
 * shifts in the m frames' entries H (m x k) to match: no reconstruction
 * changes (the shift ambiguity S_{p+q} S_{-q} w = S_p w). */
void pnmf_recentre(int rows, int cols, float *W, int k, PnmfAtom *H, int m);

/* dst += r * S_p src, and dst += r * S_{-p} src, on a rows x cols torus. */
void pnmf_shift_add(int rows, int cols, float *dst, const float *src, float r, int p);
void pnmf_unshift_add(int rows, int cols, float *dst, const float *src, float r, int p);

/* One column of the diamond product (paper 2.1): out = sum_i h_i(w_i)
 * = sum_i r_i S_{p_i} w_i, for the k components W (k x n, row i = w_i). */
void pnmf_diamond(int rows, int cols, const float *W, int k, const PnmfAtom *h, float *out);

/* F(W,H) = ||A - W <> H^T||_F^2 in double. A: m x n, H: m x k. */
double pnmf_objective(int rows, int cols, const float *A, int m, const float *W, int k,
                      const PnmfAtom *H);

/* The gradient of F with respect to W (Appendix A):
 * grad = -2 (A - W <> H^T) <> H', H' holding the transposed shifts. G: k x n. */
void pnmf_w_gradient(int rows, int cols, const float *A, int m, const float *W, int k,
                     const PnmfAtom *H, float *G);

/* Single Permutation NNLS (paper 3.1): the [r, p] minimizing ||v - r S_p w||^2
 * over r >= 0 and every shift p, by FFT cross-correlation. Ties go to the
 * lowest p. Returns r = 0, p = 0 when no shift correlates positively. */
PnmfAtom pnmf_spnnls(int rows, int cols, const float *v, const float *w);

enum PnmfHMode {
    PNMF_H_CYCLIC = 0, /* the paper's Multiple Permutation NNLS from the current H */
    PNMF_H_GREEDY = 1, /* also a greedy matching-pursuit order from zero, then the
                          same sweeps; keep whichever gives the lower objective */
    PNMF_H_GREEDY_ONLY = 2, /* the greedy order and its sweeps alone, kept whatever
                               they give (tests compare the two orders with it) */
};

enum PnmfWMode {
    PNMF_W_PG = 0,     /* the paper's projected gradient (safe step 1/L) */
    PNMF_W_HALS = 1,   /* exact per-component update in frames aligned by -p */
};

typedef struct PnmfFitParams {
    int k;             /* components */
    int algo;          /* enum PnmfAlgo: picks init, H mode and W mode */
    int iterations;    /* ALS iterations per restart */
    int inner_iters;   /* sweeps of Multiple Permutation NNLS / PG steps */
    int restarts;      /* fits from different starts; the best is kept */
    uint64_t seed;
    double tol;        /* stop when the relative decrease falls below it */
    double add_lambda; /* > 0 (improved algorithm): automatic size. The initialisation
                          adds components one at a time and stops at the first
                          whose objective decrease is not above add_lambda times
                          its estimated bits; k is the cap. 0: always k. */
    int light_init;    /* improved algorithm, fixed size: each seeded component placed
                          alone, not a greedy H step of all (the encoder's probe) */
    int recentre;      /* improved algorithm: pnmf_recentre() after each W step */
    int warm_k;        /* > 0: no initialisation; the first start continues from W and H
                          as given (H m x k atoms), their first warm_k components, */
    int warm_it;       /* ... after warm_it iterations: a fit of n iterations stopped and
                          continued for m more is the same as one of n + m (the frames'
                          invisible part imputed from W and H as the fit left them) */
    const PnmfLogger *log; /* where the fit's figures go; NULL: nowhere */
} PnmfFitParams;

typedef struct PnmfFitStats {
    double objective;    /* of the returned W, H */
    int iterations;      /* ALS iterations of the kept restart */
    int best_restart;    /* which restart was kept */
    int guard_rejects_h; /* frame H steps and W steps undone because float */
    int guard_rejects_w; /* rounding would have raised the objective (rare) */
    double seconds_init, seconds_h, seconds_w; /* wall time by stage, all restarts */
    double *trace;       /* if not NULL: objective after each iteration of the
                            kept restart, trace[0] = initial (iterations+1 values) */
    int k_used;          /* components the fit used (k unless add_lambda > 0); the
                            others are returned as zeros with zero coefficients */
    double guard_rise_h; /* the largest rise of a frame H step undone, and of a W */
    double guard_rise_w; /* step undone, relative to the energy of the frame (H) or
                            all frames (W): float rounding moves the objective by
                            at most about 1e-7 of it; a step that truly ascends
                            rises by far more */
} PnmfFitStats;

typedef struct PnmfFitter PnmfFitter;

/* A fitter for frames of rows x cols, up to max_m frames and max_k
 * components, using threads worker threads (the result does not depend on
 * threads). */
int  pnmf_fitter_open(PnmfFitter **ft, int rows, int cols, int max_m, int max_k, int threads);
void pnmf_fitter_close(PnmfFitter **ft);

/* Options, before set_frames: only the top-left vis_rows x vis_cols of
 * each frame is data (the canvas model: the rest of the torus is outside
 * the frame, and the loss counts the visible part only), and whether
 * components may hold negative values (W steps then do not clamp at 0). */
int  pnmf_fitter_set_options(PnmfFitter *ft, int vis_rows, int vis_cols, int signed_w);

/* The frames A (m x n, kept by reference until the next call; with a
 * visible part smaller than the torus, copied, their invisible part
 * imputed with the visible mean). */
int  pnmf_fitter_set_frames(PnmfFitter *ft, const float *A, int m);

/* With a visible part: set each frame's invisible part to what W, H show
 * there (the E step of EM for the masked loss; it never raises the masked
 * objective, and makes the circular objective equal to it). A no-op when
 * the whole torus is visible. */
int  pnmf_fitter_impute(PnmfFitter *ft, const float *W, int k, const PnmfAtom *H);

/* The visible part's objective sum_j ||M (a_j - W <> h_j)||^2, in double. */
double pnmf_fitter_objective(PnmfFitter *ft, const float *W, int k, const PnmfAtom *H);

/* Multiple Permutation NNLS for every frame with W fixed (k x n): updates H
 * (m x k) in place, never raising any frame's objective (PNMF_H_GREEDY_ONLY
 * excepted: it starts from zero). Returns the number of frames whose sweep
 * was undone because float rounding made it worse (0 on well-posed data),
 * or a negative error. */
int  pnmf_fitter_h_step(PnmfFitter *ft, const float *W, int k, PnmfAtom *H, int mode, int sweeps);

/* One W step with H fixed, never raising the objective. Returns 1 if the
 * step had to be undone (float rounding made it worse), 0 if kept, or a
 * negative error. */
int  pnmf_fitter_w_step(PnmfFitter *ft, float *W, int k, const PnmfAtom *H, int mode, int iters);

/* The whole fit: initialisation, ALS iterations, restarts. W (k x n) and
 * H (m x k) receive the best fit; components are scaled to a maximum of 1. */
int  pnmf_fitter_fit(PnmfFitter *ft, const PnmfFitParams *p, float *W, PnmfAtom *H,
                     PnmfFitStats *st);

#endif /* PNMF_PERMNMF_H */
