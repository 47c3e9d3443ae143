/*
 * The sieve command line: one table of subcommands (options.h), each in a file of its own in
 * this folder. Exit status: 0 success; 1 failures (run, diff), a difference from --profile
 * (fingerprint) or an output error (serve); 2 a usage error.
 */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <string.h>

#include "options.h"
#include "protocol/proc.h"
#include "sieve.h"

static const cli_command *const commands[] = {&cli_serve, &cli_run,      &cli_fingerprint,
                                              &cli_diff,  &cli_explain,  &cli_fuzz,
                                              &cli_case,  &cli_profiles, &cli_axes};
#define N_COMMANDS (sizeof commands / sizeof commands[0])
#define SUMMARY_COLUMN 54

static void usage(FILE *out) {
  for (size_t i = 0; i < N_COMMANDS; i++) {
    int width = fprintf(out, "%s sieve %s %s", i ? "      " : "usage:", commands[i]->name,
                        commands[i]->synopsis);
    if (width >= SUMMARY_COLUMN - 1) {
      fputc('\n', out);
      width = 0;
    }
    fprintf(out, "%*s%s\n", SUMMARY_COLUMN - width, "", commands[i]->summary);
  }
  fprintf(out, "       sieve --version\n"
               "       sieve --help\n"
               "IMPL: exec:COMMAND, lib:PATH.so, profile:NAME or rule:AXIS=VALUE,...\n"
               "Each subcommand's options and exit status: sieve SUBCOMMAND --help.\n");
}

static const cli_command *command_named(const char *name) {
  for (size_t i = 0; i < N_COMMANDS; i++)
    if (strcmp(commands[i]->name, name) == 0)
      return commands[i];
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
    if (argc < 2)
      fprintf(stderr, "sieve: no subcommand given\n");
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("sieve %s\n", SIEVE_VERSION);
    return 0;
  }
  const cli_command *cmd = command_named(argv[1]);
  if (!cmd) {
    fprintf(stderr, "sieve: unknown subcommand '%s'\n", argv[1]);
    usage(stderr);
    return 2;
  }
  if (argc == 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
    fputs(cmd->usage, stdout);
    return 0;
  }
  proc_kill_children_on_signals();
#ifdef __GLIBC__
  /* Rows of 262,144 logits come and go hundreds of times in a run (the fit answers each case
   * under several rules): kept in the heap instead of mapped and unmapped each time, they cost
   * no page faults (oracle/PERFORMANCE.md). */
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
  /* An implementation that exits early closes the pipe we write to: a write error to report,
   * never a death by SIGPIPE, in every subcommand. */
  signal(SIGPIPE, SIG_IGN);
  return cmd->main(cmd, argc - 2, argv + 2);
}
