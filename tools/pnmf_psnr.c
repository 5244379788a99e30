/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pnmf-psnr: luma PSNR of one clip against another.
 *
 * Both clips are read as gray8 (any format pnmf_input_open() takes) and
 * compared frame by frame over the frames both have, or the first N, on the
 * same levels (a limited-range clip against a full-range one is expanded
 * first, as FFmpeg shows it). The MSE
 * is the mean over every pixel of every compared frame, and
 * PSNR-Y = 10 log10(255^2 / MSE), printed as 999.000 when the clips match.
 * Exit codes (tools/cli_util.h): 0; 2 for a bad command line; 3 when a clip
 * cannot be read or the sizes differ; 1 otherwise.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "input/demuxer.h"
#include "output/muxer.h"
#include "pnmf/pnmf.h"

#define PROG "pnmf-psnr"

typedef struct PsnrSettings {
    long frames;            /* compare at most this many frames; 0 = all */
    const char *ref, *test;
} PsnrSettings;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: " PROG " [--frames N] REF TEST\n"
            "Luma PSNR of TEST against REF, both read as 8-bit gray (mp4, mkv, y4m,\n"
            "dir/frame_%%06d.png, ...), over the frames both clips have, on the same levels:\n"
            "a limited-range clip (16..235: untagged YUV too) against a full-range one is\n"
            "expanded to full range first, as FFmpeg shows it.\n"
            "  -n, --frames N   compare only the first N frames\n"
            "  -h, --help       print this help\n"
            "  -V, --version    print the version\n"
            "Prints: frames F psnr-y XX.XXX mse M.MMMMMM (psnr-y 999.000 when equal)\n");
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, PROG ": ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nusage: " PROG " [--frames N] REF TEST\n");
    return PNMF_EXIT_USAGE;
}

/* 0 to go on, 1 to exit 0 (help printed), PNMF_EXIT_USAGE (message printed). */
static int parse_args(int argc, char **argv, PsnrSettings *s)
{
    static const struct option opts[] = {
        { "frames", required_argument, NULL, 'n' },
        { "help",   no_argument,       NULL, 'h' },
        { "version", no_argument,      NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":n:hV", opts, NULL)) != -1) {
        switch (c) {
        case 'n': {
            char *end;
            errno = 0;
            const long v = strtol(optarg, &end, 10);
            if (errno || end == optarg || *end || v <= 0)
                return usage_error("--frames expects a positive integer, not '%s'", optarg);
            s->frames = v;
            break;
        }
        case 'h':
            usage(stdout);
            return 1;
        case 'V':
            printf(PROG " %s\n", PNMF_VERSION_STRING);
            return 1;
        case ':':
            return usage_error("%s needs a value", argv[optind - 1]);
        default:
            return usage_error("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind != 2)
        return usage_error("%s", argc - optind < 2 ? "expected two clips, REF and TEST"
                                                   : "too many arguments");
    s->ref = argv[optind];
    s->test = argv[optind + 1];
    return 0;
}

static int fail(const char *file, const char *reason)
{
    fprintf(stderr, PROG ": %s: %s\n", file, reason);
    return 1;
}

int main(int argc, char **argv)
{
    PsnrSettings s = { 0 };
    int ret = parse_args(argc, argv, &s);
    if (ret)
        return ret == 1 ? PNMF_EXIT_OK : ret;

    char err[256] = "";
    PnmfInputInfo ri, ti;
    PnmfInput *ref = NULL, *test = NULL;
    uint8_t *rbuf = NULL, *tbuf = NULL;
    ret = PNMF_EXIT_INPUT;

    if (!(ref = pnmf_input_open(s.ref, &ri, err, sizeof(err)))) {
        fail(s.ref, err);
        goto end;
    }
    if (!(test = pnmf_input_open(s.test, &ti, err, sizeof(err)))) {
        fail(s.test, err);
        goto end;
    }
    if (ri.width != ti.width || ri.height != ti.height) {
        snprintf(err, sizeof(err), "size %dx%d differs from the reference's %dx%d",
                 ti.width, ti.height, ri.width, ri.height);
        fail(s.test, err);
        goto end;
    }
    const size_t n = (size_t)ri.width * ri.height;
    if (!(rbuf = malloc(n)) || !(tbuf = malloc(n))) {
        fail(s.ref, "out of memory");
        ret = PNMF_EXIT_FAIL;
        goto end;
    }

    /* The same levels on both sides: when one clip is limited range and the
     * other full, the limited one is expanded as FFmpeg shows it (gray
     * that says nothing of its range, such as PGM, is taken to have the
     * other clip's). */
    uint8_t lut[256];
    pnmf_output_range_lut(lut);
    const int expand_ref = ri.color_range == 1 && ti.color_range == 2 && !ti.color_range_assumed;
    const int expand_test = ti.color_range == 1 && ri.color_range == 2 && !ri.color_range_assumed;

    uint64_t sse = 0;
    long frames = 0;
    while (!s.frames || frames < s.frames) {
        const int rr = pnmf_input_read(ref, rbuf, ri.width, err, sizeof(err));
        if (rr < 0) {
            fail(s.ref, err);
            goto end;
        }
        const int tr = rr ? pnmf_input_read(test, tbuf, ti.width, err, sizeof(err)) : 0;
        if (tr < 0) {
            fail(s.test, err);
            goto end;
        }
        if (!rr || !tr)
            break;
        for (size_t i = 0; expand_ref && i < n; i++) rbuf[i] = lut[rbuf[i]];
        for (size_t i = 0; expand_test && i < n; i++) tbuf[i] = lut[tbuf[i]];
        uint64_t frame_sse = 0;
        for (size_t i = 0; i < n; i++) {
            const int d = rbuf[i] - tbuf[i];
            frame_sse += (uint64_t)(d * d);
        }
        sse += frame_sse;
        frames++;
    }

    if (!frames) {
        fail(s.ref, "no frames to compare");
        goto end;
    }
    const double mse = (double)sse / ((double)n * frames);
    const double psnr = sse ? 10.0 * log10(255.0 * 255.0 / mse) : 999.0;
    printf("frames %ld psnr-y %.3f mse %.6f\n", frames, psnr, mse);
    ret = PNMF_EXIT_OK;

end:
    free(rbuf);
    free(tbuf);
    pnmf_input_close(&ref);
    pnmf_input_close(&test);
    return ret;
}
