#include "kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "kern_ops.h"
#include "rmath.h"

/* Every entry point makes sure a path is selected (engine/isa.c). */
#define KERN() (kern ? kern : (isa_name(), kern))

#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double kernels_fma_peak(int threads, double seconds)
{
    const kern_ops *k = KERN();
    long n = 1 << 16;
    double flops = 0.0, dt = 0.0;
    for (;;) { /* grow the round count until one measurement lasts `seconds` */
        double t0 = now_s();
        flops = 0.0;
#pragma omp parallel num_threads(threads) reduction(+ : flops)
        flops += k->fma_peak(n);
        dt = now_s() - t0;
        if (dt >= seconds || n > (1L << 40))
            break;
        n *= dt > 0.01 ? (long)(seconds / dt) + 1 : 8;
    }
    return flops / dt / 1e9;
}

void kernels_exp(double *x, size_t n)
{
    KERN()->vexp(x, n);
}

void kernels_exp_shifted(double *out, const float *z, size_t n, double beta, double shift)
{
    KERN()->vexp_shifted(out, z, n, beta, shift);
}

/* Seconds per attention_forward + attention_backward at (B, T, C, H) on `threads` threads,
 * the best of `reps` (make bench's attention time per layer).  Inputs are a fixed ramp
 * (their values do not change the work).  -1 when out of memory. */
double kernels_attention_time(int B, int T, int C, int H, int threads, int reps)
{
    size_t nqkv = (size_t)B * T * 3 * C, nout = (size_t)B * T * C, natt = (size_t)B * H * T * T;
    /* 64-byte aligned like the model's activations (gemm_pack reads aligned rows in place) */
    float *qkv = kernels_alloc(nqkv * sizeof *qkv), *dqkv = kernels_alloc(nqkv * sizeof *dqkv);
    float *out = kernels_alloc(nout * sizeof *out), *dout = kernels_alloc(nout * sizeof *dout);
    float *att = kernels_alloc(natt * sizeof *att);
    double best = -1.0;
    if (qkv && dqkv && out && dout && att) {
        memset(att, 0, natt * sizeof *att);
        for (size_t i = 0; i < nqkv; i++)
            qkv[i] = (float)((long)(i % 97) - 48) / 64.0f;
        for (size_t i = 0; i < nout; i++)
            dout[i] = (float)((long)(i % 89) - 44) / 64.0f;
        int saved = omp_get_max_threads();
        omp_set_num_threads(threads);
        for (int r = 0; r < reps; r++) {
            double t0 = now_s();
            attention_forward(out, att, qkv, NULL, 1.0f, B, T, C, H);
            attention_backward(dqkv, dout, qkv, att, NULL, 1.0f, B, T, C, H);
            double dt = now_s() - t0;
            if (best < 0 || dt < best)
                best = dt;
        }
        omp_set_num_threads(saved);
    }
    free(qkv);
    free(dqkv);
    free(out);
    free(dout);
    free(att);
    return best;
}

/* ---- linear layers --------------------------------------------------------------- */

/* The calling thread's rows of N (gemm_rows): the rows the GEMMs around it give it. */
static void own_rows(int N, int *r0, int *r1)
{
    gemm_rows(N, omp_get_thread_num(), omp_get_num_threads(), r0, r1);
}

void linear_forward(float *out, const float *inp, const float *w, const float *b, int N, int IC,
                    int OC)
{
    if (b)
        gemm_bias(N, OC, IC, inp, IC, 0, w, IC, 1, b, out, OC);
    else
        gemm(N, OC, IC, inp, IC, 0, w, IC, 1, out, OC, 0);
}

void linear_gelu_forward(float *out, float *outg, const float *inp, const float *w,
                         const float *b, int N, int IC, int OC)
{
    gemm_bias_gelu(N, OC, IC, inp, IC, 0, w, IC, 1, b, out, OC, outg, OC);
}

/* columns [c0, c1) of this thread: a multiple of 16 wide except the last */
static void column_range(int C, int *c0, int *c1)
{
    int t = omp_get_thread_num(), n = omp_get_num_threads();
    int chunk = ((C + n - 1) / n + 15) / 16 * 16;
    *c0 = t * chunk < C ? t * chunk : C;
    *c1 = *c0 + chunk < C ? *c0 + chunk : C;
}

