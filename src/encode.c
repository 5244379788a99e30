/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The encoder: buffer a window of frames, fit PermNMF, quantize, refit H
 * against the quantized components (closed loop: what the encoder measures
 * is what the decoder shows), serialize, and hand the payload to the
 * container. Holds one window at a time.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "codec.h"
#include "container.h"
#include "diamond.h"
#include "entropy.h"
#include "internal.h"
#include "log.h"
#include "model.h"
#include "permnmf.h"
#include "quant.h"
#include "repeats.h"
#include "residual.h"
#include "tuning.h"
#include "twolevel.h"
#include "varint.h"

/* What coding the residual layer of a window works in: the model frames
 * j, j-1, the decoded frame j, the decoded frames j-1, j-2, ... and the
 * diamond product's accumulator. */
typedef struct ResBufs {
    uint8_t *P, *Pp, *D;
    uint8_t *ref[PNMF_RES_REFS];
    int64_t *acc;
} ResBufs;

struct PnmfEncoder {
    PnmfEncSettings s;
    int width, height, rows, cols, vis_rows, vis_cols;
    size_t n, nv;        /* torus samples, frame pixels */
    PnmfContainerWriter *cw;
    uint8_t *frames;     /* window x n, layout order */
    int nbuf, frame_count;
    float *A, *W, *Wq, *Wtry;
    PnmfAtom *H, *Hsave;
    PnmfFitter *ft;
    uint8_t *rec, *seen;
    ResBufs rb[2];            /* the residual layer's, one per coding run at once */
    uint8_t *lastP, *lastRef[PNMF_RES_REFS]; /* the same after the previous window */
    uint8_t *weights;         /* the window's block weights (code_residual), made once a window */
    int last_avail;           /* of lastRef, how many hold frames since the key window */
    int last_key;             /* first frame of the last key window */
    uint8_t *last_gray;       /* the frame pushed last, width x height (scene cuts) */
    int last_cut;             /* the frame the last scene cut was found before (a window starting there is a key window) */
    int scene_cuts;
    PnmfWindowModel last;     /* the last model (pnmf_model_track), as the decoder keeps it */
    int carried;              /* windows that carried its components over */
    int rc_level_windows;     /* windows whose residual levels were range-coded */
    int last_rc;              /* the last window's were */
    int repeated;             /* entries added by try_repeats() */
    PnmfWindowModel alt;      /* try_repeats()'s model, for encode_window() to weigh */
    int alt_extra;            /* its repeated entries */
    int continues;            /* the window being coded continues the previous one */
    int probing;              /* fitting the probe's model (probe_model) */
    int probe_skips;          /* windows left to code without a model, unprobed */
    int fits_stopped;         /* full fits stopped by their check (check_fit) */
    int w_step, r_step;
    int model_q;              /* the -q the model is fitted, quantized and weighed at (model_quality) */
    double sse, objective;
    double t_probe, t_fit, t_residual, t_write, t_total; /* seconds by stage */
    int windows, failed, finished;
    char err[256];
};

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int fail(PnmfEncoder *e, int ret, const char *what)
{
    if (!e->err[0]) snprintf(e->err, sizeof(e->err), "%s", what);
    e->failed = ret;
    return ret;
}

/* Whether choose_step() picks each window's coding among the same codings
 * for every -q (those of -q PNMF_PICK_FLOOR and coarser from the floor up,
 * of the floor and finer below it): with the residual layer, without
 * --target-psnr. There the model is the same for every -q too: fitted,
 * quantized and weighed as at -q PNMF_MODEL_Q, and kept or not per coding
 * within the pick, so a window with a model keeps -q's order as one
 * without does. */

static int picks(const PnmfEncSettings *s) { return s->residual && s->target_psnr <= 0; }

static int model_quality(const PnmfEncSettings *s) { return picks(s) ? PNMF_MODEL_Q : s->quality; }

int pnmf_encoder_create(PnmfEncoder **out, const PnmfEncSettings *s, int width, int height,
                        int fps_num, int fps_den, FILE *f)
{
    PnmfEncoder *e = pnmf_calloc(1, sizeof(*e));
    if (!e) return PNMF_ERR_NOMEM;
    e->s = *s;
    if (e->s.threads == 0) {
        long nc = sysconf(_SC_NPROCESSORS_ONLN);
        e->s.threads = nc < 1 ? 1 : nc > 64 ? 64 : (int)nc;
    }
    e->width = width, e->height = height;
    e->nv = (size_t)width * height;
    e->rows = s->shift_model == PNMF_SHIFT_VECTOR ? 1 : height;
    e->cols = s->shift_model == PNMF_SHIFT_VECTOR ? width * height : width;
    e->vis_rows = e->rows, e->vis_cols = e->cols;
    if (s->shift_model == PNMF_SHIFT_CANVAS) {
        e->rows = pnmf_canvas_size(height, s->canvas_pad);
        e->cols = pnmf_canvas_size(width, s->canvas_pad);
        if ((uint64_t)e->rows * e->cols > PNMF_MAX_CANVAS) {
            snprintf(e->err, sizeof(e->err), "a %dx%d canvas is over the limit", e->cols, e->rows);
            e->failed = PNMF_ERR_LIMIT;
            *out = e;
            return PNMF_ERR_LIMIT;
        }
    }
    e->n = (size_t)e->rows * e->cols;
    e->model_q = model_quality(s);
    pnmf_quant_steps(e->model_q, &e->w_step, &e->r_step);
    const size_t w = (size_t)s->window, k = (size_t)(s->components ? s->components : 1);
    e->frames = pnmf_malloc_array(w * e->nv, 1);
    e->A = pnmf_malloc_array(w * e->n, sizeof(float));
    e->W = pnmf_malloc_array(k * e->n, sizeof(float));
    e->Wq = pnmf_malloc_array(k * e->n, sizeof(float));
    e->H = pnmf_malloc_array(w * k, sizeof(PnmfAtom));
    e->Wtry = pnmf_malloc_array(k * e->n, sizeof(float));
    e->Hsave = pnmf_malloc_array(w * k, sizeof(PnmfAtom));
    e->rec = pnmf_malloc_array(e->nv, 1);
    e->seen = pnmf_malloc_array(e->n, 1);
    e->lastP = pnmf_malloc_array(e->nv, 1);
    e->last_gray = pnmf_malloc_array(e->nv, 1);
    int refs_ok = 1;
    /* the second set only where two codings can run at once */
    for (int i = 0; i < (s->residual && e->s.threads > 1 ? 2 : 1); i++) {
        ResBufs *b = &e->rb[i];
        b->acc = pnmf_malloc_array(e->nv, sizeof(int64_t));
        b->P = pnmf_malloc_array(e->nv, 1);
        b->Pp = pnmf_malloc_array(e->nv, 1);
        b->D = pnmf_malloc_array(e->nv, 1);
        refs_ok &= b->acc && b->P && b->Pp && b->D;
        for (int t = 0; t < PNMF_RES_REFS; t++) refs_ok &= !!(b->ref[t] = pnmf_malloc_array(e->nv, 1));
    }
    for (int t = 0; t < PNMF_RES_REFS; t++) refs_ok &= !!(e->lastRef[t] = pnmf_malloc_array(e->nv, 1));
    int ret = PNMF_ERR_NOMEM;
    if (!e->frames || !e->A || !e->W || !e->Wq || !e->Wtry || !e->H || !e->Hsave || !e->rec ||
        !e->seen || !e->lastP || !e->last_gray || !refs_ok)
        goto error;
    if (s->components) { /* -k 0: no model, the residual layer alone */
        ret = pnmf_fitter_open(&e->ft, e->rows, e->cols, s->window, s->components, e->s.threads);
        if (ret < 0) goto error;
        ret = pnmf_fitter_set_options(e->ft, e->vis_rows, e->vis_cols, s->signed_components);
        if (ret < 0) goto error;
    }
    PnmfHeader h = { 0 };
    h.writer_version = PNMF_FORMAT_VERSION;
    h.min_reader_version = PNMF_FORMAT_VERSION;
    h.width = (uint32_t)width, h.height = (uint32_t)height;
    h.fps_num = (uint32_t)fps_num, h.fps_den = (uint32_t)fps_den;
    h.window = (uint16_t)s->window;
    h.components = (uint16_t)k;
    h.shift_model = (uint8_t)s->shift_model;
    h.quality = (uint8_t)s->quality;
    h.w_step = (uint16_t)e->w_step, h.r_step = (uint16_t)e->r_step;
    if (s->shift_model == PNMF_SHIFT_CANVAS)
        h.canvas_height = (uint32_t)e->rows, h.canvas_width = (uint32_t)e->cols;
    ret = pnmf_container_writer_open(&e->cw, f, &h, s->zstd_level, e->err, sizeof(e->err));
    if (ret < 0) goto error;
    *out = e;
    return 0;
error:
    /* kept, so the caller can read the reason; pnmf_enc_close() frees it */
    if (!e->err[0]) snprintf(e->err, sizeof(e->err), "%s", ret == PNMF_ERR_NOMEM ? "out of memory" : "cannot start the encoder");
    e->failed = ret;
    *out = e;
    return ret;
}

/* Quantize the components W into md and e->Wq; with H, move its atoms to
 * match the blocks' new origins and scales. */
static int quantize_components(PnmfEncoder *e, PnmfWindowModel *md, const float *W, PnmfAtom *H, int m)
{
    const int k = e->s.components;
    for (int i = 0; i < k; i++) {
        float scale;
        int q0;
        pnmf_freep(&md->comp[i].lev);
        PNMF_CHECK(pnmf_quant_component(e->rows, e->cols, W + i * e->n, e->w_step, &md->comp[i],
                                        &scale, &q0));
        pnmf_dequant_component(e->rows, e->cols, &md->comp[i], e->w_step, e->Wq + i * e->n);
        if (!H) continue;
        for (int j = 0; j < m; j++) {
            PnmfAtom *a = &H[j * k + i];
            a->r *= scale;
            a->p = pnmf_shift_compose(e->rows, e->cols, a->p, q0);
            if (!md->comp[i].bh) a->r = 0;
        }
    }
    return 0;
}

