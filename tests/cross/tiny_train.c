/* A small training driver on the engine's C core alone (no Lua, no GSL), for the
 * per-path and cross-architecture byte-identity checks (tests/sh/test_paths.sh):
 *
 *   tiny_train CORPUS [key=value ...]
 *   tiny_train --paths             the CPU paths this machine can run
 *
 * trains one run and prints, on stdout, every log row (as log.csv formats it: %.9g,
 * empty for NaN) and every final metric (%.17g), then scores a task set taken from the
 * corpus's validation split (engine/tasks.h: 24 items of 2 choices, 0- and 1-shot) and
 * prints every choice's log-likelihood (%.17g).  The CPU path comes from REPRO_ISA
 * (engine/isa.h) and is printed on stderr only, so outputs of different paths and
 * machines can be compared with cmp. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "isa.h"
#include "tasks.h"
#include "train.h"

static int print_row(void *ud, const train_row *row)
{
    (void)ud;
    for (int i = 0; i < row->ncols; i++) {
        if (i)
            putchar(',');
        double v = row->v[i];
        if (i == 0)
            printf("%ld", (long)v);
        else if (!isnan(v))
            printf("%.9g", v);
    }
    putchar('\n');
    return 0;
}

/* The task items: contexts of 24 validation bytes, the 4 that follow vs 4 from further on. */
#define N_TASK_ITEMS 24
#define N_TASK_POOL 4
static char *corpus_text;
static task_item task_items[N_TASK_ITEMS + N_TASK_POOL];

static int make_task_items(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    corpus_text = malloc((size_t)n + 1);
    if (!corpus_text || fread(corpus_text, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        return -1;
    }
    fclose(f);
    long n_train = n * 9 / 10;
    for (int i = 0; i < N_TASK_ITEMS + N_TASK_POOL; i++) {
        long off = n_train + 1 + (long)i * ((n - n_train - 500) / (N_TASK_ITEMS + N_TASK_POOL));
        task_item *it = &task_items[i];
        it->context = (const unsigned char *)corpus_text + off;
        it->context_len = 24;
        it->n_choices = 2;
        it->answer = i % 2;
        it->choice[i % 2] = it->context + 24;
        it->choice[1 - i % 2] = it->context + 400;
        it->choice_len[0] = it->choice_len[1] = 4;
    }
    return 0;
}

static void put(const char *name, double v) { printf("%s %.17g\n", name, v); }

static void put_array(const char *name, const double *v, int n)
{
    printf("%s", name);
    for (int i = 0; i < n; i++)
        printf(" %.17g", v[i]);
    putchar('\n');
}

int main(int argc, char **argv)
{
    char err[512];
    if (argc == 2 && strcmp(argv[1], "--paths") == 0) {
        printf("%s\n", isa_available());
        return 0;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: tiny_train CORPUS [key=value ...]\n");
        return 2;
    }
    if (isa_select(NULL, err, sizeof err)) {
        fprintf(stderr, "tiny_train: %s\n", err);
        return 2;
    }
    gpt_config cfg;
    config_defaults(&cfg);
    snprintf(cfg.data, sizeof cfg.data, "%s", argv[1]);
    for (int i = 2; i < argc; i++) {
        char key[64];
        const char *eq = strchr(argv[i], '=');
        if (!eq || (size_t)(eq - argv[i]) >= sizeof key) {
            fprintf(stderr, "tiny_train: %s: expected key=value\n", argv[i]);
            return 2;
        }
        memcpy(key, argv[i], (size_t)(eq - argv[i]));
        key[eq - argv[i]] = '\0';
        const config_key *k = config_find(key);
        char *end;
        double num = strtod(eq + 1, &end);
        int rc = k && (k->type == CFG_INT || k->type == CFG_NUM) && *end == '\0'
                     ? config_set_num(&cfg, key, num, err, sizeof err)
                     : config_set_str(&cfg, key, eq + 1, err, sizeof err);
        if (rc) {
            fprintf(stderr, "tiny_train: %s\n", err);
            return 2;
        }
    }
    fprintf(stderr, "tiny_train: path %s\n", isa_name());
    if (make_task_items(cfg.data)) {
        fprintf(stderr, "tiny_train: %s: cannot read the corpus for the task items\n", cfg.data);
        return 1;
    }
    task_set sets[2] = {
        {"tiny0", task_items, N_TASK_ITEMS, task_items + N_TASK_ITEMS, N_TASK_POOL, 0, 9},
        {"tiny1", task_items, N_TASK_ITEMS, task_items + N_TASK_ITEMS, N_TASK_POOL, 1, 9}};
    task_score scores[2];
    memset(scores, 0, sizeof scores);
    train_hooks hooks = {print_row, NULL, NULL, 0, 0, NULL, NULL, 0, NULL};
    train_tasks tasks = {sets, 2, scores};
    train_metrics m;
    if (train_run_scored(&cfg, &hooks, &tasks, &m, err, sizeof err)) {
        fprintf(stderr, "tiny_train: %s\n", err);
        return 1;
    }
    const diag_result *d = &m.diag;
    put("diverged", m.diverged);
    put("steps", (double)m.steps);
    put("train_loss", m.train_loss);
    put("final_grad_norm", m.final_grad_norm);
    if (m.evaluated) {
        put("val_loss", d->val_loss);
        put("val_ppl", d->val_ppl);
        put("val_acc", d->val_acc);
        put("acc_macro", d->acc_macro);
        put_array("acc_class", d->acc_class, N_CLASSES);
        put("ece", d->ece);
        put("brier", d->brier);
        put_array("bin_n", d->bin_n, N_BINS);
        put_array("bin_conf", d->bin_conf, N_BINS);
        put_array("bin_acc", d->bin_acc, N_BINS);
        put("logit_norm", d->logit_norm);
        put("max_logit", d->max_logit);
        put_array("nll_temp", d->nll_temp, N_TEMPS);
        put("temp_opt", d->temp_opt);
        put("nll_temp_opt", d->nll_temp_opt);
        put("embed_norm", d->embed_norm);
        put_array("embed_norm_class", d->embed_norm_class, N_CLASSES);
        put("cos_first", d->cos_first);
        put("cos_final", d->cos_final);
        put_array("resid_norm", m.resid_norm, m.n_layer + 1);
        put_array("pos_loss", m.pos_loss, m.context);
        for (int k = 0; k < 2; k++) {
            printf("task %s acc %.17g acc_norm %.17g lost_demos %d\n", sets[k].name, scores[k].acc,
                   scores[k].acc_norm, scores[k].lost_demos);
            put_array("task_loglik", scores[k].loglik, N_TASK_ITEMS * TASKS_MAX_CHOICES);
            task_score_free(&scores[k]);
        }
    }
    free(corpus_text);
    train_metrics_free(&m);
    return 0;
}
