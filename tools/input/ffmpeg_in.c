/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Any clip FFmpeg reads, as gray8 frames.
 *
 * libavformat opens the file (or an image-sequence pattern such as
 * dir/frame_%06d.png: the image2 demuxer claims a path with %d by its name
 * alone), libavcodec decodes the first video stream with the send/receive
 * API and a flush at the end, and each frame becomes gray8 in one of three
 * ways, chosen by its pixel format:
 *
 *   copy  8-bit YUV or gray whose luma is a plane of its own: plane 0 as
 *         stored (limited or full range, untouched);
 *   luma  any other YUV or gray layout (>8 bits, packed, semi-planar, with
 *         alpha): the luma component read by av_read_image_line2() and
 *         rounded to 8 bits, again with no range change;
 *   sws   RGB, palette, 1-bit, float and the rest: libswscale to BT.601
 *         luma in full range 0-255.
 *
 * The first frame is decoded at open time so the size is known; every later
 * frame must have that size. The info also says what FFmpeg takes the
 * luma's levels to be (untagged YUV: limited, untagged gray: full), the
 * colour codes, and the stream's time base, in which each frame's time
 * (best-effort timestamp, from the first frame's) is given back.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

#include "input/avlog.h"
#include "input/demuxer.h"

/* Frames larger than this on a side are refused before any allocation. */
#define PNMF_INPUT_MAX_SIDE 32768
/* A chroma sample this far (of 255) from neutral, or an R, G, B this far
 * apart, is colour: a gray clip stored as YUV or RGB stays within it. */
#define COLOUR_TOLERANCE 8
/* Demuxer errors in a row after which the clip is taken to have ended. */
#define MAX_READ_ERRORS 64

enum PnmfConv {
    PNMF_CONV_COPY,
    PNMF_CONV_LUMA,
    PNMF_CONV_SWS,
};

struct PnmfInput {
    AVFormatContext *fmt;
    AVCodecContext *dec;
    AVPacket *pkt;
    AVFrame *frame;
    int stream;
    int width, height;
    int64_t frames;         /* frames decoded so far (the one in frame counts) */
    int pending;            /* frame holds a decoded frame not yet returned */
    int flushing;           /* the demuxer is done; the decoder is draining */
    int failed;             /* a read failed; later reads fail too */
    int64_t first_ts;       /* the first frame's timestamp (pnmf_input_seek) */
    int64_t last_pts, last_dur; /* pnmf_input_last_time() */

    /* Damaged input (PnmfInputOptions.strict 0): frames lost and not yet
     * given again, the copy of the last good frame that stands in for them. */
    int strict;
    int64_t lost, concealed;
    int read_errors;        /* demuxer errors in a row */
    uint8_t *last;          /* width x height, the last frame returned */
    int have_last;

    /* What the warnings have said already. */
    void (*warn)(void *cookie, const char *msg);
    void *cookie;
    int said_colour, said_alpha, said_conceal;
    uint16_t *scratch;      /* 3 rows of samples for check_dropped() */

    /* Conversion state, rebuilt when the pixel format changes. */
    int conv_fmt;           /* enum AVPixelFormat the state below was made for */
    enum PnmfConv conv;
    struct SwsContext *sws;
    uint8_t *sws_buf;       /* aligned gray8 scratch the scaler writes into */
    int sws_stride;
    uint16_t *line;         /* one row of luma samples (PNMF_CONV_LUMA) */
};

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static void warn(PnmfInput *in, const char *fmt, ...)
{
    if (!in->warn)
        return;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    in->warn(in->cookie, msg);
}

static int is_yuv_or_gray(const AVPixFmtDescriptor *d)
{
    const uint64_t other = AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL |
                           AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_BAYER |
                           AV_PIX_FMT_FLAG_FLOAT | AV_PIX_FMT_FLAG_BITSTREAM;
    return d->nb_components >= 1 && !(d->flags & other) &&
           strncmp(d->name, "xyz", 3) != 0 && d->comp[0].depth <= 16;
}

/* Pick (and set up) the conversion for pixel format f. */
static int conv_setup(PnmfInput *in, int f, char *err, size_t errlen)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f);
    if (!d) {
        set_err(err, errlen, "frame %"PRId64" has an unknown pixel format (%d)", in->frames, f);
        return -1;
    }
    sws_freeContext(in->sws);
    in->sws = NULL;
    in->conv_fmt = f;

    if (is_yuv_or_gray(d)) {
        const AVComponentDescriptor *c = &d->comp[0];
        if (c->plane == 0 && c->depth == 8 && c->step == 1 && c->shift == 0 && c->offset == 0) {
            in->conv = PNMF_CONV_COPY;
            return 0;
        }
        in->conv = PNMF_CONV_LUMA;
        if (!in->line && !(in->line = av_malloc_array(in->width, sizeof(*in->line))))
            goto nomem;
        return 0;
    }

    in->conv = PNMF_CONV_SWS;
    in->sws = sws_getContext(in->width, in->height, f, in->width, in->height, AV_PIX_FMT_GRAY8,
                             SWS_POINT | SWS_ACCURATE_RND | SWS_BITEXACT, NULL, NULL, NULL);
    if (!in->sws) {
        set_err(err, errlen, "cannot convert pixel format %s to gray", d->name);
        in->conv_fmt = AV_PIX_FMT_NONE;
        return -1;
    }
    /* BT.601 luma; the output is full range whatever the source is. */
    const int *coefs = sws_getCoefficients(SWS_CS_ITU601);
    sws_setColorspaceDetails(in->sws, coefs, 1, coefs, 1, 0, 1 << 16, 1 << 16);
    if (!in->sws_buf) {
        in->sws_stride = FFALIGN(in->width, 64);
        if (!(in->sws_buf = av_malloc((size_t)in->sws_stride * in->height)))
            goto nomem;
    }
    return 0;

