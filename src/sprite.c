/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The sprite layer's dictionary, composite and background (sprite.h): the
 * decoder runs them, the encoder repeats them to see what the decoder
 * sees. */
#include <string.h>

#include "internal.h"
#include "rangecoder.h"
#include "sprite.h"

void pnmf_sprite_dict_init(PnmfSpriteDict *d) { memset(d, 0, sizeof(*d)); }

void pnmf_sprite_pose_free(PnmfSpritePose *ps)
{
    pnmf_free(ps->pix);
    pnmf_free(ps->mask);
    pnmf_free(ps->list);
    memset(ps, 0, sizeof(*ps));
}

void pnmf_sprite_dict_free(PnmfSpriteDict *d)
{
    for (int i = 0; i < d->count; i++) pnmf_sprite_pose_free(&d->pose[i]);
    pnmf_free(d->pose);
    memset(d, 0, sizeof(*d));
}

int pnmf_sprite_pose_make(PnmfSpritePose *ps, int w, int h, const uint8_t *pix, const uint8_t *mask)
{
    const size_t n = (size_t)w * h;
    memset(ps, 0, sizeof(*ps));
    int npix = 0;
    for (size_t i = 0; i < n; i++) npix += mask[i] != 0;
    ps->pix = pnmf_malloc(n);
    ps->mask = pnmf_malloc(n);
    ps->list = pnmf_malloc_array(npix ? (size_t)npix : 1, sizeof(uint32_t));
    if (!ps->pix || !ps->mask || !ps->list) {
        pnmf_sprite_pose_free(ps);
        return PNMF_ERR_NOMEM;
    }
    int k = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const size_t i = (size_t)y * w + x;
            ps->mask[i] = mask[i] != 0;
            ps->pix[i] = mask[i] ? pix[i] : 0;
            if (mask[i]) ps->list[k++] = ((uint32_t)y << 16) | (uint32_t)x;
        }
    ps->w = w, ps->h = h, ps->npix = npix;
    ps->hash = pnmf_sprite_hash(w, h, ps->pix, ps->mask);
    return 0;
}

static int dict_room(PnmfSpriteDict *d, int more)
{
    if (d->count + more <= d->alloc) return 0;
    int na = d->alloc ? 2 * d->alloc : 64;
    while (na < d->count + more) na *= 2;
    PnmfSpritePose *n = pnmf_realloc(d->pose, sizeof(*n) * (size_t)na);
    if (!n) return PNMF_ERR_NOMEM;
    d->pose = n, d->alloc = na;
    return 0;
}

int pnmf_sprite_dict_add(PnmfSpriteDict *d, int w, int h, const uint8_t *pix, const uint8_t *mask)
{
    PNMF_CHECK(dict_room(d, 1));
    PNMF_CHECK(pnmf_sprite_pose_make(&d->pose[d->count], w, h, pix, mask));
    d->pixels += (size_t)w * h;
    return d->count++;
}

int pnmf_sprite_dict_copy(PnmfSpriteDict *dst, const PnmfSpriteDict *src)
{
    pnmf_sprite_dict_free(dst);
    for (int i = 0; i < src->count; i++) {
        const PnmfSpritePose *s = &src->pose[i];
        const int id = pnmf_sprite_dict_add(dst, s->w, s->h, s->pix, s->mask);
        if (id < 0) {
            pnmf_sprite_dict_free(dst);
            return id;
        }
        PnmfSpritePose *t = &dst->pose[id];
        t->edge = s->edge, t->line = s->line, t->first_window = s->first_window, t->last_window = s->last_window, t->uses = s->uses;
    }
    dst->windows = src->windows;
    return 0;
}

