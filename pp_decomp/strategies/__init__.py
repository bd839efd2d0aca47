"""Named strategies: the surrogate each uses, how it chooses, and what it needs."""

from pp_decomp.strategies.catalog import STRATEGIES, AdditiveSpec, Context, Needs, Strategy
from pp_decomp.strategies.compat import (
    UnsupportedSetting,
    canonical_strategy,
    check_strategy,
    decomposed_bound,
    default_strategy,
    get_strategy,
    unsupported,
)

__all__ = [
    "STRATEGIES",
    "AdditiveSpec",
    "Context",
    "Needs",
    "Strategy",
    "UnsupportedSetting",
    "canonical_strategy",
    "check_strategy",
    "decomposed_bound",
    "default_strategy",
    "get_strategy",
    "unsupported",
]
