"""``KnownKernels``: component kernels fixed in advance instead of inferred.

Wang et al. (2019) run every bandit experiment with kernels known before the
first evaluation: drawn with the functions (synthetic), or fitted on other
data (1000 simulator runs for flu, a third of the stations for perceived
temperature). A user who has fitted kernels on historical runs is in the same
position. With known kernels each component is the zero-mean GP

``f_j ~ GP(m_j, k_j)``, ``y_j = f_j + ε_j``, ``ε_j ~ N(0, σ_j²)``

with a constant prior mean ``m_j`` (0 unless given), in the component's own
output units (no standardisation), and the composed
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
        output units.
    mean : sequence of float, optional
        Constant prior means ``m_j`` in output units (default 0).
    """

    kernel: str
    draws: tuple[HyperDraws, ...]
    mean: tuple[float, ...] | None = None

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
        mean = np.zeros(len(draws)) if self.mean is None else np.asarray(self.mean, dtype=float)
        if mean.shape != (len(draws),) or not np.all(np.isfinite(mean)):
            raise ValueError(
                f"mean must hold one finite value per component ({len(draws)}); got {self.mean!r}"
            )
        object.__setattr__(self, "kernel", kernel)
        object.__setattr__(self, "draws", draws)
        object.__setattr__(self, "mean", tuple(float(m) for m in mean))

    @classmethod
    def from_components(cls, components: Sequence, bounds) -> KnownKernels:
        """The kernels of fitted component GPs, to be held fixed from now on.

        Typically MAP fits on earlier runs of the system (Wang et al. fit the flu
        kernels on 1000 simulator runs). Each GP's amplitude and noise are taken
        from its standardised scale to output units (``η s_y``, ``σ s_y``) and its
        output mean becomes the prior mean; lengthscales stay on the unit-scaled
        domain, so every GP must have been fitted with the problem's ``bounds``.

        Parameters
        ----------
        components : sequence of fitted ComponentGP, one per component
        bounds : (2, d) array
            The domain bounds of the problem the kernels are for.
        """
        from pp_decomp.validate import check_bounds

        components = list(components)
        if not components:
            raise ValueError("components must hold one fitted ComponentGP per component")
        bounds = check_bounds(bounds, components[0].input_dim)
        kernels = {c.kernel for c in components}
        if len(kernels) != 1:
            raise ValueError(f"components must share one kernel family; got {sorted(kernels)}")
        draws = []
        for j, c in enumerate(components):
            if c.draws is None:
                raise ValueError(f"components[{j}] ({c.name!r}) is not fitted")
            if c.bounds is None or not np.allclose(c.bounds, bounds):
                raise ValueError(
                    f"components[{j}] ({c.name!r}) was fitted with bounds {c.bounds!r}, "
                    f"not the problem's {bounds.tolist()!r}: its lengthscales would be "
                    "on another scale"
                )
            d = c.draws
            draws.append(HyperDraws(d.ls, d.eta * c.y_std, d.sigma * c.y_std, d.alpha))
        return cls(kernels.pop(), tuple(draws), tuple(c.y_mean for c in components))

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
            "mean": list(self.mean),
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
            desc.get("mean"),
        )
