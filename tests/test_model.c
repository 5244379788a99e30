/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Quantization, the window payload (format v2: flags, signed levels,
 * per-frame entry lists, occurrence counts, canvas geometry) and the
 * integer diamond product on the visible corner of the torus.
 */
#include <stdlib.h>
#include <string.h>

#include "diamond.h"
#include "internal.h"
#include "model_write.h"
#include "permnmf.h"
#include "pnmf/pnmf.h"
#include "quant.h"
#include "test.h"

static unsigned rs = 777;
static unsigned urn(unsigned n) { rs = rs * 1103515245u + 12345u; return ((rs >> 8) & 0xFFFFFF) % n; }

static void test_steps(void)
{
    int pw = 0, pr = 0;
    for (int q = 0; q <= PNMF_MAX_QUALITY; q++) {
        int w, r;
        pnmf_quant_steps(q, &w, &r);
        CHECK(w >= pw && r >= pr && w >= 1 && r >= 1);
        pw = w, pr = r;
    }
    int w0, r0, w48, r48;
    pnmf_quant_steps(0, &w0, &r0);
    pnmf_quant_steps(48, &w48, &r48);
    CHECK(w0 == 1 && w48 == 64);
}

/* Quantize a blob (that may wrap around either edge, and may be signed)
 * and put it back: the block is the blob's cyclic bounding box, the error
 * at most half a step. */
static void test_component(void)
{
    enum { R = 10, C = 13, N = R * C };
    for (int t = 0; t < 60; t++) {
        const int sgn = t % 2;
        float w[N] = { 0 }, d[N], back[N] = { 0 };
        const int y0 = urn(R), x0 = urn(C), bh = 1 + urn(5), bw = 1 + urn(6);
        for (int y = 0; y < bh; y++)
            for (int x = 0; x < bw; x++) {
                float v = 0.1f + urn(1000) / 300.0f;
                if (sgn && urn(2)) v = -v;
                w[((y0 + y) % R) * C + (x0 + x) % C] = v;
            }
        const int step = 1 << urn(4);
        PnmfComp c;
        float scale;
        int q0;
        CHECK(pnmf_quant_component(R, C, w, step, &c, &scale, &q0) == 0);
        CHECK_MSG(c.bh == bh && c.bw == bw, "block %dx%d, blob %dx%d", c.bh, c.bw, bh, bw);
        CHECK(q0 == y0 * C + x0);
        int neg = 0, inrange = 1;
        for (int q = 0; q < c.bh * c.bw; q++) {
            neg |= c.lev[q] < 0;
            inrange &= c.lev[q] >= -PNMF_MAX_LEVEL_VALUE / step && c.lev[q] <= PNMF_MAX_LEVEL_VALUE / step;
        }
        CHECK(inrange);
        if (!sgn) CHECK(!neg);
        pnmf_dequant_component(R, C, &c, step, d);
        pnmf_shift_add(R, C, back, d, scale, q0);
        double maxerr = 0;
        for (int x = 0; x < N; x++) maxerr = fmax(maxerr, fabs(back[x] - w[x]));
        CHECK_MSG(maxerr <= scale * (step / 512.0 + 1e-5), "quant err %g step %d scale %g", maxerr, step, scale);
        pnmf_free(c.lev);
    }
}

/* ---- models ---- */

/* A random model on a rows x cols torus showing vis_rows x vis_cols:
 * component 1 empty, the others of random size with signed levels (the
 * extremes included), and in each frame, for each component in order, 0
 * to max_occ entries (repeated placements of one component). */
static void random_model(PnmfWindowModel *md, int rows, int cols, int vr, int vc, int m, int k,
                         int w_step, int r_step, int max_occ, int max_coef)
{
    CHECK(pnmf_model_alloc(md, rows, cols, vr, vc, m, k, m * k * max_occ) == 0);
    const int maxl = PNMF_MAX_LEVEL_VALUE / w_step;
    for (int i = 0; i < k; i++) {
        PnmfComp *c = &md->comp[i];
        if (i == 1) continue; /* an empty component */
        c->bh = 1 + urn(rows), c->bw = 1 + urn(cols);
        c->lev = pnmf_malloc_array((size_t)c->bh * c->bw, sizeof(int16_t));
        for (int q = 0; q < c->bh * c->bw; q++) {
            const unsigned op = urn(10);
            c->lev[q] = (int16_t)(op == 0 ? maxl : op == 1 ? -maxl : (int)urn(2 * maxl + 1) - maxl);
        }
    }
    if (max_coef > PNMF_MAX_COEF_VALUE / r_step) max_coef = PNMF_MAX_COEF_VALUE / r_step;
    for (int j = 0; j < m; j++)
        for (int i = 0; i < k; i++) {
            if (i == 1 || urn(4) == 0) continue;
            const int n = 1 + (int)urn((unsigned)max_occ);
            for (int t = 0; t < n; t++) {
                const uint32_t c = urn(8) == 0 ? (uint32_t)max_coef : 1 + urn((unsigned)max_coef);
                CHECK(pnmf_model_add(md, j, i, c, (int32_t)urn((unsigned)(rows * cols))) == 0);
            }
        }
}

static int same_model(const PnmfWindowModel *a, const PnmfWindowModel *b)
{
    if (a->rows != b->rows || a->cols != b->cols || a->vis_rows != b->vis_rows ||
        a->vis_cols != b->vis_cols || a->m != b->m || a->k != b->k)
        return 0;
    for (int i = 0; i < a->k; i++) {
        const PnmfComp *x = &a->comp[i], *y = &b->comp[i];
        if (x->bh != y->bh || x->bw != y->bw) return 0;
        if (x->bh && memcmp(x->lev, y->lev, sizeof(int16_t) * x->bh * x->bw)) return 0;
    }
    for (int j = 0; j <= a->m; j++)
        if (a->first[j] != b->first[j]) return 0;
    for (int e = 0; e < a->first[a->m]; e++)
        if (a->ent[e].c != b->ent[e].c || a->ent[e].p != b->ent[e].p || a->ent[e].i != b->ent[e].i)
            return 0;
    return 1;
}

/* Carried components (format 5): a window that carries the last model's
 * components writes none of their bytes, reads back equal given the last
 * model, and is refused without it, with another k, in a key window or by
 * a format 4 reader; pnmf_model_track() follows the last model as the
 * format defines it. */
