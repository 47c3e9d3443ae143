/*
 * `sieve profiles` and `sieve axes`: a list built once as JSON and printed with --format json as
 * it is, or as text an item at a time.
 */
#ifndef SIEVE_CLI_LISTING_H
#define SIEVE_CLI_LISTING_H

#include <cjson/cJSON.h>

#include "options.h"

/* Parses [--format text|json], prints `list` (and frees it), returns the exit status. */
int cli_listing_main(const cli_command *self, int argc, char **argv, cJSON *list,
                     void (*print_item)(const cJSON *item));

/* A string member of a listing item, or "". */
const char *cli_listing_str(const cJSON *item, const char *key);

#endif /* SIEVE_CLI_LISTING_H */
