/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * make_bad DIR: write the hand-made bad files of tests/golden/bad/ into DIR.
 *
 * Each is a small valid format v2 file (8x6 pixels, 5 frames in windows of 3
 * and 2, written by src/container.c's writer from models serialized by
 * src/model.c) with one thing wrong, made the way a bug or an attacker
 * would: a header field patched and the header CRC recomputed, a window
 * payload written by hand (varints) and compressed, a zstd frame written by
 * hand, or an index entry patched and its chunk CRC recomputed. A reader
 * that checked nothing but the CRCs would accept every one of them.
 * tests/golden/bad/MANIFEST says how pnmf-dec must refuse each.
 *
 * The files are committed; this program says how they are made and
 * remakes them (the zstd frames inside depend on the zstd version).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "container.h"
#include "entropy.h"
#include "internal.h"
#include "intra.h"
#include "lossless.h"
#include "model_write.h"
#include "rangecoder_enc.h"
#include "residual.h"
#include "sprite.h"
#include "varint.h"

#define W 8
#define H 6

/* ---- bytes ---- */

typedef struct Bytes {
    uint8_t *p;
    size_t n, cap;
} Bytes;

static void add(Bytes *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = 2 * (b->n + n) + 64;
        if (!(b->p = realloc(b->p, b->cap))) abort();
    }
    if (n) memcpy(b->p + b->n, p, n);
    b->n += n;
}

static void add_u32(Bytes *b, uint32_t v) { uint8_t t[4]; pnmf_wl32(t, v); add(b, t, 4); }
static void add_u64(Bytes *b, uint64_t v) { uint8_t t[8]; pnmf_wl64(t, v); add(b, t, 8); }

static void add_varint(Bytes *b, uint64_t v)
{
    while (v >= 0x80) {
        const uint8_t c = (uint8_t)(v | 0x80);
        add(b, &c, 1);
        v >>= 7;
    }
    const uint8_t c = (uint8_t)v;
    add(b, &c, 1);
}

static void add_signed(Bytes *b, int64_t v)
{
    add_varint(b, v < 0 ? ((uint64_t)(-(v + 1)) << 1) | 1 : (uint64_t)v << 1);
}

static void save(const char *dir, const char *name, const Bytes *b)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || (b->n && fwrite(b->p, 1, b->n, f) != b->n) || fclose(f)) {
        perror(path);
        exit(1);
    }
}

static void save_raw(const char *dir, const char *name, const void *p, size_t n)
{
    Bytes b = { 0 };
    add(&b, p, n);
    save(dir, name, &b);
    free(b.p);
}

/* ---- the valid file ---- */

static PnmfHeader header(void)
{
    PnmfHeader h;
    memset(&h, 0, sizeof(h));
    h.writer_version = PNMF_FORMAT_VERSION;
    h.min_reader_version = PNMF_FORMAT_VERSION;
    h.width = W, h.height = H;
    h.fps_num = 25, h.fps_den = 1;
    h.window = 3;
    h.components = 4;
    h.shift_model = 1; /* torus */
    h.quality = 16;
    h.w_step = 4, h.r_step = 1;
    return h;
}

/* Window w (0 or 1) of the valid file: two components, a 2x3 block with
 * a negative level and a 1x1 dot, each present in every frame, moving one
 * pixel a frame; in frame 1 the dot appears twice. */
static Bytes good_payload(int w)
{
    const int m = w ? 2 : 3;
    PnmfWindowModel md;
    if (pnmf_model_alloc(&md, H, W, H, W, m, 2, 3 * m) < 0) abort();
    md.comp[0].bh = 2, md.comp[0].bw = 3;
    md.comp[1].bh = 1, md.comp[1].bw = 1;
    for (int i = 0; i < 2; i++) {
        const int n = md.comp[i].bh * md.comp[i].bw;
        if (!(md.comp[i].lev = malloc(n * sizeof(int16_t)))) abort();
        for (int q = 0; q < n; q++) md.comp[i].lev[q] = (int16_t)(200 + 100 * q + 300 * i);
    }
    md.comp[0].lev[4] = -150;
    for (int j = 0; j < m; j++) {
        if (pnmf_model_add(&md, j, 0, 16, j * W + j) < 0 ||
            pnmf_model_add(&md, j, 1, 8 + j, 5 * W + 7 - j) < 0 ||
            (j == 1 && pnmf_model_add(&md, j, 1, 4, 2 * W + 2) < 0))
            abort();
    }
    uint8_t *p;
    size_t n;
    if (pnmf_model_write(&md, &p, &n) < 0) abort();
    pnmf_model_free(&md);
    Bytes b = { 0 };
    add(&b, p, n);
    pnmf_free(p);
    return b;
}

/* A file through the container writer: the header h, windows of the given
 * frame counts and payloads. */
static Bytes write_file(const PnmfHeader *h, int nwin, const int *count, const Bytes *payload)
{
    char err[256];
    FILE *f = tmpfile();
    PnmfContainerWriter *cw;
    if (!f || pnmf_container_writer_open(&cw, f, h, 19, err, sizeof(err)) < 0) {
        fprintf(stderr, "make_bad: %s\n", err);
        exit(1);
    }
    uint32_t first = 0;
    for (int i = 0; i < nwin; i++) {
        if (pnmf_container_write_window(cw, first, (uint32_t)count[i], payload[i].p,
                                        payload[i].n, err, sizeof(err)) < 0) {
            fprintf(stderr, "make_bad: %s\n", err);
            exit(1);
        }
        first += (uint32_t)count[i];
    }
    if (pnmf_container_writer_finish(cw, first, err, sizeof(err)) < 0) {
        fprintf(stderr, "make_bad: %s\n", err);
        exit(1);
    }
    pnmf_container_writer_close(&cw);
    Bytes b = { 0 };
    const long size = ftell(f);
    b.n = b.cap = (size_t)size;
    if (!(b.p = malloc(b.n))) abort();
    rewind(f);
    if (fread(b.p, 1, b.n, f) != b.n) abort();
    fclose(f);
    /* A v2 file needs a v2 reader: min_reader_version 2, whatever the
     * valid file it starts from holds there. */
    pnmf_wl16(b.p + 10, PNMF_FORMAT_VERSION);
    const uint32_t hs = pnmf_rl16(b.p + 12); /* the CRC ends the header */
    pnmf_wl32(b.p + hs - 4, pnmf_crc32(0, b.p, hs - 4));
    return b;
}

