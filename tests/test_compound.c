/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Compound prediction (window flags bit 17, format 12; docs/format.md,
 * "Compound prediction"): the average of two predictions against a
 * definition written out here sample by sample, at every quarter phase
 * and across the frame's edges; a window whose shifted blocks carry
 * second hypotheses goes through the payload and decodes to the
 * definition; the reader refuses a second reference a key window does
 * not have, a second vector past the bound, bit 17 in a payload of
 * format 11 and bit 17 without a residual layer; the encoder finds
 * second hypotheses where two noisy references average to a better
 * prediction, and decodes to what it measured.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model_write.h"
#include "residual_search.h"
#include "test.h"

static unsigned rs = 4242;
static unsigned urn(unsigned n) { rs = rs * 1103515245u + 12345u; return ((rs >> 8) & 0xFFFFFF) % n; }

/* ---- the definition, in the words of the format's subsection ------------ */

static int fdiv(int a, int b) { return (a - ((a % b) + b) % b) / b; } /* floor(a / b) */

/* sample (y, x) of the frame f (rows x cols), coordinates clamped to it */
static int G(const uint8_t *f, int rows, int cols, int y, int x)
{
    y = y < 0 ? 0 : y >= rows ? rows - 1 : y;
    x = x < 0 ? 0 : x >= cols ? cols - 1 : x;
    return f[y * cols + x];
}

/* The single prediction of sample (y, x) from f at the quarter-sample
 * vector (qy, qx): bilinear between the four whole samples around it. */
static int single(const uint8_t *f, int rows, int cols, int y, int x, int qy, int qx)
{
    const int iy = fdiv(qy, 4), ix = fdiv(qx, 4), fy = qy - 4 * iy, fx = qx - 4 * ix;
    return ((4 - fy) * (4 - fx) * G(f, rows, cols, y + iy, x + ix) + (4 - fy) * fx * G(f, rows, cols, y + iy, x + ix + 1) +
            fy * (4 - fx) * G(f, rows, cols, y + iy + 1, x + ix) + fy * fx * G(f, rows, cols, y + iy + 1, x + ix + 1) + 8) >>
           4;
}

/* The compound prediction: the two single ones' mean, halves rounded up. */
static int compound(const uint8_t *f1, const uint8_t *f2, int rows, int cols, int y, int x, int qy1, int qx1, int qy2,
                    int qx2)
{
    return (single(f1, rows, cols, y, x, qy1, qx1) + single(f2, rows, cols, y, x, qy2, qx2) + 1) >> 1;
}

static void test_definition(void)
{
    const int sizes[3][2] = { { 21, 30 }, { 8, 8 }, { 5, 13 } };
    long checked = 0, bad = 0, odd = 0;
    for (int s = 0; s < 3; s++) {
        const int FR = sizes[s][0], FC = sizes[s][1];
        uint8_t *f1 = malloc((size_t)FR * FC), *f2 = malloc((size_t)FR * FC);
        for (int q = 0; q < FR * FC; q++) {
            f1[q] = (uint8_t)(q % 7 == 0 ? 255 * urn(2) : urn(256)); /* extremes often */
            f2[q] = (uint8_t)(q % 5 == 0 ? 255 * urn(2) : urn(256));
        }
        const int bx = pnmf_residual_blocks(FC), by = pnmf_residual_blocks(FR);
        for (int b = 0; b < bx * by; b++)
            for (int ph = 0; ph < 256; ph++) {
                int y0, y1, x0, x1;
                pnmf_residual_block(bx, FR, FC, (size_t)b, &y0, &y1, &x0, &x1);
                /* every pair of phases; whole parts within +-12 samples, past the edges */
                const int qy1 = 4 * ((int)urn(25) - 12) + (ph >> 6 & 3), qx1 = 4 * ((int)urn(25) - 12) + (ph >> 4 & 3);
                const int qy2 = 4 * ((int)urn(25) - 12) + (ph >> 2 & 3), qx2 = 4 * ((int)urn(25) - 12) + (ph & 3);
                uint8_t pred[PNMF_RES_BLOCK * PNMF_RES_BLOCK];
                pnmf_residual_compound(f1, qy1, qx1, f2, qy2, qx2, FR, FC, y0, y1, x0, x1, 0, pred);
                for (int y = y0; y < y1; y++)
                    for (int x = x0; x < x1; x++) {
                        const int want = compound(f1, f2, FR, FC, y, x, qy1, qx1, qy2, qx2);
                        bad += pred[(y - y0) * PNMF_RES_BLOCK + x - x0] != want;
                        odd += (single(f1, FR, FC, y, x, qy1, qx1) + single(f2, FR, FC, y, x, qy2, qx2)) & 1;
                        checked++;
                    }
            }
        free(f1), free(f2);
    }
    CHECK_MSG(bad == 0, "%ld of %ld samples differ from the definition", bad, checked);
    CHECK(checked > 100000 && odd > checked / 4); /* halves met often: their rounding is checked */
    /* two flat frames average to their mean, rounded up */
    uint8_t a[81], c[81], p[64];
    memset(a, 10, sizeof a), memset(c, 13, sizeof c);
    pnmf_residual_compound(a, 0, 0, c, 5, -7, 9, 9, 0, 8, 0, 8, 0, p);
    int all = 1;
    for (int q = 0; q < 64; q++) all &= p[q] == 12;
    CHECK(all);
}

