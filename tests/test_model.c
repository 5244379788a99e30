/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Quantization, the window payload and the integer diamond product. */
#include <stdlib.h>
#include <string.h>

#include "diamond.h"
#include "model.h"
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

static void test_component(void)
{
    enum { R = 10, C = 13, N = R * C };
    for (int t = 0; t < 50; t++) {
        float w[N] = { 0 }, d[N], back[N] = { 0 };
        /* a blob that may wrap around either edge */
        const int y0 = urn(R), x0 = urn(C), bh = 1 + urn(5), bw = 1 + urn(6);
        for (int y = 0; y < bh; y++)
            for (int x = 0; x < bw; x++) w[((y0 + y) % R) * C + (x0 + x) % C] = 0.1f + urn(1000) / 300.0f;
        const int step = 1 << urn(4);
        PnmfComp c;
        float scale;
        int q0;
        CHECK(pnmf_quant_component(R, C, w, step, &c, &scale, &q0) == 0);
        CHECK_MSG(c.bh == bh && c.bw == bw, "block %dx%d, blob %dx%d", c.bh, c.bw, bh, bw);
        CHECK(q0 == y0 * C + x0);
        pnmf_dequant_component(R, C, &c, step, d);
        pnmf_shift_add(R, C, back, d, scale, q0);
        double maxerr = 0;
        for (int x = 0; x < N; x++) maxerr = fmax(maxerr, fabs(back[x] - w[x]));
        CHECK_MSG(maxerr <= scale * (step / 512.0 + 1e-5), "quant err %g step %d scale %g", maxerr, step, scale);
        free(c.lev);
    }
}

static void random_model(PnmfWindowModel *md, int rows, int cols, int m, int k, int w_step, int r_step)
{
    pnmf_model_alloc(md, rows, cols, m, k);
    for (int i = 0; i < k; i++) {
        PnmfComp *c = &md->comp[i];
        if (i == 1) continue; /* an empty component */
        c->bh = 1 + urn(rows), c->bw = 1 + urn(cols);
        c->lev = malloc(sizeof(uint16_t) * c->bh * c->bw);
        for (int q = 0; q < c->bh * c->bw; q++) c->lev[q] = (uint16_t)urn(PNMF_MAX_LEVEL_VALUE / w_step + 1);
    }
    for (int j = 0; j < m; j++)
        for (int i = 0; i < k; i++) {
            PnmfEntry *e = &md->ent[j * k + i];
            e->c = (i == 1 || urn(4) == 0) ? 0 : urn(PNMF_MAX_COEF_VALUE / r_step / 64 + 1);
            e->p = e->c ? (int)urn(rows * cols) : 0;
        }
}

static void test_payload(void)
{
    for (int t = 0; t < 30; t++) {
        const int rows = t % 3 == 0 ? 1 : 2 + urn(20), cols = 1 + urn(30), m = 1 + urn(12), k = 2 + urn(5);
        const int ws = 1 << urn(6), rst = 1 + urn(3);
        PnmfWindowModel a, b;
        random_model(&a, rows, cols, m, k, ws, rst);
        uint8_t *buf, *buf2;
        size_t size, size2;
        CHECK(pnmf_model_write(&a, &buf, &size) == 0);
        char err[128];
        CHECK(pnmf_model_read(buf, size, rows, cols, m, k, ws, rst, &b, err, sizeof err) == 0);
        int same = b.k == a.k && b.m == a.m;
        for (int i = 0; same && i < k; i++) {
            same &= a.comp[i].bh == b.comp[i].bh && a.comp[i].bw == b.comp[i].bw;
            if (same && a.comp[i].bh)
                same &= !memcmp(a.comp[i].lev, b.comp[i].lev, sizeof(uint16_t) * a.comp[i].bh * a.comp[i].bw);
        }
        for (int q = 0; same && q < m * k; q++)
            same &= a.ent[q].c == b.ent[q].c && (!a.ent[q].c || a.ent[q].p == b.ent[q].p);
        CHECK_MSG(same, "payload round trip %d", t);
        CHECK(pnmf_model_write(&b, &buf2, &size2) == 0);
        CHECK(size2 == size && !memcmp(buf, buf2, size));
        /* every truncation is refused; so are trailing bytes and a tighter limit */
        int refused = 0;
        for (size_t l = 0; l < size; l++) {
            PnmfWindowModel c;
            refused += pnmf_model_read(buf, l, rows, cols, m, k, ws, rst, &c, err, sizeof err) < 0;
        }
        CHECK(refused == (int)size);
        uint8_t *longer = malloc(size + 1);
        memcpy(longer, buf, size);
        longer[size] = 0;
        PnmfWindowModel c;
        CHECK(pnmf_model_read(longer, size + 1, rows, cols, m, k, ws, rst, &c, err, sizeof err) < 0);
        CHECK(pnmf_model_read(buf, size, rows, cols, m, k - 1, ws, rst, &c, err, sizeof err) < 0);
        /* random corruption never crashes (ASan/UBSan builds watch this) */
        for (int f = 0; f < 200; f++) {
            memcpy(longer, buf, size);
            longer[urn((unsigned)size)] ^= (uint8_t)(1 + urn(255));
            if (pnmf_model_read(longer, size, rows, cols, m, k, ws, rst, &c, err, sizeof err) == 0)
                pnmf_model_free(&c);
        }
        free(longer);
        free(buf), free(buf2);
        pnmf_model_free(&a), pnmf_model_free(&b);
    }
}