/* dst[c] += Σ_i src[i*C + c], rows summed in order, columns split across threads. */
static void column_sum_add(float *dst, const float *src, int N, int C)
{
    const kern_ops *k = KERN();
#pragma omp parallel
    {
        int c0, c1;
        column_range(C, &c0, &c1);
        if (c0 < c1)
            k->col_sum_add(dst, src, N, C, c0, c1);
    }
}

/* dinp rows [r0, r1) of a linear layer's backward: dinp = dout·w (then GELU'(gelu_x)·dinp
 * when gelu_x; added into dinp when add), on the calling thread. */
static void dinp_rows(float *dinp, const float *gelu_x, const float *dout, const float *w,
                      int r0, int r1, int IC, int OC, int add)
{
    const float *d = dout + (size_t)r0 * OC;
    float *o = dinp + (size_t)r0 * IC;
    if (gelu_x)
        gemm_gelu_bwd_serial(r1 - r0, IC, OC, d, OC, 0, w, IC, 0, o, IC,
                             gelu_x + (size_t)r0 * IC, IC);
    else
        gemm_serial(r1 - r0, IC, OC, d, OC, 0, w, IC, 0, o, IC, add);
}

/* A linear layer's backward: dinp = dout·w (then GELU'(gelu_x)·dinp when gelu_x), dw +=
 * doutᵀ·inp, db += the column sums of dout.
 * On two threads each thread keeps its rows (gemm_rows) and reads only them: it computes
 * its rows of dinp, and its rows' terms of dw and db.  Every element of dw and db is one
 * chain over the rows in order, so thread 1 continues the chains where thread 0 left them
 * (the ordered region); thread 0 does its part of the chains first, thread 1 its rows of
 * dinp first, so neither waits while the other has work.  The same bits as one thread
 * (the GEMM determinism rule; a chain stored and reloaded between its two parts is the
 * same chain). */
static void linear_bwd(float *dinp, const float *gelu_x, float *dw, float *db,
                       const float *dout, const float *inp, const float *w, int N, int IC,
                       int OC, int add)
{
    const int nt = omp_in_parallel() ? 1 : omp_get_max_threads();
    if (nt == 2) {
        const kern_ops *k = KERN();
#pragma omp parallel num_threads(2)
        {
            int t = omp_get_thread_num(), n = omp_get_num_threads(), r0, r1;
            own_rows(N, &r0, &r1);
            if (t > 0 && dinp)
                dinp_rows(dinp, gelu_x, dout, w, r0, r1, IC, OC, add);
#pragma omp for ordered schedule(static, 1) nowait
            for (int s = 0; s < n; s++) { /* iteration s on thread s: its rows */
#pragma omp ordered
                {
                    gemm_serial(OC, IC, r1 - r0, dout + (size_t)r0 * OC, OC, 1,
                                inp + (size_t)r0 * IC, IC, 0, dw, IC, 1);
                    if (db)
                        k->col_sum_add(db, dout + (size_t)r0 * OC, r1 - r0, OC, 0, OC);
                }
            }
            if (t == 0 && dinp)
                dinp_rows(dinp, gelu_x, dout, w, r0, r1, IC, OC, add);
        }
        return;
    }
    if (dinp) {
        if (gelu_x)
            gemm_gelu_bwd(N, IC, OC, dout, OC, 0, w, IC, 0, dinp, IC, gelu_x, IC);
        else
            gemm(N, IC, OC, dout, OC, 0, w, IC, 0, dinp, IC, add);
    }
    gemm(OC, IC, N, dout, OC, 1, inp, IC, 0, dw, IC, 1);
    if (db)
        column_sum_add(db, dout, N, OC);
}

void linear_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                     const float *w, int N, int IC, int OC)
{
    linear_bwd(dinp, NULL, dw, db, dout, inp, w, N, IC, OC, 1);
}

void linear_backward_gelu(float *dinp, const float *x, float *dw, float *db, const float *dout,
                          const float *inp, const float *w, int N, int IC, int OC)
{
    linear_bwd(dinp, x, dw, db, dout, inp, w, N, IC, OC, 0);
}

void linear_backward_set(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                         const float *w, int N, int IC, int OC)
{
    linear_bwd(dinp, NULL, dw, db, dout, inp, w, N, IC, OC, 0);
}

