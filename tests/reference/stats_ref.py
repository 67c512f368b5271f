#!/usr/bin/python3
"""Reference values for the decision-rule statistics of stats/: writes
tests/vectors/stats_ref.json, which tests/c/test_stats.c and tests/lua/test_stats.lua read.
Run from the project root:

    /usr/bin/python3 tests/reference/stats_ref.py

Needs Debian's python3-scipy and python3-statsmodels (scripts/deps.sh --reference); the
tests need neither, they read the committed JSON.  One known inaccuracy of the reference:
scipy 1.10's t.isf(0.05, 4) is 2.3e-9 relative off the 30-digit quantile 2.13184678632665
(which GSL reproduces), so the tests compare the TOST t interval to 1e-8.  Every value comes from scipy or
statsmodels, or from a brute-force search over scipy's exact permutation test:

  tost            statsmodels ttost_paired(b, a, -delta, delta) and the 1 - 2 alpha interval
                  DescrStatsW(b - a).tconfint_mean(2 alpha); the sign-flip TOST from
                  scipy.stats.permutation_test (one sample, permutation_type="samples":
                  every sign pattern) on b - a + delta ("greater") and b - a - delta
                  ("less"), and its interval by inverting those one-sided tests
  signflip_ci     the set of shifts theta where scipy's exact two-sided sign-flip p of
                  b - a - theta exceeds alpha, found by evaluating it between every pair of
                  adjacent subset means (where it can change)
  seeds_needed    statsmodels TTestPower().solve_power(effect_size = delta / sd,
                  alpha = alpha / m, power = power), the seed count being its ceiling; for
                  the sign flip also the least n with 2^(1 - n) <= alpha / m
  clopper_pearson statsmodels proportion_confint(k, n, alpha, method="beta")
  anova2          statsmodels ols("y ~ C(row) + C(col)") and anova_lm: sums of squares,
                  F, p; the variance components from its mean squares by the expected
                  mean squares of the two-way random-effects model; and, where every
                  component is positive, statsmodels MixedLM (REML) as a cross-check

The data come from PCG32 (checked against tests/vectors/pcg32.txt), so nothing here is
typed in by hand.
"""
import json
import math
import os
import sys
import warnings

import numpy as np
import pandas as pd
import scipy
import statsmodels
import statsmodels.formula.api as smf
from scipy.stats import permutation_test
from statsmodels.stats.anova import anova_lm
from statsmodels.stats.power import TTestPower
from statsmodels.stats.proportion import proportion_confint
from statsmodels.stats.weightstats import DescrStatsW, ttost_paired

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "vectors", "stats_ref.json")
MASK64 = (1 << 64) - 1


class PCG32:
    """pcg32_srandom_r / pcg32_random_r / pcg32_boundedrand_r of pcg-c-basic."""

    def __init__(self, seed, stream):
        self.state = 0
        self.inc = ((stream << 1) | 1) & MASK64
        self.next()
        self.state = (self.state + seed) & MASK64
        self.next()

    def next(self):
        old = self.state
        self.state = (old * 6364136223846793005 + self.inc) & MASK64
        xorshifted = (((old >> 18) ^ old) >> 27) & 0xFFFFFFFF
        rot = old >> 59
        return ((xorshifted >> rot) | (xorshifted << ((-rot) & 31))) & 0xFFFFFFFF

    def bounded(self, bound):
        threshold = (-bound & 0xFFFFFFFF) % bound
        while True:
            r = self.next()
            if r >= threshold:
                return r % bound


