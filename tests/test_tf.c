/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The encoder's temporal filter of the source (src/enc_tf.h): on a
 * textured frame and a neighbour that is the frame moved by a known
 * vector plus noise, the filtered pixels of the interior blocks equal a
 * direct evaluation of the definition (the weight 1 / (1 + (d / t)^2) of
 * the 3x3 and block mean squared differences at the known vector and
 * the half sample around it that matches best, net of the noise the
 * interpolation removes);
 * frames whose neighbours are exact moved copies come out unchanged
 * (off the edge blocks, which the copies cannot match exactly) and
 * measure no noise; a noise-free frame plus independent noise, filtered
 * with three noisy moved copies, comes out nearer the noise-free frame,
 * and the noise measured is near the noise added; so does one whose
 * neighbours move by half samples. The filter's samples, bilinear and
 * 6-tap (a window of window flags bit 20), against the filters written out,
 * and the filtered pixels against the definition by either. A clip of
 * camera footage that starts still is coded with sub-pixel vectors. The
 * key window's first frame of a fast pan is coded as much finer as its
 * propagation weight says.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "container.h"
#include "enc_prop.h"
#include "enc_tf.h"
#include "encode_file.h"
#include "model.h"
#include "residual.h"
#include "residual_search.h"
#include "test.h"
#include "tuning.h"

enum { ROWS = 72, COLS = 88 };

static unsigned rs = 12345;
static unsigned urn(unsigned n) { rs = rs * 1103515245u + 12345u; return ((rs >> 8) & 0xFFFFFF) % n; }

/* Noise of variance about s2 (a sum of uniforms), rounded. */
static int noise(double s2)
{
    double u = 0;
    for (int i = 0; i < 12; i++) u += urn(1 << 16) / 65536.0;
    return (int)lrint((u - 6) * sqrt(s2));
}

static uint8_t clip(int v) { return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v); }

/* The noise-free scene at (y, x), any reals: smooth shading and blobs,
 * textured enough that a block's match is unique. */
static double scene_d(double y, double x)
{
    return 128 + 50 * sin(y * 0.37 + x * 0.11) + 40 * cos(x * 0.29 - y * 0.07) + 20 * sin(x * y * 0.013);
}

/* frame = the scene moved by (dy, dx) (frame(y, x) = scene(y + dy, x + dx)) plus noise of variance s2 */
static void makef(uint8_t *f, double dy, double dx, double s2)
{
    for (int y = 0; y < ROWS; y++)
        for (int x = 0; x < COLS; x++)
            f[y * COLS + x] = clip((int)lrint(scene_d(y + dy, x + dx)) + (s2 > 0 ? noise(s2) : 0));
}

static void make(uint8_t *f, int dy, int dx, double s2) { makef(f, dy, dx, s2); }

static double mse(const uint8_t *a, const uint8_t *b)
{
    double s = 0;
    for (int i = 0; i < ROWS * COLS; i++) s += (double)(a[i] - b[i]) * (a[i] - b[i]);
    return s / (ROWS * COLS);
}

static int sharp; /* the definitions below by the 6-tap filter (window flags bit 20) */

/* f at (y, x) moved by half samples (u, v in -1..1), in 1/16: the mean of
 * the two or four whole samples around the position (inside the frame);
 * with sharp, the 6-tap filter's half sample (2, -10, 40, 40, -10, 2) / 64
 * along each moved axis over the six samples around the position, its sum
 * in 1/4096 rounded to 1/16 and clamped to 0..255 gray levels. */
static int half(const uint8_t *f, int y, int x, int u, int v)
{
    if (!sharp) {
        const int y1 = y + (u > 0), y0 = y - (u < 0), x1 = x + (v > 0), x0 = x - (v < 0);
        return 4 * (f[y0 * COLS + x0] + f[y0 * COLS + x1] + f[y1 * COLS + x0] + f[y1 * COLS + x1]);
    }
    static const int whole[6] = { 0, 0, 64, 0, 0, 0 }, mid[6] = { 2, -10, 40, 40, -10, 2 };
    /* the taps on rows y - 2 + i (from y - 3 for a half sample above) */
    const int *ky = u ? mid : whole, *kx = v ? mid : whole, sy = y - 2 - (u < 0), sx = x - 2 - (v < 0);
    int s = 128;
    for (int i = 0; i < 6; i++)
        for (int k = 0; k < 6; k++) s += ky[i] * kx[k] * f[(sy + i) * COLS + sx + k];
    return s < 0 ? 0 : s >> 8 > 255 * 16 ? 255 * 16 : s >> 8;
}

