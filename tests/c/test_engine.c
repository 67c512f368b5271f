/* The engine on tiny models: finite-difference gradients for each embedding norm,
 * shared initial weights across variants, learning a pattern, thread-count determinism,
 * checkpoint/resume, divergence, and config validation. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../engine/config.h"
#include "../../engine/gpt.h"
#include "../../engine/kernels.h"
#include "../../engine/pcg.h"
#include "../../engine/train.h"
#include "check.h"

static char pattern_path[] = "/tmp/repro_test_pattern_XXXXXX";
static const char *PATTERN = "abacabad";

static void tiny(gpt_config *c, int norm)
{
    config_defaults(c);
    c->n_layer = 2;
    c->d_model = 12;
    c->n_head = 3;
    c->context = 6;
    c->batch = 2;
    c->embed_norm = norm;
    c->embed_init_std = 0.5;
    c->threads = 1;
    c->seed = 3;
}

/* 1. Central differences against the analytic gradient.  The loss is a float32
 * computation (relative rounding ~1e-7, so |δL| ≲ 3e-7 for L ≈ 2.3), which with h = 1e-3
 * puts a noise floor of 3e-7 / (2h) = 1.5e-4 on each difference: an entry passes when
 * |fd - analytic| <= 2e-2·|analytic| + 4e-4 (the relative part covers O(h²) truncation).
 * Each tensor is probed at its 3 largest-gradient entries and 3 drawn at random; the
 * largest entries are where a wrong formula shows. */
static void gradcheck(int norm, int tie)
{
    gpt_config c;
    tiny(&c, norm);
    c.tie_embeddings = tie;
    gpt_model m;
    char err[256];
    CHECK(gpt_init(&m, &c, 9, c.batch, err, sizeof err) == 0, "%s", err);
    pcg32 r;
    pcg32_seed(&r, 99, 1);
    for (int i = 0; i < c.batch * c.context; i++) {
        m.inputs[i] = (int32_t)pcg32_bounded(&r, 9);
        m.targets[i] = (int32_t)pcg32_bounded(&r, 9);
    }
    /* move gains and biases off 1 and 0 so their gradients are generic */
    for (int i = 0; i < m.n_tensors; i++)
        if (!m.tensors[i].drawn)
            for (size_t j = 0; j < m.tensors[i].size; j++)
                m.params[m.tensors[i].offset + j] += (float)(0.2 * pcg32_normal(&r));
    int B = c.batch;
    gpt_forward(&m, B, 1, 0, 0);
    gpt_zero_grad(&m);
    gpt_backward(&m, B);
    const float h = 1e-3f;
    int bad_tensors = 0;
    double worst = 0;
    for (int i = 0; i < m.n_tensors; i++) {
        const gpt_tensor *t = &m.tensors[i];
        size_t probe[6];
        int np = 0;
        for (int k = 0; k < 3; k++) { /* three largest |grad| */
            size_t best = 0;
            double bv = -1;
            for (size_t j = 0; j < t->size; j++) {
                int taken = 0;
                for (int q = 0; q < np; q++)
                    taken |= probe[q] == j;
                double g = fabs(m.grads[t->offset + j]);
                if (!taken && g > bv) {
                    bv = g;
                    best = j;
                }
            }
            probe[np++] = best;
        }
        for (int k = 0; k < 3; k++)
            probe[np++] = pcg32_bounded(&r, (uint32_t)t->size);
        int ok = 1;
        for (int k = 0; k < np; k++) {
            float *p = m.params + t->offset + probe[k];
            float p0 = *p;
            *p = p0 + h;
            double lp = gpt_forward(&m, B, 1, 0, 0);
            *p = p0 - h;
            double lm = gpt_forward(&m, B, 1, 0, 0);
            *p = p0;
            double fd = (lp - lm) / (2.0 * h), an = m.grads[t->offset + probe[k]];
            double excess = fabs(fd - an) - (2e-2 * fabs(an) + 4e-4);
            if (excess > 0) {
                fprintf(stderr, "norm %d %s[%zu]: fd %.6g analytic %.6g\n", norm, t->name,
                        probe[k], fd, an);
                ok = 0;
            }
            if (fabs(an) > 1e-2 && fabs(fd - an) / fabs(an) > worst)
                worst = fabs(fd - an) / fabs(an);
        }
        bad_tensors += !ok;
    }
    printf("gradcheck %-17s %-6s: %d tensors, worst relative error where |grad| > 1e-2: %.2e\n",
           embed_norm_names[norm], tie ? "tied" : "untied", m.n_tensors, worst);
    CHECK(bad_tensors == 0, "gradcheck embed_norm=%s tie_embeddings=%d: %d tensors off",
          embed_norm_names[norm], tie, bad_tensors);
    gpt_free(&m);
}

/* rho of gpt.h by brute force: the RMS of wte[v] + wpe[p] over every (v, p) pair, summed
 * pair by pair (not the engine's closed form). */
static double rho_brute(const gpt_model *m)
{
    double s = 0;
    for (int v = 0; v < m->V; v++)
        for (int p = 0; p < m->T; p++)
            for (int c = 0; c < m->C; c++) {
                double x = (double)m->p.wte[v * m->C + c] + m->p.wpe[p * m->C + c];
                s += x * x;
            }
    return sqrt(s / ((double)m->V * m->T * m->C));
}

/* 3. The five embedding norms of one seed share every initial weight (the norm's own
 * parameters come last and are not drawn); seeds differ; layernorm_matched's gain and
 * scale's constant are rho of the drawn weights. */
