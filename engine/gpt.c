#include "gpt.h"
#include "prof.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "kernels.h"
#include "pcg.h"
#include "rmath.h"

/* A walk over the layout (build_layout): it counts, and with t != NULL describes each
 * tensor into t, and with p != NULL points p's fields into base. */
typedef struct {
    gpt_tensor *t;
    gpt_params *p;
    float *base;
    int n;
    size_t total;
} tensor_list;

/* drawn != 0: drawn N(0, std), or U(-bound, bound) when bound > 0; else every element
 * is `value`.  field: where the tensor's pointer goes in tl->p (NULL when tl->p is). */
static void add_tensor(tensor_list *tl, float **field, const char *name, int d0, int d1,
                       int drawn, float std, float bound, float value, int group)
{
    size_t size = (size_t)d0 * (d1 > 0 ? (size_t)d1 : 1);
    if (tl->t) {
        gpt_tensor *t = &tl->t[tl->n];
        snprintf(t->name, sizeof t->name, "%s", name);
        t->offset = tl->total;
        t->ndim = d1 > 0 ? 2 : 1;
        t->dims[0] = d0;
        t->dims[1] = d1 > 0 ? d1 : 1;
        t->size = size;
        t->drawn = drawn;
        t->init_std = drawn && !(bound > 0) ? std : 0.0f;
        t->init_bound = drawn && bound > 0 ? bound : 0.0f;
        t->init_value = drawn ? 0.0f : value;
        t->decay = d1 > 0;
        t->group = group;
    }
    if (tl->p)
        *field = tl->base + tl->total;
    tl->n++;
    tl->total += size;
}

/* The tensors of one block, in layout order.  Shapes are multiples of C (cols 0: 1-D);
 * init (linear_init = gpt2): drawn with the Linear or residual-projection std, or set to
 * `value`; fan_in (linear_init = torch): the tensor is a Linear weight or bias, drawn
 * U(±1/sqrt(fan_in·C)), the bound of an INIT_RESID weight divided by sqrt(2L) when
 * resid_rescale is on. */
enum { INIT_SET, INIT_LINEAR, INIT_RESID };
static const struct {
    const char *name;
    size_t field; /* offsetof(gpt_block, ...) */
    int rows, cols, init;
    float value;
    int fan_in; /* in units of C; 0: not a Linear's (a LayerNorm gain or bias) */
} block_tensors[] = {
    {"ln1_w", offsetof(gpt_block, ln1_w), 1, 0, INIT_SET, 1.0f, 0},
    {"ln1_b", offsetof(gpt_block, ln1_b), 1, 0, INIT_SET, 0.0f, 0},
    {"qkv_w", offsetof(gpt_block, qkv_w), 3, 1, INIT_LINEAR, 0.0f, 1},
    {"qkv_b", offsetof(gpt_block, qkv_b), 3, 0, INIT_SET, 0.0f, 1},
    {"proj_w", offsetof(gpt_block, proj_w), 1, 1, INIT_RESID, 0.0f, 1},
    {"proj_b", offsetof(gpt_block, proj_b), 1, 0, INIT_SET, 0.0f, 1},
    {"ln2_w", offsetof(gpt_block, ln2_w), 1, 0, INIT_SET, 1.0f, 0},
    {"ln2_b", offsetof(gpt_block, ln2_b), 1, 0, INIT_SET, 0.0f, 0},
    {"fc_w", offsetof(gpt_block, fc_w), 4, 1, INIT_LINEAR, 0.0f, 1},
    {"fc_b", offsetof(gpt_block, fc_b), 4, 0, INIT_SET, 0.0f, 1},
    {"fc2_w", offsetof(gpt_block, fc2_w), 1, 4, INIT_RESID, 0.0f, 4},
    {"fc2_b", offsetof(gpt_block, fc2_b), 1, 0, INIT_SET, 0.0f, 4},
};
#define N_BLOCK_TENSORS ((int)(sizeof block_tensors / sizeof block_tensors[0]))

/* init = torch: the half-width 1/sqrt(fan_in) of nn.Linear's uniform weights and biases. */
static float torch_bound(int fan_in)
{
    return (float)(1.0 / sqrt((double)fan_in));
}

/* The layout of the header comment, the one list of the parameter tensors: their order,
 * shapes, init and groups, and the gpt_params field of each. */
