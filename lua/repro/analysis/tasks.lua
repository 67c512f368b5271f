-- The task analysis (summary.tasks) of a study whose analysis pre-registers `tasks =
-- { suite =, shots = { ... } }` and whose runs score that suite (config key tasks).
-- Its sections: macro (paired macro-accuracy differences), per_task (Holm over tasks x
-- comparisons per shot count), items (the item-level sign flip), chance, macro_over,
-- chance_by_corpus, beyond_ngram and demos (a k-shot accuracy is measurable only when
-- kept_share >= DEMOS_KEPT_MIN); the statistics: docs/DESIGN.md, "Statistics and the
-- decision rule" (Tasks).  Only a study that registered analysis.tasks gets the section,
-- so every other summary keeps its bytes.
local stats = require "stats"
local json = require "repro.core.json"
local tasks = require "repro.tasks"
local host = require "repro.host"
local fs = require "repro.core.fs"
local compare = require "repro.analysis.compare"

local M = {}
M.DEMOS_KEPT_MIN = 0.9

-- The seeds where both tv's and bv's runs are present and not diverged, in seed order.
local function paired_seeds(ctx, tv, bv)
  local out = {}
  for _, seed in ipairs(ctx.s.seeds) do
    local a, b = ctx.runs[bv][seed], ctx.runs[tv][seed]
    if a and b and not a.diverged and not b.diverged then out[#out + 1] = seed end
  end
  return out
end

local function values(ctx, v, seeds, metric)
  local out = {}
  for _, seed in ipairs(seeds) do
    local x = ctx.runs[v][seed].values[metric]
    if x == nil then return nil end
    out[#out + 1] = x
  end
  return out
end


-- Per-item accuracy of variant v pooled over seeds, for the item lists of keys.
local function pooled(ctx, v, seeds, keys)
  local out = {}
  for _, key in ipairs(keys) do
    local sum = nil
    for _, seed in ipairs(seeds) do
      local items = ctx.runs[v][seed].task_items and ctx.runs[v][seed].task_items[key]
      if not items then return nil end
      sum = sum or {}
      for i, c in ipairs(items) do sum[i] = (sum[i] or 0) + c end
    end
    for _, x in ipairs(sum or {}) do out[#out + 1] = x / #seeds end
  end
  return out
end

-- The ci_t of a stats.paired result as the summary stores it (two nulls when undefined).
local function ci_t(r)
  return json.array({ r.ci_t and r.ci_t[1], r.ci_t and r.ci_t[2] })
end

local function item_test(ctx, tv, bv, seeds, keys)
  local a, b = pooled(ctx, bv, seeds, keys), pooled(ctx, tv, seeds, keys)
  if not a or not b or #a ~= #b or #a < 2 then return nil end
  local better, worse = 0, 0
  for i = 1, #a do
    if b[i] > a[i] then better = better + 1 elseif b[i] < a[i] then worse = worse + 1 end
  end
  local r = stats.paired(a, b, { alpha = ctx.an.alpha, resamples = ctx.an.resamples, seed = 1 })
  return { n_items = #a, items_better = better, items_worse = worse, mean = r.mean,
    p_signflip = r.p_signflip, ci_t = ci_t(r) }
end

-- Per corpus (a run's data path), the chance table of every task (its task files and
-- committed controls: chance rate and interval, bigram, untrained and n-gram accuracies)
-- and the tasks its macro accuracy is over; the corpora in the order of the study's runs,
-- and each variant's corpus.
local function chance_tables(ctx, suite)
  local data_of, corpora, chance_of, over_of = {}, {}, {}, {}
  for _, r in ipairs(ctx.s.runs or {}) do
    local d = r.cfg.data
    if d and not data_of[r.variant] then
      data_of[r.variant] = d
      if not chance_of[d] then chance_of[d], corpora[#corpora + 1] = {}, d end
    end
  end
  for _, data in ipairs(corpora) do
    local path = data:sub(1, 1) == "/" and data or (host.root .. "/" .. data)
    local controls = json.table_of(fs.read(tasks.controls_path(path, suite)))
    controls = controls and controls.tasks or {}
    local loaded = tasks.load(path, suite, { shots = { 0 }, missing_ok = true })
    local over = { n = #loaded.tasks, tasks = json.array({}), skipped = json.array(loaded.skipped) }
    over_of[data] = over
    for _, t in ipairs(loaded.tasks) do
      over.tasks[#over.tasks + 1] = t.task
      local lo, hi = tasks.chance_interval(t.chance, t.n_items)
      local c = controls[t.task] or {}
      local untrained, ngram = {}, {}
      for name, u in pairs(c.untrained or {}) do untrained[name] = u.acc end
      for i, g in ipairs(c.ngram or {}) do ngram[i] = { order = g.order, acc = g.acc } end
      chance_of[data][t.task] = { rate = t.chance, n_items = t.n_items, lo = lo, hi = hi,
        bigram_acc = c.bigram_acc, untrained = next(untrained) and json.object(untrained) or nil,
        ngram = #ngram > 0 and json.array(ngram) or nil, ngram_best = c.ngram_best and
          { order = c.ngram_best.order, acc = c.ngram_best.acc } }
    end
  end
  return data_of, corpora, chance_of, over_of
end

-- Per task with a best n-gram control: the variants whose mean zero-shot accuracy is above
-- both that n-gram's accuracy and the chance interval, each judged on its own corpus.
local function beyond_ngram(ctx, names, data_of, chance_of, corpora, first)
  local out
  for _, t in ipairs(names) do
    local above, by_corpus = {}, {}
    for _, v in ipairs(ctx.s.variants) do
      local d = data_of[v.name]
      local c = d and chance_of[d][t]
      if c and c.ngram_best then
        local threshold = math.max(c.ngram_best.acc, c.hi)
        by_corpus[tasks.corpus_name(d)] = { order = c.ngram_best.order, acc = c.ngram_best.acc,
          threshold = threshold }
        local xs = {}
        for _, seed in ipairs(ctx.s.seeds) do
          local r = ctx.runs[v.name][seed]
          local x = not r.diverged and r.values[string.format("task_%s_0shot_acc", t)]
          if x then xs[#xs + 1] = x end
        end
        if #xs > 0 and stats.summary(xs).mean > threshold then above[#above + 1] = v.name end
      end
    end
    local c = first[t]
    if c and c.ngram_best then
      out = out or {}
      out[t] = { order = c.ngram_best.order, acc = c.ngram_best.acc,
        threshold = math.max(c.ngram_best.acc, c.hi), variants = json.array(above),
        by_corpus = #corpora > 1 and json.object(by_corpus) or nil }
    end
  end
  return out and json.object(out)
end

-- The comparisons at k shots of pair (tv, bv) into out's macro, per_task (and the
-- family, for Holm over tasks x comparisons) and items.
local function compare_at(ctx, out, names, k, tv, bv, family)
  local an, test = ctx.an, ctx.an.test or "t"
  local seeds = paired_seeds(ctx, tv, bv)
  local metric = string.format("task_macro_acc_%dshot", k)
  local a, b = values(ctx, bv, seeds, metric), values(ctx, tv, seeds, metric)
  if a and b and #a >= 2 then
    local r = stats.paired(a, b, compare.paired_opts(an, #a))
    local e = { shots = k, treatment = tv, baseline = bv, metric = metric,
      seeds = json.array(seeds) }
    for f, v in pairs(r) do
      if type(v) == "table" and f ~= "flags" then v = json.array({ v[1], v[2] }) end
      if f ~= "flags" and f ~= "bca_reason" then e[f] = v end
    end
    e.p = compare.test_p(r, test)
    out.macro[#out.macro + 1] = e
  end
  local keys = {}
  for _, t in ipairs(names) do
    local m = string.format("task_%s_%dshot_acc", t, k)
    local ta, tb = values(ctx, bv, seeds, m), values(ctx, tv, seeds, m)
    if ta and tb and #ta >= 2 then
      local r = stats.paired(ta, tb, compare.paired_opts(an, #ta))
      local e = { shots = k, task = t, treatment = tv, baseline = bv, metric = m, n = #ta,
        mean = r.mean, ci_t = ci_t(r), p = compare.test_p(r, test),
        mean_baseline = stats.summary(ta).mean, mean_treatment = stats.summary(tb).mean }
      family[#family + 1] = e
      out.per_task[#out.per_task + 1] = e
    end
    keys[#keys + 1] = t .. "/" .. k
    local it = item_test(ctx, tv, bv, seeds, { t .. "/" .. k })
    if it then
      it.shots, it.task, it.treatment, it.baseline = k, t, tv, bv
      out.items[#out.items + 1] = it
    end
  end
  local all = item_test(ctx, tv, bv, seeds, keys)
  if all then
    all.shots, all.task, all.treatment, all.baseline = k, "all", tv, bv
    out.items[#out.items + 1] = all
  end
end

-- Per k-shot count and task, the least share of demonstrations a run kept (on its own
-- corpus's items: a study on two corpora has two item counts).
local function demos_kept(ctx, spec, names, data_of, chance_of)
  local demos = {}
  for _, k in ipairs(spec.shots) do
    for _, t in ipairs(names) do
      local least
      for _, v in ipairs(ctx.s.variants) do
        local d = data_of[v.name]
        local c = d and chance_of[d][t]
        for _, seed in ipairs(ctx.s.seeds) do
          local lost = ctx.runs[v.name][seed].values[string.format(
            "task_%s_%dshot_lost_demos", t, k)]
          -- (a zero-shot prompt has no demonstrations)
          if k > 0 and lost and c and c.n_items then
            local kept = 1 - lost / c.n_items
            if not least or kept < least then least = kept end
          end
        end
      end
      if least then
        demos[#demos + 1] = { shots = k, task = t, kept_share = least,
          measurable = least >= M.DEMOS_KEPT_MIN }
      end
    end
  end
  return #demos > 0 and json.array(demos) or nil
end

function M.summarize(ctx)
  local an, spec = ctx.an, ctx.an.tasks
  local names = tasks.suite(spec.suite)
  local out = { suite = spec.suite, shots = json.array({ table.unpack(spec.shots) }),
    macro = json.array({}), per_task = json.array({}), items = json.array({}), chance = {} }
  local data_of, corpora, chance_of, over_of = chance_tables(ctx, spec.suite)
  if corpora[1] then out.chance, out.macro_over = chance_of[corpora[1]], over_of[corpora[1]] end
  if #corpora > 1 then
    out.chance_by_corpus, out.macro_over_by_corpus = json.object({}), json.object({})
    for _, d in ipairs(corpora) do
      out.chance_by_corpus[tasks.corpus_name(d)] = json.object(chance_of[d])
      out.macro_over_by_corpus[tasks.corpus_name(d)] = over_of[d]
    end
  end
  out.beyond_ngram = beyond_ngram(ctx, names, data_of, chance_of, corpora, out.chance)
  out.chance = json.object(out.chance)
  for _, k in ipairs(spec.shots) do
    local family = {}
    for _, pair in ipairs(an.comparisons) do compare_at(ctx, out, names, k, pair[1], pair[2], family) end
    if #family > 0 then
      local adj, rej = compare.holm(family, function(e) return e.p end, an.alpha)
      for i, e in ipairs(family) do e.p_holm, e.reject_holm, e.holm_m = adj[i], rej[i], #family end
    end
  end
  out.demos = demos_kept(ctx, spec, names, data_of, chance_of)
  return out
end

return M
