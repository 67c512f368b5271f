-- The tables and numbers of a task study (summary.tasks, lua/repro/analysis/tasks.lua):
--   task_accuracy     at one shot count (field `shots`, default 0): a column per task and
--                     the macro accuracy; the controls, then each variant's mean +- sd
--   task_comparisons  at one shot count: a row per comparison, each task's paired
--                     difference with its Holm p, and the macro difference
-- A k-shot number whose items mostly lost their demonstrations to the window reads "n.m."
-- (not measurable).  numbers.tex gets \<Study>TasksN, the above-chance counts, each task's
-- chance, bigram and item numbers and each comparison's macro and item-level results.
local F = require "repro.report.texfmt"
local tasks = require "repro.tasks"
local base = require "repro.core.base"
local tbl = require "repro.report.table"

local M = {}
local DASH = F.DASH
local ACC_DEC = 3
local NM = "n.m."

-- what: what the summary lacks (default its task accuracies)
function M.absent(s, what)
  return F.of_study(s, F.unavailable("the " .. F.escape(s.name) .. " study has no " ..
    (what or "task accuracies")))
end

-- The tasks of the summary's per-task entries at shot count k, in their order.
function M.tasks_at(st, k)
  local names, seen = {}, {}
  for _, e in ipairs(st.per_task or {}) do
    if e.shots == k and not seen[e.task] then names[#names + 1], seen[e.task] = e.task, true end
  end
  return names
end

-- The suite's task names at shot count k: M.tasks_at's, else (no entry at k) the tasks
-- with controls, by name.
local function task_names(st, k)
  local names = M.tasks_at(st, k)
  return #names > 0 and names or base.sorted_keys(st.chance or {})
end

-- A task's controls (summary.tasks.chance), {} without them.
local function controls(st, task)
  return (st.chance or {})[task] or {}
end

local function acc(x) return F.num(x, ACC_DEC) end

-- A variant's mean accuracy on a task at shot count k; nil when it is not finite.
local function mean_acc(s, v, task, k)
  local m = s:stat(v, string.format("task_%s_%dshot_acc", task, k))
  return m and F.finite(m.mean) and m.mean or nil
end

-- Whether a variant's mean accuracy on a task lies above its guessing interval.
local function above(s, v, task, k, st)
  local mean, hi = mean_acc(s, v, task, k), controls(st, task).hi
  return mean and F.finite(hi) and mean > hi
end

-- Whether the k-shot accuracy of a task is measurable at the study's window (summary.tasks
-- .demos: enough items kept all k demonstrations); task nil: every task of the suite.
function M.measurable(st, k, task)
  for _, d in ipairs(st.demos or {}) do
    if d.shots == k and (task == nil or d.task == task) and not d.measurable then
      return false
    end
  end
  return true
end

local measurable = M.measurable