nomem:
    set_err(err, errlen, "out of memory");
    in->conv_fmt = AV_PIX_FMT_NONE;
    return -1;
}

/* Convert in->frame to gray8 into buf. */
static int convert(PnmfInput *in, uint8_t *buf, ptrdiff_t stride, char *err, size_t errlen)
{
    const AVFrame *f = in->frame;
    const int w = in->width, h = in->height;

    if (f->format != in->conv_fmt && conv_setup(in, f->format, err, errlen) < 0)
        return -1;

    switch (in->conv) {
    case PNMF_CONV_COPY:
        for (int y = 0; y < h; y++)
            memcpy(buf + y * stride, f->data[0] + (ptrdiff_t)y * f->linesize[0], w);
        return 0;

    case PNMF_CONV_LUMA: {
        const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
        const int depth = d->comp[0].depth;
        const uint8_t *data[4] = { f->data[0], f->data[1], f->data[2], f->data[3] };
        const int linesize[4] = { f->linesize[0], f->linesize[1], f->linesize[2], f->linesize[3] };
        for (int y = 0; y < h; y++) {
            uint8_t *dst = buf + y * stride;
            av_read_image_line2(in->line, data, linesize, d, 0, y, 0, w, 0, 2);
            if (depth > 8) {
                /* Scale the depth only: v / 2^(depth-8), rounded. */
                const int sh = depth - 8, half = 1 << (sh - 1);
                for (int x = 0; x < w; x++) {
                    const int v = (in->line[x] + half) >> sh;
                    dst[x] = (uint8_t)(v > 255 ? 255 : v);
                }
            } else if (depth == 8) {
                for (int x = 0; x < w; x++)
                    dst[x] = (uint8_t)in->line[x];
            } else {
                const int max = (1 << depth) - 1;
                for (int x = 0; x < w; x++)
                    dst[x] = (uint8_t)((in->line[x] * 255 + max / 2) / max);
            }
        }
        return 0;
    }

    case PNMF_CONV_SWS: {
        uint8_t *dst[4] = { in->sws_buf, NULL, NULL, NULL };
        int dst_stride[4] = { in->sws_stride, 0, 0, 0 };
        if (sws_scale(in->sws, (const uint8_t *const *)f->data, f->linesize, 0, h, dst, dst_stride) != h) {
            set_err(err, errlen, "converting frame %"PRId64" to gray failed", in->frames);
            return -1;
        }
        for (int y = 0; y < h; y++)
            memcpy(buf + y * stride, in->sws_buf + (ptrdiff_t)y * in->sws_stride, w);
        return 0;
    }
    }
    return -1;
}

