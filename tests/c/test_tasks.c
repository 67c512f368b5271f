/* engine/tasks.h: a choice's log-likelihood against the engine's loss over the same
 * string, the left cut and the demonstration count, permutation invariance, identical
 * bits at 1 and 2 threads, the bigram control by hand, and the refusals. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../engine/config.h"
#include "../../engine/data.h"
#include "../../engine/gpt.h"
#include "../../engine/kernels.h"
#include "../../engine/tasks.h"
#include "check.h"

static char path[] = "/tmp/repro_test_tasks_XXXXXX";

static void tiny(gpt_config *c)
{
    config_defaults(c);
    c->n_layer = 2;
    c->d_model = 16;
    c->n_head = 2;
    c->context = 8;
    c->batch = 3;
    c->threads = 1;
    c->seed = 5;
}

static task_item item(const char *ctx, const char *const *ch, int n, int answer)
{
    task_item it;
    memset(&it, 0, sizeof it);
    it.context = (const unsigned char *)ctx;
    it.context_len = strlen(ctx);
    it.n_choices = n;
    for (int j = 0; j < n; j++) {
        it.choice[j] = (const unsigned char *)ch[j];
        it.choice_len[j] = strlen(ch[j]);
    }
    it.answer = answer;
    return it;
}

/* 1. context = the first character of a window, choice = the other T: the choice's
 * log-likelihood is minus T times the mean loss gpt_forward gives over that window. */
static void engine_loss(gpt_model *m, const corpus *c)
{
    const int T = m->T;
    char s[64];
    for (int i = 0; i <= T; i++)
        s[i] = (char)c->itos[c->val[i]];
    s[T + 1] = 0;
    char ctx[2] = {s[0], 0};
    const char *ch[2] = {s + 1, "ab"};
    task_item it = item(ctx, ch, 2, 0);
    task_set set = {"loss", &it, 1, NULL, 0, 0, 0};
    task_score r;
    char err[256];
    CHECK(tasks_score(m, c, &set, &r, err, sizeof err) == 0, "%s", err);
    for (int p = 0; p < T; p++) {
        m->inputs[p] = c->val[p];
        m->targets[p] = c->val[p + 1];
    }
    double loss = gpt_forward(m, 1, 1, 0, 0);
    CHECK(fabs(-r.loglik[0] / T - loss) <= 1e-6, "log-likelihood %.9g / %d vs loss %.9g",
          r.loglik[0], T, loss);
    task_score_free(&r);
}

/* 2. The left cut: a context longer than the window scores as its last T + 1 - len
 * characters; a demonstration cut is counted, and so is a cut context. */
static void left_cut(gpt_model *m, const corpus *c)
{
    const char *ch[2] = {"ab", "ba"};
    task_item longer = item("cabacabacabacab", ch, 2, 0), cut = item("cabacab", ch, 2, 0);
    /* T = 8, choices of 2: 7 context characters are kept */
    task_set s1 = {"cut", &longer, 1, NULL, 0, 0, 0}, s2 = {"cut", &cut, 1, NULL, 0, 0, 0};
    task_score a, b;
    char err[256];
    CHECK(tasks_score(m, c, &s1, &a, err, sizeof err) == 0, "%s", err);
    CHECK(tasks_score(m, c, &s2, &b, err, sizeof err) == 0, "%s", err);
    CHECK(a.loglik[0] == b.loglik[0] && a.loglik[1] == b.loglik[1], "cut context scores as "
          "its last 7 characters: %.9g vs %.9g", a.loglik[0], b.loglik[0]);
    CHECK(a.context_cut == 1 && b.context_cut == 0, "context cut counted: %d %d", a.context_cut,
          b.context_cut);
    CHECK(a.lost_demos == 0, "no demonstrations, none lost");
    task_score_free(&a);
    task_score_free(&b);

    /* pool items of context 3 + answer 2 + separator 2 = 7 characters each */
    const char *pc[2] = {"ab", "ca"};
    task_item pool[3] = {item("cab", pc, 2, 0), item("aba", pc, 2, 1), item("bac", pc, 2, 0)};
    task_item its[2] = {item("a", ch, 2, 0), item("abacab", ch, 2, 1)};
    task_set sh = {"shots", its, 2, pool, 3, 1, 7};
    CHECK(tasks_score(m, c, &sh, &a, err, sizeof err) == 0, "%s", err);
    /* item 1: 7 + 1 = 8 prefix characters, 7 kept: one demonstration character lost;
     * item 2: 7 + 6 = 13: lost too, its context intact */
    CHECK(a.lost_demos == 2 && a.context_cut == 0, "lost demonstrations %d (2), cut contexts %d "
          "(0)", a.lost_demos, a.context_cut);
    task_score_free(&a);
    /* the n-gram control cuts the same sequences: the same counts */
    ngram_model *g = ngram_model_fit(c, 2, err, sizeof err);
    CHECK(g && tasks_score_ngram(g, m->T, c, &sh, &a, err, sizeof err) == 0, "%s", err);
    CHECK(g && a.lost_demos == 2 && a.context_cut == 0, "n-gram: lost demonstrations %d (2), "
          "cut contexts %d (0)", a.lost_demos, a.context_cut);
    if (g)
        task_score_free(&a);
    ngram_model_free(g);
    task_set sh0 = {"shots", its, 1, pool, 3, 1, 7};
    const char *ch1[2] = {"a", "b"};
    task_item one = item("a", ch1, 2, 0);
    sh0.items = &one; /* 7 + 1 + 1 = 9 = T + 1: nothing lost */
    CHECK(tasks_score(m, c, &sh0, &a, err, sizeof err) == 0, "%s", err);
    CHECK(a.lost_demos == 0, "a sequence of exactly T + 1 loses nothing: %d", a.lost_demos);
    task_score_free(&a);
    task_set many = {"shots", its, 2, pool, 3, 4, 7};
    CHECK(tasks_score(m, c, &many, &a, err, sizeof err) == -1 && strstr(err, "pool has 3"),
          "more shots than pool items refused: %s", err);
}

