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
        "perceived temperature (NWS heat index / wind chill) from temperature, dew "
        "point and wind at 836 real US stations, 18 Mar 1995; find the "
        "warmest-feeling station (Wang 2019)",
    ),
    "perceived-temperature-run": ProblemEntry(
        _lazy("perceived_temperature", "perceived_temperature", split="run", known_kernels=True),
        "the paper's protocol: perceived temperature on two thirds of the stations, "
        "with SE kernels fitted by MAP on the other third (Wang 2019)",
    ),
    "perceived-temperature-july": ProblemEntry(
        _lazy("perceived_temperature", "perceived_temperature", day="2019-07-15"),
        "perceived temperature at 1494 real US stations on a warm evening, 15 Jul 2019 "
        "00Z: the heat index applies at 71% of them",
    ),
    "perceived-temperature-july-run": ProblemEntry(
        _lazy(
            "perceived_temperature",
            "perceived_temperature",
            day="2019-07-15",
            split="run",
            known_kernels=True,
        ),
        "the paper's protocol on the warm evening: two thirds of the stations, SE kernels "
        "fitted by MAP on the other third",
    ),
    "perceived-temperature-rh-run": ProblemEntry(
        _lazy(
            "perceived_temperature",
            "perceived_temperature",
            humidity="rh",
            split="run",
            known_kernels=True,
        ),
        "perceived-temperature-run with relative humidity as the humidity component "
        "instead of the dew point",
    ),
    "perceived-temperature-july-rh-run": ProblemEntry(
        _lazy(
            "perceived_temperature",
            "perceived_temperature",
            day="2019-07-15",
            humidity="rh",
            split="run",
            known_kernels=True,
        ),
        "perceived-temperature-july-run with relative humidity as the humidity component",
    ),
    "flu": ProblemEntry(
        _flu,
        "age-stratified SIR flu season, real US contacts + population, 5 vaccination "
        "rates under a budget, minimise sick days (Wang 2019)",
    ),
    "flu-equity": ProblemEntry(
        _lazy("flu_equity", "flu_equity"),
        "the flu season judged by its worst-off age group: g = smooth maximum of the "
        "groups' own sick days per person (nonlinear)",
    ),
    "synthetic": ProblemEntry(
        _synthetic, "sum of J=10 SE GP samples on 1000 grid points of [0,1], maximise (Wang 2019)"
    ),
    "tuberculosis": ProblemEntry(
        _lazy("tuberculosis", "tuberculosis"),
        "age-structured SEIS TB model, India contacts, case-finding budget, exact "
        "fragmentation decomposition with policy-dependent weights (Wang slides)",
    ),
    "tuberculosis-110": ProblemEntry(
        _lazy("tuberculosis", "tuberculosis_110"),
        "the TB model at the slides' size: 110 single ages, 25 years, budget, 23 yearly "
        "components with known policy-dependent weights (Wang slides)",
    ),
    "environmental": ProblemEntry(
        _lazy("environmental", "environmental"),
        "pollutant spill model calibration: 4-D box, 12 outputs, g = -SSE to observed "
        "concentrations (Astudillo & Frazier 2019)",
    ),
    "rates": ProblemEntry(
        _lazy("rates", "rates"),
        "a process's throughput (spanning 400x), a sharply peaked impurity and a smooth "
        "energy cost on the unit cube: positive, skewed outputs (written for issue 66)",
    ),
    "front": ProblemEntry(
        _lazy("front", "front"),
        "a sharp front, a corner plume and a smooth background on the unit square: a "
        "non-stationary field (written for issue 66)",
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
        _lazy("contal", "gaussian_mixture_problem"),
        "3 Gaussian bumps + GP perturbation on a 40x40 grid, 1% noise (Contal 2014)",
    ),
    "gp-sample-2d": ProblemEntry(
        _lazy("contal", "gp_sample_problem", dim=2),
        "Matérn 3/2 GP sample at 1000 points of [0,40]^2, lengthscale 1, its kernel known "
        "(Contal 2014)",
    ),
    "gp-sample-4d": ProblemEntry(
        _lazy("contal", "gp_sample_problem", dim=4),
        "Matérn 3/2 GP sample at 1000 points of [0,40]^4, lengthscale 16, its kernel known "
        "(Contal 2014)",
    ),
    "mackey-glass": ProblemEntry(
        _lazy("mackey_glass", "mackey_glass"),
        "the Mackey-Glass series 85 steps ahead over 1000 6-D delay vectors, no noise "
        "(Contal 2014)",
    ),
    **{
        f"{name}-known": ProblemEntry(
            factory,
            f"{name} under Contal 2014's protocol: an SE kernel fitted by MAP on half of "
            f"its {where}, for inference 'fixed'",
        )
        for name, factory, where in (
            ("branin", _lazy("contal", "search_set_problem", name="branin"), "1000 points"),
            (
                "goldstein-price",
                _lazy("contal", "search_set_problem", name="goldstein-price"),
                "1000 points",
            ),
            (
                "himmelblau",
                _lazy("contal", "search_set_problem", name="himmelblau"),
                "1000 points",
            ),
            (
                "gaussian-mixture",
                _lazy("contal", "gaussian_mixture_problem", known_kernels=True),
                "grid",
            ),
            (
                "mackey-glass",
                _lazy("mackey_glass", "mackey_glass", known_kernels=True),
                "delay vectors",
            ),
        )
    },
    "ackley-network": ProblemEntry(
        _lazy("networks", "ackley_network"),
        "negated Ackley 6-D as a 3-node function network (Astudillo & Frazier 2021)",
    ),
    "alpine2-network": ProblemEntry(
        _lazy("networks", "alpine2_network"),
        "Alpine2 as a 6-node chain: each node reads one input and the node before "
        "(Astudillo & Frazier 2021)",
    ),
    "epidemic-network": ProblemEntry(
        _lazy("networks", "epidemic_network"),
        "two-group SI epidemic calibration over 3 periods, 13 inputs, 6 nodes "
        "(Astudillo & Frazier 2021)",
    ),
    "flu-network": ProblemEntry(
        _lazy("flu_network", "flu_network"),
        "the flu season as a 7-node network: sick days per age group -> hospital "
        "bed-days -> cost, minimised under the dose budget",
    ),
    "independent-sites": ProblemEntry(
        _lazy("contal", "independent_sites"),
        "100 uncorrelated N(0,1) sites, their kernel known: GP-MI's linear regret "
        "(Contal 2014's erratum)",
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
    "kandasamy-96-5-19": ProblemEntry(
        _lazy("additive", "kandasamy", D=96, d=5, M=19),
        "additive trimodal, D=96, 19 groups of 5 (Kandasamy 2015)",
    ),
    "kandasamy-narrow-24-6-4": ProblemEntry(
        _lazy("additive", "kandasamy", D=24, d=6, M=4, variant="narrow"),
        "additive trimodal, D=24, 4 groups of 6, the narrow first reading of the paper",
    ),
}


