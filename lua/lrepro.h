/* Shared pieces of the Lua host and its C modules. */
#ifndef REPRO_LREPRO_H
#define REPRO_LREPRO_H

#include <stddef.h>

#include <lua.h>

/* Integer argument `arg`, named `name` in the error: "bad argument #2 to 'f' (n: integer
 * expected, got number 1.5)". */
lua_Integer repro_checkinteger(lua_State *L, int arg, const char *name);

/* Text from data made safe for a terminal (lua/lsys.c: the rule; sys.printable and
 * base.printable are this function): out holds at least 4 * n bytes; returns its length. */
size_t repro_printable(const char *s, size_t n, int keep_lines, char *out);

#if defined(__x86_64__)
#include <stdint.h>
/* SHA-256 with the x86 SHA extensions (lua/sha256_x86.c): whether this CPU has them, and
 * the compression of n 64-byte blocks into the state h with the round constants k. */
int repro_sha256_x86_ok(void);
void repro_sha256_x86_blocks(uint32_t h[8], const unsigned char *p, size_t n,
                             const uint32_t k[64]);
#endif

int luaopen_pcg(lua_State *L);
int luaopen_engine(lua_State *L);
int luaopen_stats(lua_State *L);
int luaopen_sys(lua_State *L);     /* repro.sys, lua/lsys.c */
int luaopen_proc(lua_State *L);    /* repro.proc, lua/lproc.c */
int luaopen_sandbox(lua_State *L); /* repro.sandbox, lua/lsandbox.c */

#endif
