/* Learning-rate sensitivity over a sweep, with a bootstrap over seeds (stats.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "stats.h"

typedef struct {
    double value;
    uint64_t count;
} weighted;

static int cmp_weighted(const void *x, const void *y)
{
    double a = ((const weighted *)x)->value, b = ((const weighted *)y)->value;
    return a < b ? -1 : a > b;
}

/* The quantile at f (total - 1) of the expanded sorted values (the convention of
 * stats_boot_quantile), sorting w[m] in place. */
static double weighted_quantile(weighted *w, size_t m, uint64_t total, double f)
{
    qsort(w, m, sizeof *w, cmp_weighted);
    double h = f * (double)(total - 1);
    double lo = floor(h);
    uint64_t pos = (uint64_t)lo;
    double v[2];
    for (int k = 0; k < 2; k++) {
        uint64_t want = pos + (uint64_t)k < total ? pos + (uint64_t)k : total - 1, seen = 0;
        v[k] = w[m - 1].value;
        for (size_t i = 0; i < m; i++) {
            seen += w[i].count;
            if (want < seen) {
                v[k] = w[i].value;
                break;
            }
        }
    }
    return v[0] + (h - lo) * (v[1] - v[0]);
}

typedef struct {
    const double *clipped; /* (G, J, n) */
    size_t groups, points, n, ref;
    double *mean;          /* (G, J) scratch */
    weighted *sens, *diff; /* (G, cap) resampled statistics */
    weighted *own, *own_diff; /* (G, cap) the same against each group's own best */
    size_t m, cap;
    uint64_t fact[STATS_BOOT_EXACT_MAX + 1];
    size_t *counts;        /* (n) the resample's count of each seed */
} sweep;

/* The statistic of one resample with seed counts c (summing to n), weight w: the
 * sensitivity of every group against the pooled best (sens_out) and against the group's
 * own best (own_out), and each one's difference from the reference group. */
static void add_resample(sweep *s, const size_t *c, uint64_t w, double *sens_out,
                         double *own_out)
{
    size_t G = s->groups, J = s->points, n = s->n;
    double star = INFINITY;
    for (size_t g = 0; g < G; g++)
        for (size_t j = 0; j < J; j++) {
            const double *x = s->clipped + (g * J + j) * n;
            double sum = 0.0;
            for (size_t i = 0; i < n; i++)
                sum += (double)c[i] * x[i];
            s->mean[g * J + j] = sum / (double)n;
            if (s->mean[g * J + j] < star)
                star = s->mean[g * J + j];
        }
    for (size_t g = 0; g < G; g++) {
        double sum = 0.0, own = INFINITY;
        for (size_t j = 0; j < J; j++) {
            sum += s->mean[g * J + j] - star;
            if (s->mean[g * J + j] < own)
                own = s->mean[g * J + j];
        }
        sens_out[g] = sum / (double)J;
        sum = 0.0;
        for (size_t j = 0; j < J; j++)
            sum += s->mean[g * J + j] - own;
        own_out[g] = sum / (double)J;
    }
    if (!s->sens)
        return;
    for (size_t g = 0; g < G; g++) {
        s->sens[g * s->cap + s->m] = (weighted){sens_out[g], w};
        s->diff[g * s->cap + s->m] = (weighted){sens_out[g] - sens_out[s->ref], w};
        s->own[g * s->cap + s->m] = (weighted){own_out[g], w};
        s->own_diff[g * s->cap + s->m] = (weighted){own_out[g] - own_out[s->ref], w};
    }
    s->m++;
}

/* Every multiset of seed indices (c_i >= 0, sum n) with its multinomial count. */
static void enumerate(sweep *s, size_t i, size_t left, uint64_t denom, double *scratch)
{
    if (i + 1 == s->n) {
        s->counts[i] = left;
        add_resample(s, s->counts, s->fact[s->n] / (denom * s->fact[left]), scratch,
                     scratch + s->groups);
        return;
    }
    for (size_t c = 0; c <= left; c++) {
        s->counts[i] = c;
        enumerate(s, i + 1, left - c, denom * s->fact[c], scratch);
    }
}

