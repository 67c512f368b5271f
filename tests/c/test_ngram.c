/* engine/ngram.h on corpora small enough to count by hand. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../engine/data.h"
#include "../../engine/ngram.h"
#include "check.h"

static int load(corpus *c, const char *text, char *err, size_t errlen)
{
    char path[] = "/tmp/repro_test_ngram_XXXXXX";
    int fd = mkstemp(path);
    size_t n = strlen(text);
    int ok = fd >= 0 && write(fd, text, n) == (ssize_t)n;
    if (fd >= 0)
        close(fd);
    int rc = ok ? corpus_load(c, path, err, errlen) : -1;
    unlink(path);
    return rc;
}

/* 20 bytes: train (18) = "ab" x 9, validation (2) = "bc"; vocabulary {a, b, c}, V = 3.
 * The one validation transition is b -> c; c never occurs in training.
 *   unigram p(c)     = (0 + 1) / (18 + 3) = 1/21        ppl 21
 *   bigram  p(c | b) = (n(b,c) + 1) / (n(b) + 3) = 1/11   (b precedes 8 transitions) ppl 11 */
static void unseen(void)
{
    corpus c;
    char err[256];
    CHECK(load(&c, "ababababababababab" "bc", err, sizeof err) == 0, "%s", err);
    ngram_result r;
    CHECK(ngram_eval(&c, &r, err, sizeof err) == 0, "%s", err);
    CHECK(r.vocab == 3 && r.n_train == 18 && r.n_eval == 1, "V %d, train %zu, eval %zu",
          r.vocab, r.n_train, r.n_eval);
    CHECK(fabs(r.unigram_ppl - 21) < 1e-12 && fabs(r.bigram_ppl - 11) < 1e-12,
          "unigram %.15g (21), bigram %.15g (11)", r.unigram_ppl, r.bigram_ppl);
    corpus_free(&c);
}

/* 30 bytes: train (27) = "aab" x 9, validation (3) = "aba"; V = 2.
 * Train counts: n(a) = 18, n(b) = 9; transitions a->a 9, a->b 9, b->a 8, so a precedes
 * 18 transitions and b 8.  Validation targets: b (after a), a (after b).
 *   unigram p(b) = 10/29, p(a) = 19/29          ppl = 29 / sqrt(190)
 *   bigram  p(b | a) = 10/20, p(a | b) = 9/10   ppl = 1 / sqrt(0.45) */
static void two_symbols(void)
{
    corpus c;
    char err[256];
    CHECK(load(&c, "aabaabaabaabaabaabaabaabaab" "aba", err, sizeof err) == 0, "%s", err);
    ngram_result r;
    CHECK(ngram_eval(&c, &r, err, sizeof err) == 0, "%s", err);
    double uni = 29 / sqrt(190.0), bi = 1 / sqrt(0.45);
    CHECK(r.vocab == 2 && r.n_train == 27 && r.n_eval == 2, "V %d, train %zu, eval %zu",
          r.vocab, r.n_train, r.n_eval);
    CHECK(fabs(r.unigram_ppl / uni - 1) < 1e-13 && fabs(r.bigram_ppl / bi - 1) < 1e-13,
          "unigram %.15g (%.15g), bigram %.15g (%.15g)", r.unigram_ppl, uni, r.bigram_ppl, bi);
    CHECK(fabs(r.unigram_nll - log(uni)) < 1e-13 && fabs(r.bigram_nll - log(bi)) < 1e-13,
          "nll is log ppl");
    printf("ngram: \"aab\"x9 | \"aba\": unigram ppl %.6f, bigram ppl %.6f\n", r.unigram_ppl,
           r.bigram_ppl);
    corpus_free(&c);
}

static double lp(const ngram_model *g, const corpus *c, const char *hist, char w)
{
    int32_t h[8];
    size_t n = strlen(hist);
    for (size_t i = 0; i < n; i++)
        h[i] = c->stoi[(unsigned char)hist[i]];
    return ngram_model_logp(g, h, n, c->stoi[(unsigned char)w]);
}

