/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sprite step of a window: poses found in its frames (sprite_find.c),
 * the layer that sends the poses the decoder lacks and places them frame
 * by frame, and the residual layer coded over its composite against the
 * residual layer alone, both at the first step the pick tries (the step the
 * model is weighed at, where no pick runs). A layer not far from paying
 * there is offered, against the residual layer alone, at every step the
 * pick tries (enc_rate.c), which keeps whichever costs less at the step it
 * chooses; the window then needs no PermNMF fit.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "enc_internal.h"
#include "internal.h"
#include "log.h"
#include "model_write.h"
#include "palette_enc.h"
#include "rangecoder_enc.h"
#include "ratectl.h"
#include "residual_search.h"

/* Earlier new poses a pose's mask is compared with for its reference. */
#define MASK_REF_CANDIDATES 64
/* A pose is sent when at least this many frames after its source show it
 * where the frame before does not show it at all: a pose the frame before
 * shows (in place, or moved) the residual layer predicts from that frame. */
#define PNMF_SPRITE_MIN_FRESH 1
/* ... or at least this many where the frame before does not show it in place */
#define PNMF_SPRITE_MIN_NOVEL 3
/* the sets of poses a window weighs */
#define SPRITE_RULES 3

/* One mask through the context model: its bits priced with the
 * probabilities as they stand (e NULL, adapt 0), or priced and the
 * probabilities moved (adapt 1), or coded into e. */
static double mask_pass(RcProb *prob, const PnmfSpritePose *ps, const PnmfSpritePose *r, int dy, int dx, int adapt,
                        RcEnc *e)
{
    double bits = 0;
    for (int y = 0; y < ps->h; y++)
        for (int x = 0; x < ps->w; x++) {
            const int c = pnmf_sprite_mask_context_fast(ps->mask, ps->w, y, x, r ? r->mask : NULL, r ? r->w : 0,
                                                        r ? r->h : 0, dy, dx);
            const int bit = ps->mask[(size_t)y * ps->w + x];
            if (e) {
                rc_encode(e, &prob[c], bit);
                continue;
            }
            const double p0 = (double)rc_prob(prob[c]) / RC_PROB_ONE;
            bits -= log2(bit ? 1.0 - p0 : p0);
            if (adapt) rc_adapt(&prob[c], bit);
        }
    return bits;
}

/* Samples of ps's box where r placed at (dy, dx) differs from it. */
static long mask_mismatch(const PnmfSpritePose *ps, const PnmfSpritePose *r, int dy, int dx, long stop)
{
    long n = 0;
    /* r's columns over the box: xa .. xb - 1 */
    const int xa = dx > 0 ? dx : 0, xb = dx + r->w < ps->w ? dx + r->w : ps->w;
    for (int y = 0; y < ps->h && n < stop; y++) {
        const uint8_t *m = ps->mask + (size_t)y * ps->w;
        const int u = y - dy;
        int c = 0;
        if (u < 0 || u >= r->h || xa >= xb) {
            for (int x = 0; x < ps->w; x++) c += m[x];
        } else {
            const uint8_t *rm = r->mask + (size_t)u * r->w - dx;
            for (int x = 0; x < xa; x++) c += m[x];
            for (int x = xa; x < xb; x++) c += rm[x] != m[x];
            for (int x = xb; x < ps->w; x++) c += m[x];
        }
        n += c;
    }
    return n;
}

void pnmf_sprite_masks_plan(PnmfSpriteLayer *L)
{
    RcProb prob[PNMF_SPRITE_MASK_CTX];
    rc_probs_init(prob, PNMF_SPRITE_MASK_CTX);
    for (int i = 0; i < L->npose; i++) {
        PnmfSpritePose *ps = &L->pose[i];
        /* the earlier pose and offset (its box aligned at a corner or the
         * centre of ps's, then a sample around the best) closest to ps */
        long best = (long)ps->w * ps->h + 1;
        int bk = -1, bdy = 0, bdx = 0;
        for (int k = i - 1; k >= 0 && k >= i - MASK_REF_CANDIDATES; k--) {
            const PnmfSpritePose *r = &L->pose[k];
            const int th = ps->h / 4 > 4 ? ps->h / 4 : 4, tw = ps->w / 4 > 4 ? ps->w / 4 : 4;
            if (abs(r->h - ps->h) > th || abs(r->w - ps->w) > tw) continue;
            const int oy[3] = { 0, ps->h - r->h, (ps->h - r->h) / 2 }, ox[3] = { 0, ps->w - r->w, (ps->w - r->w) / 2 };
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++) {
                    const long n = mask_mismatch(ps, r, oy[a], ox[b], best);
                    if (n < best) best = n, bk = k, bdy = oy[a], bdx = ox[b];
                }
        }
        if (bk >= 0) {
            const int cy = bdy, cx = bdx;
            for (int a = -1; a <= 1; a++)
                for (int b = -1; b <= 1; b++) {
                    const long n = mask_mismatch(ps, &L->pose[bk], cy + a, cx + b, best);
                    if (n < best) best = n, bdy = cy + a, bdx = cx + b;
                }
        }
        ps->mref = 0, ps->mdy = 0, ps->mdx = 0;
        if (bk >= 0) {
            /* priced as coded, the probabilities adapting (on copies) */
            RcProb t[PNMF_SPRITE_MASK_CTX];
            memcpy(t, prob, sizeof(t));
            const double with = mask_pass(t, ps, &L->pose[bk], bdy, bdx, 1, NULL);
            memcpy(t, prob, sizeof(t));
            if (with < mask_pass(t, ps, NULL, 0, 0, 1, NULL)) ps->mref = i - bk, ps->mdy = bdy, ps->mdx = bdx;
        }
        mask_pass(prob, ps, ps->mref ? &L->pose[bk] : NULL, ps->mdy, ps->mdx, 1, NULL);
    }
}

void pnmf_sprite_masks_write(Buf *b, const PnmfSpriteLayer *L)
{
    RcProb prob[PNMF_SPRITE_MASK_CTX];
    rc_probs_init(prob, PNMF_SPRITE_MASK_CTX);
    Buf s = { 0 };
    RcEnc e;
    rc_enc_init(&e, &s);
    for (int i = 0; i < L->npose; i++) {
        /* a reference naming no earlier pose (which readers refuse; the
         * tests write such layers) leaves the mask coded alone */
        const PnmfSpritePose *ps = &L->pose[i];
        const int ok = ps->mref >= 1 && ps->mref <= i;
        mask_pass(prob, ps, ok ? &L->pose[i - ps->mref] : NULL, ps->mdy, ps->mdx, 0, &e);
    }
    rc_enc_finish(&e);
    if (s.err) b->err = 1;
    put_u(b, (uint64_t)s.len);
    put_bytes(b, s.p, s.len);
    pnmf_free(s.p);
}

