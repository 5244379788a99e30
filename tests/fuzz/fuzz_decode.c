/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: the container and the decoder, through the public API
 * only (include/pnmf/pnmf.h), the way pnmf-dec uses them.
 *
 * The input is a .pnmf file. It is read through a FILE made with fmemopen()
 * over the fuzzer's own buffer, so the reader sees a seekable file of known
 * size; container.c copies every chunk into a buffer of exactly its length
 * and entropy.c returns each window payload in a buffer of exactly its
 * size, so AddressSanitizer catches a read one byte past either. Every
 * frame is decoded into a buffer of exactly width * height bytes, up to a
 * budget of decoded pixels that keeps one input well under a second.
 *
 * Checksums stop a mutating fuzzer at the first byte it changes, so the
 * input is first put right, the way a careful attacker would: unless the
 * header's quality byte (informative only) is odd, the header CRC and every
 * chunk CRC are recomputed, and a window chunk whose data starts with
 * "RAW!" has the rest of its data compressed into a real zstd frame (its
 * index entry and the trailer are moved to match). Mutations of a raw
 * window thus reach the window payload parser (model.c) and the
 * reconstruction. The library itself is the production code: no checksum is
 * skipped in a fuzzing build.
 *
 * When bit 1 of that quality byte is set, the file is read through a stream
 * that cannot seek, as from a pipe: the reader then does not know the
 * file's size and takes its other path (buffers grown with the bytes
 * actually read), and a seek must fail cleanly.
 *
 * Invariants checked (abort() on failure, which libFuzzer reports):
 * - every failure is a known PNMF_ERR code with a one-line reason;
 * - once the decoder fails it keeps failing (no frames after an error);
 * - a frame reached by seeking equals the same frame decoded in order.
 */
#define _GNU_SOURCE /* fopencookie */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "container.h"
#include "entropy.h"
#include "internal.h"
#include "pnmf/pnmf.h"

/* Decoded pixels per input, at most (sum over frames of width * height). */
#define FUZZ_PIXEL_BUDGET (1u << 22)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_error(const PnmfDecoder *d, int ret)
{
    switch (ret) {
    case PNMF_ERR_ARG: case PNMF_ERR_NOMEM: case PNMF_ERR_IO: case PNMF_ERR_CORRUPT:
    case PNMF_ERR_VERSION: case PNMF_ERR_LIMIT:
        break;
    default:
        fprintf(stderr, "fuzz_decode: unexpected return %d\n", ret);
        abort();
    }
    const char *m = pnmf_dec_errmsg(d);
    if (!m || strchr(m, '\n') || (ret != PNMF_ERR_NOMEM && !*m)) {
        fprintf(stderr, "fuzz_decode: bad reason '%s' for %d\n", m ? m : "(null)", ret);
        abort();
    }
}

/* FNV-1a, to remember a frame without keeping it. */
static uint64_t hash(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325u;
    while (n--) h = (h ^ *p++) * 0x100000001b3u;
    return h;
}

/* ---- putting the input right ---- */

#define HEADER_MIN   64
#define QUALITY_BYTE 41
#define RAW_MARK     "RAW!"
#define MAX_CHUNKS   64

typedef struct Out {
    uint8_t *p;
    size_t n, cap;
} Out;

static void out_add(Out *o, const void *p, size_t n)
{
    if (o->n + n > o->cap) {
        o->cap = 2 * (o->n + n) + 256;
        if (!(o->p = realloc(o->p, o->cap))) abort();
    }
    if (n) memcpy(o->p + o->n, p, n);
    o->n += n;
}

/* Where the chunk that started at old offset `from` starts now. */
static uint64_t moved(const uint64_t *old, const uint64_t *now, int n, uint64_t from)
{
    for (int i = 0; i < n; i++)
        if (old[i] == from) return now[i];
    return from;
}

/* A copy of data with checksums recomputed and raw windows compressed; the
 * bytes past the last whole chunk are copied as they are. */
