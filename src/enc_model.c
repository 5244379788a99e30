/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The window's model: carried over from the last window, probed, fitted
 * (PermNMF, or the two-level fit), checked partway, and kept only where it
 * pays for itself against the residual layer alone.
 */
#include <stdlib.h>
#include <string.h>

#include "diamond.h"
#include "enc_internal.h"
#include "internal.h"
#include "model_write.h"
#include "palette_enc.h"
#include "permnmf.h"
#include "quant.h"
#include "ratectl.h"
#include "residual.h"
#include "twolevel.h"

/* --two-level: the paper's section 3.4 on the window, then the combined
 * H_2^T <> H_1^T as entries (a component may appear several times in a
 * frame). The entries are quantized as fitted: the closed-loop H refit
 * and --refine work on one entry per component and frame and are not
 * run here. */
static int fit_two_level(PnmfEncoder *e, PnmfWindowModel *md, int m)
{
    const int k = e->s.components, K = e->s.two_level;
    const size_t n = e->n;
    PnmfFitParams p1 = { K, e->s.algo, e->s.iterations, e->s.inner_iters, e->s.restarts,
                         e->s.seed + (uint64_t)e->windows * 1000003u, PNMF_FIT_TOL, 0, 0, 0, 0, 0, &e->s.logger };
    PnmfFitParams p2 = p1;
    p2.k = k, p2.seed = p1.seed + 1;
    float *W1 = pnmf_malloc_array((size_t)K * n, sizeof(float));
    float *W = pnmf_malloc_array((size_t)k * n, sizeof(float));
    PnmfAtom *H1 = pnmf_malloc_array((size_t)m * K, sizeof(PnmfAtom));
    PnmfAtom *H2 = pnmf_malloc_array((size_t)K * k, sizeof(PnmfAtom));
    int *start = pnmf_malloc_array((size_t)m + 1, sizeof(int));
    PnmfTwoLevelEntry *ent = pnmf_malloc_array((size_t)m * K * k, sizeof(PnmfTwoLevelEntry));
    float *scale = pnmf_malloc_array((size_t)k, sizeof(float));
    int *q0 = pnmf_malloc_array((size_t)k, sizeof(int));
    int kept = 0, ret = PNMF_ERR_NOMEM;
    if (!W1 || !W || !H1 || !H2 || !start || !ent || !scale || !q0) goto done;
    ret = pnmf_twolevel_run(e->rows, e->cols, e->A, m, &p1, &p2, PNMF_TWO_LEVEL_DROP, e->s.threads, W1, H1, W, H2,
                            &kept, NULL, NULL);
    if (ret < 0) goto done;
    const int total = pnmf_twolevel_combine(e->rows, e->cols, m, K, k, H1, H2, start, ent);
    if (total < 0) {
        ret = total;
        goto done;
    }
    ret = pnmf_model_alloc(md, e->rows, e->cols, e->vis_rows, e->vis_cols, m, k, total);
    if (ret < 0) goto done;
    for (int i = 0; i < k; i++) {
        ret = pnmf_quant_component(e->rows, e->cols, W + (size_t)i * n, e->w_step, &md->comp[i], &scale[i], &q0[i]);
        if (ret < 0) goto done;
    }
    uint8_t *used = pnmf_calloc((size_t)k, 1);
    if (!used) {
        ret = PNMF_ERR_NOMEM;
        goto done;
    }
    for (int j = 0; j < m && ret >= 0; j++) {
        int run_i = -1, run = 0;
        for (int t = start[j]; t < start[j + 1] && ret >= 0; t++) {
            const int i = ent[t].component;
            if (!md->comp[i].bh) continue;
            const uint32_t c = pnmf_quant_coef(ent[t].r * scale[i], e->r_step);
            if (!c) continue;
            run = i == run_i ? run + 1 : 1;
            run_i = i;
            if (run > PNMF_MAX_OCCURRENCES) continue; /* the format's limit: the weakest go */
            used[i] = 1;
            ret = pnmf_model_add(md, j, i, c, pnmf_shift_compose(e->rows, e->cols, ent[t].p, q0[i]));
        }
    }
    for (int i = 0; i < k; i++)
        if (!used[i]) {
            pnmf_freep(&md->comp[i].lev);
            md->comp[i].bh = md->comp[i].bw = 0;
        }
    pnmf_free(used);
    pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: two-level, %d of %d level-1 components kept, %d entries",
             e->windows, kept, K, md->first[m]);
