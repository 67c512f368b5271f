/* bin/repro: the Lua 5.4 host of the suite.
 *
 *   bin/repro script FILE.lua [args]
 *                                 run a Lua file that is no study (repro.cli's guard_script
 *                                 decides); `arg` is set as the stock `lua` does, and
 *                                 the script's own folder goes first on package.path
 *   bin/repro COMMAND [args]      a command of lua/repro/cli/init.lua (train, run, ...)
 *   bin/repro --version           project, Lua, GSL and compiler versions
 *
 * Everything, even opening the libraries, runs inside lua_pcall with a message handler
 * that appends a traceback; any error is printed on stderr as `file:line: message`
 * plus the traceback, and the exit status is 1.  An error raised as a table with a
 * string field `message` is a user error (bad config, bad study file): only the
 * message is printed.  Under a COMMAND every other error is an internal error (a bug,
 * never something a user's input can cause): its traceback ends with a line saying so.
 * The project's C modules are preloaded, and lua/ is put on package.path from the
 * binary's own location, so nothing depends on LUA_PATH or the working directory.
 * math.random is hidden: every random number comes from `pcg`.
 * Unless OMP_WAIT_POLICY or GOMP_SPINCOUNT is set, the host re-executes itself once with
 * GOMP_SPINCOUNT=1000 (see main).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gsl/gsl_version.h>

#include "../engine/isa.h"
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "lrepro.h"

#ifndef REPRO_VERSION
#define REPRO_VERSION "unknown"
#endif
#ifndef REPRO_CFLAGS
#define REPRO_CFLAGS "unknown"
#endif

#if defined(__clang__)
#define REPRO_COMPILER "clang " __clang_version__
#elif defined(__GNUC__)
#define REPRO_COMPILER "gcc " __VERSION__
#else
#define REPRO_COMPILER "unknown compiler"
#endif

lua_Integer repro_checkinteger(lua_State *L, int arg, const char *name)
{
    int isnum = 0;
    lua_Integer v = lua_tointegerx(L, arg, &isnum);
    if (!isnum) {
        if (lua_type(L, arg) == LUA_TNUMBER)
            lua_pushfstring(L, "%s: integer expected, got non-integer number %s", name,
                            luaL_tolstring(L, arg, NULL));
        else
            lua_pushfstring(L, "%s: integer expected, got %s", name, luaL_typename(L, arg));
        luaL_argerror(L, arg, lua_tostring(L, -1));
    }
    return v;
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The project root: $REPRO_ROOT, else the nearest ancestor of the binary's directory
 * that holds lua/repro/. */
static int find_root(char *root, size_t size)
{
    const char *env = getenv("REPRO_ROOT");
    char probe[PATH_MAX + 16];
    if (env && *env) {
        snprintf(root, size, "%s", env);
        return 0;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    for (int up = 0; up < 4; up++) {
        char *slash = strrchr(exe, '/');
        if (!slash)
            return -1;
        *slash = '\0';
        snprintf(probe, sizeof probe, "%s/lua/repro", exe[0] ? exe : "/");
        if (is_dir(probe)) {
            snprintf(root, size, "%s", exe[0] ? exe : "/");
            return 0;
        }
    }
    return -1;
}

static int msghandler(lua_State *L)
{
    if (lua_type(L, 1) == LUA_TTABLE) {
        if (lua_getfield(L, 1, "message") == LUA_TSTRING)
            return 1; /* user error: the message alone */
        lua_pop(L, 1);
    }
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) {
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
            msg = lua_tostring(L, -1);
        else
            msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    luaL_traceback(L, L, msg, 1);
    if (lua_getfield(L, LUA_REGISTRYINDEX, "repro.command") == LUA_TSTRING) {
        lua_pushfstring(L, "%s\nrepro %s: internal error (a bug in bin/repro, not a problem "
                        "with your input): please report it with the traceback above",
                        lua_tostring(L, -2), lua_tostring(L, -1));
        return 1;
    }
    lua_pop(L, 1);
    return 1;
}

static int hidden_random(lua_State *L)
{
    return luaL_error(L, "math.random is disabled in repro: use require('pcg') so every "
                        "random number is seeded and reproducible");
}

static void preload(lua_State *L, const char *name, lua_CFunction open)
{
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
    lua_pushcfunction(L, open);
    lua_setfield(L, -2, name);
    lua_pop(L, 1);
}

static int host_isatty(lua_State *L)
{
    lua_pushboolean(L, isatty((int)luaL_checkinteger(L, 1)));
    return 1;
}

static int host_peak_rss(lua_State *L)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    lua_pushinteger(L, (lua_Integer)ru.ru_maxrss * 1024);
    return 1;
}

static int host_hostname(lua_State *L)
{
    char name[256] = "";
    gethostname(name, sizeof name - 1);
    lua_pushstring(L, name);
    return 1;
}

