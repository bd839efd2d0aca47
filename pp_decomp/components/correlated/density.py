"""The log density of correlated components (intrinsic coregionalisation) and its gradient.

The model of ``J`` components observed at one shared design ``X (n, d)``:

``vec(Y) ~ N(0, B ⊗ K + S ⊗ I_n)``, ``K = c_ℓ(X, X) + m``, ``B = diag(η) C diag(η)``,
``S = diag(σ² + jitter)``

with ``c_ℓ`` the unit-amplitude kernel shared by the components, ``m`` the
integrated constant mean's variance, ``η_j`` each component's amplitude,
``C ~ LKJ(lkj_eta)`` the correlation between the components and ``σ_j`` each
component's noise. ``vec(Y)`` stacks the columns of ``Y (n, J)`` (component
after component), so block ``(i, j)`` of the covariance is ``B_ij K + δ_ij S_jj I``.

Both factors are diagonalised, never the ``nJ × nJ`` matrix (Bonilla et al.
2008; Stegle et al. 2011): with ``K = U diag(λ) Uᵀ`` and
``S^{-½} B S^{-½} = V diag(D) Vᵀ``, ``P = S^{-½} V``,

``B ⊗ K + S ⊗ I = (P⁻ᵀ ⊗ U) (diag(D) ⊗ diag(λ) + I) (P⁻ᵀ ⊗ U)ᵀ``

so with ``Ỹ = Uᵀ Y P`` and ``W_kj = 1 / (λ_k D_j + 1)``:

* ``log p(Y) = -½ Σ Ỹ² W + ½ Σ log W - (n/2) Σ_j log S_jj - (nJ/2) log 2π``;
* ``A = U (Ỹ ⊙ W) Pᵀ`` is ``α = Σ⁻¹ vec(Y)`` as an ``(n, J)`` matrix, and the
  gradient ``½ tr((ααᵀ - Σ⁻¹) ∂Σ)`` is, in ``K``, ``B`` and ``S``:
  ``G_K = ½ (A B Aᵀ - U diag(W D) Uᵀ)``,
  ``G_B = ½ (Aᵀ K A - P diag(Wᵀ λ) Pᵀ)``,
  ``G_S = ½ (Σ_k A_kj² - Σ_i P_ji² Σ_k W_ki)``.

``O(n³ + J³)`` per evaluation instead of ``O(n³ J³)``. The correlation is
parametrised by its canonical partial correlations ``tanh(y)`` (Lewandowski,
Kurowicka & Joe 2009, as Stan and PyMC's ``LKJCorr`` transform it).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from pp_decomp.components.gp.density import LOG_2PI, _gamma, _lognormal
from pp_decomp.components.gp.priors import Priors
from pp_decomp.components.posterior.batched import JITTER
from pp_decomp.kernels import pymc_cov
from pp_decomp.kernels.builtin import FAMILY

CORRELATED_KERNELS = ("se", "matern52", "matern32")
LKJ_ETA = 2.0  # C ~ LKJ(2): density ∝ det(C), pulls towards independence, any C allowed


def correlation_and_slope(kernel: str, r2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit-amplitude correlation ``c(r²)`` and ``∂c/∂r²``, by the family's one definition."""
    if kernel not in CORRELATED_KERNELS:
        raise ValueError(
            f"correlated components need a kernel in {CORRELATED_KERNELS}; got {kernel!r}"
        )
    family = FAMILY[kernel]
    return family.correlation(r2), family.gradient(r2)[0]


def n_correlations(J: int) -> int:
    """Free parameters of a ``J × J`` correlation matrix: ``J (J - 1) / 2``."""
    return J * (J - 1) // 2


