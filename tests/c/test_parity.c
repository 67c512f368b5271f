/* PyTorch parity.  tests/fixtures/parity_<case>.in.rptf holds a tiny config, a batch and
 * the engine's initial weights; parity_<case>.out.rptf holds what tests/reference/gpt_ref.py
 * (PyTorch, float64) computes from them: logits, loss, every gradient, the pre-clip
 * gradient norm, every parameter after one AdamW step and rho (gpt.h's initial embedding
 * RMS, which the reference computes by brute force over all (token, position) pairs).
 * The cases are the five embedding norms with tied embeddings, `untied` (none, with a
 * separate lm_head), and `torch`: init = torch, LayerNorm after the embedding and an
 * untied lm_head, checked against the model written from PyTorch's default modules
 * (gpt_ref.py's ModGPT: nn.Embedding, nn.Linear with biases, nn.LayerNorm).  This test checks that the engine still draws exactly the fixture's
 * initial weights, then compares its float32 results with the reference.
 * `test_parity --export DIR` writes the .in files (see tests/reference/regen_fixtures.sh).
 *
 * Tolerance: each tensor's largest absolute error must be below 2e-5 of that tensor's
 * largest reference magnitude (for the AdamW update, computed from the reference
 * gradients: 1e-5 of the largest update, beyond 2 ulp of the stored float32 parameter).  float32
 * carries 6e-8 relative precision; a value here passes through ~30 rounded operations
 * (sums of up to 4C = 64 terms, two norms, softmax), so errors of a few 1e-7 relative
 * are expected, and a wrong formula gives errors of order 1.  The observed errors are
 * printed. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../engine/gpt.h"
#include "../../engine/kernels.h"
#include "../../engine/pcg.h"
#include "../../engine/tensorfile.h"
#include "check.h"

static const struct {
    const char *name;
    int norm, tie, init;
} cases[] = {{"none", EMBED_NONE, 1, INIT_GPT2},
             {"layernorm", EMBED_LAYERNORM, 1, INIT_GPT2},
             {"rmsnorm", EMBED_RMSNORM, 1, INIT_GPT2},
             {"scale", EMBED_SCALE, 1, INIT_GPT2},
             {"layernorm_matched", EMBED_LAYERNORM_MATCHED, 1, INIT_GPT2},
             {"untied", EMBED_NONE, 0, INIT_GPT2},
             {"torch", EMBED_LAYERNORM, 0, INIT_TORCH}};
#define N_CASES ((int)(sizeof cases / sizeof cases[0]))
enum { V = 13, T = 8, L = 2, C = 16, H = 4, B = 3 };
static const double hparams[6] = {1e-3, 0.1, 0.9, 0.95, 1e-8, 1.0};

static void fixture_config(gpt_config *c, int k)
{
    config_defaults(c);
    c->tie_embeddings = cases[k].tie;
    c->n_layer = L;
    c->d_model = C;
    c->n_head = H;
    c->context = T;
    c->batch = B;
    c->embed_norm = cases[k].norm;
    c->init = cases[k].init;
    c->embed_init_std = cases[k].init == INIT_TORCH ? 0.02 : 0.3; /* torch: N(0, 1) */
    c->seed = 7;
    c->lr = hparams[0];
    c->weight_decay = hparams[1];
    c->beta1 = hparams[2];
    c->beta2 = hparams[3];
    c->eps = hparams[4];
    c->grad_clip = hparams[5];
    c->threads = 1;
}

static void fixture_batch(int32_t *tok, int32_t *tgt)
{
    pcg32 r;
    pcg32_seed(&r, 1234, 0);
    for (int i = 0; i < B * T; i++) {
        tok[i] = (int32_t)pcg32_bounded(&r, V);
        tgt[i] = (int32_t)pcg32_bounded(&r, V);
    }
}

