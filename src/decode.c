/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The decoder: container -> window payload -> model -> integer diamond
 * product -> frames, one window in memory at a time. */
#include <string.h>

#include "codec.h"
#include "container.h"
#include "diamond.h"
#include "internal.h"
#include "io.h"
#include "log.h"
#include "lossless.h"
#include "model.h"
#include "upsample.h"

struct PnmfDecoder {
    PnmfDecSettings s;
    PnmfMemReader mem;        /* the stream, when it is read from memory */
    PnmfContainerReader *cr;
    PnmfStreamInfo info;
    int w_step, r_step, rows, cols, vis_rows, vis_cols;
    int version;              /* the payloads' format: the writer's, or the newest this reader knows */
    size_t n;
    PnmfWindowModel md;
    PnmfWindowModel last;     /* the last model, whose components a window may carry over */
    PnmfKeep keep;            /* the windows' residual levels array, kept from window to window */
    int loaded, win_first, win_pos, next_frame, checked_end;
    int coded;                /* frames of the loaded window decoded: win_pos counts those shown,
                               * which differ with a coding order (window flags bit 19) */
    int read_last;            /* a frame was read since the open or the last seek */
    int64_t *acc;
    uint8_t *layout;
    uint8_t *P, *Pp, *D;      /* residual layer: model frames j, j-1; decoded frame j */
    uint8_t *ref[PNMF_RES_REFS]; /* decoded frames j-1, j-2, ... */
    uint8_t *key0;               /* the last key window's decoded frame 0 (window flags bit 21) */
    uint8_t *wref;            /* window flags bit 18: the weighted references, PNMF_RES_REFS frames
                               * (allocated at the first weighted frame) */
    PnmfSpriteDict sprites;   /* the sprite dictionary (sprite.h), from the last key window on */
    /* the sprite layer's background B (pnmf_sprite_background_update()):
     * PNMF_SPRITE_BG everywhere at a key window's start, else the frame in
     * ref[0] with the preceding B under the bg_n placements bg_pl (of the last
     * frame) put back from bg_val (pnmf_sprite_under_save()); no copy of
     * its own, so the frame's background costs no pass over it */
    int bg_flat;              /* 1: B is PNMF_SPRITE_BG everywhere */
    PnmfSpritePlace *bg_pl;
    int bg_n, bg_pl_cap;
    uint8_t *bg_val;
    size_t bg_cap;
    int nomem;                /* next_layout() failed for memory */
    int p_zero, pp_zero;      /* P, Pp hold zeros (the model's frame of a window without entries) */
    int have_prev;            /* Pp, ref[0] hold the frame before next_frame, from a residual layer */
    int avail;                /* of ref[], how many hold frames since the key window began */
    int half;                 /* format 17: the frames are coded at half size, cw x ch */
    int cw, ch;               /* the coded frame's size: the frame's, or half of it */
    uint8_t *small;           /* with half: the coded frame shown, before it is scaled up */
    int32_t *up;              /* with half: the scaling's rows (pnmf_upsample2()) */
    uint8_t *shown;           /* window flags bit 22: the frame shown before the restoration filter,
                               * padded (pnmf_pf_pad()), then shown_cls (allocated at their first use) */
    ptrdiff_t shown_stride;
    uint8_t *shown_cls;       /* a block row's classes (pnmf_pf_apply()) */
    int failed;
    char err[256];
};

/* Record a failure: its reason goes to the logger too. */
static int fail(PnmfDecoder *d, int ret)
{
    if (!d->err[0] && ret == PNMF_ERR_NOMEM) snprintf(d->err, sizeof(d->err), "out of memory");
    if (d->err[0]) pnmf_log(&d->s.logger, PNMF_LOG_ERROR, "%s", d->err);
    return d->failed = ret;
}

