/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pnmf-paper: the two experiments of the paper's section 4, one command
 * each. Draws the data set from the seed, fits as the paper describes
 * (random starts, iter = 10 in Multiple Permutation NNLS and in the W
 * step, repeated until the right components are found), writes a figure
 * like the paper's Figures 1 and 2, and scores the components against the
 * figures it drew. Its last line on stdout is
 *   recovered X/Y min_ncc=0.NNN restarts=R
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "cli_util.h"
#include "paper.h"
#include "pnmf/fit.h"
#include "pnmf/version.h"

static const char *prog = "pnmf-paper";

#define NCC_OK 0.9       /* a figure counts as found at this NCC */
#define COEF_MIN 0.5     /* a placement needs at least half the figure's intensity */
#define DEFAULT_RESTARTS 20
#define DEFAULT_OUT "paper-out"

typedef struct Opts {
    int exp;            /* 1 or 2 */
    uint64_t seed;
    int model, algo;
    int max_restarts;
    int iterations;
    const char *out;    /* NULL: no figure */
    int policy;         /* CLI_OUT_*: an existing figure */
} Opts;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s exp1|exp2 [options]\n"
            "The experiments of the paper's section 4: draw the data set from the seed,\n"
            "fit until the figures are found (or the restart cap), write the figure.\n"
            "  exp1                 a square and a cross in 10 frames of 20x20, k = 2\n"
            "  exp2                 a plane, a tank and a ship, up to 2 copies each, in 20\n"
            "                       frames of 30x30: two-level decomposition K = 6, k = 3\n"
            "  -s, --seed N         seed of the data set and of the starts (default 1)\n"
            "      --shift MODEL    vector (the paper's 1-D shift of the column-stacked\n"
            "                       frame) or torus (2-D shift) (default vector)\n"
            "  -a, --algo ALGO      paper (random start, cyclic sweeps, projected gradient)\n"
            "                       or improved (median/residual start, greedy order, HALS)\n"
            "                       (default paper)\n"
            "  -r, --max-restarts N fits at most (default %d, 1..1000)\n"
            "  -i, --iterations N   ALS iterations per fit at most (default 100, 1..10000)\n"
            "  -o, --out DIR        write DIR/exp1.png or DIR/exp2.png (default %s)\n"
            "      --no-figure      write no figure\n"
            "  -y / -n              overwrite an existing figure / never (default: ask on a\n"
            "                       terminal, else refuse, before the experiment runs)\n"
            "  -h, --help           this help\n"
            "  -V, --version        print the version\n"
            "The last line on stdout is 'recovered X/Y min_ncc=0.NNN restarts=R': X of the\n"
            "Y true figures have a component with zero-mean normalized cross-correlation\n"
            "(maximum over all shifts) >= %.1f, min_ncc is the smallest of those maxima,\n"
            "R the fits run. exp2 adds 'placements found P/Q' before it: true copies\n"
            "matched within +-1 pixel by the combined two-level H.\n",
            prog, DEFAULT_RESTARTS, DEFAULT_OUT, NCC_OK);
}

