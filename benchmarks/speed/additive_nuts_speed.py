"""NUTS fits of an additive GP: nutpie on the numba density (``AdditiveGP``'s
model, :mod:`pp_decomp.additive.sampler`) against nutpie on the PyMC model
compiled through PyTensor (what NUTS fitted before), same data, same settings.

Usage: python benchmarks/speed/additive_nuts_speed.py [--n 40,80,130] [--draws 150] [--tune 300]

Data: Kandasamy et al.'s function at D = 24 (groups of 6, 4 groups; the bench's
``kandasamy-24-6-4``) at ``n`` uniform random inputs, the true groups, the
hyperparameters shared as in the loop's default (``--ard``: 29 of them). Each
row: seconds of one ``AdditiveGP.fit(..., "nuts")`` (4 chains on 2 cores,
repairs as in the loop), attempts, smallest bulk ESS, largest R̂, and the
posterior mean of ``log σ`` and of ``log ℓ_0`` both ways (they must agree to
Monte Carlo error); and once, the seconds each model takes to build.
"""

from __future__ import annotations

import argparse
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import time  # noqa: E402

import numpy as np  # noqa: E402


def _pymc_gp():
    """``AdditiveGP`` sampling the PyMC model compiled by nutpie (the old path)."""
    from functools import cached_property

    import nutpie

    from pp_decomp.additive.gp import AdditiveGP
    from pp_decomp.additive.pymc_model import build_additive_model
    from pp_decomp.additive.sampler import AdditiveModel
    from pp_decomp.components.inference.compiled import compiled

    class Compiled:
        """nutpie's compiled PyMC model with the package's ``with_data`` / ``build``
        (a PyMC model's chains start where nutpie puts them: ``build`` ignores its
        arguments)."""

        def __init__(self, model):
            self.model = model

        def with_data(self, **data):
            return Compiled(self.model.with_data(**data))

        def build(self, initial_point=None, chain_draws=None):
            return self.model

    class PyMCModel(AdditiveModel):
        @cached_property
        def nutpie_model(self):
            model = build_additive_model(self.M, self.D, self.priors, shared=self.shared)
            return Compiled(nutpie.compile_pymc_model(model, backend="numba"))

    class PyMCAdditiveGP(AdditiveGP):
        def _compiled(self):
            M, D, p, shared = self.n_groups, self.input_dim, self.priors, self.shared
            return compiled(("additive-pymc", M, D, p, shared), lambda: PyMCModel(M, D, p, shared))

        def _sample(self, Xs, ys, s, seed, starts=None):
            # nutpie's trace of a PyMC model holds the constrained values only; weighing
            # failing chains (the loop's first repair) reads the value variables, all
            # log-transformed here (``*_log__``)
            trace = super()._sample(Xs, ys, s, seed, starts)
            post = trace["posterior"]
            for name in self._compiled().value_names:
                if name not in post:
                    post[name] = np.log(post[name.removesuffix("_log__")])
            return trace

    return PyMCAdditiveGP


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", default="40,80,130")
    parser.add_argument("--draws", type=int, default=150)
    parser.add_argument("--tune", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--ard",
        action="store_true",
        help="one lengthscale per input and one amplitude per group (29 parameters) "
        "instead of the loop's default, shared ones (3)",
    )
    args = parser.parse_args()

    from pp_decomp.additive.gp import AdditiveGP
    from pp_decomp.models.additive import kandasamy

    problem = kandasamy(args.seed, D=24, d=6, M=4)
    groups = problem.metadata["groups"]
    bounds = np.stack([problem.domain.lower, problem.domain.upper])
    kinds = {"numba density": AdditiveGP, "PyMC model": _pymc_gp()}
    for name, cls in kinds.items():
        start = time.perf_counter()
        _ = cls(groups, 24, bounds=bounds, shared=not args.ard)._compiled().nutpie_model
        print(f"build: {name} {time.perf_counter() - start:.1f} s")
    rng = np.random.default_rng(args.seed)
    for n in [int(v) for v in args.n.split(",")]:
        X = bounds[0] + rng.uniform(size=(n, 24)) * (bounds[1] - bounds[0])
        y = problem.components(X).sum(1)
        seconds = {}
        for name, cls in kinds.items():
            gp = cls(groups, 24, bounds=bounds, shared=not args.ard)
            start = time.perf_counter()
            gp.fit(X, y, "nuts", draws=args.draws, tune=args.tune, seed=1, warn=False)
            seconds[name] = time.perf_counter() - start
            d = gp.diagnostics
            print(
                f"n={n:4d} {name:14s} {seconds[name]:7.1f} s  attempts {d.attempts}  "
                f"ess_bulk {d.ess_bulk_min:6.0f}  rhat {d.rhat_max:.3f}  "
                f"E log sigma {np.log(gp.draws.sigma).mean():+.3f}  "
                f"E log ls0 {np.log(gp.draws.ls[:, 0]).mean():+.3f}",
                flush=True,
            )
        ratio = seconds["PyMC model"] / seconds["numba density"]
        print(f"n={n:4d} PyMC model / numba density: {ratio:.3g}x", flush=True)


if __name__ == "__main__":
    main()
