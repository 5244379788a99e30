/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The residual layer's deblocking filter (src/deblock.h, docs/format.md
 * "Deblocking filter"): the filter against a sample-by-sample reference
 * written here from the specification (random frames, modes, vectors,
 * levels and quantizers; sizes that are not multiples of 8); the encoder's
 * reconstruction of a filtered window equals the decoder's, through the
 * residual layer and through the public API; window flags bit 7 survives
 * the payload, and a reader of format 8 refuses it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deblock.h"
#include "encode_file.h"
#include "internal.h"
#include "model_write.h"
#include "pnmf/pnmf.h"
#include "residual_search.h"
#include "test.h"

static unsigned rs = 777;
static unsigned urn(unsigned n) { rs = rs * 1103515245u + 12345u; return ((rs >> 8) & 0xFFFFFF) % n; }

/* ---- the reference, from docs/format.md ---------------------------------- */

/* The tables of the specification, indexed from 0. */
static const int ALPHA[52] = { 0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,   0,   0,   0,   0,   0,   4,   4,
                               5,  6,  7,  8,  9,  10, 12, 13, 15, 17, 20,  22,  25,  28,  32,  36,  40,  45,
                               50, 56, 63, 71, 80, 90, 101, 113, 127, 144, 162, 182, 203, 226, 255, 255 };
static const int BETA[52] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  0,  0,  0,  0,  0,  0,  2,  2,  2,  3,  3,  3,  3,  4,  4,  4,
                              6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15, 16, 16, 17, 17, 18, 18 };
static const int TC0[52][3] = {
    { 0, 0, 0 },  { 0, 0, 0 },  { 0, 0, 0 },   { 0, 0, 0 },   { 0, 0, 0 },   { 0, 0, 0 },   { 0, 0, 0 },
    { 0, 0, 0 },  { 0, 0, 0 },  { 0, 0, 0 },   { 0, 0, 0 },   { 0, 0, 0 },   { 0, 0, 0 },   { 0, 0, 0 },
    { 0, 0, 0 },  { 0, 0, 0 },  { 0, 0, 0 },   { 0, 0, 1 },   { 0, 0, 1 },   { 0, 0, 1 },   { 0, 0, 1 },
    { 0, 1, 1 },  { 0, 1, 1 },  { 1, 1, 1 },   { 1, 1, 1 },   { 1, 1, 1 },   { 1, 1, 1 },   { 1, 1, 2 },
    { 1, 1, 2 },  { 1, 1, 2 },  { 1, 1, 2 },   { 1, 2, 3 },   { 1, 2, 3 },   { 2, 2, 3 },   { 2, 2, 4 },
    { 2, 3, 4 },  { 2, 3, 4 },  { 3, 3, 5 },   { 3, 4, 6 },   { 3, 4, 6 },   { 4, 5, 7 },   { 4, 5, 8 },
    { 4, 6, 9 },  { 5, 7, 10 }, { 6, 8, 11 },  { 6, 8, 13 },  { 7, 10, 14 }, { 8, 11, 16 }, { 9, 12, 18 },
    { 10, 13, 20 }, { 11, 15, 23 }, { 13, 17, 25 },
};

/* The quantizer index of a pixel step: the largest qp in 0..51 whose
 * step, (10, 11, 13, 14, 16, 18)[qp mod 6] * 2^(qp div 6) in 1/16 gray
 * level, is at most step16. */
static int ref_step_index(int step16)
{
    static const int base[6] = { 10, 11, 13, 14, 16, 18 };
    int best = 0;
    for (int qp = 0; qp <= 51; qp++)
        if (base[qp % 6] * (1 << (qp / 6)) <= step16) best = qp;
    return best;
}

typedef struct RefBlock {
    int pred, coded, transform, intra, q, dy, dx, t, nz[4];
} RefBlock;

static int iabs(int v) { return v < 0 ? -v : v; }
static int clip(int lo, int hi, int v) { return v < lo ? lo : v > hi ? hi : v; }

