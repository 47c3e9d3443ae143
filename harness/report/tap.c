/* The TAP 13 report: one line per case. */
#include "render.h"
#include "run/check.h"

void report_tap(const run_report *r, FILE *out, const report_pictures *pictures) {
  (void)pictures;
  fprintf(out, "TAP version 13\n1..%zu\n# precision %s (%s)\n", r->n_cases,
          sieve_precision_name(r->precision), r->precision_source);
  if (r->options->alone_only)
    fprintf(out, "# %s\n", REPORT_ALONE_ONLY);
  if (r->fit.made) {
    char rule[900];
    report_rule_text(&r->fit, rule, sizeof rule);
    fprintf(out, "# the rule these answers follow: %s%s%s; it explains %zu of %zu failures\n", rule,
            r->fit.misreadings[0] ? ", with the misreadings " : "", r->fit.misreadings,
            r->fit.explained, r->fit.failures);
  }
  for (size_t i = 0; i < r->n_cases; i++) {
    const case_result *c = &r->cases[i];
    int ok = c->outcome == OUTCOME_PASS || c->outcome == OUTCOME_SKIP;
    fprintf(out, "%s %zu - %s", ok ? "ok" : "not ok", i + 1, c->id);
    if (c->outcome == OUTCOME_SKIP)
      fprintf(out, " # SKIP %s", c->detail);
    else if (!ok && c->expected_failure)
      fprintf(out, " # TODO expected failure: %s", c->detail);
    else if (!ok)
      fprintf(out, " # %s: %s", outcome_name(c->outcome), c->detail);
    fputc('\n', out);
  }
}
