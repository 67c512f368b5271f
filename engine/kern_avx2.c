/* The avx2 path (AVX2 + FMA): 16-lane kernels on two ymm registers, and a 6x16 GEMM
 * micro-kernel.  Built with -mavx2 -mfma (Makefile); chosen at run time only when the CPU
 * has both (engine/isa.c). */
#if defined(__x86_64__)
#define KERN_AVX2
#define KSFX avx2
#include "kern_ops.h"
#include "simd.h"

static void micro_6x16(int kc, const float *restrict A, long rs, long ks,
                       const float *restrict Bp, long bs, float *restrict C, int ldc,
                       const float *restrict bias, int load_c, int mr, int nr)
{
    __m256 acc[6][2];
    int full = nr == 16;
    float t[16] = {0};
    if (bias) {
        memcpy(t, bias, (size_t)nr * sizeof(float));
        __m256 b0 = _mm256_loadu_ps(t), b1 = _mm256_loadu_ps(t + 8);
        _Pragma("GCC unroll 6") for (int i = 0; i < 6; i++)
        {
            acc[i][0] = b0;
            acc[i][1] = b1;
        }
    } else {
        _Pragma("GCC unroll 6") for (int i = 0; i < 6; i++)
        {
            if (load_c && i < mr) {
                const float *src = C + (size_t)i * ldc;
                if (full) {
                    acc[i][0] = _mm256_loadu_ps(src);
                    acc[i][1] = _mm256_loadu_ps(src + 8);
                } else {
                    memcpy(t, src, (size_t)nr * sizeof(float));
                    acc[i][0] = _mm256_loadu_ps(t);
                    acc[i][1] = _mm256_loadu_ps(t + 8);
                }
            } else {
                acc[i][0] = acc[i][1] = _mm256_setzero_ps();
            }
        }
    }
    const float *ak = A;
    _Pragma("GCC unroll 4") for (int k = 0; k < kc; k++, ak += ks)
    {
        const float *bk = Bp + (size_t)k * bs;
        __m256 b0 = _mm256_load_ps(bk), b1 = _mm256_load_ps(bk + 8);
        _Pragma("GCC unroll 6") for (int i = 0; i < 6; i++)
        {
            __m256 a = _mm256_broadcast_ss(ak + i * rs);
            acc[i][0] = _mm256_fmadd_ps(a, b0, acc[i][0]);
            acc[i][1] = _mm256_fmadd_ps(a, b1, acc[i][1]);
        }
    }
    _Pragma("GCC unroll 6") for (int i = 0; i < 6; i++)
    {
        if (i >= mr)
            break;
        float *dst = C + (size_t)i * ldc;
        if (full) {
            _mm256_storeu_ps(dst, acc[i][0]);
            _mm256_storeu_ps(dst + 8, acc[i][1]);
        } else {
            _mm256_storeu_ps(t, acc[i][0]);
            _mm256_storeu_ps(t + 8, acc[i][1]);
            memcpy(dst, t, (size_t)nr * sizeof(float));
        }
    }
}

/* 12 independent chains of 8-lane FMAs: 2 FLOPs x 8 lanes x 12 per round */
static double fma_peak_avx2(long n)
{
    /* twelve named accumulators, not an array: an array indexed in the loop was kept in
       memory by gcc -O2, and its twelve stores per round halved the measured peak */
    const __m256 x = _mm256_set1_ps(1.0000001f), y = _mm256_set1_ps(-1e-7f);
    __m256 a0 = _mm256_set1_ps(0.f), a1 = _mm256_set1_ps(1.f), a2 = _mm256_set1_ps(2.f),
           a3 = _mm256_set1_ps(3.f), a4 = _mm256_set1_ps(4.f), a5 = _mm256_set1_ps(5.f),
           a6 = _mm256_set1_ps(6.f), a7 = _mm256_set1_ps(7.f), a8 = _mm256_set1_ps(8.f),
           a9 = _mm256_set1_ps(9.f), a10 = _mm256_set1_ps(10.f), a11 = _mm256_set1_ps(11.f);
    for (long r = 0; r < n; r++) {
        a0 = _mm256_fmadd_ps(a0, x, y);
        a1 = _mm256_fmadd_ps(a1, x, y);
        a2 = _mm256_fmadd_ps(a2, x, y);
        a3 = _mm256_fmadd_ps(a3, x, y);
        a4 = _mm256_fmadd_ps(a4, x, y);
        a5 = _mm256_fmadd_ps(a5, x, y);
        a6 = _mm256_fmadd_ps(a6, x, y);
        a7 = _mm256_fmadd_ps(a7, x, y);
        a8 = _mm256_fmadd_ps(a8, x, y);
        a9 = _mm256_fmadd_ps(a9, x, y);
        a10 = _mm256_fmadd_ps(a10, x, y);
        a11 = _mm256_fmadd_ps(a11, x, y);
    }
    __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                            _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
    s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
    float sink[8];
    _mm256_storeu_ps(sink, s);
    return sink[0] == 12345.0f ? 0.0 : 2.0 * 8 * 12 * (double)n;
}

