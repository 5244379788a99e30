/* SPDX-License-Identifier: GPL-2.0-or-later */
/* FFmpeg for the output formats that encode (PNG, the videos) and for
 * avlog.c. Built with PNMF_AV_DLOPEN (pnmf-dec), the libraries are opened
 * at run time by pnmf_av_load(), the first time such a format is opened,
 * and the FFmpeg functions named below are calls through pointers it
 * fills: a program that writes y4m, PGM or an MD5 never maps them, which
 * saves it the dynamic linker's work on FFmpeg and the libraries it pulls
 * in, many times the decode of a small clip. Without PNMF_AV_DLOPEN the
 * program links FFmpeg and pnmf_av_load() has nothing to do. Include this
 * header after every FFmpeg header. */
#ifndef PNMF_TOOLS_AV_DYN_H
#define PNMF_TOOLS_AV_DYN_H

#include <stddef.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/log.h>
#include <libavutil/mem.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

/* Load FFmpeg if it is not: 0, or -1 with the reason in err. */
int pnmf_av_load(char *err, size_t errlen);
/* 1 once FFmpeg's functions can be called (always without PNMF_AV_DLOPEN). */
int pnmf_av_loaded(void);

#ifdef PNMF_AV_DLOPEN
/* the functions, each with the library it comes from */
#define PNMF_AV_FUNCS(X) \
    X(avutil, av_frame_alloc) \
    X(avutil, av_frame_free) \
    X(avutil, av_frame_get_buffer) \
    X(avutil, av_frame_make_writable) \
    X(avutil, av_freep) \
    X(avutil, av_malloc) \
    X(avutil, av_get_pix_fmt_name) \
    X(avutil, av_pix_fmt_desc_get) \
    X(avutil, av_opt_set) \
    X(avutil, av_log_get_level) \
    X(avutil, av_log_set_level) \
    X(avutil, av_strerror) \
    X(avcodec, av_packet_alloc) \
    X(avcodec, av_packet_free) \
    X(avcodec, av_packet_unref) \
    X(avcodec, av_packet_rescale_ts) \
    X(avcodec, avcodec_alloc_context3) \
    X(avcodec, avcodec_find_encoder) \
    X(avcodec, avcodec_find_encoder_by_name) \
    X(avcodec, avcodec_free_context) \
    X(avcodec, avcodec_open2) \
    X(avcodec, avcodec_parameters_from_context) \
    X(avcodec, avcodec_receive_packet) \
    X(avcodec, avcodec_send_frame) \
    X(avformat, av_interleaved_write_frame) \
    X(avformat, av_write_trailer) \
    X(avformat, avformat_alloc_output_context2) \
    X(avformat, avformat_free_context) \
    X(avformat, avformat_new_stream) \
    X(avformat, avformat_write_header) \
    X(avformat, avio_closep) \
    X(avformat, avio_open) \
    X(swscale, sws_getContext) \
    X(swscale, sws_freeContext) \
    X(swscale, sws_scale)

#define PNMF_AV_DECLARE(lib, f) extern __typeof__(f) *pnmf_av_##f;
PNMF_AV_FUNCS(PNMF_AV_DECLARE)
#undef PNMF_AV_DECLARE

#ifndef PNMF_AV_DYN_SELF /* av_dyn.c itself names the functions */
#define av_frame_alloc (*pnmf_av_av_frame_alloc)
#define av_frame_free (*pnmf_av_av_frame_free)
#define av_frame_get_buffer (*pnmf_av_av_frame_get_buffer)
#define av_frame_make_writable (*pnmf_av_av_frame_make_writable)
#define av_freep (*pnmf_av_av_freep)
#define av_malloc (*pnmf_av_av_malloc)
#define av_get_pix_fmt_name (*pnmf_av_av_get_pix_fmt_name)
#define av_pix_fmt_desc_get (*pnmf_av_av_pix_fmt_desc_get)
#define av_opt_set (*pnmf_av_av_opt_set)
#define av_log_get_level (*pnmf_av_av_log_get_level)
#define av_log_set_level (*pnmf_av_av_log_set_level)
#define av_strerror (*pnmf_av_av_strerror)
#define av_packet_alloc (*pnmf_av_av_packet_alloc)
#define av_packet_free (*pnmf_av_av_packet_free)
#define av_packet_unref (*pnmf_av_av_packet_unref)
#define av_packet_rescale_ts (*pnmf_av_av_packet_rescale_ts)
#define avcodec_alloc_context3 (*pnmf_av_avcodec_alloc_context3)
#define avcodec_find_encoder (*pnmf_av_avcodec_find_encoder)
#define avcodec_find_encoder_by_name (*pnmf_av_avcodec_find_encoder_by_name)
#define avcodec_free_context (*pnmf_av_avcodec_free_context)
#define avcodec_open2 (*pnmf_av_avcodec_open2)
#define avcodec_parameters_from_context (*pnmf_av_avcodec_parameters_from_context)
#define avcodec_receive_packet (*pnmf_av_avcodec_receive_packet)
#define avcodec_send_frame (*pnmf_av_avcodec_send_frame)
#define av_interleaved_write_frame (*pnmf_av_av_interleaved_write_frame)
#define av_write_trailer (*pnmf_av_av_write_trailer)
#define avformat_alloc_output_context2 (*pnmf_av_avformat_alloc_output_context2)
#define avformat_free_context (*pnmf_av_avformat_free_context)
#define avformat_new_stream (*pnmf_av_avformat_new_stream)
#define avformat_write_header (*pnmf_av_avformat_write_header)
#define avio_closep (*pnmf_av_avio_closep)
#define avio_open (*pnmf_av_avio_open)
#define sws_getContext (*pnmf_av_sws_getContext)
#define sws_freeContext (*pnmf_av_sws_freeContext)
#define sws_scale (*pnmf_av_sws_scale)
#endif
#endif /* PNMF_AV_DLOPEN */

#endif /* PNMF_TOOLS_AV_DYN_H */
