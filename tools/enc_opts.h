/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The encoder's command-line options, for every tool that encodes with
 * pnmf (pnmf-enc, pnmf-compare, pnmf-bench): one table of the options that
 * fill a PnmfEncSettings, with their ranges, their help lines and their
 * error messages. A tool puts the table's entries after its own in its
 * getopt_long() table, and hands every option it does not know to
 * enc_opts_parse().
 */
#ifndef PNMF_TOOLS_ENC_OPTS_H
#define PNMF_TOOLS_ENC_OPTS_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

#include "pnmf/pnmf.h"

/* Encoder options a tool sets itself instead (a mask for `omit`). */
enum {
    ENC_OPT_QUALITY = 1 << 0, /* -q: pnmf-compare runs a ladder of it */
    ENC_OPT_THREADS = 1 << 1, /* --threads: a tool's own, for every codec it runs */
};

/* Room for the table's entries in a getopt_long() table. */
#define ENC_OPTS_MAX 40

typedef struct EncOpts {
    PnmfEncSettings s; /* pnmf_enc_default_settings(), then the options */
    unsigned omit;     /* ENC_OPT_* bits the tool handles itself */
    int residual_set;  /* --residual or --no-residual was given */
} EncOpts;

/* Default settings; omit as above. */
void enc_opts_init(EncOpts *o, unsigned omit);

/* Into dst: the entries of own (terminated by a zeroed entry), then the
 * encoder's, then the terminator. dst has room for the own entries plus
 * ENC_OPTS_MAX + 1. */
void enc_opts_longopts(struct option *dst, const struct option *own, unsigned omit);

/* Into dst (len bytes): ":" (errors left to the tool), own's letters, then
 * the encoder's ("k:w:q:"). */
void enc_opts_optstring(char *dst, size_t len, const char *own, unsigned omit);

/* After getopt_long() returned c with optarg arg: 1 when c is an encoder
 * option (its value stored), 0 when it is not, -1 when its value is wrong:
 * "PROG: option --NAME expects ..., got 'ARG'" printed on stderr. */
int enc_opts_parse(EncOpts *o, const char *prog, int c, const char *arg);

/* After the last option: what one option implies for another (--shift
 * vector: no residual layer), and the combinations the encoder refuses,
 * each with a message naming the options. 0, or -1 with the message
 * printed. */
int enc_opts_finish(EncOpts *o, const char *prog);

/* The help lines of the options, with the defaults. */
void enc_opts_usage(FILE *f, unsigned omit);

/* The options that set s, as a command line: -q, -k and -w always, the
 * others where they differ from the defaults ("-q 16 -k 8 -w 60 --no-carry").
 * Options in omit are left out. */
void enc_opts_describe(char *buf, size_t len, const PnmfEncSettings *s, unsigned omit);

#endif /* PNMF_TOOLS_ENC_OPTS_H */
