/* stats: the statistics of paired per-seed comparisons, plain C on GSL (no Lua).
 *
 * Promises.
 * - Paired comparison of a baseline a and a treatment b measured on the same seeds:
 *   d = b - a; n, mean, sd; paired t-test (t, df, two-sided p, t-interval of the
 *   mean); exact sign-flip permutation p (Monte Carlo above STATS_SIGNFLIP_EXACT_MAX);
 *   percentile and BCa bootstrap intervals of the mean difference (Monte Carlo with B
 *   resamples, or for n <= STATS_BOOT_EXACT_MAX the exact distribution over all n^n
 *   resamples); Cohen's d_z, Hedges' g_z and their noncentral-t intervals; the
 *   minimum detectable effect of the design.
 * - Holm step-down and Bonferroni adjusted p-values; paired-t power and minimum
 *   detectable d_z; the noncentral t CDF (which GSL lacks).
 * - Every random draw comes from PCG32 (engine/pcg.h) on the stream
 *   pcg32_stream(seed, PCG_PURPOSE_STATS, index), through the gsl_rng type
 *   stats_rng_pcg32: the same inputs and seed give the same results on every run.
 * - GSL's abort-on-error handler is turned off by every entry point here (the handler
 *   is process-wide: stats does not want an abort()); every GSL status is checked.
 * - No result field is ever NaN or infinite.  A quantity that is undefined for the
 *   data (see Degenerate data) has its bit cleared in `defined`, is set to 0, and
 *   the reason is written out.
 *
 * Conventions (tests/vectors/stats.json "conventions", binding):
 * - d = b - a per seed, same seed order; sd is the sample sd (n - 1 denominator);
 *   d_z = mean(d) / sd(d); g_z = J d_z with J = 1 - 3 / (4 df - 1), df = n - 1.
 * - d_z interval: the noncentral-t parameters delta at which the CDF of the observed t
 *   is 1 - alpha/2 and alpha/2, divided by sqrt(n); the g_z interval is J times it.
 * - Percentile: linear interpolation between order statistics at position f (B - 1)
 *   of the sorted resample means (numpy's default, gsl_stats_quantile_from_sorted_data).
 * - BCa: z0 = Phi^-1((#{theta* < theta} + #{theta* <= theta}) / (2B)), ties counting
 *   half (scipy >= 1.9); acceleration from the jackknife,
 *   a = sum U^3 / (6 (sum U^2)^1.5), U_i = (n - 1)(mean of the leave-one-out means -
 *   leave-one-out mean i); the interval is the percentile interval at
 *   Phi(z0 + (z0 + z) / (1 - a (z0 + z))) for z = z_{alpha/2}, z_{1-alpha/2}.
 * - Sign flip: two-sided, all 2^n sign patterns including the identity; a pattern
 *   counts when |mean| >= |observed mean|.
 * - Holm: sorted ascending (ties in input order), the k-th smallest (k from 0) times
 *   (m - k), running maximum, capped at 1 (R's p.adjust); rejected when adjusted
 *   <= alpha.  Bonferroni: min(1, m p), rejected when <= alpha.
 * - Ties.  Resample means that are equal in exact arithmetic can differ in the last
 *   bits of a double, so "equal" means within STATS_TIE_RTOL times mean(|d|) (the
 *   largest |mean| a resample or sign pattern can reach): used by the BCa counts and
 *   the sign-flip test.  For one-decimal data this reproduces the exact-arithmetic
 *   counts (stats.json P_less, P_equal), not the float artefacts of a brute-force
 *   enumeration (its "float_enumeration" entries).
 *
 * Degenerate data (a flag in `degenerate` and a sentence in `reason`, never an error):
 * - STATS_DEGEN_SMALL_N: n < 2.  Only n, mean (n = 1), p_signflip and p_signflip_min
 *   are defined.
 * - STATS_DEGEN_CONSTANT: all differences equal, sd <= STATS_SD_RTOL max|d|.  t, p_t,
 *   ci_t, ci_bca, d_z, g_z, their intervals and mde are undefined; the percentile
 *   interval is the point [mean, mean].
 * - STATS_DEGEN_BCA: the BCa interval is undefined (every resample mean equal, z0
 *   infinite because theta falls outside the resample distribution, or
 *   1 - a (z0 + z) <= 0).
 * - STATS_DEGEN_NCT_RANGE: the noncentral-t inversion left the domain where the CDF is
 *   computed (|delta| > STATS_NCT_MAX_NCP): ci_d_z and ci_g_z are undefined.
 * Errors (status STATS_EINVAL, with `arg` and a message naming the argument):
 * mismatched lengths, NaN or infinite inputs, alpha outside (0, 1), power outside
 * (alpha, 1), B < STATS_MIN_RESAMPLES, exact with n > STATS_BOOT_EXACT_MAX.
 */
