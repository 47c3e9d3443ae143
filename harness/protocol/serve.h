/*
 * `sieve serve`: protocol v1 (JSON lines) on a pair of streams, with the
 * oracle as the implementation. The protocol is described in
 * harness/protocol/PROTOCOL.md.
 */
#ifndef SIEVE_SERVE_H
#define SIEVE_SERVE_H

#include <stdio.h>

#define SIEVE_PROTOCOL_VERSION 1
#define SIEVE_PROTOCOL_TEXT "1" /* the same, for request text */
/* The longest request line served; a longer one gets an error and is skipped. */
#define SIEVE_SERVE_MAX_LINE ((size_t)256 << 20)

/*
 * Answers one request per line of `in` on `out` until EOF or {"op":"bye"}, under `rule` (NULL:
 * DeepInfer's), whose name hello gives as its "profile", taking the sampling `options`
 * (request.h's bits; hello lists them, and a row or request naming another is refused). Returns 0, or
 * 1 when writing to `out` failed.
 */
struct sieve_rule;
int sieve_serve(FILE *in, FILE *out, const char *name, const struct sieve_rule *rule,
                unsigned options);

/* The answer `sieve serve` writes to one request (a JSON object, not bye) under `rule`, into
 * `out` (reset first): the oracle answering in process, for profile: and rule: implementations. */
struct cJSON;
struct jbuf;
void sieve_serve_request(const struct cJSON *request, const char *name,
                         const struct sieve_rule *rule, unsigned options, struct jbuf *out);

/* Whether `key` names one of the oracle's extra answers (PROTOCOL.md: the margins, the kept
 * count and mass, a speculative step's p and q), which an implementation need not give and
 * sieve never compares. */
int sieve_serve_is_extra(const char *key);

/* The same, answering with a shared library's table (`sieve serve --lib`). */
struct sieve_impl;
int sieve_serve_impl(FILE *in, FILE *out, const struct sieve_impl *impl);

#endif /* SIEVE_SERVE_H */
