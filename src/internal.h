/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Helpers shared by every stage of libpnmf. */
#ifndef PNMF_INTERNAL_H
#define PNMF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "pnmf/common.h"

/* All allocation goes through these, so a failure test can hook them.
 * pnmf_malloc_array() returns NULL when n * size overflows. */
void *pnmf_malloc(size_t size);
void *pnmf_calloc(size_t n, size_t size);
void *pnmf_malloc_array(size_t n, size_t size);
void *pnmf_realloc(void *p, size_t size);
void  pnmf_free(void *p);
/* Frees *(void **)pp and sets it to NULL. */
void  pnmf_freep(void *pp);

/* Blocks a decoder keeps from one window to the next: a window's arrays
 * come back from the last window's, already mapped, without the kernel's
 * page faults and clearing of fresh pages each window. pnmf_keep_take()
 * hands out a kept block of at least size bytes that is not lent (the
 * smallest), or a new one (with k NULL, pnmf_malloc()); pnmf_keep_give()
 * takes one back (p not from k: pnmf_free()); pnmf_keep_free() frees what
 * k holds. A block from k is given back, never passed to pnmf_free(). */
#define PNMF_KEEP_SLOTS 4
typedef struct PnmfKeep {
    void *p[PNMF_KEEP_SLOTS];
    size_t size[PNMF_KEEP_SLOTS];
    unsigned char lent[PNMF_KEEP_SLOTS];
} PnmfKeep;
void *pnmf_keep_take(PnmfKeep *k, size_t size);
void *pnmf_keep_take_array(PnmfKeep *k, size_t n, size_t size);
void  pnmf_keep_give(PnmfKeep *k, void *p);
void  pnmf_keep_free(PnmfKeep *k);

/* Forward a negative result. */
#define PNMF_CHECK(x) do { int pnmf_r_ = (x); if (pnmf_r_ < 0) return pnmf_r_; } while (0)

/* Write a formatted reason into err (errlen bytes), if err is not NULL. */
void pnmf_set_err(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Little-endian byte access. */
static inline void pnmf_wl16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void pnmf_wl32(uint8_t *p, uint32_t v) { pnmf_wl16(p, v); pnmf_wl16(p + 2, v >> 16); }
static inline void pnmf_wl64(uint8_t *p, uint64_t v) { pnmf_wl32(p, (uint32_t)v); pnmf_wl32(p + 4, (uint32_t)(v >> 32)); }
static inline uint32_t pnmf_rl16(const uint8_t *p) { return p[0] | (uint32_t)p[1] << 8; }
static inline uint32_t pnmf_rl32(const uint8_t *p) { return pnmf_rl16(p) | pnmf_rl16(p + 2) << 16; }
static inline uint64_t pnmf_rl64(const uint8_t *p) { return pnmf_rl32(p) | (uint64_t)pnmf_rl32(p + 4) << 32; }

#endif /* PNMF_INTERNAL_H */
