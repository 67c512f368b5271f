/* A replication's estimate against an original estimate (stats.h: stats_replication):
 * the confidence and prediction intervals, small telescopes and the equivalence of the
 * two.  The verdict is the caller's (docs/DESIGN.md, "Replication verdicts"). */
#include <math.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "internal.h"
#include "stats.h"

int stats_original_from_arms(const double mean[2], const double sd[2], const size_t n[2],
                             int log_ratio, stats_original *o, stats_error *err)
{
    stats_gsl_off();
    memset(o, 0, sizeof *o);
    for (int i = 0; i < 2; i++) {
        const char *arm = i ? "treatment" : "baseline";
        if (!isfinite(mean[i]) || (log_ratio && !(mean[i] > 0.0)))
            return stats_fail(err, 1, "%s mean: must be finite%s, got %g", arm,
                              log_ratio ? " and > 0" : "", mean[i]);
        if (!(isfinite(sd[i]) && sd[i] > 0.0))
            return stats_fail(err, 1, "%s sd: must be finite and > 0, got %g", arm, sd[i]);
        if (n[i] < 2)
            return stats_fail(err, 1, "%s n: must be >= 2, got %zu", arm, n[i]);
    }
    /* on the log scale each arm's sd is its coefficient of variation (the delta method:
     * var(log m) = var(m) / m^2) */
    double s0 = log_ratio ? sd[0] / mean[0] : sd[0];
    double s1 = log_ratio ? sd[1] / mean[1] : sd[1];
    double n0 = (double)n[0], n1 = (double)n[1];
    o->estimate = log_ratio ? log(mean[1] / mean[0]) : mean[1] - mean[0];
    o->se = sqrt(s0 * s0 / n0 + s1 * s1 / n1);
    o->sd = sqrt(((n0 - 1.0) * s0 * s0 + (n1 - 1.0) * s1 * s1) / (n0 + n1 - 2.0));
    o->n1 = n[0];
    o->n2 = n[1];
    if (!isfinite(o->estimate) || !isfinite(o->se) || !(o->se > 0.0))
        return stats_fail(err, 1, "arms: no finite estimate and standard error");
    return STATS_OK;
}

typedef struct {
    double df, scale, alpha, target;
    int status;
} power_root;

/* Two-sided power at standardized effect d of a t-test with df degrees of freedom and
 * noncentrality d * scale, minus the target. */
static double power_minus_target(double d, void *params)
{
    power_root *p = (power_root *)params;
    double t_crit = gsl_cdf_tdist_Qinv(0.5 * p->alpha, p->df);
    double upper, lower;
    if (!isfinite(t_crit) || stats_nct_cdf(t_crit, p->df, d * p->scale, &upper) ||
        stats_nct_cdf(-t_crit, p->df, d * p->scale, &lower)) {
        p->status = STATS_ENUM;
        return GSL_NAN;
    }
    return 1.0 - upper + lower - p->target;
}

/* d33: the standardized effect the original design detects with power 1/3 at two-sided
 * alpha (paired: df = n1 - 1, ncp = d sqrt(n1); two groups: df = n1 + n2 - 2, ncp =
 * d sqrt(n1 n2 / (n1 + n2))). */
static int d33_of(const stats_original *o, double alpha, double *d33)
{
    power_root p = {.alpha = alpha, .target = 1.0 / 3.0};
    if (o->n2 == 0) {
        p.df = (double)o->n1 - 1.0;
        p.scale = sqrt((double)o->n1);
    } else {
        double a = (double)o->n1, b = (double)o->n2;
        p.df = a + b - 2.0;
        p.scale = sqrt(a * b / (a + b));
    }
    double hi = 1.0;
    for (;;) {
        double f = power_minus_target(hi, &p);
        if (p.status)
            return STATS_ENUM;
        if (f >= 0.0)
            break;
        hi *= 2.0;
        if (hi * p.scale > STATS_NCT_MAX_NCP)
            return STATS_ENUM;
    }
    gsl_function fn = {power_minus_target, &p};
    int status = stats_brent(&fn, 0.0, hi, d33);
    return p.status ? p.status : status;
}