/* The Witten-Bell ladder on "aab" x 9 (V = 2), by hand.  Histories count their
 * occurrences with a successor (c) and their distinct successors (t):
 *   empty: c 27, t 2; c(a) 18, c(b) 9   p1(b) = (9 + 2/2) / 29 = 10/29, p1(a) = 19/29
 *   "a":   c 18, t 2; c(ab) 9, c(aa) 9  p2(b|a) = (9 + 2 p1(b)) / 20
 *   "b":   c 8,  t 1; c(ba) 8           p2(a|b) = (8 + p1(a)) / 9
 *   "aa":  c 9,  t 1; c(aab) 9          p3(b|aa) = (9 + p2(b|a)) / 10
 *   "ba":  c 8,  t 1; c(baa) 8          p3(a|ba) = (8 + p2(a|a)) / 9, p2(a|a) = (9 + 2 p1(a)) / 20
 *   "bb":  never seen                   p3(b|bb) = p2(b|b) = (0 + p1(b)) / 9
 * and a history shorter than order - 1 (the start of a sequence) uses the lower orders. */
static void witten_bell(void)
{
    corpus c;
    char err[256];
    CHECK(load(&c, "aabaabaabaabaabaabaabaabaab" "aba", err, sizeof err) == 0, "%s", err);
    ngram_model *g1 = ngram_model_fit(&c, 1, err, sizeof err);
    ngram_model *g2 = ngram_model_fit(&c, 2, err, sizeof err);
    ngram_model *g3 = ngram_model_fit(&c, 3, err, sizeof err);
    CHECK(g1 && g2 && g3, "%s", err);
    if (!g1 || !g2 || !g3)
        return;
    double p1b = 10.0 / 29, p1a = 19.0 / 29, p2ba = (9 + 2 * p1b) / 20;
    double p2aa = (9 + 2 * p1a) / 20;
    struct {
        const ngram_model *g;
        const char *h;
        char w;
        double p;
    } cases[] = {
        {g1, "ba", 'b', p1b},          {g2, "", 'a', p1a},
        {g2, "a", 'b', p2ba},          {g2, "b", 'a', (8 + p1a) / 9},
        {g3, "aa", 'b', (9 + p2ba) / 10}, {g3, "ba", 'a', (8 + p2aa) / 9},
        {g3, "bb", 'b', p1b / 9},      {g3, "a", 'b', p2ba},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double got = lp(cases[i].g, &c, cases[i].h, cases[i].w);
        CHECK(fabs(got - log(cases[i].p)) < 1e-13, "order %d, p(%c | \"%s\") = %.15g, by hand %.15g",
              ngram_model_order(cases[i].g), cases[i].w, cases[i].h, exp(got), cases[i].p);
    }
    /* the distribution sums to one after any history */
    const char *hs[] = {"", "a", "b", "aa", "ab", "ba", "bb"};
    for (size_t i = 0; i < sizeof hs / sizeof hs[0]; i++) {
        double s = exp(lp(g3, &c, hs[i], 'a')) + exp(lp(g3, &c, hs[i], 'b'));
        CHECK(fabs(s - 1) < 1e-14, "sums to 1 after \"%s\": %.17g", hs[i], s);
    }
    CHECK(ngram_model_fit(&c, 0, err, sizeof err) == NULL && strstr(err, "order 0"),
          "order 0 refused: %s", err);
    CHECK(ngram_model_fit(&c, NGRAM_MAX_ORDER + 1, err, sizeof err) == NULL &&
              strstr(err, "outside 1..7"),
          "order 8 refused: %s", err);
    ngram_model_free(g1);
    ngram_model_free(g2);
    ngram_model_free(g3);
    ngram_model_free(NULL);
    corpus_free(&c);
}

int main(void)
{
    unseen();
    two_symbols();
    witten_bell();
    return check_done("test_ngram");
}
