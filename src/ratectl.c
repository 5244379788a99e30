/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Rate control's choice of a window's coding among those at a grid of
 * steps, and which of them to code (ratectl.h). */
#include <math.h>
#include <string.h>

#include "ratectl.h"
#include "tuning.h"

void pnmf_step_search_init(PnmfStepSearch *s, int q, double lambda, double noise)
{
    memset(s, 0, sizeof(*s));
    s->q = q < PNMF_PICK_FLOOR + 1 ? PNMF_PICK_FLOOR + 1 : q > PNMF_MAX_QUALITY ? PNMF_MAX_QUALITY : q;
    s->lo = (s->q - PNMF_PICK_FLOOR) / PNMF_PICK_GRID;
    s->t = (double)(s->q - PNMF_PICK_FLOOR - s->lo * PNMF_PICK_GRID) / PNMF_PICK_GRID;
    s->lambda = lambda, s->noise = noise;
}

void pnmf_step_search_add(PnmfStepSearch *s, int i, double r, double d)
{
    if (i < 0 || i >= PNMF_PICK_CODINGS) return;
    s->have[i] = 1, s->r[i] = r, s->d[i] = d;
}

/* q's bound over the codings made (ratectl.h). */
static double search_bound(const PnmfStepSearch *s)
{
    double env = 0;
    for (int i = 0; i <= s->lo; i++)
        if (s->have[i] && s->d[i] > env) env = s->d[i];
    const int hi = s->lo + 1;
    if (hi < PNMF_PICK_CODINGS && s->have[hi] && s->d[hi] > env) env += s->t * (s->d[hi] - env);
    return env;
}

/* A coding's cost: d + lambda * r; with an infinite lambda, r. */
static double search_cost(const PnmfStepSearch *s, int i)
{
    return isinf(s->lambda) ? s->r[i] : s->d[i] + s->lambda * s->r[i];
}

/* Whether the coding one step finer than fin, foretold by going on with
 * the ratios of bytes and of error from fin + 1 to fin, costs at least
 * PNMF_PICK_AHEAD times fin's. A rate-distortion curve is convex in the
 * log of the step (each step finer adds more bytes and saves less error
 * than the one before), so the foretold cost is about the least the
 * coding can cost: where even that does not beat fin, fin - 1 is not
 * coded. Not on content coded mostly exactly (screen content, whose
 * error need not rise with the step); both codings made, a finite
 * lambda, bytes and error above 0. */
static int ahead_worse(const PnmfStepSearch *s, int fin)
{
    if (!s->ahead || isinf(s->lambda) || s->d[s->lo] * PNMF_PICK_EXACT_NOISE < s->noise || !s->have[fin + 1] ||
        !(s->r[fin + 1] > 0) || !(s->d[fin + 1] > 0) || isinf(s->r[fin + 1]))
        return 0;
    const double r = s->r[fin] * (s->r[fin] / s->r[fin + 1]), d = s->d[fin] * (s->d[fin] / s->d[fin + 1]);
    return d + s->lambda * r >= PNMF_PICK_AHEAD * search_cost(s, fin);
}

int pnmf_step_search_pick(const PnmfStepSearch *s)
{
    if (!s->have[0]) return 0;
    const double b = search_bound(s);
    const int bytes_only = isinf(s->lambda);
    int best = 0; /* step 0 is within every bound: the bound is at least its error */
    double bj = bytes_only ? s->d[0] : s->d[0] + s->lambda * s->r[0];
    for (int i = 1; i < PNMF_PICK_CODINGS; i++) {
        if (!s->have[i] || s->r[i] > s->r[0] || s->d[i] < s->d[0] || s->d[i] > b) continue;
        const double j = bytes_only ? s->d[i] : s->d[i] + s->lambda * s->r[i];
        /* the finer step among equals: i only where strictly better */
        if (bytes_only ? s->r[i] < s->r[best] || (s->r[i] == s->r[best] && j < bj)
                       : j < bj || (j == bj && s->r[i] < s->r[best]))
            best = i, bj = j;
    }
    return best;
}

/* Whether the walk to coarser steps over exact content has settled: the
 * last PNMF_PICK_SETTLED codings past lo's step (up to hi) are all within
 * the bound b and none costs less than (1 - PNMF_PICK_SETTLED_GAIN) times
 * the least cost made before them. A window whose blocks are all predicted
 * exactly (a still screen, pasted sprites) codes alike at every step: its
 * bytes move by a few of zstd's, and the steps further on would only
 * repeat the same coding. */
static int exact_settled(const PnmfStepSearch *s, int hi, double b)
{
    const int first = hi - PNMF_PICK_SETTLED + 1;
    if (first <= s->lo) return 0;
    double least = INFINITY;
    for (int i = 0; i < first; i++)
        if (s->have[i] && search_cost(s, i) < least) least = search_cost(s, i);
    for (int i = first; i <= hi; i++)
        if (!s->have[i] || s->d[i] > b || search_cost(s, i) < (1 - PNMF_PICK_SETTLED_GAIN) * least) return 0;
    return 1;
}