done:
    pnmf_free(W1), pnmf_free(W), pnmf_free(H1), pnmf_free(H2), pnmf_free(start), pnmf_free(ent);
    pnmf_free(scale), pnmf_free(q0);
    return ret;
}

/* The fit's torus. A fit's buffers (the frames in float, their residuals,
 * k components in several copies and their spectra) and its FFTs grow
 * with the torus; past PNMF_FIT_MAX_SAMPLES samples the model is fitted
 * on the frames averaged over d x d blocks, the least d that brings the
 * torus within it, and lifted to the frame's torus (lift_model): each
 * component sample a d x d block, each shift d times as far. A 1080p
 * window then fits in a few hundred MB, and its fit takes about 1/d^2 of
 * the time; the residual layer codes what the coarser model misses. The
 * torus model only: the vector model's and the canvas's shifts do not
 * scale so. */
void enc_fit_choose(PnmfEncoder *e)
{
    const EncGeometry g = { e->rows, e->cols, e->vis_rows, e->vis_cols, e->n };
    int d = 1;
    if (e->s.shift_model == PNMF_SHIFT_TORUS && e->s.components)
        while ((size_t)(e->rows / d) * (size_t)(e->cols / d) > PNMF_FIT_MAX_SAMPLES && e->rows / (d + 1) >= 8 &&
               e->cols / (d + 1) >= 8)
            d++;
    e->fit_d = d;
    e->geo[0] = g;
    e->geo[1] = (EncGeometry){ g.rows / d, g.cols / d, g.vis_rows / d, g.vis_cols / d,
                               (size_t)(g.rows / d) * (size_t)(g.cols / d) };
    e->fit_on = 0;
}

void enc_fit_geometry(PnmfEncoder *e, int on)
{
    if (e->fit_d == 1) return;
    const EncGeometry *g = &e->geo[!!on];
    e->rows = g->rows, e->cols = g->cols, e->vis_rows = g->vis_rows, e->vis_cols = g->vis_cols, e->n = g->n;
    e->fit_on = !!on;
}

/* A model made on the fit's torus, on the frame's (a no-op when they are
 * the same): each component sample repeated over a d x d block (carried
 * components are the last model's, on the frame's torus already), each
 * shift's rows and columns times d. The repeated levels cost little: each
 * is predicted by its left neighbour. */
static int lift_model(PnmfEncoder *e, PnmfWindowModel *md)
{
    const int d = e->fit_d;
    const EncGeometry *g = &e->geo[0];
    if (d == 1 || !md->comp || (md->rows == g->rows && md->cols == g->cols)) return 0;
    for (int i = 0; i < md->k && !md->carries; i++) {
        PnmfComp *c = &md->comp[i];
        if (!c->bh) continue;
        const int bh = c->bh * d, bw = c->bw * d;
        int16_t *lev = pnmf_malloc_array((size_t)bh * bw, sizeof(int16_t));
        if (!lev) return PNMF_ERR_NOMEM;
        for (int y = 0; y < bh; y++)
            for (int x = 0; x < bw; x++) lev[(size_t)y * bw + x] = c->lev[(size_t)(y / d) * c->bw + x / d];
        pnmf_free(c->lev);
        c->lev = lev, c->bh = bh, c->bw = bw;
    }
    for (int t = 0; md->first && t < md->first[md->m]; t++) {
        const int p = md->ent[t].p;
        md->ent[t].p = (p / md->cols) * d * g->cols + (p % md->cols) * d;
    }
    md->rows = g->rows, md->cols = g->cols, md->vis_rows = g->vis_rows, md->vis_cols = g->vis_cols;
    return 0;
}

/* The window's frames as floats on the fit's torus, in A: on a coarser
 * torus, each sample the mean of its d x d block of the frame. */
static void load_frames(PnmfEncoder *e, int m)
{
    const int d = e->fit_on ? e->fit_d : 1;
    const size_t stride = (size_t)e->geo[0].vis_cols;
    const float inv = 1.0f / (float)(d * d);
    for (int j = 0; j < m; j++) {
        const uint8_t *f = e->frames + (size_t)j * e->nv;
        float *a = e->A + (size_t)j * e->n;
        if (d == 1) {
            for (int y = 0; y < e->vis_rows; y++)
                for (int x = 0; x < e->vis_cols; x++) a[(size_t)y * e->cols + x] = f[(size_t)y * e->vis_cols + x];
            continue;
        }
        for (int y = 0; y < e->vis_rows; y++)
            for (int x = 0; x < e->vis_cols; x++) {
                unsigned sum = 0;
                for (int dy = 0; dy < d; dy++) {
                    const uint8_t *r = f + ((size_t)y * d + dy) * stride + (size_t)x * d;
                    for (int dx = 0; dx < d; dx++) sum += r[dx];
                }
                a[(size_t)y * e->cols + x] = (float)sum * inv;
            }
    }
}

