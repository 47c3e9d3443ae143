/* `sieve axes [--format text|json]`: the axes on which engines choose differently
 * (oracle/sieve.h, SIEVE_AXES) and their values, DeepInfer's first. */
#include <stdio.h>
#include <string.h>

#include "listing.h"
#include "sieve.h"

static cJSON *axes_list(void) {
  cJSON *all = cJSON_CreateArray();
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++) {
    cJSON *one = cJSON_CreateObject();
    cJSON_AddStringToObject(one, "axis", sieve_axis_name(a));
    cJSON_AddStringToObject(one, "what", sieve_axis_what(a));
    cJSON *values = cJSON_AddArrayToObject(one, "values");
    for (int v = 0; v < sieve_axis_values(a); v++) {
      cJSON *value = cJSON_CreateObject();
      cJSON_AddStringToObject(value, "name", sieve_axis_value_name(a, v));
      cJSON_AddStringToObject(value, "what", sieve_axis_value_what(a, v));
      cJSON_AddItemToArray(values, value);
    }
    cJSON_AddItemToArray(all, one);
  }
  return all;
}

/* An axis and its values, the values' names in a column as wide as the longest. */
static void print_axis(const cJSON *a) {
  printf("%s: %s\n", cli_listing_str(a, "axis"), cli_listing_str(a, "what"));
  const cJSON *values = cJSON_GetObjectItemCaseSensitive(a, "values");
  size_t width = 0;
  for (const cJSON *v = values ? values->child : NULL; v; v = v->next)
    if (strlen(cli_listing_str(v, "name")) > width)
      width = strlen(cli_listing_str(v, "name"));
  for (const cJSON *v = values ? values->child : NULL; v; v = v->next)
    printf("  %-*s %s%s\n", (int)width, cli_listing_str(v, "name"), cli_listing_str(v, "what"),
           v == values->child ? " (DeepInfer)" : "");
}

static int axes_main(const cli_command *self, int argc, char **argv) {
  return cli_listing_main(self, argc, argv, axes_list(), print_axis);
}

const cli_command cli_axes = {
    "axes", "[--format text|json]", "the axes and their values",
    "usage: sieve axes [--format text|json]\n"
    "The axes on which engines choose differently (oracle/sieve.h), and their values.\n",
    axes_main};
