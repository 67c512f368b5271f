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
 * omittable embedding stds are "at default" at the scheme's value, not gpt2's. */
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

int main(void)
{
    against_pytorch();
    overrides_and_keys();
    return check_done("test_init");
}
