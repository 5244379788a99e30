/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The residual layer's 8x8 transform (src/tx8.h, format 9): the inverse
 * transform against the matrix that defines it, the dequantization
 * against H.264's table, the forward transform's round trip, the 32-bit
 * bound, the levels stream's decisions, and a window of 8x8 blocks through
 * the encoder, the writer and the reader; hostile payloads refused; the
 * 16-point inverse of a 16x16 residual's low 8x8 against its dense matrix.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model_write.h"
#include "residual_search.h"
#include "residual_window.h"
#include "test.h"
#include "tx8.h"
#include "varint.h"

static unsigned rs = 777;
static unsigned urn(unsigned n) { rs = rs * 1103515245u + 12345u; return ((rs >> 8) & 0xFFFFFF) % n; }

/* The 8-point basis of H.264's 8x8 transform, times 8: row k is the
 * weights of coefficient k over the 8 samples. */
static const int T8[8][8] = { { 8, 8, 8, 8, 8, 8, 8, 8 },        { 12, 10, 6, 3, -3, -6, -10, -12 },
                              { 8, 4, -4, -8, -8, -4, 4, 8 },    { 10, -3, -12, -6, 6, 12, 3, -10 },
                              { 8, -8, -8, 8, 8, -8, -8, 8 },    { 6, -12, 3, 10, -10, -3, 12, -6 },
                              { 4, -8, 8, -4, -4, 8, -8, 4 },    { 3, -6, 10, -12, 12, -10, 6, -3 } };

/* H.264's normAdjust8x8 (8.5.13.1) by qp % 6 and the position's class */
static const int V8[6][6] = { { 20, 18, 32, 19, 25, 24 }, { 22, 19, 35, 21, 28, 26 }, { 26, 23, 42, 24, 33, 31 },
                              { 28, 25, 45, 26, 35, 33 }, { 32, 28, 51, 30, 40, 38 }, { 36, 32, 58, 34, 46, 43 } };

static int v8(int m, int i, int j)
{
    if (i % 4 == 0 && j % 4 == 0) return V8[m][0];
    if (i % 2 == 1 && j % 2 == 1) return V8[m][1];
    if (i % 4 == 2 && j % 4 == 2) return V8[m][2];
    if ((i % 4 == 0 && j % 2 == 1) || (i % 2 == 1 && j % 4 == 0)) return V8[m][3];
    if ((i % 4 == 0 && j % 4 == 2) || (i % 4 == 2 && j % 4 == 0)) return V8[m][4];
    return V8[m][5];
}

/* d = (c * 16 * v) << (qp / 6 - 6), or rounded right for qp < 36 */
static long long dequant_ref(int c, int qp, int i, int j)
{
    const long long s = (long long)c * 16 * v8(qp % 6, i, j);
    if (qp >= 36) return s * (1LL << (qp / 6 - 6));
    const int sh = 6 - qp / 6;
    return (s + (1LL << (sh - 1))) >> sh;
}

static void test_zigzag(void)
{
    /* the anti-diagonals, the odd ones down-left, the even ones up-right */
    int z = 0, ok = 1;
    for (int s = 0; s < 15; s++)
        for (int k = 0; k < 8; k++) {
            const int y = s % 2 ? k : s - k, x = s - y;
            if (y < 0 || y > 7 || x < 0 || x > 7) continue;
            ok &= pnmf_tx8_zigzag[z++] == y * 8 + x;
        }
    CHECK(ok && z == 64);
}

static void test_dequant(void)
{
    int ok = 1;
    for (int qp = 0; qp <= PNMF_RES_MAX_QP; qp++)
        for (int q = 0; q < 64; q++)
            for (int c = -9; c <= 9; c += 3) ok &= pnmf_tx8_dequant(c, qp, q) == dequant_ref(c, qp, q >> 3, q & 7);
    CHECK(ok);
    /* a few by hand: (16 * 20 + 32) >> 6 = 5 at qp 0; (3 * 16 * 19 + 16) >> 5 = 29 at qp 7, position
     * (1, 1); -16 * 58 * 2 at qp 47, position (2, 2) */
    CHECK(pnmf_tx8_dequant(1, 0, 0) == 5);
    CHECK(pnmf_tx8_dequant(3, 7, 9) == 29);
    CHECK(pnmf_tx8_dequant(-1, 47, 18) == -16 * 58 * 2);
}

