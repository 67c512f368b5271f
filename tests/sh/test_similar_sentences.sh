#!/bin/sh
# scripts/similar_sentences.py: the paper's hand-written text has no two sentences of eight
# words or more at a difflib ratio of 0.85 or above.  First shown to find what it must on
# planted texts (a sentence typed twice with different numbers, a near copy, one inside a
# checked assertion, one after a preamble macro that holds \end{document}, one copied
# from one file into another) and to leave alone what it must (a short sentence, a table
# or a caption, the branch of an \IfStudy not taken, two different sentences); then run
# on paper/main.tex and paper/supplement.tex together.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { if [ "$1" = 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2" >&2; fi; }
if ! command -v python3 >/dev/null 2>&1; then
    echo "test_similar_sentences.sh: skipped (no python3: scripts/deps.sh --test installs it)"
    exit 0
fi
script=scripts/similar_sentences.py
printf '\\csname ReportHave@ran\\endcsname\n' >"$tmp/numbers.tex"
doc() {
    { printf '\\documentclass{article}\n\\begin{document}\n'; cat; printf '\\end{document}\n'; } >"$tmp/$1.tex"
}
run() { python3 "$script" --numbers "$tmp/numbers.tex" "$tmp/$1.tex" >"$tmp/out" 2>&1; }

# a sentence typed twice, its numbers from different macros: found, both lines named
doc twice <<'EOF'
LayerNorm raised validation perplexity by \TunedA{} at every learning rate we tried.
Something else entirely is said here, with words of its own and no repetition.

At the end, LayerNorm raised validation perplexity by \TunedB{} at every learning rate we tried.
EOF
run twice
ok $((! $?)) "a duplicated sentence fails: $(cat "$tmp/out")"
grep -q "twice.tex:3: .*twice.tex:6: ratio" "$tmp/out"
ok $? "both lines are named: $(cat "$tmp/out")"

# a near copy (one word changed) and a copy inside a checked assertion's sentence
doc near <<'EOF'
The smallest difference this design detects with eighty percent power is large here.
The smallest difference this design detects with eighty percent power is small here.
EOF
run near
ok $((! $?)) "a near copy fails: $(cat "$tmp/out")"
doc assert <<'EOF'
\Claim{tuned}{layernorm}{none}{worse}{With each variant at its own best learning rate, LayerNorm cost a little.}
Again: with each variant at its own best learning rate, LayerNorm cost a little.
EOF
run assert
ok $((! $?)) "a copy of an assertion's sentence fails: $(cat "$tmp/out")"

# a preamble macro that holds \end{document} (main.tex's \PaperNotReady) does not end the text
{ printf '\\documentclass{article}\n\\newcommand{\\Stop}{\\end{document}}\n\\begin{document}\n'
  printf 'The body after a macro that ends the document early is read all the same.\n'
  printf 'The body after a macro that ends the document early is read all the same here.\n'
  printf '\\end{document}\n'; } >"$tmp/early.tex"
run early
ok $((! $?)) "a body after a preamble macro holding end-document is read: $(cat "$tmp/out")"

# a sentence of one file typed again in another: found, naming both files
doc first <<'EOF'
The rescaling control shows that the inflation, not normalization, is what the model pays for.
EOF
doc second <<'EOF'
As the main text says, the rescaling control shows that the inflation, not normalization, is what the model pays for.
EOF
python3 "$script" --numbers "$tmp/numbers.tex" "$tmp/first.tex" "$tmp/second.tex" >"$tmp/out" 2>&1
ok $((! $?)) "a sentence copied across files fails: $(cat "$tmp/out")"
grep -q "first.tex:3: .*second.tex:3: ratio" "$tmp/out"
ok $? "both files are named: $(cat "$tmp/out")"

# what it leaves alone
doc alone <<'EOF'
The norm helps. The norm helps.
\begin{table}\caption{Validation perplexity of each variant at its best learning rate.}
Validation perplexity of each variant at its best learning rate.
\end{table}
Validation perplexity of each variant at its best learning rate, in a sentence.
\IfStudy{ran}{The study that ran says this once, in a sentence of its own words.}{The
study that ran says this once, in a sentence of its own words.}
\IfStudy{absent}{This sentence of the branch not taken is typed in both branches here.}{This
sentence of the branch not taken is typed in both branches here.}
The validation loss of the model without a norm fell fastest at the largest learning rate.
Every task of the second suite was scored against a guesser and three n-gram models.
EOF
run alone
ok $? "short sentences, tables, captions, untaken branches and different sentences pass: $(cat "$tmp/out")"

# the paper
python3 "$script" paper/main.tex paper/supplement.tex >"$tmp/out" 2>&1
ok $? "paper/main.tex and paper/supplement.tex have no near-duplicate sentences: $(cat "$tmp/out")"

echo "test_similar_sentences.sh: $pass passed, $fail failed"
[ "$fail" = 0 ]
