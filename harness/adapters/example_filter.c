/*
 * Using the installed oracle from a C build (pkg-config):
 *
 *   cc example_filter.c $(pkg-config --cflags --libs sieve) \
 *      -Wl,-rpath,$(pkg-config --variable=libdir sieve) -o example_filter
 *
 * (PKG_CONFIG_PATH=PREFIX/lib/pkgconfig when PREFIX is not a system one; the rpath lets the
 * program find libsieve.so.5 there at run time. For no run-time dependency, name the archive
 * instead: cc example_filter.c $(pkg-config --cflags sieve) PREFIX/lib/libsieve.a -lm.)
 *
 * Filters the mat/floor row of seed 000:21-23 with top_p 0.8 and top_k 2 and
 * prints the kept tokens' processed probabilities.
 */
#include <math.h>
#include <sieve.h>
#include <stdio.h>

int main(void) {
  const float logits[6] = {2.0f, 1.5f, 1.0f, 0.3f, -0.2f, -1.5f};
  const sieve_params params = {1.0, 0.8, 2, 0.0, NULL};
  double logprobs[6];
  sieve_filter_info info;
  int rc = sieve_filter(logits, 6, &params, NULL, logprobs, &info);
  if (rc != 0) {
    fprintf(stderr, "%s: %s\n", sieve_err_name(rc), sieve_strerror(rc));
    return 1;
  }
  printf("kept %zu:", info.kept);
  for (int i = 0; i < 6; i++)
    if (!isinf(logprobs[i]))
      printf(" %d=%.4f", i, exp(logprobs[i]));
  printf("\n");
  return 0;
}
