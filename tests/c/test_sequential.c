/* The group-sequential boundaries of stats/ (stats.h: stats_seq_*): the z constants against
 * Jennison & Turnbull's published tables (tests/vectors/sequential.json, read, not typed in
 * here), Lan-DeMets spending summing to alpha, the integration against closed forms and
 * against simulation, the small-sample t and signed-rank constants giving a type I error
 * within 3 standard errors of alpha on studies simulated apart from their calibration, and
 * the spending designs' randomized tests attaining their level exactly. */
#include <math.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "../../stats/stats.h"
#include "check.h"
#include "json_min.h"

#define ALPHA 0.05

static const char *shape_name(int shape)
{
    return shape == STATS_SEQ_OBF ? "O'Brien-Fleming" : "Pocock";
}

static const char *test_name(int test)
{
    return test == STATS_SEQ_Z ? "z" : test == STATS_SEQ_T ? "t" : "signed rank";
}

/* The constants for K = 2..5 match the tables to their three decimals, and the other
 * shape's constant does not: the check tells the shapes apart. */
static void check_published(const jv *doc)
{
    const jv *ks = jv_get(doc, "K", NULL);
    const jv *tables[2] = {jv_get(doc, "obf", NULL), jv_get(doc, "pocock", NULL)};
    double alpha = jv_num(jv_get(doc, "alpha", NULL));
    CHECK(ks && ks->type == JV_ARR && ks->n == 4, "sequential.json: K has 4 entries");
    for (size_t i = 0; ks && i < ks->n; i++) {
        size_t K = (size_t)jv_num(jv_at(ks, i));
        for (int shape = 0; shape < 2; shape++) {
            double want = jv_num(jv_at(tables[shape], i)), other = jv_num(jv_at(tables[1 - shape], i));
            double c, bounds[STATS_SEQ_MAX_LOOKS];
            stats_error err;
            int status = stats_seq_constant(NULL, K, shape, alpha, &c, bounds, &err);
            CHECK(status == STATS_OK, "constant K = %zu: status %d", K, status);
            CHECK(fabs(c - want) <= 0.0005, "%s K = %zu: C = %.6f, published %.3f",
                  shape_name(shape), K, c, want);
            CHECK(fabs(c - other) > 0.1, "%s K = %zu: C = %.6f is not the other shape's %.3f",
                  shape_name(shape), K, c, other);
            CHECK(fabs(bounds[K - 1] - c) < 1e-12 && bounds[0] >= c,
                  "%s K = %zu: the last bound is C, the first no lower", shape_name(shape), K);
        }
    }
}

/* The bounds of a constant reject alpha under the null; the Pocock constant on the
 * O'Brien-Fleming shape does not. */
static void check_crossing_null(void)
{
    const double t[4] = {0.2, 0.45, 0.7, 1.0};
    for (int shape = 0; shape < 2; shape++) {
        double c, bounds[4];
        stats_seq_crossing_result r;
        stats_error err;
        stats_seq_constant(t, 4, shape, ALPHA, &c, bounds, &err);
        CHECK(stats_seq_crossing(t, 4, bounds, NULL, 0.0, &r, &err) == STATS_OK,
              "crossing status");
        CHECK(fabs(r.reject - ALPHA) < 1e-9, "%s, unequal looks: P(reject) = %.12f",
              shape_name(shape), r.reject);
        double sum = 0.0;
        for (int k = 0; k < 4; k++) {
            sum += r.stop[k];
            CHECK(fabs(r.upper[k] - r.lower[k]) < 1e-12, "look %d: symmetric under the null", k);
        }
        /* Simpson's rule on the grid: about 1e-9 of the mass */
        CHECK(fabs(sum - 1.0) < 1e-8, "the looks' stopping chances sum to 1: %.12f", sum);
    }
    double c_p, c_b, bounds[4], factor[4];
    stats_seq_crossing_result r;
    stats_error err;
    stats_seq_constant(NULL, 4, STATS_SEQ_POCOCK, ALPHA, &c_p, NULL, &err);
    stats_seq_constant(NULL, 4, STATS_SEQ_OBF, ALPHA, &c_b, NULL, &err);
    double tt[4];
    stats_seq_fractions(NULL, 4, tt, &err);
    stats_seq_shape(STATS_SEQ_OBF, tt, 4, factor);
    for (int k = 0; k < 4; k++)
        bounds[k] = c_p * factor[k];
    stats_seq_crossing(NULL, 4, bounds, NULL, 0.0, &r, &err);
    CHECK(r.reject < ALPHA - 0.01, "Pocock's C on the O'Brien-Fleming shape: %.4f, not alpha",
          r.reject);
}

