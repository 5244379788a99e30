/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The public entry points of pnmf/fit.h: check the arguments, lay the
 * frames out on the fitter's torus (rows x cols = height x width for the
 * torus model, 1 x n of the column-stacked frame for the vector model),
 * dispatch to permnmf.c / twolevel.c, and lay the components back out.
 */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "permnmf.h"
#include "pnmf/fit.h"
#include "twolevel.h"

#define FIT_MAX_PIXELS (1 << 22)
#define FIT_MAX_FRAMES 1024
#define FIT_MAX_K      255

void pnmf_fit_default_settings(PnmfFitSettings *s)
{
    if (!s) return;
    memset(s, 0, sizeof(*s));
    s->shift_model = PNMF_SHIFT_TORUS;
    s->k = 2;
    s->algo = PNMF_ALGO_IMPROVED;
    s->iterations = 50;
    s->inner_iters = 10;
    s->restarts = 1;
    s->seed = 1;
    s->tol = 1e-4;
    s->threads = 1;
}

void pnmf_twolevel_default_settings(PnmfTwoLevelSettings *s)
{
    if (!s) return;
    memset(s, 0, sizeof(*s));
    pnmf_fit_default_settings(&s->fit);
    s->K = 6;
    s->k = 3;
    s->drop = 0.05f;
}

/* ---- shifts in image coordinates ---------------------------------------- */

static int valid_model(int model) { return model == PNMF_SHIFT_TORUS || model == PNMF_SHIFT_VECTOR; }

static int valid_size(int width, int height)
{
    return width >= 1 && height >= 1 && (long long)width * height <= FIT_MAX_PIXELS;
}

static int mod(long long a, long long n)
{
    long long r = a % n;
    return (int)(r < 0 ? r + n : r);
}

int32_t pnmf_fit_shift_make(int shift_model, int width, int height, int dy, int dx)
{
    if (!valid_model(shift_model) || !valid_size(width, height)) return 0;
    if (shift_model == PNMF_SHIFT_TORUS) return mod(dy, height) * width + mod(dx, width);
    return mod((long long)dx * height + dy, (long long)width * height);
}

void pnmf_fit_shift_dydx(int shift_model, int width, int height, int32_t p, int *dy, int *dx)
{
    int y = 0, x = 0;
    if (valid_model(shift_model) && valid_size(width, height)) {
        p = mod(p, (long long)width * height);
        if (shift_model == PNMF_SHIFT_TORUS) y = p / width, x = p % width;
        else y = p % height, x = p / height;
    }
    if (dy) *dy = y;
    if (dx) *dx = x;
}

int32_t pnmf_fit_shift_compose(int shift_model, int width, int height, int32_t a, int32_t b)
{
    if (!valid_model(shift_model) || !valid_size(width, height)) return 0;
    if (shift_model == PNMF_SHIFT_VECTOR) return mod((long long)a + b, (long long)width * height);
    int ay, ax, by, bx;
    pnmf_fit_shift_dydx(shift_model, width, height, a, &ay, &ax);
    pnmf_fit_shift_dydx(shift_model, width, height, b, &by, &bx);
    return pnmf_fit_shift_make(shift_model, width, height, ay + by, ax + bx);
}

void pnmf_fit_shift_add(int shift_model, int width, int height, float *dst, const float *src,
                        float r, int32_t p)
{
    if (!dst || !src || !valid_model(shift_model) || !valid_size(width, height)) return;
    const int n = width * height;
    int dy, dx;
    pnmf_fit_shift_dydx(shift_model, width, height, p, &dy, &dx);
    if (shift_model == PNMF_SHIFT_TORUS) {
        for (int y = 0; y < height; y++) {
            const int ty = (y + dy) % height;
            for (int x = 0; x < width; x++)
                dst[ty * width + (x + dx) % width] += r * src[y * width + x];
        }
    } else {
        p = mod(p, n);
        for (int x = 0; x < width; x++)
            for (int y = 0; y < height; y++) {
                int q = x * height + y + p; /* the column-stacked index, moved by p */
                if (q >= n) q -= n;
                dst[(q % height) * width + q / height] += r * src[y * width + x];
            }
    }
}

/* ---- layout ------------------------------------------------------------- */

static void torus_size(int model, int width, int height, int *rows, int *cols)
{
    *rows = model == PNMF_SHIFT_VECTOR ? 1 : height;
    *cols = model == PNMF_SHIFT_VECTOR ? width * height : width;
}

/* image (row-major) -> fitter layout, count images */
static void to_layout(int model, int width, int height, const float *img, float *lay, int count)
{
    const size_t n = (size_t)width * height;
    for (int c = 0; c < count; c++, img += n, lay += n) {
        if (model == PNMF_SHIFT_TORUS) {
            memcpy(lay, img, n * sizeof(float));
            continue;
        }
        for (int y = 0; y < height; y++)
            for (int x = 0; x < width; x++) lay[(size_t)x * height + y] = img[(size_t)y * width + x];
    }
}

