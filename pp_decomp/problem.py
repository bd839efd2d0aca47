"""A decomposed optimisation problem, written by the user in a few lines.

Outcome transforms
------------------
Outcome transforms: the component GPs regress ``t(y_j)``, and ``g`` sees ``t⁻¹``.

A component that is positive and spans orders of magnitude (an attack rate
near 0 where vaccination stops the epidemic and near 0.5 where it does not) is
far from a stationary GP in its own units and close to one on the log scale.
With ``outcome_transform="log"`` every component GP models ``log y_j``, and
the objective is composed as ``g(exp F, x)``: the posterior of each ``y_j`` is
log-normal per hyperparameter draw (positive, skewed), and the Monte Carlo
compositions push its draws through ``g`` as they do any others. The modelled
composition is not linear even where ``g`` is, so the analytic D-GPUCB does not
apply: ``d-gpucb-mc-min`` is the default (``network-ucb`` on a function network).
This is BoTorch's ``Log`` outcome transform, for each component of a decomposed
model.

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

import copy
import hashlib
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from pp_decomp.choices import OUTCOME_TRANSFORMS
from pp_decomp.components.gp.known import KnownKernels
from pp_decomp.composition import LinearComposition
from pp_decomp.space import Box, CandidateSet, Domain
from pp_decomp.units import Units, check_input_names
from pp_decomp.validate import (
    SeedLike,
    as_generator,
    check_choice,
    check_finite,
    check_positive_int,
    check_X,
    check_Y,
)


@dataclass
class Problem:
    """Domain, component simulator, composition ``g`` and what is known about it.

    Parameters
    ----------
    domain : Box or CandidateSet
    components : callable ``X (n, d) -> (n, J)``, optional
        The system as a Python function: its J intermediate outputs at each input
        (noise-free for synthetic problems; ``noise_sd`` is then added by
        :meth:`evaluate`). When given, it is called once here, on up to 4 inputs,
        to check its shape and ``g``; :meth:`evaluate` and ``Optimizer.run`` call
        it. Leave it out for a system you run yourself (an ask/tell loop): ``g``
        is then checked on standard-normal component values.
    n_components : int
        ``J``.
    g : callable ``g(F)`` or ``g(F, X)``, optional
        Known composition ``F (..., J) -> (...)`` (with the inputs ``X (..., d)``
        when it depends on them; the arity is read from the signature),
        vectorised over leading axes. Defaults to the linear composition when
        ``weights`` is given.
    weights : (J,) array or callable ``X (n, d) -> (n, J)``, optional
        ``g_j(x)`` of a linear decomposition ``f = b(x) + Σ_j g_j(x) f_j(x)``.
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
    input_names : sequence of d str, optional
        The inputs' names (default ``x0``, ``x1``, ...).
    units : dict, optional
        Units of the ``"inputs"``, ``"components"`` and ``"objective"``
        (:mod:`pp_decomp.units`), carried into the results.
    offset : callable ``X (n, d) -> (n,)``, optional
        The known term ``b(x)`` of a linear decomposition (with ``weights``): a part of
        ``f`` known exactly, which no GP then has to learn. Default none.
    weights_grad : callable ``X (n, d) -> (∂g/∂x (n, J, d), ∂b/∂x (n, d))``, optional
        The gradients of callable ``weights`` and ``offset`` (zeros for a missing
        offset), for the acquisitions' analytic gradients; without it they are
        taken by forward differences on the weights alone.
    """

    domain: Domain
    components: Callable | None = None
    n_components: int | None = None
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
    input_names: Sequence[str] | None = None
    units: dict | None = None
    offset: Callable | None = None
    weights_grad: Callable | None = None

    def __post_init__(self):
        if not isinstance(self.domain, Box | CandidateSet):
            raise TypeError(f"domain must be a Box or CandidateSet; got {type(self.domain)}")
        if self.n_components is None:
            raise TypeError("n_components (J, the number of observed components) is required")
        J = self.n_components = check_positive_int(self.n_components, "n_components")
        if self.optimum is not None and not np.isfinite(_as_float(self.optimum)):
            raise ValueError(f"optimum must be a finite number or None; got {self.optimum!r}")
        if self.components is not None and not callable(self.components):
            raise TypeError("components must be a callable X (n, d) -> (n, J), or None")
        self.linear = None
        if self.offset is not None and self.weights is None:
            raise ValueError("offset is the known term of a linear decomposition: give weights too")
        if self.weights is not None:
            self.linear = LinearComposition(
                self.weights, n_components=J, offset=self.offset, grad=self.weights_grad
            )
        elif self.weights_grad is not None:
            raise ValueError("weights_grad is the gradient of callable weights: give weights too")
        if self.g is None:
            if self.linear is None:
                raise ValueError("give g (the composition) or weights (a linear decomposition)")
            lin = self.linear
            self.g = lambda F, X: (
                np.einsum("...j,...j->...", lin.weights_nd(X), F)
                + (lin.offset_nd(X) if lin.offset is not None else 0.0)
            )
        elif not callable(self.g):
            raise TypeError("g must be a callable g(F) or g(F, X), F (..., J), X (..., d)")
        else:
            self.g = _two_argument(self.g)
        self.noise_sd = _per_component(self.noise_sd, "noise_sd", J)
        if self.lipschitz is not None:
            self.lipschitz = _per_component(self.lipschitz, "lipschitz", J)
        if self.component_names is None:
            self.component_names = [f"f{j}" for j in range(J)]
        names = [str(c) for c in self.component_names]
        if len(names) != J:
            raise ValueError(f"component_names has {len(names)} names but n_components is {J}")
        if len(set(names)) != J:
            dup = sorted({c for c in names if names.count(c) > 1})
            raise ValueError(f"component_names must be distinct; {dup} appear more than once")
        self.component_names = names
        self._check_labels()
        if self.known_kernels is not None:
            if not isinstance(self.known_kernels, KnownKernels):
                raise TypeError(
                    f"known_kernels must be a pp_decomp.KnownKernels; got "
                    f"{type(self.known_kernels).__name__}"
                )
            self.known_kernels.check(J, self.dim)
        self._check_g()

    def _check_labels(self) -> None:
        # given names are the user's; the defaults x0, x1, ... give way to a stored run's
        self._inputs_named = self.input_names is not None
        self.input_names = check_input_names(self.input_names, self.dim)
        legacy = self.metadata.get("units")
        if self.units is None and isinstance(legacy, dict):
            units = Units.from_legacy(legacy, self.dim, self.n_components)
        else:
            units = Units.build(self.units, self.dim, self.n_components)
        self.units = units.as_dict()  # every key, one unit per input and component

    def with_input_names(self, names: Sequence[str], where: str = "the stored run") -> Problem:
        """This problem with its inputs called ``names`` (those ``where`` gave them):
        itself if its names are those, a copy if they were the defaults ``x0, x1, ...``,
        and a ValueError naming both if it was given others."""
        names = check_input_names(names, self.dim)
        if names == list(self.input_names):
            return self
        if self._inputs_named:
            raise ValueError(
                f"input_names {list(self.input_names)} differ from {where}'s {names}; give "
                f"input_names={names} or leave them out to keep {where}'s"
            )
        named = copy.copy(self)
        named.input_names, named._inputs_named = names, True
        return named

    @property
    def dim(self) -> int:
        return self.domain.dim

    @property
    def sign(self) -> float:
        """+1 when maximising, -1 when minimising: the loop maximises ``sign * f``."""
        return 1.0 if self.maximize else -1.0

    def _check_g(self) -> None:
        X = self.domain.sample(4, seed=0)  # fewer on a set of < 4 candidates
        m = len(X)
        if self.components is None:
            F = np.random.default_rng(0).standard_normal((m, self.n_components))
        else:
            F = np.asarray(self.components(X), dtype=float)
        if F.shape != (m, self.n_components):
            raise ValueError(
                f"components(X) must return shape (n, {self.n_components}) for X of shape "
                f"{X.shape}; got {F.shape}"
            )
        check_finite(F, "components(X)")
        out = np.asarray(self.g(F, X), dtype=float)
        if out.shape != (m,):
            raise ValueError(
                f"g(F, X) must return shape (n,) for F of shape {F.shape}; got {out.shape}"
            )
        check_finite(out, "g(F, X)")
        Fb = np.broadcast_to(F, (3,) + F.shape)
        outb = np.asarray(self.g(Fb, np.broadcast_to(X, (3,) + X.shape)), dtype=float)
        if outb.shape != (3, m):
            raise ValueError(
                f"g must be vectorised over leading axes: F of shape {Fb.shape} gave {outb.shape}"
            )

    def compose(self, F, X) -> np.ndarray:
        """``g(F, X)`` with ``F (..., J)`` and ``X`` broadcastable to ``(..., d)``."""
        F = np.asarray(F, dtype=float)
        X = np.broadcast_to(np.asarray(X, dtype=float), F.shape[:-1] + (self.dim,))
        return np.asarray(self.g(F, X), dtype=float)

    def signed_objective(self, Y, X) -> np.ndarray:
        """The loop's maximand ``sign · g(Y; X)`` at ``Y (n, J)``, ``X (n, d)``: (n,)."""
        return self.sign * self.compose(Y, X)

    def fingerprint(self) -> dict:
        """What identifies this problem instance, stored with a run so that a resume on
        another problem, instance, dimension, J, domain or linear decomposition is
        refused (the decomposition's known weights and term at two fixed inputs of the
        domain: its first and last candidates, or the box's lower corner and centre)."""
        dom = self.domain
        arrays = [dom.X] if isinstance(dom, CandidateSet) else [dom.bounds]
        if isinstance(dom, Box) and dom.A is not None:
            arrays += [dom.A, dom.b]
        fp = {}
        if self.linear is not None:
            X0 = (
                dom.X[[0, -1]]
                if isinstance(dom, CandidateSet)
                else np.stack([dom.lower, (dom.lower + dom.upper) / 2])
            )
            known = [self.linear.weights_nd(X0)]
            if self.linear.offset is not None:
                known.append(self.linear.offset_nd(X0))
            # to 10 significant digits: the last bits differ across BLAS builds
            fp["decomposition"] = _digest(
                [np.float64([f"{v:.10g}" for v in np.ravel(a)]) for a in known]
            )
        return {
            "name": self.name,
            "dim": self.dim,
            "n_components": self.n_components,
            "component_names": list(self.component_names),
            "domain": f"{dom!r} sha256:{_digest(arrays)}",
            "maximize": bool(self.maximize),
            "instance": self.metadata.get("seed"),
            "optimum": None if self.optimum is None else float(self.optimum),
            **fp,
        }

    def _simulator(self) -> Callable:
        if self.components is None:
            raise ValueError(
                f"problem {self.name!r} has no components function: evaluate your system "
                "yourself and tell the optimiser its outputs (ask/tell)"
            )
        return self.components

    def evaluate(self, X, seed: SeedLike = None) -> np.ndarray:
        """Run the system at ``X (n, d)``: components plus observation noise, (n, J)."""
        simulate = self._simulator()
        X = check_X(X, "X", input_dim=self.dim)
        F = check_Y(simulate(X), "components(X)", n=len(X), n_components=self.n_components)
        if np.any(self.noise_sd > 0):
            F = F + self.noise_sd * as_generator(seed).standard_normal(F.shape)
        return F

    def objective(self, X) -> np.ndarray:
        """Noise-free objective ``f(x) = g(f_1(x), ..., f_J(x); x)``: (n,)."""
        simulate = self._simulator()
        X = check_X(X, "X", input_dim=self.dim)
        return self.compose(np.asarray(simulate(X), dtype=float), X)


