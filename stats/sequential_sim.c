/* Group-sequential boundaries for few paired differences (stats.h: stats_seq_calibrate,
 * stats_seq_simulate): the z, paired t and signed-rank statistics at each look of a
 * simulated study, the constant of a shape calibrated on simulated null studies, and the
 * chance that a rule rejects (a constant, given bounds, or the sign-flip t), alone or in a
 * Bonferroni family. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>

#include "internal.h"
#include "stats.h"

typedef struct {
    double mag;
    size_t i;
} mag_index;

/* The buffers of one simulated comparison of n_K differences. */
typedef struct {
    double *d;                 /* (n_K) the differences */
    mag_index *by_mag;         /* (n_K) |d| with its index, sorted by |d| */
    size_t *rank;              /* (n_K) the rank of |d_i| among all n_K, 1-based */
    size_t *all, *pos;         /* (n_K + 1) Fenwick trees: inserted, inserted positive */
    double stat[3][STATS_SEQ_MAX_LOOKS]; /* |statistic| per test and look */
    double dev[STATS_SEQ_MAX_LOOKS];     /* |2 W+ - n_k (n_k + 1) / 2| per look */
    stats_seq_flips flips;               /* sign flips (stats_seq_flip_*), when asked */
} seq_work;

static void work_free(seq_work *w)
{
    free(w->d);
    free(w->by_mag);
    free(w->rank);
    stats_seq_flips_free(&w->flips);
}

/* flips: also the sign-flip buffers for K looks. */
static int work_alloc(seq_work *w, size_t nk, size_t K, int flips)
{
    memset(w, 0, sizeof *w);
    w->d = malloc(nk * sizeof *w->d);
    w->by_mag = malloc(nk * sizeof *w->by_mag);
    w->rank = malloc((3 * nk + 2) * sizeof *w->rank);
    if (!w->d || !w->by_mag || !w->rank) {
        free(w->d);
        free(w->by_mag);
        free(w->rank);
        return STATS_ENOMEM;
    }
    w->all = w->rank + nk;
    w->pos = w->all + nk + 1;
    if (flips && stats_seq_flips_alloc(&w->flips, K)) {
        work_free(w);
        return STATS_ENOMEM;
    }
    return STATS_OK;
}

static void draw(gsl_rng *r, int dist, double shift, double *d, size_t nk)
{
    for (size_t i = 0; i < nk; i++)
        d[i] = shift + (dist == STATS_SEQ_T3 ? gsl_ran_tdist(r, 3.0) / sqrt(3.0)
                                             : gsl_ran_gaussian_ziggurat(r, 1.0));
}

static void sum_moments(const double *d, const size_t *n, size_t K, seq_work *w)
{
    double sum = 0.0, mean = 0.0, m2 = 0.0; /* Welford's running mean and sum of squares */
    size_t k = 0;
    for (size_t i = 0; i < n[K - 1]; i++) {
        double delta = d[i] - mean;
        sum += d[i];
        mean += delta / (double)(i + 1);
        m2 += delta * (d[i] - mean);
        if (i + 1 == n[k]) {
            double nn = (double)n[k];
            w->stat[STATS_SEQ_Z][k] = fabs(sum) / sqrt(nn);
            w->stat[STATS_SEQ_T][k] = nn > 1.0 ? fabs(mean) / sqrt(m2 / (nn - 1.0) / nn) : 0.0;
            k++;
        }
    }
}

static int cmp_mag(const void *x, const void *y)
{
    double a = ((const mag_index *)x)->mag, b = ((const mag_index *)y)->mag;
    return (a > b) - (a < b);
}

static size_t fenwick_sum(const size_t *tree, size_t i)
{
    size_t s = 0;
    for (; i > 0; i -= i & -i)
        s += tree[i];
    return s;
}

static void fenwick_add(size_t *tree, size_t nk, size_t i)
{
    for (; i <= nk; i += i & -i)
        tree[i]++;
}

/* W+ of the first n_k differences for each k, standardized.  Adding a difference whose |d|
 * ranks g among all n_K raises the rank of every earlier one above it by 1 (so W+ by the
 * positive ones among them) and, when positive, adds its own rank among those so far. */
