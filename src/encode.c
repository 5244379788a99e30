/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The encoder: buffer a window of frames, fit PermNMF, quantize, refit H
 * against the quantized components (closed loop: what the encoder measures
 * is what the decoder shows), serialize, and hand the payload to the
 * container. Holds one window at a time.
 */
#include <math.h>
#include <string.h>
#include <unistd.h>

#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
#include <emmintrin.h>
#endif

#include "codec.h"
#include "container.h"
#include "diamond.h"
#include "enc_internal.h"
#include "enc_order.h"
#include "enc_tf.h"
#include "internal.h"
#include "intra.h"
#include "lossless.h"
#include "log.h"
#include "quant.h"
#include "tuning.h"
#include "tx8.h"
#include "upsample.h"
#include "varint.h"

static int fail(PnmfEncoder *e, int ret, const char *what)
{
    if (!e->err[0]) snprintf(e->err, sizeof(e->err), "%s", what);
    e->failed = ret;
    return ret;
}

/* The encoder e (allocated, its settings and pending state set) made
 * ready for frames of width x height (pnmf_encoder_create()). */
static int encoder_init(PnmfEncoder **out, PnmfEncoder *e, const PnmfEncSettings *s, int width, int height,
                        int fps_num, int fps_den, const PnmfIO *io)
{
    e->s = *s;
    if (e->s.threads == 0) {
        long nc = sysconf(_SC_NPROCESSORS_ONLN);
        e->s.threads = nc < 1 ? 1 : nc > 64 ? 64 : (int)nc;
    }
    /* with s.half every step below works on the frames scaled down, as
     * the decoder decodes them (format 17) */
    e->in_width = width, e->in_height = height;
    if (s->half) width = pnmf_half_size(width), height = pnmf_half_size(height);
    e->width = width, e->height = height;
    e->nv = (size_t)width * height;
    e->rows = s->shift_model == PNMF_SHIFT_VECTOR ? 1 : height;
    e->cols = s->shift_model == PNMF_SHIFT_VECTOR ? width * height : width;
    e->vis_rows = e->rows, e->vis_cols = e->cols;
    if (s->shift_model == PNMF_SHIFT_CANVAS) {
        e->rows = pnmf_canvas_size(height, s->canvas_pad);
        e->cols = pnmf_canvas_size(width, s->canvas_pad);
        if ((uint64_t)e->rows * e->cols > PNMF_MAX_CANVAS) {
            snprintf(e->err, sizeof(e->err), "a %dx%d canvas is over the limit", e->cols, e->rows);
            e->failed = PNMF_ERR_LIMIT;
            *out = e;
            return PNMF_ERR_LIMIT;
        }
    }
    e->n = (size_t)e->rows * e->cols;
    e->model_q = enc_model_quality(s);
    pnmf_quant_steps(e->model_q, &e->w_step, &e->r_step);
    const size_t w = (size_t)s->window, k = (size_t)(s->components ? s->components : 1);
    /* the fit's buffers are on its torus; its frames in float (A) and the
     * fitter are made for each fit and freed after it (enc_model.c) */
    enc_fit_choose(e);
    const EncGeometry *fg = &e->geo[1];
    e->frames = pnmf_malloc_array(w * e->nv, 1);
    e->W = pnmf_malloc_array(k * fg->n, sizeof(float));
    e->Wq = pnmf_malloc_array(k * fg->n, sizeof(float));
    e->H = pnmf_malloc_array(w * k, sizeof(PnmfAtom));
    e->Wtry = pnmf_malloc_array(k * fg->n, sizeof(float));
    e->Hsave = pnmf_malloc_array(w * k, sizeof(PnmfAtom));
    e->rec = pnmf_malloc_array(e->nv, 1);
    e->seen = pnmf_malloc_array(fg->n, 1);
    e->lastP = pnmf_malloc_array(e->nv, 1);
    e->last_gray = pnmf_malloc_array(e->nv, 1);
    e->cut_gray = pnmf_malloc_array(e->nv, 1);
    e->lastB = pnmf_malloc_array(e->nv, 1);
    const size_t in_nv = (size_t)e->in_width * e->in_height;
    int refs_ok = !!e->lastB && (!s->half || ((e->half_in = pnmf_malloc_array(e->nv, 1)) &&
                                              (e->half_src = pnmf_malloc_array(w, in_nv)) &&
                                              (e->half_up = pnmf_malloc_array(in_nv, 1)) &&
                                              (e->half_tmp = pnmf_malloc_array((size_t)e->height * e->in_width,
                                                                               sizeof(int32_t)))));
    /* the second set where two codings can run at once, or the sprite
     * step keeps two codings under way, the third where it keeps three
     * (enc_sprite.c: at -q PNMF_PICK_FLOOR alone) */
    const int nrb = s->residual && s->sprites ? (s->quality == PNMF_PICK_FLOOR ? 3 : 2)
                    : s->residual && e->s.threads > 1 ? 2
                                                       : 1;
    for (int i = 0; i < nrb; i++) {
        ResBufs *b = &e->rb[i];
        b->acc = pnmf_malloc_array(e->nv, sizeof(int64_t));
        b->P = pnmf_malloc_array(e->nv, 1);
        b->Pp = pnmf_malloc_array(e->nv, 1);
        b->D = pnmf_malloc_array(e->nv, 1);
        b->B = pnmf_malloc_array(e->nv, 1);
        b->mark = pnmf_calloc(e->nv, 1);
        b->key0 = pnmf_malloc_array(e->nv, 1);
        refs_ok &= b->acc && b->P && b->Pp && b->D && b->B && b->mark && b->key0;
        for (int t = 0; t < PNMF_RES_REFS; t++) refs_ok &= !!(b->ref[t] = pnmf_malloc_array(e->nv, 1));
    }
    for (int t = 0; t < PNMF_RES_REFS; t++) refs_ok &= !!(e->lastRef[t] = pnmf_malloc_array(e->nv, 1));
    refs_ok &= !!(e->key0 = pnmf_malloc_array(e->nv, 1));
    int ret = PNMF_ERR_NOMEM;
    if (!e->frames || !e->W || !e->Wq || !e->Wtry || !e->H || !e->Hsave || !e->rec ||
        !e->seen || !e->lastP || !e->last_gray || !e->cut_gray || !refs_ok)
        goto error;
    PnmfHeader h = { 0 };
    h.writer_version = PNMF_FORMAT_VERSION;
    h.min_reader_version = enc_lossless_ctx(s) ? PNMF_MIN_READER_V9 : PNMF_MIN_READER_WRITTEN;
    h.width = (uint32_t)e->in_width, h.height = (uint32_t)e->in_height;
    h.half = (uint8_t)!!s->half;
    h.fps_num = (uint32_t)fps_num, h.fps_den = (uint32_t)fps_den;
    h.window = (uint16_t)s->window;
    h.components = (uint16_t)k;
    h.shift_model = (uint8_t)s->shift_model;
    h.quality = (uint8_t)s->quality;
    h.w_step = (uint16_t)e->w_step, h.r_step = (uint16_t)e->r_step;
    if (s->shift_model == PNMF_SHIFT_CANVAS)
        h.canvas_height = (uint32_t)e->rows, h.canvas_width = (uint32_t)e->cols;
    h.color_range = (uint8_t)s->color_range;
    h.color_primaries = (uint8_t)s->color_primaries, h.color_trc = (uint8_t)s->color_trc;
    h.colorspace = (uint8_t)s->colorspace;
    h.tb_num = (uint32_t)s->time_base_num, h.tb_den = (uint32_t)s->time_base_den;
    ret = pnmf_container_writer_open_io(&e->cw, io, &h, s->zstd_level, e->err, sizeof(e->err));
    if (ret < 0) goto error;
    if (h.tb_num && (ret = pnmf_container_writer_set_time_start(e->cw, (uint64_t)s->time_start)) < 0) goto error;
    *out = e;
    return 0;
error:
    /* kept, so the caller can read the reason; pnmf_enc_close() frees it */
    if (!e->err[0]) snprintf(e->err, sizeof(e->err), "%s", ret == PNMF_ERR_NOMEM ? "out of memory" : "cannot start the encoder");
    e->failed = ret;
    *out = e;
    return ret;
}