/* ---- a window of second hypotheses through the payload ------------------ */

enum { R = 24, C = 32, M = 5 };

/* A window over an empty model: in frames 1.. every block shifted (uncoded)
 * with a random vector and reference, about half of them with a second
 * hypothesis; subpel: quarter samples. */
static void make_window(PnmfWindowModel *md, int subpel)
{
    CHECK(pnmf_model_alloc(md, R, C, R, C, M, 1, 0) == 0);
    PnmfResidual *r = &md->res;
    CHECK(pnmf_residual_alloc(r, M, R, C, 64, 64) == 0);
    r->subpel = subpel;
    const size_t nb = (size_t)r->bx * r->by;
    const int maxv = subpel ? 40 : 10;
    r->mv = malloc(2 * M * nb * sizeof(int16_t)), r->mvref = malloc(M * nb);
    r->mvbi = malloc(M * nb), r->mv2 = malloc(2 * M * nb * sizeof(int16_t));
    r->mvcap = 2 * M * nb;
    for (int j = 0; j < M; j++) {
        r->mvstart[j] = r->nmv;
        r->start[j] = 0;
        for (size_t b = 0; b < nb; b++) {
            if (!j) continue; /* frame 0: the model */
            r->modes[j * nb + b] = PNMF_RES_SHIFTED;
            const size_t q = r->nmv++;
            r->mvref[q] = (uint8_t)urn((unsigned)j);
            r->mv[2 * q] = (int16_t)((int)urn(2 * maxv + 1) - maxv), r->mv[2 * q + 1] = (int16_t)((int)urn(2 * maxv + 1) - maxv);
            r->mvbi[q] = urn(2) ? (uint8_t)(1 + urn((unsigned)j)) : 0;
            r->mv2[2 * q] = (int16_t)((int)urn(2 * maxv + 1) - maxv), r->mv2[2 * q + 1] = (int16_t)((int)urn(2 * maxv + 1) - maxv);
        }
    }
    r->mvstart[M] = r->nmv;
    r->start[M] = 0;
}

/* The window's frames decoded from r (frame 0 the model, P flat). */
static void decode(const PnmfResidual *r, const uint8_t *P, uint8_t (*D)[R * C])
{
    for (int j = 0; j < M; j++) {
        const uint8_t *ref[PNMF_RES_REFS];
        for (int t = 0; t < PNMF_RES_REFS; t++) ref[t] = j - 1 - t >= 0 ? D[j - 1 - t] : NULL;
        pnmf_residual_frame(r, j, P, P, ref, D[j]);
    }
}

