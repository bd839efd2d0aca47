"""Batched GP posteriors over hyperparameter draws, in plain numpy.

For each draw ``s`` with ``K_s = k_s(X, X) + (σ_s² + jitter) I = L_s L_sᵀ``
(:func:`factorise`):

* ``μ_s(x) = m + k_s(x, X) K_s⁻¹ (y - m)``
* ``σ_s²(x) = k_s(x, x) - ‖L_s⁻¹ k_s(X, x)‖²``
* ``log p_s(y) = -½ (y - m)ᵀ K_s⁻¹ (y - m) - Σ_i log (L_s)_ii - n/2 log 2π``

Over the S draws the posterior of ``f(x)`` is a Gaussian mixture with

* mean ``E_s μ_s(x)``
* variance ``E_s σ_s²(x) + Var_s μ_s(x)``.

:class:`DrawPosterior` gives every posterior with S draws (this module's
:class:`GPPosterior`, the entire GP, the additive GP) the same mixture moments
and the same sampling. Factorisations are done once at construction;
predictions are chunked over new points so that the ``(S, m, n)``
cross-covariance stays within ``max_bytes``. No Python loop runs over points; one
runs over draws only to invert each factor (:func:`cholesky_inverse`).
"""

from __future__ import annotations

import copy

import numpy as np
from scipy.linalg import lapack
from scipy.special import ndtr

from pp_decomp.components.posterior.draws import HyperDraws
from pp_decomp.components.posterior.gradient import (
    NoInputGradient,
    moments_and_grad,
    paired_moments_and_grad,
    triangular_solves,
)
from pp_decomp.components.posterior.likelihood import gaussian_log_likelihoods
from pp_decomp.components.posterior.triangular import lower_times
from pp_decomp.kernels import correlation_from_sqdist, kernel_matrix
from pp_decomp.validate import check_positive_int

_MAX_BYTES = 64 * 2**20
JITTER = 1e-6  # PyMC's JITTER_DEFAULT, added to K's diagonal both here and in the PyMC model


def draws_cov(kernel, X1: np.ndarray, X2: np.ndarray, draws) -> np.ndarray:
    """``k_s(X1, X2)`` for every draw: (S, n1, n2). ``kernel``: a shorthand name with
    :class:`HyperDraws`, or a :class:`~pp_decomp.kernels.bound.BoundKernel` with
    :class:`~pp_decomp.components.posterior.draws.KernelDraws`."""
    if isinstance(kernel, str):
        return kernel_matrix(kernel, X1, X2, draws.ls, draws.eta, draws.alpha)
    return kernel.matrix(X1, X2, kernel.theta(draws.values))


def paired_cov(kernel: str, X: np.ndarray, Xnew: np.ndarray, draws) -> np.ndarray:
    """``k_j(X, Xnew[j])`` with draw ``j``'s hyperparameters, for a shorthand ``kernel``:
    ``X (n, d)``, ``Xnew (P, m, d)``, ``P`` draws; (P, n, m)."""
    w = 1.0 / np.asarray(draws.ls, dtype=float) ** 2  # (P, d)
    r2 = np.zeros((len(Xnew), len(X), Xnew.shape[1]))
    for j in range(X.shape[1]):  # one input at a time: a (P, n, m, d) array is d times the memory
        t = X[None, :, None, j] - Xnew[:, None, :, j]
        t *= t
        t *= w[:, j, None, None]
        r2 += t
    k = correlation_from_sqdist(kernel, r2, draws.alpha)
    k *= (np.asarray(draws.eta, dtype=float) ** 2)[:, None, None]
    return k


def draws_prior_var(kernel, X: np.ndarray, draws) -> np.ndarray:
    """``k_s(x, x)`` at the rows of ``X``: (S, m), or (S, 1) for a shorthand kernel
    (stationary: ``η_s²`` everywhere)."""
    if isinstance(kernel, str):
        return (draws.eta**2)[:, None]
    return kernel.diag(X, kernel.theta(draws.values))