def get_problem(name: str, seed: int = 0, **kwargs):
    """Build the problem called ``name`` (``seed`` picks the instance where random).

    ``name`` is a shipped problem (:data:`PROBLEMS`) or a user's own, written
    ``package.module:factory`` for a function returning a :class:`pp_decomp.Problem`
    (or ``package.module:attr`` naming a Problem made in Python, used as it is,
    through a copy);
    the factory gets ``seed=`` if it takes that argument. The instance's seed is
    recorded in ``problem.metadata["seed"]``, so that a resume on another
    instance is refused.
    """
    if ":" in str(name):
        problem = _user_problem(str(name), seed, **kwargs)
    elif name in PROBLEMS:
        problem = PROBLEMS[name].factory(seed=seed, **kwargs)
    else:
        raise ValueError(
            f"problem must be one of {sorted(PROBLEMS)} or 'package.module:factory'; got {name!r}"
        )
    problem.metadata.setdefault("seed", seed)
    return problem


def check_problem_name(name: str) -> str:
    """``name`` if it names a shipped problem or looks like ``module:factory``, else a
    ValueError listing the choices (without importing or building anything)."""
    module, _, func = str(name).partition(":")
    if name in PROBLEMS or (module and func and func.isidentifier()):
        return name
    raise ValueError(
        f"problem must be one of {sorted(PROBLEMS)} or 'package.module:factory'; got {name!r}"
    )


def _user_problem(name: str, seed: int, **kwargs):
    import copy
    import inspect
    from importlib import import_module

    from pp_decomp.problem import Problem

    module, _, func = check_problem_name(name).partition(":")
    try:
        factory = getattr(import_module(module), func)
    except (ImportError, AttributeError) as err:
        raise ValueError(
            f"problem {name!r}: cannot import {func!r} from {module!r} ({err})"
        ) from err
    if isinstance(factory, Problem) and not kwargs:  # made in Python: no instance to pick
        # a copy, so that recording the seed leaves the user's object as it was
        problem = copy.copy(factory)
        problem.metadata = dict(factory.metadata)
        return problem
    if not callable(factory):
        raise TypeError(
            f"problem {name!r} must name a pp_decomp.Problem or a function returning one; "
            f"got {type(factory).__name__}"
        )
    try:
        takes_seed = "seed" in inspect.signature(factory).parameters
    except (TypeError, ValueError):
        takes_seed = False
    problem = factory(seed=seed, **kwargs) if takes_seed else factory(**kwargs)
    if not isinstance(problem, Problem):
        raise TypeError(
            f"problem {name!r}: the factory must return a pp_decomp.Problem; "
            f"got {type(problem).__name__}"
        )
    return problem
