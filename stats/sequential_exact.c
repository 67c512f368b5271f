/* Group-sequential boundaries by alpha spending on a test's exact null (stats.h:
 * stats_seq_rank_spending, stats_seq_flip_t): the signed-rank test's bounds from the law
 * of random signs, exactly by recursion over sign strings or by simulation, and the paired
 * t by sign flips of the observed differences.  Both spend each look's budget exactly, by
 * a draw from the comparison's own PCG stream where the law is discrete: the signed-rank
 * test at its boundary atom, the sign flips among vectors of equal |S|. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/pcg.h"
#include "internal.h"
#include "stats.h"

static void spend_targets(int shape, double alpha, const size_t *n, size_t K, double *target)
{
    for (size_t k = 0; k < K; k++)
        target[k] = stats_seq_spend(shape, alpha, (double)n[k] / (double)n[K - 1]);
}

/* Look k's boundary atom in hist, the null mass of each deviation |2 W+ - T| not crossed
 * yet: the largest deviation a whose tail hist[a..T] exceeds budget.  *above gets the
 * mass of hist[a + 1..T], which crosses whole, and *gamma the share of hist[a] that
 * spends the rest.  T + 1 when the whole mass fits: every deviation crosses. */
static size_t pick_atom(const double *hist, size_t T, double budget, double *above,
                        double *gamma)
{
    double sum = 0.0;
    *gamma = 0.0;
    for (size_t D = T + 1; D-- > 0;) {
        if (hist[D] <= 0.0)
            continue;
        if (sum + hist[D] > budget) {
            *above = sum;
            *gamma = fmin(1.0, fmax(0.0, (budget - sum) / hist[D]));
            return D;
        }
        sum += hist[D];
    }
    *above = sum;
    return T + 1;
}

/* Look k of design out from its atom a among deviations up to T of n_k differences, on
 * the standardized W+ scale: halfway above a (the next attainable deviation is a + 2) and
 * halfway below it.  before: the chance crossed before look k; mass: hist[a]. */
static double set_look(stats_seq_rank_design *out, size_t k, size_t a, size_t T, size_t nk,
                       double before, double above, double gamma, double mass)
{
    double nn = (double)nk;
    double sd = sqrt(nn * (nn + 1.0) * (2.0 * nn + 1.0) / 24.0);
    out->bounds[k] = a > T ? 0.0 : ((double)a + 1.0) / (2.0 * sd);
    out->atom[k] = a > T ? 0.0 : fmax(0.0, ((double)a - 1.0) / (2.0 * sd));
    out->gamma[k] = gamma;
    out->spent[k] = before + above + gamma * mass;
    out->next[k] = before + above + mass;
    return out->spent[k];
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
        double above, gamma;
        size_t a = pick_atom(hist, T, target[k] - before, &above, &gamma);
        double mass = a > T ? 0.0 : hist[a];
        before = set_look(out, k, a, T, i, before, above, gamma, mass);
        /* the atom's surviving share 1 - gamma goes on to the later looks */
        for (uint32_t s = 0; s < 2 * from; s++) {
            size_t dev = (size_t)labs(2 * (long)string_wplus(s) - (long)T);
            if (a > T || dev > a)
                p[s] = 0.0;
            else if (dev == a)
                p[s] *= 1.0 - gamma;
        }
        k++;
    }
    free(p);
    free(q);
    free(hist);
    return STATS_OK;
}

/* The simulated design from dev (studies, K) of null studies; alive[i] is the share of
 * study i not crossed yet (below 1 after a look's atom). */
