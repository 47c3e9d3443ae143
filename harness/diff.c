/*
 * `sieve diff A B [--suite NAME]... [--format text|markdown]`: the cases on
 * which two implementations answer differently, keyed by stable case id and
 * grouped by the axis each case names (fixtures/README.md), with both answers.
 * The cases are the fixtures and the fingerprint probes (one per axis).
 * Numbers agree within 1e-9 + 1e-9 relative; messages, error codes and the
 * oracle's extra answers (margins, u) are not compared. Both are asked hello
 * first, and a case of an op either does not offer is skipped; a crash, hang
 * or garbage is that case's answer, and the implementation is restarted.
 */
#define _GNU_SOURCE
#include "diff.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fingerprint.h"
#include "fixture.h"
#include "impl.h"
#include "jbuf.h"
#include "proc.h"
#include "suites.h"

typedef struct difference {
  char id[192];
  char axis[32];
  char a[160], b[160];
} difference;

static int ignored(const char *key) {
  static const char *const keys[] = {"message", "code", "kept", "kept_mass", "topp_margin",
                                     "cut_gap", "u", "draw_margin", "margins", "name",
                                     "version", "profile", NULL};
  for (int i = 0; key && keys[i]; i++)
    if (strcmp(key, keys[i]) == 0)
      return 1;
  return 0;
}

static int same(const cJSON *a, const cJSON *b) {
  if (cJSON_IsNumber(a) && cJSON_IsNumber(b)) {
    double x = a->valuedouble, y = b->valuedouble;
    return fabs(x - y) <= 1e-9 + 1e-9 * fabs(y);
  }
  if ((a->type & 0xFF) != (b->type & 0xFF))
    return 0;
  if (cJSON_IsString(a))
    return strcmp(a->valuestring, b->valuestring) == 0;
  if (cJSON_IsArray(a) || cJSON_IsObject(a)) {
    if (cJSON_IsArray(a) && cJSON_GetArraySize(a) != cJSON_GetArraySize(b))
      return 0;
    const cJSON *y = b->child;
    for (const cJSON *x = a->child; x; x = x->next, y = y ? y->next : NULL) {
      if (cJSON_IsObject(a)) {
        if (ignored(x->string))
          continue;
        y = cJSON_GetObjectItemCaseSensitive(b, x->string);
      }
      if (!y || !same(x, y))
        return 0;
    }
  }
  return 1;
}

/* A short account of an answer: kept ids, token, error, parameters or the first value. */
static void summary(const cJSON *answer, char *out, size_t len) {
  const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(answer, "rows"), 0);
  const cJSON *error = cJSON_GetObjectItemCaseSensitive(row ? row : answer, "error");
  const cJSON *lp = cJSON_GetObjectItemCaseSensitive(row, "logprobs");
  const cJSON *token = cJSON_GetObjectItemCaseSensitive(row, "token");
  if (!answer) {
    snprintf(out, len, "no answer");
  } else if (error) {
    snprintf(out, len, "error %s/%s", sieve_case_str(error, "kind"), sieve_case_str(error, "field"));
  } else if (cJSON_IsArray(lp)) {
    size_t at = (size_t)snprintf(out, len, "kept {");
    int i = 0, n = 0;
    for (const cJSON *x = lp->child; x && at < len; x = x->next, i++)
      if (!cJSON_IsNull(x) && n++ < 12)
        at += (size_t)snprintf(out + at, len - at, "%s%d", n > 1 ? "," : "", i);
    if (at < len)
      snprintf(out + at, len - at, "%s}", n > 12 ? ",..." : "");
  } else if (cJSON_IsNumber(token)) {
    const cJSON *logprob = cJSON_GetObjectItemCaseSensitive(row, "logprob");
    snprintf(out, len, "token %d, logprob %.6g", token->valueint,
             cJSON_IsNumber(logprob) ? logprob->valuedouble : NAN);
  } else {
    jbuf b = {0};
    jbuf_json(&b, answer);
    snprintf(out, len, "%.150s", b.data ? b.data : "");
    jbuf_free(&b);
  }
}

