/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sub-pixel motion (window flags bit 6, format 9; docs/format.md,
 * "Sub-pixel motion" and "Sharp interpolation"): the bilinear and the
 * 6-tap interpolation (bit 20, format 16) against definitions written out
 * here sample by sample, at every quarter phase and across the frame's
 * edges; a window whose shifted blocks use fractional vectors decodes to
 * what the encoder measured, through the payload; the reader refuses
 * vectors past the quarter-sample bound, bit 6 in a payload of format 8,
 * bit 20 in one of format 15, bit 6 without a residual layer and bit 20
 * without bit 6; the encoder's probe tells a
 * fractional pan from pixel-exact motion.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "encode_file.h"
#include "internal.h"
#include "model_write.h"
#include "pnmf/info.h"
#include "residual_search.h"
#include "test.h"

static unsigned rs = 777;
static unsigned urn(unsigned n) { rs = rs * 1103515245u + 12345u; return ((rs >> 8) & 0xFFFFFF) % n; }

/* ---- the definition, in the words of the format's subsection ------------ */

static const uint8_t *F;
static int FR, FC;

static int fdiv(int a, int b) { return (a - ((a % b) + b) % b) / b; } /* floor(a / b) */
static int clip(int v) { return v < 0 ? 0 : v > 255 ? 255 : v; }

/* the integer sample (y, x), coordinates clamped to the frame */
static int G(int y, int x)
{
    y = y < 0 ? 0 : y >= FR ? FR - 1 : y;
    x = x < 0 ? 0 : x >= FC ? FC - 1 : x;
    return F[y * FC + x];
}

/* The sample at quarter-sample position (qy, qx): the four whole samples
 * around it, each weighed by its nearness in quarters along both axes. */
static int Q(int qy, int qx)
{
    const int y = fdiv(qy, 4), x = fdiv(qx, 4), fy = qy - 4 * y, fx = qx - 4 * x;
    int s = 8;
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++) s += (i ? fy : 4 - fy) * (k ? fx : 4 - fx) * G(y + i, x + k);
    return s >> 4;
}

/* The sample at (qy, qx) by the 6-tap filter: the taps of the quarter
 * phase fx over the six whole samples of each of six rows (offsets -2..3),
 * those sums weighed by the taps of fy, then (+ 2048) / 4096 rounded
 * down and clipped. */
static int Q6(int qy, int qx)
{
    static const int K[4][6] = { { 0, 0, 64, 0, 0, 0 }, { 1, -5, 52, 20, -5, 1 }, { 2, -10, 40, 40, -10, 2 },
                                 { 1, -5, 20, 52, -5, 1 } };
    const int y = fdiv(qy, 4), x = fdiv(qx, 4), fy = qy - 4 * y, fx = qx - 4 * x;
    long s = 2048;
    for (int i = 0; i < 6; i++) {
        long h = 0;
        for (int k = 0; k < 6; k++) h += K[fx][k] * G(y - 2 + i, x - 2 + k);
        s += K[fy][i] * h;
    }
    return clip(fdiv((int)s, 4096));
}

/* Every phase, blocks anywhere in the frame (clipped ones too), vectors
 * reaching past every edge, by either filter. */