/* The fit's frames in float (A) and the fitter, on the fit's torus: made
 * for each carry or fit and freed after it (fit_close), so that the
 * residual layer's codings, which follow, do not hold them too: at large
 * frame sizes each is among the encoder's largest buffers. */
static int fit_open(PnmfEncoder *e)
{
    const EncGeometry *g = &e->geo[1];
    if (!e->A && !(e->A = pnmf_malloc_array((size_t)e->s.window * g->n, sizeof(float)))) return PNMF_ERR_NOMEM;
    if (e->ft) return 0;
    PNMF_CHECK(pnmf_fitter_open(&e->ft, g->rows, g->cols, e->s.window, e->s.components, e->s.threads));
    return pnmf_fitter_set_options(e->ft, g->vis_rows, g->vis_cols, e->s.signed_components);
}

static void fit_close(PnmfEncoder *e)
{
    pnmf_fitter_close(&e->ft);
    pnmf_freep(&e->A);
}

/* Component c of the last model (on the frame's torus), dequantized onto
 * the torus in use: on a coarser one, averaged over d x d blocks. */
static void last_component(PnmfEncoder *e, const PnmfComp *c, float *w)
{
    if (!e->fit_on) {
        pnmf_dequant_component(e->rows, e->cols, c, e->w_step, w);
        return;
    }
    const int d = e->fit_d;
    const float f = (float)e->w_step / 256.0f / (float)(d * d);
    memset(w, 0, e->n * sizeof(float));
    for (int y = 0; y < c->bh; y++)
        for (int x = 0; x < c->bw; x++)
            w[(size_t)(y / d % e->rows) * e->cols + (size_t)(x / d % e->cols)] += c->lev[(size_t)y * c->bw + x] * f;
}

/* The window's entries over the last model's components as the decoder
 * has them (md->carries: the payload holds no component): the quantized
 * components fixed, an H step from zero against the frames (twice, with
 * the canvas's invisible part imputed from the first), its coefficients
 * quantized. No fit, no W step: a few correlations per frame. */
static int carry_on_fit_torus(PnmfEncoder *e, PnmfWindowModel *md, int m)
{
    const int k = e->s.components;
    float *W = e->Wtry;
    for (int i = 0; i < k; i++) last_component(e, &e->last.comp[i], W + (size_t)i * e->n);
    load_frames(e, m);
    PNMF_CHECK(pnmf_fitter_set_frames(e->ft, e->A, m));
    memset(e->H, 0, (size_t)m * k * sizeof(PnmfAtom));
    const int mode = e->s.algo == PNMF_ALGO_IMPROVED ? PNMF_H_GREEDY : PNMF_H_CYCLIC;
    for (int pass = 0; pass < 2; pass++) {
        PNMF_CHECK(pnmf_fitter_impute(e->ft, W, k, e->H));
        PNMF_CHECK(pnmf_fitter_h_step(e->ft, W, k, e->H, mode, e->s.inner_iters));
    }
    PNMF_CHECK(pnmf_model_alloc(md, e->rows, e->cols, e->vis_rows, e->vis_cols, m, k, m * k));
    md->carries = 1;
    PNMF_CHECK(pnmf_model_copy_components(md, &e->last));
    return pnmf_window_add_entries(e, md, m, W, NULL);
}

/* carry_on_fit_torus() on the fit's torus, its model lifted to the frame's. */
static int carry_model(PnmfEncoder *e, PnmfWindowModel *md, int m)
{
    int ret = fit_open(e);
    enc_fit_geometry(e, 1);
    if (ret >= 0) ret = carry_on_fit_torus(e, md, m);
    enc_fit_geometry(e, 0);
    fit_close(e);
    return ret < 0 ? ret : lift_model(e, md);
}

