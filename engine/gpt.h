/* The Pre-LN GPT of DESIGN.md: forward, backward, AdamW and evaluation, by hand.
 *
 * Parameters live in one buffer, in this order, which is also the order they are
 * drawn from the run's init stream (PCG purpose init, seed init_seed, index 0); gains
 * and biases are set, not drawn:
 *   wte (V,C) N(0, tok_init_std)        wpe (T,C) N(0, pos_init_std)
 *   per block l: ln1_w (C) ln1_b (C) qkv_w (3C,C) N(0,0.02) qkv_b (3C)
 *                proj_w (C,C) N(0, 0.02/sqrt(2L)) proj_b (C) ln2_w (C) ln2_b (C)
 *                fc_w (4C,C) N(0,0.02) fc_b (4C) fc2_w (C,4C) N(0, 0.02/sqrt(2L)) fc2_b (C)
 *   lnf_w (C) lnf_b (C)
 *   en_w (C) [en_b (C)]     embedding norm: layernorm, layernorm_matched (both), rmsnorm (en_w)
 *   lm_head (V,C) N(0,0.02) untied output matrix (tie_embeddings = false) only, last
 * A drawn tensor takes one standard normal per element, in row-major order, times its
 * std; wte and wpe are drawn whatever their std (0 included: pos_init_std = 0 gives
 * zeros), so tok_init_std and pos_init_std change no other weight.  The embedding-norm
 * parameters are never drawn and lm_head is drawn after every other tensor, so all
 * embedding norms and tied/untied runs of one init seed share every other initial
 * weight bit for bit.  Linear weights are (out, in) as in PyTorch; 2-D tensors (wte,
 * wpe, Linear weights, lm_head) get weight decay.  Gradients and the Adam moments use
 * the same layout.
 *
 * The initial embedding RMS rho is the RMS of the block-1 input before any embedding
 * norm, wte[v] + wpe[p], over every vocabulary entry v and position p at
 * initialization:
 *   rho^2 = (T·Σ_{v,c} wte[v,c]^2 + V·Σ_{p,c} wpe[p,c]^2 + 2·Σ_c A_c·B_c) / (V·T·C),
 *   A_c = Σ_v wte[v,c],  B_c = Σ_p wpe[p,c],
 * each sum in double over the drawn float weights in index order (gpt_embed_rms).
 * embed_norm = scale multiplies wte[t] + wpe[p] by the float 1/rho (no parameters), so
 * the block-1 input has RMS 1 over all (v, p) pairs at initialization; embed_norm =
 * layernorm_matched is LayerNorm (eps 1e-5) whose gain en_w starts at (float) rho and
 * bias at 0, so at initialization it centers and normalizes each token but keeps the
 * input's overall scale.
 *
 * Dropout (p = cfg.dropout, training only) is applied after the embedding norm, to the
 * attention probabilities and to both residual branches; its masks come from the run's
 * dropout stream (seed `seed`), one PCG stream per (step, site, sequence), so they do
 * not depend on the thread count and a resumed run redraws the same masks.
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
    int drawn;      /* drawn N(0, init_std) (init_std may be 0); else constant init_value */
    float init_std;
    float init_value;
    int decay; /* weight decay applies (2-D) */
    int group; /* see gpt_n_groups */
} gpt_tensor;

typedef struct {
    float *ln1_w, *ln1_b, *qkv_w, *qkv_b, *proj_w, *proj_b;
    float *ln2_w, *ln2_b, *fc_w, *fc_b, *fc2_w, *fc2_b;
} gpt_block;

typedef struct {
    float *wte, *wpe, *lnf_w, *lnf_b, *en_w, *en_b;
    float *lm_head; /* NULL when tied */
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
    double embed_rms;  /* rho of the initial weights (see above) */
    float embed_scale; /* 1/rho for embed_norm = scale, else 1 */

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
/* Parameter groups: 0 embeddings (wte, wpe), 1..L the blocks, L+1 the final norm, then
 * the embedding norm (when it has parameters), then lm_head (when untied). */
int gpt_n_groups(const gpt_model *m);
int gpt_config_n_groups(const gpt_config *c);
/* The global norm, and each group's norm into group_norm (may be NULL). */
double gpt_grad_norm_groups(const gpt_model *m, double *group_norm);
/* Mean and maximum of Adam's second moment v per group. */
void gpt_adam_v_stats(const gpt_model *m, double *vmean, double *vmax);
/* One AdamW step (t = 1-based step count); gradients are multiplied by grad_scale. */
void gpt_adamw(gpt_model *m, float lr, long t, float grad_scale);
/* Mean L2 norm of the block-1 input rows of the last forward. */
double gpt_embed_norm(const gpt_model *m, int B);
/* Largest |logit| over the B·T·V logits of the last forward (non-finite values skipped;
 * 0 if none is finite). */
double gpt_max_abs_logit(const gpt_model *m, int B);
/* rho (above) of token embeddings wte (V,C) and position embeddings wpe (T,C). */
double gpt_embed_rms(const float *wte, int V, const float *wpe, int T, int C);
/* Learning rate at iteration it (0-based): warmup lr·(it+1)/warmup (none when warmup is
 * 0); then cosine from lr to min_lr at the last iteration, or constant lr. */
double gpt_lr(const gpt_config *c, long it);

#endif
