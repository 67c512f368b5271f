/* Paired equivalence: two one-sided tests (TOST) of |mean(b - a)| < delta, by the t-test
 * or by the exact sign-flip test (stats.h: stats_tost). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "internal.h"
#include "stats.h"

/* Under the sign-flip null, the share of patterns whose statistic is at least as large
 * as the data's (upper = 1: H1 mean > theta, a pattern counts when sum_N (d - theta) <= 0)
 * or at most as large (upper = 0: H1 mean < theta, sum_N (d - theta) >= 0), N the flipped
 * indices; ties within STATS_TIE_RTOL of sum |d - theta| count.  Exact: every subset N as
 * (first half's sum) + (second half's sum).  Monte Carlo above STATS_SIGNFLIP_EXACT_MAX:
 * the patterns of stats_signflip, p = (1 + hits) / (1 + resamples). */
static int one_sided_p(const double *d, size_t n, double theta, int upper, size_t resamples,
                       uint64_t seed, double *p)
{
    double *e = malloc((n ? n : 1) * sizeof *e);
    if (!e)
        return STATS_ENOMEM;
    double abs_sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        e[i] = d[i] - theta;
        abs_sum += fabs(e[i]);
    }
    double tol = STATS_TIE_RTOL * abs_sum;
    double sign = upper ? 1.0 : -1.0; /* count sign * sum_N e <= tol */
    int status = STATS_OK;
    if (n <= STATS_SIGNFLIP_EXACT_MAX) {
        size_t h = n / 2;
        uint64_t n_lo = 1ull << h, n_hi = 1ull << (n - h);
        double *lo = malloc((n_lo + n_hi) * sizeof *lo);
        if (!lo) {
            free(e);
            return STATS_ENOMEM;
        }
        double *hi = lo + n_lo;
        for (uint64_t mask = 0; mask < n_lo; mask++) {
            double s = 0.0;
            for (size_t i = 0; i < h; i++)
                s += (mask >> i & 1u) ? e[i] : 0.0;
            lo[mask] = sign * s;
        }
        for (uint64_t mask = 0; mask < n_hi; mask++) {
            double s = 0.0;
            for (size_t i = 0; i < n - h; i++)
                s += (mask >> i & 1u) ? e[h + i] : 0.0;
            hi[mask] = sign * s;
        }
        uint64_t hits = 0;
        for (uint64_t j = 0; j < n_hi; j++)
            for (uint64_t i = 0; i < n_lo; i++)
                hits += lo[i] + hi[j] <= tol;
        free(lo);
        *p = (double)hits / ldexp(1.0, (int)n);
    } else {
        gsl_rng *r = stats_rng_alloc(seed, STATS_STREAM_SIGNFLIP);
        if (!r) {
            free(e);
            return STATS_ENOMEM;
        }
        uint64_t hits = 0;
        for (size_t k = 0; k < resamples; k++) {
            double s = 0.0;
            unsigned long bits = 0;
            for (size_t i = 0; i < n; i++) {
                if (i % 32 == 0)
                    bits = gsl_rng_get(r);
                if (!(bits & 1u))
                    s += e[i];
                bits >>= 1;
            }
            hits += sign * s <= tol;
        }
        gsl_rng_free(r);
        *p = (double)(hits + 1) / (double)(resamples + 1);
    }
    free(e);
    return status;
}

static int tost_t(const double *d, size_t n, const stats_tost_opts *o, stats_tost_result *res)
{
    if (n < 2) {
        res->degenerate = STATS_TOST_SMALL_N;
        return STATS_OK;
    }
    double ss = 0.0, max_abs = 0.0;
    for (size_t i = 0; i < n; i++) {
        ss += (d[i] - res->mean) * (d[i] - res->mean);
        max_abs = fmax(max_abs, fabs(d[i]));
    }
    res->sd = sqrt(ss / (double)(n - 1));
    res->df = (double)(n - 1);
    if (res->sd <= STATS_SD_RTOL * max_abs) {
        res->degenerate = STATS_TOST_CONSTANT;
        return STATS_OK;
    }
    double se = res->sd / sqrt((double)n);
    res->t_lower = (res->mean + o->delta) / se;
    res->t_upper = (res->mean - o->delta) / se;
    res->p_lower = gsl_cdf_tdist_Q(res->t_lower, res->df);
    res->p_upper = gsl_cdf_tdist_P(res->t_upper, res->df);
    double t_crit = gsl_cdf_tdist_Qinv(o->alpha, res->df);
    if (!isfinite(res->p_lower) || !isfinite(res->p_upper) || !isfinite(t_crit))
        return STATS_ENUM;
    res->ci[0] = res->mean - t_crit * se;
    res->ci[1] = res->mean + t_crit * se;
    res->ci_bounded = 1;
    res->defined = 1;
    return STATS_OK;
}