/* Filter one line: s[0..5] = p2, p1, p0, q0, q1, q2. */
static void ref_line(uint8_t *s[6], int index, int bs)
{
    const int p2 = *s[0], p1 = *s[1], p0 = *s[2], q0 = *s[3], q1 = *s[4], q2 = *s[5];
    const int alpha = ALPHA[index], beta = BETA[index];
    if (!bs || !(iabs(p0 - q0) < alpha && iabs(p1 - p0) < beta && iabs(q1 - q0) < beta)) return;
    const int tc0 = TC0[index][bs - 1];
    const int ap = iabs(p2 - p0) < beta, aq = iabs(q2 - q0) < beta;
    const int tc = tc0 + ap + aq;
    const int d = clip(-tc, tc, (4 * (q0 - p0) + (p1 - q1) + 4) >> 3);
    *s[2] = (uint8_t)clip(0, 255, p0 + d);
    *s[3] = (uint8_t)clip(0, 255, q0 - d);
    if (ap) *s[1] = (uint8_t)(p1 + clip(-tc0, tc0, (p2 + ((p0 + q0 + 1) >> 1) - 2 * p1) >> 1));
    if (aq) *s[4] = (uint8_t)(q1 + clip(-tc0, tc0, (q2 + ((p0 + q0 + 1) >> 1) - 2 * q1) >> 1));
}

/* pred: what an uncoded block copies: 0 the model frame, 1 the decoded
 * frame t back displaced by (dy, dx), 2 the motion prediction where the
 * model moves, 3 two hypotheses averaged (window flags bit 17: a class
 * of its own, alike to no other block) */
static int ref_strength(const RefBlock *a, const RefBlock *b)
{
    if (a->intra || b->intra) return 3;
    if (a->coded || b->coded) return 2;
    if (a->pred == 3 || b->pred == 3) return 1;
    if (a->pred != b->pred) return 1;
    if (a->pred == 1 && (a->dy != b->dy || a->dx != b->dx || a->t != b->t)) return 1;
    return 0;
}

/* Frame j of r (model frames P, Pp) filtered sample by sample, as the
 * specification says. */
static void ref_deblock(const PnmfResidual *r, int j, const uint8_t *P, const uint8_t *Pp, uint8_t *D)
{
    const int rows = r->rows, cols = r->cols, bx = (cols + 7) / 8, by = (rows + 7) / 8;
    RefBlock *B = calloc((size_t)bx * by, sizeof(*B));
    size_t lv = r->start[j], vi = r->mvstart[j];
    const int qs = ref_step_index(j ? r->step16 : r->key_step16), qp = j ? r->qp : r->key_qp;
    for (int b = 0; b < bx * by; b++) {
        const int m = r->modes[(size_t)j * bx * by + b];
        RefBlock *o = &B[b];
        const int pred = m & 7;
        o->coded = !!(m & 8), o->transform = !!(m & 16);
        o->intra = pred == 3 || pred >= 5;
        o->q = o->transform ? qp : qs;
        const int h = (b / bx) * 8 + 8 <= rows ? 8 : rows - (b / bx) * 8;
        const int w = (b % bx) * 8 + 8 <= cols ? 8 : cols - (b % bx) * 8;
        o->pred = pred == 0 ? 0 : 1;
        if (pred == 1) o->dy = r->gmv[2 * j], o->dx = r->gmv[2 * j + 1];
        if (pred == 2)
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++) {
                    const size_t q = (size_t)((b / bx) * 8 + y) * cols + (b % bx) * 8 + x;
                    if (P[q] != Pp[q]) o->pred = 2;
                }
        if (pred == 4) {
            o->dy = r->mv[2 * vi], o->dx = r->mv[2 * vi + 1], o->t = r->mvref[vi];
            if (r->mvbi && r->mvbi[vi]) o->pred = 3;
            vi++;
        }
        if (o->transform)
            for (int k = 0; k < 64; k++) o->nz[k / 16] |= r->lev[lv + k] != 0;
        if (o->coded) lv += o->transform ? 64 : (size_t)w * h;
    }
    for (int pass = 0; pass < 2; pass++) { /* vertical edges, then horizontal */
        const int len = pass ? rows : cols, other = pass ? cols : rows;
        for (int e = 4; e < len; e += 4) {
            if (e + 3 > len) continue; /* three samples on each side */
            for (int l = 0; l < other; l++) {
                const int y = pass ? e : l, x = pass ? l : e; /* the first sample after the edge */
                const int yp = pass ? e - 1 : l, xp = pass ? l : e - 1;
                const RefBlock *Pb = &B[(yp / 8) * bx + xp / 8], *Q = &B[(y / 8) * bx + x / 8];
                int bs, index;
                if (e % 8 == 0) {
                    bs = ref_strength(Pb, Q), index = (Pb->q + Q->q + 1) / 2;
                } else {
                    if (!Q->transform) continue;
                    /* the quarters on either side: (row half, column half) */
                    const int hy = (y % 8) / 4, hx = (x % 8) / 4, s1 = 2 * hy + hx;
                    const int s0 = pass ? s1 - 2 : s1 - 1;
                    bs = Q->intra ? 3 : Q->nz[s0] || Q->nz[s1] ? 2 : 0;
                    index = Q->q;
                }
                uint8_t *s[6];
                for (int k = 0; k < 6; k++)
                    s[k] = pass ? &D[(size_t)(e - 3 + k) * cols + x] : &D[(size_t)y * cols + e - 3 + k];
                ref_line(s, index, bs);
            }
        }
    }
    free(B);
}

