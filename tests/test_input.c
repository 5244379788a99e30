/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The tools' I/O library: reading clips as gray8 (tools/input/) and writing
 * png, pgm and y4m (tools/output/).
 *
 * - samples/sprites.mkv and samples/life.mkv: size, rate, frame count and
 *   pixels (checksums of make_sprites' y4m output, computed independently);
 * - round trips of an odd-size (37x23) 5-frame pattern through png, pgm and
 *   y4m, byte-exact, plus hand parsing of the pgm and y4m files;
 * - RGB input (a hand-written PPM, an RGB PNG) becomes BT.601 full-range
 *   luma; YUV input keeps its luma as stored (8-bit limited range, 10-bit);
 * - a size change mid-clip, missing and broken files, bad outputs: errors
 *   with a one-line reason, never a crash.
 *
 * Everything the test reads besides samples/ it writes itself, into a
 * temporary directory it removes.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libavcodec/avcodec.h>

#include "input/demuxer.h"
#include "output/muxer.h"
#include "test.h"

#define PAT_W 37
#define PAT_H 23
#define PAT_FRAMES 5

static char tmpdir[256];

static void rm_rf(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) < 0)
        return;
    if (S_ISDIR(sb.st_mode)) {
        DIR *d = opendir(path);
        if (d) {
            struct dirent *e;
            while ((e = readdir(d))) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                    continue;
                char sub[1024];
                snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
                rm_rf(sub);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

static const char *tmp_path(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", tmpdir, name);
    return buf;
}

static int write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    const int ok = fwrite(data, 1, size, f) == size;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* A reason is one lower-case line. */
static int is_reason(const char *err)
{
    return err[0] >= 'a' && err[0] <= 'z' && !strchr(err, '\n');
}

static uint64_t fnv1a(uint64_t h, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}
#define FNV_INIT 0xcbf29ce484222325ULL

static uint8_t pattern(int f, int x, int y)
{
    return (uint8_t)((x + PAT_W * y + 41 * f) * 7);
}

static void test_sprites(void)
{
    const char *dir = getenv("PNMF_SAMPLES");
    char path[512], err[256] = "";
    snprintf(path, sizeof(path), "%s/sprites.mkv", dir ? dir : "samples");
    PnmfInputInfo info;
    PnmfInput *in = pnmf_input_open(path, &info, err, sizeof(err));
    CHECK_MSG(in != NULL, "%s: %s", path, err);
    if (!in)
        return;
    CHECK(info.width == 160 && info.height == 120);
    CHECK(info.fps_num == 20 && info.fps_den == 1);
    CHECK(info.frame_estimate == 60);

    /* Stride wider than the frame: the padding must stay untouched. */
    const ptrdiff_t stride = 170;
    static uint8_t buf[170 * 120];
    memset(buf, 0xA5, sizeof(buf));
    uint64_t all = FNV_INIT, first = 0;
    int frames = 0, r, pad_ok = 1;
    while ((r = pnmf_input_read(in, buf, stride, err, sizeof(err))) == 1) {
        for (int y = 0; y < 120; y++) {
            all = fnv1a(all, buf + y * stride, 160);
            for (int x = 160; x < stride; x++)
                pad_ok &= buf[y * stride + x] == 0xA5;
        }
        if (frames == 0) {
            first = FNV_INIT;
            for (int y = 0; y < 120; y++)
                first = fnv1a(first, buf + y * stride, 160);
            /* Values make_sprites.c draws: background corners, the cross
             * and the square at their first positions. */
            CHECK(buf[0] == 24);
            CHECK(buf[119 * stride + 159] == 88);
            CHECK(buf[27 * stride + 137] == 255);
            CHECK(buf[19 * stride + 13] == 225);
        }
        frames++;
    }
    CHECK_MSG(r == 0, "read: %s", err);
    CHECK(frames == 60);
    CHECK(pad_ok);
    /* FNV-1a 64 of make_sprites' y4m planes (frame 1, all 60 frames). */
    CHECK(first == 0x314b36f760bfacedULL);
    CHECK(all == 0x2602f13e1c08c32dULL);
    CHECK(pnmf_input_read(in, buf, stride, err, sizeof(err)) == 0); /* still the end */
    pnmf_input_close(&in);
    CHECK(in == NULL);
    pnmf_input_close(&in); /* NULL-safe */
}

static void test_life(void)
{
    const char *dir = getenv("PNMF_SAMPLES");
    char path[512], err[256] = "";
    snprintf(path, sizeof(path), "%s/life.mkv", dir ? dir : "samples");
    PnmfInputInfo info;
    PnmfInput *in = pnmf_input_open(path, &info, err, sizeof(err));
    CHECK_MSG(in != NULL, "%s: %s", path, err);
    if (!in)
        return;
    CHECK(info.width == 128 && info.height == 96);
    CHECK(info.fps_num == 20 && info.fps_den == 1);
    static uint8_t buf[128 * 96];
    int frames = 0, binary = 1, alive = 0;
    while (pnmf_input_read(in, buf, 128, err, sizeof(err)) == 1) {
        for (int i = 0; i < 128 * 96; i++) {
            binary &= buf[i] == 0 || buf[i] == 255;
            alive += buf[i] == 255;
        }
        frames++;
    }
    CHECK(frames == 60);
    CHECK(binary);
    CHECK(alive > 0);
    pnmf_input_close(&in);
}

/* Write the pattern with an output, then read it back; byte-exact. */
static void round_trip(const char *format, const char *dest, const char *readback,
                       int fps_num, int fps_den, int check_fps)
{
    char err[256] = "";
    const PnmfOutputInfo oi = { .width = PAT_W, .height = PAT_H, .fps_num = fps_num, .fps_den = fps_den };
    PnmfOutput *out = pnmf_output_open(format, dest, &oi, err, sizeof(err));
    CHECK_MSG(out != NULL, "%s: %s", format, err);
    if (!out)
        return;
    /* Frames handed over with a stride wider than the width. */
    static uint8_t frame[PAT_H * 40];
    for (int f = 0; f < PAT_FRAMES; f++) {
        for (int y = 0; y < PAT_H; y++)
            for (int x = 0; x < 40; x++)
                frame[y * 40 + x] = x < PAT_W ? pattern(f, x, y) : 0xEE;
        CHECK_MSG(pnmf_output_write(out, frame, 40, err, sizeof(err)) == 0, "%s: %s", format, err);
    }
    CHECK_MSG(pnmf_output_close(&out, err, sizeof(err)) == 0, "%s: %s", format, err);
    CHECK(out == NULL);

    PnmfInputInfo info;
    PnmfInput *in = pnmf_input_open(readback, &info, err, sizeof(err));
    CHECK_MSG(in != NULL, "%s: %s", readback, err);
    if (!in)
        return;
    CHECK(info.width == PAT_W && info.height == PAT_H);
    if (check_fps)
        CHECK_MSG(info.fps_num == fps_num && info.fps_den == fps_den, "%s: %d/%d", format,
                  info.fps_num, info.fps_den);
    uint8_t buf[PAT_W * PAT_H];
    int frames = 0, exact = 1, r;
    while ((r = pnmf_input_read(in, buf, PAT_W, err, sizeof(err))) == 1) {
        for (int y = 0; y < PAT_H; y++)
            for (int x = 0; x < PAT_W; x++)
                exact &= buf[y * PAT_W + x] == pattern(frames, x, y);
        frames++;
    }
    CHECK_MSG(r == 0, "%s: %s", format, err);
    CHECK_MSG(frames == PAT_FRAMES, "%s: %d frames", format, frames);
    CHECK_MSG(exact, "%s: pixels differ", format);
    pnmf_input_close(&in);
}

/* No temporary file is left and the frame files are exactly 1..5. */
static void check_frame_dir(const char *dir, const char *ext)
{
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    if (!d)
        return;
    int frames = 0, other = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        unsigned n;
        char tail[8];
        if (sscanf(e->d_name, "frame_%6u.%7s", &n, tail) == 2 && n >= 1 && n <= PAT_FRAMES &&
            !strcmp(tail, ext) && strlen(e->d_name) == 13 + strlen(ext))
            frames++;
        else
            other++;
    }
    closedir(d);
    CHECK_MSG(frames == PAT_FRAMES && other == 0, "%s: %d frames, %d other files", dir, frames, other);
}

static void test_png_round_trip(void)
{
    char dir[512], pat[600], path[600];
    /* Two missing levels: created like mkdir -p. */
    tmp_path(dir, sizeof(dir), "png/nested");
    snprintf(pat, sizeof(pat), "%s/frame_%%06d.png", dir);
    round_trip("png", dir, pat, 25, 1, 1);
    check_frame_dir(dir, "png");

    static const uint8_t sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
    uint8_t head[8] = { 0 };
    snprintf(path, sizeof(path), "%s/frame_000001.png", dir);
    FILE *f = fopen(path, "rb");
    CHECK(f && fread(head, 1, 8, f) == 8 && !memcmp(head, sig, 8));
    if (f)
        fclose(f);
}

static void test_pgm_round_trip(void)
{
    char dir[512], pat[600], path[600];
    tmp_path(dir, sizeof(dir), "pgm");
    snprintf(pat, sizeof(pat), "%s/frame_%%06d.pgm", dir);
    round_trip("pgm", dir, pat, 25, 1, 1);
    check_frame_dir(dir, "pgm");

    /* Parsed by hand: the header, then the raw plane. */
    static const char head[] = "P5\n37 23\n255\n";
    const size_t hs = sizeof(head) - 1;
    for (int fr = 0; fr < PAT_FRAMES; fr++) {
        uint8_t data[64 + PAT_W * PAT_H];
        snprintf(path, sizeof(path), "%s/frame_%06d.pgm", dir, fr + 1);
        FILE *f = fopen(path, "rb");
        const size_t n = f ? fread(data, 1, sizeof(data), f) : 0;
        if (f)
            fclose(f);
        int exact = n == hs + PAT_W * PAT_H && !memcmp(data, head, hs);
        for (int i = 0; exact && i < PAT_W * PAT_H; i++)
            exact = data[hs + i] == pattern(fr, i % PAT_W, i / PAT_W);
        CHECK_MSG(exact, "%s", path);
    }
}

static void test_y4m_round_trip(void)
{
    char path[512];
    tmp_path(path, sizeof(path), "pattern.y4m");
    round_trip("y4m", path, path, 30000, 1001, 1);

    /* Parsed by hand. */
    static const char head[] = "YUV4MPEG2 W37 H23 F30000:1001 Ip A1:1 Cmono XCOLORRANGE=FULL\n";
    const size_t hs = sizeof(head) - 1, fs = 6 + PAT_W * PAT_H;
    static uint8_t data[128 + PAT_FRAMES * (6 + PAT_W * PAT_H) + 1];
    FILE *f = fopen(path, "rb");
    const size_t n = f ? fread(data, 1, sizeof(data), f) : 0;
    if (f)
        fclose(f);
    int exact = n == hs + PAT_FRAMES * fs && !memcmp(data, head, hs);
    for (int fr = 0; exact && fr < PAT_FRAMES; fr++) {
        const uint8_t *p = data + hs + fr * fs;
        exact = !memcmp(p, "FRAME\n", 6);
        for (int i = 0; exact && i < PAT_W * PAT_H; i++)
            exact = p[6 + i] == pattern(fr, i % PAT_W, i / PAT_W);
    }
    CHECK_MSG(exact, "%s: %zu bytes", path, n);
}

/* Expected BT.601 full-range luma of the colours below. */
static const uint8_t rgb_colours[8][3] = {
    { 255, 0, 0 }, { 0, 255, 0 }, { 0, 0, 255 }, { 255, 255, 255 },
    { 0, 0, 0 }, { 128, 128, 128 }, { 255, 255, 0 }, { 10, 200, 90 },
};

static int bt601(const uint8_t c[3])
{
    return (int)(0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2] + 0.5);
}

