/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sprite discovery: from a window of gray frames, a background, a
 * dictionary of poses (an opaque appearance with its mask) and, per frame,
 * the placements of poses that rebuild the frame when painted over the
 * background in order. Nothing here is written to a file yet: these are the
 * plain structs an encoder step and a payload writer can take.
 *
 * The steps (sprite_find.c says why each is so):
 *   1. background: the per-pixel temporal mode of the window, or a flat
 *      background value where a pixel shows it in a quarter of the frames;
 *   2. foreground: the pixels that differ from it by more than tol;
 *      frame lines: constant rows and columns at the frame's edge (up to
 *      4 thick) that no foreground reaches and that differ from the line
 *      inside them, such as a window border: the sprites' area is inside
 *      them, and sprites pass under them;
 *   3. blobs: connected foreground after a dilation of dilate pixels,
 *      each with its bounding box;
 *   3b. the repeat gate (min_repeat on): a window whose blobs of min_match
 *      pixels or more seldom equal one another or a known pose is no
 *      sprite animation, and steps 4 and 5 are not made; with tol above 0,
 *      a textured blob also recurs when a blob at another place or a known
 *      pose of its box size matches it within a few levels;
 *   4. every blob of the window, smallest first (blobs touching the
 *      sprites' area's edge last, largest first), is explained by known
 *      poses:
 *        - exactly: the hash of its cropped, masked pixels is a known pose;
 *        - nearly: a known pose of its box that matches all but a few of
 *          its foreground pixels (a small sprite in front of it);
 *        - up to shift: greedily, the known pose whose every mask pixel
 *          matches the frame at some shift inside the blob's box (or lies
 *          under a pose already placed in front of it) and that explains
 *          the most pixels not yet explained (at least half of what it
 *          shows) is placed, its pixels removed, and so on until the blob
 *          is explained, no pose fits, or the search has tested a bounded
 *          number of pixels per blob pixel;
 *        - what known poses leave of the blob is a known pose placed in
 *          front, or becomes a new pose (after the cap checks), unless
 *          known poses explain part of it and the rest is smaller than
 *          min_match: that rest stays unexplained;
 *   5. the frame lines are placed in front of placements that stick out
 *      under them.
 *
 * Composition (pnmf_sprite_composite()): the background, then each
 * placement of the frame in list order, each painting its pose's mask
 * pixels that fall inside the frame; a later placement covers an earlier
 * one. With tol 0 the composite equals the frame wherever placements cover
 * the foreground.
 */
#ifndef PNMF_SPRITE_FIND_H
#define PNMF_SPRITE_FIND_H

#include <stddef.h>
#include <stdint.h>

#include "sprite.h"


typedef struct PnmfSpriteParams {
    int tol;              /* foreground: |frame - background| > tol; a pose matches where
                           * |frame - pose| <= tol. 0 for lossless sources */
    int dilate;           /* foreground pixels at most 2 * dilate + 1 apart join one blob */
    int min_match;        /* poses with fewer mask pixels are matched only as a whole blob
                           * (by hash), never placed inside a larger one */
    int max_blob_pixels;  /* larger blobs are not made into poses (left unexplained);
                           * 0: a quarter of the frame */
    int max_poses;        /* dictionary caps: past either, a blob that no known pose */
    size_t max_pixels;    /* explains is left unexplained (for the residual layer) */
    int budget;           /* the shift search tests at most this many pixels per blob pixel */
    double min_repeat;    /* a window of repeat_blobs blobs of min_match pixels or more, fewer */
    int repeat_blobs;     /* than this share of them equal (by hash; with tol, also nearly) to
                           * another blob or a known pose, is not searched: not sprite
                           * animation (min_repeat 0: off) */
    int own_regions;      /* tests: every edge blob lists its own region's positions, not its
                           * frame's shared ones (the same result, more work) */
} PnmfSpriteParams;

typedef struct PnmfSpriteWindow {
    int width, height, frames;
    uint8_t *bg;          /* width * height, the background (stride width) */
    PnmfSpriteFrame *frame; /* frames entries */
    /* how the window's blobs were explained */
    int blobs;            /* blobs found */
    int hash_hits;        /* blobs equal to a known pose (one placement) */
    int shift_hits;       /* blobs explained by known poses placed inside them */
    int partial;          /* blobs explained in part by known poses (the rest: a new pose, or
                           * left unexplained when smaller than min_match) */
    int new_poses;        /* new poses */
    int capped;           /* blobs left unexplained: too large, or a cap reached */
    /* the repeat gate (min_repeat on): */
    int sized;            /* blobs of min_match pixels or more ... */
    int repeats;          /* ... of them equal to another blob or a known pose */
    int skipped;          /* too few repeats: no pose looked for, no placement, unexplained 0 */
} PnmfSpriteWindow;

void pnmf_sprite_params_default(PnmfSpriteParams *p);

/* The per-pixel temporal mode of m frames (ties: the smaller value). */
void pnmf_sprite_background(const uint8_t *const *frames, ptrdiff_t stride, int w, int h, int m,
                            uint8_t *bg);

/* Discover poses and placements in m frames of w x h (rows stride bytes
 * apart), adding new poses to d. out is filled (free it with
 * pnmf_sprite_window_free()). Deterministic. Returns 0 or PNMF_ERR_*. */
int pnmf_sprite_find(PnmfSpriteDict *d, const PnmfSpriteParams *p, const uint8_t *const *frames,
                     ptrdiff_t stride, int w, int h, int m, PnmfSpriteWindow *out);
void pnmf_sprite_window_free(PnmfSpriteWindow *win);

/* out (w x h) = bg, then every placement of f painted in order
 * (pnmf_sprite_paint()). */
void pnmf_sprite_composite(const PnmfSpriteDict *d, const uint8_t *bg, int w, int h,
                           const PnmfSpriteFrame *f, uint8_t *out);

#endif /* PNMF_SPRITE_FIND_H */
