/* Module `repro.sys`: the file and process facts the record and runner code needs,
 * without a shell.
 *   sys.sha256(text [, "portable"])
 *                           -> 64 lowercase hex digits (FIPS 180-4); the x86 SHA
 *                              extensions when the CPU has them (lua/sha256_x86.c), else
 *                              (or with "portable", for the tests) the C code below
 *   sys.sha256_file(path [, nofollow])
 *                           -> hex, or nil and a message (a regular file only; with
 *                              nofollow, not a symbolic link either)
 *   sys.stat(path)          -> {type = "file"|"dir"|"other", size = bytes}, or nil and a
 *                              message (symbolic links are followed)
 *   sys.lstat(path)         -> the same, with type "link" for a symbolic link (not followed);
 *                              both also give mode (permission bits) and mine (owned by
 *                              this process's effective user)
 *   sys.read_file(path, max_bytes)
 *                           -> the whole file, or nil and a message: only a regular file
 *                              that is not itself a symbolic link (O_NOFOLLOW) and holds
 *                              at most max_bytes; opened non-blocking, so a FIFO or a
 *                              device is refused without hanging or reading forever
 *   sys.listdir(path)       -> sorted list of entry names (no "." or ".."), or nil, message
 *   sys.realpath(path)      -> the canonical absolute path, or nil and a message
 *   sys.cores()             -> CPUs this process may run on (its affinity mask)
 *   sys.mkdir_p(path)       -> true, or nil and a message (`mkdir -p`, mode 0777 & ~umask)
 *   sys.mkdtemp(template)   -> a new directory (mode 0700) from a template ending in
 *                              XXXXXX (mkdtemp(3)), or nil and a message
 *   sys.mkdir(path [, mode]), sys.rmdir(path)
 *                           -> true, or nil and a message (one directory)
 *   sys.pid_alive(pid)      -> whether a process of that id exists
 *   sys.euid()              -> the effective user id
 *   sys.atomic(path)        -> the one atomic writer (engine/atomicfile.h: a temporary file
 *                              created exclusively beside path, never through a link,
 *                              renamed over path by :commit()), or nil and a message
 *   sys.overwrite(path, text)
 *                           -> true, or nil and a message: an existing regular file
 *                              rewritten in place, never through a link (a full disk)
 *   sys.lines(path, max_line)
 *                           -> a line reader under sys.read_file's rules, each line at
 *                              most max_line bytes, with the SHA-256 of what it read
 *   sys.random_seed()       -> a seed no one can predict: 48 bits from /dev/urandom, as a
 *                              non-negative integer (a generator is then PCG32 from it),
 *                              or nil and a message
 *   sys.printable(s [, keep_lines])
 *                           -> s as a terminal may show it (repro_printable below)
 *   sys.parse_log(text)     -> {columns = {...}, data = {column -> values by row}, n = rows}:
 *                              a log.csv's text split as analysis/records.lua's Lua
 *                              reading did (the report reads every log of every study):
 *                              lines split on LF, empty ones skipped; fields on commas;
 *                              the first line names the columns (a repeated name: the
 *                              last column of that name); each field as reader.log_number
 *                              reads it (empty: nil; nan, -nan, inf, -inf; else Lua's
 *                              tonumber, so "5" is an integer and "5.0" a float)
 *   sys.lock(dir)           -> a lock, or nil and "held" when another open description
 *                              holds it, or nil and a message.  An exclusive flock on
 *                              the directory through a close-on-exec descriptor (so
 *                              worker processes never inherit it); lock:release() (also
 *                              on garbage collection and at exit) lets it go.
 * Messages name the path and the system's reason (strerror).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>

#include "../engine/atomicfile.h"
#include "lrepro.h"

/* SHA-256, FIPS 180-4 section 6.2. */

typedef struct {
    uint32_t h[8];
    uint64_t len; /* bytes so far */
    unsigned char block[64];
    size_t fill;
    int portable; /* 1: the C code below even where the CPU has SHA (the tests compare) */
} sha256_ctx;

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void sha256_block(uint32_t h[8], const unsigned char *p)
{
    uint32_t w[64];
    for (int t = 0; t < 16; t++)
        w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 |
               (uint32_t)p[4 * t + 2] << 8 | (uint32_t)p[4 * t + 3];
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (int t = 0; t < 64; t++) {
        uint32_t t1 = k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) +
                      K256[t] + w[t];
        uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        k = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += k;
}

