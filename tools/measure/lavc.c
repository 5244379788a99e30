/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The standard codecs of pnmf-compare and pnmf-bench, through libavcodec's
 * own encoders and decoders, in-process.
 *
 * Gray input is coded as 4:0:0 (AV_PIX_FMT_GRAY8) when the encoder lists
 * that format at run time (libx264, libx265 and libaom do); otherwise as
 * 4:2:0 with the luma copied unchanged and both chroma planes flat 128.
 * Either way the frames are tagged full range (AVCOL_RANGE_JPEG): the luma
 * keeps its 0..255 values, nothing is squeezed to 16..235. The stream's size
 * is the sum of its packets (plus extradata, if an encoder puts headers
 * there): the elementary stream, no container. libx264 and libx265 put
 * their version and full settings as text in an SEI message of the first
 * packet (about 0.7 and 2.3 KB): metadata, not coded video, and on a small
 * clip a large share of the stream, so SEI NAL units are removed with
 * FFmpeg's filter_units bitstream filter before counting and decoding
 * (--keep-sei keeps them; CmpPoint.sei_bytes says how much went). The
 * packets are decoded with libavcodec and the decoded luma plane is scored
 * against the source.
 *
 * The lossless codecs (pnmf-compare --lossless) run the same way, one
 * point each. An encoder without gray input that keeps RGB exactly (libwebp
 * in lossless mode) is fed BGRA with red, green and blue all equal to the
 * luma, and a frame decoded as RGB must give back all three exactly.
 * Animated WebP is decoded with libwebpdemux (FFmpeg 5.1's own WebP decoder
 * reads no animation); the frames it merged (libwebp joins a frame equal
 * to the one before into that one's duration) are matched to the source's
 * by their timestamps.
 */
#include <limits.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavcodec/bsf.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>

#ifdef PNMF_HAVE_WEBPDEMUX
#include <webp/demux.h>
#endif

#include "cli_util.h"
#include "measure/measure.h"
#include "measure/metrics.h"

/* A decoder outside libavcodec for the whole stream (data, size): scores
 * (or, with count_only, counts) every frame into score, its calls timed
 * into *dt. 0, or a negative AVERROR with a reason in why. */
typedef int (*LavcDecodeFn)(const uint8_t *data, size_t size, const CmpClip *clip, CmpScore *score,
                            int count_only, CmpClock *dt, char *why, size_t len);

typedef struct LavcConf {
    const char *encoder;        /* libavcodec encoder name */
    const char *decoders[4];    /* decoder names to try in order, NULL-terminated */
    enum AVCodecID id;          /* else the first decoder for this id */
    const char *sei_types;      /* NAL unit types of SEI, for filter_units; NULL: none */
    /* the encoder's private options for one point */
    void (*options)(AVDictionary **d, int crf, int gray, const CmpOptions *o);
    int rgb;                    /* no gray input: feed BGRA (R = G = B = luma), not 4:2:0 */
    LavcDecodeFn decode;        /* decode with this instead of libavcodec; NULL: libavcodec */
    const char *missing;        /* why this build cannot run it; NULL: it can */
} LavcConf;

static void set_int(AVDictionary **d, const char *key, int v)
{
    char s[32];
    snprintf(s, sizeof(s), "%d", v);
    av_dict_set(d, key, s, 0);
}

static void x264_options(AVDictionary **d, int crf, int gray, const CmpOptions *o)
{
    (void)gray;
    (void)o;
    av_dict_set(d, "preset", "medium", 0);
    set_int(d, "crf", crf);
}

static void x264_anim_options(AVDictionary **d, int crf, int gray, const CmpOptions *o)
{
    x264_options(d, crf, gray, o);
    av_dict_set(d, "tune", "animation", 0);
}

static void x265_options(AVDictionary **d, int crf, int gray, const CmpOptions *o)
{
    (void)gray;
    av_dict_set(d, "preset", "medium", 0);
    set_int(d, "crf", crf);
    /* libx265 ignores thread_count: its pool of N worker threads (and one
     * frame thread when N = 1) is set here; its log goes straight to stderr */
    char p[96];
    snprintf(p, sizeof(p), "log-level=%s:pools=%d%s", o->verbose ? "warning" : "error", o->threads,
             o->threads == 1 ? ":frame-threads=1" : "");
    av_dict_set(d, "x265-params", p, 0);
}

static void aom_options(AVDictionary **d, int crf, int gray, const CmpOptions *o)
{
    (void)o;
    set_int(d, "cpu-used", 6);
    set_int(d, "crf", crf);
    /* libaom 3.6 with monochrome input and row-mt on can write streams
     * that decode wrongly: keep it off for gray */
    if (gray) av_dict_set(d, "row-mt", "0", 0);
}

/* libaom's screen-content tools (palette, intra block copy, the screen
 * rate decisions) at a slower speed, the strongest AV1 anchor for
 * captured screens and sprite animation */
static void aom_screen_options(AVDictionary **d, int crf, int gray, const CmpOptions *o)
{
    (void)o;
    set_int(d, "cpu-used", 3);
    set_int(d, "crf", crf);
    av_dict_set(d, "aom-params", "tune-content=screen", 0);
    if (gray) av_dict_set(d, "row-mt", "0", 0);
}

static void svtav1_options(AVDictionary **d, int crf, int gray, const CmpOptions *o)
{
    (void)gray;
    set_int(d, "preset", 8);
    set_int(d, "crf", crf);
    /* SVT-AV1 sizes its thread pools from "lp", not from thread_count */
    char p[32];
    snprintf(p, sizeof(p), "lp=%d", o->threads);
    av_dict_set(d, "svtav1-params", p, 0);
}

static void vp9_options(AVDictionary **d, int crf, int gray, const CmpOptions *o)
{
    (void)gray;
    (void)o;
    /* constant quality: crf with a zero bit rate (set on the context) */
    set_int(d, "crf", crf);
    av_dict_set(d, "deadline", "good", 0);
    set_int(d, "cpu-used", 2);
}

/* ---- the lossless settings (param ignored) ---- */

static void ffv1_options(AVDictionary **d, int param, int gray, const CmpOptions *o)
{
    (void)param;
    (void)gray;
    (void)o;
    av_dict_set(d, "level", "3", 0);
    av_dict_set(d, "coder", "range_tab", 0); /* the range coder, its state table sent */
}

static void x264_lossless_options(AVDictionary **d, int param, int gray, const CmpOptions *o)
{
    (void)param;
    (void)gray;
    (void)o;
    av_dict_set(d, "preset", "veryslow", 0);
    av_dict_set(d, "qp", "0", 0);
}

static void x265_lossless_options(AVDictionary **d, int param, int gray, const CmpOptions *o)
{
    (void)param;
    (void)gray;
    av_dict_set(d, "preset", "medium", 0);
    char p[112];
    snprintf(p, sizeof(p), "lossless=1:log-level=%s:pools=%d%s", o->verbose ? "warning" : "error", o->threads,
             o->threads == 1 ? ":frame-threads=1" : "");
    av_dict_set(d, "x265-params", p, 0);
}

static void aom_lossless_options(AVDictionary **d, int param, int gray, const CmpOptions *o)
{
    (void)param;
    (void)o;
    set_int(d, "cpu-used", 6);
    set_int(d, "crf", 0);
    av_dict_set(d, "aom-params", "lossless=1", 0);
    if (gray) av_dict_set(d, "row-mt", "0", 0);
}

static void aom_screen_lossless_options(AVDictionary **d, int param, int gray, const CmpOptions *o)
{
    (void)param;
    (void)o;
    set_int(d, "cpu-used", 3);
    set_int(d, "crf", 0);
    av_dict_set(d, "aom-params", "tune-content=screen:lossless=1", 0);
    if (gray) av_dict_set(d, "row-mt", "0", 0);
}

static void apng_options(AVDictionary **d, int param, int gray, const CmpOptions *o)
{
    (void)param;
    (void)gray;
    (void)o;
    av_dict_set(d, "pred", "mixed", 0); /* each row's best PNG filter */
    set_int(d, "compression_level", 9); /* zlib's strongest */
}

static void gif_options(AVDictionary **d, int param, int gray, const CmpOptions *o)
{
    (void)d;
    (void)param;
    (void)gray;
    (void)o;
}

static void webp_options(AVDictionary **d, int param, int gray, const CmpOptions *o)
{
    (void)param;
    (void)gray;
    (void)o;
    /* libwebp's lossless defaults (cwebp -lossless): quality 75, method 4;
     * quality 100, method 6 is some 60 times slower and no smaller here */
    set_int(d, "lossless", 1);
}

/* ---- encode, decode, score ---- */

typedef struct Packets {
    AVPacket **p;
    int n, cap;
} Packets;

static void packets_free(Packets *pk)
{
    for (int i = 0; i < pk->n; i++) av_packet_free(&pk->p[i]);
    av_freep(&pk->p);
    pk->n = pk->cap = 0;
}

static int packets_take(Packets *pk, AVPacket *pkt)
{
    if (pk->n == pk->cap) {
        const int cap = pk->cap ? 2 * pk->cap : 64;
        AVPacket **p = av_realloc_array(pk->p, cap, sizeof(*p));
        if (!p) return AVERROR(ENOMEM);
        pk->p = p;
        pk->cap = cap;
    }
    AVPacket *q = av_packet_alloc();
    if (!q) return AVERROR(ENOMEM);
    av_packet_move_ref(q, pkt);
    pk->p[pk->n++] = q;
    return 0;
}

static void fail(CmpPoint *pt, const char *what, int averr)
{
    char e[AV_ERROR_MAX_STRING_SIZE];
    av_strerror(averr, e, sizeof(e));
    pt->ok = 0;
    snprintf(pt->err, sizeof(pt->err), "%.130s: %.60s", what, e);
}

static int has_gray(const AVCodec *codec)
{
    for (const enum AVPixelFormat *f = codec->pix_fmts; f && *f != AV_PIX_FMT_NONE; f++)
        if (*f == AV_PIX_FMT_GRAY8) return 1;
    return 0;
}

static const AVCodec *find_decoder(const LavcConf *lc)
{
    for (int i = 0; lc->decoders[i]; i++) {
        const AVCodec *c = avcodec_find_decoder_by_name(lc->decoders[i]);
        if (c) return c;
    }
    return avcodec_find_decoder(lc->id);
}

static int lavc_available(const CmpCodec *c, char *why, size_t len)
{
    const LavcConf *lc = c->priv;
    if (lc->missing) {
        snprintf(why, len, "%s", lc->missing);
        return -1;
    }
    if (!avcodec_find_encoder_by_name(lc->encoder)) {
        snprintf(why, len, "this FFmpeg has no %s encoder", lc->encoder);
        return -1;
    }
    if (!lc->decode && !find_decoder(lc)) {
        snprintf(why, len, "this FFmpeg has no %s decoder", avcodec_get_name(lc->id));
        return -1;
    }
    return 0;
}

/* Copy source frame i into a new frame the encoder may keep. */
static int make_frame(const CmpClip *clip, int i, enum AVPixelFormat fmt, AVFrame **out)
{
    AVFrame *f = av_frame_alloc();
    if (!f) return AVERROR(ENOMEM);
    f->format = fmt;
    f->width = clip->width;
    f->height = clip->height;
    f->color_range = AVCOL_RANGE_JPEG;
    f->pts = i;
    int ret = av_frame_get_buffer(f, 0);
    if (ret < 0) {
        av_frame_free(&f);
        return ret;
    }
    const uint8_t *src = cmp_clip_frame(clip, i);
    if (fmt == AV_PIX_FMT_BGRA) {
        for (int y = 0; y < clip->height; y++) {
            uint8_t *d = f->data[0] + y * f->linesize[0];
            const uint8_t *s = src + (size_t)y * clip->width;
            for (int x = 0; x < clip->width; x++, d += 4) d[0] = d[1] = d[2] = s[x], d[3] = 255;
        }
        *out = f;
        return 0;
    }
    for (int y = 0; y < clip->height; y++)
        memcpy(f->data[0] + y * f->linesize[0], src + (size_t)y * clip->width, clip->width);
    if (fmt != AV_PIX_FMT_GRAY8) {
        const int cw = (clip->width + 1) / 2, ch = (clip->height + 1) / 2;
        for (int p = 1; p <= 2; p++)
            for (int y = 0; y < ch; y++) memset(f->data[p] + y * f->linesize[p], 128, cw);
    }
    *out = f;
    return 0;
}

/* Send one frame (NULL flushes) and keep every packet that comes out. */
static int encode_step(AVCodecContext *enc, AVFrame *frame, AVPacket *pkt, Packets *pk)
{
    int ret = avcodec_send_frame(enc, frame);
    if (ret < 0) return ret;
    for (;;) {
        ret = avcodec_receive_packet(enc, pkt);
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF) return 0;
        if (ret < 0) return ret;
        if ((ret = packets_take(pk, pkt)) < 0) return ret;
    }
}

