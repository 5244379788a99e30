/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Weighted prediction (window flags bit 18, format 14; docs/format.md,
 * "Weighted prediction"): the weighting against its definition written
 * out here, at every sample value and across the whole range of gains and
 * offsets; a window whose frames have weights goes through the payload and
 * decodes as the same window over references weighted by that definition;
 * the reader refuses a gain or an offset out of range and bit 18 in a
 * payload of format 13; the encoder finds the weights of a fade, and a
 * fade goes through the encoder and the decoder to the frames the encoder
 * measured, in one window of its own, not cut as a new scene.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "enc_internal.h"
#include "encode_file.h"
#include "internal.h"
#include "model_write.h"
#include "residual.h"
#include "test.h"

static unsigned rs = 777;
static unsigned urn(unsigned n) { rs = rs * 1103515245u + 12345u; return ((rs >> 8) & 0xFFFFFF) % n; }

/* ---- the definition ----------------------------------------------------- */

/* floor(a / b) for b > 0 */
static int fdiv(int a, int b) { return (a - ((a % b) + b) % b) / b; }

/* A reference sample v weighted with gain w and offset o: the nearest of
 * 0..255 to floor((v w + 32) / 64) + o. */
static int weigh(int v, int w, int o)
{
    const int s = fdiv(v * w + 32, 64) + o;
    return s < 0 ? 0 : s > 255 ? 255 : s;
}

static void test_definition(void)
{
    long bad = 0, checked = 0, clipped = 0;
    for (int w = 0; w <= PNMF_RES_WP_MAX_W; w++)
        for (int o = -PNMF_RES_WP_MAX_O; o <= PNMF_RES_WP_MAX_O; o += o < -250 || o > 250 ? 1 : 7)
            for (int v = 0; v < 256; v++) {
                const int want = weigh(v, w, o);
                bad += pnmf_residual_weigh(v, w, o) != want;
                clipped += want == 0 || want == 255;
                checked++;
            }
    CHECK_MSG(bad == 0, "%ld of %ld weightings differ from the definition", bad, checked);
    CHECK(clipped > checked / 10 && clipped < checked * 9 / 10); /* both ends met, and the range between */
    /* a whole frame, at random gains and offsets */
    enum { N = 1000 };
    uint8_t R[N], out[N];
    for (int q = 0; q < N; q++) R[q] = (uint8_t)(q % 9 ? urn(256) : 255 * urn(2));
    for (int k = 0; k < 50; k++) {
        const int w = (int)urn(PNMF_RES_WP_MAX_W + 1), o = (int)urn(2 * PNMF_RES_WP_MAX_O + 1) - PNMF_RES_WP_MAX_O;
        pnmf_residual_weigh_frame(R, N, w, o, out);
        int same = 1;
        for (int q = 0; q < N; q++) same &= out[q] == weigh(R[q], w, o);
        CHECK_MSG(same, "the frame weighted with (%d, %d) differs", w, o);
    }
    /* the unit gain and no offset leave every sample as it is */
    for (int v = 0; v < 256; v++) CHECK(pnmf_residual_weigh(v, PNMF_RES_WP_ONE, 0) == v);
}

/* ---- a window of weighted frames through the payload -------------------- */

enum { R = 24, C = 40, M = 5 };

/* A window over a flat model: in frames 1.. each block the previous frame
 * (mode 1), the motion prediction (mode 2), or shifted with a random vector
 * in quarter samples and reference, half of those with a second
 * hypothesis, a third of all coded with pixel levels; frames 1.. with
 * random weights, frame 2's the unit gain and no offset. */
