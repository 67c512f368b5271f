/* The avx2 path (AVX2 + FMA): 16-lane kernels on two ymm registers, and a 6x16 GEMM
 * micro-kernel.  Built with -mavx2 -mfma (Makefile); chosen at run time only when the CPU
 * has both (engine/isa.c). */
#if defined(__x86_64__)
#define KERN_AVX2
#define KSFX avx2
#include "kern_ops.h"
#include "simd.h"

static void micro_6x16(int kc, const float *restrict A, long rs, long ks,
                       const float *restrict Bp, float *restrict C, int ldc,
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
    for (int k = 0; k < kc; k++, ak += ks) {
        __m256 b0 = _mm256_load_ps(Bp + (size_t)k * 16), b1 = _mm256_load_ps(Bp + (size_t)k * 16 + 8);
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
    __m256 a[12], x = _mm256_set1_ps(1.0000001f), y = _mm256_set1_ps(-1e-7f);
    for (int i = 0; i < 12; i++)
        a[i] = _mm256_set1_ps((float)i);
    for (long r = 0; r < n; r++) {
        _Pragma("GCC unroll 12") for (int i = 0; i < 12; i++) a[i] = _mm256_fmadd_ps(a[i], x, y);
        __asm__ volatile("" : "+x"(a[0]), "+x"(a[1]), "+x"(a[2]), "+x"(a[3]), "+x"(a[4]),
                         "+x"(a[5]), "+x"(a[6]), "+x"(a[7]), "+x"(a[8]), "+x"(a[9]), "+x"(a[10]),
                         "+x"(a[11]));
    }
    float sink[8];
    __m256 s = a[0];
    for (int i = 1; i < 12; i++)
        s = _mm256_add_ps(s, a[i]);
    _mm256_storeu_ps(sink, s);
    return sink[0] == 12345.0f ? 0.0 : 2.0 * 8 * 12 * (double)n;
}

#include "kern_body.h"

const kern_ops kern_ops_avx2 = KERN_TABLE("avx2", 6, 16, micro_6x16, 6, micro_6x16, fma_peak_avx2);
#endif
