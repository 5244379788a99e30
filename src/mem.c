/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <string.h>

#include "internal.h"
#include "tuning.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

#if defined(__linux__) && defined(MADV_HUGEPAGE)
#define PNMF_HUGE_PAGE ((size_t)2 << 20)
/* A block of PNMF_HUGE_MIN bytes or more starts on a 2 MiB boundary and
 * asks the kernel for transparent huge pages (where it gives them only on
 * request): the encoder's planes of a window (the pose search's cover of
 * every frame, the matcher's indexes) are touched afresh window after
 * window, and a 4 KiB page fault each, with its TLB misses, cost about a
 * tenth of a lossless encode. Elsewhere, or where the kernel declines, it
 * is an ordinary block. */
static void *big_block(size_t size)
{
    void *p = NULL;
    if (posix_memalign(&p, PNMF_HUGE_PAGE, size)) return NULL;
    const size_t whole = size & ~(PNMF_HUGE_PAGE - 1);
    if (whole) (void)madvise(p, whole, MADV_HUGEPAGE);
    return p;
}
#endif

void *pnmf_malloc(size_t size)
{
#ifdef PNMF_HUGE_PAGE
    if (size >= PNMF_HUGE_MIN) return big_block(size);
#endif
    return malloc(size ? size : 1);
}

void *pnmf_calloc(size_t n, size_t size)
{
#ifdef PNMF_HUGE_PAGE
    if (size && n > SIZE_MAX / size) return NULL;
    if (n * size >= PNMF_HUGE_MIN) {
        void *p = big_block(n * size);
        if (p) memset(p, 0, n * size);
        return p;
    }
#endif
    return calloc(n ? n : 1, size ? size : 1);
}

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

void *pnmf_keep_take(PnmfKeep *k, size_t size)
{
    if (!k) return pnmf_malloc(size);
    int best = -1, spare = -1;
    for (int i = 0; i < PNMF_KEEP_SLOTS; i++) {
        if (k->lent[i]) continue;
        if (k->p[i] && k->size[i] >= size && (best < 0 || k->size[i] < k->size[best])) best = i;
    }
    if (best >= 0) {
        k->lent[best] = 1;
        return k->p[best];
    }
    /* the blocks not lent are all too small: freed first, so the new one
     * may reuse their memory, not add to it */
    for (int i = 0; i < PNMF_KEEP_SLOTS; i++) {
        if (k->lent[i]) continue;
        pnmf_free(k->p[i]);
        k->p[i] = NULL, k->size[i] = 0;
        if (spare < 0) spare = i;
    }
    void *p = pnmf_malloc(size);
    if (!p || spare < 0) return p; /* every slot lent: an ordinary block */
    k->p[spare] = p, k->size[spare] = size, k->lent[spare] = 1;
    return p;
}

void *pnmf_keep_take_array(PnmfKeep *k, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) return NULL;
    return pnmf_keep_take(k, n * size);
}

void pnmf_keep_give(PnmfKeep *k, void *p)
{
    if (!p) return;
    for (int i = 0; k && i < PNMF_KEEP_SLOTS; i++)
        if (k->p[i] == p) {
            k->lent[i] = 0;
            return;
        }
    pnmf_free(p);
}

void pnmf_keep_free(PnmfKeep *k)
{
    for (int i = 0; i < PNMF_KEEP_SLOTS; i++) pnmf_free(k->p[i]);
    memset(k, 0, sizeof(*k));
}

void pnmf_set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}