static void test_interpolation(void)
{
    const int sizes[4][2] = { { 21, 30 }, { 8, 8 }, { 5, 13 }, { 40, 48 } };
    long checked = 0, bad = 0, differ = 0;
    for (int s = 0; s < 4; s++) {
        FR = sizes[s][0], FC = sizes[s][1];
        uint8_t *f = malloc((size_t)FR * FC);
        for (int q = 0; q < FR * FC; q++) f[q] = (uint8_t)(q % 7 == 0 ? 255 * (urn(2)) : urn(256)); /* extremes often */
        F = f;
        const int bx = pnmf_residual_blocks(FC), by = pnmf_residual_blocks(FR);
        for (int b = 0; b < bx * by; b++)
            for (int ph = 0; ph < 16; ph++)
                for (int rep = 0; rep < 3; rep++) {
                    int y0, y1, x0, x1;
                    pnmf_residual_block(bx, FR, FC, (size_t)b, &y0, &y1, &x0, &x1);
                    /* whole parts within +-12 samples: past the edges of the small frames */
                    const int qy = 4 * ((int)urn(25) - 12) + ph / 4, qx = 4 * ((int)urn(25) - 12) + ph % 4;
                    for (int sharp = 0; sharp < 2; sharp++) {
                        uint8_t pred[PNMF_RES_BLOCK * PNMF_RES_BLOCK];
                        pnmf_residual_subpel(f, FR, FC, y0, y1, x0, x1, qy, qx, sharp, pred);
                        for (int y = y0; y < y1; y++)
                            for (int x = x0; x < x1; x++) {
                                const int want = sharp ? Q6(4 * y + qy, 4 * x + qx) : Q(4 * y + qy, 4 * x + qx);
                                bad += pred[(y - y0) * PNMF_RES_BLOCK + x - x0] != want;
                                differ += sharp && want != Q(4 * y + qy, 4 * x + qx);
                                checked++;
                            }
                        /* the same through the prediction the encoder calls */
                        uint8_t p2[PNMF_RES_BLOCK * PNMF_RES_BLOCK];
                        pnmf_residual_predict(sharp ? PNMF_RES_SHIFTED_SHARP : PNMF_RES_SHIFTED_QPEL, NULL, NULL, NULL,
                                              f, NULL, FR, FC, y0, y1, x0, x1, qy, qx, p2);
                        for (int y = 0; y < y1 - y0; y++)
                            bad += memcmp(p2 + y * PNMF_RES_BLOCK, pred + y * PNMF_RES_BLOCK, (size_t)(x1 - x0)) != 0;
                    }
                }
        free(f);
    }
    CHECK_MSG(bad == 0, "%ld of %ld samples differ from the definition", bad, checked);
    CHECK(checked > 100000);
    /* the filters are not the same: on noise most fractional samples differ */
    CHECK_MSG(differ > checked / 8, "the 6-tap filter matches the bilinear on %ld of %ld", checked / 2 - differ,
              checked / 2);
    /* a phase of 0 is the integer copy; a flat frame interpolates to itself */
    FR = 9, FC = 9;
    uint8_t flat[81];
    memset(flat, 77, sizeof flat);
    for (int sharp = 0; sharp < 2; sharp++) {
        uint8_t p[64];
        pnmf_residual_subpel(flat, 9, 9, 0, 8, 0, 8, 6, -3, sharp, p);
        int all = 1;
        for (int q = 0; q < 64; q++) all &= p[q] == 77;
        CHECK(all);
    }
}

/* ---- a window with fractional vectors ----------------------------------- */

enum { R = 32, C = 40, M = 6 };

/* A smooth pattern panned by 0.75 sample a frame down and 0.5 across. */
static uint8_t pan_sample(int j, int y, int x)
{
    const double yy = y - 0.75 * j, xx = x - 0.5 * j;
    const double v = 128 + 60 * sin(yy * 0.45) * cos(xx * 0.33) + 30 * sin((xx + yy) * 0.21);
    return (uint8_t)clip((int)lrint(v));
}

static void make_pan(uint8_t *src)
{
    for (int j = 0; j < M; j++)
        for (int y = 0; y < R; y++)
            for (int x = 0; x < C; x++) src[((size_t)j * R + y) * C + x] = pan_sample(j, y, x);
}

/* Code the clip over an empty model with r->subpel as set; decode it from
 * r and from the payload read back; returns the squared error. */