/* Hostile varints: a level difference near 2^63 must be refused, not
 * overflow (UBSan builds would trap on the overflow). */
static void test_hostile(void)
{
    /* k=1; block 1x2; levels +1 then zigzag 0xFFFFFFFFFFFFFFFE (2^63 - 1);
     * one frame's coefficient 1; shifts 0, 0 */
    const uint8_t p[] = { 1, 1, 2, 2, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 1, 0, 0 };
    PnmfWindowModel md;
    char err[128] = "";
    CHECK(pnmf_model_read(p, sizeof p, 4, 4, 1, 1, 1, 1, &md, err, sizeof err) < 0);
    CHECK_MSG(strstr(err, "level out of range"), "reason '%s'", err);
    /* an 11-byte varint and a block larger than the frame */
    const uint8_t q[] = { 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00 };
    CHECK(pnmf_model_read(q, sizeof q, 4, 4, 1, 1, 1, 1, &md, err, sizeof err) < 0);
    const uint8_t r[] = { 1, 5, 1, 0, 0, 0, 0, 0, 1, 0, 0 };
    CHECK(pnmf_model_read(r, sizeof r, 4, 4, 1, 1, 1, 1, &md, err, sizeof err) < 0);
}

/* The integer reconstruction against the definition in exact arithmetic
 * (all values are dyadic, so double is exact): round half up, clamp. */
static void test_diamond_int(void)
{
    for (int t = 0; t < 40; t++) {
        const int rows = 1 + urn(9), cols = 1 + urn(11), m = 3, k = 4, ws = 1 << urn(4), rst = 1 + urn(2);
        PnmfWindowModel md;
        random_model(&md, rows, cols, m, k, ws, rst);
        const int n = rows * cols;
        int64_t *acc = malloc(sizeof(int64_t) * n);
        uint8_t *out = malloc(n);
        double *ref = malloc(sizeof(double) * n);
        int same = 1;
        for (int j = 0; j < m; j++) {
            pnmf_diamond_int(&md, j, ws, rst, acc, out);
            memset(ref, 0, sizeof(double) * n);
            for (int i = 0; i < k; i++) {
                const PnmfEntry *e = &md.ent[j * k + i];
                const PnmfComp *c = &md.comp[i];
                if (!e->c) continue;
                const int py = e->p / cols, px = e->p % cols;
                for (int y = 0; y < c->bh; y++)
                    for (int x = 0; x < c->bw; x++)
                        ref[((y + py) % rows) * cols + (x + px) % cols] +=
                            (e->c * rst / 16.0) * (c->lev[y * c->bw + x] * ws / 256.0);
            }
            for (int q = 0; q < n; q++) {
                double v = floor(ref[q] + 0.5);
                v = v < 0 ? 0 : v > 255 ? 255 : v;
                same &= out[q] == (uint8_t)v;
            }
        }
        CHECK_MSG(same, "integer diamond %dx%d", rows, cols);
        free(acc), free(out), free(ref);
        pnmf_model_free(&md);
    }
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
}

int main(void)
{
    test_steps();
    test_component();
    test_payload();
    test_hostile();
    test_diamond_int();
    test_layout();
    return test_summary("test_model");
}
