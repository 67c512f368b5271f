/* Group-sequential boundaries by alpha spending on a test's exact null (stats.h:
 * stats_seq_rank_spending, stats_seq_flip_t): the signed-rank test's bounds from the law
 * of random signs, exactly by recursion over sign strings or by simulation, and the paired
 * t by sign flips of the observed differences.  Spending on a discrete law look by look
 * follows Jennison & Turnbull (2000), Group Sequential Methods, ch. 12; the data as one of
 * the sign vectors makes the flip test exact when the others are drawn at random (Hemerik
 * & Goeman 2018, Exact testing with random permutations, TEST 27). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "internal.h"
#include "stats.h"

/* budget comparisons forgive rounding in sums of exact probabilities */
#define BUDGET_SLACK 1e-12

static void spend_targets(int shape, double alpha, const size_t *n, size_t K, double *target)
{
    for (size_t k = 0; k < K; k++)
        target[k] = stats_seq_spend(shape, alpha, (double)n[k] / (double)n[K - 1]);
}

/* The least attainable deviation x (|2 W+ - T| >= x crosses) whose tail mass hist[x..T]
 * fits budget; T + 1 when none fits.  *tail gets that mass, *next the mass one attainable
 * value lower. */
static size_t pick_deviation(const double *hist, size_t T, double budget, double *tail,
                             double *next)
{
    size_t x = T + 1;
    double sum = 0.0;
    *next = 0.0;
    for (size_t D = T + 1; D-- > 0;) {
        if (hist[D] <= 0.0)
            continue;
        if (sum + hist[D] > budget) {
            *next = sum + hist[D];
            break;
        }
        sum += hist[D];
        x = D;
    }
    *tail = sum;
    return x;
}

/* The standardized bound halfway below deviation x (the next attainable one is x - 2). */
static double rank_bound(size_t x, size_t T, size_t nk)
{
    double nn = (double)nk;
    double sd = sqrt(nn * (nn + 1.0) * (2.0 * nn + 1.0) / 24.0);
    return x > T ? STATS_SEQ_Z_MAX : fmax(0.0, ((double)x - 1.0) / (2.0 * sd));
}

/* W+ of sign string s of length len: bit b set when the difference of |d|-rank b + 1 is
 * positive. */
static size_t string_wplus(uint32_t s)
{
    size_t w = 0;
    for (size_t b = 0; s; b++, s >>= 1)
        w += (s & 1u) * (b + 1);
    return w;
}

/* The exact design: p holds the null mass of each sign string not crossed yet.  Adding
 * difference i places it at a uniform rank r among i with a fair sign. */
static int rank_exact(const size_t *n, size_t K, const double *target,
                      stats_seq_rank_design *out)
{
    size_t nk = n[K - 1], T_max = nk * (nk + 1) / 2;
    double *p = malloc(((size_t)1 << nk) * sizeof *p);
    double *q = malloc(((size_t)1 << nk) * sizeof *q);
    double *hist = malloc((T_max + 1) * sizeof *hist);
    if (!p || !q || !hist) {
        free(p);
        free(q);
        free(hist);
        return STATS_ENOMEM;
    }
    p[0] = 1.0;
    double before = 0.0;
    size_t k = 0;
    for (size_t i = 1; i <= nk; i++) {
        size_t from = (size_t)1 << (i - 1);
        double w = 1.0 / (2.0 * (double)i);
        memset(q, 0, 2 * from * sizeof *q);
        for (uint32_t s = 0; s < from; s++) {
            double m = p[s] * w;
            if (m == 0.0)
                continue;
            for (size_t r = 0; r < i; r++) {
                uint32_t low = s & ((1u << r) - 1u), high = (s >> r) << (r + 1);
                q[low | high] += m;
                q[low | high | (1u << r)] += m;
            }
        }
        double *swap = p;
        p = q;
        q = swap;
        if (i != n[k])
            continue;
        size_t T = i * (i + 1) / 2;
        memset(hist, 0, (T + 1) * sizeof *hist);
        for (uint32_t s = 0; s < 2 * from; s++) {
            long dev = 2 * (long)string_wplus(s) - (long)T;
            hist[labs(dev)] += p[s];
        }
        double tail, next;
        size_t x = pick_deviation(hist, T, (target[k] - before) * (1.0 + BUDGET_SLACK) +
                                               BUDGET_SLACK * target[k], &tail, &next);
        out->bounds[k] = rank_bound(x, T, i);
        out->spent[k] = before + tail;
        out->next[k] = before + next;
        before += tail;
        for (uint32_t s = 0; s < 2 * from; s++)
            if ((size_t)labs(2 * (long)string_wplus(s) - (long)T) >= x)
                p[s] = 0.0;
        k++;
    }
    free(p);
    free(q);
    free(hist);
    return STATS_OK;
}