static void shared_init(void)
{
    enum { NN = 5 };
    gpt_model m[NN], other;
    char err[256];
    gpt_config c;
    for (int n = 0; n < NN; n++) {
        tiny(&c, n);
        gpt_init(&m[n], &c, 9, c.batch, err, sizeof err);
    }
    size_t shared = m[0].n_params;
    CHECK(m[EMBED_LAYERNORM].n_params == shared + 2 * 12 &&
              m[EMBED_RMSNORM].n_params == shared + 12 && m[EMBED_SCALE].n_params == shared &&
              m[EMBED_LAYERNORM_MATCHED].n_params == shared + 2 * 12,
          "parameter counts %zu %zu %zu %zu %zu", m[0].n_params, m[1].n_params, m[2].n_params,
          m[3].n_params, m[4].n_params);
    int same = 1;
    for (int n = 1; n < NN; n++)
        same &= memcmp(m[0].params, m[n].params, shared * sizeof(float)) == 0;
    CHECK(same, "the five embedding norms of one seed share the initial weights");
    double rho = rho_brute(&m[0]);
    CHECK(fabs(m[0].embed_rms / rho - 1) < 1e-12, "closed-form rho %.17g, brute force %.17g",
          m[0].embed_rms, rho);
    for (int n = 0; n < NN; n++)
        CHECK(m[n].embed_rms == m[0].embed_rms, "rho is the same for every norm (%s)",
              embed_norm_names[n]);
    printf("rho (embed_init_std 0.5, V 9, T 6, C 12): %.9f, sqrt(2)·0.5 = %.9f\n", rho,
           sqrt(2.0) * 0.5);
    const gpt_model *mm = &m[EMBED_LAYERNORM_MATCHED], *ms = &m[EMBED_SCALE];
    int gain = 1;
    for (int k = 0; k < 12; k++)
        gain &= mm->p.en_w[k] == (float)rho && mm->p.en_b[k] == 0.0f;
    CHECK(gain, "layernorm_matched: gain starts at (float) rho, bias at 0");
    CHECK(ms->embed_scale == (float)(1.0 / m[0].embed_rms) && m[0].embed_scale == 1.0f,
          "scale: constant 1/rho (%.9g), 1 for the others", ms->embed_scale);
    /* scale: the block-1 input over every (v, p) pair has RMS 1 at initialization */
    double s2 = 0;
    for (int v = 0; v < 9; v++)
        for (int p = 0; p < 6; p++)
            for (int k = 0; k < 12; k++) {
                float x = (ms->p.wte[v * 12 + k] + ms->p.wpe[p * 12 + k]) * ms->embed_scale;
                s2 += (double)x * x;
            }
    double rms1 = sqrt(s2 / (9.0 * 6 * 12));
    CHECK(fabs(rms1 - 1) < 1e-6, "scale: block-1 input RMS over all pairs %.9f", rms1);
    /* and the forward applies it: block-1 input = (tok + pos) · 1/rho */
    gpt_model *mf = &m[EMBED_SCALE];
    for (int i = 0; i < mf->B * mf->T; i++)
        mf->inputs[i] = i % 9;
    gpt_forward(mf, mf->B, 0, 0, 0);
    int applied = 1;
    for (int i = 0; i < mf->B * mf->T; i++)
        for (int k = 0; k < 12; k++) {
            float want = (mf->p.wte[(i % 9) * 12 + k] + mf->p.wpe[(i % 6) * 12 + k]) *
                         mf->embed_scale;
            applied &= mf->res[0][i * 12 + k] == want;
        }
    CHECK(applied, "scale: the forward's block-1 input is (tok + pos) times the constant");
    tiny(&c, 0);
    c.seed = 4;
    gpt_init(&other, &c, 9, c.batch, err, sizeof err);
    size_t differ = 0;
    for (size_t i = 0; i < shared; i++)
        differ += m[0].params[i] != other.params[i];
    CHECK(differ > shared / 2, "seed 3 and 4 differ in only %zu of %zu weights", differ, shared);
    /* init_seed = 4 with seed 3 draws seed 4's weights */
    gpt_model by_init;
    tiny(&c, 0);
    c.init_seed = 4;
    gpt_init(&by_init, &c, 9, c.batch, err, sizeof err);
    CHECK(memcmp(by_init.params, other.params, shared * sizeof(float)) == 0,
          "init_seed=4 draws the weights of seed 4");
    gpt_free(&by_init);
    gpt_config d;
    config_defaults(&d);
    CHECK(gpt_param_count(&d, 65) == 1611136, "default parameter count %zu",
          gpt_param_count(&d, 65));
    d.tie_embeddings = 0;
    CHECK(gpt_param_count(&d, 65) == 1611136 + 65 * 128, "untied parameter count %zu",
          gpt_param_count(&d, 65));
    for (int n = 0; n < NN; n++)
        gpt_free(&m[n]);
    gpt_free(&other);
}

/* An untied run draws lm_head last: its first n_params(tied) weights are the tied run's,
 * bit for bit, for every embedding norm; lm_head ~ N(0, 0.02) and is not wte. */