/* A frame lost to error code: an error when strict, else one frame more to
 * conceal. 0 to go on, -1 (err set). */
static int lose(PnmfInput *in, int code, const char *what, char *err, size_t errlen)
{
    if (in->strict) {
        set_err(err, errlen, "%s frame %"PRId64" failed: %s", what, in->frames + in->lost + 1, AVR(code));
        return -1;
    }
    if (!in->said_conceal) {
        warn(in, "frame %"PRId64" cannot be read (%s: %s): the last good frame stands in for every such frame"
             " (--strict: stop instead)", in->frames + in->lost + 1, what, AVR(code));
        in->said_conceal = 1;
    }
    in->lost++;
    return 0;
}

/* Decode the next frame of the stream into in->frame.
 * Returns 1 with a frame, 0 at the end, -1 on error. */
static int decode_next(PnmfInput *in, char *err, size_t errlen)
{
    for (;;) {
        int ret = avcodec_receive_frame(in->dec, in->frame);
        if (ret >= 0) {
            if (in->strict && (in->frame->decode_error_flags || (in->frame->flags & AV_FRAME_FLAG_CORRUPT))) {
                set_err(err, errlen, "frame %"PRId64" is damaged", in->frames + 1);
                return -1;
            }
            in->frames++;
            return 1;
        }
        if (ret == AVERROR_EOF)
            return 0;
        if (ret != AVERROR(EAGAIN)) {
            if (lose(in, ret, "decoding", err, errlen) < 0)
                return -1;
            continue;
        }
        if (in->flushing)
            return 0;

        ret = av_read_frame(in->fmt, in->pkt);
        /* concealing: an error at the end of the file (a truncated last
         * frame) or one of too many in a row ends the clip */
        if (ret < 0 && ret != AVERROR_EOF && !in->strict &&
            ((in->fmt->pb && avio_feof(in->fmt->pb)) || ++in->read_errors > MAX_READ_ERRORS))
            ret = AVERROR_EOF;
        if (ret == AVERROR_EOF) {
            in->flushing = 1;
            ret = avcodec_send_packet(in->dec, NULL);
            /* concealing: the frames the decoder still holds are lost with
             * the error, and the clip ends here */
            if (ret < 0 && ret != AVERROR_EOF && in->strict) {
                set_err(err, errlen, "flushing the decoder failed: %s", AVR(ret));
                return -1;
            }
            continue;
        }
        if (ret < 0) {
            if (in->strict) {
                set_err(err, errlen, "reading after frame %"PRId64" failed: %s", in->frames, AVR(ret));
                return -1;
            }
            if (lose(in, ret, "reading", err, errlen) < 0)
                return -1;
            continue;
        }
        in->read_errors = 0;
        if (in->pkt->stream_index != in->stream) {
            av_packet_unref(in->pkt);
            continue;
        }
        ret = avcodec_send_packet(in->dec, in->pkt);
        av_packet_unref(in->pkt);
        if (ret < 0 && lose(in, ret, "decoding", err, errlen) < 0)
            return -1;
    }
}

/* Samples of component c in row y of f (w of them, subsampled as the
 * format says) into line. */
