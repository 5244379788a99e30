/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading the window payload (docs/format.md, "Window payload"; the
 * writer is model_write.c). Everything is an unsigned LEB128 varint;
 * signed values are zigzag-mapped first. Values of one kind are grouped
 * (all block sizes, then all levels, then the occurrence counts,
 * coefficients and shifts, each component by component through the
 * frames) so zstd sees long runs of alike bytes. Levels are predicted from
 * the left neighbour (the one above in the first column); shifts are
 * coded as the change from the same component's same occurrence in an
 * earlier frame, wrapped the shortest way round the torus. Every value is
 * checked against its limit before use.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model.h"
#include "lossless.h"
#include "rangecoder.h"
#include "residual.h"
#include "varint.h"

int pnmf_model_alloc(PnmfWindowModel *md, int rows, int cols, int vis_rows, int vis_cols,
                     int m, int k, int max_entries)
{
    memset(md, 0, sizeof(*md));
    md->rows = rows, md->cols = cols, md->vis_rows = vis_rows, md->vis_cols = vis_cols;
    md->m = m, md->k = k;
    md->comp = pnmf_calloc(k, sizeof(PnmfComp));
    md->first = pnmf_calloc((size_t)m + 1, sizeof(int));
    md->ent = pnmf_malloc_array(max_entries > 0 ? (size_t)max_entries : 1, sizeof(PnmfEntry));
    if (!md->comp || !md->first || !md->ent) {
        pnmf_model_free(md);
        return PNMF_ERR_NOMEM;
    }
    md->cap = max_entries;
    return 0;
}

void pnmf_model_free(PnmfWindowModel *md)
{
    if (md->comp)
        for (int i = 0; i < md->k; i++) pnmf_free(md->comp[i].lev);
    pnmf_free(md->comp);
    pnmf_free(md->first);
    pnmf_free(md->ent);
    pnmf_keep_give(md->keep, md->res.lev);
    md->res.lev = NULL;
    pnmf_residual_free(&md->res);
    pnmf_sprite_layer_free(&md->spr);
    memset(md, 0, sizeof(*md));
}

uint64_t pnmf_model_work(const PnmfWindowModel *md)
{
    uint64_t work = 0;
    for (int e = 0; e < md->first[md->m]; e++) {
        const PnmfComp *c = &md->comp[md->ent[e].i];
        work += (uint64_t)c->bh * (uint64_t)c->bw;
    }
    return work;
}

/* At most 1024 * (2^28 + 32 * 2^28) < 2^44: no overflow. */
uint64_t pnmf_model_max_work(int rows, int cols, int m)
{
    return (uint64_t)m * (PNMF_WORK_PER_FRAME + (uint64_t)PNMF_WORK_PER_PIXEL * rows * cols);
}

/* The residual layer (residual.h): step, block size, a mode per block and
 * frame, the levels of the coded blocks. */
/* Window flags bit 13 (format 9): palette block b of frame j read from the
 * modes stream into rs->pal (palette.h); at[] holds the frame's palette
 * blocks' places in rs->pal (-1: another mode), for their neighbours'
 * caches. 0, PNMF_ERR_NOMEM, or -1 for a block the format refuses. */
static int read_palette_block(RcDec *d, PnmfPalCtx *pc, PnmfResidual *rs, size_t b, int h, int w, int32_t *at)
{
    if (rs->npal == rs->palcap) {
        const size_t cap = rs->palcap ? 2 * rs->palcap : 64;
        PnmfPalBlock *np = pnmf_realloc(rs->pal, cap * sizeof(*np));
        if (!np) return PNMF_ERR_NOMEM;
        rs->pal = np, rs->palcap = cap;
    }
    const int bx = rs->bx;
    const PnmfPalBlock *left = b % (size_t)bx && at[b - 1] >= 0 ? rs->pal + at[b - 1] : NULL;
    const PnmfPalBlock *above = b >= (size_t)bx && at[b - bx] >= 0 ? rs->pal + at[b - bx] : NULL;
    if (pnmf_pal_read(d, pc, left, above, h, w, rs->pal + rs->npal) < 0) return -1;
    at[b] = (int32_t)rs->npal++;
    return 0;
}


/* Frame j's reference t, in how far before the window the references
 * reach: rs->reach, and rs->reach_lt without reference 15 (which window
 * flags bit 21 makes the key frame). */
static inline void note_reach(PnmfResidual *rs, int t, int j)
{
    if (t + 1 - j > rs->reach) rs->reach = t + 1 - j;
    if (t != PNMF_RES_LTERM_T && t + 1 - j > rs->reach_lt) rs->reach_lt = t + 1 - j;
}

/* Window flags bit 17 (format 12): the second hypothesis of vector q
 * (block bk of frame j), read after its first; has[] the frame's blocks
 * that have one (set here for bk). 0, -1 for a reference not available,
 * -2 for a vector out of range. */
static int read_second(RcDec *d, RcBiCtx *bc, PnmfResidual *rs, size_t q, uint8_t *has, size_t bk, int j,
                       int continues, int maxv)
{
    const int t2 = rc_decode_bi(d, bc, pnmf_bi_ctx(has, rs->bx, bk));
    has[bk] = t2 >= 0;
    rs->mvbi[q] = 0, rs->mv2[2 * q] = rs->mv2[2 * q + 1] = 0;
    if (t2 < 0) return 0;
    if (!continues && t2 >= j) return -1; /* D_{j-1-t2}: inside a key window only frames of the window */
    int d0 = 0;
    for (int c = 0; c < 2; c++) {
        const int32_t dv = rc_decode_mvd(d, &bc->d, c, 1, c && !d0);
        if (dv < -2 * maxv || dv > 2 * maxv) return -2;
        const int v = pnmf_bi_scale(rs->mv[2 * q + c], rs->mvref[q], t2) + (int)dv;
        if (v < -maxv || v > maxv) return -2;
        rs->mv2[2 * q + c] = (int16_t)v, d0 = (int)dv;
    }
    rs->mvbi[q] = (uint8_t)(t2 + 1);
    note_reach(rs, t2, j);
    return 0;
}

/* Window flags bit 18: the gain and offset of each frame j = 0..m-1 that
 * has references (j > 0, or a continuing window's frame 0), into wp (m
 * pairs, the others (PNMF_RES_WP_ONE, 0)) unless NULL. 0, -1 truncated,
 * -2 - j for frame j's out of range. */
static int read_weights(Rd *r, int m, int continues, int16_t *wp)
{
    for (int j = 0; j < m; j++) {
        uint64_t gw = 0, go = 0;
        if ((j || continues) && (get_u(r, &gw) < 0 || get_u(r, &go) < 0)) return -1;
        if (gw > 2 * (uint64_t)PNMF_RES_WP_MAX_W || go > 2 * (uint64_t)PNMF_RES_WP_MAX_O) return -2 - j;
        const int64_t w = unzigzag(gw) + PNMF_RES_WP_ONE, o = unzigzag(go);
        if (w < 0 || w > PNMF_RES_WP_MAX_W || o < -PNMF_RES_WP_MAX_O || o > PNMF_RES_WP_MAX_O) return -2 - j;
        if (wp) wp[2 * j] = (int16_t)w, wp[2 * j + 1] = (int16_t)o;
    }
    return 0;
}

/* Window flags bit 22: the restoration filter's classes and taps into pf.
 * 0, -1 truncated, -2 a mask out of range, -3 a tap out of range. */
static int read_pfilter(Rd *r, PnmfPFilter *pf)
{
    uint64_t mask, u;
    if (get_u(r, &mask) < 0) return -1;
    if (mask < 1 || mask >= 1u << PNMF_PF_CLASSES) return -2;
    memset(pf, 0, sizeof(*pf));
    pf->on = 1, pf->mask = (int)mask;
    for (int k = 0; k < PNMF_PF_CLASSES; k++)
        for (int i = 0; (mask >> k & 1) && i < PNMF_PF_TAPS; i++) {
            if (get_u(r, &u) < 0) return -1;
            if (u > 2 * (uint64_t)PNMF_PF_MAX_TAP) return -3;
            pf->c[k][i] = (int16_t)unzigzag(u);
        }
    return 0;
}

