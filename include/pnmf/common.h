/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef PNMF_COMMON_H
#define PNMF_COMMON_H

#include <errno.h>

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

/** The coarsest -q, the encoder's quantizer (0, the finest, is lossless). */
#define PNMF_MAX_QUALITY 64

#endif /* PNMF_COMMON_H */