static void check_rgb_luma(const char *path)
{
    char err[256] = "";
    PnmfInputInfo info;
    PnmfInput *in = pnmf_input_open(path, &info, err, sizeof(err));
    CHECK_MSG(in != NULL, "%s: %s", path, err);
    if (!in)
        return;
    CHECK(info.width == 4 && info.height == 2);
    uint8_t buf[8];
    CHECK_MSG(pnmf_input_read(in, buf, 4, err, sizeof(err)) == 1, "%s: %s", path, err);
    for (int i = 0; i < 8; i++)
        CHECK_MSG(abs(buf[i] - bt601(rgb_colours[i])) <= 1, "%s: colour %d: %d, expected %d",
                  path, i, buf[i], bt601(rgb_colours[i]));
    /* The ends of the range exactly. */
    CHECK(buf[0] == 76 && buf[3] == 255 && buf[4] == 0);
    CHECK(pnmf_input_read(in, buf, 4, err, sizeof(err)) == 0);
    pnmf_input_close(&in);
}

static void test_rgb_ppm(void)
{
    char path[512];
    uint8_t data[16 + 24];
    const int hs = snprintf((char *)data, 16, "P6\n4 2\n255\n");
    memcpy(data + hs, rgb_colours, 24);
    tmp_path(path, sizeof(path), "colours.ppm");
    CHECK(write_file(path, data, (size_t)hs + 24) == 0);
    check_rgb_luma(path);
}

