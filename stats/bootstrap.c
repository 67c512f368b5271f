/* The bootstrap distribution of the mean, and its percentile and BCa intervals. */
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>

#include "internal.h"
#include "stats.h"

void stats_boot_dist_free(stats_boot_dist *dist)
{
    if (!dist)
        return;
    free(dist->value);
    free(dist->count);
    free(dist);
}

static stats_boot_dist *dist_alloc(size_t k)
{
    stats_boot_dist *dist = calloc(1, sizeof *dist);
    if (!dist)
        return NULL;
    dist->value = malloc(k * sizeof *dist->value);
    dist->count = malloc(k * sizeof *dist->count);
    if (!dist->value || !dist->count) {
        stats_boot_dist_free(dist);
        return NULL;
    }
    return dist;
}

typedef struct {
    double value;
    uint64_t count;
} weighted;

static int cmp_weighted(const void *x, const void *y)
{
    double a = ((const weighted *)x)->value, b = ((const weighted *)y)->value;
    return a < b ? -1 : a > b;
}

/* Sorts w[m] and merges equal values into a new distribution. */
static int collect(weighted *w, size_t m, uint64_t total, stats_boot_dist **out)
{
    qsort(w, m, sizeof *w, cmp_weighted);
    size_t k = 0;
    for (size_t i = 0; i < m; i++) {
        if (k > 0 && w[k - 1].value == w[i].value)
            w[k - 1].count += w[i].count;
        else
            w[k++] = w[i];
    }
    stats_boot_dist *dist = dist_alloc(k);
    if (!dist)
        return STATS_ENOMEM;
    for (size_t i = 0; i < k; i++) {
        dist->value[i] = w[i].value;
        dist->count[i] = w[i].count;
    }
    dist->k = k;
    dist->total = total;
    *out = dist;
    return STATS_OK;
}

int stats_boot_dist_mc(const double *d, size_t n, size_t resamples, uint64_t seed,
                       stats_boot_dist **out)
{
    stats_gsl_off();
    *out = NULL;
    if (n < 1 || resamples < STATS_MIN_RESAMPLES || stats_check_finite(d, n, "d", 1, NULL))
        return STATS_EINVAL;
    weighted *w = malloc(resamples * sizeof *w);
    gsl_rng *r = stats_rng_alloc(seed, STATS_STREAM_BOOTSTRAP);
    if (!w || !r) {
        free(w);
        gsl_rng_free(r);
        return STATS_ENOMEM;
    }
    for (size_t b = 0; b < resamples; b++) {
        double s = 0.0;
        for (size_t i = 0; i < n; i++)
            s += d[gsl_rng_uniform_int(r, n)];
        w[b] = (weighted){s / (double)n, 1};
    }
    gsl_rng_free(r);
    int status = collect(w, resamples, resamples, out);
    free(w);
    return status;
}

/* The exact enumeration: a resample's mean depends only on how often it takes each
 * index, so the n^n ordered resamples fall into the C(2n-1, n) multisets c (c_i >= 0,
 * sum c_i = n), each with mean sum c_i d_i / n and multinomial count n! / prod c_i!. */
typedef struct {
    const double *d;
    size_t n;
    uint64_t fact[STATS_BOOT_EXACT_MAX + 1];
    weighted *w;
    size_t m;
} multisets;

static void enumerate(multisets *e, size_t i, size_t left, double sum, uint64_t denom)
{
    if (i + 1 == e->n) {
        e->w[e->m++] = (weighted){(sum + (double)left * e->d[i]) / (double)e->n,
                                  e->fact[e->n] / (denom * e->fact[left])};
        return;
    }
    for (size_t c = 0; c <= left; c++)
        enumerate(e, i + 1, left - c, sum + (double)c * e->d[i], denom * e->fact[c]);
}

int stats_boot_dist_exact(const double *d, size_t n, stats_boot_dist **out)
{
    stats_gsl_off();
    *out = NULL;
    if (n < 1 || n > STATS_BOOT_EXACT_MAX || stats_check_finite(d, n, "d", 1, NULL))
        return STATS_EINVAL;
    multisets e = {.d = d, .n = n};
    e.fact[0] = 1;
    for (size_t i = 1; i <= n; i++)
        e.fact[i] = e.fact[i - 1] * i;
    size_t n_multisets = 1; /* C(2n - 1, n) */
    for (size_t i = 1; i <= n; i++)
        n_multisets = n_multisets * (n - 1 + i) / i;
    uint64_t total = 1;
    for (size_t i = 0; i < n; i++)
        total *= n;
    e.w = malloc(n_multisets * sizeof *e.w);
    if (!e.w)
        return STATS_ENOMEM;
    enumerate(&e, 0, n, 0.0, 1);
    int status = collect(e.w, e.m, total, out);
    free(e.w);
    return status;
}

