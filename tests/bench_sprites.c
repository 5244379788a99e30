/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench-sprites: sprite discovery (sprite_find.h) on real clips. For each
 * clip, in windows of N frames with one dictionary across the windows, it
 * prints:
 *   - poses in the dictionary, placements and foreground pixels per frame;
 *   - the share of foreground pixels the placements paint exactly, and the
 *     share painted by poses placed at least twice (reuse: what a
 *     dictionary saves over coding each sprite where it appears);
 *   - the poses' bytes raw (2+2 bytes of size, the mask as bits, one byte
 *     per opaque pixel) and as one zstd frame at level 19;
 *   - the discovery time per frame;
 *   - 8x8 blocks predicted exactly by the composite (background + placed
 *     poses) against the previous frame unmoved, over all blocks, the
 *     blocks with foreground, and the blocks that differ from the
 *     previous frame (those the residual layer pays for).
 * A benchmark that prints figures, not a test: nothing here asserts.
 *
 * usage: bench-sprites [-w N] [-t TOL] CLIP...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "entropy.h"
#include "input/demuxer.h"
#include "internal.h"
#include "sprite_find.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int read_clip(const char *path, uint8_t **frames, int *w, int *h, int *m)
{
    PnmfInputInfo info;
    char err[256];
    PnmfInput *in = pnmf_input_open(path, &info, err, sizeof(err));
    if (!in) { fprintf(stderr, "%s: %s\n", path, err); return -1; }
    *w = info.width, *h = info.height, *m = 0;
    size_t n = (size_t)*w * *h, cap = 0;
    uint8_t *buf = NULL;
    for (;;) {
        if ((size_t)*m == cap) {
            cap = cap ? 2 * cap : 64;
            uint8_t *nb = realloc(buf, cap * n);
            if (!nb) { free(buf); pnmf_input_close(&in); return -1; }
            buf = nb;
        }
        const int r = pnmf_input_read(in, buf + (size_t)*m * n, *w, err, sizeof(err));
        if (r < 0) { fprintf(stderr, "%s: %s\n", path, err); free(buf); pnmf_input_close(&in); return -1; }
        if (r == 0) break;
        (*m)++;
    }
    pnmf_input_close(&in);
    *frames = buf;
    return 0;
}

typedef struct Tally {
    long frames, places, fg, painted, reused, blocks[3], comp[3], prev[3], either[3];
    double secs;
} Tally;

static void block_stats(Tally *t, const uint8_t *cur, const uint8_t *prev, const uint8_t *comp,
                        const uint8_t *bg, int w, int h)
{
    for (int by = 0; by + 8 <= h; by += 8)
        for (int bx = 0; bx + 8 <= w; bx += 8) {
            int c = 1, p = 1, fg = 0;
            for (int y = by; y < by + 8; y++)
                for (int x = bx; x < bx + 8; x++) {
                    const int q = y * w + x;
                    c &= comp[q] == cur[q];
                    p &= prev[q] == cur[q];
                    fg |= cur[q] != bg[q];
                }
            const int cls[3] = { 1, fg, !p };
            for (int k = 0; k < 3; k++)
                if (cls[k]) t->blocks[k]++, t->comp[k] += c, t->prev[k] += p, t->either[k] += c | p;
        }
}