static double code_pan(PnmfWindowModel *md, const uint8_t *src, int subpel, int sharp, int *fractional)
{
    const size_t n = (size_t)R * C;
    PnmfResidual *r = &md->res;
    CHECK(pnmf_residual_alloc(r, M, R, C, 64, 64) == 0);
    r->subpel = subpel;
    r->sharp = sharp;
    static uint8_t P[R * C], De[M][R * C], Dd[M][R * C], Dr[M][R * C];
    memset(P, 128, sizeof P);
    const double lambda = 64.0 * 64 / 256 * 0.1;
    for (int j = 0; j < M; j++) {
        const uint8_t *ref[PNMF_RES_REFS];
        for (int t = 0; t < PNMF_RES_REFS; t++) ref[t] = j - 1 - t >= 0 ? De[j - 1 - t] : NULL;
        CHECK(pnmf_residual_encode_frame(r, j, src + j * n, P, P, ref, j < PNMF_RES_REFS ? j : PNMF_RES_REFS, De[j],
                                         lambda) == 0);
    }
    *fractional = 0;
    for (size_t q = 0; q < r->nmv; q++) *fractional += (r->mv[2 * q] % 4 || r->mv[2 * q + 1] % 4);
    for (int j = 0; j < M; j++) {
        const uint8_t *ref[PNMF_RES_REFS];
        for (int t = 0; t < PNMF_RES_REFS; t++) ref[t] = j - 1 - t >= 0 ? Dd[j - 1 - t] : NULL;
        pnmf_residual_frame(r, j, P, P, ref, Dd[j]);
    }
    CHECK_MSG(!memcmp(De, Dd, sizeof De), "subpel %d: the decoder differs from the encoder", subpel);
    uint8_t *buf = NULL;
    size_t size = 0;
    CHECK(pnmf_model_write(md, &buf, &size) == 0);
    CHECK(buf && (buf[0] & PNMF_FLAG_SUBPEL) == (subpel ? PNMF_FLAG_SUBPEL : 0));
    PnmfWindowModel rd;
    char err[200] = "";
    CHECK_MSG(pnmf_model_read(buf, size, R, C, R, C, M, 1, 4, 2, &rd, err, sizeof err) == 0, "%s", err);
    if (rd.res.step16) {
        CHECK(rd.res.subpel == subpel && rd.res.sharp == sharp && rd.res.nmv == r->nmv);
        CHECK(!r->nmv || !memcmp(rd.res.mv, r->mv, 2 * r->nmv * sizeof(int16_t)));
        for (int j = 0; j < M; j++) {
            const uint8_t *ref[PNMF_RES_REFS];
            for (int t = 0; t < PNMF_RES_REFS; t++) ref[t] = j - 1 - t >= 0 ? Dr[j - 1 - t] : NULL;
            pnmf_residual_frame(&rd.res, j, P, P, ref, Dr[j]);
        }
        CHECK(!memcmp(De, Dr, sizeof De));
        pnmf_model_free(&rd);
    }
    /* a payload of format 8 cannot say it */
    if (subpel)
        CHECK(pnmf_model_read_version(8, buf, size, R, C, R, C, M, 1, 4, 2, &rd, err, sizeof err) < 0 &&
              strstr(err, "unknown features"));
    /* nor one of format 15 the 6-tap filter, which it reads without */
    if (sharp)
        CHECK(pnmf_model_read_version(15, buf, size, R, C, R, C, M, 1, 4, 2, &rd, err, sizeof err) < 0 &&
              strstr(err, "unknown features"));
    else if (subpel)
        CHECK(pnmf_model_read_version(15, buf, size, R, C, R, C, M, 1, 4, 2, &rd, err, sizeof err) == 0 &&
              (pnmf_model_free(&rd), 1));
    pnmf_free(buf);
    double sse = 0;
    const uint8_t *dec = &De[0][0];
    for (size_t q = 0; q < M * n; q++) {
        const int d = (int)src[q] - dec[q];
        sse += d * d;
    }
    return sse;
}

