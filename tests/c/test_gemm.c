/* GEMM (engine/gemm.h) on every CPU path this machine has, against a naive reference
 * that follows the determinism rule literally: each C element is one fmaf chain over k
 * in order, from C (accumulate), the bias, or +0.  Every transpose combination, sizes
 * that are not multiples of any blocking (K above the 256-deep block included), the
 * threaded gemm, gemm_bias, the fused GELU epilogues and the packed-B products of
 * attention; equality is bitwise.
 * A float64 product bounds the error of the reference itself.  Under the engine's
 * subnormal flush (isa_flush_begin) every path gives the reference's bits on operands
 * with subnormal entries, and the mode is undone by isa_flush_end. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "check.h"
#include "../../engine/gemm.h"
#include "../../engine/isa.h"
#include "../../engine/kernels.h"
#include "../../engine/pcg.h"

static float at(const float *X, int ld, int t, int r, int c) /* op(X)(r, c) */
{
    return t ? X[(size_t)c * ld + r] : X[(size_t)r * ld + c];
}

static void naive(int M, int N, int K, const float *A, int lda, int ta, const float *B, int ldb,
                  int tb, const float *bias, float *C, int ldc, int acc, int k0)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float c = bias ? bias[j] : acc ? C[(size_t)i * ldc + j] : 0.0f;
            for (int k = 0; k < K; k++)
                c = fmaf(at(A, lda, ta, i, k), at(B, ldb, tb, k0 + k, j), c);
            C[(size_t)i * ldc + j] = c;
        }
}

static void fill(float *x, size_t n, pcg32 *r)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (float)pcg32_normal(r);
}

static const int sizes[][3] = {{1, 1, 1},    {7, 13, 5},   {17, 33, 300}, {50, 65, 129},
                               {13, 16, 16}, {100, 17, 3}, {24, 48, 64},  {9, 200, 257},
                               {64, 16, 130}, {3, 31, 513}, {40, 64, 300}, {96, 128, 520},
                               {200, 40, 600}};
#define N_SIZES ((int)(sizeof sizes / sizeof sizes[0]))

static int same(const float *a, const float *b, size_t n)
{
    return memcmp(a, b, n * sizeof(float)) == 0;
}

