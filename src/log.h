/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The library's messages go through the caller's PnmfLogger, never stderr. */
#ifndef PNMF_LOG_H
#define PNMF_LOG_H

#include "pnmf/common.h"

/* Format a message and pass it to lg's callback; nothing if lg or its
 * callback is NULL. level is an enum PnmfLogLevel. */
void pnmf_log(const PnmfLogger *lg, int level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Whether a message at this level would go anywhere: lets a caller skip
 * work done only to log it. */
static inline int pnmf_log_on(const PnmfLogger *lg) { return lg && lg->callback; }

#endif /* PNMF_LOG_H */
