/* Text in XML; see xml.h. */
#include "xml.h"

void xml_text(FILE *out, const char *text) {
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
    if (*p == '<')
      fputs("&lt;", out);
    else if (*p == '>')
      fputs("&gt;", out);
    else if (*p == '&')
      fputs("&amp;", out);
    else if (*p == '"')
      fputs("&quot;", out);
    else if (*p < 0x20 && *p != '\t')
      fputc(' ', out);
    else
      fputc(*p, out);
  }
}
