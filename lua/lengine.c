/* Lua module `engine`: the training engine from Lua.
 *   engine.defaults()            -> table of every config key with its default (derived
 *                                   keys, unset by default, are absent)
 *   engine.keys()                -> list of {name=, type="integer"|"number"|"string"|
 *                                   "boolean", help=, derived_from= (a derived key: unset,
 *                                   it takes that key's value), omittable=}
 *   engine.canonical(cfg)        -> a copy of cfg without the omittable keys (engine/config.h)
 *                                   that are at their default: what a run record stores, so
 *                                   records written before those keys existed keep their bytes
 *   engine.definitions()         -> text: how the derived quantities are defined
 *   engine.ngram_ppl(path)       -> {unigram_ppl, unigram_nll, bigram_ppl, bigram_nll,
 *                                   n_train, n_eval, vocab} (engine/ngram.h: add-one
 *                                   smoothed, fitted on the training split, on validation)
 *   engine.check(cfg)            -> true, or a Lua error naming the key (corpus included)
 *   engine.param_count(cfg)      -> integer (reads the corpus for its vocabulary)
 *   engine.param_layout(cfg, vocab) -> {{name, offset, size, shape}, ...}: gpt.h's tensors
 *   engine.train(cfg [, opts])   -> metrics table
 *       opts: on_step = function(step, row) (return true to stop), log_every = k (default 1),
 *             checkpoint = path, checkpoint_every = k, resume = bool,
 *             on_checkpoint = function(step, tmp_path) called with each complete checkpoint
 *             just before it is renamed into place,
 *             config_id = string (written into checkpoints; one to resume from must
 *             carry the same, engine/train.h), final_windows = k (the final evaluation on
 *             the first k validation windows; 0, the default: all; the cost calibration's)
 *       row: one field per log column (engine.log_columns(cfg)), undefined ones absent;
 *       metrics: val_loss, val_ppl, val_acc, embed_norm and the instruments of
 *       engine/diag.h (acc_macro, acc_<class>, ece, brier, reliability{count,
 *       confidence, accuracy}, logit_norm, max_logit, nll_temp_<τ>, temp_opt,
 *       nll_temp_opt, embed_norm_<class>, cos_first, cos_final, resid_norm[],
 *       loss_by_position[], subset_acc[] with subset_acc_mean and subset_acc_sd),
 *       final_grad_norm, train_loss, params, vocab, steps, resumed_from, diverged,
 *       diverge_step and diverge_lr (when diverged), the training-curve instruments
 *       init_loss, max_grad_norm, max_grad_norm_step, max_loss_jump, max_loss_jump_step,
 *       max_abs_logit, logit_growth (every run, diverged ones included), embed_init_rms,
 *       embed_scale (embed_norm = scale), stopped, interrupted, and the timings
 *       tokens_per_s, eval_tokens_per_s, wall_s.  Evaluation metrics are absent for a
 *       diverged or stopped run; an instrument undefined for the data is absent.
 *       opts.tasks = task sets (engine.score_tasks): scored after the final evaluation,
 *       results in metrics.tasks (none for a diverged or stopped run)
 *   engine.score_tasks(cfg, sets [, opts])
 *                                -> per set {acc, acc_norm, lost_demos, context_cut, n_items,
 *                                   correct = {0|1 ...}, correct_norm, loglik = {{...}}}
 *       sets: list of {name =, items = {{context =, choices = {...}, answer = k}, ...},
 *             pool = {...} (demonstrations), shots = k, seed = s} (engine/tasks.h);
 *       opts: checkpoint = path (a run's weights; absent: cfg's model as initialized),
 *             config_id = string (checked against the checkpoint's), bigram = true (the
 *             add-one bigram model of engine/ngram.h instead of a model), ngram = n
 *             (the Witten-Bell model of order n, 1..7, engine/ngram.h: the ladder)
 *       opts.model = path: the final weights of a run that finished (not diverged, not
 *             stopped) are written there after its evaluation (engine/train.h)
 *   engine.evaluate(cfg, path [, config_id])
 *                                -> the evaluation metrics of train (val_loss, ...,
 *                                   params, vocab; no training metric) of the kept model
 *                                   at path, evaluated as train's final evaluation
 *   engine.read_model(cfg, path, config_id)
 *                                -> {params = the weights' f32 bytes in gpt.h's layout,
 *                                   vocab = {byte, ...}, embed_rms =, embed_scale = (scale
 *                                   only)}: the kept model at path loaded exactly as evaluate
 *                                   loads it (engine/train.h train_read_model)
 *   engine.model_max_bytes(cfg)  -> the most bytes a kept model of cfg takes (any vocabulary)
 *   engine.sample(cfg, path, config_id|nil, prompt, n, seed, temperature)
 *                                -> n bytes generated after prompt (engine/train.h
 *                                   train_sample: PCG32, deterministic)
 *   engine.set_threads(n)        sets the thread count of the rest of the current
 *                                   training (1..MAX_THREADS): call it from on_step, between
 *                                   steps (results do not depend on it; the next
 *                                   engine.train starts again from its cfg.threads)
 *   engine.attention_time(cfg, threads [, reps])
 *                                -> seconds of one layer's attention forward + backward at
 *                                   cfg's batch, context, d_model, n_head (make bench)
 *   engine.log_columns(cfg)      -> list of log.csv column names
 *   engine.metric_names()        -> sorted list of the scalar metrics train reports
 *   engine.error_kinds           -> {"config", "corpus", "checkpoint", "filesystem", "memory"}
 *   engine.MAX_THREADS           the largest `threads` (engine/config.h)
 *   engine.DIVERGE_STEPS, engine.DIVERGE_MARGIN
 *                                the divergence rule (engine/diag.h): DIVERGE_STEPS
 *                                consecutive losses above the loss at initialization +
 *                                DIVERGE_MARGIN nats
 *   engine.LN_EPS, engine.RMS_EPS, engine.LINEAR_STD
 *                                the model's fixed constants (engine/gpt.h), as floats
 * Errors of check, param_count, log_columns and train read "<kind>: <message>", the kind
 * one of engine.error_kinds (engine/train.h): config (a value, its key named), corpus
 * (the data file), checkpoint (the one to resume from cannot be read or is of another
 * config), filesystem (a checkpoint cannot be written), memory (out of memory).
 * A relative `data` path is resolved against the project root, so records store the
 * portable relative path; the corpus must lie in the project's data directory
 * (<root>/data, symbolic links and ".." resolved) unless REPRO_DATA_ANYWHERE=1.  on_step runs between steps, never inside a parallel region;
 * an error in it stops training, the C state is freed, and the error is re-raised as it
 * was raised (a string error with the traceback of where it was raised appended).
 * SIGINT or SIGTERM (kill, scancel, a batch system's time limit) during training stops
 * after the current step (metrics.interrupted = true), with a checkpoint when one is set.
 */
