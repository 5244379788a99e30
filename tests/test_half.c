/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Half size (format 17, src/upsample.h): the scaling up against its
 * definition written out sample by sample (the 6-tap quarter phases,
 * (1, -5, 20, 52, -5, 1) / 64 for an even output row or column and
 * (1, -5, 52, 20, -5, 1) / 64 for an odd one, over the coded samples
 * clamped at the edges, the product's sum in 1/4096 rounded and clamped),
 * on even and odd sizes and on extreme samples; the scaling down against
 * the 2 x 2 means. Through the API: a clip coded with `half` decodes to
 * frames of its size, equal to the frames of the same clip scaled down
 * and coded at that size, scaled up; the two files' windows are the
 * same bytes, and the encoder's squared error is that of the frames
 * shown against the frames pushed. The automatic choice's rule (the half-size trial point
 * above the line through the two full-size ones) on points worked out
 * by hand; the encoder writes what its trial decides, keeps the size of
 * a sharp screen-like clip, and makes no trial at fine steps.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "container.h"
#include "enc_internal.h"
#include "encode_file.h"
#include "test.h"
#include "upsample.h"

static unsigned rs = 777;
static unsigned urn(unsigned n) { rs = rs * 1103515245u + 12345u; return ((rs >> 8) & 0xFFFFFF) % n; }

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Output sample (y, x) of the ch x cw frame c scaled up, by the definition. */
static int up_ref(const uint8_t *c, int ch, int cw, int y, int x)
{
    static const int even[6] = { 1, -5, 20, 52, -5, 1 }, odd[6] = { 1, -5, 52, 20, -5, 1 };
    /* even: 3/4 of the way from coded sample y/2 - 1 to y/2; odd: 1/4 from y/2 to y/2 + 1 */
    const int *ky = y & 1 ? odd : even, *kx = x & 1 ? odd : even;
    const int py = y / 2 - !(y & 1), px = x / 2 - !(x & 1);
    long s = 0;
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++)
            s += (long)ky[i] * kx[j] * c[clampi(py - 2 + i, 0, ch - 1) * cw + clampi(px - 2 + j, 0, cw - 1)];
    s = (s + 2048) >> 12;
    return s < 0 ? 0 : s > 255 ? 255 : (int)s;
}

static void test_upsample(void)
{
    static const int sizes[][2] = { { 5, 7 }, { 6, 8 }, { 1, 1 }, { 3, 2 }, { 16, 11 } };
    for (size_t t = 0; t < sizeof(sizes) / sizeof(sizes[0]); t++) {
        const int ch = sizes[t][0], cw = sizes[t][1];
        for (int odd = 0; odd < 2; odd++) {
            /* the frame's size: twice the coded one, or one less (odd sides) */
            const int h = 2 * ch - (odd && ch > 1), w = 2 * cw - (odd && cw > 1);
            uint8_t *c = malloc((size_t)ch * cw), *o = malloc((size_t)h * (w + 3));
            int32_t *tmp = malloc((size_t)ch * w * sizeof(int32_t));
            for (int i = 0; i < ch * cw; i++) c[i] = (uint8_t)(urn(4) == 0 ? 255 * urn(2) : urn(256));
            pnmf_upsample2(c, ch, cw, o, w + 3, h, w, tmp);
            int bad = 0;
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++) bad += o[(size_t)y * (w + 3) + x] != up_ref(c, ch, cw, y, x);
            CHECK_MSG(bad == 0, "%dx%d coded, %dx%d out: %d samples off the definition", cw, ch, w, h, bad);
            free(c), free(o), free(tmp);
        }
    }
    /* a flat frame stays flat, and a frame of 0 and 255 overshoots only into the clamp */
    uint8_t c[4 * 4], o[8 * 8];
    int32_t tmp[4 * 8];
    memset(c, 77, sizeof(c));
    pnmf_upsample2(c, 4, 4, o, 8, 8, 8, tmp);
    int flat = 1;
    for (int i = 0; i < 64; i++) flat &= o[i] == 77;
    CHECK(flat);
}

static void test_downsample(void)
{
    enum { H = 7, W = 9 };
    uint8_t f[H * W], d[4 * 5];
    for (int i = 0; i < H * W; i++) f[i] = (uint8_t)urn(256);
    pnmf_downsample2(f, W, H, W, d);
    int bad = 0;
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 5; c++) {
            int s = 0, n = 0;
            for (int y = 2 * r; y < 2 * r + 2 && y < H; y++)
                for (int x = 2 * c; x < 2 * c + 2 && x < W; x++) s += f[y * W + x], n++;
            bad += d[r * 5 + c] != (s + n / 2) / n;
        }
    CHECK_MSG(bad == 0, "%d means off", bad);
    CHECK(pnmf_half_size(7) == 4 && pnmf_half_size(8) == 4 && pnmf_half_size(1) == 1);
}

