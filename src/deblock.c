/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The in-loop deblocking filter of the residual layer (deblock.h,
 * docs/format.md "Deblocking filter"): the edge filter of H.264's luma
 * for boundary strengths below 4 (ITU-T H.264 8.7.2.3), with its alpha,
 * beta and tc0 tables, on pnmf's blocks and quantizers. */
#include "deblock.h"
#include "internal.h"

/* alpha and beta by index 16..51 (0 below 16: nothing is filtered). */
static const uint8_t alpha_tab[36] = { 4,  4,  5,  6,  7,  8,  9,  10, 12,  13,  15,  17,  20,  22,  25,  28,  32,  36,
                                       40, 45, 50, 56, 63, 71, 80, 90, 101, 113, 127, 144, 162, 182, 203, 226, 255, 255 };
static const uint8_t beta_tab[36] = { 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 6, 6, 7, 7, 8, 8, 9, 9,
                                      10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15, 16, 16, 17, 17, 18, 18 };
/* tc0 by index 17..51 and strength class 1..3 (0 below 17). */
static const uint8_t tc0_tab[35][3] = {
    { 0, 0, 1 },  { 0, 0, 1 },  { 0, 0, 1 },  { 0, 0, 1 },   { 0, 1, 1 },   { 0, 1, 1 },   { 1, 1, 1 },
    { 1, 1, 1 },  { 1, 1, 1 },  { 1, 1, 1 },  { 1, 1, 2 },   { 1, 1, 2 },   { 1, 1, 2 },   { 1, 1, 2 },
    { 1, 2, 3 },  { 1, 2, 3 },  { 2, 2, 3 },  { 2, 2, 4 },   { 2, 3, 4 },   { 2, 3, 4 },   { 3, 3, 5 },
    { 3, 4, 6 },  { 3, 4, 6 },  { 4, 5, 7 },  { 4, 5, 8 },   { 4, 6, 9 },   { 5, 7, 10 },  { 6, 8, 11 },
    { 6, 8, 13 }, { 7, 10, 14 }, { 8, 11, 16 }, { 9, 12, 18 }, { 10, 13, 20 }, { 11, 15, 23 }, { 13, 17, 25 },
};
/* The transform's step at qp 0..5 in 1/16 gray level (0.625 * 2^(qp/6)),
 * doubling every 6. */
static const uint8_t qstep16[6] = { 10, 11, 13, 14, 16, 18 };

int pnmf_deblock_step_index(int step16)
{
    int q = 0;
    while (q < PNMF_RES_MAX_QP && (qstep16[(q + 1) % 6] << ((q + 1) / 6)) <= step16) q++;
    return q;
}

int pnmf_deblock_alpha(int index) { return index < 16 ? 0 : alpha_tab[index - 16]; }
int pnmf_deblock_beta(int index) { return index < 16 ? 0 : beta_tab[index - 16]; }
int pnmf_deblock_tc0(int index, int strength) { return index < 17 ? 0 : tc0_tab[index - 17][strength - 1]; }

static inline int iabs(int v) { return v < 0 ? -v : v; }
static inline int clip3(int lo, int hi, int v) { return v < lo ? lo : v > hi ? hi : v; }

/* The thresholds of one edge, looked up once for all its lines. */
typedef struct Edge {
    int alpha, beta, tc0;
} Edge;

