-- The claim stages of a study (analysis.claim) as its study file declares them: the
-- fields, validated by M.check, and the pre-registered distances to the claim's rows
-- they name.  The study stage validates them here; the analysis stage computes the
-- distances and the summary (lua/repro/analysis/claim.lua, whose header gives the
-- definitions and the claim's Table 1).
local M = {}

-- The rows of the claim's Table 1: a set-up's variants, one per embedding norm.
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
--   1 (issue 15): val_ppl, final_grad_norm and embed_norm, weight 1 each.
--   2 (issue 27): val_ppl (the claim's spread), embed_norm (10 %), the balanced accuracy on
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
  for k in pairs(spec) do
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
      "row: 1 (issue 15: PPL, gradient norm, embedding norm) or 2 (issue 27: PPL, embedding " ..
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
      for k in pairs(su) do
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
          for k, v in pairs(su.search) do
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

return M
