/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One gray8 picture to one PNG file, through libavcodec's PNG encoder,
 * written to a temporary file beside the target and renamed. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavutil/frame.h>
#include <libavutil/log.h>

#include "cli_util.h"
#include "paper.h"

int paper_png_write(const char *path, const PaperMontage *mt, char *err, size_t errlen)
{
    const AVCodec *codec = avcodec_find_encoder(AV_CODEC_ID_PNG);
    AVCodecContext *enc = NULL;
    AVFrame *frame = NULL;
    AVPacket *pkt = NULL;
    FILE *f = NULL;
    int ret = -1;
    av_log_set_level(AV_LOG_ERROR);
    if (!codec) {
        snprintf(err, errlen, "this FFmpeg has no PNG encoder");
        return -1;
    }
    if (!(enc = avcodec_alloc_context3(codec)) || !(frame = av_frame_alloc()) || !(pkt = av_packet_alloc())) {
        snprintf(err, errlen, "out of memory");
        goto end;
    }
    enc->width = mt->width;
    enc->height = mt->height;
    enc->pix_fmt = AV_PIX_FMT_GRAY8;
    enc->time_base = (AVRational){ 1, 1 };
    enc->thread_count = 1;
    if (avcodec_open2(enc, codec, NULL) < 0) {
        snprintf(err, errlen, "cannot open the PNG encoder");
        goto end;
    }
    frame->format = AV_PIX_FMT_GRAY8;
    frame->width = mt->width;
    frame->height = mt->height;
    if (av_frame_get_buffer(frame, 0) < 0) {
        snprintf(err, errlen, "out of memory");
        goto end;
    }
    for (int y = 0; y < mt->height; y++)
        memcpy(frame->data[0] + (ptrdiff_t)y * frame->linesize[0], mt->pix + (size_t)y * mt->width,
               (size_t)mt->width);
    frame->pts = 0;
    if (avcodec_send_frame(enc, frame) < 0 || avcodec_receive_packet(enc, pkt) < 0) {
        snprintf(err, errlen, "PNG encoding failed");
        goto end;
    }
    if (!(f = cli_tmp_open(path))) {
        snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
        goto end;
    }
    if (fwrite(pkt->data, 1, (size_t)pkt->size, f) != (size_t)pkt->size) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        cli_tmp_discard(f);
        goto end;
    }
    if (cli_tmp_commit(f, path) < 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        goto end;
    }
    ret = 0;
end:
    av_packet_free(&pkt);
    av_frame_free(&frame);
    avcodec_free_context(&enc);
    return ret;
}