static int read_residual(Rd *r, int version, int m, int rows, int cols, int continues, int rclev, int ctxlev, int subpel, int tx8,
                         int idir, int palette, int casc, int order, int nbctx, int median, int bi, int weights,
                         int pfilter, int warp, PnmfKeep *keep, PnmfResidual *rs, char *err, size_t errlen)
{
    /* a vector component's bound: quarter samples with window flags bit 6 */
    const int maxv = subpel ? PNMF_RES_QPEL_MAX_MV : PNMF_RES_MAX_MV;
    uint64_t step, key_step, qp, key_qp, bs, v, period = 0, casc_step = 0, casc_qp = 0;
    int16_t (*cur)[3] = NULL; /* format 7: a frame's vectors by block, for the candidates */
    int16_t (*pcur)[3] = NULL; /* window flags bit 15: the frame before's, for its candidate */
    if (get_u(r, &step) < 0 || get_u(r, &key_step) < 0 || get_u(r, &qp) < 0 || get_u(r, &key_qp) < 0 ||
        get_u(r, &bs) < 0)
        goto truncated;
    /* window flags bit 12 (format 9): the step cascade's period, step and quantizer */
    if (casc && (get_u(r, &period) < 0 || get_u(r, &casc_step) < 0 || get_u(r, &casc_qp) < 0)) goto truncated;
    if (casc && (period < 1 || period > PNMF_RES_MAX_PERIOD || casc_step < PNMF_RES_MIN_STEP ||
                 casc_step > PNMF_RES_MAX_STEP || casc_qp > PNMF_RES_MAX_QP)) {
        pnmf_set_err(err, errlen, "step cascade: period %llu, step %llu/16, quantizer %llu out of range",
                     (unsigned long long)period, (unsigned long long)casc_step, (unsigned long long)casc_qp);
        return PNMF_ERR_CORRUPT;
    }
    /* window flags bit 19 (format 15): groups of the cascade's period, whose
     * anchor must still be a reference when the group's last frame is shown */
    if (order && (period < 2 || period > PNMF_RES_MAX_GROUP)) {
        pnmf_set_err(err, errlen, "coding order: groups of %llu frames, not 2..%d", (unsigned long long)period,
                     PNMF_RES_MAX_GROUP);
        return PNMF_ERR_CORRUPT;
    }
    /* window flags bit 18 (format 14): each frame's gain and offset, where it
     * has references; checked here, stored once the layer is allocated */
    const Rd wat = *r;
    const int wbad = weights ? read_weights(r, m, continues, NULL) : 0;
    if (wbad == -1) goto truncated;
    if (wbad < 0) {
        pnmf_set_err(err, errlen, "frame %d's weights out of range", -wbad - 2);
        return PNMF_ERR_CORRUPT;
    }
    /* window flags bit 22 (format 19): the restoration filter */
    PnmfPFilter pf = { 0 };
    const int pbad = pfilter ? read_pfilter(r, &pf) : 0;
    if (pbad == -1) goto truncated;
    if (pbad < 0) {
        pnmf_set_err(err, errlen, pbad == -2 ? "restoration filter: classes out of range"
                                             : "restoration filter: a tap out of range");
        return PNMF_ERR_CORRUPT;
    }
    if (qp > PNMF_RES_MAX_QP || key_qp > PNMF_RES_MAX_QP) {
        pnmf_set_err(err, errlen, "residual transform quantizers %llu, %llu over %d", (unsigned long long)qp,
                     (unsigned long long)key_qp, PNMF_RES_MAX_QP);
        return PNMF_ERR_CORRUPT;
    }
    if (step < PNMF_RES_MIN_STEP || step > PNMF_RES_MAX_STEP || key_step < PNMF_RES_MIN_STEP ||
        key_step > PNMF_RES_MAX_STEP) {
        pnmf_set_err(err, errlen, "residual steps %llu/16, %llu/16 out of range", (unsigned long long)step,
                     (unsigned long long)key_step);
        return PNMF_ERR_CORRUPT;
    }
    if (bs != PNMF_RES_BLOCK) {
        pnmf_set_err(err, errlen, "residual block size %llu, only %d is defined", (unsigned long long)bs,
                     PNMF_RES_BLOCK);
        return PNMF_ERR_CORRUPT;
    }
    const uint64_t nb = (uint64_t)pnmf_residual_blocks(cols) * (uint64_t)pnmf_residual_blocks(rows);
    /* format 4 and later: the modes and the vectors are range-coded
     * streams, each after its length; formats 2 and 3: one varint a value */
    const int coded = version >= 4;
    RcDec rd = { 0 };
    RcModeCtx mc;
    const uint8_t *stream = NULL;
    uint64_t vec_len = 0, lev_len = 0, ctx_len = 0;
    if (ctxlev == 1 && (step != PNMF_RES_MIN_STEP || key_step != PNMF_RES_MIN_STEP || (casc && casc_step != PNMF_RES_MIN_STEP))) {
        pnmf_set_err(err, errlen, "sample-context levels with residual steps %llu/16, %llu/16 (lossless only)",
                     (unsigned long long)step, (unsigned long long)key_step);
        return PNMF_ERR_CORRUPT;
    }
    if (coded) { /* the two lengths (three: format 6's levels, four: format 9's sample
                  * contexts); the streams end the payload */
        uint64_t mode_len;
        if (get_u(r, &mode_len) < 0 || get_u(r, &vec_len) < 0 || (rclev && get_u(r, &lev_len) < 0) ||
            (ctxlev && get_u(r, &ctx_len) < 0) ||
            mode_len > (uint64_t)(r->end - r->p) || vec_len > (uint64_t)(r->end - r->p) - mode_len ||
            lev_len > (uint64_t)(r->end - r->p) - mode_len - vec_len ||
            ctx_len > (uint64_t)(r->end - r->p) - mode_len - vec_len - lev_len)
            goto truncated;
        r->end -= mode_len + vec_len + lev_len; /* the varint levels end there */
        stream = r->end + lev_len; /* format 6: the levels stream first */
        r->end -= ctx_len; /* format 9: the sample-context stream before it */
        rc_dec_init(&rd, stream, (size_t)mode_len, version);
        rc_mode_ctx_init(&mc);
    } else if ((uint64_t)m * nb > (uint64_t)(r->end - r->p)) {
        goto truncated; /* a byte each at least */
    }
    PNMF_CHECK(pnmf_residual_alloc(rs, m, rows, cols, (int)step, (int)key_step));
    rs->qp = (int)qp, rs->key_qp = (int)key_qp;
    rs->casc_period = (int)period, rs->casc_step16 = (int)casc_step, rs->casc_qp = (int)casc_qp;
    rs->order = order;
    rs->wp_on = weights;
    rs->pf = pf;
    if (weights) {
        Rd wr = wat;
        read_weights(&wr, m, continues, rs->wp);
    }
    rs->continues = continues;
    rs->subpel = subpel;
    rs->nbctx = nbctx;
    rs->median = median;
    rs->tx8_on = tx8;
    rs->idir_on = idir;
    uint64_t total = 0, nmv = 0;
    PnmfPalCtx pc;
    pnmf_pal_ctx_init(&pc);
    int32_t *palat = palette ? pnmf_malloc_array((size_t)nb, sizeof(int32_t)) : NULL;
    if (palette && !palat) return PNMF_ERR_NOMEM;
    rs->palette = palette;
    for (int j = 0; j < m; j++) {
        rs->start[j] = (size_t)total;
        rs->mvstart[j] = (size_t)nmv;
        rs->palstart[j] = rs->npal;
        if (palat) memset(palat, 0xff, (size_t)nb * sizeof(int32_t));
        /* block b's column and row stepped along, not divided out */
        for (uint64_t b = 0, bcol = 0, brow = 0; b < nb; b++, bcol + 1 < (uint64_t)rs->bx ? bcol++ : (bcol = 0, brow++)) {
            if (coded) {
                const uint8_t *mo = rs->modes + (uint64_t)j * nb + b;
                if (nbctx) mc.nb = pnmf_residual_mode_nb_at(mo, rs->bx, (size_t)nb, bcol != 0, brow != 0, j);
                v = (uint64_t)rc_decode_mode(&rd, &mc, bcol ? mo[-1] : -1, brow ? mo[-rs->bx] : -1,
                                             j ? mo[-(ptrdiff_t)nb] : -1);
            } else if (get_u(r, &v) < 0) {
                goto truncated;
            }
            const uint64_t pred = v & 7;
            int y0, y1, x0, x1;
            pnmf_residual_block_at((int)brow, (int)bcol, rows, cols, &y0, &y1, &x0, &x1);
            const int h = y1 - y0, w = x1 - x0;
            /* format 7: the intra predictions 5-7 */
            if (palette && v == PNMF_RES_PALETTE) { /* window flags bit 13 */
                RcDec pd = rd; /* rd's address stays here: the compiler keeps it in registers */
                const int pr = read_palette_block(&pd, &pc, rs, (size_t)b, h, w, palat);
                rd = pd;
                if (pr < 0) {
                    pnmf_free(palat);
                    if (pr == PNMF_ERR_NOMEM) return pr;
                    pnmf_set_err(err, errlen, "frame %d, block %llu: palette block out of range", j,
                                 (unsigned long long)b);
                    return PNMF_ERR_CORRUPT;
                }
                rs->modes[(uint64_t)j * nb + b] = (uint8_t)v;
                continue;
            }
            if (v > 31 || pred >= (version >= 7 ? PNMF_RES_PREDS : PNMF_RES_INTRA_DC) ||
                ((v & PNMF_RES_TRANSFORM) &&
                 (!(v & PNMF_RES_CODED) || pred == PNMF_RES_SPATIAL || h < PNMF_RES_BLOCK || w < PNMF_RES_BLOCK)) ||
                (j == 0 && !continues &&
                 (pred == PNMF_RES_PREVIOUS || pred == PNMF_RES_MOTION || pred == PNMF_RES_SHIFTED))) {
                pnmf_set_err(err, errlen, "frame %d, block %llu: residual mode %llu not allowed", j,
                             (unsigned long long)b, (unsigned long long)v);
                pnmf_free(palat);
                return PNMF_ERR_CORRUPT;
            }
            rs->modes[(uint64_t)j * nb + b] = (uint8_t)v;
            nmv += pred == PNMF_RES_SHIFTED;
            if (v & PNMF_RES_CODED) total += (uint64_t)h * w;
        }
    }
    pnmf_free(palat);
    rs->start[m] = (size_t)total;
    rs->mvstart[m] = (size_t)nmv;
    rs->palstart[m] = rs->npal;
    if (coded && !rc_dec_exact(&rd, stream)) goto bad_stream;
    RcVecCtx vc;
    if (coded) {
        stream = rd.end;
        rc_dec_init(&rd, stream, (size_t)vec_len, version);
        rc_vec_ctx_init(&vc);
        vc.on = nbctx; /* window flags bit 14 */
        if (!rclev && total > (uint64_t)(r->end - r->p)) goto truncated; /* a byte each at least a level */
        if (rclev && total > PNMF_MAX_RES_LEVELS) {
            pnmf_set_err(err, errlen, "%llu residual levels in a window, over the limit %d", (unsigned long long)total,
                         PNMF_MAX_RES_LEVELS);
            return PNMF_ERR_LIMIT;
        }
    } else if (3 * nmv + total > (uint64_t)(r->end - r->p)) { /* three a vector, one a level */
        goto truncated;
    }
    rs->mv = pnmf_malloc_array(nmv ? 2 * (size_t)nmv : 1, sizeof(int16_t));
    rs->mvref = pnmf_malloc_array(nmv ? (size_t)nmv : 1, 1);
    if (!rs->mv || !rs->mvref) return PNMF_ERR_NOMEM;
    rs->nmv = (size_t)nmv;
    rs->mvcap = 2 * (size_t)nmv;
    rs->bi = bi;
    if (bi) { /* window flags bit 17: each vector's second hypothesis */
        rs->mvbi = pnmf_malloc_array(nmv ? (size_t)nmv : 1, 1);
        rs->mv2 = pnmf_malloc_array(nmv ? 2 * (size_t)nmv : 1, sizeof(int16_t));
        if (!rs->mvbi || !rs->mv2) return PNMF_ERR_NOMEM;
    }
    RcBiCtx bc;
    rc_bi_ctx_init(&bc);
    int sr = 0; /* read_second()'s result */
    rs->reach = rs->reach_lt = 0;
    /* each block's vector, and after them (window flags bit 17) whether it has a second hypothesis */
    if (version >= 7 && !(cur = pnmf_malloc_array((size_t)nb, sizeof(*cur) + 1))) return PNMF_ERR_NOMEM;
    if (median && !(pcur = pnmf_malloc_array((size_t)nb, sizeof(*pcur) + 1))) {
        pnmf_free(cur);
        return PNMF_ERR_NOMEM;
    }
    RcVecCtx gc; /* format 7: the frames' global vectors */
    rc_vec_ctx_init(&gc);
    RcProb wc[PNMF_RES_WARP_N]; /* window flags bit 23: whether each warp parameter changed */
    rc_probs_init(wc, PNMF_RES_WARP_N);
    rs->warp = warp;
    for (int j = 0; j < m; j++) {
        PnmfVecState st;
        pnmf_vec_init(&st);
        st.med = median; /* window flags bit 15 */
        uint64_t bk = 0;
        if (cur && (j || continues)) {
            int dg = 0;
            for (int c = 0; c < 2; c++) {
                const int32_t d = rc_decode_mvd(&rd, &gc, c, 1, c && !dg);
                if (d < -2 * PNMF_RES_MAX_MV || d > 2 * PNMF_RES_MAX_MV) goto bad_mv;
                const int g = (j ? rs->gmv[2 * j - 2 + c] : 0) + d;
                if (g < -PNMF_RES_MAX_MV || g > PNMF_RES_MAX_MV) goto bad_mv;
                rs->gmv[2 * j + c] = (int16_t)g, dg = d;
            }
            for (int i = 0; warp && i < PNMF_RES_WARP_N; i++) { /* the warp, from the frame before's */
                int32_t *w = rs->gw + (size_t)PNMF_RES_WARP_N * j;
                const int32_t d = rc_decode_warp(&rd, &wc[i]);
                const int64_t g = (int64_t)(j ? w[i - PNMF_RES_WARP_N] : 0) + d;
                const int lim = i % 3 ? PNMF_RES_WARP_MAX_S : PNMF_RES_WARP_MAX_O;
                if (d == INT32_MIN || g < -lim || g > lim) {
                    pnmf_free(cur), pnmf_free(pcur);
                    pnmf_set_err(err, errlen, "frame %d: warp out of range", j);
                    return PNMF_ERR_CORRUPT;
                }
                w[i] = (int32_t)g;
            }
        }
        for (size_t q = rs->mvstart[j]; q < rs->mvstart[j + 1]; q++) {
            if (cur) { /* the block of vector q */
                for (; (rs->modes[(uint64_t)j * nb + bk] & 7) != PNMF_RES_SHIFTED; bk++)
                    cur[bk][2] = -1, ((uint8_t *)(cur + nb))[bk] = 0;
                vc.lsh = bk % (uint64_t)rs->bx && (rs->modes[(uint64_t)j * nb + bk - 1] & 7) == PNMF_RES_SHIFTED;
                if (median) {
                    pnmf_vec_nb(&st, (const int16_t (*)[3])cur, NULL, rs->bx, (size_t)bk);
                    st.col = j ? pcur[bk] : NULL;
                }
                RcVecCand k;
                pnmf_vec_cands(&st, bk >= (uint64_t)rs->bx ? cur[bk - rs->bx] : NULL, &k);
                const int idx = rc_decode_merge(&rd, &vc, &k, st.lm);
                if (idx >= 0) { /* a vector of this frame's, checked already */
                    const int t = k.c[idx][2];
                    rs->mvref[q] = (uint8_t)t;
                    rs->mv[2 * q] = k.c[idx][0], rs->mv[2 * q + 1] = k.c[idx][1];
                    note_reach(rs, t, j);
                    pnmf_vec_push(&st, k.c[idx][0], k.c[idx][1], t, 1);
                    memcpy(cur[bk], k.c[idx], sizeof(*cur));
                    if (bi && (sr = read_second(&rd, &bc, rs, q, (uint8_t *)(cur + nb), (size_t)bk, j, continues, maxv)) < 0)
                        goto bad_second;
                    bk++;
                    continue;
                }
            }
            const int lastref = st.lastref, z0 = st.z0;
            int (*last)[2] = st.last;
            if (coded) {
                v = (uint64_t)rc_decode_ref(&rd, &vc, lastref);
            } else if (get_u(r, &v) < 0) {
                goto truncated;
            }
            /* D_{j-1-t}: inside a key window only frames of the window */
            if (v >= PNMF_RES_REFS || (!continues && (int64_t)v >= j)) {
                pnmf_set_err(err, errlen, "frame %d: residual reference %llu not available", j,
                             (unsigned long long)v);
                pnmf_free(cur), pnmf_free(pcur);
                return PNMF_ERR_CORRUPT;
            }
            const int t = (int)v;
            rs->mvref[q] = (uint8_t)t;
            note_reach(rs, t, j);
            int diff[2] = { 0, 0 }, pr[2] = { last[t][0], last[t][1] };
            if (cur) pnmf_vec_pred(&st, t, pr); /* window flags bit 15: from the neighbours */
            for (int c = 0; c < 2; c++) {
                if (coded) {
                    const int32_t dv = rc_decode_mvd(&rd, &vc, c, z0, c && !diff[0]);
                    if (dv < -2 * maxv || dv > 2 * maxv) goto bad_mv;
                    v = zigzag(dv);
                } else if (get_u(r, &v) < 0) {
                    goto truncated;
                }
                if ((v >> 1) > 2 * (uint64_t)maxv) goto bad_mv;
                diff[c] = (int)unzigzag(v);
                const int64_t d = diff[c] + pr[c];
                if (d < -maxv || d > maxv) goto bad_mv;
                rs->mv[2 * q + c] = (int16_t)d;
            }
            pnmf_vec_push(&st, rs->mv[2 * q], rs->mv[2 * q + 1], t, 0);
            if (cur) cur[bk][0] = rs->mv[2 * q], cur[bk][1] = rs->mv[2 * q + 1], cur[bk][2] = (int16_t)t;
            if (bi && (sr = read_second(&rd, &bc, rs, q, (uint8_t *)(cur + nb), (size_t)bk, j, continues, maxv)) < 0)
                goto bad_second;
            if (cur) bk++;
        }
        if (pcur) { /* window flags bit 15: the frame's vectors become the frame before's */
            for (; bk < nb; bk++) cur[bk][2] = -1;
            int16_t (*t)[3] = pcur;
            pcur = cur, cur = t;
        }
    }
    pnmf_free(cur), pnmf_free(pcur);
    cur = pcur = NULL;
    if (coded && !rc_dec_exact(&rd, stream)) goto bad_stream;
    rs->lev = pnmf_keep_take_array(keep, total ? (size_t)total : 1, sizeof(int16_t));
    if (!rs->lev) return PNMF_ERR_NOMEM;
    rs->nlev = rs->cap = (size_t)total;
    /* pixel levels: beyond one that spans 0..255 from any prediction is
     * never needed; transform levels: PNMF_RES_MAX_COEF keeps the inverse
     * transform within 32 bits */
    uint64_t min_step = step < key_step ? step : key_step;
    if (casc && casc_step < min_step) min_step = casc_step;
    const int64_t max_pixel = (255 * 16) / (int64_t)min_step + 1;
    rs->rc_levels = rclev;
    /* frames before jv have varints (item 8), the others the levels stream */
    const int jv = rclev == 2 ? 1 : rclev ? 0 : m;
    if (ctxlev) {
        rs->ctx_levels = 1;
        rs->lx = pnmf_lx_new(r->end, (size_t)ctx_len, jv, m, rows, cols, version, ctxlev == 2, (int)max_pixel);
        if (!rs->lx) return PNMF_ERR_NOMEM;
    }
    if (rclev) {
        const uint8_t *lstream = r->end + ctx_len;
        RcDec ld;
        rc_dec_init(&ld, lstream, (size_t)lev_len, version);
        RcLevCtx lc;
        const int bad = pnmf_residual_levels_read(&ld, &lc, rs, jv, (int)max_pixel);
        if (bad == -1) {
            pnmf_set_err(err, errlen, "residual level out of range");
            return PNMF_ERR_CORRUPT;
        }
        if (bad == -3) {
            pnmf_set_err(err, errlen, "residual intra direction out of range");
            return PNMF_ERR_CORRUPT;
        }
        if (bad) goto bad_stream; /* read past its end: stopped there */
        if (!rc_dec_exact(&ld, lstream)) goto bad_stream;
    }
    uint64_t q = 0;
    for (int j = 0; j < jv; j++)
        for (uint64_t b = 0; b < nb; b++) {
            const uint8_t mode = rs->modes[(uint64_t)j * nb + b];
            if (!(mode & PNMF_RES_CODED)) continue;
            int y0, y1, x0, x1;
            pnmf_residual_block(rs->bx, rows, cols, (size_t)b, &y0, &y1, &x0, &x1);
            const int h = y1 - y0, w = x1 - x0;
            const int64_t max_l = mode & PNMF_RES_TRANSFORM ? PNMF_RES_MAX_COEF : max_pixel;
            int t = 0;
            if (r->end - r->p >= h * w) {
                /* most levels are one byte: a run of those in a tight loop,
                 * the rest (from the first longer one) by get_u() */
                const uint8_t *p = r->p;
                for (; t < h * w && p[t] < 0x80; t++) {
                    const int l = (p[t] >> 1) ^ -(p[t] & 1); /* unzigzag */
                    if (l < -max_l || l > max_l) {
                        pnmf_set_err(err, errlen, "residual level out of range");
                        return PNMF_ERR_CORRUPT;
                    }
                    rs->lev[q + (uint64_t)t] = (int16_t)l;
                }
                r->p += t, q += (uint64_t)t;
            }
            for (; t < h * w; t++, q++) {
                if (get_u(r, &v) < 0) goto truncated;
                const int64_t l = (v >> 1) > (uint64_t)max_l ? max_l + 1 : unzigzag(v);
                if (l < -max_l || l > max_l) {
                    pnmf_set_err(err, errlen, "residual level out of range");
                    return PNMF_ERR_CORRUPT;
                }
                rs->lev[q] = (int16_t)l;
            }
        }
    return 0;
bad_second:
    if (sr == -1) {
        pnmf_free(cur), pnmf_free(pcur);
        pnmf_set_err(err, errlen, "residual reference not available (second hypothesis)");
        return PNMF_ERR_CORRUPT;
    }
bad_mv:
    pnmf_free(cur), pnmf_free(pcur);
    pnmf_set_err(err, errlen, "residual vector out of range (at most %d)", maxv);
    return PNMF_ERR_CORRUPT;
truncated:
    pnmf_free(cur), pnmf_free(pcur);
    pnmf_set_err(err, errlen, "truncated window payload (residual layer)");
    return PNMF_ERR_CORRUPT;
bad_stream:
    pnmf_set_err(err, errlen, "residual layer: a range-coded stream does not end where its length says");
    return PNMF_ERR_CORRUPT;
}

