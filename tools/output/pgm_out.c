/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Binary PGM (P5, maxval 255) files, one per frame: DIR/frame_000001.pgm, ... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output_internal.h"

typedef struct PgmOut {
    char *dir;
    int width, height;
    char head[48];
    size_t head_size;
    uint8_t *body;          /* width x height, packed rows */
} PgmOut;

static int pgm_close(void *priv, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    PgmOut *p = priv;
    free(p->dir);
    free(p->body);
    p->dir = NULL;
    p->body = NULL;
    return 0;
}

static int pgm_open(void *priv, const char *dest, const PnmfOutputInfo *info,
                    char *err, size_t errlen)
{
    PgmOut *p = priv;
    if (pnmf_output_mkdir(dest, err, errlen) < 0)
        return -1;
    p->width = info->width;
    p->height = info->height;
    p->head_size = (size_t)snprintf(p->head, sizeof(p->head), "P5\n%d %d\n255\n", p->width, p->height);
    if (!(p->dir = strdup(dest)) || !(p->body = malloc((size_t)p->width * p->height))) {
        pnmf_output_set_err(err, errlen, "out of memory");
        pgm_close(p, NULL, 0);
        return -1;
    }
    return 0;
}

static int pgm_write(void *priv, unsigned index, const uint8_t *gray, ptrdiff_t stride, int64_t pts,
                     int64_t duration, char *err, size_t errlen)
{
    (void)pts;
    (void)duration;
    PgmOut *p = priv;
    for (int y = 0; y < p->height; y++)
        memcpy(p->body + (size_t)y * p->width, gray + y * stride, p->width);
    return pnmf_output_put_frame_file(p->dir, index, "pgm", (const uint8_t *)p->head, p->head_size,
                                      p->body, (size_t)p->width * p->height, err, errlen);
}

const PnmfOutputFormat pnmf_output_pgm = {
    .name = "pgm",
    .priv_size = sizeof(PgmOut),
    .open = pgm_open,
    .write = pgm_write,
    .close = pgm_close,
};
