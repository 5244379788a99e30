/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sprite discovery (sprite_find.h): background, foreground blobs, and the
 * blobs explained by a dictionary of poses matched up to shift.
 *
 * Matching up to shift is a direct test of each shift with an early exit,
 * not an FFT correlation: a shift is kept only when every mask pixel of the
 * pose matches, so almost every shift is rejected at its first or second
 * pixel, and a blob's box leaves few shifts. A correlation would transform
 * the blob's box for every (blob, pose) pair to rank shifts that the exact
 * test rejects at once.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sprite_find.h"
#include "tuning.h"

#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
#include <emmintrin.h>
#endif

#define DEFAULT_DILATE    1   /* blobs join across gaps of up to 2 pixels (sprite pixels equal to
                               * the background split a sprite otherwise) */
#define ANCHOR_TRIES      32  /* pixels of a pose tried as its anchor: a rare value leaves few shifts */
#define SEARCH_BUDGET     512 /* pixels the shift search tests per blob pixel, at most, by default */
#define DEFAULT_MIN_MATCH 8   /* smaller poses match too many places to be placed inside a blob */
#define NEAR_SHARE        32  /* a near match differs from the blob in at most 1/32 of its pixels */
#define NEAR_MIN          4   /* ... or in 4, whichever is more */
#define MAX_BORDER        4   /* a frame line (a constant border the sprites pass under) is at most
                               * this many samples thick */

void pnmf_sprite_params_default(PnmfSpriteParams *p)
{
    memset(p, 0, sizeof(*p));
    p->tol = 0;
    p->dilate = DEFAULT_DILATE;
    p->min_match = DEFAULT_MIN_MATCH;
    p->max_blob_pixels = 0;
    p->max_poses = PNMF_SPRITE_MAX_POSES;
    p->max_pixels = PNMF_SPRITE_MAX_PIXELS;
    p->budget = SEARCH_BUDGET;
}

void pnmf_sprite_window_free(PnmfSpriteWindow *win)
{
    if (win->frame)
        for (int j = 0; j < win->frames; j++) pnmf_free(win->frame[j].place);
    pnmf_free(win->frame);
    pnmf_free(win->bg);
    memset(win, 0, sizeof(*win));
}

/* r8[x] += 1 for each x < n where f[x] == g[x] (g NULL: where f[x] == v),
 * in bytes (no count reaches 256: the callers add at most 255 frames). */
static void count_equal(uint8_t *r8, const uint8_t *f, const uint8_t *g, int v, int n)
{
    int x = 0;
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
    /* sixteen pixels at a time: an equal byte's mask is -1 */
    const __m128i vv = _mm_set1_epi8((char)v);
    for (; x + 16 <= n; x += 16) {
        const __m128i a = _mm_loadu_si128((const __m128i *)(f + x));
        const __m128i b = g ? _mm_loadu_si128((const __m128i *)(g + x)) : vv;
        const __m128i r = _mm_loadu_si128((const __m128i *)(r8 + x));
        _mm_storeu_si128((__m128i *)(r8 + x), _mm_sub_epi8(r, _mm_cmpeq_epi8(a, b)));
    }
#endif
    for (; x < n; x++) r8[x] = (uint8_t)(r8[x] + (f[x] == (g ? g[x] : v)));
}

/* run[x] += the frames j = j0 .. m-1 whose sample at o + x equals g[x]
 * (g NULL: v), for x < n: counted in bytes (r8, n of them) over at most
 * 255 frames at a time (count_equal()), then added. */
static void count_frames(uint16_t *run, uint8_t *r8, const uint8_t *const *frames, int j0, int m, ptrdiff_t o,
                         const uint8_t *g, int v, int n)
{
    for (; j0 < m; j0 += 255) {
        const int j1 = m - j0 < 255 ? m : j0 + 255;
        memset(r8, 0, (size_t)n);
        for (int j = j0; j < j1; j++) count_equal(r8, frames[j] + o, g, v, n);
        for (int x = 0; x < n; x++) run[x] = (uint16_t)(run[x] + r8[x]);
    }
}

/* The mode, not the median: the sources are exact per pixel, so the
 * background value recurs identically in every frame that shows it, and the
 * mode recovers it wherever it is visible more often than any one sprite
 * value is, while the median needs it visible in more than half the
 * frames. Ties go to the smaller value so the result does not depend on
 * frame order.
 * A flat background (one value the mode of most pixels) is taken where the
 * pixel shows it in a quarter of the frames at least, even when another
 * value shows more often: a slow sprite with flat areas (a black fish body
 * over a blue tank) otherwise becomes background where it lingers, and its
 * poses get holes that differ from frame to frame. */
void pnmf_sprite_background(const uint8_t *const *frames, ptrdiff_t stride, int w, int h, int m,
                            uint8_t *bg)
{
    /* (per-pixel counts over the frames are made for a run of up to
     * BG_RUN pixels of a row at a time, frame by frame along the run:
     * in bytes, r8, over up to 255 frames at a time (count_frames()), then
     * added to run) */
    enum { BG_RUN = 1024 };
    uint16_t cnt[256], run[BG_RUN];
    uint8_t r8[BG_RUN];
    long hist[256];
    memset(cnt, 0, sizeof(cnt));
    memset(hist, 0, sizeof(hist));
    /* a pixel that the first frame's value shows in more than half the
     * frames (most of a screen: no frame changes it) has that value as its
     * mode, the one value of the greatest count */
    for (int y = 0; y < h; y++) {
        const uint8_t *f0 = frames[0] + (ptrdiff_t)y * stride;
        for (int x0 = 0; x0 < w; x0 += BG_RUN) {
            const int n = w - x0 < BG_RUN ? w - x0 : BG_RUN;
            for (int x = 0; x < n; x++) run[x] = 1;
            count_frames(run, r8, frames, 1, m, (ptrdiff_t)y * stride + x0, f0 + x0, 0, n);
            for (int x = x0; x < x0 + n; x++) {
                const ptrdiff_t o = (ptrdiff_t)y * stride + x;
                int best = f0[x], bc = 0;
                if (2 * run[x - x0] <= m) {
                    for (int j = 0; j < m; j++) {
                        const int v = frames[j][o], c = ++cnt[v];
                        if (c > bc || (c == bc && v < best)) bc = c, best = v;
                    }
                    for (int j = 0; j < m; j++) cnt[frames[j][o]] = 0;
                }
                bg[y * w + x] = (uint8_t)best;
                hist[best]++;
            }
        }
    }
    int flat = 0;
    for (int v = 1; v < 256; v++)
        if (hist[v] > hist[flat]) flat = v;
    /* (under 4 frames one frame is a quarter: too little to go by) */
    if (2 * hist[flat] <= (long)w * h || m < 4) return;
    for (int y = 0; y < h; y++) {
        uint8_t *b = bg + (size_t)y * w;
        int any = 0;
        for (int x = 0; x < w; x++) any |= b[x] != flat;
        if (!any) continue;
        for (int x0 = 0; x0 < w; x0 += BG_RUN) {
            const int n = w - x0 < BG_RUN ? w - x0 : BG_RUN;
            for (int x = 0; x < n; x++) run[x] = 0;
            count_frames(run, r8, frames, 0, m, (ptrdiff_t)y * stride + x0, NULL, flat, n);
            for (int x = 0; x < n; x++)
                if (4 * run[x] >= m) b[x0 + x] = (uint8_t)flat;
        }
    }
}

void pnmf_sprite_composite(const PnmfSpriteDict *d, const uint8_t *bg, int w, int h,
                           const PnmfSpriteFrame *f, uint8_t *out)
{
    /* the frame's placements as the one frame of a layer: the decoder's painting */
    int first[2] = { 0, f->count };
    const PnmfSpriteLayer L = { .present = 1, .m = 1, .first = first, .place = f->place };
    pnmf_sprite_paint(d, &L, 0, h, w, bg, out);
}

/* ---- the window's working state ---- */

typedef struct Blob {
    int frame, y0, x0, y1, x1; /* inclusive box of its foreground pixels */
    int edge;                  /* the box touches the frame edge */
    int npix;
    size_t start;              /* its pixels: St.pixels[start .. start + npix) */
} Blob;

typedef struct St {
    const PnmfSpriteParams *p;
    PnmfSpriteDict *d;
    const uint8_t *const *frames;
    ptrdiff_t stride;
    int w, h, m;
    uint8_t *fg;        /* m * w * h: foreground nothing explains (mark() clears what it covers) */
    uint8_t *cover;     /* m * w * h: 1 where a placement paints the pixel */
    uint8_t *mine;      /* w * h: 1 where a placement of the blob being explained paints the pixel */
    int32_t *mq;        /* mine's pixels y * w + x (cleared when the next blob starts) */
    int nmq;
    int32_t *pixels;    /* foreground pixel indices y * w + x, grouped by blob */
    Blob *blob;
    int nblob;
    PnmfSpritePlace *cand; /* the current blob's placements, front first */
    int ncand, acand;
    uint32_t *bpos;     /* the search region's positions (y << 16) | x, grouped by value */
    int bstart[257];    /* value v: bpos[bstart[v] .. bstart[v + 1]) */
    uint32_t **apos;    /* per frame, the sprites' whole area's positions so (edge blobs'), or NULL */
    int (*astart)[257];
    int *aleft;         /* per frame, its edge blobs not explained yet (those sharing apos) */
    uint32_t *occ;      /* the region's positions (y << 16) | x painted by the current blob's placements */
    int *anc1;          /* per pose id, an interior blob's anchor (index in its list), -1 until chosen */
    int nanc1;          /* anc1's room */
    PnmfSpriteWindow *out;
    int *fcap;          /* capacity of out->frame[j].place */
    struct PoseTests *tests; /* per pose id, made when the pose is first tried */
    int ntests;
    int32_t *unexp;     /* the search region's foreground pixels nothing explains, summed over */
    int uy0, ux0, uw;   /* the rectangles from its corner (uy0, ux0); its rows are uw + 1 wide */
    int uh, uj, uok;    /* the region's rows, its frame, and whether unexp is made (on first use) */
    long usum;          /* the pixels unexplained() has summed directly in the greedy step */
    int ay0, ax0, ay1, ax1; /* the sprites' area: rows ay0 .. ay1 - 1, columns ax0 .. ax1 - 1; the
                             * frame lines around it (border()) hide what passes under them */
} St;

