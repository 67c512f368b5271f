-- The robust, exploratory companions of a summary's paired comparisons (
-- docs/DESIGN.md "Robust companions"): per comparison and interaction `robust` = the
-- Hodges-Lehmann estimate with its exact Wilcoxon signed-rank interval, the exact
-- signed-rank p and the sign test (stats.robust), and for one with a verdict the
-- leave-one-seed-out check: the decision rule applied again with each seed removed from
-- every comparison of the family, naming the seeds whose removal changes its verdict.
-- Labelled exploratory; nothing of the decision rule reads them.
local stats = require "stats"
local json = require "repro.core.json"
local words = require "repro.analysis.words"

local M = {}
local fmt = words.fmt

M.INTERVAL = "exact Wilcoxon signed-rank"

-- The companions of the pairs (a, b), difference b - a, at level 1 - alpha.
function M.companions(a, b, alpha)
  local r = stats.robust(a, b, { alpha = alpha })
  return { exploratory = true, n = r.n, hodges_lehmann = r.hl,
    ci = r.ci and json.array({ r.ci[1], r.ci[2] }) or nil, ci_level = r.ci_level,
    ci_kind = "signed_rank", alpha = alpha, p_wilcoxon = r.p_wilcoxon, w_plus = r.w_plus,
    p_sign = r.p_sign, positive = r.positive, negative = r.negative, zeros = r.zeros,
    ties = r.ties or nil }
end

-- The leave-one-seed-out check of a family.  family: its entries with their verdicts, in
-- order; seeds: the study's; refit(seeds): the family's entries decided on those seeds
-- alone (in the same order).  Sets robust.leave_one_out on each entry: the seeds left
-- out in turn and the changes {seed =, verdict =}.
function M.leave_one_out(family, seeds, refit)
  if #family == 0 then return end
  local changes = {}
  for i = 1, #family do changes[i] = {} end
  for k, seed in ipairs(seeds) do
    local rest = {}
    for j, s in ipairs(seeds) do if j ~= k then rest[#rest + 1] = s end end
    for i, e in ipairs(refit(rest)) do
      if e.verdict ~= family[i].verdict then
        local list = changes[i]
        list[#list + 1] = { seed = seed, verdict = e.verdict }
      end
    end
  end
  for i, e in ipairs(family) do
    if e.robust then
      e.robust.leave_one_out = { exploratory = true, seeds = #seeds,
        changes = json.array(changes[i]) }
      e.robust.differs = json.array(M.differs(e.robust, e.verdict))
    end
  end
end

-- Where the companions r read differently from a verdict (codes, in this order):
--   sign_test          the sign test rejects at alpha, the verdict is neither better nor
--                      worse;
--   wilcoxon_interval  the Wilcoxon interval excludes 0 and the verdict is neither better
--                      nor worse, or it holds 0 and the verdict is one (an undefined
--                      interval, too few seeds for it, reads no way);
--   leave_one_out      removing one seed changes the verdict.
function M.differs(r, verdict)
  local decided = verdict == "better" or verdict == "worse"
  local codes = {}
  if r.p_sign and r.p_sign <= r.alpha and not decided then codes[#codes + 1] = "sign_test" end
  local excludes = r.ci and (r.ci[1] > 0 or r.ci[2] < 0)
  if r.ci and ((excludes and not decided) or (decided and not excludes)) then
    codes[#codes + 1] = "wilcoxon_interval"
  end
  if r.leave_one_out and #r.leave_one_out.changes > 0 then
    codes[#codes + 1] = "leave_one_out"
  end
  return codes
end

-- The Hodges-Lehmann estimate and its interval: "-0.01466 [-0.03098, 0.01741]", or with
-- "(no interval)" when the test cannot reach alpha with n pairs; nil without one.
function M.hl_text(r)
  if not (r and r.hodges_lehmann) then return nil end
  return fmt(r.hodges_lehmann) .. (r.ci and string.format(" [%s, %s]", fmt(r.ci[1]),
    fmt(r.ci[2])) or " (no interval)")
end

-- The signs and the tests in words: "1 positive, 10 negative (sign test p 0.01172);
-- signed-rank p 0.05371".
function M.signs_text(r)
  local s = string.format("%d positive, %d negative%s", r.positive, r.negative,
    r.zeros > 0 and string.format(", %d zero", r.zeros) or "")
  if r.p_sign then s = s .. " (sign test p " .. fmt(r.p_sign) .. ")" end
  if r.p_wilcoxon then s = s .. "; signed-rank p " .. fmt(r.p_wilcoxon) end
  return s
end

-- A companion in one line (the terminal's, the report's): "exploratory: Hodges-Lehmann
-- ... ; 1 positive, ...; leave one seed out: ...".  nil without companions.
function M.words(r)
  if not r then return nil end
  local parts = { "exploratory, outside the rule: differences " .. M.signs_text(r) }
  if r.hodges_lehmann then
    parts[#parts + 1] = string.format("Hodges-Lehmann %s%s", M.hl_text(r), r.ci_level and
      string.format(" (%s, %s %%)", M.INTERVAL, fmt(100 * r.ci_level)) or "")
  end
  parts[#parts + 1] = M.loso_words(r)
  return table.concat(parts, "; ")
end

-- The leave-one-seed-out check in words, or nil when the entry has none.
function M.loso_words(r)
  local l = r and r.leave_one_out
  if not l then return nil end
  if #l.changes == 0 then return "leave one seed out: no seed's removal changes the verdict" end
  local parts = {}
  for _, c in ipairs(l.changes) do
    parts[#parts + 1] = string.format("without seed %s %s", tostring(c.seed), c.verdict)
  end
  return "leave one seed out: " .. table.concat(parts, ", ")
end

return M
