"""Wang et al. (2019) synthetic problem: a sum of J GP samples on a grid of [0, 1].

J = 10 squared-exponential kernels with random lengthscales; one random function
from each; ``g_j ≡ 1``; ``X`` = 1000 evenly spaced points of ``[0, 1]``; noise
``1e-4``; maximise. The optimum is exact (the best grid point). The drawn kernels
are the problem's ``known_kernels``: the paper runs its bandits with them, which
``inference="fixed"`` reproduces.
"""

from __future__ import annotations

import numpy as np

from pp_decomp.components import KnownKernels
from pp_decomp.components.samples import random_kernel_draws, sample_function
from pp_decomp.problem import Problem
from pp_decomp.space import CandidateSet
from pp_decomp.validate import check_positive, check_positive_int


def synthetic(
    seed: int = 0, n_components: int = 10, n_points: int = 1000, noise_sd: float = 1e-4
) -> Problem:
    """The problem instance of trial ``seed`` (kernels and functions drawn from it)."""
    J = check_positive_int(n_components, "n_components")
    N = check_positive_int(n_points, "n_points", minimum=2)
    noise_sd = check_positive(noise_sd, "noise_sd")
    rng = np.random.default_rng(np.random.SeedSequence(check_positive_int(seed, "seed", 0)))
    grid = np.linspace(0.0, 1.0, N)[:, None]
    kernels, columns = [], []
    for _ in range(J):
        kernels.append(random_kernel_draws("se", 1, noise_sd, rng))
        columns.append(sample_function("se", grid, kernels[-1], rng))
    F = np.stack(columns, axis=1)
    F.setflags(write=False)

    def components(X):
        idx = np.rint(np.asarray(X, dtype=float)[:, 0] * (N - 1)).astype(int)
        if np.any(idx < 0) or np.any(idx >= N) or np.any(np.abs(grid[idx, 0] - X[:, 0]) > 1e-9):
            raise ValueError("synthetic: X must be points of the problem's grid")
        return F[idx]

    return Problem(
        domain=CandidateSet(grid),
        components=components,
        n_components=J,
        weights=np.ones(J),
        lipschitz=np.ones(J),
        maximize=True,
        noise_sd=noise_sd,
        optimum=float(F.sum(1).max()),
        name="synthetic",
        component_names=[f"f{j}" for j in range(J)],
        description=f"sum of {J} SE GP samples on {N} grid points of [0,1] (Wang 2019)",
        metadata={"seed": seed, "source": "Wang et al. 2019, synthetic experiment"},
        known_kernels=KnownKernels("se", tuple(kernels)),
    )
