"""Upper-confidence-bound acquisitions: D-GPUCB and its generalisations, and GP-UCB,
and their exploration schedules, callables ``t -> β_t`` (docs/design.md,
"Exploration schedules").
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache

import numpy as np
from scipy.stats import norm

from pp_decomp.acquisition.mc_gradient import (
    quantile_terms,
    sample_gradient,
)
from pp_decomp.acquisition.surrogate import ComposedSurrogate, DecomposedSurrogate
from pp_decomp.composition.core import (
    integrated_ucb,
    integrated_ucb_grad,
    sqrt_grad,
    ucb_level,
    ucb_radius,
)
from pp_decomp.validate import SeedLike, as_generator, check_nonnegative


@dataclass(frozen=True)
class BetaDiscrete:
    """Srinivas et al. Thm 1 / Wang Thm 7-8 on a finite domain.

    ``β_t = scale · 2 log(|X| J t² π² / (6δ))``; ``J = 1`` for linear decompositions,
    the number of components for general ones (Wang Thm 8). The papers' experiments
    use ``scale = 1/5``.
    """

    n_points: int
    delta: float = 0.05
    n_components: int = 1
    scale: float = 0.2

    def __call__(self, t: int) -> float:
        n = self.n_points * self.n_components
        return self.scale * 2.0 * np.log(n * t**2 * np.pi**2 / (6.0 * self.delta))

    def describe(self) -> dict:
        """The schedule and its settings, as stored in a run's attributes."""
        return {"name": "discrete", **asdict(self)}


@dataclass(frozen=True)
class BetaContinuous:
    """Srinivas et al. Thm 2 on ``[0, r]^d`` with derivative bounds ``a, b``.

    ``β_t = scale · (2 log(2 t² π² / (3δ)) + 2d log(t² d b r sqrt(log(4da/δ))))``.
    """

    dim: int
    delta: float = 0.05
    a: float = 1.0
    b: float = 1.0
    r: float = 1.0
    scale: float = 0.2

    def __call__(self, t: int) -> float:
        d = self.dim
        first = 2.0 * np.log(2.0 * t**2 * np.pi**2 / (3.0 * self.delta))
        inner = t**2 * d * self.b * self.r * np.sqrt(np.log(4.0 * d * self.a / self.delta))
        return self.scale * (first + 2.0 * d * np.log(max(inner, 1.0)))

    def describe(self) -> dict:
        """The schedule and its settings, as stored in a run's attributes."""
        return {"name": "continuous", **asdict(self)}


@dataclass(frozen=True)
class BetaKandasamy:
    """Kandasamy et al. practice: ``β_t = 0.2 d log(2t)`` (``d`` the group size)."""

    dim: int

    def __call__(self, t: int) -> float:
        return 0.2 * self.dim * np.log(2.0 * t)

    def describe(self) -> dict:
        """The schedule and its settings, as stored in a run's attributes."""
        return {"name": "kandasamy", **asdict(self)}


@dataclass(frozen=True)
class BetaRolland:
    """Rolland et al. practice: ``β_t = 0.5 log(2t)``."""

    def __call__(self, t: int) -> float:
        return 0.5 * np.log(2.0 * t)

    def describe(self) -> dict:
        """The schedule and its settings, as stored in a run's attributes."""
        return {"name": "rolland"}


@dataclass(frozen=True)
class BetaConstant:
    """A fixed ``β``."""

    value: float

    def __call__(self, t: int) -> float:
        return float(self.value)

    def describe(self) -> dict:
        """The schedule and its settings, as stored in a run's attributes."""
        return {"name": "constant", **asdict(self)}


_SCHEDULES = {
    "discrete": BetaDiscrete,
    "continuous": BetaContinuous,
    "kandasamy": BetaKandasamy,
    "rolland": BetaRolland,
    "constant": BetaConstant,
}