/* n blocks of 64 bytes: the x86 SHA extensions when the CPU has them and `portable` is 0. */
static void sha256_blocks(uint32_t h[8], const unsigned char *p, size_t n, int portable)
{
    if (n == 0)
        return;
#if defined(__x86_64__)
    static int has_x86 = -1;
    if (has_x86 < 0)
        has_x86 = repro_sha256_x86_ok();
    if (has_x86 && !portable) {
        repro_sha256_x86_blocks(h, p, n, K256);
        return;
    }
#endif
    for (; n > 0; n--, p += 64)
        sha256_block(h, p);
}

static void sha256_init(sha256_ctx *s)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, h0, sizeof h0);
    s->len = 0;
    s->fill = 0;
    s->portable = 0;
}

static void sha256_update(sha256_ctx *s, const unsigned char *p, size_t n)
{
    s->len += n;
    if (s->fill > 0) {
        size_t take = 64 - s->fill < n ? 64 - s->fill : n;
        memcpy(s->block + s->fill, p, take);
        s->fill += take;
        p += take;
        n -= take;
        if (s->fill < 64)
            return;
        sha256_blocks(s->h, s->block, 1, s->portable);
        s->fill = 0;
    }
    sha256_blocks(s->h, p, n / 64, s->portable);
    memcpy(s->block, p + n / 64 * 64, n % 64);
    s->fill = n % 64;
}

/* The digest as 64 lowercase hex digits and a terminating NUL. */
static void sha256_final(sha256_ctx *s, char hex[65])
{
    uint64_t bits = s->len * 8;
    unsigned char pad[72] = {0x80};
    size_t npad = (s->fill < 56 ? 56 : 120) - s->fill;
    for (int i = 0; i < 8; i++)
        pad[npad + (size_t)i] = (unsigned char)(bits >> (56 - 8 * i));
    sha256_update(s, pad, npad + 8);
    for (int i = 0; i < 8; i++)
        snprintf(hex + 8 * i, 9, "%08x", (unsigned)s->h[i]);
}

static int sys_sha256(lua_State *L)
{
    size_t n;
    const char *p = luaL_checklstring(L, 1, &n);
    static const char *const impls[] = {"best", "portable", NULL};
    int portable = luaL_checkoption(L, 2, "best", impls) == 1;
    sha256_ctx s;
    char hex[65];
    sha256_init(&s);
    s.portable = portable;
    sha256_update(&s, (const unsigned char *)p, n);
    sha256_final(&s, hex);
    lua_pushstring(L, hex);
    return 1;
}

static int fail(lua_State *L, const char *what, const char *path, int e)
{
    lua_pushnil(L);
    lua_pushfstring(L, "%s %s: %s", what, path, strerror(e));
    return 2;
}

static int sys_sha256_file(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    int nofollow = lua_toboolean(L, 2);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (nofollow ? O_NOFOLLOW : 0));
    if (fd < 0) {
        if (nofollow && errno == ELOOP) {
            lua_pushnil(L);
            lua_pushfstring(L, "cannot read %s: a symbolic link (not followed)", path);
            return 2;
        }
        return fail(L, "cannot read", path, errno);
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return fail(L, "cannot read", path, e);
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        lua_pushnil(L);
        lua_pushfstring(L, "cannot read %s: not a regular file", path);
        return 2;
    }
    sha256_ctx s;
    sha256_init(&s);
    unsigned char buf[1 << 16];
    for (;;) {
        ssize_t got = read(fd, buf, sizeof buf);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int e = errno;
            close(fd);
            return fail(L, "cannot read", path, e);
        }
        if (got == 0)
            break;
        sha256_update(&s, buf, (size_t)got);
    }
    close(fd);
    char hex[65];
    sha256_final(&s, hex);
    lua_pushstring(L, hex);
    return 1;
}

static int sys_stat(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    struct stat st;
    if (stat(path, &st) != 0)
        return fail(L, "cannot stat", path, errno);
    lua_createtable(L, 0, 2);
    lua_pushstring(L, S_ISREG(st.st_mode) ? "file" : S_ISDIR(st.st_mode) ? "dir" : "other");
    lua_setfield(L, -2, "type");
    lua_pushinteger(L, (lua_Integer)st.st_size);
    lua_setfield(L, -2, "size");
    return 1;
}

