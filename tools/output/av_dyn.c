/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pnmf_av_load() (av_dyn.h): FFmpeg's libraries opened by their sonames,
 * the ones of the headers the program is built with, so that the
 * pointers' types hold for what they find. */
#define PNMF_AV_DYN_SELF
#include "output/av_dyn.h"

#include <stdio.h>
#include <string.h>

#include "input/avlog.h"
#include "output/output_internal.h"

#ifndef PNMF_AV_DLOPEN

int pnmf_av_load(char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    return 0;
}

int pnmf_av_loaded(void) { return 1; }

#else

#include <dlfcn.h>

#define PNMF_AV_DEFINE(lib, f) __typeof__(f) *pnmf_av_##f;
PNMF_AV_FUNCS(PNMF_AV_DEFINE)
#undef PNMF_AV_DEFINE

static int loaded;

int pnmf_av_loaded(void) { return loaded; }

int pnmf_av_load(char *err, size_t errlen)
{
    if (loaded) return 0;
    /* each library's soname from its headers' major version: the ABI the
     * declarations describe */
    static const char *const names[4] = {
        "libavutil.so." AV_STRINGIFY(LIBAVUTIL_VERSION_MAJOR),
        "libavcodec.so." AV_STRINGIFY(LIBAVCODEC_VERSION_MAJOR),
        "libavformat.so." AV_STRINGIFY(LIBAVFORMAT_VERSION_MAJOR),
        "libswscale.so." AV_STRINGIFY(LIBSWSCALE_VERSION_MAJOR),
    };
    enum { avutil, avcodec, avformat, swscale };
    static void *lib[4]; /* kept open for the process's life: the pointers lead into them */
    for (int i = 0; i < 4; i++)
        if (!lib[i] && !(lib[i] = dlopen(names[i], RTLD_NOW | RTLD_LOCAL))) {
            const char *why = dlerror();
            pnmf_output_set_err(err, errlen, "this output needs FFmpeg's %s, which cannot be loaded (%s); "
                                "y4m, pgm and md5 outputs do without it", names[i], why ? why : "not found");
            return -1;
        }
    /* a function pointer read through a data pointer: dlsym() returns
     * functions as void *, which POSIX requires to convert */
#define PNMF_AV_LOOKUP(l, f)                                                                                  \
    {                                                                                                        \
        void *sym = dlsym(lib[l], #f);                                                                       \
        if (!sym) {                                                                                          \
            pnmf_output_set_err(err, errlen, "FFmpeg's %s has no %s: it is not the FFmpeg these tools were "     \
                                "built with", names[l], #f);                                                 \
            return -1;                                                                                       \
        }                                                                                                    \
        memcpy(&pnmf_av_##f, &sym, sizeof(sym));                                                             \
    }
    PNMF_AV_FUNCS(PNMF_AV_LOOKUP)
#undef PNMF_AV_LOOKUP
    loaded = 1;
    pnmf_av_log_apply(); /* a level --loglevel chose ahead of the load */
    return 0;
}

#endif /* PNMF_AV_DLOPEN */
