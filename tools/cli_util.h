/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared pieces of the command-line tools. */
#ifndef PNMF_TOOLS_CLI_UTIL_H
#define PNMF_TOOLS_CLI_UTIL_H

#include <stdint.h>
#include <stdio.h>

#include "pnmf/common.h"

/* Exit codes of every tool (README, "Exit codes"). */
enum {
    PNMF_EXIT_OK = 0,
    PNMF_EXIT_FAIL = 1,     /* anything else */
    PNMF_EXIT_USAGE = 2,    /* bad command line */
    PNMF_EXIT_INPUT = 3,    /* cannot read the input */
    PNMF_EXIT_CORRUPT = 4,  /* invalid or corrupt data */
    PNMF_EXIT_OUTPUT = 5,   /* cannot write the output */
    PNMF_EXIT_LIMIT = 6,    /* a size exceeds a limit */
};

/* Call first in main(): a write past a file-size limit (ulimit -f) then
 * fails with EFBIG, which the tool reports (exit 5), instead of raising
 * SIGXFSZ, which would kill it and leave its temporary file behind. */
void cli_init(void);

/* The exit code for a libpnmf error. */
int cli_exit_code(int pnmf_err);

/* Parse an integer option value in [lo, hi]; on failure print
 * "PROG: option OPT expects an integer in [lo, hi], got 'VAL'" and return -1. */
int cli_parse_int(const char *prog, const char *opt, const char *val, long long lo, long long hi,
                  long long *out);

/* After getopt_long() (optstring starting with ':', opterr = 0) returned
 * c = '?' or ':': print "PROG: invalid option 'X'; try 'PROG --help'" or
 * "PROG: option X needs a value; ...", one line. */
void cli_bad_option(const char *prog, char **argv, int c);

/* Whether path names an existing file that is neither a regular file nor
 * a folder (a device such as /dev/null, a FIFO): such an output is written
 * in place, as a temporary file renamed onto it would replace it. */
int cli_is_special(const char *path);

/* Open a temporary file beside target (same directory, so rename() is
 * atomic) and remember it: until cli_tmp_commit() or cli_tmp_discard(), a
 * SIGINT, SIGTERM or SIGHUP removes it. Returns NULL with errno set. */
FILE *cli_tmp_open(const char *target);
/* The name of the temporary file cli_tmp_open() made, for a writer that
 * opens it by name; valid until cli_tmp_commit() or cli_tmp_discard(). */
const char *cli_tmp_name(void);
/* Close, fsync and rename the temporary file onto target; 0 or -1 (errno). */
int cli_tmp_commit(FILE *f, const char *target);
/* Close and remove the temporary file. */
void cli_tmp_discard(FILE *f);

/* A PnmfLogger that prints the library's messages on stderr, one line each:
 * every level when PNMF_DEBUG is set in the environment, else those up to
 * verbose (0: none, the callback left NULL; 1: PNMF_LOG_INFO; 2 or more:
 * PNMF_LOG_DEBUG). The errors reach the tools through the calls' results,
 * so verbose 0 prints nothing. */
PnmfLogger cli_stderr_logger(int verbose);

/* What a tool does with an output that exists: ask on a terminal (the
 * default), overwrite it (-y), or keep it (-n). */
enum { CLI_OUT_ASK, CLI_OUT_OVERWRITE, CLI_OUT_KEEP };

/* 1 when a and b name one existing file, through hard and symbolic links
 * (same st_dev and st_ino after stat()), else 0. */
int cli_same_file(const char *a, const char *b);

/* 1 when a terminal can answer a question: stdin and stderr are terminals
 * and stdin is not an input ("-" among the ninputs names). */
int cli_can_ask(const char *const *inputs, int ninputs);

/* Print QUESTION " [y/N] " on stderr and read a line from stdin: 1 for an
 * answer starting with y or Y, else 0. */
int cli_ask(const char *question);

/* Ahead of any write to the file out ("-": stdout, then only
 * compared with the inputs): refuse when it is one of the ninputs inputs
 * ("-" skipped), or when it exists and policy is not CLI_OUT_OVERWRITE;
 * with CLI_OUT_ASK and cli_can_ask(), ask "File 'OUT' already exists.
 * Overwrite?" as ffmpeg does. 0 to go on, or PNMF_EXIT_OUTPUT with one line
 * printed: "PROG: OUT: ...". */
int cli_check_output(const char *prog, const char *out, const char *const *inputs, int ninputs,
                     int policy);

/* A folder dir that already holds n > 0 files of the kind WHAT ("frame",
 * "sprite") a run would write: they go (the caller removes them) with
 * CLI_OUT_OVERWRITE, or with CLI_OUT_ASK when cli_can_ask(inpath) and the
 * answer is yes. 0 to remove them and go on, or PNMF_EXIT_OUTPUT with one
 * line printed: "PROG: DIR: already holds N WHAT files; -y replaces them". */
int cli_check_folder(const char *prog, const char *dir, const char *inpath, int n, const char *what, int policy);

/* Seconds on a monotonic clock. */
double cli_now(void);

/* Progress on stderr when it is a terminal, drawn half a second after t0
 * and then redrawn at most every half second: "\rLABEL frame N/TOTAL (P%), F fps, M:SS left" when total > 0,
 * else "\rLABEL frame N, F fps". Nothing when stderr is not a terminal. */
void cli_progress(const char *label, int64_t frames, int64_t total, double t0);
void cli_progress_end(void);

#endif /* PNMF_TOOLS_CLI_UTIL_H */