/* A smooth scene (a few long waves) moving by fractions of a sample with
 * light noise, or a sharp one (random 0/255 cells of 2 x 2 samples) moving
 * by whole samples: m frames of w x h. */
static void make_clip(uint8_t *f, int m, int w, int h, int sharp)
{
    uint8_t *cells = malloc((size_t)(w + 64) * (h + 64));
    for (int i = 0; i < (w + 64) * (h + 64); i++) cells[i] = (uint8_t)(urn(2) * 255);
    for (int j = 0; j < m; j++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                int v;
                if (sharp) {
                    v = cells[((y + j) / 2) * (w + 64) + (x + 2 * j) / 2];
                } else {
                    const double yy = y + 0.37 * j, xx = x + 0.61 * j;
                    v = (int)lrint(128 + 60 * sin(yy * 0.05 + xx * 0.02) + 40 * cos(xx * 0.045 - yy * 0.015)) +
                        (int)urn(3) - 1;
                }
                f[((size_t)j * h + y) * w + x] = (uint8_t)clampi(v, 0, 255);
            }
    free(cells);
}

/* The file's header and its decoded frames (m of w x h). */
static int decode(const char *path, PnmfHeader *hd, uint8_t *out, int m, int w, int h)
{
    FILE *in = fopen(path, "rb");
    PnmfDecoder *d = NULL;
    int ret = in ? pnmf_dec_open(&d, in) : -1;
    if (ret == 0) {
        const PnmfStreamInfo *si = pnmf_dec_info(d);
        CHECK_MSG(si->width == w && si->height == h && si->frame_count == m, "%dx%d, %d frames", si->width, si->height,
                  si->frame_count);
        hd->half = (uint8_t)si->half;
        for (int j = 0; ret == 0 && j < m; j++) ret = pnmf_dec_read_frame(d, out + (size_t)j * w * h, w);
    }
    pnmf_dec_close(&d);
    if (in) fclose(in);
    return ret;
}

/* The bytes of the file after its header. */
static uint8_t *file_body(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    const long size = ftell(f);
    uint8_t *b = size > 80 ? malloc((size_t)size - 80) : NULL;
    fseek(f, 80, SEEK_SET);
    *n = b && fread(b, 1, (size_t)size - 80, f) == (size_t)size - 80 ? (size_t)size - 80 : 0;
    fclose(f);
    return b;
}

static void test_roundtrip(const char *dir)
{
    enum { M = 12, W = 47, H = 38, CW = 24, CH = 19 };
    static uint8_t f[M * W * H], small[M * CW * CH], a[M * W * H], b[M * CW * CH], up[M * W * H];
    make_clip(f, M, W, H, 0);
    for (int j = 0; j < M; j++) pnmf_downsample2(f + (size_t)j * W * H, W, H, W, small + (size_t)j * CW * CH);
    char pa[512], pb[512];
    snprintf(pa, sizeof pa, "%s/test_half_a.pnmf", dir);
    snprintf(pb, sizeof pb, "%s/test_half_b.pnmf", dir);
    PnmfEncSettings s;
    pnmf_enc_default_settings(&s);
    /* without the restoration filter, which a half-size clip fits to its
     * frames scaled up (tests/test_pfilter.c) */
    s.threads = 1, s.quality = 40, s.components = 0, s.restoration = 0;
    PnmfEncStats st;
    s.half = 1;
    test_encode_file(pa, &s, W, H, M, f, &st);
    const double sse_half = st.sse, psnr_half = st.psnr;
    s.half = 0;
    test_encode_file(pb, &s, CW, CH, M, small, &st);
    PnmfHeader ha = { 0 }, hb = { 0 };
    CHECK(decode(pa, &ha, a, M, W, H) == 0 && ha.half == 1);
    CHECK(decode(pb, &hb, b, M, CW, CH) == 0 && hb.half == 0);
    int32_t tmp[CH * W];
    for (int j = 0; j < M; j++) pnmf_upsample2(b + (size_t)j * CW * CH, CH, CW, up + (size_t)j * W * H, W, H, W, tmp);
    CHECK_MSG(!memcmp(a, up, sizeof(a)), "half-size frames differ from the small clip's scaled up");
    /* the encoder's error is that of the frames shown against the frames pushed */
    double sse = 0;
    for (size_t i = 0; i < sizeof(a); i++) sse += (double)(a[i] - f[i]) * (a[i] - f[i]);
    CHECK_MSG(sse == sse_half && fabs(psnr_half - 10 * log10(255.0 * 255.0 * sizeof(a) / sse)) < 1e-9,
              "encoder's error %.0f (%.4f dB), the frames shown %.0f", sse_half, psnr_half, sse);
    size_t na = 0, nb = 0;
    uint8_t *ba = file_body(pa, &na), *bb = file_body(pb, &nb);
    CHECK_MSG(ba && bb && na == nb && !memcmp(ba, bb, na), "bodies of %zu and %zu bytes", na, nb);
    free(ba), free(bb);
    remove(pa), remove(pb);
}

