-- The claim under test as numbers: the student study's Table 1 (M.TABLE1, typed in nowhere
-- else), the distance D of a set-up's results to one of its rows (M.DISTANCES; a match
-- when D <= M.threshold()), and the two claim stages of a study's analysis, an extension a
-- study names with `extensions = { claim = "paper/lib/claim.lua" }`: { stage = "search",
-- select = k } ranks every variant by D to the claim's `none` row and selects the closest
-- k; { stage = "table1", setups = {...} } lays the claim's Table 1 beside each set-up's
-- numbers.  M.check validates, M.summarize writes summary.json's `claim`, M.text prints
-- it.  More: lua/experiments/README.md.
local stats = require "stats"
local json = require "repro.core.json"
local base = require "repro.core.base"
local textable = require "repro.core.textable"
local prob = require "repro.study.problems"

local M = {}

-- The claim's Table 1.  mock_acc is its "mock accuracy"; embed_norm the norm of the input
-- of block 1.
M.TABLE1 = {
  seeds = 3,
  iters = 150,
  -- Not published: the number of samples behind each "mock accuracy", inferred because
  -- every value is a multiple of 1/150 (3 seeds x about 50 samples).
  mock_acc_samples = 150,
  rows = {
    none = { val_ppl = 22.18, val_ppl_sd = 0.90, mock_acc = 0.0533, final_grad_norm = 0.1762,
      embed_norm = 11.46 },
    layernorm = { val_ppl = 20.64, val_ppl_sd = 0.81, mock_acc = 0.0667,
      final_grad_norm = 0.1783, embed_norm = 11.68 },
    rmsnorm = { val_ppl = 21.88, val_ppl_sd = 0.77, mock_acc = 0.0600,
      final_grad_norm = 0.1706, embed_norm = 11.59 },
  },
}
M.ROWS = { "none", "layernorm", "rmsnorm" }

M.TOLERANCE = 0.10
M.Z_MATCH = 2