static void untied_init(void)
{
    char err[256];
    for (int n = 0; n < 5; n++) {
        gpt_config c;
        gpt_model t, u;
        tiny(&c, n);
        c.d_model = 32;
        c.n_head = 4;
        gpt_init(&t, &c, 40, c.batch, err, sizeof err);
        c.tie_embeddings = 0;
        gpt_init(&u, &c, 40, c.batch, err, sizeof err);
        const gpt_tensor *h = gpt_find_tensor(&u, "lm_head");
        CHECK(h && h->offset == t.n_params && h->size == 40 * 32 && h->decay &&
                  u.n_params == t.n_params + 40 * 32 && !gpt_find_tensor(&t, "lm_head"),
              "%s: lm_head (V, C) comes last, with weight decay", embed_norm_names[n]);
        CHECK(memcmp(t.params, u.params, t.n_params * sizeof(float)) == 0,
              "%s: tied and untied share every other initial weight", embed_norm_names[n]);
        if (h) {
            double s = 0, s2 = 0;
            for (size_t i = 0; i < h->size; i++) {
                s += u.params[h->offset + i];
                s2 += (double)u.params[h->offset + i] * u.params[h->offset + i];
            }
            double sd = sqrt(s2 / h->size - (s / h->size) * (s / h->size));
            CHECK(fabs(sd / 0.02 - 1) < 0.1 && u.p.lm_head == u.params + h->offset &&
                      memcmp(u.p.lm_head, u.p.wte, h->size * sizeof(float)) != 0,
                  "%s: lm_head sd %.4f (want 0.02)", embed_norm_names[n], sd);
        }
        CHECK(gpt_n_groups(&u) == gpt_n_groups(&t) + 1, "untied adds one gradient group");
        gpt_free(&t);
        gpt_free(&u);
    }
}

/* embed_init_std scales the initial token and position embeddings, so the block-1 input
 * of the none variant has norm ≈ std·sqrt(2·d_model), and leaves every other initial
 * weight unchanged (the same normal draws, in the same order). */
static void embed_init_scale(void)
{
    double stds[2] = {0.02, 1.0};
    gpt_model m[2];
    char err[256];
    for (int k = 0; k < 2; k++) {
        gpt_config c;
        tiny(&c, EMBED_NONE);
        c.d_model = 64;
        c.n_head = 4;
        c.context = 32;
        c.batch = 8;
        c.embed_init_std = stds[k];
        gpt_init(&m[k], &c, 9, c.batch, err, sizeof err);
        pcg32 r;
        pcg32_seed(&r, 5, 0);
        for (int i = 0; i < c.batch * c.context; i++)
            m[k].inputs[i] = (int32_t)pcg32_bounded(&r, 9);
        gpt_forward(&m[k], c.batch, 0, 0, 0);
        double norm = gpt_embed_norm(&m[k], c.batch), want = stds[k] * sqrt(2.0 * 64);
        printf("embed_init_std %.2f: block-1 input norm %.4f (expected about %.4f)\n", stds[k],
               norm, want);
        CHECK(fabs(norm / want - 1) < 0.1, "std %g: norm %g, expected %g", stds[k], norm, want);
    }
    const gpt_tensor *wte = gpt_find_tensor(&m[0], "wte"), *wpe = gpt_find_tensor(&m[0], "wpe");
    size_t emb_end = wpe->offset + wpe->size;
    int scaled = 1;
    for (size_t i = wte->offset; i < emb_end; i++)
        scaled &= fabsf(m[1].params[i] - m[0].params[i] * 50.0f) <= 1e-5f * fabsf(m[1].params[i]) + 1e-30f;
    CHECK(scaled, "embeddings are the same draws scaled by the std ratio");
    CHECK(memcmp(m[0].params + emb_end, m[1].params + emb_end,
                 (m[0].n_params - emb_end) * sizeof(float)) == 0,
          "embed_init_std leaves every other initial weight unchanged");
    gpt_free(&m[0]);
    gpt_free(&m[1]);
}

/* tok_init_std and pos_init_std: unset, or set to embed_init_std, they are the shorthand's
 * weights; set apart, each embedding is the same draws times its own std (position 0 gives
 * exact +0 zeros), and every other initial weight is unchanged. */
static void tok_pos_init(void)
{
    char err[256];
    gpt_config c;
    gpt_model base, expl, split;
    tiny(&c, EMBED_LAYERNORM);
    c.embed_init_std = 0.02;
    gpt_init(&base, &c, 9, c.batch, err, sizeof err);
    c.tok_init_std = 0.02;
    c.pos_init_std = 0.02;
    gpt_init(&expl, &c, 9, c.batch, err, sizeof err);
    CHECK(memcmp(base.params, expl.params, base.n_params * sizeof(float)) == 0,
          "tok/pos_init_std = embed_init_std gives the shorthand's weights");
    c.tok_init_std = 1.0;
    c.pos_init_std = 0.0;
    gpt_init(&split, &c, 9, c.batch, err, sizeof err);
    const gpt_tensor *wte = gpt_find_tensor(&base, "wte"), *wpe = gpt_find_tensor(&base, "wpe");
    int tok = 1, pos = 1;
    for (size_t i = 0; i < wte->size; i++)
        tok &= fabsf(split.params[wte->offset + i] - base.params[wte->offset + i] * 50.0f) <=
               1e-5f * fabsf(split.params[wte->offset + i]);
    for (size_t i = 0; i < wpe->size; i++) {
        float z = split.params[wpe->offset + i];
        uint32_t bits;
        memcpy(&bits, &z, sizeof bits);
        pos &= bits == 0;
    }
    CHECK(tok, "tok_init_std=1: the same draws as 0.02, times 50");
    CHECK(pos, "pos_init_std=0: position embeddings are +0");
    size_t emb_end = wpe->offset + wpe->size;
    CHECK(memcmp(base.params + emb_end, split.params + emb_end,
                 (base.n_params - emb_end) * sizeof(float)) == 0,
          "tok/pos_init_std leave every other initial weight unchanged");
    CHECK(fabs(split.embed_rms / rho_brute(&split) - 1) < 1e-12,
          "rho with zero position embeddings %.9g", split.embed_rms);
    gpt_free(&base);
    gpt_free(&expl);
    gpt_free(&split);
}

/* The schedules of gpt_lr: warmup (it+1)/warmup·lr, then cosine to min_lr at the last
 * step or the peak throughout; warmup 0 starts at the peak. */