/* Foreground pixels nothing explains in rows y0 .. y1 - 1, columns x0 .. x1 - 1
 * of the search region (clipped to it). */
static void unexp_make(St *s)
{
    const int w = s->w, uw = s->uw + 1;
    const uint8_t *fg = s->fg + (size_t)s->uj * w * s->h;
    memset(s->unexp, 0, (size_t)uw * sizeof(int32_t));
    for (int y = s->uy0; y < s->uy0 + s->uh; y++) {
        int32_t *u = s->unexp + (size_t)(y - s->uy0 + 1) * uw;
        const uint8_t *g = fg + (size_t)y * w + s->ux0;
        int row = 0;
        u[0] = 0;
        for (int x = 0; x < s->uw; x++) {
            row += g[x];
            u[x + 1] = u[x + 1 - uw] + row;
        }
    }
    s->uok = 1;
}

/* The rectangles are summed directly until the pixels so summed in the
 * greedy step would pass the region's: then the sums are made (most steps
 * of a blob that nothing more fits never get this far, and an edge blob's
 * region is most of the frame while a step tries few rectangles). Either
 * way the same count. */
static int unexplained(St *s, int y0, int x0, int y1, int x1)
{
    y0 -= s->uy0, y1 -= s->uy0, x0 -= s->ux0, x1 -= s->ux0;
    if (y0 < 0) y0 = 0;
    if (x0 < 0) x0 = 0;
    if (!s->uok) {
        const long a = (long)(y1 - y0) * (x1 - x0);
        if (s->usum + a <= (long)s->uh * s->uw) {
            s->usum += a;
            const uint8_t *g = s->fg + (size_t)s->uj * s->w * s->h + (size_t)(s->uy0 + y0) * s->w + s->ux0;
            int n = 0;
            for (int y = y0; y < y1; y++) {
                const uint8_t *r = g + (size_t)(y - y0) * s->w;
                for (int x = x0; x < x1; x++) n += r[x]; /* (no branch: vectorized) */
            }
            return n;
        }
        unexp_make(s);
    }
    const int32_t *u = s->unexp;
    const int uw = s->uw + 1;
    return u[y1 * uw + x1] - u[y0 * uw + x1] - u[y1 * uw + x0] + u[y0 * uw + x0];
}

/* A mask pixel of a pose as try_place() tests it: its offset dy * w + dx
 * in the box (in the frames and in the search's planes alike: the search
 * reads frames whose rows are w apart) and its value. Eight bytes: the
 * tests of a long pose read its pixels in a stream. */
typedef struct TestPix {
    int32_t off, v;
} TestPix;

/* A pose's pixels in try_place()'s order and its 8 extreme pixels (edge
 * anchors): they depend on the pose alone, so each is made once per search
 * rather than at every shift tried. */
typedef struct PoseTests {
    TestPix *ord;      /* NULL until made */
    int16_t (*yx)[2];  /* ord's (dy, dx), then up to 7 pairs outside every area (fit_edge()'s groups of 8) */
    int anc[8], na;
    int simd;          /* fit_edge() may read yx in groups of 8: the bounds fit 16 bits */
} PoseTests;

static int abs_i(int a) { return a < 0 ? -a : a; }

/* Blobs of frame j: 8-connected components of the foreground dilated by
 * p->dilate, each keeping its own (undilated) foreground pixels. */
static int find_blobs(St *s, int j, int32_t *lab, uint8_t *dil, int32_t *stack, size_t *npixels,
                      int *ablob)
{
    const int w = s->w, h = s->h, r = s->p->dilate;
    const uint8_t *fg = s->fg + (size_t)j * w * h;
    /* separable square dilation of the 0/1 foreground: each offset's
     * shifted rows ORed in whole (loops the compiler vectorizes) */
    uint8_t *row = dil + (size_t)w * h;
    /* (offset 0 copied, the others ORed over it) */
    memcpy(row, fg, (size_t)w * h);
    for (int y = 0; y < h; y++)
        for (int dx = -r; dx <= r; dx++) {
            const int x0 = dx < 0 ? -dx : 0, x1 = dx > 0 ? w - dx : w;
            uint8_t *o = row + (size_t)y * w;
            const uint8_t *in = fg + (size_t)y * w;
            if (dx)
                for (int x = x0; x < x1; x++) o[x] |= in[x + dx];
        }
    memcpy(dil, row, (size_t)w * h);
    for (int y = 0; y < h; y++)
        for (int dy = -r; dy <= r; dy++) {
            const int yy = y + dy;
            if (!dy || yy < 0 || yy >= h) continue;
            uint8_t *o = dil + (size_t)y * w;
            const uint8_t *in = row + (size_t)yy * w;
            for (int x = 0; x < w; x++) o[x] |= in[x];
        }
    /* the components as runs of dilated pixels along rows, joined where
     * runs of two adjacent rows touch (8-connected: their spans overlap
     * or meet at a corner); a component's root is its first run in
     * raster order, so the blobs are numbered by their first pixel in
     * raster order. stack: each run's (x0 << 16) | x1 (x1 past its end);
     * lab: each run's parent, then its blob */
    int *rowat = pnmf_malloc_array((size_t)h + 1, sizeof(int));
    if (!rowat) return PNMF_ERR_NOMEM;
    int nr = 0;
    for (int y = 0; y < h; y++) {
        const uint8_t *d = dil + (size_t)y * w;
        rowat[y] = nr;
        int a = y ? rowat[y - 1] : 0; /* the first run above that may touch the next run */
        const int ae = y ? rowat[y] : 0;
        for (int x = 0; x < w;) {
            uint64_t v;
            if (x + 8 <= w && (memcpy(&v, d + x, 8), !v)) { /* eight outside at once */
                x += 8;
                continue;
            }
            if (!d[x]) {
                x++;
                continue;
            }
            const int x0 = x;
            while (x < w && d[x]) x++;
            const int k = nr++;
            stack[k] = (int32_t)((uint32_t)x0 << 16 | (uint32_t)x);
            lab[k] = k;
            /* joined to the runs of the row above that it touches (those
             * ending left of it touch no later run either) */
            while (a < ae && (int)(stack[a] & 0xFFFF) < x0) a++;
            for (int u = a; u < ae; u++) {
                if ((int)((uint32_t)stack[u] >> 16) > x) break;
                int ra = u, rb = k;
                while (lab[ra] != ra) lab[ra] = lab[lab[ra]], ra = lab[ra]; /* (path halving) */
                while (lab[rb] != rb) lab[rb] = lab[lab[rb]], rb = lab[rb];
                if (ra < rb) lab[rb] = ra;
                else if (rb < ra) lab[ra] = rb;
            }
        }
    }
    rowat[h] = nr;
    /* each run's blob: a root (parent itself) opens one, the others take
     * their root's, an earlier run (parent indices never exceed the run's) */
    const int first = s->nblob;
    for (int k = 0; k < nr; k++) {
        if (lab[k] != k) {
            lab[k] = lab[lab[k]];
            continue;
        }
        if (s->nblob == *ablob) {
            const int na = *ablob ? 2 * *ablob : 256;
            Blob *nb = pnmf_realloc(s->blob, sizeof(Blob) * (size_t)na);
            if (!nb) {
                pnmf_free(rowat);
                return PNMF_ERR_NOMEM;
            }
            s->blob = nb;
            *ablob = na;
        }
        const int id = s->nblob++;
        Blob *b = &s->blob[id];
        b->frame = j, b->y0 = h, b->x0 = w, b->y1 = -1, b->x1 = -1, b->npix = 0, b->edge = 0;
        lab[k] = id;
    }
    /* the blobs' foreground pixels: counts and boxes, then grouped by
     * blob, in raster order within each */
    for (int y = 0; y < h; y++)
        for (int k = rowat[y]; k < rowat[y + 1]; k++) {
            Blob *b = &s->blob[lab[k]];
            const int x0 = (int)((uint32_t)stack[k] >> 16), x1 = (int)(stack[k] & 0xFFFF);
            const uint8_t *f = fg + (size_t)y * w;
            int n = 0, lo = w, hi = -1;
            for (int x = x0; x < x1; x++)
                if (f[x]) {
                    n++;
                    if (x < lo) lo = x;
                    hi = x;
                }
            if (!n) continue;
            b->npix += n;
            if (y < b->y0) b->y0 = y;
            if (y > b->y1) b->y1 = y;
            if (lo < b->x0) b->x0 = lo;
            if (hi > b->x1) b->x1 = hi;
        }
    for (int b = first; b < s->nblob; b++) {
        Blob *o = &s->blob[b];
        o->edge = o->y0 == s->ay0 || o->x0 == s->ax0 || o->y1 == s->ay1 - 1 || o->x1 == s->ax1 - 1;
    }
    size_t at = *npixels;
    for (int b = first; b < s->nblob; b++) s->blob[b].start = at, at += s->blob[b].npix;
    for (int b = first; b < s->nblob; b++) s->blob[b].npix = 0;
    for (int y = 0; y < h; y++)
        for (int k = rowat[y]; k < rowat[y + 1]; k++) {
            Blob *b = &s->blob[lab[k]];
            const int x0 = (int)((uint32_t)stack[k] >> 16), x1 = (int)(stack[k] & 0xFFFF);
            const uint8_t *f = fg + (size_t)y * w;
            for (int x = x0; x < x1; x++)
                if (f[x]) s->pixels[b->start + b->npix++] = (int32_t)(y * w + x);
        }
    pnmf_free(rowat);
    *npixels = at;
    return 0;
}

/* Interior blobs first, smallest first, so parts are known before the
 * unions and occlusions they make; then blobs at the frame edge, largest
 * first, so a clipped view is explained by a fuller one. */
static int blob_cmp(const void *a, const void *b)
{
    const Blob *x = a, *y = b;
    if (x->edge != y->edge) return x->edge - y->edge;
    if (x->npix != y->npix) return x->edge ? y->npix - x->npix : x->npix - y->npix;
    if (x->frame != y->frame) return x->frame - y->frame;
    if (x->y0 != y->y0) return x->y0 - y->y0;
    return x->x0 - y->x0;
}

