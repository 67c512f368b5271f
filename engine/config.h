/* A run's configuration: every key of docs/DESIGN.md with its default, type and valid range.
 * One table (config.c) drives defaults, setting by name, validation and listing, so the
 * C engine, the Lua binding and the run records agree on the keys.
 *
 * Keys added after the first records were written are "omittable": a run record leaves
 * such a key out while it is at its default (config_at_default), so every earlier
 * config.json, and its hash, stays byte-identical.  Six of them are derived: unset,
 * tok_init_std and pos_init_std take embed_init_std (init = gpt2) or 1 (init = torch),
 * linear_init takes init, resid_rescale is true under init = gpt2 and false under torch,
 * init_seed and data_seed take seed
 * (config_tok_init_std, ... resolve them); unset is NaN for the stds and -1 for the
 * seeds, linear_init and resid_rescale, values no setter accepts. */
#ifndef REPRO_CONFIG_H
#define REPRO_CONFIG_H

#include <stddef.h>

/* scale: (tok + pos) · 1/rho, a fixed constant; layernorm_matched: LayerNorm whose gain
 * starts at rho; rho is gpt.h's initial embedding RMS. */
enum embed_norm {
    EMBED_NONE = 0,
    EMBED_LAYERNORM = 1,
    EMBED_RMSNORM = 2,
    EMBED_SCALE = 3,
    EMBED_LAYERNORM_MATCHED = 4
};
enum lr_schedule { LR_COSINE = 0, LR_CONSTANT = 1 };
/* gpt2: docs/DESIGN.md's pinned init; torch: PyTorch 1.13's module defaults (gpt.h). */
enum init_scheme { INIT_GPT2 = 0, INIT_TORCH = 1 };

/* The largest `threads`: engine/gemm.c keeps per-thread scratch for this many OpenMP
 * threads (exported to Lua as engine.MAX_THREADS). */
#define CONFIG_MAX_THREADS 1024

typedef struct {
    int n_layer, d_model, n_head, context, batch, iters;
    double lr, min_lr;
    int warmup;
    int lr_schedule; /* enum lr_schedule */
    double weight_decay, beta1, beta2, eps, grad_clip, dropout;
    int embed_norm; /* enum embed_norm */
    double embed_init_std;
    double tok_init_std, pos_init_std; /* NaN = embed_init_std */
    int tie_embeddings;                /* 1: logits = x·wteᵀ; 0: a separate lm_head */
    int init;                          /* enum init_scheme */
    int linear_init;   /* enum init_scheme of the Linear layers; -1 = init's */
    int resid_rescale; /* residual projections' init scaled by 1/sqrt(2L); -1 = init's */
    int balanced_acc; /* also report balanced accuracy (diag.h); changes no training byte */
    long long seed;
    long long init_seed, data_seed; /* -1 = seed */
    int diag_every;   /* validation diagnostics into log.csv every k steps, 0 = off */
    int diag_windows; /* validation windows those diagnostics use */
    int threads; /* 0 = online cores; does not change any result */
    char data[4096];
    /* min_lr = lr · min_lr_ratio when a config does not give min_lr; the engine trains
     * on min_lr, the host resolves it (lua/repro/record/init.lua) */
    double min_lr_ratio;
    /* A task suite (lua/repro/tasks) scored after the final evaluation, by name; "" = none.
     * The host reads its task files and hands them to train_run (train.h); the engine
     * only keeps the name, which run records carry. */
    char tasks[64];
} gpt_config;

enum config_type { CFG_INT, CFG_NUM, CFG_STR, CFG_ENUM, CFG_BOOL };

typedef struct {
    const char *name;
    enum config_type type;
    size_t offset;
    const char *help;
    const char *const *values; /* CFG_ENUM: the names of 0, 1, ..., NULL-terminated */
    int omittable;             /* left out of run records at its default */
    const char *derived_from;  /* unset takes this key's value (or NULL) */
} config_key;

/* The keys, in the order they are listed. */
extern const config_key config_keys[];
extern const int config_nkeys;
extern const char *const embed_norm_names[]; /* "none", "layernorm", ..., NULL */
extern const char *const lr_schedule_names[]; /* "cosine", "constant", NULL */
extern const char *const init_scheme_names[]; /* "gpt2", "torch", NULL */

void config_defaults(gpt_config *c);
const config_key *config_find(const char *name);
/* Setters return 0, or -1 with "key=value: reason" in err. */
int config_set_int(gpt_config *c, const char *key, long long v, char *err, size_t errlen);
int config_set_num(gpt_config *c, const char *key, double v, char *err, size_t errlen);
int config_set_str(gpt_config *c, const char *key, const char *v, char *err, size_t errlen);
int config_set_bool(gpt_config *c, const char *key, int v, char *err, size_t errlen);
/* Checks every range and cross-key rule that needs no corpus; 0 or -1 with a message
 * naming the key and value. */
int config_validate(const gpt_config *c, char *err, size_t errlen);
/* The resolved thread count: threads, or when 0 the online cores (at most
 * CONFIG_MAX_THREADS). */
int config_threads(const gpt_config *c);

/* Derived keys, resolved (an unset embedding std is the init scheme's: gpt.h). */
double config_tok_init_std(const gpt_config *c);
double config_pos_init_std(const gpt_config *c);
long long config_init_seed(const gpt_config *c);
int config_linear_init(const gpt_config *c);   /* enum init_scheme */
int config_resid_rescale(const gpt_config *c); /* 0 or 1 */
long long config_data_seed(const gpt_config *c);
/* 1 if the key is unset, or set to the value it has when unset (so a record can leave
 * it out without changing the run). */
int config_at_default(const gpt_config *c, const config_key *k);
/* Whether the key is set (derived keys only; others are always set). */
int config_is_set(const gpt_config *c, const config_key *k);
/* Parameter tensors of the embedding norm: 0 none/scale, 1 rmsnorm, 2 layernorm(_matched). */
int config_embed_norm_tensors(const gpt_config *c);

#endif
