/* The statistics of the decision rule (stats/tost.c, signflip_ci.c, seeds.c, proportion.c,
 * anova.c) against tests/vectors/stats_ref.json (scipy and statsmodels values written by
 * tests/reference/stats_ref.py; none typed in here), and their properties: the sign-flip
 * interval is exactly the set of shifts its test accepts (exact and Monte Carlo), TOST's
 * verdict agrees with its interval, the seed count is the least with enough power, and
 * bad arguments name themselves. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../engine/pcg.h"
#include "../../stats/stats.h"
#include "check.h"
#include "json_min.h"

#define RTOL 1e-9

/* |got - want| <= RTOL max(|want|, scale): `scale` is the size of the data, so a value
 * that is zero in exact arithmetic compares on the data's scale. */
static int near(double got, double want, double scale)
{
    return isfinite(got) && fabs(got - want) <= RTOL * fmax(fabs(want), scale);
}

#define CHECK_NEAR(got, want, scale, ...) \
    CHECK(near((got), (want), (scale)), __VA_ARGS__)

static size_t read_array(const jv *arr, double *x, size_t cap)
{
    size_t n = 0;
    for (; arr && arr->type == JV_ARR && n < arr->n && n < cap; n++)
        x[n] = jv_num(jv_at(arr, n));
    return n;
}

static double max_abs(const double *x, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs(x[i]));
    return m;
}

/* An interval of the reference: [lo, hi], or null when unbounded; for the one-sided TOST
 * interval each end may be null alone. */
static int ref_bounded(const jv *ci)
{
    return ci && ci->type == JV_ARR && jv_at(ci, 0)->type == JV_NUM &&
           jv_at(ci, 1)->type == JV_NUM;
}

static void check_tost(const jv *cases)
{
    size_t count = 0;
    for (size_t c = 0; cases && c < cases->n; c++, count++) {
        const jv *cs = jv_at(cases, c);
        double a[32], b[32], d[32];
        size_t n = read_array(jv_get(cs, "a", NULL), a, 32);
        read_array(jv_get(cs, "b", NULL), b, 32);
        for (size_t i = 0; i < n; i++)
            d[i] = b[i] - a[i];
        double scale = max_abs(d, n);
        stats_tost_opts o = {.test = STATS_TEST_T, .delta = jv_num(jv_get(cs, "delta", NULL)),
                             .alpha = jv_num(jv_get(cs, "alpha", NULL)),
                             .resamples = 1000, .seed = 1};
        for (int test = 0; test <= 1; test++) {
            o.test = test ? STATS_TEST_SIGNFLIP : STATS_TEST_T;
            const jv *want = jv_get(cs, test ? "signflip" : "t", NULL);
            stats_tost_result r;
            stats_error err;
            int status = stats_tost(a, n, b, n, &o, &r, &err);
            const char *name = test ? "signflip" : "t";
            CHECK(status == STATS_OK && r.defined, "tost %s case %zu: status %d", name, c,
                  status);
            CHECK_NEAR(r.p, jv_num(jv_get(want, "p", NULL)), 0, "tost %s case %zu p %.17g", name,
                       c, r.p);
            CHECK_NEAR(r.p_lower, jv_num(jv_get(want, "p_lower", NULL)), 0,
                       "tost %s case %zu p_lower %.17g", name, c, r.p_lower);
            CHECK_NEAR(r.p_upper, jv_num(jv_get(want, "p_upper", NULL)), 0,
                       "tost %s case %zu p_upper %.17g", name, c, r.p_upper);
            CHECK(r.equivalent == (int)jv_num(jv_get(want, "equivalent", NULL)),
                  "tost %s case %zu equivalent %d", name, c, r.equivalent);
            const jv *ci = jv_get(want, "ci", NULL);
            if (test == 0) {
                CHECK_NEAR(r.t_lower, jv_num(jv_get(want, "t_lower", NULL)), 0,
                           "tost t case %zu t_lower", c);
                CHECK_NEAR(r.t_upper, jv_num(jv_get(want, "t_upper", NULL)), 0,
                           "tost t case %zu t_upper", c);
                CHECK(r.df == jv_num(jv_get(want, "df", NULL)), "tost t case %zu df", c);
            }
            if (ref_bounded(ci)) {
                /* scipy 1.10's t.isf(0.05, 4) is 2.3e-9 relative off the 30-digit
                 * 2.13184678632665 that GSL gives to 1e-15: the t interval of n = 5 is
                 * checked to 1e-8 */
                double tol = test == 0 ? 1e-8 / RTOL : 1.0;
                CHECK(r.ci_bounded, "tost %s case %zu: bounded interval", name, c);
                CHECK_NEAR(r.ci[0], jv_num(jv_at(ci, 0)), tol * scale,
                           "tost %s case %zu ci lo %.17g", name, c, r.ci[0]);
                CHECK_NEAR(r.ci[1], jv_num(jv_at(ci, 1)), tol * scale,
                           "tost %s case %zu ci hi %.17g", name, c, r.ci[1]);
            } else {
                CHECK(!r.ci_bounded && jv_at(ci, 0)->type == JV_NULL &&
                          jv_at(ci, 1)->type == JV_NULL,
                      "tost %s case %zu: unbounded interval", name, c);
            }
        }
    }
    CHECK(count >= 5, "read the tost cases (%zu)", count);
}

