"""What a fast-path refit costs on many points, by route: refresh, refresh in growing
batches, around the mode (Laplace), NUTS.

Usage: python benchmarks/speed/refit_routes.py [--T 1000] [--new 60] [--J 3]
       [--routes refresh,refresh-grow,mode,nuts] [--component f0] [--seed 0]

``T`` points of ``speed/scale.py``'s problem (4-D box, ``J`` smooth components)
are told at once and asked once (the fast path's first fits), then ``--new``
more points arrive and one GP's draws are refit on all ``T + new`` of them by
each route, starting from the draws it holds, as a background refit would:

* ``refresh``: 4096 draws of a proposal around the draws, weighed
  (:func:`~pp_decomp.components.inference.refresh.refresh_fit`);
* ``refresh-grow``: the same weighed 512 first, then 128 at a time until the
  weights pass (what a refit on ``FastSettings.mode_from`` points or more does);
* ``mode``: around the posterior's mode
  (:func:`~pp_decomp.components.inference.laplace.laplace_fit`);
* ``nuts``: NUTS at the fast path's sizes, warm-started at the draws.

Prints one line per route: seconds, whether the weights passed their checks,
the draws weighed' ESS and Pareto ``k̂`` (NUTS: whether it converged).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

ROUTES = ("refresh", "refresh-grow", "mode", "nuts")


def measure(T: int, new: int, J: int, routes, component: str = "f0", seed: int = 0):
    """Each route's refit of ``component`` (module docstring), yielded as it ends: dicts
    of ``route``, ``seconds``, ``passed``, ``ess`` and ``pareto_k`` (NaN where not
    weighed)."""
    from scale import problem

    import pp_decomp as ppd
    from pp_decomp.components import ComponentGP
    from pp_decomp.components.inference.laplace import GROW, laplace_fit
    from pp_decomp.components.inference.refresh import refresh_fit
    from pp_decomp.loop.updaters.fast import rescaled

    p = problem(J, seed)
    rng = np.random.default_rng(seed + 1)
    X = p.domain.sample(T + new, seed=rng)
    Y = p.evaluate(X, seed=rng)
    opt = ppd.Optimizer(p, "d-gpucb-mc", inference="nuts", seed=seed)
    opt.tell(X[:T], Y[:T])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt.ask()
    fc = opt.updater.components[component]
    y = Y[:, int(component[1:])]
    for route in routes:
        gp = ComponentGP(**fc.args_at(T + new))
        gp._set_data(X, y)
        init = rescaled(fc.gp.draws, fc.gp.y_std / gp.y_std, gp)
        n_keep, r = len(fc.post.logw), np.random.default_rng(seed + 2)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if route == "nuts":
                gp.fit(X, y, "nuts", seed=seed, init=init, warn=False, **fc.nuts)
                passed = bool(gp.diagnostics.converged) and not gp.diagnostics.problems()
            elif route == "mode":
                passed = laplace_fit(gp, X, y, n_keep, r)
            else:
                grow = GROW if route == "refresh-grow" else None
                passed = refresh_fit(gp, X, y, init, n_keep, r, grow=grow)
        d = gp.diagnostics
        weighed = passed and d.inference == "importance"
        yield {
            "route": route,
            "seconds": time.perf_counter() - start,
            "passed": bool(passed),
            "ess": float(d.ess_bulk_min) if weighed else np.nan,
            "pareto_k": float(d.pareto_k) if weighed else np.nan,
        }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--T", type=int, default=1000)
    ap.add_argument("--new", type=int, default=60, help="points told after the first fits")
    ap.add_argument("--J", type=int, default=3)
    ap.add_argument("--routes", default=",".join(ROUTES))
    ap.add_argument("--component", default="f0")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    bad = [r for r in a.routes.split(",") if r not in ROUTES]
    if bad:  # before the first fits
        raise ValueError(f"routes: unknown {bad}; choose from {', '.join(ROUTES)}")
    for r in measure(a.T, a.new, a.J, a.routes.split(","), a.component, a.seed):
        print(
            f"T={a.T} + {a.new} {r['route']:<13} {r['seconds']:9.3f} s  passed={r['passed']}  "
            f"ESS {r['ess']:.0f}  k {r['pareto_k']:.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
