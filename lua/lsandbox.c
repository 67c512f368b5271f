/* Module `repro.sandbox`: evaluate untrusted Lua source (a study file) as data.
 *
 *   sandbox.eval(source, chunkname, limits [, api])
 *       -> true, value                the chunk's first return value, deep-copied
 *       -> false, kind, message       kind: "syntax", "error", "memory", "instructions",
 *                                     "time", "result", "crashed"
 *   limits = { memory_bytes =, instructions =, wall_s =, result_bytes =, depth = }
 *                                     (a field left out takes the default below)
 *   sandbox.LIMITS                    the defaults: a study file's limits, defined here once
 *   api    = { name = function, ... } host functions offered to the chunk as repro.<name>
 *
 * The chunk runs in a child process (fork) in a lua_State of its own: none of the
 * host's tables, functions or metatables exist there (its string metatable is its own).
 * Its libraries are Lua's base functions without load, loadfile, dofile, require,
 * collectgarbage, print, warn and xpcall, and string (without string.dump), table, math
 * (without math.random / randomseed) and utf8; no io, os, debug, package or coroutine.
 * Lua runs message handlers (xpcall) and finalizers (__gc) with hooks off, so an endless
 * loop there would escape the instruction limit: xpcall is hidden and setmetatable
 * refuses a metatable with __gc.
 * Limits: every allocation of that state goes through an allocator that refuses to
 * grow it past memory_bytes; a count hook stops it after `instructions` VM
 * instructions; the host kills the child after wall_s seconds (C code such as a
 * pathological string pattern executes no VM instruction); the result may not exceed
 * result_bytes once encoded, nor nest deeper than `depth` tables.  A limit reached
 * fails the evaluation even if the chunk caught the error with pcall.
 *
 * Only plain data crosses: nil, booleans, numbers, strings and tables of them (keys:
 * strings, numbers, booleans), read raw (no metamethod runs), copied, never shared; a
 * table reachable twice is copied twice, a cycle is refused.  The result reaches the
 * host through a pipe in a small binary encoding and is decoded there.
 *
 * An api function runs in the child, in the host's state as it was at the fork, with
 * copies of the chunk's arguments; its return values are copied back the same way and
 * its errors become the chunk's errors (`repro.name: message`).  It must be a pure,
 * read-only function of its arguments (and of files): nothing it changes outlives the
 * evaluation.  It runs under the chunk's limits, not beside them: in the child the
 * host's state allocates through the same budget (what it holds beyond its size at the
 * fork counts against memory_bytes with the chunk's own memory), its VM instructions
 * count against `instructions` with the chunk's, every call counts as at least
 * HOOK_EVERY instructions (a loop of calls ends at the limit, however little each does),
 * and the wall-clock and CPU limits cover the whole child.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "lrepro.h"

#define HOOK_EVERY 1000   /* VM instructions between two count-hook calls */
#define MAX_DEPTH 256     /* hard ceiling for limits.depth */
#define MSG_MAX 4096      /* an error message is cut to this many bytes */

/* ---- encoding: tag byte, then the value --------------------------------------- */
/* 'n' nil, 'f' false, 't' true, 'i' int64 (little endian), 'd' double (its bits),
 * 's' u32 length + bytes, 'T' u32 pair count + (key, value) pairs. */

typedef struct {
    unsigned char *p;
    size_t n, cap, limit;
} wbuf;

static int wput(wbuf *b, const void *src, size_t n)
{
    if (n > b->limit - b->n)
        return -1;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n)
            cap *= 2;
        unsigned char *q = realloc(b->p, cap);
        if (!q)
            return -1;
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
    return 0;
}

static int wput_u64(wbuf *b, uint64_t v)
{
    unsigned char x[8];
    for (int i = 0; i < 8; i++)
        x[i] = (unsigned char)(v >> (8 * i));
    return wput(b, x, 8);
}

static int wput_u32(wbuf *b, uint32_t v)
{
    unsigned char x[4];
    for (int i = 0; i < 4; i++)
        x[i] = (unsigned char)(v >> (8 * i));
    return wput(b, x, 4);
}

typedef struct {
    wbuf *b;
    int depth, max_depth;
    const void *open[MAX_DEPTH]; /* tables being encoded: a cycle check */
    char path[512];
    char err[MSG_MAX];
} encoder;

