#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char *const embed_norm_names[] = {"none", "layernorm", "rmsnorm", "scale",
                                        "layernorm_matched", NULL};
const char *const lr_schedule_names[] = {"cosine", "constant", NULL};
const char *const init_scheme_names[] = {"gpt2", "torch", NULL};

#define K(name, type, help) {#name, type, offsetof(gpt_config, name), help, NULL, 0, NULL}
/* an omittable key (see config.h); `values` for an enum, `from` for a derived key */
#define KO(name, type, help, values, from)                                                 \
    {#name, type, offsetof(gpt_config, name), help, values, 1, from}
const config_key config_keys[] = {
    K(n_layer, CFG_INT, "transformer blocks"),
    K(d_model, CFG_INT, "embedding width"),
    K(n_head, CFG_INT, "attention heads (divides d_model)"),
    K(context, CFG_INT, "sequence length"),
    K(batch, CFG_INT, "sequences per step"),
    K(iters, CFG_INT, "training steps"),
    K(lr, CFG_NUM, "peak learning rate"),
    K(min_lr, CFG_NUM,
      "learning rate at the last step (cosine floor); not given: lr x min_lr_ratio"),
    K(warmup, CFG_INT, "linear warmup steps lr*(it+1)/warmup (0 = none)"),
    KO(lr_schedule, CFG_ENUM,
       "after warmup: cosine (to min_lr at the last step) | constant (peak lr)",
       lr_schedule_names, NULL),
    K(weight_decay, CFG_NUM, "AdamW decoupled weight decay on 2-D parameters"),
    K(beta1, CFG_NUM, "AdamW beta1"),
    K(beta2, CFG_NUM, "AdamW beta2"),
    K(eps, CFG_NUM, "AdamW epsilon"),
    K(grad_clip, CFG_NUM, "global gradient-norm clip (0 = off)"),
    K(dropout, CFG_NUM, "dropout probability"),
    {"embed_norm", CFG_ENUM, offsetof(gpt_config, embed_norm),
     "after token+position embedding: none | layernorm | rmsnorm | scale (x/rho, fixed) | "
     "layernorm_matched (LayerNorm, gain starts at rho); rho = initial embedding RMS "
     "(see definitions)",
     embed_norm_names, 0, NULL},
    K(embed_init_std, CFG_NUM, "std of the token and position embedding init (shorthand)"),
    KO(tok_init_std, CFG_NUM, "std of the token embedding init N(0, std), > 0", NULL,
       "embed_init_std"),
    KO(pos_init_std, CFG_NUM, "std of the position embedding init N(0, std), >= 0", NULL,
       "embed_init_std"),
    KO(tie_embeddings, CFG_BOOL,
       "logits = x.wte^T; false: a separate lm_head (V, C) ~ N(0, 0.02), drawn last", NULL,
       NULL),
    {"init", CFG_ENUM, offsetof(gpt_config, init),
     "initialization scheme: gpt2 (Linear weights N(0, 0.02), residual projections "
     "N(0, 0.02/sqrt(2 n_layer)), biases 0, embeddings N(0, embed_init_std)) | torch "
     "(PyTorch 1.13's module defaults: Linear weights and biases U(-1/sqrt(fan_in), "
     "1/sqrt(fan_in)), untied lm_head a bias-free Linear, token and position embeddings "
     "N(0, 1)); tok_init_std / pos_init_std override the embeddings in either",
     init_scheme_names, 1, NULL},
    KO(linear_init, CFG_ENUM,
       "the Linear layers' part of the init scheme: gpt2 (weights N(0, 0.02), biases 0, an "
       "untied lm_head N(0, 0.02)) | torch (weights and biases U(-1/sqrt(fan_in), "
       "1/sqrt(fan_in)), lm_head bias-free); the draw order is the layout's either way",
       init_scheme_names, "init"),
    KO(resid_rescale, CFG_BOOL,
       "the residual projections' weights (proj_w, fc2_w) drawn at their Linear init's "
       "scale x 1/sqrt(2 n_layer): std 0.02/sqrt(2 n_layer) (gpt2) or bound "
       "1/sqrt(fan_in 2 n_layer) (torch); unset: true under init = gpt2, false under torch",
       NULL, "init"),
    KO(balanced_acc, CFG_BOOL,
       "also report balanced accuracy: the mean over the symbols present of each symbol's "
       "recall, on the validation split and on 150-position subsets", NULL, NULL),
    K(seed, CFG_INT, "run seed (dropout and subset-accuracy streams; init and data by default)"),
    KO(init_seed, CFG_INT, "seed of the parameter-init stream", NULL, "seed"),
    KO(data_seed, CFG_INT, "seed of the batch-order stream", NULL, "seed"),
    K(diag_every, CFG_INT, "validation diagnostics into log.csv every k steps (0 = off)"),
    K(diag_windows, CFG_INT, "validation windows used by those periodic diagnostics"),
    K(threads, CFG_INT, "worker threads, 0 = online cores (results do not depend on it)"),
    K(data, CFG_STR, "corpus path"),
    KO(min_lr_ratio, CFG_NUM,
       "min_lr = lr x min_lr_ratio when min_lr is not given (rounded to the 14 significant "
       "digits config.json keeps), in [0, 1]",
       NULL, NULL),
    KO(tasks, CFG_STR, "task suite scored after training (lua/repro/tasks; core); empty: none",
       NULL, NULL),
};
#undef K
#undef KO
const int config_nkeys = (int)(sizeof config_keys / sizeof config_keys[0]);

void config_defaults(gpt_config *c)
{
    memset(c, 0, sizeof *c);
    c->n_layer = 8;
    c->d_model = 128;
    c->n_head = 8;
    c->context = 128;
    c->batch = 16;
    c->iters = 300;
    c->lr = 3e-4;
    c->min_lr = 3e-5;
    c->warmup = 30;
    c->lr_schedule = LR_COSINE;
    c->weight_decay = 0.1;
    c->beta1 = 0.9;
    c->beta2 = 0.95;
    c->eps = 1e-8;
    c->grad_clip = 1.0;
    c->dropout = 0.0;
    c->embed_norm = EMBED_NONE;
    c->embed_init_std = 0.02;
    c->tok_init_std = NAN;
    c->pos_init_std = NAN;
    c->tie_embeddings = 1;
    c->init = INIT_GPT2;
    c->linear_init = -1;
    c->resid_rescale = -1;
    c->balanced_acc = 0;
    c->seed = 1;
    c->init_seed = -1;
    c->data_seed = -1;
    c->diag_every = 0;
    c->diag_windows = 32;
    c->threads = 0;
    snprintf(c->data, sizeof c->data, "data/tinyshakespeare.txt");
    c->min_lr_ratio = 0.1;
}

const config_key *config_find(const char *name)
{
    for (int i = 0; i < config_nkeys; i++)
        if (strcmp(config_keys[i].name, name) == 0)
            return &config_keys[i];
    return NULL;
}

static const char *const type_names[] = {"an integer", "a number", "a string", "a string",
                                          "a boolean"};

/* The key, if a value of type `want` may be stored in it: a string names an enum value
 * or a boolean ("true"/"false"), an integer fits a number. */
static const config_key *find_typed(const char *key, enum config_type want, char *err,
                                    size_t errlen)
{
    const config_key *k = config_find(key);
    if (!k) {
        snprintf(err, errlen, "unknown config key '%s'", key);
        return NULL;
    }
    if (k->type != want && !(want == CFG_STR && (k->type == CFG_ENUM || k->type == CFG_BOOL)) &&
        !(want == CFG_INT && k->type == CFG_NUM)) {
        snprintf(err, errlen, "%s: expected %s", key, type_names[k->type]);
        return NULL;
    }
    return k;
}

static int is_seed(const char *key)
{
    return strcmp(key, "seed") == 0 || strcmp(key, "init_seed") == 0 ||
           strcmp(key, "data_seed") == 0;
}

int config_set_int(gpt_config *c, const char *key, long long v, char *err, size_t errlen)
{
    const config_key *k = find_typed(key, CFG_INT, err, errlen);
    if (!k)
        return -1;
    char *p = (char *)c + k->offset;
    if (k->type == CFG_NUM) {
        return config_set_num(c, key, (double)v, err, errlen);
    } else if (is_seed(key)) {
        if (k->derived_from && v < 0) { /* -1 means unset: no setter may produce it */
            snprintf(err, errlen, "%s=%lld: must be >= 0", key, v);
            return -1;
        }
        *(long long *)p = v;
    } else {
        if (v < -2147483647LL || v > 2147483647LL) {
            snprintf(err, errlen, "%s=%lld: out of range", key, v);
            return -1;
        }
        *(int *)p = (int)v;
    }
    return 0;
}

int config_set_num(gpt_config *c, const char *key, double v, char *err, size_t errlen)
{
    const config_key *k = config_find(key);
    if (k && k->type == CFG_INT) {
        if (!(v == floor(v)) || fabs(v) > 9.2e18) {
            snprintf(err, errlen, "%s=%.17g: expected an integer", key, v);
            return -1;
        }
        return config_set_int(c, key, (long long)v, err, errlen);
    }
    k = find_typed(key, CFG_NUM, err, errlen);
    if (!k)
        return -1;
    if (k->derived_from && !isfinite(v)) { /* NaN means unset: no setter may produce it */
        snprintf(err, errlen, "%s=%g: must be finite", key, v);
        return -1;
    }
    *(double *)((char *)c + k->offset) = v;
    return 0;
}

int config_set_bool(gpt_config *c, const char *key, int v, char *err, size_t errlen)
{
    const config_key *k = find_typed(key, CFG_BOOL, err, errlen);
    if (!k)
        return -1;
    *(int *)((char *)c + k->offset) = v != 0;
    return 0;
}

int config_set_str(gpt_config *c, const char *key, const char *v, char *err, size_t errlen)
{
    const config_key *k = find_typed(key, CFG_STR, err, errlen);
    if (!k)
        return -1;
    if (k->type == CFG_BOOL) {
        if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0)
            return config_set_bool(c, key, v[0] == 't', err, errlen);
        snprintf(err, errlen, "%s=%s: expected true or false", key, v);
        return -1;
    }
    if (k->type == CFG_ENUM) {
        for (int i = 0; k->values[i]; i++)
            if (strcmp(v, k->values[i]) == 0) {
                *(int *)((char *)c + k->offset) = i;
                return 0;
            }
        int n = snprintf(err, errlen, "%s=%s: unknown value (expected", key, v);
        for (int i = 0; k->values[i] && n >= 0 && (size_t)n < errlen; i++)
            n += snprintf(err + n, errlen - (size_t)n, "%s%s", i == 0 ? " " : ", ",
                          k->values[i]);
        if (n >= 0 && (size_t)n < errlen)
            snprintf(err + n, errlen - (size_t)n, ")");
        return -1;
    }
    size_t cap = strcmp(k->name, "tasks") == 0 ? sizeof c->tasks : sizeof c->data;
    if (strlen(v) >= cap) {
        snprintf(err, errlen, "%s: too long (at most %zu characters)", key, cap - 1);
        return -1;
    }
    snprintf((char *)c + k->offset, cap, "%s", v);
    return 0;
}