static int gcd(int a, int b) { while (b) { const int t = a % b; a = b, b = t; } return a; }

/* A step near 0.618 n, coprime with n: visiting i, i + step, ... mod n
 * covers every pixel once, consecutive ones far apart. */
static int test_step(int n)
{
    int st = (int)(0.618 * n) + 1;
    if (st >= n) return 1;
    while (gcd(st, n) != 1) st++;
    return st;
}

/* At least half of what is in the frame shows (a pose hidden behind
 * others is no evidence of itself), and at least half of what shows is
 * not explained yet (a flat pose would otherwise tile a flat region with
 * copies a pixel apart): fresh, or -1. */
static int fit_fresh(int in, int vis, int fresh)
{
    if (fresh == 0 || 2 * vis < in || 2 * fresh < vis) return -1;
    return fresh;
}

/* try_place() of a pose whose whole box is in the frame, once every mask
 * pixel matched or was painted by the blob (the first pass, np pixels,
 * counted in the work by the caller): the pixels it shows counted, unless
 * fewer than best are left to explain under its box (the fresh ones are
 * among them: it cannot be the search's best). */
static int fit_inside(St *s, const PnmfSpritePose *ps, const TestPix *ord, int j, int py, int px, int best)
{
    const int w = s->w, tol = s->p->tol, np = ps->npix;
    /* no foreground pixel left to explain under the box: none fresh */
    const int left = unexplained(s, py, px, py + ps->h, px + ps->w);
    if (!left || left < best) return -1;
    const uint8_t *f0 = s->frames[j] + (ptrdiff_t)py * s->stride + px;
    const ptrdiff_t q0 = (ptrdiff_t)j * w * s->h + (ptrdiff_t)py * w + px;
    const uint8_t *g0 = s->fg + q0;
    int vis = 0, fresh = 0;
    for (int k = 0; k < np; k++)
        if (tol ? abs_i(f0[ord[k].off] - ord[k].v) <= tol : f0[ord[k].off] == ord[k].v) {
            vis++;
            fresh += g0[ord[k].off];
        }
    return fit_fresh(np, vis, fresh);
}

#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
/* Bit i set where pixel yx[i] of 8 is in the area: lo <= (dy, dx) < hi,
 * the bounds as 16-bit pairs (dy low, dx high) in each 32-bit lane. */
static inline unsigned in_area8(const int16_t (*yx)[2], __m128i lo, __m128i hi)
{
    const __m128i ones = _mm_set1_epi32(-1);
    const __m128i a = _mm_loadu_si128((const __m128i *)yx);
    const __m128i b = _mm_loadu_si128((const __m128i *)(yx + 4));
    /* a pair is in when both its halves are */
    const __m128i ia = _mm_andnot_si128(_mm_cmplt_epi16(a, lo), _mm_cmplt_epi16(a, hi));
    const __m128i ib = _mm_andnot_si128(_mm_cmplt_epi16(b, lo), _mm_cmplt_epi16(b, hi));
    return (unsigned)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(ia, ones))) |
           (unsigned)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(ib, ones))) << 4;
}

/* in_area8()'s bounds for a pose at (py, px): the area's rows ay0 .. ay1 - 1
 * and columns ax0 .. ax1 - 1, less the corner */
static inline void area_bounds(int ay0, int ay1, int ax0, int ax1, int py, int px, __m128i *lo, __m128i *hi)
{
    *lo = _mm_set1_epi32((int32_t)((uint32_t)(uint16_t)(ax0 - px) << 16 | (uint16_t)(ay0 - py)));
    *hi = _mm_set1_epi32((int32_t)((uint32_t)(uint16_t)(ax1 - px) << 16 | (uint16_t)(ay1 - py)));
}
#endif

/* try_place() of a pose whose box sticks out of the frame: its pixels
 * outside are skipped. *work: the pixels tested (set; the caller adds
 * them up, its sum kept out of memory). */
static int fit_edge(const St *s, const PnmfSpritePose *ps, const PoseTests *pt, int j, int py, int px, int painted,
                    int *work)
{
    const TestPix *ord = pt->ord;
    const int16_t (*yx)[2] = (const int16_t (*)[2])pt->yx;
    const int w = s->w, h = s->h, tol = s->p->tol, np = ps->npix;
    /* a pixel (dy, dx) of the pose is in the area where dy - dy0 < ny and dx - dx0 < nx, unsigned */
    const int dy0 = s->ay0 - py, dx0 = s->ax0 - px;
    const unsigned ny = (unsigned)(s->ay1 - s->ay0), nx = (unsigned)(s->ax1 - s->ax0);
    /* (the search reads frames whose rows are w apart: a pixel's offset
     * in the frame is its offset in the planes, o + ord[k].off) */
    const ptrdiff_t o = (ptrdiff_t)py * w + px;
    const uint8_t *fr = s->frames[j];
    const uint8_t *fg = s->fg + (size_t)j * w * h;
    const uint8_t *mine = s->mine;
    int vis = 0, in = 0, fresh = 0;
    int k = 0;
    /* (tests one in-area pixel k: a mismatch not painted by the blob ends the try) */
#define FIT_EDGE_TEST() do { \
        const ptrdiff_t q = o + ord[k].off; \
        in++; \
        if (abs_i(fr[q] - ord[k].v) <= tol) { \
            vis++; \
            fresh += fg[q]; \
        } else if (!painted || !mine[q]) { \
            *work = k + 1; \
            return -1; \
        } \
    } while (0)
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
    /* Most tries fail at their first or second pixel in the area, after
     * several outside it: the pixels outside are found eight at a time,
     * the same pixels tested in the same order. pt->yx holds its (dy, dx)
     * as 16-bit pairs, padded to whole groups of eight by pairs outside
     * every area (PoseTests); the bounds fit 16 bits (pose_tests()). */
    if (pt->simd) {
        __m128i lo, hi;
        area_bounds(s->ay0, s->ay1, s->ax0, s->ax1, py, px, &lo, &hi);
        for (int k0 = 0; k0 < np; k0 += 8) {
            unsigned bits = in_area8(yx + k0, lo, hi);
            while (bits) {
                k = k0 + __builtin_ctz(bits);
                bits &= bits - 1;
                FIT_EDGE_TEST();
            }
        }
        *work = np;
        return fit_fresh(in, vis, fresh);
    }
#endif
    for (; k < np; k++) {
        if ((unsigned)(yx[k][0] - dy0) >= ny || (unsigned)(yx[k][1] - dx0) >= nx) continue;
        FIT_EDGE_TEST();
    }
#undef FIT_EDGE_TEST
    *work = np;
    return fit_fresh(in, vis, fresh);
}

/* What try_place() reads of the search, in locals of its caller: frame j
 * and the pixels the blob paints (St.mine; rows w apart), and the corners
 * (py, px) that put the pose's box wholly in the sprites' area: py in
 * y0 .. y1, px in x0 .. x1. */
typedef struct TryAt {
    const uint8_t *fr;
    const uint8_t *mine;
    int w, j, tol, painted, y0, y1, x0, x1;
} TryAt;

/* Does pose ps at (py, px) of frame j fit: every in-frame mask pixel
 * matches the frame or is painted by a placement of this blob (St.mine),
 * in front of it? ord: its pixels in the order tested (pose_tests()).
 * Returns the count of foreground pixels it explains that nothing explains
 * yet, or -1 (for a box wholly in the frame also where fewer than best,
 * the most a shift tried so far explains, are left to explain under it).
 * *work grows by the pixels tested. painted: the blob paints some pixel of
 * the search region (else no pixel is painted by it, and a mismatch ends
 * the try without a look at the cover). Inline in the search's
 * loops: most shifts fail within a few pixels, and a call per shift costs
 * as much as its tests. */
static inline int try_place(St *s, const PnmfSpritePose *ps, const PoseTests *pt, const TryAt t, int py, int px,
                            int best, long *work)
{
    if (py < t.y0 || px < t.x0 || py > t.y1 || px > t.x1) {
#if defined(__SSE2__) && !defined(PNMF_NO_SIMD)
        /* (nearly all such tries fail within their first few pixels in
         * the area: fit_edge()'s tests made here, without the call and
         * without its counts, until a pixel fails; a try that passes
         * them all is made again by fit_edge(), which counts) */
        if (pt->simd && !t.tol) {
            __m128i lo, hi;
            area_bounds(t.y0, t.y1 + ps->h, t.x0, t.x1 + ps->w, py, px, &lo, &hi);
            const ptrdiff_t o = (ptrdiff_t)py * t.w + px;
            const TestPix *ord = pt->ord;
            for (int k0 = 0; k0 < ps->npix; k0 += 8)
                for (unsigned bits = in_area8(pt->yx + k0, lo, hi); bits; bits &= bits - 1) {
                    const int k = k0 + __builtin_ctz(bits);
                    const ptrdiff_t q = o + ord[k].off;
                    if (t.fr[q] != ord[k].v && (!t.painted || !t.mine[q])) {
                        *work += k + 1;
                        return -1;
                    }
                }
        }
#endif
        int wk;
        const int f = fit_edge(s, ps, pt, t.j, py, px, t.painted, &wk);
        *work += wk;
        return f;
    }
    const TestPix *ord = pt->ord;
    /* the whole box in the frame: no pixel to skip; the first pass finds
     * a mismatch (most shifts have one), fit_inside() counts */
    const int tol = t.tol, np = ps->npix, painted = t.painted;
    const ptrdiff_t o = (ptrdiff_t)py * t.w + px;
    const uint8_t *f0 = t.fr + o;
    const uint8_t *c0 = t.mine + o;
    int k = 0;
    /* (tol 0, lossless sources: an equality, the common case) */
    if (!tol && !painted) {
        for (; k < np; k++)
            if (f0[ord[k].off] != ord[k].v) break;
    } else if (!tol) {
        for (; k < np; k++)
            if (f0[ord[k].off] != ord[k].v && !c0[ord[k].off]) break;
    } else {
        for (; k < np; k++)
            if (abs_i(f0[ord[k].off] - ord[k].v) > tol && !c0[ord[k].off]) break;
    }
    if (k < np) {
        *work += k + 1;
        return -1;
    }
    *work += np;
    return fit_inside(s, ps, ord, t.j, py, px, best);
}

