/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The encoder's coding order (enc_order.h). A window whose frames follow
 * a rigid pan (a camera moving over a drawing, a scrolling game) shows
 * new content at an edge in every frame. Coded in their order, each frame
 * codes its own strip of it at the window's step; coded with each
 * group's last frame first at a finer step, that frame codes the group's
 * strips at once, and the frames between copy them from it as well as
 * from the frame before (docs/format.md, "Coding order"). That pays
 * where the strips are textured (a painted background: each strip's
 * error at the window's step is copied on for as long as it shows), not
 * where they are smooth and the anchors pay for what moves over them
 * (docs/measurements.md, "Coding order").
 */
#include <stdlib.h>
#include <string.h>

#include "enc_order.h"
#include "tuning.h"

/* Whether frame b pans from frame a: counts[] of the grid's exact matches
 * at each displacement within +-R. */
static int pans(const uint8_t *a, const uint8_t *b, int rows, int cols)
{
    enum { R = PNMF_ORDER_PAN_RANGE, D = 2 * R + 1, G = PNMF_ORDER_PAN_GRID };
    int count[D * D], grid = 0;
    memset(count, 0, sizeof(count));
    for (int y = R; y < rows - R; y += G)
        for (int x = R; x < cols - R; x += G) {
            const uint8_t v = b[(size_t)y * cols + x];
            const uint8_t *p = a + (size_t)(y - R) * cols + (x - R);
            grid++;
            for (int dy = 0; dy < D; dy++, p += cols)
                for (int dx = 0; dx < D; dx++) count[dy * D + dx] += p[dx] == v;
        }
    int best = R * D + R; /* no displacement, on ties */
    for (int i = 0; i < D * D; i++)
        if (count[i] > count[best]) best = i;
    return best != R * D + R && count[best] >= grid * PNMF_ORDER_PAN_EXACT &&
           count[R * D + R] * 2 <= count[best];
}

/* The mean of |right - left| + |below - above| over the frame: how much a
 * strip of it costs to code. */
static double activity(const uint8_t *f, int rows, int cols)
{
    uint64_t sum = 0;
    for (int y = 1; y < rows; y++) {
        const uint8_t *p = f + (size_t)y * cols, *u = p - cols;
        for (int x = 1; x < cols; x++) sum += (uint64_t)(abs(p[x] - p[x - 1]) + abs(p[x] - u[x]));
    }
    return (double)sum / ((double)(rows - 1) * (cols - 1));
}

int pnmf_enc_order_pan(const uint8_t *frames, int m, size_t stride, int rows, int cols)
{
    if (rows <= 2 * PNMF_ORDER_PAN_RANGE || cols <= 2 * PNMF_ORDER_PAN_RANGE) return 0;
    if (activity(frames, rows, cols) < PNMF_ORDER_MIN_ACTIVITY) return 0;
    int probed = 0, panned = 0;
    for (int j = 1; j < m; j += PNMF_ORDER_PROBE_STEP) {
        probed++;
        panned += pans(frames + (size_t)(j - 1) * stride, frames + (size_t)j * stride, rows, cols);
    }
    return probed >= 2 && panned >= probed * PNMF_ORDER_PAN_SHARE;
}

void pnmf_enc_order_frames(uint8_t *frames, int m, size_t stride, int g, uint8_t *tmp)
{
    /* each group [s, e] rotates by one: e first, then s .. e - 1 */
    for (int s = 1; s < m; s += g) {
        const int e = s + g - 1 < m - 1 ? s + g - 1 : m - 1;
        if (e == s) continue;
        memcpy(tmp, frames + (size_t)e * stride, stride);
        memmove(frames + (size_t)(s + 1) * stride, frames + (size_t)s * stride, (size_t)(e - s) * stride);
        memcpy(frames + (size_t)s * stride, tmp, stride);
    }
}
