/* Ordinary least squares of y on x with the interval of the fitted mean at a point
 * (stats.h). */
#include <math.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_fit.h>

#include "internal.h"
#include "stats.h"

int stats_linfit(const double *x, const double *y, size_t n, double x0, double alpha,
                 stats_linfit_result *res, stats_error *err)
{
    stats_gsl_off();
    if (n < 3)
        return stats_fail(err, 1, "x: needs at least 3 points (n - 2 degrees of freedom), got %zu",
                          n);
    if (stats_check_finite(x, n, "x", 1, err) || stats_check_finite(y, n, "y", 2, err))
        return STATS_EINVAL;
    if (!isfinite(x0))
        return stats_fail(err, 3, "at: not finite");
    if (stats_check_alpha(alpha, 4, err))
        return STATS_EINVAL;
    double mean = 0.0;
    for (size_t i = 0; i < n; i++)
        mean += x[i];
    mean /= (double)n;
    double sxx = 0.0;
    for (size_t i = 0; i < n; i++)
        sxx += (x[i] - mean) * (x[i] - mean);
    if (!(sxx > 0.0))
        return stats_fail(err, 1, "x: every value is the same, so no slope is defined");
    double c0, c1, cov00, cov01, cov11, sumsq;
    if (gsl_fit_linear(x, 1, y, 1, n, &c0, &c1, &cov00, &cov01, &cov11, &sumsq))
        return STATS_ENUM;
    res->n = n;
    res->df = (double)(n - 2);
    res->intercept = c0;
    res->slope = c1;
    res->resid_sd = sqrt(sumsq / res->df);
    double q = gsl_cdf_tdist_Pinv(1.0 - 0.5 * alpha, res->df);
    res->slope_se = sqrt(cov11);
    res->slope_ci[0] = c1 - q * res->slope_se;
    res->slope_ci[1] = c1 + q * res->slope_se;
    res->at = x0;
    res->fit = c0 + c1 * x0;
    res->fit_se = res->resid_sd * sqrt(1.0 / (double)n + (x0 - mean) * (x0 - mean) / sxx);
    res->fit_ci[0] = res->fit - q * res->fit_se;
    res->fit_ci[1] = res->fit + q * res->fit_se;
    res->t_quantile = q;
    return STATS_OK;
}
