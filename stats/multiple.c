/* Multiple comparisons: Holm's step-down and Bonferroni adjusted p-values. */
#include <stdlib.h>

#include "internal.h"
#include "stats.h"

static int check_p(const double *p, size_t m, double alpha, stats_error *err)
{
    int status = stats_check_finite(p, m, "p", 1, err);
    if (status)
        return status;
    for (size_t i = 0; i < m; i++)
        if (p[i] < 0.0 || p[i] > 1.0)
            return stats_fail(err, 1, "p[%zu]: must be in [0, 1], got %g", i + 1, p[i]);
    return stats_check_alpha(alpha, 2, err);
}

int stats_bonferroni(const double *p, size_t m, double alpha, double *adjusted, int *reject,
                     stats_error *err)
{
    stats_gsl_off();
    int status = check_p(p, m, alpha, err);
    if (status)
        return status;
    for (size_t i = 0; i < m; i++) {
        double q = (double)m * p[i];
        adjusted[i] = q > 1.0 ? 1.0 : q;
        reject[i] = adjusted[i] <= alpha;
    }
    return STATS_OK;
}

typedef struct {
    double p;
    size_t index;
} ranked;

/* Ascending p, ties in input order, so the result does not depend on qsort. */
static int cmp_ranked(const void *x, const void *y)
{
    const ranked *a = (const ranked *)x, *b = (const ranked *)y;
    if (a->p != b->p)
        return a->p < b->p ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

int stats_holm(const double *p, size_t m, double alpha, double *adjusted, int *reject,
               stats_error *err)
{
    stats_gsl_off();
    int status = check_p(p, m, alpha, err);
    if (status)
        return status;
    if (m == 0)
        return STATS_OK;
    ranked *order = malloc(m * sizeof *order);
    if (!order)
        return STATS_ENOMEM;
    for (size_t i = 0; i < m; i++)
        order[i] = (ranked){p[i], i};
    qsort(order, m, sizeof *order, cmp_ranked);
    double running = 0.0;
    for (size_t k = 0; k < m; k++) {
        double q = (double)(m - k) * order[k].p;
        if (q > running)
            running = q;
        size_t i = order[k].index;
        adjusted[i] = running > 1.0 ? 1.0 : running;
        reject[i] = adjusted[i] <= alpha;
    }
    free(order);
    return STATS_OK;
}