static void read_comp(const AVFrame *f, const AVPixFmtDescriptor *d, int c, int y, int w, uint16_t *line)
{
    const uint8_t *data[4] = { f->data[0], f->data[1], f->data[2], f->data[3] };
    const int linesize[4] = { f->linesize[0], f->linesize[1], f->linesize[2], f->linesize[3] };
    av_read_image_line2(line, data, linesize, d, 0, y, c, w, 0, 2);
}

/* Warn, once each, when in->frame has colour or transparent pixels. */
static void check_dropped(PnmfInput *in, uint16_t *a, uint16_t *b, uint16_t *c)
{
    const AVFrame *f = in->frame;
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
    if (!d || (d->flags & (AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_BAYER | AV_PIX_FMT_FLAG_BITSTREAM |
                           AV_PIX_FMT_FLAG_FLOAT)))
        return;
    const int w = f->width, h = f->height;
    int colour = 0, alpha = 0;
    if (d->flags & AV_PIX_FMT_FLAG_PAL) {
        const uint32_t *pal = (const uint32_t *)f->data[1];
        for (int y = 0; y < h && !(colour && alpha); y++)
            for (int x = 0; x < w; x++) {
                const uint32_t p = pal[f->data[0][(ptrdiff_t)y * f->linesize[0] + x]];
                const int r = (p >> 16) & 255, g = (p >> 8) & 255, bl = p & 255;
                colour |= abs(r - g) > COLOUR_TOLERANCE || abs(g - bl) > COLOUR_TOLERANCE;
                alpha |= (p >> 24) != 255;
            }
    } else {
        const int sh = d->comp[0].depth > 8 ? d->comp[0].depth - 8 : 0;
        const int tol = COLOUR_TOLERANCE << sh;
        const int has_alpha = (d->flags & AV_PIX_FMT_FLAG_ALPHA) != 0;
        const int ncol = d->nb_components - has_alpha;
        if (ncol >= 3 && !in->said_colour) {
            const int rgb = (d->flags & AV_PIX_FMT_FLAG_RGB) != 0;
            const int cw = rgb ? w : AV_CEIL_RSHIFT(w, d->log2_chroma_w);
            const int ch = rgb ? h : AV_CEIL_RSHIFT(h, d->log2_chroma_h);
            const int mid = 1 << (d->comp[1].depth - 1);
            for (int y = 0; y < ch && !colour; y++) {
                read_comp(f, d, 1, y, cw, b);
                read_comp(f, d, 2, y, cw, c);
                if (rgb)
                    read_comp(f, d, 0, y, cw, a);
                for (int x = 0; x < cw && !colour; x++)
                    colour = rgb ? abs(a[x] - b[x]) > tol || abs(b[x] - c[x]) > tol
                                 : abs(b[x] - mid) > tol || abs(c[x] - mid) > tol;
            }
        }
        if (has_alpha && !in->said_alpha) {
            const int ac = d->nb_components - 1, max = (1 << d->comp[ac].depth) - 1;
            for (int y = 0; y < h && !alpha; y++) {
                read_comp(f, d, ac, y, w, a);
                for (int x = 0; x < w && !alpha; x++)
                    alpha = a[x] != max;
            }
        }
    }
    if (colour && !in->said_colour) {
        warn(in, "colour dropped from frame %"PRId64" on: pnmf codes the luma (gray) alone", in->frames);
        in->said_colour = 1;
    }
    if (alpha && !in->said_alpha) {
        warn(in, "transparency (alpha) dropped from frame %"PRId64" on: pnmf codes opaque gray frames", in->frames);
        in->said_alpha = 1;
    }
}

static int find_video_stream(const AVFormatContext *fmt)
{
    for (unsigned i = 0; i < fmt->nb_streams; i++) {
        const AVStream *st = fmt->streams[i];
        if (st->codecpar->codec_type == AVMEDIA_TYPE_VIDEO &&
            !(st->disposition & AV_DISPOSITION_ATTACHED_PIC))
            return (int)i;
    }
    return -1;
}

