/* A growable text buffer for JSON output; see jbuf.h. */
#include "jbuf.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int reserve(jbuf *b, size_t extra) {
  if (b->failed)
    return -1;
  if (b->len + extra + 1 <= b->cap)
    return 0;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + extra + 1)
    cap *= 2;
  char *data = realloc(b->data, cap);
  if (!data) {
    b->failed = 1;
    return -1;
  }
  b->data = data;
  b->cap = cap;
  return 0;
}

static void append(jbuf *b, const char *text, size_t n) {
  if (reserve(b, n) != 0)
    return;
  memcpy(b->data + b->len, text, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void jbuf_free(jbuf *b) {
  free(b->data);
  *b = (jbuf){0};
}

void jbuf_reset(jbuf *b) {
  b->len = 0;
  b->failed = 0;
  if (b->data)
    b->data[0] = '\0';
}

void jbuf_raw(jbuf *b, const char *text) { append(b, text, strlen(text)); }

void jbuf_char(jbuf *b, char c) { append(b, &c, 1); }

void jbuf_str(jbuf *b, const char *text) {
  jbuf_char(b, '"');
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
    char esc[8];
    if (*p == '"' || *p == '\\') {
      esc[0] = '\\';
      esc[1] = (char)*p;
      append(b, esc, 2);
    } else if (*p < 0x20) {
      int n = snprintf(esc, sizeof esc, "\\u%04x", *p);
      append(b, esc, (size_t)n);
    } else {
      jbuf_char(b, (char)*p);
    }
  }
  jbuf_char(b, '"');
}

void jbuf_num(jbuf *b, double x) {
  if (isinf(x) || isnan(x)) {
    jbuf_raw(b, isnan(x) ? "\"nan\"" : x < 0 ? "null" : "\"inf\"");
    return;
  }
  char text[32];
  int n = snprintf(text, sizeof text, "%.17g", x);
  append(b, text, (size_t)n);
}

void jbuf_int(jbuf *b, int64_t x) {
  char text[32];
  int n = snprintf(text, sizeof text, "%" PRId64, x);
  append(b, text, (size_t)n);
}

void jbuf_u64_str(jbuf *b, uint64_t x) {
  char text[32];
  int n = snprintf(text, sizeof text, "\"%" PRIu64 "\"", x);
  append(b, text, (size_t)n);
}

void jbuf_key(jbuf *b, const char *key, int comma) {
  if (comma)
    jbuf_char(b, ',');
  jbuf_str(b, key);
  jbuf_char(b, ':');
}

void jbuf_json(jbuf *b, const cJSON *value) {
  if (cJSON_IsNumber(value)) {
    jbuf_num(b, value->valuedouble);
  } else if (cJSON_IsString(value)) {
    jbuf_str(b, value->valuestring);
  } else if (cJSON_IsBool(value)) {
    jbuf_raw(b, cJSON_IsTrue(value) ? "true" : "false");
  } else if (cJSON_IsArray(value) || cJSON_IsObject(value)) {
    int object = cJSON_IsObject(value);
    jbuf_char(b, object ? '{' : '[');
    for (const cJSON *item = value->child; item; item = item->next) {
      if (object)
        jbuf_key(b, item->string, item != value->child);
      else if (item != value->child)
        jbuf_char(b, ',');
      jbuf_json(b, item);
    }
    jbuf_char(b, object ? '}' : ']');
  } else {
    jbuf_raw(b, "null");
  }
}
