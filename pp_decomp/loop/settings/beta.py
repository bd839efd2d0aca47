"""The default exploration schedule ``β_t`` of a strategy on a problem, and the additive
strategies' largest group."""

from __future__ import annotations

from pp_decomp.acquisition import (
    BetaDiscrete,
    BetaKandasamy,
    BetaRolland,
)
from pp_decomp.additive import AdditiveSettings
from pp_decomp.space import CandidateSet
from pp_decomp.strategies import get_strategy


def default_beta(strategy, problem, additive: AdditiveSettings):
    """The exploration schedule of a strategy on a problem, when the user gives none.

    The additive strategies use their papers' (``0.2 d log 2t``, ``0.5 log 2t``).
    The others, on a finite set, the scaled theoretical schedule of Wang et al.
    (:class:`BetaDiscrete`, ``J`` counted for a nonlinear ``g``, Wang Thm 8); on a
    box, Kandasamy et al.'s practice ``0.2 D log 2t`` (:class:`BetaKandasamy` with
    the box's dimension). The scaled box theorem (:class:`BetaContinuous`, Srinivas
    Thm 2) grows as ``0.4 D log t²``: 25 at t = 50 on flu's 5-D box, a bound five
    standard deviations above the mean that sends the maximiser to the box's faces
    (docs/design.md, "Exploration schedules").
    """
    spec = get_strategy(strategy).additive
    if spec is not None and spec.method == "kandasamy":
        return BetaKandasamy(max_group_size(spec, problem, additive))
    if spec is not None:
        return BetaRolland()
    if isinstance(problem.domain, CandidateSet):
        J = 1 if problem.linear is not None else problem.n_components
        return BetaDiscrete(problem.domain.size, n_components=J)
    return BetaKandasamy(problem.dim)


def max_group_size(spec, problem, additive: AdditiveSettings) -> int:
    """``d`` of Add-GP-UCB: the known groups' largest, or the settings' (default ``min(D, 3)``)."""
    if spec.structure == "oracle":
        return max(len(g) for g in problem.metadata["groups"])
    return additive.max_group_size or min(problem.dim, 3)
