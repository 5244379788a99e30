/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The encoder's state and the steps of its window loop, shared by its
 * files: encode.c (the loop), enc_model.c (carry, probe, fit, keep),
 * enc_quant.c (the fitted model quantized), enc_rate.c (the residual
 * step chosen), enc_residual.c (the residual layer coded, the references
 * updated). Private to the library.
 */
#ifndef PNMF_ENC_INTERNAL_H
#define PNMF_ENC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "container.h"
#include "log.h"
#include "model.h"
#include "palette_enc.h"
#include "permnmf.h"
#include "pnmf/pnmf.h"
#include "ratectl.h"
#include "residual_search.h"
#include "sprite_find.h"
#include "tuning.h"

/* What coding the residual layer of a window works in: the model frames
 * j, j-1, the decoded frame j, the decoded frames j-1, j-2, ... and the
 * diamond product's accumulator. */
/* A torus and the frame it shows (PnmfEncoder.geo). */
typedef struct EncGeometry {
    int rows, cols, vis_rows, vis_cols;
    size_t n;
} EncGeometry;

typedef struct ResBufs {
    uint8_t *P, *Pp, *D;
    uint8_t *B, *mark;        /* the sprite layer's background, a scratch of zeros (sprite.h) */
    PnmfSpriteDict dict;      /* the sprite dictionary, its new poses cut from this coding's frames */
    uint8_t *ref[PNMF_RES_REFS];
    uint8_t *wref;            /* window flags bit 18: ref weighted, PNMF_RES_REFS frames (at the first use) */
    uint8_t *key0;            /* a key window's frame 0 as this coding decodes it (window flags bit 21) */
    int64_t *acc;
} ResBufs;

struct PnmfEncoder {
    /* settings and geometry */
    PnmfEncSettings s;
    int width, height, rows, cols, vis_rows, vis_cols;
    int in_width, in_height;  /* the frames pushed: width x height, or twice that with s.half */
    uint8_t *half_in;         /* with s.half: the frame pushed, scaled down (pnmf_downsample2()) */
    uint8_t *half_src;        /* with s.half: the window's frames as pushed, in e->frames' order */
    uint8_t *half_up;         /* with s.half: a decoded frame scaled up, then a frame of scratch */
    int32_t *half_tmp;        /* with s.half: the scaling's rows */
    double half_sse;          /* with s.half: the squared error of the frames scaled up against half_src */
    /* PNMF_HALF_AUTO: the frames held for the half-size trial until it
     * has them (pending); the encoder is made after it (encode.c) */
    int pending, pend_n, pend_cap, pend_w, pend_h, pend_fps[2];
    PnmfIO pend_io;
    uint8_t *pend_frames;
    int64_t *pend_dur;
    size_t n, nv;             /* torus samples, frame pixels */
    int w_step, r_step;       /* the model's quantizer steps (at model_q) */
    int model_q;              /* the -q the model is fitted, quantized and weighed at (model_quality) */
    PnmfContainerWriter *cw;

    /* the window being coded */
    uint8_t *frames;          /* window x n, layout order */
    int nbuf, frame_count;    /* frames buffered, frames pushed */
    int continues;            /* the window being coded continues the previous one */
    int more;                 /* a window of the same key period may follow it (encode_window's caller) */
    double spr_credit;        /* bytes its sprite layer's family is credited with (enc_sprite.c, dict_credit()) */
    uint8_t *weights;         /* its block weights (pnmf_window_weights), made once a window */
    uint8_t *weights_exact;   /* the same without the moved blocks' (an exact coding's), or NULL: weights */
    int subpel;               /* its shifted blocks move by quarter samples (window flags bit 6) */
    int sharp;                /* ... interpolated by the 6-tap filter (window flags bit 20, sharp_trial()) */
    int warp;                 /* ... the previous prediction along each frame's warp (window flags bit 23, warp_trial()) */
    double key_w;             /* its first frame's propagation weight (enc_prop.h), 0: not measured */
    int order;                /* its frames are coded out of order in groups of this many (window
                               * flags bit 19, enc_order.c; e->frames hold them in coding order), 0: not */
    uint8_t *tf_source;       /* its first frame's source where filter_first() filtered it, else unused */
    int tf_on;                /* filter_first() filtered its first frame */
    PnmfWindowModel alt;      /* try_repeats()'s model, for the keep step to weigh */
    int alt_extra;            /* its repeated entries */