/* Pose id's tests (PoseTests), made on first use: its pixels far apart
 * first (a wrong shift over a flat area fails sooner), and its extreme
 * pixels along y, -y, x, -x, y+x, y-x, x-y, -y-x, repeats dropped. */
static const PoseTests *pose_tests(St *s, int id)
{
    if (id >= s->ntests) {
        int na = s->ntests ? s->ntests : 64;
        while (na <= id) na *= 2;
        PoseTests *t = pnmf_realloc(s->tests, sizeof(*t) * (size_t)na);
        if (!t) return NULL;
        memset(t + s->ntests, 0, sizeof(*t) * (size_t)(na - s->ntests));
        s->tests = t, s->ntests = na;
    }
    PoseTests *t = &s->tests[id];
    if (t->ord) return t;
    const PnmfSpritePose *ps = &s->d->pose[id];
    t->ord = pnmf_malloc_array((size_t)ps->npix, sizeof(TestPix));
    const int npad = (ps->npix + 7) & ~7;
    t->yx = pnmf_malloc_array((size_t)npad, sizeof(*t->yx));
    if (!t->ord || !t->yx) {
        pnmf_free(t->ord), pnmf_free(t->yx);
        t->ord = NULL, t->yx = NULL;
        return NULL;
    }
    const int step = test_step(ps->npix);
    for (int k = 0, i = 0; k < ps->npix; k++, i = (i + step) % ps->npix) {
        const int dy = (int)(ps->list[i] >> 16), dx = (int)(ps->list[i] & 0xFFFF);
        t->ord[k] = (TestPix){ dy * s->w + dx, ps->pix[dy * ps->w + dx] };
        t->yx[k][0] = (int16_t)dy, t->yx[k][1] = (int16_t)dx;
    }
    /* (fit_edge()'s bounds dy0 .. dy0 + ny lie in -h .. 2h, dx's in -w .. 2w:
     * 16 bits hold them, and the padding pairs below every one of them) */
    for (int k = ps->npix; k < npad; k++) t->yx[k][0] = t->yx[k][1] = INT16_MIN;
    t->simd = s->w < 16384 && s->h < 16384;
    int bestv[8], anc[8];
    for (int q = 0; q < ps->npix; q++) {
        const int qy = (int)(ps->list[q] >> 16), qx = (int)(ps->list[q] & 0xFFFF);
        const int v[8] = { qy, -qy, qx, -qx, qy + qx, qy - qx, qx - qy, -qy - qx };
        for (int e = 0; e < 8; e++)
            if (q == 0 || v[e] > bestv[e]) bestv[e] = v[e], anc[e] = q;
    }
    t->na = 0;
    for (int e = 0; e < 8; e++) { /* drop repeats */
        int dup = 0;
        for (int f = 0; f < t->na; f++) dup |= t->anc[f] == anc[e];
        if (!dup) t->anc[t->na++] = anc[e];
    }
    return t;
}

static int push_place(St *s, int pose, int y, int x)
{
    if (s->ncand == s->acand) {
        const int na = s->acand ? 2 * s->acand : 16;
        PnmfSpritePlace *n = pnmf_realloc(s->cand, sizeof(*n) * (size_t)na);
        if (!n) return PNMF_ERR_NOMEM;
        s->cand = n, s->acand = na;
    }
    s->cand[s->ncand].pose = pose, s->cand[s->ncand].y = y, s->cand[s->ncand].x = x;
    s->ncand++;
    return 0;
}

/* Mark the pixels pose ps at (py, px) paints and matches as explained,
 * by the blob being explained (frame j's). */
static void mark(St *s, const PnmfSpritePose *ps, int j, int py, int px)
{
    const int w = s->w, h = s->h, tol = s->p->tol;
    const uint8_t *fr = s->frames[j];
    uint8_t *cov = s->cover + (size_t)j * w * h;
    uint8_t *fg = s->fg + (size_t)j * w * h;
    for (int i = 0; i < ps->npix; i++) {
        const int dy = (int)(ps->list[i] >> 16), dx = (int)(ps->list[i] & 0xFFFF);
        const int y = py + dy, x = px + dx;
        if (y < s->ay0 || y >= s->ay1 || x < s->ax0 || x >= s->ax1) continue;
        const int q = y * w + x;
        if (!cov[q] && abs_i(fr[(ptrdiff_t)y * s->stride + x] - ps->pix[dy * ps->w + dx]) <= tol)
            cov[q] = 1, fg[q] = 0, s->mine[q] = 1, s->mq[s->nmq++] = q;
    }
}

/* Append the current blob's placements to its frame, back first. */
static int commit_places(St *s, int j)
{
    PnmfSpriteFrame *f = &s->out->frame[j];
    if (f->count + s->ncand > s->fcap[j]) {
        int na = s->fcap[j] ? 2 * s->fcap[j] : 16;
        while (na < f->count + s->ncand) na *= 2;
        PnmfSpritePlace *n = pnmf_realloc(f->place, sizeof(*n) * (size_t)na);
        if (!n) return PNMF_ERR_NOMEM;
        f->place = n, s->fcap[j] = na;
    }
    for (int k = s->ncand - 1; k >= 0; k--) {
        f->place[f->count++] = s->cand[k];
        PnmfSpritePose *ps = &s->d->pose[s->cand[k].pose];
        ps->uses++;
        ps->last_window = s->d->windows;
    }
    s->ncand = 0;
    return 0;
}

static int find_hash(const PnmfSpriteDict *d, int w, int h, const uint8_t *pix, const uint8_t *mask,
                     uint64_t hash)
{
    for (int i = 0; i < d->count; i++) {
        const PnmfSpritePose *ps = &d->pose[i];
        if (ps->hash == hash && ps->w == w && ps->h == h && !memcmp(ps->mask, mask, (size_t)w * h) &&
            !memcmp(ps->pix, pix, (size_t)w * h))
            return i;
    }
    return -1;
}

/* The blob's pixels that nothing explains, cropped to their box: pix and
 * mask (bw * bh), and the box. Returns the pixel count. */
static int crop_blob(const St *s, const Blob *b, uint8_t *pix, uint8_t *mask, int *by, int *bx,
                     int *bh, int *bw)
{
    const int w = s->w;
    /* a blob pixel (foreground) is explained where mark() has cleared its
     * foreground byte, as it sets its cover */
    const uint8_t *fg = s->fg + (size_t)b->frame * w * s->h;
    int y0 = s->h, x0 = w, y1 = -1, x1 = -1, n = 0;
    /* the blob's pixels are in raster order: their rows followed along */
    int y = 0, r0 = 0;
    for (int i = 0; i < b->npix; i++) {
        const int q = s->pixels[b->start + i];
        if (!fg[q]) continue;
        while (q >= r0 + w) y++, r0 += w;
        const int x = q - r0;
        n++;
        if (y < y0) y0 = y;
        if (y > y1) y1 = y;
        if (x < x0) x0 = x;
        if (x > x1) x1 = x;
    }
    if (!n) return 0;
    const int cw = x1 - x0 + 1, ch = y1 - y0 + 1;
    memset(pix, 0, (size_t)cw * ch);
    memset(mask, 0, (size_t)cw * ch);
    y = 0, r0 = 0;
    /* (in locals: the byte stores below may alias s and b to the compiler) */
    const int32_t *px = s->pixels + b->start;
    const int np = b->npix;
    const uint8_t *fr = s->frames[b->frame];
    const ptrdiff_t stride = s->stride;
    for (int i = 0; i < np; i++) {
        const int q = px[i];
        if (!fg[q]) continue;
        while (q >= r0 + w) y++, r0 += w;
        const int x = q - r0;
        const int o = (y - y0) * cw + (x - x0);
        mask[o] = 1;
        pix[o] = fr[(ptrdiff_t)y * stride + x];
    }
    *by = y0, *bx = x0, *bh = ch, *bw = cw;
    return n;
}

static int add_pose(PnmfSpriteDict *d, int w, int h, const uint8_t *pix, const uint8_t *mask, int edge)
{
    const int id = pnmf_sprite_dict_add(d, w, h, pix, mask);
    if (id < 0) return id;
    PnmfSpritePose *ps = &d->pose[id];
    ps->edge = edge;
    ps->first_window = ps->last_window = d->windows;
    return id;
}

/* A near match: the known pose of the blob's box whose every mask pixel
 * matches the frame but a few that show foreground (a small sprite in
 * front of it, such as a bubble over a fish), the fewest such, placed on
 * the box. Those few stay unexplained, for the rest of the blob's search.
 * The exact search cannot place it (every mask pixel must match) and the
 * small sprite is below min_match, so without it each frame where the
 * small sprite crosses the large one makes a new pose of both. The pose's
 * box must equal the blob's, so a blob tests one shift per pose. */
static int near_match(St *s, const Blob *b, int by, int bx, int bh, int bw, int left)
{
    const int j = b->frame, w = s->w, tol = s->p->tol;
    if (by == s->ay0 || bx == s->ax0 || by + bh == s->ay1 || bx + bw == s->ax1) return 0;
    const uint8_t *fr = s->frames[j];
    const uint8_t *fg = s->fg + (size_t)j * w * s->h;
    const int lim = left / NEAR_SHARE > NEAR_MIN ? left / NEAR_SHARE : NEAR_MIN;
    int bi = -1, bmis = lim + 1;
    for (int i = 0; i < s->d->count; i++) {
        const PnmfSpritePose *ps = &s->d->pose[i];
        if (ps->w != bw || ps->h != bh || ps->npix < s->p->min_match || abs_i(ps->npix - left) > lim) continue;
        const PoseTests *pt = pose_tests(s, i);
        if (!pt) return PNMF_ERR_NOMEM;
        int mis = 0;
        for (int k = 0; k < ps->npix && mis < bmis; k++) {
            const int q = (by + pt->yx[k][0]) * w + bx + pt->yx[k][1];
            if (abs_i(fr[(ptrdiff_t)(by + pt->yx[k][0]) * s->stride + bx + pt->yx[k][1]] - pt->ord[k].v) <= tol)
                continue;
            if (!fg[q]) mis = bmis; /* over the background, or what is explained: no */
            else mis++;
        }
        if (mis < bmis) bi = i, bmis = mis;
    }
    if (bi < 0 || !bmis) return 0; /* none, or an exact one the greedy finds */
    PNMF_CHECK(push_place(s, bi, by, bx));
    mark(s, &s->d->pose[bi], j, by, bx);
    return 0;
}

