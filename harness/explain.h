/* `sieve explain`: see explain.c. */
#ifndef SIEVE_EXPLAIN_H
#define SIEVE_EXPLAIN_H

/* argv holds the arguments after "explain". Returns the exit status. */
int sieve_explain_main(int argc, char **argv);

/* The usage text of `sieve explain`. */
extern const char sieve_explain_usage[];

#endif /* SIEVE_EXPLAIN_H */