/* Remove the SEI NAL units (types lc->sei_types) from every packet with
 * filter_units; the bytes removed are added to *removed. */
static int strip_sei(const LavcConf *lc, const AVCodecContext *enc, Packets *pk, uint64_t *removed,
                     char *why, size_t len)
{
    const AVBitStreamFilter *f = av_bsf_get_by_name("filter_units");
    if (!f) {
        snprintf(why, len, "this FFmpeg has no filter_units bitstream filter (try --keep-sei)");
        return AVERROR_FILTER_NOT_FOUND;
    }
    AVBSFContext *bsf = NULL;
    Packets out = { 0 };
    AVPacket *pkt = av_packet_alloc();
    int ret = pkt ? av_bsf_alloc(f, &bsf) : AVERROR(ENOMEM);
    if (ret >= 0) ret = avcodec_parameters_from_context(bsf->par_in, enc);
    if (ret >= 0) {
        bsf->time_base_in = enc->time_base;
        ret = av_opt_set(bsf->priv_data, "remove_types", lc->sei_types, 0);
    }
    if (ret >= 0) ret = av_bsf_init(bsf);
    uint64_t before = 0, after = 0;
    for (int i = 0; ret >= 0 && i <= pk->n; i++) {
        if (i < pk->n) before += (uint64_t)pk->p[i]->size;
        ret = av_bsf_send_packet(bsf, i < pk->n ? pk->p[i] : NULL);
        while (ret >= 0) {
            ret = av_bsf_receive_packet(bsf, pkt);
            if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF) {
                ret = 0;
                break;
            }
            if (ret >= 0) {
                after += (uint64_t)pkt->size;
                ret = packets_take(&out, pkt);
            }
        }
    }
    if (ret >= 0) {
        packets_free(pk);
        *pk = out;
        *removed += before - after;
    } else {
        packets_free(&out);
        snprintf(why, len, "filter_units (removing SEI)");
    }
    av_packet_free(&pkt);
    av_bsf_free(&bsf);
    return ret;
}

