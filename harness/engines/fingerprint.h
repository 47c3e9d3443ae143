/* The fingerprint of an implementation: the choice it makes on each axis of sieve_rule, found by
 * one probe per axis (probes.c), and the profiles making the same ones (fingerprint.c). */
#ifndef SIEVE_FINGERPRINT_H
#define SIEVE_FINGERPRINT_H

#include "profiles.h"
#include "protocol/conn.h"

typedef struct fingerprint_request {
  const char *impl;              /* as the user wrote it, for the report */
  const impl_target *target;     /* what runs it */
  const engine_profile *against; /* --profile: the profile to hold it to, or NULL */
  int json;                      /* the report as JSON instead of text */
  int timeout_ms;                /* per request */
} fingerprint_request;

/* Whether the fingerprint has a probe for an axis of sieve_rule (every axis must). */
int sieve_fingerprint_has_probe(int axis);

/* Probes the implementation and prints the report on stdout. Returns the exit status: 0 done,
 * 1 it differs from `against` on an axis (or leaves axes unanswered), 2 no answer to hello. */
int sieve_fingerprint(const fingerprint_request *rq);

#endif /* SIEVE_FINGERPRINT_H */
