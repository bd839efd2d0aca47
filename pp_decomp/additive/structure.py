"""Learning the additive structure: random decompositions (Kandasamy) and Gibbs (Rolland).

Both score a structure by the GP log marginal likelihood of the data
``φ = -½ yᵀ (K + σ²I)⁻¹ y - ½ log|K + σ²I| - n/2 log 2π``.

* :func:`learn_decomposition` (Kandasamy et al. 2015, §4.4): among the current
  decomposition and ``O(D)`` random ones with groups of size ``≤ d``, keep the
  most likely ("partial maximisation").
* :func:`gibbs_structure` (Rolland et al. 2018, §4, Alg. 3): Gibbs sampling over
  the edges ``Z_ij ~ Bernoulli(p)`` of the dependency graph and over each
  dimension's lengthscale in a discrete set (and the noise level in a discrete
  set), ``p(Z_ij = 1 | rest) ∝ p e^{φ(Z_ij = 1)}``, ``p(ℓ_d = l | rest) ∝ e^{φ(ℓ_d = l)}``;
  the kernel of a graph sums one SE kernel per maximal clique ``c`` with
  amplitude ``η_c² = |c| / Σ_c' |c'|`` (so ``k(x, x) = 1`` on standardised
  outputs). The most likely state visited is returned. With ``overlap=False``
  the graph is restricted to disjoint cliques (a partition, the "No Overlap"
  model): each dimension is moved between groups instead of edges flipped.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import networkx as nx
import numpy as np

from pp_decomp.components.posterior.batched import JITTER, gaussian_log_likelihood
from pp_decomp.kernels.families import ExpQuad
from pp_decomp.optim.maxsum import junction_tree_cliques
from pp_decomp.validate import (
    SeedLike,
    as_float_array,
    as_generator,
    check_choice,
    check_finite,
    check_positive,
    check_positive_int,
    check_X,
    check_y,
)

DECOMPOSITION_SEARCHES = ("random", "swap")


def random_decomposition(input_dim: int, max_group_size: int, seed: SeedLike = None):
    """A random partition of ``range(input_dim)`` into groups of size ``max_group_size``
    (the last may be smaller): a list of sorted tuples."""
    rng = as_generator(seed)
    perm = rng.permutation(input_dim)
    return [
        tuple(sorted(int(v) for v in perm[i : i + max_group_size]))
        for i in range(0, input_dim, max_group_size)
    ]


def graph_groups(edges, input_dim: int) -> list[tuple[int, ...]]:
    """Maximal cliques of the dependency graph (isolated dimensions are singleton groups)."""
    G = nx.Graph()
    G.add_nodes_from(range(input_dim))
    G.add_edges_from((int(a), int(b)) for a, b in edges)
    return sorted(tuple(sorted(c)) for c in nx.find_cliques(G))


def groups_edges(groups) -> set[tuple[int, int]]:
    """The dependency graph's edges ``(i < j)`` implied by ``groups``."""
    return {tuple(sorted(e)) for g in groups for e in itertools.combinations(g, 2)}


def correct_connections(edges, true_edges) -> float:
    """CC (Rolland eq. 9): share of the true graph's edges present in the learned graph."""
    learned = {tuple(sorted(e)) for e in edges}
    true = {tuple(sorted(e)) for e in true_edges}
    return 1.0 if not true else len(learned & true) / len(true)


def correct_separations(edges, true_edges, input_dim: int) -> float:
    """CS (Rolland eq. 10): share of the true graph's non-edges absent from the learned graph."""
    learned = {tuple(sorted(e)) for e in edges}
    true = {tuple(sorted(e)) for e in true_edges}
    non = set(itertools.combinations(range(input_dim), 2)) - true
    return 1.0 if not non else len(non - learned) / len(non)


def default_amplitudes(groups) -> np.ndarray:
    """Rolland's group amplitudes ``η_c = sqrt(|c| / Σ_c' |c'|)``, so ``k(x, x) = 1``."""
    sizes = np.array([len(g) for g in groups], dtype=float)
    return np.sqrt(sizes / sizes.sum())


def _check_positive_array(values, name: str, shape: tuple | None = None) -> np.ndarray:
    arr = check_finite(np.atleast_1d(as_float_array(values, name)), name)
    if shape is not None and arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}; got {arr.shape}")
    if arr.size == 0 or np.any(arr <= 0):
        raise ValueError(f"{name} must hold numbers > 0; got {arr.tolist()}")
    return arr