int stats_replication(const stats_original *o, double rep_mean, double rep_sd, size_t rep_n,
                      const stats_replication_opts *opts, stats_replication_result *res,
                      stats_error *err)
{
    stats_gsl_off();
    memset(res, 0, sizeof *res);
    if (!isfinite(o->estimate))
        return stats_fail(err, 1, "estimate: must be finite, got %g", o->estimate);
    if (!(isfinite(o->se) && o->se > 0.0))
        return stats_fail(err, 1, "se: must be finite and > 0, got %g", o->se);
    if (!(isfinite(o->sd) && o->sd > 0.0))
        return stats_fail(err, 1, "sd: must be finite and > 0, got %g", o->sd);
    if (o->n1 < 2 || (o->n2 != 0 && o->n2 < 2))
        return stats_fail(err, 1, "n: must be >= 2 (per group), got %zu and %zu", o->n1, o->n2);
    if (!isfinite(rep_mean))
        return stats_fail(err, 2, "mean: must be finite, got %g", rep_mean);
    if (!(isfinite(rep_sd) && rep_sd >= 0.0))
        return stats_fail(err, 2, "sd: must be finite and >= 0, got %g", rep_sd);
    if (!(opts->alpha > 0.0 && opts->alpha < 0.5))
        return stats_fail(err, 3, "alpha: must be in (0, 0.5), got %g", opts->alpha);
    if (!(isfinite(opts->margin) && opts->margin >= 0.0))
        return stats_fail(err, 3, "margin: must be finite and >= 0, got %g", opts->margin);
    double alpha = opts->alpha, theta = o->estimate;
    res->estimate = rep_mean;
    res->n = rep_n;
    res->diff = rep_mean - theta;
    int status = d33_of(o, alpha, &res->d33);
    if (status) {
        memset(res, 0, sizeof *res);
        return status;
    }
    res->d33_raw = res->d33 * o->sd;
    res->defined = STATS_REPL_HAVE_D33;
    if (theta != 0.0) {
        res->same_direction = rep_mean * theta > 0.0;
        res->defined |= STATS_REPL_HAVE_DIRECTION;
    }
    if (rep_n < 2 || !(rep_sd > 0.0))
        return STATS_OK;
    double se = rep_sd / sqrt((double)rep_n), df = (double)rep_n - 1.0;
    res->se = se;
    res->df = df;
    double t_crit = gsl_cdf_tdist_Qinv(0.5 * alpha, df);
    double z = gsl_cdf_ugaussian_Qinv(0.5 * alpha);
    double se_diff = sqrt(o->se * o->se + se * se);
    res->ci[0] = rep_mean - t_crit * se;
    res->ci[1] = rep_mean + t_crit * se;
    res->orig_in_ci = res->ci[0] <= theta && theta <= res->ci[1];
    res->pi[0] = theta - z * se_diff;
    res->pi[1] = theta + z * se_diff;
    res->in_pi = res->pi[0] <= rep_mean && rep_mean <= res->pi[1];
    double df_o = o->n2 == 0 ? (double)o->n1 - 1.0 : (double)(o->n1 + o->n2) - 2.0;
    double t_o = gsl_cdf_tdist_Qinv(0.5 * alpha, df_o);
    res->pi_t[0] = theta - t_o * se_diff;
    res->pi_t[1] = theta + t_o * se_diff;
    res->in_pi_t = res->pi_t[0] <= rep_mean && rep_mean <= res->pi_t[1];
    res->defined |= STATS_REPL_HAVE_CI | STATS_REPL_HAVE_PI;
    if (theta != 0.0) {
        /* H1: the effect in the original's direction is below d33 in the metric's units */
        double s = theta > 0.0 ? 1.0 : -1.0;
        res->telescope_t = (s * rep_mean - res->d33_raw) / se;
        res->telescope_p = gsl_cdf_tdist_P(res->telescope_t, df);
        res->too_small = res->telescope_p <= alpha;
        res->defined |= STATS_REPL_HAVE_TELESCOPE;
    }
    if (opts->margin > 0.0) {
        double vo = o->se * o->se, vr = se * se;
        res->diff_se = se_diff;
        res->diff_df = (vo + vr) * (vo + vr) / (vo * vo / df_o + vr * vr / df);
        double tq = gsl_cdf_tdist_Qinv(alpha, res->diff_df);
        res->tost_p_lower = gsl_cdf_tdist_Q((res->diff + opts->margin) / se_diff, res->diff_df);
        res->tost_p_upper = gsl_cdf_tdist_P((res->diff - opts->margin) / se_diff, res->diff_df);
        res->tost_p = fmax(res->tost_p_lower, res->tost_p_upper);
        res->tost_ci[0] = res->diff - tq * se_diff;
        res->tost_ci[1] = res->diff + tq * se_diff;
        res->equivalent = res->tost_p <= alpha;
        res->defined |= STATS_REPL_HAVE_TOST;
    }
    if (!isfinite(res->ci[0] + res->ci[1] + res->pi[0] + res->pi[1] + res->telescope_p +
                  res->tost_p + res->tost_ci[0] + res->tost_ci[1] + res->diff_df)) {
        memset(res, 0, sizeof *res);
        return STATS_ENUM;
    }
    return STATS_OK;
}
