/*
 * The statistics of the statistical suites (distribution.c, speculative_distribution.c):
 * Pearson's chi-square goodness of fit and its p-value.
 */
#ifndef SIEVE_STATISTICS_H
#define SIEVE_STATISTICS_H

#include <stddef.h>

typedef struct chi_square {
  double statistic, p;
  int df;
  long impossible; /* a cell seen that is expected never (p = 0), or -1 */
} chi_square;

/*
 * Pearson's chi-square of `seen` (n answers in all) against the probabilities `expected` (they
 * sum to 1), on (cells expected > 0) - 1 degrees of freedom. A cell with probability 0 that was
 * seen makes the answers impossible. When a cell is expected fewer than `min_count` times the
 * test is not asked: p = 1, df = 0.
 */
chi_square stat_chi_square(const double *expected, const size_t *seen, size_t cells, size_t n,
                           double min_count);

/* The regularized upper incomplete gamma function Q(a, x): the chi-square p-value of a
 * statistic x on df degrees of freedom is Q(df / 2, x / 2). */
double stat_gamma_q(double a, double x);

#endif /* SIEVE_STATISTICS_H */
