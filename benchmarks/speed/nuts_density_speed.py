"""One NUTS fit of a component GP: nutpie on the compiled density against nutpie on
the PyMC model (what NUTS fits used before), same data, same settings.

Usage: python benchmarks/speed/nuts_density_speed.py [--dims 1,5] [--n 10,25,50,100]

Prints, per input dimension and ``n``, the seconds of a fit (4 chains x 400
draws, 200 tuning steps, 2 cores), their ratio, and the posterior means of
``log η`` both ways (they must agree to Monte Carlo error); and once, the
seconds each model takes to build (PyTensor's compilation against numba's,
which the disk cache makes a one-off per machine).
"""

from __future__ import annotations

import argparse
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import time  # noqa: E402

import numpy as np  # noqa: E402


def _fit_seconds(model, X, y) -> tuple[float, float]:
    import nutpie

    from pp_decomp.components.inference.native import NutsModel

    start = time.perf_counter()
    model = model.with_data(X=X, y=y)
    if isinstance(model, NutsModel):  # the density's model, built for nutpie
        model = model.build(chain_draws=200 + 400)
    trace = nutpie.sample(
        model,
        draws=400,
        tune=200,
        chains=4,
        cores=2,
        seed=1,
        progress_bar=False,
    )
    return time.perf_counter() - start, float(np.log(trace.posterior["eta"]).mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", default="1,5")
    parser.add_argument("--n", default="10,25,50,100")
    args = parser.parse_args()
    import nutpie

    from pp_decomp.components.gp.priors import Priors
    from pp_decomp.components.gp.pymc_model import build_model, compiled_model

    rng = np.random.default_rng(0)
    for d in [int(v) for v in args.dims.split(",")]:
        start = time.perf_counter()
        pymc = nutpie.compile_pymc_model(build_model("se", d, Priors()), backend="numba")
        built_pymc = time.perf_counter() - start
        start = time.perf_counter()
        ours = compiled_model("se", d, Priors()).nutpie_model
        built_ours = time.perf_counter() - start
        print(f"d={d}: build {built_pymc:.1f} s (PyMC) against {built_ours:.2f} s (density)")
        for n in [int(v) for v in args.n.split(",")]:
            X = rng.uniform(size=(n, d))
            y = np.sin(6 * X[:, 0]) + 0.1 * rng.standard_normal(n)
            y = (y - y.mean()) / y.std()
            t_pymc, m_pymc = _fit_seconds(pymc, X, y)
            t_ours, m_ours = _fit_seconds(ours, X, y)
            print(
                f"d={d} n={n:4d}: PyMC model {t_pymc:6.2f} s, density {t_ours:6.2f} s, "
                f"ratio {t_ours / t_pymc:.2f}; mean log eta {m_pymc:+.3f} / {m_ours:+.3f}"
            )


if __name__ == "__main__":
    main()