def _as_float(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"optimum must be a number or None; got {value!r}") from None


def _per_component(value, name: str, J: int) -> np.ndarray:
    """``value`` as ``(J,)`` finite non-negative floats (a scalar is repeated), or an
    error naming ``name``."""
    arr = np.asarray(value, dtype=float)
    if arr.ndim > 1 or (arr.ndim == 1 and arr.shape[0] not in (1, J)):
        raise ValueError(
            f"{name} must be a number or hold one value per component (J={J}); got {value!r}"
        )
    arr = np.broadcast_to(arr, (J,)).copy()
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must be finite and >= 0; got {value!r}")
    return arr


def _two_argument(g: Callable) -> Callable:
    """``g`` as a function of ``(F, X)``: a one-argument ``g(F)`` ignores ``X``.

    The arity is read from the signature (its parameters without defaults); a
    callable whose signature cannot be read is called as ``g(F, X)``.
    """
    try:
        params = inspect.signature(g).parameters.values()
    except (TypeError, ValueError):
        return g
    positional = [
        p
        for p in params
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
    ]
    if any(p.kind == p.VAR_POSITIONAL for p in params) or len(positional) >= 2:
        return g
    if len(positional) == 1:

        def g_of_F_and_X(F, X):
            return g(F)

        g_of_F_and_X.__wrapped__ = g
        return g_of_F_and_X
    raise TypeError(f"g must take F, or F and X; its signature is {inspect.signature(g)}")


