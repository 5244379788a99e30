/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The residual layer of a window: coded over a model frame by frame as the
 * decoder will decode it, the key frame's step, the block weights, what a
 * coding costs in bytes, and the references the window leaves the next.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "container.h"
#include "deblock.h"
#include "diamond.h"
#include "enc_internal.h"
#include "enc_prop.h"
#include "enc_warp.h"
#include "entropy.h"
#include "internal.h"
#include "intra.h"
#include "lossless.h"
#include "model_write.h"
#include "palette_enc.h"
#include "residual_search.h"
#include "tx8.h"
#include "upsample.h"
#include "varint.h"

/* The squared error of n samples of a against b, summed as integers
 * (exact, and a loop the compiler vectorizes): the same double as a
 * sample-by-sample sum below 2^53. */
static double sq_error(const uint8_t *a, const uint8_t *b, size_t n)
{
    int64_t s = 0;
    for (size_t q = 0; q < n; q++) {
        const int d = (int)a[q] - b[q];
        s += d * d;
    }
    return (double)s;
}

/* Frame j's references as its predictions read them (pnmf_residual_frame_refs(),
 * nref as there): b's own, or weighted into b->wref; NULL out of memory. */
static const uint8_t *const *frame_refs(ResBufs *b, const PnmfResidual *r, int j, int nref, size_t nv,
                                        const uint8_t **rf)
{
    if (pnmf_residual_weighted(r, j) && !b->wref && !(b->wref = pnmf_malloc_array(PNMF_RES_REFS, nv))) return NULL;
    uint8_t *ws[PNMF_RES_REFS];
    for (int t = 0; t < PNMF_RES_REFS; t++) ws[t] = b->wref ? b->wref + (size_t)t * nv : NULL;
    return pnmf_residual_frame_refs(r, j, (const uint8_t *const *)b->ref, nref, ws, rf);
}

/* The table of pnmf_residual_weigh() with (w, o) for every sample value. */
static void weigh_lut(uint8_t lut[256], int w, int o)
{
    for (int v = 0; v < 256; v++) lut[v] = (uint8_t)pnmf_residual_weigh(v, w, o);
}

/* The SAD of src against R (n samples) weighted with (w, o). */
static int64_t weighted_sad(const uint8_t *src, const uint8_t *R, size_t n, int w, int o)
{
    uint8_t lut[256];
    weigh_lut(lut, w, o);
    int64_t s = 0;
    for (size_t q = 0; q < n; q++) s += abs((int)src[q] - lut[R[q]]);
    return s;
}

/* The sum over the runs of PNMF_WP_RUN samples of n (the last partial run
 * left out) of the absolute difference of src's run sum (ssum, made once
 * for all of an estimate's candidates) and the run's sum of R weighted
 * with (w, o). Over runs a change of brightness shows in the sums, the
 * noise of single samples averages out. */
static int64_t weighted_sad_runs(const int32_t *ssum, const uint8_t *R, size_t n, int w, int o)
{
    return pnmf_residual_weighted_runs(ssum, R, n, w, o);
}

/* Whether, where over 1/PNMF_WP_EXACT_DIV of R's samples are equal to
 * src's, weighing R with (w, o) makes fewer than 1/PNMF_WP_EXACT_GAIN of
 * the others equal: a screen or sprite capture whose frame copies most of
 * the one before, where sprites entering and leaving move the mean and a
 * gain would spoil the exact copies for a few samples it makes equal. A
 * change of exposure or a fade makes many of the others equal (a camera
 * clip's flat wall: a third of the samples equal, a tenth more weighted). */
static int breaks_copies(const uint8_t *src, const uint8_t *R, size_t n, int w, int o)
{
    uint8_t lut[256];
    weigh_lut(lut, w, o);
    size_t eu = 0, ew = 0;
    for (size_t q = 0; q < n; q++) eu += src[q] == R[q], ew += src[q] == lut[R[q]];
    return eu * PNMF_WP_EXACT_DIV > n && ((double)ew - (double)eu) * PNMF_WP_EXACT_GAIN < (double)(n - eu);
}

/* Whether over PNMF_WP_SRC_COPY of src's n samples equal prev's. */
static int src_copies(const uint8_t *src, const uint8_t *prev, size_t n)
{
    size_t eq = 0;
    for (size_t q = 0; q < n; q++) eq += src[q] == prev[q];
    return (double)eq > PNMF_WP_SRC_COPY * (double)n;
}

/* Window flags bit 18: the gain and offset wo of frame src against its
 * reference R (n samples) (enc_internal.h). The estimate matches the weighted reference's
 * mean and deviation to the frame's (as x264's weightp), then steps to
 * the neighbour (w +- 1 with the offset that keeps the mean, o +- 1) of
 * lowest SAD over runs of PNMF_WP_RUN samples (weighted_sad_runs()) while one is
 * lower. Kept where that SAD is under PNMF_WP_KEEP times the unweighted
 * reference's, a fade or a change of exposure, not the noise of a still
 * frame, and the samples' own SAD is lower too: not where the runs' sums
 * change with what moves (a cellular automaton's cells). */
