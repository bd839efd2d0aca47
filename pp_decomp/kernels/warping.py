"""Input warping: a stationary family on Kumaraswamy-warped inputs.

``Warped(base)`` is ``base`` on ``w(x_d) = 1 - (1 - x̃_d^{a_d})^{b_d}`` per
active input, ``x̃ = ε + (1 - 2ε) x`` with ``x`` clipped to the unit box and
``ε = 10⁻⁷`` (Snoek et al. 2014; BoTorch's ``Warp`` input transform). The
shapes ``a_d, b_d > 0`` are hyperparameters (``warp_a``, ``warp_b``) with
priors centred on the identity (``a = b = 1``), ``LogNormal(0, √0.75)`` as
BoTorch's, inferred with the lengthscales by MAP or NUTS. With ``a < 1`` the
warp stretches the box's low end (the function varies fast there), with
``b < 1`` its high end; the kernel is then no longer stationary in ``x``.

The warp needs the inputs on the unit box, as a loop gives them (the
problem's bounds) or ``ComponentGP(..., bounds=...)`` does. To warp some
inputs only, restrict a warped family with ``active_dims`` and multiply it
by an unwarped one.

Example
-------
>>> from pp_decomp import kernels as K
>>> k = K.Warped(K.Matern32())
>>> k
Warped(Matern32())
>>> K.BoundKernel(k, input_dim=2).names
['ls', 'warp_a', 'warp_b', 'eta']
>>> K.Kernel.from_dict(k.to_dict()).to_dict() == k.to_dict()
True
"""

from __future__ import annotations

import math

import numba
import numpy as np

from pp_decomp.kernels import families as _families  # noqa: F401 (registers the bases)
from pp_decomp.kernels.base import DERIVED, FAMILIES, Family, Param, Stationary
from pp_decomp.kernels.bound import extra_source
from pp_decomp.prior import Prior

EPS = 1e-7  # keeps x̃^a and 1 - x̃^a away from 0 (their logs enter the gradient)
# 1 - x̃^a's floor: a sampler's early steps try shapes near 0, where x̃^a rounds to 1
Q_MIN = 1e-12
SHAPE_PRIOR = Prior("LogNormal", mu=0.0, sigma=math.sqrt(0.75))
_MADE: dict[type, type] = {}  # base class -> its warped family (warped_family)
WARP_PARAMS = (
    Param("warp_a", default=SHAPE_PRIOR, ard=True),
    Param("warp_b", default=SHAPE_PRIOR, ard=True),
)


def kumaraswamy(x, a, b):
    """``(w, ∂w/∂a, ∂w/∂b)`` of the Kumaraswamy CDF at ``x`` (scalars; numba compiles it)."""
    lx = math.log(min(max(x, 0.0), 1.0) * (1.0 - 2.0 * EPS) + EPS)
    q = -math.expm1(a * lx)  # 1 - x̃^a, exact where x̃^a is near 1
    floored = q < Q_MIN
    lq = math.log(Q_MIN if floored else q)
    qb = math.exp(b * lq)
    da = 0.0 if floored else b * math.exp((b - 1.0) * lq + a * lx) * lx
    return 1.0 - qb, da, -qb * lq


def kumaraswamy_tensor(X, a, b):
    """The warp of :func:`kumaraswamy` on a PyTensor ``X (n, d)``, for PyMC's
    ``pm.gp.cov.WarpedInput``."""
    import pytensor.tensor as pt

    lx = pt.log(pt.clip(X, 0.0, 1.0) * (1.0 - 2.0 * EPS) + EPS)
    return 1.0 - pt.maximum(-pt.expm1(a * lx), Q_MIN) ** b