static void with_residual(PnmfWindowModel *md, int continues)
{
    CHECK(pnmf_residual_alloc(&md->res, md->m, md->vis_rows, md->vis_cols, 32, 32) == 0);
    md->res.continues = continues;
}

static void test_carry(void)
{
    char err[160];
    const int rows = 9, cols = 11, m = 4, k = 3, ws = 4, rst = 16;
    PnmfWindowModel last, a, b, c;
    random_model(&last, rows, cols, rows, cols, m, k, ws, rst, 2, 300);
    with_residual(&last, 0);
    /* a continuing window over the same components, with its own entries */
    random_model(&a, rows, cols, rows, cols, m, k, ws, rst, 2, 300);
    for (int i = 0; i < k; i++) {
        pnmf_free(a.comp[i].lev);
        a.comp[i] = (PnmfComp){ 0, 0, NULL };
    }
    CHECK(pnmf_model_copy_components(&a, &last) == 0);
    with_residual(&a, 1);
    uint8_t *full, *carried;
    size_t full_size, carried_size;
    CHECK(pnmf_model_write(&a, &full, &full_size) == 0);
    a.carries = 1;
    CHECK(pnmf_model_write(&a, &carried, &carried_size) == 0);
    size_t levels = 0;
    for (int i = 0; i < k; i++) levels += (size_t)last.comp[i].bh * last.comp[i].bw;
    /* the sizes (2 a component) and the levels (a byte each at least) are gone */
    CHECK_MSG(carried_size + 2 * k + levels <= full_size, "%zu bytes carried, %zu sent", carried_size, full_size);
    CHECK(carried[0] == (PNMF_FLAG_RESIDUAL | PNMF_FLAG_CONTINUES | PNMF_FLAG_CARRIES));
    int ret = pnmf_model_read_carry(5, carried, carried_size, rows, cols, rows, cols, m, k, ws, rst, &last, &b,
                                    err, sizeof err);
    CHECK_MSG(ret == 0, "%s", err);
    if (ret == 0) {
        CHECK(same_model(&a, &b) && b.carries == 1 && b.res.continues == 1);
        /* its own copy of the components */
        CHECK(b.comp[0].lev != last.comp[0].lev);
        pnmf_model_free(&b);
    }
    /* no last model, an empty one, another k, a format 4 reader */
    CHECK(pnmf_model_read_carry(5, carried, carried_size, rows, cols, rows, cols, m, k, ws, rst, NULL, &b, err,
                                sizeof err) == PNMF_ERR_CORRUPT && strstr(err, "no window since the key window"));
    PnmfWindowModel none;
    CHECK(pnmf_model_alloc(&none, rows, cols, rows, cols, 1, k, 0) == 0);
    CHECK(pnmf_model_read_carry(5, carried, carried_size, rows, cols, rows, cols, m, k, ws, rst, &none, &b, err,
                                sizeof err) == PNMF_ERR_CORRUPT && strstr(err, "no window since the key window"));
    PnmfWindowModel other;
    random_model(&other, rows, cols, rows, cols, 1, k + 1, ws, rst, 1, 300);
    CHECK(pnmf_model_read_carry(5, carried, carried_size, rows, cols, rows, cols, m, k + 1, ws, rst, &other, &b,
                                err, sizeof err) == PNMF_ERR_CORRUPT && strstr(err, "carries 3 components over"));
    CHECK(pnmf_model_read_carry(4, carried, carried_size, rows, cols, rows, cols, m, k, ws, rst, &last, &b, err,
                                sizeof err) == PNMF_ERR_CORRUPT && strstr(err, "unknown features"));
    /* every truncation is refused */
    int refused = 0;
    for (size_t l = 0; l < carried_size; l++)
        refused += pnmf_model_read_carry(5, carried, l, rows, cols, rows, cols, m, k, ws, rst, &last, &c, err,
                                         sizeof err) == PNMF_ERR_CORRUPT;
    CHECK(refused == (int)carried_size);
    /* the flag in a key window: the writer refuses it, the reader too */
    a.res.continues = 0;
    uint8_t *bad;
    size_t bad_size;
    CHECK(pnmf_model_write(&a, &bad, &bad_size) == PNMF_ERR_ARG);
    carried[0] = PNMF_FLAG_RESIDUAL | PNMF_FLAG_CARRIES;
    CHECK(pnmf_model_read_carry(5, carried, carried_size, rows, cols, rows, cols, m, k, ws, rst, &last, &b, err,
                                sizeof err) == PNMF_ERR_CORRUPT && strstr(err, "into a key window"));
    a.res.continues = 1;

    /* pnmf_model_track: a key window with components becomes the last
     * model; a continuing one without keeps it, as does one that carries;
     * one with components replaces it; a key window without clears it */
    PnmfWindowModel t;
    memset(&t, 0, sizeof(t));
    CHECK(pnmf_model_track(&t, &last) == 0 && t.k == k);
    int same = t.k == k;
    for (int i = 0; same && i < k; i++)
        same = t.comp[i].bh == last.comp[i].bh && t.comp[i].bw == last.comp[i].bw &&
               (!t.comp[i].bh || !memcmp(t.comp[i].lev, last.comp[i].lev,
                                         sizeof(int16_t) * t.comp[i].bh * t.comp[i].bw));
    CHECK(same);
    with_residual(&none, 1);
    CHECK(pnmf_model_track(&t, &none) == 0 && t.k == k && t.comp[0].bh == last.comp[0].bh);
    CHECK(pnmf_model_track(&t, &a) == 0 && t.k == k); /* a carries: the same */
    CHECK(t.comp[0].bh == last.comp[0].bh && !memcmp(t.comp[0].lev, last.comp[0].lev,
                                                     sizeof(int16_t) * last.comp[0].bh * last.comp[0].bw));
    CHECK(pnmf_model_track(&t, &other) == 0 && t.k == k + 1); /* no residual layer: a key window with components */
    none.res.continues = 0;
    CHECK(pnmf_model_track(&t, &none) == 0 && t.k == 0 && t.comp == NULL);
    pnmf_free(full), pnmf_free(carried);
    pnmf_model_free(&last), pnmf_model_free(&a), pnmf_model_free(&none), pnmf_model_free(&other);
    pnmf_model_free(&t);
}