def factorise(K: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``L⁻¹``, ``α = K⁻¹ r`` and ``log N(r; 0, K)`` for ``K = L Lᵀ``, batched over draws.

    Parameters
    ----------
    K : (S, n, n) covariance matrices (noise and jitter on the diagonal)
    r : (n,) residuals ``y - m``, or (S, n): one row per draw (a learned output
        warp gives each draw its own ``y``)

    Returns
    -------
    L_inv : (S, n, n); alpha : (S, n); log_ml : (S,)

    Holding ``L⁻¹`` turns every later triangular solve into one batched matmul
    (``L⁻¹ k`` for the variance, ``L⁻ᵀ L⁻¹ r`` for the weights). Raises
    ``numpy.linalg.LinAlgError`` when a ``K`` is not positive definite.
    """
    L_inv = cholesky_inverse(K)
    r = np.asarray(r, dtype=float)
    # a batched matmul either way: BLAS, where einsum was slower at large n
    Lr = L_inv @ r if r.ndim == 1 else (L_inv @ r[..., None])[..., 0]
    alpha = np.einsum("sji,sj->si", L_inv, Lr)
    logdet_half = -np.log(np.diagonal(L_inv, axis1=-2, axis2=-1)).sum(-1)
    fit = np.einsum("si,si->s", alpha, np.broadcast_to(r, alpha.shape))
    log_ml = -0.5 * fit - logdet_half - 0.5 * r.shape[-1] * np.log(2 * np.pi)
    return L_inv, alpha, log_ml


def log_likelihood_after(L_inv: np.ndarray, r: np.ndarray, n0: int) -> np.ndarray:
    """``log p(r[n0:] | r[:n0])`` per draw from the factor of all ``n`` rows: (S,).

    ``L⁻¹`` is lower triangular and its leading ``n0 × n0`` block is the inverse
    factor of the first ``n0`` rows, so with ``z = L⁻¹ r`` the first ``n0``
    entries of ``z`` and of ``diag L⁻¹`` make ``log p(r[:n0])``, and the rest

    ``log p(r[n0:] | r[:n0]) = -½ Σ_{i≥n0} z_i² + Σ_{i≥n0} log (L⁻¹)_ii - (n - n0)/2 log 2π``.

    These are the importance weights that move draws of ``θ | r[:n0]`` to
    ``θ | r`` (no second factorisation). ``L_inv (S, n, n)``, ``r (n,)``.
    """
    n = L_inv.shape[-1]
    if not 0 <= n0 <= n:
        raise ValueError(f"n0 must lie in 0..{n}; got {n0!r}")
    z = L_inv[:, n0:, :] @ r  # (S, n - n0)
    log_diag = np.log(np.diagonal(L_inv, axis1=-2, axis2=-1)[:, n0:])
    return -0.5 * np.einsum("si,si->s", z, z) + log_diag.sum(1) - 0.5 * (n - n0) * np.log(2 * np.pi)


def gaussian_log_likelihood(
    K: np.ndarray, r: np.ndarray, overwrite_K: bool = False
) -> float | np.ndarray:
    """``log N(r; 0, K)`` for one ``(n, n)`` matrix (a float) or a batch ``(S, n, n)``
    ((S,)), ``-inf`` where ``K`` is not positive definite.

    Only the likelihood, one Cholesky factor and a forward substitution per
    matrix (:func:`~pp_decomp.components.posterior.likelihood.gaussian_log_likelihoods`),
    cheaper than :func:`factorise` where no prediction follows (structure
    scoring, the weights of prior draws). ``overwrite_K``: ``K`` (either shape)
    may be factorised in place, its lower triangle then holding ``L``.
    """
    K = np.asarray(K)
    if K.ndim == 3:
        return gaussian_log_likelihoods(K, r, overwrite_K)
    if K.ndim != 2 or np.shape(r) != K.shape[:1] or K.shape[0] != K.shape[1]:
        raise ValueError(
            f"K must be (n, n) or (S, n, n) and r (n,); got K {K.shape} and r {np.shape(r)}"
        )
    return float(gaussian_log_likelihoods(K[None], r, overwrite_K)[0])


def cholesky_inverse(K: np.ndarray) -> np.ndarray:
    """``L⁻¹`` where ``K = L Lᵀ``, batched over leading axes: (..., n, n).

    The triangular inverse of each factor in place (LAPACK's ``dtrtri``, ``n³/3``
    flops), not a general solve against the identity (an LU factorisation of
    ``L`` first: about eight times the flops). Raises
    ``numpy.linalg.LinAlgError`` when a ``K`` is not positive definite.
    """
    L = np.ascontiguousarray(np.linalg.cholesky(K), dtype=float)
    n = L.shape[-1]
    for factor in L.reshape(int(np.prod(L.shape[:-2])), n, n) if n else ():
        # factor.T is Fortran-ordered upper triangular Lᵀ: inverted where it lies,
        # (Lᵀ)⁻¹ = (L⁻¹)ᵀ, so factor then holds L⁻¹
        _, info = lapack.dtrtri(factor.T, lower=0, overwrite_c=1)
        if info:
            raise np.linalg.LinAlgError(f"a Cholesky factor is singular (dtrtri info {info})")
    return L


def mixture_moments(mean_s: np.ndarray, var_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of an equal-weight Gaussian mixture along axis 0.

    ``mean = E_s μ_s``, ``var = E_s σ_s² + Var_s μ_s``.
    """
    mean = mean_s.mean(axis=0)
    var = var_s.mean(axis=0) + mean_s.var(axis=0)
    return mean, var


def mixture_quantiles(mean_s: np.ndarray, sd_s: np.ndarray, q) -> np.ndarray:
    """Quantiles ``q (k,)`` of the equal-weight Gaussian mixtures ``N(mean_s, sd_s²)``
    along axis 0 of ``(S, m)``: ``(k, m)``, by bisection to 1e-10 of the range."""
    q = np.asarray(q, dtype=float)[:, None]
    sd_s = np.maximum(sd_s, 1e-300)
    lo = np.broadcast_to((mean_s - 9 * sd_s).min(0), (len(q), mean_s.shape[1])).copy()
    hi = np.broadcast_to((mean_s + 9 * sd_s).max(0), lo.shape).copy()
    for _ in range(int(np.ceil(np.log2(1e10))) + 2):
        mid = (lo + hi) / 2
        below = ndtr((mid[:, None, :] - mean_s) / sd_s).mean(1) < q
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return (lo + hi) / 2


def mixture_moments_grad(
    mean_s: np.ndarray,
    var_s: np.ndarray,
    dmean_s: np.ndarray,
    dvar_s: np.ndarray,
    weights: np.ndarray | None = None,
) -> tuple[np.ndarray, ...]:
    """:func:`mixture_moments` (or, with ``weights (S,)`` summing to 1, the weighted
    mixture's ``mean = Σ_s w_s μ_s``, ``var = max(Σ_s w_s (σ_s² + μ_s²) - mean², 0)``)
    and their input gradients, from per-draw moments (S, m) and gradients (S, m, d):
    ``∂mean = Σ_s w_s ∂μ_s``, ``∂var = Σ_s w_s (∂σ_s² + 2 μ_s ∂μ_s) - 2 mean ∂mean``.
    Returns (m,), (m,), (m, d), (m, d)."""
    if weights is None:
        mean, var = mixture_moments(mean_s, var_s)
        w = np.full(len(mean_s), 1.0 / len(mean_s))
    else:
        w = np.asarray(weights, dtype=float)
        mean = w @ mean_s
        var = np.maximum(w @ (var_s + mean_s**2) - mean**2, 0.0)
    dmean = np.einsum("s,smd->md", w, dmean_s)
    dvar = np.einsum("s,smd->md", w, dvar_s + 2 * mean_s[..., None] * dmean_s)
    dvar -= 2 * mean[:, None] * dmean
    if weights is not None:
        dvar[var <= 0.0] = 0.0  # clipped at zero: flat
    return mean, var, dmean, dvar


def joint_samples(mean, cov, inverse, z, jitter, noise=None) -> np.ndarray:
    """``mean[inverse] + L[inverse] z``: joint samples from per-draw means (S', m)
    and covariances (S', m, m), ``L`` their Cholesky factors with ``jitter`` on
    the diagonal, or the observation ``noise`` (S', m) where given and larger (it
    already holds the likelihood's jitter, which would otherwise count twice).
    ``cov`` is changed in place; ``inverse`` (n,) picks each sample's draw and
    ``z`` (n, m) are its standard normals: (n, m)."""
    if noise is not None:
        jitter = np.maximum(jitter, noise)
    diag = np.arange(cov.shape[-1])
    cov[:, diag, diag] += jitter
    L = np.linalg.cholesky(cov)
    return mean[inverse] + np.einsum("kij,kj->ki", L[inverse], z)


class DrawPosterior:
    """Mixture moments and samples of a posterior with S hyperparameter draws.

    Subclasses give :meth:`per_draw`, :meth:`joint_per_draw`, ``n_draws`` and
    ``noise_var (S,)`` (or :meth:`noise_per_draw` where the noise depends on ``x``).
    """

    def per_draw(self, Xnew) -> tuple[np.ndarray, np.ndarray]:
        """Per-draw means and variances of the latent ``f`` at ``Xnew``: (S, m) each."""
        raise NotImplementedError

    def joint_per_draw(self, Xnew, idx=None) -> tuple[np.ndarray, np.ndarray]:
        """Per-draw joint means (S', m) and covariances (S', m, m) at ``Xnew``."""
        raise NotImplementedError

    def per_draw_of(self, Xnew, idx) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`per_draw` of the draws ``idx (S',)`` only: (S', m) each."""
        mean, var = self.per_draw(Xnew)
        return mean[idx], var[idx]

    def paired_of(self, Xnew, idx) -> tuple[np.ndarray, np.ndarray]:
        """Draw ``idx[j]``'s latent mean and variance at its own inputs ``Xnew[j]``, for
        every ``j``: ``Xnew (P, m, d)``, ``idx (P,)``; (P, m) each (a network's sample
        paths, each with its own draw and its own parent values); one call of
        :meth:`per_draw_of` per distinct draw, on all its pairs' inputs."""
        Xnew, idx = np.asarray(Xnew, dtype=float), np.asarray(idx)
        P, m, d = Xnew.shape
        mean, var = np.empty((P, m)), np.empty((P, m))
        for s in np.unique(idx):
            rows = np.flatnonzero(idx == s)
            a, v = self.per_draw_of(Xnew[rows].reshape(-1, d), [s])
            mean[rows], var[rows] = a.reshape(len(rows), m), v.reshape(len(rows), m)
        return mean, var

    def per_draw_grad(self, Xnew) -> tuple[np.ndarray, ...]:
        """:meth:`per_draw` and the gradients of both in ``Xnew``; ``NoInputGradient``
        where a posterior has none (:mod:`~pp_decomp.components.posterior.gradient`)."""
        raise NoInputGradient(f"{type(self).__name__} has no input gradient")

    def sample_jitter(self, cov: np.ndarray) -> np.ndarray | float:
        """What is added to the diagonal of a joint covariance before its Cholesky."""
        return JITTER

    def noise_per_draw(self, Xnew) -> np.ndarray:
        """Observation-noise variance per draw at ``Xnew``: (S, m)."""
        return np.broadcast_to(self.noise_var[:, None], (self.n_draws, len(Xnew)))

    def moments(self, Xnew) -> tuple[np.ndarray, np.ndarray]:
        """Mixture mean and variance over the draws at ``Xnew``: (m,) each."""
        return mixture_moments(*self.per_draw(Xnew))

    def sample(self, Xnew, n_samples: int, rng, joint: bool = False, noise: bool = False):
        """Posterior samples of ``f`` (of ``y`` if ``noise``) at ``Xnew``: (n_samples, m).

        Each sample first draws a hyperparameter index ``s`` uniformly, so the
        samples follow the mixture. ``joint=True`` samples whole functions over
        ``Xnew`` (jointly Gaussian given ``s``); otherwise each point is sampled
        from its marginal independently, which is all a pointwise acquisition needs.
        """
        return self.sample_with_draws(Xnew, n_samples, rng, joint, noise)[0]

    def sample_with_draws(self, Xnew, n_samples: int, rng, joint: bool = False, noise=False):
        """:meth:`sample` and the draw each sample came from: (n_samples, m), (n_samples,)."""
        n_samples = check_positive_int(n_samples, "n_samples")
        Xnew = np.asarray(Xnew, dtype=float)
        m = Xnew.shape[0]
        s_idx = rng.integers(0, self.n_draws, size=n_samples)
        z = rng.standard_normal((n_samples, m))
        if joint:
            uniq, inverse = np.unique(s_idx, return_inverse=True)
            mean, cov = self.joint_per_draw(Xnew, uniq)
            noise_s = self.noise_per_draw(Xnew)[uniq] if noise else None
            return joint_samples(mean, cov, inverse, z, self.sample_jitter(cov), noise_s), s_idx
        mean_s, var_s = self.per_draw(Xnew)
        if noise:
            var_s = var_s + self.noise_per_draw(Xnew)
        return mean_s[s_idx] + np.sqrt(var_s[s_idx]) * z, s_idx


class GPPosterior(DrawPosterior):
    """Posterior of a zero-mean GP given data, for each of S hyperparameter draws.

    Parameters
    ----------
    kernel : str or BoundKernel
        Kernel name (:data:`pp_decomp.kernels.KERNELS`) with :class:`HyperDraws`, or a
        kernel expression on the inputs with :class:`KernelDraws` (:func:`draws_cov`).
    X : (n, d) array
        Training inputs (already scaled as the draws expect).
    y : (n,) array, or (S, n)
        Training outputs (already standardised as the draws expect); a row per
        draw where each draw has its own (an output warp's).
    draws : HyperDraws
        S hyperparameter draws.
    jitter : float
        Added to the diagonal of ``K`` (PyMC's default ``1e-6``).
    mean_var : float
        Prior variance ``c`` of an integrated constant mean: ``k + c`` is the kernel.
    """

    def __init__(
        self,
        kernel: str,
        X: np.ndarray,
        y: np.ndarray,
        draws: HyperDraws,
        jitter=JITTER,
        mean_var: float = 0.0,
    ):
        self.kernel = kernel
        self.mean_var = float(mean_var)
        self.X = np.asarray(X, dtype=float)
        self.y = np.asarray(y, dtype=float)
        self.draws = draws
        self.jitter = float(jitter)
        n = self.X.shape[0]
        K = self.prior_cov(self.X, self.X)
        idx = np.arange(n)
        K[:, idx, idx] += (draws.sigma**2)[:, None] + self.jitter
        self.L_inv, self.alpha, self.log_marginal_likelihood = factorise(K, self.y)

    @property
    def n_draws(self) -> int:
        return self.draws.n_draws

    @property
    def noise_var(self) -> np.ndarray:
        """Observation-noise variance per draw as the likelihood has it, ``σ_s² + jitter``: (S,)."""
        return self.draws.sigma**2 + self.jitter

    def sample_jitter(self, cov):
        return self.jitter

    def prior_cov(self, X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        """``k_s(X1, X2) + c`` for every draw: (S, n1, n2)."""
        return self._k(self.draws, X1, X2)

    def prior_var(self, X: np.ndarray) -> np.ndarray:
        """``k_s(x, x) + c`` at the rows of ``X``: (S, m), or (S, 1) where it is the
        same everywhere (a stationary kernel's ``η²``)."""
        return draws_prior_var(self.kernel, X, self.draws) + self.mean_var

    def _k(self, d: HyperDraws, X1, X2) -> np.ndarray:
        K = draws_cov(self.kernel, X1, X2, d)
        return K + self.mean_var if self.mean_var else K

    def _chunks(self, m: int, n_draws: int):
        """Slices of ``m`` inputs keeping ``(n_draws, n, chunk)`` arrays within ``_MAX_BYTES``."""
        n = max(self.X.shape[0], 1)
        step = max(1, _MAX_BYTES // (8 * n_draws * n * 3))
        for start in range(0, m, step):
            yield slice(start, min(m, start + step))

    def per_draw(self, Xnew: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-draw posterior means and variances of the latent ``f`` at ``Xnew``: (S, m) each."""
        return self.per_draw_of(Xnew, None)

    def per_draw_of(self, Xnew: np.ndarray, idx) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`per_draw` of the draws ``idx (S',)`` only (every draw for ``None``), at
        their cost alone: (S', m) each, in chunks of inputs."""
        Xnew = np.asarray(Xnew, dtype=float)
        if idx is None:
            draws, alpha, idx = self.draws, self.alpha, np.arange(self.n_draws)
        else:
            idx = np.atleast_1d(idx)
            draws, alpha = self.draws.subset(idx), self.alpha[idx]
        m = Xnew.shape[0]
        mean, var = np.empty((len(idx), m)), np.empty((len(idx), m))
        for sl in self._chunks(m, len(idx)):
            Ks = self._k(draws, self.X, Xnew[sl])  # (S', n, mc)
            mean[:, sl] = np.einsum("snm,sn->sm", Ks, alpha)
            V = lower_times(self.L_inv, idx, len(self.X), Ks)
            prior = draws_prior_var(self.kernel, Xnew[sl], draws) + self.mean_var
            var[:, sl] = prior - np.einsum("snm,snm->sm", V, V)
        np.maximum(var, 0.0, out=var)
        return mean, var

    def paired_of(self, Xnew, idx) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`DrawPosterior.paired_of` in one batch over the pairs (a shorthand kernel),
        in chunks of inputs."""
        if not isinstance(self.kernel, str):
            return super().paired_of(Xnew, idx)
        Xnew, idx = np.asarray(Xnew, dtype=float), np.asarray(idx, dtype=np.int64)
        P, m, d = Xnew.shape
        draws, alpha = self.draws.subset(idx), self.alpha[idx]
        mean, var = np.empty((P, m)), np.empty((P, m))
        for sl in self._chunks(m, P * max(d, 3) // 3):
            Ks = paired_cov(self.kernel, self.X, Xnew[:, sl], draws) + self.mean_var
            mean[:, sl] = np.einsum("pnm,pn->pm", Ks, alpha)
            V = lower_times(self.L_inv, idx, len(self.X), Ks)
            var[:, sl] = (draws.eta**2)[:, None] + self.mean_var - np.einsum("pnm,pnm->pm", V, V)
        np.maximum(var, 0.0, out=var)
        return mean, var

    def paired_grad(self, Xnew, idx) -> tuple[np.ndarray, ...]:
        """:meth:`paired_of` and its gradients in ``Xnew (P, m, d)``: (P, m), (P, m),
        (P, m, d), (P, m, d) (:func:`~pp_decomp.components.posterior.gradient.
        paired_moments_and_grad`, in chunks of inputs; ``NoInputGradient`` for a kernel
        expression)."""
        Xnew, idx = np.asarray(Xnew, dtype=float), np.asarray(idx, dtype=np.int64)
        draws, alpha = self.draws.subset(idx), self.alpha[idx]
        P, m, d = Xnew.shape
        parts = [
            paired_moments_and_grad(
                self.kernel, self.X, Xnew[:, sl], draws, self.L_inv, idx, alpha, self.mean_var
            )
            for sl in self._chunks(m, P * max(d, 3) // 3)
        ]
        return tuple(np.concatenate([p[i] for p in parts], axis=1) for i in range(4))

    def per_draw_grad(self, Xnew: np.ndarray) -> tuple[np.ndarray, ...]:
        """:meth:`per_draw` and its gradients with respect to ``Xnew (m, d)``:
        (S, m), (S, m), (S, m, d), (S, m, d)
        (:func:`~pp_decomp.components.posterior.gradient.moments_and_grad`; raises
        ``NoInputGradient`` for a kernel expression)."""
        Xnew = np.asarray(Xnew, dtype=float)
        return moments_and_grad(
            self.kernel,
            self.X,
            Xnew,
            self.draws,
            triangular_solves(self.L_inv),
            self.alpha,
            self.prior_var(Xnew),
            self.mean_var,
        )

    def joint_per_draw(self, Xnew: np.ndarray, idx: np.ndarray | None = None):
        """Per-draw joint posterior mean (S', m) and covariance (S', m, m) at ``Xnew``."""
        Xnew = np.asarray(Xnew, dtype=float)
        if idx is None:
            idx = np.arange(self.n_draws)
        draws, alpha = self.draws.subset(idx), self.alpha[idx]
        Ks, Kss = self._k(draws, self.X, Xnew), self._k(draws, Xnew, Xnew)
        V = lower_times(self.L_inv, idx, len(self.X), Ks)
        mean = np.einsum("snm,sn->sm", Ks, alpha)
        cov = Kss - V.transpose(0, 2, 1) @ V
        return mean, cov

    def believing(self, Xp: np.ndarray) -> GPPosterior:
        """This posterior having also observed, under each draw ``s``, its own mean
        ``μ_s`` at ``Xp (k, d)`` (scaled inputs): GP-BUCB's hallucinated observations
        (Desautels et al. 2014). A copy on the rows ``(X, Xp)``, the targets
        ``(y, μ_s(Xp))`` per draw, so that every draw's mean is unchanged everywhere
        and its variance is that of the GP told ``Xp`` as well (the noise of each draw
        at the new rows). ``log_marginal_likelihood`` stays that of ``y``; ``y`` the
        observed outputs.

        >>> import numpy as np
        >>> from pp_decomp.components.posterior.draws import HyperDraws
        >>> d = HyperDraws(ls=np.full((1, 1), 0.3), eta=np.ones(1), sigma=np.full(1, 0.1))
        >>> post = GPPosterior("matern32", np.array([[0.1], [0.9]]), np.array([0.5, -0.5]), d)
        >>> b = post.believing(np.array([[0.5]]))
        >>> bool(np.allclose(b.per_draw([[0.4]])[0], post.per_draw([[0.4]])[0]))
        True
        >>> bool(b.per_draw([[0.4]])[1][0, 0] < post.per_draw([[0.4]])[1][0, 0])
        True
        """
        Xp = np.atleast_2d(np.asarray(Xp, dtype=float))
        if Xp.ndim != 2 or Xp.shape[1] != self.X.shape[1]:
            raise ValueError(f"Xp must be (k, {self.X.shape[1]}); got {Xp.shape}")
        believed = copy.copy(self)
        if not len(Xp):
            return believed
        mean_p, _ = self.per_draw(Xp)  # (S, k)
        believed.X = np.vstack([self.X, Xp])
        K = believed.prior_cov(believed.X, believed.X)
        rows = np.arange(len(believed.X))
        K[:, rows, rows] += self.noise_var[:, None]
        believed.L_inv = cholesky_inverse(K)
        y = np.broadcast_to(self.y, (self.n_draws, self.y.shape[-1]))
        r = np.concatenate([y, mean_p], axis=1)
        believed.alpha = np.einsum(
            "sji,sj->si", believed.L_inv, np.einsum("sij,sj->si", believed.L_inv, r)
        )
        return believed