/* Is the decoded frame's plane 0 an 8-bit luma plane we can score? */
static int luma8(enum AVPixelFormat fmt)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmt);
    return d && !(d->flags & (AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_HWACCEL |
                              AV_PIX_FMT_FLAG_BITSTREAM)) &&
           d->comp[0].plane == 0 && d->comp[0].depth == 8 && d->comp[0].step == 1 &&
           d->comp[0].offset == 0;
}

/* Is the decoded frame packed 8-bit RGB? Then *step and the offsets of
 * red, green and blue in a pixel. */
static int rgb8(enum AVPixelFormat fmt, int *step, int *ro, int *go, int *bo)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmt);
    if (!d || !(d->flags & AV_PIX_FMT_FLAG_RGB) ||
        (d->flags & (AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_BITSTREAM | AV_PIX_FMT_FLAG_PLANAR)) ||
        d->nb_components < 3)
        return 0;
    for (int c = 0; c < 3; c++)
        if (d->comp[c].plane != 0 || d->comp[c].depth != 8 || d->comp[c].shift != 0 ||
            d->comp[c].step != d->comp[0].step)
            return 0;
    *step = d->comp[0].step;
    *ro = d->comp[0].offset;
    *go = d->comp[1].offset;
    *bo = d->comp[2].offset;
    return 1;
}