static void check_signflip_ci(const jv *cases)
{
    size_t count = 0;
    for (size_t c = 0; cases && c < cases->n; c++, count++) {
        const jv *cs = jv_at(cases, c);
        double a[32], b[32], d[32];
        size_t n = read_array(jv_get(cs, "a", NULL), a, 32);
        read_array(jv_get(cs, "b", NULL), b, 32);
        for (size_t i = 0; i < n; i++)
            d[i] = b[i] - a[i];
        double alpha = jv_num(jv_get(cs, "alpha", NULL));
        stats_signflip_ci_result r;
        CHECK(stats_signflip_ci(d, n, alpha, 0, 0, 1, &r, NULL) == STATS_OK && r.exact,
              "signflip_ci case %zu status", c);
        const jv *ci = jv_get(cs, "ci", NULL);
        if (ref_bounded(ci)) {
            CHECK(r.bounded, "signflip_ci case %zu bounded", c);
            CHECK_NEAR(r.ci[0], jv_num(jv_at(ci, 0)), max_abs(d, n), "signflip_ci case %zu lo "
                       "%.17g", c, r.ci[0]);
            CHECK_NEAR(r.ci[1], jv_num(jv_at(ci, 1)), max_abs(d, n), "signflip_ci case %zu hi "
                       "%.17g", c, r.ci[1]);
        } else {
            CHECK(!r.bounded && ci->type == JV_NULL, "signflip_ci case %zu unbounded", c);
        }
        CHECK(r.p_min == ldexp(1.0, 1 - (int)n), "p_min 2^(1-n)");
        stats_signflip_result sf;
        stats_signflip(d, n, 0, 1, &sf);
        CHECK_NEAR(sf.p, jv_num(jv_get(cs, "p_at_zero", NULL)), 0, "scipy's p at 0: %.17g", sf.p);
        int outside = r.bounded && (r.ci[0] > 0.0 || r.ci[1] < 0.0);
        CHECK(outside == (sf.p <= alpha), "case %zu: 0 outside the interval iff p <= alpha", c);
    }
    CHECK(count >= 5, "read the signflip_ci cases (%zu)", count);
}

static void check_seeds(const jv *cases)
{
    size_t count = 0;
    for (size_t c = 0; cases && c < cases->n; c++, count++) {
        const jv *cs = jv_at(cases, c);
        stats_design g = {.sd = jv_num(jv_get(cs, "sd", NULL)),
                          .delta = jv_num(jv_get(cs, "delta", NULL)),
                          .alpha = jv_num(jv_get(cs, "alpha", NULL)),
                          .power = jv_num(jv_get(cs, "power", NULL)),
                          .m = (size_t)jv_num(jv_get(cs, "m", NULL)),
                          .test = STATS_TEST_T};
        stats_seeds_result r;
        CHECK(stats_seeds_needed(&g, &r, NULL) == STATS_OK, "seeds case %zu status", c);
        CHECK(r.n == (size_t)jv_num(jv_get(cs, "n_t", NULL)) && r.n_reach == 2,
              "seeds case %zu t: n = %zu, want ceil(%.6f)", c, r.n,
              jv_num(jv_get(cs, "nobs", NULL)));
        double below;
        if (r.n > 2) {
            stats_power(r.n - 1, r.d_z, r.level, &below, NULL);
            CHECK(r.power >= g.power && below < g.power,
                  "seeds case %zu: power %.6f at n, %.6f at n - 1", c, r.power, below);
        }
        CHECK(r.level == g.alpha / (double)g.m, "level alpha / m");
        g.test = STATS_TEST_SIGNFLIP;
        CHECK(stats_seeds_needed(&g, &r, NULL) == STATS_OK &&
                  r.n == (size_t)jv_num(jv_get(cs, "n_signflip", NULL)) &&
                  r.n_reach == (size_t)jv_num(jv_get(cs, "n_reach_signflip", NULL)),
              "seeds case %zu signflip: n = %zu, reach %zu", c, r.n, r.n_reach);
        CHECK(stats_min_seeds(STATS_TEST_SIGNFLIP, r.level) == r.n_reach, "min seeds");
    }
    CHECK(count >= 5, "read the seeds cases (%zu)", count);
    /* the example: sign flip, 6 tests: 2^(1 - n) <= 0.05 / 6 needs n = 8 */
    CHECK(stats_min_seeds(STATS_TEST_SIGNFLIP, 0.05 / 6) == 8 &&
              stats_min_seeds(STATS_TEST_SIGNFLIP, 0.0625) == 5 &&
              stats_min_seeds(STATS_TEST_SIGNFLIP, 0.0624) == 6 &&
              stats_min_seeds(STATS_TEST_T, 1e-9) == 2,
          "stats_min_seeds");
}

