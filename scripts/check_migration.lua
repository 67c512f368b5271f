-- Checks that summaries written by the codes-only analysis keep every finding of the
-- summaries at an older commit (default ab155014, the last with words in them): every
-- numeric leaf and every verdict at the same path, and every reason and sentence the old
-- summary held in words said again, word for word, from the new summary's codes and
-- numbers (lua/repro/analysis/words.lua).  Prints the counts and the prose keys dropped.
-- Usage: bin/repro script scripts/check_migration.lua [COMMIT]
local json = require "repro.core.json"
local words = require "repro.analysis.words"
local replication = require "repro.analysis.replication"
local power = require "repro.study.power"
local rule1 = require "repro.analysis.rule1"
local h1a = require("repro.core.extension").load("paper/lib/h1a.lua", "check_migration")

local rev = arg and arg[1] or "ab155014"
local records = require "repro.analysis.records"
local lrsens = require "repro.analysis.lrsens"
local guardrail = require "repro.analysis.guardrail"
local claim = require("repro.core.extension").load("paper/lib/claim.lua", "check_migration")
local function kind_words(r) return words.INTERVAL_KIND[r.ci_kind] end
local function seed_label(p, _, _, k) return (p[k]:gsub("^seed%-", "seed ")) end

-- The key map: each prose key of the old summaries and how the new summary says it
-- (a function of the new parent table, the summary or its section, the grandparent and
-- the key), or false where it is dropped (a constant of the code, or a list of lines the
-- terminal now makes).  A key under sweep_outcomes is looked up without that prefix.
local KEY_MAP = {
  ["verdicts.#.reason"] = function(v, sum)
    return v.reason ~= "no_pairs" and words.reason(v, words.entry_of(v, sum), sum.analysis) or nil
  end,
  ["interaction_verdicts.#.reason"] = function(v, sum)
    return v.reason ~= "no_pairs" and words.reason(v, words.entry_of(v, sum), sum.analysis) or nil
  end,
  ["verdicts.#.sentence"] = function(v, sum) return words.sentence(v, sum) end,
  ["interaction_verdicts.#.sentence"] = function(v, sum) return words.sentence(v, sum) end,
  ["comparisons.#.reason"] = function(e) return words.paired(e) end,
  ["interactions.#.reason"] = function(e) return words.paired(e) end,
  ["secondary_comparisons.#.reason"] = function(e) return words.paired(e) end,
  ["comparisons.#.mde_adjusted.reason"] = function(m, _, parent) return words.mde_reason(m, parent.n) end,
  ["comparisons.#.tost.fallback"] = function(x, _, parent) return words.tost_fallback(x, parent.n) end,
  ["analysis.family"] = function(an) return words.family(an) end,
  ["analysis.family_rule1"] = function(an) return words.family_rule1(an) end,
  ["analysis.rule_note"] = function(an) return words.rule_note(an) end,
  ["analysis.seeds_from_power.sd_source"] = function(p) return power.sd_source_words(p) end,
  ["replication.entries.#.reason"] = function(e) return replication.entry_reason(e) end,
  ["replication.entries.#.direction"] = function(e) return replication.direction(e) end,
  ["replication.claims.#.reason"] = function(c) return replication.claim_reason(c) end,
  ["sweep_outcomes.verdicts.#.reason"] = function(v, sum)
    return words.reason(v, words.entry_of(v, sum), sum.analysis)
  end,
  ["sweep_outcomes.verdicts.#.sentence"] = function(v, sum) return words.sentence(v, sum) end,
  ["sweep_outcomes.analysis.family"] = function(an) return words.family(an) end,
  ["comparisons.#.robust.ci_kind"] = kind_words,
  ["interactions.#.robust.ci_kind"] = kind_words,
  ["secondary_comparisons.#.robust.ci_kind"] = kind_words,
  ["analysis.family_tests.#"] = function(list, _, _, k) return words.family_label(list[k]) end,
  ["definitions.*"] = function(_, sec, _, m)
    return sec == "outcomes" and lrsens.OUTCOMES[m] or records.definition(m)
  end,
  ["warnings.#.text"] = function(w) return guardrail.entry(w.variant, w.val_ppl, w.data).text end,
  ["pilot_comparisons.#.at"] = function(_, sum) return "each group's best " .. sum.lr_sweep.over end,
  ["pilot_comparisons.#.treatment"] = seed_label, ["pilot_comparisons.#.baseline"] = seed_label,
  ["analysis.seeds_from_power.pilot_comparisons.#.treatment"] = seed_label,
  ["analysis.seeds_from_power.pilot_comparisons.#.baseline"] = seed_label,
  ["claim.pilot.treatment"] = seed_label, ["claim.pilot.baseline"] = seed_label,
  ["pilot_comparisons.#.definition"] = function(p) return claim.pilot_words(p) end,
  ["claim.pilot.definition"] = function(p) return claim.pilot_words(p) end,
  ["claim.sentence"] = function(c) return claim.sentence(c) end,
  ["claim.text.#"] = function(_, sum, _, k) return claim.text(sum.claim)[k] end,
  ["claim.excluded.#.reason"] = function(e, sum) return claim.excluded_words(e, sum.claim.ngram) end,
  ["claim.ranking.#.distance.terms.#.sigma_source"] = function(t) return claim.sigma_words(t) end,
  ["claim.setups.#.rows.*.distance.terms.#.sigma_source"] = function(t)
    return claim.sigma_words(t)
  end,
  ["verdicts.#.sentence_rule1"] = function(v, sum)
    return select(2, rule1.verdict_rule1(words.entry_of(v, sum), sum.analysis))
  end,
  ["h1a.norms.*.verdict"] = function(e) return h1a.verdict_words(e) end,
  ["notes.#"] = function(_, sum, _, k) return words.notes(sum)[k] end,
  ["replication.text.#"] = function(_, sum, _, k) return replication.text(sum.replication)[k] end,
  ["h1a.text.#"] = function(_, sum, _, k) return h1a.text(sum.h1a)[k] end,
  ["lr_sweep.bootstrap.note"] = function(b) return lrsens.bootstrap_note(b) end,
  -- dropped: constants of the code, or the terminal's lines
  ["analysis.decision_rule"] = false, ["analysis.decision_rule_1"] = false,
  ["analysis.robust"] = false, ["analysis.design_notes"] = false, 
    ["replication.rules"] = false,
  
  ["sweep_outcomes.description"] = false,
  ["claim.source"] = false, ["claim.ngram.method"] = false,
  ["claim.definition"] = false, ["claim.effect_definition"] = false,
  ["lr_sweep.definition"] = false, 
  ["replication.entries.#.original.derived"] = false, ["variance_components.method"] = false,
}