/* The levels FFmpeg gives frame f's luma (demuxer.h, PnmfInputInfo). */
static int effective_range(const AVFrame *f)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
    if (!d || !is_yuv_or_gray(d))
        return AVCOL_RANGE_JPEG; /* libswscale's full-range luma */
    if (f->color_range == AVCOL_RANGE_MPEG || f->color_range == AVCOL_RANGE_JPEG)
        return f->color_range;
    if (strncmp(d->name, "yuvj", 4) == 0)
        return AVCOL_RANGE_JPEG;
    return d->nb_components >= 3 ? AVCOL_RANGE_MPEG : AVCOL_RANGE_JPEG; /* gray images are full range */
}

static void fill_info(const PnmfInput *in, PnmfInputInfo *info)
{
    const AVStream *st = in->fmt->streams[in->stream];
    const AVFrame *f = in->frame;
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
    info->color_range = effective_range(f);
    info->color_range_assumed = d && is_yuv_or_gray(d) && d->nb_components < 3 &&
                                f->color_range != AVCOL_RANGE_MPEG && f->color_range != AVCOL_RANGE_JPEG;
    info->color_primaries = f->color_primaries;
    info->color_trc = f->color_trc;
    /* RGB input: the BT.601 luma conv_setup() asks libswscale for */
    info->colorspace = d && !is_yuv_or_gray(d) ? AVCOL_SPC_SMPTE170M : f->colorspace;
    info->time_base_num = st->time_base.num;
    info->time_base_den = st->time_base.den;
    AVRational fps = st->avg_frame_rate;
    if (fps.num <= 0 || fps.den <= 0)
        fps = st->r_frame_rate;
    if (fps.num <= 0 || fps.den <= 0)
        fps = (AVRational){ 25, 1 };
    av_reduce(&fps.num, &fps.den, fps.num, fps.den, INT32_MAX);

    info->width = in->width;
    info->height = in->height;
    info->fps_num = fps.num;
    info->fps_den = fps.den;

    /* What the container says: a frame count, else the duration. */
    const AVRational frame_tb = av_inv_q(fps);
    if (st->nb_frames > 0)
        info->frame_estimate = st->nb_frames;
    else if (st->duration > 0 && st->duration != AV_NOPTS_VALUE)
        info->frame_estimate = av_rescale_q(st->duration, st->time_base, frame_tb);
    else if (in->fmt->duration > 0 && in->fmt->duration != AV_NOPTS_VALUE)
        info->frame_estimate = av_rescale_q(in->fmt->duration, AV_TIME_BASE_Q, frame_tb);
    else
        info->frame_estimate = -1;
}

void pnmf_input_default_options(PnmfInputOptions *o)
{
    memset(o, 0, sizeof(*o));
    o->start_number = -1;
}

PnmfInput *pnmf_input_open(const char *path, PnmfInputInfo *info, char *err, size_t errlen)
{
    PnmfInputOptions o;
    pnmf_input_default_options(&o);
    o.strict = 1;
    return pnmf_input_open_opts(path, &o, info, err, errlen);
}

/* What avformat_open_input() gets for path: stdin for "-", image2 with a
 * glob for a pattern that is not a file, image2's start_number. 0 or -1. */
static int input_url(const char *path, const PnmfInputOptions *o, const char **url, const AVInputFormat **ifmt,
                     AVDictionary **dict)
{
    struct stat sb;
    *url = path;
    if (!strcmp(path, "-")) {
        *url = "pipe:0";
        return 0;
    }
    if (stat(path, &sb) < 0 && strpbrk(path, "*?[") && !strchr(path, '%')) {
        *ifmt = av_find_input_format("image2");
        if (av_dict_set(dict, "pattern_type", "glob", 0) < 0)
            return -1;
    }
    if (o->start_number >= 0) {
        *ifmt = av_find_input_format("image2");
        if (av_dict_set_int(dict, "start_number", o->start_number, 0) < 0)
            return -1;
    }
    return 0;
}

