/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A window's quantized model, what a WIND chunk carries (docs/format.md,
 * "Window payload"), and its reader (model.c; the writer is
 * model_write.h).
 *
 * Geometry: components live on a rows x cols torus (torus model: the
 * frame; vector model: 1 x (width*height) in column-stacked order; canvas
 * model: a torus larger than the frame, whose top-left vis_rows x vis_cols
 * samples are the frame). Component i is a bh x bw block of signed integer
 * levels placed at the torus origin. Each frame lists its entries (i, c, p):
 * component i shifted by p = py*cols + px with coefficient level c >= 1; a
 * component may appear several times in a frame. The decoder's integer
 * reconstruction (diamond.c) is
 *   pixel = clamp((sum over entries of (c * r_step) * (level * w_step) + 2^11) >> 12, 0, 255)
 * i.e. components in units of 1/256 and coefficients in units of 1/16.
 */
#ifndef PNMF_MODEL_H
#define PNMF_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"
#include "residual.h"
#include "sprite.h"

#define PNMF_MAX_LEVEL_VALUE 4096    /* |level * w_step| */
#define PNMF_MAX_COEF_VALUE  65535   /* c * r_step */
#define PNMF_FRAC_BITS       12      /* 8 (components) + 4 (coefficients) */
#define PNMF_FLAG_RESIDUAL   1       /* window flags: a residual layer follows */
#define PNMF_FLAG_CONTINUES  2       /* ... which predicts from the previous window */
#define PNMF_FLAG_CARRIES    4       /* the components are the last model's (format 5; with
                                      * CONTINUES): no block sizes or levels follow */
#define PNMF_FLAG_RCLEVELS   8       /* the residual layer's levels are range-coded (format 6;
                                      * with RESIDUAL) */
#define PNMF_FLAG_KEYVARINTS 16      /* ... but frame 0's, varints (format 6; with RCLEVELS) */
#define PNMF_FLAG_SPRITES    32      /* a sprite layer follows the entries (format 8; with RESIDUAL):
                                      * it, not the components, makes the model frames */
#define PNMF_FLAG_SUBPEL     64      /* shifted blocks' vectors in quarter samples (format 9; with RESIDUAL) */
#define PNMF_FLAG_DEBLOCK    128     /* the residual layer's frames are filtered (format 9; with
                                      * RESIDUAL): deblock.h */
#define PNMF_FLAG_TX8        256     /* transform blocks may be one 8x8 transform (format 9; with
                                      * RCLEVELS): the levels stream says which (tx8.h) */
#define PNMF_FLAG_INTRA      1024    /* intra transform blocks may have a direction (format 9; with
                                      * RCLEVELS): the levels stream says which (intra.h) */
#define PNMF_FLAG_SPRMASKS   2048    /* the sprite layer's masks are context-coded (format 9; with
                                      * SPRITES): docs/format.md, "Sprite layer" */
#define PNMF_FLAG_SPRPLACES  65536   /* the sprite layer's placements are context-coded (format 11;
                                      * with SPRITES): docs/format.md, "Context-coded placements" */
#define PNMF_MAX_OCCURRENCES 64      /* entries of one component in one frame */
#define PNMF_MAX_RES_LEVELS  (1 << 30) /* residual levels of a window with range-coded levels (others:
                                        * at least a byte each of the payload, at most 2^30) */

/* Decode work: a window of m frames of `pixels` torus samples may ask for
 * at most m * (PNMF_WORK_PER_FRAME + PNMF_WORK_PER_PIXEL * pixels) sample
 * updates (docs/format.md, "Limits"), the sum over its entries of their
 * components' block areas. */
#define PNMF_WORK_PER_FRAME  (1u << 28)
#define PNMF_WORK_PER_PIXEL  32

typedef struct PnmfComp {
    int bh, bw;        /* block size, 0 x 0 for an unused component */
    int16_t *lev;      /* bh * bw levels, row-major */
} PnmfComp;

typedef struct PnmfEntry {
    uint32_t c;        /* coefficient level, >= 1 */
    int32_t p;         /* shift py * cols + px */
    int32_t i;         /* component */
} PnmfEntry;

typedef struct PnmfWindowModel {
    int rows, cols;         /* the torus the components live on */
    int vis_rows, vis_cols; /* the frame: its top-left corner */
    int m, k;
    PnmfComp *comp;         /* k */
    int *first;             /* m + 1: frame j's entries are ent[first[j] .. first[j+1]) */
    PnmfEntry *ent;         /* first[m] entries, each frame's in nondecreasing i */
    int cap;                /* entries allocated */
    PnmfResidual res;       /* res.step16 = 0: no residual layer (flags bit 0) */
    int carries;            /* the components are the last model's (flags bit 2): the
                             * writer leaves them out, the reader copies them in */
    PnmfSpriteLayer spr;    /* spr.present (flags bit 5): the model frames are the sprite
                             * composite (sprite.h); the window has no entries */
    PnmfKeep *keep;         /* the reader's: where res.lev came from, and goes back to */
} PnmfWindowModel;

/* Allocate comp, first and room for max_entries entries, for m frames and
 * k components (levels not yet; no entries yet: first[] all 0). */
int  pnmf_model_alloc(PnmfWindowModel *md, int rows, int cols, int vis_rows, int vis_cols,
                      int m, int k, int max_entries);
