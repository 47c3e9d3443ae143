/* `sieve fingerprint`: see fingerprint.c. */
#ifndef SIEVE_FINGERPRINT_H
#define SIEVE_FINGERPRINT_H

/* Whether the fingerprint has a probe for an axis of sieve_rule (every axis must). */
int sieve_fingerprint_has_probe(int axis);

/* argv holds the arguments after "fingerprint". Returns the exit status: 0 done, 1 the
 * implementation differs from --profile on an axis, 2 a usage error or no answer to hello. */
int sieve_fingerprint_main(int argc, char **argv);

/* The usage text of `sieve fingerprint`. */
extern const char sieve_fingerprint_usage[];

#endif /* SIEVE_FINGERPRINT_H */
