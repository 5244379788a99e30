/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli_util.h"
#include "pnmf/common.h"

void cli_init(void)
{
    signal(SIGXFSZ, SIG_IGN);
}

int cli_exit_code(int err)
{
    switch (err) {
    case 0: return PNMF_EXIT_OK;
    case PNMF_ERR_ARG: return PNMF_EXIT_USAGE;
    case PNMF_ERR_CORRUPT:
    case PNMF_ERR_VERSION: return PNMF_EXIT_CORRUPT;
    case PNMF_ERR_LIMIT: return PNMF_EXIT_LIMIT;
    case PNMF_ERR_IO: return PNMF_EXIT_OUTPUT;
    default: return PNMF_EXIT_FAIL;
    }
}

int cli_parse_int(const char *prog, const char *opt, const char *val, long long lo, long long hi,
                  long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(val, &end, 10);
    if (errno || end == val || *end || v < lo || v > hi) {
        fprintf(stderr, "%s: option %s expects an integer in [%lld, %lld], got '%s'\n", prog, opt, lo,
                hi, val);
        return -1;
    }
    *out = v;
    return 0;
}

void cli_bad_option(const char *prog, char **argv, int c)
{
    /* A long option is the argument getopt stopped at (up to any '=' when
     * its value is missing); a short one, possibly inside a cluster like
     * -Qx, is its letter. */
    const char *arg = optind > 0 ? argv[optind - 1] : "";
    const char letter[3] = { '-', (char)optopt, 0 };
    const int is_long = !strncmp(arg, "--", 2);
    const char *what = is_long ? arg : letter;
    const int len = is_long ? (int)strcspn(arg, "=") : 2;
    if (c == ':')
        fprintf(stderr, "%s: option %.*s needs a value; try '%s --help'\n", prog, len, what, prog);
    else /* unknown, or a value given to an option that takes none */
        fprintf(stderr, "%s: invalid option '%s'; try '%s --help'\n", prog, what, prog);
}

/* The temporary file a signal must remove (one at a time per process). */
static char tmp_path[PATH_MAX];
static volatile sig_atomic_t tmp_active;

static void on_signal(int sig)
{
    if (tmp_active) unlink(tmp_path);
    signal(sig, SIG_DFL);
    raise(sig);
}