static void from_layout(int model, int width, int height, const float *lay, float *img, int count)
{
    const size_t n = (size_t)width * height;
    for (int c = 0; c < count; c++, img += n, lay += n) {
        if (model == PNMF_SHIFT_TORUS) {
            memcpy(img, lay, n * sizeof(float));
            continue;
        }
        for (int y = 0; y < height; y++)
            for (int x = 0; x < width; x++) img[(size_t)y * width + x] = lay[(size_t)x * height + y];
    }
}

/* ---- argument checks ---------------------------------------------------- */

static int check_settings(const PnmfFitSettings *s, int check_k)
{
    if (!valid_model(s->shift_model) || !valid_size(s->width, s->height)) return PNMF_ERR_ARG;
    if (check_k && (s->k < 1 || s->k > FIT_MAX_K)) return PNMF_ERR_ARG;
    if (s->algo != PNMF_ALGO_PAPER && s->algo != PNMF_ALGO_IMPROVED) return PNMF_ERR_ARG;
    if (s->iterations < 1 || s->iterations > 10000) return PNMF_ERR_ARG;
    if (s->inner_iters < 1 || s->inner_iters > 1000) return PNMF_ERR_ARG;
    if (s->restarts < 1 || s->restarts > 1000) return PNMF_ERR_ARG;
    if (!(s->tol >= 0 && s->tol < 1)) return PNMF_ERR_ARG;
    if (s->threads < 1 || s->threads > 64) return PNMF_ERR_ARG;
    for (size_t i = 0; i < sizeof(s->reserved); i++)
        if (s->reserved[i]) return PNMF_ERR_ARG;
    return 0;
}

/* Frames must be finite and nonnegative (the data of an NMF). */
static int check_frames(const float *A, int m, size_t n)
{
    if (!A || m < 1 || m > FIT_MAX_FRAMES) return PNMF_ERR_ARG;
    for (size_t q = 0; q < (size_t)m * n; q++)
        if (!(A[q] >= 0) || !isfinite(A[q])) return PNMF_ERR_ARG;
    return 0;
}

static PnmfFitParams fit_params(const PnmfFitSettings *s, int k, uint64_t seed)
{
    PnmfFitParams p;
    memset(&p, 0, sizeof(p));
    p.k = k;
    p.algo = s->algo;
    p.iterations = s->iterations;
    p.inner_iters = s->inner_iters;
    p.restarts = s->restarts;
    p.seed = seed;
    p.tol = s->tol;
    return p;
}

static void info_from_stats(PnmfFitInfo *info, const PnmfFitStats *st)
{
    info->objective = st->objective;
    info->iterations = st->iterations;
    info->best_restart = st->best_restart;
}

/* ---- entry points ------------------------------------------------------- */

int pnmf_fit(const PnmfFitSettings *s, const float *frames, int m, float *W, PnmfFitAtom *H,
             PnmfFitInfo *info)
{
    if (!s || !W || !H) return PNMF_ERR_ARG;
    PNMF_CHECK(check_settings(s, 1));
    const size_t n = (size_t)s->width * s->height;
    PNMF_CHECK(check_frames(frames, m, n));
    int rows, cols;
    torus_size(s->shift_model, s->width, s->height, &rows, &cols);
    const int k = s->k;
    float *A = pnmf_malloc_array((size_t)m * n, sizeof(float));
    float *Wl = pnmf_malloc_array((size_t)k * n, sizeof(float));
    PnmfAtom *Hl = pnmf_malloc_array((size_t)m * k, sizeof(PnmfAtom));
    PnmfFitter *ft = NULL;
    int ret = PNMF_ERR_NOMEM;
    if (!A || !Wl || !Hl) goto done;
    to_layout(s->shift_model, s->width, s->height, frames, A, m);
    if ((ret = pnmf_fitter_open(&ft, rows, cols, m, k, s->threads)) < 0) goto done;
    if ((ret = pnmf_fitter_set_frames(ft, A, m)) < 0) goto done;
    const PnmfFitParams p = fit_params(s, k, s->seed);
    PnmfFitStats st;
    memset(&st, 0, sizeof(st));
    if ((ret = pnmf_fitter_fit(ft, &p, Wl, Hl, &st)) < 0) goto done;
    from_layout(s->shift_model, s->width, s->height, Wl, W, k);
    for (size_t q = 0; q < (size_t)m * k; q++) H[q] = (PnmfFitAtom){ Hl[q].r, Hl[q].p };
    if (info) info_from_stats(info, &st);
done:
    pnmf_fitter_close(&ft);
    pnmf_free(A);
    pnmf_free(Wl);
    pnmf_free(Hl);
    return ret;
}

void pnmf_twolevel_free(PnmfTwoLevelResult **pres)
{
    if (!pres || !*pres) return;
    PnmfTwoLevelResult *r = *pres;
    pnmf_free(r->W1);
    pnmf_free(r->H1);
    pnmf_free(r->W);
    pnmf_free(r->H2);
    pnmf_free(r->frame_start);
    pnmf_free(r->entries);
    pnmf_freep(pres);
}

