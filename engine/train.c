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
#include "isa.h"
#include "gpt.h"
#include "kernels.h"
#include "pcg.h"
#include "rmath.h"
#include "tensorfile.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- log columns ----------------------------------------------------------------- */

enum { COL_STEP, COL_LR, COL_LOSS, COL_GNORM, COL_ENORM, COL_MAXLOGIT, N_BASE };
static const char *const base_cols[N_BASE] = {"step",       "lr",         "loss",
                                              "grad_norm",  "embed_norm", "max_abs_logit"};
static const char *const diag_cols[] = {
    "d_val_loss", "d_val_acc", "d_acc_macro", "d_ece", "d_brier", "d_logit_norm", "d_max_logit",
    "d_embed_norm", "d_embed_norm_letter", "d_embed_norm_digit", "d_embed_norm_punct",
    "d_embed_norm_space", "d_cos_first", "d_cos_final"};
#define N_DIAG ((int)(sizeof diag_cols / sizeof diag_cols[0]))

static int n_groups(const gpt_config *c)
{
    return gpt_config_n_groups(c);
}

int train_log_ncols(const gpt_config *cfg)
{
    return N_BASE + 3 * n_groups(cfg) + N_DIAG;
}

static void group_name(const gpt_config *c, int g, char *buf, size_t len)
{
    if (g == 0)
        snprintf(buf, len, "emb");
    else if (g <= c->n_layer)
        snprintf(buf, len, "b%d", g);
    else if (g == c->n_layer + 1)
        snprintf(buf, len, "lnf");
    else if (g == c->n_layer + 2 && config_embed_norm_tensors(c) > 0)
        snprintf(buf, len, "en");
    else
        snprintf(buf, len, "head");
}

void train_log_colname(const gpt_config *cfg, int i, char *buf, size_t len)
{
    int ng = n_groups(cfg);
    if (i < N_BASE) {
        snprintf(buf, len, "%s", base_cols[i]);
    } else if (i < N_BASE + 3 * ng) {
        static const char *const stat[3] = {"gn", "vmean", "vmax"};
        char g[16];
        group_name(cfg, (i - N_BASE) % ng, g, sizeof g);
        snprintf(buf, len, "%s_%s", stat[(i - N_BASE) / ng], g);
    } else {
        snprintf(buf, len, "%s", diag_cols[i - N_BASE - 3 * ng]);
    }
}

#define STR_(x) #x
#define STR(x) STR_(x)
/* The text `bin/repro help` prints under "definitions:" (lines of at most 90 columns). */
const char *train_definitions(void)
{
    return "  rho             initial embedding RMS: sqrt(mean over every vocabulary entry v,\n"
           "                  position p and channel c of (wte[v,c] + wpe[p,c])^2) of the drawn\n"
           "                  initial weights, exact from double sums over wte and wpe\n"
           "                  (engine/gpt.h); embed_norm=scale multiplies tok+pos by 1/rho,\n"
           "                  layernorm_matched starts its gain at rho\n"
           "  diverged        the loss or gradient norm is non-finite, or the training loss\n"
           "                  exceeds l0 + " STR(DIVERGE_MARGIN) " nat (l0 = loss of step 0) for "
           STR(DIVERGE_STEPS) " consecutive\n"
           "                  steps; training stops there; diverge_step = the first such\n"
           "                  step, diverge_lr = its learning rate\n"
           "  max_loss_jump   max(0, max over t of loss[t] - min(loss[0..t-1])), in nats\n"
           "  logit_growth    max over steps of the batch's max |logit| / its value at step 0\n"
           "  subset_acc      argmax accuracy on " STR(DIAG_SUBSETS) " subsets of "
           STR(DIAG_SUBSET_SIZE) " validation positions\n"
           "                  (PCG stream 'subset' of seed), with subset_acc_mean and _sd\n"
           "  bal_acc         (balanced_acc = true) balanced accuracy: the mean over the\n"
           "                  target symbols present of their recall, on the validation\n"
           "                  split, and bal_subset_acc on " STR(DIAG_BAL_SUBSETS) " subsets of "
           STR(DIAG_BAL_SUBSET_SIZE) " positions\n"
           "                  (PCG stream 'balanced' of seed), with _mean and _sd\n"
           "  ngram_ppl       add-one smoothed unigram and bigram models of the training\n"
           "                  split, perplexity on the validation split (engine/ngram.h)\n";
}
#undef STR
#undef STR_

void train_set_threads(int n)
{
    if (n >= 1 && n <= CONFIG_MAX_THREADS)
        omp_set_num_threads(n);
}

const char *train_status_name(int status)
{
    static const char *const names[TRAIN_NSTATUS] = {
        [TRAIN_ECONFIG] = "config",         [TRAIN_ECORPUS] = "corpus",
        [TRAIN_ECHECKPOINT] = "checkpoint", [TRAIN_EIO] = "filesystem",
        [TRAIN_ENOMEM] = "memory"};
    return status > TRAIN_OK && status < TRAIN_NSTATUS ? names[status] : NULL;
}

/* TRAIN_ENOMEM with a message when a kernel could not allocate its scratch since the
 * model was set up (the output of that step or evaluation is unspecified), else 0. */
static int check_kernels(char *err, size_t errlen)
{
    if (!kernels_failed())
        return TRAIN_OK;
    snprintf(err, errlen, "out of memory for the compute kernels' scratch buffers");
    return TRAIN_ENOMEM;
}

/* ---- evaluation ------------------------------------------------------------------ */

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
        return TRAIN_ECONFIG;
    corpus c;
    if (corpus_scan(&c, cfg->data, err, errlen))
        return TRAIN_ECORPUS;
    int rc = check_corpus(cfg, &c, err, errlen) ? TRAIN_ECONFIG : TRAIN_OK;
    corpus_free(&c);
    return rc;
}

enum { PS_CONF, PS_HIT, PS_BRIER, PS_LNORM, PS_LMAX, PS_ENORM, N_PS };