/* The least of each clock over a codec's decodes (run 0 the first). */
static void keep_fastest(CmpClock *best, CmpClock t, int run)
{
    if (run == 0 || t.wall < best->wall) best->wall = t.wall;
    if (run == 0 || t.cpu < best->cpu) best->cpu = t.cpu;
}

/* Send one packet (NULL flushes); score every frame that comes out (with
 * count_only, just count it in score->frames). The decoder's calls are
 * timed into *dt, the scoring is not. */
static int decode_step(AVCodecContext *dec, const AVPacket *pkt, AVFrame *frame, const CmpClip *clip,
                       CmpScore *score, int count_only, CmpClock *dt, char *why, size_t len)
{
    CmpClock t0 = cmp_clock_now();
    int ret = avcodec_send_packet(dec, pkt);
    cmp_clock_add(dt, t0);
    if (ret < 0) return ret;
    for (;;) {
        t0 = cmp_clock_now();
        ret = avcodec_receive_frame(dec, frame);
        cmp_clock_add(dt, t0);
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF) return 0;
        if (ret < 0) return ret;
        int step = 0, ro = 0, go = 0, bo = 0;
        const int rgb = !luma8(frame->format) && rgb8(frame->format, &step, &ro, &go, &bo);
        if (frame->width != clip->width || frame->height != clip->height || (!rgb && !luma8(frame->format))) {
            snprintf(why, len, "decoded a %dx%d %s frame, expected %dx%d 8-bit", frame->width,
                     frame->height, av_get_pix_fmt_name(frame->format), clip->width, clip->height);
            return AVERROR_INVALIDDATA;
        }
        if (score->frames >= clip->frames) {
            snprintf(why, len, "decoded more frames than the %d encoded", clip->frames);
            return AVERROR_INVALIDDATA;
        }
        if (count_only)
            score->frames++;
        else if (rgb ? cmp_score_rgb_frame(score, cmp_clip_frame(clip, score->frames), clip->width, frame->data[0],
                                           frame->linesize[0], step, ro, go, bo, clip->width, clip->height)
                     : cmp_score_frame(score, cmp_clip_frame(clip, score->frames), clip->width, frame->data[0],
                                       frame->linesize[0], clip->width, clip->height))
            return AVERROR(ENOMEM);
        av_frame_unref(frame);
    }
}

#ifdef PNMF_HAVE_WEBPDEMUX
/* An animated WebP (one file) through libwebpdemux. A decoded frame lasts
 * until its timestamp and stands for every source frame that starts before
 * then, as the encoder computed them (pts * 1000 / fps in whole ms); the
 * last stands for all the rest. */
