"""Compositions of component posteriors into a posterior of the objective."""

from pp_decomp.composition.entire import EntireGP
from pp_decomp.composition.linear import LinearComposition

__all__ = ["EntireGP", "LinearComposition"]