static int sys_lstat(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    struct stat st;
    if (lstat(path, &st) != 0)
        return fail(L, "cannot stat", path, errno);
    lua_createtable(L, 0, 2);
    lua_pushstring(L, S_ISLNK(st.st_mode)   ? "link"
                      : S_ISREG(st.st_mode) ? "file"
                      : S_ISDIR(st.st_mode) ? "dir"
                                            : "other");
    lua_setfield(L, -2, "type");
    lua_pushinteger(L, (lua_Integer)st.st_size);
    lua_setfield(L, -2, "size");
    lua_pushinteger(L, (lua_Integer)(st.st_mode & 07777));
    lua_setfield(L, -2, "mode");
    lua_pushboolean(L, st.st_uid == geteuid());
    lua_setfield(L, -2, "mine");
    return 1;
}

/* A new directory from a mkdtemp(3) template (ending in XXXXXX), mode 0700. */
static int sys_mkdtemp(lua_State *L)
{
    size_t n;
    const char *tmpl = luaL_checklstring(L, 1, &n);
    char buf[PATH_MAX];
    if (n < 6 || n >= sizeof buf || strcmp(tmpl + n - 6, "XXXXXX") != 0)
        return luaL_argerror(L, 1, "a path ending in XXXXXX, shorter than PATH_MAX");
    memcpy(buf, tmpl, n + 1);
    if (!mkdtemp(buf))
        return fail(L, "cannot create a directory like", tmpl, errno);
    lua_pushstring(L, buf);
    return 1;
}

/* Whether a process of that id exists (one of another user's counts). */
static int sys_pid_alive(lua_State *L)
{
    lua_Integer pid = luaL_checkinteger(L, 1);
    luaL_argcheck(L, pid > 0 && pid <= INT32_MAX, 1, "pid: must be > 0");
    lua_pushboolean(L, kill((pid_t)pid, 0) == 0 || errno == EPERM);
    return 1;
}

/* mkdir(2) of one directory with a mode: true, or nil and a message (EEXIST included). */
static int sys_mkdir(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    lua_Integer mode = luaL_optinteger(L, 2, 0777);
    if (mkdir(path, (mode_t)mode) != 0)
        return fail(L, "cannot create directory", path, errno);
    lua_pushboolean(L, 1);
    return 1;
}

/* The effective user id. */
static int sys_euid(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)geteuid());
    return 1;
}

/* 48 bits from the system's random source, a non-negative integer below 2^48 (exact in a
 * double too, so it reads back from any printed form). */
static int sys_random_seed(lua_State *L)
{
    unsigned char b[6];
    size_t got = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return luaL_fileresult(L, 0, "/dev/urandom");
    while (got < sizeof b) {
        ssize_t n = read(fd, b + got, sizeof b - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = n < 0 ? errno : EIO;
            close(fd);
            lua_pushnil(L);
            lua_pushfstring(L, "/dev/urandom: %s", strerror(e));
            return 2;
        }
        got += (size_t)n;
    }
    close(fd);
    uint64_t v = 0;
    for (size_t i = 0; i < sizeof b; i++)
        v = (v << 8) | b[i];
    lua_pushinteger(L, (lua_Integer)v);
    return 1;
}

/* rmdir(2): true, or nil and a message. */
static int sys_rmdir(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    if (rmdir(path) != 0)
        return fail(L, "cannot remove directory", path, errno);
    lua_pushboolean(L, 1);
    return 1;
}

#define FD_MT "repro.sys.fd"

static int fd_close(lua_State *L)
{
    int *fd = luaL_checkudata(L, 1, FD_MT);
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
    return 0;
}

/* The descriptor and the buffer are userdata (the descriptor's __gc closes it), so a
 * Lua error (out of memory) while either is held leaks nothing. */
