/* The generic path: portable C11 with fmaf, no target flags (it builds and runs on
 * aarch64 and any other CPU).  The reference for the other paths: each computes these
 * bits. */
#define KERN_GENERIC
#define KSFX generic
#include "kern_ops.h"
#include "simd.h"

static void micro_4x16(int kc, const float *restrict A, long rs, long ks,
                       const float *restrict Bp, long bs, float *restrict C, int ldc,
                       const float *restrict bias, int load_c, int mr, int nr)
{
    float acc[4][16];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 16; j++)
            acc[i][j] = j >= nr           ? 0.0f
                        : bias            ? bias[j]
                        : load_c && i < mr ? C[(size_t)i * ldc + j]
                                           : 0.0f;
    const float *ak = A;
    for (int k = 0; k < kc; k++, ak += ks) {
        const float *b = Bp + (size_t)k * bs;
        for (int i = 0; i < 4; i++) {
            float a = ak[i * rs];
            for (int j = 0; j < 16; j++)
                acc[i][j] = fmaf(a, b[j], acc[i][j]);
        }
    }
    for (int i = 0; i < mr; i++)
        for (int j = 0; j < nr; j++)
            C[(size_t)i * ldc + j] = acc[i][j];
}

/* 12 independent chains of 16-lane fmaf (as the generic kernels run them) */
static double fma_peak_generic(long n)
{
    v16 a[12], x = v_set1(1.0000001f), y = v_set1(-1e-7f);
    for (int i = 0; i < 12; i++)
        a[i] = v_set1((float)i);
    for (long r = 0; r < n; r++)
        for (int i = 0; i < 12; i++)
            a[i] = v_fma(a[i], x, y);
    float s = 0.0f;
    for (int i = 0; i < 12; i++)
        s += v_hsum(a[i]);
    return s == 12345.0f ? 0.0 : 2.0 * 16 * 12 * (double)n;
}

/* x[i] = rm_exp(x[i]) and out[i] = rm_exp(beta * ((double)z[i] - shift)): the definitions */
static void vexp_generic(double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = rm_exp(x[i]);
}

static void vexp_shifted_generic(double *out, const float *z, size_t n, double beta,
                                 double shift)
{
    for (size_t i = 0; i < n; i++)
        out[i] = rm_exp(beta * ((double)z[i] - shift));
}

#include "kern_body.h"

const kern_ops kern_ops_generic = KERN_TABLE("generic", 4, 16, micro_4x16, 4, micro_4x16,
                                              fma_peak_generic, NULL, vexp_generic,
                                              vexp_shifted_generic);
