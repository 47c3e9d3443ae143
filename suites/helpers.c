#define _DEFAULT_SOURCE
#include "helpers.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int same_double(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* The spec path's answer must be the fast path's, bit for bit, so that a statement test fails
 * when either path breaks its statement (sieve_filter_spec, oracle/sieve.h). */
static void expect_same_paths(const filtered *fast, const filtered *spec, size_t v) {
  cr_expect_eq(spec->rc, fast->rc, "the spec path returns %d, the fast path %d", spec->rc,
               fast->rc);
  for (size_t i = 0; fast->rc == 0 && i < v; i++)
    cr_expect(same_double(spec->lp[i], fast->lp[i]),
              "token %zu: the spec path gives %.17g, the fast path %.17g", i, spec->lp[i],
              fast->lp[i]);
  cr_expect(fast->rc != 0 || (spec->info.kept == fast->info.kept &&
                              same_double(spec->info.kept_mass, fast->info.kept_mass) &&
                              same_double(spec->info.topp_margin, fast->info.topp_margin) &&
                              same_double(spec->info.cut_gap, fast->info.cut_gap)),
            "the spec path keeps %zu (mass %.17g, margin %.17g, gap %.17g), the fast path %zu "
            "(%.17g, %.17g, %.17g)",
            spec->info.kept, spec->info.kept_mass, spec->info.topp_margin, spec->info.cut_gap,
            fast->info.kept, fast->info.kept_mass, fast->info.topp_margin, fast->info.cut_gap);
}

filtered run_filter_params(const float *logits, size_t v, const sieve_params *p,
                           const sieve_engine *engine) {
  filtered f, spec;
  memset(&f, 0, sizeof f);
  memset(&spec, 0, sizeof spec);
  cr_assert(v <= MAX_V, "test row too long");
  const long live = live_allocations();
  f.rc = sieve_filter(logits, v, p, engine, f.lp, &f.info);
  spec.rc = sieve_filter_spec(logits, v, p, engine, spec.lp, &spec.info);
  cr_expect_eq(live_allocations(), live, "the filters leave %ld blocks allocated",
               live_allocations() - live);
  expect_same_paths(&f, &spec, v);
  return f;
}

filtered run_filter_engine(const float *logits, size_t v, double t, double top_p, int64_t top_k,
                           const sieve_engine *engine) {
  const sieve_params p = {t, top_p, top_k, 0.0, NULL};
  return run_filter_params(logits, v, &p, engine);
}

filtered run_filter(const float *logits, size_t v, double t, double top_p, int64_t top_k) {
  return run_filter_engine(logits, v, t, top_p, top_k, NULL);
}

int is_kept(const filtered *f, size_t i) { return !isinf(f->lp[i]); }

void logits_from_probs(const double *p, size_t v, float *logits) {
  for (size_t i = 0; i < v; i++)
    logits[i] = (float)log(p[i]);
}

uint64_t rng_next(rng *r) { return sieve_mix64(r->state += SIEVE_HASH_GOLDEN); }

double rng_unit(rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

static double normal(rng *r) {
  double u1 = rng_unit(r) + 0x1.0p-54, u2 = rng_unit(r);
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

void random_row(rng *r, float *logits, size_t v) {
  unsigned shape = (unsigned)(rng_next(r) % 5);
  for (size_t i = 0; i < v; i++) {
    double x = normal(r) * 2.0;
    if (shape == 1 && i == 0)
      x += 8.0; /* peaked */
    if (shape == 2)
      x = (double)(rng_next(r) % 4); /* blocks of exact ties */
    if (shape == 4)
      x = 0.5; /* flat */
    logits[i] = (float)x;
  }
  if (shape == 3) /* -inf holes, never the whole row */
    for (size_t i = 1; i < v; i++)
      if (rng_next(r) % 3 == 0)
        logits[i] = -INFINITY;
}

sieve_params random_params(rng *r, size_t v) {
  sieve_params p = SIEVE_PARAMS_DEFAULT;
  p.temperature = rng_next(r) % 10 == 0 ? 1e-6 : 0.05 + 2.95 * rng_unit(r);
  p.top_p = rng_next(r) % 4 == 0 ? 1.0 : 1.0 - rng_unit(r);
  p.top_k = rng_next(r) % 3 == 0 ? -1 : 1 + (int64_t)(rng_next(r) % (v + 2));
  return p;
}

void *guarded(size_t bytes) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE), span = (bytes + page - 1) / page * page;
  char *base = mmap(NULL, span + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  cr_assert(base != MAP_FAILED);
  cr_assert_eq(mprotect(base + span, page, PROT_NONE), 0);
  return base + span - bytes;
}

const double *guarded_row(size_t n) {
  double *row = guarded(n * sizeof *row);
  for (size_t i = 0; i < n; i++)
    row[i] = 1.0;
  return row;
}

/* The test binary's malloc, calloc, realloc and free: glibc's, with a switch that makes large
 * mallocs fail, and a count of the blocks allocated and not yet freed. glibc calls them for its
 * own allocations too (qsort's merge buffer). Under AddressSanitizer, which owns malloc, both
 * are missing. */
#if SANITIZED
int fail_allocations(size_t bytes, unsigned after) {
  (void)bytes;
  (void)after;
  return 0;
}

void allocations_succeed(void) {}

long live_allocations(void) { return -1; }
#else
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *block, size_t size);
void __libc_free(void *block);
static size_t fail_from = SIZE_MAX;
static unsigned fail_after;
static long live;

void *malloc(size_t size) {
  if (size >= fail_from) {
    if (fail_after == 0)
      return NULL;
    fail_after--;
  }
  void *block = __libc_malloc(size);
  live += block != NULL;
  return block;
}

void *calloc(size_t n, size_t size) {
  void *block = __libc_calloc(n, size);
  live += block != NULL;
  return block;
}

void *realloc(void *block, size_t size) {
  void *moved = __libc_realloc(block, size);
  live += (block == NULL && moved != NULL) - (block != NULL && size == 0 && moved == NULL);
  return moved;
}

void free(void *block) {
  live -= block != NULL;
  __libc_free(block);
}

long live_allocations(void) { return live; }

int fail_allocations(size_t bytes, unsigned after) {
  fail_from = bytes;
  fail_after = after;
  return 1;
}

void allocations_succeed(void) { fail_from = SIZE_MAX; }
#endif
