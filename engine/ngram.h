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

#include "data.h"

typedef struct {
    double unigram_nll, unigram_ppl, bigram_nll, bigram_ppl;
    size_t n_train, n_eval; /* training tokens, validation targets */
    int vocab;
} ngram_result;

/* 0, or -1 with a message (out of memory, or a validation split of fewer than 2 tokens). */
int ngram_eval(const corpus *c, ngram_result *r, char *err, size_t errlen);

#endif
