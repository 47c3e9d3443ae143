/*
 * An implementation under test as a child process speaking protocol v1:
 * one request line in, one answer line out, under a time limit. The child
 * is untrusted: it may crash, hang, print anything or exit; each is a
 * status here, and the process can be killed and started again.
 */
#ifndef SIEVE_PROC_H
#define SIEVE_PROC_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <sys/types.h>

/* The longest answer line read; a longer one is an error of the implementation. */
#define PROC_MAX_LINE ((size_t)512 << 20)

typedef enum proc_status {
  PROC_OK = 0,
  PROC_TIMEOUT,  /* no full answer line within the time limit */
  PROC_EXITED,   /* closed its output or exited before answering */
  PROC_TOO_LONG, /* the answer line exceeded PROC_MAX_LINE */
  PROC_NOSTART   /* could not be started */
} proc_status;

typedef struct proc {
  char **argv;
  pid_t pid;
  int to_child, from_child, err_fd;
  char *buf; /* bytes read and not yet returned */
  size_t len, cap;
  int timeout_ms;
} proc;

/* Makes SIGINT, SIGTERM, SIGHUP and SIGQUIT kill the process groups of every running child
 * before sieve ends by that signal; call once, early in main. */
void proc_kill_children_on_signals(void);

/* Starts argv[0] with argv; stderr goes to a private temporary file. */
proc_status proc_start(proc *p, char **argv, int timeout_ms);

/*
 * One request for one answer line: the line (malloc'd, the caller's to free), or NULL when the
 * child crashed, hung or exited. Then `detail` says which (naming how it ended and the tail of
 * its stderr) and the child has been started again, so the next request gets a fresh one.
 */
char *proc_ask_line(proc *p, const char *request, size_t len, char *detail, size_t detail_len);

/* An answer line as a JSON object, or NULL with `detail` saying that it is not one. */
cJSON *proc_parse_answer(const char *line, char *detail, size_t detail_len);

/* Ends the child and starts it again, after an answer that was not one: a child that wrote
 * something else may be out of step with its requests. Adds its stderr's tail to `detail`. */
void proc_restart(proc *p, char *detail, size_t detail_len);

/* proc_ask_line and proc_parse_answer, restarting the child when the line is not an answer. */
cJSON *proc_ask(proc *p, const char *request, size_t len, char *detail, size_t detail_len);

/* Kills the process group if still running and reaps it; writes how it ended into `how`. */
void proc_stop(proc *p, char *how, size_t how_len);

/* The last `max` bytes the child wrote to stderr, for reports ("" if none). */
void proc_stderr_tail(const proc *p, char *out, size_t max);

const char *proc_status_name(proc_status s);

#endif /* SIEVE_PROC_H */