static void build_layout(tensor_list *tl, const gpt_config *c, int V)
{
    int C = c->d_model, L = c->n_layer, T = c->context;
    int rescale = config_resid_rescale(c);
    float res_div = sqrtf(2.0f * (float)L);
    float res_std = rescale ? GPT_LINEAR_STD / res_div : GPT_LINEAR_STD;
    int en = config_embed_norm_tensors(c);
    gpt_params *p = tl->p;
    char nm[32];
#define FIELD(x) (p ? &p->x : NULL)
    tl->n = 0;
    tl->total = 0;
    if (p)
        p->en_w = p->en_b = p->lm_head = NULL;
    int torch = config_linear_init(c) == INIT_TORCH;
    add_tensor(tl, FIELD(wte), "wte", V, C, 1, (float)config_tok_init_std(c), 0, 0, 0);
    add_tensor(tl, FIELD(wpe), "wpe", T, C, 1, (float)config_pos_init_std(c), 0, 0, 0);
    for (int l = 0; l < L; l++)
        for (int i = 0; i < N_BLOCK_TENSORS; i++) {
            int init = block_tensors[i].init, fan = block_tensors[i].fan_in;
            float **field = p ? (float **)((char *)&p->block[l] + block_tensors[i].field) : NULL;
            float bound = torch && fan ? torch_bound(fan * C) : 0.0f;
            if (bound > 0 && rescale && init == INIT_RESID)
                bound /= res_div;
            snprintf(nm, sizeof nm, "h%d.%s", l, block_tensors[i].name);
            add_tensor(tl, field, nm, block_tensors[i].rows * C, block_tensors[i].cols * C,
                       torch ? fan != 0 : init != INIT_SET,
                       init == INIT_LINEAR ? GPT_LINEAR_STD : res_std, bound,
                       block_tensors[i].value, l + 1);
        }
    add_tensor(tl, FIELD(lnf_w), "lnf_w", C, 0, 0, 0, 0, 1, L + 1);
    add_tensor(tl, FIELD(lnf_b), "lnf_b", C, 0, 0, 0, 0, 0, L + 1);
    if (en >= 1) /* layernorm_matched's gain is set to rho after the draws (init_params) */
        add_tensor(tl, FIELD(en_w), "en_w", C, 0, 0, 0, 0, 1, L + 2);
    if (en >= 2)
        add_tensor(tl, FIELD(en_b), "en_b", C, 0, 0, 0, 0, 0, L + 2);
    if (!c->tie_embeddings)
        add_tensor(tl, FIELD(lm_head), "lm_head", V, C, 1, GPT_LINEAR_STD,
                   torch ? torch_bound(C) : 0.0f, 0, L + 2 + (en > 0));
#undef FIELD
}

size_t gpt_param_count(const gpt_config *cfg, int vocab)
{
    tensor_list tl = {0};
    build_layout(&tl, cfg, vocab);
    return tl.total;
}

int gpt_layout(const gpt_config *cfg, int vocab, gpt_tensor *out, int max)
{
    tensor_list tl = {0};
    build_layout(&tl, cfg, vocab);
    if (out && tl.n <= max) {
        tensor_list fill = {out, NULL, NULL, 0, 0};
        build_layout(&fill, cfg, vocab);
    }
    return tl.n;
}

const gpt_tensor *gpt_find_tensor(const gpt_model *m, const char *name)
{
    for (int i = 0; i < m->n_tensors; i++)
        if (strcmp(m->tensors[i].name, name) == 0)
            return &m->tensors[i];
    return NULL;
}

/* Points p (its block array allocated) into base, a buffer of the layout. */
static void point_params(const gpt_model *m, float *base, gpt_params *p)
{
    tensor_list tl = {NULL, p, base, 0, 0};
    build_layout(&tl, &m->cfg, m->V);
}

double gpt_embed_rms(const float *wte, int V, const float *wpe, int T, int C)
{
    double sa = 0.0, sb = 0.0, cross = 0.0;
    for (size_t i = 0; i < (size_t)V * C; i++)
        sa += (double)wte[i] * wte[i];
    for (size_t i = 0; i < (size_t)T * C; i++)
        sb += (double)wpe[i] * wpe[i];
    for (int c = 0; c < C; c++) {
        double a = 0.0, b = 0.0;
        for (int v = 0; v < V; v++)
            a += wte[(size_t)v * C + c];
        for (int p = 0; p < T; p++)
            b += wpe[(size_t)p * C + c];
        cross += a * b;
    }
    double ms = ((double)T * sa + (double)V * sb + 2.0 * cross) / ((double)V * T * C);
    return ms > 0 ? sqrt(ms) : 0.0;
}