static void make_window(PnmfWindowModel *md)
{
    CHECK(pnmf_model_alloc(md, R, C, R, C, M, 1, 0) == 0);
    PnmfResidual *r = &md->res;
    CHECK(pnmf_residual_alloc(r, M, R, C, 64, 64) == 0);
    r->subpel = 1;
    const size_t nb = (size_t)r->bx * r->by;
    r->mv = malloc(2 * M * nb * sizeof(int16_t)), r->mvref = malloc(M * nb);
    r->mvbi = malloc(M * nb), r->mv2 = malloc(2 * M * nb * sizeof(int16_t));
    r->mvcap = 2 * M * nb;
    r->lev = malloc(M * nb * 64 * sizeof(int16_t)), r->cap = M * nb * 64;
    for (int j = 0; j < M; j++) {
        r->mvstart[j] = r->nmv;
        r->start[j] = r->nlev;
        for (size_t b = 0; j && b < nb; b++) {
            const unsigned k = urn(4);
            uint8_t mode = k == 0 ? PNMF_RES_PREVIOUS : k == 1 ? PNMF_RES_MOTION : PNMF_RES_SHIFTED;
            if (mode == PNMF_RES_SHIFTED) {
                const size_t q = r->nmv++;
                r->mvref[q] = (uint8_t)urn((unsigned)j);
                r->mv[2 * q] = (int16_t)((int)urn(81) - 40), r->mv[2 * q + 1] = (int16_t)((int)urn(81) - 40);
                r->mvbi[q] = urn(2) ? (uint8_t)(1 + urn((unsigned)j)) : 0;
                r->mv2[2 * q] = (int16_t)((int)urn(81) - 40), r->mv2[2 * q + 1] = (int16_t)((int)urn(81) - 40);
            }
            if (urn(3) == 0) {
                mode |= PNMF_RES_CODED;
                int y0, y1, x0, x1;
                pnmf_residual_block(r->bx, R, C, b, &y0, &y1, &x0, &x1);
                for (int q = 0; q < (y1 - y0) * (x1 - x0); q++) r->lev[r->nlev++] = (int16_t)((int)urn(9) - 4);
            }
            r->modes[j * nb + b] = mode;
        }
        if (j) {
            r->wp[2 * j] = (int16_t)(j == 2 ? PNMF_RES_WP_ONE : (int)urn(PNMF_RES_WP_MAX_W + 1));
            r->wp[2 * j + 1] = (int16_t)(j == 2 ? 0 : (int)urn(2 * PNMF_RES_WP_MAX_O + 1) - PNMF_RES_WP_MAX_O);
        }
    }
    r->mvstart[M] = r->nmv;
    r->start[M] = r->nlev;
    r->rc_levels = 1;
}

/* The window's frames as the decoder makes them: its references as
 * pnmf_residual_frame_refs() gives them (those the frame reads weighted). */
static void decode(const PnmfResidual *r, const uint8_t *P, uint8_t (*D)[R * C])
{
    static uint8_t scratch[PNMF_RES_REFS][R * C];
    uint8_t *ws[PNMF_RES_REFS];
    for (int t = 0; t < PNMF_RES_REFS; t++) ws[t] = scratch[t];
    for (int j = 0; j < M; j++) {
        const uint8_t *ref[PNMF_RES_REFS], *rf[PNMF_RES_REFS];
        for (int t = 0; t < PNMF_RES_REFS; t++) ref[t] = j - 1 - t >= 0 ? D[j - 1 - t] : NULL;
        pnmf_residual_frame(r, j, P, P, pnmf_residual_frame_refs(r, j, ref, -1, ws, rf), D[j]);
    }
}

/* The same frames by the definition: every reference of frame j weighted
 * sample by sample with frame j's weights, the predictions unchanged. */
static void decode_defined(const PnmfResidual *r, const uint8_t *P, uint8_t (*D)[R * C])
{
    static uint8_t wref[PNMF_RES_REFS][R * C];
    for (int j = 0; j < M; j++) {
        const uint8_t *ref[PNMF_RES_REFS];
        for (int t = 0; t < PNMF_RES_REFS; t++) {
            ref[t] = NULL;
            if (j - 1 - t < 0) continue;
            for (int q = 0; q < R * C; q++) wref[t][q] = (uint8_t)weigh(D[j - 1 - t][q], r->wp[2 * j], r->wp[2 * j + 1]);
            ref[t] = wref[t];
        }
        pnmf_residual_frame(r, j, P, P, ref, D[j]);
    }
}