void pnmf_enc_estimate_weights(const uint8_t *src, const uint8_t *R, size_t n, int16_t wo[2])
{
    wo[0] = PNMF_RES_WP_ONE, wo[1] = 0;
    /* (integer sums: the doubles they become are the same exact values) */
    uint64_t ss, sr, sss, srr;
    pnmf_residual_sums(src, n, &ss, &sss);
    pnmf_residual_sums(R, n, &sr, &srr);
    const double ms = (double)ss / n, mr = (double)sr / n;
    const double vs = (double)sss / n - ms * ms, vr = (double)srr / n - mr * mr;
    const double g = vr > 1 && vs > 0 ? sqrt(vs / vr) : 1;
    int w = (int)lrint(g * PNMF_RES_WP_ONE);
    w = w < 0 ? 0 : w > PNMF_RES_WP_MAX_W ? PNMF_RES_WP_MAX_W : w;
#define WP_OFFSET(w_) (int)lrint(fmin(fmax(ms - (w_) * mr / PNMF_RES_WP_ONE, -PNMF_RES_WP_MAX_O), PNMF_RES_WP_MAX_O))
    int o = WP_OFFSET(w);
    /* src's run sums, made once (without memory: no weights) */
    int32_t *ssum = pnmf_malloc_array(n / PNMF_WP_RUN + 1, sizeof(int32_t));
    if (!ssum) return;
    for (size_t k = 0, q = 0; q + PNMF_WP_RUN <= n; k++, q += PNMF_WP_RUN) {
        int r = 0;
        for (int i = 0; i < PNMF_WP_RUN; i++) r += src[q + i];
        ssum[k] = r;
    }
    int64_t best = weighted_sad_runs(ssum, R, n, w, o);
    for (int s = 0; s < PNMF_WP_STEPS; s++) {
        const int cand[4][2] = { { w - 1, WP_OFFSET(w - 1) }, { w + 1, WP_OFFSET(w + 1) }, { w, o - 1 }, { w, o + 1 } };
        int at = -1;
        for (int c = 0; c < 4; c++) {
            if (cand[c][0] < 0 || cand[c][0] > PNMF_RES_WP_MAX_W || abs(cand[c][1]) > PNMF_RES_WP_MAX_O) continue;
            const int64_t v = weighted_sad_runs(ssum, R, n, cand[c][0], cand[c][1]);
            if (v < best) best = v, at = c;
        }
        if (at < 0) break;
        w = cand[at][0], o = cand[at][1];
    }
#undef WP_OFFSET
    const int64_t none = w != PNMF_RES_WP_ONE || o ? weighted_sad_runs(ssum, R, n, PNMF_RES_WP_ONE, 0) : 0;
    pnmf_free(ssum);
    if ((w != PNMF_RES_WP_ONE || o) && (double)best < PNMF_WP_KEEP * (double)none &&
        weighted_sad(src, R, n, w, o) < weighted_sad(src, R, n, PNMF_RES_WP_ONE, 0) && !breaks_copies(src, R, n, w, o))
        wo[0] = (int16_t)w, wo[1] = (int16_t)o;
}

/* Before a window's residual layer: the references the previous window
 * left (none for a key window); returns how many are available. */
static int restore_refs(const PnmfEncoder *e, ResBufs *b)
{
    memcpy(b->P, e->lastP, e->nv); /* swapped into Pp at frame 0 */
    memcpy(b->B, e->lastB, e->nv);
    for (int t = 0; t < PNMF_RES_REFS; t++) memcpy(b->ref[t], e->lastRef[t], e->nv);
    return e->continues ? e->last_avail : 0;
}

/* The model frame j of md into rb->P, as the decoder makes it: the sprite
 * composite over rb->B (d: the dictionary the window leaves), or the
 * diamond product. A key window's background starts flat. */
static void model_frame(const PnmfEncoder *e, ResBufs *rb, const PnmfWindowModel *md, const PnmfSpriteDict *d, int j)
{
    if (j == 0 && !e->continues) memset(rb->B, PNMF_SPRITE_BG, e->nv);
    if (md->spr.present) pnmf_sprite_paint(d, &md->spr, j, e->vis_rows, e->vis_cols, rb->B, rb->P);
    else pnmf_diamond_int(md, j, e->w_step, e->r_step, rb->acc, rb->P);
}

/* The cost (squared error + lambda * 8 * zstd bytes) of coding a key
 * window's first frame alone with the step key16. */
static int key_frame_cost(const PnmfEncoder *e, ResBufs *rb, const PnmfWindowModel *md, int key16, double lambda,
                          double *cost)
{
    /* coded with its own step's lambda, weighed with the caller's */
    PnmfResidual r;
    PNMF_CHECK(pnmf_residual_alloc(&r, 1, e->vis_rows, e->vis_cols, key16, key16));
    model_frame(e, rb, md, &e->wdict, 0);
    int ret = pnmf_residual_encode_frame(&r, 0, e->frames, rb->P, rb->P, NULL, 0, rb->D, enc_residual_lambda(key16));
    Buf b = { 0 };
    if (ret >= 0) {
        for (size_t q = 0; q < (size_t)r.bx * r.by; q++) put_u(&b, r.modes[q]);
        for (size_t q = 0; q < r.nlev; q++) put_u(&b, zigzag(r.lev[q]));
        for (size_t q = 0; q < r.npal; q++) { /* palette blocks: their colours and indices */
            put_bytes(&b, r.pal[q].col, r.pal[q].n);
            put_bytes(&b, r.pal[q].idx, sizeof(r.pal[q].idx));
        }
        if (b.err) ret = PNMF_ERR_NOMEM;
    }
    uint8_t *z = NULL;
    size_t zn = 0;
    if (ret >= 0) ret = pnmf_entropy_compress(b.p, b.len, PNMF_ESTIMATE_ZSTD_LEVEL, &z, &zn);
    double sse = 0;
    for (size_t q = 0; ret >= 0 && q < e->nv; q++) {
        const int d = (int)e->frames[q] - rb->D[q];
        sse += d * d;
    }
    *cost = sse + lambda * 8 * (double)zn;
    pnmf_free(z);
    pnmf_free(b.p);
    pnmf_residual_free(&r);
    return ret;
}

/* Whether the deblocking filter lowers the squared error of frame j's
 * reconstruction D (over the model frames P, Pp) against its source src
 * (nv samples); when it does, D becomes the filtered frame. tmp: nv bytes
 * of scratch. */
static int deblock_pays(const PnmfResidual *r, int j, const uint8_t *src, const uint8_t *P, const uint8_t *Pp,
                        uint8_t *D, uint8_t *tmp, size_t nv)
{
    memcpy(tmp, D, nv);
    pnmf_deblock_frame(r, j, P, Pp, tmp);
    int64_t gain = 0;
    for (size_t q = 0; q < nv; q++) {
        const int a = (int)src[q] - D[q], b = (int)src[q] - tmp[q];
        gain += a * a - b * b;
    }
    if (gain <= 0) return 0;
    memcpy(D, tmp, nv);
    return 1;
}

/* The first p of the window's m frames coded with *flag 0 and then 1,
 * the residual layer alone at -q's step: their costs, squared error +
 * lambda * bits, in j[0] and j[1] (a trial of a window flag). Without the
 * source's temporal filter, which filter_first() decides after. */