/* Seconds since *t, which becomes now: the stages' times in encode_window(). */
static double lap(double *t)
{
    const double now = enc_now(), d = now - *t;
    *t = now;
    return d;
}

/* The temporal filter of the window's first frame (enc_tf.h), in a lossy
 * coding with the residual layer, in a window with sub-pixel motion
 * (filmed or rendered footage, e->subpel; never a drawn, captured or
 * sprite window, whose motion is whole samples) whose first frame
 * measures noise against the frames after it (rendered frames measure
 * none): a key window's first frame is coded finer and the later frames
 * copy it, so its source is filtered with the PNMF_TF_FRAMES frames
 * after it; a continuing window's first frame, a refresh of the same
 * step, more lightly, with PNMF_TF_CONT_FRAMES. */
static int filter_first(PnmfEncoder *e, int m)
{
    const int frames = e->continues ? PNMF_TF_CONT_FRAMES : PNMF_TF_FRAMES;
    const int nnb = m - 1 < frames ? m - 1 : frames;
    e->tf_on = 0;
    if (!enc_picks(&e->s) || e->s.quality == 0 || nnb < 1 || !e->subpel) return 0;
    /* the vector model lays a frame out by columns: the same frame transposed */
    const int vec = e->s.shift_model == PNMF_SHIFT_VECTOR;
    const int rows = vec ? e->width : e->height, cols = vec ? e->height : e->width;
    /* the most any neighbour measures: a neighbour may repeat much of the
     * frame (a source coded with skipped blocks) */
    double noise = 0;
    const uint8_t *nb[PNMF_TF_FRAMES > PNMF_TF_CONT_FRAMES ? PNMF_TF_FRAMES : PNMF_TF_CONT_FRAMES];
    /* in a fade, each neighbour weighted to the frame's brightness first
     * (the residual layer's weights): unweighted, its change of brightness
     * would count as noise and be averaged into the frame */
    uint8_t *wnb = NULL;
    for (int k = 0; k < nnb; k++) {
        nb[k] = e->frames + (size_t)(k + 1) * e->nv;
        int16_t wo[2] = { PNMF_RES_WP_ONE, 0 };
        if (PNMF_WP_ENCODE) pnmf_enc_estimate_weights(e->frames, nb[k], e->nv, wo);
        if (wo[0] != PNMF_RES_WP_ONE || wo[1]) {
            if (!wnb && !(wnb = pnmf_malloc_array((size_t)nnb, e->nv))) return PNMF_ERR_NOMEM;
            pnmf_residual_weigh_frame(nb[k], e->nv, wo[0], wo[1], wnb + (size_t)k * e->nv);
            nb[k] = wnb + (size_t)k * e->nv;
        }
        const double v = pnmf_tf_noise(e->frames, nb[k], rows, cols);
        if (v > noise) noise = v;
    }
    pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: noise variance %.3f%s", e->windows, noise,
             noise < PNMF_TF_NOISE_MIN ? "" : ": first frame filtered");
    int ret = 0;
    if (noise >= PNMF_TF_NOISE_MIN) {
        /* the source kept: the window's error is the decoder's against it (pnmf_window_update_refs) */
        if (!e->tf_source && !(e->tf_source = pnmf_malloc_array(e->nv, 1))) ret = PNMF_ERR_NOMEM;
        if (ret >= 0) {
            memcpy(e->tf_source, e->frames, e->nv);
            e->tf_on = 1;
            /* aligned by the filter the window predicts with */
            ret = pnmf_tf_filter(e->frames, e->frames, nb, nnb, rows, cols, noise,
                                 e->continues ? PNMF_TF_CONT_DECAY : PNMF_TF_DECAY, e->sharp);
        }
    }
    pnmf_free(wnb);
    return ret;
}

