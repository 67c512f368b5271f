/* Robust companions of a paired comparison (stats.h: stats_robust): the Hodges-Lehmann
 * estimate with the exact Wilcoxon signed-rank interval, the exact signed-rank test and
 * the sign test.  Exploratory statistics: nothing of the decision rule reads them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "internal.h"
#include "stats.h"

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The null distribution of the signed-rank sum for the given doubled ranks r[m] (integers,
 * so midranks stay exact): prob[s] = P(sum of the ranks with a + sign = s / 2), s from 0
 * to total, every sign pattern equally likely.  prob has total + 1 entries. */
static void signed_rank_dist(const unsigned *r, size_t m, size_t total, double *prob)
{
    memset(prob, 0, (total + 1) * sizeof *prob);
    prob[0] = 1.0;
    size_t reach = 0;
    for (size_t i = 0; i < m; i++) {
        for (size_t s = reach + r[i] + 1; s-- > 0;) {
            double with = s >= r[i] ? prob[s - r[i]] : 0.0;
            prob[s] = 0.5 * (prob[s] + with);
        }
        reach += r[i];
    }
}

/* The two-sided p of an observed statistic w (doubled) under prob: twice the smaller
 * tail, at most 1 (scipy's exact convention). */
static double two_sided(const double *prob, size_t total, size_t w)
{
    double lower = 0.0, upper = 0.0;
    for (size_t s = 0; s <= total; s++) {
        if (s <= w)
            lower += prob[s];
        if (s >= w)
            upper += prob[s];
    }
    double p = 2.0 * fmin(lower, upper);
    return p > 1.0 ? 1.0 : p;
}

typedef struct {
    double mag;
    int positive;
} signed_mag;

static int cmp_mag(const void *x, const void *y)
{
    return cmp_double(&((const signed_mag *)x)->mag, &((const signed_mag *)y)->mag);
}

/* The signed-rank test on the non-zero differences: |d| ranked with midranks for ties
 * (within tol of the tie group's smallest), the exact conditional distribution over the
 * 2^m sign patterns. */
static int signed_rank(const double *d, size_t n, double tol, stats_robust_result *res)
{
    size_t m = 0;
    signed_mag *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return STATS_ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (fabs(d[i]) > tol)
            v[m++] = (signed_mag){fabs(d[i]), d[i] > 0.0};
    if (m == 0) {
        free(v);
        return STATS_OK;
    }
    qsort(v, m, sizeof *v, cmp_mag);
    unsigned *r = malloc(m * sizeof *r);
    size_t total = m * (m + 1);
    double *prob = malloc((total + 1) * sizeof *prob);
    if (!r || !prob) {
        free(r);
        free(prob);
        free(v);
        return STATS_ENOMEM;
    }
    /* the doubled midrank of a tie group: its first + last rank (1-based) */
    size_t w = 0;
    for (size_t i = 0; i < m;) {
        size_t j = i;
        while (j + 1 < m && v[j + 1].mag - v[i].mag <= tol)
            j++;
        if (j > i)
            res->ties = 1;
        for (size_t k = i; k <= j; k++) {
            r[k] = (unsigned)(i + 1 + j + 1);
            if (v[k].positive)
                w += r[k];
        }
        i = j + 1;
    }
    signed_rank_dist(r, m, total, prob);
    res->w_plus = 0.5 * (double)w;
    res->p_wilcoxon = two_sided(prob, total, w);
    res->have_p_wilcoxon = 1;
    free(prob);
    free(r);
    free(v);
    return STATS_OK;
}

/* The Hodges-Lehmann estimate and the signed-rank test inverted: at a shift theta off
 * every Walsh average, d - theta has no zeros or ties and T+(theta) = #{Walsh averages >
 * theta}, whose null distribution is that of ranks 1..n.  The test accepts theta when
 * c <= T+ <= M - c, c the least count with P(T+ <= c) > alpha / 2, M = n (n + 1) / 2:
 * the interval [W_(c), W_(M + 1 - c)] of the sorted Walsh averages, at confidence
 * 1 - 2 P(T+ <= c - 1).  No interval when c = 0 (2^(1 - n) > alpha). */
