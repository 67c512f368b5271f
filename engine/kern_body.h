/* The kernels of one CPU path, written once on the v16 vector of engine/simd.h.
 * Included by kern_avx512.c, kern_avx2.c and kern_generic.c after KERN_<PATH>, KSFX (the
 * name suffix) and the path's GEMM micro-kernels are defined.  Every reduction here is
 * lane-blocked (lane l accumulates elements l, l+16, l+32, ... in order, then the fixed
 * tree of v_hsum), so the three paths agree bit for bit; see engine/kernels.h. */

#define KCAT2(a, b) a##_##b
#define KCAT(a, b) KCAT2(a, b)
#define K(name) KCAT(name, KSFX)

static inline float red_sum(const float *x, int n)
{
    v16 acc = v_zero();
    int c = 0;
    for (; c + 16 <= n; c += 16)
        acc = v_add(acc, v_load(x + c));
    if (c < n)
        acc = v_add(acc, v_load_n(x + c, n - c));
    return v_hsum(acc);
}

/* max of m's 16 lanes by a fixed tree (lane l vs l+8, then l+4, l+2, l+1); no lane is NaN
 * (v_max in red_max_scaled skips NaN inputs), so any order gives this value */
static inline float hmax_tree(v16 m)
{
    float t[16];
    v_store(t, m);
#define HMAX2(a, b) ((b) > (a) ? (b) : (a))
    float a0 = HMAX2(t[0], t[8]), a1 = HMAX2(t[1], t[9]), a2 = HMAX2(t[2], t[10]),
          a3 = HMAX2(t[3], t[11]), a4 = HMAX2(t[4], t[12]), a5 = HMAX2(t[5], t[13]),
          a6 = HMAX2(t[6], t[14]), a7 = HMAX2(t[7], t[15]);
    float b0 = HMAX2(a0, a4), b1 = HMAX2(a1, a5), b2 = HMAX2(a2, a6), b3 = HMAX2(a3, a7);
    float c0 = HMAX2(b0, b2), c1 = HMAX2(b1, b3);
    return HMAX2(c0, c1);
#undef HMAX2
}

/* max over x[0..n) with scale applied, x86 max semantics (order-free without NaN) */
static inline float red_max_scaled(const float *x, int n, float scale)
{
    v16 s = v_set1(scale), m = v_set1(-INFINITY);
    int c = 0;
    for (; c + 16 <= n; c += 16)
        m = v_max(v_mul(v_load(x + c), s), m);
    if (c < n)
        m = v_max(v_mul(v_load_pad(x + c, n - c, -INFINITY), s), m);
    return hmax_tree(m);
}

static void K(ln_fwd_row)(float *y, float *mean, float *rstd, const float *x, const float *w,
                          const float *b, int C, float eps)
{
    float m = red_sum(x, C) / (float)C;
    v16 vm = v_set1(m), acc = v_zero();
    int c = 0;
    for (; c + 16 <= C; c += 16) {
        v16 d = v_sub(v_load(x + c), vm);
        acc = v_fma(d, d, acc);
    }
    if (c < C) {
        v16 d = v_keep_n(v_sub(v_load_n(x + c, C - c), vm), C - c);
        acc = v_fma(d, d, acc);
    }
    float r = 1.0f / sqrtf(v_hsum(acc) / (float)C + eps);
    v16 vr = v_set1(r);
    for (c = 0; c + 16 <= C; c += 16) {
        v16 xh = v_mul(v_sub(v_load(x + c), vm), vr);
        v_store(y + c, v_fma(xh, v_load(w + c), v_load(b + c)));
    }
    if (c < C) {
        int n = C - c;
        v16 xh = v_mul(v_sub(v_load_n(x + c, n), vm), vr);
        v_store_n(y + c, v_fma(xh, v_load_n(w + c, n), v_load_n(b + c, n)), n);
    }
    *mean = m;
    *rstd = r;
}

