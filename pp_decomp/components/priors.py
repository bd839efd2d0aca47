"""Hyperparameter priors of a component GP (on unit-scaled inputs, standardised outputs)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Priors:
    """Priors of ``ℓ`` (ARD lengthscales), ``η`` (amplitude), ``σ`` (noise sd), ``α`` (RQ shape).

    Inputs are scaled to the unit box by the component's ``bounds`` and outputs
    standardised, so the defaults are on that scale:

    * ``ℓ_d ~ InverseGamma(ls_alpha, ls_beta)``: mean 0.3 and light mass below
      0.05, so the GP neither interpolates wildly nor ignores a dimension;
    * ``η ~ Gamma(eta_alpha, eta_beta)``: mean 1 (standardised output);
    * ``σ ~ Gamma(sigma_alpha, sigma_beta)``: mean 0.1, density zero at 0, so
      the noise cannot collapse at small ``T`` (DESIGN.md §5);
    * ``α ~ Gamma(alpha_alpha, alpha_beta)`` for the rational-quadratic kernel.
    """

    ls_alpha: float = 3.0
    ls_beta: float = 0.6
    eta_alpha: float = 2.0
    eta_beta: float = 2.0
    sigma_alpha: float = 2.0
    sigma_beta: float = 20.0
    alpha_alpha: float = 2.0
    alpha_beta: float = 1.0

    def __post_init__(self):
        for name, value in vars(self).items():
            if not (isinstance(value, int | float) and value > 0 and value < float("inf")):
                raise ValueError(f"Priors.{name} must be a finite number > 0; got {value!r}")
