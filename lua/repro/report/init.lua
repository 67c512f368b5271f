-- `bin/repro report`: the paper's generated inputs from the studies' records (flags and
-- outputs: docs/COMMANDS.md "Reports"; what each file holds: paper/README.md).
-- Before it writes anything it checks the main text's assertions and README's generated
-- sentences (assertions.lua, ledger.lua).  It reads the summaries and records (data.lua)
-- and the manifest, and writes the tables (tex_tables.lua), numbers.tex (tex_numbers.lua),
-- floats.tex, the gnuplot data (plot.lua) and the figures.  Each file is written
-- atomically and only when its bytes change, and generated files no longer produced are
-- removed, so a rerun on the same records leaves `git diff` empty.
local fs = require "repro.core.fs"
local base = require "repro.core.base"
local extension = require "repro.core.extension"
local host = require "repro.host"
local sys = require "repro.sys"
local sandbox = require "repro.sandbox"
local study = require "repro.study"
local data = require "repro.report.data"
local tables = require "repro.report.tex_tables"
local numbers = require "repro.report.tex_numbers"
local plot = require "repro.report.plot"
local ledger = require "repro.report.ledger"
local assertions = require "repro.report.assertions"

local M = {}
local user_error = base.user_error

-- Output files: written only when their bytes change; everything written is remembered
-- so that stale generated files can be removed.
local Out = {}
Out.__index = Out

function M.new_output()
  return setmetatable({ written = {}, changed = 0, kept = 0 }, Out)
end

function Out:write(path, text)
  self.written[path] = true
  if fs.read(path) == text then
    self.kept = self.kept + 1
  else
    fs.write_atomic(path, text)
    self.changed = self.changed + 1
  end
end

-- Removes the files directly in dir whose name matches `pattern` and that were not written.
function Out:prune(dir, pattern)
  for _, name in ipairs(sys.listdir(dir) or {}) do
    local path = dir .. "/" .. name
    local st = sys.lstat(path)
    if st and st.type == "file" and name:match(pattern) and not self.written[path] then
      os.remove(path)
    end
  end
end

-- The paper's manifest -------------------------------------------------------------

-- The fields every entry of the manifest's `tables` and `figures` may have ("?": optional).
local ENTRY_FIELDS = { name = "string", kind = "string", study = "string?", caption = "string?",
  width = "string?", wide = "boolean?" }

-- Checks one entry of the manifest's `tables` or `figures` against the kinds; returns it.
local function check_entry(path, where, e, kinds, names, is_figure)
  local function bad(fmt, ...) user_error("report: %s: %s: " .. fmt, path, where, ...) end
  if type(e) ~= "table" then bad("expected a table") end
  if type(e.name) ~= "string" or not e.name:match("^[%w_%-]+$") then
    bad("name: expected a file name of letters, digits, _ and -")
  end
  if names[e.name] then bad("name: %q is listed twice", e.name) end
  names[e.name] = true
  local kind = kinds[e.kind] or bad("kind: expected one of %s, got %s",
    table.concat(base.sorted_keys(kinds), ", "), tostring(e.kind))
  local allowed = {}
  for _, fields in ipairs({ ENTRY_FIELDS, kind.fields or {} }) do
    for k, t in pairs(fields) do allowed[k] = t end
  end
  for _, k in ipairs(base.sorted_keys(e)) do
    local want = (allowed[k] or bad("%s: unknown field", tostring(k))):gsub("%?$", "")
    if type(e[k]) ~= want then bad("%s: expected a %s", k, want) end
  end
  for _, k in ipairs(base.sorted_keys(allowed)) do
    if not allowed[k]:match("%?$") and e[k] == nil then bad("%s: missing", k) end
  end
  if not kind.all and not kind.summaries and not e.study then bad("study: missing") end
  if e.caption and e.width == nil and is_figure then bad("width: missing") end
  return e
end