class _Scorer:
    """Log marginal likelihoods of structures on fixed data, with per-dimension distances cached."""

    def __init__(self, X, y):
        self.X = check_X(X, "X", min_rows=2)
        self.y = check_y(y, "y", n=self.X.shape[0])
        self.d2 = (self.X[:, None, :] - self.X[None, :, :]) ** 2  # (n, n, D)
        self.evaluations = 0

    def __call__(self, groups, ls, sigma, eta2=None) -> float:
        """``φ`` for ``groups`` with lengthscales ``ls (D,)``, noise ``sigma`` and
        amplitudes ``eta2 (M,)`` (default ``|c| / Σ|c'|``)."""
        self.evaluations += 1
        eta2 = default_amplitudes(groups) ** 2 if eta2 is None else np.asarray(eta2, float)
        scaled = self.d2 / np.asarray(ls, dtype=float) ** 2
        n = len(self.y)
        K = np.zeros((n, n))
        for g, a in zip(groups, eta2, strict=True):
            K += a * ExpQuad.correlation(scaled[:, :, list(g)].sum(-1))
        K[np.diag_indices(n)] += sigma**2 + JITTER
        return gaussian_log_likelihood(K, self.y, overwrite_K=True)


def log_marginal_likelihood(X, y, groups, ls, sigma, eta=None) -> float:
    """GP log marginal likelihood of ``y`` under the additive SE kernel of ``groups``.

    Parameters
    ----------
    X : (n, D) array, y : (n,) array
    groups : sequence of sequences of int
    ls : (D,) lengthscales; sigma : noise sd
    eta : (M,) amplitudes, optional (default ``sqrt(|c| / Σ|c'|)``)
    """
    score = _Scorer(X, y)
    D = score.X.shape[1]
    groups = [tuple(int(v) for v in g) for g in groups]
    if not groups or any(not g or min(g) < 0 or max(g) >= D for g in groups):
        raise ValueError(
            f"groups must be non-empty groups of dimensions in 0..{D - 1}; got {groups}"
        )
    ls = _check_positive_array(ls, "ls", (D,))
    eta2 = None if eta is None else _check_positive_array(eta, "eta", (len(groups),)) ** 2
    return score(groups, ls, check_positive(sigma, "sigma"), eta2)


def learn_decomposition(
    X,
    y,
    max_group_size: int,
    ls,
    sigma,
    eta=None,
    current=None,
    n_candidates=None,
    seed: SeedLike = None,
    search: str = "random",
    max_evaluations: int = 2000,
):
    """Kandasamy's partial maximisation of the marginal likelihood over decompositions.

    Scores ``current`` (if given) and ``n_candidates`` (default ``D``) random
    partitions into groups of size ``≤ max_group_size``, with the hyperparameters
    given (``eta`` one amplitude for every group, default ``sqrt(|c| / Σ|c'|)``).
    ``search="swap"`` then climbs from the best of them: swap two dimensions of
    different groups whenever that raises the likelihood, until no swap does or
    ``max_evaluations`` likelihoods have been computed (a departure from the
    paper, which keeps the best random partition).

    Returns
    -------
    groups : list of tuples; log_ml : float
    """
    rng = as_generator(seed)
    score = _Scorer(X, y)
    D = score.X.shape[1]
    max_group_size = check_positive_int(max_group_size, "max_group_size")
    ls = _check_positive_array(np.broadcast_to(as_float_array(ls, "ls"), (D,)), "ls", (D,))
    sigma = check_positive(sigma, "sigma")
    if eta is not None:
        eta = check_positive(eta, "eta")
    if n_candidates is not None:
        check_positive_int(n_candidates, "n_candidates")
    cands = [] if current is None else [[tuple(g) for g in current]]
    cands += [random_decomposition(D, max_group_size, rng) for _ in range(n_candidates or D)]
    check_choice(search, "search", DECOMPOSITION_SEARCHES)
    check_positive_int(max_evaluations, "max_evaluations")

    def phi(groups):
        eta2 = None if eta is None else np.full(len(groups), float(eta) ** 2)
        return score(groups, ls, sigma, eta2)

    best, best_ll = None, -np.inf
    for groups in cands:
        ll = phi(groups)
        if ll > best_ll:
            best, best_ll = groups, ll
    if search == "swap":  # the random candidates count against the budget
        remaining = max(max_evaluations - score.evaluations, 0)
        best, best_ll = swap_climb(phi, best, best_ll, remaining)
    return best, best_ll


