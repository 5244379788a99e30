/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The .pnmf container (docs/format.md): a fixed header, then chunks
 * (type, length, payload, CRC-32), an index chunk and a trailer that points
 * at it. Window payloads are zstd frames; what is inside them is the
 * business of model.c. This file is the only one that knows the byte layout
 * of the container, and entropy.c the only one that calls zstd.
 */
#ifndef PNMF_CONTAINER_H
#define PNMF_CONTAINER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pnmf/pnmf.h"

#define PNMF_FORMAT_VERSION 21         /* what this writer writes */
#define PNMF_MIN_READER_WRITTEN 13     /* the min_reader_version it writes: its range-coded streams adapt as
                                        * format 13 defines (raised by pnmf_container_writer_need_reader()) */
#define PNMF_MIN_READER_V9 9           /* ... raised to this by a window with sub-pixel vectors, the deblocking
                                        * filter or 8x8 transform blocks, and below -q 16 (the sample-context levels stream) */
#define PNMF_MIN_READER_V10 10         /* ... and to this by a window with median vectors (window flags bit 15) */
#define PNMF_MIN_READER_V11 11         /* ... and to this by a window with context-coded placements (bit 16) */
#define PNMF_MIN_READER_V12 12         /* ... and to this by a window with compound prediction (bit 17) */
#define PNMF_MIN_READER_V14 14         /* ... and to this by a window with weighted prediction (bit 18) */
#define PNMF_MIN_READER_V15 15         /* ... and to this by a window coded out of order (bit 19) */
#define PNMF_MIN_READER_V16 16         /* ... and to this by a window of sharp interpolation (bit 20) */
#define PNMF_MIN_READER_V17 17         /* ... and to this by frames coded at half size (the header's `half`) */
#define PNMF_MIN_READER_V18 18         /* ... and to this by a window with the long-term reference (bit 21) */
#define PNMF_MIN_READER_V19 19         /* ... and to this by a window with the restoration filter (bit 22) */
#define PNMF_MIN_READER_V20 20         /* ... and to this by a window with a warp (bit 23) */
#define PNMF_MIN_READER_V21 21         /* ... and to this by sample-context levels at a lossy step (bit 24) */
#define PNMF_READER_VERSION 21         /* the newest format this reader reads */
#define PNMF_OLDEST_VERSION 2          /* the oldest format this reader reads */

/* Limits checked before anything read from a file is used (docs/format.md). */
#define PNMF_MAX_DIM        16384      /* width and height */
#define PNMF_MAX_PIXELS     (1 << 26)  /* width * height */
#define PNMF_MAX_CANVAS     (1 << 27)  /* canvas_height * canvas_width */
#define PNMF_MAX_WINDOW     1024       /* frames per window */
#define PNMF_MAX_COMPONENTS 255        /* components per window */
#define PNMF_MAX_FRAMES     (1 << 28)
#define PNMF_MAX_PAYLOAD    (1u << 30) /* decompressed window payload, bytes */
#define PNMF_MAX_CHUNK      (1u << 30) /* stored chunk length, bytes */

#define PNMF_FOURCC(a, b, c, d) \
    ((uint32_t)(a) | ((uint32_t)(b) << 8) | ((uint32_t)(c) << 16) | ((uint32_t)(d) << 24))
#define PNMF_CHUNK_WINDOW PNMF_FOURCC('W', 'I', 'N', 'D')
#define PNMF_CHUNK_INDEX  PNMF_FOURCC('I', 'N', 'D', 'X')
#define PNMF_CHUNK_TIME   PNMF_FOURCC('T', 'I', 'M', 'E')

#define PNMF_MAX_TIME_BASE  0x7fffffff          /* time base terms: an int, as FFmpeg's AVRational */
#define PNMF_MAX_DURATION   0xffffffffu         /* one frame's duration in time-base units */
#define PNMF_MAX_TIME       (UINT64_C(1) << 62) /* a frame's time in time-base units */

