/* PCG32 (O'Neill's pcg32: 64-bit LCG state, XSH-RR output), the only source of
 * random numbers in the project.
 *
 * Promises: pcg32_seed/pcg32_next/pcg32_bounded reproduce the reference
 * implementation (pcg32_srandom_r, pcg32_random_r, pcg32_boundedrand_r) bit for
 * bit; pcg32_uniform and pcg32_normal are pure functions of the generator state,
 * so the same (seed, stream) gives the same draws on every build of this code.
 *
 * Streams.  A run's seed feeds one stream per purpose, so that changing one
 * consumer (say dropout) never shifts the draws of another (say data order):
 *     pcg32_stream(&r, seed, PCG_PURPOSE_DATA, 0)
 * seeds with stream id (purpose << 40) | index.  `index` separates independent
 * sub-streams of one purpose (e.g. one per training step for dropout) so that a
 * consumer can jump straight to its draws without replaying the others.
 */
#ifndef REPRO_PCG_H
#define REPRO_PCG_H

#include <stdint.h>

typedef struct {
    uint64_t state;
    uint64_t inc; /* always odd */
} pcg32;

enum pcg_purpose {
    PCG_PURPOSE_INIT = 1,    /* parameter initialization */
    PCG_PURPOSE_DATA = 2,    /* batch start offsets */
    PCG_PURPOSE_DROPOUT = 3, /* dropout masks */
    PCG_PURPOSE_STATS = 4,   /* bootstrap and permutation resampling */
    PCG_PURPOSE_SUBSET = 5,  /* validation subsets of the subset accuracy (diag.h) */
    PCG_PURPOSE_BALANCED = 6, /* validation subsets of the balanced accuracy (diag.h) */
    PCG_PURPOSE_TASKS = 7,   /* few-shot demonstrations (tasks.h) */
    PCG_PURPOSE_SAMPLE = 8,   /* text sampled from a kept model (train.h train_sample) */
};

void pcg32_seed(pcg32 *r, uint64_t seed, uint64_t stream);
void pcg32_stream(pcg32 *r, uint64_t seed, enum pcg_purpose purpose, uint64_t index);
uint32_t pcg32_next(pcg32 *r);
/* Uniform integer in [0, bound), bound >= 1, without modulo bias. */
uint32_t pcg32_bounded(pcg32 *r, uint32_t bound);
/* Uniform float in [0, 1) from the top 24 bits of one output. */
float pcg32_uniform(pcg32 *r);
/* Uniform double in [0, 1) from 53 bits of two outputs. */
double pcg32_uniform_double(pcg32 *r);
/* Standard normal deviate (Marsaglia's polar method; the second deviate of each
 * accepted pair is discarded so the generator carries no hidden cache). */
double pcg32_normal(pcg32 *r);

#endif