/* 3. Permuting the choices moves the log-likelihoods with them, bit for bit, and changes
 * no correctness; 4. the same bits at 1 and 2 threads. */
static void invariance(gpt_model *m, const corpus *c)
{
    const char *ch[4] = {"ab", "c", "bad", "aa"}, *perm[4] = {"aa", "bad", "ab", "c"};
    task_item its[5], per[5];
    const char *ctx[5] = {"ab", "cab", "abacab", "b", "dcba"};
    for (int i = 0; i < 5; i++) {
        its[i] = item(ctx[i], ch, 4, i % 4);
        per[i] = item(ctx[i], perm, 4, (int[]){2, 3, 1, 0}[i % 4]);
    }
    task_set a = {"perm", its, 5, NULL, 0, 0, 0}, b = {"perm", per, 5, NULL, 0, 0, 0};
    task_score ra, rb, r2;
    char err[256];
    CHECK(tasks_score(m, c, &a, &ra, err, sizeof err) == 0, "%s", err);
    CHECK(tasks_score(m, c, &b, &rb, err, sizeof err) == 0, "%s", err);
    int map[4] = {2, 3, 1, 0}; /* choice j of a is choice map[j] of b */
    int same = 1;
    for (int i = 0; i < 5; i++) {
        for (int j = 0; j < 4; j++)
            same &= ra.loglik[i * TASKS_MAX_CHOICES + j] == rb.loglik[i * TASKS_MAX_CHOICES + map[j]];
        same &= ra.correct[i] == rb.correct[i] && ra.correct_norm[i] == rb.correct_norm[i];
    }
    CHECK(same && ra.acc == rb.acc && ra.acc_norm == rb.acc_norm,
          "permuted choices: same log-likelihoods and accuracy (%g %g)", ra.acc, rb.acc);
    omp_set_num_threads(2);
    CHECK(tasks_score(m, c, &a, &r2, err, sizeof err) == 0, "%s", err);
    omp_set_num_threads(1);
    CHECK(memcmp(ra.loglik, r2.loglik, 5 * TASKS_MAX_CHOICES * sizeof(double)) == 0,
          "1 and 2 threads: the same bits");
    task_score_free(&ra);
    task_score_free(&rb);
    task_score_free(&r2);
}