class WarpedFamily(Family):
    """A stationary family on warped inputs; :func:`Warped` makes them, one class
    per base family (``params``: the base's, then ``warp_a`` and ``warp_b``)."""

    base: type[Stationary] = Stationary

    def __reduce__(self):
        # the class is made at run time: pickle names its base (by reference), and
        # the warped class of that very base is made again
        return _blank, (self.base,), self.__dict__

    def __repr__(self):
        base_values = {k: v for k, v in self.values.items() if not k.startswith("warp_")}
        inner = self.base(active_dims=self.active_dims, **base_values)
        warp = [f", {k}={v!r}" for k, v in self.values.items() if k.startswith("warp_")]
        return f"Warped({inner!r}{''.join(warp)})"

    def pymc_cov(self, input_dim, active_dims, values):
        import pymc as pm

        dims = list(range(input_dim)) if active_dims is None else list(active_dims)
        base_values = {p.name: values[p.name] for p in self.base.all_params()}
        inner = self.base().pymc_cov(len(dims), None, base_values)
        args = (values["warp_a"], values["warp_b"])
        return pm.gp.cov.WarpedInput(input_dim, inner, kumaraswamy_tensor, args, active_dims=dims)


def warped_family(base: type[Stationary]) -> type[WarpedFamily]:
    """The family of ``base`` on warped inputs, made once per base class and
    registered as ``"Warped(<base>)"`` in :data:`~pp_decomp.kernels.base.FAMILIES`
    (TypeError naming ``base`` unless it is a concrete stationary family)."""
    if not (
        isinstance(base, type)
        and issubclass(base, Stationary)
        and base.correlation is not Stationary.correlation
        and base.gradient is not Stationary.gradient
    ):
        raise TypeError(
            f"Warped needs a concrete stationary kernel family (K.ExpQuad, K.Matern32, ...); "
            f"got {getattr(base, '__name__', base)!r}"
        )
    cls = _MADE.get(base)
    if cls is None:
        name = f"Warped({base.__name__})"
        cls = type(
            name,
            (WarpedFamily,),
            {
                "base": base,
                "params": (*base.params, *WARP_PARAMS),
                "pair": staticmethod(_warped_pair(base)),
                "__module__": __name__,
                # two bases of one name (a user's Matern32) stay apart in the compile caches
                "__qualname__": f"Warped({base.__module__}.{base.__qualname__})",
                "__doc__": f"``{base.__name__}`` on Kumaraswamy-warped inputs (:func:`Warped`).",
            },
        )
        _MADE[base] = cls
    FAMILIES[cls.__name__] = cls  # the latest base of a name is the one from_dict finds
    return cls


def _blank(base: type[Stationary]) -> WarpedFamily:
    """An empty instance of ``base``'s warped family, for unpickling."""
    cls = warped_family(base)
    return cls.__new__(cls)


def Warped(base: Family, warp_a=None, warp_b=None) -> WarpedFamily:  # noqa: N802 (a kernel)
    """``base`` (a stationary family) on Kumaraswamy-warped inputs (the module docstring).

    Parameters
    ----------
    base : Stationary
        The family to warp, e.g. ``K.Matern32()``; its parameters, priors and
        ``active_dims`` carry over, and every active input is warped.
    warp_a, warp_b : Prior, number or sequence, optional
        The shapes' priors (default ``LogNormal(0, √0.75)``) or fixed values,
        one per active input or one for all.

    Example
    -------
    >>> from pp_decomp import kernels as K
    >>> k = K.Warped(K.Matern52(active_dims=[0]), warp_b=1.0) * K.Matern52(active_dims=[1])
    >>> K.BoundKernel(k, input_dim=2).names  # input 0 warped (its a inferred, b fixed)
    ['ls_0', 'warp_a_0', 'eta_0', 'ls_1']
    """
    if not isinstance(base, Stationary):
        raise TypeError(
            f"Warped needs a stationary kernel family (K.ExpQuad(), K.Matern32(), ...); "
            f"got {base!r}"
        )
    cls = warped_family(type(base))
    return cls(active_dims=base.active_dims, warp_a=warp_a, warp_b=warp_b, **base.values)