/* pnmf_model_add: frames in order, empty frames between, the capacity. */
static void test_add(void)
{
    PnmfWindowModel md;
    CHECK(pnmf_model_alloc(&md, 4, 5, 3, 4, 5, 3, 4) == 0);
    CHECK(md.rows == 4 && md.cols == 5 && md.vis_rows == 3 && md.vis_cols == 4 && md.m == 5 && md.k == 3);
    for (int j = 0; j <= 5; j++) CHECK(md.first[j] == 0);
    CHECK(pnmf_model_add(&md, 1, 0, 7, 3) == 0);
    CHECK(pnmf_model_add(&md, 1, 2, 8, 4) == 0);
    CHECK(pnmf_model_add(&md, 3, 2, 9, 19) == 0);
    CHECK(pnmf_model_add(&md, 3, 2, 1, 0) == 0);
    CHECK(pnmf_model_add(&md, 4, 0, 1, 0) == PNMF_ERR_LIMIT); /* 4 entries allocated */
    const int want[6] = { 0, 0, 2, 2, 4, 4 };
    int ok = 1;
    for (int j = 0; j <= 5; j++) ok &= md.first[j] == want[j];
    CHECK_MSG(ok, "first[] %d %d %d %d %d %d", md.first[0], md.first[1], md.first[2], md.first[3],
              md.first[4], md.first[5]);
    CHECK(md.ent[0].i == 0 && md.ent[0].c == 7 && md.ent[0].p == 3);
    CHECK(md.ent[3].i == 2 && md.ent[3].c == 1 && md.ent[3].p == 0);
    pnmf_model_free(&md);
    CHECK(!md.comp && !md.first && !md.ent);
    pnmf_model_free(&md); /* twice is harmless */
}

static void test_payload(void)
{
    char err[128];
    for (int t = 0; t < 40; t++) {
        /* vector-like (1 row), torus (vis = torus), canvas (vis < torus) */
        const int g = t % 3;
        const int rows = g == 0 ? 1 : 2 + urn(14), cols = 1 + urn(25);
        const int vr = g == 2 ? 1 + (int)urn(rows) : rows, vc = g == 2 ? 1 + (int)urn(cols) : cols;
        const int m = 1 + urn(9), k = 2 + urn(5), ws = 1 << urn(7), rst = 1 + urn(64);
        const int max_occ = t % 4 == 0 ? 1 : 1 + urn(5);
        PnmfWindowModel a, b;
        random_model(&a, rows, cols, vr, vc, m, k, ws, rst, max_occ, PNMF_MAX_COEF_VALUE);
        uint8_t *buf, *buf2;
        size_t size, size2;
        CHECK(pnmf_model_write(&a, &buf, &size) == 0);
        CHECK(size > 0 && buf[0] == 0); /* flags */
        int ret = pnmf_model_read(buf, size, rows, cols, vr, vc, m, k, ws, rst, &b, err, sizeof err);
        CHECK_MSG(ret == 0, "read: %s", err);
        if (ret < 0) {
            pnmf_model_free(&a), pnmf_free(buf);
            continue;
        }
        CHECK_MSG(same_model(&a, &b), "payload round trip %d (%dx%d of %dx%d)", t, vr, vc, rows, cols);
        CHECK(pnmf_model_write(&b, &buf2, &size2) == 0);
        CHECK(size2 == size && !memcmp(buf, buf2, size));
        /* every truncation is refused; so are trailing bytes and a tighter k */
        int refused = 0;
        for (size_t l = 0; l < size; l++) {
            PnmfWindowModel c;
            refused += pnmf_model_read(buf, l, rows, cols, vr, vc, m, k, ws, rst, &c, err, sizeof err) ==
                       PNMF_ERR_CORRUPT;
        }
        CHECK(refused == (int)size);
        uint8_t *longer = malloc(size + 1);
        memcpy(longer, buf, size);
        longer[size] = 0;
        PnmfWindowModel c;
        CHECK(pnmf_model_read(longer, size + 1, rows, cols, vr, vc, m, k, ws, rst, &c, err, sizeof err) ==
              PNMF_ERR_CORRUPT);
        CHECK(strstr(err, "1 unexpected bytes") != NULL);
        CHECK(pnmf_model_read(buf, size, rows, cols, vr, vc, m, k - 1, ws, rst, &c, err, sizeof err) < 0);
        /* random corruption never crashes (ASan/UBSan builds watch this) */
        for (int f = 0; f < 150; f++) {
            memcpy(longer, buf, size);
            longer[urn((unsigned)size)] ^= (uint8_t)(1 + urn(255));
            if (pnmf_model_read(longer, size, rows, cols, vr, vc, m, k, ws, rst, &c, err, sizeof err) == 0)
                pnmf_model_free(&c);
        }
        free(longer);
        pnmf_free(buf), pnmf_free(buf2);
        pnmf_model_free(&a), pnmf_model_free(&b);
    }
}

/* The writer refuses a model that breaks a rule of the format. */
static void test_writer_refusals(void)
{
    PnmfWindowModel md;
    uint8_t *buf = NULL;
    size_t size;
    const int16_t lev[2] = { 5, -5 };
    /* comp 0: 1x2, comp 1: empty */
    #define MODEL(cap) do { \
        CHECK(pnmf_model_alloc(&md, 4, 4, 4, 4, 2, 2, cap) == 0); \
        md.comp[0].bh = 1, md.comp[0].bw = 2; \
        md.comp[0].lev = pnmf_malloc_array(2, sizeof(int16_t)); \
        memcpy(md.comp[0].lev, lev, sizeof lev); \
    } while (0)
    MODEL(4);
    pnmf_model_add(&md, 0, 0, 1, 15);
    CHECK(pnmf_model_write(&md, &buf, &size) == 0);
    pnmf_free(buf);
    pnmf_model_add(&md, 1, 1, 1, 0); /* an entry of the empty component */
    CHECK(pnmf_model_write(&md, &buf, &size) == PNMF_ERR_ARG);
    pnmf_model_free(&md);
    MODEL(4);
    pnmf_model_add(&md, 0, 0, 0, 0); /* coefficient 0 */
    CHECK(pnmf_model_write(&md, &buf, &size) == PNMF_ERR_ARG);
    pnmf_model_free(&md);
    MODEL(4);
    pnmf_model_add(&md, 0, 0, 1, 16); /* shift past the torus */
    CHECK(pnmf_model_write(&md, &buf, &size) == PNMF_ERR_ARG);
    pnmf_model_free(&md);
    MODEL(4);
    pnmf_model_add(&md, 0, 0, 1, -1);
    CHECK(pnmf_model_write(&md, &buf, &size) == PNMF_ERR_ARG);
    pnmf_model_free(&md);
    MODEL(4);
    md.comp[1].bh = md.comp[1].bw = 1;
    md.comp[1].lev = pnmf_malloc_array(1, sizeof(int16_t));
    md.comp[1].lev[0] = 1;
    pnmf_model_add(&md, 0, 1, 1, 0);
    pnmf_model_add(&md, 0, 0, 1, 0); /* out of order in the frame */
    CHECK(pnmf_model_write(&md, &buf, &size) == PNMF_ERR_ARG);
    pnmf_model_free(&md);
    /* 64 occurrences of a component in a frame are fine, 65 are not */
    MODEL(PNMF_MAX_OCCURRENCES + 1);
    for (int t = 0; t < PNMF_MAX_OCCURRENCES; t++) pnmf_model_add(&md, 1, 0, 1 + t, t % 16);
    CHECK(pnmf_model_write(&md, &buf, &size) == 0);
    PnmfWindowModel b;
    char err[128];
    CHECK(pnmf_model_read(buf, size, 4, 4, 4, 4, 2, 2, 1, 1, &b, err, sizeof err) == 0);
    CHECK(same_model(&md, &b));
    pnmf_model_free(&b);
    pnmf_free(buf);
    pnmf_model_add(&md, 1, 0, 1, 0);
    CHECK(pnmf_model_write(&md, &buf, &size) == PNMF_ERR_ARG);
    pnmf_model_free(&md);
    #undef MODEL
}

