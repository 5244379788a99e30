/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The writer of the sample-context levels stream (lossless.h). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lossless.h"
#include "rangecoder_enc.h"
#include "residual.h"
#include "tuning.h"

/* rc_lev_rem(o, ctx, 1, r)'s decisions, inlined so that lx_code()'s coder
 * state stays in registers. */
static inline void lx_rem(RcBin *o, RcProb *ctx, int r)
{
    if (!o->enc && !o->update) {
        rc_lev_rem(o, ctx, 1, r);
        return;
    }
    for (int i = 0; i < RC_LEV_UNARY; i++)
        if (!rc_bin(o, ctx + (i < 3 ? i : 3), r > i)) return;
    rc_bin_eg(o, (unsigned)(r - RC_LEV_UNARY) + 1);
}

/* Window flags bit 24: the samples of pixel-coded block b of frame j (its
 * rows from y0, columns [x0, x1)) as the decoder finds them when its
 * levels start, in F (a frame of rows x cols): its decoded neighbours
 * from r->enc_lxn. */
static void lx_neighbours(const PnmfResidual *r, int j, size_t b, uint8_t *F, int y0, int y1, int x0)
{
    const int cols = r->cols;
    const uint8_t *nbk = r->enc_lxn + ((size_t)j * r->bx * r->by + b) * PNMF_LX_NB;
    if (y0 > 0)
        for (int i = 0; i < 10; i++) {
            const int x = x0 - 1 + i;
            if (x >= 0 && x < cols) F[(size_t)(y0 - 1) * cols + x] = nbk[i];
        }
    if (x0 > 0)
        for (int y = y0; y < y1; y++) F[(size_t)y * cols + x0 - 1] = nbk[10 + y - y0];
}

/* The stream's decisions for the pixel levels of frames from..to-1
 * (contexts fresh at from), coded or priced as the caller's o says; the
 * coder's state and the price held in locals (lo, le) meanwhile. A
 * lossless window's contexts read its decoded frames (r->enc_dec); a
 * lossy one's (window flags bit 24: no candidates, each sample its
 * prediction plus its level dequantized) the neighbours and predictions
 * its blocks kept (r->enc_lxn, r->enc_lxp), each block's samples made
 * again in a frame of its own as the decoder makes them. */