def swap_climb(score, groups, value: float | None = None, max_evaluations: int | None = None):
    """First-improvement hill-climb over swaps of two dimensions between groups.

    Tries every swap of a dimension of group ``i`` with one of group ``j > i`` and
    keeps the first that raises ``score`` (a function of a list of groups), until a
    full pass improves nothing or ``max_evaluations`` scores have been computed
    (``None``: no limit). Group sizes never change.

    Returns
    -------
    groups : list of sorted tuples; value : float (its score)
    """
    cur = [list(g) for g in groups]
    value = score([tuple(sorted(g)) for g in cur]) if value is None else value
    budget = np.inf if max_evaluations is None else max_evaluations
    evaluations, improved = 0, True
    while improved and evaluations < budget:
        improved = False
        for i, j in itertools.combinations(range(len(cur)), 2):
            for a, b in itertools.product(range(len(cur[i])), range(len(cur[j]))):
                if evaluations >= budget:
                    break
                new = [list(g) for g in cur]
                new[i][a], new[j][b] = cur[j][b], cur[i][a]
                v = score([tuple(sorted(g)) for g in new])
                evaluations += 1
                if v > value + 1e-9:
                    cur, value, improved = new, v, True
    return [tuple(sorted(g)) for g in cur], value


@dataclass
class GibbsResult:
    """The most likely state visited by :func:`gibbs_structure`."""

    edges: list[tuple[int, int]]
    groups: list[tuple[int, ...]]
    ls: np.ndarray
    sigma: float
    log_ml: float
    evaluations: int


