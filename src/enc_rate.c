/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The residual step of each window. Where enc_picks(), the residual layer
 * may be coded at the steps of -q 16, 20, ..., 64, the same steps whatever
 * -q is, and a search (ratectl.h, pnmf_step_search) codes a few of them:
 * the first (-q 16's, usually held from the sprite step), the one at or
 * below -q's and the one below that, then finer ones while the cost
 * squared error + lambda * bits still falls that way, and on content
 * coded mostly exactly (screen content) the one above -q's, whose error
 * can be below the finer step's. It keeps the coding
 * with the lowest cost among those with no more bytes and no less error
 * than -q 16's and an error within a bound that rises with -q; -q 16, the
 * default, keeps the first coding without trying the others. Below -q 16
 * the window may be coded at the steps of -q 16, 14, ..., 2 and 0
 * (lossless); a search (pnmf_fine_search) codes -q 16's and the step of
 * -q + 8 (-q 14's where that is -q 16's), and on content coded mostly exactly the lossless step and the
 * steps around -q + 8's too (-q 0 only its own: the least error), and
 * pnmf_fine_pick keeps one (no more error than -q 16's coding). A window with a model
 * is coded with and without it at each step. With two threads two
 * codings run at once, with the same result.
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
#include "palette_enc.h"
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

/* A held coding (fam's residual layer, at the step of -q q) moved into a
 * job; its bytes counted unless uncounted. */
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
        const int two = enc_two_threads(e) && !pthread_create(&th, NULL, step_job, &job[1]);
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

/* Job j's cost where the two families are weighed (o: the other's
 * coding at the same step): squared error + lambda * bits, the sprite
 * layer's family less the bytes its new poses are credited with
 * (e->spr_credit: later windows of the key period place them without
 * sending them), at most the other's bytes (what a later window like
 * this one could save at most). */
static double family_cost(const PnmfEncoder *e, const StepJob *j, const StepJob *o, double lambda8)
{
    const double credit = j->md.spr.present ? fmin(e->spr_credit, (double)o->bytes) : 0;
    return j->sse + lambda8 * ((double)j->bytes - credit);
}

/* Which of the nj codings the pick is offered: without a model (nfam 1)
 * each; with one (nfam 2: a step with the model and without it) the one
 * of the lower family_cost() at that step's own lambda. */
static void step_offers(const PnmfEncoder *e, const StepJob job[2], int nj, int nfam, int offer[2])
{
    offer[0] = 1, offer[1] = nfam == 1 && nj == 2;
    if (nfam == 2 && nj == 2) {
        const double l = 8 * enc_residual_lambda(pnmf_residual_step(job[0].q));
        if (family_cost(e, &job[1], &job[0], l) < family_cost(e, &job[0], &job[1], l)) offer[0] = 0, offer[1] = 1;
    }
}

/* code_steps()'s *lone: both families coded at every step (-1), or both
 * until the first step they are both coded at tells (-2; -3: codings
 * held from the sprite step tell too, where they are lo's), else the
 * family coded alone (0 or 1). */
#define PNMF_LONE_BOTH (-1)
#define PNMF_LONE_OPEN (-2)
#define PNMF_LONE_OPEN_HELD (-3)

static int code_steps(PnmfEncoder *e, PnmfWindowModel fam[2], int nfam, int m, const double sse[2], int held[2],
                      const int *at, const int *qs, int ns, int uncounted, PnmfResidual *res, int *of, double *r,
                      double *d, int *lone, int clear[2]);

/* Whether the search below the floor makes step i whatever its codings are. */
static int fine_first(const PnmfFineSearch *s, int i)
{
    if (!s->q || i == 0) return s->q && i == 0;
    if (!s->have[0]) return 0; /* the rest depends on the floor's coding */
    if (!pnmf_fine_search_exact(s)) return i == s->one;
    return i == PNMF_FINE_CODINGS - 1 || (i >= s->start - 1 && i <= s->start + 1);
}

/* The squared error a uniform quantizer at -q's step leaves on a window of
 * m frames (pixels * step^2 / 12), against which the searches tell content
 * coded mostly exactly. */
static double uniform_noise(const PnmfEncoder *e, int m, int q)
{
    const double s = pnmf_residual_step(q) / 16.0;
    return (double)m * e->nv * s * s / 12;
}

/* choose_step() below -q PNMF_PICK_FLOOR: the window's codings at the
 * steps of -q PNMF_PICK_FLOOR, - PNMF_FINE_GRID, ..., 0 that the search
 * (ratectl.h, pnmf_fine_search) asks for, with its model and without as
 * choose_step(), kept by pnmf_fine_pick. held_grid: as in choose_step(),
 * the index in this grid of the coding fam[f] holds. */
static int choose_fine(PnmfEncoder *e, PnmfWindowModel fam[2], int nfam, int m, double sse[2], const int held_grid[2])
{
    const int q = e->s.quality;
    /* a byte weighs as at the step of -q + PNMF_FINE_LAMBDA_Q (-q 0: bytes weigh nothing) */
    const double lambda = q ? 8 * enc_residual_lambda(pnmf_residual_step(q + PNMF_FINE_LAMBDA_Q)) : 0;
    const double noise = uniform_noise(e, m, PNMF_PICK_FLOOR);
    PnmfFineSearch srch;
    pnmf_fine_search_init(&srch, q, lambda, noise);
    /* a held coding at any of this grid's steps (-q 0's lossless one from the sprite gate) */
    int held[2] = { held_grid[0], held_grid[1] };
    /* -q 0 without a model: one coding, kept whatever its bytes */
    const int single = !q && nfam == 1;
    PnmfResidual res[PNMF_FINE_CODINGS] = { { 0 } };
    int of[PNMF_FINE_CODINGS] = { 0 }, ret = 0;
    double r[PNMF_FINE_CODINGS], d[PNMF_FINE_CODINGS];
    for (int i = pnmf_fine_search_next(&srch); ret >= 0 && i >= 0; i = pnmf_fine_search_next(&srch)) {
        /* without a model, two steps at once on two threads where the
         * search asks for both anyway (its first codings) */
        int at[2] = { i, -1 }, ns = 1;
        if (nfam == 1 && enc_two_threads(e) && i != held[0]) {
            srch.have[i] = 1; /* as if made, to see the step after it */
            at[1] = pnmf_fine_search_next(&srch);
            srch.have[i] = 0;
            /* both among the steps the search makes whatever the codings are */
            if (at[1] >= 0 && at[1] != held[0] && fine_first(&srch, i) && fine_first(&srch, at[1])) ns = 2;
        }
        const int qs[2] = { PNMF_PICK_FLOOR - at[0] * PNMF_FINE_GRID, PNMF_PICK_FLOOR - at[1] * PNMF_FINE_GRID };
        ret = code_steps(e, fam, nfam, m, sse, held, at, qs, ns, single, res, of, r, d, NULL, NULL);
        for (int k = 0; ret >= 0 && k < ns; k++) pnmf_fine_search_add(&srch, at[k], r[at[k]], d[at[k]]);
        if (ret >= 0 && at[0] == 0)
            pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: the floor's error %.4f of a uniform quantizer's", e->windows,
                     srch.d[0] / noise);
    }
    for (int f = 0; f < nfam; f++) pnmf_residual_free(&fam[f].res); /* held codings never offered */
    const int best = pnmf_fine_search_pick(&srch);
    for (int i = 0; i < PNMF_FINE_CODINGS; i++)
        if (i != best || ret < 0) pnmf_residual_free(&res[i]);
    if (ret < 0) return ret;
    if (of[best]) {
        const PnmfWindowModel t = fam[0];
        fam[0] = fam[1], fam[1] = t;
    }
    fam[0].res = res[best], sse[0] = srch.d[best];
    pnmf_log(&e->s.logger, PNMF_LOG_INFO, "window %d: the step of -q %d%s", e->windows,
             PNMF_PICK_FLOOR - best * PNMF_FINE_GRID,
             nfam == 1 ? "" : pnmf_model_present(&fam[0]) ? ", with the model" : ", without the model");
    return 0;
}

/* The codings at the steps of -q qs[0 .. ns), numbered at[] in their grid,
 * for a search (ns 2 only with nfam 1: two threads run both at once).
 * nfam 1: fam[0]'s residual layer at each; nfam 2 (ns 1): with the model
 * and without, also at once, and the search is offered the one with the
 * lower squared error + lambda * bits at the step's own lambda, so what it
 * is offered does not depend on -q. res[i], of[i], r[i] and d[i] get the
 * residual layer offered at step at[k] = i, its family, bytes and error.
 * held[f]: the step at which fam[f] holds a coding (-1: none), not coded
 * again. */
static int code_steps(PnmfEncoder *e, PnmfWindowModel fam[2], int nfam, int m, const double sse[2], int held[2],
                      const int *at, const int *qs, int ns, int uncounted, PnmfResidual *res, int *of, double *r,
                      double *d, int *lone, int clear[2])
{
    StepJob job[2];
    int run[2] = { 0, 0 }, fj[2] = { 0, 0 }, sj[2] = { at[0], at[ns - 1] }, qj[2] = { qs[0], qs[ns - 1] };
    /* nfam 2 with *lone a family: that family alone */
    const int alone = nfam == 2 && lone && *lone >= 0;
    const int nj = nfam == 2 && !alone ? 2 : ns;
    for (int k = 0; k < nj; k++) {
        const int f = fj[k] = alone ? *lone : nfam == 2 ? k : 0, i = sj[k];
        if (i == held[f]) {
            held_job(e, &job[k], &fam[f], qj[k], sse[f], m, uncounted);
            held[f] = -1;
            continue;
        }
        job[k] = (StepJob){ e, &e->rb[k], fam[f], m, qj[k], 0, 0, 0, uncounted };
        memset(&job[k].md.res, 0, sizeof(job[k].md.res));
        run[k] = 1;
    }
    const int ret = run_step_jobs(e, job, run, nj);
    int offer[2] = { 0, 0 };
    if (ret >= 0) step_offers(e, job, nj, nfam, offer);
    for (int k = 0; ret >= 0 && k < nj; k++)
        pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: step of -q %d%s: %zu bytes, sse %.0f%s", e->windows, qj[k],
                 nfam == 1 ? "" : pnmf_model_present(&job[k].md) ? " with the model" : " without the model",
                 job[k].bytes, job[k].sse, offer[k] ? "" : " (not offered)");
    if (ret >= 0 && nj == 2 && nfam == 2 && lone &&
        ((run[0] && run[1] && *lone == PNMF_LONE_OPEN) || *lone == PNMF_LONE_OPEN_HELD)) {
        /* the first step both families are coded at (not held from the
         * sprite step at -q PNMF_PICK_FLOOR's, where they tie more often
         * than at -q's; held at lo's, enc_pick_from_lo()): where their
         * costs there are under PNMF_PICK_TIE apart, the one offered goes
         * on alone */
        const double l = 8 * enc_residual_lambda(pnmf_residual_step(qj[0]));
        const double c0 = family_cost(e, &job[0], &job[1], l), c1 = family_cost(e, &job[1], &job[0], l);
        *lone = fabs(c0 - c1) < PNMF_PICK_TIE * fmin(c0, c1) ? (offer[1] ? 1 : 0) : PNMF_LONE_BOTH;
        if (*lone >= 0)
            pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: the two families tie at -q %d (%.4f): %s alone on", e->windows,
                     qj[0], c0 > c1 ? c0 / c1 : c1 / c0,
                     pnmf_model_present(&job[*lone].md) ? "with the model" : "without the model");
    }
    if (ret >= 0 && nj == 2 && nfam == 2 && lone && *lone == PNMF_LONE_BOTH && clear) {
        /* both families coded on: where one costs over 1 + PNMF_PICK_CLEAR
         * times the other at PNMF_PICK_CLEAR_RUN steps in a row, the
         * cheaper one goes on alone (a sprite layer that pays, or does not,
         * by a wide margin at every step so far; clear[0] the family ahead,
         * clear[1] its run) */
        const double l = 8 * enc_residual_lambda(pnmf_residual_step(qj[0]));
        const double c0 = family_cost(e, &job[0], &job[1], l), c1 = family_cost(e, &job[1], &job[0], l);
        const int w = c1 < c0;
        if (fmax(c0, c1) > (1 + PNMF_PICK_CLEAR) * fmin(c0, c1))
            clear[1] = clear[0] == w ? clear[1] + 1 : 1, clear[0] = w;
        else
            clear[0] = -1, clear[1] = 0;
        if (clear[1] >= PNMF_PICK_CLEAR_RUN) {
            *lone = w;
            pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: %s ahead by %.4f at -q %d: alone on", e->windows,
                     pnmf_model_present(&job[w].md) ? "with the model" : "without the model", fmax(c0, c1) / fmin(c0, c1),
                     qj[0]);
        }
    }
    for (int k = 0; k < nj; k++) {
        if (ret >= 0 && offer[k]) {
            const int i = sj[k];
            res[i] = job[k].md.res, of[i] = fj[k], r[i] = (double)job[k].bytes, d[i] = job[k].sse;
        } else {
            pnmf_residual_free(&job[k].md.res);
        }
    }
    return ret;
}

