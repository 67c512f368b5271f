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
 * Subset accuracy (the claim's "mock accuracy" at its sample size): argmax accuracy on
 * DIAG_SUBSETS subsets of DIAG_SUBSET_SIZE validation positions each, every subset drawn
 * uniformly without replacement (Floyd's algorithm) from all evaluated positions, subset
 * k from PCG stream (seed, purpose subset, index k); reported with their mean and sample
 * standard deviation (n − 1).
 *
 * Balanced accuracy (config balanced_acc; a reading of the claim's "mock macro
 * accuracy"): the mean over the target symbols present of each symbol's recall (hits /
 * occurrences), scikit-learn's balanced_accuracy_score; on the whole split (bal_acc) and
 * on DIAG_BAL_SUBSETS subsets of DIAG_BAL_SUBSET_SIZE positions (the symbols present in
 * the subset), drawn as the subset accuracy's but from PCG stream (seed, purpose
 * balanced, index k), with their mean and sample standard deviation.  acc_macro is
 * another quantity: the mean over the character classes present of their accuracy.
 *
 * Training-curve instruments, from the per-step log (loss ℓ_t, pre-clip gradient norm,
 * max |logit| of the batch), over the steps a run took; non-finite values are skipped:
 *   init_loss       ℓ_0, the training loss of the first batch at initialization;
 *   max_grad_norm   max_t of the pre-clip gradient norm (and its step);
 *   max_loss_jump   max(0, max_{t≥1} ℓ_t − min_{s<t} ℓ_s): the largest rise of the loss
 *                   above the best loss reached before it, in nats (and its step); a
 *                   spike is measured from the level it left, however many steps it
 *                   takes to rise, and a plateau or slow drift scores near 0;
 *   max_abs_logit   max_t of the batch's largest |logit|; logit_growth = max_abs_logit /
 *                   (its value at step 0).
 * Divergence: a run diverges at step t when its loss or gradient norm is non-finite at
 * t, or when ℓ_t … ℓ_{t+K−1} all exceed ℓ_0 + DIVERGE_MARGIN (K = DIVERGE_STEPS
 * consecutive steps more than 1 nat worse than at initialization); diverge_step is that
 * t (the onset) and diverge_lr the learning rate scheduled at t.  Training stops at the
 * step where divergence is recognized (t, or t + K − 1), and the run is not evaluated.
 */
#ifndef REPRO_DIAG_H
#define REPRO_DIAG_H

#include <stddef.h>
#include <stdint.h>

enum { CLS_LETTER, CLS_DIGIT, CLS_PUNCT, CLS_SPACE, N_CLASSES };
#define N_BINS 15
#define N_TEMPS 5
#define DIAG_SUBSETS 20
#define DIAG_SUBSET_SIZE 50
#define DIAG_BAL_SUBSETS 20
#define DIAG_BAL_SUBSET_SIZE 150
#define DIAG_SYMBOLS 256 /* the largest vocabulary the balanced accuracy counts (bytes) */
#define DIVERGE_MARGIN 1.0 /* nats above ℓ_0 */
#define DIVERGE_STEPS 10
extern const double diag_temps[N_TEMPS];
extern const char *const diag_class_names[N_CLASSES];

int diag_class_of_byte(unsigned char b);
int diag_bin(double conf);
/* ECE from per-bin counts, confidence sums and correct counts. */
double diag_ece(const double *count, const double *conf_sum, const double *correct, int nbins);
/* Σ_v (p_v − 1[v = target])² for one probability vector. */
double diag_brier(const float *p, int V, int target);
/* Mean pairwise cosine similarity of the T rows of x (T, C); 0 if T < 2.  sum: (C)
 * doubles of scratch. */
double diag_cosine_mean(const float *x, int T, int C, double *sum);

/* Sums over evaluated positions, in evaluation order; finished by diag_finish. */
typedef struct {
    double n, loss, hits, brier, logit_norm, max_logit;
    double bin_n[N_BINS], bin_conf[N_BINS], bin_hits[N_BINS];
    double cls_n[N_CLASSES], cls_hits[N_CLASSES];        /* by target class */
    double emb_n[N_CLASSES], emb_norm_cls[N_CLASSES];    /* by input-token class */
    double sym_n[DIAG_SYMBOLS], sym_hits[DIAG_SYMBOLS];  /* by target symbol */
    double emb_norm, cos_first, cos_final, n_seq;
    double *resid_norm; /* (L+1): inputs of blocks 1..L, then the final residual */
    double *pos_loss, *pos_n; /* (T) */
    int L, T;
} diag_sums;

typedef struct {
    double val_loss, val_ppl, val_acc, acc_macro, acc_class[N_CLASSES], bal_acc;
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
 * (n, V) and targets; fills r->nll_temp, r->temp_opt, r->nll_temp_opt (left as they are
 * when n = 0).  0, or -1 if out of memory. */
int diag_temperature(const float *logits, const int32_t *targets, size_t n, int V,
                     diag_result *r);

/* k distinct indices in [0, n) (k <= n), uniformly without replacement (Floyd's
 * algorithm: exactly k draws), in ascending order; 0, or -1 if out of memory. */
int diag_sample_indices(uint64_t seed, uint64_t index, size_t n, int k, size_t *out);
/* Accuracy of DIAG_SUBSETS subsets of min(DIAG_SUBSET_SIZE, n) of the n per-position hits
 * (0/1); acc[k], their mean and sd.  0, or -1 if out of memory. */
int diag_subset_acc(const uint8_t *hit, size_t n, uint64_t seed, double *acc, double *mean,
                    double *sd);

/* Balanced accuracy of n positions with targets tgt[i] in [0, V) (V <= DIAG_SYMBOLS) and
 * hits hit[i] (0/1): the mean over the targets present of their recall; NaN when n = 0. */
double diag_balanced_acc(const int32_t *tgt, const uint8_t *hit, size_t n, int V);
/* The balanced accuracy of DIAG_BAL_SUBSETS subsets of min(DIAG_BAL_SUBSET_SIZE, n) of the
 * n positions; acc[k], their mean and sd.  0, or -1 if out of memory. */
int diag_balanced_subsets(const int32_t *tgt, const uint8_t *hit, size_t n, int V,
                          uint64_t seed, double *acc, double *mean, double *sd);

typedef struct {
    double init_loss, max_grad_norm, max_loss_jump, max_abs_logit, logit_growth;
    long max_grad_norm_step, max_loss_jump_step; /* -1 when undefined */
} diag_curve;

/* The training-curve instruments of n steps; column j of step t is x[t·stride + j] for
 * the three column indices given. */
void diag_training_curve(const double *x, size_t stride, long n, int col_loss, int col_gnorm,
                         int col_maxlogit, diag_curve *r);
/* The onset step of divergence if steps 0..n−1 meet the rule above at step n−1, else −1. */
long diag_divergence(const double *x, size_t stride, long n, int col_loss, int col_gnorm);

#endif