PnmfInput *pnmf_input_open_opts(const char *path, const PnmfInputOptions *opts, PnmfInputInfo *info, char *err,
                                size_t errlen)
{
    if (!path || !info || !opts) {
        set_err(err, errlen, "invalid argument");
        return NULL;
    }
    pnmf_av_log_apply();

    PnmfInput *in = calloc(1, sizeof(*in));
    if (!in) {
        set_err(err, errlen, "out of memory");
        return NULL;
    }
    in->conv_fmt = AV_PIX_FMT_NONE;
    in->strict = opts->strict;
    in->warn = opts->warn;
    in->cookie = opts->cookie;

    const char *url;
    const AVInputFormat *ifmt = NULL;
    AVDictionary *dict = NULL;
    int ret = input_url(path, opts, &url, &ifmt, &dict);
    if (ret == 0)
        ret = avformat_open_input(&in->fmt, url, ifmt, &dict);
    else
        ret = AVERROR(ENOMEM);
    av_dict_free(&dict);
    if (ret < 0) {
        set_err(err, errlen, "cannot open: %s", AVR(ret));
        goto error;
    }
    ret = avformat_find_stream_info(in->fmt, NULL);
    if (ret < 0) {
        set_err(err, errlen, "cannot read the stream parameters: %s", AVR(ret));
        goto error;
    }
    in->stream = find_video_stream(in->fmt);
    if (in->stream < 0) {
        set_err(err, errlen, "no video stream");
        goto error;
    }
    int audio = 0;
    for (unsigned i = 0; i < in->fmt->nb_streams; i++) {
        if ((int)i != in->stream)
            in->fmt->streams[i]->discard = AVDISCARD_ALL;
        audio |= in->fmt->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_AUDIO;
    }
    if (audio)
        warn(in, "audio dropped: pnmf codes the video alone");

    const AVStream *st = in->fmt->streams[in->stream];
    const AVCodec *codec = avcodec_find_decoder(st->codecpar->codec_id);
    if (!codec) {
        set_err(err, errlen, "no decoder for %s video", avcodec_get_name(st->codecpar->codec_id));
        goto error;
    }
    if (!(in->dec = avcodec_alloc_context3(codec)) ||
        !(in->pkt = av_packet_alloc()) || !(in->frame = av_frame_alloc())) {
        set_err(err, errlen, "out of memory");
        goto error;
    }
    ret = avcodec_parameters_to_context(in->dec, st->codecpar);
    if (ret < 0) {
        set_err(err, errlen, "cannot set up the %s decoder: %s", codec->name, AVR(ret));
        goto error;
    }
    in->dec->pkt_timebase = st->time_base;
    in->dec->thread_count = 0; /* as many as useful */
    if (in->strict)
        in->dec->err_recognition |= AV_EF_EXPLODE;
    ret = avcodec_open2(in->dec, codec, NULL);
    if (ret < 0) {
        set_err(err, errlen, "cannot open the %s decoder: %s", codec->name, AVR(ret));
        goto error;
    }

    ret = decode_next(in, err, errlen);
    if (ret < 0)
        goto error;
    if (ret == 0) {
        set_err(err, errlen, "no frames");
        goto error;
    }
    in->width = in->frame->width;
    in->height = in->frame->height;
    if (in->width <= 0 || in->height <= 0 ||
        in->width > PNMF_INPUT_MAX_SIDE || in->height > PNMF_INPUT_MAX_SIDE) {
        set_err(err, errlen, "unsupported frame size %dx%d", in->width, in->height);
        goto error;
    }
    in->pending = 1;
    if (!(in->last = malloc((size_t)in->width * in->height)) ||
        !(in->scratch = av_malloc_array(3 * (size_t)in->width, sizeof(*in->scratch)))) {
        set_err(err, errlen, "out of memory");
        goto error;
    }
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(in->frame->format);
    int depth = 0;
    for (int c = 0; d && c < d->nb_components; c++)
        depth = d->comp[c].depth > depth ? d->comp[c].depth : depth;
    if (depth > 8)
        warn(in, "%d-bit samples rounded to 8 bits (%s)", depth, d->name);
    in->first_ts = in->frame->best_effort_timestamp;
    fill_info(in, info);
    return in;

error:
    pnmf_input_close(&in);
    return NULL;
}

