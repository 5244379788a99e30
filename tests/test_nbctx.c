/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Window flags bit 14 (docs/format.md, "Neighbour contexts"): the block's
 * neighbour context against its direct definition; the modes and vectors
 * the library codes, read back by a reader written from the text alone;
 * and a window the encoder codes with the bit, written and read back,
 * whose contexts the encoder kept as the writer has them.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model_write.h"
#include "rangecoder_enc.h"
#include "residual_search.h"
#include "residual_window.h"
#include "test.h"

static unsigned rs = 20261126u;
static unsigned urn(unsigned n) { rs = rs * 1103515245u + 12345u; return ((rs >> 8) & 0xFFFFFF) % n; }

/* The mode of block (y, x) of frame j, -1 outside the frame or before frame 0. */
static int mode_at(const uint8_t *modes, int bx, int by, int j, int y, int x)
{
    if (j < 0 || y < 0 || x < 0 || x >= bx || y >= by) return -1;
    return modes[((size_t)j * by + y) * bx + x];
}

/* e = (AL == A) + 2 (PL == P), as the text defines it. */
static int direct_e(const uint8_t *modes, int bx, int by, int j, int y, int x)
{
    return (mode_at(modes, bx, by, j, y - 1, x - 1) == mode_at(modes, bx, by, j, y - 1, x)) +
           2 * (mode_at(modes, bx, by, j - 1, y, x - 1) == mode_at(modes, bx, by, j - 1, y, x));
}

#define BX 7
#define BY 5
#define MF 4

/* Modes of MF frames of BX x BY blocks in runs, as a real frame's: the
 * left's or the above's mode most of the time, the previous frame's
 * often, a new one now and then. */
static void random_modes(uint8_t *modes)
{
    for (int j = 0; j < MF; j++)
        for (int y = 0; y < BY; y++)
            for (int x = 0; x < BX; x++) {
                const int k = (int)urn(8), L = mode_at(modes, BX, BY, j, y, x - 1);
                const int A = mode_at(modes, BX, BY, j, y - 1, x), P = mode_at(modes, BX, BY, j - 1, y, x);
                modes[((size_t)j * BY + y) * BX + x] = (uint8_t)(k < 3 && L >= 0 ? L : k < 5 && A >= 0 ? A
                                                              : k < 7 && P >= 0 ? P : (int)urn(32));
            }
}

static void test_mode_nb(void)
{
    uint8_t modes[MF * BY * BX];
    int seen[4] = { 0 }, wrong = 0;
    for (int round = 0; round < 20; round++) {
        random_modes(modes);
        for (int j = 0; j < MF; j++)
            for (size_t b = 0; b < (size_t)BX * BY; b++) {
                const int e = pnmf_residual_mode_nb(modes + (size_t)j * BX * BY, BX, (size_t)BX * BY, b, j);
                wrong += e != direct_e(modes, BX, BY, j, (int)(b / BX), (int)(b % BX));
                seen[e & 3]++;
            }
    }
    CHECK_MSG(!wrong, "%d neighbour contexts differ from the definition", wrong);
    CHECK_MSG(seen[0] && seen[1] && seen[2] && seen[3], "contexts seen %d %d %d %d", seen[0], seen[1], seen[2],
              seen[3]);
}

/* ---- a reader of the two streams written from the text ------------------- */

typedef struct {
    RcProb left_nb[32][2][2][4], above[32][2], prev[32], tree[33][32];
} TextModes;

typedef struct {
    RcProb same_ref[2], ref_nb[3][16], zero_nb[2][2][2][2][2], sign[2], mag[2][4];
} TextVectors;

static void probs_half(RcProb *p, size_t n)
{
    rc_probs_init(p, n);
}

static int text_mode(RcDec *d, TextModes *c, int L, int A, int P, int e)
{
    if (L >= 0 && !rc_decode(d, &c->left_nb[L][L == A][L == P][e])) return L;
    if (A >= 0 && A != L && !rc_decode(d, &c->above[A][A == P])) return A;
    if (P >= 0 && P != L && P != A && !rc_decode(d, &c->prev[P])) return P;
    int node = 1;
    for (int i = 0; i < 5; i++) node = 2 * node + rc_decode(d, &c->tree[L + 1][node]);
    return node - 32;
}

/* One difference: zero under zero_nb[index][z][z1][s][n], sign, 16 unary
 * bins under mag[index][min(i, 3)], then Exp-Golomb. */
