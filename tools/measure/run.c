/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The measuring pieces shared by pnmf-compare and pnmf-bench: reading a
 * clip's gray frames into memory once, running one measurement in a forked
 * child that pipes a plain struct back (so its peak memory is its own and
 * a crash costs one measurement), and the child's CPU time and peak
 * resident memory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_util.h"
#include "measure/measure.h"
#include "input/demuxer.h"

/* ---- memory and CPU time (in the child) ---- */

static double base_kib = -1;
static int hwm_reset;
static struct rusage ru_start;

/* A "Key:   123 kB" line of /proc/self/status, in KiB, or -1. */
static double proc_status_kib(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    double v = -1;
    const size_t kl = strlen(key);
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, key, kl)) {
            v = strtod(line + kl, NULL);
            break;
        }
    fclose(f);
    return v;
}

static double tv_seconds(struct timeval t)
{
    return t.tv_sec + t.tv_usec * 1e-6;
}

/* Reset the peak resident size to the current one (Linux clear_refs "5"),
 * so the peak is this measurement's and not the parent's. */
void cmp_measure_start(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    hwm_reset = 0;
    if (f) {
        hwm_reset = fputs("5", f) >= 0;
        hwm_reset &= fclose(f) == 0;
    }
    base_kib = proc_status_kib("VmRSS:");
    getrusage(RUSAGE_SELF, &ru_start);
}

double cmp_measure_cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return tv_seconds(ru.ru_utime) + tv_seconds(ru.ru_stime) - tv_seconds(ru_start.ru_utime) -
           tv_seconds(ru_start.ru_stime);
}

CmpClock cmp_clock_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    const CmpClock c = { cli_now(), ts.tv_sec + ts.tv_nsec * 1e-9 };
    return c;
}

void cmp_clock_add(CmpClock *acc, CmpClock t0)
{
    const CmpClock t1 = cmp_clock_now();
    acc->wall += t1.wall - t0.wall;
    acc->cpu += t1.cpu - t0.cpu;
}

double cmp_measure_base_kib(void)
{
    return base_kib;
}

double cmp_measure_peak_kib(void)
{
    /* without the reset, ru_maxrss (KiB on Linux) may still hold the parent's peak */
    if (hwm_reset) return proc_status_kib("VmHWM:");
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss;
}

void cmp_mark_encoded(CmpPoint *pt)
{
    pt->enc_cpu_seconds = cmp_measure_cpu();
    const double peak = cmp_measure_peak_kib();
    pt->rss_base_mib = base_kib >= 0 ? base_kib / 1024 : -1;
    pt->peak_mib = base_kib >= 0 && peak >= base_kib ? (peak - base_kib) / 1024 : -1;
}

/* ---- one measurement in a child ---- */

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

static int read_all(int fd, void *p, size_t n)
{
    char *c = p;
    while (n) {
        ssize_t r = read(fd, c, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        c += r;
        n -= (size_t)r;
    }
    return 0;
}

int cmp_run_child(CmpChildFn fn, void *ctx, void *out, size_t size, int *status)
{
    int fds[2];
    pid_t pid = -1;
    *status = 0;
    fflush(stdout);
    fflush(stderr);
    if (pipe(fds) == 0) {
        pid = fork();
        if (pid < 0) {
            close(fds[0]);
            close(fds[1]);
        }
    }
    if (pid < 0) { /* no child: measure in-process */
        cmp_measure_start();
        fn(ctx, out);
        return 0;
    }
    if (pid == 0) {
        close(fds[0]);
        cmp_measure_start();
        fn(ctx, out);
        _exit(write_all(fds[1], out, size) ? 1 : 0);
    }
    close(fds[1]);
    const int got = read_all(fds[0], out, size) == 0;
    close(fds[0]);
    while (waitpid(pid, status, 0) < 0 && errno == EINTR) {}
    return got ? 0 : -1;
}

/* ---- the clip ---- */

int cmp_read_clip(const char *prog, const char *path, long long max, CmpClip *clip)
{
    char err[512] = "";
    PnmfInputInfo info;
    PnmfInput *in = pnmf_input_open(path, &info, err, sizeof(err));
    if (!in) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, err);
        return PNMF_EXIT_INPUT;
    }
    memset(clip, 0, sizeof(*clip));
    clip->path = path;
    clip->width = info.width;
    clip->height = info.height;
    clip->fps_num = info.fps_num;
    clip->fps_den = info.fps_den;
    const size_t fsize = (size_t)info.width * info.height;
    size_t cap = 0;
    int code = PNMF_EXIT_OK;
    for (;;) {
        if (max >= 0 && clip->frames >= max) break;
        if ((size_t)clip->frames == cap) {
            cap = cap ? 2 * cap : 16;
            uint8_t *p = cap <= SIZE_MAX / fsize ? realloc(clip->pixels, cap * fsize) : NULL;
            if (!p) {
                fprintf(stderr, "%s: %s: not enough memory for %d frames of %dx%d (try --frames)\n", prog,
                        path, clip->frames + 1, info.width, info.height);
                code = PNMF_EXIT_FAIL;
                break;
            }
            clip->pixels = p;
        }
        int r = pnmf_input_read(in, clip->pixels + (size_t)clip->frames * fsize, info.width, err, sizeof(err));
        if (r == 0) break;
        if (r < 0) {
            fprintf(stderr, "%s: %s: %s\n", prog, path, err);
            code = PNMF_EXIT_INPUT;
            break;
        }
        clip->frames++;
    }
    pnmf_input_close(&in);
    if (code == PNMF_EXIT_OK && clip->frames == 0) {
        fprintf(stderr, "%s: %s: no frames\n", prog, path);
        code = PNMF_EXIT_INPUT;
    }
    if (code != PNMF_EXIT_OK) {
        free(clip->pixels);
        clip->pixels = NULL;
    }
    return code;
}
