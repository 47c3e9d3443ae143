/* Loading golden fixtures; see fixture.h. */
#define _GNU_SOURCE
#include "fixture.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "protocol/recipe.h"
#include "protocol/request.h"
#include "sieve.h"

const char *sieve_beside_self(const char *const *places, size_t n, const char *file, char *buf,
                              size_t len) {
  char dir[PATH_MAX];
  ssize_t got = readlink("/proc/self/exe", dir, sizeof dir - 1);
  dir[got > 0 ? got : 0] = '\0';
  char *slash = strrchr(dir, '/');
  if (slash)
    *slash = '\0';
  for (size_t i = 0; i < n; i++) {
    snprintf(buf, len, "%s/%s/%s", dir, places[i], file);
    if (access(buf, R_OK) == 0)
      break;
  }
  return buf;
}

char *sieve_read_file(const char *path, size_t *len) {
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    errno = EISDIR;
    return NULL;
  }
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  char *data = NULL;
  long size = -1;
  if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0)
    data = malloc((size_t)size + 1);
  if (data && fread(data, 1, (size_t)size, f) != (size_t)size) {
    free(data);
    data = NULL;
  }
  const int saved = errno; /* fclose must not hide why the read failed */
  fclose(f);
  errno = saved;
  if (data) {
    data[size] = '\0';
    *len = (size_t)size;
  }
  return data;
}

int sieve_fixtures_load(const char *path, sieve_fixtures *out, char *err, size_t err_len) {
  size_t len = 0;
  char *text = sieve_read_file(path, &len);
  *out = (sieve_fixtures){0};
  if (!text) {
    snprintf(err, err_len, "%s: cannot read the fixture file: %s", path, strerror(errno));
    return -1;
  }
  int rc = sieve_fixtures_parse(text, len, out, err, err_len);
  free(text);
  if (rc != 0) {
    char why[200];
    snprintf(why, sizeof why, "%s", err);
    snprintf(err, err_len, "%s: %s", path, why);
  }
  return rc;
}

int sieve_fixtures_parse(const char *text, size_t len, sieve_fixtures *out, char *err,
                         size_t err_len) {
  *out = (sieve_fixtures){0};
  out->root = cJSON_ParseWithLength(text, len);
  const cJSON *schema = cJSON_GetObjectItemCaseSensitive(out->root, "schema");
  out->cases = cJSON_GetObjectItemCaseSensitive(out->root, "cases");
  if (!out->root)
    snprintf(err, err_len, "not valid JSON");
  else if (!cJSON_IsString(schema) || strcmp(schema->valuestring, SIEVE_FIXTURE_SCHEMA) != 0)
    snprintf(err, err_len, "schema is not \"%s\"", SIEVE_FIXTURE_SCHEMA);
  else if (!cJSON_IsArray(out->cases))
    snprintf(err, err_len, "no array of cases");
  else
    return 0;
  sieve_fixtures_free(out);
  return -1;
}

void sieve_fixtures_free(sieve_fixtures *f) {
  cJSON_Delete(f->root);
  *f = (sieve_fixtures){0};
}

const char *sieve_case_str(const cJSON *c, const char *key) {
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(c, key);
  return cJSON_IsString(s) ? s->valuestring : "";
}

/* A fixture's recipe rows, each generated and held to its checksum (a fixture must give one)
 * and, with `expand`, replaced by the array it describes. */
static int recipe_rows(cJSON *request, int expand, char *err, size_t err_len) {
  cJSON *rows = cJSON_GetObjectItemCaseSensitive(request, "rows");
  for (cJSON *row = rows ? rows->child : NULL; row; row = row->next) {
    const cJSON *recipe = sieve_recipe_of(cJSON_GetObjectItemCaseSensitive(row, "logits"));
    if (!recipe)
      continue;
    if (!cJSON_GetObjectItemCaseSensitive(recipe, "mixsum64"))
      return snprintf(err, err_len, "a recipe of the fixture has no mixsum64"), -1;
    size_t vocab = 0;
    float *values = sieve_recipe_logits(recipe, &vocab, err, err_len);
    cJSON *array = values && expand ? cJSON_CreateArray() : NULL;
    for (size_t i = 0; array && i < vocab; i++)
      cJSON_AddItemToArray(array, cJSON_CreateNumber((double)values[i]));
    free(values);
    if (!values)
      return -1;
    if (expand && (!array || !cJSON_ReplaceItemInObjectCaseSensitive(row, "logits", array)))
      return snprintf(err, err_len, "out of memory expanding a recipe"), -1;
  }
  return 0;
}

static cJSON *case_request(const cJSON *c, int expand, char *err, size_t err_len) {
  cJSON *request = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(c, "request"), 1);
  if (!request) {
    snprintf(err, err_len, "case %s has no request", sieve_case_str(c, "id"));
    return NULL;
  }
  if (recipe_rows(request, expand, err, err_len) == 0)
    return request;
  cJSON_Delete(request);
  return NULL;
}

