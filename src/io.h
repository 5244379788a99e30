/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Byte streams behind the container: a PnmfIO over a FILE or over memory. */
#ifndef PNMF_IO_H
#define PNMF_IO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pnmf/pnmf.h"

/* A FILE to read from. Seeking fails on a pipe, which the reader handles. */
void pnmf_io_file_reader(PnmfIO *io, FILE *f);
/* A FILE to write to: seeking flushes first, so a write error (a full
 * disk) is reported by the seek that ends the stream. */
void pnmf_io_file_writer(PnmfIO *io, FILE *f);

/* Memory to read from; m holds the position and must outlive io. */
typedef struct PnmfMemReader {
    const uint8_t *data;
    size_t size, pos;
} PnmfMemReader;
void pnmf_io_memory_reader(PnmfIO *io, PnmfMemReader *m, const uint8_t *data, size_t size);

/* The stream's position, or a negative value if it cannot tell. */
static inline int64_t pnmf_io_tell(const PnmfIO *io) { return io->seek ? io->seek(io->opaque, 0, SEEK_CUR) : -1; }

/* Read until n bytes or the end: the count read, or a negative PNMF_ERR code. */
ptrdiff_t pnmf_io_read(const PnmfIO *io, void *buf, size_t n);

#endif /* PNMF_IO_H */
