/* Text in XML; see xml.h. */
#include "xml.h"

static void escaped(FILE *out, const char *text, int lines) {
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
    if (*p == '<')
      fputs("&lt;", out);
    else if (*p == '>')
      fputs("&gt;", out);
    else if (*p == '&')
      fputs("&amp;", out);
    else if (*p == '"')
      fputs("&quot;", out);
    else if (*p < 0x20 && *p != '\t' && !(lines && *p == '\n'))
      fputc(' ', out);
    else
      fputc(*p, out);
  }
}

void xml_text(FILE *out, const char *text) { escaped(out, text, 0); }

void xml_lines(FILE *out, const char *text) { escaped(out, text, 1); }
