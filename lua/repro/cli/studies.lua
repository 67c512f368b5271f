-- `bin/repro studies`: the studies of DIR (default lua/experiments/), one name a line, each
-- after the studies it needs (study/depends.lua; flags: docs/COMMANDS.md).  Among the
-- studies ready to run the first by name goes first, so the order is the same on every
-- machine; `make reproduce` runs them in this order.  --out-root is where the listing reads
-- results (a study that has not run reads as a placeholder: study.dependencies, whose
-- evaluations share one time budget).  A dependency that is not a study of DIR, or a
-- cycle, is an error naming the studies.
local study = require "repro.study"
local sys = require "repro.sys"
local host = require "repro.host"
local base = require "repro.core.base"

local M = {}

local user_error = base.user_error

-- The study files of `dir`: a sorted list of {name, file}.  A file whose name is no
-- study name (base.valid_name: a study's name is its file's) is skipped with a warning,
-- its name through the printable filter, as the report skips such a folder.
function M.study_files(dir)
  local names, err = sys.listdir(dir)
  if not names then user_error("repro studies: filesystem: %s", err) end
  local list = {}
  for _, f in ipairs(names) do
    local name = f:match("^(.+)%.lua$")
    if name and base.valid_name(name) then
      list[#list + 1] = { name = name, file = dir .. "/" .. f }
    elseif name then
      io.stderr:write(base.printable(string.format("repro studies: warning: skipped %s/%s: " ..
        "not a study name (%s)", dir, f, base.NAME_RULE)), "\n")
    end
  end
  return list
end

-- The cycle study s starts (waits_for(x): the first study x waits for), as "a -> b -> a".
local function cycle_from(s, by_name, waits_for)
  local path, at = {}, {}
  while not at[s.name] do
    path[#path + 1] = s.name
    at[s.name] = #path
    s = by_name[waits_for(s)]
  end
  local names = { table.unpack(path, at[s.name]) }
  names[#names + 1] = s.name
  return table.concat(names, " -> ")
end

-- The studies of `dir` in dependency order: a list of {name, file, deps}.
function M.order(dir, opts)
  local files, by_name = M.study_files(dir), {}
  for _, s in ipairs(files) do
    s.deps = study.dependencies(s.file, opts)
    by_name[s.name] = s
  end
  for _, s in ipairs(files) do
    for _, d in ipairs(s.deps) do
      if not by_name[d] then
        user_error("repro studies: %s needs the study '%s', which has no file %s/%s.lua",
          s.file, d, dir, d)
      end
    end
  end
  local done, out = {}, {}
  -- the first study s needs that is not ordered yet, or nil
  local function waits_for(s)
    for _, d in ipairs(s.deps) do
      if not done[d] then return d end
    end
  end
  -- Kahn's algorithm, taking the first ready study by name each time; when none is
  -- ready, every study left waits for another left: a cycle
  while #out < #files do
    local pick, left
    for _, s in ipairs(files) do
      if not done[s.name] then
        left = left or s
        if not waits_for(s) then
          pick = s
          break
        end
      end
    end
    if not pick then
      user_error("repro studies: the dependencies of %s form a cycle: %s", dir,
        cycle_from(left, by_name, waits_for))
    end
    done[pick.name] = true
    out[#out + 1] = pick
  end
  return out
end

M.USAGE = "usage: bin/repro studies [--deps] [--dir DIR] [--out-root DIR]"

function M.main(args)
  local o = base.parse_options(args, "repro studies", M.USAGE, {
    ["--dir"] = { key = "dir", kind = "value", needs = "a directory" },
    ["--out-root"] = { key = "out_root", kind = "value", needs = "a directory" },
    ["--deps"] = { key = "deps", kind = "flag" },
    -- the default listing; accepted so that the Makefile can say what it asks for
    ["--order"] = { key = "order", kind = "flag" } })
  if o.help then return 0 end
  if o.targets[1] then
    user_error("repro studies: unknown argument %s (%s)", o.targets[1], M.USAGE)
  end
  local dir = o.dir or (host.root .. "/lua/experiments")
  for _, s in ipairs(M.order(dir, { out_root = o.out_root })) do
    if o.deps then
      io.write(s.name, ":", #s.deps > 0 and (" " .. table.concat(s.deps, " ")) or "", "\n")
    else
      io.write(s.name, "\n")
    end
  end
  return 0
end

return M
