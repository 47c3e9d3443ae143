/*
 * The fit: the rule an implementation follows. Every axis value of oracle/sieve.h has an oracle
 * variant, so the oracle answers each case under any combination of them, in this process.
 * The fit searches the combinations for the one whose answers agree with the implementation's
 * on the most cases, then says, axis by axis, which cases decide each value, which failures
 * the rule explains and what is left (fixtures/README.md, "Diagnosis").
 */
#ifndef SIEVE_FIT_H
#define SIEVE_FIT_H

#include <stddef.h>
#include <stdint.h>

#include "sieve.h"

/* A rule the search starts from and the report measures the fit against: a profile. */
typedef struct fit_start {
  const char *name;
  sieve_rule rule;
  uint32_t unconfirmed; /* bit `axis`: a value the profile could not confirm, no difference */
} fit_start;

#define FIT_GROUPS_MAX 12
#define FIT_NEAREST_MAX 8
#define FIT_DECIDING 4        /* the cases named as deciding an axis */
#define FIT_MISREADINGS_MAX 3 /* readings no engine chooses that the fit may add */

typedef struct fit_axis {
  int value;             /* the fitted value; -1 when no case separates the candidates, or when */
  int unfit;             /* no value fits: unexplained failures turn on it (nearest: `nearest`) */
  int nearest;           /* the value the search kept where none fits */
  char unfit_cases[200]; /* the first of those failures, comma-separated */
  int elsewhere;         /* unfit, while other unexplained failures turn on no axis: the cause */
                         /* may be a departure sieve has no value for, not this axis */
  char alternative[48];  /* a reading that explains as much with DeepInfer's value: undetermined */
  uint32_t candidates;   /* bit v: value v explains as many cases as the fitted one */
  int from_hello;        /* set outside the cases: the draw by hello ("rng": "own"), */
                         /* param_precision by the validate answers the fingerprint read */
  size_t n_deciding;     /* cases found that the fitted value explains and another does not, */
  char deciding[200];    /* at most FIT_DECIDING, and their ids, comma-separated */
  int split;             /* one of them is lost at a value that explains as many: each value */
                         /* leaves a case another explains */
  char masked[200];      /* none decides it, and these weighed cases separate its values under */
                         /* DeepInfer's other values: the rest of the fit hides them */
  uint32_t probed;       /* bit v: the fit with this axis at v explains every case whose */
} fit_axis;              /* probed_axes name it (the fingerprint's joint reading) */

/* Failures the fitted rule does not explain that share what differs and the parameters. */
typedef struct fit_group {
  char kind[184];        /* what the group's failures share: the op and what differs */
  char description[300]; /* the kind, with the parameters every one of them has */
  size_t count;
  char cases[300]; /* the first ids, comma-separated */
} fit_group;

typedef struct fit_nearest {
  const char *name;
  sieve_rule rule;
  int distance;     /* determined axes on which the profile differs from the fit */
  uint32_t differs; /* those axes, bit `axis` (a value it could not confirm is no difference) */
  uint32_t unconfirmed; /* the determined axes whose value the profile could not confirm */
} fit_nearest;

typedef struct fit_result {
  int made;        /* 0: no case answered, no fit */
  sieve_rule rule; /* the fit; undetermined axes keep DeepInfer's value */
  char misreadings[FIT_MISREADINGS_MAX * 48];  /* readings added to it, comma-separated */
  char contradicted[FIT_MISREADINGS_MAX * 48]; /* those of them an unexplained failure tells */
                                               /* apart: they give some answers, not the rule */
  fit_axis axes[SIEVE_AXIS_COUNT];
  size_t considered;              /* cases whose answer the fit weighed */
  size_t agreed;                  /* of those, the answers the fitted rule gives */
  size_t failures;                /* failed and error cases among them */
  size_t explained;               /* failures whose answer is the fitted rule's */
  size_t passes_otherwise;        /* passing cases whose answer is not the fitted rule's: */
  char passes_otherwise_ids[300]; /* evidence against it the failures outweigh; first ids */
  fit_group groups[FIT_GROUPS_MAX];
  size_t n_groups;
  size_t grouped_rest; /* unexplained failures past the last group */
  fit_nearest nearest[FIT_NEAREST_MAX];
  size_t n_nearest;
} fit_result;

/* The departures of a fitted rule from DeepInfer's, "boundary=ge + topp_ties=highest", or
 * "deepinfer"; undetermined axes are left out. */
void fit_rule_text(const fit_result *fit, char *out, size_t len);

/* An oracle answer as an expectation (fixtures/README.md, "Matchers"): its numbers within 1e-9
 * relative, or 1e-6 at float32, its strings and shape exactly, without the oracle's own extra
 * members and error messages. The fit judges by it where the fixture's has another shape. */
struct cJSON;
struct cJSON *fit_expectation(const struct cJSON *answer);

struct run_report;
struct sieve_fixtures;
/* Fits the rule of a run's answers, fills report->fit, and rewrites each failure's cause: a
 * failure the fit explains names its departures; another names a reading only when the fitted
 * rule answers that case as DeepInfer does. 0, or -1 when out of memory. */
int sieve_fit(struct run_report *report, const fit_start *starts, size_t n_starts);

#endif /* SIEVE_FIT_H */
