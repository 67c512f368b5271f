-- The corpora of the registry scripts/corpora.lua: each one read, extracted from its
-- Debian package, checked and installed under data/, and its n-gram baselines.  A text is
-- refused, and nothing is installed, when a file its extraction reads is missing, when it
-- is empty or binary, or when its SHA-256 is not the pinned one.
local base = require "repro.core.base"
local fs = require "repro.core.fs"
local host = require "repro.host"
local engine = require "engine"

local M = {}

local user_error, need = base.user_error, base.need

M.REGISTRY = "scripts/corpora.lua"
M.SUMMARY = "corpora.json"

-- The environment an extraction runs in: nothing of the caller's (locale, PATH, HOME)
-- may change its bytes.
local EXTRACT_ENV = "env -i PATH=/usr/bin:/bin LC_ALL=C HOME=/nonexistent"

local TEXT_FIELDS = { "name", "file", "sha256", "licence", "era", "genre", "why", "source" }

local function check_entry(c, i, path)
  local who = string.format("%s: corpus %d", path, i)
  need(type(c) == "table", "%s: an entry must be a table", who)
  need(base.valid_name(c.name), "%s: name must be a name (%s)", who, base.NAME_RULE)
  who = string.format("%s: corpus %s", path, c.name)
  for _, k in ipairs(TEXT_FIELDS) do
    need(type(c[k]) == "string" and c[k] ~= "", "%s: %s must be a string", who, k)
  end
  need(base.valid_name(c.file), "%s: file must be a file name under data/ (%s)", who,
    base.NAME_RULE)
  need(#c.sha256 == 64 and c.sha256:match("^%x+$"), "%s: sha256 must be 64 hexadecimal digits",
    who)
  need(math.type(c.bytes) == "integer" and c.bytes >= 1, "%s: bytes must be a positive integer",
    who)
  need((c.fetch ~= nil) ~= (c.package ~= nil),
    "%s: give either fetch (a script) or package, installs and extract", who)
  if not c.package then
    need(type(c.fetch) == "string", "%s: fetch must be a script's path", who)
    return
  end
  need(type(c.package) == "string" and c.package:match("^[a-z0-9][a-z0-9.+-]+$"),
    "%s: package must be a Debian package name", who)
  need(type(c.extract) == "string" and c.extract ~= "", "%s: extract must be a sh command", who)
  need(type(c.installs) == "table" and #c.installs > 0,
    "%s: installs must list the package's files the extraction reads", who)
  for _, f in ipairs(c.installs) do
    need(type(f) == "string" and f:sub(1, 1) == "/", "%s: installs must hold absolute paths", who)
  end
end

