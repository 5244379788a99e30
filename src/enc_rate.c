/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The residual step of each window. Where enc_picks(), the residual layer
 * is coded at the steps of -q 16, 20, ..., 64, the same steps whatever -q
 * is, and pnmf_step_pick (quant.h) keeps the coding with the lowest
 * squared error + lambda * bits within an error bound that rises with -q:
 * a higher -q gets no more bytes and no less error in each window. The
 * coarser steps are coded only until two in a row exceed the bound; -q 16,
 * the default, keeps the first coding without trying the others. Below
 * -q 16 the window is coded at the steps of -q 16, 14, ..., 2 and 0
 * (lossless), all of them (-q 0 only its own: the least error), and
 * pnmf_fine_pick keeps one (no more error than -q 16's coding), so from
 * -q 0 up to 15 too a higher -q gets no more bytes and no less error. A window with a model is coded with and
 * without it at each step. What can still move the other way is what a
 * window leaves the next (its last frames are the next one's references,
 * its model the one the next may carry). With two threads two codings run
 * at once, with the same result.
 *
 * With --target-psnr the step is found by bisection instead.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "enc_internal.h"
#include "internal.h"
#include "model.h"
#include "quant.h"
#include "ratectl.h"
#include "residual_search.h"

/* One coding for choose_step(), into its own copy of the window. */
typedef struct StepJob {
    const PnmfEncoder *e;
    ResBufs *rb;
    PnmfWindowModel md;
    int m, q, ret;
    double sse;
    size_t bytes;
    int uncounted;            /* the only coding offered: its bytes decide nothing, left at 0 */
} StepJob;

static void *step_job(void *arg)
{
    StepJob *j = arg;
    j->ret = pnmf_window_code_residual(j->e, j->rb, &j->md, j->m, pnmf_residual_step(j->q), &j->sse);
    if (j->ret >= 0 && !j->uncounted) j->ret = pnmf_window_bytes(j->e, &j->md, j->m, &j->bytes);
    return NULL;
}

/* A held coding (fam's residual layer, at the -q q) moved into a job;
 * its bytes counted unless uncounted. */
static void held_job(PnmfEncoder *e, StepJob *j, PnmfWindowModel *fam, int q, double sse, int m, int uncounted)
{
    *j = (StepJob){ e, &e->rb[0], *fam, m, q, 0, sse, 0, uncounted };
    if (!uncounted) j->ret = pnmf_window_bytes(e, fam, m, &j->bytes);
    memset(&fam->res, 0, sizeof(fam->res));
}

/* Run the first nj jobs whose run[] is set (the others are held codings),
 * two at once on two threads where both run (the same result). Returns
 * the first job's failure, or 0. */
static int run_step_jobs(PnmfEncoder *e, StepJob job[2], const int run[2], int nj)
{
    if (run[0] && run[1]) {
        pthread_t th;
        const int two = e->rb[1].P && !pthread_create(&th, NULL, step_job, &job[1]);
        step_job(&job[0]);
        if (two) pthread_join(th, NULL);
        else job[1].rb = &e->rb[0], step_job(&job[1]);
    } else {
        for (int k = 0; k < nj; k++)
            if (run[k]) job[k].rb = &e->rb[0], step_job(&job[k]);
    }
    for (int k = 0; k < nj; k++)
        if (job[k].ret < 0) return job[k].ret;
    return 0;
}

/* Which of the nj codings the pick is offered: without a model (nfam 1)
 * each; with one (nfam 2: a step with the model and without it) the one
 * with the lower squared error + lambda * bits at that step's own lambda. */
static void step_offers(const StepJob job[2], int nj, int nfam, int offer[2])
{
    offer[0] = 1, offer[1] = nfam == 1 && nj == 2;
    if (nfam == 2) {
        const double l = 8 * enc_residual_lambda(pnmf_residual_step(job[0].q));
        if (job[1].sse + l * (double)job[1].bytes < job[0].sse + l * (double)job[0].bytes) offer[0] = 0, offer[1] = 1;
    }
}

/* choose_step() below -q PNMF_PICK_FLOOR: the window's codings at -q
 * PNMF_PICK_FLOOR, - PNMF_FINE_GRID, ..., 0 (with its model and without,
 * as choose_step()), all of them, kept by pnmf_fine_pick. held: as in
 * choose_step(), the index in this grid of the coding fam[f] holds. */
static int choose_fine(PnmfEncoder *e, PnmfWindowModel fam[2], int nfam, int m, double sse[2], const int held[2])
{
    const int q = e->s.quality;
    /* a byte weighs as at the step of -q + PNMF_FINE_LAMBDA_Q (-q 0: bytes weigh nothing) */
    const double lambda = q ? 8 * enc_residual_lambda(pnmf_residual_step(q + PNMF_FINE_LAMBDA_Q)) : 0;
    double r[PNMF_FINE_CODINGS], d[PNMF_FINE_CODINGS], best_d = 0;
    PnmfResidual best = { 0 };
    int best_f = 0, best_i = 0, ret = 0, n = 0;
    /* the codings in pairs: with a model, one step with and without it;
     * without, two steps (two threads run them at once) */
    /* -q 0 keeps the least error: its own, lossless coding, which only a
     * coarser coding as exact and smaller could beat; those are not tried */
    /* -q 0 without a model: one coding, kept whatever its bytes */
    const int single = !q && nfam == 1;
    for (int i = q ? 0 : PNMF_FINE_CODINGS - 1; ret >= 0 && i < PNMF_FINE_CODINGS; i += nfam == 2 ? 1 : 2) {
        StepJob job[2];
        int fj[2] = { 0, nfam - 1 }, at[2] = { i, nfam == 2 ? i : i + 1 }, run[2] = { 0, 0 }, nj = 0;
        for (; nj < 2 && at[nj] < PNMF_FINE_CODINGS; nj++) {
            const int f = fj[nj];
            if (at[nj] == held[f]) {
                held_job(e, &job[nj], &fam[f], PNMF_PICK_FLOOR - at[nj] * PNMF_FINE_GRID, sse[f], m, single);
                continue;
            }
            job[nj] = (StepJob){ e, &e->rb[nj], fam[f], m, PNMF_PICK_FLOOR - at[nj] * PNMF_FINE_GRID, 0, 0, 0, single };
            memset(&job[nj].md.res, 0, sizeof(job[nj].md.res));
            run[nj] = 1;
        }
        ret = run_step_jobs(e, job, run, nj);
        int offer[2] = { 0, 0 };
        if (ret >= 0) step_offers(job, nj, nfam, offer);
        for (int k = 0; k < nj; k++) {
            if (ret >= 0 && offer[k]) {
                r[n] = (double)job[k].bytes, d[n] = job[k].sse;
                if (pnmf_fine_pick(r, d, n + 1, lambda) == n) {
                    pnmf_residual_free(&best);
                    best = job[k].md.res, best_f = fj[k], best_i = at[k], best_d = d[n];
                    job[k].md.res = (PnmfResidual){ 0 };
                }
                n++;
            }
            pnmf_residual_free(&job[k].md.res);
        }
    }
    for (int f = 0; f < nfam; f++) pnmf_residual_free(&fam[f].res); /* held codings never offered */
    if (ret < 0) {
        pnmf_residual_free(&best);
        return ret;
    }
    if (best_f) {
        const PnmfWindowModel t = fam[0];
        fam[0] = fam[1], fam[1] = t;
    }
    fam[0].res = best, sse[0] = best_d;
    pnmf_log(&e->s.logger, PNMF_LOG_INFO, "window %d: the step of -q %d%s", e->windows,
             PNMF_PICK_FLOOR - best_i * PNMF_FINE_GRID,
             nfam == 1 ? "" : pnmf_model_present(&fam[0]) ? ", with the model" : ", without the model");
    return 0;
}

/* nfam 1: fam[0]'s residual layer at each step of the grid. nfam 2: the
 * window with its model (fam[0] or fam[1]) and without: at each step of
 * the grid the pick is offered the one of the two with the lower squared
 * error + lambda * bits, lambda that step's own, so what it is offered
 * does not depend on -q. sse[f]: the error of fam[f]'s coding, if it holds
 * one. fam[0] gets the coding kept, *sse its error. */
static int choose_step(PnmfEncoder *e, PnmfWindowModel fam[2], int nfam, int m, double sse[2])
{
    if (!enc_picks(&e->s)) return 0;
    /* a byte weighs as at the step of -q + PNMF_PICK_LAMBDA_Q: with -q's own
     * lambda the finer steps won nearly always; -q 64, the bottom of the
     * range, takes the fewest bytes */
    const int q = e->s.quality;
    PnmfStepPick pick;
    const double pick_lambda = 8 * enc_residual_lambda(pnmf_residual_step(q + PNMF_PICK_LAMBDA_Q));
    pnmf_step_pick_init(&pick, q, q < PNMF_MAX_QUALITY ? pick_lambda : INFINITY);
    /* a coding held, where it is one of the grid's, is not coded again */
    int held[2] = { -1, -1 };
    for (int f = 0; f < nfam; f++) {
        /* below the floor, the fine grid's steps (-q 0's lossless coding among them) */
        for (int i = 0; q >= PNMF_PICK_FLOOR && i < PNMF_PICK_CODINGS; i++)
            if (fam[f].res.step16 == pnmf_residual_step(PNMF_PICK_FLOOR + i * PNMF_PICK_GRID)) held[f] = i;
        for (int i = 0; q < PNMF_PICK_FLOOR && i < PNMF_FINE_CODINGS; i++)
            if (fam[f].res.step16 == pnmf_residual_step(PNMF_PICK_FLOOR - i * PNMF_FINE_GRID)) held[f] = i;
        if (held[f] < 0) pnmf_residual_free(&fam[f].res);
    }
    if (q < PNMF_PICK_FLOOR) return choose_fine(e, fam, nfam, m, sse, held);
    PnmfResidual best = { 0 };
    int best_f = 0, ret = 0;
    /* -q PNMF_PICK_FLOOR keeps the first coding: the pick's floor */
    const int floor = q == PNMF_PICK_FLOOR;
    for (int i = 0; ret >= 0 && !pick.done && !(floor && i);) {
        StepJob job[2];
        int fj[2] = { 0, nfam - 1 }, run[2] = { 0, 0 }, nj = 0;
        for (; nj < 2; nj++) {
            /* without a model: two steps at once only where the pick
             * cannot be done after the first; with: the step with and
             * without the model */
            const int f = fj[nj], at = nfam == 2 ? i : i + nj;
            if (at >= PNMF_PICK_CODINGS ||
                (nfam == 1 && nj && (floor || at == held[0] || !e->rb[1].P || pnmf_step_pick_may_end(&pick))))
                break;
            if (at == held[f]) {
                held_job(e, &job[nj], &fam[f], PNMF_PICK_FLOOR + at * PNMF_PICK_GRID, sse[f], m, 0);
                continue;
            }
            job[nj] = (StepJob){ e, &e->rb[nj], fam[f], m, PNMF_PICK_FLOOR + at * PNMF_PICK_GRID, 0, 0, 0, 0 };
            memset(&job[nj].md.res, 0, sizeof(job[nj].md.res));
            run[nj] = 1;
        }
        ret = run_step_jobs(e, job, run, nj);
        int offer[2] = { 0, 0 };
        if (ret >= 0) step_offers(job, nj, nfam, offer);
        for (int k = 0; k < nj; k++) {
            if (ret >= 0 && offer[k] && pnmf_step_pick_offer(&pick, (double)job[k].bytes, job[k].sse)) {
                pnmf_residual_free(&best);
                best = job[k].md.res, best_f = fj[k];
            } else {
                pnmf_residual_free(&job[k].md.res);
            }
        }
        i += nfam == 2 ? 1 : nj;
    }
    for (int f = 0; f < nfam; f++) pnmf_residual_free(&fam[f].res); /* held codings never offered */
    if (ret < 0) {
        pnmf_residual_free(&best);
        return ret;
    }
    if (best_f) {
        const PnmfWindowModel t = fam[0];
        fam[0] = fam[1], fam[1] = t;
    }
    fam[0].res = best, sse[0] = pick.bd;
    pnmf_log(&e->s.logger, PNMF_LOG_INFO, "window %d: the step of -q %d%s", e->windows,
             PNMF_PICK_FLOOR + pick.best * PNMF_PICK_GRID,
             nfam == 1 ? "" : pnmf_model_present(&fam[0]) ? ", with the model" : ", without the model");
    return 0;
}

/* --target-psnr: a residual step (on a scale of 2^(1/32), about 0.2 dB
 * apart) whose window reaches its aim (below), found by bisection; the model
 * stays as it is. PSNR falls with the step on the whole but not strictly
 * (a coarser step can land closer to the source), so of the steps the
 * bisection saw it keeps the one whose error came closest to the aim, the
 * coarsest among equals, rather than the coarsest that reached it. */
static int target_residual(PnmfEncoder *e, PnmfWindowModel *md, int m, double *sse)
{
    const double px = (double)m * e->nv;
    /* the clip's PSNR so far is what is aimed at: a window that cannot
     * come down to the target (the coarsest steps keep the first frame
     * fine, or lossless) leaves its margin to the next ones, which aim
     * lower; each window's aim within 6 dB of the target */
    const double per_px = 255.0 * 255.0 / pow(10.0, e->s.target_psnr / 10.0);
    const double before = (double)(e->frame_count - m) * e->nv;
    double max_sse = (before + px) * per_px - e->sse;
    if (max_sse > 4 * px * per_px) max_sse = 4 * px * per_px;
    if (max_sse < px * per_px / 4) max_sse = px * per_px / 4;
    /* bisection on the step, keeping the step whose error came closest to
     * the aim (in dB, either side): the error need not grow with the step
     * (a model's prediction, blocks skipped at one step and coded at the
     * next), so the last step under the aim can be far under it */
    int lo = 0, hi = 256, best = 0; /* step 16 * 2^(t/32): 1 .. 256 gray levels */
    double best_miss = 1e300;
    while (lo <= hi) {
        const int t = (lo + hi) / 2;
        double s = 0;
        PNMF_CHECK(pnmf_window_code_residual(e, &e->rb[0], md, m, (int)lrint(16.0 * pow(2.0, t / 32.0)), &s));
        const double miss = fabs(log((s > 0 ? s : 1e-9) / max_sse));
        if (miss < best_miss || (miss == best_miss && t > best)) best = t, best_miss = miss;
        if (s <= max_sse) lo = t + 1;
        else hi = t - 1;
    }
    PNMF_CHECK(pnmf_window_code_residual(e, &e->rb[0], md, m, (int)lrint(16.0 * pow(2.0, best / 32.0)), sse));
    pnmf_log(&e->s.logger, PNMF_LOG_INFO, "window %d: target %.2f dB: step %.2f, %.2f dB", e->windows,
             e->s.target_psnr, pow(2.0, best / 32.0), 10 * log10(px * 255.0 * 255.0 / (*sse > 0 ? *sse : 1e-9)));
    return 0;
}


/* Choose step: the window's residual step, its coding left in w->md. With
 * --target-psnr the step that reaches the target; otherwise, where
 * enc_picks(), the pick over the grid of steps, offered at each step the
 * window with its model or without it, whichever costs less there. A
 * window already coded at the finest step (lossless) has nothing to pick. */
int pnmf_window_choose_step(PnmfEncoder *e, EncWindow *w)
{
    if (!e->s.residual) return 0;
    const int m = w->m;
    if (e->s.target_psnr > 0) return target_residual(e, &w->md, m, &w->sse);
    if (w->md.res.step16 <= PNMF_RES_MIN_STEP && e->s.quality) return 0;
    const int nfam = 1 + (w->bare_bytes && w->bare.res.step16 && (pnmf_model_present(&w->md) || pnmf_model_present(&w->bare)));
    if (nfam == 1 && w->floor_bare.res.step16 && !pnmf_model_present(&w->md) && !pnmf_model_has_components(&w->md)) {
        /* a window without a model: the coding over no model the sprite
         * step made at the pick's first step is the one the pick starts with */
        pnmf_model_free(&w->md);
        w->md = w->floor_bare, w->sse = w->floor_sse;
        memset(&w->floor_bare, 0, sizeof(w->floor_bare));
    }
    PnmfWindowModel fam[2] = { w->md, w->bare };
    double fsse[2] = { w->sse, w->bare_sse };
    const int ret = choose_step(e, fam, nfam, m, fsse);
    w->md = fam[0], w->bare = fam[1], w->sse = fsse[0];
    return ret;
}