/* Whether the window looks for sprites: they need the residual layer (the
 * composite is its prediction) and frames on the plain torus. */
static int sprites_on(const PnmfEncoder *e)
{
    return e->s.sprites && e->s.components && e->s.residual && e->s.shift_model == PNMF_SHIFT_TORUS &&
           e->s.algo != PNMF_ALGO_PAPER && !e->s.two_level && e->rows == e->vis_rows && e->cols == e->vis_cols;
}

/* The tolerance of the window's pose search: PNMF_SPRITE_TOL_LOSSY when
 * its frames carry coding noise (many pixels change by a level or two
 * from frame to frame, which drawn content does not do), else
 * PNMF_SPRITE_TOL. */
static int window_tol(const PnmfEncoder *e, int m)
{
    uint64_t still = 0, small = 0;
    for (int j = 1; j < m; j++) {
        const uint8_t *a = e->frames + (size_t)(j - 1) * e->nv, *b = a + e->nv;
        /* (byte differences and 32-bit counts a frame: a loop the compiler vectorizes) */
        uint32_t st = 0, sm = 0;
        for (size_t q = 0; q < e->nv; q++) {
            const uint8_t d = (uint8_t)(a[q] > b[q] ? a[q] - b[q] : b[q] - a[q]);
            st += d == 0;
            sm += (uint8_t)(d - 1) < PNMF_SPRITE_NOISE_DIFF;
        }
        still += st, small += sm;
    }
    const int lossy = (double)small > PNMF_SPRITE_NOISE_SHARE * (double)(still + small);
    return lossy ? PNMF_SPRITE_TOL_LOSSY : PNMF_SPRITE_TOL;
}

/* Every frame's placements, in found ids, for the m frames of the window:
 * the search runs on chunks of frames whose work space stays bounded.
 * *unrepeated: the repeat gate skipped every chunk (no sprite animation). */
static int find_poses(PnmfEncoder *e, int m, PnmfSpriteFrame *fr, int *unrepeated)
{
    PnmfSpriteParams p;
    pnmf_sprite_params_default(&p);
    p.tol = window_tol(e, m);
    if (p.tol > 0) p.budget = PNMF_SPRITE_BUDGET_LOSSY;
    else if (!e->s.quality && enc_picks(&e->s)) p.budget = PNMF_SPRITE_BUDGET_LOSSLESS;
    /* the repeat gate on lossy windows alone: on an exact source a few
     * exact repeats can pay (povray_spline -q 16: 1 % of the blobs recur,
     * and the layer is kept) */
    if (p.tol > 0) p.min_repeat = PNMF_SPRITE_MIN_REPEAT, p.repeat_blobs = PNMF_SPRITE_REPEAT_BLOBS;
    /* -q 0 codes the window lossless: poses that match only within the
     * noise predict no sample exactly, the search is not made */
    if (p.tol > 0 && !e->s.quality && enc_picks(&e->s)) return 0;
    pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: sprite search within %d gray levels", e->windows, p.tol);
    const uint8_t **ptr = pnmf_malloc_array((size_t)m, sizeof(*ptr));
    if (!ptr) return PNMF_ERR_NOMEM;
    for (int j = 0; j < m; j++) ptr[j] = e->frames + (size_t)j * e->nv;
    size_t per = PNMF_SPRITE_CHUNK_PIXELS / e->nv;
    const int chunk = per < 1 ? 1 : per > (size_t)m ? m : (int)per;
    int ret = 0;
    *unrepeated = p.min_repeat > 0;
    for (int j0 = 0; ret >= 0 && j0 < m; j0 += chunk) {
        const int n = m - j0 < chunk ? m - j0 : chunk;
        PnmfSpriteWindow win;
        ret = pnmf_sprite_find(&e->sfound, &p, ptr + j0, e->width, e->width, e->height, n, &win);
        if (ret < 0) break;
        *unrepeated &= win.skipped;
        if (p.min_repeat > 0 && win.sized >= p.repeat_blobs)
            pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: %d of %d blobs of %d pixels or more recur: %s", e->windows,
                     win.repeats, win.sized, p.min_match, win.skipped ? "no sprite animation, no pose search" : "pose search");
        for (int j = 0; j < n; j++) fr[j0 + j] = win.frame[j], win.frame[j].place = NULL;
        pnmf_sprite_window_free(&win);
    }
    pnmf_free(ptr);
    return ret;
}

/* The placements of found poses of fewer than PNMF_SPRITE_TINY_PIXELS
 * pixels left out: at coarse steps such a pose (x11_fishtank's bubbles,
 * over half its placements) costs its placement's bits every frame, more
 * than the error it removes. Only in windows whose first frame looks like
 * a captured screen (pnmf_pal_screen_like()): on rendered content
 * (povray_spline) the small poses pay at some steps. */
static void drop_tiny(const PnmfEncoder *e, int m, PnmfSpriteFrame *fr)
{
    for (int j = 0; j < m; j++) {
        int n = 0;
        for (int q = 0; q < fr[j].count; q++)
            if (e->sfound.pose[fr[j].place[q].pose].npix >= PNMF_SPRITE_TINY_PIXELS) fr[j].place[n++] = fr[j].place[q];
        fr[j].count = n;
    }
}

/* Room in e->slot for every found pose, new ones at -1. */
static int grow_slots(PnmfEncoder *e)
{
    if (e->sfound.count <= e->slot_cap) return 0;
    int *s = pnmf_realloc(e->slot, (size_t)e->sfound.count * sizeof(int));
    if (!s) return PNMF_ERR_NOMEM;
    e->slot = s;
    int *t = pnmf_realloc(e->found_seen, (size_t)e->sfound.count * sizeof(int));
    if (!t) return PNMF_ERR_NOMEM;
    e->found_seen = t;
    for (int i = e->slot_cap; i < e->sfound.count; i++) s[i] = t[i] = -1;
    e->slot_cap = e->sfound.count;
    return 0;
}

/* Whether placement q of frame f can be a pose's source: its box inside
 * the frame and no later placement of the frame over it (the decoded
 * frame shows the pose there, whole). */
