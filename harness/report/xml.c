/* Text in XML; see xml.h. */
#include "xml.h"

/* The length of the valid UTF-8 character at p that XML 1.0 allows (not U+FFFE or U+FFFF, no
 * surrogate, no overlong form), or 0. */
static int utf8_length(const unsigned char *p) {
  const int n = p[0] >= 0xF0 && p[0] <= 0xF4 ? 4 : p[0] >= 0xE0 ? 3 : p[0] >= 0xC2 ? 2 : 0;
  unsigned long c = n == 4 ? p[0] & 0x07u : n == 3 ? p[0] & 0x0Fu : p[0] & 0x1Fu;
  for (int i = 1; i < n; i++) {
    if ((p[i] & 0xC0) != 0x80)
      return 0;
    c = c << 6 | (p[i] & 0x3Fu);
  }
  const int shortest = c >= 0x10000 ? 4 : c >= 0x800 ? 3 : 2;
  return n && n == shortest && c <= 0x10FFFF && !(c >= 0xD800 && c <= 0xDFFF) && c != 0xFFFE &&
                 c != 0xFFFF
             ? n
             : 0;
}

/* Markup characters as entities, control characters but tab (and line breaks where `lines`) as
 * spaces, and bytes that are no UTF-8 character (a message cut in the middle of one, say) as
 * U+FFFD, so the document stays well-formed whatever the implementation wrote. */
static void escaped(FILE *out, const char *text, int lines) {
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
    if (*p >= 0x80) {
      const int n = utf8_length(p);
      if (n)
        fwrite(p, 1, (size_t)n, out), p += n - 1;
      else
        fputs("\xEF\xBF\xBD", out);
    } else if (*p == '<')
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
