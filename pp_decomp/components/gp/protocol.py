"""The one interface every GP model of pp_decomp obeys.

Acquisitions, compositions and the loop see models only through
:class:`GPModel`: a name, the number of hyperparameter draws, per-draw and
mixture predictions and posterior samples, all in the original units. The
implementations are :class:`~pp_decomp.ComponentGP` and
:class:`~pp_decomp.additive.AdditiveGP` (fitted by ``fit`` or ``condition``),
:class:`~pp_decomp.EntireGP` (conditioned on component observations) and the
fast path's :class:`~pp_decomp.loop.updaters.fast.FastGPView`;
``tests/components/test_gp_protocol.py`` runs one shared suite against each.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class GPModel(Protocol):
    """A GP posterior over S hyperparameter draws (see the module docstring)."""

    name: str

    @property
    def n_draws(self) -> int:
        """S, the number of hyperparameter draws the predictions mix."""

    def predict_per_draw(self, Xnew, pred_noise: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Per-draw means and variances at ``Xnew (m, d)``: (S, m) each; ``pred_noise``
        adds each draw's observation noise to the variances."""

    def predict(self, Xnew, pred_noise: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Mixture mean ``E_s μ_s`` and variance ``E_s σ_s² + Var_s μ_s`` at ``Xnew``: (m,) each."""

    def sample(
        self, Xnew, n_samples: int, seed=None, joint: bool = False, pred_noise: bool = False
    ) -> np.ndarray:
        """Posterior samples at ``Xnew``: (n_samples, m); each picks a draw uniformly,
        ``joint=True`` samples whole functions, ``pred_noise`` samples observations."""

    def joint_predict_per_draw(self, Xnew, idx=None) -> tuple[np.ndarray, np.ndarray]:
        """Per-draw joint means (S', m) and covariances (S', m, m) of ``f`` at ``Xnew``
        for the draws ``idx`` (default all)."""
