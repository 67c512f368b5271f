#include "ngram.h"

#include "rmath.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int ngram_eval(const corpus *c, ngram_result *r, char *err, size_t errlen)
{
    const int V = c->vocab;
    if (c->n_val < 2 || c->n_train < 1) {
        snprintf(err, errlen, "n-gram reference: splits too small (train %zu, validation %zu)",
                 c->n_train, c->n_val);
        return -1;
    }
    double *uni = calloc((size_t)V, sizeof(double));
    double *bi = calloc((size_t)V * V, sizeof(double));
    double *from = calloc((size_t)V, sizeof(double));
    if (!uni || !bi || !from) {
        free(uni);
        free(bi);
        free(from);
        snprintf(err, errlen, "n-gram reference: out of memory");
        return -1;
    }
    for (size_t i = 0; i < c->n_train; i++)
        uni[c->train[i]] += 1;
    for (size_t i = 0; i + 1 < c->n_train; i++) {
        bi[(size_t)c->train[i] * V + c->train[i + 1]] += 1;
        from[c->train[i]] += 1;
    }
    double su = 0.0, sb = 0.0;
    for (size_t i = 1; i < c->n_val; i++) {
        int a = c->val[i - 1], b = c->val[i];
        su -= rm_log((uni[b] + 1.0) / ((double)c->n_train + V));
        sb -= rm_log((bi[(size_t)a * V + b] + 1.0) / (from[a] + V));
    }
    r->n_train = c->n_train;
    r->n_eval = c->n_val - 1;
    r->vocab = V;
    r->unigram_nll = su / (double)r->n_eval;
    r->bigram_nll = sb / (double)r->n_eval;
    r->unigram_ppl = rm_exp(r->unigram_nll);
    r->bigram_ppl = rm_exp(r->bigram_nll);
    free(uni);
    free(bi);
    free(from);
    return 0;
}
