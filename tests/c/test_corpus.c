/* corpus_scan (the corpus checks without encoding, engine/data.h) against corpus_load: the
 * same vocabulary, stoi/itos and split sizes on the project's corpora and on made files
 * (every byte value, two values, the smallest size), and the same refusal, word for word,
 * of a missing file, a directory, a device, an empty file, one distinct byte and 19 bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "../../engine/data.h"

static int write_file(const char *path, const unsigned char *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(b, 1, n, f);
    return fclose(f) == 0 && w == n ? 0 : -1;
}

/* both read path; 1 when they agree (the same status, message or corpus facts) */
static int agree(const char *path, int want_ok)
{
    corpus a, b;
    char ea[512] = "", eb[512] = "";
    int ra = corpus_load(&a, path, ea, sizeof ea), rb = corpus_scan(&b, path, eb, sizeof eb);
    int ok = ra == rb && (ra == 0) == want_ok;
    if (ok && ra == 0)
        ok = a.vocab == b.vocab && a.n == b.n && a.n_train == b.n_train &&
             a.n_val == b.n_val && memcmp(a.itos, b.itos, sizeof a.itos) == 0 &&
             memcmp(a.stoi, b.stoi, sizeof a.stoi) == 0 && b.tokens == NULL && b.val == NULL;
    if (ok && ra != 0)
        ok = strcmp(ea, eb) == 0;
    if (!ok)
        fprintf(stderr, "%s: load %d '%s' (vocab %d, n %zu), scan %d '%s' (vocab %d, n %zu)\n",
                path, ra, ea, ra ? 0 : a.vocab, ra ? 0 : a.n, rb, eb, rb ? 0 : b.vocab,
                rb ? 0 : b.n);
    if (ra == 0)
        corpus_free(&a);
    if (rb == 0)
        corpus_free(&b);
    return ok;
}

int main(void)
{
    char dir[] = "/tmp/test_corpus.XXXXXX";
    if (!mkdtemp(dir)) {
        fprintf(stderr, "test_corpus: no temporary directory\n");
        return 1;
    }
    static const char *const real[] = {"data/tinyshakespeare.txt", "data/devil.txt",
                                       "data/kjv.txt"};
    for (int i = 0; i < 3; i++)
        if (access(real[i], R_OK) == 0)
            CHECK(agree(real[i], 1), "%s: scan agrees with load", real[i]);
    unsigned char b[200000];
    for (size_t i = 0; i < sizeof b; i++)
        b[i] = (unsigned char)(i * 7919 % 256);
    char path[256];
    struct {
        const char *name;
        size_t n;
        int ok;
    } made[] = {{"all256", sizeof b, 1}, {"min20", 20, 1}, {"n19", 19, 0}, {"empty", 0, 0},
                {"two", 1000, 1},        {"one", 1000, 0}};
    for (size_t k = 0; k < sizeof made / sizeof made[0]; k++) {
        if (strcmp(made[k].name, "two") == 0)
            for (size_t i = 0; i < made[k].n; i++)
                b[i] = i % 3 ? 'a' : 'b';
        if (strcmp(made[k].name, "one") == 0)
            memset(b, 'x', made[k].n);
        snprintf(path, sizeof path, "%s/%s.txt", dir, made[k].name);
        CHECK(write_file(path, b, made[k].n) == 0, "%s: written", path);
        CHECK(agree(path, made[k].ok), "%s: scan agrees with load", made[k].name);
        remove(path);
    }
    snprintf(path, sizeof path, "%s/nonexistent.txt", dir);
    CHECK(agree(path, 0), "a missing file: the same refusal");
    CHECK(agree(dir, 0), "a directory: the same refusal");
    CHECK(agree("/dev/null", 0), "a device: the same refusal");
    rmdir(dir);
    return check_done("test_corpus");
}
