-- Shared by test_export_model.lua and test_export_committed.lua (loaded with dofile):
--   local h = dofile("tests/lua/export_helpers.lua")(t)
--   h.export(run, out)  bin/repro export-model RUN --format safetensors --out OUT: code, out, err
--   h.numpy(out)        tests/reference/safetensors_forward.py on OUT and Tiny Shakespeare:
--                       its JSON ({windows, positions, val_loss}), or {} and a failed check
local check = require "check"
local fs = require "repro.core.fs"
local json = require "repro.core.json"
local host = require "repro.host"

return function(t)
  local repro = os.getenv("REPRO") or "bin/repro"
  local python = fs.exists("/usr/bin/python3") and "/usr/bin/python3" or "python3"
  local function sh(cmd) return check.run("cd " .. fs.quote(host.root) .. " && " .. cmd) end
  local h = { sh = sh, repro = repro }
  function h.export(from, to)
    return sh(repro .. " export-model " .. from .. " --format safetensors --out " .. to)
  end
  function h.numpy(dir)
    local c, o, e = sh(python .. " tests/reference/safetensors_forward.py " .. dir ..
      " data/tinyshakespeare.txt")
    local ok, res = pcall(json.decode, o)
    if c ~= 0 or not ok then
      t:ok(false, "NumPy forward pass (python3-numpy: scripts/deps.sh --test installs it): " .. e)
      return {}
    end
    return res
  end
  return h
end
