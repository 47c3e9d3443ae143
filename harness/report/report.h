/*
 * Renderings of a run report: text (for people), markdown (a CI job
 * summary), json (the raw report), junit (XML for CI systems), tap.
 */
#ifndef SIEVE_REPORT_H
#define SIEVE_REPORT_H

#include <stdio.h>

#include "run/runner.h"

/* 0, or -1 for an unknown format. */
int sieve_report_render(const run_report *report, const char *format, FILE *out);

/* The gate in a few lines for a CI log: the first unexpected cases and the verdict line. */
void sieve_report_summary(const run_report *report, FILE *out);

/* Nonzero when `format` is one of text, json, markdown, junit, tap. */
int sieve_report_format_known(const char *format);

#endif /* SIEVE_REPORT_H */