static int text_diff(RcDec *d, TextVectors *c, int index, int z, int z1, int s, int n)
{
    if (!rc_decode(d, &c->zero_nb[index][z][z1][s][n])) return 0;
    const int neg = rc_decode(d, &c->sign[index]);
    int a = 0;
    while (a < 16 && rc_decode(d, &c->mag[index][a < 3 ? a : 3])) a++;
    if (a == 16) {
        int k = 0;
        while (rc_decode_direct(d)) k++;
        unsigned x = 1;
        for (int i = 0; i < k; i++) x = 2 * x + (unsigned)rc_decode_direct(d);
        a = 16 + (int)x - 1;
    }
    return neg ? -(a + 1) : a + 1;
}

#define NV 3000

static void test_streams(void)
{
    uint8_t modes[MF * BY * BX];
    random_modes(modes);
    static int last[NV], z[NV], s[NV], t[NV], dv[NV][2];
    for (int i = 0; i < NV; i++) {
        last[i] = (int)urn(16), z[i] = (int)urn(2), s[i] = (int)urn(2);
        t[i] = urn(3) ? last[i] : (int)urn(16);
        for (int c = 0; c < 2; c++) {
            const int k = (int)urn(10);
            dv[i][c] = k < 4 ? 0 : k < 8 ? (int)urn(33) - 16 : (int)urn(1025) - 512; /* past the 16 bins too */
        }
    }
    Buf bm = { 0 }, bv = { 0 };
    RcEnc e;
    static RcModeCtx mc;
    static RcVecCtx vc;
    rc_mode_ctx_init(&mc);
    rc_enc_init(&e, &bm);
    const size_t nb = (size_t)BX * BY;
    for (int j = 0; j < MF; j++)
        for (size_t b = 0; b < nb; b++) {
            const uint8_t *mo = modes + j * nb + b;
            mc.nb = pnmf_residual_mode_nb(modes + j * nb, BX, nb, b, j);
            rc_encode_mode(&e, &mc, *mo, b % BX ? mo[-1] : -1, b >= BX ? mo[-BX] : -1, j ? mo[-(ptrdiff_t)nb] : -1);
        }
    rc_enc_finish(&e);
    rc_vec_ctx_init(&vc);
    vc.on = 1;
    rc_enc_init(&e, &bv);
    for (int i = 0; i < NV; i++) {
        vc.lsh = s[i];
        rc_encode_vector(&e, &vc, t[i], last[i], z[i], dv[i][0], dv[i][1]);
    }
    rc_enc_finish(&e);

    static TextModes tm;
    static TextVectors tv;
    probs_half(&tm.left_nb[0][0][0][0], sizeof(tm) / sizeof(RcProb));
    probs_half(tv.same_ref, sizeof(tv) / sizeof(RcProb));
    RcDec d;
    rc_dec_init(&d, bm.p, bm.len, RC_V13);
    int wrong = 0;
    for (int j = 0; j < MF; j++)
        for (int y = 0; y < BY; y++)
            for (int x = 0; x < BX; x++)
                wrong += text_mode(&d, &tm, mode_at(modes, BX, BY, j, y, x - 1), mode_at(modes, BX, BY, j, y - 1, x),
                                   mode_at(modes, BX, BY, j - 1, y, x), direct_e(modes, BX, BY, j, y, x)) !=
                         mode_at(modes, BX, BY, j, y, x);
    CHECK_MSG(!wrong, "%d modes read otherwise by the text's reader", wrong);
    CHECK(rc_dec_exact(&d, bm.p));
    rc_dec_init(&d, bv.p, bv.len, RC_V13);
    wrong = 0;
    for (int i = 0; i < NV; i++) {
        int ref = last[i];
        if (rc_decode(&d, &tv.same_ref[last[i] != 0])) {
            int node = 1;
            for (int k = 0; k < 4; k++) node = 2 * node + rc_decode(&d, &tv.ref_nb[last[i] < 2 ? last[i] : 2][node]);
            ref = node - 16;
        }
        const int n = ref != last[i];
        const int ddy = text_diff(&d, &tv, 0, z[i], 0, s[i], n);
        const int ddx = text_diff(&d, &tv, 1, z[i], ddy == 0, s[i], n);
        wrong += ref != t[i] || ddy != dv[i][0] || ddx != dv[i][1];
    }
    CHECK_MSG(!wrong, "%d vectors read otherwise by the text's reader", wrong);
    CHECK(rc_dec_exact(&d, bv.p));
    /* the same vectors without the bit: another stream, which the text's
     * reader does not read as these */
    Buf b0 = { 0 };
    rc_vec_ctx_init(&vc);
    rc_enc_init(&e, &b0);
    for (int i = 0; i < NV; i++) rc_encode_vector(&e, &vc, t[i], last[i], z[i], dv[i][0], dv[i][1]);
    rc_enc_finish(&e);
    CHECK(b0.len != bv.len || memcmp(b0.p, bv.p, bv.len));
    pnmf_free(bm.p), pnmf_free(bv.p), pnmf_free(b0.p);
}

