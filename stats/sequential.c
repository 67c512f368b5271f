/* Group-sequential z boundaries by numerical integration (stats.h: stats_seq_*): the
 * constants of the O'Brien-Fleming and Pocock shapes, Lan-DeMets alpha spending, and the
 * chance of stopping each way at each look under a drift.  The published constants this
 * reproduces: Jennison & Turnbull (2000), Group Sequential Methods with Applications to
 * Clinical Trials, Table 2.1 (Pocock, C_P(K, alpha)) and Table 2.3 (O'Brien-Fleming,
 * C_B(K, alpha)); R's ldbounds::commonbounds and SAS PROC SEQDESIGN (method=poc, obf)
 * compute the same designs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_math.h>

#include "internal.h"
#include "stats.h"

#define GRID_H 0.025 /* the widest spacing of the grid */
#define TAIL_SD 10.0 /* the grid ends this many sd from the look's mean */

/* Nodes of one look's continuation region with their Simpson weights, and wg = weight x
 * the sub-density of Z there (no stop before). */
typedef struct {
    double *z, *wg;
    size_t n, cap;
} seq_grid;

/* One step from look k - 1 to look k: Z_k sqrt(t_k) = Z_{k-1} sqrt(t_{k-1}) + X with
 * X ~ N(theta dt, dt).  Look 1 steps from the point Z_0 = 0 at t_0 = 0. */
typedef struct {
    double a, b, s, shift; /* sqrt(t_{k-1}), sqrt(t_k), sqrt(dt), theta dt */
} seq_step;

typedef struct {
    seq_grid g[2];
    int cur;   /* g[cur] holds look k - 1 */
    double h;  /* the spacing bound */
    double theta;
    const double *t;
} seq_walk;

int stats_seq_fractions(const double *t, size_t K, double *out, stats_error *err)
{
    if (K < 1 || K > STATS_SEQ_MAX_LOOKS)
        return stats_fail(err, 1, "looks: must be 1 to %d, got %zu", STATS_SEQ_MAX_LOOKS, K);
    for (size_t k = 0; k < K; k++)
        out[k] = t ? t[k] : (double)(k + 1) / (double)K;
    if (t && stats_check_finite(t, K, "t", 1, err))
        return STATS_EINVAL;
    for (size_t k = 0; k < K; k++) {
        double prev = k ? out[k - 1] : 0.0;
        if (!(out[k] > prev && out[k] <= 1.0))
            return stats_fail(err, 1, "t[%zu]: fractions must increase within (0, 1], got %g",
                              k + 1, out[k]);
        if (k && out[k] - prev < STATS_SEQ_MIN_STEP * out[k])
            return stats_fail(err, 1, "t[%zu]: %g is too close to t[%zu] = %g (a step must be "
                              ">= %g t)", k + 1, out[k], k, prev, STATS_SEQ_MIN_STEP);
    }
    return STATS_OK;
}

void stats_seq_shape(int shape, const double *t, size_t K, double *factor)
{
    for (size_t k = 0; k < K; k++)
        factor[k] = shape == STATS_SEQ_OBF ? sqrt(t[K - 1] / t[k]) : 1.0;
}

static seq_step step_to(const double *t, size_t k, double theta)
{
    double prev = k ? t[k - 1] : 0.0, dt = t[k] - prev;
    return (seq_step){sqrt(prev), sqrt(t[k]), sqrt(dt), theta * dt};
}

/* X standardized when Z_{k-1} = u and Z_k = z. */
static double step_x(const seq_step *st, double u, double z)
{
    return (z * st->b - u * st->a - st->shift) / st->s;
}

static int walk_init(seq_walk *w, const double *t, size_t K, double theta)
{
    double h = GRID_H;
    for (size_t k = 1; k < K; k++)
        h = fmin(h, sqrt((t[k] - t[k - 1]) / t[k]) / 6.0);
    /* two intervals, each at most 2 TAIL_SD wide, of an even number of steps <= h */
    size_t cap = 2 * (2 * (size_t)ceil(TAIL_SD / h) + 3);
    *w = (seq_walk){.cur = 0, .h = h, .theta = theta, .t = t};
    for (int i = 0; i < 2; i++) {
        w->g[i].z = malloc(2 * cap * sizeof(double));
        if (!w->g[i].z) {
            free(w->g[0].z);
            return STATS_ENOMEM;
        }
        w->g[i].wg = w->g[i].z + cap;
        w->g[i].cap = cap;
    }
    w->g[0].z[0] = 0.0; /* the start: Z_0 = 0 with mass 1 */
    w->g[0].wg[0] = 1.0;
    w->g[0].n = 1;
    return STATS_OK;
}

static void walk_free(seq_walk *w)
{
    free(w->g[0].z);
    free(w->g[1].z);
}