static int both_ways(PnmfEncoder *e, int m, int p, int *flag, double j[2])
{
    const int step16 = pnmf_residual_step(e->s.quality);
    PnmfWindowModel md;
    PNMF_CHECK(pnmf_model_alloc(&md, e->rows, e->cols, e->vis_rows, e->vis_cols, m, 1, 0));
    j[0] = j[1] = 0;
    int ret = 0;
    e->tf_on = 0;
    for (int s = 0; s < 2 && ret >= 0; s++) {
        *flag = s;
        ResRun run;
        ret = pnmf_res_run_start(&run, e, &e->rb[0], &md, m, step16);
        if (ret < 0) break;
        ret = pnmf_res_run_frames(&run, p);
        if (ret >= 0) ret = pnmf_res_run_cost(&run, &j[s], NULL);
        pnmf_res_run_end(&run);
    }
    pnmf_model_free(&md);
    return ret;
}

/* Which filter a window of quarter-sample vectors interpolates with: its
 * first PNMF_SHARP_TRIAL_FRAMES frames coded both ways, the residual layer
 * alone at -q's step, the lower squared error + lambda * bits wins. The
 * 6-tap filter keeps the edges of text and line art that bend and the
 * detail of film; the bilinear one smooths a camera's noise and a render's
 * aliasing out of the references (docs/measurements.md, "Sharp
 * interpolation"). Sets e->sharp. */
static int sharp_trial(PnmfEncoder *e, int m)
{
    const int p = m < PNMF_SHARP_TRIAL_FRAMES ? m : PNMF_SHARP_TRIAL_FRAMES;
    double j[2];
    const int ret = both_ways(e, m, p, &e->sharp, j);
    e->sharp = ret >= 0 && j[1] < j[0];
    pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: on %d frames, the 6-tap filter costs %.4f times the bilinear: %s",
             e->windows, p, j[0] > 0 ? j[1] / j[0] : 0.0, e->sharp ? "6-tap" : "bilinear");
    return ret;
}

/* Whether a window of quarter-sample vectors follows a warp (window flags
 * bit 23): where a warp fitted to one of its first pairs of source frames
 * takes PNMF_WARP_PROBE_GAIN of the previous prediction's SAD away (a
 * camera that zooms or turns moves the whole frame; a hand or a character
 * moving before a still camera takes a third of it away at most on the
 * clips measured), its first PNMF_WARP_TRIAL_FRAMES frames are coded
 * both ways, the residual layer alone at -q's step, and the warp is kept
 * where its squared error + lambda * bits is under PNMF_WARP_TRIAL_GO of
 * none's. A still camera whose frames move only where
 * an object does keeps its copies whole. Sets e->warp. */
static int warp_trial(PnmfEncoder *e, int m)
{
    e->warp = 0;
    const int p = m < PNMF_WARP_TRIAL_FRAMES ? m : PNMF_WARP_TRIAL_FRAMES;
    int found = 0;
    for (int f = 1; f < p && !found; f++) {
        const uint8_t *a = e->frames + (size_t)(f - 1) * e->nv, *b = e->frames + (size_t)f * e->nv;
        int gy = 0, gx = 0;
        int32_t w[PNMF_RES_WARP_N];
        if (!pnmf_enc_warp_fit(b, a, e->vis_rows, e->vis_cols, e->sharp, &gy, &gx, w)) continue;
        const int32_t none[PNMF_RES_WARP_N] = { 0 };
        const int64_t s0 = pnmf_enc_warp_sad(b, a, e->vis_rows, e->vis_cols, e->sharp, gy, gx, none);
        found = (double)pnmf_enc_warp_sad(b, a, e->vis_rows, e->vis_cols, e->sharp, gy, gx, w) <
                (1.0 - PNMF_WARP_PROBE_GAIN) * (double)s0;
    }
    if (!found) return 0;
    double j[2];
    const int ret = both_ways(e, m, p, &e->warp, j);
    e->warp = ret >= 0 && j[1] < PNMF_WARP_TRIAL_GO * j[0];
    pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: on %d frames, the warp costs %.4f times none: %s", e->windows,
             p, j[0] > 0 ? j[1] / j[0] : 0.0, e->warp ? "warp" : "none");
    return ret;
}

/* The window's block weights (e->weights; residual.h, enc_weight), from
 * its source frames: the same for every coding of the window. */
int pnmf_window_weights(PnmfEncoder *e, int m)
{
    /* a block the next frames repeat (the source's block unchanged) will
     * most likely be copied into them: its error counts once per frame, so
     * its lambda is divided by the frames it lasts. A block whose samples
     * move into the next frame unchanged (a sprite, a pan) weighs as the
     * blocks of later frames that copy it (residual.h, match weights).
     * Both come from the source frames alone, so they do not follow -q. */
    const size_t nb = (size_t)pnmf_residual_blocks(e->vis_cols) * (size_t)pnmf_residual_blocks(e->vis_rows);
    pnmf_free(e->weights);
    e->weights = pnmf_malloc_array((size_t)m, nb);
    if (!e->weights) return PNMF_ERR_NOMEM;
    PNMF_CHECK(pnmf_residual_copy_weights(e->frames, m, e->nv, e->vis_rows, e->vis_cols, e->weights));
    /* sub-pixel vectors where the window's motion is not whole samples
     * (camera footage, rendered animation), never for pixel-exact motion */
    double gain, exact;
    e->subpel = pnmf_residual_subpel_pays(e->frames, m, e->nv, e->vis_rows, e->vis_cols, &gain, &exact);
    /* more exact matches than the probe allows, yet a large gain on the
     * others: a render whose still or flat background some blocks match,
     * its objects and camera moving by fractions; a screen never */
    if (!e->subpel && exact <= PNMF_SUBPEL_WIDE_EXACT && gain >= PNMF_SUBPEL_WIDE_GAIN && !enc_screen_like(e))
        e->subpel = 1;
    e->sharp = PNMF_SHARP_ENCODE == 1 && e->subpel; /* the bilinear filter unless the trial below says otherwise */
    e->warp = 0; /* no warp unless warp_trial() says otherwise */
    /* how much of a key window's first frame the later frames inherit,
     * in windows of sub-pixel motion (filmed or rendered): what sets its
     * step (pnmf_res_run_start()). Measured where the window's frames are
     * all or most of what will inherit it: a short window that continuing
     * ones may follow says too little. */
    e->key_w = PNMF_KEY_PROP_STRENGTH > 0 && e->subpel && !e->continues && e->s.quality > 0 && !e->order &&
                       (m >= PNMF_PROP_MIN_FRAMES || !e->more)
                   ? pnmf_enc_propagation(e->frames, m, e->nv, e->vis_rows, e->vis_cols)
                   : 0;
    if (e->key_w > 0)
        pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: the first frame's propagation weight %.2f", e->windows,
                 e->key_w);
    pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: sub-pixel gain %.3f, exact %.3f: %s", e->windows, gain, exact,
             e->subpel ? "quarter samples" : "whole samples");
    /* -q 0: the blocks' lambda weighs a vector's bits against a few
     * levels' at most (every coding is exact), so the moved blocks'
     * weights, whose search is the costlier, are left out */
    pnmf_free(e->weights_exact);
    e->weights_exact = NULL;
    if (!e->s.quality && enc_picks(&e->s)) return 0;
    /* and so a lossless coding (below PNMF_PICK_FLOOR) weighs as -q 0's:
     * a -q above 0 never codes a lossless window larger than -q 0 does */
    if (enc_lossless_ctx(&e->s)) {
        if (!(e->weights_exact = pnmf_malloc_array((size_t)m, nb))) return PNMF_ERR_NOMEM;
        memcpy(e->weights_exact, e->weights, (size_t)m * nb);
    }
    PNMF_CHECK(pnmf_residual_match_weights(e->frames, m, e->nv, e->vis_rows, e->vis_cols, e->weights));
    /* where quarter positions save little, the motion carries no detail
     * finer than a sample (a camera's grain and blur): the bilinear filter */
    if (PNMF_SHARP_ENCODE == 2 && e->subpel && gain >= PNMF_SHARP_MIN_GAIN && e->s.quality > 0 && m >= 2)
        PNMF_CHECK(sharp_trial(e, m));
    return PNMF_WARP_ENCODE && e->subpel && e->s.quality > 0 && m >= 2 ? warp_trial(e, m) : 0;
}