static uint8_t *put_right(const uint8_t *data, size_t size, size_t *out_size)
{
    Out o = { 0 };
    const size_t hs = size >= HEADER_MIN ? pnmf_rl16(data + 12) : 0;
    if (hs < HEADER_MIN || hs > size || (data[QUALITY_BYTE] & 1)) {
        out_add(&o, data, size);
        *out_size = o.n;
        return o.p;
    }
    out_add(&o, data, hs);
    pnmf_wl32(o.p + hs - 4, pnmf_crc32(0, o.p, hs - 4));
    uint64_t old_at[MAX_CHUNKS], new_at[MAX_CHUNKS];
    int chunks = 0;
    size_t pos = hs, index_at = 0;
    while (chunks < MAX_CHUNKS && size - pos >= 12) {
        const uint32_t type = pnmf_rl32(data + pos), len = pnmf_rl32(data + pos + 4);
        if (len > size - pos - 12) break;
        const uint8_t *payload = data + pos + 8;
        old_at[chunks] = pos, new_at[chunks] = o.n;
        chunks++;
        uint8_t *z = NULL;
        size_t zn = 0;
        if (type == PNMF_CHUNK_WINDOW && len >= 12 && !memcmp(payload + 8, RAW_MARK, 4) &&
            pnmf_entropy_compress(payload + 12, len - 12, 1, &z, &zn) < 0)
            abort();
        uint8_t head[8];
        pnmf_wl32(head, type);
        pnmf_wl32(head + 4, z ? (uint32_t)(8 + zn) : len);
        const size_t start = o.n;
        out_add(&o, head, 8);
        out_add(&o, payload, z ? 8 : len);
        if (z) out_add(&o, z, zn);
        free(z);
        if (type == PNMF_CHUNK_INDEX) index_at = start;
        uint8_t crc[4];
        pnmf_wl32(crc, pnmf_crc32(0, o.p + start, o.n - start));
        out_add(&o, crc, 4);
        pos += 12 + (size_t)len;
        if (type == PNMF_CHUNK_INDEX) break;
    }
    out_add(&o, data + pos, size - pos);
    if (index_at) {
        /* the index entries and the trailer follow the windows they name */
        uint8_t *ix = o.p + index_at;
        const uint32_t len = pnmf_rl32(ix + 4), count = len >= 4 ? pnmf_rl32(ix + 8) : 0;
        for (uint32_t i = 0; i < count && 4 + 16 * (uint64_t)(i + 1) <= len; i++)
            pnmf_wl64(ix + 12 + 16 * i, moved(old_at, new_at, chunks, pnmf_rl64(ix + 12 + 16 * i)));
        pnmf_wl32(ix + 8 + len, pnmf_crc32(0, ix, 8 + (size_t)len));
        const size_t trailer = index_at + 12 + len;
        if (o.n - trailer >= 8)
            pnmf_wl64(o.p + trailer, moved(old_at, new_at, chunks, pnmf_rl64(o.p + trailer)));
    }
    *out_size = o.n;
    return o.p;
}

/* ---- a stream that cannot seek ---- */

typedef struct Pipe {
    const uint8_t *p;
    size_t n, pos;
} Pipe;

static ssize_t pipe_read(void *cookie, char *buf, size_t size)
{
    Pipe *pp = cookie;
    const size_t n = size < pp->n - pp->pos ? size : pp->n - pp->pos;
    memcpy(buf, pp->p + pp->pos, n);
    pp->pos += n;
    return (ssize_t)n;
}

/* ---- the target ---- */

int LLVMFuzzerTestOneInput(const uint8_t *input, size_t input_size)
{
    size_t size;
    uint8_t *data = put_right(input, input_size, &size);
    /* fmemopen() refuses an empty buffer; /dev/null is an empty file. */
    Pipe pipe = { data, size, 0 };
    const int unseekable = size > QUALITY_BYTE && (data[QUALITY_BYTE] & 2);
    FILE *f = unseekable ? fopencookie(&pipe, "rb", (cookie_io_functions_t){ .read = pipe_read })
            : size ? fmemopen(data, size, "rb") : fopen("/dev/null", "rb");
    if (!f) abort();
    PnmfDecoder *d = NULL;
    int ret = pnmf_dec_open(&d, f);
    if (ret < 0) {
        if (d) check_error(d, ret);
        if (getenv("PNMF_FUZZ_VERBOSE"))
            fprintf(stderr, "open: %s\n", d ? pnmf_dec_errmsg(d) : pnmf_strerror(ret));
        pnmf_dec_close(&d);
        fclose(f);
        free(data);
        return 0;
    }
    const PnmfStreamInfo *info = pnmf_dec_info(d);
    const size_t n = (size_t)info->width * info->height;
    uint8_t *frame = malloc(n);
    if (!frame) abort();

    /* In order, within the budget; remember one frame to compare after a seek. */
    const int target = info->frame_count ? (int)(data[size - 1] % info->frame_count) : -1;
    uint64_t target_hash = 0;
    int decoded = 0, target_ok = 0;
    size_t pixels = 0;
    while (pixels + n <= FUZZ_PIXEL_BUDGET) {
        ret = pnmf_dec_read_frame(d, frame, info->width);
        if (ret == PNMF_ERR_EOF) break;
        if (ret < 0) {
            check_error(d, ret);
            if (pnmf_dec_read_frame(d, frame, info->width) >= 0) {
                fprintf(stderr, "fuzz_decode: a frame after a failure\n");
                abort();
            }
            break;
        }
        if (decoded == target) target_hash = hash(frame, n), target_ok = 1;
        decoded++;
        pixels += n;
    }
    if (ret == PNMF_ERR_EOF && decoded != info->frame_count) {
        fprintf(stderr, "fuzz_decode: %d frames of %d, then the end\n", decoded, info->frame_count);
        abort();
    }

    if (getenv("PNMF_FUZZ_VERBOSE"))
        fprintf(stderr, "%dx%d: %d of %d frames: %s\n", info->width, info->height, decoded,
                info->frame_count, ret == PNMF_ERR_EOF ? "end" : pnmf_dec_errmsg(d));

    /* Seek through the index and decode the remembered frame again. */
    if (target >= 0 && pixels + n <= 2 * FUZZ_PIXEL_BUDGET) {
        ret = pnmf_dec_seek(d, target);
        if (ret < 0) check_error(d, ret);
        else if ((ret = pnmf_dec_read_frame(d, frame, info->width)) < 0) check_error(d, ret);
        else if (target_ok && hash(frame, n) != target_hash) {
            fprintf(stderr, "fuzz_decode: frame %d differs after a seek\n", target);
            abort();
        }
    }
    free(frame);
    pnmf_dec_close(&d);
    fclose(f);
    free(data);
    return 0;
}
