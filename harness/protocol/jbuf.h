/*
 * A growable text buffer for writing JSON responses: numbers with 17
 * significant digits (so a float32 or float64 value parses back exactly),
 * -inf as null, strings escaped.
 */
#ifndef SIEVE_JBUF_H
#define SIEVE_JBUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct jbuf {
  char *data;
  size_t len;
  size_t cap;
  int failed; /* set when an allocation failed; later writes are dropped */
} jbuf;

void jbuf_free(jbuf *b);
void jbuf_reset(jbuf *b);
void jbuf_raw(jbuf *b, const char *text);
void jbuf_char(jbuf *b, char c);
void jbuf_str(jbuf *b, const char *text);
/* A double: %.17g; null for -inf; the strings "nan" and "inf" (protocol v1) otherwise. */
void jbuf_num(jbuf *b, double x);
void jbuf_int(jbuf *b, int64_t x);
void jbuf_u64_str(jbuf *b, uint64_t x);
/* Any JSON value, numbers with 17 significant digits (cJSON's own printer may drop an ulp). */
struct cJSON;
void jbuf_json(jbuf *b, const struct cJSON *value);

/* The same, except that each value `special` claims is written by it: it returns 1 when it
 * wrote the value, 0 to leave it to jbuf_json, -1 to stop (then jbuf_json_with returns -1). */
typedef int (*jbuf_writer)(jbuf *b, const struct cJSON *value, void *ctx);
int jbuf_json_with(jbuf *b, const struct cJSON *value, jbuf_writer special, void *ctx);

/* A JSON array of numbers, as jbuf_num writes each. */
void jbuf_floats(jbuf *b, const float *x, size_t n);
void jbuf_nums(jbuf *b, const double *x, size_t n);
/* Writes `"key":`, with a leading comma when `comma` is set. */
void jbuf_key(jbuf *b, const char *key, int comma);

/* Sampling parameters as protocol v1 writes them, {"temperature":T,"top_p":P,"top_k":K}. With
 * `requesting`, a top_k of -1 (off) is left out, as the fixtures leave it: an explicit -1 is an
 * error to some engines, and so is a top_p of 1 (or SIEVE_TOP_P_UNSET). min_p is written
 * where it is not 0, and the penalties' parameters where they are set. The one writer of
 * params, in requests and in answers. */
struct sieve_params;
void jbuf_params(jbuf *b, const struct sieve_params *p, int requesting);

#endif /* SIEVE_JBUF_H */