static void init_params(gpt_model *m)
{
    pcg32 r;
    pcg32_stream(&r, (uint64_t)config_init_seed(&m->cfg), PCG_PURPOSE_INIT, 0);
    for (int i = 0; i < m->n_tensors; i++) {
        const gpt_tensor *t = &m->tensors[i];
        float *p = m->params + t->offset;
        if (t->drawn && t->init_bound > 0)
            for (size_t j = 0; j < t->size; j++) {
                double u = pcg32_uniform_double(&r);
                p[j] = (float)((2.0 * u - 1.0) * t->init_bound);
            }
        else if (t->drawn)
            for (size_t j = 0; j < t->size; j++) {
                double z = pcg32_normal(&r);
                p[j] = t->init_std > 0 ? (float)(z * t->init_std) : 0.0f;
            }
        else
            for (size_t j = 0; j < t->size; j++)
                p[j] = t->init_value;
    }
    m->embed_rms = gpt_embed_rms(m->p.wte, m->V, m->p.wpe, m->T, m->C);
    m->embed_scale = 1.0f;
    if (m->cfg.embed_norm == EMBED_SCALE && m->embed_rms > 0)
        m->embed_scale = (float)(1.0 / m->embed_rms);
    if (m->cfg.embed_norm == EMBED_LAYERNORM_MATCHED)
        for (int c = 0; c < m->C; c++)
            m->p.en_w[c] = (float)m->embed_rms;
}

/* Carves float arrays out of one allocation (two passes: count, then point). */
typedef struct {
    float *base;
    size_t used;
} arena;

static float *take(arena *a, size_t n)
{
    float *p = a->base ? a->base + a->used : NULL;
    a->used += (n + 15) / 16 * 16;
    return p;
}

static void point_acts(gpt_model *m, arena *a)
{
    size_t BT = (size_t)m->B * m->T, C = (size_t)m->C, L = (size_t)m->L;
    m->emb = take(a, BT * C);
    m->en_mean = take(a, BT);
    m->en_rstd = take(a, BT);
    for (size_t l = 0; l <= L; l++) {
        float *r = take(a, BT * C);
        if (m->res)
            m->res[l] = r;
    }
    for (size_t l = 0; l < L; l++) {
        gpt_layer_acts x;
        x.ln1 = take(a, BT * C);
        x.ln1_mean = take(a, BT);
        x.ln1_rstd = take(a, BT);
        x.qkv = take(a, BT * 3 * C);
        x.att = take(a, (size_t)m->B * m->H * m->T * m->T);
        x.atty = take(a, BT * C);
        x.res2 = take(a, BT * C);
        x.ln2 = take(a, BT * C);
        x.ln2_mean = take(a, BT);
        x.ln2_rstd = take(a, BT);
        x.fch = take(a, BT * 4 * C);
        x.fchg = take(a, BT * 4 * C);
        if (m->la) {
            x.m_att = x.m_proj = x.m_fc2 = NULL;
            m->la[l] = x;
        }
    }
    m->lnf = take(a, BT * C);
    m->lnf_mean = take(a, BT);
    m->lnf_rstd = take(a, BT);
    m->logits = take(a, BT * m->V);
    m->probs = take(a, BT * m->V);
    m->losses = take(a, BT);
    m->tmp = take(a, BT * C);
    m->dres = take(a, BT * C);
    m->dbr = take(a, BT * C);
    m->dbig = take(a, BT * 4 * C);
    m->dln = take(a, BT * C);
    m->datty = take(a, BT * C);
    m->dqkv = take(a, BT * 3 * C);
    m->dlnf = take(a, BT * C);
}

/* Chunks of at most NORM_CHUNK elements inside each tensor, for the gradient norm and
 * the Adam statistics: their boundaries do not depend on the thread count, and partial
 * results are combined in chunk order. */
#define NORM_CHUNK 16384

struct gpt_chunk {
    int tensor;
    size_t lo, hi; /* [lo, hi) in the parameter buffer */
};

/* Counts the chunks of m's tensors, and with c != NULL fills them. */
static size_t make_chunks(const gpt_model *m, struct gpt_chunk *c)
{
    size_t k = 0;
    for (int t = 0; t < m->n_tensors; t++) {
        const gpt_tensor *tn = &m->tensors[t];
        for (size_t lo = 0; lo < tn->size; lo += NORM_CHUNK, k++)
            if (c) {
                c[k].tensor = t;
                c[k].lo = tn->offset + lo;
                c[k].hi = tn->offset + (lo + NORM_CHUNK < tn->size ? lo + NORM_CHUNK : tn->size);
            }
    }
    return k;
}

