/* Two implementations side by side on the fixtures: the cases they answer differently, by the
 * axis each case discriminates (diff.c). */
#ifndef SIEVE_DIFF_H
#define SIEVE_DIFF_H

#include "protocol/conn.h"
#include "run/fixture.h"

typedef enum diff_format { DIFF_TEXT, DIFF_MARKDOWN, DIFF_JSON } diff_format;

typedef struct diff_request {
  const char *names[2];          /* as the user wrote them */
  const impl_target *targets[2]; /* what runs them */
  const sieve_fixtures *fixtures;
  const char *const *suites; /* NULL-ended; none: every suite */
  diff_format format;
  int timeout_ms; /* per request */
  int fit;        /* also fit the rule each side's answers follow */
} diff_request;

/* Asks both every case and prints the differences on stdout. Returns the exit status: 0 no
 * difference, 1 differences, 2 no answer to hello or a side that answered nothing. */
int sieve_diff(const diff_request *rq);

#endif /* SIEVE_DIFF_H */