/* The step of a cascade's finer frames (window flags bit 12): step16
 * qps transform quantizers finer, 0 (no cascade) where that is not
 * finer. */
static int casc_step(int step16, int qps)
{
    int s = (int)lrint(step16 * pow(2.0, -qps / 6.0));
    if (s < PNMF_RES_MIN_STEP) s = PNMF_RES_MIN_STEP;
    return s < step16 ? s : 0;
}

/* The residual layer over the quantized model (residual.h), frame by frame
 * in the decoder's order, as a run (enc_internal.h, ResRun) that codes
 * up to a frame and may go on later: started here, with nothing coded. */
int pnmf_res_run_start(ResRun *run, const PnmfEncoder *e, ResBufs *rb, PnmfWindowModel *md, int m, int step16)
{
    memset(run, 0, sizeof(*run));
    run->e = e, run->rb = rb, run->md = md, run->m = m;
    /* window flags bit 12, in windows of sub-pixel motion (camera footage,
     * rendered animation; not screen content, whose exact copies carry a
     * frame's quality on by themselves): every PNMF_CASC_PERIOD-th frame,
     * the one the next frames reach back to, at a finer step; a continuing
     * window's first frame is one of them */
    int casc16 = PNMF_CASC_PERIOD && e->subpel ? casc_step(step16, PNMF_CASC_QP) : 0;
    /* a window coded out of order (e->order, window flags bit 19): the
     * groups' anchors, which the frames of their group and of the next
     * reach back to, PNMF_ORDER_QP quantizers finer (the order rides on
     * the cascade: where no step is finer, the anchors take the window's) */
    if (e->order && !(casc16 = casc_step(step16, PNMF_ORDER_QP))) casc16 = step16;
    run->casc16 = casc16;
    /* a key window's first frame is what later frames copy: a finer step */
    int key16 = e->continues ? (casc16 ? casc16 : step16) : (step16 + PNMF_KEY_STEP_DIV / 2) / PNMF_KEY_STEP_DIV;
    /* where the later frames inherit less of it (a moving camera, a
     * busy scene), less finer, as a macroblock tree would weigh it */
    if (!e->continues && e->key_w > 0) {
        const double div = pow(e->key_w, PNMF_KEY_PROP_STRENGTH / 6.0);
        if (div < PNMF_KEY_STEP_DIV) key16 = (int)lrint(step16 / (div > 1.0 ? div : 1.0));
    }
    /* a lossy window of rendered frames with whole-sample motion and no
     * sprite layer (a cartoon: not a captured screen, whose exact copies
     * carry its quality on by themselves): most of its blocks copy the
     * frame before unchanged, so a continuing window's first frame too is
     * coded finer, a refresh the next frames copy, and the blocks' search
     * gives up small levels sooner */
    const int screen = enc_screen_like(e);
    const int drawn = !e->subpel && step16 > PNMF_RES_MIN_STEP && !md->spr.present && !screen;
    if (drawn && e->continues) key16 = (int)lrint(step16 / PNMF_CONT_STEP_DIV);
    /* camera footage (the source's noise filtered out of the first frame,
     * filter_first()): a continuing window's first frame too is coded
     * finer, a refresh of what the still parts of the scene copy on
     * (docs/measurements.md, "A finer first frame in continuing windows") */
    if (e->tf_on && e->continues && !e->order && !casc16 && PNMF_CONT_NOISY_DIV > 1.0)
        key16 = (int)lrint(step16 / PNMF_CONT_NOISY_DIV);
    if (key16 < PNMF_RES_MIN_STEP) key16 = PNMF_RES_MIN_STEP;
    run->search_scale = drawn ? PNMF_DRAWN_LAMBDA : 1.0;
    /* format 9: palette blocks (window flags bit 13) in a key window's
     * first frame, where a screen's flat colours and sharp edges are coded
     * without a prediction and later frames copy them, and in every frame
     * of a lossy window that continues a range-coded one at steps up to -q
     * PNMF_PAL_LATER_Q's: there first showings (a sprite's new pose, a
     * part moving in) have no prediction either. Not in a key window's
     * later frames (cuts_mix, all key windows, loses there), nor at the
     * coarsest steps, where a palette's exact block costs more than the
     * error it saves, nor in lossless windows, whose sample-context levels
     * code the same blocks for less (docs/measurements.md). Only
     * where the window's first frame looks like a captured screen: on
     * camera footage and rendered gradients a palette's few levels stand
     * for a noisy or graded block, and the step pick turns that into a
     * coarser window. */
    const int pal_later = e->continues && e->last_rc && step16 > PNMF_RES_MIN_STEP &&
                          step16 <= pnmf_residual_step(PNMF_PAL_LATER_Q);
    run->palette = PNMF_PAL_ENCODE && (!e->continues || pal_later) && screen;
    if (!e->continues && key16 > PNMF_RES_MIN_STEP) {
        /* a lossless first frame can cost less than a lossy one (exact
         * repeats compress; quantization noise does not): try both,
         * without palette blocks, which the chosen step's coding then
         * uses: priced here (this frame alone, a palette's bytes raw)
         * they can make a coarser -q's file larger and worse than a
         * finer -q's (tests/rate.sh) */
        double j_lossy, j_lossless;
        PNMF_CHECK(key_frame_cost(e, rb, md, key16, enc_residual_lambda(key16), &j_lossy));
        PNMF_CHECK(key_frame_cost(e, rb, md, PNMF_RES_MIN_STEP, enc_residual_lambda(key16), &j_lossless));
        if (j_lossless <= j_lossy) key16 = PNMF_RES_MIN_STEP;
    }
    pnmf_residual_free(&md->res);
    PNMF_CHECK(pnmf_residual_alloc(&md->res, m, e->vis_rows, e->vis_cols, step16, key16));
    md->res.continues = e->continues;
    /* window flags bit 21 in the lossy windows of sub-pixel motion (camera
     * footage, rendered animation): reference 15 is the key window's first
     * frame, its finest, whatever the distance (a rendered camera that
     * comes back to a view, a still background uncovered); every window
     * has a residual layer here, so a continuing one's key window left
     * its frame 0 in e->key0 */
    md->res.lterm = PNMF_LTERM_ENCODE && e->subpel && step16 > PNMF_RES_MIN_STEP;
    md->res.key0 = e->continues ? e->key0 : rb->key0;
    md->res.subpel = e->subpel;
    md->res.sharp = e->subpel && e->sharp;
    /* window flags bit 23 in the same windows: the previous prediction
     * follows each frame's fitted warp (a camera that zooms or turns) */
    md->res.warp = e->subpel && e->warp && step16 > PNMF_RES_MIN_STEP;
    md->res.enc_pre_at = enc_pick_prefix(m); /* the step pick weighs its first frames alone */
    md->res.nbctx = 1; /* window flags bit 14, which the writer keeps where it pays */
    md->res.median = 1; /* and bit 15 */
    if (casc16) {
        md->res.casc_period = e->order ? e->order : PNMF_CASC_PERIOD;
        md->res.order = e->order > 0;
        md->res.casc_step16 = casc16, md->res.casc_qp = pnmf_residual_qp(casc16);
    }
    /* a lossless window keeps its decoded frames: the sample-context
     * levels stream (lossless.h) reads them */
    if (enc_lossless_ctx(&e->s) && step16 == PNMF_RES_MIN_STEP && key16 == PNMF_RES_MIN_STEP &&
        !(md->res.enc_dec = pnmf_malloc_array((size_t)m, e->nv)))
        return PNMF_ERR_NOMEM;
    /* a lossy window keeps its pixel-coded blocks' neighbours and
     * predictions: the same stream at its steps (window flags bit 24) */
    if (PNMF_LXQ_ENCODE && !md->res.enc_dec &&
        !(md->res.enc_lxn = pnmf_malloc_array((size_t)m * md->res.bx * md->res.by, PNMF_LX_NB)))
        return PNMF_ERR_NOMEM;
    /* a window that continues one whose levels were range-coded prices its
     * levels with the levels stream's contexts (they will most likely be
     * range-coded too), and so does a lossy window with sub-pixel motion
     * (camera footage, rendered animation: its many small levels are
     * range-coded in every window, a key window's too), and so does a
     * cartoon's lossy window (drawn above: its levels are range-coded
     * too, the 8x8 transform and the directions code its gradients);
     * others with the fixed table for zstd's varints */
    const int drawn_rc = PNMF_DRAWN_RC && drawn;
    const int rc_likely = (e->continues && e->last_rc) || (e->subpel && step16 > PNMF_RES_MIN_STEP) || drawn_rc;
    md->res.enc_rc_price = rc_likely;
    /* the chosen transform levels lowered by their contexts' price
     * (residual_search.c, rdoq_levels()) in the smooth windows: sub-pixel
     * motion, or a cartoon's (drawn) */
    md->res.enc_rdoq = e->subpel || drawn_rc;
    /* and their vectors priced and searched as window flags bit 15 codes
     * them: elsewhere (screen content, sprites) the extra candidates lead
     * the search astray and the step pick after it; the writer sets the
     * bit wherever it pays either way */
    md->res.enc_median = e->subpel || drawn_rc;
    /* second hypotheses (window flags bit 17) in the same lossy smooth
     * windows: screen content and sprites keep their single vectors */
    md->res.enc_bi = PNMF_BI_ENCODE && (e->subpel || drawn_rc) && step16 > PNMF_RES_MIN_STEP;
    /* format 9: 8x8 transform blocks need the levels stream (window flags
     * bit 8), which such a window most likely has; the others keep the
     * varints' coding open (sprite animation's exact repeats, which zstd
     * finds). A key window decides from its own frames alone: a segment
     * encoded on its own makes the same bytes. */
    md->res.enc_tx8 = PNMF_TX8_ENCODE && rc_likely;
    /* format 9: intra directions (window flags bit 10) in the lossy windows
     * of sub-pixel motion (camera footage, 3-D renders: shaded gradients
     * and slanted edges at key frames and cuts); a cartoon's or a screen's
     * windows gain less from them than their trials cost in time */
    md->res.enc_idir = PNMF_INTRA_ENCODE && e->subpel && step16 > PNMF_RES_MIN_STEP;
    /* window flags bit 18 in the lossy windows */
    run->wp = PNMF_WP_ENCODE && !md->res.enc_dec && step16 > PNMF_RES_MIN_STEP;
    run->lambda = enc_residual_lambda(step16), run->key_lambda = enc_residual_lambda(key16);
    run->casc_lambda = casc16 ? enc_residual_lambda(casc16) : run->lambda;
    /* the window's block weights (pnmf_window_weights()), faded below */
    const size_t nb = (size_t)md->res.bx * md->res.by;
    run->weights = pnmf_malloc_array((size_t)m, nb), run->tmp = pnmf_malloc_array(e->nv, 1);
    if (!run->weights || !run->tmp) {
        pnmf_res_run_end(run);
        return PNMF_ERR_NOMEM;
    }
    run->avail = restore_refs(e, rb);
    memcpy(run->weights, md->res.enc_dec && e->weights_exact ? e->weights_exact : e->weights, (size_t)m * nb);
    /* at the bottom of the -q range (steps over -q 49's) the weights fade
     * out, class 64 - q at most: kept exact by them, a still background
     * would hold the coarsest -q far above the error it stands for */
    const int cap = (int)floor(PNMF_MAX_QUALITY - 8 * log2(step16 / 16.0) + 0.5);
    for (size_t i = 0; cap < PNMF_RES_WEIGHTS - 1 && i < (size_t)m * nb; i++)
        if (run->weights[i] > cap) run->weights[i] = (uint8_t)(cap < 0 ? 0 : cap);
    /* this coding's dictionary: the new poses' pixels are cut from its own frames */
    const int ret = md->spr.present ? pnmf_sprite_dict_copy(&rb->dict, &e->wdict) : 0;
    if (ret < 0) pnmf_res_run_end(run);
    return ret;
}