int gpt_init(gpt_model *m, const gpt_config *cfg, int vocab, int B, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    m->V = vocab;
    m->T = cfg->context;
    m->C = cfg->d_model;
    m->L = cfg->n_layer;
    m->H = cfg->n_head;
    m->B = B;
    tensor_list tl = {0};
    build_layout(&tl, cfg, vocab);
    m->n_tensors = tl.n;
    m->n_params = tl.total;
    tl.t = m->tensors = calloc((size_t)tl.n, sizeof(gpt_tensor));
    if (m->tensors) {
        build_layout(&tl, cfg, vocab);
        m->n_chunks = make_chunks(m, NULL);
        m->chunks = malloc(m->n_chunks * sizeof(struct gpt_chunk));
        m->chunk_sums = malloc(2 * m->n_chunks * sizeof(double));
    }
    m->p.block = calloc((size_t)m->L, sizeof(gpt_block));
    m->g.block = calloc((size_t)m->L, sizeof(gpt_block));
    m->res = calloc((size_t)m->L + 1, sizeof(float *));
    m->la = calloc((size_t)m->L, sizeof(gpt_layer_acts));
    size_t np = m->n_params;
    m->params = kernels_alloc((np * 4 + 15) / 16 * 16 * sizeof(float));
    arena a = {0};
    point_acts(m, &a);
    m->act_buf = kernels_alloc(a.used * sizeof(float));
    size_t BT = (size_t)B * m->T;
    m->inputs = malloc(BT * sizeof(int32_t));
    m->targets = malloc(BT * sizeof(int32_t));
    if (cfg->dropout > 0) {
        size_t per_layer = (size_t)B * m->H * m->T * m->T + 2 * BT * m->C;
        m->mask_buf = malloc(BT * m->C + per_layer * m->L);
    }
    if (!m->tensors || !m->chunks || !m->chunk_sums || !m->p.block || !m->g.block || !m->res ||
        !m->la || !m->params || !m->act_buf || !m->inputs || !m->targets ||
        (cfg->dropout > 0 && !m->mask_buf)) {
        snprintf(err, errlen, "out of memory for a model of %zu parameters and batch %d", np, B);
        gpt_free(m);
        return -1;
    }
    make_chunks(m, m->chunks);
    memset(m->params, 0, np * 4 * sizeof(float));
    m->grads = m->params + np;
    m->adam_m = m->params + 2 * np;
    m->adam_v = m->params + 3 * np;
    point_params(m, m->params, &m->p);
    point_params(m, m->grads, &m->g);
    a.base = m->act_buf;
    a.used = 0;
    point_acts(m, &a);
    memset(m->act_buf, 0, a.used * sizeof(float));
    if (m->mask_buf) {
        uint8_t *mb = m->mask_buf;
        m->m_emb = mb;
        mb += BT * m->C;
        for (int l = 0; l < m->L; l++) {
            m->la[l].m_att = mb;
            mb += (size_t)B * m->H * m->T * m->T;
            m->la[l].m_proj = mb;
            mb += BT * m->C;
            m->la[l].m_fc2 = mb;
            mb += BT * m->C;
        }
    }
    init_params(m);
    return 0;
}

void gpt_free(gpt_model *m)
{
    free(m->tensors);
    free(m->chunks);
    free(m->chunk_sums);
    free(m->p.block);
    free(m->g.block);
    free(m->res);
    free(m->la);
    free(m->params);
    free(m->act_buf);
    free(m->mask_buf);
    free(m->inputs);
    free(m->targets);
    memset(m, 0, sizeof *m);
}

/* ---- dropout ------------------------------------------------------------------- */

/* Mask for one site of one step: per sequence b, `per_seq` bytes from the stream
 * (step, site, b); with causal != 0 the per-sequence block is (H, T, T) and only the
 * lower triangle is drawn. */
static void draw_mask(const gpt_model *m, uint8_t *mask, long step, int site, int B,
                      size_t per_seq, int causal)
{
    int n_sites = 1 + 3 * m->L, T = m->T;
    float p = (float)m->cfg.dropout;
#pragma omp parallel for schedule(static)
    for (int b = 0; b < B; b++) {
        pcg32 r;
        uint64_t idx = ((uint64_t)step * (uint64_t)n_sites + (uint64_t)site) * (uint64_t)m->B +
                       (uint64_t)b;
        pcg32_stream(&r, (uint64_t)m->cfg.seed, PCG_PURPOSE_DROPOUT, idx);
        uint8_t *mk = mask + (size_t)b * per_seq;
        if (!causal) {
            for (size_t i = 0; i < per_seq; i++)
                mk[i] = pcg32_uniform(&r) >= p;
        } else {
            for (int h = 0; h < m->H; h++)
                for (int t = 0; t < T; t++) {
                    uint8_t *row = mk + ((size_t)h * T + t) * T;
                    for (int j = 0; j < T; j++)
                        row[j] = j <= t ? pcg32_uniform(&r) >= p : 0;
                }
        }
    }
}

static void apply_mask(float *x, const uint8_t *mask, float keep_scale, size_t n)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        x[i] = mask[i] ? x[i] * keep_scale : 0.0f;
}

/* out = x · s (embed_norm = scale, forward and backward alike) */
static void scale_copy(float *out, const float *x, float s, size_t n)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        out[i] = x[i] * s;
}

/* ---- forward / backward -------------------------------------------------------- */

