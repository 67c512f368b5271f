-- Code a project adds to the suite without editing it: a Lua file that returns a table,
-- named by a study's or the paper manifest's `extensions` (docs/DESIGN.md "Extensions";
-- this paper's own code is under paper/lib/).  An extension is trusted code: it runs in the
-- host with the normal globals, not in the study sandbox.  So only a file directly in a
-- folder of M.TRUSTED_DIRS is loaded (M.load), named by its name ("claim": letters,
-- digits, "_"; looked up in those folders in order) or by its path ("paper/lib/claim.lua"),
-- every component checked (fs.check_path: no symbolic link).  Each file is loaded once per
-- process.
local host = require "repro.host"
local sys = require "repro.sys"
local fs = require "repro.core.fs"
local base = require "repro.core.base"

local M = {}

-- The project's trusted places for extensions, from the project root.
M.TRUSTED_DIRS = { "paper/lib", "extensions" }

local loaded = {}

-- The path from the root of the extension `ref` names (a name or a trusted path), or
-- nil when it names none.
function M.resolve(ref)
  if type(ref) ~= "string" then return nil end
  for _, dir in ipairs(M.TRUSTED_DIRS) do
    if ref:match("^[%a_][%w_]*$") then
      local st = sys.lstat(host.root .. "/" .. dir .. "/" .. ref .. ".lua")
      if st and st.type == "file" then return dir .. "/" .. ref .. ".lua" end
    elseif ref:sub(1, #dir + 1) == dir .. "/" and ref:sub(#dir + 2):match("^[%a_][%w_]*%.lua$") then
      return ref
    end
  end
  return nil
end

-- The table the extension `ref` returns.  `who` names the user of the reference in an
-- error ("lua/experiments/x.lua: extensions.claim").
function M.load(ref, who)
  local rel = base.need(M.resolve(ref), "%s: expected the name of an extension (a Lua file " ..
    "directly in %s of the project, e.g. \"claim\" or \"paper/lib/claim.lua\"), got %s: only " ..
    "those trusted folders hold code a study or a manifest may load", who,
    table.concat(M.TRUSTED_DIRS, "/ or ") .. "/", base.printable(tostring(ref)))
  local full = host.root .. "/" .. rel
  if loaded[full] then return loaded[full] end
  local src, err = fs.read(full)
  if not src then base.user_error("%s: %s", who, base.printable(err)) end
  local chunk, cerr = load(src, "@" .. rel, "t")
  if not chunk then base.user_error("%s: %s", who, cerr) end
  local m = chunk()
  base.need(type(m) == "table", "%s: %s returns %s, not a table", who, rel, type(m))
  loaded[full] = m
  return m
end

return M
