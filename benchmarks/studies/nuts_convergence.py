"""First-run convergence of component NUTS fits, for choosing the default draws.

Usage: python benchmarks/studies/nuts_convergence.py [--draws 400] [--tune 200] [--chains 4]
       [--mass-matrix diag|low-rank] [--T 10,30,60,100]

Fits five of the synthetic problem's components (J = 10, seed 0) on T = 10, 30,
60 and 100 (``--T``) random inputs with NUTS, no repair, and prints each fit's R̂, bulk
and tail ESS, divergences and wall time, then the share meeting R̂ ≤ 1.01.
The numbers behind the defaults in ``pp_decomp/components/inference/nuts.py``.
"""

from __future__ import annotations

import argparse
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402


def main() -> None:
    from pp_decomp import ComponentGP
    from pp_decomp.components.diagnostics import CONVERGENCE
    from pp_decomp.models import get_problem

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=400)
    ap.add_argument("--tune", type=int, default=200)
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--mass-matrix", choices=("low-rank", "diag"), default="diag")
    ap.add_argument("--T", default="10,30,60,100", help="data sizes, comma-separated")
    args = ap.parse_args()
    problem = get_problem("synthetic", seed=0)
    rows = []
    for T in (int(v) for v in args.T.split(",")):
        X = problem.domain.sample(T, seed=T)
        Y = problem.evaluate(X, seed=T)
        for j in range(0, 10, 2):
            gp = ComponentGP("se", 1, bounds=problem.domain.bounds, name=f"f{j}")
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                gp.fit(
                    X,
                    Y[:, j],
                    "nuts",
                    draws=args.draws,
                    tune=args.tune,
                    chains=args.chains,
                    repairs=0,
                    low_rank_mass_matrix=args.mass_matrix == "low-rank",
                    seed=j,
                )
            d = gp.diagnostics
            ok = not d.problems()
            rows.append(
                (
                    d.rhat_max,
                    d.ess_bulk_min,
                    d.ess_tail_min,
                    d.divergences,
                    ok,
                    time.perf_counter() - start,
                )
            )
            print(
                f"T={T:3d} f{j}: r-hat {d.rhat_max:.3f}  bulk ESS {d.ess_bulk_min:5.0f}  "
                f"tail ESS {d.ess_tail_min:5.0f}  divergences {d.divergences:3d}  "
                f"{'ok ' if ok else 'bad'}  {rows[-1][-1]:.2f} s",
                flush=True,
            )
    a = np.array(rows[1:])  # the first fit includes compiling the model
    print(
        f"\n{args.chains} x {args.draws} draws, {args.tune} tuning steps, {args.mass_matrix} "
        f"mass matrix: median r-hat "
        f"{np.median(a[:, 0]):.3f}, "
        f"r-hat <= {CONVERGENCE.rhat_max}: {np.mean(a[:, 0] <= CONVERGENCE.rhat_max):.0%}, "
        f"all thresholds met: {np.mean(a[:, 4]):.0%}, median bulk/tail ESS "
        f"{np.median(a[:, 1]):.0f}/{np.median(a[:, 2]):.0f}, fits with divergences "
        f"{np.mean(a[:, 3] > 0):.0%}, mean {a[:, 5].mean():.2f} s per fit"
    )


if __name__ == "__main__":
    main()
