/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A tiny test harness: CHECK records a failure and goes on; the test's
 * main() returns test_summary(), which prints "N passed, N failed". */
#ifndef PNMF_TEST_H
#define PNMF_TEST_H

#include <math.h>
#include <stdio.h>

static int test_pass_, test_fail_;

#define CHECK(cond) do { \
    if (cond) test_pass_++; \
    else { test_fail_++; fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); } \
} while (0)

#define CHECK_MSG(cond, ...) do { \
    if (cond) test_pass_++; \
    else { test_fail_++; fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
           fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } \
} while (0)

/* |a - b| <= tol * max(1, |a|, |b|) */
#define CHECK_NEAR(a, b, tol) do { \
    double a_ = (a), b_ = (b), m_ = fabs(a_) > fabs(b_) ? fabs(a_) : fabs(b_); \
    if (m_ < 1) m_ = 1; \
    CHECK_MSG(fabs(a_ - b_) <= (tol) * m_, "%.12g vs %.12g (tol %g)", a_, b_, (double)(tol)); \
} while (0)

static inline int test_summary(const char *name) {
    printf("%s: %d passed, %d failed\n", name, test_pass_, test_fail_);
    return test_fail_ ? 1 : 0;
}

#endif /* PNMF_TEST_H */