int config_validate(const gpt_config *c, char *err, size_t errlen)
{
#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)
    const struct { const char *name; int v; } pos[] = {
        {"n_layer", c->n_layer}, {"d_model", c->d_model}, {"n_head", c->n_head},
        {"context", c->context}, {"batch", c->batch},     {"iters", c->iters}};
    for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++)
        if (pos[i].v <= 0)
            FAIL("%s=%d: must be positive", pos[i].name, pos[i].v);
    if (c->d_model % c->n_head != 0)
        FAIL("n_head=%d: does not divide d_model=%d", c->n_head, c->d_model);
    const struct { const char *name; int v, max; } cap[] = {
        {"n_layer", c->n_layer, 1024}, {"d_model", c->d_model, 8192},
        {"n_head", c->n_head, 1024},   {"context", c->context, 65536},
        {"batch", c->batch, 65536}};
    for (size_t i = 0; i < sizeof cap / sizeof cap[0]; i++)
        if (cap[i].v > cap[i].max)
            FAIL("%s=%d: larger than this engine supports (%d)", cap[i].name, cap[i].v, cap[i].max);
    const struct { const char *name; double v; } fin[] = {
        {"lr", c->lr}, {"min_lr", c->min_lr}, {"weight_decay", c->weight_decay},
        {"beta1", c->beta1}, {"beta2", c->beta2}, {"eps", c->eps}, {"grad_clip", c->grad_clip},
        {"dropout", c->dropout}, {"embed_init_std", c->embed_init_std},
        {"min_lr_ratio", c->min_lr_ratio}};
    for (size_t i = 0; i < sizeof fin / sizeof fin[0]; i++)
        if (!isfinite(fin[i].v))
            FAIL("%s=%g: must be finite", fin[i].name, fin[i].v);
    if (c->lr <= 0)
        FAIL("lr=%g: must be > 0", c->lr);
    if (c->min_lr < 0)
        FAIL("min_lr=%g: must be >= 0", c->min_lr);
    if (c->min_lr_ratio < 0 || c->min_lr_ratio > 1)
        FAIL("min_lr_ratio=%g: must be in [0, 1]", c->min_lr_ratio);
    if (c->lr_schedule < 0 || c->lr_schedule > LR_CONSTANT)
        FAIL("lr_schedule=%d: unknown", c->lr_schedule);
    if (c->lr_schedule == LR_COSINE && c->min_lr > c->lr)
        FAIL("min_lr=%g: must not exceed lr=%g", c->min_lr, c->lr);
    if (c->warmup < 0)
        FAIL("warmup=%d: must be >= 0", c->warmup);
    if (c->warmup > c->iters)
        FAIL("warmup=%d: must not exceed iters=%d", c->warmup, c->iters);
    if (c->weight_decay < 0)
        FAIL("weight_decay=%g: must be >= 0", c->weight_decay);
    if (c->beta1 < 0 || c->beta1 >= 1)
        FAIL("beta1=%g: must be in [0, 1)", c->beta1);
    if (c->beta2 < 0 || c->beta2 >= 1)
        FAIL("beta2=%g: must be in [0, 1)", c->beta2);
    if (c->eps <= 0)
        FAIL("eps=%g: must be > 0", c->eps);
    if (c->grad_clip < 0)
        FAIL("grad_clip=%g: must be >= 0 (0 = off)", c->grad_clip);
    if (c->dropout < 0 || c->dropout >= 1)
        FAIL("dropout=%g: must be in [0, 1)", c->dropout);
    if (c->embed_norm < 0 || c->embed_norm > EMBED_LAYERNORM_MATCHED)
        FAIL("embed_norm=%d: unknown", c->embed_norm);
    if (c->embed_init_std <= 0)
        FAIL("embed_init_std=%g: must be > 0", c->embed_init_std);
    if (!isnan(c->tok_init_std) && !(isfinite(c->tok_init_std) && c->tok_init_std > 0))
        FAIL("tok_init_std=%g: must be > 0", c->tok_init_std);
    if (!isnan(c->pos_init_std) && !(isfinite(c->pos_init_std) && c->pos_init_std >= 0))
        FAIL("pos_init_std=%g: must be >= 0", c->pos_init_std);
    if (c->init < 0 || c->init > INIT_TORCH)
        FAIL("init=%d: unknown", c->init);
    if (c->init == INIT_TORCH && c->embed_init_std != 0.02)
        FAIL("embed_init_std=%g: the gpt2 scheme's shorthand; with init=torch the "
             "embeddings are N(0, 1) unless tok_init_std / pos_init_std set them",
             c->embed_init_std);
    if (c->balanced_acc != 0 && c->balanced_acc != 1)
        FAIL("balanced_acc=%d: must be true or false", c->balanced_acc);
    if (c->tie_embeddings != 0 && c->tie_embeddings != 1)
        FAIL("tie_embeddings=%d: must be true or false", c->tie_embeddings);
    if (c->linear_init < -1 || c->linear_init > INIT_TORCH)
        FAIL("linear_init=%d: unknown", c->linear_init);
    if (c->resid_rescale < -1 || c->resid_rescale > 1)
        FAIL("resid_rescale=%d: must be true or false", c->resid_rescale);
    if (c->seed < 0)
        FAIL("seed=%lld: must be >= 0", c->seed);
    if (c->init_seed < -1)
        FAIL("init_seed=%lld: must be >= 0", c->init_seed);
    if (c->data_seed < -1)
        FAIL("data_seed=%lld: must be >= 0", c->data_seed);
    if (c->diag_every < 0)
        FAIL("diag_every=%d: must be >= 0 (0 = off)", c->diag_every);
    if (c->diag_windows <= 0)
        FAIL("diag_windows=%d: must be positive", c->diag_windows);
    if (c->threads < 0 || c->threads > CONFIG_MAX_THREADS)
        FAIL("threads=%d: must be in [0, %d] (0 = online cores)", c->threads,
             CONFIG_MAX_THREADS);
    if (c->data[0] == '\0')
        FAIL("data: empty path");
    for (const char *q = c->tasks; *q; q++)
        if (!((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '_'))
            FAIL("tasks=%s: a suite name is lowercase letters, digits and '_'", c->tasks);
    return 0;
#undef FAIL
}