/* Windows w0 .. w0 + nb - 1 of the validation split into the model's inputs and targets. */
static void load_windows(gpt_model *m, const corpus *c, long w0, int nb)
{
    const int T = m->T;
    for (int b = 0; b < nb; b++) {
        const int32_t *src = c->val + (size_t)(w0 + b) * T;
        memcpy(m->inputs + (size_t)b * T, src, (size_t)T * sizeof(int32_t));
        memcpy(m->targets + (size_t)b * T, src + 1, (size_t)T * sizeof(int32_t));
    }
}

/* Per position of the last forward pass (npos of them), `per` values into ps: the PS_*
 * measures and the residual norm after each of the L + 1 stages.  One thread per position. */
static void position_stats(const gpt_model *m, long npos, size_t per, double *ps)
{
    const int V = m->V, C = m->C, L = m->L;
#pragma omp parallel for schedule(static)
    for (long i = 0; i < npos; i++) {
        const float *z = m->logits + i * V, *p = m->probs + i * V;
        double *o = ps + i * per;
        int best = 0;
        double l2 = 0;
        for (int v = 0; v < V; v++) {
            if (z[v] > z[best])
                best = v;
            l2 += (double)z[v] * z[v];
        }
        o[PS_CONF] = p[best];
        o[PS_HIT] = best == m->targets[i];
        o[PS_BRIER] = diag_brier(p, V, m->targets[i]);
        o[PS_LNORM] = sqrt(l2);
        o[PS_LMAX] = z[best];
        for (int l = 0; l <= L; l++) {
            const float *x = m->res[l] + i * C;
            double s = 0;
            for (int k = 0; k < C; k++)
                s += (double)x[k] * x[k];
            o[N_PS + l] = sqrt(s);
        }
        o[PS_ENORM] = o[N_PS];
    }
}

/* Per sequence b < nb: the mean cosine of the first and of the final residual stream
 * into seq[2b], seq[2b + 1] (cos_sum: C doubles of scratch per sequence). */
static void sequence_stats(const gpt_model *m, int nb, double *seq, double *cos_sum)
{
    const int T = m->T, C = m->C, L = m->L;
#pragma omp parallel for schedule(static)
    for (int b = 0; b < nb; b++) {
        double *sum = cos_sum + (size_t)b * C;
        seq[2 * b] = diag_cosine_mean(m->res[0] + (size_t)b * T * C, T, C, sum);
        seq[2 * b + 1] = diag_cosine_mean(m->res[L] + (size_t)b * T * C, T, C, sum);
    }
}

/* Adds the nb windows' positions (ps, in position order) and sequences (seq) to the sums
 * d; with hits != NULL, each position's hit at its place from window w0 on. */
static void accumulate(diag_sums *d, const gpt_model *m, const int *cls, const double *ps,
                       size_t per, const double *seq, int nb, long w0, uint8_t *hits)
{
    const int T = m->T, L = m->L;
    long npos = (long)nb * T;
    for (long i = 0; i < npos; i++) {
        const double *o = ps + i * per;
        int tgt = m->targets[i], t = (int)(i % T);
        d->n += 1;
        d->loss += m->losses[i];
        d->hits += o[PS_HIT];
        d->brier += o[PS_BRIER];
        d->logit_norm += o[PS_LNORM];
        d->max_logit += o[PS_LMAX];
        int k = diag_bin(o[PS_CONF]);
        d->bin_n[k] += 1;
        d->bin_conf[k] += o[PS_CONF];
        d->bin_hits[k] += o[PS_HIT];
        d->cls_n[cls[tgt]] += 1;
        d->cls_hits[cls[tgt]] += o[PS_HIT];
        if (tgt >= 0 && tgt < DIAG_SYMBOLS) {
            d->sym_n[tgt] += 1;
            d->sym_hits[tgt] += o[PS_HIT];
        }
        d->emb_n[cls[m->inputs[i]]] += 1;
        d->emb_norm_cls[cls[m->inputs[i]]] += o[PS_ENORM];
        d->emb_norm += o[PS_ENORM];
        for (int l = 0; l <= L; l++)
            d->resid_norm[l] += o[N_PS + l];
        d->pos_loss[t] += m->losses[i];
        d->pos_n[t] += 1;
        if (hits)
            hits[(size_t)w0 * T + (size_t)i] = o[PS_HIT] != 0;
    }
    for (int b = 0; b < nb; b++) {
        d->cos_first += seq[2 * b];
        d->cos_final += seq[2 * b + 1];
        d->n_seq += 1;
    }
}

/* The first max_windows non-overlapping windows of the validation split (all if
 * max_windows <= 0), in window order, every instrument of diag.h; with temperature != 0
 * also the temperature scan (which stores every logit); with hits != NULL, each
 * position's argmax hit (0/1) in position order.  The forward seconds go to *fwd_s.
 * TRAIN_OK, or TRAIN_ENOMEM with a message. */
static int evaluate(gpt_model *m, const corpus *c, long max_windows, int temperature,
                    const int *cls, diag_sums *d, diag_result *r, uint8_t *hits, double *fwd_s,
                    char *err, size_t errlen)
{
    const int T = m->T, V = m->V, C = m->C, L = m->L;
    long n_win = (long)((c->n_val - 1) / (size_t)T);
    if (max_windows > 0 && max_windows < n_win)
        n_win = max_windows;
    size_t per = N_PS + (size_t)L + 1;
    double *ps = malloc((size_t)m->B * T * per * sizeof(double));
    double *seq = malloc(2 * (size_t)m->B * sizeof(double));
    double *cos_sum = malloc((size_t)m->B * C * sizeof(double)); /* diag_cosine_mean's */
    /* every logit of the split (tens of MB): huge pages spare a page fault per 4 KiB */
    float *all_logits = temperature ? kernels_alloc((size_t)n_win * T * V * sizeof(float)) : NULL;
    int32_t *all_targets = temperature ? malloc((size_t)n_win * T * sizeof(int32_t)) : NULL;
    int rc = TRAIN_OK;
    double fwd = 0.0;
    if (!ps || !seq || !cos_sum || (temperature && (!all_logits || !all_targets))) {
        snprintf(err, errlen, "out of memory for the evaluation of %ld validation windows",
                 n_win);
        rc = TRAIN_ENOMEM;
        goto done;
    }
    for (long w0 = 0; w0 < n_win; w0 += m->B) {
        int nb = (int)(n_win - w0 < m->B ? n_win - w0 : m->B);
        load_windows(m, c, w0, nb);
        double t0 = now_s();
        gpt_forward(m, nb, 1, 0, 0);
        fwd += now_s() - t0;
        if ((rc = check_kernels(err, errlen)) != TRAIN_OK)
            goto done;
        long npos = (long)nb * T;
        position_stats(m, npos, per, ps);
        sequence_stats(m, nb, seq, cos_sum);
        accumulate(d, m, cls, ps, per, seq, nb, w0, hits);
        if (temperature) {
            memcpy(all_logits + (size_t)w0 * T * V, m->logits, (size_t)npos * V * sizeof(float));
            memcpy(all_targets + (size_t)w0 * T, m->targets, (size_t)npos * sizeof(int32_t));
        }
    }
    diag_finish(d, r);
    if (temperature && diag_temperature(all_logits, all_targets, (size_t)n_win * T, V, r)) {
        snprintf(err, errlen, "out of memory for the temperature scan of %ld validation "
                 "windows", n_win);
        rc = TRAIN_ENOMEM;
        goto done;
    }
    *fwd_s = fwd;
done:
    free(ps);
    free(seq);
    free(cos_sum);
    free(all_logits);
    free(all_targets);
    return rc;
}

