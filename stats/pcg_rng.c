/* PCG32 (engine/pcg.h) as a gsl_rng type, so every gsl_ran_* can draw from it. */
#include "../engine/pcg.h"
#include "internal.h"
#include "stats.h"

static void pcg_rng_set(void *state, unsigned long seed)
{
    pcg32_seed((pcg32 *)state, (uint64_t)seed, 0);
}

static unsigned long pcg_rng_get(void *state)
{
    return pcg32_next((pcg32 *)state);
}

static double pcg_rng_get_double(void *state)
{
    return pcg32_uniform_double((pcg32 *)state);
}

static const gsl_rng_type pcg_rng_type = {
    "pcg32", 0xffffffffUL, 0, sizeof(pcg32), pcg_rng_set, pcg_rng_get, pcg_rng_get_double,
};

const gsl_rng_type *stats_rng_pcg32 = &pcg_rng_type;

gsl_rng *stats_rng_alloc(uint64_t seed, uint64_t index)
{
    stats_gsl_off();
    gsl_rng *r = gsl_rng_alloc(stats_rng_pcg32);
    if (r)
        stats_rng_set_stream(r, seed, index);
    return r;
}

void stats_rng_set_stream(gsl_rng *r, uint64_t seed, uint64_t index)
{
    pcg32_stream((pcg32 *)r->state, seed, PCG_PURPOSE_STATS, index);
}
