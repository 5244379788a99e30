/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The encoder through the public API on synthetic clips: the two-level
 * option places one component several times in a frame (issue 4), the
 * residual layer decodes to exactly the PSNR the encoder reports, seeking
 * into a window with a residual layer gives the frames of a full decode,
 * and -k 0 codes a clip without any model.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pnmf/info.h"
#include "pnmf/pnmf.h"
#include "test.h"

enum { H = 48, W = 64, M = 12 };

/* Two copies of one textured 7x7 sprite on black, moving apart. */
static void make_frames(uint8_t f[M][H * W])
{
    memset(f, 0, (size_t)M * H * W);
    for (int j = 0; j < M; j++)
        for (int c = 0; c < 2; c++) {
            const int y0 = c ? 30 - j : 5 + j, x0 = c ? 40 - 2 * j : 6 + 2 * j;
            for (int y = 0; y < 7; y++)
                for (int x = 0; x < 7; x++) f[j][(y0 + y) * W + x0 + x] = (uint8_t)(120 + 15 * ((x * 3 + y * 5) % 9));
        }
}

static double encode(const PnmfEncSettings *s, uint8_t f[M][H * W], const char *path, PnmfEncStats *st)
{
    FILE *out = fopen(path, "wb");
    PnmfEncoder *enc = NULL;
    CHECK(out && pnmf_enc_open(&enc, s, W, H, 20, 1, out) == 0);
    for (int j = 0; j < M; j++) CHECK(pnmf_enc_push_frame(enc, f[j], W) == 0);
    CHECK(pnmf_enc_finish(enc) == 0);
    pnmf_enc_get_stats(enc, st);
    pnmf_enc_close(&enc);
    fclose(out);
    return st->psnr;
}

/* Decode everything; PSNR against f. */
static double decode(const char *path, uint8_t f[M][H * W], uint8_t out[M][H * W])
{
    FILE *in = fopen(path, "rb");
    PnmfDecoder *dec = NULL;
    CHECK(in && pnmf_dec_open(&dec, in) == 0);
    double sse = 0;
    for (int j = 0; j < M; j++) {
        CHECK(pnmf_dec_read_frame(dec, out[j], W) == 0);
        for (int q = 0; q < H * W; q++) sse += ((double)f[j][q] - out[j][q]) * ((double)f[j][q] - out[j][q]);
    }
    pnmf_dec_close(&dec);
    fclose(in);
    return sse > 0 ? 10 * log10(255.0 * 255 * M * H * W / sse) : 999;
}

static void test_two_level(const char *dir)
{
    static uint8_t f[M][H * W], d[M][H * W];
    make_frames(f);
    char path[512];
    snprintf(path, sizeof path, "%s/test_encoder_2l.pnmf", dir);
    PnmfEncSettings s;
    pnmf_enc_default_settings(&s);
    s.components = 1, s.two_level = 3, s.residual = 0, s.window = M, s.threads = 1, s.iterations = 20;
    PnmfEncStats st;
    const double psnr = encode(&s, f, path, &st);
    const double got = decode(path, f, d);
    CHECK_MSG(fabs(got - psnr) < 1e-6, "decoded %.3f dB, the encoder said %.3f", got, psnr);
    CHECK_MSG(psnr > 25, "two-level: %.2f dB", psnr);
    FILE *in = fopen(path, "rb");
    PnmfInfo *info = NULL;
    CHECK(in && pnmf_info_open(&info, in) == 0);
    PnmfInfoWindow w;
    CHECK(pnmf_info_next_window(info, &w, 0) == 1);
    /* one component, two placements in every frame */
    CHECK_MSG(w.repeat_frames == M && w.max_occurrences == 2 && w.used == 1,
              "repeat frames %d, max occurrences %d, used %d", w.repeat_frames, w.max_occurrences, w.used);
    pnmf_info_close(&info);
    fclose(in);
    /* the option's limits */
    FILE *out = fopen(path, "wb");
    PnmfEncoder *enc = NULL;
    s.components = 4, s.two_level = 3; /* K < k */
    CHECK(pnmf_enc_open(&enc, &s, W, H, 20, 1, out) == PNMF_ERR_ARG);
    pnmf_enc_close(&enc);
    s.components = 1, s.shift_model = PNMF_SHIFT_CANVAS;
    CHECK(pnmf_enc_open(&enc, &s, W, H, 20, 1, out) == PNMF_ERR_ARG);
    pnmf_enc_close(&enc);
    fclose(out);
    remove(path);
}

static void test_residual(const char *dir)
{
    static uint8_t f[M][H * W], d[M][H * W], d2[H * W];
    make_frames(f);
    char path[512];
    snprintf(path, sizeof path, "%s/test_encoder_res.pnmf", dir);
    for (int k = 0; k <= 2; k += 2) {
        PnmfEncSettings s;
        pnmf_enc_default_settings(&s);
        s.components = k, s.window = 5, s.threads = 1, s.iterations = 5, s.quality = 24;
        PnmfEncStats st;
        const double psnr = encode(&s, f, path, &st);
        const double got = decode(path, f, d);
        CHECK_MSG(fabs(got - psnr) < 1e-6, "-k %d: decoded %.3f dB, the encoder said %.3f", k, got, psnr);
        CHECK_MSG(psnr > 40, "-k %d: %.2f dB", k, psnr);
        /* seeking to every frame gives the frame a full decode gave */
        FILE *in = fopen(path, "rb");
        PnmfDecoder *dec = NULL;
        CHECK(in && pnmf_dec_open(&dec, in) == 0);
        int same = 1;
        for (int j = M - 1; j >= 0; j -= 2) {
            CHECK(pnmf_dec_seek(dec, j) == 0);
            CHECK(pnmf_dec_read_frame(dec, d2, W) == 0);
            same &= !memcmp(d2, d[j], H * W);
        }
        CHECK(same);
        pnmf_dec_close(&dec);
        fclose(in);
    }
    remove(path);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    test_two_level(dir);
    test_residual(dir);
    return test_summary("test_encoder");
}