/* The run's frames up to frame upto (excluded); run->sse gets the squared
 * error of what the decoder will show of them. */
int pnmf_res_run_frames(ResRun *run, int upto)
{
    const PnmfEncoder *e = run->e;
    ResBufs *rb = run->rb;
    PnmfWindowModel *md = run->md;
    const size_t nb = (size_t)md->res.bx * md->res.by;
    int ret = 0;
    for (int j = run->j; ret >= 0 && j < upto; j++) {
        md->res.enc_weight = run->weights + (size_t)j * nb;
        md->res.enc_palette = run->palette && (j == 0 || e->continues);
        uint8_t *t = rb->Pp;
        rb->Pp = rb->P, rb->P = t;
        model_frame(e, rb, md, &rb->dict, j);
        const uint8_t *src = e->frames + (size_t)j * e->nv;
        /* window flags bit 18: the frame's weights, and its references weighted */
        if (run->wp && run->avail && (j || e->continues)) {
            int16_t *wo = md->res.wp + 2 * j;
            pnmf_enc_estimate_weights(src, rb->ref[0], e->nv, wo);
            /* and none where the source frame copies over PNMF_WP_SRC_COPY
             * of the one before it (a capture: at coarse steps its decoded
             * reference copies few samples, and weights against that
             * reference's blur cost more than they save; a camera clip
             * made from a compressed source copies up to 86 % of the still
             * parts, and there they pay) */
            if (j && (wo[0] != PNMF_RES_WP_ONE || wo[1]) && src_copies(src, src - e->nv, e->nv))
                wo[0] = PNMF_RES_WP_ONE, wo[1] = 0;
        }
        const uint8_t *rf[PNMF_RES_REFS];
        const uint8_t *const *refs = frame_refs(rb, &md->res, j, run->avail, e->nv, rf);
        if (!refs) {
            ret = PNMF_ERR_NOMEM;
            break;
        }
        ret = pnmf_residual_encode_frame_src(&md->res, j, src, j ? src - e->nv : NULL, rb->P, rb->Pp,
                                             refs, run->avail, rb->D,
                                         run->search_scale *
                                             (!j ? run->key_lambda
                                                 : run->casc16 && pnmf_residual_casc_frame(&md->res, j) ? run->casc_lambda
                                                                                               : run->lambda));
        /* the window filters its frames (window flags bit 7) when the
         * filter lowers its first frame's error: frame 0 is coded
         * unfiltered, then filtered or not as the choice says */
        if (j == 0 && ret >= 0) md->res.deblock = deblock_pays(&md->res, 0, src, rb->P, rb->Pp, rb->D, run->tmp, e->nv);
        if (j == 0 && !e->continues) memcpy(rb->key0, rb->D, e->nv); /* reference 15 under bit 21 */
        if (md->res.enc_dec) memcpy(md->res.enc_dec + (size_t)j * e->nv, rb->D, e->nv);
        /* the background matters within the window only to a sprite layer */
        if (md->spr.present) {
            pnmf_sprite_background_update(&rb->dict, &md->spr, j, e->vis_rows, e->vis_cols, rb->D, rb->B, rb->mark);
            pnmf_sprite_cut(&rb->dict, &md->spr, j, e->vis_cols, rb->D);
        }
        if (ret >= 0) run->sse += sq_error(src, rb->D, e->nv);
        pnmf_residual_push(rb->ref, &rb->D);
        if (run->avail < PNMF_RES_REFS) run->avail++;
        run->j = j + 1;
        if (run->j == 1) md->res.enc_pre_sse[0] = run->sse;
        if (run->j == md->res.enc_pre_at) md->res.enc_pre_sse[1] = run->sse;
    }
    md->res.enc_weight = NULL;
    return ret;
}

