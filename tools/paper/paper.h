/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pnmf-paper: the data sets of the paper's section 4, how a fit is scored
 * against them, and the figures. */
#ifndef PNMF_TOOLS_PAPER_H
#define PNMF_TOOLS_PAPER_H

#include <stdint.h>

/* A small binary picture, rows of '#' (1) and '.' (0). */
typedef struct PaperFigure {
    const char *name;
    int h, w;
    const char *const *rows;
} PaperFigure;

/* One copy of a figure in a frame: its top-left corner. */
typedef struct PaperPlacement {
    int frame, figure, y, x;
} PaperPlacement;

typedef struct PaperScene {
    int width, height, m, nfig;
    const PaperFigure *fig;  /* nfig figures */
    float *frames;           /* m x n, row-major, in [0, 1] */
    float *truth;            /* nfig x n: figure f drawn at (0, 0) */
    PaperPlacement *place;   /* nplace copies */
    int nplace;
} PaperScene;

extern const PaperFigure paper_square, paper_cross, paper_plane, paper_tank, paper_ship;

/* A deterministic generator (splitmix64). */
typedef struct PaperRng { uint64_t s; } PaperRng;
uint64_t paper_rng_next(PaperRng *r);
double paper_rng_unit(PaperRng *r);      /* [0, 1) */
int paper_rng_int(PaperRng *r, int n);   /* 0..n-1 */

/* Experiment 1: the square and the cross once each in each of 10 frames of
 * 20 x 20. Experiment 2: the plane, the tank and the ship, 0 to 2 copies
 * each, in 20 frames of 30 x 30. Copies never overlap and lie inside the
 * frame; every pixel then gets uniform noise on [0, 0.3] (mean 0.15) and
 * is clipped to [0, 1]. Returns 0, or -1 out of memory. */
int paper_scene_exp1(PaperScene *sc, uint64_t seed);
int paper_scene_exp2(PaperScene *sc, uint64_t seed);
void paper_scene_free(PaperScene *sc);

/* Zero-mean normalized cross-correlation of figure image f and component
 * w, maximum over every shift q of the model: max_q ncc(S_q f, w). The
 * best q goes to *best_q (w ~ S_q f). */
double paper_ncc(int model, int width, int height, const float *f, const float *w, int32_t *best_q);

/* For each figure, the best component: ncc[f], comp[f], q[f] (k comps). */
void paper_match(int model, const PaperScene *sc, const float *W, int k, double *ncc, int *comp,
                 int32_t *q);

/* The shift that puts the bulk of w in the middle of the frame (the most
 * weight under a pyramid centred on it), for display. */
int32_t paper_center_shift(int model, int width, int height, const float *w);

/* A picture of tiles: rows of images scaled by an integer factor,
 * nearest-neighbour, each image stretched from 0 to its maximum. */
typedef struct PaperMontage {
    int width, height;
    uint8_t *pix;
} PaperMontage;

/* A montage with nrows rows of at most ncols tiles of iw x ih images. */
int paper_montage_open(PaperMontage *mt, int ncols, int nrows, int iw, int ih, int scale);
/* Put image img (iw x ih) at tile (row, col), shifted by q in the model
 * first (q = 0: as is). */
void paper_montage_put(PaperMontage *mt, int row, int col, int model, int iw, int ih, int scale,
                       const float *img, int32_t q);
void paper_montage_free(PaperMontage *mt);

/* Write a gray8 picture to path as PNG (temporary file, then rename).
 * Returns 0, or -1 with a reason in err. */
int paper_png_write(const char *path, const PaperMontage *mt, char *err, size_t errlen);

#endif /* PNMF_TOOLS_PAPER_H */