static void test_window(void)
{
    uint8_t *src = malloc((size_t)M * R * C);
    make_pan(src);
    int frac_on = 0, frac_off = 0, frac_sharp = 0;
    PnmfWindowModel a, b, c;
    CHECK(pnmf_model_alloc(&a, R, C, R, C, M, 1, 0) == 0);
    CHECK(pnmf_model_alloc(&b, R, C, R, C, M, 1, 0) == 0);
    CHECK(pnmf_model_alloc(&c, R, C, R, C, M, 1, 0) == 0);
    const double sse_on = code_pan(&a, src, 1, 0, &frac_on);
    const double sse_off = code_pan(&b, src, 0, 0, &frac_off);
    /* the 6-tap filter: the decoder follows it from the payload alone */
    code_pan(&c, src, 1, 1, &frac_sharp);
    CHECK_MSG(frac_sharp > 0, "no fractional vector under the 6-tap filter (%zu vectors)", c.res.nmv);
    pnmf_model_free(&c);
    CHECK_MSG(frac_on > 0, "no fractional vector on a fractional pan (%zu vectors)", a.res.nmv);
    /* the pan is fractional: quarter samples predict it better for the
     * same step (fewer levels or less error) */
    CHECK_MSG(a.res.nlev < b.res.nlev || sse_on < sse_off, "levels %zu vs %zu, sse %.0f vs %.0f", a.res.nlev,
              b.res.nlev, sse_on, sse_off);

    /* vectors at the bound: 256 quarter samples is read, 257 refused */
    PnmfResidual *r = &a.res;
    CHECK(r->nmv > 0);
    const int16_t keep = r->mv[0];
    uint8_t *buf = NULL;
    size_t size = 0;
    PnmfWindowModel rd;
    char err[200] = "";
    for (int v = 255; v <= 258; v++) {
        r->mv[0] = (int16_t)v;
        CHECK(pnmf_model_write(&a, &buf, &size) == 0);
        const int ret = pnmf_model_read(buf, size, R, C, R, C, M, 1, 4, 2, &rd, err, sizeof err);
        if (v <= PNMF_RES_QPEL_MAX_MV) {
            CHECK_MSG(ret == 0, "vector %d: %s", v, err);
            if (!ret) pnmf_model_free(&rd);
        } else {
            CHECK_MSG(ret == PNMF_ERR_CORRUPT && strstr(err, "vector out of range"), "vector %d: %d %s", v, ret, err);
        }
        pnmf_free(buf);
        buf = NULL;
    }
    /* without bit 6 the bound is 64 samples */
    a.res.subpel = 0;
    r->mv[0] = PNMF_RES_MAX_MV + 1;
    CHECK(pnmf_model_write(&a, &buf, &size) == 0);
    CHECK(pnmf_model_read(buf, size, R, C, R, C, M, 1, 4, 2, &rd, err, sizeof err) == PNMF_ERR_CORRUPT &&
          strstr(err, "vector out of range"));
    pnmf_free(buf);
    /* with it, the same number is 16.25 samples */
    a.res.subpel = 1;
    CHECK(pnmf_model_write(&a, &buf, &size) == 0);
    CHECK(pnmf_model_read(buf, size, R, C, R, C, M, 1, 4, 2, &rd, err, sizeof err) == 0);
    pnmf_model_free(&rd);
    pnmf_free(buf);
    r->mv[0] = keep;
    pnmf_model_free(&a);
    pnmf_model_free(&b);

    /* the probe: a fractional pan pays, the same pan by whole samples
     * (pixel-exact motion) does not */
    double gain, exact;
    CHECK(pnmf_residual_subpel_pays(src, M, (size_t)R * C, R, C, &gain, &exact) == 1);
    CHECK(gain > 0.03 && exact == 0);
    for (int j = 0; j < M; j++)
        for (int y = 0; y < R; y++)
            for (int x = 0; x < C; x++) src[((size_t)j * R + y) * C + x] = pan_sample(0, y - j, x - 2 * j);
    CHECK(pnmf_residual_subpel_pays(src, M, (size_t)R * C, R, C, &gain, &exact) == 0);
    CHECK(exact > 0.5);
    free(src);
}

