-- The corpora of the registry (scripts/corpora.lua, lua/repro/core/corpora.lua).
--
--   bin/repro corpora [--build] [--json] [--data-dir DIR]
--
-- lists each corpus: its name, the `data` path a study names, size, symbols (the
-- engine's vocabulary), SHA-256, the unigram and bigram perplexity of its validation
-- split (engine/ngram.h), licence.  --build first installs every corpus that is not in
-- DIR (default data/ of the project) with its pinned SHA-256 (`make data` runs it after
-- scripts/fetch_data.sh) and writes the listing to DIR/corpora.json, where a paper or a
-- script reads the baselines.  --json prints that JSON instead of the table.  A corpus
-- that cannot be built or whose installed text changed is an error naming it.
local base = require "repro.core.base"
local corpora = require "repro.core.corpora"
local fs = require "repro.core.fs"
local host = require "repro.host"
local json = require "repro.core.json"
local textable = require "repro.core.textable"

local M = {}

M.USAGE = "usage: bin/repro corpora [--build] [--json] [--data-dir DIR]"

local function rows_of(list)
  local rows = { { "corpus", "data", "bytes", "symbols", "SHA-256", "unigram ppl",
    "bigram ppl", "licence" } }
  for _, b in ipairs(list) do
    rows[#rows + 1] = { b.name, b.data, tostring(b.bytes), tostring(b.vocab),
      b.sha256:sub(1, 12) .. "...", string.format("%.2f", b.unigram_ppl),
      string.format("%.2f", b.bigram_ppl), (b.licence:gsub(" %(.*", "")) }
  end
  return rows
end

function M.main(args)
  local o = base.parse_options(args, "repro corpora", M.USAGE, {
    ["--build"] = { key = "build", kind = "flag" },
    ["--json"] = { key = "json", kind = "flag" },
    ["--data-dir"] = { key = "data_dir", kind = "value" },
  })
  if o.help then return 0 end
  if #o.targets > 0 then
    base.user_error("repro corpora: unexpected argument %s (%s)", base.printable(o.targets[1]),
      M.USAGE)
  end
  local dir = o.data_dir or (host.root .. "/data")
  local list = corpora.load()
  local out = json.array({})
  for _, c in ipairs(list) do
    if o.build then
      local how = corpora.build(c, dir)
      if how == "built" then
        io.stderr:write(string.format("data: %s/%s built from %s (SHA-256 %s)\n",
          fs.shown(dir), c.file, c.package, c.sha256))
      end
    end
    out[#out + 1] = corpora.baselines(c, dir)
  end
  local text = json.pretty({ registry = corpora.REGISTRY, corpora = out })
  if o.build then fs.write_atomic(dir .. "/" .. corpora.SUMMARY, text) end
  if o.json then
    io.write(text)
  else
    io.write(textable.render(rows_of(out), { width = textable.width(1) }))
  end
  return 0
end

return M
