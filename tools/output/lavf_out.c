/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A video file through libavformat and libavcodec: .mkv, .mp4, .webm, .gif
 * or .apng, so a decoded clip plays in any player. Each container has its
 * encoders in order of preference, the first one this FFmpeg has is used
 * (PnmfOutputInfo.codec names another), set up to keep the pixels:
 *
 *   mkv   FFV1, lossless, gray8: every pixel exact;
 *   mp4   libx264 -qp 0 (lossless, gray8), else MPEG-4 part 2 at its best
 *         quantizer (not lossless);
 *   webm  libvpx-vp9 lossless, yuv420p: the luma exact, the chroma neutral;
 *   gif   GIF, gray8 (256 grays): exact;
 *   apng  APNG, gray8: exact.
 *
 * An encoder without gray8 gets a YUV frame whose luma is the gray frame
 * and whose chroma is neutral (128), or, for RGB-only encoders, libswscale's
 * conversion. Levels as FFmpeg treats them: a gray or YUV stream keeps the
 * samples and is tagged with their range and colour; GIF, APNG and RGB
 * encoders get limited-range frames expanded to full range. Frames keep
 * the times and durations they are written with.
 */
#include <stdio.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

#include "output/av_dyn.h"

#include "input/avlog.h"
#include "output/output_internal.h"

typedef struct LavfOut {
    AVFormatContext *fmt;
    AVCodecContext *enc;
    AVStream *st;
    AVFrame *frame;
    AVPacket *pkt;
    struct SwsContext *sws;
    int width, height;
    int header_written;
    int expand;              /* limited-range frames: through lut first */
    uint8_t lut[256];
    uint8_t *expanded;       /* width x height */
    /* The durations of the frames in the encoder, by time, for the packets
     * that come out without one. */
    int64_t ring_pts[64], ring_dur[64];
    unsigned ring_next;
} LavfOut;

typedef struct Container {
    const char *name;        /* the format's name and the file extension */
    const char *muxer;
    const char *codecs[3];   /* in order of preference */
} Container;

static const Container containers[] = {
    { "mkv", "matroska", { "ffv1", NULL } },
    { "mp4", "mp4", { "libx264", "mpeg4", NULL } },
    { "webm", "webm", { "libvpx-vp9", NULL } },
    { "gif", "gif", { "gif", NULL } },
    { "apng", "apng", { "apng", NULL } },
};

/* The pixel format for codec: gray8 if it takes it, else a planar 8-bit
 * YUV (luma copied, chroma neutral), else its first format (libswscale). */
static enum AVPixelFormat pick_pix_fmt(const AVCodec *codec)
{
    static const enum AVPixelFormat pref[] = { AV_PIX_FMT_GRAY8, AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUV444P,
                                               AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUVJ444P };
    if (!codec->pix_fmts)
        return AV_PIX_FMT_GRAY8;
    for (size_t i = 0; i < sizeof(pref) / sizeof(pref[0]); i++)
        for (const enum AVPixelFormat *p = codec->pix_fmts; *p != AV_PIX_FMT_NONE; p++)
            if (*p == pref[i])
                return *p;
    return codec->pix_fmts[0];
}

/* The options that make codec keep the pixels. */
static void lossless_options(AVCodecContext *enc, const char *codec)
{
    if (!strcmp(codec, "libx264") || !strcmp(codec, "libx264rgb")) {
        av_opt_set(enc->priv_data, "qp", "0", 0);
    } else if (!strcmp(codec, "libvpx-vp9")) {
        av_opt_set(enc->priv_data, "lossless", "1", 0);
        av_opt_set(enc->priv_data, "row-mt", "1", 0);
    } else if (!strcmp(codec, "ffv1")) {
        av_opt_set(enc->priv_data, "slicecrc", "1", 0);
    } else if (!strcmp(codec, "mpeg4") || !strcmp(codec, "mjpeg")) {
        enc->flags |= AV_CODEC_FLAG_QSCALE;
        enc->global_quality = FF_QP2LAMBDA; /* quantizer 1, the finest */
    } else if (!strcmp(codec, "png") || !strcmp(codec, "apng")) {
        av_opt_set(enc->priv_data, "pred", "mixed", 0);
    }
}

static int lavf_close(void *priv, char *err, size_t errlen);

