-- The record folders under a folder, for `bin/repro verify` (lua/repro/cli/verify.lua)
-- where no study's record set applies: every folder holding a config.json, at most
-- MAX_DEPTH levels down, and the symbolic links met on the way (never followed).
local sys = require "repro.sys"
local record = require "repro.record"

local M = {}

local MAX_DEPTH = 6

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

return M