typedef struct side {
  proc p;
  impl_command cmd;
  cJSON *hello; /* its answer to hello, with the ops it offers */
  size_t crashes;
} side;

typedef struct differ {
  side a, b;
  difference *found;
  size_t n, cap, compared, skipped;
} differ;

/* An answer, or NULL after a crash, a hang or garbage, which restarts the implementation; the
 * summary then says what happened. */
static cJSON *ask(side *s, const char *request, size_t len, char *crash, size_t crash_len) {
  cJSON *answer = proc_ask(&s->p, request, len, crash, crash_len);
  s->crashes += answer == NULL;
  return answer;
}

static int offers(const side *s, const char *op) {
  const cJSON *ops = cJSON_GetObjectItemCaseSensitive(s->hello, "ops");
  for (const cJSON *o = ops ? ops->child : NULL; o; o = o->next)
    if (cJSON_IsString(o) && strcmp(o->valuestring, op) == 0)
      return 1;
  return 0;
}

/* The op of a request text, for the ops both sides must offer. */
static int both_offer(differ *d, const char *request, size_t len) {
  cJSON *r = cJSON_ParseWithLength(request, len);
  const char *op = sieve_case_str(r, "op");
  int ok = offers(&d->a, op) && offers(&d->b, op);
  cJSON_Delete(r);
  d->skipped += !ok;
  return ok;
}

static void compare(differ *d, const char *id, const char *axis, const char *request,
                    size_t len) {
  char crash_a[300] = "", crash_b[300] = "";
  if (!both_offer(d, request, len))
    return;
  cJSON *x = ask(&d->a, request, len, crash_a, sizeof crash_a);
  cJSON *y = ask(&d->b, request, len, crash_b, sizeof crash_b);
  d->compared++;
  if (!(x && y && same(x, y)) && !(!x && !y)) {
    if (d->n == d->cap) {
      d->cap = d->cap ? d->cap * 2 : 64;
      d->found = realloc(d->found, d->cap * sizeof *d->found);
    }
    difference *f = &d->found[d->n++];
    snprintf(f->id, sizeof f->id, "%s", id);
    snprintf(f->axis, sizeof f->axis, "%s", *axis ? axis : "none");
    if (x)
      summary(x, f->a, sizeof f->a);
    else
      snprintf(f->a, sizeof f->a, "crash: %.150s", crash_a);
    if (y)
      summary(y, f->b, sizeof f->b);
    else
      snprintf(f->b, sizeof f->b, "crash: %.150s", crash_b);
  }
  cJSON_Delete(x);
  cJSON_Delete(y);
}

static int wanted(const char **suites, const cJSON *c) {
  if (!suites[0])
    return 1;
  for (const char **s = suites; *s; s++)
    if (strcmp(*s, suite_of_case(c)) == 0)
      return 1;
  return 0;
}

static void compare_fixtures(differ *d, const sieve_fixtures *fx, const char **suites) {
  for (const cJSON *c = fx->cases->child; c; c = c->next) {
    char err[256];
    size_t len;
    if (!wanted(suites, c))
      continue;
    cJSON *request = sieve_case_request(c, err, sizeof err);
    jbuf b = {0};
    jbuf_json(&b, request);
    len = b.len;
    if (b.data)
      compare(d, sieve_case_str(c, "id"), sieve_case_str(c, "axis"), b.data, len);
    jbuf_free(&b);
    cJSON_Delete(request);
  }
}

static int axis_seen_before(const differ *d, size_t i) {
  for (size_t j = 0; j < i; j++)
    if (strcmp(d->found[j].axis, d->found[i].axis) == 0)
      return 1;
  return 0;
}

/* The differences grouped by axis, the axes in the order they first differ (the probes', then
 * the fixtures' axes, as each case names its own). */
