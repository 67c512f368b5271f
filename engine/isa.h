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

/* Subnormal floats.  Training at high learning rates can fill attention probabilities and
 * gradients with subnormal values, and on the reference CPU (Zen 5) every FMA touching
 * one takes a microcode assist: a run at peak lr 3e-2 trained at 885 instead of 8,000
 * tokens/s.  The engine therefore trains with subnormals flushed to zero, on every path
 * the same: x86 MXCSR FTZ + DAZ (inputs and results; SSE and AVX obey the same bits, and
 * glibc's fmaf is the FMA instruction on CPUs with FMA), aarch64 FPCR.FZ.  One
 * difference is left: x86 flushes a result that is subnormal after rounding, aarch64 one
 * that is tiny before rounding, so a result whose exact value lies just below FLT_MIN
 * and rounds up to it is FLT_MIN on x86 and 0 on aarch64.
 * isa_flush_begin() sets the mode on the calling thread and returns the previous one;
 * isa_flush_end() restores it. */
unsigned long isa_flush_begin(void);
void isa_flush_end(unsigned long saved);

#endif
