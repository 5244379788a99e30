/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * @file fit.h
 * Permutation NMF as a library call, outside the codec: fit m frames with
 * k shifted components (paper sections 2-3), and the paper's two-level
 * decomposition (section 3.4) for frames where one object appears several
 * times.
 *
 * Frames and components are width x height float images in row-major
 * order (pixel (y, x) at y * width + x). A shift p moves a component by
 * its shift model (enum PnmfShiftModel in pnmf.h):
 *  - PNMF_SHIFT_TORUS: p = dy * width + dx, the 2-D cyclic shift of the
 *    frame by (dy, dx);
 *  - PNMF_SHIFT_VECTOR: the paper's 1-D cyclic shift by p of the
 *    column-stacked frame (index x * height + y), p = dx * height + dy.
 *    It equals the torus shift by (dy, dx) for pixels with y + dy < height
 *    and moves the others one column further right (a sheared wrap).
 * In both models 0 <= p < width * height and (dy, dx) is read off p as
 * above: pnmf_fit_shift_dydx().
 */
#ifndef PNMF_FIT_H
#define PNMF_FIT_H

#include <stdint.h>

#include "pnmf/common.h"
#include "pnmf/pnmf.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One entry of H: component placed as r * S_p w. r = 0: absent. */
typedef struct PnmfFitAtom {
    float r;   ///< coefficient, >= 0
    int32_t p; ///< shift, 0 <= p < width * height
} PnmfFitAtom;

typedef struct PnmfFitSettings {
    int width, height; ///< frame size (no default: 0; width * height <= 2^22)
    int shift_model;   ///< enum PnmfShiftModel (default PNMF_SHIFT_TORUS)
    int k;             ///< components (default 2, 1..255)
    int algo;          ///< enum PnmfAlgo (default PNMF_ALGO_IMPROVED)
    int iterations;    ///< maximum ALS iterations per start (default 50, 1..10000)
    int inner_iters;   ///< sweeps of Multiple Permutation NNLS and PG steps (default 10, as in the paper)
    int restarts;      ///< starts; the lowest objective is kept (default 1, 1..1000). With
                       ///< PNMF_ALGO_IMPROVED the first start is the deterministic
                       ///< median/residual one and the others random.
    uint64_t seed;     ///< seed of the random starts (default 1)
    double tol;        ///< stop when the relative decrease of the objective falls below (default 1e-4)
    int threads;       ///< worker threads (default 1, 1..64); results do not depend on it
    uint8_t reserved[16];
} PnmfFitSettings;

/** What a fit reached. */
typedef struct PnmfFitInfo {
    double objective;  ///< ||A - W <> H^T||_F^2 of the returned W, H
    int iterations;    ///< ALS iterations of the kept start
    int best_restart;  ///< which start was kept (0-based)
} PnmfFitInfo;

/** Fill @p s with the defaults listed above. */
PNMF_API void pnmf_fit_default_settings(PnmfFitSettings *s);

/**
 * Fit frames ~ W <> H^T.
 * @param frames m images (m x width*height floats, >= 0), read only.
 * @param m      frames (1..1024)
 * @param W      receives the k components (k x width*height), each scaled
 *               to a maximum in (0.5, 1]. Caller-owned.
 * @param H      receives the m x k atoms, H[j*k+i] placing component i in
 *               frame j. Caller-owned.
 * @param info   if not NULL, receives the objective and the kept start.
 * @return 0, or a negative PNMF_ERR code (PNMF_ERR_ARG for bad settings).
 */
PNMF_API int pnmf_fit(const PnmfFitSettings *s, const float *frames, int m, float *W,
                      PnmfFitAtom *H, PnmfFitInfo *info);

/** dst += r * S_p src for width x height row-major images, in @p shift_model. */
PNMF_API void pnmf_fit_shift_add(int shift_model, int width, int height, float *dst,
                                 const float *src, float r, int32_t p);