double gpt_forward(gpt_model *m, int B, int with_targets, int train, long step)
{
    const int T = m->T, C = m->C, V = m->V, L = m->L, H = m->H;
    const size_t BT = (size_t)B * T;
    const int drop = train && m->cfg.dropout > 0;
    const float keep = drop ? (float)(1.0 / (1.0 - m->cfg.dropout)) : 1.0f;
    const gpt_params *p = &m->p;

    PROF_BEGIN(t_emb);
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < BT; i++) {
        const float *te = p->wte + (size_t)m->inputs[i] * C;
        const float *pe = p->wpe + (i % (size_t)T) * C;
        float *x = m->emb + i * C;
        for (int c = 0; c < C; c++)
            x[c] = te[c] + pe[c];
    }
    float *h0 = m->res[0];
    const int en = m->cfg.embed_norm;
    if (en == EMBED_LAYERNORM || en == EMBED_LAYERNORM_MATCHED)
        layernorm_forward(h0, m->en_mean, m->en_rstd, m->emb, p->en_w, p->en_b, (int)BT, C,
                          GPT_LN_EPS);
    else if (en == EMBED_RMSNORM)
        rmsnorm_forward(h0, m->en_rstd, m->emb, p->en_w, (int)BT, C, GPT_RMS_EPS);
    else if (en == EMBED_SCALE)
        scale_copy(h0, m->emb, m->embed_scale, BT * C);
    else
        memcpy(h0, m->emb, BT * C * sizeof(float));
    PROF_END(PROF_EMBED, t_emb);
    if (drop) {
        draw_mask(m, m->m_emb, step, 0, B, (size_t)T * C, 0);
        apply_mask(h0, m->m_emb, keep, BT * C);
    }

    /* each residual add is fused with the LayerNorm that reads its rows (the next block's
     * ln1, or lnf after the last): one pass and one parallel region instead of two
     * (config_validate: n_layer >= 1) */
    PROF_BEGIN(t_ln0);
    layernorm_forward(m->la[0].ln1, m->la[0].ln1_mean, m->la[0].ln1_rstd, m->res[0],
                      p->block[0].ln1_w, p->block[0].ln1_b, (int)BT, C, GPT_LN_EPS);
    PROF_END(PROF_NORM, t_ln0);
    for (int l = 0; l < L; l++) {
        const gpt_block *w = &p->block[l];
        gpt_layer_acts *a = &m->la[l];
        if (drop) {
            draw_mask(m, a->m_att, step, 1 + 3 * l, B, (size_t)H * T * T, 1);
            draw_mask(m, a->m_proj, step, 2 + 3 * l, B, (size_t)T * C, 0);
            draw_mask(m, a->m_fc2, step, 3 + 3 * l, B, (size_t)T * C, 0);
        }
        PROF_BEGIN(t_qkv);
        linear_forward(a->qkv, a->ln1, w->qkv_w, w->qkv_b, (int)BT, C, 3 * C);
        PROF_END(PROF_QKV_FWD, t_qkv);
        PROF_BEGIN(t_att);
        attention_forward(a->atty, a->att, a->qkv, drop ? a->m_att : NULL, keep, B, T, C, H);
        PROF_END(PROF_ATTN_FWD, t_att);
        PROF_BEGIN(t_proj);
        linear_forward(m->tmp, a->atty, w->proj_w, w->proj_b, (int)BT, C, C);
        PROF_END(PROF_PROJ_FWD, t_proj);
        if (drop)
            apply_mask(m->tmp, a->m_proj, keep, BT * C);
        PROF_BEGIN(t_ln2);
        residual_layernorm_forward(a->res2, m->res[l], m->tmp, a->ln2, a->ln2_mean,
                                   a->ln2_rstd, w->ln2_w, w->ln2_b, (int)BT, C, GPT_LN_EPS);
        PROF_END(PROF_NORM, t_ln2);
        PROF_BEGIN(t_fc);
        linear_gelu_forward(a->fch, a->fchg, a->ln2, w->fc_w, w->fc_b, (int)BT, C, 4 * C);
        PROF_END(PROF_FC_FWD, t_fc);
        PROF_BEGIN(t_fc2);
        linear_forward(m->tmp, a->fchg, w->fc2_w, w->fc2_b, (int)BT, 4 * C, C);
        PROF_END(PROF_FC2_FWD, t_fc2);
        if (drop)
            apply_mask(m->tmp, a->m_fc2, keep, BT * C);
        PROF_BEGIN(t_ln1);
        if (l + 1 < L) {
            gpt_layer_acts *n = &m->la[l + 1];
            const gpt_block *nw = &p->block[l + 1];
            residual_layernorm_forward(m->res[l + 1], a->res2, m->tmp, n->ln1, n->ln1_mean,
                                       n->ln1_rstd, nw->ln1_w, nw->ln1_b, (int)BT, C,
                                       GPT_LN_EPS);
        } else {
            residual_layernorm_forward(m->res[L], a->res2, m->tmp, m->lnf, m->lnf_mean,
                                       m->lnf_rstd, p->lnf_w, p->lnf_b, (int)BT, C, GPT_LN_EPS);
        }
        PROF_END(PROF_NORM, t_ln1);
    }
    PROF_BEGIN(t_head);
    linear_forward(m->logits, m->lnf, p->lm_head ? p->lm_head : p->wte, NULL, (int)BT, C, V);
    PROF_END(PROF_LOGITS_FWD, t_head);

    PROF_BEGIN(t_xent);
    softmax_xent(m->probs, m->losses, m->logits, with_targets ? m->targets : NULL, (int)BT, V);
    PROF_END(PROF_XENT, t_xent);
    if (!with_targets)
        return 0.0;
    double loss = 0.0;
    for (size_t i = 0; i < BT; i++)
        loss += m->losses[i];
    return loss / (double)BT;
}

