/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef PNMF_COMMON_H
#define PNMF_COMMON_H

#include <errno.h>
#include <stdarg.h>

#if defined(__GNUC__) && __GNUC__ >= 4
#define PNMF_API __attribute__((visibility("default")))
#else
#define PNMF_API
#endif

/** Errors are negative errno values, the same shape as FFmpeg's AVERROR. */
#define PNMF_ERR(e) (-(e))

/* The codes the library returns, and what each means. */
#define PNMF_ERR_ARG     PNMF_ERR(EINVAL)  /* bad argument from the caller */
#define PNMF_ERR_NOMEM   PNMF_ERR(ENOMEM)  /* allocation failed */
#define PNMF_ERR_IO      PNMF_ERR(EIO)     /* read or write failed */
#define PNMF_ERR_CORRUPT PNMF_ERR(EBADMSG) /* invalid or corrupt data */
#define PNMF_ERR_VERSION PNMF_ERR(ENOTSUP) /* file needs a newer reader */
#define PNMF_ERR_LIMIT   PNMF_ERR(E2BIG)   /* a size exceeds a documented limit */
#define PNMF_ERR_EOF     PNMF_ERR(ENODATA) /* no more frames */
#define PNMF_ERR_NOSYS   PNMF_ERR(ENOSYS)  /* the call needs a part this library was built without */

/** How much a message matters, for a PnmfLogger. */
enum PnmfLogLevel {
    PNMF_LOG_ERROR = 0, ///< an operation failed (the call also returns an error)
    PNMF_LOG_INFO  = 1, ///< one line per window: what the encoder decided
    PNMF_LOG_DEBUG = 2, ///< the encoder's inner figures (objectives, costs per step)
};

/**
 * Where the library's messages go: it never prints. A NULL callback (the
 * default) drops them. The callback is called from the thread that called
 * the library, never from a worker thread; @p fmt and @p ap are as vprintf's
 * and a message ends without a newline.
 */
typedef struct PnmfLogger {
    void *cookie; ///< passed back to the callback as it is
    void (*callback)(void *cookie, int level, const char *fmt, va_list ap);
} PnmfLogger;

/** The coarsest -q, the encoder's quantizer (0, the finest, is lossless). */
#define PNMF_MAX_QUALITY 64

#endif /* PNMF_COMMON_H */
