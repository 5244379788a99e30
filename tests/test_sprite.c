/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sprite layer (sprite.h, docs/format.md "Sprite layer"): the
 * composite and the background against their per-pixel definitions, the
 * dictionary's rules (key windows, cut pixels, refusals), and the payload's
 * sprite section written and read back, hostile values refused; the
 * context-coded masks' contexts against their definition, their stream
 * written and read back, damaged streams and references refused; random
 * tracks of placements through both layouts of the placements, and
 * crafted placement streams refused.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model.h"
#include "model_write.h"
#include "rangecoder_enc.h"
#include "sprite.h"
#include "test.h"
#include "varint.h"

static void put_rc_test(void *enc, RcProb *p, int bit)
{
    if (p) rc_encode(enc, p, bit);
    else rc_encode_direct(enc, bit);
}

static unsigned rs = 4242;
static int urn(int n) { rs = rs * 1103515245u + 12345u; return (int)(((rs >> 8) & 0xFFFFFF) % (unsigned)n); }

/* A random pose of up to 9x9 with a random mask (one opaque pixel at least). */
static void random_pose(int *w, int *h, uint8_t *pix, uint8_t *mask)
{
    *w = 1 + urn(9), *h = 1 + urn(9);
    int n = 0;
    for (int i = 0; i < *w * *h; i++) {
        mask[i] = (uint8_t)(urn(3) != 0);
        pix[i] = (uint8_t)urn(256);
        n += mask[i];
    }
    if (!n) mask[urn(*w * *h)] = 1;
}

/* The definition: the last placement of the list whose pose has an opaque
 * pixel over (y, x) gives it, else the background. */
static int paint_ref(const PnmfSpriteDict *d, const PnmfSpriteLayer *L, int j, const uint8_t *B, int cols, int y,
                     int x, int *covered)
{
    int v = B[y * cols + x];
    *covered = 0;
    for (int q = L->first[j]; q < L->first[j + 1]; q++) {
        const PnmfSpritePlace *pl = &L->place[q];
        const PnmfSpritePose *ps = &d->pose[pl->pose];
        const int py = y - pl->y, px = x - pl->x;
        if (py >= 0 && py < ps->h && px >= 0 && px < ps->w && ps->mask[py * ps->w + px])
            v = ps->pix[py * ps->w + px], *covered = 1;
    }
    return v;
}