@numba.njit(cache=True)
def correlation_cholesky(y: np.ndarray, J: int) -> tuple[np.ndarray, float, float]:
    """Cholesky factor ``L`` of the correlation with partial correlations ``tanh(y)``.

    Row ``i`` of ``L`` is ``L_ij = tanh(y_ij) sqrt(1 - Σ_{k<j} L_ik²)`` (``j < i``),
    ``L_ii = sqrt(1 - Σ_{k<i} L_ik²)``; ``y`` lists the ``(i, j)``, ``j < i``, row by row.

    Returns
    -------
    L : (J, J)
    log_lkj : ``log LKJ(C | lkj_eta) = (lkj_eta - 1) log det C``
        ``= Σ_i (2 lkj_eta - 2) log L_ii``, up to its constant
    log_jac : ``log |∂C/∂y|``, the transform's Jacobian (for sampling in ``y``):
        ``Σ_{i ≥ 1} (J - i - 1) log L_ii`` (0-based ``i``; ``C`` from ``L``, as in
        Stan's ``lkj_corr_cholesky``) plus ``log |∂L/∂y|``
    """
    L = np.zeros((J, J))
    L[0, 0] = 1.0
    log_jac, k = 0.0, 0
    for i in range(1, J):
        left = 1.0
        for j in range(i):
            z = math.tanh(y[k])
            L[i, j] = z * math.sqrt(left)
            # log(1 - tanh²) written so that it stays finite in the tails
            a = abs(y[k])
            log_jac += 0.5 * math.log(left) + 2.0 * (
                math.log(2.0) - a - math.log1p(math.exp(-2 * a))
            )
            left = max(left - L[i, j] ** 2, 1e-300)
            k += 1
        L[i, i] = math.sqrt(left)
    log_lkj = 0.0
    for i in range(1, J):
        log_lkj += (2 * LKJ_ETA - 2) * math.log(L[i, i])
        log_jac += (J - i - 1) * math.log(L[i, i])  # |∂C/∂L|
    return L, log_lkj, log_jac


@numba.njit(cache=True)
def _correlation_terms(y: np.ndarray, J: int, jacobian: bool):
    """``C``, its log prior (with the transform's Jacobian if ``jacobian``), and
    their derivatives in ``y``: (J, J), float, (k, J, J), (k,).

    ``y_m`` (row ``i`` of ``L``, column ``m``, ``t = tanh(y_m)``) moves row ``i`` only:
    ``L_im = t √left_m`` with ``left_m = 1 - Σ_{j<m} L_ij²`` gives
    ``∂L_im = (1 - t²) √left_m``, and ``∂L_ij = -t L_ij`` for ``j > m`` (the
    diagonal included), since every later entry carries the factor ``√(1 - t²)``.
    So ``∂C = r Lᵀ + L rᵀ`` with ``r`` that row, ``∂ log L_ii = -t``, and the log
    density moves by ``-t (2 lkj_eta - 2)``, plus ``-t (J - m)`` with the Jacobian.
    """
    L, log_lkj, log_jac = correlation_cholesky(y, J)
    C = L @ L.T
    value = log_lkj + (log_jac if jacobian else 0.0)
    k = len(y)
    dC, dv = np.zeros((k, J, J)), np.empty(k)
    r = np.empty(J)
    for i in range(1, J):
        # √left_m from the row's tail, m walking down: left_m = L_ii² + Σ_{j≥m} L_ij²
        # (L_im / t would fail at t = 0)
        root = L[i, i]
        for m in range(i - 1, -1, -1):
            root = math.sqrt(root * root + L[i, m] * L[i, m])
            idx = i * (i - 1) // 2 + m  # y lists the (i, m), m < i, row by row
            t = math.tanh(y[idx])
            r[:] = 0.0
            r[m] = (1.0 - t * t) * root
            for j in range(m + 1, i + 1):
                r[j] = -t * L[i, j]
            for c in range(J):
                acc = 0.0
                for j in range(i + 1):
                    acc += r[j] * L[c, j]
                dC[idx, i, c] += acc
                dC[idx, c, i] += acc
            dv[idx] = -t * (2 * LKJ_ETA - 2) - (t * (J - m) if jacobian else 0.0)
    return C, value, dC, dv