/* Canvas model: pixels of a component that no entry ever shows cost bytes
 * and change nothing; zero them (ALGORITHMS.md 2d, den[x] = 0). */
static void hide_invisible(PnmfEncoder *e, float *W, const PnmfAtom *H, int m)
{
    if (e->vis_rows == e->rows && e->vis_cols == e->cols) return;
    const int k = e->s.components, rows = e->rows, cols = e->cols;
    uint8_t *seen = e->seen;
    for (int i = 0; i < k; i++) {
        memset(seen, 0, e->n);
        for (int j = 0; j < m; j++) {
            const PnmfAtom a = H[j * k + i];
            if (a.r == 0) continue;
            const int py = a.p / cols, px = a.p % cols;
            /* sample (y, x) of the component lands on ((y+py) mod rows, (x+px) mod cols) */
            for (int vy = 0; vy < e->vis_rows; vy++) {
                const int y = (vy - py + rows) % rows;
                for (int vx = 0; vx < e->vis_cols; vx++) seen[(size_t)y * cols + (vx - px + cols) % cols] = 1;
            }
        }
        float *w = W + (size_t)i * e->n;
        for (size_t q = 0; q < e->n; q++)
            if (!seen[q]) w[q] = 0;
    }
}

/* The residual layer's rate-distortion weight: squared error per bit, for
 * the step s (gray levels) of -q. dD/dR of a uniform quantizer at high
 * rate is 2 ln 2 s^2 / 12. At the finest step (-q 0, and the lossless
 * first frame tried at every -q) an error of one gray level outweighs a
 * thousand bits: the coding is lossless. */
static double residual_lambda(int step16)
{
    if (step16 <= PNMF_RES_MIN_STEP) return PNMF_LOSSLESS_LAMBDA;
    const double s = step16 / 16.0;
    return 2 * 0.6931 * s * s / 12;
}

/* The same for the encoder's -q: what a bit of the model is worth. */
static double quality_lambda(const PnmfEncoder *e) { return residual_lambda(pnmf_residual_step(e->model_q)); }

/* Frame by frame, the entries of H (e->H, one atom per component) with
 * their coefficients quantized (above) into md, against the dequantized
 * components Wq; used[i] set for each component with an entry. A
 * coefficient whose quantized value differs from the same component's in
 * the frame before keeps that value when the squared error this adds
 * costs less than PNMF_COEF_STICK_BITS bits: a repeated value costs zstd
 * next to nothing, and a sprite whose scale does not flicker is what the
 * residual layer's motion prediction (D_{j-1} + P_j - P_{j-1}) carries on
 * cleanly. */
static int add_entries(PnmfEncoder *e, PnmfWindowModel *md, int m, const float *Wq, uint8_t *used)
{
    const int k = md->k;
    uint32_t *prevc = pnmf_calloc(k, sizeof(uint32_t));
    double *energy = pnmf_calloc(k, sizeof(double));
    int ret = prevc && energy ? 0 : PNMF_ERR_NOMEM;
    const double lambda = quality_lambda(e);
    for (int i = 0; ret >= 0 && i < k; i++) {
        const float *w = Wq + (size_t)i * e->n;
        for (size_t q = 0; q < e->n; q++) energy[i] += (double)w[q] * w[q];
    }
    for (int j = 0; ret >= 0 && j < m; j++)
        for (int i = 0; ret >= 0 && i < k; i++) {
            const PnmfAtom a = e->H[j * k + i];
            uint32_t c = pnmf_quant_coef(a.r, e->r_step);
            if (c && prevc[i] && c != prevc[i]) {
                const double d0 = pnmf_dequant_coef(c, e->r_step) - a.r;
                const double d1 = pnmf_dequant_coef(prevc[i], e->r_step) - a.r;
                if ((d1 * d1 - d0 * d0) * energy[i] < lambda * PNMF_COEF_STICK_BITS) c = prevc[i];
            }
            prevc[i] = c;
            if (!c || !md->comp[i].bh) continue;
            if (used) used[i] = 1;
            ret = pnmf_model_add(md, j, i, c, a.p);
        }
    pnmf_free(prevc);
    pnmf_free(energy);
    return ret;
}

/*
 * Closed loop: quantize the fitted components and refit H against what the
 * decoder will have. Then refine with the quantizer in the loop: an exact
 * W step from the quantized components with the refitted H, quantize
 * again, refit H; a pass is kept only if it lowers the objective of the
 * quantized model. Quantization noise of dense components is what costs
 * most after the fit, and these passes remove much of it (samples/
 * sprites.mkv at -q 19: 40.8 dB for 7.3 kB without, 43.3 dB for 4.7 kB
 * with four passes).
 */
static int quantize_window(PnmfEncoder *e, PnmfWindowModel *md, int m)
{
    const int k = e->s.components;
    const size_t kn = (size_t)k * e->n;
    const int mode = e->s.algo == PNMF_ALGO_IMPROVED ? PNMF_H_GREEDY : PNMF_H_CYCLIC;
    hide_invisible(e, e->W, e->H, m);
    PNMF_CHECK(quantize_components(e, md, e->W, e->H, m));
    double best = 0;
    if (!e->probing) {
        /* the invisible part must show the model being refitted (EM), or the
         * H step would chase what the previous model put there */
        PNMF_CHECK(pnmf_fitter_impute(e->ft, e->Wq, k, e->H));
        PNMF_CHECK(pnmf_fitter_h_step(e->ft, e->Wq, k, e->H, mode, e->s.inner_iters));
        best = pnmf_fitter_objective(e->ft, e->Wq, k, e->H);
    }
    pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "quantized: objective %.6g", best);
    float *src = e->W, *try = e->Wtry;
    for (int pass = 0; pass < e->s.refine; pass++) {
        memcpy(try, e->Wq, kn * sizeof(float));
        PNMF_CHECK(pnmf_fitter_impute(e->ft, e->Wq, k, e->H));
        int ret = pnmf_fitter_w_step(e->ft, try, k, e->H, PNMF_W_HALS, 1);
        if (ret < 0) return ret;
        memcpy(e->Hsave, e->H, (size_t)m * k * sizeof(PnmfAtom));
        hide_invisible(e, try, e->H, m);
        PNMF_CHECK(quantize_components(e, md, try, e->H, m));
        PNMF_CHECK(pnmf_fitter_impute(e->ft, e->Wq, k, e->H));
        PNMF_CHECK(pnmf_fitter_h_step(e->ft, e->Wq, k, e->H, mode, e->s.inner_iters));
        const double f = pnmf_fitter_objective(e->ft, e->Wq, k, e->H);
        if (f < best) {
            best = f;
            float *t = src;
            src = try, try = t;
            continue;
        }
        /* worse: back to the previous pass's model */
        memcpy(e->H, e->Hsave, (size_t)m * k * sizeof(PnmfAtom));
        PNMF_CHECK(quantize_components(e, md, src, NULL, m));
        break;
    }
    uint8_t *used = pnmf_calloc(k, 1);
    if (!used) return PNMF_ERR_NOMEM;
    int ret = add_entries(e, md, m, e->Wq, used);
    if (ret < 0) {
        pnmf_free(used);
        return ret;
    }
    for (int i = 0; i < k; i++)
        if (!used[i]) { /* nothing refers to it: send an empty block */
            pnmf_freep(&md->comp[i].lev);
            md->comp[i].bh = md->comp[i].bw = 0;
        }
    pnmf_free(used);
    return 0;
}

/* Before a window's residual layer: the references the previous window
 * left (none for a key window); returns how many are available. */
static int restore_refs(const PnmfEncoder *e, ResBufs *b)
{
    memcpy(b->P, e->lastP, e->nv); /* swapped into Pp at frame 0 */
    for (int t = 0; t < PNMF_RES_REFS; t++) memcpy(b->ref[t], e->lastRef[t], e->nv);
    return e->continues ? e->last_avail : 0;
}

/* The cost (squared error + lambda * 8 * zstd bytes) of coding a key
 * window's first frame alone with the step key16. */
static int key_frame_cost(const PnmfEncoder *e, ResBufs *rb, const PnmfWindowModel *md, int key16, double lambda,
                          double *cost)
{
    /* coded with its own step's lambda, weighed with the caller's */
    PnmfResidual r;
    PNMF_CHECK(pnmf_residual_alloc(&r, 1, e->vis_rows, e->vis_cols, key16, key16));
    pnmf_diamond_int(md, 0, e->w_step, e->r_step, rb->acc, rb->P);
    int ret = pnmf_residual_encode_frame(&r, 0, e->frames, rb->P, rb->P, NULL, 0, rb->D, residual_lambda(key16));
    Buf b = { 0 };
    if (ret >= 0) {
        for (size_t q = 0; q < (size_t)r.bx * r.by; q++) put_u(&b, r.modes[q]);
        for (size_t q = 0; q < r.nlev; q++) put_u(&b, zigzag(r.lev[q]));
        if (b.err) ret = PNMF_ERR_NOMEM;
    }
    uint8_t *z = NULL;
    size_t zn = 0;
    if (ret >= 0) ret = pnmf_entropy_compress(b.p, b.len, PNMF_ESTIMATE_ZSTD_LEVEL, &z, &zn);
    double sse = 0;
    for (size_t q = 0; ret >= 0 && q < e->nv; q++) {
        const int d = (int)e->frames[q] - rb->D[q];
        sse += d * d;
    }
    *cost = sse + lambda * 8 * (double)zn;
    pnmf_free(z);
    pnmf_free(b.p);
    pnmf_residual_free(&r);
    return ret;
}

/* The window's block weights (e->weights; residual.h, enc_weight), from
 * its source frames: the same for every coding of the window. */