static void path_push(encoder *e, lua_State *L, int key, size_t *saved)
{
    size_t n = strlen(e->path);
    *saved = n;
    size_t room = sizeof e->path - n;
    switch (lua_type(L, key)) {
    case LUA_TSTRING: {
        const char *s = lua_tostring(L, key);
        int ident = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_';
        for (const char *q = s; *q && ident; q++)
            ident = (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || *q == '_' ||
                    (*q >= '0' && *q <= '9');
        snprintf(e->path + n, room, ident ? "%s%s" : "%s[\"%.40s\"]", n && ident ? "." : "",
                 s);
        break;
    }
    case LUA_TNUMBER:
        if (lua_isinteger(L, key))
            snprintf(e->path + n, room, "[%lld]", (long long)lua_tointeger(L, key));
        else
            snprintf(e->path + n, room, "[%.17g]", (double)lua_tonumber(L, key));
        break;
    case LUA_TBOOLEAN:
        snprintf(e->path + n, room, "[%s]", lua_toboolean(L, key) ? "true" : "false");
        break;
    default:
        snprintf(e->path + n, room, "[%s key]", luaL_typename(L, key));
    }
}

static int enc_fail(encoder *e, const char *what)
{
    if (e->err[0] == '\0')
        snprintf(e->err, sizeof e->err, "%s%s%s", e->path, e->path[0] ? ": " : "", what);
    return -1;
}

static int encode(lua_State *L, int idx, encoder *e, int is_key);

static int encode_table(lua_State *L, int idx, encoder *e)
{
    const void *t = lua_topointer(L, idx);
    for (int i = 0; i < e->depth; i++)
        if (e->open[i] == t)
            return enc_fail(e, "the table contains itself (a cycle cannot cross to the host)");
    if (e->depth >= e->max_depth) {
        char msg[128];
        snprintf(msg, sizeof msg, "tables nested deeper than %d levels", e->max_depth);
        return enc_fail(e, msg);
    }
    if (!lua_checkstack(L, 4))
        return enc_fail(e, "out of stack space");
    uint32_t count = 0;
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        lua_pop(L, 1);
        count++;
    }
    if (wput(e->b, "T", 1) || wput_u32(e->b, count))
        return enc_fail(e, "too large");
    e->open[e->depth++] = t;
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        int k = lua_gettop(L) - 1, v = lua_gettop(L);
        size_t saved;
        path_push(e, L, k, &saved);
        if (encode(L, k, e, 1) || encode(L, v, e, 0)) {
            lua_pop(L, 2);
            return -1;
        }
        e->path[saved] = '\0';
        lua_pop(L, 1);
    }
    e->depth--;
    return 0;
}

/* Encodes the value at idx (raw access only: no metamethod runs). */
static int encode(lua_State *L, int idx, encoder *e, int is_key)
{
    idx = lua_absindex(L, idx);
    switch (lua_type(L, idx)) {
    case LUA_TNIL:
        return wput(e->b, "n", 1) ? enc_fail(e, "too large") : 0;
    case LUA_TBOOLEAN:
        return wput(e->b, lua_toboolean(L, idx) ? "t" : "f", 1) ? enc_fail(e, "too large") : 0;
    case LUA_TNUMBER:
        if (lua_isinteger(L, idx)) {
            if (wput(e->b, "i", 1) || wput_u64(e->b, (uint64_t)lua_tointeger(L, idx)))
                return enc_fail(e, "too large");
        } else {
            double d = (double)lua_tonumber(L, idx);
            uint64_t bits;
            memcpy(&bits, &d, sizeof bits);
            if (wput(e->b, "d", 1) || wput_u64(e->b, bits))
                return enc_fail(e, "too large");
        }
        return 0;
    case LUA_TSTRING: {
        size_t n;
        const char *s = lua_tolstring(L, idx, &n); /* a string: converts nothing */
        if (n > UINT32_MAX || wput(e->b, "s", 1) || wput_u32(e->b, (uint32_t)n) ||
            wput(e->b, s, n))
            return enc_fail(e, "too large");
        return 0;
    }
    case LUA_TTABLE:
        if (is_key)
            return enc_fail(e, "a table used as a key cannot cross to the host");
        return encode_table(L, idx, e);
    default: {
        char msg[200];
        snprintf(msg, sizeof msg, "a %s cannot cross to the host (only plain data: tables, "
                 "strings, numbers and booleans)", luaL_typename(L, idx));
        return enc_fail(e, msg);
    }
    }
}

