/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The .pnmf container, as docs/format.md defines it:
 *
 *   header (64 bytes in v1, 80 in v8 with the metadata, CRC-32 at its end)
 *   chunk*  = type u32, length u32, payload[length], CRC-32(type, length, payload)
 *             'TIME' (v8, a file with a time base): before each window, the
 *                    window's first_frame u32, start u64, runs (count, duration)
 *             'WIND': first_frame u32, frame_count u32, one zstd frame
 *             'INDX': count u32, count x (offset u64, first_frame u32, frame_count u32)
 *             anything else: skipped by the reader after its CRC is checked
 *   trailer (16 bytes) = offset of the 'INDX' chunk u64, end magic[8]
 *
 * This is the surface a hostile file reaches first. Every count and length
 * read from the file is checked against the header, the limits in
 * container.h and, when the file's size is known, against what remains of
 * it, before it is used to allocate or to seek. A file read from start to
 * end is covered byte for byte: header and chunks by their CRCs, the index
 * against the windows actually read, the trailer against the index's
 * position and the end of the file.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "container.h"
#include "entropy.h"
#include "internal.h"
#include "io.h"
#include "tuning.h"

/* Header layout (offsets in bytes). */
#define HDR_MAGIC          0
#define HDR_WRITER_VERSION 8
#define HDR_MIN_READER     10
#define HDR_SIZE           12
#define HDR_RESERVED0      14
#define HDR_WIDTH          16
#define HDR_HEIGHT         20
#define HDR_FPS_NUM        24
#define HDR_FPS_DEN        28
#define HDR_FRAME_COUNT    32
#define HDR_WINDOW         36
#define HDR_COMPONENTS     38
#define HDR_SHIFT_MODEL    40
#define HDR_QUALITY        41
#define HDR_W_STEP         42
#define HDR_R_STEP         44
#define HDR_HALF           46  /* u16, version 17 (reserved in versions up to 16) */
#define HDR_CANVAS_H       48
#define HDR_CANVAS_W       52
#define HDR_RESERVED2      56  /* up to HDR_FIXED */
#define HDR_FIXED          60  /* fields a v1 reader knows; then extension, then CRC */
#define HDR_RANGE          60  /* version 8's extension: u8 each */
#define HDR_PRIMARIES      61
#define HDR_TRC            62
#define HDR_MATRIX         63
#define HDR_TB_NUM         64  /* u32 */
#define HDR_TB_DEN         68  /* u32 */
#define HDR_RESERVED3      72  /* u32 */
#define HDR_EXT_END        76
#define HEADER_SIZE_V1     64
#define HEADER_SIZE_V8     80
#define HEADER_SIZE_MAX    4096

#define CHUNK_HEAD         8   /* type, length */
#define CHUNK_CRC          4
#define CHUNK_OVERHEAD     (CHUNK_HEAD + CHUNK_CRC)
#define WIND_HEAD          8   /* first_frame, frame_count */
#define WIND_CONTINUES     0x80000000u /* frame_count's bit 31: built on the previous window */
#define INDX_HEAD          4   /* count */
#define INDX_ENTRY         16
#define TRAILER_SIZE       16
#define TIME_HEAD          12  /* first_frame u32, start u64; then runs of varints */

/* The smallest a file can be: header, an empty index chunk, the trailer. */
#define MIN_FILE_SIZE (HEADER_SIZE_V1 + CHUNK_OVERHEAD + INDX_HEAD + TRAILER_SIZE)

/* Decompressed window payload bound (docs/format.md, "Limits"): generous
 * for any model that stores up to 16 bytes per pixel per component and per
 * frame, small enough that a zstd bomb in a small video goes nowhere. */
#define PAYLOAD_SLACK      (1u << 20)
#define PAYLOAD_PER_PIXEL  16

/* PNG's idea: a high-bit byte catches 7-bit transfers, CR LF catches
 * CRLF -> LF conversion and the lone LF catches LF -> CRLF. */
static const uint8_t header_magic[8]  = { 0x89, 'P', 'N', 'M', 'F', '\r', '\n', '\n' };
static const uint8_t trailer_magic[8] = { 0x89, 'P', 'N', 'M', 'F', 'E', 'N', 'D' };

static const uint32_t crc_table[256] = {
    0x00000000, 0x77073096, 0xee0e612c, 0x990951ba, 0x076dc419, 0x706af48f,
    0xe963a535, 0x9e6495a3, 0x0edb8832, 0x79dcb8a4, 0xe0d5e91e, 0x97d2d988,
    0x09b64c2b, 0x7eb17cbd, 0xe7b82d07, 0x90bf1d91, 0x1db71064, 0x6ab020f2,
    0xf3b97148, 0x84be41de, 0x1adad47d, 0x6ddde4eb, 0xf4d4b551, 0x83d385c7,
    0x136c9856, 0x646ba8c0, 0xfd62f97a, 0x8a65c9ec, 0x14015c4f, 0x63066cd9,
    0xfa0f3d63, 0x8d080df5, 0x3b6e20c8, 0x4c69105e, 0xd56041e4, 0xa2677172,
    0x3c03e4d1, 0x4b04d447, 0xd20d85fd, 0xa50ab56b, 0x35b5a8fa, 0x42b2986c,
    0xdbbbc9d6, 0xacbcf940, 0x32d86ce3, 0x45df5c75, 0xdcd60dcf, 0xabd13d59,
    0x26d930ac, 0x51de003a, 0xc8d75180, 0xbfd06116, 0x21b4f4b5, 0x56b3c423,
    0xcfba9599, 0xb8bda50f, 0x2802b89e, 0x5f058808, 0xc60cd9b2, 0xb10be924,
    0x2f6f7c87, 0x58684c11, 0xc1611dab, 0xb6662d3d, 0x76dc4190, 0x01db7106,
    0x98d220bc, 0xefd5102a, 0x71b18589, 0x06b6b51f, 0x9fbfe4a5, 0xe8b8d433,
    0x7807c9a2, 0x0f00f934, 0x9609a88e, 0xe10e9818, 0x7f6a0dbb, 0x086d3d2d,
    0x91646c97, 0xe6635c01, 0x6b6b51f4, 0x1c6c6162, 0x856530d8, 0xf262004e,
    0x6c0695ed, 0x1b01a57b, 0x8208f4c1, 0xf50fc457, 0x65b0d9c6, 0x12b7e950,
    0x8bbeb8ea, 0xfcb9887c, 0x62dd1ddf, 0x15da2d49, 0x8cd37cf3, 0xfbd44c65,
    0x4db26158, 0x3ab551ce, 0xa3bc0074, 0xd4bb30e2, 0x4adfa541, 0x3dd895d7,
    0xa4d1c46d, 0xd3d6f4fb, 0x4369e96a, 0x346ed9fc, 0xad678846, 0xda60b8d0,
    0x44042d73, 0x33031de5, 0xaa0a4c5f, 0xdd0d7cc9, 0x5005713c, 0x270241aa,
    0xbe0b1010, 0xc90c2086, 0x5768b525, 0x206f85b3, 0xb966d409, 0xce61e49f,
    0x5edef90e, 0x29d9c998, 0xb0d09822, 0xc7d7a8b4, 0x59b33d17, 0x2eb40d81,
    0xb7bd5c3b, 0xc0ba6cad, 0xedb88320, 0x9abfb3b6, 0x03b6e20c, 0x74b1d29a,
    0xead54739, 0x9dd277af, 0x04db2615, 0x73dc1683, 0xe3630b12, 0x94643b84,
    0x0d6d6a3e, 0x7a6a5aa8, 0xe40ecf0b, 0x9309ff9d, 0x0a00ae27, 0x7d079eb1,
    0xf00f9344, 0x8708a3d2, 0x1e01f268, 0x6906c2fe, 0xf762575d, 0x806567cb,
    0x196c3671, 0x6e6b06e7, 0xfed41b76, 0x89d32be0, 0x10da7a5a, 0x67dd4acc,
    0xf9b9df6f, 0x8ebeeff9, 0x17b7be43, 0x60b08ed5, 0xd6d6a3e8, 0xa1d1937e,
    0x38d8c2c4, 0x4fdff252, 0xd1bb67f1, 0xa6bc5767, 0x3fb506dd, 0x48b2364b,
    0xd80d2bda, 0xaf0a1b4c, 0x36034af6, 0x41047a60, 0xdf60efc3, 0xa867df55,
    0x316e8eef, 0x4669be79, 0xcb61b38c, 0xbc66831a, 0x256fd2a0, 0x5268e236,
    0xcc0c7795, 0xbb0b4703, 0x220216b9, 0x5505262f, 0xc5ba3bbe, 0xb2bd0b28,
    0x2bb45a92, 0x5cb36a04, 0xc2d7ffa7, 0xb5d0cf31, 0x2cd99e8b, 0x5bdeae1d,
    0x9b64c2b0, 0xec63f226, 0x756aa39c, 0x026d930a, 0x9c0906a9, 0xeb0e363f,
    0x72076785, 0x05005713, 0x95bf4a82, 0xe2b87a14, 0x7bb12bae, 0x0cb61b38,
    0x92d28e9b, 0xe5d5be0d, 0x7cdcefb7, 0x0bdbdf21, 0x86d3d2d4, 0xf1d4e242,
    0x68ddb3f8, 0x1fda836e, 0x81be16cd, 0xf6b9265b, 0x6fb077e1, 0x18b74777,
    0x88085ae6, 0xff0f6a70, 0x66063bca, 0x11010b5c, 0x8f659eff, 0xf862ae69,
    0x616bffd3, 0x166ccf45, 0xa00ae278, 0xd70dd2ee, 0x4e048354, 0x3903b3c2,
    0xa7672661, 0xd06016f7, 0x4969474d, 0x3e6e77db, 0xaed16a4a, 0xd9d65adc,
    0x40df0b66, 0x37d83bf0, 0xa9bcae53, 0xdebb9ec5, 0x47b2cf7f, 0x30b5ffe9,
    0xbdbdf21c, 0xcabac28a, 0x53b39330, 0x24b4a3a6, 0xbad03605, 0xcdd70693,
    0x54de5729, 0x23d967bf, 0xb3667a2e, 0xc4614ab8, 0x5d681b02, 0x2a6f2b94,
    0xb40bbe37, 0xc30c8ea1, 0x5a05df1b, 0x2d02ef8d,
};

/* crc_slice[k][b]: the register after byte b and k zero bytes, from a
 * register of 0 (crc_slice[0] is crc_table), for eight bytes a step. */
static uint32_t crc_slice[8][256];
static pthread_once_t crc_slice_once = PTHREAD_ONCE_INIT;

static void crc_slice_init(void)
{
    for (int b = 0; b < 256; b++) {
        crc_slice[0][b] = crc_table[b];
        for (int k = 1; k < 8; k++)
            crc_slice[k][b] = (crc_slice[k - 1][b] >> 8) ^ crc_table[crc_slice[k - 1][b] & 0xff];
    }
}

