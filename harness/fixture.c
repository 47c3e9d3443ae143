/* Loading golden fixtures; see fixture.h. */
#include "fixture.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../oracle/sieve.h"
#include "check.h"

/* The whole file, NUL-terminated; NULL with errno set when it cannot be read. */
static char *read_file(const char *path, size_t *len) {
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
  char *text = read_file(path, &len);
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

static double recipe_int(const cJSON *recipe, const char *key, int *ok) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(recipe, key);
  if (!cJSON_IsNumber(x) || x->valuedouble != floor(x->valuedouble))
    *ok = 0;
  return cJSON_IsNumber(x) ? x->valuedouble : 0;
}

/* The irwin_hall4 recipe (fixtures/README.md, "Recipes and checksums"). */
float *sieve_recipe_logits(const cJSON *recipe, size_t *vocab, char *err, size_t err_len) {
  int ok = 1;
  const cJSON *kind = cJSON_GetObjectItemCaseSensitive(recipe, "kind");
  const cJSON *seed_text = cJSON_GetObjectItemCaseSensitive(recipe, "seed");
  double v = recipe_int(recipe, "v", &ok), bits = recipe_int(recipe, "bits", &ok);
  double exp2 = recipe_int(recipe, "exp", &ok), every = recipe_int(recipe, "spike_every", &ok);
  double spike = recipe_int(recipe, "spike_units", &ok);
  /* Every field in range before any conversion: |units| stays below 2^24, as the format says. */
  if (!ok || !cJSON_IsString(kind) || strcmp(kind->valuestring, "irwin_hall4") != 0 ||
      !cJSON_IsString(seed_text) || v < 1 || v > SIEVE_RECIPE_MAX || bits < 1 || bits > 21 ||
      every < 0 || every > SIEVE_RECIPE_MAX || fabs(spike) >= 0x1p24 || exp2 < -160 || exp2 > 120) {
    snprintf(err, err_len, "malformed recipe (a field is missing or out of range)");
    return NULL;
  }
  uint64_t seed = strtoull(seed_text->valuestring, NULL, 10);
  float *row = malloc((size_t)v * sizeof *row);
  for (uint64_t i = 0; row && i < (uint64_t)v; i++) {
    int64_t units = -(INT64_C(1) << ((int)bits + 1));
    for (uint64_t j = 0; j < 4; j++)
      units +=
          (int64_t)(sieve_mix64(seed + (4 * i + j + 1) * SIEVE_HASH_GOLDEN) >> (64 - (int)bits));
    if (every > 0 && i % (uint64_t)every == 0)
      units += (int64_t)spike;
    row[i] = (float)ldexp((double)units, (int)exp2);
  }
  if (!row)
    snprintf(err, err_len, "out of memory expanding a recipe");
  *vocab = (size_t)v;
  return row;
}

static int verify_recipe(const cJSON *recipe, const float *row, size_t vocab, char *err,
                         size_t err_len) {
  const cJSON *want = cJSON_GetObjectItemCaseSensitive(recipe, "mixsum64");
  uint32_t *words = malloc(vocab * sizeof *words);
  if (!words) {
    snprintf(err, err_len, "out of memory checking a recipe");
    return -1;
  }
  memcpy(words, row, vocab * sizeof *words);
  char hex[17];
  snprintf(hex, sizeof hex, "%016llx", (unsigned long long)sieve_mixsum64(words, vocab));
  free(words);
  if (cJSON_IsString(want) && strcmp(hex, want->valuestring) == 0)
    return 0;
  snprintf(err, err_len, "the recipe's row has mixsum64 %s, the fixture says %s", hex,
           cJSON_IsString(want) ? want->valuestring : "nothing");
  return -1;
}

/* Replaces row["logits"] = {"$recipe": ...} by the array it describes. */
static int expand_row(cJSON *row, char *err, size_t err_len) {
  cJSON *logits = cJSON_GetObjectItemCaseSensitive(row, "logits");
  const cJSON *recipe = cJSON_GetObjectItemCaseSensitive(logits, "$recipe");
  if (!recipe)
    return 0;
  size_t vocab = 0;
  float *values = sieve_recipe_logits(recipe, &vocab, err, err_len);
  if (!values || verify_recipe(recipe, values, vocab, err, err_len) != 0) {
    free(values);
    return -1;
  }
  cJSON *array = cJSON_CreateArray();
  for (size_t i = 0; array && i < vocab; i++)
    cJSON_AddItemToArray(array, cJSON_CreateNumber((double)values[i]));
  free(values);
  if (!array || !cJSON_ReplaceItemInObjectCaseSensitive(row, "logits", array)) {
    snprintf(err, err_len, "out of memory expanding a recipe");
    return -1;
  }
  return 0;
}

cJSON *sieve_case_request(const cJSON *c, char *err, size_t err_len) {
  cJSON *request = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(c, "request"), 1);
  if (!request) {
    snprintf(err, err_len, "case %s has no request", sieve_case_str(c, "id"));
    return NULL;
  }
  cJSON *rows = cJSON_GetObjectItemCaseSensitive(request, "rows");
  for (cJSON *row = rows ? rows->child : NULL; row; row = row->next)
    if (expand_row(row, err, err_len) != 0) {
      cJSON_Delete(request);
      return NULL;
    }
  return request;
}

static int listed(const cJSON *list, const char *name) {
  for (const cJSON *x = cJSON_IsArray(list) ? list->child : NULL; x; x = x->next)
    if (cJSON_IsString(x) && strcmp(x->valuestring, name) == 0)
      return 1;
  return 0;
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
  int hashed = !strcmp(op, "sample") || !strcmp(op, "draw") || !strcmp(op, "uniform") ||
               !strcmp(op, "speculate");
  if (*sieve_case_str(hello, "unavailable"))
    return snprintf(why, len, "the implementation is unavailable: %s",
                    sieve_case_str(hello, "unavailable")),
           1;
  if (!listed(cJSON_GetObjectItemCaseSensitive(hello, "ops"), op))
    return snprintf(why, len, "the implementation does not offer op %s (hello)", op), 1;
  if (option)
    return snprintf(why, len, "the implementation does not offer engine option %s (hello)", option),
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
             "(harness/PROTOCOL.md)");
  else if (!cJSON_IsNumber(protocol) || protocol->valuedouble != 1)
    snprintf(err, len,
             "hello answered protocol %.40s; this sieve speaks protocol 1 "
             "(harness/PROTOCOL.md, \"Versions\")",
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
