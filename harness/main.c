/*
 * The sieve command line.
 *   sieve serve [--profile NAME] [--rule AXIS=VALUE,...] | --lib PATH.so
 *   sieve run --impl IMPL [options]      an implementation through the fixtures
 *   sieve fingerprint, diff, explain, profiles, axes: see the usage text below.
 * Exit status: 0 success; 1 failures (run, diff), a difference from --profile
 * (fingerprint) or an output error (serve); 2 a usage error.
 */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../oracle/sieve.h"
#include "case.h"
#include "diff.h"
#include "explain.h"
#include "fingerprint.h"
#include "proc.h"
#include "profiles.h"
#include "run.h"
#include "serve.h"
#include "sieve_impl.h"

static const char usage[] =
    "usage: sieve serve [--profile NAME] [--rule AXIS=VALUE,...] | --lib PATH.so\n"
    "                                                      serve protocol v1 on stdin/stdout\n"
    "       sieve run --impl IMPL [options]                put an implementation through the\n"
    "                                                      fixtures (sieve run --help)\n"
    "       sieve fingerprint --impl IMPL [--profile NAME] [--format json]\n"
    "                                                      the choice it makes on each axis\n"
    "       sieve diff IMPL_A IMPL_B [--format markdown|json]\n"
    "                                                      where two implementations differ\n"
    "       sieve explain CASE_ID | --logits X,Y,... [--profile NAME] [--svg FILE]\n"
    "                                                      the steps of the rule on one row\n"
    "       sieve case ID [--request]                      a fixture case, or its request alone\n"
    "       sieve profiles [--format json]                 the engine profiles and their axes\n"
    "       sieve axes [--format json]                     the axes and their values\n"
    "       sieve --version\n"
    "       sieve --help\n"
    "IMPL: exec:COMMAND, lib:PATH.so, profile:NAME or rule:AXIS=VALUE,...\n";

static const char serve_usage[] =
    "usage: sieve serve [--profile NAME] [--rule AXIS=VALUE,...]\n"
    "       sieve serve --lib PATH.so\n"
    "Answers protocol v1 (harness/PROTOCOL.md) on stdin/stdout: the oracle under DeepInfer's "
    "rule,\n"
    "a profile's (sieve profiles), with --rule's axes set on it (sieve axes), or a shared\n"
    "library's table (harness/sieve_impl.h).\n";
static const char profiles_usage[] =
    "usage: sieve profiles [--format text|json]\n"
    "The engine profiles: each one's choice on every axis, with the source it was read from.\n";
static const char axes_usage[] =
    "usage: sieve axes [--format text|json]\n"
    "The axes on which engines choose differently (oracle/sieve.h), and their values.\n";

/* `sieve SUBCOMMAND --help`: its usage on stdout; NULL for a subcommand with its own. */
static const char *subcommand_usage(const char *name) {
  static const struct {
    const char *name, *text;
  } table[] = {{"serve", serve_usage},       {"fingerprint", sieve_fingerprint_usage},
               {"diff", sieve_diff_usage},   {"explain", sieve_explain_usage},
               {"profiles", profiles_usage}, {"axes", axes_usage},
               {"case", sieve_case_usage}};
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (strcmp(table[i].name, name) == 0)
      return table[i].text;
  return NULL;
}

static int usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "sieve: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n%s", usage);
  return 2;
}

/* Loads a library's sieve_impl table (harness/sieve_impl.h); NULL with a message on failure. */
static const sieve_impl *load_impl(const char *path) {
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    fprintf(stderr, "sieve serve: cannot load %s: %s\n", path, dlerror());
    return NULL;
  }
  sieve_impl_get_fn get;
  *(void **)&get = dlsym(handle, SIEVE_IMPL_SYMBOL);
  const sieve_impl *impl = get ? get() : NULL;
  if (!impl || impl->abi < 1 || impl->abi > SIEVE_IMPL_ABI || !impl->name || !impl->version) {
    fprintf(stderr, "sieve serve: %s does not export %s() returning a sieve_impl of ABI 1 to %d\n",
            path, SIEVE_IMPL_SYMBOL, SIEVE_IMPL_ABI);
    return NULL;
  }
  return impl;
}

static int serve_error(const char *fmt, const char *arg) {
  fprintf(stderr, "sieve serve: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n%s", serve_usage);
  return 2;
}

/* The rule of --profile (DeepInfer's by default) with --rule's axes set on it, and its name. */
static int serve_rule(const char *profile, const char *rule_text, sieve_rule *rule, char *name,
                      size_t len) {
  const engine_profile *p = profile_find(profile);
  char err[200];
  if (!p)
    return serve_error("unknown profile '%s' (sieve profiles lists them)", profile);
  *rule = p->rule;
  if (rule_text && profile_parse_rule(rule_text, rule, err, sizeof err) != 0)
    return serve_error("%s", err);
  snprintf(name, len, "%s%s%s", profile, rule_text ? "+" : "", rule_text ? rule_text : "");
  return 0;
}

static int cmd_serve(int argc, char **argv) {
  const char *profile = "deepinfer", *lib = NULL, *rule_text = NULL;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--profile") == 0 && i + 1 < argc)
      profile = argv[++i];
    else if (strncmp(argv[i], "--profile=", 10) == 0)
      profile = argv[i] + 10;
    else if (strcmp(argv[i], "--rule") == 0 && i + 1 < argc)
      rule_text = argv[++i];
    else if (strcmp(argv[i], "--lib") == 0 && i + 1 < argc)
      lib = argv[++i];
    else
      return serve_error("unexpected argument '%s'", argv[i]);
  }
  sieve_rule rule;
  char name[256];
  if (!lib && serve_rule(profile, rule_text, &rule, name, sizeof name) != 0)
    return 2;
  if (!lib)
    return sieve_serve(stdin, stdout, name, &rule);
  const sieve_impl *impl = load_impl(lib);
  return impl ? sieve_serve_impl(stdin, stdout, impl) : 2;
}

