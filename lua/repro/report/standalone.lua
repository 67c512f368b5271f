-- `bin/repro report STUDY [--experiments DIR]`: one study's own report, apart from the
-- paper: OUT/<study>/report/ (OUT = --experiments, default experiments) holds
--   report.pdf    its design, per-variant statistics, verdict table, forest plot, and
--                 the training and validation loss per variant over training
--   report.html   the same tables (HTML) and figures (PNG), for a browser
--   report.tex, figures/ (PDF, png/), data/ (the figures' data)
-- from its summary.json and run records only (lua/repro/report/data.lua), the way the
-- paper reads them, with none of the paper's manifest: the variants keep their own names
-- (or the levels of the factor the study declares), and nothing the study did not
-- register appears (no extension's section, no verdict under an earlier rule).  Every
-- table is built once as rows of plain text (M.tables) and written twice, as LaTeX and
-- as HTML.  Figures are the report's kinds (lua/repro/report/plot.lua).
local fs = require "repro.core.fs"
local host = require "repro.host"
local base = require "repro.core.base"
local data = require "repro.report.data"
local plot = require "repro.report.plot"
local F = require "repro.report.texfmt"

local M = {}

local user_error = base.user_error

-- A number for a table cell: 4 significant digits, "-" when undefined.
local function num(x)
  if not F.finite(x) then return "-" end
  return string.format("%.4g", x)
end

local function pval(p)
  if not F.finite(p) then return "-" end
  if p < 0.001 then return "< 0.001" end
  return string.format("%.3g", p)
end

-- A count or a config value as text: integers without a decimal point (JSON gives
-- every number as a float), other numbers with 4 significant digits.
local function value_text(x)
  if type(x) == "number" then
    if x == math.floor(x) and math.abs(x) < 2 ^ 53 then return string.format("%d", x) end
    return num(x)
  end
  return tostring(x)
end

-- The design table of summary sum (study `name`, its analysis an).
local function design_table(name, sum, an)
  local variants = {}
  for _, v in ipairs(sum.variants or {}) do
    local keys, parts = {}, {}
    for k in pairs(v.overrides or {}) do keys[#keys + 1] = k end
    table.sort(keys)
    for _, k in ipairs(keys) do parts[#parts + 1] = k .. " = " .. value_text(v.overrides[k]) end
    variants[#variants + 1] = v.name .. (#parts > 0 and (" (" .. table.concat(parts, ", ") ..
      ")") or "")
  end
  local seeds = {}
  for _, x in ipairs(sum.seeds or {}) do seeds[#seeds + 1] = value_text(x) end
  local base_keys, base_parts = {}, {}
  for k in pairs(sum.base or {}) do
    if k ~= "data" then base_keys[#base_keys + 1] = k end
  end
  table.sort(base_keys)
  for _, k in ipairs(base_keys) do
    base_parts[#base_parts + 1] = k .. " = " .. value_text(sum.base[k])
  end
  local design = { title = "Design", head = { "field", "value" }, rows = {
    { "study", name },
    { "description", sum.description or "" },
    { "base config", #base_parts > 0 and table.concat(base_parts, ", ") or "the defaults" },
    { "variants", table.concat(variants, "; ") },
    { "seeds", table.concat(seeds, ", ") },
    { "baseline", tostring(an.baseline) },
    { "primary metric", string.format("%s (%s is better)", tostring(an.primary),
      tostring(an.better)) },
    { "minimum effect", num(an.min_effect) },
    { "alpha", num(an.alpha) },
    { "test", tostring(an.test or "t") },
    { "family", tostring(an.family or "none") },
  } }
  return design
end

-- The per-variant table of the primary metric, from the summary's per_variant.
local function variants_table(sum, an)
  local stats = { title = "Variants on " .. tostring(an.primary), head = { "variant", "runs",
    "diverged", "mean", "sd", "min", "max" }, rows = {} }
  for _, v in ipairs(sum.variants or {}) do
    local pv = sum.per_variant[v.name] or {}
    local m = (pv.metrics or {})[an.primary] or {}
    stats.rows[#stats.rows + 1] = { v.name, value_text(pv.n_runs or 0),
      value_text(pv.n_diverged or 0), num(m.mean), num(m.sd), num(m.min), num(m.max) }
  end
  return stats
end

-- The verdicts table, each verdict's reason (the analysis's words) under it.
local function verdicts_table(sum, an)
  local byname = {}
  for _, c in ipairs(sum.comparisons or {}) do
    if c.metric == an.primary then byname[c.treatment .. "\0" .. c.baseline] = c end
  end
  local verdicts = { title = "Verdicts on " .. tostring(an.primary), head = { "treatment",
    "baseline", "mean difference", "interval", "p (Holm)", "TOST p (Holm)", "verdict" },
    rows = {}, reasons = {} }
  for _, v in ipairs(sum.verdicts or {}) do
    local c = byname[v.treatment .. "\0" .. v.baseline] or {}
    local ci = data.interval(c)
    verdicts.rows[#verdicts.rows + 1] = { v.treatment, v.baseline, num(c.mean),
      ci and string.format("[%s, %s]", num(ci[1]), num(ci[2])) or "-", pval(c.p_holm),
      pval(c.tost and c.tost.p_holm), v.verdict }
    verdicts.reasons[#verdicts.reasons + 1] = v.reason and (v.treatment .. " vs " ..
      v.baseline .. ": " .. v.verdict .. " because " .. v.reason) or nil
  end
  if #verdicts.rows == 0 then verdicts.note = "This study pre-registered no comparison." end
  return verdicts
end

-- The study's tables as { title =, head = {...}, rows = {{...}, ...}, note = } of plain
-- text: its design, its variants' statistics on the primary metric, and its verdicts.
function M.tables(s)
  local sum, an = s.summary, s.summary.analysis or {}
  return { design_table(s.name, sum, an), variants_table(sum, an), verdicts_table(sum, an) }
end

-- LaTeX ------------------------------------------------------------------------------

local function latex_table(t)
  local out = { "\\subsection*{" .. F.escape(t.title) .. "}" }
  if #t.rows == 0 then
    out[#out + 1] = F.escape(t.note or "Nothing to show.") .. "\n"
    return table.concat(out, "\n")
  end
  local wide = #t.head == 2
  out[#out + 1] = "\\begin{center}\\small"
  out[#out + 1] = wide and "\\begin{tabularx}{\\linewidth}{@{}lX@{}}" or
    ("\\begin{tabular}{@{}" .. string.rep("l", #t.head) .. "@{}}")
  out[#out + 1] = "\\toprule"
  local head = {}
  for i, h in ipairs(t.head) do head[i] = F.escape(h) end
  out[#out + 1] = table.concat(head, " & ") .. " \\\\"
  out[#out + 1] = "\\midrule"
  for _, r in ipairs(t.rows) do
    local cells = {}
    for i, c in ipairs(r) do cells[i] = F.escape(c) end
    out[#out + 1] = table.concat(cells, " & ") .. " \\\\"
  end
  out[#out + 1] = "\\bottomrule"
  out[#out + 1] = wide and "\\end{tabularx}" or "\\end{tabular}"
  out[#out + 1] = "\\end{center}"
  for _, reason in ipairs(t.reasons or {}) do
    out[#out + 1] = "\\par\\noindent{\\small " .. F.escape(reason) .. "}"
  end
  return table.concat(out, "\n") .. "\n"
end

local function latex_figure(spec, caption)
  if spec.skip then
    return "\\par\\noindent\\emph{" .. F.escape(caption .. ": not drawn, " .. spec.skip) ..
      ".}\n"
  end
  return string.format("\\begin{center}\\includegraphics[width=0.9\\linewidth]{figures/%s.pdf}" ..
    "\\\\[2pt]{\\small %s}\\end{center}\n", spec.name, F.escape(caption))
end

function M.latex(s, tables, specs, captions)
  local out = { "% Generated by bin/repro report " .. s.name .. ": do not edit.",
    "\\documentclass[10pt]{article}",
    "\\usepackage[margin=1in]{geometry}",
    "\\usepackage{graphicx,booktabs,tabularx}",
    "\\usepackage[T1]{fontenc}",
    -- Type 1 fonts with the T1 encoding (psnfss: Times, Helvetica, Courier), so that the
    -- PDF's text has its underscores and ligatures (the EC fonts are bitmaps here)
    "\\usepackage{mathptmx,helvet,courier}",
    "\\pdfinfoomitdate=1 \\pdftrailerid{} \\pdfsuppressptexinfo=-1",
    "\\newcommand{\\num}[1]{#1}",
    "\\begin{document}",
    "\\section*{The " .. F.escape(s.name) .. " study}" }
  for _, t in ipairs(tables) do out[#out + 1] = latex_table(t) end
  out[#out + 1] = "\\subsection*{Figures}"
  for _, spec in ipairs(specs) do out[#out + 1] = latex_figure(spec, captions[spec.name]) end
  out[#out + 1] = "\\end{document}"
  return table.concat(out, "\n") .. "\n"
end

-- HTML -------------------------------------------------------------------------------

local function html_escape(x)
  return (tostring(x):gsub("[&<>\"]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;",
    ['"'] = "&quot;" }))
end

local function html_table(t)
  local out = { "<h2>" .. html_escape(t.title) .. "</h2>" }
  if #t.rows == 0 then
    out[#out + 1] = "<p>" .. html_escape(t.note or "Nothing to show.") .. "</p>"
    return table.concat(out, "\n")
  end
  out[#out + 1] = "<table>"
  local head = {}
  for i, h in ipairs(t.head) do head[i] = "<th>" .. html_escape(h) .. "</th>" end
  out[#out + 1] = "<tr>" .. table.concat(head) .. "</tr>"
  for _, r in ipairs(t.rows) do
    local cells = {}
    for i, c in ipairs(r) do cells[i] = "<td>" .. html_escape(c) .. "</td>" end
    out[#out + 1] = "<tr>" .. table.concat(cells) .. "</tr>"
  end
  out[#out + 1] = "</table>"
  for _, reason in ipairs(t.reasons or {}) do
    out[#out + 1] = "<p class=\"reason\">" .. html_escape(reason) .. "</p>"
  end
  return table.concat(out, "\n")
end

function M.html(s, tables, specs, captions)
  local out = { "<!DOCTYPE html>", "<html lang=\"en\">", "<head>", "<meta charset=\"utf-8\">",
    "<title>The " .. html_escape(s.name) .. " study</title>",
    "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em}" ..
      "table{border-collapse:collapse;margin:1em 0}th,td{border-bottom:1px solid #ccc;" ..
      "padding:0.2em 0.6em;text-align:left}img{max-width:100%}.reason{font-size:90%}</style>",
    "</head>", "<body>", "<h1>The " .. html_escape(s.name) .. " study</h1>" }
  for _, t in ipairs(tables) do out[#out + 1] = html_table(t) end
  out[#out + 1] = "<h2>Figures</h2>"
  for _, spec in ipairs(specs) do
    local caption = html_escape(captions[spec.name])
    if spec.skip then
      out[#out + 1] = "<p><em>" .. caption .. ": not drawn, " .. html_escape(spec.skip) ..
        ".</em></p>"
    else
      out[#out + 1] = string.format("<figure><img src=\"figures/png/%s.png\" alt=\"%s\">" ..
        "<figcaption>%s</figcaption></figure>", spec.name, caption, caption)
    end
  end
  out[#out + 1] = "</body>"
  out[#out + 1] = "</html>"
  return table.concat(out, "\n") .. "\n"
end

-- The command ------------------------------------------------------------------------

local function parse_args(args)
  local o = { experiments = "experiments" }
  local i = 1
  while i <= #args do
    local a = args[i]
    if a == "--experiments" then
      o.experiments = args[i + 1] or user_error("repro report: --experiments needs a directory")
      i = i + 1
    elseif a:match("^%-") or o.study then
      user_error("repro report: unknown argument %s (usage: bin/repro report STUDY " ..
        "[--experiments DIR])", a)
    else
      o.study = a:match("([^/]+)%.lua$") or a
    end
    i = i + 1
  end
  if not base.valid_name(o.study or "") then
    user_error("repro report: expected a study name, got %s", base.printable(o.study or ""))
  end
  o.experiments = o.experiments:gsub("/+$", "")
  return o
end

-- The figures: the forest plot of the primary metric, the training loss and the
-- validation loss (periodic diagnostics) per variant over training.
local function figures_of(s)
  local primary = s.summary.analysis and s.summary.analysis.primary or "val_loss"
  return {
    { name = "forest", kind = "forest", metric = primary, width = "0.9\\linewidth" },
    { name = "train_loss", kind = "curves", study = s.name, column = "loss",
      ylabel = "training loss (nats)", width = "0.9\\linewidth" },
    { name = "val_loss", kind = "curves", study = s.name, column = "d_val_loss",
      ylabel = "validation loss (nats)", width = "0.9\\linewidth" },
  }, {
    forest = "Each comparison on " .. primary .. ": mean difference (treatment - baseline) " ..
      "with its decision interval, and the band of +- the minimum effect",
    train_loss = "Training loss per variant over training: mean over seeds (line) and the " ..
      "range from the lowest to the highest seed (band)",
    val_loss = "Validation loss per variant over training (periodic diagnostics): mean over " ..
      "seeds and range",
  }
end

-- Writes OUT/<study>/report/; returns its directory.
function M.generate(o)
  local s = data.load_study(o.experiments, o.study)
  if not s then
    user_error("repro report: %s/%s/summary.json does not exist (bin/repro run or analyze " ..
      "writes it)", o.experiments, o.study)
  end
  local dir = o.experiments .. "/" .. o.study .. "/report"
  for _, d in ipairs({ dir .. "/figures/png", dir .. "/data" }) do fs.mkdir_p(d) end
  local out = require("repro.report").new_output()
  local ctx = { studies = { s }, by_name = { [s.name] = s }, names = { s.name }, appendix = {},
    experiments = o.experiments, out = out, manifest = { listed = { [s.name] = true },
      studies = { s.name }, text_width = 6.5 } }
  local entries, captions = figures_of(s)
  local specs = plot.write_data(ctx, entries, dir .. "/data")
  plot.render(specs, { data = dir .. "/data", gp_dir = host.root .. "/plots",
    figures = dir .. "/figures", out = out })
  local tables = M.tables(s)
  out:write(dir .. "/report.tex", M.latex(s, tables, specs, captions))
  out:write(dir .. "/report.html", M.html(s, tables, specs, captions))
  local build = dir .. "/latex"
  fs.mkdir_p(build)
  local cmd = string.format("cd %s && SOURCE_DATE_EPOCH=0 FORCE_SOURCE_DATE=1 pdflatex " ..
    "-interaction=nonstopmode -halt-on-error -output-directory=latex report.tex >/dev/null 2>&1",
    fs.quote(dir))
  if not os.execute(cmd) then
    user_error("repro report: pdflatex failed on %s/report.tex (log: %s/report.log)", dir, build)
  end
  out:write(dir .. "/report.pdf", assert(fs.read(build .. "/report.pdf")))
  return dir, out
end

function M.main(args)
  local o = parse_args(args)
  local dir, out = M.generate(o)
  io.stderr:write(base.printable(string.format("report: %s/report.pdf and %s/report.html (%d " ..
    "file%s changed, %d unchanged)", dir, dir, out.changed, out.changed == 1 and "" or "s",
    out.kept)), "\n")
  return 0
end

return M
