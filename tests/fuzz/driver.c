/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A main() for the fuzz targets without libFuzzer: runs
 * LLVMFuzzerTestOneInput() once on every file named on the command line
 * and on every file in every directory named (in name order, so runs are
 * repeatable). ctest uses it to replay the saved corpus, crash regressions
 * included, in any build; a crash or an abort() fails the test.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: cannot open\n", path);
        return -1;
    }
    size_t cap = 4096, n = 0, got;
    uint8_t *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *p = realloc(buf, cap *= 2);
            if (!p) free(buf);
            buf = p;
        }
    }
    const int bad = !buf || ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "%s: cannot read\n", path);
        free(buf);
        return -1;
    }
    /* an exact-size copy, so an over-read of the input is caught too */
    uint8_t *exact = malloc(n ? n : 1);
    if (!exact) abort();
    memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    int files = 0, failed = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) < 0) {
            fprintf(stderr, "%s: not found\n", argv[i]);
            failed++;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            failed += replay(argv[i]) < 0;
            files++;
            continue;
        }
        DIR *dir = opendir(argv[i]);
        if (!dir) {
            fprintf(stderr, "%s: cannot open the directory\n", argv[i]);
            failed++;
            continue;
        }
        char **names = NULL;
        size_t count = 0;
        for (struct dirent *e; (e = readdir(dir));) {
            if (e->d_name[0] == '.') continue;
            char **p = realloc(names, (count + 1) * sizeof(*names));
            if (!p) abort();
            names = p;
            const size_t len = strlen(argv[i]) + strlen(e->d_name) + 2;
            if (!(names[count] = malloc(len))) abort();
            snprintf(names[count++], len, "%s/%s", argv[i], e->d_name);
        }
        closedir(dir);
        if (count) qsort(names, count, sizeof(*names), by_name);
        for (size_t j = 0; j < count; j++) {
            if (stat(names[j], &st) == 0 && S_ISREG(st.st_mode)) {
                failed += replay(names[j]) < 0;
                files++;
            }
            free(names[j]);
        }
        free(names);
    }
    /* Reaching this line means no input crashed or aborted. */
    printf("%s: %d passed, %d failed\n", argv[0], files - failed, failed);
    return failed || !files;
}