static void lr_schedules(void)
{
    gpt_config c;
    config_defaults(&c);
    c.iters = 11;
    c.warmup = 4;
    c.lr = 1e-3;
    c.min_lr = 1e-4;
    CHECK(gpt_lr(&c, 0) == 1e-3 * 1 / 4.0 && gpt_lr(&c, 3) == 1e-3 &&
              fabs(gpt_lr(&c, 10) - 1e-4) < 1e-18,
          "cosine: %g %g %g", gpt_lr(&c, 0), gpt_lr(&c, 3), gpt_lr(&c, 10));
    c.lr_schedule = LR_CONSTANT;
    int flat = 1;
    for (long it = 3; it < 11; it++)
        flat &= gpt_lr(&c, it) == 1e-3;
    CHECK(flat && gpt_lr(&c, 1) == 1e-3 * 2 / 4.0, "constant: warmup, then the peak");
    c.warmup = 0;
    CHECK(gpt_lr(&c, 0) == 1e-3, "constant, warmup 0: the peak from step 0");
    c.lr_schedule = LR_COSINE;
    CHECK(fabs(gpt_lr(&c, 0) - 1e-3) < 1e-18 && fabs(gpt_lr(&c, 10) - 1e-4) < 1e-18 &&
              gpt_lr(&c, 5) < 1e-3 && gpt_lr(&c, 5) > 1e-4,
          "cosine, warmup 0: from the peak at step 0 to min_lr");
    char err[256];
    c.min_lr = 2e-3;
    CHECK(config_validate(&c, err, sizeof err) != 0 && strstr(err, "min_lr"),
          "cosine refuses min_lr above lr");
    c.lr_schedule = LR_CONSTANT;
    CHECK(config_validate(&c, err, sizeof err) == 0, "constant ignores min_lr: %s", err);
}

#define MAX_COLS 64
typedef struct {
    int n, ncols;
    long step[1024];
    double v[1024][MAX_COLS];
    long stop_at;
} recorder;

static int record(void *ud, const train_row *row)
{
    recorder *r = ud;
    if (r->n < 1024 && row->ncols <= MAX_COLS) {
        r->step[r->n] = row->step;
        r->ncols = row->ncols;
        memcpy(r->v[r->n], row->v, (size_t)row->ncols * sizeof(double));
        r->n++;
    }
    return r->stop_at >= 0 && row->step >= r->stop_at;
}

static void pattern_config(gpt_config *c)
{
    config_defaults(c);
    c->n_layer = 2;
    c->d_model = 32;
    c->n_head = 4;
    c->context = 16;
    c->batch = 8;
    c->iters = 150;
    c->lr = 3e-3;
    c->min_lr = 3e-4;
    c->warmup = 10;
    c->threads = 1;
    snprintf(c->data, sizeof c->data, "%s", pattern_path);
}

/* 4. A cycle "abacabad" where the next character is not determined by the current one
 * alone: the best bigram model has loss H(next | current), computed here from the
 * pattern (0.52 nats).  A model that uses its context must beat half of that. */
static void learns_pattern(void)
{
    size_t n = strlen(PATTERN);
    double count[256][256] = {{0}}, total[256] = {0};
    for (size_t i = 0; i < n; i++) {
        unsigned char a = (unsigned char)PATTERN[i], b = (unsigned char)PATTERN[(i + 1) % n];
        count[a][b]++;
        total[a]++;
    }
    double h_bigram = 0;
    for (int a = 0; a < 256; a++)
        for (int b = 0; b < 256; b++)
            if (count[a][b] > 0)
                h_bigram -= count[a][b] / n * log(count[a][b] / total[a]);
    gpt_config c;
    pattern_config(&c);
    train_metrics m;
    char err[256];
    int rc = train_run(&c, NULL, &m, err, sizeof err);
    CHECK(rc == 0, "%s", err);
    printf("pattern: val_loss %.4f (bigram optimum %.4f nats, bound %.4f), val_acc %.3f\n",
           m.diag.val_loss, h_bigram, h_bigram / 2, m.diag.val_acc);
    CHECK(m.diag.val_loss < h_bigram / 2, "val_loss %.4f not below %.4f", m.diag.val_loss,
          h_bigram / 2);
    /* 20 subsets of 50 positions: 1000 draws, so their mean is within a few 0.01 of the
     * accuracy on all positions; each value is a multiple of 1/50 */
    int grid = 1;
    for (int k = 0; k < DIAG_SUBSETS; k++)
        grid &= fabs(m.subset_acc[k] * DIAG_SUBSET_SIZE -
                     round(m.subset_acc[k] * DIAG_SUBSET_SIZE)) < 1e-9;
    printf("pattern: subset accuracy %.3f (sd %.3f over %d subsets of %d), val_acc %.3f\n",
           m.subset_acc_mean, m.subset_acc_sd, DIAG_SUBSETS, DIAG_SUBSET_SIZE, m.diag.val_acc);
    CHECK(grid && fabs(m.subset_acc_mean - m.diag.val_acc) < 0.08 && m.subset_acc_sd >= 0,
          "subset accuracy %.4f vs val_acc %.4f", m.subset_acc_mean, m.diag.val_acc);
    CHECK(!m.diverged && m.curve.init_loss > 0 && m.curve.max_grad_norm > 0 &&
              m.curve.max_abs_logit > 0 && m.curve.logit_growth > 1 &&
              m.curve.max_loss_jump >= 0 && isnan(m.embed_scale),
          "training-curve instruments: init %.3f gn %.3f logit %.3f growth %.3f jump %.3f",
          m.curve.init_loss, m.curve.max_grad_norm, m.curve.max_abs_logit,
          m.curve.logit_growth, m.curve.max_loss_jump);
    train_metrics_free(&m);
}

