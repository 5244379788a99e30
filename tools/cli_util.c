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

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int progress_shown;

void cli_progress(const char *label, int frames, double t0)
{
    if (!isatty(STDERR_FILENO)) return;
    const double dt = cli_now() - t0;
    fprintf(stderr, "\r%s %d frames (%.1f fps)   ", label, frames, dt > 0 ? frames / dt : 0.0);
    progress_shown = 1;
}

void cli_progress_end(void)
{
    if (progress_shown) fputs("\r\033[K", stderr);
    progress_shown = 0;
}
