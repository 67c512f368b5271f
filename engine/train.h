/* Training and evaluation of one run (DESIGN.md protocol).
 *
 * train_run validates the config, loads the corpus, initializes from the run's seed and
 * trains for cfg.iters steps, calling on_step after every step; then evaluates on the
 * whole validation split.  A non-finite loss or gradient norm stops the run, which is
 * reported as diverged at that step (not an error).  With a checkpoint path, the full
 * training state is saved every checkpoint_every steps (atomically), and a run started
 * with resume = 1 continues from it: the final state and metrics are bit-identical to
 * an uninterrupted run, because batches and dropout masks are drawn per step.  A run
 * stopped by on_step also saves a checkpoint at the step where it stopped.
 */
#ifndef REPRO_TRAIN_H
#define REPRO_TRAIN_H

#include <stddef.h>

#include "config.h"

typedef struct {
    long step;
    double lr, loss, grad_norm, embed_norm;
} train_row;

/* Return non-zero to stop training (the run is then reported as stopped). */
typedef int (*train_step_fn)(void *ud, const train_row *row);

typedef struct {
    train_step_fn on_step;
    void *ud;
    const char *checkpoint; /* path or NULL */
    int checkpoint_every;   /* steps; 0 = only with a path, never periodic */
    int resume;             /* continue from the checkpoint if it exists */
} train_hooks;

typedef struct {
    double val_loss, val_ppl, val_acc;
    double final_grad_norm, embed_norm, train_loss;
    long params;
    int vocab;
    int diverged;
    long diverged_step;
    int stopped;
    long steps;        /* steps completed */
    long resumed_from; /* step the run resumed at, 0 for a fresh run */
    double tokens_per_s, wall_s; /* timings: never written into results */
} train_metrics;

/* 0 on success (including a diverged run); -1 with a message for a bad config, an
 * unreadable corpus or a broken checkpoint, in which case nothing was trained. */
int train_run(const gpt_config *cfg, const train_hooks *hooks, train_metrics *out, char *err,
              size_t errlen);

/* Checks the config against the corpus without training (validation, corpus readable,
 * context shorter than both splits). */
int train_check(const gpt_config *cfg, char *err, size_t errlen);

#endif
