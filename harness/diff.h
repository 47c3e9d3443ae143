/* `sieve diff`: see diff.c. */
#ifndef SIEVE_DIFF_H
#define SIEVE_DIFF_H

/* argv holds the arguments after "diff". Returns 0 (no difference), 1 or 2. */
int sieve_diff_main(int argc, char **argv);

/* The usage text of `sieve diff`. */
extern const char sieve_diff_usage[];

#endif /* SIEVE_DIFF_H */
