"""Wall time of NUTS refits of one component after the first (compiling) fit.

Usage: python benchmarks/speed/nuts_fit_time.py [--T 50] [--D 5] [--repeats 5]

Prints the first fit's time (compiles the structure's nutpie model) and the
median of the following refits on fresh data of the same structure (2 chains,
500 tune, 500 draws), with their diagnostics.
"""

from __future__ import annotations

import argparse
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import time  # noqa: E402

import numpy as np  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--T", type=int, default=50)
    p.add_argument("--D", type=int, default=5)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--kernel", default="se")
    a = p.parse_args(argv)
    from pp_decomp import ComponentGP

    rng = np.random.default_rng(0)
    times = []
    for i in range(a.repeats + 1):
        X = rng.uniform(size=(a.T, a.D))
        y = np.sin(3 * X @ rng.normal(size=a.D)) + 0.05 * rng.standard_normal(a.T)
        gp = ComponentGP(a.kernel, a.D, name=f"c{i}")
        start = time.perf_counter()
        gp.fit(X, y, "nuts", seed=i)
        times.append(time.perf_counter() - start)
        d = gp.diagnostics
        print(
            f"fit {i}: {times[-1]:.2f} s  r-hat max {d.rhat_max:.3f}  "
            f"bulk ESS min {d.ess_bulk_min:.0f}  divergences {d.divergences}"
        )
    print(
        f"T={a.T} D={a.D} kernel={a.kernel}: first fit (compiles) {times[0]:.1f} s; "
        f"median refit {np.median(times[1:]):.2f} s over {a.repeats}"
    )


if __name__ == "__main__":
    main()
