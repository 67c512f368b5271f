-- The pcg module against tests/vectors/pcg32.txt, and its argument checks.
local check = require "check"
local pcg = require "pcg"
local t = check.new("test_pcg_lua")

local cases = 0
for line in io.lines("tests/vectors/pcg32.txt") do
  if not line:match("^#") and line:match("%S") then
    local seed, stream, outs, bounded = line:match("^(%d+) (%d+) | ([%x ]+) | ([%d ]+)$")
    local r = pcg.new(math.tointeger(seed), math.tointeger(stream))
    local ok = true
    for hex in outs:gmatch("%x+") do
      if r:next() ~= tonumber(hex, 16) then ok = false end
    end
    t:ok(ok, "next() vectors for seed " .. seed)
    r = pcg.new(math.tointeger(seed), math.tointeger(stream))
    ok = true
    for d in bounded:gmatch("%d+") do
      if r:bounded(6) ~= tonumber(d) then ok = false end
    end
    t:ok(ok, "bounded(6) vectors for seed " .. seed)
    cases = cases + 1
  end
end
t:ok(cases >= 3, "read the vector cases")

local r = pcg.new(3, 4)
local u = r:uniform()
t:ok(math.type(u) == "float" and u >= 0 and u < 1, "uniform in [0,1)")
t:ok(math.type(r:normal()) == "float", "normal is a float")
t:ok(math.type(r:next()) == "integer", "next is an integer")
t:ok(tostring(r):find("^pcg32"), "generator prints as pcg32")
local a, b = pcg.stream(9, "data", 2), pcg.stream(9, "data", 2)
t:eq(a:next(), b:next(), "same stream, same draws")
t:ok(pcg.stream(9, "data"):next() ~= pcg.stream(9, "dropout"):next(), "purposes differ")

t:raises(function() pcg.new(-1, 0) end, "seed: must be >= 0", "negative seed")
t:raises(function() pcg.new(1.5, 0) end, "seed: integer expected", "non-integer seed")
t:raises(function() pcg.new("x") end, "seed: integer expected", "string seed")
t:raises(function() pcg.new(1, -2) end, "stream: must be >= 0", "negative stream")
t:raises(function() r:bounded(0) end, "n: must be in", "bounded(0)")
t:raises(function() r:bounded(-3) end, "n: must be in", "bounded(-3)")
t:raises(function() r:bounded(2.5) end, "n: integer expected", "bounded(2.5)")
t:raises(function() pcg.stream(1, "bogus") end, "invalid option 'bogus'", "unknown purpose")
t:raises(function() pcg.new(1, 1).next(io.stdout) end, "pcg32 expected", "bad self")
t:done()