/* ---- checkpoints ----------------------------------------------------------------- */

/* The config id of a checkpoint: tensor "config_id", its characters as i32 (the tensor
 * file has no byte type), at most CONFIG_ID_MAX of them. */
#define CONFIG_ID_MAX 128

/* Adds config_id (NULL: nothing) to f as tensor "config_id"; 0, or -1 out of memory. */
static int add_config_id(tf_file *f, const char *config_id)
{
    int32_t id[CONFIG_ID_MAX];
    uint32_t id_len = config_id ? (uint32_t)strnlen(config_id, CONFIG_ID_MAX) : 0;
    for (uint32_t i = 0; i < id_len; i++)
        id[i] = (unsigned char)config_id[i];
    return id_len > 0 ? tf_add(f, "config_id", TF_I32, 1, &id_len, id) : 0;
}

/* The checkpoint being published, for its hook (train_hooks.on_checkpoint). */
typedef struct {
    const train_hooks *hooks;
    long step;
} ckpt_vet;

static int vet_checkpoint(void *ud, const char *tmp_path)
{
    const ckpt_vet *v = ud;
    return v->hooks->on_checkpoint(v->hooks->ud, v->step, tmp_path);
}

/* TRAIN_OK, or TRAIN_ENOMEM or TRAIN_EIO with a message naming the path.  hooks (or NULL):
 * its on_checkpoint sees the complete file before it is renamed into place. */
static int save_checkpoint(const gpt_model *m, long step, const double *log, int ncols,
                           const char *config_id, const char *path, const train_hooks *hooks,
                           char *err, size_t errlen)
{
    ckpt_vet v = {hooks, step};
    tf_file *f = tf_new();
    uint32_t np = (uint32_t)m->n_params, two[2] = {(uint32_t)step, (uint32_t)ncols};
    int32_t st = (int32_t)step;
    uint32_t one = 1;
    int rc = TRAIN_OK;
    if (!f || add_config_id(f, config_id) ||
        tf_add(f, "params", TF_F32, 1, &np, m->params) ||
        tf_add(f, "adam_m", TF_F32, 1, &np, m->adam_m) ||
        tf_add(f, "adam_v", TF_F32, 1, &np, m->adam_v) ||
        tf_add(f, "step", TF_I32, 1, &one, &st) || tf_add(f, "log", TF_F64, 2, two, log)) {
        snprintf(err, errlen, "out of memory for checkpoint %s", path);
        rc = TRAIN_ENOMEM;
    } else if (tf_write_vetted(f, path, hooks && hooks->on_checkpoint ? vet_checkpoint : NULL,
                               &v)) {
        snprintf(err, errlen, "cannot write checkpoint %s: %s", path, strerror(errno));
        rc = TRAIN_EIO;
    }
    tf_free(f);
    return rc;
}

/* 0 when the checkpoint f carries config_id (NULL: not checked), else -1 with a message
 * naming the path and both ids. */
static int check_config_id_of(const tf_file *f, const char *config_id, const char *path,
                              int kept, char *err, size_t errlen)
{
    if (!config_id)
        return 0;
    const tf_tensor *t = tf_find(f, "config_id");
    char have[CONFIG_ID_MAX + 1];
    size_t n = 0;
    if (t && t->dtype == TF_I32 && t->count <= CONFIG_ID_MAX) {
        for (n = 0; n < t->count; n++) {
            int32_t c = ((const int32_t *)t->data)[n];
            have[n] = (char)(c > 32 && c < 127 ? c : '?');
        }
    }
    have[n] = '\0';
    if (n > 0 && strcmp(have, config_id) == 0)
        return 0;
    if (kept)
        snprintf(err, errlen, "%s is the kept model of another config (%.12s), not of this "
                 "one (%.12s): refused (give the config.json and config_sha256 of the record "
                 "it belongs to)", path, n > 0 ? have : "none", config_id);
    else if (n == 0)
        snprintf(err, errlen, "%s carries no config hash (not a checkpoint this version "
                 "wrote): refused; remove it to train this run from the start", path);
    else
        snprintf(err, errlen, "%s is a checkpoint of another config (%.12s), not of this one "
                 "(%.12s): refused; remove it to train this run from the start", path, have,
                 config_id);
    return -1;
}

static int check_config_id(const tf_file *f, const char *config_id, const char *path, char *err,
                           size_t errlen)
{
    return check_config_id_of(f, config_id, path, 0, err, errlen);
}

/* The most bytes a checkpoint of m takes (save_checkpoint: config_id, params, adam_m,
 * adam_v, step, log): a larger file is refused before it is read. */
static uint64_t checkpoint_max_bytes(const gpt_model *m, int ncols)
{
    return tf_max_bytes(6, (uint64_t)CONFIG_ID_MAX * 4 + 3 * (uint64_t)m->n_params * 4 + 4 +
                               (uint64_t)m->cfg.iters * (uint64_t)ncols * 8);
}