static int window_weights(PnmfEncoder *e, int m)
{
    /* a block the next frames repeat (the source's block unchanged) will
     * most likely be copied into them: its error counts once per frame.
     * Its lambda is divided by the frames it lasts (residual.h,
     * enc_weight). 150 frames, -q 16..48 against the same lambda for
     * every block: samples/sprites.mkv (default settings) -9.3 %; -k 0:
     * natural_vtest -1.9 %, x11_penguins -1.6 %, x11_fishtank -0.3 %,
     * cuts_mix 0.0 %, pingus_pan +0.4 %, x11_oneko +0.6 %. Divided by the
     * square root or by the power 1.5 of the frames instead: sprites.mkv
     * -9.0 % and -8.7 %, -k 0 mean -0.3 % and -0.6 % (against -0.6 %);
     * blocks counted as repeated within a gray level on average: -k 0
     * mean -0.1 %. And a block whose samples move into the next frame unchanged (a
     * sprite, a pan) weighs as the blocks of later frames that copy it
     * (residual.h, match weights). 150 frames, -k 0, -q 16..64 against
     * the unchanged blocks in place alone: pingus_pan -3.8 %, x11_fishtank
     * -0.7 %, x11_penguins -0.7 %, x11_oneko -0.4 %, natural_vtest 0.0 %;
     * samples/sprites.mkv (default settings, -q 16..56) +0.4 %; 20 %
     * more time. Weighed instead by the copies of a first coding (its
     * blocks not coded, whatever their error): -1.9 % (mean), but a second
     * coding of each window (60 % more time) and weights that follow -q,
     * which broke x11_oneko's plateaus of -q (rate.sh) */
    const size_t nb = (size_t)pnmf_residual_blocks(e->vis_cols) * (size_t)pnmf_residual_blocks(e->vis_rows);
    pnmf_free(e->weights);
    e->weights = pnmf_malloc_array((size_t)m, nb);
    if (!e->weights) return PNMF_ERR_NOMEM;
    PNMF_CHECK(pnmf_residual_copy_weights(e->frames, m, e->nv, e->vis_rows, e->vis_cols, e->weights));
    return pnmf_residual_match_weights(e->frames, m, e->nv, e->vis_rows, e->vis_cols, e->weights);
}

/* The residual layer over the quantized model (residual.h), frame by frame
 * in the decoder's order; *sse gets the squared error of what the decoder
 * will show. */
static int code_residual(const PnmfEncoder *e, ResBufs *rb, PnmfWindowModel *md, int m, int step16, double *sse)
{
    /* a key window's first frame is what later frames copy: a finer step */
    int key16 = e->continues ? step16 : (step16 + PNMF_KEY_STEP_DIV / 2) / PNMF_KEY_STEP_DIV;
    if (key16 < PNMF_RES_MIN_STEP) key16 = PNMF_RES_MIN_STEP;
    if (!e->continues && key16 > PNMF_RES_MIN_STEP) {
        /* a lossless first frame can cost less than a lossy one (exact
         * repeats compress; quantization noise does not): try both */
        double j_lossy, j_lossless;
        PNMF_CHECK(key_frame_cost(e, rb, md, key16, residual_lambda(key16), &j_lossy));
        PNMF_CHECK(key_frame_cost(e, rb, md, PNMF_RES_MIN_STEP, residual_lambda(key16), &j_lossless));
        if (j_lossless <= j_lossy) key16 = PNMF_RES_MIN_STEP;
    }
    pnmf_residual_free(&md->res);
    PNMF_CHECK(pnmf_residual_alloc(&md->res, m, e->vis_rows, e->vis_cols, step16, key16));
    md->res.continues = e->continues;
    /* a window that continues one whose levels were range-coded prices its
     * levels with the levels stream's contexts (they will most likely be
     * range-coded too), others with the fixed table for zstd's varints.
     * 150 frames, -k 0, -q 16..48: natural_vtest -8.9 %, pingus_pan -2.4 %,
     * x11_fishtank -0.3 %, x11_oneko and x11_penguins +0.1..0.2 %; pricing
     * every window so: x11_penguins +4.7 % (its levels stay with zstd) */
    md->res.enc_rc_price = e->continues && e->last_rc;
    const double lambda = residual_lambda(step16), key_lambda = residual_lambda(key16);
    *sse = 0;
    /* the window's block weights (window_weights()), faded below */
    const size_t nb = (size_t)md->res.bx * md->res.by;
    uint8_t *weights = pnmf_malloc_array((size_t)m, nb);
    if (!weights) return PNMF_ERR_NOMEM;
    int avail = restore_refs(e, rb);
    memcpy(weights, e->weights, (size_t)m * nb);
    /* at the bottom of the -q range (steps over -q 49's) the weights fade
     * out, class 64 - q at most: a still background kept exact by them held
     * -q 64 at 34.3 dB on x11_oneko and 35.4 dB on samples/sprites.mkv
     * (default settings); faded, 28.3 and 31.6 dB, the range reaching down
     * to 32 dB, for a BD-rate over -q 48..64 of -0.4 % and -1.8 %
     * (x11_penguins +1.3 %, pingus_pan -0.2 %) */
    const int cap = (int)floor(PNMF_MAX_QUALITY - 8 * log2(step16 / 16.0) + 0.5);
    for (size_t i = 0; cap < PNMF_RES_WEIGHTS - 1 && i < (size_t)m * nb; i++)
        if (weights[i] > cap) weights[i] = (uint8_t)(cap < 0 ? 0 : cap);
    int ret = 0;
    for (int j = 0; ret >= 0 && j < m; j++) {
        md->res.enc_weight = weights + (size_t)j * nb;
        uint8_t *t = rb->Pp;
        rb->Pp = rb->P, rb->P = t;
        pnmf_diamond_int(md, j, e->w_step, e->r_step, rb->acc, rb->P);
        const uint8_t *src = e->frames + (size_t)j * e->nv;
        ret = pnmf_residual_encode_frame(&md->res, j, src, rb->P, rb->Pp, (const uint8_t *const *)rb->ref, avail,
                                         rb->D, j ? lambda : key_lambda);
        for (size_t q = 0; ret >= 0 && q < e->nv; q++) {
            const int d = (int)src[q] - rb->D[q];
            *sse += d * d;
        }
        pnmf_residual_push(rb->ref, &rb->D);
        if (avail < PNMF_RES_REFS) avail++;
    }
    md->res.enc_weight = NULL;
    pnmf_free(weights);
    return ret;
}

/* The codings of the window md the container chooses from: the residual
 * layer's levels as varints for zstd (which finds the exact repeats of
 * sprite animation), range-coded (smaller on everything else), or frame
 * 0's as varints and the others range-coded (a lossless first frame of
 * synthetic content, with zstd, and the rest in the stream); the third only
 * when frame 0 is lossless (step 1): where it paid (a lossy first frame's
 * levels went to the stream just as well). */
static int window_codings(PnmfWindowModel *md, uint8_t *c[3], size_t size[3], int *n)
{
    c[0] = c[1] = c[2] = NULL;
    size[0] = size[1] = size[2] = 0;
    *n = 1;
    int ret = pnmf_model_write(md, &c[0], &size[0]);
    if (ret >= 0 && md->res.step16) {
        const int nalt = md->res.key_step16 == PNMF_RES_MIN_STEP && md->res.start[1] > 0 &&
                                 md->res.start[1] < md->res.nlev ? 2 : 1;
        for (int a = 0; ret >= 0 && a < nalt; a++) {
            md->res.rc_levels = a + 1;
            ret = pnmf_model_write(md, &c[1 + a], &size[1 + a]);
            if (ret >= 0) (*n)++;
        }
        md->res.rc_levels = 0;
    }
    return ret;
}

/* The bytes of the window md as the container would store it next, but
 * for the chunk's framing. */
static int window_bytes(const PnmfEncoder *e, PnmfWindowModel *md, int m, size_t *bytes)
{
    uint8_t *c[3];
    size_t size[3];
    int n;
    int ret = window_codings(md, c, size, &n);
    if (ret >= 0) ret = pnmf_container_window_bytes(e->cw, (uint32_t)m, (const uint8_t *const *)c, size, n, bytes);
    for (int a = 0; a < 3; a++) pnmf_free(c[a]);
    return ret;
}

/* The residual step of a window, chosen (where picks()): its residual
 * layer is coded at the steps of -q 16, 20, ..., 64, the same steps
 * whatever -q is, and pnmf_step_pick (quant.h) keeps the coding with the
 * lowest squared error + lambda * bits within an error bound that rises
 * with -q: a higher -q gets no more bytes and no less error in each
 * window. The coarser steps are coded only until two in a row exceed the
 * bound; -q 16, the default, keeps the first coding without trying the
 * others. Below -q 16 the window is coded at the steps of -q 16, 14, ...,
 * 2 and 0 (lossless), all of them, and pnmf_fine_pick keeps one (no
 * more error than -q 16's coding): from -q 0 up to 15 too a higher -q gets
 * no more bytes and no less error (and -q 16 no less error). A window with a
 * model is coded with and without it at each
 * step (choose_step). What can still move the other way is what a window
 * leaves the next (its last frames are the next one's references, its
 * model the one the next may carry). Measured in the README ("Rate
 * control: how monotone -q is"); with two threads two codings run at once
 * (the same file). */
static int choose_steps(const PnmfEncoder *e) { return picks(&e->s); }

/* One coding for choose_step(), into its own copy of the window. */
typedef struct StepJob {
    const PnmfEncoder *e;
    ResBufs *rb;
    PnmfWindowModel md;
    int m, q, ret;
    double sse;
    size_t bytes;
} StepJob;

static void *step_job(void *arg)
{
    StepJob *j = arg;
    j->ret = code_residual(j->e, j->rb, &j->md, j->m, pnmf_residual_step(j->q), &j->sse);
    if (j->ret >= 0) j->ret = window_bytes(j->e, &j->md, j->m, &j->bytes);
    return NULL;
}

/* A held coding (fam's residual layer, at grid step i) moved into a job. */
static void held_job(PnmfEncoder *e, StepJob *j, PnmfWindowModel *fam, int i, double sse, int m)
{
    *j = (StepJob){ e, &e->rb[0], *fam, m, PNMF_PICK_FLOOR + i * PNMF_PICK_GRID, 0, sse, 0 };
    j->ret = window_bytes(e, fam, m, &j->bytes);
    memset(&fam->res, 0, sizeof(fam->res));
}

