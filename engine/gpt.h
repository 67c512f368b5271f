/* The Pre-LN GPT of docs/DESIGN.md: forward, backward, AdamW and evaluation, by hand.
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
 * init = torch (PyTorch 1.13's module defaults, for a model written from nn.Linear,
 * nn.Embedding and nn.LayerNorm without GPT-2's initialization) changes the draws, not
 * the layout or its order: every Linear weight and bias (qkv, proj, fc, fc2; the untied
 * lm_head, a bias-free Linear) is U(-b, b) with b = 1/sqrt(fan_in), fan_in = the
 * weight's columns (C, or 4C for fc2), one uniform per element (2u - 1)·b with u =
 * pcg32_uniform_double; wte and wpe (nn.Embedding) are N(0, 1) unless tok_init_std /
 * pos_init_std are set; gains 1 and norm biases 0 as in gpt2; no residual rescaling.
 * The biases are drawn in layout order right after their weight.  Two keys take the
 * scheme apart (engine/config.h; unset, each is the scheme's): linear_init = gpt2 | torch
 * chooses the Linear layers' part (N(0, 0.02) weights with biases set to 0, or the
 * uniforms above with drawn biases) independently of the embeddings, and resid_rescale
 * divides the residual projections' weight std (gpt2) or bound (torch) by sqrt(2L) or
 * not.  Neither changes the layout or its order, only which tensors are drawn and how,
 * so init = gpt2 and init = torch with both unset draw what they drew before.
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

/* The model's fixed constants (not config keys): the epsilon of every LayerNorm and of
 * RMSNorm, and the standard deviation of the linear layers' initial weights (the two
 * residual projections use GPT_LINEAR_STD / sqrt(2 n_layer)).  The Lua binding exports
 * them (engine.LN_EPS, RMS_EPS, LINEAR_STD) so the paper cites them from here. */
#define GPT_LN_EPS 1e-5f
#define GPT_RMS_EPS 1e-6f
#define GPT_LINEAR_STD 0.02f

/* One parameter tensor of the layout above. */
typedef struct {
    char name[32];       /* "wte", "h0.qkv_w", ... */
    size_t offset, size; /* in floats, into params (and grads, adam_m, adam_v) */
    int ndim, dims[2];   /* (dims[0], dims[1]); dims[1] = 1 when ndim = 1 */
    int drawn;        /* drawn (see init_bound); else constant init_value */
    float init_std;   /* drawn N(0, init_std) (init_std may be 0) when init_bound is 0 */
    float init_bound; /* > 0: drawn U(-init_bound, init_bound) (init = torch) */
    float init_value;
    int decay; /* weight decay applies (2-D) */
    int group; /* see gpt_n_groups */
} gpt_tensor;

/* One block's parameters (or their gradients), pointers into the parameter buffer. */
typedef struct {
    float *ln1_w, *ln1_b;   /* (C), (C) */
    float *qkv_w, *qkv_b;   /* (3C, C), (3C): rows [q | k | v] */
    float *proj_w, *proj_b; /* (C, C), (C) */
    float *ln2_w, *ln2_b;   /* (C), (C) */
    float *fc_w, *fc_b;     /* (4C, C), (4C) */
    float *fc2_w, *fc2_b;   /* (C, 4C), (C) */
} gpt_block;

typedef struct {
    float *wte;          /* (V, C) */
    float *wpe;          /* (T, C) */
    float *lnf_w, *lnf_b; /* (C), (C) */
    float *en_w, *en_b;   /* (C), (C): the embedding norm's gain and bias, NULL when absent */
    float *lm_head;       /* (V, C); NULL when tied (the logits use wte) */
    gpt_block *block;     /* (L) */
} gpt_params;

/* The saved activations of one block; B is the batch of the last forward (at most the
 * model's B), every row-major array is allocated for the largest batch. */
