/* The listings of `sieve profiles` and `sieve axes`; see listing.h. */
#include "listing.h"

#include <stdio.h>
#include <stdlib.h>

const char *cli_listing_str(const cJSON *item, const char *key) {
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(item, key);
  return cJSON_IsString(s) ? s->valuestring : "";
}

int cli_listing_main(const cli_command *self, int argc, char **argv, cJSON *list,
                     void (*print_item)(const cJSON *item)) {
  static const char *const formats[] = {"text", "json", NULL};
  const char *format = "text";
  const cli_option options[] = {{"--format", CLI_VALUE, &format}};
  int rc = cli_parse(self, options, 1, argc, argv, NULL, 0, NULL);
  int json = rc == 0 ? cli_format(self, format, formats) : -1;
  if (json == 1) {
    char *text = cJSON_PrintUnformatted(list);
    printf("%s\n", text ? text : "null");
    free(text);
  } else if (json == 0) {
    for (const cJSON *item = list ? list->child : NULL; item; item = item->next)
      print_item(item);
  }
  cJSON_Delete(list);
  return rc != 0 ? rc : json < 0 ? 2 : 0;
}
