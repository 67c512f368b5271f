#!/usr/bin/python3
"""Reference values for the robust and replication statistics of stats/:
writes tests/vectors/replication_ref.json, which tests/c/test_stats.c and
tests/lua/test_stats.lua read.  Run from the project root:

    /usr/bin/python3 tests/reference/replication_ref.py

Needs Debian's python3-scipy and python3-statsmodels (scripts/deps.sh --reference); the
tests read the committed JSON.  Independent of stats/robust.c and stats/replication.c:

  robust       hl: numpy's median of the Walsh averages; ci: the shifts theta at which
               scipy.stats.wilcoxon(d - theta, method="exact") has p > alpha, probed in
               every cell between adjacent Walsh averages (the test inverted by brute
               force, not by the order-statistic formula), None when unbounded; ci_level:
               the null probability that the exact test accepts, over the 2^n sign
               patterns of ranks 1..n (numpy enumeration); p_wilcoxon: scipy.stats.wilcoxon
               exact when there are no zeros or ties, else scipy.stats.permutation_test
               over every sign pattern of the non-zero differences with the sum of their
               positive midranks (scipy.stats.rankdata) as statistic; p_sign:
               scipy.stats.binomtest(positive, positive + negative, 0.5)
  replication  original from arms by the formulas of the delta method (stated in
               stats.h) in numpy; d33 from statsmodels TTestPower / TTestIndPower
               solve_power(power = 1/3), refined by scipy's brentq on their power
               function; the intervals and tests from scipy.stats.t and
               scipy.stats.norm
Data come from PCG32 (tests/reference/stats_ref.py's generator), rounded to one or three
decimals so that ties and zeros occur; nothing is typed in by hand except the claim's
Table 1 arms (the student study's published means, sds and n), a case of its own.
"""
import json
import math
import os
import sys

import numpy as np
import scipy
import statsmodels
from scipy import stats as sps
from scipy.optimize import brentq
from statsmodels.stats.power import TTestIndPower, TTestPower

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stats_ref import PCG32  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "vectors", "replication_ref.json")
TIE = 1e-9  # differences are rounded to this before ranking (the C side ties within 1e-12 max|d|)


def draws(seed, n, decimals, spread, shift, zeros=0):
    g = PCG32(seed, 29)
    a = [round(g.bounded(1000) / 100.0, decimals) for _ in range(n)]
    b = []
    for i, x in enumerate(a):
        if i < zeros:
            b.append(x)
        else:
            b.append(round(x + shift + (g.bounded(2 * spread + 1) - spread) / 10.0 ** decimals,
                           decimals))
    return a, b


def diffs(a, b):
    return [y - x for x, y in zip(a, b)]


def walsh(d):
    n = len(d)
    return sorted((d[i] + d[j]) / 2 for i in range(n) for j in range(i, n))


def wilcoxon_exact_p(x):
    return float(sps.wilcoxon(x, method="exact").pvalue)


def hl_interval(d, alpha):
    w = walsh(d)
    pts = []
    for x in w:
        if not pts or x - pts[-1] > 1e-12 * max(1.0, abs(x)):
            pts.append(x)
    span = max(1e-3, pts[-1] - pts[0])
    probes = [pts[0] - span] + [(pts[i] + pts[i + 1]) / 2 for i in range(len(pts) - 1)]
    probes.append(pts[-1] + span)
    ok = [wilcoxon_exact_p([x - th for x in d]) > alpha for th in probes]
    idx = [i for i, v in enumerate(ok) if v]
    assert idx and idx == list(range(idx[0], idx[-1] + 1))
    if idx[0] == 0 or idx[-1] == len(probes) - 1:
        return None, None
    lo, hi = pts[idx[0] - 1], pts[idx[-1]]
    # the exact confidence: the null probability that the test accepts, over every sign
    # pattern of ranks 1..n (p of each attainable T+ as twice its smaller tail)
    n = len(d)
    ranks = np.arange(1, n + 1)
    pats = (np.arange(2 ** n)[:, None] >> np.arange(n)) & 1
    tplus = pats @ ranks
    values, counts = np.unique(tplus, return_counts=True)
    prob = counts / counts.sum()
    p_of = np.minimum(1.0, 2.0 * np.minimum(np.cumsum(prob), np.cumsum(prob[::-1])[::-1]))
    level = float(prob[p_of > alpha].sum())
    return [lo, hi], level


