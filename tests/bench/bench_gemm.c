/* GEMM and attention microbenchmark (make bench-gemm; a benchmark: it prints, it asserts
 * nothing): GFLOP/s of the default model's products (8 x 128, 8 heads, T = 128, B = 16:
 * N = 2048 tokens; C= another width) on one thread (or threads=N), forward, input-gradient
 * and weight-gradient shapes, one layer's attention forward + backward, the elementwise
 * work its linear layers fuse (GELU and its backward, the bias gradient's column sums)
 * and its norms (the residual add with the LayerNorm, and the LayerNorm's backward),
 * beside the path's FMA peak measured in the same run.
 *   build/bench/bench_gemm [threads=1] [reps=7] [C=128] [path=avx512] [attn]
 * (attn: attention only).  Each figure is the median of `reps` timings, in CPU time on one
 * thread (another tenant of a shared machine changes it less than wall time), wall time
 * on more.  For kernel A/B: build it against two trees' librepro.a and run them
 * interleaved. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../engine/gemm.h"
#include "../../engine/isa.h"
#include "../../engine/kern_ops.h"
#include "../../engine/kernels.h"

/* CPU time of the process with one thread (robust on a shared machine: time spent
 * descheduled is not counted), wall time with more */
static int use_cpu_clock;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(use_cpu_clock ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static double median(double *x, int n)
{
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

typedef struct {
    const char *name;
    int M, N, K, ta, tb;
} shape;

static float *filled(size_t n, int salt)
{
    float *p = kernels_alloc(n * sizeof *p);
    if (!p) {
        fprintf(stderr, "bench_gemm: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++)
        p[i] = (float)((long)((i + (size_t)salt) % 97) - 48) / 64.0f;
    return p;
}

/* A line of microseconds per call: the median of t[0 .. reps) */
static void print_us(const char *name, int M, const char *dim, int n, double *t, int reps,
                     const char *note)
{
    printf("  %-11s M %5d %s %4d  %7.1f us per call%s\n", name, M, dim, n, 1e6 * median(t, reps),
           note);
}

/* GELU (d NULL) or its backward, y = GELU'(x)·d, over N rows of n, each thread its rows */
static void gelu_rows(float *y, const float *x, const float *d, int N, int n)
{
#pragma omp parallel
    {
        int r0, r1;
        gemm_rows(N, omp_get_thread_num(), omp_get_num_threads(), &r0, &r1);
        size_t o = (size_t)r0 * n, len = (size_t)(r1 - r0) * n;
        if (d)
            kern->gelu_bwd(y + o, x + o, d + o, len);
        else
            kern->gelu_fwd(y + o, x + o, len);
    }
}

int main(int argc, char **argv)
{
    int threads = 1, reps = 7, C = 128, only_attn = 0;
    const char *path = "";
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "threads=", 8))
            threads = atoi(argv[i] + 8);
        else if (!strncmp(argv[i], "reps=", 5))
            reps = atoi(argv[i] + 5);
        else if (!strncmp(argv[i], "C=", 2))
            C = atoi(argv[i] + 2);
        else if (!strcmp(argv[i], "attn"))
            only_attn = 1;
        else if (!strncmp(argv[i], "path=", 5))
            path = argv[i] + 5;
        else {
            fprintf(stderr, "bench_gemm: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    if (threads < 1 || reps < 1 || reps > 99 || C < 128 || C % 128) {
        fprintf(stderr, "bench_gemm: threads >= 1, 1 <= reps <= 99, C a multiple of 128\n");
        return 2;
    }
    char err[256];
    if (isa_select(path, err, sizeof err)) {
        fprintf(stderr, "bench_gemm: %s\n", err);
        return 2;
    }
    omp_set_num_threads(threads);
    unsigned long fl = isa_flush_begin();
    const int N = 2048, T = 128, B = N / T, H = 8, V = 65; /* the default model's heads */
    const shape shapes[] = {
        {"qkv fwd", N, 3 * C, C, 0, 1},      {"proj fwd", N, C, C, 0, 1},
        {"fc fwd", N, 4 * C, C, 0, 1},       {"fc2 fwd", N, C, 4 * C, 0, 1},
        {"logits fwd", N, V, C, 0, 1},       {"qkv dX", N, C, 3 * C, 0, 0},
        {"proj dX", N, C, C, 0, 0},          {"fc dX", N, C, 4 * C, 0, 0},
        {"fc2 dX", N, 4 * C, C, 0, 0},       {"qkv dW", 3 * C, C, N, 1, 0},
        {"proj dW", C, C, N, 1, 0},          {"fc dW", 4 * C, C, N, 1, 0},
        {"fc2 dW", C, 4 * C, N, 1, 0},
    };
    size_t big = (size_t)N * 4 * C;
    float *A = filled(big, 1), *Bm = filled(big, 2), *Cm = filled(big, 3);
    use_cpu_clock = threads == 1;
    double peak = 0.0;
    for (int r = 0; r < 3; r++) {
        double p;
        if (use_cpu_clock) {
            double t0 = now_s(), f = kern->fma_peak(1L << 23);
            p = f / (now_s() - t0) / 1e9;
        } else {
            p = kernels_fma_peak(threads, 0.3);
        }
        peak = p > peak ? p : peak;
    }
    printf("bench_gemm: path %s, %d thread(s), C = %d, FMA peak %.1f GFLOP/s\n", isa_name(),
           threads, C, peak);
    double tot_flops = 0.0, tot_s = 0.0;
    for (size_t s = 0; s < (only_attn ? 0 : sizeof shapes / sizeof shapes[0]); s++) {
        const shape *h = &shapes[s];
        int lda = h->ta ? h->M : h->K, ldb = h->tb ? h->K : h->N;
        double t[99], flops = 2.0 * h->M * h->N * h->K;
        int inner = (int)(2e8 / flops) + 1;
        gemm(h->M, h->N, h->K, A, lda, h->ta, Bm, ldb, h->tb, Cm, h->N, 0);
        for (int r = 0; r < reps; r++) {
            double t0 = now_s();
            for (int i = 0; i < inner; i++)
                gemm(h->M, h->N, h->K, A, lda, h->ta, Bm, ldb, h->tb, Cm, h->N, 0);
            t[r] = (now_s() - t0) / inner;
        }
        double m = median(t, reps);
        tot_flops += flops;
        tot_s += m;
        printf("  %-11s M %5d N %4d K %5d  %7.1f GFLOP/s  %5.1f %%\n", h->name, h->M, h->N,
               h->K, flops / m / 1e9, 100.0 * flops / m / 1e9 / peak);
    }
    if (!only_attn)
        printf("  %-11s %36.1f GFLOP/s  %5.1f %%\n", "all linear", tot_flops / tot_s / 1e9,
           100.0 * tot_flops / tot_s / 1e9 / peak);
    /* attention: the FLOPs the engine's blocks compute (tests/bench/profile.lua) */
    {
        int hs = C / H, ab = strcmp(isa_name(), "avx2") ? 16 : 18; /* attention_rows */
        double sf = 0, sb = 0;
        for (int r0 = 0; r0 < T; r0 += ab) {
            int r1 = r0 + ab < T ? r0 + ab : T;
            sf += (double)(r1 - r0) * r1;
            sb += (double)(r1 - r0) * (T - r0);
        }
        double fw = (double)B * H * 2 * (2.0 * hs * sf);
        double bw = (double)B * H * (2 * (2.0 * hs * sf) + 2 * (2.0 * hs * sb));
        size_t nqkv = (size_t)N * 3 * C, nout = (size_t)N * C, natt = (size_t)B * H * T * T;
        float *qkv = filled(nqkv, 4), *dqkv = filled(nqkv, 5), *out = filled(nout, 6);
        float *dout = filled(nout, 7), *att = filled(natt, 8);
        memset(att, 0, natt * sizeof *att);
        double tf[99], tb[99];
        attention_forward(out, att, qkv, NULL, 1.0f, B, T, C, H);
        attention_backward(dqkv, dout, qkv, att, NULL, 1.0f, B, T, C, H);
        for (int r = 0; r < reps; r++) {
            double t0 = now_s();
            for (int i = 0; i < 4; i++)
                attention_forward(out, att, qkv, NULL, 1.0f, B, T, C, H);
            double t1 = now_s();
            for (int i = 0; i < 4; i++)
                attention_backward(dqkv, dout, qkv, att, NULL, 1.0f, B, T, C, H);
            tf[r] = (t1 - t0) / 4;
            tb[r] = (now_s() - t1) / 4;
        }
        double mf = median(tf, reps), mb = median(tb, reps);
        printf("  %-11s %36.1f GFLOP/s  %5.1f %%  (%.3f ms per layer)\n", "attn fwd",
               fw / mf / 1e9, 100.0 * fw / mf / 1e9 / peak, 1e3 * mf);
        printf("  %-11s %36.1f GFLOP/s  %5.1f %%  (%.3f ms per layer)\n", "attn bwd",
               bw / mb / 1e9, 100.0 * bw / mb / 1e9 / peak, 1e3 * mb);
        free(qkv);
        free(dqkv);
        free(out);
        free(dout);
        free(att);
    }
    /* the elementwise work the linear layers fuse, on the default model's rows: GELU
     * forward and backward on N x 4C (each thread its rows, as the GEMM epilogues), and
     * the bias gradient's column sums of N x C (one thread: the step's chains run in
     * row order, on one thread at a time), microseconds per call */
    if (!only_attn) {
        size_t n = (size_t)N * 4 * C;
        float *x = filled(n, 20), *y = filled(n, 21), *d = filled(n, 22);
        float *db = filled((size_t)4 * C, 23);
        double tg[99], tgb[99], ts[99];
        for (int r = 0; r < reps; r++) {
            double t0 = now_s();
            for (int i = 0; i < 20; i++)
                gelu_rows(y, x, NULL, N, 4 * C);
            double t1 = now_s();
            for (int i = 0; i < 20; i++)
                gelu_rows(y, x, d, N, 4 * C);
            double t2 = now_s();
            for (int i = 0; i < 20; i++)
                kern->col_sum_add(db, d, N, C, 0, C);
            tg[r] = (t1 - t0) / 20;
            tgb[r] = (t2 - t1) / 20;
            ts[r] = (now_s() - t2) / 20;
        }
        print_us("gelu fwd", N, "N", 4 * C, tg, reps, "");
        print_us("gelu bwd", N, "N", 4 * C, tgb, reps, "");
        print_us("bias sums", N, "N", C, ts, reps, " (one thread)");
        free(x);
        free(y);
        free(d);
        free(db);
    }
    /* the norms of a block: the residual add with the LayerNorm after it (forward) and the
     * LayerNorm's backward, on N x C, microseconds per call: first with the operands in
     * cache (one set of buffers), then from memory (NSETS sets in rotation, each set's last
     * use NSETS - 1 calls ago, about 150 MB at C = 128, as the step's activations are) */
    if (!only_attn) {
        enum { NSETS = 30 };
        size_t n = (size_t)N * C;
        float *a[NSETS], *b[NSETS], *res[NSETS], *out[NSETS], *din[NSETS];
        for (int s = 0; s < NSETS; s++) {
            a[s] = filled(n, 9 + s);
            b[s] = filled(n, 10 + s);
            res[s] = filled(n, 11 + s);
            out[s] = filled(n, 12 + s);
            din[s] = filled(n, 13 + s);
        }
        float *w = filled((size_t)C, 14), *bias = filled((size_t)C, 15);
        float *dw = filled((size_t)C, 16), *db = filled((size_t)C, 17);
        float *mean = filled((size_t)N, 18), *rstd = filled((size_t)N, 19);
        for (int cold = 0; cold < 2; cold++) {
            double tf[99], tb[99];
            int sets = cold ? NSETS : 1, calls = cold ? NSETS : 20;
            residual_layernorm_forward(res[0], a[0], b[0], out[0], mean, rstd, w, bias, N, C,
                                       1e-5f);
            for (int r = 0; r < reps; r++) {
                double t0 = now_s();
                for (int i = 0; i < calls; i++) {
                    int s = i % sets;
                    residual_layernorm_forward(res[s], a[s], b[s], out[s], mean, rstd, w, bias,
                                               N, C, 1e-5f);
                }
                double t1 = now_s();
                for (int i = 0; i < calls; i++) {
                    int s = i % sets;
                    layernorm_backward(din[s], dw, db, out[s], res[s], w, mean, rstd, N, C);
                }
                tf[r] = (t1 - t0) / calls;
                tb[r] = (now_s() - t1) / calls;
            }
            print_us(cold ? "norm fwd m" : "norm fwd", N, "C", C, tf, reps,
                     cold ? " (operands from memory)" : " (residual add + LayerNorm)");
            print_us(cold ? "norm bwd m" : "norm bwd", N, "C", C, tb, reps, "");
        }
        for (int s = 0; s < NSETS; s++) {
            free(a[s]);
            free(b[s]);
            free(res[s]);
            free(out[s]);
            free(din[s]);
        }
        free(w);
        free(bias);
        free(dw);
        free(db);
        free(mean);
        free(rstd);
    }
    isa_flush_end(fl);
    free(A);
    free(Bm);
    free(Cm);
    kernels_release();
    return 0;
}