/* ---- the encoder's window -------------------------------------------------- */

#define ROWS 64
#define COLS 96
#define M 8

/* A textured square moving over a shaded, textured background that pans
 * slowly: shifted blocks, still blocks and blocks of new content. */
static void make_clip(uint8_t *src)
{
    for (int j = 0; j < M; j++)
        for (int y = 0; y < ROWS; y++)
            for (int x = 0; x < COLS; x++) {
                const int bx = x + j / 2, sy = y - 8 - j, sx = x - 6 - 3 * j;
                int v = 60 + 2 * y + ((bx * 7 + y * 13) % 17) * 3;
                if (sy >= 0 && sy < 16 && sx >= 0 && sx < 16) v = 170 + ((sx * 5 + sy * 11) % 23) * 3;
                src[(size_t)j * ROWS * COLS + (size_t)y * COLS + x] = (uint8_t)v;
            }
}

/* The window flags a payload starts with (a varint of at most 3 bytes). */
static uint64_t payload_flags(const uint8_t *buf)
{
    uint64_t flags = 0;
    for (int i = 0, sh = 0; buf && i < 3; i++, sh += 7) {
        flags |= (uint64_t)(buf[i] & 0x7f) << sh;
        if (!(buf[i] & 0x80)) break;
    }
    return flags;
}

static int read_v(int version, const uint8_t *buf, size_t size, PnmfWindowModel *rd, char *err, size_t errlen)
{
    return pnmf_model_read_version(version, buf, size, ROWS, COLS, ROWS, COLS, M, 4, 4, 2, rd, err, errlen);
}