static int webp_anim_decode(const uint8_t *data, size_t size, const CmpClip *clip, CmpScore *score,
                            int count_only, CmpClock *dt, char *why, size_t len)
{
    WebPAnimDecoderOptions opt;
    if (!WebPAnimDecoderOptionsInit(&opt)) {
        snprintf(why, len, "libwebpdemux: version mismatch");
        return AVERROR_EXTERNAL;
    }
    opt.color_mode = MODE_RGBA;
    opt.use_threads = 0;
    const WebPData wd = { data, size };
    CmpClock t0 = cmp_clock_now();
    WebPAnimDecoder *dec = WebPAnimDecoderNew(&wd, &opt);
    cmp_clock_add(dt, t0);
    WebPAnimInfo info;
    if (!dec || !WebPAnimDecoderGetInfo(dec, &info)) {
        WebPAnimDecoderDelete(dec);
        snprintf(why, len, "libwebpdemux cannot read the animation");
        return AVERROR_INVALIDDATA;
    }
    int ret = 0;
    if ((int)info.canvas_width != clip->width || (int)info.canvas_height != clip->height) {
        snprintf(why, len, "decoded a %ux%u canvas, expected %dx%d", info.canvas_width, info.canvas_height,
                 clip->width, clip->height);
        ret = AVERROR_INVALIDDATA;
    }
    while (ret == 0) {
        uint8_t *rgba;
        int ts;
        t0 = cmp_clock_now();
        const int more = WebPAnimDecoderHasMoreFrames(dec);
        const int got = more && WebPAnimDecoderGetNext(dec, &rgba, &ts);
        cmp_clock_add(dt, t0);
        if (!more) break;
        if (!got) {
            snprintf(why, len, "libwebpdemux: frame after source frame %d is corrupt", score->frames);
            ret = AVERROR_INVALIDDATA;
            break;
        }
        if (score->frames >= clip->frames) {
            snprintf(why, len, "decoded more frames than the %d encoded", clip->frames);
            ret = AVERROR_INVALIDDATA;
            break;
        }
        const int last = !WebPAnimDecoderHasMoreFrames(dec);
        int n = 0;
        while (score->frames < clip->frames &&
               (n == 0 || last ||
                (int64_t)score->frames * clip->fps_den * 1000 / clip->fps_num < (int64_t)ts)) {
            if (count_only) score->frames++;
            else if (cmp_score_rgb_frame(score, cmp_clip_frame(clip, score->frames), clip->width, rgba,
                                         4 * (ptrdiff_t)clip->width, 4, 0, 1, 2, clip->width, clip->height) < 0) {
                ret = AVERROR(ENOMEM);
                break;
            }
            n++;
        }
    }
    WebPAnimDecoderDelete(dec);
    return ret;
}
#endif