static int sys_read_file(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    lua_Integer max = luaL_checkinteger(L, 2);
    luaL_argcheck(L, max >= 0, 2, "a size cap >= 0");
    int *fd = lua_newuserdatauv(L, sizeof *fd, 0);
    *fd = -1;
    luaL_setmetatable(L, FD_MT);
    *fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
    if (*fd < 0) {
        if (errno == ELOOP) {
            lua_pushnil(L);
            lua_pushfstring(L, "cannot read %s: a symbolic link (not followed)", path);
            return 2;
        }
        return fail(L, "cannot read", path, errno);
    }
    struct stat st;
    if (fstat(*fd, &st) != 0)
        return fail(L, "cannot read", path, errno);
    if (!S_ISREG(st.st_mode)) {
        lua_pushnil(L);
        lua_pushfstring(L, "cannot read %s: not a regular file (%s)", path,
                        S_ISDIR(st.st_mode) ? "a directory" : "a device, pipe or socket");
        return 2;
    }
    if ((uintmax_t)st.st_size > (uintmax_t)max) {
        lua_pushnil(L);
        lua_pushfstring(L, "cannot read %s: %I bytes, more than the %I this file may have",
                        path, (lua_Integer)st.st_size, max);
        return 2;
    }
    /* Read to the end (a file of /proc says size 0), never more than max + 1 bytes. */
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    size_t n = 0;
    int err = 0;
    for (;;) {
        char *p = luaL_prepbuffsize(&b, 1 << 16);
        ssize_t got = read(*fd, p, 1 << 16);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            err = errno;
            break;
        }
        if (got == 0)
            break;
        luaL_addsize(&b, (size_t)got);
        n += (size_t)got;
        if ((uintmax_t)n > (uintmax_t)max)
            break;
    }
    close(*fd);
    *fd = -1;
    if (err != 0 || (uintmax_t)n > (uintmax_t)max) {
        lua_pushnil(L);
        if (err != 0)
            lua_pushfstring(L, "cannot read %s: %s", path, strerror(err));
        else
            lua_pushfstring(L, "cannot read %s: more than the %I bytes this file may have",
                            path, max);
        return 2;
    }
    luaL_pushresult(&b);
    return 1;
}

#define DIR_MT "repro.sys.dir"

static int dir_close(lua_State *L)
{
    DIR **d = luaL_checkudata(L, 1, DIR_MT);
    if (*d) {
        closedir(*d);
        *d = NULL;
    }
    return 0;
}

static int sys_listdir(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    /* The stream lives in a userdata whose __gc closes it, so a Lua error (out of
     * memory while pushing a name) never leaks it. */
    DIR **d = lua_newuserdatauv(L, sizeof *d, 0);
    *d = NULL;
    luaL_setmetatable(L, DIR_MT);
    *d = opendir(path);
    if (!*d)
        return fail(L, "cannot list", path, errno);
    lua_newtable(L);
    int n = 0;
    struct dirent *e;
    errno = 0;
    while ((e = readdir(*d)) != NULL) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            lua_pushstring(L, e->d_name);
            lua_rawseti(L, -2, ++n);
        }
        errno = 0;
    }
    int err = errno;
    closedir(*d);
    *d = NULL;
    if (err != 0)
        return fail(L, "cannot list", path, err);
    lua_getglobal(L, "table");
    lua_getfield(L, -1, "sort");
    lua_pushvalue(L, -3);
    lua_call(L, 1, 0);
    lua_pop(L, 1);
    return 1;
}

static int sys_realpath(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    char *r = realpath(path, NULL);
    if (!r)
        return fail(L, "cannot resolve", path, errno);
    lua_pushstring(L, r);
    free(r);
    return 1;
}

static int sys_cores(lua_State *L)
{
    cpu_set_t set;
    int n = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        n = CPU_COUNT(&set);
    if (n < 1) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        n = c > 0 ? (int)c : 1;
    }
    lua_pushinteger(L, n);
    return 1;
}

static int sys_mkdir_p(lua_State *L)
{
    size_t n;
    const char *path = luaL_checklstring(L, 1, &n);
    char buf[PATH_MAX];
    if (n == 0 || n >= sizeof buf) {
        lua_pushnil(L);
        lua_pushfstring(L, "cannot create directory %s: %s", path,
                        n ? "path too long" : "empty path");
        return 2;
    }
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char c = buf[i];
        buf[i] = '\0';
        struct stat st;
        if (mkdir(buf, 0777) != 0) {
            int e = errno;
            if (e != EEXIST || stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) {
                if (e == EEXIST)
                    e = ENOTDIR;
                lua_pushnil(L);
                lua_pushfstring(L, "cannot create directory %s: %s", buf, strerror(e));
                return 2;
            }
        }
        buf[i] = c;
    }
    lua_pushboolean(L, 1);
    return 1;
}

#define LOCK_MT "repro.sys.lock"

static int lock_release(lua_State *L)
{
    int *fd = luaL_checkudata(L, 1, LOCK_MT);
    if (*fd >= 0) {
        close(*fd); /* drops the flock */
        *fd = -1;
    }
    return 0;
}

