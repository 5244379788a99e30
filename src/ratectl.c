/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Rate control's choice of a window's coding among those at a grid of
 * steps (ratectl.h). */
#include <math.h>
#include <string.h>

#include "ratectl.h"

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