/* ---- the filter against the reference ------------------------------------ */

/* A random residual layer of 2 frames over rows x cols, its modes all
 * allowed (transform blocks only whole, not with prediction 3), levels
 * sparse, vectors from a few so that neighbours share them. */
static void random_layer(PnmfResidual *r, int rows, int cols)
{
    static const int steps[] = { 16, 40, 96, 160, 320, 640, 1024, 2048, 4096 };
    CHECK(pnmf_residual_alloc(r, 2, rows, cols, steps[urn(9)], steps[urn(9)]) == 0);
    r->qp = (int)urn(52), r->key_qp = (int)urn(52);
    for (int j = 0; j < 2; j++) r->gmv[2 * j] = (int16_t)(urn(2) * 2), r->gmv[2 * j + 1] = 0;
    const int nb = r->bx * r->by;
    r->lev = pnmf_malloc_array((size_t)2 * nb, 64 * sizeof(int16_t));
    r->mv = pnmf_malloc_array((size_t)2 * nb, 2 * sizeof(int16_t));
    r->mvref = pnmf_malloc_array((size_t)2 * nb, 1);
    /* window flags bit 17 in half the layers: a third of the shifted blocks with a second hypothesis */
    const int bi = (int)urn(2);
    r->mvbi = bi ? pnmf_malloc_array((size_t)2 * nb, 1) : NULL;
    r->mv2 = bi ? pnmf_calloc((size_t)2 * nb, 2 * sizeof(int16_t)) : NULL;
    for (int j = 0; j < 2; j++) {
        r->start[j] = r->nlev, r->mvstart[j] = r->nmv;
        for (int b = 0; b < nb; b++) {
            int y0, y1, x0, x1;
            pnmf_residual_block(r->bx, rows, cols, (size_t)b, &y0, &y1, &x0, &x1);
            const int full = y1 - y0 == 8 && x1 - x0 == 8;
            /* few kinds per frame, so that alike neighbours are common */
            int m = (int)(urn(3) ? urn(3) * 2 : urn(8));
            if (urn(2)) m |= PNMF_RES_CODED;
            if ((m & PNMF_RES_CODED) && full && (m & 7) != PNMF_RES_SPATIAL && urn(2)) m |= PNMF_RES_TRANSFORM;
            r->modes[(size_t)j * nb + b] = (uint8_t)m;
            if ((m & 7) == PNMF_RES_SHIFTED) {
                r->mv[2 * r->nmv] = (int16_t)urn(2), r->mv[2 * r->nmv + 1] = (int16_t)(urn(2) * 3);
                if (bi) r->mvbi[r->nmv] = urn(3) ? 0 : (uint8_t)(1 + urn(2));
                r->mvref[r->nmv++] = (uint8_t)urn(2);
            }
            if (m & PNMF_RES_CODED) {
                const size_t n = m & PNMF_RES_TRANSFORM ? 64 : (size_t)(y1 - y0) * (x1 - x0);
                for (size_t k = 0; k < n; k++) r->lev[r->nlev + k] = (int16_t)(urn(6) ? 0 : (int)urn(5) - 2);
                if (m & PNMF_RES_TRANSFORM && urn(2)) /* a quarter or two of zeros */
                    memset(r->lev + r->nlev + 16 * urn(4), 0, 16 * sizeof(int16_t));
                r->nlev += n;
            }
        }
    }
    r->start[2] = r->nlev, r->mvstart[2] = r->nmv;
}

/* A frame whose edges the filter sees: smooth, with small steps at block
 * edges, noise, and a few real edges. */
