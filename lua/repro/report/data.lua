-- The studies the report reads (lua/repro/report/init.lua): each study's summary.json with
-- lazy access to its run records (metrics.json, config.json, log.csv), its variants
-- labelled by the treatment factor and setting (short labels for the tables; names for the
-- prose, from the paper's manifest: M.name_variants), the nested summaries a summary may
-- hold (M.SECTIONS: Study:section, a Study over one of them) and the groups of its
-- learning-rate sweep named by their config (Study:sweep_groups), and the one choice of
-- which interval and minimum detectable effect of a comparison the report prints.
-- Just over 500 lines: the Study object's methods over one summary and its records, a
-- class; its naming (names.lua) and the summary's recomputation (summary_check.lua) are
-- already apart.
local fs = require "repro.core.fs"
local base = require "repro.core.base"
local json = require "repro.core.json"
local sys = require "repro.sys"
local engine = require "engine"
local reader = require "repro.record.reader"
local set = require "repro.record.set"
local analysis = require "repro.analysis"
local words = require "repro.analysis.words"
local texfmt = require "repro.report.texfmt"
local names = require "repro.report.names"
local summary_check = require "repro.report.summary_check"

local M = {}
local finite, user_error = texfmt.finite, base.user_error

-- From the modules they live in, under the names the report knows: a study's factor and
-- its variants' names (names.lua), the summary's check (summary_check.lua).
M.factor_of, M.name_variants = names.factor_of, names.name_variants
M.check_summary = summary_check.check_summary

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

function Study:run_dir(variant, seed)
  return string.format("%s/%s/seed-%d", self.dir, variant, seed)
end

-- {metrics = table or nil, log = parsed log.csv or nil, config = table or nil, manifest =
-- the verified manifest.json or nil, tasks_csv = the verified text of tasks.csv or nil}
function Study:record(variant, seed)
  local key = string.format("%s\0%d", variant, seed)
  local r = self.records[key]
  if r then return r end
  r = {}
  self.records[key] = r
  if self.no_records then return r end
  local dir = self:run_dir(variant, seed)
  -- only a record the record reader accepts (lua/repro/record/reader.lua: verified, no
  -- symbolic link from the study directory down)
  local rec, state, why = reader.read(dir, self.dir)
  if not rec then
    local w = reader.warning("report: warning", dir, state, why)
    if w then io.stderr:write(base.printable(w), "\n") end
    return r
  end
  local kept = rec.verified
  r.metrics, r.config, r.manifest = rec.metrics, rec.config, kept.manifest
  r.tasks_csv, r.log_sha256 = kept.texts["tasks.csv"], kept.sha256["log.csv"]
  return r
end

function Study:log(variant, seed)
  local r = self:record(variant, seed)
  if not r.metrics then return nil end
  if r.log == nil then
    -- the log whose SHA-256 the record's check verified, or none
    local text = fs.read(self:run_dir(variant, seed) .. "/log.csv")
    if text and r.log_sha256 and sys.sha256(text) ~= r.log_sha256 then text = nil end
    r.log = text and analysis.parse_log(text) or false
  end
  return r.log or nil
end

-- Where a run's record comes from: the end of its chain of `copied_from` (each names the
-- immediate source of a copy, lua/repro/plan/init.lua, relative to the experiments root,
-- "final/none/seed-1"; a source gone or refused by the record reader ends the chain),
-- else the run itself ("<study>/<variant>/seed-N").  Each manifest is the one the record
-- reader verified.  Two runs with the same origin are one run.
function Study:origin(variant, seed)
  local key = string.format("%s\0%d", variant, seed)
  local o = self.origins[key]
  if o then return o end
  o = string.format("%s/%s/seed-%d", self.name, variant, seed)
  local root = self.dir:match("^(.*)/[^/]+$") or "."
  for _ = 1, 8 do
    local rec = reader.read(root .. "/" .. o, root)
    local from = rec and rec.verified.manifest.copied_from
    if type(from) ~= "string" or not from:match("^[%w_%-%.]+/[%w_%-%.]+/seed%-%d+$") then break end
    o = from
  end
  self.origins[key] = o
  return o
