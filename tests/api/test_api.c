/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The public API as a program outside the library sees it (linked against
 * the shared libpnmf, where only PNMF_API symbols are visible): the version
 * calls, encoding through I/O callbacks, decoding from memory and from a
 * stream that cannot seek, the decoder's limits, reserved settings, and the
 * logger, which receives what the library would otherwise have printed.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pnmf/pnmf.h"
#include "test.h"

enum { H = 40, W = 56, M = 30 };

/* A textured sprite moving over a gradient: the encoder has a model to fit. */
static void make_frames(uint8_t *f)
{
    for (int j = 0; j < M; j++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                const int sy = y - 8 - j / 2, sx = x - 4 - j;
                const int in = sy >= 0 && sy < 9 && sx >= 0 && sx < 9;
                f[(size_t)j * H * W + y * W + x] = (uint8_t)(in ? 200 - 9 * ((sx * 5 + sy * 3) % 7) : 20 + x + y);
            }
}

/* A growable buffer behind PnmfIO's write and seek. */
typedef struct Buf {
    uint8_t *data;
    size_t size, cap, pos;
} Buf;

static int buf_write(void *opaque, const uint8_t *p, size_t n)
{
    Buf *b = opaque;
    if (b->pos + n > b->cap) {
        size_t cap = 2 * (b->pos + n);
        uint8_t *d = realloc(b->data, cap);
        if (!d) return PNMF_ERR_NOMEM;
        b->data = d, b->cap = cap;
    }
    memcpy(b->data + b->pos, p, n);
    b->pos += n;
    if (b->pos > b->size) b->size = b->pos;
    return 0;
}

static int64_t buf_seek(void *opaque, int64_t off, int whence)
{
    Buf *b = opaque;
    const int64_t to = (whence == SEEK_SET ? 0 : whence == SEEK_CUR ? (int64_t)b->pos : (int64_t)b->size) + off;
    if (to < 0 || to > (int64_t)b->size) return -1;
    return (int64_t)(b->pos = (size_t)to);
}

static ptrdiff_t buf_read(void *opaque, uint8_t *p, size_t n)
{
    Buf *b = opaque;
    if (n > b->size - b->pos) n = b->size - b->pos;
    memcpy(p, b->data + b->pos, n);
    b->pos += n;
    return (ptrdiff_t)n;
}

/* What the logger saw: messages by level, and the last error's text. */
typedef struct Seen {
    int count[3];
    char last_error[256];
} Seen;

static void on_log(void *cookie, int level, const char *fmt, va_list ap)
{
    Seen *s = cookie;
    if (level >= 0 && level < 3) s->count[level]++;
    if (level == PNMF_LOG_ERROR) vsnprintf(s->last_error, sizeof(s->last_error), fmt, ap);
}

/* Decode every frame of an open decoder into out (M frames); the result code at the end. */
static int decode_all(PnmfDecoder *dec, uint8_t *out)
{
    int ret, j = 0;
    while (j < M && (ret = pnmf_dec_read_frame(dec, out + (size_t)j * H * W, W)) == 0) j++;
    return j == M ? pnmf_dec_read_frame(dec, out, W) : ret;
}