/* ---- hand-made payloads ---- */

typedef struct Pl {
    uint8_t b[256];
    size_t n;
} Pl;

static void pu(Pl *p, uint64_t v)
{
    while (v >= 0x80) p->b[p->n++] = (uint8_t)(v | 0x80), v >>= 7;
    p->b[p->n++] = (uint8_t)v;
}

static void ps(Pl *p, int64_t v) { pu(p, v < 0 ? ((uint64_t)(-(v + 1)) << 1) | 1 : (uint64_t)v << 1); }

/* Read p for a 4x6 torus showing 3x5, m frames, at most 3 components,
 * w_step 4 (levels -1024..1024), r_step 16 (coefficients 1..4095). */
static int rd(const Pl *p, int m, PnmfWindowModel *md, char *err, size_t errlen)
{
    err[0] = 0;
    const int ret = pnmf_model_read(p->b, p->n, 4, 6, 3, 5, m, 3, 4, 16, md, err, errlen);
    if (ret == 0 && md->comp == NULL) return -999; /* a success must give a model */
    return ret;
}

/* flags k=1 | 1x1 | level | counts | coefficient - 1 | row | column */
static Pl one(uint64_t flags, int64_t level, uint64_t count, uint64_t coef1, int64_t dy, int64_t dx)
{
    Pl p = { { 0 }, 0 };
    pu(&p, flags);
    pu(&p, 1);
    pu(&p, 1), pu(&p, 1);
    ps(&p, level);
    pu(&p, count);
    for (uint64_t t = 0; t < count; t++) pu(&p, coef1);
    for (uint64_t t = 0; t < count; t++) ps(&p, dy);
    for (uint64_t t = 0; t < count; t++) ps(&p, dx);
    return p;
}

#define REFUSED(pl, m, code, why) do { \
    PnmfWindowModel md_; \
    char e_[160]; \
    const int r_ = rd(&(pl), (m), &md_, e_, sizeof e_); \
    CHECK_MSG(r_ == (code) && strstr(e_, (why)), "got %d '%s', expected %d '%s'", r_, e_, (code), (why)); \
    if (r_ == 0) pnmf_model_free(&md_); \
} while (0)

#define ACCEPTED(pl, m, md) do { \
    char e_[160]; \
    const int r_ = rd(&(pl), (m), &(md), e_, sizeof e_); \
    CHECK_MSG(r_ == 0, "refused: %d '%s'", r_, e_); \
} while (0)