#define FAIL(...) do { pnmf_set_err(err, errlen, __VA_ARGS__); ret = PNMF_ERR_CORRUPT; goto fail; } while (0)

/* The new poses' context-coded masks: the stream's length, the stream,
 * then each pose made from its mask (pose i's box and reference are read
 * into L->pose[i], its mask zeroed). */
static int read_masks(Rd *r, int version, PnmfSpriteLayer *L, int np, char *err, size_t errlen)
{
    uint64_t len;
    int ret = PNMF_ERR_NOMEM;
    if (get_u(r, &len) < 0 || len > (uint64_t)(r->end - r->p)) {
        pnmf_set_err(err, errlen, "truncated sprite layer");
        return PNMF_ERR_CORRUPT;
    }
    uint8_t **masks = pnmf_malloc_array((size_t)np, sizeof(*masks));
    int *a = pnmf_malloc_array((size_t)np * 5, sizeof(int));
    if (!masks || !a) goto end;
    for (int i = 0; i < np; i++) {
        const PnmfSpritePose *ps = &L->pose[i];
        masks[i] = ps->mask, a[i] = ps->w, a[np + i] = ps->h, a[2 * np + i] = ps->mref;
        a[3 * np + i] = ps->mdy, a[4 * np + i] = ps->mdx;
    }
    if (pnmf_sprite_masks_read(r->p, (size_t)len, version, np, masks, a, a + np, a + 2 * np, a + 3 * np, a + 4 * np) < 0) {
        pnmf_set_err(err, errlen, "the sprites' mask stream is not exactly its %llu bytes", (unsigned long long)len);
        ret = PNMF_ERR_CORRUPT;
        goto end;
    }
    r->p += len;
    for (int i = 0; i < np; i++) {
        PnmfSpritePose *ps = &L->pose[i];
        const PnmfSpritePose keep = *ps;
        size_t npix = 0;
        for (size_t q = 0; q < (size_t)keep.w * keep.h; q++) npix += keep.mask[q];
        if (!npix) {
            pnmf_set_err(err, errlen, "sprite %d has no opaque pixel", i);
            ret = PNMF_ERR_CORRUPT;
            goto end;
        }
        memset(ps, 0, sizeof(*ps));
        ret = pnmf_sprite_pose_make_unhashed(ps, keep.w, keep.h, keep.mask, keep.mask);
        ps->src = keep.src, ps->sy = keep.sy, ps->sx = keep.sx;
        ps->mref = keep.mref, ps->mdy = keep.mdy, ps->mdx = keep.mdx;
        pnmf_free(keep.mask);
        if (ret < 0) goto end;
    }
    ret = 0;
end:
    pnmf_free(masks);
    pnmf_free(a);
    return ret;
}