/* The inverse against the dense product of the basis: exact where the
 * dequantized coefficients are multiples of 64 (qp >= 48: no butterfly
 * rounds), within the butterflies' rounding elsewhere. */
static void test_inverse(void)
{
    int exact = 1, near = 1, tested = 0;
    for (int t = 0; t < 400; t++) {
        const int qp = t < 200 ? 48 + (int)urn(4) : (int)urn(48);
        int16_t lev[64];
        long long d[64];
        const int nz = 1 + (int)urn(12);
        memset(lev, 0, sizeof lev);
        for (int k = 0; k < nz; k++) lev[urn(64)] = (int16_t)((int)urn(81) - 40);
        for (int z = 0; z < 64; z++) {
            const int q = pnmf_tx8_zigzag[z];
            d[q] = dequant_ref(lev[z], qp, q >> 3, q & 7);
        }
        int r[64];
        pnmf_tx8_idct(lev, qp, r);
        for (int y = 0; y < 8; y++)
            for (int x = 0; x < 8; x++) {
                /* r = (sum_u sum_v T[u][y] d[u][v] T[v][x] / 64 + 32) >> 6 */
                double a = 0;
                for (int u = 0; u < 8; u++)
                    for (int v = 0; v < 8; v++) a += (double)T8[u][y] * (double)d[u * 8 + v] * T8[v][x] / 64.0;
                const double e = floor((a + 32) / 64);
                if (qp >= 48) exact &= e == r[y * 8 + x];
                else near &= fabs(e - r[y * 8 + x]) <= 1;
                tested++;
            }
    }
    CHECK(exact && near && tested == 400 * 64);
}

/* Every value of the inverse fits 32 bits with |level| <= PNMF_TX8_MAX_COEF
 * at any qp: a bound of the butterflies' magnitudes, pass by pass. */
static void bound_1d(const long long *in, long long *out, long long *peak)
{
    const long long e0 = in[0] + in[4], e1 = e0, e2 = in[2] / 2 + 1 + in[6], e3 = in[2] + in[6] / 2 + 1;
    const long long e4 = in[3] + in[5] + in[7] + in[7] / 2 + 1, e5 = in[1] + in[7] + in[3] + in[3] / 2 + 1;
    const long long e6 = in[1] + in[7] + in[5] + in[5] / 2 + 1, e7 = in[3] + in[5] + in[1] + in[1] / 2 + 1;
    const long long f0 = e0 + e3, f2 = e1 + e2, f1 = e4 + e7 / 4 + 1, f3 = e5 + e6 / 4 + 1;
    const long long f5 = e5 / 4 + 1 + e6, f7 = e7 + e4 / 4 + 1;
    out[0] = out[7] = f0 + f7, out[1] = out[6] = f2 + f5, out[2] = out[5] = f2 + f3, out[3] = out[4] = f0 + f1;
    const long long all[] = { e0, e2, e3, e4, e5, e6, e7, f0, f1, f2, f3, f5, f7, out[0], out[1], out[2], out[3] };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i] > *peak) *peak = all[i];
}

/* The inverse, and its sum with a prediction, against H.264's equations
 * (8.5.13.2, eq. 8-338 to 8-353) written out with the dequantization of
 * dequant_ref(): exact for every quantizer, on blocks without levels, with
 * the first alone (the sum's shortcut), with a few, and with all. */
static void idct8_ref(const int64_t *in, int64_t *out)
{
    const int64_t a0 = in[0] + in[4], a4 = in[0] - in[4], a2 = (in[2] >> 1) - in[6], a6 = in[2] + (in[6] >> 1);
    const int64_t b0 = a0 + a6, b2 = a4 + a2, b4 = a4 - a2, b6 = a0 - a6;
    const int64_t a1 = -in[3] + in[5] - in[7] - (in[7] >> 1), a3 = in[1] + in[7] - in[3] - (in[3] >> 1);
    const int64_t a5 = -in[1] + in[7] + in[5] + (in[5] >> 1), a7 = in[3] + in[5] + in[1] + (in[1] >> 1);
    const int64_t b1 = a1 + (a7 >> 2), b7 = a7 - (a1 >> 2), b3 = a3 + (a5 >> 2), b5 = (a3 >> 2) - a5;
    out[0] = b0 + b7, out[1] = b2 + b5, out[2] = b4 + b3, out[3] = b6 + b1;
    out[4] = b6 - b1, out[5] = b4 - b3, out[6] = b2 - b5, out[7] = b0 - b7;
}