/* The simulated design from dev (studies, K) of null studies. */
static int rank_simulated(const size_t *n, size_t K, const double *target, const uint32_t *dev,
                          size_t studies, stats_seq_rank_design *out)
{
    size_t T_max = n[K - 1] * (n[K - 1] + 1) / 2;
    double *hist = malloc((T_max + 1) * sizeof *hist);
    unsigned char *alive = malloc(studies);
    if (!hist || !alive) {
        free(hist);
        free(alive);
        return STATS_ENOMEM;
    }
    memset(alive, 1, studies);
    double N = (double)studies;
    size_t crossed = 0;
    for (size_t k = 0; k < K; k++) {
        size_t T = n[k] * (n[k] + 1) / 2;
        memset(hist, 0, (T + 1) * sizeof *hist);
        for (size_t i = 0; i < studies; i++)
            hist[dev[i * K + k]] += alive[i];
        double allowed = floor(target[k] * N + 1e-9) - (double)crossed, tail, next;
        size_t x = pick_deviation(hist, T, allowed, &tail, &next);
        out->bounds[k] = rank_bound(x, T, n[k]);
        out->spent[k] = ((double)crossed + tail) / N;
        out->next[k] = ((double)crossed + next) / N;
        for (size_t i = 0; i < studies; i++)
            if (alive[i] && dev[i * K + k] >= x) {
                alive[i] = 0;
                crossed++;
            }
    }
    free(hist);
    free(alive);
    return STATS_OK;
}

static int check_shape_alpha(int shape, double alpha, int arg, stats_error *err)
{
    return stats_seq_check_shape(shape, arg, err) || stats_check_alpha(alpha, arg, err);
}

int stats_seq_rank_spending(const size_t *n, size_t K, const stats_seq_target *targets,
                            size_t ntargets, size_t studies, uint64_t seed,
                            stats_seq_rank_design *out, stats_error *err)
{
    stats_gsl_off();
    if (stats_seq_check_looks(n, K, err))
        return STATS_EINVAL;
    for (size_t j = 0; j < ntargets; j++) {
        if (targets[j].test != STATS_SEQ_SIGNED_RANK)
            return stats_fail(err, 2, "targets[%zu].test: spending is for signed_rank", j + 1);
        if (check_shape_alpha(targets[j].shape, targets[j].alpha, 2, err))
            return STATS_EINVAL;
    }
    int exact = n[K - 1] <= STATS_SEQ_EXACT_N;
    if (!exact && (studies < 1 || studies > STATS_SEQ_MAX_STUDIES))
        return stats_fail(err, 3, "studies: must be 1 to %d, got %zu", STATS_SEQ_MAX_STUDIES,
                          studies);
    uint32_t *dev = NULL;
    if (!exact) {
        dev = malloc(studies * K * sizeof *dev);
        if (!dev)
            return STATS_ENOMEM;
        int status = stats_seq_null_ranks(n, K, studies, seed, dev);
        if (status) {
            free(dev);
            return status;
        }
    }
    int status = STATS_OK;
    for (size_t j = 0; j < ntargets && !status; j++) {
        memset(&out[j], 0, sizeof out[j]);
        out[j].exact = exact;
        spend_targets(targets[j].shape, targets[j].alpha, n, K, out[j].target);
        status = exact ? rank_exact(n, K, out[j].target, &out[j])
                       : rank_simulated(n, K, out[j].target, dev, studies, &out[j]);
    }
    free(dev);
    return status;
}

double *stats_seq_flip_signs(size_t nk)
{
    double *signs = malloc(nk * STATS_SEQ_FLIPS * sizeof *signs);
    gsl_rng *r = stats_rng_alloc(1, STATS_STREAM_SEQ_FLIP);
    if (!signs || !r) {
        free(signs);
        gsl_rng_free(r);
        return NULL;
    }
    /* difference by difference, 32 vectors a draw: sign (i, j) does not depend on n_K */
    for (size_t j = 0; j < nk; j++) {
        double *row = signs + j * STATS_SEQ_FLIPS;
        row[0] = 1.0;
        unsigned long bits = 0;
        for (size_t i = 1; i < STATS_SEQ_FLIPS; i++) {
            if ((i - 1) % 32 == 0)
                bits = gsl_rng_get(r);
            row[i] = bits & 1ul ? 1.0 : -1.0;
            bits >>= 1;
        }
    }
    gsl_rng_free(r);
    return signs;
}

