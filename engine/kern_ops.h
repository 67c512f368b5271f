/* The per-path kernel table (internal to engine/kernels.c, engine/gemm.c and the
 * kern_<path>.c files).  One table per CPU path; engine/isa.c picks one at start-up.
 * Every function computes the same bits on every path (see engine/kernels.h). */
#ifndef REPRO_KERN_OPS_H
#define REPRO_KERN_OPS_H

#include <stddef.h>

/* C(mr, nr) = init + A(mr, kc)·B(kc, nr), A read in place as A[i*rs + k*ks] (every one of
 * the MR rows must be readable: edge tiles are packed by the caller), B as Bp[k*bs + j]
 * (NR readable columns per row, 64-byte aligned rows: a packed panel, zero-padded to NR
 * columns, with bs = NR, or a row-major B of exactly NR columns read in place).  init:
 * the row vector `bias` for every row when non-NULL, else C itself (load_c), else +0.
 * Every C element is one FMA chain over k in order from its initial value: the tile shape
 * never changes a bit. */
typedef void (*gemm_micro_fn)(int kc, const float *A, long rs, long ks, const float *Bp, long bs,
                              float *C, int ldc, const float *bias, int load_c, int mr, int nr);

typedef struct {
    int mr, nr;
    gemm_micro_fn fn;
} gemm_micro;

typedef struct {
    const char *name;
    gemm_micro wide, narrow; /* narrow: nr = 16 (for N <= 16 and other narrow outputs) */
    void (*ln_fwd_row)(float *y, float *mean, float *rstd, const float *x, const float *w,
                       const float *b, int C, float eps);
    void (*ln_bwd_row)(float *dx, const float *dy, const float *x, const float *w, float mean,
                       float rstd, int C);
    /* dw[c] += dy·xhat, db[c] += dy over rows 0..N-1 in order, columns [c0, c1) */
    void (*ln_bwd_cols)(float *dw, float *db, const float *dy, const float *x, const float *mean,
                        const float *rstd, int N, int C, int c0, int c1);
    void (*rms_fwd_row)(float *y, float *rstd, const float *x, const float *w, int C, float eps);
    void (*rms_bwd_row)(float *dx, const float *dy, const float *x, const float *w, float rstd,
                        int C);
    void (*rms_bwd_cols)(float *dw, const float *dy, const float *x, const float *rstd, int N,
                         int C, int c0, int c1);
    void (*gelu_fwd)(float *out, const float *inp, size_t n);
    void (*gelu_bwd)(float *dinp, const float *inp, const float *dout, size_t n);
    /* causal rows t = r0..r1-1 of A (row stride ld): row[0..t] = softmax(row[0..t]·scale),
     * row[t+1..r1) = 0 */
    void (*softmax_block)(float *A, int ld, int r0, int r1, float scale);
    /* the same rows of D: d[j] = a[j]·(d[j] - Σ_{i<=t} a[i]·d[i])·scale over j <= t,
     * d[t+1..r1) = 0 */
    void (*softmax_bwd_block)(float *D, const float *A, int ld, int r0, int r1, float scale);
    /* out = a + b over n elements */
    void (*add)(float *out, const float *a, const float *b, size_t n);
    /* dst[c] += src[i*C + c] over rows i = 0..N-1 in order, columns [c0, c1) */
    void (*col_sum_add)(float *dst, const float *src, int N, int C, int c0, int c1);
    /* AdamW on n elements (see gpt_adamw) */
    void (*adamw)(float *p, const float *g, float *m, float *v, size_t n, float grad_scale,
                  float b1, float b2, float bc1, float bc2, float lr, float eps, float decay);
    /* n rounds of 12 independent FMA chains on the path's widest registers (the machine's
     * FMA peak for make bench); returns the FLOPs done */
    double (*fma_peak)(long n);
    /* x[i] = rm_expf(x[i]) / rm_tanhf(x[i]) through the path's vectors (for tests) */
    void (*vexpf)(float *x, size_t n);
    void (*vtanhf)(float *x, size_t n);
    /* p = softmax(z) over V; returns the sum of exp(z - max) and the max through *mx */
    float (*xent_row)(float *p, const float *z, int V, float *mx);
    /* dst[e*ds + i] = src[i*ls + e] for i, e < 16: one 16x16 block of GEMM's transposed
     * packing (data movement only); NULL on a path without it (gemm.c copies floats) */
    void (*transpose16)(const float *src, long ls, float *dst, long ds);
    /* x[i] = rm_exp(x[i]) on doubles, the bits of the scalar rm_exp in every lane: 8 lanes
     * (avx512), 4 (avx2) or one at a time (generic) */
    void (*vexp)(double *x, size_t n);
    /* out[i] = rm_exp(beta * ((double)z[i] - shift)), the same lane function */
    void (*vexp_shifted)(double *out, const float *z, size_t n, double beta, double shift);
} kern_ops;

extern const kern_ops kern_ops_generic;
#if defined(__x86_64__)
extern const kern_ops kern_ops_avx2;
extern const kern_ops kern_ops_avx512;
#endif

/* The table in use (engine/isa.c). */
extern const kern_ops *kern;

#endif