/* Bit 6 needs a residual layer. */
static void test_flags(void)
{
    PnmfWindowModel md, rd;
    CHECK(pnmf_model_alloc(&md, R, C, R, C, 2, 1, 0) == 0);
    CHECK(pnmf_residual_alloc(&md.res, 2, R, C, 64, 64) == 0);
    md.res.subpel = 1;
    uint8_t *buf = NULL;
    size_t size = 0;
    char err[200] = "";
    CHECK(pnmf_model_write(&md, &buf, &size) == 0);
    CHECK(buf[0] == (PNMF_FLAG_RESIDUAL | PNMF_FLAG_SUBPEL));
    CHECK_MSG(pnmf_model_read(buf, size, R, C, R, C, 2, 1, 4, 2, &rd, err, sizeof err) == 0, "%s", err);
    pnmf_model_free(&rd);
    buf[0] = PNMF_FLAG_SUBPEL;
    CHECK(pnmf_model_read(buf, size, R, C, R, C, 2, 1, 4, 2, &rd, err, sizeof err) == PNMF_ERR_CORRUPT &&
          strstr(err, "without a residual layer"));
    pnmf_free(buf);
    /* bit 20 (the flags' varint, 7 bits a byte: bit 20 is bit 6 of the
     * third byte) needs bit 6 */
    md.res.sharp = 1;
    CHECK(pnmf_model_write(&md, &buf, &size) == 0);
    CHECK(buf[0] == (0x80 | PNMF_FLAG_RESIDUAL | PNMF_FLAG_SUBPEL) && buf[1] == 0x80 && buf[2] == 0x40);
    CHECK_MSG(pnmf_model_read(buf, size, R, C, R, C, 2, 1, 4, 2, &rd, err, sizeof err) == 0, "%s", err);
    CHECK(rd.res.sharp == 1);
    pnmf_model_free(&rd);
    buf[0] &= (uint8_t)~PNMF_FLAG_SUBPEL;
    CHECK_MSG(pnmf_model_read(buf, size, R, C, R, C, 2, 1, 4, 2, &rd, err, sizeof err) == PNMF_ERR_CORRUPT &&
                  strstr(err, "sharp interpolation without sub-pixel vectors"),
              "%s", err);
    pnmf_free(buf);
    pnmf_model_free(&md);
}

/* ---- the warp (window flags bit 23, format 20) ------------------------- */

/* Frame 1 of a window whose blocks all take the previous prediction, under
 * warps of every kind (zoom, turn, shear, offsets, the bounds' extremes)
 * and global vectors, by either filter, on a frame whose edge blocks are
 * clipped: the decoder's samples against the field in the format's words,
 * each block's vector from its centre, then Q() or Q6() at it. */
static unsigned wrs = 4242; /* its own numbers: the encoder's tests below keep their clips */
static unsigned wurn(unsigned n) { wrs = wrs * 1103515245u + 12345u; return ((wrs >> 8) & 0xFFFFFF) % n; }

static void test_warp_field(void)
{
    enum { WR = 37, WC = 53 };
    static uint8_t ref0[WR * WC], P[WR * WC], D[WR * WC];
    for (int i = 0; i < WR * WC; i++) ref0[i] = (uint8_t)wurn(256), P[i] = 0;
    F = ref0, FR = WR, FC = WC;
    const uint8_t *refs[PNMF_RES_REFS];
    for (int t = 0; t < PNMF_RES_REFS; t++) refs[t] = ref0;
    for (int trial = 0; trial < 48; trial++) {
        PnmfResidual r;
        memset(&r, 0, sizeof r);
        CHECK(pnmf_residual_alloc(&r, 2, WR, WC, 64, 64) == 0);
        r.mv = pnmf_calloc(2, sizeof(int16_t)), r.mvref = pnmf_calloc(1, 1), r.lev = pnmf_calloc(1, sizeof(int16_t));
        CHECK(r.mv && r.mvref && r.lev);
        r.subpel = 1, r.warp = 1, r.sharp = trial & 1;
        const int nb = r.bx * r.by;
        for (int b = 0; b < nb; b++) r.modes[nb + b] = PNMF_RES_PREVIOUS;
        int32_t *w = r.gw + PNMF_RES_WARP_N;
        for (int i = 0; i < PNMF_RES_WARP_N; i++) {
            const int lim = i % 3 ? PNMF_RES_WARP_MAX_S : PNMF_RES_WARP_MAX_O;
            /* the first trials at the bounds, both signs; the others anywhere within */
            w[i] = trial < 8 ? ((trial >> 1) + i) % 2 ? lim : -lim : (int32_t)wurn(2 * lim + 1) - lim;
        }
        r.gmv[2] = (int16_t)(trial < 8 ? (trial & 2 ? 64 : -64) : (int)wurn(9) - 4);
        r.gmv[3] = (int16_t)(trial < 8 ? (trial & 4 ? 64 : -64) : (int)wurn(9) - 4);
        pnmf_residual_frame(&r, 1, P, P, refs, D);
        int bad = 0;
        for (int y0 = 0; y0 < WR; y0 += 8)
            for (int x0 = 0; x0 < WC; x0 += 8) {
                const int y1 = y0 + 8 < WR ? y0 + 8 : WR, x1 = x0 + 8 < WC ? x0 + 8 : WC;
                /* twice the block centre's offset from the frame's */
                const long py = y0 + y1 - WR, px = x0 + x1 - WC;
                const long ny = w[0] + w[1] * px + w[2] * py + 16384, nx = w[3] + w[4] * px + w[5] * py + 16384;
                const int vy = 4 * r.gmv[2] + (int)((ny - ((ny % 32768) + 32768) % 32768) / 32768);
                const int vx = 4 * r.gmv[3] + (int)((nx - ((nx % 32768) + 32768) % 32768) / 32768);
                for (int y = y0; y < y1; y++)
                    for (int x = x0; x < x1; x++)
                        bad += D[y * WC + x] != (r.sharp ? Q6(4 * y + vy, 4 * x + vx) : Q(4 * y + vy, 4 * x + vx));
            }
        CHECK_MSG(!bad, "warp (%d %d %d, %d %d %d), global (%d, %d), %s: %d samples differ", w[0], w[1], w[2], w[3],
                  w[4], w[5], r.gmv[2], r.gmv[3], r.sharp ? "6-tap" : "bilinear", bad);
        pnmf_residual_free(&r);
    }
}

