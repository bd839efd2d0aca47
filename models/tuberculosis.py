"""Tuberculosis case finding: an age-structured SEIS model with a fragmentation decomposition.

After Wang et al.'s decomposed-GP-regression slides (Wilder, Suen, Tambe, Dilkina),
in two sizes: ``tuberculosis``, 4 age groups (0-14, 15-44, 45-64, 65+) over 6
years, quick to run; and ``tuberculosis-110``, the slides' size: 110 single
years of age (0-109) over 25 years. The policy ``v_i ∈ [0, v_max]`` is the
fraction of active cases of age group ``i`` found and cured each year, under a
budget ``Σ_i v_i <= B``. Objective: active-TB person-years over the horizon,
``Σ_{t=1}^T Σ_i I_{i,t}``, minimised.

Dynamics of ``x_t = (S_t, E_t, I_t)`` (each ``(n,)``), one year::

    u_t = (1 - μ) ⊙ S_t ⊙ λ_t,   λ_t = min(1, β C (I_t / N_t))     new latent infections
    S*  = (1 - μ) ⊙ S_t - u_t + (1 - d) ⊙ v ⊙ I_t + b e_0           cured return to S; births
    E*  = (1 - μ) ⊙ (1 - α) ⊙ E_t + u_t
    I*  = (1 - d) ⊙ (1 - v) ⊙ I_t + α ⊙ E_t
    x_{t+1} = P x*                                                  ageing

Everything but ``u_t`` is linear in ``x`` for a given ``v``:
``x_{t+1} = M(v) x_t + P B u_t + P c`` with ``M(v) = P A(v)``. Hence the
fragmentation (slides): the objective is exactly

``f(v) = w_0(v) · 1 + Σ_{t=1}^{T-1} Σ_i w_{t,i}(v) u_{t,i}(v)``,
``w_t(v)ᵀ = 1_Iᵀ Σ_{s=t+1}^{T} M(v)^{s-t-1} P B``,

a linear decomposition with known policy-dependent weights ``g_j(v) = w_{t,i}(v)``
and components ``f_j(v) = u_{t,i}(v)``, the new infections the system reports
by year and age, plus the known initial-state and birth term ``w_0(v)``
(the problem's ``offset``: known exactly, it is not a component a GP must learn).

At 110 ages that is 2,640 components; ``tuberculosis-110`` fragments by year
instead, as the slides do (``f(v) = Σ_t g_t(v) f_t(v)``), and stays exact: its
component of year ``t`` is the year's new infections weighted by the
person-years of active disease each will cause by the horizon, relative to the
mean over ages, ``f_t(v) = Σ_i w_{t,i}(v) u_{t,i}(v) / s_t(v)``, with the known
weight ``g_t(v) = s_t(v) = mean_i w_{t,i}(v)``, and the known term ``w_0(v)``.
The last year's infections cannot become active by the horizon
(``w_{T-1} ≡ 0``), so there are T - 2 = 23 components.

Parameters (per year): contacts from the India contact matrix of Prem et al.
(2021) and UN WPP 2024 India population (``starsim-data``; by single year of
age for ``tuberculosis-110``, spread from the five-year bins by the
mass-preserving methods of :func:`pp_decomp.models.demography.single_year_data`;
the other parameters apply by the age band of each year), ``β`` scaled so the
initial annual risk of infection is 1.5% (Chadha et al. 2005, Int J Tuberc Lung
Dis 9(1):116-123, ARTI in India ~1.5%); progression ``α = 0.001-0.003``
(lifetime ~10% risk of disease after infection, Vynnycky & Fine 1997,
Epidemiol Infect 119:183-201); untreated active TB ends (death or self-cure) at
``d = 1/3`` per year (mean duration ~3 years, Tiemersma et al. 2011, PLoS ONE
6(4):e17601); background mortality ``μ`` rising with age; initial state 40%
latently infected and 0.3% active. These values are illustrative, cited for
their order of magnitude.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from functools import cached_property

import numpy as np

from pp_decomp.models import tb_recursion
from pp_decomp.models.demography import SINGLE_AGES, contact_data, single_year_data
from pp_decomp.models.optima import cached_optimum
from pp_decomp.optim import maximize_box
from pp_decomp.problem import Problem
from pp_decomp.space import Box
from pp_decomp.validate import check_finite, check_X

GROUPS = ("0-14", "15-44", "45-64", "65+")
_BINS = ((0, 3), (3, 9), (9, 13), (13, 16))
_WIDTH = np.array([15.0, 30.0, 20.0, 20.0])  # years per group; 65+ ages out by death only
_BAND_STARTS = (0, 15, 45, 65)  # the age bands the per-band parameters apply to


@dataclass(frozen=True)
class AgeStructure:
    """Age groups: population ``N (n,)``, daily contacts ``C (n, n)``, the share of each
    group that ages into the next per year ``ageing (n,)`` (0 for the last) and the
    parameter band ``band (n,)`` (index into ``TBParameters``' per-band tuples)."""

    names: tuple
    N: np.ndarray
    C: np.ndarray
    ageing: np.ndarray
    band: np.ndarray

    @staticmethod
    def groups() -> AgeStructure:
        """The four groups 0-14, 15-44, 45-64, 65+."""
        N, C = contact_data("IND", 2020, _BINS)
        ageing = 1.0 / _WIDTH
        ageing[-1] = 0.0
        return AgeStructure(GROUPS, N, C, ageing, np.arange(4))

    @staticmethod
    def single_years(ages: int = SINGLE_AGES) -> AgeStructure:
        """Single years of age ``0..ages-1``; everyone ages one year a year but the oldest."""
        N, C = single_year_data("IND", 2020, ages)
        ageing = np.ones(ages)
        ageing[-1] = 0.0
        band = np.searchsorted(_BAND_STARTS, np.arange(ages), side="right") - 1
        return AgeStructure(tuple(str(a) for a in range(ages)), N, C, ageing, band)


@dataclass(frozen=True)
class TBParameters:
    years: int = 6
    budget: float = 1.2
    v_max: float = 0.6
    arti: float = 0.015
    progression: tuple = (0.001, 0.003, 0.002, 0.002)
    active_exit: float = 1 / 3
    mortality: tuple = (0.002, 0.002, 0.008, 0.05)
    latent0: float = 0.40
    active0: float = 0.003


class TBModel:
    """The SEIS system and its exact fragmentation weights (default: the four groups)."""

    def __init__(self, params: TBParameters = TBParameters(), ages: AgeStructure | None = None):
        self.p = params
        ages = ages or AgeStructure.groups()
        self.N0 = ages.N / 1e6  # millions of people
        self.C = ages.C * 365.0  # contacts per year
        n = len(ages.N)
        self.n = n
        self.mu = np.asarray(params.mortality)[ages.band]
        self.alpha = np.asarray(params.progression)[ages.band]
        self.d = params.active_exit
        I0 = params.active0 * self.N0
        E0 = params.latent0 * self.N0
        self.x1 = np.concatenate([self.N0 - E0 - I0, E0, I0])
        # β such that the initial annual risk of infection, population-averaged, is arti
        lam0 = self.C @ (I0 / self.N0)
        self.beta = params.arti / float(lam0 @ self.N0 / self.N0.sum())
        self.births = float((self.mu * self.N0).sum())  # replaces deaths: stable size
        self.age = age = ages.ageing
        Pa = np.diag(1 - age) + np.diag(age[:-1], -1)
        self.P = np.kron(np.eye(3), Pa)  # ageing within each compartment
        self.B = np.concatenate([-np.eye(n), np.eye(n), np.zeros((n, n))])  # u moves S -> E
        # births join the youngest group before ageing, or after it where everyone ages
        # a year (single years: else age 0 would be empty after the first year)
        self.c, self.c_after = np.zeros(3 * n), np.zeros(3 * n)
        (self.c_after if ages.ageing[0] == 1.0 else self.c)[0] = self.births

    def A(self, v: np.ndarray) -> np.ndarray:
        """The ``(3n, 3n)`` one-step transition of ``(S, E, I)`` under treatment rates ``v``."""
        n, mu, a, d = self.n, self.mu, self.alpha, self.d
        Z = np.zeros((n, n))
        return np.block(
            [
                [np.diag(1 - mu), Z, np.diag((1 - d) * v)],
                [Z, np.diag((1 - mu) * (1 - a)), Z],
                [Z, np.diag(a), np.diag((1 - d) * (1 - v))],
            ]
        )

    def simulate(self, v: np.ndarray) -> tuple[np.ndarray, float]:
        """New infections ``u (T-1, n)`` and the objective for one policy ``v (n,)``."""
        n, T = self.n, self.p.years
        x = self.x1.copy()
        total = x[2 * n :].sum()
        U = np.empty((T - 1, n))
        A = self.A(v)
        for t in range(T - 1):
            S, active = x[:n], x[2 * n :]
            Nt = S + x[n : 2 * n] + active
            lam = np.minimum(1.0, self.beta * (self.C @ (active / Nt)))
            U[t] = (1 - self.mu) * S * lam
            x = self.P @ (A @ x + self.B @ U[t] + self.c) + self.c_after
            total += x[2 * n :].sum()
        return U, float(total)

    def weights(self, v: np.ndarray) -> np.ndarray:
        """``(w_0, w_{1,1..n}, ..., w_{T-1,1..n})`` of the exact decomposition: (1 + (T-1) n,)."""
        n, T = self.n, self.p.years
        M = self.P @ self.A(v)
        ones_I = np.concatenate([np.zeros(2 * n), np.ones(n)])
        # r_k = 1_Iᵀ (I + M + ... + M^(k-1)): person-years from a unit state k years before T
        r = [np.zeros(3 * n)]
        for _ in range(T):
            r.append(ones_I + r[-1] @ M)
        PB, Pc = self.P @ self.B, self.P @ self.c + self.c_after
        w = [r[T] @ self.x1 + sum(r[T - s] @ Pc for s in range(1, T))]
        for t in range(1, T):  # u_t enters x_{t+1}; it counts in years t+1..T
            w.extend(r[T - t] @ PB)
        return np.array(w)

    @cached_property
    def _columns(self) -> np.ndarray:
        """``P B 1 / n``, ``x_1`` and ``P c`` as ``(3, 3, n)``: the policy-free vectors the
        weights and their gradient contract with (a dense ``P B`` costs a millisecond,
        as much as a gradient of eight policies)."""
        Pc = self.P @ self.c + self.c_after
        return np.stack([(self.P @ self.B @ np.ones(self.n)) / self.n, self.x1, Pc]).reshape(
            3, 3, self.n
        )

    def _policies(self, V) -> np.ndarray:
        """``V`` as ``(m, n)`` contiguous rows (the compiled recursion reads ``n`` per row
        unchecked: a ValueError names another width)."""
        V = np.ascontiguousarray(np.atleast_2d(np.asarray(V, dtype=float)))
        if V.ndim != 2 or V.shape[1] != self.n:
            raise ValueError(f"policies must have {self.n} columns (one per age); got {V.shape}")
        return V

    def weights_batch(self, V: np.ndarray) -> np.ndarray:
        """:meth:`weights` of every row of ``V (m, n)`` at once: (m, 1 + (T-1) n).

        ``M(v) = P A(v)`` is applied to row vectors without forming it: ``P`` shifts
        each compartment's ages and ``A(v)`` is diagonal per block, so a step is
        elementwise, O(n) instead of O(n³) per policy
        (:func:`~pp_decomp.models.tb_recursion.weights`)."""
        V = self._policies(V)
        last = getattr(self, "_last", None)
        # the weights, the known term and their gradients are asked for at the same
        # policies in turn: the last policies' weights are kept
        if last is not None and last[0] == (V.shape, V.tobytes()):
            return last[1]
        _, x1, Pc = self._columns
        out = tb_recursion.weights(V, self.age, self.mu, self.alpha, self.d, x1, Pc, self.p.years)
        out.flags.writeable = False  # shared with the next caller at these policies
        self._last = ((V.shape, V.tobytes()), out)
        return out

    def yearly_weights_grad(self, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Gradients of :meth:`yearly_weights`' ``s (m, T - 2)`` and ``w_0 (m,)`` with
        respect to the policy ``V (m, n)``: (m, T - 2, n), (m, n).

        Every weight is a functional ``r_k · y`` of the recursion
        ``r_{j+1} = 1_I + r_j M(v)`` (``s_t``: ``k = T - t``, ``y = P B 1 / n``;
        ``w_0``: ``r_T · x_1 + Σ_{k<T} r_k · P c``). Since ``v_i`` enters ``r_j M``
        only at the active entry of age ``i``, with slope ``(1 - d) D_ji``,
        ``D_j = (r_j P)_S - (r_j P)_I``,
        ``∂(r_k · y)/∂v_i = (1 - d) Σ_{j<k} D_ji (M^{k-1-j} y)_{I,i}``: the rows
        ``r_j`` and the columns ``M^l y``, two passes of the recursion in all
        (where differences would take ``n + 1``;
        :func:`~pp_decomp.models.tb_recursion.yearly_weights_grad`).
        """
        V = self._policies(V)
        self.weights_batch(V)  # the weights at V come with their gradient
        return tb_recursion.yearly_weights_grad(
            V, self.age, self.mu, self.alpha, self.d, self._columns, self.p.years
        )

    def yearly(self, v: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """The exact yearly fragmentation at ``v (n,)``: components ``f (T - 2,)``, weights
        ``s (T - 2,)`` and the known term ``w_0``, with ``w_0 + s · f`` the objective
        (module docstring; year ``T - 1``'s weight is 0)."""
        U, _ = self.simulate(v)
        W, s, w0 = self.yearly_weights(v)
        return (W[0] * U[:-1]).sum(axis=1) / s[0], s[0], float(w0[0])

    def yearly_weights(self, V: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Without simulating, at each row of ``V (m, n)``: ``w_{t,i}`` of years ``1..T-2``
        ``(m, T - 2, n)``, their means over ages ``s (m, T - 2)`` and ``w_0 (m,)``."""
        w = self.weights_batch(V)
        W = w[:, 1:].reshape(len(w), self.p.years - 1, self.n)[:, :-1]
        return W, W.mean(axis=2), w[:, 0]


def tuberculosis(seed: int = 0, params: TBParameters | None = None) -> Problem:
    """The TB case-finding problem (deterministic; ``seed`` accepted for uniformity)."""
    params = params or TBParameters()
    model = TBModel(params)
    n, T = model.n, params.years

    def components(V):
        return np.stack([model.simulate(v)[0].ravel() for v in np.atleast_2d(V)])

    def weights(V):
        return model.weights_batch(V)[:, 1:]

    def initial(V):
        return model.weights_batch(V)[:, 0]

    box = budget_box(params, n)

    def objective(V):
        return np.array([model.simulate(v)[1] for v in np.atleast_2d(V)])

    x_opt, v_opt = maximize_box(lambda V: -objective(V), box, seed=0, n_raw=512, n_starts=8)
    names = [f"infections_y{t}_{g}" for t in range(1, T) for g in GROUPS]
    return Problem(
        domain=box,
        components=components,
        n_components=(T - 1) * n,
        weights=weights,
        offset=initial,
        maximize=False,
        optimum=-v_opt,
        name="tuberculosis",
        component_names=names,
        description=f"age-structured SEIS TB model (India contacts), {T} years, case finding",
        metadata={
            "argmin": x_opt.tolist(),
            "source": "Wang et al. slides (SEIS, fragmentation); Prem 2021 India contacts, "
            "UN WPP 2024 (starsim-data)",
        },
    )


TB110 = TBParameters(years=25, budget=33.0)  # the slides' horizon; on average 0.3 per age


def optimum_110(params: TBParameters, model: TBModel, box: Box, n_starts: int = 4) -> dict:
    """The least active-TB person-years under the budget found, cached in
    ``models/data/optima.json`` (computed if missing). The objective has many local
    optima at vertices (``budget / v_max`` ages at ``v_max``) within 0.1% of each
    other: SLSQP from the best of 1024 feasible Sobol points, then swaps of one age in
    for one out while any lowers the total, from the vertex of its largest shares and
    from the vertex of ages 15-69; the best of the three."""
    key = optimum_key_110(params)

    def compute() -> dict:
        def total(v):
            return model.simulate(v)[1]

        def neg_total(V):
            return -np.array([total(v) for v in np.atleast_2d(V)])

        x, v = maximize_box(neg_total, box, seed=0, n_raw=1024, n_starts=n_starts, maxiter=500)
        candidates = [(x, -v)]
        working_ages = np.zeros_like(x)  # the vertex of ages 15 onwards, within the budget
        working_ages[15:] = 1.0 / (1.0 + np.arange(x.size - 15))
        for start in (x, working_ages):
            candidates.append(_swap_search(total, start, params))
        best_x, best = min(candidates, key=lambda c: c[1])
        return {"x": best_x.tolist(), "value": float(best)}

    return cached_optimum(key, compute)


def budget_box(params: TBParameters, n: int) -> Box:
    """The policies of ``n`` age groups: ``0 <= v_i <= v_max``, ``Σ_i v_i <= budget``."""
    return Box(np.zeros(n), np.full(n, params.v_max), A=np.ones((1, n)), b=[params.budget])


def optimum_key_110(params: TBParameters = TB110) -> str:
    """The key of ``tuberculosis-110``'s optimum in ``models/data/optima.json``."""
    return "tuberculosis-110:" + json.dumps(asdict(params), sort_keys=True)


def polish_110(policies, params: TBParameters = TB110) -> dict:
    """The best of feasible ``policies (k, 110)`` and of the swap searches from each one's
    vertex (:func:`optimum_110`'s), as ``{"x", "value", "from"}`` (``from``: the
    policy's row). How a policy a run found refreshes the stored optimum
    (``benchmarks/reports/tb_optimum.py``)."""
    model = TBModel(params, AgeStructure.single_years())
    V = check_finite(check_X(np.atleast_2d(policies), "policies", input_dim=model.n), "policies")
    outside = np.flatnonzero(~budget_box(params, model.n).contains(V))
    if outside.size:  # before any swap search
        raise ValueError(f"policies[{outside[0]}] is outside the budget or the bounds")

    def total(v):
        return model.simulate(v)[1]

    best = None
    for i, v in enumerate(V):
        for x, value in ((v, total(v)), _swap_search(total, v, params)):
            if best is None or value < best["value"]:
                best = {"x": np.asarray(x).tolist(), "value": float(value), "from": i}
    return best


def _swap_search(total, x: np.ndarray, params: TBParameters) -> tuple[np.ndarray, float]:
    """First-improvement swaps on the vertex of ``x``'s largest shares: (policy, total)."""
    k = int(round(params.budget / params.v_max))
    v = np.zeros_like(x)
    v[np.argsort(-x)[:k]] = params.v_max
    best, improved = total(v), True
    while improved:
        improved = False
        for i in np.flatnonzero(v > 0):
            for j in np.flatnonzero(v == 0):
                w = v.copy()
                w[i], w[j] = 0.0, params.v_max
                if (fw := total(w)) < best - 1e-12:
                    v, best, improved = w, fw, True
                    break
            if improved:
                break
    return v, best


def tuberculosis_110(seed: int = 0, params: TBParameters | None = None) -> Problem:
    """TB case finding at the slides' size: 110 single years of age, 25 years, the budget
    ``Σ_i v_i <= 33``, fragmented by year into 23 components with known policy-dependent
    weights (module docstring). Deterministic; ``seed`` accepted for uniformity."""
    params = params or TB110
    model = TBModel(params, AgeStructure.single_years())
    n, T = model.n, params.years

    def components(V):
        return np.stack([model.yearly(v)[0] for v in np.atleast_2d(np.asarray(V, dtype=float))])

    def weights(V):
        return model.yearly_weights(V)[1]

    def initial(V):
        return model.yearly_weights(V)[2]

    def weights_grad(V):
        return model.yearly_weights_grad(V)

    box = budget_box(params, n)
    best = optimum_110(params, model, box)
    return Problem(
        domain=box,
        components=components,
        n_components=T - 2,
        weights=weights,
        offset=initial,
        weights_grad=weights_grad,
        maximize=False,
        optimum=best["value"],
        name="tuberculosis-110",
        component_names=[f"year{t}" for t in range(1, T - 1)],
        input_names=[f"case_finding_age{a}" for a in range(n)],
        description=f"age-structured SEIS TB model (India), 110 single ages, {T} years",
        metadata={
            "argmin": best["x"],
            "source": "Wang et al. slides (110 ages, 25 years, fragmentation); Prem 2021 "
            "India contacts and UN WPP 2024 spread to single years (starsim-data)",
        },
    )