/* ---- normalization ---------------------------------------------------------------- */


void layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *w,
                       const float *b, int N, int C, float eps)
{
    const kern_ops *k = KERN();
#pragma omp parallel
    {
        int r0, r1;
        own_rows(N, &r0, &r1);
        for (int i = r0; i < r1; i++)
            k->ln_fwd_row(out + (size_t)i * C, mean + i, rstd + i, inp + (size_t)i * C, w, b, C,
                          eps);
    }
}

void residual_layernorm_forward(float *res, const float *a, const float *b, float *out,
                                float *mean, float *rstd, const float *w, const float *bias, int N,
                                int C, float eps)
{
    const kern_ops *k = KERN();
#pragma omp parallel
    {
        int r0, r1;
        own_rows(N, &r0, &r1);
        for (int i = r0; i < r1; i++) {
            size_t o = (size_t)i * C;
            k->add(res + o, a + o, b + o, (size_t)C);
            k->ln_fwd_row(out + o, mean + i, rstd + i, res + o, w, bias, C, eps);
        }
    }
}

/* The backward of a norm.  On one thread, one sweep over the rows in chunks of NORM_CHUNK
 * rows: a chunk's rows of dinp, then the chunk's terms of the weight (and bias)
 * gradients while it is in cache, so the rows (activations of the forward, read back from
 * memory) are read once.  On two threads each thread reads only its own rows (gemm_rows,
 * the rows the products around it gave it), as the linear layers' backward does: thread 0
 * runs its rows' part of the gradients' chains while thread 1 computes its rows of dinp,
 * then thread 1 continues the chains over its rows (the ordered region) while thread 0
 * computes its dinp.  On more threads each thread computes the dinp of its rows, then
 * the gradients of its columns (column_range) over all rows.  Either way each column's
 * sum runs over the rows in order (an accumulator stored and reloaded between parts,
 * exactly) and each row's dinp is the same row computation: the bits of a row pass then a
 * column pass. */
#define NORM_CHUNK 32

typedef struct {
    int rms;  /* RMSNorm (no mean, no bias), else LayerNorm */
    int zero; /* dinp is set, not added to: each row zeroed just before it is added into */
    float *dinp, *dw, *db;
    const float *dout, *inp, *w, *mean, *rstd;
    int C;
} norm_bwd;

static void norm_bwd_rows(const kern_ops *k, const norm_bwd *a, int r0, int r1)
{
    size_t C = (size_t)a->C;
    for (int i = r0; i < r1; i++) {
        if (a->zero)
            memset(a->dinp + i * C, 0, C * sizeof(float));
        if (!a->rms)
            k->ln_bwd_row(a->dinp + i * C, a->dout + i * C, a->inp + i * C, a->w, a->mean[i],
                          a->rstd[i], a->C);
        else
            k->rms_bwd_row(a->dinp + i * C, a->dout + i * C, a->inp + i * C, a->w, a->rstd[i],
                           a->C);
    }
}

/* rows [r0, r1) of the gradients' columns [c0, c1) */
static void norm_bwd_cols(const kern_ops *k, const norm_bwd *a, int r0, int r1, int c0, int c1)
{
    size_t o = (size_t)r0 * a->C;
    if (!a->rms)
        k->ln_bwd_cols(a->dw, a->db, a->dout + o, a->inp + o, a->mean + r0, a->rstd + r0,
                       r1 - r0, a->C, c0, c1);
    else
        k->rms_bwd_cols(a->dw, a->dout + o, a->inp + o, a->rstd + r0, r1 - r0, a->C, c0, c1);
}