/* The sprite layer (docs/format.md, "Sprite layer"): the new poses, then
 * each frame's placements. What needs the dictionary (pose ids, a
 * placement's reach into the frame, the painting's work) is checked by
 * pnmf_sprite_dict_commit(). */
static int read_sprites(Rd *r, int version, int m, int rows, int cols, int ctxmasks, int ctxplaces, PnmfSpriteLayer *L,
                        char *err, size_t errlen)
{
    uint64_t v, h, w;
    int ret = 0;
    uint8_t *mask = NULL;
    L->present = 1, L->m = m, L->ctxmasks = ctxmasks, L->ctxplaces = ctxplaces;
    if (get_u(r, &v) < 0) goto truncated;
    /* a pose takes 6 bytes at least: its frame, box and a mask byte (or its
     * mask reference, with context-coded masks) */
    if (v > PNMF_SPRITE_MAX_POSES || 6 * v > (uint64_t)(r->end - r->p)) {
        pnmf_set_err(err, errlen, "%llu new sprites, over %d or past the payload", (unsigned long long)v,
                     PNMF_SPRITE_MAX_POSES);
        return PNMF_ERR_CORRUPT;
    }
    L->pose = pnmf_calloc(v ? (size_t)v : 1, sizeof(PnmfSpritePose));
    L->first = pnmf_calloc((size_t)m + 1, sizeof(int));
    if (!L->pose || !L->first) return PNMF_ERR_NOMEM;
    const int np = (int)v;
    uint64_t pixels = 0;
    for (int i = 0; i < np; i++) {
        uint64_t src, sy, sx;
        if (get_u(r, &src) < 0 || get_u(r, &sy) < 0 || get_u(r, &sx) < 0 || get_u(r, &h) < 0 || get_u(r, &w) < 0)
            goto truncated;
        if (src >= (uint64_t)m || h < 1 || w < 1 || h > (uint64_t)rows || w > (uint64_t)cols ||
            sy > (uint64_t)rows - h || sx > (uint64_t)cols - w) {
            pnmf_set_err(err, errlen, "sprite %d: a %llux%llu box at (%llu, %llu) of frame %llu, not inside the "
                         "%dx%d frame or the window", i, (unsigned long long)w, (unsigned long long)h,
                         (unsigned long long)sx, (unsigned long long)sy, (unsigned long long)src, cols, rows);
            return PNMF_ERR_CORRUPT;
        }
        pixels += h * w;
        const size_t n = (size_t)(h * w), mbytes = (n + 7) / 8;
        if (pixels > PNMF_SPRITE_MAX_PIXELS) {
            pnmf_set_err(err, errlen, "new sprites of %llu pixels, over %d", (unsigned long long)pixels,
                         PNMF_SPRITE_MAX_PIXELS);
            return PNMF_ERR_CORRUPT;
        }
        if (ctxmasks) {
            /* the reference, then the masks together after the last pose */
            uint64_t ref, dy = 0, dx = 0;
            if (get_u(r, &ref) < 0 || (ref && (get_u(r, &dy) < 0 || get_u(r, &dx) < 0))) goto truncated;
            const int64_t ydy = unzigzag(dy), xdx = unzigzag(dx);
            if (ref > (uint64_t)i || ydy < -(1 << 20) || ydy > (1 << 20) || xdx < -(1 << 20) || xdx > (1 << 20)) {
                pnmf_set_err(err, errlen, "sprite %d: its mask is read against sprite %lld at (%lld, %lld), not an "
                             "earlier new one", i, (long long)i - (long long)ref, (long long)ydy, (long long)xdx);
                return PNMF_ERR_CORRUPT;
            }
            L->pose[i].w = (int)w, L->pose[i].h = (int)h, L->pose[i].mref = (int)ref;
            L->pose[i].mdy = (int)ydy, L->pose[i].mdx = (int)xdx;
            L->pose[i].src = (int)src, L->pose[i].sy = (int)sy, L->pose[i].sx = (int)sx;
            if (!(L->pose[i].mask = pnmf_calloc(n, 1))) return PNMF_ERR_NOMEM;
            L->npose = i + 1;
            continue;
        }
        if (mbytes > (size_t)(r->end - r->p)) goto truncated;
        mask = pnmf_calloc(n, 1);
        if (!mask) return PNMF_ERR_NOMEM;
        size_t npix = 0;
        for (size_t q = 0; q < n; q++) npix += (mask[q] = (r->p[q >> 3] >> (q & 7)) & 1);
        r->p += mbytes;
        if (!npix) {
            pnmf_set_err(err, errlen, "sprite %d has no opaque pixel", i);
            ret = PNMF_ERR_CORRUPT;
            goto end;
        }
        /* the pixels come from the decoded frame (pnmf_sprite_cut()) */
        ret = pnmf_sprite_pose_make_unhashed(&L->pose[i], (int)w, (int)h, mask, mask);
        pnmf_free(mask);
        mask = NULL;
        if (ret < 0) return ret;
        L->pose[i].src = (int)src, L->pose[i].sy = (int)sy, L->pose[i].sx = (int)sx;
        L->npose = i + 1;
    }
    if (ctxmasks && np > 0 && (ret = read_masks(r, version, L, np, err, errlen)) < 0) return ret;
    if (ctxplaces) { /* the placements' stream (docs/format.md, "Context-coded placements") */
        if (get_u(r, &v) < 0 || v > (uint64_t)(r->end - r->p)) goto truncated;
        ret = pnmf_sprite_places_read(r->p, (size_t)v, version, L, rows, cols);
        r->p += v;
        switch (ret) {
        case -1:
            pnmf_set_err(err, errlen, "the sprites' placement stream is not exactly its %llu bytes", (unsigned long long)v);
            return PNMF_ERR_CORRUPT;
        case -2:
            pnmf_set_err(err, errlen, "a frame has sprites over %d", PNMF_SPRITE_MAX_PLACES);
            return PNMF_ERR_CORRUPT;
        case -3:
            pnmf_set_err(err, errlen, "a sprite refers to one the frame before does not have");
            return PNMF_ERR_CORRUPT;
        case -4:
            pnmf_set_err(err, errlen, "a sprite placement out of range");
            return PNMF_ERR_CORRUPT;
        default:
            return ret;
        }
    }
    /* placements: a frame's count, then each as new (0, pose, y, x) or as
     * 1 + (the reference's distance from the expected one, zigzag) * 2 +
     * moved, then when moved the differences from the reference */
    int cap = 0, n = 0;
    for (int j = 0; j < m; j++) {
        L->first[j] = n;
        if (get_u(r, &v) < 0) goto truncated;
        if (v > PNMF_SPRITE_MAX_PLACES || v > (uint64_t)(r->end - r->p)) {
            pnmf_set_err(err, errlen, "frame %d has %llu sprites, over %d or past the payload", j,
                         (unsigned long long)v, PNMF_SPRITE_MAX_PLACES);
            return PNMF_ERR_CORRUPT;
        }
        if (n + (int)v > cap) {
            cap = 2 * (n + (int)v) + 16;
            PnmfSpritePlace *t = pnmf_realloc(L->place, (size_t)cap * sizeof(*t));
            if (!t) return PNMF_ERR_NOMEM;
            L->place = t;
        }
        const int prev0 = j ? L->first[j - 1] : 0, nprev = j ? L->first[j] - L->first[j - 1] : 0;
        int next = 0; /* the expected reference */
        for (int t = 0; t < (int)v; t++) {
            uint64_t code, a = 0, b = 0, c = 0;
            if (get_u(r, &code) < 0) goto truncated;
            const int moved = code == 0 || (code - 1) & 1;
            if (moved && (get_u(r, &a) < 0 || get_u(r, &b) < 0 || get_u(r, &c) < 0)) goto truncated;
            /* every value within 2^20 keeps the sums below in range */
            const int64_t rd = code ? unzigzag((code - 1) >> 1) : 0;
            const int64_t da = code ? unzigzag(a) : (int64_t)a, db = unzigzag(b), dc = unzigzag(c);
            if (rd < -(1 << 20) || rd > (1 << 20) || da < -(1 << 20) || da > (1 << 20) || db < -(1 << 20) ||
                db > (1 << 20) || dc < -(1 << 20) || dc > (1 << 20)) {
                pnmf_set_err(err, errlen, "frame %d: sprite %d out of range", j, t);
                return PNMF_ERR_CORRUPT;
            }
            PnmfSpritePlace *pl = &L->place[n++];
            if (code) {
                const int64_t ref = next + rd;
                if (ref < 0 || ref >= nprev) {
                    pnmf_set_err(err, errlen, "frame %d: sprite %d refers to one the frame before does not have", j, t);
                    return PNMF_ERR_CORRUPT;
                }
                const PnmfSpritePlace *o = &L->place[prev0 + ref];
                pl->pose = o->pose + (int)da, pl->y = o->y + (int)db, pl->x = o->x + (int)dc;
                next = (int)ref + 1;
            } else {
                pl->pose = (int)da, pl->y = (int)db, pl->x = (int)dc;
            }
            if (pl->pose < 0 || pl->pose >= PNMF_SPRITE_MAX_POSES || pl->y <= -rows - (1 << 20) ||
                pl->y >= rows || pl->x >= cols || pl->x <= -cols - (1 << 20)) {
                pnmf_set_err(err, errlen, "frame %d: sprite %d out of range", j, t);
                return PNMF_ERR_CORRUPT;
            }
        }
    }
    L->first[m] = n;
    return 0;
truncated:
    pnmf_set_err(err, errlen, "truncated sprite layer");
    ret = PNMF_ERR_CORRUPT;
end:
    pnmf_free(mask);
    return ret;
}

