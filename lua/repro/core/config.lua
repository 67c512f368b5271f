-- A run's config as key=value arguments (`bin/repro train`, --set, the argv of a
-- worker process): parsed, typed by the engine's key list, and written back.
local engine = require "engine"
local base = require "repro.core.base"

local M = {}

local user_error = base.user_error

-- A decimal number as the command line may give it: digits with an optional sign,
-- point and exponent; no hex ("0x10"), blanks (" 5"), inf or nan.
local function decimal(v)
  return v:match("^[+-]?%d+%.?%d*$") or v:match("^[+-]?%d*%.%d+$") or
    v:match("^[+-]?%d+%.?%d*[eE][+-]?%d+$") or v:match("^[+-]?%d*%.%d+[eE][+-]?%d+$")
end

-- "key=value" strings into a config table, typed by the engine's key list; a key given
-- twice is refused.  who: the command, first in every message.
function M.parse_overrides(list, who)
  local types = {}
  for _, k in ipairs(engine.keys()) do types[k.name] = k.type end
  local cfg, given = {}, {}
  for _, a in ipairs(list) do
    local k, v = a:match("^([%w_]+)=(.*)$")
    if not k then user_error("%s: config: expected key=value, got '%s'", who, a) end
    local ty = types[k]
    if not ty then
      user_error("%s: config: unknown config key '%s'%s", who, k, base.suggest(k, types))
    end
    if given[k] then
      user_error("%s: config: %s is given twice (%s and %s)", who, k, given[k], a)
    end
    given[k] = a
    if ty == "integer" then
      local n = v:match("^[+-]?%d+$") and math.tointeger(tonumber(v))
      if not n then
        user_error("%s: config: %s=%s: expected an integer (decimal digits)", who, k, v)
      end
      cfg[k] = n
    elseif ty == "number" then
      local n = decimal(v) and tonumber(v)
      if not n and (v:lower():match("^[+-]?inf") or (tonumber(v) and math.abs(tonumber(v)) ==
          math.huge)) then
        user_error("%s: config: %s=%s: must be finite", who, k, v)
      end
      if not n then
        user_error("%s: config: %s=%s: expected a number (decimal, such as 3e-4)", who, k, v)
      end
      if n == math.huge or n == -math.huge then
        user_error("%s: config: %s=inf: must be finite (%s overflows a double)", who, k, v)
      end
      if n == 0 and v:match("^[+-]?([%d.]*)"):match("[1-9]") then
        user_error("%s: config: %s=%s: too small for a double (it would read 0)", who, k, v)
      end
      cfg[k] = n + 0.0
    elseif ty == "boolean" then
      if v ~= "true" and v ~= "false" then
        user_error("%s: config: %s=%s: expected true or false", who, k, v)
      end
      cfg[k] = v == "true"
    else
      local c = base.control_char(v)
      if c then user_error("%s: config: %s: holds a control character (%s)", who, k, c) end
      cfg[k] = v
    end
  end
  return cfg
end

-- key=value arguments that M.parse_overrides turns back into cfg exactly (floats with 17
-- significant digits); threads is left out.
function M.args(cfg)
  local out = {}
  for _, k in ipairs(engine.keys()) do
    local v = cfg[k.name]
    if k.name ~= "threads" and v ~= nil then
      if k.type == "integer" then
        out[#out + 1] = string.format("%s=%d", k.name, v)
      elseif k.type == "number" then
        out[#out + 1] = string.format("%s=%.17g", k.name, v)
      else
        out[#out + 1] = k.name .. "=" .. tostring(v)
      end
    end
  end
  return out
end

return M
