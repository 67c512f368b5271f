#include "tasks.h"

#include "pcg.h"
#include "rmath.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void task_score_free(task_score *r)
{
    free(r->loglik);
    free(r->correct);
    free(r->correct_norm);
    memset(r, 0, sizeof *r);
}

static int score_alloc(task_score *r, int n, char *err, size_t errlen, const char *name)
{
    memset(r, 0, sizeof *r);
    r->n_items = n;
    r->loglik = malloc(((size_t)n * TASKS_MAX_CHOICES + 1) * sizeof(double));
    r->correct = calloc((size_t)n + 1, 1);
    r->correct_norm = calloc((size_t)n + 1, 1);
    if (!r->loglik || !r->correct || !r->correct_norm) {
        task_score_free(r);
        snprintf(err, errlen, "task %s: out of memory for %d items", name, n);
        return -1;
    }
    for (size_t i = 0; i < (size_t)n * TASKS_MAX_CHOICES; i++)
        r->loglik[i] = NAN;
    return 0;
}

/* acc and acc_norm of one item from its choices' log-likelihoods: the answer must be the
 * strict maximum. */
static void judge(const task_item *it, const double *ll, uint8_t *hit, uint8_t *hit_norm)
{
    int win = 1, win_norm = 1;
    double a = ll[it->answer], an = a / (double)it->choice_len[it->answer];
    for (int j = 0; j < it->n_choices; j++) {
        if (j == it->answer)
            continue;
        if (!(ll[j] < a))
            win = 0;
        if (!(ll[j] / (double)it->choice_len[j] < an))
            win_norm = 0;
    }
    *hit = (uint8_t)win;
    *hit_norm = (uint8_t)win_norm;
}

static void finish(task_score *r, const task_set *s)
{
    long hits = 0, hits_norm = 0;
    for (int i = 0; i < s->n_items; i++) {
        judge(&s->items[i], r->loglik + (size_t)i * TASKS_MAX_CHOICES, &r->correct[i],
              &r->correct_norm[i]);
        hits += r->correct[i];
        hits_norm += r->correct_norm[i];
    }
    r->acc = s->n_items ? (double)hits / s->n_items : 0.0;
    r->acc_norm = s->n_items ? (double)hits_norm / s->n_items : 0.0;
}

static int encode(const corpus *c, const unsigned char *p, size_t n, int32_t *dst,
                  const task_set *s, int item, char *err, size_t errlen)
{
    for (size_t j = 0; j < n; j++) {
        int t = c->stoi[p[j]];
        if (t < 0) {
            snprintf(err, errlen, "task %s, item %d: byte 0x%02x is not in the corpus's "
                     "vocabulary", s->name, item + 1, p[j]);
            return -1;
        }
        dst[j] = t;
    }
    return 0;
}

/* The demonstrations of item i followed by its context, encoded into buf (its length
 * into *n, the context's start into *ctx0); buf holds at least the worst case. */
static int build_prefix(const corpus *c, const task_set *s, int i, int32_t *buf, size_t *n,
                        size_t *ctx0, int *pick, char *err, size_t errlen)
{
    size_t len = 0;
    if (s->shots > 0) {
        pcg32 r;
        pcg32_stream(&r, s->seed, PCG_PURPOSE_TASKS, (uint64_t)i);
        for (int j = 0; j < s->n_pool; j++)
            pick[j] = j;
        for (int j = 0; j < s->shots; j++) {
            int k = j + (int)pcg32_bounded(&r, (uint32_t)(s->n_pool - j));
            int tmp = pick[j];
            pick[j] = pick[k];
            pick[k] = tmp;
            const task_item *d = &s->pool[pick[j]];
            const size_t sep = sizeof TASKS_SEPARATOR - 1;
            if (encode(c, d->context, d->context_len, buf + len, s, i, err, errlen))
                return -1;
            len += d->context_len;
            if (encode(c, d->choice[d->answer], d->choice_len[d->answer], buf + len, s, i, err,
                       errlen))
                return -1;
            len += d->choice_len[d->answer];
            if (encode(c, (const unsigned char *)TASKS_SEPARATOR, sep, buf + len, s, i, err,
                       errlen))
                return -1;
            len += sep;
        }
    }
    *ctx0 = len;
    const task_item *it = &s->items[i];
    if (encode(c, it->context, it->context_len, buf + len, s, i, err, errlen))
        return -1;
    *n = len + it->context_len;
    return 0;
}

