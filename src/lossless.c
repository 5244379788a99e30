/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The sample-context levels stream (lossless.h): the decoder's side; the
 * writer's is lossless_enc.c. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lossless.h"
#include "residual.h"

/* ---- the decoder ---------------------------------------------------------- */

PnmfLx *pnmf_lx_new(const uint8_t *p, size_t len, int from, int m, int rows, int cols, int version)
{
    PnmfLx *s = pnmf_calloc(1, sizeof(*s));
    if (!s) return NULL;
    s->stream = pnmf_malloc_array(len ? len : 1, 1);
    s->e = pnmf_calloc((size_t)rows * cols, sizeof(int16_t));
    s->ep = pnmf_calloc((size_t)rows * cols, sizeof(int16_t));
    if (!s->stream || !s->e || !s->ep) {
        pnmf_lx_free(s);
        return NULL;
    }
    if (len) memcpy(s->stream, p, len);
    s->len = len, s->from = from, s->m = m, s->rows = rows, s->cols = cols, s->version = version;
    return s;
}

void pnmf_lx_free(PnmfLx *s)
{
    if (!s) return;
    pnmf_free(s->stream);
    pnmf_free(s->e);
    pnmf_free(s->ep);
    pnmf_free(s);
}

void pnmf_lx_frame_start(PnmfLx *s, int j)
{
    if (j < s->from) return;
    const size_t n = (size_t)s->rows * s->cols;
    if (j == s->from) { /* the stream starts; no frame before it has levels here */
        rc_probs_init(&s->c.zero[0], sizeof(s->c) / sizeof(RcProb));
        rc_dec_init(&s->d, s->stream, s->len, s->version);
        s->err = 0;
        memset(s->e, 0, n * sizeof(int16_t));
    }
    int16_t *t = s->ep;
    s->ep = s->e, s->e = t;
    memset(s->e, 0, n * sizeof(int16_t));
}

void pnmf_lx_frame_end(PnmfLx *s, int j)
{
    if (j == s->m - 1 && !s->err && !rc_dec_exact(&s->d, s->stream)) s->err = -2;
}

static int lx_decode(PnmfLx *s, const LxSample *o, int p)
{
    RcDec *d = &s->d;
    PnmfLxCtx *c = &s->c;
    if (!rc_decode(d, &c->zero[o->set])) return 0;
    for (int i = 0; i < o->ncand; i++)
        if (rc_decode(d, &c->cand[o->kind][o->cls][o->idx[i]])) return o->cand[i] - p;
    const int neg = rc_decode(d, &c->sign[o->set][o->sc]);
    int a = 1;
    if (rc_decode(d, &c->gt1[o->set])) {
        const int r = rc_decode_lev_rem(d, c->mag[o->set], 1);
        if (r < 0 || r + 2 > 255) {
            s->err = -1;
            return 0;
        }
        a = r + 2;
    }
    return neg ? -a : a;
}

void pnmf_lx_block(PnmfLx *s, int j, int mode, const uint8_t *pred, uint8_t *D, int y0, int y1, int x0, int x1,
                   int16_t *lev)
{
    const int cols = s->cols, kind = rc_lev_kind(j, mode);
    for (int y = y0; y < y1; y++) {
        uint8_t *row = D + (size_t)y * cols;
        for (int x = x0; x < x1; x++) {
            int p;
            if (pred) p = pred[(y - y0) * PNMF_RES_BLOCK + x - x0];
            else if (!y) p = x ? row[x - 1] : 128;
            else if (!x) p = row[-cols];
            else p = pnmf_lx_med(row[x - 1], row[x - cols], row[x - cols - 1]);
            int l = 0;
            if (!s->err) {
                LxSample o;
                pnmf_lx_sample(s, s->e, s->ep, D, y, x, y0, x1, p, kind, &o);
                l = lx_decode(s, &o, p);
                if (s->d.over && !s->err) s->err = -2;
            }
            row[x] = (uint8_t)pnmf_residual_clip8(p + l);
            s->e[(size_t)y * cols + x] = (int16_t)l;
            *lev++ = (int16_t)l;
        }
    }
}