static void K(ln_bwd_row)(float *dx, const float *dy, const float *x, const float *w, float mean,
                          float rstd, int C)
{
    /* whole chunks with plain loads and stores, then the partial one masked (the same
       values: a masked load of 16 lanes is a load) */
    v16 vm = v_set1(mean), vr = v_set1(rstd), sd = v_zero(), sdn = v_zero();
    int c = 0;
    for (; c + 16 <= C; c += 16) {
        v16 xh = v_mul(v_sub(v_load(x + c), vm), vr);
        v16 dn = v_mul(v_load(dy + c), v_load(w + c));
        sd = v_add(sd, dn);
        sdn = v_fma(dn, xh, sdn);
    }
    if (c < C) {
        int n = C - c;
        v16 xh = v_mul(v_sub(v_load_n(x + c, n), vm), vr);
        v16 dn = v_mul(v_load_n(dy + c, n), v_load_n(w + c, n)); /* 0 past the row */
        sd = v_add(sd, dn);
        sdn = v_fma(dn, xh, sdn);
    }
    v16 md = v_set1(v_hsum(sd) / (float)C), mdn = v_set1(v_hsum(sdn) / (float)C);
    for (c = 0; c + 16 <= C; c += 16) {
        v16 xh = v_mul(v_sub(v_load(x + c), vm), vr);
        v16 dn = v_mul(v_load(dy + c), v_load(w + c));
        v16 t = v_fnma(xh, mdn, v_sub(dn, md));
        v_store(dx + c, v_fma(vr, t, v_load(dx + c)));
    }
    if (c < C) {
        int n = C - c;
        v16 xh = v_mul(v_sub(v_load_n(x + c, n), vm), vr);
        v16 dn = v_mul(v_load_n(dy + c, n), v_load_n(w + c, n));
        v16 t = v_fnma(xh, mdn, v_sub(dn, md));
        v_store_n(dx + c, v_fma(vr, t, v_load_n(dx + c, n)), n);
    }
}

static void K(ln_bwd_cols)(float *dw, float *db, const float *dy, const float *x,
                           const float *mean, const float *rstd, int N, int C, int c0, int c1)
{
    int c = c0;
    for (; c + 64 <= c1; c += 64) { /* four column blocks per pass over the rows */
        /* the loops over q fully unrolled: the accumulators stay in registers (rolled,
           gcc kept the arrays on the stack, a store and a reload in every chain step) */
        v16 aw[4], ab[4];
        _Pragma("GCC unroll 4") for (int q = 0; q < 4; q++)
        {
            aw[q] = v_load(dw + c + 16 * q);
            ab[q] = v_load(db + c + 16 * q);
        }
        for (int i = 0; i < N; i++) {
            const float *xr = x + (size_t)i * C + c, *dr = dy + (size_t)i * C + c;
            v16 vm = v_set1(mean[i]), vr = v_set1(rstd[i]);
            _Pragma("GCC unroll 4") for (int q = 0; q < 4; q++)
            {
                v16 g = v_load(dr + 16 * q);
                v16 xh = v_mul(v_sub(v_load(xr + 16 * q), vm), vr);
                aw[q] = v_fma(g, xh, aw[q]);
                ab[q] = v_add(ab[q], g);
            }
        }
        _Pragma("GCC unroll 4") for (int q = 0; q < 4; q++)
        {
            v_store(dw + c + 16 * q, aw[q]);
            v_store(db + c + 16 * q, ab[q]);
        }
    }
    for (; c < c1; c += 16) {
        int n = c1 - c < 16 ? c1 - c : 16;
        v16 aw = v_load_n(dw + c, n), ab = v_load_n(db + c, n);
        for (int i = 0; i < N; i++) {
            const float *xr = x + (size_t)i * C + c, *dr = dy + (size_t)i * C + c;
            v16 g = v_load_n(dr, n);
            v16 xh = v_mul(v_sub(v_load_n(xr, n), v_set1(mean[i])), v_set1(rstd[i]));
            aw = v_fma(g, xh, aw);
            ab = v_add(ab, g);
        }
        v_store_n(dw + c, aw, n);
        v_store_n(db + c, ab, n);
    }
}

static void K(rms_fwd_row)(float *y, float *rstd, const float *x, const float *w, int C, float eps)
{
    v16 acc = v_zero();
    for (int c = 0; c < C; c += 16) {
        int n = C - c < 16 ? C - c : 16;
        v16 v = v_load_n(x + c, n);
        acc = v_fma(v, v, acc);
    }
    float r = 1.0f / sqrtf(v_hsum(acc) / (float)C + eps);
    v16 vr = v_set1(r);
    for (int c = 0; c < C; c += 16) {
        int n = C - c < 16 ? C - c : 16;
        v_store_n(y + c, v_mul(v_mul(v_load_n(x + c, n), vr), v_load_n(w + c, n)), n);
    }
    *rstd = r;
}