static int sys_lock(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    int *ud = lua_newuserdatauv(L, sizeof *ud, 0);
    *ud = -1; /* closed state first: __gc never sees garbage */
    luaL_setmetatable(L, LOCK_MT);
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return fail(L, "cannot open", path, errno);
    int rc;
    do
        rc = flock(fd, LOCK_EX | LOCK_NB);
    while (rc < 0 && errno == EINTR);
    if (rc < 0) {
        int e = errno;
        close(fd);
        if (e == EWOULDBLOCK) {
            lua_pushnil(L);
            lua_pushliteral(L, "held");
            return 2;
        }
        return fail(L, "cannot lock", path, e);
    }
    *ud = fd;
    return 1;
}

/* The one rule for text from data (a file's content or name, a config value, a study's
 * error) on its way to a terminal: every byte that could drive the terminal becomes
 * visible text.  Escaped: C0 controls (ESC, BEL, backspace, CR, NUL, ...; newline and
 * tab kept when keep_lines), DEL as \x7f; the C1 controls U+0080-U+009F (CSI, OSC, ST in
 * their 8-bit form, which a UTF-8 terminal obeys) as \u0080-\u009f, and the
 * bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069, which
 * reorder what follows them on the line) as \u202a...; and every byte
 * that is not part of well-formed UTF-8 (a lone 0x9b, an overlong form, a surrogate, a
 * truncated sequence) as \xNN.  Other text, valid UTF-8 included, is kept.  out holds at
 * least 4 * n bytes (the longest escape, \xNN, replaces one byte; \u00NN two, \u202e
 * three); returns
 * the length written. */
size_t repro_printable(const char *s, size_t n, int keep_lines, char *out)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        unsigned c = p[i];
        if (c < 0x80) {
            if ((c < 0x20 && !(keep_lines && (c == '\n' || c == '\t'))) || c == 0x7f) {
                out[o++] = '\\', out[o++] = 'x', out[o++] = hex[c >> 4], out[o++] = hex[c & 15];
            } else {
                out[o++] = (char)c;
            }
            i++;
            continue;
        }
        /* a well-formed UTF-8 sequence (RFC 3629): its length and code point */
        size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 :
                     c >= 0xf0 && c <= 0xf4 ? 4 : 0;
        unsigned long cp = len == 2 ? c & 0x1f : len == 3 ? c & 0x0f : c & 0x07;
        for (size_t k = 1; len && k < len; k++) {
            if (i + k >= n || (p[i + k] & 0xc0) != 0x80)
                len = 0;
            else
                cp = cp << 6 | (p[i + k] & 0x3f);
        }
        if (len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff)))
            len = 0;
        if (len == 4 && (cp < 0x10000 || cp > 0x10ffff))
            len = 0;
        if (len == 0) {
            out[o++] = '\\', out[o++] = 'x', out[o++] = hex[c >> 4], out[o++] = hex[c & 15];
            i++;
        } else if (cp <= 0x9f || (cp >= 0x202a && cp <= 0x202e) ||
                   (cp >= 0x2066 && cp <= 0x2069)) {
            out[o++] = '\\', out[o++] = 'u';
            for (int shift = 12; shift >= 0; shift -= 4)
                out[o++] = hex[(cp >> shift) & 15];
            i += len;
        } else {
            memcpy(out + o, p + i, len);
            o += len;
            i += len;
        }
    }
    return o;
}

/* The atomic writer (engine/atomicfile.h) as a Lua object: sys.atomic(path) -> w, or nil
 * and a message; w:write(text) -> true, or nil and a message; w:commit() -> true, or nil
 * and a message (the temporary file removed); w:abort().  __gc and __close abort an
 * uncommitted writer, so an error between open and commit leaves no temporary file. */
#define ATOMIC_MT "repro.sys.atomic"

static int write_fail(lua_State *L, const char *path, int e)
{
    lua_pushnil(L);
    if (e == ELOOP)
        lua_pushfstring(L, "cannot write %s: its folder is a symbolic link (writes never "
                           "follow links)", path);
    else if (e == EEXIST)
        lua_pushfstring(L, "cannot write %s: no free temporary name beside it", path);
    else
        lua_pushfstring(L, "cannot write %s: %s", path, strerror(e));
    return 2;
}

static af_file *check_atomic(lua_State *L)
{
    af_file *a = luaL_checkudata(L, 1, ATOMIC_MT);
    if (a->dirfd < 0)
        luaL_error(L, "the atomic writer is closed (committed or aborted)");
    return a;
}

static int atomic_abort(lua_State *L)
{
    af_file *a = luaL_checkudata(L, 1, ATOMIC_MT);
    af_abort(a);
    return 0;
}

