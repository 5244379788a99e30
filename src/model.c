/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Window payload (docs/format.md, "Window payload"). Everything is an
 * unsigned LEB128 varint; signed values are zigzag-mapped first. Values of
 * one kind are grouped (all block sizes, then all levels, then all
 * coefficients, then all shifts) so zstd sees long runs of alike bytes.
 * Levels are predicted from the left neighbour (the one above in the first
 * column); shifts are coded as the change from the same component's
 * previous present entry, wrapped to the shortest way round the torus.
 */
#include <string.h>

#include "internal.h"
#include "model.h"

int pnmf_model_alloc(PnmfWindowModel *md, int rows, int cols, int m, int k)
{
    memset(md, 0, sizeof(*md));
    md->rows = rows, md->cols = cols, md->m = m, md->k = k;
    md->comp = pnmf_calloc(k, sizeof(PnmfComp));
    md->ent = pnmf_calloc((size_t)m * k, sizeof(PnmfEntry));
    if (!md->comp || !md->ent) {
        pnmf_model_free(md);
        return PNMF_ERR_NOMEM;
    }
    return 0;
}

void pnmf_model_free(PnmfWindowModel *md)
{
    if (md->comp)
        for (int i = 0; i < md->k; i++) pnmf_free(md->comp[i].lev);
    pnmf_free(md->comp);
    pnmf_free(md->ent);
    memset(md, 0, sizeof(*md));
}

/* ---- writing ----------------------------------------------------------- */

typedef struct Buf {
    uint8_t *p;
    size_t len, cap;
    int err;
} Buf;