/* pnmf_tf_sample() at every quarter phase, past every edge, against the
 * two filters written out: the bilinear weights (4 - f) and f along each
 * axis on the clamped whole samples, unrounded (in 1/16); the 6-tap
 * filter's taps by phase on the six clamped samples at offsets -2..3 of
 * each axis, (sum + 128) >> 8, clamped. */
static void test_sample(void)
{
    static const int K[4][6] = { { 0, 0, 64, 0, 0, 0 }, { 1, -5, 52, 20, -5, 1 }, { 2, -10, 40, 40, -10, 2 },
                                 { 1, -5, 20, 52, -5, 1 } };
    enum { R = 11, C = 13 };
    uint8_t f[R * C];
    for (int i = 0; i < R * C; i++) f[i] = (uint8_t)(i % 5 == 0 ? 255 * (urn(2)) : urn(256)); /* extremes often */
#define G(y, x) f[((y) < 0 ? 0 : (y) >= R ? R - 1 : (y)) * C + ((x) < 0 ? 0 : (x) >= C ? C - 1 : (x))]
    int bad = 0, checked = 0, differ = 0;
    for (int Y = -12; Y < 4 * R + 12; Y++)
        for (int X = -12; X < 4 * C + 12; X++) {
            const int fy = Y & 3, fx = X & 3, y = (Y - fy) / 4, x = (X - fx) / 4;
            const int bil = (4 - fy) * ((4 - fx) * G(y, x) + fx * G(y, x + 1)) + fy * ((4 - fx) * G(y + 1, x) + fx * G(y + 1, x + 1));
            int s = 128;
            for (int i = 0; i < 6; i++)
                for (int k = 0; k < 6; k++) s += K[fy][i] * K[fx][k] * G(y - 2 + i, x - 2 + k);
            const int six = s < 0 ? 0 : s >> 8 > 255 * 16 ? 255 * 16 : s >> 8;
            bad += pnmf_tf_sample(f, R, C, Y, X, 0) != bil;
            bad += pnmf_tf_sample(f, R, C, Y, X, 1) != six;
            differ += six != bil;
            checked += 2;
        }
#undef G
    CHECK_MSG(bad == 0, "%d of %d samples differ from the definitions", bad, checked);
    CHECK_MSG(differ > checked / 4, "the filters differ on %d of %d", differ, checked / 2);
}

/* The error of the 8x8 block at (y0, x0) of cur against f at the vector
 * (vy, vx) and the half samples (u, v), plus the noise variance nv the
 * interpolation removes from f: the filter's choice of the half sample. */
static double half_err(const uint8_t *cur, const uint8_t *f, int y0, int x0, int vy, int vx, int u, int v, double nv)
{
    double e = 0;
    for (int y = y0; y < y0 + 8; y++)
        for (int x = x0; x < x0 + 8; x++) {
            const double d = cur[y * COLS + x] - half(f, y + vy, x + vx, u, v) / 16.0;
            e += d * d;
        }
    return e + 64 * nv * (1 - (u ? 0.5 : 1) * (v ? 0.5 : 1));
}

/* What the file holds of a window: its steps, whether it continues the
 * one before, whether its vectors are in quarter samples. */
typedef struct WinInfo {
    int step, key, cont, subpel;
} WinInfo;

/* The m frames f (ROWS x COLS each) encoded at -q 40 in windows of w
 * frames, no components, into path (removed after): the first max
 * windows' WinInfo into wi. Returns how many it read. */