static void test_reader_rules(void)
{
    PnmfWindowModel md;
    char err[160];
    Pl p = one(0, 1024, 1, 4094, 1, -2);
    ACCEPTED(p, 1, md);
    if (md.comp) {
        CHECK(md.k == 1 && md.comp[0].bh == 1 && md.comp[0].lev[0] == 1024);
        CHECK(md.first[0] == 0 && md.first[1] == 1 && md.ent[0].c == 4095 && md.ent[0].i == 0);
        CHECK(md.ent[0].p == 1 * 6 + 4); /* (0 + 1, 0 - 2 mod 6) */
        CHECK(md.vis_rows == 3 && md.vis_cols == 5);
        pnmf_model_free(&md);
    }
    p = one(0, -1024, 1, 0, -2, 2); /* the other ends: -(rows div 2), cols - cols div 2 - 1 */
    ACCEPTED(p, 1, md);
    if (md.comp) {
        CHECK(md.comp[0].lev[0] == -1024 && md.ent[0].c == 1 && md.ent[0].p == 2 * 6 + 2);
        pnmf_model_free(&md);
    }

    /* flags: bits 0 to 15 are defined (the residual layer and its
     * options, carried components, the sprite layer and its masks:
     * test_sprite, sub-pixel vectors: test_subpel, deblocking: test_deblock,
     * sample-context levels: test_lossless, directional intra: test_intra,
     * the step cascade: test_residual, palette blocks: test_palette,
     * neighbour contexts and median vectors: test_nbctx, context-coded
     * placements: test_sprite, compound prediction: test_compound, weighted
     * prediction: test_wpred, coding order: test_order, the long-term
     * reference: test_tf, the restoration filter: test_pfilter, the warp:
     * test_subpel), bits 24 and above are refused; bits 12, 14, 15, 17,
     * 18, 21 and 22 need bit 0, bit 16 needs bit 5, bit 19 bit 12, bits 20
     * and 23 bit 6 */
    p = one(1u << 12, 1, 1, 0, 0, 0);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "a step cascade without a residual layer");
    p = one(1u << 14, 1, 1, 0, 0, 0);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "neighbour contexts without a residual layer");
    p = one(1u << 15, 1, 1, 0, 0, 0);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "median vectors without a residual layer");
    p = one(1u << 16 | 1, 1, 1, 0, 0, 0);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "context-coded placements without a sprite layer");
    p = one(1u << 17, 1, 1, 0, 0, 0);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "compound prediction without a residual layer");
    p = one(1u << 18, 1, 1, 0, 0, 0);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "weighted prediction without a residual layer");
    p = one(1u << 19 | 1, 1, 1, 0, 0, 0);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "a coding order without a step cascade");
    p = one(1u << 20 | 1, 1, 1, 0, 0, 0);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "sharp interpolation without sub-pixel vectors");
    p = one(1u << 21, 1, 1, 0, 0, 0);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "a long-term reference without a residual layer");
    {   /* bit 21 is format 18's: a payload of version 17 with it is refused */
        PnmfWindowModel md_;
        char e_[160] = "";
        p = one(1u << 21 | 1, 1, 1, 0, 0, 0);
        const int r_ = pnmf_model_read_version(17, p.b, p.n, 4, 6, 3, 5, 1, 3, 4, 16, &md_, e_, sizeof e_);
        CHECK_MSG(r_ == PNMF_ERR_CORRUPT && strstr(e_, "unknown features"), "version 17, bit 21: %d '%s'", r_, e_);
        if (r_ == 0) pnmf_model_free(&md_);
    }
    p = one(1u << 22, 1, 1, 0, 0, 0);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "a restoration filter without a residual layer");
    p = one(1u << 23 | 1, 1, 1, 0, 0, 0);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "a warp without sub-pixel vectors");
    p = one(1u << 24 | 1u << 3 | 1, 1, 1, 0, 0, 0);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "lossy sample-context levels without their stream");
    {   /* bit 24 is format 21's: a payload of version 20 with it is refused */
        PnmfWindowModel md_;
        char e_[160] = "";
        p = one(1u << 24 | 1u << 9 | 1u << 3 | 1, 1, 1, 0, 0, 0);
        const int r_ = pnmf_model_read_version(20, p.b, p.n, 4, 6, 3, 5, 1, 3, 4, 16, &md_, e_, sizeof e_);
        CHECK_MSG(r_ == PNMF_ERR_CORRUPT && strstr(e_, "unknown features"), "version 20, bit 24: %d '%s'", r_, e_);
        if (r_ == 0) pnmf_model_free(&md_);
    }
    const uint64_t undefined[] = { 1ull << 25, 1ull << 26, 1ull << 33, 1ull << 42, 1ull << 51, 1ull << 60, 1ull << 63 };
    for (size_t u = 0; u < sizeof(undefined) / sizeof(undefined[0]); u++) {
        p = one(undefined[u], 1, 1, 0, 0, 0);
        REFUSED(p, 1, PNMF_ERR_CORRUPT, "unknown features");
    }
    /* k */
    p.n = 0, pu(&p, 0), pu(&p, 0);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "window has 0 components");
    p.n = 0, pu(&p, 0), pu(&p, 4);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "window has 4 components, the header allows 1..3");
    p.n = 0, pu(&p, 0), pu(&p, 1ull << 31);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "window has 2147483648 components");
    /* block sizes: within the torus (not just the visible part), both 0 or neither */
    p.n = 0, pu(&p, 0), pu(&p, 1), pu(&p, 5), pu(&p, 1);
    for (int q = 0; q < 12; q++) pu(&p, 0);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "component 0 is 5x1, larger than the 4x6 torus");
    p.n = 0, pu(&p, 0), pu(&p, 1), pu(&p, 1), pu(&p, 7);
    for (int q = 0; q < 12; q++) pu(&p, 0);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "larger than the 4x6 torus");
    p.n = 0, pu(&p, 0), pu(&p, 1), pu(&p, 0), pu(&p, 1);
    for (int q = 0; q < 12; q++) pu(&p, 0);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "component 0 is 0x1");
    /* a 4x6 block (the whole torus, larger than the visible 3x5) is fine */
    p.n = 0, pu(&p, 0), pu(&p, 1), pu(&p, 4), pu(&p, 6);
    for (int q = 0; q < 24; q++) ps(&p, q % 2 ? -1 : 1); /* rows 1 0 1 0 1 0, 2 1 2 1 2 1, 3 2 ... */
    pu(&p, 1), pu(&p, 0), ps(&p, 0), ps(&p, 0);
    ACCEPTED(p, 1, md);
    if (md.comp) {
        CHECK(md.comp[0].lev[0] == 1 && md.comp[0].lev[1] == 0 && md.comp[0].lev[6] == 2);
        pnmf_model_free(&md);
    }

    /* levels: signed, |level| <= 4096 div w_step = 1024, predicted */
    p = one(0, 1025, 1, 0, 0, 0);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "component 0: level out of range");
    p = one(0, -1025, 1, 0, 0, 0);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "component 0: level out of range");
    /* in range as a difference, out of range after the prediction */
    p.n = 0, pu(&p, 0), pu(&p, 1), pu(&p, 1), pu(&p, 2);
    ps(&p, -1000), ps(&p, -25);
    pu(&p, 1), pu(&p, 0), ps(&p, 0), ps(&p, 0);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "level out of range");
    p.n = 0, pu(&p, 0), pu(&p, 1), pu(&p, 1), pu(&p, 2);
    ps(&p, -1000), ps(&p, -24); /* -1024: fine */
    pu(&p, 1), pu(&p, 0), ps(&p, 0), ps(&p, 0);
    ACCEPTED(p, 1, md);
    if (md.comp) {
        CHECK(md.comp[0].lev[0] == -1000 && md.comp[0].lev[1] == -1024);
        pnmf_model_free(&md);
    }
    /* the first column is predicted from above: 2x1 block 7, 7 + 1017 = 1024 */
    p.n = 0, pu(&p, 0), pu(&p, 1), pu(&p, 2), pu(&p, 1);
    ps(&p, 7), ps(&p, 1018);
    pu(&p, 1), pu(&p, 0), ps(&p, 0), ps(&p, 0);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "level out of range");
    /* a difference near 2^63 is refused, not summed (UBSan would trap) */
    p.n = 0, pu(&p, 0), pu(&p, 1), pu(&p, 1), pu(&p, 2);
    ps(&p, 1), pu(&p, 0xFFFFFFFFFFFFFFFEull);
    pu(&p, 1), pu(&p, 0), ps(&p, 0), ps(&p, 0);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "level out of range");
    p.n = 0, pu(&p, 0), pu(&p, 1), pu(&p, 1), pu(&p, 2);
    ps(&p, -1), pu(&p, 0xFFFFFFFFFFFFFFFFull);
    pu(&p, 1), pu(&p, 0), ps(&p, 0), ps(&p, 0);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "level out of range");

    /* occurrence counts: 0..64, and 0 for an empty component */
    p = one(0, 5, 64, 0, 0, 0);
    ACCEPTED(p, 1, md);
    if (md.comp) {
        CHECK(md.first[1] == 64 && md.ent[63].i == 0);
        pnmf_model_free(&md);
    }
    p.n = 0, pu(&p, 0), pu(&p, 1), pu(&p, 1), pu(&p, 1), ps(&p, 5), pu(&p, 65);
    for (int q = 0; q < 3 * 65; q++) pu(&p, 0);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "component 0 appears 65 times in frame 0, over 64");
    p.n = 0, pu(&p, 0), pu(&p, 1), pu(&p, 1), pu(&p, 1), ps(&p, 5), pu(&p, 1ull << 40);
    for (int q = 0; q < 9; q++) pu(&p, 0);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "over 64");
    /* k = 2, component 1 empty; frame 1 names it */
    p.n = 0, pu(&p, 0), pu(&p, 2), pu(&p, 1), pu(&p, 1), pu(&p, 0), pu(&p, 0);
    ps(&p, 9);
    pu(&p, 1), pu(&p, 1), pu(&p, 0), pu(&p, 1); /* n[0][0], n[0][1], n[1][0], n[1][1] */
    for (int q = 0; q < 9; q++) pu(&p, 0);
    REFUSED(p, 2, PNMF_ERR_CORRUPT, "entry of the empty component 1");

    /* coefficients: stored c - 1 < 65535 div r_step = 4095 */
    p = one(0, 5, 1, 4095, 0, 0);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "coefficient out of range");
    p = one(0, 5, 1, 1ull << 63, 0, 0);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "coefficient out of range");

    /* shifts: wrapped differences in [-(size div 2), size - size div 2) */
    p = one(0, 5, 1, 0, 2, 0);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "shift out of range");
    p = one(0, 5, 1, 0, -3, 0);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "shift out of range");
    p = one(0, 5, 1, 0, 0, 3);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "shift out of range");
    p = one(0, 5, 1, 0, 0, -4);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "shift out of range");

    /* varints: 11 bytes, or a 10th byte with more than bit 63 */
    p.n = 0, pu(&p, 0);
    for (int q = 0; q < 10; q++) p.b[p.n++] = 0x80;
    p.b[p.n++] = 0x00;
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "truncated window payload");
    p.n = 0, pu(&p, 0);
    for (int q = 0; q < 9; q++) p.b[p.n++] = 0x81;
    p.b[p.n++] = 0x02;
    for (int q = 0; q < 8; q++) pu(&p, 0);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "truncated window payload");
    /* the empty payload, the flags alone */
    p.n = 0;
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "truncated window payload");
    pu(&p, 0);
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "truncated window payload");
    /* a trailing byte */
    p = one(0, 5, 2, 0, 0, 0);
    p.b[p.n++] = 0;
    REFUSED(p, 1, PNMF_ERR_CORRUPT, "1 unexpected bytes after the window payload");
    /* bad quantizer steps */
    p = one(0, 5, 1, 0, 0, 0);
    CHECK(pnmf_model_read(p.b, p.n, 4, 6, 3, 5, 1, 3, 0, 16, &md, err, sizeof err) == PNMF_ERR_CORRUPT);

    /* Announced entries take 3 bytes each: 255 components x 1024 frames x
     * 64 would be 16.7 million entries (200 MB); the counts alone (255 kB)
     * are refused before anything that size is allocated. */
    {
        const int k = 255, m = 1024;
        const size_t n = 1 + 2 + 2 * (size_t)k + k + (size_t)k * m; /* k takes 2 bytes */
        uint8_t *big = malloc(n);
        size_t q = 0;
        big[q++] = 0;
        big[q++] = 0x80 | (k & 0x7f), big[q++] = k >> 7;
        for (int i = 0; i < k; i++) big[q++] = 1, big[q++] = 1;
        for (int i = 0; i < k; i++) big[q++] = 0;
        while (q < n) big[q++] = 64;
        CHECK(pnmf_model_read(big, q, 4, 6, 4, 6, m, k, 4, 16, &md, err, sizeof err) == PNMF_ERR_CORRUPT);
        CHECK_MSG(strstr(err, "truncated window payload"), "'%s'", err);
        free(big);
    }
}

