/* The avx512 path (AVX-512F + FMA): 16-lane kernels on one zmm register, and GEMM
 * micro-kernels of 8x32 (wide) and 16x16 (narrow).  Built with -mavx512f -mfma (Makefile);
 * chosen at run time only when the CPU has AVX-512F (engine/isa.c). */
#if defined(__x86_64__)
#define KERN_AVX512
#define KSFX avx512
#include "kern_ops.h"
#include "simd.h"

static inline __mmask16 col_mask(int nr, int v)
{
    int r = nr - 16 * v;
    return r >= 16 ? (__mmask16)0xFFFF : r <= 0 ? (__mmask16)0 : (__mmask16)((1u << r) - 1u);
}

/* MR rows x NV zmm columns; acc stays in registers (the loops are fully unrolled). */
#define MICRO512(NAME, MR, NV)                                                               \
    static void NAME(int kc, const float *restrict A, long rs, long ks,                        \
                     const float *restrict Bp, long bs, float *restrict C, int ldc,            \
                     const float *restrict bias, int load_c, int mr, int nr)                   \
    {                                                                                        \
        __m512 acc[MR][NV];                                                                  \
        __mmask16 mk[NV];                                                                    \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) mk[v] = col_mask(nr, v);        \
        if (bias) {                                                                          \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)                             \
            {                                                                                \
                __m512 b0 = _mm512_maskz_loadu_ps(mk[v], bias + 16 * v);                     \
                _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) acc[i][v] = b0;        \
            }                                                                                \
        } else {                                                                             \
            _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)                            \
                _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) acc[i][v] =             \
                    load_c && i < mr                                                         \
                        ? _mm512_maskz_loadu_ps(mk[v], C + (size_t)i * ldc + 16 * v)         \
                        : _mm512_setzero_ps();                                               \
        }                                                                                    \
        /* rows 4q..4q+3 at ap[q] + 0, rs, 2rs, 3rs: a few address registers (one per     \
           row spilled the 16-row tile's row addresses to the stack) */                      \
        const float *ap[MR / 4];                                                             \
        const long rs3 = 3 * rs;                                                             \
        _Pragma("GCC unroll 4") for (int q = 0; q < MR / 4; q++) ap[q] = A + 4 * q * rs;     \
        for (int k = 0; k < kc; k++) {                                                       \
            __m512 b[NV];                                                                    \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) b[v] =                      \
                _mm512_load_ps(Bp + (size_t)k * bs + 16 * v);                               \
            _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)                            \
            {                                                                                \
                const float *ar = ap[i / 4];                                                 \
                __m512 a = _mm512_set1_ps(i % 4 == 3 ? ar[rs3] : ar[(i % 4) * rs]);          \
                _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) acc[i][v] =             \
                    _mm512_fmadd_ps(a, b[v], acc[i][v]);                                     \
            }                                                                                \
            _Pragma("GCC unroll 4") for (int q = 0; q < MR / 4; q++) ap[q] += ks;            \
        }                                                                                    \
        if (nr >= 16 * NV) { /* plain stores: a masked one is not forwarded to later loads */ \
            _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) if (i < mr)                \
                _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)                         \
                    _mm512_storeu_ps(C + (size_t)i * ldc + 16 * v, acc[i][v]);               \
        } else {                                                                             \
            _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) if (i < mr)                \
                _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)                         \
                    _mm512_mask_storeu_ps(C + (size_t)i * ldc + 16 * v, mk[v], acc[i][v]);   \
        }                                                                                    \
    }

MICRO512(micro_8x32, 8, 2)
MICRO512(micro_16x16, 16, 1)