static int atomic_write(lua_State *L)
{
    af_file *a = check_atomic(L);
    size_t n;
    const char *p = luaL_checklstring(L, 2, &n);
    if (af_write(a, p, n) != 0) {
        int e = errno;
        lua_getiuservalue(L, 1, 1);
        return write_fail(L, lua_tostring(L, -1), e);
    }
    lua_pushboolean(L, 1);
    return 1;
}

static int atomic_commit(lua_State *L)
{
    af_file *a = check_atomic(L);
    if (af_commit(a, 0) != 0) {
        int e = errno;
        lua_getiuservalue(L, 1, 1);
        return write_fail(L, lua_tostring(L, -1), e);
    }
    lua_pushboolean(L, 1);
    return 1;
}

static int sys_atomic(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    af_file *a = lua_newuserdatauv(L, sizeof *a, 1);
    a->dirfd = a->fd = -1;
    a->name = a->tmp = NULL;
    a->pid = 0;
    luaL_setmetatable(L, ATOMIC_MT);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, 1);
    if (af_open(a, path) != 0)
        return write_fail(L, path, errno);
    return 1;
}

/* Overwrites an existing regular file in place (no temporary copy: for a full disk, where
 * the truncation frees the blocks the new text takes): never through a symbolic link,
 * never a FIFO or a device; true, or nil and a message. */
static int sys_overwrite(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    size_t n;
    const char *text = luaL_checklstring(L, 2, &n);
    int fd = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return write_fail(L, path, errno == ELOOP ? EPERM : errno);
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        lua_pushnil(L);
        lua_pushfstring(L, "cannot write %s: not a regular file", path);
        return 2;
    }
    af_file a = {.dirfd = -1, .fd = fd, .name = NULL, .tmp = NULL, .pid = 0};
    int bad = ftruncate(fd, 0) != 0 || af_write(&a, text, n) != 0;
    int e = errno;
    if (close(fd) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad)
        return write_fail(L, path, e);
    lua_pushboolean(L, 1);
    return 1;
}

/* A file of a records tree read line by line: sys.lines(path, max_line) -> r, or nil and
 * a message (the rules of sys.read_file: a regular file, no link, opened non-blocking).
 * r:next() -> the next line without its "\n", nil at the end, or nil and a
 * message naming the path and line number when a line is longer than max_line bytes or a
 * read fails; r:sha256() -> the SHA-256 of every byte read (after the end: the file's);
 * r:close().  One line in memory at a time, never more than max_line bytes of it. */
#define LINES_MT "repro.sys.lines"

typedef struct {
    int fd;
    int eof;
    lua_Integer line, max_line;
    size_t pos, fill;
    sha256_ctx sha;
    char buf[1 << 16];
} line_reader;

static int lines_close(lua_State *L)
{
    line_reader *r = luaL_checkudata(L, 1, LINES_MT);
    if (r->fd >= 0) {
        close(r->fd);
        r->fd = -1;
    }
    return 0;
}

static int lines_next(lua_State *L)
{
    line_reader *r = luaL_checkudata(L, 1, LINES_MT);
    lua_getiuservalue(L, 1, 1);
    const char *path = lua_tostring(L, -1);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    lua_Integer len = 0;
    for (;;) {
        if (r->pos == r->fill) {
            if (r->fd < 0 || r->eof)
                break;
            ssize_t got = read(r->fd, r->buf, sizeof r->buf);
            if (got < 0 && errno == EINTR)
                continue;
            if (got < 0) {
                int e = errno;
                lua_pushnil(L);
                lua_pushfstring(L, "cannot read %s: %s", path, strerror(e));
                return 2;
            }
            if (got == 0) {
                r->eof = 1;
                break;
            }
            sha256_update(&r->sha, (const unsigned char *)r->buf, (size_t)got);
            r->pos = 0;
            r->fill = (size_t)got;
        }
        const char *start = r->buf + r->pos;
        const char *nl = memchr(start, '\n', r->fill - r->pos);
        size_t take = nl ? (size_t)(nl - start) : r->fill - r->pos;
        if (len + (lua_Integer)take > r->max_line) {
            lua_pushnil(L);
            lua_pushfstring(L, "%s: line %I is longer than the %I bytes a line may have",
                            path, r->line + 1, r->max_line);
            return 2;
        }
        luaL_addlstring(&b, start, take);
        len += (lua_Integer)take;
        r->pos += take + (nl ? 1 : 0);
        if (nl) {
            r->line++;
            luaL_pushresult(&b);
            return 1;
        }
    }
    if (len == 0 && r->eof) {
        lua_pushnil(L);
        return 1;
    }
    r->line++;
    luaL_pushresult(&b);
    return 1;
}