/* A full fit that follows a probe stops after its automatic size and
 * PNMF_CHECK_ITERS iterations when the model, coded as the probe's is (no
 * closed-loop refit), costs more than PNMF_CHECK_MARGIN times the residual
 * layer alone (squared error + lambda * bits) or takes more than
 * PNMF_PROBE_BYTES times its bytes (the probe's bytes test): the window
 * goes without a model, and the next PNMF_PROBE_SKIPS windows are not
 * probed (a fit that fails after the probe passed it is far from paying
 * whichever test stopped it; a probe alone skips windows on its cost
 * ratio only). The probe's
 * single iteration cannot tell apart models that will pay from those that
 * will not; two iterations after the automatic size can. A fit that goes
 * on is the one it would have been without the check
 * (PnmfFitParams.warm_it). */
typedef struct FitCheck {
    PnmfWindowModel *bare;
    double bare_sse;
    size_t bare_bytes;
    int step16;
    int dropped;
} FitCheck;

static int check_fit(PnmfEncoder *e, int m, FitCheck *c)
{
    const size_t kn = (size_t)e->s.components * e->n, hn = (size_t)m * e->s.components;
    float *W = pnmf_malloc_array(kn, sizeof(float));
    PnmfAtom *H = pnmf_malloc_array(hn, sizeof(PnmfAtom));
    int ret = W && H ? 0 : PNMF_ERR_NOMEM;
    PnmfWindowModel md;
    memset(&md, 0, sizeof(md));
    if (ret >= 0) {
        memcpy(W, e->W, kn * sizeof(float));
        memcpy(H, e->H, hn * sizeof(PnmfAtom));
        /* quantized as the probe's model is: no closed-loop refit */
        const int refine = e->s.refine;
        e->s.refine = 0, e->probing = 1;
        ret = pnmf_model_alloc(&md, e->rows, e->cols, e->vis_rows, e->vis_cols, m, e->s.components,
                               m * e->s.components);
        if (ret >= 0) ret = pnmf_window_quantize(e, &md, m);
        e->s.refine = refine, e->probing = 0;
    }
    double j[2], sse[2] = { 0, c->bare_sse };
    size_t model_bytes = 0, bare_bytes = c->bare_bytes;
    if (ret >= 0) { /* coded on the frame's torus */
        enc_fit_geometry(e, 0);
        ret = lift_model(e, &md);
        if (ret >= 0) ret = pnmf_window_costs(e, &md, c->bare, m, c->step16, j, sse, &model_bytes, &bare_bytes);
        enc_fit_geometry(e, 1);
    }
    if (ret >= 0) {
        c->dropped = j[0] > PNMF_CHECK_MARGIN * j[1] || (double)model_bytes > PNMF_PROBE_BYTES * (double)bare_bytes;
        pnmf_log(&e->s.logger, PNMF_LOG_INFO, "window %d: after %d iterations: %s (cost ratio %.3f, bytes ratio %.3f)",
                 e->windows, PNMF_CHECK_ITERS, c->dropped ? "no model" : "fit on", j[0] / j[1],
                 bare_bytes ? (double)model_bytes / (double)bare_bytes : 0.0);
        memcpy(e->W, W, kn * sizeof(float));
        memcpy(e->H, H, hn * sizeof(PnmfAtom));
        /* the fit's imputation, which the coding's replaced */
        ret = pnmf_fitter_impute(e->ft, e->W, e->s.components, e->H);
    }
    pnmf_model_free(&md);
    pnmf_free(W);
    pnmf_free(H);
    return ret;
}

/* Fit PermNMF to the window (or the two-level fit) and quantize it into
 * md, closed loop; with --repeats, the model with repeated entries tried
 * too (e->alt). chk: check the fit partway (check_fit), or NULL. On the
 * torus in use. */
