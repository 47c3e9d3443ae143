/* The command that runs an implementation given as exec:COMMAND, lib:PATH or profile:NAME. */
#ifndef SIEVE_IMPL_CMD_H
#define SIEVE_IMPL_CMD_H

#include <limits.h>
#include <stddef.h>

typedef struct impl_command {
  char *argv[5];
  char self[PATH_MAX];
} impl_command;

/* Fills `cmd` for `impl`; -1 with a message in `err` when `impl` names nothing runnable. */
int impl_command_parse(impl_command *cmd, const char *impl, char *err, size_t err_len);

/* The fixture file: $SIEVE_FIXTURES, or found from the executable (build/, build/san/, or an
 * install's share/sieve/). Returns `buf`. */
const char *sieve_default_fixtures(char *buf, size_t len);

/* A usage error of a subcommand: "sieve NAME: WHY 'WHAT'" and its usage on stderr; returns 2,
 * the exit status of a usage error. `what` (may be NULL) is the argument at fault. */
int sieve_usage_error(const char *name, const char *why, const char *what, const char *usage);

#endif /* SIEVE_IMPL_CMD_H */