cJSON *sieve_case_request(const cJSON *c, char *err, size_t err_len) {
  return case_request(c, 1, err, err_len);
}

cJSON *sieve_case_request_compact(const cJSON *c, char *err, size_t err_len) {
  return case_request(c, 0, err, err_len);
}

static int listed(const cJSON *list, const char *name) {
  for (const cJSON *x = cJSON_IsArray(list) ? list->child : NULL; x; x = x->next)
    if (cJSON_IsString(x) && strcmp(x->valuestring, name) == 0)
      return 1;
  return 0;
}

int sieve_hello_offers(const cJSON *hello, const char *op) {
  return listed(cJSON_GetObjectItemCaseSensitive(hello, "ops"), op);
}

int sieve_hello_offers_options(const cJSON *hello, const char *options) {
  const unsigned asked = req_options_of_text(options, NULL, 0);
  return (req_options_of_list(cJSON_GetObjectItemCaseSensitive(hello, "sampling_options")) &
          asked) == asked;
}

/* The first engine option of the request that hello's "engine_options" does not list. */
static const char *engine_option_missing(const cJSON *request, const cJSON *hello) {
  const cJSON *offered = cJSON_GetObjectItemCaseSensitive(hello, "engine_options");
  const cJSON *engine = cJSON_GetObjectItemCaseSensitive(request, "engine");
  for (const cJSON *x = offered && engine ? engine->child : NULL; x; x = x->next)
    if (!listed(offered, x->string))
      return x->string;
  return NULL;
}

int sieve_case_not_offered(const cJSON *request, const cJSON *hello, char *why, size_t len) {
  const char *op = sieve_case_str(request, "op"), *option = engine_option_missing(request, hello);
  const char *sampling = req_option_missing(
      request, req_options_of_list(cJSON_GetObjectItemCaseSensitive(hello, "sampling_options")));
  int hashed = !strcmp(op, "sample") || !strcmp(op, "draw") || !strcmp(op, "uniform") ||
               !strcmp(op, "speculate");
  if (*sieve_case_str(hello, "unavailable"))
    return snprintf(why, len, "the implementation is unavailable: %s",
                    sieve_case_str(hello, "unavailable")),
           1;
  if (!sieve_hello_offers(hello, op))
    return snprintf(why, len, "the implementation does not offer op %s (hello)", op), 1;
  if (option)
    return snprintf(why, len, "the implementation does not offer engine option %s (hello)", option),
           1;
  if (sampling)
    return snprintf(why, len, "the implementation does not offer sampling option %s (hello)",
                    sampling),
           1;
  if (hashed && !strcmp(sieve_case_str(hello, "rng"), "own"))
    return snprintf(why, len,
                    "the implementation draws with its own generator (hello: rng own) and this "
                    "case's %s; %s",
                    strcmp(op, "speculate") ? "token comes from the hash" : "tests use the hash",
                    strcmp(op, "speculate") ? "the distribution suite checks its draws"
                                            : "the speculative-distribution suite checks them"),
           1;
  return 0;
}

int sieve_hello_check(const cJSON *answer, const char *crash, char *err, size_t len) {
  const cJSON *protocol = cJSON_GetObjectItemCaseSensitive(answer, "protocol");
  char *text = protocol ? cJSON_PrintUnformatted(protocol) : NULL;
  int ok = 0;
  size_t room = len > 64 ? len - 64 : 0, n = strlen(crash);
  if (!answer) /* the end of the detail (its stderr's last line) is what explains it */
    snprintf(err, len, "the implementation did not answer hello%s%s%s", *crash ? ": " : "",
             n > room ? "..." : "", n > room ? crash + n - room : crash);
  else if (*sieve_case_str(answer, "unavailable"))
    snprintf(err, len, "the implementation is unavailable: %.300s",
             sieve_case_str(answer, "unavailable"));
  else if (!protocol)
    snprintf(err, len,
             "hello's answer has no \"protocol\"; this sieve speaks protocol 1 "
             "(harness/protocol/PROTOCOL.md)");
  else if (!cJSON_IsNumber(protocol) || protocol->valuedouble != 1)
    snprintf(err, len,
             "hello answered protocol %.40s; this sieve speaks protocol 1 "
             "(harness/protocol/PROTOCOL.md, \"Versions\")",
             text ? text : "?");
  else if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(answer, "ops")))
    snprintf(err, len, "hello's answer has no list of ops");
  else
    ok = 1;
  free(text);
  return ok ? 0 : -1;
}

const cJSON *sieve_fixtures_find(const sieve_fixtures *fx, const char *id) {
  for (const cJSON *c = fx->cases->child; c; c = c->next)
    if (strcmp(sieve_case_str(c, "id"), id) == 0)
      return c;
  return NULL;
}
