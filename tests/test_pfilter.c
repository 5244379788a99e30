/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The restoration filter (src/pfilter.h, window flags bit 22): the
 * classes of 4x4 blocks and the filtered samples against a direct
 * evaluation of the definition, sample by sample (frames of sizes that
 * are not multiples of 4, every tap at its extremes, classes off); the
 * encoder's fit recovers taps a frame was filtered with, and the error it
 * says its choice saves is the error a direct filtering saves; a noisy
 * clip is coded with the filter (a reader of version 19) and decodes to
 * the frames the encoder measured; a filter's mask and taps past their
 * bounds are refused as corrupt.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "container.h"
#include "enc_pfilter.h"
#include "encode_file.h"
#include "model.h"
#include "model_write.h"
#include "pfilter.h"
#include "residual.h"
#include "test.h"

static unsigned rs = 2024;
static unsigned urn(unsigned n) { rs = rs * 1103515245u + 12345u; return ((rs >> 8) & 0xFFFFFF) % n; }

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* sample (y, x) of the h x w frame f, (y, x) clamped to the frame */
static int at(const uint8_t *f, int h, int w, int y, int x) { return f[clampi(y, 0, h - 1) * w + clampi(x, 0, w - 1)]; }

/* The class of the block holding sample (y, x), from the definition:
 * all 16 positions of the block, those past the frame's edge too; the
 * activity level times 3 plus the direction. */
static int class_direct(const uint8_t *f, int h, int w, int y, int x)
{
    const int y0 = y / 4 * 4, x0 = x / 4 * 4;
    long hz = 0, vt = 0;
    for (int v = y0; v < y0 + 4; v++)
        for (int u = x0; u < x0 + 4; u++) {
            hz += labs(2L * at(f, h, w, v, u) - at(f, h, w, v, u - 1) - at(f, h, w, v, u + 1));
            vt += labs(2L * at(f, h, w, v, u) - at(f, h, w, v - 1, u) - at(f, h, w, v + 1, u));
        }
    const long a = hz + vt;
    const int level = a > 320 ? 4 : a > 128 ? 3 : a > 48 ? 2 : a > 16 ? 1 : 0;
    return 3 * level + (hz > 2 * vt ? 1 : vt > 2 * hz ? 2 : 0);
}

/* Sample (y, x) filtered, from the definition: the rhombus' 13 samples
 * weighed (the centre's weight 256 less twice the taps' sum), the sum
 * plus 128 divided by 256 rounding down, clamped. */
static int filtered_direct(const PnmfPFilter *pf, const uint8_t *f, int h, int w, int y, int x)
{
    const int k = class_direct(f, h, w, y, x);
    if (!(pf->mask >> k & 1)) return f[y * w + x];
    long s = 0, sum = 0;
    for (int dy = -2; dy <= 2; dy++)
        for (int dx = -2; dx <= 2; dx++) {
            if (abs(dy) + abs(dx) > 2 || (dy == 0 && dx == 0)) continue;
            int c = 0; /* the tap of (dy, dx) or of (-dy, -dx) */
            for (int i = 0; i < PNMF_PF_TAPS; i++)
                if ((pnmf_pf_off[i][0] == dy && pnmf_pf_off[i][1] == dx) ||
                    (pnmf_pf_off[i][0] == -dy && pnmf_pf_off[i][1] == -dx))
                    c = pf->c[k][i];
            s += (long)c * at(f, h, w, y + dy, x + dx), sum += c;
        }
    s += (256 - sum) * f[y * w + x] + 128;
    const long q = (long)floor((double)s / 256);
    return (int)(q < 0 ? 0 : q > 255 ? 255 : q);
}

/* A frame of regions of every activity and direction: flat, gentle and
 * textured noise, noisy stripes across and down at two strengths. */
static void make_frame(uint8_t *f, int h, int w)
{
    static const int amp[12] = { 0, 2, 12, 40, 120, 3, 3, 8, 8, 30, 30, 60 };
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const int region = (y * 4 / h) * 3 + (x * 3 / w);
            const int a = amp[region], stripes = region >= 5 && region <= 10;
            double base = 100 + 40 * sin(y * 0.2) * cos(x * 0.15);
            if (stripes) /* odd regions vary across, even ones down */
                base += a * sin((region % 2 ? x : y) * 2.1);
            const int n = stripes ? a / 4 : a;
            f[y * w + x] = (uint8_t)clampi((int)lrint(base) + (n ? (int)urn(2 * n + 1) - n : 0), 0, 255);
        }
}

