#include "diag.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "pcg.h"
#include "rmath.h"

const double diag_temps[N_TEMPS] = {0.5, 0.75, 1.0, 1.5, 2.0};
const char *const diag_class_names[N_CLASSES] = {"letter", "digit", "punct", "space"};

int diag_class_of_byte(unsigned char b)
{
    if (isalpha(b))
        return CLS_LETTER;
    if (isdigit(b))
        return CLS_DIGIT;
    if (isspace(b))
        return CLS_SPACE;
    return CLS_PUNCT;
}

int diag_bin(double conf)
{
    int k = (int)(conf * N_BINS);
    return k < 0 ? 0 : k >= N_BINS ? N_BINS - 1 : k;
}

double diag_ece(const double *count, const double *conf_sum, const double *correct, int nbins)
{
    double n = 0, e = 0;
    for (int k = 0; k < nbins; k++)
        n += count[k];
    if (n <= 0)
        return NAN;
    for (int k = 0; k < nbins; k++)
        if (count[k] > 0)
            e += count[k] / n * fabs(correct[k] / count[k] - conf_sum[k] / count[k]);
    return e;
}

double diag_brier(const float *p, int V, int target)
{
    double s = 0;
    for (int v = 0; v < V; v++) {
        double d = (double)p[v] - (v == target);
        s += d * d;
    }
    return s;
}

double diag_cosine_mean(const float *x, int T, int C, double *sum)
{
    if (T < 2)
        return 0.0;
    memset(sum, 0, (size_t)C * sizeof(double));
    for (int t = 0; t < T; t++) {
        const float *r = x + (size_t)t * C;
        double n2 = 0;
        for (int c = 0; c < C; c++)
            n2 += (double)r[c] * r[c];
        double inv = n2 > 0 ? 1.0 / sqrt(n2) : 0.0;
        for (int c = 0; c < C; c++)
            sum[c] += r[c] * inv;
    }
    double s2 = 0;
    for (int c = 0; c < C; c++)
        s2 += sum[c] * sum[c];
    return (s2 - T) / ((double)T * (T - 1));
}

int diag_sums_init(diag_sums *d, int L, int T)
{
    memset(d, 0, sizeof *d);
    d->L = L;
    d->T = T;
    d->resid_norm = calloc((size_t)L + 1, sizeof(double));
    d->pos_loss = calloc((size_t)T, sizeof(double));
    d->pos_n = calloc((size_t)T, sizeof(double));
    if (!d->resid_norm || !d->pos_loss || !d->pos_n) {
        diag_sums_free(d);
        return -1;
    }
    return 0;
}

void diag_sums_free(diag_sums *d)
{
    free(d->resid_norm);
    free(d->pos_loss);
    free(d->pos_n);
    d->resid_norm = d->pos_loss = d->pos_n = NULL;
}

/* The mean over the first nsym symbols that occur (count > 0) of hits / count; NaN when
 * none does.  Balanced accuracy, from per-symbol sums. */
static double mean_recall(const double *count, const double *hits, int nsym)
{
    double s = 0;
    int present = 0;
    for (int v = 0; v < nsym; v++)
        if (count[v] > 0) {
            s += hits[v] / count[v];
            present++;
        }
    return present ? s / present : NAN;
}

/* The mean and sample sd (n - 1) of n values. */
static void mean_sd(const double *x, int n, double *mean, double *sd)
{
    double s = 0.0, ss = 0.0;
    for (int i = 0; i < n; i++)
        s += x[i];
    *mean = s / n;
    for (int i = 0; i < n; i++)
        ss += (x[i] - *mean) * (x[i] - *mean);
    *sd = sqrt(ss / (n - 1));
}

