/* The Pre-LN GPT of DESIGN.md: forward, backward, AdamW and evaluation, by hand.
 *
 * Parameters live in one buffer, in this order (which is also the order they are
 * drawn from the run's init stream; gains 1 and biases 0 are set, not drawn):
 *   wte (V,C) N(0, embed_init_std)     wpe (T,C) N(0, embed_init_std)
 *   per block l: ln1_w (C) ln1_b (C) qkv_w (3C,C) N(0,0.02) qkv_b (3C)
 *                proj_w (C,C) N(0, 0.02/sqrt(2L)) proj_b (C) ln2_w (C) ln2_b (C)
 *                fc_w (4C,C) N(0,0.02) fc_b (4C) fc2_w (C,4C) N(0, 0.02/sqrt(2L)) fc2_b (C)
 *   lnf_w (C) lnf_b (C)
 *   en_w (C) [en_b (C)]                  embedding norm, layernorm/rmsnorm only, last
 * The embedding-norm parameters come last and are never drawn, so the three variants
 * of one seed share every other initial weight bit for bit.  Linear weights are
 * (out, in) as in PyTorch; 2-D tensors get weight decay.  Gradients and the Adam
 * moments use the same layout.
 *
 * Dropout (p = cfg.dropout, training only) is applied after the embedding norm, to the
 * attention probabilities and to both residual branches; its masks come from the run's
 * dropout stream, one PCG stream per (step, site, sequence), so they do not depend on
 * the thread count and a resumed run redraws the same masks.
 */
#ifndef REPRO_GPT_H
#define REPRO_GPT_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"

typedef struct {
    char name[32];
    size_t offset, size;
    int ndim, dims[2];
    float init_std; /* > 0: drawn N(0, init_std); else constant init_value */
    float init_value;
    int decay; /* weight decay applies (2-D) */
    int group; /* 0 embeddings, 1..L block l-1, L+1 final norm, L+2 embedding norm */
} gpt_tensor;

typedef struct {
    float *ln1_w, *ln1_b, *qkv_w, *qkv_b, *proj_w, *proj_b;
    float *ln2_w, *ln2_b, *fc_w, *fc_b, *fc2_w, *fc2_b;
} gpt_block;

typedef struct {
    float *wte, *wpe, *lnf_w, *lnf_b, *en_w, *en_b;
    gpt_block *block;
} gpt_params;

typedef struct {
    float *ln1, *ln1_mean, *ln1_rstd, *qkv, *att, *atty, *res2, *ln2, *ln2_mean, *ln2_rstd,
        *fch, *fchg;
    uint8_t *m_att, *m_proj, *m_fc2;
} gpt_layer_acts;

typedef struct {
    gpt_config cfg;
    int V, T, C, L, H, B; /* B = largest batch the buffers hold */
    int n_tensors;
    gpt_tensor *tensors;
    size_t n_params;
    float *params, *grads, *adam_m, *adam_v;
    gpt_params p, g;

    float *act_buf;
    uint8_t *mask_buf;
    float *emb, *en_mean, *en_rstd, **res, *lnf, *lnf_mean, *lnf_rstd, *logits, *probs, *losses;
    uint8_t *m_emb;
    gpt_layer_acts *la;
    float *tmp, *dres, *dbr, *dbig, *dln, *datty, *dqkv, *dlnf;
    int32_t *inputs, *targets;
} gpt_model;

/* Allocates for batches of up to B sequences and draws the initial parameters.
 * 0, or -1 with a message (out of memory). */
int gpt_init(gpt_model *m, const gpt_config *cfg, int vocab, int B, char *err, size_t errlen);
void gpt_free(gpt_model *m);
size_t gpt_param_count(const gpt_config *cfg, int vocab);
const gpt_tensor *gpt_find_tensor(const gpt_model *m, const char *name);

/* Forward over m->inputs (B,T); with targets, fills m->losses and returns their mean.
 * train != 0 applies dropout with the masks of training step `step`. */
double gpt_forward(gpt_model *m, int B, int with_targets, int train, long step);
/* Gradients of the mean loss of the last forward, added into m->grads. */
void gpt_backward(gpt_model *m, int B);
void gpt_zero_grad(gpt_model *m);
/* Global L2 norm of the gradients, summed in a fixed order. */
double gpt_grad_norm(const gpt_model *m);
/* Parameter groups: 0 embeddings (wte, wpe), 1..L the blocks, L+1 the final norm, L+2
 * the embedding norm (when present). */
int gpt_n_groups(const gpt_model *m);
/* The global norm, and each group's norm into group_norm (may be NULL). */
double gpt_grad_norm_groups(const gpt_model *m, double *group_norm);
/* Mean and maximum of Adam's second moment v per group. */
void gpt_adam_v_stats(const gpt_model *m, double *vmean, double *vmax);
/* One AdamW step (t = 1-based step count); gradients are multiplied by grad_scale. */
void gpt_adamw(gpt_model *m, float lr, long t, float grad_scale);
/* Mean L2 norm of the block-1 input rows of the last forward. */
double gpt_embed_norm(const gpt_model *m, int B);
/* Learning rate at iteration it (0-based): warmup lr·(it+1)/warmup, then cosine to min_lr
 * at the last iteration. */
double gpt_lr(const gpt_config *c, long it);

#endif
