/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The block search's measures (residual_search.c): the grid's SADs,
 * computed for the whole grid of a block at once, against the SAD written
 * out here sample by sample with the frame's edges clamped, for blocks
 * anywhere in frames smaller and larger than the grid's reach and for
 * every spacing; an uncoded pixel trial's squared error and its stop
 * after a row, and the weights' estimate's sums, against the sums
 * written out here.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "residual_search.h"
#include "tuning.h"
#include "test.h"

static unsigned rs = 2718;
static unsigned urn(unsigned n) { rs = rs * 1103515245u + 12345u; return ((rs >> 8) & 0xFFFFFF) % n; }

/* the sample (y, x) of f (rows x cols), coordinates clamped to the frame */
static int at(const uint8_t *f, int rows, int cols, int y, int x)
{
    y = y < 0 ? 0 : y >= rows ? rows - 1 : y;
    x = x < 0 ? 0 : x >= cols ? cols - 1 : x;
    return f[(size_t)y * cols + x];
}

/* The SAD of the 8 x 8 block of src at (y0, x0) against ref displaced by
 * (dy, dx), by its definition. */
static int sad_def(const uint8_t *src, const uint8_t *ref, int rows, int cols, int y0, int x0, int dy, int dx)
{
    int sad = 0;
    for (int y = 0; y < 8; y++)
        for (int x = 0; x < 8; x++)
            sad += abs(at(src, rows, cols, y0 + y, x0 + x) - at(ref, rows, cols, y0 + y + dy, x0 + x + dx));
    return sad;
}

/* Every whole block of frames of several sizes (8 x 8 up to wider and
 * taller than the grid's reach, so that both the straight reads and the
 * gathered edges are taken), samples often at 0 and 255, each grid
 * spacing from 1 to PNMF_LOCAL_RANGE. */
static void test_grid_sads(void)
{
    const int sizes[][2] = { { 8, 8 }, { 16, 40 }, { 24, 24 }, { 48, 56 }, { 72, 64 } };
    const int R = PNMF_LOCAL_RANGE;
    int *out = malloc(sizeof(int) * (2 * R + 1) * (2 * R + 1));
    long checked = 0, bad = 0, grids = 0;
    for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
        const int rows = sizes[z][0], cols = sizes[z][1];
        /* exactly the frames' sizes: a read past them shows under the sanitizers */
        uint8_t *src = malloc((size_t)rows * cols), *ref = malloc((size_t)rows * cols);
        for (int q = 0; q < rows * cols; q++) {
            src[q] = (uint8_t)(q % 5 == 0 ? 255 * urn(2) : urn(256));
            ref[q] = (uint8_t)(q % 7 == 0 ? 255 * urn(2) : urn(256));
        }
        for (int g = 1; g <= R; g++) {
            const int n = 2 * R / g + 1;
            for (int y0 = 0; y0 + 8 <= rows; y0 += 8)
                for (int x0 = 0; x0 + 8 <= cols; x0 += 8) {
                    memset(out, 0xff, sizeof(int) * n * n);
                    pnmf_residual_grid_sads(src, ref, rows, cols, y0, x0, g, out);
                    for (int i = 0; i < n; i++)
                        for (int k = 0; k < n; k++) {
                            const int want = sad_def(src, ref, rows, cols, y0, x0, -R + g * i, -R + g * k);
                            bad += out[i * n + k] != want;
                            checked++;
                        }
                    grids++;
                }
        }
        free(src);
        free(ref);
    }
    CHECK_MSG(!bad, "%ld of %ld grid SADs differ from the definition", bad, checked);
    CHECK(grids > 100);
    free(out);
}

/* The uncoded pixel trial's rows: the sum of squared errors of each row
 * added in turn, stopped after the row where lb + the sum reaches bj;
 * the rows up to it hold the prediction, the others what they held. */
