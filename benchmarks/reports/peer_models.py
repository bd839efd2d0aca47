"""Our MAP component GPs against BoTorch's ``SingleTaskGP`` on the same data.

Usage: python benchmarks/reports/peer_models.py --runs DIR [--problem synthetic]
       [--n 8,15,30,60] [--trials 5] [--points 1000] [--out FILE.json]

``DIR`` is a ``pp-decomp bench`` output holding ``botorch-composite`` runs
(``DIR/runs/<problem>/botorch-composite/trialNNN.nc``). For each trial, the
first ``n`` evaluations of BoTorch's own run are the data. Each component is
fitted by pp_decomp's ``ComponentGP`` (MAP, default priors) and by BoTorch's
``SingleTaskGP`` (the composite peer's ``_fit``), and both are scored against
the true components at the problem's candidates (or ``--points`` random inputs
of a box): RMSE, mean log predictive density, coverage of the central 95%
interval, and the mean predictive sd; the same for the summed objective of a
linear ``g``. A model whose intervals cover less than 95% is overconfident:
its UCB explores less than its β says.
"""

from __future__ import annotations

import argparse
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import json  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import xarray as xr  # noqa: E402
from scipy.stats import norm  # noqa: E402

Z95 = norm.ppf(0.975)


def scores(F: np.ndarray, M: np.ndarray, V: np.ndarray) -> dict:
    """RMSE, log density, 95% coverage and mean sd of predictions ``M, V`` of truth ``F``."""
    sd = np.sqrt(np.maximum(V, 1e-300))
    return {
        "rmse": float(np.sqrt(np.mean((M - F) ** 2))),
        "logpd": float(np.mean(norm.logpdf(F, M, sd))),
        "cover95": float(np.mean(np.abs(F - M) <= Z95 * sd)),
        "sd": float(np.mean(sd)),
    }


def ours(X, Y, G, bounds):
    """Per-component MAP mean and variance at ``G``: (m, J) each."""
    from pp_decomp import ComponentGP

    gps = [ComponentGP(input_dim=X.shape[1], bounds=bounds) for _ in range(Y.shape[1])]
    out = [gp.fit(X, Y[:, j], "map", seed=0) for j, gp in enumerate(gps)]
    mv = [gp.predict(G) for gp in out]
    return np.stack([m for m, _ in mv], 1), np.stack([v for _, v in mv], 1)


def botorch(X, Y, G, bounds):
    """The composite peer's ``ModelListGP`` mean and variance at ``G``: (m, J) each."""
    import torch

    from pp_decomp.peers.botorch import _fit

    torch.set_num_threads(1)
    model = _fit(torch.tensor(X), torch.tensor(Y), torch.tensor(bounds))
    with torch.no_grad():
        post = model.posterior(torch.tensor(G))
        return post.mean.numpy(), post.variance.numpy()


def main() -> None:
    from pp_decomp.models import get_problem
    from pp_decomp.space import CandidateSet

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", required=True)
    ap.add_argument("--problem", default="synthetic")
    ap.add_argument("--n", default="8,15,30,60")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--points", type=int, default=1000)
    ap.add_argument("--out")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    folder = Path(args.runs) / "runs" / args.problem / "botorch-composite"
    rows = []
    for trial in range(args.trials):
        ds = xr.load_dataset(folder / f"trial{trial:03d}.nc")
        problem = get_problem(args.problem, seed=int(ds.attrs["seed"]))
        dom = problem.domain
        G = dom.X if isinstance(dom, CandidateSet) else dom.sample(args.points, seed=trial)
        F = problem.components(G)
        for n in (int(v) for v in args.n.split(",")):
            X, Y = ds.x.values[:n], ds.y.values[:n]
            for name, model in (("pp_decomp", ours), ("botorch", botorch)):
                M, V = model(X, Y, G, dom.bounds)
                row = {"trial": trial, "n": n, "model": name, **scores(F, M, V)}
                w = None if problem.linear is None else problem.linear.constant_weights
                if w is not None:
                    obj = scores(F @ w, M @ w, V @ w**2)
                    row.update({f"sum_{k}": v for k, v in obj.items()})
                rows.append(row)
    keys = [k for k in rows[0] if k not in ("trial", "n", "model")]
    print(f"{args.problem}, {args.trials} trials: mean over trials (components averaged)")
    print("| n | model | " + " | ".join(keys) + " |")
    print("| --- | --- |" + " --- |" * len(keys))
    for n in sorted({r["n"] for r in rows}):
        for name in ("pp_decomp", "botorch"):
            sel = [r for r in rows if r["n"] == n and r["model"] == name]
            vals = [np.mean([r[k] for r in sel]) for k in keys]
            print(f"| {n} | {name} | " + " | ".join(f"{v:.3g}" for v in vals) + " |")
    if args.out:
        Path(args.out).write_text(json.dumps({"args": vars(args), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