-- The manifest's `names` (optional), checked: keys is a list of {key = string, format =
-- string | table | false, label = string | table | nil}.
function M.check_names(path, names)
  if names == nil then return nil end
  local function bad(fmt, ...) user_error("report: %s: names: " .. fmt, path, ...) end
  if type(names) ~= "table" then bad("expected a table") end
  for _, k in ipairs(base.sorted_keys(names)) do
    if k ~= "keys" then bad("%s: unknown field", tostring(k)) end
  end
  if names.keys ~= nil and type(names.keys) ~= "table" then bad("keys: expected a list") end
  for i, e in ipairs(names.keys or {}) do
    if type(e) ~= "table" or type(e.key) ~= "string" then
      bad("keys[%d]: expected {key = <config key>, format = ...}", i)
    end
    local f = e.format
    if not (type(f) == "string" or type(f) == "table" or f == false) then
      bad("keys[%d] (%s): format: expected a string with %%s, a table or false", i, e.key)
    end
    if e.label ~= nil and type(e.label) ~= "string" and type(e.label) ~= "table" then
      bad("keys[%d] (%s): label: expected a string with %%s or a table", i, e.key)
    end
    for _, k in ipairs(base.sorted_keys(e)) do
      if k ~= "key" and k ~= "format" and k ~= "label" then
        bad("keys[%d]: %s: unknown field", i, tostring(k))
      end
    end
  end
  return names
end

-- The manifest's `factor` (optional; names.lua: factor_of), checked: key and baseline
-- strings, the others tables from a value (a string) to one of the type FACTOR_MAPS gives.
local FACTOR_MAPS = { labels = "string", names = "string", colors = "string", points = "number" }

local function check_factor(path, f)
  if f == nil then return nil end
  local function bad(fmt, ...) user_error("report: %s: factor: " .. fmt, path, ...) end
  if type(f) ~= "table" then bad("expected a table") end
  for _, k in ipairs(base.sorted_keys(f)) do
    local v, t = f[k], FACTOR_MAPS[k]
    if k == "key" or k == "baseline" then
      if type(v) ~= "string" then bad("%s: expected a string", k) end
    elseif not t then
      bad("%s: unknown field", tostring(k))
    else
      if type(v) ~= "table" then bad("%s: expected a table of values", k) end
      for _, level in ipairs(base.sorted_keys(v)) do
        if type(level) ~= "string" or type(v[level]) ~= t then
          bad("%s: expected %ss by value (a string)", k, t)
        end
      end
    end
  end
  if f.key == nil then bad("key: missing (the config key whose values the studies compare)") end
  return f
end

-- What the manifest's optional appendix, appendix_notes and extensions must be.
local LIST_OF = { appendix = "expected a list of study names",
  appendix_notes = "expected a table from study name to text",
  extensions = "expected a list of paths" }

