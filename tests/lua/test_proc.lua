-- repro.proc (lua/lproc.c), the runner's process control, on its own: a child started with
-- its stdout and stderr in files, its exit status and the signal that ended another, the
-- signals by name, a directory lock held by another process (refused without waiting,
-- seen by lock_held, free again when that process is gone); and the atomic writer whose
-- rename fails (the target is a directory), leaving the directory as it was and no
-- temporary file.  The pool and the study lock (test_kill.lua, test_plan.lua) use all of it
-- through whole runs; here each piece is checked alone, in about a second.
local check = require "check"
local fs = require "repro.core.fs"
local proc = require "repro.proc"
local sys = require "repro.sys"
local t = check.new("test_proc")
local dir = check.tmpdir()

-- a child: this binary running tests/fixtures/proc_child.lua in one of its modes
local function spawn(args, streams)
  local argv = { "repro", "script", "tests/fixtures/proc_child.lua" }
  for _, a in ipairs(args) do argv[#argv + 1] = a end
  return proc.spawn(argv, streams)
end
local function wait_for(pid)
  for _ = 1, 600 do
    local got, how, code = proc.wait(false)
    if got == pid then return how, code end
    proc.sleep(0.01)
  end
  return nil
end

t:eq(proc.wait(false), nil, "no child: wait gives nothing")

-- stdout and stderr to files, the exit status
local out, err = dir .. "/out.txt", dir .. "/err.txt"
local pid = spawn({ "talk" }, { stdout = out, stderr = err })
local how, code = wait_for(pid)
t:ok(how == "exit" and code == 3, "the child's exit status: " .. tostring(how) .. " " ..
  tostring(code))
t:eq(fs.read(out), "to stdout\n", "its stdout went to the file named")
t:eq(fs.read(err), "to stderr\n", "its stderr went to the file named")

-- a signal ends a child: wait names it
pid = spawn({ "sleep" })
t:ok(proc.kill(pid, "TERM"), "proc.kill sends TERM")
how, code = wait_for(pid)
t:ok(how == "signal" and code == 15, "the child ended by signal 15: " .. tostring(how) .. " " ..
  tostring(code))
t:raises(function() proc.kill(pid, "HUP") end, "invalid option 'HUP'",
  "a signal the runner never sends is refused by name")
t:raises(function() proc.kill(0, "TERM") end, "pid: must be > 0", "pid 0 (the process group) refused")

-- a lock another process holds
local ldir = dir .. "/locked"
fs.mkdir_p(ldir)
local marker = dir .. "/holding"
t:eq(proc.lock_held(ldir), false, "a directory nobody locks: not held")
pid = spawn({ "hold", ldir, marker })
for _ = 1, 600 do
  if fs.exists(marker) then break end
  proc.sleep(0.01)
end
t:ok(fs.exists(marker), "the other process holds the lock")
t:eq(proc.lock_held(ldir), true, "lock_held sees it")
t:eq(proc.lock(ldir, false), false, "lock without waiting: refused while it is held")
proc.kill(pid, "KILL")
how = wait_for(pid)
t:eq(how, "signal", "the holder is gone")
t:eq(proc.lock_held(ldir), false, "and its lock with it")
t:eq(proc.lock_held(dir .. "/no-such-dir"), false, "a directory that does not exist: not held")
t:eq(proc.lock(ldir, false), true, "the lock is free: taken")

-- the atomic writer's rename fails: the target is a directory with a file in it
local target = dir .. "/target"
fs.mkdir_p(target)
fs.write_atomic(target .. "/inside", "kept")
local w = assert(sys.atomic(target))
t:ok(w:write("new text"), "the temporary file is written")
local ok, msg = w:commit()
t:ok(not ok and type(msg) == "string" and msg:find("target", 1, true) ~= nil,
  "the commit over a directory fails, naming it: " .. tostring(msg))
t:eq(fs.read(target .. "/inside"), "kept", "the directory is as it was")
local left = {}
for _, name in ipairs(sys.listdir(dir)) do
  if name:find("%.tmp%.") then left[#left + 1] = name end
end
t:eq(#left, 0, "no temporary file is left: " .. table.concat(left, " "))
t:raises(function() w:commit() end, "the atomic writer is closed",
  "the failed writer is closed")

check.rmtree(dir)
t:done()
