/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The residual layer's directional intra predictions (src/intra.h, format
 * 9, window flags bit 10): every direction against a definition written
 * another way (the angular ones as rays from each sample to the edge, in
 * floating point, the smooth ones as floating formulas with the same
 * rounding), the neighbours at every edge of the frame, the families, the
 * levels stream's directions, and a window through the encoder, the
 * writer and the reader; a direction out of range refused.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "intra.h"
#include "model_write.h"
#include "rangecoder_enc.h"
#include "residual_search.h"
#include "residual_window.h"
#include "encode_file.h"
#include "test.h"
#include "tx8.h"

static unsigned rs = 4242;
static unsigned urn(unsigned n) { rs = rs * 1103515245u + 12345u; return ((rs >> 8) & 0xFFFFFF) % n; }

/* ---- the reference definitions ---------------------------------------- */

/* The edge as one line of 25 samples: the left column from the bottom up
 * (E[0] = L[7] .. E[7] = L[0]), the corner E[8], the row above and
 * above-right (E[9] = T[0] .. E[24] = T[15]); past either end its last
 * sample. */
static double edge_at(const PnmfIntraEdge *e, int k)
{
    if (k < 0) k = 0;
    if (k > 24) k = 24;
    return k < 8 ? e->L[7 - k] : k == 8 ? e->C : e->T[k - 9];
}

/* The edge at position u (a whole or half sample): a whole sample is
 * smoothed with its two neighbours (1, 2, 1), a half one is the mean of
 * the two around it; rounded to nearest, halves up. */
static int edge_sample(const PnmfIntraEdge *e, double u)
{
    const double f = floor(u);
    if (u == f) return (int)floor((edge_at(e, (int)f - 1) + 2 * edge_at(e, (int)f) + edge_at(e, (int)f + 1)) / 4 + 0.5);
    return (int)floor((edge_at(e, (int)f) + edge_at(e, (int)f + 1)) / 2 + 0.5);
}

/* Where the ray from sample (x, y) (row -1 is above, column -1 left)
 * against direction (sx, sy) per row or column meets the edge line: the
 * row above at column x - (y + 1) * sx / sy, unless that lies left of the
 * corner, when the ray meets the left column. */
static double ray(double x, double y, double sx, double sy)
{
    if (sy > 0) { /* up: the row above */
        const double c = x - (y + 1) * sx / sy;
        if (c >= -1) return 9 + c;
        /* up and left past the corner: the left column */
        return 7 - (y - (x + 1) * sy / sx);
    }
    /* left (sy <= 0: down or level): the left column */
    const double r = y + (x + 1) * (-sy) / sx;
    return 7 - r;
}

static int ref_predict(int dir, const PnmfIntraEdge *e, int x, int y)
{
    switch (dir) {
    case PNMF_INTRA_PLANAR: {
        /* the mean of the interpolation across (from L[y] at column -1 to
         * T[8] at column 8) and down (from T[x] at row -1 to L[7] at row 8) */
        const double h = e->L[y] + (x + 1) / 8.0 * (e->T[8] - e->L[y]);
        const double v = e->T[x] + (y + 1) / 8.0 * (e->L[7] - e->T[x]);
        return (int)floor((h + v) / 2 + 0.5);
    }
    case PNMF_INTRA_PLANE: {
        /* H.264's plane: the gradients weigh the pairs of samples around
         * the edges' middles by their distance (the corner is index -1) */
        double H = 0, V = 0;
        for (int d = 1; d <= 4; d++) {
            H += d * (e->T[3 + d] - (3 - d < 0 ? e->C : e->T[3 - d]));
            V += d * (e->L[3 + d] - (3 - d < 0 ? e->C : e->L[3 - d]));
        }
        const double b = floor((34 * H + 32) / 64), c = floor((34 * V + 32) / 64);
        const double v = floor((16.0 * (e->L[7] + e->T[7]) + b * (x - 3) + c * (y - 3) + 16) / 32);
        return v < 0 ? 0 : v > 255 ? 255 : (int)v;
    }
    case PNMF_INTRA_DDL: return edge_sample(e, ray(x, y, -1, 1));  /* from up-right, 45 degrees */
    case PNMF_INTRA_DDR: return edge_sample(e, ray(x, y, 1, 1));   /* from up-left */
    case PNMF_INTRA_VR: return edge_sample(e, ray(x, y, 0.5, 1));  /* up-left, half a column a row */
    case PNMF_INTRA_VL: return edge_sample(e, ray(x, y, -0.5, 1)); /* up-right, half a column a row */
    case PNMF_INTRA_HD: return edge_sample(e, ray(x, y, 1, 0.5));  /* left and up, half a row a column */
    case PNMF_INTRA_HU: return edge_sample(e, ray(x, y, 1, -0.5)); /* left and down */
    }
    return -1;
}