/* Table CRC-32: reflected polynomial 0xEDB88320, register preset to all
 * ones and complemented at the end. Taking and returning the complemented
 * value makes calls chain: crc(crc(0, a), b) == crc(0, a b). Eight bytes a
 * step through eight tables (the same value as byte by byte: the CRC is
 * linear, each table a byte's contribution shifted by the bytes after
 * it), the rest byte by byte. */
uint32_t pnmf_crc32(uint32_t crc, const void *data, size_t size)
{
    const uint8_t *p = data;
    crc = ~crc;
    if (size >= 64) {
        pthread_once(&crc_slice_once, crc_slice_init);
        const uint32_t (*t)[256] = (const uint32_t (*)[256])crc_slice;
        for (; size >= 8; size -= 8, p += 8) {
            const uint32_t a = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
            const uint32_t b = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24;
            crc = t[7][a & 0xff] ^ t[6][a >> 8 & 0xff] ^ t[5][a >> 16 & 0xff] ^ t[4][a >> 24] ^ t[3][b & 0xff] ^
                  t[2][b >> 8 & 0xff] ^ t[1][b >> 16 & 0xff] ^ t[0][b >> 24];
        }
    }
    while (size--) crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

/* The largest decompressed payload a window of `frames` frames may have. */
static uint64_t payload_bound(const PnmfHeader *h, uint32_t frames)
{
    const uint64_t pixels = h->shift_model == 2 ? (uint64_t)h->canvas_width * h->canvas_height
                                                : (uint64_t)h->width * h->height;
    const uint64_t b = PAYLOAD_SLACK + PAYLOAD_PER_PIXEL * pixels * ((uint64_t)h->components + frames);
    return b < PNMF_MAX_PAYLOAD ? b : PNMF_MAX_PAYLOAD;
}

/* Header fields other than the versions: zero or out-of-range values are
 * corrupt, sensible values over a limit are PNMF_ERR_LIMIT. */
static int header_check(const PnmfHeader *h, char *err, size_t errlen)
{
    if (!h->width || !h->height) {
        pnmf_set_err(err, errlen, "zero frame size %ux%u", h->width, h->height);
        return PNMF_ERR_CORRUPT;
    }
    if (h->width > PNMF_MAX_DIM || h->height > PNMF_MAX_DIM ||
        (uint64_t)h->width * h->height > PNMF_MAX_PIXELS) {
        pnmf_set_err(err, errlen, "frame size %ux%u over the limit (%d per side, %d pixels)",
                     h->width, h->height, PNMF_MAX_DIM, PNMF_MAX_PIXELS);
        return PNMF_ERR_LIMIT;
    }
    if (!h->fps_num || !h->fps_den) {
        pnmf_set_err(err, errlen, "bad frame rate %u/%u", h->fps_num, h->fps_den);
        return PNMF_ERR_CORRUPT;
    }
    if (h->frame_count > PNMF_MAX_FRAMES) {
        pnmf_set_err(err, errlen, "frame count %u over the limit %d", h->frame_count,
                     PNMF_MAX_FRAMES);
        return PNMF_ERR_LIMIT;
    }
    if (!h->window) {
        pnmf_set_err(err, errlen, "zero window length");
        return PNMF_ERR_CORRUPT;
    }
    if (h->window > PNMF_MAX_WINDOW) {
        pnmf_set_err(err, errlen, "window length %u over the limit %d", h->window,
                     PNMF_MAX_WINDOW);
        return PNMF_ERR_LIMIT;
    }
    if (!h->components) {
        pnmf_set_err(err, errlen, "zero components");
        return PNMF_ERR_CORRUPT;
    }
    if (h->components > PNMF_MAX_COMPONENTS) {
        pnmf_set_err(err, errlen, "%u components over the limit %d", h->components,
                     PNMF_MAX_COMPONENTS);
        return PNMF_ERR_LIMIT;
    }
    if (h->shift_model > 2) {
        pnmf_set_err(err, errlen, "unknown shift model %u", h->shift_model);
        return PNMF_ERR_CORRUPT;
    }
    if (h->shift_model != 2 && (h->canvas_height || h->canvas_width)) {
        pnmf_set_err(err, errlen, "a canvas size without the canvas model");
        return PNMF_ERR_CORRUPT;
    }
    if (h->shift_model == 2) {
        if (h->canvas_height < h->height || h->canvas_width < h->width) {
            pnmf_set_err(err, errlen, "canvas %ux%u smaller than the %ux%u frame", h->canvas_width,
                         h->canvas_height, h->width, h->height);
            return PNMF_ERR_CORRUPT;
        }
        if (h->canvas_height > 2 * PNMF_MAX_DIM || h->canvas_width > 2 * PNMF_MAX_DIM ||
            (uint64_t)h->canvas_height * h->canvas_width > PNMF_MAX_CANVAS) {
            pnmf_set_err(err, errlen, "canvas %ux%u over the limit", h->canvas_width, h->canvas_height);
            return PNMF_ERR_LIMIT;
        }
    }
    if (h->w_step < 1 || h->w_step > 64 || h->r_step < 1 || h->r_step > 64) {
        pnmf_set_err(err, errlen, "quantizer steps %u and %u outside 1..64", h->w_step, h->r_step);
        return PNMF_ERR_CORRUPT;
    }
    if (h->half > 1) {
        pnmf_set_err(err, errlen, "unknown coded size %u", h->half);
        return PNMF_ERR_CORRUPT;
    }
    if (h->half && (h->shift_model == 2 || h->min_reader_version < PNMF_MIN_READER_V17)) {
        pnmf_set_err(err, errlen, h->shift_model == 2 ? "half size with the canvas model"
                                                       : "half size in a file for readers before version 17");
        return PNMF_ERR_CORRUPT;
    }
    if (h->color_range > 2) {
        pnmf_set_err(err, errlen, "unknown colour range %u", h->color_range);
        return PNMF_ERR_CORRUPT;
    }
    if (!h->tb_num != !h->tb_den || h->tb_num > PNMF_MAX_TIME_BASE || h->tb_den > PNMF_MAX_TIME_BASE) {
        pnmf_set_err(err, errlen, "bad time base %u/%u", h->tb_num, h->tb_den);
        return PNMF_ERR_CORRUPT;
    }
    return 0;
}

uint64_t pnmf_container_nominal_duration(const PnmfHeader *h)
{
    if (!h->tb_num || !h->fps_num) return 1;
    /* fps_den / fps_num seconds in units of tb_num / tb_den: at most 2^62 */
    const uint64_t num = (uint64_t)h->fps_den * h->tb_den, den = (uint64_t)h->fps_num * h->tb_num;
    const uint64_t d = (num + den / 2) / den;
    return d < 1 ? 1 : d > PNMF_MAX_DURATION ? PNMF_MAX_DURATION : d;
}

/* The header, CRC included (HEADER_SIZE_V8 bytes, with the extension). */
static void header_pack(uint8_t *b, const PnmfHeader *h)
{
    memset(b, 0, HEADER_SIZE_V8);
    memcpy(b + HDR_MAGIC, header_magic, sizeof(header_magic));
    pnmf_wl16(b + HDR_WRITER_VERSION, h->writer_version);
    pnmf_wl16(b + HDR_MIN_READER, h->min_reader_version);
    pnmf_wl16(b + HDR_SIZE, HEADER_SIZE_V8);
    pnmf_wl32(b + HDR_WIDTH, h->width);
    pnmf_wl32(b + HDR_HEIGHT, h->height);
    pnmf_wl32(b + HDR_FPS_NUM, h->fps_num);
    pnmf_wl32(b + HDR_FPS_DEN, h->fps_den);
    pnmf_wl32(b + HDR_FRAME_COUNT, h->frame_count);
    pnmf_wl16(b + HDR_WINDOW, h->window);
    pnmf_wl16(b + HDR_COMPONENTS, h->components);
    b[HDR_SHIFT_MODEL] = h->shift_model;
    b[HDR_QUALITY] = h->quality;
    pnmf_wl16(b + HDR_W_STEP, h->w_step);
    pnmf_wl16(b + HDR_R_STEP, h->r_step);
    pnmf_wl32(b + HDR_CANVAS_H, h->canvas_height);
    pnmf_wl32(b + HDR_CANVAS_W, h->canvas_width);
    pnmf_wl16(b + HDR_HALF, h->half);
    b[HDR_RANGE] = h->color_range;
    b[HDR_PRIMARIES] = h->color_primaries;
    b[HDR_TRC] = h->color_trc;
    b[HDR_MATRIX] = h->colorspace;
    pnmf_wl32(b + HDR_TB_NUM, h->tb_num);
    pnmf_wl32(b + HDR_TB_DEN, h->tb_den);
    pnmf_wl32(b + HEADER_SIZE_V8 - 4, pnmf_crc32(0, b, HEADER_SIZE_V8 - 4));
}

static void header_unpack(PnmfHeader *h, const uint8_t *b)
{
    memset(h, 0, sizeof(*h));
    h->writer_version = (uint16_t)pnmf_rl16(b + HDR_WRITER_VERSION);
    h->min_reader_version = (uint16_t)pnmf_rl16(b + HDR_MIN_READER);
    h->width = pnmf_rl32(b + HDR_WIDTH);
    h->height = pnmf_rl32(b + HDR_HEIGHT);
    h->fps_num = pnmf_rl32(b + HDR_FPS_NUM);
    h->fps_den = pnmf_rl32(b + HDR_FPS_DEN);
    h->frame_count = pnmf_rl32(b + HDR_FRAME_COUNT);
    h->window = (uint16_t)pnmf_rl16(b + HDR_WINDOW);
    h->components = (uint16_t)pnmf_rl16(b + HDR_COMPONENTS);
    h->shift_model = b[HDR_SHIFT_MODEL];
    h->quality = b[HDR_QUALITY];
    h->w_step = (uint16_t)pnmf_rl16(b + HDR_W_STEP);
    h->r_step = (uint16_t)pnmf_rl16(b + HDR_R_STEP);
    h->canvas_height = pnmf_rl32(b + HDR_CANVAS_H);
    h->canvas_width = pnmf_rl32(b + HDR_CANVAS_W);
    h->half = pnmf_rl16(b + HDR_HALF) > 255 ? 255 : (uint8_t)pnmf_rl16(b + HDR_HALF);
    h->color_primaries = h->color_trc = h->colorspace = 2; /* unspecified, until the extension says */
}

/* Version 8's extension, b[HDR_FIXED .. HDR_EXT_END). */
static int header_unpack_ext(PnmfHeader *h, const uint8_t *b, char *err, size_t errlen)
{
    h->color_range = b[HDR_RANGE];
    h->color_primaries = b[HDR_PRIMARIES];
    h->color_trc = b[HDR_TRC];
    h->colorspace = b[HDR_MATRIX];
    h->tb_num = pnmf_rl32(b + HDR_TB_NUM);
    h->tb_den = pnmf_rl32(b + HDR_TB_DEN);
    if (pnmf_rl32(b + HDR_RESERVED3)) {
        pnmf_set_err(err, errlen, "reserved header bytes are not zero");
        return PNMF_ERR_CORRUPT;
    }
    return 0;
}

static void entry_pack(uint8_t *b, uint64_t offset, uint32_t first_frame, uint32_t frame_count)
{
    pnmf_wl64(b, offset);
    pnmf_wl32(b + 8, first_frame);
    pnmf_wl32(b + 12, frame_count);
}

/* ---- writer ---- */

/* The zstd frame pick_coding() made for a set of codings of the next
 * window, kept so that writing the set the encoder priced last does not
 * compress it again at the writer's level (the slowest step of a step
 * search's last pass). A memo holds copies of the codings, so a hit is an
 * exact match of every input of the pick; writing a window forgets them
 * all, as the next window's prefix changes. */
#define PICK_MEMOS 4 /* the sets priced for one window that stay remembered */
typedef struct PickMemo {
    uint8_t *copy;        /* the codings first..n-1 one after another; NULL: unused */
    size_t sizes[PNMF_MAX_CODINGS];
    int n, first, cont, pick;
    uint64_t bound;
    uint8_t *z;           /* the chosen coding's zstd frame */
    size_t zsize;
    unsigned used;        /* writer's memo_clock when last stored or found */
} PickMemo;

struct PnmfContainerWriter {
    PnmfIO io;
    int64_t base;         /* where the container starts in the stream */
    PnmfHeader h;
    int level;
    uint64_t pos;         /* bytes written */
    uint32_t next_frame;
    PnmfIndexEntry *index;
    size_t nindex, index_cap;
    int error;            /* sticky: the first failure */
    int finished;
    uint8_t *prev;        /* the previous window's payload (zstd prefix) */
    size_t prev_size;
    int continues_next;   /* the next window continues the previous one */
    int lossless_next;    /* the next window's codings are a lossless window's (range-coded levels) */
    /* Frame times (a timed writer): the durations of the frames not yet
     * written, oldest first, and the time of the next window's first frame. */
    uint32_t *dq;
    size_t dq_n, dq_cap;
    uint64_t time_next;
    PickMemo memo[PICK_MEMOS];
    unsigned memo_clock;
    /* the memos and their clock: the encoder prices two codings at once
     * on two threads (enc_rate.c), each through
     * pnmf_container_window_bytes() */
    pthread_mutex_t memo_lock;
};

static int writer_put(PnmfContainerWriter *w, const void *p, size_t n, char *err, size_t errlen)
{
    if (n && w->io.write(w->io.opaque, p, n) < 0) {
        pnmf_set_err(err, errlen, "write error");
        return PNMF_ERR_IO;
    }
    w->pos += n;
    return 0;
}

/* One chunk whose payload is head (head_size bytes) then body. */
static int writer_chunk(PnmfContainerWriter *w, uint32_t type, const uint8_t *head,
                        size_t head_size, const uint8_t *body, size_t body_size,
                        char *err, size_t errlen)
{
    if (body_size > PNMF_MAX_CHUNK - head_size) {
        pnmf_set_err(err, errlen, "chunk of %zu bytes over the limit %u",
                     head_size + body_size, PNMF_MAX_CHUNK);
        return PNMF_ERR_LIMIT;
    }
    uint8_t ch[CHUNK_HEAD], crc[CHUNK_CRC];
    pnmf_wl32(ch, type);
    pnmf_wl32(ch + 4, (uint32_t)(head_size + body_size));
    uint32_t c = pnmf_crc32(0, ch, sizeof(ch));
    c = pnmf_crc32(c, head, head_size);
    c = pnmf_crc32(c, body, body_size);
    pnmf_wl32(crc, c);
    PNMF_CHECK(writer_put(w, ch, sizeof(ch), err, errlen));
    PNMF_CHECK(writer_put(w, head, head_size, err, errlen));
    PNMF_CHECK(writer_put(w, body, body_size, err, errlen));
    return writer_put(w, crc, sizeof(crc), err, errlen);
}

int pnmf_container_writer_open_io(PnmfContainerWriter **out, const PnmfIO *io, const PnmfHeader *h,
                               int zstd_level, char *err, size_t errlen)
{
    if (!out || !io || !io->write || !h) {
        pnmf_set_err(err, errlen, "null argument");
        return PNMF_ERR_ARG;
    }
    *out = NULL;
    /* Version 2 changed the payload layout, so a reader needs version 2. */
    PnmfHeader hc = *h;
    hc.writer_version = PNMF_FORMAT_VERSION;
    /* a file whose windows may use a newer feature (pnmf-enc -q 0's sample
     * contexts, format 9) says so; any other needs a v8 reader */
    hc.min_reader_version = h->min_reader_version > PNMF_MIN_READER_WRITTEN && h->min_reader_version <= PNMF_FORMAT_VERSION
                                ? h->min_reader_version
                                : PNMF_MIN_READER_WRITTEN;
    /* frames coded at half size need a reader of version 17 */
    if (hc.half && hc.min_reader_version < PNMF_MIN_READER_V17) hc.min_reader_version = PNMF_MIN_READER_V17;
    /* H.273's 0 (reserved, or the identity matrix of RGB) means nothing
     * for a luma-only stream: unspecified, 2 */
    if (!hc.color_primaries) hc.color_primaries = 2;
    if (!hc.color_trc) hc.color_trc = 2;
    if (!hc.colorspace) hc.colorspace = 2;
    if (header_check(&hc, err, errlen) < 0) return PNMF_ERR_ARG;
    const int64_t base = pnmf_io_tell(io);
    if (base < 0) {
        pnmf_set_err(err, errlen, "output is not seekable");
        return PNMF_ERR_IO;
    }
    PnmfContainerWriter *w = pnmf_calloc(1, sizeof(*w));
    if (!w) {
        pnmf_set_err(err, errlen, "out of memory");
        return PNMF_ERR_NOMEM;
    }
    if (pthread_mutex_init(&w->memo_lock, NULL)) {
        pnmf_free(w);
        pnmf_set_err(err, errlen, "out of memory");
        return PNMF_ERR_NOMEM;
    }
    w->io = *io;
    w->base = base;
    w->h = hc;
    w->level = zstd_level;
    uint8_t b[HEADER_SIZE_V8];
    header_pack(b, &w->h);
    const int ret = writer_put(w, b, sizeof(b), err, errlen);
    if (ret < 0) {
        pthread_mutex_destroy(&w->memo_lock);
        pnmf_free(w);
        return ret;
    }
    *out = w;
    return 0;
}

/* The size of payload compressed at level as the window would be (with
 * the previous payload as a prefix when it continues). Codings of a
 * window are first ranked at RANK_LEVEL; those within RANK_MARGIN of the
 * smallest there are compressed at the writer's level. On the -k 0
 * ladders of samples/devset (60 frames, -q 16..48): the same files as
 * compressing every coding at level 19, in 12 % less time (a margin of
 * 1.10 missed the best coding in 2 files of 25, by 0.3 and 1.1 %). */
#define RANK_LEVEL 3
#define RANK_MARGIN 1.25
static int compressed_size(const PnmfContainerWriter *w, int cont, const uint8_t *payload, size_t size, int level,
                           size_t *out)
{
    uint8_t *z = NULL;
    const int ret = cont ? pnmf_entropy_compress_prefix(payload, size, w->prev, w->prev_size, level, &z, out)
                         : pnmf_entropy_compress(payload, size, level, &z, out);
    pnmf_free(z);
    return ret;
}

/* Of the codings first..n-1 of a window within bound, the one whose
 * compressed chunk is the smallest (the first on a tie): each compressed at
 * a fast level first, and only those within RANK_MARGIN of the smallest
 * there again at the writer's level (light: pnmf_entropy_compress_probed()'s).
 * *z is its zstd frame. A price (price 1: a size for the rate search, not
 * a window to write) of a set with a coding over PNMF_PRICE_BIG_SIZE bytes
 * is the smallest size at RANK_LEVEL, with no frame (*z NULL):
 * level 19 takes about a second per megabyte of compressible payload, and
 * a step search prices many sets per window. */
static int pick_coding(const PnmfContainerWriter *w, int cont, const uint8_t *const *payloads, const size_t *sizes,
                       int n, int first, uint64_t bound, int light, int price, uint8_t **pz, size_t *pzsize,
                       int *ppick)
{
    uint8_t *z = NULL;
    size_t zsize = 0;
    int ret = 0, pick = first, cheap = 0;
    int cand[PNMF_MAX_CODINGS], ncand = 0;
    if (price && w->level > RANK_LEVEL)
        for (int a = first; a < n; a++)
            if (sizes[a] <= bound && sizes[a] > PNMF_PRICE_BIG_SIZE) cheap = 1;
    if ((n - first > 1 || cheap) && w->level > RANK_LEVEL) {
        size_t fast[PNMF_MAX_CODINGS] = { 0 }, least = SIZE_MAX;
        for (int a = first; ret >= 0 && a < n; a++) {
            if (sizes[a] > bound) continue;
            ret = compressed_size(w, cont, payloads[a], sizes[a], RANK_LEVEL, &fast[a]);
            if (ret >= 0 && fast[a] < least) least = fast[a], pick = a;
        }
        if (cheap) {
            *pz = NULL, *pzsize = ret >= 0 ? least : 0, *ppick = pick;
            return ret;
        }
        pick = first;
        for (int a = first; ret >= 0 && a < n; a++)
            if (fast[a] && (double)fast[a] <= RANK_MARGIN * (double)least) cand[ncand++] = a;
    } else {
        for (int a = first; a < n; a++)
            if (a == first || sizes[a] <= bound) cand[ncand++] = a;
    }
    for (int c = 0; ret >= 0 && c < ncand; c++) {
        const int a = cand[c];
        uint8_t *za = NULL;
        size_t zasize = 0;
        ret = pnmf_entropy_compress_probed(payloads[a], sizes[a], cont ? w->prev : NULL, cont ? w->prev_size : 0,
                                           w->level, light, &za, &zasize);
        if (ret >= 0 && (!z || zasize < zsize)) {
            pnmf_free(z);
            z = za, zsize = zasize, pick = a;
        } else {
            pnmf_free(za);
        }
    }
    if (ret < 0) {
        pnmf_free(z);
        z = NULL;
    }
    *pz = z, *pzsize = zsize, *ppick = pick;
    return ret;
}

/* LEB128, as the window payload codes its values; returns the bytes. */
static size_t put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* The 'TIME' chunk of the window of n frames at first_frame: its first
 * frame's time, then its durations as runs (count, duration). */
static int write_time(PnmfContainerWriter *w, uint32_t first_frame, uint64_t start, const uint32_t *dur, uint32_t n,
                      char *err, size_t errlen)
{
    uint8_t *p = pnmf_malloc(TIME_HEAD + (size_t)n * 15);
    if (!p) {
        pnmf_set_err(err, errlen, "out of memory");
        return PNMF_ERR_NOMEM;
    }
    pnmf_wl32(p, first_frame);
    pnmf_wl64(p + 4, start);
    size_t len = TIME_HEAD;
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i + 1;
        while (j < n && dur[j] == dur[i]) j++;
        len += put_varint(p + len, j - i);
        len += put_varint(p + len, dur[i]);
        i = j;
    }
    const int ret = writer_chunk(w, PNMF_CHUNK_TIME, p, len, NULL, 0, err, errlen);
    pnmf_free(p);
    return ret;
}

