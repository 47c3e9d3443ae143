/* `sieve run`: see run.c. */
#ifndef SIEVE_RUN_H
#define SIEVE_RUN_H

/* argv holds the arguments after "run". Returns the exit status. */
int sieve_run_main(int argc, char **argv);

#endif /* SIEVE_RUN_H */
