/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The output format table and the muxer.h entry points that dispatch to it,
 * plus what the one-file-per-frame formats share: mkdir -p and
 * write-to-temporary-then-rename. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "input/avlog.h"
#include "output/av_dyn.h"
#include "output/output_internal.h"

static const PnmfOutputFormat *const formats[] = {
    &pnmf_output_png,
    &pnmf_output_pgm,
    &pnmf_output_y4m,
    &pnmf_output_md5,
    &pnmf_output_mkv,
    &pnmf_output_mp4,
    &pnmf_output_webm,
    &pnmf_output_gif,
    &pnmf_output_apng,
    NULL,
};

/* The formats a file name's extension selects: one file each. */
static const char *const file_formats[] = { "y4m", "mkv", "mp4", "webm", "gif", "apng", NULL };

const char *pnmf_output_format_of(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (!dot || strchr(dot, '/'))
        return NULL;
    for (int i = 0; file_formats[i]; i++)
        if (!strcasecmp(dot + 1, file_formats[i]))
            return file_formats[i];
    return NULL;
}

struct PnmfOutput {
    const PnmfOutputFormat *fmt;
    void *priv;
    unsigned frames;        /* frames written so far */
    int failed;             /* a write failed; later writes fail too */
};

void pnmf_output_set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

const char *pnmf_output_strerror(int errnum, char *buf, size_t size)
{
    snprintf(buf, size, "%s", strerror(errnum));
    if (buf[0] >= 'A' && buf[0] <= 'Z' && buf[1] >= 'a' && buf[1] <= 'z')
        buf[0] = (char)(buf[0] - 'A' + 'a');
    return buf;
}

