/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pnmf-enc: encode any clip FFmpeg reads into a .pnmf file. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "cli_util.h"
#include "enc_opts.h"
#include "input/demuxer.h"
#include "pnmf/pnmf.h"
#include "../src/tuning.h"

static const char *prog = "pnmf-enc";

static void usage(FILE *f)
{
    fprintf(f,
            "usage: pnmf-enc [options] INPUT OUTPUT.pnmf\n"
            "       pnmf-enc --scenes [--start N] [--frames N] INPUT\n"
            "Encode the gray (luma) frames of INPUT, any clip FFmpeg reads (mp4, mkv, avi, gif,\n"
            "y4m, an image sequence such as dir/frame_%%06d.png or 'dir/*.png'), with\n"
            "Permutation NMF. INPUT '-' reads stdin (y4m or anything FFmpeg detects); OUTPUT\n"
            "'-' writes to stdout when it is a regular file (pnmf-enc IN - > out.pnmf).\n"
            "\n");
    enc_opts_usage(f, 0);
    fprintf(f,
            "      --start N        begin at frame N (0-based) of INPUT: a seek where the\n"
            "                       demuxer can, else the frames before it decoded and discarded\n"
            "      --frames N       encode only the first N frames (default: all)\n"
            "      --start-number N an image sequence's first number (default: found from 0\n"
            "                       to 4)\n"
            "      --strict         a frame that cannot be read stops the encode (exit 3); by\n"
            "                       default the last good frame stands in for it, counted\n"
            "  -y                   overwrite OUTPUT if it exists\n"
            "  -n                   never overwrite OUTPUT (default: ask on a terminal,\n"
            "                       else refuse)\n"
            "  -v, --verbose        the encoder's decisions on stderr, one line per window,\n"
            "                       and FFmpeg's errors; twice (-vv): the encoder's inner\n"
            "                       figures and FFmpeg's warnings (PNMF_DEBUG: everything)\n"
            "      --loglevel L     FFmpeg's messages: quiet, fatal (default), error, warning,\n"
            "                       info, verbose, debug\n"
            "      --scenes         encode nothing: print 'cut F' for each frame F (0-based,\n"
            "                       from --start) before which the encoder's scene-cut\n"
            "                       detector cuts, one a line, then 'frames N'\n"
            "  -Q, --quiet          no summary line\n"
            "  -h, --help           this help\n"
            "  -V, --version        print the version\n"
            "\n"
            "Exit status: 0 ok, 2 usage, 3 cannot read input, 4 invalid data, 5 cannot write\n"
            "output, 6 a size exceeds a limit, 1 other errors.\n");
}

/* The input module's warnings: one line each, naming the input. */
static void input_warning(void *cookie, const char *msg)
{
    cli_progress_end();
    fprintf(stderr, "%s: %s: warning: %s\n", prog, (const char *)cookie, msg);
}

/* Output '-': the header is rewritten at the end, so stdout must be a file
 * the encoder can seek in, written from where it stands (not appended).
 * 1, or 0 with the reason printed. */
static int stdout_seekable(void)
{
    struct stat sb;
    const int fl = fcntl(STDOUT_FILENO, F_GETFL);
    if (fstat(STDOUT_FILENO, &sb) == 0 && S_ISREG(sb.st_mode) && fl >= 0 && !(fl & O_APPEND) &&
        lseek(STDOUT_FILENO, 0, SEEK_CUR) >= 0)
        return 1;
    fprintf(stderr, "%s: -: a .pnmf file's header is rewritten when the encode ends, so standard output "
            "must be a regular file opened for writing (pnmf-enc IN - > out.pnmf), not a pipe, a terminal "
            "or a file opened for appending\n", prog);
    return 0;
}

/* --start: make frame start the next one read; the error is printed. */
static int seek_start(PnmfInput *in, const char *inpath, long long start)
{
    char err[512] = "";
    const int ret = pnmf_input_seek(in, start, err, sizeof(err));
    if (ret > 0) return 0;
    if (ret == 0) fprintf(stderr, "%s: %s: --start %lld: %s\n", prog, inpath, start, err);
    else fprintf(stderr, "%s: %s: %s\n", prog, inpath, err);
    return -1;
}