/* bitwise, so NaN columns compare equal to themselves */
static int rows_equal(const recorder *a, const recorder *b)
{
    if (a->n != b->n || a->ncols != b->ncols)
        return 0;
    for (int i = 0; i < a->n; i++)
        if (a->step[i] != b->step[i] ||
            memcmp(a->v[i], b->v[i], (size_t)a->ncols * sizeof(double)) != 0)
            return 0;
    return 1;
}

/* every scalar instrument and both profiles, bitwise */
static int metrics_equal(const train_metrics *a, const train_metrics *b)
{
    diag_result x = a->diag, y = b->diag;
    x.resid_norm = x.pos_loss = y.resid_norm = y.pos_loss = NULL;
    return a->evaluated == b->evaluated && memcmp(&x, &y, sizeof x) == 0 &&
           memcmp(a->resid_norm, b->resid_norm, (size_t)(a->n_layer + 1) * sizeof(double)) == 0 &&
           memcmp(a->pos_loss, b->pos_loss, (size_t)a->context * sizeof(double)) == 0 &&
           memcmp(&a->final_grad_norm, &b->final_grad_norm, sizeof(double)) == 0 &&
           memcmp(&a->curve, &b->curve, sizeof a->curve) == 0 &&
           memcmp(a->subset_acc, b->subset_acc, sizeof a->subset_acc) == 0 &&
           memcmp(&a->subset_acc_sd, &b->subset_acc_sd, sizeof(double)) == 0 &&
           memcmp(&a->embed_init_rms, &b->embed_init_rms, sizeof(double)) == 0 &&
           a->diverged == b->diverged && a->diverge_step == b->diverge_step;
}

/* 5. threads=1 and threads=2 give identical bits (dropout on, so masks are covered);
 * and a run stopped after a checkpoint resumes to the same bits. */
static void determinism_and_resume(void)
{
    static recorder r1, r2, r3;
    gpt_config c;
    pattern_config(&c);
    c.iters = 12;
    c.dropout = 0.1;
    c.d_model = 24; /* rows and columns that do not split evenly */
    c.n_head = 3;
    c.diag_every = 5; /* periodic diagnostics are covered too */
    c.diag_windows = 3;
    train_metrics m1, m2, m3;
    char err[256];
    r1.stop_at = r2.stop_at = -1;
    train_hooks h1 = {record, &r1, NULL, 0, 0, NULL, NULL, 0, NULL},
                h2 = {record, &r2, NULL, 0, 0, NULL, NULL, 0, NULL};
    c.threads = 1;
    CHECK(train_run(&c, &h1, &m1, err, sizeof err) == 0, "%s", err);
    c.threads = 2;
    CHECK(train_run(&c, &h2, &m2, err, sizeof err) == 0, "%s", err);
    CHECK(rows_equal(&r1, &r2) && metrics_equal(&m1, &m2), "threads=1 and threads=2 differ");

    char ck[] = "/tmp/repro_test_ckpt_XXXXXX";
    int fd = mkstemp(ck);
    close(fd);
    unlink(ck);
    r3.stop_at = 6; /* stopped after step 6: periodic checkpoint at 4, then one at 7 */
    train_hooks h3 = {record, &r3, ck, 4, 1, "config-a", NULL, 0, NULL};
    c.threads = 2;
    CHECK(train_run(&c, &h3, &m3, err, sizeof err) == 0, "%s", err);
    CHECK(m3.stopped && access(ck, F_OK) == 0, "stopped run left a checkpoint");
    train_metrics_free(&m3);
    r3.n = 0;
    r3.stop_at = -1;
    c.threads = 1;
    CHECK(train_run(&c, &h3, &m3, err, sizeof err) == 0, "%s", err);
    CHECK(m3.resumed_from == 7, "resumed from step %ld (stopped after step 6)", m3.resumed_from);
    CHECK(rows_equal(&r1, &r3) && metrics_equal(&m1, &m3),
          "resumed run differs from the uninterrupted one");
    train_metrics_free(&m3);
    gpt_config other = c;
    other.d_model = 16;
    other.n_head = 2;
    /* a larger model's checkpoint: refused from its size, before it is read */
    CHECK(train_run(&other, &h3, &m3, err, sizeof err) != 0 &&
              strstr(err, "bytes, more than the") && strstr(err, ck),
          "checkpoint of another config refused: %s", err);
    /* the same shape, another config: only the config id inside tells them apart */
    other = c;
    other.lr = 2 * c.lr;
    train_hooks h4 = {record, &r3, ck, 4, 1, "config-b", NULL, 0, NULL};
    CHECK(train_run(&other, &h4, &m3, err, sizeof err) == TRAIN_ECHECKPOINT &&
              strstr(err, "a checkpoint of another config (config-a), not of this one (config-b)"),
          "same-shape checkpoint of another config refused by its id: %s", err);
    unlink(ck);
    train_metrics_free(&m1);
    train_metrics_free(&m2);
    train_metrics_free(&m3);
}

/* The instruments only read the model: with periodic diagnostics on, every training
 * column of the log is the same bits as with them off, and the d_* columns are filled
 * exactly on the diagnostic steps. */
