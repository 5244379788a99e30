/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fitted model quantized: components and coefficients on the
 * format's steps, closed loop (the coefficients refitted against what the
 * decoder will have), and the model with repeated entries tried.
 */
#include <stdlib.h>
#include <string.h>

#include "enc_internal.h"
#include "internal.h"
#include "model_write.h"
#include "permnmf.h"
#include "quant.h"
#include "repeats.h"

/* Quantize the components W into md and e->Wq; with H, move its atoms to
 * match the blocks' new origins and scales. */
static int quantize_components(PnmfEncoder *e, PnmfWindowModel *md, const float *W, PnmfAtom *H, int m)
{
    const int k = e->s.components;
    for (int i = 0; i < k; i++) {
        float scale;
        int q0;
        pnmf_freep(&md->comp[i].lev);
        PNMF_CHECK(pnmf_quant_component(e->rows, e->cols, W + i * e->n, e->w_step, &md->comp[i],
                                        &scale, &q0));
        pnmf_dequant_component(e->rows, e->cols, &md->comp[i], e->w_step, e->Wq + i * e->n);
        if (!H) continue;
        for (int j = 0; j < m; j++) {
            PnmfAtom *a = &H[j * k + i];
            a->r *= scale;
            a->p = pnmf_shift_compose(e->rows, e->cols, a->p, q0);
            if (!md->comp[i].bh) a->r = 0;
        }
    }
    return 0;
}

/* Canvas model: pixels of a component that no entry ever shows cost bytes
 * and change nothing; zero them (their denominator in the W step is 0). */
static void hide_invisible(PnmfEncoder *e, float *W, const PnmfAtom *H, int m)
{
    if (e->vis_rows == e->rows && e->vis_cols == e->cols) return;
    const int k = e->s.components, rows = e->rows, cols = e->cols;
    uint8_t *seen = e->seen;
    for (int i = 0; i < k; i++) {
        memset(seen, 0, e->n);
        for (int j = 0; j < m; j++) {
            const PnmfAtom a = H[j * k + i];
            if (a.r == 0) continue;
            const int py = a.p / cols, px = a.p % cols;
            /* sample (y, x) of the component lands on ((y+py) mod rows, (x+px) mod cols) */
            for (int vy = 0; vy < e->vis_rows; vy++) {
                const int y = (vy - py + rows) % rows;
                for (int vx = 0; vx < e->vis_cols; vx++) seen[(size_t)y * cols + (vx - px + cols) % cols] = 1;
            }
        }
        float *w = W + (size_t)i * e->n;
        for (size_t q = 0; q < e->n; q++)
            if (!seen[q]) w[q] = 0;
    }
}

/* Frame by frame, the entries of H (e->H, one atom per component) with
 * their coefficients quantized (above) into md, against the dequantized
 * components Wq; used[i] set for each component with an entry. A
 * coefficient whose quantized value differs from the same component's in
 * the frame before keeps that value when the squared error this adds
 * costs less than PNMF_COEF_STICK_BITS bits: a repeated value costs zstd
 * next to nothing, and a sprite whose scale does not flicker is what the
 * residual layer's motion prediction (D_{j-1} + P_j - P_{j-1}) carries on
 * cleanly. */
int pnmf_window_add_entries(PnmfEncoder *e, PnmfWindowModel *md, int m, const float *Wq, uint8_t *used)
{
    const int k = md->k;
    uint32_t *prevc = pnmf_calloc(k, sizeof(uint32_t));
    double *energy = pnmf_calloc(k, sizeof(double));
    int ret = prevc && energy ? 0 : PNMF_ERR_NOMEM;
    const double lambda = enc_quality_lambda(e);
    for (int i = 0; ret >= 0 && i < k; i++) {
        const float *w = Wq + (size_t)i * e->n;
        for (size_t q = 0; q < e->n; q++) energy[i] += (double)w[q] * w[q];
    }
    for (int j = 0; ret >= 0 && j < m; j++)
        for (int i = 0; ret >= 0 && i < k; i++) {
            const PnmfAtom a = e->H[j * k + i];
            uint32_t c = pnmf_quant_coef(a.r, e->r_step);
            if (c && prevc[i] && c != prevc[i]) {
                const double d0 = pnmf_dequant_coef(c, e->r_step) - a.r;
                const double d1 = pnmf_dequant_coef(prevc[i], e->r_step) - a.r;
                if ((d1 * d1 - d0 * d0) * energy[i] < lambda * PNMF_COEF_STICK_BITS) c = prevc[i];
            }
            prevc[i] = c;
            if (!c || !md->comp[i].bh) continue;
            if (used) used[i] = 1;
            ret = pnmf_model_add(md, j, i, c, a.p);
        }
    pnmf_free(prevc);
    pnmf_free(energy);
    return ret;
}