/* --scenes: the frames the encoder's scene-cut detector cuts before, as
 * pnmf-enc with these options would find them; nothing is encoded. */
static int print_scenes(const char *inpath, long long start, long long max_frames, const PnmfEncSettings *s)
{
    if (!inpath) {
        fprintf(stderr, "%s: --scenes expects INPUT alone; try '%s --help'\n", prog, prog);
        return PNMF_EXIT_USAGE;
    }
    char err[512] = "";
    PnmfInputInfo info;
    PnmfInput *in = pnmf_input_open(inpath, &info, err, sizeof(err));
    if (!in) {
        fprintf(stderr, "%s: %s: %s\n", prog, inpath, err);
        return PNMF_EXIT_INPUT;
    }
    const size_t n = (size_t)info.width * info.height;
    uint8_t *buf = malloc(3 * n);
    int code = PNMF_EXIT_OK;
    if (!buf) {
        fprintf(stderr, "%s: out of memory\n", prog);
        code = PNMF_EXIT_FAIL;
    } else if (start && seek_start(in, inpath, start) < 0) {
        code = PNMF_EXIT_INPUT;
    }
    /* the encoder's rule: a frame that differs from the one before it is
     * a cut if the frame after it differs from that one too (or there is
     * none), else a flash */
    long long f = 0, last_cut = 0, held = -1;
    uint8_t *before = buf + 2 * n; /* the frame before the held cut */
    const double t0 = cli_now();
    while (code == PNMF_EXIT_OK && (max_frames < 0 || f < max_frames)) {
        uint8_t *cur = buf + (f & 1) * n, *prev = buf + !(f & 1) * n;
        const int r = pnmf_input_read(in, cur, info.width, err, sizeof(err));
        if (r == 0) break;
        if (r < 0) {
            cli_progress_end();
            fprintf(stderr, "%s: %s: %s\n", prog, inpath, err);
            code = PNMF_EXIT_INPUT;
            break;
        }
        if (held >= 0) {
            if (pnmf_scene_cut(before, cur, info.width, info.width, info.height, INT_MAX) > 0) {
                printf("cut %lld\n", held);
                last_cut = held;
            }
            held = -1;
        } else if (f > 0 && s->scene_cut &&
                   pnmf_scene_cut(prev, cur, info.width, info.width, info.height, (int)(f - last_cut)) > 0) {
            held = f;
            memcpy(before, prev, n);
        }
        f++;
        cli_progress("scanning", f, info.frame_estimate > start ? info.frame_estimate - start : -1, t0);
    }
    if (code == PNMF_EXIT_OK && held >= 0) printf("cut %lld\n", held);
    cli_progress_end();
    if (code == PNMF_EXIT_OK) printf("frames %lld\n", f);
    if (code == PNMF_EXIT_OK && (fflush(stdout) || ferror(stdout))) {
        fprintf(stderr, "%s: cannot write the standard output\n", prog);
        code = PNMF_EXIT_OUTPUT;
    }
    pnmf_input_close(&in);
    free(buf);
    return code;
}

int main(int argc, char **argv)
{
    enum { OPT_FRAMES = 256, OPT_START_NUMBER, OPT_STRICT, OPT_LOGLEVEL, OPT_START, OPT_SCENES };
    static const struct option own[] = {
        { "start", required_argument, NULL, OPT_START },   { "scenes", no_argument, NULL, OPT_SCENES },
        { "frames", required_argument, NULL, OPT_FRAMES }, { "verbose", no_argument, NULL, 'v' },
        { "start-number", required_argument, NULL, OPT_START_NUMBER }, { "strict", no_argument, NULL, OPT_STRICT },
        { "loglevel", required_argument, NULL, OPT_LOGLEVEL },
        { "quiet", no_argument, NULL, 'Q' },               { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },             { NULL, 0, NULL, 0 },
    };
    struct option longopts[sizeof(own) / sizeof(own[0]) + ENC_OPTS_MAX];
    char optstring[64];
    enc_opts_longopts(longopts, own, 0);
    enc_opts_optstring(optstring, sizeof(optstring), "vQhVyn", 0);
    /* The encoder takes and frees its planes window after window (the
     * pose search's, the exact matcher's indexes, some of them huge
     * pages): glibc gives large freed blocks back to the kernel, and the
     * next window faults the same amount in afresh, each page cleared by
     * the kernel. Kept in the heap, they are reused as they are. */
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, PNMF_CLI_MMAP_MAX);
    mallopt(M_TRIM_THRESHOLD, PNMF_CLI_TRIM_MIN);
