/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pnmf-dec: decode a .pnmf file into PNG or PGM frames, a y4m stream, or the
 * MD5 of the frames. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_util.h"
#include "input/demuxer.h"
#include "output/muxer.h"
#include "pnmf/pnmf.h"

static const char *prog = "pnmf-dec";

/* The decoder's I/O errors are on the input side. */
static int dec_exit_code(int err) { return err == PNMF_ERR_IO ? PNMF_EXIT_INPUT : cli_exit_code(err); }

static void usage(FILE *f)
{
    fprintf(f,
            "usage: pnmf-dec [options] INPUT.pnmf OUTDIR/\n"
            "       pnmf-dec [options] INPUT.pnmf OUTPUT.mkv|.mp4|.webm|.gif|.apng|.y4m\n"
            "       pnmf-dec -f md5 INPUT.pnmf [OUTPUT]\n"
            "       pnmf-dec -f md5 --verify HASH INPUT.pnmf\n"
            "Decode INPUT.pnmf into OUTDIR/frame_000001.png, frame_000002.png, ... (OUTDIR is\n"
            "created if missing). With OUTDIR '-', write a y4m stream to stdout\n"
            "(pnmf-dec in.pnmf - | ffplay -). INPUT '-' reads stdin (then --start needs a\n"
            "seekable stdin).\n"
            "\n"
            "  -f, --format FMT     png, pgm, y4m, md5, or a video file: mkv (FFV1, lossless),\n"
            "                       mp4 (x264 lossless), webm (VP9 lossless), gif, apng;\n"
            "                       default: from OUTPUT's extension, else png (y4m for '-');\n"
            "                       md5 writes the MD5 of every frame's\n"
            "                       width x height gray bytes in order (no headers) as one\n"
            "                       line to OUTPUT, or to stdout when OUTPUT is '-' or absent\n"
            "      --codec NAME     a video file's encoder, any FFmpeg has (default: above)\n"
            "      --loglevel L     FFmpeg's messages: quiet, fatal (default), error, warning,\n"
            "                       info, verbose, debug\n"
            "      --verify HASH    with -f md5: compare the MD5 with HASH instead of writing\n"
            "                       it; exit 1 if they differ\n"
            "      --start N        first frame to decode, 0-based, found through the index\n"
            "                       (default 0)\n"
            "      --frames N       decode at most N frames (default: all)\n"
            "  -y                   overwrite an existing output; in OUTDIR, remove the frame\n"
            "                       files (frame_NNNNNN.png/.pgm) before writing the new ones\n"
            "  -n                   never overwrite (default: ask on a terminal, else refuse)\n"
            "  -Q, --quiet          no summary line\n"
            "  -h, --help           this help\n"
            "  -V, --version        print the version\n"
            "\n"
            "Exit status: 0 ok, 2 usage, 3 cannot read input, 4 invalid or corrupt data,\n"
            "5 cannot write output, 6 a size exceeds a limit, 1 other errors.\n");
}

/* fmt names a format of one file (y4m, mkv, ...). */
static int is_file_format(const char *fmt)
{
    char name[16];
    if (snprintf(name, sizeof(name), ".%s", fmt) >= (int)sizeof(name)) return 0;
    const char *f = pnmf_output_format_of(name);
    return f && !strcmp(f, fmt);
}

/* A frame file of this tool's: frame_ and 6 or more digits, .png or .pgm. */
static int is_frame_file(const char *name)
{
    if (strncmp(name, "frame_", 6)) return 0;
    const size_t digits = strspn(name + 6, "0123456789");
    return digits >= 6 && (!strcmp(name + 6 + digits, ".png") || !strcmp(name + 6 + digits, ".pgm"));
}

/* The frame files in dir, removed when remove is set (except one that is
 * the input). Their count, or -1 (errno) if one cannot be removed. */
static int frame_files(const char *dir, const char *inpath, int remove)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!is_frame_file(e->d_name)) continue;
        n++;
        char path[PATH_MAX];
        if (!remove || snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path)) continue;
        if (cli_same_file(path, inpath)) continue;
        if (unlink(path) < 0 && errno != ENOENT) {
            const int saved = errno;
            closedir(d);
            errno = saved;
            return -1;
        }
    }
    closedir(d);
    return n;
}