static int encode_windows(const char *path, const uint8_t *f, int m, int w, WinInfo *wi, int max)
{
    PnmfEncSettings set;
    pnmf_enc_default_settings(&set);
    set.components = 0, set.window = w, set.threads = 1, set.quality = 40;
    PnmfEncStats st;
    test_encode_file(path, &set, COLS, ROWS, m, f, &st);
    FILE *in = fopen(path, "rb");
    PnmfContainerReader *r = NULL;
    char err[200] = "";
    CHECK_MSG(in && pnmf_container_reader_open(&r, in, err, sizeof err) == 0, "%s", err);
    int nw = 0;
    if (r) {
        const PnmfHeader *h = pnmf_container_reader_header(r);
        const uint8_t *pl;
        size_t size;
        uint32_t first, count;
        while (nw < max && pnmf_container_read_window(r, &pl, &size, &first, &count, err, sizeof err) == 1) {
            PnmfWindowModel md;
            CHECK_MSG(pnmf_model_read(pl, size, ROWS, COLS, ROWS, COLS, (int)count, h->components, h->w_step,
                                      h->r_step, &md, err, sizeof err) == 0, "%s", err);
            wi[nw] = (WinInfo){ md.res.step16, md.res.key_step16, pnmf_container_window_continues(r), md.res.subpel };
            nw++;
            pnmf_model_free(&md);
        }
        pnmf_container_reader_close(&r);
    }
    if (in) fclose(in);
    remove(path);
    return nw;
}

/* A clip of the scene moving by fractions of a sample, with noise of
 * variance 6 (camera footage), coded in windows of 8 frames: each
 * window's steps as the file holds them. */
static void steps_of_clip(const char *path, int *step, int *key, int *cont, int *nw)
{
    enum { M = 24, W = 8 };
    static uint8_t f[M][ROWS * COLS];
    for (int j = 0; j < M; j++) makef(f[j], 0.37 * j, 0.61 * j, 6.0);
    WinInfo wi[3];
    *nw = encode_windows(path, f[0], M, W, wi, 3);
    for (int i = 0; i < *nw; i++) step[i] = wi[i].step, key[i] = wi[i].key, cont[i] = wi[i].cont;
}

/* A continuing window of camera footage (its first frame filtered: the
 * noise measured) codes that frame 2 times finer than its step
 * (PNMF_CONT_NOISY_DIV), a refresh the still parts of the scene copy on. */
static void test_refresh(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/test_tf_refresh.pnmf", dir);
    int step[3], key[3], cont[3], nw;
    steps_of_clip(path, step, key, cont, &nw);
    CHECK_MSG(nw == 3 && !cont[0] && cont[1] && cont[2], "%d windows", nw);
    for (int i = 1; i < nw; i++) {
        const int want = (int)lrint(step[i] / PNMF_CONT_NOISY_DIV);
        CHECK_MSG(key[i] < step[i] && key[i] == (want < 16 ? 16 : want), "noisy window %d: steps %d, first frame %d", i,
                  step[i], key[i]);
    }
    /* the key window's first frame: 4 times finer (PNMF_KEY_STEP_DIV) */
    CHECK_MSG(nw >= 1 && key[0] == (step[0] + PNMF_KEY_STEP_DIV / 2) / PNMF_KEY_STEP_DIV, "key window: steps %d, first frame %d",
              step[0], key[0]);
}

/* A clip that starts still (a title, a lead-in) and then moves by
 * fractions of a sample under camera noise, one window of 32 frames at
 * -q 40: the probe of sub-pixel vectors, which sees no change in the
 * first frames, looks at frames spread over the window and takes quarter
 * samples, and so does the window the encoder writes. */
static void test_still_start(const char *dir)
{
    enum { M = 32, STILL = 8 };
    static uint8_t f[M][ROWS * COLS];
    for (int j = 0; j < M; j++)
        if (j < STILL)
            makef(f[j], 0, 0, 0);
        else
            makef(f[j], 0.37 * (j - STILL + 1), 0.61 * (j - STILL + 1), 6.0);
    double gain, exact;
    CHECK_MSG(pnmf_residual_subpel_pays(f[0], M, ROWS * COLS, ROWS, COLS, &gain, &exact),
              "still start: gain %.3f, exact %.3f", gain, exact);
    char path[512];
    snprintf(path, sizeof path, "%s/test_tf_still.pnmf", dir);
    WinInfo wi;
    const int subpel = encode_windows(path, f[0], M, M, &wi, 1) == 1 ? wi.subpel : -1;
    CHECK_MSG(subpel == 1, "still start: window with sub-pixel vectors %d", subpel);
}