static int fit_on_fit_torus(PnmfEncoder *e, PnmfWindowModel *md, int m, FitCheck *chk)
{
    const int k = e->s.components;
    load_frames(e, m);
    if (e->s.two_level) return fit_two_level(e, md, m);
    PNMF_CHECK(pnmf_fitter_set_frames(e->ft, e->A, m));
    /* the automatic size in full fits (not in the probe's one iteration) */
    const double add_lambda =
        e->s.auto_k && e->s.iterations > 1 ? enc_quality_lambda(e) : 0;
    PnmfFitParams p = { k, e->s.algo, e->s.iterations, e->s.inner_iters, e->s.restarts,
                        e->s.seed + (uint64_t)e->windows * 1000003u, PNMF_FIT_TOL, add_lambda, e->probing,
                        e->s.recentre, 0, 0, &e->s.logger };
    const int staged = chk && e->s.restarts == 1 && e->s.iterations > PNMF_CHECK_ITERS;
    if (staged) p.iterations = PNMF_CHECK_ITERS;
    PnmfFitStats st = { 0 };
    /* the objective after every iteration, for the log */
    if (pnmf_log_on(&e->s.logger)) st.trace = pnmf_malloc_array((size_t)e->s.iterations + 1, sizeof(double));
    int ret = pnmf_fitter_fit(e->ft, &p, e->W, e->H, &st);
    if (ret >= 0 && staged && st.iterations == PNMF_CHECK_ITERS) {
        ret = check_fit(e, m, chk);
        if (ret >= 0 && chk->dropped) {
            pnmf_freep(&st.trace);
            return 0;
        }
        if (ret >= 0) { /* the rest of the fit, its statistics added to the first part's */
            PnmfFitStats more = { 0 };
            more.trace = st.trace ? st.trace + PNMF_CHECK_ITERS : NULL;
            p.warm_k = st.k_used, p.warm_it = PNMF_CHECK_ITERS, p.add_lambda = 0;
            p.iterations = e->s.iterations - PNMF_CHECK_ITERS;
            ret = pnmf_fitter_fit(e->ft, &p, e->W, e->H, &more);
            st.objective = more.objective, st.iterations += more.iterations;
            st.guard_rejects_h += more.guard_rejects_h, st.guard_rejects_w += more.guard_rejects_w;
            st.seconds_h += more.seconds_h, st.seconds_w += more.seconds_w;
        }
    }
    if (st.trace && ret >= 0)
        for (int t = 0; t <= st.iterations; t++)
            pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "  it %d: %.6g", t, st.trace[t]);
    pnmf_freep(&st.trace);
    PNMF_CHECK(ret);
    e->objective += st.objective;
    pnmf_log(&e->s.logger, PNMF_LOG_DEBUG,
             "window %d: objective %.6g after %d iterations (restart %d), %d guard rejects; "
             "seconds: init %.2f, H steps %.2f, W steps %.2f",
             e->windows, st.objective, st.iterations, st.best_restart, st.guard_rejects_h + st.guard_rejects_w,
             st.seconds_init, st.seconds_h, st.seconds_w);
    PNMF_CHECK(pnmf_model_alloc(md, e->rows, e->cols, e->vis_rows, e->vis_cols, m, k, m * k));
    if (!e->s.repeats || e->probing) return pnmf_window_quantize(e, md, m);
    /* the fit, before pnmf_window_quantize() refines it: where repeats start */
    float *W0 = pnmf_malloc_array((size_t)k * e->n, sizeof(float));
    PnmfAtom *H0 = pnmf_malloc_array((size_t)m * k, sizeof(PnmfAtom));
    ret = W0 && H0 ? 0 : PNMF_ERR_NOMEM;
    if (ret >= 0) {
        memcpy(W0, e->W, (size_t)k * e->n * sizeof(float));
        memcpy(H0, e->H, (size_t)m * k * sizeof(PnmfAtom));
        ret = pnmf_window_quantize(e, md, m);
    }
    if (ret >= 0) ret = pnmf_window_try_repeats(e, md, m, W0, H0);
    pnmf_free(W0);
    pnmf_free(H0);
    return ret;
}

/* fit_on_fit_torus() on the fit's torus, its models lifted to the frame's. */
static int fit_model(PnmfEncoder *e, PnmfWindowModel *md, int m, FitCheck *chk)
{
    int ret = fit_open(e);
    enc_fit_geometry(e, 1);
    if (ret >= 0) ret = fit_on_fit_torus(e, md, m, chk);
    enc_fit_geometry(e, 0);
    fit_close(e);
    if (ret >= 0) ret = lift_model(e, md);
    if (ret >= 0) ret = lift_model(e, &e->alt);
    return ret;
}

/* With the residual layer, a full fit is wasted on a window whose model
 * cannot pay for itself. A probe (one ALS iteration of PNMF_PROBE_SWEEPS
 * sweeps, no refinement) is coded both ways first; when the residual layer
 * alone beats it by the probe's margins, in squared error + lambda * bits
 * or in bytes, the window is coded without a model and the full fit is
 * skipped. A probe far from paying also skips the next windows' probes. */