/* The positions (y << 16) | x of rows y0 .. y1 - 1, columns x0 .. x1 - 1 of
 * frame j grouped by value, each value's in raster order: pos[start[v] ..
 * start[v + 1]) (a counting sort). */
static void by_value(const St *s, int j, int y0, int y1, int x0, int x1, uint32_t *pos, int start[257])
{
    const uint8_t *fr = s->frames[j];
    const ptrdiff_t stride = s->stride;
    /* (counted in two tables, even and odd columns: an increment does not
     * wait on the one before where neighbours share a value) */
    int c2[2][256];
    memset(c2, 0, sizeof(c2));
    for (int y = y0; y < y1; y++) {
        const uint8_t *r = fr + (ptrdiff_t)y * stride;
        int x = x0;
        for (; x + 1 < x1; x += 2) c2[0][r[x]]++, c2[1][r[x + 1]]++;
        if (x < x1) c2[0][r[x]]++;
    }
    start[0] = 0;
    for (int v = 0; v < 256; v++) start[v + 1] = start[v] + c2[0][v] + c2[1][v];
    int fill[256];
    memcpy(fill, start, sizeof(fill));
    for (int y = y0; y < y1; y++) {
        const uint8_t *r = fr + (ptrdiff_t)y * stride;
        const uint32_t yb = (uint32_t)y << 16;
        for (int x = x0; x < x1; x++) pos[fill[r[x]]++] = yb | (uint32_t)x;
    }
}

/* The first index in lo..hi - 1 of the ascending a whose entry is at
 * least key, or hi. */