static int source_ok(const PnmfEncoder *e, const PnmfSpriteFrame *f, int q)
{
    const PnmfSpritePlace *pl = &f->place[q];
    const PnmfSpritePose *ps = &e->sfound.pose[pl->pose];
    if (pl->y < 0 || pl->x < 0 || pl->y + ps->h > e->vis_rows || pl->x + ps->w > e->vis_cols) return 0;
    for (int t = q + 1; t < f->count; t++) {
        const PnmfSpritePlace *o = &f->place[t];
        const PnmfSpritePose *os = &e->sfound.pose[o->pose];
        if (o->y < pl->y + ps->h && pl->y < o->y + os->h && o->x < pl->x + ps->w && pl->x < o->x + os->w) return 0;
    }
    return 1;
}

/* Whether frame g shows the pose of placement q of frame f (in_place:
 * at the same place). */
static int pose_shown(const PnmfSpriteFrame *f, int q, const PnmfSpriteFrame *g, int in_place)
{
    const PnmfSpritePlace *pl = &f->place[q];
    for (int t = 0; t < g->count; t++)
        if (g->place[t].pose == pl->pose && (!in_place || (g->place[t].y == pl->y && g->place[t].x == pl->x)))
            return 1;
    return 0;
}

/* The layer of the window from the found placements: the poses the
 * decoder holds keep their ids; another is sent, cut from the first frame
 * that shows it whole, when later frames of the window place it in enough
 * frames, enough of them where the frame before does not show it (rule),
 * and the dictionary's caps allow. Placements of poses the layer
 * does not hold (yet) are left to the residual layer. */
typedef struct PoseRule {
    int fresh, novel; /* frames after the source that show the pose where the frame before does not show it,
                       * or not there */
    int either;       /* 1: either count reaching its bound is enough */
} PoseRule;

/* Whether found pose f, shown in the window at its source frame src alone
 * (later: the frames after it that show it), comes round: an earlier
 * window showed it more than the residual layer's reference frames back,
 * so no vector reaches it, and a later window of the key period may place
 * it (e->more). Such a pose is sent by the window where enough of them
 * come round together (a loop longer than the window: each pose shown in
 * one frame of each window), however few frames show it. nfound: the
 * poses found before the window. */
static int comes_round(const PnmfEncoder *e, int m, int nfound, int f, int src, int later)
{
    return e->more && f < nfound && !later && e->found_seen[f] >= 0 &&
           e->frame_count - m + src - e->found_seen[f] > PNMF_RES_REFS;
}

static int build_layer(PnmfEncoder *e, int m, PnmfSpriteFrame *fr, const PoseRule *rule, int nfound,
                       PnmfSpriteLayer *L, int **spr_new, int *spr_nnew)
{
    const int nf = e->sfound.count;
    const size_t nn = nf ? (size_t)nf : 1;
    int *src = pnmf_malloc_array(nn, sizeof(int));    /* the source frame of a pose not held, or -1 */
    int *srcq = pnmf_malloc_array(nn, sizeof(int));   /* its placement there */
    int *later = pnmf_calloc(nn, sizeof(int));        /* frames after the source placing it */
    int *fresh = pnmf_calloc(nn, sizeof(int));        /* ... where the frame before does not show it */
    int *novel = pnmf_calloc(nn, sizeof(int));        /* ... where it does not show it there */
    int *last = pnmf_malloc_array(nn, sizeof(int));
    int *id = pnmf_malloc_array(nn, sizeof(int));     /* its id in the layer, -1: not placed */
    int ret = PNMF_ERR_NOMEM;
    if (!src || !srcq || !later || !fresh || !novel || !last || !id) goto end;
    for (int i = 0; i < nf; i++) src[i] = last[i] = -1, id[i] = e->continues ? e->slot[i] : -1;
    int total = 0;
    for (int j = 0; j < m; j++)
        for (int q = 0; q < fr[j].count; q++) {
            const int f = fr[j].place[q].pose;
            total++;
            if (id[f] >= 0) continue;
            if (src[f] < 0) {
                if (source_ok(e, &fr[j], q)) src[f] = j, srcq[f] = q, last[f] = j;
            } else if (last[f] != j) {
                later[f]++, last[f] = j;
                fresh[f] += !pose_shown(&fr[j], q, &fr[j - 1], 0);
                novel[f] += !pose_shown(&fr[j], q, &fr[j - 1], 1);
            }
        }
    /* a loop: at least PNMF_SPRITE_RECUR_MIN poses come round */
    int nround = 0;
    for (int f = 0; f < nf; f++) nround += id[f] < 0 && src[f] >= 0 && comes_round(e, m, nfound, f, src[f], later[f]);
    const int loop = nround >= PNMF_SPRITE_RECUR_MIN;
    const int base = e->continues ? e->sdict.count : 0;
    size_t pixels = e->continues ? e->sdict.pixels : 0;
    L->present = 1, L->m = m;
    L->first = pnmf_calloc((size_t)m + 1, sizeof(int));
    L->place = pnmf_malloc_array(total ? (size_t)total : 1, sizeof(PnmfSpritePlace));
    L->pose = pnmf_calloc(nn, sizeof(PnmfSpritePose));
    *spr_new = pnmf_malloc_array(nn, sizeof(int));
    if (!L->first || !L->place || !L->pose || !*spr_new) goto end;
    /* each frame's placements of poses the layer holds, within the
     * painting's bound; the poses sent from this frame on */
    const uint64_t max_work = (uint64_t)PNMF_SPRITE_WORK * e->nv + PNMF_SPRITE_WORK_MIN;
    int n = 0;
    for (int j = 0; j < m; j++) {
        L->first[j] = n;
        uint64_t work = 0;
        for (int q = 0; q < fr[j].count && n - L->first[j] < PNMF_SPRITE_MAX_PLACES; q++) {
            const PnmfSpritePlace *pl = &fr[j].place[q];
            const int f = pl->pose;
            if (id[f] >= 0 && (f >= nf || src[f] < 0 || src[f] < j)) {
                work += (uint64_t)e->sfound.pose[f].npix;
                if (work > max_work) break;
                L->place[n++] = (PnmfSpritePlace){ id[f], pl->y, pl->x };
            }
        }
        /* poses cut from this frame, in placement order */
        for (int q = 0; q < fr[j].count; q++) {
            const int f = fr[j].place[q].pose;
            const int fails = rule->either ? fresh[f] < rule->fresh && novel[f] < rule->novel
                                           : fresh[f] < rule->fresh || novel[f] < rule->novel;
            if (id[f] >= 0 || src[f] != j || srcq[f] != q) continue;
            if ((later[f] < PNMF_SPRITE_MIN_FRAMES - 1 || fails) && !(loop && comes_round(e, m, nfound, f, j, later[f])))
                continue;
            const PnmfSpritePose *ps = &e->sfound.pose[f];
            if (base + L->npose >= PNMF_SPRITE_MAX_POSES || pixels + (size_t)ps->w * ps->h > PNMF_SPRITE_MAX_PIXELS)
                continue; /* over a cap: left to the residual layer */
            PnmfSpritePose *np = &L->pose[L->npose];
            if ((ret = pnmf_sprite_pose_make(np, ps->w, ps->h, ps->mask, ps->mask)) < 0) goto end;
            np->src = j, np->sy = fr[j].place[q].y, np->sx = fr[j].place[q].x;
            pixels += (size_t)ps->w * ps->h;
            id[f] = base + L->npose;
            (*spr_new)[L->npose++] = f;
        }
    }
    L->first[m] = n;
    L->ctxmasks = 1;
    pnmf_sprite_masks_plan(L);
    *spr_nnew = L->npose;
    ret = n;
end:
    pnmf_free(src);
    pnmf_free(srcq);
    pnmf_free(later);
    pnmf_free(fresh);
    pnmf_free(novel);
    pnmf_free(last);
    pnmf_free(id);
    return ret;
}