int pnmf_input_read(PnmfInput *in, uint8_t *buf, ptrdiff_t stride, char *err, size_t errlen)
{
    if (!in || !buf || stride < (in ? in->width : 0)) {
        set_err(err, errlen, "invalid argument");
        return -1;
    }
    if (in->failed) {
        set_err(err, errlen, "the clip failed to read earlier");
        return -1;
    }
    if (!in->pending) {
        const int ret = decode_next(in, err, errlen);
        if (ret < 0 || (ret == 0 && !(in->lost && in->have_last))) {
            in->failed = ret < 0;
            return ret;
        }
        in->pending = ret;
    }
    /* Frames lost ahead of this one: the last good frame again, each. */
    if (in->lost && in->have_last) {
        for (int y = 0; y < in->height; y++)
            memcpy(buf + y * stride, in->last + (size_t)y * in->width, in->width);
        in->lost--;
        in->concealed++;
        in->last_pts = in->last_dur = -1;
        return 1;
    }
    in->pending = 0;
    const int64_t ts = in->frame->best_effort_timestamp;
    const int known = ts != AV_NOPTS_VALUE && in->first_ts != AV_NOPTS_VALUE && ts >= in->first_ts;
    in->last_pts = known ? ts - in->first_ts : -1;
    in->last_dur = known ? (in->frame->pkt_duration > 0 ? in->frame->pkt_duration : 0) : -1;
    if (in->warn && (!in->said_colour || !in->said_alpha))
        check_dropped(in, in->scratch, in->scratch + in->width, in->scratch + 2 * in->width);

    int ret = 0;
    if (in->frame->width != in->width || in->frame->height != in->height) {
        set_err(err, errlen, "frame %"PRId64" is %dx%d, the clip started at %dx%d", in->frames,
                in->frame->width, in->frame->height, in->width, in->height);
        ret = -1;
    } else {
        ret = convert(in, buf, stride, err, errlen);
    }
    av_frame_unref(in->frame);
    if (ret < 0) {
        in->failed = 1;
        return -1;
    }
    for (int y = 0; y < in->height; y++)
        memcpy(in->last + (size_t)y * in->width, buf + y * stride, in->width);
    in->have_last = 1;
    return 1;
}

void pnmf_input_last_time(const PnmfInput *in, int64_t *pts, int64_t *duration)
{
    *pts = in ? in->last_pts : -1;
    *duration = in ? in->last_dur : -1;
}

int64_t pnmf_input_concealed(const PnmfInput *in)
{
    return in ? in->concealed : 0;
}

void pnmf_input_close(PnmfInput **pin)
{
    if (!pin || !*pin)
        return;
    PnmfInput *in = *pin;
    sws_freeContext(in->sws);
    av_freep(&in->sws_buf);
    av_freep(&in->line);
    av_freep(&in->scratch);
    free(in->last);
    av_frame_free(&in->frame);
    av_packet_free(&in->pkt);
    avcodec_free_context(&in->dec);
    avformat_close_input(&in->fmt);
    free(in);
    *pin = NULL;
}

/* ---- seeking (pnmf_input_seek) ---- */

/* Decode and discard frames until frame (0-based) is the pending one:
 * 1 there, 0 at the end of the clip first, -1 on error. */
static int discard_until(PnmfInput *in, int64_t frame, char *err, size_t errlen)
{
    for (;;) {
        if (!in->pending) {
            const int ret = decode_next(in, err, errlen);
            if (ret <= 0) {
                if (ret == 0)
                    set_err(err, errlen, "the clip has only %"PRId64" frames", in->frames);
                in->failed = ret < 0;
                return ret;
            }
            in->pending = 1;
        }
        if (in->frames - 1 >= frame)
            return 1;
        av_frame_unref(in->frame);
        in->pending = 0;
    }
}