typedef struct PnmfHeader {
    uint16_t writer_version;     /* PNMF_FORMAT_VERSION when written */
    uint16_t min_reader_version; /* oldest reader that can read the file */
    uint32_t width, height;
    uint32_t fps_num, fps_den;
    uint32_t frame_count;
    uint16_t window;             /* frames per window (the last may be shorter) */
    uint16_t components;         /* component cap per window */
    uint8_t  shift_model;        /* enum PnmfShiftModel */
    uint8_t  quality;            /* -q */
    uint16_t w_step;             /* component quantizer step (model.c) */
    uint16_t r_step;             /* coefficient quantizer step (model.c) */
    uint32_t canvas_height;      /* canvas model: the torus the components live on, */
    uint32_t canvas_width;       /* at least the frame; 0 for the other models */
    uint8_t  half;               /* version 17: 1, the frames are coded at half size
                                  * (pnmf_half_size()) and scaled up for output (upsample.h) */
    /* Version 8's header extension (docs/format.md, "Metadata"); a file
     * without it reads as range 0, the others 2 and no time base. */
    uint8_t  color_range;        /* FFmpeg's AVColorRange: 0 unspecified, 1 limited, 2 full */
    uint8_t  color_primaries;    /* ITU-T H.273 codes (FFmpeg's AVColorPrimaries, ...): */
    uint8_t  color_trc;          /* 2 unspecified */
    uint8_t  colorspace;         /* the matrix */
    uint32_t tb_num, tb_den;     /* the frame times' time base; 0/0: no frame times */
} PnmfHeader;

/* One index entry per window chunk. */
typedef struct PnmfIndexEntry {
    uint64_t offset;             /* file offset of the chunk's first byte */
    uint32_t first_frame;
    uint32_t frame_count;        /* without the continues bit */
    int continues;               /* bit 31 of the stored frame_count */
} PnmfIndexEntry;

typedef struct PnmfContainerWriter PnmfContainerWriter;
typedef struct PnmfContainerReader PnmfContainerReader;

/*
 * Every function returns 0 or a negative PNMF_ERR code; on error, err
 * (when not NULL, errlen bytes) receives a short lower-case reason such as
 * "truncated header" or "chunk 3: crc mismatch".
 */

/* Writer: writes the header at once (frame_count as given), then chunks. */
int  pnmf_container_writer_open_io(PnmfContainerWriter **w, const PnmfIO *io, const PnmfHeader *h,
                                   int zstd_level, char *err, size_t errlen);
/* The same through a FILE opened for writing (seekable). */
int  pnmf_container_writer_open(PnmfContainerWriter **w, FILE *f, const PnmfHeader *h,
                                int zstd_level, char *err, size_t errlen);
/* Compress payload with zstd (content checksum on) and append a window
 * chunk for frames [first_frame, first_frame + frame_count). */
int  pnmf_container_write_window(PnmfContainerWriter *w, uint32_t first_frame,
                                 uint32_t frame_count, const uint8_t *payload, size_t size,
                                 char *err, size_t errlen);
#define PNMF_MAX_CODINGS 8
/* The same for n (1..PNMF_MAX_CODINGS) codings of one window: the one whose compressed
 * chunk is the smallest is written (the first on a tie; codings over the
 * payload bound are passed over), and *chosen (when not NULL) is its
 * index. */
int  pnmf_container_write_window_best(PnmfContainerWriter *w, uint32_t first_frame, uint32_t frame_count,
                                      const uint8_t *const *payloads, const size_t *sizes, int n, int *chosen,
                                      char *err, size_t errlen);
/* The bytes of the zstd frame pnmf_container_write_window_best() would
 * write for these codings of a window of frame_count frames next (with the
 * continues flag as set now): SIZE_MAX when none is within the payload
 * bound. Nothing is written; the writer remembers the compressed result,
 * so writing these same codings next does not compress them again. Two
 * threads may call it at once (not beside a write of the writer's). */
int  pnmf_container_window_bytes(PnmfContainerWriter *w, uint32_t frame_count, const uint8_t *const *payloads,
                                 const size_t *sizes, int n, size_t *bytes);
/* A timed writer (tb_num set): the duration of the next frame pushed, in
 * time-base units, 1..PNMF_MAX_DURATION. Each window written takes its
 * frames' durations from the front of this queue into its 'TIME' chunk. */
int  pnmf_container_writer_add_duration(PnmfContainerWriter *w, uint64_t duration);
/* The time of the first frame (before the first window; default 0). */
int  pnmf_container_writer_set_time_start(PnmfContainerWriter *w, uint64_t start);
/* A frame's duration at the header's frame rate in its time base, rounded
 * (at least 1). */
