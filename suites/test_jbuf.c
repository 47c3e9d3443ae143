/*
 * The JSON writer of the protocol (harness/protocol/jbuf.h): every number it writes reads back
 * as the same double. Numbers in its exact range are written by its own digits, so they are held
 * to printf's "%.17g" text, byte for byte, over random bits, float32 values, powers of ten and
 * the ties that round to even.
 */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "protocol/jbuf.h"

/* jbuf_num's text of x beside printf's; 1 when they are the same. */
static int written_as_printf(double x) {
  char want[40];
  snprintf(want, sizeof want, "%.17g", x);
  jbuf b = {0};
  jbuf_num(&b, x);
  int same = b.data && strcmp(b.data, want) == 0;
  if (!same)
    cr_log_error("%a: jbuf wrote %s, printf %s", x, b.data ? b.data : "(nothing)", want);
  double back = b.data ? strtod(b.data, NULL) : NAN;
  jbuf_free(&b);
  return same && back == x;
}

static double from_bits(uint64_t bits) {
  double x;
  memcpy(&x, &bits, sizeof x);
  return x;
}

Test(jbuf, writes_random_doubles_as_printf_writes_17_significant_digits) {
  rng r = {1};
  int bad = 0;
  for (int i = 0; i < 200000; i++) {
    /* Exponents from 2^-30 to 2^60 cover the exact range and both sides of it. */
    uint64_t bits = (rng_next(&r) & 0x800FFFFFFFFFFFFFULL) | ((993 + rng_next(&r) % 90) << 52);
    bad += !written_as_printf(from_bits(bits));
  }
  cr_expect_eq(bad, 0, "%d of 200000 differ", bad);
}

Test(jbuf, writes_float32_values_as_printf_writes_17_significant_digits) {
  rng r = {2};
  int bad = 0;
  for (int i = 0; i < 200000; i++)
    bad += !written_as_printf((double)(float)((rng_unit(&r) - 0.5) * pow(10, i % 12 - 6)));
  cr_expect_eq(bad, 0, "%d of 200000 differ", bad);
}

Test(jbuf, writes_powers_of_ten_and_their_neighbours_as_printf) {
  int bad = 0;
  for (int e = -8; e <= 18; e++) {
    double p = pow(10, e);
    for (double x = p, k = 0; k < 4; k++, x = nextafter(x, 0))
      bad += !written_as_printf(x) + !written_as_printf(-x);
    for (double x = p, k = 0; k < 4; k++, x = nextafter(x, INFINITY))
      bad += !written_as_printf(x);
  }
  cr_expect_eq(bad, 0);
}

Test(jbuf, rounds_a_tie_at_the_17th_digit_to_even_as_printf) {
  /* A whole number of 18 - k digits plus an odd j / 2^k: exactly 18 significant digits ending in
   * 5, halfway between two 17-digit texts, and exact in a double for k >= 3. */
  rng r = {3};
  int bad = 0;
  for (int k = 3; k <= 10; k++) {
    double low = pow(10, 17 - k);
    for (int i = 0; i < 2000; i++) {
      double whole = low + (double)(rng_next(&r) % (uint64_t)(9 * low));
      double j = (double)(2 * (rng_next(&r) % (1ULL << (k - 1))) + 1);
      bad += !written_as_printf(whole + ldexp(j, -k));
    }
  }
  cr_expect_eq(bad, 0);
}

Test(jbuf, writes_infinities_and_nan_as_protocol_v1_does) {
  jbuf b = {0};
  jbuf_num(&b, -INFINITY);
  jbuf_char(&b, ',');
  jbuf_num(&b, INFINITY);
  jbuf_char(&b, ',');
  jbuf_num(&b, NAN);
  jbuf_char(&b, ',');
  jbuf_num(&b, -0.0);
  cr_expect_str_eq(b.data, "null,\"inf\",\"nan\",-0");
  jbuf_free(&b);
}