/* e->wdict: the dictionary as the window with layer L would leave it, for
 * its composite. */
static int window_dict(PnmfEncoder *e, PnmfSpriteLayer *L)
{
    char why[160];
    int ret = e->continues ? pnmf_sprite_dict_copy(&e->wdict, &e->sdict) : 0;
    if (!e->continues) pnmf_sprite_dict_free(&e->wdict);
    return ret < 0 ? ret : pnmf_sprite_dict_commit(&e->wdict, L, e->continues, e->vis_rows, e->vis_cols, why, sizeof(why));
}

/* One run over the frames the sets are weighed on, for code_sets(), and
 * its cost there; at frame h too where h lies between the frames coded
 * and those (the cost of a prefix the residual layer alone is weighed on). */
typedef struct PrefixJob {
    ResRun run;
    int p, h, ret;
    double j, jh;
    size_t bytes;
} PrefixJob;

static void *prefix_job(void *arg)
{
    PrefixJob *c = arg;
    c->ret = 0;
    if (c->h > c->run.j && c->h < c->p) {
        c->ret = pnmf_res_run_frames(&c->run, c->h);
        if (c->ret >= 0) c->ret = pnmf_res_run_cost(&c->run, &c->jh, NULL);
    }
    if (c->ret >= 0) c->ret = pnmf_res_run_frames(&c->run, c->p);
    if (c->ret >= 0) c->ret = pnmf_res_run_cost(&c->run, &c->j, &c->bytes);
    return NULL;
}

/* Jobs a and b (b NULL: a alone), at once on two threads where there are. */
static void prefix_jobs(const PnmfEncoder *e, PrefixJob *a, PrefixJob *b)
{
    pthread_t th;
    const int two = b && enc_two_threads(e) && !pthread_create(&th, NULL, prefix_job, b);
    prefix_job(a);
    if (two) pthread_join(th, NULL);
    else if (b) prefix_job(b);
}

/* code_sets() of two sets (code[0], code[1]) weighed on p frames: both
 * coded on the first q1 of them first, where one the other exceeds by
 * more than PNMF_SPRITE_STAGE_CLEAR of it is kept at once; else both go
 * on to p and are weighed as code_sets() weighs them. jbare[0], [1]: the
 * costs of the residual layer alone on the first split / 2 and split
 * frames (0: not had); both sets within PNMF_SPRITE_FAMILY_TIE of it on q1
 * or p of them leave which set is kept next to moot (the layer changes
 * next to nothing), and the one of the lower cost goes on alone. */
static int code_two(PnmfEncoder *e, PnmfWindowModel *cand, const int *code, int m, int step16, int split, int p, int q1,
                    const double jbare[2], int *best, double *jc, PrefixJob *kept_job)
{
    PrefixJob job[2];
    int ret = 0, ns = 0;
    for (; ret >= 0 && ns < 2; ns++) {
        job[ns].p = q1, job[ns].h = 0, job[ns].j = job[ns].jh = 0;
        ret = window_dict(e, &cand[code[ns]].spr);
        if (ret >= 0) ret = pnmf_res_run_start(&job[ns].run, e, &e->rb[ns], &cand[code[ns]], m, step16);
        if (ret < 0) break;
    }
    if (ret >= 0) {
        prefix_jobs(e, &job[0], &job[1]);
        ret = job[0].ret < 0 ? job[0].ret : job[1].ret;
    }
    int k = 0; /* the slot kept: the first set's among equals */
    const int moot1 = jbare[0] > 0 && q1 == split / PNMF_SPRITE_PREFIX_DIV &&
                      fabs(job[0].j - jbare[0]) < PNMF_SPRITE_FAMILY_TIE * jbare[0] &&
                      fabs(job[1].j - jbare[0]) < PNMF_SPRITE_FAMILY_TIE * jbare[0];
    if (ret >= 0 && (moot1 || fabs(job[0].j - job[1].j) > PNMF_SPRITE_STAGE_CLEAR * fmin(job[0].j, job[1].j))) {
        k = job[1].j < job[0].j;
        jc[code[0]] = job[0].j, jc[code[1]] = job[1].j;
        /* the frames the residual layer alone is weighed on: here, or
         * later on the kept set's way to the last frame */
        if (split == q1) job[k].h = q1, job[k].jh = job[k].j;
        else job[k].h = split > q1 ? split : 0;
    } else if (ret >= 0) {
        for (int t = 0; t < 2; t++) {
            job[t].jh = split == q1 ? job[t].j : 0;
            job[t].h = split == q1 ? q1 : p < m ? 0 : split;
            job[t].p = p;
        }
        prefix_jobs(e, &job[0], &job[1]);
        ret = job[0].ret < 0 ? job[0].ret : job[1].ret;
        for (int t = 0; ret >= 0 && t < 2; t++)
            if (p < m) job[t].h = p, job[t].jh = job[t].j;
        const int moot = jbare[1] > 0 && p == split && fabs(job[0].j - jbare[1]) < PNMF_SPRITE_FAMILY_TIE * jbare[1] &&
                         fabs(job[1].j - jbare[1]) < PNMF_SPRITE_FAMILY_TIE * jbare[1];
        if (ret >= 0 && p < m && !moot && fabs(job[1].j - job[0].j) <= PNMF_SPRITE_PREFIX_TIE * fmin(job[0].j, job[1].j)) {
            /* too close to tell on the first frames: both to the last */
            job[0].p = job[1].p = m;
            prefix_jobs(e, &job[0], &job[1]);
            ret = job[0].ret < 0 ? job[0].ret : job[1].ret;
        }
        jc[code[0]] = job[0].j, jc[code[1]] = job[1].j;
        k = job[1].j < job[0].j;
    }
    for (int t = 0; t < ns; t++)
        if (t != k || ret < 0) pnmf_res_run_end(&job[t].run);
    if (ret < 0) return ret;
    *best = code[k];
    *kept_job = job[k];
    return 0;
}

