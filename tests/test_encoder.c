/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The encoder through the public API on synthetic clips: the two-level
 * option places one component several times in a frame, the
 * residual layer decodes to exactly the PSNR the encoder reports, seeking
 * into a window with a residual layer gives the frames of a full decode,
 * -k 0 codes a clip without any model, and a scene cut starts a key window.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encode_file.h"
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
    test_encode_file(path, s, W, H, M, f[0], st);
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

/* Repeated entries: two copies of one sprite in every frame (those of
 * make_frames(), but apart: the second stays in rows 28-34 and moves
 * left, the first moves down and right above it), one component and no
 * residual layer. The fit places the component once a frame; the repeat
 * search places it a second time in every frame (two entries of the one
 * component, and nothing else), and both copies are drawn: far above the
 * single placement, which leaves one copy out. (Where make_frames()'s
 * copies touch, the one drawn last hides a corner of the other, and a
 * few small entries more pay for that.) */
static void test_repeats(const char *dir)
{
    static uint8_t f[M][H * W], d[M][H * W];
    memset(f, 0, sizeof(f));
    for (int j = 0; j < M; j++)
        for (int c = 0; c < 2; c++) {
            const int y0 = c ? 28 : 5 + j, x0 = c ? 50 - 3 * j : 6 + 2 * j;
            for (int y = 0; y < 7; y++)
                for (int x = 0; x < 7; x++) f[j][(y0 + y) * W + x0 + x] = (uint8_t)(120 + 15 * ((x * 3 + y * 5) % 9));
        }
    char path[512];
    snprintf(path, sizeof path, "%s/test_encoder_rep.pnmf", dir);
    PnmfEncSettings s;
    pnmf_enc_default_settings(&s);
    s.components = 1, s.residual = 0, s.window = M, s.threads = 1, s.iterations = 10, s.quality = 24;
    PnmfEncStats st;
    s.repeats = 0;
    const double once = encode(&s, f, path, &st);
    CHECK(st.repeated == 0);
    s.repeats = 1;
    const double twice = encode(&s, f, path, &st);
    const double got = decode(path, f, d);
    printf("two copies of a sprite, -k 1: %.2f dB placed once a frame, %.2f dB with repeats (%d added)\n", once,
           twice, st.repeated);
    CHECK_MSG(fabs(got - twice) < 1e-6, "decoded %.3f dB, the encoder said %.3f", got, twice);
    CHECK_MSG(st.repeated == M, "%d entries added, not one a frame (%d)", st.repeated, M);
    CHECK_MSG(twice > once + 10 && twice > 40, "%.2f dB with repeats, %.2f without", twice, once);
    FILE *in = fopen(path, "rb");
    PnmfInfo *info = NULL;
    CHECK(in && pnmf_info_open(&info, in) == 0);
    PnmfInfoWindow w;
    CHECK(pnmf_info_next_window(info, &w, 0) == 1);
    CHECK_MSG(w.repeat_frames == M && w.max_occurrences == 2 && w.used == 1 && w.entries == 2 * M,
              "repeat frames %d, max occurrences %d, used %d, entries %llu", w.repeat_frames, w.max_occurrences,
              w.used, (unsigned long long)w.entries);
    pnmf_info_close(&info);
    fclose(in);
    remove(path);
}

/* The windows of a file: first frames and key flags, n at most 8. */
static int windows(const char *path, int first[8], int key[8])
{
    FILE *in = fopen(path, "rb");
    PnmfInfo *info = NULL;
    CHECK(in && pnmf_info_open(&info, in) == 0);
    PnmfInfoWindow w;
    int n = 0;
    while (info && n < 8 && pnmf_info_next_window(info, &w, 0) == 1) first[n] = w.first_frame, key[n] = w.key, n++;
    pnmf_info_close(&info);
    if (in) fclose(in);
    return n;
}

static int file_equal(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb;
    while (same) {
        const int ca = getc(fa), cb = getc(fb);
        same = ca == cb;
        if (ca == EOF) break;
    }
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}

/* A scene cut (frame 7 on: a bright textured backdrop instead of sprites on
 * black) ends the window before it and starts a key window; without cuts
 * in the clip the option changes nothing; a one-frame flash is no cut (the
 * frame after it is coded from the frames before it, in the same window);
 * after a black leader the picture cuts at once. */