-- The registry at path (default the project's), its entries checked, names unique.
function M.load(path)
  path = path or (host.root .. "/" .. M.REGISTRY)
  local chunk, err = loadfile(path, "t", {})
  if not chunk then user_error("corpora: cannot read the registry %s: %s", path, err) end
  local ok, list = pcall(chunk)
  need(ok and type(list) == "table", "corpora: %s must return a list of corpora%s", path,
    ok and "" or ": " .. tostring(list))
  local seen = {}
  for i, c in ipairs(list) do
    check_entry(c, i, path)
    need(not (seen[c.name] or seen[c.file]), "%s: corpus %s: name or file used twice", path,
      c.name)
    seen[c.name], seen[c.file] = true, true
  end
  return list
end

function M.find(list, name)
  local names = {}
  for _, c in ipairs(list) do
    if c.name == name then return c end
    names[#names + 1] = c.name
  end
  user_error("corpora: no corpus named %s (the registry has: %s)", base.printable(name),
    table.concat(names, ", "))
end

-- Refuses a missing file of c's package, with the exact install command.
function M.check_installed(c)
  for _, f in ipairs(c.installs) do
    need(fs.exists(f), "corpus %s: %s is missing: its Debian package %s is not installed; as " ..
      "root run: apt-get install -y %s (or scripts/deps.sh, which installs every corpus's " ..
      "package)", c.name, f, c.package, c.package)
  end
end

-- Refuses a text the engine must not train on as text: empty, a NUL byte (a binary
-- file), or not UTF-8 (the engine reads bytes, so any would "work", silently as noise).
function M.check_text(c, text)
  need(#text > 0, "corpus %s: the extracted text is empty: refused", c.name)
  local nul = text:find("\0", 1, true)
  need(not nul, "corpus %s: the extracted text holds a NUL byte at byte %d: a binary file, " ..
    "not a text: refused", c.name, nul)
  local n, bad = utf8.len(text)
  need(n, "corpus %s: the extracted text is not UTF-8 (byte %d): refused", c.name, bad)
end

-- The text c's extraction writes (a user error naming the corpus when it fails).
function M.extract(c)
  M.check_installed(c)
  local edir = fs.private_subdir("extract") -- the private folder (fs.private_dir)
  local errf = edir .. "/stderr.txt"
  local p = io.popen(EXTRACT_ENV .. " sh -c " .. fs.quote(c.extract) .. " </dev/null 2>" ..
    fs.quote(errf), "r")
  local text = p and p:read("a")
  local ok, _, code = true, nil, nil
  if p then ok, _, code = p:close() end
  local err = fs.read(errf) or ""
  fs.remove_tree(edir)
  if not p or not ok then
    user_error("corpus %s: the extraction `%s` failed (exit %s)%s", c.name, c.extract,
      tostring(code), err ~= "" and ": " .. base.printable(err:gsub("%s+$", "")) or "")
  end
  return text
end

local function sha_mismatch(c, what, got)
  user_error("corpus %s: %s has SHA-256 %s, but the registry (%s) pins %s: a changed " ..
    "text is refused", c.name, what, got, M.REGISTRY, c.sha256)
end

-- Installs corpus c into data_dir unless it is there with the pinned SHA-256.
function M.build(c, data_dir)
  local dest = data_dir .. "/" .. c.file
  if fs.sha256(dest) == c.sha256 then return "kept" end
  if c.fetch then
    user_error("corpus %s: %s is %s; %s installs it (make data)", c.name, fs.shown(dest),
      fs.exists(dest) and "not the pinned text (SHA-256 " .. tostring(fs.sha256(dest)) ..
      ", pinned " .. c.sha256 .. ")" or "missing", c.fetch)
  end
  local text = M.extract(c)
  M.check_text(c, text)
  local got = fs.sha256_text(text)
  if got ~= c.sha256 then
    sha_mismatch(c, "the text extracted from package " .. c.package, got)
  end
  fs.mkdir_p(data_dir)
  fs.write_atomic(dest, text)
  return "built"
end

-- The path of corpus c's installed text, refused when missing or changed.
function M.verify(c, data_dir)
  local dest = data_dir .. "/" .. c.file
  need(fs.exists(dest), "corpus %s: %s is missing: make data builds it", c.name, fs.shown(dest))
  local got = fs.sha256(dest)
  if got ~= c.sha256 then sha_mismatch(c, fs.shown(dest), tostring(got)) end
  return dest
end

-- The numbers of a corpus every study on it shares: its size, vocabulary and split
-- (engine/data.h's rule) and the unigram and bigram perplexities on its validation
-- split (engine/ngram.h).
function M.baselines(c, data_dir)
  local path = M.verify(c, data_dir)
  local ok, r = pcall(engine.ngram_ppl, path)
  if not ok then user_error("corpus %s: %s", c.name, tostring(r)) end
  return {
    name = c.name, data = "data/" .. c.file, sha256 = c.sha256, bytes = c.bytes,
    vocab = r.vocab, n_train = r.n_train, n_val = c.bytes - r.n_train,
    unigram_ppl = r.unigram_ppl, unigram_nll = r.unigram_nll,
    bigram_ppl = r.bigram_ppl, bigram_nll = r.bigram_nll,
    licence = c.licence, era = c.era, genre = c.genre,
    source = c.package and ("Debian package " .. c.package) or c.fetch,
  }
end

return M