static void diagnostics_do_not_change_training(void)
{
    static recorder off, on;
    off.stop_at = on.stop_at = -1;
    gpt_config c;
    pattern_config(&c);
    c.iters = 9;
    c.warmup = 2;
    c.dropout = 0.1;
    train_metrics m1, m2;
    char err[256];
    train_hooks h1 = {record, &off, NULL, 0, 0, NULL, NULL, 0, NULL},
                h2 = {record, &on, NULL, 0, 0, NULL, NULL, 0, NULL};
    CHECK(train_run(&c, &h1, &m1, err, sizeof err) == 0, "%s", err);
    c.diag_every = 3;
    c.diag_windows = 4;
    CHECK(train_run(&c, &h2, &m2, err, sizeof err) == 0, "%s", err);
    int ntrain = train_log_ncols(&c) - 14, same = off.n == on.n, filled = 1;
    for (int i = 0; i < off.n && same; i++) {
        same &= memcmp(off.v[i], on.v[i], (size_t)ntrain * sizeof(double)) == 0;
        int diag_step = (i + 1) % 3 == 0;
        for (int k = ntrain; k < on.ncols; k++)
            filled &= diag_step ? (k - ntrain >= 9 && k - ntrain <= 11) || !isnan(on.v[i][k])
                                : isnan(on.v[i][k]);
    }
    CHECK(same, "training columns identical with diagnostics on and off");
    CHECK(filled, "d_* columns filled on diagnostic steps only (the pattern has only letters, so the "
          "digit, punct and space norms are undefined)");
    CHECK(metrics_equal(&m1, &m2), "final metrics identical with diagnostics on and off");
    double mean_pos = 0;
    for (int t = 0; t < m1.context; t++)
        mean_pos += m1.pos_loss[t] / m1.context;
    CHECK(fabs(mean_pos - m1.diag.val_loss) < 1e-12, "loss by position averages to val_loss");
    train_metrics_free(&m1);
    train_metrics_free(&m2);
}

/* The training-curve instruments agree with the log they summarize, the new log column
 * is there, and data_seed / init_seed split the seed as documented. */
static void curve_and_seeds(void)
{
    static recorder a, b, d;
    a.stop_at = b.stop_at = d.stop_at = -1;
    gpt_config c;
    pattern_config(&c);
    c.iters = 20;
    c.warmup = 0;
    c.lr_schedule = LR_CONSTANT;
    c.seed = 5;
    train_metrics m1, m2, m3;
    char err[256];
    train_hooks h1 = {record, &a, NULL, 0, 0, NULL, NULL, 0, NULL},
                h2 = {record, &b, NULL, 0, 0, NULL, NULL, 0, NULL},
                h3 = {record, &d, NULL, 0, 0, NULL, NULL, 0, NULL};
    CHECK(train_run(&c, &h1, &m1, err, sizeof err) == 0, "%s", err);
    char name[64];
    int col_logit = -1, col_gn = -1, col_lr = -1;
    for (int k = 0; k < train_log_ncols(&c); k++) {
        train_log_colname(&c, k, name, sizeof name);
        if (strcmp(name, "max_abs_logit") == 0)
            col_logit = k;
        if (strcmp(name, "grad_norm") == 0)
            col_gn = k;
        if (strcmp(name, "lr") == 0)
            col_lr = k;
    }
    CHECK(col_logit == 5 && col_gn == 3 && col_lr == 1, "log columns lr %d grad_norm %d "
          "max_abs_logit %d", col_lr, col_gn, col_logit);
    double gmax = 0, zmax = 0, jump = 0, best = a.v[0][2];
    int flat = 1;
    for (int i = 0; i < a.n; i++) {
        gmax = fmax(gmax, a.v[i][3]);
        zmax = fmax(zmax, a.v[i][5]);
        if (i > 0 && a.v[i][2] - best > jump)
            jump = a.v[i][2] - best;
        best = fmin(best, a.v[i][2]);
        flat &= a.v[i][1] == c.lr;
    }
    CHECK(flat, "warmup 0 with the constant schedule trains at the peak lr throughout");
    CHECK(!m1.diverged && m1.steps == 20 && m1.evaluated, "warmup 0 trains to the end");
    CHECK(m1.curve.max_grad_norm == gmax && m1.curve.max_abs_logit == zmax &&
              m1.curve.max_loss_jump == jump && m1.curve.init_loss == a.v[0][2] &&
              m1.curve.logit_growth == zmax / a.v[0][5],
          "curve: grad %g/%g logit %g/%g jump %g/%g", m1.curve.max_grad_norm, gmax,
          m1.curve.max_abs_logit, zmax, m1.curve.max_loss_jump, jump);
    printf("curve (20 steps, lr 3e-3 constant): init_loss %.4f max_grad_norm %.4f at %ld, "
           "max_loss_jump %.4f at %ld, max|logit| %.3f, growth %.2f\n",
           m1.curve.init_loss, m1.curve.max_grad_norm, m1.curve.max_grad_norm_step,
           m1.curve.max_loss_jump, m1.curve.max_loss_jump_step, m1.curve.max_abs_logit,
           m1.curve.logit_growth);
    /* seed 6 with init_seed 5 and data_seed 5 is seed 5's training (dropout is 0): only the
     * subset-accuracy stream, which follows `seed`, differs */
    c.seed = 6;
    c.init_seed = 5;
    c.data_seed = 5;
    CHECK(train_run(&c, &h2, &m2, err, sizeof err) == 0, "%s", err);
    CHECK(rows_equal(&a, &b) && m1.diag.val_loss == m2.diag.val_loss,
          "init_seed and data_seed carry the training");
    CHECK(memcmp(m1.subset_acc, m2.subset_acc, sizeof m1.subset_acc) != 0,
          "the subset stream follows seed");
    /* data_seed alone changes the batches, not the initial loss's weights */
    c.data_seed = 7;
    CHECK(train_run(&c, &h3, &m3, err, sizeof err) == 0, "%s", err);
    CHECK(!rows_equal(&a, &d) && m3.embed_init_rms == m1.embed_init_rms,
          "another data_seed trains on other batches from the same initial weights");
    train_metrics_free(&m1);
    train_metrics_free(&m2);
    train_metrics_free(&m3);
}