/* Against closed forms: one look is the fixed test; two looks with the second bound
 * infinite in effect reject P(|Z_1| >= c_1). */
static void check_closed_forms(void)
{
    stats_error err;
    stats_seq_crossing_result r;
    double z = gsl_cdf_ugaussian_Qinv(ALPHA / 2.0), theta = 2.5;
    stats_seq_crossing(NULL, 1, &z, NULL, theta, &r, &err);
    double power = gsl_cdf_ugaussian_Q(z - theta) + gsl_cdf_ugaussian_P(-z - theta);
    CHECK(fabs(r.reject - power) < 1e-12, "one look: power %.12f, closed form %.12f", r.reject,
          power);
    double t[2] = {0.3, 1.0}, b[2] = {2.2, STATS_SEQ_Z_MAX};
    stats_seq_crossing(t, 2, b, NULL, theta, &r, &err);
    double mu = theta * sqrt(0.3);
    double first = gsl_cdf_ugaussian_Q(2.2 - mu) + gsl_cdf_ugaussian_P(-2.2 - mu);
    CHECK(fabs(r.reject - first) < 1e-9 && r.upper[1] + r.lower[1] < 1e-12,
          "a last bound of SEQ_Z_MAX: only look 1 rejects (%.12f vs %.12f)", r.reject, first);
    CHECK(fabs(r.expected_t - (0.3 * first + 1.0 * (1.0 - first))) < 1e-8,
          "expected fraction %.12f", r.expected_t);
}

/* Lan-DeMets: the bounds spend what the function says, look by look, and alpha in all. */
static void check_spending(void)
{
    const double t[4] = {0.2, 0.45, 0.7, 1.0};
    for (int shape = 0; shape < 2; shape++) {
        double bounds[4], spent[4];
        stats_seq_crossing_result r;
        stats_error err;
        int status = stats_seq_spending(t, 4, shape, ALPHA, bounds, spent, &err);
        CHECK(status == STATS_OK, "spending status %d", status);
        CHECK(spent[3] == ALPHA, "%s spending: the cumulative spent is alpha at t = 1: %.17g",
              shape_name(shape), spent[3]);
        stats_seq_crossing(t, 4, bounds, NULL, 0.0, &r, &err);
        double before = 0.0;
        for (int k = 0; k < 4; k++) {
            double got = r.upper[k] + r.lower[k];
            CHECK(fabs(got - (spent[k] - before)) < 1e-10, "%s spending look %d: %.12g spent, "
                  "%.12g wanted", shape_name(shape), k + 1, got, spent[k] - before);
            CHECK(fabs(spent[k] - stats_seq_spend(shape, ALPHA, t[k])) < 1e-15, "spent[%d]", k);
            before = spent[k];
        }
        CHECK(fabs(r.reject - ALPHA) < 1e-9, "%s spending sums to alpha: %.12f",
              shape_name(shape), r.reject);
    }
    double b_obf[4], b_poc[4];
    stats_error err;
    stats_seq_spending(NULL, 4, STATS_SEQ_OBF, ALPHA, b_obf, NULL, &err);
    stats_seq_spending(NULL, 4, STATS_SEQ_POCOCK, ALPHA, b_poc, NULL, &err);
    CHECK(b_obf[0] > b_obf[1] && b_obf[1] > b_obf[2] && b_obf[2] > b_obf[3] && b_obf[0] > 3.5,
          "O'Brien-Fleming-type bounds fall from above 3.5: %.4f %.4f %.4f %.4f", b_obf[0],
          b_obf[1], b_obf[2], b_obf[3]);
    CHECK(fabs(b_poc[0] - b_poc[3]) < 0.05, "Pocock-type bounds stay nearly flat: %.4f %.4f",
          b_poc[0], b_poc[3]);
    double t3[3] = {0.25, 0.5, 0.8}, b3[3], s3[3];
    stats_seq_spending(t3, 3, STATS_SEQ_POCOCK, ALPHA, b3, s3, &err);
    CHECK(s3[2] < ALPHA && fabs(s3[2] - ALPHA * log1p((M_E - 1.0) * 0.8)) < 1e-15,
          "ending at t = 0.8 spends alpha ln(1 + (e - 1) 0.8) = %.6f", s3[2]);
}

