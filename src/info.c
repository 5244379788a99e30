/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inspection (include/pnmf/info.h): the container reader and the payload
 * parser the decoder uses, plus a second walk over each payload that only
 * measures it. The walk runs after pnmf_model_read() has accepted the
 * payload, so it follows a layout already checked (docs/format.md,
 * "Window payload"): flags, k, 2k block sizes, sum(bh * bw) levels, k * m
 * occurrence counts, then N coefficients, N row shifts and N column shifts,
 * N being the sum of the counts. Every value is one LEB128 varint, so a
 * section's bytes are found by skipping its number of varints; in format
 * 4 the residual layer's modes and vectors are each a range-coded stream
 * after its length in bytes.
 *
 * The public entry points check their own arguments here (lib.c holds the
 * codec's); the decoder's limits and messages apply unchanged.
 */
#include <string.h>
#include <sys/types.h>

#include "pnmf/info.h"
#include "pnmf/pnmf.h"

#include "container.h"
#include "upsample.h"
#include "entropy.h"
#include "internal.h"
#include "model.h"
#include "varint.h"

struct PnmfInfo {
    FILE *f;
    PnmfContainerReader *cr;
    PnmfInfoHeader h;
    int rows, cols, vis_rows, vis_cols;
    PnmfWindowModel md;
    PnmfWindowModel last;     /* the last model, for windows that carry its components */
    int loaded;               /* md holds the window last returned */
    int windows;              /* windows returned so far */
    int done;
    int *bh, *bw;             /* header.components each */
    uint64_t *comp_entries;
    uint8_t *prev;            /* the previous window's payload: a continuing
                               * window's zstd frame is built on it */
    size_t prev_size;
    char err[256];
};

static const char *const section_names[PNMF_INFO_SECTIONS] = {
    "head", "block sizes", "levels", "counts", "coefficients", "row shifts", "col shifts", "sprites",
    "res head", "res modes", "res vectors", "res levels",
};

const char *pnmf_info_section_name(int section)
{
    return section >= 0 && section < PNMF_INFO_SECTIONS ? section_names[section] : "?";
}

int pnmf_info_open(PnmfInfo **out, FILE *in)
{
    if (!out) return PNMF_ERR_ARG;
    *out = NULL;
    if (!in) return PNMF_ERR_ARG;
    PnmfInfo *p = pnmf_calloc(1, sizeof(*p));
    if (!p) return PNMF_ERR_NOMEM;
    *out = p; /* even on failure, so the caller can read the reason */
    p->f = in;

    /* Chunk sizes are measured as file positions: the input must seek. */
    const off_t start = ftello(in);
    if (start < 0 || fseeko(in, 0, SEEK_END)) {
        snprintf(p->err, sizeof(p->err), "input is not seekable");
        return PNMF_ERR_IO;
    }
    const off_t end = ftello(in);
    if (end < start || fseeko(in, start, SEEK_SET)) {
        snprintf(p->err, sizeof(p->err), "seek error");
        return PNMF_ERR_IO;
    }
    int ret = pnmf_container_reader_open(&p->cr, in, p->err, sizeof(p->err));
    if (ret < 0) return ret;
    const PnmfHeader *h = pnmf_container_reader_header(p->cr);
    const off_t after = ftello(in);
    PnmfInfoHeader *ih = &p->h;
    ih->version = h->writer_version;
    ih->min_reader_version = h->min_reader_version;
    ih->header_bytes = after > start ? (int)(after - start) : 0;
    ih->width = (int)h->width, ih->height = (int)h->height;
    ih->fps_num = (int)h->fps_num, ih->fps_den = (int)h->fps_den;
    ih->frame_count = (int)h->frame_count;
    ih->window = h->window;
    ih->components = h->components;
    ih->shift_model = h->shift_model;
    ih->quality = h->quality;
    ih->w_step = h->w_step, ih->r_step = h->r_step;
    ih->file_bytes = (uint64_t)(end - start);
    ih->color_range = h->color_range, ih->color_primaries = h->color_primaries;
    ih->color_trc = h->color_trc, ih->colorspace = h->colorspace;
    ih->time_base_num = (int)h->tb_num, ih->time_base_den = (int)h->tb_den;
    /* The decoder's geometry (decode.c). */
    if (ih->w_step < 1 || ih->r_step < 1 || ih->w_step > 64 || ih->r_step > 64) {
        snprintf(p->err, sizeof(p->err), "invalid quantizer steps in the header");
        pnmf_container_reader_close(&p->cr);
        return PNMF_ERR_CORRUPT;
    }
    const int vector = h->shift_model == PNMF_SHIFT_VECTOR;
    /* the coded frame: half the frame's size with the header's half (format 17) */
    const int cw = h->half ? pnmf_half_size((int)h->width) : (int)h->width;
    const int ch = h->half ? pnmf_half_size((int)h->height) : (int)h->height;
    ih->half = h->half;
    p->rows = vector ? 1 : ch;
    p->cols = vector ? cw * ch : cw;
    p->vis_rows = p->rows, p->vis_cols = p->cols;
    if (h->shift_model == PNMF_SHIFT_CANVAS) p->rows = (int)h->canvas_height, p->cols = (int)h->canvas_width;
    ih->canvas_height = p->rows, ih->canvas_width = p->cols;
    const size_t kmax = h->components ? h->components : 1;
    p->bh = pnmf_calloc(kmax, sizeof(int));
    p->bw = pnmf_calloc(kmax, sizeof(int));
    p->comp_entries = pnmf_calloc(kmax, sizeof(uint64_t));
    if (!p->bh || !p->bw || !p->comp_entries) {
        snprintf(p->err, sizeof(p->err), "out of memory");
        pnmf_container_reader_close(&p->cr);
        return PNMF_ERR_NOMEM;
    }
    return 0;
}

const PnmfInfoHeader *pnmf_info_header(const PnmfInfo *p) { return p && p->cr ? &p->h : NULL; }

int pnmf_info_window_time(const PnmfInfo *p, int64_t *start, int64_t *end, int *runs)
{
    if (!p || !p->cr || !start || !end || !runs || !p->windows) return PNMF_ERR_ARG;
    const uint64_t *t;
    const uint32_t n = pnmf_container_window_times(p->cr, &t);
    if (!n) return 0;
    *start = (int64_t)t[0], *end = (int64_t)t[n];
    *runs = 1;
    for (uint32_t i = 1; i < n; i++) *runs += t[i + 1] - t[i] != t[i] - t[i - 1];
    return 1;
}

/* Skip n varints from *pos (bounded by size); returns the bytes skipped or
 * -1 if the payload ends first (it cannot once the model read accepted it). */
static int64_t skip_varints(const uint8_t *buf, size_t size, size_t *pos, uint64_t n)
{
    const size_t start = *pos;
    for (uint64_t v = 0; v < n; v++) {
        for (;;) {
            if (*pos >= size) return -1;
            if (!(buf[(*pos)++] & 0x80)) break;
        }
    }
    return (int64_t)(*pos - start);
}

/* The sections of an accepted payload: section s is [beg[s], end[s]). */
static int measure(int version, const PnmfWindowModel *md, const uint8_t *buf, size_t size,
                   size_t beg[PNMF_INFO_SECTIONS], size_t end[PNMF_INFO_SECTIONS], uint64_t values[PNMF_INFO_SECTIONS])
{
    const uint64_t n = (uint64_t)md->first[md->m];
    values[PNMF_INFO_SEC_HEAD] = 2;
    values[PNMF_INFO_SEC_SIZES] = md->carries ? 0 : 2 * (uint64_t)md->k;
    uint64_t levels = 0;
    for (int i = 0; i < md->k && !md->carries; i++) levels += (uint64_t)md->comp[i].bh * md->comp[i].bw;
    values[PNMF_INFO_SEC_LEVELS] = levels;
    values[PNMF_INFO_SEC_COUNTS] = (uint64_t)md->k * md->m;
    values[PNMF_INFO_SEC_COEFS] = n;
    values[PNMF_INFO_SEC_ROWSHIFTS] = n;
    values[PNMF_INFO_SEC_COLSHIFTS] = n;
    values[PNMF_INFO_SEC_SPRITES] = md->spr.present ? (uint64_t)md->spr.npose + (uint64_t)md->spr.first[md->m] : 0;
    const PnmfResidual *rs = &md->res;
    values[PNMF_INFO_SEC_RES_HEAD] = rs->step16 ? (rs->casc_period ? 8 : 5) : 0; /* window flags bit 12: 3 more */
    if (rs->step16 && rs->wp_on) /* window flags bit 18: 2 a frame with references */
        values[PNMF_INFO_SEC_RES_HEAD] += 2 * (uint64_t)(rs->m - !rs->continues);
    for (int k = 0; rs->step16 && rs->pf.on && k < PNMF_PF_CLASSES; k++) /* window flags bit 22: the taps */
        values[PNMF_INFO_SEC_RES_HEAD] += (rs->pf.mask >> k & 1) * PNMF_PF_TAPS;
    if (rs->step16 && rs->pf.on) values[PNMF_INFO_SEC_RES_HEAD]++; /* and the mask */
    values[PNMF_INFO_SEC_RES_MODES] = rs->step16 ? (uint64_t)rs->m * rs->bx * rs->by : 0;
    values[PNMF_INFO_SEC_RES_VECTORS] = rs->step16 ? 3 * (uint64_t)rs->nmv : 0;
    values[PNMF_INFO_SEC_RES_LEVELS] = rs->step16 ? rs->nlev : 0;
    size_t pos = 0;
    const int coded = version >= 4 && rs->step16;
    for (int s = 0; s < PNMF_INFO_SECTIONS; s++) {
        if (coded && (s == PNMF_INFO_SEC_RES_MODES || s == PNMF_INFO_SEC_RES_VECTORS)) continue;
        beg[s] = pos;
        uint64_t lens[4] = { 0, 0, 0, 0 };
        const int streams = rs->rc_levels ? (rs->lx ? 4 : 3) : 2;
        uint64_t nvar = values[s]; /* the varint levels */
        if (coded && s == PNMF_INFO_SEC_RES_LEVELS) {
            /* format 4: the streams' lengths, the levels, the streams;
             * format 6 may code the levels (those after frame 0's) as a
             * third stream, right after the varints */
            for (int t = 0; t < streams; t++) {
                Rd r = { buf + pos, buf + size };
                if (get_u(&r, &lens[t]) < 0) return PNMF_ERR_CORRUPT;
                pos = (size_t)(r.p - buf);
            }
            nvar = pnmf_residual_varint_levels(rs);
        }
        if (s == PNMF_INFO_SEC_SPRITES) { /* masks are bytes, not varints: the reader measured it */
            if (md->spr.bytes > size - pos) return PNMF_ERR_CORRUPT;
            pos += md->spr.bytes;
            end[s] = pos;
            continue;
        }
        if (skip_varints(buf, size, &pos, nvar) < 0) return PNMF_ERR_CORRUPT;
        if (coded && s == PNMF_INFO_SEC_RES_LEVELS) {
            if (lens[2] > size - pos || lens[0] > size - pos - lens[2] || lens[1] > size - pos - lens[2] - lens[0])
                return PNMF_ERR_CORRUPT;
            if (lens[3] > size - pos - lens[2] - lens[0] - lens[1]) return PNMF_ERR_CORRUPT;
            pos += (size_t)(lens[2] + lens[3]); /* the levels streams close the section */
            end[s] = pos;
            beg[PNMF_INFO_SEC_RES_MODES] = pos, end[PNMF_INFO_SEC_RES_MODES] = pos += (size_t)lens[0];
            beg[PNMF_INFO_SEC_RES_VECTORS] = pos, end[PNMF_INFO_SEC_RES_VECTORS] = pos += (size_t)lens[1];
        } else {
            end[s] = pos;
        }
    }
    return pos == size ? 0 : PNMF_ERR_CORRUPT;
}

static int zstd_size(const uint8_t *src, size_t n, int level, uint64_t *out)
{
    *out = 0;
    if (!n || !level) return 0;
    uint8_t *dst = NULL;
    size_t dn = 0;
    PNMF_CHECK(pnmf_entropy_compress(src, n, level, &dst, &dn));
    pnmf_free(dst);
    *out = dn;
    return 0;
}

int pnmf_info_next_window(PnmfInfo *p, PnmfInfoWindow *st, int zstd_level)
{
    if (!p || !st || zstd_level < 0 || zstd_level > 22) return PNMF_ERR_ARG;
    if (!p->cr) return PNMF_ERR_ARG;
    memset(st, 0, sizeof(*st));
    pnmf_model_free(&p->md);
    p->loaded = 0;
    if (p->done) return 0;

    const uint8_t *payload;
    size_t size;
    uint32_t first, count;
    const off_t before = ftello(p->f);
    int ret = pnmf_container_read_window(p->cr, &payload, &size, &first, &count, p->err,
                                         sizeof(p->err));
    if (ret <= 0) {
        if (ret == 0) p->done = 1;
        return ret;
    }
    const off_t after = ftello(p->f);
    char why[200] = "";
    ret = pnmf_model_read_carry(p->h.version < PNMF_READER_VERSION ? p->h.version : PNMF_READER_VERSION, payload,
                                size, p->rows, p->cols, p->vis_rows, p->vis_cols, (int)count, p->h.components,
                                p->h.w_step, p->h.r_step, &p->last, &p->md, why, sizeof(why));
    if (ret >= 0 && (ret = pnmf_model_track(&p->last, &p->md)) < 0) pnmf_model_free(&p->md);
    if (ret < 0) {
        snprintf(p->err, sizeof(p->err), "window at frame %u: %s", first + 1, why);
        return ret;
    }
    const PnmfWindowModel *md = &p->md;
    size_t beg[PNMF_INFO_SECTIONS], end[PNMF_INFO_SECTIONS];
    uint64_t values[PNMF_INFO_SECTIONS];
    if (measure(p->h.version < PNMF_READER_VERSION ? p->h.version : PNMF_READER_VERSION, md, payload, size, beg, end, values) < 0) {
        /* the model read accepted it, so measure() does not follow the format */
        snprintf(p->err, sizeof(p->err), "window at frame %u: payload layout not understood", first + 1);
        pnmf_model_free(&p->md);
        return PNMF_ERR_CORRUPT;
    }

    st->index = p->windows;
    st->first_frame = (int)first;
    st->frames = (int)count;
    st->key = !md->res.continues;
    st->carried = md->carries;
    st->rc_levels = md->res.step16 ? md->res.rc_levels + (md->res.lx ? 2 : 0) : 0;
    if (md->res.step16)
        for (size_t b = 0; b < (size_t)md->m * md->res.bx * md->res.by; b++) {
            const uint8_t mo = md->res.modes[b];
            st->res_pred[mo & 7]++;
            st->res_coded += (mo & PNMF_RES_CODED) != 0;
            st->res_transform += (mo & PNMF_RES_CODED) && (mo & PNMF_RES_TRANSFORM);
            st->res_palette += mo == PNMF_RES_PALETTE && md->res.palette;
        }
    st->components = md->k;
    st->entries = (uint64_t)md->first[md->m];
    st->sprites = md->spr.present;
    Rd fr = { payload, payload + size }; /* the payload opens with its flags */
    if (get_u(&fr, &st->flags) < 0) st->flags = 0;
    st->sprite_poses = md->spr.present ? md->spr.npose : 0;
    st->sprite_places = md->spr.present ? (uint64_t)md->spr.first[md->m] : 0;
    memset(p->comp_entries, 0, (size_t)p->h.components * sizeof(uint64_t));
    for (int i = 0; i < md->k; i++) {
        const PnmfComp *c = &md->comp[i];
        p->bh[i] = c->bh, p->bw[i] = c->bw;
        st->nonempty += c->bh > 0;
        if (!md->carries) st->levels += (uint64_t)c->bh * c->bw;
        for (int x = 0; x < c->bh * c->bw; x++)
            if (c->lev[x] < 0) st->signed_levels = 1;
    }
    for (int j = 0; j < md->m; j++) {
        int repeat = 0, run = 0;
        for (int e = md->first[j]; e < md->first[j + 1]; e++) {
            p->comp_entries[md->ent[e].i]++;
            run = e > md->first[j] && md->ent[e].i == md->ent[e - 1].i ? run + 1 : 1;
            if (run > 1) repeat = 1;
            if (run > st->max_occurrences) st->max_occurrences = run;
        }
        st->repeat_frames += repeat;
    }
    for (int i = 0; i < md->k; i++) st->used += p->comp_entries[i] > 0;
    st->block_h = p->bh, st->block_w = p->bw;
    st->comp_entries = p->comp_entries;
    st->chunk_bytes = before >= 0 && after > before ? (uint64_t)(after - before) : 0;
    st->payload_bytes = size;
    for (int s = 0; s < PNMF_INFO_SECTIONS; s++) {
        st->sec[s].values = values[s];
        st->sec[s].raw_bytes = end[s] - beg[s];
        ret = zstd_size(payload + beg[s], end[s] - beg[s], zstd_level, &st->sec[s].zstd_bytes);
        if (ret >= 0 && s == 0) {
            /* the whole payload as the file holds it: on the previous
             * payload when the window continues it */
            if (pnmf_container_window_continues(p->cr) && p->prev && zstd_level) {
                uint8_t *dst = NULL;
                size_t dn = 0;
                ret = pnmf_entropy_compress_prefix(payload, size, p->prev, p->prev_size, zstd_level, &dst, &dn);
                pnmf_free(dst);
                st->payload_zstd_bytes = dn;
            } else {
                ret = zstd_size(payload, size, zstd_level, &st->payload_zstd_bytes);
            }
        }
        if (ret < 0) {
            snprintf(p->err, sizeof(p->err), "window at frame %u: zstd failed (%s)", first + 1,
                     pnmf_strerror(ret));
            pnmf_model_free(&p->md);
            return ret;
        }
    }
    uint8_t *keep = pnmf_realloc(p->prev, size ? size : 1);
    if (!keep) {
        snprintf(p->err, sizeof(p->err), "out of memory");
        pnmf_model_free(&p->md);
        return PNMF_ERR_NOMEM;
    }
    if (size) memcpy(keep, payload, size);
    p->prev = keep, p->prev_size = size;
    p->loaded = 1;
    p->windows++;
    return 1;
}

int pnmf_info_window_blocks(const PnmfInfo *p, PnmfInfoBlocks **out)
{
    if (!out) return PNMF_ERR_ARG;
    *out = NULL;
    if (!p || !p->loaded) return PNMF_ERR_ARG;
    const PnmfWindowModel *md = &p->md;
    /* One allocation: the struct, the sizes, the pointers, the levels. */
    const size_t k = (size_t)md->k;
    size_t levels = 0;
    for (size_t i = 0; i < k; i++) levels += (size_t)md->comp[i].bh * md->comp[i].bw;
    const size_t head = sizeof(PnmfInfoBlocks), sizes = 2 * k * sizeof(int),
                 ptrs = k * sizeof(int16_t *);
    /* pointers after the ints: round up to their alignment */
    const size_t ptr_off = (head + sizes + sizeof(void *) - 1) / sizeof(void *) * sizeof(void *);
    const size_t lev_off = ptr_off + ptrs;
    if (levels > (SIZE_MAX - lev_off) / sizeof(int16_t)) return PNMF_ERR_NOMEM;
    uint8_t *mem = pnmf_calloc(1, lev_off + levels * sizeof(int16_t));
    if (!mem) return PNMF_ERR_NOMEM;
    PnmfInfoBlocks *b = (PnmfInfoBlocks *)mem;
    b->window = p->windows - 1;
    b->count = md->k;
    b->w_step = p->h.w_step;
    b->bh = (int *)(mem + head);
    b->bw = b->bh + k;
    b->lev = (int16_t **)(mem + ptr_off);
    int16_t *lev = (int16_t *)(mem + lev_off);
    for (size_t i = 0; i < k; i++) {
        const PnmfComp *c = &md->comp[i];
        const size_t n = (size_t)c->bh * c->bw;
        b->bh[i] = c->bh, b->bw[i] = c->bw;
        b->lev[i] = n ? lev : NULL;
        if (n) memcpy(lev, c->lev, n * sizeof(int16_t));
        lev += n;
    }
    *out = b;
    return 0;
}

void pnmf_info_blocks_free(PnmfInfoBlocks **b)
{
    if (b) pnmf_freep(b);
}

const char *pnmf_info_errmsg(const PnmfInfo *p) { return p ? p->err : ""; }

void pnmf_info_close(PnmfInfo **pp)
{
    if (!pp || !*pp) return;
    PnmfInfo *p = *pp;
    pnmf_model_free(&p->md);
    pnmf_model_free(&p->last);
    pnmf_container_reader_close(&p->cr);
    pnmf_free(p->bh);
    pnmf_free(p->bw);
    pnmf_free(p->comp_entries);
    pnmf_free(p->prev);
    pnmf_freep(pp);
}
