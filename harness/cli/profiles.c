/* `sieve profiles [--format text|json]`: each engine profile's choice on every axis, with the
 * source it was read or run from (engines/profiles.c). */
#include <stdio.h>

#include "engines/profiles.h"
#include "listing.h"

static cJSON *profiles_list(void) {
  cJSON *all = cJSON_CreateArray();
  for (const engine_profile *p = profiles; p->name; p++) {
    cJSON *one = cJSON_CreateObject();
    cJSON_AddStringToObject(one, "name", p->name);
    cJSON_AddStringToObject(one, "engine", p->engine);
    cJSON_AddStringToObject(one, "sampling_options", p->sampling_options);
    cJSON *axes = cJSON_AddObjectToObject(one, "axes");
    for (int a = 0; a < SIEVE_AXIS_COUNT; a++) {
      cJSON *choice = cJSON_AddObjectToObject(axes, sieve_axis_name(a));
      cJSON_AddStringToObject(choice, "value",
                              sieve_axis_value_name(a, sieve_rule_get(&p->rule, a)));
      cJSON_AddStringToObject(choice, "source", p->why[a].source ? p->why[a].source : "");
      cJSON_AddBoolToObject(choice, "confirmed", p->why[a].confirmed);
    }
    cJSON_AddItemToArray(all, one);
  }
  return all;
}

static void print_profile(const cJSON *p) {
  const char *options = cli_listing_str(p, "sampling_options");
  printf("%-24s %s\n  sampling options: %s\n", cli_listing_str(p, "name"),
         cli_listing_str(p, "engine"), *options ? options : "none");
  const cJSON *axes = cJSON_GetObjectItemCaseSensitive(p, "axes");
  for (const cJSON *c = axes ? axes->child : NULL; c; c = c->next)
    printf("  %-19s %-12s %s%s\n", c->string, cli_listing_str(c, "value"),
           cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "confirmed")) ? "" : "unconfirmed: ",
           cli_listing_str(c, "source"));
}

static int profiles_main(const cli_command *self, int argc, char **argv) {
  return cli_listing_main(self, argc, argv, profiles_list(), print_profile);
}

const cli_command cli_profiles = {
    "profiles", "[--format text|json]", "the engine profiles and their axes",
    "usage: sieve profiles [--format text|json]\n"
    "The engine profiles: the sampling options each one takes (a comma-separated list, \"\"\n"
    "for none), and its choice on every axis, with the source it was read from.\n",
    profiles_main};
