/*
 * The fingerprint: which choice an implementation made on each axis of sieve_rule
 * (oracle/sieve.h, SIEVE_AXES; oracle/ENGINES.md), and the profiles that make the same ones.
 * Each axis's probe (probes.c) asks its rows; the joint reading (joint.c) fits the rule all the
 * filter rows follow and reads each axis under the values found on the others. The set of
 * values an axis's answers fit: one value is a verdict, several say what the answers cannot
 * tell apart, none ("no value fits") comes with the answers that conflict. An implementation is
 * asked only the ops it offers.
 */
#define _GNU_SOURCE
#include "fingerprint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "joint.h"
#include "prober.h"
#include "profiles.h"
#include "protocol/conn.h"
#include "protocol/jbuf.h"
#include "report/render.h"
#include "run/check.h"
#include "run/fixture.h"

static int told(const prober *pr, int a) {
  return pr->status[a] == ASKED && pr->found[a] != (1u << sieve_axis_values(a)) - 1u;
}

/* Whether a profile's choice on an axis fits what was found. An axis not told fits every
 * choice, and a choice the profile could not confirm (not applicable to that engine, or read
 * but not run) contradicts nothing. */
static int fits(const prober *pr, const engine_profile *p, int a) {
  return !told(pr, a) || !p->why[a].confirmed || (pr->found[a] >> sieve_rule_get(&p->rule, a) & 1);
}

static int mismatches(const prober *pr, const engine_profile *p) {
  int n = 0;
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
    n += !fits(pr, p, a);
  return n;
}

static int unanswered(const prober *pr) {
  int n = 0;
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
    n += pr->status[a] == NO_ANSWER;
  return n;
}

/* The determined axes on which a profile's choice fits only because the profile could not
 * confirm it: a match there is no evidence. */
static int unconfirmed(const prober *pr, const engine_profile *p) {
  int n = 0;
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
    n += told(pr, a) && !p->why[a].confirmed;
  return n;
}

/* Fewest mismatches first; among those, the profile that confirms the most of its matches, so
 * a profile whose axes are mostly unconfirmed does not come first by contradicting nothing. */
static const engine_profile *nearest(const prober *pr) {
  const engine_profile *best = profiles;
  for (const engine_profile *p = profiles; p->name; p++) {
    int d = mismatches(pr, p) - mismatches(pr, best);
    if (d < 0 || (d == 0 && unconfirmed(pr, p) < unconfirmed(pr, best)))
      best = p;
  }
  return best;
}

static void print_unconfirmed(const prober *pr, const engine_profile *p) {
  if (!unconfirmed(pr, p))
    return;
  printf(" (unconfirmed in the profile:");
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
    if (told(pr, a) && !p->why[a].confirmed)
      printf(" %s", sieve_axis_name(a));
  printf(")");
}

/* "ge", "argmax|topk1", "no value fits", "not determined (op not offered)". */
static const char *found_text(const prober *pr, int a, char *out, size_t len) {
  if (pr->status[a] == NOT_OFFERED || !told(pr, a))
    return snprintf(out, len, "%s",
                    pr->status[a] == NO_ANSWER ? "not determined (no answer)"
                    : pr->status[a] == NOT_OFFERED || !pr->note[a][0]
                        ? "not determined (op not offered)"
                        : "not determined"),
           out;
  if (!pr->found[a])
    return snprintf(out, len, "no value fits"), out;
  size_t at = 0;
  out[0] = '\0';
  for (int v = 0; v < sieve_axis_values(a) && at < len; v++)
    if (pr->found[a] >> v & 1)
      at +=
          (size_t)snprintf(out + at, len - at, "%s%s", at ? "|" : "", sieve_axis_value_name(a, v));
  return out;
}