def _log_prior(priors: Priors, z_ls, z_sigma, z_eta, d: int) -> tuple[float, np.ndarray]:
    """``Σ log p(ℓ, σ, η)`` at ``e^z`` and its gradient, as :class:`Priors` defines them."""
    parts = []
    for z in z_ls:
        if priors.ls_family == "lognormal":
            parts.append(_lognormal(z, priors.ls_loc + 0.5 * np.log(d), priors.ls_scale))
        else:
            a, b = priors.ls_alpha, priors.ls_beta
            v = a * math.log(b) - math.lgamma(a) - (a + 1.0) * z - b * math.exp(-z)
            parts.append((v, -(a + 1.0) + b * math.exp(-z)))
    for z in z_sigma:
        if priors.sigma_family == "gamma":
            parts.append(_gamma(z, priors.sigma_alpha, priors.sigma_beta))
        else:
            parts.append(_lognormal(z, priors.sigma_loc, priors.sigma_scale))
    parts += [_gamma(z, priors.eta_alpha, priors.eta_beta) for z in z_eta]
    values, grads = zip(*parts, strict=True)
    return float(sum(values)), np.array(grads)


def kronecker_factors(K: np.ndarray, B: np.ndarray, noise: np.ndarray, Y: np.ndarray) -> dict:
    """The eigen-factors of ``B ⊗ K + diag(noise) ⊗ I`` and ``α`` (module docstring).

    Returns ``lam (n,)``, ``U (n, n)``, ``D (J,)``, ``P (J, J)``, ``W (n, J)``,
    ``Yt (n, J)`` and ``A (n, J)``.
    """
    lam, U = np.linalg.eigh(K)
    lam = np.maximum(lam, 0.0)
    s = 1.0 / np.sqrt(noise)
    D, V = np.linalg.eigh(B * s[:, None] * s[None, :])
    D = np.maximum(D, 0.0)
    P = s[:, None] * V
    W = 1.0 / (lam[:, None] * D[None, :] + 1.0)
    Yt = U.T @ Y @ P
    A = U @ (Yt * W) @ P.T
    return {"lam": lam, "U": U, "D": D, "P": P, "W": W, "Yt": Yt, "A": A}


def log_marginal(f: dict, noise: np.ndarray) -> float:
    """``log p(Y | θ)`` from :func:`kronecker_factors`' ``f`` and the noise variances
    ``noise (J,)``: ``-½ Σ Ỹ² W + ½ Σ log W - (n/2) Σ_j log S_jj - (nJ/2) log 2π``."""
    n, J = f["Yt"].shape
    return float(
        -0.5 * np.sum(f["Yt"] ** 2 * f["W"])
        + 0.5 * np.sum(np.log(f["W"]))
        - 0.5 * n * np.sum(np.log(noise))
        - 0.5 * n * J * LOG_2PI
    )


def build_model(kernel: str, input_dim: int, n_components: int, priors: Priors, n: int = 3):
    """The PyMC model, the definition :class:`CoregionDensity` computes (tests' reference):

    ``vec(Y) ~ MvNormal(0, B ⊗ K + diag(σ² + jitter) ⊗ I)``, dense, on the stacked
    columns of ``Y``; ``C ~ LKJCorr(lkj_eta)``, ``ℓ``, ``η`` (J,), ``σ`` (J,) from ``priors``.
    ``X`` (n, d) and ``Y`` (n, J) are ``pm.Data`` placeholders. PyMC's ``LKJCorr``
    is the Cholesky factor ``L`` of ``C = L Lᵀ``, its density that of ``L``:
    LKJ's on ``C`` plus ``Σ_i (J - i) log L_ii`` (``i = 1..J``).
    """
    import pymc as pm
    import pytensor.tensor as pt

    J = n_components
    with pm.Model() as model:
        X = pm.Data("X", np.zeros((n, input_dim)))
        Y = pm.Data("Y", np.zeros((n, J)))
        ls, eta = priors.pymc_ls(input_dim), priors.pymc_eta(shape=J)
        sigma = priors.pymc_sigma(shape=J)
        L = pm.LKJCorr("C", n=J, eta=LKJ_ETA)
        C = L @ L.T
        K = pymc_cov(kernel, input_dim, ls, 1.0)(X) + priors.mean_var
        B = eta[:, None] * C * eta[None, :]
        noise = pt.diag(sigma**2 + JITTER)
        cov = pt.linalg.kron(B, K) + pt.linalg.kron(noise, pt.eye(X.shape[0]))
        pm.MvNormal("y_obs", mu=pt.zeros(X.shape[0] * J), cov=cov, observed=Y.T.flatten())
    return model


