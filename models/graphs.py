"""Rolland et al. (2018) additive functions on dependency graphs (overlapping groups).

``f(x) = Σ_{(i, j) ∈ E} f_ij(x_i, x_j)`` on ``[0, 1]^D``, each ``f_ij`` a draw from
a GP with SE kernel (lengthscale ``ls``) over the pair ``(x_i, x_j)``, realised
with ``n_features`` random Fourier features so it can be evaluated anywhere:
``f_ij(z) = sqrt(2/n) Σ_m w_m cos(ω_m · z + b_m)``, ``ω_m ~ N(0, ls⁻² I)``,
``b_m ~ U(0, 2π)``, ``w_m ~ N(0, 1)``.

Graphs: ``star`` (variable 0 joined to all others) and ``grid`` (a 2-row
lattice, 4-neighbour edges). The true graph is in ``metadata["edges"]`` for the
structure-learning metrics. The optimum is found exactly on a grid of
``levels`` values per variable by dynamic programming (the star's leaves are
independent given the centre; the 2-row lattice is solved column by column),
then polished by L-BFGS-B.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize

from pp_decomp.problem import Problem
from pp_decomp.space import Box
from pp_decomp.validate import check_choice, check_positive_int


def star_edges(D: int) -> list[tuple[int, int]]:
    """Edges of the star graph on ``D`` variables with centre 0."""
    return [(0, i) for i in range(1, D)]


def grid_edges(D: int) -> list[tuple[int, int]]:
    """2 x (D/2) lattice: variable ``2c + r`` at row ``r``, column ``c``."""
    if D % 2:
        raise ValueError(f"grid graphs need an even D; got D={D}")
    cols = D // 2
    edges = [(2 * c, 2 * c + 1) for c in range(cols)]
    edges += [(2 * c + r, 2 * (c + 1) + r) for c in range(cols - 1) for r in range(2)]
    return edges


class PairFunctions:
    """Random-feature GP samples ``f_e(x_i, x_j)`` for every edge ``e``, evaluated together."""

    def __init__(self, edges, ls: float, n_features: int, rng):
        self.edges = np.asarray(edges, dtype=int)
        E = len(self.edges)
        self.omega = rng.standard_normal((E, n_features, 2)) / ls
        self.b = rng.uniform(0, 2 * np.pi, (E, n_features))
        self.w = rng.standard_normal((E, n_features)) * np.sqrt(2.0 / n_features)

    def edge(self, e: int, xi: np.ndarray, xj: np.ndarray) -> np.ndarray:
        """``f_e`` on broadcast arrays ``xi``, ``xj``."""
        phase = xi[..., None] * self.omega[e, :, 0] + xj[..., None] * self.omega[e, :, 1]
        return np.cos(phase + self.b[e]) @ self.w[e]

    def __call__(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        return np.stack(
            [self.edge(e, X[:, i], X[:, j]) for e, (i, j) in enumerate(self.edges)], axis=1
        )


def _star_grid_optimum(funcs: PairFunctions, D: int, levels: np.ndarray):
    best_v, best_x = -np.inf, None
    Xi, Xj = np.meshgrid(levels, levels, indexing="ij")  # centre level, leaf level
    table = np.stack([funcs.edge(e, Xi, Xj) for e in range(len(funcs.edges))])  # (E, L, L)
    per_centre = table.max(2).sum(0)
    c = int(np.argmax(per_centre))
    best_v = float(per_centre[c])
    best_x = np.empty(D)
    best_x[0] = levels[c]
    for e, (_, j) in enumerate(funcs.edges):
        best_x[j] = levels[int(np.argmax(table[e, c]))]
    return best_x, best_v


def _ladder_grid_optimum(funcs: PairFunctions, D: int, levels: np.ndarray):
    L, cols = len(levels), D // 2
    A, B = np.meshgrid(levels, levels, indexing="ij")
    index = {tuple(e): k for k, e in enumerate(map(tuple, funcs.edges))}
    rung = [funcs.edge(index[(2 * c, 2 * c + 1)], A, B) for c in range(cols)]  # (L, L) per column
    rails = [
        [funcs.edge(index[(2 * c + r, 2 * c + 2 + r)], A, B) for r in range(2)]
        for c in range(cols - 1)
    ]
    value = rung[0].copy()  # best value of columns <= c given column c's state (a, b)
    back = []
    for c in range(1, cols):
        top, bottom = rails[c - 1]  # (prev a, next a), (prev b, next b)
        # total[pa, pb, na, nb] = value[pa, pb] + top[pa, na] + bottom[pb, nb]
        total = value[:, :, None, None] + top[:, None, :, None] + bottom[None, :, None, :]
        flat = total.reshape(L * L, L, L)
        arg = flat.argmax(0)
        value = flat.max(0) + rung[c]
        back.append(arg)
    k = int(np.argmax(value))
    a, b = divmod(k, L)
    x = np.empty(D)
    x[2 * (cols - 1)], x[2 * (cols - 1) + 1] = levels[a], levels[b]
    for c in range(cols - 1, 0, -1):
        a, b = divmod(int(back[c - 1][a, b]), L)
        x[2 * (c - 1)], x[2 * (c - 1) + 1] = levels[a], levels[b]
    return x, float(value.max())


def rolland(
    seed: int = 0,
    graph: str = "star",
    D: int = 10,
    ls: float = 0.2,
    n_features: int = 200,
    levels: int | None = None,
    noise_sd: float = 0.01,
) -> Problem:
    """GP samples summed over the edges of a ``star`` or ``grid`` dependency graph."""
    check_choice(graph, "graph", ("star", "grid"))
    D = check_positive_int(D, "D", minimum=2)
    rng = np.random.default_rng(np.random.SeedSequence([seed, D, int(graph == "grid")]))
    edges = star_edges(D) if graph == "star" else grid_edges(D)
    funcs = PairFunctions(edges, ls, check_positive_int(n_features, "n_features"), rng)
    if levels is None:  # the lattice DP costs L⁴ per column
        levels = 101 if graph == "star" else 41
    grid = np.linspace(0.0, 1.0, check_positive_int(levels, "levels", minimum=2))
    solver = _star_grid_optimum if graph == "star" else _ladder_grid_optimum
    x0, _ = solver(funcs, D, grid)
    res = optimize.minimize(
        lambda z: -funcs(z[None]).sum(), x0, method="L-BFGS-B", bounds=[(0.0, 1.0)] * D
    )
    best = max(float(funcs(x0[None]).sum()), -float(res.fun))
    return Problem(
        domain=Box(np.zeros(D), np.ones(D)),
        components=funcs,
        n_components=len(edges),
        weights=np.ones(len(edges)),
        lipschitz=np.ones(len(edges)),
        maximize=True,
        noise_sd=noise_sd,
        optimum=best,
        name=f"rolland-{graph}",
        component_names=[f"f{i}_{j}" for i, j in edges],
        description=f"sum of SE GP samples over the {len(edges)} edges of a {graph} graph, D={D}",
        metadata={"edges": [list(e) for e in edges], "source": "Rolland et al. 2018, Sec. 6"},
    )
