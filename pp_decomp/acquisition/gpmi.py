"""GP-MI (Contal et al. 2014, Alg. 1)."""

from __future__ import annotations

import numpy as np

from pp_decomp.acquisition.surrogate import ComposedSurrogate


class GPMI:
    """``a(x) = μ(x) + sqrt(α) (sqrt(σ²(x) + γ̂) - sqrt(γ̂))``, ``α = log(2/δ)``.

    ``γ̂`` accumulates the posterior variance at the chosen points,
    ``γ̂_t = γ̂_{t-1} + σ²(x_t)``; it is loop state (checkpointed), updated by
    :meth:`updated_gamma` after each choice.
    """

    def __init__(self, model: ComposedSurrogate, gamma: float, delta: float = 1e-6):
        self.model = model
        self.gamma = float(gamma)
        self.alpha = float(np.log(2.0 / delta))

    def __call__(self, X) -> np.ndarray:
        mu, var = self.model.moments(X)
        return mu + np.sqrt(self.alpha) * (np.sqrt(var + self.gamma) - np.sqrt(self.gamma))

    def updated_gamma(self, x) -> float:
        """``γ̂_t + σ²_t(x)``: the GP-MI state after choosing ``x`` (Contal et al. 2014, Alg. 1)."""
        _, var = self.model.moments(np.atleast_2d(x))
        return self.gamma + float(var[0])
