/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Coding order (window flags bit 19, format 15; docs/format.md, "Coding
 * order"): the order against its definition written out here, for every
 * window length and group; the cascade's frames are the groups' anchors;
 * a window with the bit goes through the payload, and the reader refuses
 * it without a cascade, with groups out of 2..16, and in a payload of
 * format 14; the encoder's probe takes a textured pan and nothing else;
 * a textured pan goes through the encoder and the decoder to the frames
 * the encoder measured, shown in their order, and every frame decodes
 * the same after a seek to it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "enc_order.h"
#include "encode_file.h"
#include "pnmf/pnmf.h"
#include "internal.h"
#include "model_write.h"
#include "residual.h"
#include "test.h"

static unsigned rs = 4242;
static unsigned urn(unsigned n) { rs = rs * 1103515245u + 12345u; return ((rs >> 8) & 0xFFFFFF) % n; }

/* ---- the definition ----------------------------------------------------- */

/* The frames of a window of m in coding order, groups of g: frame 0, then
 * for each run of g frames after it (the last run shorter) its last frame,
 * the anchor, and then the others in their order. */
static void defined_order(int m, int g, int *shown, int *anchor)
{
    int c = 0;
    anchor[c] = 0, shown[c++] = 0;
    for (int s = 1; s < m; s += g) {
        const int e = s + g - 1 < m - 1 ? s + g - 1 : m - 1;
        anchor[c] = 1, shown[c++] = e;
        for (int d = s; d < e; d++) anchor[c] = 0, shown[c++] = d;
    }
}

static void test_definition(void)
{
    int shown[80], anchor[80];
    long bad = 0, checked = 0;
    for (int g = 2; g <= PNMF_RES_MAX_GROUP; g++)
        for (int m = 1; m <= 70; m++) {
            defined_order(m, g, shown, anchor);
            PnmfResidual r;
            memset(&r, 0, sizeof r);
            r.m = m, r.casc_period = g, r.order = 1;
            for (int c = 0; c < m; c++) {
                bad += pnmf_order_shown(c, m, g) != shown[c];
                bad += pnmf_order_coded(shown[c], m, g) != c;
                bad += pnmf_residual_coded(&r, shown[c]) != c;
                bad += pnmf_residual_casc_frame(&r, c) != anchor[c]; /* the cascade's frames: the anchors */
                checked++;
            }
        }
    CHECK_MSG(bad == 0, "%ld of %ld positions differ from the definition", bad, checked);
    /* no order: the frames as shown, every casc_period-th in the cascade */
    PnmfResidual r;
    memset(&r, 0, sizeof r);
    r.m = 20, r.casc_period = 4;
    for (int d = 0; d < 20; d++) CHECK(pnmf_residual_coded(&r, d) == d);
    CHECK(pnmf_residual_casc_frame(&r, 8) && !pnmf_residual_casc_frame(&r, 9));
    r.order = 1;
    CHECK(!pnmf_residual_casc_frame(&r, 8) && pnmf_residual_casc_frame(&r, 9));
}

/* ---- a window through the payload ----------------------------------------- */

enum { R = 24, C = 40, M = 11 };

/* A window over a flat model whose later frames copy the frame before,
 * with a cascade of period g and the coding order. */
static void make_window(PnmfWindowModel *md, int g)
{
    CHECK(pnmf_model_alloc(md, R, C, R, C, M, 1, 0) == 0);
    PnmfResidual *r = &md->res;
    CHECK(pnmf_residual_alloc(r, M, R, C, 64, 32) == 0);
    const size_t nb = (size_t)r->bx * r->by;
    for (int j = 0; j <= M; j++) r->mvstart[j] = 0, r->start[j] = 0;
    for (int j = 1; j < M; j++)
        for (size_t b = 0; b < nb; b++) r->modes[j * nb + b] = PNMF_RES_PREVIOUS;
    r->rc_levels = 1;
    r->casc_period = g, r->casc_step16 = 40, r->casc_qp = pnmf_residual_qp(40);
    r->order = 1;
}

static void test_window(void)
{
    PnmfWindowModel md, rd;
    uint8_t *buf = NULL;
    size_t size = 0;
    char err[200] = "";
    make_window(&md, 4);
    CHECK(pnmf_model_write(&md, &buf, &size) == 0);
    CHECK_MSG(pnmf_model_read(buf, size, R, C, R, C, M, 1, 4, 2, &rd, err, sizeof err) == 0, "%s", err);
    CHECK(rd.res.order == 1 && rd.res.casc_period == 4 && rd.res.casc_step16 == 40);
    CHECK(pnmf_residual_frame_step(&rd.res, 1) == 40 && pnmf_residual_frame_step(&rd.res, 2) == 64 &&
          pnmf_residual_frame_step(&rd.res, 5) == 40 && pnmf_residual_frame_step(&rd.res, 4) == 64);
    pnmf_model_free(&rd);
    /* a payload of format 14 cannot say it */
    CHECK(pnmf_model_read_version(14, buf, size, R, C, R, C, M, 1, 4, 2, &rd, err, sizeof err) == PNMF_ERR_CORRUPT &&
          strstr(err, "unknown features"));
    pnmf_free(buf);
    /* groups of 2..16, a reference back at most: refused outside */
    const struct { int g, ok; } edge[] = { { 2, 1 }, { 16, 1 }, { 1, 0 }, { 17, 0 }, { 60, 0 } };
    for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
        md.res.casc_period = edge[i].g;
        CHECK(pnmf_model_write(&md, &buf, &size) == 0);
        const int ret = pnmf_model_read(buf, size, R, C, R, C, M, 1, 4, 2, &rd, err, sizeof err);
        if (edge[i].ok) {
            CHECK_MSG(ret == 0, "groups of %d: %s", edge[i].g, err);
            if (!ret) pnmf_model_free(&rd);
        } else {
            CHECK_MSG(ret == PNMF_ERR_CORRUPT && strstr(err, "coding order: groups"), "groups of %d: %d %s",
                      edge[i].g, ret, err);
        }
        pnmf_free(buf);
    }
    /* no cascade: bit 19 alone */
    md.res.casc_period = 0;
    CHECK(pnmf_model_write(&md, &buf, &size) == 0);
    CHECK(pnmf_model_read(buf, size, R, C, R, C, M, 1, 4, 2, &rd, err, sizeof err) == PNMF_ERR_CORRUPT &&
          strstr(err, "a coding order without a step cascade"));
    pnmf_free(buf);
    pnmf_model_free(&md);
}