static void test_window(void)
{
    const size_t n = (size_t)ROWS * COLS;
    uint8_t *src = malloc(M * n), *P = calloc(M, n), *De = malloc(M * n), *Dd = malloc(M * n);
    make_clip(src);
    PnmfWindowModel md, rd;
    CHECK(pnmf_model_alloc(&md, ROWS, COLS, ROWS, COLS, M, 1, 0) == 0);
    CHECK(pnmf_residual_alloc(&md.res, M, ROWS, COLS, 64, 32) == 0);
    md.res.nbctx = 1, md.res.subpel = 1, md.res.median = md.res.enc_median = 1;
    encode_window(&md.res, src, P, 64.0 * 64 / 256 * 0.3, De);
    const size_t nb = (size_t)md.res.bx * md.res.by;
    CHECK_MSG(md.res.nmv >= 4, "%zu shifted blocks", md.res.nmv);

    /* the encoder's contexts are the writer's: every mode and vector again */
    static RcModeCtx mc;
    static RcVecCtx vc;
    rc_mode_ctx_init(&mc);
    rc_vec_ctx_init(&vc);
    vc.on = 1;
    size_t q = 0;
    static int16_t pcur[128][3]; /* the frame before's vectors, the previous-frame candidate */
    for (int j = 0; j < M; j++) {
        const uint8_t *mo = md.res.modes + j * nb;
        for (size_t b = 0; b < nb; b++) {
            mc.nb = pnmf_residual_mode_nb(mo, md.res.bx, nb, b, j);
            rc_mode_step(&mc, mo[b], b % md.res.bx ? mo[b - 1] : -1, b >= (size_t)md.res.bx ? mo[b - md.res.bx] : -1,
                         j ? mo[(ptrdiff_t)b - (ptrdiff_t)nb] : -1, 1);
        }
        PnmfVecState st;
        pnmf_vec_init(&st);
        st.med = 1; /* the encoder prices vectors as window flags bit 15 codes them */
        int16_t cur[128][3];
        for (size_t b = 0; b < nb; b++) {
            cur[b][2] = -1;
            if ((mo[b] & 7) != PNMF_RES_SHIFTED) continue;
            const int t = md.res.mvref[q], vy = md.res.mv[2 * q], vx = md.res.mv[2 * q + 1];
            q++;
            RcVecCand k;
            pnmf_vec_nb(&st, (const int16_t (*)[3])cur, NULL, md.res.bx, b);
            st.col = j ? pcur[b] : NULL;
            pnmf_vec_cands(&st, b >= (size_t)md.res.bx ? cur[b - md.res.bx] : NULL, &k);
            int p[2];
            pnmf_vec_pred(&st, t, p);
            const int idx = rc_vec_cand_index(&k, vy, vx, t);
            vc.lsh = b % md.res.bx && (mo[b - 1] & 7) == PNMF_RES_SHIFTED;
            rc_merge_step(&vc, &k, st.lm, idx, 1);
            if (idx < 0) rc_vector_step(&vc, t, st.lastref, st.z0, vy - p[0], vx - p[1], 1);
            pnmf_vec_push(&st, vy, vx, t, idx >= 0);
            cur[b][0] = (int16_t)vy, cur[b][1] = (int16_t)vx, cur[b][2] = (int16_t)t;
        }
        memcpy(pcur, cur, nb * sizeof(cur[0]));
    }
    CHECK(nb <= 128 && q == md.res.nmv);
    CHECK_MSG(!memcmp(&mc, &md.res.enc_modes, offsetof(RcModeCtx, nb)), "the encoder's mode contexts differ");
    CHECK_MSG(!memcmp(&vc, &md.res.enc_vectors, offsetof(RcVecCtx, on)), "the encoder's vector contexts differ");

    /* written with flags bit 14, read back as the encoder made it */
    uint8_t *buf = NULL, *b0 = NULL;
    size_t size = 0, s0 = 0;
    char err[200] = "";
    CHECK(pnmf_model_write(&md, &buf, &size) == 0);
    const uint64_t flags = payload_flags(buf);
    CHECK_MSG(flags & PNMF_FLAG_NBCTX, "flags 0x%llx", (unsigned long long)flags);
    CHECK_MSG(read_v(PNMF_PAYLOAD_VERSION, buf, size, &rd, err, sizeof err) == 0, "%s", err);
    CHECK(rd.res.nbctx && rd.res.nmv == md.res.nmv && !memcmp(rd.res.modes, md.res.modes, M * nb) &&
          !memcmp(rd.res.mv, md.res.mv, 2 * md.res.nmv * sizeof(int16_t)) &&
          !memcmp(rd.res.mvref, md.res.mvref, md.res.nmv));
    decode_window(&rd.res, P, Dd);
    CHECK(!memcmp(De, Dd, M * n));
    pnmf_model_free(&rd);
    /* a v9 reader does not know bit 15 (median vectors), where the writer set it */
    if (flags & PNMF_FLAG_MEDIAN)
        CHECK(read_v(9, buf, size, &rd, err, sizeof err) == PNMF_ERR_CORRUPT && strstr(err, "unknown features"));
    /* a v8 reader does not know bit 14 */
    CHECK(read_v(8, buf, size, &rd, err, sizeof err) == PNMF_ERR_CORRUPT && strstr(err, "unknown features"));
    /* the same decisions without the bit: other streams (past the flags'
     * varints, which differ anyway), the same blocks */
    md.res.nbctx = 0;
    CHECK(pnmf_model_write(&md, &b0, &s0) == 0);
    size_t f1 = 1, f0 = 1;
    while (buf && f1 < size && buf[f1 - 1] & 0x80) f1++;
    while (b0 && f0 < s0 && b0[f0 - 1] & 0x80) f0++;
    CHECK(buf && b0 && (s0 - f0 != size - f1 || memcmp(b0 + f0, buf + f1, size - f1)));
    CHECK_MSG(read_v(PNMF_PAYLOAD_VERSION, b0, s0, &rd, err, sizeof err) == 0, "%s", err);
    CHECK(!rd.res.nbctx && !memcmp(rd.res.modes, md.res.modes, M * nb) &&
          !memcmp(rd.res.mv, md.res.mv, 2 * md.res.nmv * sizeof(int16_t)));
    pnmf_model_free(&rd);
    /* every truncation refused, every one-bit change read or refused, never a crash */
    int refused = 0;
    for (size_t cut = 0; cut < size; cut++) refused += read_v(PNMF_PAYLOAD_VERSION, buf, cut, &rd, err, sizeof err) < 0;
    CHECK(refused == (int)size);
    for (size_t at = 0; at < size; at++)
        for (int bit = 0; bit < 8; bit++) {
            buf[at] ^= (uint8_t)(1 << bit);
            if (read_v(PNMF_PAYLOAD_VERSION, buf, size, &rd, err, sizeof err) == 0) pnmf_model_free(&rd);
            buf[at] ^= (uint8_t)(1 << bit);
        }
    printf("window: %zu bytes with bit 14, %zu without; %zu shifted blocks\n", size, s0, md.res.nmv);
    pnmf_free(buf), pnmf_free(b0);
    pnmf_model_free(&md);
    free(src), free(P), free(De), free(Dd);
}

