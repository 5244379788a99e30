/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The residual layer (src/residual.h, src/residual_search.h): the
 * encoder's choices decode to exactly the frames it measured; the
 * quantization error is bounded by half a step; the spatial predictor is
 * LOCO-I's median edge detector in plain raster order; the layer survives
 * the payload round trip, and the reader refuses what the format forbids.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model_write.h"
#include "residual_search.h"
#include "tx8.h"
#include "test.h"
#include "varint.h"

static unsigned rs = 4242;
static unsigned urn(unsigned n) { rs = rs * 1103515245u + 12345u; return ((rs >> 8) & 0xFFFFFF) % n; }

enum { ROWS = 21, COLS = 30, M = 6 };

/* A clip with a dark square moving over a textured bright background and
 * some noise; P a crude "model": the background alone. */
static void make_clip(uint8_t *src, uint8_t *P)
{
    for (int j = 0; j < M; j++)
        for (int y = 0; y < ROWS; y++)
            for (int x = 0; x < COLS; x++) {
                const size_t q = (size_t)j * ROWS * COLS + (size_t)y * COLS + x;
                int v = 180 + (x * 7 + y * 3) % 40;
                P[q] = (uint8_t)v;
                if (y >= 4 + j && y < 10 + j && x >= 3 + 2 * j && x < 11 + 2 * j) v = 20 + (int)urn(10);
                v += (int)urn(5) - 2;
                src[q] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
}

/* Encode the clip frame by frame; decode it again from r; compare. */
static void encode_clip(PnmfResidual *r, const uint8_t *src, const uint8_t *P, double lambda,
                        uint8_t *Denc, uint8_t *Ddec)
{
    const size_t n = (size_t)ROWS * COLS;
    for (int j = 0; j < M; j++) {
        const uint8_t *ref[PNMF_RES_REFS];
        for (int t = 0; t < PNMF_RES_REFS; t++) ref[t] = j - 1 - t >= 0 ? Denc + (j - 1 - t) * n : NULL;
        CHECK(pnmf_residual_encode_frame(r, j, src + j * n, P + j * n, j ? P + (j - 1) * n : NULL, ref,
                                         j < PNMF_RES_REFS ? j : PNMF_RES_REFS, Denc + j * n, lambda) == 0);
    }
    for (int j = 0; j < M; j++) {
        const uint8_t *ref[PNMF_RES_REFS];
        for (int t = 0; t < PNMF_RES_REFS; t++) ref[t] = j - 1 - t >= 0 ? Ddec + (j - 1 - t) * n : NULL;
        pnmf_residual_frame(r, j, P + j * n, j ? P + (j - 1) * n : NULL, ref, Ddec + j * n);
    }
}

static void test_encode_decode(void)
{
    const size_t n = (size_t)ROWS * COLS;
    uint8_t *src = malloc(M * n), *P = malloc(M * n), *De = malloc(M * n), *Dd = malloc(M * n);
    make_clip(src, P);
    const int steps[] = { 16, 23, 64, 181, 1024, 4096 };
    int transformed = 0;
    for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++)
        for (int lam = 0; lam < 3; lam++) {
            PnmfResidual r;
            CHECK(pnmf_residual_alloc(&r, M, ROWS, COLS, steps[s], steps[s]) == 0);
            const double lambda = lam == 0 ? 0 : lam == 1 ? steps[s] * steps[s] / 256.0 * 0.1 : 1e6;
            encode_clip(&r, src, P, lambda, De, Dd);
            CHECK_MSG(!memcmp(De, Dd, M * n), "step %d lambda %g: decoder differs", steps[s], lambda);
            /* the largest error of a pixel outside transform blocks, and the
             * largest squared error of a transform block */
            int maxe = 0, prev_used = 0;
            long maxt = 0;
            for (int j = 0; j < M; j++)
                for (int b = 0; b < r.bx * r.by; b++) {
                    int y0, y1, x0, x1;
                    pnmf_residual_block(r.bx, ROWS, COLS, (size_t)b, &y0, &y1, &x0, &x1);
                    const int tr = (r.modes[j * r.bx * r.by + b] & PNMF_RES_TRANSFORM) != 0;
                    long bs = 0;
                    for (int y = y0; y < y1; y++)
                        for (int x = x0; x < x1; x++) {
                            const size_t q = (size_t)j * n + (size_t)y * COLS + x;
                            const int e = abs((int)src[q] - De[q]);
                            if (!tr && e > maxe) maxe = e;
                            bs += e * e;
                        }
                    if (tr && bs > maxt) maxt = bs;
                }
            for (int j = 0; j < M; j++)
                for (int b = 0; b < r.bx * r.by; b++) {
                    const int mode = r.modes[j * r.bx * r.by + b] & 7;
                    if (mode == PNMF_RES_PREVIOUS || mode == PNMF_RES_MOTION || mode == PNMF_RES_SHIFTED) prev_used += 1 + (j == 0) * 1000;
                }
            CHECK(prev_used < 1000); /* never in the first frame */
            if (lam == 0) {
                /* no rate: every pixel within half a step (+1 for the rounding
                 * of dequant), and a transform block, chosen for its squared
                 * error, no worse than that in all */
                CHECK_MSG(maxe <= steps[s] / 32 + 1, "step %d: max error %d", steps[s], maxe);
                CHECK_MSG(maxt <= 64L * (steps[s] / 32 + 1) * (steps[s] / 32 + 1), "step %d: transform block error %ld",
                          steps[s], maxt);
                if (steps[s] <= 16) CHECK(maxe == 0); /* step 1 or less: lossless */
            }
            if (lam == 2) CHECK(r.nlev == 0); /* rate dominates: nothing coded */
            if (lam == 1 && steps[s] == 64) CHECK(prev_used > 0); /* the background repeats */
            int shifted = 0;
            for (size_t q = 0; q < (size_t)M * r.bx * r.by; q++) shifted += (r.modes[q] & 7) == PNMF_RES_SHIFTED;
            CHECK(r.nmv == (size_t)shifted);
            for (size_t q = 0; q < (size_t)M * r.bx * r.by; q++) transformed += (r.modes[q] & PNMF_RES_TRANSFORM) != 0;
            pnmf_residual_free(&r);
        }
    CHECK(transformed > 0); /* some blocks chose the transform, and decoded the same */
    free(src), free(P), free(De), free(Dd);
}

/* The spatial mode against a whole-frame raster MED written from the
 * definition: the block order must not matter. With sparse, every block
 * is coded or not at random and few levels are nonzero, so that flat
 * rows (an uncoded block's row whose left sample equals the row above
 * it) occur, inside the frame and at its right edge's narrow blocks. */
