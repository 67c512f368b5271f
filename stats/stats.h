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
 *   the reason is a code (a flag, an enum), never a sentence: the caller words it from
 *   the code and the numbers the result carries.
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
 * Degenerate data (a flag in `degenerate`, never an error; the numbers behind it are
 * the result's own fields):
 * - STATS_DEGEN_SMALL_N: n < 2.  Only n, mean (n = 1), p_signflip and p_signflip_min
 *   are defined.
 * - STATS_DEGEN_CONSTANT: all differences equal, sd <= STATS_SD_RTOL max|d| (n and sd
 *   say which).  t, p_t, ci_t, ci_bca, d_z, g_z, their intervals and mde are undefined;
 *   the percentile interval is the point [mean, mean].
 * - STATS_DEGEN_BCA: the BCa interval is undefined, `bca_reason` says why (enum
 *   stats_bca_reason: every resample mean equal, z0 infinite because theta falls outside
 *   the resample distribution, equal jackknife means, or 1 - a (z0 + z) <= 0).
 * - STATS_DEGEN_NCT_RANGE: the noncentral-t inversion left the domain where the CDF is
 *   computed (a bound |delta| > STATS_NCT_MAX_NCP at the observed t): ci_d_z and ci_g_z
 *   are undefined.
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
/* Defaults of the options (stats_paired_opts_default and the Lua binding). */
#define STATS_DEFAULT_ALPHA 0.05
#define STATS_DEFAULT_POWER 0.8
#define STATS_DEFAULT_RESAMPLES 10000
/* Below this many pairs a BCa interval is descriptive only: it is bounded by the range of
 * the resample means, so for symmetric data its coverage is at most 1 - 2^(1-n)
 * (75 % at n = 3, 94 % at n = 5), whatever its nominal level. */
#define STATS_BCA_CAVEAT_N 10
/* stats_seeds_needed searches n up to this. */
#define STATS_SEEDS_MAX 100000

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
enum {
    STATS_STREAM_BOOTSTRAP = 0,
    STATS_STREAM_SIGNFLIP = 1,
    STATS_STREAM_LRSENS = 2,
    STATS_STREAM_SEQ_CALIBRATE = 3,
    STATS_STREAM_SEQ_SIMULATE = 4,
    STATS_STREAM_SEQ_SPEND = 5,
    STATS_STREAM_SEQ_FLIP = 6,
    STATS_STREAM_SEQ_ATOM = 7,
};
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

/* Why a BCa interval is undefined. */
enum stats_bca_reason {
    STATS_BCA_DEFINED = 0,
    STATS_BCA_SMALL_N,         /* n < 2 */
    STATS_BCA_EQUAL_RESAMPLES, /* every resample mean is equal */
    STATS_BCA_Z0_INFINITE,     /* the observed mean lies outside the resample means */
    STATS_BCA_JACKKNIFE_EQUAL, /* the jackknife means are all equal: no acceleration */
    STATS_BCA_ACCELERATION,    /* 1 - a (z0 + z) <= 0: the acceleration is too large */
};

typedef struct {
    double ci_percentile[2];
    double ci_bca[2];
    double z0, a, alpha_bca[2];
    int bca_defined;
    int bca_reason; /* enum stats_bca_reason; STATS_BCA_DEFINED when bca_defined */
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
    int bca_reason;      /* enum stats_bca_reason, with STATS_DEGEN_BCA */
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

/* ---- Tests for the decision rule (stats/tost.c, stats/signflip_ci.c, stats/seeds.c) ----
 * A study pre-registers its decision test: the paired t-test or the exact sign-flip test. */
enum stats_test { STATS_TEST_T = 0, STATS_TEST_SIGNFLIP = 1 };

/* The sign-flip test inverted: the interval of shifts theta for which the test of
 * mean(d) = theta does not reject.  The test statistic is sum(d - theta); a pattern that
 * flips the signs of the index set N (complement P, both non-empty) is at least as extreme
 * as the data exactly when theta lies between mean_N(d) and mean_P(d), so the p-value is
 * unimodal in theta with its steps at subset means, and
 *   two-sided (level 1 - alpha, the test of stats_signflip):
 *     p(theta) = (2 + 2 #{partitions {N, P} whose interval holds theta}) / 2^n,
 *     lo = the k-th smallest min(mean_N, mean_P), hi = the k-th largest max(mean_N, mean_P),
 *     k = the smallest count with (2 + 2k) / 2^n > alpha;
 *   one-sided (each bound at level 1 - alpha, so 1 - 2 alpha jointly, as TOST uses it):
 *     p_greater(theta) = (1 + #{N non-empty: mean_N <= theta}) / 2^n (H1: mean > theta),
 *     lo = the k-th smallest subset mean, hi = the k-th largest, (1 + k) / 2^n > alpha.
 * Exact (every pattern) for n <= STATS_SIGNFLIP_EXACT_MAX; above, the `resamples` random
 * patterns of stats_signflip (the same draws, p = (1 + hits) / (1 + resamples)).  When the
 * test cannot reject at alpha with n pairs (2 / 2^n > alpha two-sided, 1 / 2^n > alpha
 * one-sided, exact) every shift is accepted: bounded = 0 and ci is {0, 0}. */
typedef struct {
    size_t n;
    double alpha;
    double ci[2];
    int bounded;
    int exact;
    double p_min; /* the smallest p the test can give */
    uint64_t patterns;
} stats_signflip_ci_result;
int stats_signflip_ci(const double *d, size_t n, double alpha, int one_sided, size_t resamples,
                      uint64_t seed, stats_signflip_ci_result *res, stats_error *err);

/* Paired TOST of |mean(b - a)| < delta (equivalence within the pre-registered delta).
 *   t:        p_lower = P(T >= t_lower) of the one-sided t-test of mean(d) <= -delta,
 *             p_upper = P(T <= t_upper) of mean(d) >= delta (statsmodels ttost_paired(b, a,
 *             -delta, delta)); ci = the 1 - 2 alpha t interval of mean(d).  Needs n >= 2 and
 *             sd > 0 (else degenerate, not equivalent: `degenerate` says which).
 *   signflip: the exact one-sided sign-flip tests of mean(d) <= -delta (statistic
 *             sum(d + delta)) and mean(d) >= delta; ci = the one-sided inversion interval
 *             above at alpha (1 - 2 alpha jointly).  Needs n >= 1.
 * p = max(p_lower, p_upper); equivalent = p <= alpha.  err->arg: 1 = a, 2 = b, 3 = options. */
/* Why a TOST is undefined (with n, the test and n's minimum: 2 for t, 1 for sign flip). */
enum stats_tost_degenerate { STATS_TOST_OK = 0, STATS_TOST_SMALL_N, STATS_TOST_CONSTANT };

typedef struct {
    int test;         /* enum stats_test */
    double delta;     /* > 0 */
    double alpha;     /* (0, 0.5) */
    size_t resamples; /* sign flip above STATS_SIGNFLIP_EXACT_MAX */
    uint64_t seed;
} stats_tost_opts;
typedef struct {
    size_t n;
    double mean, sd;
    double t_lower, t_upper, df; /* t only */
    double p, p_lower, p_upper;
    double ci[2];
    int ci_bounded; /* 0: the sign-flip interval is the whole line (see stats_signflip_ci) */
    int equivalent;
    int defined;    /* 0 when degenerate: p, ci undefined, not equivalent */
    int degenerate; /* enum stats_tost_degenerate, STATS_TOST_OK when defined */
} stats_tost_result;
int stats_tost(const double *a, size_t na, const double *b, size_t nb,
               const stats_tost_opts *opts, stats_tost_result *res, stats_error *err);

/* The seed count a design needs.  t: the smallest n >= 2 whose two-sided paired t-test at
 * level alpha / m has power >= `power` at d_z = delta / sd (noncentral t; statsmodels
 * TTestPower().solve_power(delta / sd, alpha = alpha / m, power = power) rounded up).
 * signflip: the larger of that and the smallest n with 2^(1 - n) <= alpha / m, the least
 * n at which the exact test can reject at all.  err->arg: 1 = the design (the message
 * names the field); STATS_EINVAL also when more than STATS_SEEDS_MAX seeds would be
 * needed. */
typedef struct {
    double sd, delta, alpha, power;
    size_t m;
    int test;
} stats_design;
typedef struct {
    size_t n;
    size_t n_power;    /* from the t-test power alone */
    size_t n_reach;    /* the least n whose test can reach alpha / m: 2 for t */
    double level;      /* alpha / m */
    double d_z;        /* delta / sd */
    double power;      /* the t-test power achieved at n */
} stats_seeds_result;
int stats_seeds_needed(const stats_design *design, stats_seeds_result *res, stats_error *err);
/* The least n at which `test` can give p <= level (2 for t; 1 + log2(1 / level) rounded
 * up for the exact sign flip), level in (0, 1). */
size_t stats_min_seeds(int test, double level);
/* The one-sided upper confidence limit at level `conf` of a standard deviation sd
 * estimated with df degrees of freedom (normal data): sd · sqrt(df / q), q the (1 − conf)
 * quantile of chi-square(df), so that P(sigma <= limit) = conf.  For seeds from a
 * pilot without the optimism of a small pilot's sd.  df > 0, conf in (0, 1); err->arg:
 * 1 = sd, 2 = df, 3 = conf. */
int stats_sd_upper(double sd, double df, double conf, double *limit, stats_error *err);

/* ---- Proportions (stats/proportion.c) ----
 * Clopper-Pearson exact interval of k successes in n trials at level 1 - alpha:
 * lo = Beta^-1(alpha/2; k, n - k + 1) (0 when k = 0), hi = Beta^-1(1 - alpha/2; k + 1,
 * n - k) (1 when k = n).  n >= 1, k <= n.  err->arg: 1 = k, 2 = n, 3 = alpha. */
int stats_clopper_pearson(size_t k, size_t n, double alpha, double ci[2], stats_error *err);

/* Probability of improvement: the share of pairs where the treatment b is better than
 * the baseline a (b < a when lower_is_better, else b > a; ties are not better), with its
 * Clopper-Pearson interval.  n = 0 leaves share and ci undefined (defined = 0). */
typedef struct {
    size_t n, better, ties;
    double share, ci[2];
    int defined;
} stats_improvement_result;
int stats_improvement(const double *a, size_t na, const double *b, size_t nb,
                      int lower_is_better, double alpha, stats_improvement_result *res,
                      stats_error *err);

/* ---- Sources of variance (stats/anova.c) ----
 * Two-way crossed random-effects ANOVA without replication: y (rows x cols, row-major),
 * one value per (row level, column level) cell, model y_ij = mu + A_i + B_j + e_ij with
 * A, B, e independent, variances var_row, var_col, var_resid.  Sums of squares of the
 * additive two-way layout; the variance components by the method of moments (expected
 * mean squares E[MS_row] = var_resid + cols var_row, E[MS_col] = var_resid + rows var_col,
 * E[MS_resid] = var_resid): var_row = (MS_row - MS_resid) / cols, var_col = (MS_col -
 * MS_resid) / rows.  A negative estimate is kept as such and flagged; the shares use the
 * estimates truncated at 0.  F = MS / MS_resid with its upper-tail p; undefined (have_f =
 * 0) when MS_resid = 0.  rows, cols >= 2.  err->arg: 1 = y (the message names rows/cols). */
typedef struct {
    size_t rows, cols;
    double mean;
    double ss_row, ss_col, ss_resid, ss_total;
    double df_row, df_col, df_resid;
    double ms_row, ms_col, ms_resid;
    double f_row, f_col, p_row, p_col;
    int have_f;
    double var_row, var_col, var_resid;
    int negative_row, negative_col;
    double share_row, share_col, share_resid; /* of the truncated total; 0 when it is 0 */
} stats_anova2_result;
int stats_anova2(const double *y, size_t rows, size_t cols, stats_anova2_result *res,
                 stats_error *err);

/* ---- Learning-rate sensitivity (stats/lrsens.c) ----
 * A sweep: G groups (e.g. embedding norms) x J grid points (learning rates, log-spaced) x
 * n seeds shared by the groups.  loss (G, J, n) is each run's final loss, NaN for a run
 * that diverged; init (G, n) the loss at initialization of group g and seed i (Wortsman
 * et al. 2023, "Small-scale proxies for large-scale Transformer training
 * instabilities", sec. 3.1):
 *   c[g][j][i] = min(loss, init)        (init where the run diverged)
 *   curve[g][j] = mean over i of c      ell_star = min over g, j of curve
 *   sensitivity[g] = mean over j of (curve[g][j] - ell_star)
 *   diff[g] = sensitivity[g] - sensitivity[ref] (= the difference of the groups' mean
 *   curves: ell_star cancels).
 * and against each group's own best, which leaves out the offset between the curves:
 *   own_best[g] = min over j of curve[g][j]
 *   own[g] = mean over j of (curve[g][j] - own_best[g])
 *   own_diff[g] = own[g] - own[ref].
 * Intervals: percentile (1 - alpha) bootstrap over seeds, one resample of seed indices
 * for every group (the seeds pair the groups), ell_star recomputed in each; the exact
 * distribution over all n^n resamples (as weighted multisets) when opts->exact (n <=
 * STATS_BOOT_EXACT_MAX), else opts->resamples draws from stream STATS_STREAM_LRSENS.
 * Quantiles by linear interpolation at f (total - 1) (stats_boot_quantile).  With few
 * seeds the interval is bounded by what the seeds span (see STATS_BCA_CAVEAT_N).
 * The caller provides the output arrays.  err->arg: 1 = loss (a value may be NaN, not
 * infinite), 2 = init (finite), 3 = opts. */
typedef struct {
    size_t ref;       /* the reference group of diff, < G */
    double alpha;     /* (0, 1) */
    size_t resamples; /* >= STATS_MIN_RESAMPLES unless exact */
    uint64_t seed;
    int exact;
} stats_lrsens_opts;
typedef struct {
    double *curve;       /* (G, J) */
    double *sensitivity; /* (G) */
    double *ci;          /* (G, 2) */
    double *diff;        /* (G) */
    double *diff_ci;     /* (G, 2) */
    double *own;         /* (G) against the group's own best */
    double *own_ci;      /* (G, 2) */
    double *own_diff;    /* (G) */
    double *own_diff_ci; /* (G, 2) */
    double ell_star;
    size_t star_group, star_point;
    int exact;
    uint64_t total;      /* n^n, or the Monte Carlo count */
} stats_lrsens_result;
int stats_lr_sensitivity(const double *loss, const double *init, size_t groups, size_t points,
                         size_t n, const stats_lrsens_opts *opts, stats_lrsens_result *res,
                         stats_error *err);

/* ---- Robust companions of a paired comparison (stats/robust.c) ----
 * Exploratory, beside the paired comparison of d = b - a (no decision reads them):
 * - the Hodges-Lehmann estimate hl: the median of the n (n + 1) / 2 Walsh averages
 *   (d_i + d_j) / 2, i <= j (zeros included);
 * - its interval: the exact signed-rank test inverted, [W_(c), W_(M + 1 - c)] of the
 *   sorted Walsh averages, M = n (n + 1) / 2, c the least count with P(T+ <= c) >
 *   alpha / 2 under the null distribution of ranks 1..n (at a shift off every Walsh
 *   average d - theta has no zeros or ties), ci_level = 1 - 2 P(T+ <= c - 1) its exact
 *   confidence; none (have_ci = 0) when c = 0, i.e. 2^(1 - n) > alpha (n <= 5 at .05);
 * - the exact signed-rank test of symmetry about 0: zeros dropped (Wilcoxon's method),
 *   |d| ranked with midranks for ties, the exact conditional distribution over every sign
 *   pattern of the m non-zero differences, two-sided p = min(1, 2 min(P(W+ <= w),
 *   P(W+ >= w))); none when m = 0;
 * - the sign test: positive and negative counts (zeros dropped), two-sided binomial p at
 *   1/2, min(1, 2 P(X <= min(positive, negative))); none when m = 0.
 * A difference is zero, and two are tied, within STATS_TIE_RTOL times max |d|.
 * n <= STATS_ROBUST_MAX_N.  err->arg: 1 = a, 2 = b, 3 = alpha. */
#define STATS_ROBUST_MAX_N 300
typedef struct {
    size_t n, positive, negative, zeros;
    double alpha;
    double hl;
    double ci[2], ci_level;
    double w_plus, p_wilcoxon;
    double p_sign;
    int ties; /* tied non-zero |d| (midranks used) */
    int have_hl, have_ci, have_p_wilcoxon, have_p_sign;
} stats_robust_result;
int stats_robust(const double *a, size_t na, const double *b, size_t nb, double alpha,
                 stats_robust_result *res, stats_error *err);

/* ---- A replication against an original estimate (stats/replication.c) ----
 * The original: its estimate theta_o of a difference (treatment - baseline), its
 * standard error se_o, the standardizer sd of its effect size (the sd of its paired
 * differences, or its pooled sd) and its design: n1 pairs (n2 = 0) or two groups of n1
 * and n2.  stats_original_from_arms makes one from the two arms' mean, sd and n
 * (index 0 the baseline, 1 the treatment), unpaired: theta_o = m1 - m0, or with
 * log_ratio ln(m1 / m0) with each arm's sd on the log scale sd / m (the delta method);
 * se_o = sqrt(s0^2 / n0 + s1^2 / n1), sd the pooled sd.
 * The replication: a paired comparison's mean difference theta_r, sd and n pairs, se_r
 * = sd / sqrt(n), df = n - 1.  stats_replication computes at level alpha:
 *   ci          theta_r +- t_{1-alpha/2, df} se_r, and orig_in_ci;
 *   pi          the prediction interval for a replication (Patil, Peng & Leek 2016):
 *               theta_o +- z_{1-alpha/2} sqrt(se_o^2 + se_r^2), and in_pi; pi_t and
 *               in_pi_t the same with t_{1-alpha/2, df_o} for z (df_o below);
 *   d33         small telescopes (Simonsohn 2015): the standardized effect with power 1/3
 *               for the original's two-sided t-test at alpha (noncentral t; paired: df =
 *               n1 - 1, ncp = d sqrt(n1); two groups: df = n1 + n2 - 2, ncp = d sqrt(n1 n2
 *               / (n1 + n2))); d33_raw = d33 sd in the metric's units; the one-sided test
 *               of theta_r's effect in the original's direction s = sign(theta_o) being
 *               below it: telescope_t = (s theta_r - d33_raw) / se_r, telescope_p =
 *               P(T_df <= telescope_t), too_small = telescope_p <= alpha;
 *   tost        (margin > 0) diff = theta_r - theta_o, diff_se = sqrt(se_o^2 + se_r^2),
 *               Welch-Satterthwaite diff_df = diff_se^4 / (se_o^4 / df_o + se_r^4 / df)
 *               (df_o = n1 - 1, or n1 + n2 - 2), p_lower = P(T >= (diff + margin) /
 *               diff_se), p_upper = P(T <= (diff - margin) / diff_se), tost_p the larger,
 *               tost_ci the 1 - 2 alpha interval of diff, equivalent = tost_p <= alpha.
 * same_direction: theta_r theta_o > 0 (undefined when theta_o = 0).  With n < 2 or sd = 0
 * only d33 and the direction are defined (`defined` bits).  err->arg: 1 = the original,
 * 2 = the replication, 3 = opts. */
typedef struct {
    double estimate, se, sd;
    size_t n1, n2;
} stats_original;
int stats_original_from_arms(const double mean[2], const double sd[2], const size_t n[2],
                             int log_ratio, stats_original *o, stats_error *err);
typedef struct {
    double alpha;  /* (0, 0.5) */
    double margin; /* >= 0; 0: no TOST */
} stats_replication_opts;
enum stats_replication_field {
    STATS_REPL_HAVE_DIRECTION = 1u << 0,
    STATS_REPL_HAVE_CI = 1u << 1,
    STATS_REPL_HAVE_PI = 1u << 2,
    STATS_REPL_HAVE_D33 = 1u << 3,
    STATS_REPL_HAVE_TELESCOPE = 1u << 4,
    STATS_REPL_HAVE_TOST = 1u << 5,
};
typedef struct {
    size_t n;
    double estimate, se, df;
    double ci[2], pi[2], pi_t[2];
    int orig_in_ci, in_pi, in_pi_t, same_direction;
    double d33, d33_raw, telescope_t, telescope_p;
    int too_small;
    double diff, diff_se, diff_df, tost_p_lower, tost_p_upper, tost_p, tost_ci[2];
    int equivalent;
    unsigned defined; /* enum stats_replication_field bits */
} stats_replication_result;
int stats_replication(const stats_original *o, double rep_mean, double rep_sd, size_t rep_n,
                      const stats_replication_opts *opts, stats_replication_result *res,
                      stats_error *err);

/* ---- Linear fit (stats/linfit.c) ----
 * Ordinary least squares y = intercept + slope x over n >= 3 points (gsl_fit_linear), the
 * slope's standard error and (1 - alpha) t interval on n - 2 degrees of freedom, and the
 * fitted mean at x0 with its standard error
 *   resid_sd sqrt(1/n + (x0 - mean x)^2 / Sxx)
 * and t interval (the confidence interval of the regression line at x0, not a prediction
 * interval for a new point).  err->arg: 1 = x (finite, not all equal), 2 = y, 3 = x0,
 * 4 = alpha. */
typedef struct {
    size_t n;
    double df, intercept, slope, slope_se, slope_ci[2], resid_sd;
    double at, fit, fit_se, fit_ci[2], t_quantile;
} stats_linfit_result;
int stats_linfit(const double *x, const double *y, size_t n, double x0, double alpha,
                 stats_linfit_result *res, stats_error *err);

/* ---- Multiple linear regression (stats/ols.c) ----
 * Ordinary least squares y = X b over n rows and p columns of X (row-major, x[i * p + j];
 * a column of ones for an intercept is the caller's), n > p, X of full column rank:
 * the coefficients b (p), their standard errors sqrt(diag(s^2 (X'X)^-1)) with s^2 the
 * residual sum of squares over n - p, and (1 - alpha) t intervals on n - p degrees of
 * freedom (ci: 2 per coefficient, lo then hi).  err->arg: 1 = x (not finite, or its
 * columns collinear: rank below p), 2 = y, 3 = sizes, 4 = alpha. */
typedef struct {
    size_t n, p;
    double df, resid_sd, t_quantile;
    double *coef, *se, *ci; /* p, p, 2p: the caller's arrays */
} stats_ols_result;
int stats_ols(const double *x, const double *y, size_t n, size_t p, double alpha,
              stats_ols_result *res, stats_error *err);

/* The upper tail of the standard normal, P(Z > z). */
double stats_normal_q(double z);

/* ---- Group-sequential boundaries for z (stats/sequential.c) ----
 * K <= STATS_SEQ_MAX_LOOKS looks at information fractions 0 < t_1 < ... < t_K <= 1 (t NULL:
 * equally spaced, t_k = k / K); each step t_k - t_{k-1} >= STATS_SEQ_MIN_STEP t_k.  Two-sided:
 * reject at the first look where |Z_k| >= c_k.  Under a drift theta the cumulative z
 * statistics are a Brownian motion in information time: E[Z_k] = theta sqrt(t_k),
 * cov(Z_j, Z_k) = sqrt(t_j / t_k) for j <= k (theta is E[Z] at t = 1).
 * Probabilities by the recursive integration of Armitage, McPherson & Rowe (1969) as
 * Jennison & Turnbull (2000, ch. 19) give it: the sub-density of Z_k on the region where no
 * look has stopped, on Simpson nodes of spacing at most min(0.025, min_k sqrt((t_k -
 * t_{k-1}) / t_k) / 6), cut at theta sqrt(t_k) +- 10.  Constants agree with Jennison &
 * Turnbull's Tables 2.1 and 2.3 to their three decimals (tests/c/test_sequential.c).
 * Shapes: O'Brien-Fleming c_k = C sqrt(t_K / t_k) (C sqrt(K / k) when equally spaced),
 * Pocock c_k = C.  Spending (Lan & DeMets 1983), the cumulative alpha spent by fraction t:
 * O'Brien-Fleming type 2 - 2 Phi(z_{1-alpha/2} / sqrt(t)), Pocock type alpha ln(1 + (e - 1) t).
 * err->arg: 1 = t (or K), 2 = the shape or bounds, 3 = alpha, drift or futility. */
#define STATS_SEQ_MAX_LOOKS 20
#define STATS_SEQ_MIN_STEP 1e-3
/* A look that spends no alpha gets this bound: P(|Z| >= it) is below 1e-299. */
#define STATS_SEQ_Z_MAX 37.0
enum stats_seq_shape { STATS_SEQ_OBF = 0, STATS_SEQ_POCOCK = 1 };
/* The looks' fractions: t (K values) or, when t is NULL, k / K. */
int stats_seq_fractions(const double *t, size_t K, double *out, stats_error *err);
/* The shape's factor at each look: c_k = C factor[k] (STATS_SEQ_OBF: sqrt(t_K / t_k)). */
void stats_seq_shape(int shape, const double *t, size_t K, double *factor);
/* C with P(reject at some look | theta = 0) = alpha, and bounds[k] = C factor[k]. */
int stats_seq_constant(const double *t, size_t K, int shape, double alpha, double *c,
                       double *bounds, stats_error *err);
/* The cumulative alpha spent by fraction t (0 <= t <= 1). */
double stats_seq_spend(int shape, double alpha, double t);
/* Bounds whose look k spends spend(t_k) - spend(t_{k-1}): each found in turn, given the
 * ones before, by Brent's method on [0, STATS_SEQ_Z_MAX]; spent[k] = spend(t_k). */
int stats_seq_spending(const double *t, size_t K, int shape, double alpha, double *bounds,
                       double *spent, stats_error *err);
/* The probability of each way of stopping at each look, under drift theta, for the bounds
 * c_k > 0 and optional futility bounds (NULL: none) 0 <= f_k <= c_k: stop for futility at
 * look k < K when |Z_k| < f_k (binding).  At the last look every study that gets there
 * stops: futility[K - 1] is the chance of ending there without rejecting. */
typedef struct {
    size_t looks;
    double t[STATS_SEQ_MAX_LOOKS];
    double upper[STATS_SEQ_MAX_LOOKS];    /* P(stop at look k with Z_k >= c_k) */
    double lower[STATS_SEQ_MAX_LOOKS];    /* P(stop at look k with Z_k <= -c_k) */
    double futility[STATS_SEQ_MAX_LOOKS]; /* P(stop at look k without rejecting) */
    double stop[STATS_SEQ_MAX_LOOKS];     /* the sum of the three */
    double reject;                        /* the sum of upper and lower over the looks */
    double expected_t;                    /* E[t at the look that stops] */
} stats_seq_crossing_result;
int stats_seq_crossing(const double *t, size_t K, const double *bounds, const double *futility,
                       double theta, stats_seq_crossing_result *res, stats_error *err);

/* ---- Group-sequential boundaries for few paired differences (stats/sequential_sim.c) ----
 * Looks after n_1 < ... < n_K paired differences (n_K <= STATS_SEQ_MAX_N), t_k = n_k / n_K,
 * a shape as above, and a test whose statistic at look k is
 *   z            sum(d) / sqrt(n_k) (the variance known, 1);
 *   t            the paired t, df n_k - 1 (n_1 >= 2);
 *   signed_rank  the standardized signed-rank sum (W+ - n(n + 1) / 4) / sqrt(n (n + 1)
 *                (2n + 1) / 24) of the first n_k differences, |d| ranked among them.
 * Two-sided: reject at the first look where the test's z-equivalent reaches C factor[k]:
 * for z and signed_rank the statistic itself, for t the normal quantile with the same
 * p-value, so the t bound at look k is the t quantile (df n_k - 1) of the p-value of the
 * z bound C factor[k].  No table gives C for few pairs, so it is calibrated by
 * simulation, under the null: differences iid N(0, 1) from stream
 * (seed, STATS_STREAM_SEQ_CALIBRATE) (for signed_rank the null of any symmetric
 * distribution: its statistics depend only on the signs and the ranks of |d|).
 * Each study's M = max_k e_k / factor[k], e_k the z-equivalent, rejects exactly when
 * M >= C; C lies halfway between the smallest attained M that at most floor(alpha N) of
 * the N studies reach and the next smaller attained M.  That is where a bisection of C on
 * the simulated error with common random numbers ends, found exactly.  error is the share
 * of studies that reject at C (<= alpha); next_error the share at the next smaller
 * attained M (> alpha): the gap is the test's discreteness (signed_rank) or 1 / N.  When
 * more than alpha N studies reach the largest M, no C rejects anything: C is that M + 1 and
 * error 0.  alpha N >= 10.  err->arg: 1 = n, 2 = targets, 3 = the options. */
#define STATS_SEQ_MAX_N 1000
#define STATS_SEQ_MAX_STUDIES 100000000
/* STATS_SEQ_T_FLIP (the paired t by sign flips, below) only in stats_seq_simulate. */
enum stats_seq_test {
    STATS_SEQ_Z = 0,
    STATS_SEQ_T = 1,
    STATS_SEQ_SIGNED_RANK = 2,
    STATS_SEQ_T_FLIP = 3,
};
typedef struct {
    int test, shape;
    double alpha;
} stats_seq_target;
typedef struct {
    double c;
    double bounds[STATS_SEQ_MAX_LOOKS]; /* on the statistic's own scale (t for t) */
    double error, next_error;
} stats_seq_calibration;
int stats_seq_calibrate(const size_t *n, size_t K, const stats_seq_target *targets,
                        size_t ntargets, size_t studies, uint64_t seed,
                        stats_seq_calibration *out, stats_error *err);
/* The bound of test at each look for the constant c (z-equivalent c factor[k], on the
 * statistic's own scale). */
int stats_seq_test_bounds(int test, int shape, const size_t *n, size_t K, double c,
                          double *bounds, stats_error *err);

/* The chance that rules reject, by simulation: N studies, each of m independent
 * comparisons (a family tested with the Bonferroni-split alpha: each rule's c or alpha is
 * the one for alpha / m), each comparison n_K differences d = shift + e, e iid N(0, 1) or Student t
 * with 3 df scaled to variance 1 (STATS_SEQ_T3), from stream (seed,
 * STATS_STREAM_SEQ_SIMULATE).  A comparison stops at its own first look that rejects.
 * Every rule sees the same draws.  reject: the share of studies in which some comparison
 * rejects (the family-wise error under the null, shift 0), se = sqrt(reject (1 - reject)
 * / N); stop[k]: the share of the m N comparisons that reject at look k; expected_n: the
 * mean number of differences a comparison uses.  m <= STATS_SEQ_MAX_M.  err->arg: 1 = n,
 * 2 = rules, 3 = opts. */
#define STATS_SEQ_MAX_M 100
enum stats_seq_dist { STATS_SEQ_NORMAL = 0, STATS_SEQ_T3 = 1 };
/* A rule: test and shape with constant c; or, when bounds is not NULL, those K bounds on
 * the test's own scale (stats_seq_rank_spending's for signed_rank, with its atom and gamma
 * when not NULL); or test STATS_SEQ_T_FLIP, which spends alpha by the shape's spending
 * function.  Comparison j (0-based, over all studies) has key stats_seq_sim_key(seed, j). */
typedef struct {
    int test, shape;
    double c;
    const double *bounds, *atom, *gamma;
    double alpha;
} stats_seq_rule;
typedef struct {
    int dist;
    size_t m;
    double shift;
    size_t studies;
    uint64_t seed;
} stats_seq_sim_opts;
typedef struct {
    double reject, se;
    uint64_t rejections; /* studies */
    double stop[STATS_SEQ_MAX_LOOKS];
    double expected_n;
} stats_seq_sim_result;
int stats_seq_simulate(const size_t *n, size_t K, const stats_seq_rule *rules, size_t nrules,
                       const stats_seq_sim_opts *opts, stats_seq_sim_result *out,
                       stats_error *err);
/* The key of simulated comparison j of the simulation with this seed (splitmix64). */
uint64_t stats_seq_sim_key(uint64_t seed, uint64_t j);

/* ---- Boundaries by alpha spending on the test's exact null (stats/sequential_exact.c) ----
 * Looks n_1 < ... < n_K as above, t_k = n_k / n_K, and the shape's spending function
 * spend(t) (stats_seq_spend).  Look k spends exactly spend(t_k) - spend(t_{k-1}) of the
 * test's null law: a randomized test (Lehmann & Romano, Testing Statistical Hypotheses,
 * sec. 3.2; Jennison & Turnbull 2000, ch. 12 on discrete sequential tests).  Each
 * comparison has a key (uint64); its random draws come from PCG streams of that key, so a
 * rerun gives the same decision, and different keys independent draws.
 *   signed_rank  the null law of the look statistics is that of random signs with the
 *     ranks of |d| in a random order, for any continuous symmetric distribution.  When
 *     n_K <= STATS_SEQ_EXACT_N it is computed exactly: the 2^n sign strings ordered by |d|,
 *     each new difference inserted at a uniform rank with a fair sign.  Otherwise it is
 *     estimated from `studies` null studies (stream (seed, STATS_STREAM_SEQ_SPEND)).
 *     Look k rejects every |W+ - n(n+1)/4| above its boundary atom, and the atom itself
 *     when the comparison's draw u_k = stats_seq_draw(key, k) < gamma[k]; the atom's
 *     surviving share 1 - gamma[k] goes on to the later looks.  On the standardized W+
 *     scale: reject when |z| >= bounds[k] (halfway below the least value above the atom;
 *     STATS_SEQ_Z_MAX when none), or atom[k] <= |z| < bounds[k] (halfway below the atom)
 *     and u_k < gamma[k].  spent[k]: the null chance of crossing by look k (spend(t_k) up
 *     to rounding, or the simulated law's); next[k]: that chance had the whole atom
 *     crossed, the least level a test without the draw attains above spend(t_k).
 *   t_flip  the paired t conditional on the observed |d|: exact for any symmetric null.
 *     STATS_SEQ_FLIPS sign vectors, the first all +1 (the data), the others drawn at
 *     random from stream (key, STATS_STREAM_SEQ_FLIP): first a 64-bit tie key per vector,
 *     then difference by difference the signs of vectors 1.. (so the first n_k signs do
 *     not depend on n_K).  At look k the t statistic is monotone in |S| = |sum_{j <= n_k}
 *     f_j d_j| (sum d^2 does not change under flips); the vectors not crossed before are
 *     ordered by |S|, ties by their tie key, and the first crossed[k] - crossed[k-1] cross,
 *     crossed[k] = allowed[k] = floor(spend(t_k) STATS_SEQ_FLIPS).  The data reject at the
 *     look they cross.  Under the null the data's vector is exchangeable with the random
 *     ones, so the chance is allowed[K] / STATS_SEQ_FLIPS exactly (Hemerik & Goeman 2018,
 *     Exact testing with random permutations, TEST 27). */
#define STATS_SEQ_EXACT_N 20
#define STATS_SEQ_FLIPS 1600
typedef struct {
    double bounds[STATS_SEQ_MAX_LOOKS], atom[STATS_SEQ_MAX_LOOKS], gamma[STATS_SEQ_MAX_LOOKS];
    double spent[STATS_SEQ_MAX_LOOKS], next[STATS_SEQ_MAX_LOOKS];
    double target[STATS_SEQ_MAX_LOOKS]; /* spend(t_k) */
    int exact;                          /* 1: the exact law; 0: simulated */
} stats_seq_rank_design;
/* One design per target (test STATS_SEQ_SIGNED_RANK, a shape, alpha); err->arg: 1 = n,
 * 2 = targets, 3 = studies. */
int stats_seq_rank_spending(const size_t *n, size_t K, const stats_seq_target *targets,
                            size_t ntargets, size_t studies, uint64_t seed,
                            stats_seq_rank_design *out, stats_error *err);
/* The draw u_k in [0, 1) of look k (0-based) of the comparison with this key: the
 * (k + 1)-th uniform of stream (key, STATS_STREAM_SEQ_ATOM). */
double stats_seq_draw(uint64_t key, size_t k);
/* The first `looks` looks (1 <= looks <= K) of the comparison with this key and
 * differences d (n_looks of them; n_1 >= 2) under the sign-flip t design.  bounds[k]: the
 * t whose |S| is v_k, the largest |S| of a vector that stays (the data cross when |t|
 * exceeds it, or equals it and their tie key ranks them among those that cross), z[k] the normal quantile with its
 * two-sided p on n_k - 1 df (for the level of an interval); t[k] the data's t; crossed[k]
 * the vectors crossed by look k; reject_at the first look (0-based) at which the data
 * cross, else looks.  err->arg: 1 = d, 2 = n, 3 = the shape or alpha. */
typedef struct {
    double bounds[STATS_SEQ_MAX_LOOKS], z[STATS_SEQ_MAX_LOOKS], t[STATS_SEQ_MAX_LOOKS];
    size_t crossed[STATS_SEQ_MAX_LOOKS], allowed[STATS_SEQ_MAX_LOOKS];
    size_t reject_at;
} stats_seq_flip_result;
int stats_seq_flip_t(const double *d, const size_t *n, size_t K, size_t looks, int shape,
                     double alpha, uint64_t key, stats_seq_flip_result *out, stats_error *err);

#endif
