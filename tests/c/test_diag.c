/* The evaluation instruments of engine/diag.h on cases computed by hand. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../engine/diag.h"
#include "check.h"
#include "json_min.h"

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
    double sc[2]; /* scratch: C doubles */
    const float x[6] = {1, 0, 0, 1, 5, 5};
    CHECK(near(diag_cosine_mean(x, 3, 2, sc), sqrt(2.0) / 3.0, 1e-12), "cosine mean %.17g",
          diag_cosine_mean(x, 3, 2, sc));
    const float same[6] = {1, 2, 2, 4, 3, 6};
    CHECK(near(diag_cosine_mean(same, 3, 2, sc), 1.0, 1e-12), "parallel rows: %.17g",
          diag_cosine_mean(same, 3, 2, sc));
    const float opp[4] = {1, 0, -2, 0};
    CHECK(near(diag_cosine_mean(opp, 2, 2, sc), -1.0, 1e-12), "opposite rows");
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
    CHECK(diag_temperature(z, tgt, N, 2, &r) == 0, "temperature scan: status 0");
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

/* Floyd's sampling: k distinct sorted indices in range, deterministic per (seed, index),
 * all of them when k = n; over many draws every index is about equally likely. */
static void sampling(void)
{
    size_t a[50], b[50];
    int ok = 1;
    for (int rep = 0; rep < 200; rep++) {
        diag_sample_indices(11, (uint64_t)rep, 120, 50, a);
        for (int i = 0; i < 50; i++)
            ok &= a[i] < 120 && (i == 0 || a[i] > a[i - 1]);
    }
    CHECK(ok, "50 distinct sorted indices in [0, 120)");
    diag_sample_indices(11, 3, 120, 50, a);
    diag_sample_indices(11, 3, 120, 50, b);
    int same = memcmp(a, b, sizeof a) == 0;
    diag_sample_indices(11, 4, 120, 50, b);
    CHECK(same && memcmp(a, b, sizeof a) != 0, "same (seed, index) same subset; others differ");
    diag_sample_indices(2, 0, 7, 7, a);
    int all = 1;
    for (int i = 0; i < 7; i++)
        all &= a[i] == (size_t)i;
    CHECK(all, "k = n takes every index");
    /* 4000 subsets of 5 from 10: each index is chosen 2000 times in expectation, with sd
     * sqrt(4000 · 0.5 · 0.5) ≈ 32; allow 5 sd */
    int count[10] = {0};
    for (int rep = 0; rep < 4000; rep++) {
        diag_sample_indices(9, (uint64_t)rep, 10, 5, a);
        for (int i = 0; i < 5; i++)
            count[a[i]]++;
    }
    int uniform = 1;
    for (int i = 0; i < 10; i++)
        uniform &= abs(count[i] - 2000) < 160;
    CHECK(uniform, "each index about equally likely (%d .. %d)", count[0], count[9]);
}

/* Subset accuracy: all hits 1, none 0; a pattern where hits are exactly the first half
 * of the positions, checked against the subsets drawn by diag_sample_indices. */
static void subset_accuracy(void)
{
    enum { N = 1000 };
    static uint8_t hit[N];
    double acc[DIAG_SUBSETS], mean, sd;
    memset(hit, 1, N);
    diag_subset_acc(hit, N, 4, acc, &mean, &sd);
    CHECK(mean == 1 && sd == 0, "all hits: %g %g", mean, sd);
    memset(hit, 0, N);
    diag_subset_acc(hit, N, 4, acc, &mean, &sd);
    CHECK(mean == 0 && sd == 0, "no hits: %g %g", mean, sd);
    for (int i = 0; i < N; i++)
        hit[i] = i < N / 2;
    diag_subset_acc(hit, N, 4, acc, &mean, &sd);
    double s = 0, ss = 0;
    int match = 1;
    for (int k = 0; k < DIAG_SUBSETS; k++) {
        size_t idx[DIAG_SUBSET_SIZE];
        diag_sample_indices(4, (uint64_t)k, N, DIAG_SUBSET_SIZE, idx);
        int h = 0;
        for (int j = 0; j < DIAG_SUBSET_SIZE; j++)
            h += idx[j] < N / 2;
        match &= acc[k] == (double)h / DIAG_SUBSET_SIZE;
        s += acc[k];
    }
    for (int k = 0; k < DIAG_SUBSETS; k++)
        ss += (acc[k] - s / DIAG_SUBSETS) * (acc[k] - s / DIAG_SUBSETS);
    CHECK(match && near(mean, s / DIAG_SUBSETS, 1e-15) &&
              near(sd, sqrt(ss / (DIAG_SUBSETS - 1)), 1e-15) && sd > 0,
          "half hits: mean %g sd %g", mean, sd);
    printf("subset accuracy at p = 0.5: mean %.3f, sd %.3f (binomial sd sqrt(0.25/50) = %.3f)\n",
           mean, sd, sqrt(0.25 / 50));
}

