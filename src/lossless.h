/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sample-context levels stream (window flags bit 9, format 9;
 * docs/format.md, "Sample-context levels stream"): the levels of the
 * pixel-coded blocks of a lossless window, each coded with contexts taken
 * from the decoded samples around it, its prediction and the levels
 * around it in this frame and the frame before. The decoder decodes them
 * while it reconstructs the frame (pnmf_residual_frame() calls
 * pnmf_lx_block()), as the contexts need the samples decoded so far;
 * the writer codes them from the decoded frames the encoder kept.
 */
#ifndef PNMF_LOSSLESS_H
#define PNMF_LOSSLESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "rangecoder.h"
#include "residual.h"

#define PNMF_FLAG_CTXLEVELS 512 /* window flags bit 9 (format 9): the sample-context levels stream */
#define PNMF_FLAG_CTXLOSSY 16777216 /* window flags bit 24 (format 21): that stream at any step, without candidates */

#define LX_ACTS 5 /* classes of |prediction - MED of the neighbours| */
#define LX_SETS (RC_LEV_KINDS * RC_LEV_CLASSES * LX_ACTS * 2)
#define LX_CANDS 4 /* the neighbours a level may name: left, above, above-left, above-right */
#define PNMF_LX_NB 18 /* the neighbours the encoder keeps of a lossy pixel-coded block (PnmfResidual.enc_lxn) */
#define PNMF_LXQ_GRAD 16 /* window flags bit 24: a prediction's gradient from which a sample's set is the second */

typedef struct PnmfLxCtx {
    RcProb zero[LX_SETS];    /* level != 0? */
    RcProb sign[LX_SETS][3]; /* level < 0? by the sign of the left + above levels */
    RcProb gt1[LX_SETS];     /* |level| > 1? */
    RcProb mag[LX_SETS][4];  /* unary bins of |level| - 2, by min(bin, 3) */
    RcProb cand[RC_LEV_KINDS][RC_LEV_CLASSES][LX_CANDS]; /* the sample equals neighbour i? */
} PnmfLxCtx;

/* One sample's contexts (lx_sample()). */
typedef struct LxSample {
    int set, kind, cls, sc;
    int ncand;
    int cand[LX_CANDS], idx[LX_CANDS]; /* the candidates' values and which neighbour each is */
} LxSample;

/* The decoder's state across the frames of a window. */
typedef struct PnmfLx {
    PnmfLxCtx c;
    RcDec d;
    uint8_t *stream; /* a copy of the stream's bytes */
    size_t len;
    int from;        /* the first frame whose pixel levels the stream holds */
    int m, rows, cols;
    int version;     /* the file's format (rc_dec_init()) */
    int lossy;       /* window flags bit 24: levels dequantized at the frame's step, no candidates */
    int maxlev;      /* and the magnitude a level may reach (item 8's bound) */
    int16_t *e, *ep; /* the levels of frame j so far and of frame j - 1, rows x cols */
    uint64_t *bl, *blp; /* the blocks whose levels e and ep hold (y0, y1, x0, x1 in 16 bits each) */
    size_t nbl, nblp;   /* how many: a map is cleared where its frame wrote, not whole */
    int err;         /* 0; -1 a level out of range; -2 the stream ends short or has bytes over */
} PnmfLx;

static inline int pnmf_lx_med(int a, int b, int c)
{
    const int mx = a > b ? a : b, mn = a < b ? a : b;
    return c >= mx ? mn : c <= mn ? mx : a + b - c;
}

/* The contexts of sample (y, x) of prediction p in a block whose rows
 * start at y0 and whose columns end before x1, with D the frame decoded so
 * far and e, ep the level maps of this frame and the one before. */