static void test_path(const char *path)
{
    char err[256];
    CHECK(isa_select(path, err, sizeof err) == 0, "select %s: %s", path, err);
    pcg32 r;
    pcg32_stream(&r, 7, 99, 0);
    for (int s = 0; s < N_SIZES; s++) {
        int M = sizes[s][0], N = sizes[s][1], K = sizes[s][2];
        int lda_pad = 3, ldb_pad = 5, ldc = N + 2;
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++)
                for (int acc = 0; acc < 3; acc++) { /* 0 set, 1 accumulate, 2 bias */
                    int lda = (ta ? M : K) + lda_pad, ldb = (tb ? K : N) + ldb_pad;
                    size_t na = (size_t)(ta ? K : M) * lda, nb = (size_t)(tb ? N : K) * ldb;
                    float *A = malloc(na * sizeof(float)), *B = malloc(nb * sizeof(float));
                    float *bias = malloc((size_t)N * sizeof(float));
                    size_t nc = (size_t)M * ldc;
                    float *C0 = malloc(nc * sizeof(float)), *C1 = malloc(nc * sizeof(float)),
                          *C2 = malloc(nc * sizeof(float));
                    fill(A, na, &r);
                    fill(B, nb, &r);
                    fill(bias, (size_t)N, &r);
                    fill(C0, nc, &r);
                    memcpy(C1, C0, nc * sizeof(float));
                    memcpy(C2, C0, nc * sizeof(float));
                    const float *bp = acc == 2 ? bias : NULL;
                    naive(M, N, K, A, lda, ta, B, ldb, tb, bp, C0, ldc, acc == 1, 0);
                    int rc = bp ? gemm_bias(M, N, K, A, lda, ta, B, ldb, tb, bp, C1, ldc)
                                : gemm_serial(M, N, K, A, lda, ta, B, ldb, tb, C1, ldc, acc);
                    CHECK(rc == 0 && same(C0, C1, nc), "%s gemm M=%d N=%d K=%d ta=%d tb=%d mode=%d",
                          path, M, N, K, ta, tb, acc);
                    if (!bp) {
                        omp_set_num_threads(2);
                        rc = gemm(M, N, K, A, lda, ta, B, ldb, tb, C2, ldc, acc);
                        CHECK(rc == 0 && same(C0, C2, nc),
                              "%s threaded gemm M=%d N=%d K=%d ta=%d tb=%d acc=%d", path, M, N, K,
                              ta, tb, acc);
                    }
                    /* the reference against float64: |error| within K·eps·Σ|a·b| */
                    int ok = 1;
                    for (int i = 0; i < M && ok; i++)
                        for (int j = 0; j < N && ok; j++) {
                            double e = bp ? bp[j] : 0.0, mag = fabs(e);
                            for (int k = 0; k < K; k++) {
                                double p = (double)at(A, lda, ta, i, k) * at(B, ldb, tb, k, j);
                                e += p;
                                mag += fabs(p);
                            }
                            if (acc == 1)
                                continue;
                            ok = fabs(C1[(size_t)i * ldc + j] - e) <= (K + 1) * 6e-8 * mag + 1e-30;
                        }
                    CHECK(ok, "%s gemm M=%d N=%d K=%d ta=%d tb=%d: error above the bound", path,
                          M, N, K, ta, tb);
                    free(A);
                    free(B);
                    free(bias);
                    free(C0);
                    free(C1);
                    free(C2);
                }
    }
    /* a row-major B of whole panels (N a multiple of 16 or 32) with 64-byte aligned rows,
     * which gemm reads in place, beside ones that must be packed (ldb not a multiple of 16) */
    static const int aligned[][4] = {{7, 32, 5, 32}, {50, 64, 300, 64},  {33, 96, 600, 112},
                                     {19, 16, 257, 16}, {8, 48, 40, 48}, {40, 32, 70, 35}};
    for (int s = 0; s < 6; s++) {
        int M = aligned[s][0], N = aligned[s][1], K = aligned[s][2], ldb = aligned[s][3];
        for (int ta = 0; ta < 2; ta++)
            for (int acc = 0; acc < 2; acc++) {
                int lda = (ta ? M : K) + 1;
                size_t na = (size_t)(ta ? K : M) * lda, nb = (size_t)K * ldb, nc = (size_t)M * N;
                float *A = malloc(na * sizeof(float));
                float *B = aligned_alloc(64, (nb * sizeof(float) + 63) / 64 * 64);
                float *C0 = malloc(nc * sizeof(float)), *C1 = malloc(nc * sizeof(float)),
                      *C2 = malloc(nc * sizeof(float));
                fill(A, na, &r);
                fill(B, nb, &r);
                fill(C0, nc, &r);
                memcpy(C1, C0, nc * sizeof(float));
                memcpy(C2, C0, nc * sizeof(float));
                naive(M, N, K, A, lda, ta, B, ldb, 0, NULL, C0, N, acc, 0);
                int rc = gemm_serial(M, N, K, A, lda, ta, B, ldb, 0, C1, N, acc);
                omp_set_num_threads(2);
                rc |= gemm(M, N, K, A, lda, ta, B, ldb, 0, C2, N, acc);
                CHECK(rc == 0 && same(C0, C1, nc) && same(C0, C2, nc),
                      "%s gemm, B read in place: M=%d N=%d K=%d ldb=%d ta=%d acc=%d", path, M, N,
                      K, ldb, ta, acc);
                free(A);
                free(B);
                free(C0);
                free(C1);
                free(C2);
            }
    }
    /* packed B: rows [k0, k0+k) and the first n columns of a packed (K, N); the third
     * configuration is a row-major B of 16 columns with aligned rows (attention's V, Q, K
     * and dO at head size 16), which gemm_pack reads in place */
    for (int cfg = 0; cfg < 3; cfg++) {
        int tb = cfg == 1, K = 70, N = cfg == 2 ? 16 : 37;
        int ldb = cfg == 2 ? 48 : (tb ? K : N) + 1;
        size_t nbf = ((size_t)(tb ? N : K) * ldb * sizeof(float) + 63) / 64 * 64;
        float *B = aligned_alloc(64, nbf);
        fill(B, (size_t)(tb ? N : K) * ldb, &r);
        float *buf = aligned_alloc(64, (gemm_packed_floats(K, N) * sizeof(float) + 63) / 64 * 64);
        gemm_packed pb;
        gemm_pack(&pb, buf, K, N, B, ldb, tb);
        CHECK((pb.Bp == B) == (cfg == 2), "%s packed tb=%d N=%d ldb=%d: read in place %s", path,
              tb, N, ldb, pb.Bp == B ? "when it should be packed" : "expected, got a copy");
        const int cases[][4] = {{5, 37, 0, 70}, {16, 20, 3, 40}, {33, 1, 69, 1}, {2, 17, 10, 0}};
        for (int c = 0; c < 4; c++) {
            int M = cases[c][0], n = cases[c][1] < N ? cases[c][1] : N, k0 = cases[c][2],
                k = cases[c][3];
            for (int ta = 0; ta < 2; ta++) {
                int lda = (ta ? M : k) + 2;
                size_t na = (size_t)(ta ? k : M) * lda + 1;
                float *A = malloc(na * sizeof(float)), *C0 = malloc((size_t)M * n * sizeof(float)),
                      *C1 = malloc((size_t)M * n * sizeof(float));
                fill(A, na, &r);
                fill(C0, (size_t)M * n, &r);
                memcpy(C1, C0, (size_t)M * n * sizeof(float));
                naive(M, n, k, A, lda, ta, B, ldb, tb, NULL, C0, n, 0, k0);
                int rc = gemm_packed_mul(M, n, k0, k, A, lda, ta, &pb, C1, n, 0);
                CHECK(rc == 0 && same(C0, C1, (size_t)M * n),
                      "%s packed M=%d n=%d k0=%d k=%d ta=%d tb=%d", path, M, n, k0, k, ta, tb);
                free(A);
                free(C0);
                free(C1);
            }
        }
        free(buf);
        free(B);
    }
    CHECK(!kernels_failed(), "%s: a kernel allocation failed", path);
    kernels_release();
}

