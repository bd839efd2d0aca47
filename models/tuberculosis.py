"""Tuberculosis case finding: an age-structured SEIS model with a fragmentation decomposition.

After Wang et al.'s decomposed-GP-regression slides (Wilder, Suen, Tambe, Dilkina),
sized to run quickly: 4 age groups (0-14, 15-44, 45-64, 65+) instead of 110
single years, yearly steps over ``T`` years. The policy ``v_i ∈ [0, v_max]`` is
the fraction of active cases of age group ``i`` found and cured each year,
under a budget ``Σ_i v_i <= B``. Objective: active-TB person-years over the
horizon, ``Σ_{t=1}^T Σ_i I_{i,t}``, minimised.

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
by year and age; the first component is the constant 1 carrying the known
initial-state and birth term ``w_0(v)``.

Parameters (per year): contacts from the India contact matrix of Prem et al.
(2021) and UN WPP 2024 India population (``starsim-data``), ``β`` scaled so the
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

from dataclasses import dataclass

import numpy as np

from pp_decomp.models.demography import contact_data
from pp_decomp.problem import Problem
from pp_decomp.space import Box

GROUPS = ("0-14", "15-44", "45-64", "65+")
_BINS = ((0, 3), (3, 9), (9, 13), (13, 16))
_WIDTH = np.array([15.0, 30.0, 20.0, 20.0])  # years per group; 65+ ages out by death only


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
    """The SEIS system and its exact fragmentation weights."""

    def __init__(self, params: TBParameters = TBParameters()):
        self.p = params
        N, C = contact_data("IND", 2020, _BINS)
        self.N0 = N / 1e6  # millions of people
        self.C = C * 365.0  # contacts per year
        n = len(N)
        self.n = n
        self.mu = np.asarray(params.mortality)
        self.alpha = np.asarray(params.progression)
        self.d = params.active_exit
        I0 = params.active0 * self.N0
        E0 = params.latent0 * self.N0
        self.x1 = np.concatenate([self.N0 - E0 - I0, E0, I0])
        # β such that the initial annual risk of infection, population-averaged, is arti
        lam0 = self.C @ (I0 / self.N0)
        self.beta = params.arti / float(lam0 @ self.N0 / self.N0.sum())
        self.births = float((self.mu * self.N0).sum())  # replaces deaths: stable size
        age = 1.0 / _WIDTH
        age[-1] = 0.0
        Pa = np.diag(1 - age) + np.diag(age[:-1], -1)
        self.P = np.kron(np.eye(3), Pa)  # ageing within each compartment
        self.B = np.concatenate([-np.eye(n), np.eye(n), np.zeros((n, n))])  # u moves S -> E
        self.c = np.zeros(3 * n)
        self.c[0] = self.births

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
            x = self.P @ (A @ x + self.B @ U[t] + self.c)
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
        PB, Pc = self.P @ self.B, self.P @ self.c
        w = [r[T] @ self.x1 + sum(r[T - s] @ Pc for s in range(1, T))]
        for t in range(1, T):  # u_t enters x_{t+1}; it counts in years t+1..T
            w.extend(r[T - t] @ PB)
        return np.array(w)


def tuberculosis(seed: int = 0, params: TBParameters | None = None) -> Problem:
    """The TB case-finding problem (deterministic; ``seed`` accepted for uniformity)."""
    params = params or TBParameters()
    model = TBModel(params)
    n, T = model.n, params.years

    def components(V):
        V = np.atleast_2d(np.asarray(V, dtype=float))
        return np.stack([np.concatenate([[1.0], model.simulate(v)[0].ravel()]) for v in V])

    def weights(V):
        return np.stack([model.weights(v) for v in np.atleast_2d(V)])

    box = Box(np.zeros(n), np.full(n, params.v_max), A=np.ones((1, n)), b=[params.budget])
    from pp_decomp.optim import maximize_box

    def objective(V):
        return np.array([model.simulate(v)[1] for v in np.atleast_2d(V)])

    x_opt, v_opt = maximize_box(lambda V: -objective(V), box, seed=0, n_raw=512, n_starts=8)
    names = ["initial_state"] + [f"infections_y{t}_{g}" for t in range(1, T) for g in GROUPS]
    return Problem(
        domain=box,
        components=components,
        n_components=1 + (T - 1) * n,
        weights=weights,
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
