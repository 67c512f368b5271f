-- `bin/repro verify [DIR ...] [--rehash]`: every run record under each DIR (default: the
-- records root) checked by record.verify: verified, no checksum (not trusted: a failure),
-- MISMATCH (a changed or missing file, an inconsistent record, or a symbolic link in the
-- tree) or unfinished (not an error); a verified record that was copied or resumed is
-- named too, and so is one scored on task files that changed since (STALE: intact, but
-- its task scores are not the task files' any more; `bin/repro run` trains it again).
-- Checksums detect corruption, not forgery (`bin/repro audit` retrains).
-- Exit status 1 on any mismatch, missing checksum or stale record.  Nothing is written, except with
-- --rehash: a consistent record without checksums gets them (reviewed legacy records).
local host = require "repro.host"
local sys = require "repro.sys"
local record = require "repro.record"
local fs = require "repro.core.fs"
local base = require "repro.core.base"
local json = require "repro.core.json"

local M = {}

local MAX_DEPTH = 6

local user_error = base.user_error
local shown = fs.shown

-- Record directories under dir, sorted, and symbolic links met on the way (not
-- followed).
function M.records(dir, out, depth, links)
  out, depth, links = out or {}, depth or 0, links or {}
  local names = sys.listdir(dir)
  if not names then return out, links end
  local st = sys.lstat(dir .. "/config.json")
  if st and st.type ~= "dir" then
    out[#out + 1] = dir
    return out, links
  end
  if depth >= MAX_DEPTH then return out, links end
  for _, name in ipairs(names) do
    if not name:match("^%.") and not record.is_aside(name) then
      local sub = dir .. "/" .. name
      local s = sys.lstat(sub)
      if s and s.type == "dir" then
        M.records(sub, out, depth + 1, links)
      elseif s and s.type == "link" then
        links[#links + 1] = sub
      end
    end
  end
  return out, links
end

function M.main(args)
  local dirs, rehash = {}, false
  for _, a in ipairs(args) do
    if a == "--rehash" then
      rehash = true
    elseif a == "--strict" then
      -- the default now; kept so that existing command lines still work
    elseif a:match("^%-") then
      user_error("repro verify: unknown option %s (usage: bin/repro verify [DIR ...] " ..
        "[--rehash])", a)
    else
      dirs[#dirs + 1] = a
    end
  end
  if #dirs == 0 then
    local env = os.getenv("REPRO_EXPERIMENTS")
    dirs[1] = (env and env ~= "") and env or (host.root .. "/experiments")
  end
  local count = { verified = 0, ["no checksum"] = 0, mismatch = 0, unfinished = 0 }
  local adopted = { copied = 0, resumed = 0 }
  local total, rehashed, seen, stale_n = 0, 0, {}, 0
  for _, d in ipairs(dirs) do
    local st = sys.stat(d)
    if not st or st.type ~= "dir" then
      user_error("repro verify: filesystem: %s: %s", d, st and "not a directory" or
        "no such directory")
    end
    local records, links = M.records(d)
    for _, l in ipairs(links) do
      total = total + 1
      count.mismatch = count.mismatch + 1
      print(string.format("MISMATCH     %s: a symbolic link (records trees hold none; not " ..
        "followed)", base.printable(shown(l))))
    end
    for _, r in ipairs(records) do
      local real = sys.realpath(r) or r
      if not seen[real] then
        seen[real] = true
        total = total + 1
        local state, problems, kept = record.verify(r)
        if state == "no checksum" and rehash then
          local ok = record.rehash(r)
          if ok then
            rehashed = rehashed + 1
            state = "verified"
            print(string.format("rehashed     %s", base.printable(shown(r))))
          end
        end
        count[state] = count[state] + 1
        if state == "mismatch" then
          print(string.format("MISMATCH     %s: %s", base.printable(shown(r)),
            base.printable(table.concat(problems, "; "))))
        elseif state ~= "verified" then
          print(string.format("%-12s %s", state, base.printable(shown(r))))
        else
          local man = kept and kept.manifest or
            select(2, pcall(json.decode, fs.read(r .. "/manifest.json") or ""))
          local how, words = record.adopted(man)
          if how then
            adopted[how] = adopted[how] + 1
            print(string.format("%-12s %s: %s", how, base.printable(shown(r)), words))
          end
          local stale = record.stale_task_files(man)
          if #stale > 0 then
            stale_n = stale_n + 1
            print(string.format("STALE        %s: %s (`bin/repro run` trains it again)",
              base.printable(shown(r)), record.stale_text(stale)))
          end
        end
      end
    end
  end
  print(string.format("verify: %d record%s: %d verified%s, %d no checksum (not trusted: " ..
    "review, then --rehash), %d mismatch, %d unfinished", total, total == 1 and "" or "s",
    count.verified, rehashed > 0 and string.format(" (%d rehashed)", rehashed) or "",
    count["no checksum"], count.mismatch, count.unfinished) .. (stale_n > 0 and
    string.format("; of the verified, %d stale (scored on task files that changed since)",
      stale_n) or ""))
  if adopted.copied + adopted.resumed > 0 then
    print(string.format("verify: of the verified, %d copied from another study and %d " ..
      "resumed from a checkpoint found in the folder (not trained here from step 0: " ..
      "`bin/repro audit` retrains these first)", adopted.copied, adopted.resumed))
  end
  -- what the checksums prove, said every time (bin/repro audit checks more)
  print("verify: checksums detect corruption, not forgery (anyone can edit a record and " ..
    "recompute them); `bin/repro audit --sample N` retrains records and compares their bytes")
  if count.mismatch > 0 or count["no checksum"] > 0 or stale_n > 0 then return 1 end
  return 0
end

return M
