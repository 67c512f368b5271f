/* Compute kernels of the engine.  Layout: row-major, (rows, C) activations.
 *
 * THE DETERMINISM RULE (every kernel, every CPU path, every thread count):
 *  1. Every output element is computed by exactly one thread, by arithmetic that does not
 *     depend on how rows are split between threads nor on the CPU path (engine/isa.h).
 *  2. GEMM (engine/gemm.h): each element of C is one FMA chain over k in order, started
 *     from C or +0, whatever the blocking or micro-tile.
 *  3. Reductions along a row (norm statistics, softmax sums, dot products) are
 *     lane-blocked: lane l of 16 accumulates elements l, l+16, l+32, ... in order, then the
 *     16 lanes are combined by one fixed tree (l += l+8, l += l+4, l += l+2, l += l+1);
 *     see engine/simd.h.  A row maximum (softmax) skips NaN and is exact in any order; it
 *     is taken lane by lane, then over the lanes by the same tree.  Reductions across rows
 *     (bias and norm-gain gradients) are split by column, each column summed over rows in
 *     order (several column blocks may share one pass over the rows).
 *  4. Elementwise functions apply the same IEEE operations (the same fma's) per element
 *     on every path; exp and tanh are the engine's own (engine/rmath.h), never libm's.
 *  5. Everything is built with -ffp-contract=off and without -ffast-math.
 * A new kernel must keep these rules; tests/sh/test_paths.sh compares every path, thread
 * count and aarch64 on a tiny model, tests/c/test_gemm.c every GEMM shape against a naive
 * reference.
 * Backward functions add into their outputs unless said otherwise.
 */
#ifndef REPRO_KERNELS_H
#define REPRO_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "gemm.h"
#include "isa.h"

/* Frees the per-thread packing and scratch buffers kept between calls; clears the
 * failure flag. */
void kernels_release(void);
/* Non-zero when a kernel could not allocate its scratch since the last release (its
 * output is then unspecified): callers check after a step. */
int kernels_failed(void);
/* Memory for `bytes` of large arrays (parameters, activations, packing buffers), 64-byte
 * aligned, to be released with free().  Blocks of 2 MiB or more are 2 MiB aligned and, on
 * Linux, advised to the kernel as transparent huge pages (MADV_HUGEPAGE), which spares
 * the TLB misses of strided reads over hundreds of MB; placement only, never a result.
 * Returns NULL when out of memory. */
void *kernels_alloc(size_t bytes);

/* The FMA peak of the path in use, in GFLOP/s, with `threads` threads each running
 * independent FMA chains for about `seconds` (make bench; timing only, never a result). */
double kernels_fma_peak(int threads, double seconds);
/* Seconds of one attention forward + backward at (B, T, C, H) on `threads` threads, the best
 * of `reps` (make bench); -1 when out of memory. */
double kernels_attention_time(int B, int T, int C, int H, int threads, int reps);

/* x[i] = rm_exp(x[i]) for i < n (engine/rmath.h), through the path's double vectors: the
 * scalar function's bits in every lane, on every path. */
void kernels_exp(double *x, size_t n);
/* out[i] = rm_exp(beta * ((double)z[i] - shift)) for i < n (softmax numerators at inverse
 * temperature beta), the same way: each lane's arguments by the same three IEEE operations
 * as this expression. */
void kernels_exp_shifted(double *out, const float *z, size_t n, double beta, double shift);

/* out(N,OC) = inp(N,IC) · w(OC,IC)ᵀ + b(OC)  (b may be NULL) */
void linear_forward(float *out, const float *inp, const float *w, const float *b, int N, int IC,
                    int OC);
/* The same with the GELU after it fused: out = the pre-activation, outg = GELU(out). */
void linear_gelu_forward(float *out, float *outg, const float *inp, const float *w,
                         const float *b, int N, int IC, int OC);
/* dinp += dout·w;  dw += doutᵀ·inp;  db += Σ_rows dout  (dinp, db may be NULL). */
void linear_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                     const float *w, int N, int IC, int OC);
/* The same with dinp = dout·w (overwritten: no memset needed; the same bits as a memset
 * to zero followed by linear_backward). */
void linear_backward_set(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                         const float *w, int N, int IC, int OC);

/* linear_backward_set with the GELU backward of the layer's input fused: dinp =
 * GELU'(x)·(dout·w), x being the pre-activation the input was GELU(x) of. */
void linear_backward_gelu(float *dinp, const float *x, float *dw, float *db, const float *dout,
                          const float *inp, const float *w, int N, int IC, int OC);

/* LayerNorm over the last dimension; saves mean and rstd per row. */
void layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *w,
                       const float *b, int N, int C, float eps);
/* The residual connection and the LayerNorm that reads it: res = a + b, then out =
 * LayerNorm(res), row by row in one pass and one parallel region (elementwise adds and
 * one-row LayerNorms: the same bits as two passes) */
void residual_layernorm_forward(float *res, const float *a, const float *b, float *out,
                                float *mean, float *rstd, const float *w, const float *bias, int N,
                                int C, float eps);
void layernorm_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                        const float *w, const float *mean, const float *rstd, int N, int C);
/* The same with dinp set, not added to: the bits of a memset to zero followed by
 * layernorm_backward, each row zeroed in the same pass just before it is written. */
void layernorm_backward_set(float *dinp, float *dw, float *db, const float *dout,
                            const float *inp, const float *w, const float *mean,
                            const float *rstd, int N, int C);
/* RMSNorm: out = inp / sqrt(mean(inp²) + eps) · w; saves rstd per row. */
void rmsnorm_forward(float *out, float *rstd, const float *inp, const float *w, int N, int C,
                     float eps);
void rmsnorm_backward(float *dinp, float *dw, const float *dout, const float *inp, const float *w,
                      const float *rstd, int N, int C);

/* AdamW on n parameters p with gradients g·grad_scale and moments m, v (see gpt_adamw);
 * inside a parallel region, on the calling thread.  Elementwise: any split, the same bits. */
void adamw_update(float *p, const float *g, float *m, float *v, size_t n, float grad_scale,
                  float b1, float b2, float bc1, float bc2, float lr, float eps, float decay);

/* GELU, tanh approximation. */
void gelu_forward(float *out, const float *inp, size_t n);
void gelu_backward(float *dinp, const float *inp, const float *dout, size_t n); /* dinp = */

/* Row-wise softmax cross-entropy over V classes for N rows: probs = softmax(logits);
 * losses[i] = log Σ exp(z - max) - (z[target] - max) (with targets != NULL). */
void softmax_xent(float *probs, float *losses, const float *logits, const int32_t *targets,
                  int N, int V);

/* Causal multi-head attention over qkv (B,T,3C) = [q|k|v], head h at columns h*hs.
 * att (B,H,T,T) receives the softmax probabilities; entries above the diagonal are 0
 * (never written after initialization: the caller zeroes att once).  out (B,T,C).
 * With mask != NULL (dropout), out uses att·mask·keep_scale.  Fully masked blocks and the
 * masked half of diagonal blocks are skipped (their terms are exact zeros, so skipping
 * them changes no bit).  Each head's operands are packed once (gemm_pack): Kᵀ and Vᵀ as
 * panels, V, Q, K and dO read in place when the head size is one panel wide (16). */
void attention_forward(float *out, float *att, const float *qkv, const uint8_t *mask,
                       float keep_scale, int B, int T, int C, int H);
/* dqkv = (not +=) the gradient with respect to qkv. */
void attention_backward(float *dqkv, const float *dout, const float *qkv, const float *att,
                        const uint8_t *mask, float keep_scale, int B, int T, int C, int H);

#endif