static inline void filter_line(uint8_t *p, int s, const Edge *e)
{
    const int p0 = p[-s], q0 = p[0];
    if (iabs(p0 - q0) >= e->alpha) return;
    const int p1 = p[-2 * s], q1 = p[s];
    if (iabs(p1 - p0) >= e->beta || iabs(q1 - q0) >= e->beta) return;
    const int p2 = p[-3 * s], q2 = p[2 * s];
    const int ap = iabs(p2 - p0) < e->beta, aq = iabs(q2 - q0) < e->beta;
    const int tc = e->tc0 + ap + aq;
    const int delta = clip3(-tc, tc, ((q0 - p0) * 4 + (p1 - q1) + 4) >> 3);
    p[-s] = (uint8_t)pnmf_residual_clip8(p0 + delta);
    p[0] = (uint8_t)pnmf_residual_clip8(q0 - delta);
    const int avg = (p0 + q0 + 1) >> 1;
    if (ap) p[-2 * s] = (uint8_t)(p1 + clip3(-e->tc0, e->tc0, (p2 + avg - 2 * p1) >> 1));
    if (aq) p[s] = (uint8_t)(q1 + clip3(-e->tc0, e->tc0, (q2 + avg - 2 * q1) >> 1));
}

static void edge_init(Edge *e, int index, int strength)
{
    e->alpha = pnmf_deblock_alpha(index), e->beta = pnmf_deblock_beta(index);
    e->tc0 = pnmf_deblock_tc0(index, strength);
}

#define BF_INTRA 1
#define BF_CODED 2
#define BF_TRANSFORM 4
typedef struct PnmfDeblockBlock BlockInfo;

/* The strength class of the edge between blocks a and b. */
static int strength(const BlockInfo *a, const BlockInfo *b)
{
    if ((a->flags | b->flags) & BF_INTRA) return PNMF_DEBLOCK_INTRA;
    if ((a->flags | b->flags) & BF_CODED) return PNMF_DEBLOCK_CODED;
    if (a->pred != b->pred) return PNMF_DEBLOCK_MOTION;
    if (a->pred == PNMF_DEBLOCK_COPY && (a->dy != b->dy || a->dx != b->dx || a->t != b->t)) return PNMF_DEBLOCK_MOTION;
    return PNMF_DEBLOCK_SAME;
}

/* The strength class of the 4x4 edge inside transform block a between
 * its quarters s0 and s1. */
static int strength_inner(const BlockInfo *a, int s0, int s1)
{
    if (a->flags & BF_INTRA) return PNMF_DEBLOCK_INTRA;
    return (a->nz >> s0 & 1) || (a->nz >> s1 & 1) ? PNMF_DEBLOCK_CODED : PNMF_DEBLOCK_SAME;
}

/* Filter the lines [l0, l1) of the edge at position at (a column for a
 * vertical edge, a row for a horizontal one). */
static void filter_edge(uint8_t *D, int cols, int vertical, int at, int l0, int l1, int index, int s)
{
    if (!s) return;
    Edge e;
    edge_init(&e, index, s);
    if (!e.alpha) return;
    if (vertical)
        for (int y = l0; y < l1; y++) filter_line(D + (size_t)y * cols + at, 1, &e);
    else
        for (int x = l0; x < l1; x++) filter_line(D + (size_t)at * cols + x, cols, &e);
}