void pnmf_res_run_end(ResRun *run)
{
    pnmf_free(run->weights);
    pnmf_free(run->tmp);
    run->weights = run->tmp = NULL;
}

/* The residual layer over the quantized model (residual.h), frame by frame
 * in the decoder's order; *sse gets the squared error of what the decoder
 * will show. */
int pnmf_window_code_residual(const PnmfEncoder *e, ResBufs *rb, PnmfWindowModel *md, int m, int step16,
                              double *sse)
{
    ResRun run;
    *sse = 0;
    PNMF_CHECK(pnmf_res_run_start(&run, e, rb, md, m, step16));
    const int ret = pnmf_res_run_frames(&run, m);
    *sse = run.sse;
    pnmf_res_run_end(&run);
    return ret;
}

/* The codings of the window md the container chooses from: the residual
 * layer's levels as varints for zstd (which finds the exact repeats of
 * sprite animation), range-coded (smaller on everything else), or frame
 * 0's as varints and the others range-coded (a lossless first frame of
 * synthetic content, with zstd, and the rest in the stream); the third only
 * when frame 0 is lossless (step 1): a lossy first frame's levels go to
 * the stream as well as the others'. A lossless window (its decoded frames
 * kept) is offered the range-coded levels and the pixel levels in the
 * sample-context stream (format 9, lossless.h), alone and after frame 0's
 * varints: the varints of every frame, and frame 0's before the plain
 * range-coded stream, lose to those (the development set never keeps them)
 * and cost zstd's slowest levels on the largest payloads. *rc_from: the
 * first coding whose levels are range-coded. */
