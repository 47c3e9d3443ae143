/*
 * The picture of `sieve explain --svg FILE` (explain_svg.c), and what it shares with the text
 * table of explain.c: the row being explained, each rule's steps on it, and the tokens ranked
 * by probability.
 */
#ifndef SIEVE_EXPLAIN_SVG_H
#define SIEVE_EXPLAIN_SVG_H

#include <stddef.h>
#include <stdio.h>

#include "sieve.h"

/* One row: its logits, its parameters and, when it has one, the key of its draw. */
typedef struct row_input {
  float *logits;
  size_t vocab;
  sieve_params params;
  sieve_draw_key key;
  int has_key;
} row_input;

/* The row's top_p as shown: 1 where it was left out (SIEVE_TOP_P_UNSET). */
static inline double row_top_p(const row_input *in) {
  return in->params.top_p == SIEVE_TOP_P_UNSET ? 1.0 : in->params.top_p;
}

/* One rule's steps on the row, or (rule NULL) an implementation's answer to it: its
 * processed logprobs, or in `error` the error it answered. */
typedef struct explained {
  const char *name;
  const sieve_rule *rule;
  const char *error;
  double *full;      /* p over the whole row at the row's temperature */
  double *processed; /* processed logprobs */
  sieve_filter_info info;
  sieve_sample_result drawn;
  int rc, drew;
} explained;

typedef struct ranked_token {
  double p;
  size_t id;
} ranked_token;

/* The tokens by p descending, ties by token id ascending; NULL when out of memory. */
ranked_token *explain_rank(const double *p, size_t vocab);

/* The most panels a picture has: DeepInfer's rule, a profile's, an implementation's answer. */
#define EXPLAIN_PANELS 3

/*
 * Writes the picture of `n_rules` panels (1 to EXPLAIN_PANELS; the first DeepInfer's rule) on
 * the row to `path`, whole or not at all (outfile.h), at most EXPLAIN_SVG_WIDTH pixels wide.
 * `case_id` names the fixture case, or is NULL for a row given with --logits. 0, or -1 when the
 * file was not written.
 */
#define EXPLAIN_SVG_WIDTH 1240
int explain_write_svg(const char *path, const char *case_id, const row_input *in,
                      const explained *e, size_t n_panels);

/* The same picture written to `f`; with `inline_svg`, without the XML declaration, as an HTML
 * page holds it. 0, or -1 when it could not be drawn. */
int explain_svg(FILE *f, int inline_svg, const char *case_id, const row_input *in,
                const explained *e, size_t n_panels);

#endif /* SIEVE_EXPLAIN_SVG_H */