/* 12 independent chains of 16-lane FMAs: 2 FLOPs x 16 lanes x 12 per round */
static double fma_peak_avx512(long n)
{
    /* twelve named accumulators, not an array: an array indexed in the loop was kept in
       memory by gcc -O2, and its twelve stores per round halved the measured peak */
    const __m512 x = _mm512_set1_ps(1.0000001f), y = _mm512_set1_ps(-1e-7f);
    __m512 a0 = _mm512_set1_ps(0.f), a1 = _mm512_set1_ps(1.f), a2 = _mm512_set1_ps(2.f),
           a3 = _mm512_set1_ps(3.f), a4 = _mm512_set1_ps(4.f), a5 = _mm512_set1_ps(5.f),
           a6 = _mm512_set1_ps(6.f), a7 = _mm512_set1_ps(7.f), a8 = _mm512_set1_ps(8.f),
           a9 = _mm512_set1_ps(9.f), a10 = _mm512_set1_ps(10.f), a11 = _mm512_set1_ps(11.f);
    for (long r = 0; r < n; r++) {
        a0 = _mm512_fmadd_ps(a0, x, y);
        a1 = _mm512_fmadd_ps(a1, x, y);
        a2 = _mm512_fmadd_ps(a2, x, y);
        a3 = _mm512_fmadd_ps(a3, x, y);
        a4 = _mm512_fmadd_ps(a4, x, y);
        a5 = _mm512_fmadd_ps(a5, x, y);
        a6 = _mm512_fmadd_ps(a6, x, y);
        a7 = _mm512_fmadd_ps(a7, x, y);
        a8 = _mm512_fmadd_ps(a8, x, y);
        a9 = _mm512_fmadd_ps(a9, x, y);
        a10 = _mm512_fmadd_ps(a10, x, y);
        a11 = _mm512_fmadd_ps(a11, x, y);
    }
    __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                            _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
    s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
    float sink[16];
    _mm512_storeu_ps(sink, s);
    return sink[0] == 12345.0f ? 0.0 : 2.0 * 16 * 12 * (double)n;
}

/* dst[e*ds + i] = src[i*ls + e], i, e < 16: pairs of rows interleaved (unpack), then
 * groups of four rows (shuffle within 128-bit lanes), then the lanes across groups */
static void transpose16_avx512(const float *src, long ls, float *dst, long ds)
{
    __m512 t[16], u[16];
    for (int i = 0; i < 16; i += 2) {
        __m512 a = _mm512_loadu_ps(src + i * ls), b = _mm512_loadu_ps(src + (i + 1) * ls);
        t[i] = _mm512_unpacklo_ps(a, b); /* per lane: a0 b0 a1 b1 */
        t[i + 1] = _mm512_unpackhi_ps(a, b); /* a2 b2 a3 b3 */
    }
    for (int g = 0; g < 16; g += 4) { /* u[g + c], lane l: rows g..g+3 of element 4l + c */
        u[g] = _mm512_shuffle_ps(t[g], t[g + 2], 0x44);
        u[g + 1] = _mm512_shuffle_ps(t[g], t[g + 2], 0xEE);
        u[g + 2] = _mm512_shuffle_ps(t[g + 1], t[g + 3], 0x44);
        u[g + 3] = _mm512_shuffle_ps(t[g + 1], t[g + 3], 0xEE);
    }
    for (int c = 0; c < 4; c++) {
        __m512 v0 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x88); /* lanes 0, 2 */
        __m512 v1 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xDD); /* lanes 1, 3 */
        __m512 v2 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x88);
        __m512 v3 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xDD);
        _mm512_storeu_ps(dst + (c + 0) * ds, _mm512_shuffle_f32x4(v0, v2, 0x88));
        _mm512_storeu_ps(dst + (c + 8) * ds, _mm512_shuffle_f32x4(v0, v2, 0xDD));
        _mm512_storeu_ps(dst + (c + 4) * ds, _mm512_shuffle_f32x4(v1, v3, 0x88));
        _mm512_storeu_ps(dst + (c + 12) * ds, _mm512_shuffle_f32x4(v1, v3, 0xDD));
    }
}

/* rm_exp of 8 doubles: rm_exp's operations in its order, lane by lane (engine/rmath.c);
 * *plain gets the lanes in [RM_EXP_VEC_LO, RM_EXP_VEC_HI], the only ones whose result is
 * rm_exp's (the others, NaN among them, are the caller's to hand to rm_exp) */
