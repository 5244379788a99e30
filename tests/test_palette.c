/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Palette blocks (palette.h, window flags bit 13): the decisions read back
 * as written, the reader refuses what the format forbids, the decoder
 * draws every sample of a palette block as the direct definition says,
 * the encoder finds exact palettes for blocks of few gray levels, a
 * window with palette blocks writes flag bit 13 and reads back the same,
 * and the default encoder codes a screen's first frame with them, and a
 * continuing window's first showings at the finer steps.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "pnmf/info.h"
#include "pnmf/pnmf.h"
#include "model_write.h"
#include "palette_enc.h"
#include "rangecoder_enc.h"
#include "residual_search.h"
#include "residual_window.h"
#include "test.h"
#include "tuning.h"
#include "varint.h"

static unsigned rs = 4242;
static unsigned urn(unsigned n) { rs = rs * 1103515245u + 12345u; return ((rs >> 8) & 0xFFFFFF) % n; }

/* A random palette block of h x w samples: n colours ascending, some
 * taken from the cache of left and above. */
static void random_block(PnmfPalBlock *p, int h, int w, const PnmfPalBlock *left, const PnmfPalBlock *above)
{
    uint8_t k[PNMF_PAL_CACHE], cls[PNMF_PAL_CACHE], used[256] = { 0 };
    const int nk = pnmf_pal_cache(left, above, k, cls);
    const int n = 1 + (int)urn(PNMF_PAL_MAX);
    int got = 0;
    for (int i = 0; i < nk && got < n; i++)
        if (urn(2)) used[k[i]] = 1, got++;
    while (got < n) {
        const int v = (int)urn(256);
        if (!used[v]) used[v] = 1, got++;
    }
    p->n = (uint8_t)n;
    for (int v = 0, i = 0; v < 256; v++)
        if (used[v]) p->col[i++] = (uint8_t)v;
    memset(p->idx, 0, sizeof p->idx);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) /* runs and repeats, as drawings have */
            p->idx[y * 8 + x] = (uint8_t)(x && urn(3) ? p->idx[y * 8 + x - 1]
                                          : y && urn(2) ? p->idx[(y - 1) * 8 + x] : urn((unsigned)n));
}

/* Rows of blocks, each block's left neighbour the one before it and its
 * above neighbour the one of the row before: written, then read back. */
static void test_roundtrip(void)
{
    enum { BX = 5, BY = 4, NB = BX * BY };
    PnmfPalBlock in[NB], out[NB];
    int hh[NB], ww[NB];
    Buf b = { 0 };
    RcEnc e;
    rc_enc_init(&e, &b);
    PnmfPalCtx c;
    pnmf_pal_ctx_init(&c);
    RcBin o = { .enc = &e };
    for (int q = 0; q < NB; q++) {
        hh[q] = q / BX == BY - 1 ? 3 : 8, ww[q] = q % BX == BX - 1 ? 5 : 8; /* clipped at the edges */
        const PnmfPalBlock *l = q % BX && q % 3 ? &in[q - 1] : NULL, *a = q >= BX ? &in[q - BX] : NULL;
        random_block(&in[q], hh[q], ww[q], l, a);
        CHECK(pnmf_pal_code(&o, &c, l, a, hh[q], ww[q], &in[q]) == 0);
    }
    rc_enc_finish(&e);
    RcDec d;
    rc_dec_init(&d, b.p, b.len, RC_V13);
    pnmf_pal_ctx_init(&c);
    int same = 1;
    for (int q = 0; q < NB; q++) {
        const PnmfPalBlock *l = q % BX && q % 3 ? &out[q - 1] : NULL, *a = q >= BX ? &out[q - BX] : NULL;
        CHECK(pnmf_pal_read(&d, &c, l, a, hh[q], ww[q], &out[q]) == 0);
        same &= out[q].n == in[q].n && !memcmp(out[q].col, in[q].col, in[q].n);
        for (int y = 0; y < hh[q]; y++)
            for (int x = 0; x < ww[q]; x++) same &= out[q].idx[y * 8 + x] == in[q].idx[y * 8 + x];
    }
    CHECK(same);
    CHECK(rc_dec_exact(&d, b.p));
    /* the price is what the coder writes, within the range coder's few bytes */
    PnmfPalCtx c2;
    pnmf_pal_ctx_init(&c2);
    RcBin pr = { .update = 1 };
    for (int q = 0; q < NB; q++)
        pnmf_pal_code(&pr, &c2, q % BX && q % 3 ? &in[q - 1] : NULL, q >= BX ? &in[q - BX] : NULL, hh[q], ww[q],
                      &in[q]);
    CHECK_MSG(pr.bits / 8 > b.len - 8.0 && pr.bits / 8 < b.len + 1.0, "%.1f bits, %zu bytes", pr.bits, b.len);
    /* the writer refuses colours out of order and indices out of the palette */
    PnmfPalBlock bad = in[0];
    bad.n = 2, bad.col[0] = 9, bad.col[1] = 9;
    RcBin po = { 0 };
    CHECK(pnmf_pal_code(&po, &c2, NULL, NULL, 8, 8, &bad) == -1);
    bad.col[1] = 10, bad.idx[5] = 2;
    CHECK(pnmf_pal_code(&po, &c2, NULL, NULL, 8, 8, &bad) == -1);
    pnmf_free(b.p);
}

