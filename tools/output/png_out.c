/* SPDX-License-Identifier: GPL-2.0-or-later */
/* PNG files, one per frame (DIR/frame_000001.png, ...), gray8 (or gray+alpha,
 * PnmfOutputInfo.alpha), encoded by libavcodec's PNG encoder. PNG pixels are full range: limited-range frames
 * are expanded, as FFmpeg converts such a source to PNG. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/opt.h>

#include "output/av_dyn.h"

#include "input/avlog.h"
#include "output/output_internal.h"

typedef struct PngOut {
    char *dir;
    AVCodecContext *enc;
    AVFrame *frame;
    AVPacket *pkt;
    int expand;             /* limited-range frames: through lut */
    int alpha;              /* rows of (gray, alpha) pairs, written as ya8 */
    uint8_t lut[256];
} PngOut;

static int png_close(void *priv, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    PngOut *p = priv;
    av_packet_free(&p->pkt);
    av_frame_free(&p->frame);
    avcodec_free_context(&p->enc);
    free(p->dir);
    p->dir = NULL;
    return 0;
}

static int png_open(void *priv, const char *dest, const PnmfOutputInfo *info,
                    char *err, size_t errlen)
{
    PngOut *p = priv;
    const AVCodec *codec = avcodec_find_encoder(AV_CODEC_ID_PNG);
    if (!codec) {
        pnmf_output_set_err(err, errlen, "this FFmpeg has no PNG encoder");
        return -1;
    }
    if (pnmf_output_mkdir(dest, err, errlen) < 0)
        return -1;
    if (!(p->dir = strdup(dest)) || !(p->enc = avcodec_alloc_context3(codec)) ||
        !(p->frame = av_frame_alloc()) || !(p->pkt = av_packet_alloc())) {
        pnmf_output_set_err(err, errlen, "out of memory");
        goto error;
    }
    p->enc->width = info->width;
    p->enc->height = info->height;
    p->alpha = info->alpha;
    p->enc->pix_fmt = p->alpha ? AV_PIX_FMT_YA8 : AV_PIX_FMT_GRAY8;
    p->enc->color_range = AVCOL_RANGE_JPEG;
    p->expand = info->color_range == AVCOL_RANGE_MPEG;
    pnmf_output_range_lut(p->lut);
    p->enc->time_base = (AVRational){ info->fps_den, info->fps_num };
    p->enc->thread_count = 1; /* one packet out for each frame in */
    /* Per-row filter choice: smaller files at little cost. */
    av_opt_set(p->enc->priv_data, "pred", "mixed", 0);
    int ret = avcodec_open2(p->enc, codec, NULL);
    if (ret < 0) {
        pnmf_output_set_err(err, errlen, "cannot open the PNG encoder: %s", AVR(ret));
        goto error;
    }

    p->frame->format = p->enc->pix_fmt;
    p->frame->width = info->width;
    p->frame->height = info->height;
    ret = av_frame_get_buffer(p->frame, 0);
    if (ret < 0) {
        pnmf_output_set_err(err, errlen, "out of memory");
        goto error;
    }
    return 0;

error:
    png_close(p, NULL, 0);
    return -1;
}

static int png_write(void *priv, unsigned index, const uint8_t *gray, ptrdiff_t stride, int64_t pts,
                     int64_t duration, char *err, size_t errlen)
{
    (void)pts;
    (void)duration;
    PngOut *p = priv;
    int ret = av_frame_make_writable(p->frame);
    if (ret < 0) {
        pnmf_output_set_err(err, errlen, "out of memory");
        return -1;
    }
    for (int y = 0; y < p->frame->height; y++) {
        uint8_t *dst = p->frame->data[0] + (ptrdiff_t)y * p->frame->linesize[0];
        const uint8_t *src = gray + y * stride;
        const int bytes = p->frame->width << p->alpha, step = 1 + p->alpha; /* alpha: every second byte */
        memcpy(dst, src, bytes);
        if (p->expand)
            for (int x = 0; x < bytes; x += step) dst[x] = p->lut[src[x]];
    }
    p->frame->pts = index - 1;

    ret = avcodec_send_frame(p->enc, p->frame);
    if (ret < 0) {
        pnmf_output_set_err(err, errlen, "encoding frame %u failed: %s", index, AVR(ret));
        return -1;
    }
    ret = avcodec_receive_packet(p->enc, p->pkt);
    if (ret < 0) {
        pnmf_output_set_err(err, errlen, "encoding frame %u failed: %s", index, AVR(ret));
        return -1;
    }
    ret = pnmf_output_put_frame_file(p->dir, index, "png", NULL, 0, p->pkt->data,
                                     (size_t)p->pkt->size, err, errlen);
    av_packet_unref(p->pkt);
    return ret;
}

const PnmfOutputFormat pnmf_output_png = {
    .name = "png",
    .priv_size = sizeof(PngOut),
    .ffmpeg = 1,
    .open = png_open,
    .write = png_write,
    .close = png_close,
};
