/*
 * `sieve fingerprint --impl IMPL`: which choice an implementation made on
 * each axis of oracle/ENGINES.md, and the profiles that make the same ones.
 *
 * Each axis has a probe whose answers differ by far more than float32
 * rounding: blocks of equal logits for exact boundaries and ties, and
 * margins of 0.05 or more elsewhere. An implementation is asked only the
 * ops it offers; an axis it cannot be probed on is "not determined".
 */
#define _GNU_SOURCE
#include "fingerprint.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "impl.h"
#include "proc.h"
#include "profiles.h"

#define UNDETERMINED (-1)
#define INCONSISTENT (-2)
#define NO_ANSWER (-3) /* a request of the probe crashed, hung or got garbage */

typedef struct prober {
  proc p;
  const cJSON *ops;
  char note[PROFILE_AXES][200];
  size_t crashes;     /* requests that crashed, hung or got garbage; each restarts the child */
  char last_crash[300];
} prober;

/* An answer that is not an error, or NULL. */
static cJSON *ask(prober *pr, const char *request) {
  cJSON *answer = proc_ask(&pr->p, request, strlen(request), pr->last_crash,
                           sizeof pr->last_crash);
  pr->crashes += answer == NULL;
  if (answer && !cJSON_GetObjectItemCaseSensitive(answer, "error"))
    return answer;
  cJSON_Delete(answer);
  return NULL;
}

/* An answer without what the probe asked for counts as a crash does. */
static void garbage(prober *pr, const cJSON *answer, const char *missing) {
  char *text = cJSON_PrintUnformatted(answer);
  snprintf(pr->last_crash, sizeof pr->last_crash, "the answer has no %s: %.80s", missing,
           text ? text : "");
  free(text);
  pr->crashes++;
}

/* A kept set as token ids, "{1,3}". */
static void print_ids(long set, char *out, size_t len) {
  size_t at = (size_t)snprintf(out, len, "{");
  for (int i = 0; i < 62 && at < len; i++)
    if (set >> i & 1)
      at += (size_t)snprintf(out + at, len - at, "%s%d", at > 1 ? "," : "", i);
  if (at < len)
    snprintf(out + at, len - at, "}");
}

static int offers(const prober *pr, const char *op) {
  for (const cJSON *o = pr->ops ? pr->ops->child : NULL; o; o = o->next)
    if (cJSON_IsString(o) && strcmp(o->valuestring, op) == 0)
      return 1;
  return 0;
}

/* The kept (non-null) ids of the first row of a filter answer, as a bit set; -1 if none. */
static long kept_of(prober *pr, const char *request) {
  cJSON *answer = offers(pr, "filter") ? ask(pr, request) : NULL;
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(answer, "rows");
  const cJSON *lp = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(rows, 0), "logprobs");
  long set = cJSON_IsArray(lp) ? 0 : -1;
  if (answer && set < 0)
    garbage(pr, answer, "rows[0].logprobs");
  int i = 0;
  for (const cJSON *x = cJSON_IsArray(lp) ? lp->child : NULL; x && i < 62; x = x->next, i++)
    if (!cJSON_IsNull(x))
      set |= 1L << i;
  cJSON_Delete(answer);
  return set;
}

/* Classifies by the kept set: `sets[v]` is what value v keeps. */
static int by_kept(prober *pr, int axis, const char *request, const long *sets, int n) {
  long kept = kept_of(pr, request);
  char ids[128];
  if (kept < 0)
    return UNDETERMINED;
  print_ids(kept, ids, sizeof ids);
  snprintf(pr->note[axis], sizeof pr->note[axis], "kept %s", ids);
  for (int v = 0; v < n; v++)
    if (sets[v] == kept)
      return v;
  return INCONSISTENT;
}

#define ORDER_ROW "[-0.69314718055994529,-1.2039728043259361,-1.6094379124341003]"
#define MAT_ROW "[2,1.5,1,0.3,-0.2,-1.5]"