static void print_text(const prober *pr, const char *impl, const cJSON *hello,
                       const engine_profile *check, const run_report *joint) {
  char value[96];
  printf("sieve fingerprint: %s (%s)\n", impl, sieve_case_str(hello, "name"));
  if (*sieve_case_str(hello, "unavailable"))
    printf("unavailable: %s\n", sieve_case_str(hello, "unavailable"));
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
    printf("%-19s %-22s %s\n", sieve_axis_name(a), found_text(pr, a, value, sizeof value),
           pr->note[a]);
  int any_told = 0, any = 0;
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
    any_told |= told(pr, a);
  if (!any_told) {
    printf("\nno axis determined, so no profile can be matched\n");
  } else {
    printf("\nprofiles making every determined choice:");
    for (const engine_profile *p = profiles; p->name; p++)
      if (mismatches(pr, p) == 0) {
        printf(" %s", p->name), any = 1;
        print_unconfirmed(pr, p);
      }
    printf("%s\n", any ? "" : " none");
  }
  const engine_profile *near_p = check ? check : any_told && !any ? nearest(pr) : NULL;
  if (unanswered(pr))
    printf("%d axes got no answer: a match above is not a verdict on them\n", unanswered(pr));
  if (near_p) {
    printf("%s %s: ", near_p == check ? "against profile" : "nearest:", near_p->name);
    if (!any_told)
      printf("nothing to compare: no axis was determined");
    else if (!mismatches(pr, near_p))
      printf("every determined axis agrees%s", unanswered(pr) ? " (some got no answer)" : "");
    else
      printf("differs on");
    for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
      if (!fits(pr, near_p, a))
        printf(" %s (profile %s, found %s)", sieve_axis_name(a),
               sieve_axis_value_name(a, sieve_rule_get(&near_p->rule, a)),
               found_text(pr, a, value, sizeof value));
    print_unconfirmed(pr, near_p);
    printf("\n");
  }
  if (pr->crashes)
    printf("%zu requests crashed, hung or got garbage (restarted each time); the last: %s\n",
           pr->crashes, pr->last_crash);
  if (joint->fit.made) {
    printf("\nthe fit over the probes' %zu requests (the one sieve run makes over the "
           "fixtures):",
           joint->n_cases);
    fflush(stdout);
    report_diagnosis_lines(joint, stdout, 0);
  }
}

static void print_json(const prober *pr, const char *impl, const cJSON *hello,
                       const engine_profile *check, const run_report *joint) {
  char value[96];
  cJSON *out = cJSON_CreateObject(), *axes = cJSON_AddArrayToObject(out, "axes");
  cJSON_AddStringToObject(out, "impl", impl);
  cJSON_AddStringToObject(out, "name", sieve_case_str(hello, "name"));
  cJSON_AddStringToObject(out, "unavailable", sieve_case_str(hello, "unavailable"));
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++) {
    cJSON *x = cJSON_CreateObject(), *values = cJSON_CreateArray();
    cJSON_AddStringToObject(x, "axis", sieve_axis_name(a));
    cJSON_AddStringToObject(x, "verdict", found_text(pr, a, value, sizeof value));
    for (int v = 0; told(pr, a) && v < sieve_axis_values(a); v++)
      if (pr->found[a] >> v & 1)
        cJSON_AddItemToArray(values, cJSON_CreateString(sieve_axis_value_name(a, v)));
    cJSON_AddItemToObject(x, "values", values);
    cJSON_AddStringToObject(x, "evidence", pr->note[a]);
    cJSON_AddItemToArray(axes, x);
  }
  cJSON *matches = cJSON_AddArrayToObject(out, "matches");
  for (const engine_profile *p = profiles; p->name; p++)
    if (mismatches(pr, p) == 0)
      cJSON_AddItemToArray(matches, cJSON_CreateString(p->name));
  const engine_profile *against = check ? check : nearest(pr);
  cJSON_AddNumberToObject(out, "unanswered", unanswered(pr));
  cJSON *differs = cJSON_CreateArray();
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
    if (!fits(pr, against, a))
      cJSON_AddItemToArray(differs, cJSON_CreateString(sieve_axis_name(a)));
  cJSON_AddStringToObject(out, check ? "profile" : "nearest", against->name);
  cJSON_AddItemToObject(out, "differs", differs);
  cJSON *open = cJSON_AddArrayToObject(out, "unconfirmed");
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
    if (told(pr, a) && !against->why[a].confirmed)
      cJSON_AddItemToArray(open, cJSON_CreateString(sieve_axis_name(a)));
  cJSON_AddNumberToObject(out, "crashes", (double)pr->crashes);
  cJSON_AddStringToObject(out, "last_crash", pr->last_crash);
  cJSON_AddNumberToObject(out, "probe_rows", (double)joint->n_cases);
  if (joint->fit.made) {
    jbuf b = {0};
    report_diagnosis_json(&b, &joint->fit);
    cJSON *diagnosis = b.data && !b.failed ? cJSON_Parse(b.data) : NULL;
    cJSON_AddItemToObject(out, "diagnosis", diagnosis ? diagnosis : cJSON_CreateNull());
    jbuf_free(&b);
  }
  char *text = cJSON_PrintUnformatted(out);
  printf("%s\n", text ? text : "{}");
  free(text);
  cJSON_Delete(out);
}

