#include "pcg.h"

#include <math.h>

#include "rmath.h"

#define PCG32_MULT 6364136223846793005ULL

uint32_t pcg32_next(pcg32 *r)
{
    uint64_t old = r->state;
    r->state = old * PCG32_MULT + r->inc;
    uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
    uint32_t rot = (uint32_t)(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((-rot) & 31u));
}

void pcg32_seed(pcg32 *r, uint64_t seed, uint64_t stream)
{
    r->state = 0u;
    r->inc = (stream << 1u) | 1u;
    pcg32_next(r);
    r->state += seed;
    pcg32_next(r);
}

void pcg32_stream(pcg32 *r, uint64_t seed, enum pcg_purpose purpose, uint64_t index)
{
    pcg32_seed(r, seed, ((uint64_t)purpose << 40) | (index & ((1ULL << 40) - 1)));
}

uint32_t pcg32_bounded(pcg32 *r, uint32_t bound)
{
    /* Reject the lowest (2^32 mod bound) outputs so every residue is equally likely. */
    uint32_t threshold = (uint32_t)(-bound) % bound;
    for (;;) {
        uint32_t x = pcg32_next(r);
        if (x >= threshold)
            return x % bound;
    }
}

float pcg32_uniform(pcg32 *r)
{
    return (float)(pcg32_next(r) >> 8) * (1.0f / 16777216.0f);
}

double pcg32_uniform_double(pcg32 *r)
{
    uint64_t hi = pcg32_next(r) >> 5; /* 27 bits */
    uint64_t lo = pcg32_next(r) >> 6; /* 26 bits */
    return (double)((hi << 26) | lo) * (1.0 / 9007199254740992.0);
}

double pcg32_normal(pcg32 *r)
{
    for (;;) {
        double u = 2.0 * pcg32_uniform_double(r) - 1.0;
        double v = 2.0 * pcg32_uniform_double(r) - 1.0;
        double s = u * u + v * v;
        if (s > 0.0 && s < 1.0)
            return u * sqrt(-2.0 * rm_log(s) / s);
    }
}
