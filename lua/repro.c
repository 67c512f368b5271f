/* bin/repro: the Lua 5.4 host of the suite.
 *
 *   bin/repro SCRIPT.lua [args]   run a script; `arg` is set as the stock `lua` does
 *   bin/repro COMMAND [args]      a command of lua/repro/cli.lua (train, run, ...)
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
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/* Worker processes for the study runner (lua/repro/runner.lua). */

extern char **environ;

/* host.spawn({arg0, arg1, ...} [, {stdout = path, stderr = path}]) -> pid: this binary
 * (/proc/self/exe) with that argv, inheriting the environment and open descriptors
 * (stdout and stderr go to the given files, truncated, when named); signals caught
 * here are reset to their defaults in the child by exec. */
static int host_spawn(lua_State *L)
{
    static const char *const streams[] = {"stdout", "stderr"};
    luaL_checktype(L, 1, LUA_TTABLE);
    int n = (int)lua_rawlen(L, 1);
    luaL_argcheck(L, n >= 1, 1, "argv: at least the program name");
    luaL_checkstack(L, n + 4, "too many arguments");
    const char *paths[2] = {NULL, NULL};
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        for (int i = 0; i < 2; i++) {
            lua_getfield(L, 2, streams[i]); /* stays on the stack, so stays alive */
            paths[i] = lua_tostring(L, -1);
        }
    }
    const char **argv = (const char **)lua_newuserdatauv(L, (size_t)(n + 1) * sizeof *argv, 0);
    for (int i = 0; i < n; i++) {
        if (lua_rawgeti(L, 1, i + 1) != LUA_TSTRING)
            return luaL_argerror(L, 1, "argv: strings expected");
        argv[i] = lua_tostring(L, -1);
    }
    argv[n] = NULL;
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return luaL_error(L, "cannot start a worker process: out of memory");
    int rc = 0;
    for (int i = 0; i < 2 && rc == 0; i++)
        if (paths[i])
            rc = posix_spawn_file_actions_addopen(&fa, 1 + i, paths[i],
                                                  O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    if (rc == 0)
        rc = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return luaL_error(L, "cannot start a worker process: %s", strerror(rc));
    lua_pushinteger(L, (lua_Integer)pid);
    return 1;
}

/* host.wait(block) -> pid, "exit"|"signal", code (exit status or signal number); nil
 * when no child has ended yet (block false) or there are no children. */
static int host_wait(lua_State *L)
{
    int status;
    pid_t pid;
    do
        pid = waitpid(-1, &status, lua_toboolean(L, 1) ? 0 : WNOHANG);
    while (pid < 0 && errno == EINTR && lua_toboolean(L, 1));
    if (pid <= 0)
        return 0;
    lua_pushinteger(L, (lua_Integer)pid);
    if (WIFSIGNALED(status)) {
        lua_pushliteral(L, "signal");
        lua_pushinteger(L, WTERMSIG(status));
    } else {
        lua_pushliteral(L, "exit");
        lua_pushinteger(L, WEXITSTATUS(status));
    }
    return 3;
}

static int host_kill(lua_State *L)
{
    static const char *const names[] = {"INT", "TERM", "KILL", NULL};
    static const int sigs[] = {SIGINT, SIGTERM, SIGKILL};
    pid_t pid = (pid_t)luaL_checkinteger(L, 1);
    luaL_argcheck(L, pid > 0, 1, "pid: must be > 0");
    lua_pushboolean(L, kill(pid, sigs[luaL_checkoption(L, 2, NULL, names)]) == 0);
    return 1;
}

static int host_sleep(lua_State *L)
{
    double s = luaL_checknumber(L, 1);
    luaL_argcheck(L, s >= 0 && s < 3600, 1, "seconds: must be in [0, 3600)");
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL); /* a signal may end it early: callers poll */
    return 0;
}

static volatile sig_atomic_t sigint_count;

static void on_sigint(int sig) /* SIGINT and SIGTERM alike */
{
    (void)sig;
    sigint_count++;
}

static void on_sigchld(int sig)
{
    (void)sig;
}

/* host.trap_signals(): from now on SIGINT and SIGTERM (Ctrl-C, kill, scancel, a batch
 * system's time limit) only count (host.sigints() -> the count), and a child's exit ends
 * a host.sleep early.  Other system calls restart. */
static int host_trap_signals(lua_State *L)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sa.sa_handler = on_sigchld;
    sigaction(SIGCHLD, &sa, NULL);
    (void)L;
    return 0;
}

static int host_sigints(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)sigint_count);
    return 1;
}