/* The fused epilogues (gemm_bias_gelu, gemm_gelu_bwd) against the product followed by a
 * separate elementwise pass (gelu_forward, gelu_backward), bitwise, at 1 and 2 threads:
 * shapes that take the row split with a shared packed B, the column split of long-K
 * products, the row split of long K with each thread's own packed B, the serial fallback
 * of few rows, K over one 256-deep block, and partial tiles. */
static void test_epilogue(const char *path)
{
    char err[256];
    CHECK(isa_select(path, err, sizeof err) == 0, "select %s: %s", path, err);
    static const int shapes[][3] = {{100, 70, 33}, {40, 48, 600}, {7, 40, 20}, {300, 96, 257},
                                    {200, 40, 600}};
    pcg32 r;
    pcg32_stream(&r, 7, 97, 0);
    for (int s = 0; s < 5; s++) {
        int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++)
                for (int th = 1; th <= 2; th++) {
                    int lda = (ta ? M : K) + 1, ldb = (tb ? K : N) + 3, ldc = N + 2, ldx = N + 5;
                    size_t na = (size_t)(ta ? K : M) * lda, nb = (size_t)(tb ? N : K) * ldb;
                    size_t nc = (size_t)M * ldc, nx = (size_t)M * ldx;
                    float *A = malloc(na * sizeof(float)), *B = malloc(nb * sizeof(float));
                    float *bias = malloc((size_t)N * sizeof(float));
                    float *C0 = calloc(nc, sizeof(float)), *C1 = calloc(nc, sizeof(float));
                    float *G0 = calloc(nx, sizeof(float)), *G1 = calloc(nx, sizeof(float));
                    float *X = malloc(nx * sizeof(float));
                    fill(A, na, &r);
                    fill(B, nb, &r);
                    fill(bias, (size_t)N, &r);
                    fill(X, nx, &r);
                    omp_set_num_threads(th);
                    /* forward: C = bias + AB, G = GELU(C) */
                    int rc = gemm_bias(M, N, K, A, lda, ta, B, ldb, tb, bias, C0, ldc);
                    for (int i = 0; i < M; i++)
                        gelu_forward(G0 + (size_t)i * ldx, C0 + (size_t)i * ldc, (size_t)N);
                    rc |= gemm_bias_gelu(M, N, K, A, lda, ta, B, ldb, tb, bias, C1, ldc, G1, ldx);
                    CHECK(rc == 0 && same(C0, C1, nc) && same(G0, G1, nx),
                          "%s gemm_bias_gelu M=%d N=%d K=%d ta=%d tb=%d threads=%d", path, M, N,
                          K, ta, tb, th);
                    /* backward: C = GELU'(X)·AB */
                    rc = gemm(M, N, K, A, lda, ta, B, ldb, tb, C0, ldc, 0);
                    for (int i = 0; i < M; i++)
                        gelu_backward(C0 + (size_t)i * ldc, X + (size_t)i * ldx,
                                      C0 + (size_t)i * ldc, (size_t)N);
                    rc |= gemm_gelu_bwd(M, N, K, A, lda, ta, B, ldb, tb, C1, ldc, X, ldx);
                    CHECK(rc == 0 && same(C0, C1, nc),
                          "%s gemm_gelu_bwd M=%d N=%d K=%d ta=%d tb=%d threads=%d", path, M, N, K,
                          ta, tb, th);
                    free(A);
                    free(B);
                    free(bias);
                    free(C0);
                    free(C1);
                    free(G0);
                    free(G1);
                    free(X);
                }
    }
    omp_set_num_threads(1);
    CHECK(!kernels_failed(), "%s: a kernel allocation failed", path);
    kernels_release();
}

