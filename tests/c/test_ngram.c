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

int main(void)
{
    unseen();
    two_symbols();
    return check_done("test_ngram");
}
