/* Implementation commands; see impl.h. */
#define _GNU_SOURCE
#include "impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profiles.h"

int impl_command_parse(impl_command *cmd, const char *impl, char *err, size_t err_len) {
  ssize_t n = readlink("/proc/self/exe", cmd->self, sizeof cmd->self - 1);
  cmd->self[n > 0 ? n : 0] = '\0';
  if (strncmp(impl, "exec:", 5) == 0 && impl[5]) {
    char *argv[] = {"/bin/sh", "-c", (char *)impl + 5, NULL};
    memcpy(cmd->argv, argv, sizeof argv);
    return 0;
  }
  const char *arg = strchr(impl, ':') ? strchr(impl, ':') + 1 : "";
  int lib = strncmp(impl, "lib:", 4) == 0, prof = strncmp(impl, "profile:", 8) == 0;
  int rule = strncmp(impl, "rule:", 5) == 0;
  sieve_rule parsed = SIEVE_RULE_DEEPINFER;
  if ((!lib && !prof && !rule) || !*arg) {
    snprintf(err, err_len,
             "an implementation is exec:COMMAND, lib:PATH, profile:NAME or "
             "rule:AXIS=VALUE,..., not %s",
             impl);
    return -1;
  }
  if (prof && !profile_find(arg)) {
    snprintf(err, err_len, "unknown profile %s (sieve profiles lists them)", arg);
    return -1;
  }
  if (rule && profile_parse_rule(arg, &parsed, err, err_len) != 0)
    return -1;
  char *argv[] = {cmd->self, "serve",
                  lib    ? "--lib"
                  : prof ? "--profile"
                         : "--rule",
                  (char *)arg, NULL};
  memcpy(cmd->argv, argv, sizeof argv);
  return 0;
}

const char *sieve_default_fixtures(char *buf, size_t len) {
  static const char *const places[] = {"../fixtures", "../../fixtures", "../share/sieve"};
  const char *env = getenv("SIEVE_FIXTURES");
  char dir[PATH_MAX];
  if (env && *env) {
    snprintf(buf, len, "%s", env);
    return buf;
  }
  ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
  dir[n > 0 ? n : 0] = '\0';
  char *slash = strrchr(dir, '/');
  if (slash)
    *slash = '\0';
  for (size_t i = 0; i < sizeof places / sizeof places[0]; i++) {
    snprintf(buf, len, "%s/%s/sieve-fixtures.json", dir, places[i]);
    if (access(buf, R_OK) == 0)
      break;
  }
  return buf;
}

int sieve_usage_error(const char *name, const char *why, const char *what, const char *usage) {
  fprintf(stderr, "sieve %s: %s%s%s%s\n%s", name, why, what ? " '" : "", what ? what : "",
          what ? "'" : "", usage);
  return 2;
}