-- Reads the manifest at `path` (fs.read: the safe reader): a Lua file that returns plain
-- data, evaluated in the study sandbox under its limits (lua/lsandbox.c, sandbox.LIMITS:
-- memory, Lua instructions, wall-clock time; only plain data comes back), so it cannot
-- do anything but build its table, and an endless loop in it is an error, not a hang:
--   studies = { "<study>", ... }   the studies the paper discusses, in its order
--   appendix = { "<study>", ... }  optional: studies the paper shows in its generated
--                                  appendix only (a section each); a study in neither
--                                  list is not in the paper
--   appendix_notes = { <study> = "<LaTeX>" }  optional: a paragraph printed after an
--                                  appendix study's description (how to read it)
--   tables  = { {name =, kind =, study =, caption =, wide =, <kind's fields>}, ... }
--                                  (tex_tables.KINDS; a paired table's `section` names a
--                                  nested summary of its study, report_data.SECTIONS)
--   figures = { {name =, kind =, study =, caption =, width =, <kind's fields>}, ... }
--                                  (report_plot.KINDS)
--   factor  = { key =, baseline =, labels =, names =, colors =, points = }  (optional)
--                                  what the studies compare (data.factor_of)
--   names   = { keys = { {key =, format =, label =}, ... } }  (optional) how the prose
--                                  names the variants, and the tables a sweep's groups
--                                  (data.name_variants)
--   text_height = 9                optional: the text height in inches: a figure drawn
--                                  taller than main.tex's limit, 0.8 of it
--                                  (\ReportFigure), would be shrunk, its text printed
--                                  under the size it was drawn at: refused
--   text_width = 6.5               optional: the text width in inches, at which a figure of
--                                  width "0.8\linewidth" is drawn 0.8 x 6.5 in wide
--   extensions = { "paper/lib/x.lua", ... }  optional: the paper's own code, files of
--                                  the trusted folders paper/lib/ and extensions/ by
--                                  path or name (lua/repro/core/extension.lua),
--                                  each returning { tables = { <kind> = {build =, fields
--                                  =}, ... }, numbers = function(def, s, S) }: kinds of
--                                  table beside tex_tables.KINDS, and macros of each
--                                  study for numbers.tex (def(name, value), after the
--                                  study's verdicts); optional outputs = function(ctx)
--                                  returning { [file name] = text }: files it writes in
--                                  the paper folder (plain names, e.g. "results.md");
--                                  optional ledger = { <entry>, ... }: the statement
--                                  ledger's entries (lua/repro/report/ledger.lua)
-- A table or figure with a caption gets its float in floats.tex.
function M.load_manifest(path)
  local function bad(fmt, ...) user_error("report: %s: " .. fmt, path, ...) end
  local src, err = fs.read(path)
  if not src then
    user_error("report: the paper's manifest %s: %s", path, base.printable(tostring(err)))
  end
  local ok, m, msg = sandbox.eval(src, "@" .. path, sandbox.LIMITS)
  if not ok then
    local why = study.sandbox_failure(m, msg, "the study sandbox") or tostring(msg)
    user_error("report: the paper's manifest %s: %s", path, base.printable(why))
  end
  if type(m) ~= "table" then bad("expected it to return a table") end
  for _, k in ipairs({ "studies", "tables", "figures" }) do
    if type(m[k]) ~= "table" then bad("%s: expected a list", k) end
  end
  for _, k in ipairs({ "text_width", "text_height" }) do
    if m[k] ~= nil and not (type(m[k]) == "number" and m[k] > 0) then
      bad("%s: expected the text %s in inches (a number > 0)", k, k:match("_(%a+)$"))
    end
  end
  local out = { path = fs.relative_to_root(path), studies = {}, listed = {}, tables = {},
    figures = {}, text_width = m.text_width, text_height = m.text_height, appendix = {},
    appendix_notes = {}, table_kinds = {}, numbers = {}, outputs = {}, ledger = {} }
  for i, n in ipairs(m.studies) do
    if type(n) ~= "string" or out.listed[n] then
      bad("studies[%d]: expected a study name listed once", i)
    end
    out.studies[i], out.listed[n] = n, true
  end
  for _, k in ipairs({ "appendix", "appendix_notes", "extensions" }) do
    if m[k] ~= nil and type(m[k]) ~= "table" then bad("%s: %s", k, LIST_OF[k]) end
  end
  local in_appendix = {}
  for i, n in ipairs(m.appendix or {}) do
    if type(n) ~= "string" or out.listed[n] or in_appendix[n] then
      bad("appendix[%d]: expected a study name listed once, not in studies", i)
    end
    out.appendix[i], in_appendix[n] = n, true
  end
  for _, n in ipairs(base.sorted_keys(m.appendix_notes or {})) do
    local text = m.appendix_notes[n]
    if not in_appendix[n] or type(text) ~= "string" then
      bad("appendix_notes.%s: expected text for a study of appendix", tostring(n))
    end
    out.appendix_notes[n] = text
  end
  out.names, out.factor = M.check_names(path, m.names), check_factor(path, m.factor)
  for k, v in pairs(tables.KINDS) do out.table_kinds[k] = v end
  for i, p in ipairs(m.extensions or {}) do
    local ext = extension.load(p, string.format("report: %s: extensions[%d]", path, i))
    for _, k in ipairs(base.sorted_keys(ext.tables or {})) do
      if out.table_kinds[k] then bad("extensions[%d]: table kind %s exists already", i, k) end
      out.table_kinds[k] = ext.tables[k]
    end
    out.numbers[#out.numbers + 1] = ext.numbers
    out.outputs[#out.outputs + 1] = ext.outputs
    if ext.ledger ~= nil and type(ext.ledger) ~= "table" then
      bad("extensions[%d]: ledger: expected a list of entries", i)
    end
    for _, e in ipairs(ext.ledger or {}) do out.ledger[#out.ledger + 1] = e end
  end
  local sections = {}
  for _, x in ipairs(data.SECTIONS) do sections[#sections + 1] = x.key end
  local names = {}
  for i, e in ipairs(m.tables) do
    out.tables[i] = check_entry(path, "tables[" .. i .. "]", e, out.table_kinds, names)
    if e.section ~= nil and not base.set_of(sections)[e.section] then
      bad("tables[%d]: section: expected one of %s, got %s", i, table.concat(sections, ", "),
        e.section)
    end
  end
  names = {}
  for i, e in ipairs(m.figures) do
    out.figures[i] = check_entry(path, "figures[" .. i .. "]", e, plot.KINDS, names, true)
  end
  return out
end

M.USAGE = "usage: bin/repro report [--experiments DIR] [--paper DIR] [--plots-data DIR] " ..
  "[--manifest FILE] [--no-figures] [--trust-summaries] [--studies DIR] [--tex FILE] " ..
  "[--lenient-assertions] [--all-numbers] [--recompute-summaries]"

local function parse_args(args)
  local function value(key) return { key = key, kind = "value" } end
  local function flag(key) return { key = key, kind = "flag" } end
  local o = base.parse_options(args, "repro report", M.USAGE, {
    ["--experiments"] = value("experiments"), ["--paper"] = value("paper"),
    ["--plots-data"] = value("plots_data"), ["--manifest"] = value("manifest"),
    ["--studies"] = value("studies"), ["--tex"] = value("tex"),
    ["--no-figures"] = flag("no_figures"), ["--trust-summaries"] = flag("trust_summaries"),
    ["--lenient-assertions"] = flag("lenient"), ["--all-numbers"] = flag("all_numbers"),
    ["--recompute-summaries"] = flag("recompute"),
  })
  if o.targets[1] then
    user_error("repro report: unknown argument %s (%s)", o.targets[1], M.USAGE)
  end
  o.manifest_given = o.manifest ~= nil
  o.manifest = o.manifest or host.root .. "/paper/paper.lua"
  o.figures = not o.no_figures
  o.gp_dir = host.root .. "/plots"
  o.experiments, o.paper = o.experiments or "experiments", o.paper or "paper"
  o.plots_data = o.plots_data or "plots/data"
  for _, k in ipairs({ "experiments", "paper", "plots_data", "studies" }) do
    if o[k] then o[k] = o[k]:gsub("/+$", "") end
  end
  return o
end

-- The context the writers share: the studies (the manifest's, then its appendix's, in
-- their order), the names of every study to account for (the manifest's, run or not,
-- then the appendix's that have run), and the appendix's studies.  A study the manifest
-- names nowhere is not read: a user's study never changes the paper (`bin/repro report
-- <study>` writes its own report).  The manifest and the output default to o.manifest's
-- and a new one (`bin/repro ledger`).
function M.context(o, manifest, out)
  manifest, out = manifest or M.load_manifest(o.manifest), out or M.new_output()
  local first = { table.unpack(manifest.studies) }
  for _, n in ipairs(manifest.appendix) do first[#first + 1] = n end
  local list, by_name = data.load_all(o.experiments, first, manifest.names,
    manifest.factor, true, { trust_summaries = o.trust_summaries, recompute = o.recompute,
    studies = o.studies })
  local ctx = { studies = list, by_name = by_name, experiments = o.experiments, out = out,
    manifest = manifest, names = { table.unpack(manifest.studies) }, appendix = {} }
  for _, s in ipairs(list) do
    if not manifest.listed[s.name] then
      ctx.names[#ctx.names + 1] = s.name
      ctx.appendix[#ctx.appendix + 1] = s
    end
  end
  return ctx
end

-- The main text a report checks: --tex FILE, else the repository's paper/main.tex with the
-- repository's manifest, else (another manifest: a test's, a user's) none, false: the
-- main text is written against paper/paper.lua's studies.
function M.main_text(o)
  if o.manifest_given and not o.tex then return false end
  return o.tex
end

-- The statement ledger of the manifest over the context's studies, checked: its entries'
-- sentences against the analyses they name (README's Results list), and the LaTeX source
-- `tex_path` (nil: the repository's paper/main.tex; false: none): its checked assertions against
-- the summaries and its finding sentences that assert nothing
-- (lua/repro/report/assertions.lua).  Returns the ledger's rows, the list of problems, the
-- assertions' rows and, with `lenient` (make reproduce QUICK=1), the contradicted and
-- missing assertions, listed rather than failed.
function M.ledger(ctx, tex_path, lenient)
  local rows, problems = ledger.build(ctx.manifest.ledger or {}, ctx.by_name, ctx)
  if tex_path == false then return rows, problems, {}, {} end
  tex_path = tex_path or (host.root .. "/paper/main.tex")
  local src = fs.read(tex_path)
  if not src then
    problems[#problems + 1] = "cannot read " .. tex_path
    return rows, problems, {}, {}
  end
  -- on records other than the repository's own (a test's fixture, a --set root), a text
  -- that needs studies they lack is listed as not checked; on experiments/ it fails
  local ex = (ctx.experiments or "experiments"):gsub("/+$", "")
  local own = ex == "experiments" or ex == "./experiments" or ex == host.root .. "/experiments"
  local arows, hard, listed = assertions.check(src, fs.relative_to_root(tex_path), ctx.by_name,
    ctx.studies, base.set_of(ctx.names), { lenient = lenient, partial_ok = not own })
  for _, p in ipairs(hard) do problems[#problems + 1] = p end
  return rows, problems, arows, listed
end

-- The fields of a manifest entry that do not change what it shows.
local PRESENTATION = { name = true, caption = true, width = true, wide = true }

-- An entry's parameters as text: its fields but PRESENTATION's, sorted.
local function parameters(e)
  local out = {}
  for _, k in ipairs(base.sorted_keys(e)) do
    local v = e[k]
    if type(v) == "table" then
      local inner = {}
      for kk, vv in pairs(v) do inner[#inner + 1] = tostring(kk) .. "=" .. tostring(vv) end
      table.sort(inner)
      v = "{" .. table.concat(inner, ",") .. "}"
    end
    if not PRESENTATION[k] then out[#out + 1] = k .. "=" .. tostring(v) end
  end
  return table.concat(out, " ")
end

-- Generated content tested as a class: two entries of the manifest (`what`: "tables" or
-- "figures") with different parameters whose outputs (`text`: name -> bytes, only the
-- entries actually built) are byte for byte the same mean that a parameter never reached
-- the builder (the 3-shot task table once printed the 0-shot one).  The problems, each
-- naming both entries.
function M.identical_outputs(entries, text, what)
  local problems, first = {}, {}
  for _, e in ipairs(entries) do
    local t = text[e.name]
    -- a table that is only a sentence saying why it is not built (its study has not run
    -- on these records) carries no parameter: two such are alike by design
    if t and what == "tables" and not t:find("tabular", 1, true) then t = nil end
    if t then
      local other = first[t]
      if other and parameters(other) ~= parameters(e) then
        problems[#problems + 1] = string.format("%s %s (%s) and %s (%s): different " ..
          "parameters, byte-identical output (a parameter does not reach the builder)", what,
          other.name, parameters(other), e.name, parameters(e))
      elseif not other then
        first[t] = e
      end
    end
  end
  return problems
end

-- The share of the text height a figure may take (main.tex's \ReportFigure: height
-- 0.8\textheight, keepaspectratio): a taller one is shrunk, and its text with it.
M.FIGURE_HEIGHT_SHARE = 0.8

-- The drawn figures (specs) taller than that share of `text_height` (inches; nil: not
-- checked): problems naming each, with its height (a forest of 60 rows printed its 9 pt
-- labels at under 4 pt).
function M.too_tall(specs, text_height)
  local out = {}
  if not text_height then return out end
  local limit = M.FIGURE_HEIGHT_SHARE * text_height
  for _, f in ipairs(specs) do
    if not f.skip and f.height and f.height > limit then
      out[#out + 1] = string.format("figures %s: drawn %.1f in tall, more than %.1f in " ..
        "(%.0f %% of the text height): it would be shrunk and its text printed smaller than " ..
        "drawn; split it (a forest figure's `studies`)", f.name, f.height, limit,
        100 * M.FIGURE_HEIGHT_SHARE)
    end
  end
  return out
end

-- The repository paper's hand-written TeX, which numbers.tex's definitions are cut to
-- (--all-numbers: every definition, for a text not yet written).
M.PAPER_SOURCES = { "main.tex", "supplement.tex", "printsize.tex" }

-- Writes every generated input of the paper; returns a table of what was done.
function M.generate(o)
  local manifest = M.load_manifest(o.manifest)
  if o.trust_summaries then
    io.stderr:write("report: warning: --trust-summaries: the summaries are read as they " ..
      "are, their study files and inputs not checked (for hand-made test summaries; make " ..
      "paper never passes it)\n")
  end
  for _, d in ipairs({ o.paper .. "/tables", o.paper .. "/figures/png", o.plots_data }) do
    fs.mkdir_p(d)
  end
  local out = M.new_output()
  local ctx = M.context(o, manifest, out)
  -- the ledger first: a finding sentence that names no analysis, or one whose words its
  -- analysis contradicts, stops the report before it writes anything
  local rows, problems, arows, listed = M.ledger(ctx, M.main_text(o), o.lenient)
  if #problems > 0 then
    user_error("report: the statement ledger has %d problem%s (the main text's assertions: " ..
      "lua/repro/report/assertions.lua; the entries: lua/repro/report/ledger.lua, the " ..
      "manifest's extensions' ledger):\n%s", #problems,
      #problems == 1 and "" or "s", table.concat(problems, "\n"))
  end
  if #listed > 0 then
    io.stderr:write(string.format("report: the main text's assertions on these records, " ..
      "listed, not failed (--lenient-assertions, or records other than experiments/): %d\n",
      #listed))
    for _, l in ipairs(listed) do io.stderr:write(base.printable(l), "\n") end
  end
  ctx.ledger, ctx.assertions = rows, arows

  local entries = { table.unpack(manifest.figures) }
  local extra = plot.appendix_figures(ctx, tables.forest_name)
  local figures = plot.write_data(ctx, table.move(extra, 1, #extra, #entries + 1, entries),
    o.plots_data)
  local drawn, built, shown = {}, {}, {}
  for _, f in ipairs(figures) do drawn[f.name] = f.data_text end
  local same = M.identical_outputs(manifest.figures, drawn, "figures")
  for _, p in ipairs(M.too_tall(figures, manifest.text_height)) do same[#same + 1] = p end
  local table_text = tables.tables(ctx, built)
  for name in pairs(built) do shown[name] = table_text[name] end
  for _, p in ipairs(M.identical_outputs(manifest.tables, shown, "tables")) do
    same[#same + 1] = p
  end
  if #same > 0 then
    user_error("report: generated content: %s", table.concat(same, "\n"))
  end
  if o.figures then
    ctx.rendered = plot.render(figures, { data = o.plots_data, gp_dir = o.gp_dir,
      figures = o.paper .. "/figures", out = out })
  end
  ctx.figures, ctx.gp_dir = figures, o.gp_dir

  local sources = {}
  for name, text in pairs(table_text) do
    out:write(o.paper .. "/tables/" .. name .. ".tex", text)
    sources[#sources + 1] = text
  end
  local generated = { ["tables/appendix.tex"] = tables.appendix(ctx),
    ["tables/ledger.tex"] = assertions.tex_table(arows), ["floats.tex"] = tables.floats(manifest) }
  -- the manifest's extensions' own files in the paper folder (plain file names)
  -- (every name checked before any is written: a bad one leaves the folder as it was)
  for _, outputs in ipairs(manifest.outputs or {}) do
    local files = outputs(ctx)
    local names = base.sorted_keys(files)
    for _, name in ipairs(names) do
      local text = files[name]
      if type(name) ~= "string" or not name:match("^[%w_%-]+%.%w+$") or
          type(text) ~= "string" then
        user_error("report: an extension's output %s: expected a plain file name and its " ..
          "text", base.printable(tostring(name)))
      end
    end
    for _, name in ipairs(names) do generated[name] = files[name] end
  end
  local numbers_tex = numbers.numbers(ctx) .. assertions.TEX_DEFS
  -- the repository's paper: numbers.tex defines only what main.tex and the supplement reach
  if M.main_text(o) == nil and not o.all_numbers then
    for _, name in ipairs(base.sorted_keys(generated)) do
      sources[#sources + 1] = generated[name]
    end
    for _, doc in ipairs(M.PAPER_SOURCES) do
      sources[#sources + 1] = fs.read(host.root .. "/paper/" .. doc) or ""
    end
    numbers_tex = numbers.cited_only(numbers_tex, sources)
  end
  generated["numbers.tex"] = numbers_tex
  for _, name in ipairs(base.sorted_keys(generated)) do
    out:write(o.paper .. "/" .. name, generated[name])
  end

  out:prune(o.paper .. "/tables", "%.tex$")
  out:prune(o.plots_data, "%.dat$")
  if o.figures then
    out:prune(o.paper .. "/figures", "%.pdf$")
    out:prune(o.paper .. "/figures/png", "%.png$")
  end
  return { studies = ctx.studies, figures = figures, out = out }
end

function M.main(args)
  local o = parse_args(args)
  if o.help then return 0 end
  local r = M.generate(o)
  local names = {}
  for _, s in ipairs(r.studies) do names[#names + 1] = s.name end
  io.stderr:write(base.printable(string.format("report: %d stud%s (%s) from %s: %d file%s " ..
    "changed, %d unchanged", #names, #names == 1 and "y" or "ies", #names > 0 and
    table.concat(names, ", ") or "none", o.experiments, r.out.changed, r.out.changed == 1 and
    "" or "s", r.out.kept)), "\n")
  return 0
end

return M
