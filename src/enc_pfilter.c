/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The encoder's restoration filter (window flags bit 22, pfilter.h): for
 * each class of 4x4 blocks, the taps that minimise the squared error of
 * the window's frames shown against their source (least squares over the
 * class's samples in every other row), rounded to 1/256; a class is
 * filtered where the error it saves outweighs its taps' bytes at the
 * window's lambda, and is a share of its error worth the decoder's pass
 * over its blocks (PNMF_PF_MIN_GAIN).
 *
 * With the taps summing to 1, a sample filtered is p + sum_i c_i g_i with
 * g_i = p(+o_i) + p(-o_i) - 2 p: the normal equations of the 6 taps
 * against s - p, summed in integers (exact, and the same in every build). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "enc_internal.h"
#include "enc_pfilter.h"
#include "varint.h"

#define NT PNMF_PF_TAPS

void pnmf_pf_fit_frame(PnmfPfFit *st, const uint8_t *shown, const uint8_t *src)
{
    const int w = st->w, h = st->h;
    const ptrdiff_t ps = st->stride;
    const int nby = (h + PNMF_PF_BLOCK - 1) / PNMF_PF_BLOCK, nbx = (w + PNMF_PF_BLOCK - 1) / PNMF_PF_BLOCK;
    uint8_t *org = pnmf_pf_origin(st->pad, ps);
    for (int y = 0; y < h; y++) memcpy(org + y * ps, shown + (size_t)y * w, (size_t)w);
    pnmf_pf_pad(org, ps, h, w);
    if (st->pass) pnmf_pf_apply(&st->pf, org, ps, h, w, st->tmp, w, st->cls);
    pnmf_pf_classes(org, ps, h, w, st->cls);
    ptrdiff_t o[NT];
    for (int i = 0; i < NT; i++) o[i] = pnmf_pf_off[i][0] * ps + pnmf_pf_off[i][1];
    for (int by = 0; by < nby; by++)
        for (int bx = 0; bx < nbx; bx++) {
            const int k = st->cls[by * nbx + bx];
            const int y1 = (by + 1) * PNMF_PF_BLOCK < h ? (by + 1) * PNMF_PF_BLOCK : h;
            const int x1 = (bx + 1) * PNMF_PF_BLOCK < w ? (bx + 1) * PNMF_PF_BLOCK : w;
            /* pass 0: the normal equations of every other row, half the
             * work for nearly the same taps */
            for (int y = by * PNMF_PF_BLOCK; y < y1; y += 2 - st->pass)
                for (int x = bx * PNMF_PF_BLOCK; x < x1; x++) {
                    const int q = y * w + x, t = src[q] - shown[q];
                    if (st->pass) {
                        const int d = src[q] - st->tmp[q];
                        st->e0[k] += t * t, st->e1[k] += d * d;
                        continue;
                    }
                    /* the features g of the sample */
                    const uint8_t *p = org + y * ps + x;
                    int g[NT];
                    for (int i = 0; i < NT; i++) g[i] = p[o[i]] + p[-o[i]] - 2 * p[0];
                    for (int i = 0; i < NT; i++) {
                        int64_t *ai = st->a[k][i];
                        for (int jj = i; jj < NT; jj++) ai[jj] += g[i] * g[jj];
                        st->b[k][i] += g[i] * t;
                    }
                }
        }
}

static int pf_frame(void *ctx, const uint8_t *shown, const uint8_t *src)
{
    pnmf_pf_fit_frame(ctx, shown, src);
    return 0;
}

/* The least-squares taps of class k (Gaussian elimination with partial
 * pivoting on the normal equations), rounded to 1/256 and clamped; 0 when
 * the class has too few samples to fix them. */