static void lavc_run(const CmpCodec *c, const CmpClip *clip, const CmpOptions *o, int crf, CmpPoint *pt)
{
    const LavcConf *lc = c->priv;
    const AVCodec *codec = avcodec_find_encoder_by_name(lc->encoder);
    const AVCodec *dcodec = find_decoder(lc);
    AVCodecContext *enc = NULL, *dec = NULL;
    AVDictionary *opts = NULL;
    AVFrame *frame = NULL;
    AVPacket *pkt = av_packet_alloc();
    Packets pk = { 0 };
    uint8_t *whole = NULL; /* the stream in one piece, for lc->decode */
    char what[160], why[160] = "";
    int ret;

    pt->param = crf;
    if (!codec || (!dcodec && !lc->decode)) {
        snprintf(pt->err, sizeof(pt->err), "%s: encoder or decoder not found", lc->encoder);
        goto end;
    }
    if (!pkt || !(enc = avcodec_alloc_context3(codec))) {
        fail(pt, lc->encoder, AVERROR(ENOMEM));
        goto end;
    }
    const int gray = has_gray(codec);
    const enum AVPixelFormat fmt = gray ? AV_PIX_FMT_GRAY8 : lc->rgb ? AV_PIX_FMT_BGRA : AV_PIX_FMT_YUV420P;
    enc->width = clip->width;
    enc->height = clip->height;
    enc->pix_fmt = fmt;
    enc->time_base = (AVRational){ clip->fps_den, clip->fps_num };
    enc->framerate = (AVRational){ clip->fps_num, clip->fps_den };
    enc->color_range = AVCOL_RANGE_JPEG;
    enc->thread_count = o->threads;
    enc->bit_rate = 0; /* constant quality (crf), no rate target */
    lc->options(&opts, crf, gray, o);
    /* encode: the encoder's open and its calls are timed, not our copies */
    double enc_t = cli_now();
    ret = avcodec_open2(enc, codec, &opts);
    enc_t = cli_now() - enc_t;
    if (ret < 0) {
        snprintf(what, sizeof(what), "%s: cannot open the encoder", lc->encoder);
        fail(pt, what, ret);
        goto end;
    }
    const AVDictionaryEntry *left = av_dict_get(opts, "", NULL, AV_DICT_IGNORE_SUFFIX);
    if (left) {
        snprintf(pt->err, sizeof(pt->err), "%s: does not take option %s", lc->encoder, left->key);
        goto end;
    }

    for (int i = 0; i <= clip->frames; i++) {
        if (i < clip->frames && (ret = make_frame(clip, i, fmt, &frame)) < 0) {
            fail(pt, lc->encoder, ret);
            goto end;
        }
        const double t0 = cli_now();
        ret = encode_step(enc, i < clip->frames ? frame : NULL, pkt, &pk);
        enc_t += cli_now() - t0;
        av_frame_free(&frame);
        if (ret < 0) {
            snprintf(what, sizeof(what), "%s: encoding frame %d", lc->encoder, i);
            fail(pt, what, ret);
            goto end;
        }
    }
    cmp_mark_encoded(pt);
    pt->enc_seconds = enc_t;
    if (lc->sei_types && !o->keep_sei &&
        (ret = strip_sei(lc, enc, &pk, &pt->sei_bytes, why, sizeof(why))) < 0) {
        snprintf(what, sizeof(what), "%.40s: %.110s", lc->encoder, why);
        fail(pt, what, ret);
        goto end;
    }
    *why = 0;
    pt->bytes = (uint64_t)(enc->extradata ? enc->extradata_size : 0);
    for (int i = 0; i < pk.n; i++) {
        size_t extra = 0; /* headers an encoder sends with a packet (APNG) */
        av_packet_get_side_data(pk.p[i], AV_PKT_DATA_NEW_EXTRADATA, &extra);
        pt->bytes += (uint64_t)pk.p[i]->size + extra;
    }

    /* decode and score; decoded again dec_runs - 1 times (counted, not
     * scored), the fastest decode kept */
    const int runs = o->dec_runs > 1 ? o->dec_runs : 1;
    CmpClock dec_best = { 0, 0 };
    CmpScore score;
    cmp_score_init(&score);
    if (lc->decode) { /* the whole stream, one buffer */
        size_t size = 0;
        for (int i = 0; i < pk.n; i++) size += (size_t)pk.p[i]->size;
        if (!(whole = av_malloc(size ? size : 1))) {
            fail(pt, lc->encoder, AVERROR(ENOMEM));
            goto end;
        }
        size = 0;
        for (int i = 0; i < pk.n; i++) {
            memcpy(whole + size, pk.p[i]->data, (size_t)pk.p[i]->size);
            size += (size_t)pk.p[i]->size;
        }
        for (int run = 0; run < runs; run++) {
            CmpClock dec_t = { 0, 0 };
            CmpScore count, *sc = run == 0 ? &score : &count;
            cmp_score_init(sc);
            if ((ret = lc->decode(whole, size, clip, sc, run > 0, &dec_t, why, sizeof(why))) < 0) {
                snprintf(what, sizeof(what), "%.40s: decoding: %.100s", lc->encoder, why);
                fail(pt, what, ret);
                goto end;
            }
            if (sc->frames != clip->frames) {
                snprintf(pt->err, sizeof(pt->err), "%s: decoded %d frames of %d", lc->encoder, sc->frames,
                         clip->frames);
                goto end;
            }
            keep_fastest(&dec_best, dec_t, run);
        }
    }
    if (!lc->decode && !(frame = av_frame_alloc())) {
        fail(pt, dcodec->name, AVERROR(ENOMEM));
        goto end;
    }
    for (int run = 0; !lc->decode && run < runs; run++) {
        avcodec_free_context(&dec);
        if (!(dec = avcodec_alloc_context3(dcodec))) {
            fail(pt, dcodec->name, AVERROR(ENOMEM));
            goto end;
        }
        dec->thread_count = o->dec_threads > 0 ? o->dec_threads : o->threads;
        /* FFV1 needs the size before its first packet */
        dec->width = enc->width;
        dec->height = enc->height;
        /* the headers: the encoder's extradata, else those it sent with a
         * packet (APNG), which the decoder reads only as extradata */
        const uint8_t *xd = enc->extradata;
        size_t xn = enc->extradata_size > 0 ? (size_t)enc->extradata_size : 0;
        for (int i = 0; !xn && i < pk.n; i++) xd = av_packet_get_side_data(pk.p[i], AV_PKT_DATA_NEW_EXTRADATA, &xn);
        if (xd && xn > 0 && xn < INT_MAX - AV_INPUT_BUFFER_PADDING_SIZE) {
            dec->extradata = av_mallocz(xn + AV_INPUT_BUFFER_PADDING_SIZE);
            if (!dec->extradata) {
                fail(pt, dcodec->name, AVERROR(ENOMEM));
                goto end;
            }
            memcpy(dec->extradata, xd, xn);
            dec->extradata_size = (int)xn;
        }
        CmpClock dec_t = { 0, 0 };
        const CmpClock t0 = cmp_clock_now();
        ret = avcodec_open2(dec, dcodec, NULL);
        cmp_clock_add(&dec_t, t0);
        if (ret < 0) {
            snprintf(what, sizeof(what), "%s: cannot open the decoder", dcodec->name);
            fail(pt, what, ret);
            goto end;
        }
        CmpScore count, *sc = run == 0 ? &score : &count;
        cmp_score_init(sc);
        for (int i = 0; i <= pk.n; i++) {
            ret = decode_step(dec, i < pk.n ? pk.p[i] : NULL, frame, clip, sc, run > 0, &dec_t, why,
                              sizeof(why));
            if (ret < 0) {
                if (*why) {
                    snprintf(pt->err, sizeof(pt->err), "%.40s: decoding packet %d: %.120s", dcodec->name, i, why);
                } else {
                    snprintf(what, sizeof(what), "%.40s: decoding packet %d", dcodec->name, i);
                    fail(pt, what, ret);
                }
                goto end;
            }
        }
        if (sc->frames != clip->frames) {
            snprintf(pt->err, sizeof(pt->err), "%s: decoded %d frames of %d", dcodec->name, sc->frames,
                     clip->frames);
            goto end;
        }
        keep_fastest(&dec_best, dec_t, run);
    }
    pt->dec_seconds = dec_best.wall;
    pt->dec_cpu_seconds = dec_best.cpu;
    cmp_point_scored(pt, &score);
end:
    av_free(whole);
    av_dict_free(&opts);
    packets_free(&pk);
    av_frame_free(&frame);
    av_packet_free(&pkt);
    avcodec_free_context(&enc);
    avcodec_free_context(&dec);
}