uint64_t pnmf_container_nominal_duration(const PnmfHeader *h);
/* Write the index chunk and the trailer, then rewrite the header with the
 * final frame_count. The stream must be seekable. */
int  pnmf_container_writer_finish(PnmfContainerWriter *w, uint32_t frame_count,
                                  char *err, size_t errlen);
/* A window written needs a reader of version `version`: the header written
 * when the writer finishes says so (min_reader_version is raised, never
 * lowered; version at most PNMF_FORMAT_VERSION). */
void pnmf_container_writer_need_reader(PnmfContainerWriter *w, int version);
uint64_t pnmf_container_writer_bytes(const PnmfContainerWriter *w);
const PnmfHeader *pnmf_container_writer_header(const PnmfContainerWriter *w);
/* The next window continues the previous one: its zstd frame is built on
 * the previous window's payload (a raw prefix), and bit 31 of its
 * frame_count (chunk and index) says so. */
void pnmf_container_writer_set_continues(PnmfContainerWriter *w, int on);
/* The next window written (pnmf_container_write_window_best()) is a
 * lossless window, its codings' levels range-coded: where the double-fast
 * probe stores every block of a coding raw, that frame is the coding's
 * (pnmf_entropy_compress_probed(), light 0) unless PNMF_ZSTD_LIGHT_LOSSLESS.
 * The write clears it. */
void pnmf_container_writer_set_lossless(PnmfContainerWriter *w, int on);
/* Append the window chunk r read last (pnmf_container_read_window()) as
 * it is stored (after a 'TIME' chunk with its frames' durations when the
 * file is timed, its times going on from the windows written before): its zstd frame is not recompressed, its first_frame
 * becomes the writer's next frame and the chunk's CRC is computed again.
 * The headers must agree on everything the window's payload depends on
 * (pnmf_cat() checks them). A window that continues the one before it
 * must follow, in w, the window r read before it. */
int  pnmf_container_copy_window(PnmfContainerWriter *w, const PnmfContainerReader *r, char *err, size_t errlen);
void pnmf_container_writer_close(PnmfContainerWriter **w);

/* Reader: reads and checks the header. */
int  pnmf_container_reader_open_io(PnmfContainerReader **r, const PnmfIO *io, char *err, size_t errlen);
/* The same through a FILE opened for reading (a pipe too). */
int  pnmf_container_reader_open(PnmfContainerReader **r, FILE *f, char *err, size_t errlen);
const PnmfHeader *pnmf_container_reader_header(const PnmfContainerReader *r);
/* Read the next window chunk (unknown chunk types are skipped; the index
 * chunk ends the sequence). On success *payload points to the decompressed
 * payload (owned by the reader, valid until the next call) and *first_frame,
 * *frame_count describe it. Returns 1 on success, 0 at the end, <0 on error. */
int  pnmf_container_read_window(PnmfContainerReader *r, const uint8_t **payload,
                                size_t *size, uint32_t *first_frame,
                                uint32_t *frame_count, char *err, size_t errlen);
/* Load the index (through the trailer) and position the reader at the
 * window chunk that holds frame; *first_frame receives that window's first
 * frame. */
int  pnmf_container_seek(PnmfContainerReader *r, uint32_t frame, uint32_t *first_frame,
                         char *err, size_t errlen);
/* The frame times of the window last read: its frame count, and into
 * *pts (when the file is timed) count + 1 times, the start of each frame
 * and the end of the last. 0 when the file has no frame times. */
uint32_t pnmf_container_window_times(const PnmfContainerReader *r, const uint64_t **pts);
/* Whether the window last read continues the one before it. */
int  pnmf_container_window_continues(const PnmfContainerReader *r);
/* The first frame of the key window (one that continues nothing) at or
 * before the window holding frame, from the index. */
int  pnmf_container_key_frame(PnmfContainerReader *r, uint32_t frame, uint32_t *key_first, char *err,
                              size_t errlen);
void pnmf_container_reader_close(PnmfContainerReader **r);

/* CRC-32 (IEEE 802.3, reflected, as zlib and PNG use). */
uint32_t pnmf_crc32(uint32_t crc, const void *data, size_t size);

#endif /* PNMF_CONTAINER_H */
