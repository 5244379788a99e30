/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The MD5 of the decoded frames: every frame's width x height gray bytes in
 * order, rows packed, no headers, so the digest names the pixels alone and
 * equals md5sum of the frames' raw bytes. Written as 32 lower-case hex
 * digits and a newline to a file or stdout ("-"), or compared with the digest
 * given to pnmf_output_verify(). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "output/md5.h"
#include "output/output_internal.h"

typedef struct Md5Out {
    PnmfMd5 md5;
    int open;               /* md5 holds a digest in progress */
    FILE *f;                /* where the digest goes */
    int is_stdout;
    int width, height;
    char verify[33];        /* the expected digest, or "" */
} Md5Out;

static int md5_open(void *priv, const char *dest, const PnmfOutputInfo *info,
                    char *err, size_t errlen)
{
    Md5Out *p = priv;
    p->width = info->width;
    p->height = info->height;
    pnmf_md5_init(&p->md5);
    if (!strcmp(dest, "-")) {
        p->f = stdout;
        p->is_stdout = 1;
    } else if (!(p->f = fopen(dest, "w"))) {
        pnmf_output_set_err(err, errlen, "cannot create: %s", PNMF_OUT_STRERROR(errno));
        return -1;
    }
    p->open = 1;
    return 0;
}

static int md5_verify(void *priv, const char *hex, char *err, size_t errlen)
{
    Md5Out *p = priv;
    if (strlen(hex) != 32 || strspn(hex, "0123456789abcdefABCDEF") != 32) {
        pnmf_output_set_err(err, errlen, "an MD5 is 32 hex digits, got '%s'", hex);
        return -1;
    }
    memcpy(p->verify, hex, sizeof(p->verify));
    return 0;
}

static int md5_write(void *priv, unsigned index, const uint8_t *gray, ptrdiff_t stride, int64_t pts,
                     int64_t duration, char *err, size_t errlen)
{
    (void)pts;
    (void)duration;
    (void)index;
    (void)err;
    (void)errlen;
    Md5Out *p = priv;
    for (int y = 0; y < p->height; y++)
        pnmf_md5_update(&p->md5, gray + y * stride, (size_t)p->width);
    return 0;
}

static int md5_close(void *priv, char *err, size_t errlen)
{
    Md5Out *p = priv;
    if (!p->open)
        return 0;
    uint8_t sum[16];
    char hex[33];
    pnmf_md5_final(&p->md5, sum);
    p->open = 0;
    for (int i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", sum[i]);
    int ret = 0;
    if (p->verify[0]) {
        if (strcasecmp(hex, p->verify)) {
            pnmf_output_set_err(err, errlen, "the decoded frames' MD5 is %s, not %s", hex, p->verify);
            ret = PNMF_OUTPUT_MISMATCH;
        }
    } else if (fprintf(p->f, "%s\n", hex) < 0 || fflush(p->f) != 0 || ferror(p->f)) {
        pnmf_output_set_err(err, errlen, "cannot write: %s", PNMF_OUT_STRERROR(errno));
        ret = -1;
    }
    if (!p->is_stdout && fclose(p->f) != 0 && ret == 0) {
        pnmf_output_set_err(err, errlen, "cannot write: %s", PNMF_OUT_STRERROR(errno));
        ret = -1;
    }
    p->f = NULL;
    return ret;
}

const PnmfOutputFormat pnmf_output_md5 = {
    .name = "md5",
    .priv_size = sizeof(Md5Out),
    .open = md5_open,
    .verify = md5_verify,
    .write = md5_write,
    .close = md5_close,
};