/* The coding order (window flags bit 19, enc_order.h): a lossy window
 * with the residual layer whose frames follow a rigid pan, and whose
 * first frame does not look like a captured screen (its exact copies
 * carry a frame's quality on by themselves), is coded in groups of
 * PNMF_ORDER_GROUP, each group's last frame first; e->frames are put
 * in that order, which every later step of the window works in. */
static int order_window(PnmfEncoder *e, int m)
{
    e->order = 0;
    if (!PNMF_ORDER_ENCODE || !e->s.residual || e->s.quality == 0 || e->s.shift_model != PNMF_SHIFT_TORUS ||
        m <= 2 * PNMF_ORDER_GROUP || enc_screen_like(e) ||
        !pnmf_enc_order_pan(e->frames, m, e->nv, e->vis_rows, e->vis_cols))
        return 0;
    uint8_t *tmp = pnmf_malloc_array(e->nv, 1);
    if (!tmp) return PNMF_ERR_NOMEM;
    pnmf_enc_order_frames(e->frames, m, e->nv, PNMF_ORDER_GROUP, tmp);
    if (e->s.half) pnmf_enc_order_frames(e->half_src, m, (size_t)e->in_width * e->in_height, PNMF_ORDER_GROUP, e->half_up);
    pnmf_free(tmp);
    e->order = PNMF_ORDER_GROUP;
    pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: a pan: coded in groups of %d, the last first", e->windows,
             e->order);
    return 0;
}

/* The window's start: whether it continues the previous window (a key
 * window starts afresh: after a scene cut, every --keyint frames), whether
 * a window of its key period may follow it (more: frames may follow it,
 * not a cut, and the period has room), and the block weights its residual
 * layer's codings share; its first frame's source filtered (filter_first). */
static int start_window(PnmfEncoder *e, int m, int more)
{
    const int start = e->frame_count - m;
    e->continues = e->s.residual && e->windows > 0 && start - e->last_key < e->s.key_interval &&
                   start != e->last_cut;
    if (e->s.residual && !e->continues) e->last_key = start;
    e->more = more && e->s.residual && e->frame_count - e->last_key < e->s.key_interval;
    if (e->s.residual) PNMF_CHECK(pnmf_window_weights(e, m));
    /* after the weights, which decide e->subpel on the source; the
     * filtered frame is the source every later step weighs */
    PNMF_CHECK(filter_first(e, m));
    /* what the container's sizes (pnmf_window_bytes) and the window's chunk assume */
    pnmf_container_writer_set_continues(e->cw, e->continues);
    return 0;
}

/* Write: the window's codings (pnmf_window_codings) to the container,
 * which keeps the smallest chunk of them. */