static void test_composite(void)
{
    enum { R = 13, C = 17, M = 3 };
    size_t sparse = 0; /* poses that go by their list */
    for (int t = 0; t < 50; t++) {
        PnmfSpriteDict d;
        pnmf_sprite_dict_init(&d);
        const int np = 1 + urn(6);
        for (int i = 0; i < np; i++) {
            uint8_t pix[81], mask[81];
            int w, h;
            random_pose(&w, &h, pix, mask);
            if (t % 2) { /* a sparse mask: painted by its list of pixels, not by rows */
                int k = 0;
                for (int q = 0; q < w * h; q++) k += mask[q] = mask[q] && urn(6) == 0;
                if (!k) mask[urn(w * h)] = 1;
            }
            CHECK(pnmf_sprite_dict_add(&d, w, h, pix, mask) == i);
            sparse += (size_t)w * h > 4 * (size_t)d.pose[i].npix;
        }
        PnmfSpriteLayer L = { 0 };
        L.present = 1, L.m = M;
        L.first = calloc(M + 1, sizeof(int));
        L.place = malloc(40 * M * sizeof(PnmfSpritePlace));
        int n = 0;
        for (int j = 0; j < M; j++) {
            L.first[j] = n;
            for (int k = urn(12); k > 0; k--) { /* overlapping, and across every edge */
                const int p = urn(np);
                L.place[n++] = (PnmfSpritePlace){ p, urn(R + d.pose[p].h - 1) - d.pose[p].h + 1,
                                                  urn(C + d.pose[p].w - 1) - d.pose[p].w + 1 };
            }
        }
        L.first[M] = n;
        uint8_t B[R * C], B0[R * C], P[R * C], D[R * C], mark[R * C], U[R * C], val[40 * 81];
        memset(mark, 0, sizeof(mark));
        for (int i = 0; i < R * C; i++) B[i] = (uint8_t)urn(256);
        int bad_paint = 0, bad_bg = 0, bad_under = 0;
        for (int j = 0; j < M; j++) {
            pnmf_sprite_paint(&d, &L, j, R, C, B, P);
            for (int i = 0; i < R * C; i++) D[i] = (uint8_t)urn(256);
            memcpy(B0, B, sizeof(B));
            pnmf_sprite_background_update(&d, &L, j, R, C, D, B, mark);
            /* the decoder's way: B0 under the placements saved, painted
             * over a copy of B0; D with the saved samples put back is B */
            const PnmfSpritePlace *pl = L.place + L.first[j];
            const int nq = L.first[j + 1] - L.first[j];
            CHECK(pnmf_sprite_under_size(&d, pl, nq) <= sizeof(val));
            pnmf_sprite_under_save(&d, pl, nq, R, C, B0, val);
            memcpy(U, B0, sizeof(U));
            pnmf_sprite_paint_over(&d, &L, j, R, C, U);
            bad_under += memcmp(U, P, sizeof(U)) != 0;
            memcpy(U, D, sizeof(U));
            pnmf_sprite_under_restore(&d, pl, nq, R, C, val, U);
            bad_under += memcmp(U, B, sizeof(U)) != 0;
            for (int y = 0; y < R; y++)
                for (int x = 0; x < C; x++) {
                    int cov;
                    bad_paint += P[y * C + x] != paint_ref(&d, &L, j, B0, C, y, x, &cov);
                    bad_bg += B[y * C + x] != (cov ? B0[y * C + x] : D[y * C + x]);
                }
        }
        int dirty = 0;
        for (int i = 0; i < R * C; i++) dirty += mark[i] != 0;
        CHECK_MSG(bad_paint == 0, "trial %d: %d pixels differ from the definition", t, bad_paint);
        CHECK_MSG(bad_bg == 0, "trial %d: %d background pixels differ from the definition", t, bad_bg);
        CHECK_MSG(bad_under == 0, "trial %d: %d frames' saved and restored background differ", t, bad_under);
        CHECK(dirty == 0);
        pnmf_sprite_layer_free(&L);
        pnmf_sprite_dict_free(&d);
    }
    CHECK(sparse > 0);
}

/* A layer of m frames with one new pose (a 3x2 L shape cut from frame 0 at
 * (1, 2)) and a placement of it in each later frame. */
static void make_layer(PnmfSpriteLayer *L, int m)
{
    memset(L, 0, sizeof(*L));
    L->present = 1, L->m = m, L->npose = 1;
    L->pose = calloc(1, sizeof(PnmfSpritePose));
    const uint8_t mask[6] = { 1, 0, 1, 0, 1, 1 };
    CHECK(pnmf_sprite_pose_make(&L->pose[0], 2, 3, mask, mask) == 0);
    L->pose[0].src = 0, L->pose[0].sy = 1, L->pose[0].sx = 2;
    L->first = calloc((size_t)m + 1, sizeof(int));
    L->place = calloc((size_t)m, sizeof(PnmfSpritePlace));
    for (int j = 1; j < m; j++) {
        L->first[j] = j - 1;
        L->place[j - 1] = (PnmfSpritePlace){ 0, j, 2 * j - 3 };
    }
    L->first[m] = m - 1;
}