/* The cache: both palettes merged ascending, each colour once, with its class. */
static void test_cache(void)
{
    PnmfPalBlock l = { .n = 3, .col = { 10, 50, 200 } }, a = { .n = 2, .col = { 50, 60 } };
    uint8_t k[PNMF_PAL_CACHE], cls[PNMF_PAL_CACHE];
    CHECK(pnmf_pal_cache(&l, &a, k, cls) == 4);
    CHECK(k[0] == 10 && cls[0] == 0 && k[1] == 50 && cls[1] == 2 && k[2] == 60 && cls[2] == 1 && k[3] == 200 &&
          cls[3] == 0);
    CHECK(pnmf_pal_cache(NULL, &a, k, cls) == 2 && cls[0] == 1 && cls[1] == 1);
    CHECK(pnmf_pal_cache(NULL, NULL, k, cls) == 0);
}

/* Streams the format refuses, made decision by decision. */
static int read_made(const Buf *b, const PnmfPalBlock *left)
{
    RcDec d;
    PnmfPalCtx c;
    PnmfPalBlock p;
    rc_dec_init(&d, b->p, b->len, RC_V13);
    pnmf_pal_ctx_init(&c);
    return pnmf_pal_read(&d, &c, left, NULL, 8, 8, &p);
}

static void put_size(RcEnc *e, PnmfPalCtx *c, int n)
{
    for (int i = 2, node = 1; i >= 0; i--) {
        const int bit = ((n - 1) >> i) & 1;
        rc_encode(e, &c->size[node], bit);
        node = 2 * node + bit;
    }
}

static void put_byte8(RcEnc *e, int v)
{
    for (int i = 7; i >= 0; i--) rc_encode_direct(e, (v >> i) & 1);
}