static int first_at_least(const uint32_t *a, int lo, int hi, uint32_t key)
{
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (a[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Past position k of the ascending raster positions a[..hi) (y << 16 | x),
 * which lies outside the columns xa.. of its row y (x < xa, or past them):
 * the first at or past column xa of that row or of the next, by galloping
 * from k, then bisecting. */
static inline int skip_to_columns(const uint32_t *a, int k, int hi, int y, int x, int xa)
{
    const uint32_t key = x < xa ? (uint32_t)y << 16 | (uint32_t)xa : (uint32_t)(y + 1) << 16 | (uint32_t)xa;
    int step = 1, g = k + 1;
    while (g < hi && a[g] < key) k = g, g += step, step *= 2;
    return first_at_least(a, k + 1, g < hi ? g : hi, key);
}

/* A try of pose i at (py, px) that fits f pixels kept as the search's best
 * (*best, *bi, *bpy, *bpx) where it fits more, or as many of the same pose
 * at an earlier position in raster order. */
static inline void keep_fit(int f, int i, int py, int px, int *best, int *bi, int *bpy, int *bpx)
{
    if (f > *best || (f == *best && *bi == i && (py < *bpy || (py == *bpy && px < *bpx))))
        *best = f, *bi = i, *bpy = py, *bpx = px;
}

/* The tries of an interior blob's search (tol 0) from its painted
 * positions occ[k0 ..] in rows up to ylast and columns xa .. xb: those
 * of try_place() for a box wholly in the sprites' area with painted
 * pixels (the shifts of an interior blob keep the pose's box in the
 * blob's), in a loop of their own, which keeps its state in registers.
 * Returns the work (pixels tested); the best fit as in the search. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static long occ_tries(St *s, const PnmfSpritePose *ps, const PoseTests *pt, int i, int j, int k0, int nocc, int ylast,
                      int xa, int xb, int ay, int ax, int *best, int *bi, int *bpy, int *bpx)
{
    const uint32_t *occ = s->occ;
    const TestPix *ord = pt->ord;
    const uint8_t *fr = s->frames[j], *mine = s->mine;
    const int w = s->w, np = ps->npix, off0 = ord[0].off, v0 = ord[0].v;
    long work = 0;
    for (int k = k0; k < nocc; k++) {
        const int y = (int)(occ[k] >> 16), x = (int)(occ[k] & 0xFFFF);
        if (y > ylast) break;
        if (x < xa || x > xb) continue;
        const int py = y - ay, px = x - ax;
        const ptrdiff_t o = (ptrdiff_t)py * w + px;
        const uint8_t *f0 = fr + o, *c0 = mine + o;
        /* (most tries end at their first pixel) */
        if (f0[off0] != v0 && !c0[off0]) {
            work++;
            continue;
        }
        int t = 1;
        for (; t < np; t++)
            if (f0[ord[t].off] != ord[t].v && !c0[ord[t].off]) break;
        if (t < np) {
            work += t + 1;
            continue;
        }
        work += np;
        keep_fit(fit_inside(s, ps, ord, j, py, px, *best), i, py, px, best, bi, bpy, bpx);
    }
    return work;
}

/* The tries of the search (tol 0) from the positions bpos[k .. kend) of
 * the anchor's value, in rows up to ylast and columns xa .. xb (a position
 * left of them skips to the first column in the row, one right of them to
 * the next row: galloping, then bisecting), in a loop of their own, which
 * keeps its state in registers: a try whose box is in the sprites' area
 * and fails at its first pixel is made here, the others by try_place().
 * Returns the work (pixels tested); the best fit as in the search. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static long value_tries(St *s, const PnmfSpritePose *ps, const PoseTests *pt, const TryAt at, int i,
                        const uint32_t *bpos, int k, int kend, int ylast, int xa, int xb, int ay, int ax, int *best,
                        int *bi, int *bpy, int *bpx)
{
    const TestPix *ord = pt->ord;
    const uint8_t *fr = at.fr, *mine = at.mine;
    const int w = at.w, off0 = ord[0].off, v0 = ord[0].v, painted = at.painted;
    long work = 0;
    while (k < kend) {
        const uint32_t e = bpos[k];
        const int y = (int)(e >> 16), x = (int)(e & 0xFFFF);
        if (y > ylast) break;
        if (x >= xa && x <= xb) {
            k++;
            const int py = y - ay, px = x - ax;
            if (py >= at.y0 && px >= at.x0 && py <= at.y1 && px <= at.x1) {
                const ptrdiff_t q = (ptrdiff_t)py * w + px + off0;
                if (fr[q] != v0 && (!painted || !mine[q])) {
                    work++;
                    continue;
                }
            }
            keep_fit(try_place(s, ps, pt, at, py, px, *best, &work), i, py, px, best, bi, bpy, bpx);
            continue;
        }
        k = skip_to_columns(bpos, k, kend, y, x, xa);
    }
    return work;
}

/* Explain one blob. */
static int explain_blob(St *s, const Blob *b, uint8_t *pix, uint8_t *mask)
{
    const int j = b->frame, w = s->w, h = s->h;
    const PnmfSpriteParams *p = s->p;
    PnmfSpriteDict *d = s->d;
    int by, bx, bh, bw;
    s->ncand = 0;
    for (int i = 0; i < s->nmq; i++) s->mine[s->mq[i]] = 0; /* the previous blob's */
    s->nmq = 0;
    if (b->edge && s->aleft) s->aleft[j]--;
    int left = crop_blob(s, b, pix, mask, &by, &bx, &bh, &bw);
    if (!left) return 0;
    const uint64_t hash = pnmf_sprite_hash(bw, bh, pix, mask);
    int id = find_hash(d, bw, bh, pix, mask, hash);
    if (id >= 0) {
        PNMF_CHECK(push_place(s, id, by, bx));
        mark(s, &d->pose[id], j, by, bx);
        s->out->hash_hits++;
        return commit_places(s, j);
    }
    PNMF_CHECK(near_match(s, b, by, bx, bh, bw, left));
    /* Greedy: the known pose that explains the most, placed, until none
     * fits. Inside the frame, every mask pixel of a fitting pose is in the
     * blob (shown, or under a pose in front that is), so its box lies in
     * the blob's. A blob at the frame edge may be a clipped view: the pose
     * may then stick out of the box on any side, as long as it overlaps it.
     * Shifts are enumerated from a pose's anchor pixels: a fitting pose
     * puts each on a pixel of its value, on a pixel a placement in front
     * paints, or outside the frame. */
    const int edge = by == s->ay0 || bx == s->ax0 || by + bh == s->ay1 || bx + bw == s->ax1;
    int mh = 1, mw = 1;
    if (edge)
        for (int i = 0; i < d->count; i++) {
            if (d->pose[i].h > mh) mh = d->pose[i].h;
            if (d->pose[i].w > mw) mw = d->pose[i].w;
        }
    const int ry0 = by - mh + 1 < s->ay0 ? s->ay0 : by - mh + 1;
    const int ry1 = by + bh + mh - 1 > s->ay1 ? s->ay1 : by + bh + mh - 1;
    const int rx0 = bx - mw + 1 < s->ax0 ? s->ax0 : bx - mw + 1;
    const int rx1 = bx + bw + mw - 1 > s->ax1 ? s->ax1 : bx + bw + mw - 1;
    /* the region's positions by value: an interior blob's own; an edge
     * blob's region spans most of the sprites' area (the largest pose
     * around its box), so where its frame has more edge blobs it reads
     * those of the whole area, made once for them (freed after the
     * last). They hold the region's positions in the same raster order,
     * and a try from one outside the region is out of every pose's range
     * of shifts (the rows and columns enumerated skip it): the same tries
     * in the same order. */
    const uint32_t *bpos = s->bpos;
    const int *bstart = s->bstart;
    const int shared = edge && !p->own_regions && s->aleft && s->aleft[j] > 0; /* more edge blobs of j to come */
    if (shared || (edge && s->apos && s->apos[j])) {
        if (!s->apos) {
            s->apos = pnmf_calloc((size_t)s->m, sizeof(*s->apos));
            s->astart = pnmf_malloc_array((size_t)s->m, sizeof(*s->astart));
            if (!s->apos || !s->astart) return PNMF_ERR_NOMEM;
        }
        if (!s->apos[j]) {
            const size_t area = (size_t)(s->ay1 - s->ay0) * (s->ax1 - s->ax0);
            if (!(s->apos[j] = pnmf_malloc_array(area ? area : 1, sizeof(uint32_t)))) return PNMF_ERR_NOMEM;
            by_value(s, j, s->ay0, s->ay1, s->ax0, s->ax1, s->apos[j], s->astart[j]);
        }
        bpos = s->apos[j], bstart = s->astart[j];
    } else {
        by_value(s, j, ry0, ry1, rx0, rx1, s->bpos, s->bstart);
    }
    /* an interior blob's anchors depend on the pose and the region's
     * values alone: chosen at a pose's first try, kept for the blob's
     * later steps (no pose is added during them) */
    if (!edge) {
        if (s->nanc1 < d->count) {
            int *a = pnmf_realloc(s->anc1, sizeof(int) * (size_t)d->count);
            if (!a) return PNMF_ERR_NOMEM;
            s->anc1 = a, s->nanc1 = d->count;
        }
        for (int i = 0; i < d->count; i++) s->anc1[i] = -1;
    }
    const uint8_t *mine = s->mine;
    /* the search's work (pixels tested) is bounded per blob pixel; past
     * the bound the greedy stops where it is */
    const long budget = (long)p->budget * b->npix;
    long work = 0;
    for (; work < budget;) {
        int best = 0, bi = -1, bpy = 0, bpx = 0, nocc = 0;
        s->uy0 = ry0, s->ux0 = rx0, s->uw = rx1 - rx0, s->uh = ry1 - ry0, s->uj = j, s->uok = 0;
        s->usum = 0;
        /* only a placement of this blob (each made with push_place())
         * paints in mine: none yet, nothing to list */
        if (s->ncand)
            for (int y = ry0; y < ry1; y++)
                for (int x = rx0; x < rx1; x++) {
                    const int q = y * w + x;
                    if (mine[q]) s->occ[nocc++] = (uint32_t)y << 16 | (uint32_t)x;
                }
        for (int i = 0; i < d->count && work < budget; i++) {
            const PnmfSpritePose *ps = &d->pose[i];
            if (ps->npix < p->min_match) continue;
            const int ylo = edge ? by - ps->h + 1 : by, yhi = edge ? by + bh - 1 : by + bh - ps->h;
            const int xlo = edge ? bx - ps->w + 1 : bx, xhi = edge ? bx + bw - 1 : bx + bw - ps->w;
            if (ylo > yhi || xlo > xhi) continue;
            /* Interior blob: one anchor, of up to ANCHOR_TRIES mask pixels
             * spread over the pose the one whose value is rarest in the
             * region. Edge blob: the anchor may be cut off, so each of the
             * pose's 8 extreme pixels (largest y, -y, x, -x, y+x, y-x, x-y,
             * -y-x) is an anchor in turn; a view so thin that none of them
             * is in the frame is not searched. */
            const PoseTests *pt = pose_tests(s, i);
            if (!pt) return PNMF_ERR_NOMEM;
            /* (the search reads frames whose rows are w apart) */
            const TryAt at = { s->frames[j], mine, w, j, p->tol, nocc > 0,
                               s->ay0, s->ay1 - ps->h, s->ax0, s->ax1 - ps->w };
            int anc[8], na = 0;
            if (!edge) {
                if (s->anc1[i] < 0) {
                    int an = -1, aq = 0;
                    for (int t = 0; t < ANCHOR_TRIES && t < ps->npix; t++) {
                        const int q =
                            (int)(((long long)t * ps->npix) / (ANCHOR_TRIES < ps->npix ? ANCHOR_TRIES : ps->npix));
                        const int qy = (int)(ps->list[q] >> 16), qx = (int)(ps->list[q] & 0xFFFF);
                        const int qv = ps->pix[qy * ps->w + qx];
                        const int lo = qv - p->tol < 0 ? 0 : qv - p->tol, hi = qv + p->tol > 255 ? 255 : qv + p->tol;
                        const int c = bstart[hi + 1] - bstart[lo];
                        if (an < 0 || c < an) an = c, aq = q;
                    }
                    s->anc1[i] = aq;
                }
                anc[0] = s->anc1[i], na = 1;
            } else {
                na = pt->na;
                memcpy(anc, pt->anc, sizeof(anc));
            }
            /* a try of a shift in range (klo, ylast, xa and xb keep the
             * positions enumerated below there) */
#define TRY_IN(PY, PX) do { \
                const int py_ = (PY), px_ = (PX); \
                keep_fit(try_place(s, ps, pt, at, py_, px_, best, &work), i, py_, px_, &best, &bi, &bpy, &bpx); \
            } while (0)
            for (int a = 0; a < na; a++) {
                const int ay = (int)(ps->list[anc[a]] >> 16), ax = (int)(ps->list[anc[a]] & 0xFFFF);
                const int av = ps->pix[ay * ps->w + ax];
                const int v0 = av - p->tol < 0 ? 0 : av - p->tol, v1 = av + p->tol > 255 ? 255 : av + p->tol;
                /* each value's positions are in raster order: only the
                 * rows that put the pose in range */
                const uint32_t klo = (uint32_t)(ylo + ay < 0 ? 0 : ylo + ay) << 16;
                const int ylast = yhi + ay;
                /* and in a row, only the columns that do: a position left
                 * of them skips to the first column in the row, one right
                 * of them to the next row (galloping, then bisecting) */
                const int xa = xlo + ax < 0 ? 0 : xlo + ax, xb = xhi + ax;
                if (!p->tol)
                    work += value_tries(s, ps, pt, at, i, bpos, first_at_least(bpos, bstart[av], bstart[av + 1], klo),
                                        bstart[av + 1], ylast, xa, xb, ay, ax, &best, &bi, &bpy, &bpx);
                for (int v = v0; v <= v1 && p->tol; v++) {
                    const int kend = bstart[v + 1];
                    for (int k = first_at_least(bpos, bstart[v], kend, klo); k < kend;) {
                        const uint32_t e = bpos[k];
                        const int y = (int)(e >> 16), x = (int)(e & 0xFFFF);
                        if (y > ylast) break;
                        if (x >= xa && x <= xb) {
                            TRY_IN(y - ay, x - ax);
                            k++;
                            continue;
                        }
                        k = skip_to_columns(bpos, k, kend, y, x, xa);
                    }
                }
                /* the painted pixels are in raster order too (those in
                 * the columns in range: a try in range) */
                if (!edge && !p->tol) {
                    work += occ_tries(s, ps, pt, i, j, first_at_least(s->occ, 0, nocc, klo), nocc, ylast, xa, xb, ay,
                                      ax, &best, &bi, &bpy, &bpx);
                    continue;
                }
                for (int k = first_at_least(s->occ, 0, nocc, klo); k < nocc && (int)(s->occ[k] >> 16) <= ylast; k++) {
                    const int x = (int)(s->occ[k] & 0xFFFF);
                    if (x >= xa && x <= xb) TRY_IN((int)(s->occ[k] >> 16) - ay, x - ax);
                }
            }
#undef TRY_IN
        }
        if (bi < 0) break;
        PNMF_CHECK(push_place(s, bi, bpy, bpx));
        mark(s, &d->pose[bi], j, bpy, bpx);
        left -= best;
        if (left <= 0) break;
    }
    if (s->apos && s->apos[j] && !s->aleft[j]) pnmf_freep(&s->apos[j]); /* the frame's last edge blob */
    int rest = 0;
    const uint8_t *fgj = s->fg + (size_t)j * w * h; /* (cleared where mark() covers, as in crop_blob()) */
    for (int i = 0; i < b->npix; i++) rest += fgj[s->pixels[b->start + i]];
    if (rest == 0 && s->ncand) {
        s->out->shift_hits++;
        return commit_places(s, j);
    }
    /* Known poses explain part of the blob: they stay (they are exact), and
     * the rest becomes a pose of its own unless it is too small to be one
     * (a few pixels off the background estimate), then it is left to the
     * residual layer. */
    const int some = s->ncand > 0;
    if (some) {
        s->out->partial++;
        PNMF_CHECK(commit_places(s, j));
    }
    /* the rest, in front of what explains the blob's other pixels: a known
     * pose whatever its size (a bubble over a fish), else a new one
     * (nothing placed: the rest is the whole blob, cropped and looked up
     * above, pix and mask as they are) */
    if (some) {
        left = crop_blob(s, b, pix, mask, &by, &bx, &bh, &bw);
        id = find_hash(d, bw, bh, pix, mask, pnmf_sprite_hash(bw, bh, pix, mask));
    }
    if (id >= 0) {
        PNMF_CHECK(push_place(s, id, by, bx));
        mark(s, &d->pose[id], j, by, bx);
        return commit_places(s, j);
    }
    if (some && rest < p->min_match) return 0;
    const int max_blob = p->max_blob_pixels > 0 ? p->max_blob_pixels : w * h / 4;
    if (left > max_blob || d->count >= p->max_poses || d->pixels + (size_t)bw * bh > p->max_pixels) {
        s->out->capped++;
        return 0;
    }
    const int cut = by == s->ay0 || bx == s->ax0 || by + bh == s->ay1 || bx + bw == s->ax1;
    id = add_pose(d, bw, bh, pix, mask, cut);
    if (id < 0) return id;
    PNMF_CHECK(push_place(s, id, by, bx));
    mark(s, &d->pose[id], j, by, bx);
    s->out->new_poses++;
    return commit_places(s, j);
}

/* Whether line k of the background (a row, or a column when col) is a
 * frame line: one value all along, foreground in no frame, and another
 * value in most of the next line inwards (step: +1 or -1), so a flat
 * background that runs to the edge is not one. */
static int frame_line(const St *s, const uint8_t *bg, int col, int k, int step)
{
    const int w = s->w, h = s->h, len = col ? h : w, n = col ? w : h;
    const int in = k + step;
    if (in < 0 || in >= n) return 0;
    const ptrdiff_t along = col ? w : 1, across = col ? 1 : w;
    const uint8_t *l = bg + k * across, *nl = bg + in * across;
    const int v = l[0];
    int other = 0;
    for (int i = 0; i < len; i++) {
        if (l[i * along] != v) return 0;
        other += nl[i * along] != v;
    }
    if (2 * other <= len) return 0;
    for (int j = 0; j < s->m; j++) {
        const uint8_t *fg = s->fg + (size_t)j * w * h + k * across;
        for (int i = 0; i < len; i++)
            if (fg[i * along]) return 0;
    }
    return 1;
}

