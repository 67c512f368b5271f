-- The studies the report reads (lua/repro/report/init.lua): each study's summary.json with
-- lazy access to its run records (metrics.json, config.json, log.csv), its variants
-- labelled by embedding norm and setting (short labels for the tables; names for the
-- prose, from the paper's manifest: M.name_variants), the nested summaries a summary may
-- hold (M.SECTIONS: Study:section, a Study over one of them) and the groups of its
-- learning-rate sweep named by their config (Study:sweep_groups), and the one choice of
-- which interval and minimum detectable effect of a comparison the report prints.
local fs = require "repro.core.fs"
local record = require "repro.record"
local json = require "repro.core.json"
local engine = require "engine"
local analysis = require "repro.analysis"
local texfmt = require "repro.report.texfmt"

local M = {}
local finite = texfmt.finite

local base = require "repro.core.base"
local sys = require "repro.sys"
local host = require "repro.host"
local user_error = base.user_error

-- A study's treatment factor: what its variants compare, and how the report shows it.
--   key       the config key whose values are the factor's levels (the other keys in
--             which variants differ are their setting); nil: each variant is a level of
--             its own, named by its name, and the variants share one setting
--   baseline  the level the others are drawn against (default: the level of the
--             analysis's baseline variant, else of the first variant)
--   labels    level -> its label in tables and figures (default the level itself)
--   names     level -> its name in the prose (default its label)
--   colors    level -> a gnuplot colour "#rrggbb"; points: level -> a point type (a
--             factor that gives none: its first levels, in order, get M.DEFAULT_COLORS
--             and M.DEFAULT_POINTS; any other level the next spare one of the figure)
-- The paper's manifest gives one for every study of the paper (its `factor`); a study
-- alone reads its summary's `factor` (the study file's, when it declares one: a config
-- key), else each variant is its own level.
M.DEFAULT_COLORS = { "#000000", "#0072B2", "#D55E00" } -- Okabe-Ito black, blue, vermilion
M.DEFAULT_POINTS = { 7, 9, 5 } -- filled circle, triangle, square

function M.factor_of(sum, given)
  local f = {}
  for k, v in pairs(given or {}) do f[k] = v end
  if not given and type(sum.factor) == "string" then f.key = sum.factor end
  f.labels, f.names = f.labels or {}, f.names or {}
  f.colors, f.points = f.colors or {}, f.points or {}
  return f
end

-- The nested summaries a study's summary may hold, each a full summary (per_variant,
-- comparisons, verdicts, analysis; lua/repro/analysis/init.lua) of its own variants: `macro`
-- names its numbers in numbers.tex after the study's (tex_numbers.lua).
--   sweep_outcomes   per-seed outcomes over each group of a learning-rate sweep, the
--                    groups as variants (lua/repro/analysis/lrsens.lua)
M.SECTIONS = {
  { key = "sweep_outcomes", macro = "Outcomes" },
}

-- A study read from its summary.json, with lazy access to its run records; or a Study
-- over a nested section of a summary (Study:section), with no run records.
local Study = {}
Study.__index = Study

local function int(x) return string.format("%d", x) end

function Study:run_dir(variant, seed)
  return string.format("%s/%s/seed-%s", self.dir, variant, int(seed))
end

-- {metrics = table or nil, log = parsed log.csv or nil, config = table or nil}
function Study:record(variant, seed)
  local key = variant .. "\0" .. int(seed)
  local r = self.records[key]
  if r then return r end
  if self.no_records then
    r = {}
    self.records[key] = r
    return r
  end
  local dir = self:run_dir(variant, seed)
  r = {}
  self.records[key] = r
  -- only a record that proves its content (record.verify), in real directories
  for _, d in ipairs({ dir:match("^(.*)/[^/]+$"), dir }) do
    local st = sys.lstat(d)
    if st and st.type == "link" then
      io.stderr:write(string.format("report: warning: %s is a symbolic link: not read\n",
        base.printable(d)))
      return r
    end
  end
  local state = record.verify(dir)
  if state ~= "verified" then
    if state ~= "unfinished" then
      io.stderr:write(string.format("report: warning: %s: %s: not read (bin/repro verify)\n",
        base.printable(dir), state))
    end
    return r
  end
  local ok, m = pcall(json.decode, fs.read(dir .. "/metrics.json") or "")
  if ok and type(m) == "table" then r.metrics = m end
  local cok, c = pcall(json.decode, fs.read(dir .. "/config.json") or "")
  if cok and type(c) == "table" then r.config = c end
  return r
