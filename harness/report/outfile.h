/*
 * Output files written whole or not at all: the text goes to a temporary file
 * beside the destination, which is renamed over it only when every write
 * succeeded. A reader never sees a half-written report or chart. A destination
 * that exists and is not a regular file (/dev/null, /dev/stdout, a FIFO) is
 * written in place: renaming over it would replace the device with a file. A
 * symbolic link is followed, so the file it names is the one replaced.
 */
#ifndef SIEVE_OUTFILE_H
#define SIEVE_OUTFILE_H

#include <limits.h>
#include <stdio.h>

typedef struct outfile {
  char tmp[PATH_MAX + 16];
  char path[PATH_MAX];
  FILE *f;
  int in_place; /* not a regular file: written directly, nothing to rename */
} outfile;

/* The open temporary file, with the mode fopen would give (0666 less the umask); NULL on error. */
FILE *outfile_open(outfile *o, const char *path);

/* Whether outfile_open(path) can succeed, checked without creating anything, so that a run
 * can refuse a destination before it starts; 0, or -1 with the reason in `why`. */
int outfile_check(const char *path, char *why, size_t why_len);

/* Closes the temporary file and, when `ok` and every write succeeded, renames it over the
 * destination; otherwise removes it. 0, or -1 when the destination was not written. */
int outfile_commit(outfile *o, int ok);

#endif /* SIEVE_OUTFILE_H */