int pnmf_model_read(const uint8_t *buf, size_t size, int rows, int cols, int vis_rows,
                    int vis_cols, int m, int max_k, int w_step, int r_step,
                    PnmfWindowModel *md, char *err, size_t errlen)
{
    return pnmf_model_read_version(PNMF_PAYLOAD_VERSION, buf, size, rows, cols, vis_rows, vis_cols, m, max_k,
                                   w_step, r_step, md, err, errlen);
}

int pnmf_model_read_version(int version, const uint8_t *buf, size_t size, int rows, int cols, int vis_rows,
                            int vis_cols, int m, int max_k, int w_step, int r_step,
                            PnmfWindowModel *md, char *err, size_t errlen)
{
    return pnmf_model_read_carry(version, buf, size, rows, cols, vis_rows, vis_cols, m, max_k, w_step, r_step,
                                 NULL, md, err, errlen);
}

int pnmf_model_has_components(const PnmfWindowModel *md)
{
    for (int i = 0; i < md->k; i++)
        if (md->comp[i].bh) return 1;
    return 0;
}

int pnmf_model_copy_components(PnmfWindowModel *dst, const PnmfWindowModel *src)
{
    for (int i = 0; i < src->k; i++) {
        const PnmfComp *c = &src->comp[i];
        dst->comp[i].bh = c->bh, dst->comp[i].bw = c->bw;
        if (!c->bh) continue;
        const size_t n = (size_t)c->bh * c->bw;
        if (!(dst->comp[i].lev = pnmf_malloc_array(n, sizeof(int16_t)))) return PNMF_ERR_NOMEM;
        memcpy(dst->comp[i].lev, c->lev, n * sizeof(int16_t));
    }
    return 0;
}

