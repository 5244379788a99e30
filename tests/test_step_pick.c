/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Rate control's choice of a window's coding (ratectl.h, pnmf_step_pick,
 * and below the floor pnmf_fine_pick) against its definition, on made-up
 * codings: for every -q above the floor, the pick fed one coding at a
 * time is the coding a brute force over all of them finds (the lowest
 * error + lambda * bytes, then fewest bytes, then first, among those with
 * no more bytes and no less error than the first coding, an error within
 * -q's bound and above that of each lower -q that stopped before it,
 * offered until two codings in a row past -q's grid step exceed the
 * bound), and it says it is done there; and over -q the picks' bytes
 * never rise and their errors never fall, the first coding standing for
 * the floor's own -q. The codings: noisy curves (what an encoder gives),
 * curves with flats and ties, and plain noise.
 */
#include <stdlib.h>

#include "ratectl.h"
#include "test.h"

#define N PNMF_PICK_CODINGS

static unsigned rs = 777;
static double urand(void) { rs = rs * 1103515245u + 12345u; return ((rs >> 8) & 0xFFFFFF) / 16777216.0; }

/* The bound of q from the definition: the largest error of the codings
 * at q's grid step and finer, and between two grid steps the line from
 * one's to the next's. */
static double bound_of(const double *d, int q)
{
    const int lo = (q - PNMF_PICK_FLOOR) / PNMF_PICK_GRID;
    const double t = (double)(q - PNMF_PICK_FLOOR - lo * PNMF_PICK_GRID) / PNMF_PICK_GRID;
    double e_lo = 0, e_hi = 0;
    for (int i = 0; i <= lo; i++) e_lo = d[i] > e_lo ? d[i] : e_lo;
    e_hi = e_lo;
    if (lo + 1 < N) e_hi = d[lo + 1] > e_lo ? d[lo + 1] : e_lo;
    return t > 0 ? e_lo + t * (e_hi - e_lo) : e_lo;
}

/* lambda: the weight of a byte at q (any rising function will do) */
static double lambda_of(int q) { return q < PNMF_MAX_QUALITY ? 0.05 * exp2(q / 4.0) : INFINITY; }

/* the last coding offered to q: the second of the first two in a row
 * past q's grid step whose errors exceed q's bound, or the last */
static int last_of(const double *d, int q)
{
    const int lo = (q - PNMF_PICK_FLOOR) / PNMF_PICK_GRID;
    const double b = bound_of(d, q);
    for (int i = lo + 2; i < N; i++)
        if (d[i] > b && d[i - 1] > b) return i;
    return N - 1;
}

/* the pick of q by its definition; *last: the last coding offered */
static int brute(const double *r, const double *d, int q, int *last)
{
    const double b = bound_of(d, q), l = lambda_of(q);
    int best = -1;
    *last = last_of(d, q);
    for (int i = 0; i <= *last; i++) {
        if (r[i] > r[0] || d[i] < d[0] || d[i] > b) continue;
        int hidden = 0; /* from a lower -q that was not offered it, and within its bound */
        for (int q2 = PNMF_PICK_FLOOR + 1; q2 < q; q2++)
            if (last_of(d, q2) < i && d[i] <= bound_of(d, q2)) hidden = 1;
        if (hidden) continue;
        if (isinf(l)) { /* the fewest bytes, then the least error */
            if (best < 0 || r[i] < r[best] || (r[i] == r[best] && d[i] < d[best])) best = i;
            continue;
        }
        const double j = d[i] + l * r[i], jb = best < 0 ? 0 : d[best] + l * r[best];
        if (best < 0 || j < jb || (j == jb && r[i] < r[best])) best = i;
    }
    return best;
}

