-- Code a project adds to the suite without editing it: a Lua file under the project's
-- root that returns a table, named by the file that uses it (a study's `extensions`, the
-- paper manifest's `extensions`).  This paper's own code lives so, under paper/lib/.
--
-- An extension is trusted code, as the library is: it runs in the host with the normal
-- globals (require included), not in the study sandbox.  So only a file of the project
-- is loaded: a relative path (from the project root, or from `base` when given) without
-- "..", naming a regular file that is not a symbolic link.  Each file is loaded once per
-- process; the same path gives the same table.
local host = require "repro.host"
local fs = require "repro.core.fs"
local base = require "repro.core.base"

local M = {}

local loaded = {}

-- The table the extension at `path` returns.  `who` names the user of the path in an
-- error ("lua/experiments/x.lua: extensions.claim"); `dir` is the directory the path is
-- relative to (default the project root).
function M.load(path, who, dir)
  if type(path) ~= "string" or path == "" or path:sub(1, 1) == "/" or
      ("/" .. path .. "/"):find("/%.%./") or not path:match("%.lua$") then
    base.user_error("%s: expected the path of a Lua file of the project, relative to %s, " ..
      "without '..' (e.g. \"paper/lib/claim.lua\"), got %s", who, dir or "its root",
      base.printable(tostring(path)))
  end
  local full = (dir or host.root) .. "/" .. path
  if loaded[full] then return loaded[full] end
  local src, err = fs.read(full)
  if not src then base.user_error("%s: %s", who, base.printable(err)) end
  local chunk, cerr = load(src, "@" .. path, "t")
  if not chunk then base.user_error("%s: %s", who, cerr) end
  local m = chunk()
  if type(m) ~= "table" then
    base.user_error("%s: %s returns %s, not a table", who, path, type(m))
  end
  loaded[full] = m
  return m
end

return M
