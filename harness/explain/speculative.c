/*
 * `sieve explain` of a speculative case (oracle/SPEC.md, "Speculative decoding"): each draft's
 * accept test with p, q, p/q and u, where the chain stopped, the residual it drew from after a
 * rejection (or the bonus sample), and the committed tokens.
 */
#include "speculative.h"

#include <math.h>
#include <stdlib.h>

#include "protocol/speculation.h"

#define RESIDUAL_SHOWN 8 /* residual entries printed; the rest are counted */

/* exp of a row's processed logprobs, into probs (0 where removed). */
static int processed(const sieve_rule *rule, const float *row, size_t v, const sieve_params *p,
                     const sieve_engine *e, double *probs) {
  int rc = sieve_filter_rule(rule, row, v, p, e, probs, NULL);
  for (size_t i = 0; rc == 0 && i < v; i++)
    probs[i] = probs[i] == -INFINITY ? 0.0 : exp(probs[i]);
  return rc;
}

static void print_step(FILE *out, const sieve_speculation *s, size_t j,
                       const sieve_speculate_step *st) {
  fprintf(out,
          "  draft %zu at position %llu: token %lld: p = %.6g, q = %.6g%s, p/q = %.6g; "
          "u (case 2) = %.6f: %s (|u - p/q| = %.3g)\n",
          j, (unsigned long long)(s->position + j), (long long)s->draft_tokens[j], st->p, st->q,
          s->draft_logits ? "" : " (greedy)", st->ratio, st->u,
          st->accepted ? "u * q < p, accepted" : "u * q >= p, rejected", st->margin);
}

/* The residual max(p - q, 0) of the rejected draft j, its nonzero entries by token id. */
static void print_residual(FILE *out, const sieve_rule *rule, const spec_request *r, size_t j,
                           const sieve_speculate_result *res, int64_t token, double *p, double *q) {
  const sieve_speculation *s = &r->spec;
  size_t v = s->vocab, shown = 0, nonzero = 0;
  int ok = processed(rule, s->target_logits + j * v, v, &s->target_params, &r->engine, p) == 0;
  if (ok && s->draft_logits)
    ok = processed(rule, s->draft_logits + j * v, v, &s->draft_params, &r->engine, q) == 0;
  fprintf(out, "  residual max(p - q, 0), total %.6g:", res->residual_mass);
  for (size_t i = 0; ok && i < v; i++) {
    double qi = s->draft_logits ? q[i] : (double)(i == (size_t)s->draft_tokens[j]);
    double ri = p[i] > qi ? p[i] - qi : 0.0;
    nonzero += ri > 0;
    if (ri > 0 && shown++ < RESIDUAL_SHOWN)
      fprintf(out, " %zu=%.4g", i, ri);
  }
  if (nonzero > RESIDUAL_SHOWN)
    fprintf(out, " ... (%zu tokens in all)", nonzero);
  fprintf(out, "%s\n  u (case 1) = %.6f draws token %lld by the cdf in token order (margin %.3g)\n",
          res->residual_mass > 0 ? "" : " (all 0: drawn from p)", res->u, (long long)token,
          res->draw_margin);
}

static void print_end(FILE *out, const sieve_rule *rule, const spec_request *r,
                      const sieve_speculate_result *res, const int64_t *tokens) {
  const sieve_speculation *s = &r->spec;
  double *p = malloc(s->vocab * sizeof *p), *q = malloc(s->vocab * sizeof *q);
  if (res->bonus)
    fprintf(out,
            "  every draft accepted: the bonus is the normal sample of target row %zu (case 0, "
            "position %llu): u = %.6f draws token %lld (margin %.3g)\n",
            s->n_draft, (unsigned long long)(s->position + s->n_draft), res->u,
            (long long)tokens[res->n_tokens - 1], res->draw_margin);
  else if (p && q)
    print_residual(out, rule, r, res->accepted, res, tokens[res->n_tokens - 1], p, q);
  fprintf(out, "  committed %zu token%s:", res->n_tokens, res->n_tokens == 1 ? "" : "s");
  for (size_t i = 0; i < res->n_tokens; i++)
    fprintf(out, " %lld", (long long)tokens[i]);
  fprintf(out, " (%zu of %zu drafts accepted)\n", res->accepted, s->n_draft);
  free(p);
  free(q);
}

int explain_speculative(FILE *out, const cJSON *request, const char *name, const sieve_rule *rule) {
  spec_request r;
  req_error e;
  sieve_speculate_step steps[SIEVE_DRAFT_MAX];
  int64_t tokens[SIEVE_DRAFT_MAX + 1];
  sieve_speculate_result res;
  if (req_speculation(request, &r, &e) != 0)
    return fprintf(out, "%s: the request is malformed: %s\n", name, e.message), -1;
  int rc = r.spec.n_draft <= SIEVE_DRAFT_MAX ? 0 : SIEVE_EDRAFT;
  if (rc == 0 && r.sample_draft)
    rc = sieve_speculate_draft(rule, &r.spec, &r.engine, r.tokens);
  if (rc == 0)
    rc = sieve_speculate_rule(rule, &r.spec, &r.engine, steps, tokens, &res);
  fprintf(out, "%s: %zu draft%s at positions %llu.., seed %llu%s\n", name, r.spec.n_draft,
          r.spec.n_draft == 1 ? "" : "s", (unsigned long long)r.spec.position,
          (unsigned long long)r.spec.seed, r.sample_draft ? " (drafts drawn with tag mtp)" : "");
  if (rc != 0)
    fprintf(out, "  %s: %s\n", sieve_err_name(rc), sieve_strerror(rc));
  for (size_t j = 0; rc == 0 && j < res.n_steps; j++)
    print_step(out, &r.spec, j, &steps[j]);
  if (rc == 0)
    print_end(out, rule, &r, &res, tokens);
  spec_request_free(&r);
  return rc == 0 ? 0 : -1;
}