/* The time after n durations from start, or an error past PNMF_MAX_TIME. */
static int time_after(uint64_t start, const uint32_t *dur, uint32_t n, uint64_t *end, char *err, size_t errlen)
{
    uint64_t t = start;
    for (uint32_t i = 0; i < n; i++) t += dur[i]; /* start < 2^62, n * 2^32 < 2^43 */
    if (start > PNMF_MAX_TIME || t > PNMF_MAX_TIME) {
        pnmf_set_err(err, errlen, "frame times past 2^62");
        return PNMF_ERR_LIMIT;
    }
    *end = t;
    return 0;
}

int pnmf_container_writer_add_duration(PnmfContainerWriter *w, uint64_t duration)
{
    if (!w || !w->h.tb_num || duration < 1 || duration > PNMF_MAX_DURATION) return PNMF_ERR_ARG;
    if (w->dq_n == w->dq_cap) {
        const size_t cap = w->dq_cap ? 2 * w->dq_cap : 256;
        uint32_t *q = pnmf_realloc(w->dq, cap * sizeof(*q));
        if (!q) return PNMF_ERR_NOMEM;
        w->dq = q, w->dq_cap = cap;
    }
    w->dq[w->dq_n++] = (uint32_t)duration;
    return 0;
}

int pnmf_container_writer_set_time_start(PnmfContainerWriter *w, uint64_t start)
{
    if (!w || w->nindex || start > PNMF_MAX_TIME) return PNMF_ERR_ARG;
    w->time_next = start;
    return 0;
}

