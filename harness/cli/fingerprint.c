/* `sieve fingerprint --impl IMPL [--profile NAME] [--format text|json] [--timeout S]`: the
 * choice an implementation makes on each axis (engines/fingerprint.h). */
#define _GNU_SOURCE
#include "engines/fingerprint.h"
#include "impl.h"
#include "options.h"

static int fingerprint_main(const cli_command *self, int argc, char **argv) {
  static const char *const formats[] = {"text", "json", NULL};
  static impl_command cmd;
  const char *impl = NULL, *format = "text", *against = NULL, *timeout = "30";
  const cli_option options[] = {{"--impl", CLI_VALUE, &impl},
                                {"--format", CLI_VALUE, &format},
                                {"--profile", CLI_VALUE, &against},
                                {"--timeout", CLI_VALUE, &timeout}};
  fingerprint_request rq = {0};
  char err[512];
  int rc = cli_parse(self, options, sizeof options / sizeof options[0], argc, argv, NULL, 0, NULL);
  if (rc != 0 || (rc = cli_timeout(self, timeout, &rq.timeout_ms)) != 0)
    return rc;
  if (!impl)
    return cli_usage_error(self, "--impl IMPL is required", NULL);
  if ((rq.json = cli_format(self, format, formats)) < 0)
    return 2;
  if (against && !(rq.against = impl_profile(against, err, sizeof err)))
    return cli_usage_error(self, err, NULL);
  if (impl_command_parse(&cmd, impl, err, sizeof err) != 0)
    return cli_usage_error(self, err, NULL);
  rq.impl = impl;
  rq.target = &cmd.target;
  return sieve_fingerprint(&rq);
}

const cli_command cli_fingerprint = {
    "fingerprint", "--impl IMPL [--profile NAME] [--format text|json] [--timeout S]",
    "the choice it makes on each axis",
    "usage: sieve fingerprint --impl IMPL [--profile NAME] [--format text|json] [--timeout S]\n"
    "The choice an implementation makes on each axis (sieve axes), and the profiles making the\n"
    "same ones. With --profile, where it leaves that profile. --timeout: per request (30 s);\n"
    "after 3 requests in a row without an answer no more are sent. Exit status: 0 done; with\n"
    "--profile, 1 when it leaves that profile on an axis or leaves axes unanswered; 2 a usage\n"
    "error or no answer to hello.\n",
    fingerprint_main};
