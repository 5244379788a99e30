/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The orchestrators behind the public API (lib.c validates, these work). */
#ifndef PNMF_CODEC_H
#define PNMF_CODEC_H

#include "pnmf/pnmf.h"

int  pnmf_encoder_create(PnmfEncoder **enc, const PnmfEncSettings *s, int width, int height,
                         int fps_num, int fps_den, const PnmfIO *out);
int  pnmf_encoder_push(PnmfEncoder *enc, const uint8_t *gray, ptrdiff_t stride);
/* With frame times: the frame's duration (0: one frame at the frame rate). */
int  pnmf_encoder_push_timed(PnmfEncoder *enc, const uint8_t *gray, ptrdiff_t stride, int64_t duration);
int  pnmf_encoder_finish(PnmfEncoder *enc);
void pnmf_encoder_stats(const PnmfEncoder *enc, PnmfEncStats *st);
const char *pnmf_encoder_errmsg(const PnmfEncoder *enc);
void pnmf_encoder_destroy(PnmfEncoder **enc);

/* in NULL: read the size bytes at data. */
int  pnmf_decoder_create(PnmfDecoder **dec, const PnmfDecSettings *s, const PnmfIO *in,
                         const uint8_t *data, size_t size);
const PnmfStreamInfo *pnmf_decoder_info(const PnmfDecoder *dec);
int  pnmf_decoder_read(PnmfDecoder *dec, uint8_t *gray, ptrdiff_t stride);
int  pnmf_decoder_seek(PnmfDecoder *dec, int frame);
int  pnmf_decoder_frame_time(const PnmfDecoder *dec, int64_t *pts, int64_t *duration);
int  pnmf_decoder_frame_sprites(const PnmfDecoder *dec, PnmfSpritePlacement *out, int max);
int  pnmf_decoder_sprite(const PnmfDecoder *dec, int sprite, PnmfSprite *out);
const char *pnmf_decoder_errmsg(const PnmfDecoder *dec);
void pnmf_decoder_destroy(PnmfDecoder **dec);

#endif /* PNMF_CODEC_H */