static int host_now(lua_State *L)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    lua_pushnumber(L, (lua_Number)ts.tv_sec + 1e-9 * (lua_Number)ts.tv_nsec);
    return 1;
}

static int host_pid(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)getpid());
    return 1;
}

/* Module `repro.host`: facts about this binary and process for manifests and messages
 * (the process control the study runner needs is `repro.proc`, lua/lproc.c). */
static int open_host(lua_State *L)
{
    static const luaL_Reg fns[] = {{"isatty", host_isatty},
                                   {"peak_rss_bytes", host_peak_rss},
                                   {"hostname", host_hostname},
                                   {"pid", host_pid},
                                   {"now", host_now},
                                   {NULL, NULL}};
    luaL_newlib(L, fns);
    lua_pushstring(L, REPRO_VERSION);
    lua_setfield(L, -2, "version");
    lua_pushstring(L, LUA_RELEASE);
    lua_setfield(L, -2, "lua");
    lua_pushstring(L, gsl_version);
    lua_setfield(L, -2, "gsl");
    lua_pushstring(L, REPRO_COMPILER);
    lua_setfield(L, -2, "compiler");
    lua_pushstring(L, REPRO_CFLAGS);
    lua_setfield(L, -2, "cflags");
    lua_pushstring(L, isa_name());
    lua_setfield(L, -2, "isa");
    lua_pushstring(L, isa_available());
    lua_setfield(L, -2, "isa_available");
    lua_getfield(L, LUA_REGISTRYINDEX, "repro.root");
    lua_setfield(L, -2, "root");
    lua_getfield(L, LUA_REGISTRYINDEX, "repro.exe");
    lua_setfield(L, -2, "exe");
    return 1;
}

static void setup(lua_State *L, const char *root, const char *exe)
{
    luaL_openlibs(L);
    lua_getglobal(L, "math");
    lua_pushcfunction(L, hidden_random);
    lua_setfield(L, -2, "random");
    lua_pushcfunction(L, hidden_random);
    lua_setfield(L, -2, "randomseed");
    lua_pop(L, 1);

    lua_pushstring(L, root);
    lua_setfield(L, LUA_REGISTRYINDEX, "repro.root");
    lua_pushstring(L, exe);
    lua_setfield(L, LUA_REGISTRYINDEX, "repro.exe");
    preload(L, "repro.host", open_host);
    preload(L, "repro.proc", luaopen_proc);
    preload(L, "pcg", luaopen_pcg);
    preload(L, "engine", luaopen_engine);
    preload(L, "stats", luaopen_stats);
    preload(L, "repro.sys", luaopen_sys);
    preload(L, "repro.sandbox", luaopen_sandbox);

    lua_getglobal(L, "package");
    lua_getfield(L, -1, "path");
    lua_pushfstring(L, "%s/lua/?.lua;%s/lua/?/init.lua;%s", root, root, lua_tostring(L, -1));
    lua_setfield(L, -3, "path");
    lua_pop(L, 2);
}

static int print_version(lua_State *L)
{
    printf("repro %s\n%s\nGSL %s\n%s\nflags: %s\n", REPRO_VERSION, LUA_RELEASE, gsl_version,
           REPRO_COMPILER, REPRO_CFLAGS);
    printf("paths: %s (this CPU: %s)\npath in use: %s%s\n", isa_compiled(), isa_available(),
           isa_name(), getenv("REPRO_ISA") && *getenv("REPRO_ISA") ? " (REPRO_ISA)" : "");
    (void)L;
    return 0;
}