int pnmf_decoder_create(PnmfDecoder **out, const PnmfDecSettings *s, const PnmfIO *in,
                        const uint8_t *data, size_t size)
{
    PnmfDecoder *d = pnmf_calloc(1, sizeof(*d));
    if (!d) return PNMF_ERR_NOMEM;
    *out = d; /* even on failure, so the caller can read the reason */
    d->s = *s;
    PnmfIO mio;
    if (!in) {
        pnmf_io_memory_reader(&mio, &d->mem, data, size);
        in = &mio;
    }
    int ret = pnmf_container_reader_open_io(&d->cr, in, d->err, sizeof(d->err));
    if (ret < 0) return fail(d, ret);
    const PnmfHeader *h = pnmf_container_reader_header(d->cr);
    if ((int64_t)h->width * h->height > s->max_frame_pixels) {
        snprintf(d->err, sizeof(d->err), "frames of %ux%u pixels, over the decoder's limit of %lld",
                 (unsigned)h->width, (unsigned)h->height, (long long)s->max_frame_pixels);
        return fail(d, PNMF_ERR_LIMIT);
    }
    if ((int64_t)h->frame_count > s->max_frames) {
        snprintf(d->err, sizeof(d->err), "%u frames, over the decoder's limit of %lld", (unsigned)h->frame_count,
                 (long long)s->max_frames);
        return fail(d, PNMF_ERR_LIMIT);
    }
    d->info.width = (int)h->width, d->info.height = (int)h->height;
    d->info.half = h->half;
    d->info.fps_num = (int)h->fps_num, d->info.fps_den = (int)h->fps_den;
    d->info.frame_count = (int)h->frame_count;
    d->info.window = h->window;
    d->info.components = h->components;
    d->info.shift_model = h->shift_model;
    d->info.quality = h->quality;
    d->info.color_range = h->color_range, d->info.color_primaries = h->color_primaries;
    d->info.color_trc = h->color_trc, d->info.colorspace = h->colorspace;
    d->info.timed = h->tb_num != 0;
    d->info.time_base_num = (int)(h->tb_num ? h->tb_num : h->fps_den);
    d->info.time_base_den = (int)(h->tb_num ? h->tb_den : h->fps_num);
    d->w_step = h->w_step, d->r_step = h->r_step;
    d->version = h->writer_version < PNMF_READER_VERSION ? h->writer_version : PNMF_READER_VERSION;
    if (d->w_step < 1 || d->r_step < 1 || d->w_step > 64 || d->r_step > 64) {
        snprintf(d->err, sizeof(d->err), "invalid quantizer steps in the header");
        return fail(d, PNMF_ERR_CORRUPT);
    }
    /* frames coded at half size (format 17): everything below works on
     * the coded frames, scaled up as they are shown (step_frame()) */
    d->half = h->half;
    d->cw = h->half ? pnmf_half_size((int)h->width) : (int)h->width;
    d->ch = h->half ? pnmf_half_size((int)h->height) : (int)h->height;
    d->n = (size_t)d->cw * d->ch;
    d->rows = h->shift_model == PNMF_SHIFT_VECTOR ? 1 : d->ch;
    d->cols = h->shift_model == PNMF_SHIFT_VECTOR ? (int)d->n : d->cw;
    d->vis_rows = d->rows, d->vis_cols = d->cols;
    if (h->shift_model == PNMF_SHIFT_CANVAS) d->rows = (int)h->canvas_height, d->cols = (int)h->canvas_width;
    d->info.canvas_height = h->shift_model == PNMF_SHIFT_CANVAS ? d->rows : d->ch;
    d->info.canvas_width = h->shift_model == PNMF_SHIFT_CANVAS ? d->cols : d->cw;
    if (h->half && (!(d->small = pnmf_malloc_array(d->n, 1)) ||
                    !(d->up = pnmf_malloc_array((size_t)d->ch * h->width, sizeof(int32_t)))))
        return fail(d, PNMF_ERR_NOMEM);
    d->acc = pnmf_malloc_array(d->n, sizeof(int64_t));
    d->layout = pnmf_malloc_array(d->n, 1);
    d->P = pnmf_malloc_array(d->n, 1);
    d->Pp = pnmf_malloc_array(d->n, 1);
    d->D = pnmf_malloc_array(d->n, 1);
    d->key0 = pnmf_malloc_array(d->n, 1);
    d->bg_flat = 1;
    if (!d->acc || !d->layout || !d->P || !d->Pp || !d->D || !d->key0) return fail(d, PNMF_ERR_NOMEM);
    for (int t = 0; t < PNMF_RES_REFS; t++)
        if (!(d->ref[t] = pnmf_malloc_array(d->n, 1))) return fail(d, PNMF_ERR_NOMEM);
    return 0;
}