void gpt_zero_grad(gpt_model *m)
{
    memset(m->grads, 0, m->n_params * sizeof(float));
}

void gpt_backward(gpt_model *m, int B)
{
    const int T = m->T, C = m->C, V = m->V, L = m->L, H = m->H;
    const size_t BT = (size_t)B * T;
    const int drop = m->cfg.dropout > 0;
    const float keep = drop ? (float)(1.0 / (1.0 - m->cfg.dropout)) : 1.0f;
    const gpt_params *p = &m->p;
    const gpt_params *g = &m->g;
    float *dlogits = m->probs; /* probabilities become dloss/dlogits in place */
    const float invBT = 1.0f / (float)BT;

    PROF_BEGIN(t_xent);
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < BT; i++) {
        float *d = dlogits + i * V;
        d[m->targets[i]] -= 1.0f;
        for (int v = 0; v < V; v++)
            d[v] *= invBT;
    }
    PROF_END(PROF_XENT, t_xent);
    PROF_BEGIN(t_head);
    if (p->lm_head)
        linear_backward_set(m->dlnf, g->lm_head, NULL, dlogits, m->lnf, p->lm_head, (int)BT, C, V);
    else
        linear_backward_set(m->dlnf, g->wte, NULL, dlogits, m->lnf, p->wte, (int)BT, C, V);
    PROF_END(PROF_LOGITS_BWD, t_head);
    PROF_BEGIN(t_lnf);
    layernorm_backward_set(m->dres, g->lnf_w, g->lnf_b, m->dlnf, m->res[L], p->lnf_w,
                           m->lnf_mean, m->lnf_rstd, (int)BT, C);
    PROF_END(PROF_NORM, t_lnf);

    for (int l = L - 1; l >= 0; l--) {
        const gpt_block *w = &p->block[l];
        const gpt_block *gw = &g->block[l];
        gpt_layer_acts *a = &m->la[l];
        const float *dbr = m->dres;
        if (drop) {
            memcpy(m->dbr, m->dres, BT * C * sizeof(float));
            apply_mask(m->dbr, a->m_fc2, keep, BT * C);
            dbr = m->dbr;
        }
        PROF_BEGIN(t_fc2);
        linear_backward_gelu(m->dbig, a->fch, gw->fc2_w, gw->fc2_b, dbr, a->fchg, w->fc2_w,
                             (int)BT, 4 * C, C);
        PROF_END(PROF_FC2_BWD, t_fc2);
        PROF_BEGIN(t_fc);
        linear_backward_set(m->dln, gw->fc_w, gw->fc_b, m->dbig, a->ln2, w->fc_w, (int)BT, C, 4 * C);
        PROF_END(PROF_FC_BWD, t_fc);
        PROF_BEGIN(t_ln2);
        layernorm_backward(m->dres, gw->ln2_w, gw->ln2_b, m->dln, a->res2, w->ln2_w, a->ln2_mean,
                           a->ln2_rstd, (int)BT, C);
        PROF_END(PROF_NORM, t_ln2);
        dbr = m->dres;
        if (drop) {
            memcpy(m->dbr, m->dres, BT * C * sizeof(float));
            apply_mask(m->dbr, a->m_proj, keep, BT * C);
            dbr = m->dbr;
        }
        PROF_BEGIN(t_proj);
        linear_backward_set(m->datty, gw->proj_w, gw->proj_b, dbr, a->atty, w->proj_w, (int)BT, C, C);
        PROF_END(PROF_PROJ_BWD, t_proj);
        PROF_BEGIN(t_att);
        attention_backward(m->dqkv, m->datty, a->qkv, a->att, drop ? a->m_att : NULL, keep, B, T,
                           C, H);
        PROF_END(PROF_ATTN_BWD, t_att);
        PROF_BEGIN(t_qkv);
        linear_backward_set(m->dln, gw->qkv_w, gw->qkv_b, m->dqkv, a->ln1, w->qkv_w, (int)BT, C,
                        3 * C);
        PROF_END(PROF_QKV_BWD, t_qkv);
        PROF_BEGIN(t_ln1);
        layernorm_backward(m->dres, gw->ln1_w, gw->ln1_b, m->dln, m->res[l], w->ln1_w,
                           a->ln1_mean, a->ln1_rstd, (int)BT, C);
        PROF_END(PROF_NORM, t_ln1);
    }

    if (drop)
        apply_mask(m->dres, m->m_emb, keep, BT * C);
    PROF_BEGIN(t_emb);
    const float *demb = m->dres;
    const int en = m->cfg.embed_norm;
    if (en == EMBED_SCALE) {
        scale_copy(m->dln, m->dres, m->embed_scale, BT * C);
        demb = m->dln;
    } else if (en != EMBED_NONE) {
        memset(m->dln, 0, BT * C * sizeof(float));
        if (en == EMBED_LAYERNORM || en == EMBED_LAYERNORM_MATCHED)
            layernorm_backward(m->dln, g->en_w, g->en_b, m->dres, m->emb, p->en_w, m->en_mean,
                               m->en_rstd, (int)BT, C);
        else
            rmsnorm_backward(m->dln, g->en_w, m->dres, m->emb, p->en_w, m->en_rstd, (int)BT, C);
        demb = m->dln;
    }
    /* scatter-add into the embeddings in row order: one thread, a fixed order */
    for (size_t i = 0; i < BT; i++) {
        float *gt = g->wte + (size_t)m->inputs[i] * C;
        float *gp = g->wpe + (i % (size_t)T) * C;
        const float *d = demb + i * C;
        for (int c = 0; c < C; c++) {
            gt[c] += d[c];
            gp[c] += d[c];
        }
    }
    PROF_END(PROF_EMBED, t_emb);
}

