/*
 * Engine profiles: named presets of the axes of sieve_rule (oracle/sieve.h,
 * SIEVE_AXES), one per engine, each choice with the source it was read or run
 * from (oracle/ENGINES.md). `sieve serve --profile NAME` answers with one.
 */
#ifndef SIEVE_PROFILES_H
#define SIEVE_PROFILES_H

#include "run/fit.h"
#include "sieve.h"

typedef struct profile_choice {
  const char *source; /* repository, file, function and commit, or seed line, that shows it */
  int confirmed;      /* 0: not confirmed from the engine's code; `source` says why */
} profile_choice;

typedef struct engine_profile {
  const char *name;
  const char *engine; /* what it describes */
  sieve_rule rule;
  profile_choice why[SIEVE_AXIS_COUNT]; /* indexed by SIEVE_AXIS_* */
  /* The sampling options `sieve serve --profile` takes, as a library lists them
   * (protocol/sieve_impl.h): those the engine offers (harness/engines/PENALTIES.md) whose every
   * axis the profile confirms (the order, the tokens counted, the range, the overflow, and
   * min-p's scale, order and boundary), so that no answer of ours to a request passes for the
   * engine's where its code was not read. */
  const char *sampling_options;
} engine_profile;

/* The profile called `name`, or NULL. */
const engine_profile *profile_find(const char *name);
/* All profiles, NULL-terminated by name. */
extern const engine_profile profiles[];

/* The profiles as the fit's starting points (run/fit.h), at most `max`; returns how many. */
size_t profiles_fit_starts(fit_start *out, size_t max);

/*
 * Parses "axis=value,axis=value" onto `rule` (which keeps its other axes). Returns 0, or -1
 * with a message naming the unknown axis or value.
 */
int profile_parse_rule(const char *text, sieve_rule *rule, char *err, size_t len);

#endif /* SIEVE_PROFILES_H */