/* ---- the encoder's probe and a pan through the codec --------------------- */

enum { ER = 48, EC = 64, EM = 30 };

/* A drawing with texture, seen through a window that moves down a sample
 * a frame: frame j shows row y + j of it. smooth: no texture. */
static uint8_t picture(int y, int x, int smooth)
{
    const double v = 120 + 50 * sin(y * 0.13) * cos(x * 0.17);
    if (smooth) return (uint8_t)lrint(v);
    unsigned h = (unsigned)(y * 7919 + x * 104729);
    h = (h ^ (h >> 13)) * 1274126177u;
    return (uint8_t)lrint(v + (double)((h >> 16) % 24) - 12);
}

static void make_pan(uint8_t (*f)[ER * EC], int smooth, int still, int noise)
{
    for (int j = 0; j < EM; j++)
        for (int y = 0; y < ER; y++)
            for (int x = 0; x < EC; x++)
                f[j][y * EC + x] = (uint8_t)(picture(y + (still ? 0 : j), x, smooth) + (noise ? urn(5) : 0));
}

static void test_probe(void)
{
    static uint8_t f[EM][ER * EC];
    make_pan(f, 0, 0, 0);
    CHECK_MSG(pnmf_enc_order_pan(f[0], EM, ER * EC, ER, EC), "a textured pan not taken");
    make_pan(f, 1, 0, 0);
    CHECK_MSG(!pnmf_enc_order_pan(f[0], EM, ER * EC, ER, EC), "a smooth pan taken");
    make_pan(f, 0, 1, 0);
    CHECK_MSG(!pnmf_enc_order_pan(f[0], EM, ER * EC, ER, EC), "a still picture taken");
    make_pan(f, 0, 0, 1);
    CHECK_MSG(!pnmf_enc_order_pan(f[0], EM, ER * EC, ER, EC), "a noisy pan taken");
    /* the frames put in coding order: frame c holds the frame shown pnmf_order_shown(c) */
    static uint8_t o[EM][ER * EC], tmp[ER * EC];
    make_pan(f, 0, 0, 0);
    memcpy(o, f, sizeof o);
    pnmf_enc_order_frames(o[0], EM, ER * EC, 4, tmp);
    int same = 1;
    for (int c = 0; c < EM; c++) same &= !memcmp(o[c], f[pnmf_order_shown(c, EM, 4)], ER * EC);
    CHECK_MSG(same, "the frames in coding order differ");
}