int gpt_config_n_groups(const gpt_config *c)
{
    return c->n_layer + 2 + (config_embed_norm_tensors(c) > 0) + !c->tie_embeddings;
}

int gpt_n_groups(const gpt_model *m)
{
    return gpt_config_n_groups(&m->cfg);
}

/* Per-chunk sums over x of x[i]^2 (max == NULL) or of x[i] with the maximum, each chunk
 * in element order.  A chunk's sum is one chain of dependent adds, so chunks of equal
 * length go CHAINS at a time with their chains interleaved: the adds overlap, and each
 * chunk's value is the same bits as alone.  Each thread takes a contiguous range of
 * chunks; the values do not depend on the ranges. */
#define CHAINS 4

static void chains_sumsq(const float *const *p, size_t len, double *sum)
{
    double s[CHAINS] = {0};
    for (size_t i = 0; i < len; i++) {
#pragma GCC unroll 4
        for (int j = 0; j < CHAINS; j++)
            s[j] += (double)p[j][i] * p[j][i];
    }
    for (int j = 0; j < CHAINS; j++)
        sum[j] = s[j];
}

static void chains_summax(const float *const *p, size_t len, double *sum, double *max)
{
    double s[CHAINS] = {0}, mx[CHAINS] = {0};
    for (size_t i = 0; i < len; i++) {
#pragma GCC unroll 4
        for (int j = 0; j < CHAINS; j++) {
            double v = p[j][i];
            s[j] += v;
            mx[j] = v > mx[j] ? v : mx[j];
        }
    }
    for (int j = 0; j < CHAINS; j++) {
        sum[j] = s[j];
        max[j] = mx[j];
    }
}

static void chunk_range(const float *x, const struct gpt_chunk *c, size_t k0, size_t k1,
                        double *sum, double *max)
{
    size_t k = k0;
    while (k < k1) {
        size_t len = c[k].hi - c[k].lo, g = 1;
        while (g < CHAINS && k + g < k1 && c[k + g].hi - c[k + g].lo == len)
            g++;
        const float *p[CHAINS];
        for (size_t j = 0; j < CHAINS; j++)
            p[j] = x + c[k + (j < g ? j : 0)].lo; /* fewer than CHAINS: lanes repeat chunk k */
        double s[CHAINS], mx[CHAINS];
        if (max)
            chains_summax(p, len, s, mx);
        else
            chains_sumsq(p, len, s);
        for (size_t j = 0; j < g; j++) {
            sum[k + j] = s[j];
            if (max)
                max[k + j] = mx[j];
        }
        k += g;
    }
}

static void chunk_sums(const gpt_model *m, const float *x, double *sum, double *max)
{
    size_t n = m->n_chunks;
#pragma omp parallel
    {
        size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
        chunk_range(x, m->chunks, n * t / nt, n * (t + 1) / nt, sum, max);
    }
}

