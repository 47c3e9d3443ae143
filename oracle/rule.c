/*
 * The axes of sieve_rule as data (oracle/sieve.h, SIEVE_AXES): names, what
 * each value means, and access by number. Every table here is generated from
 * the header's lists, so an axis or a value is added in one place.
 * Invariant: value 0 of every axis is DeepInfer's, so the all-zero rule is the spec.
 */
#include <stddef.h>
#include <string.h>

#include "internal.h"

typedef struct axis_value {
  const char *name;
  const char *what;
} axis_value;

typedef struct axis_entry {
  const char *name;
  const char *what;
  size_t offset; /* of the field in sieve_rule */
  const axis_value *values;
  int count;
} axis_entry;

#define VALUE_ENTRY(axis, value, name, what) {name, what},
#define VALUE_TABLE(AXIS, field, what)                                                             \
  static const axis_value field##_values[] = {SIEVE_##AXIS##_VALUES(VALUE_ENTRY)};
SIEVE_AXES(VALUE_TABLE)
#undef VALUE_TABLE

#define AXIS_ENTRY(AXIS, field, what)                                                              \
  {#field, what, offsetof(sieve_rule, field), field##_values, SIEVE_##AXIS##_COUNT},
static const axis_entry axes[SIEVE_AXIS_COUNT] = {SIEVE_AXES(AXIS_ENTRY)};
_Static_assert(SIEVE_AXIS_COUNT <= 32, "sieve_rule.consulted has a bit per axis");
#undef AXIS_ENTRY

static const axis_entry *axis_at(int axis) {
  return axis >= 0 && axis < SIEVE_AXIS_COUNT ? &axes[axis] : NULL;
}

static const axis_value *value_at(int axis, int value) {
  const axis_entry *a = axis_at(axis);
  return a && value >= 0 && value < a->count ? &a->values[value] : NULL;
}

const char *sieve_axis_name(int axis) { return axis_at(axis) ? axes[axis].name : NULL; }

const char *sieve_axis_what(int axis) { return axis_at(axis) ? axes[axis].what : NULL; }

int sieve_axis_values(int axis) { return axis_at(axis) ? axes[axis].count : SIEVE_ERULE; }

const char *sieve_axis_value_name(int axis, int value) {
  const axis_value *v = value_at(axis, value);
  return v ? v->name : NULL;
}

const char *sieve_axis_value_what(int axis, int value) {
  const axis_value *v = value_at(axis, value);
  return v ? v->what : NULL;
}

int sieve_axis_find(const char *name) {
  for (int a = 0; name && a < SIEVE_AXIS_COUNT; a++)
    if (strcmp(axes[a].name, name) == 0)
      return a;
  return SIEVE_ERULE;
}

int sieve_axis_value_find(int axis, const char *name) {
  const axis_entry *a = axis_at(axis);
  for (int v = 0; a && name && v < a->count; v++)
    if (strcmp(a->values[v].name, name) == 0)
      return v;
  return SIEVE_ERULE;
}

int sieve_rule_get(const sieve_rule *rule, int axis) {
  if (!rule || !axis_at(axis))
    return SIEVE_ERULE;
  int value;
  memcpy(&value, (const char *)rule + axes[axis].offset, sizeof value);
  return value;
}

int sieve_rule_set(sieve_rule *rule, int axis, int value) {
  if (!rule || !value_at(axis, value))
    return SIEVE_ERULE;
  memcpy((char *)rule + axes[axis].offset, &value, sizeof value);
  return 0;
}

int sieve__check_rule(const sieve_rule *rule) {
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
    if (!value_at(a, sieve_rule_get(rule, a)))
      return SIEVE_ERULE;
  return 0;
}
