-- `bin/repro new NAME [--from STUDY] [--dir DIR]`: a new study file, commented, that
-- validates as written.
--
-- Without --from, a template: two variants (tied vs untied input and output embeddings,
-- a factor any GPT has) over the default protocol, seeds 1-5, and every analysis field with what it takes in a comment
-- (study.analysis_fields, the same text a validation error for a missing field gives).
-- With --from STUDY (a study name of lua/experiments/ or a study file), that study's
-- base, variants, seeds (as the list it resolved to) and analysis, as literal values,
-- under the new name; its extensions' fields, its sweep, its depends and an earlier
-- registered_rule are not carried over (a new study is a new pre-registration), and the
-- file says so.  The file goes to DIR/NAME.lua (default lua/experiments/); an existing
-- file is never overwritten.  It is validated (lua/repro/study/init.lua) in a temporary folder
-- beside its destination and renamed into place only when valid.
local host = require "repro.host"
local sys = require "repro.sys"
local fs = require "repro.core.fs"
local study = require "repro.study"
local prob = require "repro.study.problems"
local progress = require "repro.core.progress"
local base = require "repro.core.base"
local results = require "repro.report.results"
local textable = require "repro.core.textable"

local M = {}

local user_error = base.user_error
local WHO = "repro new"
M.USAGE = "usage: bin/repro new NAME [--from STUDY] [--dir DIR]"
M.WIDTH = 92

local function parse_args(args)
  local o = base.parse_options(args, WHO, M.USAGE, {
    ["--from"] = { key = "from", kind = "value" },
    ["--dir"] = { key = "dir", kind = "value" },
  })
  if #o.targets > 1 then
    user_error("%s: one study at a time (got %s and %s)", WHO, o.targets[1], o.targets[2])
  end
  o.name = o.targets[1]
  if o.help then return o end
  if not o.name then user_error("%s", M.USAGE) end
  if not o.name:match("^[%a][%w_%-]*$") then
    user_error("%s: NAME '%s': expected letters, digits, '_' or '-', starting with a letter " ..
      "(it names the study file and its records folder)", WHO, o.name)
  end
  return o
end

