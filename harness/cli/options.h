/*
 * The subcommands of the sieve command line and the one parser of their options. Each
 * subcommand is a cli_command (one file each in this folder) and states its options as a table
 * of cli_option; cli_parse reads argv against the table, and every usage error has one form:
 * "sieve NAME: WHY 'WHAT'" and the subcommand's usage on stderr, exit status 2.
 */
#ifndef SIEVE_CLI_OPTIONS_H
#define SIEVE_CLI_OPTIONS_H

#include <stddef.h>

typedef struct cli_command {
  const char *name;     /* "run" */
  const char *synopsis; /* its arguments, for the lines of `sieve --help` */
  const char *summary;  /* what it does, in a few words */
  const char *usage;    /* `sieve NAME --help`: starts "usage: sieve NAME" */
  /* argv holds the arguments after the subcommand's name; returns the exit status. */
  int (*main)(const struct cli_command *self, int argc, char **argv);
} cli_command;

/* Every subcommand, in the order of `sieve --help`. */
extern const cli_command cli_serve, cli_run, cli_fingerprint, cli_diff, cli_explain, cli_fuzz,
    cli_case, cli_profiles, cli_axes;

typedef enum cli_kind {
  CLI_VALUE, /* --name VALUE or --name=VALUE, once */
  CLI_FLAG,  /* --name, without a value */
  CLI_LIST,  /* --name A,B --name C: every name, in order */
  CLI_EACH   /* --name X --name Y: every value, whole */
} cli_kind;

/* Enough for every case id of the fixtures in one --case (the pytest plugin asks them so). */
#define CLI_LIST_MAX 4096

typedef struct cli_list {
  const char *items[CLI_LIST_MAX + 1]; /* NULL-ended */
  size_t n;
} cli_list;

typedef struct cli_option {
  const char *name; /* with its dashes: "--impl" */
  cli_kind kind;
  void *slot; /* CLI_VALUE: const char **; CLI_FLAG: int *; CLI_LIST, CLI_EACH: cli_list * */
} cli_option;

/*
 * Reads argv against `options` (at most 64); an argument that is no option goes to `args` (at
 * most `max_args`, their count in *n_args). Returns 0, or 2 after printing the usage error: an
 * unknown option, an option without its value or given twice, a flag given a value, too many
 * arguments or list items. A list's values are split at commas in place.
 */
int cli_parse(const cli_command *cmd, const cli_option *options, size_t n_options, int argc,
              char **argv, const char **args, size_t max_args, size_t *n_args);

/* Prints "sieve NAME: WHY 'WHAT'" (without the quoted part when `what` is NULL) and the usage
 * on stderr; returns 2, the exit status of a usage error. */
int cli_usage_error(const cli_command *cmd, const char *why, const char *what);

/* A whole number in [lo, hi] written in full ("8", not "8x"); 0, or -1. */
int cli_integer(const char *text, long long lo, long long hi, long long *out);

/* A whole number in [0, 2^64 - 1] written in full, as seeds and positions are; 0, or -1. */
int cli_unsigned(const char *text, unsigned long long *out);

/* A finite or infinite number written in full (strtod's syntax); 0, or -1. */
int cli_number(const char *text, double *out);

/* --timeout: whole seconds in [1, 1000000], as milliseconds; 0, or 2 after the usage error. */
int cli_timeout(const cli_command *cmd, const char *text, int *ms);

/* --format: one of the NULL-ended `formats`; its index, or -1 after the usage error. */
int cli_format(const cli_command *cmd, const char *text, const char *const *formats);

#endif /* SIEVE_CLI_OPTIONS_H */