/* A still window of four blocks: the contexts bit 14 adds cannot pay for
 * the two bytes it adds to the flags; the writer leaves it out and writes
 * what it writes without it. */
static void test_still(void)
{
    const int rows = 16, cols = 16, m = 3;
    const size_t n = (size_t)rows * cols;
    uint8_t src[3 * 256], P[3 * 256] = { 0 }, De[3 * 256];
    for (size_t i = 0; i < (size_t)m * n; i++) src[i] = (uint8_t)(90 + (i % n) % 37);
    PnmfWindowModel md;
    CHECK(pnmf_model_alloc(&md, rows, cols, rows, cols, m, 1, 0) == 0);
    CHECK(pnmf_residual_alloc(&md.res, m, rows, cols, 64, 32) == 0);
    md.res.nbctx = 1;
    encode_window(&md.res, src, P, 64.0 * 64 / 256 * 0.3, De);
    uint8_t *buf = NULL, *b0 = NULL;
    size_t size = 0, s0 = 0;
    CHECK(pnmf_model_write(&md, &buf, &size) == 0);
    md.res.nbctx = 0;
    CHECK(pnmf_model_write(&md, &b0, &s0) == 0);
    CHECK_MSG(buf && b0 && !(buf[0] & 0x80) && size == s0 && !memcmp(buf, b0, size), "flags 0x%02x, %zu bytes, %zu without",
              buf ? buf[0] : 0, size, s0);
    pnmf_free(buf), pnmf_free(b0);
    pnmf_model_free(&md);
}

/* Window flags bit 15 (docs/format.md, "Median vectors"): the prediction
 * of a vector from random neighbours against the text's definition, the
 * median taken by sorting. */
static void test_median(void)
{
    int bad = 0;
    for (int it = 0; it < 20000; it++) {
        const int bx = 1 + (int)urn(5), by = 1 + (int)urn(4);
        const size_t nb = (size_t)bx * by, b = urn((unsigned)nb);
        int16_t v[20][3];
        for (size_t i = 0; i < nb; i++)
            v[i][0] = (int16_t)((int)urn(9) - 4), v[i][1] = (int)urn(9) - 4, v[i][2] = (int16_t)((int)urn(4) - 1);
        PnmfVecState st;
        pnmf_vec_init(&st);
        st.med = 1;
        const int t = (int)urn(3);
        st.last[t][0] = (int)urn(9) - 4, st.last[t][1] = (int)urn(9) - 4;
        pnmf_vec_nb(&st, (const int16_t (*)[3])v, NULL, bx, b);
        int p[2];
        pnmf_vec_pred(&st, t, p);
        /* the text: N0 left, N1 above, N2 above-right (above-left in the last column) */
        const int x = (int)(b % bx), y = (int)(b / bx);
        const int ny[3] = { y, y - 1, y - 1 }, nx[3] = { x - 1, x, x + 1 < bx ? x + 1 : x - 1 };
        int cnt = 0, one = -1, a[2][3];
        for (int i = 0; i < 3; i++) {
            const int in = ny[i] >= 0 && nx[i] >= 0 && nx[i] < bx;
            const int16_t *w = in ? v[ny[i] * bx + nx[i]] : NULL;
            const int counted = w && w[2] == t;
            cnt += counted;
            if (counted) one = i;
            for (int c = 0; c < 2; c++) a[c][i] = counted ? w[c] : st.last[t][c];
        }
        int want[2];
        for (int c = 0; c < 2; c++) {
            if (cnt == 0) {
                want[c] = st.last[t][c];
            } else if (cnt == 1) {
                want[c] = a[c][one];
            } else {
                int s3[3] = { a[c][0], a[c][1], a[c][2] };
                for (int i = 0; i < 3; i++)
                    for (int k = i + 1; k < 3; k++)
                        if (s3[k] < s3[i]) { const int tmp = s3[i]; s3[i] = s3[k]; s3[k] = tmp; }
                want[c] = s3[1];
            }
        }
        bad += p[0] != want[0] || p[1] != want[1];
        /* without the bit: the frame's last vector of t */
        st.med = 0;
        pnmf_vec_pred(&st, t, p);
        bad += p[0] != st.last[t][0] || p[1] != st.last[t][1];
    }
    CHECK_MSG(!bad, "%d predictions differ from the definition", bad);
}