void diag_finish(const diag_sums *d, diag_result *r)
{
    double n = d->n;
    r->val_loss = d->loss / n;
    r->val_ppl = rm_exp(r->val_loss);
    r->val_acc = d->hits / n;
    double macro = 0;
    int present = 0;
    for (int k = 0; k < N_CLASSES; k++) {
        r->acc_class[k] = d->cls_n[k] > 0 ? d->cls_hits[k] / d->cls_n[k] : NAN;
        if (d->cls_n[k] > 0) {
            macro += r->acc_class[k];
            present++;
        }
        r->embed_norm_class[k] = d->emb_n[k] > 0 ? d->emb_norm_cls[k] / d->emb_n[k] : NAN;
    }
    r->acc_macro = present ? macro / present : NAN;
    r->bal_acc = mean_recall(d->sym_n, d->sym_hits, DIAG_SYMBOLS);
    r->ece = diag_ece(d->bin_n, d->bin_conf, d->bin_hits, N_BINS);
    for (int k = 0; k < N_BINS; k++) {
        r->bin_n[k] = d->bin_n[k];
        r->bin_conf[k] = d->bin_n[k] > 0 ? d->bin_conf[k] / d->bin_n[k] : NAN;
        r->bin_acc[k] = d->bin_n[k] > 0 ? d->bin_hits[k] / d->bin_n[k] : NAN;
    }
    r->brier = d->brier / n;
    r->logit_norm = d->logit_norm / n;
    r->max_logit = d->max_logit / n;
    r->embed_norm = d->emb_norm / n;
    r->cos_first = d->n_seq > 0 ? d->cos_first / d->n_seq : NAN;
    r->cos_final = d->n_seq > 0 ? d->cos_final / d->n_seq : NAN;
    for (int l = 0; l <= d->L; l++)
        d->resid_norm[l] /= n;
    for (int t = 0; t < d->T; t++)
        d->pos_loss[t] = d->pos_n[t] > 0 ? d->pos_loss[t] / d->pos_n[t] : NAN;
    r->resid_norm = d->resid_norm;
    r->pos_loss = d->pos_loss;
    for (int k = 0; k < N_TEMPS; k++)
        r->nll_temp[k] = NAN;
    r->temp_opt = r->nll_temp_opt = NAN;
}

/* Positions the temperature scan evaluates side by side (their sums are independent
 * chains the CPU overlaps) and the vocabulary entries per exponential batch. */
enum { NLL_ROWS = 4, NLL_CHUNK = 256 };

/* For β and positions i0..i0+rows-1 (rows <= NLL_ROWS): per-position NLL, its first and
 * second derivative in β, into out[3i], out[3i+1], out[3i+2].  mx[i]: the row's max.
 * Each position's exponentials rm_exp(β(z_v - max)) come from kernels_exp (rm_exp's bits)
 * and its sums run over v in order, whatever the rows beside it. */
static void nll_beta(const float *logits, const int32_t *targets, const double *mx, size_t i0,
                     int rows, int V, double beta, double *out)
{
    /* a short last group repeats its last row (computed, not stored): the loops over the
       rows keep a constant length, so the sums stay in registers */
    const float *z[NLL_ROWS];
    double m[NLL_ROWS];
    for (int k = 0; k < NLL_ROWS; k++) {
        size_t i = i0 + (size_t)(k < rows ? k : rows - 1);
        z[k] = logits + i * V;
        m[k] = mx[i];
    }
    double e[NLL_ROWS * NLL_CHUNK]; /* row k's n values at e + k n */
    double s[NLL_ROWS] = {0}, s1[NLL_ROWS] = {0}, s2[NLL_ROWS] = {0};
    for (int v0 = 0; v0 < V; v0 += NLL_CHUNK) {
        int n = V - v0 < NLL_CHUNK ? V - v0 : NLL_CHUNK;
        for (int k = 0; k < NLL_ROWS; k++)
            kernels_exp_shifted(e + k * n, z[k] + v0, (size_t)n, beta, m[k]);
        for (int j = 0; j < n; j++) {
            _Pragma("GCC unroll 4") for (int k = 0; k < NLL_ROWS; k++)
            {
                double zj = z[k][v0 + j];
                s[k] += e[k * n + j];
                s1[k] += e[k * n + j] * zj;
                s2[k] += e[k * n + j] * zj * zj;
            }
        }
    }
    for (int k = 0; k < rows; k++) {
        size_t i = i0 + (size_t)k;
        double zt = z[k][targets[i]];
        double mean = s1[k] / s[k], var = s2[k] / s[k] - mean * mean;
        out[3 * i] = rm_log(s[k]) + beta * m[k] - beta * zt;
        out[3 * i + 1] = mean - zt;
        out[3 * i + 2] = var > 0 ? var : 0;
    }
}