static int probe_model(PnmfEncoder *e, int m, int step16, int *drop, PnmfWindowModel *bare,
                       double *bare_sse, size_t *bare_bytes)
{
    *drop = 0;
    PnmfWindowModel md;
    memset(&md, 0, sizeof(md));
    const int iters = e->s.iterations, refine = e->s.refine;
    const double objective = e->objective;
    const int inner = e->s.inner_iters;
    e->s.iterations = 1, e->s.refine = 0;
    e->s.inner_iters = PNMF_PROBE_SWEEPS;
    const double t0 = enc_now();
    e->probing = 1;
    int ret = fit_model(e, &md, m, NULL);
    e->probing = 0;
    e->s.iterations = iters, e->s.refine = refine, e->objective = objective, e->s.inner_iters = inner;
    const double t1 = enc_now();
    e->t_probe += t1 - t0;
    double j[2], sse[2] = { 0, *bare_sse }; /* the bare coding's, when the caller has it */
    size_t model_bytes = 0;
    if (ret >= 0) ret = pnmf_window_costs(e, &md, bare, m, step16, j, sse, &model_bytes, bare_bytes);
    e->t_residual += enc_now() - t1;
    if (ret >= 0) {
        const double margin = enc_picks(&e->s) ? PNMF_PROBE_MARGIN_FIXED : PNMF_PROBE_MARGIN;
        *drop = j[0] > margin * j[1] || (double)model_bytes > PNMF_PROBE_BYTES * (double)*bare_bytes;
        if (j[0] > PNMF_PROBE_FAR * j[1]) e->probe_skips = PNMF_PROBE_SKIPS;
        *bare_sse = sse[1];
        pnmf_log(&e->s.logger, PNMF_LOG_INFO, "window %d: probe: %s (cost ratio %.3f)", e->windows,
                 *drop ? "no model" : "full fit", j[0] / j[1]);
    }
    pnmf_model_free(&md);
    return ret;
}


/* Carry: a window that continues the last one first tries the last
 * model's components as they are, only its coefficients found anew; when
 * that costs less than the residual layer alone, the window is coded (no
 * probe, no fit): a scene that keeps its sprites keeps its components. */
int pnmf_window_carry(PnmfEncoder *e, EncWindow *w)
{
    if (w->sprites || !(e->s.carry && e->continues && e->s.components && !e->s.two_level && e->last.k == e->s.components &&
          pnmf_model_has_components(&e->last)))
        return 0;
    double j[2], sse[2] = { 0, 0 };
    size_t model_bytes;
    int ret = carry_model(e, &w->md, w->m);
    if (ret >= 0) ret = pnmf_window_costs(e, &w->md, &w->bare, w->m, w->step16, j, sse, &model_bytes, &w->bare_bytes);
    w->bare_sse = sse[1];
    if (ret >= 0 && j[0] < j[1]) w->carried = 1, w->sse = sse[0];
    else pnmf_model_free(&w->md);
    if (ret >= 0)
        pnmf_log(&e->s.logger, PNMF_LOG_INFO, "window %d: carried components: %s (cost ratio %.3f)", e->windows,
                 w->carried ? "kept" : "dropped", j[0] / j[1]);
    return ret;
}

/* Probe: before a full fit, whether one can pay (probe_model); a window
 * after a probe far from paying goes without a model, unprobed. Only with
 * the residual layer (the alternative a model must beat) and a fit of
 * more than one iteration (the probe would be the fit). A window the
 * sprite search's repeat gate found without sprite animation (a lossy
 * window whose blobs seldom recur: filmed or rendered footage) goes
 * without a model, unprobed: components are parts that recur, shifted,
 * from frame to frame, and on the development set's smooth clips no
 * probe of such a window pays while the probe (its fit and two codings)
 * takes half the encode (docs/speed.md, "Smooth clips"). */
int pnmf_window_probe(PnmfEncoder *e, EncWindow *w)
{
    if (w->carried || w->sprites || !e->s.components || !e->s.residual || e->s.two_level || e->s.iterations <= 1)
        return 0;
    if (!e->s.quality && enc_picks(&e->s)) {
        /* -q 0 codes the window lossless, where the components' prediction
         * saves less than their bytes: no model, no fit */
        w->drop = 1;
        return 0;
    }
    if (w->unrepeated) {
        w->drop = 1;
        pnmf_log(&e->s.logger, PNMF_LOG_INFO, "window %d: no model (no sprite animation: no recurring parts)",
                 e->windows);
        return 0;
    }
    if (e->probe_skips > 0) {
        e->probe_skips--, w->drop = 1;
        pnmf_log(&e->s.logger, PNMF_LOG_INFO, "window %d: no model (the probe far from paying)", e->windows);
        return 0;
    }
    return probe_model(e, w->m, w->step16, &w->drop, &w->bare, &w->bare_sse, &w->bare_bytes);
}

