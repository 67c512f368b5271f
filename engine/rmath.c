#include "rmath.h"

#include <math.h> /* fma, fmaf, fabs, fabsf, INFINITY, NAN: exact operations only */
#include <stdint.h>
#include <string.h>

static inline uint64_t bits64(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline double from_bits64(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

static inline int32_t bits32(float x)
{
    int32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline float from_bits32(int32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* ---- double ---------------------------------------------------------------------- */

/* On x86-64 the double functions are also built for CPUs with FMA and the better clone is
 * chosen at load time (GCC target_clones): fma() is then one instruction instead of a
 * call into libm.  fma is exactly rounded either way, so both clones return the same
 * bits; only the speed differs (the temperature scan calls rm_exp about 10^8 times). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define RM_CLONES __attribute__((target_clones("fma", "default")))
#else
#define RM_CLONES
#endif

#define LOG2E RM_EXP_LOG2E
#define LN2_HI RM_EXP_LN2_HI
#define LN2_LO RM_EXP_LN2_LO
#define ROUND_D RM_EXP_ROUND

/* 2^n for -1074 <= n <= 1023 (through a second factor outside the normal range). */
static double pow2i(int n)
{
    if (n < -1022)
        return from_bits64((uint64_t)(n + 54 + 1023) << 52) * 5.5511151231257827e-17; /* 2^-54 */
    if (n > 1023)
        return from_bits64((uint64_t)(n - 1 + 1023) << 52) * 2.0;
    return from_bits64((uint64_t)(n + 1023) << 52);
}

RM_CLONES double rm_exp(double x)
{
    if (x != x)
        return x;
    if (x > 709.782712893384)
        return INFINITY;
    if (x < -745.2)
        return 0.0;
    double t = fma(x, LOG2E, ROUND_D);
    double n = t - ROUND_D;
    double r = fma(-n, LN2_HI, x);
    r = fma(-n, LN2_LO, r);
    /* e^r, |r| <= 0.35: Taylor to degree 13 (truncation < 2e-17 relative) */
    double p = RM_EXP_C13;
    p = fma(p, r, RM_EXP_C12);
    p = fma(p, r, RM_EXP_C11);
    p = fma(p, r, RM_EXP_C10);
    p = fma(p, r, RM_EXP_C9);
    p = fma(p, r, RM_EXP_C8);
    p = fma(p, r, RM_EXP_C7);
    p = fma(p, r, RM_EXP_C6);
    p = fma(p, r, RM_EXP_C5);
    p = fma(p, r, RM_EXP_C4);
    p = fma(p, r, RM_EXP_C3);
    p = fma(p, r, RM_EXP_C2);
    p = fma(p, r, 1.0);
    p = fma(p, r, 1.0);
    int ni = (int)n;
    if (ni < -1022) /* subnormal result: scale in two steps so only the last one rounds */
        return (p * pow2i(ni + 60)) * 8.6736173798840355e-19; /* 2^-60 */
    return p * pow2i(ni);
}

RM_CLONES double rm_log(double x)
{
    if (x != x || x < 0.0)
        return NAN;
    if (x == 0.0)
        return -INFINITY;
    if (x == INFINITY)
        return x;
    int e = 0;
    if (x < 2.2250738585072014e-308) { /* subnormal */
        x *= 18014398509481984.0;      /* 2^54 */
        e = -54;
    }
    uint64_t u = bits64(x);
    e += (int)((u >> 52) & 0x7ff) - 1023;
    double m = from_bits64((u & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL); /* [1, 2) */
    if (m > 1.4142135623730951) {
        m *= 0.5;
        e++;
    }
    /* log(m) = 2 atanh(s), s = (m-1)/(m+1), |s| <= 0.1716: series to s^23 */
    double f = m - 1.0; /* exact (Sterbenz) */
    double s = f / (m + 1.0);
    double s2 = s * s;
    double p = 2.0 / 23.0;
    p = fma(p, s2, 2.0 / 21.0);
    p = fma(p, s2, 2.0 / 19.0);
    p = fma(p, s2, 2.0 / 17.0);
    p = fma(p, s2, 2.0 / 15.0);
    p = fma(p, s2, 2.0 / 13.0);
    p = fma(p, s2, 2.0 / 11.0);
    p = fma(p, s2, 2.0 / 9.0);
    p = fma(p, s2, 2.0 / 7.0);
    p = fma(p, s2, 2.0 / 5.0);
    p = fma(p, s2, 2.0 / 3.0);
    /* 2s = f - s*f exactly in real arithmetic (2s = f - s f); keep f as the big part */
    double hfsq = s * f; /* f - 2s = s f */
    double lm = f - fma(-s2 * s, p, hfsq);
    double de = (double)e;
    return fma(de, LN2_HI, fma(de, LN2_LO, lm));
}

#define PIO2_1 1.57079632673412561417e+00  /* first 33 bits of pi/2 */
#define PIO2_2 6.07710050630396597660e-11  /* next 33 bits */
#define PIO2_3 2.02226624871116645580e-21  /* the rest */
#define TWO_OVER_PI 6.36619772367581382433e-01

double rm_cos(double x)
{
    if (x != x || fabs(x) == INFINITY)
        return NAN;
    x = fabs(x);
    double t = fma(x, TWO_OVER_PI, ROUND_D);
    double k = t - ROUND_D;
    double y = fma(-k, PIO2_1, x);
    y = fma(-k, PIO2_2, y);
    y = fma(-k, PIO2_3, y);
    int q = (int)(bits64(t) & 3);
    double y2 = y * y, r;
    if (q == 0 || q == 2) { /* cos(y), |y| <= pi/4: Taylor to y^18 */
        double p = 1.0 / 6402373705728000.0;
        p = fma(p, -y2, 1.0 / 20922789888000.0);
        p = fma(p, -y2, 1.0 / 87178291200.0);
        p = fma(p, -y2, 1.0 / 479001600.0);
        p = fma(p, -y2, 1.0 / 3628800.0);
        p = fma(p, -y2, 1.0 / 40320.0);
        p = fma(p, -y2, 1.0 / 720.0);
        p = fma(p, -y2, 1.0 / 24.0);
        r = fma(y2 * y2, p, 1.0 - 0.5 * y2); /* 1 - y²/2 + y⁴(1/24 - ...) */
        if (q == 2)
            r = -r;
    } else { /* sin(y): Taylor to y^17 */
        double p = 1.0 / 355687428096000.0;
        p = fma(p, -y2, 1.0 / 1307674368000.0);
        p = fma(p, -y2, 1.0 / 6227020800.0);
        p = fma(p, -y2, 1.0 / 39916800.0);
        p = fma(p, -y2, 1.0 / 362880.0);
        p = fma(p, -y2, 1.0 / 5040.0);
        p = fma(p, -y2, 1.0 / 120.0);
        p = fma(p, -y2, 1.0 / 6.0);
        r = fma(-y2 * y, p, y);
        if (q == 1)
            r = -r;
    }
    return r;
}

double rm_powi(double x, long n)
{
    double r = 1.0;
    while (n > 0) {
        if (n & 1)
            r *= x;
        x *= x;
        n >>= 1;
    }
    return r;
}

/* ---- float lane functions (engine/simd.h repeats them operation for operation) -------- */

static inline float lane_min(float a, float b) { return a < b ? a : b; }
static inline float lane_max(float a, float b) { return a > b ? a : b; }

float rm_expf(float x)
{
    x = lane_min(RM_EXPF_HI, x); /* NaN passes through both clamps */
    x = lane_max(RM_EXPF_LO, x);
    float t = fmaf(x, RM_LOG2EF, RM_ROUNDF);
    float n = t - RM_ROUNDF;
    float r = fmaf(-n, RM_LN2F_HI, x);
    r = fmaf(-n, RM_LN2F_LO, r);
    float p = 1.0f / 5040.0f;
    p = fmaf(p, r, 1.0f / 720.0f);
    p = fmaf(p, r, 1.0f / 120.0f);
    p = fmaf(p, r, 1.0f / 24.0f);
    p = fmaf(p, r, 1.0f / 6.0f);
    p = fmaf(p, r, 0.5f);
    p = fmaf(p, r, 1.0f);
    p = fmaf(p, r, 1.0f);
    int32_t e = (int32_t)((uint32_t)(bits32(t) - bits32(RM_ROUNDF) + 127) << 23);
    return p * from_bits32(e);
}

float rm_tanhf(float u)
{
    /* small |u|: u + u³·P(u²), the odd Taylor series to u^19 */
    float u2 = u * u;
    float p = -443861162.0f / 1856156927625.0f;
    p = fmaf(p, u2, 6404582.0f / 10854718875.0f);
    p = fmaf(p, u2, -929569.0f / 638512875.0f);
    p = fmaf(p, u2, 21844.0f / 6081075.0f);
    p = fmaf(p, u2, -1382.0f / 155925.0f);
    p = fmaf(p, u2, 62.0f / 2835.0f);
    p = fmaf(p, u2, -17.0f / 315.0f);
    p = fmaf(p, u2, 2.0f / 15.0f);
    p = fmaf(p, u2, -1.0f / 3.0f);
    float small = fmaf(u * u2, p, u);
    /* otherwise 1 - 2 / (exp(2u) + 1) */
    float e = rm_expf(u + u);
    float big = 1.0f - 2.0f / (e + 1.0f);
    return fabsf(u) < RM_TANHF_SMALL ? small : big;
}
