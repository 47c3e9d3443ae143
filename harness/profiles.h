/*
 * Engine profiles: named presets of the axes of sieve_rule (oracle/sieve.h),
 * one per engine, each choice with the source it was read from
 * (oracle/ENGINES.md). `sieve serve --profile NAME` answers with one.
 */
#ifndef SIEVE_PROFILES_H
#define SIEVE_PROFILES_H

#include "../oracle/sieve.h"

#define PROFILE_AXES 8

typedef struct profile_choice {
  const char *source; /* repository, file and function, or seed line, that shows the choice */
  int confirmed;      /* 0: not confirmed from the source; the value is the oracle's default */
} profile_choice;

typedef struct engine_profile {
  const char *name;
  const char *engine; /* what it describes */
  sieve_rule rule;
  profile_choice why[PROFILE_AXES]; /* in the order of axis_names */
} engine_profile;

/* The axes in sieve_rule order, and the names of each axis's values. */
extern const char *const axis_names[PROFILE_AXES];
const char *axis_value_name(int axis, int value);
int axis_value_count(int axis);
int rule_axis(const sieve_rule *rule, int axis);

/* The profile called `name`, or NULL. */
const engine_profile *profile_find(const char *name);
/* All profiles, NULL-terminated by name. */
extern const engine_profile profiles[];

#endif /* SIEVE_PROFILES_H */
