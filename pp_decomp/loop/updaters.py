"""Model updaters: how the loop's surrogate models follow the data.

Every updater obeys one protocol (:class:`Updater`): ``update`` returns the
step's fitted GPs by name, ``state``/``restore`` carry whatever it keeps
between steps through a checkpoint.
:func:`~pp_decomp.loop.updater_factory.make_updater` picks one from the run's
settings and strategy:

* :class:`RefitUpdater`: hyperparameters by MAP or NUTS every ``refit_every``
  new observations, the last draws conditioned on the data in between
  (Emukit's ``FixedIntervalUpdater``);
* :class:`KnownKernelsUpdater`: GPs conditioned on known kernels, no inference;
* :class:`~pp_decomp.loop.update_fast.FastUpdater`: the fast full-Bayes path;
* :class:`~pp_decomp.loop.update_additive.AdditiveUpdater`: one additive GP whose
  structure is relearnt every ``n_cyc`` steps;
* :class:`~pp_decomp.loop.update_correlated.CorrelatedUpdater`: the components
  as one GP with correlated outputs (``correlated=True``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from pp_decomp._progress import status
from pp_decomp.components import ComponentGP, HyperDraws
from pp_decomp.composition import EntireGP
from pp_decomp.composition.outcome import forward
from pp_decomp.loop.component_models import loop_arguments
from pp_decomp.loop.records import fit_summary


@dataclass(frozen=True)
class LoopData:
    """The observations so far and the outputs each surrogate model regresses.

    ``X (n, d)``, ``Y (n, J)``; ``targets`` maps a model name to its outputs
    ``(n,)``: each component's ``y_j``, or ``"composed"`` / ``"additive"`` to the
    signed objective ``sign · g(y; x)`` (both for a strategy ``with_composed``).
    """

    X: np.ndarray
    Y: np.ndarray
    targets: dict

    @property
    def n(self) -> int:
        return self.X.shape[0]


def loop_data(opt) -> LoopData:
    """The optimiser's observations as its models regress them: the components under
    the outcome transform, or the signed objective for a composed or additive GP."""
    Y = forward(opt.settings.outcome_transform, opt.Y)
    if opt.strategy.surrogate == "decomposed":
        targets = {name: Y[:, j] for j, name in enumerate(opt.problem.component_names)}
        if opt.strategy.with_composed:
            targets["composed"] = opt.signed_objective()
    else:
        targets = {opt.strategy.surrogate: opt.signed_objective()}
    return LoopData(opt.X, Y, targets)


def gp_arguments(settings, problem, name: str, max_draws: int) -> dict:
    """``ComponentGP`` keyword arguments of the loop's GP ``name``, from the run settings
    (and the component's own model, where ``components=`` gave one)."""
    own = dict(settings.components).get(name)
    if own is not None:
        return loop_arguments(own, settings.priors, problem, name, max_draws)
    return dict(
        kernel=settings.kernel,
        input_dim=problem.dim,
        priors=settings.priors,
        bounds=problem.domain.bounds,
        name=name,
        max_draws=max_draws,
    )


def warm_start(settings, last) -> dict:
    """``fit`` arguments of a MAP refit under ``settings.warm_start``: one L-BFGS-B
    search from ``last``, the previous fit's draws (as Ax's ``warm_start_refit``
    with BoTorch's single start); nothing when it is off or there is no last fit,
    which then searches from ``restarts`` starts.

    One new observation moves the posterior mode little, so the search from the
    last mode converges in a few iterations where the default's three starts
    search afresh each step; a start drawn from the prior is what it gives up.
    """
    if not settings.warm_start or last is None:
        return {}
    return {"init": last, "restarts": 1}


class Updater(Protocol):
    """What the loop asks of a model updater."""

    def update(self, data: LoopData, t: int, rng: np.random.Generator, rec: dict) -> dict:
        """The fitted GPs of step ``t`` by name; refit summaries go into ``rec``."""

    def state(self) -> dict:
        """JSON-serialisable state kept between steps (for checkpoints)."""

    def restore(self, state: dict, data: LoopData) -> None:
        """Rebuild from :meth:`state` and the data it was saved with."""


class RefitUpdater(Updater):
    """MAP or NUTS refits every ``refit_every`` new observations after the design."""

    def __init__(self, settings, problem):
        self.settings, self.problem = settings, problem
        self.draws: dict[str, HyperDraws] = {}

    def _gp(self, name: str) -> ComponentGP:
        return ComponentGP(
            **gp_arguments(self.settings, self.problem, name, self.settings.max_draws)
        )

    def update(self, data, t, rng, rec):
        s = self.settings
        refit = not self.draws or (data.n - s.n_init) % s.refit_every == 0
        kw = vars(s.nuts) if s.inference == "nuts" else {}
        gps = {}
        for name, y in data.targets.items():
            gp = gps[name] = self._gp(name)
            if refit:
                status(f"fitting {name} ({s.inference.upper()})")
                gp.fit(
                    data.X, y, s.inference, seed=rng, **kw, **warm_start(s, self.draws.get(name))
                )
                self.draws[name] = gp.draws
                rec["refit"][name] = fit_summary(gp)
            else:
                gp.condition(data.X, y, self.draws[name])
        return gps

    def state(self) -> dict:
        return {"draws": {name: d.as_dict() for name, d in self.draws.items()}}

    def restore(self, state, data) -> None:
        self.draws = {
            n: self._gp(n).draws_type.from_dict(d) for n, d in state.get("draws", {}).items()
        }


class KnownKernelsUpdater(Updater):
    """GPs conditioned on known kernels: the components (with the known composed GP
    of ``sign · g`` where the data carry that target too), the known composed GP, or
    the entire GP of the signed linear composition."""

    def __init__(self, settings, problem, composed: bool):
        self.known, self.problem, self.composed = settings.known_kernels, problem, composed

    def _conditioned(self, name, X, y, draws, mean) -> ComponentGP:
        p = self.problem
        gp = ComponentGP(
            self.known.kernel, p.dim, bounds=p.domain.bounds, standardize=False, name=name
        )
        return gp.condition(X, y, draws, mean=mean)

    def update(self, data, t, rng, rec):
        known, p = self.known, self.problem
        if self.composed and known.composed is not None:
            return {"composed": self._composed(data)}
        comps = [
            self._conditioned(name, data.X, data.Y[:, j], known.draws[j], known.mean[j])
            for j, name in enumerate(p.component_names)
        ]
        if self.composed:
            entire = EntireGP(comps, p.linear.scaled(p.sign))
            return {"composed": entire.condition(data.X, data.Y)}
        gps = dict(zip(p.component_names, comps, strict=True))
        if "composed" in data.targets:
            gps["composed"] = self._composed(data)
        return gps

    def _composed(self, data) -> ComponentGP:
        """The GP of ``sign · g`` on its known kernel."""
        known, h = self.known, data.targets["composed"]
        mean = self.problem.sign * known.composed_mean
        return self._conditioned("composed", data.X, h, known.composed, mean)

    def state(self) -> dict:
        return {}

    def restore(self, state, data) -> None:
        pass