/* A padded copy of the h x w frame f (pnmf_pf_pad()): the buffer, its
 * stride into *stride and its frame's origin into *org. */
static uint8_t *padded(const uint8_t *f, int h, int w, ptrdiff_t *stride, uint8_t **org)
{
    uint8_t *buf = malloc(pnmf_pf_padded_size(h, w, stride));
    *org = pnmf_pf_origin(buf, *stride);
    for (int y = 0; y < h; y++) memcpy(*org + y * *stride, f + (size_t)y * w, (size_t)w);
    pnmf_pf_pad(*org, *stride, h, w);
    return buf;
}

static void test_direct(int h, int w)
{
    uint8_t *f = malloc((size_t)h * w), *out = malloc((size_t)h * w), *org;
    uint8_t *cls = malloc((size_t)(h + 3) / 4 * ((w + 3) / 4));
    make_frame(f, h, w);
    ptrdiff_t stride;
    uint8_t *buf = padded(f, h, w, &stride, &org);
    /* the padding: every sample around the frame is its nearest edge sample */
    int bad = 0;
    for (int y = -PNMF_PF_PADY; y < h + PNMF_PF_PADY; y++)
        for (int x = -PNMF_PF_PADX; x < w + PNMF_PF_PADX; x++) bad += org[y * stride + x] != at(f, h, w, y, x);
    CHECK_MSG(bad == 0, "%dx%d: %d samples of the padding differ from the frame's edge", w, h, bad);
    /* the classes: every level of activity and every direction met */
    int level[5] = { 0 }, dir[3] = { 0 };
    pnmf_pf_classes(org, stride, h, w, cls);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const int k = cls[y / 4 * ((w + 3) / 4) + x / 4];
            bad += k != class_direct(f, h, w, y, x);
            level[k / 3]++, dir[k % 3]++;
        }
    CHECK_MSG(bad == 0, "%dx%d: %d samples of another class", w, h, bad);
    if (h >= 64 && w >= 64) {
        for (int a = 0; a < 5; a++) CHECK_MSG(level[a] > 0, "%dx%d: no block of activity %d", w, h, a);
        for (int d = 0; d < 3; d++) CHECK_MSG(dir[d] > 0, "%dx%d: no block of direction %d", w, h, d);
    }
    /* the samples, random taps, the extremes, some classes off */
    for (int trial = 0; trial < 6; trial++) {
        PnmfPFilter pf;
        memset(&pf, 0, sizeof pf);
        pf.on = 1, pf.mask = trial < 3 ? 32767 : 1 + (int)urn(32767);
        for (int k = 0; k < PNMF_PF_CLASSES; k++)
            for (int i = 0; i < PNMF_PF_TAPS; i++)
                pf.c[k][i] = (int16_t)(trial == 0 ? PNMF_PF_MAX_TAP : trial == 1 ? -PNMF_PF_MAX_TAP
                                                                                 : (int)urn(61) - 30);
        pnmf_pf_apply(&pf, org, stride, h, w, out, w, cls);
        bad = 0;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) bad += out[y * w + x] != filtered_direct(&pf, f, h, w, y, x);
        CHECK_MSG(bad == 0, "%dx%d, trial %d: %d samples differ from the definition", w, h, trial, bad);
    }
    free(f);
    free(out);
    free(cls);
    free(buf);
}

/* A frame filtered with known taps: the fit over it finds them, and the
 * squared error its choice saves is a direct filtering's. */