static int write_window(PnmfEncoder *e, EncWindow *w)
{
    uint8_t *codings[PNMF_WINDOW_CODINGS] = { NULL };
    size_t sizes[PNMF_WINDOW_CODINGS] = { 0 };
    int ncodings = 0, chosen = 0, rc_from = 1;
    int ret = pnmf_window_codings(&w->md, codings, sizes, &ncodings, &rc_from);
    if (ret >= 0 && pnmf_log_on(&e->s.logger)) {
        char blocks[PNMF_MAX_COMPONENTS * 12 + 1];
        size_t len = 0;
        blocks[0] = 0;
        for (int i = 0; i < w->md.k && len < sizeof(blocks); i++)
            len += (size_t)snprintf(blocks + len, sizeof(blocks) - len, " %dx%d", w->md.comp[i].bh, w->md.comp[i].bw);
        pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: payload %zu bytes; blocks%s", e->windows, sizes[0], blocks);
    }
    /* sub-pixel vectors, the deblocking filter, 8x8 transform blocks,
     * intra directions, palette blocks, a step cascade, neighbour contexts
     * and context-coded masks need a v9 reader */
    const int tx8 = w->md.res.step16 && (pnmf_tx8_used(&w->md.res, 0, w->md.res.m) ||
                                         pnmf_intra_used(&w->md.res, 0, w->md.res.m)); /* or directions */
    /* the writer chooses bit 14 per coding, and the container may store
     * any of them: bit 14 in any coding's flags */
    int nbctx = 0, median = 0, places = 0, bi = 0, wp = 0;
    int lxq[PNMF_WINDOW_CODINGS] = { 0 }; /* bit 24, a v21 reader: raised for the coding stored alone */
    for (int a = 0; ret >= 0 && a < ncodings; a++) {
        uint64_t wfl = 0;
        Rd fr = { codings[a], codings[a] + sizes[a] };
        const int ok = get_u(&fr, &wfl) >= 0;
        nbctx |= ok && (wfl & PNMF_FLAG_NBCTX);
        median |= ok && (wfl & PNMF_FLAG_MEDIAN); /* bit 15 needs a v10 reader */
        places |= ok && (wfl & PNMF_FLAG_SPRPLACES); /* bit 16 a v11 reader */
        bi |= ok && (wfl & PNMF_FLAG_BI); /* bit 17 a v12 reader */
        wp |= ok && (wfl & PNMF_FLAG_WEIGHTS); /* bit 18 a v14 reader */
        lxq[a] = ok && (wfl & PNMF_FLAG_CTXLOSSY);
    }
    if (ret >= 0 && w->md.res.subpel && w->md.res.sharp) /* bit 20 */
        pnmf_container_writer_need_reader(e->cw, PNMF_MIN_READER_V16);
    if (ret >= 0 && w->md.res.order) pnmf_container_writer_need_reader(e->cw, PNMF_MIN_READER_V15); /* bit 19 */
    if (ret >= 0 && w->md.res.lterm) pnmf_container_writer_need_reader(e->cw, PNMF_MIN_READER_V18); /* bit 21 */
    if (ret >= 0 && w->md.res.subpel && w->md.res.warp) /* bit 23 */
        pnmf_container_writer_need_reader(e->cw, PNMF_MIN_READER_V20);
    if (ret >= 0 && w->md.res.pf.on) pnmf_container_writer_need_reader(e->cw, PNMF_MIN_READER_V19); /* bit 22 */
    if (ret >= 0 && wp) pnmf_container_writer_need_reader(e->cw, PNMF_MIN_READER_V14);
    if (ret >= 0 && bi) pnmf_container_writer_need_reader(e->cw, PNMF_MIN_READER_V12);
    if (ret >= 0 && places) pnmf_container_writer_need_reader(e->cw, PNMF_MIN_READER_V11);
    if (ret >= 0 && median) pnmf_container_writer_need_reader(e->cw, PNMF_MIN_READER_V10);
    if (ret >= 0 && (w->md.res.subpel || w->md.res.deblock || tx8 || w->md.res.npal || w->md.res.casc_period ||
                     nbctx || (w->md.spr.present && w->md.spr.ctxmasks)))
        pnmf_container_writer_need_reader(e->cw, PNMF_MIN_READER_V9);
    /* a lossless window's codings hold range-coded levels (lossless.h) */
    pnmf_container_writer_set_lossless(e->cw, w->md.res.step16 && w->md.res.enc_dec != NULL);
    if (ret >= 0)
        ret = pnmf_container_write_window_best(e->cw, (uint32_t)(e->frame_count - w->m), (uint32_t)w->m,
                                               (const uint8_t *const *)codings, sizes, ncodings, &chosen, e->err,
                                               sizeof(e->err));
    for (int a = 0; a < PNMF_WINDOW_CODINGS; a++) pnmf_free(codings[a]);
    if (ret < 0) return ret;
    if (lxq[chosen]) pnmf_container_writer_need_reader(e->cw, PNMF_MIN_READER_V21);
    const int rc = chosen >= rc_from;
    e->rc_level_windows += rc, e->last_rc = rc;
    e->sse += w->sse, e->carried += w->carried;
    return 0;
}

