/* Child processes speaking protocol v1 under time limits; see proc.h. */
#define _GNU_SOURCE
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The process groups of the running children, so that a signal which ends sieve ends them
 * too (each child leads its own group, out of reach of the terminal's Ctrl-C). It is global
 * because a signal handler has no other way to find them. Slots are
 * claimed and released with compare-and-swap; the handler only loads them and calls kill(). */
#define LIVE_GROUPS 1024
static _Atomic pid_t live_groups[LIVE_GROUPS];

/* Moves one slot from `from` to `to`: claims a free slot (from 0) or releases one (to 0). With
 * every slot taken the group goes untracked and only gets end-of-file on its stdin. */
static void swap_group(pid_t from, pid_t to) {
  for (size_t i = 0; i < LIVE_GROUPS; i++) {
    pid_t expected = from;
    if (atomic_compare_exchange_strong(&live_groups[i], &expected, to))
      return;
  }
}

static void kill_children_and_die(int sig) {
  for (size_t i = 0; i < LIVE_GROUPS; i++) {
    pid_t group = atomic_load(&live_groups[i]);
    if (group > 0)
      kill(-group, SIGKILL);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

void proc_kill_children_on_signals(void) {
  struct sigaction sa = {.sa_handler = kill_children_and_die};
  sigemptyset(&sa.sa_mask);
  const int signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  for (size_t i = 0; i < sizeof signals / sizeof *signals; i++)
    sigaction(signals[i], &sa, NULL);
}

static long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int temp_stderr(void) {
  char path[] = "/tmp/sieve-impl-stderr-XXXXXX";
  int fd = mkstemp(path);
  if (fd >= 0)
    unlink(path);
  return fd;
}

static void exec_child(int in_fd, int out_fd, int err_fd, char **argv) {
  setpgid(0, 0);
  signal(SIGPIPE, SIG_DFL);
  dup2(in_fd, STDIN_FILENO);
  dup2(out_fd, STDOUT_FILENO);
  if (err_fd >= 0)
    dup2(err_fd, STDERR_FILENO);
  execvp(argv[0], argv);
  fprintf(stderr, "sieve: cannot run %s: %s\n", argv[0], strerror(errno));
  _exit(127);
}

proc_status proc_start(proc *p, char **argv, int timeout_ms) {
  int in[2], out[2];
  *p = (proc){.argv = argv,
              .pid = -1,
              .to_child = -1,
              .from_child = -1,
              .err_fd = -1,
              .timeout_ms = timeout_ms};
  if (pipe2(in, O_CLOEXEC) != 0)
    return PROC_NOSTART;
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]);
    close(in[1]);
    return PROC_NOSTART;
  }
  p->err_fd = temp_stderr();
  p->pid = fork();
  if (p->pid == 0)
    exec_child(in[0], out[1], p->err_fd, argv);
  if (p->pid > 0) {
    setpgid(p->pid, p->pid); /* also here, so the group exists before it is tracked */
    swap_group(0, p->pid);
  }
  close(in[0]);
  close(out[1]);
  p->to_child = in[1];
  p->from_child = out[0];
  fcntl(p->to_child, F_SETFL, O_NONBLOCK);
  fcntl(p->from_child, F_SETFL, O_NONBLOCK);
  if (p->pid < 0) {
    proc_stop(p, NULL, 0);
    return PROC_NOSTART;
  }
  return PROC_OK;
}

/* A complete line already in the buffer: its length, or -1. */
static long buffered_line(const proc *p) {
  const char *nl = p->len ? memchr(p->buf, '\n', p->len) : NULL;
  return nl ? nl - p->buf : -1;
}

static int read_some(proc *p) {
  if (p->cap - p->len < 65536) {
    size_t cap = p->cap ? p->cap * 2 : 1 << 16;
    char *buf = realloc(p->buf, cap);
    if (!buf)
      return -1;
    p->buf = buf;
    p->cap = cap;
  }
  ssize_t n = read(p->from_child, p->buf + p->len, p->cap - p->len - 1);
  if (n > 0)
    p->len += (size_t)n;
  return n > 0 ? 1 : (n < 0 && errno == EAGAIN) ? 0 : -1;
}

/* Moves the first line out of the buffer: malloc'd, or NULL when out of memory. */
static char *take_line(proc *p, long n) {
  char *line = malloc((size_t)n + 1);
  if (!line)
    return NULL;
  memcpy(line, p->buf, (size_t)n);
  line[n] = '\0';
  memmove(p->buf, p->buf + n + 1, p->len - (size_t)n - 1);
  p->len -= (size_t)n + 1;
  return line;
}

/* Sends `request` (one line, without its newline) and waits for one answer line; on PROC_OK
 * *line is it, malloc'd. */
static proc_status exchange(proc *p, const char *request, size_t len, char **line) {
  if (p->pid < 0)
    return PROC_EXITED;
  long deadline = now_ms() + p->timeout_ms;
  size_t sent = 0;
  int newline_sent = 0;
  long n;
  while ((n = buffered_line(p)) < 0) {
    if (p->len > PROC_MAX_LINE)
      return PROC_TOO_LONG;
    long left = deadline - now_ms();
    if (left <= 0)
      return PROC_TIMEOUT;
    struct pollfd fds[2] = {{p->from_child, POLLIN, 0}, {p->to_child, POLLOUT, 0}};
    int writing = !newline_sent && p->to_child >= 0;
    if (poll(fds, writing ? 2 : 1, (int)left) < 0 && errno != EINTR)
      return PROC_EXITED;
    if (writing && (fds[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const char *data = sent < len ? request + sent : "\n";
      ssize_t w = write(p->to_child, data, sent < len ? len - sent : 1);
      if (w < 0 && errno != EAGAIN)
        return PROC_EXITED;
      if (w > 0 && sent < len)
        sent += (size_t)w;
      else if (w > 0)
        newline_sent = 1;
    }
    if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) && read_some(p) < 0)
      return buffered_line(p) >= 0 ? PROC_OK : PROC_EXITED;
  }
  *line = take_line(p, n);
  return *line ? PROC_OK : PROC_TOO_LONG;
}

