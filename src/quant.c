/* SPDX-License-Identifier: GPL-2.0-or-later */
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

void pnmf_step_pick_init(PnmfStepPick *p, int q, double lambda)
{
    memset(p, 0, sizeof(*p));
    p->q = q < PNMF_PICK_FLOOR + 1 ? PNMF_PICK_FLOOR + 1 : q > PNMF_MAX_QUALITY ? PNMF_MAX_QUALITY : q;
    p->lambda = lambda;
    p->best = -1;
}

/* The bound of -q q over the codings offered (p->n of them), once they
 * reach the step above q's (or the last); -1 before. */
static double pick_bound(const PnmfStepPick *p, int q)
{
    const int lo = (q - PNMF_PICK_FLOOR) / PNMF_PICK_GRID, hi = lo + 1 < PNMF_PICK_CODINGS ? lo + 1 : lo;
    if (hi >= p->n) return -1;
    double env = 0;
    for (int i = 0; i <= lo; i++) env = p->d[i] > env ? p->d[i] : env;
    const double t = (double)(q - PNMF_PICK_FLOOR - lo * PNMF_PICK_GRID) / PNMF_PICK_GRID;
    return env + t * (p->d[hi] > env ? p->d[hi] - env : 0);
}

/* The last coding -q q is offered, if the codings so far tell; -1 if not. */
static int pick_last(const PnmfStepPick *p, int q)
{
    const int lo = (q - PNMF_PICK_FLOOR) / PNMF_PICK_GRID;
    const double b = pick_bound(p, q);
    if (b < 0) return -1;
    for (int i = lo + 2; i < p->n; i++)
        if (p->d[i] > b && p->d[i - 1] > b) return i;
    return p->n == PNMF_PICK_CODINGS ? PNMF_PICK_CODINGS - 1 : -1;
}

int pnmf_step_pick_offer(PnmfStepPick *p, double r, double d)
{
    if (p->done || p->n >= PNMF_PICK_CODINGS) return 0;
    const int i = p->n++;
    p->r[i] = r, p->d[i] = d;
    const int last = pick_last(p, p->q);
    p->done = last >= 0;
    if (r > p->r[0] || d < p->d[0]) return 0;
    /* within q's bound (unknown until the coding at the step above q's,
     * and the codings before it are within it: it is at least their
     * largest error) */
    const double b = pick_bound(p, p->q);
    if (b >= 0 && d > b) return 0;
    /* a lower -q that stopped before this coding never saw it: it must be
     * above that -q's bound, or the lower -q could have had a worse pick */
    for (int q2 = PNMF_PICK_FLOOR + 1; q2 < p->q; q2++) {
        const int l2 = pick_last(p, q2);
        if (l2 >= 0 && l2 < i && d <= pick_bound(p, q2)) return 0;
    }
    /* an infinite lambda: the fewest bytes, then the least error */
    const int bytes_only = isinf(p->lambda);
    const double j = bytes_only ? d : d + p->lambda * r;
    if (p->best >= 0 && (bytes_only ? r > p->br || (r == p->br && d >= p->bd)
                                    : j > p->bj || (j == p->bj && r >= p->br)))
        return 0;
    p->best = i, p->br = r, p->bd = d, p->bj = j;
    return 1;
}

int pnmf_step_pick_may_end(const PnmfStepPick *p)
{
    if (p->done || p->n + 1 >= PNMF_PICK_CODINGS) return 1;
    /* the stop needs two codings in a row past q's grid step above the bound */
    const int lo = (p->q - PNMF_PICK_FLOOR) / PNMF_PICK_GRID;
    return p->n >= lo + 2 && p->d[p->n - 1] > pick_bound(p, p->q);
}

int pnmf_fine_pick(const double *r, const double *d, int n, double lambda)
{
    int best = 0;
    double bj = n ? d[0] + lambda * r[0] : 0;
    for (int i = 1; i < n; i++) {
        if (d[i] > d[0]) continue;
        const double j = d[i] + lambda * r[i];
        if (j < bj || (j == bj && r[i] < r[best])) best = i, bj = j;
    }
    return best;
}
