/* Argument checks and error reporting shared by stats/, the normal tail and a quickselect. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_roots.h>

#include "internal.h"

double stats_normal_q(double z) { return gsl_cdf_ugaussian_Q(z); }

void stats_gsl_off(void)
{
    gsl_set_error_handler_off();
}

int stats_fail(stats_error *err, int arg, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->arg = arg;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return STATS_EINVAL;
}

int stats_check_finite(const double *x, size_t n, const char *name, int arg, stats_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (isnan(x[i]))
            return stats_fail(err, arg, "%s[%zu]: NaN", name, i + 1);
        if (isinf(x[i]))
            return stats_fail(err, arg, "%s[%zu]: infinite", name, i + 1);
    }
    return STATS_OK;
}

int stats_check_alpha(double alpha, int arg, stats_error *err)
{
    if (!(alpha > 0.0 && alpha < 1.0))
        return stats_fail(err, arg, "alpha: must be in (0, 1), got %g", alpha);
    return STATS_OK;
}

int stats_brent(gsl_function *fn, double lo, double hi, double *root)
{
    gsl_root_fsolver *s = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
    if (!s)
        return STATS_ENOMEM;
    int status = gsl_root_fsolver_set(s, fn, lo, hi);
    int result = STATS_ENUM;
    for (int it = 0; status == GSL_SUCCESS && it < 300; it++) {
        status = gsl_root_fsolver_iterate(s);
        if (status != GSL_SUCCESS)
            break;
        int conv = gsl_root_test_interval(gsl_root_fsolver_x_lower(s),
                                          gsl_root_fsolver_x_upper(s), 1e-14, 1e-14);
        if (conv == GSL_SUCCESS) {
            *root = gsl_root_fsolver_root(s);
            result = STATS_OK;
            break;
        }
        if (conv != GSL_CONTINUE)
            break;
    }
    gsl_root_fsolver_free(s);
    return result;
}

double stats_select_kth(double *x, size_t n, size_t k)
{
    long long lo = 0, hi = (long long)n - 1, target = (long long)k;
    while (lo < hi) {
        double a = x[lo], b = x[lo + (hi - lo) / 2], c = x[hi];
        double pivot = fmax(fmin(a, b), fmin(fmax(a, b), c));
        long long i = lo - 1, j = hi + 1;
        for (;;) {
            do
                i++;
            while (x[i] < pivot);
            do
                j--;
            while (x[j] > pivot);
            if (i >= j)
                break;
            double t = x[i];
            x[i] = x[j];
            x[j] = t;
        }
        /* x[lo..j] <= pivot <= x[j+1..hi] */
        if (target <= j)
            hi = j;
        else
            lo = j + 1;
    }
    return x[target];
}