const probe_request fingerprint_requests[] = {
    {"topp_scope", "{\"op\":\"filter\",\"rows\":[{\"logits\":" ORDER_ROW
                   ",\"params\":{\"top_k\":2,\"top_p\":0.55}}]}"},
    {"boundary", "{\"op\":\"filter\",\"rows\":[{\"logits\":[1,1,1,1],\"params\":{\"top_p\":0.5}}]}"},
    {"topk_ties", "{\"op\":\"filter\",\"rows\":[{\"logits\":[1,3,1,3,3,0],\"params\":{\"top_k\":2}}]}"},
    {"temperature_at", "{\"op\":\"filter\",\"rows\":[{\"logits\":" MAT_ROW
                       ",\"params\":{\"temperature\":0.5,\"top_p\":0.8}}]}"},
    {"t0", "{\"op\":\"validate\",\"params\":{\"temperature\":0,\"top_p\":0.3,\"top_k\":5}}"},
    {"top_k_zero", "{\"op\":\"validate\",\"params\":{\"top_k\":0}}"},
    {NULL, NULL},
};

static int probe_scope(prober *pr) {
  static const long sets[] = {0x3, 0x1};
  return by_kept(pr, 0, fingerprint_requests[0].request, sets, 2);
}

static int probe_boundary(prober *pr) {
  static const long sets[] = {0x7, 0x3};
  return by_kept(pr, 1, fingerprint_requests[1].request, sets, 2);
}

static int probe_ties(prober *pr) {
  static const long sets[] = {0xA, 0x18, 0x1A};
  return by_kept(pr, 2, fingerprint_requests[2].request, sets, 3);
}

static int probe_temperature(prober *pr) {
  static const long sets[] = {0x3, 0x7};
  return by_kept(pr, 3, fingerprint_requests[3].request, sets, 2);
}

/* Normalized parameters from validate, or NULL. */
static cJSON *validated(prober *pr, const char *params) {
  char request[256];
  snprintf(request, sizeof request, "{\"op\":\"validate\",\"params\":%s}", params);
  return offers(pr, "validate") ? ask(pr, request) : NULL;
}

static double number_at(const cJSON *obj, const char *a, const char *b) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, a), b);
  return cJSON_IsNumber(x) ? x->valuedouble : NAN;
}

static int probe_t0(prober *pr) {
  cJSON *v = validated(pr, "{\"temperature\":0,\"top_p\":0.3,\"top_k\":5}");
  if (!v) {
    static const long sets[] = {0x3, 0x1};
    int by_rows = by_kept(pr, 4, "{\"op\":\"filter\",\"rows\":[{\"logits\":[2,2,1],"
                                 "\"params\":{\"temperature\":0}}]}",
                          sets, 2);
    return by_rows == SIEVE_T0_ARGMAX ? UNDETERMINED : by_rows;
  }
  double t = number_at(v, "params", "temperature"), k = number_at(v, "params", "top_k");
  double p = number_at(v, "params", "top_p");
  cJSON_Delete(v);
  snprintf(pr->note[4], sizeof pr->note[4], "validate gives T %g, top_p %g, top_k %g", t, p, k);
  int choice = fabs(t - 1e-5) < 1e-12 && k == -1 && p == 1 ? SIEVE_T0_CLAMP
               : t == 0 && k == 1                         ? SIEVE_T0_ARGMAX
               : t == 1 && k == 1                         ? SIEVE_T0_TOPK1
                                                          : INCONSISTENT;
  /* The filter must agree: equal maxima at T = 0 share under the clamp, not under argmax. */
  long kept = kept_of(pr, "{\"op\":\"filter\",\"rows\":[{\"logits\":[2,2,1],"
                          "\"params\":{\"temperature\":0}}]}");
  if ((choice == SIEVE_T0_CLAMP && kept >= 0 && kept != 0x7) ||
      (choice == SIEVE_T0_ARGMAX && kept >= 0 && kept != 0x1)) {
    char ids[128];
    print_ids(kept, ids, sizeof ids);
    snprintf(pr->note[4], sizeof pr->note[4],
             "validate gives T %g, top_k %g; the filter keeps %.40s of (2, 2, 1) at T = 0", t, k,
             ids);
    return INCONSISTENT;
  }
  return choice;
}

