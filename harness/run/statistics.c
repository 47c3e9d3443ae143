/* The statistics of the statistical suites; see statistics.h. */
#include "statistics.h"

#include <math.h>

chi_square stat_chi_square(const double *expected, const size_t *seen, size_t cells, size_t n,
                           double min_count) {
  chi_square v = {0.0, 1.0, -1, -1};
  for (size_t i = 0; i < cells; i++) {
    if (expected[i] <= 0.0 && seen[i] > 0)
      return (chi_square){INFINITY, 0.0, 0, (long)i};
    if (expected[i] <= 0.0)
      continue;
    double e = (double)n * expected[i], d = (double)seen[i] - e;
    if (e < min_count)
      return (chi_square){0.0, 1.0, 0, -1};
    v.statistic += d * d / e;
    v.df++;
  }
  if (v.df <= 0)
    return (chi_square){v.statistic, 1.0, 0, -1};
  v.p = stat_gamma_q(v.df / 2.0, v.statistic / 2.0);
  return v;
}

/* P(a, x) by its series, for x < a + 1. */
static double gamma_p_series(double a, double x) {
  double term = 1.0 / a, sum = term;
  for (int n = 1; n < 1000 && fabs(term) > fabs(sum) * 1e-16; n++) {
    term *= x / (a + n);
    sum += term;
  }
  return sum * exp(-x + a * log(x) - lgamma(a));
}

/* Q(a, x) by its continued fraction (modified Lentz), for x >= a + 1. */
static double gamma_q_fraction(double a, double x) {
  const double tiny = 1e-300;
  double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
  for (int i = 1; i < 1000; i++) {
    double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    d = fabs(d) < tiny ? tiny : d;
    c = b + an / c;
    c = fabs(c) < tiny ? tiny : c;
    d = 1.0 / d;
    double delta = d * c;
    h *= delta;
    if (fabs(delta - 1.0) < 1e-16)
      break;
  }
  return exp(-x + a * log(x) - lgamma(a)) * h;
}

double stat_gamma_q(double a, double x) {
  if (x <= 0.0)
    return 1.0;
  return x < a + 1.0 ? 1.0 - gamma_p_series(a, x) : gamma_q_fraction(a, x);
}
