/* Matching answers against fixture expectations; see check.h. */
#include "check.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/recipe.h"
#include "protocol/request.h"
#include "sieve.h"

typedef struct checker {
  char *why;
  size_t why_len;
  int error_mismatch;
  int precision;   /* sieve_precision */
  int shows_tails; /* the array being matched holds a logprob below what the precision's */
} checker;         /* probabilities can hold: it answers in logit space, nothing underflows */

typedef struct tolerance_spec {
  double abs, rel;
  double f32_abs;   /* The matcher's float32 bound, added at precision float32. */
  double p_abs;     /* A kept entry also matches when its probability, exp of the logprob, is */
  double f32_p_abs; /* within p_abs (plus f32_p_abs at float32): one that underflows. */
} tolerance_spec;

static const char *const precision_names[] = {
#define SIEVE__PRECISION_NAME(id, name) name,
    SIEVE_PRECISIONS(SIEVE__PRECISION_NAME)
#undef SIEVE__PRECISION_NAME
};

const char *sieve_precision_name(int precision) {
  return precision >= 0 && precision < SIEVE_PRECISION_COUNT ? precision_names[precision] : "?";
}

int sieve_precision_parse(const char *name) {
  for (int i = 0; name && i < SIEVE_PRECISION_COUNT; i++)
    if (strcmp(name, precision_names[i]) == 0)
      return i;
  return -1;
}

static int mismatch(checker *c, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int mismatch(checker *c, const char *path, const char *fmt, ...) {
  int n = snprintf(c->why, c->why_len, "%s: ", *path ? path : "answer");
  if (n >= 0 && (size_t)n < c->why_len) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->why + n, c->why_len - (size_t)n, fmt, ap);
    va_end(ap);
  }
  return 0;
}

static void child_path(char *out, size_t len, const char *path, const char *key, int index) {
  if (key)
    snprintf(out, len, "%s%s%s", path, *path ? "." : "", key);
  else
    snprintf(out, len, "%s[%d]", path, index);
}

static int match(checker *c, const cJSON *expect, const cJSON *got, const char *path);

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

int sieve_answer_is_nan(const cJSON *x) {
  return cJSON_IsString(x) && strcmp(x->valuestring, "nan") == 0;
}

/* How a mismatch names a value that is no number. */
static const char *non_number(const cJSON *got) {
  return sieve_answer_is_nan(got) ? "NaN" : "a non-number";
}

static int match_exact(checker *c, const cJSON *want, const cJSON *got, const char *path) {
  double a, b;
  if (req_number(want, REQ_NULL_MINUS_INF, &a) == 0 && !cJSON_IsString(want)) {
    if (req_number(got, REQ_NULL_MINUS_INF, &b) != 0 || cJSON_IsString(got))
      return mismatch(c, path, "expected the number %.17g, got %s", a, non_number(got));
    return same_bits(a, b) ? 1 : mismatch(c, path, "expected exactly %.17g, got %.17g", a, b);
  }
  if (cJSON_IsString(want))
    return cJSON_IsString(got) && strcmp(want->valuestring, got->valuestring) == 0
               ? 1
               : mismatch(c, path, "expected \"%s\"", want->valuestring);
  if (cJSON_IsBool(want))
    return cJSON_IsBool(got) && cJSON_IsTrue(want) == cJSON_IsTrue(got)
               ? 1
               : mismatch(c, path, "expected %s", cJSON_IsTrue(want) ? "true" : "false");
  return match(c, want, got, path);
}

static double allowed(const checker *c, const tolerance_spec *t, double want) {
  double f32 = c->precision == SIEVE_PRECISION_FLOAT32 ? t->f32_abs : 0.0;
  return t->abs + f32 + t->rel * fabs(want);
}

/* A kept entry whose probability is below the smallest number of the implementation's
 * arithmetic comes back as that number's rounding: removed (-inf), or a coarse logprob. */
static int underflows_alike(const checker *c, double want, double got, const tolerance_spec *t) {
  double bound = t->p_abs + (c->precision == SIEVE_PRECISION_FLOAT32 ? t->f32_p_abs : 0.0);
  return bound > 0 && !c->shows_tails && isfinite(want) && !isnan(got) && got < 0 &&
         fabs(exp(got) - exp(want)) <= bound;
}

static int close_enough(const checker *c, double want, double got, const tolerance_spec *t) {
  if (underflows_alike(c, want, got, t))
    return 1;
  if (isinf(want) || isnan(want))
    return same_bits(want, got) || (isnan(want) && isnan(got));
  return fabs(got - want) <= allowed(c, t, want);
}