def signed_rank_p(d):
    nz = [round(x / TIE) * TIE for x in d if abs(x) > TIE]
    if not nz:
        return None, None
    mags = np.abs(np.asarray(nz))
    ties = len(set(mags.tolist())) < len(mags)
    r = sps.rankdata(mags)
    w = float(sum(ri for ri, x in zip(r, nz) if x > 0))
    if not ties and len(nz) == len(d):
        return w, wilcoxon_exact_p(d)

    if len(nz) == 1:
        return w, 1.0  # the two patterns: each tail holds half, twice that is 1

    def stat(x, axis=-1):
        return np.sum(np.where(x > 0, r, 0.0), axis=axis)

    # sign patterns of the non-zero differences, ranks fixed by |d|: the statistic sees
    # the signs only
    res = sps.permutation_test((np.asarray(nz),), stat, permutation_type="samples",
                               n_resamples=np.inf, alternative="two-sided", vectorized=True)
    return w, float(min(1.0, res.pvalue))


def robust_case(a, b, alpha):
    d = diffs(a, b)
    pos = sum(1 for x in d if x > TIE)
    neg = sum(1 for x in d if x < -TIE)
    ci, level = hl_interval(d, alpha) if len(d) >= 1 else (None, None)
    w, p = signed_rank_p(d)
    out = {"a": a, "b": b, "alpha": alpha, "hl": float(np.median(walsh(d))),
           "ci": [float(x) for x in ci] if ci else None, "ci_level": level, "positive": pos, "negative": neg,
           "zeros": len(d) - pos - neg, "w_plus": w, "p_wilcoxon": p,
           "p_sign": float(sps.binomtest(pos, pos + neg, 0.5).pvalue) if pos + neg else None}
    return out


