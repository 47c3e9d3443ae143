/*
 * Row recipes (fixtures/README.md, "Recipes and checksums"): a large row of logits written as
 * the few numbers that generate it, {"$recipe": {"kind": "irwin_hall4", ...}}, with the mixsum64
 * checksum of the row's float32 bits. The fixtures keep large rows so; sieve serve reads them in
 * place of an array (PROTOCOL.md, "Values"), so sieve run sends them as they are to its own
 * serve (lib: and the oracle in process) and writes them out as arrays for anything else.
 */
#ifndef SIEVE_RECIPE_H
#define SIEVE_RECIPE_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "jbuf.h"

/* The longest row a recipe may describe. */
#define SIEVE_RECIPE_MAX (1 << 22)

/* The logits the recipes of a value describe, in all (their "v"), up to SIEVE_RECIPE_MAX + 1:
 * sieve serve answers at most SIEVE_RECIPE_MAX of them a request, so that a short line cannot
 * ask for gigabytes. */
size_t sieve_recipe_size(const cJSON *value);

/* The mixsum64 checksum of 32-bit words. */
uint64_t sieve_mixsum64(const uint32_t *words, size_t n);

/* The recipe of a logits value {"$recipe": {...}}, or NULL when it is not one. */
const cJSON *sieve_recipe_of(const cJSON *logits);

/*
 * The float32 row a recipe describes, malloc'd, with its checksum verified when the recipe
 * gives one ("mixsum64"); NULL with a message in `err` when the recipe is malformed, out of
 * range or does not match its checksum.
 */
float *sieve_recipe_logits(const cJSON *recipe, size_t *vocab, char *err, size_t err_len);

/* Writes a JSON value as jbuf_json does, with every recipe written as the array it describes;
 * 0, or -1 with a message in `err` (the buffer then holds part of the value). */
int sieve_recipe_write_json(jbuf *b, const cJSON *value, char *err, size_t err_len);

#endif /* SIEVE_RECIPE_H */