/* Ahead of any write: a file output is checked as every tool's is
 * (not the input, not an existing file without -y); an OUTDIR that holds
 * frame files is refused without -y, and with -y emptied of them now,
 * ahead of the first new frame, so that a failed or interrupted decode never
 * leaves older frames among the new ones, where they would pass for the
 * decode's. 0 or an exit code, the reason printed. */
static int check_output(const char *format, const char *outpath, const char *inpath, int verify, int policy)
{
    if (verify || !strcmp(outpath, "-")) return 0;
    if (strcmp(format, "png") && strcmp(format, "pgm"))
        return cli_check_output(prog, outpath, &inpath, 1, policy);
    const int n = frame_files(outpath, inpath, 0);
    if (n <= 0) return 0;
    const int ret = cli_check_folder(prog, outpath, inpath, n, "frame", policy);
    if (ret) return ret;
    if (frame_files(outpath, inpath, 1) < 0) {
        fprintf(stderr, "%s: %s: cannot remove the old frame files: %s\n", prog, outpath, strerror(errno));
        return PNMF_EXIT_OUTPUT;
    }
    return 0;
}

int main(int argc, char **argv)
{
    enum { OPT_START = 256, OPT_FRAMES, OPT_VERIFY, OPT_CODEC, OPT_LOGLEVEL };
    static const struct option longopts[] = {
        { "format", required_argument, NULL, 'f' }, { "start", required_argument, NULL, OPT_START },
        { "frames", required_argument, NULL, OPT_FRAMES }, { "verify", required_argument, NULL, OPT_VERIFY },
        { "quiet", no_argument, NULL, 'Q' },         { "codec", required_argument, NULL, OPT_CODEC },
        { "loglevel", required_argument, NULL, OPT_LOGLEVEL },
        { "help", no_argument, NULL, 'h' },         { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    cli_init();
    opterr = 0; /* cli_bad_option() says it in one line */
    const char *format = NULL, *verify = NULL, *codec = NULL;
    long long start = 0, max_frames = -1, v;
    int quiet = 0, c, policy = CLI_OUT_ASK;
    while ((c = getopt_long(argc, argv, ":f:QhVyn", longopts, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (strcmp(optarg, "png") && strcmp(optarg, "pgm") && strcmp(optarg, "md5") && !is_file_format(optarg)) {
                fprintf(stderr, "%s: option --format expects png, pgm, y4m, md5, mkv, mp4, webm, gif or apng, got '%s'\n",
                        prog, optarg);
                return PNMF_EXIT_USAGE;
            }
            format = optarg;
            break;
        case OPT_START: if (cli_parse_int(prog, "--start", optarg, 0, 1LL << 28, &v)) return PNMF_EXIT_USAGE; start = v; break;
        case OPT_FRAMES: if (cli_parse_int(prog, "--frames", optarg, 0, 1LL << 28, &v)) return PNMF_EXIT_USAGE; max_frames = v; break;
        case OPT_VERIFY:
            if (strlen(optarg) != 32 || strspn(optarg, "0123456789abcdefABCDEF") != 32) {
                fprintf(stderr, "%s: option --verify expects an MD5, 32 hex digits, got '%s'\n", prog, optarg);
                return PNMF_EXIT_USAGE;
            }
            verify = optarg;
            break;
        case OPT_CODEC: codec = optarg; break;
        case OPT_LOGLEVEL:
            if (pnmf_av_log_level(optarg) < 0) {
                fprintf(stderr, "%s: option --loglevel expects quiet, panic, fatal, error, warning, info, verbose, "
                        "debug or trace, got '%s'\n", prog, optarg);
                return PNMF_EXIT_USAGE;
            }
            break;
        case 'Q': quiet = 1; break;
        case 'y': policy = CLI_OUT_OVERWRITE; break;
        case 'n': policy = CLI_OUT_KEEP; break;
        case 'h': usage(stdout); return PNMF_EXIT_OK;
        case 'V': printf("pnmf-dec %s\n", PNMF_VERSION_STRING); return PNMF_EXIT_OK;
        default:
            cli_bad_option(prog, argv, c);
            return PNMF_EXIT_USAGE;
        }
    }
    const int is_md5 = format && !strcmp(format, "md5");
    if (verify && !is_md5) {
        fprintf(stderr, "%s: option --verify needs -f md5\n", prog);
        return PNMF_EXIT_USAGE;
    }
    const int npos = argc - optind;
    if (verify ? npos != 1 : is_md5 ? npos < 1 || npos > 2 : npos != 2) {
        fprintf(stderr, "%s: expected INPUT.pnmf%s; try '%s --help'\n", prog,
                verify ? " alone with --verify" : is_md5 ? " and at most one OUTPUT" : " and OUTDIR", prog);
        return PNMF_EXIT_USAGE;
    }
    const char *inpath = argv[optind], *outpath = argc - optind == 2 ? argv[optind + 1] : "-";
    if (!format) format = !strcmp(outpath, "-") ? "y4m" : pnmf_output_format_of(outpath) ? pnmf_output_format_of(outpath) : "png";
    if (!strcmp(outpath, "-") && strcmp(format, "y4m") && !is_md5) {
        fprintf(stderr, "%s: only y4m and md5 can go to stdout\n", prog);
        return PNMF_EXIT_USAGE;
    }
    const int is_frames = !strcmp(format, "png") || !strcmp(format, "pgm");
    if (codec && (is_frames || is_md5 || !strcmp(format, "y4m"))) {
        fprintf(stderr, "%s: option --codec needs a video file (mkv, mp4, webm, gif, apng)\n", prog);
        return PNMF_EXIT_USAGE;
    }
    const int from_stdin = !strcmp(inpath, "-");
    if (from_stdin && start > 0 && lseek(STDIN_FILENO, 0, SEEK_CUR) < 0) {
        fprintf(stderr, "%s: -: --start seeks through the file's index: not on a pipe (pnmf-dec --start N "
                "- < in.pnmf reads a file)\n", prog);
        return PNMF_EXIT_USAGE;
    }
    FILE *in = from_stdin ? stdin : fopen(inpath, "rb");
    if (!in) {
        fprintf(stderr, "%s: %s: %s\n", prog, inpath, strerror(errno));
        return PNMF_EXIT_INPUT;
    }
    PnmfDecoder *dec = NULL;
    PnmfOutput *out = NULL;
    FILE *tmp = NULL;         /* the y4m file's temporary name, while open */
    uint8_t *buf = NULL;
    char err[512] = "";
    int code = PNMF_EXIT_OK, frames = 0;
    const double t0 = cli_now();
    int ret = pnmf_dec_open(&dec, in);
    if (ret < 0) {
        const char *why = pnmf_dec_errmsg(dec);
        fprintf(stderr, "%s: %s: %s\n", prog, inpath, why && *why ? why : pnmf_strerror(ret));
        code = dec_exit_code(ret);
        goto end;
    }
    const PnmfStreamInfo *info = pnmf_dec_info(dec);
    if (start >= info->frame_count && info->frame_count > 0) {
        fprintf(stderr, "%s: %s: --start %lld is past the last frame (%d frames)\n", prog, inpath,
                start, info->frame_count);
        code = PNMF_EXIT_USAGE;
        goto end;
    }
    if (start > 0 && (ret = pnmf_dec_seek(dec, (int)start)) < 0) {
        fprintf(stderr, "%s: %s: %s\n", prog, inpath, *pnmf_dec_errmsg(dec) ? pnmf_dec_errmsg(dec) : pnmf_strerror(ret));
        code = dec_exit_code(ret);
        goto end;
    }
    code = check_output(format, outpath, inpath, verify != NULL, policy);
    if (code) goto end;
    PnmfOutputInfo oi = { .width = info->width, .height = info->height, .fps_num = info->fps_num,
                          .fps_den = info->fps_den, .codec = codec, .color_range = info->color_range,
                          .color_primaries = info->color_primaries, .color_trc = info->color_trc,
                          .colorspace = info->colorspace, .time_base_num = info->time_base_num,
                          .time_base_den = info->time_base_den };
    /* A y4m, md5 or video file is written beside its name and renamed when
     * complete, as frame files are: a failed decode leaves no partial file
     * and an existing one untouched. A device or FIFO (/dev/null) is
     * written in place: the rename would replace it with a regular file. */
    const char *dest = outpath;
    if (!is_frames && strcmp(outpath, "-") && !cli_is_special(outpath)) {
        if (!(tmp = cli_tmp_open(outpath))) {
            fprintf(stderr, "%s: %s: cannot create a temporary file beside it: %s\n", prog, outpath,
                    strerror(errno));
            code = PNMF_EXIT_OUTPUT;
            goto end;
        }
        dest = cli_tmp_name();
    }
    out = pnmf_output_open(format, dest, &oi, err, sizeof(err));
    if (!out) {
        fprintf(stderr, "%s: %s: %s\n", prog, outpath, err);
        code = PNMF_EXIT_OUTPUT;
        goto end;
    }
    if (verify && pnmf_output_verify(out, verify, err, sizeof(err)) < 0) {
        fprintf(stderr, "%s: option --verify: %s\n", prog, err);
        code = PNMF_EXIT_USAGE;
        goto end;
    }
    buf = malloc((size_t)info->width * info->height);
    if (!buf) {
        fprintf(stderr, "%s: %s: out of memory\n", prog, inpath);
        code = PNMF_EXIT_FAIL;
        goto end;
    }
    int64_t pts0 = 0;
    while (max_frames < 0 || frames < max_frames) {
        ret = pnmf_dec_read_frame(dec, buf, info->width);
        if (ret == PNMF_ERR_EOF) break;
        if (ret < 0) {
            cli_progress_end();
            const char *why = pnmf_dec_errmsg(dec);
            if (!*why) why = pnmf_strerror(ret);
            /* Frames are named as their files are, from 1. Past the last
             * one, what failed is the check of the index, the trailer and
             * the end of the file. */
            if (start + frames < info->frame_count)
                fprintf(stderr, "%s: %s: frame %lld: %s\n", prog, inpath, start + frames + 1, why);
            else
                fprintf(stderr, "%s: %s: after the last frame (%d): %s\n", prog, inpath,
                        info->frame_count, why);
            code = dec_exit_code(ret);
            goto end;
        }
        /* the file's frame times, the output starting at 0 as FFmpeg's do */
        int64_t pts = frames, dur = 1;
        pnmf_dec_frame_time(dec, &pts, &dur);
        if (!frames) pts0 = pts;
        if (pnmf_output_write_timed(out, buf, info->width, pts - pts0, dur, err, sizeof(err)) < 0) {
            cli_progress_end();
            fprintf(stderr, "%s: %s: %s\n", prog, outpath, err);
            code = PNMF_EXIT_OUTPUT;
            goto end;
        }
        frames++;
        cli_progress("decoding", frames, max_frames >= 0 && max_frames < info->frame_count - start
                                              ? max_frames : info->frame_count - start, t0);
    }
    cli_progress_end();
    ret = pnmf_output_close(&out, err, sizeof(err));
    if (ret == PNMF_OUTPUT_MISMATCH) {
        fprintf(stderr, "%s: %s: --verify: %s\n", prog, inpath, err);
        code = PNMF_EXIT_FAIL;
        goto end;
    }
    if (ret < 0) {
        fprintf(stderr, "%s: %s: %s\n", prog, outpath, err);
        code = PNMF_EXIT_OUTPUT;
        goto end;
    }
    if (tmp) {
        const int committed = cli_tmp_commit(tmp, outpath);
        tmp = NULL;
        if (committed < 0) {
            fprintf(stderr, "%s: %s: cannot write: %s\n", prog, outpath, strerror(errno));
            code = PNMF_EXIT_OUTPUT;
            goto end;
        }
    }
    if (!quiet) {
        const double dt = cli_now() - t0;
        fprintf(stderr, "%s: frames %d  %dx%d  time %.2f s (%.1f fps)\n", outpath, frames, info->width,
                info->height, dt, dt > 0 ? frames / dt : 0.0);
    }
end:
    if (out) pnmf_output_close(&out, err, sizeof(err));
    if (tmp) cli_tmp_discard(tmp);
    pnmf_dec_close(&dec);
    if (in != stdin) fclose(in);
    free(buf);
    return code;
}