static int decode_all(const char *path, uint8_t (*d)[ER * EC])
{
    FILE *in = fopen(path, "rb");
    PnmfDecoder *dec = NULL;
    int ok = in && pnmf_dec_open(&dec, in) == 0;
    for (int j = 0; ok && j < EM; j++) ok = pnmf_dec_read_frame(dec, d[j], EC) == 0;
    pnmf_dec_close(&dec);
    if (in) fclose(in);
    return ok;
}

static void test_encoder(const char *dir)
{
    static uint8_t f[EM][ER * EC], d[EM][ER * EC], s[ER * EC];
    make_pan(f, 0, 0, 0);
    char path[512];
    snprintf(path, sizeof path, "%s/test_order.pnmf", dir);
    PnmfEncSettings set;
    pnmf_enc_default_settings(&set);
    set.components = 0, set.window = EM, set.threads = 1, set.quality = 40;
    PnmfEncStats st;
    test_encode_file(path, &set, EC, ER, EM, f[0], &st);
    /* the file needs a reader of format 15: the window is coded out of order
     * (19 with the restoration filter, 21 where a coding of it has its
     * pixel levels in the sample-context stream) */
    FILE *in = fopen(path, "rb");
    uint8_t head[12];
    CHECK(in && fread(head, 1, sizeof head, in) == sizeof head);
    CHECK_MSG(head[8] == PNMF_FORMAT_VERSION && (head[10] == 15 || head[10] == 19 || head[10] == 21),
              "writer %d, min reader %d", head[8], head[10]);
    if (in) fclose(in);
    /* shown in their order: the error the encoder measured, and each frame
     * nearer to its own source than to its neighbours' */
    CHECK(decode_all(path, d));
    double sse = 0;
    int own = 1;
    for (int j = 0; j < EM; j++) {
        double e[3] = { 0, 0, 0 };
        for (int k = -1; k <= 1; k++)
            for (int q = 0; j + k >= 0 && j + k < EM && q < ER * EC; q++)
                e[k + 1] += ((double)f[j + k][q] - d[j][q]) * ((double)f[j + k][q] - d[j][q]);
        sse += e[1];
        own &= (j == 0 || e[1] * 4 < e[0]) && (j == EM - 1 || e[1] * 4 < e[2]);
    }
    CHECK_MSG(fabs(sse - st.sse) < 0.5, "decoded sse %.0f, the encoder measured %.0f", sse, st.sse);
    CHECK_MSG(own, "a frame shown out of its place");
    /* a seek to every frame decodes it the same */
    for (int k = 0; k < EM; k++) {
        in = fopen(path, "rb");
        PnmfDecoder *dec = NULL;
        int ok = in && pnmf_dec_open(&dec, in) == 0 && pnmf_dec_seek(dec, k) == 0 &&
                 pnmf_dec_read_frame(dec, s, EC) == 0;
        CHECK_MSG(ok && !memcmp(s, d[k], sizeof s), "frame %d after a seek", k);
        pnmf_dec_close(&dec);
        if (in) fclose(in);
    }
    remove(path);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    test_definition();
    test_window();
    test_probe();
    test_encoder(dir);
    return test_summary("test_order");
}
