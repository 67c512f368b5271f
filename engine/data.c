#include "data.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pcg.h"

/* Opens path for reading after the checks every corpus passes (a regular file of at most
 * CORPUS_MAX_BYTES); its size through *size.  NULL with a message naming the path. */
static FILE *open_corpus(const char *path, size_t *size, char *err, size_t errlen)
{
    /* O_NONBLOCK: opening a FIFO must not wait for a writer before we can refuse it. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "data=%s: cannot open corpus: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(err, errlen, "data=%s: cannot open corpus: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "data=%s: not a regular file (%s)", path,
                 S_ISDIR(st.st_mode) ? "a directory" : "a device, pipe or socket");
        close(fd);
        return NULL;
    }
    if ((unsigned long long)st.st_size > CORPUS_MAX_BYTES) {
        snprintf(err, errlen, "data=%s: %lld bytes, more than the %d MiB a corpus may have",
                 path, (long long)st.st_size, (int)(CORPUS_MAX_BYTES >> 20));
        close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        snprintf(err, errlen, "data=%s: cannot open corpus: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    *size = (size_t)st.st_size;
    return f;
}

/* The vocabulary (sorted distinct bytes, from seen[]) and the split sizes of n bytes into
 * c; 0, or -1 with a message (too small, fewer than 2 distinct bytes). */
static int set_vocab(corpus *c, const int *seen, size_t n, const char *path, char *err,
                     size_t errlen)
{
    if (n < 20) {
        snprintf(err, errlen, "data=%s: corpus too small (%zu bytes)", path, n);
        return -1;
    }
    for (int b = 0; b < 256; b++) {
        c->stoi[b] = -1;
        if (seen[b]) {
            c->stoi[b] = c->vocab;
            c->itos[c->vocab++] = (unsigned char)b;
        }
    }
    if (c->vocab < 2) {
        snprintf(err, errlen, "data=%s: %d distinct byte%s: a character-level model needs a "
                 "vocabulary of at least 2", path, c->vocab, c->vocab == 1 ? "" : "s");
        return -1;
    }
    c->n = n;
    c->n_train = n * 9 / 10;
    c->n_val = n - c->n_train;
    return 0;
}

int corpus_load(corpus *c, const char *path, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    size_t size;
    FILE *f = open_corpus(path, &size, err, errlen);
    if (!f)
        return -1;
    /* room for the size fstat gave and one byte more: a file that grew since is seen
       filling it, and the buffer doubles */
    size_t cap = size + 1, n = 0;
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
    int seen[256] = {0};
    for (size_t i = 0; i < n; i++)
        seen[buf[i]] = 1;
    if (set_vocab(c, seen, n, path, err, errlen)) {
        free(buf);
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
    c->train = c->tokens;
    c->val = c->tokens + c->n_train;
    return 0;
}

int corpus_scan(corpus *c, const char *path, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    size_t size;
    FILE *f = open_corpus(path, &size, err, errlen);
    if (!f)
        return -1;
    unsigned char chunk[1 << 16];
    int seen[256] = {0};
    size_t n = 0, got;
    while (n <= CORPUS_MAX_BYTES && (got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        for (size_t i = 0; i < got; i++)
            seen[chunk[i]] = 1;
        n += got;
    }
    int bad = ferror(f) || n > CORPUS_MAX_BYTES;
    fclose(f);
    if (bad) {
        snprintf(err, errlen, "data=%s: cannot read corpus", path);
        return -1;
    }
    return set_vocab(c, seen, n, path, err, errlen);
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