/* Runs inside lua_pcall: argv as light userdata, argc as integer. */
static int pmain(lua_State *L)
{
    int argc = (int)lua_tointeger(L, 1);
    char **argv = (char **)lua_touserdata(L, 2);
    char root[PATH_MAX];
    if (find_root(root, sizeof root) != 0)
        return luaL_error(L, "cannot find the project's lua/repro/ directory from the binary's "
                             "location; set REPRO_ROOT to the project root");
    char isa_err[256];
    if (isa_select(NULL, isa_err, sizeof isa_err) != 0) {
        fprintf(stderr, "%s: %s\n", argv[0], isa_err);
        lua_pushinteger(L, 2);
        return 1;
    }
    setup(L, root, argv[0]);

    if (argc < 2) {
        fprintf(stderr, "usage: %s COMMAND [args] | script FILE.lua [args] | --version\n"
                        "commands: see `%s help`\n", argv[0], argv[0]);
        lua_pushinteger(L, 2);
        return 1;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-v") == 0) {
        print_version(L);
        lua_pushinteger(L, 0);
        return 1;
    }

    /* `bin/repro script FILE.lua [args]` runs a Lua file outside the sandbox, with the
     * project's modules, after repro.cli's guard_script has refused a study file (one
     * under lua/experiments/, or one the study sandbox does not prove to be no study).
     * Only the word `script` runs a file: `bin/repro FILE.lua` is an unknown command. */
    int is_script = strcmp(argv[1], "script") == 0;
    int shift = is_script ? 1 : 0;
    if (is_script && argc < 3) {
        fprintf(stderr, "usage: %s script FILE.lua [args]\n", argv[0]);
        lua_pushinteger(L, 2);
        return 1;
    }
    const char *first = argv[1 + shift];

    /* arg table as lua.c builds it: arg[0] = script, arg[-1] = interpreter. */
    lua_createtable(L, argc, 2);
    lua_pushstring(L, argv[0]);
    lua_rawseti(L, -2, -1);
    for (int i = 1 + shift; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i - 1 - shift);
    }
    lua_setglobal(L, "arg");

    if (is_script) {
        lua_pushliteral(L, "script");
        lua_setfield(L, LUA_REGISTRYINDEX, "repro.command");
        lua_getglobal(L, "require");
        lua_pushstring(L, "repro.cli");
        lua_call(L, 1, 1);
        lua_getfield(L, -1, "guard_script");
        lua_pushstring(L, first);
        lua_call(L, 1, 0);
        lua_pop(L, 1);
        lua_pushnil(L);
        lua_setfield(L, LUA_REGISTRYINDEX, "repro.command");
        /* a script requires the Lua files beside it (the tests' harness, tests/lua/check.lua)
         * as `require "name"`; the project's modules are all repro.* and preloaded ones
         * come first, so none is shadowed */
        const char *slash = strrchr(first, '/');
        lua_getglobal(L, "package");
        if (slash)
            lua_pushlstring(L, first, (size_t)(slash - first));
        else
            lua_pushliteral(L, ".");
        lua_getfield(L, -2, "path");
        lua_pushfstring(L, "%s/?.lua;%s", lua_tostring(L, -2), lua_tostring(L, -1));
        lua_setfield(L, -4, "path");
        lua_pop(L, 3);
        if (luaL_loadfilex(L, first, "t") != LUA_OK) {
            /* already `file:line: message`; a traceback would only show the host */
            lua_createtable(L, 0, 1);
            lua_insert(L, -2);
            lua_setfield(L, -2, "message");
            return lua_error(L);
        }
        for (int i = 2 + shift; i < argc; i++)
            lua_pushstring(L, argv[i]);
        lua_call(L, argc - 2 - shift, 1);
    } else {
        lua_pushstring(L, argv[1]);
        lua_setfield(L, LUA_REGISTRYINDEX, "repro.command");
        lua_getglobal(L, "require");
        lua_pushstring(L, "repro.cli");
        lua_call(L, 1, 1);
        lua_getfield(L, -1, "main");
        lua_newtable(L);
        for (int i = 1; i < argc; i++) {
            lua_pushstring(L, argv[i]);
            lua_rawseti(L, -2, i);
        }
        lua_call(L, 1, 1);
    }
    if (!lua_isinteger(L, -1)) {
        lua_pop(L, 1);
        lua_pushinteger(L, 0);
    }
    return 1;
}

/* An error message as the terminal shows it: text from a study file or a record may hold
 * escape sequences or NULs; repro_printable (lua/lsys.c, the rule for every terminal
 * sink) shows them as \xNN or \uNNNN, newlines and tabs kept, so a message never
 * rewrites the terminal. */
static void print_message(FILE *f, const char *msg, size_t n)
{
    char *out = malloc(4 * n + 1);
    if (out == NULL) {
        fputs("(error message too long to print: out of memory)", f);
        return;
    }
    fwrite(out, 1, repro_printable(msg, n, 1, out), f);
    free(out);
}

int main(int argc, char **argv)
{
    /* libgomp reads its settings before main; with its default spin-wait, a second
     * thread competing with another busy process slows training several-fold.  A
     * short spin costs nothing measurable on an idle machine.  Re-exec once with it. */
    if (!getenv("OMP_WAIT_POLICY") && !getenv("GOMP_SPINCOUNT")) {
        setenv("GOMP_SPINCOUNT", "1000", 1);
        execv("/proc/self/exe", argv); /* on failure, go on as we are */
    }
    lua_State *L = luaL_newstate();
    if (L == NULL) {
        fprintf(stderr, "%s: cannot create a Lua state: out of memory\n", argv[0]);
        return 1;
    }
    lua_pushcfunction(L, msghandler);
    lua_pushcfunction(L, pmain);
    lua_pushinteger(L, argc);
    lua_pushlightuserdata(L, argv);
    int status = lua_pcall(L, 2, 1, 1);
    int code;
    if (status != LUA_OK) {
        size_t n = 0;
        const char *msg = lua_tolstring(L, -1, &n);
        if (msg)
            print_message(stderr, msg, n);
        else
            fputs("(error object is not a string)", stderr);
        fputc('\n', stderr);
        code = 1;
    } else {
        code = (int)lua_tointeger(L, -1);
    }
    fflush(stdout);
    lua_close(L);
    return code;
}