/* 5. A tie is wrong; the bigram control by hand; the refusals name task and item. */
static void ties_bigram_refusals(gpt_model *m, const corpus *c)
{
    const char *same[2] = {"ab", "ab"};
    task_item tie = item("ca", same, 2, 0);
    task_set s = {"tie", &tie, 1, NULL, 0, 0, 0};
    task_score r;
    char err[256];
    CHECK(tasks_score(m, c, &s, &r, err, sizeof err) == 0, "%s", err);
    CHECK(r.correct[0] == 0 && r.correct_norm[0] == 0 && r.acc == 0, "a tie counts as wrong");
    task_score_free(&r);

    const char *ch[2] = {"b", "c"};
    task_item bi = item("xa", ch, 2, 0);
    task_set sb = {"bigram", &bi, 1, NULL, 0, 0, 0};
    bi.context = (const unsigned char *)"da"; /* 'x' is not in the vocabulary but unread */
    CHECK(tasks_score_bigram(c, &sb, &r, err, sizeof err) == 0, "%s", err);
    /* counted from the training split ("abacabad\n" repeated) */
    double na = 0, nab = 0, nac = 0;
    for (size_t i = 0; i + 1 < c->n_train; i++) {
        if (c->itos[c->train[i]] != 'a')
            continue;
        na++;
        nab += c->itos[c->train[i + 1]] == 'b';
        nac += c->itos[c->train[i + 1]] == 'c';
    }
    CHECK(fabs(r.loglik[0] - log((nab + 1) / (na + c->vocab))) < 1e-12 &&
              fabs(r.loglik[1] - log((nac + 1) / (na + c->vocab))) < 1e-12 && r.acc == 1,
          "bigram log-likelihoods by hand: %.12g %.12g", r.loglik[0], r.loglik[1]);
    task_score_free(&r);

    /* the n-gram ladder's control conditions on the sequence cut to the window: at
     * T = 8 the trigram sees "ba" before 'c', at T = 1 only "a" */
    ngram_model *g = ngram_model_fit(c, 3, err, sizeof err);
    CHECK(g != NULL, "%s", err);
    const char *ng[2] = {"c", "d"};
    task_item ni = item("ba", ng, 2, 0);
    task_set sn = {"ngram", &ni, 1, NULL, 0, 0, 0};
    int32_t ba[2] = {c->stoi['b'], c->stoi['a']};
    for (int T = 1; g && T <= 8; T += 7) {
        CHECK(tasks_score_ngram(g, T, c, &sn, &r, err, sizeof err) == 0, "%s", err);
        size_t keep = T == 8 ? 2 : 1;
        double want_c = ngram_model_logp(g, ba + 2 - keep, keep, c->stoi['c']);
        double want_d = ngram_model_logp(g, ba + 2 - keep, keep, c->stoi['d']);
        CHECK(r.loglik[0] == want_c && r.loglik[1] == want_d,
              "T %d: the n-gram control's history is the last %zu characters (%.17g %.17g)", T,
              keep, r.loglik[0], want_c);
        task_score_free(&r);
    }
    /* in "abacabad\n" 'c' follows half the "ba"s but a quarter of the "a"s */
    if (g) {
        CHECK(tasks_score_ngram(g, 8, c, &sn, &r, err, sizeof err) == 0, "%s", err);
        double l8 = r.loglik[0];
        task_score_free(&r);
        CHECK(tasks_score_ngram(g, 1, c, &sn, &r, err, sizeof err) == 0, "%s", err);
        CHECK(l8 > r.loglik[0], "the cut changes the score: %g vs %g", l8, r.loglik[0]);
        task_score_free(&r);
    }
    ngram_model_free(g);

    const char *lng[2] = {"abacabada", "b"};
    task_item bad = item("a", lng, 2, 0);
    task_set sl = {"long", &bad, 1, NULL, 0, 0, 0};
    CHECK(tasks_score(m, c, &sl, &r, err, sizeof err) == -1 && strstr(err, "task long, item 1") &&
              strstr(err, "window of 8"),
          "a choice longer than the window is refused: %s", err);
    const char *odd[2] = {"a", "\xff"};
    task_item bad2 = item("a", odd, 2, 0);
    task_set so = {"vocab", &bad2, 1, NULL, 0, 0, 0};
    CHECK(tasks_score(m, c, &so, &r, err, sizeof err) == -1 && strstr(err, "0xff"),
          "a byte outside the vocabulary is refused: %s", err);
}

int main(void)
{
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    for (int i = 0; i < 200; i++)
        fputs("abacabad\n", f);
    fclose(f);
    corpus c;
    char err[256];
    if (corpus_load(&c, path, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    gpt_config cfg;
    tiny(&cfg);
    gpt_model m;
    omp_set_num_threads(1);
    CHECK(gpt_init(&m, &cfg, c.vocab, cfg.batch, err, sizeof err) == 0, "%s", err);
    engine_loss(&m, &c);
    left_cut(&m, &c);
    invariance(&m, &c);
    ties_bigram_refusals(&m, &c);
    gpt_free(&m);
    kernels_release();
    corpus_free(&c);
    unlink(path);
    return check_done("test_tasks");
}