/* ||A - W <> (H2^T <> H1^T)||^2 from the entries, in image coordinates. */
static double combined_objective(const PnmfTwoLevelResult *r, const float *A, float *rec)
{
    const size_t n = (size_t)r->width * r->height;
    double f = 0;
    for (int j = 0; j < r->m; j++) {
        memset(rec, 0, n * sizeof(float));
        for (int t = r->frame_start[j]; t < r->frame_start[j + 1]; t++) {
            const PnmfTwoLevelEntry *e = &r->entries[t];
            pnmf_fit_shift_add(r->shift_model, r->width, r->height, rec, r->W + e->component * n,
                               e->r, e->p);
        }
        for (size_t x = 0; x < n; x++) {
            const double d = (double)A[j * n + x] - rec[x];
            f += d * d;
        }
    }
    return f;
}

int pnmf_twolevel(const PnmfTwoLevelSettings *s, const float *frames, int m,
                  PnmfTwoLevelResult **out)
{
    if (!out) return PNMF_ERR_ARG;
    *out = NULL;
    if (!s) return PNMF_ERR_ARG;
    PNMF_CHECK(check_settings(&s->fit, 0));
    if (s->K < 1 || s->K > FIT_MAX_K || s->k < 1 || s->k > s->K) return PNMF_ERR_ARG;
    if (!(s->drop >= 0 && s->drop <= 1)) return PNMF_ERR_ARG;
    for (size_t i = 0; i < sizeof(s->reserved); i++)
        if (s->reserved[i]) return PNMF_ERR_ARG;
    const int model = s->fit.shift_model, width = s->fit.width, height = s->fit.height;
    const size_t n = (size_t)width * height;
    PNMF_CHECK(check_frames(frames, m, n));
    const int K = s->K, k = s->k;
    int rows, cols;
    torus_size(model, width, height, &rows, &cols);

    PnmfTwoLevelResult *r = pnmf_calloc(1, sizeof(*r));
    float *A = pnmf_malloc_array((size_t)m * n, sizeof(float));
    float *W1l = pnmf_malloc_array((size_t)K * n, sizeof(float));
    float *Wl = pnmf_malloc_array((size_t)k * n, sizeof(float));
    PnmfAtom *H1l = pnmf_malloc_array((size_t)m * K, sizeof(PnmfAtom));
    PnmfAtom *H2l = pnmf_malloc_array((size_t)K * k, sizeof(PnmfAtom));
    float *rec = pnmf_malloc_array(n, sizeof(float));
    int ret = PNMF_ERR_NOMEM;
    if (!r || !A || !W1l || !Wl || !H1l || !H2l || !rec) goto fail;
    r->width = width, r->height = height, r->shift_model = model;
    r->m = m, r->K = K, r->k = k;
    r->W1 = pnmf_malloc_array((size_t)K * n, sizeof(float));
    r->H1 = pnmf_malloc_array((size_t)m * K, sizeof(PnmfFitAtom));
    r->W = pnmf_malloc_array((size_t)k * n, sizeof(float));
    r->H2 = pnmf_malloc_array((size_t)K * k, sizeof(PnmfFitAtom));
    r->frame_start = pnmf_malloc_array((size_t)m + 1, sizeof(int));
    r->entries = pnmf_malloc_array((size_t)m * K * k, sizeof(PnmfTwoLevelEntry));
    if (!r->W1 || !r->H1 || !r->W || !r->H2 || !r->frame_start || !r->entries) goto fail;

    to_layout(model, width, height, frames, A, m);
    const PnmfFitParams p1 = fit_params(&s->fit, K, s->fit.seed);
    const PnmfFitParams p2 = fit_params(&s->fit, k, s->fit.seed + 1);
    PnmfFitStats st1, st2;
    memset(&st1, 0, sizeof(st1));
    memset(&st2, 0, sizeof(st2));
    ret = pnmf_twolevel_run(rows, cols, A, m, &p1, &p2, s->drop, s->fit.threads, W1l, H1l, Wl, H2l,
                            &r->kept, &st1, &st2);
    if (ret < 0) goto fail;
    /* a shift on the fitter's torus is the shift of the same number in the
     * public convention for both models, so shifts pass through */
    ret = pnmf_twolevel_combine(rows, cols, m, K, k, H1l, H2l, r->frame_start, r->entries);
    if (ret < 0) goto fail;
    r->n_entries = ret;
    from_layout(model, width, height, W1l, r->W1, K);
    from_layout(model, width, height, Wl, r->W, k);
    for (size_t q = 0; q < (size_t)m * K; q++) r->H1[q] = (PnmfFitAtom){ H1l[q].r, H1l[q].p };
    for (size_t q = 0; q < (size_t)K * k; q++) r->H2[q] = (PnmfFitAtom){ H2l[q].r, H2l[q].p };
    info_from_stats(&r->level1, &st1);
    info_from_stats(&r->level2, &st2);
    r->objective = combined_objective(r, frames, rec);
    *out = r;
    ret = 0;
    goto done;
fail:
    pnmf_twolevel_free(&r);
done:
    pnmf_free(A);
    pnmf_free(W1l);
    pnmf_free(Wl);
    pnmf_free(H1l);
    pnmf_free(H2l);
    pnmf_free(rec);
    return ret;
}