static int off_by(checker *c, const char *path, double want, double got, const tolerance_spec *t) {
  if (isinf(want) || isinf(got) || isnan(got))
    return mismatch(c, path, "expected %.17g, got %.17g", want, got);
  if (c->precision == SIEVE_PRECISION_FLOAT32 && t->f32_abs > 0)
    return mismatch(c, path,
                    "expected %.17g, got %.17g: off by %.3g, beyond the float32 bound "
                    "%.3g",
                    want, got, fabs(got - want), allowed(c, t, want));
  return mismatch(c, path, "expected %.17g, got %.17g: off by %.3g, beyond %g + %g relative", want,
                  got, fabs(got - want), t->abs, t->rel);
}

/* The mismatch of an answer that is not an array of `n` entries. */
static int not_array_of(checker *c, const char *path, int n, const cJSON *got) {
  if (!cJSON_IsArray(got))
    return mismatch(c, path, "expected an array of %d entries, got no array", n);
  return mismatch(c, path, "expected an array of %d entries, got %d", n, cJSON_GetArraySize(got));
}

/* Whether an answer's array holds a finite logprob below the log of the precision's smallest
 * number: a probability in that arithmetic cannot be that small, so the answer is in logit space.
 */
static int shows_tails(const checker *c, const cJSON *got) {
  const double floor = log(c->precision == SIEVE_PRECISION_FLOAT32 ? FLT_TRUE_MIN : DBL_TRUE_MIN);
  for (const cJSON *x = got->child; x; x = x->next)
    if (cJSON_IsNumber(x) && isfinite(x->valuedouble) && x->valuedouble < floor)
      return 1;
  return 0;
}

static int match_approx(checker *c, const cJSON *want, const cJSON *got, const tolerance_spec *t,
                        const char *path) {
  if (cJSON_IsArray(want)) {
    if (!cJSON_IsArray(got) || cJSON_GetArraySize(got) != cJSON_GetArraySize(want))
      return not_array_of(c, path, cJSON_GetArraySize(want), got);
    const int outer = c->shows_tails;
    c->shows_tails = shows_tails(c, got);
    int i = 0, ok = 1;
    const cJSON *g = got->child;
    for (const cJSON *w = want->child; ok && w; w = w->next, g = g->next, i++) {
      char p[256];
      child_path(p, sizeof p, path, NULL, i);
      ok = match_approx(c, w, g, t, p);
    }
    c->shows_tails = outer;
    return ok;
  }
  double a, b;
  if (req_number(want, REQ_NULL_MINUS_INF, &a) != 0)
    return mismatch(c, path, "the fixture's expected value is not a number");
  if (req_number(got, REQ_NULL_MINUS_INF, &b) != 0 || cJSON_IsString(got))
    return mismatch(c, path, "expected a number near %.17g, got %s", a, non_number(got));
  return close_enough(c, a, b, t) ? 1 : off_by(c, path, a, b, t);
}

static double number_of(const cJSON *matcher, const char *key) {
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(matcher, key);
  return cJSON_IsNumber(t) ? t->valuedouble : 0.0;
}

static tolerance_spec tolerance_of(const cJSON *matcher) {
  return (tolerance_spec){number_of(matcher, "abs"), number_of(matcher, "rel"),
                          number_of(matcher, "f32_abs"), number_of(matcher, "p_abs"),
                          number_of(matcher, "f32_p_abs")};
}

/* Whether option `index` of an $any_of is acceptable at float64 (it is not in float32_only). */
static int allowed_at_float64(const cJSON *matcher, int index) {
  const cJSON *only = cJSON_GetObjectItemCaseSensitive(matcher, "float32_only");
  for (const cJSON *i = only ? only->child : NULL; i; i = i->next)
    if (cJSON_IsNumber(i) && i->valuedouble == index)
      return 0;
  return 1;
}

static int match_any_of(checker *c, const cJSON *matcher, const cJSON *got, const char *path) {
  const cJSON *options = cJSON_GetObjectItemCaseSensitive(matcher, "$any_of");
  char first[512] = "";
  int n = 0, tried = 0;
  for (const cJSON *o = options->child; o; o = o->next, n++) {
    if (c->precision == SIEVE_PRECISION_FLOAT64 && !allowed_at_float64(matcher, n))
      continue;
    if (match(c, o, got, path))
      return 1;
    if (tried++ == 0)
      snprintf(first, sizeof first, "%s", c->why);
  }
  return mismatch(c, path, "none of %d acceptable outcomes matched; the first: %s", tried, first);
}

