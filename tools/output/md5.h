/* SPDX-License-Identifier: GPL-2.0-or-later */
/* MD5 (RFC 1321), for the md5 output: in the tools themselves, so that
 * writing a digest needs no FFmpeg library. */
#ifndef PNMF_TOOLS_MD5_H
#define PNMF_TOOLS_MD5_H

#include <stddef.h>
#include <stdint.h>

typedef struct PnmfMd5 {
    uint32_t h[4];
    uint64_t bytes;     /* hashed so far */
    uint8_t buf[64];    /* the partial block, bytes % 64 of it */
} PnmfMd5;

void pnmf_md5_init(PnmfMd5 *m);
void pnmf_md5_update(PnmfMd5 *m, const uint8_t *p, size_t n);
void pnmf_md5_final(PnmfMd5 *m, uint8_t sum[16]);

#endif /* PNMF_TOOLS_MD5_H */
