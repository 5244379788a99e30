/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pnmf-compare: size and quality of pnmf against standard codecs on one
 * clip, in one command. Reads the clip's gray frames once, runs each
 * codec's quality ladder (each point encoded, decoded and scored in a
 * forked child, so a codec's peak memory is its own and a crash costs one
 * point), then prints the tables and writes the CSV files and the plot.
 * With --lossless: each lossless codec once, checked for exactness, a table
 * and a bar chart.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libavutil/log.h>

#include "cli_util.h"
#include "compare.h"
#include "enc_opts.h"

static const char *prog = "pnmf-compare";

#define MAX_CODECS 16
#define DEFAULT_POINTS 6
#define DEFAULT_OUT "compare-out"
/* pnmf's quality is the ladder's, its threads those of every codec. */
#define CMP_ENC_OMIT (ENC_OPT_QUALITY | ENC_OPT_THREADS)

/* ---- one point in a child ---- */

typedef struct PointJob {
    const CmpCodec *c;
    const CmpClip *clip;
    const CmpOptions *o;
    int param;
} PointJob;

static void point_child(void *ctx, void *out)
{
    const PointJob *j = ctx;
    j->c->run(j->c, j->clip, j->o, j->param, out);
}

static void run_point(const CmpCodec *c, const CmpClip *clip, const CmpOptions *o, int param, CmpPoint *pt)
{
    memset(pt, 0, sizeof(*pt));
    pt->param = param;
    pt->peak_mib = -1;
    PointJob job = { c, clip, o, param };
    int status;
    if (cmp_run_child(point_child, &job, pt, sizeof(*pt), &status) < 0) {
        memset(pt, 0, sizeof(*pt));
        pt->param = param;
        pt->peak_mib = -1;
        if (WIFSIGNALED(status))
            snprintf(pt->err, sizeof(pt->err), "%s %s %d: the encode/decode process died (%s)", c->name,
                     c->param_name, param, strsignal(WTERMSIG(status)));
        else
            snprintf(pt->err, sizeof(pt->err), "%s %s %d: the encode/decode process exited with status %d",
                     c->name, c->param_name, param, WEXITSTATUS(status));
    }
}

/* ---- command line ---- */

typedef struct Args {
    const CmpCodec *codecs[MAX_CODECS];
    int ncodecs;
    int lo[MAX_CODECS], hi[MAX_CODECS]; /* each codec's ladder (its default or --range) */
    int points;
    long long frames;
    const char *out;
    const char *plot;
    const char *anchors; /* --anchors FILE, or NULL */
    int lossless;        /* --lossless */
    int quiet;
    CmpOptions o;
} Args;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: pnmf-compare [options] CLIP\n"
            "Encode the gray (luma) frames of CLIP, any clip FFmpeg reads, with pnmf and with\n"
            "standard codecs (libavcodec's own encoders) over quality ladders; decode each\n"
            "stream and score it. Prints a Markdown table of every point and the BD-rate and\n"
            "BD-PSNR of pnmf against each codec; writes rd.csv, bd.csv and an RD plot (bits per\n"
            "pixel against PSNR-Y, via gnuplot) into the output directory.\n"
            "\n"
            "      --codecs LIST    comma-separated, from: ");
    for (int i = 0; cmp_codec_at(i); i++) fprintf(f, "%s%s", i ? "," : "", cmp_codec_at(i)->name);
    fprintf(f, "\n                       (with --lossless: ");
    for (int i = 0; cmp_lossless_codec_at(i); i++)
        fprintf(f, "%s%s", i ? "," : "", cmp_lossless_codec_at(i)->name);
    fprintf(f,
            ")\n"
            "                       (default: all that this FFmpeg has but pnmf-k0, pnmf with\n"
            "                       -k 0: no parts model)\n"
            "      --lossless       compare lossless coding instead: pnmf -q 0 and each lossless\n"
            "                       codec once; bytes, speeds and a check that the decoded frames\n"
            "                       are the source's exactly; writes lossless.csv and a bar chart\n"
            "      --points N       points per codec ladder, 1..64 (default %d); BD needs 4\n"
            "      --range C=LO:HI  ladder of codec C from LO (best quality) to HI, in its own\n"
            "                       knob's units; repeatable. Defaults (and legal values):\n",
            DEFAULT_POINTS);
    for (int i = 0; cmp_codec_at(i); i++) {
        const CmpCodec *c = cmp_codec_at(i);
        fprintf(f, "                         %-10s %-3s %2d:%-2d  (%d..%d)\n", c->name, c->param_name,
                c->ladder_lo, c->ladder_hi, c->param_min, c->param_max);
    }
    fprintf(f,
            "      --anchors FILE   take the points of every codec this run does not measure\n"
            "                       from FILE, the rd.csv of an earlier run on the same frames\n"
            "                       (with it, --codecs defaults to pnmf alone)\n"
            "      --frames N       use only the first N frames (default: all)\n"
            "      --threads N      threads of every encoder and decoder, pnmf's too, 1..64\n"
            "                       (default 1, so the timings compare)\n"
            "      --out DIR        where rd.csv, bd.csv and the plot go (default %s)\n"
            "      --plot FMT       svg, png or none (default svg)\n"
            "      --keep-sei       count the SEI messages of x264 and x265 (their version and\n"
            "                       settings as text; default: removed before counting)\n"
            "  -Q, --quiet          no progress lines on stderr\n"
            "  -v, --verbose        let the codec libraries log their warnings\n"
            "  -h, --help           this help\n"
            "  -V, --version        print the version\n"
            "pnmf's own options (pnmf-enc's; -q is the ladder, --threads the one above):\n",
            DEFAULT_OUT);
    enc_opts_usage(f, CMP_ENC_OMIT);
    fprintf(f,
            "\n"
            "Exit status: 0 ok, 2 usage, 3 cannot read the clip or use the anchors, 5 cannot\n"
            "write the output, 1 other errors (a point that failed: the rest is still reported).\n");
}