/* Run the first nj jobs whose run[] is set (the others are held codings),
 * two at once on two threads where both run (the same result). Returns
 * the first job's failure, or 0. */
static int run_step_jobs(PnmfEncoder *e, StepJob job[2], const int run[2], int nj)
{
    if (run[0] && run[1]) {
        pthread_t th;
        const int two = e->rb[1].P && !pthread_create(&th, NULL, step_job, &job[1]);
        step_job(&job[0]);
        if (two) pthread_join(th, NULL);
        else job[1].rb = &e->rb[0], step_job(&job[1]);
    } else {
        for (int k = 0; k < nj; k++)
            if (run[k]) job[k].rb = &e->rb[0], step_job(&job[k]);
    }
    for (int k = 0; k < nj; k++)
        if (job[k].ret < 0) return job[k].ret;
    return 0;
}

/* Which of the nj codings the pick is offered: without a model (nfam 1)
 * each; with one (nfam 2: a step with the model and without it) the one
 * with the lower squared error + lambda * bits at that step's own lambda. */
static void step_offers(const StepJob job[2], int nj, int nfam, int offer[2])
{
    offer[0] = 1, offer[1] = nfam == 1 && nj == 2;
    if (nfam == 2) {
        const double l = 8 * residual_lambda(pnmf_residual_step(job[0].q));
        if (job[1].sse + l * (double)job[1].bytes < job[0].sse + l * (double)job[0].bytes) offer[0] = 0, offer[1] = 1;
    }
}

/* choose_step() below -q PNMF_PICK_FLOOR: the window's codings at -q
 * PNMF_PICK_FLOOR, - PNMF_FINE_GRID, ..., 0 (with its model and without,
 * as choose_step()), all of them, kept by pnmf_fine_pick. held: as in
 * choose_step() (a coding at the floor's step is the first). */
static int choose_fine(PnmfEncoder *e, PnmfWindowModel fam[2], int nfam, int m, double sse[2], const int held[2])
{
    const int q = e->s.quality;
    /* a byte weighs as at the step of -q + PNMF_FINE_LAMBDA_Q (-q 0: bytes weigh nothing) */
    const double lambda = q ? 8 * residual_lambda(pnmf_residual_step(q + PNMF_FINE_LAMBDA_Q)) : 0;
    double r[PNMF_FINE_CODINGS], d[PNMF_FINE_CODINGS], best_d = 0;
    PnmfResidual best = { 0 };
    int best_f = 0, best_i = 0, ret = 0, n = 0;
    /* the codings in pairs: with a model, one step with and without it;
     * without, two steps (two threads run them at once) */
    for (int i = 0; ret >= 0 && i < PNMF_FINE_CODINGS; i += nfam == 2 ? 1 : 2) {
        StepJob job[2];
        int fj[2] = { 0, nfam - 1 }, at[2] = { i, nfam == 2 ? i : i + 1 }, run[2] = { 0, 0 }, nj = 0;
        for (; nj < 2 && at[nj] < PNMF_FINE_CODINGS; nj++) {
            const int f = fj[nj];
            if (at[nj] == 0 && held[f] == 0) {
                held_job(e, &job[nj], &fam[f], 0, sse[f], m);
                continue;
            }
            job[nj] = (StepJob){ e, &e->rb[nj], fam[f], m, PNMF_PICK_FLOOR - at[nj] * PNMF_FINE_GRID, 0, 0, 0 };
            memset(&job[nj].md.res, 0, sizeof(job[nj].md.res));
            run[nj] = 1;
        }
        ret = run_step_jobs(e, job, run, nj);
        int offer[2] = { 0, 0 };
        if (ret >= 0) step_offers(job, nj, nfam, offer);
        for (int k = 0; k < nj; k++) {
            if (ret >= 0 && offer[k]) {
                r[n] = (double)job[k].bytes, d[n] = job[k].sse;
                if (pnmf_fine_pick(r, d, n + 1, lambda) == n) {
                    pnmf_residual_free(&best);
                    best = job[k].md.res, best_f = fj[k], best_i = at[k], best_d = d[n];
                    job[k].md.res = (PnmfResidual){ 0 };
                }
                n++;
            }
            pnmf_residual_free(&job[k].md.res);
        }
    }
    for (int f = 0; f < nfam; f++) pnmf_residual_free(&fam[f].res); /* held codings never offered */
    if (ret < 0) {
        pnmf_residual_free(&best);
        return ret;
    }
    if (best_f) {
        const PnmfWindowModel t = fam[0];
        fam[0] = fam[1], fam[1] = t;
    }
    fam[0].res = best, sse[0] = best_d;
    pnmf_log(&e->s.logger, PNMF_LOG_INFO, "window %d: the step of -q %d%s", e->windows,
             PNMF_PICK_FLOOR - best_i * PNMF_FINE_GRID,
             nfam == 1 ? "" : fam[0].first[m] > 0 ? ", with the model" : ", without the model");
    return 0;
}

/* nfam 1: fam[0]'s residual layer at each step of the grid. nfam 2: the
 * window with its model (fam[0] or fam[1]) and without: at each step of
 * the grid the pick is offered the one of the two with the lower squared
 * error + lambda * bits, lambda that step's own, so what it is offered
 * does not depend on -q. sse[f]: the error of fam[f]'s coding, if it holds
 * one. fam[0] gets the coding kept, *sse its error. */
static int choose_step(PnmfEncoder *e, PnmfWindowModel fam[2], int nfam, int m, double sse[2])
{
    if (!choose_steps(e)) return 0;
    /* a byte weighs as at the step of -q + PNMF_PICK_LAMBDA_Q: with -q's own
     * lambda the finer steps won nearly always; -q 64, the bottom of the
     * range, takes the fewest bytes */
    const int q = e->s.quality;
    PnmfStepPick pick;
    pnmf_step_pick_init(&pick, q, q < PNMF_MAX_QUALITY ? 8 * residual_lambda(pnmf_residual_step(q + PNMF_PICK_LAMBDA_Q)) : INFINITY);
    /* a coding held, where it is one of the grid's, is not coded again */
    int held[2] = { -1, -1 };
    for (int f = 0; f < nfam; f++) {
        for (int i = 0; i < PNMF_PICK_CODINGS; i++)
            if (fam[f].res.step16 == pnmf_residual_step(PNMF_PICK_FLOOR + i * PNMF_PICK_GRID)) held[f] = i;
        if (held[f] < 0) pnmf_residual_free(&fam[f].res);
    }
    if (q < PNMF_PICK_FLOOR) return choose_fine(e, fam, nfam, m, sse, held);
    PnmfResidual best = { 0 };
    int best_f = 0, ret = 0;
    /* -q PNMF_PICK_FLOOR keeps the first coding: the pick's floor */
    const int floor = q == PNMF_PICK_FLOOR;
    for (int i = 0; ret >= 0 && !pick.done && !(floor && i);) {
        StepJob job[2];
        int fj[2] = { 0, nfam - 1 }, run[2] = { 0, 0 }, nj = 0;
        for (; nj < 2; nj++) {
            /* without a model: two steps at once only where the pick
             * cannot be done after the first; with: the step with and
             * without the model */
            const int f = fj[nj], at = nfam == 2 ? i : i + nj;
            if (at >= PNMF_PICK_CODINGS ||
                (nfam == 1 && nj && (floor || at == held[0] || !e->rb[1].P || pnmf_step_pick_may_end(&pick))))
                break;
            if (at == held[f]) {
                held_job(e, &job[nj], &fam[f], at, sse[f], m);
                continue;
            }
            job[nj] = (StepJob){ e, &e->rb[nj], fam[f], m, PNMF_PICK_FLOOR + at * PNMF_PICK_GRID, 0, 0, 0 };
            memset(&job[nj].md.res, 0, sizeof(job[nj].md.res));
            run[nj] = 1;
        }
        ret = run_step_jobs(e, job, run, nj);
        int offer[2] = { 0, 0 };
        if (ret >= 0) step_offers(job, nj, nfam, offer);
        for (int k = 0; k < nj; k++) {
            if (ret >= 0 && offer[k] && pnmf_step_pick_offer(&pick, (double)job[k].bytes, job[k].sse)) {
                pnmf_residual_free(&best);
                best = job[k].md.res, best_f = fj[k];
            } else {
                pnmf_residual_free(&job[k].md.res);
            }
        }
        i += nfam == 2 ? 1 : nj;
    }
    for (int f = 0; f < nfam; f++) pnmf_residual_free(&fam[f].res); /* held codings never offered */
    if (ret < 0) {
        pnmf_residual_free(&best);
        return ret;
    }
    if (best_f) {
        const PnmfWindowModel t = fam[0];
        fam[0] = fam[1], fam[1] = t;
    }
    fam[0].res = best, sse[0] = pick.bd;
    pnmf_log(&e->s.logger, PNMF_LOG_INFO, "window %d: the step of -q %d%s", e->windows,
             PNMF_PICK_FLOOR + pick.best * PNMF_PICK_GRID,
             nfam == 1 ? "" : fam[0].first[m] > 0 ? ", with the model" : ", without the model");
    return 0;
}

/* --target-psnr: a residual step (on a scale of 2^(1/32), about 0.2 dB
 * apart) whose window reaches its aim (below), found by bisection; the model
 * stays as it is. PSNR falls with the step on the whole but not strictly
 * (samples/sprites.mkv, 30 frames, -k 0: ticks 224, 225, 226 give 35.16,
 * 35.69, 34.79 dB), so of the steps the bisection saw reach the target it
 * keeps the one closest to it, the coarsest among equals, rather than the
 * coarsest: 35.16 dB there, not 35.69. */
