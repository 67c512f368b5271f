-- A small test harness for the Lua tests: counts checks, prints each failure with its
-- line, and `done` prints "NAME: N passed, N failed" and exits 1 on any failure.  A test
-- beside it has it as `require "check"` (bin/repro script puts a script's folder first on
-- package.path); one elsewhere dofile's it.
local M = {}
local T = {}
T.__index = T

function M.new(name)
  return setmetatable({ name = name, passed = 0, failed = 0 }, T)
end

local function where()
  local info = debug.getinfo(3, "Sl")
  return info.short_src .. ":" .. info.currentline
end

function T:ok(cond, msg)
  if cond then
    self.passed = self.passed + 1
  else
    self.failed = self.failed + 1
    io.stderr:write("FAIL ", where(), ": ", tostring(msg or "check failed"), "\n")
  end
  return cond
end

function T:eq(got, want, msg)
  local ok = got == want
  if not ok then
    msg = string.format("%s: got %s, want %s", msg or "eq", tostring(got), tostring(want))
  end
  if ok then self.passed = self.passed + 1 else
    self.failed = self.failed + 1
    io.stderr:write("FAIL ", where(), ": ", msg, "\n")
  end
  return ok
end

function T:near(got, want, rtol, msg)
  local ok = type(got) == "number" and math.abs(got - want) <= rtol * math.max(1, math.abs(want))
  if ok then self.passed = self.passed + 1 else
    self.failed = self.failed + 1
    io.stderr:write("FAIL ", where(), ": ", string.format("%s: got %s, want %.17g (rtol %g)",
      msg or "near", tostring(got), want, rtol), "\n")
  end
  return ok
end

-- fn must raise an error whose text contains `pattern` (plain match).
function T:raises(fn, pattern, msg)
  local ok, err = pcall(fn)
  if type(err) == "table" and err.message then err = err.message end
  local good = not ok and string.find(tostring(err), pattern, 1, true) ~= nil
  if good then self.passed = self.passed + 1 else
    self.failed = self.failed + 1
    io.stderr:write("FAIL ", where(), ": ", msg or "raises", ": expected an error containing '",
      pattern, "', got ", ok and "no error" or tostring(err), "\n")
  end
  return good
end

function T:done()
  print(string.format("%s: %d passed, %d failed", self.name, self.passed, self.failed))
  os.exit(self.failed == 0 and 0 or 1, true) -- closing the state removes its private folder
end

-- Runs a shell command; returns its exit status, stdout and stderr (caught in a file of
-- the private temporary folder, fs.private_dir).
local n_run = 0
function M.run(cmd)
  local errf = string.format("%s/stderr.%d", require("repro.core.fs").private_dir(), n_run)
  n_run = n_run + 1
  local p = io.popen(cmd .. " 2>" .. errf, "r")
  local out = p:read("a")
  local _, _, code = p:close()
  local f = io.open(errf, "r")
  local err = f:read("a")
  f:close()
  os.remove(errf)
  return code, out, err
end

-- For a test that trains on temporary corpora outside the project's data directory:
-- REPRO_DATA_ANYWHERE=1 for this process and every command it runs (README).
function M.data_anywhere()
  require("repro.proc").setenv("REPRO_DATA_ANYWHERE", "1")
end

-- A small corpus at `path` (about 30 KB of PCG32-drawn ASCII words, 9 to a line), with
-- REPRO_DATA_ANYWHERE=1 (M.data_anywhere): for a test whose checks do not depend on the
-- corpus.  A run's final evaluation scores the whole validation split, 111,000 tokens
-- of Tiny Shakespeare (some 7 s for the smallest model), a few thousand here.
-- Returns path.
function M.small_corpus(path)
  M.data_anywhere()
  local g = require("pcg").new(51, 0)
  local words = { "To", "be", "the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran",
    "far", "away", "with", "her", "old", "red", "box", "into", "green", "field", "of", "tall",
    "grass" }
  local text = {}
  for i = 1, 6000 do
    text[#text + 1] = words[g:bounded(#words) + 1] .. ((i % 9 == 0) and ".\n" or " ")
  end
  M.write(path, table.concat(text))
  return path
end

-- A fresh temporary directory (removed by M.rmtree).
function M.tmpdir()
  local p = io.popen("mktemp -d")
  local d = p:read("l")
  p:close()
  return d
end

function M.rmtree(d)
  assert(d:match("^/tmp/"), "refusing to remove " .. d)
  os.execute("rm -rf '" .. d .. "'")
end

function M.write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

-- A corpus of n random words from a small vocabulary at path (PCG stream `seed`): a tiny
-- model learns something from it in a few steps.  Returns the path.
function M.word_corpus(path, seed, n)
  local g = require("pcg").new(seed, 0)
  local words = { "the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran", "far", "away" }
  local text = {}
  for i = 1, n do
    text[#text + 1] = words[g:bounded(#words) + 1] .. ((i % 9 == 0) and ".\n" or " ")
  end
  M.write(path, table.concat(text))
  return path
end

return M