static void test_scene_cut(const char *dir)
{
    static uint8_t f[M][H * W], d[M][H * W], flash[M][H * W];
    make_frames(f);
    memcpy(flash, f, sizeof(f));
    for (int j = 7; j < M; j++)
        for (int q = 0; q < H * W; q++) f[j][q] = (uint8_t)(170 + 7 * ((q / W + 2 * (q % W) + j) % 11));
    memcpy(flash[7], f[7], H * W);
    char path[512], path2[512];
    snprintf(path, sizeof path, "%s/test_encoder_cut.pnmf", dir);
    snprintf(path2, sizeof path2, "%s/test_encoder_cut2.pnmf", dir);
    PnmfEncSettings s;
    pnmf_enc_default_settings(&s);
    s.components = 0, s.window = 4, s.threads = 1, s.quality = 24;
    PnmfEncStats st;
    int first[8], key[8];
    const double psnr = encode(&s, f, path, &st);
    CHECK_MSG(fabs(decode(path, f, d) - psnr) < 1e-6, "scene cut: the decoder disagrees with the encoder");
    CHECK_MSG(st.scene_cuts == 1, "%d scene cuts, not 1", st.scene_cuts);
    int n = windows(path, first, key);
    CHECK_MSG(n == 4 && first[0] == 0 && first[1] == 4 && first[2] == 7 && first[3] == 11,
              "windows at %d %d %d %d (%d of them), not 0 4 7 11", first[0], first[1], first[2], first[3], n);
    CHECK_MSG(n == 4 && key[0] && !key[1] && key[2] && !key[3], "key windows %d %d %d %d, not 1 0 1 0", key[0],
              key[1], key[2], key[3]);
    s.scene_cut = 0;
    const double psnr0 = encode(&s, f, path2, &st);
    n = windows(path2, first, key);
    CHECK_MSG(st.scene_cuts == 0 && n == 3 && first[2] == 8 && key[0] && !key[1] && !key[2],
              "--no-scenecut: %d cuts, %d windows", st.scene_cuts, n);
    printf("scene cut at frame 7, -k 0 -q 24: %.2f dB with the cut, %.2f dB without\n", psnr, psnr0);
    /* no cut in the clip: the same bytes either way */
    make_frames(f);
    encode(&s, f, path2, &st);
    s.scene_cut = 1;
    encode(&s, f, path, &st);
    CHECK_MSG(st.scene_cuts == 0 && file_equal(path, path2), "a clip without cuts coded differently");
    /* two cuts, the second inside the window the first started: both
     * windows that start at a cut are key windows */
    static uint8_t two[M][H * W];
    memcpy(two, flash, sizeof(two));
    for (int j = 5; j < 9; j++) memcpy(two[j], flash[7], H * W);
    s.window = 8;
    encode(&s, two, path, &st);
    n = windows(path, first, key);
    CHECK_MSG(st.scene_cuts == 2 && n == 3 && first[1] == 5 && first[2] == 9 && key[0] && key[1] && key[2],
              "two cuts: %d found, %d windows, starting at %d %d, key %d %d", st.scene_cuts, n, first[1], first[2],
              key[1], key[2]);
    s.window = 4;
    /* a flash: frame 7 differs, frame 8 is back: no cut, the bytes of --no-scenecut */
    encode(&s, flash, path, &st);
    CHECK_MSG(st.scene_cuts == 0, "a flash gave %d scene cuts", st.scene_cuts);
    s.scene_cut = 0;
    encode(&s, flash, path2, &st);
    CHECK_MSG(file_equal(path, path2), "a flash coded otherwise than without scene cuts");
    s.scene_cut = 1;
    /* a cut whose frame fills the window (window 8, cut before frame 7):
     * the window still ends before it */
    s.window = 8;
    make_frames(two);
    for (int j = 7; j < M; j++) memcpy(two[j], flash[7], H * W);
    encode(&s, two, path, &st);
    n = windows(path, first, key);
    CHECK_MSG(st.scene_cuts == 1 && n == 2 && first[1] == 7 && key[1], "cut at a full window: %d cuts, %d windows, at %d",
              st.scene_cuts, n, first[1]);
    /* a cut before the last frame: there is no frame after it to tell, a cut */
    make_frames(two);
    memcpy(two[M - 1], flash[7], H * W);
    encode(&s, two, path, &st);
    n = windows(path, first, key);
    CHECK_MSG(st.scene_cuts == 1 && n == 3 && first[2] == M - 1 && key[2], "cut at the last frame: %d cuts, %d windows",
              st.scene_cuts, n);
    /* a black leader (frames 0 and 1 flat) before the picture: a cut
     * however soon after the clip's start, so the picture's first frame
     * starts a key window; the same frames after a picture are no cut
     * that soon (PNMF_CUT_MIN_GAP) */
    s.window = 8;
    for (int j = 0; j < M; j++) memcpy(two[j], flash[7], H * W);
    memset(two[0], 0, H * W), memset(two[1], 0, H * W);
    encode(&s, two, path, &st);
    n = windows(path, first, key);
    CHECK_MSG(st.scene_cuts == 1 && n >= 2 && first[1] == 2 && key[1], "black leader: %d cuts, %d windows, at %d",
              st.scene_cuts, n, first[1]);
    CHECK(pnmf_scene_cut(two[1], two[2], W, W, H, 1) == 1);
    for (int j = 0; j < 2; j++) memcpy(two[j], flash[7], H * W);
    for (int q = 0; q < H * W; q++) two[2][q] = (uint8_t)(q % W < W / 2 ? 20 : 230);
    CHECK(pnmf_scene_cut(two[1], two[2], W, W, H, 1) == 0 && pnmf_scene_cut(two[1], two[2], W, W, H, 4) == 1);
    s.window = 4;
    remove(path);
    remove(path2);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    test_two_level(dir);
    test_residual(dir);
    test_scene_cut(dir);
    test_repeats(dir);
    return test_summary("test_encoder");
}
