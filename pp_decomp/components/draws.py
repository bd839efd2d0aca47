"""Hyperparameter draws of one component GP, flattened over chains."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pp_decomp.validate import check_finite


@dataclass(frozen=True)
class HyperDraws:
    """S draws of the hyperparameters ``θ = (ℓ, η, σ[, α])``.

    Parameters
    ----------
    ls : (S, d) lengthscales (on the component's unit-scaled inputs)
    eta : (S,) amplitudes (standardised output units)
    sigma : (S,) noise standard deviations (standardised output units)
    alpha : (S,) rational-quadratic shapes, or ``None`` for other kernels
    """

    ls: np.ndarray
    eta: np.ndarray
    sigma: np.ndarray
    alpha: np.ndarray | None = None

    def __post_init__(self):
        ls = np.atleast_2d(np.asarray(self.ls, dtype=float))
        eta = np.atleast_1d(np.asarray(self.eta, dtype=float))
        sigma = np.atleast_1d(np.asarray(self.sigma, dtype=float))
        S = ls.shape[0]
        fields = {"ls": ls, "eta": eta, "sigma": sigma}
        if self.alpha is not None:
            fields["alpha"] = np.atleast_1d(np.asarray(self.alpha, dtype=float))
        for name, arr in fields.items():
            check_finite(arr, name)
            if np.any(arr <= 0):
                raise ValueError(f"{name} must be > 0; got min {arr.min()!r}")
            if arr.shape[0] != S or (name != "ls" and arr.ndim != 1):
                raise ValueError(
                    f"{name} must hold one value per draw (S={S}); got shape {arr.shape}"
                )
            object.__setattr__(self, name, arr)

    @property
    def n_draws(self) -> int:
        return self.ls.shape[0]

    @property
    def input_dim(self) -> int:
        return self.ls.shape[1]

    def subset(self, idx) -> HyperDraws:
        """The draws at positions ``idx``."""
        alpha = None if self.alpha is None else self.alpha[idx]
        return HyperDraws(self.ls[idx], self.eta[idx], self.sigma[idx], alpha)

    def thin(self, max_draws: int | None) -> HyperDraws:
        """At most ``max_draws`` draws, evenly spaced (keeps all when ``None``)."""
        if max_draws is None or self.n_draws <= max_draws:
            return self
        idx = np.linspace(0, self.n_draws - 1, max_draws).round().astype(int)
        return self.subset(idx)

    def as_dict(self) -> dict:
        """Plain lists (``None`` for an absent ``alpha``), for checkpoints and settings."""
        return {k: (None if v is None else np.asarray(v).tolist()) for k, v in vars(self).items()}

    @classmethod
    def from_dict(cls, d: dict) -> HyperDraws:
        """Inverse of :meth:`as_dict`."""
        return cls(**{k: (None if v is None else np.asarray(v)) for k, v in d.items()})

    @classmethod
    def from_posterior(cls, posterior, has_alpha: bool) -> HyperDraws:
        """Stack the ``(chain, draw)`` dims of an ArviZ posterior group into S draws."""

        def flat(name):
            arr = np.asarray(posterior[name].values, dtype=float)
            return arr.reshape((-1,) + arr.shape[2:])

        return cls(
            ls=flat("ls"),
            eta=flat("eta"),
            sigma=flat("sigma"),
            alpha=flat("alpha") if has_alpha else None,
        )