static void test_window(void)
{
    static uint8_t P[R * C], Dw[M][R * C], Dr[M][R * C];
    for (int q = 0; q < R * C; q++) P[q] = (uint8_t)urn(256);
    for (int subpel = 0; subpel < 2; subpel++) {
        PnmfWindowModel md, rd;
        make_window(&md, subpel);
        PnmfResidual *r = &md.res;
        uint8_t *buf = NULL;
        size_t size = 0;
        char err[200] = "";
        CHECK(pnmf_model_write(&md, &buf, &size) == 0);
        CHECK(buf && size > 3 && buf[0] & 0x80 && buf[1] & 0x80 && (buf[2] & 0x08)); /* bit 17 in the flags' varint */
        CHECK_MSG(pnmf_model_read(buf, size, R, C, R, C, M, 1, 4, 2, &rd, err, sizeof err) == 0, "%s", err);
        CHECK(rd.res.bi == 1 && rd.res.nmv == r->nmv && rd.res.mvbi && rd.res.mv2);
        CHECK(!memcmp(rd.res.mv, r->mv, 2 * r->nmv * sizeof(int16_t)) && !memcmp(rd.res.mvref, r->mvref, r->nmv));
        CHECK(!memcmp(rd.res.mvbi, r->mvbi, r->nmv));
        int same2 = 1;
        for (size_t q = 0; q < r->nmv; q++)
            if (r->mvbi[q]) same2 &= rd.res.mv2[2 * q] == r->mv2[2 * q] && rd.res.mv2[2 * q + 1] == r->mv2[2 * q + 1];
        CHECK(same2);
        decode(r, P, Dw);
        decode(&rd.res, P, Dr);
        CHECK(!memcmp(Dw, Dr, sizeof Dw));
        /* each sample against the definition, frame by frame from the decoded frames */
        long bad = 0;
        const size_t nb = (size_t)r->bx * r->by;
        const int u = subpel ? 1 : 4;
        for (int j = 1; j < M; j++)
            for (size_t b = 0; b < nb; b++) {
                const size_t q = r->mvstart[j] + b;
                int y0, y1, x0, x1;
                pnmf_residual_block(r->bx, R, C, b, &y0, &y1, &x0, &x1);
                const uint8_t *f1 = Dw[j - 1 - r->mvref[q]];
                for (int y = y0; y < y1; y++)
                    for (int x = x0; x < x1; x++) {
                        const int s1 = single(f1, R, C, y, x, r->mv[2 * q] * u, r->mv[2 * q + 1] * u);
                        const int want = r->mvbi[q] ? compound(f1, Dw[j - r->mvbi[q]], R, C, y, x, r->mv[2 * q] * u,
                                                               r->mv[2 * q + 1] * u, r->mv2[2 * q] * u, r->mv2[2 * q + 1] * u)
                                                    : s1;
                        bad += Dw[j][y * C + x] != want;
                    }
            }
        CHECK_MSG(bad == 0, "subpel %d: %ld samples differ from the definition", subpel, bad);
        pnmf_model_free(&rd);
        /* a payload of format 11 cannot say it */
        CHECK(pnmf_model_read_version(11, buf, size, R, C, R, C, M, 1, 4, 2, &rd, err, sizeof err) ==
                  PNMF_ERR_CORRUPT && strstr(err, "unknown features"));
        pnmf_free(buf);
        /* a second reference a key window does not have: frame 1 has frame 0 alone */
        const size_t q1 = r->mvstart[1];
        const uint8_t k1 = r->mvbi[q1];
        r->mvbi[q1] = 2;
        CHECK(pnmf_model_write(&md, &buf, &size) == 0);
        CHECK_MSG(pnmf_model_read(buf, size, R, C, R, C, M, 1, 4, 2, &rd, err, sizeof err) == PNMF_ERR_CORRUPT &&
                      strstr(err, "not available"), "%s", err);
        pnmf_free(buf);
        r->mvbi[q1] = 1;
        /* a second vector at the bound is read, one past it refused */
        const int maxv = subpel ? PNMF_RES_QPEL_MAX_MV : PNMF_RES_MAX_MV;
        for (int v = maxv; v <= maxv + 1; v++) {
            r->mv2[2 * q1 + 1] = (int16_t)v;
            CHECK(pnmf_model_write(&md, &buf, &size) == 0);
            const int ret = pnmf_model_read(buf, size, R, C, R, C, M, 1, 4, 2, &rd, err, sizeof err);
            if (v == maxv) {
                CHECK_MSG(ret == 0, "%s", err);
                if (!ret) pnmf_model_free(&rd);
            } else {
                CHECK_MSG(ret == PNMF_ERR_CORRUPT && strstr(err, "vector out of range"), "%d %s", ret, err);
            }
            pnmf_free(buf);
        }
        r->mvbi[q1] = k1;
        /* no second hypothesis anywhere: no bit 17, the bytes of a window without it */
        memset(r->mvbi, 0, r->nmv);
        CHECK(pnmf_model_write(&md, &buf, &size) == 0);
        CHECK(size > 0 && !(buf[0] & 0x80));
        uint8_t *b2 = NULL;
        size_t s2 = 0;
        pnmf_free(r->mvbi), pnmf_free(r->mv2);
        r->mvbi = NULL, r->mv2 = NULL;
        CHECK(pnmf_model_write(&md, &b2, &s2) == 0);
        CHECK(s2 == size && !memcmp(buf, b2, size));
        pnmf_free(buf), pnmf_free(b2);
        pnmf_model_free(&md);
    }
}

