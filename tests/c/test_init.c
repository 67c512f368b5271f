/* init = torch (engine/gpt.h): the engine's PCG draws against PyTorch's own default
 * initialization of the same model written from default modules.
 *
 * tests/fixtures/torch_init.json (tests/reference/gpt_ref.py torchinit) holds, per engine
 * tensor name, the moments and range of PyTorch 1.13's default init of that model (V 65,
 * T 32, 2 layers, width 64, untied), pooled over 8 draws.  The engine draws the same shape
 * with init = torch for init seeds 1..8, pooled the same way, and per tensor:
 *   - a constant in PyTorch (norm gains 1, norm biases 0) is that constant, every element;
 *   - a uniform U(-b, b) in the engine (init_bound b): every engine and PyTorch value lies
 *     in [-b, b], and both reach past b (1 - 20/n) on either side (the same support: the
 *     largest of n uniform draws falls short of that with probability (1 - 10/n)^n <
 *     e^-10), so b is PyTorch's 1/sqrt(fan_in);
 *   - a normal N(0, s) in the engine: PyTorch's values exceed 2.5 s somewhere (not a
 *     uniform of that sd, whose bound is 1.73 s);
 *   - both samples' means are within 5 standard errors of 0, and their standard
 *     deviations agree within 5 standard errors of a standard deviation (s / sqrt(2n)).
 * Then: the draws are a function of the init seed; pos_init_std = 0 and tok_init_std
 * override the scheme's N(0, 1); embed_init_std is refused with init = torch; and the
 * omittable embedding stds are "at default" at the scheme's value, not gpt2's.  Last,
 * linear_init and resid_rescale, which take the scheme apart (bundle_keys). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../engine/config.h"
#include "../../engine/gpt.h"
#include "check.h"
#include "json_min.h"

enum { NSEEDS = 8 };

static void torch_config(gpt_config *c, int V_unused, int T, int L, int C, int H)
{
    (void)V_unused;
    config_defaults(c);
    c->init = INIT_TORCH;
    c->n_layer = L;
    c->d_model = C;
    c->n_head = H;
    c->context = T;
    c->batch = 1;
    c->tie_embeddings = 0;
    c->threads = 1;
}

static void moments(const double *x, size_t n, double *mean, double *sd, double *lo, double *hi)
{
    double s = 0, ss = 0;
    *lo = INFINITY;
    *hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        s += x[i];
        if (x[i] < *lo)
            *lo = x[i];
        if (x[i] > *hi)
            *hi = x[i];
    }
    *mean = s / (double)n;
    for (size_t i = 0; i < n; i++)
        ss += (x[i] - *mean) * (x[i] - *mean);
    *sd = n > 1 ? sqrt(ss / (double)(n - 1)) : 0.0;
}

static void against_pytorch(void)
{
    jv *doc = jv_load("tests/fixtures/torch_init.json");
    CHECK(doc != NULL, "tests/fixtures/torch_init.json: readable");
    if (!doc)
        return;
    int V = (int)jv_num(jv_get(doc, "shape", "V", NULL)), T = (int)jv_num(jv_get(doc, "shape", "T", NULL)),
        L = (int)jv_num(jv_get(doc, "shape", "L", NULL)), C = (int)jv_num(jv_get(doc, "shape", "C", NULL)),
        H = (int)jv_num(jv_get(doc, "shape", "H", NULL));
    gpt_config c;
    torch_config(&c, V, T, L, C, H);
    gpt_model m[NSEEDS];
    char err[256];
    for (int s = 0; s < NSEEDS; s++) {
        c.seed = s + 1;
        if (gpt_init(&m[s], &c, V, 1, err, sizeof err)) {
            CHECK(0, "gpt_init: %s", err);
            jv_free(doc);
            return;
        }
    }
    const jv *tensors = jv_get(doc, "tensors", NULL);
    CHECK(tensors && (int)tensors->n == m[0].n_tensors, "the fixture has the engine's %d tensors",
          m[0].n_tensors);
    (void)jv_at; /* json_min.h's array accessor: the fixture has no arrays */
    CHECK(tensors && tensors->type == JV_OBJ && tensors->n > 0 &&
              strcmp(tensors->keys[0], "wte") == 0, "the fixture starts with wte");
    for (int i = 0; tensors && i < m[0].n_tensors && i < (int)tensors->n; i++)
        CHECK(strcmp(tensors->keys[i], m[0].tensors[i].name) == 0,
              "tensor %d: %s in both (the layout order)", i, m[0].tensors[i].name);
    int checked = 0, uniform = 0, normal = 0, constant = 0;
    for (int i = 0; i < m[0].n_tensors; i++) {
        const gpt_tensor *t = &m[0].tensors[i];
        const jv *ref = jv_get(tensors, t->name, NULL);
        CHECK(ref != NULL, "%s: in the fixture", t->name);
        if (!ref)
            continue;
        size_t n = t->size * NSEEDS;
        double *x = malloc(n * sizeof *x);
        for (int s = 0; s < NSEEDS; s++)
            for (size_t j = 0; j < t->size; j++)
                x[(size_t)s * t->size + j] = m[s].params[t->offset + j];
        double mean, sd, lo, hi;
        moments(x, n, &mean, &sd, &lo, &hi);
        free(x);
        double rn = jv_num(jv_get(ref, "n", NULL)), rmean = jv_num(jv_get(ref, "mean", NULL)),
               rsd = jv_num(jv_get(ref, "std", NULL)), rlo = jv_num(jv_get(ref, "min", NULL)),
               rhi = jv_num(jv_get(ref, "max", NULL));
        CHECK(rn == (double)n, "%s: %zu elements over %d draws (PyTorch %g)", t->name, n,
              NSEEDS, rn);
        if (rsd == 0) {
            CHECK(!t->drawn && lo == rmean && hi == rmean,
                  "%s: the constant %g as in PyTorch", t->name, rmean);
            constant++;
        } else if (t->init_bound > 0) {
            double b = t->init_bound;
            printf("%-12s U(-b, b), b %.6f: engine [%.6f, %.6f] sd %.6f; PyTorch [%.6f, %.6f] "
                   "sd %.6f\n", t->name, b, lo, hi, sd, rlo, rhi, rsd);
            CHECK(lo >= -b && hi <= b && rlo >= -b * (1 + 1e-6) && rhi <= b * (1 + 1e-6),
                  "%s: engine and PyTorch values within the engine's bound %g", t->name, b);
            double reach = b * (1 - 20.0 / (double)n);
            CHECK(-lo > reach && hi > reach && -rlo > reach && rhi > reach,
                  "%s: both reach b (1 - 20/n) = %.6f on either side (the same support)",
                  t->name, reach);
            uniform++;
        } else {
            printf("%-12s N(0, %g): engine sd %.6f [%.3f, %.3f]; PyTorch sd %.6f [%.3f, %.3f]\n",
                   t->name, t->init_std, sd, lo, hi, rsd, rlo, rhi);
            CHECK(t->drawn && fmax(-rlo, rhi) > 2.5 * rsd && fmax(-lo, hi) > 2.5 * sd,
                  "%s: normal tails in both (beyond 2.5 sd)", t->name);
            normal++;
        }
        if (rsd > 0) {
            double se_mean = rsd / sqrt((double)n), se_sd = rsd / sqrt(2.0 * (double)n);
            CHECK(fabs(mean) < 5 * se_mean && fabs(rmean) < 5 * se_mean,
                  "%s: means %.3g (engine) and %.3g (PyTorch) within 5 se of 0", t->name, mean,
                  rmean);
            CHECK(fabs(sd - rsd) < 5 * sqrt(2.0) * se_sd,
                  "%s: sd %.6f (engine) vs %.6f (PyTorch) within 5 se", t->name, sd, rsd);
        }
        checked++;
    }
    printf("init = torch: %d tensors against PyTorch: %d uniform, %d normal, %d constant\n",
           checked, uniform, normal, constant);
    CHECK(uniform == 8 * L + 1 && normal == 2 && constant == 4 * L + 2,
          "8 Linear tensors per block and lm_head uniform, 2 embeddings normal, the norms "
          "constant");
    for (int s = 0; s < NSEEDS; s++)
        gpt_free(&m[s]);
    jv_free(doc);
}