/* The decode work limit: m * (2^28 + 32 * rows * cols) block samples. On a
 * 128x256 torus that is exactly 8224 full-torus entries for one frame:
 * written and read at the limit, refused one entry over. */
static void test_work_limit(void)
{
    enum { R = 128, C = 256, K = 129 };
    CHECK(pnmf_model_max_work(R, C, 1) == (1ull << 28) + (1ull << 20));
    CHECK(pnmf_model_max_work(R, C, 3) == 3 * ((1ull << 28) + (1ull << 20)));
    CHECK(pnmf_model_max_work(16384, 2 * 16384, 1024) == 1024 * ((1ull << 28) + 32ull * (1ull << 29)));
    PnmfWindowModel md, back;
    CHECK(pnmf_model_alloc(&md, R, C, R - 28, C - 56, 1, K, 8225) == 0);
    for (int i = 0; i < K; i++) {
        md.comp[i].bh = R, md.comp[i].bw = C;
        md.comp[i].lev = pnmf_calloc((size_t)R * C, sizeof(int16_t));
        md.comp[i].lev[i] = 1;
        for (int t = 0; t < (i < K - 1 ? 64 : 32); t++) pnmf_model_add(&md, 0, i, 1, t);
    }
    CHECK(md.first[1] == 8224);
    CHECK(pnmf_model_work(&md) == pnmf_model_max_work(R, C, 1));
    uint8_t *buf = NULL;
    size_t size = 0;
    char err[160] = "";
    CHECK(pnmf_model_write(&md, &buf, &size) == 0);
    int ret = buf ? pnmf_model_read(buf, size, R, C, R - 28, C - 56, 1, 255, 1, 1, &back, err, sizeof err) : -1;
    CHECK_MSG(ret == 0, "at the limit: %s", err);
    if (ret == 0) {
        CHECK(same_model(&md, &back));
        pnmf_model_free(&back);
    }
    /* one more entry: the writer refuses, and the reader, given the payload
     * with that count raised and the entry's 3 bytes added */
    pnmf_model_add(&md, 0, K - 1, 1, 99);
    uint8_t *b2 = NULL;
    size_t s2;
    CHECK(pnmf_model_write(&md, &b2, &s2) == PNMF_ERR_LIMIT);
    pnmf_free(b2);
    if (buf) {
        /* the counts are the last K bytes before the 3 * 8224 entry bytes */
        const size_t at = size - 3 * 8224 - 1;
        CHECK(buf[at] == 32 && buf[at - 1] == 64);
        uint8_t *over = malloc(size + 3);
        memcpy(over, buf, size);
        over[at] = 33;
        over[size] = over[size + 1] = over[size + 2] = 0;
        ret = pnmf_model_read(over, size + 3, R, C, R - 28, C - 56, 1, 255, 1, 1, &back, err, sizeof err);
        CHECK_MSG(ret == PNMF_ERR_LIMIT && strstr(err, "decode work 269516800 over the limit 269484032"), "over the limit: %d %s", ret, err);
        if (ret == 0) pnmf_model_free(&back);
        free(over);
    }
    pnmf_free(buf);
    pnmf_model_free(&md);
}

