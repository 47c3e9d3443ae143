/*
 * `sieve serve [--profile NAME] [--rule AXIS=VALUE,...] | --lib PATH.so`: protocol v1 on
 * stdin/stdout (protocol/PROTOCOL.md), answered by the oracle under a profile's rule with
 * --rule's axes set on it, or by a shared library's table (protocol/sieve_impl.h).
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>

#include "impl.h"
#include "options.h"
#include "protocol/backend.h"
#include "protocol/serve.h"

static int serve_main(const cli_command *self, int argc, char **argv) {
  const char *profile = NULL, *lib = NULL, *rule_text = NULL;
  const cli_option options[] = {{"--profile", CLI_VALUE, &profile},
                                {"--rule", CLI_VALUE, &rule_text},
                                {"--lib", CLI_VALUE, &lib}};
  int rc = cli_parse(self, options, sizeof options / sizeof options[0], argc, argv, NULL, 0, NULL);
  if (rc != 0)
    return rc;
  if (lib && (profile || rule_text))
    return cli_usage_error(self, "--lib serves the library alone, without --profile or --rule",
                           NULL);
  if (!lib) {
    sieve_rule rule;
    unsigned offered;
    char name[256];
    char err[PATH_MAX + 200];
    if (impl_rule(profile ? profile : "deepinfer", rule_text, &rule, &offered, name, sizeof name,
                  err, sizeof err) != 0)
      return cli_usage_error(self, err, NULL);
    return sieve_serve(stdin, stdout, name, &rule, offered);
  }
  char err[PATH_MAX + 200];
  const sieve_impl *impl = backend_load_library(lib, err, sizeof err);
  if (!impl) {
    fprintf(stderr, "sieve serve: %s\n", err);
    return 2;
  }
  return sieve_serve_impl(stdin, stdout, impl);
}

const cli_command cli_serve = {
    "serve", "[--profile NAME] [--rule AXIS=VALUE,...] | --lib PATH.so",
    "serve protocol v1 on stdin/stdout",
    "usage: sieve serve [--profile NAME] [--rule AXIS=VALUE,...]\n"
    "       sieve serve --lib PATH.so\n"
    "Answers protocol v1 (harness/protocol/PROTOCOL.md) on stdin/stdout: the oracle under\n"
    "DeepInfer's rule, a profile's (sieve profiles), with --rule's axes set on it (sieve axes),\n"
    "or a shared library's table (harness/protocol/sieve_impl.h).\n",
    serve_main};