def _digest(arrays) -> str:
    """The first 16 hex digits of the SHA-256 of ``arrays`` as float64 bytes."""
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())
    return h.hexdigest()[:16]


def check_outcome_transform(name):
    """``name`` if it is one of :data:`OUTCOME_TRANSFORMS` (or a tuple of them, one per
    component), else a ValueError naming it."""
    if isinstance(name, tuple | list):
        return tuple(check_choice(n, "outcome_transform", OUTCOME_TRANSFORMS) for n in name)
    return check_choice(name, "outcome_transform", OUTCOME_TRANSFORMS)


def is_identity(name) -> bool:
    """Whether transform ``name`` (or every component's) is ``"none"``."""
    return all(n == "none" for n in ((name,) if isinstance(name, str) else name))


def logged(name, J: int) -> np.ndarray:
    """Which of ``J`` components transform ``name`` (or one name per component) puts
    on the log scale: ``(J,)`` booleans.

    >>> logged(("none", "log"), 2).tolist(), logged("log", 3).tolist()
    ([False, True], [True, True, True])
    """
    names = (name,) * J if isinstance(name, str) else tuple(name)
    return np.array([n == "log" for n in names], dtype=bool)


def forward(name: str, Y: np.ndarray, names=None) -> np.ndarray:
    """``t(Y)``: what the component GPs regress, ``(..., J)``.

    Raises a ValueError naming the first component (by ``names``) and value
    outside the transform's domain (``y > 0`` for ``"log"``).
    """
    Y = np.asarray(Y, dtype=float)
    if is_identity(name):
        return Y
    on_log = logged(name, Y.shape[-1])
    bad = np.argwhere(~(Y > 0) & on_log)
    if len(bad):
        j = int(bad[0][-1])
        label = names[j] if names is not None else f"component {j}"
        value = float(Y[tuple(bad[0])])
        raise ValueError(f"outcome_transform='log' needs positive components; {label} = {value!r}")
    return np.where(on_log, np.log(np.where(on_log, Y, 1.0)), Y)


