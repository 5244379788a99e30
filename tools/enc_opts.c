/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "enc_opts.h"

/* What an option's value is. */
enum { K_INT, K_U64, K_FLOAT, K_FLAG, K_CHOICE };

typedef struct Choice {
    const char *name;
    int value;
} Choice;

static const Choice shift_choices[] = {
    { "canvas", PNMF_SHIFT_CANVAS }, { "torus", PNMF_SHIFT_TORUS }, { "vector", PNMF_SHIFT_VECTOR }, { NULL, 0 },
};
static const Choice algo_choices[] = {
    { "improved", PNMF_ALGO_IMPROVED }, { "paper", PNMF_ALGO_PAPER }, { NULL, 0 },
};

/* One option. The range is what the tools accept and say in their errors;
 * pnmf_enc_open() checks the settings again, for every caller. */
typedef struct EncOpt {
    const char *name;  /* the long name, without "--" */
    char letter;       /* the short one, or 0 */
    unsigned char kind;
    unsigned char always;  /* enc_opts_describe() prints it even at its default */
    unsigned omit;     /* the ENC_OPT_* bit that leaves it out, or 0 */
    size_t offset;     /* of the field in PnmfEncSettings */
    long long lo, hi;  /* K_INT, K_U64, K_FLOAT: the range; K_FLAG: the value set */
    const Choice *choices;
    const char *arg;   /* the value's name in the help, or NULL */
    /* The help text: lines after the first start at column 23; "%s" marks
     * where the default goes (a flag: " (default)" when it is the default). */
    const char *help;
} EncOpt;

#define F(field) offsetof(PnmfEncSettings, field)

