-- Where a record came from, for its manifest.json: the build's git commit and whether
-- the tree was dirty, the git status of the study file that defined the run, the CPU.
local fs = require "repro.core.fs"
local host = require "repro.host"

local M = {}

function M.cpu_model()
  for line in io.lines("/proc/cpuinfo") do
    local m = line:match("^model name%s*:%s*(.-)%s*$")
    if m then return m end
  end
  return "unknown"
end

function M.git_info()
  local root = fs.quote(host.root)
  local commit = fs.capture("git -C " .. root .. " rev-parse HEAD") or "unknown"
  local status = fs.capture("git -C " .. root .. " status --porcelain --untracked-files=no -- . "
    .. "':(exclude)experiments' ':(exclude)paper' ':(exclude)plots/data'")
  return commit, status == nil and "unknown" or status ~= ""
end

-- The git status of the file at path (a study file) in the project's repository:
-- "tracked" (committed, unchanged), "modified", "untracked", "ignored", "outside the
-- repository" or "unknown" (no git).  git_dirty leaves untracked files out, so a run
-- from a study file never committed still says what defined it.
function M.file_git_status(path)
  local rel = fs.relative_to_root(path)
  if rel:sub(1, 1) == "/" then return "outside the repository" end
  local root = fs.quote(host.root)
  local out = fs.capture("git -C " .. root .. " status --porcelain --ignored -- " .. fs.quote(rel))
  if out == nil then return "unknown" end
  if out:match("^%?%?") then return "untracked" end
  if out:match("^!!") then return "ignored" end
  if out ~= "" then return "modified" end
  if fs.capture("git -C " .. root .. " ls-files --error-unmatch -- " .. fs.quote(rel)) then
    return "tracked"
  end
  return "unknown"
end

return M
