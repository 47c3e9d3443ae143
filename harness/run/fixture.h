/*
 * Loading golden fixtures (fixtures/README.md): the file, its schema
 * version, and requests with their row recipes expanded and verified.
 */
#ifndef SIEVE_FIXTURE_H
#define SIEVE_FIXTURE_H

#include <cjson/cJSON.h>
#include <stddef.h>

#define SIEVE_FIXTURE_SCHEMA "sieve-fixtures/2"
/* Expectation files key on case ids, which version 2 kept from version 1. */
#define SIEVE_FIXTURE_IDS_SINCE "sieve-fixtures/1"

typedef struct sieve_fixtures {
  cJSON *root;
  const cJSON *cases; /* the array of cases */
} sieve_fixtures;

/* A whole file, NUL-terminated and malloc'd; NULL with errno set when it cannot be read (a
 * folder is EISDIR). */
char *sieve_read_file(const char *path, size_t *len);

/* The first readable `place`/`file` of `places`, folders relative to that of the running
 * executable (build/sieve finds ../fixtures), in `buf`; the last tried when none is. Returns
 * `buf`. */
const char *sieve_beside_self(const char *const *places, size_t n, const char *file, char *buf,
                              size_t len);

/* Reads and parses a fixture file; 0, or -1 with a message naming the file in `err`. */
int sieve_fixtures_load(const char *path, sieve_fixtures *out, char *err, size_t err_len);
void sieve_fixtures_free(sieve_fixtures *f);

/* The same from text in memory; `err` says what is wrong without a file name. */
int sieve_fixtures_parse(const char *text, size_t len, sieve_fixtures *out, char *err,
                         size_t err_len);

/* The case with this id, or NULL. */
const cJSON *sieve_fixtures_find(const sieve_fixtures *fx, const char *id);

/* A case's string member (id, family, ...), or "" when it has none. */
const char *sieve_case_str(const cJSON *c, const char *key);

/*
 * A copy of a case's request with every {"$recipe": ...} row expanded into its logits; NULL,
 * with a message in `err`, when a recipe is malformed or its mixsum64 does not match.
 */
cJSON *sieve_case_request(const cJSON *c, char *err, size_t err_len);

/* The same with the recipes kept, each checked as above: what sieve run sends (conn.h writes
 * recipes out as arrays for an implementation that does not read them). */
cJSON *sieve_case_request_compact(const cJSON *c, char *err, size_t err_len);

/*
 * Why an implementation cannot be asked a case, from its answer to hello: it is unavailable
 * (its engine is not installed), an op it does not offer, an engine option it does not offer
 * ("engine_options", absent: all), a sampling option its params name that it does not offer
 * ("sampling_options", absent: none), or a token that comes from the hash while it draws with its own
 * generator ("rng":"own"). Writes the reason and returns 1, or returns 0 when it can be asked.
 */
int sieve_case_not_offered(const cJSON *request, const cJSON *hello, char *why, size_t len);

/* Whether an answer to hello lists `op` among its "ops". */
int sieve_hello_offers(const cJSON *hello, const char *op);
/* Whether it lists every sampling option of `options` ("min_p" or "presence_penalty,repetition_penalty") among its
 * "sampling_options". */
int sieve_hello_offers_options(const cJSON *hello, const char *options);

/*
 * Whether an answer to hello is one sieve can work with: "protocol" 1 (the version this sieve
 * speaks; harness/protocol/PROTOCOL.md, "Versions") and a list of ops. Returns 0, or -1 with a
 * message naming what was received; `crash` (may be "") says why there was no answer at all.
 */
int sieve_hello_check(const cJSON *answer, const char *crash, char *err, size_t len);

#endif /* SIEVE_FIXTURE_H */