static void test_hostile(void)
{
    for (int which = 0; which < 4; which++) {
        Buf b = { 0 };
        RcEnc e;
        PnmfPalCtx c;
        rc_enc_init(&e, &b);
        pnmf_pal_ctx_init(&c);
        PnmfPalBlock left = { .n = 1, .col = { 100 } };
        const PnmfPalBlock *lp = NULL;
        if (which == 0) { /* a second colour past 255: 250, then 250 + 8 */
            put_size(&e, &c, 2);
            put_byte8(&e, 250);
            for (int i = 0; i < 3; i++) rc_encode_direct(&e, 1);
            rc_encode_direct(&e, 0);
            for (int i = 0; i < 3; i++) rc_encode_direct(&e, 0);
        } else if (which == 1) { /* a new colour that the left palette offers */
            lp = &left;
            put_size(&e, &c, 1);
            rc_encode(&e, &c.use[0], 0);
            put_byte8(&e, 100);
        } else if (which == 2) { /* an Exp-Golomb prefix longer than any colour */
            put_size(&e, &c, 2);
            put_byte8(&e, 1);
            for (int i = 0; i < 9; i++) rc_encode_direct(&e, 1);
        } else { /* three colours, the first sample's rank 3 */
            put_size(&e, &c, 3);
            put_byte8(&e, 1);
            rc_encode_direct(&e, 1), rc_encode_direct(&e, 0), rc_encode_direct(&e, 0);
            rc_encode_direct(&e, 1), rc_encode_direct(&e, 0), rc_encode_direct(&e, 0);
            rc_encode(&e, &c.rem[1][1], 1);
            rc_encode(&e, &c.rem[1][3], 1);
        }
        rc_enc_finish(&e);
        CHECK_MSG(read_made(&b, lp) == -1, "case %d read", which);
        pnmf_free(b.p);
    }
    { /* the same three colours with rank 2: read */
        Buf b = { 0 };
        RcEnc e;
        PnmfPalCtx c;
        rc_enc_init(&e, &b);
        pnmf_pal_ctx_init(&c);
        put_size(&e, &c, 3);
        put_byte8(&e, 1);
        rc_encode_direct(&e, 1), rc_encode_direct(&e, 0), rc_encode_direct(&e, 0);
        rc_encode_direct(&e, 1), rc_encode_direct(&e, 0), rc_encode_direct(&e, 0);
        rc_encode(&e, &c.rem[1][1], 1);
        rc_encode(&e, &c.rem[1][3], 0);
        rc_enc_finish(&e);
        RcDec d;
        PnmfPalBlock p;
        rc_dec_init(&d, b.p, b.len, RC_V13);
        pnmf_pal_ctx_init(&c);
        CHECK(pnmf_pal_read(&d, &c, NULL, NULL, 1, 1, &p) == 0 && p.n == 3 && p.col[0] == 1 && p.col[1] == 3 &&
              p.col[2] == 5 && p.idx[0] == 2);
        pnmf_free(b.p);
    }
}

enum { ROWS = 36, COLS = 44, M = 3 };

/* Fine moving patterns of three gray levels, which no prediction finds,
 * over a noisy region (many levels: no palette there); P, the "model",
 * flat. */
static void make_drawing(uint8_t *src, uint8_t *P)
{
    for (int j = 0; j < M; j++)
        for (int y = 0; y < ROWS; y++)
            for (int x = 0; x < COLS; x++) {
                const size_t q = (size_t)j * ROWS * COLS + (size_t)y * COLS + x;
                static const uint8_t lv[3] = { 20, 165, 240 };
                int v = lv[((x + 2 * j) * (y + 1) + y / 2) % 3]; /* fine patterns no prediction finds */
                if (x > 2 * j + 5 && x < 2 * j + 17 && y > 4 && y < 15) v = 60 + 40 * ((x + y) % 3);
                if (y >= 24) v = 100 + (int)urn(120);
                src[q] = (uint8_t)v;
                P[q] = 128;
            }
}

static int read_v(int version, const uint8_t *buf, size_t size, PnmfWindowModel *rd, char *err, size_t errlen)
{
    return pnmf_model_read_version(version, buf, size, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, rd, err, errlen);
}

/* Every sample of every palette block of r, frame j, against its direct
 * definition D[y][x] = col[idx[y - y0][x - x0]]; returns the mismatches. */
