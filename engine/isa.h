/* CPU paths of the engine's kernels: avx512 (AVX-512F), avx2 (AVX2 + FMA), generic
 * (portable C).  One binary carries every path its target allows (x86-64: all three;
 * other CPUs: generic) and picks one at start-up: the best the CPU has, or the one named
 * by the environment variable REPRO_ISA.  Every path computes the same bits
 * (engine/kernels.h), so the choice changes speed only. */
#ifndef REPRO_ISA_H
#define REPRO_ISA_H

#include <stddef.h>

/* Selects the path named `name` (NULL or "": REPRO_ISA if set, else the best the CPU
 * has).  0, or -1 with a message naming the path and what the CPU has (an unknown name,
 * or a path this CPU or build lacks); the selection is unchanged on error. */
int isa_select(const char *name, char *err, size_t errlen);
/* The path in use (selecting the default first if none was selected). */
const char *isa_name(void);
/* Space-separated paths this CPU can run, best first ("avx512 avx2 generic"). */
const char *isa_available(void);
/* Space-separated paths compiled into this binary. */
const char *isa_compiled(void);

#endif
