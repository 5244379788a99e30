/* SPDX-License-Identifier: GPL-2.0-or-later */
/* FFmpeg input and the PNG/PGM/y4m outputs, with the real libraries:
 * exact round trips of a known pattern, RGB to BT.601 full-range luma,
 * a mid-stream size change, a missing file, and the bundled samples. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input/demuxer.h"
#include "output/muxer.h"
#include "test.h"

static char tmpdir[256];

static uint8_t pattern(int f, int y, int x) { return (uint8_t)(f * 37 + y * 11 + x * 5 + (x * y) % 7); }

/* Write 5 frames of 37x23 with an output module, read them back exactly. */
static void roundtrip(const char *format, const char *dest, const char *readpath, int fps_num, int fps_den)
{
    enum { W = 37, H = 23, F = 5 };
    uint8_t frame[W * H], back[W * H];
    char err[256] = "";
    PnmfOutputInfo oi = { W, H, fps_num, fps_den };
    PnmfOutput *out = pnmf_output_open(format, dest, &oi, err, sizeof err);
    CHECK_MSG(out != NULL, "%s: open %s: %s", format, dest, err);
    if (!out) return;
    for (int f = 0; f < F; f++) {
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) frame[y * W + x] = pattern(f, y, x);
        CHECK(pnmf_output_write(out, frame, W, err, sizeof err) == 0);
    }
    CHECK(pnmf_output_close(&out, err, sizeof err) == 0);
    PnmfInputInfo info;
    PnmfInput *in = pnmf_input_open(readpath, &info, err, sizeof err);
    CHECK_MSG(in != NULL, "%s: read %s: %s", format, readpath, err);
    if (!in) return;
    CHECK(info.width == W && info.height == H);
    if (!strcmp(format, "y4m")) CHECK(info.fps_num * fps_den == fps_num * info.fps_den);
    int n = 0, exact = 1, r;
    while ((r = pnmf_input_read(in, back, W, err, sizeof err)) == 1) {
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) exact &= back[y * W + x] == pattern(n, y, x);
        n++;
    }
    CHECK_MSG(r == 0, "%s: read error %s", format, err);
    CHECK_MSG(n == F, "%s: %d frames read back", format, n);
    CHECK_MSG(exact, "%s: pixels differ after the round trip", format);
    pnmf_input_close(&in);
}

static void write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    fwrite(data, 1, size, f);
    fclose(f);
}

static void write_pgm(const char *path, int w, int h, uint8_t v)
{
    char hdr[64];
    int l = snprintf(hdr, sizeof hdr, "P5\n%d %d\n255\n", w, h);
    uint8_t *buf = malloc(l + (size_t)w * h);
    memcpy(buf, hdr, l);
    memset(buf + l, v, (size_t)w * h);
    write_file(path, buf, l + (size_t)w * h);
    free(buf);
}

static void test_rgb(void)
{
    /* a PPM (RGB24) with known colours: BT.601 luma 0.299 R + 0.587 G + 0.114 B,
     * full range */
    static const uint8_t rgb[6][3] = { { 255, 0, 0 }, { 0, 255, 0 }, { 0, 0, 255 },
                                       { 255, 255, 255 }, { 0, 0, 0 }, { 100, 150, 200 } };
    uint8_t buf[64];
    int l = snprintf((char *)buf, sizeof buf, "P6\n3 2\n255\n");
    for (int i = 0; i < 6; i++) memcpy(buf + l + 3 * i, rgb[i], 3);
    char path[300];
    snprintf(path, sizeof path, "%s/colours.ppm", tmpdir);
    write_file(path, buf, l + 18);
    char err[256] = "";
    PnmfInputInfo info;
    PnmfInput *in = pnmf_input_open(path, &info, err, sizeof err);
    CHECK_MSG(in != NULL, "ppm: %s", err);
    if (!in) return;
    uint8_t g[6];
    CHECK(pnmf_input_read(in, g, 3, err, sizeof err) == 1);
    for (int i = 0; i < 6; i++) {
        const double y = 0.299 * rgb[i][0] + 0.587 * rgb[i][1] + 0.114 * rgb[i][2];
        CHECK_MSG(fabs(g[i] - y) <= 1.0, "colour %d: luma %d, expected %.1f", i, g[i], y);
    }
    pnmf_input_close(&in);
}

