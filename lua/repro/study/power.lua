-- Seeds from power: the seeds-from-power form of a study file's `seeds`, the pilot it
-- reads, and the design checked against the decision rule (the Holm family size, the
-- seed count power asks for, whether the test can reach alpha / m at all).
local stats = require "stats"
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local prob = require "repro.study.problems"
local rule = require "repro.study.rule"

local M = {}

local is_list = prob.is_list

-- The fields of seeds.count c, each checked: true when every one is valid.
local function check_count(P, c)
  local ok = true
  local function bad(path, msg, token)
    P.add(path, msg, token)
    ok = false
  end
  if not prob.fraction(c.power) then
    bad("seeds.count.power", "expected the target power, a number in (0, 1)", "power")
  end
  if (c.pilot == nil) == (c.sd == nil) then
    bad("seeds.count", "expected exactly one of pilot (a study whose summary gives the " ..
      "paired-difference sd) and sd (the sd itself)", "count")
  elseif c.pilot ~= nil and (type(c.pilot) ~= "string" or not c.pilot:match("^[%w][%w_.%-]*$")) then
    bad("seeds.count.pilot", "expected the name of a study", "pilot")
  elseif c.sd ~= nil and not prob.positive(c.sd) then
    bad("seeds.count.sd", "expected a number > 0 (in the primary metric's units)", "sd")
  end
  if c.upper ~= nil and not prob.fraction(c.upper) then
    bad("seeds.count.upper", "expected the confidence level of the pilot sd's upper " ..
      "limit, a number in (0, 1) (e.g. 0.8)", "upper")
  elseif c.upper ~= nil and c.pilot == nil then
    bad("seeds.count.upper", "an upper confidence limit needs a pilot (its degrees of " ..
      "freedom); with a stated sd, state the sd you mean", "upper")
  end
  if c.min ~= nil and (math.type(c.min) ~= "integer" or c.min < 2 or
      (math.type(c.max) == "integer" and c.min > c.max)) then
    bad("seeds.count.min", "expected the fewest seeds the design runs whatever power " ..
      "asks, an integer >= 2 (and <= max)", "min")
  end
  if c.max ~= nil and not prob.integer_from(2)(c.max) then
    bad("seeds.count.max", "expected the largest seed count the budget allows, an integer " ..
      ">= 2", "max")
  end
  return ok
end

-- The seeds-from-power form (header): {power, pilot | sd, first}, or nil after reporting.
function M.check_spec(P, t)
  local ok = prob.unknown_fields(P, t, "seeds", { "count", "first" }, " (seeds from power: " ..
    "count = {power =, pilot = | sd =}, first =)")
  local c = t.count
  if type(c) ~= "table" then
    P.add("seeds.count", string.format("expected a table { power = %g, pilot = \"<study>\" } " ..
      "or { power = %g, sd = x }", stats.DEFAULT_POWER, stats.DEFAULT_POWER), "count")
    return nil
  end
  if not prob.unknown_fields(P, c, "seeds.count", { "power", "pilot", "sd", "max", "upper",
    "min" }, " (expected power, pilot, sd, min, max or upper)") then ok = false end
  if not check_count(P, c) then ok = false end
  local first = prob.as_integer(t.first)
  if math.type(first) ~= "integer" or first < 0 then
    P.add("seeds.first", "expected the first seed, an integer >= 0 (the seeds are first, " ..
      "first + 1, ...)", "first")
    ok = false
  end
  if not ok then return nil end
  return { power = c.power + 0.0, pilot = c.pilot, sd = c.sd, first = first, max = c.max,
    upper = c.upper, min = c.min }
end

-- The seeds a study computed from power, with the inputs behind the count (s.seeds_from_power,
-- as the summary keeps it), in one line for the dry run and the verdict table.
function M.seeds_text(p)
  local text = string.format("seeds from power: n = %d seeds (%d .. %d) for %g %% power at " ..
    "the minimum effect delta = %g with paired-difference sd %.4g (%s): d_z = %.3g, %s test " ..
    "at alpha / m = %g / %d = %.4g; power at n: %.3g", p.n, p.first, p.first + p.n - 1,
    100 * p.power, p.delta, p.sd, M.sd_source_words(p), p.d_z, p.test == "t" and "paired t" or
    "sign-flip", p.alpha, p.m, p.level, p.power_achieved)
  if p.capped then
    text = text .. string.format(" (power asks for %d; the pre-registered maximum caps them " ..
      "at %d: underpowered)", p.n_uncapped, p.n)
  end
  return text
