#include "kernels.h"

#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

/* ---- GEMM: BLIS-style packing, 6x16 AVX2/FMA micro-kernel ------------------------- */

#define MR 6
#define NR 16
#define KC 256
#define MC 120

/* Transposed A (stored (K, M)) block (mc, kc) at (i0, p0) into MR-row panels:
 * panel[k*MR + i], zero-padded.  An untransposed A is read in place (see kernel_6x16). */
static void pack_At(int mc, int kc, const float *A, int lda, int i0, int p0, float *Ap)
{
    for (int ir = 0; ir < mc; ir += MR, Ap += (size_t)MR * kc) {
        int mr = mc - ir < MR ? mc - ir : MR;
        const float *src = A + (size_t)p0 * lda + i0 + ir;
        for (int k = 0; k < kc; k++, src += lda) {
            float *dst = Ap + (size_t)k * MR;
            if (mr == MR) {
                memcpy(dst, src, MR * sizeof(float));
            } else {
                for (int i = 0; i < mr; i++)
                    dst[i] = src[i];
                for (int i = mr; i < MR; i++)
                    dst[i] = 0.0f;
            }
        }
    }
}

/* B block (kc, n) at row p0 into NR-column panels: panel[k*NR + j], zero-padded. */
static void pack_B(int kc, int n, const float *B, int ldb, int tb, int p0, float *Bp)
{
    for (int jr = 0; jr < n; jr += NR, Bp += (size_t)NR * kc) {
        int nr = n - jr < NR ? n - jr : NR;
        if (!tb) { /* B stored (K, N) */
            const float *src = B + (size_t)p0 * ldb + jr;
            for (int k = 0; k < kc; k++, src += ldb) {
                float *dst = Bp + (size_t)k * NR;
                if (nr == NR) {
                    memcpy(dst, src, NR * sizeof(float));
                } else {
                    for (int j = 0; j < nr; j++)
                        dst[j] = src[j];
                    for (int j = nr; j < NR; j++)
                        dst[j] = 0.0f;
                }
            }
        } else { /* B stored (N, K): each column of op(B) is contiguous in k */
            for (int j = 0; j < NR; j++) {
                if (j < nr) {
                    const float *src = B + (size_t)(jr + j) * ldb + p0;
                    for (int k = 0; k < kc; k++)
                        Bp[(size_t)k * NR + j] = src[k];
                } else {
                    for (int k = 0; k < kc; k++)
                        Bp[(size_t)k * NR + j] = 0.0f;
                }
            }
        }
    }
}

/* The micro-kernel: C(6,16) [+]= A(6,kc)·B(kc,16).  Row i of A is read at a[i][k·as]:
 * a packed panel passes a[i] = panel + i with as = MR, an unpacked row-major A passes
 * its row pointers with as = 1 (rows past the edge point at zeros).  Either way every
 * element of C is the same sequence of FMAs over k, so packing never changes a bit. */
