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

-- The git facts of a run's manifest, {commit, dirty, file_git}, as `bin/repro run`'s
-- workers receive them (`run-worker --git COMMIT DIRTY FILE_GIT`): read by the runner at
-- most once every GIT_EVERY_S seconds instead of by every worker.  Four git processes per
-- run, each reading an index of thousands of committed record files, were a fifth of a
-- tiny run's CPU time (make reproduce QUICK=1); a run of minutes still gets a fresh
-- reading.  DIRTY is "true", "false" or "unknown", as git_info's second value.
M.GIT_EVERY_S = 60

function M.git_facts(study_file)
  local commit, dirty = M.git_info()
  return { commit = commit, dirty = dirty,
    file_git = study_file and M.file_git_status(study_file) or nil }
end

function M.git_args(f)
  return { "--git", f.commit, tostring(f.dirty), f.file_git or "" }
end

-- the facts from run-worker's three arguments, or nil and why
function M.parse_git_args(commit, dirty, file_git)
  local d = ({ ["true"] = true, ["false"] = false, unknown = "unknown" })[dirty or ""]
  if type(commit) ~= "string" or commit == "" or d == nil or type(file_git) ~= "string" then
    return nil, "--git needs COMMIT, DIRTY (true, false or unknown) and FILE_GIT"
  end
  return { commit = commit, dirty = d, file_git = file_git ~= "" and file_git or nil }
end

return M