static void K(rms_bwd_row)(float *dx, const float *dy, const float *x, const float *w, float rstd,
                           int C)
{
    v16 vr = v_set1(rstd), sdn = v_zero();
    for (int c = 0; c < C; c += 16) {
        int n = C - c < 16 ? C - c : 16;
        v16 xh = v_mul(v_load_n(x + c, n), vr);
        v16 dn = v_mul(v_load_n(dy + c, n), v_load_n(w + c, n));
        sdn = v_fma(dn, xh, sdn);
    }
    v16 mdn = v_set1(v_hsum(sdn) / (float)C);
    for (int c = 0; c < C; c += 16) {
        int n = C - c < 16 ? C - c : 16;
        v16 xh = v_mul(v_load_n(x + c, n), vr);
        v16 dn = v_mul(v_load_n(dy + c, n), v_load_n(w + c, n));
        v_store_n(dx + c, v_fma(vr, v_fnma(xh, mdn, dn), v_load_n(dx + c, n)), n);
    }
}

static void K(rms_bwd_cols)(float *dw, const float *dy, const float *x, const float *rstd, int N,
                            int C, int c0, int c1)
{
    for (int c = c0; c < c1; c += 16) {
        int n = c1 - c < 16 ? c1 - c : 16;
        v16 aw = v_load_n(dw + c, n);
        for (int i = 0; i < N; i++) {
            v16 xh = v_mul(v_load_n(x + (size_t)i * C + c, n), v_set1(rstd[i]));
            aw = v_fma(v_load_n(dy + (size_t)i * C + c, n), xh, aw);
        }
        v_store_n(dw + c, aw, n);
    }
}

#define GELU_S 0.7978845608028654f /* sqrt(2/pi) */
#define GELU_A 0.044715f

static inline v16 gelu16(v16 x)
{
    v16 x3 = v_mul(v_mul(x, x), x);
    v16 u = v_mul(v_set1(GELU_S), v_fma(v_set1(GELU_A), x3, x));
    v16 t = v_tanhf(u);
    return v_mul(v_mul(v_set1(0.5f), x), v_add(v_set1(1.0f), t));
}

static inline v16 gelu_grad16(v16 x, v16 dy)
{
    v16 x2 = v_mul(x, x);
    v16 x3 = v_mul(x2, x);
    v16 u = v_mul(v_set1(GELU_S), v_fma(v_set1(GELU_A), x3, x));
    v16 t = v_tanhf(u);
    v16 one = v_set1(1.0f), half = v_set1(0.5f);
    v16 sech2 = v_fnma(t, t, one);
    v16 du = v_mul(v_set1(GELU_S), v_fma(v_set1(3.0f * GELU_A), x2, one));
    v16 g = v_fma(v_mul(half, x), v_mul(sech2, du), v_mul(half, v_add(one, t)));
    return v_mul(g, dy);
}

static void K(gelu_fwd)(float *out, const float *inp, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        v_store(out + i, gelu16(v_load(inp + i)));
    if (i < n)
        v_store_n(out + i, gelu16(v_load_n(inp + i, (int)(n - i))), (int)(n - i));
}

static void K(gelu_bwd)(float *dinp, const float *inp, const float *dout, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        v_store(dinp + i, gelu_grad16(v_load(inp + i), v_load(dout + i)));
    if (i < n) {
        int r = (int)(n - i);
        v_store_n(dinp + i, gelu_grad16(v_load_n(inp + i, r), v_load_n(dout + i, r)), r);
    }
}

/* Causal softmax of rows t = r0..r1-1 of A (row stride ld): row t = softmax(row[0..t]·scale)
 * and row[t+1..r1) = 0.  The rows go phase by phase (all maxima, then all exponentials and
 * sums, then all normalizations) so that their latency chains overlap; each row's values are
 * those of a one-row softmax. */