static void kernel_6x16(int kc, const float *const a[MR], int as, const float *Bp, float *C,
                        int ldc, int acc, int mr, int nr)
{
    /* twelve named accumulators so they stay in registers */
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    const float *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3], *a4 = a[4], *a5 = a[5];
    for (int k = 0; k < kc; k++) {
        __m256 b0 = _mm256_load_ps(Bp);
        __m256 b1 = _mm256_load_ps(Bp + 8);
        size_t o = (size_t)k * as;
        __m256 x;
        x = _mm256_broadcast_ss(a0 + o);
        c00 = _mm256_fmadd_ps(x, b0, c00);
        c01 = _mm256_fmadd_ps(x, b1, c01);
        x = _mm256_broadcast_ss(a1 + o);
        c10 = _mm256_fmadd_ps(x, b0, c10);
        c11 = _mm256_fmadd_ps(x, b1, c11);
        x = _mm256_broadcast_ss(a2 + o);
        c20 = _mm256_fmadd_ps(x, b0, c20);
        c21 = _mm256_fmadd_ps(x, b1, c21);
        x = _mm256_broadcast_ss(a3 + o);
        c30 = _mm256_fmadd_ps(x, b0, c30);
        c31 = _mm256_fmadd_ps(x, b1, c31);
        x = _mm256_broadcast_ss(a4 + o);
        c40 = _mm256_fmadd_ps(x, b0, c40);
        c41 = _mm256_fmadd_ps(x, b1, c41);
        x = _mm256_broadcast_ss(a5 + o);
        c50 = _mm256_fmadd_ps(x, b0, c50);
        c51 = _mm256_fmadd_ps(x, b1, c51);
        Bp += NR;
    }
    __m256 c[MR][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
    if (mr == MR && nr == NR) {
        for (int i = 0; i < MR; i++) {
            float *row = C + (size_t)i * ldc;
            if (acc) {
                c[i][0] = _mm256_add_ps(_mm256_loadu_ps(row), c[i][0]);
                c[i][1] = _mm256_add_ps(_mm256_loadu_ps(row + 8), c[i][1]);
            }
            _mm256_storeu_ps(row, c[i][0]);
            _mm256_storeu_ps(row + 8, c[i][1]);
        }
        return;
    }
    float tmp[MR][NR] __attribute__((aligned(32)));
    for (int i = 0; i < MR; i++) {
        _mm256_store_ps(tmp[i], c[i][0]);
        _mm256_store_ps(tmp[i] + 8, c[i][1]);
    }
    for (int i = 0; i < mr; i++)
        for (int j = 0; j < nr; j++) {
            float *p = C + (size_t)i * ldc + j;
            *p = acc ? *p + tmp[i][j] : tmp[i][j];
        }
}

static const float zero_row[KC] __attribute__((aligned(64)));

/* Packing buffers, one pair per OpenMP thread number, grown on demand and kept between
 * calls (allocating 100s of KiB per call costs page faults); kernels_release frees them. */
#define MAX_THREADS 1024
static struct {
    float *a, *b;
    size_t na, nb;
} pack_buf[MAX_THREADS];

static float *grow(float **p, size_t *have, size_t want)
{
    if (*have < want) {
        free(*p);
        *p = aligned_alloc(64, (want * sizeof(float) + 63) / 64 * 64);
        if (!*p)
            abort(); /* at most a few MiB: nothing sensible to do without them */
        *have = want;
    }
    return *p;
}

void kernels_release(void)
{
    for (int i = 0; i < MAX_THREADS; i++) {
        free(pack_buf[i].a);
        free(pack_buf[i].b);
        pack_buf[i].a = pack_buf[i].b = NULL;
        pack_buf[i].na = pack_buf[i].nb = 0;
    }
}

void gemm_serial(int M, int N, int K, const float *A, int lda, int ta, const float *B, int ldb,
                 int tb, float *C, int ldc, int accumulate)
{
    if (M <= 0 || N <= 0)
        return;
    if (K <= 0) {
        if (!accumulate)
            for (int i = 0; i < M; i++)
                memset(C + (size_t)i * ldc, 0, (size_t)N * sizeof(float));
        return;
    }
    int npad = (N + NR - 1) / NR * NR;
    int kcmax = K < KC ? K : KC;
    int tid = omp_get_thread_num();
    float *Bp = grow(&pack_buf[tid].b, &pack_buf[tid].nb, (size_t)kcmax * npad);
    float *Ap = ta ? grow(&pack_buf[tid].a, &pack_buf[tid].na, (size_t)kcmax * MC) : NULL;
    for (int p0 = 0; p0 < K; p0 += KC) {
        int kc = K - p0 < KC ? K - p0 : KC;
        int acc = accumulate || p0 > 0;
        pack_B(kc, N, B, ldb, tb, p0, Bp);
        for (int i0 = 0; i0 < M; i0 += MC) {
            int mc = M - i0 < MC ? M - i0 : MC;
            if (ta)
                pack_At(mc, kc, A, lda, i0, p0, Ap);
            for (int jr = 0; jr < N; jr += NR)
                for (int ir = 0; ir < mc; ir += MR) {
                    int mr = mc - ir < MR ? mc - ir : MR;
                    const float *rows[MR];
                    for (int i = 0; i < MR; i++)
                        rows[i] = ta ? Ap + (size_t)ir * kc + i
                              : i < mr ? A + (size_t)(i0 + ir + i) * lda + p0
                                       : zero_row;
                    kernel_6x16(kc, rows, ta ? MR : 1, Bp + (size_t)jr * kc,
                                C + (size_t)(i0 + ir) * ldc + jr, ldc, acc, mr,
                                N - jr < NR ? N - jr : NR);
                }
        }
    }
}

