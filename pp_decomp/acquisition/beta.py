"""Exploration schedules, callables ``t -> β_t`` (docs/design.md, "Exploration schedules")."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np


@dataclass(frozen=True)
class BetaDiscrete:
    """Srinivas et al. Thm 1 / Wang Thm 7-8 on a finite domain.

    ``β_t = scale · 2 log(|X| J t² π² / (6δ))``; ``J = 1`` for linear decompositions,
    the number of components for general ones (Wang Thm 8). The papers' experiments
    use ``scale = 1/5``.
    """

    n_points: int
    delta: float = 0.05
    n_components: int = 1
    scale: float = 0.2

    def __call__(self, t: int) -> float:
        n = self.n_points * self.n_components
        return self.scale * 2.0 * np.log(n * t**2 * np.pi**2 / (6.0 * self.delta))

    def describe(self) -> dict:
        """The schedule and its settings, as stored in a run's attributes."""
        return {"name": "discrete", **asdict(self)}


@dataclass(frozen=True)
class BetaContinuous:
    """Srinivas et al. Thm 2 on ``[0, r]^d`` with derivative bounds ``a, b``.

    ``β_t = scale · (2 log(2 t² π² / (3δ)) + 2d log(t² d b r sqrt(log(4da/δ))))``.
    """

    dim: int
    delta: float = 0.05
    a: float = 1.0
    b: float = 1.0
    r: float = 1.0
    scale: float = 0.2

    def __call__(self, t: int) -> float:
        d = self.dim
        first = 2.0 * np.log(2.0 * t**2 * np.pi**2 / (3.0 * self.delta))
        inner = t**2 * d * self.b * self.r * np.sqrt(np.log(4.0 * d * self.a / self.delta))
        return self.scale * (first + 2.0 * d * np.log(max(inner, 1.0)))

    def describe(self) -> dict:
        """The schedule and its settings, as stored in a run's attributes."""
        return {"name": "continuous", **asdict(self)}


@dataclass(frozen=True)
class BetaKandasamy:
    """Kandasamy et al. practice: ``β_t = 0.2 d log(2t)`` (``d`` the group size)."""

    dim: int

    def __call__(self, t: int) -> float:
        return 0.2 * self.dim * np.log(2.0 * t)

    def describe(self) -> dict:
        """The schedule and its settings, as stored in a run's attributes."""
        return {"name": "kandasamy", **asdict(self)}


@dataclass(frozen=True)
class BetaRolland:
    """Rolland et al. practice: ``β_t = 0.5 log(2t)``."""

    def __call__(self, t: int) -> float:
        return 0.5 * np.log(2.0 * t)

    def describe(self) -> dict:
        """The schedule and its settings, as stored in a run's attributes."""
        return {"name": "rolland"}


@dataclass(frozen=True)
class BetaConstant:
    """A fixed ``β``."""

    value: float

    def __call__(self, t: int) -> float:
        return float(self.value)

    def describe(self) -> dict:
        """The schedule and its settings, as stored in a run's attributes."""
        return {"name": "constant", **asdict(self)}


_SCHEDULES = {
    "discrete": BetaDiscrete,
    "continuous": BetaContinuous,
    "kandasamy": BetaKandasamy,
    "rolland": BetaRolland,
    "constant": BetaConstant,
}


def beta_from_description(desc: dict):
    """Rebuild a schedule from its ``describe()`` dict (as stored in a run's settings).

    Raises a ValueError for a schedule this module does not define (a user's own
    callable), which must then be passed again when resuming.
    """
    kwargs = dict(desc)
    name = kwargs.pop("name", None)
    if name not in _SCHEDULES:
        raise ValueError(
            f"beta schedule {name!r} is not one of {sorted(_SCHEDULES)}: pass beta=... "
            "to Optimizer.resume"
        )
    return _SCHEDULES[name](**kwargs)
