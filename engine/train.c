#include "train.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <omp.h>

#include "data.h"
#include "gpt.h"
#include "kernels.h"
#include "tensorfile.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int check_corpus(const gpt_config *cfg, const corpus *c, char *err, size_t errlen)
{
    if ((size_t)cfg->context + 1 >= c->n_val || (size_t)cfg->context + 1 >= c->n_train) {
        snprintf(err, errlen,
                 "context=%d: must be shorter than both splits of %s (train %zu, validation %zu "
                 "tokens)",
                 cfg->context, cfg->data, c->n_train, c->n_val);
        return -1;
    }
    return 0;
}

int train_check(const gpt_config *cfg, char *err, size_t errlen)
{
    if (config_validate(cfg, err, errlen))
        return -1;
    corpus c;
    if (corpus_load(&c, cfg->data, err, errlen))
        return -1;
    int rc = check_corpus(cfg, &c, err, errlen);
    corpus_free(&c);
    return rc;
}

/* Whole validation split in non-overlapping windows of T, in window order. */
static void evaluate(gpt_model *m, const corpus *c, train_metrics *out)
{
    const int T = m->T, V = m->V, C = m->C;
    long n_win = (long)((c->n_val - 1) / (size_t)T);
    double loss = 0.0, norm = 0.0;
    long hits = 0;
    for (long w0 = 0; w0 < n_win; w0 += m->B) {
        int nb = (int)(n_win - w0 < m->B ? n_win - w0 : m->B);
        for (int b = 0; b < nb; b++) {
            const int32_t *src = c->val + (size_t)(w0 + b) * T;
            memcpy(m->inputs + (size_t)b * T, src, (size_t)T * sizeof(int32_t));
            memcpy(m->targets + (size_t)b * T, src + 1, (size_t)T * sizeof(int32_t));
        }
        gpt_forward(m, nb, 1, 0, 0);
        for (size_t i = 0; i < (size_t)nb * T; i++) {
            loss += m->losses[i];
            const float *z = m->logits + i * V;
            int best = 0;
            for (int v = 1; v < V; v++)
                if (z[v] > z[best])
                    best = v;
            hits += best == m->targets[i];
            const float *x = m->res[0] + i * C;
            double s = 0.0;
            for (int k = 0; k < C; k++)
                s += (double)x[k] * x[k];
            norm += sqrt(s);
        }
    }
    double n = (double)n_win * T;
    out->val_loss = loss / n;
    out->val_ppl = exp(out->val_loss);
    out->val_acc = (double)hits / n;
    out->embed_norm = norm / n;
}

#define ROW_FIELDS 5

static int save_checkpoint(const gpt_model *m, long step, const double *log, const char *path)
{
    tf_file *f = tf_new();
    uint32_t np = (uint32_t)m->n_params, two[2] = {(uint32_t)step, ROW_FIELDS};
    int32_t st = (int32_t)step;
    uint32_t one = 1;
    int rc = !f || tf_add(f, "params", TF_F32, 1, &np, m->params) ||
             tf_add(f, "adam_m", TF_F32, 1, &np, m->adam_m) ||
             tf_add(f, "adam_v", TF_F32, 1, &np, m->adam_v) ||
             tf_add(f, "step", TF_I32, 1, &one, &st) ||
             tf_add(f, "log", TF_F64, 2, two, log) || tf_write(f, path);
    tf_free(f);
    return rc ? -1 : 0;
}

static int load_checkpoint(gpt_model *m, const char *path, long *step, double *log, char *err,
                           size_t errlen)
{
    tf_file *f = tf_read(path, err, errlen);
    if (!f)
        return -1;
    const tf_tensor *p = tf_find(f, "params"), *mm = tf_find(f, "adam_m"),
                    *vv = tf_find(f, "adam_v"), *st = tf_find(f, "step"), *lg = tf_find(f, "log");
    int ok = p && mm && vv && st && lg && p->count == m->n_params && mm->count == m->n_params &&
             vv->count == m->n_params && st->count == 1 && p->dtype == TF_F32 &&
             lg->dtype == TF_F64;
    long s = ok ? *(const int32_t *)st->data : 0;
    ok = ok && s >= 0 && s <= m->cfg.iters && lg->count == (size_t)s * ROW_FIELDS;
    if (!ok) {
        snprintf(err, errlen, "checkpoint %s does not match this config (%zu parameters)", path,
                 m->n_params);
        tf_free(f);
        return -1;
    }
    memcpy(m->params, p->data, m->n_params * sizeof(float));
    memcpy(m->adam_m, mm->data, m->n_params * sizeof(float));
    memcpy(m->adam_v, vv->data, m->n_params * sizeof(float));
    memcpy(log, lg->data, lg->count * sizeof(double));
    *step = s;
    tf_free(f);
    return 0;
}

