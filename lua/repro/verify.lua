-- `bin/repro verify [DIR ...] [--strict]`: every run record under each DIR (default: the
-- experiments root, $REPRO_EXPERIMENTS or <root>/experiments) checked by record.verify:
--
--   verified     manifest.json's SHA-256 of config.json, log.csv and metrics.json match
--   no checksum  written before records carried checksums (consistent, but unproven)
--   MISMATCH     a file changed, is missing, or the record is inconsistent
--   unfinished   no metrics.json: training, stopped or killed (not an error)
--
-- One line per record that is not verified, then the counts.  Exit status 1 when any
-- record mismatches (with --strict, also when any has no checksum); nothing is written.
-- A record is a directory holding config.json; DIR/corrupt-*/ (records put aside by a
-- run) are skipped.
local host = require "repro.host"
local sys = require "repro.sys"
local record = require "repro.record"
local fs = require "repro.fs"
local base = require "repro.base"

local M = {}

local MAX_DEPTH = 6

local user_error = base.user_error
local shown = fs.shown

-- Record directories under dir, sorted.
function M.records(dir, out, depth)
  out, depth = out or {}, depth or 0
  local names = sys.listdir(dir)
  if not names then return out end
  local st = sys.stat(dir .. "/config.json")
  if st and st.type == "file" then
    out[#out + 1] = dir
    return out
  end
  if depth >= MAX_DEPTH then return out end
  for _, name in ipairs(names) do
    if not name:match("^%.") and not name:match("^corrupt%-") then
      local sub = dir .. "/" .. name
      local s = sys.stat(sub)
      if s and s.type == "dir" then M.records(sub, out, depth + 1) end
    end
  end
  return out
end

function M.main(args)
  local dirs, strict = {}, false
  for _, a in ipairs(args) do
    if a == "--strict" then
      strict = true
    elseif a:match("^%-") then
      user_error("repro verify: unknown option %s (usage: bin/repro verify [DIR ...] " ..
        "[--strict])", a)
    else
      dirs[#dirs + 1] = a
    end
  end
  if #dirs == 0 then
    local env = os.getenv("REPRO_EXPERIMENTS")
    dirs[1] = (env and env ~= "") and env or (host.root .. "/experiments")
  end
  local count = { verified = 0, ["no checksum"] = 0, mismatch = 0, unfinished = 0 }
  local total = 0
  for _, d in ipairs(dirs) do
    local st = sys.stat(d)
    if not st or st.type ~= "dir" then
      user_error("repro verify: filesystem: %s: %s", d, st and "not a directory" or
        "no such directory")
    end
    for _, r in ipairs(M.records(d)) do
      total = total + 1
      local state, problems = record.verify(r)
      count[state] = count[state] + 1
      if state == "mismatch" then
        print(string.format("MISMATCH     %s: %s", shown(r), table.concat(problems, "; ")))
      elseif state ~= "verified" then
        print(string.format("%-12s %s", state, shown(r)))
      end
    end
  end
  print(string.format("verify: %d record%s: %d verified, %d no checksum (written before " ..
    "records carried checksums), %d mismatch, %d unfinished", total, total == 1 and "" or "s",
    count.verified, count["no checksum"], count.mismatch, count.unfinished))
  if count.mismatch > 0 or (strict and count["no checksum"] > 0) then return 1 end
  return 0
end

return M
