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


def _flu(**kw):
    from pp_decomp.models.flu import flu

    return flu(**kw)


def _perceived(**kw):
    from pp_decomp.models.perceived_temperature import perceived_temperature

    return perceived_temperature(**kw)


PROBLEMS: dict[str, ProblemEntry] = {
    "perceived-temperature": ProblemEntry(
        _perceived,
        "perceived temperature (NWS heat index / wind chill) at 836 real US "
        "stations, 18 Mar 1995; find the warmest-feeling station (Wang 2019)",
    ),
    "flu": ProblemEntry(
        _flu,
        "age-stratified SIR flu season, real US contacts + population, 5 vaccination "
        "rates under a budget, minimise sick days (Wang 2019)",
    ),
    "synthetic": ProblemEntry(
        _synthetic, "sum of J=10 SE GP samples on 1000 grid points of [0,1], maximise (Wang 2019)"
    ),
}


def get_problem(name: str, **kwargs):
    """Build the problem called ``name`` (``seed=`` picks the instance where random)."""
    if name not in PROBLEMS:
        raise ValueError(f"problem must be one of {sorted(PROBLEMS)}; got {name!r}")
    return PROBLEMS[name].factory(**kwargs)
