"""Per-refit cost of a user's PyMC model (``ComponentGP.from_pymc``) against the same
kernel through ``pp_decomp.kernels``, in one process.

The model: ``η₁² Matérn52(ℓ) + η₂² Periodic(ℓ_p, T = 0.5)`` with the same priors
both ways, on ``n`` points of a 2-D function; each path is built (and compiled) once,
then refitted ``--refits`` times by NUTS (nutpie, 4 chains × (400 tune + 400
draws), no repairs) on the same data with other seeds, alternating the paths.
Prints the compile time (first fit) and the median refit time of each, and
their ratio.

    python benchmarks/speed/from_pymc_speed.py --n 50 200
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np


def build(X, y):
    """The user's model, as a PyMC user writes it."""
    import pymc as pm

    with pm.Model() as model:
        ls = pm.LogNormal("ls", mu=1.76, sigma=1.73, shape=2)
        eta = pm.Gamma("eta", alpha=2.0, beta=2.0)
        ls_p = pm.LogNormal("ls_p", mu=0.0, sigma=1.0)
        eta_p = pm.Gamma("eta_p", alpha=2.0, beta=2.0)
        sigma = pm.LogNormal("sigma", mu=-4.0, sigma=1.5)
        cov = eta**2 * pm.gp.cov.Matern52(2, ls=ls) + eta_p**2 * pm.gp.cov.Periodic(
            2, period=0.5, ls=ls_p, active_dims=[0]
        )
        gp = pm.gp.Marginal(cov_func=cov)
        gp.marginal_likelihood("y_obs", X=X, y=y, sigma=sigma)
    return model, gp


def built_in():
    from pp_decomp import ComponentGP, Prior, Priors
    from pp_decomp import kernels as K

    kernel = K.Matern52(
        ls=Prior("LogNormal", mu=1.76, sigma=1.73), eta=Prior("Gamma", alpha=2.0, beta=2.0)
    ) + K.Periodic(
        period=0.5,
        active_dims=[0],
        ls=Prior("LogNormal", mu=0.0, sigma=1.0),
        eta=Prior("Gamma", alpha=2.0, beta=2.0),
    )
    # no integrated constant mean: the PyMC model has none
    return ComponentGP(
        kernel,
        bounds=[[0, 0], [1, 1]],
        priors=Priors(mean_sd=0.0),
        noise=Prior("LogNormal", mu=-4.0, sigma=1.5),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[50, 200])
    parser.add_argument("--refits", type=int, default=3)
    args = parser.parse_args()
    from pp_decomp import ComponentGP

    for n in args.n:
        rng = np.random.default_rng(n)
        X = rng.random((n, 2))
        y = np.sin(2 * np.pi * X[:, 0] / 0.5) + X[:, 1] ** 2 + 0.05 * rng.normal(size=n)
        gps = {
            "from_pymc": ComponentGP.from_pymc(build, bounds=[[0, 0], [1, 1]]),
            "kernels": built_in(),
        }
        first, times = {}, {k: [] for k in gps}
        for r in range(args.refits + 1):
            for name, gp in gps.items():
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    gp.fit(X, y, "nuts", seed=r, draws=400, tune=400, chains=4, repairs=0)
                seconds = time.perf_counter() - start
                if r == 0:
                    first[name] = seconds
                else:
                    times[name].append(seconds)
        med = {k: statistics.median(v) for k, v in times.items()}
        for name in gps:
            print(
                f"n={n:4d} {name:10s} first fit (build+compile) {first[name]:6.1f} s   "
                f"refit median {med[name]:6.2f} s  ({', '.join(f'{t:.2f}' for t in times[name])})"
            )
        print(f"n={n:4d} from_pymc / kernels per refit: {med['from_pymc'] / med['kernels']:.2f}x")


if __name__ == "__main__":
    main()
