/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pnmf/info.h against the decoder's own stages: every window's frames,
 * components, block sizes and entries as pnmf_info_next_window() reports
 * them, against a direct container read and pnmf_model_read() counted
 * here; the section byte counts summing to the payload; the blocks copied
 * out; and the mosaic pnmf-info drew (PNG decoded with libavcodec, and
 * PGM), its size from the layout the README states and its pixels from
 * the dequantized levels.
 * usage: test_info FILE.pnmf WINDOW MOSAIC.png MOSAIC.pgm
 */
#include <stdlib.h>
#include <string.h>

#include <libavcodec/avcodec.h>

#include "pnmf/info.h"
#include "pnmf/pnmf.h"

#include "container.h"
#include "model.h"
#include "test.h"

/* The mosaic layout (tools/pnmf_info.c, docs/info-readme-section.md). */
#define TARGET 128
#define MAX_SCALE 16
#define SEP 2

typedef struct Image {
    int w, h;
    uint8_t *pix;
} Image;

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

static int read_pgm(const char *path, Image *im)
{
    size_t n;
    uint8_t *b = slurp(path, &n);
    int w, h, maxv, off = 0;
    if (!b || sscanf((char *)b, "P5 %d %d %d%n", &w, &h, &maxv, &off) != 3 || maxv != 255 ||
        (size_t)off + 1 + (size_t)w * h != n) {
        free(b);
        return -1;
    }
    im->w = w, im->h = h;
    im->pix = malloc((size_t)w * h);
    memcpy(im->pix, b + off + 1, (size_t)w * h);
    free(b);
    return 0;
}

static int read_png(const char *path, Image *im)
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
            fr->format == AV_PIX_FMT_GRAY8) {
            im->w = fr->width, im->h = fr->height;
            im->pix = malloc((size_t)im->w * im->h);
            for (int y = 0; y < im->h; y++)
                memcpy(im->pix + (size_t)y * im->w, fr->data[0] + (ptrdiff_t)y * fr->linesize[0], im->w);
            ret = 0;
        }
    }
    av_frame_free(&fr);
    av_packet_free(&pkt);
    avcodec_free_context(&dec);
    free(b);
    return ret;
}

static long div_round(long a, long b) { return a >= 0 ? (a + b / 2) / b : -((-a + b / 2) / b); }

/* The image the README's rules predict for these blocks. */
static void predict(const PnmfInfoBlocks *b, Image *im)
{
    int maxside = 0, sgn = 0, n = 0, cw = 0, ch = 0;
    for (int i = 0; i < b->count; i++) {
        maxside = b->bh[i] > maxside ? b->bh[i] : maxside;
        maxside = b->bw[i] > maxside ? b->bw[i] : maxside;
        for (int x = 0; x < b->bh[i] * b->bw[i]; x++) sgn |= b->lev[i][x] < 0;
    }
    const int target = maxside > TARGET ? maxside : TARGET;
    int scale[256];
    for (int i = 0; i < b->count; i++) {
        if (!b->bh[i]) continue;
        const int side = b->bh[i] > b->bw[i] ? b->bh[i] : b->bw[i];
        int s = target / side;
        scale[i] = s < 1 ? 1 : s > MAX_SCALE ? MAX_SCALE : s;
        ch = b->bh[i] * scale[i] > ch ? b->bh[i] * scale[i] : ch;
        cw = b->bw[i] * scale[i] > cw ? b->bw[i] * scale[i] : cw;
        n++;
    }
    int gc = 1;
    while (gc * gc < n) gc++;
    const int gr = (n + gc - 1) / gc;
    im->w = gc * cw + (gc + 1) * SEP;
    im->h = gr * ch + (gr + 1) * SEP;
    im->pix = malloc((size_t)im->w * im->h);
    memset(im->pix, sgn ? 0 : 96, (size_t)im->w * im->h);
    int t = 0;
    for (int i = 0; i < b->count; i++) {
        if (!b->bh[i]) continue;
        const int x0 = SEP + (t % gc) * (cw + SEP), y0 = SEP + (t / gc) * (ch + SEP), s = scale[i];
        for (int y = 0; y < b->bh[i] * s; y++)
            for (int x = 0; x < b->bw[i] * s; x++) {
                const long v = (long)b->lev[i][(y / s) * b->bw[i] + x / s] * b->w_step;
                long g = sgn ? 128 + div_round(v * 127, 256) : div_round(v * 255, 256);
                g = g < 0 ? 0 : g > 255 ? 255 : g;
                im->pix[(size_t)(y0 + y) * im->w + x0 + x] = (uint8_t)g;
            }
        t++;
    }
}