/* The training-curve instruments on a hand-made log of 6 steps (columns: loss, grad
 * norm, max |logit|):
 *   loss  4.0 3.0 3.5 2.0 2.6 NaN  -> jumps above the running minimum: 0.5 at step 2,
 *                                     0.6 at step 4 (NaN skipped): max 0.6 at step 4
 *   gnorm 1.0 5.0 2.0 inf 3.0 NaN  -> max finite 5.0 at step 1
 *   logit 0.5 1.0 3.0 2.0 NaN 1.0  -> max 3.0, growth 3.0 / 0.5 = 6 */
static void training_curve(void)
{
    const double x[6][3] = {{4.0, 1.0, 0.5}, {3.0, 5.0, 1.0}, {3.5, 2.0, 3.0},
                            {2.0, INFINITY, 2.0}, {2.6, 3.0, NAN}, {NAN, NAN, 1.0}};
    diag_curve r;
    diag_training_curve(&x[0][0], 3, 6, 0, 1, 2, &r);
    CHECK(r.init_loss == 4.0 && r.max_grad_norm == 5.0 && r.max_grad_norm_step == 1,
          "init %g, max grad %g at %ld", r.init_loss, r.max_grad_norm, r.max_grad_norm_step);
    CHECK(near(r.max_loss_jump, 0.6, 1e-12) && r.max_loss_jump_step == 4,
          "max loss jump %.17g at %ld", r.max_loss_jump, r.max_loss_jump_step);
    CHECK(r.max_abs_logit == 3.0 && r.logit_growth == 6.0, "logit %g growth %g",
          r.max_abs_logit, r.logit_growth);
    const double down[3][3] = {{3, 1, 1}, {2, 1, 1}, {1, 1, 1}};
    diag_training_curve(&down[0][0], 3, 3, 0, 1, 2, &r);
    CHECK(r.max_loss_jump == 0 && r.max_loss_jump_step == -1 && r.logit_growth == 1,
          "a falling loss has no jump");
}

/* The divergence rule: non-finite at the last step; DIVERGE_STEPS consecutive losses
 * above ℓ_0 + DIVERGE_MARGIN, onset at the first; one fewer, or one at the bound, is not. */
static void divergence_rule(void)
{
    enum { N = 30 };
    double x[N][2];
    for (int t = 0; t < N; t++) {
        x[t][0] = 4.0 - 0.01 * t;
        x[t][1] = 1.0;
    }
    CHECK(diag_divergence(&x[0][0], 2, N, 0, 1) == -1, "a falling loss does not diverge");
    x[N - 1][1] = NAN;
    CHECK(diag_divergence(&x[0][0], 2, N, 0, 1) == N - 1, "NaN gradient norm at the last step");
    x[N - 1][1] = 1.0;
    x[N - 1][0] = INFINITY;
    CHECK(diag_divergence(&x[0][0], 2, N, 0, 1) == N - 1, "infinite loss at the last step");
    for (int t = 5; t < N; t++)
        x[t][0] = 4.0 + DIVERGE_MARGIN + 0.5;
    CHECK(diag_divergence(&x[0][0], 2, 5 + DIVERGE_STEPS - 1, 0, 1) == -1,
          "DIVERGE_STEPS - 1 steps above the bound are not divergence");
    CHECK(diag_divergence(&x[0][0], 2, 5 + DIVERGE_STEPS, 0, 1) == 5,
          "DIVERGE_STEPS steps above the bound: onset at the first");
    x[9][0] = 4.0 + DIVERGE_MARGIN; /* at the bound, not above it */
    CHECK(diag_divergence(&x[0][0], 2, 5 + DIVERGE_STEPS, 0, 1) == -1 &&
              diag_divergence(&x[0][0], 2, 10 + DIVERGE_STEPS, 0, 1) == 10,
          "a step at the bound breaks the streak");
}