int main(void)
{
    char want[32];
    snprintf(want, sizeof(want), "%u.%u.%u", pnmf_version() >> 16, pnmf_version() >> 8 & 255, pnmf_version() & 255);
    CHECK(pnmf_version() == PNMF_VERSION_INT);
    CHECK(!strcmp(pnmf_version_string(), want));
    CHECK(!strcmp(pnmf_version_string(), PNMF_CMAKE_VERSION)); /* CMake reads the same header */

    uint8_t *frames = malloc((size_t)M * H * W), *a = malloc((size_t)M * H * W), *b = malloc((size_t)M * H * W);
    make_frames(frames);
    PnmfEncSettings s;
    pnmf_enc_default_settings(&s);
    s.window = 10, s.components = 2, s.iterations = 8, s.threads = 1;

    /* The same stream written to a FILE and through callbacks into memory. */
    FILE *f = tmpfile();
    PnmfEncoder *enc = NULL;
    CHECK(f && pnmf_enc_open(&enc, &s, W, H, 25, 1, f) == 0);
    for (int j = 0; j < M; j++) CHECK(pnmf_enc_push_frame(enc, frames + (size_t)j * H * W, W) == 0);
    CHECK(pnmf_enc_finish(enc) == 0);
    pnmf_enc_close(&enc);
    CHECK(enc == NULL);
    const long fsize = ftell(f);
    uint8_t *fbytes = malloc((size_t)fsize);
    rewind(f);
    CHECK(fread(fbytes, 1, (size_t)fsize, f) == (size_t)fsize);

    Buf mem = {0};
    Seen seen = {{0}, ""};
    s.logger.cookie = &seen, s.logger.callback = on_log;
    PnmfIO io = {.opaque = &mem, .write = buf_write, .seek = buf_seek};
    /* With PNMF_DEBUG set, the library still prints nothing: stderr is
     * pointed at a file for the encode, which must stay empty. */
    setenv("PNMF_DEBUG", "1", 1);
    fflush(stderr);
    FILE *err = tmpfile();
    const int saved = dup(2);
    CHECK(err && saved >= 0 && dup2(fileno(err), 2) == 2);
    CHECK(pnmf_enc_open_io(&enc, &s, W, H, 25, 1, &io) == 0);
    for (int j = 0; j < M; j++) CHECK(pnmf_enc_push_frame(enc, frames + (size_t)j * H * W, W) == 0);
    CHECK(pnmf_enc_finish(enc) == 0);
    pnmf_enc_close(&enc);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    CHECK_MSG(ftell(err) == 0, "the library wrote %ld bytes to stderr", ftell(err));
    fclose(err);
    CHECK_MSG(seen.count[PNMF_LOG_INFO] + seen.count[PNMF_LOG_DEBUG] > 0, "the logger received no messages");
    CHECK(mem.size == (size_t)fsize && !memcmp(mem.data, fbytes, mem.size));

    /* An encoder's output must seek; settings' reserved bytes must be zero. */
    PnmfIO noseek = {.opaque = &mem, .write = buf_write};
    CHECK(pnmf_enc_open_io(&enc, &s, W, H, 25, 1, &noseek) == PNMF_ERR_ARG && !enc);
    s.reserved[7] = 1;
    CHECK(pnmf_enc_open_io(&enc, &s, W, H, 25, 1, &io) == PNMF_ERR_ARG && !enc);

    /* Decoding from the FILE, from memory and from a pipe-like stream: the same frames. */
    PnmfDecoder *dec = NULL;
    rewind(f);
    CHECK(pnmf_dec_open(&dec, f) == 0);
    CHECK(decode_all(dec, a) == PNMF_ERR_EOF);
    pnmf_dec_close(&dec);
    PnmfIO fio;
    rewind(f);
    pnmf_io_file(&fio, f, 0);
    memset(b, 0, (size_t)M * H * W);
    CHECK(pnmf_dec_open_io(&dec, NULL, &fio) == 0);
    CHECK(decode_all(dec, b) == PNMF_ERR_EOF);
    CHECK(!memcmp(a, b, (size_t)M * H * W));
    pnmf_dec_close(&dec);
    CHECK(pnmf_dec_open_memory(&dec, NULL, fbytes, (size_t)fsize) == 0);
    CHECK(decode_all(dec, b) == PNMF_ERR_EOF);
    CHECK(!memcmp(a, b, (size_t)M * H * W));
    /* seeking in memory: frame 17 as the full decode has it */
    CHECK(pnmf_dec_seek(dec, 17) == 0 && pnmf_dec_read_frame(dec, b, W) == 0);
    CHECK(!memcmp(b, a + (size_t)17 * H * W, (size_t)H * W));
    pnmf_dec_close(&dec);
    mem.pos = 0;
    PnmfIO pipe = {.opaque = &mem, .read = buf_read};
    memset(b, 0, (size_t)M * H * W);
    CHECK(pnmf_dec_open_io(&dec, NULL, &pipe) == 0);
    CHECK(decode_all(dec, b) == PNMF_ERR_EOF);
    CHECK(!memcmp(a, b, (size_t)M * H * W));
    CHECK(pnmf_dec_seek(dec, 3) < 0); /* nothing to seek with */
    pnmf_dec_close(&dec);

    /* The decoder's limits, at and one below the stream's size. */
    PnmfDecSettings ds;
    pnmf_dec_default_settings(&ds);
    ds.max_frame_pixels = (int64_t)W * H;
    ds.max_frames = M;
    CHECK(pnmf_dec_open_memory(&dec, &ds, fbytes, (size_t)fsize) == 0);
    pnmf_dec_close(&dec);
    ds.max_frame_pixels = (int64_t)W * H - 1;
    CHECK(pnmf_dec_open_memory(&dec, &ds, fbytes, (size_t)fsize) == PNMF_ERR_LIMIT);
    pnmf_dec_close(&dec);
    ds.max_frame_pixels = (int64_t)W * H, ds.max_frames = M - 1;
    CHECK(pnmf_dec_open_memory(&dec, &ds, fbytes, (size_t)fsize) == PNMF_ERR_LIMIT);
    pnmf_dec_close(&dec);
    ds.max_frames = M, ds.reserved[0] = 1;
    CHECK(pnmf_dec_open_memory(&dec, &ds, fbytes, (size_t)fsize) == PNMF_ERR_ARG && !dec);
    ds.reserved[0] = 0;

    /* A damaged window: the decoder's error reaches the logger with its reason. */
    Seen dseen = {{0}, ""};
    ds.logger.cookie = &dseen, ds.logger.callback = on_log;
    fbytes[fsize / 2] ^= 0x10;
    CHECK(pnmf_dec_open_memory(&dec, &ds, fbytes, (size_t)fsize) == 0);
    const int ret = decode_all(dec, b);
    CHECK(ret < 0 && ret != PNMF_ERR_EOF);
    CHECK(dseen.count[PNMF_LOG_ERROR] == 1 && !strcmp(dseen.last_error, pnmf_dec_errmsg(dec)));
    pnmf_dec_close(&dec);

    /* Frame times and levels: kept through the file. A frame of duration
     * d(j) = 1 + j % 3 ticks of 1/90 s after a start of 5 ticks, frame 7 pushed
     * without one (a frame at 25 fps: 90/25 = 3.6, rounded to 4 ticks). */
    PnmfEncSettings ts = s;
    ts.logger.callback = NULL;
    memset(ts.reserved, 0, sizeof(ts.reserved)); /* set above to be refused */
    ts.time_base_num = 1, ts.time_base_den = 90, ts.time_start = 5;
    ts.color_range = 1, ts.colorspace = 1;
    Buf tm = {0};
    PnmfIO tio = {.opaque = &tm, .write = buf_write, .seek = buf_seek};
    CHECK(pnmf_enc_open_io(&enc, &ts, W, H, 25, 1, &tio) == 0);
    CHECK(pnmf_enc_push_frame_timed(enc, frames, W, 0) == PNMF_ERR_ARG);
    for (int j = 0; j < M; j++)
        CHECK(j == 7 ? pnmf_enc_push_frame(enc, frames + (size_t)j * H * W, W) == 0
                     : pnmf_enc_push_frame_timed(enc, frames + (size_t)j * H * W, W, 1 + j % 3) == 0);
    CHECK(pnmf_enc_finish(enc) == 0);
    pnmf_enc_close(&enc);
    CHECK(pnmf_dec_open_memory(&dec, NULL, tm.data, tm.size) == 0);
    const PnmfStreamInfo *ti = pnmf_dec_info(dec);
    CHECK(ti->timed == 1 && ti->time_base_num == 1 && ti->time_base_den == 90);
    CHECK(ti->color_range == 1 && ti->colorspace == 1 && ti->color_primaries == 2 && ti->color_trc == 2);
    int64_t pts, dur, t = 5;
    CHECK(pnmf_dec_frame_time(dec, &pts, &dur) == PNMF_ERR_ARG); /* no frame yet */
    int bad = 0;
    for (int j = 0; j < M; j++) {
        bad |= pnmf_dec_read_frame(dec, a + (size_t)j * H * W, W) != 0 || pnmf_dec_frame_time(dec, &pts, &dur) != 0;
        bad |= pts != t || dur != (j == 7 ? 4 : 1 + j % 3);
        t += dur;
    }
    CHECK_MSG(!bad, "frame times differ (frame at %lld, %lld ticks)", (long long)pts, (long long)dur);
    CHECK(pnmf_dec_seek(dec, 21) == 0 && pnmf_dec_read_frame(dec, a, W) == 0);
    CHECK(pnmf_dec_frame_time(dec, &pts, &dur) == 0 && dur == 1 + 21 % 3);
    pnmf_dec_close(&dec);
    /* without a time base: frame n at n, in units of 1 / frame rate */
    CHECK(pnmf_dec_open_memory(&dec, NULL, mem.data, mem.size) == 0);
    ti = pnmf_dec_info(dec);
    CHECK(ti->timed == 0 && ti->time_base_num == 1 && ti->time_base_den == 25 && ti->color_range == 0);
    CHECK(pnmf_dec_read_frame(dec, a, W) == 0 && pnmf_dec_read_frame(dec, a, W) == 0);
    CHECK(pnmf_dec_frame_time(dec, &pts, &dur) == 0 && pts == 1 && dur == 1);
    pnmf_dec_close(&dec);
    ts.time_base_den = 0; /* half a time base */
    CHECK(pnmf_enc_open_io(&enc, &ts, W, H, 25, 1, &tio) == PNMF_ERR_ARG);
    free(tm.data);

    fclose(f);
    free(fbytes), free(mem.data), free(frames), free(a), free(b);
    return test_summary("test_api");
}
