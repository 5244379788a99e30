/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The range coder (src/rangecoder.h): what is encoded decodes back, the
 * stream is exactly as long as the decoder reads, skewed decisions cost
 * close to their entropy, and the residual layer's mode and vector codes
 * round-trip over their whole ranges. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rangecoder.h"
#include "residual.h"
#include "test.h"

static uint32_t rng = 12345;
static uint32_t next(void) { rng = rng * 1664525u + 1013904223u; return rng >> 8; }

/* Random decisions, each with one of 8 contexts whose true probability
 * of a 1 differs, and direct bits among them. */
static void test_bits(void)
{
    enum { N = 200000 };
    static uint8_t bits[N], ctx[N], direct[N];
    const double p1[8] = { 0.01, 0.05, 0.2, 0.5, 0.7, 0.9, 0.97, 0.999 };
    double entropy = 0;
    for (int i = 0; i < N; i++) {
        direct[i] = next() % 17 == 0;
        ctx[i] = (uint8_t)(next() % 8);
        const double p = direct[i] ? 0.5 : p1[ctx[i]];
        bits[i] = (next() & 0xFFFF) < p * 65536;
        entropy -= log2(bits[i] ? p : 1 - p);
    }
    Buf b = { 0 };
    RcEnc e;
    RcProb pe[8];
    rc_probs_init(pe, 8);
    rc_enc_init(&e, &b);
    for (int i = 0; i < N; i++) {
        if (direct[i]) rc_encode_direct(&e, bits[i]);
        else rc_encode(&e, &pe[ctx[i]], bits[i]);
    }
    rc_enc_finish(&e);
    CHECK(!b.err && b.len >= 5 && b.p[0] == 0);
    /* adaptive estimates cost a little over the entropy (measured: 3.9 %;
     * the 1/16 steps keep p within 15/2048 of 0 and 1), not much more */
    CHECK_MSG(8.0 * b.len < 1.06 * entropy + 64, "%zu bytes, entropy %.0f bits", b.len, entropy);
    RcDec d;
    RcProb pd[8];
    rc_probs_init(pd, 8);
    rc_dec_init(&d, b.p, b.len);
    int wrong = 0;
    for (int i = 0; i < N; i++) {
        const int v = direct[i] ? rc_decode_direct(&d) : rc_decode(&d, &pd[ctx[i]]);
        wrong += v != bits[i];
    }
    CHECK_MSG(!wrong, "%d of %d decisions decoded wrong", wrong, N);
    CHECK(rc_dec_exact(&d, b.p));
    CHECK(!memcmp(pe, pd, sizeof(pe))); /* the same adaptation on both sides */
    /* cut by one byte: the decoder reads past the end */
    rc_probs_init(pd, 8);
    rc_dec_init(&d, b.p, b.len - 1);
    for (int i = 0; i < N; i++) direct[i] ? rc_decode_direct(&d) : rc_decode(&d, &pd[ctx[i]]);
    CHECK(!rc_dec_exact(&d, b.p));
    /* a byte too many: left over */
    rc_probs_init(pd, 8);
    uint8_t *longer = malloc(b.len + 1);
    memcpy(longer, b.p, b.len);
    longer[b.len] = 0;
    rc_dec_init(&d, longer, b.len + 1);
    for (int i = 0; i < N; i++) direct[i] ? rc_decode_direct(&d) : rc_decode(&d, &pd[ctx[i]]);
    CHECK(!rc_dec_exact(&d, longer));
    free(longer);
    pnmf_free(b.p);

    /* nothing coded: five bytes, all 0, read exactly */
    Buf z = { 0 };
    rc_enc_init(&e, &z);
    rc_enc_finish(&e);
    CHECK(z.len == 5 && !z.p[0] && !z.p[4]);
    rc_dec_init(&d, z.p, z.len);
    CHECK(rc_dec_exact(&d, z.p));
    pnmf_free(z.p);
}

/* Every mode 0..31 under every kind of neighbourhood, and every vector
 * difference -128..128 (the unary part and the Exp-Golomb tail). */
static void test_residual_codes(void)
{
    enum { N = 30000 };
    static int mode[N], L[N], A[N], P[N], dv[N], comp[N], z0[N], z1[N];
    for (int i = 0; i < N; i++) {
        L[i] = (int)(next() % 33) - 1, A[i] = (int)(next() % 33) - 1, P[i] = (int)(next() % 33) - 1;
        const int pick = (int)(next() % 4); /* often a neighbour's mode, as in real streams */
        mode[i] = pick == 0 && L[i] >= 0 ? L[i] : pick == 1 && A[i] >= 0 ? A[i] : pick == 2 && P[i] >= 0 ? P[i]
                                                                                        : (int)(next() % 32);
        dv[i] = i < 257 ? i - 128 : (int)(next() % 257) - 128;
        if (next() % 3 == 0) dv[i] = 0;
        comp[i] = (int)(next() & 1), z0[i] = (int)(next() & 1), z1[i] = (int)(next() & 1);
    }
    Buf b = { 0 };
    RcEnc e;
    static RcModeCtx mc, md;
    static RcVecCtx vc, vd;
    rc_mode_ctx_init(&mc), rc_vec_ctx_init(&vc);
    rc_enc_init(&e, &b);
    for (int i = 0; i < N; i++) {
        rc_encode_mode(&e, &mc, mode[i], L[i], A[i], P[i]);
        rc_encode_mvd(&e, &vc, comp[i], z0[i], z1[i], dv[i]);
    }
    rc_enc_finish(&e);
    RcDec d;
    rc_mode_ctx_init(&md), rc_vec_ctx_init(&vd);
    rc_dec_init(&d, b.p, b.len);
    int wrong_modes = 0, wrong_vectors = 0;
    for (int i = 0; i < N; i++) {
        wrong_modes += rc_decode_mode(&d, &md, L[i], A[i], P[i]) != mode[i];
        wrong_vectors += rc_decode_mvd(&d, &vd, comp[i], z0[i], z1[i]) != dv[i];
    }
    CHECK_MSG(!wrong_modes && !wrong_vectors, "%d modes, %d vectors wrong", wrong_modes, wrong_vectors);
    CHECK(rc_dec_exact(&d, b.p));
    pnmf_free(b.p);

    /* a run of 64 ones as the Exp-Golomb prefix is refused, not looped on */
    Buf c = { 0 };
    rc_enc_init(&e, &c);
    RcVecCtx ve;
    rc_vec_ctx_init(&ve);
    rc_encode(&e, &ve.zero[0][1][0], 1);
    rc_encode(&e, &ve.sign[0], 0);
    for (int i = 0; i < RC_MV_UNARY; i++) rc_encode(&e, &ve.mag[0][i < 3 ? i : 3], 1);
    for (int i = 0; i < 64; i++) rc_encode_direct(&e, 1);
    rc_enc_finish(&e);
    rc_vec_ctx_init(&vd);
    rc_dec_init(&d, c.p, c.len);
    CHECK(rc_decode_mvd(&d, &vd, 0, 1, 0) == INT32_MIN);
    pnmf_free(c.p);
}

int main(void)
{
    test_bits();
    test_residual_codes();
    return test_summary("test_rangecoder");
}
