/* The sign-flip test inverted into an interval of shifts (stats.h: stats_signflip_ci).
 *
 * Why subset means.  Testing mean(d) = theta with the statistic T = sum(d - theta), the
 * pattern that flips the index set N (complement P) gives T_N = sum_P (d - theta) -
 * sum_N (d - theta).  T_N >= T exactly when sum_N (d - theta) <= 0, that is mean_N <= theta;
 * and |T_N| >= |T| exactly when theta lies between mean_N and mean_P (both sides are
 * V-shaped in theta, the data's V steeper, and they meet at those two means).  The
 * sample mean lies between every such pair, so the two-sided p is largest at the sample
 * mean and falls in steps at the subset means on either side: the accepted shifts form
 * one closed interval whose ends are order statistics of the subset means. */
#include <math.h>
#include <stdlib.h>

#include "internal.h"
#include "stats.h"

/* The smallest count c >= 0 with (base + c) / total > alpha: accepted shifts are those
 * reached by at least that many patterns beyond the `base` that always count. */
static size_t needed_count(double alpha, double total, double base)
{
    double y = alpha * total - base; /* c > y */
    if (y < 0.0)
        return 0;
    return (size_t)floor(y) + 1;
}

/* Subset sums of x[m] for every mask (2^m values) and their sizes. */
static void subset_sums(const double *x, size_t m, double *sums, unsigned char *size)
{
    for (uint64_t mask = 0; mask < (1ull << m); mask++) {
        double s = 0.0;
        unsigned char c = 0;
        for (size_t i = 0; i < m; i++)
            if (mask >> i & 1u) {
                s += x[i];
                c++;
            }
        sums[mask] = s;
        size[mask] = c;
    }
}

/* Exact: the interval ends from every subset mean (one-sided) or every partition
 * (two-sided; the last element is always in P so each partition comes once). */
static int exact(const double *d, size_t n, double alpha, int one_sided,
                 stats_signflip_ci_result *res)
{
    size_t m = one_sided ? n : n - 1; /* the elements N may take */
    size_t h = m / 2;
    uint64_t n_lo = 1ull << h, n_hi = 1ull << (m - h);
    double *lo_sum = malloc((n_lo + n_hi) * sizeof *lo_sum);
    unsigned char *lo_size = malloc(n_lo + n_hi);
    uint64_t count = n_lo * n_hi - 1; /* non-empty N */
    double *a = malloc((count > 0 ? count : 1) * sizeof *a);
    double *b = one_sided ? NULL : malloc((count > 0 ? count : 1) * sizeof *b);
    if (!lo_sum || !lo_size || !a || (!one_sided && !b)) {
        free(lo_sum);
        free(lo_size);
        free(a);
        free(b);
        return STATS_ENOMEM;
    }
    double *hi_sum = lo_sum + n_lo;
    unsigned char *hi_size = lo_size + n_lo;
    subset_sums(d, h, lo_sum, lo_size);
    subset_sums(d + h, m - h, hi_sum, hi_size);
    double total = 0.0;
    for (size_t i = 0; i < n; i++)
        total += d[i];
    uint64_t k = 0;
    for (uint64_t j = 0; j < n_hi; j++)
        for (uint64_t i = 0; i < n_lo; i++) {
            if (i == 0 && j == 0)
                continue;
            double s = lo_sum[i] + hi_sum[j];
            double c = (double)(lo_size[i] + hi_size[j]);
            double mean_n = s / c;
            if (one_sided) {
                a[k] = mean_n;
            } else {
                double mean_p = (total - s) / ((double)n - c);
                a[k] = fmin(mean_n, mean_p);
                b[k] = fmax(mean_n, mean_p);
            }
            k++;
        }
    free(lo_sum);
    free(lo_size);
    double patterns = ldexp(1.0, (int)n);
    /* one-sided: the identity always counts; two-sided: the identity and its negation */
    size_t need = one_sided ? needed_count(alpha, patterns, 1.0)
                            : needed_count(alpha / 2.0, patterns, 1.0);
    res->patterns = 1ull << n;
    res->p_min = (one_sided ? 1.0 : 2.0) / patterns;
    if (need == 0 || need > count) {
        res->bounded = 0;
    } else {
        res->bounded = 1;
        res->ci[0] = stats_select_kth(a, count, need - 1);
        double *upper = one_sided ? a : b;
        res->ci[1] = stats_select_kth(upper, count, count - need);
    }
    free(a);
    free(b);
    return STATS_OK;
}

