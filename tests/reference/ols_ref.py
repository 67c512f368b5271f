#!/usr/bin/python3
"""Reference values for stats.ols (stats/ols.c), the regression behind the task study's H1a
analysis (lua/repro/analysis/h1a.lua): writes tests/vectors/ols_ref.json, which
tests/lua/test_stats.lua reads.  Run from the project root:

    /usr/bin/python3 tests/reference/ols_ref.py

Needs Debian's python3-statsmodels (scripts/deps.sh --reference); the test reads the
committed JSON.  Each case is a design of H1a's kind: per set-up intercepts, optionally a
validation-loss slope per set-up, and a norm's 0/1 column, on data drawn with PCG32 (the
same generator as the engine's, tests/reference/stats_ref.py); statsmodels OLS gives the
coefficients, their standard errors, the residual standard deviation and the 1 - alpha
t intervals (conf_int).  The test compares to 1e-9 relative.
"""
import json
import os
import sys

import numpy as np
import statsmodels
import statsmodels.api as sm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stats_ref import PCG32  # noqa: E402

OUT = "tests/vectors/ols_ref.json"


def case(seed, setups, per_norm, seeds, slopes, alpha):
    """n = setups x per_norm x seeds rows: columns set-up dummies (the intercepts),
    [set-up x loss when slopes], then one 0/1 column per norm beyond none."""
    g = PCG32(seed, 29)
    x, y = [], []
    for s in range(setups):
        for k in range(per_norm):
            for _ in range(seeds):
                loss = 1.5 + s * 0.3 + k * 0.05 + g.bounded(1000) / 10000.0
                row = [1.0 if j == s else 0.0 for j in range(setups)]
                if slopes:
                    row += [loss if j == s else 0.0 for j in range(setups)]
                row += [1.0 if k == j + 1 else 0.0 for j in range(per_norm - 1)]
                acc = 0.9 - 0.2 * loss - 0.01 * k + (g.bounded(2001) - 1000) / 100000.0
                x.append(row)
                y.append(round(acc, 6))
    fit = sm.OLS(np.array(y), np.array(x)).fit()
    ci = fit.conf_int(alpha)
    return {"seed": seed, "alpha": alpha, "x": x, "y": y, "df": float(fit.df_resid),
            "coef": [float(v) for v in fit.params], "se": [float(v) for v in fit.bse],
            "resid_sd": float(np.sqrt(fit.scale)),
            "ci": [[float(lo), float(hi)] for lo, hi in ci]}


def main():
    doc = {
        "about": ("Reference values for stats.ols, written by tests/reference/ols_ref.py "
                  "with statsmodels %s, numpy %s: OLS fit params, bse, sqrt(scale), "
                  "conf_int(alpha) on H1a-like designs drawn with PCG32."
                  % (statsmodels.__version__, np.__version__)),
        "cases": [case(1, 3, 3, 6, False, 0.05), case(2, 3, 3, 6, True, 0.05),
                  case(3, 2, 2, 8, True, 0.025), case(4, 1, 2, 5, True, 0.10)],
    }
    tmp = OUT + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, OUT)


if __name__ == "__main__":
    main()
