/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The range coder (src/rangecoder.h): what is encoded decodes back, the
 * stream is exactly as long as the decoder reads, skewed decisions cost
 * close to their entropy, the residual layer's mode and vector codes
 * round-trip over their whole ranges, and the encoder's shortcut prices
 * of pixel levels are the decisions' prices to the bit. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rangecoder_enc.h"
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
    /* adaptive estimates cost a little over the entropy (the fast
     * estimate's 1/16 steps keep some noise), not much more */
    CHECK_MSG(8.0 * b.len < 1.06 * entropy + 64, "%zu bytes, entropy %.0f bits", b.len, entropy);
    RcDec d;
    RcProb pd[8];
    rc_probs_init(pd, 8);
    rc_dec_init(&d, b.p, b.len, RC_V13);
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
    rc_dec_init(&d, b.p, b.len - 1, RC_V13);
    for (int i = 0; i < N; i++) direct[i] ? rc_decode_direct(&d) : rc_decode(&d, &pd[ctx[i]]);
    CHECK(!rc_dec_exact(&d, b.p));
    /* a byte too many: left over */
    rc_probs_init(pd, 8);
    uint8_t *longer = malloc(b.len + 1);
    memcpy(longer, b.p, b.len);
    longer[b.len] = 0;
    rc_dec_init(&d, longer, b.len + 1, RC_V13);
    for (int i = 0; i < N; i++) direct[i] ? rc_decode_direct(&d) : rc_decode(&d, &pd[ctx[i]]);
    CHECK(!rc_dec_exact(&d, longer));
    free(longer);
    pnmf_free(b.p);

    /* nothing coded: five bytes, all 0, read exactly */
    Buf z = { 0 };
    rc_enc_init(&e, &z);
    rc_enc_finish(&e);
    CHECK(z.len == 5 && !z.p[0] && !z.p[4]);
    rc_dec_init(&d, z.p, z.len, RC_V13);
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
    rc_dec_init(&d, b.p, b.len, RC_V13);
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
    rc_dec_init(&d, c.p, c.len, RC_V13);
    CHECK(rc_decode_mvd(&d, &vd, 0, 1, 0) == INT32_MIN);
    pnmf_free(c.p);
}

/* A random level of the kind the residual layer codes: mostly 0, small
 * magnitudes often, now and then one up to max (the unary bins and the
 * Exp-Golomb escape). */
static int16_t rand_level(int max)
{
    const uint32_t r = next() % 100;
    const int a = r < 60 ? 0 : r < 80 ? 1 : r < 92 ? 2 + (int)(next() % 6) : r < 98 ? (int)(next() % 40) : (int)(next() % (uint32_t)(max + 1));
    return (int16_t)(next() & 1 ? -a : a);
}

/* The levels stream (format 6): pixel blocks of every clipped size and
 * transform blocks (quarters empty, with a level only at position 15,
 * full) decode to what was coded, the stream ends where the decoder
 * stops, the encoder's estimate with the same contexts matches the
 * stream's length, and a magnitude over the reader's bound is refused. */