static void random_frame(uint8_t *D, int rows, int cols)
{
    const int base = (int)urn(200) + 20, slope = (int)urn(5) - 2;
    int off[64][64];
    for (int a = 0; a < 64; a++)
        for (int b = 0; b < 64; b++) off[a][b] = urn(10) ? (int)urn(9) - 4 : (int)urn(120) - 60;
    for (int y = 0; y < rows; y++)
        for (int x = 0; x < cols; x++)
            D[(size_t)y * cols + x] = (uint8_t)clip(0, 255, base + slope * (x + y) / 4 + off[(y / 8) % 64][(x / 8) % 64] +
                                                              (int)urn(3) - 1);
}

static void test_against_reference(void)
{
    static const int sizes[][2] = { { 8, 8 }, { 16, 16 }, { 24, 40 }, { 21, 30 }, { 17, 9 }, { 9, 17 },
                                    { 11, 11 }, { 1, 40 }, { 40, 1 }, { 3, 3 }, { 50, 61 }, { 64, 48 } };
    int same = 0, tried = 0, changed = 0;
    for (int it = 0; it < 600; it++) {
        const int rows = sizes[it % 12][0], cols = sizes[it % 12][1];
        PnmfResidual r;
        random_layer(&r, rows, cols);
        const size_t n = (size_t)rows * cols;
        uint8_t *D = malloc(n), *A = malloc(n), *B = malloc(n), *P = malloc(n), *Pp = malloc(n);
        for (int j = 0; j < 2; j++) {
            random_frame(D, rows, cols);
            /* model frames still in most places, not all */
            for (size_t q = 0; q < n; q++) P[q] = Pp[q] = (uint8_t)(q * 7);
            for (int k = 0; k < 3; k++) P[urn((unsigned)n)]++;
            memcpy(A, D, n), memcpy(B, D, n);
            pnmf_deblock_frame(&r, j, P, Pp, A);
            ref_deblock(&r, j, P, Pp, B);
            same += !memcmp(A, B, (size_t)rows * cols), tried++;
            changed += memcmp(A, D, (size_t)rows * cols) != 0;
        }
        free(D), free(A), free(B), free(P), free(Pp);
        pnmf_residual_free(&r);
    }
    CHECK_MSG(same == tried, "%d of %d frames as the reference filters them", same, tried);
    /* the test means something: most frames are changed */
    CHECK_MSG(changed > tried / 3, "%d of %d frames changed", changed, tried);
    for (int s = 16; s <= 4096; s++) CHECK(pnmf_deblock_step_index(s) == ref_step_index(s));
    CHECK_MSG(pnmf_deblock_step_index(16) == 4 && pnmf_deblock_step_index(4096) == 51, "%d %d", pnmf_deblock_step_index(16), pnmf_deblock_step_index(4096));
    for (int i = 0; i < 52; i++) {
        CHECK(pnmf_deblock_alpha(i) == ALPHA[i] && pnmf_deblock_beta(i) == BETA[i]);
        for (int s = 1; s <= 3; s++) CHECK(pnmf_deblock_tc0(i, s) == TC0[i][s - 1]);
    }
}

/* Nothing moves at small steps (lossless and near lossless windows), nor
 * between blocks predicted alike, nor across a real edge. */