end

function Study:log(variant, seed)
  local r = self:record(variant, seed)
  if self.no_records or not r.metrics then return nil end
  if r.log == nil then
    local text = fs.read(self:run_dir(variant, seed) .. "/log.csv")
    r.log = text and analysis.parse_log(text) or false
  end
  return r.log or nil
end

-- Where a run's record comes from: the `copied_from` of its manifest.json (a run copied
-- from an identical done record of another study, lua/repro/plan/init.lua; relative to the
-- experiments root, "final/none/seed-1"), else the run itself ("<study>/<variant>/seed-N").
-- Two runs with the same origin are one run.
function Study:origin(variant, seed)
  local key = variant .. "\0" .. int(seed)
  self.origins = self.origins or {}
  local o = self.origins[key]
  if o then return o end
  local own = string.format("%s/%s/seed-%s", self.name, variant, int(seed))
  local ok, m = pcall(json.decode, fs.read(self:run_dir(variant, seed) .. "/manifest.json") or "")
  o = (ok and type(m) == "table" and type(m.copied_from) == "string") and m.copied_from or own
  self.origins[key] = o
  return o
end

-- Whether every run of the study has its record (metrics.json and log.csv).
function Study:has_records()
  if self.records_ok == nil then
    self.records_ok = true
    for _, v in ipairs(self.variants) do
      for _, seed in ipairs(self.seeds) do
        if not self:record(v.name, seed).metrics or not self:log(v.name, seed) then
          self.records_ok = false
        end
      end
    end
  end
  return self.records_ok
end

-- One run's value of `metric`: the summary's when it has the metric, else the record's;
-- nil for an undefined value or one the analysis's masking rule leaves out of a diverged
-- run (analysis.masked).
function Study:value(variant, seed, metric)
  local pv = self.summary.per_variant[variant]
  local sm = pv and pv.metrics and pv.metrics[metric]
  if sm and type(sm.values) == "table" then
    for i, s in ipairs(sm.seeds or self.seeds) do
      if s == seed then
        local x = sm.values[i]
        return finite(x) and x or nil
      end
    end
    return nil
  end
  local m = self:record(variant, seed).metrics
  if not m then return nil end
  if metric == "diverged" then return m.diverged == true and 1 or 0 end
  if metric == "n_spikes" then
    local log = self:log(variant, seed)
    if not log then return nil end
    return (analysis.spikes(log.data.loss or {}, log.n))
  end
  if analysis.masked(metric, m.diverged == true) then return nil end
  local x = m[metric]
  return finite(x) and x or nil
end