/* Restores m, *step and log from the checkpoint f read from path. */
static int apply_checkpoint(gpt_model *m, const tf_file *f, const char *path, int ncols,
                            const char *config_id, long *step, double *log, char *err,
                            size_t errlen)
{
    if (check_config_id(f, config_id, path, err, errlen))
        return -1;
    const tf_tensor *p = tf_find(f, "params"), *mm = tf_find(f, "adam_m"),
                    *vv = tf_find(f, "adam_v"), *st = tf_find(f, "step"), *lg = tf_find(f, "log");
    int ok = p && mm && vv && st && lg && p->count == m->n_params && mm->count == m->n_params &&
             vv->count == m->n_params && st->count == 1 && p->dtype == TF_F32 &&
             mm->dtype == TF_F32 && vv->dtype == TF_F32 && lg->dtype == TF_F64 &&
             st->dtype == TF_I32;
    long s = ok ? *(const int32_t *)st->data : 0;
    ok = ok && s >= 0 && s <= m->cfg.iters && lg->count == (size_t)s * ncols;
    if (!ok) {
        snprintf(err, errlen, "%s: does not match this config (%zu parameters)", path,
                 m->n_params);
        return -1;
    }
    memcpy(m->params, p->data, m->n_params * sizeof(float));
    memcpy(m->adam_m, mm->data, m->n_params * sizeof(float));
    memcpy(m->adam_v, vv->data, m->n_params * sizeof(float));
    memcpy(log, lg->data, lg->count * sizeof(double));
    *step = s;
    return 0;
}

static int load_checkpoint(gpt_model *m, const char *path, int ncols, const char *config_id,
                           long *step, double *log, char *err, size_t errlen)
{
    tf_file *f = tf_read(path, checkpoint_max_bytes(m, ncols), err, errlen);
    if (!f)
        return -1;
    int rc = apply_checkpoint(m, f, path, ncols, config_id, step, log, err, errlen);
    tf_free(f);
    return rc;
}

/* ---- the run --------------------------------------------------------------------- */

void train_metrics_free(train_metrics *m)
{
    free(m->resid_norm);
    free(m->pos_loss);
    m->resid_norm = m->pos_loss = NULL;
}

static void fill_diag_cols(double *row, int first, const diag_result *r)
{
    const double v[N_DIAG] = {r->val_loss, r->val_acc, r->acc_macro, r->ece, r->brier,
                              r->logit_norm, r->max_logit, r->embed_norm,
                              r->embed_norm_class[CLS_LETTER], r->embed_norm_class[CLS_DIGIT],
                              r->embed_norm_class[CLS_PUNCT], r->embed_norm_class[CLS_SPACE],
                              r->cos_first, r->cos_final};
    memcpy(row + first, v, sizeof v);
}

/* One run in progress: the corpus, the model and the log of every step. */
typedef struct {
    const gpt_config *cfg;
    corpus c;
    gpt_model m;
    int cls[256]; /* diag.h class of each vocabulary entry */
    int ncols, ng;
    double *log; /* (iters, ncols) */
    double diag_s; /* seconds spent in the periodic diagnostics (not in tokens/s) */
} run_state;

/* The log row of training step `step`: forward, backward, the AdamW update and, on
 * diag_every steps, the diagnostics.  A non-finite loss or gradient norm marks the
 * step diverged (*diverged = 1) and leaves the weights as they were.  TRAIN_OK, or
 * TRAIN_ENOMEM with a message. */
static int train_step(run_state *rs, long step, int *diverged, char *err, size_t errlen)
{
    const gpt_config *cfg = rs->cfg;
    gpt_model *m = &rs->m;
    const int B = cfg->batch, T = cfg->context, ng = rs->ng;
    double *r = rs->log + step * rs->ncols;
    for (int k = 0; k < rs->ncols; k++)
        r[k] = NAN;
    corpus_batch(&rs->c, (uint64_t)config_data_seed(cfg), step, B, T, m->inputs, m->targets);
    r[COL_STEP] = (double)step;
    r[COL_LR] = gpt_lr(cfg, step);
    r[COL_LOSS] = gpt_forward(m, B, 1, 1, step);
    r[COL_ENORM] = gpt_embed_norm(m, B);
    r[COL_MAXLOGIT] = gpt_max_abs_logit(m, B);
    if (isfinite(r[COL_LOSS])) {
        gpt_zero_grad(m);
        gpt_backward(m, B);
        r[COL_GNORM] = gpt_grad_norm_groups(m, r + N_BASE);
    }
    int rc = check_kernels(err, errlen);
    if (rc != TRAIN_OK)
        return rc;
    if (!isfinite(r[COL_LOSS]) || !isfinite(r[COL_GNORM])) {
        *diverged = 1;
        return TRAIN_OK;
    }
    float scale = 1.0f;
    if (cfg->grad_clip > 0 && r[COL_GNORM] > cfg->grad_clip)
        scale = (float)(cfg->grad_clip / r[COL_GNORM]);
    gpt_adamw(m, (float)r[COL_LR], step + 1, scale);
    gpt_adam_v_stats(m, r + N_BASE + ng, r + N_BASE + 2 * ng);
    if (cfg->diag_every > 0 && (step + 1) % cfg->diag_every == 0) {
        double d0 = now_s(), fwd;
        diag_sums ds;
        diag_result dr;
        if (diag_sums_init(&ds, m->L, m->T) != 0) {
            snprintf(err, errlen, "out of memory for the diagnostics of step %ld", step);
            return TRAIN_ENOMEM;
        }
        rc = evaluate(m, &rs->c, cfg->diag_windows, 0, rs->cls, &ds, &dr, NULL, &fwd, err,
                      errlen);
        if (rc == TRAIN_OK)
            fill_diag_cols(r, N_BASE + 3 * ng, &dr);
        diag_sums_free(&ds);
        rs->diag_s += now_s() - d0;
    }
    return rc;
}

/* The final evaluation on the whole validation split into out.  TRAIN_OK, or
 * TRAIN_ENOMEM with a message. */