enum { OPT_CODECS = 256, OPT_LOSSLESS, OPT_ANCHORS, OPT_POINTS, OPT_RANGE, OPT_FRAMES, OPT_THREADS, OPT_OUT, OPT_PLOT, OPT_KEEP_SEI };

static int parse_codecs(Args *a, const char *list)
{
    const CmpCodec *(*at)(int) = a->lossless ? cmp_lossless_codec_at : cmp_codec_at;
    a->ncodecs = 0;
    const char *p = list;
    for (;;) {
        const char *e = strchr(p, ',');
        const size_t len = e ? (size_t)(e - p) : strlen(p);
        const CmpCodec *c = a->lossless ? cmp_lossless_codec_by_name(p, len) : cmp_codec_by_name(p, len);
        if (!c) {
            fprintf(stderr, "%s: option --codecs: unknown codec '%.*s'%s (known: ", prog, (int)len, p,
                    a->lossless ? " with --lossless" : "");
            for (int i = 0; at(i); i++) fprintf(stderr, "%s%s", i ? "," : "", at(i)->name);
            fprintf(stderr, ")\n");
            return -1;
        }
        for (int i = 0; i < a->ncodecs; i++)
            if (a->codecs[i] == c) {
                fprintf(stderr, "%s: option --codecs: '%s' given twice\n", prog, c->name);
                return -1;
            }
        a->codecs[a->ncodecs++] = c;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

/* --range C=LO:HI, kept by codec until the codec list is known */
typedef struct RangeArg {
    const CmpCodec *codec;
    int lo, hi;
} RangeArg;

static int parse_range(const char *v, RangeArg *r)
{
    const char *eq = strchr(v, '=');
    const CmpCodec *c = eq ? cmp_codec_by_name(v, (size_t)(eq - v)) : NULL;
    char *end;
    long lo = 0, hi = 0;
    int ok = c != NULL;
    if (ok) {
        errno = 0;
        lo = strtol(eq + 1, &end, 10);
        ok = !errno && end != eq + 1 && *end == ':';
        if (ok) {
            const char *h = end + 1;
            hi = strtol(h, &end, 10);
            ok = !errno && end != h && !*end;
        }
    }
    if (!ok) {
        fprintf(stderr, "%s: option --range expects CODEC=LO:HI with a known codec, got '%s'\n", prog, v);
        return -1;
    }
    if (lo < c->param_min || hi > c->param_max || lo > hi) {
        fprintf(stderr, "%s: option --range: %s %s must satisfy %d <= LO <= HI <= %d, got '%s'\n", prog,
                c->name, c->param_name, c->param_min, c->param_max, v);
        return -1;
    }
    r->codec = c;
    r->lo = (int)lo;
    r->hi = (int)hi;
    return 0;
}

/* Returns -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, Args *a)
{
    static const struct option own[] = {
        { "codecs", required_argument, NULL, OPT_CODECS },   { "points", required_argument, NULL, OPT_POINTS },
        { "range", required_argument, NULL, OPT_RANGE },     { "frames", required_argument, NULL, OPT_FRAMES },
        { "threads", required_argument, NULL, OPT_THREADS }, { "out", required_argument, NULL, OPT_OUT },
        { "plot", required_argument, NULL, OPT_PLOT },       { "keep-sei", no_argument, NULL, OPT_KEEP_SEI },
        { "anchors", required_argument, NULL, OPT_ANCHORS }, { "lossless", no_argument, NULL, OPT_LOSSLESS },
        { "quiet", no_argument, NULL, 'Q' },
        { "verbose", no_argument, NULL, 'v' },               { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },               { NULL, 0, NULL, 0 },
    };
    struct option longopts[sizeof(own) / sizeof(own[0]) + ENC_OPTS_MAX];
    char optstring[64];
    enc_opts_longopts(longopts, own, CMP_ENC_OMIT);
    enc_opts_optstring(optstring, sizeof(optstring), "QvhV", CMP_ENC_OMIT);
    static RangeArg ranges[64];
    int nranges = 0, have_points = 0, c, got;
    const char *codec_list = NULL;
    long long v;
    memset(a, 0, sizeof(*a));
    a->points = DEFAULT_POINTS;
    a->frames = -1;
    a->out = DEFAULT_OUT;
    a->plot = "svg";
    a->o.threads = 1;
    EncOpts eo;
    enc_opts_init(&eo, CMP_ENC_OMIT);
#define INT_OPT(name, lo, hi, dst) \
    do { \
        if (cli_parse_int(prog, name, optarg, lo, hi, &v)) return PNMF_EXIT_USAGE; \
        dst = v; \
    } while (0)
    opterr = 0; /* one line per error, ours */
    while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
        if ((got = enc_opts_parse(&eo, prog, c, optarg)) < 0) return PNMF_EXIT_USAGE;
        if (got > 0) continue;
        switch (c) {
        case OPT_CODECS: codec_list = optarg; break;
        case OPT_LOSSLESS: a->lossless = 1; break;
        case OPT_ANCHORS: a->anchors = optarg; break;
        case OPT_POINTS:
            INT_OPT("--points", 1, 64, a->points);
            have_points = 1;
            break;
        case OPT_RANGE:
            if (nranges == (int)(sizeof(ranges) / sizeof(ranges[0]))) {
                fprintf(stderr, "%s: option --range given too often\n", prog);
                return PNMF_EXIT_USAGE;
            }
            if (parse_range(optarg, &ranges[nranges++]) < 0) return PNMF_EXIT_USAGE;
            break;
        case OPT_FRAMES: INT_OPT("--frames", 1, 1LL << 28, a->frames); break;
        case OPT_THREADS: INT_OPT("--threads", 1, 64, a->o.threads); break;
        case OPT_OUT: a->out = optarg; break;
        case OPT_PLOT:
            if (strcmp(optarg, "svg") && strcmp(optarg, "png") && strcmp(optarg, "none")) {
                fprintf(stderr, "%s: option --plot expects svg, png or none, got '%s'\n", prog, optarg);
                return PNMF_EXIT_USAGE;
            }
            a->plot = optarg;
            break;
        case OPT_KEEP_SEI: a->o.keep_sei = 1; break;
        case 'Q': a->quiet = 1; break;
        case 'v': a->o.verbose = 1; break;
        case 'h': usage(stdout); return PNMF_EXIT_OK;
        case 'V': printf("pnmf-compare %s\n", PNMF_VERSION_STRING); return PNMF_EXIT_OK;
        default: cli_bad_option(prog, argv, c); return PNMF_EXIT_USAGE;
        }
    }
#undef INT_OPT
    if (argc - optind != 1) {
        fprintf(stderr, "%s: expected one CLIP; try '%s --help'\n", prog, prog);
        return PNMF_EXIT_USAGE;
    }
    if (enc_opts_finish(&eo, prog) < 0) return PNMF_EXIT_USAGE;
    a->o.pnmf = eo.s;
    if (a->lossless && (a->anchors || nranges || have_points)) {
        fprintf(stderr, "%s: option %s does not apply with --lossless (one point per codec)\n", prog,
                a->anchors ? "--anchors" : nranges ? "--range" : "--points");
        return PNMF_EXIT_USAGE;
    }
    if (codec_list && parse_codecs(a, codec_list) < 0) return PNMF_EXIT_USAGE;
    char why[160];
    if (codec_list) {
        for (int i = 0; i < a->ncodecs; i++)
            if (a->codecs[i]->available(a->codecs[i], why, sizeof(why)) < 0) {
                fprintf(stderr, "%s: option --codecs: %s is not available: %s\n", prog, a->codecs[i]->name, why);
                return PNMF_EXIT_USAGE;
            }
    } else if (a->anchors) { /* the others come from the file */
        if (cmp_pnmf_codec.available(&cmp_pnmf_codec, why, sizeof(why)) == 0) a->codecs[a->ncodecs++] = &cmp_pnmf_codec;
    } else {
        const CmpCodec *(*at)(int) = a->lossless ? cmp_lossless_codec_at : cmp_codec_at;
        for (int i = 0; at(i); i++) {
            const CmpCodec *cc = at(i);
            if (cc == &cmp_pnmf_k0_codec) continue; /* only when named */
            if (cc->available(cc, why, sizeof(why)) < 0) {
                if (!a->quiet) fprintf(stderr, "%s: skipping %s: %s\n", prog, cc->name, why);
                continue;
            }
            a->codecs[a->ncodecs++] = cc;
        }
    }
    if (a->lossless) a->points = 1; /* each codec once, its ladder unused */
    for (int i = 0; i < a->ncodecs; i++) {
        a->lo[i] = a->codecs[i]->ladder_lo;
        a->hi[i] = a->codecs[i]->ladder_hi;
        if (a->lossless) a->lo[i] = a->hi[i] = 0; /* pnmf's lossless -q; the others ignore it */
        for (int r = 0; r < nranges; r++)
            if (ranges[r].codec == a->codecs[i]) {
                a->lo[i] = ranges[r].lo;
                a->hi[i] = ranges[r].hi;
            }
    }
    return -1;
}