    /* the fit's work space, on the fit's torus (geo[1]) */
    PnmfFitter *ft;
    float *A, *W, *Wq, *Wtry; /* frames on the torus, components, quantized, a trial */
    EncGeometry geo[2];       /* the frame's torus, the fit's: fit_d times coarser in each direction */
    int fit_d;                /* 1: the fit works on the frame's torus */
    int fit_on;               /* rows, cols, vis_*, n are the fit's torus (enc_fit_geometry) */
    PnmfAtom *H, *Hsave;
    uint8_t *rec, *seen;
    int probing;              /* fitting the probe's model (probe_model) */
    int probe_skips;          /* windows left to code without a model, unprobed */

    /* the sprite layer's search (enc_sprite.c) */
    PnmfSpriteDict sfound;    /* every pose found so far (ids: sprite_find's) */
    int *slot;                /* per found pose, its id in sdict, -1 if the decoder lacks it */
    int slot_cap;
    int *found_seen;          /* per found pose, the last frame (of the clip) that showed it, -1: none */
    PnmfSpriteDict wdict;     /* sdict as the window being coded will leave it */

    /* references: what the decoder holds after the previous window */
    ResBufs rb[3];            /* the residual layer's, one per coding run at once (the third: the sprite step's) */
    uint8_t *lastP, *lastRef[PNMF_RES_REFS]; /* rb's after the previous window */
    uint8_t *key0;            /* the last key window's decoded frame 0 (window flags bit 21) */
    uint8_t *lastB;           /* the sprite background after the previous window */
    PnmfSpriteDict sdict;     /* the sprite dictionary as the decoder holds it */
    int last_avail;           /* of lastRef, how many hold frames since the key window */
    int last_key;             /* first frame of the last key window */
    int last_rc;              /* the last window's residual levels were range-coded */
    PnmfWindowModel last;     /* the last model (pnmf_model_track), as the decoder keeps it */
    uint8_t *last_gray;       /* the frame pushed last, width x height (scene cuts) */
    int last_hist[64];        /* and its 64-bin gray-level histogram */
    int last_cut;             /* the first frame after the last scene cut (a window starting there is a key window) */
    uint8_t *cut_gray;        /* the frame before a cut held until the next frame tells a cut from a flash */
    int cut_hist[64];         /* and its histogram */
    int cut_held;             /* 1: the frame pushed last is a cut from cut_gray's, the next frame decides */

    /* statistics (pnmf_encoder_stats) */
    int windows, scene_cuts;
    int carried;              /* windows that carried the last model's components over */
    int rc_level_windows;     /* windows whose residual levels were range-coded */
    int repeated;             /* entries added by try_repeats() */
    int fits_stopped;         /* full fits stopped by their check (check_fit) */
    double sse, objective;
    double t_probe, t_fit, t_residual, t_write, t_total; /* seconds by stage */
    double t_sprites;         /* of t_residual, the pose search */
    int sprite_windows;       /* windows written with a sprite layer */
    int sprite_every_set;     /* the tests': code every distinct pose set (enc_sprite.c), none skipped */

    int failed, finished;
    char err[256];
};

/* One window on its way through the steps of encode_window(). */
typedef struct EncWindow {
    int m;                    /* frames */
    int step16;               /* the residual step the model's decisions weigh at (model_q's) */
    PnmfWindowModel md;       /* the window as it will be written */
    PnmfWindowModel bare;     /* the same frames over no model */
    double sse;               /* md's squared error, once its residual layer is coded */
    double bare_sse;          /* bare's */
    size_t bare_bytes;        /* > 0: bare holds the residual layer over no model, this many bytes */
    int carried;              /* md carries the last model's components, coded and kept */
    int drop;                 /* the probe found no model worth fitting */
    int sprites;              /* md's model is a sprite layer, coded and kept */
    int unrepeated;           /* the sprite search's repeat gate found no sprite animation */
    int no_floor;             /* the pick goes without -q PNMF_PICK_FLOOR's coding (pnmf_window_keep) */
    int *spr_new;             /* the found poses md's layer sends, in order */
    int spr_nnew;
    PnmfWindowModel floor_bare; /* a dropped sprite layer's coding over no model at the pick's first step */
    double floor_sse;         /* its squared error */
    double pf_dsse;           /* window flags bit 22: what the restoration filter adds to the squared error
                               * of the frames shown (negative) */
} EncWindow;