typedef struct {
    float *ln1;                /* (B, T, C) ln1 output */
    float *ln1_mean, *ln1_rstd; /* (B, T) */
    float *qkv;                /* (B, T, 3C) [q | k | v] */
    float *att;                /* (B, H, T, T) attention probabilities, 0 above the diagonal */
    float *atty;               /* (B, T, C) attention output, heads side by side */
    float *res2;               /* (B, T, C) residual after the attention branch */
    float *ln2;                /* (B, T, C) ln2 output */
    float *ln2_mean, *ln2_rstd; /* (B, T) */
    float *fch;                /* (B, T, 4C) fc output, before GELU */
    float *fchg;               /* (B, T, 4C) GELU output */
    uint8_t *m_att;            /* (B, H, T, T) dropout keep mask (NULL without dropout) */
    uint8_t *m_proj, *m_fc2;   /* (B, T, C) dropout keep masks of the two residual branches */
} gpt_layer_acts;

struct gpt_chunk; /* gpt.c: a fixed-order piece of one tensor, for norms and statistics */

typedef struct {
    gpt_config cfg;
    int V, T, C, L, H, B; /* B = largest batch the buffers hold */
    int n_tensors;
    gpt_tensor *tensors; /* (n_tensors), in layout order */
    size_t n_params;
    float *params, *grads, *adam_m, *adam_v; /* (n_params) each, one allocation */
    gpt_params p, g;                         /* pointers into params and grads */
    double embed_rms;  /* rho of the initial weights (see above) */
    float embed_scale; /* 1/rho for embed_norm = scale, else 1 */

    size_t n_chunks;
    struct gpt_chunk *chunks; /* (n_chunks) */
    double *chunk_sums;       /* (2 n_chunks): per-chunk partial results */

    float *act_buf;    /* one allocation: every float array below and in la */
    uint8_t *mask_buf; /* one allocation: every dropout mask (NULL without dropout) */
    float *emb;                 /* (B, T, C) wte[t] + wpe[p], before the embedding norm */
    float *en_mean, *en_rstd;   /* (B, T) embedding-norm statistics */
    float **res;                /* (L+1) of (B, T, C): res[l] is block l's input, res[L] the
                                   final residual */
    float *lnf;                 /* (B, T, C) final LayerNorm output */
    float *lnf_mean, *lnf_rstd; /* (B, T) */
    float *logits;              /* (B, T, V) */
    float *probs;               /* (B, T, V) softmax; backward turns it into dloss/dlogits */
    float *losses;              /* (B, T) per-position NLL */
    uint8_t *m_emb;             /* (B, T, C) dropout keep mask of the embedding output */
    gpt_layer_acts *la;         /* (L) */
    float *tmp;   /* (B, T, C) a branch's output before its residual add; per-row scratch */
    float *dres;  /* (B, T, C) gradient of the residual stream */
    float *dbr;   /* (B, T, C) gradient of a branch output, masked (dropout) */
    float *dbig;  /* (B, T, 4C) gradient of the MLP hidden layer */
    float *dln;   /* (B, T, C) gradient of a norm's output; of the embedding sum */
    float *datty; /* (B, T, C) gradient of the attention output */
    float *dqkv;  /* (B, T, 3C) */
    float *dlnf;  /* (B, T, C) gradient of the final LayerNorm output */
    int32_t *inputs, *targets; /* (B, T) token ids */
} gpt_model;

/* Allocates for batches of up to B sequences and draws the initial parameters.
 * 0, or -1 with a message (out of memory). */
int gpt_init(gpt_model *m, const gpt_config *cfg, int vocab, int B, char *err, size_t errlen);
void gpt_free(gpt_model *m);
size_t gpt_param_count(const gpt_config *cfg, int vocab);
/* The parameter tensors of cfg's model with a vocabulary of vocab, in layout order (name,
 * offset, size, shape; the init fields as gpt_init sets them): their number, and when out
 * is not NULL and max is at least that number, the tensors into out.  For exporters of a
 * kept model (bin/repro export-model), which split the one params buffer by it. */
int gpt_layout(const gpt_config *cfg, int vocab, gpt_tensor *out, int max);
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