const PnmfStreamInfo *pnmf_decoder_info(const PnmfDecoder *d) { return d->cr ? &d->info : NULL; }

static int load_window(PnmfDecoder *d)
{
    const uint8_t *payload;
    size_t size;
    uint32_t first, count;
    pnmf_model_free(&d->md);
    d->loaded = 0;
    int ret = pnmf_container_read_window(d->cr, &payload, &size, &first, &count, d->err, sizeof(d->err));
    if (ret < 0) return ret;
    if (ret == 0) {
        snprintf(d->err, sizeof(d->err), "the file ends after %d of %d frames", d->next_frame,
                 d->info.frame_count);
        return PNMF_ERR_CORRUPT;
    }
    char why[200] = "";
    ret = pnmf_model_read_keep(d->version, payload, size, d->rows, d->cols, d->vis_rows, d->vis_cols, (int)count,
                               d->info.components, d->w_step, d->r_step, &d->last, &d->keep, &d->md, why,
                               sizeof(why));
    if (ret < 0) {
        snprintf(d->err, sizeof(d->err), "window at frame %u: %s", first + 1, why);
        return ret;
    }
    if (d->md.res.continues != pnmf_container_window_continues(d->cr)) {
        snprintf(d->err, sizeof(d->err), "window at frame %u: its chunk and its payload disagree on "
                 "continuing the window before it", first + 1);
        pnmf_model_free(&d->md);
        return PNMF_ERR_CORRUPT;
    }
    if (d->md.res.continues && (!d->have_prev || d->next_frame != (int)first ||
                                (d->md.res.lterm ? d->md.res.reach_lt : d->md.res.reach) > d->avail)) {
        snprintf(d->err, sizeof(d->err), "window at frame %u continues a window that was not decoded before it",
                 first + 1);
        pnmf_model_free(&d->md);
        return PNMF_ERR_CORRUPT;
    }
    /* window flags bit 21: reference 15. A continuing window follows the
     * windows decoded since its key window, whose frame 0 key0 holds: a
     * window without a residual layer clears have_prev, so the chain
     * starts at a key window that has one */
    d->md.res.key0 = d->key0;
    if (d->md.res.step16) {
        /* the dictionary after this window: a key window starts it afresh */
        ret = pnmf_sprite_dict_commit(&d->sprites, &d->md.spr, d->md.res.continues, d->vis_rows, d->vis_cols, why,
                                      sizeof(why));
        if (ret < 0) {
            snprintf(d->err, sizeof(d->err), "window at frame %u: %s", first + 1, why);
            pnmf_model_free(&d->md);
            return ret;
        }
    }
    ret = pnmf_model_track(&d->last, &d->md);
    if (ret < 0) {
        snprintf(d->err, sizeof(d->err), "out of memory");
        pnmf_model_free(&d->md);
        return ret;
    }
    d->loaded = 1;
    d->win_first = (int)first;
    d->win_pos = 0;
    d->coded = 0;
    return 0;
}

/* The loaded window's frame at coding position d->coded, in layout order.
 * With a residual layer, frames must come in coding order from the
 * window's first. */