double gpt_grad_norm_groups(const gpt_model *m, double *group_norm)
{
    const struct gpt_chunk *c = m->chunks;
    size_t n = m->n_chunks;
    double *part = m->chunk_sums;
    chunk_sums(m, m->grads, part, NULL);
    int ng = gpt_n_groups(m);
    double total = 0.0;
    for (int g = 0; g < ng; g++) {
        double s = 0.0;
        for (size_t k = 0; k < n; k++)
            if (m->tensors[c[k].tensor].group == g)
                s += part[k];
        if (group_norm)
            group_norm[g] = sqrt(s);
        total += s;
    }
    return sqrt(total);
}

double gpt_grad_norm(const gpt_model *m)
{
    return gpt_grad_norm_groups(m, NULL);
}

void gpt_adam_v_stats(const gpt_model *m, double *vmean, double *vmax)
{
    const struct gpt_chunk *c = m->chunks;
    size_t n = m->n_chunks;
    double *sum = m->chunk_sums, *max = m->chunk_sums + n;
    chunk_sums(m, m->adam_v, sum, max);
    int ng = gpt_n_groups(m);
    for (int g = 0; g < ng; g++) {
        double s = 0.0, mx = 0.0, cnt = 0.0;
        for (size_t k = 0; k < n; k++)
            if (m->tensors[c[k].tensor].group == g) {
                s += sum[k];
                cnt += (double)(c[k].hi - c[k].lo);
                if (max[k] > mx)
                    mx = max[k];
            }
        vmean[g] = cnt > 0 ? s / cnt : 0.0;
        vmax[g] = mx;
    }
}

void gpt_adamw(gpt_model *m, float lr, long t, float grad_scale)
{
    const float b1 = (float)m->cfg.beta1, b2 = (float)m->cfg.beta2, eps = (float)m->cfg.eps;
    const float wd = (float)m->cfg.weight_decay;
    const float bc1 = (float)(1.0 - rm_powi(m->cfg.beta1, t));
    const float bc2 = (float)(1.0 - rm_powi(m->cfg.beta2, t));
    PROF_BEGIN(t_opt);
    /* one parallel region over the chunks of every tensor (about a hundred tensors, many
       of them a bias of one chunk: a region each cost more than their updates) */
#pragma omp parallel for schedule(static)
    for (size_t k = 0; k < m->n_chunks; k++) {
        const struct gpt_chunk *c = &m->chunks[k];
        const gpt_tensor *tn = &m->tensors[c->tensor];
        adamw_update(m->params + c->lo, m->grads + c->lo, m->adam_m + c->lo, m->adam_v + c->lo,
                     c->hi - c->lo, grad_scale, b1, b2, bc1, bc2, lr, eps,
                     tn->decay ? 1.0f - lr * wd : 1.0f);
    }
    PROF_END(PROF_OPTIM, t_opt);
}

double gpt_embed_norm(const gpt_model *m, int B)
{
    size_t BT = (size_t)B * m->T;
    int C = m->C;
    float *norms = m->tmp; /* free between layers' uses */
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < BT; i++) {
        const float *x = m->res[0] + i * C;
        double s = 0.0;
        for (int c = 0; c < C; c++)
            s += (double)x[c] * x[c];
        norms[i] = (float)sqrt(s);
    }
    double s = 0.0;
    for (size_t i = 0; i < BT; i++)
        s += norms[i];
    return s / (double)BT;
}

double gpt_max_abs_logit(const gpt_model *m, int B)
{
    size_t BT = (size_t)B * m->T;
    int V = m->V;
    float *rowmax = m->tmp; /* free between layers' uses; max is exact in any order */
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < BT; i++) {
        const float *z = m->logits + i * V;
        float mx = 0.0f;
        for (int v = 0; v < V; v++) {
            float a = fabsf(z[v]);
            if (a > mx && isfinite(a))
                mx = a;
        }
        rowmax[i] = mx;
    }
    float mx = 0.0f;
    for (size_t i = 0; i < BT; i++)
        if (rowmax[i] > mx)
            mx = rowmax[i];
    return mx;
}

double gpt_lr(const gpt_config *c, long it)
{
    if (it < c->warmup)
        return c->lr * (double)(it + 1) / (double)c->warmup;
    if (c->lr_schedule == LR_CONSTANT)
        return c->lr;
    long span = (long)c->iters - 1 - c->warmup;
    double progress = span > 0 ? (double)(it - c->warmup) / (double)span : 1.0;
    if (progress > 1.0)
        progress = 1.0;
    return c->min_lr + 0.5 * (1.0 + rm_cos(M_PI * progress)) * (c->lr - c->min_lr);
}