void stats_seq_flip_sums(const double *signs, const double *d, const size_t *n, size_t K,
                         double *sums)
{
    double *acc = sums;
    memset(acc, 0, STATS_SEQ_FLIPS * sizeof *acc);
    size_t k = 0;
    for (size_t j = 0; j < n[K - 1]; j++) {
        const double *row = signs + j * STATS_SEQ_FLIPS;
        for (size_t i = 0; i < STATS_SEQ_FLIPS; i++)
            acc[i] += row[i] * d[j];
        if (j + 1 == n[k] && ++k < K) {
            memcpy(acc + STATS_SEQ_FLIPS, acc, STATS_SEQ_FLIPS * sizeof *acc);
            acc += STATS_SEQ_FLIPS;
        }
    }
}

void stats_seq_flip_allowed(int shape, double alpha, const size_t *n, size_t K,
                            size_t *allowed)
{
    double target[STATS_SEQ_MAX_LOOKS];
    spend_targets(shape, alpha, n, K, target);
    for (size_t k = 0; k < K; k++)
        allowed[k] = (size_t)floor(target[k] * STATS_SEQ_FLIPS + 1e-9);
}

size_t stats_seq_flip_walk(const double *sums, size_t K, const size_t *allowed, int stop_early,
                           double *buf, unsigned char *alive, double *v, size_t *crossed)
{
    memset(alive, 1, STATS_SEQ_FLIPS);
    size_t gone = 0, first = K;
    for (size_t k = 0; k < K; k++) {
        const double *s = sums + k * STATS_SEQ_FLIPS;
        size_t count = 0;
        for (size_t i = 0; i < STATS_SEQ_FLIPS; i++)
            if (alive[i])
                buf[count++] = fabs(s[i]);
        size_t room = allowed[k] > gone ? allowed[k] - gone : 0;
        /* the (room + 1)-th largest |S| of the vectors alive: those above it cross */
        double vk = room >= count ? -1.0 : stats_select_kth(buf, count, count - 1 - room);
        for (size_t i = 0; i < STATS_SEQ_FLIPS; i++)
            if (alive[i] && fabs(s[i]) > vk) {
                alive[i] = 0;
                gone++;
                if (i == 0 && first == K)
                    first = k;
            }
        if (v)
            v[k] = vk;
        if (crossed)
            crossed[k] = gone;
        if (stop_early && first < K)
            return first;
    }
    return first;
}

/* The t of a comparison whose first n differences have sum of squares ss and |sum| s. */
static double t_of_sum(double s, double ss, size_t n)
{
    double nn = (double)n, var = (ss - s * s / nn) / (nn - 1.0);
    if (s <= 0.0)
        return 0.0;
    return var > 0.0 ? s / nn / sqrt(var / nn) : DBL_MAX;
}

int stats_seq_flip_t(const double *d, const size_t *n, size_t K, size_t looks, int shape,
                     double alpha, stats_seq_flip_result *out, stats_error *err)
{
    stats_gsl_off();
    if (stats_seq_check_looks(n, K, err))
        return STATS_EINVAL;
    if (n[0] < 2)
        return stats_fail(err, 2, "n[1]: the t test needs 2 differences at the first look");
    if (looks < 1 || looks > K)
        return stats_fail(err, 2, "looks: must be 1 to %zu, got %zu", K, looks);
    if (stats_check_finite(d, n[looks - 1], "d", 1, err) ||
        check_shape_alpha(shape, alpha, 3, err))
        return STATS_EINVAL;
    double *signs = stats_seq_flip_signs(n[looks - 1]);
    double *sums = malloc((looks + 1) * STATS_SEQ_FLIPS * sizeof *sums);
    unsigned char *alive = malloc(STATS_SEQ_FLIPS);
    if (!signs || !sums || !alive) {
        free(signs);
        free(sums);
        free(alive);
        return STATS_ENOMEM;
    }
    double *buf = sums + looks * STATS_SEQ_FLIPS;
    memset(out, 0, sizeof *out);
    stats_seq_flip_allowed(shape, alpha, n, K, out->allowed);
    stats_seq_flip_sums(signs, d, n, looks, sums);
    double v[STATS_SEQ_MAX_LOOKS];
    out->reject_at = stats_seq_flip_walk(sums, looks, out->allowed, 0, buf, alive, v,
                                         out->crossed);
    double ss = 0.0;
    size_t k = 0;
    for (size_t j = 0; j < n[looks - 1]; j++) {
        ss += d[j] * d[j];
        if (j + 1 == n[k]) {
            out->bounds[k] = t_of_sum(v[k], ss, n[k]);
            out->z[k] = stats_seq_t_as_z(out->bounds[k], (double)n[k] - 1.0);
            double s0 = sums[k * STATS_SEQ_FLIPS];
            out->t[k] = copysign(t_of_sum(fabs(s0), ss, n[k]), s0);
            k++;
        }
    }
    free(signs);
    free(sums);
    free(alive);
    return STATS_OK;
}
