/* GEMM of the engine: C(M,N) = [C +] op(A)(M,K) · op(B)(K,N), row-major.
 *   ta = 0: A is (M, K) with row stride lda;  ta = 1: A is stored as (K, M).
 *   tb = 0: B is (K, N) with row stride ldb;  tb = 1: B is stored as (N, K).
 * The determinism rule: every element of C is ONE fused-multiply-add chain over k = 0, 1,
 * ..., K-1 in order, started from C (accumulate) or from +0.  Nothing else touches it, so
 * the blocking (KC, MC), the micro-tile of each CPU path, the split across threads and the
 * path itself never change a bit.  A new GEMM kernel must keep this rule.
 * gemm splits rows of C across the OpenMP threads, each thread its own rows (gemm_rows,
 * in blocks of 96), B packed once for all (columns, each thread packing its own panels of B,
 * when K is longer than M and C has no more rows than columns: the weight gradients; when
 * K is longer than M and C has more rows than columns, rows again, but each thread packs
 * all of B for itself, up to 8 MB of it: the qkv and fc weight gradients; and so too
 * whatever K when packed B is at most 256 KB: the default model's weight matrices).
 * A row-major B (tb = 0) of whole panels (N a multiple of the micro-tile's NR) with
 * 64-byte aligned rows is not packed: the micro-kernels read it where it lies.
 * gemm_serial runs on the calling thread
 * (for use inside a parallel region: kernels.c's linear backward on two threads runs its
 * products on each thread's rows).  Both return 0, or -1 when a packing buffer could
 * not be allocated (C is then unspecified; kernels_failed() says so too). */
#ifndef REPRO_GEMM_H
#define REPRO_GEMM_H

#include <stddef.h>

int gemm(int M, int N, int K, const float *A, int lda, int ta, const float *B, int ldb, int tb,
         float *C, int ldc, int accumulate);
int gemm_serial(int M, int N, int K, const float *A, int lda, int ta, const float *B, int ldb,
                int tb, float *C, int ldc, int accumulate);
/* C = bias (a row vector of N, the start of every row's chains) + op(A)·op(B), rows across
 * the OpenMP threads: the same bits as copying bias into C and accumulating. */
int gemm_bias(int M, int N, int K, const float *A, int lda, int ta, const float *B, int ldb,
              int tb, const float *bias, float *C, int ldc);

/* Fused epilogues, applied by each thread to its rows of C right after their last K block
 * (while they are in its cache), with the same bits as a separate elementwise pass:
 *   gemm_bias_gelu: C = bias + op(A)·op(B), then G = GELU(C) (C keeps the pre-activation);
 *   gemm_gelu_bwd:  C = GELU'(X) · (op(A)·op(B))  (the GELU backward of C's gradient). */
int gemm_bias_gelu(int M, int N, int K, const float *A, int lda, int ta, const float *B, int ldb,
                   int tb, const float *bias, float *C, int ldc, float *G, int ldg);
int gemm_gelu_bwd(int M, int N, int K, const float *A, int lda, int ta, const float *B, int ldb,
                  int tb, float *C, int ldc, const float *X, int ldx);
/* gemm_gelu_bwd on the calling thread (inside a parallel region, like gemm_serial) */
int gemm_gelu_bwd_serial(int M, int N, int K, const float *A, int lda, int ta, const float *B,
                         int ldb, int tb, float *C, int ldc, const float *X, int ldx);

/* op(B) packed once and used by several products with parts of it (attention's causal
 * blocks): gemm_packed_mul uses its rows [k0, k0 + k) and its first n columns.  A
 * row-major B (tb = 0) of exactly one panel's width (N = the micro-tile's NR, 16 for
 * attention at head size 16) with 64-byte aligned rows is not copied: Bp points into B
 * and ld is ldb (the same values read, so the same bits). */
typedef struct {
    const void *micro; /* the micro-tile the panels were packed for */
    const float *Bp;
    long ld; /* floats between rows of a panel: NR when packed, ldb when read in place */
    int K, N;
} gemm_packed;
/* Floats of buffer gemm_pack needs. */
size_t gemm_packed_floats(int K, int N);
void gemm_pack(gemm_packed *pb, float *buf, int K, int N, const float *B, int ldb, int tb);
int gemm_packed_mul(int M, int n, int k0, int k, const float *A, int lda, int ta,
                    const gemm_packed *pb, float *C, int ldc, int accumulate);

/* The rows [*r0, *r1) of M that thread t of nt owns in every kernel that splits rows
 * (the GEMMs' row splits, the norms, the linear backward): contiguous, ending at a
 * multiple of 16 except the last, so that a thread reads back, from its own core's cache,
 * the rows it wrote in the kernel before (placement only: no value depends on it). */
static inline void gemm_rows(int M, int t, int nt, int *r0, int *r1)
{
    int per = ((M + nt - 1) / nt + 15) / 16 * 16;
    *r0 = t * per < M ? t * per : M;
    *r1 = *r0 + per < M ? *r0 + per : M;
}

/* Per-thread scratch of at least n floats (64-byte aligned), kept between calls; slot
 * 0..3 are independent buffers.  NULL when out of memory. */
float *kernels_scratch(int slot, size_t n);

#endif
