/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The encoder's temporal filter of the source (src/enc_tf.h): on a
 * textured frame and a neighbour that is the frame moved by a known
 * vector plus noise, the filtered pixels of the interior blocks equal a
 * direct evaluation of the definition (the weight 1 / (1 + (d / t)^2) of
 * the 3x3 and block mean squared differences at the known vector);
 * frames whose neighbours are exact moved copies come out unchanged and
 * measure no noise; a noise-free frame plus independent noise, filtered
 * with three noisy moved copies, comes out nearer the noise-free frame,
 * and the noise measured is near the noise added.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "enc_tf.h"
#include "test.h"

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

/* The noise-free scene at (y, x), any integers: smooth shading and
 * blobs, textured enough that a block's match is unique. */
static int scene(int y, int x)
{
    const double v = 128 + 50 * sin(y * 0.37 + x * 0.11) + 40 * cos(x * 0.29 - y * 0.07) + 20 * sin(x * y * 0.013);
    return (int)lrint(v);
}

/* frame = the scene moved by (dy, dx) (frame(y, x) = scene(y + dy, x + dx)) plus noise of variance s2 */
static void make(uint8_t *f, int dy, int dx, double s2)
{
    for (int y = 0; y < ROWS; y++)
        for (int x = 0; x < COLS; x++) f[y * COLS + x] = clip(scene(y + dy, x + dx) + (s2 > 0 ? noise(s2) : 0));
}

static double mse(const uint8_t *a, const uint8_t *b)
{
    double s = 0;
    for (int i = 0; i < ROWS * COLS; i++) s += (double)(a[i] - b[i]) * (a[i] - b[i]);
    return s / (ROWS * COLS);
}

int main(void)
{
    static uint8_t cur[ROWS * COLS], nb1[ROWS * COLS], nb2[ROWS * COLS], nb3[ROWS * COLS], clean[ROWS * COLS];
    static uint8_t out[ROWS * COLS];

    /* exact moved copies: unchanged, and no noise */
    make(cur, 0, 0, 0);
    make(nb1, 1, -2, 0), make(nb2, 2, -4, 0), make(nb3, 3, -6, 0);
    const uint8_t *nbs[3] = { nb1, nb2, nb3 };
    CHECK(pnmf_tf_noise(cur, nb1, ROWS, COLS) < 0.1);
    CHECK(pnmf_tf_filter(out, cur, nbs, 3, ROWS, COLS, 4.0, 1.0) == 0);
    CHECK(memcmp(out, cur, sizeof(out)) == 0);
    /* without noise the filter leaves the frame as it is */
    make(nb1, 0, 0, 9.0);
    const uint8_t *one[1] = { nb1 };
    CHECK(pnmf_tf_filter(out, cur, one, 1, ROWS, COLS, 0, 1.0) == 0);
    CHECK(memcmp(out, cur, sizeof(out)) == 0);

    /* the definition, at the known vector, on the blocks whose match
     * support and neighbourhood lie in the frame */
    make(cur, 0, 0, 4.0);
    const int vy = 2, vx = -3;
    make(nb1, -vy, -vx, 4.0); /* nb1(y + vy, x + vx) = scene(y, x) */
    const double nv = 2.0, strength = 3.0, t = 2 * nv * strength;
    CHECK(pnmf_tf_filter(out, cur, one, 1, ROWS, COLS, nv, strength) == 0);
    int compared = 0, equal = 0;
    for (int y0 = 8; y0 + 16 <= ROWS; y0 += 8)
        for (int x0 = 8; x0 + 16 <= COLS; x0 += 8) {
            double bsum = 0;
            for (int y = 0; y < 8; y++)
                for (int x = 0; x < 8; x++) {
                    const int d = cur[(y0 + y) * COLS + x0 + x] - nb1[(y0 + y + vy) * COLS + x0 + x + vx];
                    bsum += d * d;
                }
            for (int y = y0; y < y0 + 8; y++)
                for (int x = x0; x < x0 + 8; x++) {
                    double s = 0;
                    for (int u = -1; u <= 1; u++)
                        for (int v = -1; v <= 1; v++) {
                            const int d = cur[(y + u) * COLS + x + v] - nb1[(y + u + vy) * COLS + x + v + vx];
                            s += d * d;
                        }
                    const double dd = (s / 9 + bsum / 64) / 2, r = dd / t;
                    const unsigned w = (unsigned)(1024.0 / (1 + r * r) + 0.5);
                    const unsigned a = 1024u * cur[y * COLS + x] + w * nb1[(y + vy) * COLS + x + vx], n = 1024 + w;
                    compared++;
                    equal += out[y * COLS + x] == (a + n / 2) / n;
                }
        }
    CHECK_MSG(compared > 0 && equal == compared, "%d of %d pixels as defined", equal, compared);

    /* a noise-free frame plus noise, filtered with three noisy moved
     * copies: nearer the noise-free frame, and the noise measured near the
     * noise added */
    const double s2 = 9.0;
    make(clean, 0, 0, 0);
    make(cur, 0, 0, s2);
    make(nb1, 1, 1, s2), make(nb2, 2, 2, s2), make(nb3, 3, 3, s2);
    const double nm = pnmf_tf_noise(cur, nb1, ROWS, COLS);
    CHECK_MSG(nm > s2 / 2 && nm < s2 * 2, "noise %.3f for %.3f", nm, s2);
    CHECK(pnmf_tf_filter(out, cur, nbs, 3, ROWS, COLS, nm, 1.0) == 0);
    const double noisy = mse(cur, clean), filtered = mse(out, clean);
    CHECK_MSG(filtered < 0.6 * noisy, "error %.3f from %.3f", filtered, noisy);
    /* in place, the same */
    static uint8_t inplace[ROWS * COLS];
    memcpy(inplace, cur, sizeof(inplace));
    CHECK(pnmf_tf_filter(inplace, inplace, nbs, 3, ROWS, COLS, nm, 1.0) == 0);
    CHECK(memcmp(inplace, out, sizeof(out)) == 0);
    return test_summary("test_tf");
}