/* ---- shift prediction, byte for byte ---- */

/* The shifts of docs/format.md, "Shift prediction": occurrence t of a
 * component in a frame is predicted by occurrence t of the latest earlier
 * frame that had one, else by occurrence t - 1 of this frame, else 0. */
static void test_shift_prediction(void)
{
    /* torus 10 x 12; comp 0 1x1. Frame 0: (3,4), (5,11). Frame 1: none.
     * Frame 2: (4,4). Frame 3: (4,5), (9,0), (0,1). */
    PnmfWindowModel md;
    CHECK(pnmf_model_alloc(&md, 10, 12, 10, 12, 4, 1, 8) == 0);
    md.comp[0].bh = md.comp[0].bw = 1;
    md.comp[0].lev = pnmf_malloc_array(1, sizeof(int16_t));
    md.comp[0].lev[0] = -3;
    pnmf_model_add(&md, 0, 0, 1, 3 * 12 + 4);
    pnmf_model_add(&md, 0, 0, 2, 5 * 12 + 11);
    pnmf_model_add(&md, 2, 0, 3, 4 * 12 + 4);
    pnmf_model_add(&md, 3, 0, 4, 4 * 12 + 5);
    pnmf_model_add(&md, 3, 0, 5, 9 * 12 + 0);
    pnmf_model_add(&md, 3, 0, 6, 0 * 12 + 1);
    uint8_t *buf;
    size_t size;
    CHECK(pnmf_model_write(&md, &buf, &size) == 0);
    Pl w = { { 0 }, 0 };
    pu(&w, 0), pu(&w, 1), pu(&w, 1), pu(&w, 1), ps(&w, -3);
    pu(&w, 2), pu(&w, 0), pu(&w, 1), pu(&w, 3);
    for (int c = 0; c < 6; c++) pu(&w, (uint64_t)c);
    /* rows: f0: 3-0, 5-3; f2: 4-3; f3: 4-4, 9-5, 0 - 9 (t=2: none earlier,
     * predicted by t=1 of frame 3) = -9 wrapped = 1 */
    ps(&w, 3), ps(&w, 2), ps(&w, 1), ps(&w, 0), ps(&w, 4), ps(&w, 1);
    /* columns: f0: 4, 11-4=7 -> -5; f2: 4-4=0; f3: 5-4=1, 0-11=-11 -> 1, 1-0=1 */
    ps(&w, 4), ps(&w, -5), ps(&w, 0), ps(&w, 1), ps(&w, 1), ps(&w, 1);
    CHECK_MSG(size == w.n && !memcmp(buf, w.b, size), "payload of %zu bytes, expected %zu", size, w.n);
    pnmf_free(buf);
    pnmf_model_free(&md);
}

/* ---- reconstruction ---- */

/* The integer reconstruction against the definition in exact arithmetic
 * (all values are dyadic and far below 2^53, so double is exact): the sum
 * over the frame's entries of the shifted, scaled blocks, wrapped on the
 * torus, kept where it lands in the visible corner; round half up, clamp. */
static void test_diamond_int(void)
{
    long inside = 0, clipped = 0, wrapped = 0;
    for (int t = 0; t < 60; t++) {
        const int canvas = t % 3 != 0;
        const int rows = 1 + urn(9), cols = 1 + urn(11);
        const int vr = canvas ? 1 + (int)urn(rows) : rows, vc = canvas ? 1 + (int)urn(cols) : cols;
        const int m = 3, k = 4, ws = 1 << urn(4), rst = 1 + urn(3);
        PnmfWindowModel md;
        /* coefficients up to 4 (c * r_step <= 64): most pixels in range */
        random_model(&md, rows, cols, vr, vc, m, k, ws, rst, 3, 64 / rst);
        const int n = vr * vc;
        int64_t *acc = malloc(sizeof(int64_t) * n);
        uint8_t *out = malloc(n);
        double *ref = malloc(sizeof(double) * n);
        int same = 1;
        for (int j = 0; j < m; j++) {
            for (int q = 0; q < n; q++) acc[q] = 0x5555; /* the decoder clears it */
            pnmf_diamond_int(&md, j, ws, rst, acc, out);
            memset(ref, 0, sizeof(double) * n);
            for (int e = md.first[j]; e < md.first[j + 1]; e++) {
                const PnmfEntry *en = &md.ent[e];
                const PnmfComp *c = &md.comp[en->i];
                const int py = en->p / cols, px = en->p % cols;
                for (int y = 0; y < c->bh; y++)
                    for (int x = 0; x < c->bw; x++) {
                        const int ty = (y + py) % rows, tx = (x + px) % cols;
                        wrapped += y + py >= rows || x + px >= cols;
                        if (ty >= vr || tx >= vc) continue;
                        ref[ty * vc + tx] += (en->c * rst / 16.0) * (c->lev[y * c->bw + x] * ws / 256.0);
                    }
            }
            for (int q = 0; q < n; q++) {
                double v = floor(ref[q] + 0.5);
                clipped += v < 0 || v > 255;
                inside += v > 0 && v < 255;
                v = v < 0 ? 0 : v > 255 ? 255 : v;
                same &= out[q] == (uint8_t)v;
            }
        }
        CHECK_MSG(same, "integer diamond on %dx%d of a %dx%d torus", vr, vc, rows, cols);
        free(acc), free(out), free(ref);
        pnmf_model_free(&md);
    }
    /* the cases the test is for did occur */
    CHECK_MSG(inside > 1000 && clipped > 100 && wrapped > 1000, "%ld in range, %ld clamped, %ld wrapped",
              inside, clipped, wrapped);
}