/* The warps through a payload: read back as written; no bit 23 where every
 * warp is zero; refused without bit 6, in a payload of format 19, and past
 * the bounds of a slope or an offset. */
static void test_warp_flags(void)
{
    PnmfWindowModel md, rd;
    char err[200] = "";
    uint8_t *buf = NULL;
    size_t size = 0;
    CHECK(pnmf_model_alloc(&md, R, C, R, C, 3, 1, 0) == 0);
    CHECK(pnmf_residual_alloc(&md.res, 3, R, C, 64, 64) == 0);
    md.res.subpel = 1, md.res.warp = 1;
    const int nb = md.res.bx * md.res.by;
    for (int b = 0; b < 2 * nb; b++) md.res.modes[nb + b] = PNMF_RES_PREVIOUS;
    CHECK(pnmf_model_write(&md, &buf, &size) == 0);
    CHECK_MSG(pnmf_model_read(buf, size, R, C, R, C, 3, 1, 4, 2, &rd, err, sizeof err) == 0, "%s", err);
    CHECK(!rd.res.warp);
    pnmf_model_free(&rd), pnmf_free(buf);
    static const int32_t wv[2][PNMF_RES_WARP_N] = { { -700, 310, -5, 65536, -4096, 4096 },
                                                    { 1200, 0, -5, -65536, 4096, -4096 } };
    memcpy(md.res.gw + PNMF_RES_WARP_N, wv, sizeof wv);
    md.res.gmv[2] = 3, md.res.gmv[5] = -2;
    CHECK(pnmf_model_write(&md, &buf, &size) == 0);
    CHECK_MSG(pnmf_model_read(buf, size, R, C, R, C, 3, 1, 4, 2, &rd, err, sizeof err) == 0, "%s", err);
    CHECK(rd.res.warp && !memcmp(rd.res.gw, md.res.gw, 3 * PNMF_RES_WARP_N * sizeof(int32_t)) &&
          rd.res.gmv[2] == 3 && rd.res.gmv[5] == -2);
    pnmf_model_free(&rd);
    CHECK(pnmf_model_read_version(19, buf, size, R, C, R, C, 3, 1, 4, 2, &rd, err, sizeof err) == PNMF_ERR_CORRUPT &&
          strstr(err, "unknown features"));
    buf[0] &= (uint8_t)~PNMF_FLAG_SUBPEL;
    CHECK_MSG(pnmf_model_read(buf, size, R, C, R, C, 3, 1, 4, 2, &rd, err, sizeof err) == PNMF_ERR_CORRUPT &&
                  strstr(err, "a warp without sub-pixel vectors"),
              "%s", err);
    pnmf_free(buf);
    for (int i = 0; i < 2; i++) { /* a slope, then an offset, one past its bound */
        md.res.gw[2 * PNMF_RES_WARP_N + 4 - 4 * i] = i ? PNMF_RES_WARP_MAX_O + 1 : PNMF_RES_WARP_MAX_S + 1;
        CHECK(pnmf_model_write(&md, &buf, &size) == 0);
        CHECK_MSG(pnmf_model_read(buf, size, R, C, R, C, 3, 1, 4, 2, &rd, err, sizeof err) == PNMF_ERR_CORRUPT &&
                      strstr(err, "frame 2: warp out of range"),
                  "%s", err);
        pnmf_free(buf);
        memcpy(md.res.gw + PNMF_RES_WARP_N, wv, sizeof wv);
    }
    pnmf_model_free(&md);
}

