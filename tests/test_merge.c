/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The encoder's merge trials (residual_search.c, PNMF_MERGE_TRIALS): in a
 * lossy window with sub-pixel motion and median vectors (window flags
 * bits 6 and 15), a smooth pattern panned by a fraction of a sample a
 * frame with noise of its own in every frame. The search alone finds each
 * block the vector that fits its noise best, a field of vectors a quarter
 * sample apart here and there; weighed whole, a neighbour's vector that
 * the block copies by its merge index wins where it costs fewer bits than
 * the error it adds. Checked: the window decodes to what the encoder
 * measured, and over four seeds of noise at least 0.3 of the shifted
 * blocks copy a merge candidate's vector (the default encoder 562 of
 * 1199, 0.47; one built with PNMF_MERGE_TRIALS 0 117 of 968, 0.12).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model_write.h"
#include "residual_search.h"
#include "test.h"

static unsigned rs;
static unsigned urn(unsigned n) { rs = rs * 1103515245u + 12345u; return ((rs >> 8) & 0xFFFFFF) % n; }

enum { ER = 48, EC = 64, EM = 8 };

/* A smooth pattern panned by (0.25, 0.75) samples a frame, noise of its
 * own in each frame. */
static uint8_t sample(int j, int y, int x)
{
    const double xx = x - 0.75 * j, yy = y - 0.25 * j;
    const double v = 128 + 60 * sin(yy * 0.31) * cos(xx * 0.23) + 30 * sin((xx + yy) * 0.13) + (double)urn(13) - 6;
    return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : lrint(v));
}

/* One window of noise seed; its shifted blocks added to *shifted, those
 * that copy a merge candidate's vector to *merged. */
static void test_merge_window(unsigned seed, long *merged_out, long *shifted_out)
{
    rs = seed;
    const size_t n = (size_t)ER * EC;
    uint8_t *src = malloc(EM * n);
    for (int j = 0; j < EM; j++)
        for (int y = 0; y < ER; y++)
            for (int x = 0; x < EC; x++) src[j * n + (size_t)y * EC + x] = sample(j, y, x);
    static uint8_t P[ER * EC], De[EM][ER * EC], Dd[EM][ER * EC];
    memset(P, 128, sizeof P);
    PnmfWindowModel md, rd;
    CHECK(pnmf_model_alloc(&md, ER, EC, ER, EC, EM, 1, 0) == 0);
    PnmfResidual *r = &md.res;
    const int step16 = 16 * 32; /* -q 40's step, 32 gray levels */
    CHECK(pnmf_residual_alloc(r, EM, ER, EC, step16, step16 / 4) == 0);
    r->subpel = 1, r->median = r->enc_median = 1, r->nbctx = 1;
    const double lambda = 2 * log(2.0) * 32.0 * 32.0 / 12;
    for (int j = 0; j < EM; j++) {
        const uint8_t *ref[PNMF_RES_REFS];
        for (int t = 0; t < PNMF_RES_REFS; t++) ref[t] = j - 1 - t >= 0 ? De[j - 1 - t] : NULL;
        CHECK(pnmf_residual_encode_frame(r, j, src + j * n, P, P, ref, j < PNMF_RES_REFS ? j : PNMF_RES_REFS, De[j],
                                         lambda) == 0);
    }
    /* through the payload: the decoder's frames are the encoder's */
    uint8_t *buf = NULL;
    size_t size = 0;
    char err[200] = "";
    CHECK(pnmf_model_write(&md, &buf, &size) == 0);
    CHECK_MSG(pnmf_model_read(buf, size, ER, EC, ER, EC, EM, 1, 4, 2, &rd, err, sizeof err) == 0, "%s", err);
    for (int j = 0; j < EM; j++) {
        const uint8_t *ref[PNMF_RES_REFS];
        for (int t = 0; t < PNMF_RES_REFS; t++) ref[t] = j - 1 - t >= 0 ? Dd[j - 1 - t] : NULL;
        pnmf_residual_frame(&rd.res, j, P, P, ref, Dd[j]);
    }
    CHECK_MSG(!memcmp(De, Dd, sizeof De), "the decoder differs from the encoder");
    /* the shifted blocks whose vector is one of the candidates it copies by
     * a merge index (the vectors stream's state as the writer keeps it) */
    const int bx = r->bx;
    const size_t nb = (size_t)bx * r->by;
    int16_t (*v)[3] = malloc(nb * sizeof(*v)), (*pv)[3] = malloc(nb * sizeof(*v));
    long merged = 0, shifted = 0;
    for (int j = 1; j < EM; j++) {
        const uint8_t *mo = r->modes + j * nb, *pmo = r->modes + (j - 1) * nb;
        size_t q = r->mvstart[j];
        PnmfVecState vs;
        pnmf_vec_init(&vs);
        vs.med = 1;
        for (size_t b = 0; b < nb; b++) {
            v[b][0] = v[b][1] = 0, v[b][2] = -1;
            if ((mo[b] & 7) != PNMF_RES_SHIFTED) continue;
            pnmf_vec_nb(&vs, (const int16_t (*)[3])v, mo, bx, b);
            vs.col = (pmo[b] & 7) == PNMF_RES_SHIFTED ? pv[b] : NULL;
            RcVecCand k;
            pnmf_vec_cands(&vs, b >= (size_t)bx && (mo[b - bx] & 7) == PNMF_RES_SHIFTED ? v[b - bx] : NULL, &k);
            v[b][0] = r->mv[2 * q], v[b][1] = r->mv[2 * q + 1], v[b][2] = r->mvref[q], q++;
            const int m = rc_vec_cand_index(&k, v[b][0], v[b][1], v[b][2]) >= 0;
            pnmf_vec_push(&vs, v[b][0], v[b][1], v[b][2], m);
            merged += m, shifted++;
        }
        CHECK(q == r->mvstart[j + 1]);
        memcpy(pv, v, nb * sizeof(*v));
    }
    *merged_out += merged, *shifted_out += shifted;
    free(v), free(pv);
    pnmf_free(buf);
    pnmf_model_free(&rd);
    pnmf_model_free(&md);
    free(src);
}

int main(void)
{
    long merged = 0, shifted = 0;
    for (unsigned seed = 1; seed <= 4; seed++) test_merge_window(seed, &merged, &shifted);
    CHECK_MSG(shifted > 4 * 200, "%ld shifted blocks", shifted);
    CHECK_MSG(merged >= 0.3 * shifted, "%ld of %ld shifted blocks copy a merge candidate", merged, shifted);
    return test_summary("test_merge");
}
