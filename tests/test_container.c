/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The container and its zstd wrapper, byte for byte: round trip, repeatable
 * output, every truncation, every single-byte corruption, forward
 * compatibility (unknown chunks, header extension, reader version), the
 * limits, seeking, and decompression bombs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "container.h"
#include "entropy.h"
#include "internal.h"
#include "test.h"
#include "tuning.h"

#define MAX_WIN 8
#define HS 80 /* the header's size, version 8's extension included */

/* ---- byte buffers and files ---- */

typedef struct Buf {
    uint8_t *p;
    size_t n, cap;
} Buf;

static void buf_add(Buf *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        if (!b->p) abort();
    }
    if (n) memcpy(b->p + b->n, p, n);
    b->n += n;
}

static void buf_u32(Buf *b, uint32_t v) { uint8_t t[4]; pnmf_wl32(t, v); buf_add(b, t, 4); }
static void buf_u64(Buf *b, uint64_t v) { uint8_t t[8]; pnmf_wl64(t, v); buf_add(b, t, 8); }

static uint8_t *slurp(FILE *f, size_t *n)
{
    fflush(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    uint8_t *p = malloc(size > 0 ? (size_t)size : 1);
    if (!p || fread(p, 1, (size_t)size, f) != (size_t)size) abort();
    *n = (size_t)size;
    return p;
}

/* A seekable FILE over a copy of the bytes. */
static FILE *mem_file(const uint8_t *p, size_t n)
{
    FILE *f = tmpfile();
    if (!f || (n && fwrite(p, 1, n, f) != n)) abort();
    rewind(f);
    return f;
}

/* A pipe: not seekable, size unknown (n must fit in the pipe's buffer). */
static FILE *pipe_file(const uint8_t *p, size_t n)
{
    int fd[2];
    if (n > 60000 || pipe(fd)) abort();
    if (n && write(fd[1], p, n) != (ssize_t)n) abort();
    close(fd[1]);
    FILE *f = fdopen(fd[0], "rb");
    if (!f) abort();
    return f;
}

/* ---- the reference file ---- */

static PnmfHeader ref_header(void)
{
    PnmfHeader h;
    memset(&h, 0, sizeof(h));
    h.width = 64;
    h.height = 48;
    h.fps_num = 25;
    h.fps_den = 1;
    h.frame_count = 10;
    h.window = 4;
    h.components = 8;
    h.shift_model = 1;
    h.quality = 30;
    h.w_step = 3;
    h.r_step = 5;
    return h;
}

typedef struct Windows {
    int n;
    uint32_t first[MAX_WIN], count[MAX_WIN];
    uint8_t *data[MAX_WIN];
    size_t size[MAX_WIN];
} Windows;

/* Three windows (frames 0-3, 4-7, 8-9) of compressible, distinct payloads. */
static Windows ref_windows(void)
{
    static const size_t sizes[3] = { 3000, 1500, 777 };
    Windows w;
    memset(&w, 0, sizeof(w));
    w.n = 3;
    uint32_t seed = 12345;
    for (int i = 0; i < 3; i++) {
        w.first[i] = 4 * i;
        w.count[i] = i < 2 ? 4 : 2;
        w.size[i] = sizes[i];
        w.data[i] = malloc(sizes[i]);
        for (size_t j = 0; j < sizes[i]; j++) {
            seed = seed * 1103515245 + 12345;
            w.data[i][j] = (uint8_t)((j % 7 == 0 ? seed >> 24 : j / 16) + i);
        }
    }
    return w;
}

static void windows_free(Windows *w)
{
    for (int i = 0; i < w->n; i++) free(w->data[i]);
    memset(w, 0, sizeof(*w));
}

/* Write a file with the writer; header frame_count given at open is
 * provisional (0), the real one comes at finish. Returns the bytes. */
static uint8_t *write_file(const PnmfHeader *h, const Windows *w, size_t *n, int *ret)
{
    char err[128] = "";
    PnmfHeader hp = *h;
    hp.frame_count = 0;
    FILE *f = tmpfile();
    PnmfContainerWriter *wr = NULL;
    uint32_t frames = 0;
    *ret = pnmf_container_writer_open(&wr, f, &hp, 19, err, sizeof(err));
    for (int i = 0; *ret >= 0 && i < w->n; i++) {
        *ret = pnmf_container_write_window(wr, w->first[i], w->count[i], w->data[i],
                                           w->size[i], err, sizeof(err));
        frames += w->count[i];
    }
    if (*ret >= 0) *ret = pnmf_container_writer_finish(wr, frames, err, sizeof(err));
    if (*ret < 0) fprintf(stderr, "write_file: %s\n", err);
    const uint64_t bytes = pnmf_container_writer_bytes(wr);
    pnmf_container_writer_close(&wr);
    uint8_t *p = slurp(f, n);
    fclose(f);
    if (*ret >= 0 && bytes != *n) *ret = -1000;
    return p;
}

/* Open and read every window; returns the first error, or the number of
 * windows read. err holds the reason. */
static int read_file(FILE *f, PnmfHeader *h, Windows *out, char *err, size_t errlen)
{
    PnmfContainerReader *r = NULL;
    if (out) memset(out, 0, sizeof(*out));
    int ret = pnmf_container_reader_open(&r, f, err, errlen);
    if (ret < 0) return ret;
    if (h) *h = *pnmf_container_reader_header(r);
    int n = 0;
    for (;;) {
        const uint8_t *p;
        size_t size;
        uint32_t first, count;
        ret = pnmf_container_read_window(r, &p, &size, &first, &count, err, errlen);
        if (ret <= 0) break;
        if (out && n < MAX_WIN) {
            out->first[n] = first;
            out->count[n] = count;
            out->size[n] = size;
            out->data[n] = malloc(size ? size : 1);
            memcpy(out->data[n], p, size);
            out->n = n + 1;
        }
        n++;
    }
    pnmf_container_reader_close(&r);
    return ret < 0 ? ret : n;
}

static int read_bytes(const uint8_t *p, size_t n, int use_pipe, Windows *out,
                      char *err, size_t errlen)
{
    FILE *f = use_pipe ? pipe_file(p, n) : mem_file(p, n);
    const int ret = read_file(f, NULL, out, err, errlen);
    fclose(f);
    return ret;
}

static int windows_equal(const Windows *a, const Windows *b)
{
    if (a->n != b->n) return 0;
    for (int i = 0; i < a->n; i++)
        if (a->first[i] != b->first[i] || a->count[i] != b->count[i] ||
            a->size[i] != b->size[i] || memcmp(a->data[i], b->data[i], a->size[i]))
            return 0;
    return 1;
}

/* ---- a file builder, for files the writer would refuse to make ---- */

/* Recompute the CRC of a header of hs bytes (whatever its size field says). */
static void fix_header_crc(uint8_t *hdr, uint32_t hs)
{
    pnmf_wl32(hdr + hs - 4, pnmf_crc32(0, hdr, hs - 4));
}

static void add_chunk(Buf *b, uint32_t type, const uint8_t *p, size_t n)
{
    uint8_t h[8];
    pnmf_wl32(h, type);
    pnmf_wl32(h + 4, (uint32_t)n);
    buf_add(b, h, 8);
    buf_add(b, p, n);
    buf_u32(b, pnmf_crc32(pnmf_crc32(0, h, 8), p, n));
}

static void add_window(Buf *b, Buf *index, uint32_t first, uint32_t count,
                       const uint8_t *p, size_t n)
{
    uint8_t *z;
    size_t zn;
    if (pnmf_entropy_compress(p, n, 3, &z, &zn) < 0) abort();
    Buf c = { 0 };
    buf_u32(&c, first);
    buf_u32(&c, count);
    buf_add(&c, z, zn);
    buf_u64(index, b->n);
    buf_u32(index, first);
    buf_u32(index, count);
    add_chunk(b, PNMF_CHUNK_WINDOW, c.p, c.n);
    pnmf_free(z);
    free(c.p);
}

/* Index chunk from the entries gathered, then the trailer. */
static void add_end(Buf *b, const Buf *index)
{
    Buf c = { 0 };
    buf_u32(&c, (uint32_t)(index->n / 16));
    buf_add(&c, index->p, index->n);
    const uint64_t off = b->n;
    add_chunk(b, PNMF_CHUNK_INDEX, c.p, c.n);
    buf_u64(b, off);
    static const uint8_t end[8] = { 0x89, 'P', 'N', 'M', 'F', 'E', 'N', 'D' };
    buf_add(b, end, 8);
    free(c.p);
}

/* ---- tests ---- */

static void test_crc(void)
{
    CHECK(pnmf_crc32(0, "123456789", 9) == 0xCBF43926u);
    CHECK(pnmf_crc32(pnmf_crc32(0, "1234", 4), "56789", 5) == 0xCBF43926u);
    CHECK(pnmf_crc32(0, "", 0) == 0);
    CHECK(pnmf_crc32(0, "a", 1) == 0xE8B7BE43u);
    /* eight bytes a step: the bit-by-bit CRC of every length 0..300, at
     * every alignment, chained at every split */
    uint8_t buf[320];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof buf; i++) x = x * 1103515245u + 12345u, buf[i] = (uint8_t)(x >> 16);
    int ok = 1;
    for (size_t off = 0; off < 8; off++)
        for (size_t n = 0; n <= 300; n++) {
            uint32_t c = 0xFFFFFFFFu;
            for (size_t i = 0; i < n; i++) {
                c ^= buf[off + i];
                for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0xEDB88320u : c >> 1;
            }
            c = ~c;
            ok &= pnmf_crc32(0, buf + off, n) == c;
            ok &= pnmf_crc32(pnmf_crc32(0, buf + off, n / 3), buf + off + n / 3, n - n / 3) == c;
        }
    CHECK(ok);
}

