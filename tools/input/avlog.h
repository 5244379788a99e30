/* SPDX-License-Identifier: GPL-2.0-or-later */
/* FFmpeg's log level and error messages, shared by the input and output modules. */
#ifndef PNMF_TOOLS_AVLOG_H
#define PNMF_TOOLS_AVLOG_H

#include <stddef.h>

#include <libavutil/error.h>

/* Apply the level pnmf_av_log_level() chose, else, when FFmpeg's level is
 * still its own default, the tools' default (demuxer.h). */
void pnmf_av_log_apply(void);

/* FFmpeg's message for an error code into buf, lower-cased to fit a
 * reason line ("error N" when FFmpeg has none); returns buf. */
const char *pnmf_av_reason(int code, char *buf, size_t size);
/* The same in a buffer of the enclosing statement's lifetime. */
#define AVR(code) pnmf_av_reason((code), (char[AV_ERROR_MAX_STRING_SIZE]){ 0 }, AV_ERROR_MAX_STRING_SIZE)

#endif /* PNMF_TOOLS_AVLOG_H */