/* ---- decoding (bounds-checked; the bytes come from another process) ----------- */

typedef struct {
    const unsigned char *p;
    size_t n, pos;
    int max_depth;
} reader;

static int rget(reader *r, void *dst, size_t n)
{
    if (n > r->n - r->pos)
        return -1;
    memcpy(dst, r->p + r->pos, n);
    r->pos += n;
    return 0;
}

static int rget_u64(reader *r, uint64_t *v)
{
    unsigned char x[8];
    if (rget(r, x, 8))
        return -1;
    *v = 0;
    for (int i = 0; i < 8; i++)
        *v |= (uint64_t)x[i] << (8 * i);
    return 0;
}

static int rget_u32(reader *r, uint32_t *v)
{
    unsigned char x[4];
    if (rget(r, x, 4))
        return -1;
    *v = (uint32_t)x[0] | (uint32_t)x[1] << 8 | (uint32_t)x[2] << 16 | (uint32_t)x[3] << 24;
    return 0;
}

/* Pushes one decoded value; -1 on malformed input (nothing pushed).  Raises only on
 * out of memory. */
static int decode(lua_State *L, reader *r, int depth, int is_key)
{
    unsigned char tag;
    if (rget(r, &tag, 1) || !lua_checkstack(L, 4))
        return -1;
    switch (tag) {
    case 'n':
        if (is_key)
            return -1;
        lua_pushnil(L);
        return 0;
    case 'f':
    case 't':
        lua_pushboolean(L, tag == 't');
        return 0;
    case 'i': {
        uint64_t v;
        if (rget_u64(r, &v))
            return -1;
        lua_pushinteger(L, (lua_Integer)(int64_t)v);
        return 0;
    }
    case 'd': {
        uint64_t bits;
        double d;
        if (rget_u64(r, &bits))
            return -1;
        memcpy(&d, &bits, sizeof d);
        if (is_key && isnan(d))
            return -1;
        lua_pushnumber(L, (lua_Number)d);
        return 0;
    }
    case 's': {
        uint32_t n;
        if (rget_u32(r, &n) || n > r->n - r->pos)
            return -1;
        lua_pushlstring(L, (const char *)r->p + r->pos, n);
        r->pos += n;
        return 0;
    }
    case 'T': {
        uint32_t count;
        if (is_key || depth >= r->max_depth || rget_u32(r, &count))
            return -1;
        lua_createtable(L, 0, count < 64 ? (int)count : 64);
        for (uint32_t i = 0; i < count; i++) {
            if (decode(L, r, depth + 1, 1) != 0) {
                lua_pop(L, 1);
                return -1;
            }
            if (decode(L, r, depth + 1, 0) != 0) {
                lua_pop(L, 2);
                return -1;
            }
            lua_rawset(L, -3);
        }
        return 0;
    }
    default:
        return -1;
    }
}

/* ---- the child: a capped state ------------------------------------------------- */

typedef struct {
    size_t used, limit;
    long long host_used;   /* the host state's growth since the fork (may be negative) */
    lua_Alloc host_alloc;  /* the host state's own allocator, and its ud */
    void *host_ud;
    int over_memory;
    long long hooks, max_hooks;
    int over_steps;
    int phase; /* 0 set-up, 1 load, 2 run, 3 encode */
    const char *src;
    size_t src_len;
    const char *chunkname;
    lua_State *host; /* the host's state, as copied by fork */
    int api_ref;     /* registry reference of the api table in host, or LUA_NOREF */
    int max_depth;
    wbuf out;        /* the encoded result */
    wbuf call;       /* scratch for api calls */
    char err[MSG_MAX];
} box;

/* The left of memory_bytes for both states: the chunk's state and the host's growth. */
static long long box_left(const box *b)
{
    return (long long)b->limit - (long long)b->used - b->host_used;
}