def beta_from_description(desc: dict):
    """Rebuild a schedule from its ``describe()`` dict (as stored in a run's settings).

    Raises a ValueError for a schedule this module does not define (a user's own
    callable), which must then be passed again when resuming.
    """
    kwargs = dict(desc)
    name = kwargs.pop("name", None)
    if name not in _SCHEDULES:
        raise ValueError(
            f"beta schedule {name!r} is not one of {sorted(_SCHEDULES)}: pass beta=... "
            "to Optimizer.resume"
        )
    return _SCHEDULES[name](**kwargs)


class DGPUCB:
    """D-GPUCB (Wang Alg. 3) for a linear decomposition, integrated over the
    hyperparameter posterior.

    ``a(x) = (1/S) Σ_s [Σ_j g_j(x) μ_js(x) + sqrt(β_t) sqrt(Σ_j g_j(x)² σ_js²(x))]``

    with ``μ_js, σ_js²`` component ``j``'s posterior mean and variance under its
    ``s``-th hyperparameter draw; draw ``s`` of every component makes one joint
    draw (the components are independent), ``S = 1`` under MAP (Wang's bound).

    The bound is averaged over draws (the integrated acquisition of Snoek,
    Larochelle & Adams 2012, as BoTorch's fully Bayesian models average theirs)
    rather than taken from the mixture moments ``E_s μ_s`` and
    ``E_s σ_s² + Var_s μ_s``, whose variance adds the draws' disagreement about
    the mean to the exploration bonus. Why: docs/design.md, "Why these defaults".
    """

    def __init__(self, model: DecomposedSurrogate, beta: float):
        if model.linear is None:
            raise ValueError("d-gpucb needs a linear decomposition (problem.weights)")
        self.model, self.beta = model, check_nonnegative(beta, "beta")

    def __call__(self, X) -> np.ndarray:
        return integrated_ucb(*self.model.linear_per_draw(X), self.beta)

    def value_and_grad(self, X) -> tuple[np.ndarray, np.ndarray]:
        """``a(X)`` (m,) and ``∂a/∂x`` (m, d)
        (:func:`~pp_decomp.composition.core.integrated_ucb_grad`); ``NotImplementedError``
        where a component has no input gradient."""
        return integrated_ucb_grad(*self.model.linear_per_draw_grad(X), self.beta)


def numeric_lipschitz(
    model: DecomposedSurrogate, X, n_points: int = 2048, width: float = 3.0, seed: SeedLike = 0
) -> np.ndarray:
    """Numerical bounds ``B_j ≈ sup |∂g/∂f_j|`` over the posterior's range.

    Method: the range of component ``j`` is ``[min_x μ_j - width·σ_j, max_x μ_j + width·σ_j]``
    over the rows of ``X``; ``n_points`` points are drawn uniformly from the
    product of these ranges (each paired with a random row of ``X``, since ``g``
    may depend on ``x``) and ``∂g/∂f_j`` is taken by central differences with a
    step of ``1e-5`` of the range. The maximum absolute value, inflated by 10%
    for the unsampled part of the box, is the bound.

    Returns
    -------
    (J,) array
    """
    rng = as_generator(seed)
    mu, var = model.moments(X)
    sd = np.sqrt(var)
    lo, hi = (mu - width * sd).min(0), (mu + width * sd).max(0)
    span = np.maximum(hi - lo, 1e-12)
    X = np.asarray(X, dtype=float)
    F = lo + rng.uniform(size=(n_points, len(lo))) * span
    Xp = X[rng.integers(0, len(X), n_points)]
    grads = np.empty_like(F)
    for j in range(F.shape[1]):
        step = np.zeros(F.shape[1])
        step[j] = 1e-5 * span[j]
        up = model.problem.compose(F + step, Xp)
        down = model.problem.compose(F - step, Xp)
        grads[:, j] = (up - down) / (2 * step[j])
    return 1.1 * np.nanmax(np.abs(grads), axis=0)


