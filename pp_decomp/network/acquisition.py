"""Acquisitions over a function network's posterior, by Monte Carlo on fixed base samples.

With the paths' normals and draw indices fixed at construction
(:meth:`~pp_decomp.network.NetworkSurrogate.base_samples`), each acquisition is a
deterministic, smooth function of ``x`` that the box maximiser climbs (forward
differences from one batched call). ``h_n(x)``: the signed objective on path ``n``.

* :class:`NetworkEI`, EI-FN (Astudillo & Frazier 2021): ``(1/N) Σ_n max(h_n(x) - h*, 0)``
  with ``h*`` the best signed objective observed.
* :class:`NetworkUCB`, BoTorch's qUCB form: ``mean_n h_n + sqrt(β π / 2) · mean_n |h_n - mean h|``,
  which is ``μ + sqrt(β) σ`` where ``h`` is Gaussian and needs no extreme quantile of
  few samples.

Their gradients in ``x`` are exact on the fixed base samples (reparameterisation:
each path's ``h_n`` differentiated down the graph,
:meth:`~pp_decomp.network.NetworkSurrogate.samples_and_grad`), where the objective is
the sink's output and every node's GP has a shorthand kernel; else the
maximiser takes forward differences.

Example
-------
>>> import numpy as np
>>> from pp_decomp.network import NetworkEI
>>> class Flat:  # a stand-in surrogate: h_n(x) = z_n
...     def base_samples(self, n, rng): return rng.standard_normal((n, 1)), None
...     def objective_samples(self, X, z, idx, fixed=None): return np.repeat(z, len(X), axis=1)
>>> float(NetworkEI(Flat(), 0.0, 4096, np.random.default_rng(0))(np.zeros((1, 2)))[0]) > 0.35
True
"""

from __future__ import annotations

import numpy as np


class _NetworkAcquisition:
    # a gradient costs about two calls of the paths, forward differences d + 1: the
    # searches climb on it in every dimension (docs/design.md, "Gradients of the acquisitions")
    gradient_min_dim = 1

    def __init__(self, surrogate, n_samples: int, rng: np.random.Generator):
        self.surrogate = surrogate
        self.z, self.idx = surrogate.base_samples(int(n_samples), rng)
        self._means: dict[bytes, float] = {}  # the last call's posterior means by input

    def samples(self, X, fixed: np.ndarray | None = None) -> np.ndarray:
        """The signed objective's samples at ``X (m, d)``, nodes known there held at
        ``fixed (m, K)`` (NaN elsewhere): (N, m)."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        h = self.surrogate.objective_samples(X, self.z, self.idx, fixed)
        if fixed is None:
            self._means = dict(zip((row.tobytes() for row in X), h.mean(0).tolist(), strict=True))
        return h

    def samples_and_grad(self, X) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`samples` and their gradients in ``X``: (N, m), (N, m, d)."""
        z, idx = self.z, self.idx
        return self.surrogate.objective_samples_and_grad(np.atleast_2d(X), z, idx)

    def tie_break(self, X) -> np.ndarray:
        """The posterior mean of ``h``: which of several equal values to prefer. Ties are
        among inputs the last call valued (the maximiser's starts), whose means it kept:
        the paths are not sampled there again."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        kept = [self._means.get(row.tobytes()) for row in X]
        if all(m is not None for m in kept):
            return np.array(kept)
        return self.samples(X).mean(0)


class NetworkEI(_NetworkAcquisition):
    """EI-FN: expected improvement over ``best`` of the signed objective (module docstring)."""

    def __init__(self, surrogate, best: float, n_samples: int, rng: np.random.Generator):
        super().__init__(surrogate, n_samples, rng)
        self.best = float(best)

    def __call__(self, X, fixed: np.ndarray | None = None) -> np.ndarray:
        return np.maximum(self.samples(X, fixed) - self.best, 0.0).mean(0)

    def value_and_grad(self, X) -> tuple[np.ndarray, np.ndarray]:
        """Values (m,) and gradients (m, d) with the base samples fixed: each path's
        improvement differentiated where it is positive."""
        h, dh = self.samples_and_grad(X)
        gain = h - self.best
        return np.maximum(gain, 0.0).mean(0), (dh * (gain > 0)[..., None]).mean(0)


class NetworkUCB(_NetworkAcquisition):
    """The upper confidence bound of the signed objective at ``β`` (module docstring)."""

    def __init__(self, surrogate, beta: float, n_samples: int, rng: np.random.Generator):
        super().__init__(surrogate, n_samples, rng)
        self.beta = float(beta)

    def __call__(self, X) -> np.ndarray:
        h = self.samples(X)
        mean = h.mean(0)
        return mean + np.sqrt(self.beta * np.pi / 2) * np.abs(h - mean).mean(0)

    def value_and_grad(self, X) -> tuple[np.ndarray, np.ndarray]:
        """Values (m,) and gradients (m, d) with the base samples fixed."""
        h, dh = self.samples_and_grad(X)
        mean, dmean, c = h.mean(0), dh.mean(0), np.sqrt(self.beta * np.pi / 2)
        dev = h - mean
        grad = dmean + c * (np.sign(dev)[..., None] * (dh - dmean)).mean(0)
        return mean + c * np.abs(dev).mean(0), grad