/* The entries of an array by index, malloc'd (one walk of the list, so a sparse matcher's
 * entries are found in constant time each); NULL when out of memory. */
static const cJSON **indexed(const cJSON *array, size_t n) {
  const cJSON **items = malloc((n ? n : 1) * sizeof *items);
  size_t i = 0;
  for (const cJSON *x = array->child; items && x && i < n; x = x->next)
    items[i++] = x;
  return items;
}

/* The count and the mixsum64 of the indices of the finite (non-null) entries; -1 when out of
 * memory. */
static int kept_checksum(const cJSON *const *items, size_t n, size_t *kept, uint64_t *sum) {
  uint32_t *ids = malloc((n ? n : 1) * sizeof *ids);
  if (!ids)
    return -1;
  size_t count = 0;
  for (uint32_t i = 0; i < n; i++)
    if (!cJSON_IsNull(items[i]))
      ids[count++] = i;
  *kept = count;
  *sum = sieve_mixsum64(ids, count);
  free(ids);
  return 0;
}

static int match_sparse(checker *c, const cJSON *spec, const cJSON *got, const char *path) {
  const cJSON *length = cJSON_GetObjectItemCaseSensitive(spec, "length");
  const cJSON *count = cJSON_GetObjectItemCaseSensitive(spec, "kept_count");
  const cJSON *sum = cJSON_GetObjectItemCaseSensitive(spec, "kept_mixsum64");
  const cJSON *at = cJSON_GetObjectItemCaseSensitive(spec, "at");
  if (!cJSON_IsNumber(length) || !cJSON_IsNumber(count) || !cJSON_IsString(sum) || !at)
    return mismatch(c, path, "the fixture's $sparse matcher is malformed");
  if (!cJSON_IsArray(got) || cJSON_GetArraySize(got) != length->valueint)
    return not_array_of(c, path, length->valueint, got);
  size_t n = (size_t)length->valueint, kept;
  uint64_t checksum;
  const cJSON **items = indexed(got, n);
  if (!items || kept_checksum(items, n, &kept, &checksum) != 0) {
    free(items);
    return mismatch(c, path, "out of memory");
  }
  char hex[17];
  snprintf(hex, sizeof hex, "%016llx", (unsigned long long)checksum);
  int ok = 1;
  if (kept != (size_t)count->valueint)
    ok = mismatch(c, path, "expected %d kept (finite) entries, got %zu", count->valueint, kept);
  else if (strcmp(hex, sum->valuestring) != 0)
    ok = mismatch(c, path, "the kept ids differ (mixsum64 %s, expected %s)", hex, sum->valuestring);
  tolerance_spec t = tolerance_of(spec);
  for (const cJSON *entry = at->child; ok && entry; entry = entry->next) {
    char p[256];
    snprintf(p, sizeof p, "%s[%s]", path, entry->string);
    long i = atol(entry->string);
    ok = match_approx(c, entry, i >= 0 && (size_t)i < n ? items[i] : NULL, &t, p);
  }
  free(items);
  return ok;
}

static const cJSON *matcher_key(const cJSON *expect) {
  for (const cJSON *k = expect->child; k; k = k->next)
    if (k->string && k->string[0] == '$')
      return k;
  return NULL;
}

static int match_matcher(checker *c, const cJSON *expect, const cJSON *key, const cJSON *got,
                         const char *path) {
  tolerance_spec t = tolerance_of(expect);
  if (strcmp(key->string, "$exact") == 0)
    return match_exact(c, key, got, path);
  if (strcmp(key->string, "$approx") == 0 || strcmp(key->string, "$approx_array") == 0)
    return match_approx(c, key, got, &t, path);
  if (strcmp(key->string, "$any_of") == 0)
    return match_any_of(c, expect, got, path);
  if (strcmp(key->string, "$sparse") == 0)
    return match_sparse(c, key, got, path);
  return mismatch(c, path, "the fixture uses an unknown matcher %s", key->string);
}

static int match_object(checker *c, const cJSON *expect, const cJSON *got, const char *path) {
  const cJSON *got_error = cJSON_GetObjectItemCaseSensitive(got, "error");
  int expects_error = cJSON_GetObjectItemCaseSensitive(expect, "error") != NULL;
  if (!cJSON_IsObject(got))
    return mismatch(c, path, "expected an object");
  if ((got_error != NULL) != expects_error)
    c->error_mismatch = 1;
  if (got_error && !expects_error) {
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(got_error, "message");
    return mismatch(c, path, "expected an answer, got an error: %s",
                    cJSON_IsString(m) ? m->valuestring : "(no message)");
  }
  if (expects_error && !got_error)
    return mismatch(c, path, "expected an error, got an answer");
  for (const cJSON *e = expect->child; e; e = e->next) {
    char p[256];
    child_path(p, sizeof p, path, e->string, 0);
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(got, e->string);
    int optional_code = strcmp(e->string, "code") == 0 && strstr(path, "error") != NULL;
    if (!g && optional_code)
      continue;
    if (!g)
      return mismatch(c, p, "missing");
    if (!match(c, e, g, p))
      return 0;
  }
  return 1;
}

