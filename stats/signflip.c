/* The sign-flip permutation test of mean(d) = 0: under the null each difference is
 * as likely positive as negative, so every pattern of signs is equally likely. */
#include <math.h>
#include <stdlib.h>

#include "internal.h"
#include "stats.h"

/* sums[mask] = sum over the m values of (bit i of mask ? +x[i] : -x[i]), each sum
 * formed directly (at most 10 terms) so no rounding accumulates across patterns. */
static void pattern_sums(const double *x, size_t m, double *sums)
{
    for (uint64_t mask = 0; mask < (1ull << m); mask++) {
        double s = 0.0;
        for (size_t i = 0; i < m; i++)
            s += (mask >> i & 1u) ? x[i] : -x[i];
        sums[mask] = s;
    }
}

/* Every 2^n pattern as (first half's sum) + (second half's sum): 2^(n/2) + 2^(n - n/2)
 * sums, then one addition and one comparison per pattern. */
static int exact(const double *d, size_t n, double threshold, stats_signflip_result *res)
{
    size_t h = n / 2;
    uint64_t n_lo = 1ull << h, n_hi = 1ull << (n - h);
    double *lo = malloc((n_lo + n_hi) * sizeof *lo);
    if (!lo)
        return STATS_ENOMEM;
    double *hi = lo + n_lo;
    pattern_sums(d, h, lo);
    pattern_sums(d + h, n - h, hi);
    uint64_t hits = 0;
    for (uint64_t j = 0; j < n_hi; j++)
        for (uint64_t i = 0; i < n_lo; i++)
            hits += fabs(lo[i] + hi[j]) >= threshold;
    free(lo);
    res->patterns = n_lo * n_hi;
    res->p = (double)hits / (double)res->patterns;
    res->se = 0.0;
    res->exact = 1;
    res->p_min = n >= 1 ? ldexp(1.0, 1 - (int)n) : 1.0;
    return STATS_OK;
}

static int monte_carlo(const double *d, size_t n, size_t resamples, uint64_t seed,
                       double threshold, stats_signflip_result *res)
{
    gsl_rng *r = stats_rng_alloc(seed, STATS_STREAM_SIGNFLIP);
    if (!r)
        return STATS_ENOMEM;
    uint64_t hits = 0;
    for (size_t k = 0; k < resamples; k++) {
        double s = 0.0;
        unsigned long bits = 0;
        for (size_t i = 0; i < n; i++) {
            if (i % 32 == 0)
                bits = gsl_rng_get(r);
            s += (bits & 1u) ? d[i] : -d[i];
            bits >>= 1;
        }
        hits += fabs(s) >= threshold;
    }
    gsl_rng_free(r);
    /* the observed pattern counts once more, so p is never 0 (a valid p-value) */
    double p = (double)(hits + 1) / (double)(resamples + 1);
    res->patterns = resamples;
    res->p = p;
    res->se = sqrt(p * (1.0 - p) / (double)resamples);
    res->exact = 0;
    res->p_min = fmax(ldexp(1.0, 1 - (int)n), 1.0 / (double)(resamples + 1));
    return STATS_OK;
}

int stats_signflip(const double *d, size_t n, size_t resamples, uint64_t seed,
                   stats_signflip_result *res)
{
    stats_gsl_off();
    if (stats_check_finite(d, n, "d", 1, NULL))
        return STATS_EINVAL;
    if (n > STATS_SIGNFLIP_EXACT_MAX && resamples < STATS_MIN_RESAMPLES)
        return STATS_EINVAL;
    double sum = 0.0, abs_sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        sum += d[i];
        abs_sum += fabs(d[i]);
    }
    /* a pattern ties with the data within STATS_TIE_RTOL of the largest reachable sum */
    double threshold = fabs(sum) - STATS_TIE_RTOL * abs_sum;
    if (n <= STATS_SIGNFLIP_EXACT_MAX)
        return exact(d, n, threshold, res);
    return monte_carlo(d, n, resamples, seed, threshold, res);
}