static int bench(const char *path, int win, int tol)
{
    uint8_t *frames;
    int w, h, m;
    if (read_clip(path, &frames, &w, &h, &m) < 0) return 1;
    const size_t n = (size_t)w * h;
    PnmfSpriteParams p;
    pnmf_sprite_params_default(&p);
    p.tol = tol;
    PnmfSpriteDict d;
    pnmf_sprite_dict_init(&d);
    Tally t;
    memset(&t, 0, sizeof(t));
    uint8_t *comp = malloc(n);
    int32_t *owner = malloc(n * sizeof(int32_t));
    const uint8_t **fp = malloc(sizeof(*fp) * (size_t)m);
    PnmfSpriteWindow *wins = calloc((size_t)(m + win - 1) / win, sizeof(*wins));
    int nwin = 0, blobs = 0, hash = 0, shift = 0, partial = 0, capped = 0;
    printf("%s: %dx%d, %d frames, windows of %d, tol %d\n", path, w, h, m, win, tol);
    for (int j0 = 0; j0 < m; j0 += win) {
        const int len = m - j0 < win ? m - j0 : win;
        for (int j = 0; j < len; j++) fp[j] = frames + (size_t)(j0 + j) * n;
        const int before = d.count;
        const double t0 = now();
        if (pnmf_sprite_find(&d, &p, fp, w, w, h, len, &wins[nwin]) < 0) { fprintf(stderr, "failed\n"); return 1; }
        t.secs += now() - t0;
        PnmfSpriteWindow *sw = &wins[nwin++];
        printf("  window %d: %d new poses (%d in all), blobs %d: %d by hash, %d by shift, %d in part, "
               "%d new, %d left\n", nwin - 1, d.count - before, d.count, sw->blobs, sw->hash_hits,
               sw->shift_hits, sw->partial, sw->new_poses, sw->capped);
        blobs += sw->blobs, hash += sw->hash_hits, shift += sw->shift_hits, partial += sw->partial;
        capped += sw->capped;
    }
    /* per frame, once the dictionary is final (uses counted over the clip) */
    for (int k = 0; k < nwin; k++) {
        const PnmfSpriteWindow *sw = &wins[k];
        for (int j = 0; j < sw->frames; j++) {
            const int jj = k * win + j;
            const uint8_t *cur = frames + (size_t)jj * n;
            const PnmfSpriteFrame *f = &sw->frame[j];
            pnmf_sprite_composite(&d, sw->bg, w, h, f, comp);
            for (size_t i = 0; i < n; i++) owner[i] = -1;
            for (int e = 0; e < f->count; e++) {
                const PnmfSpritePose *ps = &d.pose[f->place[e].pose];
                for (int i = 0; i < ps->npix; i++) {
                    const int y = f->place[e].y + (int)(ps->list[i] >> 16);
                    const int x = f->place[e].x + (int)(ps->list[i] & 0xFFFF);
                    if (y >= 0 && y < h && x >= 0 && x < w) owner[y * w + x] = f->place[e].pose;
                }
            }
            for (size_t i = 0; i < n; i++)
                if (cur[i] != sw->bg[i]) {
                    t.fg++;
                    if (owner[i] >= 0 && comp[i] == cur[i]) {
                        t.painted++;
                        t.reused += d.pose[owner[i]].uses >= 2;
                    }
                }
            t.frames++;
            t.places += f->count;
            if (jj > 0) block_stats(&t, cur, cur - n, comp, sw->bg, w, h);
        }
    }
    /* the poses as bytes: size, mask bits, opaque pixels */
    size_t raw = 0;
    for (int i = 0; i < d.count; i++) raw += 4 + ((size_t)d.pose[i].w * d.pose[i].h + 7) / 8 + d.pose[i].npix;
    uint8_t *ser = malloc(raw ? raw : 1), *z = NULL;
    size_t at = 0, zs = 0;
    for (int i = 0; i < d.count; i++) {
        const PnmfSpritePose *ps = &d.pose[i];
        ser[at++] = (uint8_t)ps->w, ser[at++] = (uint8_t)(ps->w >> 8);
        ser[at++] = (uint8_t)ps->h, ser[at++] = (uint8_t)(ps->h >> 8);
        const size_t bits = (size_t)ps->w * ps->h;
        memset(ser + at, 0, (bits + 7) / 8);
        for (size_t b = 0; b < bits; b++) ser[at + b / 8] |= (uint8_t)(ps->mask[b] << (b % 8));
        at += (bits + 7) / 8;
        for (int k = 0; k < ps->npix; k++)
            ser[at++] = ps->pix[(ps->list[k] >> 16) * ps->w + (ps->list[k] & 0xFFFF)];
    }
    if (pnmf_entropy_compress(ser, at, 19, &z, &zs) < 0) zs = 0;
    long once = 0;
    for (int i = 0; i < d.count; i++) once += d.pose[i].uses == 1;
    const char *cls[3] = { "all", "with foreground", "changed from previous" };
    printf("  poses %d (%ld placed once), placements/frame %.2f, foreground px/frame %.0f\n", d.count,
           once, (double)t.places / t.frames, (double)t.fg / t.frames);
    printf("  blobs %d: %d by hash, %d by shift, %d in part, %d left unexplained\n", blobs, hash, shift,
           partial, capped);
    printf("  foreground painted exactly %.1f %%, by poses placed twice or more %.1f %%\n",
           100.0 * t.painted / (t.fg ? t.fg : 1), 100.0 * t.reused / (t.fg ? t.fg : 1));
    printf("  poses: %zu bytes raw, %zu zstd-19\n", raw, zs);
    printf("  discovery %.2f ms/frame\n", 1000 * t.secs / t.frames);
    for (int k = 0; k < 3; k++)
        printf("  8x8 blocks %-22s %6ld: exact by composite %5.1f %%, by previous frame %5.1f %%, "
               "by either %5.1f %%\n", cls[k], t.blocks[k], 100.0 * t.comp[k] / (t.blocks[k] ? t.blocks[k] : 1),
               100.0 * t.prev[k] / (t.blocks[k] ? t.blocks[k] : 1),
               100.0 * t.either[k] / (t.blocks[k] ? t.blocks[k] : 1));
    if (getenv("BENCH_SPRITES_DUMP")) {
        for (int i = 0; i < d.count; i++)
            printf("  pose %d: %dx%d, %d px, %ld uses, edge %d, windows %d..%d\n", i, d.pose[i].w,
                   d.pose[i].h, d.pose[i].npix, d.pose[i].uses, d.pose[i].edge, d.pose[i].first_window,
                   d.pose[i].last_window);
        /* a mosaic of the poses, transparent pixels mid-gray, as PGM on stdout's side */
        if (getenv("BENCH_SPRITES_PGM")) {
            const int MW = 640, pad = 2;
            int x = 0, y = 0, rowh = 0;
            for (int i = 0; i < d.count; i++) {
                if (x + d.pose[i].w > MW) x = 0, y += rowh + pad, rowh = 0;
                x += d.pose[i].w + pad;
                if (d.pose[i].h > rowh) rowh = d.pose[i].h;
            }
            const int MH = y + rowh;
            uint8_t *img = malloc((size_t)MW * MH);
            memset(img, 128, (size_t)MW * MH);
            x = 0, y = 0, rowh = 0;
            for (int i = 0; i < d.count; i++) {
                const PnmfSpritePose *ps = &d.pose[i];
                if (x + ps->w > MW) x = 0, y += rowh + pad, rowh = 0;
                for (int yy = 0; yy < ps->h; yy++)
                    for (int xx = 0; xx < ps->w; xx++)
                        if (ps->mask[yy * ps->w + xx]) img[(y + yy) * MW + x + xx] = ps->pix[yy * ps->w + xx];
                x += ps->w + pad;
                if (ps->h > rowh) rowh = ps->h;
            }
            FILE *fo = fopen(getenv("BENCH_SPRITES_PGM"), "wb");
            if (fo) fprintf(fo, "P5\n%d %d\n255\n", MW, MH), fwrite(img, 1, (size_t)MW * MH, fo), fclose(fo);
            free(img);
        }
        const int j = atoi(getenv("BENCH_SPRITES_DUMP"));
        const PnmfSpriteFrame *f = &wins[j / win].frame[j % win];
        for (int e = 0; e < f->count; e++)
            printf("  frame %d: pose %d at (%d,%d)\n", j, f->place[e].pose, f->place[e].y, f->place[e].x);
    }
    for (int k = 0; k < nwin; k++) pnmf_sprite_window_free(&wins[k]);
    pnmf_sprite_dict_free(&d);
    pnmf_free(z);
    free(ser), free(wins), free(fp), free(owner), free(comp), free(frames);
    return 0;
}

int main(int argc, char **argv)
{
    int win = 60, tol = 0, rc = 0, a = 1;
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (; a + 1 < argc && argv[a][0] == '-'; a += 2) {
        if (!strcmp(argv[a], "-w")) win = atoi(argv[a + 1]);
        else if (!strcmp(argv[a], "-t")) tol = atoi(argv[a + 1]);
        else break;
    }
    if (a >= argc || win < 1 || tol < 0) {
        fprintf(stderr, "usage: bench-sprites [-w N] [-t TOL] CLIP...\n");
        return 2;
    }
    for (; a < argc; a++) rc |= bench(argv[a], win, tol);
    return rc;
}
