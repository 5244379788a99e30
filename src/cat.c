/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Joining .pnmf streams (pnmf_cat): the window chunks of every part are
 * copied in order as they are stored, renumbered to follow the frames
 * before them, under the first part's header with the total frame count,
 * and a new index. Nothing is decoded beyond the container's own checks:
 * each part is read as the decoder reads it (CRCs, zstd frames and their
 * checksums, the index against the windows, the trailer), so a damaged
 * part is refused. A part begins with a key window, which decodes on its
 * own, so its windows decode in the joined stream as they did alone.
 * Frame times go on from part to part: each window keeps its frames'
 * durations, and the writer numbers their times from the first part's
 * start (pnmf_container_copy_window()).
 */
#include <stdio.h>

#include "container.h"
#include "internal.h"

/* Why the header of a part cannot join the first part's, or NULL when it
 * can: every field the decoder reads must be the same. */
static const char *header_mismatch(const PnmfHeader *a, const PnmfHeader *b, char *why, size_t len)
{
    if (b->writer_version != PNMF_FORMAT_VERSION || b->min_reader_version < PNMF_MIN_READER_WRITTEN ||
        b->min_reader_version > PNMF_FORMAT_VERSION)
        snprintf(why, len, "format version %u: only version %d files are joined (encode it again)",
                 b->writer_version, PNMF_FORMAT_VERSION);
    else if (a->width != b->width || a->height != b->height)
        snprintf(why, len, "frame size %ux%u, not %ux%u as in the first part", b->width, b->height, a->width,
                 a->height);
    else if (a->fps_num != b->fps_num || a->fps_den != b->fps_den)
        snprintf(why, len, "frame rate %u/%u, not %u/%u as in the first part", b->fps_num, b->fps_den, a->fps_num,
                 a->fps_den);
    else if (a->window != b->window)
        snprintf(why, len, "window %u, not %u as in the first part (-w)", b->window, a->window);
    else if (a->components != b->components)
        snprintf(why, len, "%u components, not %u as in the first part (-k)", b->components, a->components);
    else if (a->shift_model != b->shift_model || a->canvas_height != b->canvas_height ||
             a->canvas_width != b->canvas_width)
        snprintf(why, len, "shift model %u (canvas %ux%u), not %u (canvas %ux%u) as in the first part (--shift)",
                 b->shift_model, b->canvas_width, b->canvas_height, a->shift_model, a->canvas_width,
                 a->canvas_height);
    else if (a->quality != b->quality || a->w_step != b->w_step || a->r_step != b->r_step)
        snprintf(why, len, "quality %u (steps %u, %u), not %u (steps %u, %u) as in the first part (-q)", b->quality,
                 b->w_step, b->r_step, a->quality, a->w_step, a->r_step);
    else if (a->color_range != b->color_range || a->colorspace != b->colorspace ||
             a->color_primaries != b->color_primaries || a->color_trc != b->color_trc)
        snprintf(why, len, "colour range %u (matrix %u, primaries %u, transfer %u), not %u (%u, %u, %u) as in the "
                 "first part", b->color_range, b->colorspace, b->color_primaries, b->color_trc, a->color_range,
                 a->colorspace, a->color_primaries, a->color_trc);
    else if (a->tb_num != b->tb_num || a->tb_den != b->tb_den)
        snprintf(why, len, "time base %u/%u, not %u/%u as in the first part", b->tb_num, b->tb_den, a->tb_num,
                 a->tb_den);
    else
        return NULL;
    return why;
}

/* Copy every window of part r to w. On failure *writing says whether
 * writing (the output) failed rather than reading (the part). */
static int copy_part(PnmfContainerWriter *w, PnmfContainerReader *r, int *writing, char *err, size_t errlen)
{
    *writing = 0;
    const uint8_t *payload;
    size_t size;
    uint32_t first, count;
    int ret, windows = 0;
    while ((ret = pnmf_container_read_window(r, &payload, &size, &first, &count, err, errlen)) > 0) {
        if (!windows++ && pnmf_container_window_continues(r)) {
            pnmf_set_err(err, errlen, "the first window continues another");
            return PNMF_ERR_CORRUPT;
        }
        if ((ret = pnmf_container_copy_window(w, r, err, errlen)) < 0) {
            *writing = ret != PNMF_ERR_ARG; /* a window that does not fit is the part's */
            return ret;
        }
    }
    return ret;
}

int pnmf_cat(const PnmfIO *out, const PnmfIO *const *in, int n, int *bad, char *err, size_t errlen)
{
    if (bad) *bad = -1;
    if (!out || !out->write || !out->seek || !in || n < 1) {
        pnmf_set_err(err, errlen, n < 1 ? "no parts to join" : "null argument");
        return PNMF_ERR_ARG;
    }
    PnmfContainerReader **r = pnmf_calloc((size_t)n, sizeof(*r));
    if (!r) {
        pnmf_set_err(err, errlen, "out of memory");
        return PNMF_ERR_NOMEM;
    }
    PnmfContainerWriter *w = NULL;
    PnmfHeader h;
    uint64_t frames = 0;
    int ret = 0, i;
    char why[200];
    /* every header first: a mismatch is refused before anything is written */
    for (i = 0; i < n; i++) {
        if (!in[i]) {
            pnmf_set_err(err, errlen, "null argument");
            ret = PNMF_ERR_ARG;
            goto end;
        }
        if ((ret = pnmf_container_reader_open_io(&r[i], in[i], err, errlen)) < 0) goto end;
        const PnmfHeader *hi = pnmf_container_reader_header(r[i]);
        if (i == 0) h = *hi;
        if (header_mismatch(&h, hi, why, sizeof(why))) {
            pnmf_set_err(err, errlen, "%s", why);
            ret = PNMF_ERR_ARG;
            goto end;
        }
        frames += hi->frame_count;
        if (hi->min_reader_version > h.min_reader_version) h.min_reader_version = hi->min_reader_version;
    }
    if (frames > PNMF_MAX_FRAMES) {
        pnmf_set_err(err, errlen, "%llu frames in all, over the limit %d", (unsigned long long)frames,
                     PNMF_MAX_FRAMES);
        ret = PNMF_ERR_LIMIT;
        i = -1;
        goto end;
    }
    h.frame_count = 0; /* the writer sets the final count when it finishes */
    if ((ret = pnmf_container_writer_open_io(&w, out, &h, 1, err, errlen)) < 0) {
        i = -1;
        goto end;
    }
    /* a part's windows may need a newer reader than the writer's default */
    pnmf_container_writer_need_reader(w, h.min_reader_version);
    for (i = 0; i < n; i++) {
        int writing;
        ret = copy_part(w, r[i], &writing, err, errlen);
        pnmf_container_reader_close(&r[i]);
        if (ret < 0) {
            if (writing) i = -1;
            goto end;
        }
    }
    i = -1;
    ret = pnmf_container_writer_finish(w, (uint32_t)frames, err, errlen);
end:
    if (ret < 0 && bad) *bad = i;
    pnmf_container_writer_close(&w);
    for (int k = 0; k < n; k++) pnmf_container_reader_close(&r[k]);
    pnmf_free(r);
    return ret;
}