static void put_u(Buf *b, uint64_t v)
{
    if (b->cap - b->len < 10) {
        size_t cap = b->cap ? 2 * b->cap : 4096;
        uint8_t *p = pnmf_realloc(b->p, cap);
        if (!p) {
            b->err = 1;
            return;
        }
        b->p = p, b->cap = cap;
    }
    while (v >= 0x80) {
        b->p[b->len++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b->p[b->len++] = (uint8_t)v;
}

static uint64_t zigzag(int64_t v) { return v < 0 ? ((uint64_t)(-(v + 1)) << 1) | 1 : (uint64_t)v << 1; }
static int64_t unzigzag(uint64_t u) { return (u & 1) ? -(int64_t)(u >> 1) - 1 : (int64_t)(u >> 1); }

/* d wrapped into [-(size/2), size - size/2) */
static int wrap(int d, int size)
{
    d %= size;
    if (d < 0) d += size;
    if (d >= size - size / 2) d -= size;
    return d;
}

static int level_pred(const uint16_t *lev, int bw, int y, int x)
{
    if (x > 0) return lev[y * bw + x - 1];
    if (y > 0) return lev[(y - 1) * bw];
    return 0;
}

uint64_t pnmf_model_work(const PnmfWindowModel *md)
{
    uint64_t work = 0;
    for (int i = 0; i < md->k; i++) {
        const uint64_t area = (uint64_t)md->comp[i].bh * (uint64_t)md->comp[i].bw;
        for (int j = 0; j < md->m; j++) work += md->ent[(size_t)j * md->k + i].c ? area : 0;
    }
    return work;
}

/* At most 1024 * (2^28 + 32 * 2^26) < 2^42: no overflow. */
uint64_t pnmf_model_max_work(int rows, int cols, int m)
{
    return (uint64_t)m * (PNMF_WORK_PER_FRAME + (uint64_t)PNMF_WORK_PER_PIXEL * rows * cols);
}

int pnmf_model_write(const PnmfWindowModel *md, uint8_t **out, size_t *size)
{
    Buf b = { 0 };
    const int k = md->k, m = md->m;
    if (pnmf_model_work(md) > pnmf_model_max_work(md->rows, md->cols, m)) return PNMF_ERR_LIMIT;
    put_u(&b, (uint64_t)k);
    for (int i = 0; i < k; i++) {
        put_u(&b, (uint64_t)md->comp[i].bh);
        put_u(&b, (uint64_t)md->comp[i].bw);
    }
    for (int i = 0; i < k; i++) {
        const PnmfComp *c = &md->comp[i];
        for (int y = 0; y < c->bh; y++)
            for (int x = 0; x < c->bw; x++)
                put_u(&b, zigzag((int64_t)c->lev[y * c->bw + x] - level_pred(c->lev, c->bw, y, x)));
    }
    for (int i = 0; i < k; i++)
        for (int j = 0; j < m; j++) put_u(&b, md->ent[j * k + i].c);
    for (int axis = 0; axis < 2; axis++)
        for (int i = 0; i < k; i++) {
            int prev = 0;
            for (int j = 0; j < m; j++) {
                const PnmfEntry *e = &md->ent[j * k + i];
                if (!e->c) continue;
                const int v = axis == 0 ? e->p / md->cols : e->p % md->cols;
                put_u(&b, zigzag(wrap(v - prev, axis == 0 ? md->rows : md->cols)));
                prev = v;
            }
        }
    if (b.err) {
        pnmf_free(b.p);
        return PNMF_ERR_NOMEM;
    }
    *out = b.p;
    *size = b.len;
    return 0;
}

/* ---- reading ----------------------------------------------------------- */

typedef struct Rd {
    const uint8_t *p, *end;
} Rd;

/* Returns 0 or -1 (truncated, over 10 bytes, or over 64 bits). */
static int get_u(Rd *r, uint64_t *v)
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

#define FAIL(...) do { pnmf_set_err(err, errlen, __VA_ARGS__); ret = PNMF_ERR_CORRUPT; goto fail; } while (0)

int pnmf_model_read(const uint8_t *buf, size_t size, int rows, int cols, int m, int max_k,
                    int w_step, int r_step, PnmfWindowModel *md, char *err, size_t errlen)
{
    Rd r = { buf, buf + size };
    uint64_t v;
    int ret;
    memset(md, 0, sizeof(*md));
    if (w_step < 1 || r_step < 1) {
        pnmf_set_err(err, errlen, "bad quantizer steps");
        return PNMF_ERR_CORRUPT;
    }
    if (get_u(&r, &v) < 0) {
        pnmf_set_err(err, errlen, "truncated window payload");
        return PNMF_ERR_CORRUPT;
    }
    if (v < 1 || v > (uint64_t)max_k) {
        pnmf_set_err(err, errlen, "window has %llu components, the header allows 1..%d",
                     (unsigned long long)v, max_k);
        return PNMF_ERR_CORRUPT;
    }
    const int k = (int)v;
    /* Every value takes a byte at least: 2 block sizes a component and a
     * coefficient an entry. Checked before anything is allocated. */
    if ((uint64_t)k * (2 + (uint64_t)m) > (uint64_t)(r.end - r.p)) {
        pnmf_set_err(err, errlen, "truncated window payload");
        return PNMF_ERR_CORRUPT;
    }
    PNMF_CHECK(pnmf_model_alloc(md, rows, cols, m, k));
    const uint64_t max_level = PNMF_MAX_LEVEL_VALUE / w_step;
    const uint64_t max_coef = PNMF_MAX_COEF_VALUE / r_step;
    uint64_t levels = 0; /* all blocks' levels, at most size: no overflow */
    for (int i = 0; i < k; i++) {
        uint64_t bh, bw;
        if (get_u(&r, &bh) < 0 || get_u(&r, &bw) < 0) FAIL("truncated window payload");
        if (bh > (uint64_t)rows || bw > (uint64_t)cols || (!bh) != (!bw))
            FAIL("component %d is %llux%llu, larger than the %dx%d frame", i,
                 (unsigned long long)bh, (unsigned long long)bw, rows, cols);
        /* bh, bw <= 2^26; the levels of all blocks and the coefficients
         * that follow them need at least a byte each */
        levels += bh * bw;
        if (levels + (uint64_t)k * m > (uint64_t)(r.end - r.p)) FAIL("truncated window payload");
        md->comp[i].bh = (int)bh, md->comp[i].bw = (int)bw;
    }
    for (int i = 0; i < k; i++) {
        PnmfComp *c = &md->comp[i];
        if (!c->bh) continue;
        c->lev = pnmf_malloc_array((size_t)c->bh * c->bw, sizeof(uint16_t));
        if (!c->lev) {
            ret = PNMF_ERR_NOMEM;
            goto fail;
        }
        for (int y = 0; y < c->bh; y++)
            for (int x = 0; x < c->bw; x++) {
                if (get_u(&r, &v) < 0) FAIL("truncated window payload");
                /* |difference| > max_level can only land out of range, and
                 * checking first keeps the sum below from overflowing */
                if ((v >> 1) > max_level) FAIL("component %d: level out of range", i);
                const int64_t l = unzigzag(v) + level_pred(c->lev, c->bw, y, x);
                if (l < 0 || (uint64_t)l > max_level) FAIL("component %d: level out of range", i);
                c->lev[y * c->bw + x] = (uint16_t)l;
            }
    }
    for (int i = 0; i < k; i++)
        for (int j = 0; j < m; j++) {
            if (get_u(&r, &v) < 0) FAIL("truncated window payload");
            if (v > max_coef) FAIL("coefficient out of range");
            if (v && !md->comp[i].bh) FAIL("entry of the empty component %d", i);
            md->ent[j * k + i].c = (uint32_t)v;
        }
    /* The reconstruction's cost, known now, is bounded before any of it is
     * spent: a few bytes of zstd must not buy hours of decoding. */
    const uint64_t work = pnmf_model_work(md), max_work = pnmf_model_max_work(rows, cols, m);
    if (work > max_work) {
        pnmf_set_err(err, errlen, "decode work %llu over the limit %llu for %d frames",
                     (unsigned long long)work, (unsigned long long)max_work, m);
        ret = PNMF_ERR_LIMIT;
        goto fail;
    }
    for (int axis = 0; axis < 2; axis++) {
        const int sz = axis == 0 ? rows : cols;
        for (int i = 0; i < k; i++) {
            int prev = 0;
            for (int j = 0; j < m; j++) {
                PnmfEntry *e = &md->ent[j * k + i];
                if (!e->c) continue;
                if (get_u(&r, &v) < 0) FAIL("truncated window payload");
                const int64_t d = unzigzag(v);
                if (d < -(sz / 2) || d >= sz - sz / 2) FAIL("shift out of range");
                int s = prev + (int)d;
                if (s < 0) s += sz;
                if (s >= sz) s -= sz;
                prev = s;
                if (axis == 0) e->p = s * cols;
                else e->p += s;
            }
        }
    }
    if (r.p != r.end) FAIL("%zu unexpected bytes after the window payload", (size_t)(r.end - r.p));
    return 0;
fail:
    pnmf_model_free(md);
    return ret;
}
