/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Whether a clip is coded at half size (format 17, the header's `half`;
 * enc_internal.h, pnmf_enc_half_pays()). At coarse steps of large frames
 * the 8x8 blocks' modes and vectors are most of the bytes, and a frame
 * coded at half size and scaled up (upsample.h) reaches the same quality
 * for far fewer; at fine steps, or on sharp screen content and sprites,
 * the scaling's loss of detail costs more than it saves
 * (docs/measurements.md, "Half size"). A clip whose first frame looks
 * like a captured screen keeps its size; otherwise the first frames are coded both
 * ways, as the clip would be (a key window of those frames), each into
 * a temporary file, and decoded as a reader decodes them: at their size
 * at -q and at a coarser -q, at half size at a finer -q (so that -q keeps
 * about its quality either way, and a ladder of -q its order). Half size
 * is taken for the whole clip where its point (PSNR-Y against the frames
 * over the log of the bytes) lies PNMF_HALF_MARGIN above the line through
 * the two others.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "enc_internal.h"
#include "internal.h"
#include "io.h"
#include "residual.h"

/* The n frames coded with settings t into a temporary file, and decoded:
 * *bytes and *sse (against frames). */
static int code_and_measure(const PnmfEncSettings *t, int w, int h, int fps_num, int fps_den, const uint8_t *frames,
                            int n, size_t *bytes, double *sse, uint8_t *dec)
{
    FILE *f = tmpfile();
    if (!f) return PNMF_ERR_IO;
    PnmfIO io;
    pnmf_io_file_writer(&io, f);
    PnmfEncoder *e = NULL;
    int ret = pnmf_encoder_create(&e, t, w, h, fps_num, fps_den, &io);
    for (int i = 0; ret >= 0 && i < n; i++) ret = pnmf_encoder_push(e, frames + (size_t)i * w * h, w);
    if (ret >= 0) ret = pnmf_encoder_finish(e);
    pnmf_encoder_destroy(&e);
    const long size = ret >= 0 && !fflush(f) ? ftell(f) : -1;
    if (ret >= 0 && (size < 0 || fseek(f, 0, SEEK_SET))) ret = PNMF_ERR_IO;
    PnmfDecoder *d = NULL;
    if (ret >= 0) {
        PnmfDecSettings ds;
        pnmf_dec_default_settings(&ds);
        PnmfIO in;
        pnmf_io_file_reader(&in, f);
        ret = pnmf_decoder_create(&d, &ds, &in, NULL, 0);
    }
    double s = 0;
    for (int i = 0; ret >= 0 && i < n; i++) {
        ret = pnmf_decoder_read(d, dec, w);
        const uint8_t *src = frames + (size_t)i * w * h;
        for (size_t k = 0; ret >= 0 && k < (size_t)w * h; k++) s += (double)(src[k] - dec[k]) * (src[k] - dec[k]);
    }
    pnmf_decoder_destroy(&d);
    fclose(f);
    *bytes = size > 0 ? (size_t)size : 0;
    *sse = s;
    return ret < 0 ? ret : 0;
}

int pnmf_enc_half_quality(int q) { return q - PNMF_HALF_TRIAL_DQ > 1 ? q - PNMF_HALF_TRIAL_DQ : 1; }

int pnmf_enc_half_above(const size_t bytes[3], const double psnr[3])
{
    /* two full-size codings of the same bytes (the step pick took the
     * same step for both) tell no slope: half size must then beat the
     * first with fewer bytes and a higher PSNR */
    if (bytes[0] == bytes[1] || !bytes[0] || !bytes[1] || !bytes[2])
        return bytes[2] < bytes[0] && psnr[2] > psnr[0] + PNMF_HALF_MARGIN;
    /* the line tells nothing far below its two points: a half-size
     * point more than their span under the lower one has lost detail
     * the scaling cannot bring back (a zoom into the Mandelbrot set at
     * -q 35: 44.06 and 38.06 dB at its size, 26.95 at half size), and
     * -q would not keep its quality */
    const double lo = psnr[0] < psnr[1] ? psnr[0] : psnr[1];
    if (psnr[2] < lo - fabs(psnr[0] - psnr[1])) return 0;
    const double x0 = log((double)bytes[0]), x1 = log((double)bytes[1]), x2 = log((double)bytes[2]);
    return psnr[2] > psnr[1] + (x2 - x1) * (psnr[0] - psnr[1]) / (x0 - x1) + PNMF_HALF_MARGIN;
}

int pnmf_enc_half_pays(const PnmfEncSettings *s, int w, int h, int fps_num, int fps_den, const uint8_t *frames, int n,
                       int *half)
{
    *half = 0;
    /* a captured screen: sharp edges and flat colours, which half size
     * blurs; no trial */
    if (enc_frames_screen_like(frames, n, (size_t)w * h, h, w)) {
        pnmf_log(&s->logger, PNMF_LOG_DEBUG, "the first frames look like a captured screen: full size");
        return 0;
    }
    uint8_t *dec = pnmf_malloc_array((size_t)w, (size_t)h);
    if (!dec) return PNMF_ERR_NOMEM;
    PnmfEncSettings t = *s;
    t.window = n;
    t.time_base_num = t.time_base_den = 0, t.time_start = 0;
    memset(&t.logger, 0, sizeof(t.logger));
    /* without the restoration filter, which lifts the frames scaled up
     * most on the first frames it is fitted to, and would take half size
     * where the whole clip loses by it */
    t.restoration = 0;
    /* at their size at -q and at a coarser -q (a finer one at the
     * coarsest), at half size at the finer -q that half size codes at
     * (pnmf_enc_half_quality()) */
    const int q2 = s->quality + PNMF_HALF_TRIAL_DQ <= PNMF_MAX_QUALITY ? s->quality + PNMF_HALF_TRIAL_DQ
                                                                        : s->quality - PNMF_HALF_TRIAL_DQ;
    const int qs[3] = { s->quality, q2, pnmf_enc_half_quality(s->quality) }, hs[3] = { 0, 0, 1 };
    size_t bytes[3];
    double sse[3], p[3];
    int ret = 0;
    for (int k = 0; k < 3 && ret >= 0; k++) {
        t.half = hs[k];
        t.quality = qs[k];
        ret = code_and_measure(&t, w, h, fps_num, fps_den, frames, n, &bytes[k], &sse[k], dec);
        p[k] = 10 * log10(255.0 * 255.0 * n * w * h / (sse[k] > 1 ? sse[k] : 1));
    }
    pnmf_free(dec);
    if (ret < 0) return ret;
    *half = pnmf_enc_half_above(bytes, p);
    pnmf_log(&s->logger, PNMF_LOG_DEBUG,
             "the first %d frames: -q %d %zu bytes %.2f dB, -q %d %zu bytes %.2f dB, at half size %zu bytes %.2f dB: %s", n,
             qs[0], bytes[0], p[0], qs[1], bytes[1], p[1], bytes[2], p[2], *half ? "half size" : "full size");
    return 0;
}