#endif
    cli_init();
    opterr = 0; /* cli_bad_option() says it in one line */
    EncOpts eo;
    enc_opts_init(&eo, 0);
    PnmfEncSettings *const s = &eo.s;
    long long max_frames = -1, v, start = 0;
    int quiet = 0, verbose = 0, scenes = 0, c, got, policy = CLI_OUT_ASK, loglevel_set = 0;
    PnmfInputOptions io;
    pnmf_input_default_options(&io);
    while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
        if ((got = enc_opts_parse(&eo, prog, c, optarg)) < 0) return PNMF_EXIT_USAGE;
        if (got > 0) continue;
        switch (c) {
        case OPT_FRAMES: if (cli_parse_int(prog, "--frames", optarg, 1, 1LL << 28, &max_frames)) return PNMF_EXIT_USAGE; break;
        case OPT_START_NUMBER: if (cli_parse_int(prog, "--start-number", optarg, 0, 1LL << 30, &v)) return PNMF_EXIT_USAGE; io.start_number = (int)v; break;
        case OPT_STRICT: io.strict = 1; break;
        case OPT_LOGLEVEL:
            if (pnmf_av_log_level(optarg) < 0) {
                fprintf(stderr, "%s: option --loglevel expects quiet, panic, fatal, error, warning, info, verbose, "
                        "debug or trace, got '%s'\n", prog, optarg);
                return PNMF_EXIT_USAGE;
            }
            loglevel_set = 1;
            break;
        case 'y': policy = CLI_OUT_OVERWRITE; break;
        case 'n': policy = CLI_OUT_KEEP; break;
        case OPT_START: if (cli_parse_int(prog, "--start", optarg, 0, (1LL << 28) - 1, &start)) return PNMF_EXIT_USAGE; break;
        case OPT_SCENES: scenes = 1; break;
        case 'v': verbose++; break;
        case 'Q': quiet = 1; break;
        case 'h': usage(stdout); return PNMF_EXIT_OK;
        case 'V': printf("pnmf-enc %s\n", PNMF_VERSION_STRING); return PNMF_EXIT_OK;
        default:
            cli_bad_option(prog, argv, c);
            return PNMF_EXIT_USAGE;
        }
    }
    if (scenes) return print_scenes(argc - optind == 1 ? argv[optind] : NULL, start, max_frames, &eo.s);
    if (argc - optind != 2) {
        fprintf(stderr, "%s: expected INPUT and OUTPUT.pnmf; try '%s --help'\n", prog, prog);
        return PNMF_EXIT_USAGE;
    }
    if (enc_opts_finish(&eo, prog) < 0) return PNMF_EXIT_USAGE;
    s->logger = cli_stderr_logger(verbose);
    if (!loglevel_set && verbose) pnmf_av_log_level(verbose > 1 ? "warning" : "error");
    const char *inpath = argv[optind], *outpath = argv[optind + 1];
    const int to_stdout = !strcmp(outpath, "-");
    if (to_stdout && !stdout_seekable()) return PNMF_EXIT_OUTPUT;
    char err[512] = "";
    PnmfInputInfo info;
    io.warn = input_warning;
    io.cookie = (void *)inpath;
    PnmfInput *in = pnmf_input_open_opts(inpath, &io, &info, err, sizeof(err));
    if (!in) {
        fprintf(stderr, "%s: %s: %s\n", prog, inpath, err);
        return PNMF_EXIT_INPUT;
    }
    int code = cli_check_output(prog, outpath, &inpath, 1, policy);
    if (code) {
        pnmf_input_close(&in);
        return code;
    }
    if (start && seek_start(in, inpath, start) < 0) {
        pnmf_input_close(&in);
        return PNMF_EXIT_INPUT;
    }
    FILE *out = to_stdout ? stdout : cli_tmp_open(outpath);
    if (!out) {
        fprintf(stderr, "%s: %s: cannot create a temporary file beside it: %s\n", prog, outpath, strerror(errno));
        pnmf_input_close(&in);
        return PNMF_EXIT_OUTPUT;
    }
    PnmfEncoder *enc = NULL;
    uint8_t *buf = malloc((size_t)info.width * info.height), *next = malloc((size_t)info.width * info.height);
    /* The first frame is read before the encoder opens: its time is the file's start. */
    int have = buf && next && max_frames != 0 ? pnmf_input_read(in, buf, info.width, err, sizeof(err)) : 0;
    int64_t pts, dur, prev_dur = 0;
    pnmf_input_last_time(in, &pts, &dur);
    /* the source's levels, colour and clock, which the decoder gives back */
    s->color_range = info.color_range;
    s->color_primaries = info.color_primaries;
    s->color_trc = info.color_trc;
    s->colorspace = info.colorspace;
    if (info.time_base_num > 0 && info.time_base_den > 0) {
        s->time_base_num = info.time_base_num, s->time_base_den = info.time_base_den;
        s->time_start = have > 0 && pts > 0 ? pts : 0;
    }
    int ret = buf && next ? pnmf_enc_open(&enc, s, info.width, info.height, info.fps_num, info.fps_den, out)
                          : PNMF_ERR_NOMEM;
    const double t0 = cli_now();
    const int64_t left = info.frame_estimate > start ? info.frame_estimate - start : -1;
    const int64_t total = max_frames > 0 && (left < 0 || max_frames < left) ? max_frames : left;
    if (ret < 0) {
        const char *why = pnmf_enc_errmsg(enc);
        fprintf(stderr, "%s: %s: %s\n", prog, ret == PNMF_ERR_IO ? outpath : inpath,
                why && *why ? why : pnmf_strerror(ret));
        code = ret == PNMF_ERR_IO ? PNMF_EXIT_OUTPUT : cli_exit_code(ret);
        goto end;
    }
    for (long long nf = 0; have != 0; nf++) {
        if (have < 0) {
            cli_progress_end();
            fprintf(stderr, "%s: %s: %s\n", prog, inpath, err);
            code = PNMF_EXIT_INPUT;
            goto end;
        }
        /* A frame lasts until the next one starts; the last one as the
         * demuxer says, else as the one before it. */
        have = max_frames < 0 || nf + 1 < max_frames ? pnmf_input_read(in, next, info.width, err, sizeof(err)) : 0;
        int64_t npts = -1, ndur = -1;
        if (have > 0) pnmf_input_last_time(in, &npts, &ndur);
        int64_t d = 0; /* 0: one frame at the frame rate */
        if (have > 0 && pts >= 0 && npts > pts) d = npts - pts;
        else if (have == 0 && dur > 0) d = dur;
        else if (have == 0 && pts >= 0) d = prev_dur;
        if (d > UINT32_MAX) d = UINT32_MAX;
        ret = d > 0 && s->time_base_num ? pnmf_enc_push_frame_timed(enc, buf, info.width, d)
                                        : pnmf_enc_push_frame(enc, buf, info.width);
        if (ret < 0) break;
        uint8_t *t = buf;
        buf = next, next = t;
        pts = npts, prev_dur = d, dur = ndur;
        /* the encoder counts frames as their window is written: count pushed ones */
        cli_progress("encoding", nf + 1, total, t0);
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
    if (to_stdout) {
        out = NULL;
        if (fflush(stdout) != 0) {
            fprintf(stderr, "%s: standard output: cannot write: %s\n", prog, strerror(errno));
            code = PNMF_EXIT_OUTPUT;
            goto end;
        }
    } else if (cli_tmp_commit(out, outpath) < 0) {
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
        if (pnmf_input_concealed(in)) fprintf(stderr, "  concealed %lld", (long long)pnmf_input_concealed(in));
        fputc('\n', stderr);
    }
end:
    pnmf_enc_close(&enc);
    if (out && out != stdout) cli_tmp_discard(out);
    pnmf_input_close(&in);
    free(buf);
    free(next);
    return code;
}