/* Room for one more index entry. */
static int index_reserve(PnmfContainerWriter *w)
{
    if (w->nindex < w->index_cap) return 0;
    const size_t ncap = w->index_cap ? 2 * w->index_cap : 64;
    PnmfIndexEntry *ni = pnmf_malloc_array(ncap, sizeof(*ni));
    if (!ni) return PNMF_ERR_NOMEM;
    if (w->nindex) memcpy(ni, w->index, w->nindex * sizeof(*ni));
    pnmf_free(w->index);
    w->index = ni;
    w->index_cap = ncap;
    return 0;
}

static void memo_clear(PickMemo *m)
{
    pnmf_free(m->copy);
    pnmf_free(m->z);
    memset(m, 0, sizeof(*m));
}

static void memos_clear(PnmfContainerWriter *w)
{
    for (int i = 0; i < PICK_MEMOS; i++) memo_clear(&w->memo[i]);
}

/* The memo of exactly these codings of the next window, or NULL. */
static PickMemo *memo_find(PnmfContainerWriter *w, int cont, const uint8_t *const *payloads, const size_t *sizes,
                           int n, int first, uint64_t bound)
{
    for (int i = 0; i < PICK_MEMOS; i++) {
        PickMemo *m = &w->memo[i];
        if (!m->copy || m->n != n || m->first != first || m->cont != cont || m->bound != bound) continue;
        int same = 1;
        size_t off = 0;
        for (int a = first; same && a < n; a++) {
            same = m->sizes[a] == sizes[a] && (!sizes[a] || !memcmp(m->copy + off, payloads[a], sizes[a]));
            off += sizes[a];
        }
        if (same) {
            m->used = ++w->memo_clock;
            return m;
        }
    }
    return NULL;
}

/* Remember pick_coding()'s result z (taken over: freed here when it
 * cannot be kept) in the least recently used memo. */
static void memo_store(PnmfContainerWriter *w, int cont, const uint8_t *const *payloads, const size_t *sizes,
                       int n, int first, uint64_t bound, uint8_t *z, size_t zsize, int pick)
{
    PickMemo *m = &w->memo[0];
    for (int i = 1; i < PICK_MEMOS; i++)
        if (w->memo[i].used < m->used) m = &w->memo[i];
    memo_clear(m);
    size_t total = 1;
    for (int a = first; a < n; a++) total += sizes[a];
    m->copy = pnmf_malloc(total);
    if (!m->copy) {
        pnmf_free(z);
        return;
    }
    size_t off = 0;
    for (int a = first; a < n; a++) {
        if (sizes[a]) memcpy(m->copy + off, payloads[a], sizes[a]);
        m->sizes[a] = sizes[a];
        off += sizes[a];
    }
    m->n = n, m->first = first, m->cont = cont, m->bound = bound, m->pick = pick;
    m->z = z, m->zsize = zsize;
    m->used = ++w->memo_clock;
}

/* Writes the window's payload: of the n codings of one window in
 * payloads[] (n >= 1), the one whose compressed chunk is the smallest
 * (the first on a tie); *chosen says which. */
static int write_window(PnmfContainerWriter *w, uint32_t first_frame, uint32_t frame_count,
                        const uint8_t *const *payloads, const size_t *sizes, int n, int *chosen, char *err,
                        size_t errlen)
{
    if (chosen) *chosen = 0;
    const uint8_t *payload = payloads[0];
    size_t size = sizes[0];
    for (int a = 1; a < n; a++)
        if (!payloads[a] && sizes[a]) payload = NULL, size = 1; /* refused below */
    if (w->finished || (!payload && size)) {
        pnmf_set_err(err, errlen, w->finished ? "writer already finished" : "null payload");
        return PNMF_ERR_ARG;
    }
    if (first_frame != w->next_frame) {
        pnmf_set_err(err, errlen, "window starts at frame %u, expected %u", first_frame,
                     w->next_frame);
        return PNMF_ERR_ARG;
    }
    if (!frame_count || frame_count > w->h.window) {
        pnmf_set_err(err, errlen, "window of %u frames (window length %u)", frame_count,
                     w->h.window);
        return PNMF_ERR_ARG;
    }
    if ((uint64_t)first_frame + frame_count > PNMF_MAX_FRAMES) {
        pnmf_set_err(err, errlen, "more than %d frames", PNMF_MAX_FRAMES);
        return PNMF_ERR_LIMIT;
    }
    const uint64_t bound = payload_bound(&w->h, frame_count);
    int first = 0; /* the first coding within the bound */
    while (first < n - 1 && sizes[first] > bound) first++;
    payload = payloads[first], size = sizes[first];
    if (size > bound) {
        pnmf_set_err(err, errlen, "window payload of %zu bytes over the limit %llu", size,
                     (unsigned long long)bound);
        return PNMF_ERR_LIMIT;
    }
    if (index_reserve(w) < 0) goto nomem;
    if (w->continues_next && !w->nindex) {
        pnmf_set_err(err, errlen, "the first window cannot continue another");
        return PNMF_ERR_ARG;
    }
    const int cont = w->continues_next;
    uint8_t *z = NULL;
    size_t zsize = 0;
    int pick = first, ret = 0;
    PickMemo *m = memo_find(w, cont, payloads, sizes, n, first, bound);
    if (m) {
        z = m->z, zsize = m->zsize, pick = m->pick;
        m->z = NULL; /* taken: memos_clear() below frees the rest */
    } else {
        /* a lossless window's range-coded payloads: the double-fast
         * probe alone (PNMF_ZSTD_LIGHT_LOSSLESS) */
        ret = pick_coding(w, cont, payloads, sizes, n, first, bound, !w->lossless_next || PNMF_ZSTD_LIGHT_LOSSLESS, 0,
                          &z, &zsize, &pick);
    }
    /* the next window's prefix is this payload: no memo holds for it */
    memos_clear(w);
    w->lossless_next = 0;
    payload = payloads[pick], size = sizes[pick];
    if (chosen) *chosen = pick;
    if (ret == PNMF_ERR_NOMEM) {
        pnmf_free(z);
        goto nomem;
    }
    if (ret < 0) {
        pnmf_set_err(err, errlen, "zstd compression failed (level %d)", w->level);
        return ret;
    }
    uint64_t time_end = 0;
    if (w->h.tb_num) {
        if (w->dq_n < frame_count) {
            pnmf_free(z);
            pnmf_set_err(err, errlen, "durations for %zu frames, the window has %u", w->dq_n, frame_count);
            return PNMF_ERR_ARG;
        }
        ret = time_after(w->time_next, w->dq, frame_count, &time_end, err, errlen);
        if (ret >= 0) ret = write_time(w, first_frame, w->time_next, w->dq, frame_count, err, errlen);
        if (ret < 0) {
            pnmf_free(z);
            return ret;
        }
        memmove(w->dq, w->dq + frame_count, (w->dq_n - frame_count) * sizeof(*w->dq));
        w->dq_n -= frame_count;
        w->time_next = time_end;
    }
    uint8_t head[WIND_HEAD];
    pnmf_wl32(head, first_frame);
    pnmf_wl32(head + 4, frame_count | (cont ? WIND_CONTINUES : 0));
    const uint64_t offset = w->pos;
    ret = writer_chunk(w, PNMF_CHUNK_WINDOW, head, sizeof(head), z, zsize, err, errlen);
    pnmf_free(z);
    if (ret < 0) return ret;
    /* kept: the next window may be built on it */
    uint8_t *keep = pnmf_realloc(w->prev, size ? size : 1);
    if (!keep) goto nomem;
    if (size) memcpy(keep, payload, size);
    w->prev = keep, w->prev_size = size;
    w->continues_next = 0;
    w->index[w->nindex].offset = offset;
    w->index[w->nindex].first_frame = first_frame;
    w->index[w->nindex].frame_count = frame_count;
    w->index[w->nindex].continues = cont;
    w->nindex++;
    w->next_frame += frame_count;
    return 0;
nomem:
    pnmf_set_err(err, errlen, "out of memory");
    return PNMF_ERR_NOMEM;
}

int pnmf_container_write_window(PnmfContainerWriter *w, uint32_t first_frame,
                                uint32_t frame_count, const uint8_t *payload, size_t size,
                                char *err, size_t errlen)
{
    return pnmf_container_write_window_best(w, first_frame, frame_count, &payload, &size, 1, NULL, err, errlen);
}

