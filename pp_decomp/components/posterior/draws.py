"""Hyperparameter draws of a GP, flattened over chains: one row per draw.

:class:`Draws` holds what every model's draws share (validation, thinning,
subsets, serialisation); :class:`HyperDraws` are the draws of one component
GP, :class:`pp_decomp.additive.AdditiveDraws` those of an additive GP.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import numpy as np

from pp_decomp.validate import check_finite


def evenly_spaced(n: int, k: int) -> np.ndarray:
    """Indices of ``min(n, k)`` of ``n`` draws, evenly spaced from the first to the last."""
    return np.linspace(0, n - 1, min(n, k)).round().astype(int)


def stacked(posterior, names) -> dict:
    """``name -> (S, ...)`` arrays of an ArviZ posterior group's ``names``, its
    ``(chain, draw)`` dims stacked into ``S = chain · draw``."""
    out = {}
    for name in names:
        arr = np.asarray(posterior[name].values, dtype=float)
        out[name] = arr.reshape((-1,) + arr.shape[2:])
    return out


@dataclass(frozen=True)
class Draws:
    """S draws of hyperparameters, positive but for the fields in ``REAL``; subclasses
    declare each field's dimensions in ``NDIM`` (``1``: one value per draw, ``2``: a
    row per draw)."""

    NDIM = {}
    REAL = frozenset()

    def __post_init__(self):
        S = None
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None:
                continue
            ndim = self.NDIM[f.name]
            arr = np.asarray(value, dtype=float)
            arr = np.atleast_2d(arr) if ndim == 2 else np.atleast_1d(arr)
            check_finite(arr, f.name)
            if f.name not in self.REAL and np.any(arr <= 0):
                raise ValueError(f"{f.name} must be > 0; got min {arr.min()!r}")
            S = arr.shape[0] if S is None else S
            if arr.shape[0] != S or arr.ndim != ndim:
                raise ValueError(
                    f"{f.name} must hold one value per draw (S={S}); got shape {arr.shape}"
                )
            object.__setattr__(self, f.name, arr)

    @property
    def n_draws(self) -> int:
        return self.ls.shape[0]

    @property
    def input_dim(self) -> int:
        return self.ls.shape[1]

    def subset(self, idx):
        """The draws at positions ``idx``."""
        return replace(
            self,
            **{
                f.name: getattr(self, f.name)[idx]
                for f in fields(self)
                if getattr(self, f.name) is not None
            },
        )

    def thin(self, max_draws: int | None):
        """At most ``max_draws`` draws, evenly spaced (keeps all when ``None``)."""
        if max_draws is None or self.n_draws <= max_draws:
            return self
        return self.subset(evenly_spaced(self.n_draws, max_draws))

    def as_dict(self) -> dict:
        """Plain lists (``None`` for an absent field), for checkpoints and settings."""
        return {
            f.name: (None if getattr(self, f.name) is None else getattr(self, f.name).tolist())
            for f in fields(self)
        }

    @classmethod
    def from_dict(cls, d: dict):
        """Inverse of :meth:`as_dict`."""
        return cls(**{k: (None if v is None else np.asarray(v)) for k, v in d.items()})

    @classmethod
    def from_posterior(cls, posterior, names):
        """Stack the ``(chain, draw)`` dims of an ArviZ posterior group into S draws."""
        return cls(**stacked(posterior, names))


@dataclass(frozen=True)
class HyperDraws(Draws):
    """S draws of the hyperparameters ``θ = (ℓ, η, σ[, α])`` of one component GP.

    Parameters
    ----------
    ls : (S, d) lengthscales (on the component's unit-scaled inputs)
    eta : (S,) amplitudes (standardised output units)
    sigma : (S,) noise standard deviations (standardised output units)
    alpha : (S,) rational-quadratic shapes, or ``None`` for other kernels
    warp_skew, warp_tail, warp_loc, warp_scale : (S,) a learned output warp's ``κ``,
        ``δ``, ``c`` (real) and ``s`` (:class:`~pp_decomp.components.gp.warped.WarpedGP`),
        or ``None``
    """

    NDIM = {"ls": 2, "eta": 1, "sigma": 1, "alpha": 1}
    NDIM.update(dict.fromkeys(("warp_skew", "warp_tail", "warp_loc", "warp_scale"), 1))
    REAL = frozenset({"warp_loc"})

    ls: np.ndarray
    eta: np.ndarray
    sigma: np.ndarray
    alpha: np.ndarray | None = None
    warp_skew: np.ndarray | None = None
    warp_tail: np.ndarray | None = None
    warp_loc: np.ndarray | None = None
    warp_scale: np.ndarray | None = None


class KernelDraws:
    """S draws of a kernel expression's sampled hyperparameters and ``σ``, by name.

    ``values``: name -> (S,) or (S, size) array, e.g. ``{"ls_0": (S, 2),
    "eta_0": (S,), "period_1": (S,), "sigma": (S,)}``, on the model's scale.
    Each name is also an attribute (``draws.sigma``).
    """

    def __init__(self, values: dict | None = None, **named):
        S, out = None, {}
        for name, value in {**(values or {}), **named}.items():
            arr = np.atleast_1d(np.asarray(value, dtype=float))
            check_finite(arr, name)
            S = arr.shape[0] if S is None else S
            if arr.shape[0] != S:
                raise ValueError(f"{name} must hold one value per draw (S={S}); got {arr.shape}")
            out[name] = arr
        sigma = out.get("sigma")
        if sigma is None or sigma.ndim != 1 or np.any(sigma <= 0):
            raise ValueError(f"sigma must be (S,) values > 0; got {sigma!r}")
        self.values = out

    def __getattr__(self, name: str):
        values = self.__dict__.get("values", {})
        if name in values:
            return values[name]
        raise AttributeError(name)

    @property
    def NDIM(self) -> dict:  # noqa: N802 (the name Draws uses)
        return {n: v.ndim for n, v in self.values.items()}

    @property
    def n_draws(self) -> int:
        return len(self.values["sigma"])

    def subset(self, idx) -> KernelDraws:
        """The draws at positions ``idx``."""
        return KernelDraws({n: v[idx] for n, v in self.values.items()})

    def thin(self, max_draws: int | None) -> KernelDraws:
        """At most ``max_draws`` draws, evenly spaced (keeps all when ``None``)."""
        if max_draws is None or self.n_draws <= max_draws:
            return self
        return self.subset(evenly_spaced(self.n_draws, max_draws))

    def as_dict(self) -> dict:
        """Plain lists, for checkpoints."""
        return {n: v.tolist() for n, v in self.values.items()}

    @classmethod
    def from_dict(cls, d: dict) -> KernelDraws:
        """Inverse of :meth:`as_dict`."""
        return cls({n: np.asarray(v) for n, v in d.items()})

    @classmethod
    def from_posterior(cls, posterior, names) -> KernelDraws:
        """Stack the ``(chain, draw)`` dims of an ArviZ posterior group into S draws."""
        return cls(stacked(posterior, names))
