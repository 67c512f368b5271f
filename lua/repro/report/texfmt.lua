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

-- The metrics' words, units, decimals and directions: analysis/words.lua's one table.
M.METRIC = require("repro.analysis.words").METRIC

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