-- The key of a path (a list of keys): list indices as "#", h1a's norms as "*".
local function key_of(path)
  local parts = {}
  for i, k in ipairs(path) do
    parts[i] = type(k) == "number" and "#" or k
    if i == 3 and path[1] == "h1a" and path[2] == "norms" then parts[i] = "*" end
    if path[i - 1] == "definitions" or path[i - 1] == "rows" then parts[i] = "*" end
  end
  return table.concat(parts, ".")
end

local function get(t, path, n)
  for i = 1, n or #path do
    if type(t) ~= "table" then return nil end
    t = t[path[i]]
  end
  return t
end

local counts = { numbers = 0, verdicts = 0, reasons = 0, dropped = {}, failed = 0 }
local function fail(study, path, why)
  counts.failed = counts.failed + 1
  if counts.failed <= 20 then
    print(string.format("MISMATCH %s %s: %s", study, table.concat(path, "."), why))
  end
end

local function compare(study, old, new)
  local path = {}
  local function walk(v)
    if type(v) == "table" then
      for k, x in pairs(v) do
        path[#path + 1] = k
        walk(x)
        path[#path] = nil
      end
      return
    end
    local key = key_of(path)
    local list_key = key:gsub("%.#$", "")
    local sub = key:match("^sweep_outcomes%.(.*)$")
    local mapped = KEY_MAP[key]
    if mapped == nil and sub then mapped = KEY_MAP[sub] end
    if mapped == nil then mapped = KEY_MAP[(sub or key):gsub("%.#$", "")] end
    if type(v) == "number" then
      local got = get(new, path)
      if got == v then counts.numbers = counts.numbers + 1
      else fail(study, path, string.format("%.17g -> %s", v, tostring(got))) end
    elseif type(v) == "string" and mapped == nil and
      (key:match("verdict$") or key:match("verdict_rule1$")) then
      if get(new, path) == v then counts.verdicts = counts.verdicts + 1
      else fail(study, path, v .. " -> " .. tostring(get(new, path))) end
    elseif type(v) == "string" and mapped == nil and v:find("%s") and get(new, path) ~= v then
      local k = "(unmapped) " .. list_key
      counts.dropped[k] = (counts.dropped[k] or 0) + 1
    elseif type(v) == "string" and mapped ~= nil then
      if mapped == false then
        counts.dropped[list_key] = (counts.dropped[list_key] or 0) + 1
      else
        local section = sub and new.sweep_outcomes or new
        if sub and path[2] == "definitions" then section = "outcomes" end
        local said = mapped(get(new, path, #path - 1), section, get(new, path, #path - 2),
          path[#path])
        if said == v then counts.reasons = counts.reasons + 1
        else fail(study, path, string.format("%q -> %q", v:sub(1, 100), tostring(said):sub(1, 100))) end
      end
    end
  end
  walk(old)
end

local n = 0
for name in io.popen("ls experiments"):lines() do
  local p = io.popen(string.format("git show %s:experiments/%s/summary.json 2>/dev/null", rev, name))
  local old_text = p:read("a")
  p:close()
  local f = io.open("experiments/" .. name .. "/summary.json")
  if f and old_text ~= "" then
    local new = json.decode(f:read("a"))
    f:close()
    compare(name, json.decode(old_text), new)
    n = n + 1
  end
end
print(string.format("%d summaries against %s: %d numbers, %d verdicts and %d reasons and " ..
  "sentences kept; %d mismatches", n, rev, counts.numbers, counts.verdicts, counts.reasons,
  counts.failed))
local keys = {}
for k in pairs(counts.dropped) do keys[#keys + 1] = k end
table.sort(keys)
for _, k in ipairs(keys) do print(string.format("  dropped %-40s %d", k, counts.dropped[k])) end
os.exit(counts.failed == 0 and 0 or 1)
