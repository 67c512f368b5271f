-- The claim under test as numbers: the student study's Table 1 (M.TABLE1: the published
-- numbers, inputs typed in nowhere else), the distance D of a set-up's results to one of
-- its rows (M.DISTANCES; a match when D <= M.threshold()), and the two claim stages of a
-- study's analysis, an extension a study names with `extensions = { claim =
-- "paper/lib/claim.lua" }`: { stage = "search", select = k } ranks every variant by D to
-- the claim's `none` row and selects the closest k; { stage = "table1", setups = {...} }
-- lays the claim's Table 1 beside each set-up's numbers.  M.check validates, M.summarize
-- writes summary.json's `claim`, M.text prints it.  More: lua/experiments/README.md.
local stats = require "stats"
local json = require "repro.core.json"
local base = require "repro.core.base"
local textable = require "repro.core.textable"

local M = {}

M.SOURCE = "the student study's Table 1 (3 seeds, 150 iterations, means; perplexity +- " ..
  "its spread over the 3 seeds), as quoted by the project that set this study"

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
local ROW = {}
for _, r in ipairs(M.ROWS) do ROW[r] = true end


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

local function version_of(v) return M.DISTANCES[v or 1] end

function M.threshold(version)
  local w = 0
  for _, t in ipairs(version_of(version).terms) do w = w + t.weight end
  return w * M.Z_MATCH * M.Z_MATCH
end

-- The definitions as the summaries quote them: they name this module by its path before
-- the stage folders (lua/repro/claim.lua), kept so that committed summaries regenerate
-- byte for byte.
M.DEFINITION2 = string.format("D = sum of w z^2 over val_ppl (z = ln(x / c) / (the " ..
  "claim's sd / mean), w = 1), embed_norm (z = ln(x / c) / 0.1, w = 1), the balanced " ..
  "accuracy on 150 positions bal_subset_acc_mean against the claim's mock macro accuracy " ..
  "(z = (x - c) / sqrt(c (1 - c) / 150), w = 1) and final_grad_norm (z = ln(x / c) / 0.25, " ..
  "w = 1/4), x the set-up's mean over its seeds, c the claim's Table 1 value. A set-up " ..
  "matches the claim's row when D <= %g (2^2 x the weights' sum 3.25: a weighted root-" ..
  "mean-square z of at most 2). Set-ups whose validation PPL is at or above the unigram " ..
  "perplexity of the validation split are excluded before ranking (lua/repro/claim.lua)",
  M.threshold(2))
M.DEFINITION = string.format("D = sum over val_ppl, final_grad_norm and embed_norm of " ..
  "(ln(x / c) / sigma)^2, x the set-up's mean over its seeds, c the claim's Table 1 value; " ..
  "sigma = the claim's own relative spread where it gives one (val_ppl: sd / mean), else " ..
  "%g (a %g %% tolerance: the claim gives no spread for the gradient and embedding norms). " ..
  "A set-up matches the claim's row when D <= %g (%d terms x %g^2: a root-mean-square z of " ..
  "at most %g) (lua/repro/claim.lua)", M.TOLERANCE, 100 * M.TOLERANCE, M.threshold(),
  #M.DISTANCES[1].terms, M.Z_MATCH, M.Z_MATCH)

local finite = base.finite

local function fmt(x, f)
  if x == nil then return "-" end
  local s = string.format(f or "%.4g", x)
  return s == "-0" and "0" or s
end

-- The tolerance of term `term` for the claim's row `row`: sigma and where it comes from.
local function sigma_of(term, row)
  local c = M.TABLE1.rows[row]
  if term.spread and c[term.spread] then
    return c[term.spread] / c[term.metric], "spread"
  end
  if term.binomial then
    local p = c[term.claim_field]
    return math.sqrt(p * (1 - p) / term.binomial), "binomial"
  end
  return term.sigma, "tolerance"
end

-- The distance of `values` ({metric -> number}) to the claim's row `row` (default "none")
-- by distance `version` (default 1): { d, rms_z, matches, terms = {{metric, value,
-- claim, log_ratio (log terms) or difference, sigma, z[, weight]}} }, or nil and the
-- reason.
function M.distance(values, row, version)
  row = row or "none"
  local c = M.TABLE1.rows[row]
  if not c then error("claim.distance: unknown row '" .. tostring(row) .. "'", 2) end
  local def = version_of(version)
  if not def then error("claim.distance: unknown version " .. tostring(version), 2) end
  local d, w, terms = 0.0, 0.0, json.array({})
  for _, term in ipairs(def.terms) do
    local x = values[term.metric]
    if not finite(x) or x < 0 or (x == 0 and not term.binomial) then
      return nil, string.format("no positive finite %s", term.metric), term.metric
    end
    local sigma, source = sigma_of(term, row)
    local cv = c[term.claim_field or term.metric]
    local e = { metric = term.metric, value = x, claim = cv, sigma = sigma,
      sigma_source = source }
    if term.binomial then
      e.difference = x - cv
      e.z = e.difference / sigma
    else
      e.log_ratio = math.log(x / cv)
      e.z = e.log_ratio / sigma
    end
    if version and version > 1 then e.weight = term.weight end
    d, w = d + term.weight * e.z * e.z, w + term.weight
    terms[#terms + 1] = e
  end
  return { d = d, rms_z = math.sqrt(d / w), matches = d <= M.threshold(version),
    terms = terms }
end

-- The entries ({variant, values, ...}) ranked by their distance to `row`: each gets
-- distance (the M.distance table, or nil with `reason`) and rank; ties and undefined
-- distances keep the given order, undefined ones last.  Returns a new list.
function M.rank(entries, row, version)
  local list = {}
  for i, e in ipairs(entries) do
    local r, why, missing = M.distance(e.values, row, version)
    local x = {}
    for k, v in pairs(e) do x[k] = v end
    x.distance, x.reason, x.missing, x.order = r, why, missing, i
    list[#list + 1] = x
  end
  table.sort(list, function(a, b)
    local da, db = a.distance and a.distance.d, b.distance and b.distance.d
    if da and db and da ~= db then return da < db end
    if (da == nil) ~= (db == nil) then return da ~= nil end
    return a.order < b.order
  end)
  for i, x in ipairs(list) do
    x.rank, x.order = i, nil
  end
  return list
end

-- analysis.claim of a study file, validated (P is lua/repro/study/init.lua's problem
-- collector; variants maps a variant name to {overrides}).  Returns the normalized spec.
function M.check(P, spec, variants, names)
  if type(spec) ~= "table" then
    P.add("analysis.claim", "expected a table { stage = \"search\", select = k } or " ..
      "{ stage = \"table1\", setups = {...} }", "claim")
    return nil
  end
  local allowed = spec.stage == "search" and { stage = true, select = true, distance = true,
    pilot = true } or { stage = true, setups = true, distance = true }
  for _, k in ipairs(base.sorted_keys(spec)) do
    if not allowed[k] then
      P.add("analysis.claim." .. tostring(k), "unknown field for stage " ..
        tostring(spec.stage), tostring(k))
    end
  end
  local version = spec.distance
  if version == nil then version = 1 end
  if math.type(version) == "float" and version == math.floor(version) then
    version = math.tointeger(version)
  end
  if not M.DISTANCES[version] then
    P.add("analysis.claim.distance", "expected the version of the distance to the claim's " ..
      "row: 1 (PPL, gradient norm, embedding norm) or 2 (PPL, embedding " ..
      "norm, balanced accuracy on 150 positions, gradient norm at weight 1/4; set-ups at or " ..
      "above the unigram perplexity excluded)", "distance")
    return nil
  end
  if spec.stage == "search" then
    local k = spec.select
    if math.type(k) == "float" and k == math.floor(k) then k = math.tointeger(k) end
    if math.type(k) ~= "integer" or k < 1 or k > #names then
      P.add("analysis.claim.select", string.format("expected the number of closest set-ups " ..
        "to select, an integer from 1 to %d (the variants)", #names), "select")
      return nil
    end
    local pilot = spec.pilot
    if math.type(pilot) == "float" and pilot == math.floor(pilot) then
      pilot = math.tointeger(pilot)
    end
    if pilot ~= nil and (math.type(pilot) ~= "integer" or pilot < 1 or version < 2) then
      P.add("analysis.claim.pilot", "expected the number of closest admissible set-ups whose " ..
        "seed-to-seed differences make the pilot sd for the next stage, an integer >= 1 " ..
        "(distance 2 only)", "pilot")
      return nil
    end
    return { stage = "search", select = k, distance = spec.distance and version or nil,
      pilot = pilot }
  elseif spec.stage ~= "table1" then
    P.add("analysis.claim.stage", "expected \"search\" or \"table1\", got " ..
      tostring(spec.stage), "stage")
    return nil
  end
  local setups = spec.setups
  if type(setups) ~= "table" or #setups == 0 then
    P.add("analysis.claim.setups", "expected a non-empty list of { name =, none =, " ..
      "layernorm =, rmsnorm = } (variant names)", "setups")
    return nil
  end
  local out, seen, ok = {}, {}, true
  for i, su in ipairs(setups) do
    local path = string.format("analysis.claim.setups[%d]", i)
    if type(su) ~= "table" or type(su.name) ~= "string" or su.name == "" then
      P.add(path, "expected { name = \"...\", none =, layernorm =, rmsnorm = }", "setups")
      ok = false
    elseif seen[su.name] then
      P.add(path .. ".name", "set-up '" .. su.name .. "' is listed twice", su.name, 2)
      ok = false
    else
      seen[su.name] = true
      local e = { name = su.name }
      for _, k in ipairs(base.sorted_keys(su)) do
        if k ~= "name" and k ~= "search" and not ROW[k] then
          P.add(path .. "." .. tostring(k), "unknown field (expected name, none, " ..
            "layernorm, rmsnorm, search)", tostring(k))
          ok = false
        end
      end
      for _, row in ipairs(M.ROWS) do
        local v = su[row]
        if type(v) ~= "string" or not variants[v] then
          P.add(path .. "." .. row, "expected the name of this set-up's " .. row ..
            " variant, got " .. tostring(v), row)
          ok = false
        else
          local norm = variants[v].overrides.embed_norm or "none"
          if norm ~= row then
            P.add(path .. "." .. row, string.format("variant '%s' has embed_norm %s, not %s",
              v, norm, row), v)
            ok = false
          end
          e[row] = v
        end
      end
      if su.search ~= nil then
        if type(su.search) ~= "table" then
          P.add(path .. ".search", "expected a table of the search's numbers", "search")
          ok = false
        else
          e.search = {}
          for _, k in ipairs(base.sorted_keys(su.search)) do
            local v = su.search[k]
            if type(k) ~= "string" or (type(v) ~= "number" and type(v) ~= "string" and
                type(v) ~= "boolean") then
              P.add(path .. ".search." .. tostring(k), "expected a plain number, string or " ..
                "boolean", tostring(k))
              ok = false
            else
              e.search[k] = v
            end
          end
        end
      end
      out[#out + 1] = e
    end
  end
  return ok and { stage = "table1", setups = out, distance = spec.distance and version or nil }
    or nil
end

-- Mean and sd over a variant's seeds of metric m, from the summary's per_variant.
local function moments(per_variant, variant, m)
  local pv = per_variant[variant]
  local x = pv and pv.metrics[m]
  if not x or not x.mean then return nil end
  return { mean = x.mean, sd = x.sd, n = x.n }
end

local function means(per_variant, variant, version)
  local v = {}
  for _, term in ipairs(version_of(version).terms) do
    local x = moments(per_variant, variant, term.metric)
    v[term.metric] = x and x.mean
  end
  return v
end

-- The unigram and bigram perplexities of the study's validation split (engine/ngram.h).
local function ngram_of(s)
  local data = s.runs[1] and s.runs[1].cfg.data
  if not data then return {} end
  local path = require("repro.record").data_path(s.runs[1].cfg)
  local ok, r = pcall(require("engine").ngram_ppl, path)
  if not ok then return { corpus = data, reason = "unavailable" } end
  return { corpus = data, unigram_ppl = r.unigram_ppl, bigram_ppl = r.bigram_ppl,
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
  local seeds = {}
  for _, x in ipairs(s.seeds) do seeds[#seeds + 1] = x end
  table.sort(seeds)
  if #seeds < 2 then return nil end
  local ss, used = 0.0, json.array({})
  -- the first k of `names` whose two seeds both have a finite value
  local function take(names)
    for _, name in ipairs(names) do
      if #used >= k then break end
      local r1 = runs[name] and runs[name][seeds[1]]
      local r2 = runs[name] and runs[name][seeds[2]]
      local a = r1 and not r1.diverged and r1.values[metric]
      local b = r2 and not r2.diverged and r2.values[metric]
      if finite(a) and finite(b) then
        ss = ss + (a - b) ^ 2
        used[#used + 1] = { variant = name, difference = a - b }
      end
    end
  end
  local names = {}
  for i, e in ipairs(ranked) do names[i] = e.variant end
  take(names)
  local over = "closest admissible set-ups"
  if #used == 0 then
    -- no admissible set-up (a tiny test budget): every set-up's, said in the definition
    over = "set-ups (none is admissible: every one of them)"
    names = {}
    for i, v in ipairs(s.variants) do names[i] = v.name end
    take(names)
  end
  if #used == 0 then return nil end
  return { treatment = "seed-" .. seeds[2], baseline = "seed-" .. seeds[1], metric = metric,
    sd = math.sqrt(ss / #used), n = #used, df = #used, setups = used,
    admissible = over == "closest admissible set-ups" }
end

local function distance_out(e)
  if not e.distance then return { reason = "not_positive", metric = e.missing } end
  local r = e.distance
  return { d = r.d, rms_z = r.rms_z, matches = r.matches, terms = r.terms }
end

-- The largest |z| term of a distance, as "metric (z = ...)".
local function worst_term(r)
  local w
  for _, t in ipairs(r.terms) do
    if not w or math.abs(t.z) > math.abs(w.z) then w = t end
  end
  return string.format("%s (z = %s: %s vs %s)", w.metric, fmt(w.z, "%.3g"), fmt(w.value),
    fmt(w.claim))
end

local function search_summary(s, runs, out)
  local spec = s.analysis.claim
  local version = spec.distance
  local entries, excluded, ngram = {}, json.array({}), nil
  if version_of(version).exclude_unigram then ngram = ngram_of(s) end
  for _, v in ipairs(s.variants) do
    local values = means(out.per_variant, v.name, version)
    local ppl = moments(out.per_variant, v.name, "val_ppl")
    ppl = ppl and ppl.mean
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
      values = json.object(e.values), distance = distance_out(e) }
    if e.distance and #selected < spec.select then selected[#selected + 1] = e.variant end
  end
  local pilot = spec.pilot and search_pilot(s, runs, ranked, spec.pilot, s.analysis.primary)
  local best = ranked[1]
  return {
    stage = "search", row = "none", claim = json.object(M.TABLE1.rows.none),
    distance_version = version,
    tolerance = not version and M.TOLERANCE or nil, z_match = M.Z_MATCH,
    threshold = M.threshold(version),
    ranking = ranking, select = spec.select, selected = selected,
    excluded = ngram and excluded or nil,
    ngram = ngram and json.object(ngram) or nil,
    closest = best and best.distance and { variant = best.variant, d = best.distance.d,
      matches = best.distance.matches } or nil,
    matches_any = best ~= nil and best.distance ~= nil and best.distance.matches,
    pilot = pilot, n_setups = #s.variants,
  }
end

-- Subset accuracy of a variant (field: subset_acc, or bal_subset_acc), pooled over its
-- seeds and subsets.
local function subset_pool(runs, variant, seeds, field)
  local all, seed_means = {}, {}
  for _, seed in ipairs(seeds) do
    local r = runs[variant] and runs[variant][seed]
    local list = r and not r.diverged and r[field or "subset_acc"]
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

local function table1_summary(s, runs, out)
  local spec, an = s.analysis.claim, out.analysis
  local version = spec.distance
  local ngram = ngram_of(s)
  local by_pair = {}
  for _, c in ipairs(out.comparisons) do
    if c.metric == an.primary then by_pair[c.treatment .. "\0" .. c.baseline] = c end
  end
  local setups = json.array({})
  local best
  for _, su in ipairs(spec.setups) do
    local rows, effects = {}, json.array({})
    local total, all = 0.0, true
    for _, row in ipairs(M.ROWS) do
      local v = su[row]
      local r = { variant = v, claim = json.object(M.TABLE1.rows[row]) }
      for _, m in ipairs({ "val_ppl", "val_loss", "val_acc", "final_grad_norm",
          "embed_norm" }) do
        r[m] = moments(out.per_variant, v, m)
      end
      r.subset_acc = subset_pool(runs, v, s.seeds)
      if version == 2 then
        r.bal_acc = moments(out.per_variant, v, "bal_acc")
        r.bal_subset_acc = subset_pool(runs, v, s.seeds, "bal_subset_acc")
      end
      r.mock_acc_count = M.TABLE1.rows[row].mock_acc * M.TABLE1.mock_acc_samples
      local e = { values = means(out.per_variant, v, version) }
      local d, _, missing = M.distance(e.values, row, version)
      r.distance = d and { d = d.d, rms_z = d.rms_z, matches = d.matches, terms = d.terms } or
        { reason = "not_positive", metric = missing }
      if d then total = total + d.d else all = false end
      rows[row] = r
    end
    for _, pair in ipairs({ { "layernorm", "none" }, { "rmsnorm", "none" },
        { "layernorm", "rmsnorm" } }) do
      local c = by_pair[su[pair[1]] .. "\0" .. su[pair[2]]]
      if c then
        local ce = claim_effect(an.primary, pair[1], pair[2])
        local ci = c.ci_decision
        effects[#effects + 1] = { treatment = pair[1], baseline = pair[2],
          metric = an.primary, claim = ce, mean = c.mean, ci = ci, ci_kind = c.ci_decision_kind,
          p_holm = c.p_holm, verdict = c.verdict, n = c.n,
          same_sign = ce and c.mean and (ce < 0) == (c.mean < 0) or nil,
          claim_in_interval = ce and ci and ci[1] <= ce and ce <= ci[2] or nil }
      end
    end
    local entry = { name = su.name, search = su.search and json.object(su.search) or nil,
      rows = rows, distance_none = rows.none.distance.d, distance_total = all and total or nil,
      matches = rows.none.distance.matches == true, effects = effects }
    setups[#setups + 1] = entry
    if entry.distance_none and (not best or entry.distance_none < best.distance_none) then
      best = entry
    end
  end
  return {
    stage = "table1",
    claim = json.object({
      seeds = M.TABLE1.seeds, iters = M.TABLE1.iters,
      mock_acc_samples = M.TABLE1.mock_acc_samples }),
    distance_version = version,
    tolerance = not version and M.TOLERANCE or nil, z_match = M.Z_MATCH,
    threshold = M.threshold(version),
    ngram = json.object(ngram), setups = setups,
    closest = best and { setup = best.name, d = best.distance_none, matches = best.matches }
      or nil,
    matches_any = best ~= nil and best.matches,
  }
end

-- summary.json's `claim` for study s (lua/repro/study/init.lua) with runs[variant][seed] (as
-- analysis.read_run returns them) and the rest of its summary `out`.
function M.summarize(s, runs, out)
  local spec = s.analysis.claim
  local r = spec.stage == "search" and search_summary(s, runs, out) or
    table1_summary(s, runs, out)
  return r
end

local function pm(x, f)
  if not x then return "-" end
  if x.sd then return fmt(x.mean, f) .. " +- " .. fmt(x.sd, f) end
  return fmt(x.mean, f)
end

-- Rows as text lines, columns padded to their widths.
local function columns(rows)
  return (textable.render(rows, { indent = "  " }):gsub("\n$", ""))
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

-- The claim section's finding in one sentence.
function M.sentence(c)
  local threshold = fmt(c.threshold)
  if c.stage == "search" then
    local best = c.ranking[1]
    local sentence
    if not best or not best.distance.d then
      sentence = "No set-up has a distance: every one lacks a positive finite value."
    else
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
  local best
  for _, su in ipairs(c.setups) do
    if c.closest and su.name == c.closest.setup then best = su end
  end
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

-- The claim summary as text lines (printed by `bin/repro run` after the verdicts).
function M.text(c)
  local lines = {}
  local function add(line) lines[#lines + 1] = line end
  if c.stage == "search" and c.distance_version == 2 then
    add(string.format("distance 2 to the claim's baseline row (PPL %s +- %s, embedding norm " ..
      "%s, mock macro accuracy %s read as balanced accuracy on 150 positions, final grad " ..
      "norm %s at weight 1/4; threshold %s):", fmt(c.claim.val_ppl), fmt(c.claim.val_ppl_sd),
      fmt(c.claim.embed_norm), fmt(c.claim.mock_acc), fmt(c.claim.final_grad_norm),
      fmt(c.threshold)))
    local rows = { { "rank", "set-up", "D", "z ppl", "z embed", "z bal150", "z grad",
      "val PPL", "bal acc 150", "embed norm" } }
    for _, e in ipairs(c.ranking) do
      local d, z = e.distance, {}
      for i, t in ipairs(d.terms or {}) do z[i] = fmt(t.z, "%.3g") end
      rows[#rows + 1] = { string.format("%d", e.rank), e.variant, d.d and fmt(d.d) or
        ("undefined: no positive finite " .. tostring(d.metric)), z[1] or "-", z[2] or "-", z[3] or "-",
        z[4] or "-", fmt(e.values.val_ppl), fmt(e.values.bal_subset_acc_mean, "%.4f"),
        fmt(e.values.embed_norm) }
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
    return lines
  end
  if c.stage == "search" then
    add(string.format("distance to the claim's baseline row (PPL %s +- %s, final grad norm " ..
      "%s, embedding norm %s; threshold %s):", fmt(c.claim.val_ppl), fmt(c.claim.val_ppl_sd),
      fmt(c.claim.final_grad_norm), fmt(c.claim.embed_norm), fmt(c.threshold)))
    local rows = { { "rank", "set-up", "D", "z ppl", "z grad", "z embed", "val PPL",
      "grad norm", "embed norm" } }
    for _, e in ipairs(c.ranking) do
      local d, z = e.distance, {}
      for i, t in ipairs(d.terms or {}) do z[i] = fmt(t.z, "%.3g") end
      rows[#rows + 1] = { string.format("%d", e.rank), e.variant, d.d and fmt(d.d) or
        ("undefined: no positive finite " .. tostring(d.metric)), z[1] or "-", z[2] or "-", z[3] or "-",
        fmt(e.values.val_ppl), fmt(e.values.final_grad_norm), fmt(e.values.embed_norm) }
    end
    add(columns(rows))
    add(M.sentence(c))
    add("selected for the next stage: " .. (#c.selected > 0 and table.concat(c.selected, ", ")
      or "none"))
    return lines
  end
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
    local function row(label, who, f)
      local x = { label, who }
      for _, k in ipairs(M.ROWS) do x[#x + 1] = f(r[k]) end
      t[#t + 1] = x
    end
    row("val PPL", "claim", function(x) return fmt(x.claim.val_ppl, "%.2f") .. " +- " ..
      fmt(x.claim.val_ppl_sd, "%.2f") end)
    row("", "suite", function(x) return pm(x.val_ppl, "%.2f") end)
    row("mock accuracy", "claim", function(x) return string.format("%s (%s/%d)",
      fmt(x.claim.mock_acc, "%.4f"), fmt(x.mock_acc_count, "%.1f"),
      c.claim.mock_acc_samples) end)
    row("val accuracy", "suite", function(x) return pm(x.val_acc, "%.4f") end)
    row("50-pos. subset acc.", "suite", function(x)
      local p = x.subset_acc
      if not p.mean then return "-" end
      return string.format("%s +- %s [%s, %s]", fmt(p.mean, "%.3f"), fmt(p.sd, "%.3f"),
        fmt(p.min, "%.2f"), fmt(p.max, "%.2f"))
    end)
    row("  sd of seed means", "suite", function(x) return fmt(x.subset_acc.sd_seed_means,
      "%.3f") end)
    if c.distance_version == 2 then
      row("balanced acc.", "suite", function(x) return pm(x.bal_acc, "%.4f") end)
      row("150-pos. balanced acc.", "suite", function(x)
        local p = x.bal_subset_acc
        if not p or not p.mean then return "-" end
        return string.format("%s +- %s [%s, %s]", fmt(p.mean, "%.3f"), fmt(p.sd, "%.3f"),
          fmt(p.min, "%.2f"), fmt(p.max, "%.2f"))
      end)
    end
    row("final grad norm", "claim", function(x) return fmt(x.claim.final_grad_norm, "%.4f") end)
    row("", "suite", function(x) return pm(x.final_grad_norm, "%.4f") end)
    row("embedding norm", "claim", function(x) return fmt(x.claim.embed_norm, "%.2f") end)
    row("", "suite", function(x) return pm(x.embed_norm, "%.2f") end)
    row("distance D", "", function(x) return x.distance.d and string.format("%s%s",
      fmt(x.distance.d, "%.1f"), x.distance.matches and " (match)" or "") or "-" end)
    add(columns(t))
    local sub = r.none.subset_acc
    if sub.n and sub.n > 0 then
      add(string.format("  (subset accuracy: mean +- sd over %d seeds x %d subsets of 50 " ..
        "validation positions, [min, max])", sub.seeds, sub.subsets_per_seed))
    end
    for _, e in ipairs(su.effects) do
      add(string.format("  %s vs %s on %s: claim %s, suite %s %s, %s%s", e.treatment,
        e.baseline, e.metric, fmt(e.claim), fmt(e.mean), e.ci and string.format("[%s, %s]",
          fmt(e.ci[1]), fmt(e.ci[2])) or "(no interval)", e.verdict or "no verdict",
        e.same_sign == nil and "" or string.format("; sign %s the claim's%s",
          e.same_sign and "matches" or "differs from",
          e.claim_in_interval and ", the claim's effect inside the interval" or
          (e.ci and ", the claim's effect outside the interval" or ""))))
    end
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
  return lines
end

return M
