-- A study's sequential design (analysis.sequential), checked before anything runs.
-- The runs come in looks: at look k each variant has its first looks[k] seeds, in the
-- declared order.  A comparison stops at the first look where its repeated confidence
-- interval decides it (lua/repro/analysis/sequential.lua); the runner trains the next look
-- only for comparisons still open.  The last look is the cap: it equals the study's seeds.
local prob = require "repro.study.problems"

local M = {}

M.SHAPES = { obf = true, pocock = true }
M.TESTS = { signed_rank = true, t = true }
M.STOPS = { difference = true, equivalence = true, futility = true }
M.BOUNDARIES = { constant = true, spending = true }
local FIELDS = { "looks", "shape", "test", "stop", "margin", "target", "sd", "sd_source",
  "boundary" }

-- The design, normalized; P collects the problems.  an: the study's analysis, checked.
function M.check(P, spec, an)
  local path = "analysis.sequential"
  if type(spec) ~= "table" then
    P.add(path, "expected { looks = { n1, n2, ... }, shape = \"obf\" | \"pocock\", test = " ..
      "\"signed_rank\" | \"t\", stop = { \"difference\", \"equivalence\", \"futility\" }, " ..
      "margin =, target =, sd =, sd_source =, boundary = \"constant\" | \"spending\" }")
    return nil
  end
  prob.unknown_fields(P, spec, path, FIELDS, " (expected " .. table.concat(FIELDS, ", ") .. ")")
  local out = { shape = spec.shape, test = spec.test, boundary = spec.boundary or "constant",
    margin = spec.margin or (an or {}).min_effect, target = spec.target, sd = spec.sd,
    sd_source = spec.sd_source, looks = {}, stop = {} }
  local looks = spec.looks
  if type(looks) ~= "table" or #looks < 2 then
    P.add(path .. ".looks", "expected at least 2 look sizes (seeds per variant), increasing",
      "looks")
  else
    for i, n in ipairs(looks) do
      if math.type(n) ~= "integer" or n < 2 or (i > 1 and n <= looks[i - 1]) then
        P.add(string.format("%s.looks[%d]", path, i), "expected an integer >= 2 above the " ..
          "look before it, got " .. tostring(n), "looks")
      end
      out.looks[i] = n
    end
  end
  local function of(set) return function(v) return set[v] end end
  P.need(path .. ".shape", spec.shape, of(M.SHAPES), "expected \"obf\" (O'Brien-Fleming) " ..
    "or \"pocock\", got " .. tostring(spec.shape))
  P.need(path .. ".test", spec.test, of(M.TESTS), "expected \"signed_rank\" (with its " ..
    "Hodges-Lehmann interval) or \"t\", got " .. tostring(spec.test))
  P.need(path .. ".boundary", out.boundary, of(M.BOUNDARIES), "expected \"constant\" (one " ..
    "constant times the shape, calibrated on normal differences; the default) or " ..
    "\"spending\" (alpha spent look by look on the test's exact null: signed-rank signs, " ..
    "or the t by sign flips), got " .. tostring(spec.boundary))
  local futility = false
  if type(spec.stop) ~= "table" or #spec.stop == 0 then
    P.add(path .. ".stop", "expected a non-empty list of \"difference\", \"equivalence\", " ..
      "\"futility\"", "stop")
  else
    for i, x in ipairs(spec.stop) do
      if not M.STOPS[x] then
        P.add(string.format("%s.stop[%d]", path, i), "expected \"difference\", " ..
          "\"equivalence\" or \"futility\", got " .. tostring(x), "stop")
      end
      out.stop[i], futility = x, futility or x == "futility"
    end
  end
  if type(out.margin) ~= "number" or out.margin <= 0 then
    P.add(path .. ".margin", "expected the equivalence margin, a number > 0 (default " ..
      "analysis.min_effect)", "margin")
  end
  if (futility or spec.target ~= nil) and type(spec.target) ~= "number" then
    P.add(path .. ".target", "expected the effect whose exclusion stops for futility, a " ..
      "number (in the primary metric's units)", "target")
  end
  if type(spec.sd) ~= "number" or spec.sd <= 0 then
    P.add(path .. ".sd", "expected the planning sd of a paired difference, a number > 0 " ..
      "(for the expected runs the dry run prints)", "sd")
  end
  if type(spec.sd_source) ~= "string" or spec.sd_source == "" then
    P.add(path .. ".sd_source", "expected where the planning sd comes from (a pilot or " ..
      "an earlier study's summary, named)", "sd_source")
  end
  if an and (#(an.interactions or {}) > 0) then
    P.add(path, "a sequential study compares pairs only: remove analysis.interactions",
      "interactions")
  end
  return out
end

-- The study's seeds against the design: the last look is the cap, the seeds declared.
function M.check_design(P, spec, n_seeds)
  local last = spec.looks[#spec.looks]
  if last and last ~= n_seeds then
    P.add("analysis.sequential.looks", string.format("the last look (%d seeds) must be " ..
      "the study's seeds (%d): it is the cap", last, n_seeds), "looks")
  end
end

return M
