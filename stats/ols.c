/* Multiple linear regression by ordinary least squares (stats.h): GSL's SVD solver with
 * a rank check, so collinear columns (a factor's dummy that equals another, a constant
 * covariate beside the intercept) are refused instead of fitted arbitrarily. */
#include <math.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_multifit.h>

#include "internal.h"
#include "stats.h"

/* Singular values below this times the largest count as zero. */
#define OLS_RANK_TOL 1e-10

int stats_ols(const double *x, const double *y, size_t n, size_t p, double alpha,
              stats_ols_result *res, stats_error *err)
{
    stats_gsl_off();
    if (p < 1 || n <= p)
        return stats_fail(err, 3, "sizes: needs more rows than columns (n - p degrees of "
                          "freedom), got n = %zu, p = %zu", n, p);
    if (stats_check_finite(x, n * p, "x", 1, err) || stats_check_finite(y, n, "y", 2, err))
        return STATS_EINVAL;
    if (stats_check_alpha(alpha, 4, err))
        return STATS_EINVAL;
    gsl_matrix *X = gsl_matrix_alloc(n, p), *cov = gsl_matrix_alloc(p, p);
    gsl_vector *Y = gsl_vector_alloc(n), *c = gsl_vector_alloc(p);
    gsl_multifit_linear_workspace *w = gsl_multifit_linear_alloc(n, p);
    int status = STATS_OK;
    if (!X || !cov || !Y || !c || !w) {
        status = STATS_ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        gsl_vector_set(Y, i, y[i]);
        for (size_t j = 0; j < p; j++)
            gsl_matrix_set(X, i, j, x[i * p + j]);
    }
    double chisq;
    size_t rank;
    if (gsl_multifit_linear_tsvd(X, Y, OLS_RANK_TOL, c, cov, &chisq, &rank, w)) {
        status = STATS_ENUM;
        goto done;
    }
    if (rank < p) {
        status = stats_fail(err, 1, "x: its %zu columns have rank %zu (collinear columns: "
                            "no unique fit)", p, rank);
        goto done;
    }
    res->n = n;
    res->p = p;
    res->df = (double)(n - p);
    res->resid_sd = sqrt(chisq / res->df);
    res->t_quantile = gsl_cdf_tdist_Pinv(1.0 - 0.5 * alpha, res->df);
    /* GSL's cov is (X'X)^-1 scaled by chisq / (n - p): the usual estimate */
    for (size_t j = 0; j < p; j++) {
        res->coef[j] = gsl_vector_get(c, j);
        res->se[j] = sqrt(gsl_matrix_get(cov, j, j));
        res->ci[2 * j] = res->coef[j] - res->t_quantile * res->se[j];
        res->ci[2 * j + 1] = res->coef[j] + res->t_quantile * res->se[j];
    }
done:
    gsl_multifit_linear_free(w);
    gsl_vector_free(c);
    gsl_vector_free(Y);
    gsl_matrix_free(cov);
    gsl_matrix_free(X);
    return status;
}