/* The integration under a drift against simulated z studies (known variance), and a
 * binding futility bound lowering both the rejection and the expected fraction. */
static void check_drift(void)
{
    const size_t n[2] = {10, 20};
    const double t[2] = {0.5, 1.0}, shift = 0.5;
    double c, bounds[2];
    stats_error err;
    stats_seq_constant(t, 2, STATS_SEQ_POCOCK, ALPHA, &c, bounds, &err);
    stats_seq_crossing_result r, rf;
    stats_seq_crossing(t, 2, bounds, NULL, shift * sqrt(20.0), &r, &err);
    stats_seq_rule rule = {.test = STATS_SEQ_Z, .shape = STATS_SEQ_POCOCK, .c = c};
    stats_seq_sim_opts o = {STATS_SEQ_NORMAL, 1, shift, 20000, 7};
    stats_seq_sim_result s;
    CHECK(stats_seq_simulate(n, 2, &rule, 1, &o, &s, &err) == STATS_OK, "simulate status");
    CHECK(fabs(s.reject - r.reject) < 4.0 * s.se, "power: simulated %.4f (se %.4f), "
          "integrated %.4f", s.reject, s.se, r.reject);
    double en = 20.0 * r.expected_t;
    CHECK(fabs(s.expected_n - en) < 0.1, "expected differences: simulated %.3f, integrated %.3f",
          s.expected_n, en);
    double fut[2] = {0.5, 0.0};
    stats_seq_crossing(t, 2, bounds, fut, shift * sqrt(20.0), &rf, &err);
    CHECK(rf.reject < r.reject && rf.expected_t < r.expected_t && rf.futility[0] > 0.0,
          "futility: power %.4f < %.4f, E[t] %.4f < %.4f", rf.reject, r.reject, rf.expected_t,
          r.expected_t);
}

/* Calibrated on 100,000 null studies, checked on 20,000 others under normal differences
 * (every test) and t3 (the signed-rank test, whose null is any symmetric distribution). */
static void check_small_sample(void)
{
    const size_t n[4] = {8, 16, 24, 32};
    stats_seq_target tg[4];
    stats_seq_calibration cal[4], again[4];
    stats_seq_rule rules[4];
    int j = 0;
    for (int test = STATS_SEQ_T; test <= STATS_SEQ_SIGNED_RANK; test++)
        for (int shape = 0; shape < 2; shape++)
            tg[j++] = (stats_seq_target){test, shape, ALPHA};
    stats_error err;
    int status = stats_seq_calibrate(n, 4, tg, 4, 100000, 1, cal, &err);
    CHECK(status == STATS_OK, "calibrate status %d", status);
    stats_seq_calibrate(n, 4, tg, 4, 100000, 1, again, &err);
    CHECK(memcmp(cal, again, sizeof cal) == 0, "the same seed gives the same bytes");
    for (j = 0; j < 4; j++) {
        rules[j] = (stats_seq_rule){.test = tg[j].test, .shape = tg[j].shape, .c = cal[j].c};
        CHECK(cal[j].error <= ALPHA && cal[j].next_error > ALPHA,
              "calibration sample: %.5f <= alpha < %.5f", cal[j].error, cal[j].next_error);
    }
    stats_seq_sim_result normal[4], t3[4];
    stats_seq_sim_opts o = {STATS_SEQ_NORMAL, 1, 0.0, 20000, 2};
    stats_seq_simulate(n, 4, rules, 4, &o, normal, &err);
    o.dist = STATS_SEQ_T3;
    stats_seq_simulate(n, 4, rules, 4, &o, t3, &err);
    for (j = 0; j < 4; j++) {
        const char *name = test_name(tg[j].test), *shape = shape_name(tg[j].shape);
        CHECK(fabs(normal[j].reject - ALPHA) <= 3.0 * normal[j].se,
              "%s %s, C = %.4f: type I error %.4f (se %.4f)", name, shape, cal[j].c,
              normal[j].reject, normal[j].se);
        if (tg[j].test == STATS_SEQ_SIGNED_RANK)
            CHECK(fabs(t3[j].reject - ALPHA) <= 3.0 * t3[j].se,
                  "%s %s under t3: type I error %.4f (se %.4f)", name, shape, t3[j].reject,
                  t3[j].se);
    }
    CHECK(rules[0].c != rules[2].c, "t and signed rank have their own constants");
    double t_bounds[4];
    stats_seq_test_bounds(STATS_SEQ_T, STATS_SEQ_POCOCK, n, 4, cal[1].c, t_bounds, &err);
    CHECK(memcmp(t_bounds, cal[1].bounds, sizeof t_bounds) == 0 && t_bounds[0] > t_bounds[3] &&
              t_bounds[3] > cal[1].c,
          "Pocock's t bounds fall with the df, above C: %.4f .. %.4f", t_bounds[0], t_bounds[3]);
}

