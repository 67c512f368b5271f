/* Lua module `stats`: the statistics of stats/stats.h for scripts.
 *   stats.paired(a, b [, {alpha=0.05, resamples=10000, seed=1, exact=false, power=0.8}])
 *       -> table: n, alpha, mean, sd, df, t, p_t, ci_t, p_signflip, p_signflip_se,
 *          p_signflip_min, signflip_exact, ci_percentile, ci_bca, bca_z0, bca_a,
 *          bootstrap_exact, resamples, d_z, g_z, hedges_j, ci_d_z, ci_g_z, power,
 *          mde_d_z, mde, degenerate, flags, bca_reason
 *   stats.holm(p [, alpha=0.05]) -> adjusted, reject      (lists, input order)
 *   stats.bonferroni(p [, alpha=0.05]) -> adjusted, reject
 *   stats.mde(n [, {alpha=0.05, power=0.8, sd=}]) -> table: n, alpha, power, mde_d_z,
 *       mde (only with sd)
 *   stats.power(n, d_z [, {alpha=0.05}]) -> power of the two-sided paired t-test
 *   stats.summary(x) -> table: n, mean, sd, min, max, median, degenerate, reason_code
 *       ("no_values", "one_value")
 *   stats.nct_cdf(t, df, ncp) -> P(T <= t), T noncentral t
 *   stats.tost(a, b, {delta=, alpha=0.05, test="t"|"signflip", resamples=10000, seed=1})
 *       -> table: n, mean, sd, test, delta, alpha, p, p_lower, p_upper, ci (the 1 - 2 alpha
 *          interval; absent when the sign-flip interval is unbounded), equivalent,
 *          t_lower, t_upper, df (t), degenerate, reason_code ("small_n": n below the
 *          test's 2 (t) or 1 (sign flip); "constant": every difference equal, t only)
 *   stats.signflip_interval(a, b [, {alpha=0.05, one_sided=false, resamples=10000, seed=1}])
 *       -> table: n, alpha, ci (absent when every shift is accepted), bounded, exact,
 *          p_min, patterns: the shifts of mean(b - a) the sign-flip test does not reject
 *   stats.seeds_needed{sd=, delta=, alpha=0.05, m=1, power=0.8, test="t"} -> n, table:
 *       n, n_power, n_reach, level (alpha / m), d_z, power (achieved), and the inputs
 *   stats.sd_upper(sd, df, conf) -> the one-sided upper confidence limit of a standard
 *       deviation estimated with df degrees of freedom: sd * sqrt(df / chi2_{1-conf}(df))
 *   stats.min_seeds(test, level) -> the least n at which the test can give p <= level
 *   stats.clopper_pearson(k, n [, {alpha=0.05}]) -> {lo, hi}
 *   stats.improvement(a, b [, {better="lower", alpha=0.05}]) -> table: n, better, ties,
 *       share, ci (share and ci absent when n = 0)
 *   stats.anova2(y) -> table for y[row][col] (rows: init seeds, columns: data seeds): rows,
 *       cols, mean, ss_*, df_*, ms_*, f_row, f_col, p_row, p_col (absent when the
 *       residual is 0), var_row, var_col, var_resid, negative_row, negative_col, share_*
 *   stats.linfit(x, y [, {at=0, alpha=0.05}]) -> table: n, df, intercept, slope, slope_se,
 *       slope_ci, resid_sd, at, fit (the line at `at`), fit_se, fit_ci, t_quantile
 *   stats.ols(x, y [, {alpha=0.05}]) for x a list of n rows of p numbers (the design
 *       matrix, its intercept column the caller's) -> table: n, p, df (n - p), coef, se,
 *       ci ({lo, hi} per coefficient), resid_sd, t_quantile; collinear columns refused
 *   stats.lr_sensitivity(loss, init [, {ref=1, alpha=0.05, resamples=10000, seed=1,
 *       exact=false}]) for loss[group][point][seed] (false for a diverged run) and
 *       init[group][seed] -> table: curve[group][point], sensitivity, ci, diff (minus the
 *       ref group's), diff_ci, own, own_ci, own_diff, own_diff_ci (against each group's
 *       own best), ell_star, star = {group, point}, exact, total
 *   stats.robust(a, b [, {alpha=0.05}]) -> table (exploratory, stats.h stats_robust): n,
 *       alpha, positive, negative, zeros, ties, hl (Hodges-Lehmann), ci and ci_level (the
 *       exact Wilcoxon interval; absent when 2^(1 - n) > alpha), w_plus and p_wilcoxon
 *       (exact signed rank; absent when every difference is 0), p_sign (sign test; same)
 *   stats.original_from_arms(mean, sd, n [, {log_ratio=false}]) for {baseline, treatment}
 *       -> {estimate, se, sd, n1, n2}: an original unpaired comparison from its arms
 *   stats.replication(original, {mean=, sd=, n=} [, {alpha=0.05, margin=0}]) for an
 *       original {estimate=, se=, sd=, n1=, n2=0 (paired)} -> table: n, estimate,
 *       original, diff, alpha, same_direction, d33, d33_raw, and with n >= 2 and sd > 0
 *       se, df, ci, original_in_ci, pi, in_pi, pi_t, in_pi_t, telescope_t, telescope_p, too_small,
 *       (margin > 0) margin, diff_se, diff_df, tost_p, tost_p_lower, tost_p_upper,
 *       tost_ci, equivalent
 *   Group-sequential boundaries (stats.h stats_seq_*), looks a count K (equally spaced)
 *   or a list of information fractions t, shape "obf" or "pocock":
 *   stats.normal_q(z) -> P(Z > z), the standard normal's upper tail
 *   stats.seq_constant(looks, shape [, {alpha=0.05}]) -> table: c, bounds, t, shape, alpha
 *   stats.seq_spending(looks [, {alpha=0.05, spending="obf"}]) -> table: bounds, spent
 *       (cumulative), t, spending, alpha (Lan-DeMets; "obf" or "pocock")
 *   stats.seq_crossing(looks, bounds [, {drift=0, futility=}]) -> table: t, upper, lower,
 *       futility, stop (per look), reject, expected_t, drift
 *   stats.seq_calibrate(n, targets [, {studies=100000, seed=1}]) for look sizes n and a list
 *       of {test="z"|"t"|"signed_rank", shape=, alpha=0.05} -> a list of {test, shape,
 *       alpha, c, bounds (on the statistic's scale), error, next_error}
 *   stats.seq_simulate(n, rules [, {dist="normal"|"t3", m=1, shift=0, studies=100000,
 *       seed=1}]) for a list of {test=, shape=, c=}, {test=, shape=, bounds= [, atom=,
 *       gamma=]} or {test="t_flip", shape=, alpha=} -> a list of {test, shape, c, reject,
 *       se, rejections, stop (per look), expected_n}
 *   stats.seq_rank_spending(n, targets [, {studies=1000000, seed=1}]) for a list of
 *       {shape=, alpha=0.05} -> a list of {shape, alpha, bounds, atom, gamma, spent, next,
 *       target, exact}
 *   stats.seq_draw(key, k) -> the draw u_k in [0, 1) of look k of the comparison with key
 *   stats.seq_flip_t(d, n, {key= [, shape="obf", alpha=0.05]}) for the differences d of
 *       the looks done of the comparison with key -> table: looks, bounds, t, crossed,
 *       allowed (per look), reject_at (the first look that rejects, or nil)
 *   stats.seq_bounds(n, {test=, shape=, c=}) -> the bound at each look, on the test's scale
 * Constants (stats/stats.h): BOOT_EXACT_MAX, MIN_RESAMPLES, SIGNFLIP_EXACT_MAX,
 *   NCT_MAX_NCP, DEFAULT_ALPHA, DEFAULT_POWER, DEFAULT_RESAMPLES, BCA_CAVEAT_N, SEEDS_MAX,
 *   ROBUST_MAX_N, SEQ_MAX_LOOKS, SEQ_MAX_N, SEQ_MAX_M, SEQ_MIN_STEP, SEQ_Z_MAX, SEQ_FLIPS,
 *   SEQ_EXACT_N.
 * Intervals are {lo, hi}.  A quantity that is undefined for the data is absent (nil),
 * never NaN: then `degenerate` is true and `flags` holds the codes of why: small_n,
 * constant, bca_undefined (with `bca_reason`: "small_n", "equal_resamples",
 * "z0_infinite", "jackknife_equal" or "acceleration") and/or nct_range (see stats.h for
 * what each removes; the numbers behind them are the result's n, sd, t and
 * stats.NCT_MAX_NCP).  No sentence comes from here: the caller words the codes.  Bad
 * arguments raise "bad argument #k to 'paired' (a[3]: NaN)".
 */
#include <math.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "../stats/stats.h"
#include "lrepro.h"

/* The array x (a table of finite numbers) at stack index idx as a C vector in a userdata
 * left on the stack, so an error later leaks nothing; errors name argument arg. */
static double *check_vector_at(lua_State *L, int idx, int arg, const char *name, size_t *n)
{
    if (lua_type(L, idx) != LUA_TTABLE) {
        lua_pushfstring(L, "%s: table expected, got %s", name, luaL_typename(L, idx));
        luaL_argerror(L, arg, lua_tostring(L, -1));
    }
    size_t len = (size_t)lua_rawlen(L, idx);
    double *x = (double *)lua_newuserdatauv(L, (len ? len : 1) * sizeof *x, 0);
    for (size_t i = 0; i < len; i++) {
        int type = lua_rawgeti(L, idx, (lua_Integer)i + 1);
        if (type != LUA_TNUMBER) {
            lua_pushfstring(L, "%s[%I]: number expected, got %s", name, (lua_Integer)i + 1,
                            lua_typename(L, type));
            luaL_argerror(L, arg, lua_tostring(L, -1));
        }
        x[i] = (double)lua_tonumber(L, -1);
        lua_pop(L, 1);
        if (!isfinite(x[i])) {
            lua_pushfstring(L, "%s[%I]: %s", name, (lua_Integer)i + 1,
                            isnan(x[i]) ? "NaN" : "infinite");
            luaL_argerror(L, arg, lua_tostring(L, -1));
        }
    }
    *n = len;
    return x;
}