/* mean f, g, h over all positions: per-position values, summed in position order */
static void nll_all(const float *logits, const int32_t *targets, const double *mx, size_t n,
                    int V, double beta, double *buf, double *F, double *G, double *H)
{
    size_t groups = (n + NLL_ROWS - 1) / NLL_ROWS;
#pragma omp parallel for schedule(static)
    for (size_t q = 0; q < groups; q++) {
        size_t i0 = q * NLL_ROWS;
        nll_beta(logits, targets, mx, i0, n - i0 < NLL_ROWS ? (int)(n - i0) : NLL_ROWS, V, beta,
                 buf);
    }
    double f = 0, g = 0, h = 0;
    for (size_t i = 0; i < n; i++) {
        f += buf[3 * i];
        g += buf[3 * i + 1];
        h += buf[3 * i + 2];
    }
    *F = f / (double)n;
    *G = g / (double)n;
    *H = h / (double)n;
}

int diag_temperature(const float *logits, const int32_t *targets, size_t n, int V,
                     diag_result *r)
{
    if (n == 0)
        return 0;
    double *buf = malloc(3 * n * sizeof(double)), *mx = malloc(n * sizeof(double));
    if (!buf || !mx) {
        free(buf);
        free(mx);
        return -1;
    }
    /* each row's max, once for every β */
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
        const float *z = logits + i * V;
        double m = z[0];
        for (int v = 1; v < V; v++)
            if (z[v] > m)
                m = z[v];
        mx[i] = m;
    }
    double f = 0, g = 0, h = 0;
    int have_one = 0; /* f, g, h hold β = 1 (τ = 1 is among the fixed temperatures) */
    for (int k = 0; k < N_TEMPS; k++) {
        double b = 1.0 / diag_temps[k];
        double fk, gk, hk;
        nll_all(logits, targets, mx, n, V, b, buf, &fk, &gk, &hk);
        r->nll_temp[k] = fk;
        if (b == 1.0) {
            f = fk;
            g = gk;
            h = hk;
            have_one = 1;
        }
    }
    /* Newton on β from β = 1 (f is convex in β).  Stops when the step is below 1e-7 of
     * β (the minimizer to ~7 digits: well below the float noise of the logits) or when
     * a step, halved up to 20 times, no longer decreases f. */
    double beta = 1.0;
    if (!have_one)
        nll_all(logits, targets, mx, n, V, beta, buf, &f, &g, &h);
    for (int it = 0; it < 50; it++) {
        double step = h > 0 ? g / h : g;
        if (fabs(step) <= 1e-7 * beta)
            break;
        double nb = beta - step, nf = f, ng = g, nh = h;
        int better = 0;
        for (int half = 0; half < 20 && !better; half++) {
            if (nb <= 1e-3 * beta)
                nb = 0.5 * beta;
            nll_all(logits, targets, mx, n, V, nb, buf, &nf, &ng, &nh);
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
    free(buf);
    free(mx);
    return 0;
}

static int sample_indices(enum pcg_purpose purpose, uint64_t seed, uint64_t index, size_t n,
                          int k, size_t *out);

int diag_sample_indices(uint64_t seed, uint64_t index, size_t n, int k, size_t *out)
{
    return sample_indices(PCG_PURPOSE_SUBSET, seed, index, n, k, out);
}

static int sample_indices(enum pcg_purpose purpose, uint64_t seed, uint64_t index, size_t n,
                          int k, size_t *out)
{
    if (k <= 0)
        return 0;
    /* Floyd: for j = n−k .. n−1 take t uniform in [0, j], or j itself if t is taken.
     * The chosen set is kept sorted, so membership is a binary search. */
    pcg32 r;
    pcg32_stream(&r, seed, purpose, index);
    int have = 0;
    for (size_t j = n - (size_t)k; j < n; j++) {
        size_t t = (size_t)pcg32_bounded(&r, (uint32_t)(j + 1));
        int lo = 0, hi = have;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (out[mid] < t)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < have && out[lo] == t) { /* taken: j is new (larger than all so far) */
            out[have++] = j;
        } else {
            memmove(out + lo + 1, out + lo, (size_t)(have - lo) * sizeof *out);
            out[lo] = t;
            have++;
        }
    }
    return 0;
}

