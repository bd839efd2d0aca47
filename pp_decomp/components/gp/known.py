"""``KnownKernels``: component kernels fixed in advance instead of inferred.

Wang et al. (2019) run every bandit experiment with kernels known before the
first evaluation: drawn with the functions (synthetic), or fitted on other
data (1000 simulator runs for flu, a third of the stations for perceived
temperature). A user who has fitted kernels on historical runs is in the same
position. With known kernels each component is the GP

``f_j ~ GP(m_j, k_j)``, ``y_j = f_j + ε_j``, ``ε_j ~ N(0, σ_j²)``

with a constant prior mean ``m_j`` (0 unless given), in the component's own
output units (no standardisation). The composed baselines use, for a linear
decomposition, the entire GP with kernel ``Σ_j g_j(x) k_j(x, x') g_j(x')``
(:class:`pp_decomp.EntireGP`), so that Theorem 6 compares the two models on
equal terms; for any ``g``, a known kernel of the composed output may be given
instead (``composed``), as the paper fits one for GP-UCB on perceived temperature.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pp_decomp.components.gp.gp import ComponentGP
from pp_decomp.components.posterior.batched import JITTER
from pp_decomp.components.posterior.draws import HyperDraws
from pp_decomp.kernels import canonical_kernel
from pp_decomp.validate import check_bounds, check_positive_int, check_X, check_Y, check_y

# the smallest noise variance a known kernel carries: σ' = 1e-12, below any jitter
MIN_NOISE_VAR = 1e-24


@dataclass(frozen=True)
class KnownKernels:
    """One fixed kernel per component, and optionally one for the composed output.

    Parameters
    ----------
    kernel : {"se", "matern52", "matern32", "rq"}
        Covariance family shared by all the kernels.
    draws : sequence of HyperDraws, one per component
        Each usually a single draw (several draws are a fixed mixture). Lengthscales
        ``(S, d)`` are on the unit-scaled domain ``(x - lower) / (upper - lower)``;
        amplitudes ``η`` and noise standard deviations ``σ`` are in the component's
        output units.
    mean : sequence of float, optional
        Constant prior means ``m_j`` in output units (default 0).
    composed : HyperDraws, optional
        Kernel of one GP on the composed output ``g(y; x)`` (its units), used by the
        composed strategies (GP-UCB, EI, PI, GP-MI, Thompson) instead of the entire GP;
        required for them when ``g`` is not linear.
    composed_mean : float
        Constant prior mean of the composed output.
    """

    kernel: str
    draws: tuple[HyperDraws, ...]
    mean: tuple[float, ...] | None = None
    composed: HyperDraws | None = None
    composed_mean: float = 0.0

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
        named = [(f"draws[{j}]", d) for j, d in enumerate(draws)]
        if self.composed is not None:
            named.append(("composed", self.composed))
        for name, d in named:
            if not isinstance(d, HyperDraws):
                raise TypeError(f"{name} must be a HyperDraws; got {type(d).__name__}")
            if (d.alpha is None) != (kernel != "rq"):
                raise ValueError(
                    f"{name}.alpha must be given exactly for kernel 'rq'; kernel is "
                    f"{kernel!r} and alpha is {d.alpha!r}"
                )
        mean = np.zeros(len(draws)) if self.mean is None else np.asarray(self.mean, dtype=float)
        if mean.shape != (len(draws),) or not np.all(np.isfinite(mean)):
            raise ValueError(
                f"mean must hold one finite value per component ({len(draws)}); got {self.mean!r}"
            )
        if not np.isfinite(self.composed_mean):
            raise ValueError(f"composed_mean must be finite; got {self.composed_mean!r}")
        object.__setattr__(self, "kernel", kernel)
        object.__setattr__(self, "draws", draws)
        object.__setattr__(self, "mean", tuple(float(m) for m in mean))
        object.__setattr__(self, "composed_mean", float(self.composed_mean))

    @classmethod
    def from_components(cls, components: Sequence, bounds, composed=None) -> KnownKernels:
        """The kernels of fitted GPs, to be held fixed from now on.

        Typically MAP fits on earlier runs of the system (Wang et al. fit the flu
        kernels on 1000 simulator runs). Each GP's amplitude and noise are taken
        from its standardised scale to output units (``η s_y``, ``σ s_y``) and its
        output mean becomes the prior mean; lengthscales stay on the unit-scaled
        domain, so every GP must have been fitted with the problem's ``bounds``.
        A GP fitted with an integrated constant mean (``Priors.mean_sd > 0``)
        keeps its output mean as a fixed mean: the mean's remaining uncertainty
        (small after many runs) is dropped, as known kernels have none.

        Parameters
        ----------
        components : sequence of fitted ComponentGP, one per component
        bounds : (2, d) array
            The domain bounds of the problem the kernels are for.
        composed : fitted ComponentGP, optional
            A GP fitted on the composed output, for the composed strategies.
        """
        components = list(components)
        if not components:
            raise ValueError("components must hold one fitted ComponentGP per component")
        bounds = check_bounds(bounds, components[0].input_dim)
        gps = components + ([] if composed is None else [composed])
        kernels = {c.kernel for c in gps}
        if len(kernels) != 1:
            raise ValueError(f"the GPs must share one kernel family; got {sorted(kernels)}")
        draws = []
        for j, c in enumerate(gps):
            label = "composed" if j == len(components) else f"components[{j}]"
            if c.draws is None:
                raise ValueError(f"{label} ({c.name!r}) is not fitted")
            if c.bounds is None or not np.allclose(c.bounds, bounds):
                raise ValueError(
                    f"{label} ({c.name!r}) was fitted with bounds {c.bounds!r}, "
                    f"not the problem's {bounds.tolist()!r}: its lengthscales would be "
                    "on another scale"
                )
            d = c.draws
            # the same noise in original units, jitter included: y_std² (σ² + J) = σ'² + J
            var = c.y_std**2 * (d.sigma**2 + JITTER) - JITTER
            # below the jitter (a noise-free fit of outputs spread less than 1) the
            # nearest representable noise is the jitter alone: σ' tiny but positive
            # (HyperDraws refuses σ' = 0)
            sigma = np.sqrt(np.maximum(var, MIN_NOISE_VAR))
            draws.append(HyperDraws(d.ls, d.eta * c.y_std, sigma, d.alpha))
        return cls(
            kernels.pop(),
            tuple(draws[: len(components)]),
            tuple(c.y_mean for c in components),
            None if composed is None else draws[-1],
            0.0 if composed is None else composed.y_mean,
        )

    @classmethod
    def fit(
        cls,
        X,
        Y,
        bounds,
        *,
        composed_y=None,
        kernel: str = "se",
        seed: int = 0,
    ) -> KnownKernels:
        """MAP kernels of every component fitted on earlier runs ``X (n, d)``, ``Y (n, J)``.

        ``composed_y (n,)``, the composed output of those runs, adds a kernel for
        the composed strategies. See :meth:`from_components` for the scales.
        """
        # every argument is checked before the first (seconds-long) fit
        X = check_X(X, "X", min_rows=2)
        Y = check_Y(Y, "Y", n=X.shape[0])
        bounds = check_bounds(bounds, X.shape[1])
        if composed_y is not None:
            composed_y = check_y(composed_y, "composed_y", n=X.shape[0])
        canonical_kernel(kernel)
        rng = np.random.default_rng(
            np.random.SeedSequence(check_positive_int(seed, "seed", minimum=0))
        )

        def fitted(y, name):
            gp = ComponentGP(kernel, X.shape[1], bounds=bounds, name=name)
            return gp.fit(X, y, "map", seed=rng)

        comps = [fitted(Y[:, j], f"f{j}") for j in range(Y.shape[1])]
        comp = None
        if composed_y is not None:
            comp = fitted(composed_y, "composed")
        return cls.from_components(comps, bounds, comp)

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
        named = [(f"draws[{j}]", d) for j, d in enumerate(self.draws)]
        if self.composed is not None:
            named.append(("composed", self.composed))
        for name, d in named:
            if d.input_dim != input_dim:
                raise ValueError(
                    f"known_kernels.{name}.ls has {d.input_dim} column(s) but the "
                    f"problem has {input_dim} input dimension(s)"
                )
        return self

    def describe(self) -> dict:
        """JSON-serialisable form, stored in a run's settings so that it resumes."""
        return {
            "kernel": self.kernel,
            "mean": list(self.mean),
            "draws": [d.as_dict() for d in self.draws],
            "composed": None if self.composed is None else self.composed.as_dict(),
            "composed_mean": self.composed_mean,
        }

    @classmethod
    def from_description(cls, desc: dict) -> KnownKernels:
        """Inverse of :meth:`describe`."""
        composed = desc.get("composed")
        return cls(
            desc["kernel"],
            tuple(HyperDraws.from_dict(d) for d in desc["draws"]),
            desc.get("mean"),
            None if composed is None else HyperDraws.from_dict(composed),
            desc.get("composed_mean", 0.0),
        )
