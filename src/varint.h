/* SPDX-License-Identifier: GPL-2.0-or-later */
/* LEB128 varints and zigzag, the payload's only value coding
 * (docs/format.md, "Window payload"). */
#ifndef PNMF_VARINT_H
#define PNMF_VARINT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

typedef struct Buf {
    uint8_t *p;
    size_t len, cap;
    int err;       /* an allocation failed: the buffer is incomplete */
} Buf;

/* Room for n more bytes, the buffer doubling; 0, or -1 with b->err set. */
static inline int buf_room(Buf *b, size_t n)
{
    if (b->cap - b->len >= n) return 0;
    size_t cap = b->cap ? 2 * b->cap : 4096;
    while (cap - b->len < n) cap *= 2;
    uint8_t *p = pnmf_realloc(b->p, cap);
    if (!p) {
        b->err = 1;
        return -1;
    }
    b->p = p, b->cap = cap;
    return 0;
}

static inline void put_u(Buf *b, uint64_t v)
{
    if (buf_room(b, 10) < 0) return;
    while (v >= 0x80) {
        b->p[b->len++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b->p[b->len++] = (uint8_t)v;
}

static inline void put_byte(Buf *b, uint8_t v)
{
    if (buf_room(b, 1) == 0) b->p[b->len++] = v;
}

static inline void put_bytes(Buf *b, const uint8_t *v, size_t n)
{
    if (n && buf_room(b, n) == 0) memcpy(b->p + b->len, v, n), b->len += n;
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
