"""Compositions of component posteriors into a posterior of the objective."""

from pp_decomp.composition.core import LinearComposition
from pp_decomp.composition.entire import EntireGP

__all__ = ["EntireGP", "LinearComposition"]