static int lavf_open(const Container *c, void *priv, const char *dest, const PnmfOutputInfo *info, char *err,
                     size_t errlen)
{
    LavfOut *p = priv;
    p->width = info->width;
    p->height = info->height;
    const AVCodec *codec = NULL;
    if (info->codec) {
        if (!(codec = avcodec_find_encoder_by_name(info->codec)) || codec->type != AVMEDIA_TYPE_VIDEO) {
            pnmf_output_set_err(err, errlen, "this FFmpeg has no video encoder '%s'", info->codec);
            return -1;
        }
    } else {
        for (int i = 0; !codec && c->codecs[i]; i++)
            codec = avcodec_find_encoder_by_name(c->codecs[i]);
        if (!codec) {
            pnmf_output_set_err(err, errlen, "this FFmpeg has no encoder for %s (%s)", c->name, c->codecs[0]);
            return -1;
        }
    }
    int ret = avformat_alloc_output_context2(&p->fmt, NULL, c->muxer, NULL);
    if (ret < 0 || !p->fmt) {
        pnmf_output_set_err(err, errlen, "this FFmpeg cannot write %s: %s", c->name, AVR(ret));
        return -1;
    }
    if (!(p->st = avformat_new_stream(p->fmt, NULL)) || !(p->enc = avcodec_alloc_context3(codec)) ||
        !(p->frame = av_frame_alloc()) || !(p->pkt = av_packet_alloc())) {
        pnmf_output_set_err(err, errlen, "out of memory");
        goto error;
    }
    p->enc->width = info->width;
    p->enc->height = info->height;
    p->enc->pix_fmt = pick_pix_fmt(codec);
    p->enc->time_base = info->time_base_num > 0 && info->time_base_den > 0
                            ? (AVRational){ info->time_base_num, info->time_base_den }
                            : (AVRational){ info->fps_den, info->fps_num };
    p->enc->framerate = (AVRational){ info->fps_num, info->fps_den };
    p->enc->sample_aspect_ratio = (AVRational){ 1, 1 };
    const AVPixFmtDescriptor *pd = av_pix_fmt_desc_get(p->enc->pix_fmt);
    const int full_only = !strcmp(c->name, "gif") || !strcmp(c->name, "apng") ||
                          (pd && (pd->flags & (AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL)));
    p->expand = full_only && info->color_range == AVCOL_RANGE_MPEG;
    pnmf_output_range_lut(p->lut);
    if (p->expand && !(p->expanded = av_malloc((size_t)info->width * info->height))) {
        pnmf_output_set_err(err, errlen, "out of memory");
        goto error;
    }
    if (!full_only) {
        p->enc->color_range = info->color_range;
        p->enc->color_primaries = info->color_primaries;
        p->enc->color_trc = info->color_trc;
        p->enc->colorspace = info->colorspace;
    } else {
        p->enc->color_range = AVCOL_RANGE_JPEG;
    }
    if (p->fmt->oformat->flags & AVFMT_GLOBALHEADER)
        p->enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    lossless_options(p->enc, codec->name);
    ret = avcodec_open2(p->enc, codec, NULL);
    if (ret < 0) {
        pnmf_output_set_err(err, errlen, "cannot open the %s encoder for %dx%d %s: %s", codec->name, info->width,
                            info->height, av_get_pix_fmt_name(p->enc->pix_fmt), AVR(ret));
        goto error;
    }
    if ((ret = avcodec_parameters_from_context(p->st->codecpar, p->enc)) < 0) {
        pnmf_output_set_err(err, errlen, "cannot set up the %s stream: %s", c->name, AVR(ret));
        goto error;
    }
    p->st->time_base = p->enc->time_base;
    p->st->avg_frame_rate = p->enc->framerate;
    p->st->sample_aspect_ratio = p->enc->sample_aspect_ratio;

    p->frame->format = p->enc->pix_fmt;
    p->frame->width = info->width;
    p->frame->height = info->height;
    if (av_frame_get_buffer(p->frame, 0) < 0) {
        pnmf_output_set_err(err, errlen, "out of memory");
        goto error;
    }
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(p->enc->pix_fmt);
    if (p->enc->pix_fmt != AV_PIX_FMT_GRAY8 && (d->flags & AV_PIX_FMT_FLAG_RGB || d->nb_components < 3 ||
                                                d->comp[0].depth != 8 || !(d->flags & AV_PIX_FMT_FLAG_PLANAR))) {
        p->sws = sws_getContext(info->width, info->height, AV_PIX_FMT_GRAY8, info->width, info->height,
                                p->enc->pix_fmt, SWS_POINT | SWS_ACCURATE_RND | SWS_BITEXACT, NULL, NULL, NULL);
        if (!p->sws) {
            pnmf_output_set_err(err, errlen, "cannot convert gray to %s", d->name);
            goto error;
        }
    }
    if ((ret = avio_open(&p->fmt->pb, dest, AVIO_FLAG_WRITE)) < 0) {
        pnmf_output_set_err(err, errlen, "cannot create: %s", AVR(ret));
        goto error;
    }
    if ((ret = avformat_write_header(p->fmt, NULL)) < 0) {
        pnmf_output_set_err(err, errlen, "cannot write the %s header: %s", c->name, AVR(ret));
        goto error;
    }
    p->header_written = 1;
    return 0;

error:
    lavf_close(p, NULL, 0);
    return -1;
}

