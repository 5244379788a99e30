/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pnmf-enc: encode any clip FFmpeg reads into a .pnmf file. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "input/demuxer.h"
#include "pnmf/pnmf.h"

static const char *prog = "pnmf-enc";

static void usage(FILE *f)
{
    PnmfEncSettings d;
    pnmf_enc_default_settings(&d);
    fprintf(f,
            "usage: pnmf-enc [options] INPUT OUTPUT.pnmf\n"
            "Encode the gray (luma) frames of INPUT, any clip FFmpeg reads (mp4, mkv, avi, gif,\n"
            "y4m, an image sequence such as dir/frame_%%06d.png), with Permutation NMF.\n"
            "\n"
            "  -k, --components N   components per window, 0..255; 0: no model, the residual\n"
            "                       layer alone (default %d)\n"
            "  -w, --window N       frames per window, 1..1024 (default %d)\n"
            "  -q, --quality N      quantizer 0..64, lower is better and larger (default %d)\n"
            "      --shift MODEL    canvas: 2-D shifts on a canvas larger than the frame, so\n"
            "                       parts enter and leave without wrapping; torus: 2-D cyclic\n"
            "                       shifts of the frame; vector: the paper's 1-D shift of the\n"
            "                       column-stacked frame (default %s)\n"
            "      --canvas-pad N   canvas: margin added to the height and the width, 0 =\n"
            "                       max(16, side / 8); sizes round up to factors 2, 3, 5 (default %d)\n"
            "      --signed         components may hold negative pixels, so a part can\n"
            "                       darken what lies under it (occlusion)%s\n"
            "      --unsigned       nonnegative components, as in the paper%s\n"
            "      --residual       code what the parts miss, per 8x8 block, against the\n"
            "                       model, the previous frame or the neighbours%s\n"
            "      --no-residual    the parts alone, as in the paper (implied by --shift vector)%s\n"
            "      --keyint N       residual layer: a key window (decodes on its own) at least\n"
            "                       every N frames; the others predict from the window before\n"
            "                       (default %d; 1: every window)\n"
            "      --scenecut       a scene cut ends the window, and the next one is a key\n"
            "                       window (default)\n"
            "      --no-scenecut    windows of -w frames, whatever the content\n"
            "      --repeats        after the fit, a frame may place a component again where\n"
            "                       that pays for its bits (the same sprite twice)\n"
            "      --no-repeats     one entry per component and frame, as in the paper (default)\n"
            "      --recentre       after each W step, each component's centre of mass moved to\n"
            "                       the torus centre, its shifts to match (default: off)\n"
            "      --carry          a window that continues the one before may reuse the last\n"
            "                       model's components, sending only its entries (default)\n"
            "      --no-carry       each window with a model sends its components\n"
            "      --auto-k         the full fit picks how many components (at most -k): it\n"
            "                       grows while each new one pays for its bits (default)\n"
            "      --fixed-k        the full fit uses -k components, as in the paper\n"
            "      --two-level K    the paper's two-level decomposition: K level-1 components,\n"
            "                       then -k level-2 ones; one part may appear several times in\n"
            "                       a frame (torus or vector shifts; default: off)\n"
            "      --target-psnr DB each window's residual step chosen to reach DB (PSNR-Y),\n"
            "                       -q still sets the model's steps (default: off)\n"
            "      --algo ALGO      improved: greedy atoms + exact HALS W step; paper: the\n"
            "                       paper's cyclic sweep + projected gradient (default improved)\n"
            "      --iterations N   ALS iterations per fit, at most (default %d)\n"
            "      --inner N        sweeps of Multiple Permutation NNLS / PG steps (default %d)\n"
            "      --restarts N     fits per window from different starts, best kept (default %d)\n"
            "      --seed N         seed of the restarts (default %llu)\n"
            "      --threads N      worker threads, 0 = one per core; the output is the same\n"
            "                       for any value (default %d)\n"
            "      --zstd-level N   zstd level 1..22 (default %d)\n"
            "      --refine N       passes of W step + requantization + H refit against the\n"
            "                       quantized model, each kept only if it helps (default %d)\n"
            "      --frames N       encode only the first N frames (default: all)\n"
            "  -Q, --quiet          no summary line\n"
            "  -h, --help           this help\n"
            "  -V, --version        print the version\n"
            "\n"
            "Exit status: 0 ok, 2 usage, 3 cannot read input, 4 invalid data, 5 cannot write\n"
            "output, 6 a size exceeds a limit, 1 other errors.\n",
            d.components, d.window, d.quality,
            d.shift_model == PNMF_SHIFT_CANVAS ? "canvas" : d.shift_model == PNMF_SHIFT_TORUS ? "torus" : "vector",
            d.canvas_pad, d.signed_components ? " (default)" : "", d.signed_components ? "" : " (default)",
            d.residual ? " (default)" : "", d.residual ? "" : " (default)", d.key_interval,
            d.iterations, d.inner_iters, d.restarts,
            (unsigned long long)d.seed, d.threads, d.zstd_level, d.refine);
}

