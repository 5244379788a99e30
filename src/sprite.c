/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The sprite layer's dictionary, composite and background (sprite.h): the
 * decoder runs them, the encoder repeats them to see what the decoder
 * sees. */
#include <string.h>

#include "internal.h"
#include "rangecoder.h"
#include "sprite.h"
#include "tuning.h"

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

/* pnmf_sprite_pose_make(), the hash made only with hash set. */
static int pose_make(PnmfSpritePose *ps, int w, int h, const uint8_t *pix, const uint8_t *mask, int hash)
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
    ps->hash = hash ? pnmf_sprite_hash(w, h, ps->pix, ps->mask) : 0;
    return 0;
}

int pnmf_sprite_pose_make(PnmfSpritePose *ps, int w, int h, const uint8_t *pix, const uint8_t *mask)
{
    return pose_make(ps, w, h, pix, mask, 1);
}

int pnmf_sprite_pose_make_unhashed(PnmfSpritePose *ps, int w, int h, const uint8_t *pix, const uint8_t *mask)
{
    return pose_make(ps, w, h, pix, mask, 0);
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

/* The part of placement pl's box inside the rows x cols frame: box rows
 * [*ya, *yb) and columns [*xa, *xb). */
static void place_clip(const PnmfSpritePlace *pl, const PnmfSpritePose *ps, int rows, int cols, int *ya, int *yb,
                       int *xa, int *xb)
{
    *ya = pl->y < 0 ? -pl->y : 0, *yb = pl->y + ps->h > rows ? rows - pl->y : ps->h;
    *xa = pl->x < 0 ? -pl->x : 0, *xb = pl->x + ps->w > cols ? cols - pl->x : ps->w;
}

/* A pose whose box is at most four times its opaque pixels goes by rows of
 * its mask (selects the compiler vectorizes); a sparser one by its list,
 * so the work stays within what pnmf_sprite_dict_commit() bounds. */
static int by_rows(const PnmfSpritePose *ps) { return (size_t)ps->w * ps->h <= 4 * (size_t)ps->npix; }

void pnmf_sprite_paint(const PnmfSpriteDict *d, const PnmfSpriteLayer *L, int j, int rows, int cols,
                       const uint8_t *B, uint8_t *P)
{
    memcpy(P, B, (size_t)rows * cols);
    pnmf_sprite_paint_over(d, L, j, rows, cols, P);
}

void pnmf_sprite_paint_over(const PnmfSpriteDict *d, const PnmfSpriteLayer *L, int j, int rows, int cols,
                            uint8_t *P)
{
    for (int q = L->first[j]; q < L->first[j + 1]; q++) {
        const PnmfSpritePlace *pl = &L->place[q];
        const PnmfSpritePose *ps = &d->pose[pl->pose];
        if (by_rows(ps)) {
            /* pix is 0 and mask 0 outside the mask, mask 1 inside: a select */
            int ya, yb, xa, xb;
            place_clip(pl, ps, rows, cols, &ya, &yb, &xa, &xb);
            for (int y = ya; y < yb; y++) {
                uint8_t *o = P + (size_t)(pl->y + y) * cols + pl->x;
                const uint8_t *m = ps->mask + (size_t)y * ps->w, *s = ps->pix + (size_t)y * ps->w;
                for (int x = xa; x < xb; x++) o[x] = (uint8_t)(o[x] ^ ((o[x] ^ s[x]) & -m[x]));
            }
            continue;
        }
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

size_t pnmf_sprite_under_size(const PnmfSpriteDict *d, const PnmfSpritePlace *pl, int n)
{
    size_t size = 0;
    for (int q = 0; q < n; q++) {
        const PnmfSpritePose *ps = &d->pose[pl[q].pose];
        size += by_rows(ps) ? (size_t)ps->w * ps->h : (size_t)ps->npix;
    }
    return size;
}

/* save (restore 0) or restore (1) the background under the placements */
static void under(const PnmfSpriteDict *d, const PnmfSpritePlace *pl, int n, int rows, int cols, uint8_t *P,
                  uint8_t *val, int restore)
{
    for (int q = 0; q < n; q++) {
        const PnmfSpritePose *ps = &d->pose[pl[q].pose];
        int ya, yb, xa, xb;
        place_clip(&pl[q], ps, rows, cols, &ya, &yb, &xa, &xb);
        if (by_rows(ps)) {
            for (int y = ya; y < yb && xb > xa; y++) {
                uint8_t *o = P + (size_t)(pl[q].y + y) * cols + pl[q].x + xa;
                const uint8_t *m = ps->mask + (size_t)y * ps->w + xa;
                if (!restore) {
                    memcpy(val, o, (size_t)(xb - xa));
                } else { /* a select the compiler vectorizes: mask is 0 or 1 */
                    for (int x = 0; x < xb - xa; x++) o[x] = (uint8_t)(o[x] ^ ((o[x] ^ val[x]) & -m[x]));
                }
                val += xb - xa;
            }
            continue;
        }
        for (int i = 0; i < ps->npix; i++) {
            const int dy = (int)(ps->list[i] >> 16), dx = (int)(ps->list[i] & 0xFFFF);
            if (dy < ya || dy >= yb || dx < xa || dx >= xb) continue;
            uint8_t *o = P + (size_t)(pl[q].y + dy) * cols + pl[q].x + dx;
            if (restore) *o = *val++;
            else *val++ = *o;
        }
    }
}

void pnmf_sprite_under_save(const PnmfSpriteDict *d, const PnmfSpritePlace *pl, int n, int rows, int cols,
                            const uint8_t *P, uint8_t *val)
{
    under(d, pl, n, rows, cols, (uint8_t *)P, val, 0); /* P is only read */
}

void pnmf_sprite_under_restore(const PnmfSpriteDict *d, const PnmfSpritePlace *pl, int n, int rows, int cols,
                               const uint8_t *val, uint8_t *P)
{
    under(d, pl, n, rows, cols, P, (uint8_t *)val, 1); /* val is only read */
}

/* Set (v 1) or clear (v 0) mark under frame j's placements. */
static void mark_frame(const PnmfSpriteDict *d, const PnmfSpriteLayer *L, int j, int rows, int cols, uint8_t *mark,
                       uint8_t v)
{
    for (int q = L->first[j]; q < L->first[j + 1]; q++) {
        const PnmfSpritePlace *pl = &L->place[q];
        const PnmfSpritePose *ps = &d->pose[pl->pose];
        if (by_rows(ps)) {
            /* set: OR-ed with the mask's rows; clear: the box's rows
             * zeroed (mark is 0 outside the placements) */
            int ya, yb, xa, xb;
            place_clip(pl, ps, rows, cols, &ya, &yb, &xa, &xb);
            for (int y = ya; y < yb; y++) {
                uint8_t *o = mark + (size_t)(pl->y + y) * cols + pl->x;
                const uint8_t *m = ps->mask + (size_t)y * ps->w;
                if (v)
                    for (int x = xa; x < xb; x++) o[x] |= m[x];
                else if (xb > xa)
                    memset(o + xa, 0, (size_t)(xb - xa));
            }
            continue;
        }
        /* a placement inside the frame goes without a test per pixel */
        const int inside = pl->y >= 0 && pl->x >= 0 && pl->y + ps->h <= rows && pl->x + ps->w <= cols;
        for (int i = 0; i < ps->npix; i++) {
            const int y = pl->y + (int)(ps->list[i] >> 16), x = pl->x + (int)(ps->list[i] & 0xFFFF);
            if (inside || (y >= 0 && y < rows && x >= 0 && x < cols)) mark[(size_t)y * cols + x] = v;
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
    /* the rows the placements' boxes cover, within the frame: only there
     * can mark be set; elsewhere B takes D whole */
    int y0 = rows, y1 = 0;
    for (int q = L->first[j]; q < L->first[j + 1]; q++) {
        const PnmfSpritePlace *pl = &L->place[q];
        const int h = d->pose[pl->pose].h;
        if (pl->y < y0) y0 = pl->y;
        if (pl->y + h > y1) y1 = pl->y + h;
    }
    y0 = y0 < 0 ? 0 : y0, y1 = y1 > rows ? rows : y1;
    if (y0 >= y1) {
        memcpy(B, D, n);
        return;
    }
    mark_frame(d, L, j, rows, cols, mark, 1);
    memcpy(B, D, (size_t)y0 * cols);
    /* a select the compiler vectorizes: mark is 0 or 1 */
    for (size_t q = (size_t)y0 * cols; q < (size_t)y1 * cols; q++) B[q] = (uint8_t)(D[q] ^ ((B[q] ^ D[q]) & -mark[q]));
    memcpy(B + (size_t)y1 * cols, D + (size_t)y1 * cols, n - (size_t)y1 * cols);
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

int pnmf_sprite_masks_read(const uint8_t *p, size_t n, int version, int np, uint8_t *const *masks, const int *w, const int *h,
                           const int *ref, const int *dy, const int *dx)
{
    RcProb prob[PNMF_SPRITE_MASK_CTX];
    rc_probs_init(prob, PNMF_SPRITE_MASK_CTX);
    RcDec d;
    rc_dec_init(&d, p, n, version);
    for (int i = 0; i < np; i++) {
        const int k = ref[i] ? i - ref[i] : -1;
        const uint8_t *r = k >= 0 ? masks[k] : NULL;
        for (int y = 0; y < h[i]; y++)
            for (int x = 0; x < w[i]; x++) {
                const int c = pnmf_sprite_mask_context_fast(masks[i], w[i], y, x, r, k >= 0 ? w[k] : 0,
                                                            k >= 0 ? h[k] : 0, dy[i], dx[i]);
                masks[i][(size_t)y * w[i] + x] = (uint8_t)rc_decode(&d, &prob[c]);
            }
    }
    return rc_dec_exact(&d, p) ? 0 : -1;
}

/* ---- context-coded placements (window flags bit 16) ---------------------- */

static inline int io_bit(PnmfPlaceIO *io, int c, int bit)
{
    if (io->put) {
        io->put(io->enc, &io->p[c], bit);
        return bit;
    }
    return rc_decode(&io->d, &io->p[c]);
}

static inline int io_direct(PnmfPlaceIO *io, int bit)
{
    if (io->put) {
        io->put(io->enc, NULL, bit);
        return bit;
    }
    return rc_decode_direct(&io->d);
}

/* A magnitude v >= 0 as Exp-Golomb: with u = v + 1 of n + 1 bits, n ones
 * (the i-th under context c + min(i, PNMF_PLACE_MAG_CTX - 1)), a zero,
 * then u's n low bits, most significant first, at probability 1/2.
 * -1 (decoding): PNMF_PLACE_MAG_MAX ones in a row. */
static int64_t io_mag(PnmfPlaceIO *io, int c, int64_t v)
{
    int n = 0;
    if (io->put) {
        for (uint64_t u = (uint64_t)v + 1; u > 1; u >>= 1) n++;
        if (v < 0 || n >= PNMF_PLACE_MAG_MAX) {
            io->bad = 1; /* not codable: the writer keeps the varints */
            return v;
        }
        for (int i = 0; i < n; i++) io_bit(io, c + (i < PNMF_PLACE_MAG_CTX ? i : PNMF_PLACE_MAG_CTX - 1), 1);
        io_bit(io, c + (n < PNMF_PLACE_MAG_CTX ? n : PNMF_PLACE_MAG_CTX - 1), 0);
        for (int i = n - 1; i >= 0; i--) io_direct(io, (int)(((uint64_t)v + 1) >> i & 1));
        return v;
    }
    while (n < PNMF_PLACE_MAG_MAX && io_bit(io, c + (n < PNMF_PLACE_MAG_CTX ? n : PNMF_PLACE_MAG_CTX - 1), 0)) n++;
    if (n == PNMF_PLACE_MAG_MAX) return -1;
    uint64_t u = 1;
    for (int i = 0; i < n; i++) u = u << 1 | (uint64_t)io_direct(io, 0);
    return (int64_t)u - 1;
}

/* A nonzero value: its sign (1: negative) under context s, then |v| - 1. */
static int64_t io_nonzero(PnmfPlaceIO *io, int s, int c, int64_t v)
{
    const int neg = io_bit(io, s, v < 0);
    const int64_t a = io_mag(io, c, v < 0 ? -v - 1 : v - 1);
    return a < 0 ? INT64_MIN : neg ? -a - 1 : a + 1;
}

/* Bits a magnitude v costs, about: its Exp-Golomb code's length. */
static int mag_bits(int64_t v)
{
    int n = 0;
    for (uint64_t u = (uint64_t)(v < 0 ? -v : v) + 1; u > 1; u >>= 1) n++;
    return 2 * n + 1;
}

/* What a placement costs in eighth bits, about, written against
 * reference r (-1: on its own) of the frame before (o, its track's
 * velocity vel) with expected reference e of the nprev the frame before
 * has: the writer's choice. */
static int place_cost(const PnmfSpritePlace *pl, const PnmfSpritePlace *o, const int *vel, const int *next, int r,
                      int e, int nprev)
{
    int c = e < nprev ? (r == e ? 2 : 12) : 0;
    if (r < 0) {
        if (nprev) c += 8;
        return c + 8 * (mag_bits(pl->pose) + mag_bits(pl->y) + mag_bits(pl->x) + 2);
    }
    if (r != e) c += 8 + 8 * mag_bits(r - e);
    c += pl->pose == o->pose ? 2 : pl->pose == next[o->pose] ? 12 : 8 * (3 + mag_bits(pl->pose - o->pose));
    const int ry = pl->y - (o->y + vel[0]), rx = pl->x - (o->x + vel[1]);
    if (ry || rx) c += 12 + (ry ? 16 + 8 * mag_bits(ry) : 8) + (rx ? 16 + 8 * mag_bits(rx) : 8);
    else c += 3;
    return c;
}

int pnmf_sprite_places_code(PnmfPlaceIO *io, PnmfSpriteLayer *L, int rows, int cols)
{
    const int m = L->m, writing = io->put != NULL;
    int ret = 0, cap = writing ? L->first[m] : 0, n = 0, prev_count = 0, prev_zero = 2;
    /* per placement: its reference in the frame before (-1: none), its
     * velocity (its position less its reference's), whether its pose
     * changed and whether its position was the predicted one */
    int *ref = NULL, *vel = NULL;
    uint8_t *pch = NULL, *rz = NULL;
    int next[PNMF_SPRITE_MAX_POSES]; /* the pose that last followed pose i in a track (-1: none) */
    for (int i = 0; i < PNMF_SPRITE_MAX_POSES; i++) next[i] = -1;
    for (int q = 0; writing && q < L->first[m]; q++)
        if (L->place[q].pose < 0 || L->place[q].pose >= PNMF_SPRITE_MAX_POSES) {
            io->bad = 1; /* the reader refuses it: the varints carry it */
            return 0;
        }
    rc_probs_init(io->p, PNMF_PLACE_CTX);
    for (int j = 0; j < m; j++) {
        /* the count, as the difference from the frame before's */
        int64_t cnt = writing ? L->first[j + 1] - L->first[j] : 0;
        const int z = io_bit(io, PNMF_PC_CNT_ZERO + prev_zero, cnt == prev_count);
        if (!z) {
            const int64_t d = io_nonzero(io, PNMF_PC_CNT_SIGN, PNMF_PC_CNT_MAG, cnt - prev_count);
            if (d == INT64_MIN) goto bad;
            cnt = prev_count + d;
        } else {
            cnt = prev_count;
        }
        prev_zero = z ? 0 : 1;
        if (cnt < 0 || cnt > PNMF_SPRITE_MAX_PLACES) {
            ret = -2;
            goto end;
        }
        prev_count = (int)cnt;
        if (n + (int)cnt > cap || !ref) {
            const int ncap = writing ? cap : 2 * (n + (int)cnt) + 16;
            if (!writing) {
                PnmfSpritePlace *t = pnmf_realloc(L->place, (size_t)ncap * sizeof(*t));
                if (!t) goto nomem;
                L->place = t;
            }
            int *t1 = pnmf_realloc(ref, ((size_t)ncap + 1) * sizeof(int));
            if (t1) ref = t1;
            int *t2 = pnmf_realloc(vel, ((size_t)ncap + 1) * 2 * sizeof(int));
            if (t2) vel = t2;
            uint8_t *t3 = pnmf_realloc(pch, (size_t)ncap + 1);
            if (t3) pch = t3;
            uint8_t *t4 = pnmf_realloc(rz, (size_t)ncap + 1);
            if (t4) rz = t4;
            if (!t1 || !t2 || !t3 || !t4) goto nomem;
            cap = ncap;
        }
        if (!writing) L->first[j] = n;
        const int p0 = j ? L->first[j - 1] : 0, nprev = j ? L->first[j] - p0 : 0;
        int e = 0, s = 0; /* the expected reference; the last decision (0: none, 1: it, 2: another) */
        for (int t = 0; t < (int)cnt; t++, n++) {
            PnmfSpritePlace *pl = &L->place[n];
            int r = -1;
            if (writing) {
                /* the reference of the least cost, the expected one first
                 * (ties keep it), then those within PNMF_PLACE_REF_SPAN of it */
                int best = place_cost(pl, NULL, NULL, next, -1, e, nprev);
                if (e < nprev) {
                    const int q = place_cost(pl, &L->place[p0 + e], &vel[2 * (p0 + e)], next, e, e, nprev);
                    if (q <= best) best = q, r = e;
                }
                const int lo = e > PNMF_PLACE_REF_SPAN ? e - PNMF_PLACE_REF_SPAN : 0,
                          hi = nprev - e > PNMF_PLACE_REF_SPAN ? e + PNMF_PLACE_REF_SPAN : nprev;
                for (int k = lo; k < hi; k++) {
                    if (k == e) continue;
                    const int q = place_cost(pl, &L->place[p0 + k], &vel[2 * (p0 + k)], next, k, e, nprev);
                    if (q < best) best = q, r = k;
                }
            }
            int tr = 0;
            if (e < nprev) {
                const int o = p0 + e, mv = ref[o] < 0 ? 0 : vel[2 * o] || vel[2 * o + 1] ? 2 : 1;
                tr = io_bit(io, PNMF_PC_TRACK + 3 * s + mv, r == e);
            }
            if (tr) {
                r = e;
            } else if (nprev && !io_bit(io, PNMF_PC_NEW + s, r < 0)) {
                if (e < nprev) {
                    const int64_t d = io_nonzero(io, PNMF_PC_REF_SIGN, PNMF_PC_REF_MAG, r - e);
                    if (d == INT64_MIN) goto bad;
                    r = (int)(d < -nprev || d > nprev ? -2 : e + d);
                } else {
                    const int64_t d = io_mag(io, PNMF_PC_REF_MAG, e - 1 - r);
                    if (d < 0) goto bad;
                    r = (int)(d >= e ? -2 : e - 1 - d);
                }
                if (r < 0 || r >= nprev) {
                    ret = -3;
                    goto end;
                }
            } else {
                r = -1;
            }
            s = r < 0 ? 2 : r == e ? 1 : 2;
            int64_t pose, y, x;
            if (r < 0) {
                pose = io_mag(io, PNMF_PC_NEW_POSE, writing ? pl->pose : 0);
                const int ny = io_bit(io, PNMF_PC_NEW_SIGN, writing && pl->y < 0);
                const int64_t ay = io_mag(io, PNMF_PC_NEW_MAG, writing ? (pl->y < 0 ? -(int64_t)pl->y - 1 : pl->y) : 0);
                const int nx = io_bit(io, PNMF_PC_NEW_SIGN + 1, writing && pl->x < 0);
                const int64_t ax = io_mag(io, PNMF_PC_NEW_MAG + PNMF_PLACE_MAG_CTX,
                                          writing ? (pl->x < 0 ? -(int64_t)pl->x - 1 : pl->x) : 0);
                if (pose < 0 || ay < 0 || ax < 0) goto bad;
                y = ny ? -ay - 1 : ay, x = nx ? -ax - 1 : ax;
                ref[n] = -1, vel[2 * n] = vel[2 * n + 1] = 0, pch[n] = 0, rz[n] = 0;
            } else {
                const int o = p0 + r;
                const PnmfSpritePlace *op = &L->place[o];
                const int pc = ref[o] < 0 ? 0 : pch[o] ? 2 : 1;
                const int ch = io_bit(io, PNMF_PC_POSE + 3 * (r != e) + pc, writing && pl->pose != op->pose);
                pose = op->pose;
                if (ch) {
                    /* the pose that last followed the reference's in a
                     * track of the window, else the difference */
                    const int nx = next[op->pose];
                    if (nx >= 0 && io_bit(io, PNMF_PC_POSE_NEXT + pc, writing && pl->pose == nx)) {
                        pose = nx;
                    } else {
                        const int64_t d = io_nonzero(io, PNMF_PC_POSE_SIGN, PNMF_PC_POSE_MAG, writing ? pl->pose - op->pose : 0);
                        if (d == INT64_MIN) goto bad;
                        pose += d;
                    }
                    if (pose >= 0 && pose < PNMF_SPRITE_MAX_POSES) next[op->pose] = (int)pose;
                }
                const int vy = vel[2 * o], vx = vel[2 * o + 1], vnz = vy || vx;
                const int64_t py = (int64_t)op->y + vy, px = (int64_t)op->x + vx;
                const int zr0 = ref[o] < 0 ? 0 : rz[o] ? 1 : 2;
                const int still = io_bit(io, PNMF_PC_RES + zr0 + 3 * vnz + 6 * ch, writing && pl->y == py && pl->x == px);
                y = py, x = px;
                if (!still) {
                    const int64_t dy = writing ? pl->y - py : 0, dx = writing ? pl->x - px : 0;
                    const int yz = io_bit(io, PNMF_PC_RES_ZERO + vnz, dy == 0);
                    if (!yz) {
                        const int64_t d = io_nonzero(io, PNMF_PC_RES_SIGN, PNMF_PC_RES_MAG, dy);
                        if (d == INT64_MIN) goto bad;
                        y += d;
                    }
                    if (yz || !io_bit(io, PNMF_PC_RES_ZERO + 2 + vnz, dx == 0)) {
                        const int64_t d = io_nonzero(io, PNMF_PC_RES_SIGN + 1, PNMF_PC_RES_MAG + PNMF_PLACE_MAG_CTX, dx);
                        if (d == INT64_MIN) goto bad;
                        x += d;
                    }
                }
                ref[n] = o, pch[n] = (uint8_t)ch, rz[n] = (uint8_t)still;
                /* clamped: a hostile track cannot grow it past int */
                const int64_t wy = y - op->y, wx = x - op->x;
                vel[2 * n] = (int)(wy < -(1 << 22) ? -(1 << 22) : wy > (1 << 22) ? (1 << 22) : wy);
                vel[2 * n + 1] = (int)(wx < -(1 << 22) ? -(1 << 22) : wx > (1 << 22) ? (1 << 22) : wx);
            }
            if (!writing) {
                if (pose < 0 || pose >= PNMF_SPRITE_MAX_POSES || y <= -rows - (1 << 20) || y >= rows ||
                    x <= -cols - (1 << 20) || x >= cols) {
                    ret = -4;
                    goto end;
                }
                pl->pose = (int)pose, pl->y = (int)y, pl->x = (int)x;
            }
            if (r >= 0) e = r + 1;
            if (!writing && io->d.over) goto bad;
        }
    }
    if (!writing) L->first[m] = n;
    goto end;
bad:
    ret = -1;
    goto end;
nomem:
    ret = PNMF_ERR_NOMEM;
end:
    pnmf_free(ref), pnmf_free(vel), pnmf_free(pch), pnmf_free(rz);
    return ret;
}

int pnmf_sprite_places_read(const uint8_t *p, size_t n, int version, PnmfSpriteLayer *L, int rows, int cols)
{
    PnmfPlaceIO io;
    memset(&io, 0, sizeof(io));
    rc_dec_init(&io.d, p, n, version);
    const int ret = pnmf_sprite_places_code(&io, L, rows, cols);
    if (ret < 0) return ret;
    return rc_dec_exact(&io.d, p) ? 0 : -1;
}