static int export_inputs(const char *dir)
{
    for (int n = 0; n < N_CASES; n++) {
        gpt_config c;
        fixture_config(&c, n);
        gpt_model m;
        char err[256], path[1024];
        if (gpt_init(&m, &c, V, B, err, sizeof err)) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        fixture_batch(m.inputs, m.targets);
        tf_file *f = tf_new();
        /* embed_norm as engine/config.h numbers it; tie 1 = tied */
        int32_t cfg[8] = {V, T, L, C, H, B, cases[n].norm, cases[n].tie};
        uint32_t d8 = 8, d6 = 6, dbt[2] = {B, T};
        tf_add(f, "config", TF_I32, 1, &d8, cfg);
        tf_add(f, "hparams", TF_F64, 1, &d6, hparams);
        tf_add(f, "tokens", TF_I32, 2, dbt, m.inputs);
        tf_add(f, "targets", TF_I32, 2, dbt, m.targets);
        if (cases[n].init == INIT_TORCH) { /* checked against the default-modules model */
            int32_t one = 1;
            uint32_t d1 = 1;
            tf_add(f, "modules", TF_I32, 1, &d1, &one);
        }
        for (int i = 0; i < m.n_tensors; i++) {
            const gpt_tensor *t = &m.tensors[i];
            uint32_t dims[2] = {(uint32_t)t->dims[0], (uint32_t)t->dims[1]};
            tf_add(f, t->name, TF_F32, t->ndim, dims, m.params + t->offset);
        }
        snprintf(path, sizeof path, "%s/parity_%s.in.rptf", dir, cases[n].name);
        int rc = tf_write(f, path);
        tf_free(f);
        gpt_free(&m);
        if (rc) {
            perror(path);
            return 1;
        }
        printf("wrote %s\n", path);
    }
    return 0;
}

/* largest |got - want| over the tensor, relative to max |want| */
static double rel_err(const float *got, const tf_tensor *want, size_t n)
{
    const double *w = want->data;
    double maxw = 1e-30, maxe = 0;
    for (size_t i = 0; i < n; i++) {
        if (fabs(w[i]) > maxw)
            maxw = fabs(w[i]);
        double e = fabs((double)got[i] - w[i]);
        if (!(e <= maxe))
            maxe = e; /* NaN propagates as a failure */
    }
    return maxe / maxw;
}

