#include "data.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pcg.h"

int corpus_load(corpus *c, const char *path, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    /* O_NONBLOCK: opening a FIFO must not wait for a writer before we can refuse it. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "data=%s: cannot open corpus: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(err, errlen, "data=%s: cannot open corpus: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "data=%s: not a regular file (%s)", path,
                 S_ISDIR(st.st_mode) ? "a directory" : "a device, pipe or socket");
        close(fd);
        return -1;
    }
    if ((unsigned long long)st.st_size > CORPUS_MAX_BYTES) {
        snprintf(err, errlen, "data=%s: %lld bytes, more than the %d MiB a corpus may have",
                 path, (long long)st.st_size, (int)(CORPUS_MAX_BYTES >> 20));
        close(fd);
        return -1;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        snprintf(err, errlen, "data=%s: cannot open corpus: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    size_t cap = 1 << 20, n = 0;
    unsigned char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap || n > CORPUS_MAX_BYTES)
            break;
        unsigned char *b = realloc(buf, cap * 2);
        if (!b) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = b;
        cap *= 2;
    }
    int bad = ferror(f) || n > CORPUS_MAX_BYTES; /* grown since the fstat */
    fclose(f);
    if (!buf || bad) {
        free(buf);
        snprintf(err, errlen, "data=%s: cannot read corpus", path);
        return -1;
    }
    if (n < 20) {
        free(buf);
        snprintf(err, errlen, "data=%s: corpus too small (%zu bytes)", path, n);
        return -1;
    }
    int seen[256] = {0};
    for (size_t i = 0; i < n; i++)
        seen[buf[i]] = 1;
    for (int b = 0; b < 256; b++) {
        c->stoi[b] = -1;
        if (seen[b]) {
            c->stoi[b] = c->vocab;
            c->itos[c->vocab++] = (unsigned char)b;
        }
    }
    if (c->vocab < 2) {
        free(buf);
        snprintf(err, errlen, "data=%s: %d distinct byte%s: a character-level model needs a "
                 "vocabulary of at least 2", path, c->vocab, c->vocab == 1 ? "" : "s");
        return -1;
    }
    c->tokens = malloc(n * sizeof(int32_t));
    if (!c->tokens) {
        free(buf);
        snprintf(err, errlen, "data=%s: out of memory", path);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        c->tokens[i] = c->stoi[buf[i]];
    free(buf);
    c->n = n;
    c->n_train = n * 9 / 10;
    c->n_val = n - c->n_train;
    c->train = c->tokens;
    c->val = c->tokens + c->n_train;
    return 0;
}

void corpus_free(corpus *c)
{
    free(c->tokens);
    memset(c, 0, sizeof *c);
}

void corpus_batch(const corpus *c, uint64_t seed, long step, int batch, int T, int32_t *inputs,
                  int32_t *targets)
{
    pcg32 r;
    pcg32_stream(&r, seed, PCG_PURPOSE_DATA, (uint64_t)step);
    uint32_t span = (uint32_t)(c->n_train - (size_t)T); /* offsets 0 .. n_train-T-1 */
    for (int b = 0; b < batch; b++) {
        size_t off = pcg32_bounded(&r, span);
        memcpy(inputs + (size_t)b * T, c->train + off, (size_t)T * sizeof(int32_t));
        memcpy(targets + (size_t)b * T, c->train + off + 1, (size_t)T * sizeof(int32_t));
    }
}
