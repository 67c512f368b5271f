-- The lowest layer of the Lua library: what every other module may need and none
-- defines again.  Requires nothing.
local M = {}

-- A user error (bad flag, bad config, bad study file): a table with a `message`, which
-- bin/repro (lua/repro.c) prints alone, without a traceback; any other error is a bug.
function M.user_error(fmt, ...)
  error({ message = string.format(fmt, ...) }, 0)
end

-- A number that is neither NaN nor infinite (false for anything that is not a number).
function M.finite(x)
  return type(x) == "number" and x == x and x ~= math.huge and x ~= -math.huge
end

return M