static const EncOpt table[] = {
    { "quality", 'q', K_INT, 1, ENC_OPT_QUALITY, F(quality), 0, PNMF_MAX_QUALITY, NULL, "N",
      "quantizer 0..64, lower is better and larger (default %s)" },
    { "components", 'k', K_INT, 1, 0, F(components), 0, 255, NULL, "N",
      "components per window, 0..255; 0: no model, the residual\nlayer alone (default %s)" },
    { "window", 'w', K_INT, 1, 0, F(window), 1, 1024, NULL, "N", "frames per window, 1..1024 (default %s)" },
    { "shift", 0, K_CHOICE, 0, 0, F(shift_model), 0, 0, shift_choices, "MODEL",
      "canvas: 2-D shifts on a canvas larger than the frame, so\nparts enter and leave without wrapping; torus: 2-D cyclic\n"
      "shifts of the frame; vector: the paper's 1-D shift of the\ncolumn-stacked frame (default %s)" },
    { "canvas-pad", 0, K_INT, 0, 0, F(canvas_pad), 0, 4096, NULL, "N",
      "canvas: margin added to the height and the width, 0 =\nmax(16, side / 8); sizes round up to factors 2, 3, 5\n(default %s)" },
    { "signed", 0, K_FLAG, 0, 0, F(signed_components), 1, 1, NULL, NULL,
      "components may hold negative pixels, so a part can\ndarken what lies under it (occlusion)%s" },
    { "unsigned", 0, K_FLAG, 0, 0, F(signed_components), 0, 0, NULL, NULL, "nonnegative components, as in the paper%s" },
    { "residual", 0, K_FLAG, 0, 0, F(residual), 1, 1, NULL, NULL,
      "code what the parts miss, per 8x8 block, against the\nmodel, the previous frame or the neighbours%s" },
    { "no-residual", 0, K_FLAG, 0, 0, F(residual), 0, 0, NULL, NULL,
      "the parts alone, as in the paper (implied by --shift vector)%s" },
    { "keyint", 0, K_INT, 0, 0, F(key_interval), 1, 1 << 28, NULL, "N",
      "residual layer: a key window (decodes on its own) at least\nevery N frames; the others predict from the window before\n"
      "(default %s; 1: every window)" },
    { "scenecut", 0, K_FLAG, 0, 0, F(scene_cut), 1, 1, NULL, NULL,
      "a scene cut ends the window, and the next one is a key\nwindow%s" },
    { "no-scenecut", 0, K_FLAG, 0, 0, F(scene_cut), 0, 0, NULL, NULL, "windows of -w frames, whatever the content%s" },
    { "repeats", 0, K_FLAG, 0, 0, F(repeats), 1, 1, NULL, NULL,
      "after the fit, a frame may place a component again where\nthat pays for its bits (the same sprite twice)%s" },
    { "no-repeats", 0, K_FLAG, 0, 0, F(repeats), 0, 0, NULL, NULL,
      "one entry per component and frame, as in the paper%s" },
    { "recentre", 0, K_FLAG, 0, 0, F(recentre), 1, 1, NULL, NULL,
      "after each W step, each component's centre of mass moved to\nthe torus centre, its shifts to match (default: off)%s" },
    { "sprites", 0, K_FLAG, 0, 0, F(sprites), 1, 1, NULL, NULL,
      "each window first looks for opaque sprites, kept in a\ndictionary across windows, and predicts from their composite\nwhere that pays%s" },
    { "no-sprites", 0, K_FLAG, 0, 0, F(sprites), 0, 0, NULL, NULL, "no sprite layer: the components alone%s" },
    { "half-size", 0, K_FLAG, 0, 0, F(half), 1, 1, NULL, NULL,
      "code the frames at half their width and height and scale\nthem up on decoding: fewer bytes at coarse -q on large\nframes, never exact (not with --shift canvas)%s" },
    { "full-size", 0, K_FLAG, 0, 0, F(half), 0, 0, NULL, NULL, "code the frames at their size%s" },
    { "auto-size", 0, K_FLAG, 0, 0, F(half), PNMF_HALF_AUTO, PNMF_HALF_AUTO, NULL, NULL,
      "from -q 35 on, half size where the first 10 frames coded\nboth ways cost less so (default)%s" },
    { "restoration", 0, K_FLAG, 0, 0, F(restoration), 1, 1, NULL, NULL,
      "lossy windows of smooth content are shown through a\nfilter fitted to their frames where it pays%s" },
    { "no-restoration", 0, K_FLAG, 0, 0, F(restoration), 0, 0, NULL, NULL, "frames shown as the residual layer decodes them%s" },
    { "carry", 0, K_FLAG, 0, 0, F(carry), 1, 1, NULL, NULL,
      "a window that continues the one before may reuse the last\nmodel's components, sending only its entries%s" },
    { "no-carry", 0, K_FLAG, 0, 0, F(carry), 0, 0, NULL, NULL, "each window with a model sends its components%s" },
    { "auto-k", 0, K_FLAG, 0, 0, F(auto_k), 1, 1, NULL, NULL,
      "the full fit picks how many components (at most -k): it\ngrows while each new one pays for its bits%s" },
    { "fixed-k", 0, K_FLAG, 0, 0, F(auto_k), 0, 0, NULL, NULL, "the full fit uses -k components, as in the paper%s" },
    { "two-level", 0, K_INT, 0, 0, F(two_level), 1, 255, NULL, "K",
      "the paper's two-level decomposition: K level-1 components,\nthen -k level-2 ones; one part may appear several times in\n"
      "a frame (torus or vector shifts; default: %s)" },
    { "target-psnr", 0, K_FLOAT, 0, 0, F(target_psnr), 10, 99, NULL, "DB",
      "each window's residual step chosen to reach DB (PSNR-Y),\n-q still sets the model's steps (default: %s)" },
    { "algo", 0, K_CHOICE, 0, 0, F(algo), 0, 0, algo_choices, "ALGO",
      "improved: greedy atoms + exact HALS W step; paper: the\npaper's cyclic sweep + projected gradient (default %s)" },
    { "iterations", 0, K_INT, 0, 0, F(iterations), 0, 10000, NULL, "N",
      "ALS iterations per fit, at most, 0..10000 (default %s)" },
    { "inner", 0, K_INT, 0, 0, F(inner_iters), 1, 1000, NULL, "N",
      "sweeps of Multiple Permutation NNLS / PG steps, 1..1000\n(default %s)" },
    { "restarts", 0, K_INT, 0, 0, F(restarts), 1, 1000, NULL, "N",
      "fits per window from different starts, best kept, 1..1000\n(default %s)" },
    { "seed", 0, K_U64, 0, 0, F(seed), 0, 1LL << 62, NULL, "N", "seed of the restarts (default %s)" },
    { "threads", 0, K_INT, 0, ENC_OPT_THREADS, F(threads), 0, 64, NULL, "N",
      "worker threads, 0 = one per core, 0..64; the output is the\nsame for any value (default %s)" },
    { "zstd-level", 0, K_INT, 0, 0, F(zstd_level), 1, 22, NULL, "N", "zstd level 1..22 (default %s)" },
    { "refine", 0, K_INT, 0, 0, F(refine), 0, 100, NULL, "N",
      "passes of W step + requantization + H refit against the\nquantized model, each kept only if it helps, 0..100\n"
      "(default %s)" },
};