/* A linear layer's backward (linear_backward, _set, _gelu) against the naive chains: dinp
 * = dout·w (added, set, or times GELU'(x) by gelu_backward), dw += doutᵀ·inp and db +=
 * each column of dout summed over the rows in order; and the norms' backward at 2 and 3
 * threads against 1 (on more threads each thread takes its rows and continues the weight
 * gradients' column chains where the thread before it left them), and
 * layernorm_backward_set against a memset and layernorm_backward.  Bitwise; row counts
 * that split unevenly and rows narrower and wider than a 64-column block. */
static void test_layers(const char *path)
{
    char err[256];
    CHECK(isa_select(path, err, sizeof err) == 0, "select %s: %s", path, err);
    static const int shapes[][3] = {{300, 40, 120}, {37, 16, 65}, {1, 24, 8}, {130, 200, 33}};
    pcg32 r;
    pcg32_stream(&r, 7, 96, 0);
    for (int s = 0; s < 4; s++) {
        int N = shapes[s][0], IC = shapes[s][1], OC = shapes[s][2];
        size_t ni = (size_t)N * IC, no = (size_t)N * OC, nw = (size_t)OC * IC;
        float *dout = malloc(no * sizeof(float)), *inp = malloc(ni * sizeof(float));
        float *w = malloc(nw * sizeof(float)), *x = malloc(ni * sizeof(float));
        float *dinp0 = malloc(ni * sizeof(float)), *dinp1 = malloc(ni * sizeof(float));
        float *dw0 = malloc(nw * sizeof(float)), *dw1 = malloc(nw * sizeof(float));
        float *db0 = malloc((size_t)OC * sizeof(float)), *db1 = malloc((size_t)OC * sizeof(float));
        float *start = malloc(ni * sizeof(float));
        fill(dout, no, &r);
        fill(inp, ni, &r);
        fill(w, nw, &r);
        fill(x, ni, &r);
        fill(start, ni, &r);
        fill(dw0, nw, &r);
        fill(db0, (size_t)OC, &r);
        memcpy(dw1, dw0, nw * sizeof(float));
        memcpy(db1, db0, (size_t)OC * sizeof(float));
        /* the reference: every call adds the same dw and db terms once more */
        const char *names[3] = {"linear_backward", "linear_backward_set", "linear_backward_gelu"};
        for (int th = 1; th <= 3; th++)
            for (int v = 0; v < 3; v++) {
                memcpy(dinp0, start, ni * sizeof(float));
                memcpy(dinp1, start, ni * sizeof(float));
                naive(N, IC, OC, dout, OC, 0, w, IC, 0, NULL, dinp0, IC, v == 0, 0);
                if (v == 2)
                    gelu_backward(dinp0, x, dinp0, ni);
                naive(OC, IC, N, dout, OC, 1, inp, IC, 0, NULL, dw0, IC, 1, 0);
                for (int j = 0; j < OC; j++)
                    for (int i = 0; i < N; i++)
                        db0[j] += dout[(size_t)i * OC + j];
                omp_set_num_threads(th);
                if (v == 0)
                    linear_backward(dinp1, dw1, db1, dout, inp, w, N, IC, OC);
                else if (v == 1)
                    linear_backward_set(dinp1, dw1, db1, dout, inp, w, N, IC, OC);
                else
                    linear_backward_gelu(dinp1, x, dw1, db1, dout, inp, w, N, IC, OC);
                CHECK(same(dinp0, dinp1, ni) && same(dw0, dw1, nw) && same(db0, db1, (size_t)OC),
                      "%s %s N=%d IC=%d OC=%d threads=%d: dinp %s, dw %s, db %s", path, names[v],
                      N, IC, OC, th, same(dinp0, dinp1, ni) ? "same" : "differs",
                      same(dw0, dw1, nw) ? "same" : "differs",
                      same(db0, db1, (size_t)OC) ? "same" : "differs");
            }
        /* the norms over (N, IC) */
        int C = IC;
        float *mean = malloc((size_t)N * sizeof(float)), *rstd = malloc((size_t)N * sizeof(float));
        float *nw0 = malloc((size_t)C * sizeof(float)), *nb0 = malloc((size_t)C * sizeof(float));
        float *g = malloc((size_t)C * sizeof(float)), *bias = malloc((size_t)C * sizeof(float));
        float *nw1 = malloc((size_t)C * sizeof(float)), *nb1 = malloc((size_t)C * sizeof(float));
        fill(g, (size_t)C, &r);
        fill(bias, (size_t)C, &r);
        for (int rms = 0; rms < 2; rms++) {
            omp_set_num_threads(1);
            if (rms)
                rmsnorm_forward(dinp1, rstd, inp, g, N, C, 1e-6f);
            else
                layernorm_forward(dinp1, mean, rstd, inp, g, bias, N, C, 1e-5f);
            for (int th = 2; th <= 3; th++) {
                fill(nw0, (size_t)C, &r); /* the gradients they add into */
                fill(nb0, (size_t)C, &r);
                memcpy(nw1, nw0, (size_t)C * sizeof(float));
                memcpy(nb1, nb0, (size_t)C * sizeof(float));
                memcpy(dinp0, start, ni * sizeof(float));
                memcpy(dinp1, start, ni * sizeof(float));
                for (int k = 0; k < 2; k++) {
                    omp_set_num_threads(k ? th : 1);
                    float *d = k ? dinp1 : dinp0, *dw = k ? nw1 : nw0, *db = k ? nb1 : nb0;
                    if (rms)
                        rmsnorm_backward(d, dw, x, inp, g, rstd, N, C);
                    else
                        layernorm_backward(d, dw, db, x, inp, g, mean, rstd, N, C);
                }
                CHECK(same(dinp0, dinp1, ni) && same(nw0, nw1, (size_t)C) &&
                          same(nb0, nb1, (size_t)C),
                      "%s %s backward N=%d C=%d: %d threads give the bits of 1", path,
                      rms ? "rmsnorm" : "layernorm", N, C, th);
                if (rms)
                    continue;
                /* layernorm_backward_set: the bits of a memset and layernorm_backward */
                memset(dinp0, 0, ni * sizeof(float));
                layernorm_backward(dinp0, nw0, nb0, x, inp, g, mean, rstd, N, C);
                omp_set_num_threads(th - 1);
                memcpy(dinp1, start, ni * sizeof(float));
                layernorm_backward_set(dinp1, nw1, nb1, x, inp, g, mean, rstd, N, C);
                CHECK(same(dinp0, dinp1, ni) && same(nw0, nw1, (size_t)C) &&
                          same(nb0, nb1, (size_t)C),
                      "%s layernorm_backward_set N=%d C=%d, %d threads: the bits of a memset "
                      "and layernorm_backward", path, N, C, th - 1);
            }
        }
        omp_set_num_threads(1);
        free(mean);
        free(rstd);
        free(nw0);
        free(nb0);
        free(nw1);
        free(nb1);
        free(g);
        free(bias);
        free(dout);
        free(inp);
        free(w);
        free(x);
        free(dinp0);
        free(dinp1);
        free(dw0);
        free(dw1);
        free(db0);
        free(db1);
        free(start);
    }
    CHECK(!kernels_failed(), "%s: a kernel allocation failed", path);
    kernels_release();
}

