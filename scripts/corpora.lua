-- The registry of corpora: every text a study may name by its `data` key, one entry
-- each.  Data only: lua/repro/core/corpora.lua reads it, `make data` builds every corpus
-- into data/<file> (`bin/repro corpora --build`), `bin/repro corpora` lists them.  A text
-- is installed only when its SHA-256 is the pinned one below.  Fields: name, file (under
-- data/), sha256, bytes, licence, era, genre, why, source, and either fetch (the script
-- that installs it) or package (the Debian package), installs (the files the extraction
-- reads) and extract (a sh command writing the text to stdout, run with `env -i`,
-- PATH=/usr/bin:/bin, LC_ALL=C, no stdin).  The corpora: docs/DESIGN.md, "Corpora".
return {
  {
    name = "tinyshakespeare",
    file = "tinyshakespeare.txt",
    sha256 = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed",
    bytes = 1115394,
    licence = "public domain (Shakespeare's plays; Karpathy's char-rnn selection)",
    era = "c. 1590-1612, Early Modern English",
    genre = "drama: verse and prose dialogue with speaker names",
    why = "the suite's corpus since its first study; every committed record trained on it",
    source = "karpathy/char-rnn data/tinyshakespeare/input.txt, copied from ../shared/data",
    fetch = "scripts/fetch_data.sh",
  },
  {
    name = "devil",
    file = "devil.txt",
    sha256 = "87b6540b0e4066751c769117775bfde3d77c1f274e02064cb49ec7e9317c3019",
    bytes = 383157,
    licence = "public domain (Bierce, 1911; copyright expired: " ..
      "/usr/share/doc/dict-devil/copyright)",
    era = "1881-1906, American English",
    genre = "satirical dictionary: definitions, quotations and verse",
    why = "another century and genre at a third of Tiny Shakespeare's size",
    source = "Ambrose Bierce, The Devil's Dictionary (Internet Wiretap edition, 1993), " ..
      "Debian package dict-devil",
    package = "dict-devil",
    installs = { "/usr/share/dictd/devil.dict.dz" },
    -- the dictd file decompressed, from the Wiretap edition's title line on (the
    -- dictfmt entries before it are the packager's), without the dictfmt alphabet
    -- entry and the blank line before it at the end
    extract = "gzip -dc /usr/share/dictd/devil.dict.dz" ..
      " | sed -n '/^ *The Internet Wiretap 1st Online Edition of$/,$p' | head -n -2",
  },
  {
    name = "kjv",
    file = "kjv.txt",
    sha256 = "b5c4940bcfeee072c0935b5200d0f9d88a00a0199cb0961d16133458fcdfae5d",
    bytes = 4137850,
    licence = "public domain (King James Version, 1611; " ..
      "/usr/share/doc/bible-kjv/copyright)",
    era = "1611, Early Modern English",
    genre = "scriptural prose, one verse a line",
    why = "Shakespeare's era in another genre, at 3.7 times its size",
    source = "The Authorized (King James) Version, Genesis 1:1 to Revelation 22:21, " ..
      "Debian package bible-kjv (the text is in bible-kjv-text, which it depends on)",
    package = "bible-kjv",
    installs = { "/usr/bin/bible", "/usr/lib/bible.data" },
    -- every verse in order, one a line (-f: no pretty-printing, no line breaking), its
    -- reference ("Ge1:1 ") removed
    extract = "bible -f -p /usr/lib gen1:1-rev22:21 | sed 's/^[^ ]* //'",
  },
}
