"""A decomposed optimisation problem, written by the user in a few lines.

Example
-------
>>> problem = Problem(
...     domain=Box([0, 0], [1, 1], A=[[1, 1]], b=[1.5]),      # budget x0 + x1 <= 1.5
...     components=lambda X: np.c_[np.sin(3 * X[:, 0]), X[:, 1] ** 2],
...     n_components=2,
...     g=lambda F, X: F[..., 0] * F[..., 1],                 # known composition
...     maximize=True,
... )
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from pp_decomp.components.known import KnownKernels
from pp_decomp.composition import LinearComposition
from pp_decomp.rng import SeedLike, as_generator
from pp_decomp.space import Box, CandidateSet, Domain
from pp_decomp.validate import check_finite, check_positive_int, check_X, check_Y


@dataclass
class Problem:
    """Domain, component simulator, composition ``g`` and what is known about it.

    Parameters
    ----------
    domain : Box or CandidateSet
    components : callable ``X (n, d) -> (n, J)``
        The system: its J intermediate outputs at each input (noise-free for
        synthetic problems; ``noise_sd`` is then added by :meth:`evaluate`).
    n_components : int
        ``J``.
    g : callable ``(F (..., J), X (..., d)) -> (...)``, optional
        Known composition, vectorised over leading axes. Defaults to the linear
        composition when ``weights`` is given.
    weights : (J,) array or callable ``X (n, d) -> (n, J)``, optional
        ``g_j(x)`` of a linear decomposition ``f = Σ_j g_j(x) f_j(x)``.
    lipschitz : (J,) array, optional
        ``B_j >= sup |∂g/∂f_j|``; bounded numerically when omitted.
    maximize : bool
        Maximise (default) or minimise ``f``.
    noise_sd : (J,) array or float
        Observation noise added by :meth:`evaluate` (0 for a real system).
    optimum : float, optional
        Best achievable objective value, for regret.
    known_kernels : KnownKernels, optional
        The components' kernels when they are known in advance (drawn with the
        functions, or fitted on earlier runs), for ``inference="fixed"``.
    name, component_names : labels
    """

    domain: Domain
    components: Callable
    n_components: int
    g: Callable | None = None
    weights: np.ndarray | Callable | None = None
    lipschitz: np.ndarray | None = None
    maximize: bool = True
    noise_sd: np.ndarray | float = 0.0
    optimum: float | None = None
    name: str = "problem"
    component_names: Sequence[str] | None = None
    description: str = ""
    metadata: dict = field(default_factory=dict)
    known_kernels: KnownKernels | None = None

    def __post_init__(self):
        if not isinstance(self.domain, Box | CandidateSet):
            raise TypeError(f"domain must be a Box or CandidateSet; got {type(self.domain)}")
        J = self.n_components = check_positive_int(self.n_components, "n_components")
        if not callable(self.components):
            raise TypeError("components must be a callable X (n, d) -> (n, J)")
        self.linear = None
        if self.weights is not None:
            self.linear = LinearComposition(self.weights, n_components=J)
        if self.g is None:
            if self.linear is None:
                raise ValueError("give g (the composition) or weights (a linear decomposition)")
            lin = self.linear
            self.g = lambda F, X: np.einsum("...j,...j->...", lin.weights_nd(X), F)
        elif not callable(self.g):
            raise TypeError("g must be a callable (F (..., J), X (..., d)) -> (...)")
        noise = np.broadcast_to(np.asarray(self.noise_sd, dtype=float), (J,)).copy()
        if not np.all(np.isfinite(noise)) or np.any(noise < 0):
            raise ValueError(f"noise_sd must be finite and >= 0; got {self.noise_sd!r}")
        self.noise_sd = noise
        if self.lipschitz is not None:
            B = np.broadcast_to(np.asarray(self.lipschitz, dtype=float), (J,)).copy()
            if not np.all(np.isfinite(B)) or np.any(B < 0):
                raise ValueError(
                    f"lipschitz bounds must be finite and >= 0; got {self.lipschitz!r}"
                )
            self.lipschitz = B
        if self.component_names is None:
            self.component_names = [f"f{j}" for j in range(J)]
        if len(self.component_names) != J:
            raise ValueError(
                f"component_names has {len(self.component_names)} names but n_components is {J}"
            )
        if self.known_kernels is not None:
            if not isinstance(self.known_kernels, KnownKernels):
                raise TypeError(
                    f"known_kernels must be a pp_decomp.KnownKernels; got "
                    f"{type(self.known_kernels).__name__}"
                )
            self.known_kernels.check(J, self.dim)
        self._check_g()

    @property
    def dim(self) -> int:
        return self.domain.dim

    @property
    def sign(self) -> float:
        """+1 when maximising, -1 when minimising: the loop maximises ``sign * f``."""
        return 1.0 if self.maximize else -1.0

    def _check_g(self) -> None:
        X = self.domain.sample(4, seed=0)
        F = np.asarray(self.components(X), dtype=float)
        if F.shape != (4, self.n_components):
            raise ValueError(
                f"components(X) must return shape (n, {self.n_components}) for X of shape "
                f"{X.shape}; got {F.shape}"
            )
        check_finite(F, "components(X)")
        out = np.asarray(self.g(F, X), dtype=float)
        if out.shape != (4,):
            raise ValueError(
                f"g(F, X) must return shape (n,) for F of shape {F.shape}; got {out.shape}"
            )
        check_finite(out, "g(F, X)")
        Fb = np.broadcast_to(F, (3,) + F.shape)
        outb = np.asarray(self.g(Fb, np.broadcast_to(X, (3,) + X.shape)), dtype=float)
        if outb.shape != (3, 4):
            raise ValueError(
                f"g must be vectorised over leading axes: F of shape {Fb.shape} gave {outb.shape}"
            )

    def compose(self, F, X) -> np.ndarray:
        """``g(F, X)`` with ``F (..., J)`` and ``X`` broadcastable to ``(..., d)``."""
        F = np.asarray(F, dtype=float)
        X = np.broadcast_to(np.asarray(X, dtype=float), F.shape[:-1] + (self.dim,))
        return np.asarray(self.g(F, X), dtype=float)

    def evaluate(self, X, seed: SeedLike = None) -> np.ndarray:
        """Run the system at ``X (n, d)``: components plus observation noise, (n, J)."""
        X = check_X(X, "X", input_dim=self.dim)
        F = check_Y(self.components(X), "components(X)", n=len(X), n_components=self.n_components)
        if np.any(self.noise_sd > 0):
            F = F + self.noise_sd * as_generator(seed).standard_normal(F.shape)
        return F

    def objective(self, X) -> np.ndarray:
        """Noise-free objective ``f(x) = g(f_1(x), ..., f_J(x); x)``: (n,)."""
        X = check_X(X, "X", input_dim=self.dim)
        return self.compose(np.asarray(self.components(X), dtype=float), X)