static int parse(int argc, char **argv, Opts *o)
{
    enum { OPT_SHIFT = 256, OPT_NOFIG };
    static const struct option lo[] = {
        { "seed", required_argument, NULL, 's' },
        { "shift", required_argument, NULL, OPT_SHIFT },
        { "algo", required_argument, NULL, 'a' },
        { "max-restarts", required_argument, NULL, 'r' },
        { "iterations", required_argument, NULL, 'i' },
        { "out", required_argument, NULL, 'o' },
        { "no-figure", no_argument, NULL, OPT_NOFIG },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    long long v;
    int c;
    o->exp = 0;
    o->seed = 1;
    o->model = PNMF_SHIFT_VECTOR;
    o->algo = PNMF_ALGO_PAPER;
    o->max_restarts = DEFAULT_RESTARTS;
    o->iterations = 100;
    o->out = DEFAULT_OUT;
    o->policy = CLI_OUT_ASK;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":s:a:r:i:o:hVyn", lo, NULL)) != -1) {
        switch (c) {
        case 's':
            if (cli_parse_int(prog, "--seed", optarg, 0, 1000000000000LL, &v) < 0) return 2;
            o->seed = (uint64_t)v;
            break;
        case OPT_SHIFT:
            if (!strcmp(optarg, "vector")) o->model = PNMF_SHIFT_VECTOR;
            else if (!strcmp(optarg, "torus")) o->model = PNMF_SHIFT_TORUS;
            else {
                fprintf(stderr, "%s: option --shift expects vector or torus, got '%s'\n", prog, optarg);
                return 2;
            }
            break;
        case 'a':
            if (!strcmp(optarg, "paper")) o->algo = PNMF_ALGO_PAPER;
            else if (!strcmp(optarg, "improved")) o->algo = PNMF_ALGO_IMPROVED;
            else {
                fprintf(stderr, "%s: option --algo expects paper or improved, got '%s'\n", prog, optarg);
                return 2;
            }
            break;
        case 'r':
            if (cli_parse_int(prog, "--max-restarts", optarg, 1, 1000, &v) < 0) return 2;
            o->max_restarts = (int)v;
            break;
        case 'i':
            if (cli_parse_int(prog, "--iterations", optarg, 1, 10000, &v) < 0) return 2;
            o->iterations = (int)v;
            break;
        case 'o':
            if (!optarg[0]) {
                fprintf(stderr, "%s: option --out expects a directory, got ''\n", prog);
                return 2;
            }
            o->out = optarg;
            break;
        case OPT_NOFIG: o->out = NULL; break;
        case 'y': o->policy = CLI_OUT_OVERWRITE; break;
        case 'n': o->policy = CLI_OUT_KEEP; break;
        case 'h': usage(stdout); return 1;
        case 'V': printf("%s %s\n", prog, PNMF_VERSION_STRING); return 1;
        default: cli_bad_option(prog, argv, c); return 2;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "%s: which experiment? exp1 or exp2; try '%s --help'\n", prog, prog);
        return 2;
    }
    if (!strcmp(argv[optind], "exp1")) o->exp = 1;
    else if (!strcmp(argv[optind], "exp2")) o->exp = 2;
    else {
        fprintf(stderr, "%s: unknown experiment '%s' (exp1 or exp2)\n", prog, argv[optind]);
        return 2;
    }
    if (optind + 1 < argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind + 1]);
        return 2;
    }
    return 0;
}

