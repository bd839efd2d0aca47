"""Decomposed vs entire GP regression on a problem's own components (the slides' study).

For a problem with a linear decomposition ``f(x) = b(x) + Σ_j g_j(x) f_j(x)``
(known, possibly input-dependent weights ``g_j`` and known term ``b``, default 0),
each trial draws a space-filling design of
``max(sizes)`` feasible inputs and ``n_test`` test inputs from the problem's
domain, and evaluates the system once at each. For every training size ``n``
in ``sizes`` it regresses on the first ``n`` evaluations with

* the **decomposed** GP: one GP per component ``y_j``, combined through the
  known weights (:meth:`~pp_decomp.composition.LinearComposition.posterior`);
* the **entire** GP: one GP on the observed objective less the known term,
  ``Σ_j g_j(x) y_j``, with ``b`` added back to its mean (both models are given
  ``b``; only the decomposed one uses the weights),

both with the same kernel and hyperparameters inferred by MAP (or NUTS), and
records each posterior mean's RMSE against the true objective at the test
inputs and the mean posterior standard deviation there.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr

from pp_decomp import __version__
from pp_decomp.apps.regression import relative_improvement, scores
from pp_decomp.choices import FITTED_INFERENCE
from pp_decomp.components import ComponentGP
from pp_decomp.kernels import DEFAULT_KERNEL
from pp_decomp.problem import Problem
from pp_decomp.validate import check_choice, check_positive_int


def _checked_sizes(sizes: Sequence[int]) -> tuple[int, ...]:
    sizes = tuple(int(n) for n in sizes)
    if not sizes or any(n < 2 for n in sizes) or list(sizes) != sorted(set(sizes)):
        raise ValueError(f"sizes must be increasing training sizes of at least 2; got {sizes}")
    return sizes


def _fit(kernel, X, y, bounds, inference, rng, name) -> ComponentGP:
    gp = ComponentGP(kernel, X.shape[1], bounds=bounds, name=name)
    return gp.fit(X, y, inference, seed=rng)


def _trial(problem: Problem, sizes, n_test, kernel, inference, rng) -> np.ndarray:
    dom = problem.domain
    X_pool = dom.sample(sizes[-1], seed=rng)
    X_test = dom.sample(n_test, seed=rng)
    Y_pool = problem.evaluate(X_pool, seed=rng)
    f_test = problem.objective(X_test)
    b_pool, b_test = problem.linear.offset_at(X_pool), problem.linear.offset_at(X_test)
    f_pool = problem.compose(Y_pool, X_pool) - b_pool
    names = problem.component_names
    out = np.empty((4, len(sizes)))
    for i, n in enumerate(sizes):
        X, Y = X_pool[:n], Y_pool[:n]
        comps = [
            _fit(kernel, X, Y[:, j], dom.bounds, inference, rng, names[j])
            for j in range(problem.n_components)
        ]
        entire = _fit(kernel, X, f_pool[:n], dom.bounds, inference, rng, "entire")
        dec = problem.linear.posterior(comps, X_test)
        mean_e, var_e = entire.predict(X_test)
        mean_e = mean_e + b_test
        out[:, i] = scores(dec, mean_e, var_e, f_test)
    return out


def problem_regression_study(
    problem: Problem,
    sizes: Sequence[int] = (5, 10, 20, 30, 40, 50),
    trials: int = 10,
    seed: int = 0,
    *,
    inference: str = "map",
    kernel: str = DEFAULT_KERNEL,
    n_test: int = 500,
    progress: bool = False,
) -> xr.Dataset:
    """RMSE and mean posterior sd of the decomposed and the entire GP per trial and size.

    Parameters
    ----------
    problem : Problem
        With a linear decomposition (``weights=``), constant or input-dependent.
    sizes : increasing ints, each at least 2
        Training sizes ``n``; each trial's designs are nested.
    trials, seed : int
        Trial ``i`` uses the ``i``-th child of ``SeedSequence(seed)``.
    inference : {"map", "nuts"}
    kernel : str
        Kernel of every GP (default :data:`~pp_decomp.kernels.DEFAULT_KERNEL`).
    n_test : int
        Test inputs drawn from the domain.

    Returns
    -------
    xarray.Dataset
        ``rmse_decomposed``, ``rmse_entire``, ``mean_sd_decomposed``,
        ``mean_sd_entire`` over ``(trial, n_samples)``, the settings and
        ``relative_rmse_improvement`` as attributes (as
        :func:`~pp_decomp.apps.regression.regression_study`, so
        :func:`~pp_decomp.apps.regression.plot_regression` draws it).

    Examples
    --------
    >>> from pp_decomp.models import get_problem
    >>> ds = problem_regression_study(get_problem("tuberculosis"), sizes=(3, 5), trials=1)
    >>> ds["rmse_decomposed"].shape
    (1, 2)
    """
    _check_problem(problem)
    sizes = _checked_sizes(sizes)
    trials = check_positive_int(trials, "trials")
    seed = check_positive_int(seed, "seed", minimum=0)
    inference = check_choice(inference, "inference", FITTED_INFERENCE)
    n_test = check_positive_int(n_test, "n_test")
    rngs = [np.random.default_rng(c) for c in np.random.SeedSequence(seed).spawn(trials)]
    if progress:
        from tqdm.auto import tqdm

        rngs = tqdm(rngs, desc=f"regression {problem.name}", unit="trial")
    res = np.stack([_trial(problem, sizes, n_test, kernel, inference, rng) for rng in rngs])
    settings = dict(kernel=kernel, trials=trials, seed=seed, inference=inference, n_test=n_test)
    return _dataset(res, problem, sizes, settings)


def _check_problem(problem) -> None:
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a pp_decomp.Problem; got {type(problem).__name__}")
    if problem.linear is None:
        raise ValueError(
            f"problem {problem.name!r} has a nonlinear composition; the study needs a "
            "linear decomposition (weights=)"
        )


def _dataset(res: np.ndarray, problem: Problem, sizes, settings: dict) -> xr.Dataset:
    """``res (trial, 4, size)`` labelled, with the settings as attributes."""
    dims = ("trial", "n_samples")
    names = ("rmse_decomposed", "rmse_entire", "mean_sd_decomposed", "mean_sd_entire")
    ds = xr.Dataset(
        {name: (dims, res[:, k]) for k, name in enumerate(names)},
        coords={"trial": np.arange(len(res)), "n_samples": list(sizes)},
    )
    ds.attrs.update(
        problem=problem.name,
        n_components=problem.n_components,
        input_dim=problem.dim,
        **settings,
        pp_decomp_version=__version__,
        relative_rmse_improvement=relative_improvement(ds),
    )
    return ds