end

-- The design note of seeds from power capped by the study's maximum (p: seeds_from_power).
function M.cap_note(p)
  return string.format("seeds from power: %d seeds would give %g %% power at the minimum " ..
    "effect %g (paired sd %.4g, alpha / m = %.4g); the pre-registered maximum caps them at " ..
    "%d, where the power is %.3g: the design is underpowered for the minimum effect",
    p.n_uncapped, 100 * p.power, p.delta, p.sd, p.level, p.n, p.power_achieved)
end

-- Why `test` with n seeds cannot reach the Holm first-step level alpha / m, or nil.
function M.reach_note(test, n, alpha, m, level)
  local need = stats.min_seeds(test, level)
  if n >= need then return nil end
  return string.format("the %s with %d seed%s cannot reach the Holm first-step level " ..
    "alpha / m = %g / %d = %.4g (%s): the design needs at least %d seeds", test == "t" and
    "paired t-test" or "exact sign-flip test", n, n == 1 and "" or "s", alpha, m, level,
    test == "t" and "it needs 2 pairs" or string.format("its smallest p is 2^(1 - %d) = %.4g",
      n, 2.0 ^ (1 - n)), need)
end

-- Where the design's sd comes from (seeds_from_power's sd_source code), in words.
function M.sd_source_words(p)
  if p.sd_source ~= "pilot" then return "stated in the study file" end
  local words = string.format("the largest paired-difference sd of the pilot's comparisons " ..
    "on %s (%s%s)", p.metric or "the primary metric", p.pilot_file, p.pilot_list and
    (": its " .. p.pilot_list) or "")
  if p.upper then
    words = string.format("the %g %% upper confidence limit (chi-square, %g degrees of " ..
      "freedom) of %s, %.4g", 100 * p.upper, p.df, words, p.sd_pilot)
  end
  return words
end

-- Where other studies' summaries are read (a pilot, repro.best_lr): opts.out_root, else
-- $REPRO_EXPERIMENTS, else <project root>/experiments.
function M.results_root(opts)
  return fs.records_root(opts and opts.out_root)
end

-- The pilot's paired-difference sd on `metric`: the largest over its comparisons (its
-- summary's pilot_comparisons when it has them: the comparisons it offers a later study
-- as a pilot, e.g. a sweep's at each group's best learning rate), the list of them, and
-- its seeds; or nil and why.
local function pilot_sd(root, pilot, metric)
  local path = root .. "/" .. pilot .. "/summary.json"
  -- a regular file under the size cap only (a FIFO or a link to /dev/zero is refused)
  local text, why = fs.read(path)
  if not text then
    if not fs.exists(path) then
      return nil, "the pilot study has no summary " .. path .. " (run it first)"
    end
    return nil, path .. ": " .. tostring(why)
  end
  local sum = json.table_of(text)
  if not sum then return nil, path .. ": not a study summary" end
  local best, best_df, used = nil, nil, {}
  local list = type(sum.pilot_comparisons) == "table" and sum.pilot_comparisons or
    sum.comparisons
  for _, c in ipairs(type(list) == "table" and list or {}) do
    if type(c) == "table" and c.metric == metric and type(c.sd) == "number" then
      -- degrees of freedom of the sd: stated (a pooled estimate), else pairs - 1
      local df = type(c.df) == "number" and c.df or (type(c.n) == "number" and c.n - 1)
      used[#used + 1] = { treatment = c.treatment, baseline = c.baseline, sd = c.sd, n = c.n,
        df = type(c.df) == "number" and c.df or nil }
      if not best or c.sd > best then best, best_df = c.sd, df end
    end
  end
  if not best or not (best > 0) then
    return nil, string.format("%s: no comparison on %s with a paired-difference sd > 0", path,
      metric)
  end
  local seeds = {}
  for _, x in ipairs(type(sum.seeds) == "table" and sum.seeds or {}) do seeds[x] = true end
  -- named relative to the project root, so that the summary's bytes do not depend on
  -- where the repository is
  return best, used, seeds, { file = fs.relative_to_root(path),
    list = list == sum.pilot_comparisons and "pilot_comparisons" or nil }, best_df
end