static void *box_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    box *b = ud;
    if (ptr == NULL)
        osize = 0; /* then osize only tells the kind of object */
    if (nsize == 0) {
        free(ptr);
        b->used -= osize;
        return NULL;
    }
    if (nsize > osize && (long long)(nsize - osize) > box_left(b)) {
        b->over_memory = 1;
        return NULL;
    }
    void *q = realloc(ptr, nsize);
    if (q == NULL) {
        if (nsize <= osize)
            return ptr; /* Lua assumes shrinking never fails: keep the larger block */
        b->over_memory = 1;
        return NULL;
    }
    b->used = b->used - osize + nsize;
    return q;
}

/* The host state's allocator in the child: its own, charged to the box's budget. */
static void *host_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    box *b = ud;
    size_t old = ptr == NULL ? 0 : osize;
    if (nsize > old && (long long)(nsize - old) > box_left(b)) {
        b->over_memory = 1;
        return NULL;
    }
    void *q = b->host_alloc(b->host_ud, ptr, osize, nsize);
    if (q != NULL || nsize == 0)
        b->host_used += (long long)nsize - (long long)old;
    else
        b->over_memory = 1;
    return q;
}

static box *box_of(lua_State *S)
{
    void *ud;
    lua_getallocf(S, &ud);
    return ud;
}

static void box_hook(lua_State *S, lua_Debug *ar)
{
    (void)ar;
    box *b = box_of(S);
    if (++b->hooks > b->max_hooks || b->over_steps) {
        b->over_steps = 1;
        /* From now on every instruction fails, so no pcall can keep the chunk going. */
        lua_sethook(S, box_hook, LUA_MASKCOUNT, 1);
        luaL_error(S, "instruction limit reached");
    }
}

/* The message of an error object, raw (no __tostring or __index runs). */
static void error_text(lua_State *L, int idx, char *dst, size_t size)
{
    const char *msg = NULL;
    if (lua_type(L, idx) == LUA_TSTRING) {
        msg = lua_tostring(L, idx);
    } else if (lua_type(L, idx) == LUA_TTABLE) {
        lua_pushliteral(L, "message");
        if (lua_rawget(L, idx < 0 ? idx - 1 : idx) == LUA_TSTRING)
            msg = lua_tostring(L, -1);
        lua_pop(L, 1); /* the string stays alive: the table holds it */
    }
    if (msg)
        snprintf(dst, size, "%s", msg);
    else
        snprintf(dst, size, "raised an error value that is not a message (a %s)",
                 luaL_typename(L, idx));
}

typedef struct {
    box *b;
    const char *name;
    int nargs;
    int nres;
} api_call;

/* In the host state (protected): decode the arguments, call, encode the results. */
static int api_host_side(lua_State *L)
{
    api_call *c = lua_touserdata(L, 1);
    box *b = c->b;
    lua_rawgeti(L, LUA_REGISTRYINDEX, b->api_ref);
    lua_getfield(L, -1, c->name);
    int fn = lua_gettop(L);
    reader r = {b->call.p, b->call.n, 0, b->max_depth + 1};
    for (int i = 0; i < c->nargs; i++)
        if (decode(L, &r, 0, 0) != 0)
            return luaL_error(L, "internal error: cannot decode the arguments");
    lua_call(L, c->nargs, LUA_MULTRET);
    int nres = lua_gettop(L) - fn + 1;
    encoder *e = calloc(1, sizeof *e);
    if (!e)
        return luaL_error(L, "out of memory");
    b->call.n = 0;
    e->b = &b->call;
    e->max_depth = b->max_depth;
    for (int i = 0; i < nres; i++) {
        if (encode(L, fn + i, e, 0) != 0) {
            snprintf(b->err, sizeof b->err, "its result %d: %.3900s", i + 1, e->err);
            free(e);
            lua_pushstring(L, b->err);
            return lua_error(L);
        }
    }
    free(e);
    c->nres = nres;
    return 0;
}