static void test_level_codes(void)
{
    enum { BLOCKS = 3000 };
    static int16_t lev[BLOCKS * 64], back[BLOCKS * 64];
    static int kind[BLOCKS], tr[BLOCKS], h[BLOCKS], w[BLOCKS];
    size_t n = 0;
    for (int b = 0; b < BLOCKS; b++) {
        kind[b] = (int)(next() % RC_LEV_KINDS), tr[b] = (int)(next() % 3 == 0);
        h[b] = tr[b] ? 8 : 1 + (int)(next() % 8), w[b] = tr[b] ? 8 : 1 + (int)(next() % 8);
        const int max = tr[b] ? PNMF_RES_MAX_COEF : 256;
        for (int q = 0; q < h[b] * w[b]; q++) lev[n + (size_t)q] = rand_level(max);
        if (tr[b]) {
            const int shape = (int)(next() % 4);
            for (int sb = 0; sb < 4; sb++) {
                int16_t *lv = lev + n + 16 * sb;
                if (shape == 0 && sb != 1) memset(lv, 0, 16 * sizeof(*lv)); /* one quarter coded */
                if (shape == 1) memset(lv, 0, 15 * sizeof(*lv)), lv[15] = (int16_t)(sb + 1); /* the last position alone */
                if (shape == 2) lv[0] = PNMF_RES_MAX_COEF, lv[15] = -PNMF_RES_MAX_COEF;
            }
        }
        n += (size_t)h[b] * w[b];
    }
    Buf buf = { 0 };
    RcEnc e;
    static RcLevCtx ce, cd, cc;
    rc_lev_ctx_init(&ce), rc_lev_ctx_init(&cd), rc_lev_ctx_init(&cc);
    rc_enc_init(&e, &buf);
    RcBin oe = { .enc = &e }, oc = { .update = 1 };
    rc_cost_init();
    for (size_t b = 0, q = 0; b < BLOCKS; q += (size_t)h[b] * w[b], b++) {
        if (tr[b]) {
            rc_transform_levels(&oe, &ce, kind[b], lev + q, PNMF_RES_MAX_COEF);
            rc_transform_levels(&oc, &cc, kind[b], lev + q, PNMF_RES_MAX_COEF);
        } else {
            rc_pixel_levels(&oe, &ce, kind[b], h[b], w[b], lev + q, 256);
            rc_pixel_levels(&oc, &cc, kind[b], h[b], w[b], lev + q, 256);
        }
    }
    rc_enc_finish(&e);
    RcDec d;
    rc_dec_init(&d, buf.p, buf.len, RC_V13);
    int refused = 0;
    for (size_t b = 0, q = 0; b < BLOCKS; q += (size_t)h[b] * w[b], b++) {
        memset(back + q, 0x55, (size_t)h[b] * w[b] * sizeof(*back)); /* decoding must write every level */
        refused += tr[b] ? rc_decode_transform_levels(&d, &cd, kind[b], back + q, PNMF_RES_MAX_COEF)
                         : rc_decode_pixel_levels(&d, &cd, kind[b], h[b], w[b], back + q, 256);
    }
    CHECK(!refused && !memcmp(lev, back, n * sizeof(*lev)));
    CHECK(rc_dec_exact(&d, buf.p));
    /* the decoder's contexts end as the encoder's (the runs of one
     * context decode with its estimates in registers) */
    CHECK(!memcmp(&cd, &ce, sizeof(cd)));
    /* the stream cut short: the decoder reads past its end and says so */
    rc_lev_ctx_init(&cd);
    rc_dec_init(&d, buf.p, buf.len / 2, RC_V13);
    for (size_t b = 0, q = 0; b < BLOCKS; q += (size_t)h[b] * w[b], b++)
        if (tr[b])
            rc_decode_transform_levels(&d, &cd, kind[b], back + q, PNMF_RES_MAX_COEF);
        else
            rc_decode_pixel_levels(&d, &cd, kind[b], h[b], w[b], back + q, 256);
    CHECK(d.over && !rc_dec_exact(&d, buf.p));
    /* the estimate: the same decisions, so within the coder's overhead */
    CHECK_MSG(fabs(oc.bits / 8 - (double)buf.len) < 0.01 * (double)buf.len + 8, "estimated %.0f bytes, coded %zu",
              oc.bits / 8, buf.len);
    /* a magnitude over the bound the reader gives is refused */
    rc_lev_ctx_init(&cd);
    rc_dec_init(&d, buf.p, buf.len, RC_V13);
    int over = 0;
    for (size_t b = 0, q = 0; b < BLOCKS && !over; q += (size_t)h[b] * w[b], b++)
        over = tr[b] ? rc_decode_transform_levels(&d, &cd, kind[b], back + q, 100)
                     : rc_decode_pixel_levels(&d, &cd, kind[b], h[b], w[b], back + q, 100);
    CHECK(over);
    pnmf_free(buf.p);
}

/* rc_pixel_levels()'s decisions one rc_bin() at a time, as the stream
 * codes them: the reference of the encoder's shortcut prices. */