int pnmf_container_window_bytes(PnmfContainerWriter *w, uint32_t frame_count, const uint8_t *const *payloads,
                                const size_t *sizes, int n, size_t *bytes)
{
    *bytes = SIZE_MAX;
    if (!w || n < 1 || n > PNMF_MAX_CODINGS || !payloads || !sizes || !frame_count || frame_count > w->h.window)
        return PNMF_ERR_ARG;
    const uint64_t bound = payload_bound(&w->h, frame_count);
    int first = 0;
    while (first < n - 1 && sizes[first] > bound) first++;
    if (sizes[first] > bound) return 0;
    /* the memos locked, the compression not: two callers compress at once */
    pthread_mutex_lock(&w->memo_lock);
    const PickMemo *m = memo_find(w, w->continues_next, payloads, sizes, n, first, bound);
    if (m) *bytes = m->zsize;
    pthread_mutex_unlock(&w->memo_lock);
    if (m) return 0;
    uint8_t *z = NULL;
    size_t zsize = 0;
    int pick = first;
    const int ret = pick_coding(w, w->continues_next, payloads, sizes, n, first, bound, 1, 1, &z, &zsize, &pick);
    if (ret >= 0 && !z) {
        *bytes = zsize; /* a big set's price, no frame: the write compresses the set again */
    } else if (ret >= 0) {
        *bytes = zsize;
        pthread_mutex_lock(&w->memo_lock);
        memo_store(w, w->continues_next, payloads, sizes, n, first, bound, z, zsize, pick);
        pthread_mutex_unlock(&w->memo_lock);
    } else {
        pnmf_free(z);
    }
    return ret;
}

int pnmf_container_write_window_best(PnmfContainerWriter *w, uint32_t first_frame, uint32_t frame_count,
                                     const uint8_t *const *payloads, const size_t *sizes, int n, int *chosen,
                                     char *err, size_t errlen)
{
    if (!w) {
        pnmf_set_err(err, errlen, "null writer");
        return PNMF_ERR_ARG;
    }
    if (w->error) {
        pnmf_set_err(err, errlen, "writer failed earlier");
        return w->error;
    }
    if (n < 1 || n > PNMF_MAX_CODINGS || !payloads || !sizes) {
        pnmf_set_err(err, errlen, "%d codings of a window (1..%d)", n, PNMF_MAX_CODINGS);
        return PNMF_ERR_ARG;
    }
    const int ret = write_window(w, first_frame, frame_count, payloads, sizes, n, chosen, err, errlen);
    /* Bad arguments leave the file as it was; anything else may not. */
    if (ret < 0 && ret != PNMF_ERR_ARG && ret != PNMF_ERR_LIMIT) w->error = ret;
    return ret;
}

static int writer_finish(PnmfContainerWriter *w, uint32_t frame_count, char *err, size_t errlen)
{
    if (w->finished) {
        pnmf_set_err(err, errlen, "writer already finished");
        return PNMF_ERR_ARG;
    }
    if (frame_count != w->next_frame) {
        pnmf_set_err(err, errlen, "frame count %u, but the windows hold %u frames",
                     frame_count, w->next_frame);
        return PNMF_ERR_ARG;
    }
    if (w->nindex > (PNMF_MAX_CHUNK - INDX_HEAD) / INDX_ENTRY) {
        pnmf_set_err(err, errlen, "index too large");
        return PNMF_ERR_LIMIT;
    }
    const size_t isize = INDX_HEAD + w->nindex * INDX_ENTRY;
    uint8_t *ib = pnmf_malloc(isize);
    if (!ib) {
        pnmf_set_err(err, errlen, "out of memory");
        return PNMF_ERR_NOMEM;
    }
    pnmf_wl32(ib, (uint32_t)w->nindex);
    for (size_t i = 0; i < w->nindex; i++)
        entry_pack(ib + INDX_HEAD + i * INDX_ENTRY, w->index[i].offset,
                   w->index[i].first_frame, w->index[i].frame_count | (w->index[i].continues ? WIND_CONTINUES : 0));
    const uint64_t index_offset = w->pos;
    int ret = writer_chunk(w, PNMF_CHUNK_INDEX, ib, isize, NULL, 0, err, errlen);
    pnmf_free(ib);
    w->error = ret; /* from here on, any failure leaves a broken file */
    if (ret < 0) return ret;

    uint8_t t[TRAILER_SIZE];
    pnmf_wl64(t, index_offset);
    memcpy(t + 8, trailer_magic, sizeof(trailer_magic));
    PNMF_CHECK(writer_put(w, t, sizeof(t), err, errlen));

    /* Patch the header with the final frame count. */
    w->h.frame_count = frame_count;
    uint8_t b[HEADER_SIZE_V8];
    header_pack(b, &w->h);
    if (w->io.seek(w->io.opaque, w->base, SEEK_SET) != w->base ||
        w->io.write(w->io.opaque, b, sizeof(b)) < 0 ||
        w->io.seek(w->io.opaque, w->base + (int64_t)w->pos, SEEK_SET) != w->base + (int64_t)w->pos) {
        pnmf_set_err(err, errlen, "write error");
        return PNMF_ERR_IO;
    }
    w->finished = 1;
    return 0;
}

void pnmf_container_writer_need_reader(PnmfContainerWriter *w, int version)
{
    if (w && version > w->h.min_reader_version && version <= PNMF_FORMAT_VERSION)
        w->h.min_reader_version = (uint16_t)version;
}

int pnmf_container_writer_finish(PnmfContainerWriter *w, uint32_t frame_count,
                                 char *err, size_t errlen)
{
    if (!w) {
        pnmf_set_err(err, errlen, "null writer");
        return PNMF_ERR_ARG;
    }
    if (w->error) {
        pnmf_set_err(err, errlen, "writer failed earlier");
        return w->error;
    }
    const int ret = writer_finish(w, frame_count, err, errlen);
    if (ret < 0 && w->error == 0 && ret != PNMF_ERR_ARG && ret != PNMF_ERR_LIMIT)
        w->error = ret;
    return ret;
}

uint64_t pnmf_container_writer_bytes(const PnmfContainerWriter *w)
{
    return w ? w->pos : 0;
}

const PnmfHeader *pnmf_container_writer_header(const PnmfContainerWriter *w)
{
    return w ? &w->h : NULL;
}

void pnmf_container_writer_set_continues(PnmfContainerWriter *w, int on)
{
    if (w) w->continues_next = !!on;
}

void pnmf_container_writer_set_lossless(PnmfContainerWriter *w, int on)
{
    if (w) w->lossless_next = !!on;
}

void pnmf_container_writer_close(PnmfContainerWriter **pw)
{
    if (!pw || !*pw) return;
    pnmf_free((*pw)->index);
    pnmf_free((*pw)->prev);
    pnmf_free((*pw)->dq);
    memos_clear(*pw);
    pthread_mutex_destroy(&(*pw)->memo_lock);
    pnmf_freep(pw);
}

/* ---- reader ---- */

#define SIZE_UNKNOWN UINT64_MAX

struct PnmfContainerReader {
    PnmfIO io;
    int64_t base;         /* where the container starts in the stream */
    uint64_t size;        /* container size, or SIZE_UNKNOWN (a pipe) */
    uint64_t pos;         /* offset of the next byte the stream gives */
    uint32_t header_size;
    PnmfHeader h;

    /* Sequential state. */
    uint64_t chunk_no;    /* ordinal of the next chunk, when known */
    int chunk_no_known;   /* 0 after a seek */
    int from_start;       /* every window since the header was seen */
    uint32_t next_frame;
    uint32_t expect_count;/* after a seek: the index's frame count, else 0 */
    uint32_t windows;     /* windows read since the header */
    uint8_t *seen;        /* the index entries those windows imply, packed */
    size_t seen_cap;
    int done;             /* index and trailer reached and checked */
    int error;            /* sticky until a successful seek */

    uint8_t *chunk;       /* the current chunk's payload */
    size_t chunk_cap;
    uint32_t chunk_len;   /* its length */
    int have_window;      /* chunk and payload are the window read last */
    void *dctx;           /* zstd's decompression context, kept across windows */
    uint8_t *payload;     /* the current window, decompressed */
    size_t payload_size;
    uint32_t payload_end; /* first frame after it; 0: none (after a seek) */
    int last_continues;   /* the window last read continues the one before */

    PnmfIndexEntry *index;
    uint32_t nindex;
    int index_loaded;
    uint64_t expect_offset; /* after a seek: the window chunk's offset */

    /* Frame times (a timed file): those of the 'TIME' chunk read last, for
     * the window chunk that comes next, and those of the window read last:
     * the start of each frame and the end of the last, window + 1 each. */
    int timed;
    int time_pending;
    uint32_t time_first, time_n;
    uint64_t *tp;
    uint64_t *cur_tp;
    uint32_t cur_n;
    int time_known;       /* time_next is the end of the window read before */
    uint64_t time_next;
};

/* "chunk 3" or, after a seek, "chunk at 1234". */
static const char *chunk_name(const PnmfContainerReader *r, uint64_t offset, char *buf, size_t n)
{
    if (r->chunk_no_known) snprintf(buf, n, "chunk %llu", (unsigned long long)r->chunk_no);
    else snprintf(buf, n, "chunk at %llu", (unsigned long long)offset);
    return buf;
}

static int read_exact(PnmfContainerReader *r, void *p, size_t n, const char *what,
                      char *err, size_t errlen)
{
    const ptrdiff_t got = n ? pnmf_io_read(&r->io, p, n) : 0;
    if (got < 0) {
        pnmf_set_err(err, errlen, "read error");
        return PNMF_ERR_IO;
    }
    r->pos += (size_t)got;
    if ((size_t)got == n) return 0;
    pnmf_set_err(err, errlen, "truncated %s", what);
    return PNMF_ERR_CORRUPT;
}

static int reader_seek(PnmfContainerReader *r, uint64_t offset, char *err, size_t errlen)
{
    if (!r->io.seek || r->io.seek(r->io.opaque, r->base + (int64_t)offset, SEEK_SET) != r->base + (int64_t)offset) {
        pnmf_set_err(err, errlen, "seek error");
        return PNMF_ERR_IO;
    }
    r->pos = offset;
    return 0;
}

/* The chunk buffer always has exactly the size of the bytes read into it,
 * so a parser that reads past a chunk's end reads past an allocation, which
 * AddressSanitizer reports (tests/fuzz). */
static int grow_chunk(PnmfContainerReader *r, size_t n, char *err, size_t errlen)
{
    if (n == r->chunk_cap) return 0;
    uint8_t *p = pnmf_realloc(r->chunk, n);
    if (!p) {
        pnmf_set_err(err, errlen, "out of memory");
        return PNMF_ERR_NOMEM;
    }
    r->chunk = p;
    r->chunk_cap = n;
    return 0;
}

/* Read one chunk at r->pos into r->chunk and check its CRC. The length is
 * checked against the file before anything is allocated; when the file's
 * size is unknown, the buffer grows with the data actually read, so a
 * false length in a short stream costs no more memory than the stream. */
