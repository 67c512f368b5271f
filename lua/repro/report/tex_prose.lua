-- The paper's generated sentences (lua/repro/report/init.lua), from the study summaries:
-- M.degenerate_note(c) (why a comparison's statistics are undefined), M.rule_history(ctx)
-- and the statistics section's facts (M.tests, M.seed_counts, M.signflip_floors,
-- M.bca_coverage).  The verdicts are table rows (tex_numbers.lua), not sentences.
local stats = require "stats"
local F = require "repro.report.texfmt"

local M = {}

-- Words -----------------------------------------------------------------------------

local function capitalize(s)
  return (s:gsub("^(%$?)(%l)", function(d, c) return d .. c:upper() end))
end

local TEST = { t = "paired $t$-test", signflip = "exact sign-flip test" }

-- Notes under the tables ------------------------------------------------------------------

-- Why some statistics of comparison (or interaction) c are undefined, in words (LaTeX),
-- from the flags and numbers the statistics module returned; "" when nothing is.
function M.degenerate_note(c)
  if not c.degenerate then return "" end
  local flags, parts = c.flags or {}, {}
  local n = c.n or 0
  if n == 0 then
    parts[#parts + 1] = "no seed has a finite value for both runs, so nothing is defined"
  elseif flags.small_n then
    parts[#parts + 1] = string.format("only %d seed pair%s: with no spread the $t$-test, " ..
      "every interval, $d_z$ and the minimum detectable effect are undefined", n,
      n == 1 and "" or "s")
  end
  if flags.constant then
    parts[#parts + 1] = string.format("all %d seed pairs give the same difference (%s): " ..
      "with no spread the $t$-test, its interval, $d_z$ and the minimum detectable effect " ..
      "are undefined, and $p$ is the exact sign-flip test's", n,
      F.signed(c.mean, F.diff_decimals(c.metric, c.mean, nil)))
  end
  if flags.nct_range then
    parts[#parts + 1] = string.format("the interval of $d_z$ is undefined: $t$ = %s puts " ..
      "a bound beyond the noncentrality %s, the largest at which the noncentral $t$ is inverted",
      F.num(c.t, 1),
      "\\num{" .. F.config_text(stats.NCT_MAX_NCP) .. "}")
  end
  if flags.bca_undefined then
    parts[#parts + 1] = "the BCa bootstrap interval (descriptive, not shown) is undefined " ..
      "for these differences"
  end
  if #parts == 0 then
    parts[1] = "some statistics are undefined for these differences (its summary.json " ..
      "entry says which)"
  end
  return capitalize(table.concat(parts, "; ")) .. "."
end

-- The statistics section --------------------------------------------------------------------

-- `list` grouped by key_of(item), the groups in the order of their first items: a list of
-- {key =, items = {...}}.
function M.groups(list, key_of)
  local by_key, out = {}, {}
  for _, x in ipairs(list) do
    local k = key_of(x)
    if not by_key[k] then
      by_key[k] = { key = k, items = {} }
      out[#out + 1] = by_key[k]
    end
    table.insert(by_key[k].items, x)
  end
  return out
end

-- The fixed-design studies with a Holm family, in the context's order: a study that
-- decides only in a nested summary (report_data.SECTIONS, e.g. a sweep's outcomes) as that
-- summary's Study.
local function decided(ctx)
  local out = {}
  for _, s in ipairs(ctx.studies) do
    if s.summary.sequential then
      -- a sequential study's test and seeds are its design's (its own section)
    elseif #(s.summary.verdicts or {}) > 0 then
      out[#out + 1] = s
    else
      for _, sec in ipairs(s:sections()) do
        if #(sec.study.summary.verdicts or {}) > 0 then
          out[#out + 1] = sec.study
          break
        end
      end
    end
  end
  return out
end

-- The studies with verdicts grouped by their seed count (the key), fewest seeds first.
local function by_seed_count(ctx)
  local list = M.groups(decided(ctx), function(s) return #s.seeds end)
  table.sort(list, function(a, b) return a.key < b.key end)
  return list
end

local function name_list(studies)
  local t = {}
  for i, s in ipairs(studies) do t[i] = "\\texttt{" .. F.escape(s.name) .. "}" end
  return F.list(t)
end

-- The bound 1 - 2^(1-n) on the coverage of a bootstrap interval over n seeds, in percent.
function M.bca_bound(n)
  return F.num(100 * (1 - 2.0 ^ (1 - n)), 2) .. "\\,\\%"
end

-- The sign-flip floor 2^(1-n) at each seed count of the studies, and whether any of them
-- can reach the study's alpha.
function M.signflip_floors(ctx)
  local parts, reach = {}, {}
  for _, g in ipairs(by_seed_count(ctx)) do
    local floor = 2.0 ^ (1 - g.key)
    parts[#parts + 1] = string.format("%s with %d seeds (%s)", F.p(floor), g.key,
      name_list(g.items))
    for _, s in ipairs(g.items) do
      local an = s.analysis
      local level = an.holm_first_level or
        (an.alpha or stats.DEFAULT_ALPHA) / math.max(1, an.m or 1)
      if floor <= level then reach[#reach + 1] = s end
    end
  end
  if #parts == 0 then return "No study with a decision has run yet." end
  local tail
  if #reach == 0 then
    tail = "every one of these floors is above the study's first Holm level $\\alpha/m$, so " ..
      "the sign-flip test could not reject in any of these studies whatever the data"
  else
    tail = "only " .. name_list(reach) .. " can reach the first Holm level $\\alpha/m$ " ..
      "with the sign-flip test"
  end
  return "Its floor is " .. F.list(parts, "; and ", "; ") .. "; " .. tail .. "."
end

-- Which test each study with a decision pre-registered: "the paired $t$-test (every
-- study that has run)", or the studies of each test named.
function M.tests(ctx)
  local list = decided(ctx)
  local groups = M.groups(list, function(s) return s.analysis.test or "t" end)
  local function test_name(g) return TEST[g.key] or F.escape(g.key) end
  if #groups == 0 then return "the test its file names (no study with a decision has run yet)" end
  if #groups == 1 then
    return string.format("the %s (every one of the %d studies with a decision that have run)",
      test_name(groups[1]), #list)
  end
  local parts = {}
  for i, g in ipairs(groups) do
    parts[i] = string.format("the %s (%s)", test_name(g), name_list(g.items))
  end
  return table.concat(parts, ", ")
end

-- The seed counts of the studies with a decision ("3 or 5"), and the degrees of freedom
-- of their t-tests ("2 or 4"); "---" when none has run.
function M.seed_counts(ctx)
  local n, df = {}, {}
  for i, g in ipairs(by_seed_count(ctx)) do
    n[i], df[i] = string.format("%d", g.key), string.format("%d", g.key - 1)
  end
  if #n == 0 then return F.DASH, F.DASH end
  return F.list(n, " or "), F.list(df, " or ")
end

-- The bound on the coverage of the bootstrap intervals at each seed count below
-- stats.BCA_CAVEAT_N.
function M.bca_coverage(ctx)
  local parts = {}
  for _, g in ipairs(by_seed_count(ctx)) do
    if g.key < stats.BCA_CAVEAT_N then
      parts[#parts + 1] = M.bca_bound(g.key) .. string.format(" with %d seeds", g.key)
    end
  end
  if #parts == 0 then return "" end
  return "at most " .. table.concat(parts, " and ")
end

-- The history of the decision rule ----------------------------------------------------------

-- The Holm p-values of `list` at field `key`: "p", or "lo--hi" when they differ.
local function p_span(list, key)
  local lo, hi = math.huge, -math.huge
  for _, e in ipairs(list) do lo, hi = math.min(lo, e[key]), math.max(hi, e[key]) end
  return lo == hi and F.p(lo) or (F.p(lo) .. "--" .. F.p(hi))
end

-- Whether an effect changes between the two families of study s: by each interaction's
-- Holm p (rule 1 gave interactions no verdict; rule 2's interaction_verdicts are in the
-- summaries).  Appends a clause per direction to `flips`.
local function interaction_flips(s, flips)
  local word = { [true] = "significant", [false] = "not significant" }
  local all = {}
  for _, e in ipairs(s.summary.interactions or {}) do
    if not e.exploratory then all[#all + 1] = e end
  end
  for _, now in ipairs({ true, false }) do
    local list = {}
    for _, e in ipairs(all) do
      if e.reject_holm == now and e.reject_holm_rule1 == not now then list[#list + 1] = e end
    end
    if #list > 0 then
      local count = #list == #all and string.format("all %d", #all) or
        string.format("%d of the %d", #list, #all)
      flips[#flips + 1] = string.format("%s primary-metric interactions of \\texttt{%s} " ..
        "%s %s under rule %d (Holm $p$ %s) and %s under rule %d's family (Holm $p$ %s)",
        count, F.escape(s.name), #list == 1 and "is" or "are", word[now], s.analysis.rule,
        p_span(list, "p_holm"), word[not now], s.analysis.registered_rule,
        p_span(list, "p_holm_rule1"))
    end
  end
end

-- The verdicts of the studies analysed under a later rule than they were registered
-- with: how many kept their verdict, how many were renamed (no meaningful difference,
-- which rule 2 calls equivalent only after a TOST), and which moved, each named.
function M.rule_history(ctx)
  local kept, renamed, moved, studies, total = {}, 0, {}, {}, 0
  for _, s in ipairs(ctx.studies) do
    local an = s.analysis
    if an.registered_rule and an.rule and an.registered_rule < an.rule then
      studies[#studies + 1] = s
      for _, v in ipairs(s.summary.verdicts or {}) do
        total = total + 1
        if v.changed then
          moved[#moved + 1] = string.format("\\texttt{%s}, %s: \\emph{%s} under " ..
            "rule %d, \\emph{%s} under rule %d", F.escape(s.name),
            s:comparison_label(v.treatment, v.baseline),
            F.escape(v.verdict_rule1 or "?"), an.registered_rule, F.escape(v.verdict), an.rule)
        elseif v.verdict_rule1 == v.verdict then
          kept[v.verdict] = (kept[v.verdict] or 0) + 1
        else
          renamed = renamed + 1
        end
      end
    end
  end
  if #studies == 0 then
    return "Every study that has run was registered under the current rule."
  end
  local first, one = studies[1].analysis, #studies == 1
  local n_kept, kinds = 0, {}
  for _, k in ipairs({ "better", "worse", "equivalent", "inconclusive" }) do
    if kept[k] then
      n_kept = n_kept + kept[k]
      kinds[#kinds + 1] = string.format("%d %s", kept[k], k)
    end
  end
  local out = { string.format("The %s %s %s registered under rule %d and ran before rule %d " ..
    "existed; %s re-analysed under rule %d, and %s summaries keep the rule-%d verdicts " ..
    "beside the new ones. Of their %d verdicts, %d kept the same verdict%s and %d " ..
    "\\emph{no meaningful difference} became \\emph{equivalent}, now backed by a " ..
    "Holm-adjusted TOST.", one and "study" or "studies", name_list(studies),
    one and "was" or "were", first.registered_rule, first.rule, one and "it is" or "they are",
    first.rule, one and "its" or "their", first.registered_rule, total, n_kept,
    #kinds > 0 and (" (" .. table.concat(kinds, ", ") .. ")") or "", renamed) }
  if #moved == 0 then
    out[#out + 1] = "No verdict moved."
  else
    out[#out + 1] = string.format("%s moved: %s.", #moved == 1 and "One verdict" or
      (F.count_words(#moved, true) .. " verdicts"), table.concat(moved, "; "))
  end
  local flips = {}
  for _, s in ipairs(studies) do interaction_flips(s, flips) end
  if #flips > 0 then
    out[#out + 1] = "The two families also disagree on interactions: " ..
      table.concat(flips, "; ") .. "; the tables print both."
  end
  return table.concat(out, " ")
end

return M