/* Whether two codings of the residual layer run at once, on two threads
 * (the second set of buffers also serves the sprite step's second coding). */
static inline int enc_two_threads(const PnmfEncoder *e) { return e->s.threads > 1 && e->rb[1].P; }

static inline double enc_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Whether choose_step() picks each window's coding among the same codings
 * for every -q (those of -q PNMF_PICK_FLOOR and coarser from the floor up,
 * of the floor and finer below it): with the residual layer, without
 * --target-psnr. There the model is the same for every -q too: fitted,
 * quantized and weighed as at -q PNMF_MODEL_Q, and kept or not per coding
 * within the pick, so a window with a model keeps -q's order as one
 * without does. */
static inline int enc_picks(const PnmfEncSettings *s) { return s->residual && s->target_psnr <= 0; }

/* Whether a window coded lossless may have its pixel levels coded with
 * the samples' contexts (format 9, lossless.h): below -q PNMF_PICK_FLOOR,
 * where the fine pick may keep a lossless coding; those files need a v9
 * reader. */
static inline int enc_lossless_ctx(const PnmfEncSettings *s) { return enc_picks(s) && s->quality < PNMF_PICK_FLOOR; }

/* Whether the pick starts the window (its frames in e->frames) at the
 * grid step at or below -q's instead of -q PNMF_PICK_FLOOR's: from -q
 * PNMF_PICK_NO_FLOOR_Q up, on a window that does not look like a captured
 * screen. There the sprite step weighs the layer and its pose sets at
 * that step, whose codings the pick then holds and the tie rule weighs
 * the two families by (choose_step()), and a window without components
 * goes without -q PNMF_PICK_FLOOR's coding, which on filmed and rendered
 * content neither wins nor bounds the pick: two codings of the window at
 * -q 16's step fewer. On a screen the layer's blocks are kept or dropped
 * whole, the family that costs less changes from step to step and exact
 * areas make -q 16's coding a bound, so it keeps the floor. Without the
 * sprite layer (--no-sprites) a window keeps it as well: no repeat gate
 * sees it (pnmf_window_keep's no_floor). */
/* Whether n frames (rows x cols, nv samples apart) look like a captured
 * screen (pnmf_pal_screen_like()): by the first frame, or where that is of
 * one gray level (a fade from black, whose first frames have few levels in
 * every block), by the last. */
static inline int enc_frames_screen_like(const uint8_t *frames, int n, size_t nv, int rows, int cols)
{
    const uint8_t *f = frames;
    size_t q = 1;
    while (q < nv && f[q] == f[0]) q++;
    if (q == nv && n > 1) f += (size_t)(n - 1) * nv;
    return pnmf_pal_screen_like(f, rows, cols);
}

/* The same for the window being coded. */
static inline int enc_screen_like(const PnmfEncoder *e)
{
    return enc_frames_screen_like(e->frames, e->nbuf, e->nv, e->vis_rows, e->vis_cols);
}

static inline int enc_pick_from_lo(const PnmfEncoder *e)
{
    return enc_picks(&e->s) && e->s.sprites && e->s.quality >= PNMF_PICK_NO_FLOOR_Q && !enc_screen_like(e);
}

int pnmf_pick_lo_quality(int q); /* enc_rate.c */

/* The first frames of a window of m on which the step search weighs a
 * finer step's coding against the one above it before coding it on
 * (enc_rate.c); 0: none. */
static inline int enc_pick_prefix(int m) { return m >= PNMF_PICK_PREFIX_MIN ? m / PNMF_PICK_PREFIX_DIV : 0; }

/* The first step the pick codes a window at (step16: the model's, where
 * no pick runs): -q PNMF_PICK_FLOOR's, or at -q 0, which codes only its
 * own, the lossless step, or the grid step at or below -q's where
 * enc_pick_from_lo(). */