/* The same colours as an RGB24 PNG, made with libavcodec's encoder. */
static void test_rgb_png(void)
{
    char path[512];
    tmp_path(path, sizeof(path), "colours.png");
    const AVCodec *codec = avcodec_find_encoder(AV_CODEC_ID_PNG);
    AVCodecContext *enc = codec ? avcodec_alloc_context3(codec) : NULL;
    AVFrame *frame = av_frame_alloc();
    AVPacket *pkt = av_packet_alloc();
    int ok = enc && frame && pkt;
    if (ok) {
        enc->width = frame->width = 4;
        enc->height = frame->height = 2;
        enc->pix_fmt = AV_PIX_FMT_RGB24;
        frame->format = AV_PIX_FMT_RGB24;
        enc->time_base = (AVRational){ 1, 25 };
        ok = avcodec_open2(enc, codec, NULL) >= 0 && av_frame_get_buffer(frame, 0) >= 0;
    }
    if (ok) {
        for (int y = 0; y < 2; y++)
            memcpy(frame->data[0] + y * frame->linesize[0], rgb_colours[4 * y], 12);
        ok = avcodec_send_frame(enc, frame) >= 0 && avcodec_receive_packet(enc, pkt) >= 0 &&
             write_file(path, pkt->data, (size_t)pkt->size) == 0;
    }
    CHECK(ok);
    av_packet_free(&pkt);
    av_frame_free(&frame);
    avcodec_free_context(&enc);
    if (ok)
        check_rgb_luma(path);
}