def inverse(name: str, F: np.ndarray) -> np.ndarray:
    """``t⁻¹(F)``: the components in their own units, ``(..., J)``."""
    F = np.asarray(F, dtype=float)
    if is_identity(name):
        return F
    on_log = logged(name, F.shape[-1])
    return np.where(on_log, np.exp(np.where(on_log, F, 0.0)), F)


def model_problem(problem: Problem, name: str) -> Problem:
    """The problem as the component GPs see it under transform ``name``.

    Parameters
    ----------
    problem : Problem
        The system, its components in their own units.
    name : {"none", "log"}, or one of them per component

    Returns
    -------
    ``problem`` itself for ``"none"``; else a copy on the same domain,
    components and sign whose ``g`` is ``F ↦ g(t⁻¹(F), x)`` (nonlinear, no
    weights, Lipschitz constants bounded numerically when asked for), without a
    ``components`` function or known kernels: the system is run only through
    ``problem``.
    """
    name = check_outcome_transform(name)
    if is_identity(name):
        return problem
    g = problem.g
    return opaque(problem, lambda F, X: g(inverse(name, F), X))


def opaque(problem: Problem, g=None) -> Problem:
    """A copy of ``problem`` on the same domain, components and sign whose ``g``
    (``problem.g`` by default) is a general function: no weights or linear form,
    Lipschitz constants bounded numerically when asked for, no ``components``
    function and no known kernels. What the component GPs see where their outputs
    enter ``g`` through a map of their own (an outcome transform, a learned warp)."""
    # a copy, not a new Problem: g was checked on the system's outputs, and a new
    # Problem would check g ∘ t⁻¹ on random values g may not accept
    out = copy.copy(problem)
    out.g = problem.g if g is None else g
    out.components = out.weights = out.linear = out.lipschitz = out.known_kernels = None
    out.offset = out.weights_grad = None
    out.metadata = dict(problem.metadata)
    return out
