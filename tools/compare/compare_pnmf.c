/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pnmf itself in pnmf-compare: encoded with libpnmf into a temporary file,
 * decoded from it with libpnmf, scored like every other codec. The byte
 * count is the whole .pnmf file, its header and index included.
 */
#include <stdlib.h>

#include "cli_util.h"
#include "compare.h"
#include "measure/metrics.h"

static int pnmf_available(const CmpCodec *c, char *why, size_t len)
{
    (void)c;
    (void)why;
    (void)len;
    return 0;
}

static void pnmf_fail(CmpPoint *pt, const char *stage, int err, const char *detail)
{
    pt->ok = 0;
    snprintf(pt->err, sizeof(pt->err), "pnmf %s: %s", stage, detail && *detail ? detail : pnmf_strerror(err));
}

static void pnmf_run(const CmpCodec *c, const CmpClip *clip, const CmpOptions *o, int q, CmpPoint *pt)
{
    PnmfEncSettings s = o->pnmf;
    if (c == &cmp_pnmf_k0_codec) s.components = 0; /* the residual layer alone: what the parts add */
    s.quality = q;
    s.threads = o->threads;
    /* a clock of one tick a frame: the file keeps frame times as pnmf-enc's
     * files do, so its bytes are those of a constant-rate clip's .pnmf */
    s.time_base_num = clip->fps_den, s.time_base_den = clip->fps_num;
    pt->param = q;
    PnmfEncoder *enc = NULL;
    PnmfDecoder *dec = NULL;
    uint8_t *buf = NULL;
    FILE *f = tmpfile();
    if (!f) {
        snprintf(pt->err, sizeof(pt->err), "pnmf: cannot create a temporary file");
        return;
    }
    const double t0 = cli_now();
    int ret = pnmf_enc_open(&enc, &s, clip->width, clip->height, clip->fps_num, clip->fps_den, f);
    for (int i = 0; ret >= 0 && i < clip->frames; i++)
        ret = pnmf_enc_push_frame(enc, cmp_clip_frame(clip, i), clip->width);
    if (ret >= 0) ret = pnmf_enc_finish(enc);
    if (ret >= 0 && fflush(f) != 0) ret = PNMF_ERR_IO;
    pt->enc_seconds = cli_now() - t0;
    if (ret < 0) {
        pnmf_fail(pt, "encoder", ret, enc ? pnmf_enc_errmsg(enc) : NULL);
        goto end;
    }
    cmp_mark_encoded(pt);
    PnmfEncStats st;
    pnmf_enc_get_stats(enc, &st);
    pnmf_enc_close(&enc);
    pt->bytes = st.bytes;

    rewind(f);
    if (!(buf = malloc((size_t)clip->width * clip->height))) {
        pnmf_fail(pt, "decoder", PNMF_ERR_NOMEM, NULL);
        goto end;
    }
    CmpScore score;
    cmp_score_init(&score);
    CmpClock dec_t = { 0, 0 }, t1 = cmp_clock_now();
    ret = pnmf_dec_open(&dec, f);
    cmp_clock_add(&dec_t, t1);
    if (ret < 0) {
        pnmf_fail(pt, "decoder", ret, dec ? pnmf_dec_errmsg(dec) : NULL);
        goto end;
    }
    for (;;) {
        t1 = cmp_clock_now();
        ret = pnmf_dec_read_frame(dec, buf, clip->width);
        cmp_clock_add(&dec_t, t1);
        if (ret == PNMF_ERR_EOF) break;
        if (ret < 0) {
            pnmf_fail(pt, "decoder", ret, pnmf_dec_errmsg(dec));
            goto end;
        }
        if (score.frames >= clip->frames) {
            snprintf(pt->err, sizeof(pt->err), "pnmf decoder: more frames than the %d encoded", clip->frames);
            goto end;
        }
        if (cmp_score_frame(&score, cmp_clip_frame(clip, score.frames), clip->width, buf, clip->width,
                            clip->width, clip->height) < 0) {
            pnmf_fail(pt, "decoder", PNMF_ERR_NOMEM, NULL);
            goto end;
        }
    }
    if (score.frames != clip->frames) {
        snprintf(pt->err, sizeof(pt->err), "pnmf decoder: %d frames of %d", score.frames, clip->frames);
        goto end;
    }
    pt->dec_seconds = dec_t.wall;
    pt->dec_cpu_seconds = dec_t.cpu;
    cmp_point_scored(pt, &score);
end:
    pnmf_enc_close(&enc);
    pnmf_dec_close(&dec);
    free(buf);
    fclose(f);
}

const CmpCodec cmp_pnmf_codec = {
    "pnmf", "libpnmf (pnmf-enc options as given)", "q", 0, PNMF_MAX_QUALITY, 16, 64, pnmf_available, pnmf_run, NULL,
};

/* Only when asked for (--codecs): pnmf's options with -k 0, no parts
 * model, so the model's worth is a BD-rate of the same run. */
const CmpCodec cmp_pnmf_k0_codec = {
    "pnmf-k0", "libpnmf with -k 0 (no parts model, other options as given)", "q", 0, PNMF_MAX_QUALITY, 16, 64,
    pnmf_available, pnmf_run, NULL,
};
