"""``KnownKernels``: component kernels fixed in advance instead of inferred.

Wang et al. (2019) run every bandit experiment with kernels known before the
first evaluation: drawn with the functions (synthetic), or fitted on other
data (1000 simulator runs for flu, a third of the stations for perceived
temperature). A user who has fitted kernels on historical runs is in the same
position. With known kernels each component is the zero-mean GP

``f_j ~ GP(0, k_j)``, ``y_j = f_j + ε_j``, ``ε_j ~ N(0, σ_j²)``

in the component's own output units (no standardisation), and the composed
baseline of a linear decomposition is the entire GP with kernel
``Σ_j g_j(x) k_j(x, x') g_j(x')`` (:class:`pp_decomp.EntireGP`), so that
Theorem 6 compares the two models on equal terms.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pp_decomp.components.draws import HyperDraws
from pp_decomp.kernels import canonical_kernel


@dataclass(frozen=True)
class KnownKernels:
    """One fixed kernel per component.

    Parameters
    ----------
    kernel : {"se", "matern52", "matern32", "rq"}
        Covariance family shared by the components.
    draws : sequence of HyperDraws, one per component
        Each usually a single draw (several draws are a fixed mixture). Lengthscales
        ``(S, d)`` are on the unit-scaled domain ``(x - lower) / (upper - lower)``;
        amplitudes ``η`` and noise standard deviations ``σ`` are in the component's
        output units, with prior mean 0.
    """

    kernel: str
    draws: tuple[HyperDraws, ...]

    def __post_init__(self):
        kernel = canonical_kernel(self.kernel)
        if isinstance(self.draws, HyperDraws) or not isinstance(self.draws, Sequence):
            raise TypeError(
                f"draws must be a sequence of HyperDraws, one per component; got "
                f"{type(self.draws).__name__}"
            )
        draws = tuple(self.draws)
        if not draws:
            raise ValueError("draws must hold one HyperDraws per component; got none")
        for j, d in enumerate(draws):
            if not isinstance(d, HyperDraws):
                raise TypeError(f"draws[{j}] must be a HyperDraws; got {type(d).__name__}")
            if (d.alpha is None) != (kernel != "rq"):
                raise ValueError(
                    f"draws[{j}].alpha must be given exactly for kernel 'rq'; kernel is "
                    f"{kernel!r} and alpha is {d.alpha!r}"
                )
        object.__setattr__(self, "kernel", kernel)
        object.__setattr__(self, "draws", draws)

    @property
    def n_components(self) -> int:
        return len(self.draws)

    def check(self, n_components: int, input_dim: int) -> KnownKernels:
        """Raise unless there is one kernel per component, each over ``input_dim`` inputs."""
        if self.n_components != n_components:
            raise ValueError(
                f"known_kernels has {self.n_components} kernel(s) but the problem has "
                f"{n_components} component(s)"
            )
        for j, d in enumerate(self.draws):
            if d.input_dim != input_dim:
                raise ValueError(
                    f"known_kernels.draws[{j}].ls has {d.input_dim} column(s) but the "
                    f"problem has {input_dim} input dimension(s)"
                )
        return self

    def describe(self) -> dict:
        """JSON-serialisable form, stored in a run's settings so that it resumes."""
        return {
            "kernel": self.kernel,
            "draws": [
                {k: (None if v is None else np.asarray(v).tolist()) for k, v in vars(d).items()}
                for d in self.draws
            ],
        }

    @classmethod
    def from_description(cls, desc: dict) -> KnownKernels:
        """Inverse of :meth:`describe`."""
        return cls(
            desc["kernel"],
            tuple(
                HyperDraws(**{k: (None if v is None else np.asarray(v)) for k, v in d.items()})
                for d in desc["draws"]
            ),
        )