static void test_window(void)
{
    static uint8_t P[R * C], Dw[M][R * C], Dd[M][R * C], Dr[M][R * C], Du[M][R * C];
    for (int q = 0; q < R * C; q++) P[q] = (uint8_t)(40 + urn(180));
    PnmfWindowModel md, rd;
    make_window(&md);
    PnmfResidual *r = &md.res;
    decode(r, P, Dw);
    decode_defined(r, P, Dd);
    CHECK_MSG(!memcmp(Dw, Dd, sizeof Dw), "the weighted window differs from the definition");
    /* and the weights matter: without them the frames differ */
    int16_t keep[2 * M];
    memcpy(keep, r->wp, sizeof keep);
    for (int j = 0; j < M; j++) r->wp[2 * j] = PNMF_RES_WP_ONE, r->wp[2 * j + 1] = 0;
    decode(r, P, Du);
    CHECK(memcmp(Du[1], Dw[1], sizeof Du[1]) && !memcmp(Du[0], Dw[0], sizeof Du[0]));
    /* no weights anywhere: no bit 18 */
    uint8_t *buf = NULL;
    size_t size = 0;
    char err[200] = "";
    CHECK(pnmf_model_write(&md, &buf, &size) == 0);
    CHECK_MSG(pnmf_model_read(buf, size, R, C, R, C, M, 1, 4, 2, &rd, err, sizeof err) == 0, "%s", err);
    CHECK(!rd.res.wp_on);
    pnmf_model_free(&rd);
    pnmf_free(buf);
    memcpy(r->wp, keep, sizeof keep);
    /* through the payload: the same weights, the same frames */
    CHECK(pnmf_model_write(&md, &buf, &size) == 0);
    CHECK_MSG(pnmf_model_read(buf, size, R, C, R, C, M, 1, 4, 2, &rd, err, sizeof err) == 0, "%s", err);
    CHECK(rd.res.wp_on && !memcmp(rd.res.wp, r->wp, sizeof keep));
    decode(&rd.res, P, Dr);
    CHECK_MSG(!memcmp(Dw, Dr, sizeof Dw), "the window read back decodes to other frames");
    pnmf_model_free(&rd);
    /* a payload of format 13 cannot say it */
    CHECK(pnmf_model_read_version(13, buf, size, R, C, R, C, M, 1, 4, 2, &rd, err, sizeof err) == PNMF_ERR_CORRUPT &&
          strstr(err, "unknown features"));
    pnmf_free(buf);
    /* the bounds: read at the bound, refused past it */
    const struct { int at, v, ok; } edge[] = {
        { 2, 0, 1 }, { 2, PNMF_RES_WP_MAX_W, 1 }, { 2, PNMF_RES_WP_MAX_W + 1, 0 }, { 2, -1, 0 },
        { 3, PNMF_RES_WP_MAX_O, 1 }, { 3, -PNMF_RES_WP_MAX_O, 1 }, { 3, PNMF_RES_WP_MAX_O + 1, 0 },
        { 3, -PNMF_RES_WP_MAX_O - 1, 0 }, { 7, 1000, 0 },
    };
    for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
        const int16_t kept = r->wp[edge[i].at];
        r->wp[edge[i].at] = (int16_t)edge[i].v;
        CHECK(pnmf_model_write(&md, &buf, &size) == 0);
        const int ret = pnmf_model_read(buf, size, R, C, R, C, M, 1, 4, 2, &rd, err, sizeof err);
        if (edge[i].ok) {
            CHECK_MSG(ret == 0, "%d %s", edge[i].v, err);
            if (!ret) pnmf_model_free(&rd);
        } else {
            CHECK_MSG(ret == PNMF_ERR_CORRUPT && strstr(err, "weights out of range"), "%d: %d %s", edge[i].v, ret, err);
        }
        pnmf_free(buf);
        r->wp[edge[i].at] = kept;
    }
    /* a key window's frame 0 has no references and no weights: none written, none read */
    r->wp[0] = 100, r->wp[1] = 7;
    CHECK(pnmf_model_write(&md, &buf, &size) == 0);
    CHECK_MSG(pnmf_model_read(buf, size, R, C, R, C, M, 1, 4, 2, &rd, err, sizeof err) == 0, "%s", err);
    CHECK(rd.res.wp[0] == PNMF_RES_WP_ONE && rd.res.wp[1] == 0 && !memcmp(rd.res.wp + 2, r->wp + 2, 2 * (M - 1) * sizeof(int16_t)));
    pnmf_model_free(&rd);
    pnmf_free(buf);
    pnmf_model_free(&md);
}