static void signed_ranks(const size_t *n, size_t K, seq_work *w)
{
    size_t nk = n[K - 1];
    for (size_t i = 0; i < nk; i++)
        w->by_mag[i] = (mag_index){fabs(w->d[i]), i};
    qsort(w->by_mag, nk, sizeof *w->by_mag, cmp_mag);
    for (size_t r = 0; r < nk; r++)
        w->rank[w->by_mag[r].i] = r + 1;
    memset(w->all, 0, 2 * (nk + 1) * sizeof(size_t));
    double wplus = 0.0;
    size_t positives = 0, k = 0;
    for (size_t i = 0; i < nk; i++) {
        size_t g = w->rank[i];
        wplus += (double)(positives - fenwick_sum(w->pos, g));
        if (w->d[i] > 0.0) {
            wplus += (double)(fenwick_sum(w->all, g) + 1);
            fenwick_add(w->pos, nk, g);
            positives++;
        }
        fenwick_add(w->all, nk, g);
        if (i + 1 == n[k]) {
            double nn = (double)n[k];
            double mu = nn * (nn + 1.0) / 4.0;
            double sd = sqrt(nn * (nn + 1.0) * (2.0 * nn + 1.0) / 24.0);
            w->stat[STATS_SEQ_SIGNED_RANK][k] = fabs(wplus - mu) / sd;
            w->dev[k] = fabs(2.0 * wplus - nn * (nn + 1.0) / 2.0);
            k++;
        }
    }
}

/* One comparison with this key: the |statistics| of the tests in `need` (bits 1 << test)
 * at every look. */
static void one_comparison(gsl_rng *r, int dist, double shift, const size_t *n, size_t K,
                           unsigned need, uint64_t key, seq_work *w)
{
    draw(r, dist, shift, w->d, n[K - 1]);
    if (need & (1u << STATS_SEQ_Z | 1u << STATS_SEQ_T))
        sum_moments(w->d, n, K, w);
    if (need & 1u << STATS_SEQ_SIGNED_RANK)
        signed_ranks(n, K, w);
    if (need & 1u << STATS_SEQ_T_FLIP)
        stats_seq_flip_draw(&w->flips, key, w->d, n, K);
}

int stats_seq_check_looks(const size_t *n, size_t K, stats_error *err)
{
    if (K < 1 || K > STATS_SEQ_MAX_LOOKS)
        return stats_fail(err, 1, "looks: must be 1 to %d, got %zu", STATS_SEQ_MAX_LOOKS, K);
    for (size_t k = 0; k < K; k++)
        if (n[k] < 1 || (k && n[k] <= n[k - 1]))
            return stats_fail(err, 1, "n[%zu]: look sizes must increase from 1, got %zu", k + 1,
                              n[k]);
    if (n[K - 1] > STATS_SEQ_MAX_N)
        return stats_fail(err, 1, "n[%zu]: at most %d differences, got %zu", K, STATS_SEQ_MAX_N,
                          n[K - 1]);
    return STATS_OK;
}

/* flip: STATS_SEQ_T_FLIP allowed too. */
static int check_test(int test, int shape, const size_t *n, int arg, int flip, stats_error *err)
{
    if (test != STATS_SEQ_Z && test != STATS_SEQ_T && test != STATS_SEQ_SIGNED_RANK &&
        !(flip && test == STATS_SEQ_T_FLIP))
        return stats_fail(err, arg, "test: must be z, t%s or signed rank, got %d",
                          flip ? ", t by sign flips" : "", test);
    if (stats_seq_check_shape(shape, arg, err))
        return STATS_EINVAL;
    if ((test == STATS_SEQ_T || test == STATS_SEQ_T_FLIP) && n[0] < 2)
        return stats_fail(err, 1, "n[1]: the t test needs 2 differences at the first look");
    return STATS_OK;
}

static int check_studies(size_t studies, int arg, stats_error *err)
{
    if (studies < 1 || studies > STATS_SEQ_MAX_STUDIES)
        return stats_fail(err, arg, "studies: must be 1 to %d, got %zu", STATS_SEQ_MAX_STUDIES,
                          studies);
    return STATS_OK;
}