/** The shift S_a S_b = S_{a+b} in @p shift_model. */
PNMF_API int32_t pnmf_fit_shift_compose(int shift_model, int width, int height, int32_t a,
                                        int32_t b);

/** The shift that moves by (dy, dx) (any integers, taken cyclically). */
PNMF_API int32_t pnmf_fit_shift_make(int shift_model, int width, int height, int dy, int dx);

/** (dy, dx) of shift @p p: 0 <= dy < height, 0 <= dx < width. */
PNMF_API void pnmf_fit_shift_dydx(int shift_model, int width, int height, int32_t p, int *dy,
                                  int *dx);

/* ---- two-level decomposition (paper 3.4) ------------------------------ */

typedef struct PnmfTwoLevelSettings {
    PnmfFitSettings fit; ///< both levels: size, shift model, algo, iterations, restarts,
                         ///< seed (level 2 uses seed + 1), threads; fit.k is ignored
    int K;               ///< level-1 components, at least the objects in a frame counted
                         ///< with multiplicity (default 6, 1..255)
    int k;               ///< level-2 components, the distinct objects (default 3, 1..K)
    float drop;          ///< level-1 components whose energy in the fit, sum_j r_jI^2 ||w_I||^2,
                         ///< is below drop times the largest are discarded (default 0.05, 0..1)
    uint8_t reserved[16];
} PnmfTwoLevelSettings;

/** One term of the combined H_2^T <> H_1^T: r * S_p w_component in a frame. */
typedef struct PnmfTwoLevelEntry {
    int32_t component; ///< index into W (0..k-1)
    float r;           ///< coefficient, > 0
    int32_t p;         ///< shift
} PnmfTwoLevelEntry;

/**
 * The two levels and their combination. Frame j ~ sum_I r1 S_{p1} w1_I
 * (level 1) and w1_I ~ sum_i r2 S_{p2} w_i (level 2), so
 *   frame j ~ sum over (I, i) of r1 r2 S_{p1 + p2} w_i,
 * the entries of frame j, with equal (i, shift) pairs merged by adding
 * their coefficients. All arrays are owned by the result.
 */
typedef struct PnmfTwoLevelResult {
    int width, height, shift_model;
    int m, K, k;
    float *W1;               ///< K x n level-1 components
    PnmfFitAtom *H1;         ///< m x K level-1 atoms
    int kept;                ///< level-1 components passed to level 2 (the others dropped)
    float *W;                ///< k x n final components
    PnmfFitAtom *H2;         ///< K x k level-2 atoms; all r = 0 in the rows of dropped components
    int *frame_start;        ///< m + 1 offsets: frame j's entries are
                             ///< entries[frame_start[j] .. frame_start[j+1]-1],
                             ///< sorted by component, then shift
    PnmfTwoLevelEntry *entries;
    int n_entries;
    PnmfFitInfo level1;      ///< level 1 on the frames
    PnmfFitInfo level2;      ///< level 2 on the kept level-1 components
    double objective;        ///< ||A - W <> (H_2^T <> H_1^T)||_F^2, the combined model
} PnmfTwoLevelResult;

/** Fill @p s with the defaults listed above. */
PNMF_API void pnmf_twolevel_default_settings(PnmfTwoLevelSettings *s);

/**
 * Run the two-level decomposition on @p m frames (as pnmf_fit()).
 * @param out receives a result to free with pnmf_twolevel_free().
 * @return 0, or a negative PNMF_ERR code.
 */
PNMF_API int pnmf_twolevel(const PnmfTwoLevelSettings *s, const float *frames, int m,
                           PnmfTwoLevelResult **out);

/** Free a result; sets *res = NULL; NULL-safe. */
PNMF_API void pnmf_twolevel_free(PnmfTwoLevelResult **res);

#ifdef __cplusplus
}
#endif

#endif /* PNMF_FIT_H */