enum { OPT_SHIFT = 256, OPT_ALGO, OPT_ITER, OPT_INNER, OPT_RESTARTS, OPT_SEED, OPT_THREADS,
       OPT_ZSTD, OPT_FRAMES, OPT_REFINE, OPT_PAD, OPT_SIGNED, OPT_UNSIGNED, OPT_RESIDUAL,
       OPT_NO_RESIDUAL, OPT_TARGET, OPT_TWO_LEVEL, OPT_KEYINT, OPT_AUTO_K, OPT_FIXED_K,
       OPT_SCENECUT, OPT_NO_SCENECUT, OPT_CARRY, OPT_NO_CARRY, OPT_REPEATS, OPT_NO_REPEATS, OPT_RECENTRE };

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "components", required_argument, NULL, 'k' }, { "window", required_argument, NULL, 'w' },
        { "quality", required_argument, NULL, 'q' },    { "shift", required_argument, NULL, OPT_SHIFT },
        { "algo", required_argument, NULL, OPT_ALGO },  { "iterations", required_argument, NULL, OPT_ITER },
        { "inner", required_argument, NULL, OPT_INNER }, { "restarts", required_argument, NULL, OPT_RESTARTS },
        { "seed", required_argument, NULL, OPT_SEED },  { "threads", required_argument, NULL, OPT_THREADS },
        { "zstd-level", required_argument, NULL, OPT_ZSTD }, { "frames", required_argument, NULL, OPT_FRAMES },
        { "refine", required_argument, NULL, OPT_REFINE },
        { "canvas-pad", required_argument, NULL, OPT_PAD }, { "signed", no_argument, NULL, OPT_SIGNED },
        { "unsigned", no_argument, NULL, OPT_UNSIGNED }, { "residual", no_argument, NULL, OPT_RESIDUAL },
        { "no-residual", no_argument, NULL, OPT_NO_RESIDUAL }, { "target-psnr", required_argument, NULL, OPT_TARGET },
        { "two-level", required_argument, NULL, OPT_TWO_LEVEL }, { "keyint", required_argument, NULL, OPT_KEYINT },
        { "auto-k", no_argument, NULL, OPT_AUTO_K }, { "fixed-k", no_argument, NULL, OPT_FIXED_K },
        { "scenecut", no_argument, NULL, OPT_SCENECUT }, { "no-scenecut", no_argument, NULL, OPT_NO_SCENECUT },
        { "carry", no_argument, NULL, OPT_CARRY }, { "no-carry", no_argument, NULL, OPT_NO_CARRY },
        { "repeats", no_argument, NULL, OPT_REPEATS }, { "no-repeats", no_argument, NULL, OPT_NO_REPEATS },
        { "recentre", no_argument, NULL, OPT_RECENTRE },
        { "quiet", no_argument, NULL, 'Q' },            { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },          { NULL, 0, NULL, 0 },
    };
    cli_init();
    opterr = 0; /* cli_bad_option() says it in one line */
    PnmfEncSettings s;
    pnmf_enc_default_settings(&s);
    long long v, max_frames = -1;
    int quiet = 0, residual_set = 0, c;
    while ((c = getopt_long(argc, argv, ":k:w:q:QhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'k': if (cli_parse_int(prog, "--components", optarg, 0, 255, &v)) return PNMF_EXIT_USAGE; s.components = (int)v; break;
        case 'w': if (cli_parse_int(prog, "--window", optarg, 1, 1024, &v)) return PNMF_EXIT_USAGE; s.window = (int)v; break;
        case 'q': if (cli_parse_int(prog, "--quality", optarg, 0, PNMF_MAX_QUALITY, &v)) return PNMF_EXIT_USAGE; s.quality = (int)v; break;
        case OPT_SHIFT:
            if (!strcmp(optarg, "torus")) s.shift_model = PNMF_SHIFT_TORUS;
            else if (!strcmp(optarg, "vector")) s.shift_model = PNMF_SHIFT_VECTOR;
            else if (!strcmp(optarg, "canvas")) s.shift_model = PNMF_SHIFT_CANVAS;
            else {
                fprintf(stderr, "%s: option --shift expects canvas, torus or vector, got '%s'\n", prog, optarg);
                return PNMF_EXIT_USAGE;
            }
            break;
        case OPT_ALGO:
            if (!strcmp(optarg, "improved")) s.algo = PNMF_ALGO_IMPROVED;
            else if (!strcmp(optarg, "paper")) s.algo = PNMF_ALGO_PAPER;
            else {
                fprintf(stderr, "%s: option --algo expects improved or paper, got '%s'\n", prog, optarg);
                return PNMF_EXIT_USAGE;
            }
            break;
        case OPT_ITER: if (cli_parse_int(prog, "--iterations", optarg, 0, 10000, &v)) return PNMF_EXIT_USAGE; s.iterations = (int)v; break;
        case OPT_INNER: if (cli_parse_int(prog, "--inner", optarg, 1, 1000, &v)) return PNMF_EXIT_USAGE; s.inner_iters = (int)v; break;
        case OPT_RESTARTS: if (cli_parse_int(prog, "--restarts", optarg, 1, 1000, &v)) return PNMF_EXIT_USAGE; s.restarts = (int)v; break;
        case OPT_SEED: if (cli_parse_int(prog, "--seed", optarg, 0, (1LL << 62), &v)) return PNMF_EXIT_USAGE; s.seed = (uint64_t)v; break;
        case OPT_THREADS: if (cli_parse_int(prog, "--threads", optarg, 0, 64, &v)) return PNMF_EXIT_USAGE; s.threads = (int)v; break;
        case OPT_ZSTD: if (cli_parse_int(prog, "--zstd-level", optarg, 1, 22, &v)) return PNMF_EXIT_USAGE; s.zstd_level = (int)v; break;
        case OPT_REFINE: if (cli_parse_int(prog, "--refine", optarg, 0, 100, &v)) return PNMF_EXIT_USAGE; s.refine = (int)v; break;
        case OPT_PAD: if (cli_parse_int(prog, "--canvas-pad", optarg, 0, 4096, &v)) return PNMF_EXIT_USAGE; s.canvas_pad = (int)v; break;
        case OPT_SIGNED: s.signed_components = 1; break;
        case OPT_UNSIGNED: s.signed_components = 0; break;
        case OPT_RESIDUAL: s.residual = 1; residual_set = 1; break;
        case OPT_NO_RESIDUAL: s.residual = 0; residual_set = 1; break;
        case OPT_KEYINT: if (cli_parse_int(prog, "--keyint", optarg, 1, 1 << 28, &v)) return PNMF_EXIT_USAGE; s.key_interval = (int)v; break;
        case OPT_AUTO_K: s.auto_k = 1; break;
        case OPT_FIXED_K: s.auto_k = 0; break;
        case OPT_SCENECUT: s.scene_cut = 1; break;
        case OPT_NO_SCENECUT: s.scene_cut = 0; break;
        case OPT_CARRY: s.carry = 1; break;
        case OPT_NO_CARRY: s.carry = 0; break;
        case OPT_REPEATS: s.repeats = 1; break;
        case OPT_NO_REPEATS: s.repeats = 0; break;
        case OPT_RECENTRE: s.recentre = 1; break;
        case OPT_TWO_LEVEL: if (cli_parse_int(prog, "--two-level", optarg, 1, 255, &v)) return PNMF_EXIT_USAGE; s.two_level = (int)v; break;
        case OPT_TARGET: {
            char *end;
            const double t = strtod(optarg, &end);
            if (end == optarg || *end || !(t >= 10 && t <= 99)) {
                fprintf(stderr, "%s: option --target-psnr expects a PSNR in dB from 10 to 99, got '%s'\n", prog, optarg);
                return PNMF_EXIT_USAGE;
            }
            s.target_psnr = (float)t;
            break;
        }
        case OPT_FRAMES: if (cli_parse_int(prog, "--frames", optarg, 1, 1LL << 28, &v)) return PNMF_EXIT_USAGE; max_frames = v; break;
        case 'Q': quiet = 1; break;
        case 'h': usage(stdout); return PNMF_EXIT_OK;
        case 'V': printf("pnmf-enc %s\n", PNMF_VERSION_STRING); return PNMF_EXIT_OK;
        default:
            cli_bad_option(prog, argv, c);
            return PNMF_EXIT_USAGE;
        }
    }
    if (argc - optind != 2) {
        fprintf(stderr, "%s: expected INPUT and OUTPUT.pnmf; try '%s --help'\n", prog, prog);
        return PNMF_EXIT_USAGE;
    }
    if (s.shift_model == PNMF_SHIFT_VECTOR && s.residual) {
        if (residual_set) {
            fprintf(stderr, "%s: --residual needs 2-D frames: not with --shift vector\n", prog);
            return PNMF_EXIT_USAGE;
        }
        s.residual = 0;
    }
    if (s.two_level && (s.two_level < s.components || s.shift_model == PNMF_SHIFT_CANVAS)) {
        fprintf(stderr, "%s: --two-level K needs K >= -k (%d) and torus or vector shifts\n", prog, s.components);
        return PNMF_EXIT_USAGE;
    }
    if (s.target_psnr > 0 && !s.residual) {
        fprintf(stderr, "%s: --target-psnr sets the residual layer's step: not with --no-residual or --shift vector\n", prog);
        return PNMF_EXIT_USAGE;
    }
    if (s.components == 0 && !s.residual) {
        fprintf(stderr, "%s: -k 0 codes the residual layer alone: not with --no-residual or --shift vector\n", prog);
        return PNMF_EXIT_USAGE;
    }
    const char *inpath = argv[optind], *outpath = argv[optind + 1];
    char err[512] = "";
    PnmfInputInfo info;
    PnmfInput *in = pnmf_input_open(inpath, &info, err, sizeof(err));
    if (!in) {
        fprintf(stderr, "%s: %s: %s\n", prog, inpath, err);
        return PNMF_EXIT_INPUT;
    }
    FILE *out = cli_tmp_open(outpath);
    if (!out) {
        fprintf(stderr, "%s: %s: cannot create a temporary file beside it: %s\n", prog, outpath, strerror(errno));
        pnmf_input_close(&in);
        return PNMF_EXIT_OUTPUT;
    }
    PnmfEncoder *enc = NULL;
    uint8_t *buf = malloc((size_t)info.width * info.height);
    int ret = buf ? pnmf_enc_open(&enc, &s, info.width, info.height, info.fps_num, info.fps_den, out)
                  : PNMF_ERR_NOMEM;
    int code = PNMF_EXIT_OK;
    const double t0 = cli_now();
    if (ret < 0) {
        const char *why = pnmf_enc_errmsg(enc);
        fprintf(stderr, "%s: %s: %s\n", prog, ret == PNMF_ERR_IO ? outpath : inpath,
                why && *why ? why : pnmf_strerror(ret));
        code = ret == PNMF_ERR_IO ? PNMF_EXIT_OUTPUT : cli_exit_code(ret);
        goto end;
    }
    for (long long nf = 0; max_frames < 0 || nf < max_frames; nf++) {
        int r = pnmf_input_read(in, buf, info.width, err, sizeof(err));
        if (r == 0) break;
        if (r < 0) {
            cli_progress_end();
            fprintf(stderr, "%s: %s: %s\n", prog, inpath, err);
            code = PNMF_EXIT_INPUT;
            goto end;
        }
        ret = pnmf_enc_push_frame(enc, buf, info.width);
        if (ret < 0) break;
        PnmfEncStats st;
        pnmf_enc_get_stats(enc, &st);
        cli_progress("encoding", st.frames, t0);
    }
    if (ret >= 0) ret = pnmf_enc_finish(enc);
    cli_progress_end();
    if (ret < 0) {
        const char *why = pnmf_enc_errmsg(enc);
        fprintf(stderr, "%s: %s: %s\n", prog, ret == PNMF_ERR_IO ? outpath : inpath,
                why && *why ? why : pnmf_strerror(ret));
        code = ret == PNMF_ERR_IO ? PNMF_EXIT_OUTPUT : cli_exit_code(ret);
        goto end;
    }
    PnmfEncStats st;
    pnmf_enc_get_stats(enc, &st);
    pnmf_enc_close(&enc);
    if (cli_tmp_commit(out, outpath) < 0) {
        out = NULL;
        fprintf(stderr, "%s: %s: cannot write: %s\n", prog, outpath, strerror(errno));
        code = PNMF_EXIT_OUTPUT;
        goto end;
    }
    out = NULL;
    if (!quiet) {
        const double dt = cli_now() - t0;
        const double bpp = st.frames ? 8.0 * st.bytes / ((double)st.frames * info.width * info.height) : 0;
        fprintf(stderr, "%s: frames %d  bytes %llu  bpp %.4f  psnr-y %.2f dB  time %.2f s (%.1f fps)", outpath,
                st.frames, (unsigned long long)st.bytes, bpp, st.psnr, dt, dt > 0 ? st.frames / dt : 0.0);
        if (st.scene_cuts) fprintf(stderr, "  scene cuts %d", st.scene_cuts);
        if (st.carried) fprintf(stderr, "  carried %d", st.carried);
        if (st.repeated) fprintf(stderr, "  repeated entries %d", st.repeated);
        if (st.fits_stopped) fprintf(stderr, "  fits stopped %d", st.fits_stopped);
        fputc('\n', stderr);
    }
end:
    pnmf_enc_close(&enc);
    if (out) cli_tmp_discard(out);
    pnmf_input_close(&in);
    free(buf);
    return code;
}