/* The cost of the coding res of fam's window (its squared error + lambda
 * * its bytes) foretold from its first enc_pick_prefix(m) = p frames:
 * the cost of the first frame (a key window's, coded finer, is a larger
 * share of a short prefix than of the window) and (m - 1) / (p - 1) times
 * that of the frames after it up to p, each cost that of the window had
 * it ended there. Returns 0 with *had 0 where res holds no such errors
 * (no prefix, or a coding that did not reach it). */
static int prefix_cost(const PnmfEncoder *e, const PnmfWindowModel *fam, const PnmfResidual *res, int m,
                       double lambda, double *j, int *had)
{
    const int p = enc_pick_prefix(m);
    *had = 0;
    if (p < 2 || !res->step16 || res->enc_pre_at != p || res->m < p) return 0;
    double jf[2];
    for (int k = 0; k < 2; k++) {
        const int n = k ? p : 1;
        PnmfWindowModel t = *fam;
        t.res = *res;
        t.m = t.res.m = n;
        if (t.spr.present) t.spr.m = n;
        size_t bytes = 0;
        PNMF_CHECK(pnmf_window_bytes(e, &t, n, &bytes));
        jf[k] = res->enc_pre_sse[k] + lambda * (double)bytes;
    }
    *j = pnmf_pick_foretell(jf[0], jf[1], p, m), *had = 1;
    return 0;
}