void pnmf_model_free(PnmfWindowModel *md);

/* The decode work of a model (sum over entries of the block area) and the
 * most a window of m frames on a rows x cols torus may have. */
uint64_t pnmf_model_work(const PnmfWindowModel *md);
uint64_t pnmf_model_max_work(int rows, int cols, int m);

/* Parse a payload for a window of exactly m frames on a rows x cols torus
 * showing vis_rows x vis_cols, with at most max_k components and the
 * header's quantizer steps; every value is checked against its limit
 * before use, the memory it asks for against the payload's size, and the
 * decode work against pnmf_model_max_work() (PNMF_ERR_LIMIT) before
 * anything is reconstructed. */
int  pnmf_model_read(const uint8_t *buf, size_t size, int rows, int cols, int vis_rows,
                     int vis_cols, int m, int max_k, int w_step, int r_step,
                     PnmfWindowModel *md, char *err, size_t errlen);
/* The same for a payload of format `version` (2, 3: the residual layer's
 * modes and vectors as varints; 4: range-coded; 5: components carried
 * over; 6: range-coded levels; 7: intra modes, global vectors and vector
 * candidates; 8: the sprite layer; 9: sub-pixel vectors, the deblocking
 * filter, the sample-context levels stream, the 8x8 transform; 10: median
 * vectors and their two more candidates; 11: context-coded placements; 12: compound
 * prediction; 16: the 6-tap filter; 18: the long-term reference; 19: the restoration
 * filter; 20: the warp; 21: the sample-context levels at lossy steps); pnmf_model_read() reads
 * PNMF_PAYLOAD_VERSION, what pnmf_model_write() writes, with no last model. */
#define PNMF_PAYLOAD_VERSION 21
int  pnmf_model_read_version(int version, const uint8_t *buf, size_t size, int rows, int cols, int vis_rows,
                             int vis_cols, int m, int max_k, int w_step, int r_step,
                             PnmfWindowModel *md, char *err, size_t errlen);
/* The same with the residual levels' array taken from keep (NULL: allocated),
 * given back there by pnmf_model_free(). */
int  pnmf_model_read_keep(int version, const uint8_t *buf, size_t size, int rows, int cols, int vis_rows,
                          int vis_cols, int m, int max_k, int w_step, int r_step, const PnmfWindowModel *carry,
                          PnmfKeep *keep, PnmfWindowModel *md, char *err, size_t errlen);
/* The same with the last model, whose components a window that carries
 * them gets (carry: NULL or k = 0 when there is none: such a window is
 * refused). */
int  pnmf_model_read_carry(int version, const uint8_t *buf, size_t size, int rows, int cols, int vis_rows,
                           int vis_cols, int m, int max_k, int w_step, int r_step, const PnmfWindowModel *carry,
                           PnmfWindowModel *md, char *err, size_t errlen);

/* Carrying components over (docs/format.md, "Carried components"): the last
 * model is that of the latest window, since the key window that began the
 * run (itself included), with a non-empty component. After each window
 * decoded in order, pnmf_model_track() updates *last (k and components
 * only; pnmf_model_free() it at the end): a key window clears it, a window
 * with a non-empty component becomes it. */
int  pnmf_model_track(PnmfWindowModel *last, const PnmfWindowModel *md);
/* Copy src's k components into dst (allocated with k components, none yet). */
int  pnmf_model_copy_components(PnmfWindowModel *dst, const PnmfWindowModel *src);
/* Whether any of md's components is non-empty. */
int  pnmf_model_has_components(const PnmfWindowModel *md);
/* Whether md has a model at all: entries, or a sprite layer. */
static inline int pnmf_model_present(const PnmfWindowModel *md)
{
    return md->first[md->m] > 0 || md->spr.present;
}

/* ---- the payload's predictions, the same for the reader and the writer ---- */

/* A component's level is predicted by its left neighbour, the one above
 * in the first column, 0 at the origin. */
static inline int pnmf_model_level_pred(const int16_t *lev, int bw, int y, int x)
{
    if (x > 0) return lev[y * bw + x - 1];
    if (y > 0) return lev[(y - 1) * bw];
    return 0;
}

/* Shift prediction (docs/format.md): occurrence t of a component in a frame
 * is predicted by occurrence t of the same component in the latest earlier
 * frame that had one, else by occurrence t-1 in this frame, else by 0. */
typedef struct PnmfShiftSlots {
    int32_t v[PNMF_MAX_OCCURRENCES];
    uint8_t set[PNMF_MAX_OCCURRENCES];
} PnmfShiftSlots;

static inline int pnmf_shift_predict(const PnmfShiftSlots *s, int t, int cur_prev)
{
    if (s->set[t]) return s->v[t];
    return t > 0 ? cur_prev : 0;
}

/* The entries of component i in frame j: [*b, *e) of md->ent (a frame's
 * entries are sorted by component). */
static inline void pnmf_model_occurrences(const PnmfWindowModel *md, int j, int i, int *b, int *e)
{
    int q = md->first[j];
    const int end = md->first[j + 1];
    while (q < end && md->ent[q].i < i) q++;
    *b = q;
    while (q < end && md->ent[q].i == i) q++;
    *e = q;
}

#endif /* PNMF_MODEL_H */