static int walsh(const double *d, size_t n, double alpha, stats_robust_result *res)
{
    size_t M = n * (n + 1) / 2;
    double *w = malloc(M * sizeof *w);
    if (!w)
        return STATS_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i; j < n; j++)
            w[k++] = 0.5 * (d[i] + d[j]);
    qsort(w, M, sizeof *w, cmp_double);
    res->hl = M % 2 ? w[M / 2] : 0.5 * (w[M / 2 - 1] + w[M / 2]);
    unsigned *r = malloc(n * sizeof *r);
    double *prob = malloc((2 * M + 1) * sizeof *prob);
    if (!r || !prob) {
        free(r);
        free(prob);
        free(w);
        return STATS_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        r[i] = (unsigned)(2 * (i + 1));
    signed_rank_dist(r, n, 2 * M, prob);
    /* cdf over the undoubled statistic: prob at even indices */
    double cdf = 0.0, below = 0.0;
    size_t c = 0;
    for (; c <= M; c++) {
        cdf += prob[2 * c];
        if (cdf > 0.5 * alpha)
            break;
        below = cdf;
    }
    if (c >= 1 && c <= M + 1 - c) {
        res->ci[0] = w[c - 1];
        res->ci[1] = w[M - c];
        res->ci_level = 1.0 - 2.0 * below;
        res->have_ci = 1;
    }
    free(prob);
    free(r);
    free(w);
    return STATS_OK;
}

int stats_robust(const double *a, size_t na, const double *b, size_t nb, double alpha,
                 stats_robust_result *res, stats_error *err)
{
    stats_gsl_off();
    memset(res, 0, sizeof *res);
    int status;
    if (na != nb)
        return stats_fail(err, 2, "b: length %zu differs from the length %zu of a", nb, na);
    if ((status = stats_check_finite(a, na, "a", 1, err)) ||
        (status = stats_check_finite(b, nb, "b", 2, err)) ||
        (status = stats_check_alpha(alpha, 3, err)))
        return status;
    if (na > STATS_ROBUST_MAX_N)
        return stats_fail(err, 1, "a: at most %d pairs, got %zu", STATS_ROBUST_MAX_N, na);
    size_t n = na;
    res->n = n;
    res->alpha = alpha;
    if (n == 0)
        return STATS_OK;
    double *d = malloc(n * sizeof *d);
    if (!d)
        return STATS_ENOMEM;
    double max_abs = 0.0;
    for (size_t i = 0; i < n; i++) {
        d[i] = b[i] - a[i];
        max_abs = fmax(max_abs, fabs(d[i]));
    }
    status = stats_check_finite(d, n, "b - a", 2, err);
    /* zero and tied within STATS_TIE_RTOL of the largest |d|, as the sign flip counts ties */
    double tol = STATS_TIE_RTOL * max_abs;
    for (size_t i = 0; i < n && !status; i++) {
        if (d[i] > tol)
            res->positive++;
        else if (d[i] < -tol)
            res->negative++;
        else
            res->zeros++;
    }
    res->have_hl = 1;
    if (!status)
        status = walsh(d, n, alpha, res);
    if (!status)
        status = signed_rank(d, n, tol, res);
    size_t m = res->positive + res->negative;
    if (!status && m > 0) {
        unsigned k = (unsigned)(res->positive < res->negative ? res->positive : res->negative);
        double p = 2.0 * gsl_cdf_binomial_P(k, 0.5, (unsigned)m);
        if (!isfinite(p))
            status = STATS_ENUM;
        res->p_sign = p > 1.0 ? 1.0 : p;
        res->have_p_sign = 1;
    }
    free(d);
    if (status) {
        memset(res, 0, sizeof *res);
        return status;
    }
    return STATS_OK;
}