/* The valid file with window 0's payload replaced. */
/* A file of one window of `frames` frames whose payload is md as the
 * writer serializes it (md freed). */
static void save_model(const char *dir, const char *name, const PnmfHeader *h, PnmfWindowModel *md, int frames)
{
    uint8_t *p;
    size_t n;
    if (pnmf_model_write(md, &p, &n) < 0) abort();
    pnmf_model_free(md);
    Bytes pl = { 0 };
    add(&pl, p, n);
    pnmf_free(p);
    const int count[1] = { frames };
    Bytes f = write_file(h, 1, count, &pl);
    save(dir, name, &f);
    free(f.p), free(pl.p);
}

/* A payload p (n bytes) with its window flags (its first varint, read
 * into *flags) changed to (*flags & ~clear) | set. */
static Bytes reflag(const uint8_t *p, size_t n, uint64_t *flags, uint64_t clear, uint64_t set)
{
    Bytes q = { 0 };
    Rd r = { p, p + n };
    if (get_u(&r, flags) < 0) abort();
    add_varint(&q, (*flags & ~clear) | set);
    add(&q, r.p, (size_t)(r.end - r.p));
    return q;
}

static Bytes with_payload0(const Bytes *p0)
{
    const PnmfHeader h = header();
    const int count[2] = { 3, 2 };
    Bytes pl[2] = { *p0, good_payload(1) };
    Bytes b = write_file(&h, 2, count, pl);
    free(pl[1].p);
    return b;
}

/* The valid file with window 0's flags set to flag alone (0 before). */
static void flag_without_residual(const char *dir, const char *name, uint64_t flag)
{
    Bytes pl = good_payload(0);
    uint64_t flags = 0;
    Bytes q = reflag(pl.p, pl.n, &flags, 0, flag);
    if (flags) abort();
    Bytes f = with_payload0(&q);
    save(dir, name, &f);
    free(f.p), free(pl.p), free(q.p);
}

/* A key window of two 8x8 frames with a residual layer at step 4 and
 * nothing coded, in a file whose header says so: what the hand-made
 * residual files below change one thing of. */
static void two_frames(PnmfHeader *h, PnmfWindowModel *md)
{
    *h = header();
    h->width = 8, h->height = 8, h->window = 2;
    if (pnmf_model_alloc(md, 8, 8, 8, 8, 2, 1, 0) < 0 || pnmf_residual_alloc(&md->res, 2, 8, 8, 64, 64) < 0) abort();
}

/* ---- by hand: CRCs and whole files ---- */

/* The header's CRC, in its last four bytes (header_size at offset 12). */
static void fix_header_crc(Bytes *b)
{
    const uint32_t hs = pnmf_rl16(b->p + 12);
    pnmf_wl32(b->p + hs - 4, pnmf_crc32(0, b->p, hs - 4));
}

/* The chunk at offset `at`: recompute its CRC after a patch. */
static void fix_chunk_crc(Bytes *b, size_t at)
{
    const uint32_t len = pnmf_rl32(b->p + at + 4);
    pnmf_wl32(b->p + at + 8 + len, pnmf_crc32(0, b->p + at, 8 + (size_t)len));
}

static void add_chunk(Bytes *b, uint32_t type, const uint8_t *head, size_t hn, const uint8_t *body,
                      size_t bn)
{
    const size_t at = b->n;
    add_u32(b, type);
    add_u32(b, (uint32_t)(hn + bn));
    add(b, head, hn);
    add(b, body, bn);
    add_u32(b, pnmf_crc32(0, b->p + at, 8 + hn + bn));
}

/* The valid header (from the writer) and one window of frames 0..count-1
 * whose zstd data is given as is; header frame_count = count. */
static Bytes one_window_zstd(uint32_t count, const uint8_t *z, size_t zn)
{
    Bytes good = with_payload0(&(Bytes){ 0 });
    Bytes b = { 0 };
    add(&b, good.p, pnmf_rl16(good.p + 12));
    free(good.p);
    pnmf_wl32(b.p + 32, count);
    fix_header_crc(&b);
    const uint64_t wind_at = b.n;
    uint8_t head[8];
    pnmf_wl32(head, 0);
    pnmf_wl32(head + 4, count);
    add_chunk(&b, PNMF_CHUNK_WINDOW, head, 8, z, zn);
    const uint64_t index_at = b.n;
    Bytes ix = { 0 };
    add_u32(&ix, 1);
    add_u64(&ix, wind_at);
    add_u32(&ix, 0);
    add_u32(&ix, count);
    add_chunk(&b, PNMF_CHUNK_INDEX, ix.p, ix.n, NULL, 0);
    free(ix.p);
    add_u64(&b, index_at);
    add(&b, "\x89PNMFEND", 8);
    return b;
}

static Bytes compressed(const Bytes *payload, int level)
{
    uint8_t *z;
    size_t zn;
    if (pnmf_entropy_compress(payload->p, payload->n, level, &z, &zn) < 0) abort();
    Bytes b = { 0 };
    add(&b, z, zn);
    pnmf_free(z);
    return b;
}

/* ---- the files ---- */

/* The valid window 0. */
static Bytes p0;

static void header_variant(const char *dir, const char *name, size_t off, int size, uint64_t v)
{
    Bytes b = with_payload0(&p0);
    if (size == 1) b.p[off] = (uint8_t)v;
    else if (size == 2) pnmf_wl16(b.p + off, (uint32_t)v);
    else pnmf_wl32(b.p + off, (uint32_t)v);
    fix_header_crc(&b);
    save(dir, name, &b);
    free(b.p);
}

