/* Timings of the statistics module (make bench-stats):
 *   - BCa with 10,000 Monte Carlo resamples for n = 5 (target < 10 ms);
 *   - the exact bootstrap over all n^n = 16,777,216 resamples for n = 8 (target < 2 s),
 *     computed from the multisets of indices, and checked here against a literal walk
 *     over every one of the 16.7 M index tuples (also timed);
 *   - a whole stats_paired call (t, sign flip, bootstrap, noncentral-t intervals, MDE).
 * Each figure is the median of several runs, on one thread. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../../stats/stats.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static double median(double *x, int n)
{
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

static int bca_mc(const double *d, size_t n, uint64_t seed, stats_boot_ci *ci)
{
    stats_boot_dist *dist = NULL;
    int status = stats_boot_dist_mc(d, n, 10000, seed, &dist);
    if (!status)
        status = stats_boot_intervals(d, n, dist, 0.05, ci);
    stats_boot_dist_free(dist);
    return status;
}

static int bca_exact(const double *d, size_t n, stats_boot_ci *ci, uint64_t *less,
                     uint64_t *less_eq)
{
    stats_boot_dist *dist = NULL;
    int status = stats_boot_dist_exact(d, n, &dist);
    if (!status)
        status = stats_boot_intervals(d, n, dist, 0.05, ci);
    if (!status) {
        double theta = 0.0, scale = 0.0;
        for (size_t i = 0; i < n; i++) {
            theta += d[i] / (double)n;
            scale += fabs(d[i]) / (double)n;
        }
        double tol = STATS_TIE_RTOL * scale;
        *less = *less_eq = 0;
        for (size_t i = 0; i < dist->k; i++) {
            *less += dist->value[i] < theta - tol ? dist->count[i] : 0;
            *less_eq += dist->value[i] <= theta + tol ? dist->count[i] : 0;
        }
    }
    stats_boot_dist_free(dist);
    return status;
}

/* Every one of the n^n index tuples in odometer order with an incrementally updated
 * sum, counting resample means below and at the observed mean (ties within the same
 * tolerance as stats/). */
static void literal_walk(const double *d, size_t n, uint64_t *less, uint64_t *less_eq)
{
    size_t idx[16] = {0};
    double theta = 0.0, scale = 0.0, sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        theta += d[i] / (double)n;
        scale += fabs(d[i]) / (double)n;
        sum += d[0];
    }
    double tol = STATS_TIE_RTOL * scale * (double)n, target = theta * (double)n;
    *less = *less_eq = 0;
    for (;;) {
        *less += sum < target - tol;
        *less_eq += sum <= target + tol;
        size_t i = 0;
        while (i < n && idx[i] == n - 1) {
            sum += d[0] - d[n - 1];
            idx[i++] = 0;
        }
        if (i == n)
            break;
        idx[i]++;
        if (i < 2) {
            sum += d[idx[i]] - d[idx[i] - 1];
        } else { /* refresh every n^2 steps so rounding cannot drift */
            sum = 0.0;
            for (size_t k = 0; k < n; k++)
                sum += d[idx[k]];
        }
    }
}

int main(void)
{
    const double d5[5] = {-1.7, -1.3, -1.3, -2.1, -1.3};
    const double d8[8] = {-1.7, -1.3, -1.3, -2.1, -1.3, -0.4, -2.2, -1.1};
    enum { RUNS = 31 };
    double t[RUNS];
    stats_boot_ci ci;

    for (int r = 0; r < RUNS; r++) {
        double t0 = now_s();
        if (bca_mc(d5, 5, (uint64_t)r + 1, &ci))
            return 1;
        t[r] = now_s() - t0;
    }
    printf("bench_stats: BCa, 10,000 Monte Carlo resamples, n = 5: %.2f ms (median of %d; "
           "target < 10 ms)\n",
           1e3 * median(t, RUNS), RUNS);

    uint64_t less = 0, less_eq = 0;
    for (int r = 0; r < RUNS; r++) {
        double t0 = now_s();
        if (bca_exact(d8, 8, &ci, &less, &less_eq))
            return 1;
        t[r] = now_s() - t0;
    }
    printf("bench_stats: exact bootstrap (percentile + BCa), n = 8, 16,777,216 resamples: "
           "%.4f s (median of %d; target < 2 s)\n",
           median(t, RUNS), RUNS);

    uint64_t walk_less, walk_less_eq;
    double t0 = now_s();
    literal_walk(d8, 8, &walk_less, &walk_less_eq);
    double walk_s = now_s() - t0;
    printf("bench_stats: literal walk over the 16,777,216 index tuples (counts only): %.3f s; "
           "counts below/at the mean %s the multiset enumeration (%" PRIu64 ", %" PRIu64 ")\n",
           walk_s, walk_less == less && walk_less_eq == less_eq ? "equal" : "DIFFER from",
           walk_less, walk_less_eq);

    const double a[5] = {22.9, 21.4, 22.8, 23.1, 20.7}, b[5] = {21.2, 20.1, 21.5, 21.0, 19.4};
    stats_paired_opts o;
    stats_paired_opts_default(&o);
    for (int r = 0; r < RUNS; r++) {
        stats_paired_result res;
        double t1 = now_s();
        if (stats_paired(a, 5, b, 5, &o, &res, NULL))
            return 1;
        t[r] = now_s() - t1;
    }
    printf("bench_stats: whole stats_paired, n = 5, B = 10,000: %.2f ms (median of %d)\n",
           1e3 * median(t, RUNS), RUNS);
    return walk_less == less && walk_less_eq == less_eq ? 0 : 1;
}