#undef F

#define NOPTS ((int)(sizeof(table) / sizeof(table[0])))
/* getopt_long() codes of the long-only options: clear of letters and of
 * the tools' own codes (256 up). */
#define CODE_BASE 0x1000

typedef char table_fits[NOPTS <= ENC_OPTS_MAX ? 1 : -1];

static int code_of(int i) { return table[i].letter ? table[i].letter : CODE_BASE + i; }

static void *field(PnmfEncSettings *s, const EncOpt *e) { return (char *)s + e->offset; }

static long long get_int(const PnmfEncSettings *s, const EncOpt *e)
{
    const void *p = (const char *)s + e->offset;
    return e->kind == K_U64 ? (long long)*(const uint64_t *)p : *(const int *)p;
}

/* The value of e in s as the command line writes it, into buf. */
static const char *value_str(char *buf, size_t len, const PnmfEncSettings *s, const EncOpt *e)
{
    if (e->kind == K_FLOAT) {
        const float v = *(const float *)((const char *)s + e->offset);
        if (v > 0) snprintf(buf, len, "%g", v);
        else snprintf(buf, len, "off");
    } else if (e->kind == K_CHOICE) {
        snprintf(buf, len, "?");
        for (const Choice *c = e->choices; c->name; c++)
            if (c->value == get_int(s, e)) snprintf(buf, len, "%s", c->name);
    } else if (e->kind == K_INT && !strcmp(e->name, "two-level") && get_int(s, e) == 0) {
        snprintf(buf, len, "off");
    } else {
        snprintf(buf, len, "%lld", get_int(s, e));
    }
    return buf;
}

void enc_opts_init(EncOpts *o, unsigned omit)
{
    memset(o, 0, sizeof(*o));
    pnmf_enc_default_settings(&o->s);
    o->omit = omit;
}

void enc_opts_longopts(struct option *dst, const struct option *own, unsigned omit)
{
    int n = 0;
    for (; own && own[n].name; n++) dst[n] = own[n];
    for (int i = 0; i < NOPTS; i++) {
        if (table[i].omit & omit) continue;
        dst[n].name = table[i].name;
        dst[n].has_arg = table[i].kind == K_FLAG ? no_argument : required_argument;
        dst[n].flag = NULL;
        dst[n].val = code_of(i);
        n++;
    }
    memset(&dst[n], 0, sizeof(dst[n]));
}

void enc_opts_optstring(char *dst, size_t len, const char *own, unsigned omit)
{
    size_t n = (size_t)snprintf(dst, len, ":%s", own);
    for (int i = 0; i < NOPTS && n + 3 < len; i++) {
        if (!table[i].letter || (table[i].omit & omit)) continue;
        dst[n++] = table[i].letter;
        if (table[i].kind != K_FLAG) dst[n++] = ':';
        dst[n] = 0;
    }
}