static void overrides_and_keys(void)
{
    gpt_config c;
    gpt_model a, b, p0;
    char err[256];
    torch_config(&c, 11, 8, 2, 16, 4);
    c.seed = 5;
    gpt_init(&a, &c, 11, 1, err, sizeof err);
    gpt_init(&b, &c, 11, 1, err, sizeof err);
    CHECK(memcmp(a.params, b.params, a.n_params * sizeof(float)) == 0,
          "the draws are a function of the init seed");
    const gpt_tensor *wte = gpt_find_tensor(&a, "wte"), *wpe = gpt_find_tensor(&a, "wpe");
    CHECK(wte->init_std == 1.0f && wpe->init_std == 1.0f, "embeddings N(0, 1) by default");
    c.pos_init_std = 0.0;
    c.tok_init_std = 0.5;
    gpt_init(&p0, &c, 11, 1, err, sizeof err);
    int zero = 1, half = 1;
    for (size_t i = 0; i < wpe->size; i++)
        zero &= p0.params[wpe->offset + i] == 0.0f;
    for (size_t i = 0; i < wte->size; i++)
        half &= fabsf(p0.params[wte->offset + i] - 0.5f * a.params[wte->offset + i]) <=
                1e-6f * fabsf(a.params[wte->offset + i]);
    CHECK(zero && half, "pos_init_std = 0 gives zeros, tok_init_std = 0.5 halves the draws");
    size_t emb_end = wpe->offset + wpe->size;
    CHECK(memcmp(a.params + emb_end, p0.params + emb_end,
                 (a.n_params - emb_end) * sizeof(float)) == 0,
          "the embedding stds change no other weight");
    gpt_free(&a);
    gpt_free(&b);
    gpt_free(&p0);

    torch_config(&c, 11, 8, 2, 16, 4);
    c.embed_init_std = 0.5;
    CHECK(config_validate(&c, err, sizeof err) != 0 && strstr(err, "embed_init_std"),
          "embed_init_std with init = torch is refused: %s", err);
    torch_config(&c, 11, 8, 2, 16, 4);
    const config_key *tok = config_find("tok_init_std"), *init = config_find("init"),
                     *bal = config_find("balanced_acc");
    CHECK(init && init->omittable && bal && bal->omittable, "init and balanced_acc omittable");
    c.tok_init_std = 0.02;
    CHECK(!config_at_default(&c, tok), "init = torch: tok_init_std 0.02 is not the default");
    c.tok_init_std = 1.0;
    CHECK(config_at_default(&c, tok), "init = torch: tok_init_std 1 is the default");
    CHECK(!config_at_default(&c, init), "init = torch is not the default scheme");
    config_defaults(&c);
    CHECK(config_at_default(&c, init) && config_at_default(&c, bal),
          "gpt2 and no balanced accuracy are the defaults (omitted from records)");
    c.tok_init_std = 0.02;
    CHECK(config_at_default(&c, tok), "init = gpt2: tok_init_std 0.02 is the default");
    CHECK(config_set_str(&c, "init", "jax", err, sizeof err) != 0 && strstr(err, "gpt2, torch"),
          "an unknown scheme names the known ones: %s", err);
}