/* Balanced accuracy against scikit-learn's balanced_accuracy_score on the committed cases
 * of tests/fixtures/balanced_acc.json (tests/reference/balanced_ref.py): skewed
 * character-like frequencies, predictions of symbols that never occur as targets, one
 * target symbol, perfect and constant predictions.  Then the subset form: subsets at
 * least as large as the split all give the whole split's value, and the mean and sd are
 * those of the 20 values. */
static void balanced_accuracy(void)
{
    jv *doc = jv_load("tests/fixtures/balanced_acc.json");
    CHECK(doc != NULL, "tests/fixtures/balanced_acc.json: readable");
    if (!doc)
        return;
    const jv *cases = jv_get(doc, "cases", NULL);
    int n_cases = 0;
    for (size_t k = 0; cases && k < cases->n; k++) {
        const jv *c = jv_at(cases, k), *yt = jv_get(c, "y_true", NULL),
                 *yp = jv_get(c, "y_pred", NULL);
        size_t n = yt->n;
        int V = (int)jv_num(jv_get(c, "V", NULL));
        int32_t *t = malloc(n * sizeof *t);
        uint8_t *h = malloc(n);
        for (size_t i = 0; i < n; i++) {
            t[i] = (int32_t)jv_num(jv_at(yt, i));
            h[i] = (int32_t)jv_num(jv_at(yp, i)) == t[i];
        }
        double got = diag_balanced_acc(t, h, n, V);
        double want = jv_num(jv_get(c, "balanced_accuracy", NULL));
        printf("balanced accuracy %-22s n %5zu: %.15f (sklearn %.15f)\n",
               jv_get(c, "name", NULL)->str, n, got, want);
        CHECK(fabs(got - want) <= 1e-12, "balanced accuracy %s: %.17g vs sklearn %.17g",
              jv_get(c, "name", NULL)->str, got, want);
        if (n <= DIAG_BAL_SUBSET_SIZE) {
            double acc[DIAG_BAL_SUBSETS], mean, sd;
            CHECK(diag_balanced_subsets(t, h, n, V, 5, acc, &mean, &sd) == 0, "subsets run");
            int same = 1;
            for (int i = 0; i < DIAG_BAL_SUBSETS; i++)
                same &= fabs(acc[i] - got) <= 1e-15;
            CHECK(same && fabs(mean - got) <= 1e-15 && sd <= 1e-15,
                  "%s: subsets of the whole split all give its balanced accuracy",
                  jv_get(c, "name", NULL)->str);
        } else {
            double acc[DIAG_BAL_SUBSETS], mean, sd, s = 0, ss = 0;
            CHECK(diag_balanced_subsets(t, h, n, V, 5, acc, &mean, &sd) == 0, "subsets run");
            for (int i = 0; i < DIAG_BAL_SUBSETS; i++)
                s += acc[i];
            for (int i = 0; i < DIAG_BAL_SUBSETS; i++)
                ss += (acc[i] - s / DIAG_BAL_SUBSETS) * (acc[i] - s / DIAG_BAL_SUBSETS);
            CHECK(fabs(mean - s / DIAG_BAL_SUBSETS) <= 1e-15 &&
                      fabs(sd - sqrt(ss / (DIAG_BAL_SUBSETS - 1))) <= 1e-15 &&
                      (sd > 0) == (got > 0 && got < 1),
                  "%s: subset mean and sd are those of the 20 subsets (sd %.4f)",
                  jv_get(c, "name", NULL)->str, sd);
        }
        free(t);
        free(h);
        n_cases++;
    }
    CHECK(n_cases >= 8, "the fixture's %d cases", n_cases);
    jv_free(doc);
    /* not plain accuracy: a model always right on the frequent symbol only */
    int32_t t[6] = {0, 0, 0, 0, 1, 2};
    uint8_t h[6] = {1, 1, 1, 1, 0, 0};
    CHECK(fabs(diag_balanced_acc(t, h, 6, 3) - 1.0 / 3) < 1e-15,
          "four of six right, one symbol of three: 1/3");
    CHECK(isnan(diag_balanced_acc(t, h, 0, 3)), "no positions: undefined");
}

int main(void)
{
    ece();
    brier();
    cosine();
    classes();
    temperature();
    sampling();
    subset_accuracy();
    balanced_accuracy();
    training_curve();
    divergence_rule();
    return check_done("test_diag");
}