int enc_opts_parse(EncOpts *o, const char *prog, int c, const char *arg)
{
    int i = -1;
    if (c >= CODE_BASE && c < CODE_BASE + NOPTS) i = c - CODE_BASE;
    for (int k = 0; i < 0 && k < NOPTS; k++)
        if (table[k].letter && table[k].letter == c) i = k;
    if (i < 0 || (table[i].omit & o->omit)) return 0;
    const EncOpt *e = &table[i];
    char opt[32];
    snprintf(opt, sizeof(opt), "--%s", e->name);
    void *p = field(&o->s, e);
    switch (e->kind) {
    case K_FLAG:
        *(int *)p = (int)e->lo;
        if (e->offset == offsetof(PnmfEncSettings, residual)) o->residual_set = 1;
        return 1;
    case K_INT:
    case K_U64: {
        long long v;
        if (cli_parse_int(prog, opt, arg, e->lo, e->hi, &v)) return -1;
        if (e->kind == K_U64) *(uint64_t *)p = (uint64_t)v;
        else *(int *)p = (int)v;
        return 1;
    }
    case K_FLOAT: {
        char *end;
        errno = 0;
        const double v = strtod(arg, &end);
        if (errno || end == arg || *end || !(v >= e->lo && v <= e->hi)) {
            fprintf(stderr, "%s: option %s expects a number in [%lld, %lld], got '%s'\n", prog, opt, e->lo, e->hi,
                    arg);
            return -1;
        }
        *(float *)p = (float)v;
        return 1;
    }
    default: /* K_CHOICE */
        for (const Choice *ch = e->choices; ch->name; ch++)
            if (!strcmp(ch->name, arg)) {
                *(int *)p = ch->value;
                return 1;
            }
        fprintf(stderr, "%s: option %s expects ", prog, opt);
        for (const Choice *ch = e->choices; ch->name; ch++)
            fprintf(stderr, "%s%s", ch->name, !ch[1].name ? "" : !ch[2].name ? " or " : ", ");
        fprintf(stderr, ", got '%s'\n", arg);
        return -1;
    }
}

int enc_opts_finish(EncOpts *o, const char *prog)
{
    PnmfEncSettings *s = &o->s;
    if (s->shift_model == PNMF_SHIFT_VECTOR && s->residual) {
        if (o->residual_set) {
            fprintf(stderr, "%s: --residual needs 2-D frames: not with --shift vector\n", prog);
            return -1;
        }
        s->residual = 0;
    }
    if (s->two_level && (s->two_level < s->components || s->shift_model == PNMF_SHIFT_CANVAS)) {
        fprintf(stderr, "%s: --two-level K needs K >= -k (%d) and torus or vector shifts\n", prog, s->components);
        return -1;
    }
    if (s->target_psnr > 0 && !s->residual) {
        fprintf(stderr, "%s: --target-psnr sets the residual layer's step: not with --no-residual or --shift vector\n",
                prog);
        return -1;
    }
    if (s->components == 0 && !s->residual) {
        fprintf(stderr, "%s: -k 0 codes the residual layer alone: not with --no-residual or --shift vector\n", prog);
        return -1;
    }
    return 0;
}

void enc_opts_usage(FILE *f, unsigned omit)
{
    PnmfEncSettings d;
    pnmf_enc_default_settings(&d);
    for (int i = 0; i < NOPTS; i++) {
        const EncOpt *e = &table[i];
        if (e->omit & omit) continue;
        char head[40], def[32];
        if (e->letter) snprintf(head, sizeof(head), "  -%c, --%s %s", e->letter, e->name, e->arg ? e->arg : "");
        else snprintf(head, sizeof(head), "      --%s %s", e->name, e->arg ? e->arg : "");
        fprintf(f, "%-22s ", head);
        if (e->kind == K_FLAG) snprintf(def, sizeof(def), "%s", get_int(&d, e) == e->lo ? " (default)" : "");
        else value_str(def, sizeof(def), &d, e);
        const char *mark = strstr(e->help, "%s");
        for (const char *p = e->help; *p; p++) {
            if (p == mark) {
                fputs(def, f);
                p++;
            } else {
                fputc(*p, f);
                if (*p == '\n') fprintf(f, "%23s", "");
            }
        }
        fputc('\n', f);
    }
}

void enc_opts_describe(char *buf, size_t len, const PnmfEncSettings *s, unsigned omit)
{
    PnmfEncSettings d;
    pnmf_enc_default_settings(&d);
    size_t n = 0;
    buf[0] = 0;
    for (int i = 0; i < NOPTS && n < len; i++) {
        const EncOpt *e = &table[i];
        if (e->omit & omit) continue;
        char v[32], dv[32], name[32];
        if (e->letter) snprintf(name, sizeof(name), "-%c", e->letter);
        else snprintf(name, sizeof(name), "--%s", e->name);
        if (e->kind == K_FLAG) {
            if (get_int(s, e) == e->lo && get_int(&d, e) != e->lo)
                n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? " " : "", name);
        } else if (e->always || strcmp(value_str(v, sizeof(v), s, e), value_str(dv, sizeof(dv), &d, e))) {
            n += (size_t)snprintf(buf + n, len - n, "%s%s %s", n ? " " : "", name, value_str(v, sizeof(v), s, e));
        }
    }
}