static void one_set(const double *r, const double *d)
{
    int prev = 0; /* -q PNMF_PICK_FLOOR keeps the first coding */
    for (int q = PNMF_PICK_FLOOR + 1; q <= PNMF_MAX_QUALITY; q++) {
        PnmfStepPick p;
        pnmf_step_pick_init(&p, q, lambda_of(q));
        int took = -1, i = 0;
        for (; i < N && !p.done; i++) {
            const int may_end = pnmf_step_pick_may_end(&p);
            if (pnmf_step_pick_offer(&p, r[i], d[i])) took = i;
            CHECK_MSG(may_end || !p.done, "-q %d: done at coding %d, unforeseen", q, i);
        }
        int last;
        const int want = brute(r, d, q, &last);
        CHECK_MSG(p.done && i == last + 1, "-q %d: done after %d codings, the definition %d", q, i, last + 1);
        CHECK_MSG(p.best == want && took == want, "-q %d: picked %d (last accepted %d), the definition %d", q,
                  p.best, took, want);
        if (p.best < 0) return;
        CHECK_MSG(r[p.best] <= r[prev] && d[p.best] >= d[prev],
                  "-q %d: coding %d (%g bytes, error %g) after coding %d (%g, %g)", q, p.best, r[p.best],
                  d[p.best], prev, r[prev], d[prev]);
        CHECK(p.br == r[p.best] && p.bd == d[p.best]);
        prev = p.best;
    }
}

/* Below the floor (pnmf_fine_pick): the codings at the floor's step
 * and finer, n = PNMF_FINE_CODINGS of them, the first the floor's own.
 * For -q 0 .. floor - 1 (lambda 0 at -q 0, then rising), the pick is the
 * brute force's (the lowest error + lambda * bytes, then fewest bytes,
 * then first, among those with no more error than the first); the
 * encoder's way of finding it (a coding at a time, keeping the one the
 * prefix picks last) finds the same; and from -q 0 up to the floor bytes
 * never rise and errors never fall (the floor's own coding: errors). */
#define NF PNMF_FINE_CODINGS
static double fine_lambda(int q) { return q ? 0.05 * exp2(q / 4.0) : 0; }

static void fine_set(const double *r, const double *d)
{
    int prev = -1;
    for (int q = 0; q <= PNMF_PICK_FLOOR; q++) {
        if (q == PNMF_PICK_FLOOR) { /* the floor keeps its own coding */
            CHECK_MSG(prev < 0 || d[0] >= d[prev], "the floor's coding after %d", prev);
            break;
        }
        const double l = fine_lambda(q);
        int want = -1;
        for (int i = 0; i < NF; i++) {
            if (d[i] > d[0]) continue;
            const double j = d[i] + l * r[i], jb = want < 0 ? 0 : d[want] + l * r[want];
            if (want < 0 || j < jb || (j == jb && r[i] < r[want])) want = i;
        }
        const int got = pnmf_fine_pick(r, d, NF, l);
        CHECK_MSG(got == want, "-q %d: picked %d, the definition %d", q, got, want);
        int step = 0;
        for (int n = 1; n <= NF; n++)
            if (pnmf_fine_pick(r, d, n, l) == n - 1) step = n - 1;
        CHECK_MSG(step == got, "-q %d: a coding at a time kept %d, the whole set %d", q, step, got);
        CHECK(d[got] <= d[0]);
        if (q == 0) /* the least error, then the fewest bytes */
            for (int i = 0; i < NF; i++)
                CHECK(d[got] < d[i] || (d[got] == d[i] && r[got] <= r[i]));
        if (prev >= 0)
            CHECK_MSG(r[got] <= r[prev] && d[got] >= d[prev], "-q %d: coding %d (%g bytes, error %g) after %d (%g, %g)",
                      q, got, r[got], d[got], prev, r[prev], d[prev]);
        prev = got;
    }
}