static void check_clopper(const jv *cases)
{
    size_t count = 0;
    for (size_t c = 0; cases && c < cases->n; c++, count++) {
        const jv *cs = jv_at(cases, c);
        size_t k = (size_t)jv_num(jv_get(cs, "k", NULL)), n = (size_t)jv_num(jv_get(cs, "n", NULL));
        double ci[2];
        const jv *want = jv_get(cs, "ci", NULL);
        CHECK(stats_clopper_pearson(k, n, jv_num(jv_get(cs, "alpha", NULL)), ci, NULL) ==
                  STATS_OK,
              "clopper %zu/%zu status", k, n);
        CHECK(near(ci[0], jv_num(jv_at(want, 0)), 0) && near(ci[1], jv_num(jv_at(want, 1)), 0),
              "clopper %zu/%zu: [%.17g, %.17g]", k, n, ci[0], ci[1]);
    }
    CHECK(count >= 5, "read the clopper cases (%zu)", count);
}

static void check_anova(const jv *cases)
{
    size_t count = 0;
    for (size_t c = 0; cases && c < cases->n; c++, count++) {
        const jv *cs = jv_at(cases, c);
        const jv *rows = jv_get(cs, "y", NULL);
        double y[64];
        size_t nr = rows->n, nc = jv_at(rows, 0)->n;
        for (size_t i = 0; i < nr; i++)
            read_array(jv_at(rows, i), y + i * nc, nc);
        stats_anova2_result r;
        CHECK(stats_anova2(y, nr, nc, &r, NULL) == STATS_OK && r.have_f, "anova %zu status", c);
        const struct {
            const char *key;
            double got;
        } f[] = {{"ss_row", r.ss_row},   {"ss_col", r.ss_col},       {"ss_resid", r.ss_resid},
                 {"df_row", r.df_row},   {"df_col", r.df_col},       {"df_resid", r.df_resid},
                 {"f_row", r.f_row},     {"f_col", r.f_col},         {"p_row", r.p_row},
                 {"p_col", r.p_col},     {"var_row", r.var_row},     {"var_col", r.var_col},
                 {"var_resid", r.var_resid}};
        double scale = r.ss_total * 1e-6; /* a variance estimate near 0 is on this scale */
        for (size_t k = 0; k < sizeof f / sizeof f[0]; k++)
            CHECK_NEAR(f[k].got, jv_num(jv_get(cs, f[k].key, NULL)),
                       strncmp(f[k].key, "var", 3) == 0 ? scale : 0, "anova %zu %s: %.17g", c,
                       f[k].key, f[k].got);
        CHECK(r.negative_row == (r.var_row < 0) && r.negative_col == (r.var_col < 0),
              "negative flags");
        CHECK(fabs(r.share_row + r.share_col + r.share_resid - 1.0) < 1e-12, "shares sum to 1");
        const jv *reml = jv_get(cs, "reml", NULL);
        if (reml)
            CHECK(fabs(r.var_row - jv_num(jv_get(reml, "var_row", NULL))) <= 1e-4 * r.var_row &&
                      fabs(r.var_col - jv_num(jv_get(reml, "var_col", NULL))) <= 1e-4 * r.var_col,
                  "anova %zu: the moment estimates equal statsmodels' REML ones", c);
    }
    CHECK(count >= 4, "read the anova cases (%zu)", count);
}

/* Random data: the interval is the set of shifts the test accepts, exact (n <= 20) and
 * Monte Carlo (the same patterns as stats_signflip). */