static inline int enc_pick_first_step(const PnmfEncoder *e, int step16)
{
    if (!enc_picks(&e->s)) return step16;
    if (enc_pick_from_lo(e)) return pnmf_residual_step(pnmf_pick_lo_quality(e->s.quality));
    return pnmf_residual_step(e->s.quality ? PNMF_PICK_FLOOR : 0);
}

/* The -q the model is fitted, quantized and weighed at. */
static inline int enc_model_quality(const PnmfEncSettings *s) { return enc_picks(s) ? PNMF_MODEL_Q : s->quality; }

/* The residual layer's rate-distortion weight: squared error per bit, for
 * the step s (gray levels) of -q. dD/dR of a uniform quantizer at high
 * rate is 2 ln 2 s^2 / 12. At the finest step (-q 0, and the lossless
 * first frame tried at every -q) an error of one gray level outweighs a
 * thousand bits: the coding is lossless. */
static inline double enc_residual_lambda(int step16)
{
    if (step16 <= PNMF_RES_MIN_STEP) return PNMF_LOSSLESS_LAMBDA;
    const double s = step16 / 16.0;
    return 2 * 0.6931 * s * s / 12;
}

/* The same for the encoder's -q: what a bit of the model is worth. */
static inline double enc_quality_lambda(const PnmfEncoder *e)
{
    const double lambda = enc_residual_lambda(pnmf_residual_step(e->model_q));
    /* on the fit's coarser torus a squared error stands for fit_d^2 times as much in the frame */
    return e->fit_on ? lambda / ((double)e->fit_d * e->fit_d) : lambda;
}

/* The steps of encode_window(), in order. Each returns 0 or a PNMF_ERR_*;
 * a step with nothing to do for this window returns 0 at once. */
int pnmf_window_sprites(PnmfEncoder *e, EncWindow *w);     /* enc_sprite.c */
int pnmf_window_carry(PnmfEncoder *e, EncWindow *w);       /* enc_model.c */
int pnmf_window_probe(PnmfEncoder *e, EncWindow *w);       /* enc_model.c */
int pnmf_window_fit(PnmfEncoder *e, EncWindow *w);         /* enc_model.c */
int pnmf_window_keep(PnmfEncoder *e, EncWindow *w);        /* enc_model.c */
int pnmf_window_choose_step(PnmfEncoder *e, EncWindow *w); /* enc_rate.c */
/* enc_model.c: a window with one empty component (pnmf_window_keep) is
 * written with -k's empty components where the container stores that in
 * fewer bytes (the same frames decoded). */
int pnmf_window_empty_k(PnmfEncoder *e, EncWindow *w);
int pnmf_window_update_refs(PnmfEncoder *e, EncWindow *w); /* enc_residual.c */
/* enc_residual.c: the window's frames as a reader shows them before a
 * restoration filter (the frame size, in frame order of coding), each
 * passed to fn with its source (what the PSNR is measured against),
 * decoded from w->md in e->rb[0] as pnmf_window_update_refs() decodes
 * them, the encoder's state left as it is; fn's failure ends it. Only for a
 * window with a residual layer and without a sprite layer (PNMF_ERR_ARG). */
typedef int (*PnmfShownFn)(void *ctx, const uint8_t *shown, const uint8_t *src);
int pnmf_window_shown(PnmfEncoder *e, EncWindow *w, PnmfShownFn fn, void *ctx);
/* enc_pfilter.c: window flags bit 22, the restoration filter of the
 * window's frames shown, where it pays (fitted to the frames pnmf_window_shown() makes) */
int pnmf_window_pfilter(PnmfEncoder *e, EncWindow *w);
/* enc_sprite.c: after the window is written, the decoder's dictionary. */
int pnmf_window_sprites_commit(PnmfEncoder *e, EncWindow *w);

/* enc_model.c: the fit's torus. enc_fit_choose() sets geo and fit_d from
 * the frame's geometry (before the fit's buffers are sized by geo[1]);
 * enc_fit_geometry(e, 1) makes rows, cols, vis_rows, vis_cols and n the
 * fit's torus, enc_fit_geometry(e, 0) the frame's again. */
void enc_fit_choose(PnmfEncoder *e);
void enc_fit_geometry(PnmfEncoder *e, int on);