/* The longest prefix (demonstrations and context) any item of s can have. */
static size_t max_prefix(const task_set *s)
{
    size_t demo = 0, ctx = 0;
    for (int j = 0; j < s->n_pool; j++) {
        const task_item *d = &s->pool[j];
        size_t l = d->context_len + d->choice_len[d->answer];
        if (l > demo)
            demo = l;
    }
    for (int i = 0; i < s->n_items; i++)
        if (s->items[i].context_len > ctx)
            ctx = s->items[i].context_len;
    return (size_t)s->shots * (demo + sizeof TASKS_SEPARATOR - 1) + ctx;
}

int tasks_score(gpt_model *m, const corpus *c, const task_set *s, task_score *out, char *err,
                size_t errlen)
{
    const int T = m->T, B = m->B;
    if (s->shots < 0 || s->shots > s->n_pool) {
        snprintf(err, errlen, "task %s: %d-shot needs %d demonstration items, the pool has %d",
                 s->name, s->shots, s->shots, s->n_pool);
        return -1;
    }
    if (score_alloc(out, s->n_items, err, errlen, s->name))
        return -1;
    size_t cap = max_prefix(s) + (size_t)T + 2;
    int32_t *prefix = malloc(cap * sizeof(int32_t));
    int32_t *seq = malloc((size_t)B * (T + 1) * sizeof(int32_t));
    int *pick = malloc(((size_t)s->n_pool + 1) * sizeof(int));
    /* per batch slot: the item, the choice, the first target index of the choice, the
     * sequence's number of targets */
    int *slot = malloc((size_t)B * 4 * sizeof(int));
    uint8_t *lost = calloc((size_t)s->n_items + 1, 1), *cut = calloc((size_t)s->n_items + 1, 1);
    int rc = 0;
    if (!prefix || !seq || !pick || !slot || !lost || !cut) {
        snprintf(err, errlen, "task %s: out of memory", s->name);
        rc = -1;
        goto done;
    }
    int nb = 0;
    for (int i = 0; i < s->n_items && rc == 0; i++) {
        const task_item *it = &s->items[i];
        size_t plen, ctx0;
        if ((rc = build_prefix(c, s, i, prefix, &plen, &ctx0, pick, err, errlen)))
            break;
        for (int j = 0; j < it->n_choices; j++) {
            size_t cl = it->choice_len[j];
            if (cl > (size_t)T) {
                snprintf(err, errlen, "task %s, item %d: choice %d has %zu characters, more "
                         "than the model's window of %d", s->name, i + 1, j + 1, cl, T);
                rc = -1;
                break;
            }
            size_t keep = (size_t)T + 1 - cl, drop = plen > keep ? plen - keep : 0;
            if (drop > 0 && ctx0 > 0)
                lost[i] = 1;
            if (drop > ctx0)
                cut[i] = 1;
            int32_t *dst = seq + (size_t)nb * (T + 1);
            size_t n = plen - drop;
            memcpy(dst, prefix + drop, n * sizeof(int32_t));
            if ((rc = encode(c, it->choice[j], cl, dst + n, s, i, err, errlen)))
                break;
            slot[nb * 4 + 0] = i;
            slot[nb * 4 + 1] = j;
            slot[nb * 4 + 2] = (int)n - 1;
            slot[nb * 4 + 3] = (int)(n + cl) - 1;
            nb++;
            int last = i == s->n_items - 1 && j == it->n_choices - 1;
            if (nb < B && !last)
                continue;
            for (int b = 0; b < nb; b++) {
                const int32_t *q = seq + (size_t)b * (T + 1);
                int nt = slot[b * 4 + 3];
                for (int p = 0; p < T; p++) {
                    m->inputs[(size_t)b * T + p] = p < nt ? q[p] : 0;
                    m->targets[(size_t)b * T + p] = p < nt ? q[p + 1] : 0;
                }
            }
            gpt_forward(m, nb, 1, 0, 0);
            for (int b = 0; b < nb; b++) {
                double ll = 0.0;
                for (int p = slot[b * 4 + 2]; p < slot[b * 4 + 3]; p++)
                    ll -= (double)m->losses[(size_t)b * T + p];
                out->loglik[(size_t)slot[b * 4] * TASKS_MAX_CHOICES + slot[b * 4 + 1]] = ll;
            }
            nb = 0;
        }
    }
    if (rc == 0) {
        finish(out, s);
        for (int i = 0; i < s->n_items; i++) {
            out->lost_demos += lost[i];
            out->context_cut += cut[i];
        }
    }
done:
    free(prefix);
    free(seq);
    free(pick);
    free(slot);
    free(lost);
    free(cut);
    if (rc)
        task_score_free(out);
    return rc;
}