static void test_inverse_exact(void)
{
    int ok = 1, ok_add = 1;
    for (int t = 0; t < 2000; t++) {
        const int qp = (int)urn(PNMF_RES_MAX_QP + 1), kind = t % 4;
        int16_t lev[64];
        memset(lev, 0, sizeof lev);
        if (kind == 1) lev[0] = (int16_t)((int)urn(801) - 400);
        for (int k = 0; kind >= 2 && k < (kind == 2 ? 1 + (int)urn(6) : 64); k++)
            lev[kind == 2 ? (int)urn(64) : k] = (int16_t)((int)urn(2 * PNMF_TX8_MAX_COEF + 1) - PNMF_TX8_MAX_COEF);
        int64_t d[64], f[64], row[8], col[8];
        for (int z = 0; z < 64; z++) {
            const int q = pnmf_tx8_zigzag[z];
            d[q] = dequant_ref(lev[z], qp, q >> 3, q & 7);
        }
        for (int i = 0; i < 8; i++) idct8_ref(d + 8 * i, f + 8 * i);
        for (int j = 0; j < 8; j++) {
            for (int i = 0; i < 8; i++) col[i] = f[8 * i + j];
            idct8_ref(col, row);
            for (int i = 0; i < 8; i++) f[8 * i + j] = (row[i] + 32) >> 6;
        }
        int r[64];
        uint8_t pred[8 * 11], dst[8 * 9];
        for (int q = 0; q < 88; q++) pred[q] = (uint8_t)urn(256);
        memset(dst, 0xAB, sizeof dst);
        pnmf_tx8_idct(lev, qp, r);
        pnmf_tx8_idct_add(lev, qp, pred, 11, dst, 9);
        for (int y = 0; y < 8; y++) {
            for (int x = 0; x < 8; x++) {
                const int64_t s = pred[y * 11 + x] + f[8 * y + x];
                ok &= r[8 * y + x] == f[8 * y + x];
                ok_add &= dst[y * 9 + x] == (s < 0 ? 0 : s > 255 ? 255 : s);
            }
            ok_add &= dst[y * 9 + 8] == 0xAB; /* nothing outside the block */
        }
    }
    CHECK(ok);
    CHECK(ok_add);
}

static void test_bound(void)
{
    long long peak = 0, d[64], t[64], col[8], o[8];
    for (int qp = 0; qp <= PNMF_RES_MAX_QP; qp++) {
        for (int q = 0; q < 64; q++) d[q] = llabs(dequant_ref(PNMF_TX8_MAX_COEF, qp, q >> 3, q & 7));
        for (int i = 0; i < 8; i++) bound_1d(d + 8 * i, t + 8 * i, &peak);
        for (int j = 0; j < 8; j++) {
            for (int i = 0; i < 8; i++) col[i] = t[8 * i + j];
            bound_1d(col, o, &peak);
            for (int i = 0; i < 8; i++)
                if (o[i] + 32 > peak) peak = o[i] + 32;
        }
    }
    CHECK_MSG(peak < 2147483647LL, "peak %lld", peak);
    /* and the worst case the bound allows decodes to the dense product's sign */
    int16_t lev[64];
    int r[64];
    for (int z = 0; z < 64; z++) lev[z] = (int16_t)(z % 2 ? -PNMF_TX8_MAX_COEF : PNMF_TX8_MAX_COEF);
    pnmf_tx8_idct(lev, PNMF_RES_MAX_QP, r);
    long long dd[64];
    for (int z = 0; z < 64; z++) {
        const int q = pnmf_tx8_zigzag[z];
        dd[q] = dequant_ref(lev[z], PNMF_RES_MAX_QP, q >> 3, q & 7);
    }
    int ok = 1;
    for (int y = 0; y < 8; y++)
        for (int x = 0; x < 8; x++) {
            double a = 0;
            for (int u = 0; u < 8; u++)
                for (int v = 0; v < 8; v++) a += (double)T8[u][y] * (double)dd[u * 8 + v] * T8[v][x] / 64.0;
            ok &= floor((a + 32) / 64) == r[y * 8 + x];
        }
    CHECK(ok);
}