void gemm(int M, int N, int K, const float *A, int lda, int ta, const float *B, int ldb, int tb,
          float *C, int ldc, int accumulate)
{
    int nt = omp_get_max_threads();
    if (nt <= 1 || M < 2 * MR) {
        gemm_serial(M, N, K, A, lda, ta, B, ldb, tb, C, ldc, accumulate);
        return;
    }
#pragma omp parallel
    {
        int t = omp_get_thread_num(), n = omp_get_num_threads();
        int chunk = ((M + n - 1) / n + MR - 1) / MR * MR;
        int m0 = t * chunk, m1 = m0 + chunk < M ? m0 + chunk : M;
        if (m0 < m1) {
            const float *As = ta ? A + m0 : A + (size_t)m0 * lda;
            gemm_serial(m1 - m0, N, K, As, lda, ta, B, ldb, tb, C + (size_t)m0 * ldc, ldc,
                        accumulate);
        }
    }
}

/* ---- linear layers --------------------------------------------------------------- */

void linear_forward(float *out, const float *inp, const float *w, const float *b, int N, int IC,
                    int OC)
{
    if (b) {
#pragma omp parallel for schedule(static)
        for (int i = 0; i < N; i++)
            memcpy(out + (size_t)i * OC, b, (size_t)OC * sizeof(float));
    }
    gemm(N, OC, IC, inp, IC, 0, w, IC, 1, out, OC, b != NULL);
}

/* dst[c] += Σ_i src[i*C + c], rows summed in order, columns split across threads. */
static void column_sum_add(float *dst, const float *src, int N, int C)
{
#pragma omp parallel
    {
        int t = omp_get_thread_num(), n = omp_get_num_threads();
        int chunk = (C + n - 1) / n, c0 = t * chunk, c1 = c0 + chunk < C ? c0 + chunk : C;
        for (int i = 0; i < N; i++) {
            const float *row = src + (size_t)i * C;
            for (int c = c0; c < c1; c++)
                dst[c] += row[c];
        }
    }
}

void linear_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                     const float *w, int N, int IC, int OC)
{
    if (dinp)
        gemm(N, IC, OC, dout, OC, 0, w, IC, 0, dinp, IC, 1);
    gemm(OC, IC, N, dout, OC, 1, inp, IC, 0, dw, IC, 1);
    if (db)
        column_sum_add(db, dout, N, OC);
}

/* ---- normalization ---------------------------------------------------------------- */

void layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *w,
                       const float *b, int N, int C, float eps)
{
#pragma omp parallel for schedule(static)
    for (int i = 0; i < N; i++) {
        const float *x = inp + (size_t)i * C;
        float *y = out + (size_t)i * C;
        double s = 0.0;
        for (int c = 0; c < C; c++)
            s += x[c];
        float m = (float)(s / C);
        double v = 0.0;
        for (int c = 0; c < C; c++) {
            float d = x[c] - m;
            v += (double)d * d;
        }
        float r = (float)(1.0 / sqrt(v / C + eps));
        for (int c = 0; c < C; c++)
            y[c] = (x[c] - m) * r * w[c] + b[c];
        mean[i] = m;
        rstd[i] = r;
    }
}