class LipschitzUCB:
    """Generalized D-GPUCB with the Lipschitz bound (Wang Alg. 4).

    ``a(x) = sign · g(μ_1(x), ..., μ_J(x); x) + sqrt(β_t) sqrt(J Σ_j B_j² σ_j²(x))``

    ``B_j`` from the problem when given, else :func:`numeric_lipschitz`.
    """

    def __init__(self, model: DecomposedSurrogate, beta: float, lipschitz, X_range):
        self.model, self.beta = model, check_nonnegative(beta, "beta")
        if lipschitz is None:
            lipschitz = numeric_lipschitz(model, X_range)
        self.B = np.asarray(lipschitz, dtype=float)

    def __call__(self, X) -> np.ndarray:
        mu, var = self.model.moments(X)
        J = mu.shape[1]
        width = np.sqrt(self.beta * J * (var @ self.B**2))
        return self.model.h(mu, X) + width

    def value_and_grad(self, X) -> tuple[np.ndarray, np.ndarray]:
        """``a(X)`` (m,) and ``∂a/∂x`` (m, d): ``∂ g(μ(x); x)`` by the chain rule through the
        mixture moments' gradients (``g``'s partial derivatives by central differences,
        :func:`~pp_decomp.acquisition.mc_gradient.sample_gradient`) plus
        ``β J Σ_j B_j² ∂σ_j² / 2 width``; ``NotImplementedError`` where a component has
        no input gradient."""
        X = np.asarray(X, dtype=float)
        mu, var, dmu, dvar = self.model.moments_grad(X)
        J = mu.shape[1]
        width = np.sqrt(self.beta * J * (var @ self.B**2))
        dwidth = sqrt_grad(width, self.beta * J * np.einsum("j,mjd->md", self.B**2, dvar))
        value = self.model.h(mu, X) + width
        return value, sample_gradient(self.model, X, mu, dmu) + dwidth


CORNERS_UP_TO = 6  # all 2^J corners of the credible box while J is at most this
BOX_SAMPLES = 16  # random points of the box beyond J = 6 (common to every x of a step)


def box_points(J: int, seed: SeedLike = None) -> np.ndarray:
    """Points of the box ``[-1, 1]^J`` where the credible-box bounds evaluate ``g``:
    its centre, its ``2J`` axis extremes, and its ``2^J`` corners (``J ≤ 6``) or
    16 random points (drawn from ``seed``, common to every ``x`` of a step): (P, J)."""
    if J <= CORNERS_UP_TO:
        extra = np.array(np.meshgrid(*[[-1.0, 1.0]] * J, indexing="ij")).reshape(J, -1).T
    else:
        extra = as_generator(seed).uniform(-1.0, 1.0, size=(BOX_SAMPLES, J))
    axes = np.vstack([np.eye(J), -np.eye(J)])
    return np.vstack([np.zeros((1, J)), axes, extra])