#include <lauxlib.h>
#include <lua.h>
#include <math.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/prof.h"
#include "../engine/config.h"
#include "../engine/data.h"
#include "../engine/gpt.h"
#include "../engine/diag.h"
#include "../engine/ngram.h"
#include "../engine/train.h"
#include "../engine/isa.h"
#include "../engine/kernels.h"
#include "lrepro.h"

static void set_num(lua_State *L, const char *k, double v)
{
    lua_pushnumber(L, v);
    lua_setfield(L, -2, k);
}

/* Sets t[k] = v unless v is NaN (an undefined instrument stays absent). */
static void set_defined(lua_State *L, const char *k, double v)
{
    if (!isnan(v))
        set_num(L, k, v);
}

/* Every key that is set (derived keys left unset are absent). */
static void push_config(lua_State *L, const gpt_config *c)
{
    lua_createtable(L, 0, config_nkeys);
    for (int i = 0; i < config_nkeys; i++) {
        const config_key *k = &config_keys[i];
        const char *p = (const char *)c + k->offset;
        if (!config_is_set(c, k))
            continue;
        switch (k->type) {
        case CFG_INT:
            if (strstr(k->name, "seed"))
                lua_pushinteger(L, (lua_Integer) * (const long long *)p);
            else
                lua_pushinteger(L, *(const int *)p);
            break;
        case CFG_NUM:
            lua_pushnumber(L, *(const double *)p);
            break;
        case CFG_ENUM:
            lua_pushstring(L, k->values[*(const int *)p]);
            break;
        case CFG_BOOL:
            lua_pushboolean(L, *(const int *)p);
            break;
        case CFG_STR:
            lua_pushstring(L, p);
            break;
        }
        lua_setfield(L, -2, k->name);
    }
}

/* Sets `key` from the value on top of the stack; 0 or -1 with a message. */
static int set_from_stack(lua_State *L, gpt_config *c, const char *key, char *err, size_t n)
{
    if (lua_isinteger(L, -1))
        return config_set_int(c, key, (long long)lua_tointeger(L, -1), err, n);
    if (lua_type(L, -1) == LUA_TNUMBER)
        return config_set_num(c, key, lua_tonumber(L, -1), err, n);
    if (lua_type(L, -1) == LUA_TSTRING)
        return config_set_str(c, key, lua_tostring(L, -1), err, n);
    if (lua_type(L, -1) == LUA_TBOOLEAN)
        return config_set_bool(c, key, lua_toboolean(L, -1), err, n);
    snprintf(err, n, "%s: unsupported value of type %s", key, luaL_typename(L, -1));
    return -1;
}

/* True when path is below dir ("dir/..."). */
static int below(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return strncmp(path, dir, n) == 0 && path[n] == '/';
}

/* Refuses (a config error naming the key, the value and the flag) a corpus outside the
 * project's data directory <root>/data: with symbolic links and ".." resolved (realpath)
 * when it exists, else by its text (below the directory, no ".." component), so a study
 * or a command line cannot point `data` at any readable file of the machine.
 * REPRO_DATA_ANYWHERE=1 allows another (the tests' temporary corpora, a corpus kept
 * elsewhere on purpose).  `given` is the value as given, `path` the one resolved. */
static void check_data_dir(lua_State *L, const char *root, const char *given, const char *path)
{
    const char *any = getenv("REPRO_DATA_ANYWHERE");
    if (any && strcmp(any, "1") == 0)
        return;
    char dir[PATH_MAX], real_dir[PATH_MAX], real[PATH_MAX];
    int n = snprintf(dir, sizeof dir, "%s/data", root);
    if (n < 0 || (size_t)n >= sizeof dir)
        luaL_error(L, "config: data path too long");
    const char *d = realpath(dir, real_dir) ? real_dir : dir;
    int inside;
    if (realpath(path, real)) {
        inside = below(real, d);
    } else {
        size_t len = strlen(path);
        inside = below(path, dir) && strstr(path, "/../") == NULL &&
                 !(len >= 3 && strcmp(path + len - 3, "/..") == 0);
        real[0] = '\0';
    }
    if (!inside)
        luaL_error(L, "config: data=%s: outside the project's data directory %s/%s%s%s (a corpus "
                   "must be there; REPRO_DATA_ANYWHERE=1 allows another)", given, dir,
                   real[0] && strcmp(real, given) != 0 ? ": it is " : "",
                   real[0] && strcmp(real, given) != 0 ? real : "",
                   real[0] ? "" : " (by its path: '..' or not below it)");
}

/* Reads a config table at `idx` over the defaults; raises a Lua error naming the key.
 * No C memory is held while this can raise. */
static void read_config(lua_State *L, int idx, gpt_config *c)
{
    char err[512];
    config_defaults(c);
    luaL_checktype(L, idx, LUA_TTABLE);
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        if (lua_type(L, -2) != LUA_TSTRING)
            luaL_error(L, "config: keys must be strings, got %s", luaL_typename(L, -2));
        if (set_from_stack(L, c, lua_tostring(L, -2), err, sizeof err))
            luaL_error(L, "config: %s", err);
        lua_pop(L, 1);
    }
    lua_getfield(L, LUA_REGISTRYINDEX, "repro.root");
    const char *root = lua_tostring(L, -1); /* the registry keeps it alive */
    lua_pop(L, 1);
    if (root && c->data[0]) {
        char given[sizeof c->data];
        memcpy(given, c->data, sizeof given);
        if (c->data[0] != '/') {
            char buf[sizeof c->data];
            int n = snprintf(buf, sizeof buf, "%s/%s", root, c->data);
            if (n < 0 || (size_t)n >= sizeof buf)
                luaL_error(L, "config: data path too long");
            memcpy(c->data, buf, sizeof buf);
        }
        check_data_dir(L, root, given, c->data);
    }
}

static int l_defaults(lua_State *L)
{
    gpt_config c;
    config_defaults(&c);
    push_config(L, &c);
    return 1;
}

