-- Where a record came from.  For its manifest.json: the build's git commit and whether
-- the tree was dirty, the git status of the study file that defined the run, the CPU.
-- Whether the suite vouches for it, at three levels (M.LEVELS): "committed" (its files are
-- those of git at HEAD), "made_here" (this checkout's journal, M.JOURNAL, says the suite
-- trained or copied it) or "adopted" (neither: from someone else's records tree).  The
-- journal lies outside every records tree, so a tree cannot vouch for itself; what a
-- record's manifest says of itself (resumed, copied_from) never raises its level.
local fs = require "repro.core.fs"
local host = require "repro.host"
local sys = require "repro.sys"
local base = require "repro.core.base"

local M = {}

function M.cpu_model()
  for line in io.lines("/proc/cpuinfo") do
    local m = line:match("^model name%s*:%s*(.-)%s*$")
    if m then return m end
  end
  return "unknown"
end

-- The output of `git ARGS` in the project's repository; nil when it fails.
local function git(args)
  return fs.capture("git -C " .. fs.quote(host.root) .. " " .. args)
end

function M.git_info()
  local commit = git("rev-parse HEAD") or "unknown"
  local status = git("status --porcelain --untracked-files=no -- . ':(exclude)experiments' " ..
    "':(exclude)paper' ':(exclude)plots/data'")
  return commit, status == nil and "unknown" or status ~= ""
end

-- The git status of the file at path (a study file) in the project's repository:
-- "tracked" (committed, unchanged), "modified", "untracked", "ignored", "outside the
-- repository" or "unknown" (no git).  git_dirty leaves untracked files out, so a run
-- from a study file never committed still says what defined it.
function M.file_git_status(path)
  local rel = fs.relative_to_root(path)
  if rel:sub(1, 1) == "/" then return "outside the repository" end
  local out = git("status --porcelain --ignored -- " .. fs.quote(rel))
  if out == nil then return "unknown" end
  if out:match("^%?%?") then return "untracked" end
  if out:match("^!!") then return "ignored" end
  if out ~= "" then return "modified" end
  if git("ls-files --error-unmatch -- " .. fs.quote(rel)) then return "tracked" end
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

-- The levels, most trusted first.
M.LEVELS = { "committed", "made_here", "adopted" }

-- The journal of what this checkout's suite wrote: <root>/build/provenance/, never inside
-- a records tree, so a tree from elsewhere brings no entry.  Each entry is a file written
-- atomically (no appends: fs.write_atomic is the one writer), named by the SHA-256 of an
-- absolute path:
--   checkpoints/<path hash>  every checkpoint written at that path, one line each,
--                            "<SHA-256> <step> <own|adopted>", then "at <path>": own when
--                            the run began from step 0 or from checkpoints all noted own
--   records/<path hash>      a finished record: "<files digest> trained|copied|
--                            resumed_foreign [<source>]", then "at <path>"
-- A checkpoint's entry goes when its record is finished; entries of paths that are gone
-- are removed (M.journal_prune).  `make clean` keeps it; removing build/ by hand leaves
-- the records made before then adopted until they are committed.
M.JOURNAL = "build/provenance"

local function journal_path(kind, path)
  local d = sys.realpath(path:match("^(.*)/[^/]+$") or ".")
  if not d then return nil end
  local abs = d .. "/" .. path:match("[^/]+$")
  return host.root .. "/" .. M.JOURNAL .. "/" .. kind .. "/" .. sys.sha256(abs), abs
end

local function journal_write(entry, text)
  -- a build folder that cannot be written leaves the entry out (what it would vouch for
  -- is then adopted), never fails the run
  pcall(function()
    fs.mkdir_p(entry:match("^(.*)/[^/]+$"))
    fs.write_atomic(entry, text)
  end)
end

-- Removes the entries whose path is gone, once per process.
local pruned = false
function M.journal_prune()
  if pruned then return end
  pruned = true
  for _, kind in ipairs({ "checkpoints", "records" }) do
    local dir = host.root .. "/" .. M.JOURNAL .. "/" .. kind
    for _, n in ipairs(sys.listdir(dir) or {}) do
      local text = n:match("^%x+$") and fs.read(dir .. "/" .. n, 1 << 20)
      local abs = text and text:match("\nat (/[^\n]*)\n$")
      if abs and not sys.lstat(abs) then os.remove(dir .. "/" .. n) end
    end
  end
end

-- Notes the checkpoint at ckpt (step `step`, tag "own" or "adopted") as written by this
-- suite, beside the others written there; its bytes are those of file (default ckpt: the
-- engine passes the complete temporary file it is about to rename to ckpt).
function M.note_checkpoint(ckpt, step, tag, file)
  local entry, abs = journal_path("checkpoints", ckpt)
  local sum = entry and sys.sha256_file(file or ckpt, true)
  if not sum then return end
  local lines = {}
  for l in (fs.read(entry, 1 << 20) or ""):gmatch("[^\n]+") do
    if l:match("^%x+ %d+ %a+$") then lines[#lines + 1] = l end
  end
  lines[#lines + 1] = string.format("%s %d %s", sum, step or 0, tag)
  journal_write(entry, table.concat(lines, "\n") .. "\nat " .. abs .. "\n")
end

-- Whether this suite noted writing the checkpoint at ckpt with SHA-256 sum, for the run
-- of that folder, grown only from its own checkpoints.
function M.knows_checkpoint(ckpt, sum)
  local entry = journal_path("checkpoints", ckpt)
  local text = entry and sum and fs.read(entry, 1 << 20)
  for l in (text or ""):gmatch("[^\n]+") do
    if l:match("^(%x+) %d+ own$") == sum then return true end
  end
  return false
end

function M.forget_checkpoint(ckpt)
  local entry = journal_path("checkpoints", ckpt)
  if entry then os.remove(entry) end
end

-- The digest of a record's files: sums = {file -> SHA-256} of config.json, log.csv,
-- metrics.json and tasks.csv when it has one.
function M.files_digest(sums)
  local t = {}
  for _, f in ipairs(base.sorted_keys(sums)) do t[#t + 1] = f .. " " .. tostring(sums[f]) end
  return sys.sha256(table.concat(t, "\n"))
end

-- Notes the finished record in dir with files sums: how = "trained" (from step 0, or from
-- checkpoints this suite wrote for it), "resumed_foreign" (from one it did not) or
-- "copied" (source: the immediate source, relative to the records root).
function M.note_record(dir, sums, how, source)
  local entry, abs = journal_path("records", (dir:gsub("/+$", "")))
  if not entry then return end
  journal_write(entry, string.format("%s %s%s\nat %s\n", M.files_digest(sums), how,
    source and (" " .. source) or "", abs))
end

-- What the journal says of the record in dir with files sums: how and source, or nil
-- (no entry, or one of other bytes: the record changed since).
function M.journal_of(dir, sums)
  local entry = journal_path("records", (dir:gsub("/+$", "")))
  local text = entry and fs.read(entry, 1 << 16)
  local digest, how, source = (text or ""):match("^(%x+) ([%a_]+) ?([^\n]*)\n")
  if not digest or digest ~= M.files_digest(sums) then return nil end
  return how, source ~= "" and source or nil
end

-- The files of a record git may hold.
local RECORD_FILES = { "config.json", "log.csv", "metrics.json", "manifest.json", "tasks.csv" }

-- path when git may be asked about it (no "..", no character a shell would read), else nil.
local function safe(path)
  return path and path:match("^[%w_%-%./]+$") and not path:find("..", 1, true) and path or nil
end

-- The study folders (two levels up) of record paths relative to the root, quoted for git.
local function parents_of(list)
  local parents, seen = {}, {}
  for _, c in ipairs(list) do
    local p = c:match("^(.*)/[^/]+/[^/]+$") or c
    if not seen[p] then seen[p], parents[#parents + 1] = true, fs.quote(p) end
  end
  return table.concat(parents, " ")
end

-- Whether same(f) holds for every file f of the record r.
local function all_files(r, same)
  for _, f in ipairs(r.files) do
    if not same(f) then return false end
  end
  return true
end

-- The record folders of dirs (absolute or relative paths) whose files are all those of git
-- at HEAD for that record: a set {dir -> true}.  A record is found at HEAD under its own
-- path when it lies in the project, else under experiments/<study>/<variant>/<seed> (the
-- committed records root), so a copy of committed records elsewhere holds the project's
-- bytes too.  `git ls-tree -r HEAD` gives HEAD's blob ids.  A record tracked at its own
-- path is compared by `git diff --name-only HEAD`, which rehashes only the files whose
-- stat data (size, times, inode) changed since git last hashed them, as `git status`
-- does: the committed tree's hundreds of MB of log.csv are not read on every call.  The
-- others' files are hashed (`git hash-object`).  Without git nothing is committed.
function M.committed(dirs)
  local out, recs, cands = {}, {}, {}
  for _, d in ipairs(dirs) do
    local real = sys.realpath(d)
    local in_root = real and real:sub(1, #host.root + 1) == host.root .. "/"
    local last3 = real and real:match("[^/]+/[^/]+/[^/]+$")
    local r = { dir = d, real = real, own = in_root and safe(real:sub(#host.root + 2)) or nil,
      cands = {}, files = {} }
    r.cands[#r.cands + 1] = r.own
    r.cands[#r.cands + 1] = last3 and safe("experiments/" .. last3)
    for _, f in ipairs(RECORD_FILES) do
      local st = real and sys.lstat(real .. "/" .. f)
      if st and st.type == "file" then r.files[#r.files + 1] = f end
    end
    if #r.cands > 0 and #r.files > 0 then
      recs[#recs + 1] = r
      table.move(r.cands, 1, #r.cands, #cands + 1, cands)
    end
  end
  if #recs == 0 then return out end
  local head = {}
  local tree = git("ls-tree -r HEAD -- " .. parents_of(cands))
  for sha, path in (tree or ""):gmatch("%d+ blob (%x+)\t([^\n]+)") do head[path] = sha end
  -- the records tracked at their own path: what differs from HEAD there, by git's index
  local tracked, hashed, own_paths = {}, {}, {}
  for _, r in ipairs(recs) do
    if r.own and all_files(r, function(f) return head[r.own .. "/" .. f] end) then
      tracked[#tracked + 1] = r
      own_paths[#own_paths + 1] = r.own
    else
      hashed[#hashed + 1] = r
    end
  end
  local diff = #tracked > 0 and
    git("diff --no-renames --name-only -z HEAD -- " .. parents_of(own_paths))
  if diff then
    local changed = {}
    for path in diff:gmatch("[^%z]+") do changed[path] = true end
    for _, r in ipairs(tracked) do
      if all_files(r, function(f) return not changed[r.own .. "/" .. f] end) then
        out[r.dir] = true
      end
    end
  end
  local files = {}
  for _, r in ipairs(hashed) do
    for _, f in ipairs(r.files) do files[#files + 1] = r.real .. "/" .. f end
  end
  if #files == 0 then return out end
  local list = fs.private_subdir("git") .. "/paths"
  fs.write_atomic(list, table.concat(files, "\n") .. "\n")
  local now = git("hash-object --no-filters --stdin-paths < " .. fs.quote(list))
  fs.remove_tree(list:match("^(.*)/[^/]+$"))
  local blob, i = {}, 0
  for sha in (now or ""):gmatch("%x+") do
    i = i + 1
    blob[files[i]] = sha
  end
  if i ~= #files then return out end
  for _, r in ipairs(hashed) do
    for _, c in ipairs(r.cands) do
      if all_files(r, function(f) return head[c .. "/" .. f] == blob[r.real .. "/" .. f] end) then
        out[r.dir] = true
      end
    end
  end
  return out
end

-- Why a record is adopted, as a code of M.ADOPTED_WHY, and its words.
M.ADOPTED_WHY = {
  unknown = "neither committed nor made by this checkout (no entry in " .. M.JOURNAL .. ")",
  foreign_checkpoint = "resumed from a checkpoint this checkout's suite did not record " ..
    "writing for it",
  copy_source_missing = "a copy whose source is not in the records tree",
  copy_source_differs = "a copy whose source's files differ from its own",
  copy_source_adopted = "a copy of an adopted record",
}

-- The one word for the lowest level, and its sentence: "adopted (<why>)".
M.ADOPTED = "adopted"
function M.adopted_text(why, detail)
  return string.format("%s (%s%s)", M.ADOPTED, M.ADOPTED_WHY[why] or tostring(why),
    detail and (": " .. base.printable(detail)) or "")
end

return M