static void norm_backward(const norm_bwd *a, int N)
{
    const kern_ops *k = KERN();
    if (omp_in_parallel() || omp_get_max_threads() == 1) {
        for (int r0 = 0; r0 < N; r0 += NORM_CHUNK) {
            int r1 = r0 + NORM_CHUNK < N ? r0 + NORM_CHUNK : N;
            norm_bwd_rows(k, a, r0, r1);
            norm_bwd_cols(k, a, r0, r1, 0, a->C);
        }
        return;
    }
    if (omp_get_max_threads() == 2) {
#pragma omp parallel num_threads(2)
        {
            int t = omp_get_thread_num(), n = omp_get_num_threads(), r0, r1;
            own_rows(N, &r0, &r1);
            if (t > 0)
                norm_bwd_rows(k, a, r0, r1);
#pragma omp for ordered schedule(static, 1) nowait
            for (int s = 0; s < n; s++) { /* iteration s on thread s: its rows */
#pragma omp ordered
                norm_bwd_cols(k, a, r0, r1, 0, a->C);
            }
            if (t == 0)
                norm_bwd_rows(k, a, r0, r1);
        }
        return;
    }
#pragma omp parallel
    {
        int r0, r1, c0, c1;
        own_rows(N, &r0, &r1);
        norm_bwd_rows(k, a, r0, r1);
        column_range(a->C, &c0, &c1);
        if (c0 < c1)
            norm_bwd_cols(k, a, 0, N, c0, c1);
    }
}

void layernorm_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                        const float *w, const float *mean, const float *rstd, int N, int C)
{
    norm_bwd a = {0, 0, dinp, dw, db, dout, inp, w, mean, rstd, C};
    norm_backward(&a, N);
}

void layernorm_backward_set(float *dinp, float *dw, float *db, const float *dout,
                            const float *inp, const float *w, const float *mean,
                            const float *rstd, int N, int C)
{
    norm_bwd a = {0, 1, dinp, dw, db, dout, inp, w, mean, rstd, C};
    norm_backward(&a, N);
}

void rmsnorm_forward(float *out, float *rstd, const float *inp, const float *w, int N, int C,
                     float eps)
{
    const kern_ops *k = KERN();
#pragma omp parallel
    {
        int r0, r1;
        own_rows(N, &r0, &r1);
        for (int i = r0; i < r1; i++)
            k->rms_fwd_row(out + (size_t)i * C, rstd + i, inp + (size_t)i * C, w, C, eps);
    }
}

void rmsnorm_backward(float *dinp, float *dw, const float *dout, const float *inp, const float *w,
                      const float *rstd, int N, int C)
{
    norm_bwd a = {1, 0, dinp, dw, NULL, dout, inp, w, NULL, rstd, C};
    norm_backward(&a, N);
}

/* ---- GELU, softmax cross-entropy -------------------------------------------------- */

/* Elementwise work in blocks of 4096 (a multiple of 16: no element's value depends on
 * where a block starts). */
#define EW_BLOCK 4096

void adamw_update(float *p, const float *g, float *m, float *v, size_t n, float grad_scale,
                  float b1, float b2, float bc1, float bc2, float lr, float eps, float decay)
{
    const kern_ops *k = KERN();
    if (omp_get_level() > 0) { /* a part of the parameters, on the calling thread */
        k->adamw(p, g, m, v, n, grad_scale, b1, b2, bc1, bc2, lr, eps, decay);
        return;
    }
    long nb = (long)((n + EW_BLOCK - 1) / EW_BLOCK);
#pragma omp parallel for schedule(static)
    for (long i = 0; i < nb; i++) {
        size_t o = (size_t)i * EW_BLOCK, c = n - o < EW_BLOCK ? n - o : EW_BLOCK;
        k->adamw(p + o, g + o, m + o, v + o, c, grad_scale, b1, b2, bc1, bc2, lr, eps, decay);
    }
}

void gelu_forward(float *out, const float *inp, size_t n)
{
    const kern_ops *k = KERN();
    long nb = (long)((n + EW_BLOCK - 1) / EW_BLOCK);
#pragma omp parallel for schedule(static)
    for (long b = 0; b < nb; b++) {
        size_t i = (size_t)b * EW_BLOCK, m = n - i < EW_BLOCK ? n - i : EW_BLOCK;
        k->gelu_fwd(out + i, inp + i, m);
    }
}

void gelu_backward(float *dinp, const float *inp, const float *dout, size_t n)
{
    const kern_ops *k = KERN();
    long nb = (long)((n + EW_BLOCK - 1) / EW_BLOCK);
#pragma omp parallel for schedule(static)
    for (long b = 0; b < nb; b++) {
        size_t i = (size_t)b * EW_BLOCK, m = n - i < EW_BLOCK ? n - i : EW_BLOCK;
        k->gelu_bwd(dinp + i, inp + i, dout + i, m);
    }
}