/* A run whose loss becomes non-finite is reported as diverged with its step, not as an
 * error.  (Adam with LayerNorm stays finite even at lr 1e4; a step of 1e35 overflows.) */
static void divergence(void)
{
    static recorder r;
    r.stop_at = -1;
    gpt_config c;
    pattern_config(&c);
    c.iters = 60;
    c.lr = 1e35;
    c.min_lr = 1e35;
    c.warmup = 0;
    c.grad_clip = 0;
    c.weight_decay = 0;
    train_hooks h = {record, &r, NULL, 0, 0, NULL, NULL, 0, NULL};
    train_metrics m;
    char err[256];
    CHECK(train_run(&c, &h, &m, err, sizeof err) == 0, "%s", err);
    CHECK(m.diverged && m.diverge_step >= 0 && m.diverge_step < 60 &&
              r.step[r.n - 1] == m.diverge_step,
          "diverged %d at %ld", m.diverged, m.diverge_step);
    printf("divergence: lr 1e35 diverged at step %ld\n", m.diverge_step);
    CHECK(m.diverge_lr == 1e35 && !m.evaluated && isfinite(m.curve.max_grad_norm),
          "diverge_lr %g; the curve instruments exist for a diverged run", m.diverge_lr);
    train_metrics_free(&m);
}

/* A finite blow-up: lr 1 without clipping drives the loss far above its initial value
 * and keeps it there; the run stops DIVERGE_STEPS steps after the onset, which is the
 * first of those steps. */
static void divergence_threshold(void)
{
    static recorder r;
    r.stop_at = -1;
    gpt_config c;
    pattern_config(&c);
    c.iters = 100;
    c.lr = 1.0;
    c.lr_schedule = LR_CONSTANT;
    c.warmup = 0;
    c.grad_clip = 0;
    train_hooks h = {record, &r, NULL, 0, 0, NULL, NULL, 0, NULL};
    train_metrics m;
    char err[256];
    CHECK(train_run(&c, &h, &m, err, sizeof err) == 0, "%s", err);
    int finite = 1, above = 1;
    for (int i = 0; i < r.n; i++)
        finite &= isfinite(r.v[i][2]) && isfinite(r.v[i][3]);
    for (long t = m.diverge_step; m.diverged && t < r.n; t++)
        above &= r.v[t][2] > r.v[0][2] + DIVERGE_MARGIN;
    printf("divergence: lr 1 (finite losses: %d) diverged %d at step %ld, lr %g, stopped after "
           "%d steps; loss at onset %.3f, initial %.3f\n",
           finite, m.diverged, m.diverge_step, m.diverge_lr, r.n,
           m.diverged ? r.v[m.diverge_step][2] : NAN, r.v[0][2]);
    CHECK(m.diverged && finite && above && r.n == m.diverge_step + DIVERGE_STEPS &&
              m.steps == r.n && !m.evaluated && m.diverge_lr == 1.0,
          "finite divergence at %ld after %d rows", m.diverge_step, r.n);
    CHECK(m.diverge_step == 0 || !(r.v[m.diverge_step - 1][2] > r.v[0][2] + DIVERGE_MARGIN),
          "the onset is the first step of the streak");
    train_metrics_free(&m);
}