void layernorm_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                        const float *w, const float *mean, const float *rstd, int N, int C)
{
#pragma omp parallel for schedule(static)
    for (int i = 0; i < N; i++) {
        const float *x = inp + (size_t)i * C, *dy = dout + (size_t)i * C;
        float *dx = dinp + (size_t)i * C;
        float m = mean[i], r = rstd[i];
        double sd = 0.0, sdn = 0.0;
        for (int c = 0; c < C; c++) {
            float dn = dy[c] * w[c];
            sd += dn;
            sdn += (double)dn * ((x[c] - m) * r);
        }
        float md = (float)(sd / C), mdn = (float)(sdn / C);
        for (int c = 0; c < C; c++) {
            float n = (x[c] - m) * r;
            dx[c] += r * (dy[c] * w[c] - md - n * mdn);
        }
    }
#pragma omp parallel
    {
        int t = omp_get_thread_num(), n = omp_get_num_threads();
        int chunk = (C + n - 1) / n, c0 = t * chunk, c1 = c0 + chunk < C ? c0 + chunk : C;
        for (int i = 0; i < N; i++) {
            const float *x = inp + (size_t)i * C, *dy = dout + (size_t)i * C;
            for (int c = c0; c < c1; c++) {
                dw[c] += dy[c] * ((x[c] - mean[i]) * rstd[i]);
                db[c] += dy[c];
            }
        }
    }
}

void rmsnorm_forward(float *out, float *rstd, const float *inp, const float *w, int N, int C,
                     float eps)
{
#pragma omp parallel for schedule(static)
    for (int i = 0; i < N; i++) {
        const float *x = inp + (size_t)i * C;
        float *y = out + (size_t)i * C;
        double s = 0.0;
        for (int c = 0; c < C; c++)
            s += (double)x[c] * x[c];
        float r = (float)(1.0 / sqrt(s / C + eps));
        for (int c = 0; c < C; c++)
            y[c] = x[c] * r * w[c];
        rstd[i] = r;
    }
}

void rmsnorm_backward(float *dinp, float *dw, const float *dout, const float *inp, const float *w,
                      const float *rstd, int N, int C)
{
#pragma omp parallel for schedule(static)
    for (int i = 0; i < N; i++) {
        const float *x = inp + (size_t)i * C, *dy = dout + (size_t)i * C;
        float *dx = dinp + (size_t)i * C;
        float r = rstd[i];
        double sdn = 0.0;
        for (int c = 0; c < C; c++)
            sdn += (double)(dy[c] * w[c]) * (x[c] * r);
        float mdn = (float)(sdn / C);
        for (int c = 0; c < C; c++)
            dx[c] += r * (dy[c] * w[c] - (x[c] * r) * mdn);
    }
#pragma omp parallel
    {
        int t = omp_get_thread_num(), n = omp_get_num_threads();
        int chunk = (C + n - 1) / n, c0 = t * chunk, c1 = c0 + chunk < C ? c0 + chunk : C;
        for (int i = 0; i < N; i++) {
            const float *x = inp + (size_t)i * C, *dy = dout + (size_t)i * C;
            for (int c = c0; c < c1; c++)
                dw[c] += dy[c] * (x[c] * rstd[i]);
        }
    }
}

/* ---- exp, tanh, GELU ------------------------------------------------------------- */

/* exp(x) = 2^n · e^r, r = x - n·ln2 in [-ln2/2, ln2/2], e^r by its degree-7 Taylor
 * polynomial (relative error < 1e-8 before rounding).  Inputs are clamped to
 * [-87, 88] so 2^n stays a normal float. */
#define EXP_LOG2E 1.44269504088896341f
#define EXP_LN2_HI 0.693359375f
#define EXP_LN2_LO -2.12194440e-4f

static inline __m256 exp256(__m256 x)
{
    x = _mm256_max_ps(_mm256_min_ps(x, _mm256_set1_ps(88.0f)), _mm256_set1_ps(-87.0f));
    __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(EXP_LOG2E)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(EXP_LN2_HI), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(EXP_LN2_LO), r);
    __m256 p = _mm256_set1_ps(1.0f / 5040.0f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    __m256i e = _mm256_slli_epi32(
        _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

/* tanh(u) = 1 - 2 / (exp(2u) + 1) */
static inline __m256 tanh256(__m256 u)
{
    __m256 e = exp256(_mm256_add_ps(u, u));
    __m256 one = _mm256_set1_ps(1.0f);
    return _mm256_sub_ps(one, _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, one)));
}

