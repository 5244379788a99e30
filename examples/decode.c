/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * decode: a .pnmf file to a YUV4MPEG2 stream of gray frames on stdout,
 * the same bytes as `pnmf-dec IN.pnmf -`.
 *
 *   cc decode.c $(pkg-config --cflags --libs pnmf) -o decode
 *   ./decode IN.pnmf > out.y4m
 */
#include <stdio.h>
#include <stdlib.h>

#include <pnmf/pnmf.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s IN.pnmf > out.y4m\n", argv[0]);
        return 2;
    }
    FILE *in = fopen(argv[1], "rb");
    if (!in) {
        perror(argv[1]);
        return 1;
    }
    PnmfDecoder *dec = NULL;
    uint8_t *frame = NULL;
    int ret = pnmf_dec_open(&dec, in);
    if (ret < 0) goto done;
    const PnmfStreamInfo *info = pnmf_dec_info(dec);
    /* Cmono: the luma plane alone, as decoded, with the source's range. */
    printf("YUV4MPEG2 W%d H%d F%d:%d Ip A1:1 Cmono XCOLORRANGE=%s\n", info->width, info->height,
           info->fps_num, info->fps_den, info->color_range == 1 ? "LIMITED" : "FULL");
    const size_t size = (size_t)info->width * info->height;
    if (!(frame = malloc(size))) {
        ret = PNMF_ERR_NOMEM;
        goto done;
    }
    while ((ret = pnmf_dec_read_frame(dec, frame, info->width)) == 0) {
        if (fputs("FRAME\n", stdout) == EOF || fwrite(frame, 1, size, stdout) != size) {
            ret = PNMF_ERR_IO;
            goto done;
        }
    }
    if (ret == PNMF_ERR_EOF) ret = fflush(stdout) ? PNMF_ERR_IO : 0;
done:
    if (ret < 0) {
        const char *why = dec ? pnmf_dec_errmsg(dec) : "";
        fprintf(stderr, "%s: %s%s%s\n", argv[1], pnmf_strerror(ret), *why ? ": " : "", why);
    }
    free(frame);
    pnmf_dec_close(&dec);
    fclose(in);
    return ret < 0;
}
