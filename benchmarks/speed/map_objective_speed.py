"""Per-call time of the MAP objective: the numba density (what MAP fits use) against PyMC's.

Usage: python benchmarks/speed/map_objective_speed.py [--n 20,50,100,500] [--calls 200]

Both return the negative log posterior of the component model and its gradient
(`tests/components/test_map_objective.py` checks they agree). The compiled one
is what MAP fits used before: ``pytensor.function`` of the model's ``logp`` and
its gradient in the default C backend, called through the same flat-vector
wrapper. Prints milliseconds per call and the ratio, one line per ``n``.
"""

from __future__ import annotations

import argparse
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import time  # noqa: E402

import numpy as np  # noqa: E402


def _compiled(X, y):
    import pytensor
    import pytensor.tensor as pt

    from pp_decomp.components.gp.priors import Priors
    from pp_decomp.components.gp.pymc_model import build_model

    model = build_model("se", X.shape[1], Priors())
    model["X"].set_value(X)
    model["y"].set_value(y)
    logp = model.logp(jacobian=False)
    fn = pytensor.function(model.value_vars, [logp, *pt.grad(logp, model.value_vars)])
    d = X.shape[1]

    def f(z):
        out = fn(z[:d], z[d], z[d + 1])
        return -float(out[0]), -np.concatenate([np.atleast_1d(g) for g in out[1:]])

    return f


def _per_call(f, z, calls: int) -> float:
    f(z)
    start = time.perf_counter()
    for _ in range(calls):
        f(z)
    return (time.perf_counter() - start) / calls * 1e3


def main(argv=None) -> None:
    from pp_decomp.components.gp.priors import Priors
    from pp_decomp.components.inference.map_objective import GPMapObjective

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", default="20,50,100,500")
    p.add_argument("--calls", type=int, default=200)
    a = p.parse_args(argv)
    rng = np.random.default_rng(0)
    print("n | numpy ms/call | compiled PyMC ms/call | compiled / numpy")
    for n in (int(v) for v in a.n.split(",")):
        X = rng.uniform(size=(n, 2))
        y = np.sin(5 * X[:, 0]) + 0.1 * rng.standard_normal(n)
        y = (y - y.mean()) / y.std()
        z = np.array([-1.0, -1.0, 0.0, -2.0])
        calls = max(5, a.calls * 50 // max(n, 50))
        fast = _per_call(GPMapObjective("se", X, y, Priors(), Priors().mean_var), z, calls)
        slow = _per_call(_compiled(X, y), z, calls)
        print(f"{n} | {fast:.3f} | {slow:.3f} | {slow / fast:.2f}")


if __name__ == "__main__":
    main()