end

-- The summary's adopted records (its provenance section): {{variant, seed, why}}.
function Study:adopted()
  local p = self.summary.provenance
  return type(p) == "table" and type(p.adopted) == "table" and p.adopted or {}
end

-- The study's runs and its diverged runs, as its summary counts them (per_variant).
function Study:run_counts()
  local runs, diverged = 0, 0
  for _, v in ipairs(self.variants) do
    local pv = self.summary.per_variant[v.name] or {}
    runs, diverged = runs + (pv.n_runs or 0), diverged + (pv.n_diverged or 0)
  end
  return runs, diverged
end

-- Whether every run of the study has its record (metrics.json and log.csv).
function Study:has_records()
  if self.records_ok == nil then
    self.records_ok = true
    for _, v in ipairs(self.variants) do
      for _, seed in ipairs(self.seeds) do
        if not self:log(v.name, seed) then self.records_ok = false end
      end
    end
  end
  return self.records_ok
end

-- The summary's description of `metric` over a variant's runs (per_variant), or nil.
function Study:summary_metric(variant, metric)
  local pv = self.summary.per_variant[variant]
  return pv and pv.metrics and pv.metrics[metric]
end

-- One run's value of `metric`: the summary's when it has the metric, else the record's;
-- nil for an undefined value or one the analysis's masking rule leaves out of a diverged
-- run (analysis.masked).
function Study:value(variant, seed, metric)
  local sm = self:summary_metric(variant, metric)
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

-- The per-variant statistics of `metric` (n, mean, sd, min, max, median; undefined ones
-- absent), as the summary has them (per_variant): the report never recomputes one.  A
-- metric the summary does not describe (no record carries it) has only its n = 0.
function Study:stat(variant, metric)
  local sm = self:summary_metric(variant, metric)
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

-- The value of config key k variant v trains with: its override, the study's base, else
-- the engine's (engine.effective: a key derived from another, as the embeddings' std
-- from the init scheme, as the engine derives it).
function Study:effective(v, k)
  if v.overrides[k] ~= nil then return v.overrides[k] end
  if self.base[k] ~= nil then return self.base[k] end
  if not v.effective_cfg then
    local c = {}
    for key, x in pairs(self.base) do c[key] = x end
    for key, x in pairs(v.overrides) do c[key] = x end
    v.effective_cfg = engine.effective(c)
  end
  return v.effective_cfg[k]
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