static void test_dictionary(void)
{
    enum { R = 8, C = 10 };
    PnmfSpriteDict d;
    pnmf_sprite_dict_init(&d);
    char err[200];
    PnmfSpriteLayer L;
    make_layer(&L, 4);
    CHECK(pnmf_sprite_dict_commit(&d, &L, 0, R, C, err, sizeof(err)) == 0);
    CHECK(d.count == 1 && L.base == 0);
    uint8_t D[R * C];
    for (int i = 0; i < R * C; i++) D[i] = (uint8_t)(i * 7 + 3);
    pnmf_sprite_cut(&d, &L, 0, C, D);
    /* its opaque pixels are the frame's under the box, the rest 0 */
    int bad = 0;
    for (int y = 0; y < 3; y++)
        for (int x = 0; x < 2; x++) {
            const int want = L.pose[0].mask[y * 2 + x] ? D[(1 + y) * C + 2 + x] : 0;
            bad += d.pose[0].pix[y * 2 + x] != want;
        }
    CHECK(bad == 0);
    /* a window that continues appends after it; a key window starts afresh */
    CHECK(pnmf_sprite_dict_commit(&d, &L, 1, R, C, err, sizeof(err)) == 0);
    CHECK(d.count == 2 && L.base == 1);
    CHECK(pnmf_sprite_dict_commit(&d, NULL, 1, R, C, err, sizeof(err)) == 0 && d.count == 2);
    CHECK(pnmf_sprite_dict_commit(&d, NULL, 0, R, C, err, sizeof(err)) == 0 && d.count == 0);

    /* refusals leave the dictionary as it was */
    CHECK(pnmf_sprite_dict_commit(&d, &L, 0, R, C, err, sizeof(err)) == 0 && d.count == 1);
    L.place[1].pose = 5; /* names a pose the dictionary will not hold */
    CHECK(pnmf_sprite_dict_commit(&d, &L, 1, R, C, err, sizeof(err)) == PNMF_ERR_CORRUPT && d.count == 1);
    for (int q = 0; q < 3; q++) L.place[q].pose = 1; /* the new pose, id 1 after the one held */
    L.first[1] = 1; /* frame 0 places the pose cut from frame 0 */
    CHECK(pnmf_sprite_dict_commit(&d, &L, 1, R, C, err, sizeof(err)) == PNMF_ERR_CORRUPT && d.count == 1);
    L.first[1] = 0;
    L.place[2].x = C; /* nothing of it inside the frame */
    CHECK(pnmf_sprite_dict_commit(&d, &L, 1, R, C, err, sizeof(err)) == PNMF_ERR_CORRUPT && d.count == 1);
    L.place[2].x = -1; /* one column of it inside: allowed */
    CHECK(pnmf_sprite_dict_commit(&d, &L, 1, R, C, err, sizeof(err)) == 0 && d.count == 2);
    pnmf_sprite_layer_free(&L);

    /* the caps: poses, and what a frame paints */
    pnmf_sprite_dict_free(&d);
    make_layer(&L, 2);
    int refused = 0, count = 0;
    for (int i = 0; i <= PNMF_SPRITE_MAX_POSES && !refused; i++) {
        const int r = pnmf_sprite_dict_commit(&d, &L, 1, R, C, err, sizeof(err));
        refused = r == PNMF_ERR_CORRUPT;
        count += r == 0;
    }
    CHECK_MSG(refused && count == PNMF_SPRITE_MAX_POSES, "%d commits of one pose, refused %d", count, refused);
    pnmf_sprite_layer_free(&L);
    pnmf_sprite_dict_free(&d);
    make_layer(&L, 2);
    const int n = (PNMF_SPRITE_WORK * R * C + PNMF_SPRITE_WORK_MIN) / 4 + 1; /* 4 opaque pixels each */
    L.place = realloc(L.place, (size_t)n * sizeof(PnmfSpritePlace));
    for (int q = 0; q < n; q++) L.place[q] = (PnmfSpritePlace){ 0, 0, 0 };
    L.first[1] = 0, L.first[2] = n;
    CHECK(pnmf_sprite_dict_commit(&d, &L, 0, R, C, err, sizeof(err)) == PNMF_ERR_LIMIT && d.count == 0);
    L.first[2] = n - 1;
    CHECK(pnmf_sprite_dict_commit(&d, &L, 0, R, C, err, sizeof(err)) == 0);
    pnmf_sprite_layer_free(&L);
    pnmf_sprite_dict_free(&d);
}

/* A window of m frames of R x C with the layer L and a residual layer of
 * uncoded model blocks, written and read back. */
static int roundtrip(PnmfSpriteLayer *L, int m, int R, int C, PnmfWindowModel *back, char *err, size_t errlen)
{
    PnmfWindowModel md;
    CHECK(pnmf_model_alloc(&md, R, C, R, C, m, 2, 0) == 0);
    CHECK(pnmf_residual_alloc(&md.res, m, R, C, 32, 16) == 0);
    md.spr = *L;
    uint8_t *buf = NULL;
    size_t size = 0;
    int ret = pnmf_model_write(&md, &buf, &size);
    memset(&md.spr, 0, sizeof(md.spr));
    pnmf_model_free(&md);
    if (ret < 0) return ret;
    ret = pnmf_model_read(buf, size, R, C, R, C, m, 2, 1, 1, back, err, errlen);
    free(buf);
    return ret;
}