static void pixel_levels_ref(RcBin *o, RcLevCtx *c, int kind, int h, int w, const int16_t *lev)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const int L = x ? lev[y * w + x - 1] : 0, A = y ? lev[(y - 1) * w + x] : 0;
            const int cls = rc_lev_class(abs(L) + abs(A)), sn = L + A;
            const int l = lev[y * w + x];
            if (!rc_bin(o, &c->pzero[kind][cls], l != 0)) continue;
            rc_bin(o, &c->psign[kind][sn < 0 ? 0 : sn == 0 ? 1 : 2], l < 0);
            if (rc_bin(o, &c->pgt1[kind][cls], abs(l) > 1)) rc_lev_rem(o, c->pmag[kind][cls], 1, abs(l) - 2);
        }
}

/* The encoder's prices of pixel levels: from 0 bits with the contexts
 * still (an integer sum) the same double, to the bit, as the decisions'
 * sum one by one; with the contexts moved, the same bits and contexts;
 * the contexts moved alone (rc_pixel_levels_adapt()) the same; a price
 * that may stop runs whole, the same, where it stays under its stop, and
 * stops only where lb + (base + lambda * the bits) reach it. */
static void test_level_prices(void)
{
    static RcLevCtx c, cr, cu;
    rc_lev_ctx_init(&c);
    rc_cost_init();
    int same = 1, moved = 1, stops = 0, whole = 0, upto = 1;
    for (int b = 0; b < 4000; b++) {
        const int kind = (int)(next() % RC_LEV_KINDS), h = 1 + (int)(next() % 8), w = 1 + (int)(next() % 8);
        int16_t lev[64];
        for (int q = 0; q < h * w; q++) lev[q] = rand_level(b % 7 ? 40 : 4000);
        RcBin of = { .update = 0 }, orf = { .update = 0 };
        rc_pixel_levels(&of, &c, kind, h, w, lev, INT16_MAX);
        pixel_levels_ref(&orf, &c, kind, h, w, lev);
        same &= of.bits == orf.bits;
        const double lambda = 0.05 + (double)(next() % 100) / 10, lb = (double)(next() % 1000) / 7;
        const double base = b & 1 ? (double)(next() % 5000) : 0; /* a squared error, or none */
        const double stop = lb + (base + lambda * orf.bits * (double)(next() % 200) / 100);
        RcBin ou = { .update = 0 };
        const int st = rc_pixel_levels_fixed_upto(&ou, &c, kind, h, w, lev, INT16_MAX, lb, base, lambda, stop);
        if (st) upto &= lb + (base + lambda * ou.bits) >= stop, stops++;
        else upto &= ou.bits == orf.bits, whole++;
        upto &= !(lb + (base + lambda * orf.bits) < stop && st);
        cr = c, cu = c;
        RcBin om = { .update = 1, .bits = 0.5 }, omr = { .update = 1, .bits = 0.5 };
        rc_pixel_levels(&om, &c, kind, h, w, lev, INT16_MAX);
        pixel_levels_ref(&omr, &cr, kind, h, w, lev);
        rc_pixel_levels_adapt(&cu, kind, h, w, lev);
        moved &= om.bits == omr.bits && !memcmp(&c, &cr, sizeof(c)) && !memcmp(&c, &cu, sizeof(c));
    }
    CHECK(same);
    CHECK(moved);
    CHECK(upto && stops > 100 && whole > 100);
}

/* ---- the decoder against docs/format.md's text, nothing shared ---------- */

typedef struct SpecDec {
    const uint8_t *p;
    size_t n, at;
    uint32_t range, code;
} SpecDec;

static uint32_t spec_byte(SpecDec *s) { return s->at < s->n ? s->p[s->at++] : (s->at++, 0u); }

/* One decision of format 13 under the context (a, b, n), or of format 12
 * under the 11-bit probability *p12 (a NULL). */