/* Fit: the window's model, fitted and quantized, unless it was carried or
 * the probe dropped it (then the probe's coding over no model, or an
 * empty model, is the window). A fit that follows a probe is checked
 * partway and, when it cannot pay, stopped the same way. */
int pnmf_window_fit(PnmfEncoder *e, EncWindow *w)
{
    if (w->carried || w->sprites) return 0;
    const int m = w->m;
    if (e->s.components && !w->drop) {
        FitCheck chk = { &w->bare, w->bare_sse, w->bare_bytes, w->step16, 0 };
        const double t0 = enc_now();
        const int ret = fit_model(e, &w->md, m, w->bare_bytes ? &chk : NULL);
        e->t_fit += enc_now() - t0;
        if (ret < 0 || !chk.dropped) return ret;
        e->probe_skips = PNMF_PROBE_SKIPS, e->fits_stopped++;
    } else if (!w->bare_bytes) {
        return pnmf_model_alloc(&w->md, e->rows, e->cols, e->vis_rows, e->vis_cols, m,
                                e->s.components ? e->s.components : 1, 0);
    }
    /* the probe's coding over no model: the window */
    w->md = w->bare, w->bare_bytes = 0;
    memset(&w->bare, 0, sizeof(w->bare));
    w->sse = w->bare_sse;
    return 0;
}

/* The squared error of the model alone (no residual layer), frame by frame. */
static void model_only_sse(PnmfEncoder *e, EncWindow *w)
{
    for (int j = 0; j < w->m; j++) {
        pnmf_diamond_int(&w->md, j, e->w_step, e->r_step, e->rb[0].acc, e->rec);
        const uint8_t *src = e->frames + (size_t)j * e->nv;
        for (size_t q = 0; q < e->nv; q++) {
            const int d = (int)src[q] - e->rec[q];
            w->sse += d * d;
        }
    }
}

/* Keep: with the residual layer, the window's model is kept only when the
 * residual layer over it costs less (squared error + lambda * bits) than
 * over no model at all, so parts are sent only where they pay for
 * themselves; the model with repeated entries (--repeats) is weighed the
 * same way. A window without a model gets its residual layer coded here,
 * at the first step the pick tries where the step is picked. Without the
 * residual layer the model is the window: its squared error. */
static int keep_model(PnmfEncoder *e, EncWindow *w)
{
    const int m = w->m;
    if (!e->s.residual) {
        model_only_sse(e, w);
        return 0;
    }
    if (w->carried || w->sprites) return 0; /* coded, and kept, by the carry or the sprite step */
    if (!(w->md.first[m] > 0)) {
        if (w->md.res.step16) return 0; /* the probe's coding */
        /* a window without sprite animation (filmed or rendered footage,
         * coded with noise at every step; not a screen, whose exact areas
         * -q 16's coding can find) from -q PNMF_PICK_NO_FLOOR_Q up:
         * first coded at the grid step at or below -q's, which the pick
         * codes anyway; -q 16's coding, far finer and larger, neither
         * wins there nor bounds the pick (choose_step(); the smooth
         * clips' files at every -q of pnmf-compare's ladder and at -q 24
         * are the same without it, docs/speed.md) */
        w->no_floor = enc_picks(&e->s) && e->s.quality >= PNMF_PICK_NO_FLOOR_Q && w->unrepeated &&
                      !w->floor_bare.res.step16 && !pnmf_model_has_components(&w->md) &&
                      !enc_screen_like(e);
        const int step16 = w->no_floor ? pnmf_residual_step(pnmf_pick_lo_quality(e->s.quality))
                                       : enc_pick_first_step(e, w->step16);
        if (w->floor_bare.res.step16 == step16 && !pnmf_model_has_components(&w->md)) {
            /* the sprite step's coding over no model, at this step */
            pnmf_model_free(&w->md);
            w->md = w->floor_bare, w->sse = w->floor_sse;
            memset(&w->floor_bare, 0, sizeof(w->floor_bare));
            return 0;
        }
        return pnmf_window_code_residual(e, &e->rb[0], &w->md, m, step16, &w->sse);
    }
    double j[2], sse[2] = { 0, w->bare_sse };
    size_t model_bytes;
    int ret = pnmf_window_costs(e, &w->md, &w->bare, m, w->step16, j, sse, &model_bytes, &w->bare_bytes);
    w->sse = sse[0];
    if (ret >= 0 && e->alt.first && e->alt.first[m] > 0) {
        /* the model with repeated entries: kept when it costs less than the
         * one-entry model */
        double alt_sse;
        size_t alt_bytes;
        ret = pnmf_window_cost(e, &e->alt, m, w->step16, &alt_sse, &alt_bytes);
        const double ja = alt_sse + enc_residual_lambda(w->step16) * 8 * (double)alt_bytes;
        pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: with repeats %zu bytes, sse %.0f: %s", e->windows,
                 alt_bytes, alt_sse, ja < j[0] ? "kept" : "dropped");
        if (ret >= 0 && ja < j[0]) {
            const PnmfWindowModel t = w->md;
            w->md = e->alt, e->alt = t;
            j[0] = ja, w->sse = alt_sse;
            e->repeated += e->alt_extra;
        }
    }
    pnmf_model_free(&e->alt);
    w->bare_sse = sse[1];
    if (ret >= 0 && j[1] < j[0]) {
        const PnmfWindowModel t = w->md;
        w->md = w->bare, w->bare = t;
        w->bare_sse = w->sse, w->sse = sse[1];
    }
    return ret;
}

