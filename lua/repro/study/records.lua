-- A study folder's record set, for the commands that start from a folder rather than a
-- loaded study (verify, audit, compare, export, eval, sample, export-model): the design
-- from the study file lua/experiments/<name>.lua (or under opts.studies), evaluated as
-- `run` does with other studies' results under the folder's records root, else from the
-- folder's summary.json (record/set.lua design), then the members, the paths not part of
-- the study and each verified member's provenance (record/set.lua).
local sys = require "repro.sys"
local host = require "repro.host"
local base = require "repro.core.base"
local set = require "repro.record.set"

local M = {}

-- The design of the study whose folder is study_dir, and its name; nil when the folder
-- belongs to no study (no valid name, or neither a study file that loads nor a summary).
-- Cached per folder.
local cache = {}
function M.design_of(study_dir, opts)
  study_dir = study_dir:gsub("/+$", "")
  local key = study_dir .. "\0" .. tostring(opts and opts.studies)
  if cache[key] ~= nil then return cache[key] or nil end
  local name = study_dir:match("([^/]+)$") or ""
  local d = false
  if base.valid_name(name) then
    local file = ((opts and opts.studies) or (host.root .. "/lua/experiments")) .. "/" ..
      name .. ".lua"
    local st = sys.lstat(file)
    if st and st.type == "file" then
      local ok, s = pcall(require("repro.study").load, file, nil,
        { out_root = study_dir:match("^(.*)/[^/]+$") or ".", allow_large = true })
      if ok and type(s) == "table" and s.name == name then d = set.design(s) or false end
    end
    if not d then d = set.summary_design(study_dir) or false end
    if d then d.name = name end
  end
  cache[key] = d
  return d or nil
end

-- fn(dir, design, name) for each study folder directly under the records root `root`
-- (hidden names and anything but a folder passed over), in listing order.
function M.each_study(root, fn)
  for _, n in ipairs(sys.listdir(root) or {}) do
    local dir = root .. "/" .. n
    local st = sys.lstat(dir)
    local d = st and st.type == "dir" and not n:match("^%.") and M.design_of(dir)
    if d then fn(dir, d, n) end
  end
end

-- The study folder a record folder dir belongs to (dir = <study>/<variant>/<seed folder>),
-- with its design, or nil.
function M.study_of_record(dir, opts)
  local study_dir = dir:gsub("/+$", ""):match("^(.*)/[^/]+/[^/]+$")
  local d = study_dir and M.design_of(study_dir, opts)
  if not d then return nil end
  return study_dir, d
end

-- The record set of the study folder study_dir with design d: {name, dir, design,
-- records = verified members {variant, seed, rel, dir, kept, provenance}, refused =
-- {dir, state, why}, outside = set.outsiders, counts = {records, adopted, outside}}.
-- opts: set.read's.
function M.read(study_dir, d, opts)
  local ok, bad = set.read(d, study_dir, opts)
  local levels = set.assess(ok, study_dir:match("^(.*)/[^/]+$") or ".", opts)
  local out = { name = d.name, dir = study_dir, design = d, records = ok, refused = bad,
    outside = set.outsiders(d, study_dir), counts = { records = #ok, adopted = 0 } }
  for _, m in ipairs(ok) do
    m.provenance = levels[m.dir]
    if m.provenance.level == "adopted" then out.counts.adopted = out.counts.adopted + 1 end
  end
  out.counts.outside = #out.outside
  return out
end

return M