/* A tensor's sample sd and largest |value| over one model. */
static void tensor_stats(const gpt_model *m, const char *name, double *sd, double *maxabs)
{
    const gpt_tensor *t = gpt_find_tensor(m, name);
    double s = 0, ss = 0;
    *maxabs = 0;
    for (size_t j = 0; j < t->size; j++) {
        double x = m->params[t->offset + j];
        s += x;
        ss += x * x;
        if (fabs(x) > *maxabs)
            *maxabs = fabs(x);
    }
    double mean = s / (double)t->size;
    *sd = sqrt((ss - (double)t->size * mean * mean) / (double)(t->size - 1));
}

/* Whether two models of one layout hold the same bits outside the named tensors. */
static int same_except(const gpt_model *a, const gpt_model *b, const char *const *skip)
{
    for (int i = 0; i < a->n_tensors; i++) {
        const gpt_tensor *t = &a->tensors[i];
        int skipped = 0;
        for (int k = 0; skip[k]; k++)
            skipped |= strstr(t->name, skip[k]) != NULL;
        if (!skipped && memcmp(a->params + t->offset, b->params + t->offset,
                               t->size * sizeof(float)) != 0)
            return 0;
    }
    return 1;
}

/* A config of the bundle test: width 64, 4 blocks (sqrt(2L) = sqrt(8)), untied. */
static void bundle_config(gpt_config *c, int scheme)
{
    config_defaults(c);
    c->init = scheme;
    c->n_layer = 4;
    c->d_model = 64;
    c->n_head = 4;
    c->context = 16;
    c->batch = 1;
    c->tie_embeddings = 0;
    c->threads = 1;
    c->seed = 3;
}

/* linear_init and resid_rescale (engine/config.h) take the bundle apart: each moves the
 * statistics of its own tensors only, set to the scheme's value each changes no bit, and
 * each is "at default" (left out of records) exactly at the scheme's value. */
