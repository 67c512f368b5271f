/* The evaluation instruments of engine/diag.h on cases computed by hand. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../engine/diag.h"
#include "check.h"

static int near(double a, double b, double tol)
{
    return fabs(a - b) <= tol;
}

/* Four predictions: confidence 0.9 right and wrong (bin 13), 0.6 right (bin 9, its lower
 * edge), 0.2 right (bin 3).  ECE = 2/4·|0.5−0.9| + 1/4·|1−0.6| + 1/4·|1−0.2| = 0.5. */
static void ece(void)
{
    const double conf[4] = {0.9, 0.9, 0.6, 0.2}, hit[4] = {1, 0, 1, 1};
    double n[N_BINS] = {0}, cs[N_BINS] = {0}, h[N_BINS] = {0};
    for (int i = 0; i < 4; i++) {
        int k = diag_bin(conf[i]);
        n[k] += 1;
        cs[k] += conf[i];
        h[k] += hit[i];
    }
    CHECK(diag_bin(0.9) == 13 && diag_bin(0.6) == 9 && diag_bin(0.2) == 3, "bins of 0.9 0.6 0.2");
    CHECK(diag_bin(1.0) == N_BINS - 1 && diag_bin(0.0) == 0, "confidence 1 in the last bin");
    CHECK(near(diag_ece(n, cs, h, N_BINS), 0.5, 1e-12), "ECE %.17g, want 0.5",
          diag_ece(n, cs, h, N_BINS));
    double zero[N_BINS] = {0};
    CHECK(isnan(diag_ece(zero, zero, zero, N_BINS)), "ECE of nothing is undefined");
    /* perfectly calibrated: confidence 0.5 with half right */
    double n2[N_BINS] = {0}, c2[N_BINS] = {0}, h2[N_BINS] = {0};
    n2[7] = 4, c2[7] = 2.0, h2[7] = 2;
    CHECK(near(diag_ece(n2, c2, h2, N_BINS), 0.0, 1e-15), "calibrated ECE is 0");
}

/* p = (0.7, 0.2, 0.1): target 0 → 0.3² + 0.2² + 0.1² = 0.14; target 2 → 0.49+0.04+0.81. */
static void brier(void)
{
    const float p[3] = {0.7f, 0.2f, 0.1f};
    CHECK(near(diag_brier(p, 3, 0), 0.14, 1e-7), "Brier target 0: %.9g", diag_brier(p, 3, 0));
    CHECK(near(diag_brier(p, 3, 2), 1.34, 1e-7), "Brier target 2: %.9g", diag_brier(p, 3, 2));
    const float one[3] = {0, 1, 0};
    CHECK(diag_brier(one, 3, 1) == 0.0 && diag_brier(one, 3, 0) == 2.0, "Brier bounds 0 and 2");
}

/* (1,0), (0,1), (5,5): cosines 0, 1/√2, 1/√2, mean √2/3; identical rows give 1. */
static void cosine(void)
{
    const float x[6] = {1, 0, 0, 1, 5, 5};
    CHECK(near(diag_cosine_mean(x, 3, 2), sqrt(2.0) / 3.0, 1e-12), "cosine mean %.17g",
          diag_cosine_mean(x, 3, 2));
    const float same[6] = {1, 2, 2, 4, 3, 6};
    CHECK(near(diag_cosine_mean(same, 3, 2), 1.0, 1e-12), "parallel rows: %.17g",
          diag_cosine_mean(same, 3, 2));
    const float opp[4] = {1, 0, -2, 0};
    CHECK(near(diag_cosine_mean(opp, 2, 2), -1.0, 1e-12), "opposite rows");
}

static void classes(void)
{
    CHECK(diag_class_of_byte('a') == CLS_LETTER && diag_class_of_byte('Z') == CLS_LETTER,
          "letters");
    CHECK(diag_class_of_byte('7') == CLS_DIGIT, "digits");
    CHECK(diag_class_of_byte('\n') == CLS_SPACE && diag_class_of_byte(' ') == CLS_SPACE,
          "whitespace includes newline");
    CHECK(diag_class_of_byte(',') == CLS_PUNCT && diag_class_of_byte('\'') == CLS_PUNCT,
          "punctuation");
}

/* Two classes with logits (0, s) everywhere and a fraction q of targets = 1: the NLL of
 * softmax(z/τ) is minimized where σ(s/τ) = q, τ* = s / ln(q/(1−q)); at τ = 1 the NLL is
 * ln(1+e^s) − q·s. */
static void temperature(void)
{
    enum { N = 10 };
    float z[2 * N];
    int32_t tgt[N];
    const double s = 2.0, q = 0.8;
    for (int i = 0; i < N; i++) {
        z[2 * i] = 0.0f;
        z[2 * i + 1] = (float)s;
        tgt[i] = i < 8;
    }
    diag_result r;
    memset(&r, 0, sizeof r);
    diag_temperature(z, tgt, N, 2, &r);
    double want = s / log(q / (1 - q));
    CHECK(near(r.temp_opt, want, 1e-8), "optimal temperature %.12g, want %.12g", r.temp_opt,
          want);
    CHECK(near(r.nll_temp[2], log(1 + exp(s)) - q * s, 1e-12), "NLL at τ = 1: %.12g",
          r.nll_temp[2]);
    int below = 1;
    for (int k = 0; k < N_TEMPS; k++)
        below &= r.nll_temp_opt <= r.nll_temp[k] + 1e-15;
    CHECK(below, "the optimum is no worse than any fixed temperature");
}

int main(void)
{
    ece();
    brier();
    cosine();
    classes();
    temperature();
    return check_done("test_diag");
}