int pnmf_step_search_next(const PnmfStepSearch *s)
{
    if (!s->have[0]) return 0;
    if (!s->have[s->lo]) return s->lo;
    if (s->lo >= 2 && !s->have[s->lo - 1]) return s->lo - 1;
    /* finer while the finest coding made is the pick or costs less than
     * the one above it: the cost still falls towards the finer steps */
    int fin = s->lo;
    while (fin > 1 && s->have[fin - 1]) fin--;
    if (fin > 1 && (pnmf_step_search_pick(s) == fin || search_cost(s, fin) < search_cost(s, fin + 1)) &&
        !ahead_worse(s, fin))
        return fin - 1;
    /* coarser, where the error at lo's step is no more than step 0's (the
     * step does not show in the error: exact content), until two codings
     * in a row past lo's step exceed the bound (exact content can have an
     * error at one step and none at the next) */
    int hi = s->lo;
    while (hi + 1 < PNMF_PICK_CODINGS && s->have[hi + 1]) hi++;
    if (hi + 1 >= PNMF_PICK_CODINGS) return -1;
    if (s->d[s->lo] <= s->d[0]) {
        const double b = search_bound(s);
        return (hi >= s->lo + 2 && s->d[hi] > b && s->d[hi - 1] > b) || exact_settled(s, hi, b) ? -1 : hi + 1;
    }
    /* one step past lo's, where the error at lo's step is far below a
     * uniform quantizer's (content the steps code mostly exactly, whose
     * error need not rise with the step) and the pick is lo's step or the
     * one below it (where the cost falls further towards the finer steps,
     * one coarser coding seldom beats the pick) */
    if (s->d[s->lo] * PNMF_PICK_EXACT_NOISE < s->noise && hi == s->lo && pnmf_step_search_pick(s) >= s->lo - 1 &&
        pnmf_step_search_pick(s) > 0)
        return hi + 1;
    return -1;
}

double pnmf_pick_foretell(double j1, double jp, int p, int m)
{
    return p < 2 ? jp : j1 + (jp - j1) * (m - 1) / (p - 1);
}

int pnmf_pick_prefix_cut(double jf, double jabove) { return jf > (1 + PNMF_PICK_PREFIX_MARGIN) * jabove; }

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

void pnmf_fine_search_init(PnmfFineSearch *s, int q, double lambda, double noise)
{
    memset(s, 0, sizeof(*s));
    s->q = q < 0 ? 0 : q >= PNMF_PICK_FLOOR ? PNMF_PICK_FLOOR - 1 : q;
    s->lambda = lambda, s->noise = noise;
    /* the step of -q + PNMF_FINE_LAMBDA_Q, at most the floor's */
    const int q8 = s->q + PNMF_FINE_LAMBDA_Q;
    s->start = q8 >= PNMF_PICK_FLOOR ? 0 : (PNMF_PICK_FLOOR - q8) / PNMF_FINE_GRID;
    /* content not coded exactly codes the start alone: not the floor's,
     * made already, but the one finer (whose cost is below the floor's
     * on cartoons and some camera footage at the lambda of the floor's
     * step) */
    s->one = s->start ? s->start : 1;
}

void pnmf_fine_search_add(PnmfFineSearch *s, int i, double r, double d)
{
    if (i < 0 || i >= PNMF_FINE_CODINGS) return;
    s->have[i] = 1, s->r[i] = r, s->d[i] = d;
}

int pnmf_fine_search_pick(const PnmfFineSearch *s)
{
    if (!s->q || !s->have[0]) return PNMF_FINE_CODINGS - 1;
    double r[PNMF_FINE_CODINGS], d[PNMF_FINE_CODINGS];
    int at[PNMF_FINE_CODINGS], n = 0;
    for (int i = 0; i < PNMF_FINE_CODINGS; i++)
        if (s->have[i]) at[n] = i, r[n] = s->r[i], d[n] = s->d[i], n++;
    return at[pnmf_fine_pick(r, d, n, s->lambda)];
}

static double fine_cost(const PnmfFineSearch *s, int i) { return s->d[i] + s->lambda * s->r[i]; }

int pnmf_fine_search_exact(const PnmfFineSearch *s)
{
    return s->have[0] && s->d[0] * PNMF_FINE_EXACT_NOISE < s->noise;
}

int pnmf_fine_search_next(const PnmfFineSearch *s)
{
    const int last = PNMF_FINE_CODINGS - 1;
    if (!s->q) return s->have[last] ? -1 : last;
    if (!s->have[0]) return 0;
    /* content the floor's step codes far more exactly than a uniform
     * quantizer would (screen content): the lossless coding and a walk
     * around the start; other content: the start alone */
    if (!pnmf_fine_search_exact(s)) return s->have[s->one] ? -1 : s->one;
    const int order[4] = { last, s->start, s->start + 1, s->start - 1 };
    for (int k = 0; k < 4; k++)
        if (order[k] >= 0 && order[k] <= last && !s->have[order[k]]) return order[k];
    const int pick = pnmf_fine_search_pick(s);
    /* finer, up to the step before lossless */
    int fin = s->start;
    while (fin + 1 < last && s->have[fin + 1]) fin++;
    if (fin + 1 < last && fin > s->start && (pick == fin || fine_cost(s, fin) < fine_cost(s, fin - 1))) return fin + 1;
    /* coarser, down to the floor's (made already) */
    int co = s->start;
    while (co - 1 > 0 && s->have[co - 1]) co--;
    if (co - 1 > 0 && co < s->start && (pick == co || fine_cost(s, co) < fine_cost(s, co + 1))) return co - 1;
    return -1;
}
