/* stats/ols.c: with an intercept column and one covariate it is stats_linfit; a
 * dummy's coefficient is the difference of two group means with the pooled standard
 * error; collinear columns and too few rows are refused, naming the argument. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../stats/stats.h"
#include "check.h"

int main(void)
{
    const double xs[5] = {1, 2, 3, 4, 5}, ys[5] = {2.1, 3.9, 6.2, 7.8, 10.1};
    double x[10], coef[2], se[2], ci[4];
    for (int i = 0; i < 5; i++) {
        x[2 * i] = 1;
        x[2 * i + 1] = xs[i];
    }
    stats_ols_result r = {.coef = coef, .se = se, .ci = ci};
    stats_linfit_result l;
    stats_error err;
    CHECK(stats_ols(x, ys, 5, 2, 0.05, &r, &err) == STATS_OK, "%s", err.msg);
    CHECK(stats_linfit(xs, ys, 5, 0.0, 0.05, &l, &err) == STATS_OK, "%s", err.msg);
    CHECK(fabs(coef[1] - l.slope) < 1e-12 && fabs(se[1] - l.slope_se) < 1e-12 &&
              fabs(ci[2] - l.slope_ci[0]) < 1e-12 && r.df == 3,
          "ols = linfit: slope %.15g (%.15g), se %.15g (%.15g)", coef[1], l.slope, se[1],
          l.slope_se);
    const double g[12] = {1, 0, 1, 0, 1, 0, 1, 1, 1, 1, 1, 1}, gy[6] = {1, 2, 3, 2, 4, 6};
    CHECK(stats_ols(g, gy, 6, 2, 0.05, &r, &err) == STATS_OK, "%s", err.msg);
    CHECK(fabs(coef[1] - 2) < 1e-12 && fabs(se[1] - sqrt(2.5 * 2.0 / 3.0)) < 1e-12,
          "a dummy: the difference of means %.15g, pooled se %.15g", coef[1], se[1]);
    const double same[8] = {1, 2, 1, 2, 1, 2, 1, 2}, sy[4] = {1, 2, 3, 4};
    CHECK(stats_ols(same, sy, 4, 2, 0.05, &r, &err) == STATS_EINVAL && err.arg == 1 &&
              strstr(err.msg, "rank 1"),
          "collinear columns refused: %s", err.msg);
    CHECK(stats_ols(same, sy, 2, 2, 0.05, &r, &err) == STATS_EINVAL && err.arg == 3,
          "n <= p refused: %s", err.msg);
    CHECK(stats_ols(x, ys, 5, 2, 1.5, &r, &err) == STATS_EINVAL && err.arg == 4,
          "alpha outside (0, 1) refused: %s", err.msg);
    return check_done("test_ols");
}
