-- `bin/repro verify [DIR ...] [--rehash] [--accept-adopted]`: the run records under each DIR
-- (default: the records root) checked by record.verify: verified, no checksum (not
-- trusted: a failure), MISMATCH (a changed or missing file, an inconsistent record, or a
-- symbolic link in the tree) or unfinished (not an error).  A study's folder is read as its
-- record set (lua/repro/study/records.lua): its members are checked, anything else in it is
-- named as not part of the study (not an error).  Records outside every study folder (a
-- `train --out` folder) are checked as they are.  Each verified record gets its provenance
-- (record/set.lua assess): committed, made here, or ADOPTED, a failure unless
-- --accept-adopted.  A record scored on task files that changed since is STALE (a
-- failure: `bin/repro run` trains it again).  Checksums detect corruption, not forgery
-- (`bin/repro audit` retrains).  Exit status 1 on any failure.  Nothing is written, except
-- with --rehash: a consistent record without checksums gets them (reviewed legacy records).
local sys = require "repro.sys"
local record = require "repro.record"
local walk = require "repro.record.verify"
local set = require "repro.record.set"
local records = require "repro.study.records"
local fs = require "repro.core.fs"
local base = require "repro.core.base"

local M = {}

local user_error = base.user_error
local function shown(p) return base.printable(fs.shown(p)) end
M.USAGE = "usage: bin/repro verify [DIR ...] [--rehash] [--accept-adopted]"

local function parse(args)
  local o = base.parse_options(args, "repro verify", M.USAGE, {
    ["--rehash"] = { key = "rehash", kind = "flag" },
    ["--accept-adopted"] = { key = "accept_adopted", kind = "flag" },
    -- the default now; kept so that existing command lines still work
    ["--strict"] = { key = "strict", kind = "flag" } })
  o.dirs = o.targets
  if #o.dirs == 0 then
    o.dirs[1] = fs.records_root()
  end
  for _, d in ipairs(o.dirs) do
    local st = sys.lstat(d)
    if not st or st.type ~= "dir" then
      user_error("repro verify: filesystem: %s: %s", base.printable(d), st and (st.type == "link"
        and "a symbolic link (records trees hold none; not followed)" or "not a directory") or
        "no such directory")
    end
  end
  return o
end

-- The checker: counts and the lines it prints.
local function checker(o)
  local c = { total = 0, verified = 0, ["no checksum"] = 0, mismatch = 0, unfinished = 0,
    rehashed = 0, stale = 0, adopted = 0, outside = 0, seen = {} }
  -- one record: its state line(s); returns its kept bytes when verified
  function c.record(r)
    local real = sys.realpath(r) or r
    if c.seen[real] then return nil end
    c.seen[real] = true
    c.total = c.total + 1
    local state, problems, kept = record.verify(r)
    if state == "no checksum" and o.rehash and record.rehash(r) then
      c.rehashed = c.rehashed + 1
      state, problems, kept = record.verify(r)
      print(string.format("rehashed     %s", shown(r)))
    end
    c[state] = c[state] + 1
    if state == "mismatch" then
      print(string.format("MISMATCH     %s: %s", shown(r),
        base.printable(table.concat(problems, "; "))))
      return nil
    elseif state ~= "verified" then
      print(string.format("%-12s %s", state, shown(r)))
      return nil
    end
    local man = kept.manifest
    local how, words = record.adopted(man)
    if how then print(string.format("%-12s %s: %s", how, shown(r), words)) end
    local stale = record.stale_task_files(man)
    if #stale > 0 then
      c.stale = c.stale + 1
      print(string.format("STALE        %s: %s (`bin/repro run` trains it again)", shown(r),
        record.stale_text(stale)))
    end
    return kept
  end
  function c.link(path)
    if c.seen["link\0" .. path] then return end
    c.seen["link\0" .. path] = true
    c.total, c.mismatch = c.total + 1, c.mismatch + 1
    print(string.format("MISMATCH     %s: a symbolic link (records trees hold none; not " ..
      "followed)", shown(path)))
  end
  function c.outsider(name, x)
    c.outside = c.outside + 1
    print(string.format("outside      %s", set.outside_text(name, x)))
  end
  function c.levels(recs, root)
    local levels = set.assess(recs, root)
    for _, r in ipairs(recs) do
      local dir, p = r.dir, levels[r.dir]
      if p.level == "adopted" then
        c.adopted = c.adopted + 1
        print(string.format("ADOPTED      %s: %s", shown(dir), set.level_text(p)))
      end
    end
  end
  return c
end

