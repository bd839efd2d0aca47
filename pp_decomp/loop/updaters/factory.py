"""Which updater keeps a run's models up to date (:mod:`pp_decomp.loop.updaters`)."""

from __future__ import annotations

from pp_decomp.kernels.builtin import compile_kernels
from pp_decomp.loop.updaters.additive import AdditiveUpdater
from pp_decomp.loop.updaters.base import Updater
from pp_decomp.loop.updaters.correlated import CorrelatedUpdater
from pp_decomp.loop.updaters.fast import FastUpdater
from pp_decomp.loop.updaters.network import NetworkUpdater
from pp_decomp.loop.updaters.refit import KnownKernelsUpdater, RefitUpdater


def make_updater(settings, strategy, problem, given: Updater | None = None) -> Updater | None:
    """The updater of a run: ``given`` (checked to have the protocol's methods), else
    the one the settings choose (``None`` for strategies without a model, e.g. random)."""
    if given is not None:
        if not all(callable(getattr(given, m, None)) for m in ("update", "state", "restore")):
            raise TypeError(f"updater must have update, state and restore; got {given!r}")
        return given
    if strategy.surrogate in ("none", "peer"):
        return None
    compile_kernels()  # here, not in the first fit inside an ask
    if strategy.surrogate == "additive":
        return AdditiveUpdater(settings, strategy, problem)
    if strategy.surrogate == "network":
        return NetworkUpdater(settings, problem)
    if settings.inference.method == "fixed":
        return KnownKernelsUpdater(settings, problem, composed=strategy.surrogate == "composed")
    if settings.model.correlated:
        return CorrelatedUpdater(settings, problem)
    if settings.inference.fast:
        return FastUpdater(settings, problem)
    return RefitUpdater(settings, problem)
