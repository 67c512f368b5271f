/* Two-way crossed random-effects ANOVA without replication (stats.h: stats_anova2):
 * how much of a metric's variance comes from the row factor (initialization seed) and
 * the column factor (data-order seed). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "internal.h"
#include "stats.h"

int stats_anova2(const double *y, size_t rows, size_t cols, stats_anova2_result *res,
                 stats_error *err)
{
    stats_gsl_off();
    memset(res, 0, sizeof *res);
    if (rows < 2 || cols < 2)
        return stats_fail(err, 1, "y: needs at least 2 rows and 2 columns, got %zu x %zu",
                          rows, cols);
    int status = stats_check_finite(y, rows * cols, "y", 1, err);
    if (status)
        return status;
    double *row_mean = calloc(rows + cols, sizeof *row_mean);
    if (!row_mean)
        return STATS_ENOMEM;
    double *col_mean = row_mean + rows;
    double r = (double)rows, c = (double)cols, total = 0.0;
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++) {
            row_mean[i] += y[i * cols + j] / c;
            col_mean[j] += y[i * cols + j] / r;
            total += y[i * cols + j];
        }
    double mean = total / (r * c);
    double ss_row = 0.0, ss_col = 0.0, ss_resid = 0.0, ss_total = 0.0;
    for (size_t i = 0; i < rows; i++)
        ss_row += c * (row_mean[i] - mean) * (row_mean[i] - mean);
    for (size_t j = 0; j < cols; j++)
        ss_col += r * (col_mean[j] - mean) * (col_mean[j] - mean);
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++) {
            double e = y[i * cols + j] - row_mean[i] - col_mean[j] + mean;
            double t = y[i * cols + j] - mean;
            ss_resid += e * e;
            ss_total += t * t;
        }
    free(row_mean);

    res->rows = rows;
    res->cols = cols;
    res->mean = mean;
    res->ss_row = ss_row;
    res->ss_col = ss_col;
    res->ss_resid = ss_resid;
    res->ss_total = ss_total;
    res->df_row = r - 1.0;
    res->df_col = c - 1.0;
    res->df_resid = (r - 1.0) * (c - 1.0);
    res->ms_row = ss_row / res->df_row;
    res->ms_col = ss_col / res->df_col;
    res->ms_resid = ss_resid / res->df_resid;
    /* residuals that vanish up to rounding: no F */
    if (res->ms_resid > 1e-24 * fmax(1.0, ss_total)) {
        res->f_row = res->ms_row / res->ms_resid;
        res->f_col = res->ms_col / res->ms_resid;
        res->p_row = gsl_cdf_fdist_Q(res->f_row, res->df_row, res->df_resid);
        res->p_col = gsl_cdf_fdist_Q(res->f_col, res->df_col, res->df_resid);
        if (!isfinite(res->p_row) || !isfinite(res->p_col))
            return STATS_ENUM;
        res->have_f = 1;
    }
    res->var_row = (res->ms_row - res->ms_resid) / c;
    res->var_col = (res->ms_col - res->ms_resid) / r;
    res->var_resid = res->ms_resid;
    res->negative_row = res->var_row < 0.0;
    res->negative_col = res->var_col < 0.0;
    double vr = fmax(res->var_row, 0.0), vc = fmax(res->var_col, 0.0);
    double sum = vr + vc + res->var_resid;
    if (sum > 0.0) {
        res->share_row = vr / sum;
        res->share_col = vc / sum;
        res->share_resid = res->var_resid / sum;
    }
    return STATS_OK;
}