int stats_lr_sensitivity(const double *loss, const double *init, size_t groups, size_t points,
                         size_t n, const stats_lrsens_opts *opts, stats_lrsens_result *res,
                         stats_error *err)
{
    stats_gsl_off();
    if (groups < 1 || points < 1 || n < 1)
        return stats_fail(err, 1, "loss: needs at least 1 group, 1 grid point and 1 seed");
    for (size_t k = 0; k < groups * points * n; k++)
        if (isinf(loss[k]))
            return stats_fail(err, 1, "loss[%zu]: infinite (a diverged run is NaN)", k + 1);
    if (stats_check_finite(init, groups * n, "init", 2, err))
        return STATS_EINVAL;
    if (opts->ref >= groups)
        return stats_fail(err, 3, "ref: group %zu of %zu", opts->ref + 1, groups);
    if (stats_check_alpha(opts->alpha, 3, err))
        return STATS_EINVAL;
    if (opts->exact && n > STATS_BOOT_EXACT_MAX)
        return stats_fail(err, 3, "exact: n = %zu seeds, more than %d", n, STATS_BOOT_EXACT_MAX);
    if (!opts->exact && opts->resamples < STATS_MIN_RESAMPLES)
        return stats_fail(err, 3, "resamples: must be >= %d, got %zu", STATS_MIN_RESAMPLES,
                          opts->resamples);

    sweep s = {.groups = groups, .points = points, .n = n, .ref = opts->ref};
    size_t cap = 1; /* C(2n - 1, n) multisets, or the Monte Carlo count */
    if (opts->exact) {
        for (size_t i = 1; i <= n; i++)
            cap = cap * (n - 1 + i) / i;
    } else {
        cap = opts->resamples;
    }
    s.cap = cap;
    double *clipped = malloc(groups * points * n * sizeof *clipped);
    s.mean = malloc(groups * points * sizeof *s.mean);
    s.sens = malloc(groups * cap * sizeof *s.sens);
    s.diff = malloc(groups * cap * sizeof *s.diff);
    s.own = malloc(groups * cap * sizeof *s.own);
    s.own_diff = malloc(groups * cap * sizeof *s.own_diff);
    s.counts = calloc(n, sizeof *s.counts);
    double *scratch = malloc(2 * groups * sizeof *scratch);
    int status = STATS_ENOMEM;
    if (!clipped || !s.mean || !s.sens || !s.diff || !s.own || !s.own_diff || !s.counts ||
        !scratch)
        goto done;
    /* min(loss, init): a diverged run counts as its loss at initialization */
    for (size_t g = 0; g < groups; g++)
        for (size_t j = 0; j < points; j++)
            for (size_t i = 0; i < n; i++) {
                double x = loss[(g * points + j) * n + i], l0 = init[g * n + i];
                clipped[(g * points + j) * n + i] = isnan(x) || x > l0 ? l0 : x;
            }
    s.clipped = clipped;

    /* the point estimate: every seed once */
    for (size_t i = 0; i < n; i++)
        s.counts[i] = 1;
    weighted *keep_sens = s.sens;
    s.sens = NULL;
    add_resample(&s, s.counts, 1, res->sensitivity, res->own);
    s.sens = keep_sens;
    res->ell_star = INFINITY;
    for (size_t g = 0; g < groups; g++)
        for (size_t j = 0; j < points; j++) {
            res->curve[g * points + j] = s.mean[g * points + j];
            if (s.mean[g * points + j] < res->ell_star) {
                res->ell_star = s.mean[g * points + j];
                res->star_group = g;
                res->star_point = j;
            }
        }
    for (size_t g = 0; g < groups; g++) {
        res->diff[g] = res->sensitivity[g] - res->sensitivity[opts->ref];
        res->own_diff[g] = res->own[g] - res->own[opts->ref];
    }

    if (opts->exact) {
        s.fact[0] = 1;
        for (size_t i = 1; i <= n; i++)
            s.fact[i] = s.fact[i - 1] * i;
        enumerate(&s, 0, n, 1, scratch);
        res->total = 1;
        for (size_t i = 0; i < n; i++)
            res->total *= n;
    } else {
        gsl_rng *r = stats_rng_alloc(opts->seed, STATS_STREAM_LRSENS);
        if (!r)
            goto done;
        for (size_t b = 0; b < cap; b++) {
            memset(s.counts, 0, n * sizeof *s.counts);
            for (size_t i = 0; i < n; i++)
                s.counts[gsl_rng_uniform_int(r, n)]++;
            add_resample(&s, s.counts, 1, scratch, scratch + groups);
        }
        gsl_rng_free(r);
        res->total = cap;
    }
    res->exact = opts->exact;
    for (size_t g = 0; g < groups; g++) {
        for (int k = 0; k < 2; k++) {
            double f = k == 0 ? 0.5 * opts->alpha : 1.0 - 0.5 * opts->alpha;
            res->ci[2 * g + (size_t)k] = weighted_quantile(s.sens + g * cap, s.m, res->total, f);
            res->diff_ci[2 * g + (size_t)k] =
                weighted_quantile(s.diff + g * cap, s.m, res->total, f);
            res->own_ci[2 * g + (size_t)k] = weighted_quantile(s.own + g * cap, s.m, res->total, f);
            res->own_diff_ci[2 * g + (size_t)k] =
                weighted_quantile(s.own_diff + g * cap, s.m, res->total, f);
        }
    }
    status = STATS_OK;
done:
    free(clipped);
    free(s.mean);
    free(s.sens);
    free(s.diff);
    free(s.own);
    free(s.own_diff);
    free(s.counts);
    free(scratch);
    return status;
}