static double *check_vector(lua_State *L, int arg, const char *name, size_t *n)
{
    return check_vector_at(L, arg, arg, name, n);
}

/* An options table at `arg` (or none): every key must be one of `known`. */
static int check_options(lua_State *L, int arg, const char *const known[])
{
    if (lua_isnoneornil(L, arg))
        return 0;
    if (lua_type(L, arg) != LUA_TTABLE) {
        lua_pushfstring(L, "options: table expected, got %s", luaL_typename(L, arg));
        return luaL_argerror(L, arg, lua_tostring(L, -1));
    }
    lua_pushnil(L);
    while (lua_next(L, arg)) {
        lua_pop(L, 1);
        int ok = 0;
        if (lua_type(L, -1) == LUA_TSTRING)
            for (int i = 0; known[i] && !ok; i++)
                ok = strcmp(lua_tostring(L, -1), known[i]) == 0;
        if (!ok) {
            lua_pushfstring(L, "unknown option '%s'", luaL_tolstring(L, -1, NULL));
            return luaL_argerror(L, arg, lua_tostring(L, -1));
        }
    }
    return 1;
}

static double check_number(lua_State *L, int arg, const char *name)
{
    if (lua_type(L, arg) != LUA_TNUMBER) {
        lua_pushfstring(L, "%s: number expected, got %s", name, luaL_typename(L, arg));
        luaL_argerror(L, arg, lua_tostring(L, -1));
    }
    return (double)lua_tonumber(L, arg);
}

static double opt_number(lua_State *L, int arg, const char *key, double def)
{
    if (lua_isnoneornil(L, arg))
        return def;
    int type = lua_getfield(L, arg, key);
    double v = def;
    if (type == LUA_TNUMBER) {
        v = (double)lua_tonumber(L, -1);
    } else if (type != LUA_TNIL) {
        lua_pushfstring(L, "%s: number expected, got %s", key, lua_typename(L, type));
        luaL_argerror(L, arg, lua_tostring(L, -1));
    }
    lua_pop(L, 1);
    return v;
}

static lua_Integer opt_integer(lua_State *L, int arg, const char *key, lua_Integer def,
                               lua_Integer min)
{
    if (lua_isnoneornil(L, arg))
        return def;
    int type = lua_getfield(L, arg, key);
    lua_Integer v = def;
    if (type != LUA_TNIL) {
        int isint = 0;
        v = lua_tointegerx(L, -1, &isint);
        if (!isint || type != LUA_TNUMBER) {
            lua_pushfstring(L, "%s: integer expected, got %s", key,
                            type == LUA_TNUMBER ? "non-integer number" : lua_typename(L, type));
            luaL_argerror(L, arg, lua_tostring(L, -1));
        }
        if (v < min) {
            lua_pushfstring(L, "%s: must be >= %I, got %I", key, min, v);
            luaL_argerror(L, arg, lua_tostring(L, -1));
        }
    }
    lua_pop(L, 1);
    return v;
}

static int opt_boolean(lua_State *L, int arg, const char *key, int def)
{
    if (lua_isnoneornil(L, arg))
        return def;
    int type = lua_getfield(L, arg, key);
    int v = def;
    if (type == LUA_TBOOLEAN) {
        v = lua_toboolean(L, -1);
    } else if (type != LUA_TNIL) {
        lua_pushfstring(L, "%s: boolean expected, got %s", key, lua_typename(L, type));
        luaL_argerror(L, arg, lua_tostring(L, -1));
    }
    lua_pop(L, 1);
    return v;
}

/* Raises the error of a failed stats_* call; err.arg is mapped by `argmap` (NULL:
 * identity). */
static int raise_status(lua_State *L, int status, const stats_error *err, const int *argmap)
{
    if (status == STATS_EINVAL)
        return luaL_argerror(L, argmap ? argmap[err->arg] : err->arg, err->msg);
    if (status == STATS_ENOMEM)
        return luaL_error(L, "out of memory");
    return luaL_error(L, "numerical failure (a GSL routine or a root search did not converge)");
}

static void set_number(lua_State *L, const char *key, double v)
{
    lua_pushnumber(L, (lua_Number)v);
    lua_setfield(L, -2, key);
}

static void set_integer(lua_State *L, const char *key, lua_Integer v)
{
    lua_pushinteger(L, v);
    lua_setfield(L, -2, key);
}

static void set_boolean(lua_State *L, const char *key, int v)
{
    lua_pushboolean(L, v);
    lua_setfield(L, -2, key);
}

static void set_interval(lua_State *L, const char *key, const double ci[2])
{
    lua_createtable(L, 2, 0);
    lua_pushnumber(L, (lua_Number)ci[0]);
    lua_rawseti(L, -2, 1);
    lua_pushnumber(L, (lua_Number)ci[1]);
    lua_rawseti(L, -2, 2);
    lua_setfield(L, -2, key);
}

static void push_flags(lua_State *L, unsigned degenerate)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {{STATS_DEGEN_SMALL_N, "small_n"},
                 {STATS_DEGEN_CONSTANT, "constant"},
                 {STATS_DEGEN_BCA, "bca_undefined"},
                 {STATS_DEGEN_NCT_RANGE, "nct_range"}};
    lua_createtable(L, 0, 4);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (degenerate & names[i].bit)
            set_boolean(L, names[i].name, 1);
    lua_setfield(L, -2, "flags");
}

static int l_paired(lua_State *L)
{
    static const char *const known[] = {"alpha", "resamples", "seed", "exact", "power", NULL};
    size_t na, nb;
    lua_settop(L, 3); /* the vectors' buffers go above the arguments */
    const double *a = check_vector(L, 1, "a", &na);
    const double *b = check_vector(L, 2, "b", &nb);
    check_options(L, 3, known);
    stats_paired_opts o;
    stats_paired_opts_default(&o);
    o.alpha = opt_number(L, 3, "alpha", o.alpha);
    o.power = opt_number(L, 3, "power", o.power);
    o.resamples = (size_t)opt_integer(L, 3, "resamples", (lua_Integer)o.resamples, 0);
    o.seed = (uint64_t)opt_integer(L, 3, "seed", (lua_Integer)o.seed, 0);
    o.exact = opt_boolean(L, 3, "exact", o.exact);

    stats_paired_result r;
    stats_error err;
    int status = stats_paired(a, na, b, nb, &o, &r, &err);
    if (status)
        return raise_status(L, status, &err, NULL);

    unsigned have = r.defined;
    lua_createtable(L, 0, 32);
    set_integer(L, "n", (lua_Integer)r.n);
    set_number(L, "alpha", r.alpha);
    set_number(L, "power", o.power);
    if (have & STATS_HAVE_MEAN)
        set_number(L, "mean", r.mean);
    if (have & STATS_HAVE_SD)
        set_number(L, "sd", r.sd);
    if (have & STATS_HAVE_DF)
        set_integer(L, "df", (lua_Integer)r.df);
    if (have & STATS_HAVE_T) {
        set_number(L, "t", r.t);
        set_number(L, "p_t", r.p_t);
        set_interval(L, "ci_t", r.ci_t);
    }
    if (have & STATS_HAVE_SIGNFLIP) {
        set_number(L, "p_signflip", r.p_signflip);
        set_number(L, "p_signflip_se", r.p_signflip_se);
        set_number(L, "p_signflip_min", r.p_signflip_min);
        set_boolean(L, "signflip_exact", r.signflip_exact);
    }
    if (have & STATS_HAVE_PERCENTILE) {
        set_interval(L, "ci_percentile", r.ci_percentile);
        set_boolean(L, "bootstrap_exact", r.bootstrap_exact);
        if (r.resamples)
            set_integer(L, "resamples", (lua_Integer)r.resamples);
    }
    if (have & STATS_HAVE_BCA) {
        set_interval(L, "ci_bca", r.ci_bca);
        set_number(L, "bca_z0", r.bca_z0);
        set_number(L, "bca_a", r.bca_a);
    }
    if (have & STATS_HAVE_D_Z) {
        set_number(L, "d_z", r.d_z);
        set_number(L, "g_z", r.g_z);
        set_number(L, "hedges_j", r.hedges_j);
    }
    if (have & STATS_HAVE_CI_D_Z) {
        set_interval(L, "ci_d_z", r.ci_d_z);
        set_interval(L, "ci_g_z", r.ci_g_z);
    }
    if (have & STATS_HAVE_MDE_D_Z)
        set_number(L, "mde_d_z", r.mde_d_z);
    if (have & STATS_HAVE_MDE)
        set_number(L, "mde", r.mde);
    set_boolean(L, "degenerate", r.degenerate != 0);
    push_flags(L, r.degenerate);
    if (r.degenerate & STATS_DEGEN_BCA) {
        static const char *const bca_codes[] = {"defined", "small_n", "equal_resamples",
                                                "z0_infinite", "jackknife_equal",
                                                "acceleration"};
        lua_pushstring(L, bca_codes[r.bca_reason]);
        lua_setfield(L, -2, "bca_reason");
    }
    return 1;
}

typedef int (*adjust_fn)(const double *, size_t, double, double *, int *, stats_error *);

