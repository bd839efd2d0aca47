"""The additive strategies' updater: one additive GP of the signed objective whose
structure (and hyperparameters) is relearnt every ``n_cyc`` steps.

* Kandasamy et al. (``add-gp-ucb``): the decomposition by partial maximisation
  of the marginal likelihood over random partitions, the hyperparameters by the
  run's ``inference``; ``add-gp-ucb-oracle`` keeps the problem's known groups.
* Rolland et al. (``g-add-gp-ucb*``): dependency graph, lengthscales and noise
  together by Gibbs sampling; ``-oracle`` samples only lengthscales and noise
  on the known graph, ``-disjoint`` restricts graphs to disjoint cliques.

Under full Bayes (``inference="nuts"``, Kandasamy's strategies) the NUTS draws of
``θ | y_1..n0`` made at a relearning are not used as they are for the next
``n_cyc`` steps: every step weighs them by the observations since,
``log w_s = log p(y_{n0+1..n} | y_1..n0, θ_s)`` (read off the step's own
factorisation, :func:`~pp_decomp.components.posterior.batched.log_likelihood_after`),
and uses a systematic resample of them, the posterior ``θ | y_1..n`` by
sampling importance resampling (the fast path of the component GPs, applied to
the group kernels). When the weights fail the fast path's checks (ESS below
``ess_refit · S`` or Pareto ``k̂`` above its threshold,
:class:`~pp_decomp.loop.settings.FastSettings`) the hyperparameters are refit
on the current groups as the fast path refits a component: by importance
sampling from a proposal around the reweighted draws
(:mod:`pp_decomp.components.inference.refresh`, on the numpy density
:meth:`~pp_decomp.additive.gp.MapObjective.log_density`) where its weights pass
their checks, at most ``max_refreshes`` times in a row, else by NUTS
warm-started at them (``FastSettings.min_draws`` per chain after ``tune``);
the weights start again from that fit. A relearning refits the same way from
the previous draws on the new groups (NUTS runs from scratch only for the
first fit). The acquisition is
integrated over a systematic resample of :data:`ACQUISITION_DRAWS` of them:
maximising Add-GP-UCB group by group costs in proportion to the draws, and
with all 256 a step took 3-5 s at 40 observations on Kandasamy's D = 24
function. ``AdditiveSettings(reweight=False)`` keeps the relearning's draws,
all of them and unweighed.
"""

from __future__ import annotations

import json
import time

import numpy as np

from pp_decomp._runtime import status
from pp_decomp.additive import AdditiveDraws, AdditiveGP, gibbs_structure, learn_decomposition
from pp_decomp.additive.objective import ADDITIVE_PRIORS
from pp_decomp.additive.structure import default_amplitudes
from pp_decomp.components.gp.scaling import to_model_scale
from pp_decomp.components.inference.refresh import refresh_fit
from pp_decomp.components.posterior.batched import log_likelihood_after
from pp_decomp.components.posterior.incremental import (
    ess,
    pareto_k,
    resample,
    weights_degraded,
)
from pp_decomp.loop.records import fit_summary
from pp_decomp.loop.settings import max_group_size
from pp_decomp.loop.updaters.base import Updater
from pp_decomp.validate import as_generator

ACQUISITION_DRAWS = 32  # hyperparameter draws the acquisition integrates over under NUTS


