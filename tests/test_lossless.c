/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sample-context levels stream (src/lossless.h, docs/format.md
 * "Sample-context levels stream", window flags bit 9): lossless residual
 * layers of synthetic worst cases go through the writer, the reader and
 * the reconstruction bit-exact; the stream decodes with a decoder written
 * here from the format's rules alone; the reader refuses bit 9 where the
 * format forbids it and a stream that stops short; and pnmf-enc -q 0
 * decodes exactly through the public API, every window range-coded. The
 * encoder's exact block matcher (src/lossless_match.h) finds, on windows
 * made of blocks copied from earlier frames, every exact place a brute
 * force search finds (and on a long chain the places of its first
 * PNMF_LXM_CHAIN, in the same order), and -q 0's matcher looks in reference 0 alone
 * after a frame whose blocks were seldom there; the probe that offers the sample-context stream
 * agrees with the two streams' prices over the whole window where they
 * differ by far. At a lossy step (window flags bit 24, format 21) the same
 * stream, without candidates and each sample its prediction plus its
 * dequantized level, goes through the writer, the reader and the
 * reconstruction bit-exact and decodes with the direct decoder; a reader
 * of format 20 and a window without bit 9 refuse it, a level over the
 * bound is refused; and a cartoon encoded at -q 30 through the public API
 * takes it and decodes to the encoder's squared error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encode_file.h"
#include "internal.h"
#include "lossless.h"
#include "lossless_match.h"
#include "tuning.h"
#include "model_write.h"
#include "pnmf/info.h"
#include "pnmf/pnmf.h"
#include "residual_search.h"
#include "test.h"

static unsigned rs = 777;
static unsigned urn(unsigned n) { rs = rs * 1103515245u + 12345u; return ((rs >> 8) & 0xFFFFFF) % n; }

enum { ROWS = 21, COLS = 30, M = 6, NCLIPS = 6 };
static const char *clip_name[NCLIPS] = { "noise", "one gray level", "alternating", "gradient", "moving square",
                                         "few grays" };

