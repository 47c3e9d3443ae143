/* A growable text buffer for JSON output; see jbuf.h. */
#include "jbuf.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sieve.h"

static int reserve(jbuf *b, size_t extra) {
  if (b->failed)
    return -1;
  if (b->len + extra + 1 <= b->cap)
    return 0;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + extra + 1)
    cap *= 2;
  char *data = realloc(b->data, cap);
  if (!data) {
    b->failed = 1;
    return -1;
  }
  b->data = data;
  b->cap = cap;
  return 0;
}

static void append(jbuf *b, const char *text, size_t n) {
  if (reserve(b, n) != 0)
    return;
  memcpy(b->data + b->len, text, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void jbuf_free(jbuf *b) {
  free(b->data);
  *b = (jbuf){0};
}

void jbuf_reset(jbuf *b) {
  b->len = 0;
  b->failed = 0;
  if (b->data)
    b->data[0] = '\0';
}

void jbuf_raw(jbuf *b, const char *text) { append(b, text, strlen(text)); }

void jbuf_char(jbuf *b, char c) { append(b, &c, 1); }

void jbuf_str(jbuf *b, const char *text) {
  jbuf_char(b, '"');
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
    char esc[8];
    if (*p == '"' || *p == '\\') {
      esc[0] = '\\';
      esc[1] = (char)*p;
      append(b, esc, 2);
    } else if (*p < 0x20) {
      int n = snprintf(esc, sizeof esc, "\\u%04x", *p);
      append(b, esc, (size_t)n);
    } else {
      jbuf_char(b, (char)*p);
    }
  }
  jbuf_char(b, '"');
}

/* The 17 significant digits of a = m / 2^k at decimal exponent e (a in [10^e, 10^(e+1))),
 * correctly rounded, ties to even as printf rounds: round(m * 10^(16 - e) / 2^k). */
static uint64_t digits17(uint64_t m, int k, int e) {
  unsigned __int128 p = m;
  static const uint32_t pow10[8] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};
  for (int i = 16 - e; i > 0; i -= 8)
    p *= i >= 8 ? 100000000u : pow10[i];
  if (k <= 0)
    return (uint64_t)(p << -k);
  unsigned __int128 q = p >> k, r = p - (q << k), half = (unsigned __int128)1 << (k - 1);
  return (uint64_t)(q + (r > half || (r == half && (q & 1))));
}

/* printf's "%.17g" of a finite x with 1e-5 <= |x| < 1e16, where the digits above are exact in 128
 * bits; returns the length, or 0 outside that range. Large rows are mostly such numbers, and
 * printf's arbitrary-precision path is most of the time it takes to write them. */
static size_t format_g17(double x, char *out) {
  double a = fabs(x);
  if (!(a >= 1e-5 && a < 1e16))
    return 0;
  int e2, e = (int)floor(log10(a));
  uint64_t m = (uint64_t)ldexp(frexp(a, &e2), 53), d = digits17(m, 53 - e2, e);
  if (d >= 100000000000000000ULL) /* log10 was low, or the digits rounded up to 10^17 */
    d = digits17(m, 53 - e2, ++e);
  else if (d < 10000000000000000ULL)
    d = digits17(m, 53 - e2, --e);
  char digits[17];
  for (int i = 16; i >= 0; i--, d /= 10)
    digits[i] = (char)('0' + d % 10);
  int last = 16; /* the last digit written: trailing zeros go */
  while (last > 0 && digits[last] == '0')
    last--;
  size_t n = 0;
  if (x < 0)
    out[n++] = '-';
  if (e < -4) { /* %e style: d.ddde-05 */
    out[n++] = digits[0];
    if (last > 0)
      out[n++] = '.';
    for (int i = 1; i <= last; i++)
      out[n++] = digits[i];
    return n + (size_t)sprintf(out + n, "e-%02d", -e);
  }
  if (e < 0) { /* 0.000ddd */
    out[n++] = '0';
    out[n++] = '.';
    for (int i = -1; i > e; i--)
      out[n++] = '0';
  }
  for (int i = 0; i <= (last > e ? last : e); i++) {
    out[n++] = digits[i];
    if (i == e && i < last)
      out[n++] = '.';
  }
  return n;
}