-- A size study's comparisons on `metric` (primary when nil) of a treatment level (every
-- level but the factor's baseline when nil) against the baseline level on the same model
-- (depth, width and heads alike: a study that tunes the learning rate per variant, the
-- ladder, puts the two in different settings of one model), sorted by the baseline's
-- parameter count, then the treatment's name: {c, t, b, params}.
function Study:size_comparisons(metric, level)
  local rows, base_level = {}, self.factor.baseline
  local function same_model(c)
    for _, k in ipairs({ "n_layer", "d_model", "n_head" }) do
      if self:config_value(c.treatment, k) ~= self:config_value(c.baseline, k) then
        return false
      end
    end
    return true
  end
  for _, c in ipairs(self:comparisons(metric)) do
    local t, b = self.variant_by_name[c.treatment], self.variant_by_name[c.baseline]
    if t and b and t.level ~= base_level and b.level == base_level and
        (level == nil or t.level == level) and same_model(c) then
      rows[#rows + 1] = { c = c, t = t, b = b, params = self:params(c.baseline) }
    end
  end
  table.sort(rows, function(x, y)
    if (x.params or 0) ~= (y.params or 0) then return (x.params or 0) < (y.params or 0) end
    return x.t.name < y.t.name
  end)
  return rows
end

-- "Label${}-{}$none" for a comparison's table cell, with the setting in front when
-- the study has several; two variants of different settings by their full labels.
function Study:comparison_label(treatment, baseline)
  local t, b = self.variant_by_name[treatment], self.variant_by_name[baseline]
  if not t or not b then return texfmt.escape(treatment .. " - " .. baseline) end
  local minus = "${}-{}$"
  if t.setting == b.setting then
    local head = #self:settings() > 1 and ((t.tex_tag or texfmt.escape(t.tag)) .. ": ") or ""
    return head .. texfmt.escape(t.level_label) .. minus .. texfmt.escape(b.level_label)
  end
  return (t.tex_label or texfmt.escape(t.label)) .. minus ..
    (b.tex_label or texfmt.escape(b.label))
end

-- An interaction's table label from its two paired differences e.a and e.b (each
-- {treatment, baseline}, or a list of such pairs: a side averaged over several settings,
-- as init_parts' components): "Label${}-{}$none, 2 blocks and width 64 minus 8 blocks
-- and width 256", naming only the config keys whose value is one on every variant of a
-- side and differs between the sides (never a code name); its registered name (escaped)
-- when the sides are not settings of one comparison (every pair's treatment of one
-- level, its baseline of another) or no key tells them apart.
function Study:interaction_label(e)
  local fallback = texfmt.escape(e.name or "")
  local sides, first = {}, nil
  for i, side in ipairs({ e.a, e.b }) do
    if type(side) ~= "table" or #side == 0 then return fallback end
    if type(side[1]) ~= "table" then side = { side } end
    sides[i] = {}
    for _, p in ipairs(side) do
      local t, b = self.variant_by_name[p[1]], self.variant_by_name[p[2]]
      if not (t and b and t.key_order) then return fallback end
      first = first or { t = t, b = b }
      if t.level ~= first.t.level or b.level ~= first.b.level then return fallback end
      table.insert(sides[i], t)
      table.insert(sides[i], b)
    end
  end
  -- the value of key k shared by every variant of a side, else DIFFERS
  local DIFFERS = {}
  local function common(vars, k)
    for _, v in ipairs(vars) do
      if v.key_values[k] ~= vars[1].key_values[k] then return DIFFERS end
    end
    return vars[1].key_values[k]
  end
  local ta, tb = sides[1][1], sides[2][1]
  local pa, pb = {}, {}
  for _, k in ipairs(ta.key_order) do
    local va, vb = common(sides[1], k), common(sides[2], k)
    if va ~= DIFFERS and vb ~= DIFFERS and va ~= vb and ta.key_phrases[k] and tb.key_phrases[k] then
      pa[#pa + 1], pb[#pb + 1] = ta.key_phrases[k], tb.key_phrases[k]
    end
  end
  if #pa == 0 then return fallback end
  return texfmt.escape(ta.level_label) .. "${}-{}$" .. texfmt.escape(first.b.level_label) ..
    ", " .. table.concat(pa, " and ") .. " minus " .. table.concat(pb, " and ")
end

function Study:verdict(c)
  return words.find_comparison(self.summary.verdicts, c)
end

-- The settings of the study: variants grouped by their overrides other than the factor's key,
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

-- The level, setting and labels of summary variant v under factor f (its key's value,
-- base_level when the variant does not set it; every variant its own level without a key).
local function variant_info(v, f, base_level)
  local ov = v.overrides or {}
  local level = v.name
  if f.key then
    level = ov[f.key]
    if level == nil then level = base_level end
    level = tostring(level)
  end
  local parts = {}
  for _, k in ipairs(base.sorted_keys(ov)) do
    if f.key and k ~= f.key then parts[#parts + 1] = k .. "=" .. tostring(ov[k]) end
  end
  local setting = table.concat(parts, ",")
  -- a variant named "<level>-<tag>" is labelled by its tag; otherwise by its overrides
  local tag = setting ~= "" and setting or v.name
  if v.name == level or f.labels[level] == v.name then -- a level named by its one variant
    tag = setting
  elseif v.name:sub(1, #level + 1) == level .. "-" then
    tag = v.name:sub(#level + 2)
  end
  local label = f.labels[level] or level
  return { name = v.name, overrides = ov, level = level, setting = setting, tag = tag,
    level_label = label, label = tag ~= "" and (label .. ", " .. tag) or label,
    color = f.colors[level], point = f.points[level] }
end

-- A Study over summary `sum` (a study's summary.json, or a nested section of one): its
-- variants labelled and named.  `o`: name, dir, names (the prose's names of the variants:
-- M.name_variants), base (the config the variants' overrides apply to; default sum.base),
-- seeds (default sum.seeds), no_records (there are no run records to read) and
-- config_labels (label the variants from their config, never from their code names:
-- each variant's tex_tag is its table_setting and tex_label its norm with it, LaTeX).
local function new_study(sum, o)
  local s = setmetatable({ name = o.name, dir = o.dir, summary = sum, records = {},
    origins = {}, section_cache = {}, seeds = o.seeds or sum.seeds or {}, variants = {},
    variant_by_name = {}, setting_list = {}, base = o.base or sum.base or {}, names = o.names,
    no_records = o.no_records, section_key = o.section_key, analysis = sum.analysis or {} },
    Study)
  s.primary = s.analysis.primary
  local f = M.factor_of(sum, o.factor)
  s.factor = f
  -- what a nested summary of this study is read with (Study:section, Study:sweep_groups)
  s.factor_spec = o.factor or (f.key and { key = f.key }) or nil
  local base_level = f.key and s.base[f.key]
  if f.key and base_level == nil then base_level = engine.defaults()[f.key] end
  local by_setting = {}
  for _, v in ipairs(sum.variants or {}) do
    local info = variant_info(v, f, base_level)
    s.variants[#s.variants + 1] = info
    s.variant_by_name[v.name] = info
    local st = by_setting[info.setting]
    if not st then
      st = { key = info.setting, label = info.tag, variants = {} }
      by_setting[info.setting] = st
      s.setting_list[#s.setting_list + 1] = st
    end
    st.variants[#st.variants + 1] = info
  end
  if next(f.colors) == nil and next(f.points) == nil then
    local index, n = {}, 0
    for _, v in ipairs(s.variants) do
      if not index[v.level] then n, index[v.level] = n + 1, n + 1 end
      v.color, v.point = names.DEFAULT_COLORS[index[v.level]], names.DEFAULT_POINTS[index[v.level]]
    end
  end
  if f.baseline == nil then
    local b = s.variant_by_name[s.analysis.baseline or ""] or s.variants[1]
    f.baseline = b and b.level
  end
  M.name_variants(s, o.names)
  -- a variant whose tag would be its config overrides ("lr=0.003,min_lr=0.0003") is
  -- labelled in the tables by the phrases of those keys instead, never by config syntax
  for _, v in ipairs(s.variants) do
    if o.config_labels or (v.tag == v.setting and v.setting ~= "") then
      v.tex_tag = v.table_setting
      v.tex_label = texfmt.escape(v.level_label) ..
        (v.table_setting ~= "" and (", " .. v.table_setting) or "")
    end
  end
  -- a setting's label and key are its first variant's tag and setting: labelled alike
  for _, st in ipairs(s.setting_list) do st.tex_label = st.variants[1].tex_tag end
  return s
end
M.new_study = new_study

-- Summary `sum` nested in this study's (a section, its key section_key; a sweep's groups)
-- as a Study with no records: named as this study, its variants labelled by their config
-- over its base.
function Study:nested(sum, section_key)
  return new_study(sum, { name = self.name, dir = self.dir, names = self.names,
    base = self.base, seeds = self.seeds, no_records = true, config_labels = true,
    factor = self.factor_spec, section_key = section_key })
end

-- The nested summary self.summary[key] (M.SECTIONS) as a Study with the same methods over
-- it: named as this study, its variants (e.g. a sweep's groups, with the overrides their
-- grids share) labelled by their config over this study's base; no run records.  nil
-- when the summary has no such section.
function Study:section(key)
  if self.section_cache[key] == nil then
    local sum = self.summary[key]
    local is_summary = type(sum) == "table" and type(sum.per_variant) == "table"
    self.section_cache[key] = is_summary and self:nested(sum, key) or false
  end
  return self.section_cache[key] or nil
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
      local list = {}
      for _, vn in ipairs((sw.groups[name] or {}).variants or {}) do
        local v = self.variant_by_name[vn]
        known[name] = known[name] or v ~= nil
        list[#list + 1] = v and v.overrides or {}
      end
      local shared = base.common_pairs(list)
      if sw.over then shared[sw.over] = nil end
      variants[#variants + 1] = { name = name, overrides = shared }
    end
    self.sweep_group_study = self:nested({ per_variant = {}, variants = variants })
    self.sweep_group_study.known = known
  end
  return self.sweep_group_study
end

-- Reads DIR/<name>/summary.json; nil when it does not exist.  `names`: the prose's names
-- of the variants (M.name_variants); `factor`: the study's treatment factor as a paper
-- gives it (M.factor_of; nil: the study's own).  Unless opts.trust_summaries (hand-made
-- summaries of tests: `bin/repro report --trust-summaries`), the summary's inputs must be
-- those it was computed from (summary_check.check_inputs); with opts.recompute
-- (`report --recompute-summaries`, make verify) it must be what the analysis computes from
-- its records now (M.check_summary).
function M.load_study(exp_dir, name, names, factor, opts)
  opts = opts or {}
  local dir = exp_dir .. "/" .. name
  local text, err = fs.read(dir .. "/summary.json")
  if not text then
    if not sys.lstat(dir .. "/summary.json") then return nil end
    user_error("report: %s", base.printable(err))
  end
  local sum = json.table_of(text)
  if not sum or type(sum.per_variant) ~= "table" then
    user_error("report: %s/summary.json is not a study summary", dir)
  end
  -- its variant names reach gnuplot and LaTeX as its directory's name does
  for _, v in ipairs(base.sorted_keys(sum.per_variant)) do
    if not base.valid_name(v) then
      io.stderr:write(string.format("report: warning: skipped %s/summary.json: the variant " ..
        "name '%s' is not a name (%s)\n", dir, base.printable(v), base.NAME_RULE))
      return nil
    end
  end
  -- it describes the records of its record set, as they are now (record/set.lua)
  local design = set.design(sum)
  if not design then
    user_error("report: %s/summary.json names no variants and seeds (its record set): refused",
      dir)
  end
  local outside = set.outsiders(design, dir)
  for _, o in ipairs(outside) do
    io.stderr:write("report: warning: ", set.outside_text(name, o), "\n")
  end
  local inputs = {}
  local digest, n_records = set.digest(dir, design, inputs)
  if sum.records_sha256 ~= digest then
    user_error("report: %s/summary.json %s: refused (bin/repro analyze writes it again from " ..
      "the verified records)", dir, type(sum.records_sha256) ~= "string" and
      "carries no digest of the records it was computed from (records_sha256)" or
      "was computed from other records than those beside it now (records_sha256 differs)")
  end
  if opts.recompute then
    M.check_summary(exp_dir, name, text, sum, opts.studies)
  elseif not opts.trust_summaries then
    summary_check.check_inputs(exp_dir, name, sum, opts.studies,
      { digest = digest, inputs = inputs })
  end
  local s = new_study(sum, { name = name, dir = dir, names = names, factor = factor })
  s.counts = { records = n_records, adopted = #s:adopted(), outside = #outside }
  return s
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
  return names
end

-- Every study under exp_dir: list (the names of `first` in their order, then the others
-- by name; with `only`, the names of `first` alone) and map; `prose_names`, `factor` and
-- `opts` as `names`, `factor` and `opts` of load_study.
function M.load_all(exp_dir, first, prose_names, factor, only, opts)
  local names = M.list_studies(exp_dir)
  local found, listed, ordered = base.set_of(names), {}, {}
  for _, n in ipairs(first or {}) do
    if found[n] then ordered[#ordered + 1] = n end
    listed[n] = true
  end
  for _, n in ipairs(names) do
    if not listed[n] and not only then ordered[#ordered + 1] = n end
  end
  local list, by_name = {}, {}
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
