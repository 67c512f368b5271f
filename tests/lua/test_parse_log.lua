-- analysis.parse_log, the report's reading of every log.csv, is C (sys.parse_log in
-- lua/lsys.c, the report spent most of its time splitting logs in Lua).  It
-- must give what the Lua reading it replaced gave, kept below as the reference: the same
-- columns, the same values by row (integers stay integers, floats floats, NaN with its
-- bits, infinities, nil for an empty or non-number field), the same row count, and the
-- same table shapes (the # of a column with holes).  Compared on hand-made edge cases,
-- on PCG32-fuzzed texts, and on committed logs of experiments/.
local check = require "check"
local fs = require "repro.core.fs"
local host = require "repro.host"
local pcg = require "pcg"
local analysis = require "repro.analysis"
local sys = require "repro.sys"
local reader = require "repro.record.reader"
local t = check.new("test_parse_log")

-- The Lua reading the report used before (analysis/records.lua), as it was.
local function reference(text)
  local lines = {}
  for l in (text or ""):gmatch("[^\n]+") do lines[#lines + 1] = l end
  local cols, data = {}, {}
  for name in ((lines[1] or "") .. ","):gmatch("([^,]*),") do
    cols[#cols + 1] = name
    data[name] = {}
  end
  for r = 2, #lines do
    local i = 0
    for f in (lines[r] .. ","):gmatch("([^,]*),") do
      i = i + 1
      if cols[i] then data[cols[i]][r - 1] = reader.log_number(f) end
    end
  end
  return { columns = cols, data = data, n = math.max(0, #lines - 1) }
end

-- A value as text that tells every difference apart: its type, an integer's digits, a
-- float's bits (NaN's sign and payload too).
local function exact(v)
  if v == nil then return "nil" end
  if math.type(v) == "integer" then return "i" .. tostring(v) end
  if math.type(v) == "float" then return "f" .. string.unpack("<i8", string.pack("<d", v)) end
  return type(v) .. ":" .. tostring(v)
end

-- The first difference between two parsed logs, or nil.
local function differs(a, b)
  if a.n ~= b.n then return string.format("n %s vs %s", tostring(a.n), tostring(b.n)) end
  if #a.columns ~= #b.columns then return "the number of columns" end
  for i, c in ipairs(b.columns) do
    if a.columns[i] ~= c then return "column " .. i end
  end
  local names = {}
  for k in pairs(b.data) do names[#names + 1] = k end
  for k in pairs(a.data) do
    if b.data[k] == nil then return "an extra column " .. k end
  end
  for _, k in ipairs(names) do
    local x, y = a.data[k], b.data[k]
    if type(x) ~= "table" then return "no column " .. k end
    if #x ~= #y then return string.format("#%s: %d vs %d", k, #x, #y) end
    for r in pairs(x) do
      if y[r] == nil then return string.format("%s row %s: extra", k, tostring(r)) end
    end
    for r, v in pairs(y) do
      if exact(x[r]) ~= exact(v) then
        return string.format("%s row %s: %s vs %s", k, tostring(r), exact(x[r]), exact(v))
      end
    end
  end
  return nil
end

t:ok(type(sys.parse_log) == "function", "sys.parse_log exists")
local function parse(text)
  return (sys.parse_log or analysis.parse_log)(text)
end
local function same(text, what)
  local d = differs(parse(text), reference(text))
  t:ok(d == nil, what .. (d and (": " .. d) or ""))
end

local CASES = {
  { nil, "nil text" },
  { "", "empty text" },
  { "\n\n\n", "only newlines" },
  { "step,loss", "a header alone" },
  { "step,loss\n", "a header and its newline" },
  { "step,loss\n0,4.5\n1,4.25\n", "two rows" },
  { "step,loss\n\n\n0,4.5\n\n1,4.25", "empty lines skipped, no final newline" },
  { "a,b,c\n1,,3\n,,\n4,5,6\n", "empty fields are nil (holes)" },
  { "a,b\n1,2,3,4\n5\n", "more fields than columns, fewer" },
  { "a,a,b\n1,2,3\n4,,6\n", "a repeated column: the last wins, nil too" },
  { "x\nnan\n-nan\ninf\n-inf\nNaN\nINF\ninfinity\n1e999\n", "nan, inf and their look-alikes" },
  { "x\n5\n5.0\n-0\n-0.0\n0x10\n0x1p4\n1e3\n 7 \n7 x\n.5\n5.\n", "integer, float, hex, spaces" },
  { "x,y\r\n1,2\r\n3,4.5\r\n", "CRLF lines: the CR stays in the last field" },
  { "x,y\n1\0002,3\n\0,4\n", "an embedded NUL is no number" },
  { "x\n9223372036854775807\n9223372036854775808\n-9223372036854775808\n", "integer limits" },
  { "x\n" .. string.rep(" ", 200) .. "12" .. string.rep(" ", 100) .. "\n" .. string.rep("9", 300)
    .. "\n" .. string.rep("a", 500) .. "\n", "fields longer than the C buffer" },
  { ",\n,\n1,2\n", "empty column names" },
}
for _, c in ipairs(CASES) do same(c[1], c[2]) end

-- PCG32-fuzzed texts: lines of fields drawn from number-like and hostile pieces.
local PIECES = { "", "0", "1", "-1", "12", "3.5", "-2.25e-3", "1e5", "nan", "-nan", "inf",
  "-inf", "0x1F", " 4", "4 ", "x", "1,5", "\r", "\0", "9007199254740993", ".", "-", "e" }
local rng = pcg.new(51, 3)
local fuzz_fail
for case = 1, 300 do
  local rows = {}
  for _ = 1, rng:bounded(12) do
    local fields = {}
    for _ = 1, rng:bounded(8) do
      local f = {}
      for _ = 1, rng:bounded(3) + 1 do f[#f + 1] = PIECES[rng:bounded(#PIECES) + 1] end
      fields[#fields + 1] = table.concat(f)
    end
    rows[#rows + 1] = table.concat(fields, ",")
  end
  local sep = ({ "\n", "\n\n", "\r\n" })[rng:bounded(3) + 1]
  local text = table.concat(rows, sep) .. (rng:bounded(2) == 0 and "\n" or "")
  local d = differs(parse(text), reference(text))
  if d then
    fuzz_fail = fuzz_fail or string.format("fuzzed text %d (%q): %s", case, text, d)
  end
end
t:eq(fuzz_fail, nil, "300 fuzzed texts read alike")

-- analysis.parse_log is it
local sample = "a,b\n1,2.5\n"
t:eq(differs(analysis.parse_log(sample), parse(sample)), nil, "analysis.parse_log reads as sys.parse_log")

-- Committed logs: a few of every study's, as the report reads them.
local list = fs.capture("find " .. fs.quote(host.root .. "/experiments") ..
  " -name log.csv -path '*seed-1*' | sort | head -n 12") or ""
local n = 0
for path in list:gmatch("[^\n]+") do
  n = n + 1
  same(fs.read(path), "the committed " .. path:sub(#host.root + 2))
end
t:ok(n >= 10, "committed logs compared: " .. n)

t:done()
