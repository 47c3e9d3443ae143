/*
 * Renderings of a run report: text (for people), markdown (a CI job
 * summary), json (the raw report), junit (XML for CI systems), tap.
 */
#ifndef SIEVE_REPORT_H
#define SIEVE_REPORT_H

#include <stdio.h>

#include "run/runner.h"

/* The formats, one renderer each (report_NAME in render.h): text for people, json the raw report,
 * markdown a CI job summary, junit XML for CI systems, tap. */
#define SIEVE_REPORT_FORMATS(X) X(text) X(json) X(markdown) X(junit) X(tap)

/* Their names, NULL-ended. */
extern const char *const sieve_report_formats[];

/* 0, or -1 for an unknown format. */
int sieve_report_render(const run_report *report, const char *format, FILE *out);

/* The gate in a few lines for a CI log: the first unexpected cases and the verdict line. */
void sieve_report_summary(const run_report *report, FILE *out);

/* Nonzero when `format` is one of sieve_report_formats. */
int sieve_report_format_known(const char *format);

#endif /* SIEVE_REPORT_H */
