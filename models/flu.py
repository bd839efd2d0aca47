"""Flu vaccination: an age-stratified SIR season (Wang et al. 2019, after Del Valle et al. 2013).

Five age groups ``0-19, 20-49, 50-64, 65-69, 70+``. The input is the vaccinated
fraction ``v_a ∈ [0, 1]`` of each group, under a dose budget
``Σ_a (N_a / N) v_a <= budget``. The system reports, per group, the sick days
per person of the whole population over one season, ``∫ I_a(t) dt / N``; the
objective is their sum, minimised (a linear decomposition with ``g_a ≡ 1``).

Model (force of infection with contact matrix ``C``, susceptibility ``s_a``)::

    dS_a/dt = -β s_a S_a Σ_b C_ab I_b / N_b
    dI_a/dt =  β s_a S_a Σ_b C_ab I_b / N_b - γ I_a

with ``S_a(0) = N_a (1 - ε v_a) - I_a(0)``, ``β`` set so that the next-generation
matrix ``K_ab = β s_a N_a C_ab / (γ N_b)`` has spectral radius ``R0``.

Data and parameters
-------------------
* ``C``: US contact matrix of Prem et al. (2021), PLoS Comput Biol 17(7):
  e1009098 (all settings), 16 five-year bins aggregated to the 5 groups with
  population-weighted rows; shipped offline by the PyPI package ``starsim-data``
  (GPL-3.0 data; loaded with ``starsim_data.load``, never ``fetch``).
* ``N_a``: UN World Population Prospects 2024, USA, 2020, both sexes
  (CC BY 3.0 IGO), from the same package.
* ``R0 = 1.28``: median basic reproduction number of seasonal influenza,
  Biggerstaff et al. (2014), BMC Infect Dis 14:480.
* ``γ = 1/4.8`` per day: mean duration of viral shedding ~4.8 days, Carrat et
  al. (2008), Am J Epidemiol 167(7):775-785.
* ``s_a = (1.0, 0.75, 0.6, 0.5, 0.5)``: relative susceptibility falling with
  age, following the age pattern of transmission parameters estimated by
  Wallinga, Teunis & Kretzschmar (2006), Am J Epidemiol 164(10):936-944
  (children most susceptible); the exact values are this module's assumption.
* ``ε = 0.59``: pooled efficacy of inactivated vaccine, Osterholm et al.
  (2012), Lancet Infect Dis 12(1):36-44.
* ``budget = 0.3`` doses per person; one season of 365 days; ``I_a(0) = 10⁻⁴ N_a``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

import numpy as np

from pp_decomp.models.demography import contact_data
from pp_decomp.models.optima import cached_optimum
from pp_decomp.problem import Problem
from pp_decomp.space import Box

GROUPS = ("0-19", "20-49", "50-64", "65-69", "70+")
_BINS = ((0, 4), (4, 10), (10, 13), (13, 14), (14, 16))  # 5-year bins 0-4 ... 75+ per group


@dataclass(frozen=True)
class FluParameters:
    r0: float = 1.28
    recovery_rate: float = 1 / 4.8
    susceptibility: tuple = (1.0, 0.75, 0.6, 0.5, 0.5)
    vaccine_efficacy: float = 0.59
    budget: float = 0.3
    days: float = 365.0
    dt: float = 0.5
    initial_infected: float = 1e-4
    year: int = 2020

    def key(self) -> str:
        """A stable text key of the parameters (for the optimum cache)."""
        return "flu:" + json.dumps(asdict(self), sort_keys=True)


def load_contact_data(year: int = 2020) -> tuple[np.ndarray, np.ndarray]:
    """US population ``N (5,)`` and aggregated contact matrix ``C (5, 5)`` (contacts/day)."""
    return contact_data("USA", year, _BINS)


def transmission_rate(params: FluParameters, N: np.ndarray, C: np.ndarray) -> float:
    """``β`` giving the next-generation matrix spectral radius ``R0``."""
    s = np.asarray(params.susceptibility)
    K = s[:, None] * N[:, None] * C / N[None, :] / params.recovery_rate
    return params.r0 / float(np.max(np.abs(np.linalg.eigvals(K))))


def simulate(V: np.ndarray, params: FluParameters = FluParameters()) -> np.ndarray:
    """Sick days per person contributed by each group for policies ``V (n, 5)``: (n, 5).

    Classic RK4 with step ``params.dt``, vectorised over the policies.
    """
    N, C = load_contact_data(params.year)
    beta = transmission_rate(params, N, C)
    s = np.asarray(params.susceptibility)
    gamma = params.recovery_rate
    V = np.atleast_2d(np.asarray(V, dtype=float))
    I0 = params.initial_infected * N
    S = N * (1.0 - params.vaccine_efficacy * V) - I0
    infected = np.broadcast_to(I0, S.shape).copy()
    area = np.zeros_like(S)  # ∫ I dt per group

    def rates(S, infected):
        lam = beta * s * ((infected / N) @ C.T)
        inf = lam * S
        return -inf, inf - gamma * infected

    h = params.dt
    for _ in range(int(round(params.days / h))):
        k1s, k1i = rates(S, infected)
        k2s, k2i = rates(S + 0.5 * h * k1s, infected + 0.5 * h * k1i)
        k3s, k3i = rates(S + 0.5 * h * k2s, infected + 0.5 * h * k2i)
        k4s, k4i = rates(S + h * k3s, infected + h * k3i)
        I_new = infected + h / 6 * (k1i + 2 * k2i + 2 * k3i + k4i)
        area += 0.5 * h * (infected + I_new)
        S = S + h / 6 * (k1s + 2 * k2s + 2 * k3s + k4s)
        infected = I_new
    return area / N.sum()


def domain(params: FluParameters = FluParameters()) -> Box:
    """Vaccination rates in ``[0, 1]^5`` under the budget ``Σ_i N_i v_i / N <= budget``."""
    N, _ = load_contact_data(params.year)
    return Box(np.zeros(5), np.ones(5), A=(N / N.sum())[None, :], b=[params.budget])


def compute_optimum(params: FluParameters = FluParameters(), n_starts: int = 48, seed: int = 0):
    """Thorough search: SLSQP on the budget polytope from the best of 4096 Sobol points."""
    from pp_decomp.optim import maximize_box

    box = domain(params)
    x, v = maximize_box(
        lambda V: -simulate(V, params).sum(1),
        box,
        seed=seed,
        n_raw=4096,
        n_starts=n_starts,
        maxiter=500,
    )
    return {"x": x.tolist(), "value": float(-v)}


def optimum(params: FluParameters = FluParameters()) -> dict:
    """The cached optimum (``models/data/optima.json``), computed if missing or stale."""
    return cached_optimum(params.key(), lambda: compute_optimum(params))


def flu(seed: int = 0, params: FluParameters | None = None) -> Problem:
    """The flu vaccination problem (deterministic; ``seed`` is accepted for uniformity)."""
    params = params or FluParameters()
    N, _ = load_contact_data(params.year)
    return Problem(
        domain=domain(params),
        components=lambda V: simulate(V, params),
        n_components=5,
        weights=np.ones(5),
        lipschitz=np.ones(5),
        maximize=False,
        optimum=optimum(params)["value"],
        name="flu",
        component_names=[f"sick_days_{g}" for g in GROUPS],
        input_names=[f"vaccinated_{g}" for g in GROUPS],
        units={"inputs": "1", "components": "days per person", "objective": "days per person"},
        description="age-stratified SIR flu season, US contacts (Prem 2021), vaccine budget",
        metadata={
            "population": N.tolist(),
            "parameters": asdict(params),
            "source": "Prem et al. 2021 contact matrix; UN WPP 2024 population (starsim-data)",
        },
    )


if __name__ == "__main__":
    print(json.dumps(optimum(), indent=1))
