-- A run's config as key=value arguments (`bin/repro train`, --set, the argv of a
-- worker process): parsed, typed by the engine's key list, and written back.
local engine = require "engine"
local base = require "repro.core.base"

local M = {}

local user_error, need = base.user_error, base.need

-- A decimal number as the command line may give it: digits with an optional sign,
-- point and exponent; no hex ("0x10"), blanks (" 5"), inf or nan.
local function decimal(v)
  return v:match("^[+-]?%d+%.?%d*$") or v:match("^[+-]?%d*%.%d+$") or
    v:match("^[+-]?%d+%.?%d*[eE][+-]?%d+$") or v:match("^[+-]?%d*%.%d+[eE][+-]?%d+$")
end

-- Each engine type's reader of the value v given to key k: the typed value, or a user
-- error naming the command who.
local READ = {
  integer = function(v, k, who)
    return need(v:match("^[+-]?%d+$") and math.tointeger(tonumber(v)),
      "%s: config: %s=%s: expected an integer (decimal digits)", who, k, v)
  end,
  number = function(v, k, who)
    local n = decimal(v) and tonumber(v)
    local infinite = v:lower():match("^[+-]?inf") or math.abs(tonumber(v) or 0) == math.huge
    need(n or not infinite, "%s: config: %s=%s: must be finite", who, k, v)
    need(n, "%s: config: %s=%s: expected a number (decimal, such as 3e-4)", who, k, v)
    need(math.abs(n) ~= math.huge, "%s: config: %s=inf: must be finite (%s overflows a double)",
      who, k, v)
    need(n ~= 0 or not v:match("^[+-]?([%d.]*)"):match("[1-9]"),
      "%s: config: %s=%s: too small for a double (it would read 0)", who, k, v)
    return n + 0.0
  end,
  boolean = function(v, k, who)
    need(v == "true" or v == "false", "%s: config: %s=%s: expected true or false", who, k, v)
    return v == "true"
  end,
  string = function(v, k, who)
    local c = base.control_char(v)
    need(not c, "%s: config: %s: holds a control character (%s)", who, k, c)
    return v
  end,
}

-- "key=value" strings into a config table, typed by the engine's key list; a key given
-- twice is refused.  who: the command, first in every message.
function M.parse_overrides(list, who)
  local types = {}
  for _, k in ipairs(engine.keys()) do types[k.name] = k.type end
  local cfg, given = {}, {}
  for _, a in ipairs(list) do
    local k, v = a:match("^([%w_]+)=(.*)$")
    need(k, "%s: config: expected key=value, got '%s'", who, a)
    if not types[k] then
      user_error("%s: config: unknown config key '%s'%s", who, k, base.suggest(k, types))
    end
    need(not given[k], "%s: config: %s is given twice (%s and %s)", who, k, given[k], a)
    given[k] = a
    cfg[k] = READ[types[k]](v, k, who)
  end
  return cfg
end

local ARG_FORMAT = { integer = "%s=%d", number = "%s=%.17g" }

-- key=value arguments that M.parse_overrides turns back into cfg exactly (floats with 17
-- significant digits); threads is left out.
function M.args(cfg)
  local out = {}
  for _, k in ipairs(engine.keys()) do
    local v = cfg[k.name]
    if k.name ~= "threads" and v ~= nil then
      out[#out + 1] = string.format(ARG_FORMAT[k.type] or "%s=%s", k.name, v)
    end
  end
  return out
end

return M
