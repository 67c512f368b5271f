/* The C API of stats/ against tests/vectors/stats.json (the shared reference values)
 * and tests/vectors/nct.json (noncentral t CDF values from mpmath and scipy), the robust and
 * replication statistics against tests/vectors/replication_ref.json (scipy, statsmodels), its
 * degenerate paths and bad arguments, and properties (Holm monotone, exact bootstrap
 * equal to brute force, sign-flip Monte Carlo near its exact value, determinism).
 * No reference value is typed in here: every one is read from the JSON files. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>

#include "../../engine/pcg.h"
#include "../../stats/stats.h"
#include "check.h"
#include "json_min.h"

#define RTOL 1e-9

static int near_rel(double got, double want, double rtol)
{
    return isfinite(got) && fabs(got - want) <= rtol * fabs(want);
}

#define CHECK_REL(got, want, what)                                                       \
    CHECK(near_rel((got), (want), RTOL), "%s: got %.17g, want %.17g", what, (double)(got), \
          (double)(want))

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* Reads a JSON array of numbers into x (at most cap); returns the count. */
static size_t read_array(const jv *arr, double *x, size_t cap)
{
    size_t n = 0;
    for (; arr && arr->type == JV_ARR && n < arr->n && n < cap; n++)
        x[n] = jv_num(jv_at(arr, n));
    return n;
}

/* "1172/3125" as a count over a total. */
static int read_fraction(const jv *v, uint64_t *num, uint64_t *den)
{
    return v && v->type == JV_STR && sscanf(v->str, "%" SCNu64 "/%" SCNu64, num, den) == 2;
}

/* Every double of a paired result is finite (undefined ones are 0, never NaN). */
static int result_all_finite(const stats_paired_result *r)
{
    const double v[] = {r->mean, r->sd, r->df, r->t, r->p_t, r->ci_t[0], r->ci_t[1],
                        r->p_signflip, r->p_signflip_se, r->p_signflip_min,
                        r->ci_percentile[0], r->ci_percentile[1], r->ci_bca[0], r->ci_bca[1],
                        r->bca_z0, r->bca_a, r->d_z, r->g_z, r->hedges_j, r->ci_d_z[0],
                        r->ci_d_z[1], r->ci_g_z[0], r->ci_g_z[1], r->mde_d_z, r->mde};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (!isfinite(v[i]))
            return 0;
    return 1;
}

/* The paired_AB block: every value that is a paired statistic. */
static void check_paired_ab(const jv *ref)
{
    double a[16], b[16];
    size_t na = read_array(jv_get(ref, "A", NULL), a, 16);
    size_t nb = read_array(jv_get(ref, "B", NULL), b, 16);
    CHECK(na == 5 && nb == na, "read A and B (%zu, %zu)", na, nb);

    stats_paired_opts o;
    stats_paired_opts_default(&o);
    for (int exact = 0; exact <= 1; exact++) {
        o.exact = exact;
        stats_paired_result r;
        stats_error err;
        int status = stats_paired(a, na, b, nb, &o, &r, &err);
        CHECK(status == STATS_OK, "paired status %d", status);
        CHECK(r.degenerate == 0 && r.bca_reason == STATS_BCA_DEFINED, "not degenerate: %#x",
              r.degenerate);
        CHECK(r.n == (size_t)jv_num(jv_get(ref, "n", NULL)), "n = %zu", r.n);
        CHECK_REL(r.mean, jv_num(jv_get(ref, "mean", NULL)), "mean");
        CHECK_REL(r.sd, jv_num(jv_get(ref, "sd", NULL)), "sd");
        CHECK_REL(r.t, jv_num(jv_get(ref, "t", NULL)), "t");
        CHECK_REL(r.df, jv_num(jv_get(ref, "df", NULL)), "df");
        CHECK_REL(r.p_t, jv_num(jv_get(ref, "p_t", NULL)), "p_t");
        const jv *ci_t = jv_get(ref, "mean_ci_t", NULL);
        CHECK_REL(r.ci_t[0], jv_num(jv_at(ci_t, 0)), "ci_t lo");
        CHECK_REL(r.ci_t[1], jv_num(jv_at(ci_t, 1)), "ci_t hi");
        CHECK_REL(r.p_signflip, jv_num(jv_get(ref, "p_signflip", NULL)), "p_signflip");
        CHECK(r.signflip_exact && r.p_signflip_min == ldexp(1.0, 1 - (int)r.n),
              "signflip exact with p_min 2/2^n: %g", r.p_signflip_min);
        CHECK_REL(r.d_z, jv_num(jv_get(ref, "d_z", NULL)), "d_z");
        CHECK_REL(r.hedges_j, jv_num(jv_get(ref, "J_approx", NULL)), "J");
        CHECK_REL(r.g_z, jv_num(jv_get(ref, "g_z", NULL)), "g_z");
        const jv *ci_d = jv_get(ref, "d_z_ci_nct", NULL), *ci_g = jv_get(ref, "g_z_ci_nct", NULL);
        CHECK_REL(r.ci_d_z[0], jv_num(jv_at(ci_d, 0)), "ci_d_z lo");
        CHECK_REL(r.ci_d_z[1], jv_num(jv_at(ci_d, 1)), "ci_d_z hi");
        CHECK_REL(r.ci_g_z[0], jv_num(jv_at(ci_g, 0)), "ci_g_z lo");
        CHECK_REL(r.ci_g_z[1], jv_num(jv_at(ci_g, 1)), "ci_g_z hi");
        CHECK(r.defined == (STATS_HAVE_MEAN | STATS_HAVE_SD | STATS_HAVE_T | STATS_HAVE_SIGNFLIP |
                            STATS_HAVE_PERCENTILE | STATS_HAVE_BCA | STATS_HAVE_D_Z |
                            STATS_HAVE_CI_D_Z | STATS_HAVE_MDE_D_Z | STATS_HAVE_MDE |
                            STATS_HAVE_DF),
              "every field defined: %#x", r.defined);
        CHECK(result_all_finite(&r), "no NaN or infinity in the result");
        CHECK(r.bootstrap_exact == exact, "bootstrap_exact %d", r.bootstrap_exact);
    }
}

