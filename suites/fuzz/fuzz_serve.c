/*
 * libFuzzer target: the request parser of `sieve serve`. The input is fed as
 * stdin (any bytes, any lines); every line must get an answer or be skipped,
 * and the server must never crash.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "protocol/request.h"
#include "protocol/serve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  FILE *in = fmemopen((void *)data, size, "r");
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  if (in && out)
    sieve_serve(in, out, "deepinfer", NULL, REQ_OPTIONS_ALL);
  if (in)
    fclose(in);
  if (out)
    fclose(out);
  free(text);
  return 0;
}