def robust_cases():
    cases = []
    seed = 1
    for n in range(3, 21):
        for decimals, spread, shift, zeros in ((3, 400, 0.1, 0), (1, 3, 0.1, n // 4)):
            a, b = draws(seed, n, decimals, spread, shift, zeros)
            seed += 1
            cases.append(robust_case(a, b, 0.05))
    for n, alpha in ((6, 0.05), (7, 0.1), (9, 0.01), (12, 0.2)):
        a, b = draws(seed, n, 1, 2, 0.0, 1)
        seed += 1
        cases.append(robust_case(a, b, alpha))
    # every difference zero but one; all of one sign; two values only
    a, b = draws(seed, 5, 1, 0, 0.0, 4)
    cases.append(robust_case(a, [x + (0.5 if i == 4 else 0.0) for i, x in enumerate(a)], 0.05))
    a, _ = draws(seed + 1, 8, 1, 0, 0.0)
    cases.append(robust_case(a, [round(x + 0.1 * (1 + i % 3), 1) for i, x in enumerate(a)],
                             0.05))
    return cases


def original_from_arms(mean, sd, n, log_ratio):
    s = [sd[i] / mean[i] if log_ratio else sd[i] for i in range(2)]
    est = math.log(mean[1] / mean[0]) if log_ratio else mean[1] - mean[0]
    se = math.sqrt(s[0] ** 2 / n[0] + s[1] ** 2 / n[1])
    pooled = math.sqrt(((n[0] - 1) * s[0] ** 2 + (n[1] - 1) * s[1] ** 2) / (n[0] + n[1] - 2))
    return {"estimate": est, "se": se, "sd": pooled, "n1": n[0], "n2": n[1]}


def replication(o, mean, sd, n, alpha, margin):
    if o["n2"] == 0:
        d33 = TTestPower().solve_power(effect_size=None, nobs=o["n1"], alpha=alpha,
                                       power=1.0 / 3.0, alternative="two-sided")
        df_o = o["n1"] - 1
    else:
        d33 = TTestIndPower().solve_power(effect_size=None, nobs1=o["n1"],
                                          ratio=o["n2"] / o["n1"], alpha=alpha,
                                          power=1.0 / 3.0, alternative="two-sided")
        df_o = o["n1"] + o["n2"] - 2
    # statsmodels' root is good to about 1e-6; refined to 1e-15 on statsmodels' own power
    # function (scipy's noncentral t) and checked against it
    if o["n2"] == 0:
        power = lambda e: TTestPower().power(e, o["n1"], alpha) - 1.0 / 3.0  # noqa: E731
    else:
        power = lambda e: TTestIndPower().power(e, o["n1"], alpha, o["n2"] / o["n1"]) - 1.0 / 3.0  # noqa: E731
    d33_sm = float(np.squeeze(d33))
    d33 = brentq(power, 1e-6, 50.0, xtol=1e-15, rtol=1e-15)
    assert abs(d33 - d33_sm) <= 1e-5 * d33, (d33, d33_sm)
    out = {"d33": d33, "d33_raw": d33 * o["sd"], "diff": mean - o["estimate"],
           "same_direction": bool(mean * o["estimate"] > 0)}
    if n < 2 or sd <= 0:
        return out
    se = sd / math.sqrt(n)
    df = n - 1
    th = o["estimate"]
    sdiff = math.sqrt(o["se"] ** 2 + se ** 2)
    ci = [float(x) for x in sps.t.interval(1 - alpha, df, loc=mean, scale=se)]
    z = sps.norm.ppf(1 - alpha / 2)
    pi = [float(th - z * sdiff), float(th + z * sdiff)]
    q_o = sps.t.ppf(1 - alpha / 2, df_o)
    pi_t = [float(th - q_o * sdiff), float(th + q_o * sdiff)]
    s = 1.0 if th > 0 else -1.0
    tt = (s * mean - out["d33_raw"]) / se
    tel_p = float(sps.t.cdf(tt, df))
    out.update({"se": se, "df": df, "ci": ci, "original_in_ci": bool(ci[0] <= th <= ci[1]),
                "pi": pi, "in_pi": bool(pi[0] <= mean <= pi[1]), "pi_t": pi_t,
                "in_pi_t": bool(pi_t[0] <= mean <= pi_t[1]), "telescope_t": tt,
                "telescope_p": tel_p, "too_small": bool(tel_p <= alpha)})
    if margin > 0:
        vo, vr = o["se"] ** 2, se ** 2
        ddf = (vo + vr) ** 2 / (vo ** 2 / df_o + vr ** 2 / df)
        diff = out["diff"]
        pl = float(sps.t.sf((diff + margin) / sdiff, ddf))
        pu = float(sps.t.cdf((diff - margin) / sdiff, ddf))
        q = sps.t.ppf(1 - alpha, ddf)
        out.update({"diff_se": sdiff, "diff_df": ddf, "tost_p_lower": pl, "tost_p_upper": pu,
                    "tost_p": max(pl, pu), "tost_ci": [float(diff - q * sdiff), float(diff + q * sdiff)],
                    "equivalent": bool(max(pl, pu) <= alpha)})
    return out


def replication_cases():
    cases = []
    g = PCG32(52, 31)
    u = lambda k: g.bounded(k)  # noqa: E731
    # the claim's Table 1 (LayerNorm and RMSNorm against no norm, perplexity, 3 seeds)
    arms = [([22.18, 20.64], [0.90, 0.81], [3, 3]), ([22.18, 21.88], [0.90, 0.77], [3, 3])]
    # originals from arms, n = 3..20 per arm, on both scales
    for k in range(24):
        n0, n1 = 3 + u(18), 3 + u(18)
        m0 = 10.0 + u(2000) / 100.0
        arms.append(([m0, round(m0 * (0.85 + u(300) / 1000.0), 2)],
                     [0.2 + u(300) / 100.0, 0.2 + u(300) / 100.0], [n0, n1]))
    for k, (mean, sd, n) in enumerate(arms):
        log_ratio = k % 2 == 0 or k < 2
        o = original_from_arms(mean, sd, n, log_ratio)
        rn = 2 + u(19)
        rmean = round(o["estimate"] * (u(400) - 100) / 100.0, 4)
        rsd = round(o["sd"] * (0.2 + u(200) / 100.0), 4)
        margin = 0.0 if k % 3 == 2 else round(abs(o["estimate"]) * (0.3 + u(100) / 100.0), 4)
        cases.append({"arms": {"mean": mean, "sd": sd, "n": n, "log_ratio": log_ratio},
                      "original": o, "rep": {"mean": rmean, "sd": rsd, "n": rn},
                      "alpha": 0.05, "margin": margin,
                      "want": replication(o, rmean, rsd, rn, 0.05, margin)})
    # paired originals given by estimate, se and sd; n = 3..20 pairs; other alphas; a
    # replication of one pair and one without spread
    for k in range(18):
        n = 3 + k
        sd = 0.01 + u(100) / 1000.0
        est = (u(200) - 100) / 1000.0 or 0.05
        o = {"estimate": est, "se": sd / math.sqrt(n), "sd": sd, "n1": n, "n2": 0}
        rn = 1 if k == 5 else 2 + u(19)
        rsd = 0.0 if k == 6 else round(sd * (0.3 + u(200) / 100.0), 4)
        rmean = round(est * (u(300) - 100) / 100.0, 4)
        alpha = (0.05, 0.1, 0.01)[k % 3]
        margin = round(abs(est) * 0.5, 4)
        cases.append({"original": o, "rep": {"mean": rmean, "sd": rsd, "n": rn},
                      "alpha": alpha, "margin": margin,
                      "want": replication(o, rmean, rsd, rn, alpha, margin)})
    return cases


def main():
    out = {
        "generator": "tests/reference/replication_ref.py",
        "versions": {"scipy": scipy.__version__, "statsmodels": statsmodels.__version__,
                     "numpy": np.__version__},
        "robust": robust_cases(),
        "replication": replication_cases(),
    }
    tmp = OUT + ".tmp"
    with open(tmp, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, OUT)
    print("wrote %s: %d robust, %d replication cases" % (OUT, len(out["robust"]),
                                                         len(out["replication"])))


if __name__ == "__main__":
    main()