static int direct_check(const PnmfResidual *r, const uint8_t *D)
{
    const size_t nb = (size_t)r->bx * r->by, n = (size_t)ROWS * COLS;
    int bad = 0;
    size_t k = 0;
    for (int j = 0; j < M; j++)
        for (size_t b = 0; b < nb; b++) {
            if (r->modes[j * nb + b] != PNMF_RES_PALETTE) continue;
            const PnmfPalBlock *p = &r->pal[k++];
            const int y0 = (int)(b / r->bx) * 8, x0 = (int)(b % r->bx) * 8;
            for (int y = y0; y < y0 + 8 && y < ROWS; y++)
                for (int x = x0; x < x0 + 8 && x < COLS; x++)
                    bad += D[j * n + (size_t)y * COLS + x] != p->col[p->idx[(y - y0) * 8 + (x - x0)]];
        }
    return bad + (k != r->npal);
}

static void test_window(void)
{
    const size_t n = (size_t)ROWS * COLS;
    uint8_t *src = malloc(M * n), *P = malloc(M * n), *De = malloc(M * n), *Dd = malloc(M * n);
    make_drawing(src, P);
    PnmfWindowModel md, rd;
    CHECK(pnmf_model_alloc(&md, ROWS, COLS, ROWS, COLS, M, 1, 0) == 0);
    CHECK(pnmf_residual_alloc(&md.res, M, ROWS, COLS, 64, 16) == 0);
    md.res.enc_palette = 1, md.res.enc_rc_price = 1;
    encode_window(&md.res, src, P, 64.0 * 64 / 256 * 0.1, De);
    decode_window(&md.res, P, Dd);
    CHECK(!memcmp(De, Dd, M * n));
    const size_t nb = (size_t)md.res.bx * md.res.by;
    int npal = 0, noisy = 0, exact = 1;
    for (size_t q = 0; q < M * nb; q++) {
        const int pal = md.res.modes[q] == PNMF_RES_PALETTE;
        npal += pal;
        /* frame 0, samples 24..31 of the whole blocks: noise of about 50 levels a block */
        noisy += pal && q < nb && q / md.res.bx == 3 && q % md.res.bx < (size_t)md.res.bx - 1;
    }
    /* frame 0's blocks above the noise are drawings of at most 8 levels: exact */
    for (int y = 0; y < 24; y++)
        for (int x = 0; x < COLS; x++) exact &= De[(size_t)y * COLS + x] == src[(size_t)y * COLS + x];
    CHECK_MSG(npal > 0 && !noisy, "%d palette blocks, %d in the noise", npal, noisy);
    CHECK(exact);
    CHECK(md.res.npal == (size_t)npal && md.res.palstart[M] == md.res.npal);
    CHECK(direct_check(&md.res, Dd) == 0);
    uint8_t *buf = NULL;
    size_t size = 0;
    char err[200] = "";
    md.res.rc_levels = 1;
    CHECK(pnmf_model_write(&md, &buf, &size) == 0);
    CHECK(buf && buf[0] == (PNMF_FLAG_RESIDUAL | PNMF_FLAG_RCLEVELS | 0x80) && buf[1] == (PNMF_FLAG_PALETTE >> 7));
    CHECK_MSG(read_v(PNMF_PAYLOAD_VERSION, buf, size, &rd, err, sizeof err) == 0, "%s", err);
    CHECK(rd.res.palette && rd.res.npal == md.res.npal && !memcmp(rd.res.modes, md.res.modes, M * nb));
    memset(Dd, 0, M * n);
    decode_window(&rd.res, P, Dd);
    CHECK(!memcmp(De, Dd, M * n));
    CHECK(direct_check(&rd.res, Dd) == 0);
    pnmf_model_free(&rd);
    /* a v8 reader does not know bit 13 */
    CHECK(read_v(8, buf, size, &rd, err, sizeof err) == PNMF_ERR_CORRUPT && strstr(err, "unknown features"));
    /* without bit 13, mode 16 is a transform block without levels: refused */
    uint8_t *bad = malloc(size);
    memcpy(bad, buf, size);
    bad[1] = 0;
    CHECK(read_v(PNMF_PAYLOAD_VERSION, bad, size, &rd, err, sizeof err) == PNMF_ERR_CORRUPT && strstr(err, "not allowed"));
    /* every truncation refused, every one-bit change read or refused with a reason */
    int refused = 0, odd = 0;
    for (size_t cut = 0; cut < size; cut++) refused += read_v(PNMF_PAYLOAD_VERSION, buf, cut, &rd, err, sizeof err) < 0;
    CHECK_MSG(refused == (int)size, "%d of %zu truncations refused", refused, size);
    for (size_t q = 0; q < size; q++)
        for (int bit = 0; bit < 8; bit++) {
            memcpy(bad, buf, size);
            bad[q] ^= (uint8_t)(1 << bit);
            err[0] = 0;
            const int ret = read_v(PNMF_PAYLOAD_VERSION, bad, size, &rd, err, sizeof err);
            if (ret == 0) decode_key_window(&rd.res, P, Dd), pnmf_model_free(&rd);
            else odd += ret != PNMF_ERR_CORRUPT || !err[0];
        }
    CHECK_MSG(!odd, "%d one-bit changes failed without a reason", odd);
    free(bad);
    pnmf_free(buf);
    /* without enc_palette: no palette block, no bit 13 */
    pnmf_residual_free(&md.res);
    CHECK(pnmf_residual_alloc(&md.res, M, ROWS, COLS, 64, 16) == 0);
    md.res.enc_rc_price = 1;
    encode_window(&md.res, src, P, 64.0 * 64 / 256 * 0.1, De);
    int none = 1;
    for (size_t q = 0; q < M * nb; q++) none &= md.res.modes[q] != PNMF_RES_PALETTE;
    md.res.rc_levels = 1;
    CHECK(none && md.res.npal == 0 && pnmf_model_write(&md, &buf, &size) == 0 && buf[1] != 0x40);
    pnmf_free(buf);
    pnmf_model_free(&md);
    free(src), free(P), free(De), free(Dd);
}

