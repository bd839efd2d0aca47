"""How the GPs' hyperparameters are inferred (:class:`InferenceSettings`), validated
where it is built."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from pp_decomp.components.inference.nuts import NutsSettings
from pp_decomp.loop.settings.checks import check_warm_start
from pp_decomp.loop.settings.fast import FastSettings
from pp_decomp.validate import check_positive_int

# NUTS sizes the fast path's refits take from FastSettings, not from nuts_kwargs
FAST_OWNED = ("draws", "tune", "chains", "repairs")


@dataclass(frozen=True)
class InferenceSettings:
    """The inference of a run's GP hyperparameters and when it is redone.

    Parameters
    ----------
    method : {"map", "nuts", "fixed"}
        A posterior mode, full Bayes by NUTS, or known kernels (default ``"map"``).
    refit_every : int
        Refit every this many observations (default 1).
    nuts : NutsSettings
        Each NUTS fit's sampler settings (``nuts_kwargs``).
    max_draws : int
        Hyperparameter draws kept for prediction (default 256).
    warm_start : bool
        A MAP refit searches once from the last fit's mode (default False).
    fast : bool
        The fast full-Bayes path: draws reweighted between refits (default: on
        under ``"nuts"`` wherever it applies).
    fast_path : FastSettings
        Its refit policy (``fast_settings``), also the refresh policy of additive
        and correlated full-Bayes refits.

    Example
    -------
    >>> from pp_decomp.loop.settings import InferenceSettings
    >>> InferenceSettings(method="nuts").refit_every
    1
    """

    method: str = "map"
    refit_every: int = 1
    nuts: NutsSettings = field(default_factory=NutsSettings)
    max_draws: int = 256
    warm_start: bool = False
    fast: bool = False
    fast_path: FastSettings = field(default_factory=FastSettings)

    @classmethod
    def build(cls, method: str, strategy, kw: dict, correlated: bool) -> InferenceSettings:
        """Check the inference arguments of ``kw`` for ``method`` (already checked),
        the strategy object and whether the components are ``correlated``."""
        fast = kw.get("fast")
        if fast and method != "nuts":
            raise ValueError(
                f"fast=True is the full-Bayes path: needs inference='nuts', got {method!r}"
            )
        if fast is None:  # the fast path reweights independent component GPs
            fast = method == "nuts" and strategy.needs.fast_path and strategy.surrogate != "none"
            fast = fast and not correlated
        fast_path = kw.get("fast_settings") or FastSettings()
        if not isinstance(fast_path, FastSettings):
            raise TypeError(
                f"fast_settings must be a pp_decomp.loop.FastSettings; got {fast_path!r}"
            )
        return cls(
            method=method,
            refit_every=check_positive_int(kw.get("refit_every", 1), "refit_every"),
            nuts=_nuts_settings(kw.get("nuts_kwargs"), bool(fast)),
            max_draws=check_positive_int(kw.get("max_draws", 256), "max_draws"),
            warm_start=check_warm_start(kw.get("warm_start", False), strategy, method),
            fast=bool(fast),
            fast_path=fast_path,
        )


def nuts_from_kwargs(kwargs: dict | None) -> NutsSettings:
    """:class:`NutsSettings` from a user's ``nuts_kwargs``; an unknown key is named
    before any work."""
    kwargs = dict(kwargs or {})
    known = {f.name for f in fields(NutsSettings)}
    bad = sorted(set(kwargs) - known)
    if bad:
        raise TypeError(f"nuts_kwargs has unknown key(s) {bad}; known keys: {sorted(known)}")
    return NutsSettings(**kwargs)


def _nuts_settings(nuts_kwargs, fast: bool) -> NutsSettings:
    """The run's NUTS settings; sizes the fast path takes from FastSettings are refused
    there by name rather than ignored."""
    nuts_kwargs = dict(nuts_kwargs or {})
    sized = {k: nuts_kwargs[k] for k in FAST_OWNED if k in nuts_kwargs}
    if fast and sized:
        raise ValueError(
            f"nuts_kwargs={sized} sizes a NUTS fit at every step, which the fast "
            "full-Bayes path (fast=True, the default for inference='nuts' here) does "
            "not run: its refits take draws, tune, chains and repairs from "
            "fast_settings=FastSettings(...); pass them there, or fast=False"
        )
    return nuts_from_kwargs(nuts_kwargs)
