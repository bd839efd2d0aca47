"""The flu season as a function network: infections per age group, then hospital load,
then the season's cost (this package's problem for issue 69, on :mod:`models.flu`).

Nodes (inputs: the vaccinated fraction of each of the five age groups, under the
flu problem's dose budget)::

    sick_{a}   = the flu SIR season's sick days per person from group a   (reads every input)
    hospital   = 10⁵ γ LOS Σ_a r_a sick_a   bed-days per 100 000 people   (reads the five sick_a)
    cost       = c_bed hospital / 10⁵ + c_work (sick_20-49 + sick_50-64)  $ per person
                                                  (reads hospital and the working-age sick_a)

``γ sick_a`` is group ``a``'s cases per person (``γ = 1/4.8`` per day, the SIR's
recovery rate). The objective is ``cost``, minimised: it weighs the old, who are
hospitalised far more often, against the working-age groups whose sick days cost
work, where the flu problem counts every sick day alike. At the flu problem's
budget its optimum is still the flu problem's (vaccinate the children, which
stops the season for every group). The hospitalisation rates per case ``r_a``
rise with age as seasonal-influenza burden estimates do, ``LOS`` is the length of
stay in days, and the two costs put both terms on one scale; all four are this
module's assumptions, an illustration of a network rather than a costing.
"""

from __future__ import annotations

import json

import numpy as np

from pp_decomp.models.flu import GROUPS, FluParameters, domain, simulate
from pp_decomp.models.optima import cached_optimum
from pp_decomp.network import Network, Node, network_problem
from pp_decomp.problem import Problem

HOSPITAL_RATE = (0.003, 0.007, 0.016, 0.05, 0.08)  # r_a: hospitalisations per case, by group
STAY_DAYS = 5.0  # LOS
BED_DAY_COST = 2000.0  # c_bed, $ per bed-day
WORK_DAY_COST = 25.0  # c_work, $ per working-age sick day
WORKING = (1, 2)  # the groups 20-49 and 50-64


class _Season:
    """The SIR season of the last inputs asked: every ``sick_a`` node reads the same
    simulation, so one run serves the five."""

    def __init__(self, params: FluParameters):
        self.params, self.key, self.value = params, None, None

    def node(self, a: int):
        def sick(Z: np.ndarray) -> np.ndarray:
            key = Z.tobytes()
            if key != self.key:
                self.key, self.value = key, simulate(Z, self.params)
            return self.value[:, a].copy()

        return sick


def _hospital(params: FluParameters):
    rate = np.asarray(HOSPITAL_RATE) * params.recovery_rate * STAY_DAYS * 1e5
    return lambda Z: Z @ rate


def _cost(Z: np.ndarray) -> np.ndarray:
    return BED_DAY_COST * Z[:, 0] / 1e5 + WORK_DAY_COST * Z[:, 1:].sum(1)


def _network(params: FluParameters) -> Network:
    season = _Season(params)
    sick = [f"sick_{g}" for g in GROUPS]
    nodes = [Node(name, season.node(a), inputs=tuple(range(5))) for a, name in enumerate(sick)]
    nodes.append(Node("hospital", _hospital(params), parents=tuple(sick)))
    working = tuple(sick[a] for a in WORKING)
    nodes.append(Node("cost", _cost, parents=("hospital", *working)))
    return Network(nodes, dim=5)


def _optimum(params: FluParameters) -> dict:
    from pp_decomp.optim import maximize_box

    net = _network(params)
    x, v = maximize_box(
        lambda V: -net.objective(net.simulate(V)), domain(params), seed=0, n_raw=4096,
        n_starts=48, maxiter=500,
    )  # fmt: skip
    return {"x": x.tolist(), "value": float(-v)}


def flu_network(seed: int = 0, params: FluParameters | None = None) -> Problem:
    """The flu season as a 7-node network (module docstring); deterministic."""
    params = params or FluParameters()
    constants = dict(rate=HOSPITAL_RATE, stay=STAY_DAYS, bed=BED_DAY_COST, work=WORK_DAY_COST)
    key = "flu-network:" + json.dumps(constants, sort_keys=True) + params.key()
    return network_problem(
        _network(params),
        domain(params),
        maximize=False,
        optimum=cached_optimum(key, lambda: _optimum(params))["value"],
        name="flu-network",
        description="flu season as a network: sick days by age -> hospital bed-days -> cost",
        input_names=[f"vaccinated_{g}" for g in GROUPS],
        metadata={
            "seed": seed,
            "source": "the flu problem's SIR season (Prem et al. 2021 contacts, UN WPP 2024 "
            "population); hospital rates, stay and costs this module's assumptions",
        },
    )
