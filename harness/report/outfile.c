/* Whole-or-nothing output files; see outfile.h. */
#define _DEFAULT_SOURCE
#include "outfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* mkstemp creates 0600; a report is as readable as any file the user's umask allows. The CLI
 * is single-threaded here, so reading the umask by setting it back at once is safe. */
static mode_t plain_mode(void) {
  mode_t mask = umask(0);
  umask(mask);
  return (mode_t)(0666 & ~mask);
}

FILE *outfile_open(outfile *o, const char *path) {
  struct stat st;
  o->f = NULL;
  o->in_place = stat(path, &st) == 0 && !S_ISREG(st.st_mode);
  if (o->in_place)
    return o->f = fopen(path, "w");
  if (!realpath(path, o->path) && snprintf(o->path, sizeof o->path, "%s", path) >= PATH_MAX)
    return NULL;
  snprintf(o->tmp, sizeof o->tmp, "%s.XXXXXX", o->path);
  int fd = mkstemp(o->tmp);
  if (fd < 0)
    return NULL;
  if (fchmod(fd, plain_mode()) != 0 || !(o->f = fdopen(fd, "w"))) {
    close(fd);
    unlink(o->tmp);
  }
  return o->f;
}

int outfile_check(const char *path, char *why, size_t why_len) {
  struct stat st;
  char real[PATH_MAX];
  int exists = stat(path, &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) {
    snprintf(why, why_len, "it is a directory");
    return -1;
  }
  if (exists && !S_ISREG(st.st_mode)) { /* written in place */
    if (access(path, W_OK) == 0)
      return 0;
    snprintf(why, why_len, "%s", strerror(errno));
    return -1;
  }
  if (!realpath(path, real) && snprintf(real, sizeof real, "%s", path) >= PATH_MAX) {
    snprintf(why, why_len, "the path is too long");
    return -1;
  }
  char *slash = strrchr(real, '/');
  const char *dir = !slash ? "." : slash == real ? "/" : real;
  if (slash && slash != real)
    *slash = '\0';
  if (access(dir, W_OK | X_OK) == 0)
    return 0;
  snprintf(why, why_len, "%s: %s", dir, strerror(errno));
  return -1;
}

int outfile_commit(outfile *o, int ok) {
  if (!o->f)
    return -1;
  if (o->in_place) {
    ok = fclose(o->f) == 0 && ok;
    o->f = NULL;
    return ok ? 0 : -1;
  }
  ok = fflush(o->f) == 0 && fsync(fileno(o->f)) == 0 && ok;
  ok = fclose(o->f) == 0 && ok;
  o->f = NULL;
  if (ok && rename(o->tmp, o->path) == 0)
    return 0;
  unlink(o->tmp);
  return -1;
}
