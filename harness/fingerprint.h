/* `sieve fingerprint` and `sieve profiles`: see fingerprint.c. */
#ifndef SIEVE_FINGERPRINT_H
#define SIEVE_FINGERPRINT_H

/* The requests of the probes that tell each axis apart (filter and validate ones). */
typedef struct probe_request {
  const char *axis;
  const char *request;
} probe_request;
extern const probe_request fingerprint_requests[];

/* argv holds the arguments after "fingerprint". Returns the exit status. */
int sieve_fingerprint_main(int argc, char **argv);

#endif /* SIEVE_FINGERPRINT_H */