static void test_size_change(void)
{
    char path[300], pat[300], err[256] = "";
    snprintf(path, sizeof path, "%s/seq", tmpdir);
    mkdir(path, 0777);
    for (int i = 1; i <= 3; i++) {
        snprintf(path, sizeof path, "%s/seq/f_%03d.pgm", tmpdir, i);
        write_pgm(path, i < 3 ? 8 : 10, 6, (uint8_t)(40 * i));
    }
    snprintf(pat, sizeof pat, "%s/seq/f_%%03d.pgm", tmpdir);
    PnmfInputInfo info;
    PnmfInput *in = pnmf_input_open(pat, &info, err, sizeof err);
    CHECK_MSG(in != NULL, "sequence: %s", err);
    if (!in) return;
    CHECK(info.width == 8 && info.height == 6);
    uint8_t buf[8 * 6];
    CHECK(pnmf_input_read(in, buf, 8, err, sizeof err) == 1 && buf[0] == 40);
    CHECK(pnmf_input_read(in, buf, 8, err, sizeof err) == 1 && buf[0] == 80);
    err[0] = 0;
    CHECK(pnmf_input_read(in, buf, 8, err, sizeof err) == -1);
    CHECK_MSG(strstr(err, "10x6") && strstr(err, "8x6"), "size change reason: '%s'", err);
    pnmf_input_close(&in);
}

static void test_samples(void)
{
    const char *dir = getenv("PNMF_SAMPLES");
    if (!dir) dir = "samples";
    char path[300], err[256] = "";
    snprintf(path, sizeof path, "%s/sprites.mkv", dir);
    PnmfInputInfo info;
    PnmfInput *in = pnmf_input_open(path, &info, err, sizeof err);
    CHECK_MSG(in != NULL, "%s: %s", path, err);
    if (!in) return;
    CHECK(info.width == 160 && info.height == 120);
    CHECK(info.fps_num == 20 * info.fps_den);
    uint8_t *buf = malloc(160 * 120);
    int n = 0;
    double mean = 0;
    while (pnmf_input_read(in, buf, 160, err, sizeof err) == 1) {
        if (n == 0)
            for (int q = 0; q < 160 * 120; q++) mean += buf[q] / (160.0 * 120.0);
        n++;
    }
    CHECK_MSG(n == 60, "sprites.mkv: %d frames", n);
    /* bright sprites on a darker background: the mean is well inside (0, 255) */
    CHECK(mean > 20 && mean < 200);
    free(buf);
    pnmf_input_close(&in);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/pnmf_test_input_XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    char dest[300], rd[300];
    snprintf(dest, sizeof dest, "%s/png", tmpdir);
    snprintf(rd, sizeof rd, "%s/png/frame_%%06d.png", tmpdir);
    roundtrip("png", dest, rd, 25, 1);
    snprintf(dest, sizeof dest, "%s/pgm", tmpdir);
    snprintf(rd, sizeof rd, "%s/pgm/frame_%%06d.pgm", tmpdir);
    roundtrip("pgm", dest, rd, 25, 1);
    snprintf(dest, sizeof dest, "%s/clip.y4m", tmpdir);
    roundtrip("y4m", dest, dest, 30000, 1001);
    test_rgb();
    test_size_change();
    test_samples();
    char err[256] = "";
    PnmfInputInfo info;
    CHECK(pnmf_input_open("/nonexistent/clip.mp4", &info, err, sizeof err) == NULL && err[0]);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    return test_summary("test_input");
}
