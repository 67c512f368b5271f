/* Lua module `pcg`: PCG32 generators as full userdata.
 *   local r = pcg.new(seed [, stream])   -- non-negative integers; stream defaults to 0
 *   r:next() -> uint32 as integer;  r:bounded(n) -> [0, n);  r:uniform() -> [0, 1)
 *   r:normal() -> N(0, 1)
 *   pcg.stream(seed, purpose [, index]) -> generator on a per-purpose stream of
 *   engine/pcg.h; purpose is "init", "data", "dropout" or "stats".
 */
#include <lauxlib.h>
#include <lua.h>

#include "../engine/pcg.h"
#include "lrepro.h"

#define PCG_MT "pcg32"

static uint64_t check_nonneg(lua_State *L, int arg, const char *name)
{
    lua_Integer v = repro_checkinteger(L, arg, name);
    if (v < 0) {
        lua_pushfstring(L, "%s: must be >= 0, got %I", name, v);
        luaL_argerror(L, arg, lua_tostring(L, -1));
    }
    return (uint64_t)v;
}

static pcg32 *push_gen(lua_State *L, uint64_t seed, uint64_t stream)
{
    pcg32 *r = (pcg32 *)lua_newuserdatauv(L, sizeof(pcg32), 0);
    luaL_setmetatable(L, PCG_MT);
    pcg32_seed(r, seed, stream);
    return r;
}

static int l_new(lua_State *L)
{
    uint64_t seed = check_nonneg(L, 1, "seed");
    uint64_t stream = lua_isnoneornil(L, 2) ? 0 : check_nonneg(L, 2, "stream");
    push_gen(L, seed, stream);
    return 1;
}

static int l_stream(lua_State *L)
{
    static const char *const names[] = {"init", "data", "dropout", "stats", NULL};
    static const enum pcg_purpose purposes[] = {PCG_PURPOSE_INIT, PCG_PURPOSE_DATA,
                                                PCG_PURPOSE_DROPOUT, PCG_PURPOSE_STATS};
    uint64_t seed = check_nonneg(L, 1, "seed");
    int p = luaL_checkoption(L, 2, NULL, names);
    uint64_t index = lua_isnoneornil(L, 3) ? 0 : check_nonneg(L, 3, "index");
    pcg32 *r = push_gen(L, 0, 0);
    pcg32_stream(r, seed, purposes[p], index);
    return 1;
}

static int m_next(lua_State *L)
{
    pcg32 *r = (pcg32 *)luaL_checkudata(L, 1, PCG_MT);
    lua_pushinteger(L, (lua_Integer)pcg32_next(r));
    return 1;
}

static int m_bounded(lua_State *L)
{
    pcg32 *r = (pcg32 *)luaL_checkudata(L, 1, PCG_MT);
    lua_Integer n = repro_checkinteger(L, 2, "n");
    if (n <= 0 || n > (lua_Integer)UINT32_MAX) {
        lua_pushfstring(L, "n: must be in [1, 2^32-1], got %I", n);
        luaL_argerror(L, 2, lua_tostring(L, -1));
    }
    lua_pushinteger(L, (lua_Integer)pcg32_bounded(r, (uint32_t)n));
    return 1;
}

static int m_uniform(lua_State *L)
{
    pcg32 *r = (pcg32 *)luaL_checkudata(L, 1, PCG_MT);
    lua_pushnumber(L, (lua_Number)pcg32_uniform(r));
    return 1;
}

static int m_normal(lua_State *L)
{
    pcg32 *r = (pcg32 *)luaL_checkudata(L, 1, PCG_MT);
    lua_pushnumber(L, (lua_Number)pcg32_normal(r));
    return 1;
}

static int m_tostring(lua_State *L)
{
    pcg32 *r = (pcg32 *)luaL_checkudata(L, 1, PCG_MT);
    lua_pushfstring(L, "pcg32 (%p)", (void *)r);
    return 1;
}

static const luaL_Reg methods[] = {
    {"next", m_next}, {"bounded", m_bounded}, {"uniform", m_uniform}, {"normal", m_normal},
    {NULL, NULL}};

static const luaL_Reg metamethods[] = {{"__index", NULL}, {"__tostring", m_tostring}, {NULL, NULL}};

static const luaL_Reg funcs[] = {{"new", l_new}, {"stream", l_stream}, {NULL, NULL}};

int luaopen_pcg(lua_State *L)
{
    luaL_newmetatable(L, PCG_MT);
    luaL_setfuncs(L, metamethods, 0);
    luaL_newlibtable(L, methods);
    luaL_setfuncs(L, methods, 0);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
    luaL_newlib(L, funcs);
    return 1;
}