static void K(softmax_block)(float *A, int ld, int r0, int r1, float scale)
{
    enum { G = 8 };
    v16 s = v_set1(scale);
    for (int g0 = r0; g0 < r1; g0 += G) {
        int g1 = g0 + G < r1 ? g0 + G : r1;
        float mx[G], sum[G];
        for (int t = g0; t < g1; t++)
            mx[t - g0] = red_max_scaled(A + (size_t)t * ld, t + 1, scale);
        for (int t = g0; t < g1; t++) {
            float *row = A + (size_t)t * ld;
            int n = t + 1, c = 0;
            v16 vm = v_set1(mx[t - g0]), acc = v_zero();
            for (; c + 16 <= n; c += 16) {
                v16 e = v_expf(v_sub(v_mul(v_load(row + c), s), vm));
                acc = v_add(acc, e);
                v_store(row + c, e);
            }
            if (c < n) {
                v16 e = v_keep_n(v_expf(v_sub(v_mul(v_load_n(row + c, n - c), s), vm)), n - c);
                acc = v_add(acc, e);
                v_store_n(row + c, e, n - c);
            }
            sum[t - g0] = v_hsum(acc);
        }
        for (int t = g0; t < g1; t++) {
            float *row = A + (size_t)t * ld;
            int n = t + 1;
            v16 inv = v_set1(1.0f / sum[t - g0]);
            for (int c = 0; c < n; c += 16) {
                int r = n - c < 16 ? n - c : 16;
                v_store_n(row + c, v_mul(v_load_n(row + c, r), inv), r);
            }
            for (int c = n; c < r1; c++)
                row[c] = 0.0f;
        }
    }
}

/* Softmax backward of rows t = r0..r1-1: d[t][j] = a[t][j]·(d[t][j] - Σ_i a[t][i]·d[t][i])·scale
 * over j <= t, and d[t][t+1..r1) = 0; phase by phase like softmax_block. */
static void K(softmax_bwd_block)(float *D, const float *A, int ld, int r0, int r1, float scale)
{
    enum { G = 8 };
    v16 sc = v_set1(scale);
    for (int g0 = r0; g0 < r1; g0 += G) {
        int g1 = g0 + G < r1 ? g0 + G : r1;
        float dot[G];
        v16 acc[G];
        for (int u = 0; u < G; u++)
            acc[u] = v_zero();
        /* the rows' chains side by side, chunk by chunk (each row's own order unchanged):
           one row's chain alone waits on the FMA latency at every chunk */
        for (int c = 0; c < g1; c += 16)
            for (int t = g0 > c ? g0 : c; t < g1; t++) {
                const float *d = D + (size_t)t * ld, *a = A + (size_t)t * ld;
                int r = t + 1 - c;
                if (r >= 16)
                    acc[t - g0] = v_fma(v_load(a + c), v_load(d + c), acc[t - g0]);
                else
                    acc[t - g0] = v_fma(v_load_n(a + c, r), v_load_n(d + c, r), acc[t - g0]);
            }
        for (int t = g0; t < g1; t++)
            dot[t - g0] = v_hsum(acc[t - g0]);
        for (int t = g0; t < g1; t++) {
            float *d = D + (size_t)t * ld;
            const float *a = A + (size_t)t * ld;
            int n = t + 1;
            v16 vs = v_set1(dot[t - g0]);
            for (int c = 0; c < n; c += 16) {
                int r = n - c < 16 ? n - c : 16;
                v16 v = v_mul(v_mul(v_load_n(a + c, r), v_sub(v_load_n(d + c, r), vs)), sc);
                v_store_n(d + c, v, r);
            }
            for (int c = n; c < r1; c++)
                d[c] = 0.0f;
        }
    }
}

static float K(xent_row)(float *p, const float *z, int V, float *mx_out)
{
    float mx = red_max_scaled(z, V, 1.0f);
    v16 vm = v_set1(mx), acc = v_zero();
    for (int c = 0; c < V; c += 16) {
        int r = V - c < 16 ? V - c : 16;
        v16 e = v_keep_n(v_expf(v_sub(v_load_n(z + c, r), vm)), r);
        acc = v_add(acc, e);
        v_store_n(p + c, e, r);
    }
    float s = v_hsum(acc);
    v16 inv = v_set1(1.0f / s);
    for (int c = 0; c < V; c += 16) {
        int r = V - c < 16 ? V - c : 16;
        v_store_n(p + c, v_mul(v_load_n(p + c, r), inv), r);
    }
    *mx_out = mx;
    return s;
}

static void K(add)(float *out, const float *a, const float *b, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        v_store(out + i, v_add(v_load(a + i), v_load(b + i)));
    if (i < n)
        v_store_n(out + i, v_add(v_load_n(a + i, (int)(n - i)), v_load_n(b + i, (int)(n - i))),
                  (int)(n - i));
}