static inline void pnmf_lx_sample(const PnmfLx *s, const int16_t *e, const int16_t *ep, const uint8_t *D, int y, int x,
                             int y0, int x1, int p, int kind, LxSample *o)
{
    const int cols = s->cols;
    const size_t q = (size_t)y * cols + x;
    int nb[LX_CANDS]; /* a (left), b (above), c (above-left), d (above-right) */
    if (!y) {
        nb[0] = x ? D[q - 1] : 128;
        nb[1] = nb[2] = nb[3] = nb[0];
    } else {
        const uint8_t *up = D + q - cols;
        nb[1] = up[0];
        nb[0] = x ? D[q - 1] : nb[1];
        nb[2] = x ? up[-1] : nb[1];
        /* above-right: not decoded yet inside the block to the right */
        nb[3] = x + 1 < cols && (y == y0 || x + 1 < x1) ? up[1] : nb[1];
    }
    const int la = x ? e[q - 1] : 0, lb = y ? e[q - cols] : 0;
    const int lc = x && y ? e[q - cols - 1] : 0, ld = y && x + 1 < cols ? e[q - cols + 1] : 0;
    const int cls = rc_lev_class(abs(la) + abs(lb) + (abs(lc) + abs(ld)) / 2);
    const int t = abs(p - pnmf_lx_med(nb[0], nb[1], nb[2]));
    const int act = t == 0 ? 0 : t <= 2 ? 1 : t <= 8 ? 2 : t <= 32 ? 3 : 4;
    o->kind = kind, o->cls = cls;
    o->set = ((kind * RC_LEV_CLASSES + cls) * LX_ACTS + act) * 2 + (ep[q] != 0);
    const int sn = la + lb;
    o->sc = sn < 0 ? 0 : sn == 0 ? 1 : 2;
    o->ncand = 0;
    for (int i = 0; i < LX_CANDS; i++) {
        int dup = nb[i] == p;
        for (int k = 0; k < o->ncand; k++) dup |= o->cand[k] == nb[i];
        if (dup) continue;
        o->cand[o->ncand] = nb[i], o->idx[o->ncand] = i;
        o->ncand++;
    }
}

/* Window flags bit 24: the set's last bit for the sample at (by, bx) of a
 * block of h x w predicted samples (pred, PNMF_RES_BLOCK a row; NULL for
 * the spatial prediction: 0): 1 where the prediction's own differences
 * to its left and above (right and below in the block's first column and
 * row) sum to PNMF_LXQ_GRAD or more, where its frame has an edge. */
static inline int pnmf_lxq_grad(const uint8_t *pred, int by, int bx, int h, int w)
{
    if (!pred) return 0;
    const uint8_t *r = pred + by * PNMF_RES_BLOCK;
    const int p = r[bx];
    const int gl = bx ? abs(p - r[bx - 1]) : bx + 1 < w ? abs(p - r[bx + 1]) : 0;
    const int gu = by ? abs(p - r[bx - PNMF_RES_BLOCK]) : by + 1 < h ? abs(p - r[bx + PNMF_RES_BLOCK]) : 0;
    return gl + gu >= PNMF_LXQ_GRAD;
}

/* A decoder's state for a window of m frames of rows x cols whose stream
 * is the len bytes at p (copied), the pixel levels of frames from..m-1. */
PnmfLx *pnmf_lx_new(const uint8_t *p, size_t len, int from, int m, int rows, int cols, int version, int lossy,
                    int maxlev);
void    pnmf_lx_free(PnmfLx *s);

/* Before frame j is reconstructed (frames in order from 0). */
void pnmf_lx_frame_start(PnmfLx *s, int j);

/* After frame j: at the window's last, the stream must be read exactly. */
void pnmf_lx_frame_end(PnmfLx *s, int j);

/* A pixel-coded block [y0, y1) x [x0, x1) of frame j (block mode mode,
 * pred its prediction, PNMF_RES_BLOCK a row, or NULL for the spatial
 * prediction, which this computes sample by sample): decode each level,
 * write the sample to D and the level to lev (row-major). dq: the
 * frame's dequantized levels, dq[l] for |l| <= the window's bound (with
 * window flags bit 24; NULL: the level itself). After an error (s->err),
 * the levels are 0. */
void pnmf_lx_block(PnmfLx *s, int j, int mode, const uint8_t *pred, uint8_t *D, int y0, int y1, int x0, int x1,
                   int16_t *lev, const int16_t *dq);

struct PnmfResidual;
struct RcBin;
/* The writer: the stream of r's pixel levels of frames from..m-1, from the
 * decoded frames r->enc_dec (every frame lossless: step 16). 0, or
 * PNMF_ERR_ARG when a level does not match them, PNMF_ERR_NOMEM. */
int pnmf_lx_stream(struct RcBin *o, const struct PnmfResidual *r, int from);

/* Whether the sample-context stream of r's pixel levels from frame from
 * on may beat the plain levels stream's: priced over its first
 * PNMF_LX_PROBE_FRAMES frames, fresh contexts each, within
 * PNMF_LX_PROBE_MARGIN of it. Where it does not (camera noise, whose
 * samples' contexts say little), the writer is spared coding every
 * frame's levels a second and third time. 1 when r keeps no decoded
 * frames (no probe). */
int pnmf_lx_pays(const struct PnmfResidual *r, int from);

#endif /* PNMF_LOSSLESS_H */