/* A window of hand-made vectors that bit 15 pays for: every block of
 * frames 1.. shifted, its vector a smooth field (a zoom: dy grows down the
 * frame, dx across it) that moves on from frame to frame, with a few
 * blocks of another reference. The writer sets the bit; a v10 reader
 * reads the vectors back, a v9 one refuses the bit; every truncation is
 * refused and every one-bit change read or refused, never a crash. */
static void test_median_window(void)
{
    PnmfWindowModel md, rd;
    CHECK(pnmf_model_alloc(&md, ROWS, COLS, ROWS, COLS, M, 1, 0) == 0);
    PnmfResidual *r = &md.res;
    CHECK(pnmf_residual_alloc(r, M, ROWS, COLS, 64, 64) == 0);
    const size_t nb = (size_t)r->bx * r->by;
    r->mv = pnmf_malloc_array(2 * M * nb, sizeof(int16_t));
    r->mvref = pnmf_malloc_array(M * nb, 1);
    r->subpel = 1, r->continues = 1, r->median = 1, r->nbctx = 1;
    for (int j = 0; j < M; j++) {
        r->start[j + 1] = 0;
        r->mvstart[j] = r->nmv;
        for (size_t b = 0; b < nb; b++) {
            const int y = (int)(b / r->bx), x = (int)(b % r->bx);
            r->modes[j * nb + b] = PNMF_RES_SHIFTED;
            const int t = urn(16) == 0 ? 1 : 0;
            r->mv[2 * r->nmv] = (int16_t)(y * 3 - 10 + j + (int)urn(2));
            r->mv[2 * r->nmv + 1] = (int16_t)(x * 2 - 12 - j + (int)urn(2));
            r->mvref[r->nmv++] = (uint8_t)t;
        }
    }
    r->mvstart[M] = r->nmv;
    uint8_t *buf = NULL;
    size_t size = 0;
    char err[200] = "";
    CHECK(pnmf_model_write(&md, &buf, &size) == 0);
    const uint64_t flags = payload_flags(buf);
    CHECK_MSG(flags & PNMF_FLAG_MEDIAN, "flags 0x%llx", (unsigned long long)flags);
    CHECK_MSG(read_v(PNMF_PAYLOAD_VERSION, buf, size, &rd, err, sizeof err) == 0, "%s", err);
    CHECK(rd.res.median && rd.res.nmv == r->nmv && !memcmp(rd.res.mv, r->mv, 2 * r->nmv * sizeof(int16_t)) &&
          !memcmp(rd.res.mvref, r->mvref, r->nmv));
    pnmf_model_free(&rd);
    CHECK(read_v(9, buf, size, &rd, err, sizeof err) == PNMF_ERR_CORRUPT && strstr(err, "unknown features"));
    /* without the bit the same vectors take more bytes */
    uint8_t *b0 = NULL;
    size_t s0 = 0;
    r->median = 0;
    CHECK(pnmf_model_write(&md, &b0, &s0) == 0 && s0 > size);
    int refused = 0, odd = 0;
    for (size_t cut = 0; cut < size; cut++) refused += read_v(PNMF_PAYLOAD_VERSION, buf, cut, &rd, err, sizeof err) < 0;
    CHECK(refused == (int)size);
    for (size_t at = 0; buf && at < size; at++)
        for (int bit = 0; bit < 8; bit++) {
            buf[at] ^= (uint8_t)(1 << bit);
            err[0] = 0;
            const int ret = read_v(PNMF_PAYLOAD_VERSION, buf, size, &rd, err, sizeof err);
            if (ret == 0) pnmf_model_free(&rd);
            else odd += ret != PNMF_ERR_CORRUPT || !err[0];
            buf[at] ^= (uint8_t)(1 << bit);
        }
    CHECK_MSG(!odd, "%d one-bit changes failed without a corrupt reason", odd);
    printf("median window: %zu bytes with bit 15, %zu without; %zu vectors\n", size, s0, r->nmv);
    pnmf_free(buf), pnmf_free(b0);
    pnmf_model_free(&md);
}

int main(void)
{
    rc_cost_init();
    test_median();
    test_median_window();
    test_mode_nb();
    test_streams();
    test_window();
    test_still();
    return test_summary("test_nbctx");
}