-- The finite values of `metric` over the study's seeds, in seed order.
function Study:values(variant, metric)
  local out = {}
  for _, seed in ipairs(self.seeds) do
    local x = self:value(variant, seed, metric)
    if x ~= nil then out[#out + 1] = x end
  end
  return out
end

-- The per-variant statistics of `metric` (n, mean, sd, min, max, median; undefined ones
-- absent), as the summary has them (per_variant): the report never recomputes one.  A
-- metric the summary does not describe (no record carries it) has only its n = 0.
function Study:stat(variant, metric)
  local pv = self.summary.per_variant[variant]
  local sm = pv and pv.metrics and pv.metrics[metric]
  if not sm then return { n = 0 } end
  return { n = sm.n, mean = sm.mean, sd = sm.sd, min = sm.min, max = sm.max,
    median = sm.median }
end

-- A config value of a variant: from a record's config.json, else the study's overrides
-- over the engine defaults.
function Study:config_value(variant, key)
  for _, seed in ipairs(self.seeds) do
    local c = self:record(variant, seed).config
    if c and c[key] ~= nil then return c[key] end
  end
  local v = self.variant_by_name[variant]
  if v and v.overrides[key] ~= nil then return v.overrides[key] end
  if self.base[key] ~= nil then return self.base[key] end
  return engine.defaults()[key]
end

-- The comparison entries of the summary on `metric` (primary when nil), in order.
function Study:comparisons(metric)
  metric = metric or self.primary
  local out = {}
  for _, c in ipairs(self.summary.comparisons or {}) do
    if c.metric == metric then out[#out + 1] = c end
  end
  return out
end

function Study:verdict(c)
  for _, v in ipairs(self.summary.verdicts or {}) do
    if v.treatment == c.treatment and v.baseline == c.baseline and v.metric == c.metric then
      return v
    end
  end
  return nil
end

-- The settings of the study: variants grouped by their overrides other than embed_norm,
-- in order of first appearance: {{key, label, variants = {...}}}.
function Study:settings()
  return self.setting_list
end

-- A variant's parameter count: the first of its records that has one, or nil.
function Study:params(variant)
  for _, seed in ipairs(self.seeds) do
    local m = self:record(variant, seed).metrics
    if m and finite(m.params) then return m.params end
  end
  return nil
end

-- The parameter count of a setting's variants (from the records: none's, else the
-- first variant's that has one), or nil.
function Study:setting_params(st)
  local p
  for _, v in ipairs(st.variants) do
    if v.level == self.factor.baseline or not p then p = self:params(v.name) or p end
  end
  return p
end

-- The one place the report chooses what it prints of a comparison or interaction c
-- (tables, numbers.tex, figures and tests/report/check_pdf.lua alike): the interval is
-- the decision interval the verdict uses (lua/repro/analysis/init.lua), nil when the test
-- cannot bound the difference or there are no pairs.
function M.interval(c)
  return c.ci_decision
end

-- The minimum detectable effect: at the Holm first-step level alpha / m for a family
-- comparison (absent when its test cannot reach that level), else the unadjusted one.
function M.mde(c)
  if c.mde_adjusted then return c.mde_adjusted.value end
  return c.mde
end

-- A config value as the prose writes it (LaTeX): integers as they are, other numbers
-- through siunitx, strings escaped, booleans as true/false.
local function value_text(v)
  if math.type(v) == "integer" or (type(v) == "number" and v == math.floor(v)
      and math.abs(v) < 2 ^ 53) then
    return string.format("%d", v)
  end
  if type(v) == "number" then return "\\num{" .. string.format("%g", v) .. "}" end
  return texfmt.escape(tostring(v))
end

-- The phrase of one config key's value: the manifest's format (a string with %s for the
-- value, or a table from value to phrase), else "with <key> = <value>".
local function key_phrase(format, key, v)
  if type(format) == "table" then
    local p = format[v]
    if p == nil then p = format[tostring(v)] end
    if type(p) == "string" then return p end
  elseif type(format) == "string" then
    return (format:gsub("%%s", function() return value_text(v) end))
  end
  return "with " .. texfmt.escape(key) .. " = " .. value_text(v)
end

-- The names the prose gives the variants of study s (LaTeX), from `names` (the paper's
-- manifest: names.embed_norm = {value -> name}, names.keys = a list of {key =, format =},
-- format a string with %s, a table from value to phrase, or false to leave the key out
-- where the other keys tell the settings apart).  Each variant gets
--   prose_norm     the name of its embed_norm value (names.embed_norm, else M.NORM_NAMES,
--                  else the value)
--   prose_setting  a phrase for the config keys other than embed_norm in which the
--                  study's variants differ ("at lr 0.003"), "" when they differ in none;
--                  keys in the manifest's order, then the others by name
--   prose          the two together ("LayerNorm at lr 0.003")
--   table_setting  the tables' phrase of the same keys, ", " between them: each key's
--                  names.keys label (as format; "warmup %s"), else its format, else
--                  "<key> = <value>"
-- No paper is named here: without a manifest every key reads "with <key> = <value>".
function M.name_variants(s, names)
  names = names or {}
  local f = s.factor
  local base, defaults = s.base or s.summary.base or {}, engine.defaults()
  local function value_of(v, k)
    if v.overrides[k] ~= nil then return v.overrides[k] end
    if base[k] ~= nil then return base[k] end
    return defaults[k]
  end
  local seen, keys = {}, {}
  for _, v in ipairs(s.variants) do
    for k in pairs(v.overrides) do
      if f.key and k ~= f.key and not seen[k] then
        seen[k] = true
        keys[#keys + 1] = k
      end
    end
  end
  local differ = {}
  for _, k in ipairs(keys) do
    for _, v in ipairs(s.variants) do
      if value_of(v, k) ~= value_of(s.variants[1], k) then differ[k] = true end
    end
  end
  local format, label, order = {}, {}, {}
  for _, e in ipairs(names.keys or {}) do
    format[e.key] = e.format
    label[e.key] = e.label
    if differ[e.key] then order[#order + 1] = e.key end
  end
  local rest = {}
  for k in pairs(differ) do
    if format[k] == nil then rest[#rest + 1] = k end
  end
  table.sort(rest)
  for _, k in ipairs(rest) do order[#order + 1] = k end
  -- `short`: the tables' phrase (the key's label, else its format, else "<key> = <value>").
  local function phrase(v, hide, short)
    local parts = {}
    for _, k in ipairs(order) do
      if not (hide and format[k] == false) then
        local f = format[k]
        if short then
          f = label[k] or (f ~= false and f) or (texfmt.escape(k) .. " = %s")
        end
        parts[#parts + 1] = key_phrase(f, k, value_of(v, k))
      end
    end
    return table.concat(parts, short and ", " or " ")
  end
  -- Leave out the keys the manifest hides only if the settings stay distinct.
  local hide, by_phrase = true, {}
  for _, v in ipairs(s.variants) do
    local p = phrase(v, true)
    if by_phrase[p] and by_phrase[p] ~= v.setting then hide = false end
    by_phrase[p] = v.setting
  end
  for _, v in ipairs(s.variants) do
    v.prose_level = f.names[v.level] or texfmt.escape(v.level_label)
    v.prose_setting = phrase(v, hide)
    v.prose = v.prose_setting ~= "" and (v.prose_level .. " " .. v.prose_setting) or
      v.prose_level
    v.table_setting = phrase(v, hide, true)
  end
end

-- A Study over summary `sum` (a study's summary.json, or a nested section of one): its
-- variants labelled and named.  `o`: name, dir, names (the prose's names of the variants:
-- M.name_variants), base (the config the variants' overrides apply to; default sum.base),
-- seeds (default sum.seeds), no_records (there are no run records to read) and
-- config_labels (label the variants from their config, never from their code names:
-- each variant's tex_tag is its table_setting and tex_label its norm with it, LaTeX).
local function new_study(sum, o)
  local s = setmetatable({ name = o.name, dir = o.dir, summary = sum, records = {},
    seeds = o.seeds or sum.seeds or {}, variants = {}, variant_by_name = {}, setting_list = {},
    base = o.base or sum.base or {}, names = o.names, no_records = o.no_records,
    section_cache = {} }, Study)
  s.analysis = sum.analysis or {}
  s.primary = s.analysis.primary
  local f = M.factor_of(sum, o.factor)
  s.factor = f
  -- what a nested summary of this study is read with (Study:section, Study:sweep_groups)
  s.factor_spec = o.factor or (f.key and { key = f.key }) or nil
  local base_level = f.key and s.base[f.key]
  if f.key and base_level == nil then base_level = engine.defaults()[f.key] end
  local by_key = {}
  for _, v in ipairs(sum.variants or {}) do
    local ov = v.overrides or {}
    local norm = v.name
    if f.key then
      norm = ov[f.key]
      if norm == nil then norm = base_level end
      norm = tostring(norm)
    end
    local keys = {}
    for k in pairs(ov) do
      if f.key and k ~= f.key then keys[#keys + 1] = k end
    end
    table.sort(keys)
    local parts = {}
    for _, k in ipairs(keys) do parts[#parts + 1] = k .. "=" .. tostring(ov[k]) end
    local key = table.concat(parts, ",")
    -- A variant named "<norm>-<tag>" is labelled by its tag; otherwise by its overrides.
    local tag
    if v.name == norm then
      tag = key
    elseif v.name:sub(1, #norm + 1) == norm .. "-" then
      tag = v.name:sub(#norm + 2)
    else
      tag = key ~= "" and key or v.name
    end
    local info = { name = v.name, overrides = ov, level = norm, setting = key, tag = tag,
      level_label = f.labels[norm] or norm, color = f.colors[norm], point = f.points[norm] }
    info.label = tag ~= "" and (info.level_label .. ", " .. tag) or info.level_label
    s.variants[#s.variants + 1] = info
    s.variant_by_name[v.name] = info
    local st = by_key[key]
    if not st then
      st = { key = key, label = tag, variants = {} }
      by_key[key] = st
      s.setting_list[#s.setting_list + 1] = st
    end
    st.variants[#st.variants + 1] = info
  end
  if next(f.colors) == nil and next(f.points) == nil then
    local index, k = {}, 0
    for _, v in ipairs(s.variants) do
      if not index[v.level] then k = k + 1; index[v.level] = k end
      v.color, v.point = M.DEFAULT_COLORS[index[v.level]], M.DEFAULT_POINTS[index[v.level]]
    end
  end
  if f.baseline == nil then
    local b = s.variant_by_name[s.analysis.baseline or ""] or s.variants[1]
    f.baseline = b and b.level
  end
  M.name_variants(s, o.names)
  if o.config_labels then
    for _, v in ipairs(s.variants) do
      v.tex_tag = v.table_setting
      v.tex_label = texfmt.escape(v.level_label) ..
        (v.table_setting ~= "" and (", " .. v.table_setting) or "")
    end
    for _, st in ipairs(s.setting_list) do st.tex_label = st.variants[1].tex_tag end
  end
  return s
end
M.new_study = new_study

-- The nested summary self.summary[key] (M.SECTIONS) as a Study with the same methods over
-- it: named as this study, its variants (e.g. a sweep's groups, with the overrides their
-- grids share) labelled by their config over this study's base; no run records.  nil
-- when the summary has no such section.
function Study:section(key)
  local sec = self.section_cache[key]
  if sec == nil then
    local sum = self.summary[key]
    if type(sum) == "table" and type(sum.per_variant) == "table" then
      sec = new_study(sum, { name = self.name, dir = self.dir, names = self.names,
        base = self.base, seeds = self.seeds, no_records = true, config_labels = true,
        factor = self.factor_spec })
      sec.section_key, sec.parent = key, self
    else
      sec = false
    end
    self.section_cache[key] = sec
  end
  return sec or nil
end

-- The sections of M.SECTIONS this study's summary has: a list of {key =, macro =, study =}.
function Study:sections()
  local out = {}
  for _, e in ipairs(M.SECTIONS) do
    local sec = self:section(e.key)
    if sec then out[#out + 1] = { key = e.key, macro = e.macro, study = sec } end
  end
  return out
end

-- The groups of the study's learning-rate sweep (summary.lr_sweep) as the variants of a
-- Study with no records, each with the config overrides its variants share (not the swept
-- key, nor one that varies with it), labelled and named by that config as
-- Study:section's are (its `known` set: the groups with a variant of the summary, the
-- others have no config to be named by); nil when the summary has no sweep.
function Study:sweep_groups()
  local sw = self.summary.lr_sweep
  if type(sw) ~= "table" or type(sw.groups) ~= "table" then return nil end
  if self.sweep_group_study == nil then
    local variants, known = {}, {}
    for _, name in ipairs(sw.order or {}) do
      local shared
      for _, vn in ipairs((sw.groups[name] or {}).variants or {}) do
        local v = self.variant_by_name[vn]
        known[name] = known[name] or v ~= nil
        local ov = v and v.overrides or {}
        if not shared then
          shared = {}
          for k, x in pairs(ov) do shared[k] = x end
        else
          for k, x in pairs(shared) do
            if ov[k] ~= x then shared[k] = nil end
          end
        end
      end
      shared = shared or {}
      if sw.over then shared[sw.over] = nil end
      variants[#variants + 1] = { name = name, overrides = shared }
    end
    self.sweep_group_study = new_study({ per_variant = {}, variants = variants },
      { name = self.name, dir = self.dir, names = self.names, base = self.base,
        seeds = self.seeds, no_records = true, config_labels = true,
        factor = self.factor_spec })
    self.sweep_group_study.known = known
  end
  return self.sweep_group_study
end

-- The first key path at which the decoded values a and b differ ("per_variant.none.n"),
-- walking object keys in sorted order; nil when they are equal.
local function first_difference(a, b, path)
  if type(a) ~= "table" or type(b) ~= "table" then
    if a == b or (a ~= a and b ~= b) then return nil end
    return path == "" and "(the whole document)" or path
  end
  local keys, seen = {}, {}
  for _, t in ipairs({ a, b }) do
    for k in pairs(t) do
      if not seen[k] then seen[k], keys[#keys + 1] = true, k end
    end
  end
  table.sort(keys, function(x, y)
    if type(x) == type(y) then return x < y end
    return type(x) == "number"
  end)
  for _, k in ipairs(keys) do
    local sub = type(k) == "number" and string.format("%s[%d]", path, k) or
      (path == "" and tostring(k) or path .. "." .. tostring(k))
    local d = first_difference(a[k], b[k], sub)
    if d then return d end
  end
  return nil
end
M.first_difference = first_difference

-- Refuses (a user error naming the file and the first differing key) the summary `text`
-- of the study `name` under exp_dir unless it is, byte for byte, the summary the
-- analysis computes now from the verified records beside it (analysis.study_records and
-- summary_of, as `bin/repro analyze` writes it): the study file the summary names
-- (`file`, relative to the project root) evaluated with the summary's
-- `command_line_overrides`, reading other studies' results under exp_dir.  A digest of
-- the records alone proves nothing about the numbers next to it, since anyone can
-- recompute it.
function M.check_summary(exp_dir, name, text, sum)
  local path = exp_dir .. "/" .. name .. "/summary.json"
  local function refuse(fmt, ...)
    user_error("report: %s %s: refused (bin/repro analyze writes it again from the " ..
      "verified records)", path, string.format(fmt, ...))
  end
  if type(sum.file) ~= "string" or sum.file == "" then
    refuse("names no study file (`file`) to recompute it from")
  end
  local file = sum.file:sub(1, 1) == "/" and sum.file or (host.root .. "/" .. sum.file)
  if not sys.lstat(file) then
    refuse("cannot be recomputed: its study file %s does not exist", base.printable(sum.file))
  end
  local set = sum.command_line_overrides
  if set ~= nil and type(set) ~= "table" then refuse("has a malformed command_line_overrides") end
  local study = require "repro.study"
  local ok, s = pcall(study.load, file, set, { out_root = exp_dir })
  if not ok then
    local msg = type(s) == "table" and tostring(s.message) or tostring(s)
    local lines = {}
    for l in msg:gmatch("[^\n]+") do
      if #lines < 2 then lines[#lines + 1] = l:gsub("^%s+", "") end
    end
    refuse("cannot be recomputed: its study file %s: %s", base.printable(sum.file),
      base.printable(table.concat(lines, " ")))
  end
  s.file_rel = fs.relative_to_root(file)
  if s.name ~= name then
    refuse("names the study file of another study (%s)", base.printable(s.name))
  end
  local records, missing = analysis.study_records(s, exp_dir .. "/" .. name)
  if #missing > 0 then
    refuse("cannot be recomputed: %d run%s not done or not verified (%s)", #missing,
      #missing == 1 and " is" or "s are", table.concat(missing, ", ", 1, math.min(#missing, 5)))
  end
  local _, want = analysis.summary_of(s, exp_dir .. "/" .. name, records)
  if want == text then return end
  local key = first_difference(sum, json.decode(want), "")
  refuse("differs from the summary its records give (first differing key: %s)",
    key and base.printable(key) or "none: the same values, written differently")
end

-- Reads DIR/<name>/summary.json; nil when it does not exist.  `names`: the prose's names
-- of the variants (M.name_variants); `factor`: the study's treatment factor as a paper
-- gives it (M.factor_of; nil: the study's own).  Unless opts.trust_summaries (hand-made
-- summaries of tests: `bin/repro report --trust-summaries`), the summary must be what the
-- analysis computes from its records now (M.check_summary).
function M.load_study(exp_dir, name, names, factor, opts)
  local dir = exp_dir .. "/" .. name
  local text, err = fs.read(dir .. "/summary.json")
  if not text then
    if not sys.lstat(dir .. "/summary.json") then return nil end
    user_error("report: %s", base.printable(err))
  end
  local ok, sum = pcall(json.decode, text)
  if not ok or type(sum) ~= "table" or type(sum.per_variant) ~= "table" then
    user_error("report: %s/summary.json is not a study summary", dir)
  end
  -- its variant names reach gnuplot and LaTeX as its directory's name does
  for v in pairs(sum.per_variant) do
    if not base.valid_name(v) then
      io.stderr:write(string.format("report: warning: skipped %s/summary.json: the variant " ..
        "name '%s' is not a name (%s)\n", dir, base.printable(v), base.NAME_RULE))
      return nil
    end
  end
  -- it describes the records beside it, as they are now (record.records_digest)
  local digest = record.records_digest(dir)
  if sum.records_sha256 ~= digest then
    user_error("report: %s/summary.json %s: refused (bin/repro analyze writes it again from " ..
      "the verified records)", dir, type(sum.records_sha256) ~= "string" and
      "carries no digest of the records it was computed from (records_sha256)" or
      "was computed from other records than those beside it now (records_sha256 differs)")
  end
  if not (opts and opts.trust_summaries) then M.check_summary(exp_dir, name, text, sum) end
  return new_study(sum, { name = name, dir = dir, names = names, factor = factor })
end

-- The names of the studies with a summary under exp_dir, sorted.  A directory whose
-- name breaks the name rule (base.valid_name: it would reach gnuplot and LaTeX) or that
-- is a symbolic link is skipped with a warning on stderr; an exp_dir that is not a
-- directory is an error.
function M.list_studies(exp_dir)
  local st = sys.lstat(exp_dir)
  if not st or st.type ~= "dir" then
    user_error("report: --experiments %s is not a directory%s", exp_dir,
      st and st.type == "link" and " (a symbolic link: not followed)" or "")
  end
  local names = {}
  for _, n in ipairs(sys.listdir(exp_dir) or {}) do
    local path = exp_dir .. "/" .. n
    local nst = sys.lstat(path)
    if nst and nst.type == "link" and base.valid_name(n) and sys.lstat(path .. "/summary.json") then
      io.stderr:write(string.format("report: warning: skipped %s: a symbolic link (records " ..
        "trees hold no links)\n", base.printable(path)))
    elseif nst and nst.type == "dir" and sys.lstat(path .. "/summary.json") then
      if base.valid_name(n) then
        names[#names + 1] = n
      else
        io.stderr:write(string.format("report: warning: skipped the directory %s: not a " ..
          "study name (%s)\n", base.printable(path), base.NAME_RULE))
      end
    end
  end
  table.sort(names)
  return names
end

-- Every study under exp_dir: list (the names of `first` in their order, then the others
-- by name; with `only`, the names of `first` alone) and map; `prose_names`, `factor` and
-- `opts` as `names`, `factor` and `opts` of load_study.
function M.load_all(exp_dir, first, prose_names, factor, only, opts)
  local list, by_name = {}, {}
  local names = M.list_studies(exp_dir)
  local listed = {}
  for _, k in ipairs(first or {}) do listed[k] = true end
  local ordered = {}
  for _, k in ipairs(first or {}) do
    for _, n in ipairs(names) do
      if n == k then ordered[#ordered + 1] = n end
    end
  end
  for _, n in ipairs(names) do
    if not listed[n] and not only then ordered[#ordered + 1] = n end
  end
  for _, n in ipairs(ordered) do
    local s = M.load_study(exp_dir, n, prose_names, factor, opts)
    if s then
      list[#list + 1] = s
      by_name[n] = s
    end
  end
  return list, by_name
end

-- Why a study has nothing to show (plain text).  The experiments root is named by its
-- last component only: an absolute path (a temporary directory, say) says nothing to a
-- reader and may not fit a line.
function M.absent_reason(exp_dir, name)
  local root = tostring(exp_dir):gsub("/+$", ""):match("([^/]+)$") or "experiments"
  return string.format("the %s study has not been run yet (there is no %s/%s/summary.json)",
    name, root, name)
end

return M
