/* The one option parser of the subcommands; see options.h. */
#define _GNU_SOURCE
#include "options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/request.h"

int cli_usage_error(const cli_command *cmd, const char *why, const char *what) {
  fprintf(stderr, "sieve %s: %s%s%s%s\n%s", cmd->name, why, what ? " '" : "", what ? what : "",
          what ? "'" : "", cmd->usage);
  return 2;
}

static const cli_option *find(const cli_option *options, size_t n, const char *name, size_t len) {
  for (size_t i = 0; i < n; i++)
    if (strlen(options[i].name) == len && strncmp(options[i].name, name, len) == 0)
      return &options[i];
  return NULL;
}

/* Appends `value` to a list, or with `split` its comma-separated names; -1 when it is full. */
static int append(cli_list *list, char *value, int split) {
  for (char *save = NULL, *name = split ? strtok_r(value, ",", &save) : value; name;
       name = split ? strtok_r(NULL, ",", &save) : NULL) {
    if (list->n == CLI_LIST_MAX)
      return -1;
    list->items[list->n++] = name;
    list->items[list->n] = NULL;
  }
  return 0;
}

/* One option of argv[*i] (its value inline after '=' or the next argument); 0, or 2. `given`
 * has a bit for each option already given, so that a value given twice is a usage error. */
static int take(const cli_command *cmd, const cli_option *options, size_t n_options, int argc,
                char **argv, int *i, unsigned long long *given) {
  char *arg = argv[*i], *eq = strchr(arg, '=');
  const cli_option *o = find(options, n_options, arg, eq ? (size_t)(eq - arg) : strlen(arg));
  if (!o)
    return cli_usage_error(cmd, "unknown option", arg);
  if (o->kind == CLI_FLAG) {
    if (eq)
      return cli_usage_error(cmd, "takes no value:", arg);
    *(int *)o->slot = 1;
    return 0;
  }
  char *value = eq ? eq + 1 : *i + 1 < argc ? argv[++*i] : NULL;
  if (!value)
    return cli_usage_error(cmd, "an option lacks its value:", arg);
  if (o->kind == CLI_VALUE && (*given >> (o - options) & 1))
    return cli_usage_error(cmd, "an option given twice:", o->name);
  *given |= 1ULL << (o - options);
  if (o->kind == CLI_VALUE)
    *(const char **)o->slot = value;
  else if (append(o->slot, value, o->kind == CLI_LIST) != 0) {
    char why[64];
    snprintf(why, sizeof why, "more than %d names given to", CLI_LIST_MAX);
    return cli_usage_error(cmd, why, o->name);
  }
  return 0;
}

int cli_parse(const cli_command *cmd, const cli_option *options, size_t n_options, int argc,
              char **argv, const char **args, size_t max_args, size_t *n_args) {
  size_t n = 0;
  unsigned long long given = 0;
  for (int i = 0; i < argc; i++) {
    int rc = 0;
    if (strncmp(argv[i], "--", 2) == 0)
      rc = take(cmd, options, n_options, argc, argv, &i, &given);
    else if (n < max_args && argv[i][0] != '-')
      args[n++] = argv[i];
    else
      rc = cli_usage_error(cmd, "unexpected argument", argv[i]);
    if (rc != 0)
      return rc;
  }
  if (n_args)
    *n_args = n;
  return 0;
}

int cli_integer(const char *text, long long lo, long long hi, long long *out) {
  char *end;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (!*text || *end || errno || v < lo || v > hi)
    return -1;
  *out = v;
  return 0;
}

int cli_unsigned(const char *text, unsigned long long *out) {
  uint64_t v;
  if (req_decimal(text, &v) != 0)
    return -1;
  *out = v;
  return 0;
}

int cli_number(const char *text, double *out) {
  char *end;
  double v = strtod(text, &end);
  if (!*text || *end)
    return -1;
  *out = v;
  return 0;
}

int cli_timeout(const cli_command *cmd, const char *text, int *ms) {
  long long seconds;
  if (cli_integer(text, 1, 1000000, &seconds) != 0)
    return cli_usage_error(cmd, "--timeout is whole seconds in [1, 1000000], not", text);
  *ms = (int)seconds * 1000;
  return 0;
}

int cli_format(const cli_command *cmd, const char *text, const char *const *formats) {
  char known[128] = "";
  for (int i = 0; formats[i]; i++) {
    if (strcmp(formats[i], text) == 0)
      return i;
    snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? "|" : "", formats[i]);
  }
  char why[160];
  snprintf(why, sizeof why, "--format is %s, not", known);
  cli_usage_error(cmd, why, text);
  return -1;
}