static int final_evaluation(run_state *rs, long max_windows, train_metrics *out, char *err,
                            size_t errlen)
{
    gpt_model *m = &rs->m;
    const int T = m->T;
    long n_win = (long)((rs->c.n_val - 1) / (size_t)T);
    if (max_windows > 0 && max_windows < n_win)
        n_win = max_windows;
    diag_sums dsum;
    if (diag_sums_init(&dsum, m->L, T) != 0) {
        snprintf(err, errlen, "out of memory for the final evaluation");
        return TRAIN_ENOMEM;
    }
    uint8_t *hits = malloc((size_t)n_win * T);
    double fwd = 0.0;
    int rc = hits ? evaluate(m, &rs->c, n_win, 1, rs->cls, &dsum, &out->diag, hits, &fwd, err,
                             errlen)
                  : TRAIN_ENOMEM;
    if (!hits)
        snprintf(err, errlen, "out of memory for the final evaluation");
    if (rc == TRAIN_OK && diag_subset_acc(hits, (size_t)n_win * T, (uint64_t)rs->cfg->seed,
                                          out->subset_acc, &out->subset_acc_mean,
                                          &out->subset_acc_sd)) {
        snprintf(err, errlen, "out of memory for the subset accuracies");
        rc = TRAIN_ENOMEM;
    }
    /* the windows are consecutive: position j's target is val[j + 1] */
    if (rc == TRAIN_OK && rs->cfg->balanced_acc &&
        diag_balanced_subsets(rs->c.val + 1, hits, (size_t)n_win * T, m->V,
                              (uint64_t)rs->cfg->seed, out->bal_subset_acc,
                              &out->bal_subset_acc_mean, &out->bal_subset_acc_sd)) {
        snprintf(err, errlen, "out of memory for the balanced subset accuracies");
        rc = TRAIN_ENOMEM;
    }
    if (rc == TRAIN_OK) {
        out->eval_tokens_per_s = fwd > 0 ? (double)n_win * T / fwd : 0.0;
        memcpy(out->resid_norm, out->diag.resid_norm, ((size_t)m->L + 1) * sizeof(double));
        memcpy(out->pos_loss, out->diag.pos_loss, (size_t)T * sizeof(double));
        out->diag.resid_norm = out->resid_norm;
        out->diag.pos_loss = out->pos_loss;
        out->evaluated = 1;
    }
    free(hits);
    diag_sums_free(&dsum);
    return rc;
}

/* Replays the logged rows of steps [0, start) of a resumed run to on_step. */
static void replay_log(const run_state *rs, const train_hooks *hooks, long start,
                       train_metrics *out)
{
    for (long s = 0; s < start && hooks && hooks->on_step; s++) {
        train_row row = {s, rs->ncols, rs->log + s * rs->ncols};
        if (hooks->on_step(hooks->ud, &row)) {
            out->stopped = 1;
            break;
        }
    }
}

static int want_checkpoint(const train_hooks *hooks, long steps_done, long iters)
{
    return hooks && hooks->checkpoint && hooks->checkpoint_every > 0 &&
           steps_done % hooks->checkpoint_every == 0 && steps_done < iters;
}

/* Sets up rs (the corpus, the model, the log); on failure frees what it made. */
static int run_setup(run_state *rs, const gpt_config *cfg, train_metrics *out, char *err,
                     size_t errlen)
{
    memset(rs, 0, sizeof *rs);
    rs->cfg = cfg;
    if (config_validate(cfg, err, errlen))
        return TRAIN_ECONFIG;
    if (corpus_load(&rs->c, cfg->data, err, errlen))
        return TRAIN_ECORPUS;
    if (check_corpus(cfg, &rs->c, err, errlen)) {
        corpus_free(&rs->c);
        return TRAIN_ECONFIG;
    }
    omp_set_num_threads(config_threads(cfg));
    rs->ncols = train_log_ncols(cfg);
    rs->ng = n_groups(cfg);
    for (int v = 0; v < rs->c.vocab; v++)
        rs->cls[v] = diag_class_of_byte(rs->c.itos[v]);
    rs->log = malloc((size_t)cfg->iters * rs->ncols * sizeof(double));
    out->resid_norm = malloc(((size_t)cfg->n_layer + 1) * sizeof(double));
    out->pos_loss = malloc((size_t)cfg->context * sizeof(double));
    int rc = TRAIN_OK;
    if (!rs->log || !out->resid_norm || !out->pos_loss) {
        snprintf(err, errlen, "out of memory for the log of %d steps", cfg->iters);
        rc = TRAIN_ENOMEM;
    } else if (gpt_init(&rs->m, cfg, rs->c.vocab, cfg->batch, err, errlen)) {
        rc = TRAIN_ENOMEM; /* gpt_init freed what it made */
    }
    if (rc != TRAIN_OK) {
        free(rs->log);
        train_metrics_free(out);
        corpus_free(&rs->c);
    }
    return rc;
}

/* ---- kept models ------------------------------------------------------------------ */

/* The final weights and the vocabulary (train.h).  TRAIN_OK, TRAIN_ENOMEM or TRAIN_EIO. */
static int save_model(const run_state *rs, const char *config_id, const char *path, char *err,
                      size_t errlen)
{
    const gpt_model *m = &rs->m;
    tf_file *f = tf_new();
    uint32_t np = (uint32_t)m->n_params, nv = (uint32_t)rs->c.vocab;
    int32_t itos[256];
    for (int v = 0; v < rs->c.vocab; v++)
        itos[v] = rs->c.itos[v];
    int rc = TRAIN_OK;
    uint32_t one = 1;
    double rho = m->embed_rms;
    if (!f || add_config_id(f, config_id) || tf_add(f, "params", TF_F32, 1, &np, m->params) ||
        tf_add(f, "itos", TF_I32, 1, &nv, itos) ||
        tf_add(f, "embed_rms", TF_F64, 1, &one, &rho) ||
        (m->cfg.embed_norm == EMBED_SCALE &&
         tf_add(f, "embed_scale", TF_F32, 1, &one, &m->embed_scale))) {
        snprintf(err, errlen, "out of memory for the model %s", path);
        rc = TRAIN_ENOMEM;
    } else if (tf_write(f, path)) {
        snprintf(err, errlen, "cannot write the model %s: %s", path, strerror(errno));
        rc = TRAIN_EIO;
    }
    tf_free(f);
    return rc;
}

