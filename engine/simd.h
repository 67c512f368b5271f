/* One 16-lane float vector, v16, on three paths: AVX-512F (one zmm), AVX2+FMA (two ymm)
 * and generic C (sixteen floats and fmaf).  Included only by the kern_<path>.c files,
 * each of which defines exactly one of KERN_AVX512, KERN_AVX2, KERN_GENERIC first.
 *
 * Every operation is defined lane by lane by IEEE 754 single precision (fma is one
 * rounding), and min/max/select have the x86 semantics written out in their comments,
 * so the three paths compute the same bits in every lane.  Reductions over the 16 lanes
 * (v_hsum) use one fixed tree: lane l += lane l+8, then l += l+4, l += l+2, l += l+1.
 * That is the "lane-blocked order" of engine/kernels.h.
 */
#ifndef REPRO_SIMD_H
#define REPRO_SIMD_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "rmath.h"

#if defined(KERN_AVX512)
#include <immintrin.h>
typedef __m512 v16;
static inline v16 v_load(const float *p) { return _mm512_loadu_ps(p); }
static inline void v_store(float *p, v16 a) { _mm512_storeu_ps(p, a); }
static inline __mmask16 v_mask(int n) { return n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1u); }
/* first n lanes from p, the rest 0 (0 <= n <= 16) */
static inline v16 v_load_n(const float *p, int n) { return _mm512_maskz_loadu_ps(v_mask(n), p); }
static inline void v_store_n(float *p, v16 a, int n) { _mm512_mask_storeu_ps(p, v_mask(n), a); }
/* the first n lanes from p, the rest `pad`; lanes >= n of a set to +0 */
static inline v16 v_load_pad(const float *p, int n, float pad)
{
    return _mm512_mask_loadu_ps(_mm512_set1_ps(pad), v_mask(n), p);
}
static inline v16 v_keep_n(v16 a, int n) { return _mm512_maskz_mov_ps(v_mask(n), a); }
static inline v16 v_set1(float x) { return _mm512_set1_ps(x); }
static inline v16 v_zero(void) { return _mm512_setzero_ps(); }
static inline v16 v_add(v16 a, v16 b) { return _mm512_add_ps(a, b); }
static inline v16 v_sub(v16 a, v16 b) { return _mm512_sub_ps(a, b); }
static inline v16 v_mul(v16 a, v16 b) { return _mm512_mul_ps(a, b); }
static inline v16 v_div(v16 a, v16 b) { return _mm512_div_ps(a, b); }
static inline v16 v_sqrt(v16 a) { return _mm512_sqrt_ps(a); }
static inline v16 v_fma(v16 a, v16 b, v16 c) { return _mm512_fmadd_ps(a, b, c); }   /* a*b+c */
static inline v16 v_fnma(v16 a, v16 b, v16 c) { return _mm512_fnmadd_ps(a, b, c); } /* c-a*b */
static inline v16 v_min(v16 a, v16 b) { return _mm512_min_ps(a, b); } /* a < b ? a : b */
static inline v16 v_max(v16 a, v16 b) { return _mm512_max_ps(a, b); } /* a > b ? a : b */
static inline v16 v_abs(v16 a)
{
    return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_set1_epi32(0x7fffffff)));
}
/* x < y ? a : b, lane by lane (false for NaN) */
static inline v16 v_select_lt(v16 x, v16 y, v16 a, v16 b)
{
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, y, _CMP_LT_OQ), b, a);
}
/* x < y in every lane (false for NaN) */
static inline int v_all_lt(v16 x, v16 y) { return _mm512_cmp_ps_mask(x, y, _CMP_LT_OQ) == 0xFFFF; }
/* as_float(((as_int(t) - as_int(r)) + 127) << 23) */
static inline v16 v_exp2_bits(v16 t, float r)
{
    __m512i d = _mm512_sub_epi32(_mm512_castps_si512(t), _mm512_castps_si512(_mm512_set1_ps(r)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(d, _mm512_set1_epi32(127)), 23));
}
static inline float v_hsum(v16 a)
{
    __m256 h = _mm256_add_ps(_mm512_castps512_ps256(a),
                             _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a), 1)));
    __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    q = _mm_add_ps(q, _mm_movehl_ps(q, q));
    q = _mm_add_ss(q, _mm_shuffle_ps(q, q, 1));
    return _mm_cvtss_f32(q);
}

