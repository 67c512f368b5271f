/* Helpers shared by the files of stats/ (not part of its interface). */
#ifndef REPRO_STATS_INTERNAL_H
#define REPRO_STATS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

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

/* The k-th smallest (0-based) of x[n], k < n; reorders x.  Quickselect with Hoare's
 * partition around the median of x[lo], x[mid], x[hi]: that pivot is at most the larger
 * of x[lo] and x[mid] and at least the smaller of x[mid] and x[hi], so both parts are
 * non-empty and every pass shrinks the range. */
double stats_select_kth(double *x, size_t n, size_t k);

/* Checks of the group-sequential entry points: look sizes n (err->arg 1) and a shape. */
int stats_seq_check_looks(const size_t *n, size_t K, stats_error *err);
int stats_seq_check_shape(int shape, int arg, stats_error *err);

/* The normal quantile with the same two-sided p as |T| on df degrees of freedom. */
double stats_seq_t_as_z(double abs_t, double df);

/* The sign-flip machinery of stats_seq_flip_t (stats/sequential_exact.c), shared with
 * stats_seq_simulate: the buffers of one comparison of K looks. */
typedef struct {
    double *sums;    /* (K + 1, STATS_SEQ_FLIPS): S per look, then scratch */
    uint64_t *ties;  /* (STATS_SEQ_FLIPS) tie keys */
    struct seq_tied *tied; /* (STATS_SEQ_FLIPS) scratch */
    unsigned char *alive;  /* (STATS_SEQ_FLIPS) */
} stats_seq_flips;
int stats_seq_flips_alloc(stats_seq_flips *f, size_t K); /* STATS_ENOMEM or STATS_OK */
void stats_seq_flips_free(stats_seq_flips *f);
/* f->ties and f->sums: S_k of every vector, sum_{j < n_k} f_ij d_j in the same order for
 * every i, the vectors drawn from stream (key, STATS_STREAM_SEQ_FLIP) (stats.h). */
void stats_seq_flip_draw(stats_seq_flips *f, uint64_t key, const double *d, const size_t *n,
                         size_t K);
/* allowed[k] = floor(spend(t_k) STATS_SEQ_FLIPS). */
void stats_seq_flip_allowed(int shape, double alpha, const size_t *n, size_t K,
                            size_t *allowed);
/* The first look (0-based) at which vector 0 crosses, or K; with stop_early it stops
 * there.  v and crossed (K, may be NULL) get v_k and the vectors crossed by look k. */
size_t stats_seq_flip_walk(stats_seq_flips *f, size_t K, const size_t *allowed, int stop_early,
                           double *v, size_t *crossed);
/* For stats_seq_rank_spending (stats/sequential_sim.c): dev (studies, K) gets
 * |2 W+ - n_k (n_k + 1) / 2| of null studies of N(0, 1) differences, stream
 * (seed, STATS_STREAM_SEQ_SPEND). */
int stats_seq_null_ranks(const size_t *n, size_t K, size_t studies, uint64_t seed,
                         uint32_t *dev);

#endif