static int spec_decision(SpecDec *s, uint32_t *a, uint32_t *b, uint32_t *n, uint32_t *p12)
{
    uint32_t bound;
    if (a) bound = (s->range >> 15) * ((*a + *b) >> 1);
    else bound = (s->range >> 11) * *p12;
    int bit = 0;
    if (s->code < bound) {
        s->range = bound;
    } else {
        s->code -= bound, s->range -= bound;
        bit = 1;
    }
    if (a) {
        int k = 0;
        while ((*n + 2) >> (k + 1)) k++; /* floor(log2(n + 2)) */
        const int s1 = k < 2 ? 2 : k > 4 ? 4 : k, s2 = k < 2 ? 2 : k > 7 ? 7 : k;
        if (!bit) *a += (32768 - *a) >> s1, *b += (32768 - *b) >> s2;
        else *a -= *a >> s1, *b -= *b >> s2;
        *n = *n + 1 < 126 ? *n + 1 : 126;
    } else {
        if (!bit) *p12 += (2048 - *p12) >> 4;
        else *p12 -= *p12 >> 4;
    }
    while (s->range < (1u << 24)) s->range <<= 8, s->code = (s->code << 8) | spec_byte(s);
    return bit;
}

/* Random byte streams (any bytes decode) read as decisions of 6 contexts
 * and direct ones, by rc_decode()/rc_decode_data()/rc_decode_direct() of
 * either format and by the definition: the same decisions, the same
 * bytes read, the same states. Skewed streams drive the probabilities to
 * their extremes. */
static void test_spec(void)
{
    enum { N = 60000, K = 6 };
    static uint8_t bytes[N / 4];
    for (int version = 12; version <= 13; version++)
        for (int skew = 0; skew < 3; skew++) {
            for (int i = 0; i < N / 4; i++) {
                const uint32_t r = next();
                bytes[i] = skew == 0 ? (uint8_t)r : skew == 1 ? (uint8_t)(r & 7) : (uint8_t)(0xF8 | (r & 7));
            }
            bytes[0] = 0;
            RcDec d;
            rc_dec_init(&d, bytes, sizeof bytes, version);
            RcProb c[K];
            rc_probs_init(c, K);
            SpecDec s = { bytes, sizeof bytes, 0, 0xFFFFFFFFu, 0 };
            for (int i = 0; i < 5; i++) s.code = (s.code << 8) | spec_byte(&s);
            uint32_t a[K], b[K], cnt[K], p12[K];
            for (int k = 0; k < K; k++) a[k] = b[k] = 16384, cnt[k] = 0, p12[k] = 1024;
            int wrong = 0, states = 0;
            for (int i = 0; i < N; i++) {
                const uint32_t r = next();
                const int k = (int)(r % K), kind = (int)(r >> 8) % 8;
                int x, y;
                if (kind == 0) {
                    x = rc_decode_direct(&d);
                    s.range >>= 1;
                    y = s.code >= s.range;
                    if (y) s.code -= s.range;
                    while (s.range < (1u << 24)) s.range <<= 8, s.code = (s.code << 8) | spec_byte(&s);
                } else {
                    x = kind == 1 ? rc_decode_data(&d, &c[k]) : rc_decode(&d, &c[k]);
                    y = version >= 13 ? spec_decision(&s, &a[k], &b[k], &cnt[k], NULL)
                                      : spec_decision(&s, NULL, NULL, NULL, &p12[k]);
                    states += version >= 13 ? c[k].a != a[k] || c[k].b != b[k] || c[k].n != cnt[k]
                                            : c[k].a != 16 * p12[k] || c[k].b != 16 * p12[k];
                }
                wrong += x != y || d.range != s.range || d.code != s.code;
            }
            CHECK_MSG(!wrong && !states, "format %d, bytes %d: %d decisions, %d states differ", version, skew, wrong,
                      states);
            CHECK((size_t)(d.p - bytes) + (size_t)d.over == s.at || (d.over && s.at > sizeof bytes));
        }
}

int main(void)
{
    test_spec();
    test_bits();
    test_residual_codes();
    test_level_codes();
    test_level_prices();
    return test_summary("test_rangecoder");
}
