/* SPDX-License-Identifier: GPL-2.0-or-later */
/* LEB128 varints and zigzag, the payload's only value coding
 * (docs/format.md, "Window payload"). */
#ifndef PNMF_VARINT_H
#define PNMF_VARINT_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

typedef struct Buf {
    uint8_t *p;
    size_t len, cap;
    int err;       /* an allocation failed: the buffer is incomplete */
} Buf;

static inline void put_u(Buf *b, uint64_t v)
{
    if (b->cap - b->len < 10) {
        size_t cap = b->cap ? 2 * b->cap : 4096;
        uint8_t *p = pnmf_realloc(b->p, cap);
        if (!p) {
            b->err = 1;
            return;
        }
        b->p = p, b->cap = cap;
    }
    while (v >= 0x80) {
        b->p[b->len++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b->p[b->len++] = (uint8_t)v;
}

static inline void put_byte(Buf *b, uint8_t v)
{
    if (b->len == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 4096;
        uint8_t *p = pnmf_realloc(b->p, cap);
        if (!p) {
            b->err = 1;
            return;
        }
        b->p = p, b->cap = cap;
    }
    b->p[b->len++] = v;
}

typedef struct Rd {
    const uint8_t *p, *end;
} Rd;

/* Returns 0 or -1 (truncated, over 10 bytes, or over 64 bits). */
static inline int get_u(Rd *r, uint64_t *v)
{
    uint64_t x = 0;
    for (int s = 0; s < 64; s += 7) {
        if (r->p >= r->end) return -1;
        const uint8_t c = *r->p++;
        if (s == 63 && c > 1) return -1; /* the 10th byte holds bit 63 only */
        x |= (uint64_t)(c & 0x7f) << s;
        if (!(c & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

static inline uint64_t zigzag(int64_t v) { return v < 0 ? ((uint64_t)(-(v + 1)) << 1) | 1 : (uint64_t)v << 1; }
static inline int64_t unzigzag(uint64_t u) { return (u & 1) ? -(int64_t)(u >> 1) - 1 : (int64_t)(u >> 1); }

#endif /* PNMF_VARINT_H */
