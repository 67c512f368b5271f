/* A run's configuration: every key of DESIGN.md with its default, type and valid range.
 * One table (config.c) drives defaults, setting by name, validation and listing, so the
 * C engine, the Lua binding and the run records agree on the keys. */
#ifndef REPRO_CONFIG_H
#define REPRO_CONFIG_H

#include <stddef.h>

enum embed_norm { EMBED_NONE = 0, EMBED_LAYERNORM = 1, EMBED_RMSNORM = 2 };

typedef struct {
    int n_layer, d_model, n_head, context, batch, iters;
    double lr, min_lr;
    int warmup;
    double weight_decay, beta1, beta2, eps, grad_clip, dropout;
    int embed_norm; /* enum embed_norm */
    double embed_init_std;
    long long seed;
    int diag_every;   /* validation diagnostics into log.csv every k steps, 0 = off */
    int diag_windows; /* validation windows those diagnostics use */
    int threads; /* 0 = online cores; does not change any result */
    char data[4096];
} gpt_config;

enum config_type { CFG_INT, CFG_NUM, CFG_STR, CFG_ENUM };

typedef struct {
    const char *name;
    enum config_type type;
    size_t offset;
    const char *help;
} config_key;

/* The keys, in the order they are listed and written. */
extern const config_key config_keys[];
extern const int config_nkeys;
extern const char *const embed_norm_names[]; /* "none", "layernorm", "rmsnorm", NULL */

void config_defaults(gpt_config *c);
const config_key *config_find(const char *name);
/* Setters return 0, or -1 with "key=value: reason" in err. */
int config_set_int(gpt_config *c, const char *key, long long v, char *err, size_t errlen);
int config_set_num(gpt_config *c, const char *key, double v, char *err, size_t errlen);
int config_set_str(gpt_config *c, const char *key, const char *v, char *err, size_t errlen);
/* Checks every range and cross-key rule that needs no corpus; 0 or -1 with a message
 * naming the key and value. */
int config_validate(const gpt_config *c, char *err, size_t errlen);
int config_threads(const gpt_config *c); /* resolved thread count */

#endif
