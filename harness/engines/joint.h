/*
 * The joint reading of `sieve fingerprint` (joint.c): the fit of the rule the probes' filter
 * rows follow, and through it each axis's verdict read under the values found on the others.
 * Internal to engines/.
 */
#ifndef SIEVE_JOINT_H
#define SIEVE_JOINT_H

#include <cjson/cJSON.h>

#include "prober.h"
#include "protocol/jbuf.h"
#include "run/runner.h"

typedef struct joint_reading {
  run_report report; /* the probe rows as cases, and report.fit */
  cJSON *fixtures;   /* the cases' fixtures: each row with DeepInfer's answer as expectation */
  jbuf buf;
} joint_reading;

/* Fits the rule of the requests in pr->rows at a precision (sieve_precision); own_rng as hello
 * said. Samples and speculative steps count only `with_draws`: when the draws are the hash's, so
 * the oracle can give them. j->report.fit.axes[a].probed is then the values axis a's requests
 * fit. 0, or -1 out of memory. */
int joint_read(const prober *pr, int precision, int own_rng, int with_draws, joint_reading *j);

void joint_free(joint_reading *j);

#endif /* SIEVE_JOINT_H */