/* The exact enumeration block, from the C distribution functions. */
static void check_exact_bootstrap(const jv *ref)
{
    const jv *ex = jv_get(ref, "bootstrap_exact_enumeration", NULL);
    double a[16], b[16], d[16];
    size_t n = read_array(jv_get(ref, "A", NULL), a, 16);
    read_array(jv_get(ref, "B", NULL), b, 16);
    for (size_t i = 0; i < n; i++)
        d[i] = b[i] - a[i];
    double alpha = 0.05; /* stats.json: "95% intervals" */

    stats_boot_dist *dist = NULL;
    int status = stats_boot_dist_exact(d, n, &dist);
    CHECK(status == STATS_OK && dist, "exact distribution");
    if (!dist)
        return;
    CHECK(dist->total == (uint64_t)jv_num(jv_get(ex, "n_resamples_total", NULL)),
          "n^n resamples: %" PRIu64, dist->total);
    uint64_t sum = 0;
    for (size_t i = 0; i < dist->k; i++)
        sum += dist->count[i];
    CHECK(sum == dist->total, "multinomial counts sum to n^n: %" PRIu64, sum);

    /* distinct means: values more than the tie tolerance apart */
    double abs_mean = 0.0, mean = 0.0;
    for (size_t i = 0; i < n; i++) {
        abs_mean += fabs(d[i]) / (double)n;
        mean += d[i];
    }
    mean /= (double)n;
    double tol = STATS_TIE_RTOL * abs_mean;
    size_t distinct = dist->k > 0;
    for (size_t i = 1; i < dist->k; i++)
        distinct += dist->value[i] - dist->value[i - 1] > tol;
    CHECK(distinct == (size_t)jv_num(jv_get(ex, "n_distinct_means", NULL)), "distinct means %zu",
          distinct);

    uint64_t less = 0, less_eq = 0, num, den;
    for (size_t i = 0; i < dist->k; i++) {
        less += dist->value[i] < mean - tol ? dist->count[i] : 0;
        less_eq += dist->value[i] <= mean + tol ? dist->count[i] : 0;
    }
    CHECK(read_fraction(jv_get(ex, "P_less", NULL), &num, &den) && num == less &&
              den == dist->total,
          "P_less = %" PRIu64 "/%" PRIu64, less, dist->total);
    CHECK(read_fraction(jv_get(ex, "P_equal", NULL), &num, &den) && num == less_eq - less &&
              den == dist->total,
          "P_equal = %" PRIu64 "/%" PRIu64, less_eq - less, dist->total);

    stats_boot_ci ci;
    status = stats_boot_intervals(d, n, dist, alpha, &ci);
    CHECK(status == STATS_OK && ci.bca_defined, "intervals");
    const char *pct_keys[] = {"percentile_np_linear", "percentile_inverse_cdf",
                              "percentile_np_linear_bruteforce_float"};
    for (int k = 0; k < 3; k++) {
        const jv *p = jv_get(ex, pct_keys[k], NULL);
        CHECK_REL(ci.ci_percentile[0], jv_num(jv_at(p, 0)), pct_keys[k]);
        CHECK_REL(ci.ci_percentile[1], jv_num(jv_at(p, 1)), pct_keys[k]);
    }
    CHECK_REL(ci.a, jv_num(jv_get(ex, "a_hat", NULL)), "a_hat");
    CHECK_REL(ci.a, jv_num(jv_get(ex, "bca_float_enumeration_scipy_rule", "a", NULL)), "a");
    const jv *bca = jv_get(ex, "bca_scipy_ties_half", NULL);
    CHECK_REL(ci.z0, jv_num(jv_get(bca, "z0", NULL)), "z0");
    CHECK_REL(ci.alpha_bca[0], jv_num(jv_get(bca, "alpha1", NULL)), "alpha1");
    CHECK_REL(ci.alpha_bca[1], jv_num(jv_get(bca, "alpha2", NULL)), "alpha2");
    CHECK_REL(ci.ci_bca[0], jv_num(jv_at(jv_get(bca, "ci_np_linear", NULL), 0)), "bca lo");
    CHECK_REL(ci.ci_bca[1], jv_num(jv_at(jv_get(bca, "ci_np_linear", NULL), 1)), "bca hi");

    /* The other z0 rule (R's boot: strict less only), for contrast: same a, same
     * quantile function, z0 = Phi^-1(P_less). */
    const jv *strict = jv_get(ex, "bca_strict_less_Rboot", NULL);
    double z0 = gsl_cdf_ugaussian_Pinv((double)less / (double)dist->total);
    CHECK_REL(z0, jv_num(jv_get(strict, "z0", NULL)), "strict z0");
    double zq[2] = {gsl_cdf_ugaussian_Pinv(alpha / 2), gsl_cdf_ugaussian_Pinv(1 - alpha / 2)};
    for (int k = 0; k < 2; k++) {
        double w = z0 + zq[k];
        double level = gsl_cdf_ugaussian_P(z0 + w / (1 - ci.a * w));
        CHECK_REL(level, jv_num(jv_get(strict, k ? "alpha2" : "alpha1", NULL)), "strict level");
        CHECK_REL(stats_boot_quantile(dist, level),
                  jv_num(jv_at(jv_get(strict, "ci_np_linear", NULL), k)), "strict ci");
    }
    stats_boot_dist_free(dist);

    /* The float brute-force entries: numpy's means (left-to-right sum / n) over all n^n
     * index tuples compared with no tolerance give the float artefact counts. */
    uint64_t total = 1;
    for (size_t i = 0; i < n; i++)
        total *= n;
    stats_boot_dist fl = {malloc(total * sizeof(double)), malloc(total * sizeof(uint64_t)),
                          (size_t)total, total};
    double theta = 0.0;
    for (size_t i = 0; i < n; i++)
        theta += d[i];
    theta /= (double)n;
    uint64_t fless = 0, fleq = 0;
    for (uint64_t code = 0; code < total; code++) {
        double s = 0.0;
        uint64_t c = code;
        for (size_t i = 0; i < n; i++, c /= n)
            s += d[c % n];
        fl.value[code] = s / (double)n;
        fl.count[code] = 1;
        fless += fl.value[code] < theta;
        fleq += fl.value[code] <= theta;
    }
    const jv *fle = jv_get(ex, "float_enumeration_P_less_eq", NULL);
    CHECK(fless == (uint64_t)jv_num(jv_at(fle, 0)) && fleq == (uint64_t)jv_num(jv_at(fle, 1)),
          "float enumeration counts %" PRIu64 " %" PRIu64, fless, fleq);
    const jv *fb = jv_get(ex, "bca_float_enumeration_scipy_rule", NULL);
    double fz0 = gsl_cdf_ugaussian_Pinv((double)(fless + fleq) / (2.0 * (double)total));
    CHECK_REL(fz0, jv_num(jv_get(fb, "z0", NULL)), "float z0");
    qsort(fl.value, total, sizeof(double), cmp_double);
    for (int k = 0; k < 2; k++) {
        double w = fz0 + zq[k];
        double level = gsl_cdf_ugaussian_P(fz0 + w / (1 - ci.a * w));
        CHECK_REL(stats_boot_quantile(&fl, level), jv_num(jv_at(jv_get(fb, "ci", NULL), k)),
                  "float bca ci");
    }
    free(fl.value);
    free(fl.count);
}