-- The paired-difference sd the seed count comes from, and where it comes from: the
-- study's, or its pilot's largest (its one-sided upper confidence limit with
-- spec.upper); nil after reporting a problem.
local function design_sd(P, spec, an, opts)
  local d = { sd = spec.sd, pilot_seeds = {}, source = "study_file" }
  if not spec.pilot then return d end
  local sd, list_or_why, pilot_seeds, source, df = pilot_sd(M.results_root(opts), spec.pilot,
    an.primary)
  if not sd then
    P.add("seeds.count.pilot", list_or_why, "pilot")
    return nil
  end
  d.sd, d.used, d.pilot_seeds, d.df = sd, list_or_why, pilot_seeds, df
  d.source, d.file, d.list = "pilot", source.file, source.list
  if spec.upper then
    -- without a small pilot's optimism: its sd's one-sided upper confidence limit
    if not (type(df) == "number" and df > 0) then
      P.add("seeds.count.upper", "the pilot's comparison gives no degrees of freedom " ..
        "(pairs - 1 or df) for its sd", "upper")
      return nil
    end
    d.sd_pilot = sd
    d.sd = stats.sd_upper(sd, df, spec.upper)
  end
  return d
end

-- Study s's seeds from power (s.seeds, s.seeds_from_power, a design note when its
-- pre-registered maximum caps them): true, or false after reporting a problem.
local function seeds_from_power(P, s, spec, opts)
  local an = s.analysis
  local d = design_sd(P, spec, an, opts)
  if not d then return false end
  local sd = d.sd
  local ok, n, g = pcall(stats.seeds_needed, { sd = sd, delta = an.min_effect,
    alpha = an.alpha, m = an.m, power = spec.power, test = an.test })
  if not ok then
    P.add("seeds.count", tostring(n):gsub("^.-%(", "("), "count")
    return false
  end
  -- a pre-registered budget cap (fewer seeds than power asks for, said in the summary),
  -- then a floor (more seeds; check_count keeps min <= max)
  local uncapped = n
  n = math.min(n, spec.max or n)
  n = math.max(n, spec.min or n)
  local power_at_n = n == uncapped and g.power_achieved or
    stats.power(n, g.d_z, { alpha = g.level })
  if n < uncapped then
    an.design_notes[#an.design_notes + 1] = M.cap_note({ n_uncapped = uncapped,
      power = spec.power, delta = an.min_effect, sd = sd, level = g.level, n = n,
      power_achieved = power_at_n })
  end
  for i = 0, n - 1 do
    if d.pilot_seeds[spec.first + i] then
      P.add("seeds.first", string.format("seed %d is one of the pilot's: the seeds must " ..
        "be fresh (choose first so that first .. first + %d avoid them)", spec.first + i,
        n - 1), "first")
      return false
    end
    s.seeds[i + 1] = spec.first + i
  end
  s.seeds_from_power = { power = spec.power, pilot = spec.pilot, sd = sd, sd_source = d.source,
    pilot_file = d.file, pilot_list = d.list, metric = d.file and an.primary or nil,
    pilot_comparisons = d.used, delta = an.min_effect, alpha = an.alpha, m = an.m,
    level = g.level, test = an.test, d_z = g.d_z, n = n, n_power = g.n_power,
    n_reach = g.n_reach, power_achieved = power_at_n, first = spec.first, max = spec.max,
    n_uncapped = uncapped, capped = uncapped > n, upper = spec.upper, min = spec.min,
    sd_pilot = d.sd_pilot, df = spec.upper and d.df or nil }
  return true
end

-- Whether the test of study s can reach the Holm first-step level with its seeds: a
-- problem when it cannot, or a design note for a study registered before this check.
local function check_reach(P, s, level)
  local an = s.analysis
  local msg = M.reach_note(an.test, #s.seeds, an.alpha, an.m, level)
  if not msg then return end
  if an.registered_rule < rule.RULE then
    an.design_notes[#an.design_notes + 1] = msg .. string.format(" (accepted: the study was " ..
      "pre-registered under decision rule %d, before this check existed)", an.registered_rule)
  else
    P.add("analysis.test", msg, "test")
  end
end

-- The design against the decision rule: the Holm family size m, the seeds from power
-- (when the study asks for them), and whether the test can reach alpha / m at all.
function M.check_design(P, s, opts, given)
  local an = s.analysis
  an.m = #(an.comparisons or {}) + #(an.interactions or {})
  if not (an.test and an.alpha and an.m > 0) then return end
  local spec = s.seeds_spec
  if spec and an.min_effect and an.primary and not seeds_from_power(P, s, spec, opts) then
    return
  end
  local n = #s.seeds
  -- a seeds list with problems (already reported) says nothing about the design
  if n == 0 or (not spec and (not is_list(given) or #given ~= n)) then return end
  check_reach(P, s, an.alpha / an.m)
end

return M
