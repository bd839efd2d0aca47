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


def _lazy(module: str, func: str, **fixed):
    def factory(**kw):
        from importlib import import_module

        return getattr(import_module(f"pp_decomp.models.{module}"), func)(**fixed, **kw)

    return factory


PROBLEMS: dict[str, ProblemEntry] = {
    "perceived-temperature": ProblemEntry(
        _perceived,
        "perceived temperature (NWS heat index / wind chill) at 836 real US "
        "stations, 18 Mar 1995; find the warmest-feeling station (Wang 2019)",
    ),
    "perceived-temperature-run": ProblemEntry(
        _lazy("perceived_temperature", "perceived_temperature", split="run", known_kernels=True),
        "the paper's protocol: perceived temperature on two thirds of the stations, "
        "with SE kernels fitted by MAP on the other third (Wang 2019)",
    ),
    "flu": ProblemEntry(
        _flu,
        "age-stratified SIR flu season, real US contacts + population, 5 vaccination "
        "rates under a budget, minimise sick days (Wang 2019)",
    ),
    "synthetic": ProblemEntry(
        _synthetic, "sum of J=10 SE GP samples on 1000 grid points of [0,1], maximise (Wang 2019)"
    ),
    "tuberculosis": ProblemEntry(
        _lazy("tuberculosis", "tuberculosis"),
        "age-structured SEIS TB model, India contacts, case-finding budget, exact "
        "fragmentation decomposition with policy-dependent weights (Wang slides)",
    ),
    "branin": ProblemEntry(
        _lazy("classic", "branin_problem"), "negated Branin-Hoo, 2-D box (Contal 2014)"
    ),
    "goldstein-price": ProblemEntry(
        _lazy("classic", "goldstein_price_problem"),
        "negated Goldstein-Price, 2-D box (Contal 2014)",
    ),
    "himmelblau": ProblemEntry(
        _lazy("classic", "himmelblau_problem"), "negated tilted Himmelblau, 2-D box (Contal 2014)"
    ),
    "gaussian-mixture": ProblemEntry(
        _lazy("classic", "gaussian_mixture_problem"),
        "3 Gaussian bumps + GP perturbation on a 40x40 grid (Contal 2014)",
    ),
    "gp-sample-2d": ProblemEntry(
        _lazy("classic", "gp_sample_problem", dim=2), "SE GP sample on a 30x30 grid (Contal 2014)"
    ),
    "gp-sample-4d": ProblemEntry(
        _lazy("classic", "gp_sample_problem", dim=4), "SE GP sample on 1000 points of [0,1]^4"
    ),
    "rolland-star": ProblemEntry(
        _lazy("graphs", "rolland", graph="star"),
        "SE GP samples on the edges of a star graph, D=10 (Rolland 2018)",
    ),
    "rolland-grid": ProblemEntry(
        _lazy("graphs", "rolland", graph="grid"),
        "SE GP samples on the edges of a 2x5 grid graph, D=10 (Rolland 2018)",
    ),
    "kandasamy-10-3-3": ProblemEntry(
        _lazy("additive", "kandasamy", D=10, d=3, M=3),
        "additive trimodal, D=10, 3 groups of 3 (Kandasamy 2015)",
    ),
    "kandasamy-24-6-4": ProblemEntry(
        _lazy("additive", "kandasamy", D=24, d=6, M=4),
        "additive trimodal, D=24, 4 groups of 6 (Kandasamy 2015)",
    ),
    "kandasamy-40-5-8": ProblemEntry(
        _lazy("additive", "kandasamy", D=40, d=5, M=8),
        "additive trimodal, D=40, 8 groups of 5 (Kandasamy 2015)",
    ),
}


def get_problem(name: str, **kwargs):
    """Build the problem called ``name`` (``seed=`` picks the instance where random)."""
    if name not in PROBLEMS:
        raise ValueError(f"problem must be one of {sorted(PROBLEMS)}; got {name!r}")
    return PROBLEMS[name].factory(**kwargs)