/* The ncode sets code[] weighed at step16 on the window's first
 * PNMF_SPRITE_PREFIX_DIV-th of frames, each coded that far, two at once
 * on two threads where there are: the set of the least cost there is
 * kept, its run left under way in *kept_job, to go on to the last frame; the
 * others' costs there in jc (not comparable with a whole window's), their
 * runs ended. Two sets within PNMF_SPRITE_PREFIX_TIE of each other there
 * both go on to the last frame and are weighed on all of it, as are the
 * sets of a window of fewer than twice PNMF_SPRITE_PREFIX_MIN frames and
 * three sets (the tests'). A window's sets differ from their first frames
 * on (a pose is placed from the frame after its source), so their codings
 * share nothing. On the development set's sprite clips half of a window's
 * frames picked the set all of them pick in all windows of 40 frames and
 * more but those within 1 % there; in one of 30 frames another set, for
 * 0.1 % of its cost at -q 16's step and +0.31 % BD-rate on x11_penguins
 * (docs/measurements.md, "Sprite-clip encoding speed").
 * *kept_job: the kept set's job, its run at the frames weighed (kept_job->p),
 * and its cost at frame kept_job->h: the frames weighed when fewer than the
 * window's, else split (0: none); that cost is had only where h is at most
 * the frames its run has coded, else the caller codes on past h. jbare:
 * as code_two()'s. */
static int code_sets(PnmfEncoder *e, PnmfWindowModel *cand, const int *code, int ncode, int m, int step16, int split,
                     const double jbare[2], int *best, double *jc, PrefixJob *kept_job)
{
    int p = m / PNMF_SPRITE_PREFIX_DIV;
    if (p < PNMF_SPRITE_PREFIX_MIN || ncode > 2) p = m;
    const int q1 = p / PNMF_SPRITE_PREFIX_DIV;
    if (ncode == 2 && q1 >= PNMF_SPRITE_STAGE_MIN)
        return code_two(e, cand, code, m, step16, split, p, q1, jbare, best, jc, kept_job);
    PrefixJob job[2];
    int kept = -1, ret = 0; /* the job slot of the set kept so far (slot k codes in e->rb[k]) */
    for (int c = 0; ret >= 0 && c < ncode;) {
        /* the next one or two sets, into the slots not kept */
        int slots[2], ns = 0;
        for (int k = 0; k < 2 && c + ns < ncode; k++)
            if (k != kept) slots[ns++] = k;
        if (!enc_two_threads(e)) ns = 1;
        for (int t = 0; ret >= 0 && t < ns; t++) {
            PrefixJob *jb = &job[slots[t]];
            const int r = code[c + t];
            jb->p = p, jb->h = p < m ? 0 : split, jb->ret = 0, jb->j = 0, jb->jh = 0;
            ret = window_dict(e, &cand[r].spr);
            if (ret >= 0) ret = pnmf_res_run_start(&jb->run, e, &e->rb[slots[t]], &cand[r], m, step16);
            if (ret < 0) ns = t; /* the ones started end below */
        }
        if (ns) prefix_jobs(e, &job[slots[0]], ns == 2 ? &job[slots[1]] : NULL);
        for (int t = 0; t < ns; t++) {
            PrefixJob *jb = &job[slots[t]];
            const int r = code[c + t];
            if (jb->ret < 0 && ret >= 0) ret = jb->ret;
            if (jb->p < m) jb->h = jb->p, jb->jh = jb->j;
            if (ret >= 0 && kept >= 0 && jb->p < m &&
                fabs(jb->j - job[kept].j) <= PNMF_SPRITE_PREFIX_TIE * fmin(jb->j, job[kept].j)) {
                /* too close to tell on the first frames: both to the last */
                jb->p = job[kept].p = m;
                prefix_jobs(e, &job[kept], jb);
                if (ret >= 0 && job[kept].ret < 0) ret = job[kept].ret;
                if (ret >= 0 && jb->ret < 0) ret = jb->ret;
                jc[*best] = job[kept].j;
            }
            jc[r] = jb->j;
            if (ret >= 0 && (kept < 0 || jb->j < job[kept].j)) {
                if (kept >= 0) pnmf_res_run_end(&job[kept].run);
                kept = slots[t], *best = r;
            } else {
                pnmf_res_run_end(&jb->run);
            }
        }
        c += ns;
    }
    if (ret < 0) {
        if (kept >= 0) pnmf_res_run_end(&job[kept].run);
        return ret;
    }
    *kept_job = job[kept];
    return 0;
}

/* *credit = the bytes a layer's new poses are credited with where its
 * family is weighed against the residual layer alone: a pose sent stays
 * in the dictionary for the rest of the key period, where later windows
 * place it without sending it again. An animation cycle as long as the
 * window shows each pose once after the frame it is cut from, which the
 * residual layer copies from the frame before: the pose pays only in the
 * windows after it. PNMF_SPRITE_DICT_CREDIT of the poses' bytes, in the
 * share (by box samples) of the poses placed at most
 * PNMF_SPRITE_CREDIT_PLACES times in the window (a pose placed more often
 * is weighed by its own window), where a window of the key period may
 * follow (e->more); else 0. 0 or PNMF_ERR_NOMEM. */
static int dict_credit(const PnmfEncoder *e, const PnmfSpriteLayer *L, double *credit)
{
    *credit = 0;
    if (!e->more || !L->present || !L->npose) return 0;
    const int base = e->continues ? e->sdict.count : 0;
    int *uses = pnmf_calloc((size_t)L->npose, sizeof(int));
    if (!uses) return PNMF_ERR_NOMEM;
    for (int q = 0; q < L->first[L->m]; q++)
        if (L->place[q].pose >= base && L->place[q].pose - base < L->npose) uses[L->place[q].pose - base]++;
    double all = 0, few = 0;
    for (int i = 0; i < L->npose; i++) {
        const double a = (double)L->pose[i].w * L->pose[i].h;
        all += a, few += uses[i] <= PNMF_SPRITE_CREDIT_PLACES ? a : 0;
    }
    pnmf_free(uses);
    *credit = PNMF_SPRITE_DICT_CREDIT * (double)pnmf_sprite_poses_bytes(L) * few / all;
    return 0;
}