static int target_residual(PnmfEncoder *e, PnmfWindowModel *md, int m, double *sse)
{
    const double px = (double)m * e->nv;
    /* the clip's PSNR so far is what is aimed at: a window that cannot
     * come down to the target (the coarsest steps keep the first frame
     * fine, or lossless) leaves its margin to the next ones, which aim
     * lower; each window's aim within 6 dB of the target */
    const double per_px = 255.0 * 255.0 / pow(10.0, e->s.target_psnr / 10.0);
    const double before = (double)(e->frame_count - m) * e->nv;
    double max_sse = (before + px) * per_px - e->sse;
    if (max_sse > 4 * px * per_px) max_sse = 4 * px * per_px;
    if (max_sse < px * per_px / 4) max_sse = px * per_px / 4;
    /* bisection on the step, keeping the step whose error came closest to
     * the aim (in dB, either side): the error need not grow with the step
     * (a model's prediction, blocks skipped at one step and coded at the
     * next), so the last step under the aim can be far under it */
    int lo = 0, hi = 256, best = 0; /* step 16 * 2^(t/32): 1 .. 256 gray levels */
    double best_miss = 1e300;
    while (lo <= hi) {
        const int t = (lo + hi) / 2;
        double s = 0;
        PNMF_CHECK(code_residual(e, &e->rb[0], md, m, (int)lrint(16.0 * pow(2.0, t / 32.0)), &s));
        const double miss = fabs(log((s > 0 ? s : 1e-9) / max_sse));
        if (miss < best_miss || (miss == best_miss && t > best)) best = t, best_miss = miss;
        if (s <= max_sse) lo = t + 1;
        else hi = t - 1;
    }
    PNMF_CHECK(code_residual(e, &e->rb[0], md, m, (int)lrint(16.0 * pow(2.0, best / 32.0)), sse));
    pnmf_log(&e->s.logger, PNMF_LOG_INFO, "window %d: target %.2f dB: step %.2f, %.2f dB", e->windows, e->s.target_psnr,
                pow(2.0, best / 32.0), 10 * log10(px * 255.0 * 255.0 / (*sse > 0 ? *sse : 1e-9)));
    return 0;
}

/* One coding of the residual layer for cost_with_and_without(): coded
 * into md in rb, serialized and compressed (zstd at a fast level: an
 * estimate for a decision, the container compresses again). */
typedef struct CostJob {
    const PnmfEncoder *e;
    ResBufs *rb;
    PnmfWindowModel *md;
    int m, step16, ret;
    double sse;
    size_t bytes;
} CostJob;

static void *cost_job(void *arg)
{
    CostJob *c = arg;
    uint8_t *payload = NULL, *z = NULL;
    size_t size = 0;
    c->ret = code_residual(c->e, c->rb, c->md, c->m, c->step16, &c->sse);
    if (c->ret >= 0) c->ret = pnmf_model_write(c->md, &payload, &size);
    if (c->ret >= 0) c->ret = pnmf_entropy_compress(payload, size, PNMF_ESTIMATE_ZSTD_LEVEL, &z, &c->bytes);
    pnmf_free(payload);
    pnmf_free(z);
    return NULL;
}

/* The residual layer of the window over md, and over no model at all
 * (into bare, an empty model of md's size), coded into each; for each,
 * the squared error and the cost j = squared error + lambda * 8 * bytes
 * (the bytes in *model_bytes, *bare_bytes).
 * The two codings are independent: with threads they run at once (the
 * same result). */
static int cost_with_and_without(PnmfEncoder *e, PnmfWindowModel *md, PnmfWindowModel *bare, int m,
                                 int step16, double j[2], double sse[2], size_t *model_bytes, size_t *bare_bytes)
{
    const double lambda = residual_lambda(step16);
    /* the residual layer over no model does not depend on the model: a
     * caller that has it (bare coded, *bare_bytes set) passes it in */
    const int ready = *bare_bytes > 0;
    if (!ready) PNMF_CHECK(pnmf_model_alloc(bare, e->rows, e->cols, e->vis_rows, e->vis_cols, m, md->k, 0));
    CostJob c[2] = { { e, &e->rb[0], md, m, step16, 0, 0, 0 }, { e, &e->rb[1], bare, m, step16, 0, sse[1], *bare_bytes } };
    pthread_t th;
    const int two = !ready && e->rb[1].P && !pthread_create(&th, NULL, cost_job, &c[1]);
    cost_job(&c[0]);
    if (two) pthread_join(th, NULL);
    else if (!ready) c[1].rb = &e->rb[0], cost_job(&c[1]);
    PNMF_CHECK(c[0].ret);
    PNMF_CHECK(c[1].ret);
    for (int t = 0; t < 2; t++) sse[t] = c[t].sse, j[t] = sse[t] + lambda * 8 * (double)c[t].bytes;
    *model_bytes = c[0].bytes, *bare_bytes = c[1].bytes;
    pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: with the model %zu bytes, sse %.0f; without %zu bytes, sse %.0f",
                e->windows, c[0].bytes, sse[0], c[1].bytes, sse[1]);
    return 0;
}

/* --two-level: the paper's section 3.4 on the window, then the combined
 * H_2^T <> H_1^T as entries (a component may appear several times in a
 * frame). The entries are quantized as fitted: the closed-loop H refit
 * and --refine work on one entry per component and frame and are not
 * run here. */
static int fit_two_level(PnmfEncoder *e, PnmfWindowModel *md, int m)
{
    const int k = e->s.components, K = e->s.two_level;
    const size_t n = e->n;
    PnmfFitParams p1 = { K, e->s.algo, e->s.iterations, e->s.inner_iters, e->s.restarts,
                         e->s.seed + (uint64_t)e->windows * 1000003u, PNMF_FIT_TOL, 0, 0, 0, 0, 0, &e->s.logger };
    PnmfFitParams p2 = p1;
    p2.k = k, p2.seed = p1.seed + 1;
    float *W1 = pnmf_malloc_array((size_t)K * n, sizeof(float));
    float *W = pnmf_malloc_array((size_t)k * n, sizeof(float));
    PnmfAtom *H1 = pnmf_malloc_array((size_t)m * K, sizeof(PnmfAtom));
    PnmfAtom *H2 = pnmf_malloc_array((size_t)K * k, sizeof(PnmfAtom));
    int *start = pnmf_malloc_array((size_t)m + 1, sizeof(int));
    PnmfTwoLevelEntry *ent = pnmf_malloc_array((size_t)m * K * k, sizeof(PnmfTwoLevelEntry));
    float *scale = pnmf_malloc_array((size_t)k, sizeof(float));
    int *q0 = pnmf_malloc_array((size_t)k, sizeof(int));
    int kept = 0, ret = PNMF_ERR_NOMEM;
    if (!W1 || !W || !H1 || !H2 || !start || !ent || !scale || !q0) goto done;
    ret = pnmf_twolevel_run(e->rows, e->cols, e->A, m, &p1, &p2, PNMF_TWO_LEVEL_DROP, e->s.threads, W1, H1, W, H2, &kept,
                            NULL, NULL);
    if (ret < 0) goto done;
    const int total = pnmf_twolevel_combine(e->rows, e->cols, m, K, k, H1, H2, start, ent);
    if (total < 0) {
        ret = total;
        goto done;
    }
    ret = pnmf_model_alloc(md, e->rows, e->cols, e->vis_rows, e->vis_cols, m, k, total);
    if (ret < 0) goto done;
    for (int i = 0; i < k; i++) {
        ret = pnmf_quant_component(e->rows, e->cols, W + (size_t)i * n, e->w_step, &md->comp[i], &scale[i], &q0[i]);
        if (ret < 0) goto done;
    }
    uint8_t *used = pnmf_calloc((size_t)k, 1);
    if (!used) {
        ret = PNMF_ERR_NOMEM;
        goto done;
    }
    for (int j = 0; j < m && ret >= 0; j++) {
        int run_i = -1, run = 0;
        for (int t = start[j]; t < start[j + 1] && ret >= 0; t++) {
            const int i = ent[t].component;
            if (!md->comp[i].bh) continue;
            const uint32_t c = pnmf_quant_coef(ent[t].r * scale[i], e->r_step);
            if (!c) continue;
            run = i == run_i ? run + 1 : 1;
            run_i = i;
            if (run > PNMF_MAX_OCCURRENCES) continue; /* the format's limit: the weakest go */
            used[i] = 1;
            ret = pnmf_model_add(md, j, i, c, pnmf_shift_compose(e->rows, e->cols, ent[t].p, q0[i]));
        }
    }
    for (int i = 0; i < k; i++)
        if (!used[i]) {
            pnmf_freep(&md->comp[i].lev);
            md->comp[i].bh = md->comp[i].bw = 0;
        }
    pnmf_free(used);
    pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: two-level, %d of %d level-1 components kept, %d entries", e->windows,
                kept, K, md->first[m]);
done:
    pnmf_free(W1), pnmf_free(W), pnmf_free(H1), pnmf_free(H2), pnmf_free(start), pnmf_free(ent);
    pnmf_free(scale), pnmf_free(q0);
    return ret;
}

/* Fit PermNMF to the window and quantize it into md (closed loop). */
/* The window's frames as floats on the torus, in A. */
static void load_frames(PnmfEncoder *e, int m)
{
    for (int j = 0; j < m; j++) {
        const uint8_t *f = e->frames + (size_t)j * e->nv;
        float *a = e->A + (size_t)j * e->n;
        for (int y = 0; y < e->vis_rows; y++)
            for (int x = 0; x < e->vis_cols; x++) a[(size_t)y * e->cols + x] = f[(size_t)y * e->vis_cols + x];
    }
}

/* The window's entries over the last model's components as the decoder
 * has them (md->carries: the payload holds no component): the quantized
 * components fixed, an H step from zero against the frames (twice, with
 * the canvas's invisible part imputed from the first), its coefficients
 * quantized. No fit, no W step: a few correlations per frame. */