#elif defined(KERN_AVX2)
#include <immintrin.h>
typedef struct {
    __m256 lo, hi;
} v16;
static inline v16 v_mk(__m256 lo, __m256 hi)
{
    v16 r = {lo, hi};
    return r;
}
static inline v16 v_load(const float *p) { return v_mk(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)); }
static inline void v_store(float *p, v16 a)
{
    _mm256_storeu_ps(p, a.lo);
    _mm256_storeu_ps(p + 8, a.hi);
}
/* lanes < n of each half, as vmaskmov masks (AVX2 masked loads read 0 in the other lanes
 * and never touch their memory, like AVX-512's) */
static inline __m256i v_half_mask(int n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
static inline v16 v_load_n(const float *p, int n)
{
    if (n >= 16)
        return v_load(p);
    return v_mk(_mm256_maskload_ps(p, v_half_mask(n)), _mm256_maskload_ps(p + 8, v_half_mask(n - 8)));
}
static inline void v_store_n(float *p, v16 a, int n)
{
    if (n >= 16) {
        v_store(p, a);
        return;
    }
    _mm256_maskstore_ps(p, v_half_mask(n), a.lo);
    _mm256_maskstore_ps(p + 8, v_half_mask(n - 8), a.hi);
}
static inline v16 v_set1(float x) { return v_mk(_mm256_set1_ps(x), _mm256_set1_ps(x)); }
/* lanes >= n of a set to b */
static inline v16 v_lanes_from(v16 a, v16 b, int n)
{
    __m256 i0 = _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7), i1 = _mm256_setr_ps(8, 9, 10, 11, 12, 13, 14, 15);
    __m256 vn = _mm256_set1_ps((float)n);
    return v_mk(_mm256_blendv_ps(b.lo, a.lo, _mm256_cmp_ps(i0, vn, _CMP_LT_OQ)),
                _mm256_blendv_ps(b.hi, a.hi, _mm256_cmp_ps(i1, vn, _CMP_LT_OQ)));
}
static inline v16 v_load_pad(const float *p, int n, float pad)
{
    return v_lanes_from(v_load_n(p, n), v_set1(pad), n);
}
static inline v16 v_keep_n(v16 a, int n) { return v_lanes_from(a, v_set1(0.0f), n); }
static inline v16 v_zero(void) { return v_mk(_mm256_setzero_ps(), _mm256_setzero_ps()); }
#define V2(op, a, b) v_mk(op((a).lo, (b).lo), op((a).hi, (b).hi))
static inline v16 v_add(v16 a, v16 b) { return V2(_mm256_add_ps, a, b); }
static inline v16 v_sub(v16 a, v16 b) { return V2(_mm256_sub_ps, a, b); }
static inline v16 v_mul(v16 a, v16 b) { return V2(_mm256_mul_ps, a, b); }
static inline v16 v_div(v16 a, v16 b) { return V2(_mm256_div_ps, a, b); }
static inline v16 v_min(v16 a, v16 b) { return V2(_mm256_min_ps, a, b); }
static inline v16 v_max(v16 a, v16 b) { return V2(_mm256_max_ps, a, b); }
#undef V2
static inline v16 v_sqrt(v16 a) { return v_mk(_mm256_sqrt_ps(a.lo), _mm256_sqrt_ps(a.hi)); }
static inline v16 v_fma(v16 a, v16 b, v16 c)
{
    return v_mk(_mm256_fmadd_ps(a.lo, b.lo, c.lo), _mm256_fmadd_ps(a.hi, b.hi, c.hi));
}
static inline v16 v_fnma(v16 a, v16 b, v16 c)
{
    return v_mk(_mm256_fnmadd_ps(a.lo, b.lo, c.lo), _mm256_fnmadd_ps(a.hi, b.hi, c.hi));
}
static inline v16 v_abs(v16 a)
{
    __m256 m = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    return v_mk(_mm256_and_ps(a.lo, m), _mm256_and_ps(a.hi, m));
}
static inline v16 v_select_lt(v16 x, v16 y, v16 a, v16 b)
{
    return v_mk(_mm256_blendv_ps(b.lo, a.lo, _mm256_cmp_ps(x.lo, y.lo, _CMP_LT_OQ)),
                _mm256_blendv_ps(b.hi, a.hi, _mm256_cmp_ps(x.hi, y.hi, _CMP_LT_OQ)));
}
static inline int v_all_lt(v16 x, v16 y)
{
    return _mm256_movemask_ps(_mm256_and_ps(_mm256_cmp_ps(x.lo, y.lo, _CMP_LT_OQ),
                                            _mm256_cmp_ps(x.hi, y.hi, _CMP_LT_OQ))) == 0xFF;
}
static inline __m256 exp2_bits8(__m256 t, float r)
{
    __m256i d = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_castps_si256(_mm256_set1_ps(r)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(d, _mm256_set1_epi32(127)), 23));
}
static inline v16 v_exp2_bits(v16 t, float r) { return v_mk(exp2_bits8(t.lo, r), exp2_bits8(t.hi, r)); }
static inline float v_hsum(v16 a)
{
    __m256 h = _mm256_add_ps(a.lo, a.hi);
    __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    q = _mm_add_ps(q, _mm_movehl_ps(q, q));
    q = _mm_add_ss(q, _mm_shuffle_ps(q, q, 1));
    return _mm_cvtss_f32(q);
}

