"""Observations of a decomposed system: inputs ``X (n, d)`` and components ``Y (n, J)``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pp_decomp.validate import check_X, check_Y


@dataclass(frozen=True)
class Observations:
    """Validated, immutable decomposed observations.

    Parameters
    ----------
    X : (n, d) array
        Inputs at which the system was run.
    Y : (n, J) array
        Observed components ``y_j = f_j(x) + ε_j``.
    """

    X: np.ndarray
    Y: np.ndarray

    def __post_init__(self):
        X = check_X(self.X, "X")
        Y = check_Y(self.Y, "Y", n=X.shape[0])
        X.setflags(write=False)
        Y.setflags(write=False)
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "Y", Y)

    @classmethod
    def empty(cls, input_dim: int, n_components: int) -> Observations:
        """No observations yet, with the given dimensions."""
        return cls(np.empty((0, input_dim)), np.empty((0, n_components)))

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def input_dim(self) -> int:
        return self.X.shape[1]

    @property
    def n_components(self) -> int:
        return self.Y.shape[1]

    def append(self, x, y) -> Observations:
        """A new :class:`Observations` with rows ``x (k, d)`` and ``y (k, J)`` added."""
        x = check_X(x, "x", input_dim=self.input_dim)
        y = check_Y(y, "y", n=x.shape[0], n_components=self.n_components)
        return Observations(np.vstack([self.X, x]), np.vstack([self.Y, y]))
