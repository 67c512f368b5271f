#include "isa.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "kern_ops.h"

const kern_ops *kern = NULL;

typedef struct {
    const char *name;
    const kern_ops *ops;
    int (*cpu_has)(void);
} isa_entry;

static int always(void) { return 1; }
#if defined(__x86_64__)
static int has_avx512(void) { return __builtin_cpu_supports("avx512f") != 0; }
static int has_avx2(void)
{
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

/* best first */
static const isa_entry paths[] = {
#if defined(__x86_64__)
    {"avx512", &kern_ops_avx512, has_avx512},
    {"avx2", &kern_ops_avx2, has_avx2},
#endif
    {"generic", &kern_ops_generic, always},
};
#define N_PATHS ((int)(sizeof paths / sizeof paths[0]))

static void list(char *buf, size_t len, int only_available)
{
    buf[0] = '\0';
    for (int i = 0; i < N_PATHS; i++) {
        if (only_available && !paths[i].cpu_has())
            continue;
        size_t u = strlen(buf);
        snprintf(buf + u, len - u, "%s%s", u ? " " : "", paths[i].name);
    }
}

const char *isa_available(void)
{
    static char buf[64];
    list(buf, sizeof buf, 1);
    return buf;
}

const char *isa_compiled(void)
{
    static char buf[64];
    list(buf, sizeof buf, 0);
    return buf;
}

int isa_select(const char *name, char *err, size_t errlen)
{
    if (!name || !*name)
        name = getenv("REPRO_ISA");
    if (!name || !*name) {
        for (int i = 0; i < N_PATHS; i++)
            if (paths[i].cpu_has()) {
                kern = paths[i].ops;
                return 0;
            }
    }
    for (int i = 0; i < N_PATHS; i++) {
        if (strcmp(paths[i].name, name) != 0)
            continue;
        if (!paths[i].cpu_has()) {
            snprintf(err, errlen, "REPRO_ISA=%s: this CPU lacks it (it has: %s)", name,
                     isa_available());
            return -1;
        }
        kern = paths[i].ops;
        return 0;
    }
    snprintf(err, errlen, "REPRO_ISA=%s: unknown path (this binary has: %s; this CPU: %s)", name,
             isa_compiled(), isa_available());
    return -1;
}

const char *isa_name(void)
{
    if (!kern) {
        char err[256];
        if (isa_select(NULL, err, sizeof err)) { /* bin/repro refuses this at start-up */
            fprintf(stderr, "warning: %s; using generic\n", err);
            isa_select("generic", err, sizeof err);
        }
    }
    return kern->name;
}

unsigned long isa_flush_begin(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned int csr = _mm_getcsr();
    _mm_setcsr(csr | 0x8040u); /* FTZ (bit 15) | DAZ (bit 6) */
    return csr;
#elif defined(__aarch64__)
    unsigned long fpcr;
    __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
    __asm__ volatile("msr fpcr, %0" : : "r"(fpcr | (1ul << 24))); /* FZ */
    return fpcr;
#else
    return 0; /* no flush mode known for this CPU: subnormals are computed (slowly) */
#endif
}

void isa_flush_end(unsigned long saved)
{
#if defined(__x86_64__) || defined(__i386__)
    _mm_setcsr((unsigned int)saved);
#elif defined(__aarch64__)
    __asm__ volatile("msr fpcr, %0" : : "r"(saved));
#else
    (void)saved;
#endif
}
