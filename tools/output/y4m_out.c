/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A YUV4MPEG2 stream of gray frames (Cmono) to a file or stdout ("-"), at
 * the nominal frame rate. The samples are written as decoded, and the
 * header labels their range: LIMITED when the source's levels were 16..235
 * (readers expand them as they would the source's), else FULL. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "output/output_internal.h"

typedef struct Y4mOut {
    FILE *f;
    int is_stdout;
    int width, height;
} Y4mOut;

static int y4m_open(void *priv, const char *dest, const PnmfOutputInfo *info,
                    char *err, size_t errlen)
{
    Y4mOut *p = priv;
    p->width = info->width;
    p->height = info->height;
    if (!strcmp(dest, "-")) {
        p->f = stdout;
        p->is_stdout = 1;
    } else if (!(p->f = fopen(dest, "wb"))) {
        pnmf_output_set_err(err, errlen, "cannot create: %s", PNMF_OUT_STRERROR(errno));
        return -1;
    }
    if (fprintf(p->f, "YUV4MPEG2 W%d H%d F%d:%d Ip A1:1 Cmono XCOLORRANGE=%s\n", info->width, info->height,
                info->fps_num, info->fps_den, info->color_range == 1 ? "LIMITED" : "FULL") < 0) {
        pnmf_output_set_err(err, errlen, "cannot write: %s", PNMF_OUT_STRERROR(errno));
        if (!p->is_stdout)
            fclose(p->f);
        p->f = NULL;
        return -1;
    }
    return 0;
}

static int y4m_write(void *priv, unsigned index, const uint8_t *gray, ptrdiff_t stride, int64_t pts,
                     int64_t duration, char *err, size_t errlen)
{
    (void)pts;
    (void)duration;
    Y4mOut *p = priv;
    int ok = fwrite("FRAME\n", 1, 6, p->f) == 6;
    for (int y = 0; ok && y < p->height; y++)
        ok = fwrite(gray + y * stride, 1, p->width, p->f) == (size_t)p->width;
    if (!ok) {
        pnmf_output_set_err(err, errlen, "cannot write frame %u: %s", index, PNMF_OUT_STRERROR(errno));
        return -1;
    }
    return 0;
}

static int y4m_close(void *priv, char *err, size_t errlen)
{
    Y4mOut *p = priv;
    if (!p->f)
        return 0;
    int ret = 0;
    if (fflush(p->f) != 0 || ferror(p->f)) {
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

const PnmfOutputFormat pnmf_output_y4m = {
    .name = "y4m",
    .priv_size = sizeof(Y4mOut),
    .open = y4m_open,
    .write = y4m_write,
    .close = y4m_close,
};