uint64_t train_model_max_bytes(const gpt_config *cfg, int vocab)
{
    /* config_id, params, itos, embed_rms, embed_scale (save_model) */
    return tf_max_bytes(5, (uint64_t)CONFIG_ID_MAX * 4 + (uint64_t)gpt_param_count(cfg, vocab) * 4 +
                               (uint64_t)vocab * 4 + 8 + 4);
}

/* Puts the kept model f read from path into rs->m, checking its config id, size,
 * vocabulary and constants.  0, or -1 with a message naming the path. */
static int apply_model(run_state *rs, const tf_file *f, const char *path, const char *config_id,
                       char *err, size_t errlen)
{
    if (check_config_id_of(f, config_id, path, 1, err, errlen))
        return -1;
    const tf_tensor *p = tf_find(f, "params"), *it = tf_find(f, "itos"),
                    *rho = tf_find(f, "embed_rms"), *sc = tf_find(f, "embed_scale");
    int ok = p && it && p->dtype == TF_F32 && p->count == rs->m.n_params &&
             it->dtype == TF_I32 && it->count == (size_t)rs->c.vocab;
    for (int v = 0; ok && v < rs->c.vocab; v++)
        ok = ((const int32_t *)it->data)[v] == rs->c.itos[v];
    /* the constants stored with the weights (models kept before them have none) are the
     * ones this config's initialization gives */
    ok = ok && (!rho || (rho->dtype == TF_F64 && rho->count == 1 &&
                         *(const double *)rho->data == rs->m.embed_rms));
    ok = ok && (!sc || (sc->dtype == TF_F32 && sc->count == 1 &&
                        *(const float *)sc->data == rs->m.embed_scale));
    if (!ok) {
        snprintf(err, errlen, "%s: not a model of this config and corpus (%zu parameters, "
                 "%d characters)", path, rs->m.n_params, rs->c.vocab);
        return -1;
    }
    memcpy(rs->m.params, p->data, rs->m.n_params * sizeof(float));
    return 0;
}

static int load_model(run_state *rs, const char *path, const char *config_id, char *err,
                      size_t errlen)
{
    tf_file *f = tf_read(path, train_model_max_bytes(rs->cfg, rs->c.vocab), err, errlen);
    if (!f)
        return -1;
    int rc = apply_model(rs, f, path, config_id, err, errlen);
    tf_free(f);
    return rc;
}

/* rs set up for cfg with the kept model's weights; on failure nothing to free. */
static int model_setup(run_state *rs, const gpt_config *cfg, const char *path,
                       const char *config_id, train_metrics *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    int rc = run_setup(rs, cfg, out, err, errlen);
    if (rc != TRAIN_OK)
        return rc;
    if (load_model(rs, path, config_id, err, errlen)) {
        gpt_free(&rs->m);
        free(rs->log);
        train_metrics_free(out);
        corpus_free(&rs->c);
        return TRAIN_ECHECKPOINT;
    }
    return TRAIN_OK;
}

static void model_release(run_state *rs)
{
    kernels_release();
    gpt_free(&rs->m);
    free(rs->log);
    corpus_free(&rs->c);
}

static int eval_flushed(const gpt_config *cfg, const char *path, const char *config_id,
                        train_metrics *out, char *err, size_t errlen)
{
    run_state rs;
    int rc = model_setup(&rs, cfg, path, config_id, out, err, errlen);
    if (rc != TRAIN_OK)
        return rc;
    double t0 = now_s();
    rc = final_evaluation(&rs, 0, out, err, errlen);
    out->wall_s = now_s() - t0;
    out->params = (long)rs.m.n_params;
    out->vocab = rs.c.vocab;
    out->n_layer = rs.m.L;
    out->balanced_acc = cfg->balanced_acc;
    out->context = rs.m.T;
    out->final_grad_norm = out->train_loss = NAN;
    out->curve.init_loss = out->curve.max_grad_norm = out->curve.max_loss_jump = NAN;
    out->curve.max_abs_logit = out->curve.logit_growth = NAN;
    out->curve.max_grad_norm_step = out->curve.max_loss_jump_step = -1;
    out->embed_init_rms = out->embed_scale = NAN;
    model_release(&rs);
    if (rc != TRAIN_OK)
        train_metrics_free(out);
    return rc;
}

int train_eval_model(const gpt_config *cfg, const char *path, const char *config_id,
                     train_metrics *out, char *err, size_t errlen)
{
    const unsigned long saved = isa_flush_begin();
#pragma omp parallel
    isa_flush_begin();
    int rc = eval_flushed(cfg, path, config_id, out, err, errlen);
#pragma omp parallel
    isa_flush_end(saved);
    isa_flush_end(saved);
    return rc;
}

static int read_model_flushed(const gpt_config *cfg, const char *path, const char *config_id,
                              float *params, size_t cap, train_model *out, char *err,
                              size_t errlen)
{
    memset(out, 0, sizeof *out);
    train_metrics unused;
    run_state rs;
    int rc = model_setup(&rs, cfg, path, config_id, &unused, err, errlen);
    if (rc != TRAIN_OK)
        return rc;
    train_metrics_free(&unused);
    if (rs.m.n_params > cap) {
        snprintf(err, errlen, "%s: %zu parameters, more than the %zu given room", path,
                 rs.m.n_params, cap);
        rc = TRAIN_ENOMEM;
    } else {
        memcpy(params, rs.m.params, rs.m.n_params * sizeof(float));
        out->n_params = rs.m.n_params;
        out->vocab = rs.c.vocab;
        for (int v = 0; v < rs.c.vocab; v++)
            out->itos[v] = rs.c.itos[v];
        out->embed_rms = rs.m.embed_rms;
        out->embed_scale = rs.m.embed_scale;
    }
    model_release(&rs);
    return rc;
}

int train_read_model(const gpt_config *cfg, const char *path, const char *config_id,
                     float *params, size_t cap, train_model *out, char *err, size_t errlen)
{
    const unsigned long saved = isa_flush_begin();
#pragma omp parallel
    isa_flush_begin();
    int rc = read_model_flushed(cfg, path, config_id, params, cap, out, err, errlen);
#pragma omp parallel
    isa_flush_end(saved);
    isa_flush_end(saved);
    return rc;
}

