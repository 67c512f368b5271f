/* The engine's own elementary functions.
 *
 * Results of the engine must not depend on the C library: glibc, musl and Apple's libm
 * round exp, log, cos, pow and tanh differently in the last bit, and one bit in an
 * initial weight or a learning rate changes every later byte of a run.  These functions
 * use only +, -, *, /, sqrt and fma (all exactly specified by IEEE 754) and integer bit
 * operations, so every conforming compiler and CPU computes the same bits.  Build the
 * engine with -ffp-contract=off (the Makefile does): a compiler that fuses a*b+c on its
 * own would change them.
 *
 * The float lane functions rm_expf and rm_tanhf are the scalar definitions of what each
 * vector path computes per lane (engine/simd.h repeats the same operations in the same
 * order); tests/c/test_rmath.c checks their accuracy against libm and that every vector
 * path reproduces them bit for bit.  rm_exp is likewise the definition of the double
 * lanes of kernels_exp (engine/kernels.h, the temperature scan's exponentials), which
 * tests/c/test_vexp.c compares with it bit for bit.
 *
 * Accuracy (measured by tests/c/test_rmath.c against glibc in higher precision over the
 * ranges the engine uses; the numbers are printed by the test):
 *   rm_exp   double, |x| <= 708           about 1 ulp
 *   rm_log   double, x in (0, inf)        about 1 ulp
 *   rm_cos   double, |x| <= 1e6           about 1 ulp absolute near zeros of cos
 *   rm_powi  double, x^n by binary powering, n >= 0 (relative error grows like n ulp:
 *            used for Adam's bias corrections 1 - beta^t, where that is far below 1 ulp
 *            of the result)
 *   rm_expf  float, x in [-87, 88]        a few ulp
 *   rm_tanhf float, all x                 a few ulp
 */
#ifndef REPRO_RMATH_H
#define REPRO_RMATH_H

double rm_exp(double x);
double rm_log(double x);
double rm_cos(double x);
double rm_powi(double x, long n);

float rm_expf(float x);
float rm_tanhf(float x);

/* Constants shared by the scalar float functions and the vector paths. */
#define RM_EXPF_HI 88.0f
#define RM_EXPF_LO (-87.0f)
#define RM_LOG2EF 1.44269504088896341f
#define RM_LN2F_HI 0.693359375f
#define RM_LN2F_LO (-2.12194440e-4f)
#define RM_ROUNDF 12582912.0f /* 1.5 * 2^23: adding it rounds to an integer */
#define RM_TANHF_SMALL 0.55f  /* below it tanh uses its odd Taylor polynomial */

/* Constants of rm_exp, shared with the vector paths' kernels_exp (engine/kernels.h), which
 * repeat rm_exp's operations lane by lane.  A lane whose x lies in [RM_EXP_VEC_LO,
 * RM_EXP_VEC_HI] has 2^n normal (-1022 <= n <= 1023), so the scaling is one product; the
 * vector paths hand every other lane (NaN, overflow, subnormal results) to rm_exp. */
#define RM_EXP_LOG2E 1.4426950408889634074
#define RM_EXP_LN2_HI 6.93147180369123816490e-01 /* 0x3fe62e42fee00000: n*LN2_HI exact, |n| < 2^11 */
#define RM_EXP_LN2_LO 1.90821492927058770002e-10
#define RM_EXP_ROUND 6755399441055744.0 /* 1.5 * 2^52: adding it rounds to an integer */
#define RM_EXP_VEC_LO (-708.0)
#define RM_EXP_VEC_HI 709.0
/* e^r, |r| <= 0.35: Taylor to degree 13, coefficient of r^k = 1/k! */
#define RM_EXP_C13 (1.0 / 6227020800.0)
#define RM_EXP_C12 (1.0 / 479001600.0)
#define RM_EXP_C11 (1.0 / 39916800.0)
#define RM_EXP_C10 (1.0 / 3628800.0)
#define RM_EXP_C9 (1.0 / 362880.0)
#define RM_EXP_C8 (1.0 / 40320.0)
#define RM_EXP_C7 (1.0 / 5040.0)
#define RM_EXP_C6 (1.0 / 720.0)
#define RM_EXP_C5 (1.0 / 120.0)
#define RM_EXP_C4 (1.0 / 24.0)
#define RM_EXP_C3 (1.0 / 6.0)
#define RM_EXP_C2 0.5

#endif
