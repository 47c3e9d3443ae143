/*
 * The sieve command line. Subcommands:
 *   sieve serve [--profile deepinfer]   protocol v1 on stdin/stdout
 * Exit status: 0 success; 1 an output error; 2 a usage error.
 */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "../oracle/sieve.h"
#include "serve.h"

static const char usage[] =
    "usage: sieve serve [--profile NAME]   serve protocol v1 on stdin/stdout\n"
    "       sieve --version\n"
    "       sieve --help\n"
    "profiles: deepinfer (the spec, the default)\n";

static int usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "sieve: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n%s", usage);
  return 2;
}

static int cmd_serve(int argc, char **argv) {
  const char *profile = "deepinfer";
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--profile") == 0 && i + 1 < argc)
      profile = argv[++i];
    else if (strncmp(argv[i], "--profile=", 10) == 0)
      profile = argv[i] + 10;
    else
      return usage_error("serve: unexpected argument '%s'", argv[i]);
  }
  if (!sieve_serve_has_profile(profile))
    return usage_error("serve: unknown profile '%s'", profile);
  signal(SIGPIPE, SIG_IGN);
  return sieve_serve(stdin, stdout, profile);
}

int main(int argc, char **argv) {
  if (argc < 2)
    return usage_error("%s", "no subcommand given");
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
  return usage_error("unknown subcommand '%s'", argv[1]);
}