/* ---- the table ---- */

#define LAVC_CODEC(var, nm, desc, lo, hi, llo, lhi, conf) \
    static const CmpCodec var = { nm, desc, "crf", lo, hi, llo, lhi, lavc_available, lavc_run, &conf }

/* SEI is NAL unit type 6 in H.264, 39 (prefix) and 40 (suffix) in HEVC */
static const LavcConf x264_conf = { "libx264", { "h264", NULL }, AV_CODEC_ID_H264, "6", x264_options, 0, NULL, NULL };
static const LavcConf x264_anim_conf = { "libx264", { "h264", NULL }, AV_CODEC_ID_H264, "6",
                                         x264_anim_options, 0, NULL, NULL };
static const LavcConf x265_conf = { "libx265", { "hevc", NULL }, AV_CODEC_ID_HEVC, "39-40", x265_options, 0, NULL, NULL };
static const LavcConf aom_conf = { "libaom-av1", { "libdav1d", "libaom-av1", "av1", NULL }, AV_CODEC_ID_AV1,
                                   NULL, aom_options, 0, NULL, NULL };
static const LavcConf aom_screen_conf = { "libaom-av1", { "libdav1d", "libaom-av1", "av1", NULL },
                                          AV_CODEC_ID_AV1, NULL, aom_screen_options, 0, NULL, NULL };
static const LavcConf svtav1_conf = { "libsvtav1", { "libdav1d", "libaom-av1", "av1", NULL },
                                      AV_CODEC_ID_AV1, NULL, svtav1_options, 0, NULL, NULL };
static const LavcConf vp9_conf = { "libvpx-vp9", { "vp9", NULL }, AV_CODEC_ID_VP9, NULL, vp9_options, 0, NULL, NULL };

/* Default ladders, best quality first: on the bundled samples/sprites.mkv
 * they run from about 50 dB PSNR-Y down to 30 dB, or to the codec's
 * largest CRF where it stays above 30 dB (the AV1 encoders and VP9). */
LAVC_CODEC(x264_codec, "x264", "libx264 preset medium", 0, 51, 16, 44, x264_conf);
LAVC_CODEC(x264_anim_codec, "x264-anim", "libx264 preset medium, tune animation", 0, 51, 16, 44,
           x264_anim_conf);
LAVC_CODEC(x265_codec, "x265", "libx265 preset medium", 0, 51, 20, 44, x265_conf);
LAVC_CODEC(aom_codec, "aom", "libaom-av1 cpu-used 6 (row-mt 0 for gray)", 0, 63, 30, 63, aom_conf);
LAVC_CODEC(aom_screen_codec, "aom-screen", "libaom-av1 cpu-used 3, tune-content screen (row-mt 0 for gray)", 0,
           63, 30, 63, aom_screen_conf);
