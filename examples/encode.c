/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * encode: a YUV4MPEG2 stream on stdin (any 8-bit chroma layout: the luma
 * plane is kept) to a .pnmf file, with the encoder's default settings, the
 * stream's range (XCOLORRANGE; untagged: full for Cmono, else limited, as
 * FFmpeg takes it) and its frame rate as the file's clock.
 *
 *   cc encode.c $(pkg-config --cflags --libs pnmf) -o encode
 *   ffmpeg -i clip.mp4 -f yuv4mpegpipe -pix_fmt gray - | ./encode out.pnmf
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pnmf/pnmf.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUT.pnmf < in.y4m\n", argv[0]);
        return 2;
    }
    char line[256], *tok;
    int w = 0, h = 0, fn = 25, fd = 1, chroma = 0; /* chroma bytes per frame, in quarters of w * h */
    int range = 0;                                 /* 1 limited, 2 full, 0 untagged */
    if (!fgets(line, sizeof(line), stdin) || strncmp(line, "YUV4MPEG2 ", 10)) {
        fprintf(stderr, "stdin: not a YUV4MPEG2 stream\n");
        return 1;
    }
    for (tok = strtok(line + 10, " \n"); tok; tok = strtok(NULL, " \n")) {
        if (*tok == 'W') w = atoi(tok + 1);
        else if (*tok == 'H') h = atoi(tok + 1);
        else if (*tok == 'F') sscanf(tok + 1, "%d:%d", &fn, &fd);
        else if (*tok == 'C') chroma = !strncmp(tok, "Cmono", 5) ? 0 : !strncmp(tok, "C444", 4) ? 8
                                     : !strncmp(tok, "C422", 4) ? 4 : 2;
        else if (!strncmp(tok, "XCOLORRANGE=", 12)) range = !strcmp(tok + 12, "LIMITED") ? 1 : 2;
    }
    const size_t size = (size_t)w * h, extra = size * chroma / 4;
    FILE *out = fopen(argv[1], "wb");
    if (!out) {
        perror(argv[1]);
        return 1;
    }
    PnmfEncSettings s;
    pnmf_enc_default_settings(&s);
    s.color_range = range ? range : chroma ? 1 : 2;
    s.time_base_num = fd, s.time_base_den = fn; /* a frame lasts one tick */
    PnmfEncoder *enc = NULL;
    uint8_t *frame = NULL;
    int ret = pnmf_enc_open(&enc, &s, w, h, fn, fd, out);
    if (ret >= 0 && !(frame = malloc(size + extra))) ret = PNMF_ERR_NOMEM;
    while (ret >= 0 && fgets(line, sizeof(line), stdin)) {
        if (strncmp(line, "FRAME", 5) || fread(frame, 1, size + extra, stdin) != size + extra) {
            fprintf(stderr, "stdin: truncated frame\n");
            ret = PNMF_ERR_CORRUPT;
        } else {
            ret = pnmf_enc_push_frame(enc, frame, w);
        }
    }
    if (ret >= 0) ret = pnmf_enc_finish(enc);
    if (fclose(out) && ret >= 0) ret = PNMF_ERR_IO;
    PnmfEncStats st;
    pnmf_enc_get_stats(enc, &st);
    if (ret < 0) fprintf(stderr, "%s: %s %s\n", argv[1], pnmf_strerror(ret), enc ? pnmf_enc_errmsg(enc) : "");
    else fprintf(stderr, "%s: %d frames, %llu bytes, PSNR-Y %.2f dB\n", argv[1], st.frames,
                 (unsigned long long)st.bytes, st.psnr);
    pnmf_enc_close(&enc);
    free(frame);
    if (ret < 0) remove(argv[1]);
    return ret < 0;
}