/* The simulation can fail a design: testing each look at nominal 0.05 (Pocock C = 1.96)
 * inflates the error; the z constant by simulation agrees with the integration; a
 * Bonferroni family of 4 keeps the family-wise error. */
static void check_simulation_detects(void)
{
    const size_t n[4] = {8, 16, 24, 32};
    stats_error err;
    stats_seq_rule naive = {.test = STATS_SEQ_T, .shape = STATS_SEQ_POCOCK,
                            .c = gsl_cdf_ugaussian_Qinv(ALPHA / 2.0)};
    stats_seq_sim_opts o = {STATS_SEQ_NORMAL, 1, 0.0, 20000, 3};
    stats_seq_sim_result s;
    stats_seq_simulate(n, 4, &naive, 1, &o, &s, &err);
    CHECK(s.reject > ALPHA + 10.0 * s.se, "four unadjusted looks: type I error %.4f", s.reject);

    double t[4] = {0.25, 0.5, 0.75, 1.0}, c_int;
    stats_seq_constant(t, 4, STATS_SEQ_OBF, ALPHA, &c_int, NULL, &err);
    stats_seq_target tz = {STATS_SEQ_Z, STATS_SEQ_OBF, ALPHA};
    stats_seq_calibration cz;
    stats_seq_calibrate(n, 4, &tz, 1, 100000, 4, &cz, &err);
    CHECK(fabs(cz.c - c_int) < 0.03, "z by simulation %.4f, by integration %.4f", cz.c, c_int);

    stats_seq_target tf[2] = {{STATS_SEQ_T, STATS_SEQ_OBF, ALPHA / 4.0},
                              {STATS_SEQ_SIGNED_RANK, STATS_SEQ_POCOCK, ALPHA / 4.0}};
    stats_seq_calibration cf[2];
    stats_seq_calibrate(n, 4, tf, 2, 100000, 5, cf, &err);
    stats_seq_rule rf[2] = {
        {.test = STATS_SEQ_T, .shape = STATS_SEQ_OBF, .c = cf[0].c},
        {.test = STATS_SEQ_SIGNED_RANK, .shape = STATS_SEQ_POCOCK, .c = cf[1].c}};
    stats_seq_sim_result sf[2];
    o.m = 4;
    stats_seq_simulate(n, 4, rf, 2, &o, sf, &err);
    double indep = 1.0 - pow(1.0 - ALPHA / 4.0, 4.0);
    for (int j = 0; j < 2; j++)
        CHECK(sf[j].reject <= ALPHA + 3.0 * sf[j].se && fabs(sf[j].reject - indep) <= 3.0 * sf[j].se,
              "%s, 4 comparisons at alpha / 4: family-wise error %.4f (se %.4f; %.4f expected)",
              test_name(rf[j].test), sf[j].reject, sf[j].se, indep);
}