static void look_factors(int shape, const size_t *n, size_t K, double *factor)
{
    double t[STATS_SEQ_MAX_LOOKS];
    for (size_t k = 0; k < K; k++)
        t[k] = (double)n[k] / (double)n[K - 1];
    stats_seq_shape(shape, t, K, factor);
}

double stats_seq_t_as_z(double abs_t, double df)
{
    double q = gsl_cdf_tdist_Q(abs_t, df);
    return q > 0.0 ? gsl_cdf_ugaussian_Qinv(q) : STATS_SEQ_Z_MAX;
}

int stats_seq_test_bounds(int test, int shape, const size_t *n, size_t K, double c,
                          double *bounds, stats_error *err)
{
    stats_gsl_off();
    if (stats_seq_check_looks(n, K, err) || check_test(test, shape, n, 1, 0, err))
        return STATS_EINVAL;
    if (!(isfinite(c) && c > 0.0))
        return stats_fail(err, 2, "c: must be finite and > 0, got %g", c);
    double factor[STATS_SEQ_MAX_LOOKS];
    look_factors(shape, n, K, factor);
    for (size_t k = 0; k < K; k++) {
        double z = c * factor[k], q = gsl_cdf_ugaussian_Q(z);
        bounds[k] = test != STATS_SEQ_T ? z
                    : q > 0.0           ? gsl_cdf_tdist_Qinv(q, (double)n[k] - 1.0)
                                        : DBL_MAX;
        if (!isfinite(bounds[k])) /* a p-value whose t quantile is beyond a double */
            bounds[k] = DBL_MAX;
    }
    return STATS_OK;
}

static int cmp_desc(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a < b) - (a > b);
}

/* C from the studies' M (sorted here, descending): see stats.h. */
static void constant_from(double *m, size_t studies, double alpha, stats_seq_calibration *out)
{
    qsort(m, studies, sizeof *m, cmp_desc);
    size_t allowed = (size_t)floor(alpha * (double)studies + 1e-9);
    size_t first = allowed; /* 0-based index of the first study C must not reach */
    while (first > 0 && m[first - 1] == m[allowed])
        first--;
    size_t end = allowed; /* one past the tie block of m[allowed] */
    while (end < studies && m[end] == m[allowed])
        end++;
    if (first == 0) {
        out->c = m[0] + 1.0;
        out->error = 0.0;
    } else {
        out->c = 0.5 * (m[first - 1] + m[allowed]);
        out->error = (double)first / (double)studies;
    }
    out->next_error = (double)end / (double)studies;
}

int stats_seq_calibrate(const size_t *n, size_t K, const stats_seq_target *targets,
                        size_t ntargets, size_t studies, uint64_t seed,
                        stats_seq_calibration *out, stats_error *err)
{
    stats_gsl_off();
    if (stats_seq_check_looks(n, K, err) || check_studies(studies, 3, err))
        return STATS_EINVAL;
    unsigned need = 0;
    for (size_t j = 0; j < ntargets; j++) {
        if (check_test(targets[j].test, targets[j].shape, n, 2, 0, err) ||
            stats_check_alpha(targets[j].alpha, 2, err))
            return STATS_EINVAL;
        if (targets[j].alpha * (double)studies < 10.0)
            return stats_fail(err, 3, "studies: alpha N must be >= 10 (alpha %g, N %zu)",
                              targets[j].alpha, studies);
        need |= 1u << targets[j].test;
    }
    double *m = malloc((ntargets ? ntargets : 1) * studies * sizeof *m);
    seq_work w;
    gsl_rng *r = stats_rng_alloc(seed, STATS_STREAM_SEQ_CALIBRATE);
    if (!m || !r || work_alloc(&w, n[K - 1], K, 0)) {
        free(m);
        gsl_rng_free(r);
        return STATS_ENOMEM;
    }
    double factor[2][STATS_SEQ_MAX_LOOKS];
    look_factors(STATS_SEQ_OBF, n, K, factor[STATS_SEQ_OBF]);
    look_factors(STATS_SEQ_POCOCK, n, K, factor[STATS_SEQ_POCOCK]);
    double equiv[3][STATS_SEQ_MAX_LOOKS];
    for (size_t i = 0; i < studies; i++) {
        one_comparison(r, STATS_SEQ_NORMAL, 0.0, n, K, need, 0, &w);
        for (int test = 0; test < 3; test++)
            for (size_t k = 0; k < K && (need & 1u << test); k++)
                equiv[test][k] = test == STATS_SEQ_T
                                     ? stats_seq_t_as_z(w.stat[test][k], (double)n[k] - 1.0)
                                     : w.stat[test][k];
        for (size_t j = 0; j < ntargets; j++) {
            double top = 0.0;
            for (size_t k = 0; k < K; k++)
                top = fmax(top, equiv[targets[j].test][k] / factor[targets[j].shape][k]);
            m[j * studies + i] = top;
        }
    }
    int status = STATS_OK;
    for (size_t j = 0; j < ntargets && !status; j++) {
        memset(&out[j], 0, sizeof out[j]);
        constant_from(m + j * studies, studies, targets[j].alpha, &out[j]);
        status = stats_seq_test_bounds(targets[j].test, targets[j].shape, n, K, out[j].c,
                                       out[j].bounds, err);
    }
    work_free(&w);
    gsl_rng_free(r);
    free(m);
    return status;
}

