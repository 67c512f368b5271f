/* Training and evaluation of one run (docs/DESIGN.md protocol).
 *
 * train_run validates the config, loads the corpus, initializes from the run's init seed
 * and trains for cfg.iters steps on batches of its data seed, calling on_step after every
 * step with that step's log row; then evaluates on the whole validation split with every
 * instrument of diag.h.  A run that diverges (diag.h: a non-finite loss or gradient norm,
 * or DIVERGE_STEPS consecutive losses above ℓ_0 + DIVERGE_MARGIN) stops at the step where
 * that is recognized and is reported as diverged, with the onset step and its learning
 * rate (not an error); it is not evaluated.  With a checkpoint path, the full training
 * state is saved every checkpoint_every steps (atomically), and a run started with
 * resume = 1 continues from it: the final state and metrics are bit-identical to an
 * uninterrupted run, because batches and dropout masks are drawn per step.  A run stopped
 * by on_step also saves a checkpoint at the step where it stopped (its last step
 * included: resumed there, it only evaluates), so metrics.steps is the step a rerun
 * resumes from.
 *
 * Log rows are arrays of doubles whose columns train_log_colname names: step, lr, loss,
 * grad_norm (pre-clip), embed_norm (mean block-1 input norm of the batch), max_abs_logit
 * (largest |logit| of the batch); per parameter group g (emb, b1..bL, lnf, en when the
 * embedding norm has parameters, head when untied): gn_g (its gradient norm), vmean_g
 * and vmax_g (Adam's second moment after the step); and, on steps where
 * (step+1) % diag_every == 0, the d_* diagnostics on the first diag_windows validation
 * windows (NaN on other steps).
 * The diagnostics only read the model: the training columns are identical with them
 * on or off.
 */
#ifndef REPRO_TRAIN_H
#define REPRO_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "diag.h"
#include "tasks.h"

typedef struct {
    long step;
    int ncols;
    const double *v; /* ncols values, column 0 is the step */
} train_row;

/* Return non-zero to stop training (the run is then reported as stopped). */
typedef int (*train_step_fn)(void *ud, const train_row *row);

typedef struct {
    train_step_fn on_step;
    void *ud;
    const char *checkpoint; /* path or NULL */
    int checkpoint_every;   /* steps; 0 = no periodic checkpoints */
    int resume;             /* continue from the checkpoint if it exists */
    /* The config's identity (its config.json's SHA-256, hex) or NULL.  Written into every
     * checkpoint; a checkpoint to resume from must carry the same one, else the run is
     * refused (TRAIN_ECHECKPOINT): another config's checkpoint under this config's name
     * never resumes.  NULL: neither written nor checked. */
    const char *config_id;
    /* A path or NULL: the final weights of a run that finished (not diverged, not stopped)
     * are written there (train_model_write's format), after its evaluation. */
    const char *model_out;
    /* The final evaluation's windows: the first final_windows of the validation split, or
     * all of them (0).  Only `bin/repro`'s cost calibration sets it, to time a part of the
     * evaluation and scale it (lua/repro/plan/cost.lua); its metrics are then of that part,
     * never a run's record. */
    long final_windows;
    /* Called with ud, the step and the complete checkpoint's temporary path just before it
     * is renamed over `checkpoint` (periodic, and at a stop), or NULL: the caller notes
     * what it is about to publish, so no checkpoint it wrote is ever unnoted.  Non-zero
     * refuses it: the run fails (TRAIN_EIO) and the previous checkpoint stays. */
    int (*on_checkpoint)(void *ud, long step, const char *tmp_path);
} train_hooks;

/* Task sets scored (tasks.h) after a run's final evaluation: n_tasks sets into out (n_tasks
 * results the caller frees with task_score_free when train_run_scored succeeds and the
 * run was evaluated); a run that diverged or stopped scores none. */
typedef struct {
    const task_set *sets;
    int n_tasks;
    task_score *out;
} train_tasks;

typedef struct {
    diag_result diag; /* valid when evaluated (not diverged, not stopped) */
    double final_grad_norm, train_loss;
    long params;
    int vocab, evaluated;
    int diverged;
    long diverge_step;  /* onset (diag.h), when diverged */
    double diverge_lr;  /* learning rate at the onset step */
    diag_curve curve;   /* training-curve instruments over the steps taken */
    double embed_init_rms; /* rho of gpt.h: RMS of wte[v]+wpe[p] at initialization */
    double embed_scale;    /* 1/rho for embed_norm = scale, else NaN */
    double subset_acc[DIAG_SUBSETS], subset_acc_mean, subset_acc_sd; /* when evaluated */
    double bal_subset_acc[DIAG_BAL_SUBSETS], bal_subset_acc_mean, bal_subset_acc_sd;
    /* ... when evaluated with balanced_acc */
    int stopped;
    long steps;        /* steps completed */
    long resumed_from; /* step the run resumed at, 0 for a fresh run */
    int n_layer, context;
    int balanced_acc; /* the config's balanced_acc: the bal_* fields are filled */
    double *resid_norm, *pos_loss;          /* (n_layer+1), (context): owned, see free */
    double tokens_per_s, eval_tokens_per_s, wall_s; /* timings: never written into results */
} train_metrics;

/* What a failed train_run or train_check could not do; the message in err says which
 * key, file or buffer.  train_status_name gives the kind's label ("config", "corpus",
 * "checkpoint", "filesystem", "memory"; NULL for TRAIN_OK and unknown values), the
 * prefix lua/lengine.c puts on the message. */
