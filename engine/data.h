/* The character-level corpus: vocabulary = sorted distinct bytes, first 90 % train,
 * last 10 % validation; batches of `batch` windows whose start offsets are drawn
 * uniformly from [0, n_train - context - 1] on the run's data stream, one PCG stream per
 * step (so a resumed run draws exactly the batches it would have drawn). */
#ifndef REPRO_DATA_H
#define REPRO_DATA_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int vocab;
    unsigned char itos[256];
    int stoi[256];
    int32_t *tokens; /* whole corpus encoded */
    size_t n, n_train, n_val;
    const int32_t *train, *val;
} corpus;

/* The largest corpus corpus_load reads (256 MiB). */
#define CORPUS_MAX_BYTES (256ull << 20)

/* Loads and encodes the file; 0, or -1 with a message naming the path.  Refused: a
 * path that is not a regular file (a directory, /dev/zero, a FIFO), a file over
 * CORPUS_MAX_BYTES, fewer than 20 bytes, a vocabulary below 2 distinct bytes. */
int corpus_load(corpus *c, const char *path, char *err, size_t errlen);
/* What corpus_load finds (vocabulary, itos/stoi, sizes) and refuses, with its messages,
 * read in chunks without encoding the corpus: c->tokens, train and val are NULL.  For the
 * checks that need no tokens (train_check); corpus_free accepts it. */
int corpus_scan(corpus *c, const char *path, char *err, size_t errlen);
void corpus_free(corpus *c);
/* inputs and targets (batch, T) for training step `step`. */
void corpus_batch(const corpus *c, uint64_t seed, long step, int batch, int T, int32_t *inputs,
                  int32_t *targets);

#endif
