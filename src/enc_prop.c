/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How much of a window's first frame its later frames inherit
 * (enc_prop.h), measured as a macroblock tree does (x264's, after
 * Garrett-Glaser, "A novel macroblock-tree algorithm for high-performance
 * optimization of dependent video coding in H.264/AVC", 2009): each block
 * of frame j costs `intra` to code alone and `inter` from its best match
 * in frame j - 1; the share 1 - inter / intra of what it is worth (its
 * own cost plus what later frames take from it) passes back to the
 * blocks its match covers, frame by frame from the last to the first.
 *
 * The frames are scaled down by 4 (box means, which also average a
 * camera's noise away) and cut into blocks of 4 x 4 of those samples;
 * `intra` is a block's sum of absolute differences from its mean, `inter`
 * the least sum of absolute differences over whole displacements within
 * PNMF_PROP_RANGE of none and within one of the frame's displacement
 * (global_vector()) and of the ones found for the blocks left of and
 * above it; each cost plus PNMF_PROP_INTRA_FLOOR.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "enc_prop.h"
#include "internal.h"
#include "tuning.h"

enum { S = 4, B = 4 }; /* the scale, and a block's side in scaled samples */

/* The sum of absolute differences of the B x B block at a (stride c)
 * from the one at b. */
static int block_sad(const uint8_t *a, const uint8_t *b, int c)
{
    int s = 0;
    for (int y = 0; y < B; y++, a += c, b += c)
        for (int x = 0; x < B; x++) s += abs(a[x] - b[x]);
    return s;
}

/* The block's sum of absolute differences from its mean. */
static int block_intra(const uint8_t *a, int c)
{
    int sum = 0, s = 0;
    for (int y = 0; y < B; y++)
        for (int x = 0; x < B; x++) sum += a[(size_t)y * c + x];
    const int mean = (sum + B * B / 2) / (B * B);
    for (int y = 0; y < B; y++)
        for (int x = 0; x < B; x++) s += abs(a[(size_t)y * c + x] - mean);
    return s;
}

/* The displacement within +-PNMF_PROP_GLOBAL_RANGE of the r x c frame p
 * that matches frame f best on a grid of every B-th sample: a pan or a
 * camera's move, which may be faster than the blocks' own search reaches. */
static void global_vector(const uint8_t *f, const uint8_t *p, int r, int c, int *gy, int *gx)
{
    enum { G = PNMF_PROP_GLOBAL_RANGE };
    int64_t best = -1;
    *gy = *gx = 0;
    for (int dy = -G; dy <= G; dy++)
        for (int dx = -G; dx <= G; dx++) {
            int64_t s = 0;
            int nsum = 0;
            for (int y = B / 2; y < r; y += B) {
                if (y + dy < 0 || y + dy >= r) continue;
                for (int x = B / 2; x < c; x += B) {
                    if (x + dx < 0 || x + dx >= c) continue;
                    s += abs(f[(size_t)y * c + x] - p[(size_t)(y + dy) * c + x + dx]);
                    nsum++;
                }
            }
            if (!nsum) continue;
            /* per sample, in 1/256: displacements see different overlaps */
            s = (s << 8) / nsum;
            if (best < 0 || s < best || (s == best && abs(dy) + abs(dx) < abs(*gy) + abs(*gx)))
                best = s, *gy = dy, *gx = dx;
        }
}

double pnmf_enc_propagation(const uint8_t *frames, int m, size_t stride, int rows, int cols)
{
    if (rows < 16 * S || cols < 16 * S || m < 1) return 0;
    const int r = rows / S, c = cols / S, nby = r / B, nbx = c / B;
    const size_t n = (size_t)r * c, nb = (size_t)nby * nbx;
    uint8_t *sc = pnmf_malloc_array((size_t)m, n);
    double *prop = pnmf_calloc(2 * nb, sizeof(double));
    int16_t (*mv)[2] = pnmf_malloc_array(nb, sizeof(*mv));
    if (!sc || !prop || !mv) {
        pnmf_free(sc), pnmf_free(prop), pnmf_free(mv);
        return 0;
    }
    for (int j = 0; j < m; j++) {
        const uint8_t *f = frames + (size_t)j * stride;
        uint8_t *o = sc + (size_t)j * n;
        for (int y = 0; y < r; y++)
            for (int x = 0; x < c; x++) {
                int s = 0;
                for (int dy = 0; dy < S; dy++)
                    for (int dx = 0; dx < S; dx++) s += f[(size_t)(S * y + dy) * cols + S * x + dx];
                o[(size_t)y * c + x] = (uint8_t)((s + S * S / 2) / (S * S));
            }
    }
    /* prop[]: what the later frames take from each block of frame j
     * (the current half), then of frame j - 1 (the other) */
    double *cur = prop, *prev = prop + nb;
    for (int j = m - 1; j >= 1; j--) {
        const uint8_t *f = sc + (size_t)j * n, *p = sc + (size_t)(j - 1) * n;
        memset(prev, 0, nb * sizeof(double));
        int gy, gx;
        global_vector(f, p, r, c, &gy, &gx);
        for (int by = 0; by < nby; by++)
            for (int bx = 0; bx < nbx; bx++) {
                const size_t b = (size_t)by * nbx + bx;
                const int y0 = B * by, x0 = B * bx;
                const uint8_t *blk = f + (size_t)y0 * c + x0;
                const int intra = block_intra(blk, c) + PNMF_PROP_INTRA_FLOOR;
                int best = block_sad(blk, p + (size_t)y0 * c + x0, c), vy = 0, vx = 0;
                /* around none, then around the frame's and the neighbours' displacements */
                int16_t cand[4][2] = { { 0, 0 }, { (int16_t)gy, (int16_t)gx }, { 0, 0 }, { 0, 0 } };
                int ncand = 2;
                if (bx) cand[ncand][0] = mv[b - 1][0], cand[ncand][1] = mv[b - 1][1], ncand++;
                if (by) cand[ncand][0] = mv[b - nbx][0], cand[ncand][1] = mv[b - nbx][1], ncand++;
                for (int k = 0; k < ncand; k++) {
                    const int rr = k ? 1 : PNMF_PROP_RANGE;
                    for (int dy = cand[k][0] - rr; dy <= cand[k][0] + rr; dy++) {
                        if (y0 + dy < 0 || y0 + dy + B > r) continue;
                        for (int dx = cand[k][1] - rr; dx <= cand[k][1] + rr; dx++) {
                            if (x0 + dx < 0 || x0 + dx + B > c) continue;
                            const int s = block_sad(blk, p + (size_t)(y0 + dy) * c + x0 + dx, c);
                            if (s < best) best = s, vy = dy, vx = dx;
                        }
                    }
                }
                mv[b][0] = (int16_t)vy, mv[b][1] = (int16_t)vx;
                const int inter = best + PNMF_PROP_INTRA_FLOOR;
                if (inter >= intra) continue;
                const double amount = (intra + cur[b]) * (1.0 - (double)inter / intra);
                /* to the blocks of frame j - 1 the match covers, by area */
                const int py = y0 + vy, px = x0 + vx, iy = py / B, ix = px / B, fy = py - B * iy, fx = px - B * ix;
                for (int k = 0; k < 4; k++) {
                    const int ty = iy + (k >> 1), tx = ix + (k & 1);
                    const int h = k >> 1 ? fy : B - fy, w = k & 1 ? fx : B - fx;
                    if (ty < nby && tx < nbx && h && w) prev[(size_t)ty * nbx + tx] += amount * h * w / (B * B);
                }
            }
        double *t = cur;
        cur = prev, prev = t;
    }
    /* frame 0's worth over its cost alone */
    double own = 0, all = 0;
    for (int by = 0; by < nby; by++)
        for (int bx = 0; bx < nbx; bx++) {
            const double intra = block_intra(sc + (size_t)B * by * c + B * bx, c) + PNMF_PROP_INTRA_FLOOR;
            own += intra, all += intra + cur[(size_t)by * nbx + bx];
        }
    pnmf_free(sc), pnmf_free(prop), pnmf_free(mv);
    return all / own;
}