static void test_payload(void)
{
    enum { R = 8, C = 10, M = 5 };
    char err[200];
    PnmfSpriteLayer L;
    make_layer(&L, M);
    /* frames that repeat, move, change pose and add a placement anew */
    L.place = realloc(L.place, 16 * sizeof(PnmfSpritePlace));
    const PnmfSpritePlace pl[9] = { { 0, 1, 1 }, { 0, 1, 1 }, { 0, -2, 3 }, { 0, 1, 1 }, { 0, 5, 8 },
                                    { 0, 1, 2 }, { 0, 6, 8 }, { 0, 0, 0 }, { 0, 7, 9 } };
    memcpy(L.place, pl, sizeof(pl));
    const int first[M + 1] = { 0, 0, 2, 5, 7, 9 };
    memcpy(L.first, first, sizeof(first));
    PnmfWindowModel back;
    CHECK(roundtrip(&L, M, R, C, &back, err, sizeof(err)) == 0);
    CHECK(back.spr.present && back.spr.npose == 1 && back.spr.m == M);
    int same = back.spr.present && !memcmp(back.spr.first, first, sizeof(first)) &&
               !memcmp(back.spr.place, pl, sizeof(pl));
    same &= back.spr.pose[0].w == 2 && back.spr.pose[0].h == 3 && back.spr.pose[0].src == 0 &&
            back.spr.pose[0].sy == 1 && back.spr.pose[0].sx == 2 && !memcmp(back.spr.pose[0].mask, L.pose[0].mask, 6);
    CHECK(same);
    pnmf_model_free(&back);

    /* hostile: a box past the frame, a pose from a frame after the window, a
     * placement off the frame */
    L.pose[0].sy = R - 2;
    CHECK(roundtrip(&L, M, R, C, &back, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    L.pose[0].sy = 1;
    {   /* a pose taller than the frame */
        PnmfSpritePose keep = L.pose[0];
        uint8_t tall[2 * (R + 1)];
        memset(tall, 1, sizeof(tall));
        CHECK(pnmf_sprite_pose_make(&L.pose[0], 2, R + 1, tall, tall) == 0);
        L.pose[0].src = 0, L.pose[0].sy = 0, L.pose[0].sx = 0;
        CHECK(roundtrip(&L, M, R, C, &back, err, sizeof(err)) == PNMF_ERR_CORRUPT);
        pnmf_sprite_pose_free(&L.pose[0]);
        L.pose[0] = keep;
    }
    L.pose[0].src = M;
    CHECK(roundtrip(&L, M, R, C, &back, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    L.pose[0].src = 0, L.place[8].y = R;
    CHECK(roundtrip(&L, M, R, C, &back, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    L.place[8].y = 7;
    memset(L.pose[0].mask, 0, 6); /* no opaque pixel */
    CHECK(roundtrip(&L, M, R, C, &back, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    pnmf_sprite_layer_free(&L);
}

/* The definition of a mask sample's context (docs/format.md, "Sprite
 * layer"): the samples at the listed offsets, 0 outside the box and at or
 * after (y, x) in raster order, first offset the highest bit. */
static int ctx_ref(const uint8_t *m, int w, int h, int y, int x, const uint8_t *r, int rw, int rh, int dy, int dx)
{
    static const int own10[10][2] = { { -2, -1 }, { -2, 0 }, { -2, 1 }, { -1, -2 }, { -1, -1 },
                                      { -1, 0 },  { -1, 1 }, { -1, 2 }, { 0, -2 },  { 0, -1 } };
    static const int own4[4][2] = { { -1, -1 }, { -1, 0 }, { -1, 1 }, { 0, -1 } };
    static const int ref5[5][2] = { { 0, 0 }, { -1, 0 }, { 1, 0 }, { 0, -1 }, { 0, 1 } };
    int c = 0;
    const int n = r ? 4 : 10;
    for (int i = 0; i < n; i++) {
        const int yy = y + (r ? own4 : own10)[i][0], xx = x + (r ? own4 : own10)[i][1];
        const int known = yy >= 0 && xx >= 0 && yy < h && xx < w && (yy < y || (yy == y && xx < x));
        c = 2 * c + (known ? m[yy * w + xx] : 0);
    }
    if (!r) return c;
    for (int i = 0; i < 5; i++) {
        const int u = y + ref5[i][0] - dy, v = x + ref5[i][1] - dx;
        c = 2 * c + (u >= 0 && v >= 0 && u < rh && v < rw ? r[u * rw + v] : 0);
    }
    return 1024 + c;
}

static void test_mask_contexts(void)
{
    uint8_t m[81], r[81];
    int bad = 0;
    for (int t = 0; t < 300; t++) {
        const int w = 1 + urn(9), h = 1 + urn(9), rw = 1 + urn(9), rh = 1 + urn(9);
        const int dy = urn(9) - 4, dx = urn(9) - 4;
        for (int i = 0; i < 81; i++) m[i] = (uint8_t)urn(2), r[i] = (uint8_t)urn(2);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                /* the samples from (y, x) on are not known yet: any value */
                bad += pnmf_sprite_mask_context(m, w, y, x, NULL, 0, 0, 0, 0) != ctx_ref(m, w, h, y, x, NULL, 0, 0, 0, 0);
                bad += pnmf_sprite_mask_context(m, w, y, x, r, rw, rh, dy, dx) !=
                       ctx_ref(m, w, h, y, x, r, rw, rh, dy, dx);
            }
    }
    CHECK(bad == 0);
}

/* A disc of radius rad centred at (cy, cx) in a w x h box. */
static void disc(uint8_t *mask, int w, int h, int cy, int cx, int rad)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) mask[y * w + x] = (uint8_t)((y - cy) * (y - cy) + (x - cx) * (x - cx) <= rad * rad);
}

static void test_mask_stream(void)
{
    enum { R = 40, C = 40, M = 3, NP = 4 };
    char err[200];
    PnmfSpriteLayer L;
    memset(&L, 0, sizeof(L));
    L.present = 1, L.ctxmasks = 1, L.m = M, L.npose = NP;
    L.pose = calloc(NP, sizeof(PnmfSpritePose));
    L.first = calloc(M + 1, sizeof(int)); /* no placements */
    uint8_t mask[24 * 24];
    /* a disc, a random mask, the disc one sample lower in a taller box, a
     * smaller disc */
    disc(mask, 20, 20, 10, 10, 8);
    CHECK(pnmf_sprite_pose_make(&L.pose[0], 20, 20, mask, mask) == 0);
    for (int i = 0; i < 15 * 11; i++) mask[i] = (uint8_t)urn(2);
    mask[0] = 1;
    CHECK(pnmf_sprite_pose_make(&L.pose[1], 15, 11, mask, mask) == 0);
    disc(mask, 20, 22, 11, 10, 8);
    CHECK(pnmf_sprite_pose_make(&L.pose[2], 20, 22, mask, mask) == 0);
    disc(mask, 9, 9, 4, 4, 3);
    CHECK(pnmf_sprite_pose_make(&L.pose[3], 9, 9, mask, mask) == 0);
    for (int i = 0; i < NP; i++) L.pose[i].src = 0, L.pose[i].sy = i, L.pose[i].sx = i;
    pnmf_sprite_masks_plan(&L);
    /* the shifted disc is read against the disc, one row down */
    CHECK(L.pose[0].mref == 0 && L.pose[2].mref == 2 && L.pose[2].mdy == 1 && L.pose[2].mdx == 0);
    PnmfWindowModel back;
    CHECK(roundtrip(&L, M, R, C, &back, err, sizeof(err)) == 0);
    int same = back.spr.present && back.spr.ctxmasks && back.spr.npose == NP;
    for (int i = 0; same && i < NP; i++)
        same = back.spr.pose[i].w == L.pose[i].w && back.spr.pose[i].h == L.pose[i].h &&
               back.spr.pose[i].sy == i && back.spr.pose[i].mref == L.pose[i].mref &&
               !memcmp(back.spr.pose[i].mask, L.pose[i].mask, (size_t)L.pose[i].w * L.pose[i].h);
    CHECK(same);
    pnmf_model_free(&back);

    /* the stream alone: read back exactly, refused one byte short or long */
    Buf b = { 0 };
    pnmf_sprite_masks_write(&b, &L);
    Rd rd = { b.p, b.p + b.len };
    uint64_t len = 0;
    CHECK(get_u(&rd, &len) == 0 && len == (uint64_t)(rd.end - rd.p));
    uint8_t *masks[NP];
    int w[NP], h[NP], ref[NP], dy[NP], dx[NP];
    for (int i = 0; i < NP; i++) {
        w[i] = L.pose[i].w, h[i] = L.pose[i].h, ref[i] = L.pose[i].mref, dy[i] = L.pose[i].mdy, dx[i] = L.pose[i].mdx;
        masks[i] = calloc((size_t)w[i] * h[i], 1);
    }
    CHECK(pnmf_sprite_masks_read(rd.p, (size_t)len, RC_V13, NP, masks, w, h, ref, dy, dx) == 0);
    for (int i = 0; i < NP; i++) CHECK(!memcmp(masks[i], L.pose[i].mask, (size_t)w[i] * h[i]));
    for (int i = 0; i < NP; i++) memset(masks[i], 0, (size_t)w[i] * h[i]);
    CHECK(pnmf_sprite_masks_read(rd.p, (size_t)len - 1, RC_V13, NP, masks, w, h, ref, dy, dx) < 0);
    uint8_t *longer = calloc((size_t)len + 1, 1);
    memcpy(longer, rd.p, (size_t)len);
    for (int i = 0; i < NP; i++) memset(masks[i], 0, (size_t)w[i] * h[i]);
    CHECK(pnmf_sprite_masks_read(longer, (size_t)len + 1, RC_V13, NP, masks, w, h, ref, dy, dx) < 0);
    free(longer);
    for (int i = 0; i < NP; i++) free(masks[i]);
    free(b.p);

    /* hostile: a reference to a pose after it, or to itself */
    L.pose[0].mref = 1;
    CHECK(roundtrip(&L, M, R, C, &back, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    L.pose[0].mref = 0, L.pose[2].mref = 3;
    CHECK(roundtrip(&L, M, R, C, &back, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    L.pose[2].mref = 2;
    memset(L.pose[3].mask, 0, 81); /* no opaque pixel */
    CHECK(roundtrip(&L, M, R, C, &back, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    pnmf_sprite_layer_free(&L);
}


/* A random window of m frames (R x C): tracks that keep still, move at a
 * steady velocity, turn, change pose by a little or a lot, jump far
 * (within what the varints hold), vanish; new placements; frames that
 * repeat the one before, and empty frames. */
static void random_places(PnmfSpriteLayer *L, int m, int R, int C)
{
    L->present = 1, L->m = m;
    L->first = calloc((size_t)m + 1, sizeof(int));
    L->place = calloc((size_t)m * 40 + 1, sizeof(PnmfSpritePlace));
    int n = 0, vy[40] = { 0 }, vx[40] = { 0 };
    for (int j = 0; j < m; j++) {
        L->first[j] = n;
        const int p0 = j ? L->first[j - 1] : 0, np = j ? n - p0 : 0, kind = urn(8);
        if (kind == 0) continue; /* empty */
        int cnt = 0;
        for (int t = 0; t < np && cnt < 30; t++) {
            if (kind != 1 && urn(8) == 0) continue; /* vanishes */
            PnmfSpritePlace p = L->place[p0 + t];
            if (kind != 1) { /* kind 1: the frame before repeated */
                if (urn(6) == 0) vy[cnt] = urn(7) - 3, vx[cnt] = urn(7) - 3;
                p.y += vy[cnt], p.x += vx[cnt];
                if (urn(5) == 0) p.pose += urn(2) ? urn(3) - 1 : urn(1000) - p.pose;
                if (urn(20) == 0) p.y = urn(R + (1 << 19)) - (1 << 19);
                if (urn(20) == 0) p.x = -(1 << 19);
            }
            if (p.pose < 0) p.pose = 0;
            if (p.pose > 1023) p.pose = 1023;
            if (p.y >= R) p.y = R - 1;
            if (p.x >= C) p.x = C - 1;
            if (p.y <= -R - (1 << 20)) p.y = -R - (1 << 20) + 1;
            if (p.x <= -C - (1 << 20)) p.x = -C - (1 << 20) + 1;
            L->place[n + cnt++] = p;
        }
        const int more = kind == 1 ? 0 : urn(4);
        for (int t = 0; t < more && cnt < 40; t++) {
            PnmfSpritePlace p = { urn(1024), urn(R + 20) - 20, urn(C + 20) - 20 };
            if (urn(10) == 0) p.y = -(1 << 19) - urn(1000), p.x = C - 1;
            vy[cnt] = vx[cnt] = 0;
            L->place[n + cnt++] = p;
        }
        n += cnt;
    }
    L->first[m] = n;
}

/* Stream bits crafted by hand: a magnitude as the reader reads it. */
static void put_mag(RcEnc *e, RcProb *p, int c, uint64_t v)
{
    int n = 0;
    for (uint64_t u = v + 1; u > 1; u >>= 1) n++;
    for (int i = 0; i < n; i++) rc_encode(e, &p[c + (i < PNMF_PLACE_MAG_CTX ? i : PNMF_PLACE_MAG_CTX - 1)], 1);
    rc_encode(e, &p[c + (n < PNMF_PLACE_MAG_CTX ? n : PNMF_PLACE_MAG_CTX - 1)], 0);
    for (int i = n - 1; i >= 0; i--) rc_encode_direct(e, (int)((v + 1) >> i & 1));
}

/* A two-frame stream: frame 0 one new placement (pose 0 at y0, 0), frame
 * 1 `cnt1` placements of which the first refers to the frame before's
 * placement 0 + d (d = 0: the track bit; else another reference). */
static size_t crafted(uint8_t *out, int y0, int cnt1, int d)
{
    RcProb p[PNMF_PLACE_CTX];
    rc_probs_init(p, PNMF_PLACE_CTX);
    Buf b = { 0 };
    RcEnc e;
    rc_enc_init(&e, &b);
    rc_encode(&e, &p[PNMF_PC_CNT_ZERO + 2], 0); /* frame 0: count 0 + 1 */
    rc_encode(&e, &p[PNMF_PC_CNT_SIGN], 0);
    put_mag(&e, p, PNMF_PC_CNT_MAG, 0);
    put_mag(&e, p, PNMF_PC_NEW_POSE, 0);
    rc_encode(&e, &p[PNMF_PC_NEW_SIGN], y0 < 0);
    put_mag(&e, p, PNMF_PC_NEW_MAG, (uint64_t)(y0 < 0 ? -(int64_t)y0 - 1 : y0));
    rc_encode(&e, &p[PNMF_PC_NEW_SIGN + 1], 0);
    put_mag(&e, p, PNMF_PC_NEW_MAG + PNMF_PLACE_MAG_CTX, 0);
    rc_encode(&e, &p[PNMF_PC_CNT_ZERO + 1], cnt1 == 1); /* frame 1 */
    if (cnt1 != 1) rc_encode(&e, &p[PNMF_PC_CNT_SIGN], cnt1 < 1), put_mag(&e, p, PNMF_PC_CNT_MAG, (uint64_t)abs(cnt1 - 1) - 1);
    if (cnt1 >= 1) {
        rc_encode(&e, &p[PNMF_PC_TRACK], d == 0);
        if (d) {
            rc_encode(&e, &p[PNMF_PC_NEW], 0);
            rc_encode(&e, &p[PNMF_PC_REF_SIGN], d < 0);
            put_mag(&e, p, PNMF_PC_REF_MAG, (uint64_t)abs(d) - 1);
        }
        rc_encode(&e, &p[PNMF_PC_POSE], 0);
        rc_encode(&e, &p[PNMF_PC_RES], 1);
    }
    rc_enc_finish(&e);
    memcpy(out, b.p, b.len);
    const size_t n = b.len;
    free(b.p);
    return n;
}

static void test_places(void)
{
    enum { R = 30, C = 40, M = 24 };
    char err[200];
    for (int round = 0; round < 40; round++) {
        PnmfSpriteLayer L;
        memset(&L, 0, sizeof(L));
        random_places(&L, M, R, C);
        /* each layout, forced and chosen, reads back the same placements */
        for (int mode = -1; mode <= 1; mode++) {
            L.ctxplaces = mode;
            PnmfWindowModel back;
            const int rt = roundtrip(&L, M, R, C, &back, err, sizeof(err));
            if (rt) fprintf(stderr, "round %d mode %d: %s\n", round, mode, err);
            CHECK(rt == 0);
            int same = back.spr.present && back.spr.m == M && !memcmp(back.spr.first, L.first, (M + 1) * sizeof(int)) &&
                       !memcmp(back.spr.place, L.place, (size_t)L.first[M] * sizeof(PnmfSpritePlace));
            if (mode) same &= back.spr.ctxplaces == (mode > 0);
            CHECK(same);
            pnmf_model_free(&back);
        }
        /* the stream alone: exactly its bytes */
        PnmfPlaceIO io;
        memset(&io, 0, sizeof(io));
        Buf b = { 0 };
        RcEnc e;
        rc_enc_init(&e, &b);
        io.put = put_rc_test, io.enc = &e;
        CHECK(pnmf_sprite_places_code(&io, &L, R, C) == 0 && !io.bad);
        rc_enc_finish(&e);
        PnmfSpriteLayer back;
        memset(&back, 0, sizeof(back));
        back.m = M, back.first = calloc(M + 1, sizeof(int));
        CHECK(pnmf_sprite_places_read(b.p, b.len, RC_V13, &back, R, C) == 0);
        CHECK(back.first[M] == L.first[M] && !memcmp(back.place, L.place, (size_t)L.first[M] * sizeof(PnmfSpritePlace)));
        pnmf_sprite_layer_free(&back);
        back.m = M, back.first = calloc(M + 1, sizeof(int));
        CHECK(pnmf_sprite_places_read(b.p, b.len - 1, RC_V13, &back, R, C) < 0);
        pnmf_sprite_layer_free(&back);
        uint8_t *longer = calloc(b.len + 1, 1);
        memcpy(longer, b.p, b.len);
        back.m = M, back.first = calloc(M + 1, sizeof(int));
        CHECK(pnmf_sprite_places_read(longer, b.len + 1, RC_V13, &back, R, C) < 0);
        pnmf_sprite_layer_free(&back);
        free(longer);
        free(b.p);
        /* a placement off the frame is refused in either layout */
        if (L.first[M] > 0) {
            L.place[L.first[M] - 1].y = R;
            for (int mode = -1; mode <= 1; mode += 2) {
                L.ctxplaces = mode;
                PnmfWindowModel bk;
                CHECK(roundtrip(&L, M, R, C, &bk, err, sizeof(err)) == PNMF_ERR_CORRUPT);
            }
        }
        pnmf_sprite_layer_free(&L);
    }
    {   /* a v10 reader does not know window flags bit 16 */
        PnmfSpriteLayer L;
        memset(&L, 0, sizeof(L));
        random_places(&L, M, R, C);
        L.ctxplaces = 1;
        PnmfWindowModel md, back;
        CHECK(pnmf_model_alloc(&md, R, C, R, C, M, 2, 0) == 0);
        CHECK(pnmf_residual_alloc(&md.res, M, R, C, 32, 16) == 0);
        md.spr = L;
        uint8_t *buf = NULL;
        size_t size = 0;
        CHECK(pnmf_model_write(&md, &buf, &size) == 0);
        memset(&md.spr, 0, sizeof(md.spr));
        pnmf_model_free(&md);
        CHECK(pnmf_model_read_version(10, buf, size, R, C, R, C, M, 2, 1, 1, &back, err, sizeof(err)) ==
              PNMF_ERR_CORRUPT);
        CHECK(strstr(err, "unknown features") != NULL);
        CHECK(pnmf_model_read_version(PNMF_PAYLOAD_VERSION, buf, size, R, C, R, C, M, 2, 1, 1, &back, err, sizeof(err)) == 0);
        CHECK(back.spr.ctxplaces == 1);
        pnmf_model_free(&back);
        free(buf);
        pnmf_sprite_layer_free(&L);
    }
    /* crafted streams: the frame before's placement 0 tracked, read back;
     * refused: a reference past the frame before's placements (or before
     * them), a count past PNMF_SPRITE_MAX_PLACES, a position off the frame */
    uint8_t s[64];
    PnmfSpriteLayer back;
    const int d[5] = { 0, 1, -1, 0, 0 }, cnt[5] = { 1, 1, 1, PNMF_SPRITE_MAX_PLACES + 1, 1 },
              y0[5] = { 3, 3, 3, 3, R }, want[5] = { 0, -3, -3, -2, -4 };
    for (int t = 0; t < 5; t++) {
        memset(&back, 0, sizeof(back));
        back.m = 2, back.first = calloc(3, sizeof(int));
        const size_t n = crafted(s, y0[t], cnt[t], d[t]);
        CHECK(pnmf_sprite_places_read(s, n, RC_V13, &back, R, C) == want[t]);
        if (!t) CHECK(back.first[2] == 2 && back.place[1].y == 3 && back.place[1].x == 0 && back.place[1].pose == 0);
        pnmf_sprite_layer_free(&back);
    }
}

int main(void)
{
    test_places();
    test_mask_contexts();
    test_mask_stream();
    test_composite();
    test_dictionary();
    test_payload();
    return test_summary("test_sprite");
}
