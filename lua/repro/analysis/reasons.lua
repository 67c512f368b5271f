-- Why a statistic is undefined, in words: the C statistics give codes and numbers only
-- (stats.paired's `flags` and `bca_reason` with its n, sd and t; stats.tost's
-- `reason_code` with its n and test), and this module words them, once, for the
-- summary's `reason` fields, its notes and the terminal.  The paper words the same codes
-- its own way (lua/repro/report/tex_prose.lua, degenerate_note).
local stats = require "stats"

local M = {}

local function plural(n) return n == 1 and "" or "s" end

-- Why the BCa interval is undefined, by stats.paired's bca_reason.
M.BCA = {
  small_n = "n < 2",
  equal_resamples = "every resample mean is equal",
  z0_infinite = "the observed mean lies outside the resample means, so z0 is infinite",
  jackknife_equal = "the jackknife means are all equal, so the acceleration is undefined",
  acceleration = "1 - a (z0 + z) <= 0: the acceleration is too large for the level",
}

-- The reason of a degenerate stats.paired result r (nil when it is not degenerate): each
-- flag's words with its numbers, in the order the statistics meet them.
function M.paired(r)
  if not r.degenerate then return nil end
  local flags, parts = r.flags or {}, {}
  if flags.small_n then
    parts[#parts + 1] = string.format("n = %d pair%s: sd, t, bootstrap intervals, effect " ..
      "sizes and power are undefined", r.n, plural(r.n))
  end
  if flags.constant then
    parts[#parts + 1] = string.format("all %d differences are equal (sd = %g): t, p_t, " ..
      "ci_t, ci_bca, d_z, g_z, ci_d_z, ci_g_z and mde are undefined", r.n, r.sd)
  end
  if flags.nct_range then
    parts[#parts + 1] = string.format("ci_d_z and ci_g_z undefined: t = %g puts a " ..
      "noncentral-t bound beyond |ncp| = %g", r.t, stats.NCT_MAX_NCP)
  end
  if flags.bca_undefined then
    parts[#parts + 1] = "ci_bca undefined: " .. (M.BCA[r.bca_reason] or r.bca_reason)
  end
  return table.concat(parts, "; ")
end

-- The reason of an undefined stats.tost result t (nil when it is defined).
function M.tost(t)
  if not t.degenerate then return nil end
  if t.reason_code == "constant" then
    return string.format("all %d difference%s are equal: the t-test TOST is undefined", t.n,
      plural(t.n))
  end
  if t.test == "t" then
    return string.format("n = %d pair%s: the t-test TOST needs n >= 2", t.n, plural(t.n))
  end
  return string.format("n = %d pair%s: the sign-flip TOST needs n >= 1", t.n, plural(t.n))
end

return M