int tasks_score_bigram(const corpus *c, const task_set *s, task_score *out, char *err,
                       size_t errlen)
{
    const int V = c->vocab;
    if (score_alloc(out, s->n_items, err, errlen, s->name))
        return -1;
    double *bi = calloc((size_t)V * V, sizeof(double)), *from = calloc((size_t)V, sizeof(double));
    if (!bi || !from) {
        free(bi);
        free(from);
        task_score_free(out);
        snprintf(err, errlen, "task %s: out of memory for the bigram control", s->name);
        return -1;
    }
    for (size_t i = 0; i + 1 < c->n_train; i++) {
        bi[(size_t)c->train[i] * V + c->train[i + 1]] += 1;
        from[c->train[i]] += 1;
    }
    int rc = 0;
    for (int i = 0; i < s->n_items && rc == 0; i++) {
        const task_item *it = &s->items[i];
        int32_t prev;
        if ((rc = encode(c, it->context + it->context_len - 1, 1, &prev, s, i, err, errlen)))
            break;
        for (int j = 0; j < it->n_choices && rc == 0; j++) {
            double ll = 0.0;
            int32_t a = prev, b;
            for (size_t p = 0; p < it->choice_len[j]; p++) {
                if ((rc = encode(c, it->choice[j] + p, 1, &b, s, i, err, errlen)))
                    break;
                ll += rm_log((bi[(size_t)a * V + b] + 1.0) / (from[a] + V));
                a = b;
            }
            out->loglik[(size_t)i * TASKS_MAX_CHOICES + j] = ll;
        }
    }
    free(bi);
    free(from);
    if (rc) {
        task_score_free(out);
        return -1;
    }
    finish(out, s);
    return 0;
}

int tasks_score_ngram(const ngram_model *g, int T, const corpus *c, const task_set *s,
                      task_score *out, char *err, size_t errlen)
{
    if (s->shots < 0 || s->shots > s->n_pool) {
        snprintf(err, errlen, "task %s: %d-shot needs %d demonstration items, the pool has %d",
                 s->name, s->shots, s->shots, s->n_pool);
        return -1;
    }
    if (score_alloc(out, s->n_items, err, errlen, s->name))
        return -1;
    size_t cap = max_prefix(s) + (size_t)T + 2;
    int32_t *seq = malloc(cap * sizeof(int32_t));
    int *pick = malloc(((size_t)s->n_pool + 1) * sizeof(int));
    uint8_t *lost = calloc((size_t)s->n_items + 1, 1), *cut = calloc((size_t)s->n_items + 1, 1);
    int rc = 0;
    if (!seq || !pick || !lost || !cut) {
        snprintf(err, errlen, "task %s: out of memory for the n-gram control", s->name);
        rc = -1;
    }
    for (int i = 0; i < s->n_items && rc == 0; i++) {
        const task_item *it = &s->items[i];
        size_t plen, ctx0;
        if ((rc = build_prefix(c, s, i, seq, &plen, &ctx0, pick, err, errlen)))
            break;
        for (int j = 0; j < it->n_choices && rc == 0; j++) {
            size_t cl = it->choice_len[j];
            if (cl > (size_t)T) {
                snprintf(err, errlen, "task %s, item %d: choice %d has %zu characters, more "
                         "than the model's window of %d", s->name, i + 1, j + 1, cl, T);
                rc = -1;
                break;
            }
            if ((rc = encode(c, it->choice[j], cl, seq + plen, s, i, err, errlen)))
                break;
            size_t keep = (size_t)T + 1 - cl, drop = plen > keep ? plen - keep : 0;
            if (drop > 0 && ctx0 > 0)
                lost[i] = 1;
            if (drop > ctx0)
                cut[i] = 1;
            double ll = 0.0;
            for (size_t p = plen; p < plen + cl; p++)
                ll += ngram_model_logp(g, seq + drop, p - drop, seq[p]);
            out->loglik[(size_t)i * TASKS_MAX_CHOICES + j] = ll;
        }
    }
    free(seq);
    free(pick);
    if (rc == 0)
        for (int i = 0; i < s->n_items; i++) {
            out->lost_demos += lost[i];
            out->context_cut += cut[i];
        }
    free(lost);
    free(cut);
    if (rc) {
        task_score_free(out);
        return -1;
    }
    finish(out, s);
    return 0;
}
