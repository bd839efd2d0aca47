"""Random GP functions: kernels with random hyperparameters and exact prior draws.

Used to build problems (Wang et al.'s synthetic sum of GP samples, Contal's GP
samples) and studies (the regression study), so neither depends on the other.
"""

from __future__ import annotations

import numpy as np

from pp_decomp.components.posterior.draws import HyperDraws
from pp_decomp.kernels import kernel_matrix

# Ranges of the random generating hyperparameters (log-uniform), inputs in [0, 1]^d.
LS_RANGE = (0.05, 0.5)
ETA_RANGE = (0.5, 2.0)
ALPHA_RANGE = (0.5, 5.0)


def _log_uniform(rng, lo, hi, size=None):
    return np.exp(rng.uniform(np.log(lo), np.log(hi), size=size))


def random_kernel_draws(kernel: str, input_dim: int, noise_sd: float, rng) -> HyperDraws:
    """One random hyperparameter setting of the given family (a single draw)."""
    return HyperDraws(
        ls=_log_uniform(rng, *LS_RANGE, size=(1, input_dim)),
        eta=_log_uniform(rng, *ETA_RANGE, size=1),
        sigma=np.array([noise_sd]),
        alpha=_log_uniform(rng, *ALPHA_RANGE, size=1) if kernel == "rq" else None,
    )


def sample_function(kernel: str, X: np.ndarray, draws: HyperDraws, rng) -> np.ndarray:
    """A joint draw of ``f ~ GP(0, k)`` at the rows of ``X``: (n,).

    ``L z`` with ``L`` the Cholesky factor of ``K + ε η² I``, ``ε`` the smallest of
    ``1e-10, 1e-9, ...`` that factorises: unlike an eigendecomposition, ``L`` is
    unique, so the draw does not hinge on how LAPACK resolves (near-)degenerate
    eigenvalues and is the same on every machine and thread count.
    """
    K = kernel_matrix(kernel, X, X, draws.ls, draws.eta, draws.alpha)[0]
    return stable_cholesky(K, scale=float(draws.eta[0] ** 2)) @ rng.standard_normal(len(K))


def stable_cholesky(K: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """Cholesky factor of ``K + ε·scale·I`` with the smallest working ``ε >= 1e-10``."""
    eye = np.eye(len(K))
    for eps in 10.0 ** np.arange(-10, -1):
        try:
            return np.linalg.cholesky(K + eps * scale * eye)
        except np.linalg.LinAlgError:
            continue
    raise np.linalg.LinAlgError("matrix is not positive definite even with jitter 1e-2")