int pnmf_output_mkdir(const char *dir, char *err, size_t errlen)
{
    const size_t len = strlen(dir);
    char *path = malloc(len + 1);
    if (!path) {
        pnmf_output_set_err(err, errlen, "out of memory");
        return -1;
    }
    memcpy(path, dir, len + 1);

    /* Each prefix that ends before a '/', then the whole path. */
    for (size_t i = 1; i <= len; i++) {
        if (i < len && path[i] != '/')
            continue;
        if (i < len && path[i - 1] == '/')
            continue;
        const char saved = path[i];
        path[i] = '\0';
        if (mkdir(path, 0777) < 0 && errno != EEXIST) {
            if (i == len)
                pnmf_output_set_err(err, errlen, "cannot create the directory: %s", PNMF_OUT_STRERROR(errno));
            else
                pnmf_output_set_err(err, errlen, "cannot create the directory %s: %s", path, PNMF_OUT_STRERROR(errno));
            free(path);
            return -1;
        }
        path[i] = saved;
    }
    free(path);

    struct stat sb;
    if (stat(dir, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
        pnmf_output_set_err(err, errlen, "not a directory");
        return -1;
    }
    return 0;
}

int pnmf_output_put_frame_file(const char *dir, unsigned index, const char *ext,
                               const uint8_t *head, size_t head_size,
                               const uint8_t *body, size_t body_size,
                               char *err, size_t errlen)
{
    const size_t size = strlen(dir) + strlen(ext) + 48;
    char *final = malloc(size), *tmp = malloc(size);
    int ret = -1;
    if (!final || !tmp) {
        pnmf_output_set_err(err, errlen, "out of memory");
        goto end;
    }
    snprintf(final, size, "%s/frame_%06u.%s", dir, index, ext);
    snprintf(tmp, size, "%s/.frame_%06u.%s.tmp", dir, index, ext);
    const char *name = strrchr(final, '/') + 1;

    FILE *f = fopen(tmp, "wb");
    if (!f) {
        pnmf_output_set_err(err, errlen, "cannot create %s: %s", name, PNMF_OUT_STRERROR(errno));
        goto end;
    }
    int ok = (!head_size || fwrite(head, 1, head_size, f) == head_size) &&
             (!body_size || fwrite(body, 1, body_size, f) == body_size);
    int saved = errno;
    if (fclose(f) != 0 && ok) {
        ok = 0;
        saved = errno;
    }
    if (!ok) {
        pnmf_output_set_err(err, errlen, "cannot write %s: %s", name, PNMF_OUT_STRERROR(saved));
        remove(tmp);
        goto end;
    }
    if (rename(tmp, final) < 0) {
        pnmf_output_set_err(err, errlen, "cannot rename the temporary file to %s: %s", name, PNMF_OUT_STRERROR(errno));
        remove(tmp);
        goto end;
    }
    ret = 0;

end:
    free(final);
    free(tmp);
    return ret;
}

PnmfOutput *pnmf_output_open(const char *format, const char *dest,
                             const PnmfOutputInfo *info, char *err, size_t errlen)
{
    if (!format || !dest || !info) {
        pnmf_output_set_err(err, errlen, "invalid argument");
        return NULL;
    }
    const PnmfOutputFormat *fmt = NULL;
    for (int i = 0; formats[i]; i++)
        if (!strcmp(formats[i]->name, format))
            fmt = formats[i];
    if (!fmt) {
        pnmf_output_set_err(err, errlen, "unknown output format '%s' (png, pgm, y4m, md5, mkv, mp4, webm, gif or apng)", format);
        return NULL;
    }
    if (info->width <= 0 || info->height <= 0 || info->fps_num <= 0 || info->fps_den <= 0) {
        pnmf_output_set_err(err, errlen, "invalid frame size %dx%d or rate %d/%d",
                            info->width, info->height, info->fps_num, info->fps_den);
        return NULL;
    }
    if (info->alpha && strcmp(format, "png")) {
        pnmf_output_set_err(err, errlen, "format '%s' has no alpha channel", format);
        return NULL;
    }
    if (fmt->ffmpeg && pnmf_av_load(err, errlen) < 0) return NULL;
    pnmf_av_log_apply();

    PnmfOutput *out = calloc(1, sizeof(*out));
    if (!out || !(out->priv = calloc(1, fmt->priv_size))) {
        pnmf_output_set_err(err, errlen, "out of memory");
        free(out);
        return NULL;
    }
    out->fmt = fmt;
    if (fmt->open(out->priv, dest, info, err, errlen) < 0) {
        free(out->priv);
        free(out);
        return NULL;
    }
    return out;
}

int pnmf_output_verify(PnmfOutput *out, const char *hex, char *err, size_t errlen)
{
    if (!out || !hex) {
        pnmf_output_set_err(err, errlen, "invalid argument");
        return -1;
    }
    if (!out->fmt->verify) {
        pnmf_output_set_err(err, errlen, "the %s format has no digest to verify", out->fmt->name);
        return -1;
    }
    return out->fmt->verify(out->priv, hex, err, errlen);
}

void pnmf_output_range_lut(uint8_t lut[256])
{
    for (int v = 0; v < 256; v++) {
        const int e = ((v - 16) * 255 * 2 + 219) / (2 * 219) - (v < 16); /* rounded, floor below 16 */
        lut[v] = (uint8_t)(e < 0 ? 0 : e > 255 ? 255 : e);
    }
}

int pnmf_output_write(PnmfOutput *out, const uint8_t *gray, ptrdiff_t stride,
                      char *err, size_t errlen)
{
    return pnmf_output_write_timed(out, gray, stride, out ? (int64_t)out->frames : 0, 1, err, errlen);
}

int pnmf_output_write_timed(PnmfOutput *out, const uint8_t *gray, ptrdiff_t stride, int64_t pts,
                            int64_t duration, char *err, size_t errlen)
{
    if (!out || !gray) {
        pnmf_output_set_err(err, errlen, "invalid argument");
        return -1;
    }
    if (out->failed) {
        pnmf_output_set_err(err, errlen, "the output failed earlier");
        return -1;
    }
    if (out->fmt->write(out->priv, out->frames + 1, gray, stride, pts, duration, err, errlen) < 0) {
        out->failed = 1;
        return -1;
    }
    out->frames++;
    return 0;
}

int pnmf_output_close(PnmfOutput **pout, char *err, size_t errlen)
{
    if (!pout || !*pout)
        return 0;
    PnmfOutput *out = *pout;
    const int ret = out->fmt->close(out->priv, err, errlen);
    free(out->priv);
    free(out);
    *pout = NULL;
    return ret == PNMF_OUTPUT_MISMATCH ? ret : ret < 0 ? -1 : 0;
}