int pnmf_sprite_dict_commit(PnmfSpriteDict *d, PnmfSpriteLayer *L, int continues, int rows, int cols,
                            char *err, size_t errlen)
{
    const int base = continues ? d->count : 0;
    size_t pixels = continues ? d->pixels : 0;
    const int np = L && L->present ? L->npose : 0;
    if (base + np > PNMF_SPRITE_MAX_POSES) {
        pnmf_set_err(err, errlen, "sprite dictionary of %d poses, over %d", base + np, PNMF_SPRITE_MAX_POSES);
        return PNMF_ERR_CORRUPT;
    }
    for (int i = 0; i < np; i++) pixels += (size_t)L->pose[i].w * L->pose[i].h;
    if (pixels > PNMF_SPRITE_MAX_PIXELS) {
        pnmf_set_err(err, errlen, "sprite dictionary of %zu pixels, over %d", pixels, PNMF_SPRITE_MAX_PIXELS);
        return PNMF_ERR_CORRUPT;
    }
    for (int q = 0; L && L->present && q < L->first[L->m]; q++) {
        const PnmfSpritePlace *pl = &L->place[q];
        if (pl->pose < 0 || pl->pose >= base + np) {
            pnmf_set_err(err, errlen, "sprite %d placed, the dictionary holds %d", pl->pose, base + np);
            return PNMF_ERR_CORRUPT;
        }
        /* a placement shows one pixel of its box at least */
        const PnmfSpritePose *ps = pl->pose < base ? &d->pose[pl->pose] : &L->pose[pl->pose - base];
        if (pl->pose >= base && q < L->first[ps->src + 1]) {
            pnmf_set_err(err, errlen, "sprite %d placed before the frame it is cut from", pl->pose);
            return PNMF_ERR_CORRUPT;
        }
        if (pl->y <= -ps->h || pl->y >= rows || pl->x <= -ps->w || pl->x >= cols) {
            pnmf_set_err(err, errlen, "sprite %d placed at (%d, %d), off the %dx%d frame", pl->pose, pl->x, pl->y,
                         cols, rows);
            return PNMF_ERR_CORRUPT;
        }
    }
    /* each frame's painting is bounded, as the model's decode work is */
    const uint64_t max_work = (uint64_t)PNMF_SPRITE_WORK * (uint64_t)rows * (uint64_t)cols + PNMF_SPRITE_WORK_MIN;
    for (int j = 0; L && L->present && j < L->m; j++) {
        uint64_t work = 0;
        for (int q = L->first[j]; q < L->first[j + 1]; q++) {
            const int p = L->place[q].pose;
            work += (uint64_t)(p < base ? d->pose[p].npix : L->pose[p - base].npix);
        }
        if (work > max_work) {
            pnmf_set_err(err, errlen, "frame %d's sprites paint %llu pixels, over %llu", j,
                         (unsigned long long)work, (unsigned long long)max_work);
            return PNMF_ERR_LIMIT;
        }
    }
    PNMF_CHECK(dict_room(d, np));
    if (!continues) {
        for (int i = 0; i < d->count; i++) pnmf_sprite_pose_free(&d->pose[i]);
        d->count = 0, d->pixels = 0;
    }
    if (L) L->base = d->count;
    for (int i = 0; i < np; i++) {
        const PnmfSpritePose *s = &L->pose[i];
        const int id = pnmf_sprite_dict_add(d, s->w, s->h, s->mask, s->mask);
        if (id < 0) return id;
        memset(d->pose[id].pix, 0, (size_t)s->w * s->h);
    }
    return 0;
}

void pnmf_sprite_cut(PnmfSpriteDict *d, const PnmfSpriteLayer *L, int j, int cols, const uint8_t *D)
{
    for (int i = 0; L && L->present && i < L->npose; i++) {
        const PnmfSpritePose *s = &L->pose[i];
        if (s->src != j) continue;
        PnmfSpritePose *ps = &d->pose[L->base + i];
        for (int k = 0; k < ps->npix; k++) {
            const int y = (int)(ps->list[k] >> 16), x = (int)(ps->list[k] & 0xFFFF);
            ps->pix[y * ps->w + x] = D[(size_t)(s->sy + y) * cols + s->sx + x];
        }
    }
}

void pnmf_sprite_layer_free(PnmfSpriteLayer *L)
{
    for (int i = 0; i < L->npose && L->pose; i++) pnmf_sprite_pose_free(&L->pose[i]);
    pnmf_free(L->pose);
    pnmf_free(L->first);
    pnmf_free(L->place);
    memset(L, 0, sizeof(*L));
}

void pnmf_sprite_paint(const PnmfSpriteDict *d, const PnmfSpriteLayer *L, int j, int rows, int cols,
                       const uint8_t *B, uint8_t *P)
{
    memcpy(P, B, (size_t)rows * cols);
    for (int q = L->first[j]; q < L->first[j + 1]; q++) {
        const PnmfSpritePlace *pl = &L->place[q];
        const PnmfSpritePose *ps = &d->pose[pl->pose];
        /* whole rows inside the frame go without a test per pixel */
        const int inside = pl->y >= 0 && pl->x >= 0 && pl->y + ps->h <= rows && pl->x + ps->w <= cols;
        for (int i = 0; i < ps->npix; i++) {
            const int dy = (int)(ps->list[i] >> 16), dx = (int)(ps->list[i] & 0xFFFF);
            const int y = pl->y + dy, x = pl->x + dx;
            if (inside || (y >= 0 && y < rows && x >= 0 && x < cols))
                P[(size_t)y * cols + x] = ps->pix[dy * ps->w + dx];
        }
    }
}

