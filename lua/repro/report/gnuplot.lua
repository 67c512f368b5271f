-- gnuplot's side of the figures (lua/repro/report/plot.lua): numbers and text as a data
-- file or a script variable holds them (inert: nothing gnuplot reads is substituted or
-- evaluated), axis ranges fitted to the data, and the renderer that runs plots/*.gp.
local base = require "repro.core.base"
local fs = require "repro.core.fs"
local sys = require "repro.sys"

local M = {}
local finite = base.finite

function M.g(x)
  if not finite(x) then return nil end
  local s = string.format("%.6g", x)
  return s == "-0" and "0" or s
end

-- Text for gnuplot as one line: a control character (a newline would end a command or
-- a data line) becomes a space.
function M.one_line(s)
  return (tostring(s):gsub("[%z\1-\31\127]", " "))
end

-- A gnuplot string literal in single quotes ('' is a quote): gnuplot performs neither
-- backquote (command) nor macro substitution inside single quotes, and no backslash
-- escapes, so any text is inert there.  Every string reaches gnuplot this way, as a
-- variable assigned with -e, or as data in a data file; the scripts evaluate none.
function M.gp_string(s)
  return "'" .. M.one_line(s):gsub("'", "''") .. "'"
end

-- A title in a data file (`title columnheader(1)`, `ytic(7)`): data is never
-- substituted or evaluated; plain text (gnuplot runs with enhanced text off).
function M.title(s)
  return '"' .. M.one_line(s):gsub('"', "'") .. '"'
end

-- Data blocks as one file (a script selects one with `index`).
function M.blocks(list)
  return table.concat(list, "\n\n\n") .. "\n"
end

-- Axis ranges fitted to the data ----------------------------------------------------------

-- The smallest and largest finite number of a list (nil, nil when it has none).
function M.extent(xs)
  local lo, hi
  for _, x in ipairs(xs) do
    if finite(x) then
      if not lo or x < lo then lo = x end
      if not hi or x > hi then hi = x end
    end
  end
  return lo, hi
end

-- A linear range [lo, hi] widened by `pad` of its span on each side (a zero span gets
-- one of its own size, or 1).
function M.padded(lo, hi, pad)
  local span = hi - lo
  if span <= 0 then span = math.abs(hi) > 0 and math.abs(hi) or 1 end
  return lo - pad * span, hi + pad * span
end

-- A tick step of 1, 2 or 5 x 10^k giving about `n` intervals over [lo, hi].
function M.nice_step(lo, hi, n)
  local raw = (hi - lo) / n
  if not (raw > 0) then return 1 end
  local mag = 10 ^ math.floor(math.log(raw, 10))
  local r = raw / mag
  return (r >= 5 and 5 or r >= 2 and 2 or 1) * mag
end

-- A logarithmic range fitted to [lo, hi] (both > 0) with `pad` of a factor on each
-- side (at least one decade in all), and its tics as a gnuplot word list: 1-2-5 steps when it
-- spans less than two decades, 1-3 steps up to four, decades beyond.
function M.log_axis(lo, hi, pad)
  local f = math.max((hi / lo) ^ pad, 1.02)
  local a, b = lo / f, hi * f
  if b / a < 10 then
    -- at least a decade, around the data's geometric middle
    local mid = math.sqrt(lo * hi)
    a, b = mid / math.sqrt(10), mid * math.sqrt(10)
  end
  local decades = math.log(b / a, 10)
  local mant = decades < 2 and { 1, 2, 5 } or decades < 4 and { 1, 3 } or { 1 }
  local tics = {}
  for k = math.floor(math.log(a, 10)), math.ceil(math.log(b, 10)) do
    for _, m in ipairs(mant) do
      local x = m * 10 ^ k
      if x >= a and x <= b then tics[#tics + 1] = M.g(x) end
    end
  end
  return a, b, table.concat(tics, " ")
end

-- Rendering -------------------------------------------------------------------------------

-- Gnuplot's -e text for a spec: every variable assigned.
function M.assignments(spec, fmt, out_path, gp_dir)
  local vars = { data = spec.data, fmt = fmt, out = out_path, gpdir = gp_dir,
    width = spec.width, height = spec.height }
  for k, v in pairs(spec.vars or {}) do vars[k] = v end
  local parts = {}
  for _, k in ipairs(base.sorted_keys(vars)) do
    local v = vars[k]
    parts[#parts + 1] = k .. "=" .. (type(v) == "number" and M.g(v) or M.gp_string(v))
  end
  return table.concat(parts, "; ")
end

-- The smallest font size, in points, a figure of `script` can set: every quoted font
-- name with a size ('LM Roman 10,9', ',8') in plots/common.gp, plots/<script>.gp and the
-- spec's variables named *font (a forest plot's namefont).  common.gp's terminal prints a size
-- N at N points at the figure's own size (fontscale 0.75 undoes cairo's 96 dpi), so the
-- paper's check (paper/printsize.tex) scales this by the figure's printed width.
function M.smallest_font(gp_dir, script, vars)
  local texts = {}
  for _, name in ipairs({ "common", script }) do
    local path = gp_dir .. "/" .. name .. ".gp"
    texts[#texts + 1] = fs.read(path) or error("report: cannot read " .. path, 0)
  end
  for k, v in pairs(vars or {}) do
    if type(v) == "string" and k:match("font$") then texts[#texts + 1] = "'" .. v .. "'" end
  end
  local smallest
  for _, text in ipairs(texts) do
    for size in text:gmatch("['\"][^'\"\n]*,%s*([%d.]+)['\"]") do
      local x = tonumber(size)
      if x and x < (smallest or math.huge) then smallest = x end
    end
  end
  if not smallest then error("report: plots/" .. script .. ".gp sets no font size", 0) end
  return smallest
end

-- cairo 1.16 stamps the PDF with its creation time; a fixed one of the same length keeps
-- the bytes (and the cross-reference offsets) reproducible.
function M.fix_pdf_date(text)
  return (text:gsub("(/CreationDate %(D:)(%d+)", function(head, digits)
    return head .. (#digits == 14 and "19700101000000" or string.rep("0", #digits))
  end))
end

-- The data files of a spec copied into folder `dir` under names the suite makes
-- (data.dat; a classnorm spec's <data>_<class>.dat as data_<class>.dat, the classes being
-- the suite's own words): returns the `data` gnuplot is given.  gnuplot reads a file name
-- that starts with '<' as a shell command, so no name from outside (a --plots-data or
-- --experiments folder, a study or variant name) ever reaches it.
local function private_data(spec, dir)
  local src = spec.data
  if src:match("%.dat$") then
    local text, err = fs.read(src)
    if not text then error({ message = "report: " .. tostring(err) }, 0) end
    fs.write_atomic(dir .. "/data.dat", text)
    return dir .. "/data.dat"
  end
  local folder, prefix = src:match("^(.*)/([^/]+)$")
  for _, name in ipairs(sys.listdir(folder) or {}) do
    local word = name:sub(1, #prefix + 1) == prefix .. "_" and name:sub(#prefix + 2):match("^(%a+)%.dat$")
    if word then
      fs.write_atomic(dir .. "/data_" .. word .. ".dat", assert(fs.read(folder .. "/" .. name)))
    end
  end
  return dir .. "/data"
end

-- Removes from dir the temporaries of report processes that are gone (killed): the
-- figure temporaries of older versions (NAME.tmp.<pid>.pdf or .png) and the atomic
-- writer's (fs.temp_pid) as regular files; a symbolic link of such a name is no
-- writer's and is removed at once, itself, never followed.
local function remove_stale(dir)
  local st = sys.lstat(dir)
  if not st or st.type ~= "dir" then return end
  for _, name in ipairs(sys.listdir(dir) or {}) do
    local pid = fs.temp_pid(name) or tonumber(name:match("%.tmp%.(%d+)%.pdf$") or
      name:match("%.tmp%.(%d+)%.png$"))
    local fst = pid and sys.lstat(dir .. "/" .. name)
    if fst and (fst.type == "link" or (fst.type == "file" and not sys.pid_alive(pid))) then
      os.remove(dir .. "/" .. name)
    end
  end
end

-- gnuplot's run of one spec in format fmt, in the private folder dir: the figure's bytes,
-- or an error with gnuplot's own words (else its exit status).
local function run_gnuplot(spec, fmt, dir, opts)
  local tmp, errf = dir .. "/figure." .. fmt, dir .. "/stderr.txt"
  local script = opts.gp_dir .. "/" .. spec.script .. ".gp"
  local cmd = "gnuplot -e " .. fs.quote(M.assignments(spec, fmt, tmp, opts.gp_dir)) ..
    " " .. fs.quote(script) .. " 2>" .. fs.quote(errf)
  local ok, how, status = os.execute(cmd)
  local err = fs.read(errf) or ""
  local text = fs.read(tmp)
  os.remove(tmp)
  if not ok or not text or #text == 0 then
    fs.remove_tree(dir)
    local why = err:match("%S") and err or string.format("gnuplot %s %s and wrote no " ..
      "figure%s", how == "signal" and "was killed by signal" or "exited with status",
      tostring(status), status == 127 and " (is gnuplot installed and on PATH?)" or "")
    error({ message = string.format("report: gnuplot failed on %s for %s (%s):\n%s",
      script, spec.name, fmt, why) }, 0)
  end
  if err:match("%S") then
    if opts.on_warning then
      opts.on_warning(spec.name, fmt, err)
    else
      io.stderr:write(base.printable(string.format("report: gnuplot, %s (%s):\n%s",
        spec.name, fmt, err), true))
    end
  end
  return fmt == "pdf" and M.fix_pdf_date(text) or text
end

-- Renders every spec without a skip reason: opts.gp_dir (scripts), opts.figures (PDF
-- directory; PNGs go to its png/), opts.out (report output), opts.on_warning (optional:
-- called with the spec's name, the format and gnuplot's stderr when gnuplot printed
-- something and still drew the figure; by default that is written to stderr, labelled).
-- gnuplot runs on copies of the data in a private temporary folder (fs.private_subdir)
-- and writes its figure and its error text there, under fixed names; the figure is then
-- written to its place through opts.out.  Returns {name -> true}.
function M.render(specs, opts)
  local done = {}
  remove_stale(opts.figures)
  remove_stale(opts.figures .. "/png")
  for _, spec in ipairs(specs) do
    if not spec.skip then
      local dir = fs.private_subdir("gnuplot")
      local gspec = setmetatable({ data = private_data(spec, dir) }, { __index = spec })
      local pdf, png = run_gnuplot(gspec, "pdf", dir, opts), run_gnuplot(gspec, "png", dir, opts)
      opts.out:write(opts.figures .. "/" .. spec.name .. ".pdf", pdf)
      opts.out:write(opts.figures .. "/png/" .. spec.name .. ".png", png)
      fs.remove_tree(dir)
      done[spec.name] = true
    end
  end
  return done
end

return M