static const uint8_t *next_layout(PnmfDecoder *d)
{
    if (!d->md.res.step16) {
        pnmf_diamond_int(&d->md, d->coded, d->w_step, d->r_step, d->acc, d->layout);
        d->have_prev = 0;
        d->avail = 0;
        return d->layout;
    }
    if (d->coded == 0 && !d->md.res.continues) { /* a key window */
        d->avail = 0;
        d->bg_flat = 1, d->bg_n = 0;
    }
    const PnmfSpriteLayer *L = &d->md.spr;
    const int j = d->coded;
    uint8_t *t = d->Pp;
    const int tz = d->pp_zero;
    d->Pp = d->P, d->P = t;
    d->pp_zero = d->p_zero, d->p_zero = tz;
    const int placed = L->present && L->first[j] != L->first[j + 1];
    if (L->present) { /* P = B, then the placements painted */
        if (d->bg_flat) memset(d->P, PNMF_SPRITE_BG, d->n);
        else memcpy(d->P, d->ref[0], d->n);
        pnmf_sprite_under_restore(&d->sprites, d->bg_pl, d->bg_n, d->vis_rows, d->vis_cols, d->bg_val, d->P);
        d->bg_n = 0;
        if (placed) { /* B under the placements, the next frame's B there */
            const PnmfSpritePlace *pl = L->place + L->first[j];
            const int np = L->first[j + 1] - L->first[j];
            const size_t size = pnmf_sprite_under_size(&d->sprites, pl, np);
            if (size > d->bg_cap) {
                pnmf_free(d->bg_val);
                d->bg_cap = (d->bg_val = pnmf_malloc(size)) ? size : 0;
            }
            if (np > d->bg_pl_cap) {
                pnmf_free(d->bg_pl);
                d->bg_pl_cap = (d->bg_pl = pnmf_malloc_array((size_t)np, sizeof(*pl))) ? np : 0;
            }
            if (size > d->bg_cap || np > d->bg_pl_cap) {
                d->nomem = 1;
                return NULL;
            }
            memcpy(d->bg_pl, pl, (size_t)np * sizeof(*pl));
            d->bg_n = np;
            pnmf_sprite_under_save(&d->sprites, pl, np, d->vis_rows, d->vis_cols, d->P, d->bg_val);
            pnmf_sprite_paint_over(&d->sprites, L, j, d->vis_rows, d->vis_cols, d->P);
        }
        d->p_zero = 0;
    } else if (d->md.first[j] != d->md.first[j + 1] || !d->p_zero) { /* a frame of zeros is left as it is */
        pnmf_diamond_int(&d->md, j, d->w_step, d->r_step, d->acc, d->P);
        d->p_zero = d->md.first[j] == d->md.first[j + 1];
    }
    /* window flags bit 18: a weighted frame's references, those it reads */
    const uint8_t *rf[PNMF_RES_REFS];
    uint8_t *ws[PNMF_RES_REFS];
    if (pnmf_residual_weighted(&d->md.res, j) && !d->wref && !(d->wref = pnmf_malloc_array(PNMF_RES_REFS, d->n))) {
        d->nomem = 1;
        return NULL;
    }
    for (int i = 0; i < PNMF_RES_REFS; i++) ws[i] = d->wref ? d->wref + (size_t)i * d->n : NULL;
    pnmf_residual_frame(&d->md.res, j, d->P, d->Pp,
                        pnmf_residual_frame_refs(&d->md.res, j, (const uint8_t *const *)d->ref, -1, ws, rf), d->D);
    if (j == 0 && !d->md.res.continues) /* a key window's frame 0: what bit 21 refers to until the next */
        memcpy(d->key0, d->D, d->n);
    if (d->md.res.lx && d->md.res.lx->err) { /* format 9: decoded with the samples */
        snprintf(d->err, sizeof(d->err), "window at frame %d: %s", d->win_first + 1,
                 d->md.res.lx->err == -1 ? "residual level out of range"
                                         : "a range-coded stream does not end where its length says");
        return NULL;
    }
    /* B takes D where no placement paints: D, ref[0] once it is pushed,
     * with the samples recorded under the placements, none in a frame
     * without placements */
    pnmf_sprite_cut(&d->sprites, L, j, d->vis_cols, d->D);
    pnmf_residual_push(d->ref, &d->D);
    d->bg_flat = 0;
    if (!placed) d->bg_n = 0;
    if (d->avail < PNMF_RES_REFS) d->avail++;
    d->have_prev = 1;
    return d->ref[0];
}

