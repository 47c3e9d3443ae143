/*
 * Error codes. One X-macro list in sieve.h generates the enum, the messages
 * and the names, so the three can never disagree.
 */
#include "sieve.h"

const char *sieve_strerror(int err) {
  switch (err) {
  case SIEVE_OK:
    return "success";
#define SIEVE__MESSAGE_CASE(name, value, message) \
  case SIEVE_##name:                              \
    return message;
    SIEVE_ERRNO_MAP(SIEVE__MESSAGE_CASE)
#undef SIEVE__MESSAGE_CASE
  default:
    return "unknown error";
  }
}

const char *sieve_err_name(int err) {
  switch (err) {
  case SIEVE_OK:
    return "SIEVE_OK";
#define SIEVE__NAME_CASE(name, value, message) \
  case SIEVE_##name:                           \
    return "SIEVE_" #name;
    SIEVE_ERRNO_MAP(SIEVE__NAME_CASE)
#undef SIEVE__NAME_CASE
  default:
    return "SIEVE_UNKNOWN";
  }
}