class LocalLipschitzUCB:
    """Generalized D-GPUCB with a local Lipschitz bound.

    ``a(x) = sign · g(μ(x); x) + Σ_j B_j(x) r_j(x)``, ``r_j = sqrt(β_t) σ_j(x)``,

    ``B_j(x) = sup |∂(sign·g)/∂f_j|`` over the credible box
    ``R(x) = Π_j [μ_j(x) - r_j(x), μ_j(x) + r_j(x)]``. Guarantee: whenever the
    components lie in ``R(x)`` (the event Wang et al.'s β_t makes likely for
    every ``j``), the mean value theorem along the segment from ``μ`` to ``f``,
    which stays in the convex box, gives ``sign·g(f) ≤ a(x)``. Wang's bound
    uses one global ``B_j`` over the whole range of the posterior and the
    Cauchy-Schwarz form ``sqrt(J Σ B_j² r_j²) ≥ Σ B_j r_j``; the local bound is
    never wider and shrinks where ``g`` is flat around the posterior.

    ``B_j(x)`` is the largest central-difference ``|∂_j g|`` over the box's
    centre, its 2J axis extremes, and its corners (``J ≤ 6``) or 16 random points
    (common to every ``x`` of the step). That is the supremum whenever
    ``|∂_j g|`` peaks at a vertex or an axis extreme of the box, as for sums of
    squares, products and polynomials monotone in each component over the box;
    otherwise it is an estimate from inside.
    """

    def __init__(self, model: DecomposedSurrogate, beta: float, seed: SeedLike = None):
        self.model, self.beta = model, check_nonnegative(beta, "beta")
        self.offsets = box_points(len(model.components), seed)

    def lipschitz(self, mu: np.ndarray, r: np.ndarray, X) -> np.ndarray:
        """``B_j(x)`` for posterior means ``mu (m, J)`` and radii ``r (m, J)``: (m, J)."""
        F = mu[None] + self.offsets[:, None, :] * r[None]  # (P, m, J)
        h = 1e-6 * np.maximum(np.maximum(np.abs(F), r[None]), 1.0)
        B = np.zeros_like(mu)
        for j in range(mu.shape[1]):
            step = np.zeros_like(F)
            step[..., j] = h[..., j]
            up, down = self.model.h(F + step, X), self.model.h(F - step, X)
            B[:, j] = np.nanmax(np.abs(up - down) / (2 * h[..., j]), axis=0)
        return B

    def __call__(self, X) -> np.ndarray:
        mu, var = self.model.moments(X)
        r = ucb_radius(var, self.beta)
        return self.model.h(mu, X) + np.einsum("mj,mj->m", self.lipschitz(mu, r, X), r)


class CredibleBoxUCB:
    """Generalized D-GPUCB with the largest value of ``g`` over the credible box.

    ``a(x) = max_{f ∈ R(x)} sign · g(f; x)``, ``R(x) = Π_j [μ_j(x) - r_j(x), μ_j(x) + r_j(x)]``,
    ``r_j = sqrt(β_t) σ_j(x)``.

    Guarantee: whenever the components lie in ``R(x)`` (the event of
    :class:`LocalLipschitzUCB`), ``sign·g(f) ≤ a(x)``, by definition. It is the
    tightest bound valid on that event, so never above the local Lipschitz
    bound (the mean value theorem gives ``g(f) - g(μ) ≤ Σ_j B_j(x) r_j`` on the
    box): linearising ``g`` with its largest slope over the box overstates the
    rise of a convex ``g`` (the heat index) towards the box's far corner, and
    sums every component's rise where a smooth ``g`` reaches its largest value
    at one point.

    The maximum is taken over the box's centre, its ``2J`` axis extremes and
    its corners (``J ≤ 6``; else 16 random points, :func:`box_points`): exact
    where ``g`` is monotone in each component over the box, as the heat index,
    the wind chill and any linear or coordinatewise monotone ``g`` are within
    one branch; otherwise an estimate from inside. Costs ``P`` evaluations of
    ``g`` per input (15 for ``J = 3``), against the Monte Carlo bound's 512.
    """

    def __init__(self, model: DecomposedSurrogate, beta: float, seed: SeedLike = None):
        self.model, self.beta = model, check_nonnegative(beta, "beta")
        self.offsets = box_points(len(model.components), seed)

    def __call__(self, X) -> np.ndarray:
        mu, var = self.model.moments(X)
        F = mu[None] + self.offsets[:, None, :] * ucb_radius(var, self.beta)[None]  # (P, m, J)
        return np.nanmax(self.model.h(F, X), axis=0)

    def value_and_grad(self, X) -> tuple[np.ndarray, np.ndarray]:
        """``a(X)`` (m,) and a (sub)gradient (m, d): the gradient of ``sign · g`` at the
        box point ``F_P* = μ + o_P* r`` where the maximum is taken, through
        ``∂F_P* = ∂μ + o_P* ∂r``, ``∂r_j = β ∂σ_j² / 2 r_j``
        (:func:`~pp_decomp.acquisition.mc_gradient.sample_gradient`); exact wherever
        the maximising point is unique. ``NotImplementedError`` where a component has
        no input gradient."""
        X = np.asarray(X, dtype=float)
        mu, var, dmu, dvar = self.model.moments_grad(X)
        r = ucb_radius(var, self.beta)
        dr = sqrt_grad(r, self.beta * dvar)
        F = mu[None] + self.offsets[:, None, :] * r[None]  # (P, m, J)
        H = self.model.h(F, X)
        best = np.where(np.isnan(H), -np.inf, H).argmax(axis=0)  # (m,)
        rows = np.arange(len(X))
        offsets = self.offsets[best][:, :, None]  # (m, J, 1)
        grad = sample_gradient(self.model, X, F[best, rows], dmu + offsets * dr)
        return np.nanmax(H, axis=0), grad


