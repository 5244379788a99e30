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
 * the window is coded at the steps of -q 16, 14, ..., 2 and 0 (lossless),
 * all of them (-q 0 only its own: the least error), and pnmf_fine_pick
 * keeps one (no more error than -q 16's coding), so from -q 0 up to 15 a
 * higher -q gets no more bytes and no less error. A window with a model
 * is coded with and without it at each step. With two threads two
 * codings run at once, with the same result. At every -q but 0 and 16 a
 * window long enough is weighed on its first frames instead
 * (prefix_search): each coding stops there, and only the one kept goes
 * on to the last frame, so that a window is coded whole about once.
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

static int code_steps(PnmfEncoder *e, PnmfWindowModel fam[2], int nfam, int m, const double sse[2], int held[2],
                      const int *at, const int *qs, int ns, int uncounted, PnmfResidual *res, int *of, double *r,
                      double *d);

/* The search (either grid) as prefix_search() drives it. */
typedef struct AnySearch {
    int fine;
    PnmfStepSearch st;
    PnmfFineSearch fn;
} AnySearch;
static int prefix_frames(const PnmfEncoder *e, int m);
static int prefix_search(PnmfEncoder *e, AnySearch *srch, PnmfWindowModel fam[2], int nfam, int m, int p, double sse[2],
                         const int *held);

/* Whether the search below the floor makes step i whatever its codings are. */
static int fine_first(const PnmfFineSearch *s, int i)
{
    return s->q && (i == 0 || i == PNMF_FINE_CODINGS - 1 || (i >= s->start - 1 && i <= s->start + 1));
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
    PnmfFineSearch srch;
    pnmf_fine_search_init(&srch, q, lambda);
    /* a held coding at any of this grid's steps (-q 0's lossless one from the sprite gate) */
    int held[2] = { held_grid[0], held_grid[1] };
    const int p = prefix_frames(e, m);
    if (q && p) {
        AnySearch as = { 1, { 0 }, srch };
        return prefix_search(e, &as, fam, nfam, m, p, sse, held);
    }
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
        ret = code_steps(e, fam, nfam, m, sse, held, at, qs, ns, single, res, of, r, d);
        for (int k = 0; ret >= 0 && k < ns; k++) pnmf_fine_search_add(&srch, at[k], r[at[k]], d[at[k]]);
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
                      double *d)
{
    StepJob job[2];
    int run[2] = { 0, 0 }, fj[2] = { 0, 0 }, sj[2] = { at[0], at[ns - 1] }, qj[2] = { qs[0], qs[ns - 1] };
    const int nj = nfam == 2 ? 2 : ns;
    for (int k = 0; k < nj; k++) {
        const int f = fj[k] = nfam == 2 ? k : 0, i = sj[k];
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
    if (ret >= 0) step_offers(job, nj, nfam, offer);
    for (int k = 0; ret >= 0 && k < nj; k++)
        pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: step of -q %d%s: %zu bytes, sse %.0f%s", e->windows, qj[k],
                 nfam == 1 ? "" : pnmf_model_present(&job[k].md) ? " with the model" : " without the model",
                 job[k].bytes, job[k].sse, offer[k] ? "" : " (not offered)");
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

/* nfam 1: fam[0]'s residual layer at the steps of the grid the search
 * (ratectl.h, pnmf_step_search) asks for. nfam 2: the window with its
 * model (fam[0] or fam[1]) and without, offered at each step the one
 * with the lower cost there. sse[f]: the error of fam[f]'s coding, if it
 * holds one. fam[0] gets the coding kept, *sse its error. */
static int choose_step(PnmfEncoder *e, PnmfWindowModel fam[2], int nfam, int m, double sse[2])
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
    const int q_lo = PNMF_PICK_FLOOR + (q - PNMF_PICK_FLOOR) / PNMF_PICK_GRID * PNMF_PICK_GRID;
    const double s_lo = pnmf_residual_step(q_lo) / 16.0;
    const double noise = (double)m * e->nv * s_lo * s_lo / 12; /* a uniform quantizer's error at q_lo's step */
    const int p = q > PNMF_PICK_FLOOR ? prefix_frames(e, m) : 0;
    if (p) {
        /* the noise of the prefix's pixels */
        AnySearch as = { 0, { 0 }, { 0 } };
        pnmf_step_search_init(&as.st, q, q < PNMF_MAX_QUALITY ? pick_lambda : INFINITY, noise * p / m);
        return prefix_search(e, &as, fam, nfam, m, p, sse, held);
    }
    pnmf_step_search_init(&srch, q, q < PNMF_MAX_QUALITY ? pick_lambda : INFINITY, noise);
    PnmfResidual res[PNMF_PICK_CODINGS] = { { 0 } };
    int of[PNMF_PICK_CODINGS] = { 0 }, ret = 0;
    double r[PNMF_PICK_CODINGS], d[PNMF_PICK_CODINGS];
    /* -q PNMF_PICK_FLOOR keeps the first coding: the pick's floor */
    for (int i = 0; ret >= 0 && i >= 0 && !(q == PNMF_PICK_FLOOR && srch.have[0]); i = pnmf_step_search_next(&srch)) {
        /* without a model, lo's step and the one below it, which the
         * search always codes after it, at once on two threads */
        const int at[2] = { i, i - 1 };
        const int qs[2] = { PNMF_PICK_FLOOR + i * PNMF_PICK_GRID, PNMF_PICK_FLOOR + (i - 1) * PNMF_PICK_GRID };
        const int ns = nfam == 1 && enc_two_threads(e) && i == srch.lo && i >= 2 && !srch.have[i - 1] && held[0] != i ? 2 : 1;
        ret = code_steps(e, fam, nfam, m, sse, held, at, qs, ns, 0, res, of, r, d);
        for (int k = 0; ret >= 0 && k < ns; k++) pnmf_step_search_add(&srch, at[k], r[at[k]], d[at[k]]);
    }
    for (int f = 0; f < nfam; f++) pnmf_residual_free(&fam[f].res); /* held codings never offered */
    const int best = pnmf_step_search_pick(&srch);
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

/*
 * The search on a prefix. Where the window is long enough, every coding
 * the search asks for is made on its first p frames only (p: a
 * PNMF_STEP_PREFIX_DIV-th of them, at least PNMF_STEP_PREFIX_MIN), the
 * search and the pick weigh those prefixes' bytes and errors, and only the
 * coding kept goes on to the last frame. Each prefix is a run
 * (enc_internal.h, ResRun) in its own buffers, so the one kept goes on
 * where it stopped, with the coding a whole run would make; the runs of
 * steps that are neither the pick so far nor near it (prefix_search())
 * end at once, so most windows hold three at most (the pick and the two
 * under way).
 */
#define PREFIX_SLOTS (PNMF_PICK_CODINGS + 2)

/* Buffers for the runs under way: e->rb[0], e->rb[1] where there is one,
 * others allocated as needed and freed with the pool. */
typedef struct RunPool {
    ResBufs own[PREFIX_SLOTS];
    ResBufs *b[PREFIX_SLOTS];
    int used[PREFIX_SLOTS], alloc[PREFIX_SLOTS];
} RunPool;

static void pool_init(PnmfEncoder *e, RunPool *pool)
{
    memset(pool, 0, sizeof(*pool));
    for (int k = 0; k < PREFIX_SLOTS; k++) pool->b[k] = k < 2 && e->rb[k].P ? &e->rb[k] : &pool->own[k];
}

static void bufs_free(ResBufs *b)
{
    pnmf_free(b->acc), pnmf_free(b->P), pnmf_free(b->Pp), pnmf_free(b->D);
    pnmf_free(b->B), pnmf_free(b->mark);
    pnmf_sprite_dict_free(&b->dict);
    for (int t = 0; t < PNMF_RES_REFS; t++) pnmf_free(b->ref[t]);
    memset(b, 0, sizeof(*b));
}

/* A free slot's buffers (allocated the first time), or -1 out of memory. */
static int pool_get(const PnmfEncoder *e, RunPool *pool)
{
    for (int k = 0; k < PREFIX_SLOTS; k++) {
        if (pool->used[k]) continue;
        ResBufs *b = pool->b[k];
        if (b == &pool->own[k] && !pool->alloc[k]) {
            pool->alloc[k] = 1;
            b->acc = pnmf_malloc_array(e->nv, sizeof(int64_t));
            b->P = pnmf_malloc_array(e->nv, 1), b->Pp = pnmf_malloc_array(e->nv, 1);
            b->D = pnmf_malloc_array(e->nv, 1), b->B = pnmf_malloc_array(e->nv, 1);
            b->mark = pnmf_calloc(e->nv, 1);
            int ok = b->acc && b->P && b->Pp && b->D && b->B && b->mark;
            for (int t = 0; t < PNMF_RES_REFS; t++) ok &= !!(b->ref[t] = pnmf_malloc_array(e->nv, 1));
            if (!ok) return -1;
        }
        pool->used[k] = 1;
        return k;
    }
    return -1;
}

static void pool_free(RunPool *pool)
{
    for (int k = 0; k < PREFIX_SLOTS; k++)
        if (pool->alloc[k]) bufs_free(&pool->own[k]);
}

/* One coding of the search on a prefix, under way until ended. */
typedef struct PreRun {
    const PnmfEncoder *e;
    PnmfWindowModel md;       /* a copy of its family's model; md.res the coding */
    ResRun run;
    int slot, on, q, p, ret;  /* on: the run is under way in pool slot `slot` */
    size_t bytes;
} PreRun;

/* The bytes of md's first p frames as the container would store them,
 * the window written as if it ended there. */
static int prefix_bytes(const PnmfEncoder *e, PnmfWindowModel *md, int p, size_t *bytes)
{
    const int m = md->m, sm = md->spr.m, rm = md->res.m;
    md->m = md->res.m = p;
    if (md->spr.present) md->spr.m = p;
    const int ret = pnmf_window_bytes(e, md, p, bytes);
    md->m = m, md->spr.m = sm, md->res.m = rm;
    return ret;
}

static void *prerun_job(void *arg)
{
    PreRun *j = arg;
    j->ret = pnmf_res_run_frames(&j->run, j->p);
    if (j->ret >= 0) j->ret = prefix_bytes(j->e, &j->md, j->p, &j->bytes);
    return NULL;
}

static void prerun_end(RunPool *pool, PreRun *j)
{
    if (!j->on) return;
    pnmf_res_run_end(&j->run);
    pnmf_residual_free(&j->md.res);
    pool->used[j->slot] = 0;
    j->on = 0;
}

/* Start the n (1 or 2) runs js[] in free slots and code them to their
 * prefix, two at once on two threads where there are. */
static int prerun_code(PnmfEncoder *e, RunPool *pool, PreRun *js[2], int n)
{
    int ret = 0;
    for (int k = 0; k < n; k++) {
        PreRun *j = js[k];
        j->slot = pool_get(e, pool);
        if (j->slot < 0) {
            ret = PNMF_ERR_NOMEM;
            break;
        }
        memset(&j->md.res, 0, sizeof(j->md.res));
        j->ret = pnmf_res_run_start(&j->run, e, pool->b[j->slot], &j->md, j->md.m, pnmf_residual_step(j->q));
        if (j->ret < 0) {
            pnmf_residual_free(&j->md.res);
            pool->used[j->slot] = 0;
            ret = j->ret;
            break;
        }
        j->on = 1;
    }
    if (ret >= 0) {
        pthread_t th;
        const int two = n == 2 && enc_two_threads(e) && !pthread_create(&th, NULL, prerun_job, js[1]);
        prerun_job(js[0]);
        if (two) pthread_join(th, NULL);
        else if (n == 2) prerun_job(js[1]);
        for (int k = 0; k < n; k++)
            if (js[k]->ret < 0 && ret >= 0) ret = js[k]->ret;
    }
    return ret;
}


static int any_next(const AnySearch *s) { return s->fine ? pnmf_fine_search_next(&s->fn) : pnmf_step_search_next(&s->st); }
static int any_q(const AnySearch *s, int i)
{
    return s->fine ? PNMF_PICK_FLOOR - i * PNMF_FINE_GRID : PNMF_PICK_FLOOR + i * PNMF_PICK_GRID;
}
static int any_near(const AnySearch *s, double tie, int *at)
{
    return s->fine ? pnmf_fine_search_near(&s->fn, tie, at) : pnmf_step_search_near(&s->st, tie, at);
}
static void any_add(AnySearch *s, int i, double r, double d)
{
    if (s->fine) pnmf_fine_search_add(&s->fn, i, r, d);
    else pnmf_step_search_add(&s->st, i, r, d);
}
/* The step the search codes with i without looking at i's coding, where
 * a window without a model codes two steps at once (-1: none). */
static int any_pair(AnySearch *s, int i)
{
    if (!s->fine) return i == s->st.lo && i >= 2 && !s->st.have[i - 1] ? i - 1 : -1;
    s->fn.have[i] = 1; /* as if made, to see the step after it */
    const int n = pnmf_fine_search_next(&s->fn);
    s->fn.have[i] = 0;
    return n >= 0 && fine_first(&s->fn, i) && fine_first(&s->fn, n) ? n : -1;
}

/* The prefix's frames: 0 where the window is too short for a prefix to
 * save much, or a key window, whose first frame (4 times finer, or
 * lossless) holds much of a prefix's bytes, so that a prefix weighs bytes
 * far more than the whole window does (cuts_mix, all key windows: +1.9 %
 * BD-rate): the search codes whole windows. */
static int prefix_frames(const PnmfEncoder *e, int m)
{
    if (!e->continues) return 0;
    int p = m / PNMF_STEP_PREFIX_DIV;
    if (p < PNMF_STEP_PREFIX_MIN) p = PNMF_STEP_PREFIX_MIN;
    return 2 * p <= m ? p : 0;
}

/* The search's cost of a coding with bytes r and squared error d (its
 * lambda; an infinite one: the bytes). */
static double any_cost(const AnySearch *s, double r, double d)
{
    const double l = s->fine ? s->fn.lambda : s->st.lambda;
    return isinf(l) ? r : d + l * r;
}

/* The whole window's coding at step i in the family fam: the coding held
 * there (held: its step, -1 none), else the prefix's run gone on to the
 * last frame, else (its run ended) coded afresh. *res, *d, *r: the
 * coding, its squared error and its bytes. */
static int whole_coding(PnmfEncoder *e, RunPool *pool, PnmfWindowModel *fam, double fsse, int held, int i, PreRun *j,
                        int q, int m, PnmfResidual *res, double *d, size_t *r)
{
    int ret = 0;
    PnmfWindowModel md = *fam;
    if (held == i) {
        md.res = fam->res, *d = fsse;
        memset(&fam->res, 0, sizeof(fam->res));
    } else if (j->on) {
        ret = pnmf_res_run_frames(&j->run, m);
        md.res = j->md.res, *d = j->run.sse;
        pnmf_res_run_end(&j->run);
        memset(&j->md.res, 0, sizeof(j->md.res));
        pool->used[j->slot] = 0, j->on = 0;
    } else {
        /* in a free slot: the others may hold runs under way */
        const int k = pool_get(e, pool);
        memset(&md.res, 0, sizeof(md.res));
        ret = k < 0 ? PNMF_ERR_NOMEM : pnmf_window_code_residual(e, pool->b[k], &md, m, pnmf_residual_step(q), d);
        if (k >= 0) pool->used[k] = 0;
    }
    if (ret >= 0 && r) ret = pnmf_window_bytes(e, &md, m, r);
    *res = md.res;
    return ret;
}

/* choose_step() and choose_fine() on a prefix of p frames (above). A
 * window with a model (nfam 2) is coded in one family at every step: that
 * of the whole codings held at one step offered there (step_offers()),
 * else that of the lower cost on the prefix at the first step the search
 * asks for, -q PNMF_PICK_FLOOR's, at its own lambda; the other family's
 * whole coding at the step kept, where that is another, is offered there
 * as step_offers() would (a sprite layer sends its poses in the first
 * frames and pays later: a prefix undervalues it). Codings whose prefix
 * costs are within PNMF_STEP_PREFIX_TIE of the pick's (and which it
 * could keep) go on to the last frame, and the lowest cost over the whole
 * window is kept: where steps cost nearly the same, a few frames cannot
 * tell them apart. */
static int prefix_search(PnmfEncoder *e, AnySearch *srch, PnmfWindowModel fam[2], int nfam, int m, int p, double sse[2],
                         const int *held_in)
{
    const int nfam0 = nfam;
    int held[2] = { held_in[0], held_in[1] }, ret = 0, fsel = 0, hstep = -1;
    if (nfam == 2 && held[0] >= 0 && held[0] == held[1]) {
        /* the family of the whole codings held at one step (the sprite
         * step's, at the pick's first step), as step_offers() offers one */
        StepJob hj[2];
        int off[2];
        for (int f = 0; ret >= 0 && f < 2; f++) {
            hj[f] = (StepJob){ e, NULL, fam[f], m, any_q(srch, held[f]), 0, sse[f], 0, 0 };
            ret = pnmf_window_bytes(e, &fam[f], m, &hj[f].bytes);
        }
        if (ret < 0) return ret;
        step_offers(hj, 2, 2, off);
        fsel = off[1], hstep = held[0], nfam = 1;
        pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: step of -q %d: %s", e->windows, any_q(srch, hstep),
                 pnmf_model_present(&fam[fsel]) ? "with the model" : "without the model");
    }
    RunPool pool;
    pool_init(e, &pool);
    PreRun pr[PNMF_PICK_CODINGS];
    int of[PNMF_PICK_CODINGS] = { 0 };
    memset(pr, 0, sizeof(pr));
    for (int i = any_next(srch); ret >= 0 && i >= 0; i = any_next(srch)) {
        const int at[2] = { i, nfam == 1 && enc_two_threads(e) ? any_pair(srch, i) : -1 };
        const int ns = at[1] >= 0 ? 2 : 1;
        PreRun fj[2], *js[2];
        int n = 0;
        for (int k = 0; k < ns; k++) {
            for (int f = 0; f < 2; f++) {
                if (nfam == 1 && f != fsel) continue;
                PreRun *j = nfam == 2 ? &fj[f] : &pr[at[k]];
                *j = (PreRun){ e, fam[f], { 0 }, 0, 0, any_q(srch, at[k]), p, 0, 0 };
                js[n++] = j;
                of[at[k]] = f;
            }
        }
        ret = prerun_code(e, &pool, js, n);
        if (ret >= 0 && nfam == 2) {
            /* the family of the lower cost at this first step's own
             * lambda: the one every step is coded in */
            const double l = 8 * enc_residual_lambda(pnmf_residual_step(fj[0].q));
            fsel = fj[1].run.sse + l * (double)fj[1].bytes < fj[0].run.sse + l * (double)fj[0].bytes;
            prerun_end(&pool, &fj[1 - fsel]);
            /* the run moves to its step's place: its md moves with it */
            pr[i] = fj[fsel], pr[i].run.md = &pr[i].md, of[i] = fsel, nfam = 1;
        } else if (ret < 0 && nfam == 2) {
            for (int k = 0; k < n; k++) prerun_end(&pool, js[k]);
        }
        for (int k = 0; ret >= 0 && k < ns; k++) {
            const PreRun *j = &pr[at[k]];
            pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: step of -q %d%s on %d frames: %zu bytes, sse %.0f",
                     e->windows, j->q,
                     nfam0 == 1 ? "" : pnmf_model_present(&j->md) ? " with the model" : " without the model", p,
                     j->bytes, j->run.sse);
            any_add(srch, at[k], (double)j->bytes, j->run.sse);
        }
        /* only the pick so far and those near it go on */
        int near[PNMF_PICK_CODINGS], nn = 0;
        if (ret >= 0) nn = any_near(srch, PNMF_STEP_PREFIX_TIE, near);
        for (int s = 0; s < PNMF_PICK_CODINGS; s++) {
            int keep = 0;
            for (int t = 0; t < nn; t++) keep |= near[t] == s;
            if (!keep) prerun_end(&pool, &pr[s]);
        }
    }
    /* the pick, or of those near it on the prefix the lowest cost over
     * the whole window (the finer step among equals) */
    int near[PNMF_PICK_CODINGS], nn = 0, best = -1;
    if (ret >= 0) nn = any_near(srch, PNMF_STEP_PREFIX_TIE, near);
    PnmfResidual res = { 0 };
    double bsse = 0, bj = 0;
    size_t bbytes = 0;
    for (int t = 0; ret >= 0 && t < nn; t++) {
        const int i = near[t], f = of[i];
        PnmfResidual r1 = { 0 };
        double d1 = 0;
        size_t b1 = 0;
        ret = whole_coding(e, &pool, &fam[f], sse[f], held[f], i, &pr[i], any_q(srch, i), m, &r1, &d1, nn > 1 ? &b1 : NULL);
        const double j1 = any_cost(srch, (double)b1, d1);
        if (ret >= 0 && nn > 1)
            pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: step of -q %d near on %d frames: %zu bytes, sse %.0f",
                     e->windows, any_q(srch, i), m, b1, d1);
        if (ret >= 0 && (best < 0 || j1 < bj || (j1 == bj && (b1 < bbytes || (b1 == bbytes && i < best))))) {
            pnmf_residual_free(&res);
            res = r1, bsse = d1, bj = j1, bbytes = b1, best = i;
        } else {
            pnmf_residual_free(&r1);
        }
    }
    /* at -q PNMF_MAX_QUALITY, which weighs bytes alone, where the prefix
     * could not tell the pick and the finest of those near it has the
     * fewest bytes over the whole window, the steps finer than it, one
     * at a time while each has fewer in turn: a finer step's better
     * references save bytes in the frames after the prefix */
    int fin = PNMF_PICK_CODINGS;
    for (int t = 0; t < nn; t++)
        if (near[t] < fin) fin = near[t];
    while (ret >= 0 && !srch->fine && isinf(srch->st.lambda) && nn > 1 && best == fin && fin > 1) {
        const int i = --fin, f = of[best];
        PnmfResidual r1 = { 0 };
        double d1 = 0;
        size_t b1 = 0;
        ret = whole_coding(e, &pool, &fam[f], sse[f], held[f], i, &pr[i], any_q(srch, i), m, &r1, &d1, &b1);
        const double j1 = any_cost(srch, (double)b1, d1);
        if (ret >= 0)
            pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: step of -q %d finer on %d frames: %zu bytes, sse %.0f",
                     e->windows, any_q(srch, i), m, b1, d1);
        if (ret >= 0 && (j1 < bj || (j1 == bj && b1 <= bbytes))) {
            pnmf_residual_free(&res);
            res = r1, bsse = d1, bj = j1, bbytes = b1, best = i, of[i] = f;
        } else {
            pnmf_residual_free(&r1);
        }
    }
    if (ret >= 0 && best >= 0 && nfam0 == 2 && best != hstep) {
        /* the family chosen at another step: the other one's whole coding
         * at the step kept is offered instead where it costs less there,
         * at that step's own lambda, as a window weighed whole offers one */
        const int f = 1 - of[best];
        const double l = 8 * enc_residual_lambda(pnmf_residual_step(any_q(srch, best)));
        PnmfWindowModel kept = fam[of[best]];
        kept.res = res;
        if (nn < 2) ret = pnmf_window_bytes(e, &kept, m, &bbytes);
        PnmfResidual r1 = { 0 };
        PreRun none;
        memset(&none, 0, sizeof(none));
        double d1 = 0;
        size_t b1 = 0;
        if (ret >= 0)
            ret = whole_coding(e, &pool, &fam[f], sse[f], held[f], best, &none, any_q(srch, best), m, &r1, &d1, &b1);
        if (ret >= 0)
            pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: step of -q %d %s on %d frames: %zu bytes, sse %.0f",
                     e->windows, any_q(srch, best), pnmf_model_present(&fam[f]) ? "with the model" : "without the model",
                     m, b1, d1);
        if (ret >= 0 && d1 + l * (double)b1 < bsse + l * (double)bbytes) {
            pnmf_residual_free(&res);
            res = r1, bsse = d1, of[best] = f;
        } else {
            pnmf_residual_free(&r1);
        }
    }
    for (int s = 0; s < PNMF_PICK_CODINGS; s++) prerun_end(&pool, &pr[s]);
    pool_free(&pool);
    for (int f = 0; f < 2; f++) pnmf_residual_free(&fam[f].res);
    if (ret < 0 || best < 0) {
        pnmf_residual_free(&res);
        return ret < 0 ? ret : PNMF_ERR_ARG;
    }
    if (of[best]) {
        const PnmfWindowModel t = fam[0];
        fam[0] = fam[1], fam[1] = t;
    }
    fam[0].res = res, sse[0] = bsse;
    pnmf_log(&e->s.logger, PNMF_LOG_INFO, "window %d: the step of -q %d%s", e->windows, any_q(srch, best),
             nfam0 == 1 ? "" : pnmf_model_present(&fam[0]) ? ", with the model" : ", without the model");
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
