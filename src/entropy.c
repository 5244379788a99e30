/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * zstd, and nothing else. Compression makes one frame with the content size
 * and the content checksum in it; the result depends only on the input and
 * the level (single-threaded, no dictionary), so encodes are repeatable.
 *
 * Decompression treats its input as hostile: the frame header is checked by
 * hand (RFC 8878, section 3.1.1.1) for the flags the container requires,
 * the claimed content size is never used to size anything, output grows in
 * steps up to a hard cap, the window size a frame may ask for is bounded,
 * and the frame must end exactly at the end of the input.
 */
#include <stdint.h>
#include <string.h>

#include <zstd.h>
#include <zstd_errors.h>

#include "entropy.h"
#include "internal.h"
#include "tuning.h"

/* A frame may not ask the decoder for a window larger than 2^27 bytes (128
 * MiB): the compressor's levels up to 22 stay at or below this. */
#define ENTROPY_WINDOW_LOG_MAX 27
/* First output allocation; the buffer doubles from there. */
#define ENTROPY_FIRST_ALLOC    (64 * 1024)
#define ENTROPY_FIRST_RATIO    32

#define ZSTD_FRAME_MAGIC 0xFD2FB528u

int pnmf_entropy_compress(const uint8_t *src, size_t src_size, int level,
                          uint8_t **dst, size_t *dst_size)
{
    return pnmf_entropy_compress_prefix(src, src_size, NULL, 0, level, dst, dst_size);
}

/* The searches of compress_frame(): the level's own, or with the level's
 * window (so the same frame header) one of two cheap ones. */
enum { SEARCH_LEVEL, SEARCH_DFAST, SEARCH_ULTRA_LIGHT };

/* One frame of src at level, with the match search search names. */
static int compress_frame(const uint8_t *src, size_t src_size, const uint8_t *prefix, size_t prefix_size,
                          int level, int search, uint8_t **dst, size_t *dst_size)
{
    *dst = NULL;
    *dst_size = 0;
    if (!src && src_size) return PNMF_ERR_ARG;

    ZSTD_CCtx *cctx = ZSTD_createCCtx();
    if (!cctx) return PNMF_ERR_NOMEM;
    int ret = 0;
    uint8_t *buf = NULL;
    if (ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1)) ||
        (search != SEARCH_LEVEL &&
         (ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_strategy,
                                              search == SEARCH_DFAST ? ZSTD_dfast : ZSTD_btultra2)) ||
          ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_hashLog, PNMF_ZSTD_PROBE_HASH_LOG)) ||
          ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_chainLog, PNMF_ZSTD_PROBE_HASH_LOG)) ||
          ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_searchLog, 1)) ||
          ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_minMatch, PNMF_ZSTD_PROBE_MIN_MATCH)) ||
          ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_targetLength, PNMF_ZSTD_PROBE_MIN_MATCH)))) ||
        (prefix && ZSTD_isError(ZSTD_CCtx_refPrefix(cctx, prefix, prefix_size)))) {
        ret = PNMF_ERR_ARG;
        goto end;
    }
    const size_t bound = ZSTD_compressBound(src_size);
    if (ZSTD_isError(bound) || !bound) {
        ret = PNMF_ERR_LIMIT;
        goto end;
    }
    buf = pnmf_malloc(bound);
    if (!buf) {
        ret = PNMF_ERR_NOMEM;
        goto end;
    }
    /* ZSTD_compress2() knows src_size up front, so it is written into the
     * frame header (content size on). */
    const size_t n = ZSTD_compress2(cctx, buf, bound, src ? src : (const uint8_t *)"", src_size);
    if (ZSTD_isError(n)) {
        ret = ZSTD_getErrorCode(n) == ZSTD_error_memory_allocation ? PNMF_ERR_NOMEM
                                                                   : PNMF_ERR_ARG;
        goto end;
    }
    *dst = buf;
    *dst_size = n;
    buf = NULL;
end:
    pnmf_free(buf);
    ZSTD_freeCCtx(cctx);
    return ret;
}

/* The frame header fields the container cares about (RFC 8878 3.1.1.1). */
typedef struct FrameInfo {
    uint64_t content_size;
    size_t header_size;
} FrameInfo;

/* Check the frame header by hand: a zstd frame (not a skippable one) with
 * the content checksum flag, the content size field and no dictionary. */