void softmax_xent(float *probs, float *losses, const float *logits, const int32_t *targets,
                  int N, int V)
{
    const kern_ops *k = KERN();
#pragma omp parallel
    {
        int r0, r1;
        own_rows(N, &r0, &r1);
        for (int i = r0; i < r1; i++) {
            const float *z = logits + (size_t)i * V;
            float mx;
            float s = k->xent_row(probs + (size_t)i * V, z, V, &mx);
            if (targets)
                losses[i] = (float)(rm_log((double)s) - (double)(z[targets[i]] - mx));
        }
    }
}

/* ---- attention ------------------------------------------------------------------- */

/* Rows are processed in blocks of AB: block [r0, r1) needs keys [0, r1) only.  AB is the
 * smallest multiple of both micro-tiles' row counts that is at least 16 (16 on avx512 and
 * generic, 18 on avx2), so no block ends in a partial tile that must be copied.  It does
 * not change a bit: the keys a block computes beyond a row's diagonal carry exact zeros
 * (softmax_block writes them), and forward and backward use the same AB. */
static int attention_rows(const kern_ops *k)
{
    int a = k->wide.mr, b = k->narrow.mr, l = a;
    while (l % b)
        l += a;
    return (16 + l - 1) / l * l;
}

/* P (rows [r0, r1), columns [0, r1)) with dropout applied into pd (row stride T) */
static void apply_drop(float *pd, const float *A, const uint8_t *m, float keep, int T, int r0,
                       int r1)
{
    for (int t = r0; t < r1; t++)
        for (int j = 0; j < r1; j++) {
            size_t o = (size_t)t * T + j;
            pd[o] = m[o] ? A[o] * keep : 0.0f;
        }
}

/* Rows [r0, r1) of A (row stride ld), columns [0, r1), asked for ahead of their use
 * (placement only, never a value): a layer's attention probabilities (B·H·T·T floats,
 * 8 MB at the default model) are written in the forward and read back in the backward
 * from memory, and the hardware prefetcher does not follow the causal rows' growing
 * lengths well enough to hide that latency. */
static void prefetch_rows(const float *A, int ld, int r0, int r1, int write)
{
    for (int t = r0; t < r1; t++)
        for (int c = 0; c < r1; c += 16) {
            if (write)
                __builtin_prefetch(A + (size_t)t * ld + c, 1, 3);
            else
                __builtin_prefetch(A + (size_t)t * ld + c, 0, 3);
        }
}

void attention_forward(float *out, float *att, const float *qkv, const uint8_t *mask,
                       float keep_scale, int B, int T, int C, int H)
{
    const kern_ops *k = KERN();
    int hs = C / H, C3 = 3 * C;
    float scale = 1.0f / sqrtf((float)hs);
    size_t nk = gemm_packed_floats(hs, T), nv = gemm_packed_floats(T, hs);
    const int AB = attention_rows(k);
#pragma omp parallel
    {
        float *pd = mask ? kernels_scratch(0, (size_t)T * T) : NULL;
        float *pack = kernels_scratch(2, nk + nv);
#pragma omp for schedule(static) /* each thread its sequences' heads: the rows it owns */
        for (int bh = 0; bh < B * H; bh++) {
            if ((mask && !pd) || !pack)
                continue; /* kernels_failed() reports it */
            int b = bh / H, h = bh % H;
            const float *q = qkv + (size_t)b * T * C3 + h * hs;
            const float *kk = q + C, *v = q + 2 * C;
            float *A = att + (size_t)bh * T * T;
            float *o = out + (size_t)b * T * C + h * hs;
            gemm_packed KT, V;
            gemm_pack(&KT, pack, hs, T, kk, C3, 1);
            gemm_pack(&V, pack + nk, T, hs, v, C3, 0);
            for (int r0 = 0; r0 < T; r0 += AB) {
                int r1 = r0 + AB < T ? r0 + AB : T;
                prefetch_rows(A, T, r1, r1 + AB < T ? r1 + AB : T, 1);
                gemm_packed_mul(r1 - r0, r1, 0, hs, q + (size_t)r0 * C3, C3, 0, &KT,
                                A + (size_t)r0 * T, T, 0);
                k->softmax_block(A, T, r0, r1, scale);
                const float *P = A;
                if (mask) {
                    apply_drop(pd, A, mask + (size_t)bh * T * T, keep_scale, T, r0, r1);
                    P = pd;
                }
                gemm_packed_mul(r1 - r0, hs, 0, r1, P + (size_t)r0 * T, T, 0, &V,
                                o + (size_t)r0 * C, C, 0);
            }
        }
    }
}