/* The search: a block of 5 levels gets them exactly at a small lambda,
 * fewer at a large one; a block of 40 levels is not tried. */
static void test_search(void)
{
    uint8_t blk[64];
    for (int q = 0; q < 64; q++) blk[q] = (uint8_t)(30 + 10 * ((q * 7) % 5) + (q % 9 == 0));
    PnmfPalCtx c;
    pnmf_pal_ctx_init(&c);
    rc_cost_init();
    PnmfPalBlock p;
    double bits = 0;
    double j = pnmf_pal_search(blk, 8, 8, 8, NULL, NULL, &c, 0.001, 1e300, &p, &bits);
    CHECK(j < 1e300 && p.n <= PNMF_PAL_MAX && bits > 0);
    long sse = 0;
    for (int q = 0; q < 64; q++) sse += (blk[q] - p.col[p.idx[q]]) * (blk[q] - p.col[p.idx[q]]);
    CHECK_MSG(sse == 0 || p.n == PNMF_PAL_MAX, "n %d sse %ld", p.n, sse);
    const int n_small = p.n;
    j = pnmf_pal_search(blk, 8, 8, 8, NULL, NULL, &c, 1000, 1e300, &p, &bits);
    CHECK(j < 1e300 && p.n < n_small);
    for (int q = 0; q < 64; q++) blk[q] = (uint8_t)(q * 3 % 40 + 100);
    CHECK(pnmf_pal_search(blk, 8, 8, 8, NULL, NULL, &c, 1, 1e300, &p, &bits) == 1e300);
    /* a neighbour's colours are reused rather than sent */
    for (int q = 0; q < 64; q++) blk[q] = (uint8_t)(q % 3 ? 77 : 201);
    PnmfPalBlock left = { .n = 2, .col = { 77, 201 } };
    CHECK(pnmf_pal_search(blk, 8, 8, 8, &left, NULL, &c, 10, 1e300, &p, &bits) <
          pnmf_pal_search(blk, 8, 8, 8, NULL, NULL, &c, 10, 1e300, &p, &bits));
    /* a bound above the best cost finds the same palette at the same cost
     * and bits; one at it finds none (a palette must cost less) */
    for (int q = 0; q < 64; q++) blk[q] = (uint8_t)(30 + 10 * ((q * 7) % 5) + (q % 9 == 0) + (q % 13 == 0));
    for (int lam = 1; lam <= 1000; lam *= 10) {
        PnmfPalBlock p1, p2;
        double b1 = 0, b2 = 0;
        const double j1 = pnmf_pal_search(blk, 8, 8, 8, &left, NULL, &c, lam, 1e300, &p1, &b1);
        const double j2 = pnmf_pal_search(blk, 8, 8, 8, &left, NULL, &c, lam, j1 * 1.000001, &p2, &b2);
        CHECK(j1 < 1e300 && j2 == j1 && b2 == b1 && p2.n == p1.n && !memcmp(p2.col, p1.col, p1.n) &&
              !memcmp(p2.idx, p1.idx, sizeof(p1.idx)));
        CHECK(pnmf_pal_search(blk, 8, 8, 8, &left, NULL, &c, lam, j1, &p2, &b2) == 1e300);
    }
}