/*
 * One window, in steps: look for sprites; carry the last model's components over, or probe
 * whether a model can pay and fit it; keep the model only where the
 * residual layer over it costs less than over no model; choose the
 * residual step; write; update the references the next window predicts
 * from. Each step leaves the window in w; the first failure ends it.
 * more: frames may follow the window (it is not the clip's last, nor one
 * that ends at a scene cut).
 */
static int encode_window(PnmfEncoder *e, int more)
{
    EncWindow w;
    memset(&w, 0, sizeof(w));
    w.m = e->nbuf;
    w.step16 = pnmf_residual_step(e->model_q);
    double t = enc_now();
    const double t0 = t;
    int ret = order_window(e, w.m);
    if (ret >= 0) ret = start_window(e, w.m, more);
    if (ret >= 0) ret = pnmf_window_sprites(e, &w);
    if (ret >= 0) ret = pnmf_window_carry(e, &w);
    e->t_residual += lap(&t);
    if (ret >= 0) ret = pnmf_window_probe(e, &w); /* adds to t_probe and t_residual itself */
    if (ret >= 0) ret = pnmf_window_fit(e, &w);   /* adds to t_fit itself */
    lap(&t);
    if (ret >= 0) ret = pnmf_window_keep(e, &w);
    if (ret >= 0) ret = pnmf_window_choose_step(e, &w);
    /* without the residual layer, keep only measures the model's error */
    *(e->s.residual ? &e->t_residual : &e->t_write) += lap(&t);
    if (ret >= 0) ret = pnmf_window_empty_k(e, &w);
    if (ret >= 0) ret = pnmf_window_pfilter(e, &w);
    if (ret >= 0) ret = write_window(e, &w);
    e->t_write += lap(&t);
    if (ret >= 0) ret = pnmf_window_update_refs(e, &w);
    pnmf_model_free(&w.md);
    pnmf_model_free(&w.bare);
    pnmf_model_free(&w.floor_bare);
    pnmf_model_free(&e->alt);
    pnmf_free(w.spr_new);
    e->t_residual += lap(&t);
    e->t_total += t - t0;
    if (ret < 0)
        return fail(e, ret, ret == PNMF_ERR_NOMEM ? "out of memory" : "cannot encode the window");
    e->windows++;
    e->nbuf = 0;
    return 0;
}

/* The 64-bin gray-level histogram of a frame (bin u >> 2): four tables
 * of the 256 levels, so that neighbouring pixels of one level do not wait
 * on each other's count, folded at the end. */
static void gray_hist(const uint8_t *a, ptrdiff_t stride, int width, int height, int hist[64])
{
    uint32_t t[4][256];
    memset(t, 0, sizeof(t));
    for (int y = 0; y < height; y++) {
        const uint8_t *r = a + y * stride;
        int x = 0;
        for (; x + 4 <= width; x += 4) t[0][r[x]]++, t[1][r[x + 1]]++, t[2][r[x + 2]]++, t[3][r[x + 3]]++;
        for (; x < width; x++) t[0][r[x]]++;
    }
    for (int b = 0; b < 64; b++) {
        uint32_t n = 0;
        for (int u = 4 * b; u < 4 * b + 4; u++) n += t[0][u] + t[1][u] + t[2][u] + t[3][u];
        hist[b] = (int)n;
    }
}

/* The sum of the absolute differences of two frames' pixels. */
static uint64_t gray_sad(const uint8_t *a, ptrdiff_t astride, const uint8_t *b, ptrdiff_t stride, int width,
                         int height)
{
    uint64_t sad = 0;
    for (int y = 0; y < height; y++) {
        const uint8_t *p = a + y * astride, *q = b + y * stride;
        int x = 0;
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
        __m128i acc = _mm_setzero_si128();
        for (; x + 16 <= width; x += 16)
            acc = _mm_add_epi64(acc, _mm_sad_epu8(_mm_loadu_si128((const __m128i *)(p + x)),
                                                  _mm_loadu_si128((const __m128i *)(q + x))));
        sad += (uint64_t)_mm_cvtsi128_si64(acc) + (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(acc, acc));
#endif
        for (; x < width; x++) sad += (uint64_t)abs(p[x] - q[x]);
    }
    return sad;
}

/* A scene cut between two frames, of histograms ha and hb (gray_hist())
 * and pixels sad apart (gray_sad()): their gray-level histograms differ
 * in more than PNMF_CUT_HIST of the pixels and the pixels by more than
 * PNMF_CUT_PIXEL gray levels on average (consecutive frames of animation
 * can flip many pixels between the same gray levels; a new scene changes
 * both). */
static int cut_between(const int ha[64], const int hb[64], uint64_t sad, int width, int height)
{
    const double px = (double)width * height;
    int hd = 0;
    for (int t = 0; t < 64; t++) hd += abs(ha[t] - hb[t]);
    return hd / (2 * px) > PNMF_CUT_HIST && (double)sad / px > PNMF_CUT_PIXEL;
}

