#!/usr/bin/env python3
"""Near-duplicate sentences in the paper's hand-written text.

    scripts/similar_sentences.py [--numbers paper/numbers.tex] [--ratio 0.85]
                                 [--min-words 8] FILE.tex ...

Within each file and across the files (a sentence of the main text typed again in the
supplement), every pair of sentences of at least --min-words words whose difflib ratio
reaches --ratio, on their words or on their characters, is printed as
"FILE:LINE: FILE:LINE: ratio R" with both sentences; the exit status is 1 when there is
one, 0 otherwise.  The text read is the document's body as LaTeX typesets it by hand:
the bibliography, tables, figures and captions are left out, an \\IfStudy keeps the
branch numbers.tex says is taken, a checked assertion (\\Claim, \\Replicated, \\Assert)
keeps its sentence, and every other command is stripped (the words of \\emph{...} and
the like stay; a generated number or verdict macro goes), so a sentence typed twice is
found whatever numbers it prints.  tests/sh/test_similar_sentences.sh runs it on
paper/main.tex and paper/supplement.tex, and first shows that it finds a planted
duplicate.
"""
import argparse
import difflib
import re
import sys
from collections import Counter

# Environments and commands whose text is not running prose.
SKIP_ENVS = ("table", "table*", "figure", "figure*", "tabular", "longtable",
             "thebibliography", "equation", "equation*", "align", "align*")
DROP_WITH_ARG = ("label", "ref", "cite", "eqref", "input", "includegraphics", "caption",
                 "section", "section*", "subsection", "subsection*", "subsubsection",
                 "paragraph", "PaperTable", "PaperFigure", "Absent", "PaperNeeds",
                 "bibitem", "url", "M")
# checked assertions: (optional argument?, number of arguments); the last is the sentence
ASSERTIONS = {"Claim": (True, 5), "Replicated": (True, 3), "Assert": (False, 4)}


def blank(text):
    """The newlines of text alone, so that line numbers stay where they were."""
    return "\n" * text.count("\n")


def strip_comments(src):
    out = []
    for line in src.split("\n"):
        m = re.search(r"(?<!\\)%", line)
        out.append(line[:m.start()] if m else line)
    return "\n".join(out)


def group(src, i, open_="{", close="}"):
    """The group opening at src[i]: (content, index after it), or None."""
    if i >= len(src) or src[i] != open_:
        return None
    depth, j = 0, i
    while j < len(src):
        c = src[j]
        if c == "\\":
            j += 2
            continue
        if c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return src[i + 1:j], j + 1
        j += 1
    return None


def skip_space(src, i):
    while i < len(src) and src[i] in " \t\n":
        i += 1
    return i


def arguments(src, i, optional, n):
    """The arguments of a command whose name ends before i: ([(content, start)], index
    after them), or None."""
    args = []
    if optional:
        q = skip_space(src, i)
        g = group(src, q, "[", "]")
        if g:
            i = g[1]
    for _ in range(n):
        q = skip_space(src, i)
        g = group(src, q)
        if not g:
            return None
        args.append((g[0], q + 1))
        i = g[1]
    return args, i


def commands(src, name):
    """Start and end-of-name offsets of \\name (not a longer name)."""
    for m in re.finditer(r"\\" + re.escape(name) + r"(?![A-Za-z@*])", src):
        yield m.start(), m.end()


def keep_part(src, start, stop, part):
    """src with src[start:stop] replaced by its part (content, offset) or by nothing, its
    other lines kept as line breaks."""
    if part is None:
        return src[:start] + blank(src[start:stop]) + src[stop:]
    text, at = part
    return (src[:start] + blank(src[start:at]) + text + blank(src[at + len(text):stop]) +
            src[stop:])


def taken_branches(src, have):
    while True:
        m = re.search(r"\\IfStudy(?![A-Za-z])", src)
        if not m:
            return src
        got = arguments(src, m.end(), False, 3)
        if not got:
            return src[:m.start()] + src[m.end():]
        (study, _), a, b = got[0]
        src = keep_part(src, m.start(), got[1], a if study.strip() in have else b)


def replace_commands(src, names, which):
    """Each \\name{...} of names replaced by its argument which(args) (an index; None: by
    nothing)."""
    for name, (optional, n) in names.items():
        while True:
            hit = next(commands(src, name), None)
            if hit is None:
                break
            got = arguments(src, hit[1], optional, n)
            if not got:
                src = src[:hit[0]] + " " + src[hit[1]:]
                continue
            args, after = got
            k = which(args)
            src = keep_part(src, hit[0], after, None if k is None else args[k])
    return src