/* The forward transform is the inverse's transpose up to scale, and with
 * the quantizer's multipliers and rounding to nearest the round trip errs
 * by about a step at most. */
static void test_forward(void)
{
    int ok_f = 1;
    for (int t = 0; t < 100; t++) {
        int x[64], w[64];
        for (int q = 0; q < 64; q++) x[q] = (int)urn(511) - 255;
        pnmf_tx8_fdct(x, w);
        /* DC is the sum; the rest against the basis, within the >> rounding */
        long long sum = 0;
        for (int q = 0; q < 64; q++) sum += x[q];
        ok_f &= w[0] == sum;
        for (int u = 0; u < 8; u++)
            for (int v = 0; v < 8; v++) {
                double a = 0;
                for (int i = 0; i < 8; i++)
                    for (int j = 0; j < 8; j++) a += T8[u][i] * x[i * 8 + j] * T8[v][j] / 64.0;
                ok_f &= fabs(a - w[u * 8 + v]) <= 24;
            }
    }
    CHECK(ok_f);
    for (int qp = 0; qp <= 48; qp += 4) {
        const double qstep = 0.625 * pow(2, qp / 6.0);
        double worst = 0, sq = 0;
        for (int t = 0; t < 100; t++) {
            int x[64], w[64], r[64];
            int16_t lev[64];
            for (int q = 0; q < 64; q++) x[q] = (int)urn(511) - 255;
            pnmf_tx8_fdct(x, w);
            for (int z = 0; z < 64; z++) {
                const int q = pnmf_tx8_zigzag[z];
                const long long a = llabs((long long)w[q]);
                const long long l = (a * pnmf_tx8_mf(qp, q) + (1LL << (16 + qp / 6)) / 2) >> (16 + qp / 6);
                lev[z] = (int16_t)(w[q] < 0 ? -l : l);
            }
            pnmf_tx8_idct(lev, qp, r);
            for (int q = 0; q < 64; q++) {
                worst = fmax(worst, fabs((double)r[q] - x[q]));
                sq += ((double)r[q] - x[q]) * ((double)r[q] - x[q]);
            }
        }
        /* uniform quantization noise of a step: step^2 / 12 a sample */
        const double mse = sq / (100 * 64);
        CHECK_MSG(mse <= 0.25 + qstep * qstep / 12 * 1.3, "qp %d: mse %g for step %g", qp, mse, qstep);
        CHECK_MSG(worst <= 1.0 + 2 * qstep, "qp %d: error %g for step %g", qp, worst, qstep);
    }
}

/* One block's decisions written and read back; a magnitude past the bound
 * refused. */
