/*
 * The oracle's float64 exp and row sums (oracle/softmax.c), through the test-only header:
 * accuracy against libm, the special values, the lane order of the sums, and the same bits
 * from the vector loops as from the scalar function at every length.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../oracle/internal.h"
#include "helpers.h"

/* |a - b| in units of b's last place. */
static double ulps(double a, double b) { return fabs(a - b) / (nextafter(b, INFINITY) - b); }

Test(exp, is_within_one_ulp_of_libm_where_the_filter_uses_it) {
  /* Arguments are scaled - max <= 0; the draw also takes logprobs <= 0. */
  rng r = {2024};
  double worst = 0.0;
  for (int n = 0; n < 2000000; n++) {
    double x = -rng_unit(&r) * (n % 4 ? 40.0 : 750.0);
    double want = exp(x);
    if (want > 0.0)
      worst = fmax(worst, ulps(sieve__exp(x), want));
  }
  cr_expect_leq(worst, 1.0, "worst error %.3f ulp", worst);
}

Test(exp, is_within_one_ulp_of_libm_for_positive_arguments) {
  rng r = {7};
  for (int n = 0; n < 200000; n++) {
    double x = rng_unit(&r) * 709.0;
    cr_assert_leq(ulps(sieve__exp(x), exp(x)), 1.0, "exp(%a)", x);
  }
}

Test(exp, gives_exact_values_at_the_ends_of_its_domain) {
  cr_expect(same_double(sieve__exp(0.0), 1.0));
  cr_expect(same_double(sieve__exp(-0.0), 1.0));
  cr_expect(same_double(sieve__exp(-INFINITY), 0.0));
  cr_expect(same_double(sieve__exp(-746.0), 0.0));
  cr_expect(same_double(sieve__exp(-1e300), 0.0));
  cr_expect(isinf(sieve__exp(710.0)) && isinf(sieve__exp(INFINITY)));
  cr_expect(isnan(sieve__exp(NAN)));
}

Test(exp, rounds_subnormal_results_like_libm) {
  /* Results below 2^-1022 are scaled in two steps so that they are rounded once. */
  for (double x = -708.5; x > -745.2; x -= 0.0371) {
    double want = exp(x);
    cr_assert(fabs(sieve__exp(x) - want) <= 0x1p-1074, "exp(%a): %a, libm %a", x, sieve__exp(x),
              want);
  }
}

Test(exp, row_loops_give_the_scalar_bits_at_every_length) {
  /* The row loops run in vector registers (AVX-512 or AVX2 where the CPU has them); without
   * contraction each lane does the scalar function's operations, so the bits are the same. */
  const size_t max_n = 1100;
  float *row = malloc(max_n * sizeof *row);
  double *x = malloc(max_n * sizeof *x), *out = malloc(max_n * sizeof *out);
  cr_assert(row && x && out);
  rng r = {99};
  for (size_t n = 0; n <= max_n; n += n < 70 ? 1 : 97) {
    for (size_t i = 0; i < n; i++) {
      row[i] = i % 13 == 5 ? -INFINITY : (float)(rng_unit(&r) * 60.0 - 50.0);
      x[i] = -rng_unit(&r) * 800.0;
    }
    const float mul = 1.3f;
    const double max = 10.0;
    double total = sieve__exp_sum(row, n, mul, max, out), acc[8] = {0};
    for (size_t i = 0; i < n; i++) {
      double want = sieve__exp((double)(row[i] * mul) - max);
      cr_assert(same_double(out[i], want), "n %zu, token %zu", n, i);
      acc[i % 8] += want;
    }
    cr_assert(same_double(total, ((acc[0] + acc[1]) + (acc[2] + acc[3])) +
                                     ((acc[4] + acc[5]) + (acc[6] + acc[7]))),
              "total of %zu", n);
    cr_assert(same_double(sieve__exp_sum(row, n, mul, max, NULL), total));
    sieve__exp_each(x, n, out);
    for (size_t i = 0; i < n; i++)
      cr_assert(same_double(out[i], sieve__exp(x[i])), "exp_each: n %zu, token %zu", n, i);
  }
  free(row);
  free(x);
  free(out);
}

Test(exp, each_reads_and_writes_n_entries_no_more) {
  const double *x = guarded_row(700); /* 1.0 each, ending where an unreadable page begins */
  double out[701];
  out[700] = -1.0;
  sieve__exp_each(x, 700, out);
  cr_expect(same_double(out[699], sieve__exp(1.0)));
  cr_expect(same_double(out[700], -1.0), "out[n] untouched");
}

Test(sum, reads_n_entries_no_more) {
  const double *x = guarded_row(704); /* whole lanes, ending where an unreadable page begins */
  cr_expect(same_double(sieve__sum(x, 704), 704.0));
}

Test(sum, adds_eight_token_lanes_then_the_lanes_pairwise) {
  /* Values chosen so that another order gives another double. */
  const double x[11] = {1.0,     0x1p-53, 0x1p-53, 0x1p-53, 0x1p-53, 0x1p-53,
                        0x1p-53, 0x1p-53, 0x1p-53, 0x1p-52, 0.5};
  double lanes[8] = {0};
  for (size_t i = 0; i < 11; i++)
    lanes[i % 8] += x[i];
  double want = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
                ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
  double sequential = 0.0;
  for (size_t i = 0; i < 11; i++)
    sequential += x[i];
  cr_assert(!same_double(want, sequential), "the example does not tell the orders apart");
  cr_expect(same_double(sieve__sum(x, 11), want));
  cr_expect(same_double(sieve__sum_marked(x, NULL, 1.0, 11), want));
}

Test(sum, marked_sum_adds_zero_for_unmarked_tokens) {
  const double x[9] = {0.5, 0.25, 0.125, 8.0, 0.0, 1.0, 2.0, 4.0, 16.0};
  const double mark[9] = {1, 0, 1, 0, 1, 1, 0, 0, 1};
  cr_expect(same_double(sieve__sum_marked(x, mark, 1.0, 9), 0.5 + 0.125 + 1.0 + 16.0));
  cr_expect(same_double(sieve__sum_marked(x, mark, 2.0, 9), (0.5 + 0.125 + 1.0 + 16.0) / 2));
}

Test(scaled_max, finds_the_largest_finite_scaled_logit_and_counts_finite_ones) {
  const float row[10] = {-INFINITY, 1.5f, -3.0f, 2.25f, -INFINITY, 0.0f, 2.0f, 2.25f, -7.0f, 1.0f};
  double max;
  size_t finite;
  cr_assert_eq(sieve__scaled_max(row, 10, 2.0f, &max, &finite), 0);
  cr_expect(same_double(max, 4.5));
  cr_expect_eq(finite, 8);
  const float zeros[3] = {-0.0f, -INFINITY, -0.0f};
  cr_assert_eq(sieve__scaled_max(zeros, 3, 1.0f, &max, NULL), 0);
  cr_expect(same_double(max, 0.0), "a zero maximum is +0.0");
  const float none[2] = {-INFINITY, -INFINITY};
  cr_expect_eq(sieve__scaled_max(none, 2, 1.0f, &max, NULL), SIEVE_ENOFINITE);
  const float big[3] = {1.0f, 3e38f, -INFINITY};
  cr_expect_eq(sieve__scaled_max(big, 3, 10.0f, &max, NULL), SIEVE_EOVERFLOW);
}
