/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Every public entry point: check the arguments, then dispatch. */
#include <string.h>

#include "codec.h"
#include "container.h"
#include "internal.h"
#include "io.h"
#include "quant.h"

/* PNMF_HAVE_ENCODER is 0 in a decoder-only build: the encoder's entry
 * points are there and return PNMF_ERR_NOSYS. */
#ifndef PNMF_HAVE_ENCODER
#define PNMF_HAVE_ENCODER 1
#endif

unsigned pnmf_version(void) { return PNMF_VERSION_INT; }

const char *pnmf_version_string(void) { return PNMF_VERSION_STRING; }

/* Whether every reserved byte of a settings struct is zero. */
static int reserved_clear(const uint8_t *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (r[i]) return 0;
    return 1;
}

void pnmf_enc_default_settings(PnmfEncSettings *s)
{
    memset(s, 0, sizeof(*s));
    s->components = 8;
    s->window = 60;
    s->quality = 16;
    s->shift_model = PNMF_SHIFT_TORUS;
    s->algo = PNMF_ALGO_IMPROVED;
    s->iterations = 30;
    s->inner_iters = 10;
    s->restarts = 1;
    s->seed = 1;
    s->threads = 0;
    s->zstd_level = 19;
    s->refine = 4;
    s->residual = 1;
    s->key_interval = 250;
    s->auto_k = 1;
    s->scene_cut = 1;
    s->carry = 1;
    s->repeats = 0;
    s->sprites = 1;
    s->recentre = 0;
    s->half = PNMF_HALF_AUTO;
    s->restoration = 1;
}

int pnmf_enc_open_io(PnmfEncoder **enc, const PnmfEncSettings *s, int width, int height,
                     int fps_num, int fps_den, const PnmfIO *out)
{
    if (!enc) return PNMF_ERR_ARG;
    *enc = NULL;
    if (!s || !out || !out->write || !out->seek) return PNMF_ERR_ARG;
    if (width < 1 || height < 1 || width > PNMF_MAX_DIM || height > PNMF_MAX_DIM ||
        (int64_t)width * height > PNMF_MAX_PIXELS)
        return PNMF_ERR_LIMIT;
    if (fps_num < 1 || fps_den < 1) return PNMF_ERR_ARG;
    if (s->components < 0 || s->components > PNMF_MAX_COMPONENTS) return PNMF_ERR_ARG;
    if (s->components == 0 && !s->residual) return PNMF_ERR_ARG; /* nothing would be coded */
    if (s->window < 1 || s->window > PNMF_MAX_WINDOW) return PNMF_ERR_ARG;
    if (s->quality < 0 || s->quality > PNMF_MAX_QUALITY) return PNMF_ERR_ARG;
    if (s->shift_model < PNMF_SHIFT_VECTOR || s->shift_model > PNMF_SHIFT_CANVAS) return PNMF_ERR_ARG;
    if (s->signed_components < 0 || s->signed_components > 1) return PNMF_ERR_ARG;
    if (s->canvas_pad < 0 || s->canvas_pad > 4096) return PNMF_ERR_ARG;
    if (s->residual < 0 || s->residual > 1) return PNMF_ERR_ARG;
    if (s->residual && s->shift_model == PNMF_SHIFT_VECTOR) return PNMF_ERR_ARG;
    if (s->key_interval < 1 || s->key_interval > PNMF_MAX_FRAMES) return PNMF_ERR_ARG;
    if (s->two_level < 0 || s->two_level > PNMF_MAX_COMPONENTS) return PNMF_ERR_ARG;
    if (s->auto_k < 0 || s->auto_k > 1) return PNMF_ERR_ARG;
    if (s->scene_cut < 0 || s->scene_cut > 1) return PNMF_ERR_ARG;
    if (s->carry < 0 || s->carry > 1) return PNMF_ERR_ARG;
    if (s->repeats < 0 || s->repeats > 1) return PNMF_ERR_ARG;
    if (s->sprites < 0 || s->sprites > 1) return PNMF_ERR_ARG;
    if (s->recentre < 0 || s->recentre > 1) return PNMF_ERR_ARG;
    if (s->restoration < 0 || s->restoration > 1) return PNMF_ERR_ARG;
    if (s->half < 0 || s->half > PNMF_HALF_AUTO || (s->half == 1 && s->shift_model == PNMF_SHIFT_CANVAS))
        return PNMF_ERR_ARG;
    if (s->two_level && (s->two_level < s->components || s->shift_model == PNMF_SHIFT_CANVAS)) return PNMF_ERR_ARG;
    if (!(s->target_psnr >= 0 && s->target_psnr <= 99) || (s->target_psnr > 0 && !s->residual)) return PNMF_ERR_ARG;
    if (s->algo != PNMF_ALGO_PAPER && s->algo != PNMF_ALGO_IMPROVED) return PNMF_ERR_ARG;
    if (s->iterations < 0 || s->iterations > 10000 || s->inner_iters < 1 || s->inner_iters > 1000)
        return PNMF_ERR_ARG;
    if (s->restarts < 1 || s->restarts > 1000 || s->threads < 0 || s->threads > 64) return PNMF_ERR_ARG;
    if (s->zstd_level < 1 || s->zstd_level > 22) return PNMF_ERR_ARG;
    if (s->refine < 0 || s->refine > 100) return PNMF_ERR_ARG;
    if (!reserved_clear(s->reserved, sizeof(s->reserved))) return PNMF_ERR_ARG;
    if (s->time_base_num < 0 || s->time_base_den < 0 || !s->time_base_num != !s->time_base_den ||
        s->time_start < 0 || s->time_start > (INT64_C(1) << 62) || (!s->time_base_num && s->time_start))
        return PNMF_ERR_ARG;
    if (s->color_range < 0 || s->color_range > 2 || s->color_primaries < 0 || s->color_primaries > 255 ||
        s->color_trc < 0 || s->color_trc > 255 || s->colorspace < 0 || s->colorspace > 255)
        return PNMF_ERR_ARG;
#if PNMF_HAVE_ENCODER
    return pnmf_encoder_create(enc, s, width, height, fps_num, fps_den, out);
#else
    return PNMF_ERR_NOSYS;
#endif
}