int config_threads(const gpt_config *c)
{
    if (c->threads > 0)
        return c->threads;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n > CONFIG_MAX_THREADS)
        n = CONFIG_MAX_THREADS;
    return n > 0 ? (int)n : 1;
}

/* Unset, an embedding std is the scheme's: embed_init_std (gpt2) or 1 (torch:
 * nn.Embedding's N(0, 1)). */
double config_tok_init_std(const gpt_config *c)
{
    if (!isnan(c->tok_init_std))
        return c->tok_init_std;
    return c->init == INIT_TORCH ? 1.0 : c->embed_init_std;
}

double config_pos_init_std(const gpt_config *c)
{
    if (!isnan(c->pos_init_std))
        return c->pos_init_std;
    return c->init == INIT_TORCH ? 1.0 : c->embed_init_std;
}

long long config_init_seed(const gpt_config *c)
{
    return c->init_seed < 0 ? c->seed : c->init_seed;
}

/* Unset, the Linear init and the residual rescaling are the init scheme's: gpt2 rescales,
 * torch (PyTorch's module defaults) does not. */
int config_linear_init(const gpt_config *c)
{
    return c->linear_init < 0 ? c->init : c->linear_init;
}

int config_resid_rescale(const gpt_config *c)
{
    return c->resid_rescale < 0 ? c->init == INIT_GPT2 : c->resid_rescale;
}