int pnmf_window_codings(PnmfWindowModel *md, uint8_t *c[PNMF_WINDOW_CODINGS], size_t size[PNMF_WINDOW_CODINGS],
                        int *n, int *rc_from)
{
    for (int a = 0; a < PNMF_WINDOW_CODINGS; a++) c[a] = NULL, size[a] = 0;
    *n = 0, *rc_from = 1;
    if (md->res.step16 && (pnmf_tx8_used(&md->res, 0, md->res.m) || pnmf_intra_used(&md->res, 0, md->res.m))) {
        /* 8x8 transform blocks or intra directions: the levels stream is
         * the only coding, its pixel levels in it or, in a lossy window
         * where the probe says it may pay, in the sample-context stream
         * (window flags bit 24) */
        const int ctx = md->res.enc_lxn != NULL && pnmf_lx_pays(&md->res, 0);
        if (ctx && !(md->res.enc_streams = pnmf_stream_keep_new())) return PNMF_ERR_NOMEM;
        int ret = 0;
        *n = 0, *rc_from = 0;
        for (int x = 0; x <= ctx && ret >= 0; x++) {
            md->res.rc_levels = 1, md->res.ctx_levels = x;
            ret = pnmf_model_write(md, &c[*n], &size[*n]);
            if (ret >= 0) (*n)++;
        }
        md->res.rc_levels = md->res.ctx_levels = 0;
        pnmf_stream_keep_free(md->res.enc_streams);
        md->res.enc_streams = NULL;
        return ret;
    }
    const int lossless = md->res.step16 && md->res.enc_dec != NULL;
    /* the codings differ in their levels alone: the modes and vectors
     * streams are made once for all of them */
    if (md->res.step16 && !(md->res.enc_streams = pnmf_stream_keep_new())) return PNMF_ERR_NOMEM;
    int ret = 0;
    if (!lossless) {
        ret = pnmf_model_write(md, &c[0], &size[0]);
        *n = 1;
    } else {
        *rc_from = 0;
    }
    if (ret >= 0 && md->res.step16) {
        const int nalt = md->res.key_step16 == PNMF_RES_MIN_STEP && md->res.start[1] > 0 &&
                                 md->res.start[1] < md->res.nlev ? 2 : 1;
        /* the sample-context codings where their probe says they may win */
        const int ctx = (md->res.enc_dec != NULL || md->res.enc_lxn != NULL) && pnmf_lx_pays(&md->res, 0);
        for (int x = 0; x <= ctx; x++)
            for (int a = 0; ret >= 0 && a < nalt; a++) {
                if (lossless && !x && a) continue;
                md->res.rc_levels = a + 1, md->res.ctx_levels = x;
                ret = pnmf_model_write(md, &c[*n], &size[*n]);
                if (ret >= 0) (*n)++;
            }
        md->res.rc_levels = md->res.ctx_levels = 0;
    }
    pnmf_stream_keep_free(md->res.enc_streams);
    md->res.enc_streams = NULL;
    return ret;
}

/* The bytes of the window md as the container would store it next, but
 * for the chunk's framing. */
int pnmf_window_bytes(const PnmfEncoder *e, PnmfWindowModel *md, int m, size_t *bytes)
{
    uint8_t *c[PNMF_WINDOW_CODINGS];
    size_t size[PNMF_WINDOW_CODINGS];
    int n, rc_from;
    int ret = pnmf_window_codings(md, c, size, &n, &rc_from);
    if (ret >= 0) ret = pnmf_container_window_bytes(e->cw, (uint32_t)m, (const uint8_t *const *)c, size, n, bytes);
    for (int a = 0; a < PNMF_WINDOW_CODINGS; a++) pnmf_free(c[a]);
    return ret;
}

/* One coding of the residual layer for pnmf_window_costs(): coded
 * into md in rb, serialized and compressed (zstd at a fast level: an
 * estimate for a decision, the container compresses again). */
typedef struct CostJob {
    const PnmfEncoder *e;
    ResBufs *rb;
    PnmfWindowModel *md;
    int m, step16, ret;
    double sse;
    size_t bytes;
} CostJob;

/* The bytes of md's window as a coding's cost counts them: the payload
 * at zstd's estimate level. */
static int estimate_bytes(const PnmfWindowModel *md, size_t *bytes)
{
    uint8_t *payload = NULL, *z = NULL;
    size_t size = 0;
    int ret = pnmf_model_write(md, &payload, &size);
    if (ret >= 0) ret = pnmf_entropy_compress(payload, size, PNMF_ESTIMATE_ZSTD_LEVEL, &z, bytes);
    pnmf_free(payload);
    pnmf_free(z);
    return ret;
}

static void *cost_job(void *arg)
{
    CostJob *c = arg;
    c->ret = pnmf_window_code_residual(c->e, c->rb, c->md, c->m, c->step16, &c->sse);
    if (c->ret >= 0) c->ret = estimate_bytes(c->md, &c->bytes);
    return NULL;
}

/* The residual layer of the window over md, and over no model at all
 * (into bare, an empty model of md's size), coded into each; for each,
 * the squared error and the cost j = squared error + lambda * 8 * bytes
 * (the bytes in *model_bytes, *bare_bytes).
 * The two codings are independent: with threads they run at once (the
 * same result). md's coding in rb[0], the other in rb[1]. */
int pnmf_window_costs(PnmfEncoder *e, PnmfWindowModel *md, PnmfWindowModel *bare, int m, int step16,
                      double j[2], double sse[2], size_t *model_bytes, size_t *bare_bytes)
{
    const double lambda = enc_residual_lambda(step16);
    /* the residual layer over no model does not depend on the model: a
     * caller that has it (bare coded, *bare_bytes set) passes it in */
    const int ready = *bare_bytes > 0;
    if (!ready) PNMF_CHECK(pnmf_model_alloc(bare, e->rows, e->cols, e->vis_rows, e->vis_cols, m, md->k, 0));
    ResBufs *own = &e->rb[0];
    CostJob c[2] = { { e, own, md, m, step16, 0, 0, 0 }, { e, &e->rb[1], bare, m, step16, 0, sse[1], *bare_bytes } };
    pthread_t th;
    const int two = !ready && enc_two_threads(e) && !pthread_create(&th, NULL, cost_job, &c[1]);
    cost_job(&c[0]);
    if (two) pthread_join(th, NULL);
    else if (!ready) c[1].rb = own, cost_job(&c[1]);
    PNMF_CHECK(c[0].ret);
    PNMF_CHECK(c[1].ret);
    for (int t = 0; t < 2; t++) sse[t] = c[t].sse, j[t] = sse[t] + lambda * 8 * (double)c[t].bytes;
    *model_bytes = c[0].bytes, *bare_bytes = c[1].bytes;
    pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: with the model %zu bytes, sse %.0f; without %zu bytes, sse %.0f",
             e->windows, c[0].bytes, sse[0], c[1].bytes, sse[1]);
    return 0;
}

