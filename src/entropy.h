/* SPDX-License-Identifier: GPL-2.0-or-later */
/* zstd, called from entropy.c only. */
#ifndef PNMF_ENTROPY_H
#define PNMF_ENTROPY_H

#include <stddef.h>
#include <stdint.h>

/* Compress src into a newly allocated buffer (*dst, *dst_size; pnmf_free() it),
 * as one zstd frame with the content checksum and content size on. */
int pnmf_entropy_compress(const uint8_t *src, size_t src_size, int level,
                          uint8_t **dst, size_t *dst_size);

/* Decompress one zstd frame of exactly src_size bytes into a newly allocated
 * buffer of at most max_size bytes. The size the frame claims is not
 * trusted: output beyond max_size is an error (PNMF_ERR_LIMIT), as is a
 * checksum mismatch or trailing data (PNMF_ERR_CORRUPT). */
int pnmf_entropy_decompress(const uint8_t *src, size_t src_size, size_t max_size,
                            uint8_t **dst, size_t *dst_size);

/* The same with the zstd frame built on (compress) or needing (decompress)
 * prefix as raw content before it: ZSTD_CCtx_refPrefix(), so repeats of
 * the previous window's payload cost a match, not their bytes again. The
 * frame records no dictionary; the caller knows when a prefix applies. */
int pnmf_entropy_compress_prefix(const uint8_t *src, size_t src_size, const uint8_t *prefix,
                                 size_t prefix_size, int level, uint8_t **dst, size_t *dst_size);
int pnmf_entropy_decompress_prefix(const uint8_t *src, size_t src_size, const uint8_t *prefix,
                                   size_t prefix_size, size_t max_size, uint8_t **dst, size_t *dst_size);

/* The compressors above, at a level of PNMF_ZSTD_PROBE_FROM or more (whose
 * strategy is btultra2), first try cheap match searches with the level's
 * window; when those store every block raw (the input does not shrink),
 * the light search's frame is the result. This one always searches as the
 * level does (the frame the probes' must equal). */
int pnmf_entropy_compress_full(const uint8_t *src, size_t src_size, const uint8_t *prefix, size_t prefix_size,
                               int level, uint8_t **dst, size_t *dst_size);
/* pnmf_entropy_compress_prefix() with light 1; with light 0 the
 * double-fast search alone: where it stores every block raw, its frame
 * (raw blocks, the level's header) is the result. */
int pnmf_entropy_compress_probed(const uint8_t *src, size_t src_size, const uint8_t *prefix, size_t prefix_size,
                                 int level, int light, uint8_t **dst, size_t *dst_size);

/* 1 if the n bytes at z are one zstd frame of the header the container
 * reads (content size and checksum, no dictionary), raw blocks and its
 * checksum. */
int pnmf_entropy_frame_raw(const uint8_t *z, size_t n);

/* The same with a decompression context kept by the caller across frames
 * (*ctx NULL at first: created here; pnmf_entropy_ctx_free() at the end). */
int pnmf_entropy_decompress_ctx(void **ctx, const uint8_t *src, size_t src_size, const uint8_t *prefix,
                                size_t prefix_size, size_t max_size, uint8_t **dst, size_t *dst_size);
void pnmf_entropy_ctx_free(void **ctx);

#endif /* PNMF_ENTROPY_H */