static int carry_model(PnmfEncoder *e, PnmfWindowModel *md, int m)
{
    const int k = e->s.components;
    float *W = e->Wtry;
    for (int i = 0; i < k; i++)
        pnmf_dequant_component(e->rows, e->cols, &e->last.comp[i], e->w_step, W + (size_t)i * e->n);
    load_frames(e, m);
    PNMF_CHECK(pnmf_fitter_set_frames(e->ft, e->A, m));
    memset(e->H, 0, (size_t)m * k * sizeof(PnmfAtom));
    const int mode = e->s.algo == PNMF_ALGO_IMPROVED ? PNMF_H_GREEDY : PNMF_H_CYCLIC;
    for (int pass = 0; pass < 2; pass++) {
        PNMF_CHECK(pnmf_fitter_impute(e->ft, W, k, e->H));
        PNMF_CHECK(pnmf_fitter_h_step(e->ft, W, k, e->H, mode, e->s.inner_iters));
    }
    PNMF_CHECK(pnmf_model_alloc(md, e->rows, e->cols, e->vis_rows, e->vis_cols, m, k, m * k));
    md->carries = 1;
    PNMF_CHECK(pnmf_model_copy_components(md, &e->last));
    return add_entries(e, md, m, W, NULL);
}

/* The squared error of md's reconstruction in floats (as the fit sees it). */
static double model_sse(PnmfEncoder *e, PnmfRepFit *f, const PnmfWindowModel *md)
{
    for (int i = 0; i < md->k; i++)
        pnmf_dequant_component(e->rows, e->cols, &md->comp[i], e->w_step, f->W + (size_t)i * e->n);
    for (int j = 0; j < f->m; j++) {
        f->cnt[j] = 0;
        for (int t = md->first[j]; t < md->first[j + 1] && f->cnt[j] < f->cap; t++)
            f->ent[(size_t)j * f->cap + f->cnt[j]++] =
                (PnmfRepEnt){ md->ent[t].i, md->ent[t].p, pnmf_dequant_coef(md->ent[t].c, e->r_step) };
    }
    pnmf_repfit_residuals(f, f->W);
    return pnmf_repfit_energy(f);
}

/* From the fit (W0, H0: k components, one atom each a frame), the model
 * with repeated entries (repeats.h), quantized: the components, the
 * entries moved to the blocks' origins and scales, the coefficients
 * refitted against the quantized components. It replaces *md when its
 * squared error plus lambda * PNMF_REPEAT_BITS per repeated entry is below
 * the squared error of *md (one entry a component, after --refine). */
static int try_repeats(PnmfEncoder *e, PnmfWindowModel *md, int m, const float *W0, const PnmfAtom *H0)
{
    const int k = e->s.components;
    PnmfRepFit f;
    PNMF_CHECK(pnmf_repfit_open(&f, e->rows, e->cols, e->vis_rows, e->vis_cols, m, k, e->A,
                                quality_lambda(e), e->s.signed_components));
    PnmfWindowModel rm;
    memset(&rm, 0, sizeof(rm));
    double trace[PNMF_REPEAT_ROUNDS + 1];
    const int rounds = pnmf_repfit_run(&f, W0, H0, trace);
    int ret = 0;
    for (int t = 0; t <= rounds && pnmf_log_on(&e->s.logger); t++)
        pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: repeats: round %d, squared error + lambda * bits %.6g%s", e->windows, t,
                    trace[t], t && trace[t] > trace[t - 1] * (1 + 1e-6) ? " (rose!)" : "");
    if (rounds) {
        ret = pnmf_model_alloc(&rm, e->rows, e->cols, e->vis_rows, e->vis_cols, m, k, m * f.cap);
        for (int i = 0; ret >= 0 && i < k; i++) {
            float scale;
            int q0;
            ret = pnmf_quant_component(e->rows, e->cols, f.W + (size_t)i * e->n, e->w_step, &rm.comp[i], &scale, &q0);
            for (int j = 0; ret >= 0 && j < m; j++)
                for (int a = 0; a < f.cnt[j]; a++) {
                    PnmfRepEnt *t = &f.ent[(size_t)j * f.cap + a];
                    if (t->i != i) continue;
                    t->r = rm.comp[i].bh ? t->r * scale : 0;
                    t->p = pnmf_shift_compose(e->rows, e->cols, t->p, q0);
                }
        }
        for (int i = 0; ret >= 0 && i < k; i++)
            pnmf_dequant_component(e->rows, e->cols, &rm.comp[i], e->w_step, f.W + (size_t)i * e->n);
        if (ret >= 0) {
            pnmf_repfit_residuals(&f, f.W);
            pnmf_repfit_coefs(&f, f.W);
            pnmf_repfit_prune(&f, f.W);
        }
        int extra = 0;
        uint8_t *used = pnmf_calloc(k, 1);
        if (!used && ret >= 0) ret = PNMF_ERR_NOMEM;
        for (int j = 0; ret >= 0 && j < m; j++) {
            int per[PNMF_MAX_COMPONENTS] = { 0 };
            for (int a = 0; ret >= 0 && a < f.cnt[j]; a++) {
                const PnmfRepEnt *t = &f.ent[(size_t)j * f.cap + a];
                const uint32_t c = pnmf_quant_coef(t->r, e->r_step);
                if (!c || !rm.comp[t->i].bh) continue;
                used[t->i] = 1;
                extra += per[t->i]++ > 0;
                ret = pnmf_model_add(&rm, j, t->i, c, t->p);
            }
        }
        for (int i = 0; ret >= 0 && i < k; i++)
            if (!used[i]) pnmf_freep(&rm.comp[i].lev), rm.comp[i].bh = rm.comp[i].bw = 0;
        pnmf_free(used);
        if (ret >= 0 && extra) {
            /* (model_sse() reuses f: the refit is done with) */
            const double sse_rep = model_sse(e, &f, &rm), sse_one = model_sse(e, &f, md);
            const double j_rep = sse_rep + f.lambda * PNMF_REPEAT_BITS * extra;
            pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: repeats: %d more entries, quantized squared error %.6g (+ %.6g for "
                        "their bits) against %.6g with one entry a component\n", e->windows, extra, sse_rep,
                        f.lambda * PNMF_REPEAT_BITS * extra, sse_one);
            if (j_rep < sse_one && !e->s.residual) {
                PnmfWindowModel t = *md;
                *md = rm, rm = t;
                e->repeated += extra;
            } else if (j_rep < sse_one) {
                /* the residual layer over each decides (encode_window) */
                pnmf_model_free(&e->alt);
                e->alt = rm, e->alt_extra = extra;
                memset(&rm, 0, sizeof(rm));
            }
        }
    }
    pnmf_model_free(&rm);
    pnmf_repfit_close(&f);
    return ret;
}

/* A full fit that follows a probe stops after its automatic size and
 * PNMF_CHECK_ITERS iterations when the model, coded as the probe's is (no
 * closed-loop refit), costs more than PNMF_CHECK_MARGIN times the residual
 * layer alone (squared error + lambda * bits): the window goes without a
 * model, and the next PNMF_PROBE_SKIPS windows are not probed. The probe's
 * single iteration cannot tell apart models that will pay from those that
 * will not; two iterations after the automatic size can. A fit that goes
 * on is the one it would have been without the check
 * (PnmfFitParams.warm_it). */
typedef struct FitCheck {
    PnmfWindowModel *bare;
    double bare_sse;
    size_t bare_bytes;
    int step16;
    int dropped;
} FitCheck;

static int check_fit(PnmfEncoder *e, int m, FitCheck *c)
{
    const size_t kn = (size_t)e->s.components * e->n, hn = (size_t)m * e->s.components;
    float *W = pnmf_malloc_array(kn, sizeof(float));
    PnmfAtom *H = pnmf_malloc_array(hn, sizeof(PnmfAtom));
    int ret = W && H ? 0 : PNMF_ERR_NOMEM;
    PnmfWindowModel md;
    memset(&md, 0, sizeof(md));
    if (ret >= 0) {
        memcpy(W, e->W, kn * sizeof(float));
        memcpy(H, e->H, hn * sizeof(PnmfAtom));
        /* quantized as the probe's model is: no closed-loop refit */
        const int refine = e->s.refine;
        e->s.refine = 0, e->probing = 1;
        ret = pnmf_model_alloc(&md, e->rows, e->cols, e->vis_rows, e->vis_cols, m, e->s.components,
                               m * e->s.components);
        if (ret >= 0) ret = quantize_window(e, &md, m);
        e->s.refine = refine, e->probing = 0;
    }
    double j[2], sse[2] = { 0, c->bare_sse };
    size_t model_bytes = 0, bare_bytes = c->bare_bytes;
    if (ret >= 0) ret = cost_with_and_without(e, &md, c->bare, m, c->step16, j, sse, &model_bytes, &bare_bytes);
    if (ret >= 0) {
        c->dropped = j[0] > PNMF_CHECK_MARGIN * j[1];
        pnmf_log(&e->s.logger, PNMF_LOG_INFO, "window %d: after %d iterations: %s (cost ratio %.3f)", e->windows, PNMF_CHECK_ITERS,
                    c->dropped ? "no model" : "fit on", j[0] / j[1]);
        memcpy(e->W, W, kn * sizeof(float));
        memcpy(e->H, H, hn * sizeof(PnmfAtom));
        /* the fit's imputation, which the coding's replaced */
        ret = pnmf_fitter_impute(e->ft, e->W, e->s.components, e->H);
    }
    pnmf_model_free(&md);
    pnmf_free(W);
    pnmf_free(H);
    return ret;
}