/* The neighbours by their definition: a sample of D where the frame has
 * it, the row above past the frame's right edge its last sample, a
 * missing side the other side's first sample, neither 128. */
static void ref_edge(const uint8_t *D, int rows, int cols, int y0, int x0, PnmfIntraEdge *e)
{
    (void)rows;
    const int up = y0 > 0, left = x0 > 0;
    for (int i = 0; i < 16; i++) {
        const int x = x0 + i < cols ? x0 + i : cols - 1;
        e->T[i] = up ? D[(y0 - 1) * cols + x] : left ? D[y0 * cols + x0 - 1] : 128;
    }
    for (int i = 0; i < 8; i++) e->L[i] = left ? D[(y0 + i) * cols + x0 - 1] : up ? D[(y0 - 1) * cols + x0] : 128;
    e->C = up && left ? D[(y0 - 1) * cols + x0 - 1] : up ? D[(y0 - 1) * cols + x0] : left ? D[y0 * cols + x0 - 1] : 128;
}

/* ---- the tests ----------------------------------------------------------- */

static void random_edge(PnmfIntraEdge *e, int kind)
{
    /* kind 0: any samples; 1: extremes (0 and 255, the plane clips);
     * 2: a gradient with noise */
    const int g0 = (int)urn(256), gx = (int)urn(17) - 8, gy = (int)urn(17) - 8;
    for (int i = 0; i < 16; i++)
        e->T[i] = kind == 0 ? (int)urn(256) : kind == 1 ? 255 * (int)urn(2) : g0 + gx * (i + 1) + (int)urn(5) - 2;
    for (int i = 0; i < 8; i++)
        e->L[i] = kind == 0 ? (int)urn(256) : kind == 1 ? 255 * (int)urn(2) : g0 + gy * (i + 1) + (int)urn(5) - 2;
    e->C = kind == 0 ? (int)urn(256) : kind == 1 ? 255 * (int)urn(2) : g0;
    for (int i = 0; i < 16; i++) e->T[i] = e->T[i] < 0 ? 0 : e->T[i] > 255 ? 255 : e->T[i];
    for (int i = 0; i < 8; i++) e->L[i] = e->L[i] < 0 ? 0 : e->L[i] > 255 ? 255 : e->L[i];
    e->C = e->C < 0 ? 0 : e->C > 255 ? 255 : e->C;
}

