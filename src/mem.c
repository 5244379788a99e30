/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

void *pnmf_malloc(size_t size) { return malloc(size ? size : 1); }

void *pnmf_calloc(size_t n, size_t size) { return calloc(n ? n : 1, size ? size : 1); }

void *pnmf_malloc_array(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) return NULL;
    return pnmf_malloc(n * size);
}

void *pnmf_realloc(void *p, size_t size) { return realloc(p, size ? size : 1); }

void pnmf_free(void *p) { free(p); }

void pnmf_freep(void *pp)
{
    void **p = pp;
    free(*p);
    *p = NULL;
}

void pnmf_set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}
