-- bin/repro as a host: arg, errors with file:line and tracebacks, preloads, versions.
-- `bin/repro script FILE.lua` runs a file outside tests/ and scripts/ only once the study
-- sandbox proves it no study: the scripts here return at once where io is nil (the
-- sandbox), on their first line, so their line numbers stay.
local check = require "check"
local t = check.new("test_host")
local repro = os.getenv("REPRO") or "bin/repro"
if repro:sub(1, 1) ~= "/" then repro = os.getenv("PWD") .. "/" .. repro end
local dir = check.tmpdir()

t:eq(arg[0], "tests/lua/test_host.lua", "arg[0] is the script")
t:ok(type(arg[-1]) == "string", "arg[-1] is the interpreter")

check.write(dir .. "/args.lua", "if not io then return end print(#arg, arg[1], arg[2], select('#', ...))\n")
local code, out = check.run(repro .. " script " .. dir .. "/args.lua one two")
t:eq(code, 0, "script exit status")
t:eq(out, "2\tone\ttwo\t2\n", "arg table and varargs")

check.write(dir .. "/bad.lua", "local x = 1\nlocal y = = 2\n")
code, out, err = check.run("cd " .. dir .. " && " .. repro .. " script bad.lua")
t:eq(code, 1, "syntax error exits 1")
t:ok(err:find("^bad.lua:2:") and not err:find("traceback"), "syntax error is bad.lua:2: alone -- got: " .. err)

check.write(dir .. "/mymod.lua", "local M = {}\nfunction M.boom()\n  error('kaboom')\nend\nreturn M\n")
-- (mymod is found beside the script: its folder is first on package.path)
check.write(dir .. "/uses.lua", "if not io then return end\n"
  .. "local m = require 'mymod'\nm.boom()\n")
code, out, err = check.run(repro .. " script " .. dir .. "/uses.lua " .. dir)
t:eq(code, 1, "runtime error exits 1")
t:ok(err:find("mymod.lua:3: kaboom", 1, true), "runtime error names mymod.lua:3 -- got: " .. err)
t:ok(err:find("stack traceback:", 1, true) and err:find("uses.lua:3", 1, true),
  "traceback reaches the caller -- got: " .. err)

check.write(dir .. "/usererr.lua", "if not io then return end error({message = 'config: bad key'})\n")
code, out, err = check.run(repro .. " script " .. dir .. "/usererr.lua")
t:eq(code, 1, "user error exits 1")
t:eq(err, "config: bad key\n", "user error prints its message alone")

check.write(dir .. "/rand.lua", "if not io then return end return math.random()\n")
code, out, err = check.run(repro .. " script " .. dir .. "/rand.lua")
t:ok(code == 1 and err:find("use require('pcg')", 1, true), "math.random is hidden")

-- preloaded modules and the Lua library are found from any directory
check.write(dir .. "/mods.lua", "if not io then return end local p = require 'pcg'; local h = require 'repro.host'\n"
  .. "local c = require 'repro.core.fs'; print(type(p.new), h.version ~= nil, type(c.read))\n")
code, out, err = check.run("cd / && " .. repro .. " script " .. dir .. "/mods.lua")
t:eq(out, "function\ttrue\tfunction\n", "modules found from / -- " .. err)

-- `help` lists every command's usage as its own --help prints it (one text, so they agree),
-- and an unknown command's error names them all
local _, help = check.run(repro .. " --help")
local flat = help:gsub("%s+", " ")
local _, _, unknown = check.run(repro .. " bogus")
local names = unknown:match("%(commands: (.-), help%)") or ""
t:ok(names:find("^train, run, ") and names:find(", corpora, script$"), "the commands: " .. names)
for name in names:gmatch("[^, ]+") do
  if name ~= "script" then
    local _, usage = check.run(repro .. " " .. name .. " --help")
    for line in usage:gmatch("[^\n]+") do
      local l = line:gsub("^usage:", ""):gsub("%s+", " ")
      t:ok(flat:find(l, 1, true), name .. ": help lists its usage" .. l)
    end
  end
end

code, out = check.run(repro .. " --version")
t:eq(code, 0, "--version exits 0")
t:ok(out:find("^repro %d") and out:find("Lua 5.4", 1, true) and out:find("GSL %d")
  and out:find("gcc") or out:find("clang"), "--version names repro, Lua, GSL, compiler: " .. out)

local ok, cjson = pcall(require, "cjson")
t:ok(ok and cjson.encode({ 1, 2 }) == "[1,2]", "cjson (Debian lua-cjson) loads")

check.rmtree(dir)
t:done()