static void check_signflip_duality(void)
{
    pcg32 rng;
    pcg32_seed(&rng, 77, 9);
    int agree = 1, probes = 0;
    const size_t ns[] = {4, 5, 7, 9, 11, 14, 24};
    for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
        size_t n = ns[t];
        double d[32], e[32];
        for (size_t i = 0; i < n; i++)
            d[i] = (double)pcg32_bounded(&rng, 2001) / 1000.0 - 0.7;
        const double alphas[] = {0.05, 0.2};
        for (int k = 0; k < 2; k++) {
            stats_signflip_ci_result ci;
            CHECK(stats_signflip_ci(d, n, alphas[k], 0, 2000, 3, &ci, NULL) == STATS_OK &&
                      ci.bounded == (ci.p_min <= alphas[k]) &&
                      ci.exact == (n <= STATS_SIGNFLIP_EXACT_MAX),
                  "duality: n = %zu interval, bounded iff the test can reject", n);
            if (!ci.bounded)
                continue;
            double w = ci.ci[1] - ci.ci[0];
            for (double f = -0.5; f <= 1.5; f += 0.01) {
                double theta = ci.ci[0] + f * w;
                if (fabs(theta - ci.ci[0]) < 1e-9 || fabs(theta - ci.ci[1]) < 1e-9)
                    continue;
                for (size_t i = 0; i < n; i++)
                    e[i] = d[i] - theta;
                stats_signflip_result sf;
                stats_signflip(e, n, 2000, 3, &sf);
                int inside = theta >= ci.ci[0] && theta <= ci.ci[1];
                agree &= inside == (sf.p > alphas[k]);
                probes++;
            }
        }
    }
    CHECK(agree && probes > 2000, "sign-flip interval = accepted shifts (%d probes)", probes);
}

/* TOST: equivalent exactly when its interval lies inside (-delta, delta) (the data have
 * four decimals, so some subset means equal delta: those ties are skipped). */
static void check_tost_properties(void)
{
    pcg32 rng;
    pcg32_seed(&rng, 5, 2);
    int agree = 1, some_eq = 0, some_not = 0;
    for (int trial = 0; trial < 300; trial++) {
        size_t n = 3 + pcg32_bounded(&rng, 10);
        double a[16], b[16];
        for (size_t i = 0; i < n; i++) {
            a[i] = 1.0;
            b[i] = 1.0 + ((double)pcg32_bounded(&rng, 401) - 200.0 + (double)(trial % 7) * 20.0) /
                             10000.0;
        }
        stats_tost_opts o = {.delta = 0.02, .alpha = 0.05, .resamples = 1000, .seed = 1};
        for (int test = 0; test <= 1; test++) {
            o.test = test;
            stats_tost_result r;
            stats_tost(a, n, b, n, &o, &r, NULL);
            int inside = r.ci_bounded && r.ci[0] > -o.delta && r.ci[1] < o.delta;
            /* an end that is a subset mean equal to +-delta is a tie: either way is right */
            int tie = r.ci_bounded && (fabs(r.ci[0] + o.delta) < 1e-12 ||
                                       fabs(r.ci[1] - o.delta) < 1e-12);
            agree &= r.defined && (tie || inside == r.equivalent);
            some_eq |= r.equivalent;
            some_not |= !r.equivalent;
        }
    }
    CHECK(agree && some_eq && some_not, "TOST equivalent iff its interval is inside +-delta");

    /* degenerate: one pair, constant differences */
    double a[3] = {1, 2, 3}, b[3] = {1.01, 2.01, 3.01};
    stats_tost_opts o = {.test = STATS_TEST_T, .delta = 0.05, .alpha = 0.05};
    stats_tost_result r;
    CHECK(stats_tost(a, 3, b, 3, &o, &r, NULL) == STATS_OK && !r.defined && !r.equivalent &&
              r.degenerate == STATS_TOST_CONSTANT,
          "t TOST of constant differences: undefined (code %d)", r.degenerate);
    o.test = STATS_TEST_SIGNFLIP;
    CHECK(stats_tost(a, 3, b, 3, &o, &r, NULL) == STATS_OK && r.defined && !r.equivalent &&
              r.p == 0.125 && !r.ci_bounded,
          "sign-flip TOST at n = 3: p = 1/8, cannot conclude");
    CHECK(stats_tost(a, 1, b, 1, &o, &r, NULL) == STATS_OK && r.defined && r.p == 0.5,
          "sign-flip TOST at n = 1");
    o.test = STATS_TEST_T;
    CHECK(stats_tost(a, 1, b, 1, &o, &r, NULL) == STATS_OK && !r.defined &&
              r.degenerate == STATS_TOST_SMALL_N,
          "t TOST at n = 1: undefined");
}

