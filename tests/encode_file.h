/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A clip encoded through the public API into a file: the tests of
 * whole encodes (settings, frame sizes and clips of their own) share it.
 */
#ifndef PNMF_TEST_ENCODE_FILE_H
#define PNMF_TEST_ENCODE_FILE_H

#include <stdio.h>

#include "pnmf/pnmf.h"
#include "test.h"

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

#endif /* PNMF_TEST_ENCODE_FILE_H */
