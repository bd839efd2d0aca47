"""D-GPUCB's regret under other hyperparameter priors, paired with a peer's bench runs.

Usage: python benchmarks/studies/prior_sweep.py --problem synthetic|flu [--inference map|nuts]
       [--bench docs/results/peers] [--peer botorch-composite] [--trials 10]
       [--iterations 100] [--workers 2] [--root-seed 0] [--kernel se] [KEY=VALUE ...]

``KEY=VALUE`` are :class:`~pp_decomp.components.Priors` fields (none: the
defaults). Trial ``k`` runs on the instance and seed that ``pp-decomp bench
--seed ROOT`` gives its trial ``k`` (``SeedSequence([ROOT, k])``, 5 initial
points), so the runs pair with the peer's runs in ``--bench``'s ``bench.nc``
(made with the same root seed). Prints our mean ± standard error, the peer's
mean, and the paired difference ours − peer, over trials.

The defaults' figures against ``botorch-composite`` (``docs/results/peers``,
MAP, 10 trials × 100 evaluations) and the earlier default priors':

    python benchmarks/studies/prior_sweep.py --problem synthetic
    python benchmarks/studies/prior_sweep.py --problem synthetic eta_alpha=5 eta_beta=4 \\
        sigma_family=gamma
"""

from __future__ import annotations

import argparse
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

from concurrent.futures import ProcessPoolExecutor  # noqa: E402

import numpy as np  # noqa: E402


def trial_seed(root: int, k: int) -> int:
    """The seed of bench trial ``k`` (:class:`pp_decomp.apps.bench.spec.Task`)."""
    return int(np.random.SeedSequence([root, k]).generate_state(1)[0])


def one_run(args: tuple) -> tuple[int, float]:
    k, problem_name, inference, iterations, root, kernel, priors = args
    import warnings

    from pp_decomp import Optimizer
    from pp_decomp.components import Priors
    from pp_decomp.models import get_problem

    warnings.simplefilter("ignore")
    seed = trial_seed(root, k)
    problem = get_problem(problem_name, seed=seed)
    opt = Optimizer(
        problem,
        "d-gpucb",
        inference=inference,
        seed=seed,
        n_init=5,
        kernel=kernel,
        priors=Priors(**priors),
    )
    return k, float(opt.run(iterations)["cumulative_regret"][-1])


def _value(text: str):
    try:
        return float(text)
    except ValueError:
        return text


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--problem", choices=("synthetic", "flu"), required=True)
    p.add_argument("--inference", choices=("map", "nuts"), default="map")
    p.add_argument("--bench", default="docs/results/peers")
    p.add_argument("--peer", default="botorch-composite")
    p.add_argument("--trials", type=int, default=10)
    p.add_argument("--iterations", type=int, default=100)
    p.add_argument("--workers", type=int, default=2, help="runs in parallel processes (1: here)")
    p.add_argument("--root-seed", type=int, default=0)
    p.add_argument("--kernel", default="se")
    p.add_argument("priors", nargs="*", help="Priors fields as KEY=VALUE")
    a = p.parse_args(argv)
    from pp_decomp.components import Priors

    priors = {}
    for item in a.priors:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"priors must be KEY=VALUE; got {item!r}")
        priors[key] = _value(value)
    Priors(**priors)  # a bad field or value fails here, before any run
    import xarray as xr

    with xr.open_dataset(os.path.join(a.bench, "bench.nc")) as b:
        peer = b["cumulative_regret"].sel(problem=a.problem, strategy=a.peer)
        peer = peer.isel(iteration=a.iterations - 1).values[: a.trials]
    jobs = [
        (k, a.problem, a.inference, a.iterations, a.root_seed, a.kernel, priors)
        for k in range(a.trials)
    ]
    if a.workers > 1:
        with ProcessPoolExecutor(a.workers) as pool:
            ours = dict(pool.map(one_run, jobs))
    else:  # in this process
        ours = dict(map(one_run, jobs))
    ours = np.array([ours[k] for k in range(a.trials)])
    diff = ours - peer
    se = np.sqrt(a.trials)
    print(
        f"{a.problem} {a.inference} priors {priors or 'default'}: ours "
        f"{ours.mean():.3f} ± {ours.std(ddof=1) / se:.3f}, {a.peer} {peer.mean():.3f}, "
        f"paired {diff.mean():+.3f} ± {diff.std(ddof=1) / se:.3f} ({a.trials} trials)"
    )
    print("per trial:", np.round(ours, 2).tolist())


if __name__ == "__main__":
    main()