static int adjust(lua_State *L, adjust_fn fn)
{
    size_t m;
    lua_settop(L, 2);
    const double *p = check_vector(L, 1, "p", &m);
    double alpha = STATS_DEFAULT_ALPHA;
    if (!lua_isnoneornil(L, 2)) {
        alpha = check_number(L, 2, "alpha");
    }
    double *adjusted = (double *)lua_newuserdatauv(L, (m ? m : 1) * sizeof *adjusted, 0);
    int *reject = (int *)lua_newuserdatauv(L, (m ? m : 1) * sizeof *reject, 0);
    stats_error err;
    int status = fn(p, m, alpha, adjusted, reject, &err);
    if (status)
        return raise_status(L, status, &err, NULL);
    lua_createtable(L, (int)m, 0);
    lua_createtable(L, (int)m, 0);
    for (size_t i = 0; i < m; i++) {
        lua_pushnumber(L, (lua_Number)adjusted[i]);
        lua_rawseti(L, -3, (lua_Integer)i + 1);
        lua_pushboolean(L, reject[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 2;
}

static int l_holm(lua_State *L)
{
    return adjust(L, stats_holm);
}

static int l_bonferroni(lua_State *L)
{
    return adjust(L, stats_bonferroni);
}

static size_t check_n(lua_State *L, int arg)
{
    lua_Integer n = repro_checkinteger(L, arg, "n");
    if (n < 2) {
        lua_pushfstring(L, "n: must be >= 2, got %I", n);
        luaL_argerror(L, arg, lua_tostring(L, -1));
    }
    return (size_t)n;
}

static int l_mde(lua_State *L)
{
    static const char *const known[] = {"alpha", "power", "sd", NULL};
    static const int argmap[] = {0, 1, 2, 2}; /* n, alpha, power */
    size_t n = check_n(L, 1);
    check_options(L, 2, known);
    double alpha = opt_number(L, 2, "alpha", STATS_DEFAULT_ALPHA);
    double power = opt_number(L, 2, "power", STATS_DEFAULT_POWER);
    int have_sd = 0;
    if (!lua_isnoneornil(L, 2)) {
        have_sd = lua_getfield(L, 2, "sd") != LUA_TNIL;
        lua_pop(L, 1);
    }
    double sd = opt_number(L, 2, "sd", 0.0);
    if (have_sd && !(isfinite(sd) && sd >= 0.0)) {
        lua_pushfstring(L, "sd: must be finite and >= 0, got %f", (lua_Number)sd);
        luaL_argerror(L, 2, lua_tostring(L, -1));
    }
    double d_z;
    stats_error err;
    int status = stats_mde(n, alpha, power, &d_z, &err);
    if (status)
        return raise_status(L, status, &err, argmap);
    lua_createtable(L, 0, 5);
    set_integer(L, "n", (lua_Integer)n);
    set_number(L, "alpha", alpha);
    set_number(L, "power", power);
    set_number(L, "mde_d_z", d_z);
    if (have_sd)
        set_number(L, "mde", d_z * sd);
    return 1;
}

static int l_power(lua_State *L)
{
    static const char *const known[] = {"alpha", NULL};
    size_t n = check_n(L, 1);
    double d_z = check_number(L, 2, "d_z");
    check_options(L, 3, known);
    double alpha = opt_number(L, 3, "alpha", STATS_DEFAULT_ALPHA);
    double power;
    stats_error err;
    int status = stats_power(n, d_z, alpha, &power, &err);
    if (status)
        return raise_status(L, status, &err, NULL);
    lua_pushnumber(L, (lua_Number)power);
    return 1;
}

static int l_summary(lua_State *L)
{
    size_t n;
    lua_settop(L, 1);
    const double *x = check_vector(L, 1, "x", &n);
    stats_summary_result r;
    stats_error err;
    int status = stats_summary(x, n, &r, &err);
    if (status)
        return raise_status(L, status, &err, NULL);
    lua_createtable(L, 0, 8);
    set_integer(L, "n", (lua_Integer)r.n);
    if (r.defined & STATS_HAVE_MEAN) {
        set_number(L, "mean", r.mean);
        set_number(L, "min", r.min);
        set_number(L, "max", r.max);
        set_number(L, "median", r.median);
    }
    if (r.defined & STATS_HAVE_SD)
        set_number(L, "sd", r.sd);
    set_boolean(L, "degenerate", n < 2);
    if (n < 2) {
        lua_pushstring(L, n == 0 ? "no_values" : "one_value");
        lua_setfield(L, -2, "reason_code");
    }
    return 1;
}

static int l_nct_cdf(lua_State *L)
{
    double t = check_number(L, 1, "t");
    double df = check_number(L, 2, "df");
    double ncp = check_number(L, 3, "ncp");
    luaL_argcheck(L, isfinite(t), 1, "t: must be finite");
    luaL_argcheck(L, df > 0.0 && isfinite(df), 2, "df: must be finite and > 0");
    if (!(isfinite(ncp) && fabs(ncp) <= STATS_NCT_MAX_NCP)) {
        lua_pushfstring(L, "ncp: |ncp| must be <= %f", (lua_Number)STATS_NCT_MAX_NCP);
        luaL_argerror(L, 3, lua_tostring(L, -1));
    }
    double p;
    if (stats_nct_cdf(t, df, ncp, &p))
        return luaL_error(L, "numerical failure in the noncentral t CDF");
    lua_pushnumber(L, (lua_Number)p);
    return 1;
}

static int check_test(lua_State *L, int arg, const char *value)
{
    if (strcmp(value, "t") == 0)
        return STATS_TEST_T;
    if (strcmp(value, "signflip") == 0)
        return STATS_TEST_SIGNFLIP;
    lua_pushfstring(L, "test: expected \"t\" or \"signflip\", got \"%s\"", value);
    return luaL_argerror(L, arg, lua_tostring(L, -1));
}

static int opt_test(lua_State *L, int arg, int def)
{
    if (lua_isnoneornil(L, arg))
        return def;
    int type = lua_getfield(L, arg, "test");
    int test = def;
    if (type == LUA_TSTRING) {
        test = check_test(L, arg, lua_tostring(L, -1));
    } else if (type != LUA_TNIL) {
        lua_pushfstring(L, "test: string expected, got %s", lua_typename(L, type));
        luaL_argerror(L, arg, lua_tostring(L, -1));
    }
    lua_pop(L, 1);
    return test;
}

/* A number option that must be present. */
static double need_number(lua_State *L, int arg, const char *key)
{
    luaL_checktype(L, arg, LUA_TTABLE);
    int type = lua_getfield(L, arg, key);
    lua_pop(L, 1);
    if (type == LUA_TNIL) {
        lua_pushfstring(L, "%s: missing", key);
        luaL_argerror(L, arg, lua_tostring(L, -1));
    }
    return opt_number(L, arg, key, 0.0);
}

static int l_tost(lua_State *L)
{
    static const char *const known[] = {"delta", "alpha", "test", "resamples", "seed", NULL};
    size_t na, nb;
    lua_settop(L, 3);
    const double *a = check_vector(L, 1, "a", &na);
    const double *b = check_vector(L, 2, "b", &nb);
    if (lua_isnoneornil(L, 3))
        luaL_argerror(L, 3, "options: table with delta expected");
    check_options(L, 3, known);
    stats_tost_opts o = {.delta = need_number(L, 3, "delta"),
                         .alpha = opt_number(L, 3, "alpha", STATS_DEFAULT_ALPHA),
                         .test = opt_test(L, 3, STATS_TEST_T),
                         .resamples = (size_t)opt_integer(L, 3, "resamples",
                                                          STATS_DEFAULT_RESAMPLES, 0),
                         .seed = (uint64_t)opt_integer(L, 3, "seed", 1, 0)};
    stats_tost_result r;
    stats_error err;
    int status = stats_tost(a, na, b, nb, &o, &r, &err);
    if (status)
        return raise_status(L, status, &err, NULL);
    lua_createtable(L, 0, 16);
    set_integer(L, "n", (lua_Integer)r.n);
    lua_pushstring(L, o.test == STATS_TEST_T ? "t" : "signflip");
    lua_setfield(L, -2, "test");
    set_number(L, "delta", o.delta);
    set_number(L, "alpha", o.alpha);
    if (r.n >= 1)
        set_number(L, "mean", r.mean);
    if (r.n >= 2 && (o.test == STATS_TEST_SIGNFLIP || r.defined))
        set_number(L, "sd", r.sd);
    if (r.defined) {
        set_number(L, "p", r.p);
        set_number(L, "p_lower", r.p_lower);
        set_number(L, "p_upper", r.p_upper);
        if (r.ci_bounded)
            set_interval(L, "ci", r.ci);
        if (o.test == STATS_TEST_T) {
            set_number(L, "t_lower", r.t_lower);
            set_number(L, "t_upper", r.t_upper);
            set_integer(L, "df", (lua_Integer)r.df);
        }
    }
    set_boolean(L, "equivalent", r.equivalent);
    set_boolean(L, "degenerate", !r.defined);
    if (!r.defined) {
        lua_pushstring(L, r.degenerate == STATS_TOST_CONSTANT ? "constant" : "small_n");
        lua_setfield(L, -2, "reason_code");
    }
    return 1;
}

static int l_signflip_interval(lua_State *L)
{
    static const char *const known[] = {"alpha", "one_sided", "resamples", "seed", NULL};
    size_t na, nb;
    lua_settop(L, 3);
    const double *a = check_vector(L, 1, "a", &na);
    const double *b = check_vector(L, 2, "b", &nb);
    check_options(L, 3, known);
    if (na != nb) {
        lua_pushfstring(L, "b: length %d differs from the length %d of a", (int)nb, (int)na);
        luaL_argerror(L, 2, lua_tostring(L, -1));
    }
    double *d = (double *)lua_newuserdatauv(L, (na ? na : 1) * sizeof *d, 0);
    for (size_t i = 0; i < na; i++) {
        d[i] = b[i] - a[i];
        if (!isfinite(d[i])) {
            lua_pushfstring(L, "b - a[%d]: infinite", (int)i + 1);
            luaL_argerror(L, 2, lua_tostring(L, -1));
        }
    }
    double alpha = opt_number(L, 3, "alpha", STATS_DEFAULT_ALPHA);
    int one_sided = opt_boolean(L, 3, "one_sided", 0);
    size_t resamples = (size_t)opt_integer(L, 3, "resamples", STATS_DEFAULT_RESAMPLES, 0);
    uint64_t seed = (uint64_t)opt_integer(L, 3, "seed", 1, 0);
    static const int argmap[] = {0, 2, 3, 3}; /* d, alpha, resamples */
    stats_signflip_ci_result r;
    stats_error err;
    int status = stats_signflip_ci(d, na, alpha, one_sided, resamples, seed, &r, &err);
    if (status)
        return raise_status(L, status, &err, argmap);
    lua_createtable(L, 0, 8);
    set_integer(L, "n", (lua_Integer)r.n);
    set_number(L, "alpha", r.alpha);
    set_boolean(L, "one_sided", one_sided);
    set_boolean(L, "bounded", r.bounded);
    if (r.bounded)
        set_interval(L, "ci", r.ci);
    set_boolean(L, "exact", r.exact);
    set_number(L, "p_min", r.p_min);
    set_integer(L, "patterns", (lua_Integer)r.patterns);
    return 1;
}

static int l_seeds_needed(lua_State *L)
{
    static const char *const known[] = {"sd", "delta", "alpha", "m", "power", "test", NULL};
    luaL_checktype(L, 1, LUA_TTABLE);
    check_options(L, 1, known);
    stats_design g = {.sd = need_number(L, 1, "sd"),
                      .delta = need_number(L, 1, "delta"),
                      .alpha = opt_number(L, 1, "alpha", STATS_DEFAULT_ALPHA),
                      .power = opt_number(L, 1, "power", STATS_DEFAULT_POWER),
                      .m = (size_t)opt_integer(L, 1, "m", 1, 1),
                      .test = opt_test(L, 1, STATS_TEST_T)};
    stats_seeds_result r;
    stats_error err;
    int status = stats_seeds_needed(&g, &r, &err);
    if (status)
        return raise_status(L, status, &err, NULL);
    lua_pushinteger(L, (lua_Integer)r.n);
    lua_createtable(L, 0, 12);
    set_integer(L, "n", (lua_Integer)r.n);
    set_integer(L, "n_power", (lua_Integer)r.n_power);
    set_integer(L, "n_reach", (lua_Integer)r.n_reach);
    set_number(L, "level", r.level);
    set_number(L, "d_z", r.d_z);
    set_number(L, "power_achieved", r.power);
    set_number(L, "sd", g.sd);
    set_number(L, "delta", g.delta);
    set_number(L, "alpha", g.alpha);
    set_integer(L, "m", (lua_Integer)g.m);
    set_number(L, "power", g.power);
    lua_pushstring(L, g.test == STATS_TEST_T ? "t" : "signflip");
    lua_setfield(L, -2, "test");
    return 2;
}

static int l_normal_q(lua_State *L)
{
    lua_pushnumber(L, stats_normal_q(luaL_checknumber(L, 1)));
    return 1;
}

static int l_min_seeds(lua_State *L)
{
    int test = check_test(L, 1, luaL_checkstring(L, 1));
    double level = check_number(L, 2, "level");
    luaL_argcheck(L, level > 0.0 && level < 1.0, 2, "level: must be in (0, 1)");
    lua_pushinteger(L, (lua_Integer)stats_min_seeds(test, level));
    return 1;
}

static int l_sd_upper(lua_State *L)
{
    double sd = check_number(L, 1, "sd"), df = check_number(L, 2, "df");
    double conf = check_number(L, 3, "conf");
    double limit;
    stats_error err;
    int status = stats_sd_upper(sd, df, conf, &limit, &err);
    if (status)
        return raise_status(L, status, &err, NULL);
    lua_pushnumber(L, (lua_Number)limit);
    return 1;
}

static int l_clopper_pearson(lua_State *L)
{
    static const char *const known[] = {"alpha", NULL};
    lua_Integer k = repro_checkinteger(L, 1, "k");
    lua_Integer n = repro_checkinteger(L, 2, "n");
    luaL_argcheck(L, k >= 0, 1, "k: must be >= 0");
    luaL_argcheck(L, n >= 0, 2, "n: must be >= 0");
    check_options(L, 3, known);
    double alpha = opt_number(L, 3, "alpha", STATS_DEFAULT_ALPHA);
    double ci[2];
    stats_error err;
    int status = stats_clopper_pearson((size_t)k, (size_t)n, alpha, ci, &err);
    if (status)
        return raise_status(L, status, &err, NULL);
    lua_createtable(L, 2, 0);
    lua_pushnumber(L, (lua_Number)ci[0]);
    lua_rawseti(L, -2, 1);
    lua_pushnumber(L, (lua_Number)ci[1]);
    lua_rawseti(L, -2, 2);
    return 1;
}

static int l_improvement(lua_State *L)
{
    static const char *const known[] = {"better", "alpha", NULL};
    static const char *const better_names[] = {"lower", "higher", NULL};
    size_t na, nb;
    lua_settop(L, 3);
    const double *a = check_vector(L, 1, "a", &na);
    const double *b = check_vector(L, 2, "b", &nb);
    check_options(L, 3, known);
    int lower = 1;
    if (!lua_isnoneornil(L, 3)) {
        lua_getfield(L, 3, "better");
        if (!lua_isnil(L, -1)) {
            const char *v = lua_tostring(L, -1);
            int ok = 0;
            for (int i = 0; better_names[i] && v; i++)
                if (strcmp(v, better_names[i]) == 0) {
                    ok = 1;
                    lower = i == 0;
                }
            if (!ok)
                luaL_argerror(L, 3, "better: expected \"lower\" or \"higher\"");
        }
        lua_pop(L, 1);
    }
    double alpha = opt_number(L, 3, "alpha", STATS_DEFAULT_ALPHA);
    stats_improvement_result r;
    stats_error err;
    int status = stats_improvement(a, na, b, nb, lower, alpha, &r, &err);
    if (status)
        return raise_status(L, status, &err, NULL);
    lua_createtable(L, 0, 6);
    set_integer(L, "n", (lua_Integer)r.n);
    set_integer(L, "better", (lua_Integer)r.better);
    set_integer(L, "ties", (lua_Integer)r.ties);
    if (r.defined) {
        set_number(L, "share", r.share);
        set_interval(L, "ci", r.ci);
    }
    set_number(L, "alpha", alpha);
    return 1;
}

static int l_anova2(lua_State *L)
{
    lua_settop(L, 1);
    luaL_checktype(L, 1, LUA_TTABLE);
    size_t rows = (size_t)lua_rawlen(L, 1), cols = 0;
    if (rows > 0) {
        if (lua_rawgeti(L, 1, 1) != LUA_TTABLE)
            luaL_argerror(L, 1, "y[1]: table expected");
        cols = (size_t)lua_rawlen(L, -1);
        lua_pop(L, 1);
    }
    double *y = (double *)lua_newuserdatauv(L, (rows * cols > 0 ? rows * cols : 1) * sizeof *y, 0);
    for (size_t i = 0; i < rows; i++) {
        lua_rawgeti(L, 1, (lua_Integer)i + 1);
        if (!lua_istable(L, -1) || (size_t)lua_rawlen(L, -1) != cols) {
            lua_pushfstring(L, "y[%d]: a row of %d numbers expected", (int)i + 1, (int)cols);
            luaL_argerror(L, 1, lua_tostring(L, -1));
        }
        for (size_t j = 0; j < cols; j++) {
            if (lua_rawgeti(L, -1, (lua_Integer)j + 1) != LUA_TNUMBER) {
                lua_pushfstring(L, "y[%d][%d]: number expected", (int)i + 1, (int)j + 1);
                luaL_argerror(L, 1, lua_tostring(L, -1));
            }
            y[i * cols + j] = (double)lua_tonumber(L, -1);
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    stats_anova2_result r;
    stats_error err;
    int status = stats_anova2(y, rows, cols, &r, &err);
    if (status)
        return raise_status(L, status, &err, NULL);
    lua_createtable(L, 0, 28);
    set_integer(L, "rows", (lua_Integer)r.rows);
    set_integer(L, "cols", (lua_Integer)r.cols);
    set_number(L, "mean", r.mean);
    set_number(L, "ss_row", r.ss_row);
    set_number(L, "ss_col", r.ss_col);
    set_number(L, "ss_resid", r.ss_resid);
    set_number(L, "ss_total", r.ss_total);
    set_integer(L, "df_row", (lua_Integer)r.df_row);
    set_integer(L, "df_col", (lua_Integer)r.df_col);
    set_integer(L, "df_resid", (lua_Integer)r.df_resid);
    set_number(L, "ms_row", r.ms_row);
    set_number(L, "ms_col", r.ms_col);
    set_number(L, "ms_resid", r.ms_resid);
    if (r.have_f) {
        set_number(L, "f_row", r.f_row);
        set_number(L, "f_col", r.f_col);
        set_number(L, "p_row", r.p_row);
        set_number(L, "p_col", r.p_col);
    }
    set_number(L, "var_row", r.var_row);
    set_number(L, "var_col", r.var_col);
    set_number(L, "var_resid", r.var_resid);
    set_boolean(L, "negative_row", r.negative_row);
    set_boolean(L, "negative_col", r.negative_col);
    set_number(L, "share_row", r.share_row);
    set_number(L, "share_col", r.share_col);
    set_number(L, "share_resid", r.share_resid);
    return 1;
}

/* loss[g][j][i] (a number, or false for a diverged run) and init[g][i] as C arrays in
 * userdata on the stack; the shape (G, J, n) from the first rows, every row checked. */
static double *check_cube(lua_State *L, int arg, const char *name, size_t dims, size_t *shape)
{
    luaL_checktype(L, arg, LUA_TTABLE);
    int top = lua_gettop(L);
    lua_pushvalue(L, arg);
    for (size_t d = 0; d < dims; d++) {
        shape[d] = (size_t)lua_rawlen(L, -1);
        if (d + 1 < dims && (shape[d] == 0 || lua_rawgeti(L, -1, 1) != LUA_TTABLE)) {
            lua_pushfstring(L, "%s: a table of %d nested levels of numbers expected", name,
                            (int)dims);
            luaL_argerror(L, arg, lua_tostring(L, -1));
        }
    }
    lua_settop(L, top);
    size_t total = 1;
    for (size_t d = 0; d < dims; d++)
        total *= shape[d];
    double *x = (double *)lua_newuserdatauv(L, (total ? total : 1) * sizeof *x, 0);
    int ux = lua_gettop(L);
    size_t idx[3] = {0, 0, 0};
    for (size_t k = 0; k < total; k++) {
        size_t rest = k;
        for (size_t d = dims; d-- > 0;) {
            idx[d] = rest % shape[d];
            rest /= shape[d];
        }
        lua_pushvalue(L, arg);
        for (size_t d = 0; d < dims; d++) {
            int type = lua_rawgeti(L, -1, (lua_Integer)idx[d] + 1);
            int last = d + 1 == dims;
            if (!last && (type != LUA_TTABLE || (size_t)lua_rawlen(L, -1) != shape[d + 1])) {
                lua_pushfstring(L, "%s: every row must have %d entries", name, (int)shape[d + 1]);
                luaL_argerror(L, arg, lua_tostring(L, -1));
            }
            if (last) {
                if (type == LUA_TNUMBER) {
                    x[k] = (double)lua_tonumber(L, -1);
                } else if (type == LUA_TBOOLEAN && !lua_toboolean(L, -1) && dims == 3) {
                    x[k] = NAN;
                } else {
                    lua_pushfstring(L, "%s[%d][%d]%s: %s expected, got %s", name,
                                    (int)idx[0] + 1, (int)idx[1] + 1,
                                    dims == 3 ? lua_pushfstring(L, "[%d]", (int)idx[2] + 1) : "",
                                    dims == 3 ? "a number or false" : "a number",
                                    lua_typename(L, type));
                    luaL_argerror(L, arg, lua_tostring(L, -1));
                }
            }
        }
        lua_settop(L, ux);
    }
    return x;
}

static void push_list(lua_State *L, const double *x, size_t n)
{
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_pushnumber(L, (lua_Number)x[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

static int l_linfit(lua_State *L)
{
    static const char *const known[] = {"at", "alpha", NULL};
    lua_settop(L, 3);
    check_options(L, 3, known);
    size_t n, ny;
    const double *x = check_vector(L, 1, "x", &n);
    const double *y = check_vector(L, 2, "y", &ny);
    if (ny != n) {
        lua_pushfstring(L, "y: %d values expected (as many as x), got %d", (int)n, (int)ny);
        luaL_argerror(L, 2, lua_tostring(L, -1));
    }
    double at = opt_number(L, 3, "at", 0.0);
    double alpha = opt_number(L, 3, "alpha", STATS_DEFAULT_ALPHA);
    stats_linfit_result r;
    stats_error err;
    int status = stats_linfit(x, y, n, at, alpha, &r, &err);
    if (status)
        return raise_status(L, status, &err, NULL);
    lua_createtable(L, 0, 12);
    set_integer(L, "n", (lua_Integer)r.n);
    set_number(L, "df", r.df);
    set_number(L, "intercept", r.intercept);
    set_number(L, "slope", r.slope);
    set_number(L, "slope_se", r.slope_se);
    push_list(L, r.slope_ci, 2);
    lua_setfield(L, -2, "slope_ci");
    set_number(L, "resid_sd", r.resid_sd);
    set_number(L, "at", r.at);
    set_number(L, "fit", r.fit);
    set_number(L, "fit_se", r.fit_se);
    push_list(L, r.fit_ci, 2);
    lua_setfield(L, -2, "fit_ci");
    set_number(L, "t_quantile", r.t_quantile);
    return 1;
}

/* stats.ols(x, y [, {alpha}]): x a list of n rows of p numbers each (the design matrix). */
static int l_ols(lua_State *L)
{
    static const char *const known[] = {"alpha", NULL};
    lua_settop(L, 3);
    check_options(L, 3, known);
    luaL_checktype(L, 1, LUA_TTABLE);
    size_t n = (size_t)lua_rawlen(L, 1), p = 0, ny;
    const double *y = check_vector(L, 2, "y", &ny);
    if (ny != n) {
        lua_pushfstring(L, "y: %d values expected (as many as x has rows), got %d", (int)n,
                        (int)ny);
        luaL_argerror(L, 2, lua_tostring(L, -1));
    }
    if (n > 0) {
        lua_rawgeti(L, 1, 1);
        p = lua_istable(L, -1) ? (size_t)lua_rawlen(L, -1) : 0;
        lua_pop(L, 1);
    }
    if (p == 0)
        luaL_argerror(L, 1, "x: a list of rows, each a non-empty list of numbers, expected");
    double *x = (double *)lua_newuserdatauv(L, n * p * sizeof *x + 4 * p * sizeof *x, 0);
    double *out = x + n * p;
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, 1, (lua_Integer)i + 1);
        if (!lua_istable(L, -1) || (size_t)lua_rawlen(L, -1) != p) {
            lua_pushfstring(L, "x[%I]: a row of %d numbers expected", (lua_Integer)i + 1,
                            (int)p);
            luaL_argerror(L, 1, lua_tostring(L, -1));
        }
        for (size_t j = 0; j < p; j++) {
            int type = lua_rawgeti(L, -1, (lua_Integer)j + 1);
            if (type != LUA_TNUMBER) {
                lua_pushfstring(L, "x[%I][%I]: number expected, got %s", (lua_Integer)i + 1,
                                (lua_Integer)j + 1, lua_typename(L, type));
                luaL_argerror(L, 1, lua_tostring(L, -1));
            }
            x[i * p + j] = (double)lua_tonumber(L, -1);
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    double alpha = opt_number(L, 3, "alpha", STATS_DEFAULT_ALPHA);
    stats_ols_result r = {0};
    r.coef = out;
    r.se = out + p;
    r.ci = out + 2 * p;
    stats_error err;
    int status = stats_ols(x, y, n, p, alpha, &r, &err);
    if (status)
        return raise_status(L, status, &err, NULL);
    lua_createtable(L, 0, 8);
    set_integer(L, "n", (lua_Integer)r.n);
    set_integer(L, "p", (lua_Integer)r.p);
    set_number(L, "df", r.df);
    set_number(L, "resid_sd", r.resid_sd);
    set_number(L, "t_quantile", r.t_quantile);
    push_list(L, r.coef, p);
    lua_setfield(L, -2, "coef");
    push_list(L, r.se, p);
    lua_setfield(L, -2, "se");
    lua_createtable(L, (int)p, 0);
    for (size_t j = 0; j < p; j++) {
        push_list(L, r.ci + 2 * j, 2);
        lua_rawseti(L, -2, (lua_Integer)j + 1);
    }
    lua_setfield(L, -2, "ci");
    return 1;
}

static int l_lr_sensitivity(lua_State *L)
{
    static const char *const known[] = {"ref", "alpha", "resamples", "seed", "exact", NULL};
    lua_settop(L, 3);
    check_options(L, 3, known);
    size_t shape[3], ishape[2];
    const double *loss = check_cube(L, 1, "loss", 3, shape);
    const double *init = check_cube(L, 2, "init", 2, ishape);
    size_t G = shape[0], J = shape[1], n = shape[2];
    if (ishape[0] != G || ishape[1] != n) {
        lua_pushfstring(L, "init: %d groups x %d seeds expected (the shape of loss), got %d x %d",
                        (int)G, (int)n, (int)ishape[0], (int)ishape[1]);
        luaL_argerror(L, 2, lua_tostring(L, -1));
    }
    stats_lrsens_opts o;
    lua_Integer ref = opt_integer(L, 3, "ref", 1, 1);
    o.ref = (size_t)(ref - 1);
    o.alpha = opt_number(L, 3, "alpha", STATS_DEFAULT_ALPHA);
    o.resamples = (size_t)opt_integer(L, 3, "resamples", STATS_DEFAULT_RESAMPLES, 1);
    o.seed = (uint64_t)opt_integer(L, 3, "seed", 1, 0);
    o.exact = opt_boolean(L, 3, "exact", 0);
    size_t cells = (G ? G : 1) * (J ? J : 1);
    double *out = (double *)lua_newuserdatauv(L, (cells + 12 * (G ? G : 1)) * sizeof *out, 0);
    stats_lrsens_result r;
    r.curve = out;
    r.sensitivity = out + cells;
    r.ci = r.sensitivity + G;
    r.diff = r.ci + 2 * G;
    r.diff_ci = r.diff + G;
    r.own = r.diff_ci + 2 * G;
    r.own_ci = r.own + G;
    r.own_diff = r.own_ci + 2 * G;
    r.own_diff_ci = r.own_diff + G;
    stats_error err;
    int status = stats_lr_sensitivity(loss, init, G, J, n, &o, &r, &err);
    if (status)
        return raise_status(L, status, &err, NULL);
    lua_createtable(L, 0, 14);
    lua_createtable(L, (int)G, 0);
    for (size_t g = 0; g < G; g++) {
        push_list(L, r.curve + g * J, J);
        lua_rawseti(L, -2, (lua_Integer)g + 1);
    }
    lua_setfield(L, -2, "curve");
    push_list(L, r.sensitivity, G);
    lua_setfield(L, -2, "sensitivity");
    push_list(L, r.diff, G);
    lua_setfield(L, -2, "diff");
    push_list(L, r.own, G);
    lua_setfield(L, -2, "own");
    push_list(L, r.own_diff, G);
    lua_setfield(L, -2, "own_diff");
    const double *cis[4] = {r.ci, r.diff_ci, r.own_ci, r.own_diff_ci};
    const char *names[4] = {"ci", "diff_ci", "own_ci", "own_diff_ci"};
    for (int k = 0; k < 4; k++) {
        lua_createtable(L, (int)G, 0);
        for (size_t g = 0; g < G; g++) {
            push_list(L, cis[k] + 2 * g, 2);
            lua_rawseti(L, -2, (lua_Integer)g + 1);
        }
        lua_setfield(L, -2, names[k]);
    }
    set_number(L, "ell_star", r.ell_star);
    double star[2] = {(double)r.star_group + 1, (double)r.star_point + 1};
    lua_createtable(L, 2, 0);
    for (int k = 0; k < 2; k++) {
        lua_pushinteger(L, (lua_Integer)star[k]);
        lua_rawseti(L, -2, k + 1);
    }
    lua_setfield(L, -2, "star");
    set_boolean(L, "exact", r.exact);
    set_integer(L, "total", (lua_Integer)r.total);
    return 1;
}

static int l_robust(lua_State *L)
{
    static const char *const known[] = {"alpha", NULL};
    size_t na, nb;
    lua_settop(L, 3);
    const double *a = check_vector(L, 1, "a", &na);
    const double *b = check_vector(L, 2, "b", &nb);
    check_options(L, 3, known);
    double alpha = opt_number(L, 3, "alpha", STATS_DEFAULT_ALPHA);
    stats_robust_result r;
    stats_error err;
    int status = stats_robust(a, na, b, nb, alpha, &r, &err);
    if (status)
        return raise_status(L, status, &err, NULL);
    lua_createtable(L, 0, 14);
    set_integer(L, "n", (lua_Integer)r.n);
    set_number(L, "alpha", r.alpha);
    set_integer(L, "positive", (lua_Integer)r.positive);
    set_integer(L, "negative", (lua_Integer)r.negative);
    set_integer(L, "zeros", (lua_Integer)r.zeros);
    set_boolean(L, "ties", r.ties);
    if (r.have_hl)
        set_number(L, "hl", r.hl);
    if (r.have_ci) {
        set_interval(L, "ci", r.ci);
        set_number(L, "ci_level", r.ci_level);
    }
    if (r.have_p_wilcoxon) {
        set_number(L, "w_plus", r.w_plus);
        set_number(L, "p_wilcoxon", r.p_wilcoxon);
    }
    if (r.have_p_sign)
        set_number(L, "p_sign", r.p_sign);
    return 1;
}

/* A size field of a table at arg: an integer >= min. */
static size_t need_size(lua_State *L, int arg, const char *key, lua_Integer min)
{
    luaL_checktype(L, arg, LUA_TTABLE);
    int type = lua_getfield(L, arg, key);
    lua_pop(L, 1);
    if (type == LUA_TNIL) {
        lua_pushfstring(L, "%s: missing", key);
        luaL_argerror(L, arg, lua_tostring(L, -1));
    }
    return (size_t)opt_integer(L, arg, key, 0, min);
}

static void push_original(lua_State *L, const stats_original *o)
{
    lua_createtable(L, 0, 5);
    set_number(L, "estimate", o->estimate);
    set_number(L, "se", o->se);
    set_number(L, "sd", o->sd);
    set_integer(L, "n1", (lua_Integer)o->n1);
    set_integer(L, "n2", (lua_Integer)o->n2);
}

static int l_original_from_arms(lua_State *L)
{
    static const char *const known[] = {"log_ratio", NULL};
    lua_settop(L, 4);
    size_t k[3], n[2];
    const double *mean = check_vector(L, 1, "mean", &k[0]);
    const double *sd = check_vector(L, 2, "sd", &k[1]);
    luaL_checktype(L, 3, LUA_TTABLE);
    k[2] = (size_t)lua_rawlen(L, 3);
    for (int i = 0; i < 3; i++)
        luaL_argcheck(L, k[i] == 2, i + 1, "two arms expected: {baseline, treatment}");
    for (int i = 0; i < 2; i++) {
        lua_rawgeti(L, 3, i + 1);
        int isint = 0;
        lua_Integer v = lua_tointegerx(L, -1, &isint);
        luaL_argcheck(L, isint && v >= 0, 3, "n: integers >= 0 expected");
        n[i] = (size_t)v;
        lua_pop(L, 1);
    }
    check_options(L, 4, known);
    stats_original o;
    stats_error err;
    int status = stats_original_from_arms(mean, sd, n, opt_boolean(L, 4, "log_ratio", 0), &o,
                                          &err);
    if (status)
        return raise_status(L, status, &err, NULL);
    push_original(L, &o);
    return 1;
}

static int l_replication(lua_State *L)
{
    static const char *const known_o[] = {"estimate", "se", "sd", "n1", "n2", NULL};
    static const char *const known_r[] = {"mean", "sd", "n", NULL};
    static const char *const known[] = {"alpha", "margin", NULL};
    lua_settop(L, 3);
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checktype(L, 2, LUA_TTABLE);
    check_options(L, 1, known_o);
    check_options(L, 2, known_r);
    check_options(L, 3, known);
    stats_original o = {.estimate = need_number(L, 1, "estimate"),
                        .se = need_number(L, 1, "se"),
                        .sd = need_number(L, 1, "sd"),
                        .n1 = need_size(L, 1, "n1", 0),
                        .n2 = (size_t)opt_integer(L, 1, "n2", 0, 0)};
    double mean = need_number(L, 2, "mean"), sd = opt_number(L, 2, "sd", 0.0);
    size_t n = need_size(L, 2, "n", 0);
    stats_replication_opts opts = {.alpha = opt_number(L, 3, "alpha", STATS_DEFAULT_ALPHA),
                                   .margin = opt_number(L, 3, "margin", 0.0)};
    stats_replication_result r;
    stats_error err;
    int status = stats_replication(&o, mean, sd, n, &opts, &r, &err);
    if (status)
        return raise_status(L, status, &err, NULL);
    lua_createtable(L, 0, 24);
    set_integer(L, "n", (lua_Integer)r.n);
    set_number(L, "estimate", r.estimate);
    set_number(L, "original", o.estimate);
    set_number(L, "diff", r.diff);
    set_number(L, "alpha", opts.alpha);
    if (r.defined & STATS_REPL_HAVE_DIRECTION)
        set_boolean(L, "same_direction", r.same_direction);
    set_number(L, "d33", r.d33);
    set_number(L, "d33_raw", r.d33_raw);
    if (r.defined & STATS_REPL_HAVE_CI) {
        set_number(L, "se", r.se);
        set_integer(L, "df", (lua_Integer)r.df);
        set_interval(L, "ci", r.ci);
        set_boolean(L, "original_in_ci", r.orig_in_ci);
        set_interval(L, "pi", r.pi);
        set_boolean(L, "in_pi", r.in_pi);
        set_interval(L, "pi_t", r.pi_t);
        set_boolean(L, "in_pi_t", r.in_pi_t);
    }
    if (r.defined & STATS_REPL_HAVE_TELESCOPE) {
        set_number(L, "telescope_t", r.telescope_t);
        set_number(L, "telescope_p", r.telescope_p);
        set_boolean(L, "too_small", r.too_small);
    }
    if (r.defined & STATS_REPL_HAVE_TOST) {
        set_number(L, "margin", opts.margin);
        set_number(L, "diff_se", r.diff_se);
        set_number(L, "diff_df", r.diff_df);
        set_number(L, "tost_p", r.tost_p);
        set_number(L, "tost_p_lower", r.tost_p_lower);
        set_number(L, "tost_p_upper", r.tost_p_upper);
        set_interval(L, "tost_ci", r.tost_ci);
        set_boolean(L, "equivalent", r.equivalent);
    }
    return 1;
}

/* ---- Group-sequential boundaries (stats_seq_*) ---- */

static const char *const seq_shapes[] = {"obf", "pocock", NULL};
static const char *const seq_tests[] = {"z", "t", "signed_rank", "t_flip", NULL};
static const char *const seq_dists[] = {"normal", "t3", NULL};

/* Field `key` of the table at idx, one of names (its index); def when absent, an error
 * naming `what` when absent and def < 0. */
static int field_choice(lua_State *L, int idx, int arg, const char *what, const char *key,
                        const char *const names[], int def)
{
    int type = lua_getfield(L, idx, key);
    int v = def;
    if (type == LUA_TSTRING) {
        const char *s = lua_tostring(L, -1);
        for (v = 0; names[v] && strcmp(names[v], s) != 0; v++)
            ;
        if (!names[v]) {
            lua_pushfstring(L, "%s%s: unknown value \"%s\"", what, key, s);
            luaL_argerror(L, arg, lua_tostring(L, -1));
        }
    } else if (type != LUA_TNIL || def < 0) {
        lua_pushfstring(L, "%s%s: string expected, got %s", what, key, lua_typename(L, type));
        luaL_argerror(L, arg, lua_tostring(L, -1));
    }
    lua_pop(L, 1);
    return v;
}

/* Field `key` of the table at idx: a number, def when absent (NAN: required). */
static double field_number(lua_State *L, int idx, int arg, const char *what, const char *key,
                           double def)
{
    int type = lua_getfield(L, idx, key);
    double v = def;
    if (type == LUA_TNUMBER) {
        v = (double)lua_tonumber(L, -1);
    } else if (type != LUA_TNIL || isnan(def)) {
        lua_pushfstring(L, "%s%s: number expected, got %s", what, key, lua_typename(L, type));
        luaL_argerror(L, arg, lua_tostring(L, -1));
    }
    lua_pop(L, 1);
    return v;
}

/* Every key of the table at idx is one of known. */
static void check_keys(lua_State *L, int idx, int arg, const char *what,
                       const char *const known[])
{
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        int ok = 0;
        if (lua_type(L, -1) == LUA_TSTRING)
            for (int i = 0; known[i] && !ok; i++)
                ok = strcmp(lua_tostring(L, -1), known[i]) == 0;
        if (!ok) {
            lua_pushfstring(L, "%sunknown key '%s'", what, luaL_tolstring(L, -1, NULL));
            luaL_argerror(L, arg, lua_tostring(L, -1));
        }
    }
}

/* The looks at arg: a count K (equally spaced: t NULL) or a list of fractions. */
static const double *check_fractions(lua_State *L, int arg, size_t *K)
{
    if (lua_type(L, arg) == LUA_TNUMBER) {
        lua_Integer k = repro_checkinteger(L, arg, "looks");
        luaL_argcheck(L, k >= 1 && k <= STATS_SEQ_MAX_LOOKS, arg,
                      lua_pushfstring(L, "looks: must be 1 to %d", STATS_SEQ_MAX_LOOKS));
        *K = (size_t)k;
        return NULL;
    }
    return check_vector(L, arg, "t", K);
}

/* The look sizes at arg: a list of integers, increasing from 1. */
static const size_t *check_sizes(lua_State *L, int arg, size_t *K)
{
    luaL_checktype(L, arg, LUA_TTABLE);
    *K = (size_t)lua_rawlen(L, arg);
    luaL_argcheck(L, *K >= 1 && *K <= STATS_SEQ_MAX_LOOKS, arg,
                  lua_pushfstring(L, "n: 1 to %d look sizes expected", STATS_SEQ_MAX_LOOKS));
    size_t *n = (size_t *)lua_newuserdatauv(L, *K * sizeof *n, 0);
    for (size_t k = 0; k < *K; k++) {
        lua_rawgeti(L, arg, (lua_Integer)k + 1);
        int isint = 0;
        lua_Integer v = lua_tointegerx(L, -1, &isint);
        if (!isint || v < 1) {
            lua_pushfstring(L, "n[%I]: an integer >= 1 expected", (lua_Integer)k + 1);
            luaL_argerror(L, arg, lua_tostring(L, -1));
        }
        n[k] = (size_t)v;
        lua_pop(L, 1);
    }
    return n;
}

static void set_list(lua_State *L, const char *key, const double *x, size_t n)
{
    push_list(L, x, n);
    lua_setfield(L, -2, key);
}

static void set_fractions(lua_State *L, const double *t, size_t K)
{
    double tt[STATS_SEQ_MAX_LOOKS];
    stats_seq_fractions(t, K, tt, NULL);
    set_list(L, "t", tt, K);
}

static int l_seq_constant(lua_State *L)
{
    static const char *const known[] = {"alpha", NULL};
    static const int argmap[] = {0, 1, 2, 3};
    lua_settop(L, 3);
    size_t K;
    const double *t = check_fractions(L, 1, &K);
    int shape = luaL_checkoption(L, 2, NULL, seq_shapes);
    check_options(L, 3, known);
    double alpha = opt_number(L, 3, "alpha", STATS_DEFAULT_ALPHA);
    double c, bounds[STATS_SEQ_MAX_LOOKS];
    stats_error err;
    int status = stats_seq_constant(t, K, shape, alpha, &c, bounds, &err);
    if (status)
        return raise_status(L, status, &err, argmap);
    lua_createtable(L, 0, 5);
    set_number(L, "c", c);
    set_list(L, "bounds", bounds, K);
    set_fractions(L, t, K);
    lua_pushstring(L, seq_shapes[shape]);
    lua_setfield(L, -2, "shape");
    set_number(L, "alpha", alpha);
    return 1;
}

static int l_seq_spending(lua_State *L)
{
    static const char *const known[] = {"alpha", "spending", NULL};
    static const int argmap[] = {0, 1, 2, 2};
    lua_settop(L, 2);
    size_t K;
    const double *t = check_fractions(L, 1, &K);
    check_options(L, 2, known);
    double alpha = opt_number(L, 2, "alpha", STATS_DEFAULT_ALPHA);
    int shape = lua_isnil(L, 2) ? STATS_SEQ_OBF
                                : field_choice(L, 2, 2, "", "spending", seq_shapes, STATS_SEQ_OBF);
    double bounds[STATS_SEQ_MAX_LOOKS], spent[STATS_SEQ_MAX_LOOKS];
    stats_error err;
    int status = stats_seq_spending(t, K, shape, alpha, bounds, spent, &err);
    if (status)
        return raise_status(L, status, &err, argmap);
    lua_createtable(L, 0, 5);
    set_list(L, "bounds", bounds, K);
    set_list(L, "spent", spent, K);
    set_fractions(L, t, K);
    lua_pushstring(L, seq_shapes[shape]);
    lua_setfield(L, -2, "spending");
    set_number(L, "alpha", alpha);
    return 1;
}

static int l_seq_crossing(lua_State *L)
{
    static const char *const known[] = {"drift", "futility", NULL};
    lua_settop(L, 3);
    size_t K, nb, nf = 0;
    const double *t = check_fractions(L, 1, &K);
    const double *bounds = check_vector(L, 2, "bounds", &nb);
    if (nb != K) {
        lua_pushfstring(L, "bounds: %d values expected (one per look), got %d", (int)K, (int)nb);
        luaL_argerror(L, 2, lua_tostring(L, -1));
    }
    check_options(L, 3, known);
    double drift = opt_number(L, 3, "drift", 0.0);
    const double *futility = NULL;
    if (!lua_isnil(L, 3) && lua_getfield(L, 3, "futility") != LUA_TNIL) {
        futility = check_vector_at(L, lua_gettop(L), 3, "futility", &nf);
        if (nf != K) {
            lua_pushfstring(L, "futility: %d values expected (one per look), got %d", (int)K,
                            (int)nf);
            luaL_argerror(L, 3, lua_tostring(L, -1));
        }
    }
    stats_seq_crossing_result r;
    stats_error err;
    int status = stats_seq_crossing(t, K, bounds, futility, drift, &r, &err);
    if (status)
        return raise_status(L, status, &err, NULL);
    lua_createtable(L, 0, 8);
    set_list(L, "t", r.t, K);
    set_list(L, "upper", r.upper, K);
    set_list(L, "lower", r.lower, K);
    set_list(L, "futility", r.futility, K);
    set_list(L, "stop", r.stop, K);
    set_number(L, "reject", r.reject);
    set_number(L, "expected_t", r.expected_t);
    set_number(L, "drift", drift);
    return 1;
}

/* The list of tables at arg, each element checked against known; returns the count. */
static size_t check_list_of_tables(lua_State *L, int arg, const char *name,
                                   const char *const known[])
{
    luaL_checktype(L, arg, LUA_TTABLE);
    size_t m = (size_t)lua_rawlen(L, arg);
    if (m == 0) {
        lua_pushfstring(L, "%s: a non-empty list of tables expected", name);
        luaL_argerror(L, arg, lua_tostring(L, -1));
    }
    for (size_t j = 0; j < m; j++) {
        if (lua_rawgeti(L, arg, (lua_Integer)j + 1) != LUA_TTABLE) {
            lua_pushfstring(L, "%s[%I]: table expected", name, (lua_Integer)j + 1);
            luaL_argerror(L, arg, lua_tostring(L, -1));
        }
        lua_pushfstring(L, "%s[%I]: ", name, (lua_Integer)j + 1);
        check_keys(L, lua_gettop(L) - 1, arg, lua_tostring(L, -1), known);
        lua_pop(L, 2);
    }
    return m;
}

/* The arguments of a design over targets: the looks n (argument 1), the targets
 * (argument 2, a list of tables with the fields known_target), the options {studies,
 * seed} (argument 3, studies default_studies).  test: the targets' test, or -1 to read
 * each one's field. */
typedef struct {
    const size_t *n;
    size_t K, m, studies;
    uint64_t seed;
    stats_seq_target *tg;
} seq_targets;

static seq_targets check_targets(lua_State *L, const char *const *known_target, int test,
                                 lua_Integer default_studies)
{
    static const char *const known[] = {"studies", "seed", NULL};
    seq_targets a;
    lua_settop(L, 3);
    a.n = check_sizes(L, 1, &a.K);
    a.m = check_list_of_tables(L, 2, "targets", known_target);
    check_options(L, 3, known);
    a.studies = (size_t)opt_integer(L, 3, "studies", default_studies, 1);
    a.seed = (uint64_t)opt_integer(L, 3, "seed", 1, 0);
    a.tg = lua_newuserdatauv(L, a.m * sizeof *a.tg, 0);
    stats_seq_target *tg = a.tg;
    for (size_t j = 0; j < a.m; j++) {
        lua_rawgeti(L, 2, (lua_Integer)j + 1);
        int idx = lua_gettop(L);
        lua_pushfstring(L, "targets[%I].", (lua_Integer)j + 1);
        const char *what = lua_tostring(L, -1);
        tg[j].test = test >= 0 ? test : field_choice(L, idx, 2, what, "test", seq_tests, -1);
        tg[j].shape = field_choice(L, idx, 2, what, "shape", seq_shapes, -1);
        tg[j].alpha = field_number(L, idx, 2, what, "alpha", STATS_DEFAULT_ALPHA);
        lua_pop(L, 2);
    }
    return a;
}

static int l_seq_calibrate(lua_State *L)
{
    static const char *const known_target[] = {"test", "shape", "alpha", NULL};
    seq_targets a = check_targets(L, known_target, -1, 100000);
    size_t K = a.K, m = a.m;
    stats_seq_target *tg = a.tg;
    stats_seq_calibration *out = lua_newuserdatauv(L, m * sizeof *out, 0);
    stats_error err;
    int status = stats_seq_calibrate(a.n, K, tg, m, a.studies, a.seed, out, &err);
    if (status)
        return raise_status(L, status, &err, NULL);
    lua_createtable(L, (int)m, 0);
    for (size_t j = 0; j < m; j++) {
        lua_createtable(L, 0, 7);
        lua_pushstring(L, seq_tests[tg[j].test]);
        lua_setfield(L, -2, "test");
        lua_pushstring(L, seq_shapes[tg[j].shape]);
        lua_setfield(L, -2, "shape");
        set_number(L, "alpha", tg[j].alpha);
        set_number(L, "c", out[j].c);
        set_list(L, "bounds", out[j].bounds, K);
        set_number(L, "error", out[j].error);
        set_number(L, "next_error", out[j].next_error);
        lua_rawseti(L, -2, (lua_Integer)j + 1);
    }
    return 1;
}

/* Field key of the table at idx, a list of K numbers, into dst (name: what .. key); NULL
 * when absent. */
static const double *field_list(lua_State *L, int idx, const char *what, const char *key,
                                size_t K, double *dst)
{
    if (lua_getfield(L, idx, key) == LUA_TNIL) {
        lua_pop(L, 1);
        return NULL;
    }
    size_t nb;
    lua_pushfstring(L, "%s%s", what, key);
    const double *b = check_vector_at(L, lua_gettop(L) - 1, 2, lua_tostring(L, -1), &nb);
    luaL_argcheck(L, nb == K, 2, lua_pushfstring(L, "%s%s: %d values expected", what, key, (int)K));
    memcpy(dst, b, K * sizeof *dst);
    lua_pop(L, 3);
    return dst;
}

static int l_seq_simulate(lua_State *L)
{
    static const char *const known[] = {"dist", "m", "shift", "studies", "seed", NULL};
    static const char *const known_rule[] = {"test",  "shape", "c",     "bounds",
                                             "atom",  "gamma", "alpha", NULL};
    lua_settop(L, 3);
    size_t K;
    const size_t *n = check_sizes(L, 1, &K);
    size_t m = check_list_of_tables(L, 2, "rules", known_rule);
    check_options(L, 3, known);
    stats_seq_sim_opts o = {
        .dist = lua_isnil(L, 3) ? STATS_SEQ_NORMAL
                                : field_choice(L, 3, 3, "", "dist", seq_dists, STATS_SEQ_NORMAL),
        .m = (size_t)opt_integer(L, 3, "m", 1, 1),
        .shift = opt_number(L, 3, "shift", 0.0),
        .studies = (size_t)opt_integer(L, 3, "studies", 100000, 1),
        .seed = (uint64_t)opt_integer(L, 3, "seed", 1, 0)};
    stats_seq_rule *rules = lua_newuserdatauv(L, m * sizeof *rules, 0);
    stats_seq_sim_result *out = lua_newuserdatauv(L, m * sizeof *out, 0);
    double *given = lua_newuserdatauv(L, (m ? m : 1) * 3 * K * sizeof *given, 0);
    for (size_t j = 0; j < m; j++) {
        lua_rawgeti(L, 2, (lua_Integer)j + 1);
        int idx = lua_gettop(L);
        lua_pushfstring(L, "rules[%I].", (lua_Integer)j + 1);
        const char *what = lua_tostring(L, -1);
        rules[j].test = field_choice(L, idx, 2, what, "test", seq_tests, -1);
        rules[j].shape = field_choice(L, idx, 2, what, "shape", seq_shapes, -1);
        rules[j].alpha = field_number(L, idx, 2, what, "alpha", STATS_DEFAULT_ALPHA);
        int flip = rules[j].test == STATS_SEQ_T_FLIP;
        double *mine = given + 3 * j * K;
        rules[j].bounds = flip ? NULL : field_list(L, idx, what, "bounds", K, mine);
        rules[j].atom = field_list(L, idx, what, "atom", K, mine + K);
        rules[j].gamma = field_list(L, idx, what, "gamma", K, mine + 2 * K);
        int constant = !flip && !rules[j].bounds;
        rules[j].c = constant ? field_number(L, idx, 2, what, "c", NAN) : 0.0;
        lua_pop(L, 2);
    }
    stats_error err;
    int status = stats_seq_simulate(n, K, rules, m, &o, out, &err);
    if (status)
        return raise_status(L, status, &err, NULL);
    lua_createtable(L, (int)m, 0);
    for (size_t j = 0; j < m; j++) {
        lua_createtable(L, 0, 8);
        lua_pushstring(L, seq_tests[rules[j].test]);
        lua_setfield(L, -2, "test");
        lua_pushstring(L, seq_shapes[rules[j].shape]);
        lua_setfield(L, -2, "shape");
        set_number(L, "c", rules[j].c);
        set_number(L, "reject", out[j].reject);
        set_number(L, "se", out[j].se);
        set_integer(L, "rejections", (lua_Integer)out[j].rejections);
        set_list(L, "stop", out[j].stop, K);
        set_number(L, "expected_n", out[j].expected_n);
        lua_rawseti(L, -2, (lua_Integer)j + 1);
    }
    return 1;
}

static int l_seq_rank_spending(lua_State *L)
{
    static const char *const known_target[] = {"shape", "alpha", NULL};
    seq_targets a = check_targets(L, known_target, STATS_SEQ_SIGNED_RANK, 1000000);
    size_t K = a.K, m = a.m;
    stats_seq_target *tg = a.tg;
    stats_seq_rank_design *out = lua_newuserdatauv(L, m * sizeof *out, 0);
    stats_error err;
    int status = stats_seq_rank_spending(a.n, K, tg, m, a.studies, a.seed, out, &err);
    if (status)
        return raise_status(L, status, &err, NULL);
    lua_createtable(L, (int)m, 0);
    for (size_t j = 0; j < m; j++) {
        lua_createtable(L, 0, 9);
        lua_pushstring(L, seq_shapes[tg[j].shape]);
        lua_setfield(L, -2, "shape");
        set_number(L, "alpha", tg[j].alpha);
        set_list(L, "bounds", out[j].bounds, K);
        set_list(L, "atom", out[j].atom, K);
        set_list(L, "gamma", out[j].gamma, K);
        set_list(L, "spent", out[j].spent, K);
        set_list(L, "next", out[j].next, K);
        set_list(L, "target", out[j].target, K);
        lua_pushboolean(L, out[j].exact);
        lua_setfield(L, -2, "exact");
        lua_rawseti(L, -2, (lua_Integer)j + 1);
    }
    return 1;
}

/* The comparison key of options table arg: an integer >= 0, required. */
static uint64_t check_key(lua_State *L, int arg)
{
    lua_Integer key = opt_integer(L, arg, "key", -1, 0);
    luaL_argcheck(L, key >= 0, arg, "key: the comparison's key (an integer >= 0) expected");
    return (uint64_t)key;
}

static int l_seq_flip_t(lua_State *L)
{
    static const char *const known[] = {"shape", "alpha", "key", NULL};
    lua_settop(L, 3);
    size_t nd, K;
    const double *d = check_vector(L, 1, "d", &nd);
    const size_t *n = check_sizes(L, 2, &K);
    check_options(L, 3, known);
    int shape = lua_isnil(L, 3) ? STATS_SEQ_OBF
                                : field_choice(L, 3, 3, "", "shape", seq_shapes, STATS_SEQ_OBF);
    double alpha = opt_number(L, 3, "alpha", STATS_DEFAULT_ALPHA);
    uint64_t key = check_key(L, 3);
    size_t looks = 0;
    while (looks < K && n[looks] <= nd)
        looks++;
    luaL_argcheck(L, looks >= 1, 1,
                  lua_pushfstring(L, "d: at least n[1] = %d differences expected", (int)n[0]));
    stats_seq_flip_result r;
    stats_error err;
    int status = stats_seq_flip_t(d, n, K, looks, shape, alpha, key, &r, &err);
    if (status)
        return raise_status(L, status, &err, NULL);
    double crossed[STATS_SEQ_MAX_LOOKS], allowed[STATS_SEQ_MAX_LOOKS];
    for (size_t k = 0; k < looks; k++) {
        crossed[k] = (double)r.crossed[k];
        allowed[k] = (double)r.allowed[k];
    }
    lua_createtable(L, 0, 6);
    set_integer(L, "looks", (lua_Integer)looks);
    set_list(L, "bounds", r.bounds, looks);
    set_list(L, "z", r.z, looks);
    set_list(L, "t", r.t, looks);
    set_list(L, "crossed", crossed, looks);
    set_list(L, "allowed", allowed, looks);
    if (r.reject_at < looks)
        set_integer(L, "reject_at", (lua_Integer)r.reject_at + 1);
    return 1;
}

static int l_seq_draw(lua_State *L)
{
    lua_Integer key = luaL_checkinteger(L, 1), k = luaL_checkinteger(L, 2);
    luaL_argcheck(L, key >= 0, 1, "key: must be >= 0");
    luaL_argcheck(L, k >= 1 && k <= STATS_SEQ_MAX_LOOKS, 2,
                  lua_pushfstring(L, "look: must be 1 to %d", STATS_SEQ_MAX_LOOKS));
    lua_pushnumber(L, stats_seq_draw((uint64_t)key, (size_t)k - 1));
    return 1;
}

static int l_seq_bounds(lua_State *L)
{
    static const char *const known[] = {"test", "shape", "c", NULL};
    lua_settop(L, 2);
    size_t K;
    const size_t *n = check_sizes(L, 1, &K);
    luaL_checktype(L, 2, LUA_TTABLE);
    check_options(L, 2, known);
    int test = field_choice(L, 2, 2, "", "test", seq_tests, -1);
    int shape = field_choice(L, 2, 2, "", "shape", seq_shapes, -1);
    double c = field_number(L, 2, 2, "", "c", NAN);
    double bounds[STATS_SEQ_MAX_LOOKS];
    stats_error err;
    int status = stats_seq_test_bounds(test, shape, n, K, c, bounds, &err);
    if (status)
        return raise_status(L, status, &err, NULL);
    push_list(L, bounds, K);
    return 1;
}

static const luaL_Reg funcs[] = {
    {"paired", l_paired},
    {"holm", l_holm},
    {"bonferroni", l_bonferroni},
    {"mde", l_mde},
    {"power", l_power},
    {"summary", l_summary},
    {"nct_cdf", l_nct_cdf},
    {"tost", l_tost},
    {"signflip_interval", l_signflip_interval},
    {"seeds_needed", l_seeds_needed},
    {"min_seeds", l_min_seeds},
    {"normal_q", l_normal_q},
    {"sd_upper", l_sd_upper},
    {"clopper_pearson", l_clopper_pearson},
    {"improvement", l_improvement},
    {"anova2", l_anova2},
    {"lr_sensitivity", l_lr_sensitivity},
    {"linfit", l_linfit},
    {"robust", l_robust},
    {"original_from_arms", l_original_from_arms},
    {"replication", l_replication},
    {"ols", l_ols},
    {"seq_constant", l_seq_constant},
    {"seq_spending", l_seq_spending},
    {"seq_crossing", l_seq_crossing},
    {"seq_draw", l_seq_draw},
    {"seq_calibrate", l_seq_calibrate},
    {"seq_simulate", l_seq_simulate},
    {"seq_bounds", l_seq_bounds},
    {"seq_rank_spending", l_seq_rank_spending},
    {"seq_flip_t", l_seq_flip_t},
    {NULL, NULL}};

int luaopen_stats(lua_State *L)
{
    luaL_newlib(L, funcs);
    /* the module's limits and defaults, so Lua never retypes them (like math.pi) */
    set_integer(L, "BOOT_EXACT_MAX", STATS_BOOT_EXACT_MAX);
    set_integer(L, "MIN_RESAMPLES", STATS_MIN_RESAMPLES);
    set_integer(L, "SIGNFLIP_EXACT_MAX", STATS_SIGNFLIP_EXACT_MAX);
    set_number(L, "NCT_MAX_NCP", STATS_NCT_MAX_NCP);
    set_number(L, "DEFAULT_ALPHA", STATS_DEFAULT_ALPHA);
    set_number(L, "DEFAULT_POWER", STATS_DEFAULT_POWER);
    set_integer(L, "DEFAULT_RESAMPLES", STATS_DEFAULT_RESAMPLES);
    set_integer(L, "BCA_CAVEAT_N", STATS_BCA_CAVEAT_N);
    set_integer(L, "SEEDS_MAX", STATS_SEEDS_MAX);
    set_integer(L, "ROBUST_MAX_N", STATS_ROBUST_MAX_N);
    set_integer(L, "SEQ_MAX_LOOKS", STATS_SEQ_MAX_LOOKS);
    set_integer(L, "SEQ_MAX_N", STATS_SEQ_MAX_N);
    set_integer(L, "SEQ_MAX_M", STATS_SEQ_MAX_M);
    set_number(L, "SEQ_MIN_STEP", STATS_SEQ_MIN_STEP);
    set_number(L, "SEQ_Z_MAX", STATS_SEQ_Z_MAX);
    set_integer(L, "SEQ_FLIPS", STATS_SEQ_FLIPS);
    set_integer(L, "SEQ_EXACT_N", STATS_SEQ_EXACT_N);
    return 1;
}