static void check_improvement(void)
{
    double a[6] = {2.0, 2.1, 2.2, 2.3, 2.4, 2.5}, b[6] = {1.9, 2.2, 2.2, 2.2, 2.3, 2.4};
    stats_improvement_result r;
    CHECK(stats_improvement(a, 6, b, 6, 1, 0.05, &r, NULL) == STATS_OK && r.n == 6 &&
              r.better == 4 && r.ties == 1 && r.share == 4.0 / 6.0 && r.defined,
          "improvement, lower is better: 4 of 6, one tie");
    double ci[2];
    stats_clopper_pearson(4, 6, 0.05, ci, NULL);
    CHECK(r.ci[0] == ci[0] && r.ci[1] == ci[1], "improvement interval is Clopper-Pearson");
    CHECK(stats_improvement(a, 6, b, 6, 0, 0.05, &r, NULL) == STATS_OK && r.better == 1,
          "higher is better: 1 of 6");
    CHECK(stats_improvement(a, 0, b, 0, 1, 0.05, &r, NULL) == STATS_OK && !r.defined,
          "no pairs: undefined");
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
    double a[3] = {1, 2, 3}, b[3] = {1, 2, NAN}, y[4] = {1, 2, 3, 4}, ci[2];
    stats_tost_opts o = {.test = STATS_TEST_T, .delta = 0.1, .alpha = 0.05};
    stats_tost_result r;
    CHECK_EINVAL(stats_tost(a, 3, b, 3, &o, &r, &e_), 2, "b[3]: NaN");
    CHECK_EINVAL(stats_tost(a, 3, a, 2, &o, &r, &e_), 2, "length 2 differs");
    o.delta = 0.0;
    CHECK_EINVAL(stats_tost(a, 3, a, 3, &o, &r, &e_), 3, "delta: must be finite and > 0");
    o.delta = 0.1, o.alpha = 0.5;
    CHECK_EINVAL(stats_tost(a, 3, a, 3, &o, &r, &e_), 3, "alpha: must be in (0, 0.5)");
    o.alpha = 0.05, o.test = 7;
    CHECK_EINVAL(stats_tost(a, 3, a, 3, &o, &r, &e_), 3, "test");

    stats_design g = {.sd = 0.0, .delta = 0.1, .alpha = 0.05, .power = 0.8, .m = 1};
    stats_seeds_result s;
    CHECK_EINVAL(stats_seeds_needed(&g, &s, &e_), 1, "sd: must be finite and > 0");
    g.sd = 1.0, g.m = 0;
    CHECK_EINVAL(stats_seeds_needed(&g, &s, &e_), 1, "m: must be >= 1");
    g.m = 1, g.power = 0.01;
    CHECK_EINVAL(stats_seeds_needed(&g, &s, &e_), 1, "power: must be in (alpha / m, 1)");
    g.power = 0.8, g.delta = 1e-6;
    CHECK_EINVAL(stats_seeds_needed(&g, &s, &e_), 1, "seeds would be needed");

    CHECK_EINVAL(stats_clopper_pearson(4, 3, 0.05, ci, &e_), 1, "k: must be <= n");
    CHECK_EINVAL(stats_clopper_pearson(0, 0, 0.05, ci, &e_), 2, "n: must be >= 1");
    CHECK_EINVAL(stats_clopper_pearson(1, 3, 1.0, ci, &e_), 3, "alpha");

    stats_anova2_result an;
    CHECK_EINVAL(stats_anova2(y, 1, 4, &an, &e_), 1, "at least 2 rows and 2 columns");
    y[3] = INFINITY;
    CHECK_EINVAL(stats_anova2(y, 2, 2, &an, &e_), 1, "y[4]: infinite");

    stats_signflip_ci_result sc;
    CHECK_EINVAL(stats_signflip_ci(a, 3, 0.0, 0, 0, 1, &sc, &e_), 2, "alpha");
    double many[25] = {0};
    CHECK_EINVAL(stats_signflip_ci(many, 25, 0.05, 0, 10, 1, &sc, &e_), 3, "resamples");
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "tests/vectors/stats_ref.json";
    jv *doc = jv_load(path);
    CHECK(doc != NULL, "read %s", path);
    if (doc) {
        check_tost(jv_get(doc, "tost", NULL));
        check_signflip_ci(jv_get(doc, "signflip_ci", NULL));
        check_seeds(jv_get(doc, "seeds_needed", NULL));
        check_clopper(jv_get(doc, "clopper_pearson", NULL));
        check_anova(jv_get(doc, "anova2", NULL));
        jv_free(doc);
    }
    check_signflip_duality();
    check_tost_properties();
    check_improvement();
    check_bad_arguments();
    return check_done("test_stats_rule");
}
