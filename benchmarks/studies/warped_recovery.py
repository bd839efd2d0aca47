"""Does a learned output warp recover a known warp and cover where the plain GP misses (issue 66)?

Each of ``--datasets`` datasets draws ``--n + --held-out`` uniform inputs on
``[0, 1]`` and ``y = w⁻¹(f + ε)`` (:func:`pp_decomp.components.gp.warped.simulate`,
skew ``--skew``, tail ``--tail``, noise ``--noise``), dataset ``i`` from
``default_rng(--seed + i)``. The first ``--n`` are fitted by
``ComponentGP("matern52", warp="sinh-arcsinh")`` and by the plain
``ComponentGP("matern52")`` (``--inference``, NUTS with ``--draws``, ``--tune``,
two chains), and the rest scored:

* whether each warp parameter's 95% posterior interval holds the truth on the
  model's scale (``κ``, ``δ``, ``c = -ȳ / s_y``, ``s = 1 / s_y``; NUTS only);
* the held-out outputs' coverage by the 95% central predictive interval, noise
  included, each model's by its ``quantiles`` (the exact quantiles of its mixture
  over draws), overall and over the top fifth of the held-out outputs, where the
  warp's right tail is.

Prints a line per dataset and the means ± SE over datasets::

    python benchmarks/studies/warped_recovery.py --datasets 10 --out FILE.json
"""

from __future__ import annotations

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

import pp_decomp as ppd  # noqa: E402
from pp_decomp.components.gp.warped import WARP_NAMES, simulate  # noqa: E402


def _inside(gp, Xt, yt) -> np.ndarray:
    lo, hi = gp.quantiles(Xt, [0.025, 0.975], pred_noise=True)
    return (yt > lo) & (yt < hi)


def one_dataset(i: int, a) -> dict:
    rng = np.random.default_rng(a.seed + i)
    X = rng.uniform(size=(a.n + a.held_out, 1))
    y = simulate(X, rng, skew=a.skew, tail=a.tail, noise=a.noise)
    fit, Xt, yt = (X[: a.n], y[: a.n]), X[a.n :], y[a.n :]
    kw = {"draws": a.draws, "tune": a.tune, "chains": 2} if a.inference == "nuts" else {}
    warped = ppd.ComponentGP("matern52", warp="sinh-arcsinh").fit(*fit, a.inference, seed=i, **kw)
    plain = ppd.ComponentGP("matern52").fit(*fit, a.inference, seed=i, **kw)
    top = yt > np.quantile(yt, 0.8)
    w, p = _inside(warped, Xt, yt), _inside(plain, Xt, yt)
    out = {
        "dataset": i,
        "warped": float(w.mean()),
        "plain": float(p.mean()),
        "warped_top": float(w[top].mean()),
        "plain_top": float(p[top].mean()),
    }
    values = (a.skew, a.tail, -warped.y_mean / warped.y_std, 1 / warped.y_std)
    truth = dict(zip(WARP_NAMES, values, strict=True))
    if a.inference == "nuts":
        group = "reweighted_posterior" if warped.diagnostics.reweighted else "posterior"
        post = warped.idata[group]
        for name, value in truth.items():
            lo, hi = np.quantile(post[name].values, [0.025, 0.975])
            out[name] = [float(lo), float(value), float(hi), bool(lo < value < hi)]
    else:
        out.update({n: [float(getattr(warped.draws, n)[0]), float(v)] for n, v in truth.items()})
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", type=int, default=10)
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--held-out", type=int, default=300)
    ap.add_argument("--skew", type=float, default=3.0)
    ap.add_argument("--tail", type=float, default=0.5)
    ap.add_argument("--noise", type=float, default=0.3)
    ap.add_argument("--inference", choices=("map", "nuts"), default="nuts")
    ap.add_argument("--draws", type=int, default=300)
    ap.add_argument("--tune", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    start, rows = time.perf_counter(), []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a small NUTS fit's diagnostics may complain
        for i in range(a.datasets):
            rows.append(one_dataset(i, a))
            r = rows[-1]
            held = [n for n in WARP_NAMES if len(r[n]) == 4 and r[n][3]]
            print(
                f"dataset {i}: coverage warped {r['warped']:.3f} plain {r['plain']:.3f}; "
                f"top fifth warped {r['warped_top']:.3f} plain {r['plain_top']:.3f}; "
                f"intervals holding the truth: {held}",
                flush=True,
            )
    for key in ("warped", "plain", "warped_top", "plain_top"):
        v = np.array([r[key] for r in rows])
        print(f"{key}: {v.mean():.3f} ± {v.std(ddof=1) / np.sqrt(len(v)):.3f}")
    if a.inference == "nuts":
        held = sum(r[n][3] for r in rows for n in WARP_NAMES)
        print(f"95% intervals holding the truth: {held} of {len(rows) * len(WARP_NAMES)}")
    print(f"{time.perf_counter() - start:.0f} s")
    if a.out:
        with open(a.out, "w") as fh:
            json.dump({"arguments": vars(a), "datasets": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
