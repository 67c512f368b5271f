-- The paper's manifest: which studies paper/main.tex discusses, in which order, and which
-- generated tables and figures it shows, with which captions.  `bin/repro report` (make
-- paper) reads it; the library lua/repro/ knows nothing of this paper: this paper's own
-- code is in lib/.  Plain data, loaded with no globals; its fields: M.load_manifest in
-- lua/repro/report/init.lua.  A study in neither `studies` nor `appendix` is not in the
-- paper: opting a study in is one line here.  A table or figure with a caption gets a
-- float in floats.tex, which main.tex places with \PaperTable{name} or \PaperFigure{name}.
local LOSS = "training loss (nats)"
-- Settings the forest plot and the init-parts curves name by what they are rather than by
-- their five init keys (the studies that take PyTorch's initialization apart): matched on
-- the config.
local FOREST_SETTINGS = {
  { config = { tok_init_std = 1, pos_init_std = 1, linear_init = "torch",
    resid_rescale = false, tie_embeddings = true }, label = "PyTorch init" },
  { config = { tok_init_std = 0.02, pos_init_std = 0.02, linear_init = "gpt2",
    resid_rescale = true, tie_embeddings = true }, label = "GPT-2 init" },
}
-- The forest plots' groups: the question each study asks (also the headers of the
-- appendix studies' forest plots).
local QUESTIONS = {
  prelim = "Preliminary protocol",
  final = "Final protocol",
  scale = "Model size",
  init_scale = "Embedding init scale",
  tuned = "Each variant at its best learning rate",
  tuned_controls = "Rescaling vs normalizing",
  tuned_matched = "Normalizing alone, finely tuned",
  tuned_std1 = "Embedding init N(0, 1), each at its best lr",
  horizon = "Training length",
  instability_v1 = "High learning rate, first design",
  claim = "The set-ups closest to the claim's numbers",
  ladder = "Model size, each at its best lr",
  final_devil = "Final protocol, The Devil's Dictionary",
  final_kjv = "Final protocol, King James Bible",
  tuned_devil = "Each at its best lr, The Devil's Dictionary",
  tuned_kjv = "Each at its best lr, King James Bible",
  init_parts = "PyTorch's init taken apart, each at its best lr",
  init_parts_long = "PyTorch's init taken apart, 1,200 steps",
  claim_v1 = "The set-ups closest to the claim, first attempt",
  tasks_pilot = "Task accuracy, the pilot",
  tasks_v2 = "Task accuracy, second suite",
}

return {
  studies = { "prelim", "final", "claim_search", "claim", "lr_sweep_a", "lr_sweep", "tuned",
    "tuned_controls", "lr_fine", "tuned_matched", "horizon", "instability", "scale",
    "init_scale", "lr_sweep_std1", "tuned_std1", "instability_v1", "ladder_sweep", "ladder",
    "final_devil", "final_kjv", "tuned_devil", "tuned_kjv", "tasks", "tasks_v2", "init_parts",
    "init_parts_long", "sequential_claim" },
  -- the first attempt at the claim, superseded; the task study's pilot (its length rule;
  -- its accuracies are in the body) and the corpora's learning-rate sweeps (their best
  -- rates are in the body): a section each in the generated appendix
  appendix = { "claim_search_v1", "claim_v1", "tasks_pilot", "lr_sweep_devil", "lr_sweep_kjv",
    "init_parts_sweep", "init_parts_sweep_edge", "init_parts_long_sweep",
    "init_parts_long_sweep_edge" },
  -- how to read an appendix study's verdicts
  appendix_notes = {
    claim_v1 = [[Both set-ups of this first attempt trained a model stuck at the unigram
      perplexity (Section~\ref{sec:claim}): its ``equivalent'' verdicts say that the norms
      changed nothing in such a model, and nothing about the claim.]],
    tasks_pilot = [[The pilot's verdicts are descriptive and not read for H0 or H1a: its
      baselines beat guessing on at most \TasksPilotMaxBaselineAboveChance{} of the six
      tasks, so an ``equivalent'' here says that models which barely beat guessing score
      alike, not that a norm leaves task accuracy unchanged. The hypotheses are read from
      the task study (Section~\ref{sec:tasks}).]],
  },

  -- what this paper's studies compare: the embedding norm, against none
  factor = {
    key = "embed_norm", baseline = "none",
    labels = { none = "none", layernorm = "LayerNorm", rmsnorm = "RMSNorm",
      scale = "rescaling", layernorm_matched = "matched LayerNorm" },
    names = { none = "no norm", layernorm = "LayerNorm", rmsnorm = "RMSNorm",
      scale = "rescaling", layernorm_matched = "matched LayerNorm" },
    -- colour-blind-safe (Okabe-Ito); point types filled circle, triangle, square
    colors = { none = "#000000", layernorm = "#0072B2", rmsnorm = "#D55E00" },
    points = { none = 7, layernorm = 9, rmsnorm = 5 },
  },

  names = {
    keys = {
      { key = "lr", format = "at peak lr %s", label = "peak lr %s" },
      { key = "init", format = { torch = "with PyTorch's default initialization",
        gpt2 = "with the GPT-2 initialization" },
        label = { torch = "PyTorch init", gpt2 = "GPT-2 init" } },
      { key = "dropout", format = "and dropout %s", label = "dropout %s" },
      { key = "min_lr", format = false },
      { key = "embed_init_std", format = "at embedding init scale $\\sigma_e = %s$",
        label = "embedding init $\\sigma_e$ %s" },
      { key = "n_layer", format = "with %s blocks", label = "%s blocks" },
      { key = "iters", format = "trained %s steps", label = "%s steps" },
      { key = "d_model", format = "of width %s", label = "width %s" },
      { key = "n_head", format = false },
      { key = "warmup", format = "with warmup %s", label = "warmup %s" },
      { key = "tok_init_std", format = "with token embeddings drawn at $\\sigma = %s$",
        label = "token init $\\sigma$ %s" },
      { key = "pos_init_std", format = "with position embeddings drawn at $\\sigma = %s$",
        label = "position init $\\sigma$ %s" },
      { key = "lr_schedule", format = "with a %s learning-rate schedule", label = "%s schedule" },
      { key = "data", format = { ["data/devil.txt"] = "on The Devil's Dictionary",
        ["data/kjv.txt"] = "on the King James Bible",
        ["data/tinyshakespeare.txt"] = "on Tiny Shakespeare" },
        label = { ["data/devil.txt"] = "Devil's Dictionary", ["data/kjv.txt"] = "King James Bible",
          ["data/tinyshakespeare.txt"] = "Tiny Shakespeare" } },
      { key = "tie_embeddings",
        format = { [true] = "with tied embeddings", [false] = "with untied embeddings" } },
      { key = "linear_init", format = { torch = "with PyTorch's Linear initialization",
        gpt2 = "with GPT-2's Linear initialization" },
        label = { torch = "PyTorch Linear init", gpt2 = "GPT-2 Linear init" } },
      { key = "resid_rescale", format = { [true] = "with residual rescaling",
        [false] = "without residual rescaling" },
        label = { [true] = "residual rescaling", [false] = "no residual rescaling" } },
    },
  },
  text_width = 6.5,
  text_height = 9,
  -- this paper's own tables and macros: the claim's Table 1 (lib/tex_claim.lua)
  -- and README's generated Results list (lib/readme.lua: paper/results.md)
  extensions = { "paper/lib/tex_claim.lua", "paper/lib/tex_trends.lua", "paper/lib/readme.lua",
    "paper/lib/findings.lua", "paper/lib/tex_task_notes.lua", "paper/lib/tex_init_parts.lua",
    "paper/lib/tex_main.lua", "paper/lib/h1a.lua", "paper/lib/tex_whatif.lua",
    "paper/lib/tex_stability.lua" },

  tables = {
    { name = "studies", kind = "studies",
      caption = [[The studies: variants, seeds, runs (of which diverged), the pre-registered
        primary metric with its better direction and minimum effect, and the number of
        tests in the study's Holm family.]] },
    { name = "prelim_seeds", kind = "seeds", study = "prelim",
      caption = [[Preliminary protocol (150 iterations), the claim's Table~1 layout: mean $\pm$
        standard deviation over seeds of the runs that did not diverge.]] },
    { name = "final_seeds", kind = "seeds", study = "final",
      caption = [[Final protocol (300 iterations), mean $\pm$ standard deviation over seeds.]] },
    { name = "prelim_paired", kind = "paired", study = "prelim", wide = true,
      caption = [[Paired comparisons, preliminary protocol: mean difference $\Delta$ (treatment
        $-$ baseline), the interval of the decision test (the $t$ interval), $d_z$ with its
        interval, $p$ from the $t$-test and from the exact sign-flip test (with its floor),
        Holm-adjusted $p$ over the study's family (the primary metric only; the other
        metrics are exploratory and unadjusted), minimum detectable effect at \ReportPower{}
        power (on the primary metric at the Holm first-step level) and, on the primary
        metric, the verdict of the pre-registered rule.]] },
    { name = "final_paired", kind = "paired", study = "final", wide = true,
      caption = [[Paired comparisons, final protocol (columns as in
        Table~\ref{tab:prelim_paired}).]] },
    { name = "claim_search_rank", kind = "claim_search", study = "claim_search", top = 5,
      caption = [[Stage A of the claim: the five set-ups (no norm, 150 iterations, mean over
        seeds 1 and 2) closest to the claim's baseline row by the pre-registered distance
        $D$, with each term's $z$: validation perplexity against the claim's spread,
        embedding norm against a 10\,\% tolerance, the balanced accuracy on 150 positions
        against the claim's ``mock macro accuracy'' with its binomial standard deviation,
        and the final gradient norm (25\,\% tolerance, weight $1/4$). Names read
        init--layers--position init (\texttt{p0} zero, \texttt{ps} as the scheme
        draws)--output layer--schedule--dropout.]] },
    { name = "claim_table1", kind = "claim", study = "claim", wide = true,
      caption = [[The claim's Table~1 beside stage B: the claim's values; each set-up of the
        claim study (the two closest admissible set-ups of stage A and the suite's GPT-2
        set-up of the same depth, \texttt{ref}, on fresh seeds); the suite's pinned set-up
        at the claim's protocol; and the corpus's unigram and bigram perplexities. Accuracy
        is the claim's ``mock macro accuracy'' (with its count of correct answers out of
        the samples it implies) and, for the suite, the balanced accuracy (mean per-symbol
        recall) on 150-position subsets of the validation predictions, mean $\pm$ standard
        deviation over seeds and subsets; $D$ is the distance of a row to the claim's
        (Section~\ref{sec:claim}).]] },
    { name = "claim_effects", kind = "claim_effects", study = "claim",
      caption = [[Does the claim's effect on perplexity appear near its set-up? The norms'
        effects on validation perplexity: the student study's (ratio of its mean
        perplexities) and ours at each of three set-ups (mean paired
        difference of log perplexity as a change of perplexity, its interval and the verdict
        of the pre-registered rule).]] },
    { name = "init_parts_components", kind = "init_parts_components", study = "init_parts",
      wide = true,
      caption = [[PyTorch's initialization taken apart (4 blocks, 150 steps, each variant at
        its own best learning rate): per component, LayerNorm's mean effect on validation
        loss (LayerNorm $-$ no norm, nats) over the 8 set-ups of the half fraction with the
        component at PyTorch's value and over the 8 without it, their difference (the
        component $\times$ norm interaction) with its $t$ interval, Holm-adjusted $p$ and
        the verdict of the pre-registered rule, and the same difference on the validation
        loss after 30 and 75 steps (exploratory, no verdict).]] },
    { name = "init_parts_cells", kind = "init_parts_cells", study = "init_parts",
      caption = [[The 16 set-ups of the half fraction (letters: the components at PyTorch's
        value; T token and P position embeddings $N(0, 1)$, L PyTorch's Linear
        initialization, R no residual rescaling, U an untied output layer): each variant's
        peak learning rate from the sweep, mean final validation loss, LayerNorm's mean
        paired effect $\Delta$ and the share of steps whose gradient was clipped.]] },
    { name = "init_parts_long", kind = "init_parts_long", study = "init_parts_long",
      wide = true,
      caption = [[PyTorch's initialization over 1,200 steps, each variant at its own best
        learning rate for that length: LayerNorm's mean effect on validation loss (nats)
        after 30, 75, 150 and 600 steps (exploratory) and at the end with its interval and
        verdict; then each set-up's effect minus the GPT-2 reference's (the interaction).]] },
    { name = "lr_sweep_groups", kind = "lr_sweep", study = "lr_sweep", wide = true,
      caption = [[The learning-rate sweep per variant: the best peak learning rate (the grid
        value with the lowest mean over seeds of the final validation loss clipped at the
        loss at initialization) and that loss, the smallest learning rate at which some seed
        and from which every seed diverged, and the LR sensitivity in two forms, each with
        its bootstrap interval over seeds, alone and as a difference from no norm: $S$
        against the best loss of any variant, and $S_{\text{own}}$ against the variant's
        own best.]] },
    { name = "tuned_seeds", kind = "seeds", study = "tuned",
      caption = [[Each variant at its own best learning rate (the tuned study): mean $\pm$
        standard deviation over its fresh seeds.]] },
    { name = "tuned_paired", kind = "paired", study = "tuned", wide = true,
      caption = [[Paired comparisons at tuned learning rates (columns as in
        Table~\ref{tab:prelim_paired}).]] },
    { name = "tuned_controls_paired", kind = "paired", study = "tuned_controls", wide = true,
      caption = [[The mechanism controls against no norm, each at its own best learning rate
        (columns as in Table~\ref{tab:prelim_paired}).]] },
    { name = "lr_fine_groups", kind = "lr_sweep", study = "lr_fine", wide = true,
      caption = [[The finer learning-rate grid (quarter decades) around the optima of no norm
        and matched LayerNorm, as in Table~\ref{tab:lr_sweep_groups}.]] },
    { name = "tuned_matched_paired", kind = "paired", study = "tuned_matched", wide = true,
      caption = [[Matched LayerNorm against no norm, each at its own best learning rate from the
        finer grid, on fresh seeds\IfStudy{tuned_matched}{, \TunedMatchedNSeeds{} as its
        power rule asked}{} (columns as in Table~\ref{tab:prelim_paired}).]] },
    { name = "horizon_paired", kind = "paired", study = "horizon", wide = true,
      caption = [[LayerNorm against no norm after 1{,}200 iterations, at the untuned and at
        the tuned learning rates (columns as in Table~\ref{tab:prelim_paired}).]] },
    { name = "final_calibration", kind = "calibration", study = "final",
      caption = [[Calibration and class balance at the end of the final protocol (mean $\pm$
        standard deviation over seeds).]] },
    { name = "instability_sweep", kind = "lr_sweep", study = "instability", wide = true,
      caption = [[The instability study's groups (embedding norm and warmup in steps) over its
        grid of peak learning rates, as in Table~\ref{tab:lr_sweep_groups}: the best peak
        learning rate and the clipped loss there, the smallest learning rate at which some
        seed and from which every seed diverged, and the LR sensitivity $S$ with its
        bootstrap interval, alone and as a difference from no norm without warmup.]] },
    { name = "instability_outcomes", kind = "paired", study = "instability",
      section = "sweep_outcomes", wide = true,
      caption = [[The instability study's outcomes, each per seed over a group's grid of
        learning rates, compared between groups at the same warmup (columns as in
        Table~\ref{tab:prelim_paired}): the primary outcome, the mean largest loss jump, with
        the verdict of the pre-registered rule; the others exploratory, each with its own
        pre-registered minimum effect.]] },
    { name = "instability_v1_paired", kind = "paired", study = "instability_v1", wide = true,
      caption = [[Paired comparisons of the first instability study (columns as in
        Table~\ref{tab:prelim_paired}).]] },
    { name = "instability_v1_seeds", kind = "seeds", study = "instability_v1" },
    { name = "instability_v1_interactions", kind = "interactions", study = "instability_v1",
      caption = [[Interactions of the first instability study: does the effect of a norm differ
        between the two learning rates?]] },
    { name = "scale_effect", kind = "setting_effect", study = "scale",
      caption = [[Effect of each embedding norm within each model size on the primary metric, with
        the verdict of the pre-registered rule. A model size L$n$d$w$ has $n$ blocks of width $w$.]] },
    { name = "scale_interactions", kind = "interactions", study = "scale",
      caption = [[Interactions of the scale study: the effect at a smaller size minus the effect
        at the default size.]] },
    { name = "scale_paired", kind = "paired", study = "scale", wide = true,
      caption = [[Paired comparisons of the scale study (columns as in
        Table~\ref{tab:prelim_paired}). A model size L$n$d$w$ has $n$ blocks of width $w$.]] },
    { name = "init_scale_effect", kind = "setting_effect", study = "init_scale",
      caption = [[Effect of each embedding norm at each embedding initialization scale on the
        primary metric.]] },
    { name = "init_scale_interactions", kind = "interactions", study = "init_scale",
      caption = [[Interactions of the init-scale study.]] },
    { name = "init_scale_paired", kind = "paired", study = "init_scale", wide = true,
      caption = [[Paired comparisons of the init-scale study (columns as in
        Table~\ref{tab:prelim_paired}).]] },
    { name = "lr_sweep_std1_groups", kind = "lr_sweep", study = "lr_sweep_std1", wide = true,
      caption = [[The learning-rate sweep of no norm and LayerNorm with embeddings drawn at
        standard deviation 1, as in Table~\ref{tab:lr_sweep_groups}.]] },
    { name = "tuned_std1_paired", kind = "paired", study = "tuned_std1", wide = true,
      caption = [[LayerNorm against no norm with embeddings drawn at standard deviation 1, each
        at its own best learning rate from that sweep, on fresh seeds\IfStudy{tuned_std1}{,
        \TunedStdOneNSeeds{} where its power rule asked for \TunedStdOnePowerNeeded{} (the
        pre-registered minimum)}{}; columns as in Table~\ref{tab:prelim_paired}.]] },
    { name = "ladder_sweep_groups", kind = "lr_sweep", study = "ladder_sweep", wide = true,
      caption = [[The size ladder's learning-rate sweep: no norm and LayerNorm at each model
        size (blocks $\times$ width) over peak learning rates, as in
        Table~\ref{tab:lr_sweep_groups}.]] },
    { name = "ladder_effect", kind = "size_effect", study = "ladder",
      caption = [[The size ladder: LayerNorm against no norm at each model size, each variant
        at its own best peak learning rate from the sweep (lr: LayerNorm's / no norm's), on
        the primary metric, with the verdict of the pre-registered rule.]] },
    { name = "ladder_interactions", kind = "interactions", study = "ladder",
      caption = [[Interactions of the size ladder: LayerNorm's effect at a smaller size minus
        its effect at the largest.]] },
    { name = "ladder_paired", kind = "paired", study = "ladder", wide = true,
      caption = [[Paired comparisons of the size ladder (columns as in
        Table~\ref{tab:prelim_paired}). A model size L$n$d$w$ has $n$ blocks of width $w$.]] },
    { name = "final_devil_paired", kind = "paired", study = "final_devil", wide = true,
      caption = [[The final protocol on The Devil's Dictionary (columns as in
        Table~\ref{tab:prelim_paired}).]] },
    { name = "final_devil_interactions", kind = "interactions", study = "final_devil",
      caption = [[Corpus $\times$ norm: each norm's effect on The Devil's Dictionary minus its
        effect on Tiny Shakespeare.]] },
    { name = "final_kjv_paired", kind = "paired", study = "final_kjv", wide = true,
      caption = [[The final protocol on the King James Bible (columns as in
        Table~\ref{tab:prelim_paired}).]] },
    { name = "final_kjv_interactions", kind = "interactions", study = "final_kjv",
      caption = [[Corpus $\times$ norm: each norm's effect on the King James Bible minus its
        effect on Tiny Shakespeare.]] },
    { name = "tuned_devil_paired", kind = "paired", study = "tuned_devil", wide = true,
      caption = [[The Devil's Dictionary with each variant at its own best learning rate
        (columns as in Table~\ref{tab:prelim_paired}).]] },
    { name = "tuned_kjv_paired", kind = "paired", study = "tuned_kjv", wide = true,
      caption = [[The King James Bible with each variant at its own best learning rate
        (columns as in Table~\ref{tab:prelim_paired}).]] },
    { name = "tasks_pilot_accuracy", kind = "task_accuracy", study = "tasks_pilot", wide = true,
      caption = [[The task pilot: zero-shot accuracy per task of each set-up, length and
        variant, beside the controls.]] },
    { name = "tasks_accuracy", kind = "task_accuracy", study = "tasks", wide = true,
      caption = [[Do the trained models beat the controls on each task? Zero-shot accuracy per
        task and variant, beside the controls.]] },
    { name = "tasks_comparisons", kind = "task_comparisons", study = "tasks", wide = true,
      caption = [[The task study's comparisons per task (zero-shot), with the macro
        difference and the item-level test.]] },
    { name = "tasks_v2_accuracy_ts", kind = "task_accuracy", study = "tasks_v2", wide = true,
      corpus = "tinyshakespeare", variants = { "ts-none", "ts-layernorm", "ts-rmsnorm",
        "L8d256-none", "L8d256-layernorm" },
      caption = [[Do the trained models beat the controls on the second suite? Zero-shot
        accuracy per task on Tiny Shakespeare, \TasksVTwoNSeeds{} seeds, width 128 at the rate the \LrSweepIters-step
        sweep found best (\num{1200} steps) and the size ladder's largest model at its
        ladder rate (300 steps), beside the controls.]] },
    { name = "tasks_v2_accuracy_kjv", kind = "task_accuracy", study = "tasks_v2", wide = true,
      corpus = "kjv", variants = { "kjv-none", "kjv-layernorm", "kjv-rmsnorm" },
      caption = [[As the main text's Table~\MainTableTasksVTwoAccuracyTs, on the King James Bible.]] },
    { name = "tasks_v2_comparisons", kind = "task_comparisons", study = "tasks_v2", wide = true,
      caption = [[Does a norm change accuracy on the second suite? Its comparisons per task
        (zero-shot), with the macro difference and the item-level test.]] },
    { name = "tasks_v2_h1a", kind = "h1a", study = "tasks_v2",
      caption = [[H1a's three registered parts, per norm, across the second task suite's
        runs: lower accuracy, a deficit beyond what the validation loss predicts, and
        smoother training as registered, a smaller largest loss jump or gradient norm over
        the whole run (Table~\ref{tab:stability_after_warmup} gives both after warmup).]] },
    { name = "stability_after_warmup", kind = "stability",
      caption = [[What did ``smoother'' measure? Each norm's effect on the largest jump of the
        training loss above its best loss so far, on the largest pre-clip gradient norm and on
        the gradient norm's variation (its standard deviation over its mean), over the whole
        run (the registered measures) and from the end of warmup on (exploratory; without
        warmup, from step \InstabilityAfterFrom). Task study: the second suite's
        \TasksVTwoNRuns{} runs (\TasksVTwoNSeeds{} seeds per variant and set-up, at the rates
        the learning-rate sweeps found best), least-squares fits across runs with one intercept per
        set-up, gradient norms as factors, intervals at $\alpha/2$ (whole run) and
        $\alpha/3$ (after warmup), Bonferroni. Stability study: the default model,
        \InstabilityIters{} steps, \InstabilityNSeeds{} seeds, without warmup and with
        \InstabilityCfgWarmupMax{} warmup steps; per seed, the registered outcomes average
        over the peak rates \InstabilityCfgLrMin{} to \InstabilityCfgLrMax{} (gradient norms
        geometrically), the after-warmup ones over the rates at which no run diverged
        (\InstabilityAfterGridMin{} to \InstabilityAfterGridMax); differences with their
        95\,\% paired $t$ intervals.]] },
    { name = "sequential_claim_looks", kind = "sequential", study = "sequential_claim",
      caption = [[The sequential study, look by look: the seeds per variant, LayerNorm's
        effect on validation loss (its Hodges--Lehmann estimate, LayerNorm $-$ no norm,
        nats) with its repeated confidence interval and that interval's level, the
        standardized signed-rank statistic against its boundary, and the decision.]] },
    { name = "whatif", kind = "whatif",
      caption = [[What if the confirmatory studies had looked at their seeds as they came?
        Each study's primary comparisons replayed, on the seeds it ran and in their order,
        through one sequential design declared now (no study registered it): the pairs of
        its comparisons, its family size $m$, the runs of the compared variants its fixed
        design trained and those the sequential design would have needed, the verdicts the
        sequential design would reach, and how many agree with the fixed design's.]] },
    { name = "compute", kind = "compute", wide = true,
      caption = [[What each study trained: its runs, how many have a config no earlier row has
        (an identical config is trained once and its record copied), iterations, training
        tokens, the core-hours its run records carry, the engine's code path and threads;
        the last row counts every distinct run once.]] },
    { name = "prereg", kind = "prereg", wide = true,
      caption = [[Pre-registration: for each study, the commit that added its file (which
        fixes its variants, seeds, metric, minimum effect and decision rule) with its date,
        the start of its first run record, and the commits that changed the file after
        that run (any change, a comment's included); a study committed or changed after
        its first run is flagged.]] },
    { name = "checklist", kind = "checklist", wide = true,
      caption = [[The ML Reproducibility Checklist's experimental items, answered from the run
        records.]] },
  },

  figures = {
    { name = "prelim_loss", kind = "curves", study = "prelim", column = "loss", ylabel = LOSS },
    { name = "final_loss", kind = "curves", study = "final", column = "loss", ylabel = LOSS,
      width = "0.8\\linewidth",
      caption = [[Training loss of the final protocol: mean over seeds (line) and the range from
        the lowest to the highest seed (band).]] },
    { name = "prelim_valend", kind = "valend", study = "prelim",
      width = "0.6\\linewidth",
      caption = [[Validation loss at the end of the preliminary protocol: one point per seed, and
        the mean with one standard deviation.]] },
    { name = "final_valend", kind = "valend", study = "final",
      width = "0.6\\linewidth",
      caption = [[Validation loss at the end of the final protocol, as in
        Figure~\ref{fig:prelim_valend}.]] },
    { name = "final_gradnorm", kind = "curves", study = "final",
      column = "grad_norm", ylabel = "gradient norm before clipping", logy = true,
      width = "0.8\\linewidth",
      caption = [[Global gradient norm before clipping over training, final protocol (mean and
        range over seeds; logarithmic axis).]] },
    { name = "final_embednorm", kind = "curves", study = "final",
      column = "embed_norm", ylabel = "embedding norm (mean over positions)", logy = true,
      width = "0.8\\linewidth",
      caption = [[Norm of the embedding output over training, final protocol (mean and range over
        seeds; logarithmic axis).]] },
    -- the forest of effects on validation loss, one figure per question (a panel of more
    -- than about 15 rows cannot be read at print size)
    { name = "forest_protocols", kind = "forest", metric = "val_loss", labels = QUESTIONS,
      settings = FOREST_SETTINGS, width = "0.9\\linewidth",
      studies = { "prelim", "final", "claim" },
      caption = [[Does the norm change validation loss at the claim's protocols and at the
        set-ups closest to the claim's numbers?  Each comparison's mean difference in
        validation loss (norm $-$ no norm, nats) with its interval (blue), the band of
        $\pm$ the study's minimum effect (grey) and $\pm$ the design's minimum detectable
        effect (orange diamonds), grouped by study.  A set of runs is shown once: a study
        that reuses another's runs names them in its group's header instead.]] },
    { name = "forest_tuned", kind = "forest", metric = "val_loss", labels = QUESTIONS,
      settings = FOREST_SETTINGS, width = "0.9\\linewidth",
      studies = { "tuned", "tuned_controls", "tuned_matched", "tuned_std1", "horizon" },
      caption = [[Does the norm change validation loss when each variant trains at its own
        best learning rate, and when it trains longer?  As in
        Figure~\ref{fig:forest_protocols}.]] },
    { name = "forest_init", kind = "forest", metric = "val_loss", labels = QUESTIONS,
      settings = FOREST_SETTINGS, width = "0.9\\linewidth",
      studies = { "init_scale", "init_parts", "init_parts_long" },
      caption = [[Does the embedding's initialization change what the norm does?  As in
        Figure~\ref{fig:forest_protocols}.]] },
    { name = "forest_size", kind = "forest", metric = "val_loss", labels = QUESTIONS,
      settings = FOREST_SETTINGS, width = "0.9\\linewidth",
      studies = { "scale", "ladder" },
      caption = [[Does the norm's effect change with the model's size?  As in
        Figure~\ref{fig:forest_protocols}.]] },
    { name = "forest_corpora", kind = "forest", metric = "val_loss", labels = QUESTIONS,
      settings = FOREST_SETTINGS, width = "0.9\\linewidth",
      studies = { "final_devil", "final_kjv", "tuned_devil", "tuned_kjv" },
      caption = [[Does the norm's effect hold on other corpora?  As in
        Figure~\ref{fig:forest_protocols}.]] },
    { name = "lr_sweep_loss", kind = "lrsweep", study = "lr_sweep",
      width = "0.9\\linewidth",
      caption = [[Does each norm have its own best learning rate? The default model (GPT-2's
        initialization, 8 blocks, \LrSweepIters{} steps), \LrSweepNSeeds{} seeds per rate:
        final validation loss against the peak learning rate (logarithmic axis) per
        embedding treatment, each in its own colour and mark, the mean over seeds (line)
        with the range from the lowest to the highest seed (bar, not an interval) of the
        runs that did not diverge; the treatment's mark on a row above the curves shows a
        learning rate at which some seed diverged.]] },
    { name = "instability_lr", kind = "lrsweep", study = "instability",
      width = "0.9\\linewidth",
      caption = [[Does the norm let a model train at higher learning rates? The stability
        study (the default model, \InstabilityIters{} steps, \InstabilityNSeeds{} seeds per
        rate): final validation loss against the peak learning rate by embedding norm
        (colour and mark) and warmup in steps (line style: solid without, dashed with),
        mean and range over seeds, as in Figure~\ref{fig:lr_sweep_loss}. Its registered
        outcome, the largest loss jump, is in Table~\ref{tab:stability_after_warmup}.]] },
    { name = "forest_n_spikes", kind = "forest", metric = "n_spikes", labels = QUESTIONS,
      width = "0.9\\linewidth",
      caption = [[Does the norm change the number of loss spikes at a high learning rate?
        As in Figure~\ref{fig:forest_protocols}, on the number of spikes.]] },
    { name = "scale_effect", kind = "effect", study = "scale",
      width = "0.7\\linewidth",
      caption = [[Effect on the primary metric against the number of parameters, with its
        interval; the grey band is $\pm$ the minimum effect and the grey line zero.]] },
    { name = "ladder_effect", kind = "effect", study = "ladder",
      width = "0.7\\linewidth",
      caption = [[Does the cost of LayerNorm shrink or grow with model size? The size ladder
        (\LadderIters{} steps, tokens matched, \LadderNSeeds{} seeds per size): LayerNorm's
        effect on the validation loss (LayerNorm $-$ no norm, nats) against the number of
        parameters, each variant at its own best learning rate per size, with its 95\,\%
        paired $t$ interval; the grey band is $\pm$ the minimum effect and the grey line
        zero.]] },
    { name = "tasks_accuracy", kind = "tasks", study = "tasks", width = "0.9\\linewidth",
      setups = { gpt2 = "GPT-2 init", torch = "PyTorch init, 4 blocks",
        tuned = "GPT-2 init, own best lr" },
      caption = [[Does the norm change accuracy on the tasks? Zero-shot accuracy per task and
        variant: the mean over seeds with a bar of one
        standard deviation; per task its chance rate (star), the corpus's bigram model
        (open circle) and the strongest $n$-gram model of the training split (triangle), the control a task must beat to show more than local statistics.]] },
    { name = "init_scale_valcurves", kind = "curves", study = "init_scale",
      column = "d_val_loss", ylabel = "validation loss (nats)", logy = true, zoom = 0.5,
      width = "0.9\\linewidth",
      caption = [[Does the sign of the effect follow the initialization? The default model at
        the shared learning rate, \InitScaleNSeeds{} seeds: validation loss over training by
        embedding initialization scale (line style: solid for a standard deviation of 0.02,
        dashed for 1) and variant (colour and mark, each curve's marks at its own steps), the
        mean over seeds with the band from the lowest to the highest seed (not an
        interval): the whole run on a logarithmic axis (left) and its second half on a
        linear axis (right).]] },
    { name = "horizon_valcurves", kind = "curves", study = "horizon",
      column = "d_val_loss", ylabel = "validation loss (nats)", zoom = 0.5,
      width = "0.9\\linewidth",
      caption = [[Validation loss over the long training run by variant (colour) and peak
        learning rate (line style: the default, or each variant's best from the sweep), mean
        and range over seeds: the whole run (left) and its second half (right).]] },
    { name = "init_parts_long_valcurves", kind = "curves", study = "init_parts_long",
      column = "d_val_loss", ylabel = "validation loss (nats)", logy = true, zoom = 0.5,
      settings = FOREST_SETTINGS, width = "0.9\\linewidth",
      caption = [[Validation loss over 1,200 steps at the set-ups of the longer horizon
        (PyTorch's bundle and the GPT-2 reference, and a third only where the pre-registered
        rule chose a component), by variant (colour), mean and range over
        seeds: the whole run on a logarithmic axis (left) and its second half (right).]] },
    { name = "sequential_claim_path", kind = "sequential", study = "sequential_claim",
      width = "0.8\\linewidth",
      caption = [[Does LayerNorm change validation loss at the claim's closest set-up, seed
        by seed? The sequential study's path: LayerNorm's effect on validation loss (its
        Hodges--Lehmann estimate, LayerNorm $-$ no norm, nats) at each look with its
        repeated confidence interval, against the seeds per variant; the look where it
        stopped is ringed, the grey band is $\pm$ the equivalence margin, the grey line zero
        and the dashed line the claim's effect.]] },
    { name = "final_reliability", kind = "reliability", study = "final",
      width = "0.55\\linewidth",
      caption = [[Reliability diagram of the final protocol, bins of all seeds pooled.]] },
    { name = "final_classnorm", kind = "classnorm", study = "final",
      column = "d_embed_norm_%s",
      width = "0.9\\linewidth",
      caption = [[Embedding norm by character class of the input over training (periodic
        diagnostics of the final protocol; mean and range over seeds; logarithmic axis).]] },
    { name = "final_resid", kind = "array", study = "final", key = "resid_norm", script = "resid",
      width = "0.7\\linewidth",
      caption = [[Residual-stream norm by depth at the end of the final protocol (mean over seeds
        with the range; logarithmic axis).]] },
    { name = "final_position", kind = "array", study = "final",
      key = "loss_by_position", script = "position",
      width = "0.7\\linewidth",
      caption = [[Validation loss by position in the context window at the end of the final
        protocol (mean over seeds).]] },
  },
}