/* repro.<name>(...) inside the sandbox. */
static int api_call_fn(lua_State *S)
{
    box *b = lua_touserdata(S, lua_upvalueindex(1));
    api_call c = {b, lua_tostring(S, lua_upvalueindex(2)), lua_gettop(S), 0};
    encoder *e = calloc(1, sizeof *e);
    if (!e)
        return luaL_error(S, "out of memory");
    b->call.n = 0;
    e->b = &b->call;
    e->max_depth = b->max_depth;
    for (int i = 1; i <= c.nargs; i++) {
        if (encode(S, i, e, 0) != 0) {
            char msg[MSG_MAX + 64];
            snprintf(msg, sizeof msg, "repro.%s: argument %d%s%s", c.name, i,
                     e->err[0] == '[' || e->err[0] == '.' ? "" : ": ", e->err);
            free(e);
            lua_pushstring(S, msg);
            return lua_error(S);
        }
    }
    free(e);
    /* a call counts as HOOK_EVERY instructions at least (box_hook counts the rest) */
    if (b->over_steps || ++b->hooks > b->max_hooks) {
        b->over_steps = 1;
        return luaL_error(S, "instruction limit reached");
    }
    lua_State *L = b->host;
    int top = lua_gettop(L);
    lua_pushcfunction(L, api_host_side);
    lua_pushlightuserdata(L, &c);
    if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
        char msg[MSG_MAX];
        error_text(L, -1, msg, sizeof msg);
        lua_settop(L, top);
        return luaL_error(S, "repro.%s: %s", c.name, msg);
    }
    lua_settop(L, top);
    reader r = {b->call.p, b->call.n, 0, b->max_depth + 1};
    for (int i = 0; i < c.nres; i++)
        if (decode(S, &r, 0, 0) != 0)
            return luaL_error(S, "repro.%s: internal error: cannot decode its result", c.name);
    return c.nres;
}

/* setmetatable(t, mt) as Lua's, refusing a __gc metamethod (see the header). */
static int box_setmetatable(lua_State *S)
{
    int t = lua_type(S, 2);
    luaL_checktype(S, 1, LUA_TTABLE);
    luaL_argexpected(S, t == LUA_TNIL || t == LUA_TTABLE, 2, "nil or table");
    if (t == LUA_TTABLE) {
        lua_pushliteral(S, "__gc");
        if (lua_rawget(S, 2) != LUA_TNIL)
            return luaL_error(S, "setmetatable: a __gc metamethod is not allowed in a study file");
        lua_pop(S, 1);
    }
    if (luaL_getmetafield(S, 1, "__metatable") != LUA_TNIL)
        return luaL_error(S, "cannot change a protected metatable");
    lua_settop(S, 2);
    lua_setmetatable(S, 1);
    return 1;
}

static int api_unknown(lua_State *S)
{
    const char *k = lua_tostring(S, 2);
    return luaL_error(S, "repro.%s: no such function (the functions offered are listed in "
                      "lua/repro/study/init.lua, M.API)", k ? k : "?");
}

/* Runs protected in the sandbox state: libraries, the api table, the chunk, and the
 * encoding of its result into b->out. */
