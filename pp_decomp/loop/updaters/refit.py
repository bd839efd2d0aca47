"""Updaters that refit every few observations (MAP or NUTS), or condition on known kernels."""

from __future__ import annotations

import time

from pp_decomp._runtime import status, usable_cores
from pp_decomp.components import ComponentGP, HyperDraws
from pp_decomp.components.inference.compiled import map_searches
from pp_decomp.composition import EntireGP
from pp_decomp.loop.records import fit_summary
from pp_decomp.loop.updaters.base import Updater, gp_arguments, warm_start


class RefitUpdater(Updater):
    """MAP or NUTS refits every ``refit_every`` new observations after the design."""

    def __init__(self, settings, problem):
        self.settings, self.problem = settings, problem
        self.draws: dict[str, HyperDraws] = {}

    def _gp(self, name: str, data=None) -> ComponentGP:
        """The loop's GP ``name`` before its fit (``data``: what it will be fitted on)."""
        return ComponentGP(
            **gp_arguments(self.settings, self.problem, name, self.settings.inference.max_draws)
        )

    def _training(self, name: str, data) -> tuple:
        """What GP ``name`` is fitted on: the run's ``X`` and its target."""
        return data.X, data.targets[name]

    def refits(self, data) -> bool:
        """Whether :meth:`update` on ``data`` refits (else it conditions on the last draws)."""
        every = self.settings.inference.refit_every
        return not self.draws or (data.told - self.settings.n_init) % every == 0

    def update(self, data, t, rng, notes):
        s = self.settings
        refit = self.refits(data)
        gps = {name: self._gp(name, data) for name in data.targets}
        if not refit:
            for name in data.targets:
                gps[name].condition(*self._training(name, data), self.draws[name])
            return gps
        if s.inference.method == "map":
            self._fit_map(gps, data, rng)
        for name in data.targets:
            if s.inference.method == "nuts":
                status(f"fitting {name} (NUTS)")
                gps[name].fit(
                    *self._training(name, data),
                    "nuts",
                    seed=rng,
                    **vars(s.inference.nuts),
                    **self._warm(name),
                )
            self.draws[name] = gps[name].draws
            notes.refit[name] = fit_summary(gps[name])
        return gps

    def _warm(self, name: str) -> dict:
        return warm_start(self.settings, self.draws.get(name))

    def _fit_map(self, gps: dict, data, rng) -> None:
        """Every GP's MAP fit, their searches at once on the cores this process may
        use (:func:`~pp_decomp._runtime.usable_cores`): the starts are drawn from
        ``rng`` in the GPs' order first, so the fits are those of one GP after
        another."""
        status(f"fitting {', '.join(gps)} (MAP)")
        start = time.perf_counter()
        searches = [
            gps[name].prepare_map(*self._training(name, data), seed=rng, **self._warm(name))
            for name in data.targets
        ]
        bests = map_searches(searches, usable_cores())
        seconds = (time.perf_counter() - start) / len(gps)  # the step's fits share the cores
        for gp, search, best in zip(gps.values(), searches, bests, strict=True):
            gp.adopt_map(search, best, seconds)

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
        self.known, self.problem, self.composed = settings.model.known_kernels, problem, composed

    def _conditioned(self, name, X, y, draws, mean) -> ComponentGP:
        p = self.problem
        gp = ComponentGP(
            self.known.kernel, p.dim, bounds=p.domain.bounds, standardize=False, name=name
        )
        return gp.condition(X, y, draws, mean=mean)

    def update(self, data, t, rng, notes):
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
