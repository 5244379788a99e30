/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: write, read, compare. The fuzzer's bytes choose a small
 * valid file: a header (size, shift model, canvas size, quantizer steps,
 * component cap, window length) and 1..4 windows, each a random model
 * (block sizes, signed levels, per-frame entry lists with repeated
 * components, coefficients, shifts) within the limits of docs/format.md.
 *
 * For each window: pnmf_model_write -> pnmf_model_read must give the same
 * model, and writing that again the same bytes. The windows go through the
 * container writer into memory; the container reader must give back the
 * header and the payloads byte for byte; the public decoder must give,
 * frame by frame, what pnmf_diamond_int() makes of the model; and seeking to
 * each window's first frame must land on the same frames.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "container.h"
#include "diamond.h"
#include "internal.h"
#include "model_write.h"
#include "pnmf/pnmf.h"

#define MAX_SIDE    12
#define MAX_M       6
#define MAX_K       5
#define MAX_WINDOWS 4

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FAIL(...) do { fprintf(stderr, "fuzz_roundtrip: " __VA_ARGS__); fputc('\n', stderr); abort(); } while (0)

/* The fuzzer's bytes, read as numbers; zeros once they run out. */
typedef struct Src {
    const uint8_t *p;
    size_t n;
} Src;

static unsigned take(Src *s, unsigned range) /* 0 .. range-1 */
{
    unsigned v = 0;
    for (unsigned r = range - 1; r; r >>= 8) {
        v = v << 8 | (s->n ? *s->p : 0);
        if (s->n) s->p++, s->n--;
    }
    return range ? v % range : 0;
}

static void random_model(Src *s, PnmfWindowModel *md, int rows, int cols, int vis_rows,
                         int vis_cols, int m, int max_k, int w_step, int r_step)
{
    const int k = 1 + (int)take(s, (unsigned)max_k);
    if (pnmf_model_alloc(md, rows, cols, vis_rows, vis_cols, m, k, m * k * PNMF_MAX_OCCURRENCES) < 0)
        abort();
    const int max_level = PNMF_MAX_LEVEL_VALUE / w_step;
    const unsigned max_coef = PNMF_MAX_COEF_VALUE / r_step;
    for (int i = 0; i < k; i++) {
        PnmfComp *c = &md->comp[i];
        c->bh = (int)take(s, (unsigned)rows + 1);
        c->bw = c->bh ? 1 + (int)take(s, (unsigned)cols) : 0;
        if (!c->bh) continue;
        c->lev = pnmf_malloc_array((size_t)c->bh * c->bw, sizeof(int16_t));
        if (!c->lev) abort();
        /* signed; mostly small steps between neighbours, sometimes the extremes */
        int prev = (int)take(s, 2 * (unsigned)max_level + 1) - max_level;
        for (int q = 0; q < c->bh * c->bw; q++) {
            const unsigned op = take(s, 10);
            prev = op == 0 ? 0 : op == 1 ? max_level : op == 2 ? -max_level
                 : op < 5 ? (int)take(s, 2 * (unsigned)max_level + 1) - max_level
                 : prev + (int)take(s, 5) - 2;
            if (prev > max_level) prev = max_level;
            if (prev < -max_level) prev = -max_level;
            c->lev[q] = (int16_t)prev;
        }
    }
    /* each frame's entries in component order; a component absent, once,
     * or repeated (up to the 64 the format allows) */
    for (int j = 0; j < m; j++)
        for (int i = 0; i < k; i++) {
            if (!md->comp[i].bh || take(s, 4) == 0) continue;
            const unsigned sel = take(s, 16);
            const int n = sel == 0 ? PNMF_MAX_OCCURRENCES : sel < 3 ? 1 + (int)take(s, PNMF_MAX_OCCURRENCES)
                        : sel < 7 ? 2 + (int)take(s, 3) : 1;
            for (int t = 0; t < n; t++) {
                const uint32_t c = take(s, 3) == 0 ? max_coef : 1 + take(s, max_coef);
                if (pnmf_model_add(md, j, i, c, (int32_t)take(s, (unsigned)(rows * cols))) < 0) abort();
            }
        }
}

