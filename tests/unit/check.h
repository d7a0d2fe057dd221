/* check.h: the unit tests' one assertion macro. Each test binary prints one
** line per check ("ok", "FAIL" or "skip") that tests/run counts, and exits
** non-zero if any check failed. */
#ifndef CHECK_H
#define CHECK_H
#include <stdio.h>
#include <string.h>

static int check_failed;

#define CHECK(cond, ...) do { \
    if (cond) { printf("ok   "); } \
    else { printf("FAIL %s:%d: ", __FILE__, __LINE__); check_failed = 1; } \
    printf(__VA_ARGS__); printf("\n"); fflush(stdout); \
} while (0)

#define SKIP(...) do { printf("skip "); printf(__VA_ARGS__); printf("\n"); } while (0)

#define CHECK_STR(got, want, what) do { \
    const char *g_ = (got), *w_ = (want); \
    CHECK(g_ && w_ && strcmp(g_, w_) == 0, "%s: got '%s', want '%s'", what, \
          g_ ? g_ : "(null)", w_ ? w_ : "(null)"); \
} while (0)

#define CHECK_DONE() return check_failed

#endif