/* The sprites' area: the frame less its frame lines, up to MAX_BORDER
 * thick on each side. Sprites that cross a frame line (a screen capture's
 * window border) pass under it: a blob at it is a clipped view, matched by
 * poses that stick out under the line, and the line is painted in front. */
static void border(St *s, const uint8_t *bg)
{
    /* (the area keeps 2 lines at least each way: a frame of a few flat
     * lines is no capture with a border) */
    s->ay0 = 0, s->ax0 = 0, s->ay1 = s->h, s->ax1 = s->w;
    while (s->ay0 < MAX_BORDER && s->ay1 - s->ay0 > 2 && frame_line(s, bg, 0, s->ay0, 1)) s->ay0++;
    while (s->h - s->ay1 < MAX_BORDER && s->ay1 - s->ay0 > 2 && frame_line(s, bg, 0, s->ay1 - 1, -1)) s->ay1--;
    while (s->ax0 < MAX_BORDER && s->ax1 - s->ax0 > 2 && frame_line(s, bg, 1, s->ax0, 1)) s->ax0++;
    while (s->w - s->ax1 < MAX_BORDER && s->ax1 - s->ax0 > 2 && frame_line(s, bg, 1, s->ax1 - 1, -1)) s->ax1--;
}

/* Each frame whose placements stick out under a side's frame lines gets
 * those lines as a pose placed in front: the top and bottom lines span the
 * frame's width, the left and right ones the rows between them. */
static int paint_lines(St *s, const uint8_t *bg, uint8_t *pix, uint8_t *mask)
{
    const int w = s->w, h = s->h;
    const int box[4][4] = { /* y, x, rows, columns of each side's lines */
        { 0, 0, s->ay0, w }, { s->ay1, 0, h - s->ay1, w },
        { s->ay0, 0, s->ay1 - s->ay0, s->ax0 }, { s->ay0, s->ax1, s->ay1 - s->ay0, w - s->ax1 } };
    int id[4] = { -1, -1, -1, -1 };
    for (int j = 0; j < s->m; j++) {
        PnmfSpriteFrame *f = &s->out->frame[j];
        int need[4] = { 0, 0, 0, 0 };
        for (int q = 0; q < f->count; q++) {
            const PnmfSpritePose *ps = &s->d->pose[f->place[q].pose];
            const int y = f->place[q].y, x = f->place[q].x;
            need[0] |= y < s->ay0, need[1] |= y + ps->h > s->ay1;
            need[2] |= x < s->ax0, need[3] |= x + ps->w > s->ax1;
        }
        s->ncand = 0;
        for (int e = 0; e < 4; e++) {
            const int by = box[e][0], bx = box[e][1], bh = box[e][2], bw = box[e][3];
            if (!need[e] || bh < 1 || bw < 1) continue;
            if (id[e] < 0) {
                for (int y = 0; y < bh; y++)
                    for (int x = 0; x < bw; x++) pix[y * bw + x] = bg[(by + y) * w + bx + x], mask[y * bw + x] = 1;
                id[e] = find_hash(s->d, bw, bh, pix, mask, pnmf_sprite_hash(bw, bh, pix, mask));
                if (id[e] < 0) {
                    if (s->d->count >= s->p->max_poses || s->d->pixels + (size_t)bw * bh > s->p->max_pixels)
                        continue;
                    if ((id[e] = add_pose(s->d, bw, bh, pix, mask, 0)) < 0) return id[e];
                    s->d->pose[id[e]].line = 1;
                }
            }
            /* the sides' lines do not overlap: their order is free */
            PNMF_CHECK(push_place(s, id[e], by, bx));
        }
        PNMF_CHECK(commit_places(s, j));
    }
    return 0;
}

static int u64_cmp(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}


/* A sized blob's near-duplicate signature: box size and the rounded mean
 * of its foreground values; id the blob's index, or nb + a known pose's. */
typedef struct NearKey {
    int h, w, mean, id;
} NearKey;

static int near_key_cmp(const void *a, const void *b)
{
    const NearKey *x = a, *y = b;
    if (x->h != y->h) return x->h - y->h;
    if (x->w != y->w) return x->w - y->w;
    if (x->mean != y->mean) return x->mean - y->mean;
    return x->id - y->id;
}

/* Whether blob b's box (of blob a's size) shows blob a within tol: the
 * pixels in the foreground of either, as the frames show them, differ by
 * at most tol in all but miss of them (a pixel near the foreground
 * threshold is foreground in one view only, and its values still agree). */
static int near_blobs(const St *s, const Blob *a, const Blob *b, int tol, int miss)
{
    const int w = s->w, bh = a->y1 - a->y0 + 1, bw = a->x1 - a->x0 + 1;
    const size_t n = (size_t)w * s->h;
    const uint8_t *fa = s->fg + (size_t)a->frame * n + (size_t)a->y0 * w + a->x0;
    const uint8_t *fb = s->fg + (size_t)b->frame * n + (size_t)b->y0 * w + b->x0;
    const uint8_t *va = s->frames[a->frame] + (ptrdiff_t)a->y0 * s->stride + a->x0;
    const uint8_t *vb = s->frames[b->frame] + (ptrdiff_t)b->y0 * s->stride + b->x0;
    for (int y = 0; y < bh; y++) {
        for (int x = 0; x < bw; x++)
            if ((fa[x] | fb[x]) && abs_i(va[x] - vb[x]) > tol && --miss < 0) return 0;
        fa += w, fb += w, va += s->stride, vb += s->stride;
    }
    return 1;
}

/* Whether blob a shows known pose ps (of its box size) within tol: each
 * mask pixel of the pose within tol of the frame, each foreground pixel of
 * the blob in the pose's mask, all but miss of them. */
static int near_pose(const St *s, const Blob *a, const PnmfSpritePose *ps, int tol, int miss)
{
    const int w = s->w;
    const uint8_t *fa = s->fg + (size_t)a->frame * w * s->h + (size_t)a->y0 * w + a->x0;
    const uint8_t *va = s->frames[a->frame] + (ptrdiff_t)a->y0 * s->stride + a->x0;
    const uint8_t *pm = ps->mask, *pv = ps->pix;
    for (int y = 0; y < ps->h; y++) {
        for (int x = 0; x < ps->w; x++)
            if ((pm[x] ? abs_i(va[x] - pv[x]) > tol : fa[x]) && --miss < 0) return 0;
        fa += w, va += s->stride, pm += ps->w, pv += ps->w;
    }
    return 1;
}

/* Whether blob b is textured: PNMF_SPRITE_NEAR_EDGE times its steps of more than
 * tol between neighbouring foreground pixels reach its pixel count (a
 * sprite's outlines and patterns; the step at the blob's border says
 * nothing, every blob has it). Its foreground values' sum goes to *sum. */
static int textured(const St *s, const Blob *b, int tol, long *sum)
{
    const int w = s->w, bh = b->y1 - b->y0 + 1, bw = b->x1 - b->x0 + 1;
    const uint8_t *fg = s->fg + (size_t)b->frame * w * s->h + (size_t)b->y0 * w + b->x0;
    const uint8_t *v = s->frames[b->frame] + (ptrdiff_t)b->y0 * s->stride + b->x0;
    long t = 0;
    int edges = 0;
    for (int y = 0; y < bh; y++) {
        for (int x = 0; x < bw; x++) {
            t += fg[x] ? v[x] : 0;
            if (x + 1 < bw && fg[x] && fg[x + 1] && abs_i(v[x] - v[x + 1]) > tol) edges++;
            if (y + 1 < bh && fg[x] && fg[x + w] && abs_i(v[x] - v[x + s->stride]) > tol) edges++;
        }
        fg += w, v += s->stride;
    }
    *sum = t;
    return edges * PNMF_SPRITE_NEAR_EDGE >= b->npix;
}

/* The near recurrences of a window searched within a tolerance: a sized,
 * textured blob not yet marked in rec recurs when another such blob at
 * another place, or a known pose, of its box size matches it within
 * PNMF_SPRITE_NEAR_TOL (near_blobs(), near_pose()). Candidates are the signatures
 * (box size, mean) next to its own in sorted order, means at most the
 * tolerance apart, PNMF_SPRITE_NEAR_TRIES of them at most. */
static int near_repeats(St *s, uint8_t *rec)
{
    const int nb = s->nblob, nd = s->d->count;
    const int tol = s->p->tol < PNMF_SPRITE_NEAR_TOL ? s->p->tol : PNMF_SPRITE_NEAR_TOL;
    NearKey *key = pnmf_malloc_array((size_t)(nb + nd) + 1, sizeof(NearKey));
    if (!key) return PNMF_ERR_NOMEM;
    int n = 0;
    for (int b = 0; b < nb; b++) {
        const Blob *bl = &s->blob[b];
        long sum;
        if (bl->npix < s->p->min_match || !textured(s, bl, s->p->tol, &sum)) continue;
        key[n++] = (NearKey){ bl->y1 - bl->y0 + 1, bl->x1 - bl->x0 + 1, (int)((sum + bl->npix / 2) / bl->npix), b };
    }
    for (int i = 0; i < nd; i++) {
        const PnmfSpritePose *ps = &s->d->pose[i];
        long sum = 0;
        for (int q = 0; q < ps->w * ps->h; q++) sum += ps->pix[q]; /* (0 outside the mask) */
        key[n++] = (NearKey){ ps->h, ps->w, (int)((sum + ps->npix / 2) / ps->npix), nb + i };
    }
    qsort(key, (size_t)n, sizeof(NearKey), near_key_cmp);
    for (int i = 0; i < n; i++) {
        const int b = key[i].id;
        if (b >= nb || rec[b]) continue;
        const Blob *a = &s->blob[b];
        const int miss = a->npix / PNMF_SPRITE_NEAR_MISS;
        int tries = 0;
        for (int dir = 1; !rec[b] && dir >= -1; dir -= 2)
            for (int j = i + dir; !rec[b] && j >= 0 && j < n && tries < PNMF_SPRITE_NEAR_TRIES; j += dir) {
                const NearKey *c = &key[j];
                if (c->h != key[i].h || c->w != key[i].w || abs_i(c->mean - key[i].mean) > tol) break;
                if (c->id < nb) {
                    /* (in place in another frame: a still object of filmed content matches too) */
                    const Blob *o = &s->blob[c->id];
                    if (o->y0 == a->y0 && o->x0 == a->x0) continue;
                    tries++;
                    if (near_blobs(s, a, o, tol, miss)) rec[b] = rec[c->id] = 1;
                } else {
                    tries++;
                    rec[b] = (uint8_t)near_pose(s, a, &s->d->pose[c->id - nb], tol, miss);
                }
            }
    }
    pnmf_free(key);
    return 0;
}