static int lines_sha256(lua_State *L)
{
    line_reader *r = luaL_checkudata(L, 1, LINES_MT);
    sha256_ctx copy = r->sha;
    char hex[65];
    sha256_final(&copy, hex);
    lua_pushstring(L, hex);
    return 1;
}

static int sys_lines(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    lua_Integer max_line = luaL_checkinteger(L, 2);
    luaL_argcheck(L, max_line > 0, 2, "a line-length cap > 0");
    line_reader *r = lua_newuserdatauv(L, sizeof *r, 1);
    r->fd = -1;
    r->eof = 0;
    r->line = 0;
    r->max_line = max_line;
    r->pos = r->fill = 0;
    sha256_init(&r->sha);
    luaL_setmetatable(L, LINES_MT);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, 1);
    r->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
    if (r->fd < 0) {
        if (errno == ELOOP) {
            lua_pushnil(L);
            lua_pushfstring(L, "cannot read %s: a symbolic link (not followed)", path);
            return 2;
        }
        return fail(L, "cannot read", path, errno);
    }
    struct stat st;
    if (fstat(r->fd, &st) != 0)
        return fail(L, "cannot read", path, errno);
    if (!S_ISREG(st.st_mode)) {
        lua_pushnil(L);
        lua_pushfstring(L, "cannot read %s: not a regular file", path);
        return 2;
    }
    return 1;
}

static int sys_printable(lua_State *L)
{
    size_t n;
    const char *s = luaL_tolstring(L, 1, &n);
    int keep_lines = lua_toboolean(L, 2);
    luaL_Buffer b;
    char *out = luaL_buffinitsize(L, &b, 4 * n + 1);
    luaL_pushresultsize(&b, repro_printable(s, n, keep_lines, out));
    return 1;
}

/* One log.csv field as record/reader.lua's log_number reads it, pushed: nil when empty
 * or not a number (Lua's tonumber: an embedded NUL is none). */
static void push_log_number(lua_State *L, const char *f, size_t n)
{
    static volatile double zero = 0.0; /* 0/0 at run time, as Lua's own 0 / 0 */
    if (n == 0 || memchr(f, '\0', n)) {
        lua_pushnil(L);
        return;
    }
    if ((n == 3 && memcmp(f, "nan", 3) == 0) || (n == 4 && memcmp(f, "-nan", 4) == 0)) {
        lua_pushnumber(L, zero / zero);
        return;
    }
    if (n == 3 && memcmp(f, "inf", 3) == 0) {
        lua_pushnumber(L, HUGE_VAL);
        return;
    }
    if (n == 4 && memcmp(f, "-inf", 4) == 0) {
        lua_pushnumber(L, -HUGE_VAL);
        return;
    }
    char buf[128];
    const char *z = buf;
    if (n < sizeof buf) {
        memcpy(buf, f, n);
        buf[n] = '\0';
    } else {
        z = lua_pushlstring(L, f, n);
    }
    /* z ends at its n bytes (no NUL inside): a number uses them all or none is pushed */
    size_t used = lua_stringtonumber(L, z);
    if (n >= sizeof buf) /* the copy sits under the number, when there is one */
        lua_remove(L, used ? -2 : -1);
    if (!used)
        lua_pushnil(L);
}

/* The end of the line starting at p (the LF or end), skipping nothing. */
static const char *line_end(const char *p, const char *end)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    return nl ? nl : end;
}

