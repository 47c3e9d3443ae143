/*
 * Speculative chains (rows.h; README.md, "Rows"): a speculate request of 1 to 8 drafts over
 * rows of the families. The draft rows are the target's (p = q: every test accepts), the
 * target's moved a little (tests near their ratio), rows of their own, or left out (greedy
 * drafts); a draft token is the draft row's largest, any token of finite logit, or any token
 * at all (one the target removes has p = 0). The seed is now and then the one whose first
 * accept test draws u = 0.
 */
#define _POSIX_C_SOURCE 200809L
#include "rows.h"

#include <math.h>
#include <stdlib.h>

#define FUZZ_CHAIN_MAX_DRAFTS 8
#define FUZZ_CHAIN_MAX_VOCAB 4096

/* A row's logits, detached from a fresh row of the families; its params into *params when
 * asked. */
static cJSON *fresh_logits(fuzz_rng *r, const fuzz_space *space, size_t v, cJSON **params) {
  int family;
  cJSON *row = fuzz_row(r, space, v, &family), *logits = NULL;
  if (row)
    logits = cJSON_DetachItemFromObjectCaseSensitive(row, "logits");
  if (row && params)
    *params = cJSON_DetachItemFromObjectCaseSensitive(row, "params");
  cJSON_Delete(row);
  return logits;
}

/* The logits moved by up to 1/8 each, as float32 values. */
static cJSON *moved(fuzz_rng *r, const cJSON *logits) {
  cJSON *out = cJSON_Duplicate(logits, 1), *x;
  cJSON_ArrayForEach(x, out) if (cJSON_IsNumber(x) && isfinite(x->valuedouble))
      cJSON_SetNumberValue(x, (double)(float)(x->valuedouble + (fuzz_unit(r) - 0.5) / 4));
  return out;
}

static cJSON *draft_row(fuzz_rng *r, const fuzz_space *space, const cJSON *target, size_t v) {
  switch (fuzz_below(r, 3)) {
  case 0:
    return cJSON_Duplicate(target, 1);
  case 1:
    return moved(r, target);
  default:
    return fresh_logits(r, space, v, NULL);
  }
}

/* The largest logit's token (the first of a tie), or 0 when none is finite. */
static size_t largest(const cJSON *logits) {
  size_t at = 0, i = 0;
  double best = -INFINITY;
  const cJSON *x;
  cJSON_ArrayForEach(x, logits) {
    if (cJSON_IsNumber(x) && x->valuedouble > best)
      best = x->valuedouble, at = i;
    i++;
  }
  return at;
}

static size_t draft_token(fuzz_rng *r, const cJSON *logits, size_t v) {
  const uint64_t how = fuzz_below(r, 4);
  if (how < 2)
    return largest(logits);
  for (int tries = 0; how == 2 && tries < 8; tries++) {
    const size_t t = (size_t)fuzz_below(r, v);
    if (cJSON_IsNumber(cJSON_GetArrayItem(logits, (int)t)))
      return t;
  }
  return (size_t)fuzz_below(r, v);
}

/* One side of the chain: {"rows": [...], "params": {...}} with `n` rows (the params those of
 * a row drawn for them alone when n is 0). */
static cJSON *side(fuzz_rng *r, const fuzz_space *space, size_t n, size_t v) {
  cJSON *out = cJSON_CreateObject(), *params = NULL;
  cJSON *rows = out ? cJSON_AddArrayToObject(out, "rows") : NULL;
  int ok = rows != NULL;
  for (size_t i = 0; ok && i < (n ? n : 1); i++) {
    cJSON *logits = fresh_logits(r, space, v, i ? NULL : &params);
    ok = logits && (n ? cJSON_AddItemToArray(rows, logits) : (cJSON_Delete(logits), 1));
    if (!ok)
      cJSON_Delete(logits);
  }
  if (ok && params && cJSON_GetArraySize(params) > 0 &&
      (ok = cJSON_AddItemToObject(out, "params", params)))
    params = NULL;
  cJSON_Delete(params);
  return ok ? out : (cJSON_Delete(out), NULL);
}

/* The draft side over the target's rows: rows (or none, greedy), tokens and params. */
static cJSON *draft_side(fuzz_rng *r, const fuzz_space *space, const cJSON *target, size_t n,
                         size_t v) {
  const int greedy = fuzz_below(r, 4) == 0;
  cJSON *out = greedy ? cJSON_CreateObject() : side(r, space, 0, v);
  cJSON *rows = cJSON_GetObjectItemCaseSensitive(out, "rows");
  cJSON *tokens = out ? cJSON_AddArrayToObject(out, "tokens") : NULL;
  int ok = tokens != NULL;
  for (size_t j = 0; ok && j < n; j++) {
    const cJSON *t = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(target, "rows"), (int)j);
    cJSON *row = greedy ? NULL : draft_row(r, space, t, v);
    if (!greedy && !(row && cJSON_AddItemToArray(rows, row))) {
      cJSON_Delete(row);
      ok = 0;
      break;
    }
    ok = cJSON_AddItemToArray(tokens,
                              cJSON_CreateNumber((double)draft_token(r, greedy ? t : row, v)));
  }
  return ok ? out : (cJSON_Delete(out), NULL);
}

cJSON *fuzz_chain_request(fuzz_rng *r, const fuzz_space *space) {
  const size_t n = 1 + (size_t)fuzz_below(r, FUZZ_CHAIN_MAX_DRAFTS);
  const size_t v = fuzz_vocab(r, space, FUZZ_CHAIN_MAX_VOCAB);
  cJSON *request = cJSON_CreateObject(), *target = side(r, space, n + 1, v), *draft = NULL;
  int ok = request && target && cJSON_AddStringToObject(request, "op", "speculate") &&
           fuzz_key(r, request, 2, 0) == 0 && cJSON_AddItemToObject(request, "target", target);
  if (!ok)
    cJSON_Delete(target);
  if (ok && !(draft = draft_side(r, space, target, n, v)))
    ok = 0;
  if (ok && !cJSON_AddItemToObject(request, "draft", draft))
    cJSON_Delete(draft), ok = 0;
  cJSON *engine = ok ? fuzz_engine(r, space, v) : NULL;
  if (ok && !(engine && cJSON_AddItemToObject(request, "engine", engine)))
    cJSON_Delete(engine), ok = 0;
  return ok ? request : (cJSON_Delete(request), NULL);
}