void pnmf_deblock_frame(const PnmfResidual *r, int j, const uint8_t *P, const uint8_t *Pp, uint8_t *D)
{
    const int nb = r->bx * r->by, rows = r->rows, cols = r->cols;
    const uint8_t *modes = r->modes + (size_t)j * nb;
    const int16_t *lev = r->lev + r->start[j];
    const int16_t *mv = r->mv + 2 * r->mvstart[j];
    const uint8_t *mvref = r->mvref + r->mvstart[j];
    const int qp = pnmf_residual_frame_qp(r, j), qs = pnmf_deblock_step_index(pnmf_residual_frame_step(r, j));
    const int gy = r->gmv[2 * j], gx = r->gmv[2 * j + 1];
    BlockInfo *bi = r->dbk;
    for (int b = 0; b < nb; b++) {
        int y0, y1, x0, x1;
        pnmf_residual_block(r->bx, rows, cols, (size_t)b, &y0, &y1, &x0, &x1);
        const int m = modes[b];
        BlockInfo *o = &bi[b];
        if (m == PNMF_RES_PALETTE) { /* window flags bit 13: intra, of the pixel step's index */
            o->flags = BF_INTRA, o->q = (uint8_t)qs, o->nz = 0, o->dy = o->dx = 0, o->t = 0;
            o->pred = PNMF_DEBLOCK_COPY;
            continue;
        }
        o->flags = (uint8_t)((pnmf_residual_is_intra(m) ? BF_INTRA : 0) | (m & PNMF_RES_CODED ? BF_CODED : 0) |
                             (m & PNMF_RES_TRANSFORM ? BF_TRANSFORM : 0));
        o->q = (uint8_t)(m & PNMF_RES_TRANSFORM ? qp : qs);
        o->nz = 0, o->dy = o->dx = 0, o->t = 0;
        /* what the prediction copies: the previous prediction and a motion
         * prediction where the model is still are copies of D_{j-1} */
        o->pred = PNMF_DEBLOCK_COPY;
        switch (m & 7) {
        case PNMF_RES_MODEL: o->pred = PNMF_DEBLOCK_MODEL; break;
        case PNMF_RES_PREVIOUS: o->dy = (int16_t)gy, o->dx = (int16_t)gx; break;
        case PNMF_RES_MOTION:
            if (!pnmf_residual_model_still(P, Pp, cols, y0, y1, x0, x1)) o->pred = PNMF_DEBLOCK_MOVED;
            break;
        case PNMF_RES_SHIFTED: o->dy = mv[0], o->dx = mv[1], o->t = *mvref++, mv += 2; break;
        default: break; /* intra: its class decides */
        }
        if (m & PNMF_RES_TRANSFORM) {
            for (int q = 0; q < 64; q++)
                if (lev[q]) o->nz |= (uint8_t)(1 << (q >> 4));
            lev += 64;
        } else if (m & PNMF_RES_CODED) {
            lev += (size_t)(y1 - y0) * (x1 - x0);
        }
    }
    /* vertical edges, left to right: block edges where three samples lie
     * on each side, and the middle of transform blocks */
    for (int x = 4; x + 2 < cols; x += 4)
        for (int by = 0; by < r->by; by++) {
            const int y0 = by * PNMF_RES_BLOCK, y1 = y0 + PNMF_RES_BLOCK < rows ? y0 + PNMF_RES_BLOCK : rows;
            const BlockInfo *q = &bi[by * r->bx + x / PNMF_RES_BLOCK];
            if (x % PNMF_RES_BLOCK == 0) {
                const BlockInfo *p = q - 1;
                filter_edge(D, cols, 1, x, y0, y1, (p->q + q->q + 1) >> 1, strength(p, q));
            } else if (q->flags & BF_TRANSFORM) {
                filter_edge(D, cols, 1, x, y0, y0 + 4, q->q, strength_inner(q, 0, 1));
                filter_edge(D, cols, 1, x, y0 + 4, y1, q->q, strength_inner(q, 2, 3));
            }
        }
    /* then horizontal edges, top to bottom, on the vertically filtered frame */
    for (int y = 4; y + 2 < rows; y += 4)
        for (int bx = 0; bx < r->bx; bx++) {
            const int x0 = bx * PNMF_RES_BLOCK, x1 = x0 + PNMF_RES_BLOCK < cols ? x0 + PNMF_RES_BLOCK : cols;
            const BlockInfo *q = &bi[(y / PNMF_RES_BLOCK) * r->bx + bx];
            if (y % PNMF_RES_BLOCK == 0) {
                const BlockInfo *p = q - r->bx;
                filter_edge(D, cols, 0, y, x0, x1, (p->q + q->q + 1) >> 1, strength(p, q));
            } else if (q->flags & BF_TRANSFORM) {
                filter_edge(D, cols, 0, y, x0, x0 + 4, q->q, strength_inner(q, 0, 2));
                filter_edge(D, cols, 0, y, x0 + 4, x1, q->q, strength_inner(q, 1, 3));
            }
        }
}
