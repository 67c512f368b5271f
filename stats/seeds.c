/* How many seeds a design needs (stats.h: stats_seeds_needed, stats_min_seeds). */
#include <math.h>

#include <gsl/gsl_cdf.h>

#include "internal.h"
#include "stats.h"

size_t stats_min_seeds(int test, double level)
{
    if (test != STATS_TEST_SIGNFLIP)
        return 2;
    /* the smallest p of the exact two-sided test is 2 / 2^n = 2^(1 - n), exact in binary */
    size_t n = 1;
    while (n < STATS_SEEDS_MAX && ldexp(1.0, 1 - (int)n) > level)
        n++;
    return n;
}

int stats_seeds_needed(const stats_design *g, stats_seeds_result *res, stats_error *err)
{
    stats_gsl_off();
    *res = (stats_seeds_result){0};
    if (!(g->sd > 0.0 && isfinite(g->sd)))
        return stats_fail(err, 1, "sd: must be finite and > 0, got %g", g->sd);
    if (!(g->delta > 0.0 && isfinite(g->delta)))
        return stats_fail(err, 1, "delta: must be finite and > 0, got %g", g->delta);
    int status = stats_check_alpha(g->alpha, 1, err);
    if (status)
        return status;
    if (g->m < 1)
        return stats_fail(err, 1, "m: must be >= 1, got %zu", g->m);
    if (g->test != STATS_TEST_T && g->test != STATS_TEST_SIGNFLIP)
        return stats_fail(err, 1, "test: must be t or signflip");
    double level = g->alpha / (double)g->m;
    if (!(g->power > level && g->power < 1.0))
        return stats_fail(err, 1, "power: must be in (alpha / m, 1) = (%g, 1), got %g", level,
                          g->power);
    res->level = level;
    res->d_z = g->delta / g->sd;
    res->n_reach = stats_min_seeds(g->test, level);
    if (res->n_reach >= STATS_SEEDS_MAX)
        return stats_fail(err, 1, "alpha / m = %g: the exact sign-flip test would need more "
                          "than %d seeds to reach it", level, STATS_SEEDS_MAX);

    /* power grows with n: double until it reaches the target, then bisect */
    size_t lo = 1, hi = 2;
    double pw;
    for (;;) {
        if (res->d_z * sqrt((double)hi) > STATS_NCT_MAX_NCP) {
            pw = 1.0; /* a noncentrality beyond 1000 has power 1 to double precision */
            break;
        }
        if ((status = stats_power(hi, res->d_z, level, &pw, NULL)))
            return STATS_ENUM;
        if (pw >= g->power)
            break;
        lo = hi;
        hi *= 2;
        if (hi > STATS_SEEDS_MAX)
            return stats_fail(err, 1, "d_z = delta / sd = %g: more than %d seeds would be "
                              "needed for power %g at alpha / m = %g", res->d_z,
                              STATS_SEEDS_MAX, g->power, level);
    }
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2; /* >= 2: lo >= 1, hi >= 4 here */
        if ((status = stats_power(mid, res->d_z, level, &pw, NULL)))
            return STATS_ENUM;
        if (pw >= g->power)
            hi = mid;
        else
            lo = mid;
    }
    res->n_power = hi;
    res->n = res->n_power > res->n_reach ? res->n_power : res->n_reach;
    if (res->d_z * sqrt((double)res->n) > STATS_NCT_MAX_NCP)
        res->power = 1.0;
    else if ((status = stats_power(res->n, res->d_z, level, &res->power, NULL)))
        return STATS_ENUM;
    return STATS_OK;
}

int stats_sd_upper(double sd, double df, double conf, double *limit, stats_error *err)
{
    stats_gsl_off();
    *limit = NAN;
    if (!(sd >= 0.0 && isfinite(sd)))
        return stats_fail(err, 1, "sd: must be finite and >= 0, got %g", sd);
    if (!(df > 0.0 && isfinite(df)))
        return stats_fail(err, 2, "df: must be finite and > 0, got %g", df);
    if (!(conf > 0.0 && conf < 1.0))
        return stats_fail(err, 3, "conf: must be in (0, 1), got %g", conf);
    double q = gsl_cdf_chisq_Pinv(1.0 - conf, df);
    if (!(q > 0.0 && isfinite(q)))
        return stats_fail(err, 2, "df %g, conf %g: no chi-square quantile", df, conf);
    *limit = sd * sqrt(df / q);
    return 0;
}
