-- The LaTeX of the report (lua/repro/report.lua): number formats, the tables and
-- numbers.tex.
--
-- Number formats, one rule each, so that a number reads the same in every table, in
-- numbers.tex and in the prose:
--   a metric value       the metric's fixed decimals (METRIC below), else 4 significant
--   a difference / CI    the metric's decimals, or more so that the interval's half-width
--                        shows 2 significant digits (at most 6 decimals)
--   d_z                  2 decimals
--   p                    3 significant digits; below 0.001 as "< 0.001"
--   relative change      percent with 2 decimals and a sign
-- Numbers go through siunitx's \num (the paper sets group-digits = integer).  A value
-- the summary leaves undefined prints as an em dash, and a degenerate comparison's
-- reason is printed under its table: never "nan" or "inf".
local report = require "repro.report"

local M = {}
local finite = report.finite

-- Display names and decimals of the metrics the paper shows.
M.METRIC = {
  val_loss = { label = "val.\\ loss (nats)", short = "val.\\ loss", dec = 4 },
  val_ppl = { label = "val.\\ perplexity", short = "val.\\ PPL", dec = 3 },
  val_acc = { label = "val.\\ accuracy", short = "accuracy", dec = 4 },
  acc_macro = { label = "macro accuracy", short = "macro acc.", dec = 4 },
  ece = { label = "ECE", short = "ECE", dec = 4 },
  brier = { label = "Brier score", short = "Brier", dec = 4 },
  temp_opt = { label = "optimal temperature $T^*$", short = "$T^*$", dec = 3 },
  nll_temp_1 = { label = "NLL at $T = 1$", short = "NLL($T{=}1$)", dec = 4 },
  nll_temp_opt = { label = "NLL at $T^*$", short = "NLL($T^*$)", dec = 4 },
  final_grad_norm = { label = "final grad norm", short = "grad norm", dec = 3 },
  embed_norm = { label = "embedding norm", short = "embed norm", dec = 3 },
  n_spikes = { label = "loss spikes per run", short = "spikes", dec = 1 },
  diverged = { label = "divergence rate", short = "diverged", dec = 2 },
  max_loss_ratio = { label = "max loss ratio", short = "max ratio", dec = 3 },
  train_loss = { label = "train loss (nats)", short = "train loss", dec = 4 },
  logit_norm = { label = "logit norm", short = "logit norm", dec = 3 },
  max_logit = { label = "max logit", short = "max logit", dec = 3 },
}

-- Text ------------------------------------------------------------------------------

local ESCAPE = {
  ["\\"] = "\\textbackslash{}", ["{"] = "\\{", ["}"] = "\\}", ["$"] = "\\$", ["&"] = "\\&",
  ["#"] = "\\#", ["^"] = "\\textasciicircum{}", ["_"] = "\\_\\allowbreak{}", ["%"] = "\\%",
  ["~"] = "\\textasciitilde{}", ["<"] = "\\textless{}", [">"] = "\\textgreater{}",
  ["|"] = "\\textbar{}", ["/"] = "/\\allowbreak{}",
}
local UNICODE = {
  ["\u{2212}"] = "$-$", ["\u{00d7}"] = "$\\times$", ["\u{2248}"] = "$\\approx$",
  ["\u{2013}"] = "--", ["\u{2014}"] = "---", ["\u{00b1}"] = "$\\pm$", ["\u{2264}"] = "$\\le$",
  ["\u{2265}"] = "$\\ge$", ["\u{03b1}"] = "$\\alpha$", ["\u{2192}"] = "$\\to$",
}

-- Plain text as LaTeX text: special characters escaped, breaks allowed after underscores
-- and slashes, a few
-- non-ASCII symbols as their LaTeX forms and any other non-ASCII character as "?".
function M.escape(s)
  s = tostring(s):gsub("[\\{}$&#^_%%~<>|/]", ESCAPE)
  s = s:gsub("[\xc2-\xf4][\x80-\xbf]*", function(ch) return UNICODE[ch] or "?" end)
  return s
end

local DIGIT = { ["0"] = "Zero", ["1"] = "One", ["2"] = "Two", ["3"] = "Three", ["4"] = "Four",
  ["5"] = "Five", ["6"] = "Six", ["7"] = "Seven", ["8"] = "Eight", ["9"] = "Nine",
  ["."] = "Point" }