-- A study folder: its record set's members, then what is not part of it.
local function check_study(c, study_dir, d)
  local recs, n_adopted0 = {}, c.adopted
  for _, m in ipairs(set.members(d, study_dir)) do
    local st = sys.lstat(m.dir)
    if st and st.type == "link" then
      c.link(m.dir)
    elseif st then
      local link = require("repro.record.reader").link_in(m.dir, study_dir)
      if link then
        c.link(link)
      elseif sys.lstat(m.dir .. "/config.json") or sys.lstat(m.dir .. "/metrics.json") then
        local kept = c.record(m.dir)
        if kept then recs[#recs + 1] = { dir = m.dir, kept = kept } end
      end
    end
  end
  table.sort(recs, function(a, b) return a.dir < b.dir end)
  c.levels(recs, study_dir:match("^(.*)/[^/]+$") or ".")
  local outside = set.outsiders(d, study_dir)
  for _, x in ipairs(outside) do
    if x.why == "link" then
      c.link(x.path)
    else
      c.outsider(d.name, x)
    end
  end
  print(string.format("verify: %s: %s", base.printable(d.name), set.count_text({
    records = #recs, adopted = c.adopted - n_adopted0, outside = #outside })))
end

-- A folder of no study: every record under it, as it is.
local function check_loose(c, dir, skip)
  local found, links = walk.records(dir)
  for _, l in ipairs(links) do c.link(l) end
  local recs = {}
  for _, r in ipairs(found) do
    local in_study = false
    for _, s in ipairs(skip) do
      if r:sub(1, #s + 1) == s .. "/" then in_study = true end
    end
    if not in_study then
      local kept = c.record(r)
      if kept then recs[#recs + 1] = { dir = r, kept = kept } end
    end
  end
  for _, r in ipairs(recs) do
    c.levels({ r }, r.dir:match("^(.*)/[^/]+/[^/]+/[^/]+$") or ".")
  end
end

function M.main(args)
  local o = parse(args)
  if o.help then return 0 end
  local c = checker(o)
  for _, arg in ipairs(o.dirs) do
    local d0 = arg:gsub("/+$", "")
    if d0 == "" then d0 = "/" end
    local d = records.design_of(d0)
    local sdir, sd = records.study_of_record(d0)
    if d then
      check_study(c, d0, d)
    elseif sdir and (sys.lstat(d0 .. "/metrics.json") or sys.lstat(d0 .. "/config.json")) then
      -- one record folder of a study: a member, or not part of it
      if set.is_member(sd, sdir, d0) then
        local kept = c.record(d0)
        if kept then c.levels({ { dir = d0, kept = kept } }, sdir:match("^(.*)/[^/]+$") or ".") end
      else
        for _, x in ipairs(set.outsiders(sd, sdir)) do
          if x.path == d0 then c.outsider(sd.name, x) end
        end
      end
    else
      -- a records root: its study folders, then the records of no study
      local studies = {}
      records.each_study(d0, function(sub, sdesign)
        studies[#studies + 1] = sub
        check_study(c, sub, sdesign)
      end)
      check_loose(c, d0, studies)
    end
  end
  print(string.format("verify: %d record%s: %d verified%s, %d no checksum (not trusted: " ..
    "review, then --rehash), %d mismatch, %d unfinished", c.total, c.total == 1 and "" or "s",
    c.verified, c.rehashed > 0 and string.format(" (%d rehashed)", c.rehashed) or "",
    c["no checksum"], c.mismatch, c.unfinished) .. (c.stale > 0 and
    string.format("; of the verified, %d stale (scored on task files that changed since)",
      c.stale) or ""))
  if c.adopted > 0 then
    local provenance = require "repro.record.provenance"
    print(string.format("verify: of the verified, %d %s: vouched for neither by git at HEAD " ..
      "nor by this checkout's journal (%s/); `bin/repro audit` retrains them first%s", c.adopted,
      provenance.ADOPTED, provenance.JOURNAL, o.accept_adopted and
      " (accepted: --accept-adopted)" or "; --accept-adopted accepts them"))
  end
  if c.outside > 0 then
    print(string.format("verify: %d path%s %s (not read)", c.outside,
      c.outside == 1 and "" or "s", set.NOT_PART))
  end
  -- what the checksums prove, said every time (bin/repro audit checks more)
  print("verify: checksums detect corruption, not forgery (anyone can edit a record and " ..
    "recompute them); `bin/repro audit --sample N` retrains records and compares their bytes")
  if c.mismatch > 0 or c["no checksum"] > 0 or c.stale > 0 or
      (c.adopted > 0 and not o.accept_adopted) then
    return 1
  end
  return 0
end

return M
