/* Power of the two-sided paired t-test and its minimum detectable effect. */
#include <math.h>

#include <gsl/gsl_cdf.h>

#include "internal.h"
#include "stats.h"

static int check_design(size_t n, double alpha, int alpha_arg, stats_error *err)
{
    if (n < 2)
        return stats_fail(err, 1, "n: must be >= 2, got %zu", n);
    return stats_check_alpha(alpha, alpha_arg, err);
}

/* P(T > t_crit) + P(T < -t_crit), T noncentral t with df = n - 1, ncp = d_z sqrt(n). */
static int power_at(double d_z, size_t n, double alpha, double *power)
{
    double df = (double)n - 1.0;
    double t_crit = gsl_cdf_tdist_Qinv(0.5 * alpha, df);
    double upper, lower;
    if (!isfinite(t_crit))
        return STATS_ENUM;
    double ncp = d_z * sqrt((double)n);
    int status = stats_nct_cdf(t_crit, df, ncp, &upper);
    if (!status)
        status = stats_nct_cdf(-t_crit, df, ncp, &lower);
    if (status)
        return STATS_ENUM;
    double p = 1.0 - upper + lower;
    *power = p < 0.0 ? 0.0 : p > 1.0 ? 1.0 : p;
    return STATS_OK;
}

int stats_power(size_t n, double d_z, double alpha, double *power, stats_error *err)
{
    stats_gsl_off();
    int status = check_design(n, alpha, 3, err);
    if (status)
        return status;
    if (!isfinite(d_z) || fabs(d_z) * sqrt((double)n) > STATS_NCT_MAX_NCP)
        return stats_fail(err, 2, "d_z: |d_z| sqrt(n) must be finite and <= %g, got d_z = %g",
                          STATS_NCT_MAX_NCP, d_z);
    return power_at(d_z, n, alpha, power);
}

typedef struct {
    size_t n;
    double alpha, target;
    int status;
} mde_root;

static double mde_root_fn(double d_z, void *params)
{
    mde_root *r = (mde_root *)params;
    double p;
    int status = power_at(d_z, r->n, r->alpha, &p);
    if (status) {
        r->status = status;
        return GSL_NAN;
    }
    return p - r->target;
}

int stats_mde(size_t n, double alpha, double power, double *d_z, stats_error *err)
{
    stats_gsl_off();
    int status = check_design(n, alpha, 2, err);
    if (status)
        return status;
    if (!(power > alpha && power < 1.0))
        return stats_fail(err, 3, "power: must be in (alpha, 1) = (%g, 1), got %g", alpha, power);
    mde_root r = {n, alpha, power, STATS_OK};
    /* power(0) = alpha < target; double the upper end until it reaches the target */
    double lo = 0.0, hi = 1.0;
    for (;;) {
        double f = mde_root_fn(hi, &r);
        if (r.status)
            return STATS_ENUM;
        if (f >= 0.0)
            break;
        lo = hi;
        hi *= 2.0;
        if (hi * sqrt((double)n) > STATS_NCT_MAX_NCP)
            return STATS_ENUM;
    }
    gsl_function fn = {mde_root_fn, &r};
    status = stats_brent(&fn, lo, hi, d_z);
    if (r.status || status)
        return STATS_ENUM;
    return STATS_OK;
}