/*
 * Closed loop: quantize the fitted components and refit H against what the
 * decoder will have. Then refine with the quantizer in the loop: an exact
 * W step from the quantized components with the refitted H, quantize
 * again, refit H; a pass is kept only if it lowers the objective of the
 * quantized model. Quantization noise of dense components is what costs
 * most after the fit, and these passes remove much of it.
 */
int pnmf_window_quantize(PnmfEncoder *e, PnmfWindowModel *md, int m)
{
    const int k = e->s.components;
    const size_t kn = (size_t)k * e->n;
    const int mode = e->s.algo == PNMF_ALGO_IMPROVED ? PNMF_H_GREEDY : PNMF_H_CYCLIC;
    hide_invisible(e, e->W, e->H, m);
    PNMF_CHECK(quantize_components(e, md, e->W, e->H, m));
    double best = 0;
    if (!e->probing) {
        /* the invisible part must show the model being refitted (EM), or the
         * H step would chase what the previous model put there */
        PNMF_CHECK(pnmf_fitter_impute(e->ft, e->Wq, k, e->H));
        PNMF_CHECK(pnmf_fitter_h_step(e->ft, e->Wq, k, e->H, mode, e->s.inner_iters));
        best = pnmf_fitter_objective(e->ft, e->Wq, k, e->H);
    }
    pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "quantized: objective %.6g", best);
    float *src = e->W, *try = e->Wtry;
    for (int pass = 0; pass < e->s.refine; pass++) {
        memcpy(try, e->Wq, kn * sizeof(float));
        PNMF_CHECK(pnmf_fitter_impute(e->ft, e->Wq, k, e->H));
        int ret = pnmf_fitter_w_step(e->ft, try, k, e->H, PNMF_W_HALS, 1);
        if (ret < 0) return ret;
        memcpy(e->Hsave, e->H, (size_t)m * k * sizeof(PnmfAtom));
        hide_invisible(e, try, e->H, m);
        PNMF_CHECK(quantize_components(e, md, try, e->H, m));
        PNMF_CHECK(pnmf_fitter_impute(e->ft, e->Wq, k, e->H));
        PNMF_CHECK(pnmf_fitter_h_step(e->ft, e->Wq, k, e->H, mode, e->s.inner_iters));
        const double f = pnmf_fitter_objective(e->ft, e->Wq, k, e->H);
        if (f < best) {
            best = f;
            float *t = src;
            src = try, try = t;
            continue;
        }
        /* worse: back to the previous pass's model */
        memcpy(e->H, e->Hsave, (size_t)m * k * sizeof(PnmfAtom));
        PNMF_CHECK(quantize_components(e, md, src, NULL, m));
        break;
    }
    uint8_t *used = pnmf_calloc(k, 1);
    if (!used) return PNMF_ERR_NOMEM;
    int ret = pnmf_window_add_entries(e, md, m, e->Wq, used);
    if (ret < 0) {
        pnmf_free(used);
        return ret;
    }
    for (int i = 0; i < k; i++)
        if (!used[i]) { /* nothing refers to it: send an empty block */
            pnmf_freep(&md->comp[i].lev);
            md->comp[i].bh = md->comp[i].bw = 0;
        }
    pnmf_free(used);
    return 0;
}


/* The squared error of md's reconstruction in floats (as the fit sees it). */
static double model_sse(PnmfEncoder *e, PnmfRepFit *f, const PnmfWindowModel *md)
{
    for (int i = 0; i < md->k; i++)
        pnmf_dequant_component(e->rows, e->cols, &md->comp[i], e->w_step, f->W + (size_t)i * e->n);
    for (int j = 0; j < f->m; j++) {
        f->cnt[j] = 0;
        for (int t = md->first[j]; t < md->first[j + 1] && f->cnt[j] < f->cap; t++)
            f->ent[(size_t)j * f->cap + f->cnt[j]++] =
                (PnmfRepEnt){ md->ent[t].i, md->ent[t].p, pnmf_dequant_coef(md->ent[t].c, e->r_step) };
    }
    pnmf_repfit_residuals(f, f->W);
    return pnmf_repfit_energy(f);
}

/* From the fit (W0, H0: k components, one atom each a frame), the model
 * with repeated entries (repeats.h), quantized: the components, the
 * entries moved to the blocks' origins and scales, the coefficients
 * refitted against the quantized components. It replaces *md when its
 * squared error plus lambda * PNMF_REPEAT_BITS per repeated entry is below
 * the squared error of *md (one entry a component, after --refine). */