static int json_format(int argc, char **argv, const char *command) {
  if (argc == 0)
    return 0;
  if (argc == 2 && strcmp(argv[0], "--format") == 0 && strcmp(argv[1], "json") == 0)
    return 1;
  if (argc == 2 && strcmp(argv[0], "--format") == 0 && strcmp(argv[1], "text") == 0)
    return 0;
  fprintf(stderr, "sieve %s: unexpected argument '%s'\n%s", command, argv[0],
          !strcmp(command, "axes") ? axes_usage : profiles_usage);
  return -1;
}

static void print_json(cJSON *value) {
  char *text = cJSON_PrintUnformatted(value);
  printf("%s\n", text ? text : "null");
  free(text);
  cJSON_Delete(value);
}

/* `sieve profiles`: each profile's choice on every axis with its source. */
static int print_profiles(int argc, char **argv) {
  int json = json_format(argc, argv, "profiles");
  cJSON *all = cJSON_CreateArray();
  for (const engine_profile *p = profiles; json >= 0 && p->name; p++) {
    cJSON *one = cJSON_CreateObject(), *axes = cJSON_AddObjectToObject(one, "axes");
    cJSON_AddStringToObject(one, "name", p->name);
    cJSON_AddStringToObject(one, "engine", p->engine);
    if (!json)
      printf("%-24s %s\n", p->name, p->engine);
    for (int a = 0; a < SIEVE_AXIS_COUNT; a++) {
      const char *value = sieve_axis_value_name(a, sieve_rule_get(&p->rule, a));
      cJSON *choice = cJSON_AddObjectToObject(axes, sieve_axis_name(a));
      cJSON_AddStringToObject(choice, "value", value);
      cJSON_AddStringToObject(choice, "source", p->why[a].source ? p->why[a].source : "");
      cJSON_AddBoolToObject(choice, "confirmed", p->why[a].confirmed);
      if (!json)
        printf("  %-19s %-12s %s%s\n", sieve_axis_name(a), value,
               p->why[a].confirmed ? "" : "unconfirmed: ", p->why[a].source);
    }
    cJSON_AddItemToArray(all, one);
  }
  if (json == 1)
    print_json(all);
  else
    cJSON_Delete(all);
  return json < 0 ? 2 : 0;
}

/* `sieve axes`: the axes of sieve_rule and their values (oracle/sieve.h, SIEVE_AXES). */
static int print_axes(int argc, char **argv) {
  int json = json_format(argc, argv, "axes");
  cJSON *all = cJSON_CreateArray();
  for (int a = 0; json >= 0 && a < SIEVE_AXIS_COUNT; a++) {
    cJSON *one = cJSON_CreateObject(), *values = cJSON_AddArrayToObject(one, "values");
    cJSON_AddStringToObject(one, "axis", sieve_axis_name(a));
    cJSON_AddStringToObject(one, "what", sieve_axis_what(a));
    if (!json)
      printf("%s: %s\n", sieve_axis_name(a), sieve_axis_what(a));
    for (int v = 0; v < sieve_axis_values(a); v++) {
      cJSON *value = cJSON_CreateObject();
      cJSON_AddStringToObject(value, "name", sieve_axis_value_name(a, v));
      cJSON_AddStringToObject(value, "what", sieve_axis_value_what(a, v));
      cJSON_AddItemToArray(values, value);
      if (!json)
        printf("  %-12s %s%s\n", sieve_axis_value_name(a, v), sieve_axis_value_what(a, v),
               v == 0 ? " (DeepInfer)" : "");
    }
    cJSON_AddItemToArray(all, one);
  }
  if (json == 1)
    print_json(all);
  else
    cJSON_Delete(all);
  return json < 0 ? 2 : 0;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return usage_error("%s", "no subcommand given");
  proc_kill_children_on_signals();
  /* An implementation that exits early closes the pipe we write to: a write error to report,
   * never a death by SIGPIPE, in every subcommand. */
  signal(SIGPIPE, SIG_IGN);
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
    fputs(usage, stdout);
    return 0;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("sieve %s\n", SIEVE_VERSION);
    return 0;
  }
  const char *help = argc == 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))
                         ? subcommand_usage(argv[1])
                         : NULL;
  if (help) {
    fputs(help, stdout);
    return 0;
  }
  if (strcmp(argv[1], "serve") == 0)
    return cmd_serve(argc - 2, argv + 2);
  if (strcmp(argv[1], "profiles") == 0)
    return print_profiles(argc - 2, argv + 2);
  if (strcmp(argv[1], "axes") == 0)
    return print_axes(argc - 2, argv + 2);
  if (strcmp(argv[1], "case") == 0)
    return sieve_case_main(argc - 2, argv + 2);
  if (strcmp(argv[1], "explain") == 0)
    return sieve_explain_main(argc - 2, argv + 2);
  if (strcmp(argv[1], "diff") == 0)
    return sieve_diff_main(argc - 2, argv + 2);
  if (strcmp(argv[1], "fingerprint") == 0)
    return sieve_fingerprint_main(argc - 2, argv + 2);
  if (strcmp(argv[1], "run") == 0)
    return sieve_run_main(argc - 2, argv + 2);
  return usage_error("unknown subcommand '%s'", argv[1]);
}
