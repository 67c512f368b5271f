-- Which records make up a study, and where each came from.  A study's record set is the
-- canonical seed folder (`<variant>/seed-<N>`: record.seed_of_dir) of each of its variants
-- and seeds, from the study file or its summary (M.design); a member not yet trained is
-- absent, not an error, and anything else in the folder is not part of the study
-- (M.outsiders).  Every reader of a study's records goes through M.members; M.assess gives
-- each verified member its provenance level (record/provenance.lua).
local sys = require "repro.sys"
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local base = require "repro.core.base"
local record = require "repro.record"
local provenance = require "repro.record.provenance"
local reader = require "repro.record.reader"

local M = {}

-- The folder's entries that belong to the study without being records: its summary, its
-- manifest (lua/repro/cli/run.lua), its own report, its Slurm scripts, its lock.
M.STUDY_FILES = { ["summary.json"] = true, ["manifest.json"] = true, report = true,
  slurm = true }

-- The design {name, variants = {name, ...}, seeds = {integer, ...}} of a study (a loaded
-- study: name, variants, seeds) or of a summary (study, variants, seeds); nil and why
-- when t holds none.
function M.design(t)
  if type(t) ~= "table" or type(t.variants) ~= "table" or type(t.seeds) ~= "table" then
    return nil, "no variants and seeds"
  end
  local d = { name = type(t.name) == "string" and t.name or t.study, variants = {}, seeds = {} }
  for _, v in ipairs(t.variants) do
    local name = type(v) == "table" and v.name
    if not base.valid_name(name) then return nil, "a variant is not a name" end
    d.variants[#d.variants + 1] = name
  end
  for _, x in ipairs(t.seeds) do
    local n = math.tointeger(x)
    if not n or n < 0 then return nil, "a seed is not a non-negative integer" end
    d.seeds[#d.seeds + 1] = n
  end
  return d
end

-- The design of the study whose records are in study_dir, from its summary.json; nil when
-- it has none.
function M.summary_design(study_dir)
  return (M.design(json.table_of(fs.read(study_dir .. "/summary.json"))))
end

-- The members of the design's record set: {variant, seed, rel, dir} in design order
-- (variants, then seeds), dir under study_dir.
function M.members(design, study_dir)
  local out = {}
  for _, v in ipairs(design.variants) do
    for _, seed in ipairs(design.seeds) do
      local rel = string.format("%s/seed-%d", v, seed)
      out[#out + 1] = { variant = v, seed = seed, rel = rel, dir = study_dir .. "/" .. rel }
    end
  end
  return out
end

-- The digest of the study's verified records: SHA-256 of one line per member holding a
-- verified record (<variant>/seed-<s> and the SHA-256 of its config.json, log.csv,
-- metrics.json and tasks.csv when it has one), in name order; nothing else in the folder
-- counts.  A summary carries the digest of the records it was computed from
-- (`records_sha256`, lua/repro/cli/run.lua) and the report refuses a summary whose records
-- have changed since (lua/repro/report/data.lua).  Returns the digest and the count;
-- `inputs` (a list, optional) gets each verified record's folder and config.json text.
function M.digest(study_dir, design, inputs)
  local members = M.members(design, study_dir)
  -- in name order of the variant, then of the seed folder ("d0" before "d0.1")
  table.sort(members, function(a, b)
    if a.variant ~= b.variant then return a.variant < b.variant end
    return a.rel < b.rel
  end)
  local lines = {}
  for _, m in ipairs(members) do
    local state, _, kept = record.verify(m.dir)
    if state == "verified" then
      -- the sums of the bytes verify checked (read once), not of a second read
      local sums = {}
      for _, f in ipairs(record.HASHED) do sums[#sums + 1] = kept.sha256[f] end
      sums[#sums + 1] = kept.sha256[record.TASKS_FILE]
      lines[#lines + 1] = m.rel .. " " .. table.concat(sums, " ")
      if inputs then inputs[#inputs + 1] = { dir = m.dir, config = kept.texts["config.json"] } end
    end
  end
  return sys.sha256(table.concat(lines, "\n")), #lines
end

-- Whether dir is a member of the design's record set in study_dir (dir: a path below it).
function M.is_member(design, study_dir, dir)
  local rel = dir:sub(#study_dir + 2):gsub("/+$", "")
  for _, m in ipairs(M.members(design, "")) do
    if m.rel == rel then return true end
  end
  return false
end

-- Everything in study_dir that is not part of the study: {path, why}, why a code of
-- M.OUTSIDE_WHY, in name order.  Hidden entries, the study's own files (M.STUDY_FILES)
-- and the folders a run puts aside inside a member (record.is_aside) are not listed.
function M.outsiders(design, study_dir)
  local variants, seeds = base.set_of(design.variants), base.set_of(design.seeds)
  local out = {}
  local function outside(path, why) out[#out + 1] = { path = path, why = why } end
  for _, n in ipairs(sys.listdir(study_dir) or {}) do
    local path = study_dir .. "/" .. n
    if n:match("^%.") then
      -- hidden: a lock or a temporary file
    elseif reader.is_link(path) then
      outside(path, "link")
    elseif M.STUDY_FILES[n] then
      -- the study's own
    elseif not variants[n] then
      outside(path, "no_variant")
    else
      for _, sn in ipairs(sys.listdir(path) or {}) do
        local sub, seed = path .. "/" .. sn, record.seed_of_dir(sn)
        if sn:match("^%.") or (seed and seeds[seed]) then
          -- hidden, or a member (one that is a link is refused by the record reader instead)
        elseif reader.is_link(sub) then
          outside(sub, "link")
        elseif not seed and sn:match("^seed%-") then
          outside(sub, "seed_spelling")
        else
          outside(sub, "no_seed")
        end
      end
    end
  end
  return out
end

M.OUTSIDE_WHY = {
  no_variant = "not one of its variants",
  seed_spelling = "not a seed folder's one spelling (seed-<N>, no leading zeros)",
  no_seed = "not one of its seeds",
  link = "a symbolic link (records trees hold none; not followed)",
  no_study = "no study's folder (no study file and no summary)",
}

-- The one wording of a path that is not part of a study: "<path>: not part of the study
-- <name> (<why>)".
M.NOT_PART = "not part of the study"
function M.outside_text(name, o)
  return string.format("%s: %s %s (%s)", base.printable(fs.shown(o.path)), M.NOT_PART,
    base.printable(tostring(name)), M.OUTSIDE_WHY[o.why] or o.why)
end

-- The counts of a study's records in one line, the same in every command: "<n> records
-- of the study (<a> adopted); <k> paths not part of the study".
function M.count_text(c)
  return string.format("%d record%s of the study (%d %s)%s", c.records,
    c.records == 1 and "" or "s", c.adopted, provenance.ADOPTED, (c.outside or 0) > 0 and
    string.format("; %d path%s %s", c.outside, c.outside == 1 and "" or "s", M.NOT_PART) or "")
end

-- The provenance of verified records: list of {dir, kept} (kept: record.verify's third
-- value), root the records root their `copied_from` is relative to.  Returns
-- {dir -> {level, why, detail}} (level one of provenance.LEVELS; why and detail for an
-- adopted one, provenance.adopted_text words them; copied_from for a vouched copy).
-- Never from what a record says of itself alone: git and this checkout's journal vouch;
-- a copy needs its immediate source in the tree with identical files, itself vouched for.
-- opts: record.verify's for the sources (log = false when the records were read so).
function M.assess(recs, root, opts)
  local info, committed = {}, {} -- dir -> {kept, how, source, copied, src, src_state}
  local function learn(dir, kept)
    local how, source = provenance.journal_of(dir, kept.sha256)
    info[dir] = { kept = kept, how = how, source = source }
  end
  -- git is asked in batches: the records, then the copy sources they name, and so on
  local pending = {}
  for _, r in ipairs(recs) do
    if not info[r.dir] then learn(r.dir, r.kept) end
    pending[#pending + 1] = r.dir
  end
  for _ = 1, 8 do
    if #pending == 0 then break end
    for d in pairs(provenance.committed(pending)) do committed[d] = true end
    local next_dirs = {}
    for _, d in ipairs(pending) do
      local i = info[d]
      local copied_from = (i.kept.manifest or {}).copied_from
      i.copied = i.how == "copied" and i.source or
        (committed[d] and not i.how and type(copied_from) == "string" and copied_from) or nil
      if i.copied and i.copied:match("^[%w_%-%.]+/[%w_%-%.]+/seed%-%d+$") and
          not i.copied:find("..", 1, true) then
        local src = root .. "/" .. i.copied
        local state, _, src_kept = record.verify(src, opts)
        i.src_state = state
        if state == "verified" then
          i.src = src
          if not info[src] then
            learn(src, src_kept)
            next_dirs[#next_dirs + 1] = src
          end
        end
      end
    end
    pending = next_dirs
  end
  local out, visiting = {}, {}
  local function level_of(dir, depth)
    if out[dir] then return out[dir] end
    local i = info[dir]
    local man = i.kept.manifest or {}
    local res
    if i.how == "trained" then
      res = { level = "made_here" }
    elseif i.how == "resumed_foreign" then
      res = { level = "adopted", why = "foreign_checkpoint" }
    elseif i.copied then
      local why
      if not i.src then
        -- a source that is there but fails its checks differs from the copy
        why = (i.src_state == nil or i.src_state == "unfinished") and "copy_source_missing" or
          "copy_source_differs"
      elseif provenance.files_digest(i.kept.sha256) ~=
          provenance.files_digest(info[i.src].kept.sha256) then
        why = "copy_source_differs"
      elseif visiting[i.src] or depth > 8 then
        why = "copy_source_adopted"
      else
        visiting[dir] = true
        if level_of(i.src, depth + 1).level == "adopted" then why = "copy_source_adopted" end
        visiting[dir] = nil
      end
      res = why and { level = "adopted", why = why, detail = i.copied } or
        { level = i.how and "made_here" or "committed", copied_from = i.copied }
    elseif committed[dir] then
      local step = math.tointeger(man.resumed_from_step)
      if (step and step > 0) or type(man.resumed_checkpoint_sha256) == "string" then
        -- this checkout's journal cannot vouch for a checkpoint another one wrote
        res = { level = "adopted", why = "foreign_checkpoint",
          detail = string.format("step %d", step or 0) }
      else
        res = { level = "committed" }
      end
    else
      res = { level = "adopted", why = "unknown" }
    end
    out[dir] = res
    return res
  end
  local result = {}
  for _, r in ipairs(recs) do result[r.dir] = level_of(r.dir, 0) end
  return result
end

-- The provenance words of one assessed record: "committed", "made here", or
-- provenance.adopted_text.
function M.level_text(p)
  if p.level == "adopted" then return provenance.adopted_text(p.why, p.detail) end
  local w = p.level == "committed" and "committed" or "made here"
  if p.copied_from then w = w .. ", copied from " .. base.printable(p.copied_from) end
  return w
end

-- The records of a study folder with the design d, through the one record reader: the
-- verified members {variant, seed, rel, dir, kept} and the members refused {dir, state,
-- why} (reader.check's), absent ones left out.  opts: reader.check's.
function M.read(d, study_dir, opts)
  local ok, bad = {}, {}
  for _, m in ipairs(M.members(d, study_dir)) do
    local state, why, kept = reader.check(m.dir, study_dir, opts)
    if state == "ok" then
      m.kept = kept
      ok[#ok + 1] = m
    elseif state ~= "unfinished" then
      bad[#bad + 1] = { dir = m.dir, state = state, why = why }
    end
  end
  return ok, bad
end

return M