#elif defined(KERN_GENERIC)
typedef struct {
    float f[16];
} v16;
#define VL for (int l_ = 0; l_ < 16; l_++)
static inline v16 v_load(const float *p)
{
    v16 r;
    memcpy(r.f, p, sizeof r.f);
    return r;
}
static inline void v_store(float *p, v16 a) { memcpy(p, a.f, sizeof a.f); }
static inline v16 v_load_n(const float *p, int n)
{
    v16 r = {{0}};
    memcpy(r.f, p, (size_t)n * sizeof(float));
    return r;
}
static inline void v_store_n(float *p, v16 a, int n) { memcpy(p, a.f, (size_t)n * sizeof(float)); }
static inline v16 v_set1(float x)
{
    v16 r;
    VL r.f[l_] = x;
    return r;
}
static inline v16 v_zero(void) { return v_set1(0.0f); }
static inline v16 v_load_pad(const float *p, int n, float pad)
{
    v16 r;
    VL r.f[l_] = l_ < n ? p[l_] : pad;
    return r;
}
static inline v16 v_keep_n(v16 a, int n)
{
    VL if (l_ >= n) a.f[l_] = 0.0f;
    return a;
}
#define VOP(name, expr)                                                                    \
    static inline v16 name(v16 a, v16 b)                                                   \
    {                                                                                      \
        v16 r;                                                                             \
        VL r.f[l_] = expr;                                                                 \
        return r;                                                                          \
    }