static inline __m512d exp8(__m512d v, __mmask8 *plain)
{
    *plain = _mm512_cmp_pd_mask(v, _mm512_set1_pd(RM_EXP_VEC_LO), _CMP_GE_OQ) &
             _mm512_cmp_pd_mask(v, _mm512_set1_pd(RM_EXP_VEC_HI), _CMP_LE_OQ);
    const __m512d rnd = _mm512_set1_pd(RM_EXP_ROUND);
    __m512d t = _mm512_fmadd_pd(v, _mm512_set1_pd(RM_EXP_LOG2E), rnd);
    __m512d k = _mm512_sub_pd(t, rnd);
    __m512d r = _mm512_fnmadd_pd(k, _mm512_set1_pd(RM_EXP_LN2_HI), v); /* fma(-k, LN2_HI, x) */
    r = _mm512_fnmadd_pd(k, _mm512_set1_pd(RM_EXP_LN2_LO), r);
    __m512d p = _mm512_set1_pd(RM_EXP_C13);
    p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(RM_EXP_C12));
    p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(RM_EXP_C11));
    p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(RM_EXP_C10));
    p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(RM_EXP_C9));
    p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(RM_EXP_C8));
    p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(RM_EXP_C7));
    p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(RM_EXP_C6));
    p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(RM_EXP_C5));
    p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(RM_EXP_C4));
    p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(RM_EXP_C3));
    p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(RM_EXP_C2));
    p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(1.0));
    p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(1.0));
    /* 2^k from t's bits: t = 1.5 * 2^52 + k, so its low bits are k (mod 2^12 after the
       shift drops the rest) */
    __m512i e = _mm512_slli_epi64(_mm512_add_epi64(_mm512_castpd_si512(t),
                                                   _mm512_set1_epi64(1023)), 52);
    return _mm512_mul_pd(p, _mm512_castsi512_pd(e));
}

static inline __mmask8 live8(size_t left)
{
    return left >= 8 ? (__mmask8)0xFF : (__mmask8)((1u << left) - 1u);
}

/* x[i] = rm_exp(x[i]), 8 doubles per zmm */
static void vexp_avx512(double *x, size_t n)
{
    for (size_t i = 0; i < n; i += 8) {
        __mmask8 live = live8(n - i), plain;
        __m512d y = exp8(_mm512_maskz_loadu_pd(live, x + i), &plain);
        _mm512_mask_storeu_pd(x + i, live & plain, y);
        for (__mmask8 odd = live & (__mmask8)~plain; odd; odd &= (__mmask8)(odd - 1))
            x[i + (size_t)__builtin_ctz(odd)] = rm_exp(x[i + (size_t)__builtin_ctz(odd)]);
    }
}

/* out[i] = rm_exp(beta * ((double)z[i] - shift)), 8 per zmm (the conversion is exact) */
static void vexp_shifted_avx512(double *out, const float *z, size_t n, double beta,
                                double shift)
{
    const __m512d b = _mm512_set1_pd(beta), sh = _mm512_set1_pd(shift);
    for (size_t i = 0; i < n; i += 8) {
        __mmask8 live = live8(n - i), plain;
        /* (AVX-512F alone has no 256-bit masked load: a 512-bit one of the low 8 lanes) */
        __m512d v = _mm512_cvtps_pd(
            _mm512_castps512_ps256(_mm512_maskz_loadu_ps((__mmask16)live, z + i)));
        __m512d y = exp8(_mm512_mul_pd(b, _mm512_sub_pd(v, sh)), &plain);
        _mm512_mask_storeu_pd(out + i, live & plain, y);
        for (__mmask8 odd = live & (__mmask8)~plain; odd; odd &= (__mmask8)(odd - 1)) {
            size_t j = i + (size_t)__builtin_ctz(odd);
            out[j] = rm_exp(beta * ((double)z[j] - shift));
        }
    }
}

#include "kern_body.h"

const kern_ops kern_ops_avx512 = KERN_TABLE("avx512", 8, 32, micro_8x32, 16, micro_16x16,
                                             fma_peak_avx512, transpose16_avx512, vexp_avx512,
                                             vexp_shifted_avx512);
#endif