void pnmf_io_file(PnmfIO *io, FILE *f, int writing)
{
    if (!io) return;
    if (writing) pnmf_io_file_writer(io, f);
    else pnmf_io_file_reader(io, f);
}

int pnmf_enc_open(PnmfEncoder **enc, const PnmfEncSettings *s, int width, int height,
                  int fps_num, int fps_den, FILE *out)
{
    if (!enc) return PNMF_ERR_ARG;
    *enc = NULL;
    if (!out) return PNMF_ERR_ARG;
    PnmfIO io;
    pnmf_io_file_writer(&io, out);
    return pnmf_enc_open_io(enc, s, width, height, fps_num, fps_den, &io);
}

#if PNMF_HAVE_ENCODER
int pnmf_enc_push_frame(PnmfEncoder *enc, const uint8_t *gray, ptrdiff_t stride)
{
    if (!enc || !gray) return PNMF_ERR_ARG;
    return pnmf_encoder_push_timed(enc, gray, stride, 0);
}

int pnmf_enc_push_frame_timed(PnmfEncoder *enc, const uint8_t *gray, ptrdiff_t stride, int64_t duration)
{
    if (!enc || !gray || duration < 1 || duration > UINT32_MAX) return PNMF_ERR_ARG;
    return pnmf_encoder_push_timed(enc, gray, stride, duration);
}

int pnmf_enc_finish(PnmfEncoder *enc)
{
    if (!enc) return PNMF_ERR_ARG;
    return pnmf_encoder_finish(enc);
}

void pnmf_enc_get_stats(const PnmfEncoder *enc, PnmfEncStats *st)
{
    if (!st) return;
    memset(st, 0, sizeof(*st));
    if (enc) pnmf_encoder_stats(enc, st);
}

const char *pnmf_enc_errmsg(const PnmfEncoder *enc) { return enc ? pnmf_encoder_errmsg(enc) : ""; }

void pnmf_enc_close(PnmfEncoder **enc)
{
    if (enc) pnmf_encoder_destroy(enc);
}
#else
int pnmf_scene_cut(const uint8_t *prev, const uint8_t *cur, ptrdiff_t stride, int width, int height, int since_cut)
{
    (void)prev, (void)cur, (void)stride, (void)width, (void)height, (void)since_cut;
    return PNMF_ERR_NOSYS;
}

int pnmf_enc_push_frame(PnmfEncoder *enc, const uint8_t *gray, ptrdiff_t stride)
{
    (void)enc, (void)gray, (void)stride;
    return PNMF_ERR_NOSYS;
}

int pnmf_enc_push_frame_timed(PnmfEncoder *enc, const uint8_t *gray, ptrdiff_t stride, int64_t duration)
{
    (void)enc, (void)gray, (void)stride, (void)duration;
    return PNMF_ERR_NOSYS;
}

int pnmf_enc_finish(PnmfEncoder *enc)
{
    (void)enc;
    return PNMF_ERR_NOSYS;
}

void pnmf_enc_get_stats(const PnmfEncoder *enc, PnmfEncStats *st)
{
    (void)enc;
    if (st) memset(st, 0, sizeof(*st));
}