static void test_untouched(void)
{
    enum { R = 24, C = 32 };
    uint8_t D[R * C], A[R * C];
    PnmfResidual r;
    CHECK(pnmf_residual_alloc(&r, 1, R, C, 4096, 4096) == 0);
    r.qp = r.key_qp = 51;
    r.start[1] = 0, r.mvstart[1] = 0; /* every block uncoded, prediction 0: alike */
    random_frame(D, R, C);
    memcpy(A, D, sizeof D);
    pnmf_deblock_frame(&r, 0, NULL, NULL, A);
    CHECK(!memcmp(A, D, sizeof D));
    /* a copy of the previous frame in place, as prediction 1 or as 2 where
     * the model is still: alike (a still background is not filtered again
     * in every frame) */
    uint8_t P[R * C];
    memset(P, 7, sizeof P);
    r.continues = 1;
    for (int b = 0; b < r.bx * r.by; b++) r.modes[b] = (uint8_t)(b % 2 ? PNMF_RES_PREVIOUS : PNMF_RES_MOTION);
    pnmf_deblock_frame(&r, 0, P, P, A);
    CHECK(!memcmp(A, D, sizeof D));
    for (int b = 0; b < r.bx * r.by; b++) r.modes[b] = (uint8_t)(b % 2 ? PNMF_RES_MODEL : PNMF_RES_PREVIOUS);
    r.key_step16 = 16;
    pnmf_deblock_frame(&r, 0, NULL, NULL, A); /* step 1: index 4, no edge filtered */
    CHECK(!memcmp(A, D, sizeof D));
    r.key_step16 = 4096;
    pnmf_deblock_frame(&r, 0, NULL, NULL, A); /* now they are */
    CHECK(memcmp(A, D, sizeof D) != 0);
    r.key_step16 = 320; /* index 30: alpha 25 */
    for (int y = 0; y < R; y++)
        for (int x = 0; x < C; x++) D[y * C + x] = (uint8_t)(x < 8 ? 100 : 126); /* a real edge of 26 */
    memcpy(A, D, sizeof D);
    pnmf_deblock_frame(&r, 0, NULL, NULL, A);
    CHECK(!memcmp(A, D, sizeof D));
    for (int y = 0; y < R; y++) D[y * C + 8] = 124; /* an edge of 24 */
    memcpy(A, D, sizeof D);
    pnmf_deblock_frame(&r, 0, NULL, NULL, A);
    CHECK(memcmp(A, D, sizeof D) != 0);
    pnmf_residual_free(&r);
}

/* ---- the encoder's reconstruction is the decoder's ------------------------ */

enum { ROWS = 40, COLS = 48, M = 5 };

/* Smooth content: a gradient, a soft blob moving, noise. */
static void make_clip(uint8_t *src)
{
    for (int j = 0; j < M; j++)
        for (int y = 0; y < ROWS; y++)
            for (int x = 0; x < COLS; x++) {
                const double dy = y - 15 - j, dx = x - 12 - 3 * j;
                const double v = 60 + 2.0 * x + 1.2 * y + 90 * exp(-(dy * dy + dx * dx) / 60.0) + (int)urn(7) - 3;
                src[(size_t)j * ROWS * COLS + y * COLS + x] = (uint8_t)clip(0, 255, (int)v);
            }
}

static void test_round_trip(void)
{
    const size_t n = (size_t)ROWS * COLS;
    uint8_t *src = malloc(M * n), *P = calloc(M * n, 1), *De = malloc(M * n), *Dd = malloc(M * n);
    uint8_t *Du = malloc(M * n);
    make_clip(src);
    PnmfWindowModel md;
    CHECK(pnmf_model_alloc(&md, ROWS, COLS, ROWS, COLS, M, 1, 0) == 0);
    CHECK(pnmf_residual_alloc(&md.res, M, ROWS, COLS, 1600, 1024) == 0);
    md.res.deblock = 1;
    for (int j = 0; j < M; j++) {
        const uint8_t *ref[PNMF_RES_REFS];
        for (int t = 0; t < PNMF_RES_REFS; t++) ref[t] = j - 1 - t >= 0 ? De + (j - 1 - t) * n : NULL;
        CHECK(pnmf_residual_encode_frame(&md.res, j, src + j * n, P + j * n, j ? P + (j - 1) * n : NULL, ref,
                                         j < PNMF_RES_REFS ? j : PNMF_RES_REFS, De + j * n, 2000.0) == 0);
    }
    /* through the payload: bit 7 set, read back */
    uint8_t *buf = NULL;
    size_t size = 0;
    CHECK(pnmf_model_write(&md, &buf, &size) == 0);
    CHECK(buf && size > 2 && buf[0] == (0x80 | PNMF_FLAG_RESIDUAL) && buf[1] == 1); /* flags 129, a varint */
    PnmfWindowModel rd;
    char err[200] = "";
    CHECK_MSG(pnmf_model_read(buf, size, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, &rd, err, sizeof err) == 0, "%s", err);
    CHECK(rd.res.deblock == 1);
    int transform = 0;
    for (size_t q = 0; q < (size_t)M * rd.res.bx * rd.res.by; q++) transform += !!(rd.res.modes[q] & PNMF_RES_TRANSFORM);
    CHECK_MSG(transform > 0, "%d transform blocks", transform);
    for (int pass = 0; pass < 2; pass++) {
        uint8_t *D = pass ? Du : Dd;
        rd.res.deblock = !pass;
        for (int j = 0; j < M; j++) {
            const uint8_t *ref[PNMF_RES_REFS];
            for (int t = 0; t < PNMF_RES_REFS; t++) ref[t] = j - 1 - t >= 0 ? D + (j - 1 - t) * n : NULL;
            pnmf_residual_frame(&rd.res, j, P + j * n, j ? P + (j - 1) * n : NULL, ref, D + j * n);
        }
    }
    CHECK_MSG(!memcmp(De, Dd, M * n), "the decoder's frames are the encoder's");
    CHECK_MSG(memcmp(Du, Dd, M * n) != 0, "the filter changed the frames");
    pnmf_model_free(&rd);

    /* a reader of format 8 does not know bit 7; nor is it allowed without a residual layer */
    CHECK(pnmf_model_read_version(8, buf, size, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, &rd, err, sizeof err) ==
              PNMF_ERR_CORRUPT && strstr(err, "unknown features"));
    CHECK(pnmf_model_read_version(PNMF_PAYLOAD_VERSION, buf, size, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, &rd, err, sizeof err) == 0);
    pnmf_model_free(&rd);
    pnmf_free(buf);
    md.res.step16 = 0; /* the model alone */
    CHECK(pnmf_model_write(&md, &buf, &size) == 0 && buf[0] == 0);
    uint8_t *bad = malloc(size + 1);
    bad[0] = 0x80, bad[1] = 0x01; /* flags 128 */
    memcpy(bad + 2, buf + 1, size - 1);
    CHECK(pnmf_model_read(bad, size + 1, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, &rd, err, sizeof err) ==
              PNMF_ERR_CORRUPT && strstr(err, "deblocking without a residual layer"));
    free(bad);
    pnmf_free(buf);
    md.res.step16 = 1600;
    pnmf_model_free(&md);
    free(src), free(P), free(De), free(Dd), free(Du);
}

