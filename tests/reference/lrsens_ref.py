#!/usr/bin/python3
"""Reference values for the learning-rate sensitivity of stats/lrsens.c: writes
tests/vectors/lrsens_ref.json, which tests/lua/test_lrsens.lua reads.  Run from anywhere:

    /usr/bin/python3 tests/reference/lrsens_ref.py

Plain Python 3 (no third-party module), and an independent method: the C code enumerates
the multisets of seed indices with their multinomial weights; this script walks every one
of the n^n ordered resamples (itertools.product), recomputes the statistic from the
definition (Wortsman et al. 2023, sec. 3.1):

    c = min(loss, init), init where the run diverged (null here)
    curve[g][j] = mean over seeds of c;  ell_star = min over g, j of curve
    sensitivity[g] = mean over j of (curve[g][j] - ell_star)
    diff[g] = sensitivity[g] - sensitivity[ref]
    own[g] = mean over j of (curve[g][j] - min over j of curve[g][j])
    own_diff[g] = own[g] - own[ref]

and takes the percentile interval by linear interpolation at f (N - 1) of the sorted list
of all N values (numpy's default quantile).  The sweeps' losses come from PCG32 (checked
against tests/vectors/pcg32.txt), so nothing here is typed in by hand.
"""
import itertools
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "vectors", "lrsens_ref.json")
MASK64 = (1 << 64) - 1


class PCG32:
    """O'Neill's pcg32 (XSH-RR, 64-bit state), seeded as pcg32_srandom_r."""

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


def sweep(seed, groups, points, n, diverge_per_mille):
    """A U-shaped loss curve per group with seed noise; some runs diverged (None), some
    end above their loss at initialization."""
    g = PCG32(seed, 29)
    init = [[round(4.0 + g.bounded(300) / 1000.0, 3) for _ in range(n)] for _ in range(groups)]
    loss = []
    for gi in range(groups):
        best = g.bounded(points)
        rows = []
        for j in range(points):
            row = []
            for i in range(n):
                if g.bounded(1000) < diverge_per_mille * j:
                    row.append(None)
                else:
                    base = 2.5 + 0.1 * gi + 0.35 * abs(j - best) ** 1.5
                    row.append(round(base + g.bounded(200) / 1000.0, 3))
            rows.append(row)
        loss.append(rows)
    return loss, init


def statistic(loss, init, counts, ref):
    groups, points, n = len(loss), len(loss[0]), len(init[0])
    curve = []
    for gi in range(groups):
        row = []
        for j in range(points):
            s = 0.0
            for i in range(n):
                x, l0 = loss[gi][j][i], init[gi][i]
                c = l0 if x is None or x > l0 else x
                s += counts[i] * c
            row.append(s / n)
        curve.append(row)
    star = min(min(r) for r in curve)
    sens = [sum(v - star for v in r) / points for r in curve]
    own = [sum(v - min(r) for v in r) / points for r in curve]
    return (curve, star, sens, [s - sens[ref] for s in sens], own,
            [o - own[ref] for o in own])


def quantile(sorted_values, f):
    h = f * (len(sorted_values) - 1)
    lo = int(h)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (h - lo) * (sorted_values[hi] - sorted_values[lo])


def case(name, seed, groups, points, n, diverge, ref, alpha):
    loss, init = sweep(seed, groups, points, n, diverge)
    curve, star, sens, diff, own, own_diff = statistic(loss, init, [1] * n, ref)
    boot = {k: [[] for _ in range(groups)] for k in ("s", "d", "o", "od")}
    for idx in itertools.product(range(n), repeat=n):
        counts = [0] * n
        for i in idx:
            counts[i] += 1
        _, _, s, d, o, od = statistic(loss, init, counts, ref)
        for gi in range(groups):
            for k, v in (("s", s), ("d", d), ("o", o), ("od", od)):
                boot[k][gi].append(v[gi])
    ints = {k: [] for k in boot}
    for k in boot:
        for gi in range(groups):
            b = sorted(boot[k][gi])
            ints[k].append([quantile(b, alpha / 2), quantile(b, 1 - alpha / 2)])
    star_at = [(gi, j) for gi in range(groups) for j in range(points) if curve[gi][j] == star][0]
    return {"name": name, "loss": loss, "init": init, "ref": ref + 1, "alpha": alpha,
            "curve": curve, "ell_star": star, "star": [star_at[0] + 1, star_at[1] + 1],
            "sensitivity": sens, "ci": ints["s"], "diff": diff, "diff_ci": ints["d"],
            "own": own, "own_ci": ints["o"], "own_diff": own_diff, "own_diff_ci": ints["od"],
            "total": n ** n}


def main():
    check_pcg()
    cases = [
        case("3 groups x 5 points x 3 seeds, some diverged", 1, 3, 5, 3, 120, 0, 0.05),
        case("2 groups x 4 points x 4 seeds, ref 2, alpha 0.1", 2, 2, 4, 4, 80, 1, 0.1),
        case("4 groups x 3 points x 5 seeds", 3, 4, 3, 5, 150, 0, 0.05),
        case("one seed: the interval is the point", 4, 2, 3, 1, 0, 0, 0.05),
    ]
    tmp = OUT + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"source": "tests/reference/lrsens_ref.py", "cases": cases}, f, indent=1)
        f.write("\n")
    os.replace(tmp, OUT)


if __name__ == "__main__":
    main()
