/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * zstd as a lossless baseline of pnmf-compare --lossless: the clip's raw
 * gray frames, one after the other, compressed as one zstd frame at level
 * 19 with long-distance matching (which finds the repeats a frame or more
 * apart that a video codec finds by motion), through libzstd's advanced
 * API, then decompressed and compared with the source.
 */
#include <stdlib.h>

#include <zstd.h>

#include "cli_util.h"
#include "compare.h"
#include "measure/metrics.h"

#define ZSTD_BASELINE_LEVEL 19 /* zstd -19, its strongest level without --ultra */

static int zstd_available(const CmpCodec *c, char *why, size_t len)
{
    (void)c;
    (void)why;
    (void)len;
    return 0;
}

static void zstd_fail(CmpPoint *pt, const char *stage, size_t code)
{
    pt->ok = 0;
    snprintf(pt->err, sizeof(pt->err), "zstd %s: %s", stage, ZSTD_getErrorName(code));
}

static void zstd_run(const CmpCodec *c, const CmpClip *clip, const CmpOptions *o, int param, CmpPoint *pt)
{
    (void)c;
    pt->param = param;
    const size_t fsize = (size_t)clip->width * clip->height, raw = fsize * (size_t)clip->frames;
    const size_t bound = ZSTD_compressBound(raw);
    uint8_t *packed = malloc(bound), *back = malloc(raw ? raw : 1);
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_DCtx *dc = ZSTD_createDCtx();
    if (!packed || !back || !cc || !dc) {
        snprintf(pt->err, sizeof(pt->err), "zstd: out of memory");
        goto end;
    }
    const double t0 = cli_now();
    size_t r = ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, ZSTD_BASELINE_LEVEL);
    if (!ZSTD_isError(r)) r = ZSTD_CCtx_setParameter(cc, ZSTD_c_enableLongDistanceMatching, 1);
    /* libzstd built without threads refuses workers: then one thread */
    if (!ZSTD_isError(r) && o->threads > 1 && ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_nbWorkers, o->threads)))
        ZSTD_CCtx_setParameter(cc, ZSTD_c_nbWorkers, 0);
    if (!ZSTD_isError(r)) r = ZSTD_compress2(cc, packed, bound, clip->pixels, raw);
    pt->enc_seconds = cli_now() - t0;
    if (ZSTD_isError(r)) {
        zstd_fail(pt, "compression", r);
        goto end;
    }
    cmp_mark_encoded(pt);
    pt->bytes = r;

    /* long-distance matching makes a window of up to 2^27 bytes, within
     * what a decoder accepts by default */
    const CmpClock t1 = cmp_clock_now();
    const size_t got = ZSTD_decompressDCtx(dc, back, raw, packed, r);
    CmpClock dt = { 0, 0 };
    cmp_clock_add(&dt, t1);
    pt->dec_seconds = dt.wall;
    pt->dec_cpu_seconds = dt.cpu;
    if (ZSTD_isError(got)) {
        zstd_fail(pt, "decompression", got);
        goto end;
    }
    if (got != raw) {
        snprintf(pt->err, sizeof(pt->err), "zstd decompression: %zu bytes of %zu", got, raw);
        goto end;
    }
    CmpScore score;
    cmp_score_init(&score);
    for (int i = 0; i < clip->frames; i++)
        if (cmp_score_frame(&score, cmp_clip_frame(clip, i), clip->width, back + fsize * (size_t)i, clip->width,
                            clip->width, clip->height) < 0) {
            snprintf(pt->err, sizeof(pt->err), "zstd: out of memory");
            goto end;
        }
    cmp_point_scored(pt, &score);
end:
    ZSTD_freeCCtx(cc);
    ZSTD_freeDCtx(dc);
    free(packed);
    free(back);
}

const CmpCodec cmp_zstd_codec = {
    "zstd", "libzstd level 19, long-distance matching, the raw gray frames in one zstd frame", "-", 0, 0, 0, 0,
    zstd_available, zstd_run, NULL,
};