int train_run(const gpt_config *cfg, const train_hooks *hooks, train_metrics *out, char *err,
              size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (config_validate(cfg, err, errlen))
        return -1;
    corpus c;
    if (corpus_load(&c, cfg->data, err, errlen))
        return -1;
    if (check_corpus(cfg, &c, err, errlen)) {
        corpus_free(&c);
        return -1;
    }
    omp_set_num_threads(config_threads(cfg));
    gpt_model m;
    double *log = malloc((size_t)cfg->iters * ROW_FIELDS * sizeof(double));
    if (!log || gpt_init(&m, cfg, c.vocab, cfg->batch, err, errlen)) {
        if (!log)
            snprintf(err, errlen, "out of memory");
        else
            free(log);
        corpus_free(&c);
        return -1;
    }
    int rc = 0;
    long start = 0;
    if (hooks && hooks->checkpoint && hooks->resume && access(hooks->checkpoint, F_OK) == 0) {
        if (load_checkpoint(&m, hooks->checkpoint, &start, log, err, errlen)) {
            rc = -1;
            goto done;
        }
        out->resumed_from = start;
    }
    for (long s = 0; s < start && hooks && hooks->on_step; s++) {
        const double *r = log + s * ROW_FIELDS;
        train_row row = {(long)r[0], r[1], r[2], r[3], r[4]};
        if (hooks->on_step(hooks->ud, &row)) {
            out->stopped = 1;
            break;
        }
    }

    double t0 = now_s();
    long step = start;
    const int B = cfg->batch, T = cfg->context;
    for (; step < cfg->iters && !out->stopped; step++) {
        corpus_batch(&c, (uint64_t)cfg->seed, step, B, T, m.inputs, m.targets);
        train_row row = {step, gpt_lr(cfg, step), 0, NAN, NAN};
        row.loss = gpt_forward(&m, B, 1, 1, step);
        row.embed_norm = gpt_embed_norm(&m, B);
        if (isfinite(row.loss)) {
            gpt_zero_grad(&m);
            gpt_backward(&m, B);
            row.grad_norm = gpt_grad_norm(&m);
        }
        if (!isfinite(row.loss) || !isfinite(row.grad_norm)) {
            out->diverged = 1;
            out->diverged_step = step;
        } else {
            float scale = 1.0f;
            if (cfg->grad_clip > 0 && row.grad_norm > cfg->grad_clip)
                scale = (float)(cfg->grad_clip / row.grad_norm);
            gpt_adamw(&m, (float)row.lr, step + 1, scale);
        }
        double *r = log + step * ROW_FIELDS;
        r[0] = (double)step;
        r[1] = row.lr;
        r[2] = row.loss;
        r[3] = row.grad_norm;
        r[4] = row.embed_norm;
        out->final_grad_norm = row.grad_norm;
        out->train_loss = row.loss;
        if (hooks && hooks->on_step && hooks->on_step(hooks->ud, &row))
            out->stopped = 1;
        if (out->diverged) {
            step++;
            break;
        }
        if (hooks && hooks->checkpoint && hooks->checkpoint_every > 0 &&
            (step + 1) % hooks->checkpoint_every == 0 && step + 1 < cfg->iters &&
            save_checkpoint(&m, step + 1, log, hooks->checkpoint)) {
            snprintf(err, errlen, "cannot write checkpoint %s: %s", hooks->checkpoint,
                     strerror(errno));
            rc = -1;
            goto done;
        }
    }
    out->steps = step;
    if (out->stopped && hooks && hooks->checkpoint && step < cfg->iters &&
        save_checkpoint(&m, step, log, hooks->checkpoint)) {
        snprintf(err, errlen, "cannot write checkpoint %s: %s", hooks->checkpoint,
                 strerror(errno));
        rc = -1;
        goto done;
    }
    double t1 = now_s();
    out->tokens_per_s = t1 > t0 ? (double)(step - start) * B * T / (t1 - t0) : 0.0;
    if (!out->diverged && !out->stopped)
        evaluate(&m, &c, out);
    out->wall_s = now_s() - t0;
    out->params = (long)m.n_params;
    out->vocab = c.vocab;

done:
    kernels_release();
    gpt_free(&m);
    free(log);
    corpus_free(&c);
    return rc;
}
