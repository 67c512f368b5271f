/* Multiple-choice tasks scored by log-likelihood, as lm-evaluation-harness scores them.
 *
 * An item is a context and 2..TASKS_MAX_CHOICES choices (continuations of the context),
 * one of them the answer.  A choice's score is the summed log-likelihood of its
 * characters given everything before them: the sequence prefix + choice, where prefix is
 * the item's context, preceded with k > 0 shots by k demonstrations (a pool item's
 * context followed by its answer), each followed by TASKS_SEPARATOR.  The sequence is cut
 * on the left to T + 1 characters (T the model's window), so the T inputs predict every
 * character of the choice; a choice longer than T is refused.  Sequences start at
 * position 0 of a window, the positions after them are padded, and the causal model
 * makes the padding irrelevant; they go through gpt_forward in batches of the model's B,
 * the pass that computes the validation loss, and each choice's sum is taken in double in
 * position order, so a score depends neither on the batch nor on the thread count.
 *
 * acc: the answer has the strictly highest summed log-likelihood (a tie is wrong).
 * acc_norm: the same on the log-likelihood divided by the choice's length in characters
 * (bytes: the corpus is byte-level), lm-evaluation-harness's acc_norm.
 * Demonstrations: for item i, k distinct pool items drawn on the PCG stream (seed,
 * PCG_PURPOSE_TASKS, i) by a partial Fisher-Yates shuffle; an item "lost demonstrations"
 * when the left cut removed any character of them for one of its choices, and had its
 * "context cut" when the cut reached its own context.
 *
 * The bigram control scores the same choices with the add-one bigram model of ngram.h
 * (training split counts), conditioning the first character on the context's last.
 * The n-gram ladder's controls (tasks_score_ngram) score them with a Witten-Bell model of
 * ngram.h on exactly the sequence the model sees: the same demonstrations, the same left
 * cut to T + 1 characters, each character of a choice conditioned on the (at most
 * order - 1) characters before it inside the cut sequence; acc and acc_norm as above, and
 * lost_demos and context_cut as the model's scoring counts them (they depend on the
 * window only).
 */
#ifndef REPRO_TASKS_H
#define REPRO_TASKS_H

#include <stddef.h>
#include <stdint.h>

#include "data.h"
#include "gpt.h"
#include "ngram.h"

#define TASKS_MAX_CHOICES 4
#define TASKS_SEPARATOR "\n\n"

typedef struct {
    const unsigned char *context;
    size_t context_len; /* >= 1 */
    int n_choices;      /* 2..TASKS_MAX_CHOICES */
    const unsigned char *choice[TASKS_MAX_CHOICES];
    size_t choice_len[TASKS_MAX_CHOICES]; /* >= 1 each */
    int answer;                           /* 0-based */
} task_item;

typedef struct {
    const char *name; /* for messages */
    const task_item *items;
    int n_items;
    const task_item *pool; /* demonstrations, disjoint from items */
    int n_pool;
    int shots; /* k <= n_pool */
    uint64_t seed;
} task_set;

typedef struct {
    double *loglik;            /* (n_items, TASKS_MAX_CHOICES), NaN past an item's choices */
    uint8_t *correct, *correct_norm; /* (n_items) */
    double acc, acc_norm;
    int n_items, lost_demos, context_cut;
} task_score;

/* Scores every item of s with the model m (its current weights) on the corpus c's
 * vocabulary.  0, or -1 with a message naming the task and item (a byte outside the
 * vocabulary, a choice longer than the window, too few pool items, out of memory); out
 * then holds nothing to free. */
int tasks_score(gpt_model *m, const corpus *c, const task_set *s, task_score *out, char *err,
                size_t errlen);
/* The bigram control on the same items (zero-shot); same contract. */
int tasks_score_bigram(const corpus *c, const task_set *s, task_score *out, char *err,
                       size_t errlen);
/* The n-gram control of model g at window T (the model's context length); same
 * contract. */
int tasks_score_ngram(const ngram_model *g, int T, const corpus *c, const task_set *s,
                      task_score *out, char *err, size_t errlen);
void task_score_free(task_score *r);

#endif