VOP(v_add, a.f[l_] + b.f[l_])
VOP(v_sub, a.f[l_] - b.f[l_])
VOP(v_mul, a.f[l_] * b.f[l_])
VOP(v_div, a.f[l_] / b.f[l_])
VOP(v_min, a.f[l_] < b.f[l_] ? a.f[l_] : b.f[l_])
VOP(v_max, a.f[l_] > b.f[l_] ? a.f[l_] : b.f[l_])
#undef VOP
static inline v16 v_fma(v16 a, v16 b, v16 c)
{
    v16 r;
    VL r.f[l_] = fmaf(a.f[l_], b.f[l_], c.f[l_]);
    return r;
}
static inline v16 v_fnma(v16 a, v16 b, v16 c)
{
    v16 r;
    VL r.f[l_] = fmaf(-a.f[l_], b.f[l_], c.f[l_]);
    return r;
}
static inline v16 v_sqrt(v16 a)
{
    v16 r;
    VL r.f[l_] = sqrtf(a.f[l_]);
    return r;
}
static inline v16 v_abs(v16 a)
{
    v16 r;
    VL r.f[l_] = fabsf(a.f[l_]);
    return r;
}
static inline v16 v_select_lt(v16 x, v16 y, v16 a, v16 b)
{
    v16 r;
    VL r.f[l_] = x.f[l_] < y.f[l_] ? a.f[l_] : b.f[l_];
    return r;
}
static inline int v_all_lt(v16 x, v16 y)
{
    int all = 1;
    VL all &= x.f[l_] < y.f[l_];
    return all;
}
static inline v16 v_exp2_bits(v16 t, float rr)
{
    int32_t rb;
    memcpy(&rb, &rr, sizeof rb);
    v16 r;
    VL
    {
        int32_t tb;
        memcpy(&tb, &t.f[l_], sizeof tb);
        int32_t e = (int32_t)((uint32_t)(tb - rb + 127) << 23);
        memcpy(&r.f[l_], &e, sizeof e);
    }
    return r;
}
static inline float v_hsum(v16 a)
{
    for (int w = 8; w >= 1; w /= 2)
        for (int l = 0; l < w; l++)
            a.f[l] = a.f[l] + a.f[l + w];
    return a.f[0];
}
#undef VL

#else
#error "define KERN_AVX512, KERN_AVX2 or KERN_GENERIC before including simd.h"
#endif

/* ---- shared on top of the primitives ------------------------------------------------ */

/* rm_expf of rmath.c, lane by lane */
static inline v16 v_expf(v16 x)
{
    x = v_min(v_set1(RM_EXPF_HI), x);
    x = v_max(v_set1(RM_EXPF_LO), x);
    v16 t = v_fma(x, v_set1(RM_LOG2EF), v_set1(RM_ROUNDF));
    v16 n = v_sub(t, v_set1(RM_ROUNDF));
    v16 r = v_fnma(n, v_set1(RM_LN2F_HI), x);
    r = v_fnma(n, v_set1(RM_LN2F_LO), r);
    v16 p = v_set1(1.0f / 5040.0f);
    p = v_fma(p, r, v_set1(1.0f / 720.0f));
    p = v_fma(p, r, v_set1(1.0f / 120.0f));
    p = v_fma(p, r, v_set1(1.0f / 24.0f));
    p = v_fma(p, r, v_set1(1.0f / 6.0f));
    p = v_fma(p, r, v_set1(0.5f));
    p = v_fma(p, r, v_set1(1.0f));
    p = v_fma(p, r, v_set1(1.0f));
    return v_mul(p, v_exp2_bits(t, RM_ROUNDF));
}

/* rm_tanhf of rmath.c, lane by lane */
static inline v16 v_tanhf(v16 u)
{
    v16 u2 = v_mul(u, u);
    v16 p = v_set1(-443861162.0f / 1856156927625.0f);
    p = v_fma(p, u2, v_set1(6404582.0f / 10854718875.0f));
    p = v_fma(p, u2, v_set1(-929569.0f / 638512875.0f));
    p = v_fma(p, u2, v_set1(21844.0f / 6081075.0f));
    p = v_fma(p, u2, v_set1(-1382.0f / 155925.0f));
    p = v_fma(p, u2, v_set1(62.0f / 2835.0f));
    p = v_fma(p, u2, v_set1(-17.0f / 315.0f));
    p = v_fma(p, u2, v_set1(2.0f / 15.0f));
    p = v_fma(p, u2, v_set1(-1.0f / 3.0f));
    v16 small = v_fma(v_mul(u, u2), p, u);
    v16 au = v_abs(u), lim = v_set1(RM_TANHF_SMALL);
    /* every lane takes the polynomial (most vectors of GELU's arguments at the default
       learning rate): the select below would give these bits, without the exponential */
    if (v_all_lt(au, lim))
        return small;
    v16 e = v_expf(v_add(u, u));
    v16 one = v_set1(1.0f);
    v16 big = v_sub(one, v_div(v_set1(2.0f), v_add(e, one)));
    return v_select_lt(au, lim, small, big);
}

#endif