static int read_chunk(PnmfContainerReader *r, uint32_t *type, uint32_t *len,
                      char *err, size_t errlen)
{
    char name[48];
    const uint64_t offset = r->pos;
    uint8_t ch[CHUNK_HEAD], crc[CHUNK_CRC];
    PNMF_CHECK(read_exact(r, ch, sizeof(ch), "chunk header", err, errlen));
    *type = pnmf_rl32(ch);
    *len = pnmf_rl32(ch + 4);
    chunk_name(r, offset, name, sizeof(name));
    if (r->size != SIZE_UNKNOWN &&
        (r->pos > r->size || (uint64_t)*len + CHUNK_CRC > r->size - r->pos)) {
        pnmf_set_err(err, errlen, "truncated %s: %u bytes, %llu left in the file", name, *len,
                     (unsigned long long)(r->pos > r->size ? 0 : r->size - r->pos));
        return PNMF_ERR_CORRUPT;
    }
    if (*len > PNMF_MAX_CHUNK) {
        pnmf_set_err(err, errlen, "%s: length %u over the limit %u", name, *len, PNMF_MAX_CHUNK);
        return PNMF_ERR_LIMIT;
    }
    pnmf_freep(&r->chunk);
    r->chunk_cap = 0;
    if (r->size != SIZE_UNKNOWN) {
        PNMF_CHECK(grow_chunk(r, *len, err, errlen));
        PNMF_CHECK(read_exact(r, r->chunk, *len, name, err, errlen));
    } else {
        size_t got = 0;
        while (got < *len) {
            size_t step = r->chunk_cap > (1u << 20) ? r->chunk_cap : (1u << 20);
            size_t want = *len - got < step ? *len - got : step;
            PNMF_CHECK(grow_chunk(r, got + want, err, errlen));
            PNMF_CHECK(read_exact(r, r->chunk + got, want, name, err, errlen));
            got += want;
        }
    }
    r->chunk_len = *len;
    PNMF_CHECK(read_exact(r, crc, sizeof(crc), name, err, errlen));
    const uint32_t c = pnmf_crc32(pnmf_crc32(0, ch, sizeof(ch)), r->chunk, *len);
    if (c != pnmf_rl32(crc)) {
        pnmf_set_err(err, errlen, "%s: crc mismatch", name);
        return PNMF_ERR_CORRUPT;
    }
    return 0;
}

/* Check an index payload against the header: windows in file order,
 * contiguous from frame 0, each 1..window frames, frame_count in all, each
 * chunk after the previous one and before the index chunk itself. Fills
 * entries when not NULL (room for the count the payload claims). */
static int index_check(const PnmfContainerReader *r, const uint8_t *p, uint32_t len,
                       uint64_t index_offset, PnmfIndexEntry *entries, char *err, size_t errlen)
{
    if (len < INDX_HEAD || (uint64_t)pnmf_rl32(p) * INDX_ENTRY + INDX_HEAD != len) {
        pnmf_set_err(err, errlen, "index: size does not match its count");
        return PNMF_ERR_CORRUPT;
    }
    const uint32_t n = pnmf_rl32(p);
    uint64_t min_offset = r->header_size;
    uint32_t frame = 0;
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = p + INDX_HEAD + (size_t)i * INDX_ENTRY;
        const uint64_t off = pnmf_rl64(e);
        const uint32_t first = pnmf_rl32(e + 8), raw = pnmf_rl32(e + 12), count = raw & ~WIND_CONTINUES;
        if ((raw & WIND_CONTINUES) && i == 0) {
            pnmf_set_err(err, errlen, "index entry 0: the first window continues another");
            return PNMF_ERR_CORRUPT;
        }
        if (first != frame || !count || count > r->h.window ||
            (uint64_t)first + count > r->h.frame_count) {
            pnmf_set_err(err, errlen, "index entry %u: frames %u+%u do not follow frame %u",
                         i, first, count, frame);
            return PNMF_ERR_CORRUPT;
        }
        if (off < min_offset || off > index_offset ||
            index_offset - off < CHUNK_OVERHEAD + WIND_HEAD) {
            pnmf_set_err(err, errlen, "index entry %u: offset %llu out of place", i,
                         (unsigned long long)off);
            return PNMF_ERR_CORRUPT;
        }
        if (entries) {
            entries[i].offset = off;
            entries[i].first_frame = first;
            entries[i].frame_count = count;
            entries[i].continues = !!(raw & WIND_CONTINUES);
        }
        min_offset = off + CHUNK_OVERHEAD + WIND_HEAD;
        frame += count;
    }
    if (frame != r->h.frame_count) {
        pnmf_set_err(err, errlen, "index covers %u of %u frames", frame, r->h.frame_count);
        return PNMF_ERR_CORRUPT;
    }
    return 0;
}

int pnmf_container_reader_open_io(PnmfContainerReader **out, const PnmfIO *io, char *err, size_t errlen)
{
    if (!out || !io || !io->read) {
        pnmf_set_err(err, errlen, "null argument");
        return PNMF_ERR_ARG;
    }
    *out = NULL;
    PnmfContainerReader *r = pnmf_calloc(1, sizeof(*r));
    if (!r) {
        pnmf_set_err(err, errlen, "out of memory");
        return PNMF_ERR_NOMEM;
    }
    r->io = *io;
    r->size = SIZE_UNKNOWN;
    int ret;

    /* The size, when the stream can seek; a pipe is read without it. */
    r->base = pnmf_io_tell(io);
    const int64_t end = r->base >= 0 ? io->seek(io->opaque, 0, SEEK_END) : -1;
    if (end >= 0) {
        if (end < r->base || io->seek(io->opaque, r->base, SEEK_SET) != r->base) {
            pnmf_set_err(err, errlen, "seek error");
            ret = PNMF_ERR_IO;
            goto error;
        }
        r->size = (uint64_t)(end - r->base);
    } else {
        r->base = 0;
    }

    uint8_t b[HEADER_SIZE_V8] = { 0 };
    if ((ret = read_exact(r, b, HDR_WIDTH, "header", err, errlen)) < 0) goto error;
    if (memcmp(b, header_magic, sizeof(header_magic))) {
        /* "PNMF" in place but the rest changed: a text-mode transfer. */
        const int damaged = !memcmp(b + 1, header_magic + 1, 4);
        pnmf_set_err(err, errlen, damaged ? "bad magic (text-mode transfer damage?)"
                                          : "not a pnmf file");
        ret = PNMF_ERR_CORRUPT;
        goto error;
    }
    const uint32_t hs = pnmf_rl16(b + HDR_SIZE);
    if (hs < HEADER_SIZE_V1) {
        pnmf_set_err(err, errlen, "header size %u too small", hs);
        ret = PNMF_ERR_CORRUPT;
        goto error;
    }
    /* A header longer than the file is damage, whatever its size. */
    if (r->size != SIZE_UNKNOWN && hs > r->size) {
        pnmf_set_err(err, errlen, "truncated header");
        ret = PNMF_ERR_CORRUPT;
        goto error;
    }
    if (hs > HEADER_SIZE_MAX) {
        pnmf_set_err(err, errlen, "header size %u over the limit %d", hs, HEADER_SIZE_MAX);
        ret = PNMF_ERR_LIMIT;
        goto error;
    }
    r->header_size = hs;
    if ((ret = read_exact(r, b + HDR_WIDTH, HDR_FIXED - HDR_WIDTH, "header", err, errlen)) < 0)
        goto error;
    /* The CRC covers the fixed fields and any extension a later version
     * appended; a v1 reader checks the extension and ignores it. */
    uint32_t crc = pnmf_crc32(0, b, HDR_FIXED);
    /* version 8's extension is kept, anything after it only checked */
    const uint32_t ext8 = hs - HEADER_SIZE_V1 < HDR_EXT_END - HDR_FIXED ? hs - HEADER_SIZE_V1 : HDR_EXT_END - HDR_FIXED;
    if ((ret = read_exact(r, b + HDR_FIXED, ext8, "header", err, errlen)) < 0) goto error;
    crc = pnmf_crc32(crc, b + HDR_FIXED, ext8);
    for (uint32_t left = hs - HEADER_SIZE_V1 - ext8; left;) {
        uint8_t ext[256];
        const uint32_t n = left < sizeof(ext) ? left : (uint32_t)sizeof(ext);
        if ((ret = read_exact(r, ext, n, "header", err, errlen)) < 0) goto error;
        crc = pnmf_crc32(crc, ext, n);
        left -= n;
    }
    uint8_t hcrc[4];
    if ((ret = read_exact(r, hcrc, 4, "header", err, errlen)) < 0) goto error;
    if (crc != pnmf_rl32(hcrc)) {
        pnmf_set_err(err, errlen, "header crc mismatch");
        ret = PNMF_ERR_CORRUPT;
        goto error;
    }
    header_unpack(&r->h, b);
    if (!r->h.min_reader_version || r->h.writer_version < r->h.min_reader_version) {
        pnmf_set_err(err, errlen, "bad version fields (writer %u, min reader %u)",
                     r->h.writer_version, r->h.min_reader_version);
        ret = PNMF_ERR_CORRUPT;
        goto error;
    }
    if (r->h.writer_version < PNMF_OLDEST_VERSION) {
        pnmf_set_err(err, errlen, "format version %u is too old (this reader reads %d to %d): "
                     "encode the clip again", r->h.writer_version, PNMF_OLDEST_VERSION, PNMF_READER_VERSION);
        ret = PNMF_ERR_VERSION;
        goto error;
    }
    if (r->h.min_reader_version > PNMF_READER_VERSION) {
        pnmf_set_err(err, errlen, "file needs reader version %u (this is version %d)",
                     r->h.min_reader_version, PNMF_READER_VERSION);
        ret = PNMF_ERR_VERSION;
        goto error;
    }
    int reserved = pnmf_rl16(b + HDR_RESERVED0) != 0;
    if (r->h.writer_version < 17) reserved |= pnmf_rl16(b + HDR_HALF) != 0;
    for (int i = HDR_RESERVED2; i < HDR_FIXED; i++) reserved |= b[i];
    if (reserved) {
        pnmf_set_err(err, errlen, "reserved header bytes are not zero");
        ret = PNMF_ERR_CORRUPT;
        goto error;
    }
    if (r->h.writer_version >= 8) {
        if (hs < HEADER_SIZE_V8) {
            pnmf_set_err(err, errlen, "header size %u too small for version %u", hs, r->h.writer_version);
            ret = PNMF_ERR_CORRUPT;
            goto error;
        }
        if ((ret = header_unpack_ext(&r->h, b, err, errlen)) < 0) goto error;
    }
    if ((ret = header_check(&r->h, err, errlen)) < 0) goto error;
    r->timed = r->h.tb_num != 0;
    if (r->timed && (!(r->tp = pnmf_malloc_array((size_t)r->h.window + 1, sizeof(uint64_t))) ||
                     !(r->cur_tp = pnmf_malloc_array((size_t)r->h.window + 1, sizeof(uint64_t))))) {
        pnmf_set_err(err, errlen, "out of memory");
        ret = PNMF_ERR_NOMEM;
        goto error;
    }
    if (r->size != SIZE_UNKNOWN && r->size < hs + (MIN_FILE_SIZE - HEADER_SIZE_V1)) {
        pnmf_set_err(err, errlen, "truncated file: %llu bytes", (unsigned long long)r->size);
        ret = PNMF_ERR_CORRUPT;
        goto error;
    }
    r->chunk_no_known = 1;
    r->from_start = 1;
    *out = r;
    return 0;
error:
    pnmf_free(r->tp);
    pnmf_free(r->cur_tp);
    pnmf_free(r);
    return ret;
}