int pnmf_res_run_cost(ResRun *run, double *j, size_t *bytes_out)
{
    /* the window's model written as if it ended after the frames coded */
    PnmfWindowModel *md = run->md;
    const int m = md->m, sm = md->spr.m, rm = md->res.m;
    md->m = md->res.m = run->j;
    if (md->spr.present) md->spr.m = run->j;
    size_t bytes = 0;
    const int ret = estimate_bytes(md, &bytes);
    md->m = m, md->spr.m = sm, md->res.m = rm;
    *j = run->sse + run->lambda * 8 * (double)bytes;
    if (bytes_out) *bytes_out = bytes;
    return ret;
}

/* The residual layer of the window over md alone, in rb[0]: its squared
 * error and its bytes as pnmf_window_costs() counts them. */
int pnmf_window_cost(PnmfEncoder *e, PnmfWindowModel *md, int m, int step16, double *sse, size_t *bytes)
{
    CostJob c = { e, &e->rb[0], md, m, step16, 0, 0, 0 };
    cost_job(&c);
    *sse = c.sse, *bytes = c.bytes;
    return c.ret;
}

/* Frame j of w decoded into b->D as the decoder decodes it (b's P and Pp
 * moved on a frame); a key window's frame 0 also into key0, which is
 * w->md.res.key0 (window flags bit 21). PNMF_ERR_NOMEM, or 0. */
static int decode_frame(const PnmfEncoder *e, ResBufs *b, EncWindow *w, int j, uint8_t *key0)
{
    uint8_t *t = b->Pp;
    b->Pp = b->P, b->P = t;
    model_frame(e, b, &w->md, &e->sdict, j);
    const uint8_t *rf[PNMF_RES_REFS];
    const uint8_t *const *refs = frame_refs(b, &w->md.res, j, -1, e->nv, rf);
    if (!refs) return PNMF_ERR_NOMEM;
    pnmf_residual_frame(&w->md.res, j, b->P, b->Pp, refs, b->D);
    if (j == 0 && !w->md.res.continues) memcpy(key0, b->D, e->nv);
    return 0;
}

/* The window's frames as shown (enc_internal.h), decoded again in rb[0]
 * (which pnmf_window_update_refs() restores), a key window's frame 0 for
 * reference 15 in rb[0]'s own key0. */
int pnmf_window_shown(PnmfEncoder *e, EncWindow *w, PnmfShownFn fn, void *ctx)
{
    if (w->md.spr.present) return PNMF_ERR_ARG;
    ResBufs *b = &e->rb[0];
    const uint8_t *key0 = w->md.res.key0;
    uint8_t *k0 = e->continues ? e->key0 : b->key0;
    w->md.res.key0 = k0;
    const size_t in_nv = (size_t)e->in_width * e->in_height;
    restore_refs(e, b);
    int ret = 0;
    for (int j = 0; j < w->m && ret >= 0; j++) {
        if ((ret = decode_frame(e, b, w, j, k0)) < 0) break;
        if (e->s.half) {
            pnmf_upsample2(b->D, e->height, e->width, e->half_up, e->in_width, e->in_height, e->in_width, e->half_tmp);
            ret = fn(ctx, e->half_up, e->half_src + (size_t)j * in_nv);
        } else {
            ret = fn(ctx, b->D, j == 0 && e->tf_on ? e->tf_source : e->frames + (size_t)j * e->nv);
        }
        pnmf_residual_push(b->ref, &b->D);
    }
    w->md.res.key0 = key0;
    return ret;
}

/* Update references: the decoder's model frame and last frames after this
 * window, which the next window predicts from (and its model, which the
 * next may carry), decoded from what is written exactly as the decoder
 * will decode it, so that encoder and decoder never drift apart. */
int pnmf_window_update_refs(PnmfEncoder *e, EncWindow *w)
{
    PNMF_CHECK(pnmf_model_track(&e->last, &w->md));
    if (!e->s.residual) return 0;
    PNMF_CHECK(pnmf_window_sprites_commit(e, w));
    ResBufs *b = &e->rb[0];
    w->md.res.key0 = e->key0; /* window flags bit 21: reference 15, this window's frame 0 once decoded */
    int avail = restore_refs(e, b);
    /* window flags bit 22: the frames shown through the restoration filter (pnmf_window_pfilter()) */
    if (w->md.res.pf.on) *(e->s.half ? &e->half_sse : &e->sse) += w->pf_dsse;
    for (int j = 0; j < w->m; j++) {
        PNMF_CHECK(decode_frame(e, b, w, j, e->key0));
        if (e->s.half) { /* the frame as a reader shows it, against the frame pushed */
            const size_t in_nv = (size_t)e->in_width * e->in_height;
            pnmf_upsample2(b->D, e->height, e->width, e->half_up, e->in_width, e->in_height, e->in_width, e->half_tmp);
            e->half_sse += sq_error(e->half_up, e->half_src + (size_t)j * in_nv, in_nv);
        }
        if (j == 0 && e->tf_on) /* coded against the filtered source (filter_first): its error against the source */
            e->sse += sq_error(b->D, e->tf_source, e->nv) - sq_error(b->D, e->frames, e->nv);
        pnmf_sprite_background_update(&e->sdict, &w->md.spr, j, e->vis_rows, e->vis_cols, b->D, b->B, b->mark);
        pnmf_sprite_cut(&e->sdict, &w->md.spr, j, e->vis_cols, b->D);
        pnmf_residual_push(b->ref, &b->D);
        if (avail < PNMF_RES_REFS) avail++;
    }
    memcpy(e->lastP, b->P, e->nv);
    memcpy(e->lastB, b->B, e->nv);
    for (int t = 0; t < PNMF_RES_REFS; t++) memcpy(e->lastRef[t], b->ref[t], e->nv);
    e->last_avail = avail;
    return 0;
}