static void put_rc(void *enc, RcProb *p, int bit)
{
    if (p) rc_encode(enc, p, bit);
    else rc_encode_direct(enc, bit);
}

/* A magnitude of the placements' stream (docs/format.md, "Context-coded
 * placements"): Exp-Golomb, its prefix under contexts c.. */
static void craft_mag(RcEnc *e, RcProb *p, int c, uint64_t v)
{
    int n = 0;
    for (uint64_t u = v + 1; u > 1; u >>= 1) n++;
    for (int i = 0; i < n; i++) rc_encode(e, &p[c + (i < 11 ? i : 11)], 1);
    rc_encode(e, &p[c + (n < 11 ? n : 11)], 0);
    for (int i = n - 1; i >= 0; i--) rc_encode_direct(e, (int)((v + 1) >> i & 1));
}

/* A placements' stream made by hand for three frames: none in frame 0,
 * one new placement of pose 0 at (y1, 3) in frame 1, and in frame 2 one
 * that refers to frame 1's placement 0 + d, kept where it is. */
static Buf craft_places(int y1, int d)
{
    RcProb p[PNMF_PLACE_CTX];
    rc_probs_init(p, PNMF_PLACE_CTX);
    Buf b = { 0 };
    RcEnc e;
    rc_enc_init(&e, &b);
    rc_encode(&e, &p[2], 1);    /* frame 0: the count 0, as the one before */
    rc_encode(&e, &p[0], 0);    /* frame 1: another count, */
    rc_encode(&e, &p[3], 0);    /* + */
    craft_mag(&e, p, 4, 0);     /* 1 */
    craft_mag(&e, p, 105, 0);   /* a new placement: pose 0, */
    rc_encode(&e, &p[117], 0);  /* y >= 0 */
    craft_mag(&e, p, 119, (uint64_t)y1);
    rc_encode(&e, &p[118], 0);  /* x >= 0 */
    craft_mag(&e, p, 131, 3);
    rc_encode(&e, &p[1], 1);    /* frame 2: the count 1, as the one before */
    rc_encode(&e, &p[16], d == 0); /* the expected reference (placement 0, no reference) */
    if (d) {
        rc_encode(&e, &p[25], 0); /* not on its own: another reference */
        rc_encode(&e, &p[28], d < 0);
        craft_mag(&e, p, 29, (uint64_t)(d < 0 ? -d : d) - 1);
    }
    rc_encode(&e, &p[41], 0);   /* the pose kept */
    rc_encode(&e, &p[63], 1);   /* the position predicted */
    rc_enc_finish(&e);
    return b;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make_bad DIR\n");
        return 2;
    }
    const char *dir = argv[1];

    /* The valid file itself, for reference (bad/ holds only bad ones). */
    p0 = good_payload(0);
    Bytes good = with_payload0(&p0);
    const size_t wind0 = pnmf_rl16(good.p + 12), wind1 = wind0 + 12 + pnmf_rl32(good.p + wind0 + 4);
    const size_t index_at = (size_t)pnmf_rl64(good.p + good.n - 16);

    /* Not a pnmf file at all. */
    save_raw(dir, "empty.pnmf", "", 0);
    save_raw(dir, "three_bytes.pnmf", "\x89PN", 3);
    save_raw(dir, "text.pnmf", "This is a text file, not a video.\n", 34);
    save_raw(dir, "png_renamed.pnmf",
             "\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\1\0\0\0\1\x08\0\0\0\0\x3a\x7e\x9b\x55"
             "\0\0\0\nIDATx\x9c\x63\x60\0\0\0\x02\0\x01\xe5\x27\xde\xfc\0\0\0\0IEND\xae\x42\x60\x82",
             67);
    {   /* a pnmf file sent through a text-mode (LF -> CRLF) transfer */
        Bytes b = { 0 };
        for (size_t i = 0; i < good.n; i++) {
            if (good.p[i] == '\n') add(&b, "\r", 1);
            add(&b, good.p + i, 1);
        }
        save(dir, "crlf_damaged.pnmf", &b);
        free(b.p);
    }

    /* Header. */
    {
        Bytes b = with_payload0(&p0);
        pnmf_wl16(b.p + 8, 10);
        pnmf_wl16(b.p + 10, 10); /* writer and min reader version 10 */
        fix_header_crc(&b);
        save(dir, "version_9.pnmf", &b);
        pnmf_wl16(b.p + 8, 22);
        pnmf_wl16(b.p + 10, 22); /* writer and min reader version 22: too new */
        fix_header_crc(&b);
        save(dir, "version_22.pnmf", &b);
        pnmf_wl16(b.p + 8, 1);
        pnmf_wl16(b.p + 10, 1); /* a format v1 file: too old */
        fix_header_crc(&b);
        save(dir, "version_1.pnmf", &b);
        free(b.p);
    }
    header_variant(dir, "version_fields.pnmf", 10, 2, 0);
    header_variant(dir, "reserved_bits.pnmf", 57, 1, 0x10);
    header_variant(dir, "reserved_u16.pnmf", 14, 2, 0x8000);
    header_variant(dir, "reserved_46.pnmf", 46, 2, 1);
    header_variant(dir, "width_0.pnmf", 16, 4, 0);
    header_variant(dir, "height_0.pnmf", 20, 4, 0);
    {
        Bytes b = with_payload0(&p0);
        pnmf_wl32(b.p + 16, 65535);
        pnmf_wl32(b.p + 20, 65535);
        fix_header_crc(&b);
        save(dir, "size_65535x65535.pnmf", &b);
        /* width * height * frames * components would overflow 64 bits */
        pnmf_wl32(b.p + 16, UINT32_MAX);
        pnmf_wl32(b.p + 20, UINT32_MAX);
        pnmf_wl32(b.p + 32, UINT32_MAX);
        pnmf_wl16(b.p + 36, UINT16_MAX);
        pnmf_wl16(b.p + 38, UINT16_MAX);
        fix_header_crc(&b);
        save(dir, "size_overflow_64.pnmf", &b);
        free(b.p);
    }
    {
        Bytes b = with_payload0(&p0);
        pnmf_wl32(b.p + 16, 16384);
        pnmf_wl32(b.p + 20, 4097); /* each side is fine, not the product */
        fix_header_crc(&b);
        save(dir, "pixels_over.pnmf", &b);
        free(b.p);
    }
    header_variant(dir, "frames_over.pnmf", 32, 4, (1u << 28) + 1);
    header_variant(dir, "window_0.pnmf", 36, 2, 0);
    header_variant(dir, "components_0.pnmf", 38, 2, 0);
    header_variant(dir, "components_256.pnmf", 38, 2, 256);
    header_variant(dir, "shift_model_3.pnmf", 40, 1, 3);
    header_variant(dir, "canvas_without_model.pnmf", 48, 4, 6); /* a canvas size, torus model */
    {
        Bytes b = with_payload0(&p0);
        b.p[40] = 2; /* the canvas model */
        pnmf_wl32(b.p + 48, H - 1);
        pnmf_wl32(b.p + 52, W + 4);
        fix_header_crc(&b);
        save(dir, "canvas_smaller.pnmf", &b);
        pnmf_wl32(b.p + 48, 2 * 16384 + 1);
        pnmf_wl32(b.p + 52, W);
        fix_header_crc(&b);
        save(dir, "canvas_over.pnmf", &b);
        free(b.p);
    }
    header_variant(dir, "w_step_0.pnmf", 42, 2, 0);
    header_variant(dir, "header_size_60.pnmf", 12, 2, 60);
    {
        Bytes b = with_payload0(&p0);
        b.p[30] ^= 1; /* frame rate denominator, CRC left as it was */
        save(dir, "header_crc.pnmf", &b);
        free(b.p);
    }

    /* Windows, index and trailer. */
    header_variant(dir, "frame_count_short.pnmf", 32, 4, 4); /* windows hold 5 */
    header_variant(dir, "frame_count_long.pnmf", 32, 4, 6);
    {
        Bytes b = with_payload0(&p0);
        pnmf_wl32(b.p + wind1 + 8, 4); /* window 1 starts at frame 4, not 3 */
        fix_chunk_crc(&b, wind1);
        save(dir, "window_gap.pnmf", &b);
        free(b.p);
        b = with_payload0(&p0);
        pnmf_wl32(b.p + wind0 + 12, 4); /* window 0 holds 4 frames; the header's window is 3 */
        fix_chunk_crc(&b, wind0);
        save(dir, "window_too_long.pnmf", &b);
        free(b.p);
        b = with_payload0(&p0);
        b.p[wind1 + 20] ^= 0x40; /* inside window 1's zstd frame */
        save(dir, "chunk_crc.pnmf", &b);
        free(b.p);
        b = with_payload0(&p0);
        pnmf_wl32(b.p + wind1 + 4, 0x7fffffff);
        save(dir, "chunk_length_huge.pnmf", &b);
        free(b.p);
        b = with_payload0(&p0);
        pnmf_wl64(b.p + index_at + 12, 70); /* entry 0 points into the header's end */
        fix_chunk_crc(&b, index_at);
        save(dir, "index_offset.pnmf", &b);
        free(b.p);
        b = with_payload0(&p0);
        pnmf_wl64(b.p + b.n - 16, index_at - 1);
        save(dir, "trailer_offset.pnmf", &b);
        free(b.p);
        b = with_payload0(&p0);
        add(&b, "\n", 1);
        save(dir, "trailing_byte.pnmf", &b);
        free(b.p);
        b = with_payload0(&p0);
        b.n = index_at;
        save(dir, "no_index.pnmf", &b);
        free(b.p);
    }

    /* Window payloads (docs/format.md, "Window payload"), by hand: flags,
     * k, block sizes, levels, occurrence counts, coefficients - 1, row
     * shifts, column shifts. Torus 6x8, w_step 4 (levels -1024..1024),
     * r_step 1, window 0 of 3 frames. */
    {
        Bytes pl = { 0 }, f;
        add_varint(&pl, 4); /* flags: bit 2, a feature this reader does not know */
        add_varint(&pl, 1);
        add_varint(&pl, 1), add_varint(&pl, 1);
        add_signed(&pl, 100);
        for (int i = 0; i < 3; i++) add_varint(&pl, 1);
        for (int i = 0; i < 9; i++) add_varint(&pl, 0);
        f = with_payload0(&pl);
        save(dir, "flags_nonzero.pnmf", &f);
        free(f.p), pl.n = 0;

        /* the residual layer (flags bit 0): steps 64, 64, qp 16, 16, block 8, one
         * block a frame; the first frame predicts from a previous one */
        add_varint(&pl, 1);
        add_varint(&pl, 1);
        add_varint(&pl, 1), add_varint(&pl, 1);
        add_signed(&pl, 100);
        for (int i = 0; i < 3; i++) add_varint(&pl, 1);
        for (int i = 0; i < 9; i++) add_varint(&pl, 0);
        add_varint(&pl, 64), add_varint(&pl, 64), add_varint(&pl, 16), add_varint(&pl, 16), add_varint(&pl, 8);
        add_varint(&pl, 1), add_varint(&pl, 0), add_varint(&pl, 0);
        f = with_payload0(&pl);
        save(dir, "residual_first_previous.pnmf", &f);
        free(f.p), pl.n = 0;

        /* the same with a coded block whose level is missing */
        add_varint(&pl, 1);
        add_varint(&pl, 1);
        add_varint(&pl, 1), add_varint(&pl, 1);
        add_signed(&pl, 100);
        for (int i = 0; i < 3; i++) add_varint(&pl, 1);
        for (int i = 0; i < 9; i++) add_varint(&pl, 0);
        add_varint(&pl, 64), add_varint(&pl, 64), add_varint(&pl, 16), add_varint(&pl, 16), add_varint(&pl, 8);
        add_varint(&pl, 8), add_varint(&pl, 1), add_varint(&pl, 2);
        for (int i = 0; i < 47; i++) add_varint(&pl, 0);
        f = with_payload0(&pl);
        save(dir, "residual_truncated.pnmf", &f);
        free(f.p), pl.n = 0;

        add_varint(&pl, 0);
        add_varint(&pl, 0); /* k = 0 */
        f = with_payload0(&pl);
        save(dir, "k_0.pnmf", &f);
        free(f.p), pl.n = 0;

        add_varint(&pl, 0);
        add_varint(&pl, 1u << 31); /* k = 2^31 */
        f = with_payload0(&pl);
        save(dir, "k_2pow31.pnmf", &f);
        free(f.p), pl.n = 0;

        add_varint(&pl, 0);
        add_varint(&pl, 5); /* k = 5 > components = 4 */
        for (int i = 0; i < 5; i++) add_varint(&pl, 1), add_varint(&pl, 1);
        for (int i = 0; i < 5; i++) add_signed(&pl, 1);
        for (int i = 0; i < 15; i++) add_varint(&pl, 1);
        for (int i = 0; i < 45; i++) add_varint(&pl, 0);
        f = with_payload0(&pl);
        save(dir, "k_over_header.pnmf", &f);
        free(f.p), pl.n = 0;

        /* component 1 is empty (0x0); frame 2 names it all the same */
        add_varint(&pl, 0);
        add_varint(&pl, 2);
        add_varint(&pl, 1), add_varint(&pl, 1), add_varint(&pl, 0), add_varint(&pl, 0);
        add_signed(&pl, 100);
        add_varint(&pl, 1), add_varint(&pl, 1), add_varint(&pl, 1); /* n[0][0..2] */
        add_varint(&pl, 0), add_varint(&pl, 0), add_varint(&pl, 1); /* n[1][0..2] */
        for (int i = 0; i < 12; i++) add_varint(&pl, 0);
        f = with_payload0(&pl);
        save(dir, "missing_component.pnmf", &f);
        free(f.p), pl.n = 0;

        /* component 0 placed 65 times in frame 0 (at most 64) */
        add_varint(&pl, 0);
        add_varint(&pl, 1);
        add_varint(&pl, 1), add_varint(&pl, 1);
        add_signed(&pl, 100);
        add_varint(&pl, 65), add_varint(&pl, 0), add_varint(&pl, 0);
        for (int i = 0; i < 3 * 65; i++) add_varint(&pl, 0);
        f = with_payload0(&pl);
        save(dir, "occurrences_65.pnmf", &f);
        free(f.p), pl.n = 0;

        /* a coefficient of 65536 (stored 65535): c * r_step over 65535 */
        add_varint(&pl, 0);
        add_varint(&pl, 1);
        add_varint(&pl, 1), add_varint(&pl, 1);
        add_signed(&pl, 100);
        add_varint(&pl, 1), add_varint(&pl, 1), add_varint(&pl, 1);
        add_varint(&pl, 15), add_varint(&pl, 65535), add_varint(&pl, 15);
        for (int i = 0; i < 6; i++) add_signed(&pl, 0);
        f = with_payload0(&pl);
        save(dir, "coef_over.pnmf", &f);
        free(f.p), pl.n = 0;

        /* a row shift of +3 on a torus of 6 rows: the range is -3..2 */
        add_varint(&pl, 0);
        add_varint(&pl, 1);
        add_varint(&pl, 1), add_varint(&pl, 1);
        add_signed(&pl, 100);
        add_varint(&pl, 1), add_varint(&pl, 1), add_varint(&pl, 1);
        add_varint(&pl, 15), add_varint(&pl, 15), add_varint(&pl, 15);
        add_signed(&pl, 0), add_signed(&pl, 3), add_signed(&pl, 0);
        add_signed(&pl, 0), add_signed(&pl, 0), add_signed(&pl, 0);
        f = with_payload0(&pl);
        save(dir, "shift_outside.pnmf", &f);
        free(f.p), pl.n = 0;

        /* a block of 7 rows on a torus of 6 */
        add_varint(&pl, 0);
        add_varint(&pl, 1);
        add_varint(&pl, 7), add_varint(&pl, 1);
        for (int i = 0; i < 7; i++) add_signed(&pl, 1);
        add_varint(&pl, 1), add_varint(&pl, 1), add_varint(&pl, 1);
        for (int i = 0; i < 9; i++) add_varint(&pl, 0);
        f = with_payload0(&pl);
        save(dir, "block_too_big.pnmf", &f);
        free(f.p), pl.n = 0;

        /* a level of 4096 / w_step + 1, and of -(4096 / w_step + 1) */
        for (int sign = 1; sign >= -1; sign -= 2) {
            add_varint(&pl, 0);
            add_varint(&pl, 1);
            add_varint(&pl, 1), add_varint(&pl, 1);
            add_signed(&pl, sign * (4096 / 4 + 1));
            add_varint(&pl, 1), add_varint(&pl, 1), add_varint(&pl, 1);
            for (int i = 0; i < 9; i++) add_varint(&pl, 0);
            f = with_payload0(&pl);
            save(dir, sign > 0 ? "level_over.pnmf" : "level_under.pnmf", &f);
            free(f.p), pl.n = 0;
        }

        /* an 11-byte varint */
        add_varint(&pl, 0);
        for (int i = 0; i < 10; i++) add(&pl, "\x80", 1);
        add(&pl, "\x01", 1);
        f = with_payload0(&pl);
        save(dir, "varint_long.pnmf", &f);
        free(f.p), pl.n = 0;

        /* the valid payload and one byte more */
        add(&pl, p0.p, p0.n);
        add(&pl, "", 1);
        f = with_payload0(&pl);
        save(dir, "payload_extra_byte.pnmf", &f);
        free(f.p), pl.n = 0;

        /* blocks that claim more levels than the payload has bytes: 4
         * components of 6x8 = 192 levels in a payload of 22 bytes */
        add_varint(&pl, 0);
        add_varint(&pl, 4);
        for (int i = 0; i < 4; i++) add_varint(&pl, 6), add_varint(&pl, 8);
        for (int i = 0; i < 13; i++) add_varint(&pl, 0);
        f = with_payload0(&pl);
        save(dir, "levels_past_end.pnmf", &f);
        free(f.p), pl.n = 0;

        /* counts announcing more entries than the payload has bytes: 64 in
         * each frame, 192 entries of 3 bytes at least, 20 bytes left */
        add_varint(&pl, 0);
        add_varint(&pl, 1);
        add_varint(&pl, 1), add_varint(&pl, 1);
        add_signed(&pl, 100);
        add_varint(&pl, 64), add_varint(&pl, 64), add_varint(&pl, 64);
        for (int i = 0; i < 20; i++) add_varint(&pl, 0);
        f = with_payload0(&pl);
        save(dir, "entries_past_end.pnmf", &f);
        free(f.p);
        free(pl.p);
    }

    /* zstd frames, by hand (RFC 8878). */
    {
        Bytes z = { 0 }, f;
        /* Frame header: magic, FHD = FCS 8 bytes, checksum flag, then the
         * window descriptor and a content size of 2^40; one raw block. */
        add_u32(&z, 0xFD2FB528u);
        add(&z, "\xC4\x00", 2);
        add_u64(&z, 1ull << 40);
        add(&z, "\x09\x00\x00\x00", 4); /* last raw block of 1 byte: 0 */
        add_u32(&z, 0);
        f = one_window_zstd(3, z.p, z.n);
        save(dir, "zstd_claims_2pow40.pnmf", &f);
        free(f.p), z.n = 0;

        /* no content checksum flag */
        add_u32(&z, 0xFD2FB528u);
        add(&z, "\x20\x01", 2);      /* single segment, FCS 1 byte = 1 */
        add(&z, "\x09\x00\x00\x00", 4);
        f = one_window_zstd(3, z.p, z.n);
        save(dir, "zstd_no_checksum.pnmf", &f);
        free(f.p), z.n = 0;

        /* a skippable frame where the window's zstd frame should be */
        add_u32(&z, 0x184D2A50u);
        add_u32(&z, 4);
        add_u32(&z, 0);
        f = one_window_zstd(3, z.p, z.n);
        save(dir, "zstd_skippable.pnmf", &f);
        free(f.p), z.n = 0;

        /* the valid window's frame, one byte short */
        Bytes c = compressed(&p0, 19);
        f = one_window_zstd(3, c.p, c.n - 1);
        save(dir, "zstd_truncated.pnmf", &f);
        free(f.p);
        /* ... and with a byte after it */
        add(&c, "", 1);
        f = one_window_zstd(3, c.p, c.n);
        save(dir, "zstd_trailing.pnmf", &f);
        free(f.p);
        free(c.p);

        /* an honest bomb: 8 MiB of zeros, more than the window payload
         * bound of an 8x6 window (2^20 + 16 * 48 * 7 bytes) */
        Bytes zeros = { 0 };
        zeros.n = zeros.cap = 8u << 20;
        if (!(zeros.p = calloc(1, zeros.n))) abort();
        c = compressed(&zeros, 19);
        f = one_window_zstd(3, c.p, c.n);
        save(dir, "zstd_bomb.pnmf", &f);
        free(f.p);
        free(c.p);
        free(zeros.p);
        free(z.p);
    }

    /* Decode work over the limit (docs/format.md, "Decode work"): 1280x1024
     * frames, one frame, 4 full-frame components each placed 64 times.
     * That is 256 * 1310720 = 335544320 multiply-adds for the frame, over
     * 2^28 + 32 * 1310720 = 310378496. The payload (a byte a level, all
     * zero) is 5 MiB; zstd makes a few hundred bytes of it. */
    {
        const int k = 4, rows = 1024, cols = 1280, occ = 64;
        Bytes pl = { 0 };
        add_varint(&pl, 0);
        add_varint(&pl, (uint64_t)k);
        for (int i = 0; i < k; i++) add_varint(&pl, rows), add_varint(&pl, cols);
        const size_t levels = (size_t)k * rows * cols, at = pl.n;
        pl.cap = pl.n + levels + 4 * (size_t)k * occ + 64;
        if (!(pl.p = realloc(pl.p, pl.cap))) abort();
        memset(pl.p + at, 0, levels);
        pl.n += levels;
        for (int i = 0; i < k; i++) add_varint(&pl, (uint64_t)occ);
        for (int i = 0; i < 3 * k * occ; i++) add_varint(&pl, 0);
        Bytes c = compressed(&pl, 3);
        free(pl.p);
        Bytes f = one_window_zstd(1, c.p, c.n);
        free(c.p);
        pnmf_wl32(f.p + 16, cols);
        pnmf_wl32(f.p + 20, rows);
        pnmf_wl16(f.p + 38, (uint32_t)k);
        fix_header_crc(&f);
        save(dir, "work_over.pnmf", &f);
        free(f.p);
    }

    /* Context-coded sprite masks (window flags bit 11, docs/format.md
     * "Sprite layer"): window 0 with a residual layer of uncoded model
     * blocks and a sprite layer of two new poses (a 3x2 L cut from frame 0,
     * placed in frames 1 and 2, and a 2x2 square read against it), written
     * by the library's writer and then damaged. */
    {
        PnmfSpriteLayer L;
        memset(&L, 0, sizeof(L));
        L.present = 1, L.ctxmasks = 1, L.m = 3, L.npose = 2;
        if (!(L.pose = calloc(2, sizeof(PnmfSpritePose))) || !(L.first = calloc(4, sizeof(int))) ||
            !(L.place = calloc(2, sizeof(PnmfSpritePlace))))
            abort();
        const uint8_t ell[6] = { 1, 0, 1, 0, 1, 1 }, sq[4] = { 1, 1, 1, 1 };
        if (pnmf_sprite_pose_make(&L.pose[0], 2, 3, ell, ell) < 0 || pnmf_sprite_pose_make(&L.pose[1], 2, 2, sq, sq) < 0)
            abort();
        L.pose[0].sy = 1, L.pose[0].sx = 2, L.pose[1].sy = 3, L.pose[1].sx = 4;
        L.pose[1].mref = 1, L.pose[1].mdy = 0, L.pose[1].mdx = 1;
        L.first[2] = 1, L.first[3] = 2;
        L.place[0] = (PnmfSpritePlace){ 0, 1, 3 }, L.place[1] = (PnmfSpritePlace){ 0, 2, 4 };
        for (int variant = 0; variant < 3; variant++) {
            PnmfWindowModel md;
            if (pnmf_model_alloc(&md, H, W, H, W, 3, 2, 0) < 0 || pnmf_residual_alloc(&md.res, 3, H, W, 32, 16) < 0)
                abort();
            if (variant == 1) L.pose[0].mref = 1; /* pose 0 read against pose 1, after it */
            md.spr = L;
            uint8_t *p;
            size_t n;
            if (pnmf_model_write(&md, &p, &n) < 0) abort();
            memset(&md.spr, 0, sizeof(md.spr));
            pnmf_model_free(&md);
            L.pose[0].mref = 0;
            Bytes pl = { 0 };
            if (variant == 2) {
                /* the mask stream one byte longer than its coding: its
                 * length (one byte) and a zero byte after it */
                Buf ms = { 0 };
                pnmf_sprite_masks_write(&ms, &L);
                size_t at = 0;
                while (at + ms.len <= n && memcmp(p + at, ms.p, ms.len)) at++;
                if (at + ms.len > n || ms.p[0] >= 0x7F) abort();
                add(&pl, p, at);
                const uint8_t len1 = (uint8_t)(ms.p[0] + 1), zero = 0;
                add(&pl, &len1, 1);
                add(&pl, ms.p + 1, ms.len - 1);
                add(&pl, &zero, 1);
                add(&pl, p + at + ms.len, n - at - ms.len);
                free(ms.p);
            } else {
                add(&pl, p, n);
            }
            pnmf_free(p);
            if (variant == 0) {
                /* the flags with bit 11 but not bit 5: two varint bytes for one */
                uint64_t flags = 0;
                Bytes q = reflag(pl.p, pl.n, &flags, PNMF_FLAG_SPRITES, PNMF_FLAG_SPRMASKS);
                free(pl.p);
                pl = q;
            }
            Bytes f = with_payload0(&pl);
            static const char *const names[3] = { "sprite_masks_no_layer.pnmf", "sprite_mask_ref_later.pnmf",
                                                  "sprite_mask_stream_long.pnmf" };
            save(dir, names[variant], &f);
            free(f.p);
            free(pl.p);
        }
        pnmf_sprite_layer_free(&L);
    }

    /* Format 9, window flags bit 10: one 8x8 frame whose only block is an
     * intra DC transform block with direction index 2, past DC's two (the
     * writer codes the index diagonal down-right has in its own family). */
    {
        PnmfHeader h = header();
        h.width = 8, h.height = 8, h.window = 1;
        PnmfWindowModel md;
        if (pnmf_model_alloc(&md, 8, 8, 8, 8, 1, 1, 0) < 0 || pnmf_residual_alloc(&md.res, 1, 8, 8, 64, 64) < 0 ||
            !(md.res.lev = pnmf_calloc(64, sizeof(int16_t))))
            abort();
        md.res.modes[0] = PNMF_RES_INTRA_DC | PNMF_RES_CODED | PNMF_RES_TRANSFORM;
        md.res.lev[0] = 3;
        md.res.nlev = md.res.cap = 64, md.res.start[1] = 64;
        md.res.idir[0] = PNMF_INTRA_DDR;
        md.res.rc_levels = 1;
        save_model(dir, "intra_dir_range.pnmf", &h, &md, 1);
    }

    /* Format 9, window flags bit 12: a step cascade whose step is 15/16
     * of a gray level, under the least step 16. */
    {
        PnmfHeader h;
        PnmfWindowModel md;
        two_frames(&h, &md);
        md.res.casc_period = 1, md.res.casc_step16 = 15, md.res.casc_qp = 10;
        save_model(dir, "cascade_step_range.pnmf", &h, &md, 2);
    }

    /* Window flags that need bit 0 (a residual layer) set without it:
     * window 0 of the valid file with its flags those bits alone. */
    flag_without_residual(dir, "nbctx_no_residual.pnmf", PNMF_FLAG_NBCTX);     /* format 9, bit 14 */
    flag_without_residual(dir, "median_no_residual.pnmf", PNMF_FLAG_MEDIAN);   /* format 10, bit 15 */
    flag_without_residual(dir, "compound_no_residual.pnmf", PNMF_FLAG_BI);     /* format 12, bit 17 */
    flag_without_residual(dir, "weights_no_residual.pnmf", PNMF_FLAG_WEIGHTS); /* format 14, bit 18 */
    flag_without_residual(dir, "order_no_cascade.pnmf", PNMF_FLAG_ORDER);      /* format 15, bit 19 without bit 12 */
    flag_without_residual(dir, "warp_no_subpel.pnmf", PNMF_FLAG_WARP);         /* format 20, bit 23 without bit 6 */
    flag_without_residual(dir, "lxq_no_ctx.pnmf", PNMF_FLAG_CTXLOSSY);        /* format 21, bit 24 without bit 9 */

    /* Format 20, window flags bit 23: a key window of two 8x8 frames whose
     * frame 1 has a warp slope of 4097 (at most 4096). */
    {
        PnmfHeader h;
        PnmfWindowModel md;
        two_frames(&h, &md);
        md.res.modes[1] = PNMF_RES_PREVIOUS;
        md.res.subpel = 1, md.res.warp = 1;
        md.res.gw[PNMF_RES_WARP_N + 1] = PNMF_RES_WARP_MAX_S + 1;
        save_model(dir, "warp_range.pnmf", &h, &md, 2);
    }

    /* Format 15, window flags bit 19: a key window of two 8x8 frames coded
     * in groups of 17 (at most 16: a group's anchor must stay a reference
     * until the group's last frame is shown). */
    {
        PnmfHeader h;
        PnmfWindowModel md;
        two_frames(&h, &md);
        md.res.modes[1] = PNMF_RES_PREVIOUS;
        md.res.casc_period = PNMF_RES_MAX_GROUP + 1, md.res.casc_step16 = 32, md.res.casc_qp = 10;
        md.res.order = 1;
        save_model(dir, "order_group_range.pnmf", &h, &md, 2);
    }

    /* Format 14, window flags bit 18: a key window of two 8x8 frames whose
     * frame 1 has a gain of 256 (at most 255), and one whose frame 1 has an
     * offset of -256 (at least -255). */
    for (int bad = 0; bad < 2; bad++) {
        PnmfHeader h;
        PnmfWindowModel md;
        two_frames(&h, &md);
        md.res.modes[1] = PNMF_RES_PREVIOUS;
        md.res.wp[2] = bad ? 70 : PNMF_RES_WP_MAX_W + 1;
        md.res.wp[3] = bad ? -PNMF_RES_WP_MAX_O - 1 : 3;
        save_model(dir, bad ? "weights_offset_range.pnmf" : "weights_gain_range.pnmf", &h, &md, 2);
    }

    /* Format 12, window flags bit 17: a key window of two 8x8 frames whose
     * frame 1's shifted block has a second hypothesis from D_{-1} (t2 = 1),
     * a frame before the window. */
    {
        PnmfHeader h;
        PnmfWindowModel md;
        two_frames(&h, &md);
        PnmfResidual *r = &md.res;
        r->modes[1] = PNMF_RES_SHIFTED;
        if (!(r->mv = pnmf_calloc(2, sizeof(int16_t))) || !(r->mvref = pnmf_calloc(1, 1)) || !(r->mvbi = pnmf_calloc(1, 1)) ||
            !(r->mv2 = pnmf_calloc(2, sizeof(int16_t))))
            abort();
        r->nmv = 1, r->mvcap = 2, r->mvstart[1] = 0, r->mvstart[2] = 1;
        r->mvbi[0] = 2, r->mv2[0] = 1, r->mv2[1] = -1;
        save_model(dir, "compound_ref_range.pnmf", &h, &md, 2);
    }

    /* Format 11, window flags bit 16 (context-coded placements): the
     * sprite layer above with its masks as bytes and its placements as
     * the stream, written by the library's writer and then damaged: bit 16
     * without bit 5; the stream one byte longer than its coding; a stream
     * made by hand whose frame 2 refers to frame 1's placement 1 (it has
     * one); one whose frame 1 places a pose at row H, off the frame. */
    {
        PnmfSpriteLayer L;
        memset(&L, 0, sizeof(L));
        L.present = 1, L.ctxplaces = 1, L.m = 3, L.npose = 1;
        if (!(L.pose = calloc(1, sizeof(PnmfSpritePose))) || !(L.first = calloc(4, sizeof(int))) ||
            !(L.place = calloc(2, sizeof(PnmfSpritePlace))))
            abort();
        const uint8_t ell[6] = { 1, 0, 1, 0, 1, 1 };
        if (pnmf_sprite_pose_make(&L.pose[0], 2, 3, ell, ell) < 0) abort();
        L.pose[0].sy = 1, L.pose[0].sx = 2;
        L.first[2] = 1, L.first[3] = 2;
        L.place[0] = (PnmfSpritePlace){ 0, 1, 3 }, L.place[1] = (PnmfSpritePlace){ 0, 1, 3 };
        Buf ps = { 0 };
        {   /* the stream the writer writes, to be found in the payload */
            PnmfPlaceIO io;
            memset(&io, 0, sizeof(io));
            RcEnc e;
            rc_enc_init(&e, &ps);
            io.put = put_rc, io.enc = &e;
            if (pnmf_sprite_places_code(&io, &L, H, W) < 0 || io.bad) abort();
            rc_enc_finish(&e);
        }
        for (int variant = 0; variant < 4; variant++) {
            PnmfWindowModel md;
            if (pnmf_model_alloc(&md, H, W, H, W, 3, 2, 0) < 0 || pnmf_residual_alloc(&md.res, 3, H, W, 32, 16) < 0)
                abort();
            md.spr = L;
            uint8_t *p;
            size_t n;
            if (pnmf_model_write(&md, &p, &n) < 0) abort();
            memset(&md.spr, 0, sizeof(md.spr));
            pnmf_model_free(&md);
            size_t at = 0;
            while (at + ps.len <= n && memcmp(p + at, ps.p, ps.len)) at++;
            if (at < 1 || at + ps.len > n || p[at - 1] != ps.len || ps.len >= 0x7F) abort();
            Bytes pl = { 0 };
            if (variant == 0) {
                /* the flags with bit 16 but not bit 5 */
                uint64_t flags = 0;
                pl = reflag(p, n, &flags, PNMF_FLAG_SPRITES, 0);
                if (!(flags & PNMF_FLAG_SPRPLACES)) abort();
            } else {
                Buf c = { 0 };
                if (variant == 1) {
                    c.p = malloc(ps.len + 1);
                    if (!c.p) abort();
                    memcpy(c.p, ps.p, ps.len);
                    c.p[ps.len] = 0;
                    c.len = ps.len + 1;
                }
                if (variant == 2) c = craft_places(1, 1);
                if (variant == 3) c = craft_places(H, 0);
                if (c.len >= 0x7F) abort();
                const uint8_t len1 = (uint8_t)c.len;
                add(&pl, p, at - 1);
                add(&pl, &len1, 1);
                add(&pl, c.p, c.len);
                add(&pl, p + at + ps.len, n - at - ps.len);
                free(c.p);
            }
            pnmf_free(p);
            Bytes f = with_payload0(&pl);
            static const char *const names[4] = { "sprite_places_no_layer.pnmf", "sprite_place_stream_long.pnmf",
                                                  "sprite_place_ref_past.pnmf", "sprite_place_off_frame.pnmf" };
            save(dir, names[variant], &f);
            free(f.p);
            free(pl.p);
        }
        free(ps.p);
        pnmf_sprite_layer_free(&L);
    }

    free(p0.p);
    free(good.p);
    return 0;
}