-- The versions of the distance (a study's analysis.claim.distance, default 1).  A term
-- is on the log scale (z = ln(x / c) / sigma; sigma the claim's relative spread where it
-- gives one, else a stated tolerance) or, for a proportion, on its own scale (z = (x -
-- c) / sqrt(c (1 - c) / samples): the binomial sd at the claim's value); D = sum of
-- weight x z^2, a match when D <= Z_MATCH^2 x (sum of the weights).
--   1: val_ppl, final_grad_norm and embed_norm, weight 1 each.
--   2: val_ppl (the claim's spread), embed_norm (10 %), the balanced accuracy on
--     150 positions against the claim's "mock macro accuracy" (binomial sd at 150), each
--     weight 1; final_grad_norm (tolerance 25 %, weight 1/4: its definition in the claim
--     is unknown and it varies 4-28 % between seeds).  A set-up whose validation PPL is
--     at or above the unigram perplexity of the validation split learned nothing beyond
--     character frequencies: a search excludes it before ranking.
M.DISTANCES = {
  [1] = { terms = {
    { metric = "val_ppl", spread = "val_ppl_sd", weight = 1 },
    { metric = "final_grad_norm", sigma = M.TOLERANCE, weight = 1 },
    { metric = "embed_norm", sigma = M.TOLERANCE, weight = 1 },
  } },
  [2] = { exclude_unigram = true, terms = {
    { metric = "val_ppl", spread = "val_ppl_sd", weight = 1 },
    { metric = "embed_norm", sigma = 0.10, weight = 1 },
    { metric = "bal_subset_acc_mean", claim_field = "mock_acc", binomial = 150, weight = 1 },
    { metric = "final_grad_norm", sigma = 0.25, weight = 0.25 },
  } },
}

function M.threshold(version)
  local w = 0
  for _, t in ipairs(M.DISTANCES[version or 1].terms) do w = w + t.weight end
  return w * M.Z_MATCH * M.Z_MATCH
end

local finite = base.finite

local function fmt(x, f)
  if x == nil then return "-" end
  local s = string.format(f or "%.4g", x)
  return s == "-0" and "0" or s
end

-- The distance of `values` ({metric -> number}) to the claim's row `row` (default "none")
-- by distance `version` (default 1): { d, rms_z, matches, terms = {{metric, value,
-- claim, log_ratio (log terms) or difference, sigma, sigma_source, z[, weight]}} }, or
-- nil, the reason and the metric that has no value.
function M.distance(values, row, version)
  local c = M.TABLE1.rows[row or "none"]
  if not c then error("claim.distance: unknown row '" .. tostring(row) .. "'", 2) end
  local def = M.DISTANCES[version or 1]
  if not def then error("claim.distance: unknown version " .. tostring(version), 2) end
  local d, w, terms = 0.0, 0.0, json.array({})
  for _, term in ipairs(def.terms) do
    local x = values[term.metric]
    if not finite(x) or x < 0 or (x == 0 and not term.binomial) then
      return nil, string.format("no positive finite %s", term.metric), term.metric
    end
    local cv = c[term.claim_field or term.metric]
    local e = { metric = term.metric, value = x, claim = cv }
    if term.binomial then
      e.sigma, e.sigma_source = math.sqrt(cv * (1 - cv) / term.binomial), "binomial"
      e.difference = x - cv
    else
      local spread = term.spread and c[term.spread]
      e.sigma = spread and spread / cv or term.sigma
      e.sigma_source = spread and "spread" or "tolerance"
      e.log_ratio = math.log(x / cv)
    end
    e.z = (e.difference or e.log_ratio) / e.sigma
    if version and version > 1 then e.weight = term.weight end
    d, w = d + term.weight * e.z * e.z, w + term.weight
    terms[#terms + 1] = e
  end
  return { d = d, rms_z = math.sqrt(d / w), matches = d <= M.threshold(version),
    terms = terms }
end

-- The entries ({variant, values, ...}) ranked by their distance to `row`: each gets
-- distance (the M.distance table, or nil with `reason` and `missing`) and rank; ties and
-- undefined distances keep the given order, undefined ones last.  Returns a new list.
function M.rank(entries, row, version)
  local list = {}
  for i, e in ipairs(entries) do
    local x = { order = i }
    for k, v in pairs(e) do x[k] = v end
    x.distance, x.reason, x.missing = M.distance(e.values, row, version)
    list[i] = x
  end
  table.sort(list, function(a, b)
    local da, db = a.distance and a.distance.d, b.distance and b.distance.d
    if da and db and da ~= db then return da < db end
    if (da == nil) ~= (db == nil) then return da ~= nil end
    return a.order < b.order
  end)
  for i, x in ipairs(list) do x.rank, x.order = i, nil end
  return list
end

-- The search's checks, then the Table-1 stage's set-ups (below).
local function check_search(P, spec, names, version)
  local k = prob.as_integer(spec.select)
  if math.type(k) ~= "integer" or k < 1 or k > #names then
    P.add("analysis.claim.select", string.format("expected the number of closest set-ups " ..
      "to select, an integer from 1 to %d (the variants)", #names), "select")
    return nil
  end
  local pilot = prob.as_integer(spec.pilot)
  if pilot ~= nil and (math.type(pilot) ~= "integer" or pilot < 1 or version < 2) then
    P.add("analysis.claim.pilot", "expected the number of closest admissible set-ups whose " ..
      "seed-to-seed differences make the pilot sd for the next stage, an integer >= 1 " ..
      "(distance 2 only)", "pilot")
    return nil
  end
  return { stage = "search", select = k, distance = spec.distance and version or nil,
    pilot = pilot }
end

-- One set-up of the Table-1 stage at `path`: its normalized entry and whether it is valid.
local function check_setup(P, su, path, variants)
  local ok = prob.unknown_fields(P, su, path, { "name", "search", table.unpack(M.ROWS) },
    " (expected name, none, layernorm, rmsnorm, search)")
  local function bad(...)
    P.add(...)
    ok = false
  end
  local e = { name = su.name }
  for _, row in ipairs(M.ROWS) do
    local v = su[row]
    if type(v) ~= "string" or not variants[v] then
      bad(path .. "." .. row, "expected the name of this set-up's " .. row ..
        " variant, got " .. tostring(v), row)
    else
      local norm = variants[v].overrides.embed_norm or "none"
      if norm ~= row then
        bad(path .. "." .. row, string.format("variant '%s' has embed_norm %s, not %s", v,
          norm, row), v)
      end
      e[row] = v
    end
  end
  if type(su.search) == "table" then
    e.search = {}
    for _, k in ipairs(base.sorted_keys(su.search)) do
      local v = su.search[k]
      if type(k) ~= "string" or (type(v) ~= "number" and type(v) ~= "string" and
          type(v) ~= "boolean") then
        bad(path .. ".search." .. tostring(k), "expected a plain number, string or boolean",
          tostring(k))
      else
        e.search[k] = v
      end
    end
  elseif su.search ~= nil then
    bad(path .. ".search", "expected a table of the search's numbers", "search")
  end
  return e, ok
end

-- analysis.claim of a study file, validated (P is lua/repro/study/problems.lua's
-- collector; variants maps a variant name to {overrides}).  Returns the normalized spec.
function M.check(P, spec, variants, names)
  if type(spec) ~= "table" then
    P.add("analysis.claim", "expected a table { stage = \"search\", select = k } or " ..
      "{ stage = \"table1\", setups = {...} }", "claim")
    return nil
  end
  prob.unknown_fields(P, spec, "analysis.claim", spec.stage == "search" and
    { "stage", "select", "distance", "pilot" } or { "stage", "setups", "distance" },
    " for stage " .. tostring(spec.stage))
  local version = prob.as_integer(spec.distance == nil and 1 or spec.distance)
  if not M.DISTANCES[version] then
    P.add("analysis.claim.distance", "expected the version of the distance to the claim's " ..
      "row: 1 (PPL, gradient norm, embedding norm) or 2 (PPL, embedding " ..
      "norm, balanced accuracy on 150 positions, gradient norm at weight 1/4; set-ups at or " ..
      "above the unigram perplexity excluded)", "distance")
    return nil
  end
  if spec.stage == "search" then return check_search(P, spec, names, version) end
  if spec.stage ~= "table1" then
    P.add("analysis.claim.stage", "expected \"search\" or \"table1\", got " ..
      tostring(spec.stage), "stage")
    return nil
  end
  if type(spec.setups) ~= "table" or #spec.setups == 0 then
    P.add("analysis.claim.setups", "expected a non-empty list of { name =, none =, " ..
      "layernorm =, rmsnorm = } (variant names)", "setups")
    return nil
  end
  local out, seen, all_ok = {}, {}, true
  for i, su in ipairs(spec.setups) do
    local path = string.format("analysis.claim.setups[%d]", i)
    if type(su) ~= "table" or type(su.name) ~= "string" or su.name == "" then
      P.add(path, "expected { name = \"...\", none =, layernorm =, rmsnorm = }", "setups")
      all_ok = false
    elseif seen[su.name] then
      P.add(path .. ".name", "set-up '" .. su.name .. "' is listed twice", su.name, 2)
      all_ok = false
    else
      seen[su.name] = true
      local e, ok = check_setup(P, su, path, variants)
      out[#out + 1] = e
      all_ok = all_ok and ok
    end
  end
  return all_ok and { stage = "table1", setups = out,
    distance = spec.distance and version or nil } or nil
end

-- Mean, sd and n over a variant's seeds of metric m, from the summary's per_variant.
local function moments(per_variant, variant, m)
  local x = per_variant[variant] and per_variant[variant].metrics[m]
  if not (x and x.mean) then return nil end
  return { mean = x.mean, sd = x.sd, n = x.n }
end

-- The means of the distance's metrics for a variant.
local function means(per_variant, variant, version)
  local v = {}
  for _, term in ipairs(M.DISTANCES[version or 1].terms) do
    local x = moments(per_variant, variant, term.metric)
    v[term.metric] = x and x.mean
  end
  return v
end

-- The unigram and bigram perplexities of the study's validation split (engine/ngram.h).
local function ngram_of(s)
  local cfg = s.runs[1] and s.runs[1].cfg
  if not (cfg and cfg.data) then return {} end
  local ok, r = pcall(require("engine").ngram_ppl, require("repro.record").data_path(cfg))
  if not ok then return { corpus = cfg.data, reason = "unavailable" } end
  return { corpus = cfg.data, unigram_ppl = r.unigram_ppl, bigram_ppl = r.bigram_ppl,
    unigram_nll = r.unigram_nll, bigram_nll = r.bigram_nll, n_train = r.n_train,
    n_eval = r.n_eval, vocab = r.vocab }
end

-- The pilot for a later stage's seeds (distance 2's search, analysis.claim.pilot = K):
-- over the K closest admissible set-ups with two seeds, the root mean square of the
-- difference of the primary metric between their first two seeds.  E[(x1 - x2)^2] =
-- 2 sigma^2, so this estimates sqrt(2) sigma with K degrees of freedom: the sd of a
-- paired difference of two variants of one seed when they are uncorrelated, an upper
-- bound when they correlate positively (shared initial weights and batches).
local function search_pilot(s, runs, ranked, k, metric)
  local seeds = table.move(s.seeds, 1, #s.seeds, 1, {})
  table.sort(seeds)
  if #seeds < 2 then return nil end
  local ss, used = 0.0, json.array({})
  -- the first k of `list` (named by field `key`) whose two seeds both have a finite value
  local function take(list, key)
    for _, e in ipairs(list) do
      if #used >= k then break end
      local r = runs[e[key]] or {}
      local r1, r2 = r[seeds[1]], r[seeds[2]]
      local a = r1 and not r1.diverged and r1.values[metric]
      local b = r2 and not r2.diverged and r2.values[metric]
      if finite(a) and finite(b) then
        ss = ss + (a - b) ^ 2
        used[#used + 1] = { variant = e[key], difference = a - b }
      end
    end
  end
  take(ranked, "variant")
  local admissible = #used > 0
  -- no admissible set-up (a tiny test budget): every set-up's, said in the definition
  if not admissible then take(s.variants, "name") end
  if #used == 0 then return nil end
  return { treatment = "seed-" .. seeds[2], baseline = "seed-" .. seeds[1], metric = metric,
    sd = math.sqrt(ss / #used), n = #used, df = #used, setups = used, admissible = admissible }
end

-- The largest |z| term of a distance, as "metric (z = ...: value vs claim)".
local function worst_term(r)
  local w
  for _, t in ipairs(r.terms) do
    if not w or math.abs(t.z) > math.abs(w.z) then w = t end
  end
  return string.format("%s (z = %s: %s vs %s)", w.metric, fmt(w.z, "%.3g"), fmt(w.value),
    fmt(w.claim))
end

-- The fields of the distance every stage's summary carries.
local function distance_fields(version)
  return { distance_version = version, tolerance = not version and M.TOLERANCE or nil,
    z_match = M.Z_MATCH, threshold = M.threshold(version) }
end

local function search_summary(s, runs, out)
  local spec = s.analysis.claim
  local version = spec.distance
  local entries, excluded = {}, json.array({})
  local ngram = M.DISTANCES[version or 1].exclude_unigram and ngram_of(s) or nil
  for _, v in ipairs(s.variants) do
    local values = means(out.per_variant, v.name, version)
    local ppl = values.val_ppl -- every distance has a val_ppl term
    if ngram and (not finite(ppl) or not ngram.unigram_ppl or ppl >= ngram.unigram_ppl) then
      excluded[#excluded + 1] = { variant = v.name, overrides = json.object(v.overrides),
        values = json.object(values), reason = not ngram.unigram_ppl and "no_unigram" or
          not finite(ppl) and "no_finite_ppl" or "at_unigram" }
    else
      entries[#entries + 1] = { variant = v.name, values = values, overrides = v.overrides }
    end
  end
  local ranked = M.rank(entries, "none", version)
  local ranking, selected = json.array({}), json.array({})
  for _, e in ipairs(ranked) do
    local n = moments(out.per_variant, e.variant, "val_ppl")
    ranking[#ranking + 1] = { rank = e.rank, variant = e.variant,
      overrides = json.object(e.overrides), n = n and n.n or 0,
      values = json.object(e.values),
      distance = e.distance or { reason = "not_positive", metric = e.missing } }
    if e.distance and #selected < spec.select then selected[#selected + 1] = e.variant end
  end
  local best = ranked[1] and ranked[1].distance and ranked[1] -- nil when none has a distance
  local r = distance_fields(version)
  r.stage, r.row, r.claim = "search", "none", json.object(M.TABLE1.rows.none)
  r.ranking, r.select, r.selected = ranking, spec.select, selected
  r.excluded, r.ngram = ngram and excluded, ngram and json.object(ngram)
  r.closest = best and { variant = best.variant, d = best.distance.d,
    matches = best.distance.matches }
  r.matches_any = best ~= nil and best.distance.matches
  r.pilot = spec.pilot and search_pilot(s, runs, ranked, spec.pilot, s.analysis.primary)
  r.n_setups = #s.variants
  return r
end

-- Subset accuracy of a variant (field: subset_acc, or bal_subset_acc), pooled over its
-- seeds and subsets.
local function subset_pool(runs, variant, seeds, field)
  local all, seed_means = {}, {}
  for _, seed in ipairs(seeds) do
    local r = runs[variant] and runs[variant][seed]
    local list = r and not r.diverged and r[field]
    if type(list) == "table" and #list > 0 then
      local sum = 0
      for _, x in ipairs(list) do
        all[#all + 1] = x
        sum = sum + x
      end
      seed_means[#seed_means + 1] = sum / #list
    end
  end
  if #all == 0 then return { n = 0 } end
  local p, sm = stats.summary(all), stats.summary(seed_means)
  return { n = #all, seeds = #seed_means, subsets_per_seed = #all // #seed_means,
    mean = p.mean, sd = p.sd, min = p.min, max = p.max, sd_seed_means = sm.sd }
end

-- The claim's effect of treatment row t over baseline row b in the units of `metric`.
local function claim_effect(metric, t, b)
  local ct, cb = M.TABLE1.rows[t], M.TABLE1.rows[b]
  if metric == "val_loss" then return math.log(ct.val_ppl / cb.val_ppl) end
  if metric == "val_ppl" then return ct.val_ppl - cb.val_ppl end
  return nil
end

local TABLE1_METRICS = { "val_ppl", "val_loss", "val_acc", "final_grad_norm", "embed_norm" }
local EFFECTS = { { "layernorm", "none" }, { "rmsnorm", "none" }, { "layernorm", "rmsnorm" } }

-- Set-up su's three rows beside the claim's, and its effects beside the claim's.
local function table1_setup(s, runs, out, su, by_pair)
  local version, primary = s.analysis.claim.distance, out.analysis.primary
  local rows, effects, total, all = {}, json.array({}), 0.0, true
  for _, row in ipairs(M.ROWS) do
    local v = su[row]
    local r = { variant = v, claim = json.object(M.TABLE1.rows[row]),
      subset_acc = subset_pool(runs, v, s.seeds, "subset_acc"),
      mock_acc_count = M.TABLE1.rows[row].mock_acc * M.TABLE1.mock_acc_samples }
    for _, m in ipairs(TABLE1_METRICS) do r[m] = moments(out.per_variant, v, m) end
    if version == 2 then
      r.bal_acc = moments(out.per_variant, v, "bal_acc")
      r.bal_subset_acc = subset_pool(runs, v, s.seeds, "bal_subset_acc")
    end
    local d, _, missing = M.distance(means(out.per_variant, v, version), row, version)
    r.distance = d or { reason = "not_positive", metric = missing }
    if d then total = total + d.d else all = false end
    rows[row] = r
  end
  for _, pair in ipairs(EFFECTS) do
    local c = by_pair[su[pair[1]] .. "\0" .. su[pair[2]]]
    if c then
      local ce, ci = claim_effect(primary, pair[1], pair[2]), c.ci_decision
      effects[#effects + 1] = { treatment = pair[1], baseline = pair[2],
        metric = primary, claim = ce, mean = c.mean, ci = ci, ci_kind = c.ci_decision_kind,
        p_holm = c.p_holm, verdict = c.verdict, n = c.n,
        same_sign = ce and c.mean and (ce < 0) == (c.mean < 0) or nil,
        claim_in_interval = ce and ci and ci[1] <= ce and ce <= ci[2] or nil }
    end
  end
  return { name = su.name, search = su.search and json.object(su.search) or nil,
    rows = rows, distance_none = rows.none.distance.d, distance_total = all and total or nil,
    matches = rows.none.distance.matches == true, effects = effects }
end

local function table1_summary(s, runs, out)
  local by_pair = {}
  for _, c in ipairs(out.comparisons) do
    if c.metric == out.analysis.primary then by_pair[c.treatment .. "\0" .. c.baseline] = c end
  end
  local setups, best = json.array({}), nil
  for _, su in ipairs(s.analysis.claim.setups) do
    local entry = table1_setup(s, runs, out, su, by_pair)
    setups[#setups + 1] = entry
    if entry.distance_none and (not best or entry.distance_none < best.distance_none) then
      best = entry
    end
  end
  local r = distance_fields(s.analysis.claim.distance)
  r.stage, r.setups, r.ngram = "table1", setups, json.object(ngram_of(s))
  r.claim = json.object({ seeds = M.TABLE1.seeds, iters = M.TABLE1.iters,
    mock_acc_samples = M.TABLE1.mock_acc_samples })
  r.closest = best and { setup = best.name, d = best.distance_none, matches = best.matches }
  r.matches_any = best ~= nil and best.matches
  return r
end

-- summary.json's `claim` for study s (lua/repro/study/init.lua) with runs[variant][seed] (as
-- analysis.read_run returns them) and the rest of its summary `out`.
function M.summarize(s, runs, out)
  if s.analysis.claim.stage == "search" then return search_summary(s, runs, out) end
  return table1_summary(s, runs, out)
end

-- The codes the claim's section of a summary holds (tests/lua/test_summary_strings.lua).
M.CODES = {
  reason = { no_unigram = true, no_finite_ppl = true, at_unigram = true, not_positive = true,
    unavailable = true },
  sigma_source = { spread = true, binomial = true, tolerance = true },
}

-- Where a distance term's tolerance comes from (its sigma_source code), in words.
function M.sigma_words(term)
  if term.sigma_source == "spread" then
    return string.format("the claim's spread %s / %s", fmt(term.sigma * term.claim),
      fmt(term.claim))
  elseif term.sigma_source == "binomial" then
    local p = term.claim
    return string.format("the binomial sd of %s at %d samples", fmt(p),
      math.floor(p * (1 - p) / term.sigma ^ 2 + 0.5))
  end
  return "no spread in the claim: the tolerance " .. fmt(term.sigma)
end

-- Why a set-up was excluded before ranking (its `reason` code), in words.
function M.excluded_words(e, ngram)
  if e.reason == "no_unigram" then return "no unigram perplexity" end
  if e.reason == "no_finite_ppl" then return "no finite validation PPL" end
  return string.format("validation PPL %s >= the unigram PPL %s: nothing learned beyond " ..
    "character frequencies", fmt(e.values.val_ppl), fmt(ngram.unigram_ppl))
end

-- What the search's pilot sd is, in words.
function M.pilot_words(p)
  local s1, s2 = p.baseline:match("%d+$"), p.treatment:match("%d+$")
  return string.format("root mean square over the %d %s of %s(seed %s) - %s(seed %s): " ..
    "sqrt(2) x the seed sd, an upper bound on a paired difference's sd for positively " ..
    "correlated variants; %d degrees of freedom", p.n, p.admissible and
    "closest admissible set-ups" or "set-ups (none is admissible: every one of them)",
    p.metric, s1, p.metric, s2, p.df)
end

-- The set-up of a Table-1 summary `c` closest to the claim's row on its seeds, or nil.
function M.closest_setup(c)
  for _, su in ipairs(c.setups) do
    if c.closest and su.name == c.closest.setup then return su end
  end
  return nil
end

-- The claim section's finding in one sentence.
function M.sentence(c)
  local threshold = fmt(c.threshold)
  if c.stage == "search" then
    local best = c.ranking[1]
    local sentence = "No set-up has a distance: every one lacks a positive finite value."
    if best and best.distance.d then
      local d = best.distance
      sentence = string.format(d.matches and "The closest set-up is %s at distance D = %s " ..
        "<= %s (root-mean-square z %s): it matches the claim's baseline row; its largest " ..
        "mismatch is %s." or "No set-up tried matches the claim's baseline row: the " ..
        "closest, %s, is at distance D = %s > %s (root-mean-square z %s); its largest " ..
        "mismatch is %s.", best.variant, fmt(d.d), threshold, fmt(d.rms_z, "%.3g"),
        worst_term(d))
    end
    if c.ngram and c.excluded and #c.excluded > 0 then
      sentence = sentence .. string.format(" %d of %d set-ups were excluded before ranking: " ..
        "their validation PPL is at or above the unigram perplexity %s.", #c.excluded,
        c.n_setups, fmt(c.ngram.unigram_ppl))
    end
    return sentence
  end
  local best = M.closest_setup(c)
  if not best then
    return "No set-up has a distance on this study's seeds: every one lacks a positive " ..
      "finite value."
  end
  local d = best.rows.none.distance
  return string.format(best.matches and "On this study's own seeds the closest set-up is " ..
    "%s: its baseline row is at distance D = %s <= %s from the claim's (root-mean-square z " ..
    "%s), a match; its largest mismatch is %s." or "No set-up tried matches the claim's " ..
    "baseline row on this study's own seeds: the closest, %s, is at distance D = %s > %s " ..
    "(root-mean-square z %s); its largest mismatch is %s.", best.name,
    fmt(best.distance_none), threshold, fmt(d.rms_z, "%.3g"), worst_term(d))
end

-- Rows as text lines, columns padded to their widths.
local function columns(rows)
  return (textable.render(rows, { indent = "  " }):gsub("\n$", ""))
end

-- The search's ranking by distance version: the claim's row in words, the z columns
-- (the distance's terms in order) and the value columns {head, metric, format}.
local SEARCH_LAYOUT = {
  [1] = { z = { "z ppl", "z grad", "z embed" }, values = { { "val PPL", "val_ppl" },
    { "grad norm", "final_grad_norm" }, { "embed norm", "embed_norm" } },
    claim = function(c)
      return string.format("distance to the claim's baseline row (PPL %s +- %s, final grad " ..
        "norm %s, embedding norm %s; threshold %s):", fmt(c.claim.val_ppl),
        fmt(c.claim.val_ppl_sd), fmt(c.claim.final_grad_norm), fmt(c.claim.embed_norm),
        fmt(c.threshold))
    end },
  [2] = { z = { "z ppl", "z embed", "z bal150", "z grad" }, values = { { "val PPL", "val_ppl" },
    { "bal acc 150", "bal_subset_acc_mean", "%.4f" }, { "embed norm", "embed_norm" } },
    claim = function(c)
      return string.format("distance 2 to the claim's baseline row (PPL %s +- %s, embedding " ..
        "norm %s, mock macro accuracy %s read as balanced accuracy on 150 positions, final " ..
        "grad norm %s at weight 1/4; threshold %s):", fmt(c.claim.val_ppl),
        fmt(c.claim.val_ppl_sd), fmt(c.claim.embed_norm), fmt(c.claim.mock_acc),
        fmt(c.claim.final_grad_norm), fmt(c.threshold))
    end },
}

local function search_text(c, add)
  local layout = SEARCH_LAYOUT[c.distance_version == 2 and 2 or 1]
  add(layout.claim(c))
  local head = { "rank", "set-up", "D", table.unpack(layout.z) }
  for _, col in ipairs(layout.values) do head[#head + 1] = col[1] end
  local rows = { head }
  for _, e in ipairs(c.ranking) do
    local d = e.distance
    local row = { string.format("%d", e.rank), e.variant, d.d and fmt(d.d) or
      ("undefined: no positive finite " .. tostring(d.metric)) }
    for i in ipairs(layout.z) do
      local t = d.terms and d.terms[i]
      row[#row + 1] = t and fmt(t.z, "%.3g") or "-"
    end
    for _, col in ipairs(layout.values) do row[#row + 1] = fmt(e.values[col[2]], col[3]) end
    rows[#rows + 1] = row
  end
  add(columns(rows))
  for _, e in ipairs(c.excluded or {}) do
    add(string.format("  excluded: %s (%s)", e.variant, M.excluded_words(e, c.ngram)))
  end
  add(M.sentence(c))
  add("selected for the next stage: " .. (#c.selected > 0 and table.concat(c.selected, ", ")
    or "none"))
  if c.pilot then
    add(string.format("pilot for the next stage's seeds: %s sd %s (%s)", c.pilot.metric,
      fmt(c.pilot.sd), M.pilot_words(c.pilot)))
  end
end

local function pm(x, f)
  if not x then return "-" end
  if x.sd then return fmt(x.mean, f) .. " +- " .. fmt(x.sd, f) end
  return fmt(x.mean, f)
end

-- A pooled subset accuracy: "mean +- sd [min, max]".
local function pool_text(p)
  if not (p and p.mean) then return "-" end
  return string.format("%s +- %s [%s, %s]", fmt(p.mean, "%.3f"), fmt(p.sd, "%.3f"),
    fmt(p.min, "%.2f"), fmt(p.max, "%.2f"))
end

-- The Table-1 layout's rows: {label, whose, cell of a row} ({version 2 only} marked v2).
local TABLE1_ROWS = {
  { "val PPL", "claim", function(x)
    return fmt(x.claim.val_ppl, "%.2f") .. " +- " .. fmt(x.claim.val_ppl_sd, "%.2f")
  end },
  { "", "suite", function(x) return pm(x.val_ppl, "%.2f") end },
  { "mock accuracy", "claim", function(x, c)
    return string.format("%s (%s/%d)", fmt(x.claim.mock_acc, "%.4f"),
      fmt(x.mock_acc_count, "%.1f"), c.claim.mock_acc_samples)
  end },
  { "val accuracy", "suite", function(x) return pm(x.val_acc, "%.4f") end },
  { "50-pos. subset acc.", "suite", function(x) return pool_text(x.subset_acc) end },
  { "  sd of seed means", "suite", function(x)
    return fmt(x.subset_acc.sd_seed_means, "%.3f")
  end },
  { "balanced acc.", "suite", function(x) return pm(x.bal_acc, "%.4f") end, v2 = true },
  { "150-pos. balanced acc.", "suite", function(x) return pool_text(x.bal_subset_acc) end,
    v2 = true },
  { "final grad norm", "claim", function(x) return fmt(x.claim.final_grad_norm, "%.4f") end },
  { "", "suite", function(x) return pm(x.final_grad_norm, "%.4f") end },
  { "embedding norm", "claim", function(x) return fmt(x.claim.embed_norm, "%.2f") end },
  { "", "suite", function(x) return pm(x.embed_norm, "%.2f") end },
  { "distance D", "", function(x)
    return x.distance.d and fmt(x.distance.d, "%.1f") .. (x.distance.matches and " (match)"
      or "") or "-"
  end },
}

-- One effect of a set-up beside the claim's, in a line.
local function effect_line(e)
  return string.format("  %s vs %s on %s: claim %s, suite %s %s, %s%s", e.treatment,
    e.baseline, e.metric, fmt(e.claim), fmt(e.mean), e.ci and string.format("[%s, %s]",
      fmt(e.ci[1]), fmt(e.ci[2])) or "(no interval)", e.verdict or "no verdict",
    e.same_sign == nil and "" or string.format("; sign %s the claim's%s",
      e.same_sign and "matches" or "differs from",
      e.claim_in_interval and ", the claim's effect inside the interval" or
      (e.ci and ", the claim's effect outside the interval" or "")))
end

local function table1_text(c, add)
  for _, su in ipairs(c.setups) do
    local r = su.rows
    local n = r.none.val_ppl and r.none.val_ppl.n or 0
    local from = su.search and su.search.rank and su.search.d and string.format("; %s " ..
      "rank %s at D = %s", su.search.study or "search", fmt(su.search.rank),
      fmt(su.search.d, "%.1f")) or ""
    add(string.format("the claim's Table 1 (%d seeds, %d iterations) beside set-up %s (%d " ..
      "seed%s%s)%s:", c.claim.seeds, c.claim.iters, su.name, n, n == 1 and "" or "s", from,
      c.closest and c.closest.setup == su.name and ", the closest on these seeds" or ""))
    local t = { { "metric", "", "none", "LayerNorm", "RMSNorm" } }
    for _, spec in ipairs(TABLE1_ROWS) do
      if c.distance_version == 2 or not spec.v2 then
        local x = { spec[1], spec[2] }
        for _, k in ipairs(M.ROWS) do x[#x + 1] = spec[3](r[k], c) end
        t[#t + 1] = x
      end
    end
    add(columns(t))
    local sub = r.none.subset_acc
    if sub.n and sub.n > 0 then
      add(string.format("  (subset accuracy: mean +- sd over %d seeds x %d subsets of 50 " ..
        "validation positions, [min, max])", sub.seeds, sub.subsets_per_seed))
    end
    for _, e in ipairs(su.effects) do add(effect_line(e)) end
  end
  local g = c.ngram
  if g.unigram_ppl then
    add(string.format("reference: unigram PPL %s, bigram PPL %s (validation split of %s, " ..
      "fitted on the training split, add-one)", fmt(g.unigram_ppl), fmt(g.bigram_ppl),
      g.corpus))
  elseif g.reason then
    add("reference: no n-gram perplexities (the corpus could not be read)")
  end
  add(M.sentence(c))
end

-- The claim summary as text lines (printed by `bin/repro run` after the verdicts).
function M.text(c)
  local lines = {}
  local function add(line) lines[#lines + 1] = line end
  if c.stage == "search" then search_text(c, add) else table1_text(c, add) end
  return lines
end

return M