static void test_levels(void)
{
    for (int t = 0; t < 50; t++) {
        int16_t lev[64] = { 0 }, back[64];
        const int nz = 1 + (int)urn(20);
        for (int k = 0; k < nz; k++) {
            int l = (int)urn(7) - 3;
            if (urn(8) == 0) l = (int)urn(2 * PNMF_TX8_MAX_COEF + 1) - PNMF_TX8_MAX_COEF;
            lev[t % 3 ? urn(64) : urn(10)] = (int16_t)l;
        }
        if (t == 7) memset(lev, 0, sizeof lev), lev[63] = -2; /* the last position alone */
        int any = 0;
        for (int i = 0; i < 64; i++) any |= lev[i];
        if (!any) lev[0] = 1;
        RcLevCtx c, c2;
        Buf b = { 0 };
        RcEnc e;
        rc_lev_ctx_init(&c);
        rc_enc_init(&e, &b);
        RcBin o = { .enc = &e };
        CHECK(pnmf_tx8_levels(&o, &c, t & 3, lev, PNMF_TX8_MAX_COEF) == 0);
        rc_enc_finish(&e);
        RcDec d;
        rc_dec_init(&d, b.p, b.len, RC_V13);
        rc_lev_ctx_init(&c2);
        CHECK(pnmf_tx8_levels_read(&d, &c2, t & 3, back, PNMF_TX8_MAX_COEF) == 0);
        CHECK(rc_dec_exact(&d, b.p) && !memcmp(back, lev, sizeof lev) && !memcmp(&c, &c2, sizeof c));
        pnmf_free(b.p);
    }
    /* PNMF_TX8_MAX_COEF + 1, written past the writer's bound, refused by the reader */
    int16_t lev[64] = { 0 }, back[64];
    lev[3] = PNMF_TX8_MAX_COEF + 1;
    RcLevCtx c;
    Buf b = { 0 };
    RcEnc e;
    rc_lev_ctx_init(&c);
    rc_enc_init(&e, &b);
    RcBin o = { .enc = &e };
    CHECK(pnmf_tx8_levels(&o, &c, 0, lev, PNMF_TX8_MAX_COEF) == -1);
    b.len = 0, rc_lev_ctx_init(&c), rc_enc_init(&e, &b);
    CHECK(pnmf_tx8_levels(&o, &c, 0, lev, INT16_MAX) == 0);
    rc_enc_finish(&e);
    RcDec d;
    rc_dec_init(&d, b.p, b.len, RC_V13);
    rc_lev_ctx_init(&c);
    CHECK(pnmf_tx8_levels_read(&d, &c, 0, back, PNMF_TX8_MAX_COEF) == -1);
    rc_dec_init(&d, b.p, b.len, RC_V13);
    rc_lev_ctx_init(&c);
    CHECK(pnmf_tx8_levels_read(&d, &c, 0, back, PNMF_TX8_MAX_COEF + 1) == 0 && back[3] == PNMF_TX8_MAX_COEF + 1);
    pnmf_free(b.p);
}

enum { ROWS = 40, COLS = 48, M = 4 };

/* Smooth content: gradients and slow waves that drift, with a little
 * noise; P, the "model", the drifted content without the waves. */