int cli_is_special(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

FILE *cli_tmp_open(const char *target)
{
    const char *slash = strrchr(target, '/');
    const int dirlen = slash ? (int)(slash - target + 1) : 0;
    if (snprintf(tmp_path, sizeof(tmp_path), "%.*s.%s.tmp.XXXXXX", dirlen, target,
                 slash ? slash + 1 : target) >= (int)sizeof(tmp_path)) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    static int installed;
    if (!installed) {
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
        signal(SIGHUP, on_signal);
        installed = 1;
    }
    int fd = mkstemp(tmp_path);
    if (fd < 0) return NULL;
    tmp_active = 1;
    FILE *f = fdopen(fd, "w+b");
    if (!f) {
        int e = errno;
        close(fd);
        unlink(tmp_path);
        tmp_active = 0;
        errno = e;
    }
    return f;
}

const char *cli_tmp_name(void)
{
    return tmp_active ? tmp_path : NULL;
}

int cli_tmp_commit(FILE *f, const char *target)
{
    int ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
    int e = errno;
    ok &= fclose(f) == 0;
    if (ok) {
        /* mkstemp makes the file 0600; give it the usual permissions */
        mode_t um = umask(0);
        umask(um);
        chmod(tmp_path, 0666 & ~um);
        ok = rename(tmp_path, target) == 0;
        e = errno;
    }
    if (!ok) unlink(tmp_path);
    tmp_active = 0;
    errno = e;
    return ok ? 0 : -1;
}

void cli_tmp_discard(FILE *f)
{
    if (f) fclose(f);
    if (tmp_active) unlink(tmp_path);
    tmp_active = 0;
}

/* The most verbose level printed, as the logger's cookie. */
static const int log_levels[3] = { PNMF_LOG_ERROR, PNMF_LOG_INFO, PNMF_LOG_DEBUG };

static void stderr_log(void *cookie, int level, const char *fmt, va_list ap)
{
    if (level > *(const int *)cookie) return;
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

PnmfLogger cli_stderr_logger(int verbose)
{
    PnmfLogger lg = { NULL, NULL };
    if (getenv("PNMF_DEBUG")) verbose = 2;
    if (verbose <= 0) return lg;
    lg.cookie = (void *)&log_levels[verbose > 2 ? 2 : verbose];
    lg.callback = stderr_log;
    return lg;
}

int cli_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int cli_can_ask(const char *const *inputs, int ninputs)
{
    for (int i = 0; i < ninputs; i++)
        if (inputs[i] && !strcmp(inputs[i], "-")) return 0;
    return isatty(STDIN_FILENO) && isatty(STDERR_FILENO);
}

int cli_ask(const char *question)
{
    fprintf(stderr, "%s [y/N] ", question);
    fflush(stderr);
    char line[64];
    if (!fgets(line, sizeof(line), stdin)) return 0;
    const char *p = line + strspn(line, " \t");
    return *p == 'y' || *p == 'Y';
}

/* 1 when out and the file open on fd are one file. */
static int same_as_fd(const char *path, int fd)
{
    struct stat sa, sb;
    return stat(path, &sa) == 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

int cli_check_output(const char *prog, const char *out, const char *const *inputs, int ninputs, int policy)
{
    const int is_stdout = !strcmp(out, "-");
    for (int i = 0; i < ninputs; i++) {
        if (!inputs[i] || !strcmp(inputs[i], "-")) continue;
        if (is_stdout ? same_as_fd(inputs[i], STDOUT_FILENO) : cli_same_file(out, inputs[i])) {
            fprintf(stderr, "%s: %s: the output is the input %s; refusing to write over it\n", prog, out,
                    inputs[i]);
            return PNMF_EXIT_OUTPUT;
        }
    }
    struct stat sb;
    if (is_stdout || policy == CLI_OUT_OVERWRITE || lstat(out, &sb) < 0) return 0;
    if (policy == CLI_OUT_ASK && cli_can_ask(inputs, ninputs)) {
        char q[PATH_MAX + 64];
        snprintf(q, sizeof(q), "File '%s' already exists. Overwrite?", out);
        if (cli_ask(q)) return 0;
        fprintf(stderr, "%s: %s: not overwritten\n", prog, out);
        return PNMF_EXIT_OUTPUT;
    }
    fprintf(stderr, "%s: %s: already exists; -y overwrites it\n", prog, out);
    return PNMF_EXIT_OUTPUT;
}

int cli_check_folder(const char *prog, const char *dir, const char *inpath, int n, const char *what, int policy)
{
    int remove = policy == CLI_OUT_OVERWRITE;
    if (policy == CLI_OUT_ASK && cli_can_ask(&inpath, 1)) {
        char q[PATH_MAX + 96];
        snprintf(q, sizeof(q), "Folder '%s' already holds %d %s file%s. Remove %s?", dir, n, what,
                 n == 1 ? "" : "s", n == 1 ? "it" : "them");
        remove = cli_ask(q);
    }
    if (remove) return 0;
    fprintf(stderr, "%s: %s: already holds %d %s file%s; -y replaces %s\n", prog, dir, n, what, n == 1 ? "" : "s",
            n == 1 ? "it" : "them");
    return PNMF_EXIT_OUTPUT;
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Seconds between two redraws of the progress line. */
#define PROGRESS_INTERVAL 0.5

static int progress_shown;
static double progress_last;

void cli_progress(const char *label, int64_t frames, int64_t total, double t0)
{
    if (!isatty(STDERR_FILENO)) return;
    const double now = cli_now();
    /* the first line after an interval too: a rate over the first frame alone means little */
    if (now - (progress_shown ? progress_last : t0) < PROGRESS_INTERVAL) return;
    progress_last = now;
    const double dt = now - t0, fps = dt > 0 ? frames / dt : 0.0;
    if (total > 0 && frames <= total) {
        const double left = fps > 0 ? (total - frames) / fps : 0;
        const long s = (long)(left + 0.5);
        fprintf(stderr, "\r%s frame %lld/%lld (%.0f%%), %.1f fps, %ld:%02ld left\033[K", label, (long long)frames,
                (long long)total, 100.0 * frames / total, fps, s / 60, s % 60);
    } else {
        fprintf(stderr, "\r%s frame %lld, %.1f fps\033[K", label, (long long)frames, fps);
    }
    progress_shown = 1;
}

void cli_progress_end(void)
{
    if (progress_shown) fputs("\r\033[K", stderr);
    progress_shown = 0;
}
