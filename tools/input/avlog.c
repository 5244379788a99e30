/* SPDX-License-Identifier: GPL-2.0-or-later */
/* FFmpeg's log level for every tool: fatal errors only by default, as
 * each tool reports failures in one line of its own; a name chosen with
 * -v or --loglevel; everything with PNMF_DEBUG set. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavutil/log.h>

#include "input/avlog.h"
#include "input/demuxer.h"
#include "output/av_dyn.h"

static int chosen, chosen_set; /* the AV_LOG_* pnmf_av_log_level() set */

int pnmf_av_log_level(const char *name)
{
    static const struct { const char *name; int level; } levels[] = {
        { "quiet", AV_LOG_QUIET }, { "panic", AV_LOG_PANIC },     { "fatal", AV_LOG_FATAL },
        { "error", AV_LOG_ERROR }, { "warning", AV_LOG_WARNING }, { "info", AV_LOG_INFO },
        { "verbose", AV_LOG_VERBOSE }, { "debug", AV_LOG_DEBUG }, { "trace", AV_LOG_TRACE },
    };
    for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
        if (!strcmp(name, levels[i].name)) {
            chosen = levels[i].level;
            chosen_set = 1;
            pnmf_av_log_apply();
            return 0;
        }
    return -1;
}

void pnmf_av_log_apply(void)
{
    if (!pnmf_av_loaded()) return; /* pnmf_av_load() applies it */
    if (getenv("PNMF_DEBUG"))
        av_log_set_level(AV_LOG_DEBUG);
    else if (chosen_set)
        av_log_set_level(chosen);
    else if (av_log_get_level() == AV_LOG_INFO)
        /* FFmpeg's own default: no tool chose a level (pnmf-compare and
         * pnmf-bench set theirs, which stay) */
        av_log_set_level(AV_LOG_FATAL);
}

const char *pnmf_av_reason(int code, char *buf, size_t size)
{
    if (av_strerror(code, buf, size) < 0)
        snprintf(buf, size, "error %d", code);
    if (buf[0] >= 'A' && buf[0] <= 'Z' && buf[1] >= 'a' && buf[1] <= 'z')
        buf[0] = (char)(buf[0] - 'A' + 'a');
    return buf;
}