static void test_entropy(void)
{
    const size_t n = 100000;
    uint8_t *src = malloc(n);
    for (size_t i = 0; i < n; i++) src[i] = (uint8_t)(i * i >> 7);
    uint8_t *z = NULL, *z2 = NULL, *d = NULL;
    size_t zn = 0, zn2 = 0, dn = 0;
    CHECK(pnmf_entropy_compress(src, n, 5, &z, &zn) == 0);
    CHECK(zn > 0 && zn < n);
    CHECK(pnmf_entropy_compress(src, n, 5, &z2, &zn2) == 0);
    CHECK(zn == zn2 && !memcmp(z, z2, zn)); /* repeatable */
    pnmf_free(z2);

    CHECK(pnmf_entropy_decompress(z, zn, n, &d, &dn) == 0);
    CHECK(dn == n && d && !memcmp(d, src, n));
    pnmf_freep(&d);
    CHECK(pnmf_entropy_decompress(z, zn, n - 1, &d, &dn) == PNMF_ERR_LIMIT);
    CHECK(!d);

    /* Trailing bytes, a second frame, every truncation. */
    uint8_t *zz = malloc(2 * zn);
    memcpy(zz, z, zn);
    memcpy(zz + zn, z, zn);
    CHECK(pnmf_entropy_decompress(zz, zn + 1, n, &d, &dn) == PNMF_ERR_CORRUPT);
    CHECK(pnmf_entropy_decompress(zz, 2 * zn, 2 * n, &d, &dn) == PNMF_ERR_CORRUPT);
    int trunc_ok = 1;
    for (size_t len = 0; len < zn; len++) {
        if (pnmf_entropy_decompress(z, len, n, &d, &dn) != PNMF_ERR_CORRUPT) trunc_ok = 0;
        pnmf_freep(&d);
    }
    CHECK(trunc_ok);

    /* Every single-byte change fails or gives back the very same bytes. */
    int flip_ok = 1, flips_failed = 0;
    for (size_t i = 0; i < zn; i++) {
        memcpy(zz, z, zn);
        zz[i] ^= 0x40;
        const int r = pnmf_entropy_decompress(zz, zn, n, &d, &dn);
        if (r < 0) flips_failed++;
        else if (dn != n || memcmp(d, src, n)) flip_ok = 0;
        pnmf_freep(&d);
    }
    CHECK(flip_ok);
    CHECK(flips_failed > (int)zn * 9 / 10);

    /* A frame without a checksum (flag cleared, checksum dropped). */
    memcpy(zz, z, zn);
    CHECK(zz[4] & 4);
    zz[4] &= ~4;
    CHECK(pnmf_entropy_decompress(zz, zn - 4, n, &d, &dn) == PNMF_ERR_CORRUPT);

    /* A frame that lies about its content size: claims n/2, holds n. */
    memcpy(zz, z, zn);
    const unsigned fcs_flag = zz[4] >> 6, single = (zz[4] >> 5) & 1;
    const size_t fcs_pos = 5 + !single;
    CHECK(fcs_flag == 2); /* 4-byte field for 100000 */
    pnmf_wl32(zz + fcs_pos, (uint32_t)(n / 2));
    CHECK(pnmf_entropy_decompress(zz, zn, n / 2 + 16, &d, &dn) < 0);
    CHECK(!d);
    CHECK(pnmf_entropy_decompress(zz, zn, n, &d, &dn) < 0);
    CHECK(!d);
    free(zz);
    pnmf_free(z);

    /* A bomb: 8 MiB of zeros in a few hundred bytes, refused at 1 MiB. */
    const size_t big = 8u << 20;
    uint8_t *zeros = calloc(1, big);
    CHECK(pnmf_entropy_compress(zeros, big, 3, &z, &zn) == 0);
    CHECK(zn < 4096);
    CHECK(pnmf_entropy_decompress(z, zn, 1u << 20, &d, &dn) == PNMF_ERR_LIMIT);
    CHECK(!d);
    /* ... and the same bomb claiming a small size is refused all the same. */
    const unsigned ff = z[4] >> 6;
    const size_t fp = 5 + !((z[4] >> 5) & 1);
    CHECK(ff == 2);
    pnmf_wl32(z + fp, 1000);
    CHECK(pnmf_entropy_decompress(z, zn, 1u << 20, &d, &dn) < 0);
    CHECK(!d);
    pnmf_free(z);
    free(zeros);

    /* Empty input. */
    CHECK(pnmf_entropy_compress(NULL, 0, 3, &z, &zn) == 0);
    CHECK(pnmf_entropy_decompress(z, zn, 0, &d, &dn) == 0 && dn == 0);
    pnmf_freep(&d);
    pnmf_free(z);
    free(src);
}

static void test_round_trip(void)
{
    PnmfHeader h = ref_header(), h2;
    Windows w = ref_windows(), back;
    char err[128] = "";
    size_t n, n2;
    int ret;
    uint8_t *file = write_file(&h, &w, &n, &ret);
    CHECK(ret == 0);
    /* The layout of docs/format.md: header, chunks, index, trailer. */
    CHECK(!memcmp(file, "\x89PNMF\r\n\n", 8));
    CHECK(pnmf_rl16(file + 12) == HS);
    CHECK(!memcmp(file + n - 8, "\x89PNMFEND", 8));
    const uint64_t ioff = pnmf_rl64(file + n - 16);
    CHECK(ioff == n - 16 - (12 + 4 + 3 * 16));
    CHECK(pnmf_rl32(file + ioff) == PNMF_CHUNK_INDEX && !memcmp(file + ioff, "INDX", 4));
    CHECK(pnmf_rl32(file + ioff + 4) == 4 + 3 * 16 && pnmf_rl32(file + ioff + 8) == 3);
    CHECK(pnmf_rl64(file + ioff + 12) == HS && !memcmp(file + HS, "WIND", 4));
    CHECK(pnmf_rl32(file + HS + 8) == 0 && pnmf_rl32(file + HS + 12) == 4);
    CHECK(pnmf_rl32(file + HS + 16) == 0xFD2FB528u); /* a zstd frame */
    const uint64_t off1 = HS + 12 + pnmf_rl32(file + HS + 4);
    CHECK(pnmf_rl64(file + ioff + 12 + 16) == off1 && pnmf_rl32(file + off1 + 8) == 4);

    FILE *f = mem_file(file, n);
    ret = read_file(f, &h2, &back, err, sizeof(err));
    fclose(f);
    CHECK_MSG(ret == 3, "%d %s", ret, err);
    CHECK(PNMF_FORMAT_VERSION == 21 && PNMF_READER_VERSION == 21 && PNMF_OLDEST_VERSION == 2);
    CHECK(h2.writer_version == 21 && pnmf_rl16(file + 8) == 21);
    /* a v13 file's range-coded streams adapt as format 13 defines, which
     * no reader of an older format decodes (docs/format.md, "Versioning"):
     * the writer asks for reader 13 */
    CHECK_MSG(h2.min_reader_version == 13 && pnmf_rl16(file + 10) == 13,
              "the writer writes min_reader_version %u, format v13 needs 13", (unsigned)pnmf_rl16(file + 10));
    CHECK(h2.canvas_height == 0 && h2.canvas_width == 0);
    CHECK(h2.width == h.width && h2.height == h.height);
    CHECK(h2.fps_num == h.fps_num && h2.fps_den == h.fps_den);
    CHECK(h2.frame_count == 10); /* patched at finish */
    CHECK(h2.window == h.window && h2.components == h.components);
    CHECK(h2.shift_model == h.shift_model && h2.quality == h.quality);
    CHECK(h2.w_step == h.w_step && h2.r_step == h.r_step);
    CHECK(windows_equal(&w, &back));

    /* The same through a pipe (no size, no seeking). */
    Windows back2;
    CHECK(read_bytes(file, n, 1, &back2, err, sizeof(err)) == 3);
    CHECK(windows_equal(&w, &back2));
    windows_free(&back2);

    /* Writing what was read gives the same bytes. */
    uint8_t *file2 = write_file(&h2, &back, &n2, &ret);
    CHECK(ret == 0);
    CHECK(n2 == n && !memcmp(file, file2, n));
    free(file2);

    /* After the end, read_window keeps returning 0. */
    PnmfContainerReader *r;
    f = mem_file(file, n);
    CHECK(pnmf_container_reader_open(&r, f, err, sizeof(err)) == 0);
    const uint8_t *p;
    size_t size;
    uint32_t first, count;
    int k = 0;
    while (pnmf_container_read_window(r, &p, &size, &first, &count, err, sizeof(err)) == 1) k++;
    CHECK(k == 3);
    CHECK(pnmf_container_read_window(r, &p, &size, &first, &count, err, sizeof(err)) == 0);
    pnmf_container_reader_close(&r);
    CHECK(!r);
    fclose(f);

    windows_free(&back);
    windows_free(&w);
    free(file);
}

