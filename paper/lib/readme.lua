-- README.md's Results paragraph, generated from the summaries of this paper's studies
-- (paper/paper.lua: extensions), so that it cannot fall behind them: the report writes
-- paper/results.md (this file's `outputs`), `make paper` copies it into README.md
-- between the results markers (scripts/readme_results.lua), and test_prose fails when the
-- two differ.  A study that has not run leaves its line out.  Plain Markdown; the
-- numbers formatted as the paper prints them.
local F = require "repro.report.texfmt"

local M = {}

local function pct(r)
  return F.finite(r) and string.format("%+.2f %%", 100 * r) or "?"
end

local function num(x, dec)
  return F.finite(x) and string.format("%." .. dec .. "f", x) or "?"
end

local function interval(ci, dec)
  if type(ci) ~= "table" or not F.finite(ci[1]) then return "" end
  return string.format(" [%s, %s]", num(ci[1], dec), num(ci[2], dec))
end

-- The primary comparison of treatment t against baseline b in study s, and its verdict.
local function cmp(s, t, b)
  if not s then return nil end
  for _, c in ipairs(s.summary.comparisons or {}) do
    if c.treatment == t and c.baseline == b and c.metric == s.primary then
      local v = s:verdict(c)
      return c, v and v.verdict or "?"
    end
  end
  return nil
end

local function effect(s, t, b)
  local c, v = cmp(s, t, b)
  if not c then return nil end
  return string.format("%s (*%s*)", pct(c.val_ppl_change), v)
end

local function lines(ctx)
  local S, out = ctx.by_name, {}
  local function add(text) if text then out[#out + 1] = "- " .. text end end
  local final, tuned = effect(S.final, "layernorm", "none"), effect(S.tuned, "layernorm", "none")
  local rfinal, rtuned = effect(S.final, "rmsnorm", "none"), effect(S.tuned, "rmsnorm", "none")
  if final and tuned and rfinal and rtuned then
    add(string.format("**At the GPT-2 initialization** (embeddings N(0, 0.02)) an embedding " ..
      "LayerNorm changes validation perplexity by %s at the claim's learning rate (`final`) " ..
      "and by %s with each variant at its own best learning rate (`tuned`); RMSNorm by %s " ..
      "and %s.", final, tuned, rfinal, rtuned))
  end
  local claim = S.claim
  local cl = claim and claim.summary.claim and claim.summary.claim.closest
  if cl and cl.setup then
    local close = effect(claim, cl.setup .. "-layernorm", cl.setup .. "-none")
    local ref = effect(claim, "ref-layernorm", "ref-none")
    if close and ref then
      add(string.format("**The claim's set-up.** The claim's numbers point to PyTorch's default " ..
        "initialization of a 4-block model whose output layer is tied to its N(0, 1) token " ..
        "embedding; there (`claim`, %d fresh seeds) LayerNorm changes perplexity by %s, and " ..
        "at the GPT-2 initialization of the same model by %s: the claimed gain comes from " ..
        "the initialization, not from the layer.", #claim.seeds, close, ref))
    end
  end
  local sc = effect(S.tuned_controls, "scale", "none")
  local tmc, v = cmp(S.tuned_matched, "layernorm_matched", "none")
  if sc and tmc then
    add(string.format("**Rescaling, not normalizing.** Rescaling the embedding to unit RMS " ..
      "without normalizing changes perplexity by %s; normalizing without rescaling " ..
      "(matched LayerNorm), at finely tuned learning rates on %d power-sized seeds " ..
      "(`tuned_matched`), by %s: *%s* to no norm within the minimum effect (loss " ..
      "difference %s nats%s).", sc, #S.tuned_matched.seeds, pct(tmc.val_ppl_change), v,
      num(tmc.mean, 4), interval(tmc.ci_decision, 4)))
  end
  local is1 = effect(S.init_scale, "layernorm-std1", "none-std1")
  local ts1, v1 = cmp(S.tuned_std1, "layernorm", "none")
  if is1 and ts1 then
    add(string.format("**Embeddings drawn N(0, 1).** LayerNorm changes perplexity by %s at the " ..
      "shared learning rate (`init_scale`), but by %s (*%s*; loss difference %s nats%s) with " ..
      "each variant at its own best (`tuned_std1`).", is1, pct(ts1.val_ppl_change), v1,
      num(ts1.mean, 4), interval(ts1.ci_decision, 4)))
  end
  local sw = S.lr_sweep and S.lr_sweep.summary.lr_sweep
  local ln = sw and sw.groups.layernorm and sw.groups.layernorm.sensitivity
  if ln and ln.own then
    add(string.format("**Learning-rate sensitivity** (`lr_sweep`). Against the best loss of " ..
      "any variant, LayerNorm's S exceeds no norm's by %s%s nats, which is mostly the offset " ..
      "between the curves; against each variant's own best, its S_own is lower by %s%s: " ..
      "a norm raises the loss floor but loses less away from its optimum.",
      num(ln.diff, 3), interval(ln.diff_ci, 3), num(-ln.own.diff, 3),
      interval({ -ln.own.diff_ci[2], -ln.own.diff_ci[1] }, 3)))
  end
  local inst = S.instability and S.instability:section("sweep_outcomes")
  if inst then
    local lo, hi
    for _, c in ipairs(inst.summary.comparisons or {}) do
      if c.metric == inst.primary and c.mde_adjusted and F.finite(c.mde_adjusted.value) then
        lo = math.min(lo or math.huge, c.mde_adjusted.value)
        hi = math.max(hi or -math.huge, c.mde_adjusted.value)
      end
    end
    if lo then
      add(string.format("**Stability** (`instability`). The design could not decide: its " ..
        "primary comparisons detect differences of %s to %s nats in the largest loss jump, " ..
        "against a minimum effect of %s.", num(lo, 1), num(hi, 1),
        num(inst.analysis.min_effect, 3)))
    end
  end
  local sc_s = S.scale
  if sc_s then
    local pts = {}
    for _, c in ipairs(sc_s.summary.comparisons or {}) do
      local t, b = sc_s.variant_by_name[c.treatment], sc_s.variant_by_name[c.baseline]
      if c.metric == sc_s.primary and t and b and t.setting == b.setting and
          t.level == "layernorm" and b.level == sc_s.factor.baseline then
        pts[#pts + 1] = { params = sc_s:params(c.baseline), change = c.val_ppl_change }
      end
    end
    table.sort(pts, function(x, y) return (x.params or 0) < (y.params or 0) end)
    if #pts >= 2 and pts[1].params and pts[#pts].params then
      add(string.format("**Model size** (`scale`). LayerNorm's change of perplexity is %s at " ..
        "%.2f M parameters and %s at %.2f M; %d sizes trained at one untuned learning rate " ..
        "do not say where it goes beyond them (the paper gives the fit and its interval).",
        pct(pts[1].change), pts[1].params / 1e6, pct(pts[#pts].change),
        pts[#pts].params / 1e6, #pts))
    end
  end
  return out
end

-- The files this extension adds to the paper folder.
function M.outputs(ctx)
  local body = lines(ctx)
  local text = "In short, as the committed records stand (this list is generated from the " ..
    "study summaries by `make paper`; the paper has every interval, test and verdict):\n\n" ..
    table.concat(body, "\n") .. "\n"
  return { ["results.md"] = text }
end

return M