/* ---- input and output ---- */

/* mkdir -p */
static int make_dir(const char *dir)
{
    char p[4096];
    if (snprintf(p, sizeof(p), "%s", dir) >= (int)sizeof(p)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *s = p + 1;; s++) {
        const char c = *s;
        if (c == '/' || c == 0) {
            *s = 0;
            struct stat st;
            if (mkdir(p, 0777) < 0 && errno != EEXIST) return -1;
            if (stat(p, &st) < 0) return -1;
            if (!S_ISDIR(st.st_mode)) {
                errno = ENOTDIR;
                return -1;
            }
            *s = c;
            if (!c) break;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    Args a;
    int code = parse_args(argc, argv, &a);
    if (code >= 0) return code;
    const char *clip_path = argv[optind];

    /* quiet libraries unless asked; SVT-AV1 reads its level from SVT_LOG */
    av_log_set_level(a.o.verbose ? AV_LOG_WARNING : AV_LOG_ERROR);
    setenv("SVT_LOG", a.o.verbose ? "2" : "1", 0);
    signal(SIGPIPE, SIG_IGN); /* a gnuplot that dies must not take us with it */

    if (a.ncodecs == 0) {
        fprintf(stderr, "%s: no codec to run\n", prog);
        return PNMF_EXIT_USAGE;
    }
    CmpClip clip;
    if ((code = cmp_read_clip(prog, clip_path, a.frames, &clip)) != PNMF_EXIT_OK) return code;
    if (make_dir(a.out) < 0) {
        fprintf(stderr, "%s: %s: cannot create the directory: %s\n", prog, a.out, strerror(errno));
        free(clip.pixels);
        return PNMF_EXIT_OUTPUT;
    }

    CmpRun runs[MAX_CODECS];
    int total = 0, done = 0, failed = 0, nruns = a.ncodecs;
    for (int i = 0; i < a.ncodecs; i++) {
        const int span = a.hi[i] - a.lo[i] + 1;
        runs[i].codec = a.codecs[i];
        runs[i].lo = a.lo[i];
        runs[i].hi = a.hi[i];
        runs[i].npoints = a.points < span ? a.points : span;
        runs[i].points = calloc((size_t)runs[i].npoints, sizeof(CmpPoint));
        if (!runs[i].points) {
            fprintf(stderr, "%s: out of memory\n", prog);
            return PNMF_EXIT_FAIL;
        }
        total += runs[i].npoints;
    }
    char err[512], plot_path[4096];
    if (a.anchors && cmp_read_anchors(a.anchors, &clip, a.codecs, a.ncodecs, runs, &nruns, MAX_CODECS, err,
                                      sizeof(err)) < 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        for (int i = 0; i < nruns; i++) free(runs[i].points);
        free(clip.pixels);
        return PNMF_EXIT_INPUT;
    }
    if (!a.quiet)
        fprintf(stderr, "%s: %s: %d frames of %dx%d, %d codecs, %d points\n", prog, clip_path, clip.frames,
                clip.width, clip.height, a.ncodecs, total);
    for (int i = 0; i < a.ncodecs; i++) {
        const CmpCodec *c = runs[i].codec;
        for (int p = 0; p < runs[i].npoints; p++) {
            const int param = cmp_ladder_value(runs[i].lo, runs[i].hi, p, runs[i].npoints);
            CmpPoint *pt = &runs[i].points[p];
            run_point(c, &clip, &a.o, param, pt);
            done++;
            if (!pt->ok) {
                failed++;
                fprintf(stderr, "%s: %s: %s\n", prog, clip_path, pt->err);
            } else if (!a.quiet && a.lossless) {
                fprintf(stderr, "[%d/%d] %s: %llu bytes, %s, %.1f s\n", done, total, c->name,
                        (unsigned long long)pt->bytes,
                        pt->diff_pixels == 0 && pt->frames == clip.frames ? "lossless" : "NOT LOSSLESS",
                        pt->enc_seconds + pt->dec_seconds);
            } else if (!a.quiet) {
                fprintf(stderr, "[%d/%d] %s %s %d: %llu bytes, %.2f dB, %.1f s\n", done, total, c->name,
                        c->param_name, param, (unsigned long long)pt->bytes, pt->psnr,
                        pt->enc_seconds + pt->dec_seconds);
            }
        }
    }

    if (a.lossless) {
        cmp_report_lossless(stdout, &clip, &a.o, runs, nruns);
    } else {
        cmp_report_table(stdout, &clip, &a.o, runs, nruns);
        if (nruns > a.ncodecs) {
            printf("Read from `%s` (an earlier run), not measured here:", a.anchors);
            for (int i = a.ncodecs; i < nruns; i++) printf("%s %s", i > a.ncodecs ? "," : "", runs[i].codec->name);
            printf(".\n\n");
        }
        cmp_report_bd(stdout, runs, nruns);
    }
    fflush(stdout);
    code = failed ? PNMF_EXIT_FAIL : PNMF_EXIT_OK;
    /* the CSV and the plot of the mode's table */
    if ((a.lossless ? cmp_report_lossless_csv : cmp_report_csv)(a.out, &clip, runs, nruns, err, sizeof(err)) < 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        code = PNMF_EXIT_OUTPUT;
    }
    if (strcmp(a.plot, "none")) {
        int r = (a.lossless ? cmp_report_lossless_plot : cmp_report_plot)(a.out, a.plot, &clip, runs, nruns,
                                                                          plot_path, sizeof(plot_path), err,
                                                                          sizeof(err));
        if (r < 0) {
            fprintf(stderr, "%s: %s\n", prog, err);
            code = PNMF_EXIT_OUTPUT;
        } else if (r > 0) {
            fprintf(stderr, "%s: gnuplot is not installed (Debian: gnuplot-nox): no plot written\n", prog);
        }
    }
    for (int i = 0; i < nruns; i++) free(runs[i].points);
    free(clip.pixels);
    return code;
}