/* Bit 18 needs a residual layer. */
static void test_flags(void)
{
    /* a payload without one: flags 0x40000 (varint 80 80 10), k = 1, an empty component, its counts */
    PnmfWindowModel md, rd;
    CHECK(pnmf_model_alloc(&md, R, C, R, C, 2, 1, 0) == 0);
    uint8_t *buf = NULL;
    size_t size = 0;
    char err[200] = "";
    CHECK(pnmf_model_write(&md, &buf, &size) == 0);
    CHECK(size >= 1 && buf[0] == 0);
    uint8_t *b2 = malloc(size + 2);
    b2[0] = 0x80, b2[1] = 0x80, b2[2] = 0x10;
    memcpy(b2 + 3, buf + 1, size - 1);
    CHECK(pnmf_model_read(b2, size + 2, R, C, R, C, 2, 1, 4, 2, &rd, err, sizeof err) == PNMF_ERR_CORRUPT &&
          strstr(err, "weighted prediction without a residual layer"));
    free(b2);
    pnmf_free(buf);
    pnmf_model_free(&md);
}

/* ---- the encoder --------------------------------------------------------- */

enum { ER = 48, EC = 64, EM = 20 };

/* A textured pattern panned by a sample every other frame, its brightness
 * fading to 30 % over the frames after the third. */
static uint8_t fade_sample(int j, int y, int x)
{
    const double g = j < 3 ? 1 : 1 - 0.7 * (j - 3) / (EM - 4);
    const double xx = x - 0.5 * j;
    const double v = 120 + 60 * sin(y * 0.31) * cos(xx * 0.23) + 30 * sin((xx + 2 * y) * 0.11) + 0.6 * (double)urn(5);
    return (uint8_t)lrint(fmin(255, fmax(0, g * v)));
}

