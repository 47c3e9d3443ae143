/*
 * libFuzzer target: the oracle's public entry points on arbitrary parameters
 * and rows. The first 24 bytes are temperature, top_p and top_k; the rest is a
 * row of float32 logits (at most 4096). Bytes 11 to 20 also choose min-p and
 * the penalties (in range and out of it, with output ids in and past the row).
 * The fast path and the spec path must agree bit for bit, and nothing may crash
 * or read out of bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../oracle/sieve.h"

static void agree(const float *row, size_t v, const sieve_params *p, const sieve_engine *e) {
  double *a = malloc(v * sizeof *a), *b = malloc(v * sizeof *b);
  sieve_filter_info fa, fb;
  int ra = sieve_filter(row, v, p, e, a, &fa), rb = sieve_filter_spec(row, v, p, e, b, &fb);
  if (ra != rb || (ra == 0 && (fa.kept != fb.kept || memcmp(a, b, v * sizeof *a) != 0)))
    abort();
  if (ra == 0) {
    sieve_top_entry top[4];
    size_t n = v < 4 ? v : 4;
    if (sieve_top_logprobs(a, v, n, top) != 0)
      abort();
  }
  free(a);
  free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 24)
    return 0;
  sieve_params p = SIEVE_PARAMS_DEFAULT;
  memcpy(&p.temperature, data, 8);
  memcpy(&p.top_p, data + 8, 8);
  memcpy(&p.top_k, data + 16, 8);
  const int64_t out[4] = {data[11] % 9, data[12] % 9, data[13] % 9, data[14] % 9};
  const sieve_penalties pen = {(data[15] % 11 - 5) * 0.5,
                               (data[16] % 11 - 5) * 0.5,
                               (data[17] % 10) * 0.25,
                               data[18] % 6 - 2,
                               out,
                               4,
                               NULL,
                               0};
  p.min_p = (data[19] % 6) * 0.25;
  p.penalties = data[20] & 1 ? &pen : NULL;
  size_t v = (size - 24) / sizeof(float);
  v = v > 4096 ? 4096 : v;
  float *row = malloc((v ? v : 1) * sizeof *row);
  memcpy(row, data + 24, v * sizeof *row);
  agree(row, v, &p, NULL);
  int64_t blacklist[2] = {0, (int64_t)(v / 2)};
  sieve_engine engine = {v > 8 ? 3 : 0, blacklist, v > 0 ? 2 : 0};
  agree(row, v, &p, &engine);
  sieve_draw_key key = {data[0], data[1], data[2] % 4, data[3] % 3};
  sieve_sample_result r;
  sieve_top_entry top[2];
  sieve_sample(row, v, &p, NULL, &key, v < 2 ? v : 2, top, &r);
  double probs[8], u = (double)data[4] / 256.0;
  size_t n = v < 8 ? v : 8;
  for (size_t i = 0; i < n; i++)
    probs[i] = (double)row[i];
  int64_t token;
  sieve_draw(probs, n, u, &token, NULL);
  int64_t position;
  sieve_position((sieve_mode)(data[5] % 3), (int64_t)data[6] - 8, (int64_t)data[7] - 8,
                 (int64_t)data[8] - 8, &position);
  free(row);
  return 0;
}