/* dst[e*ds + i] = src[i*ls + e] for one 8x8 block (unpack, shuffle, swap 128-bit halves) */
static void transpose8_avx2(const float *src, long ls, float *dst, long ds)
{
    __m256 t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        __m256 a = _mm256_loadu_ps(src + i * ls), b = _mm256_loadu_ps(src + (i + 1) * ls);
        t[i] = _mm256_unpacklo_ps(a, b);
        t[i + 1] = _mm256_unpackhi_ps(a, b);
    }
    for (int g = 0; g < 8; g += 4) {
        u[g] = _mm256_shuffle_ps(t[g], t[g + 2], 0x44);
        u[g + 1] = _mm256_shuffle_ps(t[g], t[g + 2], 0xEE);
        u[g + 2] = _mm256_shuffle_ps(t[g + 1], t[g + 3], 0x44);
        u[g + 3] = _mm256_shuffle_ps(t[g + 1], t[g + 3], 0xEE);
    }
    for (int c = 0; c < 4; c++) {
        _mm256_storeu_ps(dst + c * ds, _mm256_permute2f128_ps(u[c], u[4 + c], 0x20));
        _mm256_storeu_ps(dst + (c + 4) * ds, _mm256_permute2f128_ps(u[c], u[4 + c], 0x31));
    }
}

/* the 16x16 block as four 8x8 ones */
static void transpose16_avx2(const float *src, long ls, float *dst, long ds)
{
    for (int i = 0; i < 16; i += 8)
        for (int e = 0; e < 16; e += 8)
            transpose8_avx2(src + i * ls + e, ls, dst + e * ds + i, ds);
}

/* rm_exp of 4 doubles: rm_exp's operations in its order, lane by lane (engine/rmath.c);
 * *plain gets the lanes in [RM_EXP_VEC_LO, RM_EXP_VEC_HI] (bit l for lane l), the only
 * ones whose result is rm_exp's (the others, NaN among them, are the caller's) */
static inline __m256d exp4(__m256d v, int *plain)
{
    *plain = _mm256_movemask_pd(
        _mm256_and_pd(_mm256_cmp_pd(v, _mm256_set1_pd(RM_EXP_VEC_LO), _CMP_GE_OQ),
                      _mm256_cmp_pd(v, _mm256_set1_pd(RM_EXP_VEC_HI), _CMP_LE_OQ)));
    const __m256d rnd = _mm256_set1_pd(RM_EXP_ROUND);
    __m256d t = _mm256_fmadd_pd(v, _mm256_set1_pd(RM_EXP_LOG2E), rnd);
    __m256d k = _mm256_sub_pd(t, rnd);
    __m256d r = _mm256_fnmadd_pd(k, _mm256_set1_pd(RM_EXP_LN2_HI), v); /* fma(-k, LN2_HI, x) */
    r = _mm256_fnmadd_pd(k, _mm256_set1_pd(RM_EXP_LN2_LO), r);
    __m256d p = _mm256_set1_pd(RM_EXP_C13);
    p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(RM_EXP_C12));
    p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(RM_EXP_C11));
    p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(RM_EXP_C10));
    p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(RM_EXP_C9));
    p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(RM_EXP_C8));
    p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(RM_EXP_C7));
    p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(RM_EXP_C6));
    p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(RM_EXP_C5));
    p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(RM_EXP_C4));
    p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(RM_EXP_C3));
    p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(RM_EXP_C2));
    p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0));
    p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0));
    /* 2^k from t's bits: t = 1.5 * 2^52 + k, so its low bits are k (mod 2^12 after the
       shift drops the rest) */
    __m256i e = _mm256_slli_epi64(_mm256_add_epi64(_mm256_castpd_si256(t),
                                                   _mm256_set1_epi64x(1023)), 52);
    return _mm256_mul_pd(p, _mm256_castsi256_pd(e));
}

/* x[i] = rm_exp(x[i]), 4 doubles per ymm; the last n mod 4 through rm_exp */
static void vexp_avx2(double *x, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        int plain;
        __m256d y = exp4(_mm256_loadu_pd(x + i), &plain);
        if (plain == 0xF) {
            _mm256_storeu_pd(x + i, y);
        } else {
            double o[4];
            _mm256_storeu_pd(o, y);
            for (int l = 0; l < 4; l++)
                x[i + (size_t)l] = plain >> l & 1 ? o[l] : rm_exp(x[i + (size_t)l]);
        }
    }
    for (; i < n; i++)
        x[i] = rm_exp(x[i]);
}

/* out[i] = rm_exp(beta * ((double)z[i] - shift)), 4 per ymm (the conversion is exact); the
 * last n mod 4 and the lanes outside the plain range through rm_exp */
static void vexp_shifted_avx2(double *out, const float *z, size_t n, double beta, double shift)
{
    const __m256d b = _mm256_set1_pd(beta), sh = _mm256_set1_pd(shift);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        int plain;
        __m256d v = _mm256_cvtps_pd(_mm_loadu_ps(z + i));
        __m256d y = exp4(_mm256_mul_pd(b, _mm256_sub_pd(v, sh)), &plain);
        _mm256_storeu_pd(out + i, y);
        for (int l = 0; l < 4; l++)
            if (!(plain >> l & 1))
                out[i + (size_t)l] = rm_exp(beta * ((double)z[i + (size_t)l] - shift));
    }
    for (; i < n; i++)
        out[i] = rm_exp(beta * ((double)z[i] - shift));
}

#include "kern_body.h"

const kern_ops kern_ops_avx2 = KERN_TABLE("avx2", 6, 16, micro_6x16, 6, micro_6x16, fma_peak_avx2,
                                          transpose16_avx2, vexp_avx2, vexp_shifted_avx2);
#endif