static int sys_parse_log(lua_State *L)
{
    size_t len;
    const char *p = luaL_optlstring(L, 1, "", &len);
    const char *end = p + len;
    lua_settop(L, 1);
    lua_createtable(L, 0, 3); /* 2: the result */
    lua_newtable(L);          /* 3: columns */
    lua_newtable(L);          /* 4: data */
    lua_newtable(L);          /* 5: each column's value table, by position */
    while (p < end && *p == '\n')
        p++;
    const char *e = line_end(p, end); /* the header, or "" when there is no line */
    lua_Integer ncols = 0;
    for (const char *f = p;; ncols++) {
        const char *c = memchr(f, ',', (size_t)(e - f));
        const char *fe = c ? c : e;
        lua_pushlstring(L, f, (size_t)(fe - f));
        lua_pushvalue(L, -1);
        lua_rawseti(L, 3, ncols + 1);
        lua_newtable(L);
        lua_rawset(L, 4);
        if (!c)
            break;
        f = c + 1;
    }
    ncols++;
    for (lua_Integer i = 1; i <= ncols; i++) {
        lua_rawgeti(L, 3, i);
        lua_rawget(L, 4);
        lua_rawseti(L, 5, i);
    }
    lua_Integer rows = 0;
    for (p = e; p < end;) {
        while (p < end && *p == '\n')
            p++;
        if (p >= end)
            break;
        e = line_end(p, end);
        rows++;
        lua_Integer i = 0;
        for (const char *f = p;;) {
            const char *c = memchr(f, ',', (size_t)(e - f));
            const char *fe = c ? c : e;
            if (++i <= ncols) {
                lua_rawgeti(L, 5, i);
                push_log_number(L, f, (size_t)(fe - f));
                lua_rawseti(L, -2, rows);
                lua_pop(L, 1);
            }
            if (!c)
                break;
            f = c + 1;
        }
        p = e;
    }
    lua_pushvalue(L, 3);
    lua_setfield(L, 2, "columns");
    lua_pushvalue(L, 4);
    lua_setfield(L, 2, "data");
    lua_pushinteger(L, rows);
    lua_setfield(L, 2, "n");
    lua_pushvalue(L, 2);
    return 1;
}

int luaopen_sys(lua_State *L)
{
    static const luaL_Reg lock_methods[] = {{"release", lock_release}, {NULL, NULL}};
    static const luaL_Reg fns[] = {{"sha256", sys_sha256},   {"sha256_file", sys_sha256_file},
                                   {"stat", sys_stat},       {"listdir", sys_listdir},
                                   {"lstat", sys_lstat},     {"read_file", sys_read_file},
                                   {"realpath", sys_realpath}, {"cores", sys_cores},
                                   {"lock", sys_lock},       {"mkdir_p", sys_mkdir_p},
                                   {"mkdtemp", sys_mkdtemp}, {"pid_alive", sys_pid_alive},
                                   {"mkdir", sys_mkdir},     {"rmdir", sys_rmdir},
                                   {"euid", sys_euid},       {"random_seed", sys_random_seed},
                                   {"printable", sys_printable},
                                   {"atomic", sys_atomic},   {"overwrite", sys_overwrite},
                                   {"lines", sys_lines},      {"parse_log", sys_parse_log},
                                   {NULL, NULL}};
    if (luaL_newmetatable(L, LOCK_MT)) {
        luaL_newlib(L, lock_methods);
        lua_setfield(L, -2, "__index");
        lua_pushcfunction(L, lock_release);
        lua_setfield(L, -2, "__gc");
        lua_pushcfunction(L, lock_release);
        lua_setfield(L, -2, "__close");
    }
    lua_pop(L, 1);
    if (luaL_newmetatable(L, FD_MT)) {
        lua_pushcfunction(L, fd_close);
        lua_setfield(L, -2, "__gc");
    }
    lua_pop(L, 1);
    static const luaL_Reg atomic_methods[] = {
        {"write", atomic_write}, {"commit", atomic_commit}, {"abort", atomic_abort}, {NULL, NULL}};
    if (luaL_newmetatable(L, ATOMIC_MT)) {
        luaL_newlib(L, atomic_methods);
        lua_setfield(L, -2, "__index");
        lua_pushcfunction(L, atomic_abort);
        lua_setfield(L, -2, "__gc");
        lua_pushcfunction(L, atomic_abort);
        lua_setfield(L, -2, "__close");
    }
    lua_pop(L, 1);
    static const luaL_Reg lines_methods[] = {
        {"next", lines_next}, {"sha256", lines_sha256}, {"close", lines_close}, {NULL, NULL}};
    if (luaL_newmetatable(L, LINES_MT)) {
        luaL_newlib(L, lines_methods);
        lua_setfield(L, -2, "__index");
        lua_pushcfunction(L, lines_close);
        lua_setfield(L, -2, "__gc");
        lua_pushcfunction(L, lines_close);
        lua_setfield(L, -2, "__close");
    }
    lua_pop(L, 1);
    if (luaL_newmetatable(L, DIR_MT)) {
        lua_pushcfunction(L, dir_close);
        lua_setfield(L, -2, "__gc");
    }
    lua_pop(L, 1);
    luaL_newlib(L, fns);
    return 1;
}
