-- An original estimate a study replicates: the optional `original` of a comparison in
-- analysis.comparisons, one entry or a list.  M.check checks and normalizes it (its fields:
-- lua/experiments/README.md); analysis/replication.lua compares it with the comparison's
-- paired result by docs/DESIGN.md's "Replication verdicts".
local base = require "repro.core.base"
local prob = require "repro.study.problems"

local M = {}

local is_list = prob.is_list

M.FIELDS = { "claim", "source", "metric", "estimate", "se", "n", "design", "arms", "scale",
  "matches", "margin", "declared", "note" }
local ARM_FIELDS = { "mean", "sd", "n" }

local positive = prob.positive
local function count(v) return math.type(v) == "integer" and v >= 2 end
local function text(v) return type(v) == "string" and v ~= "" and #v <= 2000 end

-- One arm {mean =, sd =, n =} at path; the normalized arm or nil.
local function check_arm(P, arm, path, log_ratio)
  if type(arm) ~= "table" then
    P.add(path, "expected { mean = <number>, sd = <number > 0>, n = <integer >= 2> }")
    return nil
  end
  local ok = prob.unknown_fields(P, arm, path, ARM_FIELDS, " (expected mean, sd, n)")
  if not (type(arm.mean) == "number" and arm.mean == arm.mean and math.abs(arm.mean) < math.huge)
      or (log_ratio and not (arm.mean > 0)) then
    P.add(path .. ".mean", "expected a finite number" .. (log_ratio and " > 0 (scale " ..
      "log_ratio takes the log of the arms' ratio)" or ""))
    ok = false
  end
  if arm.sd ~= nil and not positive(arm.sd) then
    P.add(path .. ".sd", "expected a number > 0 (the spread over the original's seeds)")
    ok = false
  end
  if arm.n ~= nil and not count(arm.n) then
    P.add(path .. ".n", "expected an integer >= 2 (the original's seeds)")
    ok = false
  end
  return ok and { mean = arm.mean, sd = arm.sd, n = arm.n } or nil
end

-- One entry at path for the comparison {t, b}; metrics: the set of metrics compared.
local function check_entry(P, o, path, pair, metrics)
  if type(o) ~= "table" then
    P.add(path, "expected a table { claim =, source =, metric =, estimate = | arms =, " ..
      "matches = }")
    return nil
  end
  local ok = prob.unknown_fields(P, o, path, M.FIELDS)
  local function need(field, good, what)
    if not good(o[field]) then
      P.add(path .. "." .. field, "expected " .. what, o[field] == nil and field or nil)
      ok = false
    end
  end
  need("claim", function(v)
    return type(v) == "string" and v:match("^[%w][%w_.-]*$") and #v <= 64
  end, "a name (letters, digits, _ . -): the claim this entry tests")
  need("source", text, "a text naming where the original number comes from")
  need("metric", function(v) return type(v) == "string" and metrics[v] end,
    "one of the metrics compared (analysis.metrics or secondary)")
  need("matches", function(v) return type(v) == "boolean" end,
    "true or false: whether this set-up matches the original's")
  if o.margin ~= nil then need("margin", positive, "a number > 0 in the metric's units") end
  if o.note ~= nil then need("note", text, "a text") end
  if o.declared ~= nil then
    need("declared", function(v) return v == "before runs" or v == "after runs" end,
      "\"before runs\" or \"after runs\"")
  end
  local scale = o.scale or "difference"
  if scale ~= "difference" and scale ~= "log_ratio" then
    P.add(path .. ".scale", "expected \"difference\" or \"log_ratio\"")
    ok = false
  end
  local out = { claim = o.claim, source = o.source, metric = o.metric, matches = o.matches,
    margin = o.margin, declared = o.declared, note = o.note, scale = scale,
    treatment = pair[1], baseline = pair[2] }
  if (o.estimate ~= nil) == (o.arms ~= nil) then
    P.add(path, "expected either estimate (with se, n, design) or arms, not " ..
      (o.estimate ~= nil and "both" or "neither"), "original")
    return nil
  end
  if o.arms ~= nil then
    for _, k in ipairs({ "se", "n", "design" }) do
      if o[k] ~= nil then
        P.add(path .. "." .. k, "goes with estimate, not with arms (give each arm's sd and n)")
        ok = false
      end
    end
    if type(o.arms) ~= "table" or is_list(o.arms) and #o.arms > 0 then
      P.add(path .. ".arms", "expected { baseline = { mean =, sd =, n = }, treatment = { ... } }")
      return nil
    end
    for _, k in ipairs(base.sorted_keys(o.arms)) do
      if k ~= "baseline" and k ~= "treatment" then
        P.add(path .. ".arms." .. tostring(k), "unknown arm (expected baseline, treatment)",
          tostring(k))
        ok = false
      end
    end
    local lr = scale == "log_ratio"
    local b = check_arm(P, o.arms.baseline, path .. ".arms.baseline", lr)
    local t = check_arm(P, o.arms.treatment, path .. ".arms.treatment", lr)
    if not (b and t) then return nil end
    if (b.sd == nil) ~= (t.sd == nil) or (b.n == nil) ~= (t.n == nil) or
        (b.sd ~= nil and b.n == nil) then
      P.add(path .. ".arms", "give sd and n for both arms (for the original's sampling error) " ..
        "or for neither (the direction alone)", "arms")
      return nil
    end
    out.arms = { baseline = b, treatment = t }
  else
    need("estimate", function(v) return type(v) == "number" and v == v and
      math.abs(v) < math.huge end, "a finite number: the original's treatment - baseline")
    if scale ~= "difference" then
      P.add(path .. ".scale", "goes with arms (an estimate is given in the metric's units)")
      ok = false
    end
    if o.se ~= nil or o.n ~= nil or o.design ~= nil then
      need("se", positive, "a number > 0: the original estimate's standard error")
      need("n", count, "an integer >= 2: the original's pairs, or seeds per group")
      need("design", function(v) return v == "paired" or v == "unpaired" end,
        "\"paired\" (n pairs) or \"unpaired\" (two groups of n)")
    end
    out.estimate, out.se, out.n, out.design = o.estimate, o.se, o.n, o.design
  end
  return ok and out or nil
end

-- The entries of the comparison pair's `original` (one entry or a list) at path
-- ("analysis.comparisons[i].original"), normalized as a list; metrics: the set of
-- metrics the study compares.
function M.check(P, original, path, pair, metrics)
  local list = (type(original) == "table" and is_list(original) and #original > 0) and original
    or { original }
  local out = {}
  for i, o in ipairs(list) do
    local e = check_entry(P, o, #list > 1 and (path .. "[" .. i .. "]") or path, pair, metrics)
    if e then out[#out + 1] = e end
  end
  return out
end

return M
