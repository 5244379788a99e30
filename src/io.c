/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <string.h>
#include <sys/types.h>

#include "io.h"

static ptrdiff_t file_read(void *opaque, uint8_t *buf, size_t n)
{
    FILE *f = opaque;
    const size_t got = fread(buf, 1, n, f);
    if (got < n && ferror(f)) return PNMF_ERR_IO;
    return (ptrdiff_t)got;
}

static int file_write(void *opaque, const uint8_t *buf, size_t n)
{
    return fwrite(buf, 1, n, opaque) == n ? 0 : PNMF_ERR_IO;
}

static int64_t file_seek(FILE *f, int64_t offset, int whence)
{
    if (fseeko(f, (off_t)offset, whence)) {
        clearerr(f); /* a pipe: the failure is the answer, not a stream error */
        return -1;
    }
    return (int64_t)ftello(f);
}

static int64_t file_seek_read(void *opaque, int64_t offset, int whence)
{
    FILE *f = opaque;
    if (whence == SEEK_CUR && offset == 0) return (int64_t)ftello(f);
    return file_seek(f, offset, whence);
}

static int64_t file_seek_write(void *opaque, int64_t offset, int whence)
{
    FILE *f = opaque;
    if (fflush(f)) return PNMF_ERR_IO;
    return file_seek(f, offset, whence);
}

void pnmf_io_file_reader(PnmfIO *io, FILE *f)
{
    memset(io, 0, sizeof(*io));
    io->opaque = f;
    io->read = file_read;
    io->seek = file_seek_read;
}

void pnmf_io_file_writer(PnmfIO *io, FILE *f)
{
    memset(io, 0, sizeof(*io));
    io->opaque = f;
    io->write = file_write;
    io->seek = file_seek_write;
}

static ptrdiff_t mem_read(void *opaque, uint8_t *buf, size_t n)
{
    PnmfMemReader *m = opaque;
    const size_t left = m->pos < m->size ? m->size - m->pos : 0;
    if (n > left) n = left;
    if (n) memcpy(buf, m->data + m->pos, n);
    m->pos += n;
    return (ptrdiff_t)n;
}

static int64_t mem_seek(void *opaque, int64_t offset, int whence)
{
    PnmfMemReader *m = opaque;
    const int64_t from = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? (int64_t)m->pos : (int64_t)m->size;
    if (whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END) return -1;
    if (offset < -from || (uint64_t)(from + offset) > m->size) return -1;
    m->pos = (size_t)(from + offset);
    return (int64_t)m->pos;
}

void pnmf_io_memory_reader(PnmfIO *io, PnmfMemReader *m, const uint8_t *data, size_t size)
{
    memset(io, 0, sizeof(*io));
    m->data = data, m->size = size, m->pos = 0;
    io->opaque = m;
    io->read = mem_read;
    io->seek = mem_seek;
}

ptrdiff_t pnmf_io_read(const PnmfIO *io, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        const ptrdiff_t r = io->read(io->opaque, (uint8_t *)buf + got, n - got);
        if (r < 0) return r;
        if ((size_t)r > n - got) return PNMF_ERR_IO; /* a callback that overran the buffer */
        if (r == 0) break;
        got += (size_t)r;
    }
    return (ptrdiff_t)got;
}