-- A LaTeX control-sequence name of letters only from parts such as "init_scale",
-- "layernorm-lr1e-2", "ValLoss": words capitalized, digits spelled out.
function M.macro(...)
  local out = {}
  for _, part in ipairs({ ... }) do
    for word in tostring(part):gmatch("[%w%.]+") do
      word = word:gsub("%.", " . ")
      for piece in word:gmatch("%S+") do
        for run, kind in piece:gmatch("(([%a]*)[%d%.]*)") do
          local letters = kind
          local rest = run:sub(#letters + 1)
          if #letters > 0 then
            out[#out + 1] = letters:sub(1, 1):upper() .. letters:sub(2)
          end
          for ch in rest:gmatch(".") do out[#out + 1] = DIGIT[ch] end
        end
      end
    end
  end
  return table.concat(out)
end

-- Numbers ---------------------------------------------------------------------------

-- Decimals that show x with `sig` significant digits.
function M.sig_decimals(x, sig)
  if not finite(x) or x == 0 then return 0 end
  local e = math.floor(math.log(math.abs(x), 10))
  return math.max(0, sig - 1 - e)
end

-- x with `dec` decimals, never "-0.00".
function M.fixed(x, dec)
  local s = string.format("%." .. dec .. "f", x)
  if s:match("^%-[0.]+$") then s = s:sub(2) end
  return s
end

local DASH = "---"

function M.num(x, dec)
  if not finite(x) then return DASH end
  return "\\num{" .. M.fixed(x, dec) .. "}"
end

function M.metric_decimals(metric, x)
  local spec = M.METRIC[metric]
  if spec then return spec.dec end
  return math.min(6, M.sig_decimals(x, 4))
end

function M.value(metric, x)
  if not finite(x) then return DASH end
  return M.num(x, M.metric_decimals(metric, x))
end

-- Decimals for a difference on `metric` with interval ci (may be nil).
function M.diff_decimals(metric, mean, ci)
  local spec = M.METRIC[metric]
  local base = spec and spec.dec or 0
  local scale = nil
  if ci and finite(ci[1]) and finite(ci[2]) and ci[2] > ci[1] then
    scale = (ci[2] - ci[1]) / 2
  elseif finite(mean) and mean ~= 0 then
    scale = math.abs(mean)
  end
  local d = scale and M.sig_decimals(scale, 2) or 0
  if not spec and not scale then d = 4 end
  return math.min(6, math.max(base, d))
end

function M.p(p)
  if not finite(p) then return DASH end
  if p < 0.001 then return "$<$\\,\\num{0.001}" end
  return "\\num{" .. M.fixed(p, M.sig_decimals(p, 3)) .. "}"
end

function M.d(x)
  if not finite(x) then return DASH end
  return M.num(x, 2)
end

function M.percent(r)
  if not finite(r) then return DASH end
  local s = M.fixed(100 * r, 2)
  if s:sub(1, 1) ~= "-" and s:match("[1-9]") then s = "+" .. s end
  return "\\num{" .. s .. "}\\,\\%"
end

function M.mean_sd(metric, st)
  if not st or not finite(st.mean) then return DASH end
  local dec = M.metric_decimals(metric, st.mean)
  if not finite(st.sd) then return M.num(st.mean, dec) end
  return M.num(st.mean, dec) .. " $\\pm$ " .. M.num(st.sd, dec)
end

function M.interval(ci, dec)
  if not ci or not finite(ci[1]) or not finite(ci[2]) then return DASH end
  return "[" .. M.num(ci[1], dec) .. ", " .. M.num(ci[2], dec) .. "]"
end

-- "1--5" for consecutive integers, else "1, 3, 7".
function M.seed_list(seeds)
  local consecutive = #seeds > 2
  for i = 2, #seeds do
    if seeds[i] ~= seeds[i - 1] + 1 then consecutive = false end
  end
  local t = {}
  for _, s in ipairs(seeds) do t[#t + 1] = string.format("%d", s) end
  if consecutive then return t[1] .. "--" .. t[#t] end
  return table.concat(t, ", ")
end

-- Pieces shared by the tables ---------------------------------------------------------

local function level(s)
  local alpha = s.analysis.alpha or 0.05
  return M.fixed(100 * (1 - alpha), math.max(0, M.sig_decimals(100 * (1 - alpha), 2))) .. "\\,\\%"
end

local function metric_label(metric)
  local spec = M.METRIC[metric]
  return spec and spec.label or M.escape(metric)
end

-- "LayerNorm − none", with the setting in front when the study has several.
local function comparison_label(s, treatment, baseline)
  local t, b = s.variant_by_name[treatment], s.variant_by_name[baseline]
  if not t or not b then return M.escape(treatment .. " - " .. baseline) end
  local minus = "${}-{}$"
  if t.setting == b.setting then
    local head = #s:settings() > 1 and (M.escape(t.tag) .. ": ") or ""
    return head .. M.escape(t.norm_label) .. minus .. M.escape(b.norm_label)
  end
  return M.escape(t.label) .. minus .. M.escape(b.label)
end
M.comparison_label = comparison_label

-- The interval a verdict uses (lua/repro/analysis.lua): the decision interval of the
-- study's test in a summary of the current rule; in a rule-1 summary BCa, else t, with
-- a mark.
local function ci_of(c)
  if c.ci_decision or c.ci_decision_unbounded then return c.ci_decision, "" end
  if c.ci_bca then return c.ci_bca, "" end
  if c.ci_t then return c.ci_t, "$^{t}$" end
  return nil, ""
end

-- The minimum detectable effect shown: at the Holm first-step level alpha / m for a
-- family comparison of the current rule (absent when its test cannot reach that level),
-- else the unadjusted one.
local function mde_of(c)
  if c.mde_adjusted then return c.mde_adjusted.value end
  return c.mde
end

-- Notes under a table: marks ("a", "b", ...) for distinct reasons, in order of use.
local function new_notes()
  local n = { list = {}, by_text = {} }
  function n.mark(text)
    local i = n.by_text[text]
    if not i then
      n.list[#n.list + 1] = text
      i = #n.list
      n.by_text[text] = i
    end
    return "$^{" .. string.char(96 + ((i - 1) % 26) + 1) .. "}$"
  end
  function n.render()
    if #n.list == 0 then return "" end
    local out = { "\\par\\smallskip\\footnotesize" }
    for i, text in ipairs(n.list) do
      out[#out + 1] = string.format("$^{%s}$\\,%s%s", string.char(96 + ((i - 1) % 26) + 1),
        text, i < #n.list and "\\\\" or "")
    end
    return table.concat(out, "\n") .. "\n"
  end
  return n
end

-- Why a study has nothing to show (plain text).
-- The experiments root is named by its last component only: an absolute path (a
-- temporary directory, say) says nothing to a reader and may not fit a line.
function M.absent_reason(ctx, name)
  local root = tostring(ctx.experiments):gsub("/+$", ""):match("([^/]+)$") or "experiments"
  return string.format("the %s study has not been run yet (there is no %s/%s/summary.json)",
    name, root, name)
end

local function absent_text(ctx, name)
  return M.escape(M.absent_reason(ctx, name))
end
M.absent_text = absent_text

local function placeholder(text)
  return "\\begin{center}\\emph{Not available: " .. text .. ".}\\end{center}\n"
end

local HEADER = "%% Generated by lua/repro/report.lua from %s: do not edit.\n"

local function wrap(s, body)
  return string.format(HEADER, s and (s.dir .. "/summary.json") or "the study summaries") .. body
end

local function norm_order(s)
  local list = {}
  for _, v in ipairs(s.variants) do list[#list + 1] = v end
  return list
end

-- Tables ----------------------------------------------------------------------------

local SEEDS_METRICS = { "val_ppl", "val_acc", "final_grad_norm", "embed_norm" }

-- The seeds' Table 1 layout: mean ± sd over the runs that did not diverge.
function M.seeds_table(s)
  local rows = {}
  local notes = new_notes()
  for _, v in ipairs(norm_order(s)) do
    local pv = s.summary.per_variant[v.name] or {}
    local n_runs = pv.n_runs or #s.seeds
    local runs = string.format("%d", n_runs)
    if (pv.n_diverged or 0) > 0 then
      runs = runs .. string.format(" (%d div.)", pv.n_diverged)
    end
    local cells = { M.escape(v.label), runs }
    for _, m in ipairs(SEEDS_METRICS) do
      local st = s:stat(v.name, m)
      local cell = M.mean_sd(m, st)
      if st.n == 1 then cell = cell .. notes.mark("one run: no sd.") end
      if st.n == 0 then
        cell = cell .. notes.mark("no finite value: every run diverged or the record lacks it.")
      end
      cells[#cells + 1] = cell
    end
    rows[#rows + 1] = table.concat(cells, " & ") .. " \\\\"
  end
  local body = {
    "\\ReportFit{\\begin{tabular}{@{}lrcccc@{}}", "\\toprule",
    "Variant & Runs & Val.\\ PPL & Val.\\ accuracy & Final grad norm & Embedding norm \\\\",
    "\\midrule",
  }
  for _, r in ipairs(rows) do body[#body + 1] = r end
  body[#body + 1] = "\\bottomrule"
  body[#body + 1] = "\\end{tabular}}"
  return wrap(s, table.concat(body, "\n") .. "\n" .. notes.render())
end

local VERDICT_SHORT = { better = "better", worse = "worse", equivalent = "equivalent",
  ["no meaningful difference"] = "no meaningful difference", inconclusive = "inconclusive" }

-- The size of a study's Holm family: analysis.m (current rule), else every comparison
-- and interaction (rule 1).
local function family_size(s)
  if s.analysis.m then return s.analysis.m end
  return #(s.summary.comparisons or {}) + #(s.summary.interactions or {})
end

-- One comparison's statistics as table cells: Δ, CI, d_z [CI], p_t, p_sf (with its
-- floor when that differs from the table's), p_Holm, MDE.
local function stat_cells(c, floor)
  local ci, ci_mark = ci_of(c)
  local dec = M.diff_decimals(c.metric, c.mean, ci)
  local cells = {}
  cells[1] = M.num(c.mean, dec)
  cells[2] = M.interval(ci, dec) .. ci_mark
  local dz = M.d(c.d_z)
  if c.ci_d_z and finite(c.d_z) then dz = dz .. " " .. M.interval(c.ci_d_z, 2) end
  cells[3] = dz
  cells[4] = M.p(c.p_t)
  local sf = M.p(c.p_signflip)
  if finite(c.p_signflip_min) and c.p_signflip_min ~= floor then
    sf = sf .. " (" .. M.p(c.p_signflip_min) .. ")"
  end
  cells[5] = sf
  cells[6] = M.p(c.p_holm)
  cells[7] = M.num(mde_of(c), dec)
  return cells
end

-- The mark of a degenerate comparison's reason (rows with the same reason share it).
local function reason_note(c, notes)
  if not c.degenerate or type(c.reason) ~= "string" then return "" end
  return notes.mark(M.escape(c.reason) .. ".")
end

-- Every comparison of the study on every metric of its analysis (the Holm family),
-- the primary metric first, with the verdict of the decision rule on the primary.
function M.paired_table(s)
  local notes = new_notes()
  local metrics = {}
  if s.primary then metrics[1] = s.primary end
  for _, m in ipairs(s.analysis.metrics or {}) do
    if m ~= s.primary then metrics[#metrics + 1] = m end
  end
  -- The sign-flip floor of most rows goes in the header; a row with another n shows its own.
  local floors, common, best = {}, nil, 0
  for _, c in ipairs(s.summary.comparisons or {}) do
    if finite(c.p_signflip_min) then
      floors[c.p_signflip_min] = (floors[c.p_signflip_min] or 0) + 1
      if floors[c.p_signflip_min] > best or (floors[c.p_signflip_min] == best
          and c.p_signflip_min < common) then
        common, best = c.p_signflip_min, floors[c.p_signflip_min]
      end
    end
  end
  local body = {
    "\\ReportFit{\\begin{tabular}{@{}lrllllrr>{\\raggedright\\arraybackslash}p{1.9cm}@{}}",
    "\\toprule",
    string.format("Comparison & $\\Delta$ & %s CI & $d_z$ [CI] & $p_t$ & $p_\\mathrm{sf}$%s " ..
      "& $p_\\mathrm{Holm}$ & MDE & Verdict \\\\", level(s),
      common and (" (floor " .. M.p(common) .. ")") or ""),
  }
  local any_t = false
  for _, m in ipairs(metrics) do
    local list = s:comparisons(m)
    if #list > 0 then
      body[#body + 1] = "\\midrule"
      local head = metric_label(m)
      if m == s.primary then
        head = head .. string.format(" --- primary, %s is better, minimum effect %s",
          s.analysis.better or "?", M.value(m, s.analysis.min_effect))
      elseif list[1].exploratory then
        head = head .. " --- exploratory: unadjusted $p$, no verdict"
      end
      body[#body + 1] = "\\multicolumn{9}{@{}l}{\\emph{" .. head .. "}} \\\\"
      for _, c in ipairs(list) do
        local cells = stat_cells(c, common)
        if select(2, ci_of(c)) ~= "" then any_t = true end
        local v = m == s.primary and s:verdict(c) or nil
        local label = comparison_label(s, c.treatment, c.baseline) .. reason_note(c, notes)
        body[#body + 1] = string.format("%s & %s & %s \\\\", label, table.concat(cells, " & "),
          v and VERDICT_SHORT[v.verdict] or "")
      end
    end
  end
  body[#body + 1] = "\\bottomrule"
  body[#body + 1] = "\\end{tabular}}"
  local text = table.concat(body, "\n") .. "\n"
  if any_t then
    notes.mark("$t$ interval: the BCa interval is undefined for these data.")
  end
  return wrap(s, text .. notes.render())
end

-- Divergences and loss spikes by setting and variant (the instability study).
function M.counts_table(s)
  local body = {
    "\\ReportFit{\\begin{tabular}{@{}llcccc@{}}", "\\toprule",
    "Setting & Variant & Diverged & Spikes per run & Spikes (min--max) & " ..
      "Val.\\ loss (finite runs) \\\\",
  }
  for _, st in ipairs(s:settings()) do
    body[#body + 1] = "\\midrule"
    for i, v in ipairs(st.variants) do
      local pv = s.summary.per_variant[v.name] or {}
      local n_runs = pv.n_runs or #s.seeds
      local spikes = s:stat(v.name, "n_spikes")
      local range = DASH
      if finite(spikes.min) then
        range = string.format("%d--%d", math.floor(spikes.min), math.floor(spikes.max))
      end
      body[#body + 1] = string.format("%s & %s & %d/%d & %s & %s & %s \\\\",
        i == 1 and M.escape(st.label ~= "" and st.label or "default") or "",
        M.escape(v.norm_label), pv.n_diverged or 0, n_runs, M.mean_sd("n_spikes", spikes),
        range, M.mean_sd("val_loss", s:stat(v.name, "val_loss")))
    end
  end
  body[#body + 1] = "\\bottomrule"
  body[#body + 1] = "\\end{tabular}}"
  return wrap(s, table.concat(body, "\n") .. "\n")
end

-- Parameters of a setting's variants (from the records), or nil.
local function setting_params(s, st)
  local p
  for _, v in ipairs(st.variants) do
    if v.norm == "none" or not p then
      for _, seed in ipairs(s.seeds) do
        local m = s:record(v.name, seed).metrics
        if m and finite(m.params) then
          p = m.params
          break
        end
      end
    end
  end
  return p
end
M.setting_params = setting_params

-- The primary-metric comparisons within each setting (the scale and init_scale studies):
-- the effect per model size or init scale.
function M.setting_effect_table(s)
  local notes = new_notes()
  local params, distinct, last = {}, false, nil
  for i, st in ipairs(s:settings()) do
    params[i] = setting_params(s, st)
    if i > 1 and params[i] ~= last then distinct = true end
    last = params[i]
  end
  local cols = distinct and "@{}lrlrlrrrl@{}" or "@{}llrlrrrl@{}"
  local body = { "\\ReportFit{\\begin{tabular}{" .. cols .. "}", "\\toprule",
    string.format("Setting%s & Comparison & $\\Delta$ & %s CI & $d_z$ & $p_\\mathrm{Holm}$ & " ..
      "MDE & Verdict \\\\", distinct and " & Params" or "", level(s)) }
  local any_t = false
  for i, st in ipairs(s:settings()) do
    local in_setting = {}
    for _, c in ipairs(s:comparisons()) do
      local t, b = s.variant_by_name[c.treatment], s.variant_by_name[c.baseline]
      if t and b and t.setting == st.key and b.setting == st.key then
        in_setting[#in_setting + 1] = c
      end
    end
    if #in_setting > 0 then
      body[#body + 1] = "\\midrule"
      for j, c in ipairs(in_setting) do
        local ci, mark = ci_of(c)
        if mark ~= "" then any_t = true end
        local dec = M.diff_decimals(c.metric, c.mean, ci)
        local v = s:verdict(c)
        local head = j == 1 and M.escape(st.label ~= "" and st.label or "default") or ""
        if distinct then
          head = head .. " & " .. (j == 1 and finite(params[i]) and
            ("\\num{" .. string.format("%d", params[i]) .. "}") or "")
        end
        local t, b = s.variant_by_name[c.treatment], s.variant_by_name[c.baseline]
        body[#body + 1] = string.format("%s & %s%s & %s & %s%s & %s & %s & %s & %s \\\\", head,
          M.escape(t.norm_label) .. "${}-{}$" .. M.escape(b.norm_label),
          reason_note(c, notes), M.num(c.mean, dec), M.interval(ci, dec), mark, M.d(c.d_z),
          M.p(c.p_holm), M.num(mde_of(c), dec), v and VERDICT_SHORT[v.verdict] or "")
      end
    end
  end
  body[#body + 1] = "\\bottomrule"
  body[#body + 1] = "\\end{tabular}}"
  if any_t then notes.mark("$t$ interval: the BCa interval is undefined for these data.") end
  return wrap(s, table.concat(body, "\n") .. "\n" .. notes.render())
end

-- Interactions (difference of two paired differences), every metric of the analysis.
function M.interactions_table(s)
  local notes = new_notes()
  local body = { "\\ReportFit{\\begin{tabular}{@{}llrlrr@{}}", "\\toprule",
    string.format("Interaction & Metric & $\\Delta_a - \\Delta_b$ & %s CI & $p_t$ & " ..
      "$p_\\mathrm{Holm}$ \\\\", level(s)), "\\midrule" }
  for _, e in ipairs(s.summary.interactions or {}) do
    local ci, mark = ci_of(e)
    local dec = M.diff_decimals(e.metric, e.mean, ci)
    local reason = reason_note(e, notes)
    local expl = e.exploratory and
      notes.mark("exploratory: unadjusted $p$, outside the Holm family.") or ""
    body[#body + 1] = string.format("%s%s & %s%s & %s & %s%s & %s & %s \\\\", M.escape(e.name),
      reason, M.METRIC[e.metric] and M.METRIC[e.metric].short or M.escape(e.metric), expl,
      M.num(e.mean, dec), M.interval(ci, dec), mark, M.p(e.p_t), M.p(e.p_holm))
  end
  body[#body + 1] = "\\bottomrule"
  body[#body + 1] = "\\end{tabular}}"
  return wrap(s, table.concat(body, "\n") .. "\n" .. notes.render())
end

local CALIBRATION = { "ece", "brier", "temp_opt", "nll_temp_1", "nll_temp_opt", "val_acc",
  "acc_macro" }

-- Calibration and class balance (the final study): one row per instrument, one column
-- per variant, mean ± sd over the runs that did not diverge.
function M.calibration_table(s)
  local vs = norm_order(s)
  local body = { "\\ReportFit{\\begin{tabular}{@{}l" .. string.rep("c", #vs) .. "@{}}",
    "\\toprule" }
  local head = { "Instrument" }
  for _, v in ipairs(vs) do head[#head + 1] = M.escape(v.label) end
  body[#body + 1] = table.concat(head, " & ") .. " \\\\"
  body[#body + 1] = "\\midrule"
  for _, m in ipairs(CALIBRATION) do
    local cells = { M.METRIC[m].label }
    if m == "val_acc" then cells[1] = "accuracy (micro)" end
    for _, v in ipairs(vs) do cells[#cells + 1] = M.mean_sd(m, s:stat(v.name, m)) end
    body[#body + 1] = table.concat(cells, " & ") .. " \\\\"
  end
  body[#body + 1] = "\\bottomrule"
  body[#body + 1] = "\\end{tabular}}"
  return wrap(s, table.concat(body, "\n") .. "\n")
end

-- One row per study: its design and the size of its Holm family; the known studies that
-- have not been run are listed as such.
function M.studies_table(ctx)
  local body = { "\\ReportFit{\\begin{tabular}{@{}lrrrllr@{}}", "\\toprule",
    "Study & Variants & Seeds & Runs (diverged) & Primary metric & Minimum effect & Tests \\\\",
    "\\midrule" }
  local names, seen = {}, {}
  for _, k in ipairs(report.KNOWN) do names[#names + 1] = k seen[k] = true end
  for _, s in ipairs(ctx.studies) do
    if not seen[s.name] then names[#names + 1] = s.name end
  end
  for _, n in ipairs(names) do
    local s = ctx.by_name[n]
    if s then
      local runs, div = 0, 0
      for _, v in ipairs(s.variants) do
        local pv = s.summary.per_variant[v.name] or {}
        runs = runs + (pv.n_runs or 0)
        div = div + (pv.n_diverged or 0)
      end
      local an = s.analysis
      body[#body + 1] = string.format("%s & %d & %s & %d (%d) & %s (%s) & %s & %d \\\\",
        M.escape(n), #s.variants, M.seed_list(s.seeds), runs, div,
        s.primary and (M.METRIC[s.primary] and M.METRIC[s.primary].short or M.escape(s.primary))
          or DASH, M.escape(an.better or "?"),
        s.primary and M.value(s.primary, an.min_effect) or DASH, family_size(s))
    else
      body[#body + 1] = string.format("%s & \\multicolumn{6}{l}{\\emph{not run yet}} \\\\",
        M.escape(n))
    end
  end
  body[#body + 1] = "\\bottomrule"
  body[#body + 1] = "\\end{tabular}}"
  return wrap(nil, table.concat(body, "\n") .. "\n")
end

-- Every table file: name -> text.  The known studies always get theirs (a sentence when
-- the study is absent); other studies get the generic seeds and paired tables.
function M.tables(ctx)
  local out = { studies = M.studies_table(ctx) }
  local by = ctx.by_name
  local function put(name, study, fn, needs_records)
    local s = by[study]
    if not s then
      out[name] = wrap(nil, placeholder(absent_text(ctx, study)))
    elseif needs_records and not s:has_records() then
      out[name] = wrap(s, placeholder(string.format("the run records of the %s study are " ..
        "missing under %s", M.escape(study), M.escape(s.dir))))
    else
      out[name] = fn(s)
    end
  end
  for _, st in ipairs({ "prelim", "final" }) do
    put(st .. "_seeds", st, M.seeds_table, true)
  end
  for _, st in ipairs(report.KNOWN) do put(st .. "_paired", st, M.paired_table) end
  put("final_calibration", "final", M.calibration_table, true)
  put("instability_counts", "instability", M.counts_table, true)
  put("scale_effect", "scale", M.setting_effect_table, true)
  put("init_scale_effect", "init_scale", M.setting_effect_table, false)
  for _, st in ipairs({ "instability", "scale", "init_scale" }) do
    put(st .. "_interactions", st, M.interactions_table)
  end
  for _, s in ipairs(ctx.studies) do
    if not out[s.name .. "_paired"] then
      out[s.name .. "_paired"] = M.paired_table(s)
      if s:has_records() then out[s.name .. "_seeds"] = M.seeds_table(s) end
      if #(s.summary.interactions or {}) > 0 then
        out[s.name .. "_interactions"] = M.interactions_table(s)
      end
    end
  end
  return out
end

-- numbers.tex ---------------------------------------------------------------------------

local config_text

local FIELD_METRIC = {
  val_loss = "ValLoss", val_ppl = "ValPpl", val_acc = "ValAcc", acc_macro = "AccMacro",
  final_grad_norm = "GradNorm", embed_norm = "EmbedNorm", n_spikes = "Spikes",
  diverged = "Diverged", temp_opt = "TempOpt", nll_temp_1 = "NllTOne",
  nll_temp_opt = "NllTOpt",
}

local function metric_macro(m)
  return FIELD_METRIC[m] or M.macro(m)
end

-- Relative change of validation perplexity, treatment vs baseline: the mean over seeds
-- of the paired differences over the baseline's mean, on the seeds where both runs have
-- a value (the form of the analysis' relative_change).
local function ppl_change(s, treatment, baseline)
  local d, b, n = 0, 0, 0
  for _, seed in ipairs(s.seeds) do
    local x, y = s:value(treatment, seed, "val_ppl"), s:value(baseline, seed, "val_ppl")
    if x and y then
      d, b, n = d + (x - y), b + y, n + 1
    end
  end
  if n == 0 or b == 0 then return nil end
  return d / b
end

-- A config value as the study file would write it (integral numbers without ".0").
config_text = function(v)
  if math.type(v) == "float" and v == math.floor(v) and math.abs(v) < 2 ^ 53 then
    return string.format("%d", v)
  end
  if type(v) == "number" then return string.format("%.10g", v) end
  return tostring(v)
end

local function plain_sentence(text)
  return M.escape(text)
end

-- numbers.tex: study and figure availability, then per study its counts, the per-variant
-- means the prose cites, every comparison's statistics and the verdicts.
function M.numbers(ctx)
  local defs, seen = {}, {}
  local function def(name, value)
    if seen[name] then error("report: two numbers would be named \\" .. name, 0) end
    seen[name] = true
    defs[#defs + 1] = string.format("\\newcommand{\\%s}{%s}", name, value)
  end
  local function cs(prefix, key, value)
    defs[#defs + 1] = string.format("\\expandafter\\def\\csname %s@%s\\endcsname{%s}",
      prefix, key, value)
  end
  local lines = { "% Generated by lua/repro/report.lua from the study summaries and run " ..
    "records: do not edit.", "% Availability: \\csname ReportHave@<study>\\endcsname, " ..
    "ReportAbsent@<study> (why not), ReportFig@<figure>, ReportNoFig@<figure> (why not)." }

  local names = {}
  for _, k in ipairs(report.KNOWN) do names[#names + 1] = k end
  for _, s in ipairs(ctx.studies) do
    local known = false
    for _, k in ipairs(report.KNOWN) do known = known or k == s.name end
    if not known then names[#names + 1] = s.name end
  end
  for _, n in ipairs(names) do
    if ctx.by_name[n] then
      cs("ReportHave", n, "")
    else
      cs("ReportAbsent", n, absent_text(ctx, n))
    end
  end
  for _, f in ipairs(ctx.figures or {}) do
    if f.skip then
      cs("ReportNoFig", f.name, M.escape(f.skip))
    elseif ctx.rendered == nil or ctx.rendered[f.name] then
      cs("ReportFig", f.name, "")
    else
      cs("ReportNoFig", f.name, "the figure was not rendered (report run with --no-figures)")
    end
  end

  -- A note on the first page when any study ran with command-line overrides (QUICK):
  -- the studies grouped by their overrides.
  local groups, order = {}, {}
  for _, s in ipairs(ctx.studies) do
    local o = s.summary.command_line_overrides
    if o then
      local keys = {}
      for k in pairs(o) do keys[#keys + 1] = k end
      table.sort(keys)
      local kv = {}
      for _, k in ipairs(keys) do kv[#kv + 1] = k .. "=" .. config_text(o[k]) end
      local key = table.concat(kv, ", ")
      if not groups[key] then
        groups[key] = {}
        order[#order + 1] = key
      end
      table.insert(groups[key], s.name)
    end
  end
  local quick = {}
  for _, key in ipairs(order) do
    quick[#quick + 1] = table.concat(groups[key], ", ") .. " with " .. key
  end
  def("ReportOverrides", #quick == 0 and "" or ("\\emph{" .. M.escape(
    "These results come from studies run with command-line overrides of their configs, " ..
    "not the pre-registered protocol: " .. table.concat(quick, "; ") ..
    ". They test the pipeline, not the hypothesis.") .. "}\\par\\medskip"))

  for _, s in ipairs(ctx.studies) do
    local S = M.macro(s.name)
    local an = s.analysis
    local n_runs, n_div = 0, 0
    for _, v in ipairs(s.variants) do
      local pv = s.summary.per_variant[v.name] or {}
      n_runs = n_runs + (pv.n_runs or 0)
      n_div = n_div + (pv.n_diverged or 0)
    end
    defs[#defs + 1] = "% " .. s.name
    def(S .. "NSeeds", string.format("%d", #s.seeds))
    def(S .. "SeedList", M.seed_list(s.seeds))
    def(S .. "NVariants", string.format("%d", #s.variants))
    local iters = s.variants[1] and s:config_value(s.variants[1].name, "iters")
    def(S .. "Iters", iters and config_text(iters) or DASH)
    def(S .. "NRuns", string.format("%d", n_runs))
    def(S .. "NDiverged", string.format("%d", n_div))
    def(S .. "Primary", s.primary and (M.METRIC[s.primary] and M.METRIC[s.primary].short or
      M.escape(s.primary)) or DASH)
    def(S .. "Better", M.escape(an.better or "?"))
    def(S .. "MinEffect", s.primary and M.value(s.primary, an.min_effect) or DASH)
    def(S .. "Alpha", finite(an.alpha) and M.num(an.alpha, M.sig_decimals(an.alpha, 2)) or DASH)
    def(S .. "NTests", string.format("%d", family_size(s)))
    def(S .. "Family", M.escape(an.family or ""))

    for _, v in ipairs(s.variants) do
      local V = S .. M.macro(v.name)
      local metrics = { "val_loss", "val_ppl", "val_acc", "final_grad_norm", "embed_norm" }
      for _, m in ipairs(an.metrics or {}) do
        local dup = false
        for _, x in ipairs(metrics) do dup = dup or x == m end
        if not dup then metrics[#metrics + 1] = m end
      end
      for _, m in ipairs(metrics) do
        local st = s:stat(v.name, m)
        def(V .. metric_macro(m), M.value(m, st.mean))
        def(V .. metric_macro(m) .. "Sd", M.value(m, st.sd))
      end
      local pv = s.summary.per_variant[v.name] or {}
      def(V .. "NDiverged", string.format("%d", pv.n_diverged or 0))
      local params
      for _, seed in ipairs(s.seeds) do
        local m = s:record(v.name, seed).metrics
        if m and finite(m.params) then params = m.params break end
      end
      def(V .. "Params", params and ("\\num{" .. string.format("%d", params) .. "}") or DASH)
    end

    for _, c in ipairs(s.summary.comparisons or {}) do
      local P = S .. M.macro(c.treatment) .. "Vs" .. M.macro(c.baseline)
      local C = P .. metric_macro(c.metric)
      local ci = ci_of(c)
      local dec = M.diff_decimals(c.metric, c.mean, ci)
      if c.metric == s.primary then
        -- The primary metric's numbers also under "Primary", so the prose need not name it.
        def(P .. "PrimaryDelta", M.num(c.mean, dec))
        def(P .. "PrimaryCI", M.interval(ci, dec))
        def(P .. "PrimaryPHolm", M.p(c.p_holm))
        def(P .. "PrimaryMDE", M.num(mde_of(c), dec))
        def(P .. "PplChange", M.percent(ppl_change(s, c.treatment, c.baseline)))
      end
      def(C .. "Delta", M.num(c.mean, dec))
      def(C .. "AbsDelta", finite(c.mean) and M.num(math.abs(c.mean), dec) or DASH)
      def(C .. "CI", M.interval(ci, dec))
      def(C .. "CILo", ci and M.num(ci[1], dec) or DASH)
      def(C .. "CIHi", ci and M.num(ci[2], dec) or DASH)
      def(C .. "DZ", M.d(c.d_z))
      def(C .. "PT", M.p(c.p_t))
      def(C .. "PSignflip", M.p(c.p_signflip))
      def(C .. "PHolm", M.p(c.p_holm))
      def(C .. "MDE", M.num(mde_of(c), dec))
      def(C .. "RelChange", M.percent(c.relative_change))
      def(C .. "N", string.format("%d", c.n or 0))
      def(C .. "Reason", c.degenerate and type(c.reason) == "string" and M.escape(c.reason) or "")
    end
    for _, e in ipairs(s.summary.interactions or {}) do
      local C = S .. M.macro(e.name) .. metric_macro(e.metric)
      local ci = ci_of(e)
      local dec = M.diff_decimals(e.metric, e.mean, ci)
      def(C .. "Delta", M.num(e.mean, dec))
      def(C .. "CI", M.interval(ci, dec))
      def(C .. "PHolm", M.p(e.p_holm))
    end
    local items = {}
    for _, v in ipairs(s.summary.verdicts or {}) do
      local C = S .. M.macro(v.treatment) .. "Vs" .. M.macro(v.baseline)
      def(C .. "Verdict", M.escape(v.verdict))
      def(C .. "Sentence", plain_sentence(v.sentence or ""))
      items[#items + 1] = string.format("\\item \\textbf{%s}: %s. %s",
        comparison_label(s, v.treatment, v.baseline), M.escape(v.verdict),
        plain_sentence(v.sentence or ""))
    end
    def(S .. "Verdicts", #items == 0 and "\\emph{This study has no comparisons.}" or
      ("\\begin{itemize}\n" .. table.concat(items, "\n") .. "\n\\end{itemize}"))
    local notes = {}
    for _, n in ipairs(s.summary.notes or {}) do notes[#notes + 1] = "\\item " .. M.escape(n) end
    def(S .. "Notes", #notes == 0 and "\\emph{none}" or
      ("\\begin{itemize}\n" .. table.concat(notes, "\n") .. "\n\\end{itemize}"))
  end
  for _, d in ipairs(defs) do lines[#lines + 1] = d end
  return table.concat(lines, "\n") .. "\n"
end

return M