/* y4m by hand: 4x2 luma + 4:2:0 chroma, 8 or 10 bits (little-endian). */
static void write_yuv_y4m(const char *path, const char *colourspace, const uint16_t luma[8], int bytes)
{
    uint8_t data[256];
    size_t n = (size_t)snprintf((char *)data, 128, "YUV4MPEG2 W4 H2 F25:1 Ip A1:1 %s\nFRAME\n",
                                colourspace);
    for (int i = 0; i < 8; i++) {
        data[n++] = (uint8_t)luma[i];
        if (bytes == 2)
            data[n++] = (uint8_t)(luma[i] >> 8);
    }
    for (int i = 0; i < 4; i++) { /* 2x1 Cb then 2x1 Cr: neutral */
        data[n++] = bytes == 2 ? 0x00 : 0x80;
        if (bytes == 2)
            data[n++] = 0x02;
    }
    CHECK(write_file(path, data, n) == 0);
}

static void check_luma(const char *path, const uint8_t expect[8])
{
    char err[256] = "";
    PnmfInputInfo info;
    PnmfInput *in = pnmf_input_open(path, &info, err, sizeof(err));
    CHECK_MSG(in != NULL, "%s: %s", path, err);
    if (!in)
        return;
    uint8_t buf[8] = { 0 };
    CHECK_MSG(pnmf_input_read(in, buf, 4, err, sizeof(err)) == 1, "%s: %s", path, err);
    CHECK_MSG(!memcmp(buf, expect, 8), "%s: %d %d %d %d %d %d %d %d", path, buf[0], buf[1],
              buf[2], buf[3], buf[4], buf[5], buf[6], buf[7]);
    pnmf_input_close(&in);
}

static void test_yuv_luma(void)
{
    char path[512];
    /* 8-bit limited range: kept as stored, not expanded to 0-255. */
    static const uint16_t y8[8] = { 16, 235, 17, 100, 0, 255, 128, 240 };
    static const uint8_t e8[8] = { 16, 235, 17, 100, 0, 255, 128, 240 };
    tmp_path(path, sizeof(path), "limited.y4m");
    write_yuv_y4m(path, "C420jpeg XCOLORRANGE=LIMITED", y8, 1);
    check_luma(path, e8);

    /* 10-bit: depth scaled with rounding, range untouched. */
    static const uint16_t y10[8] = { 64, 940, 1023, 513, 0, 2, 1, 600 };
    static const uint8_t e10[8] = { 16, 235, 255, 128, 0, 1, 0, 150 };
    tmp_path(path, sizeof(path), "ten.y4m");
    write_yuv_y4m(path, "C420p10 XYSCSS=420P10", y10, 2);
    check_luma(path, e10);
}

static void write_pgm(const char *path, int w, int h, uint8_t v)
{
    uint8_t data[64 + 16 * 16];
    const int hs = snprintf((char *)data, 64, "P5\n%d %d\n255\n", w, h);
    memset(data + hs, v, (size_t)w * h);
    CHECK(write_file(path, data, (size_t)hs + w * h) == 0);
}

