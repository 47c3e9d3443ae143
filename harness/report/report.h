/*
 * Renderings of a run report: text (for people), markdown (a CI job
 * summary), json (the raw report), junit (XML for CI systems), tap, html (a page).
 */
#ifndef SIEVE_REPORT_H
#define SIEVE_REPORT_H

#include <stdio.h>

#include "run/runner.h"

/* The formats, one renderer each (report_NAME in render.h): text for people, json the raw report,
 * markdown a CI job summary, junit XML for CI systems, tap, html a page to open in a browser. */
#define SIEVE_REPORT_FORMATS(X) X(text) X(json) X(markdown) X(junit) X(tap) X(html)

/* Their names, NULL-ended. */
extern const char *const sieve_report_formats[];

/* What the HTML report draws with, from a layer above this one (explain/): `draw` writes a
 * case's picture as inline SVG (0, or -1 when it has none), `request` gives its request as text
 * (malloc'd; NULL when it has none). */
typedef struct report_pictures {
  int (*draw)(void *ctx, const case_result *c, FILE *out);
  char *(*request)(void *ctx, const case_result *c);
  void *ctx;
} report_pictures;

/* 0, or -1 for an unknown format. `pictures` may be NULL: the HTML report then has none. */
int sieve_report_render(const run_report *report, const char *format, FILE *out,
                        const report_pictures *pictures);

/* The gate in a few lines for a CI log: the first unexpected cases and the verdict line. */
void sieve_report_summary(const run_report *report, FILE *out);

/* Nonzero when `format` is one of sieve_report_formats. */
int sieve_report_format_known(const char *format);

#endif /* SIEVE_REPORT_H */