static void test_fit(void)
{
    enum { H = 96, W = 128, F = 3 };
    static uint8_t shown[F][H * W], src[F][H * W], tmp[H * W], cls[(H / 4) * (W / 4)];
    PnmfPFilter known;
    memset(&known, 0, sizeof known);
    known.on = 1, known.mask = (1 << PNMF_PF_CLASSES) - 1;
    static const int16_t taps[PNMF_PF_TAPS] = { 30, 8, 6, 24, -3, 5 };
    for (int k = 0; k < PNMF_PF_CLASSES; k++)
        for (int i = 0; i < PNMF_PF_TAPS; i++) known.c[k][i] = (int16_t)(taps[i] + (k - 7) * (i % 3 - 1));
    ptrdiff_t stride;
    uint8_t *org, *buf = NULL;
    for (int j = 0; j < F; j++) {
        make_frame(shown[j], H, W);
        free(buf);
        buf = padded(shown[j], H, W, &stride, &org);
        pnmf_pf_apply(&known, org, stride, H, W, src[j], W, cls);
    }
    static PnmfPfFit fit;
    memset(&fit, 0, sizeof fit);
    fit.w = W, fit.h = H, fit.tmp = tmp, fit.cls = cls, fit.pad = buf, fit.stride = stride;
    for (int j = 0; j < F; j++) pnmf_pf_fit_frame(&fit, shown[j], src[j]);
    CHECK(pnmf_pf_fit_taps(&fit) != 0);
    for (int j = 0; j < F; j++) pnmf_pf_fit_frame(&fit, shown[j], src[j]);
    /* the samples of each class */
    int n[PNMF_PF_CLASSES] = { 0 }, textured = 0;
    for (int j = 0; j < F; j++) {
        for (int y = 0; y < H; y++) memcpy(org + y * stride, shown[j] + y * W, W);
        pnmf_pf_pad(org, stride, H, W);
        pnmf_pf_classes(org, stride, H, W, cls);
        for (int b = 0; b < (H / 4) * (W / 4); b++) n[cls[b]] += 16;
    }
    /* the taps are fixed where the blocks are textured every way
     * (activity 2 to 4, no direction: within 2 / 256 of the known ones;
     * stripes leave the taps along them free), and take out nearly all of
     * the error in every textured class (the known taps all of it); in
     * gentle blocks (activity 1) the source's rounding is most of what the
     * filter changes, and the fitted taps take out part of it. Classes of
     * a few hundred samples. */
    for (int k = 3; k < PNMF_PF_CLASSES; k++) {
        if (n[k] < 400) continue;
        int off = 0;
        for (int i = 0; i < PNMF_PF_TAPS; i++) off += abs(fit.pf.c[k][i] - known.c[k][i]) > 2;
        CHECK_MSG((fit.pf.mask >> k & 1) && (k < 6 || k % 3 || off == 0), "class %d: %d taps more than 2 from the known ones",
                  k, off);
        CHECK_MSG(fit.e0[k] > 0 && fit.e1[k] < (k < 6 ? 1.0 : 0.05) * fit.e0[k], "class %d: error %lld filtered, %lld not",
                  k, (long long)fit.e1[k], (long long)fit.e0[k]);
        textured += k >= 6;
    }
    CHECK_MSG(textured >= 6, "%d textured classes of 400 samples or more", textured);
    PnmfPFilter pf;
    double dsse;
    pnmf_pf_fit_choose(&fit, 1.0, &pf, &dsse);
    CHECK(pf.on && dsse < 0);
    double direct = 0;
    for (int j = 0; j < F; j++) {
        for (int y = 0; y < H; y++) memcpy(org + y * stride, shown[j] + y * W, W);
        pnmf_pf_pad(org, stride, H, W);
        pnmf_pf_apply(&pf, org, stride, H, W, tmp, W, cls);
        for (int q = 0; q < H * W; q++)
            direct += (double)(tmp[q] - src[j][q]) * (tmp[q] - src[j][q]) -
                      (double)(shown[j][q] - src[j][q]) * (shown[j][q] - src[j][q]);
    }
    CHECK_MSG(fabs(direct - dsse) < 0.5, "the choice's change of error %.0f, a direct filtering's %.0f", dsse, direct);
    /* at a lambda no class pays for: off */
    pnmf_pf_fit_choose(&fit, 1e12, &pf, &dsse);
    CHECK(!pf.on && pf.mask == 0 && dsse == 0);
    free(buf);
}

/* A window with the filter, written again with its mask and taps at
 * their bounds and past them: read at the bounds, refused past them as
 * corrupt; the filter read back is the one written; a payload of version
 * 18 cannot say it. */