/* host.die_with_parent(ppid) -> false if the parent `ppid` is already gone: a worker is
 * killed (SIGKILL) when the runner that started it dies, as if killed with it. */
static int host_die_with_parent(lua_State *L)
{
    pid_t ppid = (pid_t)luaL_checkinteger(L, 1);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    lua_pushboolean(L, getppid() == ppid);
    return 1;
}

/* host.lock(dir, wait [, shared]) -> true, or false when another process holds it and
 * wait is false.  An exclusive (or shared) flock on the directory, through a descriptor
 * that is never closed and is inherited by spawned workers: held until this process
 * and its workers are all gone, and no lock file is left behind. */
static int host_lock(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    int fd = open(path, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return luaL_error(L, "cannot open %s to lock it: %s", path, strerror(errno));
    int rc;
    do
        rc = flock(fd, (lua_toboolean(L, 3) ? LOCK_SH : LOCK_EX) |
                           (lua_toboolean(L, 2) ? 0 : LOCK_NB));
    while (rc < 0 && errno == EINTR);
    if (rc < 0) {
        int e = errno;
        close(fd);
        if (e == EWOULDBLOCK) {
            lua_pushboolean(L, 0);
            return 1;
        }
        return luaL_error(L, "cannot lock %s: %s", path, strerror(e));
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* host.lock_held(dir) -> true when another process holds an exclusive host.lock on
 * dir, false when none does (or dir does not exist); nil and a message when the
 * filesystem cannot tell.  A shared probe, released at once, so it never blocks an
 * exclusive holder for longer than the probe itself. */
static int host_lock_held(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    int fd = open(path, O_RDONLY | O_DIRECTORY);
    if (fd < 0) {
        if (errno == ENOENT) {
            lua_pushboolean(L, 0);
            return 1;
        }
        lua_pushnil(L);
        lua_pushfstring(L, "cannot open %s: %s", path, strerror(errno));
        return 2;
    }
    int rc;
    do
        rc = flock(fd, LOCK_SH | LOCK_NB);
    while (rc < 0 && errno == EINTR);
    int e = errno;
    close(fd); /* releases the probe */
    if (rc == 0 || e == EWOULDBLOCK) {
        lua_pushboolean(L, rc != 0);
        return 1;
    }
    lua_pushnil(L);
    lua_pushfstring(L, "cannot probe the lock of %s: %s", path, strerror(e));
    return 2;
}

/* Module `repro.host`: facts about this binary and process for manifests, and the
 * process control the study runner needs. */
static int open_host(lua_State *L)
{
    static const luaL_Reg fns[] = {{"isatty", host_isatty},
                                   {"peak_rss_bytes", host_peak_rss},
                                   {"hostname", host_hostname},
                                   {"pid", host_pid},
                                   {"now", host_now},
                                   {"spawn", host_spawn},
                                   {"wait", host_wait},
                                   {"kill", host_kill},
                                   {"sleep", host_sleep},
                                   {"trap_signals", host_trap_signals},
                                   {"sigints", host_sigints},
                                   {"die_with_parent", host_die_with_parent},
                                   {"lock", host_lock},
                                   {"lock_held", host_lock_held},
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
        fprintf(stderr, "usage: %s SCRIPT.lua [args] | COMMAND [args] | --version\n"
                        "commands: see `%s help`\n", argv[0], argv[0]);
        lua_pushinteger(L, 2);
        return 1;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-v") == 0) {
        print_version(L);
        lua_pushinteger(L, 0);
        return 1;
    }

    const char *first = argv[1];
    size_t len = strlen(first);
    int is_script = (len > 4 && strcmp(first + len - 4, ".lua") == 0) || strchr(first, '/');

    /* arg table as lua.c builds it: arg[0] = script, arg[-1] = interpreter. */
    lua_createtable(L, argc, 2);
    for (int i = 0; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i - 1);
    }
    lua_setglobal(L, "arg");

    if (is_script) {
        if (luaL_loadfilex(L, first, "t") != LUA_OK) {
            /* already `file:line: message`; a traceback would only show the host */
            lua_createtable(L, 0, 1);
            lua_insert(L, -2);
            lua_setfield(L, -2, "message");
            return lua_error(L);
        }
        for (int i = 2; i < argc; i++)
            lua_pushstring(L, argv[i]);
        lua_call(L, argc - 2, 1);
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
        const char *msg = lua_tostring(L, -1);
        fprintf(stderr, "%s\n", msg ? msg : "(error object is not a string)");
        code = 1;
    } else {
        code = (int)lua_tointeger(L, -1);
    }
    fflush(stdout);
    lua_close(L);
    return code;
}