static int tost_signflip(const double *d, size_t n, const stats_tost_opts *o,
                         stats_tost_result *res)
{
    if (n < 1) {
        res->degenerate = STATS_TOST_SMALL_N;
        return STATS_OK;
    }
    int status = one_sided_p(d, n, -o->delta, 1, o->resamples, o->seed, &res->p_lower);
    if (!status)
        status = one_sided_p(d, n, o->delta, 0, o->resamples, o->seed, &res->p_upper);
    if (status)
        return status;
    stats_signflip_ci_result ci;
    status = stats_signflip_ci(d, n, o->alpha, 1, o->resamples, o->seed, &ci, NULL);
    if (status)
        return status;
    res->ci_bounded = ci.bounded;
    res->ci[0] = ci.ci[0];
    res->ci[1] = ci.ci[1];
    if (n >= 2) {
        double ss = 0.0;
        for (size_t i = 0; i < n; i++)
            ss += (d[i] - res->mean) * (d[i] - res->mean);
        res->sd = sqrt(ss / (double)(n - 1));
    }
    res->defined = 1;
    return STATS_OK;
}

int stats_tost(const double *a, size_t na, const double *b, size_t nb,
               const stats_tost_opts *opts, stats_tost_result *res, stats_error *err)
{
    stats_gsl_off();
    memset(res, 0, sizeof *res);
    int status;
    if (na != nb)
        return stats_fail(err, 2, "b: length %zu differs from the length %zu of a", nb, na);
    if ((status = stats_check_finite(a, na, "a", 1, err)) ||
        (status = stats_check_finite(b, nb, "b", 2, err)))
        return status;
    if (opts->test != STATS_TEST_T && opts->test != STATS_TEST_SIGNFLIP)
        return stats_fail(err, 3, "test: must be t or signflip");
    if (!(opts->delta > 0.0 && isfinite(opts->delta)))
        return stats_fail(err, 3, "delta: must be finite and > 0, got %g", opts->delta);
    if (!(opts->alpha > 0.0 && opts->alpha < 0.5))
        return stats_fail(err, 3, "alpha: must be in (0, 0.5), got %g", opts->alpha);
    if (opts->test == STATS_TEST_SIGNFLIP && na > STATS_SIGNFLIP_EXACT_MAX &&
        opts->resamples < STATS_MIN_RESAMPLES)
        return stats_fail(err, 3, "resamples: must be >= %d, got %zu", STATS_MIN_RESAMPLES,
                          opts->resamples);
    double *d = malloc((na ? na : 1) * sizeof *d);
    if (!d)
        return STATS_ENOMEM;
    double sum = 0.0;
    for (size_t i = 0; i < na; i++) {
        d[i] = b[i] - a[i];
        sum += d[i];
    }
    res->n = na;
    status = stats_check_finite(d, na, "b - a", 2, err);
    if (!status) {
        res->mean = na > 0 ? sum / (double)na : 0.0;
        status = opts->test == STATS_TEST_T ? tost_t(d, na, opts, res)
                                            : tost_signflip(d, na, opts, res);
    }
    free(d);
    if (status) {
        memset(res, 0, sizeof *res);
        return status;
    }
    if (res->defined) {
        res->p = fmax(res->p_lower, res->p_upper);
        res->equivalent = res->p <= opts->alpha;
    }
    return STATS_OK;
}
