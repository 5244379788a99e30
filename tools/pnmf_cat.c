/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pnmf-cat: join .pnmf files of one clip's parts into one file (pnmf_cat()). */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "cli_util.h"
#include "pnmf/pnmf.h"

static const char *prog = "pnmf-cat";

static void usage(FILE *f)
{
    fprintf(f,
            "usage: pnmf-cat [options] -o OUTPUT.pnmf INPUT.pnmf...\n"
            "Join .pnmf files into one, their frames in the order given: the windows are\n"
            "copied as stored (nothing is encoded again), the frame numbers, the index and\n"
            "the frame count made anew. The inputs must have the same frame size and rate\n"
            "and have been encoded with the same -q, -k, -w and --shift (pnmf-enc --start N\n"
            "--frames M makes such parts of one clip); each is checked as the decoder reads\n"
            "it. OUTPUT is written to a temporary file renamed when complete: on an error\n"
            "nothing is left. Every input is open at once (the limit of open files).\n"
            "\n"
            "  -o, --output FILE    the joined file (required)\n"
            "  -y                   overwrite OUTPUT if it exists\n"
            "  -n                   never overwrite OUTPUT (default: ask on a terminal,\n"
            "                       else refuse)\n"
            "  -Q, --quiet          no summary line\n"
            "  -h, --help           this help\n"
            "  -V, --version        print the version\n"
            "\n"
            "Exit status: 0 ok, 1 the inputs do not match, 2 usage, 3 cannot read an input,\n"
            "4 invalid data, 5 cannot write the output, 6 a size exceeds a limit.\n");
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "output", required_argument, NULL, 'o' }, { "quiet", no_argument, NULL, 'Q' },
        { "help", no_argument, NULL, 'h' },         { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    cli_init();
    opterr = 0;
    const char *outpath = NULL;
    int quiet = 0, c, policy = CLI_OUT_ASK;
    while ((c = getopt_long(argc, argv, ":o:ynQhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': outpath = optarg; break;
        case 'y': policy = CLI_OUT_OVERWRITE; break;
        case 'n': policy = CLI_OUT_KEEP; break;
        case 'Q': quiet = 1; break;
        case 'h': usage(stdout); return PNMF_EXIT_OK;
        case 'V': printf("pnmf-cat %s\n", PNMF_VERSION_STRING); return PNMF_EXIT_OK;
        default: cli_bad_option(prog, argv, c); return PNMF_EXIT_USAGE;
        }
    }
    const int n = argc - optind;
    if (!outpath || n < 1) {
        fprintf(stderr, "%s: expected -o OUTPUT.pnmf and at least one INPUT.pnmf; try '%s --help'\n", prog, prog);
        return PNMF_EXIT_USAGE;
    }
    char *const *names = argv + optind;
    const int checked = cli_check_output(prog, outpath, (const char *const *)names, n, policy);
    if (checked) return checked;
    FILE **files = calloc((size_t)n, sizeof(*files));
    PnmfIO *ios = calloc((size_t)n, sizeof(*ios));
    const PnmfIO **in = calloc((size_t)n, sizeof(*in));
    FILE *out = NULL;
    int code = PNMF_EXIT_OK;
    if (!files || !ios || !in) {
        fprintf(stderr, "%s: out of memory\n", prog);
        code = PNMF_EXIT_FAIL;
        goto end;
    }
    for (int i = 0; i < n; i++) {
        if (!(files[i] = fopen(names[i], "rb"))) {
            fprintf(stderr, "%s: %s: cannot open: %s\n", prog, names[i], strerror(errno));
            code = PNMF_EXIT_INPUT;
            goto end;
        }
        pnmf_io_file(&ios[i], files[i], 0);
        in[i] = &ios[i];
    }
    if (!(out = cli_tmp_open(outpath))) {
        fprintf(stderr, "%s: %s: cannot create a temporary file beside it: %s\n", prog, outpath, strerror(errno));
        code = PNMF_EXIT_OUTPUT;
        goto end;
    }
    PnmfIO oio;
    pnmf_io_file(&oio, out, 1);
    char err[512] = "";
    int bad = -1;
    const int ret = pnmf_cat(&oio, in, n, &bad, err, sizeof(err));
    if (ret < 0) {
        fprintf(stderr, "%s: %s: %s\n", prog, bad >= 0 ? names[bad] : outpath, *err ? err : pnmf_strerror(ret));
        code = bad < 0 ? (ret == PNMF_ERR_IO ? PNMF_EXIT_OUTPUT : cli_exit_code(ret))
             : ret == PNMF_ERR_ARG ? PNMF_EXIT_FAIL
             : ret == PNMF_ERR_IO  ? PNMF_EXIT_INPUT
                                   : cli_exit_code(ret);
        goto end;
    }
    const int64_t bytes = oio.seek(oio.opaque, 0, SEEK_END);
    if (cli_tmp_commit(out, outpath) < 0) {
        out = NULL;
        fprintf(stderr, "%s: %s: cannot write: %s\n", prog, outpath, strerror(errno));
        code = PNMF_EXIT_OUTPUT;
        goto end;
    }
    out = NULL;
    if (!quiet) fprintf(stderr, "%s: %d parts, %lld bytes\n", outpath, n, (long long)bytes);
end:
    if (out) cli_tmp_discard(out);
    for (int i = 0; files && i < n; i++)
        if (files[i]) fclose(files[i]);
    free(files);
    free(ios);
    free(in);
    return code;
}