static int rank_simulated(const size_t *n, size_t K, const double *target, const uint32_t *dev,
                          size_t studies, stats_seq_rank_design *out)
{
    size_t T_max = n[K - 1] * (n[K - 1] + 1) / 2;
    double *hist = malloc((T_max + 1) * sizeof *hist);
    double *alive = malloc(studies * sizeof *alive);
    if (!hist || !alive) {
        free(hist);
        free(alive);
        return STATS_ENOMEM;
    }
    for (size_t i = 0; i < studies; i++)
        alive[i] = 1.0;
    double N = (double)studies, before = 0.0;
    for (size_t k = 0; k < K; k++) {
        size_t T = n[k] * (n[k] + 1) / 2;
        memset(hist, 0, (T + 1) * sizeof *hist);
        for (size_t i = 0; i < studies; i++)
            hist[dev[i * K + k]] += alive[i];
        double above, gamma;
        size_t a = pick_atom(hist, T, (target[k] - before) * N, &above, &gamma);
        double mass = a > T ? 0.0 : hist[a];
        before = set_look(out, k, a, T, n[k], before, above / N, gamma, mass / N);
        for (size_t i = 0; i < studies; i++) {
            if (a > T || dev[i * K + k] > a)
                alive[i] = 0.0;
            else if (dev[i * K + k] == a)
                alive[i] *= 1.0 - gamma;
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

double stats_seq_draw(uint64_t key, size_t k)
{
    pcg32 r;
    pcg32_stream(&r, key, PCG_PURPOSE_STATS, STATS_STREAM_SEQ_ATOM);
    double u = pcg32_uniform_double(&r);
    for (size_t j = 0; j < k; j++)
        u = pcg32_uniform_double(&r);
    return u;
}

struct seq_tied {
    uint64_t key;
    size_t i;
};

int stats_seq_flips_alloc(stats_seq_flips *f, size_t K)
{
    f->sums = malloc((K + 1) * STATS_SEQ_FLIPS * sizeof *f->sums);
    f->ties = malloc(STATS_SEQ_FLIPS * sizeof *f->ties);
    f->tied = malloc(STATS_SEQ_FLIPS * sizeof *f->tied);
    f->alive = malloc(STATS_SEQ_FLIPS);
    if (!f->sums || !f->ties || !f->tied || !f->alive) {
        stats_seq_flips_free(f);
        return STATS_ENOMEM;
    }
    return STATS_OK;
}

void stats_seq_flips_free(stats_seq_flips *f)
{
    free(f->sums);
    free(f->ties);
    free(f->tied);
    free(f->alive);
    memset(f, 0, sizeof *f);
}

void stats_seq_flip_draw(stats_seq_flips *f, uint64_t key, const double *d, const size_t *n,
                         size_t K)
{
    pcg32 r;
    pcg32_stream(&r, key, PCG_PURPOSE_STATS, STATS_STREAM_SEQ_FLIP);
    for (size_t i = 0; i < STATS_SEQ_FLIPS; i++) {
        uint64_t hi = pcg32_next(&r);
        f->ties[i] = hi << 32 | pcg32_next(&r);
    }
    double *acc = f->sums;
    memset(acc, 0, STATS_SEQ_FLIPS * sizeof *acc);
    size_t k = 0;
    /* difference by difference, 32 vectors a draw: sign (i, j) does not depend on n_K */
    for (size_t j = 0; j < n[K - 1]; j++) {
        const double signed_d[2] = {-d[j], d[j]}; /* a load, not a branch on a random bit */
        acc[0] += d[j];
        uint32_t bits = 0;
        for (size_t i = 1; i < STATS_SEQ_FLIPS; i++) {
            if ((i - 1) % 32 == 0)
                bits = pcg32_next(&r);
            acc[i] += signed_d[bits & 1u];
            bits >>= 1;
        }
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

/* descending by tie key; a key drawn twice (chance 2^-64 a pair) falls back to the index */
static int cmp_tied(const void *x, const void *y)
{
    const struct seq_tied *a = x, *b = y;
    if (a->key != b->key)
        return a->key < b->key ? 1 : -1;
    return (a->i > b->i) - (a->i < b->i);
}

size_t stats_seq_flip_walk(stats_seq_flips *f, size_t K, const size_t *allowed, int stop_early,
                           double *v, size_t *crossed)
{
    double *buf = f->sums + K * STATS_SEQ_FLIPS;
    memset(f->alive, 1, STATS_SEQ_FLIPS);
    size_t gone = 0, first = K;
    for (size_t k = 0; k < K; k++) {
        const double *s = f->sums + k * STATS_SEQ_FLIPS;
        size_t count = 0;
        for (size_t i = 0; i < STATS_SEQ_FLIPS; i++)
            if (f->alive[i])
                buf[count++] = fabs(s[i]);
        size_t room = allowed[k] > gone ? allowed[k] - gone : 0;
        /* the (room + 1)-th largest |S| of the vectors alive stays: those above it cross,
         * and of those equal to it the ones with the largest tie keys fill the room */
        double vk = room >= count ? -1.0 : stats_select_kth(buf, count, count - 1 - room);
        size_t ntied = 0, before = gone;
        for (size_t i = 0; i < STATS_SEQ_FLIPS; i++) {
            if (!f->alive[i])
                continue;
            if (fabs(s[i]) == vk) {
                f->tied[ntied++] = (struct seq_tied){f->ties[i], i};
                continue;
            }
            if (fabs(s[i]) < vk)
                continue;
            f->alive[i] = 0;
            gone++;
        }
        size_t fill = room - (gone - before); /* none tied when every vector alive crossed */
        fill = fill < ntied ? fill : ntied;
        if (fill > 0)
            qsort(f->tied, ntied, sizeof *f->tied, cmp_tied);
        for (size_t t = 0; t < fill; t++) {
            f->alive[f->tied[t].i] = 0;
            gone++;
        }
        if (first == K && !f->alive[0])
            first = k;
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
                     double alpha, uint64_t key, stats_seq_flip_result *out, stats_error *err)
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
    stats_seq_flips f;
    if (stats_seq_flips_alloc(&f, looks))
        return STATS_ENOMEM;
    memset(out, 0, sizeof *out);
    stats_seq_flip_allowed(shape, alpha, n, K, out->allowed);
    stats_seq_flip_draw(&f, key, d, n, looks);
    double v[STATS_SEQ_MAX_LOOKS];
    out->reject_at = stats_seq_flip_walk(&f, looks, out->allowed, 0, v, out->crossed);
    double ss = 0.0;
    size_t k = 0;
    for (size_t j = 0; j < n[looks - 1]; j++) {
        ss += d[j] * d[j];
        if (j + 1 == n[k]) {
            out->bounds[k] = t_of_sum(v[k], ss, n[k]);
            out->z[k] = stats_seq_t_as_z(out->bounds[k], (double)n[k] - 1.0);
            double s0 = f.sums[k * STATS_SEQ_FLIPS];
            out->t[k] = copysign(t_of_sum(fabs(s0), ss, n[k]), s0);
            k++;
        }
    }
    stats_seq_flips_free(&f);
    return STATS_OK;
}