static void test_modes(void)
{
    int bad[PNMF_INTRA_DIRS] = { 0 }, clipped = 0;
    for (int t = 0; t < 3000; t++) {
        PnmfIntraEdge e;
        random_edge(&e, t % 3);
        for (int dir = 1; dir < PNMF_INTRA_DIRS; dir++) {
            uint8_t pred[8 * 12];
            memset(pred, 0xAB, sizeof pred);
            pnmf_intra_predict_edge(dir, &e, pred, 12);
            for (int y = 0; y < 8; y++) {
                for (int x = 0; x < 8; x++) {
                    const int r = ref_predict(dir, &e, x, y);
                    bad[dir] += pred[y * 12 + x] != r;
                    clipped += dir == PNMF_INTRA_PLANE && (r == 0 || r == 255);
                }
                for (int x = 8; x < 12; x++) bad[dir] += pred[y * 12 + x] != 0xAB; /* the stride kept */
            }
        }
    }
    for (int dir = 1; dir < PNMF_INTRA_DIRS; dir++) CHECK_MSG(!bad[dir], "direction %d: %d samples differ", dir, bad[dir]);
    CHECK(clipped > 0); /* the plane's clipping was exercised */
    /* a straight diagonal edge is continued exactly by its direction */
    PnmfIntraEdge e;
    for (int k = 0; k < 25; k++) {
        const int v = k % 4 < 2 ? 40 : 200; /* a period of 4 along the edge line */
        if (k < 8) e.L[7 - k] = v;
        else if (k == 8) e.C = v;
        else e.T[k - 9] = v;
    }
    uint8_t p[64];
    pnmf_intra_predict_edge(PNMF_INTRA_DDR, &e, p, 8);
    CHECK(p[0] == (e.T[0] + 2 * e.C + e.L[0] + 2) >> 2 && p[9] == p[0] && p[63] == p[0]);
}

static void test_edges(void)
{
    enum { R = 24, C = 28 }; /* the last block column is 4 samples short of above-right */
    uint8_t D[R * C];
    for (int q = 0; q < R * C; q++) D[q] = (uint8_t)urn(256);
    int bad = 0;
    for (int y0 = 0; y0 + 8 <= R; y0 += 8)
        for (int x0 = 0; x0 + 8 <= C; x0 += 4) { /* every block position, and between them */
            PnmfIntraEdge a, b;
            pnmf_intra_edge(D, C, y0, x0, &a);
            ref_edge(D, R, C, y0, x0, &b);
            bad += memcmp(&a, &b, sizeof a) != 0;
            for (int dir = 1; dir < PNMF_INTRA_DIRS; dir++) {
                uint8_t p[64], q[64];
                pnmf_intra_predict(dir, D, C, y0, x0, p, 8);
                pnmf_intra_predict_edge(dir, &b, q, 8);
                bad += memcmp(p, q, 64) != 0;
            }
        }
    CHECK_MSG(!bad, "%d edges or predictions differ", bad);
    PnmfIntraEdge e;
    pnmf_intra_edge(D, C, 0, 0, &e);
    CHECK(e.C == 128 && e.T[15] == 128 && e.L[7] == 128);
    pnmf_intra_edge(D, C, 8, 20, &e); /* above-right past the right edge: the row's last sample */
    CHECK(e.T[7] == D[7 * C + 27] && e.T[8] == D[7 * C + 27] && e.T[15] == D[7 * C + 27]);
}

/* The levels stream's direction: every index of every family read back,
 * the index 3 of the vertical and horizontal families and 2, 3 of DC
 * refused. */
static void test_read(void)
{
    for (int mode = PNMF_RES_INTRA_DC; mode <= PNMF_RES_INTRA_H; mode++)
        for (int k = -1; k < 4; k++) {
            Buf b = { 0 };
            RcEnc e;
            RcLevCtx c;
            rc_enc_init(&e, &b);
            rc_lev_ctx_init(&c);
            RcBin o = { .enc = &e, .update = 1 };
            for (int rep = 0; rep < 3; rep++) { /* three times: the contexts move */
                rc_bin(&o, &c.idir[1][mode - PNMF_RES_INTRA_DC], k >= 0);
                if (k >= 0) {
                    rc_bin(&o, &c.idk[mode - PNMF_RES_INTRA_DC][0], k >> 1);
                    rc_bin(&o, &c.idk[mode - PNMF_RES_INTRA_DC][1 + (k >> 1)], k & 1);
                }
            }
            rc_enc_finish(&e);
            RcDec d;
            rc_dec_init(&d, b.p, b.len, RC_V13);
            rc_lev_ctx_init(&c);
            for (int rep = 0; rep < 3; rep++) {
                const int dir = pnmf_intra_read(&d, &c, 3, mode);
                if (k < 0) CHECK(dir == PNMF_INTRA_NONE);
                else if (k < pnmf_intra_count(mode)) CHECK(dir == pnmf_intra_dir(mode, k));
                else CHECK(dir == -1);
            }
            pnmf_free(b.p);
        }
}