static void check_case(int n)
{
    char in[256], out[256], err[512];
    const char *cname = cases[n].name;
    snprintf(in, sizeof in, "tests/fixtures/parity_%s.in.rptf", cname);
    snprintf(out, sizeof out, "tests/fixtures/parity_%s.out.rptf", cname);
    tf_file *fi = tf_read(in, TF_ANY_SIZE, err, sizeof err),
           *fo = tf_read(out, TF_ANY_SIZE, err, sizeof err);
    CHECK(fi && fo, "%s", err);
    if (!fi || !fo) {
        tf_free(fi);
        tf_free(fo);
        return;
    }
    gpt_config c;
    fixture_config(&c, n);
    gpt_model m;
    CHECK(gpt_init(&m, &c, V, B, err, sizeof err) == 0, "%s", err);

    /* the engine still draws the fixture's initial weights, bit for bit */
    int same = 1;
    for (int i = 0; i < m.n_tensors; i++) {
        const tf_tensor *t = tf_find(fi, m.tensors[i].name);
        if (!t || t->count != m.tensors[i].size ||
            memcmp(t->data, m.params + m.tensors[i].offset, t->count * sizeof(float)) != 0) {
            fprintf(stderr, "%s: initial %s differs from the fixture\n", cname,
                    m.tensors[i].name);
            same = 0;
        }
    }
    CHECK(same, "%s: initial weights match the fixture", cname);
    /* rho: the engine's closed form from double sums against the reference's brute force */
    const tf_tensor *rrho = tf_find(fo, "embed_rms");
    CHECK(rrho && fabs(m.embed_rms / *(const double *)rrho->data - 1) < 1e-12,
          "%s: rho %.17g vs reference %.17g", cname, m.embed_rms,
          rrho ? *(const double *)rrho->data : NAN);
    const tf_tensor *tok = tf_find(fi, "tokens"), *tgt = tf_find(fi, "targets");
    memcpy(m.inputs, tok->data, (size_t)B * T * sizeof(int32_t));
    memcpy(m.targets, tgt->data, (size_t)B * T * sizeof(int32_t));

    double loss = gpt_forward(&m, B, 1, 1, 0);
    const tf_tensor *rl = tf_find(fo, "loss"), *rlog = tf_find(fo, "logits");
    double el = fabs(loss - *(double *)rl->data) / fabs(*(double *)rl->data);
    double elog = rel_err(m.logits, rlog, (size_t)B * T * V);
    printf("%-17s loss %.9f (ref %.9f) rel err %.2e; logits %.2e\n", cname, loss,
           *(double *)rl->data, el, elog);
    CHECK(el < 2e-6 && elog < 2e-5, "%s: loss/logits rel err %.3g %.3g", cname, el, elog);
    /* loss by position (the length-sensitivity instrument): mean over the batch at
     * each position t, against PyTorch's per-position cross-entropy */
    const tf_tensor *rpos = tf_find(fo, "losses");
    CHECK(rpos && rpos->count == (size_t)B * T, "%s: fixture has per-position losses", cname);
    if (rpos) {
        double worst_pos = 0;
        for (int t = 0; t < T; t++) {
            double got = 0, want = 0;
            for (int b = 0; b < B; b++) {
                got += m.losses[b * T + t];
                want += ((const double *)rpos->data)[b * T + t];
            }
            if (!(fabs(got - want) / fabs(want) <= worst_pos))
                worst_pos = fabs(got - want) / fabs(want);
        }
        printf("%-17s loss by position: worst rel err %.2e over %d positions\n", cname,
               worst_pos, T);
        CHECK(worst_pos < 2e-6, "%s: loss by position rel err %.3g", cname, worst_pos);
    }

    gpt_zero_grad(&m);
    gpt_backward(&m, B);
    double worst = 0;
    const char *worst_name = "";
    int all = 1;
    for (int i = 0; i < m.n_tensors; i++) {
        char name[64];
        snprintf(name, sizeof name, "grad.%s", m.tensors[i].name);
        const tf_tensor *g = tf_find(fo, name);
        if (!g) {
            all = 0;
            continue;
        }
        double e = rel_err(m.grads + m.tensors[i].offset, g, m.tensors[i].size);
        if (!(e <= worst)) {
            worst = e;
            worst_name = m.tensors[i].name;
        }
    }
    printf("%-17s gradients: worst rel err %.2e (%s)\n", cname, worst, worst_name);
    CHECK(all && worst < 2e-5, "%s: gradient %s rel err %.3g", cname, worst_name, worst);

    double gn = gpt_grad_norm(&m), rgn = *(double *)tf_find(fo, "grad_norm")->data;
    CHECK(fabs(gn - rgn) / rgn < 2e-6, "%s: grad norm %.9g vs %.9g", cname, gn, rgn);
    /* The optimizer is checked on the reference gradients: at step 1 the update is
     * lr·g/(|g|+eps), which turns float32 noise in gradients near eps into O(1) relative
     * differences, so comparing after our own gradients would test the gradients again. */
    for (int i = 0; i < m.n_tensors; i++) {
        char name[64];
        snprintf(name, sizeof name, "grad.%s", m.tensors[i].name);
        const double *g = tf_find(fo, name)->data;
        for (size_t j = 0; j < m.tensors[i].size; j++)
            m.grads[m.tensors[i].offset + j] = (float)g[j];
    }
    float scale = rgn > c.grad_clip ? (float)(c.grad_clip / rgn) : 1.0f;
    float *before = malloc(m.n_params * sizeof(float));
    memcpy(before, m.params, m.n_params * sizeof(float));
    gpt_adamw(&m, (float)c.lr, 1, scale);
    worst = 0;
    for (int i = 0; i < m.n_tensors; i++) {
        char name[64];
        snprintf(name, sizeof name, "step.%s", m.tensors[i].name);
        const tf_tensor *s = tf_find(fo, name);
        const double *w = s->data;
        const gpt_tensor *t = &m.tensors[i];
        /* the update p1 - p0 is what the step computes; p1 is stored in float32, so
         * each element may also be off by the rounding of p1 itself (2 ulp) */
        double maxu = 1e-30;
        for (size_t j = 0; j < t->size; j++)
            if (fabs(w[j] - before[t->offset + j]) > maxu)
                maxu = fabs(w[j] - before[t->offset + j]);
        double excess = 0;
        for (size_t j = 0; j < t->size; j++) {
            double e = fabs((double)m.params[t->offset + j] - w[j]);
            double allowed = 2.0 * FLT_EPSILON * fabs(w[j]);
            double rel = (e > allowed ? e - allowed : 0.0) / maxu;
            if (!(rel <= excess))
                excess = rel;
        }
        if (!(excess <= worst)) {
            worst = excess;
            worst_name = t->name;
        }
    }
    printf("%-17s AdamW step: worst rel err of the update beyond 2 ulp %.2e (%s); clip %.4f\n",
           cname, worst, worst_name, scale);
    CHECK(worst < 1e-5, "%s: AdamW update %s rel err %.3g", cname, worst_name, worst);
    free(before);
    gpt_free(&m);
    kernels_release();
    tf_free(fi);
    tf_free(fo);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--export") == 0)
        return export_inputs(argv[2]);
    for (int n = 0; n < N_CASES; n++)
        check_case(n);
    return check_done("test_parity");
}
