/* `sieve case ID [--request]`: see case.c. */
#ifndef SIEVE_CASE_H
#define SIEVE_CASE_H

/* The usage text of `sieve case`. */
extern const char sieve_case_usage[];

/* argv holds the arguments after "case". Returns the exit status. */
int sieve_case_main(int argc, char **argv);

#endif /* SIEVE_CASE_H */