/* A coding with no components, no entries, no sprite layer and none
 * carried reduced to one empty component, as `-k 0` writes it. */
static void one_empty_component(PnmfWindowModel *md)
{
    if (!md->comp || !md->first || md->k <= 1 || md->carries || pnmf_model_present(md) ||
        pnmf_model_has_components(md))
        return;
    for (int i = 1; i < md->k; i++) pnmf_free(md->comp[i].lev);
    md->k = 1;
}

/* A window left with no model (neither its coding nor the one it is
 * weighed against has one) goes to the step pick with one empty
 * component: the pick, which weighs the window's bytes, then sees the
 * bytes `-k 0` codes and picks what `-k 0` picks, where -k's empty
 * components (one count per component and frame) move zstd's output by a
 * few bytes and can tip a pick between two steps of about equal cost
 * (pingus_pan -q 54: 1 byte in window 1, which then takes the coarser
 * step, 0.9 dB lower over the file). Windows with a model keep -k's
 * components: both codings the pick weighs count the same. A lossless
 * window (-q 0) is coded once, with no pick to tip, and keeps them too:
 * there one empty component makes the encode about a third slower
 * (pingus_pan), for no byte the pick could use. */
int pnmf_window_keep(PnmfEncoder *e, EncWindow *w)
{
    const int ret = keep_model(e, w);
    if (ret >= 0 && e->s.residual && !(!e->s.quality && enc_picks(&e->s)) && w->md.first && !pnmf_model_present(&w->md) && !pnmf_model_has_components(&w->md) &&
        !(w->bare.first && (pnmf_model_present(&w->bare) || pnmf_model_has_components(&w->bare)))) {
        one_empty_component(&w->md);
        one_empty_component(&w->floor_bare);
    }
    return ret;
}

/* Before the write: a window reduced to one empty component (above) is
 * written with -k's empty components where the container stores that in
 * fewer bytes (zstd's output moves by some bytes either way with the
 * payload's run of zero counts); the decoded frames are the same. One
 * more compression of the window (the other is the pick's, remembered by
 * the container). */
int pnmf_window_empty_k(PnmfEncoder *e, EncWindow *w)
{
    PnmfWindowModel *md = &w->md;
    const int k = e->s.components;
    if (!e->s.residual || !md->first || !md->res.step16 || md->k != 1 || k <= 1 || md->carries ||
        pnmf_model_present(md) || pnmf_model_has_components(md))
        return 0;
    size_t one, many;
    int ret = pnmf_window_bytes(e, md, md->m, &one);
    PnmfComp *c = ret >= 0 ? pnmf_realloc(md->comp, (size_t)k * sizeof(*c)) : NULL;
    if (ret < 0) return ret;
    if (!c) return PNMF_ERR_NOMEM;
    memset(c + 1, 0, (size_t)(k - 1) * sizeof(*c));
    md->comp = c, md->k = k;
    ret = pnmf_window_bytes(e, md, md->m, &many);
    if (ret < 0 || many >= one) md->k = 1;
    return ret;
}