static int box_main(lua_State *S)
{
    box *b = lua_touserdata(S, 1);
    static const luaL_Reg libs[] = {{LUA_GNAME, luaopen_base},
                                    {LUA_STRLIBNAME, luaopen_string},
                                    {LUA_TABLIBNAME, luaopen_table},
                                    {LUA_MATHLIBNAME, luaopen_math},
                                    {LUA_UTF8LIBNAME, luaopen_utf8},
                                    {NULL, NULL}};
    for (const luaL_Reg *l = libs; l->name; l++) {
        luaL_requiref(S, l->name, l->func, 1);
        lua_pop(S, 1);
    }
    static const char *const hidden_base[] = {"load",  "loadfile", "dofile", "require",
                                              "collectgarbage", "print", "warn", "xpcall",
                                              NULL};
    for (int i = 0; hidden_base[i]; i++) {
        lua_pushnil(S);
        lua_setglobal(S, hidden_base[i]);
    }
    lua_pushcfunction(S, box_setmetatable);
    lua_setglobal(S, "setmetatable");
    lua_getglobal(S, LUA_STRLIBNAME);
    lua_pushnil(S);
    lua_setfield(S, -2, "dump");
    lua_pop(S, 1);
    lua_getglobal(S, LUA_MATHLIBNAME);
    lua_pushnil(S);
    lua_setfield(S, -2, "random");
    lua_pushnil(S);
    lua_setfield(S, -2, "randomseed");
    lua_pop(S, 1);

    lua_newtable(S); /* repro: the api */
    if (b->api_ref != LUA_NOREF) {
        lua_State *L = b->host;
        lua_rawgeti(L, LUA_REGISTRYINDEX, b->api_ref);
        lua_pushnil(L);
        while (lua_next(L, -2) != 0) {
            if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TFUNCTION) {
                lua_pushlightuserdata(S, b);
                lua_pushstring(S, lua_tostring(L, -2));
                lua_pushcclosure(S, api_call_fn, 2);
                lua_setfield(S, -2, lua_tostring(L, -2));
            }
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    lua_newtable(S);
    lua_pushcfunction(S, api_unknown);
    lua_setfield(S, -2, "__index");
    lua_setmetatable(S, -2);
    lua_setglobal(S, "repro");

    b->phase = 1;
    if (luaL_loadbufferx(S, b->src, b->src_len, b->chunkname, "t") != LUA_OK)
        return lua_error(S);
    b->phase = 2;
    lua_sethook(S, box_hook, LUA_MASKCOUNT, HOOK_EVERY);
    lua_call(S, 0, 1);
    lua_sethook(S, NULL, 0, 0);
    b->phase = 3;
    encoder *e = calloc(1, sizeof *e);
    if (!e)
        return luaL_error(S, "out of memory");
    e->b = &b->out;
    e->max_depth = b->max_depth;
    int rc = encode(S, -1, e, 0);
    if (rc != 0)
        snprintf(b->err, sizeof b->err, "%s", e->err);
    free(e);
    lua_pushboolean(S, rc == 0);
    return 1;
}

static void write_all(int fd, const void *p, size_t n)
{
    const char *q = p;
    while (n > 0) {
        ssize_t w = write(fd, q, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        q += w;
        n -= (size_t)w;
    }
}

/* Reply: kind byte ('o' ok, or the first letter of the error kind), u64 length,
 * payload (the encoded value, or the message). */
static void reply(int fd, char kind, const void *p, size_t n)
{
    unsigned char head[9];
    head[0] = (unsigned char)kind;
    for (int i = 0; i < 8; i++)
        head[1 + i] = (unsigned char)((uint64_t)n >> (8 * i));
    write_all(fd, head, sizeof head);
    write_all(fd, p, n);
}

static int box_panic(lua_State *S)
{
    (void)S;
    _exit(70);
}

static void child(int fd, box *b, double wall_s)
{
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    struct rlimit cpu = {(rlim_t)wall_s + 2, (rlim_t)wall_s + 3};
    setrlimit(RLIMIT_CPU, &cpu);

    lua_State *S = lua_newstate(box_alloc, b);
    if (S == NULL) {
        reply(fd, 'm', "", 0);
        _exit(0);
    }
    lua_atpanic(S, box_panic);
    if (b->api_ref != LUA_NOREF) {
        /* the api functions run in the host's state: same budget, same count */
        b->host_alloc = lua_getallocf(b->host, &b->host_ud);
        lua_setallocf(b->host, host_alloc, b);
        lua_sethook(b->host, box_hook, LUA_MASKCOUNT, HOOK_EVERY);
    }
    lua_pushcfunction(S, box_main);
    lua_pushlightuserdata(S, b);
    int status = lua_pcall(S, 1, 1, 0);
    if (b->over_steps) {
        reply(fd, 'i', "", 0);
    } else if (b->over_memory) {
        reply(fd, 'm', "", 0);
    } else if (status != LUA_OK) {
        error_text(S, -1, b->err, sizeof b->err);
        reply(fd, b->phase == 1 ? 's' : 'e', b->err, strlen(b->err));
    } else if (!lua_toboolean(S, -1)) {
        reply(fd, 'r', b->err, strlen(b->err));
    } else {
        reply(fd, 'o', b->out.p, b->out.n);
    }
    _exit(0); /* no lua_close: no finalizer of the chunk ever runs */
}

static double field_num(lua_State *L, int t, const char *k, double dflt)
{
    lua_getfield(L, t, k);
    double v = lua_isnil(L, -1) ? dflt : luaL_checknumber(L, -1);
    lua_pop(L, 1);
    return v;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int push_failure(lua_State *L, const char *kind, const char *msg, size_t n)
{
    lua_pushboolean(L, 0);
    lua_pushstring(L, kind);
    lua_pushlstring(L, msg, n);
    return 3;
}

/* A study file's limits, the defaults of sandbox.eval and its exported sandbox.LIMITS:
 * 10^8 VM instructions took 0.4 s on the reference machine, so the wall clock (which also
 * bounds time spent in C, e.g. a pathological string pattern) leaves room on a loaded
 * one; the result becomes host tables. */
#define LIMIT_MEMORY_BYTES (256.0 * 1024 * 1024)
#define LIMIT_INSTRUCTIONS 1e8
#define LIMIT_WALL_S 20.0
#define LIMIT_RESULT_BYTES (4.0 * 1024 * 1024)
#define LIMIT_DEPTH 64

/* The limits argument of sandbox.eval (argument 3), each checked against its range. */
typedef struct {
    double memory, instructions, wall_s, result_bytes, depth;
} limits;

static limits check_limits(lua_State *L)
{
    luaL_checktype(L, 3, LUA_TTABLE);
    limits lim;
    lim.memory = field_num(L, 3, "memory_bytes", LIMIT_MEMORY_BYTES);
    lim.instructions = field_num(L, 3, "instructions", LIMIT_INSTRUCTIONS);
    lim.wall_s = field_num(L, 3, "wall_s", LIMIT_WALL_S);
    lim.result_bytes = field_num(L, 3, "result_bytes", LIMIT_RESULT_BYTES);
    lim.depth = field_num(L, 3, "depth", LIMIT_DEPTH);
    luaL_argcheck(L, lim.memory >= 65536 && lim.memory <= 1e12, 3, "memory_bytes: out of range");
    luaL_argcheck(L, lim.instructions >= HOOK_EVERY && lim.instructions <= 1e15, 3,
                  "instructions: out of range");
    luaL_argcheck(L, lim.wall_s > 0 && lim.wall_s <= 3600, 3, "wall_s: out of range");
    luaL_argcheck(L, lim.result_bytes >= 64 && lim.result_bytes <= 1e9, 3,
                  "result_bytes: out of range");
    luaL_argcheck(L, lim.depth >= 1 && lim.depth < MAX_DEPTH, 3, "depth: out of range");
    return lim;
}

/* The child's reply from fd into buf, until EOF, wall_s seconds or more than `limit`
 * bytes: 0, or 't' (timed out) or 'b' (too big). */
static int read_reply(luaL_Buffer *buf, int fd, double wall_s, size_t limit)
{
    double deadline = now_s() + wall_s;
    for (;;) {
        double left = deadline - now_s();
        if (left <= 0)
            return 't';
        struct pollfd p = {fd, POLLIN, 0};
        int rc = poll(&p, 1, (int)(left * 1000) + 1);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc == 0)
            continue; /* the deadline check above ends it */
        if (rc < 0)
            return 0;
        char *dst = luaL_prepbuffsize(buf, 65536);
        ssize_t got = read(fd, dst, 65536);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return 0;
        luaL_addsize(buf, (size_t)got);
        if (luaL_bufflen(buf) > limit)
            return 'b';
    }
}

/* sandbox.eval's results from the child's reply p[0 .. n) (a kind byte, a 64-bit length,
 * the payload) and its wait status st. */
static int push_reply(lua_State *L, const unsigned char *p, size_t n, int st, int depth)
{
    uint64_t len = 0;
    if (n >= 9)
        for (int i = 0; i < 8; i++)
            len |= (uint64_t)p[1 + i] << (8 * i);
    if (n < 9 || len != n - 9) {
        char why[160];
        if (WIFSIGNALED(st))
            snprintf(why, sizeof why, "the evaluating process was killed by signal %d (%s)",
                     WTERMSIG(st), strsignal(WTERMSIG(st)));
        else
            snprintf(why, sizeof why, "the evaluating process exited with status %d and no "
                     "complete reply", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        if (WIFSIGNALED(st) && WTERMSIG(st) == SIGXCPU)
            return push_failure(L, "time", "", 0);
        return push_failure(L, "crashed", why, strlen(why));
    }
    const char *payload = (const char *)p + 9;
    switch (p[0]) {
    case 'o': {
        reader r = {p + 9, n - 9, 0, depth + 1};
        int base = lua_gettop(L);
        lua_pushboolean(L, 1);
        if (decode(L, &r, 0, 0) != 0 || r.pos != r.n) {
            lua_settop(L, base);
            return push_failure(L, "crashed", "malformed reply", 15);
        }
        return 2;
    }
    case 's':
        return push_failure(L, "syntax", payload, n - 9);
    case 'e':
        return push_failure(L, "error", payload, n - 9);
    case 'm':
        return push_failure(L, "memory", payload, n - 9);
    case 'i':
        return push_failure(L, "instructions", payload, n - 9);
    case 'r':
        return push_failure(L, "result", payload, n - 9);
    default:
        return push_failure(L, "crashed", "malformed reply", 15);
    }
}

static int sb_eval(lua_State *L)
{
    size_t src_len;
    const char *src = luaL_checklstring(L, 1, &src_len);
    const char *chunkname = luaL_checkstring(L, 2);
    limits lim = check_limits(L);
    int api_ref = LUA_NOREF;
    if (!lua_isnoneornil(L, 4)) {
        luaL_checktype(L, 4, LUA_TTABLE);
        lua_pushvalue(L, 4);
        api_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    }
    luaL_Buffer buf;
    luaL_buffinit(L, &buf); /* grows on the stack: nothing leaks if a push raises */

    int fds[2];
    if (pipe(fds) != 0) {
        luaL_unref(L, LUA_REGISTRYINDEX, api_ref);
        return luaL_error(L, "cannot evaluate %s: pipe: %s", chunkname, strerror(errno));
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        luaL_unref(L, LUA_REGISTRYINDEX, api_ref);
        return luaL_error(L, "cannot evaluate %s: fork: %s", chunkname, strerror(e));
    }
    if (pid == 0) {
        close(fds[0]);
        box b;
        memset(&b, 0, sizeof b);
        b.limit = (size_t)lim.memory;
        b.max_hooks = (long long)(lim.instructions / HOOK_EVERY);
        b.src = src;
        b.src_len = src_len;
        b.chunkname = chunkname;
        b.host = L;
        b.api_ref = api_ref;
        b.max_depth = (int)lim.depth;
        b.out.limit = (size_t)lim.result_bytes;
        b.call.limit = (size_t)lim.result_bytes;
        child(fds[1], &b, lim.wall_s);
    }
    close(fds[1]);
    luaL_unref(L, LUA_REGISTRYINDEX, api_ref);

    int cut = read_reply(&buf, fds[0], lim.wall_s, (size_t)lim.result_bytes + MSG_MAX + 64);
    close(fds[0]);
    if (cut)
        kill(pid, SIGKILL);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    luaL_pushresult(&buf);
    size_t n;
    const unsigned char *p = (const unsigned char *)lua_tolstring(L, -1, &n);
    if (cut == 't')
        return push_failure(L, "time", "", 0);
    if (cut == 'b')
        return push_failure(L, "result", "too large", 9);
    return push_reply(L, p, n, st, (int)lim.depth);
}

int luaopen_sandbox(lua_State *L)
{
    static const luaL_Reg fns[] = {{"eval", sb_eval}, {NULL, NULL}};
    luaL_newlib(L, fns);
    lua_createtable(L, 0, 5);
    lua_pushinteger(L, (lua_Integer)LIMIT_MEMORY_BYTES);
    lua_setfield(L, -2, "memory_bytes");
    lua_pushinteger(L, (lua_Integer)LIMIT_INSTRUCTIONS);
    lua_setfield(L, -2, "instructions");
    lua_pushinteger(L, (lua_Integer)LIMIT_WALL_S);
    lua_setfield(L, -2, "wall_s");
    lua_pushinteger(L, (lua_Integer)LIMIT_RESULT_BYTES);
    lua_setfield(L, -2, "result_bytes");
    lua_pushinteger(L, LIMIT_DEPTH);
    lua_setfield(L, -2, "depth");
    lua_setfield(L, -2, "LIMITS");
    return 1;
}