static void check_image(const char *what, const Image *got, const Image *want)
{
    CHECK_MSG(got->w == want->w && got->h == want->h, "%s: %dx%d, layout predicts %dx%d", what,
              got->w, got->h, want->w, want->h);
    if (got->w != want->w || got->h != want->h) return;
    size_t bad = 0, first = 0;
    for (size_t p = 0; p < (size_t)got->w * got->h; p++)
        if (got->pix[p] != want->pix[p] && !bad++) first = p;
    CHECK_MSG(!bad, "%s: %zu pixels differ, first at (%zu, %zu): %d, expected %d", what, bad,
              first % got->w, first / got->w, got->pix[first], want->pix[first]);
}

int main(int argc, char **argv)
{
    /* FILE.pnmf --bit N: the windows only, and at least one has flags bit N */
    const int tools_only = argc == 4 && !strcmp(argv[2], "--bit");
    if (argc != 5 && !tools_only) {
        fprintf(stderr, "usage: test_info FILE.pnmf WINDOW MOSAIC.png MOSAIC.pgm | FILE.pnmf --bit N\n");
        return 2;
    }
    const int want_window = tools_only ? -1 : atoi(argv[2]);
    const int want_bit = tools_only ? atoi(argv[3]) : -1;
    int bit_seen = 0;
    FILE *fa = fopen(argv[1], "rb"), *fb = fopen(argv[1], "rb");
    CHECK(fa && fb);
    if (!fa || !fb) return test_summary("test_info");

    PnmfInfo *info = NULL;
    CHECK(pnmf_info_open(&info, fa) == 0);
    const PnmfInfoHeader *ih = pnmf_info_header(info);
    CHECK(ih != NULL);
    if (!ih) return test_summary("test_info");

    /* the direct read: the decoder's stages (decode.c) */
    char err[256] = "";
    PnmfContainerReader *cr = NULL;
    CHECK(pnmf_container_reader_open(&cr, fb, err, sizeof(err)) == 0);
    const PnmfHeader *h = pnmf_container_reader_header(cr);
    CHECK(ih->width == (int)h->width && ih->height == (int)h->height);
    CHECK(ih->frame_count == (int)h->frame_count && ih->window == h->window);
    CHECK(ih->components == h->components && ih->w_step == h->w_step && ih->r_step == h->r_step);
    CHECK(ih->version == h->writer_version && ih->quality == h->quality);
    const int vector = h->shift_model == PNMF_SHIFT_VECTOR;
    int rows = vector ? 1 : (int)h->height, cols = vector ? (int)(h->width * h->height) : (int)h->width;
    const int vr = rows, vc = cols;
    if (h->shift_model == PNMF_SHIFT_CANVAS) rows = (int)h->canvas_height, cols = (int)h->canvas_width;

    PnmfInfoBlocks *blocks = NULL;
    int windows = 0, frames = 0;
    uint64_t chunks = 0;
    for (;;) {
        PnmfInfoWindow st;
        const int r1 = pnmf_info_next_window(info, &st, 3);
        const uint8_t *payload;
        size_t size;
        uint32_t first, count;
        const int r2 = pnmf_container_read_window(cr, &payload, &size, &first, &count, err, sizeof(err));
        CHECK_MSG(r1 == r2, "window %d: info %d, container %d", windows, r1, r2);
        if (r1 <= 0 || r2 <= 0) break;
        PnmfWindowModel md;
        const int version = h->writer_version < PNMF_READER_VERSION ? h->writer_version : PNMF_READER_VERSION;
        CHECK(pnmf_model_read_version(version, payload, size, rows, cols, vr, vc, (int)count, h->components,
                                      h->w_step, h->r_step, &md, err, sizeof(err)) == 0);
        CHECK(st.index == windows);
        CHECK(st.first_frame == (int)first && st.frames == (int)count && st.first_frame == frames);
        CHECK(st.payload_bytes == size);
        /* the flags against what the model read made of the payload */
        CHECK_MSG((st.flags & 1) == (md.res.step16 != 0), "window %d: flags 0x%llx, residual layer %d", windows,
                  (unsigned long long)st.flags, md.res.step16 != 0);
        CHECK((st.flags >> 5 & 1) == (uint64_t)(md.spr.present != 0));
        CHECK((st.flags >> 6 & 1) == (uint64_t)(md.res.step16 && md.res.subpel));
        CHECK((st.flags >> 7 & 1) == (uint64_t)(md.res.step16 && md.res.deblock));
        CHECK((st.flags >> 8 & 1) == (uint64_t)(md.res.step16 && md.res.tx8_on));
        CHECK((st.flags >> 9 & 1) == (uint64_t)(md.res.step16 && md.res.lx != NULL));
        CHECK((st.flags >> 10 & 1) == (uint64_t)(md.res.step16 && md.res.idir_on));
        CHECK((st.flags >> 11 & 1) == (uint64_t)(md.spr.present && md.spr.ctxmasks));
        CHECK((st.flags >> 13 & 1) == (uint64_t)(md.res.step16 && md.res.palette));
        if (want_bit >= 0) bit_seen |= (int)(st.flags >> want_bit & 1);
        CHECK(st.chunk_bytes > 20); /* 20 bytes of framing and the zstd frame */
        CHECK(st.components == md.k);
        /* entries and repeats, counted from the decoder's lists */
        uint64_t entries = 0;
        int repeat = 0;
        for (int j = 0; j < md.m; j++) {
            int rep = 0;
            for (int e = md.first[j]; e < md.first[j + 1]; e++) {
                entries++;
                for (int e2 = md.first[j]; e2 < e; e2++) rep |= md.ent[e2].i == md.ent[e].i;
            }
            repeat += rep;
        }
        CHECK_MSG(st.entries == entries, "window %d: %llu entries, decoder %llu", windows,
                  (unsigned long long)st.entries, (unsigned long long)entries);
        CHECK(st.repeat_frames == repeat);
        uint64_t per_comp = 0, levels = 0;
        for (int i = 0; i < md.k; i++) {
            CHECK(st.block_h[i] == md.comp[i].bh && st.block_w[i] == md.comp[i].bw);
            per_comp += st.comp_entries[i];
            levels += (uint64_t)md.comp[i].bh * md.comp[i].bw;
        }
        CHECK(per_comp == entries && st.levels == levels);
        /* residual blocks by prediction, from the decoder's modes */
        uint64_t pred[8] = { 0 }, coded = 0, tr = 0, pal = 0, nres = 0;
        if (md.res.step16)
            for (size_t b = 0; b < (size_t)md.m * md.res.bx * md.res.by; b++) {
                const uint8_t mo = md.res.modes[b];
                pred[mo & 7]++;
                coded += (mo & PNMF_RES_CODED) != 0;
                /* mode 16 alone: a palette block (window flags bit 13), not a transform */
                if (mo == PNMF_RES_PALETTE) pal++;
                else tr += (mo & PNMF_RES_TRANSFORM) != 0;
            }
        CHECK(st.res_palette == pal);
        for (int i = 0; i < 8; i++) {
            CHECK_MSG(st.res_pred[i] == pred[i], "window %d: prediction %d: %llu blocks, decoder %llu", windows, i,
                      (unsigned long long)st.res_pred[i], (unsigned long long)pred[i]);
            nres += st.res_pred[i];
        }
        CHECK(nres == (md.res.step16 ? (uint64_t)md.m * md.res.bx * md.res.by : 0));
        CHECK(st.res_coded == coded && st.res_transform == tr && tr <= coded);
        /* sections: add up to the payload; value counts from the layout */
        uint64_t raw = 0;
        for (int s = 0; s < PNMF_INFO_SECTIONS; s++) {
            raw += st.sec[s].raw_bytes;
            /* a varint is a byte at least; the range-coded streams of the
             * residual layer (modes, vectors, levels) may take less */
            const int ranged = md.res.step16 && (s == PNMF_INFO_SEC_RES_MODES || s == PNMF_INFO_SEC_RES_VECTORS ||
                                                 (s == PNMF_INFO_SEC_RES_LEVELS && md.res.rc_levels));
            if (!ranged) CHECK(st.sec[s].raw_bytes >= st.sec[s].values);
            CHECK(!st.sec[s].raw_bytes || st.sec[s].zstd_bytes > 0);
        }
        CHECK_MSG(raw == size, "window %d: sections %llu bytes, payload %zu", windows,
                  (unsigned long long)raw, size);
        /* flags and k, varints: flags of bits 7 and up take a second byte */
        CHECK(st.sec[PNMF_INFO_SEC_HEAD].raw_bytes == 2u + (st.flags >= 128) + (st.flags >= (uint64_t)1 << 14));
        CHECK(st.sec[PNMF_INFO_SEC_LEVELS].values == levels);
        CHECK(st.sec[PNMF_INFO_SEC_COUNTS].values == (uint64_t)md.k * md.m);
        CHECK(st.sec[PNMF_INFO_SEC_COUNTS].raw_bytes == (uint64_t)md.k * md.m); /* counts <= 64 */
        CHECK(st.sec[PNMF_INFO_SEC_COEFS].values == entries);
        CHECK(st.sec[PNMF_INFO_SEC_ROWSHIFTS].values == entries);
        CHECK(st.sec[PNMF_INFO_SEC_COLSHIFTS].values == entries);
        CHECK(st.payload_zstd_bytes > 0);
        if (windows == want_window) {
            CHECK(pnmf_info_window_blocks(info, &blocks) == 0);
            if (blocks) {
                CHECK(blocks->window == windows && blocks->count == md.k && blocks->w_step == h->w_step);
                for (int i = 0; i < md.k; i++) {
                    const size_t n = (size_t)md.comp[i].bh * md.comp[i].bw;
                    CHECK(blocks->bh[i] == md.comp[i].bh && blocks->bw[i] == md.comp[i].bw);
                    CHECK(!n || !memcmp(blocks->lev[i], md.comp[i].lev, n * sizeof(int16_t)));
                }
            }
        }
        chunks += st.chunk_bytes;
        pnmf_model_free(&md);
        windows++;
        frames += (int)count;
    }
    CHECK_MSG(frames == ih->frame_count, "windows cover %d of %d frames", frames, ih->frame_count);
    CHECK(windows == (ih->frame_count + ih->window - 1) / ih->window);
    /* header + chunks + index chunk (12 + 4 + 16 a window) + trailer (16) */
    CHECK(ih->file_bytes == (uint64_t)ih->header_bytes + chunks + 12 + 4 + 16 * (uint64_t)windows + 16);
    PnmfInfoWindow st;
    CHECK(pnmf_info_next_window(info, &st, 0) == 0);
    PnmfInfoBlocks *none = NULL;
    CHECK(pnmf_info_window_blocks(info, &none) == PNMF_ERR_ARG && !none);
    CHECK(pnmf_info_next_window(NULL, &st, 0) == PNMF_ERR_ARG);
    CHECK(pnmf_info_next_window(info, &st, 23) == PNMF_ERR_ARG);

    if (tools_only) {
        CHECK_MSG(bit_seen, "no window has flags bit %d", want_bit);
        pnmf_info_close(&info);
        pnmf_container_reader_close(&cr);
        fclose(fa);
        fclose(fb);
        return test_summary("test_info");
    }
    CHECK(blocks != NULL);
    if (blocks) {
        Image want, png = { 0 }, pgm = { 0 };
        predict(blocks, &want);
        CHECK_MSG(read_png(argv[3], &png) == 0, "cannot decode %s", argv[3]);
        CHECK_MSG(read_pgm(argv[4], &pgm) == 0, "cannot read %s", argv[4]);
        if (png.pix) check_image("png", &png, &want);
        if (pgm.pix) check_image("pgm", &pgm, &want);
        free(want.pix);
        free(png.pix);
        free(pgm.pix);
    }
    pnmf_info_blocks_free(&blocks);
    CHECK(blocks == NULL);
    pnmf_info_close(&info);
    CHECK(info == NULL);
    pnmf_container_reader_close(&cr);
    fclose(fa);
    fclose(fb);
    return test_summary("test_info");
}
