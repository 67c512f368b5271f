-- One table model for every output.  A table is { title =, head = {...}, rows = {{...}},
-- reasons = {...}, note = } of plain text, "-" where the data defines no value; a cell may
-- be a number, which CSV keeps at full precision and the others show to 4 digits, or a
-- value each renderer formats (M.value: an estimate, its interval, a p-value).  A reason
-- is a string said after the table, or { row = k, lead =, text = } tied to row k: the
-- terminal prints its text under the row, a document prints lead .. text after the table.
-- Renderers: M.text (the terminal), M.latex, M.html, M.markdown and M.csv; M.tabular
-- and M.marks are the paper's form of M.latex: LaTeX cells, group rows, marked notes.
local textable = require "repro.core.textable"
local F = require "repro.report.texfmt"
local words = require "repro.analysis.words"

local M = {}

-- The reasons of t as { under = { [k] = {text, ...} }, after = {text, ...} }.
local function split_reasons(t)
  local under, after = {}, {}
  for _, r in ipairs(t.reasons or {}) do
    if type(r) == "table" then
      under[r.row] = under[r.row] or {}
      table.insert(under[r.row], r.text)
    else
      after[#after + 1] = r
    end
  end
  return under, after
end

-- A reason as a document says it: with its lead when tied to a row.
local function said(r)
  if type(r) == "table" then return (r.lead or "") .. r.text end
  return r
end

-- A number as the text renderers show it: 4 significant digits, "-" when it is not finite
-- (nil too).
function M.num(x)
  return F.finite(x) and words.fmt(x) or "-"
end

-- A p-value as the text renderers show it: "< 0.001", else 3 significant digits.
function M.p(p)
  if not F.finite(p) then return "-" end
  if p < 0.001 then return "< 0.001" end
  return string.format("%.3g", p)
end

-- Cells that carry a value for the renderers to format: as text (the terminal, HTML,
-- Markdown, CSV, and the study report's LaTeX) and as the paper's LaTeX (M.tabular, and
-- M.latex with opts.raw).  est: an estimate (a difference) in its metric's units, in LaTeX
-- to the decimals its interval supports; ci: that interval; p: a p-value; fixed: a number,
-- in LaTeX to `places` decimals; level: a confidence level (0.95) as a percentage.
local KINDS = {
  est = { text = function(c) return M.num(c.x) end,
    tex = function(c) return F.num(c.x, F.diff_decimals(c.metric, c.x, c.ci)) end },
  ci = { text = function(c)
      return c.ci and string.format("[%s, %s]", M.num(c.ci[1]), M.num(c.ci[2])) or "-"
    end,
    tex = function(c) return F.interval(c.ci, F.diff_decimals(c.metric, c.x, c.ci)) end },
  p = { text = function(c) return M.p(c.x) end, tex = function(c) return F.p(c.x) end },
  fixed = { text = function(c) return M.num(c.x) end,
    tex = function(c) return F.num(c.x, c.places) end },
  level = { text = function(c) return c.x and string.format("%.2f %%", 100 * c.x) or "-" end,
    tex = function(c) return c.x and (F.fixed(100 * c.x, 2) .. "\\,\\%") or F.DASH end },
}
M.value = {}
function M.value.est(x, metric, ci) return { kind = "est", x = x, metric = metric, ci = ci } end
function M.value.ci(ci, metric, x) return { kind = "ci", x = x, metric = metric, ci = ci } end
function M.value.p(x) return { kind = "p", x = x } end
function M.value.fixed(x, places) return { kind = "fixed", x = x, places = places } end
function M.value.level(x) return { kind = "level", x = x } end

-- A cell as text: a number as M.num gives it, a value as its kind's text (its LaTeX
-- with `tex`).
local function cell_text(c, tex)
  if type(c) == "boolean" then return tostring(c) end
  if type(c) == "table" then return KINDS[c.kind][tex and "tex" or "text"](c) end
  if type(c) ~= "number" then return c end
  return M.num(c)
end

-- A cell as the paper's LaTeX: a value as its kind's LaTeX; text as it is (LaTeX
-- already), or escaped when `plain`.
local function cell_tex(c, plain)
  if type(c) == "table" then return cell_text(c, true) end
  return plain and F.escape(c) or c
end

-- t as terminal text cut to width (nil: no limit); opts.title = false leaves the title out
-- (the caller prints its own header); opts.indent (default two spaces) before each row.
function M.text(t, width, opts)
  opts = opts or {}
  local indent = opts.indent or "  "
  local lines = {}
  if opts.title ~= false and t.title then lines[1] = textable.wrap(t.title .. ":", width) end
  if #t.rows == 0 then
    lines[#lines + 1] = textable.wrap("(" .. (t.note or "nothing to show") .. ")", width,
      "  ", "    ")
    return table.concat(lines, "\n") .. "\n"
  end
  local under, after = split_reasons(t)
  local rows = { t.head }
  for i, r in ipairs(t.rows) do
    rows[i + 1] = {}
    for j = 1, #t.head do rows[i + 1][j] = cell_text(r[j]) or "" end
  end
  local k = 0
  for row in textable.render(rows, { indent = indent, width = width }):gmatch("([^\n]*)\n") do
    lines[#lines + 1] = row
    for _, s in ipairs(under[k] or {}) do
      lines[#lines + 1] = textable.wrap(s, width, "      ", "        ")
    end
    k = k + 1
  end
  for _, s in ipairs(after) do lines[#lines + 1] = textable.wrap(s, width, "  ", "    ") end
  if t.note then lines[#lines + 1] = textable.wrap(t.note, width, "  ", "    ") end
  return table.concat(lines, "\n") .. "\n"
end

-- t as a LaTeX subsection (booktabs).  A table of many columns wraps its long headers and
-- cells in boxes, so that it fits the page.  opts.title = false leaves the subsection out;
-- opts.raw: the cells are LaTeX already (the paper's names and numbers); opts.wrap_last:
-- the last column takes the rest of the line and wraps (tabularx), and opts.first (a
-- width) makes the first one wrap at that width too.
function M.latex(t, opts)
  opts = opts or {}
  local esc = opts.raw and function(x) return x end or F.escape
  local out = {}
  if opts.title ~= false then out[1] = "\\subsection*{" .. esc(t.title) .. "}" end
  if #t.rows == 0 then
    out[#out + 1] = esc(t.note or "Nothing to show.") .. "\n"
    return table.concat(out, "\n")
  end
  local wide = #t.head == 2 or opts.wrap_last
  local many = #t.head > 6
  local function box(text, w, align)
    if not many or #text <= (align == "b" and 12 or 22) then return esc(text) end
    return string.format("\\parbox[%s]{%s}{\\raggedright %s}", align, w, esc(text))
  end
  out[#out + 1] = many and "\\begin{center}\\scriptsize" or "\\begin{center}\\small"
  local ragged = ">{\\raggedright\\arraybackslash}"
  out[#out + 1] = wide and ("\\begin{tabularx}{\\linewidth}{@{}" .. (opts.first and
    (ragged .. "p{" .. opts.first .. "}" .. string.rep("l", #t.head - 2)) or
    string.rep("l", #t.head - 1)) .. ragged .. "X@{}}") or
    ("\\begin{tabular}{@{}" .. string.rep("l", #t.head) .. "@{}}")
  out[#out + 1] = "\\toprule"
  local head = {}
  for i, h in ipairs(t.head) do head[i] = box(h, "2.1cm", "b") end
  out[#out + 1] = table.concat(head, " & ") .. " \\\\"
  out[#out + 1] = "\\midrule"
  for _, r in ipairs(t.rows) do
    local cells = {}
    for i, c in ipairs(r) do cells[i] = box(cell_text(c, opts.raw), "2.6cm", "t") end
    out[#out + 1] = table.concat(cells, " & ") .. " \\\\"
  end
  out[#out + 1] = "\\bottomrule"
  out[#out + 1] = wide and "\\end{tabularx}" or "\\end{tabular}"
  out[#out + 1] = "\\end{center}"
  for _, r in ipairs(t.reasons or {}) do
    out[#out + 1] = "\\par\\noindent{\\small " .. esc(said(r)) .. "}"
  end
  if t.note then out[#out + 1] = "\\par\\noindent{\\small " .. esc(t.note) .. "}" end
  return table.concat(out, "\n") .. "\n"
end

-- Notes under a table: marks ("a", "b", ...) for distinct texts, in order of use.
-- marks.mark(text) gives a cell's mark; marks.fixed(text) a sentence said before the
-- marked notes; marks.render() the notes as LaTeX ("" when there are none).
function M.marks()
  local n = { list = {}, by_text = {} }
  local function letter(i) return string.char(96 + ((i - 1) % 26) + 1) end
  function n.mark(text)
    local i = n.by_text[text]
    if not i then
      n.list[#n.list + 1] = text
      i = #n.list
      n.by_text[text] = i
    end
    return "$^{" .. letter(i) .. "}$"
  end
  function n.fixed(text)
    n.plain = n.plain or {}
    n.plain[#n.plain + 1] = text
  end
  function n.render()
    if #n.list == 0 and not n.plain then return "" end
    local out = { "\\par\\smallskip\\footnotesize" }
    if n.plain then
      out[#out + 1] = table.concat(n.plain, " ") .. (#n.list > 0 and "\\\\" or "")
    end
    for i, text in ipairs(n.list) do
      out[#out + 1] = string.format("$^{%s}$\\,%s%s", letter(i), text,
        i < #n.list and "\\\\" or "")
    end
    return table.concat(out, "\n") .. "\n"
  end
  return n
end

-- t as a bare booktabs tabular with LaTeX cells (the paper's tables): t.align is the
-- column spec (default every column "l"); t.above, a row of cells above the head; a row
-- is a list of cells, { rule = true } a rule, { space = true } a little space, or
-- { group = text } a rule (none with rule = false) and a row spanning every column in
-- italics; t.skip, a length, spaces the rows of cells apart ("2pt").
-- opts.fit scales it to the line (the paper's \ReportFit); opts.plain: the rows' text
-- cells are plain text, escaped (a value cell is formatted as LaTeX either way).
function M.tabular(t, opts)
  local n = #t.head
  local out = { "\\begin{tabular}{@{}" .. (t.align or string.rep("l", n)) .. "@{}}",
    "\\toprule" }
  for _, r in ipairs(t.above and { t.above, t.head } or { t.head }) do
    out[#out + 1] = table.concat(r, " & ") .. " \\\\"
  end
  local function ruled(r) return r.rule or (r.group and r.rule ~= false) end
  if t.rows[1] and not ruled(t.rows[1]) then out[#out + 1] = "\\midrule" end
  for _, r in ipairs(t.rows) do
    if ruled(r) then out[#out + 1] = "\\midrule" end
    if r.group then
      out[#out + 1] = "\\multicolumn{" .. n .. "}{@{}l}{\\emph{" .. r.group .. "}} \\\\"
    elseif r.space then
      out[#out + 1] = "\\addlinespace"
    elseif not r.rule then
      local cells = {}
      for i, c in ipairs(r) do cells[i] = cell_tex(c, opts and opts.plain) end
      out[#out + 1] = table.concat(cells, " & ") .. " \\\\" ..
        (t.skip and ("[" .. t.skip .. "]") or "")
    end
  end
  out[#out + 1] = "\\bottomrule"
  out[#out + 1] = "\\end{tabular}"
  local text = table.concat(out, "\n")
  if opts and opts.fit then text = "\\ReportFit{" .. text .. "}" end
  return text .. "\n"
end

function M.html_escape(x)
  return (tostring(x):gsub("[&<>\"]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;",
    ['"'] = "&quot;" }))
end
local esc = M.html_escape

function M.html(t)
  local out = { "<h2>" .. esc(t.title) .. "</h2>" }
  if #t.rows == 0 then
    out[#out + 1] = "<p>" .. esc(t.note or "Nothing to show.") .. "</p>"
    return table.concat(out, "\n")
  end
  out[#out + 1] = "<table>"
  local head = {}
  for i, h in ipairs(t.head) do head[i] = "<th>" .. esc(h) .. "</th>" end
  out[#out + 1] = "<tr>" .. table.concat(head) .. "</tr>"
  for _, r in ipairs(t.rows) do
    local cells = {}
    for i, c in ipairs(r) do cells[i] = "<td>" .. esc(cell_text(c)) .. "</td>" end
    out[#out + 1] = "<tr>" .. table.concat(cells) .. "</tr>"
  end
  out[#out + 1] = "</table>"
  if t.note then out[#out + 1] = "<p class=\"note\">" .. esc(t.note) .. "</p>" end
  for _, r in ipairs(t.reasons or {}) do
    out[#out + 1] = "<p class=\"reason\">" .. esc(said(r)) .. "</p>"
  end
  return table.concat(out, "\n")
end

-- t as GitHub Markdown: "|" in a cell escaped, reasons and note as paragraphs.
function M.markdown(t)
  local function cell(x) return (tostring(x):gsub("[\r\n]", " "):gsub("|", "\\|")) end
  local out = { "### " .. cell(t.title), "" }
  if #t.rows == 0 then
    out[#out + 1] = cell(t.note or "Nothing to show.")
    return table.concat(out, "\n") .. "\n"
  end
  local head, rule = {}, {}
  for i, h in ipairs(t.head) do head[i], rule[i] = cell(h), "---" end
  out[#out + 1] = "| " .. table.concat(head, " | ") .. " |"
  out[#out + 1] = "| " .. table.concat(rule, " | ") .. " |"
  for _, r in ipairs(t.rows) do
    local cells = {}
    for i = 1, #t.head do cells[i] = cell(cell_text(r[i]) or "") end
    out[#out + 1] = "| " .. table.concat(cells, " | ") .. " |"
  end
  for _, r in ipairs(t.reasons or {}) do out[#out + 1] = "\n" .. cell(said(r)) end
  if t.note then out[#out + 1] = "\n" .. cell(t.note) end
  return table.concat(out, "\n") .. "\n"
end

-- The cells that stand for no value.
M.UNDEFINED = { ["-"] = true, ["undefined"] = true, ["?"] = true, [""] = true }

-- t as CSV (header first): a cell that stands for no value (nil, "-", a number that is
-- not finite) is empty, and the column not_measurable names the columns a row left empty.
function M.csv(t)
  local results = require "repro.report.results"
  local head = { table.unpack(t.head) }
  head[#head + 1] = "not_measurable"
  local lines = { results.csv_line(head) }
  for _, r in ipairs(t.rows) do
    local row, empty = {}, {}
    for i = 1, #t.head do
      local c = r[i]
      if type(c) == "table" then c = cell_text(c) end
      if c == nil or M.UNDEFINED[c] or (type(c) == "number" and cell_text(c) == "-") then
        empty[#empty + 1] = t.head[i]
      else
        row[i] = c
      end
    end
    row[#t.head + 1] = #empty > 0 and table.concat(empty, ";") or nil
    row.n = #t.head + 1
    lines[#lines + 1] = results.csv_line(row)
  end
  return table.concat(lines)
end

return M