/* Whether a frame of histogram h (gray_hist()) is flat, one colour but
 * for a few pixels (a black leader, a blank between scenes): a new scene
 * after it may cut however soon after the last cut, since nothing of the
 * flat frame is worth copying into it, and its first frame is then coded
 * as a key window's. */
static int flat_hist(const int h[64], int width, int height)
{
    int top = 0;
    for (int t = 0; t < 64; t++) top = h[t] > top ? h[t] : top;
    return top >= PNMF_CUT_FLAT * (double)width * height;
}

int pnmf_scene_cut(const uint8_t *prev, const uint8_t *cur, ptrdiff_t stride, int width, int height, int since_cut)
{
    if (!prev || !cur || width < 1 || height < 1 || stride < width) return PNMF_ERR_ARG;
    int ha[64], hb[64];
    gray_hist(prev, stride, width, height, ha);
    if (since_cut < PNMF_CUT_MIN_GAP && !flat_hist(ha, width, height)) return 0;
    gray_hist(cur, stride, width, height, hb);
    return cut_between(ha, hb, gray_sad(prev, stride, cur, stride, width, height), width, height);
}

int pnmf_encoder_create(PnmfEncoder **out, const PnmfEncSettings *s, int width, int height,
                        int fps_num, int fps_den, const PnmfIO *io)
{
    PnmfEncoder *e = pnmf_calloc(1, sizeof(*e));
    if (!e) return PNMF_ERR_NOMEM;
    if (s->half != PNMF_HALF_AUTO) return encoder_init(out, e, s, width, height, fps_num, fps_den, io);
    /* PNMF_HALF_AUTO: half size where the trial of the first frames finds
     * it pays (enc_half.c), where it may: a coarse lossy coding of frames
     * large enough to scale down, with the residual layer */
    PnmfEncSettings t = *s;
    t.half = 0;
    if (s->quality < PNMF_HALF_MIN_Q || !s->residual || s->shift_model != PNMF_SHIFT_TORUS || width < PNMF_HALF_MIN_SIDE ||
        height < PNMF_HALF_MIN_SIDE || s->target_psnr > 0)
        return encoder_init(out, e, &t, width, height, fps_num, fps_den, io);
    /* the first frames held until the trial has them */
    e->s = *s;
    e->pend_w = width, e->pend_h = height, e->pend_fps[0] = fps_num, e->pend_fps[1] = fps_den;
    e->pend_io = *io;
    e->pend_cap = s->window < PNMF_HALF_TRIAL_FRAMES ? s->window : PNMF_HALF_TRIAL_FRAMES;
    e->pend_frames = pnmf_malloc_array((size_t)e->pend_cap, (size_t)width * height);
    e->pend_dur = pnmf_calloc((size_t)e->pend_cap, sizeof(int64_t));
    *out = e;
    if (!e->pend_frames || !e->pend_dur) return fail(e, PNMF_ERR_NOMEM, "out of memory");
    e->pending = 1;
    return 0;
}

/* A pending encoder's trial made (on the frames held) and the encoder
 * made at the size it picks, the held frames pushed into it. */
static int pending_start(PnmfEncoder *e)
{
    int half = 0;
    PnmfEncSettings t = e->s;
    if (e->pend_n) {
        const int ret = pnmf_enc_half_pays(&e->s, e->pend_w, e->pend_h, e->pend_fps[0], e->pend_fps[1],
                                           e->pend_frames, e->pend_n, &half);
        if (ret < 0) return fail(e, ret, ret == PNMF_ERR_NOMEM ? "out of memory" : "the half-size trial failed");
    }
    t.half = half;
    /* half size at a finer -q, about the quality -q asks for */
    if (half) t.quality = pnmf_enc_half_quality(t.quality);
    e->pending = 0;
    PnmfEncoder *self = e;
    int ret = encoder_init(&self, e, &t, e->pend_w, e->pend_h, e->pend_fps[0], e->pend_fps[1], &e->pend_io);
    for (int i = 0; ret >= 0 && i < e->pend_n; i++)
        ret = pnmf_encoder_push_timed(e, e->pend_frames + (size_t)i * e->pend_w * e->pend_h, e->pend_w, e->pend_dur[i]);
    pnmf_free(e->pend_frames), pnmf_free(e->pend_dur);
    e->pend_frames = NULL, e->pend_dur = NULL;
    return ret;
}

/* A frame for a pending encoder: held, and the encoder started once the
 * trial's frames are in. */
static int pending_push(PnmfEncoder *e, const uint8_t *gray, ptrdiff_t stride, int64_t duration)
{
    if (stride < e->pend_w) return PNMF_ERR_ARG;
    if ((e->s.time_base_num ? duration < 0 : duration != 0)) return PNMF_ERR_ARG;
    uint8_t *f = e->pend_frames + (size_t)e->pend_n * e->pend_w * e->pend_h;
    for (int y = 0; y < e->pend_h; y++) memcpy(f + (size_t)y * e->pend_w, gray + (ptrdiff_t)y * stride, (size_t)e->pend_w);
    e->pend_dur[e->pend_n++] = duration;
    return e->pend_n == e->pend_cap ? pending_start(e) : 0;
}

