-- Findings are data: every string of every committed summary.json is a code of the
-- analysis's vocabulary (lua/repro/analysis/words.lua), a name (study, variant, metric,
-- file: no space in it), or a byte copy of a string of the study file it came from.
-- The words a reader sees are made from the codes and numbers where they are shown.
local check = require "check"
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local study = require "repro.study"
local words = require "repro.analysis.words"

local t = check.new("test_summary_strings")

-- Every string a loaded study holds, as a set.
local function strings_of(v, set, seen)
  if type(v) == "string" then set[v] = true
  elseif type(v) == "table" and not seen[v] then
    seen[v] = true
    for k, x in pairs(v) do
      strings_of(k, set, seen)
      strings_of(x, set, seen)
    end
  end
  return set
end

-- The problems of summary `sum` whose study holds the strings `own`.
local function problems(sum, own, extra)
  local out = {}
  local function walk(v, path, key)
    if type(v) == "table" then
      for k, x in pairs(v) do
        walk(x, path .. "." .. tostring(k), type(k) == "string" and k or key)
      end
    elseif type(v) == "string" then
      local codes = words.CODES[key]
      if codes or (extra or {})[key] then
        if not (codes or {})[v] and not ((extra or {})[key] or {})[v] and not own[v] then
          out[#out + 1] = string.format("%s = %q is not a %s code", path, v, key)
        end
      elseif v:find("%s") and not own[v] then
        out[#out + 1] = string.format("%s = %q is words, not a code, a name or the study " ..
          "file's", path, v:sub(1, 60))
      end
    end
  end
  walk(sum, "", nil)
  return out
end

local n_strings, n_studies = 0, 0
for name in io.popen("ls experiments"):lines() do
  local text = fs.read("experiments/" .. name .. "/summary.json")
  if text then
    local sum = json.decode(text)
    local s = study.load("lua/experiments/" .. name .. ".lua")
    -- an extension (the paper's claim) brings its own codes
    local extra = {}
    for _, ext in pairs(s.extensions or {}) do
      for key, set in pairs(ext.CODES or {}) do extra[key] = set end
    end
    local bad = problems(sum, strings_of(s, {}, {}), extra)
    t:ok(#bad == 0, name .. ": every string is a code, a name or the study file's" ..
      (#bad > 0 and (": " .. #bad .. ", first " .. bad[1]) or ""))
    n_studies = n_studies + 1
    for _ in text:gmatch('"[^"]*"%s*[,%]}\n]') do n_strings = n_strings + 1 end
  end
end
t:ok(n_studies >= 30, "the committed summaries were read: " .. n_studies)

-- the check can fail: a sentence planted in a summary is caught, and so is an unknown code
local planted = { verdicts = { { verdict = "better", reason = "the p is small" } } }
t:eq(#problems(planted, {}), 1, "a reason in words is refused")
planted.verdicts[1].reason = "holm_better"
t:eq(#problems(planted, {}), 0, "its code is accepted")
planted.verdicts[1].verdict = "much_better"
t:eq(#problems(planted, {}), 1, "a verdict outside the vocabulary is refused")
t:done()
