/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The propagation weight of a window's first frame (src/enc_prop.h)
 * against its definition worked out by hand on clips whose blocks move
 * by whole blocks of the scaled frames: a random texture that stays,
 * one that pans up one block a frame (within the blocks' own search)
 * and three blocks a frame (found through the frame's displacement),
 * flat rows entering below it. On such clips every textured block of
 * frame j > 0 matches the block it came from exactly, a flat one passes
 * nothing on, so a block of texture with cost c = intra + floor, shown in
 * frames 0..k of the window, is worth c + c f + ... + c f^k, with f =
 * 1 - floor / c, and the weight is the sum over frame 0's blocks of
 * that over the sum of c. Frames that are unrelated noise pass (almost)
 * nothing on, and frames too small to measure give 0.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "enc_prop.h"
#include "test.h"
#include "tuning.h"

enum { ROWS = 128, COLS = 160, M = 6, S = 4, B = 4 }; /* B x B blocks of the frames scaled down S times */

static unsigned rs = 4242;
static unsigned urn(unsigned n) { rs = rs * 1103515245u + 12345u; return ((rs >> 8) & 0xFFFFFF) % n; }

/* The frame scaled down by S (4 x 4 means, rounded half up): sample (y, x). */
static int scaled(const uint8_t *f, int y, int x)
{
    int s = 0;
    for (int dy = 0; dy < S; dy++)
        for (int dx = 0; dx < S; dx++) s += f[(size_t)(S * y + dy) * COLS + S * x + dx];
    return (s + S * S / 2) / (S * S);
}

/* The intra cost plus floor of block (by, bx) of the scaled frame: its
 * samples' absolute differences from their mean (rounded half up). */
static double block_cost(const uint8_t *f, int by, int bx)
{
    int v[B * B], sum = 0;
    for (int y = 0; y < B; y++)
        for (int x = 0; x < B; x++) sum += v[y * B + x] = scaled(f, B * by + y, B * bx + x);
    const int mean = (sum + B * B / 2) / (B * B);
    int s = 0;
    for (int i = 0; i < B * B; i++) s += abs(v[i] - mean);
    return s + PNMF_PROP_INTRA_FLOOR;
}

/* Frame j of a texture panning up `step` scaled blocks a frame: the
 * texture's rows 0..ROWS-1 are random, every row below it flat gray. */
static void pan_frame(const uint8_t *tex, int j, int step, uint8_t *f)
{
    for (int y = 0; y < ROWS; y++) {
        const int t = y + j * step * B * S;
        if (t < ROWS) memcpy(f + (size_t)y * COLS, tex + (size_t)t * COLS, COLS);
        else memset(f + (size_t)y * COLS, 100, COLS);
    }
}

/* The weight by hand for such a pan: block row by of frame 0 is texture
 * block row by, shown in frames 0..min(by / step, M - 1) (step 0: every
 * frame). */
static double pan_weight(const uint8_t *tex, int step)
{
    const int nby = ROWS / S / B, nbx = COLS / S / B;
    double own = 0, all = 0;
    for (int by = 0; by < nby; by++)
        for (int bx = 0; bx < nbx; bx++) {
            const double c = block_cost(tex, by, bx), f = 1.0 - PNMF_PROP_INTRA_FLOOR / c;
            const int k = step ? (by / step < M - 1 ? by / step : M - 1) : M - 1;
            /* p_k = 0, p_{i-1} = (c + p_i) f: what frame 0 passes on */
            double p = 0;
            for (int i = k; i >= 1; i--) p = (c + p) * f;
            own += c, all += c + p;
        }
    return all / own;
}

int main(void)
{
    uint8_t *tex = malloc((size_t)ROWS * COLS), *fr = malloc((size_t)M * ROWS * COLS);
    CHECK(tex && fr);
    if (!tex || !fr) return test_summary("test_prop");
    for (int i = 0; i < ROWS * COLS; i++) tex[i] = (uint8_t)(40 + urn(180));

    /* still, one block a frame, three blocks a frame (beyond PNMF_PROP_RANGE) */
    const int steps[3] = { 0, 1, 3 };
    double w[3];
    CHECK(3 * B > PNMF_PROP_RANGE && 3 * B <= PNMF_PROP_GLOBAL_RANGE);
    for (int s = 0; s < 3; s++) {
        for (int j = 0; j < M; j++) pan_frame(tex, j, steps[s], fr + (size_t)j * ROWS * COLS);
        w[s] = pnmf_enc_propagation(fr, M, (size_t)ROWS * COLS, ROWS, COLS);
        const double want = pan_weight(tex, steps[s]);
        CHECK_MSG(fabs(w[s] - want) <= 1e-9 * want, "pan of %d blocks a frame: weight %.12f, by hand %.12f", steps[s],
                  w[s], want);
    }
    /* a still texture is nearly all inherited (the floor keeps a share of
     * each block's cost back); the faster the pan, the less */
    CHECK_MSG(w[0] > 0.85 * M && w[0] < M && w[1] < w[0] && w[2] < w[1] && w[2] > 1.0, "weights %.3f %.3f %.3f", w[0],
              w[1], w[2]);
    /* a window of one frame: nothing after it */
    CHECK_MSG(pnmf_enc_propagation(fr, 1, (size_t)ROWS * COLS, ROWS, COLS) == 1.0, "one frame");

    /* unrelated frames of noise: no match beats a block's own cost by much */
    for (int i = 0; i < M * ROWS * COLS; i++) fr[i] = (uint8_t)(40 + urn(180));
    const double wn = pnmf_enc_propagation(fr, M, (size_t)ROWS * COLS, ROWS, COLS);
    CHECK_MSG(wn >= 1.0 && wn < 1.2, "noise: weight %.4f", wn);

    /* frames under 16 blocks a side are not measured */
    CHECK(pnmf_enc_propagation(fr, M, (size_t)ROWS * COLS, 63, COLS) == 0);
    CHECK(pnmf_enc_propagation(fr, M, (size_t)ROWS * COLS, ROWS, 63) == 0);
    free(tex), free(fr);
    return test_summary("test_prop");
}