#ifndef REPRO_STATS_H
#define REPRO_STATS_H

#include <stddef.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

enum stats_status {
    STATS_OK = 0,
    STATS_EINVAL = 1, /* a bad argument: see stats_error */
    STATS_ENOMEM = 2,
    STATS_ENUM = 3, /* a numerical routine failed (GSL status, no convergence) */
};

#define STATS_TIE_RTOL 1e-12
#define STATS_SD_RTOL 1e-12
#define STATS_SIGNFLIP_EXACT_MAX 20
#define STATS_BOOT_EXACT_MAX 8
#define STATS_MIN_RESAMPLES 100
/* The noncentral t CDF is computed (and tested) for |ncp| up to this. */
#define STATS_NCT_MAX_NCP 1000.0

/* Which input was bad, numbered as the Lua binding numbers its arguments, and a
 * message that names it ("a[3]: NaN", "alpha: must be in (0, 1), got 1.5"). */
typedef struct {
    int arg;
    char msg[160];
} stats_error;

/* ---- PCG32 as a gsl_rng type (stats/pcg_rng.c) ----
 * get() is pcg32_next (range [0, 2^32 - 1]); get_double() is pcg32_uniform_double.
 * gsl_rng_set(r, s) seeds stream 0; stats_rng_alloc seeds the per-purpose stream
 * (seed, PCG_PURPOSE_STATS, index).  Indices used here: */
enum { STATS_STREAM_BOOTSTRAP = 0, STATS_STREAM_SIGNFLIP = 1 };
extern const gsl_rng_type *stats_rng_pcg32;
gsl_rng *stats_rng_alloc(uint64_t seed, uint64_t index); /* NULL when out of memory */
void stats_rng_set_stream(gsl_rng *r, uint64_t seed, uint64_t index);

/* ---- Noncentral t (stats/nct.c) ----
 * P(T <= t) for T = (Z + ncp) / sqrt(V / df), Z ~ N(0,1), V ~ chi2(df): the series of
 * Lenth (1989, AS 243) summed outward from the Poisson mode.  Absolute error below
 * 2e-14 for |ncp| <= 40 and 6e-12 up to STATS_NCT_MAX_NCP (see stats/nct.c);
 * df > 0, |ncp| <= STATS_NCT_MAX_NCP, t finite (else STATS_EINVAL). */
int stats_nct_cdf(double t, double df, double ncp, double *p);
/* The ncp interval for an observed t: ncp_lo where the CDF is 1 - alpha/2, ncp_hi where
 * it is alpha/2.  STATS_ENUM when a bound is beyond STATS_NCT_MAX_NCP. */
int stats_nct_ncp_interval(double t, double df, double alpha, double *ncp_lo, double *ncp_hi);

/* ---- Power of the two-sided paired t-test (stats/power.c) ----
 * power = P(|T| > t_{1-alpha/2, n-1}) with T noncentral t, df = n - 1, ncp = d_z sqrt(n);
 * n >= 2, |d_z| sqrt(n) <= STATS_NCT_MAX_NCP.  err->arg: 1 = n, 2 = d_z, 3 = alpha.
 * stats_mde: the d_z > 0 whose power is `power` (in (alpha, 1)); err->arg: 1 = n,
 * 2 = alpha, 3 = power. */
int stats_power(size_t n, double d_z, double alpha, double *power, stats_error *err);
int stats_mde(size_t n, double alpha, double power, double *d_z, stats_error *err);

/* ---- Multiple comparisons (stats/multiple.c) ----
 * adjusted[m] and reject[m] (1/0) in the input order; p in [0, 1]; err->arg 1 = p,
 * 2 = alpha. */
int stats_holm(const double *p, size_t m, double alpha, double *adjusted, int *reject,
               stats_error *err);
int stats_bonferroni(const double *p, size_t m, double alpha, double *adjusted, int *reject,
                     stats_error *err);

/* ---- Sign-flip permutation test of mean(d) = 0 (stats/signflip.c) ----
 * Exact (all 2^n patterns) for n <= STATS_SIGNFLIP_EXACT_MAX; otherwise `resamples`
 * random patterns from stream STATS_STREAM_SIGNFLIP, p = (1 + hits) / (1 + resamples)
 * with standard error sqrt(p (1 - p) / resamples).  p_min is the smallest p the test
 * can give: 2 / 2^n exact, max(2 / 2^n, 1 / (1 + resamples)) Monte Carlo. */
typedef struct {
    double p, se, p_min;
    int exact;
    uint64_t patterns; /* 2^n, or the Monte Carlo count */
} stats_signflip_result;
int stats_signflip(const double *d, size_t n, size_t resamples, uint64_t seed,
                   stats_signflip_result *res);