RESOLVED_TAIL = 10  # sample quantiles are used while at least this many samples lie above


def high_quantile(samples: np.ndarray, q: float, overwrite_input: bool = False) -> np.ndarray:
    """The ``q``-quantile along axis 0, also beyond what the sample resolves.

    With ``n`` samples the sample quantile is used up to ``q0 = 1 - 10/n``.
    Above it (``q_t = Φ(sqrt(β_t))`` is ``0.99995`` at ``β_t = 15``, where 512
    samples would give their maximum whatever ``q``) the tail is extrapolated
    with the normal shape matched to the sample at ``q0`` and ``q1 = 1 - 100/n``:
    ``Q(q) = Q̂(q0) + (z_q - z_q0) (Q̂(q0) - Q̂(q1)) / (z_q0 - z_q1)``. Exact for a
    Gaussian, and consistent: as ``n`` grows, ``q0`` passes any fixed ``q`` and
    the sample quantile takes over. ``overwrite_input``: ``samples`` may be
    partially sorted in place (no copy), for a caller that has no further use of it.
    """
    n = samples.shape[0]
    q0 = 1.0 - RESOLVED_TAIL / n
    if q <= q0:
        return np.quantile(samples, q, axis=0, overwrite_input=overwrite_input)
    q1 = max(1.0 - 10 * RESOLVED_TAIL / n, 0.5)
    Q0, Q1 = np.quantile(samples, [q0, q1], axis=0, overwrite_input=overwrite_input)
    z, z0, z1 = _normal_scores(q, q0, q1)
    return Q0 + (z - z0) * (Q0 - Q1) / (z0 - z1)


@lru_cache(maxsize=64)
def _normal_scores(*qs: float) -> np.ndarray:
    """``norm.ppf(qs)``, cached: the same levels in every block of a step (~0.1 ms each)."""
    out = norm.ppf(list(qs))
    out.flags.writeable = False
    return out


MC_SAMPLES_PER_DRAW = 64  # samples per hyperparameter draw in the integrated Monte Carlo bound
# inputs per block of the Monte Carlo bound: samples x inputs x J doubles of about
# this many bytes, so that the samples, g's temporaries and the quantile's
# partition stay in cache and out of fresh (page-faulting) memory. Every value is
# per input, so blocks change no number. On perceived-temperature (512 samples,
# 836 stations, J = 3) one block of everything took ~6000 page faults per step
# and twice the time of 1 MB blocks
MC_BLOCK_BYTES = 1 << 20
MC_BLOCK_MIN_ROWS = 16  # with very many samples, blocks of fewer inputs only add per-call overhead


