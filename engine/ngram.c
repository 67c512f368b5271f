#include "ngram.h"

#include "rmath.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The Witten-Bell ladder.  One open-addressing table holds every k-gram of the training
 * split for k = 0..order (k = 0 the empty history): its count as a gram (the k-gram
 * occurrences followed by nothing in particular) and, as a history, the number of its
 * occurrences with a successor and of its distinct successors.  A key packs the length
 * into the top byte and up to 7 symbols of 8 bits below it. */
typedef struct {
    uint64_t key; /* 0: empty slot (a real key has length >= 1 or is EMPTY_HIST) */
    uint32_t count, hist_total, hist_types;
} ngram_entry;

struct ngram_model {
    int order, vocab;
    ngram_entry *slot;
    size_t cap, used; /* cap a power of two */
};

#define EMPTY_HIST ((uint64_t)1 << 63)

static uint64_t gram_key(const int32_t *s, int k)
{
    if (k == 0)
        return EMPTY_HIST;
    uint64_t key = (uint64_t)k << 56;
    for (int j = 0; j < k; j++)
        key |= (uint64_t)(uint8_t)s[j] << (8 * j);
    return key;
}

static size_t slot_of(const ngram_model *m, uint64_t key)
{
    uint64_t h = key + 0x9e3779b97f4a7c15ULL;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
    h ^= h >> 31;
    size_t i = (size_t)h & (m->cap - 1);
    while (m->slot[i].key != 0 && m->slot[i].key != key)
        i = (i + 1) & (m->cap - 1);
    return i;
}

static const ngram_entry *find(const ngram_model *m, uint64_t key)
{
    const ngram_entry *e = &m->slot[slot_of(m, key)];
    return e->key == key ? e : NULL;
}

static int grow(ngram_model *m)
{
    ngram_model bigger = *m;
    bigger.cap = m->cap * 2;
    bigger.slot = calloc(bigger.cap, sizeof(ngram_entry));
    if (!bigger.slot)
        return -1;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slot[i].key != 0)
            bigger.slot[slot_of(&bigger, m->slot[i].key)] = m->slot[i];
    free(m->slot);
    *m = bigger;
    return 0;
}

/* The entry of key, inserted (zeroed) when absent; NULL when out of memory. */
static ngram_entry *entry(ngram_model *m, uint64_t key)
{
    size_t i = slot_of(m, key);
    if (m->slot[i].key == key)
        return &m->slot[i];
    if ((m->used + 1) * 10 > m->cap * 7) {
        if (grow(m))
            return NULL;
        i = slot_of(m, key);
    }
    m->slot[i].key = key;
    m->used++;
    return &m->slot[i];
}

void ngram_model_free(ngram_model *m)
{
    if (!m)
        return;
    free(m->slot);
    free(m);
}

int ngram_model_order(const ngram_model *m)
{
    return m->order;
}

ngram_model *ngram_model_fit(const corpus *c, int order, char *err, size_t errlen)
{
    if (order < 1 || order > NGRAM_MAX_ORDER) {
        snprintf(err, errlen, "n-gram control: order %d outside 1..%d", order, NGRAM_MAX_ORDER);
        return NULL;
    }
    if (c->vocab > 256) {
        snprintf(err, errlen, "n-gram control: a vocabulary of %d symbols, above 256", c->vocab);
        return NULL;
    }
    ngram_model *m = calloc(1, sizeof *m);
    if (m) {
        m->order = order;
        m->vocab = c->vocab;
        m->cap = 1024;
        m->slot = calloc(m->cap, sizeof(ngram_entry));
    }
    if (!m || !m->slot) {
        ngram_model_free(m);
        snprintf(err, errlen, "n-gram control: out of memory");
        return NULL;
    }
    for (size_t i = 0; i < c->n_train; i++) {
        for (int k = 1; k <= order && i + (size_t)k <= c->n_train; k++) {
            const int32_t *g = c->train + i;
            ngram_entry *e = entry(m, gram_key(g, k));
            ngram_entry *h = e ? entry(m, gram_key(g, k - 1)) : NULL;
            /* the history's entry may have moved when the gram's insertion grew the
             * table: look the gram up again */
            e = h ? entry(m, gram_key(g, k)) : NULL;
            if (!e || e->count == UINT32_MAX || h->hist_total == UINT32_MAX) {
                ngram_model_free(m);
                snprintf(err, errlen, e ? "n-gram control: a count above 2^32 - 1"
                                        : "n-gram control: out of memory");
                return NULL;
            }
            if (e->count == 0)
                h->hist_types++;
            e->count++;
            h->hist_total++;
        }
    }
    return m;
}

double ngram_model_logp(const ngram_model *m, const int32_t *hist, size_t n_hist, int32_t w)
{
    double p = 1.0 / m->vocab;
    int32_t g[NGRAM_MAX_ORDER];
    for (int k = 0; k < m->order && (size_t)k <= n_hist; k++) {
        const int32_t *h = hist + n_hist - (size_t)k;
        const ngram_entry *he = find(m, gram_key(h, k));
        if (!he || he->hist_total == 0)
            break;
        memcpy(g, h, (size_t)k * sizeof(int32_t));
        g[k] = w;
        const ngram_entry *ge = find(m, gram_key(g, k + 1));
        double cw = ge ? ge->count : 0.0;
        p = (cw + he->hist_types * p) / ((double)he->hist_total + he->hist_types);
    }
    return rm_log(p);
}