static void test_size_change(void)
{
    char dir[512], path[600], err[256] = "";
    tmp_path(dir, sizeof(dir), "resize");
    CHECK(mkdir(dir, 0777) == 0);
    snprintf(path, sizeof(path), "%s/frame_000001.pgm", dir);
    write_pgm(path, 8, 8, 50);
    snprintf(path, sizeof(path), "%s/frame_000002.pgm", dir);
    write_pgm(path, 10, 6, 60);
    snprintf(path, sizeof(path), "%s/frame_%%06d.pgm", dir);

    PnmfInputInfo info;
    PnmfInput *in = pnmf_input_open(path, &info, err, sizeof(err));
    CHECK_MSG(in != NULL, "%s", err);
    if (!in)
        return;
    CHECK(info.width == 8 && info.height == 8);
    uint8_t buf[16 * 16];
    CHECK(pnmf_input_read(in, buf, 16, err, sizeof(err)) == 1 && buf[0] == 50);
    err[0] = '\0';
    CHECK(pnmf_input_read(in, buf, 16, err, sizeof(err)) == -1);
    CHECK_MSG(!strcmp(err, "frame 2 is 10x6, the clip started at 8x8"), "'%s'", err);
    CHECK(pnmf_input_read(in, buf, 16, err, sizeof(err)) == -1); /* and stays failed */
    pnmf_input_close(&in);
}

static void check_refused(const char *path, const char *what)
{
    char err[256] = "";
    PnmfInputInfo info;
    PnmfInput *in = pnmf_input_open(path, &info, err, sizeof(err));
    CHECK_MSG(in == NULL, "%s opened", what);
    CHECK_MSG(is_reason(err), "%s: '%s'", what, err);
    CHECK_MSG(!strstr(err, path), "%s: reason names the file: '%s'", what, err);
    pnmf_input_close(&in);
}

static void test_bad_inputs(void)
{
    char path[512];
    check_refused(tmp_path(path, sizeof(path), "missing/clip.mkv"), "missing file");
    check_refused(tmp_path(path, sizeof(path), "missing/frame_%06d.png"), "missing sequence");
    check_refused(tmpdir, "directory");

    static const char text[] = "this is not a video, just some words in a text file\n";
    tmp_path(path, sizeof(path), "text.mkv");
    CHECK(write_file(path, text, sizeof(text) - 1) == 0);
    check_refused(path, "text file");

    tmp_path(path, sizeof(path), "empty.y4m");
    CHECK(write_file(path, "", 0) == 0);
    check_refused(path, "empty file");

    /* A y4m header with no frames. */
    static const char header[] = "YUV4MPEG2 W16 H16 F25:1 Ip A1:1 Cmono\n";
    tmp_path(path, sizeof(path), "noframes.y4m");
    CHECK(write_file(path, header, sizeof(header) - 1) == 0);
    check_refused(path, "no frames");
}

static void test_bad_outputs(void)
{
    char path[512], err[256] = "";
    const PnmfOutputInfo oi = { .width = 16, .height = 16, .fps_num = 25, .fps_den = 1 };
    PnmfOutput *out = pnmf_output_open("bmp", tmpdir, &oi, err, sizeof(err));
    CHECK(out == NULL && is_reason(err) && strstr(err, "bmp"));

    /* A directory output where a file stands. */
    tmp_path(path, sizeof(path), "a_file");
    CHECK(write_file(path, "x", 1) == 0);
    err[0] = '\0';
    out = pnmf_output_open("png", path, &oi, err, sizeof(err));
    CHECK_MSG(out == NULL && is_reason(err), "'%s'", err);
    err[0] = '\0';
    out = pnmf_output_open("y4m", tmp_path(path, sizeof(path), "missing/out.y4m"), &oi, err, sizeof(err));
    CHECK_MSG(out == NULL && is_reason(err), "'%s'", err);

    const PnmfOutputInfo bad = { .width = 0, .height = 16, .fps_num = 25, .fps_den = 1 };
    err[0] = '\0';
    out = pnmf_output_open("pgm", tmp_path(path, sizeof(path), "zero"), &bad, err, sizeof(err));
    CHECK(out == NULL && is_reason(err));
    CHECK(pnmf_output_close(&out, err, sizeof(err)) == 0); /* NULL-safe */
}

int main(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof(tmpdir), "%s/pnmf_test_input.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }

    test_sprites();
    test_life();
    test_png_round_trip();
    test_pgm_round_trip();
    test_y4m_round_trip();
    test_rgb_ppm();
    test_rgb_png();
    test_yuv_luma();
    test_size_change();
    test_bad_inputs();
    test_bad_outputs();

    rm_rf(tmpdir);
    return test_summary("test_input");
}