int pnmf_window_try_repeats(PnmfEncoder *e, PnmfWindowModel *md, int m, const float *W0, const PnmfAtom *H0)
{
    const int k = e->s.components;
    PnmfRepFit f;
    PNMF_CHECK(pnmf_repfit_open(&f, e->rows, e->cols, e->vis_rows, e->vis_cols, m, k, e->A,
                                enc_quality_lambda(e), e->s.signed_components));
    PnmfWindowModel rm;
    memset(&rm, 0, sizeof(rm));
    double trace[PNMF_REPEAT_ROUNDS + 1];
    const int rounds = pnmf_repfit_run(&f, W0, H0, trace);
    int ret = 0;
    for (int t = 0; t <= rounds && pnmf_log_on(&e->s.logger); t++)
        pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: repeats: round %d, squared error + lambda * bits %.6g%s",
                 e->windows, t, trace[t], t && trace[t] > trace[t - 1] * (1 + 1e-6) ? " (rose!)" : "");
    if (rounds) {
        ret = pnmf_model_alloc(&rm, e->rows, e->cols, e->vis_rows, e->vis_cols, m, k, m * f.cap);
        for (int i = 0; ret >= 0 && i < k; i++) {
            float scale;
            int q0;
            ret = pnmf_quant_component(e->rows, e->cols, f.W + (size_t)i * e->n, e->w_step, &rm.comp[i], &scale, &q0);
            for (int j = 0; ret >= 0 && j < m; j++)
                for (int a = 0; a < f.cnt[j]; a++) {
                    PnmfRepEnt *t = &f.ent[(size_t)j * f.cap + a];
                    if (t->i != i) continue;
                    t->r = rm.comp[i].bh ? t->r * scale : 0;
                    t->p = pnmf_shift_compose(e->rows, e->cols, t->p, q0);
                }
        }
        for (int i = 0; ret >= 0 && i < k; i++)
            pnmf_dequant_component(e->rows, e->cols, &rm.comp[i], e->w_step, f.W + (size_t)i * e->n);
        if (ret >= 0) {
            pnmf_repfit_residuals(&f, f.W);
            pnmf_repfit_coefs(&f, f.W);
            pnmf_repfit_prune(&f, f.W);
        }
        int extra = 0;
        uint8_t *used = pnmf_calloc(k, 1);
        if (!used && ret >= 0) ret = PNMF_ERR_NOMEM;
        for (int j = 0; ret >= 0 && j < m; j++) {
            int per[PNMF_MAX_COMPONENTS] = { 0 };
            for (int a = 0; ret >= 0 && a < f.cnt[j]; a++) {
                const PnmfRepEnt *t = &f.ent[(size_t)j * f.cap + a];
                const uint32_t c = pnmf_quant_coef(t->r, e->r_step);
                if (!c || !rm.comp[t->i].bh) continue;
                used[t->i] = 1;
                extra += per[t->i]++ > 0;
                ret = pnmf_model_add(&rm, j, t->i, c, t->p);
            }
        }
        for (int i = 0; ret >= 0 && i < k; i++)
            if (!used[i]) pnmf_freep(&rm.comp[i].lev), rm.comp[i].bh = rm.comp[i].bw = 0;
        pnmf_free(used);
        if (ret >= 0 && extra) {
            /* (model_sse() reuses f: the refit is done with) */
            const double sse_rep = model_sse(e, &f, &rm), sse_one = model_sse(e, &f, md);
            const double j_rep = sse_rep + f.lambda * PNMF_REPEAT_BITS * extra;
            pnmf_log(&e->s.logger, PNMF_LOG_DEBUG,
                     "window %d: repeats: %d more entries, quantized squared error %.6g (+ %.6g for "
                     "their bits) against %.6g with one entry a component",
                     e->windows, extra, sse_rep, f.lambda * PNMF_REPEAT_BITS * extra, sse_one);
            if (j_rep < sse_one && !e->s.residual) {
                PnmfWindowModel t = *md;
                *md = rm, rm = t;
                e->repeated += extra;
            } else if (j_rep < sse_one) {
                /* the residual layer over each decides (pnmf_window_keep) */
                pnmf_model_free(&e->alt);
                e->alt = rm, e->alt_extra = extra;
                memset(&rm, 0, sizeof(rm));
            }
        }
    }
    pnmf_model_free(&rm);
    pnmf_repfit_close(&f);
    return ret;
}