/* Bit 17 needs a residual layer. */
static void test_flags(void)
{
    /* a payload without one: flags 0x20000 (varint 80 80 08), k = 1, an empty component, its counts */
    PnmfWindowModel md, rd;
    CHECK(pnmf_model_alloc(&md, R, C, R, C, 2, 1, 0) == 0);
    uint8_t *buf = NULL;
    size_t size = 0;
    char err[200] = "";
    CHECK(pnmf_model_write(&md, &buf, &size) == 0);
    CHECK(size >= 1 && buf[0] == 0);
    uint8_t *b2 = malloc(size + 2);
    b2[0] = 0x80, b2[1] = 0x80, b2[2] = 0x08;
    memcpy(b2 + 3, buf + 1, size - 1);
    CHECK(pnmf_model_read(b2, size + 2, R, C, R, C, 2, 1, 4, 2, &rd, err, sizeof err) == PNMF_ERR_CORRUPT &&
          strstr(err, "compound prediction without a residual layer"));
    free(b2);
    pnmf_free(buf);
    pnmf_model_free(&md);
}

/* ---- the encoder --------------------------------------------------------- */

enum { ER = 32, EC = 40, EM = 8 };

/* A smooth pattern panned by 0.5 sample a frame across, each frame with
 * noise of its own: two references' noise averages out. */
static uint8_t noisy_sample(int j, int y, int x)
{
    const double xx = x - 0.5 * j;
    const double v = 128 + 50 * sin(y * 0.37) * cos(xx * 0.29) + 25 * sin((xx + y) * 0.17) + (double)urn(25) - 12;
    return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : lrint(v));
}

static void test_encoder(void)
{
    const size_t n = (size_t)ER * EC;
    uint8_t *src = malloc(EM * n);
    for (int j = 0; j < EM; j++)
        for (int y = 0; y < ER; y++)
            for (int x = 0; x < EC; x++) src[j * n + (size_t)y * EC + x] = noisy_sample(j, y, x);
    static uint8_t P[ER * EC], De[EM][ER * EC], Dd[EM][ER * EC];
    memset(P, 128, sizeof P);
    long sse[2] = { 0, 0 };
    size_t bytes[2] = { 0, 0 }, nbi = 0;
    for (int bi = 0; bi < 2; bi++) {
        PnmfWindowModel md, rd;
        CHECK(pnmf_model_alloc(&md, ER, EC, ER, EC, EM, 1, 0) == 0);
        PnmfResidual *r = &md.res;
        CHECK(pnmf_residual_alloc(r, EM, ER, EC, 128, 64) == 0);
        r->subpel = 1, r->enc_bi = bi;
        const double lambda = 128.0 * 128 / 256 * 0.1;
        for (int j = 0; j < EM; j++) {
            const uint8_t *ref[PNMF_RES_REFS];
            for (int t = 0; t < PNMF_RES_REFS; t++) ref[t] = j - 1 - t >= 0 ? De[j - 1 - t] : NULL;
            CHECK(pnmf_residual_encode_frame(r, j, src + j * n, P, P, ref, j < PNMF_RES_REFS ? j : PNMF_RES_REFS,
                                             De[j], lambda) == 0);
        }
        if (bi)
            for (size_t q = 0; q < r->nmv; q++) nbi += r->mvbi[q] != 0;
        uint8_t *buf = NULL;
        size_t size = 0;
        char err[200] = "";
        CHECK(pnmf_model_write(&md, &buf, &size) == 0);
        CHECK_MSG(pnmf_model_read(buf, size, ER, EC, ER, EC, EM, 1, 4, 2, &rd, err, sizeof err) == 0, "%s", err);
        CHECK(rd.res.bi == (bi && nbi > 0));
        for (int j = 0; j < EM; j++) {
            const uint8_t *ref[PNMF_RES_REFS];
            for (int t = 0; t < PNMF_RES_REFS; t++) ref[t] = j - 1 - t >= 0 ? Dd[j - 1 - t] : NULL;
            pnmf_residual_frame(&rd.res, j, P, P, ref, Dd[j]);
        }
        CHECK_MSG(!memcmp(De, Dd, sizeof De), "bi %d: the decoder differs from the encoder", bi);
        for (size_t q = 0; q < EM * n; q++) {
            const int d = (int)src[q] - (&De[0][0])[q];
            sse[bi] += d * d;
        }
        bytes[bi] = size;
        pnmf_free(buf);
        pnmf_model_free(&rd);
        pnmf_model_free(&md);
    }
    CHECK_MSG(nbi > 0, "no second hypothesis on noisy frames");
    /* and it pays: fewer bytes or less error, the other not much worse */
    CHECK_MSG((bytes[1] < bytes[0] && sse[1] < sse[0] * 1.02) || (sse[1] < sse[0] && bytes[1] < bytes[0] * 1.02),
              "bytes %zu vs %zu, sse %ld vs %ld", bytes[1], bytes[0], sse[1], sse[0]);
    free(src);
}

int main(void)
{
    test_definition();
    test_window();
    test_flags();
    test_encoder();
    return test_summary("test_compound");
}