/* The rule: the half-size point PNMF_HALF_MARGIN dB above the line
 * through the two others, 0.1 dB more or less than that, and not more
 * than their span under the lower of them. */
static void test_rule(void)
{
    const double m = PNMF_HALF_MARGIN;
    /* at 400 bytes the line through (1000, 40) and (500, 36) says 36 - 4 ln(5/4) / ln 2 */
    const size_t b1[3] = { 1000, 500, 400 };
    const double l1 = 36 - 4 * log(1.25) / log(2.0);
    const double a1[3] = { 40, 36, l1 + m + 0.1 }, u1[3] = { 40, 36, l1 + m - 0.1 };
    CHECK(pnmf_enc_half_above(b1, a1) == 1 && pnmf_enc_half_above(b1, u1) == 0);
    /* at 700 bytes, between them: 36 + 4 ln(7/5) / ln 2 */
    const size_t b2[3] = { 1000, 500, 700 };
    const double l2 = 36 + 4 * log(1.4) / log(2.0);
    const double a2[3] = { 40, 36, l2 + m + 0.1 }, u2[3] = { 40, 36, l2 + m - 0.1 };
    CHECK(pnmf_enc_half_above(b2, a2) == 1 && pnmf_enc_half_above(b2, u2) == 0);
    /* no slope (the same bytes twice): fewer bytes and the margin more dB than the first */
    const size_t b3[3] = { 1000, 1000, 900 }, b4[3] = { 1000, 1000, 1100 };
    const double a3[3] = { 40, 40, 40 + m + 0.1 }, u3[3] = { 40, 40, 40 + m - 0.1 };
    CHECK(pnmf_enc_half_above(b3, a3) == 1 && pnmf_enc_half_above(b3, u3) == 0 && pnmf_enc_half_above(b4, a3) == 0);
    /* far under the lower point (a fractal zoom's trial): above the line, but more than the points' span under
     * them, so not taken; at the span's edge it is */
    const size_t b5[3] = { 47304, 32844, 15793 };
    const double f5[3] = { 44.06, 38.06, 26.95 }, e5[3] = { 44.06, 38.06, 32.1 };
    CHECK(pnmf_enc_half_above(b5, f5) == 0 && pnmf_enc_half_above(b5, e5) == 1);
}

/* PNMF_HALF_AUTO's pick: whether the file says half size; *trial, what
 * the trial says on the same frames (-1 where the encoder makes none). */
static int auto_pick(const char *dir, int sharp, int q, int *trial)
{
    enum { M = 14, W = 128, H = 96 };
    static uint8_t f[M * W * H], out[M * W * H];
    make_clip(f, M, W, H, sharp);
    char p[512];
    snprintf(p, sizeof p, "%s/test_half_auto.pnmf", dir);
    PnmfEncSettings s;
    pnmf_enc_default_settings(&s);
    CHECK(s.half == PNMF_HALF_AUTO);
    s.threads = 1, s.quality = q;
    PnmfEncStats st;
    test_encode_file(p, &s, W, H, M, f, &st);
    PnmfHeader h = { 0 };
    CHECK(decode(p, &h, out, M, W, H) == 0);
    remove(p);
    *trial = -1;
    if (q >= PNMF_HALF_MIN_Q) CHECK(pnmf_enc_half_pays(&s, W, H, 20, 1, f, PNMF_HALF_TRIAL_FRAMES, trial) == 0);
    return h.half;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    test_upsample();
    test_downsample();
    test_roundtrip(dir);
    test_rule();
    /* the encoder writes what its trial decides; a sharp clip keeps its
     * size, and so does any clip below -q PNMF_HALF_MIN_Q (no trial) */
    int trial, pick = auto_pick(dir, 0, 54, &trial);
    CHECK_MSG(trial >= 0 && pick == trial, "smooth clip at -q 54: the file says %d, the trial %d", pick, trial);
    pick = auto_pick(dir, 1, 54, &trial);
    CHECK_MSG(pick == 0 && trial == 0, "sharp clip at -q 54: the file says %d, the trial %d", pick, trial);
    pick = auto_pick(dir, 0, PNMF_HALF_MIN_Q - 1, &trial);
    CHECK_MSG(pick == 0, "smooth clip under -q %d: half size", PNMF_HALF_MIN_Q);
    return test_summary("test_half");
}
