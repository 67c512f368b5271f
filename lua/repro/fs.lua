-- Files: atomic writes (temporary name, then rename), directories, checksums.
local host = require "repro.host"
local M = {}

function M.quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

function M.read(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local s = f:read("a")
  f:close()
  return s
end

function M.exists(path)
  local f = io.open(path, "rb")
  if f then f:close() return true end
  return false
end

-- Writes text to path.tmp.<pid> and renames it over path: a reader (or a killed writer)
-- never leaves a half-written file under the real name.
function M.write_atomic(path, text)
  local tmp = string.format("%s.tmp.%d", path, host.pid())
  local f, err = io.open(tmp, "wb")
  if not f then error(string.format("cannot write %s: %s", path, err), 0) end
  local ok, werr = f:write(text)
  local cok, cerr = f:close()
  if not ok or not cok then
    os.remove(tmp)
    error(string.format("cannot write %s: %s", path, tostring(werr or cerr)), 0)
  end
  local rok, rerr = os.rename(tmp, path)
  if not rok then
    os.remove(tmp)
    error(string.format("cannot rename %s to %s: %s", tmp, path, rerr), 0)
  end
end

function M.mkdir_p(path)
  local ok = os.execute("mkdir -p " .. M.quote(path))
  if not ok then error("cannot create directory " .. path, 0) end
end

-- Output of a shell command (nil if it failed).
function M.capture(cmd)
  local p = io.popen(cmd .. " 2>/dev/null", "r")
  if not p then return nil end
  local out = p:read("a")
  local ok = p:close()
  if not ok then return nil end
  return (out:gsub("%s+$", ""))
end

function M.sha256(path)
  local out = M.capture("sha256sum " .. M.quote(path))
  return out and out:match("^(%x+)")
end

return M