static void print(const differ *d, const char *a, const char *b, int markdown) {
  if (markdown)
    printf("## sieve diff\n\n`%s` and `%s` differ on %zu of %zu cases.\n", a, b, d->n,
           d->compared);
  else
    printf("sieve diff: %s and %s differ on %zu of %zu cases\n", a, b, d->n, d->compared);
  if (d->skipped)
    printf("%s%zu cases skipped: an op one of them does not offer (hello)\n",
           markdown ? "\n" : "", d->skipped);
  if (d->a.crashes || d->b.crashes)
    printf("%scrashes, hangs or garbage (each time restarted): %s %zu, %s %zu\n",
           markdown ? "\n" : "", a, d->a.crashes, b, d->b.crashes);
  for (size_t k = 0; k < d->n; k++) {
    const char *axis = d->found[k].axis;
    size_t n = 0;
    if (axis_seen_before(d, k))
      continue;
    for (size_t i = 0; i < d->n; i++)
      n += strcmp(d->found[i].axis, axis) == 0;
    if (markdown)
      printf("\n### %s (%zu)\n\n| case | %s | %s |\n|---|---|---|\n", axis, n, a, b);
    else
      printf("\n%s (%zu cases)\n", axis, n);
    for (size_t i = 0; i < d->n; i++)
      if (strcmp(d->found[i].axis, axis) == 0)
        printf(markdown ? "| `%s` | %s | %s |\n" : "  %s: %s | %s\n", d->found[i].id,
               d->found[i].a, d->found[i].b);
  }
}

/* Starts an implementation and asks hello; -1, saying why, when it does not answer with ops. */
static int greet(side *s, const char *name) {
  static const char request[] = "{\"op\":\"hello\",\"protocol\":1}";
  char crash[300] = "";
  proc_start(&s->p, s->cmd.argv, 30000);
  s->hello = proc_ask(&s->p, request, sizeof request - 1, crash, sizeof crash);
  if (cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(s->hello, "ops")))
    return 0;
  fprintf(stderr, "sieve diff: %s did not answer hello with its ops%s%s\n", name,
          *crash ? ": " : "", crash);
  return -1;
}

static void stop(differ *d) {
  proc_stop(&d->a.p, NULL, 0);
  proc_stop(&d->b.p, NULL, 0);
  cJSON_Delete(d->a.hello);
  cJSON_Delete(d->b.hello);
}

int sieve_diff_main(int argc, char **argv) {
  static differ d;
  const char *suites[32] = {NULL}, *format = "text", *names[2] = {NULL, NULL};
  char err[256], path[PATH_MAX + 64];
  size_t n_suites = 0, n_names = 0;
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--suite") && i + 1 < argc && n_suites < 31)
      suites[n_suites++] = argv[++i];
    else if (!strcmp(argv[i], "--format") && i + 1 < argc)
      format = argv[++i];
    else if (n_names < 2 && argv[i][0] != '-')
      names[n_names++] = argv[i];
    else
      n_names = 3;
  }
  if (n_names != 2 || (strcmp(format, "text") && strcmp(format, "markdown"))) {
    fprintf(stderr, "usage: sieve diff IMPL_A IMPL_B [--suite NAME]... "
                    "[--format text|markdown]\n");
    return 2;
  }
  sieve_fixtures fx;
  if (impl_command_parse(&d.a.cmd, names[0], err, sizeof err) != 0 ||
      impl_command_parse(&d.b.cmd, names[1], err, sizeof err) != 0 ||
      sieve_fixtures_load(sieve_default_fixtures(path, sizeof path), &fx, err, sizeof err) != 0) {
    fprintf(stderr, "sieve diff: %s\n", err);
    return 2;
  }
  if (greet(&d.a, names[0]) != 0 || greet(&d.b, names[1]) != 0) {
    stop(&d);
    sieve_fixtures_free(&fx);
    return 2;
  }
  for (size_t i = 0; fingerprint_requests[i].axis; i++) {
    char id[64];
    snprintf(id, sizeof id, "probe/%s", fingerprint_requests[i].axis);
    compare(&d, id, fingerprint_requests[i].axis, fingerprint_requests[i].request,
            strlen(fingerprint_requests[i].request));
  }
  compare_fixtures(&d, &fx, suites);
  print(&d, names[0], names[1], strcmp(format, "markdown") == 0);
  stop(&d);
  sieve_fixtures_free(&fx);
  free(d.found);
  return d.n ? 1 : 0;
}