/* Monte Carlo intervals against the exact ones: with the default seed within one
 * lattice step (0.1 / n for one-decimal data) as the issue asks; with other seeds
 * within the largest gap between adjacent distinct resample means, the resolution of
 * the exact distribution itself. */
static void check_mc_bootstrap(const jv *ref)
{
    const jv *ex = jv_get(ref, "paired_AB", "bootstrap_exact_enumeration", NULL);
    double a[16], b[16], d[16];
    size_t n = read_array(jv_get(ref, "paired_AB", "A", NULL), a, 16);
    read_array(jv_get(ref, "paired_AB", "B", NULL), b, 16);
    int one_decimal = 1;
    for (size_t i = 0; i < n; i++) {
        d[i] = b[i] - a[i];
        one_decimal &= fabs(a[i] * 10 - round(a[i] * 10)) < 1e-9 &&
                       fabs(b[i] * 10 - round(b[i] * 10)) < 1e-9;
    }
    CHECK(one_decimal, "the reference data have one decimal");
    double step = 0.1 / (double)n;
    double want[4] = {jv_num(jv_at(jv_get(ex, "percentile_np_linear", NULL), 0)),
                      jv_num(jv_at(jv_get(ex, "percentile_np_linear", NULL), 1)),
                      jv_num(jv_at(jv_get(ex, "bca_scipy_ties_half", "ci_np_linear", NULL), 0)),
                      jv_num(jv_at(jv_get(ex, "bca_scipy_ties_half", "ci_np_linear", NULL), 1))};

    stats_boot_dist *exact = NULL;
    stats_boot_dist_exact(d, n, &exact);
    double gap = 0.0, tol = 1e-9;
    for (size_t i = 1; exact && i < exact->k; i++)
        if (exact->value[i] - exact->value[i - 1] > tol)
            gap = fmax(gap, exact->value[i] - exact->value[i - 1]);
    stats_boot_dist_free(exact);

    stats_paired_opts o;
    stats_paired_opts_default(&o);
    for (uint64_t seed = 1; seed <= 20; seed++) {
        o.seed = seed;
        stats_paired_result r;
        stats_paired(a, n, b, n, &o, &r, NULL);
        double got[4] = {r.ci_percentile[0], r.ci_percentile[1], r.ci_bca[0], r.ci_bca[1]};
        double limit = (seed == 1 ? step : gap) + tol;
        for (int k = 0; k < 4; k++)
            CHECK(fabs(got[k] - want[k]) <= limit,
                  "seed %" PRIu64 " endpoint %d: Monte Carlo %.6g vs exact %.6g (limit %g)",
                  seed, k, got[k], want[k], limit);
        CHECK(r.resamples == o.resamples && !r.bootstrap_exact, "B resamples");
    }

    /* Determinism: the same seed gives the same bits, another seed other draws. */
    stats_paired_result r1, r2, r3;
    o.seed = 7;
    stats_paired(a, n, b, n, &o, &r1, NULL);
    stats_paired(a, n, b, n, &o, &r2, NULL);
    o.seed = 8;
    stats_paired(a, n, b, n, &o, &r3, NULL);
    CHECK(memcmp(&r1, &r2, sizeof r1) == 0, "same seed, same result");
    CHECK(r1.bca_z0 != r3.bca_z0, "another seed, other resamples");
}

static void check_holm(const jv *cases)
{
    for (size_t c = 0; cases && c < cases->n; c++) {
        const jv *cs = jv_at(cases, c);
        double p[64], want[64], rej[64];
        size_t m = read_array(jv_get(cs, "p", NULL), p, 64);
        read_array(jv_get(cs, "adjusted", NULL), want, 64);
        /* the level is in the key's name: "reject_at_0.05" */
        double alpha = NAN;
        const jv *rj = NULL;
        for (size_t i = 0; i < cs->n; i++)
            if (sscanf(cs->keys[i], "reject_at_%lf", &alpha) == 1) {
                rj = &cs->items[i];
                break;
            }
        read_array(rj, rej, 64);
        double adjusted[64];
        int reject[64];
        int status = stats_holm(p, m, alpha, adjusted, reject, NULL);
        CHECK(status == STATS_OK && m > 0 && rj, "holm case %zu", c);
        for (size_t i = 0; i < m; i++) {
            CHECK_REL(adjusted[i], want[i], "holm adjusted");
            CHECK(reject[i] == (int)rej[i], "holm case %zu reject[%zu] = %d", c, i, reject[i]);
        }
    }
}

static void check_power(const jv *pw)
{
    size_t checked = 0;
    for (size_t i = 0; pw && i < pw->n; i++) {
        size_t n;
        double alpha, power, d_z, got;
        const char *key = pw->keys[i];
        double want = pw->items[i].num;
        if (sscanf(key, "mde_d_z_paired_t_n%zu_alpha%lf_power%lf", &n, &alpha, &power) == 3) {
            CHECK(stats_mde(n, alpha, power, &got, NULL) == STATS_OK, "mde status");
            CHECK_REL(got, want, key);
            checked++;
        } else if (sscanf(key, "power_at_d_z_%lf_n%zu_alpha%lf", &d_z, &n, &alpha) == 3) {
            CHECK(stats_power(n, d_z, alpha, &got, NULL) == STATS_OK, "power status");
            CHECK_REL(got, want, key);
            checked++;
        }
    }
    CHECK(checked == 2, "read both power references (%zu)", checked);
}

/* The noncentral t CDF against 40-digit values and scipy, the central t, and its
 * symmetry; prints the largest errors. */