static void check_bad_arguments(void)
{
    double c, bounds[STATS_SEQ_MAX_LOOKS];
    stats_error err;
    CHECK(stats_seq_constant(NULL, 0, STATS_SEQ_OBF, ALPHA, &c, bounds, &err) == STATS_EINVAL &&
              err.arg == 1,
          "no looks refused: %s", err.msg);
    double t[2] = {0.5, 0.5};
    CHECK(stats_seq_constant(t, 2, STATS_SEQ_OBF, ALPHA, &c, bounds, &err) == STATS_EINVAL &&
              strstr(err.msg, "t[2]"),
          "equal fractions refused, named: %s", err.msg);
    double close[2] = {0.9995, 1.0};
    CHECK(stats_seq_constant(close, 2, STATS_SEQ_OBF, ALPHA, &c, bounds, &err) == STATS_EINVAL,
          "looks closer than SEQ_MIN_STEP refused: %s", err.msg);
    CHECK(stats_seq_constant(NULL, 2, 7, ALPHA, &c, bounds, &err) == STATS_EINVAL && err.arg == 2,
          "an unknown shape refused: %s", err.msg);
    CHECK(stats_seq_constant(NULL, 2, STATS_SEQ_OBF, 1.5, &c, bounds, &err) == STATS_EINVAL &&
              err.arg == 3,
          "alpha 1.5 refused: %s", err.msg);
    double b[2] = {2.0, 2.0}, f[2] = {2.5, 0.0};
    stats_seq_crossing_result r;
    CHECK(stats_seq_crossing(NULL, 2, b, f, 0.0, &r, &err) == STATS_EINVAL && err.arg == 3,
          "futility above the bound refused: %s", err.msg);
    size_t n[2] = {5, 5};
    stats_seq_target tg = {STATS_SEQ_T, STATS_SEQ_OBF, ALPHA};
    stats_seq_calibration cal;
    CHECK(stats_seq_calibrate(n, 2, &tg, 1, 1000, 1, &cal, &err) == STATS_EINVAL && err.arg == 1,
          "look sizes that do not increase refused: %s", err.msg);
    n[1] = 10;
    CHECK(stats_seq_calibrate(n, 2, &tg, 1, 100, 1, &cal, &err) == STATS_EINVAL &&
              strstr(err.msg, "alpha N"),
          "alpha N < 10 refused: %s", err.msg);
    stats_seq_rule rule = {.test = STATS_SEQ_T, .shape = STATS_SEQ_OBF, .c = 2.0};
    stats_seq_sim_opts o = {STATS_SEQ_NORMAL, 0, 0.0, 100, 1};
    stats_seq_sim_result s;
    CHECK(stats_seq_simulate(n, 2, &rule, 1, &o, &s, &err) == STATS_EINVAL && err.arg == 3,
          "m = 0 refused: %s", err.msg);
    size_t one[2] = {1, 4};
    o.m = 1;
    CHECK(stats_seq_simulate(one, 2, &rule, 1, &o, &s, &err) == STATS_EINVAL,
          "a t test with 1 difference at look 1 refused: %s", err.msg);
}

/* Spending on a discrete null spends exactly: the signed-rank atom's share gamma (exact
 * law), the sign flips' tie keys (crossed = allowed), each draw fixed by the comparison's
 * key; and in simulation both reach their level where the tests without the draw fall
 * short (10 / 1024 for 5, 10 at alpha / 4; about 0.03 for flips of 6 pairs at 0.05). */
