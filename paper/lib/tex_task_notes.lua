-- What the task section says of the agreement task beyond the summary, counted from the
-- run records (a manifest extension of paper/paper.lua): for a study whose runs scored the
-- `agreement` task of a version-1 suite (core), numbers.tex gets
--   \<Study>AgreementRuns        the runs that scored it (zero-shot)
--   \<Study>AgreementHalfRuns    those whose accuracy on it was exactly one half
--   \<Study>AgreementFixedRuns   those that picked one form of each pair of forms whatever
--                                the pronoun before it (every item of the pair "am"/"is"
--                                answered "is", say): a model that ignores the pronoun,
--                                which the task's balanced items score at one half
-- read from each run's verified tasks.csv (item correctness) and the corpus's agreement
-- file.  The items are matched to tasks.csv's rows by their number, so the file must be the
-- one the runs scored: each counted run's manifest names it with its SHA-256
-- (`task_files`), and a run whose manifest names another SHA-256, or none, is refused (a
-- user error naming the run, the file and both digests), never counted against the wrong
-- items.
local tasks = require "repro.tasks"
local items_io = require "repro.tasks.items"
local fs = require "repro.core.fs"
local base = require "repro.core.base"

local M = {}

-- The zero-shot rows of `task` in a run's tasks.csv text: correct[item] = true/false.
local function correctness(text, task)
  local out = {}
  for line in text:gmatch("[^\n]+") do
    local t, shots, item, ok = line:match("^([^,]+),(%d+),(%d+),([01]),")
    if t == task and shots == "0" then out[tonumber(item)] = ok == "1" end
  end
  return out
end

function M.numbers(def, s, S)
  local st = s.summary.tasks
  if type(st) ~= "table" or not (st.chance or {}).agreement then return end
  -- the notes read agreement v1's items (pairs of forms balanced per pronoun); a later
  -- suite's agreement (v2: minimal pairs that swap the pronoun) has no such pairs
  if tasks.suite_version(st.suite or "core") ~= 1 then return end
  local data = s:config_value(s.variants[1].name, "data")
  local file = tasks.files(tasks.dir_of(data), "agreement")
  if not fs.exists(file) then return end
  local items = items_io.read(file)
  local sha, rel = fs.sha256(file), fs.relative_to_root(file)
  local runs, fixed, half = 0, 0, 0
  for _, v in ipairs(s.variants) do
    for _, seed in ipairs(s.seeds) do
      -- tasks.csv and manifest.json as the record reader verified them (read once)
      local run, r = s:run_dir(v.name, seed), s:record(v.name, seed)
      local ok = correctness(r.tasks_csv or "", "agreement")
      if next(ok) then
        local man = r.manifest
        local named = type(man) == "table" and type(man.task_files) == "table" and
          man.task_files[rel] or nil
        if named ~= sha then
          base.user_error("paper: task notes: %s scored %s with SHA-256 %s (its " ..
            "manifest's task_files), but the file now has %s: the items would be counted " ..
            "against another file (rebuild the file the records name, or run the study again)",
            fs.shown(run), rel, type(named) == "string" and base.printable(named:sub(1, 12)) or
            "none named", sha:sub(1, 12))
        end
        runs = runs + 1
        -- per pair of forms, the forms the run chose
        local chose, one = {}, true
        for i, it in ipairs(items) do
          if ok[i] ~= nil and #it.choices == 2 then
            local a = it.choices[it.answer + 1]
            local other = it.choices[it.answer == 0 and 2 or 1]
            local pair = a < other and a .. "/" .. other or other .. "/" .. a
            local pick = ok[i] and a or other
            if chose[pair] and chose[pair] ~= pick then one = false end
            chose[pair] = pick
          end
        end
        if one then fixed = fixed + 1 end
        local right, n = 0, 0
        for _, x in pairs(ok) do right, n = right + (x and 1 or 0), n + 1 end
        if 2 * right == n then half = half + 1 end
      end
    end
  end
  def(S .. "AgreementRuns", string.format("%d", runs))
  def(S .. "AgreementFixedRuns", string.format("%d", fixed))
  def(S .. "AgreementHalfRuns", string.format("%d", half))
end

return M