static void check_nct(const char *path)
{
    jv *doc = jv_load(path);
    CHECK(doc != NULL, "read %s", path);
    const jv *cases = jv_get(doc, "cases", NULL);
    double max_mp = 0.0, max_mp_small = 0.0, max_scipy = 0.0;
    size_t count = 0;
    for (size_t i = 0; cases && i < cases->n; i++) {
        const jv *c = jv_at(cases, i);
        double t = jv_num(jv_get(c, "t", NULL)), df = jv_num(jv_get(c, "df", NULL));
        double ncp = jv_num(jv_get(c, "ncp", NULL)), mp = jv_num(jv_get(c, "mp", NULL));
        double sp = jv_num(jv_get(c, "scipy", NULL)), got;
        int status = stats_nct_cdf(t, df, ncp, &got);
        CHECK(status == STATS_OK, "nct_cdf(%g, %g, %g) status %d", t, df, ncp, status);
        double err = fabs(got - mp);
        /* |ncp| <= 40 covers every interval a study of a few dozen seeds can need */
        double limit = fabs(ncp) <= 40 ? 1e-13 : 1e-11;
        CHECK(err <= limit, "nct_cdf(%g, %g, %g) = %.17g, want %.17g", t, df, ncp, got, mp);
        if (fabs(ncp) <= 40)
            max_mp_small = fmax(max_mp_small, err);
        max_mp = fmax(max_mp, err);
        if (isfinite(sp))
            max_scipy = fmax(max_scipy, fabs(got - sp));
        count++;
    }
    CHECK(count >= 300, "read the nct cases (%zu)", count);
    printf("nct_cdf vs 40-digit series: max abs error %.2g (|ncp| <= 40), %.2g (all %zu); "
           "vs scipy %.2g\n",
           max_mp_small, max_mp, count, max_scipy);
    jv_free(doc);

    double max_central = 0.0;
    const double dfs[] = {0.5, 1, 2, 3, 4, 7, 19, 100, 1e4};
    for (size_t k = 0; k < sizeof dfs / sizeof dfs[0]; k++)
        for (double t = -30; t <= 30; t += 0.37) {
            double got;
            stats_nct_cdf(t, dfs[k], 0.0, &got);
            max_central = fmax(max_central, fabs(got - gsl_cdf_tdist_P(t, dfs[k])));
        }
    CHECK(max_central <= 1e-13, "ncp = 0 is the central t: max error %.2g", max_central);
    printf("nct_cdf at ncp = 0 vs gsl_cdf_tdist_P: max abs error %.2g\n", max_central);

    int sym = 1, mono = 1;
    for (double t = -8; t <= 8; t += 1.3)
        for (double ncp = -6; ncp <= 6; ncp += 0.9) {
            double f1, f2, f3;
            stats_nct_cdf(t, 3, ncp, &f1);
            stats_nct_cdf(-t, 3, -ncp, &f2);
            stats_nct_cdf(t, 3, ncp + 0.5, &f3);
            sym &= fabs(f1 + f2 - 1) <= 1e-14;
            mono &= f3 <= f1;
        }
    CHECK(sym, "F(t; ncp) + F(-t; -ncp) = 1");
    CHECK(mono, "F decreases in ncp");
}

/* The d_z interval bounds of stats.json are where the CDF of the observed t is
 * 1 - alpha/2 and alpha/2. */
static void check_nct_inversion(const jv *ref)
{
    double t = jv_num(jv_get(ref, "t", NULL)), df = jv_num(jv_get(ref, "df", NULL));
    double n = jv_num(jv_get(ref, "n", NULL));
    const jv *ci = jv_get(ref, "d_z_ci_nct", NULL);
    double f_lo, f_hi;
    stats_nct_cdf(t, df, jv_num(jv_at(ci, 0)) * sqrt(n), &f_lo);
    stats_nct_cdf(t, df, jv_num(jv_at(ci, 1)) * sqrt(n), &f_hi);
    CHECK(fabs(f_lo - 0.975) < 1e-12 && fabs(f_hi - 0.025) < 1e-12,
          "CDF at the reference bounds: %.15g %.15g", f_lo, f_hi);
}

static void check_degenerate(void)
{
    stats_paired_opts o;
    stats_paired_opts_default(&o);
    stats_paired_result r;
    stats_error err;
    double a[40], b[40];

    CHECK(stats_paired(a, 0, b, 0, &o, &r, &err) == STATS_OK, "n = 0 is not an error");
    CHECK(r.degenerate == STATS_DEGEN_SMALL_N && r.defined == 0,
          "n = 0: small_n, nothing defined (%#x)", r.defined);

    a[0] = 1.0, b[0] = 2.5;
    CHECK(stats_paired(a, 1, b, 1, &o, &r, &err) == STATS_OK, "n = 1 status");
    CHECK(r.degenerate == STATS_DEGEN_SMALL_N &&
              r.defined == (STATS_HAVE_MEAN | STATS_HAVE_SIGNFLIP) && r.mean == 1.5 &&
              r.p_signflip == 1.0 && r.p_signflip_min == 1.0,
          "n = 1: mean and sign flip only (%#x)", r.defined);
    CHECK(result_all_finite(&r), "n = 1: no NaN");

    /* b = a + 0.3 in floating point: the differences agree to rounding only */
    for (int i = 0; i < 6; i++) {
        a[i] = 20.0 + 0.37 * i;
        b[i] = a[i] + 0.3;
    }
    for (int exact = 0; exact <= 1; exact++) {
        o.exact = exact;
        CHECK(stats_paired(a, 6, b, 6, &o, &r, &err) == STATS_OK, "constant status");
        unsigned undefined = STATS_HAVE_T | STATS_HAVE_BCA | STATS_HAVE_D_Z | STATS_HAVE_CI_D_Z |
                             STATS_HAVE_MDE;
        CHECK(r.degenerate == STATS_DEGEN_CONSTANT && (r.defined & undefined) == 0 &&
                  (r.defined & STATS_HAVE_PERCENTILE) && (r.defined & STATS_HAVE_MDE_D_Z),
              "constant: flag and fields (%#x)", r.defined);
        CHECK(r.ci_percentile[0] == r.mean && r.ci_percentile[1] == r.mean,
              "constant: the percentile interval is the point mean");
        CHECK(fabs(r.p_signflip - 2.0 / 64.0) < 1e-15, "constant: p_signflip = 2/2^n (%g)",
              r.p_signflip);
        CHECK(result_all_finite(&r), "constant: no NaN");
    }
    o.exact = 0;
    for (int i = 0; i < 4; i++)
        b[i] = a[i];
    CHECK(stats_paired(a, 4, b, 4, &o, &r, &err) == STATS_OK && r.sd == 0.0 &&
              (r.degenerate & STATS_DEGEN_CONSTANT) && r.p_signflip == 1.0,
          "all differences zero: constant, p_signflip = 1");

    /* BCa undefined: a single outlier among 30 and a 1e-10 level make a (z0 + z) > 1 */
    for (int i = 0; i < 30; i++) {
        a[i] = 1.0;
        b[i] = i == 29 ? 2.0 : 1.0;
    }
    o.alpha = 1e-10;
    CHECK(stats_paired(a, 30, b, 30, &o, &r, &err) == STATS_OK, "outlier status");
    CHECK(r.degenerate == STATS_DEGEN_BCA && !(r.defined & STATS_HAVE_BCA) &&
              (r.defined & STATS_HAVE_PERCENTILE) && (r.defined & STATS_HAVE_CI_D_Z) &&
              !r.signflip_exact && r.p_signflip == 1.0,
          "outlier: only BCa undefined (%#x)", r.defined);
    CHECK(r.bca_reason == STATS_BCA_ACCELERATION, "outlier reason: code %d", r.bca_reason);
    CHECK(result_all_finite(&r), "outlier: no NaN");
    o.alpha = 0.05;

    /* The other BCa reasons, on made-up distributions */
    double d2[2] = {0.0, 1.0};
    double one_value[1] = {0.5}, above[2] = {0.75, 1.0};
    uint64_t one_count[1] = {100}, above_count[2] = {50, 50};
    stats_boot_dist flat = {one_value, one_count, 1, 100};
    stats_boot_dist shifted = {above, above_count, 2, 100};
    stats_boot_ci ci;
    CHECK(stats_boot_intervals(d2, 2, &flat, 0.05, &ci) == STATS_OK && !ci.bca_defined &&
              ci.bca_reason == STATS_BCA_EQUAL_RESAMPLES && ci.ci_percentile[0] == 0.5,
          "all resample means equal: BCa undefined (code %d)", ci.bca_reason);
    CHECK(stats_boot_intervals(d2, 2, &shifted, 0.05, &ci) == STATS_OK && !ci.bca_defined &&
              ci.bca_reason == STATS_BCA_Z0_INFINITE,
          "observed mean outside the resamples: BCa undefined (code %d)", ci.bca_reason);

    /* t so large that the d_z interval leaves the noncentral t's domain */
    for (int i = 0; i < 5; i++) {
        a[i] = 0.0;
        b[i] = 1.0 + 1e-9 * (i - 2);
    }
    CHECK(stats_paired(a, 5, b, 5, &o, &r, &err) == STATS_OK, "huge t status");
    CHECK(r.degenerate == STATS_DEGEN_NCT_RANGE && !(r.defined & STATS_HAVE_CI_D_Z) &&
              (r.defined & STATS_HAVE_D_Z) && (r.defined & STATS_HAVE_BCA),
          "huge t: only the d_z interval undefined (%#x)", r.defined);
    CHECK(result_all_finite(&r), "huge t: no NaN");
}