/* A fast pan under camera noise (20.5 samples a frame across 88: each
 * frame's content gone four frames on), one window of 32 frames at -q
 * 40: its first frame's propagation weight (enc_prop.h) is small, and the
 * key window codes that frame sqrt(w) times finer than its step
 * (PNMF_KEY_PROP_STRENGTH 3), not PNMF_KEY_STEP_DIV times. */
static void test_key_prop(const char *dir)
{
    enum { M = 32 };
    static uint8_t f[M][ROWS * COLS];
    for (int j = 0; j < M; j++) makef(f[j], 0.25 * j, 20.5 * j, 6.0);
    const double w = pnmf_enc_propagation(f[0], M, ROWS * COLS, ROWS, COLS);
    const double div = pow(w, PNMF_KEY_PROP_STRENGTH / 6.0);
    CHECK_MSG(w >= 1.0 && div < PNMF_KEY_STEP_DIV - 0.5, "fast pan: weight %.3f", w);
    char path[512];
    snprintf(path, sizeof path, "%s/test_tf_keyprop.pnmf", dir);
    WinInfo wi;
    const int nw = encode_windows(path, f[0], M, M, &wi, 1);
    CHECK_MSG(nw == 1 && wi.subpel && !wi.cont, "fast pan: %d windows", nw);
    const int want = (int)lrint(wi.step / (div > 1.0 ? div : 1.0));
    CHECK_MSG(nw == 1 && wi.key == want, "fast pan: steps %d, first frame %d, by the weight %d", wi.step, wi.key, want);
}

/* Window flags bit 21: frame j's reference 15 is the key window's frame 0
 * where the window has the bit (pnmf_residual_frame_refs()), D_{j-16}
 * otherwise. Noisy footage of a slow pan, a box over most of it from
 * frame 1 to 30, one window of 48 frames at -q 40: the window has the
 * bit (a reader of version 18), and the file decodes to the frames the
 * encoder measured (its squared error); tests/lterm.sh finds the
 * reference used on a rendered clip. */
static void test_lterm(const char *dir)
{
    uint8_t a[16][4], k0[4];
    const uint8_t *ref[PNMF_RES_REFS], *out[PNMF_RES_REFS];
    for (int t = 0; t < PNMF_RES_REFS; t++) ref[t] = a[t];
    PnmfResidual r;
    memset(&r, 0, sizeof r);
    r.key0 = k0;
    pnmf_residual_frame_refs(&r, 20, ref, -1, NULL, out);
    CHECK(out[PNMF_RES_REFS - 1] == a[PNMF_RES_REFS - 1]);
    r.lterm = 1;
    pnmf_residual_frame_refs(&r, 20, ref, -1, NULL, out);
    CHECK(out[PNMF_RES_REFS - 1] == k0);
    for (int t = 0; t < PNMF_RES_REFS - 1; t++) CHECK(out[t] == a[t]);

    enum { M = 48 };
    static uint8_t f[M][ROWS * COLS];
    for (int j = 0; j < M; j++) {
        makef(f[j], 0.1 * j, 0.15 * j, 6.0);
        if (j >= 1 && j <= 30) /* a flat box over most of the scene, gone after frame 30 */
            for (int y = 4; y < ROWS - 4; y++) memset(f[j] + y * COLS + 4, 40, COLS - 8);
    }
    char path[512];
    snprintf(path, sizeof path, "%s/test_tf_lterm.pnmf", dir);
    PnmfEncSettings set;
    test_window_settings(&set, M, 40);
    PnmfEncStats st;
    test_encode_file(path, &set, COLS, ROWS, M, f[0], &st);
    PnmfHeader h;
    PnmfWindowModel md;
    int lterm = -1;
    if (test_first_window(path, ROWS, COLS, &h, &md) == 0) {
        CHECK(h.min_reader_version >= 18); /* 19 with the restoration filter */
        lterm = md.res.lterm;
        pnmf_model_free(&md);
    }
    CHECK_MSG(lterm == 1, "a box over the scene: window flags bit 21 %d", lterm);
    /* decoded, against the encoder's own measure */
    const double sse = test_decoded_sse(path, f[0], COLS, ROWS, M);
    remove(path);
    CHECK_MSG(fabs(sse - st.sse) < 0.5, "a box over the scene: decoded squared error %.0f, the encoder's %.0f", sse, st.sse);
}

