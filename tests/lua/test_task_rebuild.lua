local check = require "check"
local fs = require "repro.core.fs"
local tasks = require "repro.tasks"
local t = check.new("test_task_rebuild")
local dir = check.tmpdir()

-- The committed task files rebuild to the same bytes from the generators and the
-- host as they are now, on every corpus the project has and both suite versions: a
-- change to a generator or to the host's bounds (repro.tasks TRAIN_COUNTS_MAX once refused
-- agreement v2's 682 counted strings) cannot leave committed items that no longer build.
-- Tiny Shakespeare and the Devil's Dictionary (1.1 and 0.4 MB; the 4.1 MB KJV's
-- agreement generator alone can pass the sandbox's 20 s wall limit on a loaded machine).
for _, corpus_name in ipairs({ "tinyshakespeare", "devil" }) do
  local data = "data/" .. corpus_name .. ".txt"
  local committed = "tasks/" .. corpus_name
  if fs.exists(data) and fs.exists(committed) then
    for _, suite in ipairs({ "core", "core2" }) do
      local version = tasks.suite_version(suite)
      for _, task in ipairs(tasks.suite(suite)) do
        local out = dir .. "/rebuild-" .. corpus_name .. "-" .. suite
        local ok, r = pcall(tasks.build, data, task, { version = version, dir = out })
        local file, pool_file = tasks.files(committed, task, version)
        if not ok then
          t:ok(false, string.format("%s v%d on %s rebuilds: %s", task, version, corpus_name,
            tostring(type(r) == "table" and r.message or r)))
        elseif r.skipped then
          t:ok(fs.exists(tasks.skip_file(committed, task, version)) and not fs.exists(file),
            string.format("%s v%d on %s: skipped as committed (%s)", task, version,
              corpus_name, r.skipped))
        else
          t:ok(fs.exists(file) and fs.sha256(r.file) == fs.sha256(file) and
            fs.sha256(r.pool_file) == fs.sha256(pool_file),
            string.format("%s v%d on %s: the committed items and pool rebuild byte for byte",
              task, version, corpus_name))
        end
      end
    end
  end
end
t:ok(fs.exists("tasks/tinyshakespeare") and fs.exists("data/tinyshakespeare.txt"),
  "the committed task files of Tiny Shakespeare and its corpus are here to rebuild")

check.rmtree(dir)
t:done()