#define CHECK_EINVAL(call, want_arg, want_text)                                           \
    do {                                                                                  \
        stats_error e_ = {0, ""};                                                         \
        int s_ = (call);                                                                  \
        CHECK(s_ == STATS_EINVAL && e_.arg == (want_arg) && strstr(e_.msg, want_text),    \
              "%s: status %d arg %d msg '%s'", #call, s_, e_.arg, e_.msg);                \
    } while (0)

static void check_bad_arguments(void)
{
    double a[5] = {1, 2, 3, 4, 5}, b[5] = {2, 2, 4, 4, 7}, x[5];
    stats_paired_opts o;
    stats_paired_result r;
    stats_paired_opts_default(&o);

    CHECK_EINVAL(stats_paired(a, 5, b, 4, &o, &r, &e_), 2, "b: length 4 differs");
    memcpy(x, a, sizeof x);
    x[2] = NAN;
    CHECK_EINVAL(stats_paired(x, 5, b, 5, &o, &r, &e_), 1, "a[3]: NaN");
    x[2] = -INFINITY;
    CHECK_EINVAL(stats_paired(b, 5, x, 5, &o, &r, &e_), 2, "b[3]: infinite");
    double big[2] = {-DBL_MAX, 0.0}, big2[2] = {DBL_MAX, 1.0};
    CHECK_EINVAL(stats_paired(big, 2, big2, 2, &o, &r, &e_), 2, "b - a[1]: infinite");
    const double alphas[] = {0.0, 1.0, -0.1, 1.5, NAN};
    for (size_t k = 0; k < sizeof alphas / sizeof alphas[0]; k++) {
        o.alpha = alphas[k];
        CHECK_EINVAL(stats_paired(a, 5, b, 5, &o, &r, &e_), 3, "alpha: must be in (0, 1)");
    }
    stats_paired_opts_default(&o);
    o.resamples = STATS_MIN_RESAMPLES - 1;
    CHECK_EINVAL(stats_paired(a, 5, b, 5, &o, &r, &e_), 3, "resamples: must be >= 100");
    stats_paired_opts_default(&o);
    o.power = 0.01;
    CHECK_EINVAL(stats_paired(a, 5, b, 5, &o, &r, &e_), 3, "power: must be in (alpha, 1)");
    stats_paired_opts_default(&o);
    o.exact = 1;
    double nine[9] = {0};
    CHECK_EINVAL(stats_paired(nine, 9, nine, 9, &o, &r, &e_), 3, "exact: the exact bootstrap");
    CHECK(r.defined == 0 && r.degenerate == 0, "an error leaves an empty result");

    double p[3] = {0.1, 1.2, 0.3}, adj[3];
    int rej[3];
    CHECK_EINVAL(stats_holm(p, 3, 0.05, adj, rej, &e_), 1, "p[2]: must be in [0, 1]");
    p[1] = NAN;
    CHECK_EINVAL(stats_bonferroni(p, 3, 0.05, adj, rej, &e_), 1, "p[2]: NaN");
    p[1] = 0.2;
    CHECK_EINVAL(stats_holm(p, 3, 1.0, adj, rej, &e_), 2, "alpha");
    CHECK_EINVAL(stats_bonferroni(p, 3, 0.0, adj, rej, &e_), 2, "alpha");

    double v;
    CHECK_EINVAL(stats_mde(1, 0.05, 0.8, &v, &e_), 1, "n: must be >= 2");
    CHECK_EINVAL(stats_mde(5, 2.0, 0.8, &v, &e_), 2, "alpha");
    CHECK_EINVAL(stats_mde(5, 0.05, 1.0, &v, &e_), 3, "power: must be in (alpha, 1)");
    CHECK_EINVAL(stats_power(1, 0.5, 0.05, &v, &e_), 1, "n: must be >= 2");
    CHECK_EINVAL(stats_power(5, NAN, 0.05, &v, &e_), 2, "d_z");
    CHECK_EINVAL(stats_power(5, 0.5, -1, &v, &e_), 3, "alpha");

    stats_summary_result s;
    x[0] = NAN;
    CHECK_EINVAL(stats_summary(x, 5, &s, &e_), 1, "x[1]: NaN");

    CHECK(stats_nct_cdf(1.0, 0.0, 0.0, &v) == STATS_EINVAL, "nct df = 0");
    CHECK(stats_nct_cdf(NAN, 3.0, 0.0, &v) == STATS_EINVAL, "nct t = NaN");
    CHECK(stats_nct_cdf(1.0, 3.0, 2 * STATS_NCT_MAX_NCP, &v) == STATS_EINVAL, "nct ncp range");
}

/* Holm on random p-values: monotone along the sorted raw p, never below the raw p, at
 * most 1 and at most Bonferroni, and rejecting exactly where adjusted <= alpha. */
static void check_holm_properties(void)
{
    pcg32 rng;
    pcg32_seed(&rng, 2024, 4);
    int ok_mono = 1, ok_bounds = 1, ok_reject = 1;
    for (int trial = 0; trial < 200; trial++) {
        size_t m = 1 + pcg32_bounded(&rng, 12);
        double p[12], holm[12], bonf[12];
        int rh[12], rb[12];
        for (size_t i = 0; i < m; i++) /* some ties on purpose */
            p[i] = pcg32_bounded(&rng, 4) == 0 ? 0.01 : pcg32_uniform_double(&rng) * 0.2;
        stats_holm(p, m, 0.05, holm, rh, NULL);
        stats_bonferroni(p, m, 0.05, bonf, rb, NULL);
        for (size_t i = 0; i < m; i++) {
            ok_bounds &= holm[i] >= p[i] && holm[i] <= 1.0 && holm[i] <= bonf[i] &&
                         bonf[i] == fmin(1.0, (double)m * p[i]);
            ok_reject &= rh[i] == (holm[i] <= 0.05) && rb[i] == (bonf[i] <= 0.05) &&
                         (!rb[i] || rh[i]);
            for (size_t j = 0; j < m; j++)
                if (p[i] <= p[j])
                    ok_mono &= holm[i] <= holm[j];
        }
    }
    CHECK(ok_mono, "Holm adjusted values are monotone in the raw p");
    CHECK(ok_bounds, "raw p <= Holm <= Bonferroni = min(1, m p), Holm <= 1");
    CHECK(ok_reject, "rejections: adjusted <= alpha; Bonferroni's a subset of Holm's");
    double adj[1];
    int rej[1];
    CHECK(stats_holm(NULL, 0, 0.05, adj, rej, NULL) == STATS_OK, "Holm of no p-values");
}

/* The exact bootstrap by multisets against a brute-force walk over all n^n index
 * tuples (n = 6: 46,656 resamples). */
static void check_exact_vs_bruteforce(void)
{
    double d[6] = {0.4, -1.1, 2.3, 0.4, 0.9, -0.2};
    size_t n = 6;
    stats_boot_dist *dist = NULL;
    CHECK(stats_boot_dist_exact(d, n, &dist) == STATS_OK, "exact n = 6");
    if (!dist)
        return;
    size_t total = 46656;
    stats_boot_dist bf = {malloc(total * sizeof(double)), malloc(total * sizeof(uint64_t)),
                          total, total};
    size_t idx[6] = {0};
    for (size_t k = 0; k < total; k++) {
        double s = 0.0;
        for (size_t i = 0; i < n; i++)
            s += d[idx[i]];
        bf.value[k] = s / (double)n;
        bf.count[k] = 1;
        for (size_t i = 0; i < n && ++idx[i] == n; i++) /* odometer */
            idx[i] = 0;
    }
    qsort(bf.value, total, sizeof(double), cmp_double);
    double worst = 0.0;
    for (double f = 0.0; f <= 1.0; f += 0.0125)
        worst = fmax(worst, fabs(stats_boot_quantile(dist, f) - stats_boot_quantile(&bf, f)));
    CHECK(dist->total == total && worst < 1e-12, "multiset quantiles = brute force (max %.2g)",
          worst);
    stats_boot_ci c1, c2;
    stats_boot_intervals(d, n, dist, 0.05, &c1);
    stats_boot_intervals(d, n, &bf, 0.05, &c2);
    CHECK(c1.bca_defined && c2.bca_defined && c1.z0 == c2.z0 &&
              fabs(c1.ci_bca[0] - c2.ci_bca[0]) < 1e-12 && fabs(c1.ci_bca[1] - c2.ci_bca[1]) < 1e-12,
          "multiset BCa = brute force");
    free(bf.value);
    free(bf.count);
    stats_boot_dist_free(dist);
}

/* Sign flip: invariances, and Monte Carlo (n = 21) against the exact count. */
static void check_signflip(void)
{
    double d[21], neg[21], perm[21];
    pcg32 rng;
    pcg32_seed(&rng, 99, 4);
    for (int i = 0; i < 21; i++) /* integers: every pattern sum is exact */
        d[i] = (double)((int)pcg32_bounded(&rng, 21) - 6);
    for (int i = 0; i < 12; i++) {
        neg[i] = -d[i];
        perm[i] = d[11 - i];
    }
    stats_signflip_result s1, s2, s3;
    stats_signflip(d, 12, 0, 1, &s1);
    stats_signflip(neg, 12, 0, 1, &s2);
    stats_signflip(perm, 12, 0, 1, &s3);
    CHECK(s1.exact && s1.patterns == 4096 && s1.p == s2.p && s1.p == s3.p && s1.p >= s1.p_min,
          "exact sign flip: invariant to sign and order (%g)", s1.p);

    uint64_t hits = 0;
    double obs = 0.0;
    for (int i = 0; i < 21; i++)
        obs += d[i];
    for (uint64_t mask = 0; mask < (1u << 21); mask++) {
        double s = 0.0;
        for (int i = 0; i < 21; i++)
            s += (mask >> i & 1u) ? d[i] : -d[i];
        hits += fabs(s) >= fabs(obs);
    }
    double exact_p = (double)hits / (double)(1u << 21);
    stats_signflip_result mc;
    CHECK(stats_signflip(d, 21, 20000, 5, &mc) == STATS_OK && !mc.exact && mc.patterns == 20000,
          "Monte Carlo above n = 20");
    CHECK(fabs(mc.p - exact_p) <= 4 * mc.se + 1.0 / 20001, "Monte Carlo p %g (se %g) vs exact %g",
          mc.p, mc.se, exact_p);
    CHECK(mc.p_min == 1.0 / 20001, "Monte Carlo p_min = 1/(B+1)");
    CHECK(stats_signflip(d, 21, 50, 5, &mc) == STATS_EINVAL, "Monte Carlo needs B >= 100");
}

static void check_power_properties(void)
{
    double mde, pw, pw0, pwn, prev = 0.0;
    CHECK(stats_mde(10, 0.05, 0.9, &mde, NULL) == STATS_OK, "mde n = 10");
    stats_power(10, mde, 0.05, &pw, NULL);
    CHECK(fabs(pw - 0.9) < 1e-10, "power at the mde is the target (%.15g)", pw);
    stats_power(10, 0.0, 0.05, &pw0, NULL);
    CHECK(fabs(pw0 - 0.05) < 1e-12, "power at 0 is alpha (%.15g)", pw0);
    stats_power(10, -mde, 0.05, &pwn, NULL);
    CHECK(fabs(pwn - pw) < 1e-12, "power is symmetric in d_z");
    int mono = 1;
    for (double dz = 0.0; dz < 3.0; dz += 0.1) {
        stats_power(10, dz, 0.05, &pw, NULL);
        mono &= pw >= prev;
        prev = pw;
    }
    CHECK(mono, "power increases with d_z");
    double m2, m3;
    CHECK(stats_mde(2, 0.05, 0.8, &m2, NULL) == STATS_OK &&
              stats_mde(3, 0.05, 0.8, &m3, NULL) == STATS_OK && m2 > m3 && m3 > 0,
          "mde falls with n (n = 2: %g, n = 3: %g)", m2, m3);
}

static void check_summary(void)
{
    double x[5] = {3.0, 1.0, 4.0, 1.5, 9.0};
    stats_summary_result s;
    CHECK(stats_summary(x, 5, &s, NULL) == STATS_OK && s.n == 5 && s.median == 3.0 &&
              s.min == 1.0 && s.max == 9.0 && fabs(s.mean - 3.7) < 1e-15 &&
              fabs(s.sd - sqrt(10.2)) < 1e-14 && s.defined == (STATS_HAVE_MEAN | STATS_HAVE_SD),
          "summary of 5");
    CHECK(stats_summary(x, 4, &s, NULL) == STATS_OK && s.median == 2.25, "even-n median");
    CHECK(stats_summary(x, 1, &s, NULL) == STATS_OK && s.defined == STATS_HAVE_MEAN &&
              s.sd == 0.0,
          "n = 1: no sd");
    CHECK(stats_summary(x, 0, &s, NULL) == STATS_OK && s.defined == 0, "n = 0: nothing");
}

/* The gsl_rng type draws exactly engine/pcg.h's PCG32 on the stats streams. */
static void check_rng(void)
{
    gsl_rng *r = stats_rng_alloc(42, 3);
    pcg32 ref;
    pcg32_stream(&ref, 42, PCG_PURPOSE_STATS, 3);
    int same = 1;
    for (int i = 0; i < 100; i++)
        same &= gsl_rng_get(r) == pcg32_next(&ref);
    CHECK(r && same, "stats_rng_alloc follows pcg32_stream(seed, STATS, index)");
    CHECK(strcmp(gsl_rng_name(r), "pcg32") == 0 && gsl_rng_max(r) == 0xffffffffUL &&
              gsl_rng_min(r) == 0,
          "type name and range");
    gsl_rng_set(r, 7);
    pcg32_seed(&ref, 7, 0);
    CHECK(gsl_rng_get(r) == pcg32_next(&ref), "gsl_rng_set seeds stream 0");
    double u = gsl_rng_uniform(r), z = gsl_ran_gaussian(r, 1.0);
    CHECK(u >= 0.0 && u < 1.0 && isfinite(z), "gsl_ran_* draw from it");
    gsl_rng *c = gsl_rng_clone(r);
    CHECK(c && gsl_rng_get(c) == gsl_rng_get(r), "clones continue the same stream");
    gsl_rng_free(c);
    gsl_rng_free(r);
}

/* Within rtol of want, or both "absent": want null and the result's flag 0. */
static void check_opt(int have, double got, const jv *want, double rtol, const char *what,
                      size_t i)
{
    if (!want || want->type == JV_NULL) {
        CHECK(!have, "%s case %zu: absent in the reference, present here", what, i + 1);
        return;
    }
    CHECK(have && near_rel(got, jv_num(want), rtol) ,
          "%s case %zu: got %.17g, want %.17g", what, i + 1, got, jv_num(want));
}

/* stats_robust against tests/vectors/replication_ref.json "robust" (scipy). */
static void check_robust(const jv *cases)
{
    CHECK(cases && cases->type == JV_ARR && cases->n >= 40, "robust: at least 40 cases");
    for (size_t i = 0; cases && i < cases->n; i++) {
        const jv *c = jv_at(cases, i);
        double a[64], b[64];
        size_t n = read_array(jv_get(c, "a", NULL), a, 64);
        read_array(jv_get(c, "b", NULL), b, 64);
        stats_robust_result r;
        stats_error err;
        int status = stats_robust(a, n, b, n, jv_num(jv_get(c, "alpha", NULL)), &r, &err);
        CHECK(status == STATS_OK, "robust case %zu: status %d", i + 1, status);
        double scale = 0.0;
        for (size_t k = 0; k < n; k++)
            scale = fmax(scale, fabs(b[k] - a[k]));
        double hl = jv_num(jv_get(c, "hl", NULL));
        CHECK(fabs(r.hl - hl) <= 1e-9 * scale, "robust case %zu: hl %.17g, want %.17g", i + 1,
              r.hl, hl);
        const jv *ci = jv_get(c, "ci", NULL);
        if (ci && ci->type == JV_ARR) {
            CHECK(r.have_ci && fabs(r.ci[0] - jv_num(jv_at(ci, 0))) <= 1e-9 * scale &&
                      fabs(r.ci[1] - jv_num(jv_at(ci, 1))) <= 1e-9 * scale,
                  "robust case %zu: interval [%.17g, %.17g]", i + 1, r.ci[0], r.ci[1]);
        } else {
            CHECK(!r.have_ci, "robust case %zu: an interval where the test cannot reach alpha",
                  i + 1);
        }
        check_opt(r.have_ci, r.ci_level, jv_get(c, "ci_level", NULL), 1e-12, "robust ci_level", i);
        check_opt(r.have_p_wilcoxon, r.p_wilcoxon, jv_get(c, "p_wilcoxon", NULL), 1e-9,
                  "robust p_wilcoxon", i);
        check_opt(r.have_p_sign, r.p_sign, jv_get(c, "p_sign", NULL), 1e-9, "robust p_sign", i);
        CHECK(r.positive == (size_t)jv_num(jv_get(c, "positive", NULL)) &&
                  r.negative == (size_t)jv_num(jv_get(c, "negative", NULL)) &&
                  r.zeros == (size_t)jv_num(jv_get(c, "zeros", NULL)),
              "robust case %zu: signs %zu/%zu/%zu", i + 1, r.positive, r.negative, r.zeros);
    }
}

/* stats_original_from_arms and stats_replication against "replication" (scipy,
 * statsmodels); t-quantile values to 1e-8 (scipy 1.10's t.isf, as for the TOST). */
static void check_replication(const jv *cases)
{
    CHECK(cases && cases->type == JV_ARR && cases->n >= 40, "replication: at least 40 cases");
    for (size_t i = 0; cases && i < cases->n; i++) {
        const jv *c = jv_at(cases, i), *w = jv_get(c, "want", NULL);
        stats_original o = {.estimate = jv_num(jv_get(c, "original", "estimate", NULL)),
                            .se = jv_num(jv_get(c, "original", "se", NULL)),
                            .sd = jv_num(jv_get(c, "original", "sd", NULL)),
                            .n1 = (size_t)jv_num(jv_get(c, "original", "n1", NULL)),
                            .n2 = (size_t)jv_num(jv_get(c, "original", "n2", NULL))};
        stats_error err;
        const jv *arms = jv_get(c, "arms", NULL);
        if (arms) {
            double mean[2], sd[2], nd[2];
            read_array(jv_get(arms, "mean", NULL), mean, 2);
            read_array(jv_get(arms, "sd", NULL), sd, 2);
            read_array(jv_get(arms, "n", NULL), nd, 2);
            size_t n[2] = {(size_t)nd[0], (size_t)nd[1]};
            stats_original got;
            int status = stats_original_from_arms(mean, sd, n,
                                                  (int)jv_num(jv_get(arms, "log_ratio", NULL)),
                                                  &got, &err);
            CHECK(status == STATS_OK && near_rel(got.estimate, o.estimate, 1e-12) &&
                      near_rel(got.se, o.se, 1e-12) && near_rel(got.sd, o.sd, 1e-12),
                  "replication case %zu: the original from its arms", i + 1);
        }
        stats_replication_opts opts = {.alpha = jv_num(jv_get(c, "alpha", NULL)),
                                       .margin = jv_num(jv_get(c, "margin", NULL))};
        stats_replication_result r;
        int status = stats_replication(&o, jv_num(jv_get(c, "rep", "mean", NULL)),
                                       jv_num(jv_get(c, "rep", "sd", NULL)),
                                       (size_t)jv_num(jv_get(c, "rep", "n", NULL)), &opts, &r,
                                       &err);
        CHECK(status == STATS_OK, "replication case %zu: status %d", i + 1, status);
        check_opt(1, r.d33, jv_get(w, "d33", NULL), 1e-8, "replication d33", i);
        const jv *ci = jv_get(w, "ci", NULL), *pi = jv_get(w, "pi", NULL);
        int have_ci = (r.defined & STATS_REPL_HAVE_CI) != 0;
        check_opt(have_ci, r.ci[0], ci ? jv_at(ci, 0) : NULL, 1e-8, "replication ci lo", i);
        check_opt(have_ci, r.ci[1], ci ? jv_at(ci, 1) : NULL, 1e-8, "replication ci hi", i);
        check_opt(have_ci, r.pi[0], pi ? jv_at(pi, 0) : NULL, 1e-8, "replication pi lo", i);
        check_opt(have_ci, r.pi[1], pi ? jv_at(pi, 1) : NULL, 1e-8, "replication pi hi", i);
        const jv *pit = jv_get(w, "pi_t", NULL);
        check_opt(have_ci, r.pi_t[0], pit ? jv_at(pit, 0) : NULL, 1e-8, "replication pi_t lo", i);
        check_opt(have_ci, r.pi_t[1], pit ? jv_at(pit, 1) : NULL, 1e-8, "replication pi_t hi", i);
        check_opt((r.defined & STATS_REPL_HAVE_TELESCOPE) != 0, r.telescope_p,
                  jv_get(w, "telescope_p", NULL), 1e-8, "replication telescope p", i);
        check_opt((r.defined & STATS_REPL_HAVE_TOST) != 0, r.tost_p, jv_get(w, "tost_p", NULL),
                  1e-8, "replication TOST p", i);
        if (have_ci)
            CHECK(r.in_pi == (int)jv_num(jv_get(w, "in_pi", NULL)) &&
                      r.in_pi_t == (int)jv_num(jv_get(w, "in_pi_t", NULL)) &&
                      r.too_small == (int)jv_num(jv_get(w, "too_small", NULL)),
                  "replication case %zu: in_pi %d, in_pi_t %d, too_small %d", i + 1, r.in_pi,
                  r.in_pi_t, r.too_small);
    }
    /* bad originals name the field */
    stats_original bad = {.estimate = 0.1, .se = 0.0, .sd = 1.0, .n1 = 3, .n2 = 0};
    stats_replication_opts opts = {.alpha = 0.05, .margin = 0.0};
    stats_replication_result r;
    stats_error err;
    CHECK(stats_replication(&bad, 0.1, 0.1, 5, &opts, &r, &err) == STATS_EINVAL &&
              err.arg == 1 && strstr(err.msg, "se:"),
          "replication: se = 0 refused, naming se");
    double mean[2] = {1.0, -1.0}, sd[2] = {1.0, 1.0};
    size_t n[2] = {3, 3};
    stats_original o;
    CHECK(stats_original_from_arms(mean, sd, n, 1, &o, &err) == STATS_EINVAL &&
              strstr(err.msg, "treatment mean"),
          "original_from_arms: a negative mean on the log scale refused");
}

int main(int argc, char **argv)
{
    const char *stats_path = argc > 1 ? argv[1] : "tests/vectors/stats.json";
    const char *nct_path = argc > 2 ? argv[2] : "tests/vectors/nct.json";
    jv *doc = jv_load(stats_path);
    CHECK(doc != NULL, "read %s", stats_path);
    if (doc) {
        check_paired_ab(jv_get(doc, "paired_AB", NULL));
        check_exact_bootstrap(jv_get(doc, "paired_AB", NULL));
        check_mc_bootstrap(doc);
        check_nct_inversion(jv_get(doc, "paired_AB", NULL));
        check_holm(jv_get(doc, "holm", NULL));
        check_power(jv_get(doc, "power", NULL));
        jv_free(doc);
    }
    check_nct(nct_path);
    const char *repl_path = argc > 3 ? argv[3] : "tests/vectors/replication_ref.json";
    jv *repl = jv_load(repl_path);
    CHECK(repl != NULL, "read %s", repl_path);
    if (repl) {
        check_robust(jv_get(repl, "robust", NULL));
        check_replication(jv_get(repl, "replication", NULL));
        jv_free(repl);
    }
    check_degenerate();
    check_bad_arguments();
    check_holm_properties();
    check_exact_vs_bruteforce();
    check_signflip();
    check_power_properties();
    check_summary();
    check_rng();
    return check_done("test_stats");
}