static void test_truncation(void)
{
    PnmfHeader h = ref_header();
    Windows w = ref_windows();
    char err[128];
    size_t n;
    int ret;
    uint8_t *file = write_file(&h, &w, &n, &ret);
    int bad_file = 0, bad_pipe = 0, msg_ok = 1;
    for (size_t len = 0; len < n; len++) {
        err[0] = 0;
        if (read_bytes(file, len, 0, NULL, err, sizeof(err)) != PNMF_ERR_CORRUPT) {
            if (!bad_file) fprintf(stderr, "truncated at %zu: %s\n", len, err);
            bad_file++;
        }
        if (!strstr(err, "truncated") && !strstr(err, "not a pnmf")) msg_ok = 0;
        if (read_bytes(file, len, 1, NULL, err, sizeof(err)) != PNMF_ERR_CORRUPT) {
            if (!bad_pipe) fprintf(stderr, "truncated pipe at %zu: %s\n", len, err);
            bad_pipe++;
        }
    }
    CHECK(bad_file == 0);
    CHECK(bad_pipe == 0);
    CHECK(msg_ok);
    CHECK(read_bytes(file, n, 0, NULL, err, sizeof(err)) == 3);

    /* Bytes after the trailer are refused too. */
    uint8_t *longer = malloc(n + 1);
    memcpy(longer, file, n);
    longer[n] = 0;
    CHECK(read_bytes(longer, n + 1, 0, NULL, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    CHECK(read_bytes(longer, n + 1, 1, NULL, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    free(longer);
    windows_free(&w);
    free(file);
}

static void test_corruption(void)
{
    PnmfHeader h = ref_header();
    Windows w = ref_windows();
    char err[128];
    size_t n;
    int ret;
    uint8_t *file = write_file(&h, &w, &n, &ret);
    uint8_t *bad = malloc(n);
    static const uint8_t masks[3] = { 0x01, 0x80, 0xff };
    int silent = 0, no_msg = 0, crc_msgs = 0;
    for (size_t i = 0; i < n; i++) {
        for (int m = 0; m < 3; m++) {
            memcpy(bad, file, n);
            bad[i] ^= masks[m];
            err[0] = 0;
            ret = read_bytes(bad, n, 0, NULL, err, sizeof(err));
            if (ret >= 0) {
                if (!silent) fprintf(stderr, "flip %zu^%02x read fine\n", i, masks[m]);
                silent++;
            }
            if (!err[0]) no_msg++;
            if (strstr(err, "crc mismatch")) crc_msgs++;
        }
    }
    CHECK(silent == 0);
    CHECK(no_msg == 0);
    CHECK(crc_msgs > (int)n); /* most damage is caught by a CRC */

    /* The header CRC and a chunk CRC by name. */
    memcpy(bad, file, n);
    bad[20] ^= 1; /* height */
    CHECK(read_bytes(bad, n, 0, NULL, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    CHECK(!strcmp(err, "header crc mismatch"));
    memcpy(bad, file, n);
    bad[HS + 8 + 20] ^= 1; /* inside window 0's zstd frame */
    CHECK(read_bytes(bad, n, 0, NULL, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    CHECK(!strcmp(err, "chunk 0: crc mismatch"));

    /* Magic damage: not ours, and a CRLF -> LF conversion. */
    memcpy(bad, file, n);
    memcpy(bad, "GIF89a\0\0", 8);
    CHECK(read_bytes(bad, n, 0, NULL, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    CHECK(!strcmp(err, "not a pnmf file"));
    memcpy(bad, file, n);
    memmove(bad + 5, bad + 6, n - 6);
    CHECK(read_bytes(bad, n - 1, 0, NULL, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    CHECK(strstr(err, "text-mode") != NULL);
    free(bad);
    windows_free(&w);
    free(file);
}

/* Header fields patched (CRC recomputed) on the reference file. */
static int read_patched(const uint8_t *file, size_t n, int off, int size, uint32_t v,
                        char *err, size_t errlen)
{
    uint8_t *p = malloc(n);
    memcpy(p, file, n);
    if (size == 1) p[off] = (uint8_t)v;
    else if (size == 2) pnmf_wl16(p + off, v);
    else pnmf_wl32(p + off, v);
    fix_header_crc(p, HS);
    const int ret = read_bytes(p, n, 0, NULL, err, errlen);
    free(p);
    return ret;
}

static void test_header_checks(void)
{
    PnmfHeader h = ref_header();
    Windows w = ref_windows();
    char err[128];
    size_t n;
    int ret;
    uint8_t *file = write_file(&h, &w, &n, &ret);

    /* A file from the future: writer 22, needs reader 22. */
    uint8_t *p = malloc(n);
    memcpy(p, file, n);
    pnmf_wl16(p + 8, 22);
    pnmf_wl16(p + 10, 22);
    fix_header_crc(p, HS);
    CHECK(read_bytes(p, n, 0, NULL, err, sizeof(err)) == PNMF_ERR_VERSION);
    CHECK(strstr(err, "needs reader version 22 (this is version 21)") != NULL);
    /* Format 17's half size (offset 46): 1 with a reader of 17 is read;
     * 2 is corrupt, and so is 1 in a file for readers before 17, or with
     * the canvas model; in a file written before 17 the field is reserved */
    pnmf_wl16(p + 8, 17);
    pnmf_wl16(p + 10, 17);
    pnmf_wl16(p + 46, 1);
    fix_header_crc(p, HS);
    CHECK(read_bytes(p, n, 0, NULL, err, sizeof(err)) == 3);
    pnmf_wl16(p + 46, 2);
    fix_header_crc(p, HS);
    CHECK(read_bytes(p, n, 0, NULL, err, sizeof(err)) == PNMF_ERR_CORRUPT && strstr(err, "unknown coded size 2"));
    pnmf_wl16(p + 46, 1);
    pnmf_wl16(p + 10, 16);
    fix_header_crc(p, HS);
    CHECK(read_bytes(p, n, 0, NULL, err, sizeof(err)) == PNMF_ERR_CORRUPT && strstr(err, "readers before version 17"));
    pnmf_wl16(p + 8, 16);
    fix_header_crc(p, HS);
    CHECK(read_bytes(p, n, 0, NULL, err, sizeof(err)) == PNMF_ERR_CORRUPT && strstr(err, "reserved header bytes"));
    pnmf_wl16(p + 46, 0);
    /* Written by version 17 but readable by 8: fine. */
    pnmf_wl16(p + 8, 17);
    pnmf_wl16(p + 10, 8);
    fix_header_crc(p, HS);
    CHECK(read_bytes(p, n, 0, NULL, err, sizeof(err)) == 3);
    /* ... and by 1 (whatever a v1 reader would make of it): a v17 reader
     * reads it, the writer being v17 */
    pnmf_wl16(p + 10, 1);
    fix_header_crc(p, HS);
    CHECK(read_bytes(p, n, 0, NULL, err, sizeof(err)) == 3);
    /* A file of format 2 (writer 2, min reader 2) is still read. */
    pnmf_wl16(p + 8, 2);
    pnmf_wl16(p + 10, 2);
    fix_header_crc(p, HS);
    CHECK(read_bytes(p, n, 0, NULL, err, sizeof(err)) == 3);
    /* Format v1 is not read: a v1 file is too old (PNMF_ERR_VERSION),
     * whatever else it holds. */
    pnmf_wl16(p + 8, 1);
    pnmf_wl16(p + 10, 1);
    fix_header_crc(p, HS);
    CHECK(read_bytes(p, n, 0, NULL, err, sizeof(err)) == PNMF_ERR_VERSION);
    CHECK_MSG(strstr(err, "format version 1 is too old") != NULL, "'%s'", err);
    CHECK(read_bytes(p, n, 1, NULL, err, sizeof(err)) == PNMF_ERR_VERSION); /* a pipe too */
    pnmf_wl16(p + 8, 0);
    pnmf_wl16(p + 10, 0);
    fix_header_crc(p, HS);
    CHECK(read_bytes(p, n, 0, NULL, err, sizeof(err)) == PNMF_ERR_CORRUPT); /* min reader 0 */
    /* Versions checked before the rest: a v1 header with a reserved byte set is too old. */
    pnmf_wl16(p + 8, 1);
    pnmf_wl16(p + 10, 1);
    p[50] = 1; /* canvas_height in v2, reserved in v1 */
    fix_header_crc(p, HS);
    CHECK(read_bytes(p, n, 0, NULL, err, sizeof(err)) == PNMF_ERR_VERSION);
    free(p);
    CHECK(read_patched(file, n, 10, 2, 0, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    CHECK(read_patched(file, n, 8, 2, 7, err, sizeof(err)) == PNMF_ERR_CORRUPT); /* min reader > writer */
    CHECK(strstr(err, "bad version fields (writer 7, min reader 13)") != NULL);
    /* writer 1 with min reader 13: the fields contradict each other */
    CHECK(read_patched(file, n, 8, 2, 1, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    CHECK(strstr(err, "bad version fields (writer 1, min reader 13)") != NULL);

    CHECK(read_patched(file, n, 16, 4, 20000, err, sizeof(err)) == PNMF_ERR_LIMIT);
    CHECK(strstr(err, "20000") != NULL);
    CHECK(read_patched(file, n, 20, 4, 20000, err, sizeof(err)) == PNMF_ERR_LIMIT);
    p = malloc(n); /* each side within the limit, the product over it */
    memcpy(p, file, n);
    pnmf_wl32(p + 16, 16384);
    pnmf_wl32(p + 20, PNMF_MAX_PIXELS / 16384 + 1);
    fix_header_crc(p, HS);
    CHECK(read_bytes(p, n, 0, NULL, err, sizeof(err)) == PNMF_ERR_LIMIT);
    pnmf_wl32(p + 20, PNMF_MAX_PIXELS / 16384);
    fix_header_crc(p, HS);
    CHECK(read_bytes(p, n, 0, NULL, err, sizeof(err)) == 3); /* at the limit: fine */
    free(p);
    CHECK(read_patched(file, n, 16, 4, 0, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    CHECK(read_patched(file, n, 24, 4, 0, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    CHECK(read_patched(file, n, 28, 4, 0, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    CHECK(read_patched(file, n, 32, 4, PNMF_MAX_FRAMES + 1, err, sizeof(err)) == PNMF_ERR_LIMIT);
    CHECK(read_patched(file, n, 36, 2, 0, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    CHECK(read_patched(file, n, 36, 2, PNMF_MAX_WINDOW + 1, err, sizeof(err)) == PNMF_ERR_LIMIT);
    CHECK(read_patched(file, n, 38, 2, 0, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    CHECK(read_patched(file, n, 38, 2, 256, err, sizeof(err)) == PNMF_ERR_LIMIT);
    CHECK(read_patched(file, n, 40, 1, 3, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    CHECK(strstr(err, "unknown shift model 3") != NULL);
    CHECK(read_patched(file, n, 40, 1, 255, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    CHECK(read_patched(file, n, 40, 1, 0, err, sizeof(err)) == 3); /* vector */
    /* Reserved in v2: bytes 14..15 and 56..59, every bit of them; 46..47
     * (reserved in versions up to 16, the half size from 17) refused too in
     * this file for readers of 13: no value but 0 is both known and allowed
     * there. */
    {
        static const int reserved[] = { 14, 15, 56, 57, 58, 59 };
        int refused = 0, tries = 0;
        for (size_t r = 0; r < sizeof(reserved) / sizeof(reserved[0]); r++)
            for (int bit = 0; bit < 8; bit++, tries++) {
                err[0] = 0;
                refused += read_patched(file, n, reserved[r], 1, 1u << bit, err, sizeof(err)) ==
                               PNMF_ERR_CORRUPT && strstr(err, "reserved header bytes are not zero");
            }
        CHECK_MSG(refused == tries, "%d of %d reserved bits refused", refused, tries);
        refused = tries = 0;
        for (int r = 46; r <= 47; r++)
            for (int bit = 0; bit < 8; bit++, tries++)
                refused += read_patched(file, n, r, 1, 1u << bit, err, sizeof(err)) == PNMF_ERR_CORRUPT;
        CHECK_MSG(refused == tries, "%d of %d half-size bits refused", refused, tries);
    }
    /* The canvas fields (48: canvas_height, 52: canvas_width) are 0 unless
     * the shift model is 2 (canvas). */
    CHECK(read_patched(file, n, 48, 4, 48, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    CHECK(strstr(err, "a canvas size without the canvas model") != NULL);
    CHECK(read_patched(file, n, 52, 4, 1, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    CHECK(strstr(err, "a canvas size without the canvas model") != NULL);
    CHECK(read_patched(file, n, 55, 1, 0x80, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    /* With the canvas model: at least the frame (64x48), each side at most
     * 2 * 16384, the area at most 2^27. */
    {
        static const struct { uint32_t ch, cw; int want; const char *why; } cases[] = {
            { 48, 64, 3, NULL },                    /* the frame itself */
            { 60, 80, 3, NULL },
            { 1, 64 * 1024, PNMF_ERR_CORRUPT, "canvas 65536x1 smaller than the 64x48 frame" },
            { 0, 0, PNMF_ERR_CORRUPT, "canvas 0x0 smaller than the 64x48 frame" },
            { 47, 64, PNMF_ERR_CORRUPT, "canvas 64x47 smaller than the 64x48 frame" },
            { 48, 63, PNMF_ERR_CORRUPT, "canvas 63x48 smaller than the 64x48 frame" },
            { 32768, 4096, 3, NULL },               /* 2^27 exactly */
            { 4096, 32768, 3, NULL },
            { 32769, 64, PNMF_ERR_LIMIT, "canvas 64x32769 over the limit" },
            { 48, 32769, PNMF_ERR_LIMIT, "canvas 32769x48 over the limit" },
            { 32768, 4097, PNMF_ERR_LIMIT, "over the limit" },
            { 0xFFFFFFFFu, 0xFFFFFFFFu, PNMF_ERR_LIMIT, "over the limit" },
        };
        for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
            uint8_t *q = malloc(n);
            memcpy(q, file, n);
            q[40] = 2;
            pnmf_wl32(q + 48, cases[c].ch);
            pnmf_wl32(q + 52, cases[c].cw);
            fix_header_crc(q, HS);
            const int want = cases[c].want;
            const char *why = cases[c].why;
            err[0] = 0;
            const int got = read_bytes(q, n, 0, NULL, err, sizeof(err));
            CHECK_MSG(got == want && (!why || strstr(err, why)), "canvas %ux%u: %d '%s'", cases[c].cw,
                      cases[c].ch, got, err);
            free(q);
        }
    }
    CHECK(read_patched(file, n, 12, 2, 60, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    CHECK(read_patched(file, n, 12, 2, 5000, err, sizeof(err)) == PNMF_ERR_CORRUPT /* longer than the file: damage first */);
    /* The header claims more frames than the windows hold, or fewer. */
    CHECK(read_patched(file, n, 32, 4, 11, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    CHECK(read_patched(file, n, 32, 4, 9, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    /* Unchanged, the patcher gives back a readable file. */
    CHECK(read_patched(file, n, 41, 1, 30, err, sizeof(err)) == 3);

    /* The writer refuses what the reader would. */
    PnmfContainerWriter *wr = NULL;
    FILE *f = tmpfile();
    h.width = 20000;
    CHECK(pnmf_container_writer_open(&wr, f, &h, 3, err, sizeof(err)) == PNMF_ERR_ARG);
    CHECK(!wr);
    h = ref_header();
    h.components = 0;
    CHECK(pnmf_container_writer_open(&wr, f, &h, 3, err, sizeof(err)) == PNMF_ERR_ARG);
    h = ref_header();
    h.canvas_height = 48, h.canvas_width = 64; /* not the canvas model */
    CHECK(pnmf_container_writer_open(&wr, f, &h, 3, err, sizeof(err)) == PNMF_ERR_ARG);
    h.shift_model = 2; h.canvas_height = 47;
    CHECK(pnmf_container_writer_open(&wr, f, &h, 3, err, sizeof(err)) == PNMF_ERR_ARG);
    h.canvas_height = 32769;
    CHECK(pnmf_container_writer_open(&wr, f, &h, 3, err, sizeof(err)) == PNMF_ERR_ARG);
    h.shift_model = 3, h.canvas_height = h.canvas_width = 0;
    CHECK(pnmf_container_writer_open(&wr, f, &h, 3, err, sizeof(err)) == PNMF_ERR_ARG);
    CHECK(!wr);
    /* A canvas header round trip. */
    h = ref_header();
    h.shift_model = 2;
    h.canvas_height = 60, h.canvas_width = 75;
    {
        size_t cn;
        int cret;
        PnmfHeader h3;
        uint8_t *cf = write_file(&h, &w, &cn, &cret);
        CHECK(cret == 0);
        CHECK(cf[40] == 2 && pnmf_rl32(cf + 48) == 60 && pnmf_rl32(cf + 52) == 75);
        FILE *cfile = mem_file(cf, cn);
        CHECK(read_file(cfile, &h3, NULL, err, sizeof(err)) == 3);
        fclose(cfile);
        CHECK(h3.shift_model == 2 && h3.canvas_height == 60 && h3.canvas_width == 75);
        free(cf);
    }
    fclose(f);
    windows_free(&w);
    free(file);
}

static void test_writer_args(void)
{
    PnmfHeader h = ref_header();
    char err[128];
    uint8_t pl[16] = { 1, 2, 3 };
    PnmfContainerWriter *wr = NULL;
    FILE *f = tmpfile();
    CHECK(pnmf_container_writer_open(&wr, f, &h, 3, err, sizeof(err)) == 0);
    CHECK(pnmf_container_write_window(wr, 1, 4, pl, 16, err, sizeof(err)) == PNMF_ERR_ARG);
    CHECK(pnmf_container_write_window(wr, 0, 5, pl, 16, err, sizeof(err)) == PNMF_ERR_ARG);
    CHECK(pnmf_container_write_window(wr, 0, 0, pl, 16, err, sizeof(err)) == PNMF_ERR_ARG);
    CHECK(pnmf_container_write_window(wr, 0, 4, pl, 16, err, sizeof(err)) == 0);
    CHECK(pnmf_container_write_window(wr, 4, 1, NULL, 0, err, sizeof(err)) == 0);
    CHECK(pnmf_container_writer_finish(wr, 6, err, sizeof(err)) == PNMF_ERR_ARG);
    CHECK(pnmf_container_writer_finish(wr, 5, err, sizeof(err)) == 0);
    CHECK(pnmf_container_write_window(wr, 5, 1, pl, 16, err, sizeof(err)) == PNMF_ERR_ARG);
    pnmf_container_writer_close(&wr);
    CHECK(!wr);
    pnmf_container_writer_close(&wr); /* NULL-safe */
    size_t n;
    uint8_t *file = slurp(f, &n);
    fclose(f);
    Windows back;
    CHECK(read_bytes(file, n, 0, &back, err, sizeof(err)) == 2);
    CHECK(back.size[0] == 16 && !memcmp(back.data[0], pl, 16));
    CHECK(back.size[1] == 0 && back.count[1] == 1 && back.first[1] == 4);
    windows_free(&back);
    free(file);

    /* No frames at all: valid, empty. */
    f = tmpfile();
    h.frame_count = 0;
    CHECK(pnmf_container_writer_open(&wr, f, &h, 3, err, sizeof(err)) == 0);
    CHECK(pnmf_container_writer_finish(wr, 0, err, sizeof(err)) == 0);
    pnmf_container_writer_close(&wr);
    file = slurp(f, &n);
    fclose(f);
    CHECK(n == HS + 12 + 4 + 16);
    CHECK(read_bytes(file, n, 0, NULL, err, sizeof(err)) == 0);
    PnmfContainerReader *r;
    uint32_t first;
    f = mem_file(file, n);
    CHECK(pnmf_container_reader_open(&r, f, err, sizeof(err)) == 0);
    CHECK(pnmf_container_seek(r, 0, &first, err, sizeof(err)) == PNMF_ERR_ARG);
    pnmf_container_reader_close(&r);
    fclose(f);
    free(file);
}

/* Expect a seek to frame to land in window `win` of w, then read on. */
static void check_seek(PnmfContainerReader *r, const Windows *w, uint32_t frame, int win)
{
    char err[128] = "";
    uint32_t first = 999, count;
    const uint8_t *p;
    size_t size;
    const int ret = pnmf_container_seek(r, frame, &first, err, sizeof(err));
    CHECK_MSG(ret == 0, "seek %u: %s", frame, err);
    CHECK(first == w->first[win]);
    for (int i = win; i < w->n; i++) {
        CHECK(pnmf_container_read_window(r, &p, &size, &first, &count, err, sizeof(err)) == 1);
        CHECK(first == w->first[i] && count == w->count[i]);
        CHECK(size == w->size[i] && !memcmp(p, w->data[i], size));
    }
    CHECK(pnmf_container_read_window(r, &p, &size, &first, &count, err, sizeof(err)) == 0);
}

static void test_seek(void)
{
    PnmfHeader h = ref_header();
    Windows w = ref_windows();
    char err[128];
    size_t n;
    int ret;
    uint8_t *file = write_file(&h, &w, &n, &ret);
    PnmfContainerReader *r;
    FILE *f = mem_file(file, n);
    CHECK(pnmf_container_reader_open(&r, f, err, sizeof(err)) == 0);
    check_seek(r, &w, 5, 1);
    check_seek(r, &w, 9, 2);
    check_seek(r, &w, 8, 2);
    check_seek(r, &w, 0, 0);
    check_seek(r, &w, 7, 1);
    check_seek(r, &w, 3, 0);
    uint32_t first;
    CHECK(pnmf_container_seek(r, 10, &first, err, sizeof(err)) == PNMF_ERR_ARG);
    check_seek(r, &w, 4, 1); /* a refused seek leaves the reader usable */
    pnmf_container_reader_close(&r);
    fclose(f);

    /* A pipe cannot seek, but still reads. */
    f = pipe_file(file, n);
    CHECK(pnmf_container_reader_open(&r, f, err, sizeof(err)) == 0);
    CHECK(pnmf_container_seek(r, 5, &first, err, sizeof(err)) == PNMF_ERR_IO);
    const uint8_t *p;
    size_t size;
    uint32_t count;
    CHECK(pnmf_container_read_window(r, &p, &size, &first, &count, err, sizeof(err)) == 1);
    pnmf_container_reader_close(&r);
    fclose(f);

    /* Damage to the trailer or the index shows at the seek. */
    uint8_t *bad = malloc(n);
    const size_t damage[3] = { n - 1, n - 16, n - 20 }; /* magic, offset, index crc */
    for (int i = 0; i < 3; i++) {
        memcpy(bad, file, n);
        bad[damage[i]] ^= 0x10;
        f = mem_file(bad, n);
        CHECK(pnmf_container_reader_open(&r, f, err, sizeof(err)) == 0);
        CHECK(pnmf_container_seek(r, 5, &first, err, sizeof(err)) == PNMF_ERR_CORRUPT);
        CHECK(pnmf_container_read_window(r, &p, &size, &first, &count, err, sizeof(err)) < 0);
        pnmf_container_reader_close(&r);
        fclose(f);
    }
    free(bad);
    windows_free(&w);
    free(file);
}

/* Continuing windows: the zstd frame built on the previous payload (bit
 * 31 of frame_count, chunk and index); sequential reading gives the
 * payloads back, seeking straight to a continuing window is refused, and
 * the index names the key window before any frame. */
static void test_continues(void)
{
    PnmfHeader h = ref_header();
    Windows w = ref_windows();
    /* window 2 repeats most of window 1: the prefix must pay */
    memcpy(w.data[2], w.data[1] + 100, w.size[2]);
    char err[160] = "";
    uint8_t *files[2];
    size_t sizes[2];
    for (int cont = 0; cont < 2; cont++) {
        PnmfHeader hp = h;
        hp.frame_count = 0;
        FILE *f = tmpfile();
        PnmfContainerWriter *wr = NULL;
        CHECK(pnmf_container_writer_open(&wr, f, &hp, 19, err, sizeof(err)) == 0);
        pnmf_container_writer_set_continues(wr, cont); /* on the first window: refused */
        CHECK((pnmf_container_write_window(wr, 0, 4, w.data[0], w.size[0], err, sizeof(err)) < 0) == cont);
        if (cont) {
            pnmf_container_writer_close(&wr);
            fclose(f);
            f = tmpfile();
            CHECK(pnmf_container_writer_open(&wr, f, &hp, 19, err, sizeof(err)) == 0);
            CHECK(pnmf_container_write_window(wr, 0, 4, w.data[0], w.size[0], err, sizeof(err)) == 0);
        }
        for (int i = 1; i < 3; i++) {
            pnmf_container_writer_set_continues(wr, cont);
            CHECK(pnmf_container_write_window(wr, w.first[i], w.count[i], w.data[i], w.size[i], err, sizeof(err)) == 0);
        }
        CHECK(pnmf_container_writer_finish(wr, 10, err, sizeof(err)) == 0);
        pnmf_container_writer_close(&wr);
        files[cont] = slurp(f, &sizes[cont]);
        fclose(f);
    }
    CHECK(sizes[1] < sizes[0]); /* the repeat costs a match */
    PnmfContainerReader *r;
    FILE *f = mem_file(files[1], sizes[1]);
    CHECK(pnmf_container_reader_open(&r, f, err, sizeof(err)) == 0);
    const uint8_t *p;
    size_t size;
    uint32_t first, count;
    for (int i = 0; i < 3; i++) {
        CHECK(pnmf_container_read_window(r, &p, &size, &first, &count, err, sizeof(err)) == 1);
        CHECK(size == w.size[i] && !memcmp(p, w.data[i], size) && count == w.count[i]);
        CHECK(pnmf_container_window_continues(r) == (i > 0));
    }
    CHECK(pnmf_container_read_window(r, &p, &size, &first, &count, err, sizeof(err)) == 0);
    uint32_t key = 99;
    CHECK(pnmf_container_key_frame(r, 9, &key, err, sizeof(err)) == 0 && key == 0);
    CHECK(pnmf_container_seek(r, 5, &first, err, sizeof(err)) == 0 && first == 4);
    CHECK(pnmf_container_read_window(r, &p, &size, &first, &count, err, sizeof(err)) == PNMF_ERR_CORRUPT &&
          strstr(err, "continues the one before it"));
    CHECK(pnmf_container_seek(r, 0, &first, err, sizeof(err)) == 0);
    for (int i = 0; i < 3; i++)
        CHECK(pnmf_container_read_window(r, &p, &size, &first, &count, err, sizeof(err)) == 1 &&
              !memcmp(p, w.data[i], size));
    pnmf_container_reader_close(&r);
    fclose(f);
    f = mem_file(files[0], sizes[0]);
    CHECK(pnmf_container_reader_open(&r, f, err, sizeof(err)) == 0);
    CHECK(pnmf_container_key_frame(r, 9, &key, err, sizeof(err)) == 0 && key == 8);
    pnmf_container_reader_close(&r);
    fclose(f);
    free(files[0]), free(files[1]);
    windows_free(&w);
}

static void test_unknown_chunks(void)
{
    PnmfHeader h = ref_header();
    Windows w = ref_windows(), back;
    char err[128];
    size_t n;
    int ret;
    uint8_t *file = write_file(&h, &w, &n, &ret);

    /* Header extended to 88 bytes (8 bytes past version 8's extension,
     * which a v8 reader ignores), unknown chunks before, between and after
     * the windows. */
    uint8_t hdr[88];
    memcpy(hdr, file, HS - 4);
    pnmf_wl16(hdr + 12, 88);
    memset(hdr + HS - 4, 0xA5, 8);
    fix_header_crc(hdr, sizeof(hdr));
    static const uint8_t junk[5] = { 'h', 'e', 'l', 'l', 'o' };
    Buf b = { 0 }, index = { 0 };
    buf_add(&b, hdr, sizeof(hdr));
    add_chunk(&b, PNMF_FOURCC('m', 'e', 't', 'a'), junk, sizeof(junk));
    for (int i = 0; i < 3; i++) {
        add_window(&b, &index, w.first[i], w.count[i], w.data[i], w.size[i]);
        add_chunk(&b, PNMF_FOURCC('x', 'y', 'z', (char)('0' + i)), junk, (size_t)i);
    }
    add_end(&b, &index);
    ret = read_bytes(b.p, b.n, 0, &back, err, sizeof(err));
    CHECK_MSG(ret == 3, "%d %s", ret, err);
    CHECK(windows_equal(&w, &back));
    windows_free(&back);
    CHECK(read_bytes(b.p, b.n, 1, NULL, err, sizeof(err)) == 3);

    PnmfContainerReader *r;
    FILE *f = mem_file(b.p, b.n);
    CHECK(pnmf_container_reader_open(&r, f, err, sizeof(err)) == 0);
    check_seek(r, &w, 6, 1);
    check_seek(r, &w, 9, 2);
    pnmf_container_reader_close(&r);
    fclose(f);

    /* An index entry must point at the window itself, not at a chunk
     * before it ('xyz0', 12 bytes, just before window 1). */
    {
        Buf b2 = { 0 }, index2 = { 0 };
        buf_add(&b2, hdr, sizeof(hdr));
        for (int i = 0; i < 3; i++) {
            add_window(&b2, &index2, w.first[i], w.count[i], w.data[i], w.size[i]);
            add_chunk(&b2, PNMF_FOURCC('x', 'y', 'z', (char)('0' + i)), junk, 0);
        }
        pnmf_wl64(index2.p + 16, pnmf_rl64(index2.p + 16) - 12);
        add_end(&b2, &index2);
        CHECK(read_bytes(b2.p, b2.n, 0, NULL, err, sizeof(err)) == PNMF_ERR_CORRUPT);
        uint32_t first;
        f = mem_file(b2.p, b2.n);
        CHECK(pnmf_container_reader_open(&r, f, err, sizeof(err)) == 0);
        CHECK(pnmf_container_seek(r, 5, &first, err, sizeof(err)) == 0);
        const uint8_t *p;
        size_t size;
        uint32_t count;
        CHECK(pnmf_container_read_window(r, &p, &size, &first, &count, err, sizeof(err)) ==
              PNMF_ERR_CORRUPT);
        CHECK(strstr(err, "does not point at a window") != NULL);
        check_seek(r, &w, 9, 2); /* the others are fine */
        pnmf_container_reader_close(&r);
        fclose(f);
        free(b2.p);
        free(index2.p);
    }

    /* An unknown chunk is still checked. */
    b.p[88 + 8] ^= 1;
    CHECK(read_bytes(b.p, b.n, 0, NULL, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    CHECK(!strcmp(err, "chunk 0: crc mismatch"));
    free(b.p);
    free(index.p);
    windows_free(&w);
    free(file);
}

/* Files with valid CRCs whose structure is wrong. */
static void test_structure(void)
{
    PnmfHeader h = ref_header();
    Windows w = ref_windows();
    char err[128];
    size_t n;
    int ret;
    uint8_t *file = write_file(&h, &w, &n, &ret);
    const uint32_t firsts[3][3] = { { 0, 4, 8 }, { 0, 5, 8 }, { 0, 4, 4 } };
    const uint32_t counts[4][3] = { { 4, 4, 2 }, { 4, 4, 3 }, { 4, 0, 2 }, { 4, 5, 1 } };
    for (int a = 0; a < 3; a++) {
        for (int c = 0; c < 4; c++) {
            Buf b = { 0 }, index = { 0 };
            buf_add(&b, file, HS);
            for (int i = 0; i < 3; i++)
                add_window(&b, &index, firsts[a][i], counts[c][i], w.data[i], w.size[i]);
            add_end(&b, &index);
            /* The reader stops at the first bad window, before its payload. */
            static const int fail_first[3] = { 3, 1, 2 }, fail_count[4] = { 3, 2, 1, 1 };
            const int good = fail_first[a] < fail_count[c] ? fail_first[a] : fail_count[c];
            Windows back;
            ret = read_bytes(b.p, b.n, 0, &back, err, sizeof(err));
            if (a == 0 && c == 0) CHECK_MSG(ret == 3, "%s", err);
            else CHECK_MSG(ret == PNMF_ERR_CORRUPT, "case %d %d: %d %s", a, c, ret, err);
            CHECK_MSG(back.n == good, "case %d %d: %d windows read", a, c, back.n);
            windows_free(&back);
            free(b.p);
            free(index.p);
        }
    }

    /* A window missing from the end, and an index that lies. */
    Buf b = { 0 }, index = { 0 };
    buf_add(&b, file, HS);
    for (int i = 0; i < 2; i++)
        add_window(&b, &index, w.first[i], w.count[i], w.data[i], w.size[i]);
    add_end(&b, &index);
    CHECK(read_bytes(b.p, b.n, 0, NULL, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    CHECK(!strcmp(err, "index after 8 of 10 frames"));
    free(b.p);
    free(index.p);

    /* An index that lies about frame counts (0+4, 4+3, 7+3): still
     * contiguous, but the window found by a seek says otherwise. */
    memset(&b, 0, sizeof(b));
    memset(&index, 0, sizeof(index));
    buf_add(&b, file, HS);
    for (int i = 0; i < 3; i++)
        add_window(&b, &index, w.first[i], w.count[i], w.data[i], w.size[i]);
    pnmf_wl32(index.p + 16 + 12, 3);
    pnmf_wl32(index.p + 32 + 8, 7);
    pnmf_wl32(index.p + 32 + 12, 3);
    add_end(&b, &index);
    CHECK(read_bytes(b.p, b.n, 0, NULL, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    {
        PnmfContainerReader *r;
        uint32_t first, count;
        const uint8_t *p;
        size_t size;
        FILE *f = mem_file(b.p, b.n);
        CHECK(pnmf_container_reader_open(&r, f, err, sizeof(err)) == 0);
        CHECK(pnmf_container_seek(r, 5, &first, err, sizeof(err)) == 0 && first == 4);
        CHECK(pnmf_container_read_window(r, &p, &size, &first, &count, err, sizeof(err)) ==
              PNMF_ERR_CORRUPT);
        pnmf_container_reader_close(&r);
        fclose(f);
    }
    free(b.p);
    free(index.p);

    /* Window chunks too short to hold their own fields. */
    for (size_t len = 0; len < 8; len += 7) {
        static const uint8_t zero8[8];
        memset(&b, 0, sizeof(b));
        memset(&index, 0, sizeof(index));
        buf_add(&b, file, HS);
        add_chunk(&b, PNMF_CHUNK_WINDOW, zero8, len);
        add_end(&b, &index);
        CHECK(read_bytes(b.p, b.n, 0, NULL, err, sizeof(err)) == PNMF_ERR_CORRUPT);
        CHECK(!strcmp(err, "chunk 0: window chunk too short"));
        free(b.p);
        free(index.p);
    }

    /* Something between the index chunk and the trailer. */
    memset(&b, 0, sizeof(b));
    memset(&index, 0, sizeof(index));
    buf_add(&b, file, HS);
    for (int i = 0; i < 3; i++)
        add_window(&b, &index, w.first[i], w.count[i], w.data[i], w.size[i]);
    add_end(&b, &index);
    {
        const size_t t = b.n - 16;
        uint8_t trailer[16];
        memcpy(trailer, b.p + t, 16);
        b.n = t;
        add_chunk(&b, PNMF_FOURCC('j', 'u', 'n', 'k'), NULL, 0);
        buf_add(&b, trailer, 16);
        PnmfContainerReader *r;
        uint32_t first;
        FILE *f = mem_file(b.p, b.n);
        CHECK(pnmf_container_reader_open(&r, f, err, sizeof(err)) == 0);
        CHECK(pnmf_container_seek(r, 5, &first, err, sizeof(err)) == PNMF_ERR_CORRUPT);
        CHECK(!strcmp(err, "trailer does not point at the index"));
        pnmf_container_reader_close(&r);
        fclose(f);
        CHECK(read_bytes(b.p, b.n, 0, NULL, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    }
    free(b.p);
    free(index.p);
    memset(&b, 0, sizeof(b));
    memset(&index, 0, sizeof(index));
    buf_add(&b, file, HS);
    for (int i = 0; i < 3; i++)
        add_window(&b, &index, w.first[i], w.count[i], w.data[i], w.size[i]);
    pnmf_wl64(index.p + 16, pnmf_rl64(index.p + 16) + 1); /* window 1's offset */
    add_end(&b, &index);
    CHECK(read_bytes(b.p, b.n, 0, NULL, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    CHECK(!strcmp(err, "index does not match the windows"));
    PnmfContainerReader *r;
    uint32_t first;
    FILE *f = mem_file(b.p, b.n);
    CHECK(pnmf_container_reader_open(&r, f, err, sizeof(err)) == 0);
    CHECK(pnmf_container_seek(r, 5, &first, err, sizeof(err)) == 0);
    const uint8_t *p;
    size_t size;
    uint32_t count;
    CHECK(pnmf_container_read_window(r, &p, &size, &first, &count, err, sizeof(err)) < 0);
    pnmf_container_reader_close(&r);
    fclose(f);
    free(b.p);
    free(index.p);
    windows_free(&w);
    free(file);
}

/* A window payload over the bound is refused by writer and reader. */

static void payload_limit(int canvas)
{
    PnmfHeader h = ref_header();
    h.width = h.height = 16;
    if (canvas) h.shift_model = 2, h.canvas_height = 20, h.canvas_width = 32;
    h.components = 1;
    h.window = 1;
    h.frame_count = 1;
    /* bound = 1 MiB + 16 * pixels * (1 + 1) bytes, pixels of the torus:
     * the frame, or the canvas with the canvas model */
    const size_t bound = (1u << 20) + 16 * (canvas ? 20 * 32 : 256) * 2;
    uint8_t *zeros = calloc(1, bound + 1);
    char err[128];
    PnmfContainerWriter *wr = NULL;
    FILE *f = tmpfile();
    CHECK(pnmf_container_writer_open(&wr, f, &h, 3, err, sizeof(err)) == 0);
    CHECK(pnmf_container_write_window(wr, 0, 1, zeros, bound + 1, err, sizeof(err)) ==
          PNMF_ERR_LIMIT);
    CHECK(pnmf_container_write_window(wr, 0, 1, zeros, bound, err, sizeof(err)) == 0);
    CHECK(pnmf_container_writer_finish(wr, 1, err, sizeof(err)) == 0);
    pnmf_container_writer_close(&wr);
    size_t n;
    uint8_t *file = slurp(f, &n);
    fclose(f);
    Windows back;
    CHECK(read_bytes(file, n, 0, &back, err, sizeof(err)) == 1);
    CHECK(back.size[0] == bound);
    windows_free(&back);

    Buf b = { 0 }, index = { 0 };
    buf_add(&b, file, HS);
    add_window(&b, &index, 0, 1, zeros, bound + 1);
    add_end(&b, &index);
    CHECK(read_bytes(b.p, b.n, 0, NULL, err, sizeof(err)) == PNMF_ERR_LIMIT);
    CHECK(strstr(err, "over the limit") != NULL);
    CHECK(read_bytes(b.p, b.n, 1, NULL, err, sizeof(err)) == PNMF_ERR_LIMIT);
    free(b.p);
    free(index.p);
    free(file);
    free(zeros);
}

/* A coding over PNMF_PRICE_BIG_SIZE bytes is priced at
 * zstd level 3 (the container's rank level), and that frame is not the one written: the window
 * holds the writer's level-19 frame. Text-like bytes, which the two levels
 * compress to different sizes. */
static void test_big_price(void)
{
    PnmfHeader h = ref_header();
    h.frame_count = 0;
    h.width = 640;
    h.height = 480;
    const size_t n = PNMF_PRICE_BIG_SIZE + 4096;
    uint8_t *text = malloc(n);
    CHECK(text != NULL);
    static const char *const words[] = { "pixel ", "window ", "step ", "frame ", "level ", "coding ", "zstd ",
                                         "rate ",  "search ", "the ",  "of ",    "a ",      "model " };
    uint32_t seed = 7;
    for (size_t i = 0; i < n;) {
        seed = seed * 1103515245u + 12345u;
        const char *wd = words[(seed >> 16) % 13];
        for (size_t k = 0; wd[k] && i < n; k++) text[i++] = (uint8_t)wd[k];
    }
    char err[128] = "";
    FILE *f = tmpfile();
    PnmfContainerWriter *wr = NULL;
    CHECK(pnmf_container_writer_open(&wr, f, &h, 19, err, sizeof err) == 0);
    const uint8_t *codings[1] = { text };
    const size_t sizes[1] = { n };
    uint8_t *z = NULL;
    size_t cheap = 0, full = 0, priced = 0;
    CHECK(pnmf_entropy_compress(text, n, 3, &z, &cheap) == 0);
    pnmf_free(z);
    CHECK(pnmf_entropy_compress(text, n, 19, &z, &full) == 0);
    pnmf_free(z);
    CHECK_MSG(cheap != full, "levels %d and 19 made %zu bytes both", 3, full);
    const uint64_t before = pnmf_container_writer_bytes(wr);
    CHECK(pnmf_container_window_bytes(wr, 4, codings, sizes, 1, &priced) == 0);
    CHECK_MSG(priced == cheap, "priced %zu bytes, level %d makes %zu", priced, 3, cheap);
    int chosen = -1;
    CHECK(pnmf_container_write_window_best(wr, 0, 4, codings, sizes, 1, &chosen, err, sizeof err) == 0);
    CHECK_MSG(pnmf_container_writer_bytes(wr) == before + 20 + full, "wrote %llu bytes, level 19 makes %zu + 20",
              (unsigned long long)(pnmf_container_writer_bytes(wr) - before), full);
    pnmf_container_writer_close(&wr);
    fclose(f);
    free(text);
}

static void test_payload_limit(void)
{
    payload_limit(0);
    payload_limit(1);
}

/* Several codings of one window (pnmf_container_write_window_best): the
 * one whose chunk is the smallest is written and reported, and read back
 * as it was, in a key window and in a continuing one; 0 or more than
 * PNMF_MAX_CODINGS codings are refused. */
static void test_best_coding(void)
{
    PnmfHeader h = ref_header();
    h.frame_count = 0;
    enum { N = 3000 };
    static uint8_t noise[N], zeros[N], half[N];
    uint32_t seed = 99;
    for (int i = 0; i < N; i++) {
        seed = seed * 1103515245u + 12345u;
        noise[i] = (uint8_t)(seed >> 16);
        half[i] = i < N / 2 ? noise[i] : 0;
    }
    char err[128] = "";
    FILE *f = tmpfile();
    PnmfContainerWriter *wr = NULL;
    CHECK(pnmf_container_writer_open(&wr, f, &h, 19, err, sizeof err) == 0);
    const uint8_t *codings[3] = { noise, zeros, half };
    const size_t sizes[3] = { N, N, N };
    int chosen = -1;
    /* pnmf_container_window_bytes() says what the window's chunk will hold
     * (its zstd frame; 20 bytes of framing besides) and writes nothing */
    size_t predicted = 0, noise_only = 0;
    uint64_t before = pnmf_container_writer_bytes(wr);
    CHECK(pnmf_container_window_bytes(wr, 4, codings, sizes, 3, &predicted) == 0);
    CHECK(pnmf_container_window_bytes(wr, 4, codings, sizes, 1, &noise_only) == 0);
    CHECK_MSG(predicted < 100 && noise_only > N, "predicted %zu and %zu bytes", predicted, noise_only);
    CHECK(pnmf_container_writer_bytes(wr) == before);
    CHECK(pnmf_container_write_window_best(wr, 0, 4, codings, sizes, 3, &chosen, err, sizeof err) == 0);
    CHECK_MSG(chosen == 1, "chose coding %d, not the zeros", chosen);
    CHECK_MSG(pnmf_container_writer_bytes(wr) == before + 20 + predicted, "wrote %llu bytes, predicted %zu + 20",
              (unsigned long long)(pnmf_container_writer_bytes(wr) - before), predicted);
    /* a continuing window (compressed with the last payload as a prefix)
     * chooses the same way, and its prediction is compressed so too */
    const uint8_t *c2[2] = { noise, zeros };
    pnmf_container_writer_set_continues(wr, 1);
    before = pnmf_container_writer_bytes(wr);
    CHECK(pnmf_container_window_bytes(wr, 4, c2, sizes, 2, &predicted) == 0);
    CHECK(pnmf_container_write_window_best(wr, 4, 4, c2, sizes, 2, &chosen, err, sizeof err) == 0 && chosen == 1);
    CHECK(pnmf_container_writer_bytes(wr) == before + 20 + predicted);
    CHECK(pnmf_container_window_bytes(wr, 0, c2, sizes, 2, &predicted) == PNMF_ERR_ARG && predicted == SIZE_MAX);
    const uint8_t *c3[PNMF_MAX_CODINGS + 1];
    size_t s3[PNMF_MAX_CODINGS + 1];
    for (int i = 0; i <= PNMF_MAX_CODINGS; i++) c3[i] = noise, s3[i] = N;
    CHECK(pnmf_container_write_window_best(wr, 8, 2, c3, s3, 0, &chosen, err, sizeof err) == PNMF_ERR_ARG);
    CHECK(pnmf_container_write_window_best(wr, 8, 2, c3, s3, PNMF_MAX_CODINGS + 1, &chosen, err, sizeof err) ==
          PNMF_ERR_ARG);
    CHECK(pnmf_container_write_window_best(wr, 8, 2, c3, s3, 1, &chosen, err, sizeof err) == 0 && chosen == 0);
    CHECK(pnmf_container_writer_finish(wr, 10, err, sizeof err) == 0);
    pnmf_container_writer_close(&wr);
    rewind(f);
    Windows back;
    CHECK(read_file(f, NULL, &back, err, sizeof err) == 3);
    CHECK(back.size[0] == N && !memcmp(back.data[0], zeros, N));
    CHECK(back.size[1] == N && !memcmp(back.data[1], zeros, N));
    CHECK(back.size[2] == N && !memcmp(back.data[2], noise, N));
    for (int i = 0; i < back.n; i++) free(back.data[i]);
    fclose(f);
}

/* ---- frame times and colour (format 8) ---- */

/* The durations of the timed reference file: frame f lasts dur(f). */
static uint32_t ref_duration(int f) { return f < 3 ? 10 : 50; }

/* The reference windows written with a time base of 1/100, starting at
 * 7, and the colour of a limited-range BT.709 clip. */
static uint8_t *write_timed(size_t *n, int *ret, PnmfHeader *hp)
{
    char err[128] = "";
    PnmfHeader h = ref_header();
    h.frame_count = 0;
    h.tb_num = 1, h.tb_den = 100;
    h.color_range = 1, h.color_primaries = 1, h.color_trc = 1, h.colorspace = 1;
    if (hp) *hp = h;
    Windows w = ref_windows();
    FILE *f = tmpfile();
    PnmfContainerWriter *wr = NULL;
    *ret = pnmf_container_writer_open(&wr, f, &h, 19, err, sizeof(err));
    if (*ret >= 0) *ret = pnmf_container_writer_set_time_start(wr, 7);
    for (int i = 0; *ret >= 0 && i < w.n; i++) {
        for (uint32_t k = 0; k < w.count[i]; k++)
            if (*ret >= 0) *ret = pnmf_container_writer_add_duration(wr, ref_duration((int)(w.first[i] + k)));
        if (*ret >= 0) *ret = pnmf_container_write_window(wr, w.first[i], w.count[i], w.data[i], w.size[i], err, sizeof(err));
    }
    if (*ret >= 0) *ret = pnmf_container_writer_finish(wr, 10, err, sizeof(err));
    pnmf_container_writer_close(&wr);
    windows_free(&w);
    uint8_t *p = slurp(f, n);
    fclose(f);
    return p;
}

/* The offset of the i-th chunk of type t, or 0. */
static size_t find_chunk(const uint8_t *p, size_t n, uint32_t t, int i)
{
    for (size_t off = pnmf_rl16(p + 12); off + 12 <= n - 16;) {
        if (pnmf_rl32(p + off) == t && i-- == 0) return off;
        if (pnmf_rl32(p + off) == PNMF_CHUNK_INDEX) return 0;
        off += 12 + pnmf_rl32(p + off + 4);
    }
    return 0;
}

/* Read p with byte off set to v and the CRC of the chunk at chunk (0: the
 * header) made good again. */
static int read_time_patched(const uint8_t *file, size_t n, size_t chunk, size_t off, uint8_t v, char *err,
                             size_t errlen)
{
    uint8_t *p = malloc(n);
    memcpy(p, file, n);
    p[off] = v;
    if (chunk) {
        const uint32_t len = pnmf_rl32(p + chunk + 4);
        pnmf_wl32(p + chunk + 8 + len, pnmf_crc32(0, p + chunk, 8 + len));
    } else {
        fix_header_crc(p, HS);
    }
    const int ret = read_bytes(p, n, 0, NULL, err, errlen);
    free(p);
    return ret;
}

static void test_times(void)
{
    char err[160] = "";
    size_t n;
    int ret;
    PnmfHeader h;
    uint8_t *file = write_timed(&n, &ret, &h);
    CHECK_MSG(ret == 0, "%d", ret);
    /* header extension, then a 'TIME' chunk before each window */
    CHECK(pnmf_rl16(file + 8) == 21 && pnmf_rl16(file + 10) == 13 && pnmf_rl16(file + 12) == HS);
    CHECK(file[60] == 1 && file[61] == 1 && file[62] == 1 && file[63] == 1);
    CHECK(pnmf_rl32(file + 64) == 1 && pnmf_rl32(file + 68) == 100 && pnmf_rl32(file + 72) == 0);
    const size_t t0 = find_chunk(file, n, PNMF_CHUNK_TIME, 0), t1 = find_chunk(file, n, PNMF_CHUNK_TIME, 1);
    CHECK(t0 == HS && t1 && find_chunk(file, n, PNMF_CHUNK_TIME, 3) == 0);
    CHECK(pnmf_rl32(file + t0 + 8) == 0 && pnmf_rl64(file + t0 + 12) == 7);
    /* window 0: 3 frames of 10, 1 of 50: two runs */
    CHECK(pnmf_rl32(file + t0 + 4) == 12 + 4 && !memcmp(file + t0 + 20, "\x03\x0a\x01\x32", 4));
    CHECK(pnmf_rl32(file + t1 + 8) == 4 && pnmf_rl64(file + t1 + 12) == 7 + 30 + 50);

    /* read back: the times of every frame, sequentially and after a seek */
    FILE *f = mem_file(file, n);
    PnmfContainerReader *r = NULL;
    CHECK(pnmf_container_reader_open(&r, f, err, sizeof(err)) == 0);
    const PnmfHeader *rh = pnmf_container_reader_header(r);
    CHECK(rh->tb_num == 1 && rh->tb_den == 100 && rh->color_range == 1 && rh->colorspace == 1);
    uint64_t t = 7;
    int frame = 0, bad = 0;
    const uint8_t *p;
    size_t size;
    uint32_t first, count;
    while (pnmf_container_read_window(r, &p, &size, &first, &count, err, sizeof(err)) == 1) {
        const uint64_t *pts;
        bad |= pnmf_container_window_times(r, &pts) != count;
        for (uint32_t k = 0; !bad && k < count; k++, frame++) {
            bad |= pts[k] != t;
            t += ref_duration(frame);
        }
        bad |= pts[count] != t;
    }
    CHECK_MSG(!bad && frame == 10, "%s", err);
    CHECK(pnmf_container_seek(r, 9, &first, err, sizeof(err)) == 0 && first == 8);
    CHECK(pnmf_container_read_window(r, &p, &size, &first, &count, err, sizeof(err)) == 1);
    const uint64_t *pts;
    CHECK(pnmf_container_window_times(r, &pts) == 2 && pts[0] == 7 + 30 + 5 * 50 && pts[2] == pts[0] + 100);
    CHECK(pnmf_container_seek(r, 0, &first, err, sizeof(err)) == 0 && first == 0);
    CHECK(pnmf_container_read_window(r, &p, &size, &first, &count, err, sizeof(err)) == 1);
    CHECK(pnmf_container_window_times(r, &pts) == 4 && pts[0] == 7);
    pnmf_container_reader_close(&r);
    fclose(f);

    /* hostile values: corrupt */
    CHECK(read_time_patched(file, n, 0, 68, 0, err, sizeof(err)) == PNMF_ERR_CORRUPT); /* tb_den 0 */
    CHECK_MSG(strstr(err, "bad time base 1/0") != NULL, "%s", err);
    CHECK(read_time_patched(file, n, 0, 60, 3, err, sizeof(err)) == PNMF_ERR_CORRUPT); /* range 3 */
    CHECK(strstr(err, "colour range 3") != NULL);
    CHECK(read_time_patched(file, n, 0, 72, 1, err, sizeof(err)) == PNMF_ERR_CORRUPT); /* reserved */
    CHECK(read_time_patched(file, n, t0, t0 + 20, 2, err, sizeof(err)) == PNMF_ERR_CORRUPT); /* 3 frames of 4 */
    CHECK_MSG(strstr(err, "times of 3 frames, the window at frame 1 has 4") != NULL, "%s", err);
    CHECK(read_time_patched(file, n, t0, t0 + 21, 0, err, sizeof(err)) == PNMF_ERR_CORRUPT); /* duration 0 */
    CHECK(strstr(err, "a run of 3 frames of duration 0") != NULL);
    CHECK(read_time_patched(file, n, t0, t0 + 20, 9, err, sizeof(err)) == PNMF_ERR_CORRUPT); /* past the window */
    CHECK(read_time_patched(file, n, t0, t0 + 23, 0x80, err, sizeof(err)) == PNMF_ERR_CORRUPT); /* varint cut */
    CHECK(strstr(err, "truncated frame times") != NULL);
    CHECK(read_time_patched(file, n, t0, t0 + 8, 1, err, sizeof(err)) == PNMF_ERR_CORRUPT); /* first frame 1 */
    CHECK(read_time_patched(file, n, t1, t1 + 12, 0, err, sizeof(err)) == PNMF_ERR_CORRUPT); /* a jump */
    CHECK_MSG(strstr(err, "do not follow the window before") != NULL, "%s", err);
    CHECK(read_time_patched(file, n, t0, t0 + 19, 0x80, err, sizeof(err)) == PNMF_ERR_CORRUPT); /* start >= 2^62 */
    CHECK(read_time_patched(file, n, t0, t0 + 3, 'X', err, sizeof(err)) == PNMF_ERR_CORRUPT); /* 'TIMX': skipped */
    CHECK_MSG(strstr(err, "the window at frame 1 has no frame times") != NULL, "%s", err);
    /* no time base, 'TIME' chunks all the same */
    uint8_t *q = malloc(n);
    memcpy(q, file, n);
    pnmf_wl32(q + 64, 0), pnmf_wl32(q + 68, 0);
    fix_header_crc(q, HS);
    CHECK(read_bytes(q, n, 0, NULL, err, sizeof(err)) == PNMF_ERR_CORRUPT);
    CHECK(strstr(err, "frame times in a file without a time base") != NULL);
    /* a file of version 7 knows no 'TIME' chunk: skipped, as a v7 reader does */
    pnmf_wl16(q + 8, 7);
    pnmf_wl16(q + 10, 7);
    fix_header_crc(q, HS);
    CHECK(read_bytes(q, n, 0, NULL, err, sizeof(err)) == 3);
    free(q);

    /* the writer: durations needed, within 1..2^32-1, only with a time base */
    PnmfContainerWriter *wr = NULL;
    f = tmpfile();
    CHECK(pnmf_container_writer_open(&wr, f, &h, 3, err, sizeof(err)) == 0);
    CHECK(pnmf_container_writer_add_duration(wr, 0) == PNMF_ERR_ARG);
    CHECK(pnmf_container_writer_add_duration(wr, UINT64_C(1) << 32) == PNMF_ERR_ARG);
    CHECK(pnmf_container_writer_add_duration(wr, 5) == 0);
    static const uint8_t pl[4] = { 1, 2, 3, 4 };
    CHECK(pnmf_container_write_window(wr, 0, 2, pl, 4, err, sizeof(err)) == PNMF_ERR_ARG);
    CHECK(strstr(err, "durations for 1 frames, the window has 2") != NULL);
    pnmf_container_writer_close(&wr);
    fclose(f);
    PnmfHeader hu = ref_header();
    f = tmpfile();
    CHECK(pnmf_container_writer_open(&wr, f, &hu, 3, err, sizeof(err)) == 0);
    CHECK(pnmf_container_writer_add_duration(wr, 5) == PNMF_ERR_ARG);
    pnmf_container_writer_close(&wr);
    fclose(f);
    hu.tb_num = 1; /* a time base of 1/0 */
    f = tmpfile();
    CHECK(pnmf_container_writer_open(&wr, f, &hu, 3, err, sizeof(err)) == PNMF_ERR_ARG);
    fclose(f);
    free(file);
}

/* The cheap probe before a slow zstd level: where it stores every block
 * raw, its frame must be the very frame the slow level makes; where the
 * input shrinks, the slow level's frame is the result. The same with the
 * double-fast probe alone (pnmf_entropy_compress_probed(), light 0). */
static void test_raw_probe(void)
{
    const size_t big = 1200000, pre = 400000;
    uint8_t *src = malloc(big), *prefix = malloc(pre);
    uint32_t x = 12345;
    for (size_t i = 0; i < big; i++) src[i] = (uint8_t)((x = x * 1664525u + 1013904223u) >> 24);
    for (size_t i = 0; i < pre; i++) prefix[i] = (uint8_t)((x = x * 1664525u + 1013904223u) >> 24);
    /* under, just over and well over PNMF_ZSTD_PROBE_MIN_SIZE */
    static const size_t sizes[] = { 20000, 140000, 1200000 };
    for (int k = 0; k < 3; k++)
        for (int withp = 0; withp < 2; withp++) {
            const size_t n = sizes[k];
            uint8_t *z = NULL, *zf = NULL;
            size_t zn = 0, zfn = 0;
            CHECK(pnmf_entropy_compress_prefix(src, n, withp ? prefix : NULL, withp ? pre : 0, 19, &z, &zn) == 0);
            CHECK(pnmf_entropy_compress_full(src, n, withp ? prefix : NULL, withp ? pre : 0, 19, &zf, &zfn) == 0);
            /* below the probe's size both calls run the same search:
             * the comparison means something only from that size on */
            if (n >= PNMF_ZSTD_PROBE_MIN_SIZE) CHECK(zn == zfn && !memcmp(z, zf, zn));
            CHECK(pnmf_entropy_frame_raw(z, zn));
            /* the double-fast probe alone (a lossless window's codings):
             * the same raw frame */
            uint8_t *zd = NULL;
            size_t zdn = 0;
            CHECK(pnmf_entropy_compress_probed(src, n, withp ? prefix : NULL, withp ? pre : 0, 19, 0, &zd, &zdn) == 0);
            CHECK(zdn == zn && !memcmp(zd, z, zn));
            pnmf_free(zd);
            CHECK(zn > n);
            /* a cut or altered frame is not one of raw blocks */
            CHECK(!pnmf_entropy_frame_raw(z, zn - 1));
            CHECK(!pnmf_entropy_frame_raw(z, 8));
            const unsigned fhd = z[4], fcs = fhd >> 6, single = (fhd >> 5) & 1;
            const size_t head = 5 + !single + (fcs ? (size_t)1 << fcs : single);
            z[head] ^= 2; /* the first block's type: RLE */
            CHECK(!pnmf_entropy_frame_raw(z, zn));
            pnmf_free(z);
            pnmf_free(zf);
        }
    /* noise with a repeated stretch, and noise that repeats the prefix:
     * both shrink, and the slow level's frame is what comes out */
    memcpy(src + 600000, src + 100000, 40000);
    memcpy(src + 900000, prefix + 1000, 200000);
    for (int withp = 0; withp < 2; withp++) {
        uint8_t *z = NULL, *zf = NULL, *d = NULL;
        size_t zn = 0, zfn = 0, dn = 0;
        CHECK(pnmf_entropy_compress_prefix(src, big, withp ? prefix : NULL, withp ? pre : 0, 19, &z, &zn) == 0);
        CHECK(pnmf_entropy_compress_full(src, big, withp ? prefix : NULL, withp ? pre : 0, 19, &zf, &zfn) == 0);
        CHECK(zn == zfn && !memcmp(z, zf, zn));
        CHECK(!pnmf_entropy_frame_raw(z, zn));
        /* the double-fast probe shrinks it: the slow level's frame too */
        uint8_t *zd = NULL;
        size_t zdn = 0;
        CHECK(pnmf_entropy_compress_probed(src, big, withp ? prefix : NULL, withp ? pre : 0, 19, 0, &zd, &zdn) == 0);
        CHECK(zdn == zn && !memcmp(zd, z, zn));
        pnmf_free(zd);
        CHECK(zn < big - (withp ? 230000 : 30000));
        CHECK(pnmf_entropy_decompress_prefix(z, zn, withp ? prefix : NULL, withp ? pre : 0, big, &d, &dn) == 0);
        CHECK(dn == big && !memcmp(d, src, big));
        pnmf_free(d);
        pnmf_free(z);
        pnmf_free(zf);
    }
    CHECK(!pnmf_entropy_frame_raw(src, 100));
    free(src);
    free(prefix);
}

int main(void)
{
    test_raw_probe();
    test_best_coding();
    test_big_price();
    test_crc();
    test_entropy();
    test_round_trip();
    test_truncation();
    test_corruption();
    test_header_checks();
    test_writer_args();
    test_seek();
    test_continues();
    test_unknown_chunks();
    test_structure();
    test_payload_limit();
    test_times();
    return test_summary("test_container");
}