int pnmf_model_track(PnmfWindowModel *last, const PnmfWindowModel *md)
{
    if (!md->res.continues || md->res.step16 == 0) pnmf_model_free(last); /* a key window */
    if (md->carries || !pnmf_model_has_components(md)) return 0;
    pnmf_model_free(last);
    PNMF_CHECK(pnmf_model_alloc(last, md->rows, md->cols, md->vis_rows, md->vis_cols, 1, md->k, 0));
    int ret = pnmf_model_copy_components(last, md);
    if (ret < 0) pnmf_model_free(last);
    return ret;
}

int pnmf_model_read_carry(int version, const uint8_t *buf, size_t size, int rows, int cols, int vis_rows,
                          int vis_cols, int m, int max_k, int w_step, int r_step, const PnmfWindowModel *carry,
                          PnmfWindowModel *md, char *err, size_t errlen)
{
    return pnmf_model_read_keep(version, buf, size, rows, cols, vis_rows, vis_cols, m, max_k, w_step, r_step, carry,
                                NULL, md, err, errlen);
}

int pnmf_model_read_keep(int version, const uint8_t *buf, size_t size, int rows, int cols, int vis_rows,
                         int vis_cols, int m, int max_k, int w_step, int r_step, const PnmfWindowModel *carry,
                         PnmfKeep *keep, PnmfWindowModel *md, char *err, size_t errlen)
{
    Rd r = { buf, buf + size };
    uint64_t v;
    int ret = 0;
    memset(md, 0, sizeof(*md));
    if (w_step < 1 || r_step < 1) {
        pnmf_set_err(err, errlen, "bad quantizer steps");
        return PNMF_ERR_CORRUPT;
    }
    if (get_u(&r, &v) < 0) {
        pnmf_set_err(err, errlen, "truncated window payload");
        return PNMF_ERR_CORRUPT;
    }
    const uint64_t known = PNMF_FLAG_RESIDUAL | PNMF_FLAG_CONTINUES | (version >= 5 ? PNMF_FLAG_CARRIES : 0) |
                           (version >= 6 ? PNMF_FLAG_RCLEVELS | PNMF_FLAG_KEYVARINTS : 0) |
                           (version >= 8 ? PNMF_FLAG_SPRITES : 0) | (version >= 9 ? PNMF_FLAG_SUBPEL | PNMF_FLAG_DEBLOCK | PNMF_FLAG_TX8 : 0) |
                           (version >= 9 ? PNMF_FLAG_CTXLEVELS | PNMF_FLAG_INTRA | PNMF_FLAG_SPRMASKS | PNMF_FLAG_PALETTE : 0) |
                           (version >= 9 ? PNMF_FLAG_CASCADE | PNMF_FLAG_NBCTX : 0) | (version >= 10 ? PNMF_FLAG_MEDIAN : 0) |
                           (version >= 11 ? PNMF_FLAG_SPRPLACES : 0) | (version >= 12 ? PNMF_FLAG_BI : 0) |
                           (version >= 14 ? PNMF_FLAG_WEIGHTS : 0) | (version >= 15 ? PNMF_FLAG_ORDER : 0) |
                           (version >= 16 ? PNMF_FLAG_SHARP : 0) | (version >= 18 ? PNMF_FLAG_LTERM : 0) |
                           (version >= 19 ? PNMF_FLAG_PFILTER : 0) | (version >= 20 ? PNMF_FLAG_WARP : 0) |
                           (version >= 21 ? PNMF_FLAG_CTXLOSSY : 0);
    if (v & ~known) {
        pnmf_set_err(err, errlen, "window flags 0x%llx: unknown features", (unsigned long long)v);
        return PNMF_ERR_CORRUPT;
    }
    /* each feature bit needs another (docs/format.md, "Window payload"
     * item 1), checked in this order: the first broken rule is reported */
    static const struct { uint64_t bit, needs; const char *what; } rule[] = {
        { PNMF_FLAG_CONTINUES, PNMF_FLAG_RESIDUAL, "continues without a residual layer" },
        { PNMF_FLAG_RCLEVELS, PNMF_FLAG_RESIDUAL, "range-coded levels without a residual layer" },
        { PNMF_FLAG_KEYVARINTS, PNMF_FLAG_RCLEVELS, "frame 0's levels as varints without a levels stream" },
        { PNMF_FLAG_CTXLEVELS, PNMF_FLAG_RCLEVELS, "sample-context levels without a levels stream" },
        { PNMF_FLAG_CTXLOSSY, PNMF_FLAG_CTXLEVELS, "lossy sample-context levels without their stream" },
        { PNMF_FLAG_CARRIES, PNMF_FLAG_CONTINUES, "carries components into a key window" },
        { PNMF_FLAG_SPRITES, PNMF_FLAG_RESIDUAL, "a sprite layer without a residual layer" },
        { PNMF_FLAG_SUBPEL, PNMF_FLAG_RESIDUAL, "sub-pixel vectors without a residual layer" },
        { PNMF_FLAG_DEBLOCK, PNMF_FLAG_RESIDUAL, "deblocking without a residual layer" },
        { PNMF_FLAG_TX8, PNMF_FLAG_RCLEVELS, "8x8 transform without a levels stream" },
        { PNMF_FLAG_INTRA, PNMF_FLAG_RCLEVELS, "intra directions without a levels stream" },
        { PNMF_FLAG_PALETTE, PNMF_FLAG_RESIDUAL, "palette blocks without a residual layer" },
        { PNMF_FLAG_CASCADE, PNMF_FLAG_RESIDUAL, "a step cascade without a residual layer" },
        { PNMF_FLAG_NBCTX, PNMF_FLAG_RESIDUAL, "neighbour contexts without a residual layer" },
        { PNMF_FLAG_MEDIAN, PNMF_FLAG_RESIDUAL, "median vectors without a residual layer" },
        { PNMF_FLAG_BI, PNMF_FLAG_RESIDUAL, "compound prediction without a residual layer" },
        { PNMF_FLAG_WEIGHTS, PNMF_FLAG_RESIDUAL, "weighted prediction without a residual layer" },
        { PNMF_FLAG_ORDER, PNMF_FLAG_CASCADE, "a coding order without a step cascade" },
        { PNMF_FLAG_SHARP, PNMF_FLAG_SUBPEL, "sharp interpolation without sub-pixel vectors" },
        { PNMF_FLAG_WARP, PNMF_FLAG_SUBPEL, "a warp without sub-pixel vectors" },
        { PNMF_FLAG_LTERM, PNMF_FLAG_RESIDUAL, "a long-term reference without a residual layer" },
        { PNMF_FLAG_PFILTER, PNMF_FLAG_RESIDUAL, "a restoration filter without a residual layer" },
        { PNMF_FLAG_SPRMASKS, PNMF_FLAG_SPRITES, "context-coded masks without a sprite layer" },
        { PNMF_FLAG_SPRPLACES, PNMF_FLAG_SPRITES, "context-coded placements without a sprite layer" },
    };
    for (size_t i = 0; i < sizeof(rule) / sizeof(rule[0]); i++)
        if ((v & rule[i].bit) && !(v & rule[i].needs)) {
            pnmf_set_err(err, errlen, "window flags 0x%llx: %s", (unsigned long long)v, rule[i].what);
            return PNMF_ERR_CORRUPT;
        }
    const int subpel = !!(v & PNMF_FLAG_SUBPEL), deblock = !!(v & PNMF_FLAG_DEBLOCK), sharp = !!(v & PNMF_FLAG_SHARP);
    const int lterm = !!(v & PNMF_FLAG_LTERM), warp = !!(v & PNMF_FLAG_WARP);
    const int tx8 = !!(v & PNMF_FLAG_TX8), idir = !!(v & PNMF_FLAG_INTRA), palette = !!(v & PNMF_FLAG_PALETTE);
    const int has_residual = (int)(v & PNMF_FLAG_RESIDUAL), continues = !!(v & PNMF_FLAG_CONTINUES);
    const int sprites = !!(v & PNMF_FLAG_SPRITES);
    const int ctxmasks = !!(v & PNMF_FLAG_SPRMASKS);
    const int ctxplaces = !!(v & PNMF_FLAG_SPRPLACES);
    const int carries = !!(v & PNMF_FLAG_CARRIES);
    const int rclev = v & PNMF_FLAG_KEYVARINTS ? 2 : !!(v & PNMF_FLAG_RCLEVELS);
    /* 2: window flags bit 24, the stream at any step */
    const int ctxlev = v & PNMF_FLAG_CTXLOSSY ? 2 : !!(v & PNMF_FLAG_CTXLEVELS);
    const int casc = !!(v & PNMF_FLAG_CASCADE);
    const int order = !!(v & PNMF_FLAG_ORDER);
    const int nbctx = !!(v & PNMF_FLAG_NBCTX);
    const int median = !!(v & PNMF_FLAG_MEDIAN);
    const int bi = !!(v & PNMF_FLAG_BI);
    const int weights = !!(v & PNMF_FLAG_WEIGHTS);
    const int pfilter = !!(v & PNMF_FLAG_PFILTER);
    if (get_u(&r, &v) < 0) {
        pnmf_set_err(err, errlen, "truncated window payload");
        return PNMF_ERR_CORRUPT;
    }
    if (v < 1 || v > (uint64_t)max_k) {
        pnmf_set_err(err, errlen, "window has %llu components, the header allows 1..%d",
                     (unsigned long long)v, max_k);
        return PNMF_ERR_CORRUPT;
    }
    const int k = (int)v;
    if (carries && (!carry || !pnmf_model_has_components(carry))) {
        pnmf_set_err(err, errlen, "the window carries components over, but no window since the key window has any");
        return PNMF_ERR_CORRUPT;
    }
    if (carries && (carry->k != k || carry->rows != rows || carry->cols != cols)) {
        pnmf_set_err(err, errlen, "the window carries %d components over, the last model has %d", k, carry->k);
        return PNMF_ERR_CORRUPT;
    }
    /* Every value takes a byte at least: 2 block sizes a component and an
     * occurrence count a (frame, component). Checked before anything is
     * allocated. */
    if ((uint64_t)k * ((carries ? 0 : 2) + (uint64_t)m) > (uint64_t)(r.end - r.p)) {
        pnmf_set_err(err, errlen, "truncated window payload");
        return PNMF_ERR_CORRUPT;
    }
    PNMF_CHECK(pnmf_model_alloc(md, rows, cols, vis_rows, vis_cols, m, k, 0));
    md->keep = keep;
    md->carries = carries;
    if (carries && (ret = pnmf_model_copy_components(md, carry)) < 0) goto fail;
    const int64_t max_level = PNMF_MAX_LEVEL_VALUE / w_step;
    const uint64_t max_coef = PNMF_MAX_COEF_VALUE / r_step;
    uint64_t levels = 0; /* all blocks' levels, at most size: no overflow */
    for (int i = 0; i < k && !carries; i++) {
        uint64_t bh, bw;
        if (get_u(&r, &bh) < 0 || get_u(&r, &bw) < 0) FAIL("truncated window payload");
        if (bh > (uint64_t)rows || bw > (uint64_t)cols || (!bh) != (!bw))
            FAIL("component %d is %llux%llu, larger than the %dx%d torus", i,
                 (unsigned long long)bh, (unsigned long long)bw, rows, cols);
        /* bh, bw <= 2^28; the levels of all blocks and the counts that
         * follow them need at least a byte each */
        levels += bh * bw;
        if (levels + (uint64_t)k * m > (uint64_t)(r.end - r.p)) FAIL("truncated window payload");
        md->comp[i].bh = (int)bh, md->comp[i].bw = (int)bw;
    }
    for (int i = 0; i < k && !carries; i++) {
        PnmfComp *c = &md->comp[i];
        if (!c->bh) continue;
        c->lev = pnmf_malloc_array((size_t)c->bh * c->bw, sizeof(int16_t));
        if (!c->lev) {
            ret = PNMF_ERR_NOMEM;
            goto fail;
        }
        for (int y = 0; y < c->bh; y++)
            for (int x = 0; x < c->bw; x++) {
                if (get_u(&r, &v) < 0) FAIL("truncated window payload");
                /* |difference| > 2 max_level can only land out of range, and
                 * checking first keeps the sum below from overflowing */
                if ((v >> 1) > 2 * (uint64_t)max_level) FAIL("component %d: level out of range", i);
                const int64_t l = unzigzag(v) + pnmf_model_level_pred(c->lev, c->bw, y, x);
                if (l < -max_level || l > max_level) FAIL("component %d: level out of range", i);
                c->lev[y * c->bw + x] = (int16_t)l;
            }
    }
    /* occurrence counts, component-major; the entries they announce take
     * three bytes each at least (coefficient, row and column shift) */
    uint8_t *cnt = pnmf_malloc_array((size_t)k * m, 1);
    if (!cnt) {
        ret = PNMF_ERR_NOMEM;
        goto fail;
    }
    uint64_t total = 0;
    for (int i = 0; i < k; i++)
        for (int j = 0; j < m; j++) {
            if (get_u(&r, &v) < 0) {
                pnmf_free(cnt);
                FAIL("truncated window payload");
            }
            if (v > PNMF_MAX_OCCURRENCES || (v && !md->comp[i].bh)) {
                pnmf_free(cnt);
                if (v && !md->comp[i].bh) FAIL("entry of the empty component %d", i);
                FAIL("component %d appears %llu times in frame %d, over %d", i,
                     (unsigned long long)v, j, PNMF_MAX_OCCURRENCES);
            }
            cnt[(size_t)i * m + j] = (uint8_t)v;
            total += v;
        }
    if (3 * total > (uint64_t)(r.end - r.p)) {
        pnmf_free(cnt);
        FAIL("truncated window payload");
    }
    /* frame j's entries, sorted by component: first[] from the counts */
    pnmf_free(md->ent);
    md->ent = pnmf_malloc_array(total ? (size_t)total : 1, sizeof(PnmfEntry));
    if (!md->ent) {
        pnmf_free(cnt);
        ret = PNMF_ERR_NOMEM;
        goto fail;
    }
    md->cap = (int)total;
    md->first[0] = 0;
    for (int j = 0; j < m; j++) {
        int n = md->first[j];
        for (int i = 0; i < k; i++)
            for (int t = 0; t < cnt[(size_t)i * m + j]; t++) md->ent[n++].i = i;
        md->first[j + 1] = n;
    }
    pnmf_free(cnt);
    /* The reconstruction's cost, known now, is bounded before any of it is
     * spent: a few bytes of zstd must not buy hours of decoding. */
    const uint64_t work = pnmf_model_work(md), max_work = pnmf_model_max_work(rows, cols, m);
    if (work > max_work) {
        pnmf_set_err(err, errlen, "decode work %llu over the limit %llu for %d frames",
                     (unsigned long long)work, (unsigned long long)max_work, m);
        ret = PNMF_ERR_LIMIT;
        goto fail;
    }
    for (int i = 0; i < k; i++)
        for (int j = 0; j < m; j++) {
            int e0, e1;
            pnmf_model_occurrences(md, j, i, &e0, &e1);
            for (int e = e0; e < e1; e++) {
                if (get_u(&r, &v) < 0) FAIL("truncated window payload");
                if (v >= max_coef) FAIL("coefficient out of range");
                md->ent[e].c = (uint32_t)v + 1;
            }
        }
    for (int axis = 0; axis < 2; axis++) {
        const int sz = axis == 0 ? rows : cols;
        for (int i = 0; i < k; i++) {
            PnmfShiftSlots sl;
            memset(&sl, 0, sizeof(sl));
            for (int j = 0; j < m; j++) {
                int e0, e1, prev = 0;
                pnmf_model_occurrences(md, j, i, &e0, &e1);
                for (int e = e0; e < e1; e++) {
                    const int t = e - e0;
                    if (get_u(&r, &v) < 0) FAIL("truncated window payload");
                    const int64_t d = unzigzag(v);
                    if (d < -(sz / 2) || d >= sz - sz / 2) FAIL("shift out of range");
                    int s = pnmf_shift_predict(&sl, t, prev) + (int)d;
                    if (s < 0) s += sz;
                    if (s >= sz) s -= sz;
                    prev = s;
                    if (axis == 0) md->ent[e].p = s * cols;
                    else md->ent[e].p += s;
                }
                for (int e = e0; e < e1; e++) {
                    const int t = e - e0;
                    sl.v[t] = axis == 0 ? md->ent[e].p / cols : md->ent[e].p % cols;
                    sl.set[t] = 1;
                }
            }
        }
    }
    if (sprites) {
        if (md->first[m] > 0) FAIL("a window with a sprite layer has entries");
        const uint8_t *at = r.p;
        ret = read_sprites(&r, version, m, vis_rows, vis_cols, ctxmasks, ctxplaces, &md->spr, err, errlen);
        if (ret < 0) goto fail;
        md->spr.bytes = (size_t)(r.p - at);
    }
    if (has_residual) {
        ret = read_residual(&r, version, m, vis_rows, vis_cols, continues, rclev, ctxlev, subpel, tx8, idir, palette, casc, order, nbctx,
                            median, bi, weights, pfilter, warp, keep, &md->res, err, errlen);
        if (ret < 0) goto fail;
        md->res.deblock = deblock;
        md->res.sharp = sharp;
        md->res.lterm = lterm;
    }
    if (r.p != r.end) FAIL("%zu unexpected bytes after the window payload", (size_t)(r.end - r.p));
    return 0;
fail:
    pnmf_model_free(md);
    return ret;
}
