#!/usr/bin/python3
"""Reference values of stats.sd_upper (stats/stats.h: the one-sided upper confidence limit
of a standard deviation, sd * sqrt(df / chi2.ppf(1 - conf, df))) from scipy, written to
tests/vectors/sd_upper.json for tests/lua/test_stats.lua.  Run from the repository root
with Debian's python3-scipy (scripts/deps.sh --reference):
  /usr/bin/python3 tests/reference/sd_upper_ref.py"""
import json
import math
import os

import scipy
from scipy.stats import chi2

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vectors",
                   "sd_upper.json")
CASES = [(0.012, 2, 0.8), (0.0125, 2, 0.8), (0.05, 8, 0.8), (1.0, 1, 0.8), (0.3, 30, 0.9),
         (2.5, 4.5, 0.95), (0.021, 10, 0.5), (0.04, 47, 0.8), (0.0, 3, 0.8)]

cases = [{"sd": sd, "df": df, "conf": conf,
          "limit": sd * math.sqrt(df / chi2.ppf(1.0 - conf, df))} for sd, df, conf in CASES]
tmp = OUT + ".tmp"
with open(tmp, "w") as f:
    json.dump({"scipy": scipy.__version__,
               "definition": "sd * sqrt(df / scipy.stats.chi2.ppf(1 - conf, df))",
               "cases": cases}, f, indent=1)
    f.write("\n")
os.replace(tmp, OUT)
