/* SPDX-License-Identifier: GPL-2.0-or-later */
/* MD5 (RFC 1321): 64-byte blocks of little-endian words, four rounds of
 * 16 steps, the length in bits appended after a 0x80 byte and zeros. */
#include <string.h>

#include "output/md5.h"

/* the sines' constants, floor(abs(sin(i + 1)) * 2^32) */
static const uint32_t K[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
};
/* one step of each round: a = b + ((a + F(b, c, d) + w + k) <<< s) */
#define F1(b, c, d) (d ^ (b & (c ^ d)))
#define F2(b, c, d) (c ^ (d & (b ^ c)))
#define F3(b, c, d) (b ^ c ^ d)
#define F4(b, c, d) (c ^ (b | ~d))
#define STEP(F, a, b, c, d, w, k, s)                                                                         \
    do {                                                                                                     \
        a += F(b, c, d) + (w) + (k);                                                                         \
        a = (a << (s) | a >> (32 - (s))) + b;                                                                \
    } while (0)

/* the 64 steps unrolled, four at a time: the words and rotations as
 * constants, no branch inside a block */
static void block(uint32_t h[4], const uint8_t *p)
{
    uint32_t w[16];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 | (uint32_t)p[4 * i + 2] << 16 |
               (uint32_t)p[4 * i + 3] << 24;
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
    for (int i = 0; i < 16; i += 4) {
        STEP(F1, a, b, c, d, w[i], K[i], 7);
        STEP(F1, d, a, b, c, w[i + 1], K[i + 1], 12);
        STEP(F1, c, d, a, b, w[i + 2], K[i + 2], 17);
        STEP(F1, b, c, d, a, w[i + 3], K[i + 3], 22);
    }
    for (int i = 16; i < 32; i += 4) {
        STEP(F2, a, b, c, d, w[(5 * i + 1) & 15], K[i], 5);
        STEP(F2, d, a, b, c, w[(5 * i + 6) & 15], K[i + 1], 9);
        STEP(F2, c, d, a, b, w[(5 * i + 11) & 15], K[i + 2], 14);
        STEP(F2, b, c, d, a, w[(5 * i + 16) & 15], K[i + 3], 20);
    }
    for (int i = 32; i < 48; i += 4) {
        STEP(F3, a, b, c, d, w[(3 * i + 5) & 15], K[i], 4);
        STEP(F3, d, a, b, c, w[(3 * i + 8) & 15], K[i + 1], 11);
        STEP(F3, c, d, a, b, w[(3 * i + 11) & 15], K[i + 2], 16);
        STEP(F3, b, c, d, a, w[(3 * i + 14) & 15], K[i + 3], 23);
    }
    for (int i = 48; i < 64; i += 4) {
        STEP(F4, a, b, c, d, w[(7 * i) & 15], K[i], 6);
        STEP(F4, d, a, b, c, w[(7 * i + 7) & 15], K[i + 1], 10);
        STEP(F4, c, d, a, b, w[(7 * i + 14) & 15], K[i + 2], 15);
        STEP(F4, b, c, d, a, w[(7 * i + 21) & 15], K[i + 3], 21);
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d;
}

void pnmf_md5_init(PnmfMd5 *m)
{
    m->h[0] = 0x67452301, m->h[1] = 0xefcdab89, m->h[2] = 0x98badcfe, m->h[3] = 0x10325476;
    m->bytes = 0;
}

void pnmf_md5_update(PnmfMd5 *m, const uint8_t *p, size_t n)
{
    size_t have = (size_t)(m->bytes & 63);
    m->bytes += n;
    if (have) { /* the partial block first */
        const size_t t = 64 - have < n ? 64 - have : n;
        memcpy(m->buf + have, p, t);
        p += t, n -= t, have += t;
        if (have < 64) return;
        block(m->h, m->buf);
    }
    for (; n >= 64; p += 64, n -= 64) block(m->h, p);
    memcpy(m->buf, p, n);
}

void pnmf_md5_final(PnmfMd5 *m, uint8_t sum[16])
{
    const uint64_t bits = m->bytes * 8;
    static const uint8_t pad[64] = { 0x80 };
    const size_t have = (size_t)(m->bytes & 63);
    pnmf_md5_update(m, pad, have < 56 ? 56 - have : 120 - have);
    uint8_t len[8];
    for (int i = 0; i < 8; i++) len[i] = (uint8_t)(bits >> (8 * i));
    pnmf_md5_update(m, len, 8);
    for (int i = 0; i < 16; i++) sum[i] = (uint8_t)(m->h[i / 4] >> (8 * (i % 4)));
}
