/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <math.h>

#include "bench_stats.h"

int bench_power_fit(const double *x, const double *y, int n, double *a, double *b, double *r2)
{
    if (n < 2) return -1;
    /* means first, then centred sums: no cancellation when the logs are large */
    double mx = 0, my = 0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(x[i]) || !isfinite(y[i]) || !(x[i] > 0) || !(y[i] > 0)) return -1;
        mx += log(x[i]);
        my += log(y[i]);
    }
    mx /= n;
    my /= n;
    double sxx = 0, sxy = 0, syy = 0;
    for (int i = 0; i < n; i++) {
        const double dx = log(x[i]) - mx, dy = log(y[i]) - my;
        sxx += dx * dx;
        sxy += dx * dy;
        syy += dy * dy;
    }
    /* all x equal (to rounding): no slope */
    if (!(sxx > 1e-24 * n)) return -1;
    const double slope = sxy / sxx;
    *b = slope;
    *a = exp(my - slope * mx);
    if (r2) *r2 = syy > 0 ? sxy * sxy / (sxx * syy) : 1;
    return 0;
}
