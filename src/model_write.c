/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Writing the window payload (model_write.h; docs/format.md, "Window
 * payload"): the layout model.c reads, value for value. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "intra.h"
#include "lossless.h"
#include "model_write.h"
#include "palette_enc.h"
#include "rangecoder_enc.h"
#include "residual_search.h"
#include "tx8.h"
#include "varint.h"

int pnmf_model_add(PnmfWindowModel *md, int j, int i, uint32_t c, int32_t p)
{
    const int n = md->first[md->m];
    if (n >= md->cap) return PNMF_ERR_LIMIT;
    /* frames j' > j hold no entries yet: move their (equal) ends along */
    for (int t = j + 1; t <= md->m; t++) md->first[t] = n + 1;
    md->ent[n].c = c, md->ent[n].p = p, md->ent[n].i = i;
    return 0;
}

/* d wrapped into [-(size/2), size - size/2) */
static int wrap(int d, int size)
{
    d %= size;
    if (d < 0) d += size;
    if (d >= size - size / 2) d -= size;
    return d;
}

/* The sprite layer as model.c's read_sprites() reads it: each new pose's
 * frame, box and mask (its pixels are cut from the decoded frame), then
 * the placements (pl: as write_places() or write_places_rc() wrote them). */
static void write_sprites(Buf *b, const PnmfSpriteLayer *L, const Buf *pl)
{
    put_u(b, (uint64_t)L->npose);
    for (int i = 0; i < L->npose; i++) {
        const PnmfSpritePose *ps = &L->pose[i];
        const size_t n = (size_t)ps->w * ps->h;
        put_u(b, (uint64_t)ps->src);
        put_u(b, (uint64_t)ps->sy);
        put_u(b, (uint64_t)ps->sx);
        put_u(b, (uint64_t)ps->h);
        put_u(b, (uint64_t)ps->w);
        if (L->ctxmasks) {
            put_u(b, (uint64_t)ps->mref);
            if (ps->mref) put_u(b, zigzag(ps->mdy)), put_u(b, zigzag(ps->mdx));
            continue;
        }
        for (size_t q = 0; q < n; q += 8) {
            uint8_t v = 0;
            for (size_t t = 0; t < 8 && q + t < n; t++) v |= (uint8_t)((ps->mask[q + t] != 0) << t);
            put_byte(b, v);
        }
    }
    if (L->ctxmasks && L->npose) pnmf_sprite_masks_write(b, L);
    put_bytes(b, pl->p, pl->len);
}

size_t pnmf_sprite_poses_bytes(const PnmfSpriteLayer *L)
{
    Buf b = { 0 }, none = { 0 };
    write_sprites(&b, L, &none);
    const size_t n = b.err ? 0 : b.len;
    pnmf_free(b.p);
    return n;
}

/* The placements as varints. A placement is written against a placement
 * of the frame before: the one after the last referred to when it is the
 * same (a frame that repeats the one before is a run of equal bytes), else
 * the one showing the same pose nearest to it, else the nearest one of any
 * pose (a sprite that changes pose in place), else on its own: a sprite
 * that keeps its pose and moves costs its small move. */
static void write_places(Buf *b, const PnmfSpriteLayer *L)
{
    for (int j = 0; j < L->m; j++) {
        const int f0 = L->first[j], f1 = L->first[j + 1];
        const int p0 = j ? L->first[j - 1] : 0, p1 = j ? f0 : 0;
        put_u(b, (uint64_t)(f1 - f0));
        int next = 0; /* the expected reference: the one after the last referred to */
        for (int q = f0; q < f1; q++) {
            const PnmfSpritePlace *pl = &L->place[q];
            /* the reference: the expected one if it is the same pose in the
             * same place, else the same pose nearest, else any pose nearest */
            int best = -1;
            long bd = 0;
            if (p0 + next < p1) {
                const PnmfSpritePlace *op = &L->place[p0 + next];
                if (op->pose == pl->pose && op->y == pl->y && op->x == pl->x) best = p0 + next;
            }
            for (int same = 1; same >= 0 && best < 0; same--)
                for (int o = p0; o < p1; o++) {
                    const PnmfSpritePlace *op = &L->place[o];
                    if (same && op->pose != pl->pose) continue;
                    const long d = labs((long)op->y - pl->y) + labs((long)op->x - pl->x);
                    if (best < 0 || d < bd) best = o, bd = d;
                }
            if (best < 0) {
                put_u(b, 0);
                put_u(b, (uint64_t)pl->pose);
                put_u(b, zigzag(pl->y));
                put_u(b, zigzag(pl->x));
                continue;
            }
            const PnmfSpritePlace *op = &L->place[best];
            const int moved = op->pose != pl->pose || op->y != pl->y || op->x != pl->x;
            put_u(b, 1 + (zigzag(best - p0 - next) << 1 | (uint64_t)moved));
            if (moved) {
                put_u(b, zigzag(pl->pose - op->pose));
                put_u(b, zigzag(pl->y - op->y));
                put_u(b, zigzag(pl->x - op->x));
            }
            next = best - p0 + 1;
        }
    }
}


static void put_rc(void *enc, RcProb *p, int bit)
{
    if (p) rc_encode(enc, p, bit);
    else rc_encode_direct(enc, bit);
}

/* The placements as the stream of window flags bit 16: its length, then
 * it. -1 when a value is past what the layout holds (the varints do),
 * PNMF_ERR_NOMEM, else 0. */
static int write_places_rc(Buf *b, const PnmfSpriteLayer *L)
{
    PnmfPlaceIO *io = pnmf_calloc(1, sizeof(*io));
    if (!io) return PNMF_ERR_NOMEM;
    Buf s = { 0 };
    RcEnc e;
    rc_enc_init(&e, &s);
    io->put = put_rc, io->enc = &e;
    int ret = pnmf_sprite_places_code(io, (PnmfSpriteLayer *)L, 0, 0);
    rc_enc_finish(&e);
    if (ret >= 0 && io->bad) ret = -1;
    if (s.err) b->err = 1;
    put_u(b, (uint64_t)s.len);
    put_bytes(b, s.p, s.len);
    pnmf_free(s.p);
    pnmf_free(io);
    return ret;
}

/* The bits an encoder has put out so far: its bytes, those it owes and
 * what its range has narrowed (the stream's length in bits, up to the
 * flush). */
static double rc_pos(const RcEnc *e)
{
    return 8.0 * (double)(e->out->len + e->pending) - log2((double)e->range);
}

/* The modes stream of the residual layer rs (with window flags bit 14
 * when rs->nbctx) into rcb, empty on entry: 0, PNMF_ERR_ARG or
 * PNMF_ERR_NOMEM (the caller frees it either way). With sb, each block's
 * bits into it (pnmf_residual_side_bits()). */
static int write_modes(const PnmfResidual *rs, Buf *rcb, PnmfSideBits *sb)
{
    const int m = rs->m;
    const size_t nb = (size_t)rs->bx * rs->by;
    RcEnc re;
    RcModeCtx mc;
    rc_mode_ctx_init(&mc);
    rc_enc_init(&re, rcb);
    PnmfPalCtx pc; /* window flags bit 13: each palette block after its mode */
    pnmf_pal_ctx_init(&pc);
    int32_t *palat = rs->npal ? pnmf_malloc_array(nb, sizeof(int32_t)) : NULL;
    if (rs->npal && !palat) return PNMF_ERR_NOMEM;
    size_t np = 0;
    for (int j = 0; j < m; j++) {
        if (palat) memset(palat, 0xff, nb * sizeof(int32_t));
        for (size_t q = 0; q < nb; q++) {
            const uint8_t *mo = rs->modes + (size_t)j * nb + q;
            if (*mo > 31 || (*mo == PNMF_RES_PALETTE && rs->npal && np >= rs->npal)) {
                pnmf_free(palat);
                return PNMF_ERR_ARG;
            }
            if (rs->nbctx) mc.nb = pnmf_residual_mode_nb(mo - q, rs->bx, nb, q, j);
            const double at = sb ? rc_pos(&re) : 0;
            rc_encode_mode(&re, &mc, *mo, q % rs->bx ? mo[-1] : -1, q >= (size_t)rs->bx ? mo[-rs->bx] : -1,
                           j ? mo[-(ptrdiff_t)nb] : -1);
            if (*mo == PNMF_RES_PALETTE && rs->npal) {
                int y0, y1, x0, x1;
                pnmf_residual_block(rs->bx, rs->rows, rs->cols, q, &y0, &y1, &x0, &x1);
                RcBin o = { .enc = &re };
                const PnmfPalBlock *left = q % rs->bx && palat[q - 1] >= 0 ? rs->pal + palat[q - 1] : NULL;
                const PnmfPalBlock *above =
                    q >= (size_t)rs->bx && palat[q - rs->bx] >= 0 ? rs->pal + palat[q - rs->bx] : NULL;
                if (pnmf_pal_code(&o, &pc, left, above, y1 - y0, x1 - x0, rs->pal + np) < 0) {
                    pnmf_free(palat);
                    return PNMF_ERR_ARG;
                }
                palat[q] = (int32_t)np++;
            }
            if (sb) sb->mode[(size_t)j * nb + q] = (float)(rc_pos(&re) - at);
        }
    }
    pnmf_free(palat);
    rc_enc_finish(&re);
    return rcb->err ? PNMF_ERR_NOMEM : 0;
}

/* The vectors stream of rs (with window flags bit 14 when rs->nbctx, 15
 * when rs->median) into rcv, as write_modes() the modes stream. */
static int write_vectors(const PnmfResidual *rs, Buf *rcv, PnmfSideBits *sb)
{
    const int m = rs->m;
    const size_t nb = (size_t)rs->bx * rs->by;
    RcEnc re;
    /* vectors: the reference, then the difference from the frame's
     * previous vector of the same reference */
    RcVecCtx vc;
    rc_vec_ctx_init(&vc);
    vc.on = rs->nbctx; /* window flags bit 14 */
    rc_enc_init(&re, rcv);
    /* format 7: a vector may copy a candidate (the block above's, ...):
     * each frame's vectors, block by block */
    int16_t (*cur)[3] = pnmf_malloc_array(2 * nb, sizeof(*cur) + 1), (*pcur)[3] = cur + nb;
    if (!cur) return PNMF_ERR_NOMEM;
    uint8_t *has = (uint8_t *)(cur + 2 * nb); /* window flags bit 17: the frame's blocks with a second hypothesis */
    RcBiCtx bc;
    rc_bi_ctx_init(&bc);
    int16_t (*const mem)[3] = cur;
    RcVecCtx gc; /* the frames' global vectors, each from the frame before's */
    rc_vec_ctx_init(&gc);
    RcProb wc[PNMF_RES_WARP_N]; /* window flags bit 23: the warps likewise */
    rc_probs_init(wc, PNMF_RES_WARP_N);
    for (int j = 0; j < m; j++) {
        PnmfVecState st;
        pnmf_vec_init(&st);
        st.med = rs->median; /* window flags bit 15 */
        size_t q = rs->mvstart[j];
        if (j || rs->continues) {
            const int dgy = rs->gmv[2 * j] - (j ? rs->gmv[2 * j - 2] : 0);
            const int dgx = rs->gmv[2 * j + 1] - (j ? rs->gmv[2 * j - 1] : 0);
            if (abs(rs->gmv[2 * j]) > PNMF_RES_MAX_MV || abs(rs->gmv[2 * j + 1]) > PNMF_RES_MAX_MV) {
                pnmf_free(mem);
                return PNMF_ERR_ARG;
            }
            const double at = sb ? rc_pos(&re) : 0;
            rc_encode_mvd(&re, &gc, 0, 1, 0, dgy);
            rc_encode_mvd(&re, &gc, 1, 1, dgy == 0, dgx);
            for (int i = 0; rs->warp && i < PNMF_RES_WARP_N; i++) { /* window flags bit 23 (the reader checks the bounds) */
                const int32_t *w = rs->gw + (size_t)PNMF_RES_WARP_N * j;
                RcBin o = { &re, 0, 0 };
                rc_bin_warp(&o, &wc[i], w[i] - (j ? w[i - PNMF_RES_WARP_N] : 0));
            }
            if (sb) sb->global[j] = (float)(rc_pos(&re) - at);
        }
        size_t bk;
        for (bk = 0; bk < nb; bk++) {
            cur[bk][2] = -1, has[bk] = 0;
            if ((rs->modes[(size_t)j * nb + bk] & 7) != PNMF_RES_SHIFTED) continue;
            if (q >= rs->mvstart[j + 1]) break; /* modes without their vectors (tests of the reader) */
            const int t = rs->mvref[q], vy = rs->mv[2 * q], vx = rs->mv[2 * q + 1];
            q++;
            if (st.med) {
                pnmf_vec_nb(&st, (const int16_t (*)[3])cur, NULL, rs->bx, bk);
                st.col = j ? pcur[bk] : NULL;
            }
            int pr[2] = { 0, 0 };
            if (t < PNMF_RES_REFS) pnmf_vec_pred(&st, t, pr);
            const int dy = t < PNMF_RES_REFS ? vy - pr[0] : 0, dx = t < PNMF_RES_REFS ? vx - pr[1] : 0;
            const int maxv = rs->subpel ? PNMF_RES_QPEL_MAX_MV : PNMF_RES_MAX_MV;
            if (t >= PNMF_RES_REFS || abs(dy) > 2 * maxv || abs(dx) > 2 * maxv) {
                pnmf_free(mem);
                return PNMF_ERR_ARG;
            }
            RcVecCand vk;
            pnmf_vec_cands(&st, bk >= (size_t)rs->bx ? cur[bk - rs->bx] : NULL, &vk);
            const int idx = rc_vec_cand_index(&vk, vy, vx, t);
            vc.lsh = bk % (size_t)rs->bx && (rs->modes[(size_t)j * nb + bk - 1] & 7) == PNMF_RES_SHIFTED;
            const double at = sb ? rc_pos(&re) : 0;
            rc_encode_merge(&re, &vc, &vk, st.lm, idx);
            if (idx < 0) rc_encode_vector(&re, &vc, t, st.lastref, st.z0, dy, dx);
            if (rs->bi) { /* window flags bit 17: the second hypothesis, or none */
                const int t2 = rs->mvbi && rs->mvbi[q - 1] ? rs->mvbi[q - 1] - 1 : -1;
                const int d2y = t2 < 0 ? 0 : rs->mv2[2 * q - 2] - pnmf_bi_scale(vy, t, t2);
                const int d2x = t2 < 0 ? 0 : rs->mv2[2 * q - 1] - pnmf_bi_scale(vx, t, t2);
                if (t2 >= PNMF_RES_REFS || abs(d2y) > 2 * maxv || abs(d2x) > 2 * maxv) {
                    pnmf_free(mem);
                    return PNMF_ERR_ARG;
                }
                rc_bi_step(&re, &bc, pnmf_bi_ctx(has, rs->bx, bk), t2, d2y, d2x, 0);
                has[bk] = t2 >= 0;
            }
            if (sb) {
                sb->vec[(size_t)j * nb + bk] = (float)(rc_pos(&re) - at);
                sb->merged[(size_t)j * nb + bk] = (int8_t)(idx >= 0);
            }
            pnmf_vec_push(&st, vy, vx, t, idx >= 0);
            cur[bk][0] = (int16_t)vy, cur[bk][1] = (int16_t)vx, cur[bk][2] = (int16_t)t;
        }
        for (; bk < nb; bk++) cur[bk][2] = -1;
        int16_t (*t)[3] = pcur; /* the frame's vectors become the frame before's */
        pcur = cur, cur = t;
    }
    pnmf_free(mem);
    rc_enc_finish(&re);
    return rcv->err ? PNMF_ERR_NOMEM : 0;
}

/* Both streams of rs into rcb and rcv, empty on entry (the caller frees
 * both either way). */
static int write_streams(const PnmfResidual *rs, Buf *rcb, Buf *rcv, PnmfSideBits *sb)
{
    const int ret = write_modes(rs, rcb, sb);
    return ret < 0 ? ret : write_vectors(rs, rcv, sb);
}

/* The bytes of a varint. */
static size_t varint_bytes(uint64_t v)
{
    size_t n = 1;
    while (v >>= 7) n++;
    return n;
}

/* The bytes the window flags, the two streams' lengths and the streams
 * take in the payload. */
static size_t streams_bytes(uint64_t flags, const Buf *modes, const Buf *vectors)
{
    return varint_bytes(flags) + varint_bytes(modes->len) + varint_bytes(vectors->len) + modes->len + vectors->len;
}

/* The streams pnmf_model_write() weighs: the modes stream without and
 * with window flags bit 14 (mo[bit]), the vectors stream of each of the
 * four choices of bits 14 and 15 (v[c], c = bit 14 + 2 * bit 15), each
 * made when first asked for. They depend on the layer's modes and vectors
 * alone, so the codings of a window, which differ in their levels, share
 * them. */
typedef struct PnmfStreamKeep {
    Buf mo[2], v[4];
    int mmade[2], vmade[4];
} PnmfStreamKeep;

PnmfStreamKeep *pnmf_stream_keep_new(void) { return pnmf_calloc(1, sizeof(PnmfStreamKeep)); }

static void keep_clear(PnmfStreamKeep *k)
{
    for (int i = 0; i < 2; i++) pnmf_free(k->mo[i].p);
    for (int i = 0; i < 4; i++) pnmf_free(k->v[i].p);
    memset(k, 0, sizeof(*k));
}

void pnmf_stream_keep_free(PnmfStreamKeep *k)
{
    if (!k) return;
    keep_clear(k);
    pnmf_free(k);
}

int pnmf_model_write(const PnmfWindowModel *md, uint8_t **out, size_t *size)
{
    Buf b = { 0 };
    const int k = md->k, m = md->m;
    for (int j = 0; j < m; j++)
        for (int e = md->first[j]; e < md->first[j + 1]; e++) {
            const PnmfEntry *en = &md->ent[e];
            if (en->i < 0 || en->i >= k || !md->comp[en->i].bh || en->c < 1 ||
                en->p < 0 || en->p >= md->rows * md->cols ||
                (e > md->first[j] && en->i < md->ent[e - 1].i))
                return PNMF_ERR_ARG;
        }
    if (pnmf_model_work(md) > pnmf_model_max_work(md->rows, md->cols, m)) return PNMF_ERR_LIMIT;
    if (md->carries && (!md->res.step16 || !md->res.continues)) return PNMF_ERR_ARG;
    if (md->spr.present && (!md->res.step16 || md->first[m] > 0 || md->spr.m != m)) return PNMF_ERR_ARG;
    /* format 9: 8x8 transform blocks need the levels stream, which carries
     * their decision (window flags bit 8): a coding that would put any of
     * them among the varints is the levels stream's */
    PnmfResidual rsv = md->res;
    const int jv = rsv.rc_levels == 2 ? 1 : rsv.rc_levels ? 0 : rsv.m;
    if (rsv.step16 && (pnmf_tx8_used(&rsv, 0, jv) || pnmf_intra_used(&rsv, 0, jv))) rsv.rc_levels = 1;
    const int tx8 = rsv.step16 && rsv.rc_levels && pnmf_tx8_used(&rsv, rsv.rc_levels == 2, rsv.m);
    const int idir = rsv.step16 && rsv.rc_levels && pnmf_intra_used(&rsv, rsv.rc_levels == 2, rsv.m);
    if (rsv.step16 && (rsv.m != m || rsv.rows != md->vis_rows || rsv.cols != md->vis_cols)) return PNMF_ERR_ARG;
    /* window flags bit 17 only where a vector has a second hypothesis */
    rsv.bi = 0;
    for (size_t q = 0; rsv.step16 && rsv.mvbi && q < rsv.nmv && !rsv.bi; q++) rsv.bi = rsv.mvbi[q] != 0;
    /* window flags bit 23 only where a frame has a warp (its zeros move nothing) */
    rsv.warp = 0;
    for (size_t i = 0; rsv.step16 && rsv.subpel && md->res.warp && i < (size_t)m * PNMF_RES_WARP_N && !rsv.warp; i++)
        rsv.warp = rsv.gw[i] != 0;
    /* window flags bit 18 only where a frame with references has weights */
    int weighted = 0;
    for (int j = md->res.continues ? 0 : 1; md->res.step16 && j < m && !weighted; j++)
        weighted = pnmf_residual_weighted(&md->res, j);
    const uint64_t flags =
        md->res.step16 ? PNMF_FLAG_RESIDUAL | (md->res.continues ? PNMF_FLAG_CONTINUES : 0) |
                             (md->carries ? PNMF_FLAG_CARRIES : 0) | (rsv.rc_levels ? PNMF_FLAG_RCLEVELS : 0) |
                             (rsv.rc_levels == 2 ? PNMF_FLAG_KEYVARINTS : 0) |
                             (md->spr.present ? PNMF_FLAG_SPRITES : 0) |
                             (md->spr.present && md->spr.ctxmasks ? PNMF_FLAG_SPRMASKS : 0) |
                             (md->res.subpel ? PNMF_FLAG_SUBPEL : 0) | (md->res.deblock ? PNMF_FLAG_DEBLOCK : 0) |
                             (tx8 ? PNMF_FLAG_TX8 : 0) | (idir ? PNMF_FLAG_INTRA : 0) |
                             (rsv.rc_levels && md->res.ctx_levels ? PNMF_FLAG_CTXLEVELS : 0) |
                             (rsv.rc_levels && md->res.ctx_levels && !md->res.enc_dec ? PNMF_FLAG_CTXLOSSY : 0) |
                             (md->res.npal ? PNMF_FLAG_PALETTE : 0) | (md->res.casc_period ? PNMF_FLAG_CASCADE : 0) |
                             (md->res.order ? PNMF_FLAG_ORDER : 0) | (rsv.bi ? PNMF_FLAG_BI : 0) |
                             (weighted ? PNMF_FLAG_WEIGHTS : 0) |
                             (md->res.subpel && md->res.sharp ? PNMF_FLAG_SHARP : 0) |
                             (md->res.lterm ? PNMF_FLAG_LTERM : 0) | (rsv.warp ? PNMF_FLAG_WARP : 0) | (md->res.pf.on ? PNMF_FLAG_PFILTER : 0)
                       : 0;
    /* the modes and vectors streams, with window flags bit 14 only where
     * that makes the payload shorter, the flags' varint and the streams'
     * lengths counted (a window of few blocks or few changes may not fill
     * the contexts it adds) */
    int ret = 0;
    /* and with window flags bit 15 where that makes it shorter: the
     * codings without the bits first, each later one kept when it is
     * strictly shorter than the shortest before it */
    int nbc = 0, med = 0;
    const int nbmax = rsv.nbctx, medmax = rsv.median;
    /* the streams made here, or kept for the window's other codings */
    PnmfStreamKeep own = { 0 }, *sk = md->res.enc_streams ? md->res.enc_streams : &own;
    for (int c = 0; rsv.step16 && ret >= 0 && c < 4; c++) {
        if ((c & 1) > nbmax || (c >> 1) > medmax) continue;
        rsv.nbctx = c & 1, rsv.median = c >> 1;
        if (!sk->mmade[c & 1]) {
            ret = write_modes(&rsv, &sk->mo[c & 1], NULL);
            sk->mmade[c & 1] = ret >= 0;
        }
        if (ret >= 0 && !sk->vmade[c]) {
            ret = write_vectors(&rsv, &sk->v[c], NULL);
            sk->vmade[c] = ret >= 0;
        }
        const uint64_t f0 = flags | (rsv.nbctx ? PNMF_FLAG_NBCTX : 0) | (rsv.median ? PNMF_FLAG_MEDIAN : 0);
        const uint64_t f1 = flags | (nbc ? PNMF_FLAG_NBCTX : 0) | (med ? PNMF_FLAG_MEDIAN : 0);
        if (ret >= 0 && (!c || streams_bytes(f0, &sk->mo[c & 1], &sk->v[c]) <
                                   streams_bytes(f1, &sk->mo[nbc], &sk->v[nbc | med << 1])))
            nbc = rsv.nbctx, med = rsv.median;
    }
    rsv.nbctx = nbc, rsv.median = med;
    if (ret < 0) {
        keep_clear(&own);
        return ret;
    }
    const Buf *rcb = &sk->mo[nbc], *rcv = &sk->v[nbc | med << 1];
    /* the placements as varints or as the stream of window flags bit 16,
     * whichever is shorter with the flags' varint (the bit lengthens it),
     * unless the layer asks for one */
    uint64_t fl = flags | (rsv.nbctx ? PNMF_FLAG_NBCTX : 0) | (rsv.median ? PNMF_FLAG_MEDIAN : 0);
    Buf plv = { 0 }, plr = { 0 };
    if (md->spr.present) {
        const PnmfSpriteLayer *L = &md->spr;
        if (L->ctxplaces <= 0) write_places(&plv, L);
        int rcok = 0;
        if (L->ctxplaces >= 0) {
            ret = write_places_rc(&plr, L);
            rcok = ret == 0;
            if (ret == -1) ret = 0;
        }
        if (rcok && L->ctxplaces < 0) rcok = 0;
        if (rcok && !L->ctxplaces &&
            varint_bytes(fl | PNMF_FLAG_SPRPLACES) + plr.len >= varint_bytes(fl) + plv.len)
            rcok = 0;
        if (!rcok && L->ctxplaces > 0) write_places(&plv, L); /* the stream cannot hold it */
        if (rcok) {
            Buf t = plv;
            plv = plr, plr = t;
            fl |= PNMF_FLAG_SPRPLACES;
        }
        pnmf_free(plr.p);
        if (plv.err) b.err = 1;
        if (ret < 0) {
            keep_clear(&own), pnmf_free(plv.p);
            return ret;
        }
    }
    put_u(&b, fl); /* flags */
    put_u(&b, (uint64_t)k);
    for (int i = 0; i < k && !md->carries; i++) {
        put_u(&b, (uint64_t)md->comp[i].bh);
        put_u(&b, (uint64_t)md->comp[i].bw);
    }
    for (int i = 0; i < k && !md->carries; i++) {
        const PnmfComp *c = &md->comp[i];
        for (int y = 0; y < c->bh; y++)
            for (int x = 0; x < c->bw; x++)
                put_u(&b, zigzag((int64_t)c->lev[y * c->bw + x] - pnmf_model_level_pred(c->lev, c->bw, y, x)));
    }
    for (int i = 0; i < k; i++)
        for (int j = 0; j < m; j++) {
            int e0, e1;
            pnmf_model_occurrences(md, j, i, &e0, &e1);
            if (e1 - e0 > PNMF_MAX_OCCURRENCES) {
                pnmf_free(b.p), keep_clear(&own);
                return PNMF_ERR_ARG;
            }
            put_u(&b, (uint64_t)(e1 - e0));
        }
    for (int i = 0; i < k; i++)
        for (int j = 0; j < m; j++) {
            int e0, e1;
            pnmf_model_occurrences(md, j, i, &e0, &e1);
            for (int e = e0; e < e1; e++) put_u(&b, md->ent[e].c - 1);
        }
    for (int axis = 0; axis < 2; axis++)
        for (int i = 0; i < k; i++) {
            PnmfShiftSlots sl;
            memset(&sl, 0, sizeof(sl));
            for (int j = 0; j < m; j++) {
                int e0, e1, prev = 0;
                pnmf_model_occurrences(md, j, i, &e0, &e1);
                for (int e = e0; e < e1; e++) {
                    const int t = e - e0;
                    const int v = axis == 0 ? md->ent[e].p / md->cols : md->ent[e].p % md->cols;
                    put_u(&b, zigzag(wrap(v - pnmf_shift_predict(&sl, t, prev), axis == 0 ? md->rows : md->cols)));
                    prev = v;
                }
                for (int e = e0; e < e1; e++) {
                    const int t = e - e0;
                    sl.v[t] = axis == 0 ? md->ent[e].p / md->cols : md->ent[e].p % md->cols;
                    sl.set[t] = 1;
                }
            }
        }
    if (md->spr.present) write_sprites(&b, &md->spr, &plv);
    pnmf_free(plv.p);
    if (md->res.step16) {
        const PnmfResidual *rs = &rsv;
        put_u(&b, (uint64_t)rs->step16);
        put_u(&b, (uint64_t)rs->key_step16);
        put_u(&b, (uint64_t)rs->qp);
        put_u(&b, (uint64_t)rs->key_qp);
        put_u(&b, PNMF_RES_BLOCK);
        if (rs->casc_period) { /* window flags bit 12 */
            put_u(&b, (uint64_t)rs->casc_period);
            put_u(&b, (uint64_t)rs->casc_step16);
            put_u(&b, (uint64_t)rs->casc_qp);
        }
        for (int j = rs->continues ? 0 : 1; weighted && j < m; j++) { /* window flags bit 18 */
            put_u(&b, zigzag(rs->wp[2 * j] - PNMF_RES_WP_ONE));
            put_u(&b, zigzag(rs->wp[2 * j + 1]));
        }
        if (rs->pf.on) { /* window flags bit 22 */
            put_u(&b, (uint64_t)rs->pf.mask);
            for (int cl = 0; cl < PNMF_PF_CLASSES; cl++)
                for (int i = 0; (rs->pf.mask >> cl & 1) && i < PNMF_PF_TAPS; i++) put_u(&b, zigzag(rs->pf.c[cl][i]));
        }
        /* modes and vectors: two range-coded streams (rangecoder_enc.h);
         * their lengths, the levels, then the streams at the end of the
         * payload (random-looking bytes among the levels' varints would
         * cost zstd more than their length) */
        put_u(&b, rcb->len);
        put_u(&b, rcv->len);
        Buf rcl = { 0 };
        /* format 6: the levels as a third stream (rc_levels 1), or frame
         * 0's as varints and the others' as the stream (2); the varints,
         * then the levels stream, come before the other two */
        const int first_rc = rs->rc_levels == 2 ? 1 : 0;
        Buf rcx = { 0 };
        RcEnc re;
        if (rs->rc_levels) {
            RcLevCtx lc;
            rc_enc_init(&re, &rcl);
            RcBin o = { .enc = &re };
            pnmf_residual_levels_stream(&o, &lc, rs, first_rc, INT16_MAX);
            rc_enc_finish(&re);
            put_u(&b, rcl.len);
        }
        if (rs->rc_levels && rs->ctx_levels) { /* format 9: the pixel levels by their samples' contexts */
            rc_enc_init(&re, &rcx);
            RcBin o = { .enc = &re };
            ret = pnmf_lx_stream(&o, rs, first_rc);
            rc_enc_finish(&re);
            if (ret < 0) {
                keep_clear(&own), pnmf_free(rcl.p), pnmf_free(rcx.p), pnmf_free(b.p);
                return ret;
            }
            put_u(&b, rcx.len);
        }
        const size_t nvar = pnmf_residual_varint_levels(rs);
        for (size_t q = 0; q < nvar; q++) put_u(&b, zigzag(rs->lev[q]));
        put_bytes(&b, rcx.p, rcx.len);
        put_bytes(&b, rcl.p, rcl.len);
        put_bytes(&b, rcb->p, rcb->len);
        put_bytes(&b, rcv->p, rcv->len);
        if (rcb->err || rcv->err || rcl.err || rcx.err) b.err = 1;
        keep_clear(&own), pnmf_free(rcl.p), pnmf_free(rcx.p);
    }
    if (b.err) {
        pnmf_free(b.p);
        return PNMF_ERR_NOMEM;
    }
    *out = b.p;
    *size = b.len;
    return 0;
}

int pnmf_residual_side_bits(const PnmfResidual *rs, PnmfSideBits *sb)
{
    const size_t n = (size_t)rs->m * rs->bx * rs->by;
    memset(sb, 0, sizeof(*sb));
    sb->mode = pnmf_calloc(n ? n : 1, sizeof(float));
    sb->vec = pnmf_calloc(n ? n : 1, sizeof(float));
    sb->merged = pnmf_calloc(n ? n : 1, 1);
    sb->global = pnmf_calloc(rs->m ? (size_t)rs->m : 1, sizeof(float));
    Buf b = { 0 }, v = { 0 };
    int ret = sb->mode && sb->vec && sb->merged && sb->global ? write_streams(rs, &b, &v, sb) : PNMF_ERR_NOMEM;
    sb->mode_bytes = b.len, sb->vec_bytes = v.len;
    pnmf_free(b.p), pnmf_free(v.p);
    if (ret < 0) pnmf_side_bits_free(sb);
    return ret;
}

void pnmf_side_bits_free(PnmfSideBits *sb)
{
    pnmf_free(sb->mode), pnmf_free(sb->vec), pnmf_free(sb->merged), pnmf_free(sb->global);
    memset(sb, 0, sizeof(*sb));
}