enum train_status {
    TRAIN_OK = 0,
    TRAIN_ECONFIG,     /* a config value is invalid, alone or for this corpus */
    TRAIN_ECORPUS,     /* the corpus (key data) cannot be read or used */
    TRAIN_ECHECKPOINT, /* the checkpoint to resume from cannot be read or is of another config */
    TRAIN_EIO,         /* a checkpoint cannot be written */
    TRAIN_ENOMEM,      /* out of memory: the model, the log, the kernels' scratch, evaluation */
    TRAIN_NSTATUS
};
const char *train_status_name(int status);

/* TRAIN_OK on success (including a diverged or stopped run); else a train_status with a
 * message, and out holds nothing to free.  On TRAIN_ECONFIG, TRAIN_ECORPUS and
 * TRAIN_ECHECKPOINT nothing was trained; on the others training stopped where it failed
 * (a checkpoint written before that is kept). */
int train_run(const gpt_config *cfg, const train_hooks *hooks, train_metrics *out, char *err,
              size_t errlen);
void train_metrics_free(train_metrics *m);
/* train_run, then the task sets of tasks (may be NULL: none) scored with the final model. */
int train_run_scored(const gpt_config *cfg, const train_hooks *hooks, const train_tasks *tasks,
                     train_metrics *out, char *err, size_t errlen);

/* Called from on_step (between steps, in the thread running train_run): the rest of the
 * run, its final evaluation included, uses n threads (1..CONFIG_MAX_THREADS).  No result
 * depends on the thread count, so a run may change it at any step (bin/repro run gives a
 * study's last runs the cores its finished workers leave free); train_run starts every
 * run with config_threads(cfg). */
void train_set_threads(int n);

/* Checks the config against the corpus without training (validation, corpus readable,
 * context shorter than both splits): TRAIN_OK, TRAIN_ECONFIG or TRAIN_ECORPUS. */
int train_check(const gpt_config *cfg, char *err, size_t errlen);

/* Scores task sets without training: the model of cfg as initialized (checkpoint NULL:
 * an untrained model) or with the weights of a checkpoint of cfg's run or of its kept
 * model (model.rptf, below; either checked against config_id when that is not NULL); a
 * control instead (no model) with control != 0: TRAIN_CONTROL_BIGRAM the add-one bigram
 * (tasks_score_bigram), 1..NGRAM_MAX_ORDER the Witten-Bell model of that order at cfg's
 * window (tasks_score_ngram).
 * TRAIN_OK, or a train_status with a message; out (n results) is filled on TRAIN_OK. */
#define TRAIN_CONTROL_BIGRAM (-1)
int train_score_tasks(const gpt_config *cfg, const char *checkpoint, const char *config_id,
                      int control, const task_set *sets, int n, task_score *out, char *err,
                      size_t errlen);
/* Kept models.  A model file is an rptf tensor file (tensorfile.h) holding "params" (the
 * parameter buffer in gpt.h's layout, f32), "itos" (the corpus vocabulary's bytes, i32),
 * "config_id" (as in a checkpoint), "embed_rms" (rho of gpt.h, f64, one value) and, for
 * embed_norm = scale, "embed_scale" (the float 1/rho the forward pass multiplies
 * wte[t] + wpe[p] by, f32, one value), so the model is rebuilt from the file alone (models
 * kept before these two were stored have neither; the loader checks them when present).  Both functions below load it for cfg (the
 * config it was trained with), refuse one of another config id, another parameter
 * count or another vocabulary (TRAIN_ECHECKPOINT, naming the path), and need cfg's
 * corpus. */

/* Evaluates the kept model on the whole validation split exactly as train_run's final
 * evaluation does (same instruments, same arithmetic, subnormals flushed): out's diag,
 * subset accuracies, params, vocab, n_layer and context are filled, out->evaluated = 1;
 * every training field is zero.  Free out with train_metrics_free. */
int train_eval_model(const gpt_config *cfg, const char *path, const char *config_id,
                     train_metrics *out, char *err, size_t errlen);

/* The kept model at path exactly as train_eval_model loads it (every check of it; cfg's
 * corpus is read): its weights in gpt.h's layout into params (room for cap floats), and
 * in out their count, its vocabulary and the constants its forward pass uses
 * (embed_scale: embed_norm = scale only).  TRAIN_OK, or a train_status with a message
 * naming path. */
typedef struct {
    size_t n_params;
    int vocab;
    unsigned char itos[256];
    double embed_rms;
    float embed_scale;
} train_model;
int train_read_model(const gpt_config *cfg, const char *path, const char *config_id,
                     float *params, size_t cap, train_model *out, char *err, size_t errlen);

/* The most bytes a kept model of cfg with a vocabulary of vocab characters takes: a
 * larger file is refused before it is read. */
uint64_t train_model_max_bytes(const gpt_config *cfg, int vocab);

/* Generates n bytes after prompt (prompt_len >= 1 bytes, each in the vocabulary) into
 * text (n bytes, no NUL): each next byte is drawn from softmax(logits / temperature) of
 * the last position, the context being the last `context` bytes so far, with one
 * pcg32_uniform_double of stream (seed, PCG_PURPOSE_SAMPLE, 0) per byte; temperature 0
 * takes the argmax.  Deterministic: the same model, prompt, n, seed and temperature give
 * the same bytes on any thread count. */
int train_sample(const gpt_config *cfg, const char *path, const char *config_id,
                 const char *prompt, size_t prompt_len, long n, uint64_t seed,
                 double temperature, char *text, char *err, size_t errlen);

/* The log columns of a config. */
int train_log_ncols(const gpt_config *cfg);
void train_log_colname(const gpt_config *cfg, int i, char *buf, size_t len);

/* The definitions of gpt.h and diag.h that a user of the config needs (rho, divergence,
 * the training-curve and subset instruments, the n-gram references), as text for
 * `bin/repro help`. */
const char *train_definitions(void);

#endif