/* The default encoder (PNMF_PAL_ENCODE) on a drawn screen: striped boxes
 * of a few gray levels on white, moving one sample a frame, two windows
 * (a key window and one that continues it); with fresh, a third box shown
 * of three scattered gray levels from frame SM / 2 + 1 on, which no
 * earlier frame holds. Palette blocks
 * go to the key window's first frame alone (at most a frame's blocks);
 * in the window that continues, to the fresh box's first showing at a -q
 * under PNMF_PAL_LATER_Q (Q_IN), none at -q 64; and the file decodes to
 * what the encoder said. */
enum { SW = 64, SH = 48, SM = 8, Q_IN = PNMF_PAL_LATER_Q - 9 };

static void screen_frame(int j, uint8_t *f, int fresh)
{
    memset(f, 235, SW * SH);
    for (int y = 0; y < 20; y++)
        for (int x = 0; x < 28; x++) {
            f[(6 + y) * SW + 4 + j + x] = (uint8_t)((x / 3 + y / 4) % 2 ? 40 : 120);
            f[(24 + y) * SW + 30 - j + x] = (uint8_t)(x % 5 < 2 ? 16 : y % 6 < 3 ? 90 : 200);
        }
    if (fresh && j > SM / 2)
        for (int y = 0; y < 16; y++)
            for (int x = 0; x < 16; x++) { /* three gray levels, scattered: no transform codes them cheaply */
                static const uint8_t lv[3] = { 30, 130, 220 };
                f[(28 + y) * SW + 2 + x] = lv[(unsigned)(x * 7 + y * 13 + x * y) % 3];
            }
}

