/* A tiny test harness: CHECK counts, prints each failure with its place, and
 * check_done prints "NAME: N passed, N failed" and gives the exit status. */
#ifndef REPRO_CHECK_H
#define REPRO_CHECK_H

#include <stdio.h>

static int check_passed_, check_failed_;

#define CHECK(cond, ...)                                                                 \
    do {                                                                                 \
        if (cond) {                                                                      \
            check_passed_++;                                                             \
        } else {                                                                         \
            check_failed_++;                                                             \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                         \
            fprintf(stderr, __VA_ARGS__);                                                \
            fputc('\n', stderr);                                                         \
        }                                                                                \
    } while (0)

static inline int check_done(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, check_passed_, check_failed_);
    return check_failed_ ? 1 : 0;
}

#endif
