-- What a new summary.json would change in an existing one, in words: the
-- verdicts and numbers that change, and why when the summaries and the records can tell.
-- `bin/repro run` and `analyze` (lua/repro/cli/run.lua) print it and write a summary that
-- differs from the one on disk only with --update.
--   changes.describe(old_text, new_text, opts) -> {lines}, or nil when the two texts are
--     the same bytes.  opts.dir (the study directory, whose records' manifests are read),
--     opts.old_manifest (the text of the study's manifest.json) and opts.commit (this
--     checkout's commit).
local json = require "repro.core.json"
local set = require "repro.record.set"
local fs = require "repro.core.fs"
local host = require "repro.host"
local base = require "repro.core.base"

local M = {}

-- How many numbers of a change are listed before "and N more".
M.MAX_LINES = 12

local function num(x)
  if type(x) ~= "number" then return tostring(x) end
  if base.whole(x) then return string.format("%d", x) end
  return string.format("%.4g", x)
end

local function interval(ci)
  if type(ci) ~= "table" then return "none" end
  return "[" .. num(ci[1]) .. ", " .. num(ci[2]) .. "]"
end

local function plural(n, word, words)
  return string.format("%d %s", n, n == 1 and word or (words or word .. "s"))
end

-- Leaves of a decoded JSON value that differ between a and b (counted).
local function count_diff(a, b)
  if type(a) ~= "table" or type(b) ~= "table" then
    if a == b then return 0 end
    if type(a) == "number" and type(b) == "number" and a ~= a and b ~= b then return 0 end
    return 1
  end
  local n = 0
  for k, v in pairs(a) do n = n + count_diff(v, b[k]) end
  for k, v in pairs(b) do
    if a[k] == nil then n = n + count_diff(nil, v) end
  end
  return n
end

local function same(a, b) return count_diff(a, b) == 0 end

-- The keys of tables a and b, sorted.
local function keys_of(a, b)
  local keys = {}
  for k in pairs(a) do keys[#keys + 1] = k end
  for k in pairs(b) do if a[k] == nil then keys[#keys + 1] = k end end
  table.sort(keys)
  return keys
end

local function key_of(e)
  if type(e) ~= "table" then return nil end
  -- a side is a name, a pair of names, or (an interaction over several set-ups) a list
  -- of pairs
  local function side(x)
    if type(x) == "table" then
      local t = {}
      for _, v in ipairs(x) do t[#t + 1] = side(v) end
      return "(" .. table.concat(t, type(x[1]) == "table" and ", " or " - ") .. ")"
    end
    return tostring(x)
  end
  if e.treatment or e.baseline then
    return string.format("%s vs %s on %s", side(e.treatment), side(e.baseline),
      tostring(e.metric))
  end
  if e.a or e.b then
    return string.format("interaction %s minus %s on %s", side(e.a), side(e.b),
      tostring(e.metric))
  end
  return nil
end

-- {key -> entry} and the keys in order, of a list of entries.
local function index(list)
  local by, order = {}, {}
  if type(list) ~= "table" then return by, order end
  for _, e in ipairs(list) do
    local k = key_of(e)
    if k and not by[k] then
      by[k] = e
      order[#order + 1] = k
    end
  end
  return by, order
end

local function verdict_lines(old, new, out)
  local ob, oo = index(old)
  local nb, no = index(new)
  for _, k in ipairs(oo) do
    local o, n = ob[k], nb[k]
    if not n then
      out[#out + 1] = string.format("%s%s: no longer in the summary", k,
        o.verdict and (" (" .. tostring(o.verdict) .. ")") or "")
    elseif o.verdict ~= n.verdict then
      out[#out + 1] = string.format("verdict of %s: %s -> %s", k, tostring(o.verdict),
        tostring(n.verdict))
    end
  end
  for _, k in ipairs(no) do
    if not ob[k] then
      out[#out + 1] = string.format("%s: new%s", k,
        nb[k].verdict and (", verdict " .. tostring(nb[k].verdict)) or "")
    end
  end
end

-- An entry without its verdict and the words about it (said by verdict_lines).
local WORDS = { verdict = true, reason = true, sentence = true, reason_code = true }
local function without_words(e)
  local t = {}
  for k, v in pairs(e) do if not WORDS[k] then t[k] = v end end
  return t
end

-- The numbers of an entry a change lists by name: key, words, how to say a value.
local NUMBERS = { { "mean", "mean difference" }, { "ci_decision", "decision interval", interval },
  { "p_holm", "Holm-adjusted p" }, { "n", "pairs" } }

-- The primary metric's comparisons (and interactions) whose numbers change.
local function number_lines(old, new, primary, what, out)
  local ob, nb, no = index(old), index(new)
  local others = 0
  for _, k in ipairs(no) do
    local o, n = ob[k], nb[k]
    if o and not same(without_words(o), without_words(n)) then
      if n.metric == primary then
        local parts = {}
        for _, f in ipairs(NUMBERS) do
          local key, say = f[1], f[3] or num
          if not same(o[key], n[key]) then
            parts[#parts + 1] = string.format("%s %s -> %s", f[2], say(o[key]), say(n[key]))
          end
        end
        if #parts == 0 then
          parts[1] = plural(count_diff(without_words(o), without_words(n)), "other value")
        end
        out[#out + 1] = string.format("%s: %s", k, table.concat(parts, ", "))
      else
        others = others + 1
      end
    end
  end
  if others > 0 then
    out[#out + 1] = string.format("%s on other (exploratory) metrics: %s change", what,
      plural(others, "entry", "entries"))
  end
end

local function seeds_text(v)
  local m = type(v) == "table" and type(v.metrics) == "table" and v.metrics
  if not m then return nil end
  for _, name in ipairs({ "val_loss", "diverged" }) do
    if type(m[name]) == "table" and type(m[name].seeds) == "table" then
      local t = {}
      for _, s in ipairs(m[name].seeds) do t[#t + 1] = num(s) end
      return table.concat(t, ",")
    end
  end
  return nil
end

local function variant_lines(old, new, out)
  old, new = type(old) == "table" and old or {}, type(new) == "table" and new or {}
  for _, k in ipairs(keys_of(old, new)) do
    local o, n = old[k], new[k]
    if not n then
      out[#out + 1] = string.format("variant %s: no longer in the summary", k)
    elseif not o then
      out[#out + 1] = string.format("variant %s: new (%s runs)", k, num(n.n_runs))
    elseif o.n_runs ~= n.n_runs or seeds_text(o) ~= seeds_text(n) then
      out[#out + 1] = string.format("variant %s: runs %s -> %s (seeds %s -> %s)", k,
        num(o.n_runs), num(n.n_runs), tostring(seeds_text(o)),
        tostring(seeds_text(n)))
    end
  end
end

local function task_names(t)
  local set, list = {}, {}
  if type(t) == "table" and type(t.per_task) == "table" then
    for _, e in ipairs(t.per_task) do
      if type(e) == "table" and type(e.task) == "string" and not set[e.task] then
        set[e.task] = true
        list[#list + 1] = e.task
      end
    end
  end
  return set, list
end

-- The task files the records of the study's record set under dir were scored on ({path =
-- sha}), and the records read; design: the new summary's (record/set.lua).
local function records_task_files(dir, design)
  local files, n = {}, 0
  if not dir or not design then return files, n end
  for _, m in ipairs(set.members(design, dir)) do
    local man = json.table_of(fs.read(m.dir .. "/manifest.json"))
    if man and type(man.task_files) == "table" then
      n = n + 1
      for path, sha in pairs(man.task_files) do
        if type(path) == "string" and type(sha) == "string" then files[path] = sha end
      end
    end
  end
  return files, n
end

local function task_lines(old, new, dir, design, out, why)
  if same(old, new) then return end
  local os_, ol = task_names(old)
  local ns, nl = task_names(new)
  local added, gone = {}, {}
  for _, t in ipairs(nl) do if not os_[t] then added[#added + 1] = t end end
  for _, t in ipairs(ol) do if not ns[t] then gone[#gone + 1] = t end end
  if #added > 0 then out[#out + 1] = "tasks new in the summary: " .. table.concat(added, ", ") end
  if #gone > 0 then out[#out + 1] = "tasks no longer in the summary: " .. table.concat(gone, ", ") end
  if type(old) == "table" and type(new) == "table" then
    if old.suite ~= new.suite then
      why[#why + 1] = string.format("the task suite changed: %s -> %s", tostring(old.suite),
        tostring(new.suite))
    end
    local ob, nb, no = index(old.macro), index(new.macro)
    for _, k in ipairs(no) do
      if ob[k] and ob[k].mean ~= nb[k].mean then
        out[#out + 1] = string.format("task macro accuracy, %s: mean difference %s -> %s", k,
          num(ob[k].mean), num(nb[k].mean))
      end
    end
  end
  local files, nrec = records_task_files(dir, design)
  if nrec > 0 then
    local never = {}
    for _, t in ipairs(added) do
      local scored = false
      for path in pairs(files) do
        if path:find("/" .. t .. "-v", 1, true) then scored = true break end
      end
      if not scored then never[#never + 1] = t end
    end
    if #never > 0 then
      why[#why + 1] = string.format("the records were never scored on %s: their manifests " ..
        "name no file of %s (retrain them to score it)", table.concat(never, ", "),
        #never == 1 and "it" or "them")
    end
    local changed = {}
    for _, path in ipairs(base.sorted_keys(files)) do
      local full = path:sub(1, 1) == "/" and path or (host.root .. "/" .. path)
      local ok, now = pcall(fs.sha256, full)
      if ok and now and now ~= files[path] then changed[#changed + 1] = path end
    end
    if #changed > 0 then
      why[#why + 1] = "task files changed since the records were scored: " ..
        table.concat(changed, ", ")
    end
  end
end

-- The parts of the study a summary copies, and the verb each takes.
local STUDY_PARTS = { { "analysis", "differs (the pre-registered rule)" }, { "base", "differs" },
  { "variants", "differ" }, { "seeds", "differ" }, { "command_line_overrides", "differ" } }

function M.describe(old_text, new_text, opts)
  if old_text == new_text then return nil end
  opts = opts or {}
  local old, new = json.table_of(old_text), json.table_of(new_text)
  if not (old and new) then
    return { "the summary on disk is not JSON the suite wrote: all of it changes" }
  end
  local out, why = {}, {}
  local vl = {}
  verdict_lines(old.verdicts, new.verdicts, vl)
  verdict_lines(old.interaction_verdicts, new.interaction_verdicts, vl)
  verdict_lines(old.comparisons, new.comparisons, vl)
  verdict_lines(old.interactions, new.interactions, vl)
  -- a verdict is in two lists (verdicts and comparisons): said once
  local said = {}
  for _, l in ipairs(vl) do
    if not said[l] then
      said[l] = true
      out[#out + 1] = l
    end
  end
  local primary = type(new.analysis) == "table" and new.analysis.primary or nil
  number_lines(old.comparisons, new.comparisons, primary, "comparisons", out)
  number_lines(old.interactions, new.interactions, primary, "interactions", out)
  variant_lines(old.per_variant, new.per_variant, out)
  task_lines(old.tasks, new.tasks, opts.dir, set.design(new), out, why)
  local DONE = { verdicts = true, interaction_verdicts = true, comparisons = true,
    interactions = true, per_variant = true, tasks = true, records_sha256 = true }
  for _, k in ipairs(keys_of(old, new)) do
    if not DONE[k] and not same(old[k], new[k]) then
      if new[k] == nil then
        out[#out + 1] = string.format("%s: no longer in the summary", k)
      elseif old[k] == nil then
        out[#out + 1] = string.format("%s: new in the summary", k)
      else
        out[#out + 1] = string.format("%s: %s change", k,
          plural(count_diff(old[k], new[k]), "value"))
      end
    end
  end
  if #out > M.MAX_LINES then
    local more = #out - M.MAX_LINES
    for i = #out, M.MAX_LINES + 1, -1 do out[i] = nil end
    out[#out + 1] = string.format("and %s more", plural(more, "change"))
  end
  -- why
  if old.records_sha256 ~= new.records_sha256 then
    table.insert(why, 1, string.format("a different record set: records_sha256 %s -> %s",
      tostring(old.records_sha256):sub(1, 12), tostring(new.records_sha256):sub(1, 12)))
  end
  for _, part in ipairs(STUDY_PARTS) do
    if not same(old[part[1]], new[part[1]]) then
      why[#why + 1] = "the study changed: its " .. part[1] .. " " .. part[2]
    end
  end
  if #why == 0 and old.inputs_sha256 ~= nil and old.inputs_sha256 ~= new.inputs_sha256 then
    why[1] = string.format("the same records, made from inputs that changed since " ..
      "(inputs_sha256 %s -> %s): the study file's bytes, the --set overrides, or the " ..
      "corpora or task files the records name", tostring(old.inputs_sha256):sub(1, 12),
      tostring(new.inputs_sha256):sub(1, 12))
  end
  if #why == 0 then
    local m = json.table_of(opts.old_manifest) or {}
    local commit = m.analysed_git_commit or m.git_commit
    local old_c = commit and tostring(commit):sub(1, 12)
    local now_c = opts.commit and tostring(opts.commit):sub(1, 12)
    if old_c and old_c == now_c then
      why[1] = string.format("the same records and study file, and the summary was written " ..
        "at this checkout's commit %s: uncommitted changes of the library, or a summary " ..
        "edited after it was written", old_c)
    else
      why[1] = string.format("the same records and study file: the library's analysis " ..
        "changed since the summary was written (%s; this checkout: %s)",
        old_c and ("by commit " .. old_c) or "its commit is not recorded",
        now_c or "unknown commit")
    end
  end
  local lines = {}
  for _, l in ipairs(out) do lines[#lines + 1] = "  " .. l end
  if #out == 0 then lines[1] = "  (no verdict or number changes: the text of the summary does)" end
  lines[#lines + 1] = "  why: " .. table.concat(why, "; ")
  return lines
end

return M