/* ---- the encoder's choices --------------------------------------------- */

enum { ER = 48, EC = 64, EM = 12 };

/* Line art: bars of two gray levels drawn at 4 times the resolution,
 * moved by (2, 3) quarter samples a frame and averaged down 4 x 4, as a
 * renderer antialiases text that moves. */
static void make_art(uint8_t *f)
{
    enum { HR = 4 * ER + 4 * 2 * EM, HC = 4 * EC + 4 * 3 * EM };
    static uint8_t hi[HR][HC];
    memset(hi, 40, sizeof hi);
    for (int b = 0; b < 160; b++) {
        const int y = (int)urn(HR - 24), x = (int)urn(HC - 24), len = 8 + (int)urn(16), thick = 3 + (int)urn(4);
        for (int i = 0; i < (b & 1 ? len : thick); i++)
            for (int k = 0; k < (b & 1 ? thick : len); k++) hi[y + i][x + k] = 220;
    }
    for (int j = 0; j < EM; j++)
        for (int y = 0; y < ER; y++)
            for (int x = 0; x < EC; x++) {
                int s = 8;
                for (int i = 0; i < 4; i++)
                    for (int k = 0; k < 4; k++) s += hi[4 * y + 2 * j + i][4 * x + 3 * j + k];
                f[((size_t)j * ER + y) * EC + x] = (uint8_t)(s / 16);
            }
}

/* A camera's view: a smooth pattern panned by fractions, grain on every
 * frame. */
static void make_grain(uint8_t *f)
{
    for (int j = 0; j < EM; j++)
        for (int y = 0; y < ER; y++)
            for (int x = 0; x < EC; x++)
                f[((size_t)j * ER + y) * EC + x] = (uint8_t)clip(pan_sample(j, y, x) + (int)urn(25) - 12);
}

/* A render: the smooth pattern panned by fractions on the left, a flat
 * floor on the right that a box crosses by whole samples. */
static void make_render(uint8_t *f)
{
    for (int j = 0; j < EM; j++)
        for (int y = 0; y < ER; y++)
            for (int x = 0; x < EC; x++) {
                int v = x < 32 ? pan_sample(j, y, x) : 90;
                const int bx = x - (32 + 2 * j), by = y - 16;
                if (bx >= 0 && bx < 16 && by >= 0 && by < 20) v = 150 + 7 * ((bx * 3 + by * 5) % 11);
                f[((size_t)j * ER + y) * EC + x] = (uint8_t)v;
            }
}

/* Window 0's flags of the clip encoded at -q 35 with -k 0. */
static uint64_t window_flags(const char *dir, const char *name, const uint8_t *frames)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    PnmfEncSettings s;
    pnmf_enc_default_settings(&s);
    s.components = 0, s.window = EM, s.threads = 1, s.quality = 35;
    PnmfEncStats st;
    test_encode_file(path, &s, EC, ER, EM, frames, &st);
    FILE *in = fopen(path, "rb");
    PnmfInfo *info = NULL;
    PnmfInfoWindow w;
    memset(&w, 0, sizeof w);
    CHECK(in && pnmf_info_open(&info, in) == 0 && pnmf_info_next_window(info, &w, 0) == 1);
    pnmf_info_close(&info);
    if (in) fclose(in);
    remove(path);
    return w.flags;
}

/* The 6-tap filter where its trial finds it cheaper: moving line art
 * takes it, a grainy camera pan keeps the bilinear filter; a render with
 * more whole-sample matches than the probe allows, but a large gain on
 * the rest, takes quarter samples. */
