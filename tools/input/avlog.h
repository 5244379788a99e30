/* SPDX-License-Identifier: GPL-2.0-or-later */
/* FFmpeg's log level, shared by the input and output modules. */
#ifndef PNMF_TOOLS_AVLOG_H
#define PNMF_TOOLS_AVLOG_H

/* Apply the level pnmf_av_log_level() chose, else, when FFmpeg's level is
 * still its own default, the tools' default (demuxer.h). */
void pnmf_av_log_apply(void);

#endif /* PNMF_TOOLS_AVLOG_H */
