/* Lua module `stats`: the statistics of stats/stats.h for scripts.
 *   stats.paired(a, b [, {alpha=0.05, resamples=10000, seed=1, exact=false, power=0.8}])
 *       -> table: n, alpha, mean, sd, df, t, p_t, ci_t, p_signflip, p_signflip_se,
 *          p_signflip_min, signflip_exact, ci_percentile, ci_bca, bca_z0, bca_a,
 *          bootstrap_exact, resamples, d_z, g_z, hedges_j, ci_d_z, ci_g_z, power,
 *          mde_d_z, mde, degenerate, reason, flags
 *   stats.holm(p [, alpha=0.05]) -> adjusted, reject      (lists, input order)
 *   stats.bonferroni(p [, alpha=0.05]) -> adjusted, reject
 *   stats.mde(n [, {alpha=0.05, power=0.8, sd=}]) -> table: n, alpha, power, mde_d_z,
 *       mde (only with sd)
 *   stats.power(n, d_z [, {alpha=0.05}]) -> power of the two-sided paired t-test
 *   stats.summary(x) -> table: n, mean, sd, min, max, median, degenerate, reason
 *   stats.nct_cdf(t, df, ncp) -> P(T <= t), T noncentral t
 * Intervals are {lo, hi}.  A quantity that is undefined for the data is absent (nil),
 * never NaN: then `degenerate` is true, `reason` says what and why, and `flags` holds
 * small_n, constant, bca_undefined and/or nct_range (see stats.h for what each
 * removes).  Bad arguments raise "bad argument #k to 'paired' (a[3]: NaN)".
 */
#include <math.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "../stats/stats.h"
#include "lrepro.h"

/* The array x (a table of finite numbers) as a C vector in a userdata left on the
 * stack, so an error later leaks nothing. */
static double *check_vector(lua_State *L, int arg, const char *name, size_t *n)
{
    if (lua_type(L, arg) != LUA_TTABLE) {
        lua_pushfstring(L, "%s: table expected, got %s", name, luaL_typename(L, arg));
        luaL_argerror(L, arg, lua_tostring(L, -1));
    }
    size_t len = (size_t)lua_rawlen(L, arg);
    double *x = (double *)lua_newuserdatauv(L, (len ? len : 1) * sizeof *x, 0);
    for (size_t i = 0; i < len; i++) {
        int type = lua_rawgeti(L, arg, (lua_Integer)i + 1);
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
    if (r.degenerate) {
        lua_pushstring(L, r.reason);
        lua_setfield(L, -2, "reason");
    }
    push_flags(L, r.degenerate);
    return 1;
}

typedef int (*adjust_fn)(const double *, size_t, double, double *, int *, stats_error *);

static int adjust(lua_State *L, adjust_fn fn)
{
    size_t m;
    lua_settop(L, 2);
    const double *p = check_vector(L, 1, "p", &m);
    double alpha = 0.05;
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
    double alpha = opt_number(L, 2, "alpha", 0.05);
    double power = opt_number(L, 2, "power", 0.8);
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
    double alpha = opt_number(L, 3, "alpha", 0.05);
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
        lua_pushstring(L, n == 0 ? "no values: every statistic is undefined"
                                 : "one value: sd is undefined");
        lua_setfield(L, -2, "reason");
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

static const luaL_Reg funcs[] = {
    {"paired", l_paired}, {"holm", l_holm},       {"bonferroni", l_bonferroni},
    {"mde", l_mde},       {"power", l_power},     {"summary", l_summary},
    {"nct_cdf", l_nct_cdf}, {NULL, NULL}};

int luaopen_stats(lua_State *L)
{
    luaL_newlib(L, funcs);
    return 1;
}