def check_unit_box(
    bound, X, Xs, component: str, *, bounds=None, arg: str = "X", tol: float = 1e-9
) -> None:
    """Refuse inputs off the unit box on a warped family's dimensions, where the
    warp would clip them: ``X (n, d)`` as given (argument ``arg``), ``Xs`` on the
    model's scale, ``bound`` a :class:`~pp_decomp.kernels.bound.BoundKernel` (shared
    by GPs of one structure: ``component`` names this one), ``bounds`` the GP's
    ``(2, d)`` box or ``None`` (ValueError naming the component, the input and
    its value)."""
    for leaf, dims in zip(bound.leaves, bound.dims, strict=True):
        if not isinstance(leaf, WarpedFamily):
            continue
        sub = Xs[:, dims]
        rows, cols = np.nonzero((sub < -tol) | (sub > 1.0 + tol))
        if len(rows):
            i, j = int(rows[0]), int(dims[cols[0]])
            if bounds is None:
                box = "inputs on the unit box (give the GP bounds=...)"
            else:
                low, high = float(bounds[0][j]), float(bounds[1][j])
                box = f"inputs in the GP's bounds [{low!r}, {high!r}] on input {j}"
            raise ValueError(
                f"component {component!r}: {leaf!r} warps {box}; "
                f"{arg}[{i}, {j}] = {float(X[i, j])!r} lies outside it"
            )


def _warped_pair(base: type[Stationary]):
    """The ``pair(x1, x2, dims, th, g)`` of ``base`` on warped inputs: ``th`` holds
    ``ℓ (nd)``, the base's extra parameters, ``a (nd)`` and ``b (nd)``; by the
    chain rule ``∂c/∂a_d = c'(r²) 2 t_d (∂w(x1)/∂a - ∂w(x2)/∂a) / ℓ_d``."""
    n_extra, extra, grads = extra_source(base)
    src = (
        "def pair(x1, x2, dims, th, g):\n"
        "    nd = dims.shape[0]\n"
        f"    A = nd + {n_extra}\n"
        "    B = A + nd\n"
        "    r2 = 0.0\n"
        "    for k in range(nd):\n"
        "        u1 = kuma(x1[dims[k]], th[A + k], th[B + k])[0]\n"
        "        u2 = kuma(x2[dims[k]], th[A + k], th[B + k])[0]\n"
        "        t = (u1 - u2) / th[k]\n"
        "        r2 += t * t\n"
        f"    c = corr(r2{extra})\n"
        f"    gr = grad(r2{extra})\n"
        "    for k in range(nd):\n"
        "        u1, a1, b1 = kuma(x1[dims[k]], th[A + k], th[B + k])\n"
        "        u2, a2, b2 = kuma(x2[dims[k]], th[A + k], th[B + k])\n"
        "        t = (u1 - u2) / th[k]\n"
        "        g[k] = -2.0 * gr[0] * t * t / th[k]\n"
        "        s = 2.0 * gr[0] * t / th[k]\n"
        "        g[A + k] = s * (a1 - a2)\n"
        "        g[B + k] = s * (b1 - b2)\n"
        f"{grads}"
        "    return c\n"
    )
    env = {
        "kuma": _KUMA,
        "corr": numba.njit(inline="always")(base.correlation),
        "grad": numba.njit(inline="always")(base.gradient),
    }
    exec(compile(src, f"<Warped({base.__name__}) pair>", "exec"), env)
    return env["pair"]


_KUMA = numba.njit(inline="always", cache=True)(kumaraswamy)


def _builtin_warped() -> None:
    """The warped built-in families exist from import on, so ``from_dict`` finds them."""
    for cls in list(FAMILIES.values()):
        if issubclass(cls, Stationary) and cls.__module__ == "pp_decomp.kernels.families":
            warped_family(cls)


DERIVED["Warped"] = lambda base_name: warped_family(FAMILIES[base_name])
_builtin_warped()
