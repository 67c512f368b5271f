-- The Lua library's modules (lua/repro/<stage>/*.lua): each loads alone, in a fresh
-- bin/repro, their requires form no cycle, and none requires a module of a later stage
-- (STAGES below).  Every `require "x"`, `require 'x'`, `require("x")`
-- and `require [[x]]` of every file counts, inside functions too (a require deferred
-- into a function to dodge a cycle is still a cycle); strings and comments are skipped.
-- A require of anything but a literal name is reported, since the graph cannot see it.
-- The scanner is first checked on planted modules, so the test can fail.
local check = require "check"
local host = require "repro.host"
local sys = require "repro.sys"
local fs = require "repro.core.fs"

local t = check.new("test_modules")
local repro = os.getenv("REPRO") or "bin/repro"
if repro:sub(1, 1) ~= "/" then repro = os.getenv("PWD") .. "/" .. repro end

-- The position just after the long bracket that opens at i ("[[", "[==["), or nil.
local function long_open(src, i)
  local eq = src:match("^%[(=*)%[", i)
  if not eq then return nil end
  return i + #eq + 2, "]" .. eq .. "]"
end

-- The requires of one Lua source: a list of {name =, line =}, name nil when the
-- argument is not a literal string.
local function requires_of(src)
  local out, i, line = {}, 1, 1
  local prev = "" -- the last character of code before i (not space, comment or string)
  local function skip_to(j) -- advances to j, counting the lines skipped
    local _, n = src:sub(i, j - 1):gsub("\n", "")
    line, i = line + n, j
  end
  -- The literal string at i (quoted or long): its text and the position after it.
  local function literal(at)
    local q = src:sub(at, at)
    if q == '"' or q == "'" then
      local j = at + 1
      while j <= #src and src:sub(j, j) ~= q do
        j = j + (src:sub(j, j) == "\\" and 2 or 1)
      end
      return src:sub(at + 1, j - 1), j + 1
    end
    local body, close = long_open(src, at)
    if body then
      local e = src:find(close, body, true) or #src + 1
      return src:sub(body, e - 1), e + #close
    end
    return nil, at
  end
  while i <= #src do
    local c = src:sub(i, i)
    if src:sub(i, i + 1) == "--" then
      local body, close = long_open(src, i + 2)
      local e = body and (src:find(close, body, true) or #src) + #close or
        (src:find("\n", i, true) or #src + 1)
      skip_to(e)
    elseif c == '"' or c == "'" or long_open(src, i) then
      local _, e = literal(i)
      skip_to(e)
      prev = '"'
    elseif c:match("[%a_]") then
      local word = src:match("^[%w_]+", i)
      local before = prev
      skip_to(i + #word)
      prev = "w"
      if word == "require" and before ~= "." and before ~= ":" then
        local j = src:match("^%s*%(?%s*()", i)
        local name = literal(j)
        out[#out + 1] = { name = name, line = line }
      end
    else
      if not c:match("%s") then prev = c end
      skip_to(i + 1)
    end
  end
  return out
end

-- The Lua files under dir, recursively: a list of {path =, name =}, name the module
-- name require gives it (prefix .. "a.b" for dir/a/b.lua, prefix .. "a" for
-- dir/a/init.lua).
local function modules_of(dir, prefix)
  local out = {}
  local function walk(d, mod)
    for _, f in ipairs(assert(sys.listdir(d))) do
      local path = d .. "/" .. f
      local st = sys.stat(path)
      if st and st.type == "dir" then
        walk(path, mod .. f .. ".")
      else
        local m = f:match("^(.+)%.lua$")
        if m == "init" then
          out[#out + 1] = { path = path, name = prefix .. mod:sub(1, -2) }
        elseif m then
          out[#out + 1] = { path = path, name = prefix .. mod .. m }
        end
      end
    end
  end
  walk(dir, "")
  return out
end

-- The graph of the modules of dir: module -> list of {to =, line =, path =}, the
-- modules' names, and the non-literal requires ("file:line").
local function graph_of(dir, prefix)
  local edges, names, dynamic = {}, {}, {}
  local files = modules_of(dir, prefix)
  local known = {}
  for _, f in ipairs(files) do
    known[f.name] = true
    names[#names + 1] = f.name
  end
  for _, f in ipairs(files) do
    local fh = assert(io.open(f.path, "r"))
    local src = fh:read("a")
    fh:close()
    edges[f.name] = {}
    for _, r in ipairs(requires_of(src)) do
      if r.name == nil then
        dynamic[#dynamic + 1] = f.path .. ":" .. r.line
      elseif known[r.name] then
        table.insert(edges[f.name], { to = r.name, line = r.line,
          path = fs.relative_to_root(f.path) })
      end
    end
  end
  return edges, names, dynamic
end

-- The pipeline's stages in the order a require may point (docs/DESIGN.md, "Layout"): a
-- module of lua/repro/<stage>/ may require its own stage and the stages before it, never
-- a later one.  core is what every stage uses; record is the run-record contract, which
-- the plan reads to reuse runs and the runs write; cli is the commands, which chain the
-- stages.  This table is the rule's one statement.
local STAGES = { "core", "tasks", "record", "study", "plan", "run", "analysis", "report", "cli" }

-- The requires of edges that point to a later stage, as sorted strings, and the modules
-- that are in no stage (prefix .. stage .. "." or prefix .. stage).
local function stage_violations(edges, names, prefix, stages)
  local rank = {}
  for i, s in ipairs(stages) do rank[s] = i end
  local function stage_of(m)
    return rank[m:sub(#prefix + 1):match("^[^.]+")]
  end
  local bad, loose = {}, {}
  for _, m in ipairs(names) do
    if not stage_of(m) then loose[#loose + 1] = m end
    for _, e in ipairs(edges[m]) do
      local a, b = stage_of(m), stage_of(e.to)
      if a and b and b > a then
        bad[#bad + 1] = string.format("%s -> %s at %s:%d (stage %s before %s)", m, e.to,
          e.path, e.line, stages[a], stages[b])
      end
    end
  end
  table.sort(bad)
  table.sort(loose)
  return bad, loose
end

-- The strongly connected components of more than one module (or a module requiring
-- itself), each as a sorted list of names (Tarjan's algorithm); the list is sorted too.
local function cycles_of(edges, names)
  local index, low, on, stack, n, out = {}, {}, {}, {}, 0, {}
  local function visit(v)
    n = n + 1
    index[v], low[v] = n, n
    stack[#stack + 1], on[v] = v, true
    for _, e in ipairs(edges[v]) do
      if not index[e.to] then
        visit(e.to)
        low[v] = math.min(low[v], low[e.to])
      elseif on[e.to] then
        low[v] = math.min(low[v], index[e.to])
      end
    end
    if low[v] == index[v] then
      local comp = {}
      repeat
        local w = table.remove(stack)
        on[w] = nil
        comp[#comp + 1] = w
      until w == v
      local self_loop = false
      for _, e in ipairs(edges[v]) do self_loop = self_loop or e.to == v end
      if #comp > 1 or self_loop then
        table.sort(comp)
        out[#out + 1] = comp
      end
    end
  end
  table.sort(names)
  for _, v in ipairs(names) do if not index[v] then visit(v) end end
  table.sort(out, function(a, b) return a[1] < b[1] end)
  return out
end

-- "repro.a, repro.b (repro.a -> repro.b at lua/repro/a.lua:3; ...)": a cycle with the
-- requires that make it.
local function describe(comp, edges)
  local member, t2 = {}, {}
  for _, m in ipairs(comp) do member[m] = true end
  for _, m in ipairs(comp) do
    for _, e in ipairs(edges[m]) do
      if member[e.to] then
        t2[#t2 + 1] = string.format("%s -> %s at %s:%d", m, e.to, e.path, e.line)
      end
    end
  end
  return table.concat(comp, ", ") .. " (" .. table.concat(t2, "; ") .. ")"
end

-- The scanner on planted modules: a cycle through a require inside a function, requires
-- in comments and strings that do not count, and a require of a variable.
local dir = check.tmpdir()
check.write(dir .. "/a.lua", 'local b = require "m.b"\n-- require "m.c"\n' ..
  'local s = "require(\'m.c\')" .. [[ require "m.c" ]]\n--[==[ require("m.c")\n]==]\nreturn {}\n')
check.write(dir .. "/b.lua", "local M = {}\nfunction M.f()\n  return require('m.a').x\nend\n" ..
  "local d = require [[m.d]]\nreturn M\n")
check.write(dir .. "/c.lua", 'local n = "m.a"\nlocal x = require(n)\nlocal y = obj.require "m.a"\n' ..
  'return require("m.c")\n')
check.write(dir .. "/d.lua", "return {}\n")
local edges, names, dynamic = graph_of(dir, "m.")
local cyc = cycles_of(edges, names)
t:eq(#cyc, 2, "planted: two cycles (a <-> b, c -> c)")
t:eq(cyc[1] and describe(cyc[1], edges), string.format("m.a, m.b (m.a -> m.b at %s/a.lua:1; " ..
  "m.b -> m.a at %s/b.lua:3)", dir, dir), "planted: the a <-> b cycle, its lines")
t:eq(cyc[2] and table.concat(cyc[2], ","), "m.c", "planted: c requires itself")
t:eq(#edges["m.b"], 2, "planted: b requires a (in a function) and d (a long string)")
t:eq(#edges["m.a"], 1, "planted: the requires in a's comments and strings do not count")
t:eq(table.concat(dynamic, ","), dir .. "/c.lua:2", "planted: require(n) is reported")
check.rmtree(dir)

-- The stage rule on planted stage folders: x/init.lua is module m.x; an early stage
-- requiring a later one is reported with its line, the reverse is not, and a module
-- outside every stage is listed.
dir = check.tmpdir()
fs.mkdir_p(dir .. "/early")
fs.mkdir_p(dir .. "/late")
check.write(dir .. "/early/init.lua", 'local l = require "m.late.b"\nreturn {}\n')
check.write(dir .. "/early/a.lua", 'return {}\n')
check.write(dir .. "/late/b.lua", 'local e = require "m.early"\nlocal a = require "m.early.a"\n' ..
  'return {}\n')
check.write(dir .. "/loose.lua", 'return {}\n')
edges, names = graph_of(dir, "m.")
table.sort(names)
t:eq(table.concat(names, ","), "m.early,m.early.a,m.late.b,m.loose",
  "planted: module names from folders, init.lua the folder's")
local bad, loose = stage_violations(edges, names, "m.", { "early", "late" })
t:eq(table.concat(bad, "; "), string.format("m.early -> m.late.b at %s/early/init.lua:1 " ..
  "(stage early before late)", dir), "planted: the require of a later stage, its line")
t:eq(table.concat(loose, ","), "m.loose", "planted: a module in no stage is listed")
check.rmtree(dir)

-- The library.
local libdir = host.root .. "/lua/repro"
edges, names, dynamic = graph_of(libdir, "repro.")
t:ok(#names >= 20, "found the modules of lua/repro (" .. #names .. ")")
t:ok(#dynamic == 0, "every require names its module: not at " .. table.concat(dynamic, ", "))
for _, comp in ipairs(cycles_of(edges, names)) do
  t:ok(false, "require cycle among " .. describe(comp, edges))
end
bad, loose = stage_violations(edges, names, "repro.", STAGES)
for _, b in ipairs(bad) do t:ok(false, "a require against the stage order: " .. b) end
t:ok(#loose == 0, "every module is in a stage folder: not " .. table.concat(loose, ", "))
t:ok(#bad == 0 and #loose == 0, "every require points to the module's own stage or an " ..
  "earlier one (" .. table.concat(STAGES, " < ") .. ")")

-- The library knows no paper question: no module names a norm variant or the student's
-- hypotheses (those live in paper/lib/ as extensions).  The one exception maps the engine's
-- own embed_norm values to PyTorch's modules for the exported model (cli/model.lua).
local QUESTION = { "layernorm", "rmsnorm", "h1a", "h1b" }
local function names_question(src)
  local low = src:lower()
  for _, w in ipairs(QUESTION) do if low:find(w, 1, true) then return w end end
end
local n_files, named = 0, {}
for _, m in ipairs(names) do
  local rel = m:gsub("^repro%.", ""):gsub("%.", "/")
  local path = libdir .. "/" .. rel .. ".lua"
  if not fs.exists(path) then path = libdir .. "/" .. rel .. "/init.lua" end
  local src = fs.read(path) or ""
  n_files = n_files + 1
  local w = m ~= "repro.cli.model" and names_question(src)
  if w then named[#named + 1] = m .. " (" .. w .. ")" end
end
t:ok(n_files == #names and #named == 0, "no library module names a norm variant or a " ..
  "hypothesis: " .. table.concat(named, ", "))
t:eq(names_question("x = cfg.embed_norm == 'LayerNorm'"), "layernorm", "the check can fail")

-- No library, paper or script module reads or writes a global beyond Lua's own: a
-- misspelt local is a nil at run time that no other check may reach.  The compiler's
-- listing (luac5.4 -l -p) names every global a chunk touches (GETTABUP/SETTABUP _ENV).
local LUA_GLOBALS = {}
for name in ([[arg assert collectgarbage coroutine debug dofile error getmetatable io ipairs
  load loadfile math next os package pairs pcall print rawequal rawget rawlen rawset require
  select setmetatable string table tonumber tostring type utf8 warn xpcall _G _VERSION]]):gmatch("%S+") do
  LUA_GLOBALS[name] = true
end
local function stray_globals(path)
  local code, out, err = check.run("luac5.4 -l -p " .. path)
  if code ~= 0 then return { "luac5.4: " .. err } end
  local found, seen = {}, {}
  for name in out:gmatch("[GS]ETTABUP[^\n]-_ENV \"([^\"]+)\"") do
    if not LUA_GLOBALS[name] and not seen[name] then
      seen[name] = true
      found[#found + 1] = name
    end
  end
  table.sort(found)
  return found
end
local files = {}
for _, m in ipairs(modules_of(libdir, "repro.")) do files[#files + 1] = m.path end
for _, d in ipairs({ "/paper/lib", "/scripts" }) do
  for _, f in ipairs(assert(sys.listdir(host.root .. d))) do
    if f:match("%.lua$") then files[#files + 1] = host.root .. d .. "/" .. f end
  end
end
local strays = {}
for _, f in ipairs(files) do
  local g = stray_globals(f)
  if #g > 0 then strays[#strays + 1] = f:sub(#host.root + 2) .. ": " .. table.concat(g, ", ") end
end
t:ok(#files > 100 and #strays == 0, #files .. " library, paper and script files touch no " ..
  "global beyond Lua's own: " .. table.concat(strays, "; "))
local planted = check.tmpdir()
check.write(planted .. "/m.lua", "local M = {}\nfunction M.f(p) return { mem = mem } end\n" ..
  "ok = 1\nreturn M\n")
t:eq(table.concat(stray_globals(planted .. "/m.lua"), " "), "mem ok", "the check can fail")
check.rmtree(planted)

-- Each module alone in a fresh process.
local loader = check.tmpdir()
-- (a script outside tests/ and scripts/ runs only once the study sandbox, where require
-- is nil, proves it no study)
check.write(loader .. "/load.lua", "if require then require(arg[1]) end\n")
for _, m in ipairs(names) do
  local code, _, err = check.run(repro .. " script " .. loader .. "/load.lua " .. m)
  t:ok(code == 0 and err == "", m .. " loads alone: " .. err)
end
check.rmtree(loader)

t:done()