/* Send frame (NULL: flush) and write the packets that come out. 0 or -1. */
static int encode(LavfOut *p, const AVFrame *frame, char *err, size_t errlen)
{
    int ret = avcodec_send_frame(p->enc, frame);
    if (ret < 0) {
        pnmf_output_set_err(err, errlen, "encoding failed: %s", AVR(ret));
        return -1;
    }
    for (;;) {
        ret = avcodec_receive_packet(p->enc, p->pkt);
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF)
            return 0;
        if (ret < 0) {
            pnmf_output_set_err(err, errlen, "encoding failed: %s", AVR(ret));
            return -1;
        }
        p->pkt->stream_index = p->st->index;
        for (unsigned i = 0; !p->pkt->duration && i < 64; i++)
            if (p->ring_pts[i] == p->pkt->pts && p->ring_dur[i] > 0)
                p->pkt->duration = p->ring_dur[i];
        av_packet_rescale_ts(p->pkt, p->enc->time_base, p->st->time_base);
        ret = av_interleaved_write_frame(p->fmt, p->pkt);
        if (ret < 0) {
            pnmf_output_set_err(err, errlen, "cannot write: %s", AVR(ret));
            return -1;
        }
    }
}

static int lavf_write(void *priv, unsigned index, const uint8_t *gray, ptrdiff_t stride, int64_t pts,
                      int64_t duration, char *err, size_t errlen)
{
    LavfOut *p = priv;
    AVFrame *f = p->frame;
    if (p->expand) {
        for (int y = 0; y < p->height; y++)
            for (int x = 0; x < p->width; x++)
                p->expanded[(size_t)y * p->width + x] = p->lut[gray[y * stride + x]];
        gray = p->expanded;
        stride = p->width;
    }
    if (av_frame_make_writable(f) < 0) {
        pnmf_output_set_err(err, errlen, "out of memory");
        return -1;
    }
    if (p->sws) {
        const uint8_t *src[4] = { gray, NULL, NULL, NULL };
        const int src_stride[4] = { (int)stride, 0, 0, 0 };
        sws_scale(p->sws, src, src_stride, 0, p->height, f->data, f->linesize);
    } else {
        for (int y = 0; y < p->height; y++)
            memcpy(f->data[0] + (ptrdiff_t)y * f->linesize[0], gray + y * stride, p->width);
        if (f->format != AV_PIX_FMT_GRAY8) {
            const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
            const int ch = AV_CEIL_RSHIFT(p->height, d->log2_chroma_h);
            const int cw = AV_CEIL_RSHIFT(p->width, d->log2_chroma_w);
            for (int c = 1; c <= 2; c++)
                for (int y = 0; y < ch; y++)
                    memset(f->data[c] + (ptrdiff_t)y * f->linesize[c], 128, cw);
        }
    }
    f->pts = pts;
    f->pkt_duration = duration;
    p->ring_pts[p->ring_next % 64] = pts;
    p->ring_dur[p->ring_next++ % 64] = duration;
    if (encode(p, f, err, errlen) < 0) {
        pnmf_output_set_err(err, errlen, "frame %u: %s", index, err);
        return -1;
    }
    return 0;
}

static int lavf_close(void *priv, char *err, size_t errlen)
{
    LavfOut *p = priv;
    int ret = 0;
    if (p->header_written && err) {
        /* a close after a good run (err given): the encoder's last packets
         * and the trailer */
        if (encode(p, NULL, err, errlen) < 0)
            ret = -1;
        int r = av_write_trailer(p->fmt);
        if (r < 0 && ret == 0) {
            pnmf_output_set_err(err, errlen, "cannot write: %s", AVR(r));
            ret = -1;
        }
    }
    if (p->fmt && p->fmt->pb) {
        int r = avio_closep(&p->fmt->pb);
        if (r < 0 && ret == 0) {
            pnmf_output_set_err(err, errlen, "cannot write: %s", AVR(r));
            ret = -1;
        }
    }
    avformat_free_context(p->fmt);
    p->fmt = NULL;
    sws_freeContext(p->sws);
    p->sws = NULL;
    av_freep(&p->expanded);
    av_packet_free(&p->pkt);
    av_frame_free(&p->frame);
    avcodec_free_context(&p->enc);
    p->header_written = 0;
    return ret;
}

#define CONTAINER(i, ext)                                                                                  \
    static int ext##_open(void *priv, const char *dest, const PnmfOutputInfo *info, char *err, size_t errlen) \
    {                                                                                                       \
        return lavf_open(&containers[i], priv, dest, info, err, errlen);                                   \
    }                                                                                                       \
    const PnmfOutputFormat pnmf_output_##ext = {                                                            \
        .name = #ext, .priv_size = sizeof(LavfOut), .open = ext##_open, .write = lavf_write,               \
        .close = lavf_close, .ffmpeg = 1,                                                                   \
    };

CONTAINER(0, mkv)
CONTAINER(1, mp4)
CONTAINER(2, webm)
CONTAINER(3, gif)
CONTAINER(4, apng)
