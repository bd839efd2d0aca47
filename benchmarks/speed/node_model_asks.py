"""What a network node's own model costs an ask: the run's default node GPs against
one node with a kernel expression and one with a user's PyMC model, in one process.

On ``alpine2-network`` (``--nodes`` nodes, a chain), each arm runs ``network-ei``
with ``inference="map"`` from ``--init`` evaluations to ``--evaluations``, and
times every ask after the first model-based one (which includes the arm's build
and compile). The arms run alternately, one step each, so a busy machine
weighs on all of them alike. Node ``y1`` takes the arm's model:

* ``default``: the run's Matérn 3/2 (a shorthand: exact input gradients);
* ``expression``: ``Matern12(ls ~ InverseGamma(3, 0.6)) + Linear()`` (the general
  engine: forward differences);
* ``from_pymc``: a user's PyMC model, ``η² Matern52 + τ² Linear`` with its priors.

Prints one line per arm (the first ask, the later asks' median and largest, and
a digest of its evaluated inputs, which two checkouts making the same choices
share), then each arm's median against the default's::

    python benchmarks/speed/node_model_asks.py --evaluations 20
"""

from __future__ import annotations

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import hashlib  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402


def trend_and_bumps(X, y, input_dim):
    """The user's node model, as a PyMC user writes it."""
    import pymc as pm

    with pm.Model() as model:
        ls = pm.InverseGamma("ls", alpha=3, beta=0.6, shape=input_dim)
        eta = pm.Gamma("eta", alpha=2, beta=2)
        trend = pm.HalfNormal("trend", 0.3)
        cov = eta**2 * pm.gp.cov.Matern52(input_dim, ls=ls)
        cov += trend**2 * pm.gp.cov.Linear(input_dim, c=0.5)
        gp = pm.gp.Marginal(cov_func=cov)
        gp.marginal_likelihood("y", X=X, y=y, sigma=pm.HalfNormal("sigma", 0.3))
    return model, gp


def digest(X) -> str:
    """The first 12 hex digits of the SHA-256 of the inputs, rounded to 1e-9."""
    return hashlib.sha256(np.round(np.asarray(X, dtype=float), 9).tobytes()).hexdigest()[:12]


def arms() -> dict:
    import pp_decomp as ppd
    from pp_decomp import Prior
    from pp_decomp import kernels as K

    return {
        "default": None,
        "expression": {"y1": K.Matern12(ls=Prior("InverseGamma", alpha=3, beta=0.6)) + K.Linear()},
        "from_pymc": {"y1": ppd.ComponentGP.from_pymc(trend_and_bumps)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--init", type=int, default=5)
    parser.add_argument("--evaluations", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    import pp_decomp as ppd
    from pp_decomp.models.networks import alpine2_network

    problem = alpine2_network(n_nodes=args.nodes)
    runs = {
        name: ppd.Optimizer(
            problem, strategy="network-ei", n_init=args.init, seed=args.seed, components=own
        )
        for name, own in arms().items()
    }
    for opt in runs.values():
        opt.run(args.init)
    asks = {name: [] for name in runs}
    for _ in range(args.init, args.evaluations):
        for name, opt in runs.items():
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                x = opt.ask()
            asks[name].append(time.perf_counter() - start)
            opt.tell(x, problem.evaluate(x[None])[0])
    base = statistics.median(asks["default"][1:])
    for name, t in asks.items():
        later = t[1:]
        median = statistics.median(later)
        print(
            f"{name:10s} first ask {t[0]:6.2f} s   later asks median {median:5.2f} s"
            f"   max {max(later):5.2f} s   ({len(later)} asks)   choices {digest(runs[name].X)}"
        )
    for name, t in asks.items():
        print(f"{name:10s} / default later-ask median: {statistics.median(t[1:]) / base:.2f}x")


if __name__ == "__main__":
    main()