static void test_bounds(PnmfWindowModel *md, int rows, int cols, int m, const PnmfHeader *h)
{
    const PnmfPFilter keep = md->res.pf;
    PnmfWindowModel rd;
    uint8_t *buf = NULL;
    size_t size = 0;
    char err[200] = "";
    CHECK(pnmf_model_write(md, &buf, &size) == 0);
    int ret = pnmf_model_read(buf, size, rows, cols, rows, cols, m, h->components, h->w_step, h->r_step, &rd, err,
                              sizeof err);
    CHECK_MSG(ret == 0 && rd.res.pf.on && rd.res.pf.mask == keep.mask && !memcmp(rd.res.pf.c, keep.c, sizeof keep.c),
              "the filter read back: %d %s", ret, err);
    if (!ret) pnmf_model_free(&rd);
    ret = pnmf_model_read_version(18, buf, size, rows, cols, rows, cols, m, h->components, h->w_step, h->r_step, &rd,
                                  err, sizeof err);
    CHECK_MSG(ret == PNMF_ERR_CORRUPT && strstr(err, "unknown features"), "version 18: %d %s", ret, err);
    if (!ret) pnmf_model_free(&rd);
    pnmf_free(buf);
    const struct { int mask, tap, ok; const char *why; } edge[] = {
        { 32767, PNMF_PF_MAX_TAP, 1, "" }, { 32767, -PNMF_PF_MAX_TAP, 1, "" }, { 1, 0, 1, "" }, { 16384, 7, 1, "" },
        { 32767, PNMF_PF_MAX_TAP + 1, 0, "a tap out of range" }, { 31, -PNMF_PF_MAX_TAP - 1, 0, "a tap out of range" },
        { 0, 0, 0, "classes out of range" }, { 32768, 0, 0, "classes out of range" }, { 32769, 0, 0, "classes out of range" },
    };
    for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
        md->res.pf.mask = edge[i].mask;
        for (int k = 0; k < PNMF_PF_CLASSES; k++) md->res.pf.c[k][k % PNMF_PF_TAPS] = (int16_t)edge[i].tap;
        CHECK(pnmf_model_write(md, &buf, &size) == 0);
        ret = pnmf_model_read(buf, size, rows, cols, rows, cols, m, h->components, h->w_step, h->r_step, &rd, err,
                              sizeof err);
        if (edge[i].ok) {
            CHECK_MSG(ret == 0 && rd.res.pf.mask == edge[i].mask, "mask %d, tap %d: %d %s", edge[i].mask, edge[i].tap,
                      ret, err);
            if (!ret) pnmf_model_free(&rd);
        } else {
            CHECK_MSG(ret == PNMF_ERR_CORRUPT && strstr(err, edge[i].why), "mask %d, tap %d: %d %s", edge[i].mask,
                      edge[i].tap, ret, err);
        }
        pnmf_free(buf);
    }
    md->res.pf = keep;
}

/* Noisy footage of a slow pan at -q 40, one window: it takes the filter
 * (a reader of version 19) and decodes to the error the encoder measured;
 * coded at half size (half 1), the filter works on the frames scaled up. */
static void test_coded(const char *dir, int half)
{
    enum { ROWS = 64, COLS = 80, M = 24 };
    static uint8_t f[M][ROWS * COLS];
    for (int j = 0; j < M; j++)
        for (int y = 0; y < ROWS; y++)
            for (int x = 0; x < COLS; x++) {
                const double v = 128 + 60 * sin((y + 0.3 * j) * 0.21) * cos((x + 0.5 * j) * 0.17) + 20 * sin(x * y * 0.01);
                f[j][y * COLS + x] = (uint8_t)clampi((int)lrint(v) + (int)urn(13) - 6, 0, 255);
            }
    char path[512];
    snprintf(path, sizeof path, "%s/test_pfilter.pnmf", dir);
    PnmfEncSettings set;
    test_window_settings(&set, M, 40);
    set.half = half;
    PnmfEncStats st;
    test_encode_file(path, &set, COLS, ROWS, M, f[0], &st);
    PnmfHeader h;
    PnmfWindowModel md;
    const int rows = half ? (ROWS + 1) / 2 : ROWS, cols = half ? (COLS + 1) / 2 : COLS;
    int on = -1;
    if (test_first_window(path, rows, cols, &h, &md) == 0) {
        CHECK(h.min_reader_version >= 19 && h.half == half);
        on = md.res.pf.on;
        if (on && !half) test_bounds(&md, rows, cols, md.m, &h);
        pnmf_model_free(&md);
    }
    CHECK_MSG(on == 1, "noisy footage, half %d: window flags bit 22 %d", half, on);
    const double sse = test_decoded_sse(path, f[0], COLS, ROWS, M);
    remove(path);
    CHECK_MSG(fabs(sse - st.sse) < 0.5, "noisy footage, half %d: decoded squared error %.0f, the encoder's %.0f", half,
              sse, st.sse);
}

int main(int argc, char **argv)
{
    test_direct(7, 9);
    test_direct(37, 45);
    test_direct(64, 96);
    test_direct(75, 101);
    test_direct(6, 200);
    test_fit();
    test_coded(argc > 1 ? argv[1] : ".", 0);
    test_coded(argc > 1 ? argv[1] : ".", 1);
    return test_summary("test_pfilter");
}
