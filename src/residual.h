/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The residual layer of a window (docs/format.md, "Residual layer"): what
 * the parts cannot explain. The frame is cut into 8x8 blocks (clipped at
 * the right and bottom edges); every block of every frame has a mode byte:
 * a prediction (bits 0-1) and whether quantized differences follow (bit 2).
 *
 *   0 model    the model's reconstruction of this frame, P_j
 *   1 previous the previous decoded frame of the window, D_{j-1}, displaced
 *              by the frame's global vector (format 7; (0, 0) in format 6
 *              and earlier, which have none)
 *   2 motion   D_{j-1} + P_j - P_{j-1}: the previous frame, moved as the
 *              model moved (what the model missed last frame, carried on)
 *   3 spatial  the median edge predictor (LOCO-I) of the decoded left,
 *              above and above-left pixels of this frame
 *   4 shifted  D_{j-1-t} (t = 0..15, the block's reference: animation
 *              repeats its poses) displaced by the block's vector (dy, dx):
 *              sample (y + dy, x + dx), clamped to the frame
 *
 * A coded block's levels are either one per pixel (added to the pixel's
 * prediction, as above) or, with bit 4 (transform; not with the spatial
 * prediction, and only for whole 8x8 blocks), the coefficients of the
 * 4x4 integer transform of H.264 (ITU-T H.264, 8.5.12) of the four 4x4
 * quarters, quantized with qp: the block's prediction plus the inverse
 * transform of the dequantized coefficients.
 *
 * Modes 1, 2 and 4 need a previous frame: in the first frame of a window
 * only when the window continues the one before it (window flags bit 1);
 * a key window (bit 1 clear) decodes on its own. A coded
 * block adds dequant(level) to every pixel's prediction, pixel by pixel in
 * raster order (the spatial mode predicts from pixels already corrected),
 * and clamps to 0..255. dequant(l) = (l * step16 + sign(l) * 8) / 16,
 * truncated: step16 is the step in 1/16 of a gray level (key_step16 in
 * the window's first frame).
 */
#ifndef PNMF_RESIDUAL_H
#define PNMF_RESIDUAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "palette.h"
#include "pfilter.h"
#include "rangecoder.h"

#define PNMF_RES_BLOCK     8
#define PNMF_RES_MODEL     0
#define PNMF_RES_PREVIOUS  1
#define PNMF_RES_MOTION    2
#define PNMF_RES_SPATIAL   3
#define PNMF_RES_SHIFTED   4
#define PNMF_RES_INTRA_DC  5      /* format 7: from the decoded row above and column left */
#define PNMF_RES_INTRA_V   6
#define PNMF_RES_INTRA_H   7
#define PNMF_RES_PREDS     8      /* predictions 0..7 (format 6 and earlier: 0..4) */
#define PNMF_RES_CODED     8
#define PNMF_RES_TRANSFORM 16     /* with CODED: levels are 4x4 transform coefficients */
#define PNMF_RES_MAX_QP    51
#define PNMF_RES_WEIGHTS   16     /* the encoder's block weight classes (enc_weight) */
#define PNMF_RES_MAX_COEF  2048   /* |level| of a transform coefficient */
#define PNMF_RES_MAX_MV    64     /* |dy|, |dx| of a shifted block */
#define PNMF_RES_QPEL_MAX_MV (4 * PNMF_RES_MAX_MV) /* the same in quarter samples (window flags bit 6) */
#define PNMF_RES_SHIFTED_QPEL 12  /* not a mode byte: prediction 4 at a quarter-sample vector, for
                                   * pnmf_residual_predict() */
#define PNMF_RES_SHIFTED_SHARP 44 /* not a mode byte either: the same under window flags bit 20 (bits 0-2
                                   * and 3 as PNMF_RES_SHIFTED_QPEL's) */
#define PNMF_RES_MOTIONS   4      /* the encoder's candidate motions from the last frame */
#define PNMF_RES_REFS      16     /* a shifted block's reference: D_{j-1} .. D_{j-16} (format 2: .. D_{j-4}) */
#define PNMF_RES_MIN_STEP  16     /* 1 gray level: finer only wastes levels */
#define PNMF_RES_MAX_STEP  4096   /* 256 gray levels */
#define PNMF_FLAG_CASCADE  4096   /* window flags bit 12 (format 9): a step cascade (casc_period) */
#define PNMF_RES_MAX_PERIOD 1024  /* a cascade's period, at most (a window's frames) */
#define PNMF_FLAG_NBCTX    16384  /* window flags bit 14 (format 9): neighbour contexts of modes and vectors */
#define PNMF_FLAG_MEDIAN   32768  /* window flags bit 15 (format 10): vectors from the median of their neighbours */
#define PNMF_FLAG_BI       131072 /* window flags bit 17 (format 12): compound prediction (a second hypothesis) */
#define PNMF_FLAG_WEIGHTS  262144 /* window flags bit 18 (format 14): weighted prediction, a gain and offset a frame */
#define PNMF_FLAG_ORDER    524288 /* window flags bit 19 (format 15): frames coded out of order, anchors first */
#define PNMF_FLAG_SHARP    1048576 /* window flags bit 20 (format 16): quarter samples by the 6-tap filter */
#define PNMF_FLAG_LTERM    2097152 /* window flags bit 21 (format 18): reference 15 is the key frame */
#define PNMF_RES_LTERM_T   (PNMF_RES_REFS - 1) /* the reference the key frame takes under bit 21 */
#define PNMF_FLAG_WARP     8388608 /* window flags bit 23 (format 20): the previous prediction along a global warp */
#define PNMF_RES_WARP_N    6      /* a frame's warp: (o, sx, sy) of dy, then of dx */
#define PNMF_RES_WARP_MAX_O 65536 /* |o|: up to 2 quarter samples (units of 2^-15) */
#define PNMF_RES_WARP_MAX_S 4096  /* |sx|, |sy|: up to 1/16 sample a sample (units of 2^-16) */
#define PNMF_RES_MAX_GROUP PNMF_RES_REFS /* a coding order's group, at most: its anchor stays a reference */
#define PNMF_RES_WP_LOG2   6      /* the gain's denominator: w / 2^6 */
#define PNMF_RES_WP_ONE    (1 << PNMF_RES_WP_LOG2) /* the gain of an unweighted frame */
#define PNMF_RES_WP_MAX_W  255    /* a gain w in 0..255 */
#define PNMF_RES_WP_MAX_O  255    /* an offset o in -255..255 */

typedef struct PnmfResidual {
    int step16;        /* 0: the window has no residual layer */
    int key_step16;    /* the step of the window's first frame, which later
                        * frames copy: finer, as a codec's key frame */
    int qp, key_qp;    /* transform blocks' quantizer, 0..51 (step 0.625 * 2^(qp/6)) */
    int casc_period;   /* window flags bit 12 (format 9): frames j > 0 with j % casc_period == 0
                        * are coded at casc_step16 and casc_qp (0: no such frames) */
    int casc_step16, casc_qp;
    int order;         /* window flags bit 19 (format 15): the frames are coded in groups of
                        * casc_period, each group's last frame first (pnmf_residual_coded()) */
    int continues;     /* frame 0 predicts from the previous window's last frame
                        * (window flags bit 1): modes 1, 2 and 4 allowed there */
    int rc_levels;     /* 0: the levels are varints; 1: a range-coded stream (window
                        * flags bit 3, format 6); 2: frame 0's varints, the others'
                        * the stream (bits 3 and 4) */
    int m, rows, cols; /* frames; the frame's height and width */
    int subpel;        /* shifted blocks' vectors in quarter samples (window flags bit 6, format 9) */
    int sharp;         /* and their quarter samples by the 6-tap filter (window flags bit 20, format 16) */
    int lterm;         /* reference 15 is the key frame (window flags bit 21, format 18) */
    const uint8_t *key0; /* with lterm: the key window's decoded frame 0 (not owned) */
    PnmfPFilter pf;    /* the restoration filter of the frames shown (window flags bit 22, format 19) */
    int bx, by;        /* blocks across and down */
    uint8_t *modes;    /* m * bx * by, frame by frame, blocks in raster order */
    uint8_t *tx8;      /* format 9, the same blocks: 1 for a transform block coded as
                        * one 8x8 transform (tx8.h), 0 for any other */
    int tx8_on;        /* format 9, window flags bit 8: the levels stream carries
                        * each transform block's 8x8 decision */
    uint8_t *idir;     /* format 9, the same blocks: an intra transform block's direction
                        * (intra.h), 0 for none and for any other block */
    int idir_on;       /* format 9, window flags bit 10: the levels stream carries each
                        * intra transform block's direction */
    int16_t *lev;      /* levels of the coded blocks in the same order, each
                        * block's pixels (clipped to the frame) row-major */
    size_t nlev, cap;
    size_t *start;     /* m + 1: frame j's levels are lev[start[j] .. start[j+1]) */
    int16_t *mv;       /* (dy, dx) of each shifted block, in the same order */
    uint8_t *mvref;    /* its reference t: D_{j-1-t} */
    int reach;         /* frames before the window its references need */
    int reach_lt;      /* the same but reference 15 (what a window of bit 21 needs) */
    size_t nmv, mvcap; /* vectors (pairs) */
    size_t *mvstart;   /* m + 1: frame j's vectors are mv[2 mvstart[j] .. 2 mvstart[j+1]) */
    int deblock;       /* window flags bit 7 (format 9): frames are filtered (deblock.h) */
    int nbctx;         /* window flags bit 14 (format 9): the modes and vectors streams'
                        * neighbour contexts (pnmf_residual_mode_nb(), RcVecCtx.on); the
                        * writer leaves the bit out where it makes them no shorter */
    int median;        /* window flags bit 15 (format 10): a vector's differences are from the
                        * median of its neighbours' (pnmf_vec_pred()), two more candidates;
                        * the encoder searches so, and the writer sets the bit only where it
                        * makes the streams shorter (never when this is 0) */
    int bi;            /* window flags bit 17 (format 12): each vector may have a second
                        * hypothesis (the reader's; the writer sets the bit where one is used) */
    uint8_t *mvbi;     /* with bi (NULL otherwise): per vector, 0, or the second reference t2 + 1 */
    int16_t *mv2;      /* with bi: per vector, the second hypothesis's (dy, dx) */
    struct PnmfDeblockBlock *dbk; /* the filter's scratch, one per block of a frame */
    int16_t *gmv;      /* m pairs: frame j's global vector (format 7), the displacement of
                        * its previous prediction: D_{j-1} at (y + gy, x + gx), clamped */
    int16_t *wp;       /* m pairs: frame j's gain w and offset o (window flags bit 18, format 14):
                        * its predictions read the references weighted (pnmf_residual_weigh());
                        * (PNMF_RES_WP_ONE, 0) for a frame without weights */
    int wp_on;         /* the reader's: the window has window flags bit 18 */
    int warp;          /* window flags bit 23 (format 20): the previous prediction follows each
                        * frame's warp (pnmf_residual_warp_mv()) */
    int32_t *gw;       /* m groups of PNMF_RES_WARP_N: frame j's warp, zeros without bit 23 */
    /* The encoder's search state (residual_search.c), carried with the
     * layer from frame to frame; the reader leaves it as allocated. */
    int enc_gy, enc_gx; /* the encoder's: the last frame's dominant displacement (not coded) */
    int16_t (*enc_prev_mv)[3]; /* the encoder's: each block's (dy, dx, t) in the last frame, t -1 if none */
    int16_t enc_mot[PNMF_RES_MOTIONS][2]; /* the encoder's: the last frame's most used motions per frame */
    int enc_nmot;
    int enc_pre_at;       /* the encoder's: the frames of the step pick's prefix (enc_rate.c) */
    double enc_pre_sse[2]; /* the squared error of the first frame and of those, once coded */
    RcModeCtx enc_modes; /* the encoder's: the modes and vectors streams' contexts */
    RcVecCtx enc_vectors; /* as the writer will have them after the frames coded so far */
    RcLevCtx enc_levels;  /* the levels stream's, when the encoder prices levels with them */
    int enc_rc_price;     /* the encoder's: price levels with enc_levels, not the fixed table */
    int enc_tx8;          /* the encoder's: try the 8x8 transform on transform blocks */
    int enc_idir;         /* the encoder's: try the directions on intra transform blocks */
    int enc_rdoq;         /* the encoder's: lower the chosen transform levels by their contexts' price */
    int enc_median;       /* the encoder's: price and search vectors as window flags bit 15 codes them */
    int enc_bi;           /* the encoder's: try second hypotheses (window flags bit 17) */
    RcBiCtx enc_bictx;    /* and their contexts, as the writer will have them */
    void *enc_match;      /* the encoder's exact block matcher of a lossless window (lossless_match.h) */
    void (*enc_match_free)(void *); /* and what frees it */
    /* the encoder's, when not NULL: per block of the frame being coded, its
     * lambda is lambda * 2^(-enc_weight[b] / 2) (a block whose error later
     * frames will copy weighs more); enc_weight[b] < PNMF_RES_WEIGHTS */
    const uint8_t *enc_weight;
    /* Window flags bit 9 (format 9, lossless.h): the pixel levels of the
     * frames the levels stream covers are in the sample-context stream.
     * ctx_levels: the writer codes them so; lx: the reader's decoder of
     * them, which pnmf_residual_frame() runs (NULL: the levels are in lev);
     * enc_dec: the encoder's decoded frames, m x rows x cols, which the
     * writer's contexts read (NULL when it keeps none). */
    int ctx_levels;
    struct PnmfLx *lx;
    uint8_t *enc_dec;
    /* Window flags bit 24 (format 21), the encoder's, when not NULL: what
     * the writer's sample contexts of a lossy window read. enc_lxn: per
     * frame and block, PNMF_LX_NB samples of a pixel-coded block's decoded
     * neighbours as its reconstruction found them (the row above, columns
     * x0 - 1 .. x0 + 8, then the column left, rows y0 .. y0 + 7; 0 outside
     * the frame); enc_lxp: each pixel-coded sample's prediction at its
     * level's place in lev (enc_lxp_cap of them). */
    uint8_t *enc_lxn, *enc_lxp;
    size_t enc_lxp_cap;
    /* the encoder's, when not NULL: the modes and vectors streams the
     * writer makes, kept across the codings of one window (they do not
     * depend on how its levels are coded; pnmf_model_write()) */
    struct PnmfStreamKeep *enc_streams;
    /* Window flags bit 13 (format 9, palette.h): blocks of mode
     * PNMF_RES_PALETTE, their palettes and indices in block order,
     * frame j's at pal[palstart[j] .. palstart[j+1]). palette: the window
     * may have them (the reader's flag); enc_palette: the encoder tries
     * them, pricing with enc_pal, the contexts as the writer will have them. */
    int palette;
    PnmfPalBlock *pal;
    size_t npal, palcap;
    size_t *palstart;
    int enc_palette;
    PnmfPalCtx enc_pal;
} PnmfResidual;

/* Allocate r for m frames of rows x cols at the steps given (modes, and
 * the starts of each frame's levels and vectors; no levels or vectors
 * yet). 0 or PNMF_ERR_NOMEM. */
int  pnmf_residual_alloc(PnmfResidual *r, int m, int rows, int cols, int step16, int key_step16);

/* The transform quantizer closest to a pixel step (1/16 gray level). */
int  pnmf_residual_qp(int step16);

/* The normative dequantization and inverse 4x4 integer transform (H.264)
 * of 16 levels in zigzag order into the residual r in raster order, with
 * (r + 32) >> 6 rounding (exposed for the tests and the encoder). */
void pnmf_residual_idct4(const int16_t *lev, int qp, int *r);
/* The same residual added to the 4x4 prediction at pred (rows pstride
 * apart), clamped to 0..255, into dst (rows stride apart). */
void pnmf_residual_idct4_add(const int16_t *lev, int qp, const uint8_t *pred, int pstride, uint8_t *dst,
                             ptrdiff_t stride);
void pnmf_residual_free(PnmfResidual *r);

/* Frame j (frames decoded in order): P is the model's reconstruction of
 * frame j, Pp the model's of frame j-1, ref[t] the decoded frame j-1-t
 * (t < PNMF_RES_REFS; those the modes use must be there); D receives the
 * decoded frame. All rows x cols, contiguous. */
void pnmf_residual_frame(const PnmfResidual *r, int j, const uint8_t *P, const uint8_t *Pp,
                         const uint8_t *const *ref, uint8_t *D);

/* Window flags bit 18 (format 14): a reference sample v weighted with gain
 * w and offset o, clip(((v * w + 2^5) >> 6) + o). */
static inline int pnmf_residual_weigh(int v, int w, int o)
{
    const int s = ((v * w + (1 << (PNMF_RES_WP_LOG2 - 1))) >> PNMF_RES_WP_LOG2) + o;
    return s < 0 ? 0 : s > 255 ? 255 : s;
}

/* Whether frame j of r predicts from weighted references. */
static inline int pnmf_residual_weighted(const PnmfResidual *r, int j)
{
    return r->wp && (r->wp[2 * j] != PNMF_RES_WP_ONE || r->wp[2 * j + 1] != 0);
}

/* The n samples of R weighted with (w, o) into out. */
void pnmf_residual_weigh_frame(const uint8_t *R, size_t n, int w, int o, uint8_t *out);

/* Frame j's references as its predictions read them, into out: ref[t]
 * itself when the frame has no weights, else ref[t] weighted into
 * scratch[t] (rows x cols each) for the references t < nref, or when nref
 * is negative for those the frame's blocks read (the others left as
 * ref[t]). Returns out. */
const uint8_t *const *pnmf_residual_frame_refs(const PnmfResidual *r, int j, const uint8_t *const *ref, int nref,
                                               uint8_t *const *scratch, const uint8_t **out);

/* Whether frame j (in coding order) is one of the cascade's (window flags
 * bit 12): every casc_period-th frame after frame 0, or with a coding
 * order (bit 19) each group's first coded frame, its anchor. */
static inline int pnmf_residual_casc_frame(const PnmfResidual *r, int j)
{
    return r->casc_period && j % r->casc_period == (r->order ? 1 : 0);
}

/* Frame j's pixel step and transform quantizer: the key step in frame 0,
 * the cascade's in its frames (pnmf_residual_casc_frame()), the window's
 * in the others. */
static inline int pnmf_residual_frame_step(const PnmfResidual *r, int j)
{
    return !j ? r->key_step16 : pnmf_residual_casc_frame(r, j) ? r->casc_step16 : r->step16;
}
static inline int pnmf_residual_frame_qp(const PnmfResidual *r, int j)
{
    return !j ? r->key_qp : pnmf_residual_casc_frame(r, j) ? r->casc_qp : r->qp;
}

/* Window flags bit 19 (format 15), for a window of m frames and groups of
 * g: frame 0 is coded first, then frames 1..m-1 in groups of g shown in
 * a row (the last group shorter), each group's last frame first, the
 * rest in their order. pnmf_order_coded() gives the coding position of
 * the frame shown d-th, pnmf_order_shown() the frame coded c-th; g = 0:
 * the frames in their order. */
static inline int pnmf_order_coded(int d, int m, int g)
{
    if (g < 2 || d == 0) return d;
    const int s = 1 + (d - 1) / g * g, e = s + g - 1 < m - 1 ? s + g - 1 : m - 1;
    return d == e ? s : d + 1;
}
static inline int pnmf_order_shown(int c, int m, int g)
{
    if (g < 2 || c == 0) return c;
    const int s = 1 + (c - 1) / g * g, e = s + g - 1 < m - 1 ? s + g - 1 : m - 1;
    return c == s ? e : c - 1;
}
static inline int pnmf_residual_coded(const PnmfResidual *r, int d)
{
    return pnmf_order_coded(d, r->m, r->order ? r->casc_period : 0);
}

/* The blocks across n samples (the last one clipped). */
static inline int pnmf_residual_blocks(int n) { return (n + PNMF_RES_BLOCK - 1) / PNMF_RES_BLOCK; }

/* Window flags bit 23 (format 20): the quarter-sample vector of frame j's
 * previous prediction for the block [y0, y1) x [x0, x1): the frame's global
 * vector plus its warp at the block's centre, p = twice the centre's offset
 * from the frame's. */
static inline void pnmf_residual_warp_mv(const PnmfResidual *r, int j, int y0, int y1, int x0, int x1, int *vy,
                                         int *vx)
{
    const int32_t *w = r->gw + (size_t)PNMF_RES_WARP_N * j;
    const int32_t py = y0 + y1 - r->rows, px = x0 + x1 - r->cols;
    *vy = 4 * r->gmv[2 * j] + ((w[0] + w[1] * px + w[2] * py + (1 << 14)) >> 15);
    *vx = 4 * r->gmv[2 * j + 1] + ((w[3] + w[4] * px + w[5] * py + (1 << 14)) >> 15);
}

/* Block b's rectangle [y0, y1) x [x0, x1), clipped to the frame. */
static inline void pnmf_residual_block_at(int brow, int bcol, int rows, int cols, int *y0, int *y1, int *x0, int *x1)
{
    /* the block in row brow and column bcol of blocks */
    *y0 = brow * PNMF_RES_BLOCK, *x0 = bcol * PNMF_RES_BLOCK;
    *y1 = *y0 + PNMF_RES_BLOCK < rows ? *y0 + PNMF_RES_BLOCK : rows;
    *x1 = *x0 + PNMF_RES_BLOCK < cols ? *x0 + PNMF_RES_BLOCK : cols;
}

static inline void pnmf_residual_block(int bx, int rows, int cols, size_t b, int *y0, int *y1, int *x0, int *x1)
{
    pnmf_residual_block_at((int)(b / (size_t)bx), (int)(b % (size_t)bx), rows, cols, y0, y1, x0, x1);
}

/* Whether the whole 8 x 8 blocks at a and at b (rows stride apart) hold
 * the same samples. */
static inline int pnmf_residual_same_block(const uint8_t *a, const uint8_t *b, size_t stride)
{
    for (int y = 0; y < PNMF_RES_BLOCK; y++)
        if (memcmp(a + (size_t)y * stride, b + (size_t)y * stride, PNMF_RES_BLOCK)) return 0;
    return 1;
}

/* After a frame is decoded into *D: it becomes ref[0], the older ones move
 * down, and the oldest one's memory becomes *D for the next frame. */
static inline void pnmf_residual_push(uint8_t **ref, uint8_t **D)
{
    uint8_t *t = ref[PNMF_RES_REFS - 1];
    for (int i = PNMF_RES_REFS - 1; i > 0; i--) ref[i] = ref[i - 1];
    ref[0] = *D, *D = t;
}

/* The vectors stream's state through a frame (docs/format.md, "Vectors
 * stream"), the same for the writer, the reader and the encoder. */
typedef struct PnmfVecState {
    int last[PNMF_RES_REFS][2]; /* each reference's last vector in the frame, (0, 0) at first */
    int lastref, z0;            /* the last vector's reference; whether its difference was (0, 0) */
    int lm;                     /* format 7: the last vector was a candidate */
    int16_t prev[3];            /* format 7: (dy, dx, t) before the last change, t -1 for none */
    int med;                    /* window flags bit 15: the differences are from pnmf_vec_pred() */
    const int16_t *nb[3];       /* with med: (dy, dx, t) of the block's left, above and above-right
                                 * neighbours (pnmf_vec_nb()), NULL or t -1 where not shifted */
    const int16_t *col;         /* with med: (dy, dx, t) of the block at its place in the frame
                                 * before, NULL or t -1 where not shifted (or in frame 0) */
} PnmfVecState;

static inline void pnmf_vec_init(PnmfVecState *s)
{
    memset(s, 0, sizeof(*s));
    s->z0 = 1, s->prev[2] = -1;
}

/* Window flags bit 15 (format 10): the neighbours of block b (bx across)
 * whose vector is next, from v, each block's (dy, dx, t) in this frame
 * (t -1 for a block that is not shifted; when mo is not NULL, a block is
 * shifted when its mode there is, whatever v holds): left, above, and
 * above-right, or above-left in the last column. */
static inline void pnmf_vec_nb(PnmfVecState *s, const int16_t (*v)[3], const uint8_t *mo, int bx, size_t b)
{
    const int x = (int)(b % (size_t)bx), up = b >= (size_t)bx;
    const ptrdiff_t at[3] = { x ? (ptrdiff_t)b - 1 : -1, up ? (ptrdiff_t)b - bx : -1,
                              !up ? -1 : x + 1 < bx ? (ptrdiff_t)b - bx + 1 : x ? (ptrdiff_t)b - bx - 1 : -1 };
    for (int i = 0; i < 3; i++)
        s->nb[i] = at[i] < 0 || (mo && (mo[at[i]] & 7) != PNMF_RES_SHIFTED) ? NULL : v[at[i]];
}

/* The prediction p of a vector of reference t, which its differences are
 * coded from: the frame's last vector of t, or with window flags bit 15
 * (s->med), of the neighbours (pnmf_vec_nb()) of reference t: the one
 * when there is one, the median of each component of the three when there
 * are two or three (the frame's last vector of t in the place of the
 * others), the frame's last vector of t when there are none. */
static inline void pnmf_vec_pred(const PnmfVecState *s, int t, int p[2])
{
    p[0] = s->last[t][0], p[1] = s->last[t][1];
    if (!s->med) return;
    int n = 0, one = 0;
    for (int i = 0; i < 3; i++)
        if (s->nb[i] && s->nb[i][2] == t) n++, one = i;
    if (n == 1) {
        p[0] = s->nb[one][0], p[1] = s->nb[one][1];
    } else if (n > 1) {
        for (int c = 0; c < 2; c++) {
            int a[3];
            for (int i = 0; i < 3; i++) a[i] = s->nb[i] && s->nb[i][2] == t ? s->nb[i][c] : p[c];
            const int lo = a[0] < a[1] ? a[0] : a[1], hi = a[0] < a[1] ? a[1] : a[0];
            p[c] = a[2] < lo ? lo : a[2] > hi ? hi : a[2];
        }
    }
}

/* The candidates of the next vector (format 7), above: (dy, dx, t) of the
 * block above, t -1 or NULL when it is not shifted. */
static inline void pnmf_vec_cands(const PnmfVecState *s, const int16_t *above, RcVecCand *k)
{
    /* window flags bit 15: then the above-right neighbour's (pnmf_vec_nb()) and
     * the previous frame's at the block */
    const int16_t *src[RC_VEC_CANDS] = { above, s->prev, s->med ? s->nb[2] : NULL, s->med ? s->col : NULL };
    rc_vec_cands(k, src, s->med ? 4 : 2, s->lastref, s->last[s->lastref][0], s->last[s->lastref][1]);
}

/* After vector (dy, dx) of reference t, merged: it was a candidate. */
static inline void pnmf_vec_push(PnmfVecState *s, int dy, int dx, int t, int merged)
{
    const int *l = s->last[s->lastref];
    if (t != s->lastref || dy != l[0] || dx != l[1])
        s->prev[0] = (int16_t)l[0], s->prev[1] = (int16_t)l[1], s->prev[2] = (int16_t)s->lastref;
    int p[2];
    pnmf_vec_pred(s, t, p);
    s->z0 = merged || (dy == p[0] && dx == p[1]);
    s->last[t][0] = dy, s->last[t][1] = dx, s->lastref = t, s->lm = merged;
}

/* Window flags bit 17 (format 12): the prediction of a second
 * hypothesis's vector component from the first's v of reference t, for
 * reference t2: v (t2 + 1) / (t + 1), rounded to the nearest, halves
 * away from zero (a motion that goes on at the same pace). */
static inline int pnmf_bi_scale(int v, int t, int t2)
{
    const int n = v * (t2 + 1), d = t + 1;
    return n >= 0 ? (n + d / 2) / d : -((-n + d / 2) / d);
}

/* Window flags bit 17: the context of block b's question (bx blocks
 * across): how many of its left and above blocks of this frame have a
 * second hypothesis (has[] per block of the frame, those before b set). */
static inline int pnmf_bi_ctx(const uint8_t *has, int bx, size_t b)
{
    return (b % (size_t)bx && has[b - 1]) + (b >= (size_t)bx && has[b - (size_t)bx]);
}

/* Window flags bit 14: block b's neighbour context of the question
 * mode == L? in frame j, whose modes start at mo (frame j - 1's just
 * before, bx blocks across, nb in a frame): (AL == A) + 2 (PL == P), with
 * A, AL the modes above and above-left, P, PL those at b and at its left
 * in frame j - 1, each -1 where there is none. An edge between modes that
 * runs down the frame, or stays in place, makes a change of mode at b
 * likely. */
static inline int pnmf_residual_mode_nb_at(const uint8_t *mb, int bx, size_t nb, int left, int up, int j)
{
    /* mb: block b's mode; left, up: whether it has a block to its left, above */
    const int A = up ? mb[-bx] : -1, AL = up && left ? mb[-bx - 1] : -1;
    const int P = j ? mb[-(ptrdiff_t)nb] : -1, PL = j && left ? mb[-(ptrdiff_t)nb - 1] : -1;
    return (AL == A) | (PL == P) << 1;
}

static inline int pnmf_residual_mode_nb(const uint8_t *mo, int bx, size_t nb, size_t b, int j)
{
    return pnmf_residual_mode_nb_at(mo + b, bx, nb, b % (size_t)bx != 0, b >= (size_t)bx, j);
}

/* Whether prediction mode (bits 0-2) reads this frame's decoded samples. */
static inline int pnmf_residual_is_intra(int mode) { return (mode & 7) == PNMF_RES_SPATIAL || (mode & 7) >= PNMF_RES_INTRA_DC; }

/* How many of r's levels are varints (item 8) rather than in the levels
 * stream: all (rc_levels 0), frame 0's (2) or none (1). */
static inline size_t pnmf_residual_varint_levels(const PnmfResidual *r)
{
    return !r->rc_levels ? r->nlev : r->rc_levels == 2 ? r->start[1] : 0;
}

/* Decode the levels stream of frames from..m-1 of r into r->lev (r->start
 * set) with fresh contexts c; pixel levels bounded by max_pixel. Returns
 * 0, -1 for a level out of range, -2 for a stream read past its end
 * (decoding stops at that block), -3 for an intra direction out of range. */
int  pnmf_residual_levels_read(RcDec *d, RcLevCtx *c, PnmfResidual *r, int from, int max_pixel);

/* ---- the predictions, which the encoder's search reproduces --------------- */

static inline int pnmf_residual_clip8(int v) { return v < 0 ? 0 : v > 255 ? 255 : v; }

/* A pixel level's value: (l * step16 + sign(l) * 8) / 16, truncated. */
static inline int pnmf_residual_dequant(int l, int step16)
{
    return (l * step16 + (l > 0 ? 8 : l < 0 ? -8 : 0)) / 16;
}

/* The zigzag order of a 4x4 block's coefficients (raster positions). */
extern const uint8_t pnmf_residual_zigzag4[16];

/* The quantizer's column for raster position q of a 4x4 block: both
 * indices even (0), both odd (1), mixed (2). */
static inline int pnmf_residual_coef_class(int q)
{
    const int i = q >> 2, j = q & 3;
    return (i & 1) == (j & 1) ? (i & 1) : 2;
}

/* Whether the model's reconstruction of block [y0, y1) x [x0, x1) is the
 * same in frame j and j - 1 (P, Pp): there the motion prediction is the
 * previous frame in place. */
static inline int pnmf_residual_model_still(const uint8_t *P, const uint8_t *Pp, int cols, int y0, int y1, int x0,
                                            int x1)
{
    const size_t w = (size_t)(x1 - x0);
    for (int y = y0; y < y1; y++) {
        const uint8_t *p = P + (size_t)y * cols + x0, *q = Pp + (size_t)y * cols + x0;
        if (w == 8) { /* a whole block row: one 8-byte compare, inlined */
            uint64_t u, v;
            memcpy(&u, p, 8), memcpy(&v, q, 8);
            if (u != v) return 0;
        } else if (memcmp(p, q, w)) {
            return 0;
        }
    }
    return 1;
}

/* ---- sub-pixel prediction (window flags bit 6) ----------------------------- */

/* Window flags bit 20: the 6-tap filter's taps (out of 64) by quarter
 * position f, on the whole samples at offsets -2..3 from the position's
 * own; the half sample is H.264's, the quarters its half averaged with
 * the nearer whole sample in one filter. */
extern const int16_t pnmf_sharp_taps[4][6];

/* The prediction of block [y0, y1) x [x0, x1) from R displaced by the
 * quarter-sample vector (qy, qx) (docs/format.md, "Sub-pixel motion"):
 * bilinear between the four whole samples around each position, or with
 * sharp (window flags bit 20) the separable 6-tap filter over the 6 x 6
 * around it ("Sharp interpolation"). */
void pnmf_residual_subpel(const uint8_t *R, int rows, int cols, int y0, int y1, int x0, int x1, int qy, int qx,
                          int sharp, uint8_t *pred);

/* Window flags bit 17 (format 12): the compound prediction of block
 * [y0, y1) x [x0, x1), (p1 + p2 + 1) >> 1 sample by sample, p1 the
 * prediction of R1 displaced by the quarter-sample vector (qy1, qx1) and
 * p2 that of R2 by (qy2, qx2), each as pnmf_residual_subpel() makes it
 * (a whole vector, in quarter samples, a copy), into pred (rows
 * PNMF_RES_BLOCK apart). */
void pnmf_residual_compound(const uint8_t *R1, int qy1, int qx1, const uint8_t *R2, int qy2, int qx2, int rows,
                            int cols, int y0, int y1, int x0, int x1, int sharp, uint8_t *pred);

/* The prediction of block [y0, y1) x [x0, x1) for prediction mode (bits
 * 0-2) but the spatial one (which reads the samples it is correcting),
 * into pred (rows PNMF_RES_BLOCK apart). Dp is the previous decoded frame,
 * Dr the shifted mode's reference, displaced by (dy, dx) (in quarter
 * samples for PNMF_RES_SHIFTED_QPEL and PNMF_RES_SHIFTED_SHARP); D the
 * frame being decoded, which the intra modes read. */
void pnmf_residual_predict(int mode, const uint8_t *P, const uint8_t *Pp, const uint8_t *Dp, const uint8_t *Dr,
                           const uint8_t *D, int rows, int cols, int y0, int y1, int x0, int x1, int dy, int dx,
                           uint8_t *pred);

/* The modes and vectors streams of a window made once for all its
 * codings (PnmfResidual.enc_streams; model_write.c): a keep of none yet,
 * NULL when out of memory, and its release (NULL too). */
struct PnmfStreamKeep *pnmf_stream_keep_new(void);
void pnmf_stream_keep_free(struct PnmfStreamKeep *k);

#endif /* PNMF_RESIDUAL_H */
