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
#include <stdlib.h>
#include <string.h>

#include "enc_internal.h"
#include "internal.h"
#include "log.h"
#include "ratectl.h"
#include "residual_search.h"

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
        for (size_t q = 0; q < e->nv; q++) {
            const int d = abs(a[q] - b[q]);
            still += d == 0;
            small += d > 0 && d <= PNMF_SPRITE_NOISE_DIFF;
        }
    }
    const int lossy = (double)small > PNMF_SPRITE_NOISE_SHARE * (double)(still + small);
    return lossy ? PNMF_SPRITE_TOL_LOSSY : PNMF_SPRITE_TOL;
}

/* Every frame's placements, in found ids, for the m frames of the window:
 * the search runs on chunks of frames whose work space stays bounded. */
static int find_poses(PnmfEncoder *e, int m, PnmfSpriteFrame *fr)
{
    PnmfSpriteParams p;
    pnmf_sprite_params_default(&p);
    p.tol = window_tol(e, m);
    if (p.tol > 0) p.budget = PNMF_SPRITE_BUDGET_LOSSY;
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
    for (int j0 = 0; ret >= 0 && j0 < m; j0 += chunk) {
        const int n = m - j0 < chunk ? m - j0 : chunk;
        PnmfSpriteWindow win;
        ret = pnmf_sprite_find(&e->sfound, &p, ptr + j0, e->width, e->width, e->height, n, &win);
        if (ret < 0) break;
        for (int j = 0; j < n; j++) fr[j0 + j] = win.frame[j], win.frame[j].place = NULL;
        pnmf_sprite_window_free(&win);
    }
    pnmf_free(ptr);
    return ret;
}

/* Room in e->slot for every found pose, new ones at -1. */
static int grow_slots(PnmfEncoder *e)
{
    if (e->sfound.count <= e->slot_cap) return 0;
    int *s = pnmf_realloc(e->slot, (size_t)e->sfound.count * sizeof(int));
    if (!s) return PNMF_ERR_NOMEM;
    for (int i = e->slot_cap; i < e->sfound.count; i++) s[i] = -1;
    e->slot = s, e->slot_cap = e->sfound.count;
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

/* The layer of the window from the found placements: the poses the
 * decoder holds keep their ids; another is sent, cut from the first frame
 * that shows it whole, when later frames of the window place it in enough
 * frames and the dictionary's caps allow. Placements of poses the layer
 * does not hold (yet) are left to the residual layer. */
static int build_layer(PnmfEncoder *e, EncWindow *w, PnmfSpriteFrame *fr, PnmfSpriteLayer *L)
{
    const int m = w->m, nf = e->sfound.count;
    const size_t nn = nf ? (size_t)nf : 1;
    int *src = pnmf_malloc_array(nn, sizeof(int));    /* the source frame of a pose not held, or -1 */
    int *srcq = pnmf_malloc_array(nn, sizeof(int));   /* its placement there */
    int *later = pnmf_calloc(nn, sizeof(int));        /* frames after the source placing it */
    int *last = pnmf_malloc_array(nn, sizeof(int));
    int *id = pnmf_malloc_array(nn, sizeof(int));     /* its id in the layer, -1: not placed */
    int ret = PNMF_ERR_NOMEM;
    if (!src || !srcq || !later || !last || !id) goto end;
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
            }
        }
    const int base = e->continues ? e->sdict.count : 0;
    size_t pixels = e->continues ? e->sdict.pixels : 0;
    L->present = 1, L->m = m;
    L->first = pnmf_calloc((size_t)m + 1, sizeof(int));
    L->place = pnmf_malloc_array(total ? (size_t)total : 1, sizeof(PnmfSpritePlace));
    L->pose = pnmf_calloc(nn, sizeof(PnmfSpritePose));
    w->spr_new = pnmf_malloc_array(nn, sizeof(int));
    if (!L->first || !L->place || !L->pose || !w->spr_new) goto end;
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
            if (id[f] >= 0 || src[f] != j || srcq[f] != q || later[f] < PNMF_SPRITE_MIN_FRAMES - 1) continue;
            const PnmfSpritePose *ps = &e->sfound.pose[f];
            if (base + L->npose >= PNMF_SPRITE_MAX_POSES || pixels + (size_t)ps->w * ps->h > PNMF_SPRITE_MAX_PIXELS)
                continue; /* over a cap: left to the residual layer */
            PnmfSpritePose *np = &L->pose[L->npose];
            if ((ret = pnmf_sprite_pose_make(np, ps->w, ps->h, ps->mask, ps->mask)) < 0) goto end;
            np->src = j, np->sy = fr[j].place[q].y, np->sx = fr[j].place[q].x;
            pixels += (size_t)ps->w * ps->h;
            id[f] = base + L->npose;
            w->spr_new[L->npose++] = f;
        }
    }
    L->first[m] = n;
    w->spr_nnew = L->npose;
    ret = n;
end:
    pnmf_free(src);
    pnmf_free(srcq);
    pnmf_free(later);
    pnmf_free(last);
    pnmf_free(id);
    return ret;
}

int pnmf_window_sprites(PnmfEncoder *e, EncWindow *w)
{
    if (!sprites_on(e)) return 0;
    const int m = w->m;
    const double t0 = enc_now();
    PnmfSpriteFrame *fr = pnmf_calloc((size_t)m, sizeof(*fr));
    if (!fr) return PNMF_ERR_NOMEM;
    PnmfWindowModel md;
    memset(&md, 0, sizeof(md));
    int ret = find_poses(e, m, fr);
    if (ret >= 0) ret = grow_slots(e);
    if (ret >= 0) ret = pnmf_model_alloc(&md, e->rows, e->cols, e->vis_rows, e->vis_cols, m, e->s.components, 0);
    if (ret >= 0) ret = build_layer(e, w, fr, &md.spr);
    const int placed = ret;
    for (int j = 0; j < m; j++) pnmf_free(fr[j].place);
    pnmf_free(fr);
    e->t_sprites += enc_now() - t0;
    if (ret <= 0) { /* an error, or nothing placed */
        pnmf_model_free(&md);
        return ret < 0 ? ret : 0;
    }
    /* the dictionary as this window would leave it, for its composite */
    char why[160];
    ret = e->continues ? pnmf_sprite_dict_copy(&e->wdict, &e->sdict) : 0;
    if (!e->continues) pnmf_sprite_dict_free(&e->wdict);
    if (ret >= 0) ret = pnmf_sprite_dict_commit(&e->wdict, &md.spr, e->continues, e->vis_rows, e->vis_cols, why,
                                                sizeof(why));
    /* weighed at the first step the pick tries, where it picks (-q 0:
     * lossless): the pick reuses both codings, and a layer kept meets the
     * residual layer alone there again */
    const int gate16 = enc_pick_first_step(e, w->step16);
    double j[2], sse[2] = { 0, 0 };
    size_t bytes = 0;
    if (ret >= 0) ret = pnmf_window_costs(e, &md, &w->bare, m, gate16, j, sse, &bytes, &w->bare_bytes);
    w->bare_sse = sse[1];
    if (ret >= 0 && j[0] < PNMF_SPRITE_MARGIN * j[1]) {
        w->md = md, w->sprites = 1, w->sse = sse[0];
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
    if (ret >= 0)
        pnmf_log(&e->s.logger, PNMF_LOG_INFO, "window %d: sprites: %d placed, %d new: %s (cost ratio %.3f)",
                 e->windows, placed, w->spr_nnew, w->sprites ? "kept" : "dropped",
                 j[0] / j[1]);
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