/* Subnormal operands and products under the flush mode, on one path. */
static void test_flush(const char *path)
{
    char err[256];
    CHECK(isa_select(path, err, sizeof err) == 0, "select %s: %s", path, err);
    enum { M = 19, N = 37, K = 70 };
    float A[M * K], B[K * N], C[M * N], R[M * N];
    pcg32 r;
    pcg32_stream(&r, 7, 98, 0);
    fill(A, M * K, &r);
    fill(B, K * N, &r);
    for (int i = 0; i < M * K; i += 3)
        A[i] *= 1e-39f; /* subnormal (set before the flush mode: it would flush this) */
    for (int i = 0; i < K * N; i += 5)
        B[i] *= 1e-20f; /* normal, but its products with A's normal entries are tiny */
    unsigned long saved = isa_flush_begin();
    naive(M, N, K, A, K, 0, B, N, 0, NULL, R, N, 0, 0);
    gemm(M, N, K, A, K, 0, B, N, 0, C, N, 0);
    CHECK(same(C, R, M * N), "%s: gemm with subnormal operands under the flush mode", path);
    volatile float tiny = FLT_MIN, half = 0.5f;
    float q = tiny * half;
    CHECK(q == 0.0f, "%s: FLT_MIN * 0.5 flushed to 0, got %g", path, (double)q);
    isa_flush_end(saved);
    q = tiny * half;
    CHECK(q > 0.0f && q < FLT_MIN, "%s: after isa_flush_end FLT_MIN * 0.5 is subnormal, got %g",
          path, (double)q);
}

int main(void)
{
    char paths[64];
    snprintf(paths, sizeof paths, "%s", isa_available());
    printf("test_gemm: paths %s\n", paths);
    for (char *p = strtok(paths, " "); p; p = strtok(NULL, " ")) {
        test_path(p);
        test_epilogue(p);
        test_layers(p);
        test_flush(p);
    }
    char err[256];
    CHECK(isa_select("nosuch", err, sizeof err) == -1 && strstr(err, "nosuch") &&
              strstr(err, "generic"),
          "unknown path refused with its name and the available ones: %s", err);
    return check_done("test_gemm");
}
