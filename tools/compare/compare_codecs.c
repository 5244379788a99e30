/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The codecs pnmf-compare knows, by position and by name (the lossy ones
 * and those of --lossless), and its ladders. */
#include <string.h>

#include "compare.h"

const CmpCodec *cmp_codec_at(int i)
{
    if (i == 0) return &cmp_pnmf_codec;
    if (i == 1) return &cmp_pnmf_k0_codec;
    for (int k = 0; cmp_lavc_codecs[k]; k++)
        if (k == i - 2) return cmp_lavc_codecs[k];
    return NULL;
}

const CmpCodec *cmp_codec_by_name(const char *name, size_t len)
{
    for (int i = 0; cmp_codec_at(i); i++)
        if (strlen(cmp_codec_at(i)->name) == len && !strncmp(cmp_codec_at(i)->name, name, len))
            return cmp_codec_at(i);
    return NULL;
}

const CmpCodec *cmp_lossless_codec_at(int i)
{
    if (i == 0) return &cmp_pnmf_codec;
    int k = 0;
    while (cmp_lavc_lossless_codecs[k] && k < i - 1) k++;
    if (cmp_lavc_lossless_codecs[k]) return cmp_lavc_lossless_codecs[k];
    return k == i - 1 ? &cmp_zstd_codec : NULL;
}

const CmpCodec *cmp_lossless_codec_by_name(const char *name, size_t len)
{
    for (int i = 0; cmp_lossless_codec_at(i); i++)
        if (strlen(cmp_lossless_codec_at(i)->name) == len && !strncmp(cmp_lossless_codec_at(i)->name, name, len))
            return cmp_lossless_codec_at(i);
    return NULL;
}

int cmp_ladder_value(int lo, int hi, int i, int n)
{
    if (n <= 1) return lo + (hi - lo) / 2;
    return lo + (int)((double)(hi - lo) * i / (n - 1) + 0.5);
}