static void describe_exit(int status, char *how, size_t how_len) {
  if (WIFSIGNALED(status))
    snprintf(how, how_len, "killed by signal %d (%s)", WTERMSIG(status),
             strsignal(WTERMSIG(status)));
  else if (WIFEXITED(status))
    snprintf(how, how_len, "exited with status %d", WEXITSTATUS(status));
  else
    snprintf(how, how_len, "ended");
}

void proc_stop(proc *p, char *how, size_t how_len) {
  if (p->to_child >= 0)
    close(p->to_child);
  if (p->from_child >= 0)
    close(p->from_child);
  if (p->pid > 0) {
    int status = 0;
    /* A child that is ending already (its output closed, its input now too) gets 100 ms to
     * do so, so that the report says how it ended rather than that it was killed. */
    pid_t ended = 0;
    for (int waited = 0; (ended = waitpid(p->pid, &status, WNOHANG)) == 0 && waited < 20; waited++)
      nanosleep(&(struct timespec){0, 5000000}, NULL);
    if (ended == 0) {
      kill(-p->pid, SIGKILL);
      kill(p->pid, SIGKILL);
      waitpid(p->pid, &status, 0);
      if (how)
        snprintf(how, how_len, "still running; killed");
    } else if (how) {
      describe_exit(status, how, how_len);
    }
    swap_group(p->pid, 0);
  }
  if (p->err_fd >= 0)
    close(p->err_fd);
  free(p->buf);
  p->buf = NULL;
  p->len = p->cap = 0;
  p->pid = -1;
  p->to_child = p->from_child = p->err_fd = -1;
}

/* Appends "; its stderr: TAIL" to `detail`, cutting the tail's start, never its end: the last
 * line of a crash (the exception) is what explains it. */
static void append_stderr(char *detail, size_t detail_len, const char *tail) {
  static const char label[] = "; its stderr: ";
  size_t used = strlen(detail), n = strlen(tail);
  if (!n || used + sizeof label >= detail_len)
    return;
  size_t room = detail_len - used - sizeof label;
  snprintf(detail + used, detail_len - used, "%s%s%s", label, n > room ? "..." : "",
           n > room ? tail + n - (room > 3 ? room - 3 : 0) : tail);
}

/* Ends the child and starts it again, adding to `detail` how it ended (after `status`, what went
 * wrong, when it is not a plain answer that was wrong) and the tail of its stderr. */
static void restart(proc *p, proc_status status, char *detail, size_t detail_len) {
  char tail[1024], how[96] = "";
  proc_stderr_tail(p, tail, sizeof tail);
  if (status == PROC_TIMEOUT)
    snprintf(detail, detail_len, "no answer within %d s", p->timeout_ms / 1000);
  char **argv = p->argv;
  int timeout_ms = p->timeout_ms;
  proc_stop(p, how, sizeof how);
  if (status != PROC_OK && status != PROC_TIMEOUT)
    snprintf(detail, detail_len, "the implementation %s (%s)", proc_status_name(status), how);
  append_stderr(detail, detail_len, tail);
  proc_start(p, argv, timeout_ms);
}

char *proc_ask_line(proc *p, const char *request, size_t len, char *detail, size_t detail_len) {
  char *line = NULL;
  proc_status st = p->pid > 0 ? exchange(p, request, len, &line) : PROC_NOSTART;
  if (st == PROC_OK)
    return line;
  restart(p, st, detail, detail_len);
  return NULL;
}

cJSON *proc_parse_answer(const char *line, char *detail, size_t detail_len) {
  cJSON *answer = cJSON_Parse(line);
  if (answer && cJSON_IsObject(answer))
    return answer;
  cJSON_Delete(answer);
  snprintf(detail, detail_len, "the answer is not a JSON object: %.80s", line);
  return NULL;
}

void proc_restart(proc *p, char *detail, size_t detail_len) {
  restart(p, PROC_OK, detail, detail_len);
}

cJSON *proc_ask(proc *p, const char *request, size_t len, char *detail, size_t detail_len) {
  char *line = proc_ask_line(p, request, len, detail, detail_len);
  cJSON *answer = line ? proc_parse_answer(line, detail, detail_len) : NULL;
  if (line && !answer)
    proc_restart(p, detail, detail_len);
  free(line);
  return answer;
}

void proc_stderr_tail(const proc *p, char *out, size_t max) {
  out[0] = '\0';
  if (p->err_fd < 0 || max < 2)
    return;
  off_t end = lseek(p->err_fd, 0, SEEK_END);
  off_t start = end > (off_t)(max - 1) ? end - (off_t)(max - 1) : 0;
  ssize_t n = pread(p->err_fd, out, max - 1, start);
  out[n > 0 ? n : 0] = '\0';
  for (char *c = out; *c; c++)
    if (*c == '\n' || *c == '\r')
      *c = ' ';
}

const char *proc_status_name(proc_status s) {
  switch (s) {
  case PROC_OK:
    return "ok";
  case PROC_TIMEOUT:
    return "timeout";
  case PROC_EXITED:
    return "ended before answering";
  case PROC_TOO_LONG:
    return "answer too long";
  default:
    return "could not start";
  }
}