/* Of the window's blobs of min_match pixels or more (*sized), those whose
 * pixels (cropped, masked) equal another blob's or a known pose's, by hash:
 * in sprite animation a pose shows whole in several frames (on the
 * development set's sprite clips half of such blobs or more recur); in
 * rendered or filmed content almost none does (under a fifth), while
 * smaller blobs (a few pixels of noise) recur by chance in both. A cost
 * of one hash per foreground pixel, before the pose search.
 * Searched within a tolerance, a window's sprites carry coding noise and
 * seldom recur exactly: their near recurrences count too (near_repeats()),
 * those of textured blobs at another place, which filmed content (smooth
 * blobs, objects that stay put) and rendered motion (edges resampled at
 * each sub-pixel position) seldom show. */
static int repeat_blobs(St *s, uint8_t *pix, uint8_t *mask, int *sized)
{
    *sized = 0;
    const int nb = s->nblob, nd = s->d->count;
    uint64_t *key = pnmf_malloc_array((size_t)(2 * nb + nd) + 1, sizeof(uint64_t));
    uint8_t *rec = pnmf_calloc((size_t)nb + 1, 1);
    if (!key || !rec) {
        pnmf_free(key), pnmf_free(rec);
        return PNMF_ERR_NOMEM;
    }
    uint64_t *bh = key + nb + nd;
    for (int b = 0; b < nb; b++) {
        int by, bx, hh, ww;
        crop_blob(s, &s->blob[b], pix, mask, &by, &bx, &hh, &ww);
        key[b] = bh[b] = pnmf_sprite_hash(ww, hh, pix, mask);
    }
    for (int i = 0; i < nd; i++) key[nb + i] = s->d->pose[i].hash;
    qsort(key, (size_t)(nb + nd), sizeof(uint64_t), u64_cmp);
    for (int b = 0; b < nb; b++) {
        /* the first key not below the blob's, and whether the next equals it too */
        int lo = 0, hi = nb + nd;
        while (lo < hi) {
            const int mid = lo + (hi - lo) / 2;
            if (key[mid] < bh[b]) lo = mid + 1;
            else hi = mid;
        }
        rec[b] = lo + 1 < nb + nd && key[lo + 1] == bh[b];
    }
    pnmf_free(key);
    int ret = s->p->tol > 0 ? near_repeats(s, rec) : 0;
    int rep = 0;
    for (int b = 0; b < nb; b++)
        if (s->blob[b].npix >= s->p->min_match) rep += rec[b], (*sized)++;
    pnmf_free(rec);
    return ret < 0 ? ret : rep;
}

int pnmf_sprite_find(PnmfSpriteDict *d, const PnmfSpriteParams *p, const uint8_t *const *frames,
                     ptrdiff_t stride, int w, int h, int m, PnmfSpriteWindow *out)
{
    memset(out, 0, sizeof(*out));
    if (w < 1 || h < 1 || m < 1 || w > 0xFFFF || h > 0xFFFF || stride < w || p->tol < 0 ||
        p->dilate < 0)
        return PNMF_ERR_ARG;
    const size_t n = (size_t)w * h;
    St s;
    memset(&s, 0, sizeof(s));
    s.p = p, s.d = d, s.frames = frames, s.stride = stride, s.w = w, s.h = h, s.m = m, s.out = out;
    out->width = w, out->height = h, out->frames = m;
    out->bg = pnmf_malloc(n);
    out->frame = pnmf_calloc((size_t)m, sizeof(PnmfSpriteFrame));
    s.fcap = pnmf_calloc((size_t)m, sizeof(int));
    s.fg = pnmf_malloc_array((size_t)m, n);
    s.cover = pnmf_calloc((size_t)m, n);
    s.mine = pnmf_calloc(n, 1);
    s.mq = pnmf_malloc_array(n, sizeof(int32_t));
    int32_t *lab = pnmf_malloc_array(n, sizeof(int32_t));
    int32_t *stack = pnmf_malloc_array(n, sizeof(int32_t));
    uint8_t *dil = pnmf_malloc_array(n, 2);
    uint8_t *pix = pnmf_malloc(n), *mask = pnmf_malloc(n);
    s.bpos = pnmf_malloc_array(n, sizeof(uint32_t));
    s.occ = pnmf_malloc_array(n, sizeof(uint32_t));
    s.unexp = pnmf_malloc_array((size_t)(w + 1) * (h + 1), sizeof(int32_t));
    /* the tests address frames and planes by one offset: frames whose
     * rows are not w apart are read from a copy whose rows are */
    uint8_t *packed = NULL;
    const uint8_t **pframes = NULL;
    if (stride != w) {
        packed = pnmf_malloc_array((size_t)m, n);
        pframes = pnmf_malloc_array((size_t)m, sizeof(*pframes));
        if (packed && pframes) {
            for (int j = 0; j < m; j++) {
                pframes[j] = packed + (size_t)j * n;
                for (int y = 0; y < h; y++) memcpy(packed + (size_t)j * n + (size_t)y * w, frames[j] + (ptrdiff_t)y * stride, (size_t)w);
            }
            s.frames = pframes, s.stride = w;
        }
    }
    int ret = PNMF_ERR_NOMEM, ablob = 0;
    if (!out->bg || !out->frame || !s.fcap || !s.fg || !s.cover || !s.mine || !s.mq || !lab || !stack || !dil || !pix ||
        !mask || !s.bpos || !s.occ || !s.unexp || (stride != w && (!packed || !pframes)))
        goto end;

    pnmf_sprite_background(frames, stride, w, h, m, out->bg);
    size_t nfg = 0;
    for (int j = 0; j < m; j++) {
        uint8_t *fg = s.fg + (size_t)j * n;
        int c = 0;
        /* (byte differences: a loop the compiler vectorizes; no byte
         * difference passes a tol of 255 or more) */
        const uint8_t tol = (uint8_t)(p->tol < 255 ? p->tol : 255);
        for (int y = 0; y < h; y++) {
            const uint8_t *fr = frames[j] + (ptrdiff_t)y * stride, *bg = out->bg + (size_t)y * w;
            uint8_t *o = fg + (size_t)y * w;
            uint32_t rc = 0;
            for (int x = 0; x < w; x++) {
                const uint8_t dd = (uint8_t)(fr[x] > bg[x] ? fr[x] - bg[x] : bg[x] - fr[x]);
                const uint8_t v = dd > tol;
                o[x] = v;
                rc += v;
            }
            c += (int)rc;
        }
        out->frame[j].fg_pixels = c;
        nfg += (size_t)c;
    }
    s.pixels = pnmf_malloc_array(nfg ? nfg : 1, sizeof(int32_t));
    if (!s.pixels) goto end;
    border(&s, out->bg);
    size_t at = 0;
    for (int j = 0; j < m; j++)
        if ((ret = find_blobs(&s, j, lab, dil, stack, &at, &ablob)) < 0) goto end;
    out->blobs = s.nblob;
    if (p->min_repeat > 0) {
        int sized;
        if ((ret = repeat_blobs(&s, pix, mask, &sized)) < 0) goto end;
        out->repeats = ret, out->sized = sized;
        /* not sprite animation: no pose is looked for */
        out->skipped = sized >= p->repeat_blobs && ret < p->min_repeat * sized;
    }
    if (out->skipped) goto done;
    if (s.nblob) qsort(s.blob, (size_t)s.nblob, sizeof(Blob), blob_cmp);
    /* each frame's edge blobs, whose searches share their frame's
     * positions by value (explain_blob()) */
    if (s.nblob && s.blob[s.nblob - 1].edge) {
        if (!(s.aleft = pnmf_calloc((size_t)m, sizeof(int)))) goto end;
        for (int b = 0; b < s.nblob; b++) s.aleft[s.blob[b].frame] += s.blob[b].edge;
    }
    for (int b = 0; b < s.nblob; b++)
        if ((ret = explain_blob(&s, &s.blob[b], pix, mask)) < 0) goto end;
    if ((s.ay0 || s.ax0 || s.ay1 < h || s.ax1 < w) && (ret = paint_lines(&s, out->bg, pix, mask)) < 0) goto end;
    for (int j = 0; j < m; j++) {
        const uint8_t *fg = s.fg + (size_t)j * n;
        int u = 0;
        for (size_t i = 0; i < n; i++) u += fg[i]; /* (no branch: vectorized) */
        out->frame[j].unexplained = u;
    }
done:
    d->windows++;
    ret = 0;
end:
    pnmf_free(s.fcap), pnmf_free(s.fg), pnmf_free(s.cover), pnmf_free(s.mine), pnmf_free(s.mq);
    pnmf_free(s.pixels), pnmf_free(s.blob);
    pnmf_free(s.cand), pnmf_free(s.bpos), pnmf_free(s.occ), pnmf_free(s.unexp), pnmf_free(s.anc1);
    for (int j = 0; s.apos && j < m; j++) pnmf_free(s.apos[j]);
    pnmf_free(s.apos), pnmf_free(s.astart), pnmf_free(s.aleft);
    for (int i = 0; i < s.ntests; i++) pnmf_free(s.tests[i].ord), pnmf_free(s.tests[i].yx);
    pnmf_free(s.tests);
    pnmf_free(packed), pnmf_free(pframes);
    pnmf_free(lab), pnmf_free(stack), pnmf_free(dil), pnmf_free(pix), pnmf_free(mask);
    if (ret < 0) pnmf_sprite_window_free(out);
    return ret;
}
