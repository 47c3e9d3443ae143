/*
 * The hint of a failure (hint.h). One axis value at a time first; where none gives every
 * answer, two together, among the values that give at least one of them: an implementation
 * departs on several axes at once, and two departures must not read as a choice sieve has no
 * name for.
 */
#include "hint.h"

#include <stdio.h>

#define FUZZ_HINT_CANDIDATES 24 /* values tried in pairs */

/* Whether rule r gives the answer of the minimal case (`all`: and of every sample; else of the
 * minimal case or any sample). */
static int rule_gives(const fuzz_judge *j0, const sieve_rule *r, const fuzz_failure *f,
                      const fuzz_sample *k, size_t n, int all) {
  fuzz_judge j = *j0;
  fuzz_judgement jd;
  j.rule = r;
  int gives =
      fuzz_judge_answer(&j, f->request, f->row, f->answer, &jd) == 0 && jd.verdict < FUZZ_KEPT;
  for (size_t i = 0; i < n && (all ? gives : !gives); i++)
    gives = k[i].request && fuzz_judge_answer(&j, k[i].request, 0, k[i].answer, &jd) == 0 &&
            jd.verdict < FUZZ_KEPT;
  return gives;
}

/* The base rule with axis a at v, when that is another rule. Not the draw: `draw=own` is a
 * generator of the oracle's own, whose tokens match an implementation's only by chance (an
 * implementation that draws so says "rng": "own", and is asked no draw). */
static int moved(const sieve_rule *base, int a, int v, sieve_rule *out) {
  *out = *base;
  return a != SIEVE_AXIS_DRAW && v != sieve_rule_get(base, a) && sieve_rule_set(out, a, v) == 0;
}

static void append(char *out, size_t len, size_t *at, const char *sep, int a, int v) {
  if (*at < len)
    *at += (size_t)snprintf(out + *at, len - *at, "%s%s=%s", *at ? sep : "", sieve_axis_name(a),
                            sieve_axis_value_name(a, v));
}

/* Pairs of the values that give some answer, of two different axes, that give them all. */
static void pairs_of(const fuzz_judge *j, const sieve_rule *base, const fuzz_failure *f,
                     const fuzz_sample *k, size_t n, char *out, size_t len, size_t *at) {
  int axis[FUZZ_HINT_CANDIDATES], value[FUZZ_HINT_CANDIDATES];
  size_t m = 0;
  sieve_rule r;
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
    for (int v = 0; v < sieve_axis_values(a) && m < FUZZ_HINT_CANDIDATES; v++)
      if (moved(base, a, v, &r) && rule_gives(j, &r, f, k, n, 0))
        axis[m] = a, value[m++] = v;
  for (size_t x = 0; x < m; x++)
    for (size_t y = x + 1; y < m; y++)
      if (axis[x] != axis[y] && moved(base, axis[x], value[x], &r) &&
          sieve_rule_set(&r, axis[y], value[y]) == 0 && rule_gives(j, &r, f, k, n, 1)) {
        append(out, len, at, "; ", axis[x], value[x]);
        if (*at < len)
          *at += (size_t)snprintf(out + *at, len - *at, " with %s=%s", sieve_axis_name(axis[y]),
                                  sieve_axis_value_name(axis[y], value[y]));
      }
}

void fuzz_hint(const fuzz_judge *j, const sieve_rule *base, const fuzz_failure *f,
               const fuzz_sample *samples, size_t n, char *out, size_t len, int *pairs) {
  size_t at = 0;
  sieve_rule r;
  out[0] = '\0';
  *pairs = 0;
  if (!f->answer)
    return;
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
    for (int v = 0; v < sieve_axis_values(a); v++)
      if (moved(base, a, v, &r) && rule_gives(j, &r, f, samples, n, 1))
        append(out, len, &at, ", ", a, v);
  if (at == 0 && (*pairs = 1))
    pairs_of(j, base, f, samples, n, out, len, &at);
}