static int parse_frame_header(const uint8_t *src, size_t src_size, FrameInfo *fi)
{
    if (src_size < 5 || pnmf_rl32(src) != ZSTD_FRAME_MAGIC) return PNMF_ERR_CORRUPT;
    const unsigned fhd = src[4];
    const unsigned fcs_flag = fhd >> 6;
    const unsigned single_segment = (fhd >> 5) & 1;
    const unsigned reserved = (fhd >> 3) & 1;
    const unsigned checksum = (fhd >> 2) & 1;
    const unsigned dict_flag = fhd & 3;
    if (reserved || !checksum || dict_flag) return PNMF_ERR_CORRUPT;
    if (!fcs_flag && !single_segment) return PNMF_ERR_CORRUPT; /* no content size */
    size_t pos = 5 + !single_segment; /* Window_Descriptor unless single segment */
    static const uint8_t fcs_bytes[4] = { 1, 2, 4, 8 };
    const size_t nb = fcs_bytes[fcs_flag];
    if (src_size < pos + nb) return PNMF_ERR_CORRUPT;
    fi->header_size = pos + nb;
    switch (nb) {
    case 1: fi->content_size = src[pos]; break;
    case 2: fi->content_size = pnmf_rl16(src + pos) + 256; break;
    case 4: fi->content_size = pnmf_rl32(src + pos); break;
    default: fi->content_size = pnmf_rl64(src + pos); break;
    }
    return 0;
}

int pnmf_entropy_frame_raw(const uint8_t *z, size_t n)
{
    FrameInfo fi;
    if (parse_frame_header(z, n, &fi) < 0) return 0;
    size_t pos = fi.header_size;
    for (;;) {
        if (n - 4 < 3 || pos > n - 4 - 3) return 0;
        const uint32_t bh = z[pos] | (uint32_t)z[pos + 1] << 8 | (uint32_t)z[pos + 2] << 16;
        if ((bh >> 1) & 3) return 0; /* an RLE or a compressed block */
        pos += 3;
        if ((bh >> 3) > n - 4 - pos) return 0;
        pos += bh >> 3;
        if (bh & 1) return pos == n - 4; /* the last block, then the checksum */
    }
}

int pnmf_entropy_compress_full(const uint8_t *src, size_t src_size, const uint8_t *prefix, size_t prefix_size,
                               int level, uint8_t **dst, size_t *dst_size)
{
    return compress_frame(src, src_size, prefix, prefix_size, level, SEARCH_LEVEL, dst, dst_size);
}

int pnmf_entropy_compress_prefix(const uint8_t *src, size_t src_size, const uint8_t *prefix,
                                 size_t prefix_size, int level, uint8_t **dst, size_t *dst_size)
{
    return pnmf_entropy_compress_probed(src, src_size, prefix, prefix_size, level, 1, dst, dst_size);
}

int pnmf_entropy_compress_probed(const uint8_t *src, size_t src_size, const uint8_t *prefix, size_t prefix_size,
                                 int level, int light, uint8_t **dst, size_t *dst_size)
{
    /* Range-coded payloads do not shrink. A double-fast search that
     * shrinks a block shows that the level's will too; one that stores
     * every block raw is asked again of a light search of the level's
     * strategy (btultra2: the same least gain for which a block is stored
     * compressed, 1/256 where the double-fast search's is 1/64), unless
     * light is 0. Where that stores every block raw too, its frame is the
     * result: the frame of the level's full search wherever that finds no
     * more (same window, same header, raw blocks; so on every payload of
     * the development set and in tests/test_container.c), at a third of
     * its time. */
    if (level >= PNMF_ZSTD_PROBE_FROM && src_size >= PNMF_ZSTD_PROBE_MIN_SIZE) {
        for (int search = SEARCH_DFAST; search <= SEARCH_ULTRA_LIGHT; search++) {
            const int ret = compress_frame(src, src_size, prefix, prefix_size, level, search, dst, dst_size);
            if (ret < 0) return ret;
            const int raw = pnmf_entropy_frame_raw(*dst, *dst_size);
            if (raw && (search == SEARCH_ULTRA_LIGHT || !light)) return 0;
            pnmf_free(*dst);
            *dst = NULL;
            if (!raw) break;
        }
    }
    return compress_frame(src, src_size, prefix, prefix_size, level, SEARCH_LEVEL, dst, dst_size);
}

int pnmf_entropy_decompress(const uint8_t *src, size_t src_size, size_t max_size,
                            uint8_t **dst, size_t *dst_size)
{
    return pnmf_entropy_decompress_prefix(src, src_size, NULL, 0, max_size, dst, dst_size);
}

int pnmf_entropy_decompress_prefix(const uint8_t *src, size_t src_size, const uint8_t *prefix,
                                   size_t prefix_size, size_t max_size, uint8_t **dst, size_t *dst_size)
{
    void *ctx = NULL;
    const int ret = pnmf_entropy_decompress_ctx(&ctx, src, src_size, prefix, prefix_size, max_size, dst, dst_size);
    pnmf_entropy_ctx_free(&ctx);
    return ret;
}