static void make_smooth(uint8_t *src, uint8_t *P)
{
    for (int j = 0; j < M; j++)
        for (int y = 0; y < ROWS; y++)
            for (int x = 0; x < COLS; x++) {
                const size_t q = (size_t)j * ROWS * COLS + (size_t)y * COLS + x;
                const double base = 60 + 2.0 * x + 1.5 * y;
                P[q] = (uint8_t)base;
                double v = base + 25 * sin((x + 1.7 * j) / 5.0) * cos((y - 1.3 * j) / 6.0) + (int)urn(3) - 1;
                src[q] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
}

static int read_v(int version, const uint8_t *buf, size_t size, PnmfWindowModel *rd, char *err, size_t errlen)
{
    return pnmf_model_read_version(version, buf, size, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, rd, err, errlen);
}

/* A window whose encoder may use the 8x8 transform: it does, on smooth
 * content, with intra predictions too; the decoder shows what the
 * encoder measured; the encoder's contexts are the writer's; every coding
 * goes to the levels stream with flags bit 8 and reads back the same. */
static void test_window(void)
{
    const size_t n = (size_t)ROWS * COLS;
    uint8_t *src = malloc(M * n), *P = malloc(M * n), *De = malloc(M * n), *Dd = malloc(M * n);
    make_smooth(src, P);
    PnmfWindowModel md, rd;
    CHECK(pnmf_model_alloc(&md, ROWS, COLS, ROWS, COLS, M, 1, 0) == 0);
    CHECK(pnmf_residual_alloc(&md.res, M, ROWS, COLS, 64, 32) == 0);
    md.res.enc_tx8 = 1, md.res.enc_rc_price = 1;
    encode_window(&md.res, src, P, 64.0 * 64 / 256 * 0.1, De);
    decode_window(&md.res, P, Dd);
    CHECK(!memcmp(De, Dd, M * n));
    const size_t nb = (size_t)md.res.bx * md.res.by;
    int t8 = 0, t4 = 0, t8_intra = 0;
    for (size_t q = 0; q < M * nb; q++) {
        if (md.res.tx8[q]) CHECK(md.res.modes[q] & PNMF_RES_TRANSFORM);
        t8 += md.res.tx8[q];
        t8_intra += md.res.tx8[q] && (md.res.modes[q] & 7) >= PNMF_RES_INTRA_DC;
        t4 += (md.res.modes[q] & PNMF_RES_TRANSFORM) && !md.res.tx8[q];
    }
    CHECK_MSG(t8 > 0 && t8_intra > 0, "%d 8x8 blocks (%d intra), %d 4x4", t8, t8_intra, t4);
    {
        RcLevCtx c;
        RcBin o = { .update = 1 };
        CHECK(pnmf_residual_levels_stream(&o, &c, &md.res, 0, INT16_MAX) == 0);
        CHECK_MSG(!memcmp(&c, &md.res.enc_levels, sizeof c), "the encoder's contexts differ from the writer's");
    }
    uint8_t *buf[3] = { NULL, NULL, NULL };
    size_t size[3] = { 0, 0, 0 };
    char err[200] = "";
    for (int a = 0; a < 3; a++) { /* varints, the levels stream, frame 0's varints: all the levels stream */
        md.res.rc_levels = a;
        CHECK(pnmf_model_write(&md, &buf[a], &size[a]) == 0);
        CHECK(buf[a] && buf[a][0] == (PNMF_FLAG_RESIDUAL | PNMF_FLAG_RCLEVELS | 0x80) && buf[a][1] == 2);
        CHECK(size[a] == size[0] && !memcmp(buf[a], buf[0], size[0]));
    }
    md.res.rc_levels = 0;
    CHECK_MSG(read_v(PNMF_PAYLOAD_VERSION, buf[1], size[1], &rd, err, sizeof err) == 0, "%s", err);
    CHECK(rd.res.tx8_on && rd.res.nlev == md.res.nlev && !memcmp(rd.res.modes, md.res.modes, M * nb) &&
          !memcmp(rd.res.tx8, md.res.tx8, M * nb) && !memcmp(rd.res.lev, md.res.lev, md.res.nlev * sizeof(int16_t)));
    memset(Dd, 0, M * n);
    decode_window(&rd.res, P, Dd);
    CHECK(!memcmp(De, Dd, M * n));
    pnmf_model_free(&rd);
    /* a v8 reader does not know bit 8 */
    CHECK(read_v(8, buf[1], size[1], &rd, err, sizeof err) == PNMF_ERR_CORRUPT && strstr(err, "unknown features"));
    /* bit 8 without bit 3 */
    uint8_t *bad = malloc(size[1]);
    memcpy(bad, buf[1], size[1]);
    bad[0] = PNMF_FLAG_RESIDUAL | 0x80;
    CHECK(read_v(PNMF_PAYLOAD_VERSION, bad, size[1], &rd, err, sizeof err) == PNMF_ERR_CORRUPT && strstr(err, "without a levels stream"));
    /* every truncation refused, every one-bit change read or refused with a reason */
    int refused = 0, odd = 0, read_ok = 0;
    for (size_t cut = 0; cut < size[1]; cut++) refused += read_v(PNMF_PAYLOAD_VERSION, buf[1], cut, &rd, err, sizeof err) < 0;
    CHECK_MSG(refused == (int)size[1], "%d of %zu truncations refused", refused, size[1]);
    for (size_t q = 0; q < size[1]; q++)
        for (int bit = 0; bit < 8; bit++) {
            memcpy(bad, buf[1], size[1]);
            bad[q] ^= (uint8_t)(1 << bit);
            err[0] = 0;
            const int ret = read_v(PNMF_PAYLOAD_VERSION, bad, size[1], &rd, err, sizeof err);
            if (ret == 0) {
                decode_key_window(&rd.res, P, Dd); /* whatever it reads decodes (the sanitizer build checks it) */
                read_ok++, pnmf_model_free(&rd);
            } else {
                odd += ret != PNMF_ERR_CORRUPT || !err[0];
            }
        }
    CHECK_MSG(!odd, "%d one-bit changes failed without a reason", odd);
    CHECK(read_ok < (int)(8 * size[1]));
    free(bad);
    for (int a = 0; a < 3; a++) pnmf_free(buf[a]);
    /* without enc_tx8 no 8x8 block, no bit 8: the same bytes as before format 9 */
    pnmf_residual_free(&md.res);
    CHECK(pnmf_residual_alloc(&md.res, M, ROWS, COLS, 64, 32) == 0);
    md.res.enc_rc_price = 1;
    encode_window(&md.res, src, P, 64.0 * 64 / 256 * 0.1, De);
    md.res.rc_levels = 1;
    uint8_t *b4 = NULL;
    size_t s4 = 0;
    CHECK(!pnmf_tx8_used(&md.res, 0, M) && pnmf_model_write(&md, &b4, &s4) == 0);
    CHECK(b4 && b4[0] == (PNMF_FLAG_RESIDUAL | PNMF_FLAG_RCLEVELS));
    CHECK_MSG(read_v(PNMF_PAYLOAD_VERSION, b4, s4, &rd, err, sizeof err) == 0, "%s", err);
    pnmf_model_free(&rd);
    pnmf_free(b4);
    pnmf_model_free(&md);
    free(src), free(P), free(De), free(Dd);
}

/* The transform trials' SATD against its definition: the sum of |H D H^T|
 * over the 8x8 difference D, H the Sylvester Hadamard matrix of order 8,
 * on random blocks and on the extremes (every difference +-255, signs in
 * the Walsh patterns that put the whole sum in one coefficient). */
static void test_satd(void)
{
    int H[8][8];
    for (int i = 0; i < 8; i++)
        for (int k = 0; k < 8; k++) H[i][k] = __builtin_popcount((unsigned)(i & k)) & 1 ? -1 : 1;
    uint8_t s[8 * 12], p[64];
    unsigned seed = 99;
    long bad = 0, checked = 0;
    for (int n = 0; n < 3000; n++) {
        const int kind = n % 3;
        for (int q = 0; q < 8 * 12; q++) {
            seed = seed * 1103515245u + 12345u;
            s[q] = (uint8_t)(kind == 0 ? (int)(seed >> 16 & 255) : kind == 1 ? 255 * (int)((seed >> 20) & 1) : 124 + (int)((seed >> 16) % 9));
        }
        for (int q = 0; q < 64; q++) {
            seed = seed * 1103515245u + 12345u;
            p[q] = (uint8_t)(kind == 0 ? (int)(seed >> 16 & 255) : kind == 1 ? 255 - s[(q / 8) * 12 + q % 8] : 128);
        }
        if (n < 64) { /* difference +-255 in Walsh pattern n: one coefficient of 64 * 255 */
            for (int y = 0; y < 8; y++)
                for (int x = 0; x < 8; x++) {
                    const int plus = H[n / 8][y] * H[n % 8][x] > 0;
                    s[y * 12 + x] = (uint8_t)(plus ? 255 : 0), p[y * 8 + x] = (uint8_t)(plus ? 0 : 255);
                }
        }
        long want = 0;
        for (int u = 0; u < 8; u++)
            for (int v = 0; v < 8; v++) {
                long c = 0;
                for (int y = 0; y < 8; y++)
                    for (int x = 0; x < 8; x++) c += (long)H[u][y] * ((int)s[y * 12 + x] - p[y * 8 + x]) * H[v][x];
                want += c < 0 ? -c : c;
            }
        bad += pnmf_residual_satd8x8(s, p, 12) != want;
        checked++;
    }
    CHECK_MSG(bad == 0, "%ld of %ld SATDs differ from the definition", bad, checked);
}


/* ---- the 16-point transform of a 16x16 residual's low 8x8 ---------------- */

/* H.265's 16-point coefficient magnitudes (8.6.4.2) by angle index a, about
 * 64 sqrt(2) cos(a pi / 32), a = 1 .. 16 (index 0: row 0's 64). */
static const int HEVC_MAG2[17] = { 64, 90, 89, 87, 83, 80, 75, 70, 64, 57, 50, 43, 36, 25, 18, 9, 0 };

/* Entry (k, n) of the 16-point matrix from its definition: the magnitude
 * of angle (2n + 1) k pi / 32 folded into 0..pi/2, with the cosine's sign. */
static int c16_ref(int k, int n)
{
    if (!k) return 64;
    int a = (2 * n + 1) * k % 64; /* in pi / 32 */
    int sign = 1;
    if (a > 32) a = 64 - a;      /* cos(2 pi - x) = cos x */
    if (a > 16) a = 32 - a, sign = -1; /* cos(pi - x) = -cos x */
    return sign * HEVC_MAG2[a];
}

static void test_tx16_matrix(void)
{
    int ok = 1, near = 1;
    for (int k = 0; k < 8; k++)
        for (int n = 0; n < 16; n++) {
            ok &= pnmf_tx16_matrix[k][n] == c16_ref(k, n);
            const double c = k ? 64.0 * sqrt(2.0) * cos((2 * n + 1) * k * M_PI / 32) : 64.0;
            near &= fabs(c - pnmf_tx16_matrix[k][n]) < 1.5;
        }
    CHECK(ok);
    CHECK(near);
}

static const int LS16[6] = { 40, 45, 51, 57, 64, 72 };
static long long clip16_ref(long long v) { return v < -32768 ? -32768 : v > 32767 ? 32767 : v; }

/* The inverse against the dense matrix products with H.265's shifts, and
 * against the orthonormal inverse at the qp's step 0.625 2^(qp / 6). */
static void test_tx16_inverse(void)
{
    int exact = 1, near = 1, tested = 0, near_n = 0;
    for (int t = 0; t < 300; t++) {
        const int qp = (int)urn(52);
        int16_t lev[64];
        long long d[64];
        const int nz = 1 + (int)urn(t < 100 ? 64 : 10);
        memset(lev, 0, sizeof lev);
        const int big = t % 3 == 0 ? PNMF_TX8_MAX_COEF : 40;
        for (int k = 0; k < nz; k++) lev[urn(64)] = (int16_t)((int)urn(2 * big + 1) - big);
        int clipped = 0; /* a clip acts: the orthonormal comparison does not hold */
        for (int z = 0; z < 64; z++) {
            const long long u = ((long long)lev[z] * 16 * LS16[qp % 6] * (1LL << (qp / 6)) + 64) >> 7;
            d[pnmf_tx8_zigzag[z]] = clip16_ref(u);
            clipped |= d[pnmf_tx8_zigzag[z]] != u;
        }
        int r[256];
        pnmf_tx16_idct(lev, qp, r);
        long long g[16][8];
        for (int n = 0; n < 16; n++)
            for (int v = 0; v < 8; v++) {
                long long a = 0;
                for (int k = 0; k < 8; k++) a += (long long)c16_ref(k, n) * d[8 * k + v];
                g[n][v] = clip16_ref((a + 64) >> 7);
                clipped |= g[n][v] != (a + 64) >> 7;
            }
        for (int n = 0; n < 16; n++)
            for (int m = 0; m < 16; m++) {
                long long a = 0;
                for (int v = 0; v < 8; v++) a += (long long)c16_ref(v, m) * g[n][v];
                exact &= ((a + 2048) >> 12) == r[16 * n + m];
                tested++;
                if (clipped) continue;
                near_n++;
                double f = 0, fa = 0; /* the orthonormal inverse of level * step, and its terms' magnitudes */
                for (int k = 0; k < 8; k++)
                    for (int v = 0; v < 8; v++) {
                        const double ck = (k ? sqrt(2.0 / 16) : sqrt(1.0 / 16)) * cos((2 * n + 1) * k * M_PI / 32);
                        const double cv = (v ? sqrt(2.0 / 16) : sqrt(1.0 / 16)) * cos((2 * m + 1) * v * M_PI / 32);
                        int z = 0;
                        while (pnmf_tx8_zigzag[z] != 8 * k + v) z++;
                        f += ck * cv * lev[z] * 0.625 * pow(2.0, qp / 6.0);
                        fa += fabs(ck * cv * lev[z] * 0.625 * pow(2.0, qp / 6.0));
                    }
                /* H.265's entries are within 5 % of the cosines' (25 for 26.3), a product of two within 10 % */
                near &= fabs(f - r[16 * n + m]) <= 1.5 + 0.1 * fa;
            }
    }
    CHECK(exact && tested == 300 * 256);
    CHECK(near && near_n > 100 * 256);
}

int main(void)
{
    test_tx16_matrix();
    test_tx16_inverse();
    test_satd();
    test_zigzag();
    test_dequant();
    test_inverse();
    test_inverse_exact();
    test_bound();
    test_forward();
    test_levels();
    test_window();
    return test_summary("test_tx8");
}