/* The public API on smooth content at a coarse -q: the encoder filters
 * (min_reader_version 9 in the header), and the decoder shows exactly
 * the error the encoder measured on its own reconstruction. */
static void test_api(const char *dir)
{
    enum { H = 48, W = 64, F = 12 };
    static uint8_t f[F][H * W], d[H * W];
    for (int j = 0; j < F; j++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                const double dy = y - 20 - j, dx = x - 10 - 3 * j;
                f[j][y * W + x] = (uint8_t)clip(0, 255, (int)(50 + 1.5 * x + 1.0 * y +
                                                             100 * exp(-(dy * dy + dx * dx) / 80.0)) +
                                                             (int)urn(9) - 4);
            }
    char path[512];
    snprintf(path, sizeof path, "%s/test_deblock_api.pnmf", dir);
    for (int q = 16; q <= 56; q += 40) {
        PnmfEncSettings s;
        pnmf_enc_default_settings(&s);
        s.components = 0, s.window = 6, s.threads = 1, s.quality = q;
        PnmfEncStats st;
        test_encode_file(path, &s, W, H, F, f[0], &st);
        FILE *in = fopen(path, "rb");
        uint8_t head[12] = { 0 };
        CHECK(in && fread(head, 1, 12, in) == 12);
        /* the filter pays at -q 56: the file needs a v9 reader (at -q 16 the
         * smooth motion may take sub-pixel vectors, which need one too, and
         * median vectors a v10 one) */
        CHECK_MSG(head[8] == PNMF_FORMAT_VERSION && (q <= 16 || head[10] >= 9), "-q %d: writer %d, min reader %d", q, head[8], head[10]);
        rewind(in);
        PnmfDecoder *dec = NULL;
        CHECK(pnmf_dec_open(&dec, in) == 0);
        double sse = 0;
        for (int j = 0; j < F; j++) {
            CHECK(pnmf_dec_read_frame(dec, d, W) == 0);
            for (int k = 0; k < H * W; k++) sse += ((double)f[j][k] - d[k]) * ((double)f[j][k] - d[k]);
        }
        pnmf_dec_close(&dec);
        fclose(in);
        CHECK_MSG(fabs(sse - st.sse) < 0.5, "-q %d: decoded sse %.0f, the encoder's %.0f", q, sse, st.sse);
    }
    remove(path);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    test_against_reference();
    test_untouched();
    test_round_trip();
    test_api(dir);
    return test_summary("test_deblock");
}