static int probe_top_k_zero(prober *pr) {
  if (!offers(pr, "validate"))
    return UNDETERMINED;
  cJSON *v = validated(pr, "{\"top_k\":0}");
  snprintf(pr->note[5], sizeof pr->note[5], "validate of top_k 0 %s", v ? "passes" : "fails");
  cJSON_Delete(v);
  return v ? SIEVE_K0_OFF : SIEVE_K0_ERROR;
}

/* The drawn token and its logprob for a row at T = 0.5, top_k 2. */
static int sampled(prober *pr, const char *logits, uint64_t seed, int position, int64_t *token,
                   double *logprob) {
  char request[320];
  snprintf(request, sizeof request,
           "{\"op\":\"sample\",\"rows\":[{\"logits\":%s,\"params\":{\"temperature\":0.5,"
           "\"top_k\":2},\"seed\":\"%llu\",\"position\":%d}]}",
           logits, (unsigned long long)seed, position);
  cJSON *answer = offers(pr, "sample") ? ask(pr, request) : NULL;
  const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(answer, "rows"), 0);
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(row, "token");
  const cJSON *lp = cJSON_GetObjectItemCaseSensitive(row, "logprob");
  int ok = cJSON_IsNumber(t) && cJSON_IsNumber(lp);
  if (answer && !ok)
    garbage(pr, answer, "rows[0].token and logprob");
  if (ok) {
    *token = (int64_t)t->valuedouble;
    *logprob = lp->valuedouble;
  }
  cJSON_Delete(answer);
  return ok ? 0 : -1;
}

static const float mat_row[6] = {2.0f, 1.5f, 1.0f, 0.3f, -0.2f, -1.5f};

static int probe_logprobs(prober *pr) {
  int64_t token;
  double got, lp[3][6];
  if (sampled(pr, MAT_ROW, 42, 7, &token, &got) != 0 || token < 0 || token > 5)
    return UNDETERMINED;
  const sieve_params params[3] = {{0.5, 1.0, 2}, {0.5, 1.0, -1}, {1.0, 1.0, -1}};
  for (int v = 0; v < 3; v++)
    sieve_filter(mat_row, 6, &params[v], NULL, lp[v], NULL);
  snprintf(pr->note[6], sizeof pr->note[6], "token %lld has logprob %.6f", (long long)token, got);
  for (int v = 0; v < 3; v++)
    if (fabs(lp[v][token] - got) < 1e-6)
      return v;
  return INCONSISTENT;
}

/* Token 1 is the most probable, so the cdf in token order is not the cdf in probability order. */
static const float draw_row[6] = {1.5f, 2.0f, 1.0f, 0.3f, -0.2f, -1.5f};

static int probe_draw(prober *pr) {
  int same = 0, n = 0;
  const sieve_params params = {0.5, 1.0, 2};
  for (int position = 0; position < 24; position++) {
    int64_t token, want;
    double lp;
    sieve_draw_key key = {1000 + (uint64_t)position, (uint64_t)position, 0, 0};
    sieve_sample_result r;
    if (sampled(pr, "[1.5,2,1,0.3,-0.2,-1.5]", key.seed, position, &token, &lp) != 0)
      return UNDETERMINED;
    sieve_sample(draw_row, 6, &params, NULL, &key, 0, NULL, &r);
    want = r.token;
    same += token == want;
    n++;
  }
  snprintf(pr->note[7], sizeof pr->note[7], "%d of %d draws match the hash", same, n);
  return same == n ? SIEVE_DRAW_HASH : SIEVE_DRAW_OWN;
}