void jbuf_num(jbuf *b, double x) {
  if (isinf(x) || isnan(x)) {
    jbuf_raw(b, isnan(x) ? "\"nan\"" : x < 0 ? "null" : "\"inf\"");
    return;
  }
  if (x == 0) { /* the probabilities a cut removes: most numbers of a large row */
    jbuf_raw(b, signbit(x) ? "-0" : "0");
    return;
  }
  char text[32];
  size_t n = format_g17(x, text);
  if (n == 0)
    n = (size_t)snprintf(text, sizeof text, "%.17g", x);
  append(b, text, n);
}

void jbuf_int(jbuf *b, int64_t x) {
  char text[32];
  int n = snprintf(text, sizeof text, "%" PRId64, x);
  append(b, text, (size_t)n);
}

void jbuf_u64_str(jbuf *b, uint64_t x) {
  char text[32];
  int n = snprintf(text, sizeof text, "\"%" PRIu64 "\"", x);
  append(b, text, (size_t)n);
}

void jbuf_key(jbuf *b, const char *key, int comma) {
  if (comma)
    jbuf_char(b, ',');
  jbuf_str(b, key);
  jbuf_char(b, ':');
}

static double float_at(const void *x, size_t i) { return ((const float *)x)[i]; }
static double double_at(const void *x, size_t i) { return ((const double *)x)[i]; }

static void number_array(jbuf *b, const void *x, size_t n, double (*at)(const void *, size_t)) {
  jbuf_char(b, '[');
  for (size_t i = 0; i < n; i++) {
    if (i)
      jbuf_char(b, ',');
    jbuf_num(b, at(x, i));
  }
  jbuf_char(b, ']');
}

void jbuf_floats(jbuf *b, const float *x, size_t n) { number_array(b, x, n, float_at); }
void jbuf_nums(jbuf *b, const double *x, size_t n) { number_array(b, x, n, double_at); }

int jbuf_json_with(jbuf *b, const cJSON *value, jbuf_writer special, void *ctx) {
  int claimed = special ? special(b, value, ctx) : 0;
  if (claimed != 0)
    return claimed < 0 ? -1 : 0;
  if (cJSON_IsArray(value) || cJSON_IsObject(value)) {
    int object = cJSON_IsObject(value);
    jbuf_char(b, object ? '{' : '[');
    for (const cJSON *item = value->child; item; item = item->next) {
      if (object)
        jbuf_key(b, item->string, item != value->child);
      else if (item != value->child)
        jbuf_char(b, ',');
      if (jbuf_json_with(b, item, special, ctx) != 0)
        return -1;
    }
    jbuf_char(b, object ? '}' : ']');
  } else if (cJSON_IsNumber(value)) {
    jbuf_num(b, value->valuedouble);
  } else if (cJSON_IsString(value)) {
    jbuf_str(b, value->valuestring);
  } else if (cJSON_IsBool(value)) {
    jbuf_raw(b, cJSON_IsTrue(value) ? "true" : "false");
  } else {
    jbuf_raw(b, "null");
  }
  return 0;
}

void jbuf_json(jbuf *b, const cJSON *value) { jbuf_json_with(b, value, NULL, NULL); }

static void write_penalties(jbuf *b, const sieve_penalties *pen) {
  if (!pen)
    return;
  jbuf_key(b, "frequency_penalty", 1);
  jbuf_num(b, pen->frequency);
  jbuf_key(b, "presence_penalty", 1);
  jbuf_num(b, pen->presence);
  jbuf_key(b, "repetition_penalty", 1);
  jbuf_num(b, pen->repetition);
  jbuf_key(b, "penalty_last_n", 1);
  jbuf_int(b, pen->last_n);
}

void jbuf_params(jbuf *b, const sieve_params *p, int requesting) {
  jbuf_char(b, '{');
  jbuf_key(b, "temperature", 0);
  jbuf_num(b, p->temperature);
  if (!requesting || (p->top_p != SIEVE_TOP_P_UNSET && p->top_p != 1.0)) {
    jbuf_key(b, "top_p", 1);
    jbuf_num(b, p->top_p);
  }
  if (!requesting || p->top_k != -1) {
    jbuf_key(b, "top_k", 1);
    jbuf_int(b, p->top_k);
  }
  if (p->min_p != 0.0) {
    jbuf_key(b, "min_p", 1);
    jbuf_num(b, p->min_p);
  }
  write_penalties(b, p->penalties);
  jbuf_char(b, '}');
}
