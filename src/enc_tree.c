/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The encoder's propagation weights (enc_tree.h). A block that later
 * frames predict from, through motion, passes its error on to them: its
 * error is worth as much as the error of all the samples that inherit it.
 * The exact-copy weights (residual_search.h) see only samples that repeat
 * exactly, which camera footage and rendered 3-D never do. Here the share
 * a block passes on is how much cheaper the next frame's block is to
 * predict from it than from its own neighbours, so a textured object that
 * moves carries its blocks' weight back along its track, and flat noisy
 * areas, which the motion predicts no better than their mean, carry none
 * (the noise is not worth coding for later frames). x264's macroblock
 * tree and libaom's temporal dependency model weigh blocks this way; here
 * the weight divides the block's lambda, the step staying the frame's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "enc_tree.h"
#include "internal.h"
#include "residual.h"
#include "tuning.h"

/* The SAD of the h x w samples at a against those at b (both cols apart). */
static int sad_at(const uint8_t *a, const uint8_t *b, int cols, int h, int w)
{
    int s = 0;
    for (int y = 0; y < h; y++, a += cols, b += cols)
        for (int x = 0; x < w; x++) s += abs((int)a[x] - b[x]);
    return s;
}

/* The block's intra cost: the least SAD of its DC (the mean of the row
 * above and the column left of it), vertical and horizontal predictions
 * from the source's neighbours (128 where it has none). */
static int intra_cost(const uint8_t *f, int cols, int y0, int x0, int h, int w)
{
    const uint8_t *p = f + (size_t)y0 * cols + x0;
    int sum = 0, n = 0;
    if (y0)
        for (int x = 0; x < w; x++) sum += p[x - cols], n++;
    if (x0)
        for (int y = 0; y < h; y++) sum += p[(size_t)y * cols - 1], n++;
    const int dc = n ? (sum + n / 2) / n : 128;
    int sd = 0, sv = y0 ? 0 : INT32_MAX, sh = x0 ? 0 : INT32_MAX;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const int v = p[(size_t)y * cols + x];
            sd += abs(v - dc);
            if (y0) sv += abs(v - p[x - cols]);
            if (x0) sh += abs(v - p[(size_t)y * cols - 1]);
        }
    return sd < sv ? (sd < sh ? sd : sh) : (sv < sh ? sv : sh);
}

int pnmf_enc_tree_weights(const uint8_t *frames, int m, size_t stride, int rows, int cols, uint8_t *w)
{
    const int bx = pnmf_residual_blocks(cols), by = pnmf_residual_blocks(rows);
    const size_t nb = (size_t)bx * by;
    if (m < 2 || rows < PNMF_RES_BLOCK || cols < PNMF_RES_BLOCK) return 0;
    float *carry = pnmf_calloc(2 * nb, sizeof(float)); /* what frame j's and j - 1's blocks pass on */
    int16_t *mv = pnmf_malloc_array(nb, 2 * sizeof(int16_t));
    if (!carry || !mv) {
        pnmf_free(carry), pnmf_free(mv);
        return PNMF_ERR_NOMEM;
    }
    float *cur = carry, *prev = carry + nb;
    const int R = PNMF_TREE_RANGE;
    for (int j = m - 1; j >= 1; j--) {
        const uint8_t *f = frames + (size_t)j * stride, *g = f - stride;
        memset(prev, 0, nb * sizeof(float));
        for (size_t b = 0; b < nb; b++) {
            int y0, y1, x0, x1;
            pnmf_residual_block(bx, rows, cols, b, &y0, &y1, &x0, &x1);
            const int h = y1 - y0, wd = x1 - x0;
            const uint8_t *s = f + (size_t)y0 * cols + x0;
            /* the search: none, the left and the above block's vectors,
             * then +-R around the best of them */
            int cy[3] = { 0, 0, 0 }, cx[3] = { 0, 0, 0 }, nc = 1;
            if (x0) cy[nc] = mv[2 * (b - 1)], cx[nc] = mv[2 * (b - 1) + 1], nc++;
            if (y0) cy[nc] = mv[2 * (b - bx)], cx[nc] = mv[2 * (b - bx) + 1], nc++;
            int best = INT32_MAX, vy = 0, vx = 0;
            for (int c = 0; c < nc; c++) {
                const int yy = y0 + cy[c], xx = x0 + cx[c];
                if (yy < 0 || xx < 0 || yy + h > rows || xx + wd > cols) continue;
                const int d = sad_at(s, g + (size_t)yy * cols + xx, cols, h, wd);
                if (d < best) best = d, vy = cy[c], vx = cx[c];
            }
            const int oy = vy, ox = vx;
            for (int dy = -R; dy <= R; dy++)
                for (int dx = -R; dx <= R; dx++) {
                    const int yy = y0 + oy + dy, xx = x0 + ox + dx;
                    if ((!dy && !dx) || yy < 0 || xx < 0 || yy + h > rows || xx + wd > cols) continue;
                    const int d = sad_at(s, g + (size_t)yy * cols + xx, cols, h, wd);
                    if (d < best) best = d, vy = oy + dy, vx = ox + dx;
                }
            mv[2 * b] = (int16_t)vy, mv[2 * b + 1] = (int16_t)vx;
            /* the costs with a floor of PNMF_TREE_FLOOR a sample, the
             * noise every coding leaves */
            const double floor_ = PNMF_TREE_FLOOR * h * wd;
            const double intra = intra_cost(f, cols, y0, x0, h, wd) + floor_, inter = best + floor_;
            const double share = inter < intra ? 1.0 - inter / intra : 0.0;
            const double pass = (intra + cur[b]) * share;
            if (pass <= 0) continue;
            /* to the blocks of frame j - 1 under the match, by area */
            const int my = y0 + vy, mx = x0 + vx;
            const double per = pass / ((double)h * wd);
            for (int r = my / PNMF_RES_BLOCK; r <= (my + h - 1) / PNMF_RES_BLOCK && r < by; r++)
                for (int c = mx / PNMF_RES_BLOCK; c <= (mx + wd - 1) / PNMF_RES_BLOCK && c < bx; c++) {
                    const int ty0 = r * PNMF_RES_BLOCK, tx0 = c * PNMF_RES_BLOCK;
                    const int oy0 = my > ty0 ? my : ty0, oy1 = my + h < ty0 + 8 ? my + h : ty0 + 8;
                    const int ox0 = mx > tx0 ? mx : tx0, ox1 = mx + wd < tx0 + 8 ? mx + wd : tx0 + 8;
                    if (oy1 > oy0 && ox1 > ox0) prev[(size_t)r * bx + c] += (float)(per * (oy1 - oy0) * (ox1 - ox0));
                }
        }
        /* frame j - 1's classes from what it passes on */
        for (size_t b = 0; b < nb; b++) {
            int y0, y1, x0, x1;
            pnmf_residual_block(bx, rows, cols, b, &y0, &y1, &x0, &x1);
            const double intra = intra_cost(g, cols, y0, x0, y1 - y0, x1 - x0) + PNMF_TREE_FLOOR * (y1 - y0) * (x1 - x0);
            const double cl = 2.0 * PNMF_TREE_STRENGTH * log2(1.0 + prev[b] / intra);
            int c = (int)(cl + 0.5);
            if (c > PNMF_RES_WEIGHTS - 1) c = PNMF_RES_WEIGHTS - 1;
            uint8_t *o = w + (size_t)(j - 1) * nb + b;
            if (c > *o) *o = (uint8_t)c;
        }
        float *t = cur;
        cur = prev, prev = t;
    }
    pnmf_free(carry), pnmf_free(mv);
    return 0;
}