/* A finer step's coding (step i of the grid, -q q) of fam's window, in
 * rb[0], weighed on the window's first frames before it is coded on:
 * where its cost there exceeds jabove, the cost there of the coding one
 * step coarser, by more than PNMF_PICK_PREFIX_MARGIN of it, *cut is set
 * and the coding goes no further; else it is coded to the last frame and
 * res[i], of[i], r[i], d[i] get it as code_steps() gives them, jp[i] its
 * cost on the first frames. */
static int code_weighed(PnmfEncoder *e, const PnmfWindowModel *fam, int f, int nfam, int m, int i, int q, double lambda,
                        double jabove, PnmfResidual *res, int *of, double *r, double *d, double *jp, int *cut)
{
    PnmfWindowModel md = *fam;
    memset(&md.res, 0, sizeof(md.res));
    ResRun run;
    int ret = pnmf_res_run_start(&run, e, &e->rb[0], &md, m, pnmf_residual_step(q)), had = 0;
    if (ret < 0) {
        pnmf_residual_free(&md.res);
        return ret;
    }
    *cut = 0;
    const char *fl = nfam == 1 ? "" : pnmf_model_present(&md) ? " with the model" : " without the model";
    ret = pnmf_res_run_frames(&run, enc_pick_prefix(m));
    if (ret >= 0) ret = prefix_cost(e, &md, &md.res, m, lambda, &jp[i], &had);
    if (ret >= 0 && had && pnmf_pick_prefix_cut(jp[i], jabove)) {
        pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: step of -q %d%s on %d frames: %.4f times the cost of -q %d's, not coded on",
                 e->windows, q, fl, enc_pick_prefix(m), jp[i] / jabove, q + PNMF_PICK_GRID);
        *cut = 1;
    }
    if (ret >= 0 && !*cut) ret = pnmf_res_run_frames(&run, m);
    const double sse = run.sse;
    pnmf_res_run_end(&run);
    size_t bytes = 0;
    if (ret >= 0 && !*cut) ret = pnmf_window_bytes(e, &md, m, &bytes);
    if (ret < 0 || *cut) {
        pnmf_residual_free(&md.res);
        return ret;
    }
    pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: step of -q %d%s: %zu bytes, sse %.0f (on %d frames %.4f times -q %d's)",
             e->windows, q, fl, bytes, sse, enc_pick_prefix(m), jp[i] / jabove, q + PNMF_PICK_GRID);
    res[i] = md.res, of[i] = f, r[i] = (double)bytes, d[i] = sse;
    return 0;
}