static int lx_code(RcBin *caller, const PnmfResidual *r, int from, int to)
{
    RcBin lo = *caller, *o = &lo;
    RcEnc le;
    if (caller->enc) le = *caller->enc, lo.enc = &le;
    const int lossy = !r->enc_dec;
    if (lossy && !r->enc_lxn) return PNMF_ERR_ARG;
    PnmfLx s;
    memset(&s, 0, sizeof(s));
    s.rows = r->rows, s.cols = r->cols;
    const size_t n = (size_t)r->rows * r->cols, nb = (size_t)r->bx * r->by;
    int16_t *e = pnmf_calloc(n ? n : 1, sizeof(int16_t)), *ep = pnmf_calloc(n ? n : 1, sizeof(int16_t));
    uint8_t *F = lossy ? pnmf_malloc_array(n ? n : 1, 1) : NULL;
    int ret = e && ep && (F || !lossy) ? 0 : PNMF_ERR_NOMEM;
    rc_probs_init(&s.c.zero[0], sizeof(s.c) / sizeof(RcProb));
    PnmfLxCtx *c = &s.c;
    for (int j = from; ret >= 0 && j < to; j++) {
        int16_t *t = ep;
        ep = e, e = t;
        /* e holds frame j - 2's levels (zero where that frame coded none,
         * and all zero for the first two frames): its coded blocks
         * cleared, not the whole frame (most of a screen's blocks are
         * copied uncoded) */
        if (j - 2 >= from)
            for (size_t b = 0; b < nb; b++) {
                const uint8_t mode = r->modes[(size_t)(j - 2) * nb + b];
                if (!(mode & PNMF_RES_CODED) || (mode & PNMF_RES_TRANSFORM)) continue;
                int y0, y1, x0, x1;
                pnmf_residual_block(r->bx, r->rows, r->cols, b, &y0, &y1, &x0, &x1);
                for (int y = y0; y < y1; y++) memset(e + (size_t)y * s.cols + x0, 0, (size_t)(x1 - x0) * sizeof(int16_t));
            }
        const uint8_t *D = lossy ? F : r->enc_dec + (size_t)j * n;
        const int step16 = pnmf_residual_frame_step(r, j);
        size_t q = r->start[j];
        for (size_t b = 0; ret >= 0 && b < nb; b++) {
            const uint8_t mode = r->modes[(size_t)j * nb + b];
            if (!(mode & PNMF_RES_CODED)) continue;
            int y0, y1, x0, x1;
            pnmf_residual_block(r->bx, r->rows, r->cols, b, &y0, &y1, &x0, &x1);
            if (mode & PNMF_RES_TRANSFORM) {
                q += (size_t)(y1 - y0) * (x1 - x0);
                continue;
            }
            const int kind = rc_lev_kind(j, mode);
            uint8_t pb[PNMF_RES_BLOCK * PNMF_RES_BLOCK]; /* the block's prediction, PNMF_RES_BLOCK a row */
            if (lossy) lx_neighbours(r, j, b, F, y0, y1, x0);
            if (lossy && (mode & 7) != PNMF_RES_SPATIAL)
                for (int y = 0; y < y1 - y0; y++)
                    memcpy(pb + y * PNMF_RES_BLOCK, r->enc_lxp + q + (size_t)y * (x1 - x0), (size_t)(x1 - x0));
            for (int y = y0; y < y1 && ret >= 0; y++)
                for (int x = x0; x < x1; x++) {
                    const int l = r->lev[q];
                    int p;
                    if (!lossy) {
                        p = D[(size_t)y * s.cols + x] - l;
                    } else if ((mode & 7) != PNMF_RES_SPATIAL) {
                        p = r->enc_lxp[q];
                    } else { /* the spatial prediction, as pnmf_lx_block() makes it */
                        const uint8_t *row = F + (size_t)y * s.cols;
                        p = !y ? (x ? row[x - 1] : 128) : !x ? row[-s.cols] : pnmf_lx_med(row[x - 1], row[x - s.cols], row[x - s.cols - 1]);
                    }
                    q++;
                    if (p < 0 || p > 255 || (!lossy && (l < -255 || l > 255))) {
                        ret = PNMF_ERR_ARG;
                        break;
                    }
                    LxSample so;
                    pnmf_lx_sample(&s, e, ep, D, y, x, y0, x1, p, kind, &so);
                    if (lossy) /* the set's last bit: the prediction's gradient, not the frame before's level */
                        so.set = (so.set & ~1) | pnmf_lxq_grad((mode & 7) != PNMF_RES_SPATIAL ? pb : NULL, y - y0, x - x0,
                                                               y1 - y0, x1 - x0);
                    e[(size_t)y * s.cols + x] = (int16_t)l;
                    if (lossy) F[(size_t)y * s.cols + x] = (uint8_t)pnmf_residual_clip8(p + pnmf_residual_dequant(l, step16));
                    if (!rc_bin(o, &c->zero[so.set], l != 0)) continue;
                    int hit = 0;
                    for (int i = 0; i < so.ncand && !hit && !lossy; i++)
                        hit = rc_bin(o, &c->cand[kind][so.cls][so.idx[i]], p + l == so.cand[i]);
                    if (hit) continue;
                    rc_bin(o, &c->sign[so.set][so.sc], l < 0);
                    const int a = abs(l);
                    if (rc_bin(o, &c->gt1[so.set], a > 1)) lx_rem(o, c->mag[so.set], a - 2);
                }
        }
    }
    pnmf_free(e);
    pnmf_free(ep);
    pnmf_free(F);
    if (caller->enc) *caller->enc = le;
    caller->bits = lo.bits;
    return ret;
}

int pnmf_lx_stream(RcBin *o, const PnmfResidual *r, int from) { return lx_code(o, r, from, r->m); }

int pnmf_lx_pays(const PnmfResidual *r, int from)
{
    if ((!r->enc_dec && !r->enc_lxn) || from >= r->m) return 1;
    const int to = from + PNMF_LX_PROBE_FRAMES < r->m ? from + PNMF_LX_PROBE_FRAMES : r->m;
    RcBin ox = { .update = 1 }, ol = { .update = 1 };
    if (lx_code(&ox, r, from, to) < 0) return 1;
    /* the plain levels stream's pixel levels of the same frames */
    const size_t nb = (size_t)r->bx * r->by;
    RcLevCtx lc;
    rc_lev_ctx_init(&lc);
    for (int j = from; j < to; j++)
        for (size_t b = 0, q = r->start[j]; b < nb; b++) {
            const uint8_t mode = r->modes[(size_t)j * nb + b];
            if (!(mode & PNMF_RES_CODED)) continue;
            int y0, y1, x0, x1;
            pnmf_residual_block(r->bx, r->rows, r->cols, b, &y0, &y1, &x0, &x1);
            if (!(mode & PNMF_RES_TRANSFORM))
                rc_pixel_levels(&ol, &lc, rc_lev_kind(j, mode), y1 - y0, x1 - x0, r->lev + q, INT16_MAX);
            q += (size_t)(y1 - y0) * (x1 - x0);
        }
    return ox.bits <= ol.bits * PNMF_LX_PROBE_MARGIN;
}
