/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A clip encoded through the public API into a file, its first window's
 * model read back and its frames decoded: the tests of whole encodes
 * (settings, frame sizes and clips of their own) share them.
 */
#ifndef PNMF_TEST_ENCODE_FILE_H
#define PNMF_TEST_ENCODE_FILE_H

#include <stdio.h>
#include <stdlib.h>

#include "container.h"
#include "model.h"
#include "pnmf/pnmf.h"
#include "test.h"

/* The default settings but for one window of m frames at -q quality, on
 * one thread, without a model or scene cuts: a clip that is one window. */
static inline void test_window_settings(PnmfEncSettings *s, int m, int quality)
{
    pnmf_enc_default_settings(s);
    s->components = 0, s->window = m, s->threads = 1, s->quality = quality, s->scene_cut = 0;
}

/* The m frames of w x h samples at frames (each w * h after the one
 * before) encoded with settings s at 20 fps into path; the encoder's
 * statistics into *st. */
static inline void test_encode_file(const char *path, const PnmfEncSettings *s, int w, int h, int m,
                                    const uint8_t *frames, PnmfEncStats *st)
{
    FILE *out = fopen(path, "wb");
    PnmfEncoder *enc = NULL;
    CHECK(out && pnmf_enc_open(&enc, s, w, h, 20, 1, out) == 0);
    for (int j = 0; j < m; j++) CHECK(pnmf_enc_push_frame(enc, frames + (size_t)j * w * h, w) == 0);
    CHECK(pnmf_enc_finish(enc) == 0);
    pnmf_enc_get_stats(enc, st);
    pnmf_enc_close(&enc);
    if (out) fclose(out);
}

/* The file's header into *hd and its first window's model, the coded
 * frame rows x cols, into *md (pnmf_model_free() after). 0, or -1 when
 * the file, the window or the model cannot be read (a failed check). */
static inline int test_first_window(const char *path, int rows, int cols, PnmfHeader *hd, PnmfWindowModel *md)
{
    FILE *in = fopen(path, "rb");
    PnmfContainerReader *cr = NULL;
    char err[200] = "";
    int ret = -1;
    CHECK_MSG(in && pnmf_container_reader_open(&cr, in, err, sizeof err) == 0, "%s: %s", path, err);
    if (cr) {
        const uint8_t *pl;
        size_t size;
        uint32_t first, count;
        *hd = *pnmf_container_reader_header(cr);
        CHECK_MSG(pnmf_container_read_window(cr, &pl, &size, &first, &count, err, sizeof err) == 1, "%s: %s", path,
                  err);
        if (!err[0]) {
            ret = pnmf_model_read(pl, size, rows, cols, rows, cols, (int)count, hd->components, hd->w_step,
                                  hd->r_step, md, err, sizeof err) == 0 ? 0 : -1;
            CHECK_MSG(ret == 0, "%s: %s", path, err);
        }
        pnmf_container_reader_close(&cr);
    }
    if (in) fclose(in);
    return ret;
}

/* The squared error of the file's m frames of w x h decoded against
 * frames (each w * h after the one before). */
static inline double test_decoded_sse(const char *path, const uint8_t *frames, int w, int h, int m)
{
    FILE *in = fopen(path, "rb");
    PnmfDecoder *dec = NULL;
    CHECK(in && pnmf_dec_open(&dec, in) == 0);
    uint8_t *g = malloc((size_t)w * h);
    double sse = 0;
    for (int j = 0; dec && g && j < m; j++) {
        CHECK(pnmf_dec_read_frame(dec, g, w) == 0);
        const uint8_t *f = frames + (size_t)j * w * h;
        for (size_t i = 0; i < (size_t)w * h; i++) sse += (double)(g[i] - f[i]) * (g[i] - f[i]);
    }
    free(g);
    pnmf_dec_close(&dec);
    if (in) fclose(in);
    return sse;
}

#endif /* PNMF_TEST_ENCODE_FILE_H */