/* The next byte's token from the logits of one position. */
static int draw_token(const float *logits, int V, double temperature, pcg32 *r)
{
    int best = 0;
    for (int v = 1; v < V; v++)
        if (logits[v] > logits[best])
            best = v;
    double u = pcg32_uniform_double(r); /* drawn at every temperature: one draw per byte */
    if (temperature <= 0.0)
        return best;
    double total = 0.0, w[256];
    for (int v = 0; v < V; v++) {
        w[v] = rm_exp(((double)logits[v] - logits[best]) / temperature);
        total += w[v];
    }
    double acc = 0.0, target = u * total;
    for (int v = 0; v < V; v++) {
        acc += w[v];
        if (target < acc)
            return v;
    }
    return best;
}

static int sample_flushed(const gpt_config *cfg, const char *path, const char *config_id,
                          const char *prompt, size_t prompt_len, long n, uint64_t seed,
                          double temperature, char *text, char *err, size_t errlen)
{
    if (prompt_len < 1) {
        snprintf(err, errlen, "the prompt is empty (it needs at least one character)");
        return TRAIN_ECONFIG;
    }
    train_metrics unused;
    run_state rs;
    int rc = model_setup(&rs, cfg, path, config_id, &unused, err, errlen);
    if (rc != TRAIN_OK)
        return rc;
    train_metrics_free(&unused);
    gpt_model *m = &rs.m;
    const int T = m->T, V = m->V;
    size_t total = prompt_len + (size_t)n;
    int32_t *ctx = malloc(total * sizeof(int32_t));
    if (!ctx) {
        snprintf(err, errlen, "out of memory for %ld sampled characters", n);
        model_release(&rs);
        return TRAIN_ENOMEM;
    }
    for (size_t i = 0; i < prompt_len && rc == TRAIN_OK; i++) {
        int t = rs.c.stoi[(unsigned char)prompt[i]];
        if (t < 0) {
            snprintf(err, errlen, "the prompt's character %zu (byte 0x%02x) is not in the "
                     "corpus's vocabulary", i + 1, (unsigned char)prompt[i]);
            rc = TRAIN_ECONFIG;
        }
        ctx[i] = t;
    }
    pcg32 r;
    pcg32_stream(&r, seed, PCG_PURPOSE_SAMPLE, 0);
    for (size_t len = prompt_len; rc == TRAIN_OK && len < total; len++) {
        size_t k = len < (size_t)T ? len : (size_t)T; /* the last k tokens, left-aligned */
        memcpy(m->inputs, ctx + (len - k), k * sizeof(int32_t));
        for (size_t j = k; j < (size_t)T; j++)
            m->inputs[j] = 0; /* causal: later positions do not reach position k-1 */
        gpt_forward(m, 1, 0, 0, 0);
        if ((rc = check_kernels(err, errlen)) != TRAIN_OK)
            break;
        int t = draw_token(m->logits + (k - 1) * (size_t)V, V, temperature, &r);
        ctx[len] = t;
        text[len - prompt_len] = (char)rs.c.itos[t];
    }
    free(ctx);
    model_release(&rs);
    return rc;
}

int train_sample(const gpt_config *cfg, const char *path, const char *config_id,
                 const char *prompt, size_t prompt_len, long n, uint64_t seed,
                 double temperature, char *text, char *err, size_t errlen)
{
    const unsigned long saved = isa_flush_begin();
#pragma omp parallel
    isa_flush_begin();
    int rc = sample_flushed(cfg, path, config_id, prompt, prompt_len, n, seed, temperature,
                            text, err, errlen);
#pragma omp parallel
    isa_flush_end(saved);
    isa_flush_end(saved);
    return rc;
}