/* The next frame, into gray unless NULL. */
static int step_frame(PnmfDecoder *d, uint8_t *gray, ptrdiff_t stride)
{
    if (!d->loaded || d->win_pos >= d->md.m) PNMF_CHECK(load_window(d));
    /* the frame shown next, decoded with those coded before it (window
     * flags bit 19: a group's anchor first), or one of the references
     * (at most PNMF_RES_MAX_GROUP - 1 back: the anchor of the group) */
    const int c = pnmf_residual_coded(&d->md.res, d->win_pos);
    const uint8_t *layout = NULL;
    for (; d->coded <= c; d->coded++)
        if (!(layout = next_layout(d))) return d->nomem ? PNMF_ERR_NOMEM : PNMF_ERR_CORRUPT;
    if (!layout) layout = d->ref[d->coded - 1 - c];
    /* window flags bit 22: the frame made in d->shown, filtered into gray */
    const int pf = gray && d->md.res.step16 && d->md.res.pf.on;
    const int w = d->info.width, h = d->info.height;
    if (pf && !d->shown) {
        const size_t n = pnmf_pf_padded_size(h, w, &d->shown_stride);
        if (!(d->shown = pnmf_malloc(n + (size_t)w / PNMF_PF_BLOCK + 1))) return PNMF_ERR_NOMEM;
        d->shown_cls = d->shown + n;
    }
    uint8_t *out = pf ? pnmf_pf_origin(d->shown, d->shown_stride) : gray;
    const ptrdiff_t ostride = pf ? d->shown_stride : stride;
    if (gray && d->half) {
        pnmf_layout_to_frame(d->info.shift_model, d->cw, d->ch, layout, d->small, d->cw);
        pnmf_upsample2(d->small, d->ch, d->cw, out, ostride, h, w, d->up);
    } else if (gray) {
        pnmf_layout_to_frame(d->info.shift_model, w, h, layout, out, ostride);
    }
    if (pf) {
        pnmf_pf_pad(out, ostride, h, w);
        pnmf_pf_apply(&d->md.res.pf, out, ostride, h, w, gray, stride, d->shown_cls);
    }
    d->win_pos++;
    d->next_frame++;
    return 0;
}

int pnmf_decoder_read(PnmfDecoder *d, uint8_t *gray, ptrdiff_t stride)
{
    if (d->failed) return d->failed;
    if (d->next_frame >= d->info.frame_count) {
        if (!d->checked_end) {
            /* one more read checks the index, the trailer and the file's end */
            const uint8_t *payload;
            size_t size;
            uint32_t first, count;
            int ret = pnmf_container_read_window(d->cr, &payload, &size, &first, &count, d->err,
                                                 sizeof(d->err));
            if (ret > 0) {
                snprintf(d->err, sizeof(d->err), "a window follows the last frame");
                ret = PNMF_ERR_CORRUPT;
            }
            if (ret < 0) return fail(d, ret);
            d->checked_end = 1;
        }
        return PNMF_ERR_EOF;
    }
    int ret = step_frame(d, gray, stride);
    if (ret < 0) return fail(d, ret);
    d->read_last = 1;
    return 0;
}

