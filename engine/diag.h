/* Evaluation instruments (issue: calibration, norms, oversmoothing, logits, length).
 *
 * Character classes (of a target or input byte): letters (isalpha), digits (isdigit),
 * whitespace (isspace, newline included) and punctuation (everything else).
 * Calibration: top-1 confidence in 15 equal-width bins [k/15, (k+1)/15) (the last bin
 * closed at 1); ECE = Σ_k n_k/N · |acc_k − conf_k|; Brier = mean over positions of
 * Σ_v (p_v − 1[v = target])², the multi-class score (range 0..2).
 * Oversmoothing: mean pairwise cosine similarity of the vectors of one sequence,
 * (‖Σ u_i‖² − T) / (T(T−1)) with u_i = x_i/‖x_i‖, averaged over sequences.
 * Temperatures: validation NLL of softmax(z/τ) at τ ∈ {0.5, 0.75, 1, 1.5, 2}, and the τ
 * minimizing NLL (Newton's method on β = 1/τ, where NLL is convex).
 */
#ifndef REPRO_DIAG_H
#define REPRO_DIAG_H

#include <stddef.h>
#include <stdint.h>

enum { CLS_LETTER, CLS_DIGIT, CLS_PUNCT, CLS_SPACE, N_CLASSES };
#define N_BINS 15
#define N_TEMPS 5
extern const double diag_temps[N_TEMPS];
extern const char *const diag_class_names[N_CLASSES];

int diag_class_of_byte(unsigned char b);
int diag_bin(double conf);
/* ECE from per-bin counts, confidence sums and correct counts. */
double diag_ece(const double *count, const double *conf_sum, const double *correct, int nbins);
/* Σ_v (p_v − 1[v = target])² for one probability vector. */
double diag_brier(const float *p, int V, int target);
/* Mean pairwise cosine similarity of the T rows of x (T, C); 0 if T < 2. */
double diag_cosine_mean(const float *x, int T, int C);

/* Sums over evaluated positions, in evaluation order; finished by diag_finish. */
typedef struct {
    double n, loss, hits, brier, logit_norm, max_logit;
    double bin_n[N_BINS], bin_conf[N_BINS], bin_hits[N_BINS];
    double cls_n[N_CLASSES], cls_hits[N_CLASSES];        /* by target class */
    double emb_n[N_CLASSES], emb_norm_cls[N_CLASSES];    /* by input-token class */
    double emb_norm, cos_first, cos_final, n_seq;
    double *resid_norm; /* (L+1): inputs of blocks 1..L, then the final residual */
    double *pos_loss, *pos_n; /* (T) */
    int L, T;
} diag_sums;

typedef struct {
    double val_loss, val_ppl, val_acc, acc_macro, acc_class[N_CLASSES];
    double ece, brier, bin_n[N_BINS], bin_conf[N_BINS], bin_acc[N_BINS];
    double logit_norm, max_logit, nll_temp[N_TEMPS], temp_opt, nll_temp_opt;
    double embed_norm, embed_norm_class[N_CLASSES], cos_first, cos_final;
    double *resid_norm, *pos_loss; /* (L+1), (T); owned by the caller's diag_sums */
} diag_result;

int diag_sums_init(diag_sums *d, int L, int T);
void diag_sums_free(diag_sums *d);
/* Result from the sums; undefined values (a class never seen) are NaN. */
void diag_finish(const diag_sums *d, diag_result *r);
/* NLL at the fixed temperatures and the optimal temperature from stored logits
 * (n, V) and targets; fills r->nll_temp, r->temp_opt, r->nll_temp_opt. */
void diag_temperature(const float *logits, const int32_t *targets, size_t n, int V,
                      diag_result *r);

#endif