/* Simpson nodes on [lo, hi] (none when empty), weights in wg. */
static void add_interval(seq_grid *g, double lo, double hi, double h)
{
    if (!(hi > lo))
        return;
    size_t m = 2 * (size_t)ceil((hi - lo) / (2.0 * h));
    if (m < 2)
        m = 2;
    double step = (hi - lo) / (double)m;
    for (size_t i = 0; i <= m; i++) {
        g->z[g->n] = i == m ? hi : lo + (double)i * step;
        g->wg[g->n] = step / 3.0 * (i == 0 || i == m ? 1.0 : i % 2 ? 4.0 : 2.0);
        g->n++;
    }
}

/* The continuation region of a look: f <= |z| <= c, cut at mu +- TAIL_SD. */
static void region(seq_grid *g, double c, double f, double mu, double h)
{
    double lo = mu - TAIL_SD, hi = mu + TAIL_SD;
    g->n = 0;
    if (f > 0.0) {
        add_interval(g, fmax(-c, lo), fmin(-f, hi), h);
        add_interval(g, fmax(f, lo), fmin(c, hi), h);
    } else {
        add_interval(g, fmax(-c, lo), fmin(c, hi), h);
    }
}

/* The chance of reaching look k (0-based) and stopping there: above c, below -c, or
 * with f > |Z_k| (futility). */
static void walk_exits(const seq_walk *w, size_t k, double c, double f, double out[3])
{
    const seq_grid *g = &w->g[w->cur];
    seq_step st = step_to(w->t, k, w->theta);
    double up = 0.0, down = 0.0, mid = 0.0;
    for (size_t i = 0; i < g->n; i++) {
        double u = g->z[i];
        up += g->wg[i] * gsl_cdf_ugaussian_Q(step_x(&st, u, c));
        down += g->wg[i] * gsl_cdf_ugaussian_P(step_x(&st, u, -c));
        if (f > 0.0)
            mid += g->wg[i] * (gsl_cdf_ugaussian_P(step_x(&st, u, f)) -
                               gsl_cdf_ugaussian_P(step_x(&st, u, -f)));
    }
    out[0] = up;
    out[1] = down;
    out[2] = mid;
}

/* The mass that reaches look k (0-based): what look k - 1 did not stop. */
static double walk_mass(const seq_walk *w)
{
    const seq_grid *g = &w->g[w->cur];
    double s = 0.0;
    for (size_t i = 0; i < g->n; i++)
        s += g->wg[i];
    return s;
}

/* Moves to look k: its sub-density on its continuation region f <= |z| < c. */
static void walk_advance(seq_walk *w, size_t k, double c, double f)
{
    const seq_grid *from = &w->g[w->cur];
    seq_grid *to = &w->g[1 - w->cur];
    seq_step st = step_to(w->t, k, w->theta);
    region(to, c, f, w->theta * st.b, w->h);
    double scale = st.b / st.s / sqrt(2.0 * M_PI);
    for (size_t j = 0; j < to->n; j++) {
        double dens = 0.0;
        for (size_t i = 0; i < from->n; i++) {
            double x = step_x(&st, from->z[i], to->z[j]);
            dens += from->wg[i] * exp(-0.5 * x * x);
        }
        to->wg[j] *= scale * dens;
    }
    w->cur = 1 - w->cur;
}

/* The whole walk for given bounds; res may be NULL (then only *reject). */
static int crossing(const double *t, size_t K, const double *bounds, const double *futility,
                    double theta, stats_seq_crossing_result *res, double *reject)
{
    seq_walk w;
    int status = walk_init(&w, t, K, theta);
    if (status)
        return status;
    if (res)
        memset(res, 0, sizeof *res);
    double total = 0.0, expected = 0.0, out[3];
    for (size_t k = 0; k < K; k++) {
        int last = k + 1 == K;
        double f = futility && !last ? futility[k] : 0.0;
        walk_exits(&w, k, bounds[k], f, out);
        if (last)
            out[2] = fmax(0.0, walk_mass(&w) - out[0] - out[1]);
        total += out[0] + out[1];
        expected += t[k] * (out[0] + out[1] + out[2]);
        if (res) {
            res->upper[k] = out[0];
            res->lower[k] = out[1];
            res->futility[k] = out[2];
            res->stop[k] = out[0] + out[1] + out[2];
        }
        if (!last)
            walk_advance(&w, k, bounds[k], f);
    }
    walk_free(&w);
    if (res) {
        res->looks = K;
        for (size_t k = 0; k < K; k++)
            res->t[k] = t[k];
        res->reject = total;
        res->expected_t = expected;
    }
    if (reject)
        *reject = total;
    return STATS_OK;
}

typedef struct {
    const double *t, *factor;
    size_t K;
    double alpha;
    int status;
} constant_fn;

