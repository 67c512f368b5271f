#!/usr/bin/python3
"""Reference values of the balanced accuracy (engine/diag.h: the mean over the target
symbols present of their recall) from scikit-learn's balanced_accuracy_score, for
tests/c/test_diag.c.  Writes tests/fixtures/balanced_acc.json: cases of (V, y_true,
y_pred) drawn with numpy's PCG64 from fixed seeds, each with sklearn's value.  Cases
cover predictions of symbols that never occur as targets (they count for nothing), a
single target symbol, skewed frequencies like a character corpus, and perfect and
all-wrong predictions.  Run from the repository root with Debian's python3-sklearn:
  /usr/bin/python3 tests/reference/balanced_ref.py"""
import json
import os
import sys
import warnings

import numpy as np
import sklearn
from sklearn.metrics import balanced_accuracy_score

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures",
                   "balanced_acc.json")


def case(name, V, y_true, y_pred):
    with warnings.catch_warnings():
        # sklearn warns when y_pred holds classes absent from y_true; they are ignored
        warnings.simplefilter("ignore")
        ref = balanced_accuracy_score(y_true, y_pred)
    return {"name": name, "V": int(V), "y_true": [int(x) for x in y_true],
            "y_pred": [int(x) for x in y_pred], "balanced_accuracy": float(ref)}


def main():
    cases = []
    rng = np.random.default_rng(20261127)
    # a character-like distribution: Zipf-ish frequencies over 65 symbols
    V = 65
    p = 1.0 / np.arange(1, V + 1) ** 1.1
    p /= p.sum()
    for i, n in enumerate((150, 600, 5000)):
        t = rng.choice(V, size=n, p=p)
        # a model that is right 40 % of the time and otherwise predicts a frequent symbol
        right = rng.random(n) < 0.4
        pred = np.where(right, t, rng.choice(8, size=n))
        cases.append(case("zipf_%d" % n, V, t, pred))
    t = rng.integers(0, 10, size=300)
    cases.append(case("uniform_random", 10, t, rng.integers(0, 10, size=300)))
    t = rng.integers(0, 5, size=200)
    cases.append(case("pred_outside_targets", 12, t, rng.integers(5, 12, size=200)))
    t = np.full(50, 3)
    cases.append(case("one_symbol", 7, t, np.where(rng.random(50) < 0.3, 3, 1)))
    t = rng.integers(0, 20, size=100)
    cases.append(case("perfect", 20, t, t.copy()))
    cases.append(case("always_space", V, rng.choice(V, size=400, p=p), np.zeros(400, int)))
    out = {"sklearn": sklearn.__version__,
           "definition": "sklearn.metrics.balanced_accuracy_score(y_true, y_pred)",
           "cases": cases}
    tmp = OUT + ".tmp"
    with open(tmp, "w") as f:
        json.dump(out, f)
        f.write("\n")
    os.replace(tmp, OUT)
    sys.stderr.write("balanced_ref: %d cases -> %s\n" % (len(cases), OUT))


if __name__ == "__main__":
    main()