/* Clip c into src (M frames), its model P (a crude background). */
static void make_clip(int c, uint8_t *src, uint8_t *P)
{
    for (int j = 0; j < M; j++)
        for (int y = 0; y < ROWS; y++)
            for (int x = 0; x < COLS; x++) {
                const size_t q = (size_t)j * ROWS * COLS + (size_t)y * COLS + x;
                int v, bg = 180 + (x * 7 + y * 3) % 40;
                switch (c) {
                case 0: v = (int)urn(256); break;
                case 1: v = 93; break;
                case 2: v = j & 1 ? 255 - bg : bg; break;
                case 3: v = (x * 255) / (COLS - 1) + j; break;
                case 4:
                    v = bg;
                    if (y >= 4 + j && y < 10 + j && x >= 3 + 2 * j && x < 11 + 2 * j) v = 20 + (int)urn(10);
                    break;
                default: v = 40 * (int)(((unsigned)(x / 3 + y / 2 + j) * 2654435761u >> 13) % 4); break;
                }
                P[q] = (uint8_t)bg;
                src[q] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
}

/* Lossless coding of the clip (step 16, a lambda too small to trade any
 * error for bits); D gets the decoded frames. */
static void encode_clip(PnmfResidual *r, const uint8_t *src, const uint8_t *P, uint8_t *D)
{
    const size_t n = (size_t)ROWS * COLS;
    for (int j = 0; j < M; j++) {
        const uint8_t *ref[PNMF_RES_REFS];
        for (int t = 0; t < PNMF_RES_REFS; t++) ref[t] = j - 1 - t >= 0 ? D + (j - 1 - t) * n : NULL;
        CHECK(pnmf_residual_encode_frame(r, j, src + j * n, P + j * n, j ? P + (j - 1) * n : NULL, ref,
                                         j < PNMF_RES_REFS ? j : PNMF_RES_REFS, D + j * n, 1e-9) == 0);
    }
}

/* Reconstruct the frames of r into D (what the decoder does). */
static void decode_frames(const PnmfResidual *r, const uint8_t *P, uint8_t *D)
{
    const size_t n = (size_t)ROWS * COLS;
    for (int j = 0; j < M; j++) {
        const uint8_t *ref[PNMF_RES_REFS];
        for (int t = 0; t < PNMF_RES_REFS; t++) ref[t] = j - 1 - t >= 0 ? D + (j - 1 - t) * n : NULL;
        pnmf_residual_frame(r, j, P + j * n, j ? P + (j - 1) * n : NULL, ref, D + j * n);
    }
}

/* ---- the stream decoded from docs/format.md's rules, nothing shared ---- */

typedef struct Ref {
    RcProb zero[240], sign[240][3], gt1[240], mag[240][4], cand[4][6][4];
} Ref;

static int ref_class(int s) { return s < 3 ? s : s <= 4 ? 3 : s <= 8 ? 4 : 5; }
static int ref_med(int a, int b, int c)
{
    const int mx = a > b ? a : b, mn = a < b ? a : b;
    return c >= mx ? mn : c <= mn ? mx : a + b - c;
}

/* Decode the levels of frames from..M-1's pixel-coded blocks of r from the
 * stream (len bytes at s), with the decoded frames D and the predictions
 * (D - level, every step 16) standing for the decoder's; each level must
 * equal r's. lossy (window flags bit 24): no candidates, and the
 * predictions the encoder kept (r->enc_lxp; the spatial one the median of
 * D's samples). Returns the levels that differ. */
static int ref_decode(const PnmfResidual *r, int from, const uint8_t *s, size_t len, const uint8_t *D, int lossy)
{
    Ref c;
    RcProb *all = &c.zero[0];
    for (size_t i = 0; i < sizeof(c) / sizeof(RcProb); i++) all[i].a = all[i].b = 16384, all[i].n = 0;
    RcDec d;
    rc_dec_init(&d, s, len, RC_V13);
    const size_t n = (size_t)ROWS * COLS, nb = (size_t)r->bx * r->by;
    int16_t E[2][ROWS * COLS];
    memset(E, 0, sizeof(E));
    int bad = 0;
    for (int j = from; j < M; j++) {
        int16_t *e = E[j & 1], *ep = E[!(j & 1)];
        if (j == from) memset(ep, 0, sizeof(E[0]));
        memset(e, 0, sizeof(E[0]));
        const uint8_t *Dj = D + (size_t)j * n;
        size_t q = r->start[j];
        for (size_t b = 0; b < nb; b++) {
            const int mode = r->modes[(size_t)j * nb + b];
            if (!(mode & PNMF_RES_CODED)) continue;
            const int y0 = (int)(b / (size_t)r->bx) * 8, x0 = (int)(b % (size_t)r->bx) * 8;
            const int y1 = y0 + 8 < ROWS ? y0 + 8 : ROWS, x1 = x0 + 8 < COLS ? x0 + 8 : COLS;
            if (mode & PNMF_RES_TRANSFORM) {
                q += (size_t)(y1 - y0) * (x1 - x0);
                continue;
            }
            const int kind = (j != 0) + 2 * ((mode & 7) == 3 || (mode & 7) >= 5);
            for (int y = y0; y < y1; y++)
                for (int x = x0; x < x1; x++) {
                    const int truth = r->lev[q];
                    int p = Dj[y * COLS + x] - truth;
                    if (lossy && (mode & 7) != 3)
                        p = r->enc_lxp[q];
                    else if (lossy) /* the median edge predictor of the format's Reconstruction */
                        p = !y ? (x ? Dj[x - 1] : 128)
                               : !x ? Dj[(y - 1) * COLS] : ref_med(Dj[y * COLS + x - 1], Dj[(y - 1) * COLS + x], Dj[(y - 1) * COLS + x - 1]);
                    q++;
                    int nbr[4];
                    if (y == 0) {
                        nbr[0] = x ? Dj[x - 1] : 128;
                        nbr[1] = nbr[2] = nbr[3] = nbr[0];
                    } else {
                        nbr[1] = Dj[(y - 1) * COLS + x];
                        nbr[0] = x ? Dj[y * COLS + x - 1] : nbr[1];
                        nbr[2] = x ? Dj[(y - 1) * COLS + x - 1] : nbr[1];
                        nbr[3] = x + 1 < COLS && (y == y0 || x + 1 < x1) ? Dj[(y - 1) * COLS + x + 1] : nbr[1];
                    }
                    const int la = x ? e[y * COLS + x - 1] : 0, lb = y ? e[(y - 1) * COLS + x] : 0;
                    const int lc = x && y ? e[(y - 1) * COLS + x - 1] : 0;
                    const int ld = y && x + 1 < COLS ? e[(y - 1) * COLS + x + 1] : 0;
                    const int cls = ref_class(abs(la) + abs(lb) + (abs(lc) + abs(ld)) / 2);
                    const int t = abs(p - ref_med(nbr[0], nbr[1], nbr[2]));
                    const int act = t == 0 ? 0 : t <= 2 ? 1 : t <= 8 ? 2 : t <= 32 ? 3 : 4;
                    int last = ep[y * COLS + x] != 0;
                    if (lossy) { /* the prediction's gradient in its block (docs/format.md, bit 24) */
                        last = 0;
                        if ((mode & 7) != 3) {
                            const size_t q0 = q - 1 - (size_t)((y - y0) * (x1 - x0) + (x - x0)); /* the block's first level */
                            const uint8_t *pp = r->enc_lxp + q0;
                            const int bw = x1 - x0, bh = y1 - y0, by = y - y0, bx = x - x0, pv = pp[by * bw + bx];
                            const int gl = bx ? abs(pv - pp[by * bw + bx - 1]) : bx + 1 < bw ? abs(pv - pp[by * bw + bx + 1]) : 0;
                            const int gu = by ? abs(pv - pp[(by - 1) * bw + bx]) : by + 1 < bh ? abs(pv - pp[(by + 1) * bw + bx]) : 0;
                            last = gl + gu >= 16;
                        }
                    }
                    const int S = ((kind * 6 + cls) * 5 + act) * 2 + last;
                    const int sc = la + lb < 0 ? 0 : la + lb == 0 ? 1 : 2;
                    int l = 0;
                    if (rc_decode(&d, &c.zero[S])) {
                        int kept[4], nk = 0, found = 0;
                        for (int i = 0; i < 4 && !found && !lossy; i++) {
                            int skip = nbr[i] == p;
                            for (int k = 0; k < nk; k++) skip |= kept[k] == nbr[i];
                            if (skip) continue;
                            kept[nk++] = nbr[i];
                            if (rc_decode(&d, &c.cand[kind][cls][i])) l = nbr[i] - p, found = 1;
                        }
                        if (!found) {
                            const int neg = rc_decode(&d, &c.sign[S][sc]);
                            int a = 1;
                            if (rc_decode(&d, &c.gt1[S])) {
                                int rr = 0;
                                while (rr < 14 && rc_decode(&d, &c.mag[S][rr < 3 ? rr : 3])) rr++;
                                if (rr == 14) { /* Exp-Golomb of direct decisions */
                                    int nbits = 0;
                                    while (rc_decode_direct(&d)) nbits++;
                                    unsigned xx = 1;
                                    for (int i = 0; i < nbits; i++) xx = (xx << 1) | (unsigned)rc_decode_direct(&d);
                                    rr = 14 + (int)(xx - 1);
                                }
                                a = rr + 2;
                            }
                            l = neg ? -a : a;
                        }
                    }
                    bad += l != truth;
                    e[y * COLS + x] = (int16_t)truth;
                }
        }
    }
    bad += !rc_dec_exact(&d, s);
    return bad;
}

/* ---- the tests --------------------------------------------------------- */

static int probe_sides; /* 1: a clip the sample contexts win by far, 2: one they lose by far */

static void test_clip(int c)
{
    const size_t n = (size_t)ROWS * COLS;
    uint8_t *src = malloc(M * n), *P = malloc(M * n), *D = malloc(M * n), *Dd = malloc(M * n);
    make_clip(c, src, P);
    PnmfWindowModel md, rd;
    CHECK(pnmf_model_alloc(&md, ROWS, COLS, ROWS, COLS, M, 1, 0) == 0);
    CHECK(pnmf_residual_alloc(&md.res, M, ROWS, COLS, PNMF_RES_MIN_STEP, PNMF_RES_MIN_STEP) == 0);
    /* enc_dec set before the search, as the encoder's lossless windows
     * have it: the search of a lossless window (no transform trials, an
     * exact vector ends a search) */
    md.res.enc_dec = malloc(M * n);
    encode_clip(&md.res, src, P, D);
    CHECK_MSG(!memcmp(D, src, M * n), "%s: the encoder's frames are not lossless", clip_name[c]);
    memcpy(md.res.enc_dec, D, M * n);
    const size_t nb = (size_t)md.res.bx * md.res.by;
    int pixel = 0, transform = 0;
    for (size_t q = 0; q < M * nb; q++) {
        pixel += (md.res.modes[q] & (PNMF_RES_CODED | PNMF_RES_TRANSFORM)) == PNMF_RES_CODED;
        transform += (md.res.modes[q] & PNMF_RES_TRANSFORM) != 0;
    }
    CHECK_MSG(!transform, "%s: %d transform blocks in a lossless window", clip_name[c], transform);
    /* the probe (pnmf_lx_pays) against the two streams' prices over the
     * whole window: it offers the sample-context stream where that is far
     * smaller, and not where it is far larger */
    {
        RcBin ox = { .update = 1 }, ol = { .update = 1 };
        RcLevCtx lc;
        CHECK(pnmf_lx_stream(&ox, &md.res, 0) == 0);
        CHECK(pnmf_residual_levels_stream(&ol, &lc, &md.res, 0, INT16_MAX) == 0);
        const int pays = pnmf_lx_pays(&md.res, 0);
        if (ox.bits < 0.8 * ol.bits)
            CHECK_MSG(pays, "%s: probe refuses a stream of %.0f bits against %.0f", clip_name[c], ox.bits, ol.bits);
        if (ox.bits > 1.25 * ol.bits)
            CHECK_MSG(!pays, "%s: probe offers a stream of %.0f bits against %.0f", clip_name[c], ox.bits, ol.bits);
        probe_sides |= ox.bits < 0.8 * ol.bits ? 1 : ox.bits > 1.25 * ol.bits ? 2 : 0;
    }
    for (int rc = 1; rc <= 2; rc++) {
        if (rc == 2 && !(md.res.start[1] > 0 && md.res.start[1] < md.res.nlev)) continue;
        uint8_t *buf = NULL;
        size_t size = 0;
        md.res.rc_levels = rc, md.res.ctx_levels = 1;
        CHECK(pnmf_model_write(&md, &buf, &size) == 0);
        /* flags bits 0, 3, 9 (and 4): a two-byte varint */
        const unsigned flags = (buf[0] & 0x7F) | (unsigned)buf[1] << 7;
        CHECK_MSG(flags == (PNMF_FLAG_RESIDUAL | PNMF_FLAG_RCLEVELS | PNMF_FLAG_CTXLEVELS |
                            (rc == 2 ? PNMF_FLAG_KEYVARINTS : 0)), "%s: flags 0x%x", clip_name[c], flags);
        char err[200] = "";
        CHECK_MSG(pnmf_model_read(buf, size, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, &rd, err, sizeof err) == 0, "%s: %s",
                  clip_name[c], err);
        CHECK(rd.res.lx && rd.res.lx->from == rc - 1);
        /* the direct decoder of the format's rules reads every level */
        if (rd.res.lx)
            CHECK_MSG(ref_decode(&md.res, rc - 1, rd.res.lx->stream, rd.res.lx->len, D, 0) == 0,
                      "%s: the stream disagrees with docs/format.md", clip_name[c]);
        memset(Dd, 0x55, M * n);
        decode_frames(&rd.res, P, Dd);
        CHECK_MSG(rd.res.lx && !rd.res.lx->err && !memcmp(Dd, src, M * n), "%s (rc %d): not bit-exact", clip_name[c],
                  rc);
        CHECK(!memcmp(rd.res.lev, md.res.lev, md.res.nlev * sizeof(int16_t)));
        /* a reader of version 8 does not know bit 9 */
        pnmf_model_free(&rd);
        CHECK(pnmf_model_read_version(8, buf, size, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, &rd, err, sizeof err) ==
                  PNMF_ERR_CORRUPT && strstr(err, "unknown features"));
        /* bit 9 without bit 3 */
        uint8_t *b2 = malloc(size);
        memcpy(b2, buf, size);
        b2[0] &= (uint8_t)~PNMF_FLAG_RCLEVELS;
        if (rc == 2) b2[0] &= (uint8_t)~PNMF_FLAG_KEYVARINTS;
        CHECK(pnmf_model_read(b2, size, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, &rd, err, sizeof err) ==
                  PNMF_ERR_CORRUPT && strstr(err, "sample-context levels without a levels stream"));
        free(b2);
        /* a stream that stops short, or has a byte over: found as the
         * window is reconstructed, at the latest after its last frame */
        if (pixel) {
            for (int d = -1; d <= 1; d += 2) {
                CHECK(pnmf_model_read(buf, size, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, &rd, err, sizeof err) == 0);
                PnmfLx *lx = rd.res.lx;
                if (d > 0) { /* one more byte */
                    uint8_t *longer = pnmf_malloc_array(lx->len + 1, 1);
                    memcpy(longer, lx->stream, lx->len);
                    longer[lx->len] = 0;
                    pnmf_free(lx->stream);
                    lx->stream = longer;
                }
                lx->len += (size_t)d;
                decode_frames(&rd.res, P, Dd);
                CHECK_MSG(lx->err == -2, "%s: a stream %s refused (%d)", clip_name[c],
                          d < 0 ? "cut short not" : "with a byte over not", lx->err);
                pnmf_model_free(&rd);
            }
        }
        pnmf_free(buf);
    }
    /* the writer refuses levels that do not match the decoded frames */
    if (pixel) {
        uint8_t *buf = NULL;
        size_t size = 0;
        md.res.rc_levels = 1, md.res.ctx_levels = 1;
        for (size_t q = 0; q < M * n; q++) md.res.enc_dec[q] ^= 0x80;
        CHECK(pnmf_model_write(&md, &buf, &size) == PNMF_ERR_ARG);
        pnmf_free(buf);
    }
    /* bit 9 with a lossy step: refused */
    {
        uint8_t *buf = NULL;
        size_t size = 0;
        memcpy(md.res.enc_dec, D, M * n);
        md.res.step16 = 32;
        CHECK(pnmf_model_write(&md, &buf, &size) == 0);
        char err[200] = "";
        CHECK(pnmf_model_read(buf, size, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, &rd, err, sizeof err) ==
                  PNMF_ERR_CORRUPT && strstr(err, "lossless only"));
        md.res.step16 = PNMF_RES_MIN_STEP;
        pnmf_free(buf);
    }
    pnmf_model_free(&md);
    free(src), free(P), free(D), free(Dd);
}

/* Clip c coded at a lossy step (step16 64, its first frame's 32) with
 * the kept neighbours and predictions, written with the pixel levels in
 * the sample-context stream (window flags bit 24). Returns whether the
 * window has pixel levels of magnitude 2 or more (the bound's check ran). */
static int test_lossy_clip(int c)
{
    const size_t n = (size_t)ROWS * COLS;
    uint8_t *src = malloc(M * n), *P = malloc(M * n), *D = malloc(M * n), *Dd = malloc(M * n);
    make_clip(c, src, P);
    PnmfWindowModel md, rd;
    CHECK(pnmf_model_alloc(&md, ROWS, COLS, ROWS, COLS, M, 1, 0) == 0);
    CHECK(pnmf_residual_alloc(&md.res, M, ROWS, COLS, 64, 32) == 0);
    const size_t nb = (size_t)md.res.bx * md.res.by;
    md.res.enc_lxn = malloc(M * nb * PNMF_LX_NB);
    encode_clip(&md.res, src, P, D);
    int pixel = 0, big = 0;
    for (int j = 0; j < M; j++)
        for (size_t b = 0, q = md.res.start[j]; b < nb; b++) {
            const int mode = md.res.modes[(size_t)j * nb + b];
            if (!(mode & PNMF_RES_CODED)) continue;
            const int y0 = (int)(b / (size_t)md.res.bx) * 8, x0 = (int)(b % (size_t)md.res.bx) * 8;
            const size_t area = (size_t)((y0 + 8 < ROWS ? y0 + 8 : ROWS) - y0) * ((x0 + 8 < COLS ? x0 + 8 : COLS) - x0);
            for (size_t i = 0; !(mode & PNMF_RES_TRANSFORM) && i < area; i++) pixel++, big |= abs(md.res.lev[q + i]) > 1;
            q += area;
        }
    uint8_t *buf = NULL;
    size_t size = 0;
    md.res.rc_levels = 1, md.res.ctx_levels = 1;
    CHECK(pnmf_model_write(&md, &buf, &size) == 0);
    /* flags bits 0, 3, 9 and 24: a four-byte varint */
    uint64_t flags = 0;
    for (int i = 0; i < 4; i++) flags |= (uint64_t)(buf[i] & 0x7F) << (7 * i);
    CHECK_MSG(flags == (PNMF_FLAG_RESIDUAL | PNMF_FLAG_RCLEVELS | PNMF_FLAG_CTXLEVELS | PNMF_FLAG_CTXLOSSY) &&
                  !(buf[3] & 0x80),
              "%s: flags 0x%llx", clip_name[c], (unsigned long long)flags);
    char err[200] = "";
    CHECK_MSG(pnmf_model_read(buf, size, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, &rd, err, sizeof err) == 0, "%s: %s",
              clip_name[c], err);
    CHECK(rd.res.lx && rd.res.lx->lossy && rd.res.lx->from == 0);
    if (rd.res.lx)
        CHECK_MSG(ref_decode(&md.res, 0, rd.res.lx->stream, rd.res.lx->len, D, 1) == 0,
                  "%s: the lossy stream disagrees with docs/format.md", clip_name[c]);
    memset(Dd, 0x55, M * n);
    decode_frames(&rd.res, P, Dd);
    CHECK_MSG(rd.res.lx && !rd.res.lx->err && !memcmp(Dd, D, M * n), "%s: lossy, not bit-exact", clip_name[c]);
    CHECK(!memcmp(rd.res.lev, md.res.lev, md.res.nlev * sizeof(int16_t)));
    pnmf_model_free(&rd);
    /* a level over the bound: refused as the frame is reconstructed */
    if (big) {
        CHECK(pnmf_model_read(buf, size, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, &rd, err, sizeof err) == 0);
        rd.res.lx->maxlev = 1;
        decode_frames(&rd.res, P, Dd);
        CHECK_MSG(rd.res.lx->err == -1, "%s: a level over the bound not refused (%d)", clip_name[c], rd.res.lx->err);
        pnmf_model_free(&rd);
    }
    /* a reader of format 20 does not know bit 24 */
    CHECK(pnmf_model_read_version(20, buf, size, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, &rd, err, sizeof err) ==
              PNMF_ERR_CORRUPT && strstr(err, "unknown features"));
    /* bit 24 without bit 9 */
    buf[1] &= (uint8_t)~(PNMF_FLAG_CTXLEVELS >> 7);
    CHECK(pnmf_model_read(buf, size, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, &rd, err, sizeof err) == PNMF_ERR_CORRUPT &&
          strstr(err, "lossy sample-context levels without their stream"));
    pnmf_free(buf);
    CHECK_MSG(pixel > 0 || c == 1, "%s: no pixel-coded level at step 64", clip_name[c]);
    pnmf_model_free(&md);
    free(src), free(P), free(D), free(Dd);
    return big;
}

/* A cartoon at -q 30 through the public API: flat regions with dark
 * outlines moving by whole samples over a drawn background, whose edges
 * the residual layer codes sample by sample. Its window codes them in the
 * sample-context stream (bit 24), the file needs a reader of format 21,
 * and it decodes to the squared error the encoder measured. */
static void test_lossy_encoder(const char *dir)
{
    enum { H = 64, W = 96, N = 8 };
    uint8_t *f = malloc((size_t)N * H * W);
    for (int j = 0; j < N; j++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                int v = 200 - ((x / 12 + y / 10) % 3) * 30; /* drawn tiles */
                for (int k = 0; k < 3; k++) {            /* three discs, outlined */
                    const int cy = 16 + 14 * k + (j * (k + 1)) % 7, cx = 20 + 25 * k + 3 * j;
                    const int d2 = (y - cy) * (y - cy) + (x - cx) * (x - cx);
                    if (d2 < 81) v = 60 + 50 * k;
                    else if (d2 < 121) v = 10;
                }
                f[((size_t)j * H + y) * W + x] = (uint8_t)v;
            }
    char path[1024];
    snprintf(path, sizeof path, "%s/test_lossless_lossy.pnmf", dir);
    PnmfEncSettings s;
    test_window_settings(&s, N, 30);
    PnmfEncStats st;
    test_encode_file(path, &s, W, H, N, f, &st);
    PnmfHeader h = { 0 };
    PnmfWindowModel md;
    int lossy = -1;
    if (test_first_window(path, H, W, &h, &md) == 0) {
        lossy = md.res.lx && md.res.lx->lossy;
        pnmf_model_free(&md);
    }
    CHECK_MSG(lossy == 1 && h.min_reader_version == 21, "-q 30: bit 24 %d, reader %d", lossy,
              (int)h.min_reader_version);
    const double e = test_decoded_sse(path, f, W, H, N);
    CHECK_MSG(fabs(e - st.sse) < 0.5, "decoded squared error %.0f, the encoder's %.0f", e, st.sse);
    remove(path);
    free(f);
}

/* The encoder at -q 0 through the public API: every clip decodes exactly,
 * and the files announce a reader of format 9 (at -q 16 no window codes its
 * levels in the sample-context stream). */
static void test_encoder(const char *dir)
{
    enum { H = 40, W = 56, N = 10 };
    uint8_t *f = malloc((size_t)N * H * W), *out = malloc((size_t)H * W);
    for (int c = 0; c < NCLIPS; c++) {
        for (int j = 0; j < N; j++)
            for (int y = 0; y < H; y++)
                for (int x = 0; x < W; x++) {
                    int v, bg = 150 + (x * 5 + y * 3) % 60;
                    switch (c) {
                    case 0: v = (int)urn(256); break;
                    case 1: v = 17; break;
                    case 2: v = j & 1 ? 255 - bg : bg; break;
                    case 3: v = (y * 255) / (H - 1); break;
                    case 4:
                        v = bg;
                        if (y >= 6 + j && y < 14 + j && x >= 5 + 3 * j && x < 15 + 3 * j) v = 30 + (x * 11 + y * 7) % 50;
                        break;
                    default: v = 60 * (int)(((unsigned)(x / 4 + y / 3 + j) * 2654435761u >> 13) % 4); break;
                    }
                    f[((size_t)j * H + y) * W + x] = (uint8_t)v;
                }
        char path[1024];
        snprintf(path, sizeof path, "%s/test_lossless_%d.pnmf", dir, c);
        PnmfEncSettings s;
        pnmf_enc_default_settings(&s);
        s.quality = 0, s.threads = 1, s.window = 4;
        FILE *fo = fopen(path, "wb");
        PnmfEncoder *enc = NULL;
        CHECK(fo && pnmf_enc_open(&enc, &s, W, H, 20, 1, fo) == 0);
        for (int j = 0; j < N; j++) CHECK(pnmf_enc_push_frame(enc, f + (size_t)j * H * W, W) == 0);
        CHECK(pnmf_enc_finish(enc) == 0);
        pnmf_enc_close(&enc);
        fclose(fo);
        FILE *in = fopen(path, "rb");
        uint8_t hdr[12];
        CHECK(in && fread(hdr, 1, 12, in) == 12 && hdr[8] == PNMF_FORMAT_VERSION && hdr[10] >= 9);
        rewind(in);
        PnmfDecoder *dec = NULL;
        CHECK(pnmf_dec_open(&dec, in) == 0);
        int diff = 0;
        for (int j = 0; j < N; j++) {
            CHECK(pnmf_dec_read_frame(dec, out, W) == 0);
            diff += memcmp(out, f + (size_t)j * H * W, (size_t)H * W) != 0;
        }
        CHECK_MSG(!diff, "%s: %d frames differ at -q 0", clip_name[c], diff);
        pnmf_dec_close(&dec);
        /* every window lossless: its levels range-coded, the pixel levels in
         * the sample-context stream or not, never zstd's varints alone
         * (pnmf_window_codings offers a lossless window no other) */
        rewind(in);
        PnmfInfo *li = NULL;
        CHECK(pnmf_info_open(&li, in) == 0);
        PnmfInfoWindow lw;
        int lwin = 0, varints = 0;
        while (li && pnmf_info_next_window(li, &lw, 0) == 1) lwin++, varints += lw.rc_levels == 0 || lw.rc_levels == 2;
        CHECK_MSG(lwin > 0 && !varints, "%s: -q 0: %d of %d windows with varint levels", clip_name[c], varints, lwin);
        pnmf_info_close(&li);
        fclose(in);
        remove(path);
        if (c == 4) { /* at -q 16 and above no window is lossless: a v8 reader reads the file */
            s.quality = 16;
            fo = fopen(path, "wb");
            CHECK(fo && pnmf_enc_open(&enc, &s, W, H, 20, 1, fo) == 0);
            for (int j = 0; j < N; j++) CHECK(pnmf_enc_push_frame(enc, f + (size_t)j * H * W, W) == 0);
            CHECK(pnmf_enc_finish(enc) == 0);
            pnmf_enc_close(&enc);
            fclose(fo);
            /* (the file may still need a v9 reader for sub-pixel vectors or
             * the deblocking filter: what is checked is the levels' coding) */
            in = fopen(path, "rb");
            PnmfInfo *inf = NULL;
            CHECK(in && pnmf_info_open(&inf, in) == 0);
            PnmfInfoWindow iw;
            int windows = 0, ctx = 0, lxq = 0;
            while (inf && pnmf_info_next_window(inf, &iw, 0) == 1)
                windows++, ctx += iw.rc_levels >= 3 && !(iw.flags & PNMF_FLAG_CTXLOSSY),
                    lxq += (iw.flags & PNMF_FLAG_CTXLOSSY) != 0;
            CHECK_MSG(windows > 0 && !ctx, "-q 16: %d of %d windows in the lossless sample-context stream", ctx, windows);
            /* a v21 reader only where a window stored has bit 24 */
            uint8_t h16[12] = { 0 };
            rewind(in);
            CHECK(fread(h16, 1, 12, in) == 12);
            CHECK_MSG((h16[10] >= 21) == (lxq > 0), "-q 16: %d windows with bit 24, min reader %d", lxq, h16[10]);
            pnmf_info_close(&inf);
            if (in) fclose(in);
            remove(path);
        }
    }
    free(f), free(out);
}

/* The exact block matcher against a brute-force search: frames of random
 * samples (no two places alike by chance) whose blocks are copied from
 * earlier frames at random places, some twice into one frame, over more
 * frames than references (the matcher's slots are reused), and a flat
 * frame, where a run of equal blocks along a row is one place. */
enum { MR = 40, MC = 56, MM = 22, MAXV = 12 };
static void test_matcher(void)
{
    const size_t n = (size_t)MR * MC;
    uint8_t *f = malloc(n * MM);
    CHECK(f != NULL);
    if (!f) return;
    for (size_t q = 0; q < n; q++) f[q] = (uint8_t)urn(256);
    for (int j = 1; j < MM; j++) {
        uint8_t *d = f + (size_t)j * n;
        for (size_t q = 0; q < n; q++) d[q] = (uint8_t)urn(256);
        if (j >= MM - 2) memset(d, 77, n); /* flat */
        for (int k = 0; k < 16 && j < MM - 2; k++) { /* copies of earlier blocks, anywhere */
            const int t = (int)urn(j < PNMF_RES_REFS ? j : PNMF_RES_REFS), y = (int)urn(MR - 7), x = (int)urn(MC - 7);
            int ty = y + (int)urn(2 * MAXV + 1) - MAXV, tx = x + (int)urn(2 * MAXV + 1) - MAXV;
            ty = ty < 0 ? 0 : ty > MR - 8 ? MR - 8 : ty, tx = tx < 0 ? 0 : tx > MC - 8 ? MC - 8 : tx;
            const uint8_t *s = f + (size_t)(j - 1 - t) * n;
            for (int v = 0; v < 8; v++) memcpy(d + (size_t)(ty + v) * MC + tx, s + (size_t)(y + v) * MC + x, 8);
            /* and the block on the grid at (ty, tx) rounded, from the same place */
            const int gy = ty / 8 * 8, gx = tx / 8 * 8;
            if (k % 2 == 0)
                for (int v = 0; v < 8; v++) memcpy(d + (size_t)(gy + v) * MC + gx, s + (size_t)(y + v) * MC + x, 8);
        }
    }
    PnmfLxMatch *m = pnmf_lxm_new(MR, MC, 0);
    CHECK(m != NULL);
    if (!m) {
        free(f);
        return;
    }
    int found = 0, blocks_with = 0;
    for (int j = 1; j < MM; j++) {
        const uint8_t *ref[PNMF_RES_REFS];
        const int nref = j < PNMF_RES_REFS ? j : PNMF_RES_REFS;
        for (int t = 0; t < nref; t++) ref[t] = f + (size_t)(j - 1 - t) * n;
        CHECK(pnmf_lxm_refs(m, j, ref, nref) == 0);
        const uint8_t *src = f + (size_t)j * n;
        for (int y0 = 0; y0 + 8 <= MR; y0 += 8)
            for (int x0 = 0; x0 + 8 <= MC; x0 += 8)
                for (int t = 0; t < nref; t++) {
                    int bv[(2 * MAXV + 1) * (2 * MAXV + 1)][2], nb = 0;
                    for (int dy = -MAXV; dy <= MAXV; dy++)
                        for (int dx = -MAXV; dx <= MAXV; dx++) {
                            if (y0 + dy < 0 || y0 + dy + 8 > MR || x0 + dx < 0 || x0 + dx + 8 > MC) continue;
                            int eq = 1;
                            for (int v = 0; v < 8 && eq; v++)
                                eq = !memcmp(src + (size_t)(y0 + v) * MC + x0, ref[t] + (size_t)(y0 + dy + v) * MC + x0 + dx, 8);
                            if (eq) bv[nb][0] = dy, bv[nb][1] = dx, nb++;
                        }
                    int16_t out[PNMF_LXM_CAP][2];
                    const int py = (int)urn(5) - 2, px = (int)urn(5) - 2;
                    const int no = pnmf_lxm_find(m, t, src, y0, x0, MAXV, py, px, out, PNMF_LXM_CAP);
                    blocks_with += nb > 0;
                    if (j == MM - 1) { /* flat: of the flat reference, a place at least */
                        if (t == 0) CHECK(nb > 0);
                        CHECK_MSG(nb == 0 || no > 0, "flat frame: block (%d, %d) of frame %d: no place in ref %d", y0,
                                  x0, j, t);
                    } else if (j < MM - 2) {
                        CHECK_MSG(no == (nb < PNMF_LXM_CAP ? nb : PNMF_LXM_CAP),
                                  "frame %d block (%d, %d) ref %d: %d places found, brute force %d", j, y0, x0, t, no, nb);
                    }
                    int dmin = 1 << 30;
                    for (int k = 0; k < nb; k++) {
                        const int d = abs(bv[k][0] - py) + abs(bv[k][1] - px);
                        if (d < dmin) dmin = d;
                    }
                    for (int k = 0; k < no; k++) { /* each exact, the first the nearest */
                        int in = 0;
                        for (int i = 0; i < nb; i++) in |= bv[i][0] == out[k][0] && bv[i][1] == out[k][1];
                        CHECK_MSG(in, "frame %d block (%d, %d) ref %d: (%d, %d) is no exact place", j, y0, x0, t,
                                  out[k][0], out[k][1]);
                        if (k == 0 && j < MM - 2)
                            CHECK(abs(out[0][0] - py) + abs(out[0][1] - px) == dmin);
                    }
                    found += no > 0;
                }
    }
    CHECK_MSG(blocks_with > 50, "the synthetic window has only %d blocks with an exact place", blocks_with);
    CHECK(found > 0);
    pnmf_lxm_free(m);
    free(f);
}

/* The matcher where a block repeats all over the references (a tiled
 * pattern of period 9 x 11, as a desktop's backdrop): of the places within
 * the vector bound, which a lookup passes by bisection and leaves once no
 * later place can be nearer the prediction, the ones returned must be the
 * nearest, ties to the later position, as a brute-force search over every
 * vector finds them. */
enum { PR = 120, PC = 136, PM = 4, PV = 40 };
static void test_matcher_tiled(void)
{
    const size_t n = (size_t)PR * PC;
    uint8_t *f = malloc(n * PM), tile[9][11];
    CHECK(f != NULL);
    if (!f) return;
    for (int y = 0; y < 9; y++)
        for (int x = 0; x < 11; x++) tile[y][x] = (uint8_t)urn(256);
    for (int j = 0; j < PM; j++) /* each frame the tiling shifted by (j, 2 j) */
        for (int y = 0; y < PR; y++)
            for (int x = 0; x < PC; x++) f[(size_t)j * n + (size_t)y * PC + x] = tile[(y + j) % 9][(x + 2 * j) % 11];
    PnmfLxMatch *m = pnmf_lxm_new(PR, PC, 0);
    CHECK(m != NULL);
    if (!m) {
        free(f);
        return;
    }
    const int j = PM - 1;
    const uint8_t *ref[PM - 1];
    for (int t = 0; t < j; t++) ref[t] = f + (size_t)(j - 1 - t) * n;
    CHECK(pnmf_lxm_refs(m, j, ref, j) == 0);
    const uint8_t *src = f + (size_t)(j - 1) * n; /* frame 2's blocks, found in every reference */
    int lookups = 0, full = 0;
    for (int y0 = 0; y0 + 8 <= PR; y0 += 8)
        for (int x0 = 0; x0 + 8 <= PC; x0 += 8)
            for (int t = 0; t < j; t++) {
                const int py = (int)urn(41) - 20, px = (int)urn(41) - 20;
                /* the exact places by the brute force, lower rows first and
                 * right first within a row (the index's order of positions
                 * falling, which breaks ties) */
                int d[(2 * PV + 1) * (2 * PV + 1)], v2[(2 * PV + 1) * (2 * PV + 1)][2], nd = 0;
                for (int dy = PV; dy >= -PV; dy--)
                    for (int dx = PV; dx >= -PV; dx--) {
                        if (y0 + dy < 0 || y0 + dy + 8 > PR || x0 + dx < 0 || x0 + dx + 8 > PC) continue;
                        int eq = 1;
                        for (int v = 0; v < 8 && eq; v++)
                            eq = !memcmp(src + (size_t)(y0 + v) * PC + x0, ref[t] + (size_t)(y0 + dy + v) * PC + x0 + dx, 8);
                        if (eq) d[nd] = abs(dy - py) + abs(dx - px), v2[nd][0] = dy, v2[nd][1] = dx, nd++;
                    }
                for (int a = 1; a < nd; a++) /* sorted, nearest first, stable */
                    for (int b = a; b > 0 && d[b - 1] > d[b]; b--) {
                        const int u = d[b], uy = v2[b][0], ux = v2[b][1];
                        d[b] = d[b - 1], v2[b][0] = v2[b - 1][0], v2[b][1] = v2[b - 1][1];
                        d[b - 1] = u, v2[b - 1][0] = uy, v2[b - 1][1] = ux;
                    }
                int16_t out[PNMF_LXM_CAP][2];
                const int no = pnmf_lxm_find(m, t, src, y0, x0, PV, py, px, out, PNMF_LXM_CAP);
                lookups++;
                full += no == PNMF_LXM_CAP;
                CHECK_MSG(no == (nd < PNMF_LXM_CAP ? nd : PNMF_LXM_CAP), "block (%d, %d) ref %d: %d places, brute force %d",
                          y0, x0, t, no, nd);
                for (int k = 0; k < no && k < nd; k++)
                    CHECK_MSG(out[k][0] == v2[k][0] && out[k][1] == v2[k][1],
                              "block (%d, %d) ref %d: place %d (%d, %d), brute force (%d, %d)", y0, x0, t, k, out[k][0],
                              out[k][1], v2[k][0], v2[k][1]);
            }
    CHECK_MSG(full * 2 > lookups, "only %d of %d lookups found %d places", full, lookups, PNMF_LXM_CAP);
    pnmf_lxm_free(m);
    free(f);
}

/* The matcher on a flat reference, whose one chain holds every eighth
 * place of every eighth row (runs of equal blocks thinned), far more than
 * the PNMF_LXM_CHAIN places a lookup considers: the places returned are
 * those of the chain's first PNMF_LXM_CHAIN (positions falling) within
 * the bound, the nearest to the prediction first, ties to the later
 * position, as a brute force over that list finds them, for predictions
 * within the bound and beyond it. */
enum { FR = 160, FC = 320, FV = PNMF_RES_MAX_MV };
static void test_matcher_long_chain(void)
{
    const size_t n = (size_t)FR * FC;
    uint8_t *f = malloc(2 * n);
    CHECK(f != NULL);
    if (!f) return;
    memset(f, 77, 2 * n);
    PnmfLxMatch *m = pnmf_lxm_new(FR, FC, 0);
    CHECK(m != NULL);
    if (!m) {
        free(f);
        return;
    }
    const uint8_t *ref[1] = { f };
    CHECK(pnmf_lxm_refs(m, 1, ref, 1) == 0);
    const int w = FC - 7, h = FR - 7;
    int chain[(FR / 8 + 1) * (FC / 8 + 1)], nc = 0;
    for (int p = w * h - 1; p >= 0; p--)
        if (p / w % 8 == 0 && p % w % 8 == 0) chain[nc++] = p;
    CHECK_MSG(nc > PNMF_LXM_CHAIN, "the flat frame's chain holds %d places", nc);
    int none = 0, some = 0;
    for (int y0 = 0; y0 + 8 <= FR; y0 += 8)
        for (int x0 = 0; x0 + 8 <= FC; x0 += 8)
            for (int rep = 0; rep < 3; rep++) {
                const int py = (int)urn(2 * FV + 21) - FV - 10, px = (int)urn(2 * FV + 21) - FV - 10;
                int want[PNMF_LXM_CAP][2], wd[PNMF_LXM_CAP], nw = 0;
                for (int i = 0; i < nc && i < PNMF_LXM_CHAIN; i++) { /* in the chain's order */
                    const int dy = chain[i] / w - y0, dx = chain[i] % w - x0;
                    if (abs(dy) > FV || abs(dx) > FV) continue;
                    const int d = abs(dy - py) + abs(dx - px);
                    int k = nw < PNMF_LXM_CAP ? nw++ : PNMF_LXM_CAP;
                    if (k == PNMF_LXM_CAP) {
                        if (d >= wd[k - 1]) continue;
                        k--;
                    }
                    for (; k > 0 && wd[k - 1] > d; k--)
                        wd[k] = wd[k - 1], want[k][0] = want[k - 1][0], want[k][1] = want[k - 1][1];
                    wd[k] = d, want[k][0] = dy, want[k][1] = dx;
                }
                int16_t out[PNMF_LXM_CAP][2];
                const int no = pnmf_lxm_find(m, 0, f + n, y0, x0, FV, py, px, out, PNMF_LXM_CAP);
                CHECK_MSG(no == nw, "block (%d, %d): %d places, the chain's first %d hold %d", y0, x0, no,
                          PNMF_LXM_CHAIN, nw);
                for (int k = 0; k < no && k < nw; k++)
                    CHECK_MSG(out[k][0] == want[k][0] && out[k][1] == want[k][1],
                              "block (%d, %d) prediction (%d, %d): place %d (%d, %d), the chain's (%d, %d)", y0, x0,
                              py, px, k, out[k][0], out[k][1], want[k][0], want[k][1]);
                none += nw == 0, some += nw > 0;
            }
    /* blocks high in the frame have no place among the chain's first */
    CHECK_MSG(none > 0 && some > 0, "%d lookups with places, %d without", some, none);
    pnmf_lxm_free(m);
    free(f);
}

/* -q 0's matcher (fast): a frame after one whose lookups in reference 0
 * seldom found the block looks in reference 0 alone; after one whose
 * blocks were there, in every reference again. The plain matcher always
 * looks everywhere. Frames of random samples (no block repeats by
 * chance): frame 2 holds blocks of frame 0, frame 3 is frame 2, frame 4
 * holds blocks of frame 1. */
enum { SR = 64, SC = 64, SM = 5 };
static void test_matcher_sparse(void)
{
    const size_t n = (size_t)SR * SC;
    uint8_t *f = malloc(n * SM);
    CHECK(f != NULL);
    if (!f) return;
    for (size_t q = 0; q < n * SM; q++) f[q] = (uint8_t)urn(256);
    memcpy(f + 3 * n, f + 2 * n, n);
    /* a block of frame from at (y0, x0) copied into frame to, shifted by (2, -3) */
    const int copies[2][2] = { { 0, 2 }, { 1, 4 } };
    for (int c = 0; c < 2; c++)
        for (int y0 = 8; y0 + 8 <= SR - 8; y0 += 16)
            for (int x0 = 8; x0 + 8 <= SC - 8; x0 += 16)
                for (int v = 0; v < 8; v++)
                    memcpy(f + (size_t)copies[c][1] * n + (size_t)(y0 + v) * SC + x0,
                           f + (size_t)copies[c][0] * n + (size_t)(y0 + 2 + v) * SC + x0 - 3, 8);
    memcpy(f + 3 * n, f + 2 * n, n);
    PnmfLxMatch *m[2] = { pnmf_lxm_new(SR, SC, 0), pnmf_lxm_new(SR, SC, 1) };
    CHECK(m[0] != NULL && m[1] != NULL);
    for (int j = 1; j < SM && m[0] && m[1]; j++) {
        const uint8_t *ref[PNMF_RES_REFS];
        for (int t = 0; t < j; t++) ref[t] = f + (size_t)(j - 1 - t) * n;
        const uint8_t *src = f + (size_t)j * n;
        for (int k = 0; k < 2; k++) CHECK(pnmf_lxm_refs(m[k], j, ref, j) == 0);
        /* the copied blocks' hits in the reference they came from (t), per matcher */
        const int t = j == 2 ? 1 : j == 4 ? 2 : -1;
        int hits[2] = { 0, 0 }, copied = 0;
        for (int y0 = 0; y0 + 8 <= SR; y0 += 8)
            for (int x0 = 0; x0 + 8 <= SC; x0 += 8)
                for (int k = 0; k < 2; k++)
                    for (int tt = 0; tt < j; tt++) {
                        int16_t out[PNMF_LXM_CAP][2];
                        const int no = pnmf_lxm_find(m[k], tt, src, y0, x0, 8, 0, 0, out, PNMF_LXM_CAP);
                        CHECK(no >= 0);
                        if (tt == t && y0 % 16 == 8 && x0 % 16 == 8 && y0 + 8 <= SR - 8 && x0 + 8 <= SC - 8) {
                            hits[k] += no > 0 && out[0][0] == 2 && out[0][1] == -3;
                            copied += !k;
                        }
                    }
        if (t < 0) continue;
        CHECK_MSG(copied > 0 && hits[0] == copied, "frame %d: the plain matcher found %d of %d copied blocks", j,
                  hits[0], copied);
        /* frame 1's blocks were in no reference: frame 2 looks in reference 0
         * alone; frame 3's were all in reference 0: frame 4 looks everywhere */
        CHECK_MSG(hits[1] == (j == 4 ? copied : 0), "frame %d: the fast matcher found %d of %d copied blocks", j,
                  hits[1], copied);
    }
    pnmf_lxm_free(m[0]);
    pnmf_lxm_free(m[1]);
    free(f);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    for (int c = 0; c < NCLIPS; c++) test_clip(c);
    CHECK_MSG(probe_sides & 1, "no clip whose sample-context stream wins by far: the probe went untested");
    int big = 0;
    for (int c = 0; c < NCLIPS; c++) big |= test_lossy_clip(c);
    CHECK_MSG(big, "no lossy clip with a level over 1: the bound went untested");
    test_lossy_encoder(dir);
    test_matcher();
    test_matcher_tiled();
    test_matcher_long_chain();
    test_matcher_sparse();
    test_encoder(dir);
    return test_summary("test_lossless");
}
