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
static void gradcheck(int norm)
{
    gpt_config c;
    tiny(&c, norm);
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
        if (m.tensors[i].init_std == 0)
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
    printf("gradcheck %-9s: %d tensors, worst relative error where |grad| > 1e-2: %.2e\n",
           embed_norm_names[norm], m.n_tensors, worst);
    CHECK(bad_tensors == 0, "gradcheck embed_norm=%s: %d tensors off", embed_norm_names[norm],
          bad_tensors);
    gpt_free(&m);
}

/* 3. The three variants of one seed share every initial weight; seeds differ. */
static void shared_init(void)
{
    gpt_model m[3], other;
    char err[256];
    gpt_config c;
    for (int n = 0; n < 3; n++) {
        tiny(&c, n);
        gpt_init(&m[n], &c, 9, c.batch, err, sizeof err);
    }
    size_t shared = m[0].n_params;
    CHECK(m[1].n_params == shared + 2 * 12 && m[2].n_params == shared + 12,
          "parameter counts %zu %zu %zu", m[0].n_params, m[1].n_params, m[2].n_params);
    CHECK(memcmp(m[0].params, m[1].params, shared * sizeof(float)) == 0 &&
              memcmp(m[0].params, m[2].params, shared * sizeof(float)) == 0,
          "variants of one seed share the initial weights");
    tiny(&c, 0);
    c.seed = 4;
    gpt_init(&other, &c, 9, c.batch, err, sizeof err);
    size_t differ = 0;
    for (size_t i = 0; i < shared; i++)
        differ += m[0].params[i] != other.params[i];
    CHECK(differ > shared / 2, "seed 3 and 4 differ in only %zu of %zu weights", differ, shared);
    gpt_config d;
    config_defaults(&d);
    CHECK(gpt_param_count(&d, 65) == 1611136, "default parameter count %zu",
          gpt_param_count(&d, 65));
    for (int n = 0; n < 3; n++)
        gpt_free(&m[n]);
    gpt_free(&other);
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
           memcmp(&a->final_grad_norm, &b->final_grad_norm, sizeof(double)) == 0;
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
    train_hooks h1 = {record, &r1, NULL, 0, 0}, h2 = {record, &r2, NULL, 0, 0};
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
    train_hooks h3 = {record, &r3, ck, 4, 1};
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
    CHECK(train_run(&other, &h3, &m3, err, sizeof err) != 0 && strstr(err, "does not match"),
          "checkpoint of another config refused: %s", err);
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
    train_hooks h1 = {record, &off, NULL, 0, 0}, h2 = {record, &on, NULL, 0, 0};
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
    train_hooks h = {record, &r, NULL, 0, 0};
    train_metrics m;
    char err[256];
    CHECK(train_run(&c, &h, &m, err, sizeof err) == 0, "%s", err);
    CHECK(m.diverged && m.diverged_step >= 0 && m.diverged_step < 60 &&
              r.step[r.n - 1] == m.diverged_step,
          "diverged %d at %ld", m.diverged, m.diverged_step);
    printf("divergence: lr 1e35 diverged at step %ld\n", m.diverged_step);
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

int main(void)
{
    int fd = mkstemp(pattern_path);
    size_t n = strlen(PATTERN);
    for (int i = 0; i < 600; i++)
        if (write(fd, PATTERN, n) != (ssize_t)n)
            return 2;
    close(fd);
    for (int norm = 0; norm < 3; norm++)
        gradcheck(norm);
    shared_init();
    embed_init_scale();
    learns_pattern();
    determinism_and_resume();
    diagnostics_do_not_change_training();
    divergence();
    invalid_configs();
    kernels_release();
    unlink(pattern_path);
    return check_done("test_engine");
}