long long config_data_seed(const gpt_config *c)
{
    return c->data_seed < 0 ? c->seed : c->data_seed;
}

int config_is_set(const gpt_config *c, const config_key *k)
{
    const char *p = (const char *)c + k->offset;
    if (!k->derived_from)
        return 1;
    if (k->type == CFG_NUM)
        return !isnan(*(const double *)p);
    if (k->type == CFG_ENUM || k->type == CFG_BOOL)
        return *(const int *)p >= 0;
    return *(const long long *)p >= 0;
}

int config_at_default(const gpt_config *c, const config_key *k)
{
    const char *p = (const char *)c + k->offset;
    if (k->derived_from) {
        if (!config_is_set(c, k))
            return 1;
        const config_key *src = config_find(k->derived_from);
        const char *q = (const char *)c + src->offset;
        if (k->type == CFG_NUM) { /* the value it takes when unset (the init scheme's) */
            gpt_config u = *c;
            *(double *)((char *)&u + k->offset) = NAN;
            double unset = strcmp(k->name, "tok_init_std") == 0 ? config_tok_init_std(&u)
                           : strcmp(k->name, "pos_init_std") == 0 ? config_pos_init_std(&u)
                                                                  : *(const double *)q;
            return *(const double *)p == unset;
        }
        if (k->type == CFG_ENUM || k->type == CFG_BOOL) { /* the init scheme's */
            gpt_config u = *c;
            *(int *)((char *)&u + k->offset) = -1;
            int unset = strcmp(k->name, "linear_init") == 0 ? config_linear_init(&u)
                                                            : config_resid_rescale(&u);
            return *(const int *)p == unset;
        }
        return *(const long long *)p == *(const long long *)q;
    }
    gpt_config d;
    config_defaults(&d);
    const char *q = (const char *)&d + k->offset;
    switch (k->type) {
    case CFG_INT:
        if (is_seed(k->name))
            return *(const long long *)p == *(const long long *)q;
        return *(const int *)p == *(const int *)q;
    case CFG_NUM:
        return *(const double *)p == *(const double *)q;
    case CFG_STR:
        return strcmp(p, q) == 0;
    case CFG_ENUM:
    case CFG_BOOL:
        return *(const int *)p == *(const int *)q;
    }
    return 0;
}

int config_embed_norm_tensors(const gpt_config *c)
{
    switch (c->embed_norm) {
    case EMBED_LAYERNORM:
    case EMBED_LAYERNORM_MATCHED:
        return 2;
    case EMBED_RMSNORM:
        return 1;
    default:
        return 0;
    }
}