int main(void)
{
    {
        double r[NF], d[NF];
        /* noisy curves from the floor's step down to lossless (error 0
         * last), flats and ties, and noise */
        for (int set = 0; set < 3000; set++) {
            const int kind = set % 3;
            for (int i = 0; i < NF; i++) {
                if (kind == 0)
                    r[i] = 1000 * exp(0.2 * i) * (1 + 0.1 * (2 * urand() - 1)), d[i] = 400 * exp(-0.5 * i) * urand();
                else if (kind == 1)
                    r[i] = 1000 + (int)(urand() * 3), d[i] = (int)(urand() * 3) * 50;
                else
                    r[i] = urand() * 1000, d[i] = urand() * 1000;
            }
            if (kind == 0) d[NF - 1] = 0;
            fine_set(r, d);
        }
        /* a clean curve with bytes weighing much: -q 0 lossless, the
         * largest -q the floor's own coding */
        for (int i = 0; i < NF; i++) r[i] = 1000 + 100 * i, d[i] = 40 - 10 * i;
        CHECK(pnmf_fine_pick(r, d, NF, 0) == NF - 1);
        CHECK(pnmf_fine_pick(r, d, NF, 1e3) == 0);
        /* the first coding stands when every other has more error */
        for (int i = 1; i < NF; i++) r[i] = 900, d[i] = 41;
        CHECK(pnmf_fine_pick(r, d, NF, 0) == 0 && pnmf_fine_pick(r, d, NF, 1e3) == 0);
        /* and a finer coding with fewer bytes and no more error wins at
         * every lambda (a lossless window cheaper than the floor's) */
        r[NF - 1] = 500, d[NF - 1] = 0;
        CHECK(pnmf_fine_pick(r, d, NF, 0) == NF - 1 && pnmf_fine_pick(r, d, NF, 1e3) == NF - 1);
    }

    double r[N], d[N];
    /* noisy rate-distortion curves: bytes fall and error rises with the
     * step, each coding off the curve by up to 10 % */
    for (int set = 0; set < 2000; set++) {
        const double noise = set % 2 ? 0.1 : 0.02;
        for (int i = 0; i < N; i++) {
            r[i] = 10000 * exp(-0.15 * i) * (1 + noise * (2 * urand() - 1));
            d[i] = 500 * exp(0.35 * i) * (1 + noise * (2 * urand() - 1));
        }
        one_set(r, d);
    }
    /* flats and ties (bytes that hardly depend on the step, equal errors) */
    for (int set = 0; set < 2000; set++) {
        for (int i = 0; i < N; i++) {
            r[i] = 1000 + (int)(urand() * 4);
            d[i] = (int)(urand() * 3) * 100;
        }
        one_set(r, d);
    }
    /* plain noise */
    for (int set = 0; set < 2000; set++) {
        for (int i = 0; i < N; i++) r[i] = urand() * 1000, d[i] = urand() * 1000;
        one_set(r, d);
    }
    /* the first coding alone counts when every other one is larger or
     * better: every -q keeps it */
    for (int i = 0; i < N; i++) r[i] = 100 + i, d[i] = 50 - i;
    for (int q = PNMF_PICK_FLOOR + 1; q <= PNMF_MAX_QUALITY; q += 7) {
        PnmfStepPick p;
        pnmf_step_pick_init(&p, q, lambda_of(q));
        for (int i = 0; i < N && !p.done; i++) pnmf_step_pick_offer(&p, r[i], d[i]);
        CHECK(p.best == 0);
    }
    /* on a clean curve, with bytes weighing much, a -q of the grid picks
     * its own step's coding (the coarsest within its bound), -q 64 the
     * coarsest of all; and it is done two codings past its own */
    for (int i = 0; i < N; i++) r[i] = 1000 - 10 * i, d[i] = 10 + 10 * i;
    for (int i = 1; i < N; i++) {
        PnmfStepPick p;
        pnmf_step_pick_init(&p, PNMF_PICK_FLOOR + i * PNMF_PICK_GRID, 1e3);
        int k = 0;
        for (; k < N && !p.done; k++) pnmf_step_pick_offer(&p, r[k], d[k]);
        CHECK_MSG(p.best == i, "-q %d picked coding %d", PNMF_PICK_FLOOR + i * PNMF_PICK_GRID, p.best);
        CHECK_MSG(k == (i + 3 < N ? i + 3 : N), "-q %d: %d codings offered", PNMF_PICK_FLOOR + i * PNMF_PICK_GRID, k);
    }
    return test_summary("test_step_pick");
}