void pnmf_entropy_ctx_free(void **ctx)
{
    ZSTD_freeDCtx(*ctx);
    *ctx = NULL;
}

int pnmf_entropy_decompress_ctx(void **ctx, const uint8_t *src, size_t src_size, const uint8_t *prefix,
                                size_t prefix_size, size_t max_size, uint8_t **dst, size_t *dst_size)
{
    *dst = NULL;
    *dst_size = 0;
    if (!src && src_size) return PNMF_ERR_ARG;

    FrameInfo fi;
    PNMF_CHECK(parse_frame_header(src, src_size, &fi));
    /* A frame that claims more than the cap fails now; one that claims less
     * and produces more fails below. */
    if (fi.content_size > max_size) return PNMF_ERR_LIMIT;

    /* one context for all the windows of a reader: created once, reset
     * before each frame (creating one a window cost the decoder its
     * workspace's allocation and first touch every window) */
    ZSTD_DCtx *dctx = *ctx;
    if (!dctx && !(dctx = *ctx = ZSTD_createDCtx())) return PNMF_ERR_NOMEM;
    int ret = 0;
    uint8_t *buf = NULL;
    if (ZSTD_isError(ZSTD_DCtx_reset(dctx, ZSTD_reset_session_and_parameters)) ||
        ZSTD_isError(ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax, ENTROPY_WINDOW_LOG_MAX)) ||
        (prefix && ZSTD_isError(ZSTD_DCtx_refPrefix(dctx, prefix, prefix_size)))) {
        ret = PNMF_ERR_ARG;
        goto end;
    }

    /* The output may reach max_size + 1 bytes: one byte more than the cap is
     * how an oversized frame shows itself. The first allocation is the size
     * the frame claims, unless that is more than ENTROPY_FIRST_RATIO times
     * the frame (a claim a few bytes can make, which would then cost its
     * memory at once); the buffer doubles from there. */
    const size_t hard_cap = max_size < SIZE_MAX ? max_size + 1 : SIZE_MAX;
    uint64_t want = fi.content_size;
    if (want / ENTROPY_FIRST_RATIO > src_size) want = (uint64_t)src_size * ENTROPY_FIRST_RATIO;
    if (want < ENTROPY_FIRST_ALLOC) want = ENTROPY_FIRST_ALLOC;
    size_t cap = hard_cap < want ? hard_cap : (size_t)want;
    buf = pnmf_malloc(cap);
    if (!buf) {
        ret = PNMF_ERR_NOMEM;
        goto end;
    }
    ZSTD_inBuffer in = { src, src_size, 0 };
    ZSTD_outBuffer out = { buf, cap, 0 };
    for (;;) {
        const size_t r = ZSTD_decompressStream(dctx, &out, &in);
        if (ZSTD_isError(r)) {
            switch (ZSTD_getErrorCode(r)) {
            case ZSTD_error_memory_allocation: ret = PNMF_ERR_NOMEM; break;
            case ZSTD_error_frameParameter_windowTooLarge: ret = PNMF_ERR_LIMIT; break;
            default: ret = PNMF_ERR_CORRUPT; break;
            }
            goto end;
        }
        if (out.pos > max_size) {
            ret = PNMF_ERR_LIMIT;
            goto end;
        }
        if (r == 0) break; /* frame decoded, checksum verified, all flushed */
        if (out.pos == out.size) {
            /* Full: grow (zstd may hold more), doubling up to the hard cap. */
            const size_t ncap = cap > hard_cap / 2 ? hard_cap : cap * 2;
            if (ncap == cap) {
                ret = PNMF_ERR_LIMIT;
                goto end;
            }
            uint8_t *nbuf = pnmf_realloc(buf, ncap);
            if (!nbuf) {
                ret = PNMF_ERR_NOMEM;
                goto end;
            }
            buf = nbuf;
            cap = ncap;
            out.dst = buf;
            out.size = cap;
        } else if (in.pos == in.size) {
            /* Everything flushed, all input used, frame unfinished. */
            ret = PNMF_ERR_CORRUPT;
            goto end;
        }
    }
    /* Exactly one frame, nothing after it, and the size it claimed. */
    if (in.pos != in.size || out.pos != fi.content_size) {
        ret = PNMF_ERR_CORRUPT;
        goto end;
    }
    /* Returned in a buffer of exactly its size (one byte for an empty
     * payload), so a parser's over-read leaves the allocation (tests/fuzz). */
    if (out.pos != cap) {
        uint8_t *exact = pnmf_realloc(buf, out.pos);
        if (!exact) {
            ret = PNMF_ERR_NOMEM;
            goto end;
        }
        buf = exact;
    }
    *dst = buf;
    *dst_size = out.pos;
    buf = NULL;
end:
    pnmf_free(buf);
    return ret;
}