/* mkdir -p */
static int make_dir(const char *dir)
{
    char *p = strdup(dir);
    if (!p) return -1;
    const size_t len = strlen(p);
    for (size_t i = 1; i <= len; i++) {
        if (i < len && p[i] != '/') continue;
        const char saved = p[i];
        p[i] = '\0';
        if (mkdir(p, 0777) < 0 && errno != EEXIST) {
            free(p);
            return -1;
        }
        p[i] = saved;
    }
    free(p);
    struct stat sb;
    if (stat(dir, &sb) < 0) return -1;
    if (!S_ISDIR(sb.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

/* The settings of fit number t (0-based): the paper's protocol repeats
 * the fit from a new random start. The improved algorithm's first start
 * is deterministic; each later fit adds one random start to it and keeps
 * the lower objective (the fitter's own restarts). */
static void attempt_settings(const Opts *o, const PaperScene *sc, int t, PnmfFitSettings *s)
{
    pnmf_fit_default_settings(s);
    s->width = sc->width;
    s->height = sc->height;
    s->shift_model = o->model;
    s->algo = o->algo;
    s->iterations = o->iterations;
    s->inner_iters = 10; /* iter = 10, the paper's section 4 */
    s->seed = o->seed * 1000003ull + (uint64_t)t;
    s->restarts = (o->algo == PNMF_ALGO_IMPROVED && t > 0) ? 2 : 1;
}

typedef struct Score {
    int recovered;
    double min_ncc;
    double ncc[8];
    int comp[8];
    int32_t q[8];
} Score;

static Score score(const Opts *o, const PaperScene *sc, const float *W, int k)
{
    Score s;
    memset(&s, 0, sizeof(s));
    paper_match(o->model, sc, W, k, s.ncc, s.comp, s.q);
    s.min_ncc = 1;
    for (int f = 0; f < sc->nfig; f++) {
        s.recovered += s.ncc[f] >= NCC_OK;
        if (s.ncc[f] < s.min_ncc) s.min_ncc = s.ncc[f];
    }
    return s;
}

static int better(const Score *a, const Score *b)
{
    return a->recovered > b->recovered || (a->recovered == b->recovered && a->min_ncc > b->min_ncc);
}

static void print_figures(const PaperScene *sc, const Score *s, const char *what)
{
    for (int f = 0; f < sc->nfig; f++)
        printf("figure %s: ncc %.3f with %s %d\n", sc->fig[f].name, s->ncc[f], what, s->comp[f] + 1);
}

static int write_figure(const Opts *o, const PaperScene *sc, const float *const *rows_img,
                        const int *rows_count, int nrows, int ncols, int scale)
{
    char err[512];
    const size_t len = strlen(o->out) + 16;
    char *path = malloc(len);
    PaperMontage mt = { 0 };
    int ret = -1;
    if (!path || paper_montage_open(&mt, ncols, nrows, sc->width, sc->height, scale) < 0) {
        fprintf(stderr, "%s: out of memory\n", prog);
        goto end;
    }
    snprintf(path, len, "%s/exp%d.png", o->out, o->exp);
    if (make_dir(o->out) < 0) {
        fprintf(stderr, "%s: cannot create the directory %s: %s\n", prog, o->out, strerror(errno));
        goto end;
    }
    const size_t n = (size_t)sc->width * sc->height;
    for (int r = 0; r < nrows; r++)
        for (int c = 0; c < rows_count[r]; c++) {
            const float *img = rows_img[r] + c * n;
            /* frames as they are; components moved to the middle */
            const int32_t q = r < 2 ? 0 : paper_center_shift(o->model, sc->width, sc->height, img);
            paper_montage_put(&mt, r, c, o->model, sc->width, sc->height, scale, img, q);
        }
    if (paper_png_write(path, &mt, err, sizeof(err)) < 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        goto end;
    }
    printf("wrote %s\n", path);
    ret = 0;
end:
    paper_montage_free(&mt);
    free(path);
    return ret;
}

static int run_exp1(const Opts *o, PaperScene *sc)
{
    const int k = 2, m = sc->m;
    const size_t n = (size_t)sc->width * sc->height;
    float *W = malloc(sizeof(float) * k * n), *Wbest = malloc(sizeof(float) * k * n);
    PnmfFitAtom *H = malloc(sizeof(PnmfFitAtom) * m * k);
    int ret = PNMF_EXIT_FAIL, t;
    Score best = { 0 };
    best.min_ncc = -1;
    if (!W || !Wbest || !H) {
        fprintf(stderr, "%s: out of memory\n", prog);
        goto end;
    }
    printf("exp1: %d frames %dx%d, square and cross, noise mean 0.15, k = %d, shift %s, algo %s, seed %llu\n",
           m, sc->width, sc->height, k, o->model == PNMF_SHIFT_VECTOR ? "vector" : "torus",
           o->algo == PNMF_ALGO_PAPER ? "paper" : "improved", (unsigned long long)o->seed);
    for (t = 0; t < o->max_restarts; t++) {
        PnmfFitSettings s;
        attempt_settings(o, sc, t, &s);
        s.k = k;
        PnmfFitInfo info;
        const int err = pnmf_fit(&s, sc->frames, m, W, H, &info);
        if (err < 0) {
            fprintf(stderr, "%s: the fit failed: %s\n", prog, pnmf_strerror(err));
            ret = cli_exit_code(err);
            goto end;
        }
        const Score sc_t = score(o, sc, W, k);
        printf("fit %d: objective %.4f, %d iterations, recovered %d/%d min_ncc=%.3f\n", t + 1,
               info.objective, info.iterations, sc_t.recovered, sc->nfig, sc_t.min_ncc);
        if (better(&sc_t, &best)) {
            best = sc_t;
            memcpy(Wbest, W, sizeof(float) * k * n);
        }
        if (sc_t.recovered == sc->nfig) {
            t++;
            break;
        }
    }
    print_figures(sc, &best, "component");
    if (o->out) {
        const float *rows_img[3] = { sc->frames, sc->frames + 5 * n, Wbest };
        const int rows_count[3] = { 5, 5, k };
        if (write_figure(o, sc, rows_img, rows_count, 3, 5, 4) < 0) {
            ret = PNMF_EXIT_OUTPUT;
            goto end;
        }
    }
    printf("recovered %d/%d min_ncc=%.3f restarts=%d\n", best.recovered, sc->nfig, best.min_ncc, t);
    ret = PNMF_EXIT_OK;
end:
    free(W), free(Wbest), free(H);
    return ret;
}

/* True copies matched by the combined entries: an entry r S_p w_i with
 * w_i ~ S_q f (q from the NCC match) places figure f at p + q; it matches
 * a copy at (y, x) when p + q is within one pixel of it, each entry and
 * each copy used once. Returns P; *spurious gets the significant entries
 * that matched nothing. */
static int count_placements(const Opts *o, const PaperScene *sc, const PnmfTwoLevelResult *r,
                            const Score *s, int *spurious)
{
    const int W = sc->width, Hh = sc->height;
    const size_t n = (size_t)W * Hh;
    char *used = calloc((size_t)r->n_entries + 1, 1);
    int found = 0;
    *spurious = 0;
    if (!used) return -1;
    /* the peak of each component, for the effective intensity r * max w_i */
    for (int t = 0; t < sc->nplace; t++) {
        const PaperPlacement *pl = &sc->place[t];
        const int f = pl->figure, i = s->comp[f];
        float mx = 0;
        for (size_t x = 0; x < n; x++) mx = r->W[i * n + x] > mx ? r->W[i * n + x] : mx;
        for (int e = r->frame_start[pl->frame]; e < r->frame_start[pl->frame + 1]; e++) {
            const PnmfTwoLevelEntry *en = &r->entries[e];
            if (used[e] || en->component != i || en->r * mx < COEF_MIN) continue;
            const int32_t at = pnmf_fit_shift_compose(o->model, W, Hh, en->p, s->q[f]);
            int hit = 0;
            for (int dy = -1; dy <= 1 && !hit; dy++)
                for (int dx = -1; dx <= 1 && !hit; dx++) {
                    const int32_t want = pnmf_fit_shift_compose(
                        o->model, W, Hh, pnmf_fit_shift_make(o->model, W, Hh, pl->y, pl->x),
                        pnmf_fit_shift_make(o->model, W, Hh, dy, dx));
                    hit = at == want;
                }
            if (hit) {
                used[e] = 1;
                found++;
                break;
            }
        }
    }
    for (int e = 0; e < r->n_entries; e++) {
        if (used[e]) continue;
        const PnmfTwoLevelEntry *en = &r->entries[e];
        float mx = 0;
        for (size_t x = 0; x < n; x++) mx = r->W[en->component * n + x] > mx ? r->W[en->component * n + x] : mx;
        *spurious += en->r * mx >= COEF_MIN;
    }
    free(used);
    return found;
}

static int run_exp2(const Opts *o, PaperScene *sc)
{
    const int K = 6, k = 3, m = sc->m;
    const size_t n = (size_t)sc->width * sc->height;
    PnmfTwoLevelResult *best_r = NULL;
    int ret = PNMF_EXIT_FAIL, t;
    Score best = { 0 };
    best.min_ncc = -1;
    printf("exp2: %d frames %dx%d, plane, tank and ship, %d copies, noise mean 0.15, K = %d, k = %d, "
           "shift %s, algo %s, seed %llu\n",
           m, sc->width, sc->height, sc->nplace, K, k, o->model == PNMF_SHIFT_VECTOR ? "vector" : "torus",
           o->algo == PNMF_ALGO_PAPER ? "paper" : "improved", (unsigned long long)o->seed);
    for (t = 0; t < o->max_restarts; t++) {
        PnmfTwoLevelSettings s;
        pnmf_twolevel_default_settings(&s);
        attempt_settings(o, sc, t, &s.fit);
        s.K = K;
        s.k = k;
        PnmfTwoLevelResult *r = NULL;
        const int err = pnmf_twolevel(&s, sc->frames, m, &r);
        if (err < 0) {
            fprintf(stderr, "%s: the fit failed: %s\n", prog, pnmf_strerror(err));
            ret = cli_exit_code(err);
            goto end;
        }
        const Score sc_t = score(o, sc, r->W, k);
        printf("fit %d: level 1 objective %.4f, kept %d of %d, level 2 objective %.4f, combined %.4f, "
               "recovered %d/%d min_ncc=%.3f\n",
               t + 1, r->level1.objective, r->kept, K, r->level2.objective, r->objective,
               sc_t.recovered, sc->nfig, sc_t.min_ncc);
        if (better(&sc_t, &best)) {
            best = sc_t;
            pnmf_twolevel_free(&best_r);
            best_r = r;
        } else {
            pnmf_twolevel_free(&r);
        }
        if (sc_t.recovered == sc->nfig) {
            t++;
            break;
        }
    }
    print_figures(sc, &best, "final component");
    int spurious;
    const int found = count_placements(o, sc, best_r, &best, &spurious);
    if (found < 0) {
        fprintf(stderr, "%s: out of memory\n", prog);
        goto end;
    }
    printf("entries %d, with intensity >= %.1f not matching a copy: %d\n", best_r->n_entries, COEF_MIN,
           spurious);
    if (o->out) {
        const float *rows_img[4] = { sc->frames, sc->frames + 10 * n, best_r->W1, best_r->W };
        const int rows_count[4] = { 10, 10, K, k };
        if (write_figure(o, sc, rows_img, rows_count, 4, 10, 3) < 0) {
            ret = PNMF_EXIT_OUTPUT;
            goto end;
        }
    }
    printf("placements found %d/%d\n", found, sc->nplace);
    printf("recovered %d/%d min_ncc=%.3f restarts=%d\n", best.recovered, sc->nfig, best.min_ncc, t);
    ret = PNMF_EXIT_OK;
end:
    pnmf_twolevel_free(&best_r);
    return ret;
}

int main(int argc, char **argv)
{
    cli_init();
    Opts o;
    const int pr = parse(argc, argv, &o);
    if (pr == 1) return PNMF_EXIT_OK;
    if (pr) return PNMF_EXIT_USAGE;
    if (o.out) {
        /* the figure's name checked now, not after minutes of fitting */
        char path[4096];
        snprintf(path, sizeof(path), "%s/exp%d.png", o.out, o.exp);
        const int code = cli_check_output(prog, path, NULL, 0, o.policy);
        if (code) return code;
    }
    PaperScene sc;
    if ((o.exp == 1 ? paper_scene_exp1(&sc, o.seed) : paper_scene_exp2(&sc, o.seed)) < 0) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return PNMF_EXIT_FAIL;
    }
    const int ret = o.exp == 1 ? run_exp1(&o, &sc) : run_exp2(&o, &sc);
    paper_scene_free(&sc);
    return ret;
}