static void vexp(float *x, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(x + i, exp256(_mm256_loadu_ps(x + i)));
    if (i < n) {
        float v[8] __attribute__((aligned(32))) = {0};
        memcpy(v, x + i, (n - i) * sizeof(float));
        _mm256_store_ps(v, exp256(_mm256_load_ps(v)));
        memcpy(x + i, v, (n - i) * sizeof(float));
    }
}

#define GELU_S 0.7978845608028654f /* sqrt(2/pi) */
#define GELU_A 0.044715f

static inline __m256 gelu256(__m256 x)
{
    __m256 x3 = _mm256_mul_ps(_mm256_mul_ps(x, x), x);
    __m256 u = _mm256_mul_ps(_mm256_set1_ps(GELU_S), _mm256_fmadd_ps(_mm256_set1_ps(GELU_A), x3, x));
    __m256 t = tanh256(u);
    return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), x),
                         _mm256_add_ps(_mm256_set1_ps(1.0f), t));
}

static inline __m256 gelu_grad256(__m256 x, __m256 dy)
{
    __m256 x2 = _mm256_mul_ps(x, x);
    __m256 x3 = _mm256_mul_ps(x2, x);
    __m256 u = _mm256_mul_ps(_mm256_set1_ps(GELU_S), _mm256_fmadd_ps(_mm256_set1_ps(GELU_A), x3, x));
    __m256 t = tanh256(u);
    __m256 one = _mm256_set1_ps(1.0f), half = _mm256_set1_ps(0.5f);
    __m256 sech2 = _mm256_fnmadd_ps(t, t, one);
    __m256 du = _mm256_mul_ps(_mm256_set1_ps(GELU_S),
                              _mm256_fmadd_ps(_mm256_set1_ps(3.0f * GELU_A), x2, one));
    __m256 g = _mm256_fmadd_ps(_mm256_mul_ps(half, x), _mm256_mul_ps(sech2, du),
                               _mm256_mul_ps(half, _mm256_add_ps(one, t)));
    return _mm256_mul_ps(g, dy);
}

void gelu_forward(float *out, const float *inp, size_t n)
{
    size_t nv = n / 8 * 8;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < nv; i += 8)
        _mm256_storeu_ps(out + i, gelu256(_mm256_loadu_ps(inp + i)));
    if (nv < n) {
        float v[8] __attribute__((aligned(32))) = {0};
        memcpy(v, inp + nv, (n - nv) * sizeof(float));
        _mm256_store_ps(v, gelu256(_mm256_load_ps(v)));
        memcpy(out + nv, v, (n - nv) * sizeof(float));
    }
}

void gelu_backward(float *dinp, const float *inp, const float *dout, size_t n)
{
    size_t nv = n / 8 * 8;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < nv; i += 8)
        _mm256_storeu_ps(dinp + i,
                         gelu_grad256(_mm256_loadu_ps(inp + i), _mm256_loadu_ps(dout + i)));
    if (nv < n) {
        float v[8] __attribute__((aligned(32))) = {0}, d[8] __attribute__((aligned(32))) = {0};
        memcpy(v, inp + nv, (n - nv) * sizeof(float));
        memcpy(d, dout + nv, (n - nv) * sizeof(float));
        _mm256_store_ps(v, gelu_grad256(_mm256_load_ps(v), _mm256_load_ps(d)));
        memcpy(dinp + nv, v, (n - nv) * sizeof(float));
    }
}

/* ---- attention ------------------------------------------------------------------- */