static void compare_models(const PnmfWindowModel *a, const PnmfWindowModel *b)
{
    if (a->rows != b->rows || a->cols != b->cols || a->vis_rows != b->vis_rows ||
        a->vis_cols != b->vis_cols || a->m != b->m || a->k != b->k)
        FAIL("geometry %dx%d (%dx%d) m %d k %d read back as %dx%d (%dx%d) m %d k %d", a->rows, a->cols,
             a->vis_rows, a->vis_cols, a->m, a->k, b->rows, b->cols, b->vis_rows, b->vis_cols, b->m, b->k);
    for (int i = 0; i < a->k; i++) {
        const PnmfComp *x = &a->comp[i], *y = &b->comp[i];
        if (x->bh != y->bh || x->bw != y->bw) FAIL("component %d size differs", i);
        if (x->bh && memcmp(x->lev, y->lev, (size_t)x->bh * x->bw * sizeof(int16_t)))
            FAIL("component %d levels differ", i);
    }
    for (int j = 0; j <= a->m; j++)
        if (a->first[j] != b->first[j]) FAIL("frame %d: entries from %d vs %d", j, a->first[j], b->first[j]);
    for (int e = 0; e < a->first[a->m]; e++)
        if (a->ent[e].c != b->ent[e].c || a->ent[e].p != b->ent[e].p || a->ent[e].i != b->ent[e].i)
            FAIL("entry %d differs: %d %u@%d vs %d %u@%d", e, a->ent[e].i, a->ent[e].c, a->ent[e].p,
                 b->ent[e].i, b->ent[e].c, b->ent[e].p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Src s = { data, size };
    PnmfHeader h;
    memset(&h, 0, sizeof(h));
    h.writer_version = PNMF_FORMAT_VERSION;
    h.min_reader_version = PNMF_FORMAT_VERSION;
    h.width = 1 + take(&s, MAX_SIDE);
    h.height = 1 + take(&s, MAX_SIDE);
    h.fps_num = 1 + take(&s, 60000);
    h.fps_den = 1 + take(&s, 1001);
    h.window = (uint16_t)(1 + take(&s, MAX_M));
    h.components = (uint16_t)(1 + take(&s, MAX_K));
    h.shift_model = (uint8_t)take(&s, 3);
    if (h.shift_model == PNMF_SHIFT_CANVAS) {
        h.canvas_height = h.height + take(&s, 6);
        h.canvas_width = h.width + take(&s, 6);
    }
    h.quality = (uint8_t)take(&s, 49);
    h.w_step = (uint16_t)(1 + take(&s, 64));
    h.r_step = (uint16_t)(1 + take(&s, 64));
    /* the frame (vis), and the torus: the frame, or the canvas */
    const int vr = h.shift_model == PNMF_SHIFT_VECTOR ? 1 : (int)h.height;
    const int vc = h.shift_model == PNMF_SHIFT_VECTOR ? (int)(h.width * h.height) : (int)h.width;
    const int rows = h.shift_model == PNMF_SHIFT_CANVAS ? (int)h.canvas_height : vr;
    const int cols = h.shift_model == PNMF_SHIFT_CANVAS ? (int)h.canvas_width : vc;
    const int windows = 1 + (int)take(&s, MAX_WINDOWS);
    const int level = 1 + (int)take(&s, 3);

    PnmfWindowModel md[MAX_WINDOWS];
    uint8_t *payload[MAX_WINDOWS];
    size_t psize[MAX_WINDOWS];
    int first[MAX_WINDOWS + 1];
    char err[256];
    first[0] = 0;
    for (int w = 0; w < windows; w++) {
        /* every window full but the last */
        const int m = w + 1 < windows ? h.window : 1 + (int)take(&s, h.window);
        first[w + 1] = first[w] + m;
        random_model(&s, &md[w], rows, cols, vr, vc, m, h.components, h.w_step, h.r_step);
        if (pnmf_model_write(&md[w], &payload[w], &psize[w]) < 0) abort();
        PnmfWindowModel back;
        int ret = pnmf_model_read(payload[w], psize[w], rows, cols, vr, vc, m, h.components,
                                  h.w_step, h.r_step, &back, err, sizeof(err));
        if (ret < 0) FAIL("window %d: cannot read what was written: %s", w, err);
        compare_models(&md[w], &back);
        uint8_t *again;
        size_t again_size;
        if (pnmf_model_write(&back, &again, &again_size) < 0) abort();
        if (again_size != psize[w] || memcmp(again, payload[w], psize[w]))
            FAIL("window %d: written twice, different bytes", w);
        pnmf_free(again);
        pnmf_model_free(&back);
    }
    h.frame_count = (uint32_t)first[windows];

    /* The container, in memory. */
    size_t cap = 4096;
    for (int w = 0; w < windows; w++) cap += psize[w] + 256;
    uint8_t *file = malloc(cap);
    FILE *f = file ? fmemopen(file, cap, "w+b") : NULL;
    if (!f) abort();
    PnmfContainerWriter *cw;
    if (pnmf_container_writer_open(&cw, f, &h, level, err, sizeof(err)) < 0) FAIL("writer: %s", err);
    for (int w = 0; w < windows; w++)
        if (pnmf_container_write_window(cw, (uint32_t)first[w], (uint32_t)(first[w + 1] - first[w]),
                                        payload[w], psize[w], err, sizeof(err)) < 0)
            FAIL("write window %d: %s", w, err);
    if (pnmf_container_writer_finish(cw, h.frame_count, err, sizeof(err)) < 0) FAIL("finish: %s", err);
    const size_t fsize = (size_t)pnmf_container_writer_bytes(cw);
    pnmf_container_writer_close(&cw);
    fclose(f);

    f = fmemopen(file, fsize, "rb");
    if (!f) abort();
    PnmfContainerReader *cr;
    if (pnmf_container_reader_open(&cr, f, err, sizeof(err)) < 0) FAIL("reader: %s", err);
    const PnmfHeader *rh = pnmf_container_reader_header(cr);
    if (rh->width != h.width || rh->height != h.height || rh->fps_num != h.fps_num ||
        rh->fps_den != h.fps_den || rh->frame_count != h.frame_count || rh->window != h.window ||
        rh->components != h.components || rh->shift_model != h.shift_model ||
        rh->quality != h.quality || rh->w_step != h.w_step || rh->r_step != h.r_step ||
        rh->canvas_height != h.canvas_height || rh->canvas_width != h.canvas_width ||
        rh->writer_version != PNMF_FORMAT_VERSION)
        FAIL("header read back differs");
    for (int w = 0;; w++) {
        const uint8_t *p;
        size_t n;
        uint32_t ff, fc;
        const int ret = pnmf_container_read_window(cr, &p, &n, &ff, &fc, err, sizeof(err));
        if (ret < 0) FAIL("read window %d: %s", w, err);
        if (ret == 0) {
            if (w != windows) FAIL("%d windows of %d", w, windows);
            break;
        }
        if (w >= windows || ff != (uint32_t)first[w] || fc != (uint32_t)(first[w + 1] - first[w]) ||
            n != psize[w] || memcmp(p, payload[w], n))
            FAIL("window %d differs", w);
    }
    pnmf_container_reader_close(&cr);

    /* The public decoder against the reference reconstruction, in order and after seeks. */
    const size_t npx = (size_t)h.width * h.height;
    uint8_t *got = malloc(npx), *want = malloc(npx), *layout = malloc(npx);
    int64_t *acc = malloc(npx * sizeof(*acc));
    if (!got || !want || !layout || !acc) abort();
    for (int pass = 0; pass <= windows; pass++) {
        rewind(f);
        PnmfDecoder *d;
        if (pnmf_dec_open(&d, f) < 0) FAIL("pnmf_dec_open: %s", pnmf_dec_errmsg(d));
        /* pass 0 reads everything in order; pass w + 1 seeks to window w */
        const int from = pass ? first[pass - 1] : 0;
        if (pass && pnmf_dec_seek(d, from) < 0) FAIL("seek to %d: %s", from, pnmf_dec_errmsg(d));
        for (int w = pass ? pass - 1 : 0; w < windows; w++)
            for (int j = 0; j < first[w + 1] - first[w]; j++) {
                if (pnmf_dec_read_frame(d, got, h.width) < 0)
                    FAIL("frame %d: %s", first[w] + j, pnmf_dec_errmsg(d));
                pnmf_diamond_int(&md[w], j, h.w_step, h.r_step, acc, layout);
                pnmf_layout_to_frame(h.shift_model, (int)h.width, (int)h.height, layout, want,
                                     h.width);
                if (memcmp(got, want, npx)) FAIL("frame %d differs (pass %d)", first[w] + j, pass);
            }
        if (pnmf_dec_read_frame(d, got, h.width) != PNMF_ERR_EOF)
            FAIL("no end after %d frames: %s", h.frame_count, pnmf_dec_errmsg(d));
        pnmf_dec_close(&d);
    }
    fclose(f);
    free(file);
    free(got);
    free(want);
    free(layout);
    free(acc);
    for (int w = 0; w < windows; w++) {
        pnmf_free(payload[w]);
        pnmf_model_free(&md[w]);
    }
    return 0;
}