int diag_subset_acc(const uint8_t *hit, size_t n, uint64_t seed, double *acc, double *mean,
                    double *sd)
{
    int k = n < DIAG_SUBSET_SIZE ? (int)n : DIAG_SUBSET_SIZE;
    size_t idx[DIAG_SUBSET_SIZE];
    for (int i = 0; i < DIAG_SUBSETS; i++) {
        if (diag_sample_indices(seed, (uint64_t)i, n, k, idx))
            return -1;
        int h = 0;
        for (int j = 0; j < k; j++)
            h += hit[idx[j]] != 0;
        acc[i] = k > 0 ? (double)h / k : NAN;
    }
    mean_sd(acc, DIAG_SUBSETS, mean, sd);
    return 0;
}

double diag_balanced_acc(const int32_t *tgt, const uint8_t *hit, size_t n, int V)
{
    double cnt[DIAG_SYMBOLS] = {0}, hits[DIAG_SYMBOLS] = {0};
    for (size_t i = 0; i < n; i++)
        if (tgt[i] >= 0 && tgt[i] < V && tgt[i] < DIAG_SYMBOLS) {
            cnt[tgt[i]] += 1;
            hits[tgt[i]] += hit[i] != 0;
        }
    return mean_recall(cnt, hits, V < DIAG_SYMBOLS ? V : DIAG_SYMBOLS);
}

int diag_balanced_subsets(const int32_t *tgt, const uint8_t *hit, size_t n, int V,
                          uint64_t seed, double *acc, double *mean, double *sd)
{
    int k = n < DIAG_BAL_SUBSET_SIZE ? (int)n : DIAG_BAL_SUBSET_SIZE;
    size_t idx[DIAG_BAL_SUBSET_SIZE];
    int32_t t[DIAG_BAL_SUBSET_SIZE];
    uint8_t h[DIAG_BAL_SUBSET_SIZE];
    for (int i = 0; i < DIAG_BAL_SUBSETS; i++) {
        if (sample_indices(PCG_PURPOSE_BALANCED, seed, (uint64_t)i, n, k, idx))
            return -1;
        for (int j = 0; j < k; j++) {
            t[j] = tgt[idx[j]];
            h[j] = hit[idx[j]];
        }
        acc[i] = diag_balanced_acc(t, h, (size_t)k, V);
    }
    mean_sd(acc, DIAG_BAL_SUBSETS, mean, sd);
    return 0;
}

void diag_training_curve(const double *x, size_t stride, long n, int col_loss, int col_gnorm,
                         int col_maxlogit, diag_curve *r)
{
    r->init_loss = n > 0 ? x[col_loss] : NAN;
    r->max_grad_norm = r->max_abs_logit = NAN;
    r->max_loss_jump = 0.0;
    r->max_grad_norm_step = r->max_loss_jump_step = -1;
    double best = NAN;
    for (long t = 0; t < n; t++) {
        const double *row = x + (size_t)t * stride;
        double l = row[col_loss], g = row[col_gnorm], z = row[col_maxlogit];
        if (isfinite(g) && !(g <= r->max_grad_norm)) {
            r->max_grad_norm = g;
            r->max_grad_norm_step = t;
        }
        if (isfinite(z) && !(z <= r->max_abs_logit))
            r->max_abs_logit = z;
        if (!isfinite(l))
            continue;
        if (isfinite(best) && l - best > r->max_loss_jump) {
            r->max_loss_jump = l - best;
            r->max_loss_jump_step = t;
        }
        if (!(l >= best))
            best = l;
    }
    double z0 = n > 0 ? x[col_maxlogit] : NAN;
    r->logit_growth = isfinite(z0) && z0 > 0 ? r->max_abs_logit / z0 : NAN;
}

long diag_divergence(const double *x, size_t stride, long n, int col_loss, int col_gnorm)
{
    if (n <= 0)
        return -1;
    const double *last = x + (size_t)(n - 1) * stride;
    if (!isfinite(last[col_loss]) || !isfinite(last[col_gnorm]))
        return n - 1;
    if (n < DIVERGE_STEPS)
        return -1;
    double bound = x[col_loss] + DIVERGE_MARGIN;
    for (long t = n - DIVERGE_STEPS; t < n; t++)
        if (!(x[(size_t)t * stride + col_loss] > bound))
            return -1;
    return n - DIVERGE_STEPS;
}