static int train_subnormals_flushed(const gpt_config *cfg, const train_hooks *hooks, const train_tasks *tasks,
                       train_metrics *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    run_state rs;
    int rc = run_setup(&rs, cfg, out, err, errlen);
    if (rc != TRAIN_OK)
        return rc;
    gpt_model *m = &rs.m;
    const int ncols = rs.ncols;
    long start = 0;
    if (hooks && hooks->checkpoint && hooks->resume && access(hooks->checkpoint, F_OK) == 0) {
        if (load_checkpoint(m, hooks->checkpoint, ncols, hooks->config_id, &start, rs.log, err,
                            errlen)) {
            rc = TRAIN_ECHECKPOINT;
            goto done;
        }
        out->resumed_from = start;
    }
    replay_log(&rs, hooks, start, out);

    double t0 = now_s();
    long step = start;
    for (; step < cfg->iters && !out->stopped; step++) {
        if ((rc = train_step(&rs, step, &out->diverged, err, errlen)) != TRAIN_OK)
            goto done;
        if (out->diverged) {
            out->diverge_step = step;
        } else {
            long onset = diag_divergence(rs.log, (size_t)ncols, step + 1, COL_LOSS, COL_GNORM);
            if (onset >= 0) {
                out->diverged = 1;
                out->diverge_step = onset;
            }
        }
        const double *r = rs.log + step * ncols;
        out->final_grad_norm = r[COL_GNORM];
        out->train_loss = r[COL_LOSS];
        train_row row = {step, ncols, r};
        if (hooks && hooks->on_step && hooks->on_step(hooks->ud, &row))
            out->stopped = 1;
        if (out->diverged) {
            step++;
            break;
        }
        if (want_checkpoint(hooks, step + 1, cfg->iters) &&
            (rc = save_checkpoint(m, step + 1, rs.log, ncols, hooks->config_id,
                                  hooks->checkpoint, hooks, err, errlen)) != TRAIN_OK)
            goto done;
    }
    out->steps = step;
    if (step > 0) { /* the last step's, also when a run resumed at its last step */
        out->final_grad_norm = rs.log[(size_t)(step - 1) * ncols + COL_GNORM];
        out->train_loss = rs.log[(size_t)(step - 1) * ncols + COL_LOSS];
    }
    if (start == cfg->iters && start > 0 && !out->diverged) {
        long onset = diag_divergence(rs.log, (size_t)ncols, step, COL_LOSS, COL_GNORM);
        if (onset >= 0) {
            out->diverged = 1;
            out->diverge_step = onset;
        }
    }
    diag_training_curve(rs.log, (size_t)ncols, step, COL_LOSS, COL_GNORM, COL_MAXLOGIT,
                        &out->curve);
    if (out->diverged)
        out->diverge_lr = rs.log[(size_t)out->diverge_step * ncols + COL_LR];
    out->embed_init_rms = m->embed_rms;
    out->embed_scale = cfg->embed_norm == EMBED_SCALE ? (double)m->embed_scale : NAN;
    /* at the step where it stopped, the last one included: a rerun resumes exactly there */
    if (out->stopped && hooks && hooks->checkpoint &&
        (rc = save_checkpoint(m, step, rs.log, ncols, hooks->config_id, hooks->checkpoint,
                              hooks, err, errlen)) != TRAIN_OK)
        goto done;
    double t1 = now_s(), train_s = t1 - t0 - rs.diag_s;
    out->tokens_per_s =
        t1 - rs.diag_s > t0 ? (double)(step - start) * cfg->batch * cfg->context / train_s : 0.0;
    if (!out->diverged && !out->stopped &&
        (rc = final_evaluation(&rs, hooks ? hooks->final_windows : 0, out, err, errlen)) !=
            TRAIN_OK)
        goto done;
    for (int k = 0; tasks && out->evaluated && k < tasks->n_tasks; k++)
        if (tasks_score(m, &rs.c, &tasks->sets[k], &tasks->out[k], err, errlen)) {
            for (int j = 0; j < k; j++)
                task_score_free(&tasks->out[j]);
            rc = TRAIN_ECONFIG;
            goto done;
        }
    if (!out->diverged && !out->stopped && hooks && hooks->model_out &&
        (rc = save_model(&rs, hooks->config_id, hooks->model_out, err, errlen)) != TRAIN_OK)
        goto done;
    out->wall_s = now_s() - t0;
    out->params = (long)m->n_params;
    out->vocab = rs.c.vocab;
    out->n_layer = m->L;
    out->balanced_acc = cfg->balanced_acc;
    out->context = m->T;

done:
    kernels_release();
    gpt_free(m);
    free(rs.log);
    if (rc != TRAIN_OK)
        train_metrics_free(out);
    corpus_free(&rs.c);
    return rc;
}

/* The weights of a kept model (save_model: "itos" and no Adam moments) or of a training
 * checkpoint at path into rs, the file read once.  0, or -1 with a message. */
static int load_weights(run_state *rs, const char *path, const char *config_id, char *err,
                        size_t errlen)
{
    tf_file *f = tf_read(path, checkpoint_max_bytes(&rs->m, rs->ncols), err, errlen);
    if (!f)
        return -1;
    long step = 0;
    int rc = tf_find(f, "itos") && !tf_find(f, "adam_m")
                 ? apply_model(rs, f, path, config_id, err, errlen)
                 : apply_checkpoint(&rs->m, f, path, rs->ncols, config_id, &step, rs->log, err,
                                    errlen);
    tf_free(f);
    return rc;
}

static int score_flushed(const gpt_config *cfg, const char *checkpoint, const char *config_id,
                         int control, const task_set *sets, int n, task_score *out, char *err,
                         size_t errlen)
{
    train_metrics tm;
    memset(&tm, 0, sizeof tm);
    run_state rs;
    int rc = run_setup(&rs, cfg, &tm, err, errlen);
    if (rc != TRAIN_OK)
        return rc;
    if (checkpoint && control == 0 && load_weights(&rs, checkpoint, config_id, err, errlen))
        rc = TRAIN_ECHECKPOINT;
    ngram_model *g = NULL;
    if (rc == TRAIN_OK && control > 0 && !(g = ngram_model_fit(&rs.c, control, err, errlen)))
        rc = TRAIN_ECONFIG;
    int k = 0;
    for (; rc == TRAIN_OK && k < n; k++) {
        int bad = control < 0 ? tasks_score_bigram(&rs.c, &sets[k], &out[k], err, errlen)
                  : control > 0
                      ? tasks_score_ngram(g, rs.m.T, &rs.c, &sets[k], &out[k], err, errlen)
                      : tasks_score(&rs.m, &rs.c, &sets[k], &out[k], err, errlen);
        if (bad)
            rc = TRAIN_ECONFIG;
    }
    ngram_model_free(g);
    if (rc != TRAIN_OK)
        for (int j = 0; j + 1 < k; j++)
            task_score_free(&out[j]);
    kernels_release();
    gpt_free(&rs.m);
    free(rs.log);
    train_metrics_free(&tm);
    corpus_free(&rs.c);
    return rc;
}

int train_score_tasks(const gpt_config *cfg, const char *checkpoint, const char *config_id,
                      int control, const task_set *sets, int n, task_score *out, char *err,
                      size_t errlen)
{
    const unsigned long saved = isa_flush_begin();
#pragma omp parallel
    isa_flush_begin();
    int rc = score_flushed(cfg, checkpoint, config_id, control, sets, n, out, err, errlen);
#pragma omp parallel
    isa_flush_end(saved);
    isa_flush_end(saved);
    return rc;
}

/* The run with subnormals flushed to zero on this thread and on every thread of the
 * OpenMP team (engine/isa.h; threads created later inherit the mode), the mode of
 * before restored on all of them afterwards. */
int train_run(const gpt_config *cfg, const train_hooks *hooks, train_metrics *out, char *err,
              size_t errlen)
{
    return train_run_scored(cfg, hooks, NULL, out, err, errlen);
}

int train_run_scored(const gpt_config *cfg, const train_hooks *hooks, const train_tasks *tasks,
                     train_metrics *out, char *err, size_t errlen)
{
    const unsigned long saved = isa_flush_begin();
#pragma omp parallel
    isa_flush_begin();
    int rc = train_subnormals_flushed(cfg, hooks, tasks, out, err, errlen);
#pragma omp parallel
    isa_flush_end(saved);
    isa_flush_end(saved);
    return rc;
}