int main(int argc, char **argv)
{
    static uint8_t cur[ROWS * COLS], nb1[ROWS * COLS], nb2[ROWS * COLS], nb3[ROWS * COLS], clean[ROWS * COLS];
    static uint8_t out[ROWS * COLS];

    /* exact moved copies: unchanged where they hold the exact copy (the
     * blocks off the frame's edge), and no noise */
    make(cur, 0, 0, 0);
    make(nb1, 1, -2, 0), make(nb2, 2, -4, 0), make(nb3, 3, -6, 0);
    const uint8_t *nbs[3] = { nb1, nb2, nb3 };
    CHECK(pnmf_tf_noise(cur, nb1, ROWS, COLS) < 0.1);
    CHECK(pnmf_tf_filter(out, cur, nbs, 3, ROWS, COLS, 4.0, 1.0, 0) == 0);
    int moved = 0;
    for (int y = 8; y < ROWS - 8; y++)
        for (int x = 8; x < COLS - 8; x++) moved += out[y * COLS + x] != cur[y * COLS + x];
    CHECK_MSG(moved == 0, "%d interior pixels changed", moved);
    /* without noise the filter leaves the frame as it is */
    make(nb1, 0, 0, 9.0);
    const uint8_t *one[1] = { nb1 };
    CHECK(pnmf_tf_filter(out, cur, one, 1, ROWS, COLS, 0, 1.0, 0) == 0);
    CHECK(memcmp(out, cur, sizeof(out)) == 0);

    /* the definition, at the known whole vector and the half-sample
     * vector around it that the test chooses itself, on the blocks whose
     * match support and neighbourhood lie in the frame, aligned by either
     * filter */
    make(cur, 0, 0, 4.0);
    const int vy = 2, vx = -3;
    make(nb1, -vy, -vx, 4.0); /* nb1(y + vy, x + vx) = scene(y, x) */
    const double nv = 2.0, strength = 3.0, t = 2 * nv * strength;
    for (sharp = 0; sharp < 2; sharp++) {
    CHECK(pnmf_tf_filter(out, cur, one, 1, ROWS, COLS, nv, strength, sharp) == 0);
    int compared = 0, equal = 0, halves = 0;
    for (int y0 = 8; y0 + 16 <= ROWS; y0 += 8)
        for (int x0 = 8; x0 + 16 <= COLS; x0 += 8) {
            /* the half-sample vector (hy, hx, in half samples around the
             * whole one): the smallest block error, plus the noise variance
             * the interpolation removes from the neighbour */
            int hy = 0, hx = 0;
            double best = half_err(cur, nb1, y0, x0, vy, vx, 0, 0, nv);
            for (int u = -1; u <= 1; u++)
                for (int v = -1; v <= 1; v++) {
                    const double e = half_err(cur, nb1, y0, x0, vy, vx, u, v, nv);
                    if ((u || v) && e < best) best = e, hy = u, hx = v;
                }
            halves += hy || hx;
            double bsum = 0;
            for (int y = 0; y < 8; y++)
                for (int x = 0; x < 8; x++) {
                    const double d = cur[(y0 + y) * COLS + x0 + x] - half(nb1, y0 + y + vy, x0 + x + vx, hy, hx) / 16.0;
                    bsum += d * d;
                }
            for (int y = y0; y < y0 + 8; y++)
                for (int x = x0; x < x0 + 8; x++) {
                    double s = 0;
                    for (int u = -1; u <= 1; u++)
                        for (int v = -1; v <= 1; v++) {
                            const double d = cur[(y + u) * COLS + x + v] - half(nb1, y + u + vy, x + v + vx, hy, hx) / 16.0;
                            s += d * d;
                        }
                    const double dd = (s / 9 + bsum / 64) / 2, r = dd / t;
                    const unsigned w = (unsigned)(1024.0 / (1 + r * r) + 0.5);
                    const unsigned a = 16 * 1024u * cur[y * COLS + x] + w * (unsigned)half(nb1, y + vy, x + vx, hy, hx);
                    const unsigned n = 1024 + w;
                    compared++;
                    equal += out[y * COLS + x] == (a + 8 * n) / (16 * n);
                }
        }
    CHECK_MSG(compared > 0 && equal == compared, "filter %d: %d of %d pixels as defined", sharp, equal, compared);
    /* the noise penalty keeps the whole vector of a whole-sample motion in most blocks */
    CHECK_MSG(halves * 4 < compared / 64, "filter %d: %d of %d blocks at a half sample", sharp, halves, compared / 64);
    }
    sharp = 0;
    /* a neighbour moved by fractions: the filters align it differently */
    static uint8_t by_filter[2][ROWS * COLS];
    makef(nb1, -vy - 0.45, -vx - 0.45, 4.0);
    for (int s = 0; s < 2; s++) CHECK(pnmf_tf_filter(by_filter[s], cur, one, 1, ROWS, COLS, nv, strength, s) == 0);
    CHECK(memcmp(by_filter[0], by_filter[1], sizeof(out)) != 0);

    /* a noise-free frame plus noise, filtered with three noisy moved
     * copies: nearer the noise-free frame, and the noise measured near the
     * noise added */
    const double s2 = 9.0;
    make(clean, 0, 0, 0);
    make(cur, 0, 0, s2);
    make(nb1, 1, 1, s2), make(nb2, 2, 2, s2), make(nb3, 3, 3, s2);
    const double nm = pnmf_tf_noise(cur, nb1, ROWS, COLS);
    CHECK_MSG(nm > s2 / 2 && nm < s2 * 2, "noise %.3f for %.3f", nm, s2);
    CHECK(pnmf_tf_filter(out, cur, nbs, 3, ROWS, COLS, nm, 1.0, 0) == 0);
    const double noisy = mse(cur, clean), filtered = mse(out, clean);
    CHECK_MSG(filtered < 0.6 * noisy, "error %.3f from %.3f", filtered, noisy);
    /* neighbours moved by half samples: aligned at the half sample, they
     * take out most of the noise as well */
    makef(nb1, 0.5, 0.5, s2), makef(nb2, 1.5, -0.5, s2), makef(nb3, -0.5, 1.5, s2);
    CHECK(pnmf_tf_filter(out, cur, nbs, 3, ROWS, COLS, nm, 1.0, 0) == 0);
    const double halfmoved = mse(out, clean);
    CHECK_MSG(halfmoved < 0.7 * noisy, "error %.3f from %.3f (half samples)", halfmoved, noisy);
    makef(nb1, 1, 1, s2), makef(nb2, 2, 2, s2), makef(nb3, 3, 3, s2);
    CHECK(pnmf_tf_filter(out, cur, nbs, 3, ROWS, COLS, nm, 1.0, 0) == 0);
    /* in place, the same */
    static uint8_t inplace[ROWS * COLS];
    memcpy(inplace, cur, sizeof(inplace));
    CHECK(pnmf_tf_filter(inplace, inplace, nbs, 3, ROWS, COLS, nm, 1.0, 0) == 0);
    CHECK(memcmp(inplace, out, sizeof(out)) == 0);
    test_sample();
    test_refresh(argc > 1 ? argv[1] : ".");
    test_still_start(argc > 1 ? argv[1] : ".");
    test_key_prop(argc > 1 ? argv[1] : ".");
    test_lterm(argc > 1 ? argv[1] : ".");
    return test_summary("test_tf");
}
