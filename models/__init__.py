"""Problems for pp_decomp, installed as ``pp_decomp.models``.

Each problem gives an input domain, a component simulator returning J outputs,
the known composition ``g`` and, where it can be computed, the true optimum.
``get_problem(name, seed=...)`` builds one; ``PROBLEMS`` lists them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class ProblemEntry:
    factory: Callable
    summary: str


def _synthetic(**kw):
    from pp_decomp.models.synthetic import synthetic

    return synthetic(**kw)


PROBLEMS: dict[str, ProblemEntry] = {
    "synthetic": ProblemEntry(
        _synthetic, "sum of J=10 SE GP samples on 1000 grid points of [0,1], maximise (Wang 2019)"
    ),
}


def get_problem(name: str, **kwargs):
    """Build the problem called ``name`` (``seed=`` picks the instance where random)."""
    if name not in PROBLEMS:
        raise ValueError(f"problem must be one of {sorted(PROBLEMS)}; got {name!r}")
    return PROBLEMS[name].factory(**kwargs)