int pnmf_decoder_seek(PnmfDecoder *d, int frame)
{
    if (!d->cr) return d->failed;
    if (frame >= d->info.frame_count) return PNMF_ERR_ARG;
    uint32_t first;
    d->failed = 0;
    d->read_last = 0;
    d->have_prev = 0;
    d->avail = 0;
    pnmf_model_free(&d->last); /* decoding starts again at a key window */
    pnmf_sprite_dict_free(&d->sprites);
    /* back to the key window at or before the frame: a window that
     * continues the one before it needs that one decoded first */
    int ret = pnmf_container_key_frame(d->cr, (uint32_t)frame, &first, d->err, sizeof(d->err));
    if (ret < 0) return fail(d, ret);
    ret = pnmf_container_seek(d->cr, first, &first, d->err, sizeof(d->err));
    if (ret < 0) return fail(d, ret);
    d->next_frame = (int)first;
    d->loaded = 0;
    while (d->next_frame < frame) {
        ret = step_frame(d, NULL, 0);
        if (ret < 0) return fail(d, ret);
    }
    if (!d->loaded || d->win_pos >= d->md.m) {
        ret = load_window(d);
        if (ret < 0) return fail(d, ret);
    }
    return 0;
}

int pnmf_decoder_frame_time(const PnmfDecoder *d, int64_t *pts, int64_t *duration)
{
    if (!d->cr || !d->loaded || d->win_pos < 1) return PNMF_ERR_ARG;
    const uint64_t *t;
    if (pnmf_container_window_times(d->cr, &t) != (uint32_t)d->md.m) {
        *pts = d->win_first + d->win_pos - 1, *duration = 1; /* at the frame rate */
        return 0;
    }
    *pts = (int64_t)t[d->win_pos - 1], *duration = (int64_t)(t[d->win_pos] - t[d->win_pos - 1]);
    return 0;
}

/* step_frame() loads a window ahead of its first frame and counts win_pos
 * past the frame it decodes, so the frame read last is win_pos - 1 of the
 * loaded window; a seek decodes the frames before its target the same way,
 * which are not the caller's: nothing until the next read. */
int pnmf_decoder_frame_sprites(const PnmfDecoder *d, PnmfSpritePlacement *out, int max)
{
    if (!d->cr || !d->read_last || !d->loaded || d->win_pos < 1 || !d->md.spr.present) return 0;
    const PnmfSpriteLayer *L = &d->md.spr;
    const int j = pnmf_residual_coded(&d->md.res, d->win_pos - 1), n = L->first[j + 1] - L->first[j];
    for (int i = 0; i < n && i < max; i++) {
        const PnmfSpritePlace *p = &L->place[L->first[j] + i];
        out[i].sprite = p->pose, out[i].x = p->x, out[i].y = p->y;
    }
    return n;
}

int pnmf_decoder_sprite(const PnmfDecoder *d, int sprite, PnmfSprite *out)
{
    if (sprite < 0 || sprite >= d->sprites.count) return PNMF_ERR_ARG;
    const PnmfSpritePose *ps = &d->sprites.pose[sprite];
    out->w = ps->w, out->h = ps->h, out->pix = ps->pix, out->mask = ps->mask;
    return 0;
}

const char *pnmf_decoder_errmsg(const PnmfDecoder *d) { return d->err; }

void pnmf_decoder_destroy(PnmfDecoder **pd)
{
    PnmfDecoder *d = *pd;
    if (!d) return;
    pnmf_model_free(&d->md);
    pnmf_model_free(&d->last);
    pnmf_keep_free(&d->keep);
    pnmf_sprite_dict_free(&d->sprites);
    pnmf_free(d->bg_pl);
    pnmf_free(d->bg_val);
    pnmf_container_reader_close(&d->cr);
    pnmf_free(d->acc);
    pnmf_free(d->layout);
    pnmf_free(d->small);
    pnmf_free(d->up);
    pnmf_free(d->shown);
    pnmf_free(d->P);
    pnmf_free(d->Pp);
    pnmf_free(d->D);
    pnmf_free(d->key0);
    for (int t = 0; t < PNMF_RES_REFS; t++) pnmf_free(d->ref[t]);
    pnmf_free(d->wref);
    pnmf_freep(pd);
}