static int pf_solve(const PnmfPfFit *st, int k, int16_t *c)
{
    double m[NT][NT + 1];
    for (int i = 0; i < NT; i++) {
        for (int jj = 0; jj < NT; jj++) m[i][jj] = (double)(jj >= i ? st->a[k][i][jj] : st->a[k][jj][i]);
        m[i][NT] = (double)st->b[k][i];
    }
    for (int i = 0; i < NT; i++) {
        int p = i;
        for (int r = i + 1; r < NT; r++)
            if (fabs(m[r][i]) > fabs(m[p][i])) p = r;
        if (fabs(m[p][i]) < 1e-6 * (1 + fabs(m[i][i]))) return 0;
        if (p != i)
            for (int jj = 0; jj <= NT; jj++) {
                const double t = m[i][jj];
                m[i][jj] = m[p][jj], m[p][jj] = t;
            }
        for (int r = 0; r < NT; r++) {
            if (r == i) continue;
            const double f = m[r][i] / m[i][i];
            for (int jj = i; jj <= NT; jj++) m[r][jj] -= f * m[i][jj];
        }
    }
    for (int i = 0; i < NT; i++) {
        const double v = floor(m[i][NT] / m[i][i] * (1 << PNMF_PF_LOG2) + 0.5);
        c[i] = (int16_t)(v < -PNMF_PF_MAX_TAP ? -PNMF_PF_MAX_TAP : v > PNMF_PF_MAX_TAP ? PNMF_PF_MAX_TAP : v);
    }
    return 1;
}

/* The bytes of a class's taps as varints. */
static int pf_tap_bytes(const int16_t *c)
{
    int n = 0;
    for (int i = 0; i < NT; i++) n += 1 + (zigzag(c[i]) >= 128);
    return n;
}

int pnmf_pf_fit_taps(PnmfPfFit *f)
{
    memset(&f->pf, 0, sizeof(f->pf));
    for (int k = 0; k < PNMF_PF_CLASSES; k++)
        if (pf_solve(f, k, f->pf.c[k])) f->pf.mask |= 1 << k;
    f->pf.on = f->pf.mask != 0;
    f->pass = 1;
    return f->pf.mask;
}

void pnmf_pf_fit_choose(const PnmfPfFit *f, double lambda, PnmfPFilter *pf, double *dsse)
{
    memset(pf, 0, sizeof(*pf));
    *dsse = 0;
    for (int k = 0; k < PNMF_PF_CLASSES; k++) {
        const double gain = (double)(f->e0[k] - f->e1[k]);
        if (!(f->pf.mask >> k & 1) || gain <= lambda * 8 * pf_tap_bytes(f->pf.c[k]) ||
            gain < PNMF_PF_MIN_GAIN * (double)f->e0[k])
            continue;
        pf->mask |= 1 << k, *dsse -= gain;
        memcpy(pf->c[k], f->pf.c[k], sizeof(pf->c[k]));
    }
    /* the mask's byte */
    if (pf->mask && -*dsse > lambda * 8) pf->on = 1;
    else memset(pf, 0, sizeof(*pf)), *dsse = 0;
}

int pnmf_window_pfilter(PnmfEncoder *e, EncWindow *w)
{
    PnmfResidual *r = &w->md.res;
    memset(&r->pf, 0, sizeof(r->pf));
    w->pf_dsse = 0;
    /* lossy windows of smooth content (sub-pixel motion, or drawn: enc_rdoq), no sprite layer */
    if (!PNMF_PF_ENCODE || !e->s.restoration || !e->s.residual || r->step16 <= PNMF_RES_MIN_STEP ||
        w->md.spr.present || !r->enc_rdoq)
        return 0;
    PnmfPfFit *f = pnmf_calloc(1, sizeof(*f));
    if (!f) return PNMF_ERR_NOMEM;
    f->w = e->in_width, f->h = e->in_height;
    f->cls = pnmf_malloc_array((size_t)(f->h + PNMF_PF_BLOCK - 1) / PNMF_PF_BLOCK,
                               (size_t)(f->w + PNMF_PF_BLOCK - 1) / PNMF_PF_BLOCK);
    f->pad = pnmf_malloc(pnmf_pf_padded_size(f->h, f->w, &f->stride));
    int ret = f->cls && f->pad ? pnmf_window_shown(e, w, pf_frame, f) : PNMF_ERR_NOMEM;
    if (ret >= 0 && pnmf_pf_fit_taps(f)) {
        if (!(f->tmp = pnmf_malloc_array((size_t)f->w, (size_t)f->h))) ret = PNMF_ERR_NOMEM;
        if (ret >= 0) ret = pnmf_window_shown(e, w, pf_frame, f);
        if (ret >= 0) pnmf_pf_fit_choose(f, enc_residual_lambda(r->step16), &r->pf, &w->pf_dsse);
        if (r->pf.on)
            pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: restoration filter, classes 0x%x, squared error %.0f",
                     e->windows, r->pf.mask, w->pf_dsse);
    }
    pnmf_free(f->tmp);
    pnmf_free(f->cls);
    pnmf_free(f->pad);
    pnmf_free(f);
    return ret;
}