int pnmf_window_sprites(PnmfEncoder *e, EncWindow *w)
{
    e->spr_credit = 0;
    if (!sprites_on(e)) return 0;
    const int m = w->m;
    const double t0 = enc_now();
    PnmfSpriteFrame *fr = pnmf_calloc((size_t)m, sizeof(*fr));
    if (!fr) return PNMF_ERR_NOMEM;
    /* layers of three sets of poses, each weighed at the gate: every pose
     * placed in two frames; those some frame shows where the frame before
     * does not show them (what the frame before shows, the residual layer
     * may predict from it for less than the pose costs); those that move
     * or change in three frames at least */
    static const PoseRule rules[SPRITE_RULES] = { { 0, 0, 0 }, { PNMF_SPRITE_MIN_FRESH, 0, 0 },
                                                  { 0, PNMF_SPRITE_MIN_NOVEL, 0 } };
    /* -q 0 (lossless, exact poses): one set, the poses that are fresh or
     * move, coded alone (below) */
    static const PoseRule lossless_rule = { PNMF_SPRITE_MIN_FRESH, PNMF_SPRITE_MIN_NOVEL, 1 };
    const int ll = !e->s.quality && enc_picks(&e->s);
    const int nrules = ll ? 1 : SPRITE_RULES;
    PnmfWindowModel cand[SPRITE_RULES];
    int *cnew[SPRITE_RULES] = { NULL }, cn[SPRITE_RULES] = { 0 }, cplaced[SPRITE_RULES] = { 0 };
    memset(cand, 0, sizeof(cand));
    const int nfound = e->sfound.count; /* the poses found in earlier windows */
    int ret = find_poses(e, m, fr, &w->unrepeated);
    if (ret >= 0 && e->s.quality >= PNMF_SPRITE_TINY_Q && enc_screen_like(e))
        drop_tiny(e, m, fr);
    if (ret >= 0) ret = grow_slots(e);
    for (int r = 0; ret >= 0 && r < nrules; r++) {
        ret = pnmf_model_alloc(&cand[r], e->rows, e->cols, e->vis_rows, e->vis_cols, m, e->s.components, 0);
        if (ret >= 0)
            ret = cplaced[r] = build_layer(e, m, fr, ll ? &lossless_rule : &rules[r], nfound, &cand[r].spr, &cnew[r], &cn[r]);
        if (ret >= 0 && !cplaced[r] && !cn[r] && !r) break; /* nothing placed, nothing sent */
    }
    /* the frames that show each found pose, for the windows after */
    for (int j = 0; ret >= 0 && j < m; j++)
        for (int q = 0; q < fr[j].count; q++) e->found_seen[fr[j].place[q].pose] = e->frame_count - m + j;
    const int placed = cplaced[0];
    /* a layer places poses, or sends poses later windows may place */
    int has[SPRITE_RULES];
    for (int r = 0; r < SPRITE_RULES; r++) has[r] = cplaced[r] > 0 || cn[r] > 0;
    for (int j = 0; j < m; j++) pnmf_free(fr[j].place);
    pnmf_free(fr);
    e->t_sprites += enc_now() - t0;
    /* weighed at the first step the pick tries, where it picks (-q 0:
     * lossless): the pick reuses both codings, and a layer kept meets the
     * residual layer alone there again */
    const int gate16 = enc_pick_first_step(e, w->step16);
    double j[2] = { 0, 0 }, sse[2] = { 0, 0 }, jc[SPRITE_RULES], lambda8 = 0;
    size_t bytes = 0;
    int best = -1, same[SPRITE_RULES];
    /* each set is coded once, unless an earlier one sends the same poses;
     * every pose placed twice only where one of the smaller sets places
     * nothing or equals it: the poses it adds are shown by the frame
     * before, which the residual layer predicts them from for about what
     * they cost, and on the development set's sprite clips it wins in no
     * window where both smaller sets differ from it (on synthetic sprites
     * that stay in place it can, by 1 to 3 %: tests/test_sprite_find.c).
     * One coding fewer per window (docs/algorithms.md, the sprite layer). */
    for (int r = 0; r < SPRITE_RULES; r++) {
        same[r] = -1;
        for (int o = 0; same[r] < 0 && o < r; o++)
            if (has[o] && has[r] && cn[o] == cn[r] &&
                !memcmp(cnew[o], cnew[r], (size_t)cn[r] * sizeof(int)))
                same[r] = o;
    }
    const int skip0 = !e->sprite_every_set && has[1] && has[2] && same[1] != 0 && same[2] != 0;
    int code[SPRITE_RULES], ncode = 0;
    for (int r = 0; r < SPRITE_RULES; r++) {
        jc[r] = -1;
        if (!((!r && skip0) || !has[r] || same[r] >= 0)) code[ncode++] = r;
    }
    /* at -q PNMF_PICK_FLOOR the pick weighs the window with its
     * layer and without it at this step alone: where the layer costs under
     * PNMF_SPRITE_CLEAR times the residual layer alone on the first split
     * frames (half of a window of PNMF_SPRITE_PREFIX_MIN frames or more),
     * it is kept without the residual layer alone coded on, and
     * the pick is offered its coding alone. On the development set's
     * sprite clips every window the pick gives to the residual layer alone
     * costs 1.002 times it or more there (docs/measurements.md, "Sprite
     * gate on half a window"). */
    const int split =
        enc_picks(&e->s) && e->s.quality == PNMF_PICK_FLOOR && m >= PNMF_SPRITE_PREFIX_MIN ? m / PNMF_SPRITE_PREFIX_DIV : 0;
    /* where the pick starts at lo's step (enc_pick_from_lo(): not a screen,
     * from -q PNMF_PICK_NO_FLOOR_Q up) its first step codes the one family
     * offered alone on where the two cost under PNMF_PICK_TIE apart, which
     * on rendered content with a few poses (povray_spline) they nearly
     * always do, by 2 % or less. There one set, the one that sends the
     * fewest new poses (on povray_spline the set of the lower cost on the
     * first quarter in 8 of the 9 windows of -q 26 to 64 where two are
     * coded: the poses another adds cost more than they save), and the
     * residual layer alone are coded on the window's first early frames
     * (a quarter, else half a window of PNMF_SPRITE_PREFIX_MIN frames or
     * more) and weighed there: where they cost under
     * PNMF_SPRITE_EARLY_TIE apart, the lower of the two families alone is
     * coded on to the last frame; else both are, and the gate and the
     * pick weigh them as where the window is not weighed early
     * (docs/speed.md, "Sprite families weighed early"). */
    const int early_on = enc_pick_from_lo(e) && !ll && m >= PNMF_SPRITE_PREFIX_MIN;
    const int early = !early_on                                        ? 0
                      : m / 4 >= PNMF_SPRITE_STAGE_MIN ? m / 4
                                                       : m / PNMF_SPRITE_PREFIX_DIV;
    /* at -q PNMF_PICK_FLOOR (not -q 0) the residual layer alone is coded
     * on the split frames first, in a third set of buffers: where the
     * layer costs within PNMF_SPRITE_FAMILY_TIE of it there, two sets too
     * close to tell are not both coded to the last frame, and the layer is
     * kept without the residual layer alone coded on (the layer weighs
     * next to nothing: exact rendered content such as povray_spline) */
    const int pre = split && e->rb[2].P;
    int skipped = 0, bare_only = 0;
    double jclear = 0;
    if (ret >= 0 && has[0] && ncode >= 1) {
        PrefixJob kj, bj;
        int kj_on = 0, bare_on = 0;
        double jbare[2] = { 0, 0 }; /* its costs on the first split / 2 and split frames */
        if (pre) {
            ret = pnmf_model_alloc(&w->bare, e->rows, e->cols, e->vis_rows, e->vis_cols, m, cand[code[0]].k, 0);
            if (ret >= 0) ret = pnmf_res_run_start(&bj.run, e, &e->rb[2], &w->bare, m, gate16);
            bare_on = ret >= 0;
            if (ret >= 0) {
                bj.p = split, bj.h = split / PNMF_SPRITE_PREFIX_DIV;
                prefix_job(&bj);
                ret = bj.ret, jbare[0] = bj.h > 0 ? bj.jh : 0, jbare[1] = bj.j;
            }
        }
        if (ret >= 0 && early) {
            /* the set that sends the fewest new poses (the later rule
             * among equals) */
            best = code[0];
            for (int c = 1; c < ncode; c++)
                if (cn[code[c]] <= cn[best]) best = code[c];
            ret = pnmf_model_alloc(&w->bare, e->rows, e->cols, e->vis_rows, e->vis_cols, m, cand[best].k, 0);
            if (ret >= 0) ret = pnmf_res_run_start(&bj.run, e, &e->rb[1], &w->bare, m, gate16);
            bare_on = ret >= 0;
            if (ret >= 0) ret = window_dict(e, &cand[best].spr);
            if (ret >= 0) ret = pnmf_res_run_start(&kj.run, e, &e->rb[0], &cand[best], m, gate16);
            kj_on = ret >= 0;
            if (ret >= 0) {
                bj.p = kj.p = early, bj.h = kj.h = 0;
                prefix_jobs(e, &kj, &bj);
                ret = kj.ret < 0 ? kj.ret : bj.ret;
            }
            if (ret >= 0) {
                jclear = kj.j / bj.j;
                pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: on %d frames the layer costs %.4f times the residual layer alone",
                         e->windows, early, jclear);
                /* a layer that places most of its poses later in the
                 * window (a loop whose poses come round again after the
                 * first frames) is not foretold by them: weighed whole */
                const PnmfSpriteLayer *L = &cand[best].spr;
                const int late = (double)L->first[early] * m < PNMF_SPRITE_EARLY_PLACES * early * L->first[m];
                if (fabs(jclear - 1) < PNMF_SPRITE_EARLY_TIE && !late) skipped = jclear <= 1, bare_only = jclear > 1;
                kj.p = m, kj.h = 0, bj.p = m, bj.h = 0;
                if (bare_only) prefix_job(&bj);
                else prefix_jobs(e, &kj, skipped ? NULL : &bj);
                ret = bare_only ? bj.ret : kj.ret < 0 ? kj.ret : skipped ? 0 : bj.ret;
            }
        } else if (ll) {
            /* -q 0: the set to the last frame, kept without the residual
             * layer alone coded beside it. Exact poses only add
             * predictions a block may take or leave: on the development
             * set's sprite clips the files change by -5.5 % to +1.4 %
             * against weighing three sets and the residual layer alone
             * by coding each, for half the CPU (docs/measurements.md,
             * "Lossless encoding: one coding a window"). */
            best = code[0], skipped = 1;
            ret = window_dict(e, &cand[best].spr);
            if (ret >= 0) ret = pnmf_res_run_start(&kj.run, e, &e->rb[0], &cand[best], m, gate16);
            kj_on = ret >= 0;
            if (ret >= 0) ret = pnmf_res_run_frames(&kj.run, m);
            kj.j = 0, kj.bytes = 0;
        } else if (ret >= 0 && ncode == 1) {
            best = code[0];
            kj.p = m, kj.h = split, kj.jh = 0;
            ret = window_dict(e, &cand[best].spr);
            if (ret >= 0) ret = pnmf_res_run_start(&kj.run, e, &e->rb[0], &cand[best], m, gate16);
            kj_on = ret >= 0;
            if (ret >= 0 && kj.h) {
                /* the first frames alone: the rest waits for the weighing */
                kj.p = kj.h, prefix_job(&kj);
                ret = kj.ret, kj.jh = kj.j, kj.p = m;
            }
        } else if (ret >= 0) {
            ret = code_sets(e, cand, code, ncode, m, gate16, split, jbare, &best, jc, &kj);
            kj_on = ret >= 0;
        }
        if (ret >= 0 && !pre && !ll && !early) {
            /* the set kept, gone on to the last frame beside the residual
             * layer alone (its coding stays in its candidate, where the
             * pick reuses it), the latter to the kept set's first frames
             * where they are weighed, else to the last frame; at once on
             * two threads where there are */
            ret = window_dict(e, &cand[best].spr);
            if (ret >= 0)
                ret = pnmf_model_alloc(&w->bare, e->rows, e->cols, e->vis_rows, e->vis_cols, m, cand[best].k, 0);
            if (ret >= 0)
                ret = pnmf_res_run_start(&bj.run, e, kj.run.rb == &e->rb[0] ? &e->rb[1] : &e->rb[0], &w->bare, m,
                                         gate16);
            bare_on = ret >= 0;
        }
        if (ret >= 0 && pre) {
            /* weighed where the residual layer alone stands (the split
             * frame), the kept set coded there first where it is not */
            const int hw = kj.h, weigh = hw > 0 && hw < m && hw == bj.run.j;
            if (weigh && kj.run.j < hw) {
                kj.p = hw, kj.h = 0;
                prefix_job(&kj);
                ret = kj.ret, kj.jh = kj.j;
            }
            if (ret >= 0 && weigh) {
                jclear = kj.jh / bj.j;
                pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: on %d frames the layer costs %.3f times the residual layer alone",
                         e->windows, bj.p, jclear);
                skipped = jclear < PNMF_SPRITE_CLEAR || fabs(jclear - 1) < PNMF_SPRITE_FAMILY_TIE;
            }
            if (ret >= 0) {
                kj.p = m, kj.h = 0, bj.p = m, bj.h = 0;
                prefix_jobs(e, &kj, skipped ? NULL : &bj);
                ret = kj.ret < 0 ? kj.ret : skipped ? 0 : bj.ret;
            }
        } else if (ret >= 0 && !ll && !early) {
            const int hw = kj.h, weigh = split && hw > 0 && hw < m;
            bj.p = weigh ? hw : m, bj.h = 0;
            kj.p = m, kj.h = hw > kj.run.j ? hw : 0; /* its cost there on the way, where not had yet */
            prefix_jobs(e, &kj, &bj);
            ret = kj.ret < 0 ? kj.ret : bj.ret;
            if (ret >= 0 && weigh) {
                jclear = kj.jh / bj.j;
                pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: on %d frames the layer costs %.3f times the residual layer alone",
                         e->windows, bj.p, jclear);
                if (jclear < PNMF_SPRITE_CLEAR) {
                    skipped = 1;
                } else {
                    bj.p = m;
                    prefix_job(&bj);
                    ret = bj.ret;
                }
            }
        }
        if (ret >= 0) {
            j[0] = kj.j, sse[0] = kj.run.sse, bytes = kj.bytes, lambda8 = 8 * kj.run.lambda;
            if (!skipped) j[1] = bj.j, sse[1] = bj.run.sse, w->bare_bytes = bj.bytes;
            if (!bare_only) jc[best] = j[0];
            if (!skipped && !bare_only)
                pnmf_log(&e->s.logger, PNMF_LOG_DEBUG,
                         "window %d: with the model %zu bytes, sse %.0f; without %zu bytes, sse %.0f", e->windows, bytes,
                         sse[0], w->bare_bytes, sse[1]);
        }
        if (kj_on) pnmf_res_run_end(&kj.run);
        if (bare_on) pnmf_res_run_end(&bj.run);
        if (skipped || ret < 0) {
            pnmf_model_free(&w->bare);
            w->bare_bytes = 0;
        }
    }
    if (best < 0) best = 0;
    if (has[0])
        pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: pose sets coded:%s%s%s", e->windows, jc[0] >= 0 ? " every" : "",
                 jc[1] >= 0 ? " fresh" : "", jc[2] >= 0 ? " moving" : "");
    PnmfWindowModel md = cand[best];
    w->spr_new = cnew[best], w->spr_nnew = cn[best];
    for (int r = 0; r < SPRITE_RULES; r++)
        if (r != best) pnmf_model_free(&cand[r]), pnmf_free(cnew[r]);
    if (ret < 0 || !has[0]) { /* an error, or nothing placed or sent */
        pnmf_model_free(&md);
        return ret < 0 ? ret : 0;
    }
    w->bare_sse = sse[1];
    /* at most the residual layer alone's bytes: a later window like this
     * one saves no more than it costs */
    double credit_all = 0;
    if (ret >= 0) ret = dict_credit(e, &md.spr, &credit_all);
    const double credit = fmin(credit_all, (double)w->bare_bytes);
    if (ret >= 0 && bare_only) {
        /* the residual layer alone, coded at the pick's first step: the
         * window's one family (no fit: the layer tied with it) */
        pnmf_model_free(&md);
        w->md = w->bare, w->sse = sse[1], w->sprites = 1;
        memset(&w->bare, 0, sizeof(w->bare));
        w->bare_bytes = 0;
    } else if (ret >= 0 && (skipped || j[0] - lambda8 * credit < PNMF_SPRITE_MARGIN * j[1])) {
        w->md = md, w->sprites = 1, w->sse = sse[0];
        e->spr_credit = credit_all; /* the pick caps it at each step */
    } else {
        pnmf_model_free(&md);
        if (gate16 != w->step16) {
            /* the carry and the probe weigh at the model's step: the coding
             * over no model waits for the pick, which starts with it */
            w->floor_bare = w->bare, w->floor_sse = w->bare_sse;
            memset(&w->bare, 0, sizeof(w->bare));
            w->bare_bytes = 0, w->bare_sse = 0;
        }
    }
    if (ret >= 0 && ll)
        pnmf_log(&e->s.logger, PNMF_LOG_INFO, "window %d: sprites: %d placed, %d new (fresh or moving poses): kept",
                 e->windows, placed, w->spr_nnew);
    else if (ret >= 0) {
        char cr[48] = "";
        if (credit > 0 && !skipped && !bare_only) snprintf(cr, sizeof(cr), ", %.0f bytes of poses credited", credit);
        pnmf_log(&e->s.logger, PNMF_LOG_INFO, "window %d: sprites: %d placed, %d new%s: %s (cost ratio %.3f%s)",
                 e->windows, placed, w->spr_nnew, best == 1 ? " (fresh poses)" : best == 2 ? " (moving poses)" : "",
                 w->sprites && !bare_only ? "kept" : "dropped",
                 skipped || bare_only ? jclear : (j[0] - lambda8 * credit) / j[1], cr);
    }
    return ret;
}

/* After the window is written: the dictionary as the decoder holds it
 * (a key window empties it; a sprite layer adds its poses), and which
 * found poses it holds. */
int pnmf_window_sprites_commit(PnmfEncoder *e, EncWindow *w)
{
    if (!e->continues) {
        pnmf_sprite_dict_free(&e->sdict);
        for (int i = 0; i < e->slot_cap; i++) e->slot[i] = -1;
    }
    if (!w->md.spr.present) return 0;
    char why[160];
    const int base = e->continues ? e->sdict.count : 0;
    PNMF_CHECK(pnmf_sprite_dict_commit(&e->sdict, &w->md.spr, 1, e->vis_rows, e->vis_cols, why, sizeof(why)));
    for (int i = 0; i < w->spr_nnew; i++) e->slot[w->spr_new[i]] = base + i;
    e->sprite_windows++;
    return 0;
}