-- A Lua literal of a plain value (strings quoted, numbers as they read back, lists and
-- tables on one line, keys sorted).
local function literal(v)
  local ty = type(v)
  if ty == "string" then return string.format("%q", v) end
  if ty == "boolean" then return tostring(v) end
  if ty == "number" then return results.num(v) end
  local parts = {}
  if prob.is_list(v) then
    for i = 1, #v do parts[i] = literal(v[i]) end
  else
    for _, k in ipairs(base.sorted_keys(v)) do parts[#parts + 1] = k .. " = " .. literal(v[k]) end
  end
  if #parts == 0 then return "{}" end
  return "{ " .. table.concat(parts, ", ") .. " }"
end

-- A string literal, as "..." .. "..." pieces on lines of at most M.WIDTH.
local function long_string(text)
  local pieces, cur = {}, ""
  for word in text:gmatch("%S+%s*") do
    if #cur + #word > M.WIDTH - 12 and cur ~= "" then
      pieces[#pieces + 1] = cur
      cur = ""
    end
    cur = cur .. word
  end
  pieces[#pieces + 1] = cur
  for i, p in ipairs(pieces) do pieces[i] = literal(p) end
  return table.concat(pieces, "\n    .. ")
end

-- text as comment lines, wrapped at M.WIDTH, each starting with indent .. "-- ".
local function comment(text, indent)
  return textable.wrap(text, M.WIDTH, indent .. "-- ") .. "\n"
end

-- The analysis table: each field with what it takes above it.
local function analysis_text(values, variant_names)
  local out = { "  -- the pre-registered analysis, fixed before any run (the decision rule:\n" ..
    "  -- lua/repro/analysis/init.lua)\n  analysis = {\n" }
  for _, f in ipairs(study.analysis_fields(variant_names)) do
    local name, takes = f[1], f[2]
    out[#out + 1] = comment(name .. ": " .. takes, "    ")
    if values[name] ~= nil then
      out[#out + 1] = "    " .. name .. " = " .. literal(values[name]) .. ",\n"
    end
  end
  out[#out + 1] = "  },\n"
  return table.concat(out)
end

local function variants_text(variants)
  local out = { "  -- each variant: a name and the config keys it changes " ..
    "(`bin/repro help` lists the keys)\n  variants = {\n" }
  for _, v in ipairs(variants) do
    local t = { "name = " .. literal(v.name) }
    for _, k in ipairs(base.sorted_keys(v.overrides)) do
      t[#t + 1] = k .. " = " .. literal(v.overrides[k])
    end
    out[#out + 1] = "    { " .. table.concat(t, ", ") .. " },\n"
  end
  out[#out + 1] = "  },\n"
  return table.concat(out)
end

local TEMPLATE_ANALYSIS = { baseline = "tied", metrics = { "val_loss", "val_ppl", "val_acc" },
  primary = "val_loss", better = "lower", min_effect = 0.02, alpha = 0.05, correction = "holm",
  resamples = 10000, test = "t" }

-- The study file's text: the template, or src (a loaded study) under the new name.
function M.text(name, src, file)
  local variants = src and src.variants or {
    { name = "tied", overrides = { tie_embeddings = true } },
    { name = "untied", overrides = { tie_embeddings = false } } }
  local names = {}
  for i, v in ipairs(variants) do names[i] = v.name end
  local out = {}
  file = file or ("lua/experiments/" .. name .. ".lua")
  if src then
    out[#out + 1] = comment(string.format("%s: made by `bin/repro new %s --from %s` from %s; " ..
      "its values are written out as the study resolved them.", name, name, src.name,
      src.file_rel), "")
  else
    out[#out + 1] = comment(name .. ": say here which question this study asks, and why " ..
      "its design answers it.", "")
  end
  out[#out + 1] = comment("Check it with `bin/repro run " .. file .. " --dry-run`; try it at " ..
    "a tiny budget (records apart, not for the paper) with `bin/repro run " .. file ..
    " --set iters=30,warmup=3,n_layer=2,d_model=64,n_head=4`.  The fields: " ..
    "lua/experiments/README.md.", "")
  local notes = {}
  if src then
    local an = src.analysis
    for _, ext in ipairs(base.sorted_keys(src.extensions or {})) do -- study.lua: extensions
      if an[ext] ~= nil then notes[#notes + 1] = "analysis." .. ext end
    end
    if an.sweep then notes[#notes + 1] = "analysis.sweep" end
    if #src.depends > 0 then notes[#notes + 1] = "depends" end
    if an.registered_rule < study.RULE then
      notes[#notes + 1] = "registered_rule = " .. an.registered_rule
    end
    if #notes > 0 then
      out[#out + 1] = comment("Not carried over from " .. src.name .. " (a new study is a new " ..
        "pre-registration): " .. table.concat(notes, ", ") .. ".", "")
    end
  end
  out[#out + 1] = "return {\n"
  out[#out + 1] = "  -- the file's name: records go to <records root>/" .. name .. "/\n"
  out[#out + 1] = "  name = " .. literal(name) .. ",\n"
  out[#out + 1] = "  description = " .. long_string(src and src.description or
    "The question, the protocol, the seeds and the decision rule, in a few sentences.") .. ",\n"
  out[#out + 1] = "  -- config overrides shared by every run (defaults: the final protocol of " ..
    "docs/DESIGN.md)\n"
  out[#out + 1] = "  base = " .. literal(src and src.base or { diag_every = 25 }) .. ",\n"
  out[#out + 1] = variants_text(variants)
  out[#out + 1] = "  -- every variant runs every seed, paired by seed; or seeds from power:\n" ..
    "  -- seeds = { count = { power = 0.8, sd = 0.01 }, first = 101 },\n"
  out[#out + 1] = "  seeds = " .. literal(src and src.seeds or { 1, 2, 3, 4, 5 }) .. ",\n"
  out[#out + 1] = "  -- steps between checkpoints; default worker processes of bin/repro run\n"
  out[#out + 1] = string.format("  checkpoint_every = %d,\n  jobs = %d,\n",
    src and src.checkpoint_every or study.CHECKPOINT_EVERY, src and src.jobs or 1)
  local values = TEMPLATE_ANALYSIS
  if src then
    local an = src.analysis
    values = { baseline = an.baseline, metrics = an.metrics, primary = an.primary,
      better = an.better, min_effect = an.min_effect, alpha = an.alpha,
      correction = an.correction, resamples = an.resamples, test = an.test,
      comparisons = an.comparisons }
    if #an.secondary > 0 then values.secondary = an.secondary end
    if #an.interactions > 0 then values.interactions = an.interactions end
    if an.bootstrap ~= "exact" then values.bootstrap = an.bootstrap end
  end
  out[#out + 1] = analysis_text(values, names)
  out[#out + 1] = "}\n"
  return table.concat(out)
end

-- The study file --from names: a path, or a name of lua/experiments/.
local function source_path(from)
  if from:match("%.lua$") or from:find("/", 1, true) then return from end
  return host.root .. "/lua/experiments/" .. from .. ".lua"
end

function M.main(args)
  local o = parse_args(args)
  if o.help then return 0 end
  local dir = o.dir or (host.root .. "/lua/experiments")
  local st = sys.stat(dir)
  if not st or st.type ~= "dir" then user_error("%s: --dir %s: not a directory", WHO, dir) end
  local dest = dir .. "/" .. o.name .. ".lua"
  if sys.stat(dest) then
    user_error("%s: %s exists: not overwritten (choose another NAME, or remove it)", WHO,
      fs.shown(dest))
  end
  local src
  if o.from then
    local path = source_path(o.from)
    if not sys.stat(path) then user_error("%s: --from %s: no study file %s", WHO, o.from, path) end
    src = study.load(path)
    src.file_rel = fs.relative_to_root(path)
  end
  local text = M.text(o.name, src, fs.relative_to_root(dest))
  -- validated under its own name, in a folder beside the destination (one rename)
  local tmpdir = string.format("%s/.new-%s.%d", dir, o.name, host.pid())
  fs.mkdir_p(tmpdir)
  local tmp = tmpdir .. "/" .. o.name .. ".lua"
  local ok, err = pcall(function()
    fs.write_atomic(tmp, text)
    study.load(tmp)
  end)
  if not ok then
    os.remove(tmp)
    os.remove(tmpdir)
    if type(err) == "table" and err.message then
      user_error("%s: the new study does not validate, so nothing was written:\n%s", WHO,
        err.message)
    end
    error(err, 0)
  end
  local rok, rerr = os.rename(tmp, dest)
  os.remove(tmp)
  os.remove(tmpdir)
  if not rok then user_error("%s: filesystem: cannot write %s: %s", WHO, dest, tostring(rerr)) end
  progress.say("%s: wrote %s; check it with `bin/repro run %s --dry-run`", WHO, fs.shown(dest),
    fs.shown(dest))
  return 0
end

return M