-- The tasks the macro column averages, and those the suite skipped on the corpus.
local function macro_note(st)
  local m = st.macro_over
  if not m then return "" end
  local skipped = {}
  for _, x in ipairs(m.skipped or {}) do skipped[#skipped + 1] = F.escape(x.task) end
  return string.format(" Macro: the mean over %d tasks%s.", m.n, #skipped == 0 and "" or
    string.format(" (%s skipped on this corpus: too few items)", table.concat(skipped, ", ")))
end

local function demos_note(st, k)
  if measurable(st, k) then return "" end
  local cut = {}
  for _, d in ipairs(st.demos or {}) do
    if d.shots == k and not d.measurable then
      cut[#cut + 1] = string.format("%s %s\\,\\%%", F.escape(d.task),
        F.num(100 * d.kept_share, 0))
    end
  end
  return string.format(" %s: not measurable at this window: fewer than 90\\,\\%% of the " ..
    "items kept all %d demonstrations inside it (%s kept), so the number would be the " ..
    "0-shot one with a shorter context.", NM, k, table.concat(cut, ", "))
end

-- Whether a variant's mean accuracy on a task lies above the task's strongest n-gram
-- (0-shot: the summary's beyond_ngram); nil without the ladder.
function M.beyond(st, v, task)
  local b = (st.beyond_ngram or {})[task]
  if not b then return nil end
  for _, name in ipairs(b.variants or {}) do if name == v then return true end end
  return false
end

-- Of how many tasks of the summary's suite a variant's mean accuracy at shot count k lies
-- above the guessing interval.
function M.above_count(s, v, k)
  local st, n = s.summary.tasks or {}, 0
  for _, t in ipairs(task_names(st, k)) do
    if above(s, v, t, k, st) then n = n + 1 end
  end
  return n
end

-- A table (table.lua's model) with a column per task between the first column's head and
-- `tail`'s.  first_col: the first column's type (default "l"; a comparison's long label
-- wraps in a paragraph column, so that the table keeps a readable size,
-- paper/printsize.tex).
local function open_table(first, names, tail, first_col)
  local head = { first }
  for _, t in ipairs(names) do head[#head + 1] = F.escape(t) end
  for _, h in ipairs(tail) do head[#head + 1] = h end
  return { align = (first_col or "l") .. string.rep("r", #head - 1), head = head, rows = {} }
end

-- A study on several corpora (summary.tasks.chance_by_corpus): the view of one corpus, its
-- controls and macro's tasks as the summary's own, and the entry's variants (f.corpus,
-- f.variants); nil and a reason when the summary has no such corpus or variant.
local function corpus_view(s, st, f)
  if not f or not f.corpus then return st, s.variants end
  local chance = (st.chance_by_corpus or {})[f.corpus]
  if not chance then
    return nil, string.format("the %s study has no task controls for the corpus %s",
      s.name, f.corpus)
  end
  local view = setmetatable({ chance = chance,
    macro_over = (st.macro_over_by_corpus or {})[f.corpus] }, { __index = st })
  local want, variants = base.set_of(f.variants or {}), {}
  for _, v in ipairs(s.variants) do
    if want[v.name] then variants[#variants + 1] = v end
  end
  if #variants == 0 then
    return nil, string.format("the %s study has none of the variants of the %s table",
      s.name, f.corpus)
  end
  return view, variants
end

function M.accuracy_table(s, _, f)
  local st, k = s.summary.tasks, (f and f.shots) or 0
  if type(st) ~= "table" then return M.absent(s) end
  local variants
  st, variants = corpus_view(s, st, f)
  if not st then error("report: " .. variants, 0) end
  local names = task_names(st, k)
  local tab = open_table("", names, { "Macro" })
  -- the macro column: the mean over the tasks (none for the guessing limit, which is
  -- each task's own)
  local function control_row(label, value_of, no_macro)
    local cells, sum, n = { label }, 0, 0
    for _, t in ipairs(names) do
      local x = value_of(controls(st, t))
      cells[#cells + 1] = acc(x)
      if F.finite(x) then sum, n = sum + x, n + 1 end
    end
    cells[#cells + 1] = (n == #names and not no_macro) and acc(sum / n) or DASH
    tab.rows[#tab.rows + 1] = cells
  end
  control_row("chance", function(c) return c.rate end)
  control_row("guessing, 99\\,\\% upper limit", function(c) return c.hi end, true)
  control_row("bigram model", function(c) return c.bigram_acc end)
  local orders, setups = {}, {}
  for _, t in ipairs(names) do
    for _, g in ipairs(controls(st, t).ngram or {}) do orders[g.order] = true end
    for name in pairs(controls(st, t).untrained or {}) do setups[name] = true end
  end
  orders = base.sorted_keys(orders)
  for _, order in ipairs(orders) do
    control_row(string.format("%d-gram (Witten-Bell)", order), function(c)
      for _, g in ipairs(c.ngram or {}) do if g.order == order then return g.acc end end
    end)
  end
  for _, c in ipairs(tasks.CONTROL_SETUPS) do
    if setups[c.name] then
      control_row("untrained, " .. F.escape(c.label), function(x)
        return (x.untrained or {})[c.name] end)
    end
  end
  tab.rows[#tab.rows + 1] = { rule = true }
  local starred = false
  for _, v in ipairs(variants) do
    local cells = { v.tex_label or F.escape(v.label) }
    for _, t in ipairs(names) do
      local cell = acc(mean_acc(s, v.name, t, k))
      if above(s, v.name, t, k, st) then cell = cell .. "$^{+}$" end
      if not measurable(st, k, t) then cell = NM end
      if k == 0 and M.beyond(st, v.name, t) then
        cell, starred = cell .. "$^{*}$", true
      end
      cells[#cells + 1] = cell
    end
    local m = s:stat(v.name, string.format("task_macro_acc_%dshot", k))
    cells[#cells + 1] = not measurable(st, k) and NM or m and F.finite(m.mean) and
      (acc(m.mean) .. " $\\pm$ " .. acc(m.sd)) or DASH
    tab.rows[#tab.rows + 1] = cells
  end
  local note = string.format("\\par\\smallskip\\footnotesize %d-shot accuracy, the mean " ..
    "over %d seeds (the macro column: mean $\\pm$ sd). $^{+}$: above the 99\\,\\%% interval " ..
    "of a model that guesses. The bigram model is the training split's character bigram " ..
    "model; the untrained models are the set-ups at initialization (seed %d).%s%s%s", k,
    #s.seeds, tasks.CONTROL_SEED, #orders > 0 and (" The $n$-gram rows are Witten-Bell " ..
      "models of the training split scoring the same sequences. $^{*}$: above both the " ..
      "strongest $n$-gram and the guessing interval (0-shot); only there is a task " ..
      "evidence of more than local statistics." ..
      (k == 0 and not starred and " No cell of this table is." or "")) or "",
    demos_note(st, k), macro_note(st))
  return F.of_study(s, tbl.tabular(tab, { fit = true }) .. note .. "\n")
end

-- The last entry of list at shot count k for comparison c (and on `task`, when given).
local function entry_of(list, k, c, task)
  local found
  for _, e in ipairs(list or {}) do
    if e.shots == k and e.treatment == c.treatment and e.baseline == c.baseline and
        (task == nil or e.task == task) then
      found = e
    end
  end
  return found
end

-- A macro entry's difference and its bootstrap interval (BCa, else percentile).
local function macro_diff(e)
  local ci = e.ci_bca or e.ci_percentile
  local dec = math.max(ACC_DEC, F.diff_decimals(e.metric, e.mean, ci))
  return F.num(e.mean, dec), F.interval(ci, dec)
end

function M.comparisons_table(s, _, f)
  local st, k = s.summary.tasks, (f and f.shots) or 0
  if type(st) ~= "table" then return M.absent(s) end
  local names = task_names(st, k)
  local tab = open_table("Comparison", names, { "Macro [BCa CI]", "Items $p$" },
    ">{\\raggedright\\arraybackslash}p{10em}")
  local holm_m
  for _, c in ipairs(s:comparisons(s.primary)) do
    local cells = { s:comparison_label(c.treatment, c.baseline) }
    for _, t in ipairs(names) do
      local e = entry_of(st.per_task, k, c, t)
      if e then holm_m = e.holm_m end
      cells[#cells + 1] = not e and DASH or not measurable(st, k, t) and NM or
        string.format("%s (%s)", acc(e.mean), F.p(e.p_holm))
    end
    local macro, items = entry_of(st.macro, k, c), entry_of(st.items, k, c, "all")
    local macro_cell = DASH
    if macro then
      local delta, ci = macro_diff(macro)
      macro_cell = measurable(st, k) and (delta .. " " .. ci) or NM
    end
    cells[#cells + 1] = macro_cell
    cells[#cells + 1] = items and F.p(items.p_signflip) or DASH
    tab.rows[#tab.rows + 1] = cells
  end
  local note = string.format("\\par\\smallskip\\footnotesize %d-shot accuracy, treatment " ..
    "minus baseline, paired by seed; in parentheses the Holm-adjusted $p$ over the %s " ..
    "tests of tasks $\\times$ comparisons. Macro: the paired bootstrap (BCa) 95\\,\\%% " ..
    "interval. Items $p$: the item-level sign-flip test over all items, each item's " ..
    "accuracy pooled over the paired seeds.%s", k,
    holm_m and string.format("%d", holm_m) or DASH, demos_note(st, k))
  return F.of_study(s, tbl.tabular(tab, { fit = true }) .. note .. "\n")
end

M.tables = {
  task_accuracy = { build = M.accuracy_table, fields = { shots = "number?", corpus = "string?",
    variants = "table?" }, records = true },
  task_comparisons = { build = M.comparisons_table, fields = { shots = "number?" } },
}

-- numbers.tex's task macros of a study with a task section (see the header).
function M.numbers(def, s, S)
  local st = s.summary.tasks
  if type(st) ~= "table" then return end
  local names = task_names(st, 0)
  def(S .. "TasksN", string.format("%d", #names))
  local inside, count = 0, 0
  for _, t in ipairs(names) do
    local c = controls(st, t)
    local T = S .. F.macro(t)
    def(T .. "Chance", acc(c.rate))
    def(T .. "ChanceHi", acc(c.hi))
    def(T .. "Bigram", acc(c.bigram_acc))
    if c.ngram_best then
      def(T .. "NgramBest", acc(c.ngram_best.acc))
      def(T .. "NgramBestOrder", string.format("%d", c.ngram_best.order))
    end
    def(T .. "Items", F.finite(c.n_items) and string.format("\\num{%d}", c.n_items) or DASH)
    for _, u in pairs(c.untrained or {}) do
      count = count + 1
      if F.finite(u) and u >= c.lo and u <= c.hi then inside = inside + 1 end
    end
  end
  def(S .. "UntrainedInside", string.format("%d", inside))
  def(S .. "UntrainedCount", string.format("%d", count))
  local most, beaten = 0, {}
  for _, v in ipairs(s.variants) do
    local n = 0
    for _, t in ipairs(names) do
      if above(s, v.name, t, 0, st) then
        n = n + 1
        if v.level == s.factor.baseline then beaten[t] = true end
      end
    end
    def(S .. F.macro(v.name) .. "AboveChance", string.format("%d", n))
    if v.level == s.factor.baseline then most = math.max(most, n) end
  end
  def(S .. "MaxBaselineAboveChance", string.format("%d", most))
  -- per baseline variant, the tasks on which the corpus's bigram model scores at least the
  -- variant's mean zero-shot accuracy: there the task shows nothing beyond local character
  -- statistics (S..<Variant>.."BigramAtLeast", "none" when there is none, and ..."N")
  for _, v in ipairs(s.variants) do
    if v.level == s.factor.baseline then
      local at = {}
      for _, t in ipairs(names) do
        local bigram, mean = controls(st, t).bigram_acc, mean_acc(s, v.name, t, 0)
        if F.finite(bigram) and mean and bigram >= mean then at[#at + 1] = F.escape(t) end
      end
      local V = S .. F.macro(v.name)
      def(V .. "BigramAtLeast", #at == 0 and "none" or F.list(at))
      def(V .. "BigramAtLeastN", string.format("%d", #at))
    end
  end
  local list = {}
  for _, t in ipairs(names) do if beaten[t] then list[#list + 1] = F.escape(t) end end
  def(S .. "BaselineAboveTasks", #list == 0 and "none" or F.list(list))
  for _, e in ipairs(st.macro or {}) do
    if e.shots == 0 then
      local C = S .. F.macro(e.treatment) .. "Vs" .. F.macro(e.baseline)
      local delta, ci = macro_diff(e)
      def(C .. "MacroZeroShotDelta", delta)
      def(C .. "MacroZeroShotCI", ci)
    end
  end
  for _, e in ipairs(st.items or {}) do
    if e.shots == 0 and e.task == "all" then
      def(S .. F.macro(e.treatment) .. "Vs" .. F.macro(e.baseline) .. "ItemsP",
        F.p(e.p_signflip))
    end
  end
end

return M
