"""A run's hyperparameter posteriors as ArviZ 1 takes them: one DataTree per GP.

For each GP the last choice used (``Optimizer.models``), a :class:`xarray.DataTree` with

* ``posterior`` (and ``sample_stats`` where NUTS ran): the last fit's chains, so
  ``arviz.summary`` computes r-hat and ESS from them; MAP's one draw; or, for a
  fit by importance sampling (or one restored from a checkpoint), its draws as
  one chain, with no r-hat: the root's attributes give the weights' ESS and
  Pareto ``k̂`` (``fit_draws`` says which);
* ``draws_in_use``: the draws the last choice predicted with, ``(chain=1,
  draw=S)``, with their normalised ``log_weight``: reweighted by every
  observation since the fit on the full-Bayes fast path, equal otherwise;
* root attributes: the fit's diagnostics (:func:`~pp_decomp.loop.records.diagnostics_summary`)
  and the GP's ``label``.

Hyperparameters are on the model's scale (unit-scaled inputs, standardised
outputs), named as in the GP's PyMC model (``ls``, ``eta``, ``sigma``, ...).

Example
-------
>>> import arviz_stats
>>> import pp_decomp as ppd
>>> from pp_decomp.models import get_problem
>>> opt = ppd.Optimizer(get_problem("synthetic", seed=0), seed=0)
>>> _ = opt.run(7)
>>> tree = opt.posterior("f0")
>>> sorted(tree.children), tree.attrs["fit_draws"]
(['draws_in_use', 'posterior'], 'map')
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import xarray as xr

from pp_decomp.components.posterior.tree import from_draws
from pp_decomp.loop.records import (
    DrawLog,
    diagnostics_summary,
    draw_arrays,
    draws_in_use,
    fitted_draws,
    normalised_log_weights,
    step_posterior,
)


def posterior(
    models: Callable[[], dict],
    draw_log: DrawLog,
    records: list[dict],
    name: str | None = None,
    iteration: int | None = None,
) -> xr.DataTree | dict[str, xr.DataTree]:
    """GP ``name``'s posterior tree (see the module docstring), or every GP's by name,
    of the GPs ``models()`` (the last choice's; called only when needed).

    ``iteration``: the draws step ``iteration`` of the results chose with, from the
    run's ``draw_log`` with its step ``records``
    (:func:`~pp_decomp.loop.records.step_posterior`), without fitting."""
    if iteration is not None:
        stored = draw_log.to_dataset(records)
        if stored is None:
            raise ValueError(f"iteration={iteration}: no step of this run chose with a model")
        if name is None:
            return {n: step_posterior(stored, n, iteration) for n in stored["gp"].values}
        return step_posterior(stored, name, iteration)
    models = models()
    if name is None:
        return {n: model_posterior(m) for n, m in models.items()}
    if name not in models:
        raise KeyError(f"name must be one of {sorted(models)}; got {name!r}")
    return model_posterior(models[name])


def model_posterior(model) -> xr.DataTree:
    """The posterior tree of one loop model: a GP, a fast-path view or a correlated
    component (whose tree is the shared coregionalised model's)."""
    gp, logw = fitted_draws(model)
    draws = draw_arrays(gp.draws)
    tree = gp.idata
    if tree is None:  # importance draws, known kernels, or restored from a checkpoint
        tree = from_draws({k: v[None] for k, v in draws.items()}, inference=_inference(gp))
    else:
        tree = tree.copy()
    logw = normalised_log_weights(logw, len(next(iter(draws.values()))))
    tree["draws_in_use"] = draws_in_use(draws, logw)
    tree.attrs["ess_in_use"] = float(1.0 / np.sum(np.exp(2 * logw)))
    if gp.diagnostics is not None:
        summary = diagnostics_summary(gp.diagnostics)
        tree.attrs.update({k: _attr(v) for k, v in summary.items()})
        tree.attrs["description"] = describe(gp.diagnostics)
    tree.attrs["label"] = str(getattr(gp, "label", type(gp).__name__))
    return tree


def describe(d) -> str:
    """One sentence on what a fit's draws are and how far to trust them."""
    if d.inference == "map":
        return "the posterior mode (MAP): one draw, no posterior spread"
    if d.inference == "fixed":
        return "given hyperparameters (known kernels, or kept from an earlier fit): no inference"
    if d.inference == "importance":
        return (
            f"{d.n_draws} draws resampled from {d.proposal or 'a proposal'} draws by their "
            f"importance weights (weights' ESS {d.ess_bulk_min:.0f}, Pareto k̂ {d.pareto_k:.2f}); "
            "no chains, so no r-hat, and ArviZ's ESS of the resample is not the weights'"
        )
    verdict = "converged" if d.converged and not d.problems() else "did not converge"
    weighed = ", weighed by importance sampling" if d.reweighted else ""
    return (
        f"NUTS, {d.chains} chains{weighed}: r-hat max {d.rhat_max:.3f}, bulk ESS min "
        f"{d.ess_bulk_min:.0f}, tail ESS min {d.ess_tail_min:.0f}, {d.divergences} "
        f"divergences; {verdict} (docs/concepts.md, 'Diagnostics')"
    )


def _inference(gp) -> str:
    d = gp.diagnostics
    return "unknown" if d is None else str(d.inference)


def _attr(value):
    """An attribute netCDF and ArviZ can hold."""
    if isinstance(value, bool | np.bool_):
        return int(value)
    if isinstance(value, int | float | np.integer | np.floating):
        return float(value)
    return str(value)
