/* The noncentral t distribution, which GSL lacks: its CDF and the inversion in the
 * noncentrality parameter that gives effect-size intervals.
 *
 * For t >= 0, with x = t^2 / (t^2 + df), lambda = ncp^2 / 2 (Lenth 1989, AS 243):
 *   F(t) = Phi(-ncp) + 1/2 sum_j [ p_j I_x(j + 1/2, df/2) + q_j I_x(j + 1, df/2) ],
 *   p_j = e^-lambda lambda^j / j!,  q_j = ncp / (sqrt 2 Gamma(j + 3/2)) e^-lambda lambda^j,
 * and F(t; ncp) = 1 - F(-t; -ncp) for t < 0.  AS 243 sums forward from j = 0, which
 * needs about lambda terms before the Poisson weights matter; here the sum starts at
 * the Poisson mode and walks both ways, with one call of the incomplete beta function
 * at the mode and its two-term recurrence I_x(a + 1, b) = I_x(a, b) - D(a) elsewhere,
 * so the cost grows like sqrt(lambda).  The Poisson weights come from Loader's
 * saddle-point form, which keeps them accurate when lambda is large.  Every term is
 * below 1 in size, so the error is absolute, not relative: fine for the interval and
 * power computations, which need probabilities near 0.025, 0.8 or 0.975, not tails.
 * Checked (tests/c/test_stats.c) against 332 values of the same series in 40-digit
 * arithmetic (tests/vectors/nct.json): largest error 1.3e-14 for |ncp| <= 40 and
 * 5.3e-12 at |ncp| = 990, both set by GSL's incomplete beta function at the mode.
 */
#include <math.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_sf_gamma.h>

#include "internal.h"
#include "stats.h"

/* Terms whose remaining mass is below this are dropped. */
#define SUM_EPS 1e-18
#define MAX_TERMS 10000000L

/* lgamma(j + 1) - the Stirling approximation (j + 1/2) log j - j + log(2 pi) / 2, for
 * real j > 0: above 15 its asymptotic series, whose first omitted term is below 3e-16. */
static double stirling_err(double j)
{
    if (j <= 15.0)
        return lgamma(j + 1.0) - (j + 0.5) * log(j) + j - 0.5 * log(2.0 * M_PI);
    double j2 = j * j;
    return (1.0 / 12.0 -
            (1.0 / 360.0 - (1.0 / 1260.0 - (1.0 / 1680.0 - 1.0 / (1188.0 * j2)) / j2) / j2) / j2) /
           j;
}

/* j log(j / lam) + lam - j without the cancellation of its terms when j ~ lam. */
static double deviance_term(double j, double lam)
{
    double u = (j - lam) / lam;
    if (fabs(u) < 0.1) {
        /* (1 + u) log(1 + u) - u = sum_{k >= 2} (-1)^k u^k / (k (k - 1)) */
        double s = 0.0, uk = u * u;
        for (int k = 2; k < 40; k++) {
            double term = uk / (k * (k - 1.0));
            s += (k % 2 == 0) ? term : -term;
            if (fabs(term) < 1e-17 * fabs(s))
                break;
            uk *= u;
        }
        return lam * s;
    }
    return j * log(j / lam) + lam - j;
}

/* log(Gamma(j + 3/2) / Gamma(j + 1)) for integral j >= 0, without the cancellation of
 * two large lgamma values (GSL's lnpoch loses about 1e-11 here at j ~ 1e4). */
static double log_gamma_ratio(double j)
{
    if (j <= 15.0)
        return lgamma(j + 1.5) - lgamma(j + 1.0);
    return 0.5 * log(j + 0.5) + (j + 0.5) * log1p(0.5 / j) - 0.5 + stirling_err(j + 0.5) -
           stirling_err(j);
}

/* The Poisson probability of j (>= 0, integral) at mean lam > 0, accurate for large
 * j and lam (Loader's saddle-point form). */
static double poisson_pmf(double j, double lam)
{
    if (j == 0.0)
        return exp(-lam);
    return exp(-stirling_err(j) - deviance_term(j, lam)) / sqrt(2.0 * M_PI * j);
}

/* log of D(a) = I_x(a, b) - I_x(a + 1, b) = x^a (1 - x)^b / (a B(a, b)). */
static int log_beta_step(double a, double b, double log_x, double log_1mx, double *out)
{
    gsl_sf_result lb;
    int status = gsl_sf_lnbeta_e(a, b, &lb);
    if (status != GSL_SUCCESS)
        return STATS_ENUM;
    *out = a * log_x + b * log_1mx - log(a) - lb.val;
    return STATS_OK;
}

static int beta_inc(double a, double b, double x, double *out)
{
    gsl_sf_result r;
    int status = gsl_sf_beta_inc_e(a, b, x, &r);
    if (status == GSL_EUNDRFLW) {
        *out = 0.0;
        return STATS_OK;
    }
    if (status != GSL_SUCCESS || !isfinite(r.val))
        return STATS_ENUM;
    *out = r.val;
    return STATS_OK;
}