static int fit_model(PnmfEncoder *e, PnmfWindowModel *md, int m, FitCheck *chk)
{
    const int k = e->s.components;
    load_frames(e, m);
    if (e->s.two_level) return fit_two_level(e, md, m);
    PNMF_CHECK(pnmf_fitter_set_frames(e->ft, e->A, m));
    /* the automatic size in full fits (not in the probe's one iteration) */
    const double add_lambda =
        e->s.auto_k && e->s.iterations > 1 ? quality_lambda(e) : 0;
    PnmfFitParams p = { k, e->s.algo, e->s.iterations, e->s.inner_iters, e->s.restarts,
                        e->s.seed + (uint64_t)e->windows * 1000003u, PNMF_FIT_TOL, add_lambda, e->probing,
                        e->s.recentre, 0, 0, &e->s.logger };
    const int staged = chk && e->s.restarts == 1 && e->s.iterations > PNMF_CHECK_ITERS;
    if (staged) p.iterations = PNMF_CHECK_ITERS;
    PnmfFitStats st = { 0 };
    /* the objective after every iteration, for the log */
    if (pnmf_log_on(&e->s.logger)) st.trace = pnmf_malloc_array((size_t)e->s.iterations + 1, sizeof(double));
    int ret = pnmf_fitter_fit(e->ft, &p, e->W, e->H, &st);
    if (ret >= 0 && staged && st.iterations == PNMF_CHECK_ITERS) {
        ret = check_fit(e, m, chk);
        if (ret >= 0 && chk->dropped) {
            pnmf_freep(&st.trace);
            return 0;
        }
        if (ret >= 0) { /* the rest of the fit, its statistics added to the first part's */
            PnmfFitStats more = { 0 };
            more.trace = st.trace ? st.trace + PNMF_CHECK_ITERS : NULL;
            p.warm_k = st.k_used, p.warm_it = PNMF_CHECK_ITERS, p.add_lambda = 0;
            p.iterations = e->s.iterations - PNMF_CHECK_ITERS;
            ret = pnmf_fitter_fit(e->ft, &p, e->W, e->H, &more);
            st.objective = more.objective, st.iterations += more.iterations;
            st.guard_rejects_h += more.guard_rejects_h, st.guard_rejects_w += more.guard_rejects_w;
            st.seconds_h += more.seconds_h, st.seconds_w += more.seconds_w;
        }
    }
    if (st.trace && ret >= 0)
        for (int t = 0; t <= st.iterations; t++) pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "  it %d: %.6g", t, st.trace[t]);
    pnmf_freep(&st.trace);
    PNMF_CHECK(ret);
    e->objective += st.objective;
    pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: objective %.6g after %d iterations (restart %d), %d guard rejects; "
                "seconds: init %.2f, H steps %.2f, W steps %.2f\n", e->windows, st.objective,
                st.iterations, st.best_restart, st.guard_rejects_h + st.guard_rejects_w, st.seconds_init, st.seconds_h, st.seconds_w);
    PNMF_CHECK(pnmf_model_alloc(md, e->rows, e->cols, e->vis_rows, e->vis_cols, m, k, m * k));
    if (!e->s.repeats || e->probing) return quantize_window(e, md, m);
    /* the fit, before quantize_window refines it: where repeats start */
    float *W0 = pnmf_malloc_array((size_t)k * e->n, sizeof(float));
    PnmfAtom *H0 = pnmf_malloc_array((size_t)m * k, sizeof(PnmfAtom));
    ret = W0 && H0 ? 0 : PNMF_ERR_NOMEM;
    if (ret >= 0) {
        memcpy(W0, e->W, (size_t)k * e->n * sizeof(float));
        memcpy(H0, e->H, (size_t)m * k * sizeof(PnmfAtom));
        ret = quantize_window(e, md, m);
    }
    if (ret >= 0) ret = try_repeats(e, md, m, W0, H0);
    pnmf_free(W0);
    pnmf_free(H0);
    return ret;
}

/* With the residual layer, a full fit is wasted on a window whose model
 * cannot pay for itself. A probe (one ALS iteration of PNMF_PROBE_SWEEPS
 * sweeps, no refinement) is coded both ways first; when the residual layer
 * alone beats it by the probe's margins, in squared error + lambda * bits
 * or in bytes, the window is coded without a model and the full fit is
 * skipped. A probe far from paying also skips the next windows' probes. */
static int probe_model(PnmfEncoder *e, int m, int step16, int *drop, PnmfWindowModel *bare,
                       double *bare_sse, size_t *bare_bytes)
{
    *drop = 0;
    PnmfWindowModel md;
    memset(&md, 0, sizeof(md));
    const int iters = e->s.iterations, refine = e->s.refine;
    const double objective = e->objective;
    const int inner = e->s.inner_iters;
    e->s.iterations = 1, e->s.refine = 0;
    e->s.inner_iters = PNMF_PROBE_SWEEPS;
    const double t0 = now();
    e->probing = 1;
    int ret = fit_model(e, &md, m, NULL);
    e->probing = 0;
    e->s.iterations = iters, e->s.refine = refine, e->objective = objective, e->s.inner_iters = inner;
    const double t1 = now();
    e->t_probe += t1 - t0;
    double j[2], sse[2] = { 0, *bare_sse }; /* the bare coding's, when the caller has it */
    size_t model_bytes = 0;
    if (ret >= 0) ret = cost_with_and_without(e, &md, bare, m, step16, j, sse, &model_bytes, bare_bytes);
    e->t_residual += now() - t1;
    if (ret >= 0) {
        const double margin = choose_steps(e) ? PNMF_PROBE_MARGIN_FIXED : PNMF_PROBE_MARGIN;
        *drop = j[0] > margin * j[1] || (double)model_bytes > PNMF_PROBE_BYTES * (double)*bare_bytes;
        if (j[0] > PNMF_PROBE_FAR * j[1]) e->probe_skips = PNMF_PROBE_SKIPS;
        *bare_sse = sse[1];
        pnmf_log(&e->s.logger, PNMF_LOG_INFO, "window %d: probe: %s (cost ratio %.3f)", e->windows, *drop ? "no model" : "full fit", j[0] / j[1]);
    }
    pnmf_model_free(&md);
    return ret;
}

/*
 * One window: the model (unless -k 0), then, with the residual layer, the
 * residual over the model and over no model at all; the encoder keeps the
 * one with the lower squared error + lambda * bits, so parts are sent only
 * where they pay for themselves.
 */
