/* Implementation commands; see impl.h. */
#define _GNU_SOURCE
#include "impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engines/profiles.h"
#include "protocol/request.h"
#include "run/fixture.h"

const engine_profile *impl_profile(const char *name, char *err, size_t err_len) {
  const engine_profile *p = profile_find(name);
  if (!p)
    snprintf(err, err_len, "unknown profile '%s' (sieve profiles lists them)", name);
  return p;
}

int impl_rule(const char *profile, const char *rule_text, sieve_rule *rule, unsigned *options,
              char *name, size_t name_len, char *err, size_t err_len) {
  const engine_profile *p = impl_profile(profile, err, err_len);
  if (!p)
    return -1;
  *rule = p->rule;
  *options = req_options_of_text(p->sampling_options, NULL, 0);
  if (rule_text && profile_parse_rule(rule_text, rule, err, err_len) != 0)
    return -1;
  snprintf(name, name_len, "%s%s%s", profile, rule_text ? "+" : "", rule_text ? rule_text : "");
  return 0;
}

int impl_command_parse(impl_command *cmd, const char *impl, char *err, size_t err_len) {
  ssize_t n = readlink("/proc/self/exe", cmd->self, sizeof cmd->self - 1);
  cmd->self[n > 0 ? n : 0] = '\0';
  cmd->target = (impl_target){cmd->argv, NULL, NULL, 0, 0u};
  const char *arg = strchr(impl, ':') ? strchr(impl, ':') + 1 : "";
  if (strncmp(impl, "exec:", 5) == 0 && *arg) {
    char *argv[] = {"/bin/sh", "-c", (char *)arg, NULL};
    memcpy(cmd->argv, argv, sizeof argv);
    return 0;
  }
  if (strncmp(impl, "lib:", 4) == 0 && *arg) {
    char *argv[] = {cmd->self, "serve", "--lib", (char *)arg, NULL};
    memcpy(cmd->argv, argv, sizeof argv);
    cmd->target.reads_recipes = 1;
    return 0;
  }
  int prof = strncmp(impl, "profile:", 8) == 0, rule = strncmp(impl, "rule:", 5) == 0;
  if ((!prof && !rule) || !*arg)
    return snprintf(err, err_len,
                    "an implementation is exec:COMMAND, lib:PATH, profile:NAME or "
                    "rule:AXIS=VALUE,..., not '%s'",
                    impl),
           -1;
  if (impl_rule(prof ? arg : "deepinfer", prof ? NULL : arg, &cmd->rule, &cmd->target.options,
                cmd->name, sizeof cmd->name, err, err_len) != 0)
    return -1;
  cmd->target.rule = &cmd->rule;
  cmd->target.name = cmd->name;
  return 0;
}

const char *sieve_default_fixtures(char *buf, size_t len) {
  static const char *const places[] = {"../fixtures", "../../fixtures", "../share/sieve"};
  const char *env = getenv("SIEVE_FIXTURES");
  if (env && *env) {
    snprintf(buf, len, "%s", env);
    return buf;
  }
  return sieve_beside_self(places, sizeof places / sizeof places[0], "sieve-fixtures.json", buf,
                           len);
}