/* By hand: a component placed twice in a frame adds up; on a canvas, a
 * block wrapping across both torus edges shows only its visible parts, and
 * negative levels darken. */
static void test_diamond_cases(void)
{
    int64_t acc[64];
    uint8_t out[64];
    /* 6x8 torus showing 4x5; comp 0 2x2 of level 256 (1.0 at w_step 1) */
    PnmfWindowModel md;
    CHECK(pnmf_model_alloc(&md, 6, 8, 4, 5, 2, 2, 8) == 0);
    md.comp[0].bh = md.comp[0].bw = 2;
    md.comp[0].lev = pnmf_malloc_array(4, sizeof(int16_t));
    for (int q = 0; q < 4; q++) md.comp[0].lev[q] = 256;
    /* comp 1 3x4: row y, column x has level 16 * (4y + x + 1), but -160
     * at (1, 1) */
    md.comp[1].bh = 3, md.comp[1].bw = 4;
    md.comp[1].lev = pnmf_malloc_array(12, sizeof(int16_t));
    for (int q = 0; q < 12; q++) md.comp[1].lev[q] = (int16_t)(16 * (q + 1));
    md.comp[1].lev[5] = -160;
    /* frame 0: comp 0 at (0,0) x 10 and again at (1,1) x 20: the overlap
     * (1,1) gets 30 */
    pnmf_model_add(&md, 0, 0, 160, 0);
    pnmf_model_add(&md, 0, 0, 320, 1 * 8 + 1);
    /* frame 1: comp 1 at (5, 7) x 16 (c = 256: a level 16 shows as 1): rows 5, 0, 1 and columns 7,
     * 0, 1, 2; visible: rows 0, 1 (block rows 1, 2), columns 0..2 (block
     * columns 1..3); also comp 0 at (3, 4) x 100: only (3, 4) is visible */
    pnmf_model_add(&md, 1, 0, 1600, 3 * 8 + 4);
    pnmf_model_add(&md, 1, 1, 256, 5 * 8 + 7);
    pnmf_diamond_int(&md, 0, 1, 1, acc, out);
    const uint8_t f0[20] = { 10, 10, 0, 0, 0,
                             10, 30, 20, 0, 0,
                             0, 20, 20, 0, 0,
                             0, 0, 0, 0, 0 };
    CHECK(!memcmp(out, f0, 20));
    pnmf_diamond_int(&md, 1, 1, 1, acc, out);
    /* block (1, 1..3) = -160 -> 0 (clamped), 112/16 = 7, 128/16 = 8;
     * block (2, 1..3) = 160/16 = 10, 11, 12 */
    const uint8_t f1[20] = { 0, 7, 8, 0, 0,
                             10, 11, 12, 0, 0,
                             0, 0, 0, 0, 0,
                             0, 0, 0, 0, 100 };
    CHECK_MSG(!memcmp(out, f1, 20), "%d %d %d / %d %d %d / %d", out[0], out[1], out[2], out[5], out[6],
              out[7], out[19]);
    /* a negative level under a positive placement darkens it: comp 1 over
     * comp 0 in the same frame is a sum, not a max */
    pnmf_model_free(&md);
    CHECK(pnmf_model_alloc(&md, 4, 4, 4, 4, 1, 2, 4) == 0);
    md.comp[0].bh = md.comp[0].bw = 1;
    md.comp[0].lev = pnmf_malloc_array(1, sizeof(int16_t));
    md.comp[0].lev[0] = 256;
    md.comp[1].bh = md.comp[1].bw = 1;
    md.comp[1].lev = pnmf_malloc_array(1, sizeof(int16_t));
    md.comp[1].lev[0] = -256;
    pnmf_model_add(&md, 0, 0, 16 * 200, 5);
    pnmf_model_add(&md, 0, 1, 16 * 50, 5);
    pnmf_model_add(&md, 0, 1, 8, 6); /* -0.5: rounds half up to 0 */
    pnmf_diamond_int(&md, 0, 1, 1, acc, out);
    CHECK(out[5] == 150 && out[6] == 0 && out[0] == 0);
    /* +0.5 rounds up to 1 */
    md.ent[2].c = 8, md.comp[1].lev[0] = 256;
    pnmf_diamond_int(&md, 0, 1, 1, acc, out);
    CHECK(out[6] == 1 && out[5] == 250);
    pnmf_model_free(&md);
}

static void test_layout(void)
{
    enum { Wd = 7, Ht = 5 };
    uint8_t f[Wd * Ht], l[Wd * Ht], g[Wd * Ht];
    for (int q = 0; q < Wd * Ht; q++) f[q] = (uint8_t)(q * 7);
    pnmf_layout_from_frame(PNMF_SHIFT_VECTOR, Wd, Ht, f, Wd, l);
    /* the paper's column stacking: v[i + (j-1) r] = M[i][j] (1-based) */
    CHECK(l[0] == f[0] && l[1] == f[Wd] && l[Ht] == f[1] && l[2 * Ht + 3] == f[3 * Wd + 2]);
    pnmf_layout_to_frame(PNMF_SHIFT_VECTOR, Wd, Ht, l, g, Wd);
    CHECK(!memcmp(f, g, sizeof f));
    pnmf_layout_from_frame(PNMF_SHIFT_TORUS, Wd, Ht, f, Wd, l);
    CHECK(!memcmp(f, l, sizeof f));
    pnmf_layout_from_frame(PNMF_SHIFT_CANVAS, Wd, Ht, f, Wd, l);
    CHECK(!memcmp(f, l, sizeof f));
    /* canvas sides: at least dim + pad, only factors 2, 3, 5 */
    CHECK(pnmf_canvas_size(48, 0) == 64);    /* 48 + 16 */
    CHECK(pnmf_canvas_size(160, 0) == 180);  /* 160 + 20 = 180 */
    CHECK(pnmf_canvas_size(11, 3) == 15);    /* 14 = 2 * 7 -> 15 */
    CHECK(pnmf_canvas_size(1, 0) == 18);     /* 17 -> 18 */
}

int main(void)
{
    test_steps();
    test_component();
    test_add();
    test_payload();
    test_carry();
    test_writer_refusals();
    test_reader_rules();
    test_work_limit();
    test_shift_prediction();
    test_diamond_int();
    test_diamond_cases();
    test_layout();
    return test_summary("test_model");
}