/* enc_quant.c: the fitted model (e->W, e->H) quantized into md, closed
 * loop; the model with repeated entries tried into e->alt. */
int pnmf_window_quantize(PnmfEncoder *e, PnmfWindowModel *md, int m);
int pnmf_window_add_entries(PnmfEncoder *e, PnmfWindowModel *md, int m, const float *Wq, uint8_t *used);
int pnmf_window_try_repeats(PnmfEncoder *e, PnmfWindowModel *md, int m, const float *W0, const PnmfAtom *H0);

/* enc_half.c: whether the n frames (w x h each, rows w apart) coded at
 * half size with settings s cost less (squared error against them + lambda
 * * bits at -q's step) than at their size: *half 1 or 0. */
int pnmf_enc_half_pays(const PnmfEncSettings *s, int w, int h, int fps_num, int fps_den, const uint8_t *frames, int n,
                       int *half);
/* Whether the half-size coding (bytes[2], psnr[2]) lies above the line
 * through the full-size codings 0 and 1 (PSNR-Y over the log of the
 * bytes): the curve is concave, so the line beyond them lies above it
 * and the test leans to the full size. */
int pnmf_enc_half_above(const size_t bytes[3], const double psnr[3]);
/* The -q a clip of -q q is coded at at half size: PNMF_HALF_TRIAL_DQ finer. */
int pnmf_enc_half_quality(int q);

/* enc_residual.c: the residual layer and what a coding of the window costs. */
int pnmf_window_weights(PnmfEncoder *e, int m);
/* The gain and offset (w, o) that weigh R (n samples) closest to src
 * (window flags bit 18, pnmf_residual_weigh()), (PNMF_RES_WP_ONE, 0) where
 * they do not lower the SAD by a fade's margin (PNMF_WP_KEEP). */
void pnmf_enc_estimate_weights(const uint8_t *src, const uint8_t *R, size_t n, int16_t wo[2]);
int pnmf_window_code_residual(const PnmfEncoder *e, ResBufs *rb, PnmfWindowModel *md, int m, int step16,
                              double *sse);
/* The same coding as a run that stops after any frame and goes on later
 * with the same result: started (nothing coded), its frames coded up to
 * a frame (run->j: the frames coded, run->sse their squared error), ended
 * (its scratch freed; md keeps the coding). rb is the run's until it ends. */
typedef struct ResRun {
    const PnmfEncoder *e;
    ResBufs *rb;
    PnmfWindowModel *md;
    int m, j, avail, palette, casc16;
    int wp;              /* window flags bit 18: the frames' weights are estimated */
    double lambda, key_lambda, casc_lambda, sse;
    double search_scale; /* the blocks' search weighs a bit this many times the lambdas above */
    uint8_t *weights, *tmp;
} ResRun;
int pnmf_res_run_start(ResRun *run, const PnmfEncoder *e, ResBufs *rb, PnmfWindowModel *md, int m, int step16);
int pnmf_res_run_frames(ResRun *run, int upto);
void pnmf_res_run_end(ResRun *run);
#define PNMF_WINDOW_CODINGS 5 /* varints; range-coded, frame 0's varints; both with sample contexts (at most) */
int pnmf_window_codings(PnmfWindowModel *md, uint8_t *c[PNMF_WINDOW_CODINGS], size_t size[PNMF_WINDOW_CODINGS],
                        int *n, int *rc_from);
int pnmf_window_bytes(const PnmfEncoder *e, PnmfWindowModel *md, int m, size_t *bytes);
int pnmf_window_cost(PnmfEncoder *e, PnmfWindowModel *md, int m, int step16, double *sse, size_t *bytes);
int pnmf_window_costs(PnmfEncoder *e, PnmfWindowModel *md, PnmfWindowModel *bare, int m, int step16,
                      double j[2], double sse[2], size_t *model_bytes, size_t *bare_bytes);
/* The cost of the frames a run has coded (squared error + lambda * 8 *
 * bytes, as pnmf_window_costs() counts them): its model written as if the
 * window ended there; *bytes (unless NULL) the bytes it counts. */
int pnmf_res_run_cost(ResRun *run, double *j, size_t *bytes);

#endif /* PNMF_ENC_INTERNAL_H */
