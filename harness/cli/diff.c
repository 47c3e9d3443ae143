/* `sieve diff IMPL_A IMPL_B [--suite NAME]... [--format text|markdown|json] [--timeout S]
 * [--no-fit]`: where two implementations differ (engines/diff.h). */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>

#include "engines/diff.h"
#include "impl.h"
#include "options.h"
#include "run/suites.h"

static int diff_main(const cli_command *self, int argc, char **argv) {
  static const char *const formats[] = {"text", "markdown", "json", NULL};
  static impl_command cmds[2];
  static cli_list suites;
  const char *format = "text", *timeout = "30";
  int no_fit = 0;
  const cli_option options[] = {{"--suite", CLI_LIST, &suites},
                                {"--format", CLI_VALUE, &format},
                                {"--timeout", CLI_VALUE, &timeout},
                                {"--no-fit", CLI_FLAG, &no_fit}};
  diff_request rq = {.suites = suites.items};
  size_t n = 0;
  char err[256], path[PATH_MAX + 64];
  int rc =
      cli_parse(self, options, sizeof options / sizeof options[0], argc, argv, rq.names, 2, &n);
  if (rc != 0 || (rc = cli_timeout(self, timeout, &rq.timeout_ms)) != 0)
    return rc;
  if (n != 2)
    return cli_usage_error(self, "give two implementations", NULL);
  for (size_t i = 0; i < suites.n; i++)
    if (!suite_known(suites.items[i]))
      return cli_usage_error(self, "unknown suite (sieve run --help lists them):", suites.items[i]);
  int f = cli_format(self, format, formats);
  if (f < 0)
    return 2;
  rq.format = (diff_format)f;
  rq.fit = !no_fit;
  for (int i = 0; i < 2; i++) {
    if (impl_command_parse(&cmds[i], rq.names[i], err, sizeof err) != 0)
      return cli_usage_error(self, err, NULL);
    rq.targets[i] = &cmds[i].target;
  }
  sieve_fixtures fx;
  if (sieve_fixtures_load(sieve_default_fixtures(path, sizeof path), &fx, err, sizeof err) != 0) {
    fprintf(stderr, "sieve diff: %s\n", err);
    return 2;
  }
  rq.fixtures = &fx;
  rc = sieve_diff(&rq);
  sieve_fixtures_free(&fx);
  return rc;
}

const cli_command cli_diff = {
    "diff",
    "IMPL_A IMPL_B [--suite NAME]... [--format text|markdown|json] [--timeout S] [--no-fit]",
    "where two implementations differ",
    "usage: sieve diff IMPL_A IMPL_B [--suite NAME]... [--format text|markdown|json]\n"
    "                  [--timeout S] [--no-fit]\n"
    "The fixture cases two implementations answer differently, by the axis each discriminates,\n"
    "and the rule each side's answers follow (the fit of sieve run over those cases; --no-fit\n"
    "leaves it out, for scripts that count differences and want them sooner).\n"
    "--timeout: per request (30 s); after 3 requests in a row without an answer a side is not\n"
    "asked again. Exit status: 0 no difference, 1 differences, 2 a usage error, no answer to\n"
    "hello, or a side that answered nothing.\n",
    diff_main};
