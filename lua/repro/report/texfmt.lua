-- Number and text formats of the report's LaTeX (lua/repro/report/init.lua), one rule each,
-- so that a number reads the same in every table, in numbers.tex and in the prose:
--   a metric value       the metric's fixed decimals (METRIC below), else 4 significant
--   a difference / CI    the metric's decimals, or more so that the interval's half-width
--                        shows 2 significant digits (at most 6 decimals)
--   d_z                  2 decimals
--   p                    3 significant digits; below 0.001 as "< 0.001"
--   relative change      percent with 2 decimals and a sign
-- Numbers go through siunitx's \num (the paper sets group-digits = integer).  A value
-- the summary leaves undefined prints as an em dash: never "nan" or "inf".
local M = {}

local base = require "repro.core.base"
local finite = base.finite
M.finite = finite

-- Display names and decimals of the metrics the paper shows.  The prose (tex_prose.lua)
-- also reads `noun` (what the metric is, in a sentence), `unit` and `kind`:
--   nats    a loss in nats, the log of a perplexity (`ppl` names it): a change is quoted
--           as the change of that perplexity in percent and the difference in nats; never
--           as a percentage of the loss
--   count   a count per run: quoted as counts (means and their difference), never as a
--           percentage of the baseline's count, which may be 0
-- A metric without a kind is quoted as its difference in its own unit.
M.METRIC = {
  val_loss = { label = "val.\\ loss (nats)", short = "val.\\ loss", dec = 4,
    noun = "validation loss", unit = "nats", kind = "nats", ppl = "validation perplexity" },
  val_ppl = { label = "val.\\ perplexity", short = "val.\\ PPL", dec = 3,
    noun = "validation perplexity" },
  val_acc = { label = "val.\\ accuracy", short = "accuracy", dec = 4,
    noun = "validation accuracy" },
  -- the task suite's macro accuracy (lua/repro/tasks): the mean over its tasks
  task_macro_acc_0shot = { label = "0-shot macro acc.", short = "0-shot macro accuracy",
    dec = 4, noun = "zero-shot macro accuracy over the tasks" },
  task_macro_acc_3shot = { label = "3-shot macro acc.", short = "3-shot macro accuracy",
    dec = 4, noun = "3-shot macro accuracy over the tasks" },
  -- the mean over the character classes present (letter, digit, punctuation, space) of
  -- their accuracy: not the claim's "mock macro accuracy" (read as bal_acc)
  acc_macro = { label = "class-macro accuracy", short = "class-macro acc.", dec = 4,
    noun = "accuracy averaged over the character classes" },
  bal_acc = { label = "balanced accuracy", short = "bal.\\ acc.", dec = 4,
    noun = "balanced accuracy (mean per-symbol recall)" },
  bal_subset_acc_mean = { label = "balanced acc.\\ (150 pos.)", short = "bal.\\ acc.\\ 150",
    dec = 4, noun = "balanced accuracy on 150-position subsets" },
  ece = { label = "ECE", short = "ECE", dec = 4, noun = "expected calibration error" },
  brier = { label = "Brier score", short = "Brier", dec = 4, noun = "Brier score" },
  temp_opt = { label = "optimal temperature $T^*$", short = "$T^*$", dec = 3,
    noun = "optimal temperature" },
  nll_temp_1 = { label = "NLL at $T = 1$", short = "NLL($T{=}1$)", dec = 4,
    noun = "NLL at $T = 1$", unit = "nats" },
  nll_temp_opt = { label = "NLL at $T^*$", short = "NLL($T^*$)", dec = 4,
    noun = "NLL at the optimal temperature", unit = "nats" },
  final_grad_norm = { label = "final grad norm", short = "grad norm", dec = 3,
    noun = "final gradient norm" },
  embed_norm = { label = "embedding norm", short = "embed norm", dec = 3,
    noun = "embedding norm" },
  n_spikes = { label = "loss spikes per run", short = "spikes", dec = 1,
    noun = "loss spikes", one = "loss spike", unit = "spikes", kind = "count" },
  diverged = { label = "divergence rate", short = "diverged", dec = 2,
    noun = "diverged runs", one = "diverged run", unit = "runs", kind = "count" },
  max_loss_ratio = { label = "max loss ratio", short = "max ratio", dec = 3,
    noun = "largest loss ratio" },
  train_loss = { label = "train loss (nats)", short = "train loss", dec = 4,
    noun = "training loss", unit = "nats", kind = "nats", ppl = "training perplexity" },
  logit_norm = { label = "logit norm", short = "logit norm", dec = 3, noun = "logit norm" },
  max_logit = { label = "max logit", short = "max logit", dec = 3, noun = "largest logit" },
  -- the outcomes of a learning-rate sweep, per seed over a group's grid (lua/repro/analysis/lrsens.lua)
  mean_max_loss_jump = { label = "mean largest loss jump (nats)", short = "loss jump",
    dec = 3, noun = "mean largest jump of the training loss over the grid", unit = "nats" },
  gmean_max_grad_norm = { label = "largest grad norm (geom.\\ mean over the grid)",
    short = "largest grad norm", dec = 3,
    noun = "geometric mean over the grid of the largest gradient norm" },
  gmean_logit_growth = { label = "logit growth, ratio to step 0 (geom.\\ mean)",
    short = "logit growth", dec = 3,
    noun = "geometric mean over the grid of the growth of the largest logit" },
  n_diverged = { label = "divergences over the grid (count)", short = "divergences", dec = 2,
    noun = "divergences over the grid", one = "divergence", unit = "grid values",
    kind = "count" },
  log10_diverge_lr = { label = "$\\log_{10}$ of the first diverging lr", short = "divergence lr",
    dec = 2, noun = "$\\log_{10}$ of the first learning rate at which the run diverged",
    unit = "decades" },
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

-- Plain text as LaTeX text: the one function every string from a summary, a record, a
-- study file or the file system goes through before it reaches LaTeX.  Special
-- characters escaped, breaks allowed after underscores, slashes and a comma followed by
-- a letter (key=value lists), a few non-ASCII symbols as their LaTeX forms, any other
-- valid UTF-8 character as "?", any byte of invalid UTF-8 as "?" and any control
-- character (newline, NUL, escape, ...) as a space: the result is printable ASCII in
-- which every backslash begins one of the commands above, so it cannot end a group,
-- start a command, a comment or math, or break the file's encoding.
function M.escape(s)
  s = tostring(s):gsub("[%z\1-\31\127]", " ")
  s = s:gsub("[\\{}$&#^_%%~<>|/]", ESCAPE):gsub(",(%a)", ",\\allowbreak{}%1")
  s = s:gsub("[\xc2-\xdf][\x80-\xbf]", function(ch) return UNICODE[ch] or "?" end)
  s = s:gsub("[\xe0-\xef][\x80-\xbf][\x80-\xbf]", function(ch) return UNICODE[ch] or "?" end)
  s = s:gsub("[\xf0-\xf4][\x80-\xbf][\x80-\xbf][\x80-\xbf]", "?")
  return (s:gsub("[\x80-\xff]", "?"))
end

-- A name as a LaTeX key (inside \csname ... \endcsname, \label{...}, a table's or
-- figure's name): only a name of the suite's rule (base.valid_name) may be one; anything
-- else is a bug upstream (names from the file system are checked where they are read).
function M.key(s)
  if not base.valid_name(s) then
    error(string.format("report: %q cannot be a LaTeX key (not a name)", tostring(s)), 2)
  end
  return s
end

local DIGIT = { ["0"] = "Zero", ["1"] = "One", ["2"] = "Two", ["3"] = "Three", ["4"] = "Four",
  ["5"] = "Five", ["6"] = "Six", ["7"] = "Seven", ["8"] = "Eight", ["9"] = "Nine",
  ["."] = "Point" }

-- A LaTeX control-sequence name of letters only from parts such as "init_scale",
-- "norm-lr1e-2", "ValLoss": words capitalized, digits spelled out.
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
M.DASH = DASH

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

-- A config value as a study file would write it (integral numbers without ".0").
function M.config_text(v)
  if math.type(v) == "float" and v == math.floor(v) and math.abs(v) < 2 ^ 53 then
    return string.format("%d", v)
  end
  if type(v) == "number" then return string.format("%.10g", v) end
  return tostring(v)
end

-- A learning rate for siunitx: below 0.01 as m e-k with 3 significant digits of m (printed
-- 3 x 10^-4), otherwise as the config writes it.
function M.lr(x)
  if x > 0 and x < 0.01 then
    local e = math.floor(math.log(x, 10) + 1e-9)
    return "\\num{" .. string.format("%.3g", x / 10 ^ e) .. "e" .. string.format("%d", e) .. "}"
  end
  return "\\num{" .. M.config_text(x) .. "}"
end

return M