def check_pcg():
    with open(os.path.join(ROOT, "tests", "vectors", "pcg32.txt")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            head, outs, bounded = line.split("|")
            seed, stream = (int(x) for x in head.split())
            g = PCG32(seed, stream)
            assert [g.next() for _ in range(10)] == [int(x, 16) for x in outs.split()]
            g = PCG32(seed, stream)
            assert [g.bounded(6) for _ in range(10)] == [int(x) for x in bounded.split()]


def data(seed, n, base, spread, shift):
    """A baseline a and a treatment b of n paired values with three decimals."""
    g = PCG32(seed, 13)
    a = [round(base + g.bounded(1000) / 1000.0, 3) for _ in range(n)]
    b = [round(x + shift + (g.bounded(2 * spread + 1) - spread) / 1000.0, 3) for x in a]
    return a, b


def perm_p(d, alternative):
    res = permutation_test((np.asarray(d, dtype=float),), np.mean,
                           permutation_type="samples", alternative=alternative,
                           n_resamples=np.inf)
    return float(res.pvalue)


def subset_means(d):
    n = len(d)
    out = []
    for mask in range(1, 1 << n):
        idx = [i for i in range(n) if mask >> i & 1]
        out.append(sum(d[i] for i in idx) / len(idx))
    return out


def cells(points):
    """Sorted distinct points (within 1e-12) and one probe inside each cell, the outer
    cells included: probes[0] < pts[0] < probes[1] < ... < pts[-1] < probes[-1]."""
    pts = []
    for x in sorted(points):
        if not pts or x - pts[-1] > 1e-12 * max(1.0, abs(x)):
            pts.append(x)
    span = max(1e-3, pts[-1] - pts[0])
    probes = [pts[0] - span] + [(pts[i] + pts[i + 1]) / 2 for i in range(len(pts) - 1)]
    probes.append(pts[-1] + span)
    return pts, probes


def invert(d, alpha, p_of_theta):
    """The closed interval of shifts accepted by the test p_of_theta(theta) > alpha, from
    the cells between subset means; None when it is unbounded.  Asserts it is one
    interval."""
    pts, probes = cells(subset_means(d))
    accepted = [p_of_theta(th) > alpha for th in probes]
    idx = [i for i, ok in enumerate(accepted) if ok]
    assert idx and idx == list(range(idx[0], idx[-1] + 1)), "accepted shifts not an interval"
    if idx[0] == 0 or idx[-1] == len(probes) - 1:
        return None
    return [pts[idx[0] - 1], pts[idx[-1]]]


def tost_cases():
    out = []
    specs = [  # seed, n, spread, shift (in thousandths), delta, alpha
        (1, 5, 8, 0.0, 0.02, 0.05),
        (2, 5, 30, 0.0, 0.02, 0.05),
        (3, 8, 10, 0.004, 0.02, 0.05),
        (4, 3, 10, 0.0, 0.05, 0.05),
        (5, 10, 15, -0.01, 0.03, 0.05),
        (6, 6, 20, 0.01, 0.02, 0.10),
        (7, 12, 12, 0.002, 0.015, 0.05),
    ]
    for seed, n, spread, shift, delta, alpha in specs:
        a, b = data(seed, n, 2.0, spread, shift)
        d = [y - x for x, y in zip(a, b)]
        p, (t1, p1, df1), (t2, p2, df2) = ttost_paired(np.array(b), np.array(a), -delta, delta)
        ci = DescrStatsW(np.array(d)).tconfint_mean(alpha=2 * alpha)
        sp_lower = perm_p([x + delta for x in d], "greater")
        sp_upper = perm_p([x - delta for x in d], "less")
        # each one-sided test accepts a half-line of shifts; its finite end is the bound
        ci_sf = [invert_half(d, alpha, "greater"), invert_half(d, alpha, "less")]
        out.append({
            "a": a, "b": b, "delta": delta, "alpha": alpha,
            "t": {"p": float(p), "p_lower": float(p1), "p_upper": float(p2),
                  "t_lower": float(t1), "t_upper": float(t2), "df": float(df1),
                  "ci": [float(ci[0]), float(ci[1])], "equivalent": bool(p <= alpha)},
            "signflip": {"p": max(sp_lower, sp_upper), "p_lower": sp_lower,
                         "p_upper": sp_upper, "ci": ci_sf,
                         "equivalent": bool(max(sp_lower, sp_upper) <= alpha)},
        })
    return out


def invert_half(d, alpha, alternative):
    """The finite end of the half-line of shifts a one-sided sign-flip test accepts:
    'greater' (H1 mean > theta) accepts [lo, inf), 'less' accepts (-inf, hi]; None when it
    accepts every shift."""
    pts, probes = cells(subset_means(d))
    accepted = [perm_p([x - th for x in d], alternative) > alpha for th in probes]
    idx = [i for i, ok in enumerate(accepted) if ok]
    assert idx and idx == list(range(idx[0], idx[-1] + 1))
    if alternative == "greater":
        assert idx[-1] == len(probes) - 1
        return None if idx[0] == 0 else pts[idx[0] - 1]
    assert idx[0] == 0
    return None if idx[-1] == len(probes) - 1 else pts[idx[-1]]


def signflip_ci_cases():
    out = []
    specs = [(11, 3, 20, 0.01, 0.05), (12, 5, 20, 0.01, 0.05), (13, 6, 25, 0.0, 0.05),
             (14, 8, 30, 0.02, 0.05), (15, 10, 30, -0.01, 0.05), (16, 7, 40, 0.0, 0.10),
             (17, 12, 25, 0.015, 0.05), (18, 9, 20, 0.0, 0.01)]
    for seed, n, spread, shift, alpha in specs:
        a, b = data(seed, n, 2.0, spread, shift)
        d = [y - x for x, y in zip(a, b)]
        ci = invert(d, alpha, lambda th: perm_p([x - th for x in d], "two-sided"))
        out.append({"a": a, "b": b, "alpha": alpha, "ci": ci,
                    "p_at_zero": perm_p(d, "two-sided")})
    return out


def seeds_cases():
    out = []
    specs = [  # sd, delta, alpha, m, power
        (0.01, 0.02, 0.05, 3, 0.8), (0.05, 0.02, 0.05, 6, 0.8), (1.0, 0.5, 0.05, 1, 0.9),
        (0.03, 0.02, 0.05, 24, 0.8), (2.0, 5.0, 0.05, 8, 0.8), (1.0, 0.1, 0.05, 1, 0.8),
        (0.012, 0.02, 0.05, 7, 0.8), (0.5, 1.0, 0.01, 2, 0.95), (0.02, 0.02, 0.05, 4, 0.8),
    ]
    for sd, delta, alpha, m, power in specs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nobs = float(TTestPower().solve_power(effect_size=delta / sd, alpha=alpha / m,
                                                  power=power))
        n_t = max(2, math.ceil(nobs))
        n_reach = 1
        while 2.0 ** (1 - n_reach) > alpha / m:
            n_reach += 1
        out.append({"sd": sd, "delta": delta, "alpha": alpha, "m": m, "power": power,
                    "nobs": nobs, "n_t": n_t, "n_reach_signflip": n_reach,
                    "n_signflip": max(n_t, n_reach)})
    return out


def clopper_cases():
    out = []
    for k, n, alpha in [(0, 5, 0.05), (3, 5, 0.05), (5, 5, 0.05), (1, 3, 0.05), (7, 20, 0.05),
                        (12, 20, 0.05), (2, 10, 0.1), (0, 1, 0.05), (9, 13, 0.01)]:
        lo, hi = proportion_confint(k, n, alpha=alpha, method="beta")
        lo = 0.0 if k == 0 else float(lo)
        hi = 1.0 if k == n else float(hi)
        out.append({"k": k, "n": n, "alpha": alpha, "ci": [lo, hi]})
    return out


def anova_cases():
    out = []
    for seed, rows, cols, row_sd, col_sd, resid in [(21, 3, 3, 30, 10, 10), (22, 4, 5, 5, 40, 15),
                                                     (23, 5, 4, 20, 20, 20), (24, 3, 4, 0, 0, 30),
                                                     (25, 6, 6, 25, 15, 8)]:
        g = PCG32(seed, 17)
        re = [(g.bounded(2 * row_sd + 1) - row_sd) / 1000.0 for _ in range(rows)]
        ce = [(g.bounded(2 * col_sd + 1) - col_sd) / 1000.0 for _ in range(cols)]
        y = [[round(1.5 + re[i] + ce[j] + (g.bounded(2 * resid + 1) - resid) / 1000.0, 3)
              for j in range(cols)] for i in range(rows)]
        df = pd.DataFrame([{"row": i, "col": j, "y": y[i][j]}
                           for i in range(rows) for j in range(cols)])
        fit = smf.ols("y ~ C(row) + C(col)", data=df).fit()
        tab = anova_lm(fit, typ=2)
        ms = {k: float(tab.loc[k, "sum_sq"] / tab.loc[k, "df"])
              for k in ("C(row)", "C(col)", "Residual")}
        var_row = (ms["C(row)"] - ms["Residual"]) / cols
        var_col = (ms["C(col)"] - ms["Residual"]) / rows
        case = {
            "y": y, "ss_row": float(tab.loc["C(row)", "sum_sq"]),
            "ss_col": float(tab.loc["C(col)", "sum_sq"]),
            "ss_resid": float(tab.loc["Residual", "sum_sq"]),
            "df_row": float(tab.loc["C(row)", "df"]), "df_col": float(tab.loc["C(col)", "df"]),
            "df_resid": float(tab.loc["Residual", "df"]),
            "f_row": float(tab.loc["C(row)", "F"]), "f_col": float(tab.loc["C(col)", "F"]),
            "p_row": float(tab.loc["C(row)", "PR(>F)"]),
            "p_col": float(tab.loc["C(col)", "PR(>F)"]),
            "var_row": var_row, "var_col": var_col, "var_resid": ms["Residual"],
        }
        if var_row > 0 and var_col > 0:
            df["one"] = 1
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mix = smf.mixedlm("y ~ 1", df, groups="one", re_formula="0",
                                  vc_formula={"row": "0 + C(row)", "col": "0 + C(col)"}).fit(
                                      reml=True, method=["lbfgs"])
            vc = dict(zip(mix.model.exog_vc.names, (float(v) for v in mix.vcomp)))
            case["reml"] = {"var_row": vc["row"], "var_col": vc["col"],
                            "var_resid": float(mix.scale)}
            for k in ("var_row", "var_col", "var_resid"):
                assert abs(case["reml"][k] - case[k]) <= 1e-4 * max(case[k], 1e-6), (k, case)
        out.append(case)
    return out


def main():
    check_pcg()
    doc = {
        "about": ("Reference values for the decision-rule statistics of stats/, "
                  "written by tests/reference/stats_ref.py with scipy %s, statsmodels %s, "
                  "numpy %s; see that script for how each value is computed. Exact methods "
                  "must match to 1e-9 relative (the REML cross-check of anova2 to 1e-4)."
                  % (scipy.__version__, statsmodels.__version__, np.__version__)),
        "tost": tost_cases(),
        "signflip_ci": signflip_ci_cases(),
        "seeds_needed": seeds_cases(),
        "clopper_pearson": clopper_cases(),
        "anova2": anova_cases(),
    }
    tmp = OUT + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, OUT)
    print("wrote", os.path.relpath(OUT, ROOT), file=sys.stderr)


if __name__ == "__main__":
    main()
