/* The implementation an IMPL names (exec:COMMAND, lib:PATH, profile:NAME or rule:AXIS=VALUE,...):
 * a command to run as a child, or a rule of the oracle to answer in process; and the fixture file
 * a subcommand reads by default. */
#ifndef SIEVE_IMPL_CMD_H
#define SIEVE_IMPL_CMD_H

#include <limits.h>
#include <stddef.h>

#include "engines/profiles.h"
#include "protocol/conn.h"

typedef struct impl_command {
  impl_target target; /* points into the members below */
  char *argv[5];
  char self[PATH_MAX];
  sieve_rule rule;
  char name[256];
} impl_command;

/* Fills `cmd` for `impl`; -1 with a message in `err` when `impl` names nothing runnable. */
int impl_command_parse(impl_command *cmd, const char *impl, char *err, size_t err_len);

/* The profile called `name`, or NULL with a message in `err`. */
const engine_profile *impl_profile(const char *name, char *err, size_t err_len);

/* The rule of a profile with AXIS=VALUE,... set on it (rule_text may be NULL), the sampling
 * options the profile takes (request.h's bits), and its name as hello gives it ("vllm",
 * "deepinfer+boundary=ge"); -1 with a message in `err`. */
int impl_rule(const char *profile, const char *rule_text, sieve_rule *rule, unsigned *options,
              char *name, size_t name_len, char *err, size_t err_len);

/* The fixture file: $SIEVE_FIXTURES, or found from the executable (build/, build/san/, or an
 * install's share/sieve/). Returns `buf`. */
const char *sieve_default_fixtures(char *buf, size_t len);

#endif /* SIEVE_IMPL_CMD_H */