const PnmfHeader *pnmf_container_reader_header(const PnmfContainerReader *r)
{
    return r ? &r->h : NULL;
}

/* At the index chunk (already read into r->chunk): the sequence is over.
 * Check that the windows covered every frame, that the index describes the
 * windows read (when reading from the start), and the trailer. */
static int read_end(PnmfContainerReader *r, uint64_t index_offset, uint32_t len,
                    char *err, size_t errlen)
{
    if (r->next_frame != r->h.frame_count) {
        pnmf_set_err(err, errlen, "index after %u of %u frames", r->next_frame,
                     r->h.frame_count);
        return PNMF_ERR_CORRUPT;
    }
    if (r->time_pending) {
        pnmf_set_err(err, errlen, "frame times after the last window");
        return PNMF_ERR_CORRUPT;
    }
    PNMF_CHECK(index_check(r, r->chunk, len, index_offset, NULL, err, errlen));
    if (r->from_start &&
        (pnmf_rl32(r->chunk) != r->windows ||
         (size_t)(len - INDX_HEAD) != (size_t)r->windows * INDX_ENTRY ||
         (r->windows && memcmp(r->chunk + INDX_HEAD, r->seen, (size_t)r->windows * INDX_ENTRY)))) {
        pnmf_set_err(err, errlen, "index does not match the windows");
        return PNMF_ERR_CORRUPT;
    }
    uint8_t t[TRAILER_SIZE];
    PNMF_CHECK(read_exact(r, t, sizeof(t), "trailer", err, errlen));
    if (memcmp(t + 8, trailer_magic, sizeof(trailer_magic)) || pnmf_rl64(t) != index_offset) {
        pnmf_set_err(err, errlen, "bad trailer");
        return PNMF_ERR_CORRUPT;
    }
    uint8_t one;
    const ptrdiff_t more = r->size != SIZE_UNKNOWN ? r->pos != r->size : pnmf_io_read(&r->io, &one, 1);
    if (more < 0) {
        pnmf_set_err(err, errlen, "read error");
        return PNMF_ERR_IO;
    }
    if (more) {
        pnmf_set_err(err, errlen, "data after the trailer");
        return PNMF_ERR_CORRUPT;
    }
    r->done = 1;
    return 0;
}

/* A varint of at most 5 bytes (a value below 2^35) at p[*pos .. len). */
static int get_varint5(const uint8_t *p, uint32_t len, uint32_t *pos, uint64_t *v)
{
    *v = 0;
    for (int i = 0; i < 5 && *pos < len; i++) {
        const uint8_t c = p[(*pos)++];
        *v |= (uint64_t)(c & 0x7f) << (7 * i);
        if (!(c & 0x80)) return 0;
    }
    return -1;
}

/* A 'TIME' chunk (in r->chunk): the times of the window chunk that comes
 * next, checked and kept in r->tp. */
static int read_time(PnmfContainerReader *r, uint32_t len, const char *name, char *err, size_t errlen)
{
    if (!r->timed) {
        pnmf_set_err(err, errlen, "%s: frame times in a file without a time base", name);
        return PNMF_ERR_CORRUPT;
    }
    if (r->time_pending) {
        pnmf_set_err(err, errlen, "%s: two sets of frame times for one window", name);
        return PNMF_ERR_CORRUPT;
    }
    if (len < TIME_HEAD) {
        pnmf_set_err(err, errlen, "%s: time chunk too short", name);
        return PNMF_ERR_CORRUPT;
    }
    const uint8_t *p = r->chunk;
    const uint32_t first = pnmf_rl32(p);
    const uint64_t start = pnmf_rl64(p + 4);
    if (first != r->next_frame) {
        pnmf_set_err(err, errlen, "%s: times of frame %u, the next window starts at frame %u", name, first,
                     r->next_frame);
        return PNMF_ERR_CORRUPT;
    }
    if (start > PNMF_MAX_TIME) {
        pnmf_set_err(err, errlen, "%s: start time past 2^62", name);
        return PNMF_ERR_CORRUPT;
    }
    uint32_t pos = TIME_HEAD, n = 0;
    r->tp[0] = start;
    while (pos < len) {
        uint64_t count, dur;
        if (get_varint5(p, len, &pos, &count) < 0 || get_varint5(p, len, &pos, &dur) < 0) {
            pnmf_set_err(err, errlen, "%s: truncated frame times", name);
            return PNMF_ERR_CORRUPT;
        }
        if (!count || count > (uint64_t)r->h.window - n || !dur || dur > PNMF_MAX_DURATION) {
            pnmf_set_err(err, errlen, "%s: a run of %llu frames of duration %llu", name, (unsigned long long)count,
                         (unsigned long long)dur);
            return PNMF_ERR_CORRUPT;
        }
        for (uint64_t c = 0; c < count; c++, n++) r->tp[n + 1] = r->tp[n] + dur;
    }
    if (r->tp[n] > PNMF_MAX_TIME) {
        pnmf_set_err(err, errlen, "%s: frame times past 2^62", name);
        return PNMF_ERR_CORRUPT;
    }
    r->time_first = first;
    r->time_n = n;
    r->time_pending = 1;
    return 0;
}

static int read_window(PnmfContainerReader *r, const uint8_t **payload, size_t *size,
                       uint32_t *first_frame, uint32_t *frame_count, char *err, size_t errlen)
{
    for (;;) {
        char name[48];
        const uint64_t offset = r->pos;
        uint32_t type, len;
        PNMF_CHECK(read_chunk(r, &type, &len, err, errlen));
        chunk_name(r, offset, name, sizeof(name));
        if (type == PNMF_CHUNK_INDEX && !r->expect_count)
            return read_end(r, offset, len, err, errlen);
        r->chunk_no++;
        if (r->expect_count &&
            (type == PNMF_CHUNK_WINDOW ? offset != r->expect_offset : offset >= r->expect_offset)) {
            pnmf_set_err(err, errlen, "%s: the index does not point at a window", name);
            return PNMF_ERR_CORRUPT;
        }
        if (type == PNMF_CHUNK_TIME && r->h.writer_version >= 8) { /* unknown before version 8 */
            PNMF_CHECK(read_time(r, len, name, err, errlen));
            continue;
        }
        if (type != PNMF_CHUNK_WINDOW) continue; /* unknown: skip */

        if (len < WIND_HEAD) {
            pnmf_set_err(err, errlen, "%s: window chunk too short", name);
            return PNMF_ERR_CORRUPT;
        }
        const uint32_t first = pnmf_rl32(r->chunk), raw = pnmf_rl32(r->chunk + 4);
        const uint32_t count = raw & ~WIND_CONTINUES;
        const int cont = !!(raw & WIND_CONTINUES);
        if (first != r->next_frame) {
            pnmf_set_err(err, errlen, "%s: window starts at frame %u, expected %u", name,
                         first, r->next_frame);
            return PNMF_ERR_CORRUPT;
        }
        if (!count || count > r->h.window || (uint64_t)first + count > r->h.frame_count ||
            (r->expect_count && count != r->expect_count)) {
            pnmf_set_err(err, errlen, "%s: bad window of %u frames at frame %u", name, count,
                         first);
            return PNMF_ERR_CORRUPT;
        }
        if (cont && (!r->payload || r->payload_end != first)) {
            pnmf_set_err(err, errlen, "%s: the window at frame %u continues the one before it, "
                         "which was not read", name, first + 1);
            return PNMF_ERR_CORRUPT;
        }
        if (r->timed) {
            if (!r->time_pending || r->time_n != count) {
                if (r->time_pending)
                    pnmf_set_err(err, errlen, "%s: times of %u frames, the window at frame %u has %u", name,
                                 r->time_n, first + 1, count);
                else
                    pnmf_set_err(err, errlen, "%s: the window at frame %u has no frame times", name, first + 1);
                return PNMF_ERR_CORRUPT;
            }
            if (r->time_known && r->tp[0] != r->time_next) {
                pnmf_set_err(err, errlen, "%s: the times at frame %u do not follow the window before", name,
                             first + 1);
                return PNMF_ERR_CORRUPT;
            }
            uint64_t *t = r->cur_tp;
            r->cur_tp = r->tp, r->tp = t;
            r->cur_n = count;
            r->time_next = r->cur_tp[count];
            r->time_known = 1;
            r->time_pending = 0;
        }
        const uint64_t bound = payload_bound(&r->h, count);
        uint8_t *prev = r->payload; /* the prefix of a continuing window */
        r->payload = NULL;
        r->payload_end = 0;
        size_t n = 0;
        const int ret = pnmf_entropy_decompress_ctx(&r->dctx, r->chunk + WIND_HEAD, len - WIND_HEAD, cont ? prev : NULL,
                                                    cont ? r->payload_size : 0, (size_t)bound, &r->payload, &n);
        pnmf_free(prev);
        if (ret < 0) {
            if (ret == PNMF_ERR_NOMEM) pnmf_set_err(err, errlen, "out of memory");
            else if (ret == PNMF_ERR_LIMIT)
                pnmf_set_err(err, errlen, "%s: payload over the limit of %llu bytes", name,
                             (unsigned long long)bound);
            else pnmf_set_err(err, errlen, "%s: bad zstd payload", name);
            return ret;
        }
        if (r->from_start) {
            /* remembered to compare with the index: 16 bytes a window,
             * bounded by the file's own size */
            const size_t need = ((size_t)r->windows + 1) * INDX_ENTRY;
            if (need > r->seen_cap) {
                const size_t cap = need < 4096 ? 4096 : 2 * need;
                uint8_t *p = pnmf_realloc(r->seen, cap);
                if (!p) {
                    pnmf_set_err(err, errlen, "out of memory");
                    return PNMF_ERR_NOMEM;
                }
                r->seen = p, r->seen_cap = cap;
            }
            entry_pack(r->seen + (size_t)r->windows * INDX_ENTRY, offset, first, raw);
            r->windows++;
        }
        r->next_frame += count;
        r->expect_count = 0;
        r->payload_size = n;
        r->payload_end = first + count;
        r->last_continues = cont;
        *payload = r->payload;
        *size = n;
        *first_frame = first;
        *frame_count = count;
        return 1;
    }
}

int pnmf_container_read_window(PnmfContainerReader *r, const uint8_t **payload,
                               size_t *size, uint32_t *first_frame,
                               uint32_t *frame_count, char *err, size_t errlen)
{
    if (!r || !payload || !size || !first_frame || !frame_count) {
        pnmf_set_err(err, errlen, "null argument");
        return PNMF_ERR_ARG;
    }
    if (r->error) {
        pnmf_set_err(err, errlen, "reader failed earlier");
        return r->error;
    }
    r->have_window = 0;
    if (r->done) return 0;
    const int ret = read_window(r, payload, size, first_frame, frame_count, err, errlen);
    if (ret < 0) r->error = ret;
    r->have_window = ret > 0;
    return ret;
}

