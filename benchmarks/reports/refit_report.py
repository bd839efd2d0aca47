"""The refits of a full-Bayes benchmark's runs: how many, by what, how long, converged.

Usage: python benchmarks/reports/refit_report.py DIR [--problem P] [--strategy S]

Reads the finished runs under ``DIR/runs/PROBLEM/STRATEGY/trial*.nc`` (the
files ``pp-decomp bench`` keeps beside ``bench.nc``) and prints, per trial and
over all: the refits, those by NUTS (the steps whose refit has an R̂) and the
rest (importance-sampling refreshes), the range of NUTS and refresh seconds,
the share of refits meeting the convergence checks, the median ask of a step
without a refit, and the final simple regret.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np


def _first_model(ds, name: str) -> np.ndarray:
    values = ds[name].values
    return values.reshape(len(ds["iteration"]), -1)[:, 0]


def trial_report(path: Path) -> dict:
    import xarray as xr

    with xr.open_dataset(path) as ds:
        refit = _first_model(ds, "refit").astype(bool)
        nuts = refit & np.isfinite(_first_model(ds, "rhat_max"))
        seconds = _first_model(ds, "fit_seconds")
        converged = _first_model(ds, "converged").astype(bool)
        ask = ds["ask_seconds"].values
        phase = ds["phase"].values.astype(str)
        model = phase != "design"
        return {
            "trial": path.stem,
            "refits": int(refit.sum()),
            "nuts": int(nuts.sum()),
            "nuts_s": seconds[nuts],
            "refresh_s": seconds[refit & ~nuts],
            "converged": float(converged[refit].mean()) if refit.any() else float("nan"),
            "ask_no_refit": float(np.median(ask[model & ~refit])),
            "simple_regret": float(ds["simple_regret"].values[-1]),
        }


def _range(values: np.ndarray) -> str:
    return f"{values.min():.1f}-{values.max():.1f} s" if values.size else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--problem", default="*")
    parser.add_argument("--strategy", default="*")
    args = parser.parse_args()
    paths = sorted(args.directory.glob(f"runs/{args.problem}/{args.strategy}/trial*[0-9].nc"))
    if not paths:
        raise SystemExit(f"no finished runs under {args.directory}/runs")
    rows = [trial_report(p) for p in paths]
    for r in rows:
        print(
            f"{r['trial']}: {r['refits']} refits, {r['nuts']} by NUTS ({_range(r['nuts_s'])}), "
            f"{r['refits'] - r['nuts']} refreshes ({_range(r['refresh_s'])}), "
            f"converged {r['converged']:.0%}, ask without refit {r['ask_no_refit']:.2f} s "
            f"(median), simple regret {r['simple_regret']:.1f}"
        )
    nuts = np.concatenate([r["nuts_s"] for r in rows])
    refresh = np.concatenate([r["refresh_s"] for r in rows])
    refits = sum(r["refits"] for r in rows)
    conv = sum(r["converged"] * r["refits"] for r in rows) / max(refits, 1)
    regret = np.array([r["simple_regret"] for r in rows])
    se = regret.std(ddof=1) / np.sqrt(len(regret)) if len(regret) > 1 else float("nan")
    print(
        f"all {len(rows)} trials: {refits} refits, {nuts.size} by NUTS "
        f"(median {np.median(nuts) if nuts.size else float('nan'):.1f} s, {_range(nuts)}), "
        f"{refresh.size} refreshes (median "
        f"{np.median(refresh) if refresh.size else float('nan'):.1f} s), converged {conv:.0%}; "
        f"final simple regret {regret.mean():.1f} ± {se:.1f}"
    )


if __name__ == "__main__":
    main()