/* Set (v 1) or clear (v 0) mark under frame j's placements. */
static void mark_frame(const PnmfSpriteDict *d, const PnmfSpriteLayer *L, int j, int rows, int cols, uint8_t *mark,
                       uint8_t v)
{
    for (int q = L->first[j]; q < L->first[j + 1]; q++) {
        const PnmfSpritePlace *pl = &L->place[q];
        const PnmfSpritePose *ps = &d->pose[pl->pose];
        for (int i = 0; i < ps->npix; i++) {
            const int y = pl->y + (int)(ps->list[i] >> 16), x = pl->x + (int)(ps->list[i] & 0xFFFF);
            if (y >= 0 && y < rows && x >= 0 && x < cols) mark[(size_t)y * cols + x] = v;
        }
    }
}

void pnmf_sprite_background_update(const PnmfSpriteDict *d, const PnmfSpriteLayer *L, int j, int rows,
                                   int cols, const uint8_t *D, uint8_t *B, uint8_t *mark)
{
    const size_t n = (size_t)rows * cols;
    if (!L || !L->present || L->first[j] == L->first[j + 1]) {
        memcpy(B, D, n);
        return;
    }
    mark_frame(d, L, j, rows, cols, mark, 1);
    /* a select the compiler vectorizes: mark is 0 or 1 */
    for (size_t q = 0; q < n; q++) B[q] = (uint8_t)(D[q] ^ ((B[q] ^ D[q]) & -mark[q]));
    mark_frame(d, L, j, rows, cols, mark, 0);
}

uint64_t pnmf_sprite_hash(int w, int h, const uint8_t *pix, const uint8_t *mask)
{
    uint64_t x = 1469598103934665603ull;
#define MIX(b) (x = (x ^ (uint8_t)(b)) * 1099511628211ull)
    MIX(w); MIX(w >> 8); MIX(h); MIX(h >> 8);
    for (int i = 0; i < w * h; i++) {
        MIX(mask[i]);
        if (mask[i]) MIX(pix[i]);
    }
#undef MIX
    return x;
}

/* The sample of mask m (w x h) at (y, x), 0 outside its box. */
static inline int msample(const uint8_t *m, int w, int h, int y, int x)
{
    return y >= 0 && x >= 0 && y < h && x < w ? m[(size_t)y * w + x] : 0;
}

/* Without a reference, ten causal neighbours: two rows above (x-1..x+1),
 * the row above (x-2..x+2), the row itself (x-2, x-1); with one, four
 * causal neighbours (the row above x-1..x+1, left) and the reference at
 * (y, x) and its four neighbours. Samples outside the box are 0. The
 * sample's own row below y is not known, so h does not bound the rows
 * above: y - 2 >= 0 is all they need. */
int pnmf_sprite_mask_context(const uint8_t *m, int w, int y, int x, const uint8_t *r, int rw, int rh, int dy,
                             int dx)
{
    const int h = y + 1;
#define M(yy, xx) msample(m, w, h, (yy), (xx))
    if (!r)
        return M(y - 2, x - 1) << 9 | M(y - 2, x) << 8 | M(y - 2, x + 1) << 7 | M(y - 1, x - 2) << 6 |
               M(y - 1, x - 1) << 5 | M(y - 1, x) << 4 | M(y - 1, x + 1) << 3 | M(y - 1, x + 2) << 2 |
               M(y, x - 2) << 1 | M(y, x - 1);
#define R(yy, xx) msample(r, rw, rh, (yy) - dy, (xx) - dx)
    return 1024 + (M(y - 1, x - 1) << 8 | M(y - 1, x) << 7 | M(y - 1, x + 1) << 6 | M(y, x - 1) << 5 |
                   R(y, x) << 4 | R(y - 1, x) << 3 | R(y + 1, x) << 2 | R(y, x - 1) << 1 | R(y, x + 1));
#undef R
#undef M
}

int pnmf_sprite_masks_read(const uint8_t *p, size_t n, int np, uint8_t *const *masks, const int *w, const int *h,
                           const int *ref, const int *dy, const int *dx)
{
    RcProb prob[PNMF_SPRITE_MASK_CTX];
    rc_probs_init(prob, PNMF_SPRITE_MASK_CTX);
    RcDec d;
    rc_dec_init(&d, p, n);
    for (int i = 0; i < np; i++) {
        const int k = ref[i] ? i - ref[i] : -1;
        const uint8_t *r = k >= 0 ? masks[k] : NULL;
        for (int y = 0; y < h[i]; y++)
            for (int x = 0; x < w[i]; x++) {
                const int c = pnmf_sprite_mask_context(masks[i], w[i], y, x, r, k >= 0 ? w[k] : 0,
                                                       k >= 0 ? h[k] : 0, dy[i], dx[i]);
                masks[i][(size_t)y * w[i] + x] = (uint8_t)rc_decode(&d, &prob[c]);
            }
    }
    return rc_dec_exact(&d, p) ? 0 : -1;
}
