"""How the next input is chosen (:class:`AcquisitionSettings`), validated where it is
built."""

from __future__ import annotations

from dataclasses import dataclass

from pp_decomp.loop.settings.beta import default_beta
from pp_decomp.validate import check_choice, check_positive_int

METHODS = ("auto", "lbfgs", "direct")


@dataclass(frozen=True)
class AcquisitionSettings:
    """The acquisition of a run's strategy.

    Parameters
    ----------
    beta : callable
        ``t -> β_t``, the exploration schedule of UCB-style rules (default
        :func:`~pp_decomp.loop.settings.default_beta` for the strategy and problem).
    mc_samples : int
        Joint posterior samples per input of Monte Carlo acquisitions (default 512).
    method : {"auto", "lbfgs", "direct"}
        The maximiser on a box (``acq_method``; default ``"auto"``).

    Example
    -------
    >>> from pp_decomp.loop.settings import AcquisitionSettings
    >>> AcquisitionSettings(beta=lambda t: 4.0).mc_samples
    512
    """

    beta: object
    mc_samples: int = 512
    method: str = "auto"

    @classmethod
    def build(cls, strategy, problem, additive, kw: dict) -> AcquisitionSettings:
        """Check the acquisition arguments of ``kw`` for the strategy object on
        ``problem`` (its additive settings decide the default ``β_t``)."""
        beta = kw.get("beta")
        beta = default_beta(strategy, problem, additive) if beta is None else beta
        if not callable(beta):
            raise TypeError(f"beta must be a callable t -> beta_t; got {beta!r}")
        return cls(
            beta=beta,
            mc_samples=check_positive_int(kw.get("mc_samples", 512), "mc_samples"),
            method=check_choice(kw.get("acq_method", "auto"), "acq_method", METHODS),
        )