static void bundle_keys(void)
{
    enum { V = 11 };
    const double C = 64, L2 = sqrt(8.0);
    char err[256];
    gpt_config c;
    gpt_model g, t, m;
    bundle_config(&c, INIT_GPT2);
    gpt_init(&g, &c, V, 1, err, sizeof err);
    bundle_config(&c, INIT_TORCH);
    gpt_init(&t, &c, V, 1, err, sizeof err);
    double sd, mx;

    /* the scheme's value, set explicitly: the same bits and "at default" */
    const config_key *li = config_find("linear_init"), *rr = config_find("resid_rescale");
    CHECK(li && rr && li->omittable && rr->omittable && li->derived_from &&
              rr->derived_from && strcmp(li->derived_from, "init") == 0,
          "linear_init and resid_rescale: omittable, derived from init");
    if (!li || !rr) {
        gpt_free(&g);
        gpt_free(&t);
        return;
    }
    for (int scheme = INIT_GPT2; scheme <= INIT_TORCH; scheme++) {
        bundle_config(&c, scheme);
        CHECK(!config_is_set(&c, li) && !config_is_set(&c, rr) && config_at_default(&c, li) &&
                  config_at_default(&c, rr), "%s: both unset by default",
              init_scheme_names[scheme]);
        CHECK(config_set_str(&c, "linear_init", init_scheme_names[scheme], err, sizeof err) == 0 &&
                  config_set_bool(&c, "resid_rescale", scheme == INIT_GPT2, err, sizeof err) == 0,
              "set: %s", err);
        CHECK(config_at_default(&c, li) && config_at_default(&c, rr),
              "init = %s: its own Linear init and rescaling are the default",
              init_scheme_names[scheme]);
        CHECK(config_validate(&c, err, sizeof err) == 0, "valid: %s", err);
        gpt_init(&m, &c, V, 1, err, sizeof err);
        const gpt_model *ref = scheme == INIT_GPT2 ? &g : &t;
        CHECK(m.n_params == ref->n_params &&
                  memcmp(m.params, ref->params, m.n_params * sizeof(float)) == 0,
              "init = %s with its own values set: the same bits as unset",
              init_scheme_names[scheme]);
        gpt_free(&m);
        config_set_str(&c, "linear_init", init_scheme_names[!scheme], err, sizeof err);
        config_set_bool(&c, "resid_rescale", scheme != INIT_GPT2, err, sizeof err);
        CHECK(!config_at_default(&c, li) && !config_at_default(&c, rr),
              "init = %s: the other scheme's values are not the default",
              init_scheme_names[scheme]);
    }
    bundle_config(&c, INIT_GPT2);
    CHECK(config_set_str(&c, "linear_init", "xavier", err, sizeof err) != 0 &&
              strstr(err, "linear_init") && strstr(err, "gpt2, torch"),
          "an unknown Linear init is refused by name: %s", err);

    /* gpt2 with the torch Linear init: uniform weights and drawn biases at 1/sqrt(fan_in),
     * the residual projections at that bound / sqrt(2L) (rescaling still on), the
     * embeddings still N(0, 0.02) */
    bundle_config(&c, INIT_GPT2);
    config_set_str(&c, "linear_init", "torch", err, sizeof err);
    gpt_init(&m, &c, V, 1, err, sizeof err);
    const struct { const char *name; double bound; } uni[] = {
        {"h0.qkv_w", 1 / sqrt(C)},       {"h2.qkv_b", 1 / sqrt(C)},
        {"h1.fc_w", 1 / sqrt(C)},        {"h3.fc2_b", 1 / sqrt(4 * C)},
        {"h0.proj_w", 1 / sqrt(C) / L2}, {"h3.fc2_w", 1 / sqrt(4 * C) / L2},
        {"lm_head", 1 / sqrt(C)}};
    for (size_t i = 0; i < sizeof uni / sizeof uni[0]; i++) {
        const gpt_tensor *x = gpt_find_tensor(&m, uni[i].name);
        tensor_stats(&m, uni[i].name, &sd, &mx);
        double se = uni[i].bound / sqrt(3.0) / sqrt(2.0 * (double)x->size);
        CHECK(x->drawn && fabs(x->init_bound - uni[i].bound) < 1e-6 * uni[i].bound &&
                  mx <= uni[i].bound * (1 + 1e-6) && mx > 0.95 * uni[i].bound &&
                  fabs(sd - uni[i].bound / sqrt(3.0)) < 5 * se,
              "gpt2 + linear_init torch: %s U(+-%.5f): sd %.5f (b/sqrt(3) %.5f), max %.5f",
              uni[i].name, uni[i].bound, sd, uni[i].bound / sqrt(3.0), mx);
    }
    tensor_stats(&m, "wte", &sd, &mx);
    CHECK(fabs(sd - 0.02) < 0.002 && gpt_find_tensor(&m, "wte")->init_std == 0.02f,
          "gpt2 + linear_init torch: wte still N(0, 0.02) (sd %.4f)", sd);
    gpt_free(&m);

    /* torch with the gpt2 Linear init: N(0, 0.02) weights, biases 0, no rescaling (torch's),
     * the embeddings still N(0, 1) */
    bundle_config(&c, INIT_TORCH);
    config_set_str(&c, "linear_init", "gpt2", err, sizeof err);
    gpt_init(&m, &c, V, 1, err, sizeof err);
    const char *const normal[] = {"h0.qkv_w", "h1.fc_w", "h2.proj_w", "h3.fc2_w", "lm_head"};
    for (size_t i = 0; i < sizeof normal / sizeof normal[0]; i++) {
        const gpt_tensor *x = gpt_find_tensor(&m, normal[i]);
        tensor_stats(&m, normal[i], &sd, &mx);
        CHECK(x->init_bound == 0 && x->init_std == 0.02f &&
                  fabs(sd - 0.02) < 5 * 0.02 / sqrt(2.0 * (double)x->size) && mx > 2.5 * 0.02,
              "torch + linear_init gpt2: %s N(0, 0.02): sd %.5f, max %.4f (normal tails)",
              normal[i], sd, mx);
    }
    tensor_stats(&m, "h1.qkv_b", &sd, &mx);
    CHECK(mx == 0, "torch + linear_init gpt2: biases 0");
    tensor_stats(&m, "wpe", &sd, &mx);
    CHECK(fabs(sd - 1) < 0.05, "torch + linear_init gpt2: wpe still N(0, 1) (sd %.3f)", sd);
    gpt_free(&m);

    /* resid_rescale: only proj_w and fc2_w move, by 1/sqrt(2L) */
    const char *const resid[] = {"proj_w", "fc2_w", NULL};
    bundle_config(&c, INIT_GPT2);
    config_set_bool(&c, "resid_rescale", 0, err, sizeof err);
    gpt_init(&m, &c, V, 1, err, sizeof err);
    tensor_stats(&m, "h2.fc2_w", &sd, &mx);
    double sd_g, mx_g;
    tensor_stats(&g, "h2.fc2_w", &sd_g, &mx_g);
    CHECK(gpt_find_tensor(&m, "h2.fc2_w")->init_std == 0.02f &&
              fabs(sd - 0.02) < 5 * 0.02 / sqrt(2.0 * 4 * C * C) &&
              fabs(sd_g - 0.02 / L2) < 5 * 0.02 / L2 / sqrt(2.0 * 4 * C * C),
          "gpt2, resid_rescale false: fc2_w sd %.5f (0.02), rescaled %.5f (0.02/sqrt(8))", sd,
          sd_g);
    CHECK(same_except(&m, &g, resid), "gpt2, resid_rescale false: no other tensor moves");
    gpt_free(&m);
    bundle_config(&c, INIT_TORCH);
    config_set_bool(&c, "resid_rescale", 1, err, sizeof err);
    gpt_init(&m, &c, V, 1, err, sizeof err);
    const struct { const char *name; double bound; } rs[] = {{"h1.proj_w", 1 / sqrt(C)},
                                                              {"h3.fc2_w", 1 / sqrt(4 * C)}};
    for (size_t i = 0; i < 2; i++) {
        const gpt_tensor *x = gpt_find_tensor(&m, rs[i].name);
        double b = rs[i].bound / L2;
        tensor_stats(&m, rs[i].name, &sd, &mx);
        int scaled = 1;
        for (size_t j = 0; j < x->size; j++) {
            double a = m.params[x->offset + j], u = t.params[x->offset + j] / L2;
            scaled &= fabs(a - u) <= 1e-6 * fabs(u) + 1e-12;
        }
        CHECK(fabs(x->init_bound - b) < 1e-6 * b && mx <= b * (1 + 1e-6) && scaled,
              "torch, resid_rescale true: %s is torch's draws / sqrt(2L), bound %.5f, max "
              "%.5f", rs[i].name, b, mx);
    }
    tensor_stats(&m, "h1.proj_b", &sd, &mx);
    CHECK(mx > 0.9 / sqrt(C), "torch, resid_rescale true: the biases keep 1/sqrt(fan_in)");
    CHECK(same_except(&m, &t, resid), "torch, resid_rescale true: no other tensor moves");
    gpt_free(&m);
    gpt_free(&g);
    gpt_free(&t);
}

int main(void)
{
    against_pytorch();
    overrides_and_keys();
    bundle_keys();
    return check_done("test_init");
}