static void check_exact_spending(void)
{
    stats_error err;
    const size_t ten[1] = {10}, five_ten[2] = {5, 10};
    stats_seq_target tg = {STATS_SEQ_SIGNED_RANK, STATS_SEQ_OBF, ALPHA};
    stats_seq_rank_design one, two;
    int status = stats_seq_rank_spending(ten, 1, &tg, 1, 0, 1, &one, &err);
    CHECK(status == STATS_OK, "rank spending status %d", status);
    /* 10 pairs alone: 50 / 1024 above the atom, 16 / 1024 on it */
    CHECK(fabs(one.gamma[0] - (ALPHA - 50.0 / 1024.0) / (16.0 / 1024.0)) < 1e-12 &&
              fabs(one.spent[0] - ALPHA) < 1e-15 && fabs(one.next[0] - 66.0 / 1024.0) < 1e-15,
          "10 pairs: gamma %.12f, spent %.17g, next %.17g", one.gamma[0], one.spent[0],
          one.next[0]);
    tg.alpha = ALPHA / 4.0;
    stats_seq_rank_spending(five_ten, 2, &tg, 1, 0, 1, &two, &err);
    for (int k = 0; k < 2; k++)
        CHECK(fabs(two.spent[k] - two.target[k]) < 1e-15 && two.gamma[k] > 0.0 &&
                  two.gamma[k] < 1.0 && two.atom[k] < two.bounds[k],
              "5, 10 at alpha / 4, look %d: spent %.17g, spend %.17g, gamma %.6f", k + 1,
              two.spent[k], two.target[k], two.gamma[k]);
    CHECK(stats_seq_draw(7, 1) == stats_seq_draw(7, 1) && stats_seq_draw(7, 1) !=
              stats_seq_draw(8, 1) && stats_seq_draw(7, 0) != stats_seq_draw(7, 1),
          "a draw is fixed by its key and look, and differs with either");

    const size_t n[2] = {3, 12};
    double d[12];
    for (int i = 0; i < 12; i++)
        d[i] = 0.3 + sin(1.0 + i);
    stats_seq_flip_result a, b, other;
    stats_seq_flip_t(d, n, 2, 2, STATS_SEQ_POCOCK, ALPHA, 5, &a, &err);
    stats_seq_flip_t(d, n, 2, 2, STATS_SEQ_POCOCK, ALPHA, 5, &b, &err);
    stats_seq_flip_t(d, n, 2, 2, STATS_SEQ_POCOCK, ALPHA, 6, &other, &err);
    CHECK(memcmp(&a, &b, sizeof a) == 0, "the same key gives the same bytes");
    CHECK(a.bounds[1] != other.bounds[1], "another key draws other vectors: %.6f, %.6f",
          a.bounds[1], other.bounds[1]);
    /* 3 pairs: 8 sign patterns, so 1,600 vectors tie in blocks of about 400 */
    for (int k = 0; k < 2; k++)
        CHECK(a.crossed[k] == a.allowed[k] && other.crossed[k] == other.allowed[k],
              "look %d: %zu and %zu vectors crossed, %zu allowed", k + 1, a.crossed[k],
              other.crossed[k], a.allowed[k]);

    const size_t six[2] = {3, 6};
    stats_seq_rule rules[2] = {
        {.test = STATS_SEQ_T_FLIP, .shape = STATS_SEQ_OBF, .alpha = ALPHA},
        {.test = STATS_SEQ_SIGNED_RANK, .shape = STATS_SEQ_OBF, .bounds = two.bounds,
         .atom = two.atom, .gamma = two.gamma},
    };
    stats_seq_sim_opts o = {STATS_SEQ_T3, 1, 0.0, 40000, 3};
    stats_seq_sim_result flip, rank;
    stats_seq_simulate(six, 2, rules, 1, &o, &flip, &err);
    stats_seq_simulate(five_ten, 2, rules + 1, 1, &o, &rank, &err);
    double level = floor(ALPHA * STATS_SEQ_FLIPS) / STATS_SEQ_FLIPS;
    CHECK(fabs(flip.reject - level) <= 3.0 * flip.se,
          "sign flips of 3, 6 pairs, t3: type I error %.4f (se %.4f), level %.4f", flip.reject,
          flip.se, level);
    CHECK(fabs(rank.reject - ALPHA / 4.0) <= 3.0 * rank.se,
          "signed rank 5, 10 at alpha / 4, t3: type I error %.5f (se %.5f)", rank.reject,
          rank.se);
    stats_seq_rule bad = rules[1];
    double gamma[2] = {0.5, 1.5};
    bad.gamma = gamma;
    CHECK(stats_seq_simulate(five_ten, 2, &bad, 1, &o, &rank, &err) == STATS_EINVAL &&
              strstr(err.msg, "gamma[2]"),
          "gamma above 1 refused: %s", err.msg);
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "tests/vectors/sequential.json";
    jv *doc = jv_load(path);
    CHECK(doc != NULL, "read %s", path);
    if (doc) {
        check_published(doc);
        jv_free(doc);
    }
    check_crossing_null();
    check_closed_forms();
    check_spending();
    check_drift();
    check_small_sample();
    check_simulation_detects();
    check_bad_arguments();
    check_exact_spending();
    return check_done("test_sequential");
}
