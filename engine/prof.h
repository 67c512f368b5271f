/* A profile of the training step by kind of work, for `make bench` only (tests/bench/
 * profile.lua through engine.profile).  Off unless prof_enable(1): then the main thread
 * reads the monotonic clock around each kind's calls in gpt.c, between parallel regions.
 * It never touches the arithmetic, so no result depends on it, and timings go to the
 * bench's output only, never into a record. */
#ifndef PROF_H
#define PROF_H

enum {
    PROF_EMBED,      /* token + position sum, the embedding norm, the scatter into wte/wpe */
    /* the linear layers by site, forward (bias fused; GELU fused in fc's) and backward
     * (input and weight gradients and the bias's column sums; GELU's fused in fc2's) */
    PROF_QKV_FWD,
    PROF_PROJ_FWD,
    PROF_FC_FWD,
    PROF_FC2_FWD,
    PROF_LOGITS_FWD,
    PROF_QKV_BWD,
    PROF_PROJ_BWD,
    PROF_FC_BWD,
    PROF_FC2_BWD,
    PROF_LOGITS_BWD,
    PROF_ATTN_FWD,   /* attention scores, softmax and weighted values */
    PROF_ATTN_BWD,
    PROF_NORM,       /* the blocks' LayerNorms and residual adds, both directions */
    PROF_XENT,       /* softmax cross-entropy and dlogits */
    PROF_OPTIM,      /* AdamW */
    PROF_N
};

extern int prof_on;

double prof_clock(void);
void prof_add(int kind, double t0);
/* on: 1 starts (and zeroes) the profile, 0 stops it */
void prof_enable(int on);
/* seconds per kind since prof_enable(1) */
void prof_read(double out[PROF_N]);
const char *prof_name(int kind);

#define PROF_BEGIN(v) double v = prof_on ? prof_clock() : 0.0
#define PROF_END(kind, v)                                                                  \
    do {                                                                                   \
        if (prof_on)                                                                       \
            prof_add(kind, v);                                                             \
    } while (0)

#endif