static void test_uncoded_sse(void)
{
    enum { ROWS = 24, COLS = 20 };
    uint8_t src[ROWS * COLS], D[ROWS * COLS], want[ROWS * COLS], pred[64];
    long bad = 0, stops = 0, whole = 0;
    for (int round = 0; round < 2000; round++) {
        for (int q = 0; q < ROWS * COLS; q++) src[q] = (uint8_t)(q % 3 ? urn(256) : 255 * urn(2));
        for (int q = 0; q < 64; q++) pred[q] = (uint8_t)(q % 5 ? urn(256) : 255 * urn(2));
        const int y0 = (int)urn(ROWS - 7), h = 1 + (int)urn(8), x0 = (int)urn(COLS - 7);
        const double lb = urn(4) ? urn(1000) : 0;
        const double bj = urn(8) ? lb + urn(64 * 255 * 255 / (1 + urn(16))) : INFINITY;
        for (int q = 0; q < ROWS * COLS; q++) D[q] = want[q] = (uint8_t)q;
        int sse = 0;
        for (int y = y0; y < y0 + h && sse >= 0; y++) {
            for (int x = 0; x < 8; x++) {
                const int e = src[y * COLS + x0 + x] - pred[(y - y0) * 8 + x];
                want[y * COLS + x0 + x] = pred[(y - y0) * 8 + x];
                sse += e * e;
            }
            if (lb + sse >= bj) sse = -1;
        }
        const int got = pnmf_residual_uncoded_sse(src, COLS, pred, D, y0, y0 + h, x0, lb, bj);
        bad += got != sse || memcmp(D, want, sizeof(D));
        stops += sse < 0, whole += sse >= 0;
    }
    CHECK_MSG(!bad, "%ld of 2000 trials differ from the definition", bad);
    CHECK(stops > 100 && whole > 100);
}

/* The weights' estimate's measures: the samples' sum and sum of squares,
 * and the runs' weighted sums against given ones, against the sums
 * written out here with pnmf_residual_weigh(), for lengths that are and
 * are not multiples of the run, frames long enough for the squares' lanes
 * to move to 64 bits several times, all samples at 255, and gains and
 * offsets at their extremes. */
static void test_weight_sums(void)
{
    const size_t lens[] = { 0, 5, 16, 47, 1000, 300007 };
    uint8_t *a = malloc(300007);
    int32_t *ssum = malloc(sizeof(int32_t) * (300007 / PNMF_WP_RUN + 1));
    long bad = 0, checked = 0;
    for (size_t z = 0; z < sizeof(lens) / sizeof(lens[0]); z++)
        for (int fill = 0; fill < 2; fill++) {
            const size_t n = lens[z];
            for (size_t q = 0; q < n; q++) a[q] = (uint8_t)(fill ? 255 : urn(256));
            uint64_t s = 0, s2 = 0, gs, gs2;
            for (size_t q = 0; q < n; q++) s += a[q], s2 += (uint64_t)a[q] * a[q];
            pnmf_residual_sums(a, n, &gs, &gs2);
            bad += gs != s || gs2 != s2, checked++;
            if (n > 100000) continue; /* the runs: a few gains and offsets on the shorter ones */
            for (size_t k = 0; k <= n / PNMF_WP_RUN; k++) ssum[k] = (int32_t)urn(PNMF_WP_RUN * 255 + 1);
            for (int t = 0; t < 40; t++) {
                const int w = t == 0 ? 0 : t == 1 ? PNMF_RES_WP_MAX_W : (int)urn(PNMF_RES_WP_MAX_W + 1);
                const int o = t == 2 ? -PNMF_RES_WP_MAX_O : t == 3 ? PNMF_RES_WP_MAX_O
                                                         : (int)urn(2 * PNMF_RES_WP_MAX_O + 1) - PNMF_RES_WP_MAX_O;
                int64_t want = 0;
                for (size_t k = 0, q = 0; q + PNMF_WP_RUN <= n; k++, q += PNMF_WP_RUN) {
                    int r = 0;
                    for (int i = 0; i < PNMF_WP_RUN; i++) r += pnmf_residual_weigh(a[q + i], w, o);
                    want += abs(ssum[k] - r);
                }
                bad += pnmf_residual_weighted_runs(ssum, a, n, w, o) != want, checked++;
            }
        }
    CHECK_MSG(!bad, "%ld of %ld sums differ from the definition", bad, checked);
    free(a);
    free(ssum);
}

int main(void)
{
    test_grid_sads();
    test_uncoded_sse();
    test_weight_sums();
    return test_summary("test_search");
}
