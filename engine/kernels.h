/* Compute kernels of the engine.  Layout: row-major, (rows, C) activations.
 *
 * Determinism: every output element is computed by exactly one thread, and its
 * arithmetic (summation order included) does not depend on how rows are split between
 * threads.  Reductions across rows (bias and norm-weight gradients) are split by column.
 * Vectorized elementwise functions process tails through a padded vector, so a value
 * never depends on its position in a row.  Backward functions add into their outputs.
 */
#ifndef REPRO_KERNELS_H
#define REPRO_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* C(M,N) = [C +] op(A)(M,K) · op(B)(K,N).
 * ta = 0: A is (M, K) with row stride lda;  ta = 1: A is stored as (K, M).
 * tb = 0: B is (K, N) with row stride ldb;  tb = 1: B is stored as (N, K).
 * gemm splits rows of C across the OpenMP threads; gemm_serial runs on the caller's
 * thread (for use inside a parallel region). */
void gemm(int M, int N, int K, const float *A, int lda, int ta, const float *B, int ldb, int tb,
          float *C, int ldc, int accumulate);
void gemm_serial(int M, int N, int K, const float *A, int lda, int ta, const float *B, int ldb,
                 int tb, float *C, int ldc, int accumulate);

/* Frees the per-thread packing buffers gemm keeps between calls. */
void kernels_release(void);

/* out(N,OC) = inp(N,IC) · w(OC,IC)ᵀ + b(OC)  (b may be NULL) */
void linear_forward(float *out, const float *inp, const float *w, const float *b, int N, int IC,
                    int OC);
/* dinp += dout·w;  dw += doutᵀ·inp;  db += Σ_rows dout  (dinp, db may be NULL) */
void linear_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                     const float *w, int N, int IC, int OC);

/* LayerNorm over the last dimension; saves mean and rstd per row. */
void layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *w,
                       const float *b, int N, int C, float eps);
void layernorm_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                        const float *w, const float *mean, const float *rstd, int N, int C);
/* RMSNorm: out = inp / sqrt(mean(inp²) + eps) · w; saves rstd per row. */
void rmsnorm_forward(float *out, float *rstd, const float *inp, const float *w, int N, int C,
                     float eps);
void rmsnorm_backward(float *dinp, float *dw, const float *dout, const float *inp, const float *w,
                      const float *rstd, int N, int C);

/* GELU, tanh approximation. */
void gelu_forward(float *out, const float *inp, size_t n);
void gelu_backward(float *dinp, const float *inp, const float *dout, size_t n); /* dinp = */

/* Causal multi-head attention over qkv (B,T,3C) = [q|k|v], head h at columns h*hs.
 * att (B,H,T,T) receives the softmax probabilities (zero above the diagonal);
 * out (B,T,C).  With mask != NULL (dropout), out uses att·mask·scale_drop. */
void attention_forward(float *out, float *att, const float *qkv, const uint8_t *mask,
                       float keep_scale, int B, int T, int C, int H);
void attention_backward(float *dqkv, const float *dout, const float *qkv, const float *att,
                        const uint8_t *mask, float keep_scale, int B, int T, int C, int H);

#endif