/* Find the index through the trailer, check it and keep it. */
static int load_index(PnmfContainerReader *r, char *err, size_t errlen)
{
    uint8_t t[TRAILER_SIZE];
    PNMF_CHECK(reader_seek(r, r->size - TRAILER_SIZE, err, errlen));
    PNMF_CHECK(read_exact(r, t, sizeof(t), "trailer", err, errlen));
    const uint64_t off = pnmf_rl64(t);
    if (memcmp(t + 8, trailer_magic, sizeof(trailer_magic))) {
        pnmf_set_err(err, errlen, "bad trailer");
        return PNMF_ERR_CORRUPT;
    }
    const uint64_t end = r->size - TRAILER_SIZE;
    if (off < r->header_size || off > end || end - off < CHUNK_OVERHEAD + INDX_HEAD) {
        pnmf_set_err(err, errlen, "trailer: index offset %llu out of range",
                     (unsigned long long)off);
        return PNMF_ERR_CORRUPT;
    }
    PNMF_CHECK(reader_seek(r, off, err, errlen));
    r->chunk_no_known = 0;
    uint32_t type, len;
    PNMF_CHECK(read_chunk(r, &type, &len, err, errlen));
    if (type != PNMF_CHUNK_INDEX || r->pos != end) {
        pnmf_set_err(err, errlen, "trailer does not point at the index");
        return PNMF_ERR_CORRUPT;
    }
    /* The count is bounded by len, itself bounded by the file's size. */
    const uint32_t n = len >= INDX_HEAD ? pnmf_rl32(r->chunk) : 0;
    PnmfIndexEntry *e = NULL;
    if (len >= INDX_HEAD && (uint64_t)n * INDX_ENTRY + INDX_HEAD == len) {
        e = pnmf_malloc_array(n, sizeof(*e));
        if (!e) {
            pnmf_set_err(err, errlen, "out of memory");
            return PNMF_ERR_NOMEM;
        }
    }
    const int ret = index_check(r, r->chunk, len, off, e, err, errlen);
    if (ret < 0) {
        pnmf_free(e);
        return ret;
    }
    r->index = e;
    r->nindex = n;
    r->index_loaded = 1;
    return 0;
}

static int seek(PnmfContainerReader *r, uint32_t frame, uint32_t *first_frame,
                char *err, size_t errlen)
{
    if (!r->index_loaded) PNMF_CHECK(load_index(r, err, errlen));
    /* The last window whose first frame is <= frame holds it (the index is
     * contiguous and covers every frame). */
    uint32_t lo = 0, hi = r->nindex;
    while (hi - lo > 1) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (r->index[mid].first_frame <= frame) lo = mid;
        else hi = mid;
    }
    const PnmfIndexEntry *e = &r->index[lo];
    uint64_t from = e->offset;
    if (r->timed) {
        /* from the end of the window before: its frame times come first */
        from = r->header_size;
        if (lo > 0) {
            uint8_t ch[CHUNK_HEAD];
            PNMF_CHECK(reader_seek(r, r->index[lo - 1].offset, err, errlen));
            PNMF_CHECK(read_exact(r, ch, sizeof(ch), "chunk header", err, errlen));
            from = r->index[lo - 1].offset + CHUNK_OVERHEAD + pnmf_rl32(ch + 4);
            if (pnmf_rl32(ch) != PNMF_CHUNK_WINDOW || from > e->offset) {
                pnmf_set_err(err, errlen, "index entry %u: not a window chunk", lo - 1);
                return PNMF_ERR_CORRUPT;
            }
        }
    }
    PNMF_CHECK(reader_seek(r, from, err, errlen));
    r->expect_offset = e->offset;
    r->time_pending = 0;
    r->time_known = 0;
    r->chunk_no_known = 0;
    r->from_start = 0;
    r->next_frame = e->first_frame;
    r->expect_count = e->frame_count;
    r->payload_end = 0; /* no prefix: a continuing window cannot be read first */
    r->have_window = 0;
    r->done = 0;
    r->error = 0;
    *first_frame = e->first_frame;
    return 0;
}

int pnmf_container_seek(PnmfContainerReader *r, uint32_t frame, uint32_t *first_frame,
                        char *err, size_t errlen)
{
    if (!r || !first_frame) {
        pnmf_set_err(err, errlen, "null argument");
        return PNMF_ERR_ARG;
    }
    if (frame >= r->h.frame_count) {
        pnmf_set_err(err, errlen, "frame %u beyond the end (%u frames)", frame,
                     r->h.frame_count);
        return PNMF_ERR_ARG;
    }
    if (r->size == SIZE_UNKNOWN) {
        pnmf_set_err(err, errlen, "cannot seek: input is not seekable");
        return PNMF_ERR_IO;
    }
    const int ret = seek(r, frame, first_frame, err, errlen);
    if (ret < 0) r->error = ret; /* the position is lost until a seek succeeds */
    return ret;
}

uint32_t pnmf_container_window_times(const PnmfContainerReader *r, const uint64_t **pts)
{
    if (!r || !r->timed || !r->cur_n) return 0;
    *pts = r->cur_tp;
    return r->cur_n;
}

int pnmf_container_window_continues(const PnmfContainerReader *r)
{
    return r ? r->last_continues : 0;
}

int pnmf_container_key_frame(PnmfContainerReader *r, uint32_t frame, uint32_t *key_first, char *err,
                             size_t errlen)
{
    if (!r || !key_first) {
        pnmf_set_err(err, errlen, "null argument");
        return PNMF_ERR_ARG;
    }
    if (!r->index_loaded) {
        const int ret = load_index(r, err, errlen);
        if (ret < 0) return r->error = ret;
    }
    uint32_t lo = 0, hi = r->nindex;
    while (hi - lo > 1) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (r->index[mid].first_frame <= frame) lo = mid;
        else hi = mid;
    }
    while (lo > 0 && r->index[lo].continues) lo--; /* entry 0 never continues (index_check) */
    *key_first = r->index[lo].first_frame;
    return 0;
}

void pnmf_container_reader_close(PnmfContainerReader **pr)
{
    if (!pr || !*pr) return;
    PnmfContainerReader *r = *pr;
    pnmf_free(r->chunk);
    pnmf_free(r->payload);
    pnmf_entropy_ctx_free(&r->dctx);
    pnmf_free(r->seen);
    pnmf_free(r->index);
    pnmf_free(r->tp);
    pnmf_free(r->cur_tp);
    pnmf_freep(pr);
}

int pnmf_container_writer_open(PnmfContainerWriter **out, FILE *f, const PnmfHeader *h, int zstd_level,
                               char *err, size_t errlen)
{
    PnmfIO io;
    pnmf_io_file_writer(&io, f);
    return pnmf_container_writer_open_io(out, f ? &io : NULL, h, zstd_level, err, errlen);
}

int pnmf_container_reader_open(PnmfContainerReader **out, FILE *f, char *err, size_t errlen)
{
    PnmfIO io;
    pnmf_io_file_reader(&io, f);
    return pnmf_container_reader_open_io(out, f ? &io : NULL, err, errlen);
}

int pnmf_container_copy_window(PnmfContainerWriter *w, const PnmfContainerReader *r, char *err, size_t errlen)
{
    if (!w || !r || !r->have_window) {
        pnmf_set_err(err, errlen, !w || !r ? "null argument" : "no window read to copy");
        return PNMF_ERR_ARG;
    }
    if (w->error || w->finished) {
        pnmf_set_err(err, errlen, w->error ? "writer failed earlier" : "writer already finished");
        return w->error ? w->error : PNMF_ERR_ARG;
    }
    const uint32_t raw = pnmf_rl32(r->chunk + 4), count = raw & ~WIND_CONTINUES;
    if ((raw & WIND_CONTINUES) && !w->nindex) {
        pnmf_set_err(err, errlen, "the first window cannot continue another");
        return PNMF_ERR_ARG;
    }
    if (count > w->h.window || r->payload_size > payload_bound(&w->h, count)) {
        pnmf_set_err(err, errlen, "a window of %u frames and %zu bytes does not fit this file's header", count,
                     r->payload_size);
        return PNMF_ERR_ARG;
    }
    if ((uint64_t)w->next_frame + count > PNMF_MAX_FRAMES) {
        pnmf_set_err(err, errlen, "more than %d frames", PNMF_MAX_FRAMES);
        return PNMF_ERR_LIMIT;
    }
    if (!w->h.tb_num != !r->timed || !r->cur_n) {
        pnmf_set_err(err, errlen, w->h.tb_num ? "a window without frame times" : "a window with frame times");
        return PNMF_ERR_ARG;
    }
    uint64_t time_end = 0;
    if (w->h.tb_num) {
        /* the times go on from the windows before: the first one's start, the others' end */
        const uint64_t start = w->nindex ? w->time_next : r->cur_tp[0];
        uint32_t *dur = pnmf_malloc_array(count, sizeof(*dur));
        if (!dur) goto nomem;
        for (uint32_t i = 0; i < count; i++) dur[i] = (uint32_t)(r->cur_tp[i + 1] - r->cur_tp[i]);
        int ret = time_after(start, dur, count, &time_end, err, errlen);
        if (ret >= 0) ret = write_time(w, w->next_frame, start, dur, count, err, errlen);
        pnmf_free(dur);
        if (ret < 0) return ret == PNMF_ERR_LIMIT ? ret : (w->error = ret);
    }
    if (index_reserve(w) < 0) goto nomem;
    /* kept as the prefix of a window built on it (as write_window keeps it) */
    uint8_t *keep = pnmf_realloc(w->prev, r->payload_size ? r->payload_size : 1);
    if (!keep) goto nomem;
    if (r->payload_size) memcpy(keep, r->payload, r->payload_size);
    w->prev = keep, w->prev_size = r->payload_size;
    memos_clear(w);
    uint8_t head[WIND_HEAD];
    pnmf_wl32(head, w->next_frame);
    pnmf_wl32(head + 4, raw);
    const uint64_t offset = w->pos;
    const int ret = writer_chunk(w, PNMF_CHUNK_WINDOW, head, sizeof(head), r->chunk + WIND_HEAD,
                                 r->chunk_len - WIND_HEAD, err, errlen);
    if (ret < 0) return w->error = ret;
    w->continues_next = 0;
    w->index[w->nindex].offset = offset;
    w->index[w->nindex].first_frame = w->next_frame;
    w->index[w->nindex].frame_count = count;
    w->index[w->nindex].continues = !!(raw & WIND_CONTINUES);
    w->nindex++;
    w->next_frame += count;
    if (w->h.tb_num) w->time_next = time_end;
    return 0;
nomem:
    pnmf_set_err(err, errlen, "out of memory");
    return PNMF_ERR_NOMEM;
}