void attention_forward(float *out, float *att, const float *qkv, const uint8_t *mask,
                       float keep_scale, int B, int T, int C, int H)
{
    int hs = C / H, C3 = 3 * C;
    float scale = 1.0f / sqrtf((float)hs);
#pragma omp parallel
    {
        float *pd = mask ? malloc((size_t)T * T * sizeof(float)) : NULL;
#pragma omp for schedule(static)
        for (int bh = 0; bh < B * H; bh++) {
            int b = bh / H, h = bh % H;
            const float *q = qkv + (size_t)b * T * C3 + h * hs;
            const float *k = q + C, *v = q + 2 * C;
            float *A = att + (size_t)bh * T * T;
            gemm_serial(T, T, hs, q, C3, 0, k, C3, 1, A, T, 0);
            for (int t = 0; t < T; t++) {
                float *row = A + (size_t)t * T;
                float mx = -INFINITY;
                for (int j = 0; j <= t; j++) {
                    row[j] *= scale;
                    if (row[j] > mx)
                        mx = row[j];
                }
                for (int j = 0; j <= t; j++)
                    row[j] -= mx;
                vexp(row, (size_t)t + 1);
                float s = 0.0f;
                for (int j = 0; j <= t; j++)
                    s += row[j];
                float inv = 1.0f / s;
                for (int j = 0; j <= t; j++)
                    row[j] *= inv;
                for (int j = t + 1; j < T; j++)
                    row[j] = 0.0f;
            }
            const float *P = A;
            if (mask) {
                const uint8_t *m = mask + (size_t)bh * T * T;
                for (size_t i = 0; i < (size_t)T * T; i++)
                    pd[i] = m[i] ? A[i] * keep_scale : 0.0f;
                P = pd;
            }
            gemm_serial(T, hs, T, P, T, 0, v, C3, 0, out + (size_t)b * T * C + h * hs, C, 0);
        }
        free(pd);
    }
}

void attention_backward(float *dqkv, const float *dout, const float *qkv, const float *att,
                        const uint8_t *mask, float keep_scale, int B, int T, int C, int H)
{
    int hs = C / H, C3 = 3 * C;
    float scale = 1.0f / sqrtf((float)hs);
#pragma omp parallel
    {
        float *dP = malloc((size_t)T * T * sizeof(float));
        float *pd = mask ? malloc((size_t)T * T * sizeof(float)) : NULL;
#pragma omp for schedule(static)
        for (int bh = 0; bh < B * H; bh++) {
            int b = bh / H, h = bh % H;
            size_t qoff = (size_t)b * T * C3 + h * hs;
            const float *q = qkv + qoff, *k = q + C, *v = q + 2 * C;
            float *dq = dqkv + qoff, *dk = dq + C, *dv = dq + 2 * C;
            const float *dO = dout + (size_t)b * T * C + h * hs;
            const float *A = att + (size_t)bh * T * T;
            const float *P = A;
            if (mask) {
                const uint8_t *m = mask + (size_t)bh * T * T;
                for (size_t i = 0; i < (size_t)T * T; i++)
                    pd[i] = m[i] ? A[i] * keep_scale : 0.0f;
                P = pd;
            }
            /* dP = dO·Vᵀ;  dV = Pᵀ·dO */
            gemm_serial(T, T, hs, dO, C, 0, v, C3, 1, dP, T, 0);
            gemm_serial(T, hs, T, P, T, 1, dO, C, 0, dv, C3, 0);
            if (mask) {
                const uint8_t *m = mask + (size_t)bh * T * T;
                for (size_t i = 0; i < (size_t)T * T; i++)
                    dP[i] = m[i] ? dP[i] * keep_scale : 0.0f;
            }
            /* softmax backward, scale folded in: dS = P ⊙ (dP - Σ P⊙dP) · scale */
            for (int t = 0; t < T; t++) {
                const float *a = A + (size_t)t * T;
                float *d = dP + (size_t)t * T;
                float s = 0.0f;
                for (int j = 0; j <= t; j++)
                    s += a[j] * d[j];
                for (int j = 0; j <= t; j++)
                    d[j] = a[j] * (d[j] - s) * scale;
                for (int j = t + 1; j < T; j++)
                    d[j] = 0.0f;
            }
            /* dQ = dS·K;  dK = dSᵀ·Q */
            gemm_serial(T, hs, T, dP, T, 0, k, C3, 0, dq, C3, 0);
            gemm_serial(T, hs, T, dP, T, 1, q, C3, 0, dk, C3, 0);
        }
        free(dP);
        free(pd);
    }
}
