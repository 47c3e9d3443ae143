/*
 * The ops fuzz asks and the keys of its draws (rows.h; README.md, "Rows"): seeds and positions
 * for the hash (seed 000:45-47, :59), drawn where its misreadings show. A seed above 2^31 or
 * 2^63 separates a seed cut to 32 bits or shifted with its sign; a position other than 0, one
 * ignored; the mtp tag, one whose offset is forgotten; the seed whose uniform is exactly 0
 * (sieve_seed_of_zero_u), a draw that takes a token of probability 0 at u = 0.
 */
#define _POSIX_C_SOURCE 200809L
#include "rows.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sieve.h"

static const char *const op_names[] = {
#define FUZZ__OP_NAME(id, name, what) name,
    FUZZ_OPS(FUZZ__OP_NAME)
#undef FUZZ__OP_NAME
};

const char *fuzz_op_name(int op) { return op >= 0 && op < FUZZ_OP_COUNT ? op_names[op] : "?"; }

int fuzz_op_parse(const char *name) {
  for (int op = 0; op < FUZZ_OP_COUNT; op++)
    if (strcmp(op_names[op], name) == 0)
      return op;
  return -1;
}

static uint64_t draw_position(fuzz_rng *r) {
  switch (fuzz_below(r, 4)) {
  case 0:
    return fuzz_below(r, 8);
  case 1:
    return fuzz_below(r, 1 << 20);
  case 2:
    return (UINT64_C(1) << 32) - 4 + fuzz_below(r, 8);
  default:
    return fuzz_below(r, UINT64_C(1) << 40);
  }
}

static uint64_t draw_seed(fuzz_rng *r, uint64_t position, int sample_case, int mtp) {
  switch (fuzz_below(r, 5)) {
  case 0:
    return fuzz_below(r, 1000);
  case 1:
    return (UINT64_C(1) << 32) - 8 + fuzz_below(r, 16);
  case 2:
    return (UINT64_C(1) << 63) + fuzz_below(r, UINT64_C(1) << 62);
  case 3:
    return mtp ? fuzz_next(r) : sieve_seed_of_zero_u(position, sample_case);
  default:
    return fuzz_next(r);
  }
}

int fuzz_key(fuzz_rng *r, cJSON *x, int sample_case, int mtp) {
  char seed[24];
  const uint64_t position = draw_position(r);
  snprintf(seed, sizeof seed, "%" PRIu64, draw_seed(r, position, sample_case, mtp));
  return cJSON_AddStringToObject(x, "seed", seed) &&
                 cJSON_AddNumberToObject(x, "position", (double)position)
             ? 0
             : -1;
}

cJSON *fuzz_position_request(fuzz_rng *r) {
  cJSON *x = cJSON_CreateObject();
  const int decode = (int)fuzz_below(r, 2), wrong = fuzz_below(r, 16) == 0;
  const uint64_t q = decode ? 1 + fuzz_below(r, 64) : 1 + fuzz_below(r, 4096);
  const uint64_t k = q + fuzz_below(r, UINT64_C(1) << (fuzz_below(r, 2) ? 12 : 40));
  const uint64_t row = decode ? fuzz_below(r, q) : 0;
  if (!x || !cJSON_AddStringToObject(x, "op", "position") ||
      !cJSON_AddStringToObject(x, "mode", decode ? "decode" : "prefill") ||
      !cJSON_AddNumberToObject(x, "seqlen_q", (double)q) ||
      !cJSON_AddNumberToObject(x, "seqlen_k", (double)(wrong ? q - 1 : k)) ||
      !cJSON_AddNumberToObject(x, "row", (double)(wrong ? q + fuzz_below(r, 2) : row)))
    return cJSON_Delete(x), NULL;
  return x;
}
