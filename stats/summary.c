/* One sample's n, mean, sd, min, max and median. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "internal.h"
#include "stats.h"

int stats_summary(const double *x, size_t n, stats_summary_result *res, stats_error *err)
{
    stats_gsl_off();
    memset(res, 0, sizeof *res);
    int status = stats_check_finite(x, n, "x", 1, err);
    if (status)
        return status;
    res->n = n;
    if (n == 0)
        return STATS_OK;
    double *sorted = malloc(n * sizeof *sorted);
    if (!sorted)
        return STATS_ENOMEM;
    memcpy(sorted, x, n * sizeof *sorted);
    gsl_sort(sorted, 1, n);
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += x[i];
    res->mean = sum / (double)n;
    res->min = sorted[0];
    res->max = sorted[n - 1];
    res->median = gsl_stats_median_from_sorted_data(sorted, 1, n);
    free(sorted);
    res->defined = STATS_HAVE_MEAN;
    if (n >= 2) {
        double ss = 0.0;
        for (size_t i = 0; i < n; i++)
            ss += (x[i] - res->mean) * (x[i] - res->mean);
        res->sd = sqrt(ss / (double)(n - 1));
        res->defined |= STATS_HAVE_SD;
    }
    return STATS_OK;
}