/* 6. Each invalid config is refused with a message naming the key. */
static void invalid_configs(void)
{
    struct {
        const char *key;
        double value;
        const char *want;
    } cases[] = {
        {"n_head", 5, "n_head=5"},       {"d_model", 0, "d_model=0"},
        {"n_layer", -1, "n_layer=-1"},   {"batch", 0, "batch=0"},
        {"iters", 0, "iters=0"},         {"context", 0, "context=0"},
        {"lr", 0, "lr=0"},               {"lr", -1, "lr=-1"},
        {"min_lr", 1, "min_lr=1"},       {"warmup", 400, "warmup=400"},
        {"dropout", 1, "dropout=1"},     {"dropout", -0.1, "dropout=-0.1"},
        {"beta1", 1, "beta1=1"},         {"beta2", -0.5, "beta2=-0.5"},
        {"eps", 0, "eps=0"},             {"embed_init_std", 0, "embed_init_std=0"},
        {"grad_clip", -1, "grad_clip=-1"}, {"context", 100000, "context=100000"},
        {"lr", NAN, "lr=nan"},
    };
    char err[512];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gpt_config c;
        pattern_config(&c);
        c.iters = 300;
        c.warmup = 30;
        int rc = config_set_num(&c, cases[i].key, cases[i].value, err, sizeof err);
        if (rc == 0)
            rc = train_check(&c, err, sizeof err);
        CHECK(rc != 0 && strstr(err, cases[i].want), "%s=%g: got '%s'", cases[i].key,
              cases[i].value, rc ? err : "accepted");
    }
    gpt_config c;
    pattern_config(&c);
    CHECK(config_set_num(&c, "embed_nrom", 1, err, sizeof err) != 0 && strstr(err, "embed_nrom"),
          "unknown key: %s", err);
    CHECK(config_set_str(&c, "embed_norm", "batchnorm", err, sizeof err) != 0 &&
              strstr(err, "embed_norm=batchnorm"),
          "unknown embed_norm: %s", err);
    CHECK(config_set_num(&c, "n_layer", 2.5, err, sizeof err) != 0 && strstr(err, "n_layer"),
          "non-integer n_layer: %s", err);
    /* the new keys */
    struct {
        const char *key;
        double value;
        const char *want;
    } more[] = {
        {"tok_init_std", 0, "tok_init_std=0"}, {"tok_init_std", -1, "tok_init_std=-1"},
        {"pos_init_std", -0.5, "pos_init_std=-0.5"}, {"tok_init_std", NAN, "tok_init_std=nan"},
        {"pos_init_std", INFINITY, "pos_init_std=inf"}, {"init_seed", -1, "init_seed=-1"},
        {"data_seed", -3, "data_seed=-3"},
    };
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) {
        pattern_config(&c);
        int rc = config_set_num(&c, more[i].key, more[i].value, err, sizeof err);
        if (rc == 0)
            rc = config_validate(&c, err, sizeof err);
        CHECK(rc != 0 && strstr(err, more[i].want), "%s=%g: got '%s'", more[i].key,
              more[i].value, rc ? err : "accepted");
    }
    pattern_config(&c);
    CHECK(config_set_num(&c, "pos_init_std", 0, err, sizeof err) == 0 &&
              config_validate(&c, err, sizeof err) == 0,
          "pos_init_std=0 is allowed: %s", err);
    CHECK(config_set_str(&c, "lr_schedule", "linear", err, sizeof err) != 0 &&
              strstr(err, "lr_schedule=linear") && strstr(err, "cosine, constant"),
          "unknown lr_schedule: %s", err);
    CHECK(config_set_str(&c, "tie_embeddings", "maybe", err, sizeof err) != 0 &&
              strstr(err, "tie_embeddings=maybe"),
          "tie_embeddings takes true or false: %s", err);
    CHECK(config_set_str(&c, "embed_norm", "layernorm_matched", err, sizeof err) == 0 &&
              c.embed_norm == EMBED_LAYERNORM_MATCHED &&
              config_set_str(&c, "tie_embeddings", "false", err, sizeof err) == 0 &&
              c.tie_embeddings == 0 &&
              config_set_num(&c, "tie_embeddings", 0, err, sizeof err) != 0,
          "string values of enum and boolean keys; a number is not a boolean: %s", err);
    /* a context longer than the validation split: 4800 chars give a 480-char split */
    pattern_config(&c);
    c.context = 500;
    CHECK(train_check(&c, err, sizeof err) != 0 && strstr(err, "context=500"),
          "context beyond the validation split: %s", err);
    snprintf(c.data, sizeof c.data, "/nonexistent/corpus.txt");
    c.context = 16;
    CHECK(train_check(&c, err, sizeof err) != 0 && strstr(err, "/nonexistent/corpus.txt"),
          "unreadable corpus: %s", err);
    train_metrics m;
    CHECK(train_run(&c, NULL, &m, err, sizeof err) != 0, "train_run refuses it too");
}

/* Which keys a record may leave out: omittable keys at their default, derived keys
 * unset or equal to their source. */
static void defaults_omitted(void)
{
    gpt_config c;
    config_defaults(&c);
    int omittable = 0, at_default = 1;
    for (int i = 0; i < config_nkeys; i++)
        if (config_keys[i].omittable) {
            omittable++;
            at_default &= config_at_default(&c, &config_keys[i]);
        }
    CHECK(omittable == 12 && at_default, "12 omittable keys, all at default in the defaults");
    {
        const config_key *ratio = config_find("min_lr_ratio");
        gpt_config r = c;
        char err[256] = "";
        CHECK(ratio && ratio->omittable && c.min_lr_ratio == 0.1 &&
                  c.min_lr == 3e-5 && config_validate(&r, err, sizeof err) == 0,
              "min_lr_ratio: omittable, default 0.1 (0.1 x the default lr is the default min_lr)");
        r.min_lr_ratio = 1.5;
        CHECK(config_validate(&r, err, sizeof err) != 0 && strstr(err, "min_lr_ratio=1.5"),
              "min_lr_ratio above 1 is refused, naming it");
        r.min_lr_ratio = 0.5;
        CHECK(!config_at_default(&r, ratio), "min_lr_ratio 0.5 is recorded");
    }
    const config_key *tok = config_find("tok_init_std"), *seed = config_find("init_seed"),
                     *tie = config_find("tie_embeddings"), *sch = config_find("lr_schedule");
    CHECK(!config_is_set(&c, tok) && !config_is_set(&c, seed) && config_tok_init_std(&c) == 0.02 &&
              config_init_seed(&c) == 1 && config_data_seed(&c) == 1,
          "derived keys resolve to their source");
    c.tok_init_std = 0.02;
    c.init_seed = 1;
    CHECK(config_is_set(&c, tok) && config_at_default(&c, tok) && config_at_default(&c, seed),
          "a derived key set to its source's value is at default");
    c.embed_init_std = 1.0;
    c.seed = 2;
    CHECK(!config_at_default(&c, tok) && !config_at_default(&c, seed),
          "and is not once the source moves");
    c.tie_embeddings = 0;
    c.lr_schedule = LR_CONSTANT;
    CHECK(!config_at_default(&c, tie) && !config_at_default(&c, sch), "untied, constant");
}

int main(void)
{
    int fd = mkstemp(pattern_path);
    size_t n = strlen(PATTERN);
    for (int i = 0; i < 600; i++)
        if (write(fd, PATTERN, n) != (ssize_t)n)
            return 2;
    close(fd);
    for (int norm = 0; norm < 5; norm++)
        gradcheck(norm, 1);
    gradcheck(EMBED_NONE, 0);
    gradcheck(EMBED_LAYERNORM_MATCHED, 0);
    shared_init();
    untied_init();
    embed_init_scale();
    tok_pos_init();
    lr_schedules();
    learns_pattern();
    determinism_and_resume();
    diagnostics_do_not_change_training();
    curve_and_seeds();
    divergence();
    divergence_threshold();
    invalid_configs();
    defaults_omitted();
    kernels_release();
    unlink(pattern_path);
    return check_done("test_engine");
}