/* The first look (0-based) at which the statistics of the comparison with this key reach
 * rule's bounds (bounds: the rule's own or its constant's), or K. */
static size_t first_rejection(const double *stat, const stats_seq_rule *rule,
                              const double *bounds, size_t K, uint64_t key)
{
    for (size_t k = 0; k < K; k++) {
        if (stat[k] >= bounds[k])
            return k;
        if (rule->gamma && stat[k] >= rule->atom[k] && stats_seq_draw(key, k) < rule->gamma[k])
            return k;
    }
    return K;
}

uint64_t stats_seq_sim_key(uint64_t seed, uint64_t j)
{
    uint64_t z = seed * 0x9e3779b97f4a7c15u + j + 1;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static int check_sim_opts(const stats_seq_sim_opts *o, stats_error *err)
{
    if (o->dist != STATS_SEQ_NORMAL && o->dist != STATS_SEQ_T3)
        return stats_fail(err, 3, "dist: must be normal or t3, got %d", o->dist);
    if (o->m < 1 || o->m > STATS_SEQ_MAX_M)
        return stats_fail(err, 3, "m: must be 1 to %d, got %zu", STATS_SEQ_MAX_M, o->m);
    if (!isfinite(o->shift) || fabs(o->shift) > 100.0)
        return stats_fail(err, 3, "shift: must be finite, |shift| <= 100, got %g", o->shift);
    return check_studies(o->studies, 3, err);
}

/* A rule's atom and gamma: both or neither, only beside bounds, 0 <= gamma_k <= 1. */
static int check_atom(const stats_seq_rule *rule, size_t K, stats_error *err)
{
    if (!rule->atom != !rule->gamma || (rule->gamma && !rule->bounds))
        return stats_fail(err, 2, "atom, gamma: both or neither, and only with bounds");
    if (!rule->gamma)
        return STATS_OK;
    if (stats_check_finite(rule->atom, K, "atom", 2, err))
        return STATS_EINVAL;
    for (size_t k = 0; k < K; k++)
        if (!(rule->gamma[k] >= 0.0 && rule->gamma[k] <= 1.0))
            return stats_fail(err, 2, "gamma[%zu]: must be 0 to 1, got %g", k + 1,
                              rule->gamma[k]);
    return STATS_OK;
}

int stats_seq_simulate(const size_t *n, size_t K, const stats_seq_rule *rules, size_t nrules,
                       const stats_seq_sim_opts *opts, stats_seq_sim_result *out,
                       stats_error *err)
{
    stats_gsl_off();
    if (stats_seq_check_looks(n, K, err) || check_sim_opts(opts, err))
        return STATS_EINVAL;
    unsigned need = 0;
    for (size_t j = 0; j < nrules; j++) {
        if (check_test(rules[j].test, rules[j].shape, n, 2, 1, err) ||
            (rules[j].test == STATS_SEQ_T_FLIP && stats_check_alpha(rules[j].alpha, 2, err)) ||
            check_atom(&rules[j], K, err))
            return STATS_EINVAL;
        need |= 1u << rules[j].test;
    }
    double *bounds = malloc((nrules ? nrules : 1) * K * sizeof *bounds);
    size_t *allowed = malloc((nrules ? nrules : 1) * K * sizeof *allowed);
    uint64_t *counts = calloc((nrules ? nrules : 1) * (K + 2), sizeof *counts);
    int *any = malloc((nrules ? nrules : 1) * sizeof *any);
    seq_work w;
    gsl_rng *r = stats_rng_alloc(opts->seed, STATS_STREAM_SEQ_SIMULATE);
    if (!bounds || !allowed || !counts || !any || !r ||
        work_alloc(&w, n[K - 1], K, (need >> STATS_SEQ_T_FLIP) & 1u)) {
        free(bounds);
        free(allowed);
        free(counts);
        free(any);
        gsl_rng_free(r);
        return STATS_ENOMEM;
    }
    int status = STATS_OK;
    for (size_t j = 0; j < nrules && !status; j++) {
        const stats_seq_rule *rj = &rules[j];
        if (rj->test == STATS_SEQ_T_FLIP)
            stats_seq_flip_allowed(rj->shape, rj->alpha, n, K, allowed + j * K);
        else if (!rj->bounds)
            status = stats_seq_test_bounds(rj->test, rj->shape, n, K, rj->c, bounds + j * K, err);
        else if (!stats_check_finite(rj->bounds, K, "bounds", 2, err))
            memcpy(bounds + j * K, rj->bounds, K * sizeof *bounds);
        else
            status = STATS_EINVAL;
    }
    /* counts per rule: K looks, then the studies that reject, then the differences used */
    for (size_t i = 0; i < opts->studies && !status; i++) {
        memset(any, 0, (nrules ? nrules : 1) * sizeof *any);
        for (size_t cmp = 0; cmp < opts->m; cmp++) {
            uint64_t key = stats_seq_sim_key(opts->seed, (uint64_t)(i * opts->m + cmp));
            one_comparison(r, opts->dist, opts->shift, n, K, need, key, &w);
            for (size_t j = 0; j < nrules; j++) {
                uint64_t *cj = counts + j * (K + 2);
                size_t k = rules[j].test == STATS_SEQ_T_FLIP
                               ? stats_seq_flip_walk(&w.flips, K, allowed + j * K, 1, NULL, NULL)
                               : first_rejection(w.stat[rules[j].test], &rules[j],
                                                 bounds + j * K, K, key);
                if (k < K) {
                    cj[k]++;
                    any[j] = 1;
                }
                cj[K + 1] += k < K ? n[k] : n[K - 1];
            }
        }
        for (size_t j = 0; j < nrules; j++)
            counts[j * (K + 2) + K] += (uint64_t)any[j];
    }
    double studies = (double)opts->studies, comparisons = studies * (double)opts->m;
    for (size_t j = 0; j < nrules && !status; j++) {
        const uint64_t *cj = counts + j * (K + 2);
        stats_seq_sim_result *o = &out[j];
        memset(o, 0, sizeof *o);
        o->rejections = cj[K];
        o->reject = (double)cj[K] / studies;
        o->se = sqrt(o->reject * (1.0 - o->reject) / studies);
        for (size_t k = 0; k < K; k++)
            o->stop[k] = (double)cj[k] / comparisons;
        o->expected_n = (double)cj[K + 1] / comparisons;
    }
    work_free(&w);
    gsl_rng_free(r);
    free(any);
    free(counts);
    free(allowed);
    free(bounds);
    return status;
}

int stats_seq_null_ranks(const size_t *n, size_t K, size_t studies, uint64_t seed,
                         uint32_t *dev)
{
    seq_work w;
    gsl_rng *r = stats_rng_alloc(seed, STATS_STREAM_SEQ_SPEND);
    if (!r || work_alloc(&w, n[K - 1], K, 0)) {
        gsl_rng_free(r);
        return STATS_ENOMEM;
    }
    for (size_t i = 0; i < studies; i++) {
        one_comparison(r, STATS_SEQ_NORMAL, 0.0, n, K, 1u << STATS_SEQ_SIGNED_RANK, 0, &w);
        for (size_t k = 0; k < K; k++)
            dev[i * K + k] = (uint32_t)w.dev[k];
    }
    work_free(&w);
    gsl_rng_free(r);
    return STATS_OK;
}