static int (*const probes[PROFILE_AXES])(prober *) = {
    probe_scope, probe_boundary, probe_ties,     probe_temperature,
    probe_t0,    probe_top_k_zero, probe_logprobs, probe_draw};

/* How many determined axes a profile chooses otherwise. */
static int mismatches(const engine_profile *p, const int *choice) {
  int n = 0;
  for (int a = 0; a < PROFILE_AXES; a++)
    n += choice[a] >= 0 && rule_axis(&p->rule, a) != choice[a];
  return n;
}

/* The profile with the fewest mismatches (the first of equals), and where it differs. */
static void print_nearest(const int *choice) {
  const engine_profile *best = profiles;
  for (const engine_profile *p = profiles; p->name; p++)
    if (mismatches(p, choice) < mismatches(best, choice))
      best = p;
  printf("nearest: %s, which differs on", best->name);
  for (int a = 0; a < PROFILE_AXES; a++)
    if (choice[a] >= 0 && rule_axis(&best->rule, a) != choice[a])
      printf(" %s (%s, not %s)", axis_names[a], axis_value_name(a, rule_axis(&best->rule, a)),
             axis_value_name(a, choice[a]));
  printf("\n");
}

static void print_matches(const int *choice) {
  int determined = 0, any = 0;
  for (int a = 0; a < PROFILE_AXES; a++)
    determined += choice[a] >= 0;
  if (!determined) {
    printf("\nno axis determined, so no profile can be matched\n");
    return;
  }
  printf("\nprofiles making every determined choice:");
  for (const engine_profile *p = profiles; p->name; p++)
    if (mismatches(p, choice) == 0) {
      printf(" %s", p->name);
      any = 1;
    }
  printf("%s\n", any ? "" : " none");
  if (!any)
    print_nearest(choice);
}

int sieve_fingerprint_main(int argc, char **argv) {
  static impl_command cmd;
  char err[256];
  if (argc != 2 || strcmp(argv[0], "--impl") != 0) {
    fprintf(stderr, "usage: sieve fingerprint --impl IMPL\n");
    return 2;
  }
  if (impl_command_parse(&cmd, argv[1], err, sizeof err) != 0) {
    fprintf(stderr, "sieve fingerprint: %s\n", err);
    return 2;
  }
  prober pr = {0};
  proc_start(&pr.p, cmd.argv, 30000);
  cJSON *hello = ask(&pr, "{\"op\":\"hello\",\"protocol\":1}");
  pr.ops = cJSON_GetObjectItemCaseSensitive(hello, "ops");
  if (!cJSON_IsArray(pr.ops)) {
    fprintf(stderr, "sieve fingerprint: %s did not answer hello with its ops%s%s\n", argv[1],
            pr.crashes ? ": " : "", pr.crashes ? pr.last_crash : "");
    proc_stop(&pr.p, NULL, 0);
    cJSON_Delete(hello);
    return 2;
  }
  int choice[PROFILE_AXES];
  printf("sieve fingerprint: %s (%s)\n", argv[1], sieve_case_str(hello, "name"));
  for (int a = 0; a < PROFILE_AXES; a++) {
    size_t crashes = pr.crashes;
    choice[a] = probes[a](&pr);
    if (pr.crashes > crashes) {
      choice[a] = NO_ANSWER;
      snprintf(pr.note[a], sizeof pr.note[a], "%.190s", pr.last_crash);
    }
    const char *value = choice[a] == UNDETERMINED   ? "not determined (op not offered)"
                        : choice[a] == INCONSISTENT ? "inconsistent"
                        : choice[a] == NO_ANSWER    ? "not determined (no answer)"
                                                    : axis_value_name(a, choice[a]);
    printf("%-15s %-12s %s\n", axis_names[a], value, pr.note[a]);
  }
  print_matches(choice);
  if (pr.crashes)
    printf("%zu requests crashed, hung or got garbage (restarted each time); the last: %s\n",
           pr.crashes, pr.last_crash);
  proc_stop(&pr.p, NULL, 0);
  cJSON_Delete(hello);
  return 0;
}
