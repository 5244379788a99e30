/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Rate control's choice of a window's coding (ratectl.h): above the floor
 * the search (pnmf_step_search), which codes a few steps of the grid,
 * against an exhaustive sweep that codes them all; below it
 * pnmf_fine_pick against its definition and the search there
 * (pnmf_fine_search) against pnmf_fine_pick over all the codings.
 *
 * The sweep, written out here: among all the grid's codings, those with
 * no more bytes and no less error than step 0's and an error within -q's
 * bound (the largest error at -q's grid step and finer, a fraction t of
 * the way to the next step's where that is larger), the lowest error +
 * lambda * bytes. Checked, for every -q from 17 to 64:
 * - with every coding known, pnmf_step_search_pick is the sweep;
 * - the search never asks for a step twice, ends, and its pick is
 *   admissible to the sweep too (its bound is never above the sweep's), so
 *   its cost is never below the sweep's optimum;
 * - on curves whose cost has one minimum (bytes falling and error rising
 *   geometrically with the step) it finds
 *   the sweep's pick exactly, coding only step 0 and the steps between
 *   -q's and the pick and one or two beyond, and
 *   picks fewer bytes and more error as -q rises;
 * - on noisy curves (each coding off the curve by up to 2 % or 10 %) and
 *   on the codings of three real windows, recorded, its cost is within
 *   COST_TOL_2 (real windows too) / COST_TOL_10 of the sweep's optimum;
 * - on a recorded screen-content window whose error falls from -q 52's
 *   step to -q 56's, at the encoder's lambda and told a uniform
 *   quantizer's error, it makes the sweep's pick at every -q, so bytes
 *   never rise and errors never fall as -q rises;
 * - with the finer walk's foretelling (the encoder's search): on clean
 *   and convex curves the sweep's pick with no more codings, none past a
 *   pick finer than -q's on clean ones; on the recorded windows a cost
 *   within COST_TOL_2 of the sweep's on the mean, COST_TOL_KID at worst,
 *   with fewer codings; on 2 % noisy curves within COST_TOL_10.
 */
#include <stdlib.h>

#include "enc_internal.h"
#include "ratectl.h"
#include "residual_search.h"
#include "test.h"
#include "tuning.h"

#define N PNMF_PICK_CODINGS
/* the search's cost over the sweep's optimum, at most, on curves 2 % and 10 % off */
#define COST_TOL_2  1.02
#define COST_TOL_10 1.10
/* the foretelling's worst cost over the sweep's on the recorded windows, whose curves are not convex everywhere */
#define COST_TOL_KID 1.25

static unsigned rs = 777;
static double urand(void) { rs = rs * 1103515245u + 12345u; return ((rs >> 8) & 0xFFFFFF) / 16777216.0; }

/* lambda: the weight of a byte at q (any rising function will do; -q 64: bytes only) */
static double lambda_of(int q) { return q < PNMF_MAX_QUALITY ? 0.05 * exp2(q / 4.0) : INFINITY; }

static double cost(const double *r, const double *d, int i, double l) { return isinf(l) ? r[i] : d[i] + l * r[i]; }

/* The sweep's bound of q over all the codings. */
static double sweep_bound(const double *d, int q)
{
    const int lo = (q - PNMF_PICK_FLOOR) / PNMF_PICK_GRID;
    const double t = (double)(q - PNMF_PICK_FLOOR - lo * PNMF_PICK_GRID) / PNMF_PICK_GRID;
    double env = 0;
    for (int i = 0; i <= lo; i++) env = d[i] > env ? d[i] : env;
    if (lo + 1 < N && d[lo + 1] > env) env += t * (d[lo + 1] - env);
    return env;
}

static int sweep_admits(const double *r, const double *d, int q, int i)
{
    return r[i] <= r[0] && d[i] >= d[0] && d[i] <= sweep_bound(d, q);
}

/* The sweep's pick at lambda l: the lowest cost, then the fewer bytes,
 * then the finer (bytes only: the fewest, then the least error). */
static int sweep_at(const double *r, const double *d, int q, double l)
{
    int best = 0;
    for (int i = 1; i < N; i++) {
        if (!sweep_admits(r, d, q, i)) continue;
        const double j = cost(r, d, i, l), jb = cost(r, d, best, l);
        if (isinf(l) ? r[i] < r[best] || (r[i] == r[best] && d[i] < d[best]) : j < jb || (j == jb && r[i] < r[best]))
            best = i;
    }
    return best;
}

static int sweep(const double *r, const double *d, int q) { return sweep_at(r, d, q, lambda_of(q)); }

/* The search on one -q at lambda l, a uniform quantizer's error noise at
 * -q's grid step, fed from r and d; *n: codings made. */
/* the search as the encoder runs it (s.ahead: the finer walk foretells its next coding) */
static int use_ahead;

static int search_at(const double *r, const double *d, int q, double l, double noise, int *n)
{
    PnmfStepSearch s;
    pnmf_step_search_init(&s, q, l, noise);
    s.ahead = use_ahead;
    int coded[N] = { 0 };
    *n = 0;
    for (int i = pnmf_step_search_next(&s); i >= 0; i = pnmf_step_search_next(&s)) {
        CHECK_MSG(i < N && !coded[i], "-q %d: step %d asked for again", q, i);
        if (i >= N || coded[i] || *n > N) break;
        coded[i] = 1, ++*n;
        pnmf_step_search_add(&s, i, r[i], d[i]);
    }
    return pnmf_step_search_pick(&s);
}

static int search(const double *r, const double *d, int q, int *n) { return search_at(r, d, q, lambda_of(q), 0, n); }

/* The search as choose_step() runs it without step 0's coding (no_floor,
 * from -q PNMF_PICK_NO_FLOOR_Q up): step 0 stood in by a coding of no
 * error and unbounded bytes, and lo's step kept where nothing else is
 * admissible; *n: codings made, step 0 not among them. */
static int search_no_floor(const double *r, const double *d, int q, double l, double noise, int *n)
{
    PnmfStepSearch s;
    pnmf_step_search_init(&s, q, l, noise);
    s.ahead = use_ahead;
    pnmf_step_search_add(&s, 0, INFINITY, 0);
    int coded[N] = { 1 };
    *n = 0;
    for (int i = pnmf_step_search_next(&s); i >= 0; i = pnmf_step_search_next(&s)) {
        CHECK_MSG(i < N && !coded[i], "no floor, -q %d: step %d asked for again", q, i);
        if (i >= N || coded[i] || *n > N) break;
        coded[i] = 1, ++*n;
        pnmf_step_search_add(&s, i, r[i], d[i]);
    }
    const int got = pnmf_step_search_pick(&s);
    return got ? got : s.lo;
}

/* The search as choose_step() runs it with its finer codings weighed on
 * the window's first frames (pnmf_pick_prefix_cut()), their foretold
 * costs taken as the whole window's: a coding finer than lo's step whose
 * cost is over the margin above the one step coarser's, made, goes in as
 * cut (INFINITY bytes, no error); floor 0: step 0 stood in as
 * search_no_floor()'s. *n: codings made whole, *cuts: codings cut. */
static int search_cut(const double *r, const double *d, int q, double l, double noise, int floor, int *n, int *cuts)
{
    PnmfStepSearch s;
    pnmf_step_search_init(&s, q, l, noise);
    s.ahead = use_ahead;
    int coded[N] = { 0 }, cut[N] = { 0 };
    if (!floor) pnmf_step_search_add(&s, 0, INFINITY, 0), coded[0] = 1;
    *n = *cuts = 0;
    for (int i = pnmf_step_search_next(&s); i >= 0; i = pnmf_step_search_next(&s)) {
        CHECK_MSG(i < N && !coded[i], "cut, -q %d: step %d asked for again", q, i);
        if (i >= N || coded[i] || *n + *cuts > N) break;
        coded[i] = 1;
        const double jf = d[i] + l * r[i];
        if (i < s.lo && coded[i + 1] && !cut[i + 1] && !(i + 1 == 0 && !floor) && !isinf(l) &&
            pnmf_pick_prefix_cut(jf, d[i + 1] + l * r[i + 1])) {
            cut[i] = 1, ++*cuts;
            pnmf_step_search_add(&s, i, INFINITY, 0);
        } else {
            ++*n;
            pnmf_step_search_add(&s, i, r[i], d[i]);
        }
    }
    const int got = pnmf_step_search_pick(&s);
    CHECK_MSG(!cut[got], "cut, -q %d: the pick %d is a coding cut", q, got);
    return got || floor ? got : s.lo;
}

/* worst cost ratio seen on noisy curves */
static double worst;

/* One set of codings: unimodal 1 for a curve whose cost has one minimum
 * (exact agreement expected), 0 for a noisy one (cost within tol). */
static void one_set(const double *r, const double *d, int unimodal, double tol)
{
    int prev = 0; /* -q PNMF_PICK_FLOOR keeps step 0 */
    for (int q = PNMF_PICK_FLOOR + 1; q <= PNMF_MAX_QUALITY; q++) {
        /* the pick with every coding known is the sweep */
        PnmfStepSearch all;
        pnmf_step_search_init(&all, q, lambda_of(q), 0);
        for (int i = 0; i < N; i++) pnmf_step_search_add(&all, i, r[i], d[i]);
        const int want = sweep(r, d, q);
        CHECK_MSG(pnmf_step_search_pick(&all) == want, "-q %d: the pick over all %d, the sweep %d", q,
                  pnmf_step_search_pick(&all), want);
        int n;
        const int got = search(r, d, q, &n), lo = (q - PNMF_PICK_FLOOR) / PNMF_PICK_GRID;
        CHECK_MSG(sweep_admits(r, d, q, got), "-q %d: the search's pick %d is not the sweep's to make", q, got);
        const double l = lambda_of(q), jg = cost(r, d, got, l), jw = cost(r, d, want, l);
        if (unimodal) {
            CHECK_MSG(got == want, "-q %d: the search picked %d, the sweep %d", q, got, want);
            CHECK_MSG(n <= 4 + abs(lo - got), "-q %d: %d codings for step %d", q, n, got);
            CHECK_MSG(r[got] <= r[prev] && d[got] >= d[prev],
                      "-q %d: step %d (%g bytes, error %g) after step %d (%g, %g)",
                      q, got, r[got], d[got], prev, r[prev], d[prev]);
            prev = got;
        } else if (!isinf(l)) {
            CHECK_MSG(jg <= jw * tol, "-q %d: cost %g against the sweep's %g", q, jg, jw);
            if (jg / jw > worst) worst = jg / jw;
        }
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

/* Bytes and squared errors of three windows of synfig_kid.mkv coded at
 * each step of the grid (-q 16, 20, ..., 64), as the encoder measured
 * them. */
static const double kid[3][N][2] = {
    { { 135553, 2060092 }, { 109826, 3908617 }, { 80541, 8328616 }, { 60253, 14827343 }, { 40521, 26587539 },
      { 27598, 45564463 }, { 16627, 73320059 }, { 10952, 114119272 }, { 7871, 172960161 }, { 6370, 243033008 },
      { 4166, 345712261 }, { 2748, 550976114 }, { 1476, 857480986 } },
    { { 64521, 3090261 }, { 48442, 5277077 }, { 43108, 8261131 }, { 34240, 12198786 }, { 21318, 17711533 },
      { 13737, 27612776 }, { 9985, 45507160 }, { 6691, 77067451 }, { 4564, 132573797 }, { 3792, 210980843 },
      { 1891, 341959410 }, { 784, 574508862 }, { 250, 1224534742 } },
    { { 42702, 1481751 }, { 32367, 2474264 }, { 27872, 3842446 }, { 20354, 5493909 }, { 13398, 7864346 },
      { 9794, 12193660 }, { 7396, 20168048 }, { 5625, 32729608 }, { 4180, 56298988 }, { 3108, 92414205 },
      { 2021, 155704646 }, { 856, 286924131 }, { 235, 681990805 } },
};

/* Set `set` of CURVE_SETS of codings: 0..799 clean and convex curves
 * (the odd ones bent), 800..1199 2 % noisy curves whose step 0 has the
 * most bytes and the least error, then the recorded synfig_kid windows. */
enum { CURVE_SETS = 1203 };
static void curve_set(int set, double *r, double *d)
{
    if (set < 800) {
        const double a = 0.25 + 0.2 * urand(), c = 0.35 + 0.4 * urand();
        const double bb = set % 2 ? a / 23 * urand() : 0, dd = set % 2 ? 0.03 * urand() : 0;
        const double R = 1e3 * exp2(10 * urand()), D = 1e3 * exp2(14 * urand());
        for (int i = 0; i < N; i++) r[i] = R * exp(-a * i + bb * i * i), d[i] = D * exp(c * i + dd * i * i);
    } else if (set < 1200) {
        const double R = 1e4 * exp2(6 * urand()), D = 1e3 * exp2(12 * urand());
        for (int i = 0; i < N; i++) {
            r[i] = R * exp(-0.35 * i) * (1 + 0.02 * (2 * urand() - 1));
            d[i] = D * exp(0.7 * i) * (1 + 0.02 * (2 * urand() - 1));
        }
        r[0] = 2 * r[1], d[0] = d[1] / 2;
    } else {
        for (int i = 0; i < N; i++) r[i] = kid[set - 1200][i][0], d[i] = kid[set - 1200][i][1];
    }
}

/* Bytes and squared errors of window 1 of x11_oneko.mkv (60 frames of
 * 320x240, screen content with a sprite layer) coded at each step of the
 * grid, the coding offered at each (with its sprite layer or without), as
 * the encoder measured them: the error at -q 56's step is below -q 52's
 * and -q 48's. */
static const double oneko[N][2] = {
    { 5402, 36429 },     { 5489, 117712 },    { 4635, 182795 },     { 4198, 375424 },   { 4178, 657854 },
    { 3961, 1427232 },   { 3481, 1710208 },   { 3067, 3270570 },    { 3328, 8815932 },  { 3095, 12759560 },
    { 2604, 11079200 },  { 2446, 35987530 },  { 2585, 164106431 },
};

/* The encoder's weight of a byte at -q q and a uniform quantizer's error
 * at q's grid step on px pixels, as enc_rate.c computes them. */
static double enc_lambda(int q)
{
    return q < PNMF_MAX_QUALITY ? 8 * enc_residual_lambda(pnmf_residual_step(q + PNMF_PICK_LAMBDA_Q)) : INFINITY;
}
static double enc_noise(int q, double px)
{
    const double st = pnmf_residual_step(PNMF_PICK_FLOOR + (q - PNMF_PICK_FLOOR) / PNMF_PICK_GRID * PNMF_PICK_GRID) / 16.0;
    return px * st * st / 12;
}

/* The search below the floor (pnmf_fine_search) on one -q, fed from r
 * and d, told a uniform quantizer's error noise at the floor's step;
 * *n: codings made, coded[]: which. */
static int fine_search_l(const double *r, const double *d, int q, double lambda, double noise, int *n, int *coded)
{
    PnmfFineSearch s;
    pnmf_fine_search_init(&s, q, lambda, noise);
    for (int i = 0; i < NF; i++) coded[i] = 0;
    *n = 0;
    for (int i = pnmf_fine_search_next(&s); i >= 0; i = pnmf_fine_search_next(&s)) {
        CHECK_MSG(i < NF && !coded[i], "-q %d: fine step %d asked for again", q, i);
        if (i >= NF || coded[i] || *n > NF) break;
        coded[i] = 1, ++*n;
        pnmf_fine_search_add(&s, i, r[i], d[i]);
    }
    return pnmf_fine_search_pick(&s);
}
static int fine_search(const double *r, const double *d, int q, double noise, int *n, int *coded)
{
    return fine_search_l(r, d, q, fine_lambda(q), noise, n, coded);
}
/* The encoder's weight of a byte below the floor (enc_rate.c). */
static double enc_fine_lambda(int q)
{
    return 8 * enc_residual_lambda(pnmf_residual_step(q + PNMF_FINE_LAMBDA_Q));
}

/* The step of -q + PNMF_FINE_LAMBDA_Q in the fine grid (the start), the
 * one finer than the floor's where that is the floor's: the step coded on
 * content not coded exactly. */
static int fine_start(int q)
{
    const int q8 = q + PNMF_FINE_LAMBDA_Q;
    return q8 >= PNMF_PICK_FLOOR - PNMF_FINE_GRID ? 1 : (PNMF_PICK_FLOOR - q8) / PNMF_FINE_GRID;
}

/* For every -q below the floor, on content that looks exact (the
 * floor's error under 1 / PNMF_FINE_EXACT_NOISE of noise): the search's
 * pick against pnmf_fine_pick over all the codings (checked above
 * against its definition): the same where unimodal (the cost of the
 * steps before lossless has one minimum), else a cost within tol. On
 * other content: the floor's coding and the start's alone, and
 * pnmf_fine_pick's pick over those two. -q 0 makes only the lossless
 * coding. */
static void fine_search_set(const double *r, const double *d, int unimodal, double tol, double noise)
{
    const int exact = d[0] * PNMF_FINE_EXACT_NOISE < noise;
    for (int q = 0; q < PNMF_PICK_FLOOR; q++) {
        int n, coded[NF];
        const double l = fine_lambda(q);
        const int got = fine_search(r, d, q, noise, &n, coded), want = pnmf_fine_pick(r, d, NF, l);
        if (!q) {
            CHECK_MSG(got == NF - 1 && n == 1, "-q 0: picked %d after %d codings", q, n);
            continue;
        }
        CHECK_MSG(d[got] <= d[0], "-q %d: step %d has more error than the floor's", q, got);
        CHECK_MSG(exact == coded[NF - 1], "-q %d: lossless coded %d on content exact %d", q, coded[NF - 1], exact);
        if (!exact) {
            const int st = fine_start(q), two[2] = { 0, st };
            const double r2[2] = { r[0], r[st] }, d2[2] = { d[0], d[st] };
            CHECK_MSG(n == 2 && coded[0] && coded[st], "-q %d: %d codings, not the floor's and %d's", q, n, st);
            CHECK_MSG(got == two[pnmf_fine_pick(r2, d2, 2, l)], "-q %d: picked %d", q, got);
        } else if (unimodal)
            CHECK_MSG(got == want, "-q %d: the search picked %d, all the codings %d", q, got, want);
        else
            CHECK_MSG(d[got] + l * r[got] <= tol * (d[want] + l * r[want]), "-q %d: cost %g against %g", q,
                      d[got] + l * r[got], d[want] + l * r[want]);
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
        /* the search below the floor: clean curves (bytes rising and
         * error falling geometrically towards the finer steps) with a
         * lossless coding of any bytes, the same pick; curves 5 % off, a
         * cost within COST_TOL_10; and the codings of a window of
         * x11_penguins.mkv (-k 0, 30 frames), recorded, whose lossless
         * coding has fewer bytes than the three steps before it, the same
         * pick */
        for (int set = 0; set < 3000; set++) {
            const double a = 1.05 + 0.4 * urand(), b = 0.3 + 0.6 * urand();
            const double R = 1e3 * exp2(10 * urand()), D = R * exp2(8 * urand() - 2), noise = set % 3 ? 0.05 : 0;
            for (int i = 0; i < NF; i++)
                r[i] = R * pow(a, i) * (1 + noise * (2 * urand() - 1)),
                d[i] = D * pow(b, i) * (1 + noise * (2 * urand() - 1));
            r[NF - 1] = R * pow(a, NF - 1) * (0.3 + 1.4 * urand()), d[NF - 1] = 0;
            fine_search_set(r, d, noise == 0, COST_TOL_10, INFINITY);
            fine_search_set(r, d, noise == 0, COST_TOL_10, 0);
        }
        static const double pen[NF][2] = { { 27898, 96303 }, { 28893, 68798 }, { 29709, 43669 },
                                           { 30607, 38695 }, { 31128, 33370 }, { 32361, 24349 },
                                           { 33981, 9008 },  { 33682, 4719 },  { 31454, 0 } };
        /* at the encoder's noise (30 frames of 320 x 240) the window
         * looks exact, so the lossless coding is made and kept where the
         * nine codings keep it */
        const double s16 = pnmf_residual_step(PNMF_PICK_FLOOR) / 16.0, px = 30 * 320 * 240;
        for (int i = 0; i < NF; i++) r[i] = pen[i][0], d[i] = pen[i][1];
        fine_search_set(r, d, 1, 0, px * s16 * s16 / 12);
        {
            int n, coded[NF];
            CHECK(fine_search(r, d, 1, px * s16 * s16 / 12, &n, coded) == NF - 1);
        }
        /* window 0 of natural_cup.mkv (60 frames of 320 x 240) at the
         * steps of -q 16, 12, 10, 8 and 0 as the encoder measured them
         * (the others never coded: repeated from their neighbours): its
         * floor's error is 0.31 of a uniform quantizer's, so -q 1 codes
         * the start alone (-q 10's step) and keeps it, the pick of the
         * five codings at the encoder's lambda; a noise 16 times lower would not make it exact */
        {
            static const double cup[NF][2] = { { 121359, 1904542 }, { 121359, 1904542 }, { 190621, 1249215 },
                                               { 225306, 973936 },  { 261301, 816541 },  { 261301, 816541 },
                                               { 261301, 816541 },  { 261301, 816541 },  { 553845, 0 } };
            const double cn = 60 * px / 30 * s16 * s16 / 12;
            for (int i = 0; i < NF; i++) r[i] = cup[i][0], d[i] = cup[i][1];
            int n, coded[NF];
            CHECK(fine_search_l(r, d, 1, enc_fine_lambda(1), cn, &n, coded) == 3 && n == 2);
            CHECK(pnmf_fine_pick(r, d, NF, enc_fine_lambda(1)) == 3);
            fine_search_set(r, d, 0, INFINITY, cn);
            PnmfFineSearch s;
            pnmf_fine_search_init(&s, 1, fine_lambda(1), cn);
            pnmf_fine_search_add(&s, 0, r[0], d[0]);
            CHECK(!pnmf_fine_search_exact(&s));
            pnmf_fine_search_init(&s, 1, fine_lambda(1), cn * PNMF_FINE_EXACT_NOISE);
            CHECK(!pnmf_fine_search_exact(&s)); /* the floor's coding not made yet */
            pnmf_fine_search_add(&s, 0, r[0], d[0]);
            CHECK(pnmf_fine_search_exact(&s));
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
    /* clean curves: bytes falling and error rising geometrically with the
     * step, at several rates and scales (their costs, sums of two
     * exponentials, have one minimum) */
    for (int set = 0; set < 400; set++) {
        const double a = 0.55 + 0.35 * urand(), b = 1.4 + 0.9 * urand();
        const double R = 1e3 * exp2(10 * urand()), D = 1e3 * exp2(14 * urand());
        for (int i = 0; i < N; i++) r[i] = R * pow(a, i), d[i] = D * pow(b, i);
        one_set(r, d, 1, 0);
    }
    /* the recorded windows: the third one's cost has a second minimum,
     * two steps finer than the first, which the search does not reach
     * (costs 1.0357e7 and 1.0451e7 at -q 49) */
    for (int w = 0; w < 3; w++) {
        for (int i = 0; i < N; i++) r[i] = kid[w][i][0], d[i] = kid[w][i][1];
        one_set(r, d, 0, COST_TOL_2);
    }
    /* noisy rate-distortion curves: bytes fall and error rises with the
     * step, each coding off the curve by up to 2 % or 10 % */
    for (int set = 0; set < 2000; set++) {
        const double noise = set % 2 ? 0.1 : 0.02;
        for (int i = 0; i < N; i++) {
            r[i] = 10000 * exp(-0.35 * i) * (1 + noise * (2 * urand() - 1));
            d[i] = 500 * exp(0.7 * i) * (1 + noise * (2 * urand() - 1));
        }
        one_set(r, d, 0, set % 2 ? COST_TOL_10 : COST_TOL_2);
    }
    printf("noisy curves: the search's cost at most %.4f times the sweep's\n", worst);
    /* flats and ties, and plain noise: only the rules (admissible, no step
     * twice, an end) */
    for (int set = 0; set < 2000; set++) {
        for (int i = 0; i < N; i++) {
            r[i] = set % 2 ? 1000 + (int)(urand() * 4) : urand() * 1000;
            d[i] = set % 2 ? (int)(urand() * 3) * 100 : urand() * 1000;
        }
        one_set(r, d, 0, INFINITY);
    }
    /* step 0 alone counts when every other one is larger or better */
    for (int i = 0; i < N; i++) r[i] = 100 + i, d[i] = 50 - i;
    for (int q = PNMF_PICK_FLOOR + 1; q <= PNMF_MAX_QUALITY; q += 7) {
        int n;
        CHECK(search(r, d, q, &n) == 0);
    }
    /* on a clean line, with bytes weighing much, a -q of the grid picks its
     * own step (the coarsest within its bound) after three codings: step 0,
     * its own and the one below it */
    for (int i = 0; i < N; i++) r[i] = 1000 - 10 * i, d[i] = 10 + 10 * i;
    for (int i = 1; i < N; i++) {
        int n;
        const int q = PNMF_PICK_FLOOR + i * PNMF_PICK_GRID;
        CHECK_MSG(search(r, d, q, &n) == i, "-q %d picked step %d", q, search(r, d, q, &n));
        CHECK_MSG(n == (i >= 2 ? 3 : 2), "-q %d: %d codings", q, n);
    }
    /* content every step codes exactly (error 0 at each, as
     * samples/life.mkv): the search goes up to the coarsest step, the
     * sweep's pick, at every -q */
    for (int i = 0; i < N; i++) r[i] = 1000 - 50 * i + 20 * (i % 2), d[i] = 0;
    one_set(r, d, 1, 0);
    for (int q = PNMF_PICK_FLOOR + 1; q <= PNMF_MAX_QUALITY; q++) {
        int n;
        CHECK_MSG(search(r, d, q, &n) == N - 1, "-q %d: exact content, step %d", q, search(r, d, q, &n));
    }
    /* exact content whose bytes have stopped falling (a still screen,
     * every block predicted exactly: each step's bytes within a few of
     * zstd's): the walk to coarser steps ends PNMF_PICK_SETTLED codings
     * past -q's step, and its pick costs within PNMF_PICK_SETTLED_GAIN of
     * the sweep's */
    for (int i = 0; i < N; i++) r[i] = 5200 + i * 7 % 5, d[i] = 0;
    for (int q = PNMF_PICK_FLOOR + 1; q <= PNMF_MAX_QUALITY; q++) {
        PnmfStepSearch s;
        pnmf_step_search_init(&s, q, lambda_of(q), 0);
        int top = 0, n = 0;
        for (int i = pnmf_step_search_next(&s); i >= 0 && n <= N; i = pnmf_step_search_next(&s), n++)
            pnmf_step_search_add(&s, i, r[i], d[i]), top = i > top ? i : top;
        const int lo = (q - PNMF_PICK_FLOOR) / PNMF_PICK_GRID, got = pnmf_step_search_pick(&s);
        const int want = sweep(r, d, q), end = lo + PNMF_PICK_SETTLED < N - 1 ? lo + PNMF_PICK_SETTLED : N - 1;
        CHECK_MSG(top == end, "settled, -q %d: coded up to step %d, %d expected", q, top, end);
        CHECK_MSG(r[got] * (1 - PNMF_PICK_SETTLED_GAIN) <= r[want], "settled, -q %d: %g bytes, the sweep's %g", q,
                  r[got], r[want]);
    }
    /* the recorded screen-content window at the encoder's lambda: told a
     * uniform quantizer's error, the search makes the sweep's pick at
     * every -q (at -q 54 the step of -q 56, fewer bytes and less error
     * than -q 52's), so from -q 17 to 64 bytes never rise and errors never
     * fall; told nothing (noise 0), it stops at -q 52's step there */
    for (int i = 0; i < N; i++) r[i] = oneko[i][0], d[i] = oneko[i][1];
    {
        int prev = 0, n;
        for (int q = PNMF_PICK_FLOOR + 1; q <= PNMF_MAX_QUALITY; q++) {
            const int got = search_at(r, d, q, enc_lambda(q), enc_noise(q, 60 * 320 * 240), &n);
            const int want = sweep_at(r, d, q, enc_lambda(q));
            CHECK_MSG(got == want, "oneko -q %d: the search picked %d, the sweep %d", q, got, want);
            CHECK_MSG(r[got] <= r[prev] && d[got] >= d[prev],
                      "oneko -q %d: step %d (%g bytes, error %g) after step %d (%g, %g)", q, got, r[got], d[got], prev,
                      r[prev], d[prev]);
            prev = got;
        }
        CHECK(search_at(r, d, 54, enc_lambda(54), enc_noise(54, 60 * 320 * 240), &n) == 10);
        CHECK(search_at(r, d, 54, enc_lambda(54), 0, &n) == 9);
    }
    /* and where the cost falls all the way to the finest steps (bytes
     * weighing little), the search goes down to step 1 */
    for (int i = 0; i < N; i++) r[i] = 1000 - 10 * i, d[i] = 10 + 1000 * i;
    {
        int n;
        CHECK(search(r, d, 60, &n) == sweep(r, d, 60));
    }
    /* the foretelling of the finer walk (s.ahead, as the encoder runs the
     * search). On clean curves (geometric: the foretold coding is the
     * coding) and on curves convex in the log of the step (towards finer
     * steps each adds more bytes and saves less error than the one
     * before, as real windows do) it makes the sweep's pick, codes no
     * more than without it, and codes no step past the pick where the
     * pick is finer than -q's; on the recorded synfig_kid windows at the
     * encoder's lambda its cost is within COST_TOL_2 of the sweep's with
     * fewer codings over all -q; on 2 % noisy curves, within COST_TOL_10 */
    {
        int saved = 0;
        for (int set = 0; set < 800; set++) {
            const double a = 0.25 + 0.2 * urand(), c = 0.35 + 0.4 * urand();
            const double bb = set % 2 ? a / 23 * urand() : 0, dd = set % 2 ? 0.03 * urand() : 0;
            const double R = 1e3 * exp2(10 * urand()), D = 1e3 * exp2(14 * urand());
            for (int i = 0; i < N; i++) r[i] = R * exp(-a * i + bb * i * i), d[i] = D * exp(c * i + dd * i * i);
            for (int q = PNMF_PICK_FLOOR + 1; q < PNMF_MAX_QUALITY; q++) {
                int n0, n1;
                use_ahead = 0;
                search(r, d, q, &n0);
                use_ahead = 1;
                const int got = search(r, d, q, &n1), want = sweep(r, d, q), lo = (q - PNMF_PICK_FLOOR) / PNMF_PICK_GRID;
                CHECK_MSG(got == want, "ahead, -q %d: the search picked %d, the sweep %d", q, got, want);
                CHECK_MSG(n1 <= n0, "ahead, -q %d: %d codings, %d without", q, n1, n0);
                if (set % 2 == 0) /* geometric: nothing coded past a pick finer than -q's */
                    CHECK_MSG(got >= lo - 1 || n1 <= 2 + lo - got, "ahead, -q %d: %d codings for step %d", q, n1, got);
                saved += n0 - n1;
            }
        }
        CHECK(saved > 0);
        saved = 0;
        double sum = 0, most = 0;
        int np = 0;
        for (int w = 0; w < 3; w++) {
            for (int i = 0; i < N; i++) r[i] = kid[w][i][0], d[i] = kid[w][i][1];
            for (int q = PNMF_PICK_FLOOR + 1; q < PNMF_MAX_QUALITY; q++) {
                int n0, n1;
                use_ahead = 0;
                search_at(r, d, q, enc_lambda(q), 0, &n0);
                use_ahead = 1;
                const int got = search_at(r, d, q, enc_lambda(q), 0, &n1), want = sweep_at(r, d, q, enc_lambda(q));
                const double x = cost(r, d, got, enc_lambda(q)) / cost(r, d, want, enc_lambda(q));
                sum += x, np++, most = x > most ? x : most;
                saved += n0 - n1;
            }
        }
        /* their curves are not convex everywhere (kid 1's bytes fall by 1.2
         * from -q 48's step to -q 52's, by 2.0 from -q 52's to -q 56's), so
         * a window can lose: the mean and the worst are bounded */
        printf("recorded synfig_kid windows, the foretelling: %d codings fewer, cost %.4f times the sweep's on the "
               "mean, %.4f at most\n", saved, sum / np, most);
        CHECK(saved > 0);
        CHECK(sum / np <= COST_TOL_2);
        CHECK(most <= COST_TOL_KID);
        worst = 0;
        for (int set = 0; set < 2000; set++) {
            for (int i = 0; i < N; i++) {
                r[i] = 10000 * exp(-0.35 * i) * (1 + 0.02 * (2 * urand() - 1));
                d[i] = 500 * exp(0.7 * i) * (1 + 0.02 * (2 * urand() - 1));
            }
            one_set(r, d, 0, COST_TOL_10);
        }
        printf("2 %% noisy curves, the foretelling: cost at most %.4f times the sweep's\n", worst);
        use_ahead = 0;
    }
    /* without step 0's coding (the encoder's no_floor: filmed and
     * rendered windows from -q PNMF_PICK_NO_FLOOR_Q up, with their sprite
     * layer or without): on curves where step 0 has the most bytes and the
     * least error and does not win (the search with it picks another
     * step), the search without it makes the same pick after the same
     * codings but step 0's, with the finer walk foretold and without, at
     * the encoder's lambda: on clean and convex curves, the recorded
     * synfig_kid windows and 2 % noisy curves */
    {
        int checked = 0;
        for (int set = 0; set < CURVE_SETS; set++) {
            curve_set(set, r, d);
            for (int ahead = 0; ahead < 2; ahead++)
                for (int q = PNMF_PICK_NO_FLOOR_Q; q <= PNMF_MAX_QUALITY; q++) {
                    int n0, n1;
                    use_ahead = ahead;
                    const double l = enc_lambda(q), noise = enc_noise(q, 60 * 320 * 240);
                    const int want = search_at(r, d, q, l, noise, &n0);
                    if (!want) continue; /* step 0 wins: the encoder goes without it only where it does not */
                    const int got = search_no_floor(r, d, q, l, noise, &n1);
                    CHECK_MSG(got == want, "no floor, set %d, ahead %d, -q %d: picked %d, with step 0 %d", set, ahead,
                              q, got, want);
                    CHECK_MSG(n1 == n0 - 1, "no floor, set %d, ahead %d, -q %d: %d codings, with step 0 %d", set,
                              ahead, q, n1, n0);
                    checked++;
                }
        }
        use_ahead = 0;
        printf("without step 0's coding: the same pick on %d searches\n", checked);
        CHECK(checked > 50000);
    }
    /* a finer coding weighed on the first frames (pnmf_pick_foretell(),
     * pnmf_pick_prefix_cut()): the foretelling is exact where the frames
     * after the first cost the same each; and where the foretold costs
     * are in the order of the whole window's, the search that cuts the
     * codings over the margin makes the pick of the search that codes
     * them whole, with step 0's coding and without, the finer walk
     * foretold and not, at the encoder's lambda, with no more codings
     * made whole, and it cuts some */
    {
        for (int t = 0; t < 1000; t++) {
            const int m = 16 + (int)(urand() * 100), p = 2 + (int)(urand() * (m - 2));
            const double c0 = 1e6 * urand(), c = 1e5 * urand();
            const double want = c0 + (m - 1) * c, got = pnmf_pick_foretell(c0, c0 + (p - 1) * c, p, m);
            CHECK_MSG(fabs(got - want) <= 1e-9 * want, "foretold %g of %d frames from %d, want %g", got, m, p, want);
        }
        CHECK(pnmf_pick_prefix_cut(1.0 + 2 * PNMF_PICK_PREFIX_MARGIN, 1.0) && !pnmf_pick_prefix_cut(1.0, 1.0));
        int checked = 0, cuts_all = 0, saved = 0;
        for (int set = 0; set < CURVE_SETS; set++) {
            curve_set(set, r, d);
            for (int floor = 0; floor < 2; floor++)
                for (int ahead = 0; ahead < 2; ahead++)
                    for (int q = PNMF_PICK_NO_FLOOR_Q; q <= PNMF_MAX_QUALITY; q++) {
                        int n0, n1, cuts;
                        use_ahead = ahead;
                        const double l = enc_lambda(q), noise = enc_noise(q, 60 * 320 * 240);
                        int want = floor ? search_at(r, d, q, l, noise, &n0) : search_no_floor(r, d, q, l, noise, &n0);
                        if (floor) n0--; /* step 0's, not counted below */
                        const int got = search_cut(r, d, q, l, noise, floor, &n1, &cuts);
                        if (floor) n1--;
                        CHECK_MSG(got == want, "cut, set %d, floor %d, ahead %d, -q %d: picked %d, whole %d", set,
                                  floor, ahead, q, got, want);
                        CHECK_MSG(n1 <= n0 && n1 + cuts <= n0 + 1, "cut, set %d, -q %d: %d whole and %d cut, %d without",
                                  set, q, n1, cuts, n0);
                        cuts_all += cuts, saved += n0 - n1, checked++;
                    }
        }
        use_ahead = 0;
        printf("finer codings weighed on the first frames: the same pick on %d searches, %d codings cut\n", checked,
               cuts_all);
        CHECK(checked > 100000 && cuts_all > 1000);
    }
    return test_summary("test_step_pick");
}
