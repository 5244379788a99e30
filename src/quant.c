/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Quantization of the model (quant.h): the -q steps, components and
 * coefficients. */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "quant.h"

void pnmf_quant_steps(int q, int *w_step, int *r_step)
{
    if (q < 0) q = 0;
    if (q > PNMF_MAX_QUALITY) q = PNMF_MAX_QUALITY;
    int w = (int)lrint(pow(2.0, q / 8.0));
    *w_step = w < 1 ? 1 : w > 64 ? 64 : w;
    *r_step = 1 + q / 16;
}

/* The longest cyclic run of zeros in occ[0..len); returns the start of the
 * support (just after that run) and its length via *span. */
static int cyclic_support(const uint8_t *occ, int len, int *span)
{
    int best_run = 0, best_end = 0, run = 0;
    for (int t = 0; t < 2 * len; t++) {
        if (!occ[t % len]) {
            run++;
            if (run > best_run && run <= len) best_run = run, best_end = t;
        } else {
            run = 0;
        }
    }
    *span = len - best_run;
    return best_run ? (best_end + 1) % len : 0;
}

int pnmf_quant_component(int rows, int cols, const float *w, int w_step, PnmfComp *c,
                         float *scale, int *q0)
{
    const size_t n = (size_t)rows * cols;
    float mx = 0;
    for (size_t x = 0; x < n; x++) mx = fabsf(w[x]) > mx ? fabsf(w[x]) : mx;
    c->bh = c->bw = 0;
    c->lev = NULL;
    *scale = 0;
    *q0 = 0;
    if (!(mx > 0)) return 0;
    const float f = 256.0f / (mx * (float)w_step);
    uint8_t *ry = pnmf_calloc((size_t)rows + cols, 1), *cx = ry + rows;
    if (!ry) return PNMF_ERR_NOMEM;
    for (int y = 0; y < rows; y++)
        for (int x = 0; x < cols; x++)
            if (lrintf(w[(size_t)y * cols + x] * f) != 0) ry[y] = cx[x] = 1;
    int bh, bw;
    const int y0 = cyclic_support(ry, rows, &bh), x0 = cyclic_support(cx, cols, &bw);
    pnmf_free(ry);
    c->lev = pnmf_malloc_array((size_t)bh * bw, sizeof(int16_t));
    if (!c->lev) return PNMF_ERR_NOMEM;
    c->bh = bh, c->bw = bw;
    const long maxl = PNMF_MAX_LEVEL_VALUE / w_step;
    for (int y = 0; y < bh; y++)
        for (int x = 0; x < bw; x++) {
            long l = lrintf(w[(size_t)((y0 + y) % rows) * cols + (x0 + x) % cols] * f);
            c->lev[y * bw + x] = (int16_t)(l < -maxl ? -maxl : l > maxl ? maxl : l);
        }
    *scale = mx;
    *q0 = y0 * cols + x0;
    return 0;
}

void pnmf_dequant_component(int rows, int cols, const PnmfComp *c, int w_step, float *w)
{
    memset(w, 0, (size_t)rows * cols * sizeof(float));
    const float f = (float)w_step / 256.0f;
    for (int y = 0; y < c->bh; y++)
        for (int x = 0; x < c->bw; x++) w[(size_t)y * cols + x] = c->lev[y * c->bw + x] * f;
}

uint32_t pnmf_quant_coef(float r, int r_step)
{
    const long maxc = PNMF_MAX_COEF_VALUE / r_step;
    long c = lrintf(r * 16.0f / (float)r_step);
    return (uint32_t)(c < 0 ? 0 : c > maxc ? maxc : c);
}

float pnmf_dequant_coef(uint32_t c, int r_step) { return (float)c * (float)r_step / 16.0f; }

int pnmf_shift_compose(int rows, int cols, int p, int q)
{
    const int y = (p / cols + q / cols) % rows, x = (p % cols + q % cols) % cols;
    return y * cols + x;
}