static void test_family(void)
{
    int seen[PNMF_INTRA_DIRS] = { 0 };
    for (int mode = 0; mode < 8; mode++) {
        CHECK((pnmf_intra_count(mode) > 0) == (mode >= PNMF_RES_INTRA_DC));
        for (int k = -1; k <= PNMF_INTRA_FAMILY; k++) {
            const int dir = pnmf_intra_dir(mode, k);
            CHECK((dir != 0) == (k >= 0 && k < pnmf_intra_count(mode)));
            if (!dir) continue;
            int fm, fk;
            pnmf_intra_family(dir, &fm, &fk);
            CHECK(fm == mode && fk == k);
            seen[dir]++;
        }
    }
    for (int dir = 1; dir < PNMF_INTRA_DIRS; dir++) CHECK(seen[dir] == 1);
    CHECK(!seen[0]);
}

enum { ROWS = 40, COLS = 48, M = 3 };

/* Smooth content with antialiased diagonal edges: a gradient under
 * stripes at about 27 and 45 degrees, drifting; P, the "model", flat. */
static void make_diagonal(uint8_t *src, uint8_t *P)
{
    for (int j = 0; j < M; j++)
        for (int y = 0; y < ROWS; y++)
            for (int x = 0; x < COLS; x++) {
                const size_t q = (size_t)j * ROWS * COLS + (size_t)y * COLS + x;
                P[q] = 128;
                const double u = y < ROWS / 2 ? (x + 2.0 * y + j) / 9.0 : (x - y + 1.5 * j) / 7.0;
                double v = 50 + 1.5 * x + y + 70 * (0.5 + 0.5 * sin(2 * M_PI * u)) + (int)urn(3) - 1;
                src[q] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
}

static int read_v(int version, const uint8_t *buf, size_t size, PnmfWindowModel *rd, char *err, size_t errlen)
{
    return pnmf_model_read_version(version, buf, size, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, rd, err, errlen);
}

static double sse(const uint8_t *a, const uint8_t *b, size_t n)
{
    double s = 0;
    for (size_t q = 0; q < n; q++) s += ((int)a[q] - b[q]) * ((int)a[q] - b[q]);
    return s;
}

/* A window whose encoder may use the directions: it does on diagonal
 * content; the decoder shows what the encoder measured; the encoder's
 * contexts are the writer's; the writer sets flags bit 10 and the reader
 * reads the directions back; a direction of another family is refused. */
static void test_window(void)
{
    const size_t n = (size_t)ROWS * COLS;
    const double lambda = 64.0 * 64 / 256 * 0.1;
    uint8_t *src = malloc(M * n), *P = malloc(M * n), *De = malloc(M * n), *Dd = malloc(M * n),
            *D0 = malloc(M * n);
    make_diagonal(src, P);
    PnmfWindowModel md, rd;
    CHECK(pnmf_model_alloc(&md, ROWS, COLS, ROWS, COLS, M, 1, 0) == 0);
    CHECK(pnmf_residual_alloc(&md.res, M, ROWS, COLS, 256, 256) == 0);
    md.res.enc_idir = 1, md.res.enc_tx8 = 1, md.res.enc_rc_price = 1;
    encode_window(&md.res, src, P, lambda, De);
    decode_window(&md.res, P, Dd);
    CHECK(!memcmp(De, Dd, M * n));
    const size_t nb = (size_t)md.res.bx * md.res.by;
    int dirs = 0, wrong = 0, fam[3] = { 0 };
    for (size_t q = 0; q < M * nb; q++) {
        const int d = md.res.idir[q];
        if (!d) continue;
        int fm, k;
        pnmf_intra_family(d, &fm, &k);
        wrong += !(md.res.modes[q] & PNMF_RES_TRANSFORM) || fm != (md.res.modes[q] & 7);
        dirs++, fam[fm - PNMF_RES_INTRA_DC]++;
    }
    CHECK_MSG(dirs > 0 && !wrong, "%d blocks with a direction, %d not of their prediction", dirs, wrong);
    CHECK_MSG(fam[1] + fam[2] > 0, "directions by family %d %d %d", fam[0], fam[1], fam[2]);
    {
        RcLevCtx c;
        RcBin o = { .update = 1 };
        CHECK(pnmf_residual_levels_stream(&o, &c, &md.res, 0, INT16_MAX) == 0);
        CHECK_MSG(!memcmp(&c, &md.res.enc_levels, sizeof c), "the encoder's contexts differ from the writer's");
    }
    uint8_t *buf = NULL, *b0 = NULL;
    size_t size = 0, s0 = 0;
    char err[200] = "";
    md.res.rc_levels = 0; /* varints asked for: the levels stream all the same */
    CHECK(pnmf_model_write(&md, &buf, &size) == 0);
    /* flags 0x409 (bits 0, 3, 10, and 8 when an 8x8 block was chosen) as a varint */
    CHECK(buf && (buf[0] & 0x7f) == ((PNMF_FLAG_RESIDUAL | PNMF_FLAG_RCLEVELS | (pnmf_tx8_used(&md.res, 0, M) ? 0x100 : 0)) & 0x7f) &&
          (buf[0] & 0x80) && buf[1] == (PNMF_FLAG_INTRA | (pnmf_tx8_used(&md.res, 0, M) ? 0x100 : 0)) >> 7);
    CHECK_MSG(read_v(PNMF_PAYLOAD_VERSION, buf, size, &rd, err, sizeof err) == 0, "%s", err);
    CHECK(rd.res.idir_on && rd.res.nlev == md.res.nlev && !memcmp(rd.res.modes, md.res.modes, M * nb) &&
          !memcmp(rd.res.idir, md.res.idir, M * nb) && !memcmp(rd.res.lev, md.res.lev, md.res.nlev * sizeof(int16_t)));
    memset(Dd, 0, M * n);
    decode_window(&rd.res, P, Dd);
    CHECK(!memcmp(De, Dd, M * n));
    pnmf_model_free(&rd);
    /* a v8 reader does not know bit 10 */
    CHECK(read_v(8, buf, size, &rd, err, sizeof err) == PNMF_ERR_CORRUPT && strstr(err, "unknown features"));
    /* bit 10 without bit 3 */
    uint8_t *bad = malloc(size);
    memcpy(bad, buf, size);
    bad[0] = 0x80 | PNMF_FLAG_RESIDUAL, bad[1] = PNMF_FLAG_INTRA >> 7;
    CHECK(read_v(PNMF_PAYLOAD_VERSION, bad, size, &rd, err, sizeof err) == PNMF_ERR_CORRUPT &&
          strstr(err, "intra directions without a levels stream"));
    free(bad);
    /* a DC block given a direction of another family: the writer codes its
     * index in the family (2 for diagonal down-right), past DC's two (out
     * of range); a vertical block given planar (index 0) reads as
     * vertical-right */
    size_t at = 0;
    while (at < M * nb && !md.res.idir[at]) at++;
    CHECK(at < M * nb);
    for (int t = 0; t < 2 && at < M * nb; t++) {
        const uint8_t keep = md.res.modes[at], kd = md.res.idir[at];
        md.res.modes[at] = (uint8_t)((keep & ~7) | (t ? PNMF_RES_INTRA_V : PNMF_RES_INTRA_DC));
        md.res.idir[at] = t ? PNMF_INTRA_PLANAR : PNMF_INTRA_DDR;
        uint8_t *hb = NULL;
        size_t hs = 0;
        CHECK(pnmf_model_write(&md, &hb, &hs) == 0);
        const int ret = read_v(PNMF_PAYLOAD_VERSION, hb, hs, &rd, err, sizeof err);
        if (!t) CHECK_MSG(ret == PNMF_ERR_CORRUPT && strstr(err, "intra direction out of range"), "%d %s", ret, err);
        else CHECK(ret == 0 && rd.res.idir[at] == PNMF_INTRA_VR);
        if (ret == 0) pnmf_model_free(&rd);
        pnmf_free(hb);
        md.res.modes[at] = keep, md.res.idir[at] = kd;
    }
    pnmf_free(buf);
    /* without the directions the same content costs more: squared error +
     * lambda * the levels stream's bits, over the window */
    pnmf_residual_free(&md.res);
    CHECK(pnmf_residual_alloc(&md.res, M, ROWS, COLS, 256, 256) == 0);
    md.res.enc_tx8 = 1, md.res.enc_rc_price = 1;
    encode_window(&md.res, src, P, lambda, D0);
    CHECK(!pnmf_intra_used(&md.res, 0, M));
    md.res.rc_levels = 1;
    CHECK(pnmf_model_write(&md, &b0, &s0) == 0);
    CHECK(b0 && (!(b0[0] & 0x80) || !(b0[1] & (PNMF_FLAG_INTRA >> 7))));
    printf("diagonal window: %zu bytes, sse %.0f with directions; %zu bytes, sse %.0f without\n", size,
           sse(src, De, M * n), s0, sse(src, D0, M * n));
    CHECK(sse(src, De, M * n) + lambda * 8 * size < sse(src, D0, M * n) + lambda * 8 * s0);
    pnmf_free(b0);
    pnmf_model_free(&md);
    free(src), free(P), free(De), free(Dd), free(D0);
}

/* The default encoder at -q 40 on slanted stripes that move: by a
 * fraction of a sample a frame (footage: window flags bit 6), its key
 * frame's blocks take directions (bit 10) and the file decodes to the
 * error the encoder measured; by two whole samples and no noise (a
 * cartoon's motion: no bit 6), no block tries one, and bit 10 is clear. */
static void test_default(const char *dir, int subpel)
{
    enum { R = 80, C = 96, F = 12 };
    static uint8_t f[F][R * C];
    for (int j = 0; j < F; j++)
        for (int y = 0; y < R; y++)
            for (int x = 0; x < C; x++) {
                const double t = subpel ? 0.35 * j : 2.0 * j;
                const double u = y < R / 2 ? (x - t + 2.0 * y) / 9.0 : (x - t - y) / 7.0;
                const double v = 60 + 1.2 * y + 80 * (0.5 + 0.5 * sin(2 * M_PI * u)) + (subpel ? (int)urn(5) - 2 : 0);
                f[j][y * C + x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
    char path[512];
    snprintf(path, sizeof path, "%s/test_intra_%d.pnmf", dir, subpel);
    PnmfEncSettings set;
    test_window_settings(&set, F, 40);
    PnmfEncStats st;
    test_encode_file(path, &set, C, R, F, f[0], &st);
    PnmfHeader h;
    PnmfWindowModel md;
    int sp = -1, on = -1;
    if (test_first_window(path, R, C, &h, &md) == 0) {
        sp = md.res.subpel, on = md.res.idir_on;
        pnmf_model_free(&md);
    }
    CHECK_MSG(sp == subpel && on == subpel, "stripes moving by %s: window flags bit 6 %d, bit 10 %d",
              subpel ? "fractions" : "whole samples", sp, on);
    const double e = test_decoded_sse(path, f[0], C, R, F);
    remove(path);
    CHECK_MSG(fabs(e - st.sse) < 0.5, "decoded squared error %.0f, the encoder's %.0f", e, st.sse);
}

int main(int argc, char **argv)
{
    test_modes();
    test_edges();
    test_family();
    test_read();
    test_window();
    test_default(argc > 1 ? argv[1] : ".", 1);
    test_default(argc > 1 ? argv[1] : ".", 0);
    return test_summary("test_intra");
}
