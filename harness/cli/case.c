/*
 * `sieve case ID [--request]`: one fixture case, to read or to replay. The case is printed as
 * JSON with its request's recipes expanded: id, family, suite, axis, seed line, description,
 * request, expected answer with its matchers, and the readings it separates (names and hints).
 * With --request only the request, on one line, ready to pipe to an implementation:
 *   sieve case ties/exact-tie-5-top-k-2 --request | python3 my_adapter.py
 * Exit status: 0, or 2 for a usage error or an id that is no case.
 */
#define _GNU_SOURCE

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impl.h"
#include "options.h"
#include "protocol/jbuf.h"
#include "run/fixture.h"

/* The readings as names and hints only (their expected answers are for the harness). */
static cJSON *readings_of(const cJSON *c) {
  cJSON *out = cJSON_CreateArray();
  const cJSON *readings = cJSON_GetObjectItemCaseSensitive(c, "readings");
  for (const cJSON *r = readings ? readings->child : NULL; r; r = r->next) {
    cJSON *one = cJSON_CreateObject();
    cJSON_AddStringToObject(one, "name", sieve_case_str(r, "name"));
    cJSON_AddStringToObject(one, "axis", sieve_case_str(r, "axis"));
    cJSON_AddStringToObject(one, "hint", sieve_case_str(r, "hint"));
    cJSON_AddItemToArray(out, one);
  }
  return out;
}

static void print_case(const cJSON *c, cJSON *request) {
  static const char *const keys[] = {"id", "family", "suite", "axis", "seed_ref", "description"};
  cJSON *out = cJSON_CreateObject();
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    cJSON_AddStringToObject(out, keys[i], sieve_case_str(c, keys[i]));
  cJSON_AddItemToObject(out, "request", request);
  cJSON_AddItemToObject(out, "expect",
                        cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(c, "expect"), 1));
  cJSON_AddItemToObject(out, "readings", readings_of(c));
  char *text = cJSON_Print(out);
  printf("%s\n", text ? text : "{}");
  free(text);
  cJSON_Delete(out);
}

static int case_main(const cli_command *self, int argc, char **argv) {
  const char *id = NULL;
  int request_only = 0;
  size_t n = 0;
  const cli_option options[] = {{"--request", CLI_FLAG, &request_only}};
  int rc = cli_parse(self, options, 1, argc, argv, &id, 1, &n);
  if (rc != 0)
    return rc;
  if (!id)
    return cli_usage_error(self, "give a case id (sieve run --format json lists them)", NULL);
  char path[PATH_MAX + 64], err[512];
  sieve_fixtures fx;
  if (sieve_fixtures_load(sieve_default_fixtures(path, sizeof path), &fx, err, sizeof err) != 0)
    return cli_usage_error(self, err, NULL);
  const cJSON *c = sieve_fixtures_find(&fx, id);
  cJSON *request = c ? sieve_case_request(c, err, sizeof err) : NULL;
  if (!c || !request) {
    rc = cli_usage_error(self, c ? err : "no fixture case", c ? NULL : id);
  } else if (request_only) {
    jbuf b = {0};
    jbuf_json(&b, request);
    printf("%s\n", b.data ? b.data : "{}");
    jbuf_free(&b);
    cJSON_Delete(request);
  } else {
    print_case(c, request);
  }
  sieve_fixtures_free(&fx);
  return rc;
}

const cli_command cli_case = {
    "case", "ID [--request]", "a fixture case, or its request alone",
    "usage: sieve case ID [--request]\n"
    "Prints a fixture case as JSON (its request with recipes expanded, the expected answer and\n"
    "its matchers, the readings it separates); with --request, only the request on one line,\n"
    "to pipe to an implementation.\n",
    case_main};
