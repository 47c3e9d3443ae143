/*
 * The sieve command line.
 *   sieve serve [--profile deepinfer | --lib PATH.so]   protocol v1 on stdin/stdout
 *   sieve run --impl IMPL [options]                     an implementation through the fixtures
 * Exit status: 0 success; 1 failures (run) or an output error (serve); 2 a usage error.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "../oracle/sieve.h"
#include "diff.h"
#include "explain.h"
#include "fingerprint.h"
#include "proc.h"
#include "profiles.h"
#include "run.h"
#include "serve.h"
#include "sieve_impl.h"

static const char usage[] =
    "usage: sieve serve [--profile NAME | --lib PATH.so]   serve protocol v1 on stdin/stdout\n"
    "       sieve run --impl IMPL [options]                put an implementation through the\n"
    "                                                      fixtures (sieve run --help)\n"
    "       sieve fingerprint --impl IMPL                  the choice it makes on each axis\n"
    "       sieve diff IMPL_A IMPL_B [--format markdown]   where two implementations differ\n"
    "       sieve explain CASE_ID | --logits X,Y,... [--profile NAME] [--svg FILE]\n"
    "                                                      the steps of the rule on one row\n"
    "       sieve profiles                                 the engine profiles and their axes\n"
    "       sieve --version\n"
    "       sieve --help\n"
    "IMPL: exec:COMMAND, lib:PATH.so or profile:NAME; profiles: sieve profiles\n";

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
  if (!impl || impl->abi != SIEVE_IMPL_ABI || !impl->name || !impl->version) {
    fprintf(stderr, "sieve serve: %s does not export %s() returning a sieve_impl of ABI %d\n",
            path, SIEVE_IMPL_SYMBOL, SIEVE_IMPL_ABI);
    return NULL;
  }
  return impl;
}

static int cmd_serve(int argc, char **argv) {
  const char *profile = "deepinfer", *lib = NULL;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--profile") == 0 && i + 1 < argc)
      profile = argv[++i];
    else if (strncmp(argv[i], "--profile=", 10) == 0)
      profile = argv[i] + 10;
    else if (strcmp(argv[i], "--lib") == 0 && i + 1 < argc)
      lib = argv[++i];
    else
      return usage_error("serve: unexpected argument '%s'", argv[i]);
  }
  if (!lib && !sieve_serve_has_profile(profile))
    return usage_error("serve: unknown profile '%s'", profile);
  if (!lib)
    return sieve_serve(stdin, stdout, profile);
  const sieve_impl *impl = load_impl(lib);
  return impl ? sieve_serve_impl(stdin, stdout, impl) : 2;
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
  if (strcmp(argv[1], "serve") == 0)
    return cmd_serve(argc - 2, argv + 2);
  if (strcmp(argv[1], "profiles") == 0) {
    for (const engine_profile *p = profiles; p->name; p++) {
      printf("%-24s %s\n", p->name, p->engine);
      for (int a = 0; a < PROFILE_AXES; a++)
        printf("  %-15s %-11s %s%s\n", axis_names[a], axis_value_name(a, rule_axis(&p->rule, a)),
               p->why[a].confirmed ? "" : "unconfirmed: ", p->why[a].source);
    }
    return 0;
  }
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
