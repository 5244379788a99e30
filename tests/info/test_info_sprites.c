/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pnmf-info --sprites against the public decoder: tracks.csv lists, frame
 * by frame, the placements pnmf_dec_frame_sprites() gives (same count,
 * same corners); every sprite PNG is gray+alpha with alpha 0 or 255, and
 * no two hold the same image; a placed sprite's opaque pixels show in the
 * decoded frame (those inside the frame that no later placement of the
 * frame covers) exactly in most placements; pnmf_dec_sprite() refuses an
 * id out of range; after a seek, the frame read gives its placements.
 * usage: test_info_sprites FILE.pnmf DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavcodec/avcodec.h>

#include "pnmf/pnmf.h"

#include "test.h"

#define MAX_SPRITES 4096

typedef struct Sprite {
    int w, h;
    uint8_t *ya; /* w * h (gray, alpha) pairs; NULL: not read */
} Sprite;

static uint8_t *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(n > 0 ? (size_t)n : 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return b;
}

/* A ya8 PNG; -1 when missing, not a PNG or not ya8. */
static int read_png_ya8(const char *path, Sprite *sp)
{
    size_t n;
    uint8_t *b = slurp(path, &n);
    if (!b) return -1;
    const AVCodec *codec = avcodec_find_decoder(AV_CODEC_ID_PNG);
    AVCodecContext *dec = codec ? avcodec_alloc_context3(codec) : NULL;
    AVPacket *pkt = av_packet_alloc();
    AVFrame *fr = av_frame_alloc();
    int ret = -1;
    if (dec && pkt && fr && avcodec_open2(dec, codec, NULL) >= 0 && av_new_packet(pkt, (int)n) >= 0) {
        memcpy(pkt->data, b, n);
        if (avcodec_send_packet(dec, pkt) >= 0 && avcodec_receive_frame(dec, fr) >= 0 &&
            fr->format == AV_PIX_FMT_YA8) {
            sp->w = fr->width, sp->h = fr->height;
            sp->ya = malloc((size_t)sp->w * sp->h * 2);
            for (int y = 0; y < sp->h; y++)
                memcpy(sp->ya + (size_t)y * sp->w * 2, fr->data[0] + (ptrdiff_t)y * fr->linesize[0], 2 * sp->w);
            ret = 0;
        }
    }
    av_frame_free(&fr);
    av_packet_free(&pkt);
    avcodec_free_context(&dec);
    free(b);
    return ret;
}