static void K(col_sum_add)(float *dst, const float *src, int N, int C, int c0, int c1)
{
    int c = c0;
    for (; c + 64 <= c1; c += 64) { /* four column blocks per pass over the rows */
        v16 a0 = v_load(dst + c), a1 = v_load(dst + c + 16), a2 = v_load(dst + c + 32),
            a3 = v_load(dst + c + 48);
        for (int i = 0; i < N; i++) {
            const float *r = src + (size_t)i * C + c;
            a0 = v_add(a0, v_load(r));
            a1 = v_add(a1, v_load(r + 16));
            a2 = v_add(a2, v_load(r + 32));
            a3 = v_add(a3, v_load(r + 48));
        }
        v_store(dst + c, a0);
        v_store(dst + c + 16, a1);
        v_store(dst + c + 32, a2);
        v_store(dst + c + 48, a3);
    }
    for (; c < c1; c += 16) {
        int n = c1 - c < 16 ? c1 - c : 16;
        v16 acc = v_load_n(dst + c, n);
        for (int i = 0; i < N; i++)
            acc = v_add(acc, v_load_n(src + (size_t)i * C + c, n));
        v_store_n(dst + c, acc, n);
    }
}

/* per element, in this order (no fused operations):
 *   g' = g·s;  m = b1·m + (1-b1)·g';  v = b2·v + (1-b2)·g'·g';
 *   p = p·decay - lr·(m/bc1) / (sqrt(v/bc2) + eps) */
static inline void adamw16(float *p, const float *g, float *m, float *v, int n, v16 s, v16 b1,
                           v16 c1, v16 b2, v16 c2, v16 bc1, v16 bc2, v16 lr, v16 eps, v16 dec)
{
    v16 gi = v_mul(v_load_n(g, n), s);
    v16 mm = v_add(v_mul(b1, v_load_n(m, n)), v_mul(c1, gi));
    v16 vv = v_add(v_mul(b2, v_load_n(v, n)), v_mul(v_mul(c2, gi), gi));
    v16 upd = v_div(v_mul(lr, v_div(mm, bc1)), v_add(v_sqrt(v_div(vv, bc2)), eps));
    v_store_n(m, mm, n);
    v_store_n(v, vv, n);
    v_store_n(p, v_sub(v_mul(v_load_n(p, n), dec), upd), n);
}

static void K(adamw)(float *p, const float *g, float *m, float *v, size_t n, float grad_scale,
                     float b1, float b2, float bc1, float bc2, float lr, float eps, float decay)
{
    v16 s = v_set1(grad_scale), vb1 = v_set1(b1), c1 = v_set1(1.0f - b1), vb2 = v_set1(b2),
        c2 = v_set1(1.0f - b2), vbc1 = v_set1(bc1), vbc2 = v_set1(bc2), vlr = v_set1(lr),
        veps = v_set1(eps), dec = v_set1(decay);
    for (size_t i = 0; i < n; i += 16)
        adamw16(p + i, g + i, m + i, v + i, n - i < 16 ? (int)(n - i) : 16, s, vb1, c1, vb2, c2,
                vbc1, vbc2, vlr, veps, dec);
}

static void K(vexpf)(float *x, size_t n)
{
    for (size_t i = 0; i < n; i += 16) {
        int r = n - i < 16 ? (int)(n - i) : 16;
        v_store_n(x + i, v_expf(v_load_n(x + i, r)), r);
    }
}

static void K(vtanhf)(float *x, size_t n)
{
    for (size_t i = 0; i < n; i += 16) {
        int r = n - i < 16 ? (int)(n - i) : 16;
        v_store_n(x + i, v_tanhf(v_load_n(x + i, r)), r);
    }
}

#define KERN_TABLE(NAME_STR, WIDE_MR, WIDE_NR, WIDE_FN, NARROW_MR, NARROW_FN, PEAK_FN, T16_FN, \
                   VEXP_FN, VEXP_SHIFTED_FN)                                                   \
    {                                                                                          \
        NAME_STR, {WIDE_MR, WIDE_NR, WIDE_FN}, {NARROW_MR, 16, NARROW_FN}, K(ln_fwd_row),      \
            K(ln_bwd_row), K(ln_bwd_cols), K(rms_fwd_row), K(rms_bwd_row), K(rms_bwd_cols),    \
            K(gelu_fwd), K(gelu_bwd), K(softmax_block), K(softmax_bwd_block), K(add),          \
            K(col_sum_add), K(adamw), PEAK_FN, K(vexpf), K(vtanhf), K(xent_row), T16_FN,       \
            VEXP_FN, VEXP_SHIFTED_FN                                                           \
    }
