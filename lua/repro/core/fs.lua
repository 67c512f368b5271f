-- Files: the one atomic writer (an exclusive temporary file, then rename), the one safe
-- reader (M.read), directories, checksums, and paths as messages show them.
-- Errors are user errors ({message=}) prefixed "filesystem:", naming the path and the
-- system's reason (a read-only directory, a full disk, a file where a directory goes).
local host = require "repro.host"
local sys = require "repro.sys"
local M = {}

local function fail(fmt, ...)
  error({ message = "filesystem: " .. string.format(fmt, ...) }, 0)
end

-- The value a system call returns, or the failure naming its error.
local function checked(value, err)
  if not value then fail("%s", err) end
  return value
end

function M.quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

-- The records root: given (a non-empty path), else $REPRO_EXPERIMENTS, else <project
-- root>/experiments.
function M.records_root(given)
  local env = os.getenv("REPRO_EXPERIMENTS")
  if given and given ~= "" then return given end
  return env and env ~= "" and env or (host.root .. "/experiments")
end

-- The largest file the host reads (records, summaries, manifests): a log.csv of a long
-- run is under 1 MB, so 64 MiB is far above any real file and far below harm.
M.READ_MAX_BYTES = 64 * 1024 * 1024

-- Why path may not be read or loaded, or nil when it may: the one path check every
-- reader uses (M.read, M.sha256, extensions, study files, records).  A path holding a
-- ".." component is refused; then, component by component, every prefix of the absolute
-- path is lstat'ed and a symbolic link anywhere (a linked directory in the middle as
-- well as a linked file at the end) is refused.  Only the components below the deepest
-- of the anchors (the project root and the working directory: places the user chose)
-- are checked; a path under neither is checked from "/".  With top (a records root), a
-- path under it is checked from top itself down, wherever the working directory is.  A
-- component that does not exist ends the walk: nothing below it can be followed.
function M.path_problem(path, top)
  if type(path) ~= "string" or path == "" then return "an empty path" end
  if ("/" .. path .. "/"):find("/%.%./") then
    return path .. " holds a '..' component (refused: paths do not climb out)"
  end
  local abs = M.absolute(path):gsub("/+", "/")
  local start = ""
  local anchors = { host.root, os.getenv("PWD") }
  local ta = top and M.absolute(top):gsub("/+", "/"):gsub("/+$", "")
  if ta and (abs == ta or abs:sub(1, #ta + 1) == ta .. "/") then
    anchors = { ta:match("^(.*)/[^/]+$") }
  end
  for _, anchor in ipairs(anchors) do
    anchor = anchor:gsub("/+$", "")
    if #anchor > #start and abs:sub(1, #anchor + 1) == anchor .. "/" then
      start = anchor
    end
  end
  local prefix = start
  for comp in abs:sub(#start + 2):gmatch("[^/]+") do
    if comp ~= "." then
      prefix = prefix .. "/" .. comp
      local st = sys.lstat(prefix)
      if not st then return nil end
      if st.type == "link" then
        return string.format("%s: %s is a symbolic link (refused: no component of a path " ..
          "the suite reads may be a link)", path, prefix)
      end
    end
  end
  return nil
end

-- Refuses (a user error "filesystem: ...") a path M.path_problem refuses; what names it.
function M.check_path(path, what, top)
  local why = M.path_problem(path, top)
  if why then fail("%s%s", what and (what .. ": ") or "", why) end
  return path
end

-- The text of path, or nil and why: only a path M.path_problem accepts, naming a regular
-- file that is not a symbolic link and holds at most max_bytes (default
-- M.READ_MAX_BYTES); a FIFO, a device or a link to /dev/zero is refused at once
-- (lua/lsys.c, sys.read_file).
function M.read(path, max_bytes)
  local why = M.path_problem(path)
  if why then return nil, why end
  return sys.read_file(path, max_bytes or M.READ_MAX_BYTES)
end

-- Refuses (a user error naming it) a path inside a records tree that is a symbolic
-- link: a run or study directory that points elsewhere would have files outside the
-- tree read, overwritten or deleted.  A path that does not exist passes.
function M.no_link(path, what)
  local st = sys.lstat(path)
  if st and st.type == "link" then
    fail("%s %s is a symbolic link: refused (records trees hold no links; remove it)",
      what or "directory", path)
  end
end

-- True when path exists (a file, a directory or anything else).
function M.exists(path)
  return sys.stat(path) ~= nil
end

-- The one writer of every file under a records tree, the paper or the build
-- (engine/atomicfile.h through sys.atomic; the engine's tensor writer is the same C):
-- text goes to a temporary file created exclusively (O_CREAT|O_EXCL|O_NOFOLLOW) beside
-- path under an unguessable name (PATH.tmp.<pid>.<16 random hex digits>), which is then
-- renamed over path.  A planted link at any temporary name is never written through, a
-- folder that is a link is refused, a reader never sees a half-written file, and a killed
-- writer's leftover is removed by M.remove_stale_tmp on the next run.
function M.write_atomic(path, text)
  local w = M.atomic(path)
  local ok, err = w:write(text)
  if not ok then
    w:abort()
    fail("%s", err)
  end
  checked(w:commit())
end

-- Why M.write_atomic cannot write a file at path, checked before any work: it is a
-- directory, a link or no regular file, or its folder is not a directory; nil when it can
-- be written (a missing file in an existing folder, or a regular file).
function M.out_file_problem(path)
  local st = sys.lstat(path)
  if st and st.type ~= "file" then
    return ({ dir = "a directory", link = "a symbolic link" })[st.type] or
      "not a regular file"
  end
  local parent = path:match("^(.*)/[^/]*$")
  if parent == nil then return nil end
  local pst = sys.lstat(parent == "" and "/" or parent)
  if not pst then return "its folder does not exist" end
  if pst.type ~= "dir" then return "its folder is not a directory" end
  return nil
end

-- Why path cannot be a folder to write into, checked before any work: it, or the
-- nearest of its ancestors that exists, is something other than a directory (a file, a
-- symbolic link, a device); nil when it can (an existing directory, or one that mkdir_p
-- can make).  Returns why and the path that is in the way.
function M.out_dir_problem(path)
  local at = path:gsub("/+$", "")
  while at ~= "" do
    local st = sys.lstat(at)
    if st then
      if st.type == "dir" then return nil end
      return ({ link = "a symbolic link", file = "a file" })[st.type] or
        "a device, pipe or socket", at
    end
    at = at:match("^(.*)/[^/]*$") or ""
  end
  return nil
end

-- An atomic writer for path that is written in parts: w:write(text), then w:commit()
-- (true, or nil and a message; the temporary file removed on failure) or w:abort();
-- one the program drops is aborted when collected.  Refusals as M.write_atomic.
function M.atomic(path)
  return checked(sys.atomic(path))
end

-- Whether name is a temporary name of the atomic writer (NAME.tmp.<pid>.<16 hex>, or
-- NAME.tmp.<pid> of older versions and killed engine writers), and its pid.
function M.temp_pid(name)
  local pid = name:match("%.tmp%.(%d+)%.%x+$")
  if pid and #name:match("%.(%x+)$") == 16 then return tonumber(pid) end
  return tonumber(name:match("%.tmp%.(%d+)$"))
end

function M.mkdir_p(path)
  checked(sys.mkdir_p(path))
end

-- Removes every temporary file of the atomic writer in dir (M.temp_pid: a killed
-- writer's leftovers, here or the engine's checkpoint writer): regular files, and
-- symbolic links of such a name too (a link is removed itself, never followed: one
-- planted there is no writer's and must not stay for a later writer to meet), only in a
-- dir that is not itself a link.  Call it only while holding the directory's lock, or
-- when no other process can be writing there.  Returns the names removed.
function M.remove_stale_tmp(dir)
  local removed = {}
  local dst = sys.lstat(dir)
  if not dst or dst.type ~= "dir" then return removed end
  for _, name in ipairs(sys.listdir(dir) or {}) do
    local st = M.temp_pid(name) and sys.lstat(dir .. "/" .. name)
    if st and (st.type == "file" or st.type == "link") then
      if os.remove(dir .. "/" .. name) then removed[#removed + 1] = name end
    end
  end
  return removed
end

-- Removes path and, for a directory, everything under it; a symbolic link is removed
-- itself, never followed.  True when it is gone.
function M.remove_tree(path)
  local st = sys.lstat(path)
  if not st then return true end
  if st.type == "dir" then
    for _, name in ipairs(sys.listdir(path) or {}) do M.remove_tree(path .. "/" .. name) end
    return sys.rmdir(path) ~= nil
  end
  return os.remove(path) ~= nil
end

-- The process's private temporary folder, made on first use: every temporary file the
-- suite makes outside a records tree (gnuplot's data, output and error text, a run's
-- progress files) goes in it, never in the system folder itself.  It is
-- $TMPDIR/repro-<uid>/<pid>.XXXXXX (mkdtemp, mode 0700) inside a per-user folder of mode
-- 0700 that must be this user's and no symbolic link (else refused); the folders of
-- processes that are gone (killed, say) are removed when the next process makes its
-- own, and a process removes its own at exit (when its Lua state closes).
local private
local private_owner = setmetatable({}, { __gc = function(t)
  if t.dir and t.pid == host.pid() then M.remove_tree(t.dir) end
end })
function M.private_dir()
  if private then return private end
  local tmp = os.getenv("TMPDIR")
  if not tmp or tmp:sub(1, 1) ~= "/" then tmp = "/tmp" end
  local top = tmp:gsub("/+$", "") .. "/repro-" .. sys.euid()
  sys.mkdir(top, tonumber("700", 8))
  local st = sys.lstat(top)
  if not st or st.type ~= "dir" or not st.mine or st.mode ~= tonumber("700", 8) then
    fail("%s is not a private folder of this user (a directory owned by you, mode 0700, " ..
      "not a symbolic link): refused as the place for temporary files", top)
  end
  for _, name in ipairs(sys.listdir(top) or {}) do
    local pid = tonumber(name:match("^(%d+)%.%w+$"))
    if pid and pid ~= host.pid() and not sys.pid_alive(pid) then M.remove_tree(top .. "/" .. name) end
  end
  local dir = checked(sys.mkdtemp(string.format("%s/%d.XXXXXX", top, host.pid())))
  private, private_owner.dir, private_owner.pid = dir, dir, host.pid()
  return private
end

-- A new empty folder in the private folder (mode 0700), e.g. for one figure.
function M.private_subdir(what)
  return checked(sys.mkdtemp(M.private_dir() .. "/" .. what .. ".XXXXXX"))
end

-- Output of a shell command (nil if it failed).
function M.capture(cmd)
  local p = io.popen(cmd .. " 2>/dev/null", "r")
  if not p then return nil end
  local out = p:read("a")
  return p:close() and out:gsub("%s+$", "") or nil
end

-- Paths shown relative to the working directory when they are under it.
function M.shown(path)
  local cwd = os.getenv("PWD")
  if cwd and path:sub(1, #cwd + 1) == cwd .. "/" then return path:sub(#cwd + 2) end
  return path
end

-- path made absolute from the working directory ("/./" folded).
function M.absolute(path)
  if path:sub(1, 1) == "/" then return path end
  return (((os.getenv("PWD") or ".") .. "/" .. path):gsub("/%./", "/"))
end

-- path relative to the project root when it is under it (as manifests name files).
function M.relative_to_root(path)
  local abs = path:sub(1, 1) == "/" and path or ((os.getenv("PWD") or ".") .. "/" .. path)
  abs = abs:gsub("/%./", "/")
  if abs:sub(1, #host.root + 1) == host.root .. "/" then return abs:sub(#host.root + 2) end
  return path
end

-- SHA-256 of a file (nil when it cannot be read) or of a string.
function M.sha256(path)
  if M.path_problem(path) then return nil end
  return (sys.sha256_file(path, true))
end

M.sha256_text = sys.sha256

return M