/* The -q of the grid step at or below -q q's (q > PNMF_PICK_FLOOR). */
int pnmf_pick_lo_quality(int q)
{
    return PNMF_PICK_FLOOR + (q - PNMF_PICK_FLOOR) / PNMF_PICK_GRID * PNMF_PICK_GRID;
}

/* nfam 1: fam[0]'s residual layer at the steps of the grid the search
 * (ratectl.h, pnmf_step_search) asks for. nfam 2: the window with its
 * model (fam[0] or fam[1]) and without, offered at each step the one
 * with the lower cost there. sse[f]: the error of fam[f]'s coding, if it
 * holds one. fam[0] gets the coding kept, *sse its error. no_floor (a
 * window without components, whose codings are held at lo's step if any):
 * step 0, -q PNMF_PICK_FLOOR's, is not coded; the search sees it as a
 * coding of no error and unbounded bytes, which bounds nothing, is never
 * picked, and ends the walk to finer steps at step 1 as a coding made
 * does. */
static int choose_step(PnmfEncoder *e, PnmfWindowModel fam[2], int nfam, int m, double sse[2], int no_floor)
{
    if (!enc_picks(&e->s)) return 0;
    /* a byte weighs as at the step of -q + PNMF_PICK_LAMBDA_Q: with -q's own
     * lambda the finer steps won nearly always; -q 64, the bottom of the
     * range, takes the fewest bytes */
    const int q = e->s.quality;
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
    PnmfStepSearch srch;
    const double pick_lambda = 8 * enc_residual_lambda(pnmf_residual_step(q + PNMF_PICK_LAMBDA_Q));
    const int q_lo = pnmf_pick_lo_quality(q);
    const double noise = uniform_noise(e, m, q_lo);
    pnmf_step_search_init(&srch, q, q < PNMF_MAX_QUALITY ? pick_lambda : INFINITY, noise);
    /* the finer walk foretells its next coding, but on a screen: there
     * blocks are kept or dropped whole, and the error can fall faster
     * from one step to the next than from the one before */
    const int screen = enc_screen_like(e);
    srch.ahead = !screen;
    no_floor = no_floor && srch.lo > 1 && !pnmf_model_has_components(&fam[0]) &&
               (nfam == 1 || !pnmf_model_has_components(&fam[1]));
    if (no_floor) pnmf_step_search_add(&srch, 0, INFINITY, 0);
    PnmfResidual res[PNMF_PICK_CODINGS] = { { 0 } };
    int of[PNMF_PICK_CODINGS] = { 0 }, ret = 0;
    double r[PNMF_PICK_CODINGS], d[PNMF_PICK_CODINGS];
    /* two families whose costs tie at the first step both are coded at
     * go on as the one offered there alone; not on a screen, where the
     * sprite layer wins at some steps and loses at others */
    int lone = nfam == 2 && q > PNMF_PICK_FLOOR && !screen ? no_floor ? PNMF_LONE_OPEN_HELD : PNMF_LONE_OPEN : PNMF_LONE_BOTH;
    /* and two families far apart at the first steps go on as the cheaper one alone (code_steps()) */
    int clear[2] = { -1, 0 };
    /* the codings' costs on the window's first frames (jp, where jhad),
     * by which a finer step's coding is weighed against the one above it */
    double jp[PNMF_PICK_CODINGS];
    int jhad[PNMF_PICK_CODINGS] = { 0 };
    /* -q PNMF_PICK_FLOOR keeps the first coding: the pick's floor */
    for (int i = pnmf_step_search_next(&srch); ret >= 0 && i >= 0 && !(q == PNMF_PICK_FLOOR && srch.have[0]);
         i = pnmf_step_search_next(&srch)) {
        /* without a model, lo's step and the one below it, which the
         * search always codes after it, at once on two threads */
        const int at[2] = { i, i - 1 };
        const int qs[2] = { PNMF_PICK_FLOOR + i * PNMF_PICK_GRID, PNMF_PICK_FLOOR + (i - 1) * PNMF_PICK_GRID };
        const int ns = nfam == 1 && enc_two_threads(e) && i == srch.lo && i >= 2 && !srch.have[i - 1] && held[0] != i ? 2 : 1;
        /* the one family coded (nfam 1, or the two tie) */
        const int f1 = nfam == 1 ? 0 : lone >= 0 ? lone : -1;
        /* a step finer than lo's, one family, in a window searched
         * without step 0's coding (filmed and rendered footage; on a
         * screen and on sprite animation a window's first frames do not
         * foretell the rest), the coding one step coarser weighed on the
         * first frames: the same rule on one thread and two (where two
         * run lo's and the one below at once, it is weighed once both
         * are coded) */
        int cut[2] = { 0, 0 };
        if (no_floor && ns == 1 && f1 >= 0 && i < srch.lo && held[f1] != i && jhad[i + 1] && !isinf(pick_lambda)) {
            ret = code_weighed(e, &fam[f1], f1, nfam, m, i, qs[0], pick_lambda, jp[i + 1], res, of, r, d, jp, &cut[0]);
            jhad[i] = ret >= 0 && !cut[0];
        } else {
            ret = code_steps(e, fam, nfam, m, sse, held, at, qs, ns, 0, res, of, r, d, &lone, clear);
            for (int k = 0; ret >= 0 && no_floor && k < ns; k++) {
                const int a = at[k];
                ret = prefix_cost(e, &fam[of[a]], &res[a], m, pick_lambda, &jp[a], &jhad[a]);
                if (ret >= 0 && jhad[a] && f1 >= 0 && a < srch.lo && a + 1 < PNMF_PICK_CODINGS && jhad[a + 1] &&
                    !isinf(pick_lambda) && pnmf_pick_prefix_cut(jp[a], jp[a + 1])) {
                    pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: step of -q %d on %d frames: %.4f times the cost of -q %d's, not kept",
                             e->windows, qs[k], enc_pick_prefix(m), jp[a] / jp[a + 1], qs[k] + PNMF_PICK_GRID);
                    pnmf_residual_free(&res[a]);
                    cut[k] = 1, jhad[a] = 0;
                }
            }
        }
        /* a coding not coded on: a cost no pick takes, which ends the
         * walk to finer steps */
        for (int k = 0; ret >= 0 && k < ns; k++)
            pnmf_step_search_add(&srch, at[k], cut[k] ? INFINITY : r[at[k]], cut[k] ? 0 : d[at[k]]);
    }
    for (int f = 0; f < nfam; f++) pnmf_residual_free(&fam[f].res); /* held codings never offered */
    /* without step 0's coding, lo's (every coding meets the bound at or
     * above its error) is the least the pick keeps */
    const int best = no_floor && !pnmf_step_search_pick(&srch) ? srch.lo : pnmf_step_search_pick(&srch);
    for (int i = 0; i < PNMF_PICK_CODINGS; i++)
        if (i != best || ret < 0) pnmf_residual_free(&res[i]);
    if (ret < 0) return ret;
    if (of[best]) {
        const PnmfWindowModel t = fam[0];
        fam[0] = fam[1], fam[1] = t;
    }
    fam[0].res = res[best], sse[0] = srch.d[best];
    pnmf_log(&e->s.logger, PNMF_LOG_INFO, "window %d: the step of -q %d%s", e->windows,
             PNMF_PICK_FLOOR + best * PNMF_PICK_GRID,
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
    const int ret = choose_step(e, fam, nfam, m, fsse, w->no_floor || enc_pick_from_lo(e));
    w->md = fam[0], w->bare = fam[1], w->sse = fsse[0];
    return ret;
}