static int encode_window(PnmfEncoder *e)
{
    const int m = e->nbuf;
    PnmfWindowModel md, bare;
    memset(&md, 0, sizeof(md));
    memset(&bare, 0, sizeof(bare));
    double sse = 0;
    int ret = 0;
    const int header_k = e->s.components ? e->s.components : 1;
    const int step16 = pnmf_residual_step(e->model_q);
    const int start = e->frame_count - m;
    e->continues = e->s.residual && e->windows > 0 && start - e->last_key < e->s.key_interval &&
                   start != e->last_cut;
    if (e->s.residual && !e->continues) e->last_key = start;
    if (e->s.residual && (ret = window_weights(e, m)) < 0)
        return fail(e, ret, ret == PNMF_ERR_NOMEM ? "out of memory" : "cannot encode the window");
    /* what the container's sizes (window_bytes) and the window's chunk assume */
    pnmf_container_writer_set_continues(e->cw, e->continues);
    int drop = 0, carried = 0;
    double bare_sse = 0;
    size_t bare_bytes = 0; /* > 0: bare holds the residual layer over no model */
    const double t0 = now();
    if (e->s.carry && e->continues && e->s.components && !e->s.two_level && e->last.k == e->s.components &&
        pnmf_model_has_components(&e->last)) {
        /* the last model's components, carried over, against the residual
         * layer alone: when they pay, no probe and no fit */
        double j[2], sse2[2] = { 0, 0 };
        size_t model_bytes;
        ret = carry_model(e, &md, m);
        if (ret >= 0) ret = cost_with_and_without(e, &md, &bare, m, step16, j, sse2, &model_bytes, &bare_bytes);
        bare_sse = sse2[1];
        if (ret >= 0 && j[0] < j[1]) carried = 1, sse = sse2[0];
        else pnmf_model_free(&md);
        if (ret >= 0)
            pnmf_log(&e->s.logger, PNMF_LOG_INFO, "window %d: carried components: %s (cost ratio %.3f)", e->windows,
                    carried ? "kept" : "dropped", j[0] / j[1]);
        e->t_residual += now() - t0;
    }
    if (carried) {
        /* md is the window, its residual layer coded */
    } else if (ret >= 0 && e->s.components && e->s.residual && !e->s.two_level && e->s.iterations > 1) {
        if (e->probe_skips > 0) {
            e->probe_skips--, drop = 1;
            pnmf_log(&e->s.logger, PNMF_LOG_INFO, "window %d: no model (the probe far from paying)", e->windows);
        } else {
            ret = probe_model(e, m, step16, &drop, &bare, &bare_sse, &bare_bytes);
        }
    }
    const double t1 = now();
    if (carried) {
    } else if (ret >= 0 && e->s.components && !drop) {
        FitCheck chk = { &bare, bare_sse, bare_bytes, step16, 0 };
        ret = fit_model(e, &md, m, bare_bytes ? &chk : NULL);
        e->t_fit += now() - t1;
        if (ret >= 0 && chk.dropped) { /* the probe's coding over no model: the window */
            e->probe_skips = PNMF_PROBE_SKIPS, e->fits_stopped++;
            md = bare, bare_bytes = 0;
            memset(&bare, 0, sizeof(bare));
            sse = bare_sse;
        }
    } else if (ret >= 0 && bare_bytes) {
        md = bare, bare_bytes = 0; /* the probe's coding over no model: the window */
        memset(&bare, 0, sizeof(bare));
        sse = bare_sse;
    } else if (ret >= 0) {
        ret = pnmf_model_alloc(&md, e->rows, e->cols, e->vis_rows, e->vis_cols, m, header_k, 0);
    }
    double t2 = now();
    if (ret >= 0 && e->s.residual) {
        /* keep the model only when it lowers the cost */
        double j[2], sse2[2] = { 0, bare_sse };
        size_t model_bytes;
        if (carried) {
            /* coded, and kept, above */
        } else if (md.first[m] > 0) {
            ret = cost_with_and_without(e, &md, &bare, m, step16, j, sse2, &model_bytes, &bare_bytes);
            sse = sse2[0];
            if (ret >= 0 && e->alt.first && e->alt.first[m] > 0) {
                /* the model with repeated entries, coded the same way:
                 * kept when it costs less than the one-entry model */
                CostJob c = { e, &e->rb[0], &e->alt, m, step16, 0, 0, 0 };
                cost_job(&c);
                ret = c.ret;
                const double ja = c.sse + residual_lambda(step16) * 8 * (double)c.bytes;
                pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: with repeats %zu bytes, sse %.0f: %s", e->windows, c.bytes, c.sse,
                            ja < j[0] ? "kept" : "dropped");
                if (ret >= 0 && ja < j[0]) {
                    PnmfWindowModel t = md;
                    md = e->alt, e->alt = t;
                    j[0] = ja, sse = c.sse;
                    e->repeated += e->alt_extra;
                }
            }
            pnmf_model_free(&e->alt);
            bare_sse = sse2[1];
            if (ret >= 0 && j[1] < j[0]) {
                PnmfWindowModel t = md;
                md = bare, bare = t;
                bare_sse = sse, sse = sse2[1];
            }
        } else if (!md.res.step16) {
            /* where choose_step() will choose, its first coding */
            ret = code_residual(e, &e->rb[0], &md, m, choose_steps(e) ? pnmf_residual_step(PNMF_PICK_FLOOR) : step16, &sse);
        }
        if (ret >= 0 && e->s.target_psnr > 0) {
            ret = target_residual(e, &md, m, &sse);
        } else if (ret >= 0 && md.res.step16 > PNMF_RES_MIN_STEP) {
            /* with a model, the pick weighs the window without it at each step too */
            PnmfWindowModel fam[2] = { md, bare };
            double fsse[2] = { sse, bare_sse };
            const int nfam = 1 + (bare_bytes && bare.res.step16 && (md.first[m] > 0 || bare.first[m] > 0));
            ret = choose_step(e, fam, nfam, m, fsse);
            md = fam[0], bare = fam[1], sse = fsse[0];
        }
        const double t3 = now();
        e->t_residual += t3 - t2;
        t2 = t3;
    } else if (ret >= 0) {
        for (int j = 0; ret >= 0 && j < m; j++) {
            pnmf_diamond_int(&md, j, e->w_step, e->r_step, e->rb[0].acc, e->rec);
            const uint8_t *src = e->frames + (size_t)j * e->nv;
            for (size_t q = 0; q < e->nv; q++) {
                const int d = (int)src[q] - e->rec[q];
                sse += d * d;
            }
        }
    }
    /* the container keeps the smallest chunk of the window's codings */
    uint8_t *codings[3] = { NULL, NULL, NULL };
    size_t sizes[3] = { 0, 0, 0 };
    int ncodings = 0;
    if (ret >= 0) ret = window_codings(&md, codings, sizes, &ncodings);
    if (ret >= 0 && pnmf_log_on(&e->s.logger)) {
        char blocks[PNMF_MAX_COMPONENTS * 12 + 1];
        size_t len = 0;
        blocks[0] = 0;
        for (int i = 0; i < md.k && len < sizeof(blocks); i++)
            len += (size_t)snprintf(blocks + len, sizeof(blocks) - len, " %dx%d", md.comp[i].bh, md.comp[i].bw);
        pnmf_log(&e->s.logger, PNMF_LOG_DEBUG, "window %d: payload %zu bytes; blocks%s", e->windows, sizes[0], blocks);
    }
    int chosen = 0;
    if (ret >= 0)
        ret = pnmf_container_write_window_best(e->cw, (uint32_t)(e->frame_count - m), (uint32_t)m,
                                               (const uint8_t *const *)codings, sizes, ncodings, &chosen, e->err,
                                               sizeof(e->err));
    for (int a = 0; a < 3; a++) pnmf_free(codings[a]);
    if (ret >= 0) e->rc_level_windows += chosen > 0, e->last_rc = chosen > 0;
    const double t4 = now();
    e->t_write += t4 - t2;
    if (ret >= 0) e->sse += sse, e->carried += carried;
    if (ret >= 0) ret = pnmf_model_track(&e->last, &md); /* as the decoder will */
    if (ret >= 0 && e->s.residual) {
        /* the decoder's last frame of this window, which the next one may
         * predict from: decoded from md exactly as the decoder does */
        ResBufs *b = &e->rb[0];
        int avail = restore_refs(e, b);
        for (int j = 0; j < m; j++) {
            uint8_t *t = b->Pp;
            b->Pp = b->P, b->P = t;
            pnmf_diamond_int(&md, j, e->w_step, e->r_step, b->acc, b->P);
            pnmf_residual_frame(&md.res, j, b->P, b->Pp, (const uint8_t *const *)b->ref, b->D);
            pnmf_residual_push(b->ref, &b->D);
            if (avail < PNMF_RES_REFS) avail++;
        }
        memcpy(e->lastP, b->P, e->nv);
        for (int t = 0; t < PNMF_RES_REFS; t++) memcpy(e->lastRef[t], b->ref[t], e->nv);
        e->last_avail = avail;
    }
    pnmf_model_free(&md);
    pnmf_model_free(&bare);
    pnmf_model_free(&e->alt);
    e->t_residual += now() - t4; /* the decoder's references, decoded from the window */
    e->t_total += now() - t0;
    if (ret < 0)
        return fail(e, ret, ret == PNMF_ERR_NOMEM ? "out of memory" : "cannot encode the window");
    e->windows++;
    e->nbuf = 0;
    return 0;
}

/* A scene cut between two frames: their gray-level histograms (64 bins)
 * differ in more than PNMF_CUT_HIST of the pixels and the pixels by more
 * than PNMF_CUT_PIXEL gray levels on average (consecutive frames of
 * animation can flip many pixels between the same gray levels; a new scene
 * changes both). */

static int scene_cut(const uint8_t *a, const uint8_t *b, ptrdiff_t stride, int width, int height)
{
    int ha[64] = { 0 }, hb[64] = { 0 };
    uint64_t sad = 0;
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++) {
            const int u = a[(size_t)y * width + x], v = b[y * stride + x];
            ha[u >> 2]++, hb[v >> 2]++;
            sad += (uint64_t)abs(u - v);
        }
    const double px = (double)width * height;
    int hd = 0;
    for (int t = 0; t < 64; t++) hd += abs(ha[t] - hb[t]);
    return hd / (2 * px) > PNMF_CUT_HIST && (double)sad / px > PNMF_CUT_PIXEL;
}

int pnmf_encoder_push(PnmfEncoder *e, const uint8_t *gray, ptrdiff_t stride)
{
    if (e->failed) return e->failed;
    if (e->finished || stride < e->width) return PNMF_ERR_ARG;
    if (e->frame_count >= PNMF_MAX_FRAMES) return fail(e, PNMF_ERR_LIMIT, "too many frames");
    if (e->s.scene_cut && e->frame_count - e->last_cut >= PNMF_CUT_MIN_GAP &&
        scene_cut(e->last_gray, gray, stride, e->width, e->height)) {
        e->scene_cuts++;
        pnmf_log(&e->s.logger, PNMF_LOG_INFO, "scene cut before frame %d", e->frame_count);
        if (e->nbuf) PNMF_CHECK(encode_window(e)); /* the window ends before the cut */
        e->last_cut = e->frame_count; /* after it: that window may have started at the last cut */
        e->probe_skips = 0; /* a new scene: parts may pay in it, probe again */
    }
    if (e->s.scene_cut)
        for (int y = 0; y < e->height; y++) memcpy(e->last_gray + (size_t)y * e->width, gray + y * stride, e->width);
    pnmf_layout_from_frame(e->s.shift_model, e->width, e->height, gray, stride,
                           e->frames + (size_t)e->nbuf * e->nv);
    e->nbuf++;
    e->frame_count++;
    if (e->nbuf == e->s.window) return encode_window(e);
    return 0;
}

int pnmf_encoder_finish(PnmfEncoder *e)
{
    if (e->failed) return e->failed;
    if (e->finished) return PNMF_ERR_ARG;
    if (e->frame_count == 0) return fail(e, PNMF_ERR_ARG, "no frames to encode");
    if (e->nbuf) PNMF_CHECK(encode_window(e));
    int ret = pnmf_container_writer_finish(e->cw, (uint32_t)e->frame_count, e->err, sizeof(e->err));
    if (ret < 0) return fail(e, ret, "cannot finish the file");
    e->finished = 1;
    return 0;
}

void pnmf_encoder_stats(const PnmfEncoder *e, PnmfEncStats *st)
{
    st->frames = e->frame_count - e->nbuf;
    st->windows = e->windows;
    st->bytes = e->cw ? pnmf_container_writer_bytes(e->cw) : 0;
    st->sse = e->sse;
    st->fit_objective = e->objective;
    st->seconds_probe = e->t_probe, st->seconds_fit = e->t_fit, st->seconds_residual = e->t_residual;
    st->seconds_write = e->t_write, st->seconds_total = e->t_total;
    st->scene_cuts = e->scene_cuts;
    st->carried = e->carried;
    st->rc_levels = e->rc_level_windows;
    st->fits_stopped = e->fits_stopped;
    st->repeated = e->repeated;
    const double px = (double)st->frames * e->nv;
    st->psnr = px > 0 && e->sse > 0 ? 10 * log10(255.0 * 255.0 * px / e->sse) : 999.0;
}

const char *pnmf_encoder_errmsg(const PnmfEncoder *e) { return e->err; }

void pnmf_encoder_destroy(PnmfEncoder **pe)
{
    PnmfEncoder *e = *pe;
    if (!e) return;
    pnmf_container_writer_close(&e->cw);
    pnmf_fitter_close(&e->ft);
    pnmf_free(e->frames);
    pnmf_free(e->A);
    pnmf_free(e->W);
    pnmf_free(e->Wq);
    pnmf_free(e->H);
    pnmf_free(e->Wtry);
    pnmf_free(e->Hsave);
    pnmf_free(e->rec);
    pnmf_free(e->seen);
    for (int i = 0; i < 2; i++) {
        ResBufs *b = &e->rb[i];
        pnmf_free(b->acc), pnmf_free(b->P), pnmf_free(b->Pp), pnmf_free(b->D);
        for (int t = 0; t < PNMF_RES_REFS; t++) pnmf_free(b->ref[t]);
    }
    pnmf_free(e->lastP);
    pnmf_free(e->weights);
    pnmf_free(e->last_gray);
    pnmf_model_free(&e->last);
    pnmf_model_free(&e->alt);
    for (int t = 0; t < PNMF_RES_REFS; t++) {
        pnmf_free(e->lastRef[t]);
    }
    pnmf_freep(pe);
}
