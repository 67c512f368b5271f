/* The paired comparison of a baseline and a treatment measured on the same seeds:
 * every statistic of stats.h on d = b - a, with the degenerate cases spelled out. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "internal.h"
#include "stats.h"

void stats_paired_opts_default(stats_paired_opts *opts)
{
    *opts = (stats_paired_opts){.alpha = STATS_DEFAULT_ALPHA,
                                .power = STATS_DEFAULT_POWER,
                                .resamples = STATS_DEFAULT_RESAMPLES,
                                .seed = 1,
                                .exact = 0};
}

static int check_args(const double *a, size_t na, const double *b, size_t nb,
                      const stats_paired_opts *o, stats_error *err)
{
    int status;
    if (na != nb)
        return stats_fail(err, 2, "b: length %zu differs from the length %zu of a", nb, na);
    if ((status = stats_check_finite(a, na, "a", 1, err)) ||
        (status = stats_check_finite(b, nb, "b", 2, err)) ||
        (status = stats_check_alpha(o->alpha, 3, err)))
        return status;
    if (!(o->power > o->alpha && o->power < 1.0))
        return stats_fail(err, 3, "power: must be in (alpha, 1) = (%g, 1), got %g", o->alpha,
                          o->power);
    if (o->resamples < STATS_MIN_RESAMPLES)
        return stats_fail(err, 3, "resamples: must be >= %d, got %zu", STATS_MIN_RESAMPLES,
                          o->resamples);
    if (o->exact && na > STATS_BOOT_EXACT_MAX)
        return stats_fail(err, 3, "exact: the exact bootstrap needs n <= %d, got n = %zu",
                          STATS_BOOT_EXACT_MAX, na);
    return STATS_OK;
}

/* t-test, t-interval, d_z, g_z and their interval; needs sd > 0. */
static int t_and_effect(stats_paired_result *res)
{
    double n = (double)res->n, se = res->sd / sqrt(n);
    res->t = res->mean / se;
    res->p_t = 2.0 * gsl_cdf_tdist_Q(fabs(res->t), res->df);
    double t_crit = gsl_cdf_tdist_Qinv(0.5 * res->alpha, res->df);
    if (!isfinite(res->p_t) || !isfinite(t_crit))
        return STATS_ENUM;
    res->ci_t[0] = res->mean - t_crit * se;
    res->ci_t[1] = res->mean + t_crit * se;
    res->defined |= STATS_HAVE_T;

    res->d_z = res->mean / res->sd;
    res->hedges_j = 1.0 - 3.0 / (4.0 * res->df - 1.0);
    res->g_z = res->hedges_j * res->d_z;
    res->defined |= STATS_HAVE_D_Z;

    double lo, hi;
    int status = stats_nct_ncp_interval(res->t, res->df, res->alpha, &lo, &hi);
    if (status == STATS_ENUM) {
        res->degenerate |= STATS_DEGEN_NCT_RANGE;
        return STATS_OK;
    }
    if (status)
        return status;
    res->ci_d_z[0] = lo / sqrt(n);
    res->ci_d_z[1] = hi / sqrt(n);
    res->ci_g_z[0] = res->hedges_j * res->ci_d_z[0];
    res->ci_g_z[1] = res->hedges_j * res->ci_d_z[1];
    res->defined |= STATS_HAVE_CI_D_Z;
    return STATS_OK;
}

static int bootstrap(const double *d, const stats_paired_opts *o, stats_paired_result *res)
{
    stats_boot_dist *dist = NULL;
    int status = o->exact ? stats_boot_dist_exact(d, res->n, &dist)
                          : stats_boot_dist_mc(d, res->n, o->resamples, o->seed, &dist);
    if (status)
        return status;
    stats_boot_ci ci;
    status = stats_boot_intervals(d, res->n, dist, res->alpha, &ci);
    res->resamples = dist->total;
    stats_boot_dist_free(dist);
    if (status)
        return status;
    res->bootstrap_exact = o->exact;
    memcpy(res->ci_percentile, ci.ci_percentile, sizeof res->ci_percentile);
    res->defined |= STATS_HAVE_PERCENTILE;
    if (ci.bca_defined) {
        memcpy(res->ci_bca, ci.ci_bca, sizeof res->ci_bca);
        res->bca_z0 = ci.z0;
        res->bca_a = ci.a;
        res->defined |= STATS_HAVE_BCA;
    } else {
        res->degenerate |= STATS_DEGEN_BCA;
        res->bca_reason = ci.bca_reason;
    }
    return STATS_OK;
}

static int compute(const double *d, const stats_paired_opts *o, stats_paired_result *res)
{
    size_t n = res->n;
    double sum = 0.0, max_abs = 0.0;
    for (size_t i = 0; i < n; i++) {
        sum += d[i];
        max_abs = fmax(max_abs, fabs(d[i]));
    }
    if (n >= 1) {
        res->mean = sum / (double)n;
        res->defined |= STATS_HAVE_MEAN;
        stats_signflip_result sf;
        int status = stats_signflip(d, n, o->resamples, o->seed, &sf);
        if (status)
            return status;
        res->p_signflip = sf.p;
        res->p_signflip_se = sf.se;
        res->p_signflip_min = sf.p_min;
        res->signflip_exact = sf.exact;
        res->defined |= STATS_HAVE_SIGNFLIP;
    }
    if (n < 2) {
        res->degenerate |= STATS_DEGEN_SMALL_N;
        return STATS_OK;
    }
    double ss = 0.0;
    for (size_t i = 0; i < n; i++)
        ss += (d[i] - res->mean) * (d[i] - res->mean);
    res->sd = sqrt(ss / (double)(n - 1));
    res->df = (double)(n - 1);
    res->defined |= STATS_HAVE_SD | STATS_HAVE_DF;

    int status = stats_mde(n, o->alpha, o->power, &res->mde_d_z, NULL);
    if (status)
        return status;
    res->defined |= STATS_HAVE_MDE_D_Z;

    if (res->sd <= STATS_SD_RTOL * max_abs) {
        res->degenerate |= STATS_DEGEN_CONSTANT;
        res->ci_percentile[0] = res->ci_percentile[1] = res->mean;
        res->defined |= STATS_HAVE_PERCENTILE;
        res->bootstrap_exact = o->exact;
        return STATS_OK;
    }
    res->mde = res->mde_d_z * res->sd;
    res->defined |= STATS_HAVE_MDE;
    if ((status = t_and_effect(res)))
        return status;
    return bootstrap(d, o, res);
}

int stats_paired(const double *a, size_t na, const double *b, size_t nb,
                 const stats_paired_opts *opts, stats_paired_result *res, stats_error *err)
{
    stats_gsl_off();
    stats_paired_opts defaults;
    if (!opts) {
        stats_paired_opts_default(&defaults);
        opts = &defaults;
    }
    memset(res, 0, sizeof *res);
    int status = check_args(a, na, b, nb, opts, err);
    if (status)
        return status;
    res->n = na;
    res->alpha = opts->alpha;
    double *d = malloc((na > 0 ? na : 1) * sizeof *d);
    if (!d)
        return STATS_ENOMEM;
    for (size_t i = 0; i < na; i++)
        d[i] = b[i] - a[i];
    status = stats_check_finite(d, na, "b - a", 2, err);
    if (!status)
        status = compute(d, opts, res);
    free(d);
    if (status) {
        size_t keep_n = res->n;
        memset(res, 0, sizeof *res);
        res->n = keep_n;
    }
    return status;
}