/* Monte Carlo: the patterns of stats_signflip (stream STATS_STREAM_SIGNFLIP, bit 1 keeps
 * a sign, bit 0 flips it). */
static int monte_carlo(const double *d, size_t n, double alpha, int one_sided,
                       size_t resamples, uint64_t seed, stats_signflip_ci_result *res)
{
    gsl_rng *r = stats_rng_alloc(seed, STATS_STREAM_SIGNFLIP);
    double *a = malloc(resamples * sizeof *a);
    double *b = malloc(resamples * sizeof *b);
    if (!r || !a || !b) {
        gsl_rng_free(r);
        free(a);
        free(b);
        return STATS_ENOMEM;
    }
    double total = 0.0;
    for (size_t i = 0; i < n; i++)
        total += d[i];
    size_t always = 0, count = 0;
    for (size_t k = 0; k < resamples; k++) {
        double s = 0.0;
        size_t c = 0;
        unsigned long bits = 0;
        for (size_t i = 0; i < n; i++) {
            if (i % 32 == 0)
                bits = gsl_rng_get(r);
            if (!(bits & 1u)) {
                s += d[i];
                c++;
            }
            bits >>= 1;
        }
        if (c == 0 || (!one_sided && c == n)) {
            always++;
            continue;
        }
        double mean_n = s / (double)c;
        if (one_sided) {
            a[count] = mean_n;
        } else {
            double mean_p = (total - s) / (double)(n - c);
            a[count] = fmin(mean_n, mean_p);
            b[count] = fmax(mean_n, mean_p);
        }
        count++;
    }
    gsl_rng_free(r);
    /* p = (1 + hits) / (1 + resamples), the observed pattern counting once more */
    size_t need = needed_count(alpha, (double)(resamples + 1), 1.0 + (double)always);
    res->patterns = resamples;
    res->p_min = fmax(ldexp(one_sided ? 1.0 : 2.0, -(int)n), 1.0 / (double)(resamples + 1));
    if (need == 0 || need > count) {
        res->bounded = 0;
    } else {
        res->bounded = 1;
        res->ci[0] = stats_select_kth(a, count, need - 1);
        res->ci[1] = stats_select_kth(one_sided ? a : b, count, count - need);
    }
    free(a);
    free(b);
    return STATS_OK;
}

int stats_signflip_ci(const double *d, size_t n, double alpha, int one_sided, size_t resamples,
                      uint64_t seed, stats_signflip_ci_result *res, stats_error *err)
{
    stats_gsl_off();
    *res = (stats_signflip_ci_result){.n = n, .alpha = alpha};
    int status = stats_check_finite(d, n, "d", 1, err);
    if (status || (status = stats_check_alpha(alpha, 2, err)))
        return status;
    if (n > STATS_SIGNFLIP_EXACT_MAX && resamples < STATS_MIN_RESAMPLES)
        return stats_fail(err, 3, "resamples: must be >= %d, got %zu", STATS_MIN_RESAMPLES,
                          resamples);
    if (n == 0 || (n == 1 && !one_sided)) {
        res->p_min = 1.0;
        res->exact = 1;
        res->patterns = 1ull << n;
        return STATS_OK; /* no pattern but the data's: unbounded */
    }
    res->exact = n <= STATS_SIGNFLIP_EXACT_MAX;
    if (res->exact)
        return exact(d, n, alpha, one_sided, res);
    return monte_carlo(d, n, alpha, one_sided, resamples, seed, res);
}