int pnmf_encoder_push_timed(PnmfEncoder *e, const uint8_t *gray, ptrdiff_t stride, int64_t duration)
{
    if (e->failed) return e->failed;
    if (e->pending) return e->finished ? PNMF_ERR_ARG : pending_push(e, gray, stride, duration);
    if (e->finished || stride < e->in_width) return PNMF_ERR_ARG;
    if (!e->s.time_base_num) return duration ? PNMF_ERR_ARG : pnmf_encoder_push(e, gray, stride);
    if (!duration) duration = (int64_t)pnmf_container_nominal_duration(pnmf_container_writer_header(e->cw));
    if (duration < 1) return PNMF_ERR_ARG;
    const int ret = pnmf_container_writer_add_duration(e->cw, (uint64_t)duration);
    if (ret < 0) return ret == PNMF_ERR_NOMEM ? fail(e, ret, "out of memory") : ret;
    return pnmf_encoder_push(e, gray, stride);
}

/* Whether gray (its histogram hist) is a cut from the frame ref (rows
 * e->width apart, its histogram rhist). */
static int cut_from(const PnmfEncoder *e, const uint8_t *ref, const int rhist[64], const uint8_t *gray,
                    ptrdiff_t stride, const int hist[64])
{
    return cut_between(rhist, hist, gray_sad(ref, e->width, gray, stride, e->width, e->height), e->width, e->height);
}

/* The scene cut held before the frame pushed last (e->cut_held) happens:
 * the window ends before that frame, which starts the next one. */
static int cut_before_last(PnmfEncoder *e)
{
    e->cut_held = 0;
    e->scene_cuts++;
    pnmf_log(&e->s.logger, PNMF_LOG_INFO, "scene cut before frame %d", e->frame_count - 1);
    if (e->nbuf > 1) { /* the window ends before the cut */
        const size_t last = (size_t)(e->nbuf - 1) * e->nv;
        e->nbuf--, e->frame_count--;
        const int ret = encode_window(e, 0);
        e->frame_count++;
        if (ret < 0) return ret;
        memmove(e->frames, e->frames + last, e->nv);
        if (e->s.half) {
            const size_t in_nv = (size_t)e->in_width * e->in_height;
            memmove(e->half_src, e->half_src + last / e->nv * in_nv, in_nv);
        }
        e->nbuf = 1;
    }
    e->last_cut = e->frame_count - 1; /* after it: that window may have started at the last cut */
    e->probe_skips = 0;               /* a new scene: parts may pay in it, probe again */
    return 0;
}

int pnmf_encoder_push(PnmfEncoder *e, const uint8_t *gray, ptrdiff_t stride)
{
    if (e->failed) return e->failed;
    if (e->pending) return e->finished ? PNMF_ERR_ARG : pending_push(e, gray, stride, 0);
    if (e->finished || stride < e->in_width) return PNMF_ERR_ARG;
    const uint8_t *full = gray; /* with s.half, the frame as pushed */
    const ptrdiff_t full_stride = stride;
    if (e->s.half) {
        pnmf_downsample2(gray, stride, e->in_height, e->in_width, e->half_in);
        gray = e->half_in, stride = e->width;
    }
    if (e->frame_count >= PNMF_MAX_FRAMES) return fail(e, PNMF_ERR_LIMIT, "too many frames");
    /* each frame's histogram is made once, when it is pushed, and kept
     * with the frame for the test of the next one */
    int hist[64];
    if (e->s.scene_cut) gray_hist(gray, stride, e->width, e->height, hist);
    if (e->cut_held) {
        /* the frame pushed last differs from the one before it: a cut if
         * this frame differs from that one too, else a flash (one frame
         * apart, as a camera flash or a lightning bolt), which ends nothing */
        if (cut_from(e, e->cut_gray, e->cut_hist, gray, stride, hist)) {
            PNMF_CHECK(cut_before_last(e));
        } else {
            e->cut_held = 0;
        }
        if (e->nbuf == e->s.window) PNMF_CHECK(encode_window(e, 1)); /* held full while undecided */
    } else if (e->s.scene_cut && e->frame_count > 0 &&
               (e->frame_count - e->last_cut >= PNMF_CUT_MIN_GAP || flat_hist(e->last_hist, e->width, e->height)) &&
               cut_from(e, e->last_gray, e->last_hist, gray, stride, hist)) {
        /* decided by the next frame; the frame before is kept for it */
        e->cut_held = 1;
        memcpy(e->cut_gray, e->last_gray, e->nv);
        memcpy(e->cut_hist, e->last_hist, sizeof(hist));
    }
    if (e->s.scene_cut) {
        for (int y = 0; y < e->height; y++) memcpy(e->last_gray + (size_t)y * e->width, gray + y * stride, e->width);
        memcpy(e->last_hist, hist, sizeof(hist));
    }
    pnmf_layout_from_frame(e->s.shift_model, e->width, e->height, gray, stride,
                           e->frames + (size_t)e->nbuf * e->nv);
    if (e->s.half)
        for (int y = 0; y < e->in_height; y++)
            memcpy(e->half_src + ((size_t)e->nbuf * e->in_height + y) * e->in_width, full + y * full_stride,
                   (size_t)e->in_width);
    e->nbuf++;
    e->frame_count++;
    if (e->nbuf == e->s.window && !e->cut_held) return encode_window(e, 1);
    return 0;
}