static void probe_all(prober *pr) {
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
    pr->also[a] = ~0u;
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++) {
    size_t crashes = pr->crashes;
    pr->axis = a;
    pr->found[a] = fingerprint_probes[a](pr);
    pr->status[a] = pr->crashes > crashes ? NO_ANSWER : ASKED;
    if (pr->status[a] == NO_ANSWER)
      snprintf(pr->note[a], sizeof pr->note[a], "%.300s", pr->last_crash);
    else if (!pr->note[a][0])
      pr->status[a] = NOT_OFFERED;
    fprintf(stderr, "sieve fingerprint: %s probed (%d of %d)\n", sieve_axis_name(a), a + 1,
            SIEVE_AXIS_COUNT);
  }
}

/* The precision hello declares, float32 when it declares none (as sieve run compares). */
static int declared_precision(const cJSON *hello) {
  int p = sieve_precision_parse(sieve_case_str(hello, "precision"));
  return p >= 0 ? p : SIEVE_PRECISION_FLOAT32;
}

/* Each axis whose probe's requests the joint reading weighed takes its values, within what its
 * other answers allow (validate). Where it differs from the probe read alone, the note says so. */
static void read_jointly(prober *pr, const run_report *weighed) {
  const fit_result *fit = &weighed->fit;
  uint32_t asked = 0;
  for (size_t i = 0; i < weighed->n_cases; i++)
    asked |= weighed->cases[i].probed_axes;
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++) {
    if (!fit->made || pr->status[a] != ASKED || !(asked >> a & 1) || fit->axes[a].from_hello)
      continue;
    mask joint = fit->axes[a].probed & pr->also[a];
    if (joint != pr->found[a] && told(pr, a)) {
      char alone[96];
      size_t at = strlen(pr->note[a]);
      snprintf(pr->note[a] + at, sizeof pr->note[a] - at, " (read alone: %s)",
               found_text(pr, a, alone, sizeof alone));
    }
    pr->found[a] = joint;
  }
}

int sieve_fingerprint(const fingerprint_request *rq) {
  char err[512];
  static prober pr;
  conn_start(&pr.c, rq->target, rq->timeout_ms);
  cJSON *hello = conn_hello(&pr.c, pr.last_crash, sizeof pr.last_crash);
  pr.hello = hello;
  if (sieve_hello_check(hello, pr.last_crash, err, sizeof err) != 0) {
    fprintf(stderr, "sieve fingerprint: %s: %s\n", rq->impl, err);
    conn_stop(&pr.c, NULL, 0);
    cJSON_Delete(hello);
    return 2;
  }
  probe_all(&pr);
  static joint_reading joint;
  if (joint_read(&pr, declared_precision(hello), !strcmp(sieve_case_str(hello, "rng"), "own"),
                 pr.status[SIEVE_AXIS_DRAW] == ASKED &&
                     pr.found[SIEVE_AXIS_DRAW] == ONE(DRAW, HASH),
                 &joint) != 0)
    fprintf(stderr, "sieve fingerprint: out of memory: the probes are read one by one\n");
  read_jointly(&pr, &joint.report);
  if (rq->json)
    print_json(&pr, rq->impl, hello, rq->against, &joint.report);
  else
    print_text(&pr, rq->impl, hello, rq->against, &joint.report);
  joint_free(&joint);
  pr_rows_free(&pr);
  conn_stop(&pr.c, NULL, 0);
  cJSON_Delete(hello);
  int told_any = 0;
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
    told_any |= told(&pr, a);
  /* With --profile, an implementation that showed nothing, or left an axis without an answer,
   * has not agreed with it. */
  return rq->against && (mismatches(&pr, rq->against) || !told_any || unanswered(&pr)) ? 1 : 0;
}
