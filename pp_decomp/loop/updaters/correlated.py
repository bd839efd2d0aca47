"""The updater of correlated components: one coregionalised GP of all J outputs.

The step's models are one
:class:`~pp_decomp.components.correlated.view.CorrelatedComponent` per component,
all views of the same joint posterior
(:class:`~pp_decomp.components.correlated.model.CorrelatedComponents`).

* ``inference="map"``: the hyperparameters (shared lengthscales, each
  component's amplitude and noise, the correlation between components) are
  refit every ``refit_every`` new observations, warm-started at the last
  draws, which are conditioned on the new data in between.
* ``inference="nuts"``: a NUTS fit's draws are reweighted by every later
  observation, exactly (sequential importance sampling, ``w_s ∝ p(Y_new | Y_fit,
  θ_s)`` with the outputs' standardisation frozen at the fit), and used as an
  equal-weight systematic resample; a new NUTS fit, warm-started at them, is
  made when their ESS falls below ``fast_settings.ess_refit · S`` or the
  weights' Pareto ``k̂`` says the ESS cannot be trusted. The
  independent components' fast path (:mod:`pp_decomp.loop.updaters.fast`) does
  the same in the background; here the refit is made at once.
"""

from __future__ import annotations

import numpy as np

from pp_decomp._runtime import status
from pp_decomp.components.correlated.model import CorrelatedComponents
from pp_decomp.components.correlated.posterior import CoregionDraws
from pp_decomp.components.posterior.incremental import (
    ess,
    pareto_k,
    resample,
    weights_degraded,
)
from pp_decomp.loop.records import diagnostics_summary
from pp_decomp.loop.updaters.base import Updater, warm_start


def correlated_summary(joint: CorrelatedComponents, j: int) -> dict:
    """Component ``j``'s share of a refit, with the keys of
    :func:`~pp_decomp.loop.records.fit_summary`, plus its mean correlation with the others."""
    dr = joint.draws
    others = np.delete(dr.corr[:, j, :], j, axis=1)
    return {
        "ls_mean": dr.ls.mean(0),
        "eta_mean": float(dr.eta[:, j].mean()),
        "sigma_mean": float(dr.sigma[:, j].mean()),
        **diagnostics_summary(joint.diagnostics),
        "corr_mean": float(others.mean()),
    }


class CorrelatedUpdater(Updater):
    """Refits of :class:`CorrelatedComponents` (see the module docstring)."""

    def __init__(self, settings, problem):
        self.settings, self.problem = settings, problem
        self.draws: CoregionDraws | None = None  # MAP: the last fit's
        self.fitted: dict | None = None  # NUTS: the last fit's log draws, scale, likelihoods

    def _model(self) -> CorrelatedComponents:
        s, p = self.settings, self.problem
        return CorrelatedComponents(
            s.model.kernel,
            p.dim,
            p.component_names,
            priors=s.model.priors,
            bounds=p.domain.bounds,
            max_draws=s.inference.max_draws,
        )

    def _fit(self, joint, data, rng, notes, init) -> None:
        s = self.settings
        status(f"fitting correlated components ({s.inference.method.upper()})")
        # the sampler calls Python per gradient: two chains, one per core
        kw = {
            "draws": s.inference.nuts.draws,
            "tune": s.inference.nuts.tune,
            "chains": min(s.inference.nuts.chains, 2),
        }
        # the last draws are the first start whether or not the search stops there
        fit_kw = {**kw, "init": init, **warm_start(s, init)}
        joint.fit(data.X, data.Y, s.inference.method, seed=rng, **fit_kw)
        for j, name in enumerate(joint.names):
            notes.refit[name] = correlated_summary(joint, j)

    def update(self, data, t, rng, notes):
        joint = self._model()
        if self.settings.inference.method == "nuts":
            joint = self._update_bayes(joint, data, rng, notes)
        elif (
            self.draws is None
            or (data.n - self.settings.n_init) % self.settings.inference.refit_every == 0
        ):
            self._fit(joint, data, rng, notes, self.draws)
            self.draws = joint.draws
        else:
            joint.condition(data.X, data.Y, self.draws)
        return {c.name: c for c in joint.components}

    def _update_bayes(self, joint, data, rng, notes) -> CorrelatedComponents:
        """The step's model: the last fit's draws conditioned on the data, resampled
        by their weights, or a new fit. The conditioned posterior's factors give
        the draws' likelihoods, so each draw is factorised once per step."""
        f = self.fitted
        if f is not None:
            joint.condition(data.X, data.Y, joint.to_draws(f["Z"]), f["scale"])
            logw = joint.posterior.log_likelihoods() - f["loglik"]
            fs, S = self.settings.inference.fast_path, len(logw)
            if not weights_degraded(ess(logw), pareto_k(logw), S, fs.ess_refit, fs.k_threshold(S)):
                return joint.subset(resample(logw, rng))
        self._fit(joint, data, rng, notes, None if f is None else joint.to_draws(f["Z"]))
        loglik = joint.posterior.log_likelihoods()
        self.fitted = {"Z": joint.log_draws, "scale": joint.scale, "loglik": loglik}
        return joint

    def state(self) -> dict:
        f = self.fitted
        return {
            "draws": None if self.draws is None else self.draws.as_dict(),
            "fitted": None
            if f is None
            else {
                "Z": f["Z"].tolist(),
                "scale": [v.tolist() for v in f["scale"]],
                "loglik": f["loglik"].tolist(),
            },
        }

    def restore(self, state, data) -> None:
        d, f = state.get("draws"), state.get("fitted")
        self.draws = None if d is None else CoregionDraws.from_dict(d)
        self.fitted = None
        if f is not None:
            scale = tuple(np.asarray(v, dtype=float) for v in f["scale"])
            self.fitted = {
                "Z": np.asarray(f["Z"]),
                "scale": scale,
                "loglik": np.asarray(f["loglik"]),
            }