static double constant_excess(double c, void *params)
{
    constant_fn *p = params;
    double bounds[STATS_SEQ_MAX_LOOKS], reject = 0.0;
    for (size_t k = 0; k < p->K; k++)
        bounds[k] = c * p->factor[k];
    int status = crossing(p->t, p->K, bounds, NULL, 0.0, NULL, &reject);
    if (status) {
        p->status = status;
        return NAN;
    }
    return reject - p->alpha;
}

int stats_seq_check_shape(int shape, int arg, stats_error *err)
{
    if (shape != STATS_SEQ_OBF && shape != STATS_SEQ_POCOCK)
        return stats_fail(err, arg, "shape: must be O'Brien-Fleming or Pocock, got %d", shape);
    return STATS_OK;
}

int stats_seq_constant(const double *t, size_t K, int shape, double alpha, double *c,
                       double *bounds, stats_error *err)
{
    stats_gsl_off();
    double tt[STATS_SEQ_MAX_LOOKS], factor[STATS_SEQ_MAX_LOOKS];
    if (stats_seq_fractions(t, K, tt, err) || stats_seq_check_shape(shape, 2, err) ||
        stats_check_alpha(alpha, 3, err))
        return STATS_EINVAL;
    stats_seq_shape(shape, tt, K, factor);
    /* the last look alone rejects alpha at z_{1-alpha/2}; Bonferroni over K looks at most */
    double lo = gsl_cdf_ugaussian_Qinv(alpha / 2.0);
    double root = lo;
    if (K > 1) {
        constant_fn p = {tt, factor, K, alpha, STATS_OK};
        gsl_function fn = {constant_excess, &p};
        int status = stats_brent(&fn, lo, gsl_cdf_ugaussian_Qinv(alpha / (2.0 * (double)K)),
                                 &root);
        if (p.status)
            return p.status;
        if (status)
            return status;
    }
    *c = root;
    if (bounds)
        for (size_t k = 0; k < K; k++)
            bounds[k] = root * factor[k];
    return STATS_OK;
}

double stats_seq_spend(int shape, double alpha, double t)
{
    if (t <= 0.0)
        return 0.0;
    if (t >= 1.0)
        return alpha;
    if (shape == STATS_SEQ_OBF)
        return 2.0 * gsl_cdf_ugaussian_Q(gsl_cdf_ugaussian_Qinv(alpha / 2.0) / sqrt(t));
    return alpha * log1p((M_E - 1.0) * t);
}

typedef struct {
    const seq_walk *w;
    size_t k;
    double target;
} spend_fn;

static double spend_excess(double c, void *params)
{
    const spend_fn *p = params;
    double out[3];
    walk_exits(p->w, p->k, c, 0.0, out);
    return out[0] + out[1] - p->target;
}

int stats_seq_spending(const double *t, size_t K, int shape, double alpha, double *bounds,
                       double *spent, stats_error *err)
{
    stats_gsl_off();
    double tt[STATS_SEQ_MAX_LOOKS];
    if (stats_seq_fractions(t, K, tt, err) || stats_seq_check_shape(shape, 2, err) ||
        stats_check_alpha(alpha, 3, err))
        return STATS_EINVAL;
    seq_walk w;
    int status = walk_init(&w, tt, K, 0.0);
    if (status)
        return status;
    double before = 0.0;
    for (size_t k = 0; k < K && !status; k++) {
        double now = stats_seq_spend(shape, alpha, tt[k]);
        spend_fn p = {&w, k, now - before};
        gsl_function fn = {spend_excess, &p};
        double c = STATS_SEQ_Z_MAX;
        if (spend_excess(STATS_SEQ_Z_MAX, &p) < 0.0)
            status = stats_brent(&fn, 0.0, STATS_SEQ_Z_MAX, &c);
        bounds[k] = c;
        if (spent)
            spent[k] = now;
        before = now;
        if (k + 1 < K)
            walk_advance(&w, k, c, 0.0);
    }
    walk_free(&w);
    return status;
}

int stats_seq_crossing(const double *t, size_t K, const double *bounds, const double *futility,
                       double theta, stats_seq_crossing_result *res, stats_error *err)
{
    stats_gsl_off();
    double tt[STATS_SEQ_MAX_LOOKS];
    if (stats_seq_fractions(t, K, tt, err) || stats_check_finite(bounds, K, "bounds", 2, err))
        return STATS_EINVAL;
    for (size_t k = 0; k < K; k++) {
        if (!(bounds[k] > 0.0))
            return stats_fail(err, 2, "bounds[%zu]: must be > 0, got %g", k + 1, bounds[k]);
        if (futility && !(futility[k] >= 0.0 && futility[k] <= bounds[k]))
            return stats_fail(err, 3, "futility[%zu]: must be in [0, bounds[%zu]], got %g",
                              k + 1, k + 1, futility[k]);
    }
    if (!isfinite(theta) || fabs(theta) > 100.0)
        return stats_fail(err, 3, "drift: must be finite, |drift| <= 100, got %g", theta);
    return crossing(tt, K, bounds, futility, theta, res, NULL);
}
