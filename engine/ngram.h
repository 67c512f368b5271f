/* Reference n-gram models of a corpus (data.h's vocabulary and 90/10 split): the
 * perplexity a model reaches from character frequencies alone (unigram) or from the
 * previous character alone (bigram), fitted on the training split and evaluated on the
 * validation split.
 *
 * Counts come from the training split: n(b) = occurrences of b in train[0..n_train−1],
 * n(a,b) = transitions train[i] = a, train[i+1] = b for i < n_train − 1, and
 * n(a) = Σ_b n(a,b).  Both models are add-one (Laplace) smoothed over the V symbols of
 * the vocabulary, so a symbol that occurs only in the validation split still has
 * non-zero probability:
 *   unigram  p(b)     = (n(b) + 1) / (n_train + V)
 *   bigram   p(b | a) = (n(a,b) + 1) / (n(a) + V)
 * Both are evaluated on the n_val − 1 transitions inside the validation split
 * (targets val[1..n_val−1], the bigram conditioning on val[i−1]): nll = mean −log p,
 * ppl = exp(nll).  Sums are in double, in corpus order.
 */
#ifndef REPRO_NGRAM_H
#define REPRO_NGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "data.h"

typedef struct {
    double unigram_nll, unigram_ppl, bigram_nll, bigram_ppl;
    size_t n_train, n_eval; /* training tokens, validation targets */
    int vocab;
} ngram_result;

/* 0, or -1 with a message (out of memory, or a validation split of fewer than 2 tokens). */
int ngram_eval(const corpus *c, ngram_result *r, char *err, size_t errlen);

/* The task controls' n-gram ladder (tasks.h): an interpolated Witten-Bell model of order
 * n (1..NGRAM_MAX_ORDER) on the training split's counts.  With c(h) the number of
 * n-grams in train whose first |h| symbols are h (the occurrences of h that have a
 * successor), c(hw) those followed by w, and t(h) the number of distinct w with
 * c(hw) > 0:
 *   p_0(w)   = 1 / V
 *   p_k(w|h) = (c(hw) + t(h) p_{k-1}(w|h')) / (c(h) + t(h))   h the last k symbols,
 *                                                               h' its last k - 1
 * and p_k = p_{k-1} where c(h) = 0 (a history never seen, or shorter than k at the start
 * of a sequence).  The model of order n conditions on the last n - 1 symbols; order 1 is
 * the interpolated unigram.  Counts are integers in a hash table keyed by the n-gram, so
 * a probability depends on nothing but the training split. */
#define NGRAM_MAX_ORDER 7

typedef struct ngram_model ngram_model;

/* The model of order `order` on c's training split, or NULL with a message (an order
 * outside 1..NGRAM_MAX_ORDER, a vocabulary above 256 symbols, out of memory). */
ngram_model *ngram_model_fit(const corpus *c, int order, char *err, size_t errlen);
/* log p(w | the last order - 1 symbols of hist[0..n_hist-1]), natural log. */
double ngram_model_logp(const ngram_model *m, const int32_t *hist, size_t n_hist, int32_t w);
int ngram_model_order(const ngram_model *m);
void ngram_model_free(ngram_model *m);

#endif
