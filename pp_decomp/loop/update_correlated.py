"""The updater of correlated components: one coregionalised GP of all J outputs.

Every ``refit_every`` new observations the hyperparameters (shared lengthscales,
each component's amplitude and noise, the correlation between components) are
refit by MAP or NUTS, warm-started at the last draws; in between those draws
are conditioned on the new data. The step's models are one
:class:`~pp_decomp.components.coregion_view.CorrelatedComponent` per component,
all views of the same joint posterior.
"""

from __future__ import annotations

import numpy as np

from pp_decomp._progress import status
from pp_decomp.components.coregion import CorrelatedComponents
from pp_decomp.components.coregion_posterior import CoregionDraws
from pp_decomp.loop.updaters import Updater


def correlated_summary(joint: CorrelatedComponents, j: int) -> dict:
    """Component ``j``'s share of a refit, with the keys of
    :func:`~pp_decomp.loop.records.fit_summary`, plus its mean correlation with the others."""
    d, dr = joint.diagnostics, joint.draws
    others = np.delete(dr.corr[:, j, :], j, axis=1)
    return {
        "ls_mean": dr.ls.mean(0),
        "eta_mean": float(dr.eta[:, j].mean()),
        "sigma_mean": float(dr.sigma[:, j].mean()),
        "rhat_max": d.rhat_max,
        "ess_bulk_min": d.ess_bulk_min,
        "ess_tail_min": d.ess_tail_min,
        "divergences": d.divergences,
        "repairs": d.attempts - 1,
        "converged": bool(d.converged),
        "reweighted": bool(d.reweighted),
        "fit_pareto_k": d.pareto_k,
        "fit_seconds": d.seconds,
        "corr_mean": float(others.mean()),
    }


class CorrelatedUpdater(Updater):
    """MAP or NUTS refits of :class:`CorrelatedComponents` every ``refit_every``
    new observations after the design."""

    def __init__(self, settings, problem):
        self.settings, self.problem = settings, problem
        self.draws: CoregionDraws | None = None

    def _model(self) -> CorrelatedComponents:
        s, p = self.settings, self.problem
        return CorrelatedComponents(
            s.kernel,
            p.dim,
            p.component_names,
            priors=s.priors,
            bounds=p.domain.bounds,
            max_draws=s.max_draws,
        )

    def update(self, data, t, rng, rec):
        s = self.settings
        joint = self._model()
        refit = self.draws is None or (data.n - s.n_init) % s.refit_every == 0
        if refit:
            status(f"fitting correlated components ({s.inference.upper()})")
            kw = {"draws": s.nuts.draws, "tune": s.nuts.tune, "chains": s.nuts.chains}
            joint.fit(data.X, data.Y, s.inference, seed=rng, init=self.draws, **kw)
            self.draws = joint.draws
            for j, name in enumerate(joint.names):
                rec["refit"][name] = correlated_summary(joint, j)
        else:
            joint.condition(data.X, data.Y, self.draws)
        return {c.name: c for c in joint.components}

    def state(self) -> dict:
        return {"draws": None if self.draws is None else self.draws.as_dict()}

    def restore(self, state, data) -> None:
        d = state.get("draws")
        self.draws = None if d is None else CoregionDraws.from_dict(d)
