/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "log.h"

void pnmf_log(const PnmfLogger *lg, int level, const char *fmt, ...)
{
    if (!pnmf_log_on(lg)) return;
    va_list ap;
    va_start(ap, fmt);
    lg->callback(lg->cookie, level, fmt, ap);
    va_end(ap);
}