class AdditiveUpdater(Updater):
    """See the module docstring; the structure is part of the checkpoint."""

    def __init__(self, settings, strategy, problem):
        self.settings, self.spec, self.problem = settings, strategy.additive, problem
        self.structure: dict | None = None

    def _gp(self, groups, **kw) -> AdditiveGP:
        p, priors = self.problem, ADDITIVE_PRIORS
        return AdditiveGP(
            groups, p.dim, priors=priors, bounds=p.domain.bounds, name="additive", **kw
        )

    def update(self, data, t, rng, notes):
        st, y = self.structure, data.targets["additive"]
        if st is not None and data.n - st["learned_at"] < self.settings.model.additive.n_cyc:
            draws = AdditiveDraws(**st["draws"])
            gp = self._gp(st["groups"])  # conditioning on given draws: tying is irrelevant
            gp.condition(data.X, y, draws)
            if self._reweights(draws):
                gp = self._reweighted(gp, draws, data, y, as_generator(rng), notes)
            return {"additive": gp}
        rng = as_generator(rng)
        start = time.perf_counter()
        status("learning the additive structure")
        refreshes = 0
        if self.spec.method == "kandasamy":
            (gp, refreshes), edges = self._kandasamy(data, y, rng), []
        else:
            gp, edges = self._rolland(data, y, rng)
        self.structure = {
            "groups": [list(g) for g in gp.groups],
            "edges": edges,
            "draws": gp.draws.as_dict(),
            "learned_at": data.n,
            "refreshes": refreshes,
        }
        # structure learning included in the fit time
        notes.refit = {"additive": fit_summary(gp, time.perf_counter() - start)}
        notes.structure = json.dumps([list(g) for g in gp.groups])
        if self._reweights(gp.draws):
            gp.keep_draws(resample(np.zeros(gp.draws.n_draws), rng, ACQUISITION_DRAWS))
        return {"additive": gp}

    def _reweights(self, draws: AdditiveDraws) -> bool:
        s = self.settings
        return (
            s.inference.method == "nuts"
            and s.model.additive.reweight
            and self.spec.method == "kandasamy"
            and draws.n_draws > 1
        )

    def _reweighted(self, gp, draws, data, y, rng, notes) -> AdditiveGP:
        """``gp`` on a resample of ``draws`` weighted by the observations since
        their fit, or refit on its groups (:meth:`_refit`) when the weights fail."""
        st, fast = self.structure, self.settings.inference.fast_path
        n0 = st.get("fit_n", st["learned_at"])
        logw = log_likelihood_after(gp.posterior.L_inv, gp.posterior.y, n0)
        S, e, k = len(logw), ess(logw), pareto_k(logw)
        notes.ess, notes.pareto_k = {"additive": e}, {"additive": k}
        if weights_degraded(e, k, S, fast.ess_refit, fast.k_threshold(S)):
            start = time.perf_counter()
            status("refitting the additive GP's hyperparameters")
            current = draws.subset(resample(logw, rng))
            gp, st["refreshes"] = self._refit(st["groups"], current, data, y, rng)
            st["draws"], st["fit_n"] = gp.draws.as_dict(), data.n
            notes.refit = {"additive": fit_summary(gp, time.perf_counter() - start)}
            logw = np.zeros(gp.draws.n_draws)
        return gp.keep_draws(resample(logw, rng, ACQUISITION_DRAWS))

    def _refit(self, groups, current: AdditiveDraws, data, y, rng) -> tuple[AdditiveGP, int]:
        """The hyperparameters on ``groups`` refit from ``current`` (draws of the
        posterior so far), and the refreshes in a row since NUTS last ran: by
        importance sampling from a proposal around them where its weights pass
        their checks (:func:`refresh_fit`, at most ``max_refreshes`` in a row),
        else by NUTS warm-started at them."""
        fast, s = self.settings.inference.fast_path, self.settings
        refreshes = (self.structure or {}).get("refreshes", 0)
        gp = self._fitted_gp(groups)
        if refreshes < fast.max_refreshes and refresh_fit(
            gp, data.X, y, current, s.inference.max_draws, rng
        ):
            return gp, refreshes + 1
        sizes = dict(draws=fast.min_draws, tune=fast.tune)
        return self._fit(groups, data, y, rng, init=current, **sizes), 0

    def _fit(self, groups, data, y, rng, init, **sizes) -> AdditiveGP:
        """The hyperparameters on ``groups`` by the run's inference (MAP or NUTS;
        ``sizes`` override the run's NUTS settings)."""
        s = self.settings
        kw = {**vars(s.inference.nuts), **sizes} if s.inference.method == "nuts" else {}
        return self._fitted_gp(groups).fit(data.X, y, s.inference.method, seed=rng, init=init, **kw)

    def _fitted_gp(self, groups) -> AdditiveGP:
        """An additive GP on ``groups`` to fit: the run's draws kept and tying."""
        s = self.settings
        return self._gp(
            groups, max_draws=s.inference.max_draws, shared=s.model.additive.shared_hyperparameters
        )

    def _kandasamy(self, data, y, rng) -> tuple[AdditiveGP, int]:
        """The relearnt groups and hyperparameters, and the refreshes in a row: a
        full-Bayes relearning starts as a refit from the previous draws."""
        s, st, p = self.settings, self.structure, self.problem
        if self.spec.structure == "oracle":
            groups = [tuple(int(v) for v in g) for g in p.metadata["groups"]]
        else:
            Xs, ys, _, _ = to_model_scale(data.X, y, p.domain.bounds)
            prev = None if st is None else AdditiveDraws(**st["draws"])
            ls = 0.3 if prev is None else np.exp(np.log(prev.ls).mean(0))
            sigma = 0.1 if prev is None else float(prev.sigma.mean())
            groups, _ = learn_decomposition(
                Xs,
                ys,
                max_group_size(self.spec, p, s.model.additive),
                np.broadcast_to(ls, (p.dim,)),
                sigma,
                current=None if st is None else st["groups"],
                n_candidates=s.model.additive.n_decompositions,
                seed=rng,
                search=s.model.additive.decomposition_search,
            )
        init = None
        if st is not None and len(st["groups"]) == len(groups):
            init = AdditiveDraws(**st["draws"])
        if init is not None and self._reweights(init):
            return self._refit(groups, init, data, y, rng)
        return self._fit(groups, data, y, rng, init), 0

    def _rolland(self, data, y, rng) -> tuple[AdditiveGP, list]:
        a, st, p = self.settings.model.additive, self.structure, self.problem
        known = self.spec.structure == "oracle"
        Xs, ys, _, _ = to_model_scale(data.X, y, p.domain.bounds)
        res = gibbs_structure(
            Xs,
            ys,
            edges=p.metadata["edges"] if known else (st or {}).get("edges", ()),
            ls=None if st is None else np.asarray(st["draws"]["ls"])[0],
            sigma=0.1 if st is None else float(np.asarray(st["draws"]["sigma"])[0]),
            ls_grid=a.ls_grid,
            sigma_grid=a.sigma_grid,
            p=a.edge_prob,
            overlap=self.spec.overlap,
            max_clique=max(a.max_clique, 2),
            n_evals=a.gibbs_evals,
            learn_graph=not known,
            seed=rng,
        )
        # with learn_graph=False the groups are the known graph's maximal cliques
        draws = AdditiveDraws(res.ls[None], default_amplitudes(res.groups)[None], [res.sigma])
        gp = self._gp(res.groups).condition(data.X, y, draws)
        return gp, [list(e) for e in res.edges]

    def state(self) -> dict:
        return {"structure": self.structure}

    def restore(self, state, data) -> None:
        self.structure = state.get("structure")