static int test_spatial_with(int sparse)
{
    const int rows = 19, cols = 27;
    PnmfResidual r;
    CHECK(pnmf_residual_alloc(&r, 1, rows, cols, 99, 24) == 0);
    r.lev = malloc((size_t)rows * cols * sizeof(int16_t));
    r.cap = (size_t)rows * cols;
    memset(r.modes, PNMF_RES_SPATIAL | PNMF_RES_CODED, (size_t)r.bx * r.by);
    for (int b = 0; sparse && b < r.bx * r.by; b++)
        if (b && urn(2)) r.modes[b] = PNMF_RES_SPATIAL; /* uncoded: no levels */
    /* levels in block order; remember each pixel's level */
    int16_t *lv = malloc((size_t)rows * cols * sizeof(int16_t));
    for (int b = 0; b < r.bx * r.by; b++) {
        const int y0 = b / r.bx * 8, x0 = b % r.bx * 8;
        for (int y = y0; y < y0 + 8 && y < rows; y++)
            for (int x = x0; x < x0 + 8 && x < cols; x++) {
                int16_t l = (int16_t)((int)urn(21) - 10);
                if (sparse && urn(16)) l = 0;
                if (!(r.modes[b] & PNMF_RES_CODED)) l = 0;
                lv[y * cols + x] = l;
                if (r.modes[b] & PNMF_RES_CODED) r.lev[r.nlev++] = l;
            }
    }
    r.start[1] = r.nlev;
    uint8_t *D = malloc((size_t)rows * cols), *ref = malloc((size_t)rows * cols);
    pnmf_residual_frame(&r, 0, D /* unused by mode 3 */, NULL, NULL, D);
    for (int y = 0; y < rows; y++)
        for (int x = 0; x < cols; x++) {
            int p;
            if (!y && !x) p = 128;
            else if (!y) p = ref[x - 1];
            else if (!x) p = ref[(y - 1) * cols];
            else {
                const int a = ref[y * cols + x - 1], b = ref[(y - 1) * cols + x], c = ref[(y - 1) * cols + x - 1];
                const int mx = a > b ? a : b, mn = a < b ? a : b;
                p = c >= mx ? mn : c <= mn ? mx : a + b - c;
            }
            const int l = lv[y * cols + x];
            /* dequant(l) = round-half-away(l * 24 / 16), from the definition */
            const int dq = l >= 0 ? (l * 24 + 8) / 16 : -((-l * 24 + 8) / 16);
            int v = p + dq;
            ref[y * cols + x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    CHECK(!memcmp(D, ref, (size_t)rows * cols));
    int flat = 0; /* the frame's flat rows, which the decoder fills at once */
    if (sparse) {
        for (int b = 0; b < r.bx * r.by; b++) {
            const int y0 = b / r.bx * 8, x0 = b % r.bx * 8, x1 = x0 + 8 < cols ? x0 + 8 : cols;
            for (int y = y0; x0 && y < y0 + 8 && y < rows && y; y++) {
                int f = !(r.modes[b] & PNMF_RES_CODED);
                for (int x = x0 - 1; f && x < x1; x++) f = ref[(y - 1) * cols + x] == ref[y * cols + x0 - 1];
                flat += f;
            }
        }
    }
    free(D), free(ref), free(lv);
    pnmf_residual_free(&r);
    return flat;
}

static void test_spatial(void)
{
    test_spatial_with(0);
    int flat = 0;
    for (int k = 0; k < 20; k++) flat += test_spatial_with(1);
    CHECK_MSG(flat > 20, "%d flat rows", flat);
}

/* Shifted blocks against the definition: sample (y + dy, x + dx) of the
 * previous frame, clamped to the frame; vectors through the payload. */
static void test_shifted(void)
{
    const int rows = 19, cols = 27, m = 2;
    PnmfWindowModel md;
    CHECK(pnmf_model_alloc(&md, rows, cols, rows, cols, m, 1, 0) == 0);
    PnmfResidual *r = &md.res;
    CHECK(pnmf_residual_alloc(r, m, rows, cols, 16, 16) == 0);
    const size_t nb = (size_t)r->bx * r->by;
    r->mv = malloc(2 * nb * sizeof(int16_t));
    r->mvref = malloc(nb);
    r->mvcap = 2 * nb;
    r->continues = 1; /* frame 1 may reach back to frames -3 .. 0 */
    md.res.continues = 1;
    int16_t vec[64][2];
    int refs[64];
    for (size_t b = 0; b < nb; b++) {
        r->modes[nb + b] = PNMF_RES_SHIFTED;
        vec[b][0] = (int16_t)((int)urn(129) - 64), vec[b][1] = (int16_t)((int)urn(129) - 64);
        if (b == 3) vec[b][0] = 64, vec[b][1] = -64;
        refs[b] = (int)urn(PNMF_RES_REFS);
        r->mv[2 * b] = vec[b][0], r->mv[2 * b + 1] = vec[b][1];
        r->mvref[b] = (uint8_t)refs[b];
    }
    r->nmv = nb;
    r->mvstart[1] = 0, r->mvstart[2] = nb;
    static uint8_t prev[PNMF_RES_REFS][19 * 27];
    uint8_t D[19 * 27];
    const uint8_t *ref[PNMF_RES_REFS];
    for (int t = 0; t < PNMF_RES_REFS; t++) {
        for (int q = 0; q < rows * cols; q++) prev[t][q] = (uint8_t)urn(256);
        ref[t] = prev[t];
    }
    pnmf_residual_frame(r, 1, NULL, NULL, ref, D);
    int same = 1;
    for (int y = 0; y < rows; y++)
        for (int x = 0; x < cols; x++) {
            const int b = y / 8 * r->bx + x / 8;
            int sy = y + vec[b][0], sx = x + vec[b][1];
            sy = sy < 0 ? 0 : sy > rows - 1 ? rows - 1 : sy;
            sx = sx < 0 ? 0 : sx > cols - 1 ? cols - 1 : sx;
            same &= D[y * cols + x] == prev[refs[b]][sy * cols + sx];
        }
    CHECK(same);
    uint8_t *buf = NULL;
    size_t size = 0;
    CHECK(pnmf_model_write(&md, &buf, &size) == 0);
    PnmfWindowModel rd;
    char err[200] = "";
    CHECK_MSG(pnmf_model_read(buf, size, rows, cols, rows, cols, m, 4, 4, 2, &rd, err, sizeof err) == 0, "%s", err);
    CHECK(rd.res.nmv == nb && !memcmp(rd.res.mv, r->mv, 2 * nb * sizeof(int16_t)) &&
          !memcmp(rd.res.mvref, r->mvref, nb));
    int reach = 0;
    for (size_t b = 0; b < nb; b++) reach = refs[b] + 1 - 1 > reach ? refs[b] : reach; /* frame 1 */
    CHECK(rd.res.reach == reach);
    pnmf_model_free(&rd);
    /* a reference beyond the key window is refused */
    md.res.continues = 0;
    pnmf_free(buf);
    CHECK(pnmf_model_write(&md, &buf, &size) == 0);
    CHECK(pnmf_model_read(buf, size, rows, cols, rows, cols, m, 4, 4, 2, &rd, err, sizeof err) < 0 &&
          strstr(err, "not available"));
    md.res.continues = 1;
    /* a vector of 65 is refused */
    r->mv[0] = 65;
    pnmf_free(buf);
    CHECK(pnmf_model_write(&md, &buf, &size) == 0);
    CHECK(pnmf_model_read(buf, size, rows, cols, rows, cols, m, 4, 4, 2, &rd, err, sizeof err) < 0 &&
          strstr(err, "vector out of range"));
    pnmf_free(buf);
    pnmf_model_free(&md);
}

/* Window flags bit 12 against its definition: frame 0 at key_step, every
 * period-th frame after it at casc_step, the others at step; pixel levels
 * decoded directly from that table, after the payload's round trip, and
 * a period of 0 or a cascade step under 16 refused. */
static void test_cascade(void)
{
    const int rows = 16, cols = 16, m = 7, period = 3;
    const int step = 72, key = 20, casc = 40;
    PnmfWindowModel md;
    CHECK(pnmf_model_alloc(&md, rows, cols, rows, cols, m, 1, 0) == 0);
    PnmfResidual *r = &md.res;
    CHECK(pnmf_residual_alloc(r, m, rows, cols, step, key) == 0);
    r->casc_period = period, r->casc_step16 = casc, r->casc_qp = 17;
    const size_t nb = (size_t)r->bx * r->by, n = (size_t)rows * cols;
    r->lev = malloc((size_t)m * n * sizeof(int16_t));
    r->nlev = r->cap = (size_t)m * n;
    for (int j = 0; j < m; j++) {
        for (size_t b = 0; b < nb; b++) r->modes[(size_t)j * nb + b] = PNMF_RES_MODEL | PNMF_RES_CODED;
        r->start[j + 1] = (size_t)(j + 1) * n;
    }
    for (size_t q = 0; q < (size_t)m * n; q++) r->lev[q] = (int16_t)((int)urn(9) - 4);
    uint8_t *buf = NULL;
    size_t size = 0;
    CHECK(pnmf_model_write(&md, &buf, &size) == 0);
    PnmfWindowModel rd;
    char err[200] = "";
    /* a v8 reader does not know bit 12 */
    CHECK(pnmf_model_read_version(8, buf, size, rows, cols, rows, cols, m, 4, 4, 2, &rd, err, sizeof err) < 0 &&
          strstr(err, "unknown features"));
    CHECK_MSG(pnmf_model_read(buf, size, rows, cols, rows, cols, m, 4, 4, 2, &rd, err, sizeof err) == 0, "%s", err);
    pnmf_free(buf);
    CHECK(rd.res.casc_period == period && rd.res.casc_step16 == casc && rd.res.casc_qp == 17);
    uint8_t P[16 * 16], D[16 * 16];
    memset(P, 100, sizeof(P));
    int same = 1;
    for (int j = 0; j < m; j++) {
        const int s = j == 0 ? key : j % period == 0 ? casc : step;
        pnmf_residual_frame(&rd.res, j, P, P, NULL, D);
        /* blocks in raster order, each block's samples row-major */
        for (size_t b = 0; b < nb; b++)
            for (int q = 0; q < 64; q++) {
                const int l = r->lev[(size_t)j * n + b * 64 + (size_t)q];
                const int v = 100 + (l * s + (l > 0 ? 8 : l < 0 ? -8 : 0)) / 16;
                const int y = (int)(b / (size_t)r->bx) * 8 + q / 8, x = (int)(b % (size_t)r->bx) * 8 + q % 8;
                same &= D[y * cols + x] == v;
            }
    }
    CHECK(same);
    pnmf_model_free(&rd);
    /* out of range: a period of 0, a step under 16 */
    for (int bad = 0; bad < 2; bad++) {
        r->casc_period = bad ? period : 0, r->casc_step16 = bad ? 15 : casc;
        /* period 0 writes no cascade: flag the payload's window by hand */
        CHECK(pnmf_model_write(&md, &buf, &size) == 0);
        if (!bad) {
            /* the flags varint first: set bit 12 and insert the three
             * varints after the block size, by writing with period 1 and
             * patching its varint to 0 */
            pnmf_free(buf);
            r->casc_period = 1;
            CHECK(pnmf_model_write(&md, &buf, &size) == 0);
            size_t at = 0; /* the varints step, key, qp, key_qp, 8, 1, casc: find "8, 1, casc" */
            while (at + 3 <= size && !(buf[at] == 8 && buf[at + 1] == 1 && buf[at + 2] == casc)) at++;
            CHECK(at + 3 <= size);
            buf[at + 1] = 0;
        }
        CHECK(pnmf_model_read(buf, size, rows, cols, rows, cols, m, 4, 4, 2, &rd, err, sizeof err) < 0 &&
              strstr(err, "step cascade"));
        pnmf_free(buf);
    }
    pnmf_model_free(&md);
}

/* Format 7's global vectors against the definition: a previous block of
 * frame j predicts sample (y + gy, x + gx) of the frame before, clamped,
 * (gy, gx) the frame's global vector; uncoded and with pixel levels;
 * the vectors go through the payload, and one past 64 is refused. */
static void test_global_vector(void)
{
    const int rows = 19, cols = 27, m = 4;
    for (int round = 0; round < 10; round++) {
        PnmfWindowModel md;
        CHECK(pnmf_model_alloc(&md, rows, cols, rows, cols, m, 1, 0) == 0);
        PnmfResidual *r = &md.res;
        CHECK(pnmf_residual_alloc(r, m, rows, cols, 40, 40) == 0);
        r->continues = 1;
        const size_t nb = (size_t)r->bx * r->by;
        r->lev = malloc((size_t)m * rows * cols * sizeof(int16_t));
        r->cap = (size_t)m * rows * cols;
        for (int j = 0; j < m; j++) {
            r->gmv[2 * j] = (int16_t)(round == 0 && j == 1 ? 64 : (int)urn(129) - 64);
            r->gmv[2 * j + 1] = (int16_t)(round == 0 && j == 1 ? -64 : urn(3) ? (int)urn(9) - 4 : 0);
            r->start[j] = r->nlev;
            for (size_t b = 0; b < nb; b++) {
                int y0, y1, x0, x1;
                pnmf_residual_block(r->bx, rows, cols, b, &y0, &y1, &x0, &x1);
                const int coded = (int)urn(2);
                r->modes[j * nb + b] = (uint8_t)(PNMF_RES_PREVIOUS | (coded ? PNMF_RES_CODED : 0));
                for (int i = 0; coded && i < (y1 - y0) * (x1 - x0); i++) r->lev[r->nlev++] = (int16_t)((int)urn(9) - 4);
            }
        }
        r->start[m] = r->nlev;
        static uint8_t D[5][19 * 27], want[19 * 27];
        for (int q = 0; q < rows * cols; q++) D[0][q] = (uint8_t)urn(256);
        for (int j = 0; j < m; j++) {
            const uint8_t *ref[PNMF_RES_REFS] = { D[j] };
            pnmf_residual_frame(r, j, NULL, NULL, ref, D[j + 1]);
            const int16_t *lev = r->lev + r->start[j];
            for (size_t b = 0; b < nb; b++) {
                int y0, y1, x0, x1;
                pnmf_residual_block(r->bx, rows, cols, b, &y0, &y1, &x0, &x1);
                for (int y = y0; y < y1; y++)
                    for (int x = x0; x < x1; x++) {
                        int sy = y + r->gmv[2 * j], sx = x + r->gmv[2 * j + 1];
                        sy = sy < 0 ? 0 : sy > rows - 1 ? rows - 1 : sy;
                        sx = sx < 0 ? 0 : sx > cols - 1 ? cols - 1 : sx;
                        int v = D[j][sy * cols + sx];
                        if (r->modes[j * nb + b] & PNMF_RES_CODED) {
                            const int l = *lev++;
                            v += l >= 0 ? (l * 40 + 8) / 16 : -((-l * 40 + 8) / 16);
                        }
                        want[y * cols + x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
                    }
            }
            CHECK_MSG(!memcmp(D[j + 1], want, (size_t)rows * cols), "round %d frame %d", round, j);
        }
        uint8_t *buf = NULL;
        size_t size = 0;
        CHECK(pnmf_model_write(&md, &buf, &size) == 0);
        PnmfWindowModel rd;
        char err[200] = "";
        CHECK_MSG(pnmf_model_read(buf, size, rows, cols, rows, cols, m, 4, 4, 2, &rd, err, sizeof err) == 0, "%s", err);
        CHECK(!memcmp(rd.res.gmv, r->gmv, (size_t)m * 2 * sizeof(int16_t)));
        pnmf_model_free(&rd);
        /* a reader of format 6 knows no global vector: its frames predict
         * in place */
        if (pnmf_model_read_version(6, buf, size, rows, cols, rows, cols, m, 4, 4, 2, &rd, err, sizeof err) == 0) {
            for (int j = 0; j < m; j++) CHECK(!rd.res.gmv[2 * j] && !rd.res.gmv[2 * j + 1]);
            pnmf_model_free(&rd);
        }
        pnmf_free(buf);
        if (round == 0) {
            /* a global vector past 64 is refused (the writer; the reader's
             * bound is reached by the payload tests' bit flips) */
            r->gmv[2] = 65;
            CHECK(pnmf_model_write(&md, &buf, &size) == PNMF_ERR_ARG);
        }
        pnmf_model_free(&md);
    }
}

/* A textured frame panning by (2, -3) a frame and no model: the encoder
 * finds the pan, makes it each frame's global vector (format 7), and the
 * blocks it displaces cost far less than coding. */
static void test_pan(void)
{
    enum { R = 48, C = 64, F = 4 };
    static uint8_t src[F][R * C], P[R * C], D[F][R * C];
    uint8_t big[R + 16][C + 16];
    for (int y = 0; y < R + 16; y++)
        for (int x = 0; x < C + 16; x++) big[y][x] = (uint8_t)(((x * 37) ^ (y * 91)) & 255);
    for (int j = 0; j < F; j++)
        for (int y = 0; y < R; y++)
            for (int x = 0; x < C; x++) src[j][y * C + x] = big[y + 2 * j][x + 12 - 3 * j];
    memset(P, 0, sizeof P);
    PnmfResidual r;
    CHECK(pnmf_residual_alloc(&r, F, R, C, 64, 16) == 0);
    for (int j = 0; j < F; j++) {
        const uint8_t *ref[PNMF_RES_REFS];
        for (int t = 0; t < PNMF_RES_REFS; t++) ref[t] = j - 1 - t >= 0 ? D[j - 1 - t] : NULL;
        CHECK(pnmf_residual_encode_frame(&r, j, src[j], P, P, ref, j < PNMF_RES_REFS ? j : PNMF_RES_REFS, D[j],
                                         2.0) == 0);
    }
    /* interior blocks of frames 1.. predict from (y + 2, x - 3) a frame
     * back (the previous prediction displaced by the frame's global
     * vector), or as far a frame further back, exactly */
    int found = 0, interior = 0;
    for (int j = 1; j < F; j++) {
        CHECK_MSG(r.gmv[2 * j] == 2 && r.gmv[2 * j + 1] == -3, "frame %d: global vector %d, %d", j, r.gmv[2 * j],
                  r.gmv[2 * j + 1]);
        for (size_t q = r.mvstart[j]; q < r.mvstart[j + 1]; q++) {
            const int t = r.mvref[q] + 1;
            found += r.mv[2 * q] == 2 * t && r.mv[2 * q + 1] == -3 * t;
        }
        for (int b = 0; b < r.bx * r.by; b++) found += (r.modes[j * r.bx * r.by + b] & 7) == PNMF_RES_PREVIOUS;
    }
    for (int by = 0; by < r.by - 1; by++)
        for (int bx = 1; bx < r.bx; bx++) interior++;
    CHECK_MSG(found >= 3 * interior, "%d blocks with the pan's vector, %d interior", found, interior);
    CHECK(r.start[F] - r.start[1] < r.start[1]); /* frames 1..3 code less than frame 0 */
    pnmf_residual_free(&r);
}

/* A sprite cycling through 6 poses (format 3's references, up to 16
 * frames back): from frame 6 on, the encoder predicts the sprite's blocks
 * from the frame 6 back (reference t = 5, vector 0), which format 2 could
 * not name, and the decoder shows exactly what the encoder measured. */
static void test_far_reference(void)
{
    enum { R = 32, C = 48, F = 14, POSES = 6 };
    static uint8_t src[F][R * C], P[R * C], D[F][R * C], Ddec[F][R * C], pose[POSES][8][8];
    unsigned seed = 99;
    for (int p = 0; p < POSES; p++)
        for (int y = 0; y < 8; y++)
            for (int x = 0; x < 8; x++) seed = seed * 1103515245u + 12345u, pose[p][y][x] = (uint8_t)(128 + (seed >> 17) % 120);
    for (int j = 0; j < F; j++) {
        for (int q = 0; q < R * C; q++) src[j][q] = (uint8_t)(30 + (q * 7) % 19);
        for (int y = 0; y < 8; y++)
            for (int x = 0; x < 8; x++) src[j][(16 + y) * C + 16 + x] = pose[j % POSES][y][x]; /* block-aligned */
    }
    memset(P, 0, sizeof P);
    PnmfResidual r;
    CHECK(pnmf_residual_alloc(&r, F, R, C, 32, 16) == 0);
    for (int j = 0; j < F; j++) {
        const uint8_t *ref[PNMF_RES_REFS];
        for (int t = 0; t < PNMF_RES_REFS; t++) ref[t] = j - 1 - t >= 0 ? D[j - 1 - t] : NULL;
        CHECK(pnmf_residual_encode_frame(&r, j, src[j], P, P, ref, j < PNMF_RES_REFS ? j : PNMF_RES_REFS, D[j],
                                         4.0) == 0);
    }
    /* the sprite's block (row 2, column 2 of 8x8 blocks) in frames 6..13 */
    int far = 0;
    for (int j = POSES; j < F; j++) {
        const size_t nb = (size_t)r.bx * r.by, b = 2 * (size_t)r.bx + 2;
        size_t q = r.mvstart[j];
        for (size_t bb = 0; bb < b; bb++) q += (r.modes[j * nb + bb] & 7) == PNMF_RES_SHIFTED;
        if ((r.modes[j * nb + b] & 7) == PNMF_RES_SHIFTED && r.mvref[q] == POSES - 1 && !r.mv[2 * q] && !r.mv[2 * q + 1])
            far++;
    }
    CHECK_MSG(far == F - POSES, "%d of %d sprite blocks from 6 frames back", far, F - POSES);
    for (int j = 0; j < F; j++) {
        const uint8_t *ref[PNMF_RES_REFS];
        for (int t = 0; t < PNMF_RES_REFS; t++) ref[t] = j - 1 - t >= 0 ? Ddec[j - 1 - t] : NULL;
        pnmf_residual_frame(&r, j, P, P, ref, Ddec[j]);
    }
    CHECK(!memcmp(D, Ddec, sizeof D));
    pnmf_residual_free(&r);
}

/* The inverse 4x4 transform, and its sum with a prediction, against
 * H.264's equations (8.5.12.1 and 8.5.12.2) written out sample by sample:
 * exact for every quantizer, on blocks without levels, with the first
 * alone (the sum's shortcut), with a few, and with all. */
static void test_transform_exact(void)
{
    static const int zz[16] = { 0, 1, 4, 8, 5, 2, 3, 6, 9, 12, 13, 10, 7, 11, 14, 15 };
    static const int v[6][3] = { { 10, 16, 13 }, { 11, 18, 14 }, { 13, 20, 16 }, { 14, 23, 18 }, { 16, 25, 20 }, { 18, 29, 23 } };
    int ok = 1, ok_add = 1;
    for (int t = 0; t < 4000; t++) {
        const int qp = (int)urn(PNMF_RES_MAX_QP + 1), kind = t % 4;
        int16_t lev[16] = { 0 };
        if (kind == 1) lev[0] = (int16_t)((int)urn(401) - 200);
        for (int k = 0; kind >= 2 && k < (kind == 2 ? 1 + (int)urn(4) : 16); k++)
            lev[kind == 2 ? (int)urn(16) : k] = (int16_t)((int)urn(2 * PNMF_RES_MAX_COEF + 1) - PNMF_RES_MAX_COEF);
        /* c[i][j]: the dequantized coefficient of row i, column j */
        int64_t c[4][4], f[4][4], g[4][4];
        for (int z = 0; z < 16; z++) {
            const int i = zz[z] >> 2, j = zz[z] & 3, cls = (i & 1) == (j & 1) ? (i & 1) : 2;
            c[i][j] = (int64_t)lev[z] * v[qp % 6][cls] * (1LL << (qp / 6));
        }
        for (int i = 0; i < 4; i++) { /* each row */
            const int64_t e = c[i][0] + c[i][2], ff = c[i][0] - c[i][2];
            const int64_t gg = (c[i][1] >> 1) - c[i][3], h = c[i][1] + (c[i][3] >> 1);
            f[i][0] = e + h, f[i][1] = ff + gg, f[i][2] = ff - gg, f[i][3] = e - h;
        }
        for (int j = 0; j < 4; j++) { /* then each column */
            const int64_t e = f[0][j] + f[2][j], ff = f[0][j] - f[2][j];
            const int64_t gg = (f[1][j] >> 1) - f[3][j], h = f[1][j] + (f[3][j] >> 1);
            g[0][j] = e + h, g[1][j] = ff + gg, g[2][j] = ff - gg, g[3][j] = e - h;
        }
        int r[16];
        uint8_t pred[4 * 6], dst[4 * 7];
        for (int q = 0; q < 24; q++) pred[q] = (uint8_t)urn(256);
        memset(dst, 0xAB, sizeof dst);
        pnmf_residual_idct4(lev, qp, r);
        pnmf_residual_idct4_add(lev, qp, pred, 6, dst, 7);
        for (int y = 0; y < 4; y++)
            for (int x = 0; x < 4; x++) {
                const int64_t e = (g[y][x] + 32) >> 6, s = pred[y * 6 + x] + e;
                ok &= r[y * 4 + x] == e;
                ok_add &= dst[y * 7 + x] == (s < 0 ? 0 : s > 255 ? 255 : s);
            }
        for (int y = 0; y < 4; y++) /* nothing outside the 4x4 block */
            for (int x = 4; x < 7; x++) ok_add &= dst[y * 7 + x] == 0xAB;
    }
    CHECK(ok);
    CHECK(ok_add);
}

/* The transform pair against its matrix definition: the forward
 * transform is Cf X Cf^T exactly; the inverse of a dequantized level is
 * Ci^T D Ci / 64 (Ci with the halves of H.264 8.5.12) within rounding; and
 * forward + H.264's quantizer + inverse gives back a residual within about
 * a quantizer step. */
static void test_transform(void)
{
    static const double cf[4][4] = { { 1, 1, 1, 1 }, { 2, 1, -1, -2 }, { 1, -1, -1, 1 }, { 1, -2, 2, -1 } };
    static const double ci[4][4] = { { 1, 1, 1, 1 }, { 1, .5, -.5, -1 }, { 1, -1, -1, 1 }, { .5, -1, 1, -.5 } };
    static const int zz[16] = { 0, 1, 4, 8, 5, 2, 3, 6, 9, 12, 13, 10, 7, 11, 14, 15 };
    static const int v[6][3] = { { 10, 16, 13 }, { 11, 18, 14 }, { 13, 20, 16 }, { 14, 23, 18 }, { 16, 25, 20 }, { 18, 29, 23 } };
    int ok_f = 1, ok_i = 1;
    for (int t = 0; t < 200; t++) {
        int x[16], w[16];
        for (int q = 0; q < 16; q++) x[q] = (int)urn(511) - 255;
        pnmf_residual_fdct4(x, w);
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) {
                double a = 0;
                for (int p = 0; p < 4; p++)
                    for (int q = 0; q < 4; q++) a += cf[i][p] * x[p * 4 + q] * cf[j][q];
                ok_f &= fabs(a - w[i * 4 + j]) < 1e-9;
            }
    }
    CHECK(ok_f);
    for (int qp = 0; qp <= 51; qp += 3)
        for (int z = 0; z < 16; z++) {
            int16_t lev[16] = { 0 };
            lev[z] = (int16_t)((int)urn(41) - 20);
            int r[16];
            pnmf_residual_idct4(lev, qp, r);
            const int pos = zz[z], pi = pos >> 2, pj = pos & 3;
            const int cls = (pi & 1) == (pj & 1) ? (pi & 1) : 2;
            const double d = (double)lev[z] * v[qp % 6][cls] * (1 << (qp / 6));
            for (int y = 0; y < 4; y++)
                for (int x = 0; x < 4; x++) {
                    const double e = ci[pi][y] * d * ci[pj][x] / 64;
                    ok_i &= fabs(e - r[y * 4 + x]) <= 1 + fabs(d) / 64 * 0.5 / 64 + 0.5;
                }
        }
    CHECK(ok_i);
    /* H.264's forward quantizer factors (Richardson 2003, table 6.4.8) with
     * rounding to nearest: the round trip errs by about a step at most */
    static const int mf[6][3] = { { 13107, 5243, 8066 }, { 11916, 4660, 7490 }, { 10082, 4194, 6554 },
                                  { 9362, 3647, 5825 },  { 8192, 3355, 5243 },  { 7282, 2893, 4559 } };
    for (int qp = 0; qp <= 48; qp += 6) {
        const double qstep = 0.625 * pow(2, qp / 6.0);
        double worst = 0;
        for (int t = 0; t < 200; t++) {
            int x[16], w[16], r[16];
            int16_t lev[16];
            for (int q = 0; q < 16; q++) x[q] = (int)urn(511) - 255;
            pnmf_residual_fdct4(x, w);
            for (int z2 = 0; z2 < 16; z2++) {
                const int pos = zz[z2], pi = pos >> 2, pj = pos & 3;
                const int cls = (pi & 1) == (pj & 1) ? (pi & 1) : 2;
                const long a = labs((long)w[pos]);
                const long l = (a * mf[qp % 6][cls] + (1L << (15 + qp / 6)) / 2) >> (15 + qp / 6);
                lev[z2] = (int16_t)(w[pos] < 0 ? -l : l);
            }
            pnmf_residual_idct4(lev, qp, r);
            for (int q = 0; q < 16; q++) worst = fmax(worst, fabs((double)r[q] - x[q]));
        }
        CHECK_MSG(worst <= 1.0 + 1.5 * qstep, "qp %d: error %g for step %g", qp, worst, qstep);
    }
}

/* The intra predictions (format 7) against their definition: block by
 * block in raster order, DC / V / H of the decoded row above and column
 * left of the block (a missing side repeating the other's first sample,
 * 128 with neither), uncoded, with pixel levels, or (whole blocks) the
 * four 4x4 quarters each predicted from the samples around it, the
 * quarters before it decoded, plus the inverse transform of its levels. */
static void intra_ref(int mode, const uint8_t *D, int cols, int y0, int y1, int x0, int x1, int *pred)
{
    const int h = y1 - y0, w = x1 - x0;
    int above[8], left[8], sum = 0;
    for (int i = 0; i < w; i++) above[i] = y0 ? D[(y0 - 1) * cols + x0 + i] : x0 ? D[y0 * cols + x0 - 1] : 128;
    for (int i = 0; i < h; i++) left[i] = x0 ? D[(y0 + i) * cols + x0 - 1] : y0 ? D[(y0 - 1) * cols + x0] : 128;
    for (int i = 0; i < w; i++) sum += above[i];
    for (int i = 0; i < h; i++) sum += left[i];
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            pred[y * w + x] = mode == PNMF_RES_INTRA_DC ? (sum + (w + h) / 2) / (w + h)
                              : mode == PNMF_RES_INTRA_V ? above[x] : left[y];
}

static void test_intra(void)
{
    const int rows = 19, cols = 27, qp = 20;
    for (int round = 0; round < 20; round++) {
        PnmfResidual r;
        CHECK(pnmf_residual_alloc(&r, 1, rows, cols, 40, 40) == 0);
        r.qp = r.key_qp = qp;
        const int nb = r.bx * r.by;
        r.lev = malloc((size_t)nb * 64 * sizeof(int16_t));
        r.cap = (size_t)nb * 64;
        for (int b = 0; b < nb; b++) {
            int y0, y1, x0, x1;
            pnmf_residual_block(r.bx, rows, cols, (size_t)b, &y0, &y1, &x0, &x1);
            const int full = y1 - y0 == 8 && x1 - x0 == 8;
            const int coding = (int)urn(full ? 3 : 2); /* 0 none, 1 pixels, 2 transform */
            r.modes[b] = (uint8_t)(PNMF_RES_INTRA_DC + (int)urn(3) + (coding ? PNMF_RES_CODED : 0) +
                                   (coding == 2 ? PNMF_RES_TRANSFORM : 0));
            const int n = coding == 2 ? 64 : coding ? (y1 - y0) * (x1 - x0) : 0;
            for (int i = 0; i < n; i++)
                r.lev[r.nlev++] = (int16_t)(coding == 2 ? (urn(4) ? 0 : (int)urn(9) - 4) : (int)urn(9) - 4);
        }
        r.start[1] = r.nlev;
        uint8_t *D = malloc((size_t)rows * cols), *ref = malloc((size_t)rows * cols);
        pnmf_residual_frame(&r, 0, NULL, NULL, NULL, D);
        const int16_t *lev = r.lev;
        for (int b = 0; b < nb; b++) {
            int y0, y1, x0, x1, pred[64];
            pnmf_residual_block(r.bx, rows, cols, (size_t)b, &y0, &y1, &x0, &x1);
            const int mode = r.modes[b] & 7, w = x1 - x0;
            if (r.modes[b] & PNMF_RES_TRANSFORM) {
                for (int sb = 0; sb < 4; sb++) {
                    const int sy = y0 + (sb >> 1) * 4, sx = x0 + (sb & 1) * 4;
                    int res[16];
                    intra_ref(mode, ref, cols, sy, sy + 4, sx, sx + 4, pred);
                    pnmf_residual_idct4(lev, qp, res);
                    lev += 16;
                    for (int q = 0; q < 16; q++) {
                        const int v = pred[q] + res[q];
                        ref[(sy + q / 4) * cols + sx + q % 4] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
                    }
                }
                continue;
            }
            intra_ref(mode, ref, cols, y0, y1, x0, x1, pred);
            for (int y = y0; y < y1; y++)
                for (int x = x0; x < x1; x++) {
                    int v = pred[(y - y0) * w + x - x0];
                    if (r.modes[b] & PNMF_RES_CODED) {
                        const int l = *lev++; /* dequant: round-half-away(l * 40 / 16) */
                        v += l >= 0 ? (l * 40 + 8) / 16 : -((-l * 40 + 8) / 16);
                    }
                    ref[y * cols + x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
                }
        }
        CHECK_MSG(!memcmp(D, ref, (size_t)rows * cols), "round %d", round);
        free(D), free(ref);
        pnmf_residual_free(&r);
    }
    /* the encoder picks them where they pay (a smooth first frame: flat
     * patches and gradients, where a block prediction and a few transform
     * coefficients cost less than a level per pixel), and decodes as the
     * decoder does */
    const size_t n = (size_t)ROWS * COLS;
    uint8_t *src = malloc(M * n), *P = malloc(M * n), *De = malloc(M * n), *Dd = malloc(M * n);
    for (size_t q = 0; q < M * n; q++) {
        const int y = (int)(q % n) / COLS, x = (int)(q % n) % COLS;
        src[q] = (uint8_t)(x < 16 ? 60 + 4 * y : 200 - 3 * x + (int)urn(3)), P[q] = 0;
    }
    PnmfResidual r;
    CHECK(pnmf_residual_alloc(&r, M, ROWS, COLS, 128, 128) == 0);
    encode_clip(&r, src, P, 2 * 0.6931 * 64 / 12, De, Dd);
    int intra = 0;
    for (int b = 0; b < r.bx * r.by; b++) intra += (r.modes[b] & 7) >= PNMF_RES_INTRA_DC;
    CHECK_MSG(intra > 0, "no intra block in the first frame");
    CHECK(!memcmp(De, Dd, M * n));
    pnmf_residual_free(&r);
    free(src), free(P), free(De), free(Dd);
}

/* Two poses in turn (A B A B ...), as animation cycles do: frames from 2
 * on are found in frame j-2 (reference 1), and cost next to nothing. */
static void test_cycle(void)
{
    enum { R = 32, C = 40, F = 6 };
    static uint8_t src[F][R * C], P[R * C], D[F][R * C];
    for (int j = 0; j < F; j++)
        for (int q = 0; q < R * C; q++) src[j][q] = (uint8_t)(j & 1 ? (q * 7919u) >> 3 : (q * 104729u) >> 5);
    memset(P, 0, sizeof P);
    PnmfResidual r;
    CHECK(pnmf_residual_alloc(&r, F, R, C, 64, 16) == 0);
    for (int j = 0; j < F; j++) {
        const uint8_t *ref[PNMF_RES_REFS];
        for (int t = 0; t < PNMF_RES_REFS; t++) ref[t] = j - 1 - t >= 0 ? D[j - 1 - t] : NULL;
        CHECK(pnmf_residual_encode_frame(&r, j, src[j], P, P, ref, j < PNMF_RES_REFS ? j : PNMF_RES_REFS, D[j],
                                         8.0) == 0);
    }
    const size_t nb = (size_t)r.bx * r.by;
    int ok = 1;
    for (int j = 2; j < F; j++) {
        ok &= r.mvstart[j + 1] - r.mvstart[j] == nb; /* every block shifted ... */
        for (size_t q = r.mvstart[j]; q < r.mvstart[j + 1]; q++)
            ok &= r.mvref[q] == 1 && !r.mv[2 * q] && !r.mv[2 * q + 1]; /* ... from j-2, in place */
        ok &= r.start[j + 1] == r.start[j]; /* no levels */
    }
    CHECK(ok);
    pnmf_residual_free(&r);
}

/* md with block q's mode (frames in order) set to mode: written, then
 * refused by the reader as "not allowed". */
static int mode_refused_v(PnmfWindowModel *md, size_t q, uint8_t mode, int version)
{
    const uint8_t keep = md->res.modes[q];
    md->res.modes[q] = mode;
    uint8_t *buf = NULL;
    size_t size = 0;
    int refused = 0;
    if (pnmf_model_write(md, &buf, &size) == 0) {
        PnmfWindowModel rd;
        char err[200] = "";
        const int ret = pnmf_model_read_version(version, buf, size, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, &rd, err,
                                                sizeof err);
        refused = ret < 0 && strstr(err, "not allowed");
        if (ret >= 0) pnmf_model_free(&rd);
    }
    pnmf_free(buf);
    md->res.modes[q] = keep;
    return refused;
}

static int mode_refused(PnmfWindowModel *md, size_t q, uint8_t mode)
{
    return mode_refused_v(md, q, mode, PNMF_PAYLOAD_VERSION);
}

/* A window with a residual layer through pnmf_model_write/read. */
/* A window payload of the test clip as a hostile reader sees it: every
 * truncation refused; every one-bit change read (a range-coded stream
 * decodes to something else) or refused as corrupt with a reason, never
 * anything else (the sanitizer build checks the memory accesses), most of
 * them caught. */
static void check_payload_hostile(const uint8_t *buf, size_t size, const char *what)
{
    PnmfWindowModel rd;
    char err[200];
    int refused = 0;
    for (size_t cut = 0; cut < size; cut++)
        refused += pnmf_model_read(buf, cut, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, &rd, err, sizeof err) < 0;
    CHECK_MSG(refused == (int)size, "%s: %d of %zu truncations refused", what, refused, size);
    uint8_t *bad = malloc(size);
    int odd = 0, read_ok = 0;
    for (size_t q = 0; q < size; q++)
        for (int bit = 0; bit < 8; bit++) {
            memcpy(bad, buf, size);
            bad[q] ^= (uint8_t)(1 << bit);
            err[0] = 0;
            const int ret = pnmf_model_read(bad, size, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, &rd, err, sizeof err);
            if (ret == 0) read_ok++, pnmf_model_free(&rd);
            else odd += ret != PNMF_ERR_CORRUPT || !err[0];
        }
    CHECK_MSG(!odd, "%s: %d of %zu one-bit changes failed without a reason", what, odd, 8 * size);
    CHECK_MSG(read_ok < (int)(8 * size), "%s: no one-bit change caught", what);
    free(bad);
}

/* Format 7's vector candidates: random vector fields drawn from a few
 * vectors (so that a block often repeats the one above it, or the frame
 * returns to the vector it had before a change) go through the writer and
 * the reader unchanged; the candidates are those docs/format.md defines,
 * rebuilt here from the definition, and both kinds are used. */
static void test_vector_candidates(void)
{
    static const int16_t pool[4][3] = { { 0, 2, 0 }, { 1, 4, 1 }, { 0, 0, 0 }, { -3, 5, 2 } };
    int merged_above = 0, merged_prev = 0;
    for (int round = 0; round < 30; round++) {
        PnmfWindowModel md;
        CHECK(pnmf_model_alloc(&md, ROWS, COLS, ROWS, COLS, M, 1, 0) == 0);
        PnmfResidual *r = &md.res;
        CHECK(pnmf_residual_alloc(r, M, ROWS, COLS, 96, 64) == 0);
        const size_t nb = (size_t)r->bx * r->by;
        r->mv = malloc(2 * M * nb * sizeof(int16_t));
        r->mvref = malloc(M * nb);
        for (int j = 0; j < M; j++) {
            r->start[j + 1] = 0;
            r->mvstart[j] = r->nmv;
            /* the definition: above's vector, then the one before the last change */
            int16_t (*cur)[3] = malloc(nb * sizeof(*cur));
            int last[PNMF_RES_REFS][2] = { { 0 } }, lastref = 0, prev[3] = { 0, 0, -1 };
            for (size_t b = 0; b < nb; b++) {
                cur[b][2] = -1;
                if (!j || urn(10) < 3) continue; /* frame 0 of a key window: no vectors */
                const int16_t *v = pool[urn(4)];
                if (v[2] >= j) v = pool[0];
                r->modes[(size_t)j * nb + b] = PNMF_RES_SHIFTED;
                r->mv[2 * r->nmv] = v[0], r->mv[2 * r->nmv + 1] = v[1], r->mvref[r->nmv] = (uint8_t)v[2];
                r->nmv++;
                const int16_t *ab = b >= (size_t)r->bx && cur[b - r->bx][2] >= 0 ? cur[b - r->bx] : NULL;
                int16_t want[2][3], nw = 0;
                if (ab && !(ab[2] == lastref && ab[0] == last[lastref][0] && ab[1] == last[lastref][1]))
                    memcpy(want[nw++], ab, sizeof(want[0]));
                if (prev[2] >= 0 && !(prev[2] == lastref && prev[0] == last[lastref][0] && prev[1] == last[lastref][1]) &&
                    !(nw && want[0][0] == prev[0] && want[0][1] == prev[1] && want[0][2] == prev[2]))
                    want[nw][0] = (int16_t)prev[0], want[nw][1] = (int16_t)prev[1], want[nw][2] = (int16_t)prev[2], nw++;
                for (int i = 0; i < nw; i++)
                    if (want[i][0] == v[0] && want[i][1] == v[1] && want[i][2] == v[2] &&
                        !(v[2] == lastref && v[0] == last[lastref][0] && v[1] == last[lastref][1]))
                        *(ab && !memcmp(want[i], ab, sizeof(want[i])) ? &merged_above : &merged_prev) += 1;
                /* the library's list is the same */
                PnmfVecState st;
                pnmf_vec_init(&st);
                st.lastref = lastref;
                memcpy(st.last, last, sizeof(last));
                st.prev[0] = (int16_t)prev[0], st.prev[1] = (int16_t)prev[1], st.prev[2] = (int16_t)prev[2];
                RcVecCand k;
                pnmf_vec_cands(&st, ab, &k);
                CHECK(k.n == nw && (!nw || !memcmp(k.c, want, (size_t)nw * sizeof(want[0]))));
                if (v[2] != lastref || v[0] != last[lastref][0] || v[1] != last[lastref][1])
                    prev[0] = last[lastref][0], prev[1] = last[lastref][1], prev[2] = lastref;
                last[v[2]][0] = v[0], last[v[2]][1] = v[1], lastref = v[2];
                memcpy(cur[b], v, sizeof(cur[b]));
            }
            free(cur);
        }
        r->mvstart[M] = r->nmv;
        uint8_t *buf = NULL;
        size_t size = 0;
        CHECK(pnmf_model_write(&md, &buf, &size) == 0);
        PnmfWindowModel rd;
        char err[200] = "";
        CHECK_MSG(pnmf_model_read(buf, size, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, &rd, err, sizeof err) == 0, "%s", err);
        CHECK(rd.res.nmv == r->nmv && !memcmp(rd.res.mv, r->mv, 2 * r->nmv * sizeof(int16_t)) &&
              !memcmp(rd.res.mvref, r->mvref, r->nmv));
        pnmf_model_free(&rd);
        pnmf_free(buf);
        pnmf_model_free(&md);
    }
    CHECK_MSG(merged_above > 100 && merged_prev > 100, "candidates used: above %d, before the change %d", merged_above,
              merged_prev);
}

static void test_payload(void)
{
    const size_t n = (size_t)ROWS * COLS;
    uint8_t *src = malloc(M * n), *P = malloc(M * n), *De = malloc(M * n), *Dd = malloc(M * n);
    make_clip(src, P);
    PnmfWindowModel md;
    CHECK(pnmf_model_alloc(&md, ROWS, COLS, ROWS, COLS, M, 1, 0) == 0);
    CHECK(pnmf_residual_alloc(&md.res, M, ROWS, COLS, 96, 64) == 0);
    encode_clip(&md.res, src, P, 10.0, De, Dd);
    CHECK(md.res.nlev > 0);
    uint8_t *buf = NULL;
    size_t size = 0;
    CHECK(pnmf_model_write(&md, &buf, &size) == 0);
    CHECK(buf && buf[0] == PNMF_FLAG_RESIDUAL);
    PnmfWindowModel rd;
    char err[200] = "";
    CHECK_MSG(pnmf_model_read(buf, size, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, &rd, err, sizeof err) == 0, "%s", err);
    CHECK(rd.res.step16 == 96 && rd.res.key_step16 == 64 && rd.res.nlev == md.res.nlev);
    CHECK(!memcmp(rd.res.modes, md.res.modes, (size_t)M * md.res.bx * md.res.by));
    CHECK(rd.res.nlev && !memcmp(rd.res.lev, md.res.lev, md.res.nlev * sizeof(int16_t)));
    for (int j = 0; j <= M; j++) CHECK(rd.res.start[j] == md.res.start[j]);
    pnmf_model_free(&rd);

    /* the layout after the model: steps, block size, modes, vectors, levels */
    const int keep = md.res.step16;
    uint8_t *mbuf = NULL;
    size_t msize = 0;
    md.res.step16 = 0; /* the same model without the layer */
    CHECK(pnmf_model_write(&md, &mbuf, &msize) == 0);
    md.res.step16 = keep;
    pnmf_free(mbuf);
    {
        const size_t nb = (size_t)md.res.bx * md.res.by;
        const size_t modes_at = msize + 5; /* five one-byte values */
        CHECK(buf[modes_at - 1] == PNMF_RES_BLOCK && buf[modes_at - 4] == 64 && buf[modes_at - 5] == 96);
        CHECK(buf[modes_at - 3] == pnmf_residual_qp(96) && buf[modes_at - 2] == pnmf_residual_qp(64));
        CHECK(pnmf_residual_qp(96) == 20 && pnmf_residual_qp(64) == 16); /* 6 log2(s / 0.625), rounded */
        uint8_t *bad = malloc(size);
        /* a first frame that refers to a previous frame */
        /* modes the reader refuses (range-coded: written through the writer,
         * which codes any mode below 32) */
        CHECK(mode_refused(&md, 0, PNMF_RES_PREVIOUS)); /* the first frame refers to a previous one */
        CHECK(mode_refused(&md, 0, PNMF_RES_MOTION | PNMF_RES_CODED));
        CHECK(mode_refused(&md, 0, PNMF_RES_SHIFTED));
        /* the intra predictions: read (from format 7; the writer's streams adapt
         * as format 13 reads them), refused in format 6 */
        for (int mo = PNMF_RES_INTRA_DC; mo <= PNMF_RES_INTRA_H; mo++) {
            CHECK(mode_refused_v(&md, nb, (uint8_t)mo, 6));
            CHECK(!mode_refused_v(&md, nb, (uint8_t)mo, PNMF_PAYLOAD_VERSION));
        }
        memcpy(bad, buf, size);
        bad[modes_at - 1] = 4; /* block size */
        CHECK(pnmf_model_read(bad, size, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, &rd, err, sizeof err) < 0 &&
              strstr(err, "block size"));
        memcpy(bad, buf, size);
        bad[modes_at - 2] = 52; /* key qp over 51 */
        CHECK(pnmf_model_read(bad, size, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, &rd, err, sizeof err) < 0 &&
              strstr(err, "quantizers"));
        CHECK(mode_refused(&md, nb, PNMF_RES_SPATIAL | PNMF_RES_CODED | PNMF_RES_TRANSFORM)); /* no transform with MED */
        CHECK(mode_refused(&md, nb, PNMF_RES_MODEL | PNMF_RES_TRANSFORM)); /* transform without levels */
        /* a clipped block (30 = 3 * 8 + 6) */
        CHECK(mode_refused(&md, nb - 1, PNMF_RES_MODEL | PNMF_RES_CODED | PNMF_RES_TRANSFORM));
        /* a range-coded stream with a byte more or less than its length says */
        {
            uint64_t mode_len = 0, vec_len = 0;
            Rd lr = { buf + modes_at, buf + size };
            CHECK(get_u(&lr, &mode_len) == 0 && get_u(&lr, &vec_len) == 0 && mode_len >= 5 && vec_len >= 5);
            memcpy(bad, buf, size);
            bad[size - vec_len - mode_len] = 1; /* the modes stream's first byte, 0 in every stream */
            CHECK(pnmf_model_read(bad, size, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, &rd, err, sizeof err) < 0);
            memcpy(bad, buf, size);
            bad[modes_at] = (uint8_t)(mode_len - 1); /* one byte fewer: the levels end a byte later */
            CHECK(mode_len < 128 && pnmf_model_read(bad, size, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, &rd, err,
                                                    sizeof err) < 0);
        }
        memcpy(bad, buf, size);
        bad[modes_at - 4] = 7; /* key step below 16/16 */
        CHECK(pnmf_model_read(bad, size, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, &rd, err, sizeof err) < 0 &&
              strstr(err, "out of range"));
        memcpy(bad, buf, size);
        bad[0] = 65; /* sub-pixel vectors (bit 6): unknown before format 9 */
        CHECK(pnmf_model_read_version(8, bad, size, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, &rd, err, sizeof err) < 0 &&
              strstr(err, "unknown features"));
        check_payload_hostile(buf, size, "varint levels");
        free(bad);
    }
    pnmf_free(buf);
    pnmf_model_free(&md);
    free(src), free(P), free(De), free(Dd);
}

/* Format 6's range-coded levels (window flags bit 3): the same window
 * written with its levels as a third stream reads back the same, smaller
 * than the varints here; every truncation is refused, every one-bit change
 * read or refused with a reason, a level past the reader's bound refused,
 * and a payload of version 5 may not use the flag. */
static void test_payload_rc_levels(void)
{
    const size_t n = (size_t)ROWS * COLS;
    uint8_t *src = malloc(M * n), *P = malloc(M * n), *De = malloc(M * n), *Dd = malloc(M * n);
    make_clip(src, P);
    PnmfWindowModel md, rd;
    CHECK(pnmf_model_alloc(&md, ROWS, COLS, ROWS, COLS, M, 1, 0) == 0);
    CHECK(pnmf_residual_alloc(&md.res, M, ROWS, COLS, 96, 64) == 0);
    encode_clip(&md.res, src, P, 10.0, De, Dd);
    const size_t nb = (size_t)md.res.bx * md.res.by;
    int pixel_blocks = 0, transform_blocks = 0;
    for (size_t q = 0; q < M * nb; q++)
        if (md.res.modes[q] & PNMF_RES_CODED) {
            pixel_blocks += !(md.res.modes[q] & PNMF_RES_TRANSFORM);
            transform_blocks += !!(md.res.modes[q] & PNMF_RES_TRANSFORM);
        }
    CHECK_MSG(pixel_blocks > 0 && transform_blocks > 0, "%d pixel, %d transform blocks", pixel_blocks,
              transform_blocks);
    uint8_t *vbuf = NULL, *buf = NULL;
    size_t vsize = 0, size = 0;
    CHECK(pnmf_model_write(&md, &vbuf, &vsize) == 0);
    md.res.rc_levels = 1;
    CHECK(pnmf_model_write(&md, &buf, &size) == 0);
    CHECK(buf && buf[0] == (PNMF_FLAG_RESIDUAL | PNMF_FLAG_RCLEVELS));
    char err[200] = "";
    CHECK_MSG(pnmf_model_read(buf, size, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, &rd, err, sizeof err) == 0, "%s", err);
    CHECK(rd.res.rc_levels == 1 && rd.res.nlev == md.res.nlev);
    CHECK(!memcmp(rd.res.modes, md.res.modes, M * nb));
    CHECK(!memcmp(rd.res.lev, md.res.lev, md.res.nlev * sizeof(int16_t)));
    CHECK(!memcmp(rd.res.mv, md.res.mv, 2 * md.res.nmv * sizeof(int16_t)));
    pnmf_model_free(&rd);
    CHECK_MSG(size < vsize, "range-coded %zu bytes, varints %zu", size, vsize);
    /* frame 0's levels as varints, the others' in the stream (flags bit 4) */
    {
        uint8_t *sbuf = NULL;
        size_t ssize = 0;
        md.res.rc_levels = 2;
        CHECK(md.res.start[1] > 0 && pnmf_model_write(&md, &sbuf, &ssize) == 0);
        CHECK(sbuf && sbuf[0] == (PNMF_FLAG_RESIDUAL | PNMF_FLAG_RCLEVELS | PNMF_FLAG_KEYVARINTS));
        CHECK_MSG(pnmf_model_read(sbuf, ssize, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, &rd, err, sizeof err) == 0, "%s",
                  err);
        CHECK(rd.res.rc_levels == 2 && rd.res.nlev == md.res.nlev &&
              !memcmp(rd.res.lev, md.res.lev, md.res.nlev * sizeof(int16_t)));
        pnmf_model_free(&rd);
        check_payload_hostile(sbuf, ssize, "frame 0's levels as varints");
        /* bit 4 without bit 3 */
        uint8_t *b2 = malloc(ssize);
        memcpy(b2, sbuf, ssize);
        b2[0] = PNMF_FLAG_RESIDUAL | PNMF_FLAG_KEYVARINTS;
        CHECK(pnmf_model_read(b2, ssize, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, &rd, err, sizeof err) ==
                  PNMF_ERR_CORRUPT && strstr(err, "without a levels stream"));
        free(b2), pnmf_free(sbuf);
        md.res.rc_levels = 1;
    }
    /* a version 5 reader does not know the flag */
    CHECK(pnmf_model_read_version(5, buf, size, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, &rd, err, sizeof err) < 0 &&
          strstr(err, "unknown features"));
    check_payload_hostile(buf, size, "range-coded levels");
    /* a byte after the streams: not where their lengths say they end */
    uint8_t *bad = malloc(size + 1);
    memcpy(bad, buf, size);
    bad[size] = 0;
    CHECK(pnmf_model_read(bad, size + 1, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, &rd, err, sizeof err) ==
          PNMF_ERR_CORRUPT);
    /* a pixel level past 255 * 16 / min(step, key step) + 1 = 64 */
    int16_t *pl = NULL;
    for (size_t b = 0, at = 0; b < M * nb && !pl; b++) {
        int y0, y1, x0, x1;
        pnmf_residual_block(md.res.bx, ROWS, COLS, b % nb, &y0, &y1, &x0, &x1);
        if (!(md.res.modes[b] & PNMF_RES_CODED)) continue;
        if (!(md.res.modes[b] & PNMF_RES_TRANSFORM)) pl = md.res.lev + at;
        at += (size_t)(y1 - y0) * (x1 - x0);
    }
    const int16_t keep = *pl;
    *pl = 65;
    uint8_t *over = NULL;
    size_t osize = 0;
    CHECK(pnmf_model_write(&md, &over, &osize) == 0);
    CHECK(pnmf_model_read(over, osize, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, &rd, err, sizeof err) ==
              PNMF_ERR_CORRUPT &&
          strstr(err, "level out of range"));
    *pl = 64; /* at the bound: read */
    pnmf_free(over);
    CHECK(pnmf_model_write(&md, &over, &osize) == 0);
    CHECK(pnmf_model_read(over, osize, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, &rd, err, sizeof err) == 0);
    pnmf_model_free(&rd);
    *pl = keep;
    pnmf_free(over), pnmf_free(buf), pnmf_free(vbuf), free(bad);
    pnmf_model_free(&md);
    free(src), free(P), free(De), free(Dd);
}

/* A clip of smooth waves that drift from frame to frame over a model of
 * zeros: content whose blocks the 8x8 transform codes best. */
static void make_smooth_clip(uint8_t *src, uint8_t *P)
{
    for (int j = 0; j < M; j++)
        for (int y = 0; y < ROWS; y++)
            for (int x = 0; x < COLS; x++) {
                const size_t q = (size_t)j * ROWS * COLS + (size_t)y * COLS + x;
                P[q] = 0;
                src[q] = (uint8_t)(128 + 60 * sin((x + 3 * j) * 0.21 + y * 0.13) + 30 * cos(y * 0.29 - x * 0.07 * j));
            }
}

/* Levels priced with the levels stream's contexts (enc_rc_price, the
 * encoder's choice after a window whose levels were range-coded), with and
 * without the chosen levels lowered by their price (enc_rdoq, which a
 * cartoon's window of whole-sample motion asks for too), with and without
 * the 8x8 transform tried (enc_tx8): the choices decode to the frames the
 * encoder measured, and the contexts the encoder carried block by block are
 * exactly those of coding its levels in the writer's order. One exception:
 * a window without an 8x8 block codes no transform-size flag (window flags
 * bit 8 clear), while the encoder, which cannot know that while it codes,
 * moved the flag's contexts at every transform block; there every other
 * context still matches. The smooth clip uses 8x8 blocks at steps 64 and
 * 181 (at 16 the encoder may prefer 4x4 blocks everywhere). */
static void test_rc_pricing(void)
{
    const size_t n = (size_t)ROWS * COLS;
    uint8_t *src = malloc(M * n), *P = malloc(M * n), *De = malloc(M * n), *Dd = malloc(M * n);
    const int steps[] = { 16, 64, 181 };
    for (int smooth = 0; smooth < 2; smooth++)
    for (int tx8 = 0; tx8 < 2; tx8++)
    for (int rdoq = 0; rdoq < 2; rdoq++)
    for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
        if (smooth) make_smooth_clip(src, P);
        else rs = 4242, make_clip(src, P);
        PnmfResidual r;
        CHECK(pnmf_residual_alloc(&r, M, ROWS, COLS, steps[s], steps[s] / 2 < 16 ? 16 : steps[s] / 2) == 0);
        r.enc_rc_price = 1, r.enc_rdoq = rdoq, r.enc_tx8 = tx8;
        encode_clip(&r, src, P, steps[s] * steps[s] / 256.0 * 0.1, De, Dd);
        CHECK_MSG(!memcmp(De, Dd, M * n), "clip %d, step %d, tx8 %d, rdoq %d: decoder differs", smooth, steps[s], tx8,
                  rdoq);
        RcLevCtx c;
        RcBin o = { .update = 1 };
        CHECK(pnmf_residual_levels_stream(&o, &c, &r, 0, INT16_MAX) == 0);
        const int used = pnmf_tx8_used(&r, 0, M);
        CHECK_MSG(!smooth || !tx8 || used || steps[s] == 16, "smooth clip, step %d, rdoq %d: no 8x8 block", steps[s], rdoq);
        if (tx8 && !used) memcpy(c.t8, r.enc_levels.t8, sizeof c.t8); /* no flag in the stream */
        CHECK_MSG(r.nlev > 0 && !memcmp(&c, &r.enc_levels, sizeof c),
                  "clip %d, step %d, tx8 %d, rdoq %d: the encoder's contexts differ", smooth, steps[s], tx8, rdoq);
        pnmf_residual_free(&r);
    }
    free(src), free(P), free(De), free(Dd);
}

/* A sprite that moves 12 pixels a frame over a flat background and
 * alternates between two poses that differ in one corner: the last frame
 * finds it 12 pixels back with levels for the corner, after which each
 * frame finds the same pose two frames back, 24 pixels away: outside the
 * grid the search covers, reached through the motion the last frame used
 * (each frame's motion goes on, so it is tried twice as far two frames
 * back). From frame 3 on, nothing is coded. */
static void test_motion_goes_on(void)
{
    enum { R = 40, C = 200, F = 8 };
    static uint8_t src[F][R * C], P[R * C], D[F][R * C], pose[2][16][16];
    unsigned seed = 7;
    for (int y = 0; y < 16; y++)
        for (int x = 0; x < 16; x++) seed = seed * 1103515245u + 12345u, pose[0][y][x] = (uint8_t)(100 + (seed >> 17) % 150);
    memcpy(pose[1], pose[0], sizeof pose[0]);
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 4; x++) pose[1][y][x] = (uint8_t)(255 - pose[0][y][x]);
    for (int j = 0; j < F; j++) {
        memset(src[j], 40, sizeof src[j]);
        for (int y = 0; y < 16; y++)
            for (int x = 0; x < 16; x++) src[j][(12 + y) * C + 10 + 12 * j + x] = pose[j & 1][y][x];
    }
    memset(P, 0, sizeof P);
    PnmfResidual r;
    CHECK(pnmf_residual_alloc(&r, F, R, C, 64, 16) == 0);
    for (int j = 0; j < F; j++) {
        const uint8_t *ref[PNMF_RES_REFS];
        for (int t = 0; t < PNMF_RES_REFS; t++) ref[t] = j - 1 - t >= 0 ? D[j - 1 - t] : NULL;
        CHECK(pnmf_residual_encode_frame(&r, j, src[j], P, P, ref, j < PNMF_RES_REFS ? j : PNMF_RES_REFS, D[j],
                                         4.0) == 0);
    }
    /* (the blocks of the sprite that the two poses share follow the
     * frame's global vector, the sprite's motion, a frame back; the corner
     * that differs is found two frames back) */
    int far = 0;
    for (size_t q = r.mvstart[3]; q < r.mvstart[F]; q++) far += r.mvref[q] == 1 && r.mv[2 * q] == 0 && r.mv[2 * q + 1] == -24;
    CHECK_MSG(r.start[F] == r.start[3] && far >= F - 3, "%zu levels in frames 3.., %d blocks 24 back",
              r.start[F] - r.start[3], far);
    pnmf_residual_free(&r);
}

/* A sprite that jumps 36 pixels a frame over a flat background, beyond
 * the grid the search covers and with no motion to go on from: the wide
 * search on box means finds it a frame back, and from frame 1 on nothing
 * is coded. */
static void test_wide_search(void)
{
    enum { R = 48, C = 240, F = 5 };
    static uint8_t src[F][R * C], P[R * C], D[F][R * C], spr[16][16];
    unsigned seed = 11;
    for (int y = 0; y < 16; y++)
        for (int x = 0; x < 16; x++) seed = seed * 1103515245u + 12345u, spr[y][x] = (uint8_t)(90 + (seed >> 17) % 160);
    for (int j = 0; j < F; j++) {
        memset(src[j], 50, sizeof src[j]);
        for (int y = 0; y < 16; y++)
            for (int x = 0; x < 16; x++) src[j][(16 + y) * C + 20 + 36 * j + x] = spr[y][x];
    }
    memset(P, 0, sizeof P);
    PnmfResidual r;
    CHECK(pnmf_residual_alloc(&r, F, R, C, 64, 16) == 0);
    for (int j = 0; j < F; j++) {
        const uint8_t *ref[PNMF_RES_REFS];
        for (int t = 0; t < PNMF_RES_REFS; t++) ref[t] = j - 1 - t >= 0 ? D[j - 1 - t] : NULL;
        CHECK(pnmf_residual_encode_frame(&r, j, src[j], P, P, ref, j < PNMF_RES_REFS ? j : PNMF_RES_REFS, D[j],
                                         4.0) == 0);
    }
    int jump = 0;
    for (size_t q = r.mvstart[1]; q < r.mvstart[F]; q++) {
        const int t = r.mvref[q] + 1;
        jump += r.mv[2 * q] == 0 && r.mv[2 * q + 1] == -36 * t;
    }
    CHECK_MSG(r.start[F] == r.start[1] && jump >= 4 * (F - 1), "%zu levels in frames 1.., %d blocks with the jump",
              r.start[F] - r.start[1], jump);
    pnmf_residual_free(&r);
}

static void test_steps(void)
{
    CHECK(pnmf_residual_step(0) == 16 && pnmf_residual_step(16) == 64 && pnmf_residual_step(48) == 1024 &&
          pnmf_residual_step(64) == 4096 && pnmf_residual_step(65) == 4096);
    for (int q = 1; q <= PNMF_MAX_QUALITY; q++) CHECK(pnmf_residual_step(q) > pnmf_residual_step(q - 1));
}

/* The encoder's block weights (pnmf_residual_copy_weights) against their
 * definition: k, the frames after j in which a block stays the same, counted
 * by brute force, and its class round(2 log2(1 + k)) capped (never 1: k is
 * a whole number). */
static void test_copy_weights(void)
{
    enum { R = 20, C = 27, F = 40, BX = 4, BY = 3 }; /* partial blocks at the right and the bottom */
    static uint8_t fr[F][R * C], w[F][BX * BY];
    uint32_t seed = 7;
    for (int x = 0; x < R * C; x++) fr[0][x] = (uint8_t)x;
    for (int j = 1; j < F; j++) {
        memcpy(fr[j], fr[j - 1], sizeof fr[j]);
        for (int b = 0; b < BX * BY; b++) { /* a pixel changes in a block, at random, or not */
            seed = seed * 1103515245u + 12345u;
            if ((seed >> 16) % 5 == 0) {
                const int y = (b / BX) * 8 + (int)(seed >> 8) % 4, x = (b % BX) * 8 + (int)(seed >> 4) % 3;
                fr[j][y * C + x] ^= 1 + (uint8_t)(seed >> 24 & 1);
            }
        }
    }
    /* a block the same from frame 0 to the end: k 39, class 11 */
    for (int j = 1; j < F; j++)
        for (int y = 16; y < R; y++) memcpy(fr[j] + y * C + 24, fr[0] + y * C + 24, 3);
    CHECK(pnmf_residual_copy_weights(fr[0], F, R * C, R, C, w[0]) == 0);
    int bad = 0, classes = 0;
    for (int j = 0; j < F; j++)
        for (int b = 0; b < BX * BY; b++) {
            const int y0 = (b / BX) * 8, x0 = (b % BX) * 8;
            int k = 0;
            for (int t = j + 1; t < F; t++) {
                int same = 1;
                for (int y = y0; y < y0 + 8 && y < R; y++)
                    for (int x = x0; x < x0 + 8 && x < C; x++) same &= fr[t][y * C + x] == fr[j][y * C + x];
                if (!same) break;
                k++;
            }
            long c = lrint(2 * log2(1.0 + k));
            if (c > PNMF_RES_WEIGHTS - 1) c = PNMF_RES_WEIGHTS - 1;
            bad += w[j][b] != c;
            classes |= 1 << w[j][b];
        }
    CHECK_MSG(!bad, "%d blocks with the wrong weight", bad);
    CHECK_MSG((classes & 0x3d) == 0x3d && w[0][BX * BY - 1] == 11, "weights seen 0x%x, the still block's %d",
              classes, w[0][BX * BY - 1]);
}

/* pnmf_residual_match_weights against its definition by brute force: each
 * whole block of frame j found in frame j - 1 in place, or else at the
 * first place in raster order with the same samples, passing 1 + what it
 * got on to the blocks under that place by area. Two copies of a sprite
 * move over noise that changes every frame, so a block of the second
 * copy is found in the first (frame 0's weights all on the first copy's
 * blocks); a patch stays in place (class round(2 log2 6) = 5 in frame 0). */
static void test_match_weights(void)
{
    enum { R = 36, C = 45, F = 6, BX = 6, BY = 5, NB = BX * BY };
    static uint8_t fr[F][R * C], sprite[16 * 16], w[F][NB];
    static double a[F][NB];
    uint32_t seed = 11;
    for (int i = 0; i < 16 * 16; i++) seed = seed * 1103515245u + 12345u, sprite[i] = (uint8_t)(seed >> 16);
    for (int j = 0; j < F; j++) {
        for (int i = 0; i < R * C; i++) seed = seed * 1103515245u + 12345u, fr[j][i] = (uint8_t)(seed >> 16);
        for (int y = 0; y < 16; y++) {
            memcpy(fr[j] + (2 + j + y) * C + 1 + 3 * j, sprite + 16 * y, 16);  /* moving by (1, 3) */
            memcpy(fr[j] + (19 - j + y) * C + 22 + j, sprite + 16 * y, 16); /* by (-1, 1) */
        }
        for (int y = 24; y < 32; y++) memcpy(fr[j] + y * C + 8, fr[0] + y * C + 8, 8); /* still */
    }
    memset(w, 0, sizeof w);
    CHECK(pnmf_residual_match_weights(fr[0], F, R * C, R, C, w[0]) == 0);
    memset(a, 0, sizeof a);
    for (int j = F - 1; j >= 1; j--)
        for (int b = 0; b < NB; b++) {
            const int y0 = (b / BX) * 8, x0 = (b % BX) * 8;
            if (y0 + 8 > R || x0 + 8 > C) continue;
            int found = 0, sy = 0, sx = 0;
            for (int y = 0; !found && y + 8 <= R; y++)
                for (int x = 0; !found && x + 8 <= C; x++) {
                    int same = 1;
                    for (int u = 0; same && u < 8; u++)
                        same = !memcmp(fr[j] + (y0 + u) * C + x0, fr[j - 1] + (y + u) * C + x, 8);
                    if (same) found = 1, sy = y, sx = x;
                }
            int inplace = 1;
            for (int u = 0; inplace && u < 8; u++)
                inplace = !memcmp(fr[j] + (y0 + u) * C + x0, fr[j - 1] + (y0 + u) * C + x0, 8);
            if (inplace) found = 1, sy = y0, sx = x0;
            if (!found) continue;
            for (int y = sy; y < sy + 8; y++)
                for (int x = sx; x < sx + 8; x++) a[j - 1][(y / 8) * BX + x / 8] += (1 + a[j][b]) / 64;
        }
    int bad = 0, moving = 0, still = 0;
    for (int j = 0; j < F; j++)
        for (int b = 0; b < NB; b++) {
            double c = floor(2 * log2(1 + a[j][b]) + 0.5);
            if (c > PNMF_RES_WEIGHTS - 1) c = PNMF_RES_WEIGHTS - 1;
            bad += w[j][b] != (int)c;
        }
    for (int b = 0; b < NB; b++) moving += b != 3 * BX + 1 && w[0][b] >= 1, still += b == 3 * BX + 1 && w[0][b] == 5;
    CHECK_MSG(!bad, "%d blocks with the wrong weight", bad);
    CHECK_MSG(moving >= 3 && still == 1, "frame 0: %d moving blocks weighed, the still one %d", moving, w[0][3 * BX + 1]);
}

/* A block's weight class c stands for lambda * 2^(-c/2): coding with every
 * block at class 6 is coding with lambda / 8 and no weights. */
static void test_weighted_lambda(void)
{
    enum { R = 32, C = 48, F = 3 };
    static uint8_t src[F][R * C], P[R * C], D[2][F][R * C], wt[(R / 8) * (C / 8)];
    for (int j = 0; j < F; j++)
        for (int x = 0; x < R * C; x++) src[j][x] = (uint8_t)(((x * 37) ^ (x / C * 91) ^ (j * 5)) & 255);
    memset(P, 0, sizeof P);
    memset(wt, 6, sizeof wt);
    PnmfResidual r[2];
    for (int v = 0; v < 2; v++) {
        CHECK(pnmf_residual_alloc(&r[v], F, R, C, 256, 64) == 0);
        r[v].enc_weight = v ? NULL : wt;
        for (int j = 0; j < F; j++) {
            const uint8_t *ref[PNMF_RES_REFS];
            for (int t = 0; t < PNMF_RES_REFS; t++) ref[t] = j - 1 - t >= 0 ? D[v][j - 1 - t] : NULL;
            CHECK(pnmf_residual_encode_frame(&r[v], j, src[j], P, P, ref, j < PNMF_RES_REFS ? j : PNMF_RES_REFS,
                                             D[v][j], v ? 40.0 / 8 : 40.0) == 0);
        }
    }
    CHECK(r[0].nlev == r[1].nlev && r[0].nlev > 0 && !memcmp(r[0].lev, r[1].lev, r[0].nlev * sizeof(int16_t)));
    CHECK(!memcmp(r[0].modes, r[1].modes, (size_t)F * r[0].bx * r[0].by) && !memcmp(D[0], D[1], sizeof D[0]));
    /* and the weight matters: the same frames at lambda 40 without it */
    PnmfResidual u;
    CHECK(pnmf_residual_alloc(&u, F, R, C, 256, 64) == 0);
    uint8_t Du[F][R * C];
    for (int j = 0; j < F; j++) {
        const uint8_t *ref[PNMF_RES_REFS];
        for (int t = 0; t < PNMF_RES_REFS; t++) ref[t] = j - 1 - t >= 0 ? Du[j - 1 - t] : NULL;
        CHECK(pnmf_residual_encode_frame(&u, j, src[j], P, P, ref, j < PNMF_RES_REFS ? j : PNMF_RES_REFS, Du[j],
                                         40.0) == 0);
    }
    CHECK_MSG(u.nlev != r[0].nlev || memcmp(u.lev, r[0].lev, u.nlev * sizeof(int16_t)),
              "lambda 40 and 5 gave the same levels");
    pnmf_residual_free(&u);
    pnmf_residual_free(&r[0]), pnmf_residual_free(&r[1]);
}

int main(void)
{
    test_steps();
    test_copy_weights();
    test_match_weights();
    test_weighted_lambda();
    test_encode_decode();
    test_spatial();
    test_shifted();
    test_global_vector();
    test_pan();
    test_far_reference();
    test_cycle();
    test_transform();
    test_transform_exact();
    test_intra();
    test_vector_candidates();
    test_payload();
    test_cascade();
    test_payload_rc_levels();
    test_rc_pricing();
    test_motion_goes_on();
    test_wide_search();
    return test_summary("test_residual");
}