void attention_backward(float *dqkv, const float *dout, const float *qkv, const float *att,
                        const uint8_t *mask, float keep_scale, int B, int T, int C, int H)
{
    const kern_ops *k = KERN();
    int hs = C / H, C3 = 3 * C;
    float scale = 1.0f / sqrtf((float)hs);
    size_t nt = gemm_packed_floats(hs, T), nr = gemm_packed_floats(T, hs);
    const int AB = attention_rows(k);
#pragma omp parallel
    {
        float *dP = kernels_scratch(1, (size_t)T * T);
        float *pd = mask ? kernels_scratch(0, (size_t)T * T) : NULL;
        float *pack = kernels_scratch(2, nt + 3 * nr);
#pragma omp for schedule(static) /* each thread its sequences' heads: the rows it owns */
        for (int bh = 0; bh < B * H; bh++) {
            if (!dP || (mask && !pd) || !pack)
                continue; /* kernels_failed() reports it */
            int b = bh / H, h = bh % H;
            size_t qoff = (size_t)b * T * C3 + h * hs;
            const float *q = qkv + qoff, *kk = q + C, *v = q + 2 * C;
            float *dq = dqkv + qoff, *dk = dq + C, *dv = dq + 2 * C;
            const float *dO = dout + (size_t)b * T * C + h * hs;
            const float *A = att + (size_t)bh * T * T;
            const uint8_t *mk = mask ? mask + (size_t)bh * T * T : NULL;
            const float *P = A;
            if (mask) {
                apply_drop(pd, A, mk, keep_scale, T, 0, T);
                P = pd;
            }
            gemm_packed VT, DO, Q, K;
            gemm_pack(&VT, pack, hs, T, v, C3, 1);
            gemm_pack(&DO, pack + nt, T, hs, dO, C, 0);
            gemm_pack(&Q, pack + nt + nr, T, hs, q, C3, 0);
            gemm_pack(&K, pack + nt + 2 * nr, T, hs, kk, C3, 0);
            /* dP = dO·Vᵀ and dS = softmax backward (scale folded in), lower blocks only */
            for (int r0 = 0; r0 < T; r0 += AB) {
                int r1 = r0 + AB < T ? r0 + AB : T;
                prefetch_rows(A, T, r1, r1 + AB < T ? r1 + AB : T, 0);
                gemm_packed_mul(r1 - r0, r1, 0, hs, dO + (size_t)r0 * C, C, 0, &VT,
                                dP + (size_t)r0 * T, T, 0);
                if (mk)
                    for (int t = r0; t < r1; t++) {
                        float *d = dP + (size_t)t * T;
                        for (int j = 0; j <= t; j++)
                            d[j] = mk[(size_t)t * T + j] ? d[j] * keep_scale : 0.0f;
                    }
                k->softmax_bwd_block(dP, A, T, r0, r1, scale);
            }
            for (int r0 = 0; r0 < T; r0 += AB) {
                int r1 = r0 + AB < T ? r0 + AB : T;
                /* dV[j] = Σ_{t >= r0} P[t,j] dO[t];  dK[j] = Σ_{t >= r0} dS[t,j] Q[t]
                 * (earlier t contribute exact zeros) */
                gemm_packed_mul(r1 - r0, hs, r0, T - r0, P + (size_t)r0 * T + r0, T, 1, &DO,
                                dv + (size_t)r0 * C3, C3, 0);
                gemm_packed_mul(r1 - r0, hs, r0, T - r0, dP + (size_t)r0 * T + r0, T, 1, &Q,
                                dk + (size_t)r0 * C3, C3, 0);
                /* dQ = dS·K over keys [0, r1) */
                gemm_packed_mul(r1 - r0, hs, 0, r1, dP + (size_t)r0 * T, T, 0, &K,
                                dq + (size_t)r0 * C3, C3, 0);
            }
        }
    }
}