typedef struct Row {
    int frame, sprite, x, y, coef;
} Row;

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_info_sprites FILE.pnmf DIR\n");
        return 2;
    }
    const char *dir = argv[2];
    char path[4096];

    /* tracks.csv */
    snprintf(path, sizeof(path), "%s/tracks.csv", dir);
    FILE *f = fopen(path, "r");
    CHECK_MSG(f != NULL, "cannot open %s", path);
    if (!f) return test_summary("test_info_sprites");
    char line[256];
    CHECK(fgets(line, sizeof(line), f) && !strcmp(line, "frame,sprite,x,y,coefficient\n"));
    Row *rows = NULL;
    int nrows = 0, cap = 0;
    while (fgets(line, sizeof(line), f)) {
        Row r;
        char end;
        const int ok = sscanf(line, "%d,%d,%d,%d,%d%c", &r.frame, &r.sprite, &r.x, &r.y, &r.coef, &end) == 6 &&
                       end == '\n';
        CHECK_MSG(ok, "tracks.csv: bad row '%s'", line);
        if (!ok) continue;
        CHECK_MSG(r.coef == 1 && r.sprite >= 0 && r.sprite < MAX_SPRITES, "tracks.csv: row '%s'", line);
        if (r.sprite < 0 || r.sprite >= MAX_SPRITES) continue;
        if (nrows == cap) {
            cap = cap ? 2 * cap : 256;
            rows = realloc(rows, (size_t)cap * sizeof(Row));
        }
        rows[nrows++] = r;
    }
    fclose(f);
    CHECK(nrows > 0);

    /* every sprite named has its PNG, ya8, alpha 0 or 255, gray 0 where transparent */
    static Sprite spr[MAX_SPRITES];
    int nspr = 0;
    for (int i = 0; i < nrows; i++) {
        Sprite *s = &spr[rows[i].sprite];
        if (s->ya || s->w < 0) continue;
        snprintf(path, sizeof(path), "%s/sprite_%04d.png", dir, rows[i].sprite);
        if (read_png_ya8(path, s) < 0) {
            CHECK_MSG(0, "%s: missing, or not a gray+alpha PNG", path);
            s->w = -1;
            continue;
        }
        if (rows[i].sprite + 1 > nspr) nspr = rows[i].sprite + 1;
        int bad = 0, opaque = 0;
        for (int p = 0; p < s->w * s->h; p++) {
            const uint8_t g = s->ya[2 * p], a = s->ya[2 * p + 1];
            if ((a != 0 && a != 255) || (a == 0 && g != 0)) bad++;
            opaque += a == 255;
        }
        CHECK_MSG(!bad && opaque > 0, "%s: %d pixels with a partial alpha or gray under alpha 0, %d opaque", path,
                  bad, opaque);
    }
    /* distinct content */
    for (int a = 0; a < nspr; a++)
        for (int b = a + 1; b < nspr; b++)
            if (spr[a].ya && spr[b].ya && spr[a].w == spr[b].w && spr[a].h == spr[b].h)
                CHECK_MSG(memcmp(spr[a].ya, spr[b].ya, (size_t)spr[a].w * spr[a].h * 2),
                          "sprite_%04d.png and sprite_%04d.png hold the same image", a, b);

    /* the decoder's placements and frames */
    FILE *in = fopen(argv[1], "rb");
    CHECK_MSG(in != NULL, "cannot open %s", argv[1]);
    if (!in) return test_summary("test_info_sprites");
    PnmfDecoder *dec = NULL;
    CHECK(pnmf_dec_open(&dec, in) == 0);
    const PnmfStreamInfo *si = pnmf_dec_info(dec);
    const int W = si->width, H = si->height;
    uint8_t *frame = malloc((size_t)W * H), *cover = malloc((size_t)W * H);
    PnmfSpritePlacement pl[1024];
    CHECK(pnmf_dec_frame_sprites(dec, pl, 1024) == 0); /* before the first frame */
    int r = 0, checked = 0, wrong = 0, placements = 0, exact = 0;
    for (int j = 0; pnmf_dec_read_frame(dec, frame, W) == 0; j++) {
        const int n = pnmf_dec_frame_sprites(dec, pl, 1024);
        CHECK(n >= 0 && n <= 1024);
        placements += n;
        int rows_j = 0;
        while (r + rows_j < nrows && rows[r + rows_j].frame == j) rows_j++;
        CHECK_MSG(rows_j == n, "frame %d: %d rows in tracks.csv, %d placements", j, rows_j, n);
        if (rows_j != n || n < 0 || n > 1024) {
            r += rows_j;
            continue;
        }
        PnmfSprite ds;
        CHECK(pnmf_dec_sprite(dec, -1, &ds) == PNMF_ERR_ARG);
        CHECK(pnmf_dec_sprite(dec, 1 << 20, &ds) == PNMF_ERR_ARG);
        /* walk back to front: a pixel is checked where this placement is
         * the last to paint it */
        memset(cover, 0, (size_t)W * H);
        for (int i = n - 1; i >= 0; i--) {
            const Row *row = &rows[r + i];
            CHECK_MSG(row->x == pl[i].x && row->y == pl[i].y, "frame %d placement %d: (%d,%d) in tracks.csv, (%d,%d)",
                      j, i, row->x, row->y, pl[i].x, pl[i].y);
            CHECK(pnmf_dec_sprite(dec, pl[i].sprite, &ds) == 0);
            const Sprite *s = &spr[row->sprite];
            if (!s->ya) continue;
            CHECK_MSG(ds.w == s->w && ds.h == s->h, "frame %d placement %d: sprite size", j, i);
            int here = 0, off = 0;
            for (int y = 0; y < s->h; y++)
                for (int x = 0; x < s->w; x++) {
                    const int fy = row->y + y, fx = row->x + x;
                    if (s->ya[2 * (y * s->w + x) + 1] != 255 || fy < 0 || fy >= H || fx < 0 || fx >= W) continue;
                    if (cover[fy * W + fx]) continue;
                    cover[fy * W + fx] = 1;
                    here++;
                    off += frame[fy * W + fx] != s->ya[2 * (y * s->w + x)];
                }
            checked += here, wrong += off;
            exact += here > 0 && off == 0;
        }
        r += n;
    }
    CHECK_MSG(r == nrows, "tracks.csv has %d rows past the decoded placements", nrows - r);
    /* after a seek: nothing until a frame is read, then that frame's */
    const int target = si->frame_count * 3 / 4;
    int want = 0;
    for (int i = 0; i < nrows; i++) want += rows[i].frame == target;
    CHECK(pnmf_dec_seek(dec, target) == 0);
    CHECK(pnmf_dec_frame_sprites(dec, pl, 1024) == 0);
    CHECK(pnmf_dec_read_frame(dec, frame, W) == 0);
    const int got = pnmf_dec_frame_sprites(dec, pl, 1024);
    CHECK_MSG(got == want && want > 0, "frame %d after a seek: %d placements, %d rows", target, got, want);

    CHECK_MSG(placements == nrows, "%d placements decoded, %d rows", placements, nrows);
    /* the residual layer codes each frame over the painted sprites, so a
     * lossy file may move some of their pixels; most placements show the
     * sprite exactly */
    CHECK_MSG(checked > 0 && 2 * exact > placements, "%d of %d placements show their sprite exactly", exact,
              placements);
    CHECK_MSG(20 * wrong < checked, "%d of %d opaque sprite pixels differ in the decoded frames", wrong, checked);
    printf("%d rows, %d sprites, %d placements exact, %d of %d pixels differ\n", nrows, nspr, exact, wrong,
           checked);
    pnmf_dec_close(&dec);
    fclose(in);
    free(frame);
    free(cover);
    free(rows);
    for (int i = 0; i < MAX_SPRITES; i++) free(spr[i].ya);
    return test_summary("test_info_sprites");
}
