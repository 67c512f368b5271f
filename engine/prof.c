/* The step profile of prof.h: one accumulator per kind of work, written by the main thread
 * only (every call it times starts and ends outside parallel regions). */
#include "prof.h"

#include <string.h>
#include <time.h>

int prof_on = 0;
static double acc[PROF_N];

static const char *const names[PROF_N] = {
    "embed",   "qkv_fwd",  "proj_fwd", "fc_fwd", "fc2_fwd", "logits_fwd", "qkv_bwd", "proj_bwd",
    "fc_bwd",  "fc2_bwd",  "logits_bwd", "attn_fwd", "attn_bwd", "norm", "xent", "optim"};

double prof_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void prof_add(int kind, double t0)
{
    if (kind >= 0 && kind < PROF_N)
        acc[kind] += prof_clock() - t0;
}

void prof_enable(int on)
{
    if (on)
        memset(acc, 0, sizeof acc);
    prof_on = on != 0;
}

void prof_read(double out[PROF_N])
{
    memcpy(out, acc, sizeof acc);
}

const char *prof_name(int kind)
{
    return kind >= 0 && kind < PROF_N ? names[kind] : "?";
}
