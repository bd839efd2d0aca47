"""Covariance expressions: kernel families, their sums and products.

A family is one class (:class:`Family`, or :class:`Stationary` for a function of
the scaled squared distance): its hyperparameters (:class:`Param`), its value and
gradient written once in plain numpy (numba compiles the same function for the
fast paths), and :meth:`Family.pymc_cov`, the equivalent ``pm.gp.cov`` object.
Every leaf carries an amplitude ``eta`` (``η² k``); ``+`` and ``*`` compose
leaves, as ``pm.gp.cov`` objects compose.

Hyperparameters live on the model's scale: inputs in the unit box of the
problem's bounds, outputs standardised. A parameter declared in input units
(``Periodic``'s ``period``) is given in the problem's units and rescaled.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np

from pp_decomp.prior import Prior, as_prior

SQRT3, SQRT5 = math.sqrt(3.0), math.sqrt(5.0)
ETA_ALONE = Prior("Gamma", alpha=400.0, beta=400.0)  # η = 1 ± 0.05: the standardised scale
ETA_IN_SUM = Prior("Gamma", alpha=2.0, beta=2.0)  # terms of a sum share the variance
# ℓ_d ~ InverseGamma(3, 0.6) on the unit box, as Priors' default (docs/design.md, "Priors")
DEFAULT_LS = Prior("InverseGamma", alpha=3.0, beta=0.6)


@dataclass(frozen=True)
class Param:
    """A family's hyperparameter.

    ``ard``: one value per active input dimension (else one); ``positive``:
    sampled as ``log θ`` (else ``θ`` itself); ``default``: its prior, a
    :class:`Prior` or ``d -> Prior`` of the active dimensions; ``input_units``:
    given in the problem's input units (rescaled to the unit box).
    """

    name: str
    default: object
    ard: bool = False
    positive: bool = True
    input_units: bool = False

    def size(self, d: int) -> int:
        """Values on ``d`` active dimensions."""
        return d if self.ard else 1

    def default_prior(self, d: int) -> Prior:
        """The default on ``d`` active dimensions (a number: fixed)."""
        return self.default(d) if callable(self.default) else self.default


FAMILIES: dict[str, type] = {}
# families made from another on demand, "<maker>(<base>)" -> maker(base name)
DERIVED: dict[str, object] = {}


class Kernel:
    """A covariance expression: a family, or a sum or product of expressions."""

    def __add__(self, other: Kernel) -> Kernel:
        return Sum(self, _check_kernel(other, "+"))

    def __mul__(self, other: Kernel) -> Kernel:
        return Product(self, _check_kernel(other, "*"))

    def leaves(self) -> list[Family]:
        """The families of the expression, left to right."""
        raise NotImplementedError

    def to_dict(self) -> dict:
        """The expression as plain data (``{"op": ..., ...}``); :meth:`from_dict` inverts it."""
        raise NotImplementedError

    @staticmethod
    def from_dict(data: dict) -> Kernel:
        """Inverse of :meth:`to_dict`."""
        op = data["op"]
        if op in ("+", "*"):
            a, b = (Kernel.from_dict(t) for t in data["terms"])
            return Sum(a, b) if op == "+" else Product(a, b)
        cls = FAMILIES.get(op) or _derived(op)
        if cls is None:
            raise ValueError(f"unknown kernel family {op!r}; known: {sorted(FAMILIES)}")
        kw = {
            k: (Prior.from_dict(v) if isinstance(v, dict) else v) for k, v in data["params"].items()
        }
        return cls(active_dims=data.get("active_dims"), **kw)


def _derived(op: str):
    """The family ``op`` names as ``"<maker>(<base>)"`` (a :data:`DERIVED` maker of a
    known base), or ``None``."""
    maker, _, rest = op.partition("(")
    base = rest.removesuffix(")")
    if maker in DERIVED and base in FAMILIES:
        try:
            return DERIVED[maker](base)
        except TypeError as err:
            raise ValueError(f"kernel family {op!r}: {err}") from None
    return None


def _check_kernel(other, op: str) -> Kernel:
    if not isinstance(other, Kernel):
        raise TypeError(f"kernel {op} needs another pp_decomp kernel; got {other!r}")
    return other


class Sum(Kernel):
    """``k_a + k_b``."""

    def __init__(self, a: Kernel, b: Kernel):
        self.a, self.b = a, b

    def leaves(self):
        """The families of the expression, left to right."""
        return self.a.leaves() + self.b.leaves()

    def to_dict(self):
        """The expression as plain data."""
        return {"op": "+", "terms": [self.a.to_dict(), self.b.to_dict()]}

    def __repr__(self):
        return f"{self.a!r} + {self.b!r}"


class Product(Kernel):
    """``k_a · k_b``: the amplitude of every factor but the first is fixed at 1
    unless given (a product has one scale)."""

    def __init__(self, a: Kernel, b: Kernel):
        b = copy.deepcopy(b)  # the user's factor keeps its own amplitude
        self.a, self.b = a, b
        for leaf in b.leaves():
            if "eta" not in leaf.given:
                leaf.values["eta"] = 1.0

    def leaves(self):
        """The families of the expression, left to right."""
        return self.a.leaves() + self.b.leaves()

    def to_dict(self):
        """The expression as plain data."""
        return {"op": "*", "terms": [self.a.to_dict(), self.b.to_dict()]}

    def __repr__(self):
        wrap = lambda k: f"({k!r})" if isinstance(k, Sum) else repr(k)  # noqa: E731
        return f"{wrap(self.a)} * {wrap(self.b)}"


ETA = Param("eta", default=ETA_ALONE)


class Family(Kernel):
    """One kernel family, ``η² k_θ(x, x')`` on the inputs ``active_dims``.

    Subclasses set ``params`` and define :meth:`pair` (``Stationary`` defines it
    from a correlation of ``r²``) and :meth:`pymc_cov`. Each keyword names a
    parameter: a :class:`Prior` (or pymc-extras prior) to infer it, a number
    (or one per active dimension) to fix it, or nothing for its default prior.
    """

    params: tuple[Param, ...] = ()

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        FAMILIES[cls.__name__] = cls

    def __init__(self, active_dims=None, **values):
        names = {p.name for p in self.all_params()}
        for key in values:
            if key not in names:
                raise ValueError(
                    f"{type(self).__name__} has no parameter {key!r}; its parameters are "
                    f"{sorted(names)}"
                )
        if active_dims is not None:
            dims = np.atleast_1d(np.asarray(active_dims))
            if dims.ndim != 1 or not np.issubdtype(dims.dtype, np.integer) or np.any(dims < 0):
                raise ValueError(
                    f"{type(self).__name__}: active_dims must be non-negative integers; "
                    f"got {active_dims!r}"
                )
            if len(set(dims.tolist())) != len(dims):
                raise ValueError(f"{type(self).__name__}: active_dims repeat; got {active_dims!r}")
            active_dims = [int(i) for i in dims]
        self.active_dims = active_dims
        self.values = {}
        for key, value in values.items():
            if value is None:
                continue
            if isinstance(value, int | float | np.number | list | tuple | np.ndarray):
                arr = np.asarray(value, dtype=float)
                if not np.all(np.isfinite(arr)):
                    raise ValueError(f"{type(self).__name__}: {key} must be finite; got {value!r}")
                self.values[key] = float(arr) if arr.ndim == 0 else arr.tolist()
            else:
                self.values[key] = as_prior(value, f"{type(self).__name__}({key}=...)")
        self.given = set(self.values)

    @classmethod
    def all_params(cls) -> tuple[Param, ...]:
        return (*cls.params, ETA)

    def leaves(self):
        """The families of the expression, left to right."""
        return [self]

    def to_dict(self):
        """The expression as plain data."""
        params = {k: (v.to_dict() if isinstance(v, Prior) else v) for k, v in self.values.items()}
        return {"op": type(self).__name__, "active_dims": self.active_dims, "params": params}

    def __repr__(self):
        args = [f"{k}={v!r}" for k, v in self.values.items()]
        if self.active_dims is not None:
            args.append(f"active_dims={self.active_dims}")
        return f"{type(self).__name__}({', '.join(args)})"

    # what a family defines -------------------------------------------------
    @staticmethod
    def pair(x1, x2, dims, th, g):
        """``k_θ(x1, x2)`` without the amplitude, on the coordinates ``dims`` of
        ``x1, x2 (d,)``, for the family's parameters ``th`` (natural scale, in
        :attr:`params` order); writes ``∂k/∂th`` into ``g``. numba compiles it."""
        raise NotImplementedError

    def pymc_cov(self, input_dim: int, active_dims, values: dict):
        """The equivalent ``pm.gp.cov`` object, amplitude apart, for parameter
        ``values`` (tensors or numbers) by name."""
        raise NotImplementedError


class Stationary(Family):
    """A family ``c(r²)`` of ``r² = Σ_d (x_d - x'_d)² / ℓ_d²`` (ARD lengthscales),
    with extra parameters ``params[1:]`` passed after ``r²``.

    Subclasses define :meth:`correlation` ``(r², *extra) -> c`` and
    :meth:`gradient` ``(r², *extra) -> (∂c/∂r², ∂c/∂extra...)``, in numpy
    functions that work on arrays and on scalars (numba compiles them), and
    ``pymc_name``, PyMC's class (``pm.gp.cov.<pymc_name>(d, ls=, **extra)``).
    """

    params = (Param("ls", default=DEFAULT_LS, ard=True),)
    pymc_name = ""

    @staticmethod
    def correlation(r2, *extra):
        raise NotImplementedError

    @staticmethod
    def gradient(r2, *extra):
        raise NotImplementedError

    def pymc_cov(self, input_dim, active_dims, values):
        import pymc as pm

        extra = {p.name: values[p.name] for p in self.params[1:]}
        cls = getattr(pm.gp.cov, self.pymc_name)
        return cls(input_dim, ls=values["ls"], active_dims=active_dims, **extra)