def prose(src, have):
    """The hand-written running text of a LaTeX source, line breaks where they were."""
    src = strip_comments(src)
    begin = src.find("\\begin{document}")
    # the last \end{document}: a macro of the preamble may hold one (main.tex's
    # \PaperNotReady ends the document early)
    end = src.rfind("\\end{document}")
    if begin >= 0:
        src = blank(src[:begin]) + src[begin:end if end >= 0 else len(src)]
    for env in SKIP_ENVS:
        pat = re.compile(r"\\begin\{" + re.escape(env) + r"\}.*?\\end\{" +
                         re.escape(env) + r"\}", re.S)
        src = pat.sub(lambda m: blank(m.group(0)), src)
    src = taken_branches(src, have)
    src = replace_commands(src, ASSERTIONS, lambda args: len(args) - 1)
    src = replace_commands(src, {name: (True, 1) for name in DROP_WITH_ARG},
                           lambda args: None)
    src = re.sub(r"\\begin\{[^}]*\}|\\end\{[^}]*\}", " ", src)
    src = re.sub(r"\\[A-Za-z@]+\*?", " ", src)     # the commands themselves
    src = re.sub(r"\\.", " ", src)                   # \%, \,, \\ and the like
    src = re.sub(r"[{}$~]", " ", src)
    return src


def sentences(text):
    """(line, sentence) for each sentence: split after . ! ? before a capital or a digit."""
    out = []
    start, line = 0, 1
    for m in re.finditer(r"[.!?]['\")\]]*\s+(?=[A-Z0-9(])", text):
        chunk = text[start:m.end()]
        lead = len(chunk) - len(chunk.lstrip())
        out.append((line + chunk[:lead].count("\n"), chunk.strip()))
        line += chunk.count("\n")
        start = m.end()
    rest = text[start:]
    if rest.strip():
        lead = len(rest) - len(rest.lstrip())
        out.append((line + rest[:lead].count("\n"), rest.strip()))
    return out


def words(sentence):
    return re.findall(r"[a-z0-9][a-z0-9'-]*", sentence.lower())


class Sentence:
    """A sentence, its words and its text of words, with their bags for the bounds."""
    def __init__(self, line, text):
        self.line, self.text = line, text
        self.words = words(text)
        self.chars = " ".join(self.words)
        self.word_bag = Counter(self.words)
        self.char_bag = Counter(self.chars)


def bound(bag_a, bag_b, n):
    """difflib's quick_ratio from the two bags: an upper bound of the ratio."""
    return 2.0 * sum((bag_a & bag_b).values()) / n if n else 1.0


def ratio(a, b, threshold):
    """The larger difflib ratio of two sentences, on their words and on their characters
    (0 when neither can reach threshold)."""
    best = 0.0
    for x, y, bx, by in ((a.words, b.words, a.word_bag, b.word_bag),
                         (a.chars, b.chars, a.char_bag, b.char_bag)):
        n = len(x) + len(y)
        if 2.0 * min(len(x), len(y)) / n < threshold or bound(bx, by, n) < threshold:
            continue
        best = max(best, difflib.SequenceMatcher(None, x, y, autojunk=False).ratio())
    return best


def similar(sents, threshold):
    """Every pair of sents (each with its .path) whose ratio reaches threshold."""
    found = []
    for i in range(len(sents)):
        for j in range(i + 1, len(sents)):
            r = ratio(sents[i], sents[j], threshold)
            if r >= threshold:
                found.append((r, sents[i], sents[j]))
    return found


def studies_run(numbers_path):
    try:
        with open(numbers_path, encoding="utf-8") as f:
            return set(re.findall(r"\\csname ReportHave@([^\\]+)\\endcsname", f.read()))
    except OSError:
        return set()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--numbers", default="paper/numbers.tex",
                    help="numbers.tex, for which \\IfStudy branch is taken")
    ap.add_argument("--ratio", type=float, default=0.85)
    ap.add_argument("--min-words", type=int, default=8)
    o = ap.parse_args()
    have = studies_run(o.numbers)
    sents = []
    for path in o.files:
        with open(path, encoding="utf-8") as f:
            text = prose(f.read(), have)
        for line, sentence in sentences(text):
            x = Sentence(line, sentence)
            if len(x.words) >= o.min_words:
                x.path = path
                sents.append(x)
    n = 0
    for r, a, b in similar(sents, o.ratio):
        n += 1
        print("%s:%d: %s:%d: ratio %.2f\n  %s\n  %s" % (a.path, a.line, b.path, b.line, r,
              " ".join(a.text.split()), " ".join(b.text.split())))
    if n:
        print("similar_sentences: %d pair%s of near-duplicate sentences (ratio >= %.2f, "
              "%d words or more)" % (n, "" if n == 1 else "s", o.ratio, o.min_words))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