class CoregionDensity:
    """``z -> (log p(θ | Y), ∇)`` of correlated components (module docstring).

    ``z = (log ℓ (d), log σ (J), log η (J), y (J (J - 1) / 2))``.

    Parameters
    ----------
    kernel : one of :data:`CORRELATED_KERNELS`
    X : (n, d) unit-scaled inputs, the design every component is observed at
    Y : (n, J) standardised outputs
    priors : Priors of ``ℓ``, ``σ`` and ``η`` (as for independent components)
    mean_var : float, the constant added to the shared kernel
    jacobian : bool
        Add the log transforms' Jacobian (the density a sampler of ``z`` needs);
        without it the maximum is the posterior mode of ``(ℓ, σ, η, C)``.
    """

    def __init__(self, kernel, X, Y, priors: Priors, mean_var: float, jacobian: bool = False):
        self.kernel, self.priors, self.jacobian = kernel, priors, bool(jacobian)
        self.X, self.Y = np.asarray(X, dtype=float), np.asarray(Y, dtype=float)
        (self.n, self.d), self.J = self.X.shape, self.Y.shape[1]
        self.mean_var = float(mean_var)
        self.diff2 = (self.X[:, None, :] - self.X[None, :, :]) ** 2  # (n, n, d)

    @property
    def size(self) -> int:
        return self.d + 2 * self.J + n_correlations(self.J)

    def split(self, z: np.ndarray):
        """``(log ℓ, log σ, log η, y)`` of a flat ``z``."""
        d, J = self.d, self.J
        return z[:d], z[d : d + J], z[d + J : d + 2 * J], z[d + 2 * J :]

    def __call__(self, z) -> tuple[float, np.ndarray]:
        z = np.asarray(z, dtype=float)
        z_ls, z_sigma, z_eta, y = self.split(z)
        ls2 = np.exp(2 * z_ls)
        c, slope = correlation_and_slope(self.kernel, self.diff2 @ (1.0 / ls2))
        K = c + self.mean_var
        eta = np.exp(z_eta)
        C, value, dC, dprior_c = _correlation_terms(np.ascontiguousarray(y), self.J, self.jacobian)
        B = np.outer(eta, eta) * C
        noise = np.exp(2 * z_sigma) + JITTER
        f = kronecker_factors(K, B, noise, self.Y)
        W, A, P, U = f["W"], f["A"], f["P"], f["U"]
        value += log_marginal(f, noise)
        G_K = 0.5 * (A @ B @ A.T - (U * (W @ f["D"])) @ U.T)
        G_B = 0.5 * (A.T @ K @ A - (P * (f["lam"] @ W)) @ P.T)
        G_S = 0.5 * (np.sum(A**2, 0) - P**2 @ W.sum(0))
        g_ls = -2.0 * np.einsum("ab,abk->k", G_K * slope, self.diff2) / ls2
        g_sigma = 2.0 * np.exp(2 * z_sigma) * G_S
        g_eta = 2.0 * eta * ((G_B * C) @ eta)
        g_y = np.einsum("ij,kij->k", G_B * np.outer(eta, eta), dC) + dprior_c
        prior, g_prior = _log_prior(self.priors, z_ls, z_sigma, z_eta, self.d)
        grad = np.concatenate([g_ls, g_sigma, g_eta, g_y])
        grad[: self.d + 2 * self.J] += g_prior
        value += prior
        if self.jacobian:
            value += float(np.sum(z[: self.d + 2 * self.J]))
            grad[: self.d + 2 * self.J] += 1.0
        return float(value), grad