def mc_block_rows(z: np.ndarray) -> int:
    """Inputs per block of a Monte Carlo acquisition with standard normals ``z (n, J)``."""
    return max(MC_BLOCK_MIN_ROWS, MC_BLOCK_BYTES // (8 * z.size))


class MonteCarloUCB:
    """Generalized D-GPUCB by Monte Carlo (Bayesian UCB over the composition),
    integrated over the hyperparameter posterior.

    ``a(x) = (1/G) Σ_g Q_{q_t}[ sign · g(f_1(x), ..., f_J(x); x) | θ_g ]``, ``q_t = Φ(sqrt(β_t))``,

    the quantile (:func:`high_quantile`) over posterior-predictive draws of the
    components under joint hyperparameter draw ``θ_g`` (draw ``s_g`` of every
    component, as :class:`DGPUCB` pairs them), averaged over ``G`` joint draws.
    Under MAP (one draw) ``G = 1`` and the quantile is over all ``n_samples``;
    under full Bayes ``G = min(S, n_samples // 64)`` draws of at least 64
    samples each, evenly spaced over the ``S`` draws from a random start per
    step. The draws use common random numbers across
    ``x`` (fixed per step), so ``a`` is smooth in ``x``.

    The quantile is taken per draw and averaged (Snoek et al.'s integrated
    acquisition, as :class:`DGPUCB` and BoTorch's fully Bayesian models do)
    rather than over the mixture of all draws, whose spread adds the draws'
    disagreement about the mean to the exploration bonus. Why: docs/design.md,
    "Why these defaults".
    """

    def __init__(self, model: DecomposedSurrogate, beta: float, n_samples: int = 512, seed=None):
        rng = as_generator(seed)
        J = len(model.components)
        self.model, self.beta = model, check_nonnegative(beta, "beta")
        self.q = ucb_level(self.beta)
        self.draw_idx = rng.integers(0, 2**31 - 1, size=(n_samples, J))
        self.z = rng.standard_normal((n_samples, J))
        # the joint draws and their samples are fixed for the step: set once, not per call
        S = np.array([getattr(c, "n_draws", 1) for c in model.components])
        self.groups = int(min(S.max(), n_samples // MC_SAMPLES_PER_DRAW))
        if self.groups > 1:
            per = n_samples // self.groups
            # G joint draws evenly spaced over each component's draws, from a random start
            g = np.arange(self.groups)[:, None]
            s = (self.draw_idx[0, 0] + g * S // self.groups) % S  # (G, J)
            self.draw_idx, self.z = np.repeat(s, per, axis=0), self.z[: self.groups * per]

    def __call__(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        out = np.empty(len(X))
        blocks = self.model.marginal_sample_blocks(X, self.draw_idx, self.z, mc_block_rows(self.z))
        for sl, F in blocks:
            out[sl] = self._bound(self.model.h(F, X[sl]))  # F: (n, rows, J)
        return out

    def value_and_grad(self, X) -> tuple[np.ndarray, np.ndarray]:
        """``a(X)`` (m,) and its pathwise gradient (m, d) with this step's draws fixed
        (:mod:`~pp_decomp.acquisition.mc_gradient`); ``NotImplementedError`` where a
        component has no input gradient."""
        X = np.asarray(X, dtype=float)
        normals = self.model.normals(self.z)
        F, dF = self.model.samples_and_gradients(X, self.draw_idx, normals)
        h = self.model.h(F, X)  # (n, m)
        G = max(self.groups, 1)
        per, rows = len(self.z) // G, np.arange(len(X))
        value, grad = np.zeros(len(X)), np.zeros(X.shape)
        for g in range(G):
            block = h[g * per : (g + 1) * per]
            for c, k in quantile_terms(block, self.q, RESOLVED_TAIL, _normal_scores):
                k = k + g * per
                value += c * h[k, rows] / G
                grad += c * sample_gradient(self.model, X, F[k, rows], dF(k)) / G
        return value, grad

    def _bound(self, h: np.ndarray) -> np.ndarray:
        """The bound from the samples ``h (n, m)`` of ``sign · g``, which it overwrites."""
        if self.groups <= 1:
            return high_quantile(h, self.q, overwrite_input=True)
        h = h.reshape(self.groups, len(self.z) // self.groups, -1)
        return np.mean([high_quantile(hg, self.q, overwrite_input=True) for hg in h], axis=0)


class UCB:
    """GP-UCB (Srinivas et al.) on one GP of the composed output, integrated over the
    hyperparameter posterior as :class:`DGPUCB`: ``(1/S) Σ_s (μ_s(x) + sqrt(β_t) σ_s(x))``."""

    def __init__(self, model: ComposedSurrogate, beta: float):
        self.model, self.beta = model, check_nonnegative(beta, "beta")

    def __call__(self, X) -> np.ndarray:
        return integrated_ucb(*self.model.per_draw(X), self.beta)

    def value_and_grad(self, X) -> tuple[np.ndarray, np.ndarray]:
        """``a(X)`` (m,) and ``∂a/∂x`` (m, d); ``NotImplementedError`` without an input
        gradient of the GP."""
        return integrated_ucb_grad(*self.model.per_draw_grad(X), self.beta)


class SmallerUCB:
    """The smaller of a decomposed bound and GP-UCB's bound on one GP of the composed output.

    ``a(x) = min(a_dec(x), (1/S) Σ_s (μ^g_s(x) + sqrt(β_t) σ^g_s(x)))``

    with ``a_dec`` a decomposed upper bound of ``sign · g`` (:class:`MonteCarloUCB`,
    :class:`CredibleBoxUCB`, ...) and ``μ^g, σ^g`` the posterior of one GP fitted
    to the observed ``sign · g(y; x)`` (:class:`UCB`), both with the same ``β_t``.

    Guarantee: each bound holds with probability ``1 - δ`` under its own model
    (the component GPs; the GP of ``g``), so their minimum holds with
    probability ``1 - 2δ`` where both models do, a union bound, which costs
    ``2 log 2`` in ``β_t``'s argument and is left out here as the papers leave
    out their constants. The smaller bound explores no more than either: the
    minimum of upper bounds from several models is MF-GP-UCB's acquisition
    (Kandasamy et al. 2016, one bound per fidelity), and intersecting confidence
    intervals is how SafeOpt keeps its bounds (Sui et al. 2015).

    Why here: independent component priors pushed through a convex ``g`` give
    ``g`` a far heavier upper tail at unexplored inputs than ``g`` has (the heat
    index of a hot and humid station, which real air masses rarely are), so a
    decomposed bound keeps returning there; one GP of ``g`` is calibrated to
    ``g``'s own spread and caps it. Where the components are observed the
    decomposed bound is the tighter one and takes over.

    Parameters
    ----------
    decomposed : callable ``X (m, d) -> (m,)``, a decomposed upper bound of ``sign · g``
    composed : ComposedSurrogate, one GP of ``sign · g``
    beta : float, ``β_t`` of :class:`UCB`
    """

    PARTS = ("decomposed", "composed")  # a maximiser's screen thins both

    def __init__(self, decomposed, composed: ComposedSurrogate, beta: float):
        self.decomposed, self.composed = decomposed, UCB(composed, beta)

    def __call__(self, X) -> np.ndarray:
        return np.minimum(self.decomposed(X), self.composed(X))

    def value_and_grad(self, X) -> tuple[np.ndarray, np.ndarray]:
        """``a(X)`` and a subgradient: the gradient of the smaller bound at each input
        (the decomposed one's at a tie); ``NotImplementedError`` unless both have one."""
        if not hasattr(self.decomposed, "value_and_grad"):
            raise NotImplementedError(f"{type(self.decomposed).__name__} has no value_and_grad")
        a, da = self.decomposed.value_and_grad(X)
        b, db = self.composed.value_and_grad(X)
        first = a <= b
        return np.where(first, a, b), np.where(first[:, None], da, db)