static void test_encoder(const char *dir)
{
    uint8_t *f = malloc((size_t)EM * ER * EC);
    make_art(f);
    uint64_t fl = window_flags(dir, "test_subpel_art.pnmf", f);
    CHECK_MSG((fl & PNMF_FLAG_SUBPEL) && (fl & PNMF_FLAG_SHARP), "line art: window flags 0x%llx", (unsigned long long)fl);
    make_grain(f);
    fl = window_flags(dir, "test_subpel_grain.pnmf", f);
    CHECK_MSG((fl & PNMF_FLAG_SUBPEL) && !(fl & PNMF_FLAG_SHARP), "grain: window flags 0x%llx", (unsigned long long)fl);
    make_render(f);
    double gain, exact;
    /* past the probe's share of exact matches, within the wider one */
    CHECK(pnmf_residual_subpel_pays(f, EM, (size_t)ER * EC, ER, EC, &gain, &exact) == 0);
    CHECK_MSG(exact > PNMF_SUBPEL_MAX_EXACT && exact <= PNMF_SUBPEL_WIDE_EXACT && gain >= PNMF_SUBPEL_WIDE_GAIN,
              "render: gain %.3f, exact %.3f", gain, exact);
    fl = window_flags(dir, "test_subpel_render.pnmf", f);
    CHECK_MSG(fl & PNMF_FLAG_SUBPEL, "render: window flags 0x%llx", (unsigned long long)fl);
    free(f);
}

/* A camera that zooms in by 2 % a frame on a fine pattern (sampled
 * exactly at every frame's scale), and a still picture of the same pattern
 * with a screen in it whose picture scrolls by 3/4 of a sample a frame:
 * both have sub-pixel motion (window flags bit 6); the first takes the warp
 * (bit 23) and decodes to the squared error the encoder measured; the
 * second, whose one moving part the fit leaves off, does not take it. */
static void test_warp_encoder(const char *dir)
{
    enum { ZR = 96, ZC = 128, ZM = 10 };
    uint8_t *f = malloc((size_t)ZM * ZR * ZC);
    CHECK(f != NULL);
    if (!f) return;
    for (int still = 0; still < 2; still++) {
        for (int j = 0; j < ZM; j++)
            for (int y = 0; y < ZR; y++)
                for (int x = 0; x < ZC; x++) {
                    const double k = still ? 1.0 : pow(1.02, j), u = (y - 47.5) / k, v = (x - 63.5) / k;
                    double g = 128 + 45 * sin(0.9 * u + 0.3 * v) * cos(0.7 * v) + 25 * sin(0.45 * u - 0.8 * v);
                    if (still && y >= 24 && y < 56 && x >= 16 && x < 56) /* a screen in the picture, scrolling */
                        g = 90 + 60 * sin(0.8 * (x - 0.75 * j)) * cos(0.6 * y);
                    f[((size_t)j * ZR + y) * ZC + x] = (uint8_t)clip((int)lrint(g));
                }
        char path[512];
        snprintf(path, sizeof path, "%s/test_subpel_warp%d.pnmf", dir, still);
        PnmfEncSettings set;
        test_window_settings(&set, ZM, 35);
        PnmfEncStats st;
        test_encode_file(path, &set, ZC, ZR, ZM, f, &st);
        PnmfHeader h;
        PnmfWindowModel md;
        int sp = -1, wa = -1;
        if (test_first_window(path, ZR, ZC, &h, &md) == 0) {
            sp = md.res.subpel, wa = md.res.warp;
            pnmf_model_free(&md);
        }
        CHECK_MSG(sp == 1 && wa == !still, "%s: window flags bit 6 %d, bit 23 %d", still ? "still picture" : "zoom",
                  sp, wa);
        const double e = test_decoded_sse(path, f, ZC, ZR, ZM);
        remove(path);
        CHECK_MSG(fabs(e - st.sse) < 0.5, "decoded squared error %.0f, the encoder's %.0f", e, st.sse);
    }
    free(f);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    test_interpolation();
    test_window();
    test_flags();
    test_warp_field();
    test_warp_flags();
    test_encoder(dir);
    test_warp_encoder(dir);
    return test_summary("test_subpel");
}