static void encoder_run(int quality, int fresh, uint64_t pal[2])
{
    char path[512];
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/test_palette_enc.pnmf", dir ? dir : "/tmp");
    PnmfEncSettings s;
    pnmf_enc_default_settings(&s);
    s.components = 0, s.window = SM / 2, s.threads = 1, s.quality = quality;
    static uint8_t f[SM][SW * SH], d[SW * SH];
    FILE *out = fopen(path, "wb");
    PnmfEncoder *enc = NULL;
    CHECK(out && pnmf_enc_open(&enc, &s, SW, SH, 20, 1, out) == 0);
    for (int j = 0; j < SM; j++) {
        screen_frame(j, f[j], fresh);
        CHECK(pnmf_enc_push_frame(enc, f[j], SW) == 0);
    }
    CHECK(pnmf_enc_finish(enc) == 0);
    PnmfEncStats st;
    pnmf_enc_get_stats(enc, &st);
    pnmf_enc_close(&enc);
    fclose(out);
    FILE *in = fopen(path, "rb");
    PnmfInfo *info = NULL;
    CHECK(in && pnmf_info_open(&info, in) == 0);
    PnmfInfoWindow w[2];
    CHECK(pnmf_info_next_window(info, &w[0], 0) == 1 && pnmf_info_next_window(info, &w[1], 0) == 1);
    CHECK_MSG(w[1].first_frame == SM / 2 && !w[1].key, "the second window starts at %d, key %d", w[1].first_frame,
              w[1].key);
    pal[0] = w[0].res_palette, pal[1] = w[1].res_palette;
    pnmf_info_close(&info);
    fclose(in);
    in = fopen(path, "rb");
    PnmfDecoder *dec = NULL;
    CHECK(in && pnmf_dec_open(&dec, in) == 0);
    double sse = 0;
    for (int j = 0; j < SM; j++) {
        CHECK(pnmf_dec_read_frame(dec, d, SW) == 0);
        for (int q = 0; q < SW * SH; q++) sse += ((double)f[j][q] - d[q]) * ((double)f[j][q] - d[q]);
    }
    pnmf_dec_close(&dec);
    fclose(in);
    const double psnr = sse > 0 ? 10 * log10(255.0 * 255 * SM * SW * SH / sse) : 999;
    CHECK_MSG(fabs(psnr - st.psnr) < 1e-6, "-q %d: decoded %.3f dB, the encoder said %.3f", quality, psnr, st.psnr);
    remove(path);
}

static void test_encoder(void)
{
    const uint64_t per_frame = (SW / 8) * (SH / 8);
    uint64_t pal[2];
    encoder_run(Q_IN, 0, pal);
    CHECK_MSG(pal[0] > 0 && pal[0] <= per_frame, "palette blocks: %llu in the key window", (unsigned long long)pal[0]);
    encoder_run(Q_IN, 1, pal);
    CHECK_MSG(pal[0] > 0 && pal[0] <= per_frame && pal[1] > 0,
              "-q %d, a fresh box: %llu palette blocks in the key window, %llu in the next", Q_IN,
              (unsigned long long)pal[0], (unsigned long long)pal[1]);
    encoder_run(64, 1, pal);
    CHECK_MSG(pal[0] <= per_frame && pal[1] == 0, "-q 64, a fresh box: %llu palette blocks in the next window",
              (unsigned long long)pal[1]);
}

/* The screen statistic: a drawn frame is a screen, noise is not, and a
 * frame of noise is one from PNMF_PAL_SCREEN_SHARE of its blocks drawn on
 * (blocks of 8 levels count, of 9 do not). */
static void test_screen_like(void)
{
    static uint8_t f[SW * SH];
    screen_frame(0, f, 0);
    CHECK(pnmf_pal_screen_like(f, SH, SW));
    const int nb = (SW / 8) * (SH / 8), need = (int)ceil(PNMF_PAL_SCREEN_SHARE * nb);
    for (int k = need - 1; k <= need; k++) {
        for (int q = 0; q < SW * SH; q++) f[q] = (uint8_t)urn(256);
        for (int b = 0; b < nb; b++) /* block b: 8 levels when drawn, else 9 (its first row's noise stays) */
            for (int y = b < k ? 0 : 1; y < 8; y++)
                for (int x = 0; x < 8; x++) f[(b / (SW / 8) * 8 + y) * SW + b % (SW / 8) * 8 + x] = (uint8_t)(10 * x);
        for (int b = k; b < nb; b++) f[(b / (SW / 8) * 8) * SW + b % (SW / 8) * 8] = 255; /* a ninth level */
        CHECK_MSG(pnmf_pal_screen_like(f, SH, SW) == (k >= need), "%d of %d blocks drawn", k, nb);
    }
}

int main(void)
{
    rc_cost_init();
    test_cache();
    test_roundtrip();
    test_hostile();
    test_search();
    test_window();
    test_screen_like();
    test_encoder();
    return test_summary("test_palette");
}
