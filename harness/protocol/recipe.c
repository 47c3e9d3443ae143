/* Row recipes; see recipe.h. */
#include "recipe.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "request.h"
#include "sieve.h"

uint64_t sieve_mixsum64(const uint32_t *words, size_t n) {
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++)
    total += sieve_mix64((uint64_t)words[i] ^ ((uint64_t)(i + 1) * SIEVE_HASH_GOLDEN));
  return total;
}

const cJSON *sieve_recipe_of(const cJSON *logits) {
  return cJSON_IsObject(logits) ? cJSON_GetObjectItemCaseSensitive(logits, "$recipe") : NULL;
}

size_t sieve_recipe_size(const cJSON *value) {
  const cJSON *recipe = sieve_recipe_of(value);
  if (recipe) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(recipe, "v");
    return cJSON_IsNumber(v) && v->valuedouble > 0 && v->valuedouble <= SIEVE_RECIPE_MAX
               ? (size_t)v->valuedouble
               : 0;
  }
  size_t total = 0;
  for (const cJSON *x = value ? value->child : NULL; x && total <= SIEVE_RECIPE_MAX; x = x->next)
    total += sieve_recipe_size(x);
  return total > SIEVE_RECIPE_MAX ? SIEVE_RECIPE_MAX + 1 : total;
}

static double recipe_int(const cJSON *recipe, const char *key, int *ok) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(recipe, key);
  if (!cJSON_IsNumber(x) || x->valuedouble != floor(x->valuedouble))
    *ok = 0;
  return cJSON_IsNumber(x) ? x->valuedouble : 0;
}

/* The row's checksum against the recipe's "mixsum64", when it gives one. */
static int verify(const cJSON *recipe, const float *row, size_t vocab, char *err, size_t len) {
  const cJSON *want = cJSON_GetObjectItemCaseSensitive(recipe, "mixsum64");
  if (!want)
    return 0;
  uint32_t *words = malloc((vocab ? vocab : 1) * sizeof *words);
  if (!words)
    return snprintf(err, len, "out of memory checking a recipe"), -1;
  memcpy(words, row, vocab * sizeof *words);
  char hex[17];
  snprintf(hex, sizeof hex, "%016llx", (unsigned long long)sieve_mixsum64(words, vocab));
  free(words);
  if (cJSON_IsString(want) && strcmp(hex, want->valuestring) == 0)
    return 0;
  snprintf(err, len, "the recipe's row has mixsum64 %s, the recipe says %s", hex,
           cJSON_IsString(want) ? want->valuestring : "something that is not a string");
  return -1;
}

/* Whether every member of the recipe is one the format names, once, and its seed a decimal
 * string in [0, 2^64 - 1] (into *seed). */
static int strict(const cJSON *recipe, uint64_t *seed) {
  static const char *const keys[] = {"kind",        "seed",        "v",        "bits", "exp",
                                     "spike_every", "spike_units", "mixsum64", NULL};
  req_error unused;
  const cJSON *text = cJSON_GetObjectItemCaseSensitive(recipe, "seed");
  return req_check_keys(recipe, keys, "$recipe", &unused) == 0 && cJSON_IsString(text) &&
         req_decimal(text->valuestring, seed) == 0;
}

/* The irwin_hall4 recipe (fixtures/README.md, "Recipes and checksums"). */
float *sieve_recipe_logits(const cJSON *recipe, size_t *vocab, char *err, size_t err_len) {
  uint64_t seed = 0;
  int ok = strict(recipe, &seed);
  const cJSON *kind = cJSON_GetObjectItemCaseSensitive(recipe, "kind");
  double v = recipe_int(recipe, "v", &ok), bits = recipe_int(recipe, "bits", &ok);
  double exp2 = recipe_int(recipe, "exp", &ok), every = recipe_int(recipe, "spike_every", &ok);
  double spike = recipe_int(recipe, "spike_units", &ok);
  /* Every field in range before any conversion: |units| stays below 2^24, as the format says. */
  if (!ok || !cJSON_IsString(kind) || strcmp(kind->valuestring, "irwin_hall4") != 0 || v < 1 ||
      v > SIEVE_RECIPE_MAX || bits < 1 || bits > 21 || every < 0 || every > SIEVE_RECIPE_MAX ||
      fabs(spike) >= 0x1p24 || exp2 < -160 || exp2 > 120) {
    snprintf(err, err_len,
             "malformed recipe (a field is missing, unknown, repeated or out of range; the "
             "seed is a decimal string)");
    return NULL;
  }
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
  if (row && verify(recipe, row, *vocab, err, err_len) != 0) {
    free(row);
    return NULL;
  }
  return row;
}

/* Where write_recipe says why a recipe could not be written. */
typedef struct reason {
  char *text;
  size_t len;
} reason;

/* A recipe written as the array it describes (a jbuf_writer: 1 when `value` was one). */
static int write_recipe(jbuf *b, const cJSON *value, void *why) {
  const cJSON *recipe = sieve_recipe_of(value);
  if (!recipe)
    return 0;
  size_t vocab = 0;
  float *row = sieve_recipe_logits(recipe, &vocab, ((reason *)why)->text, ((reason *)why)->len);
  if (!row)
    return -1;
  jbuf_floats(b, row, vocab);
  free(row);
  return 1;
}

int sieve_recipe_write_json(jbuf *b, const cJSON *value, char *err, size_t err_len) {
  reason why = {err, err_len};
  return jbuf_json_with(b, value, write_recipe, &why);
}