const char *pnmf_enc_errmsg(const PnmfEncoder *enc)
{
    (void)enc;
    return "this libpnmf is built without the encoder";
}

void pnmf_enc_close(PnmfEncoder **enc)
{
    if (enc) *enc = NULL;
}
#endif

void pnmf_dec_default_settings(PnmfDecSettings *s)
{
    memset(s, 0, sizeof(*s));
    s->max_frame_pixels = PNMF_MAX_PIXELS;
    s->max_frames = PNMF_MAX_FRAMES;
}

static int dec_open(PnmfDecoder **dec, const PnmfDecSettings *s, const PnmfIO *io, const uint8_t *data,
                    size_t size)
{
    PnmfDecSettings def;
    if (!s) {
        pnmf_dec_default_settings(&def);
        s = &def;
    }
    if (s->max_frame_pixels < 1 || s->max_frame_pixels > PNMF_MAX_PIXELS || s->max_frames < 1 ||
        s->max_frames > PNMF_MAX_FRAMES || !reserved_clear(s->reserved, sizeof(s->reserved)))
        return PNMF_ERR_ARG;
    return pnmf_decoder_create(dec, s, io, data, size);
}

int pnmf_dec_open_io(PnmfDecoder **dec, const PnmfDecSettings *s, const PnmfIO *io)
{
    if (!dec) return PNMF_ERR_ARG;
    *dec = NULL;
    if (!io || !io->read) return PNMF_ERR_ARG;
    return dec_open(dec, s, io, NULL, 0);
}

int pnmf_dec_open_memory(PnmfDecoder **dec, const PnmfDecSettings *s, const uint8_t *data, size_t size)
{
    if (!dec) return PNMF_ERR_ARG;
    *dec = NULL;
    if (!data && size) return PNMF_ERR_ARG;
    static const uint8_t none[1];
    return dec_open(dec, s, NULL, data ? data : none, size);
}

int pnmf_dec_open(PnmfDecoder **dec, FILE *in)
{
    if (!dec) return PNMF_ERR_ARG;
    *dec = NULL;
    if (!in) return PNMF_ERR_ARG;
    PnmfIO io;
    pnmf_io_file_reader(&io, in);
    return dec_open(dec, NULL, &io, NULL, 0);
}

const PnmfStreamInfo *pnmf_dec_info(const PnmfDecoder *dec) { return dec ? pnmf_decoder_info(dec) : NULL; }

int pnmf_dec_read_frame(PnmfDecoder *dec, uint8_t *gray, ptrdiff_t stride)
{
    if (!dec || !gray) return PNMF_ERR_ARG;
    const PnmfStreamInfo *info = pnmf_decoder_info(dec);
    if (!info || stride < info->width) return PNMF_ERR_ARG;
    return pnmf_decoder_read(dec, gray, stride);
}

int pnmf_dec_frame_time(const PnmfDecoder *dec, int64_t *pts, int64_t *duration)
{
    if (!dec || !pts || !duration) return PNMF_ERR_ARG;
    return pnmf_decoder_frame_time(dec, pts, duration);
}

int pnmf_dec_frame_sprites(const PnmfDecoder *dec, PnmfSpritePlacement *out, int max)
{
    if (!dec || max < 0 || (max > 0 && !out)) return PNMF_ERR_ARG;
    return pnmf_decoder_frame_sprites(dec, out, max);
}

int pnmf_dec_sprite(const PnmfDecoder *dec, int sprite, PnmfSprite *out)
{
    if (!dec || !out) return PNMF_ERR_ARG;
    return pnmf_decoder_sprite(dec, sprite, out);
}

int pnmf_dec_seek(PnmfDecoder *dec, int frame)
{
    if (!dec || frame < 0) return PNMF_ERR_ARG;
    return pnmf_decoder_seek(dec, frame);
}

const char *pnmf_dec_errmsg(const PnmfDecoder *dec) { return dec ? pnmf_decoder_errmsg(dec) : ""; }

void pnmf_dec_close(PnmfDecoder **dec)
{
    if (dec) pnmf_decoder_destroy(dec);
}

const char *pnmf_strerror(int err)
{
    switch (err) {
    case 0: return "success";
    case PNMF_ERR_ARG: return "invalid argument";
    case PNMF_ERR_NOMEM: return "out of memory";
    case PNMF_ERR_IO: return "input/output error";
    case PNMF_ERR_CORRUPT: return "invalid or corrupt data";
    case PNMF_ERR_VERSION: return "needs a newer reader";
    case PNMF_ERR_LIMIT: return "size exceeds a limit";
    case PNMF_ERR_EOF: return "end of stream";
    case PNMF_ERR_NOSYS: return "not built into this library";
    default: return "unknown error";
    }
}
