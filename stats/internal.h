/* Helpers shared by the files of stats/ (not part of its interface). */
#ifndef REPRO_STATS_INTERNAL_H
#define REPRO_STATS_INTERNAL_H

#include <stddef.h>

#include <gsl/gsl_math.h>

#include "stats.h"

/* Turns GSL's abort-on-error handler off; every entry point calls it first. */
void stats_gsl_off(void);

/* Fills err (when not NULL) and returns STATS_EINVAL. */
int stats_fail(stats_error *err, int arg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* STATS_EINVAL naming `name[i]` (1-based, as Lua numbers it) for the first NaN or
 * infinite element. */
int stats_check_finite(const double *x, size_t n, const char *name, int arg, stats_error *err);

/* STATS_EINVAL unless 0 < alpha < 1. */
int stats_check_alpha(double alpha, int arg, stats_error *err);

/* The root of fn in [lo, hi] (a bracket: signs differ at the ends) by Brent's method,
 * to 1e-14 relative (and absolute).  STATS_ENUM when GSL fails or it does not converge;
 * a function that cannot be evaluated returns NaN, which GSL reports as a failure. */
int stats_brent(gsl_function *fn, double lo, double hi, double *root);

#endif
