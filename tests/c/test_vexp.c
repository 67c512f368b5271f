/* kernels_exp (the vector rm_exp on doubles, engine/kernels.h) on every CPU path this
 * machine runs, against the scalar rm_exp bit for bit: millions of PCG32-drawn inputs
 * over the whole range (uniform over [-750, 720], every bit pattern, every binade,
 * the points where n = round(x·log2 e) changes, the ends of the vector range and the
 * n = ±1022/1023 region), the special values, every length and offset of a short array
 * (the vector tails), each with subnormals flushed (as the engine evaluates) and not;
 * kernels_exp_shifted (the scan's rm_exp(beta (z - shift)) from floats) likewise; and
 * the temperature scan (diag_temperature, which takes its exponentials from kernels_exp)
 * equal to its scalar definition, on every path and at 1 and 2 threads. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include <omp.h>

#include "../../engine/diag.h"
#include "../../engine/isa.h"
#include "../../engine/kernels.h"
#include "../../engine/pcg.h"
#include "../../engine/rmath.h"

enum { M = 1 << 21 }; /* inputs per drawn set */

static uint64_t bits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static double from_bits(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* x (finite, non-zero) moved by k ulps away from zero (toward it when k < 0) */
static double ulp_step(double x, int k)
{
    return from_bits(bits(x) + (uint64_t)(int64_t)k);
}

static double draw(pcg32 *r, int set)
{
    double u = pcg32_uniform_double(r);
    switch (set) {
    case 0: /* uniform over the whole finite range that matters */
        return -750.0 + 1470.0 * u;
    case 1: /* every bit pattern: NaNs, infinities, subnormals, huge and tiny */
        return from_bits((uint64_t)pcg32_next(r) << 32 | pcg32_next(r));
    case 2: { /* every binade from subnormal to 2^10, either sign */
        int e = (int)pcg32_bounded(r, 1085) - 1075;
        double x = ldexp(1.0 + u, e);
        return pcg32_next(r) & 1 ? -x : x;
    }
    case 3: { /* a few ulps around (k + 1/2)/log2 e, where rm_exp's n changes */
        int k = (int)pcg32_bounded(r, 2112) - 1080;
        return ulp_step((k + 0.5) / RM_EXP_LOG2E, (int)pcg32_bounded(r, 129) - 64);
    }
    default: { /* the ends of the vector range, the scalar cut-offs, n = ±1022, ±1023 */
        static const double at[] = {RM_EXP_VEC_LO, RM_EXP_VEC_HI, -745.2, 709.782712893384,
                                    -1022.5 / RM_EXP_LOG2E, -1021.5 / RM_EXP_LOG2E,
                                    1022.5 / RM_EXP_LOG2E, 1023.5 / RM_EXP_LOG2E, -709.0,
                                    -1022.0 / RM_EXP_LOG2E, 1023.0 / RM_EXP_LOG2E};
        double c = at[pcg32_bounded(r, sizeof at / sizeof at[0])];
        return pcg32_next(r) & 1 ? ulp_step(c, (int)pcg32_bounded(r, 2001) - 1000)
                                 : c + (u - 0.5) * 4.0;
    }
    }
}

static const char *const set_names[] = {"uniform [-750, 720]", "all bit patterns",
                                        "every binade", "n's rounding points",
                                        "range ends and n = +-1022/1023"};

/* kernels_exp(x) against rm_exp element by element; 0 or the number of differences, the
 * first one printed */
static long compare(const double *x, size_t n, double *y, double *want, const char *what)
{
    memcpy(y, x, n * sizeof *y);
    kernels_exp(y, n);
    for (size_t i = 0; i < n; i++)
        want[i] = rm_exp(x[i]);
    long bad = 0;
    for (size_t i = 0; i < n; i++)
        if (bits(y[i]) != bits(want[i]) && bad++ == 0)
            fprintf(stderr, "%s (%s): x = %a: vector %a, rm_exp %a\n", what, isa_name(), x[i],
                    y[i], want[i]);
    return bad;
}

/* The temperature scan's definition, one position and one exponential at a time (the
 * engine's code before kernels_exp): NLL at each fixed temperature, then Newton on β. */
static void nll_ref(const float *z, int V, int target, double beta, double *f, double *g,
                    double *h)
{
    double mx = z[0];
    for (int v = 1; v < V; v++)
        if (z[v] > mx)
            mx = z[v];
    double s = 0, s1 = 0, s2 = 0;
    for (int v = 0; v < V; v++) {
        double e = rm_exp(beta * (z[v] - mx));
        s += e;
        s1 += e * z[v];
        s2 += e * (double)z[v] * z[v];
    }
    double mean = s1 / s, var = s2 / s - mean * mean;
    *f = rm_log(s) + beta * mx - beta * z[target];
    *g = mean - z[target];
    *h = var > 0 ? var : 0;
}

static void all_ref(const float *z, const int32_t *t, size_t n, int V, double beta, double *F,
                    double *G, double *H)
{
    double f = 0, g = 0, h = 0;
    for (size_t i = 0; i < n; i++) {
        double a, b, c;
        nll_ref(z + i * V, V, t[i], beta, &a, &b, &c);
        f += a;
        g += b;
        h += c;
    }
    *F = f / (double)n;
    *G = g / (double)n;
    *H = h / (double)n;
}

static void temperature_ref(const float *z, const int32_t *t, size_t n, int V, diag_result *r)
{
    double f, g, h;
    for (int k = 0; k < N_TEMPS; k++) {
        all_ref(z, t, n, V, 1.0 / diag_temps[k], &f, &g, &h);
        r->nll_temp[k] = f;
    }
    double beta = 1.0;
    all_ref(z, t, n, V, beta, &f, &g, &h);
    for (int it = 0; it < 50; it++) {
        double step = h > 0 ? g / h : g;
        if (fabs(step) <= 1e-7 * beta)
            break;
        double nb = beta - step, nf = f, ng = g, nh = h;
        int better = 0;
        for (int half = 0; half < 20 && !better; half++) {
            if (nb <= 1e-3 * beta)
                nb = 0.5 * beta;
            all_ref(z, t, n, V, nb, &nf, &ng, &nh);
            better = nf < f;
            if (!better)
                nb = beta - (step *= 0.5);
        }
        if (!better)
            break;
        beta = nb;
        f = nf;
        g = ng;
        h = nh;
    }
    r->temp_opt = 1.0 / beta;
    r->nll_temp_opt = f;
}

/* diag_temperature against temperature_ref on n positions of V logits (sharp enough that
 * the optimal temperature is finite), bit for bit in every output; 1 when equal */
static int temperature_equal(int V, size_t n, double scale)
{
    float *z = malloc(n * (size_t)V * sizeof *z);
    int32_t *t = malloc(n * sizeof *t);
    if (!z || !t) {
        free(z);
        free(t);
        return 0;
    }
    pcg32 r;
    pcg32_stream(&r, 51, PCG_PURPOSE_STATS, 100 + (uint64_t)V);
    for (size_t i = 0; i < n; i++) {
        t[i] = (int32_t)pcg32_bounded(&r, (uint32_t)V);
        for (int v = 0; v < V; v++)
            z[i * V + v] = (float)(pcg32_normal(&r) * scale + (v == t[i] ? 2.0 * scale : 0.0));
    }
    diag_result want, got;
    temperature_ref(z, t, n, V, &want);
    int ok = diag_temperature(z, t, n, V, &got) == 0;
    ok = ok && bits(got.temp_opt) == bits(want.temp_opt) &&
         bits(got.nll_temp_opt) == bits(want.nll_temp_opt);
    for (int k = 0; k < N_TEMPS; k++)
        ok = ok && bits(got.nll_temp[k]) == bits(want.nll_temp[k]);
    if (!ok)
        fprintf(stderr, "V %d, n %zu (%s, %d threads): temp_opt %a nll %a, definition %a %a\n",
                V, n, isa_name(), omp_get_max_threads(), got.temp_opt, got.nll_temp_opt,
                want.temp_opt, want.nll_temp_opt);
    free(z);
    free(t);
    return ok;
}

int main(void)
{
    double *x = malloc(M * sizeof *x), *y = malloc(M * sizeof *y), *want = malloc(M * sizeof *want);
    if (!x || !y || !want) {
        fprintf(stderr, "test_vexp: out of memory\n");
        return 1;
    }
    static const double special[] = {
        0.0, -0.0, DBL_MIN, -DBL_MIN, DBL_TRUE_MIN, -DBL_TRUE_MIN, 1e-300, -1e-300, 1e-17,
        -1e-17, 1.0, -1.0, 0.5, 0.34657359027997264, -0.34657359027997264, DBL_MAX, -DBL_MAX,
        INFINITY, -INFINITY, NAN, -NAN, -745.2, -745.1, -745.3, -744.44, -708.0, -708.0000001,
        -708.5, -709.0, -709.09, -709.1, 709.0, 709.0000001, 709.5, 709.78, 709.782712893384,
        709.7827128933841, 710.0, -1000.0, 1000.0, -1022.0 / RM_EXP_LOG2E,
        -1022.5 / RM_EXP_LOG2E, 1022.5 / RM_EXP_LOG2E, 1023.0 / RM_EXP_LOG2E,
        1023.5 / RM_EXP_LOG2E, 1024.0 / RM_EXP_LOG2E, -1074.0 / RM_EXP_LOG2E,
        -1075.0 / RM_EXP_LOG2E};
    const size_t nspecial = sizeof special / sizeof special[0];
    char paths[64];
    snprintf(paths, sizeof paths, "%s", isa_available());
    long total = 0;
    for (char *p = strtok(paths, " "); p; p = strtok(NULL, " ")) {
        char err[256];
        CHECK(isa_select(p, err, sizeof err) == 0, "%s", err);
        for (int flush = 0; flush < 2; flush++) {
            unsigned long saved = flush ? isa_flush_begin() : 0;
            const char *mode = flush ? "flushed" : "not flushed";
            char what[160];
            snprintf(what, sizeof what, "special values, %s", mode);
            long bad = compare(special, nspecial, y, want, what);
            CHECK(bad == 0, "%s %s: %ld of %zu differ", p, what, bad, nspecial);
            for (int set = 0; set < 5; set++) {
                pcg32 r;
                pcg32_stream(&r, 51, PCG_PURPOSE_STATS, (uint64_t)set);
                for (size_t i = 0; i < M; i++)
                    x[i] = draw(&r, set);
                snprintf(what, sizeof what, "%s, %s", set_names[set], mode);
                bad = compare(x, M, y, want, what);
                CHECK(bad == 0, "%s %s: %ld of %d differ", p, what, bad, M);
                total += M;
            }
            /* every length 0..19 at every offset 0..7, the elements around untouched */
            for (size_t i = 0; i < 64; i++)
                x[i] = special[i % nspecial] * (i & 1 ? 0.37 : 1.0) - (double)i;
            int tails_ok = 1;
            for (size_t off = 0; off < 8; off++)
                for (size_t n = 0; n < 20; n++) {
                    for (size_t i = 0; i < 40; i++)
                        y[i] = x[i];
                    kernels_exp(y + off, n);
                    for (size_t i = 0; i < 40; i++) {
                        double w = i >= off && i < off + n ? rm_exp(x[i]) : x[i];
                        if (bits(y[i]) != bits(w)) {
                            if (tails_ok)
                                fprintf(stderr, "%s: offset %zu, length %zu: element %zu is %a, "
                                        "not %a\n", p, off, n, i, y[i], w);
                            tails_ok = 0;
                        }
                    }
                }
            CHECK(tails_ok, "%s %s: every length 0..19 at every offset 0..7 (the tails)", p, mode);
            /* kernels_exp_shifted: rm_exp(beta * ((double)z - shift)) on floats drawn over
               the scan's range and every float bit pattern, at betas and shifts from tiny to
               huge, each array at offsets 0..3 and odd lengths (its tails) */
            pcg32 r;
            pcg32_stream(&r, 51, PCG_PURPOSE_STATS, 10);
            float *zf = (float *)want; /* M floats fit in half of want's doubles */
            double *xs = want + M / 2;
            static const double betas[] = {1.0, 0.5, 2.0, 4.3, 1e-3, 1e3, 0.0, -1.0};
            long bad_shifted = 0;
            for (size_t q = 0; q < sizeof betas / sizeof betas[0]; q++) {
                size_t n = M / 16 + 2 * q + 1;
                for (size_t i = 0; i < n; i++) {
                    uint32_t u = pcg32_next(&r);
                    float f;
                    memcpy(&f, &u, sizeof f);
                    zf[i] = i % 8 == 7 ? f : (float)(pcg32_normal(&r) * (q % 2 ? 3.0 : 40.0));
                }
                double shift = q % 3 == 0 ? 0.0 : (double)zf[q] + 0.25 * (double)q;
                size_t off = q % 4;
                kernels_exp_shifted(y, zf + off, n - off, betas[q], shift);
                for (size_t i = 0; i < n - off; i++)
                    xs[i] = rm_exp(betas[q] * ((double)zf[off + i] - shift));
                for (size_t i = 0; i < n - off; i++)
                    if (bits(y[i]) != bits(xs[i]) && bad_shifted++ == 0)
                        fprintf(stderr, "%s: z = %a, beta %g, shift %a: vector %a, rm_exp %a\n",
                                p, (double)zf[off + i], betas[q], shift, y[i], xs[i]);
                total += (long)(n - off);
            }
            CHECK(bad_shifted == 0, "%s %s: kernels_exp_shifted differs from rm_exp in %ld", p,
                  mode, bad_shifted);
            if (flush)
                isa_flush_end(saved);
        }
    }
    /* the scan: vocabularies below, at and past one exponential batch, position counts
       that are not a multiple of the rows evaluated side by side */
    snprintf(paths, sizeof paths, "%s", isa_available());
    for (char *p = strtok(paths, " "); p; p = strtok(NULL, " ")) {
        char err[256];
        CHECK(isa_select(p, err, sizeof err) == 0, "%s", err);
        unsigned long saved = isa_flush_begin();
        for (int th = 1; th <= 2; th++) {
            omp_set_num_threads(th);
            static const int vs[] = {2, 65, 64, 130, 256};
            for (size_t q = 0; q < sizeof vs / sizeof vs[0]; q++)
                CHECK(temperature_equal(vs[q], 1001 + q, 1.0 + 0.5 * (double)q),
                      "%s, %d threads: diag_temperature at V = %d equals its definition", p, th,
                      vs[q]);
        }
        isa_flush_end(saved);
    }
    printf("test_vexp: %ld inputs on the paths %s\n", total, isa_available());
    free(x);
    free(y);
    free(want);
    return check_done("test_vexp");
}