static int match(checker *c, const cJSON *expect, const cJSON *got, const char *path) {
  if (!got)
    return mismatch(c, path, "missing");
  if (cJSON_IsObject(expect)) {
    const cJSON *key = matcher_key(expect);
    return key ? match_matcher(c, expect, key, got, path) : match_object(c, expect, got, path);
  }
  if (cJSON_IsArray(expect)) {
    if (!cJSON_IsArray(got) || cJSON_GetArraySize(got) != cJSON_GetArraySize(expect))
      return not_array_of(c, path, cJSON_GetArraySize(expect), got);
    int i = 0;
    const cJSON *g = got->child;
    for (const cJSON *e = expect->child; e; e = e->next, g = g->next, i++) {
      char p[256];
      child_path(p, sizeof p, path, NULL, i);
      if (!match(c, e, g, p))
        return 0;
    }
    return 1;
  }
  if (cJSON_IsNull(expect))
    return cJSON_IsNull(got) ? 1 : mismatch(c, path, "expected null (-inf)");
  return match_exact(c, expect, got, path);
}

int sieve_check_at(const cJSON *expect, const cJSON *got, int precision, char *why, size_t why_len,
                   int *error_mismatch) {
  checker c = {why, why_len, 0, precision, 0};
  if (why_len)
    why[0] = '\0';
  int ok = match(&c, expect, got, "");
  if (error_mismatch)
    *error_mismatch = !ok && c.error_mismatch;
  return ok;
}

int sieve_check(const cJSON *expect, const cJSON *got, char *why, size_t why_len) {
  return sieve_check_at(expect, got, SIEVE_PRECISION_FLOAT64, why, why_len, NULL);
}

/* ----------------------------------------------------------------------------- digests */

static uint64_t digest_byte(uint64_t h, unsigned char c) { return sieve_mix64(h ^ c) + c; }

static uint64_t digest_text(uint64_t h, const char *text) {
  for (const char *p = text; *p; p++)
    h = digest_byte(h, (unsigned char)*p);
  return digest_byte(h, 0);
}

/* Members whose numbers are decisions (ids and counts), not values arithmetic may move. */
static int counted(const char *key) {
  static const char *const keys[] = {"token", "tokens", "accepted", "position", "draft_tokens"};
  for (size_t i = 0; key && i < sizeof keys / sizeof keys[0]; i++)
    if (strcmp(key, keys[i]) == 0)
      return 1;
  return 0;
}

static uint64_t digest_value(uint64_t h, const cJSON *v, const char *key, int id) {
  if (cJSON_IsNull(v))
    return digest_byte(h, 'n');
  if (cJSON_IsNumber(v) && (counted(key) || id))
    return sieve_mix64(digest_byte(h, 'i') ^ (uint64_t)(int64_t)v->valuedouble);
  if (cJSON_IsNumber(v))
    return digest_byte(h, 'f'); /* a value: where it lies within its bound is not a decision */
  if (cJSON_IsString(v))
    return digest_text(digest_byte(h, 's'), v->valuestring);
  if (cJSON_IsBool(v))
    return digest_byte(h, cJSON_IsTrue(v) ? 't' : 'u');
  /* An [id, logprob] pair of top_logprobs starts with an id. */
  const int pair =
      cJSON_IsArray(v) && key && !strcmp(key, "top_logprobs") && cJSON_IsNumber(v->child);
  h = digest_byte(h, cJSON_IsArray(v) ? '[' : '{');
  for (const cJSON *x = v->child; x; x = x->next) {
    if (cJSON_IsObject(v) && !strcmp(x->string, "message"))
      continue;
    if (cJSON_IsObject(v))
      h = digest_text(h, x->string);
    h = digest_value(h, x, cJSON_IsObject(v) ? x->string : key, pair && x == v->child);
  }
  return digest_byte(h, cJSON_IsArray(v) ? ']' : '}');
}

void sieve_answer_digest(const cJSON *answer, char out[17]) {
  snprintf(out, 17, "%016llx", (unsigned long long)digest_value(0, answer, NULL, 0));
}