/* ---- Bootstrap of the mean (stats/bootstrap.c) ----
 * The distribution of resample means as sorted distinct values with multiplicities:
 * Monte Carlo (B resamples of indices from stream STATS_STREAM_BOOTSTRAP) or exact
 * (every one of the n^n resamples, counted as the multisets of indices weighted by
 * their multinomial counts). */
typedef struct {
    double *value;    /* (k) ascending */
    uint64_t *count;  /* (k) multiplicities, summing to total */
    size_t k;
    uint64_t total;   /* B, or n^n */
} stats_boot_dist;
int stats_boot_dist_mc(const double *d, size_t n, size_t resamples, uint64_t seed,
                       stats_boot_dist **out);
int stats_boot_dist_exact(const double *d, size_t n, stats_boot_dist **out);
void stats_boot_dist_free(stats_boot_dist *dist);
/* Linear-interpolation quantile at f (total - 1) of the expanded sorted values. */
double stats_boot_quantile(const stats_boot_dist *dist, double f);

typedef struct {
    double ci_percentile[2];
    double ci_bca[2];
    double z0, a, alpha_bca[2];
    int bca_defined;
    const char *bca_reason; /* static text when !bca_defined */
} stats_boot_ci;
/* Percentile and BCa (1 - alpha) intervals of mean(d) from a distribution made from d. */
int stats_boot_intervals(const double *d, size_t n, const stats_boot_dist *dist, double alpha,
                         stats_boot_ci *ci);

/* ---- The paired comparison (stats/paired.c) ---- */
typedef struct {
    double alpha;     /* (0, 1); default 0.05 */
    double power;     /* of the minimum detectable effect, (alpha, 1); default 0.8 */
    size_t resamples; /* B >= STATS_MIN_RESAMPLES; default 10000 */
    uint64_t seed;    /* default 1 */
    int exact;        /* exact bootstrap over all n^n resamples (n <= 8); default 0 */
} stats_paired_opts;
void stats_paired_opts_default(stats_paired_opts *opts);

enum stats_field {
    STATS_HAVE_MEAN = 1u << 0,
    STATS_HAVE_SD = 1u << 1,
    STATS_HAVE_T = 1u << 2,       /* t, p_t, ci_t */
    STATS_HAVE_SIGNFLIP = 1u << 3,
    STATS_HAVE_PERCENTILE = 1u << 4,
    STATS_HAVE_BCA = 1u << 5,     /* ci_bca, bca_z0, bca_a */
    STATS_HAVE_D_Z = 1u << 6,     /* d_z, g_z */
    STATS_HAVE_CI_D_Z = 1u << 7,  /* ci_d_z, ci_g_z */
    STATS_HAVE_MDE_D_Z = 1u << 8,
    STATS_HAVE_MDE = 1u << 9,
    STATS_HAVE_DF = 1u << 10,
};

enum stats_degenerate {
    STATS_DEGEN_SMALL_N = 1u << 0,
    STATS_DEGEN_CONSTANT = 1u << 1,
    STATS_DEGEN_BCA = 1u << 2,
    STATS_DEGEN_NCT_RANGE = 1u << 3,
};

typedef struct {
    size_t n;
    double alpha;
    double mean, sd;
    double df, t, p_t, ci_t[2];
    double p_signflip, p_signflip_se, p_signflip_min;
    int signflip_exact;
    double ci_percentile[2], ci_bca[2], bca_z0, bca_a;
    int bootstrap_exact;
    uint64_t resamples; /* B, or n^n when exact */
    double d_z, g_z, hedges_j, ci_d_z[2], ci_g_z[2];
    double mde_d_z, mde; /* at opts.power; mde = mde_d_z sd, in the metric's units */
    unsigned defined;    /* enum stats_field bits */
    unsigned degenerate; /* enum stats_degenerate bits, 0 when none */
    char reason[512];    /* "" when degenerate == 0 */
} stats_paired_result;

/* a = baseline, b = treatment.  err->arg: 1 = a, 2 = b, 3 = opts.  opts may be NULL
 * (defaults). */
int stats_paired(const double *a, size_t na, const double *b, size_t nb,
                 const stats_paired_opts *opts, stats_paired_result *res, stats_error *err);

/* ---- One sample (stats/summary.c) ---- */
typedef struct {
    size_t n;
    double mean, sd, min, max, median;
    unsigned defined;    /* STATS_HAVE_MEAN (n >= 1, with min, max, median), _SD (n >= 2) */
} stats_summary_result;
int stats_summary(const double *x, size_t n, stats_summary_result *res, stats_error *err);

#endif
