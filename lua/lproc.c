/* Module `repro.proc`: the process control of the study runner (lua/repro/run/pool.lua) and
 * of run-one, without a shell.
 *   proc.spawn(argv [, {stdout =, stderr =}]) -> pid    this binary as a child process
 *   proc.wait(block) -> pid, "exit"|"signal", code      a child that ended, or nil
 *   proc.kill(pid, "INT"|"TERM"|"KILL"|"STOP"|"CONT") -> true if sent
 *   proc.sleep(seconds)                                 ended early by a child's exit once
 *                                                       proc.trap_signals() was called
 *   proc.trap_signals(); proc.sigints() -> count        SIGINT/SIGTERM counted, not fatal
 *   proc.die_with_parent(ppid) -> false if ppid is gone SIGKILL when the parent dies
 *   proc.lock(dir, wait [, shared]) -> true | false     a flock held for the process's life
 *   proc.lock_held(dir) -> true | false | nil, message  another process holds it?
 *   proc.setenv(name, value)                            this process's environment, which
 *                                                       every process it starts inherits
 *   proc.monotonic() -> seconds                         a monotonic clock, for timing only
 *                                                       (make bench); never a result
 * Errors name the path and the system's reason (strerror).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>

#include "lrepro.h"

extern char **environ;

/* proc.spawn({arg0, arg1, ...} [, {stdout = path, stderr = path}]) -> pid: this binary
 * (/proc/self/exe) with that argv, inheriting the environment and open descriptors
 * (stdout and stderr go to the given files, truncated, when named); signals caught
 * here are reset to their defaults in the child by exec. */
static int proc_spawn(lua_State *L)
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
                                                  O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
    pid_t pid;
    if (rc == 0)
        rc = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return luaL_error(L, "cannot start a worker process: %s", strerror(rc));
    lua_pushinteger(L, (lua_Integer)pid);
    return 1;
}

/* proc.wait(block) -> pid, "exit"|"signal", code (exit status or signal number); nil
 * when no child has ended yet (block false) or there are no children. */
static int proc_wait(lua_State *L)
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

static int proc_kill(lua_State *L)
{
    static const char *const names[] = {"INT", "TERM", "KILL", "STOP", "CONT", NULL};
    static const int sigs[] = {SIGINT, SIGTERM, SIGKILL, SIGSTOP, SIGCONT};
    pid_t pid = (pid_t)luaL_checkinteger(L, 1);
    luaL_argcheck(L, pid > 0, 1, "pid: must be > 0");
    lua_pushboolean(L, kill(pid, sigs[luaL_checkoption(L, 2, NULL, names)]) == 0);
    return 1;
}

static int proc_monotonic(lua_State *L)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    lua_pushnumber(L, (lua_Number)ts.tv_sec + 1e-9 * (lua_Number)ts.tv_nsec);
    return 1;
}

static int proc_sleep(lua_State *L)
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

/* proc.trap_signals(): from now on SIGINT and SIGTERM (Ctrl-C, kill, scancel, a batch
 * system's time limit) only count (proc.sigints() -> the count), and a child's exit ends
 * a proc.sleep early.  Other system calls restart. */
static int proc_trap_signals(lua_State *L)
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

static int proc_sigints(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)sigint_count);
    return 1;
}

/* proc.die_with_parent(ppid) -> false if the parent `ppid` is already gone: a worker is
 * killed (SIGKILL) when the runner that started it dies, as if killed with it. */
static int proc_die_with_parent(lua_State *L)
{
    pid_t ppid = (pid_t)luaL_checkinteger(L, 1);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    lua_pushboolean(L, getppid() == ppid);
    return 1;
}

/* proc.lock(dir, wait [, shared]) -> true, or false when another process holds it and
 * wait is false.  An exclusive (or shared) flock on the directory, through a descriptor
 * that is never closed and is inherited by spawned workers: held until this process
 * and its workers are all gone, and no lock file is left behind. */
static int proc_lock(lua_State *L)
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

/* proc.lock_held(dir) -> true when another process holds an exclusive proc.lock on
 * dir, false when none does (or dir does not exist); nil and a message when the
 * filesystem cannot tell.  A shared probe, released at once, so it never blocks an
 * exclusive holder for longer than the probe itself. */
static int proc_lock_held(lua_State *L)
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

/* proc.setenv(name, value): for a script (a test that trains on a temporary corpus sets
 * REPRO_DATA_ANYWHERE=1 for itself and the commands it runs). */
static int proc_setenv(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    const char *value = luaL_checkstring(L, 2);
    luaL_argcheck(L, *name && !strchr(name, '='), 1, "not a variable name");
    if (setenv(name, value, 1) != 0)
        return luaL_error(L, "setenv %s: %s", name, strerror(errno));
    return 0;
}

int luaopen_proc(lua_State *L)
{
    static const luaL_Reg fns[] = {{"setenv", proc_setenv},
                                   {"spawn", proc_spawn},
                                   {"wait", proc_wait},
                                   {"kill", proc_kill},
                                   {"sleep", proc_sleep},
                                   {"monotonic", proc_monotonic},
                                   {"trap_signals", proc_trap_signals},
                                   {"sigints", proc_sigints},
                                   {"die_with_parent", proc_die_with_parent},
                                   {"lock", proc_lock},
                                   {"lock_held", proc_lock_held},
                                   {NULL, NULL}};
    luaL_newlib(L, fns);
    return 1;
}
