/* Proportions: the Clopper-Pearson interval and the probability of improvement
 * (stats.h: stats_clopper_pearson, stats_improvement). */
#include <math.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "internal.h"
#include "stats.h"

int stats_clopper_pearson(size_t k, size_t n, double alpha, double ci[2], stats_error *err)
{
    stats_gsl_off();
    ci[0] = ci[1] = 0.0;
    if (n < 1)
        return stats_fail(err, 2, "n: must be >= 1, got %zu", n);
    if (k > n)
        return stats_fail(err, 1, "k: must be <= n = %zu, got %zu", n, k);
    int status = stats_check_alpha(alpha, 3, err);
    if (status)
        return status;
    double kd = (double)k, nd = (double)n;
    double lo = k == 0 ? 0.0 : gsl_cdf_beta_Pinv(0.5 * alpha, kd, nd - kd + 1.0);
    double hi = k == n ? 1.0 : gsl_cdf_beta_Pinv(1.0 - 0.5 * alpha, kd + 1.0, nd - kd);
    if (!isfinite(lo) || !isfinite(hi))
        return STATS_ENUM;
    ci[0] = lo;
    ci[1] = hi;
    return STATS_OK;
}

int stats_improvement(const double *a, size_t na, const double *b, size_t nb,
                      int lower_is_better, double alpha, stats_improvement_result *res,
                      stats_error *err)
{
    stats_gsl_off();
    memset(res, 0, sizeof *res);
    int status;
    if (na != nb)
        return stats_fail(err, 2, "b: length %zu differs from the length %zu of a", nb, na);
    if ((status = stats_check_finite(a, na, "a", 1, err)) ||
        (status = stats_check_finite(b, nb, "b", 2, err)) ||
        (status = stats_check_alpha(alpha, 3, err)))
        return status;
    res->n = na;
    for (size_t i = 0; i < na; i++) {
        if (b[i] == a[i])
            res->ties++;
        else if ((b[i] < a[i]) == (lower_is_better != 0))
            res->better++;
    }
    if (na == 0)
        return STATS_OK;
    res->share = (double)res->better / (double)na;
    if ((status = stats_clopper_pearson(res->better, na, alpha, res->ci, err)))
        return status;
    res->defined = 1;
    return STATS_OK;
}