int pnmf_encoder_finish(PnmfEncoder *e)
{
    if (e->failed) return e->failed;
    if (e->finished) return PNMF_ERR_ARG;
    if (e->pending && !e->pend_n) return fail(e, PNMF_ERR_ARG, "no frames to encode");
    if (e->pending) PNMF_CHECK(pending_start(e));
    if (e->frame_count == 0) return fail(e, PNMF_ERR_ARG, "no frames to encode");
    if (e->cut_held) PNMF_CHECK(cut_before_last(e)); /* no frame after it: a cut */
    if (e->nbuf) PNMF_CHECK(encode_window(e, 0));
    int ret = pnmf_container_writer_finish(e->cw, (uint32_t)e->frame_count, e->err, sizeof(e->err));
    if (ret < 0) return fail(e, ret, "cannot finish the file");
    e->finished = 1;
    return 0;
}

void pnmf_encoder_stats(const PnmfEncoder *e, PnmfEncStats *st)
{
    st->frames = e->frame_count - e->nbuf;
    st->windows = e->windows;
    st->bytes = e->cw ? pnmf_container_writer_bytes(e->cw) : 0;
    st->sse = e->sse;
    st->fit_objective = e->objective;
    st->seconds_probe = e->t_probe, st->seconds_fit = e->t_fit, st->seconds_residual = e->t_residual;
    st->seconds_write = e->t_write, st->seconds_total = e->t_total;
    st->scene_cuts = e->scene_cuts;
    st->carried = e->carried;
    st->rc_levels = e->rc_level_windows;
    st->fits_stopped = e->fits_stopped;
    st->repeated = e->repeated;
    double px = (double)st->frames * e->nv;
    /* half size: the frames as a reader shows them, scaled up, against the frames pushed */
    if (e->s.half && e->s.residual) st->sse = e->half_sse, px = (double)st->frames * e->in_width * e->in_height;
    st->psnr = px > 0 && st->sse > 0 ? 10 * log10(255.0 * 255.0 * px / st->sse) : 999.0;
}

const char *pnmf_encoder_errmsg(const PnmfEncoder *e) { return e->err; }

void pnmf_encoder_destroy(PnmfEncoder **pe)
{
    PnmfEncoder *e = *pe;
    if (!e) return;
    pnmf_container_writer_close(&e->cw);
    pnmf_fitter_close(&e->ft);
    pnmf_free(e->frames);
    pnmf_free(e->A);
    pnmf_free(e->W);
    pnmf_free(e->Wq);
    pnmf_free(e->H);
    pnmf_free(e->Wtry);
    pnmf_free(e->Hsave);
    pnmf_free(e->rec);
    pnmf_free(e->seen);
    for (int i = 0; i < 3; i++) {
        ResBufs *b = &e->rb[i];
        pnmf_free(b->acc), pnmf_free(b->P), pnmf_free(b->Pp), pnmf_free(b->D);
        pnmf_free(b->B), pnmf_free(b->mark), pnmf_free(b->key0);
        pnmf_sprite_dict_free(&b->dict);
        for (int t = 0; t < PNMF_RES_REFS; t++) pnmf_free(b->ref[t]);
        pnmf_free(b->wref);
    }
    pnmf_free(e->lastP);
    pnmf_free(e->key0);
    pnmf_free(e->lastB);
    pnmf_free(e->half_in);
    pnmf_free(e->half_src);
    pnmf_free(e->half_up);
    pnmf_free(e->half_tmp);
    pnmf_free(e->pend_frames);
    pnmf_free(e->pend_dur);
    pnmf_sprite_dict_free(&e->sdict);
    pnmf_sprite_dict_free(&e->wdict);
    pnmf_sprite_dict_free(&e->sfound);
    pnmf_free(e->slot);
    pnmf_free(e->found_seen);
    pnmf_free(e->weights);
    pnmf_free(e->weights_exact);
    pnmf_free(e->tf_source);
    pnmf_free(e->last_gray);
    pnmf_free(e->cut_gray);
    pnmf_model_free(&e->last);
    pnmf_model_free(&e->alt);
    for (int t = 0; t < PNMF_RES_REFS; t++) {
        pnmf_free(e->lastRef[t]);
    }
    pnmf_freep(pe);
}

