/* The engine's own exp, log, cos, powi (double) and expf, tanhf (float): accuracy
 * against the C library over the ranges the engine uses (in ulps of the exact result,
 * estimated in long double), and every CPU path's vector versions equal to the scalar
 * definitions bit for bit (engine/simd.h).  Prints the maximum ulp error of each. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "../../engine/isa.h"
#include "../../engine/kern_ops.h"
#include "../../engine/pcg.h"
#include "../../engine/rmath.h"

static double ulps_d(double got, long double want)
{
    if (want == 0.0L)
        return got == 0.0 ? 0.0 : INFINITY;
    int e;
    frexpl(want, &e);
    long double ulp = ldexpl(1.0L, (e - 1) - 52 < -1074 ? -1074 : (e - 1) - 52);
    return (double)(fabsl((long double)got - want) / ulp);
}

static double ulps_f(float got, double want)
{
    if (want == 0.0)
        return got == 0.0f ? 0.0 : INFINITY;
    int e;
    frexp(want, &e);
    double ulp = ldexp(1.0, (e - 1) - 23 < -149 ? -149 : (e - 1) - 23);
    return fabs((double)got - want) / ulp;
}

int main(void)
{
    pcg32 r;
    pcg32_stream(&r, 11, 98, 0);
    const int n = 200000;
    double worst;

    worst = 0;
    for (int i = 0; i < n; i++) {
        double x = -708.0 + 1416.0 * pcg32_uniform_double(&r);
        if (i < n / 2)
            x = -20.0 + 40.0 * pcg32_uniform_double(&r);
        double u = ulps_d(rm_exp(x), expl((long double)x));
        worst = u > worst ? u : worst;
    }
    printf("test_rmath: rm_exp  max error %.3f ulp over [-708, 708]\n", worst);
    CHECK(worst <= 2.0, "rm_exp max error %.3f ulp", worst);
    CHECK(rm_exp(0.0) == 1.0 && rm_exp(-1000.0) == 0.0 && isinf(rm_exp(1000.0)) &&
              isnan(rm_exp(NAN)),
          "rm_exp special values");
    double sub = rm_exp(-740.0);
    CHECK(sub > 0 && ulps_d(sub, expl(-740.0L)) <= 1.0, "rm_exp subnormal result");

    worst = 0;
    for (int i = 0; i < n; i++) {
        double x = i < n / 2 ? 0.5 + 1.5 * pcg32_uniform_double(&r)
                             : exp(-700.0 + 1400.0 * pcg32_uniform_double(&r));
        double u = ulps_d(rm_log(x), logl((long double)x));
        worst = u > worst ? u : worst;
    }
    printf("test_rmath: rm_log  max error %.3f ulp over (1e-304, 1e304)\n", worst);
    CHECK(worst <= 2.0, "rm_log max error %.3f ulp", worst);
    CHECK(rm_log(1.0) == 0.0 && isinf(rm_log(0.0)) && isnan(rm_log(-1.0)) &&
              fabs(rm_log(4.9e-324) - log(4.9e-324)) < 1e-12,
          "rm_log special values and subnormals");

    worst = 0;
    double worst_abs = 0;
    for (int i = 0; i < n; i++) {
        double x = i < n / 2 ? M_PI * pcg32_uniform_double(&r) : 100.0 * pcg32_uniform_double(&r);
        long double want = cosl((long double)x);
        double got = rm_cos(x);
        if (fabsl(want) > 1e-3L) {
            double u = ulps_d(got, want);
            worst = u > worst ? u : worst;
        }
        double a = (double)fabsl((long double)got - want);
        worst_abs = a > worst_abs ? a : worst_abs;
    }
    printf("test_rmath: rm_cos  max error %.3f ulp (|cos| > 1e-3), %.3g absolute, over [0, 100]\n",
           worst, worst_abs);
    CHECK(worst <= 2.0 && worst_abs < 2.3e-16, "rm_cos error %.3f ulp, %g", worst, worst_abs);

    worst = 0;
    double worst_bc = 0;
    const double bases[] = {0.9, 0.95, 0.999};
    for (int b = 0; b < 3; b++)
        for (long t = 1; t <= 5000; t += 3) {
            long double want = powl((long double)bases[b], (long double)t);
            if (want < 1e-290L)
                break;
            double u = ulps_d(rm_powi(bases[b], t), want) / (double)t;
            worst = u > worst ? u : worst;
            double bc = ulps_d(1.0 - rm_powi(bases[b], t), 1.0L - want);
            worst_bc = bc > worst_bc ? bc : worst_bc;
        }
    printf("test_rmath: rm_powi max error %.3f·t ulp; 1 - beta^t (Adam's bias correction, "
           "then rounded to float) within %.1f double ulp\n",
           worst, worst_bc);
    CHECK(worst <= 1.0 && worst_bc <= 1024.0 /* 2^-42 relative: far below a float's 2^-24 */ && rm_powi(2.0, 10) == 1024.0 && rm_powi(3.0, 0) == 1.0,
          "rm_powi error %.3f·t ulp, bias correction %.3f ulp", worst, worst_bc);

    /* float lane functions, exhaustive over a grid of every 97th float in range */
    double wexp = 0, wtanh = 0;
    long count = 0;
    for (int sign = 0; sign < 2; sign++)
        for (uint32_t b = 0; b < 0x7f800000u; b += 97) {
            uint32_t bits = b | (sign ? 0x80000000u : 0);
            float x;
            memcpy(&x, &bits, sizeof x);
            if (x >= -87.0f && x <= 88.0f) {
                double u = ulps_f(rm_expf(x), exp((double)x));
                wexp = u > wexp ? u : wexp;
            }
            double u = ulps_f(rm_tanhf(x), tanh((double)x));
            wtanh = u > wtanh ? u : wtanh;
            count++;
        }
    printf("test_rmath: rm_expf max error %.3f ulp over [-87, 88]; rm_tanhf %.3f ulp over all "
           "floats (%ld samples)\n",
           wexp, wtanh, count);
    CHECK(wexp <= 2.0, "rm_expf max error %.3f ulp", wexp);
    CHECK(wtanh <= 3.0, "rm_tanhf max error %.3f ulp", wtanh);
    CHECK(isnan(rm_expf(NAN)) && isnan(rm_tanhf(NAN)) && rm_tanhf(50.0f) == 1.0f &&
              rm_tanhf(-50.0f) == -1.0f,
          "float special values");

    /* every path's vectors reproduce the scalar definitions; the second half of the
     * inputs is small (GELU's arguments at the default learning rate), so that whole
     * vectors take tanh's polynomial alone, some with one lane at or just below the
     * threshold, above it, or a signed zero */
    const size_t m = 100003, half = m / 2;
    float *x = malloc(m * sizeof(float)), *e = malloc(m * sizeof(float)),
          *t = malloc(m * sizeof(float)), *y = malloc(m * sizeof(float));
    const float odd[] = {RM_TANHF_SMALL, -RM_TANHF_SMALL, nextafterf(RM_TANHF_SMALL, 0.0f),
                         -nextafterf(RM_TANHF_SMALL, 0.0f), 0.7f, -1.5f, 3.0f, -0.0f, 0.0f};
    for (size_t i = 0; i < m; i++) {
        if (i < half)
            x[i] = (float)(pcg32_normal(&r) * (i % 3 == 0 ? 30.0 : 2.0));
        else if (i % 41 == 0)
            x[i] = odd[(i / 41) % (sizeof odd / sizeof odd[0])];
        else
            x[i] = (float)(pcg32_normal(&r) * 0.12);
        e[i] = rm_expf(x[i]);
        t[i] = rm_tanhf(x[i]);
    }
    char paths[64];
    snprintf(paths, sizeof paths, "%s", isa_available());
    for (char *p = strtok(paths, " "); p; p = strtok(NULL, " ")) {
        char err[256];
        CHECK(isa_select(p, err, sizeof err) == 0, "%s", err);
        memcpy(y, x, m * sizeof(float));
        kern->vexpf(y, m);
        CHECK(memcmp(y, e, m * sizeof(float)) == 0, "%s: vector expf differs from rm_expf", p);
        memcpy(y, x, m * sizeof(float));
        kern->vtanhf(y, m);
        CHECK(memcmp(y, t, m * sizeof(float)) == 0, "%s: vector tanhf differs from rm_tanhf", p);
    }
    free(x);
    free(e);
    free(t);
    free(y);
    return check_done("test_rmath");
}
