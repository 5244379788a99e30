/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Half size (upsample.h). A frame coded at half size is scaled up by the
 * 6-tap filter's quarter phases: with 2 x 2 means as the coded samples,
 * a frame sample lies a quarter of a coded sample from the nearest one,
 * which is what the phases 1/4 and 3/4 of the sub-pixel predictions
 * interpolate (the same taps and arithmetic, residual.c).
 */
#include "residual.h"
#include "upsample.h"

static inline int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

void pnmf_upsample2(const uint8_t *src, int ch, int cw, uint8_t *dst, ptrdiff_t stride, int h, int w, int32_t *tmp)
{
    /* across: tmp[r][x], the filter's sum over row r of the coded frame */
    for (int r = 0; r < ch; r++) {
        const uint8_t *s = src + (size_t)r * cw;
        int32_t *t = tmp + (size_t)r * w;
        for (int x = 0; x < w; x++) {
            /* x even: phase 3/4 after coded sample x / 2 - 1; odd: 1/4 after x / 2 */
            const int odd = x & 1, p = (x >> 1) - !odd;
            const int16_t *k = pnmf_sharp_taps[odd ? 1 : 3];
            int32_t v = 0;
            for (int i = 0; i < 6; i++) v += k[i] * s[clampi(p - 2 + i, 0, cw - 1)];
            t[x] = v;
        }
    }
    /* down */
    for (int y = 0; y < h; y++) {
        const int odd = y & 1, p = (y >> 1) - !odd;
        const int16_t *k = pnmf_sharp_taps[odd ? 1 : 3];
        const int32_t *rows[6];
        for (int i = 0; i < 6; i++) rows[i] = tmp + (size_t)clampi(p - 2 + i, 0, ch - 1) * w;
        uint8_t *o = dst + (ptrdiff_t)y * stride;
        for (int x = 0; x < w; x++) {
            int32_t v = 2048;
            for (int i = 0; i < 6; i++) v += k[i] * rows[i][x];
            v >>= 12;
            o[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    }
}

void pnmf_downsample2(const uint8_t *src, ptrdiff_t stride, int h, int w, uint8_t *dst)
{
    const int ch = pnmf_half_size(h), cw = pnmf_half_size(w);
    for (int r = 0; r < ch; r++)
        for (int c = 0; c < cw; c++) {
            int sum = 0, n = 0;
            for (int dy = 0; dy < 2; dy++)
                for (int dx = 0; dx < 2; dx++) {
                    const int y = 2 * r + dy, x = 2 * c + dx;
                    if (y < h && x < w) sum += src[(ptrdiff_t)y * stride + x], n++;
                }
            dst[(size_t)r * cw + c] = (uint8_t)((sum + n / 2) / n);
        }
}