static void test_estimate(void)
{
    enum { N = ER * EC };
    static uint8_t a[N], b[N], c[N];
    for (int q = 0; q < N; q++) a[q] = (uint8_t)(30 + urn(200));
    /* a frame that is its reference weighted: those weights, or ones as good */
    pnmf_residual_weigh_frame(a, N, 48, 11, b);
    int16_t wo[2];
    pnmf_enc_estimate_weights(b, a, N, wo);
    pnmf_residual_weigh_frame(a, N, wo[0], wo[1], c);
    CHECK_MSG(!memcmp(b, c, N), "estimated (%d, %d) for (48, 11)", wo[0], wo[1]);
    /* a fade of a frame two fifths black (a gain keeps black, so most
     * samples stay equal unweighted): the weights still found */
    for (int q = 0; q < N; q++) a[q] = q % 5 < 2 ? 0 : (uint8_t)(30 + urn(200));
    pnmf_residual_weigh_frame(a, N, 48, 0, b);
    pnmf_enc_estimate_weights(b, a, N, wo);
    pnmf_residual_weigh_frame(a, N, wo[0], wo[1], c);
    CHECK_MSG(!memcmp(b, c, N), "estimated (%d, %d) for (48, 0) over black", wo[0], wo[1]);
    /* a frame that is its reference with noise: no weights */
    for (int q = 0; q < N; q++) b[q] = (uint8_t)(a[q] + (int)urn(5) - 2);
    pnmf_enc_estimate_weights(b, a, N, wo);
    CHECK_MSG(wo[0] == PNMF_RES_WP_ONE && wo[1] == 0, "estimated (%d, %d) for noise", wo[0], wo[1]);
    /* a capture: dark textured sprites on white, the next frame the same
     * with the sprites moved past their size (the uncovered places, white,
     * are nearer to the dark ones brightened; most samples unchanged): no
     * weights, which would spoil the copies of the sprites' samples */
    for (int q = 0; q < N; q++) a[q] = 255;
    for (int k = 0; k < 4; k++) {
        const int y0 = (int)urn(ER - 12), x0 = (int)urn(EC - 26);
        for (int y = y0; y < y0 + 12; y++)
            for (int x = x0; x < x0 + 12; x++) a[y * EC + x] = (uint8_t)(40 + urn(20));
    }
    for (int q = 0; q < N; q++) b[q] = 255;
    for (int y = 0; y < ER; y++) /* the sprites moved 14 samples right: their places uncovered */
        for (int x = 14; x < EC; x++) b[y * EC + x] = a[y * EC + x - 14];
    pnmf_enc_estimate_weights(b, a, N, wo);
    CHECK_MSG(wo[0] == PNMF_RES_WP_ONE && wo[1] == 0, "estimated (%d, %d) for a capture", wo[0], wo[1]);
}

static void test_encoder(const char *dir)
{
    static uint8_t f[EM][ER * EC], d[ER * EC];
    for (int j = 0; j < EM; j++)
        for (int y = 0; y < ER; y++)
            for (int x = 0; x < EC; x++) f[j][y * EC + x] = fade_sample(j, y, x);
    char path[512];
    snprintf(path, sizeof path, "%s/test_wpred.pnmf", dir);
    PnmfEncSettings s;
    pnmf_enc_default_settings(&s);
    s.components = 0, s.window = EM, s.threads = 1, s.quality = 35;
    PnmfEncStats st;
    test_encode_file(path, &s, EC, ER, EM, f[0], &st);
    CHECK_MSG(st.scene_cuts == 0 && st.windows == 1, "a fade cut: %d cuts, %d windows", st.scene_cuts, st.windows);
    /* the file needs a reader of format 14: a window has weights (16
     * where its trial takes the 6-tap filter too, 21 where a coding of it
     * has its pixel levels in the sample-context stream) */
    FILE *in = fopen(path, "rb");
    uint8_t head[12];
    CHECK(in && fread(head, 1, sizeof head, in) == sizeof head);
    CHECK_MSG(head[8] == PNMF_FORMAT_VERSION &&
                  (head[10] == 14 || head[10] == 16 || head[10] == 18 || head[10] == 19 || head[10] == 21),
              "writer %d, min reader %d", head[8], head[10]);
    rewind(in);
    PnmfDecoder *dec = NULL;
    CHECK(pnmf_dec_open(&dec, in) == 0);
    double sse = 0;
    for (int j = 0; j < EM; j++) {
        CHECK(pnmf_dec_read_frame(dec, d, EC) == 0);
        for (int q = 0; q < ER * EC; q++) sse += ((double)f[j][q] - d[q]) * ((double)f[j][q] - d[q]);
    }
    pnmf_dec_close(&dec);
    fclose(in);
    CHECK_MSG(fabs(sse - st.sse) < 0.5, "decoded sse %.0f, the encoder measured %.0f", sse, st.sse);
    remove(path);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    test_definition();
    test_window();
    test_flags();
    test_estimate();
    test_encoder(dir);
    return test_summary("test_wpred");
}
