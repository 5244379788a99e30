/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pnmf-bench's arithmetic (pure, no I/O): the power law that fits a set of
 * timings, as in "encode time grows like n^1.1".
 */
#ifndef PNMF_BENCH_STATS_H
#define PNMF_BENCH_STATS_H

/* Fit y = a * x^b to n points by least squares on log y = log a + b log x.
 * Returns 0 with *a, *b and, if r2 is not NULL, *r2 (the coefficient of
 * determination of the log-log line; 1 when every log y is the same). Returns
 * -1 and sets nothing when the fit is undefined: n < 2, an x or y not finite
 * or not positive, or all x equal. */
int bench_power_fit(const double *x, const double *y, int n, double *a, double *b, double *r2);

#endif /* PNMF_BENCH_STATS_H */