LAVC_CODEC(svtav1_codec, "svtav1", "libsvtav1 preset 8", 1, 63, 34, 63, svtav1_conf);
LAVC_CODEC(vp9_codec, "vp9", "libvpx-vp9 crf, deadline good, cpu-used 2", 0, 63, 28, 63, vp9_conf);

/* The lossless codecs: one point each (the knob and its value are unused) */
#define LAVC_LOSSLESS(var, nm, desc, conf) \
    static const CmpCodec var = { nm, desc, "-", 0, 0, 0, 0, lavc_available, lavc_run, &conf }

#ifdef PNMF_HAVE_WEBPDEMUX
#define WEBP_DECODE webp_anim_decode
#define WEBP_MISSING NULL
#else
#define WEBP_DECODE NULL
#define WEBP_MISSING "pnmf-compare was built without libwebpdemux (Debian: libwebp-dev), which decodes animated WebP"
#endif

static const LavcConf ffv1_conf = { "ffv1", { "ffv1", NULL }, AV_CODEC_ID_FFV1, NULL, ffv1_options, 0, NULL, NULL };
static const LavcConf x264_lossless_conf = { "libx264", { "h264", NULL }, AV_CODEC_ID_H264, "6",
                                             x264_lossless_options, 0, NULL, NULL };
static const LavcConf x265_lossless_conf = { "libx265", { "hevc", NULL }, AV_CODEC_ID_HEVC, "39-40",
                                             x265_lossless_options, 0, NULL, NULL };
static const LavcConf aom_lossless_conf = { "libaom-av1", { "libdav1d", "libaom-av1", "av1", NULL },
                                            AV_CODEC_ID_AV1, NULL, aom_lossless_options, 0, NULL, NULL };
static const LavcConf aom_screen_lossless_conf = { "libaom-av1", { "libdav1d", "libaom-av1", "av1", NULL },
                                                   AV_CODEC_ID_AV1, NULL, aom_screen_lossless_options, 0, NULL,
                                                   NULL };
static const LavcConf apng_conf = { "apng", { "apng", NULL }, AV_CODEC_ID_APNG, NULL, apng_options, 0, NULL, NULL };
static const LavcConf gif_conf = { "gif", { "gif", NULL }, AV_CODEC_ID_GIF, NULL, gif_options, 0, NULL, NULL };
static const LavcConf webp_conf = { "libwebp_anim", { NULL }, AV_CODEC_ID_WEBP, NULL, webp_options, 1,
                                    WEBP_DECODE, WEBP_MISSING };

LAVC_LOSSLESS(ffv1_codec, "ffv1", "FFV1 level 3, range coder (coder range_tab)", ffv1_conf);
LAVC_LOSSLESS(x264_lossless_codec, "x264", "libx264 preset veryslow, qp 0", x264_lossless_conf);
LAVC_LOSSLESS(x265_lossless_codec, "x265", "libx265 preset medium, lossless=1", x265_lossless_conf);
LAVC_LOSSLESS(aom_lossless_codec, "aom", "libaom-av1 cpu-used 6, lossless=1 (row-mt 0 for gray)",
              aom_lossless_conf);
LAVC_LOSSLESS(aom_screen_lossless_codec, "aom-screen",
              "libaom-av1 cpu-used 3, tune-content screen, lossless=1 (row-mt 0 for gray)", aom_screen_lossless_conf);
LAVC_LOSSLESS(apng_codec, "apng", "APNG, gray, pred mixed, zlib level 9", apng_conf);
LAVC_LOSSLESS(gif_codec, "gif", "GIF, a gray palette of 256 levels", gif_conf);
LAVC_LOSSLESS(webp_codec, "webp", "libwebp_anim lossless (quality 75, method 4), BGRA input; libwebpdemux decodes",
              webp_conf);

const CmpCodec *const cmp_lavc_lossless_codecs[] = {
    &ffv1_codec, &x264_lossless_codec, &x265_lossless_codec, &aom_lossless_codec, &aom_screen_lossless_codec,
    &apng_codec, &gif_codec, &webp_codec, NULL,
};

const CmpCodec *const cmp_lavc_codecs[] = {
    &x264_codec, &x264_anim_codec, &x265_codec, &aom_codec, &aom_screen_codec, &svtav1_codec, &vp9_codec, NULL,
};

void cmp_point_scored(CmpPoint *pt, const CmpScore *s)
{
    pt->frames = s->frames;
    pt->sse = s->sse;
    pt->diff_pixels = s->diff_pixels;
    pt->max_diff = s->max_diff;
    pt->psnr = cmp_score_psnr(s);
    pt->ssim = cmp_score_ssim(s);
    pt->ok = 1;
}