/* The value at position pos (0-based) of the expanded sorted list. */
static double value_at(const stats_boot_dist *dist, uint64_t pos)
{
    uint64_t seen = 0;
    for (size_t i = 0; i < dist->k; i++) {
        seen += dist->count[i];
        if (pos < seen)
            return dist->value[i];
    }
    return dist->value[dist->k - 1];
}

double stats_boot_quantile(const stats_boot_dist *dist, double f)
{
    double h = f * (double)(dist->total - 1);
    double lo = floor(h);
    uint64_t pos = (uint64_t)lo;
    double v_lo = value_at(dist, pos);
    double v_hi = pos + 1 < dist->total ? value_at(dist, pos + 1) : v_lo;
    return v_lo + (h - lo) * (v_hi - v_lo);
}

/* The BCa interval: STATS_BCA_DEFINED, or the reason it is undefined. */
static int bca(const double *d, size_t n, const stats_boot_dist *dist, double alpha,
                       stats_boot_ci *ci)
{
    if (n < 2)
        return STATS_BCA_SMALL_N;
    double sum = 0.0, abs_sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        sum += d[i];
        abs_sum += fabs(d[i]);
    }
    double theta = sum / (double)n, tol = STATS_TIE_RTOL * abs_sum / (double)n;
    if (dist->value[dist->k - 1] - dist->value[0] <= tol)
        return STATS_BCA_EQUAL_RESAMPLES;
    uint64_t less = 0, less_eq = 0;
    for (size_t i = 0; i < dist->k; i++) {
        if (dist->value[i] < theta - tol)
            less += dist->count[i];
        if (dist->value[i] <= theta + tol)
            less_eq += dist->count[i];
    }
    if (less + less_eq == 0 || less + less_eq == 2 * dist->total)
        return STATS_BCA_Z0_INFINITE;
    double z0 = gsl_cdf_ugaussian_Pinv((double)(less + less_eq) / (2.0 * (double)dist->total));

    double loo_mean = 0.0;
    for (size_t i = 0; i < n; i++)
        loo_mean += (sum - d[i]) / (double)(n - 1);
    loo_mean /= (double)n;
    double s2 = 0.0, s3 = 0.0;
    for (size_t i = 0; i < n; i++) {
        double u = (double)(n - 1) * (loo_mean - (sum - d[i]) / (double)(n - 1));
        s2 += u * u;
        s3 += u * u * u;
    }
    if (!(s2 > 0.0))
        return STATS_BCA_JACKKNIFE_EQUAL;
    double a = s3 / (6.0 * pow(s2, 1.5));

    double z[2] = {gsl_cdf_ugaussian_Pinv(0.5 * alpha), gsl_cdf_ugaussian_Pinv(1.0 - 0.5 * alpha)};
    double level[2];
    for (int k = 0; k < 2; k++) {
        double w = z0 + z[k], den = 1.0 - a * w;
        if (!(den > 0.0))
            return STATS_BCA_ACCELERATION;
        level[k] = gsl_cdf_ugaussian_P(z0 + w / den);
    }
    for (int k = 0; k < 2; k++) {
        ci->alpha_bca[k] = level[k];
        ci->ci_bca[k] = stats_boot_quantile(dist, level[k]);
    }
    ci->z0 = z0;
    ci->a = a;
    return STATS_BCA_DEFINED;
}

int stats_boot_intervals(const double *d, size_t n, const stats_boot_dist *dist, double alpha,
                         stats_boot_ci *ci)
{
    stats_gsl_off();
    *ci = (stats_boot_ci){{0.0, 0.0}, {0.0, 0.0}, 0.0, 0.0, {0.0, 0.0}, 0, STATS_BCA_DEFINED};
    if (n < 1 || !dist || dist->k == 0 || !(alpha > 0.0 && alpha < 1.0))
        return STATS_EINVAL;
    ci->ci_percentile[0] = stats_boot_quantile(dist, 0.5 * alpha);
    ci->ci_percentile[1] = stats_boot_quantile(dist, 1.0 - 0.5 * alpha);
    ci->bca_reason = bca(d, n, dist, alpha, ci);
    ci->bca_defined = ci->bca_reason == STATS_BCA_DEFINED;
    if (!ci->bca_defined)
        ci->z0 = ci->a = ci->alpha_bca[0] = ci->alpha_bca[1] = ci->ci_bca[0] = ci->ci_bca[1] = 0.0;
    return STATS_OK;
}