/* Reposition the demuxer at ts (BACKWARD: at or before it) and reset the
 * decoder, nothing pending. */
static int seek_to(PnmfInput *in, int64_t ts)
{
    if (av_seek_frame(in->fmt, in->stream, ts, AVSEEK_FLAG_BACKWARD) < 0)
        return -1;
    avcodec_flush_buffers(in->dec);
    av_frame_unref(in->frame);
    in->pending = 0;
    in->flushing = 0;
    return 0;
}

/* The frame number of the decoded frame from its timestamp, at a constant
 * rate from the first frame's; -1 when the frame has no usable timestamp
 * or holds decoding errors (a seek that landed where references are
 * missing). */
static int64_t frame_number(const PnmfInput *in, AVRational fps)
{
    const AVStream *st = in->fmt->streams[in->stream];
    const int64_t ts = in->frame->best_effort_timestamp;
    if (ts == AV_NOPTS_VALUE || ts < in->first_ts || in->frame->decode_error_flags ||
        (in->frame->flags & AV_FRAME_FLAG_CORRUPT))
        return -1;
    return av_rescale_q_rnd(ts - in->first_ts, st->time_base, av_inv_q(fps), AV_ROUND_NEAR_INF);
}

/* Seek by timestamp to the key frame at or before frame and decode forward
 * to it. 1 when there, with every frame on the way numbered one after the
 * other; 0 when the timestamps cannot be trusted to number the frames (the
 * caller starts again from the clip's start); -1 when the demuxer cannot
 * seek at all, nothing changed. */
static int seek_by_timestamp(PnmfInput *in, int64_t frame)
{
    const AVStream *st = in->fmt->streams[in->stream];
    AVRational fps = st->avg_frame_rate;
    if (fps.num <= 0 || fps.den <= 0 || av_cmp_q(fps, st->r_frame_rate) != 0)
        return -1; /* no constant rate claimed: frame numbers cannot come from timestamps */
    if (in->first_ts == AV_NOPTS_VALUE || (in->fmt->pb && !(in->fmt->pb->seekable & AVIO_SEEKABLE_NORMAL)))
        return -1;
    const int64_t target = in->first_ts + av_rescale_q(frame, av_inv_q(fps), st->time_base);
    if (seek_to(in, target) < 0)
        return 0;
    int64_t last = -1;
    for (;;) {
        char why[8];
        if (decode_next(in, why, sizeof(why)) <= 0)
            return 0;
        const int64_t n = frame_number(in, fps);
        if (n < 0 || (last < 0 && n > frame) || (last >= 0 && n != last + 1))
            return 0;
        if (n == frame) {
            in->pending = 1;
            in->frames = frame + 1;
            return 1;
        }
        last = n;
        av_frame_unref(in->frame);
    }
}

int pnmf_input_seek(PnmfInput *in, int64_t frame, char *err, size_t errlen)
{
    if (!in || frame < 0) {
        set_err(err, errlen, "invalid argument");
        return -1;
    }
    if (in->failed) {
        set_err(err, errlen, "the clip failed to read earlier");
        return -1;
    }
    const int64_t pos = in->pending ? in->frames - 1 : in->frames;
    if (frame == pos)
        return discard_until(in, frame, err, errlen);
    const int by_ts = frame > pos + 1 || frame < pos ? seek_by_timestamp(in, frame) : -1;
    if (by_ts == 1)
        return 1;
    if (by_ts == 0 || frame < pos) {
        /* from the clip's start, counting frames as a plain read does */
        if (in->first_ts == AV_NOPTS_VALUE || seek_to(in, in->first_ts) < 0) {
            in->failed = 1;
            set_err(err, errlen, "cannot seek back to the start of the clip");
            return -1;
        }
        in->frames = 0;
    }
    return discard_until(in, frame, err, errlen);
}