def gibbs_structure(
    X,
    y,
    *,
    edges=(),
    ls=None,
    sigma: float = 0.1,
    ls_grid=(0.05, 0.1, 0.2, 0.4, 0.8),
    sigma_grid=(0.01, 0.03, 0.1, 0.3),
    p: float = 0.5,
    overlap: bool = True,
    max_clique: int = 3,
    n_evals: int = 200,
    learn_graph: bool = True,
    seed: SeedLike = None,
) -> GibbsResult:
    """Rolland's Gibbs sampler over the dependency graph, lengthscales and noise.

    Parameters
    ----------
    X : (n, D) array on the unit scale; y : (n,) standardised outputs
    edges : starting graph (the previous cycle's, Rolland §4 "stopping criterion")
    ls : (D,) starting lengthscales (default the middle of ``ls_grid``)
    sigma : starting noise sd
    ls_grid, sigma_grid : the discrete sets ``𝓛_i`` (uniform priors)
    p : prior edge probability (``1/2``: no prior knowledge)
    overlap : False restricts graphs to disjoint cliques ("No Overlap")
    max_clique : largest clique allowed in the triangulated graph (message passing
        costs ``levels^max_clique`` per clique)
    n_evals : stop after this many likelihood evaluations (``N_Gibbs``)
    learn_graph : False keeps ``edges`` and samples only lengthscales and noise
    """
    score = _Scorer(X, y)
    D = score.X.shape[1]
    ls_grid = _check_positive_array(ls_grid, "ls_grid")
    sigma_grid = _check_positive_array(sigma_grid, "sigma_grid")
    ls = np.full(D, ls_grid[len(ls_grid) // 2]) if ls is None else ls
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must lie in (0, 1); got {p!r}")
    E = _initial_graph(edges, D, start_from_components=not overlap and learn_graph)
    limits = check_positive_int(max_clique, "max_clique"), check_positive_int(n_evals, "n_evals")
    ls, sigma = _check_positive_array(ls, "ls", (D,)).copy(), check_positive(sigma, "sigma")
    gibbs = _Gibbs(score, as_generator(seed), overlap, *limits, E, ls, sigma)
    while not gibbs.done:
        if learn_graph and overlap:
            gibbs.sweep_edges(p)
        elif learn_graph:
            gibbs.sweep_partition()
        gibbs.sweep_lengthscales(ls_grid)
        if not gibbs.done:
            gibbs.sample([(0.0, gibbs.E, gibbs.ls, s) for s in sigma_grid])
    gibbs.best.evaluations = score.evaluations
    return gibbs.best


def _initial_graph(edges, D: int, start_from_components: bool) -> set:
    """The starting edges as sorted pairs, checked; for disjoint groups, the
    connected components made cliques."""
    for a, b in edges:
        if not (0 <= int(a) < D and 0 <= int(b) < D) or int(a) == int(b):
            raise ValueError(f"edges must join two distinct dimensions in 0..{D - 1}; got {(a, b)}")
    E = {tuple(sorted((int(a), int(b)))) for a, b in edges}
    return groups_edges(_components(E, D)) if start_from_components else E


class _Gibbs:
    """The state of :func:`gibbs_structure`: graph ``E``, lengthscales, noise and the
    most likely state visited; each ``sample`` draws one coordinate given the rest."""

    def __init__(self, score, rng, overlap, max_clique, n_evals, E, ls, sigma):
        self.score, self.rng, self.overlap = score, rng, overlap
        self.max_clique, self.n_evals = max_clique, n_evals
        self.D = score.X.shape[1]
        self.E, self.ls, self.sigma = E, ls, sigma
        ll = score(self.groups_of(E), ls, sigma)
        self.best = GibbsResult(sorted(E), self.groups_of(E), ls.copy(), sigma, ll, 0)

    @property
    def done(self) -> bool:
        return self.score.evaluations >= self.n_evals

    def groups_of(self, E):
        return graph_groups(E, self.D) if self.overlap else _components(E, self.D)

    def admissible(self, E) -> bool:
        # the junction tree's largest clique sets the message-passing cost (L^size)
        groups = self.groups_of(E)
        width = max(len(c) for c in junction_tree_cliques(groups, self.D))
        return width <= self.max_clique and (
            self.overlap or all(len(c) * (len(c) - 1) // 2 == _n_internal(E, c) for c in groups)
        )

    def sample(self, options) -> None:
        """Draw one of ``options`` ``(log prior, E, ls, sigma)`` by prior × likelihood."""
        lls = []
        for _, E, ls, s in options:
            ll = self.score(self.groups_of(E), ls, s) if self.admissible(E) else -np.inf
            lls.append(ll)
            if np.isfinite(ll) and ll > self.best.log_ml:
                self.best = GibbsResult(sorted(E), self.groups_of(E), ls.copy(), s, ll, 0)
        logw = np.array([lp for lp, *_ in options]) + np.array(lls)
        k = 0
        if np.any(np.isfinite(logw)):
            w = np.exp(logw - logw[np.isfinite(logw)].max())
            k = self.rng.choice(len(options), p=w / w.sum())
        _, self.E, self.ls, self.sigma = options[k]

    def sweep_edges(self, p: float) -> None:
        """Each possible edge in random order: present with probability ∝ p e^φ."""
        pairs = list(itertools.combinations(range(self.D), 2))
        for k in self.rng.permutation(len(pairs)):
            E, e = self.E, pairs[k]
            self.sample(
                [
                    (np.log1p(-p), E - {e}, self.ls, self.sigma),
                    (np.log(p), E | {e}, self.ls, self.sigma),
                ]
            )
            if self.done:
                return

    def sweep_partition(self) -> None:
        """Each dimension in random order: joins one of the other groups or stands alone."""
        for i in self.rng.permutation(self.D):
            rest = [tuple(v for v in g if v != i) for g in _components(self.E, self.D)]
            rest = [g for g in rest if g]
            options = []
            for k in range(len(rest) + 1):  # join group k, or stand alone
                new = [g + (int(i),) if j == k else g for j, g in enumerate(rest)]
                if k == len(rest):
                    new = rest + [(int(i),)]
                options.append((0.0, groups_edges(new), self.ls, self.sigma))
            self.sample(options)
            if self.done:
                return

    def sweep_lengthscales(self, grid) -> None:
        """Each dimension's lengthscale in random order, over the discrete ``grid``."""
        for d in self.rng.permutation(self.D):
            if self.done:
                return
            options = []
            for lv in grid:
                ls = self.ls.copy()
                ls[d] = lv
                options.append((0.0, self.E, ls, self.sigma))
            self.sample(options)


def _components(E, D) -> list[tuple[int, ...]]:
    G = nx.Graph()
    G.add_nodes_from(range(D))
    G.add_edges_from(E)
    return sorted(tuple(sorted(c)) for c in nx.connected_components(G))


def _n_internal(E, group) -> int:
    s = set(group)
    return sum(1 for a, b in E if a in s and b in s)