/* The sum of the series above for t > 0. */
static int series(double t, double df, double ncp, double *sum_out)
{
    double tt = t * t;
    double x = tt / (tt + df);
    *sum_out = 0.0;
    if (x == 0.0)
        return STATS_OK; /* every I_x(., .) is 0 */
    double log_x = -log1p(df / tt), log_1mx = -log1p(tt / df);
    double b = 0.5 * df, lam = 0.5 * ncp * ncp;
    double j0 = floor(lam);

    double p0 = lam > 0.0 ? poisson_pmf(j0, lam) : 1.0;
    double q0 = ncp / M_SQRT2 * p0 * exp(-log_gamma_ratio(j0));
    double ip0, iq0, ldp, ldq;
    if (beta_inc(j0 + 0.5, b, x, &ip0) || beta_inc(j0 + 1.0, b, x, &iq0) ||
        log_beta_step(j0 + 0.5, b, log_x, log_1mx, &ldp) ||
        log_beta_step(j0 + 1.0, b, log_x, log_1mx, &ldq))
        return STATS_ENUM;
    double dp0 = exp(ldp), dq0 = exp(ldq);

    /* Forward, j = j0, j0 + 1, ...: I and the Poisson weights decrease. */
    double sum = 0.0;
    double p = p0, q = q0, ip = ip0, iq = iq0, dp = dp0, dq = dq0, j = j0;
    for (long it = 0;; it++) {
        if (it > MAX_TERMS)
            return STATS_ENUM;
        sum += p * ip + q * iq;
        ip -= dp;
        iq -= dq;
        dp *= x * (j + 0.5 + b) / (j + 1.5);
        dq *= x * (j + 1.0 + b) / (j + 2.0);
        p *= lam / (j + 1.0);
        q *= lam / (j + 1.5);
        j += 1.0;
        if (j > lam + 1.0) {
            /* the rest is at most I_j times a geometric tail of the weights */
            double tail = fabs(ip) * p / (1.0 - lam / (j + 1.0)) +
                          fabs(iq) * fabs(q) / (1.0 - lam / (j + 1.5));
            if (tail < SUM_EPS)
                break;
        }
    }

    /* Backward, j = j0 - 1, ..., 0: I increases, the weights decrease. */
    p = p0, q = q0, ip = ip0, iq = iq0, dp = dp0, dq = dq0, j = j0;
    while (j > 0.0) {
        p *= j / lam;
        q *= (j + 0.5) / lam;
        dp *= (j + 0.5) / (x * (j - 0.5 + b));
        dq *= (j + 1.0) / (x * (j + b));
        ip += dp;
        iq += dq;
        j -= 1.0;
        sum += p * ip + q * iq;
        if (j * (p + fabs(q)) < SUM_EPS)
            break;
    }
    if (!isfinite(sum))
        return STATS_ENUM;
    *sum_out = sum;
    return STATS_OK;
}

int stats_nct_cdf(double t, double df, double ncp, double *p)
{
    stats_gsl_off();
    if (!isfinite(t) || !(df > 0.0) || !isfinite(df) || !isfinite(ncp) ||
        fabs(ncp) > STATS_NCT_MAX_NCP)
        return STATS_EINVAL;
    double s;
    double f;
    if (t >= 0.0) {
        int status = series(t, df, ncp, &s);
        if (status)
            return status;
        f = gsl_cdf_ugaussian_P(-ncp) + 0.5 * s;
    } else {
        int status = series(-t, df, -ncp, &s);
        if (status)
            return status;
        f = gsl_cdf_ugaussian_P(-ncp) - 0.5 * s;
    }
    *p = f < 0.0 ? 0.0 : f > 1.0 ? 1.0 : f;
    return STATS_OK;
}

typedef struct {
    double t, df, target;
    int status;
} ncp_root;

static double ncp_root_fn(double ncp, void *params)
{
    ncp_root *r = (ncp_root *)params;
    double p;
    int status = stats_nct_cdf(r->t, r->df, ncp, &p);
    if (status) {
        r->status = status;
        return GSL_NAN;
    }
    return p - r->target;
}

/* The ncp at which the CDF of t is `target`; the CDF decreases in ncp. */
static int solve_ncp(double t, double df, double target, double *out)
{
    ncp_root r = {t, df, target, STATS_OK};
    double step = 1.0 + 0.25 * fabs(t);
    double near = t, far = t;
    double f0 = ncp_root_fn(near, &r);
    if (r.status)
        return STATS_ENUM;
    double dir = f0 < 0.0 ? -1.0 : 1.0; /* CDF too small: move ncp down */
    if (f0 == 0.0) {
        *out = near;
        return STATS_OK;
    }
    for (;;) {
        far = near + dir * step;
        if (fabs(far) > STATS_NCT_MAX_NCP)
            return STATS_ENUM;
        double f = ncp_root_fn(far, &r);
        if (r.status)
            return STATS_ENUM;
        if ((f < 0.0) != (f0 < 0.0) || f == 0.0)
            break;
        near = far;
        step *= 2.0;
    }
    gsl_function fn = {ncp_root_fn, &r};
    int status = stats_brent(&fn, fmin(near, far), fmax(near, far), out);
    if (r.status || status)
        return STATS_ENUM;
    return STATS_OK;
}

int stats_nct_ncp_interval(double t, double df, double alpha, double *ncp_lo, double *ncp_hi)
{
    stats_gsl_off();
    if (!isfinite(t) || !(df > 0.0) || !isfinite(df) || !(alpha > 0.0 && alpha < 1.0))
        return STATS_EINVAL;
    int status = solve_ncp(t, df, 1.0 - 0.5 * alpha, ncp_lo);
    if (status)
        return status;
    return solve_ncp(t, df, 0.5 * alpha, ncp_hi);
}