static int l_keys(lua_State *L)
{
    static const char *tn[] = {"integer", "number", "string", "string", "boolean"};
    lua_createtable(L, config_nkeys, 0);
    for (int i = 0; i < config_nkeys; i++) {
        lua_createtable(L, 0, 5);
        lua_pushstring(L, config_keys[i].name);
        lua_setfield(L, -2, "name");
        lua_pushstring(L, tn[config_keys[i].type]);
        lua_setfield(L, -2, "type");
        lua_pushstring(L, config_keys[i].help);
        lua_setfield(L, -2, "help");
        if (config_keys[i].derived_from) {
            lua_pushstring(L, config_keys[i].derived_from);
            lua_setfield(L, -2, "derived_from");
        }
        lua_pushboolean(L, config_keys[i].omittable);
        lua_setfield(L, -2, "omittable");
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* The config of the table at index 1 over the defaults, every key that parses set (the
 * others left at their default: engine.check reports them). */
static void config_over_defaults(lua_State *L, gpt_config *c)
{
    char err[512];
    config_defaults(c);
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_pushnil(L);
    while (lua_next(L, 1) != 0) {
        if (lua_type(L, -2) == LUA_TSTRING)
            set_from_stack(L, c, lua_tostring(L, -2), err, sizeof err);
        lua_pop(L, 1);
    }
}

/* A shallow copy of the table without the omittable keys at their default.  Values
 * that do not parse are kept (engine.check reports them); the copy is never re-typed,
 * so the bytes of a record written from it do not change. */
static int l_canonical(lua_State *L)
{
    char err[512];
    gpt_config c;
    config_over_defaults(L, &c);
    lua_newtable(L);
    lua_pushnil(L);
    while (lua_next(L, 1) != 0) {
        const config_key *k =
            lua_type(L, -2) == LUA_TSTRING ? config_find(lua_tostring(L, -2)) : NULL;
        int drop = 0;
        if (k && k->omittable) {
            gpt_config one;
            config_defaults(&one);
            /* the value itself parses, and the config it is part of holds it at default */
            drop = set_from_stack(L, &one, k->name, err, sizeof err) == 0 &&
                   config_at_default(&c, k);
        }
        if (drop) {
            lua_pop(L, 1);
        } else {
            lua_pushvalue(L, -2);
            lua_insert(L, -2);
            lua_settable(L, -4);
        }
    }
    return 1;
}

/* engine.effective(config): the config (a table over the defaults; keys it does not name
 * are ignored, as l_canonical does) with every derived key that is unset given the value
 * the engine trains with: the embeddings' std, the Linear init and the residual rescaling
 * from the init scheme, the init and data seeds from the seed.  So a report can name a
 * variant by what it trains with, never by "unset". */
static int l_effective(lua_State *L)
{
    gpt_config c;
    config_over_defaults(L, &c);
    c.tok_init_std = config_tok_init_std(&c);
    c.pos_init_std = config_pos_init_std(&c);
    c.linear_init = config_linear_init(&c);
    c.resid_rescale = config_resid_rescale(&c);
    c.init_seed = config_init_seed(&c);
    c.data_seed = config_data_seed(&c);
    push_config(L, &c);
    return 1;
}

/* engine.profile(on): the step profile of engine/prof.h (make bench only).  Returns the
 * seconds per kind of work accumulated since it was last started, {embed =, qkv_fwd =,
 * ...}; then on = true starts a new one (zeroed), false stops it. */
static int l_profile(lua_State *L)
{
    double s[PROF_N];
    prof_read(s);
    lua_createtable(L, 0, PROF_N);
    for (int k = 0; k < PROF_N; k++) {
        lua_pushnumber(L, s[k]);
        lua_setfield(L, -2, prof_name(k));
    }
    prof_enable(lua_toboolean(L, 1));
    return 1;
}

static int l_definitions(lua_State *L)
{
    lua_pushstring(L, train_definitions());
    return 1;
}

static int l_ngram_ppl(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    char full[4096], err[1024];
    lua_getfield(L, LUA_REGISTRYINDEX, "repro.root");
    const char *root = lua_tostring(L, -1);
    int n = path[0] != '/' && root ? snprintf(full, sizeof full, "%s/%s", root, path)
                                   : snprintf(full, sizeof full, "%s", path);
    lua_pop(L, 1);
    if (n < 0 || (size_t)n >= sizeof full)
        return luaL_error(L, "ngram_ppl: path too long");
    corpus c;
    if (corpus_load(&c, full, err, sizeof err))
        return luaL_error(L, "ngram_ppl: %s", err);
    ngram_result r;
    int rc = ngram_eval(&c, &r, err, sizeof err);
    corpus_free(&c);
    if (rc)
        return luaL_error(L, "ngram_ppl: %s: %s", path, err);
    lua_createtable(L, 0, 7);
    set_num(L, "unigram_nll", r.unigram_nll);
    set_num(L, "unigram_ppl", r.unigram_ppl);
    set_num(L, "bigram_nll", r.bigram_nll);
    set_num(L, "bigram_ppl", r.bigram_ppl);
    lua_pushinteger(L, (lua_Integer)r.n_train);
    lua_setfield(L, -2, "n_train");
    lua_pushinteger(L, (lua_Integer)r.n_eval);
    lua_setfield(L, -2, "n_eval");
    lua_pushinteger(L, r.vocab);
    lua_setfield(L, -2, "vocab");
    return 1;
}

/* Raises the error of a failed train_* call: "<kind>: <message>", the kind from
 * train_status_name (engine.error_kinds). */
static int raise_status(lua_State *L, int status, const char *err)
{
    const char *kind = train_status_name(status);
    return luaL_error(L, "%s: %s", kind ? kind : "engine", err);
}

static int l_check(lua_State *L)
{
    gpt_config c;
    char err[1024];
    read_config(L, 1, &c);
    int rc = train_check(&c, err, sizeof err);
    if (rc != TRAIN_OK)
        return raise_status(L, rc, err);
    lua_pushboolean(L, 1);
    return 1;
}

static int l_param_count(lua_State *L)
{
    gpt_config c;
    char err[1024];
    read_config(L, 1, &c);
    if (config_validate(&c, err, sizeof err))
        return raise_status(L, TRAIN_ECONFIG, err);
    corpus cp;
    if (corpus_scan(&cp, c.data, err, sizeof err))
        return raise_status(L, TRAIN_ECORPUS, err);
    int vocab = cp.vocab;
    corpus_free(&cp);
    lua_pushinteger(L, (lua_Integer)gpt_param_count(&c, vocab));
    return 1;
}

/* engine.param_layout(cfg, vocab): the parameter tensors of cfg's model (gpt.h layout)
 * with a vocabulary of vocab, in order: {name =, offset =, size =, shape = {d0[, d1]}},
 * offsets and sizes in floats. */
static int l_param_layout(lua_State *L)
{
    gpt_config c;
    char err[1024];
    read_config(L, 1, &c);
    lua_Integer vocab = luaL_checkinteger(L, 2);
    luaL_argcheck(L, vocab >= 1 && vocab <= 256, 2, "must be in [1, 256]");
    if (config_validate(&c, err, sizeof err))
        return raise_status(L, TRAIN_ECONFIG, err);
    int n = gpt_layout(&c, (int)vocab, NULL, 0);
    gpt_tensor *t = lua_newuserdatauv(L, (size_t)n * sizeof *t, 0); /* freed by the GC */
    gpt_layout(&c, (int)vocab, t, n);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_createtable(L, 0, 4);
        lua_pushstring(L, t[i].name);
        lua_setfield(L, -2, "name");
        lua_pushinteger(L, (lua_Integer)t[i].offset);
        lua_setfield(L, -2, "offset");
        lua_pushinteger(L, (lua_Integer)t[i].size);
        lua_setfield(L, -2, "size");
        lua_createtable(L, t[i].ndim, 0);
        for (int d = 0; d < t[i].ndim; d++) {
            lua_pushinteger(L, t[i].dims[d]);
            lua_rawseti(L, -2, d + 1);
        }
        lua_setfield(L, -2, "shape");
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* The message handler of the on_step call: a string error gets the traceback of where
 * it was raised (lua.c's msghandler); any other error object (a user error table) is
 * kept as it is. */
static int step_msghandler(lua_State *L)
{
    if (lua_type(L, 1) == LUA_TSTRING)
        luaL_traceback(L, L, lua_tostring(L, 1), 1);
    return 1;
}

typedef struct {
    lua_State *L;
    int handler; /* stack index of step_msghandler */
    int fn;    /* stack index of on_step, 0 if none */
    int names; /* stack index of the column-name list */
    int log_every;
    int failed;
    int ckpt_fn; /* stack index of on_checkpoint, 0 if none */
} step_ctx;

static int step_cb(void *ud, const train_row *row)
{
    step_ctx *s = ud;
    if (s->fn && (row->step % s->log_every == 0 || !isfinite(row->v[2]))) {
        lua_State *L = s->L;
        lua_pushvalue(L, s->fn);
        lua_pushinteger(L, row->step);
        lua_createtable(L, 0, row->ncols);
        for (int i = 0; i < row->ncols; i++) {
            if (isnan(row->v[i]) && i != 2 && i != 3)
                continue; /* loss and grad_norm stay, as nan, on a diverged step */
            lua_rawgeti(L, s->names, i + 1);
            if (i == 0)
                lua_pushinteger(L, row->step);
            else
                lua_pushnumber(L, row->v[i]);
            lua_settable(L, -3);
        }
        if (lua_pcall(L, 2, 1, s->handler) != LUA_OK) {
            s->failed = 1; /* error object stays on the stack */
            return 1;
        }
        int stop = lua_toboolean(L, -1); /* on_step returns true to stop */
        lua_pop(L, 1);
        if (stop)
            return 1;
    }
    return interrupted != 0;
}

/* on_checkpoint(step, tmp_path), just before the engine renames a complete checkpoint
 * into place; an error refuses it, failing the run, and is raised once the engine has
 * freed its state, as on_step's. */
static int ckpt_cb(void *ud, long step, const char *tmp_path)
{
    step_ctx *s = ud;
    if (!s->ckpt_fn || s->failed)
        return s->failed;
    lua_State *L = s->L;
    lua_pushvalue(L, s->ckpt_fn);
    lua_pushinteger(L, step);
    lua_pushstring(L, tmp_path);
    if (lua_pcall(L, 2, 0, s->handler) != LUA_OK) {
        s->failed = 1; /* error object stays on the stack */
        return 1;
    }
    return 0;
}

static void push_column_names(lua_State *L, const gpt_config *c)
{
    int n = train_log_ncols(c);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        char buf[64];
        train_log_colname(c, i, buf, sizeof buf);
        lua_pushstring(L, buf);
        lua_rawseti(L, -2, i + 1);
    }
}

static int l_log_columns(lua_State *L)
{
    gpt_config c;
    char err[1024];
    read_config(L, 1, &c);
    if (config_validate(&c, err, sizeof err))
        return raise_status(L, TRAIN_ECONFIG, err);
    push_column_names(L, &c);
    return 1;
}

static void push_array(lua_State *L, const char *k, const double *v, int n)
{
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_pushnumber(L, v[i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, k);
}

static void push_metrics(lua_State *L, const train_metrics *m)
{
    lua_createtable(L, 0, 64);
    if (m->evaluated) {
        const diag_result *r = &m->diag;
        set_num(L, "val_loss", r->val_loss);
        set_num(L, "val_ppl", r->val_ppl);
        set_num(L, "val_acc", r->val_acc);
        set_num(L, "embed_norm", r->embed_norm);
        set_defined(L, "acc_macro", r->acc_macro);
        set_defined(L, "ece", r->ece);
        set_num(L, "brier", r->brier);
        set_num(L, "logit_norm", r->logit_norm);
        set_num(L, "max_logit", r->max_logit);
        set_defined(L, "temp_opt", r->temp_opt);
        set_defined(L, "nll_temp_opt", r->nll_temp_opt);
        set_defined(L, "cos_first", r->cos_first);
        set_defined(L, "cos_final", r->cos_final);
        for (int k = 0; k < N_CLASSES; k++) {
            char name[64];
            snprintf(name, sizeof name, "acc_%s", diag_class_names[k]);
            set_defined(L, name, r->acc_class[k]);
            snprintf(name, sizeof name, "embed_norm_%s", diag_class_names[k]);
            set_defined(L, name, r->embed_norm_class[k]);
        }
        for (int k = 0; k < N_TEMPS; k++) {
            char name[64];
            snprintf(name, sizeof name, "nll_temp_%g", diag_temps[k]);
            for (char *p = name; *p; p++)
                if (*p == '.')
                    *p = '_';
            set_defined(L, name, r->nll_temp[k]);
        }
        lua_createtable(L, 0, 3);
        push_array(L, "count", r->bin_n, N_BINS);
        push_array(L, "confidence", r->bin_conf, N_BINS);
        push_array(L, "accuracy", r->bin_acc, N_BINS);
        lua_setfield(L, -2, "reliability");
        push_array(L, "resid_norm", m->resid_norm, m->n_layer + 1);
        push_array(L, "loss_by_position", m->pos_loss, m->context);
        push_array(L, "subset_acc", m->subset_acc, DIAG_SUBSETS);
        set_num(L, "subset_acc_mean", m->subset_acc_mean);
        set_num(L, "subset_acc_sd", m->subset_acc_sd);
        if (m->balanced_acc) { /* only where the config asks: other records keep their bytes */
            set_defined(L, "bal_acc", r->bal_acc);
            push_array(L, "bal_subset_acc", m->bal_subset_acc, DIAG_BAL_SUBSETS);
            set_num(L, "bal_subset_acc_mean", m->bal_subset_acc_mean);
            set_num(L, "bal_subset_acc_sd", m->bal_subset_acc_sd);
        }
        set_num(L, "eval_tokens_per_s", m->eval_tokens_per_s);
    }
    const diag_curve *cv = &m->curve;
    set_defined(L, "init_loss", cv->init_loss);
    set_defined(L, "max_grad_norm", cv->max_grad_norm);
    if (cv->max_grad_norm_step >= 0) {
        lua_pushinteger(L, cv->max_grad_norm_step);
        lua_setfield(L, -2, "max_grad_norm_step");
    }
    set_defined(L, "max_loss_jump", cv->max_loss_jump);
    if (cv->max_loss_jump_step >= 0) {
        lua_pushinteger(L, cv->max_loss_jump_step);
        lua_setfield(L, -2, "max_loss_jump_step");
    }
    set_defined(L, "max_abs_logit", cv->max_abs_logit);
    set_defined(L, "logit_growth", cv->logit_growth);
    set_defined(L, "embed_init_rms", m->embed_init_rms);
    set_defined(L, "embed_scale", m->embed_scale);
    if (isfinite(m->final_grad_norm))
        set_num(L, "final_grad_norm", m->final_grad_norm);
    if (isfinite(m->train_loss))
        set_num(L, "train_loss", m->train_loss);
    lua_pushinteger(L, m->params);
    lua_setfield(L, -2, "params");
    lua_pushinteger(L, m->vocab);
    lua_setfield(L, -2, "vocab");
    lua_pushinteger(L, m->steps);
    lua_setfield(L, -2, "steps");
    lua_pushinteger(L, m->resumed_from);
    lua_setfield(L, -2, "resumed_from");
    lua_pushboolean(L, m->diverged);
    lua_setfield(L, -2, "diverged");
    if (m->diverged) {
        lua_pushinteger(L, m->diverge_step);
        lua_setfield(L, -2, "diverge_step");
        set_num(L, "diverge_lr", m->diverge_lr);
    }
    lua_pushboolean(L, m->stopped);
    lua_setfield(L, -2, "stopped");
    lua_pushboolean(L, interrupted != 0);
    lua_setfield(L, -2, "interrupted");
    set_num(L, "tokens_per_s", m->tokens_per_s);
    set_num(L, "wall_s", m->wall_s);
}

static int opt_int(lua_State *L, int idx, const char *name, int dflt)
{
    if (lua_isnoneornil(L, idx))
        return dflt;
    lua_getfield(L, idx, name);
    int v = dflt;
    if (!lua_isnil(L, -1)) {
        if (!lua_isinteger(L, -1))
            luaL_error(L, "bad option '%s' to 'train' (integer expected, got %s)", name,
                       luaL_typename(L, -1));
        v = (int)lua_tointeger(L, -1);
    }
    lua_pop(L, 1);
    return v;
}

/* ---- task sets (engine/tasks.h) ---------------------------------------------------- */

/* The item at idx, {context =, choices = {...}, answer = k (0-based)}, into it; the
 * strings stay owned by the caller's table (kept alive by the argument). */
static void read_item(lua_State *L, int idx, task_item *it, const char *what, int n)
{
    if (!lua_istable(L, idx))
        luaL_error(L, "task %s, item %d: a table expected", what, n);
    lua_getfield(L, idx, "context");
    it->context = (const unsigned char *)lua_tolstring(L, -1, &it->context_len);
    lua_getfield(L, idx, "answer");
    int ok_answer = lua_isinteger(L, -1);
    it->answer = ok_answer ? (int)lua_tointeger(L, -1) : -1;
    lua_getfield(L, idx, "choices");
    int nc = lua_istable(L, -1) ? (int)lua_rawlen(L, -1) : 0;
    if (!it->context || it->context_len == 0 || nc < 2 || nc > TASKS_MAX_CHOICES ||
        !ok_answer || it->answer < 0 || it->answer >= nc)
        luaL_error(L, "task %s, item %d: needs a non-empty context, 2 to %d choices and an "
                   "answer in range", what, n, TASKS_MAX_CHOICES);
    it->n_choices = nc;
    for (int j = 0; j < nc; j++) {
        lua_rawgeti(L, -1, j + 1);
        it->choice[j] = (const unsigned char *)lua_tolstring(L, -1, &it->choice_len[j]);
        if (!it->choice[j] || it->choice_len[j] == 0)
            luaL_error(L, "task %s, item %d: choice %d is not a non-empty string", what, n,
                       j + 1);
        lua_pop(L, 1);
    }
    lua_pop(L, 3);
}

/* The list at field `key` of the table at t, into an array owned by a userdata that is
 * stored in the table at keep. */
static task_item *read_items(lua_State *L, int t, const char *key, int keep, const char *what,
                             int *count)
{
    lua_getfield(L, t, key);
    int list = lua_gettop(L);
    int n = lua_istable(L, list) ? (int)lua_rawlen(L, list) : 0;
    task_item *items = lua_newuserdatauv(L, ((size_t)n + 1) * sizeof(task_item), 0);
    memset(items, 0, ((size_t)n + 1) * sizeof(task_item));
    lua_rawseti(L, keep, (lua_Integer)lua_rawlen(L, keep) + 1);
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, list, i + 1);
        read_item(L, lua_gettop(L), &items[i], what, i + 1);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    *count = n;
    return items;
}

/* The task sets of the list at idx, {name =, items =, pool =, shots =, seed =}, ...;
 * their arrays live in userdata stored in a table pushed on the stack. */
static task_set *read_task_sets(lua_State *L, int idx, int *count)
{
    idx = lua_absindex(L, idx);
    luaL_checktype(L, idx, LUA_TTABLE);
    int n = (int)lua_rawlen(L, idx);
    lua_newtable(L);
    int keep = lua_gettop(L);
    task_set *sets = lua_newuserdatauv(L, ((size_t)n + 1) * sizeof(task_set), 0);
    memset(sets, 0, ((size_t)n + 1) * sizeof(task_set));
    lua_rawseti(L, keep, 1);
    for (int k = 0; k < n; k++) {
        lua_rawgeti(L, idx, k + 1);
        int t = lua_gettop(L);
        luaL_checktype(L, t, LUA_TTABLE);
        lua_getfield(L, t, "name");
        sets[k].name = lua_tostring(L, -1) ? lua_tostring(L, -1) : "?";
        lua_getfield(L, t, "shots");
        sets[k].shots = (int)luaL_optinteger(L, -1, 0);
        lua_getfield(L, t, "seed");
        sets[k].seed = (uint64_t)luaL_optinteger(L, -1, 0);
        lua_pop(L, 3);
        sets[k].items = read_items(L, t, "items", keep, sets[k].name, &sets[k].n_items);
        sets[k].pool = read_items(L, t, "pool", keep, sets[k].name, &sets[k].n_pool);
        lua_pop(L, 1);
    }
    *count = n;
    return sets;
}

/* The results as a list of {acc, acc_norm, lost_demos, context_cut, correct = {0/1, ...},
 * correct_norm = {...}, loglik = {{...}, ...}}; frees them. */
static void push_task_scores(lua_State *L, const task_set *sets, task_score *r, int n)
{
    lua_createtable(L, n, 0);
    for (int k = 0; k < n; k++) {
        lua_createtable(L, 0, 8);
        set_num(L, "acc", r[k].acc);
        set_num(L, "acc_norm", r[k].acc_norm);
        set_num(L, "lost_demos", r[k].lost_demos);
        set_num(L, "context_cut", r[k].context_cut);
        set_num(L, "n_items", r[k].n_items);
        lua_createtable(L, r[k].n_items, 0);
        lua_createtable(L, r[k].n_items, 0);
        lua_createtable(L, r[k].n_items, 0);
        for (int i = 0; i < r[k].n_items; i++) {
            lua_pushinteger(L, r[k].correct[i]);
            lua_rawseti(L, -4, i + 1);
            lua_pushinteger(L, r[k].correct_norm[i]);
            lua_rawseti(L, -3, i + 1);
            lua_createtable(L, sets[k].items[i].n_choices, 0);
            for (int j = 0; j < sets[k].items[i].n_choices; j++) {
                lua_pushnumber(L, r[k].loglik[(size_t)i * TASKS_MAX_CHOICES + j]);
                lua_rawseti(L, -2, j + 1);
            }
            lua_rawseti(L, -2, i + 1);
        }
        lua_setfield(L, -4, "loglik");
        lua_setfield(L, -3, "correct_norm");
        lua_setfield(L, -2, "correct");
        lua_rawseti(L, -2, k + 1);
    }
}

static void free_task_scores(task_score *r, int n)
{
    for (int k = 0; k < n; k++)
        task_score_free(&r[k]);
}

/* engine.score_tasks(cfg, sets [, opts]): opts.checkpoint (a run's checkpoint: its
 * weights; absent: the model as initialized), opts.config_id (checked against the
 * checkpoint's), opts.bigram = true (the add-one bigram control instead of the model),
 * opts.ngram = n (the Witten-Bell n-gram control of order n, engine/ngram.h). */
static int l_score_tasks(lua_State *L)
{
    gpt_config c;
    read_config(L, 1, &c);
    int n;
    task_set *sets = read_task_sets(L, 2, &n);
    const char *checkpoint = NULL, *config_id = NULL;
    int control = 0;
    if (!lua_isnoneornil(L, 3)) {
        luaL_checktype(L, 3, LUA_TTABLE);
        lua_getfield(L, 3, "checkpoint");
        checkpoint = lua_tostring(L, -1); /* kept alive by opts */
        lua_getfield(L, 3, "config_id");
        config_id = lua_tostring(L, -1);
        lua_getfield(L, 3, "bigram");
        if (lua_toboolean(L, -1))
            control = TRAIN_CONTROL_BIGRAM;
        lua_getfield(L, 3, "ngram");
        if (!lua_isnil(L, -1)) {
            lua_Integer order = luaL_checkinteger(L, -1);
            luaL_argcheck(L, order >= 1 && order <= NGRAM_MAX_ORDER, 3,
                          "opts.ngram must be an order in 1..7");
            control = (int)order;
        }
        lua_pop(L, 4);
    }
    task_score *out = lua_newuserdatauv(L, ((size_t)n + 1) * sizeof(task_score), 0);
    memset(out, 0, ((size_t)n + 1) * sizeof(task_score));
    char err[1024];
    int rc = train_score_tasks(&c, checkpoint, config_id, control, sets, n, out, err, sizeof err);
    if (rc != TRAIN_OK)
        return raise_status(L, rc, err);
    push_task_scores(L, sets, out, n);
    free_task_scores(out, n);
    return 1;
}

static int l_train(lua_State *L)
{
    gpt_config c;
    read_config(L, 1, &c);
    lua_settop(L, 2); /* no options: slot 2 is nil, not the handler pushed next */
    if (!lua_isnoneornil(L, 2))
        luaL_checktype(L, 2, LUA_TTABLE);
    lua_pushcfunction(L, step_msghandler);
    int handler = lua_gettop(L);
    push_column_names(L, &c);
    step_ctx s = {L, handler, 0, lua_gettop(L), opt_int(L, 2, "log_every", 1), 0, 0};
    if (s.log_every < 1)
        return luaL_error(L, "bad option 'log_every' to 'train' (must be >= 1)");
    train_hooks h = {step_cb, &s,  NULL, opt_int(L, 2, "checkpoint_every", 0), 0, NULL, NULL,
                     opt_int(L, 2, "final_windows", 0), ckpt_cb};
    if (h.final_windows < 0)
        return luaL_error(L, "bad option 'final_windows' to 'train' (must be >= 0)");
    train_tasks tk = {NULL, 0, NULL};
    if (!lua_isnoneornil(L, 2)) {
        lua_getfield(L, 2, "tasks");
        if (!lua_isnil(L, -1)) {
            tk.sets = read_task_sets(L, -1, &tk.n_tasks); /* kept alive on the stack */
            tk.out = lua_newuserdatauv(L, ((size_t)tk.n_tasks + 1) * sizeof(task_score), 0);
            memset(tk.out, 0, ((size_t)tk.n_tasks + 1) * sizeof(task_score));
        }
        lua_getfield(L, 2, "checkpoint");
        h.checkpoint = lua_tostring(L, -1); /* kept alive on the stack */
        lua_getfield(L, 2, "resume");
        h.resume = lua_toboolean(L, -1);
        lua_pop(L, 1);
        lua_getfield(L, 2, "config_id");
        h.config_id = lua_tostring(L, -1); /* kept alive on the stack */
        lua_getfield(L, 2, "model");
        h.model_out = lua_tostring(L, -1); /* kept alive on the stack */
        lua_getfield(L, 2, "on_step");
        if (!lua_isnil(L, -1)) {
            luaL_checktype(L, -1, LUA_TFUNCTION);
            s.fn = lua_gettop(L);
        } else {
            lua_pop(L, 1);
        }
        lua_getfield(L, 2, "on_checkpoint");
        if (!lua_isnil(L, -1)) {
            luaL_checktype(L, -1, LUA_TFUNCTION);
            s.ckpt_fn = lua_gettop(L);
        } else {
            lua_pop(L, 1);
        }
    }
    interrupted = 0;
    struct sigaction sa, old, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old);
    sigaction(SIGTERM, &sa, &old_term);
    train_metrics m;
    char err[1024];
    int rc = train_run_scored(&c, &h, &tk, &m, err, sizeof err);
    sigaction(SIGINT, &old, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (s.failed) {
        train_metrics_free(&m);
        return lua_error(L); /* the on_step error, after the engine freed its state */
    }
    if (rc != TRAIN_OK)
        return raise_status(L, rc, err);
    push_metrics(L, &m); /* cannot raise except on out of memory */
    if (tk.n_tasks > 0 && m.evaluated) {
        push_task_scores(L, tk.sets, tk.out, tk.n_tasks);
        free_task_scores(tk.out, tk.n_tasks);
        lua_setfield(L, -2, "tasks");
    }
    train_metrics_free(&m);
    return 1;
}

static int l_evaluate(lua_State *L)
{
    gpt_config c;
    read_config(L, 1, &c);
    const char *path = luaL_checkstring(L, 2);
    const char *id = luaL_optstring(L, 3, NULL);
    train_metrics m;
    char err[1024];
    int rc = train_eval_model(&c, path, id, &m, err, sizeof err);
    if (rc != TRAIN_OK)
        return raise_status(L, rc, err);
    push_metrics(L, &m);
    train_metrics_free(&m);
    return 1;
}

static int l_model_max_bytes(lua_State *L)
{
    gpt_config c;
    char err[1024];
    read_config(L, 1, &c);
    if (config_validate(&c, err, sizeof err))
        return raise_status(L, TRAIN_ECONFIG, err);
    lua_pushinteger(L, (lua_Integer)train_model_max_bytes(&c, 256));
    return 1;
}

static int l_read_model(lua_State *L)
{
    gpt_config c;
    char err[1024];
    read_config(L, 1, &c);
    const char *path = luaL_checkstring(L, 2);
    const char *id = luaL_checkstring(L, 3);
    if (config_validate(&c, err, sizeof err))
        return raise_status(L, TRAIN_ECONFIG, err);
    /* room for the largest vocabulary, owned by Lua: nothing of C's is held if a push fails */
    size_t cap = gpt_param_count(&c, 256);
    float *params = lua_newuserdatauv(L, cap * sizeof(float), 0);
    train_model m;
    int rc = train_read_model(&c, path, id, params, cap, &m, err, sizeof err);
    if (rc != TRAIN_OK)
        return raise_status(L, rc, err);
    lua_createtable(L, 0, 4);
    lua_pushlstring(L, (const char *)params, m.n_params * sizeof(float));
    lua_setfield(L, -2, "params");
    lua_createtable(L, m.vocab, 0);
    for (int v = 0; v < m.vocab; v++) {
        lua_pushinteger(L, m.itos[v]);
        lua_rawseti(L, -2, v + 1);
    }
    lua_setfield(L, -2, "vocab");
    set_num(L, "embed_rms", m.embed_rms);
    if (c.embed_norm == EMBED_SCALE)
        set_num(L, "embed_scale", (double)m.embed_scale);
    return 1;
}

static int l_sample(lua_State *L)
{
    gpt_config c;
    read_config(L, 1, &c);
    const char *path = luaL_checkstring(L, 2);
    const char *id = luaL_optstring(L, 3, NULL);
    size_t plen;
    const char *prompt = luaL_checklstring(L, 4, &plen);
    lua_Integer n = luaL_checkinteger(L, 5);
    lua_Integer seed = luaL_checkinteger(L, 6);
    double temperature = luaL_checknumber(L, 7);
    luaL_argcheck(L, n >= 0 && n <= (1 << 24), 5, "must be in [0, 16777216]");
    luaL_argcheck(L, seed >= 0, 6, "must be >= 0");
    luaL_argcheck(L, temperature >= 0.0 && isfinite(temperature), 7, "must be finite and >= 0");
    char *text = lua_newuserdatauv(L, (size_t)n + 1, 0); /* freed by the GC, even on error */
    char err[1024];
    int rc = train_sample(&c, path, id, prompt, plen, (long)n, (uint64_t)seed, temperature,
                          text, err, sizeof err);
    if (rc != TRAIN_OK)
        return raise_status(L, rc, err);
    lua_pushlstring(L, text, (size_t)n);
    return 1;
}

/* The scalar result metrics engine.train reports, sorted: built by push_metrics itself
 * on an evaluated dummy run, so the list cannot drift from what train returns. */
static int l_metric_names(lua_State *L)
{
    static const char *const not_results[] = {"tokens_per_s", "eval_tokens_per_s", "wall_s",
                                              "resumed_from", "vocab", NULL};
    train_metrics m;
    double zeros[1] = {0};
    memset(&m, 0, sizeof m);
    m.evaluated = 1;
    m.diverged = 1;     /* so diverge_step and diverge_lr are listed */
    m.balanced_acc = 1; /* and the balanced accuracy's */
    m.curve.max_grad_norm_step = m.curve.max_loss_jump_step = 0;
    m.resid_norm = m.pos_loss = zeros;
    m.n_layer = 0;
    m.context = 1;
    push_metrics(L, &m);
    int t = lua_gettop(L), n = 0;
    lua_newtable(L);
    lua_pushnil(L);
    while (lua_next(L, t) != 0) {
        int skip = lua_type(L, -1) != LUA_TNUMBER;
        for (int i = 0; not_results[i] && !skip; i++)
            skip = strcmp(lua_tostring(L, -2), not_results[i]) == 0;
        lua_pop(L, 1);
        if (!skip) {
            lua_pushvalue(L, -1);
            lua_rawseti(L, t + 1, ++n);
        }
    }
    lua_getglobal(L, "table");
    lua_getfield(L, -1, "sort");
    lua_pushvalue(L, t + 1);
    lua_call(L, 1, 0);
    lua_pop(L, 1);
    return 1;
}

/* engine.isa() -> { name = path in use, available = "avx512 avx2 generic", compiled = ... } */
static int l_isa(lua_State *L)
{
    lua_createtable(L, 0, 3);
    lua_pushstring(L, isa_name());
    lua_setfield(L, -2, "name");
    lua_pushstring(L, isa_available());
    lua_setfield(L, -2, "available");
    lua_pushstring(L, isa_compiled());
    lua_setfield(L, -2, "compiled");
    return 1;
}

/* engine.set_isa(name) selects a CPU path for this process (an error names what exists) */
static int l_set_isa(lua_State *L)
{
    char err[256];
    if (isa_select(luaL_checkstring(L, 1), err, sizeof err))
        return luaL_error(L, "%s", err);
    return 0;
}

/* engine.set_threads(n): train_set_threads (engine/train.h) from on_step */
static int l_set_threads(lua_State *L)
{
    lua_Integer n = luaL_checkinteger(L, 1);
    if (n < 1 || n > CONFIG_MAX_THREADS)
        return luaL_argerror(L, 1,
                             lua_pushfstring(L, "threads must be 1..%d", CONFIG_MAX_THREADS));
    train_set_threads((int)n);
    return 0;
}

/* engine.fma_peak(threads, seconds) -> GFLOP/s of the path in use (make bench) */
static int l_fma_peak(lua_State *L)
{
    int threads = (int)luaL_checkinteger(L, 1);
    double seconds = luaL_optnumber(L, 2, 0.5);
    if (threads < 1 || threads > CONFIG_MAX_THREADS)
        return luaL_argerror(L, 1,
                             lua_pushfstring(L, "threads must be 1..%d", CONFIG_MAX_THREADS));
    lua_pushnumber(L, kernels_fma_peak(threads, seconds));
    return 1;
}

/* engine.attention_time(cfg, threads, reps) -> seconds of one attention forward + backward
 * of one layer at cfg's batch, context, d_model and n_head (defaults for absent keys), the
 * best of reps (make bench) */
static int l_attention_time(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    int threads = (int)luaL_checkinteger(L, 2);
    int reps = (int)luaL_optinteger(L, 3, 5);
    luaL_argcheck(L, threads >= 1 && threads <= CONFIG_MAX_THREADS, 2, "threads out of range");
    luaL_argcheck(L, reps >= 1, 3, "reps must be >= 1");
    static const char *const keys[] = {"batch", "context", "d_model", "n_head"};
    gpt_config d;
    config_defaults(&d);
    const int defaults[] = {d.batch, d.context, d.d_model, d.n_head};
    int v[4];
    for (int i = 0; i < 4; i++) {
        lua_getfield(L, 1, keys[i]);
        v[i] = lua_isnil(L, -1) ? defaults[i] : (int)luaL_checkinteger(L, -1);
        lua_pop(L, 1);
        luaL_argcheck(L, v[i] >= 1, 1, keys[i]);
    }
    luaL_argcheck(L, v[2] % v[3] == 0, 1, "d_model must be a multiple of n_head");
    double s = kernels_attention_time(v[0], v[1], v[2], v[3], threads, reps);
    if (s < 0)
        return luaL_error(L, "memory: attention_time could not allocate its buffers");
    lua_pushnumber(L, s);
    return 1;
}

static const luaL_Reg funcs[] = {{"metric_names", l_metric_names},
                                 {"attention_time", l_attention_time},
                                 {"isa", l_isa},
                                 {"set_isa", l_set_isa},
                                 {"fma_peak", l_fma_peak},
                                 {"set_threads", l_set_threads},
                                 {"defaults", l_defaults},
                                 {"keys", l_keys},
                                 {"canonical", l_canonical},
                                 {"effective", l_effective},
                                 {"profile", l_profile},
                                 {"definitions", l_definitions},
                                 {"ngram_ppl", l_ngram_ppl},
                                 {"log_columns", l_log_columns},
                                 {"check", l_check},
                                 {"param_count", l_param_count},
                                 {"param_layout", l_param_layout},
                                 {"train", l_train},
                                 {"score_tasks", l_score_tasks},
                                 {"evaluate", l_evaluate},
                                 {"sample", l_sample},
                                 {"read_model", l_read_model},
                                 {"model_max_bytes", l_model_max_bytes},
                                 {NULL, NULL}};

int luaopen_engine(lua_State *L)
{
    luaL_newlib(L, funcs);
    lua_createtable(L, TRAIN_NSTATUS - 1, 0);
    for (int k = TRAIN_OK + 1; k < TRAIN_NSTATUS; k++) {
        lua_pushstring(L, train_status_name(k));
        lua_rawseti(L, -2, k);
    }
    lua_setfield(L, -2, "error_kinds");
    /* the engine's limits and rules, so Lua never retypes them (like math.pi) */
    lua_pushinteger(L, CONFIG_MAX_THREADS);
    lua_setfield(L, -2, "MAX_THREADS");
    lua_pushinteger(L, DIVERGE_STEPS);
    lua_setfield(L, -2, "DIVERGE_STEPS");
    lua_pushnumber(L, DIVERGE_MARGIN);
    lua_setfield(L, -2, "DIVERGE_MARGIN");
    /* the model's fixed constants (engine/gpt.h), as the float the engine uses */
    lua_pushnumber(L, (lua_Number)GPT_LN_EPS);
    lua_setfield(L, -2, "LN_EPS");
    lua_pushnumber(L, (lua_Number)GPT_RMS_EPS);
    lua_setfield(L, -2, "RMS_EPS");
    lua_pushnumber(L, (lua_Number)GPT_LINEAR_STD);
    lua_setfield(L, -2, "LINEAR_STD");
    return 1;
}
