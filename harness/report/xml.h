/* Text in XML (JUnit reports, SVG pictures): <, >, & and " as entities, and control characters
 * but tab, which XML 1.0 does not allow or attributes would not keep, as spaces. */
#ifndef SIEVE_REPORT_XML_H
#define SIEVE_REPORT_XML_H

#include <stdio.h>

void xml_text(FILE *out, const char *text);

/* The same, keeping line breaks: an element's text, never an attribute's. */
void xml_lines(FILE *out, const char *text);

#endif /* SIEVE_REPORT_XML_H */
