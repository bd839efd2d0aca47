"""nutpie's models of the numba densities: a component GP's
(:func:`~pp_decomp.components.gp.density.log_density`) and, by the same
:class:`NutsModel`, the additive GP's (:mod:`pp_decomp.additive.sampler`).

A :class:`NutsModel` holds what :func:`nutpie.compiled_pyfunc.from_pyfunc`
needs, the data apart; :meth:`NutsModel.build` makes nutpie's model on the data
in hand, the chains starting where asked. A chain's log density is a
``functools.partial`` of a numba function over the data and a gradient buffer
of its own: no Python frame and no conversion per call. The numba density
releases the GIL while it computes, so the chains run in parallel.

nutpie calls the log density from each chain's thread, attaching it to Python
for the call only: Python creates and destroys the thread's state every time,
which costs several times the density at ``n = 10``. Given the draws per
chain, :meth:`NutsModel.build` keeps each chain's thread state from its first
draw to its last (:class:`_ChainExpand`).
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial

import numba
import numpy as np

from pp_decomp.components.gp.density import log_density


def _no_check(data: dict) -> None:
    """Any data are accepted (the default ``NutsModel.check``)."""


@dataclass(frozen=True)
class NutsModel:
    """A log density in ``ndim`` unconstrained coordinates for nutpie, its data apart.

    ``make_logp(**shared_data)``: one chain's ``z (ndim,) -> (value, gradient
    (ndim,))``, the density NUTS samples (the log transforms' Jacobian
    included), ``-inf`` rejecting the point. ``make_expand()``: one chain's
    ``z -> dict`` of the stored variables, ``names`` with ``shapes`` in that order.
    ``initial_point(seed) -> (ndim,)``: a chain's start. ``check(shared_data)``
    raises a ValueError for data the density cannot take.
    """

    ndim: int
    make_logp: Callable[..., Callable]
    make_expand: Callable[[], Callable[[np.ndarray], dict]]
    names: tuple[str, ...]
    shapes: tuple[tuple[int, ...], ...]
    shared_data: dict
    initial_point: Callable[[int], np.ndarray]
    check: Callable[[dict], None] = field(default=_no_check)

    def with_data(self, **updates) -> NutsModel:
        """The model on new data (float arrays, made C-contiguous)."""
        shared = dict(self.shared_data)
        for name, value in updates.items():
            if name not in shared:
                raise KeyError(f"the model's data are {list(shared)}; got {name!r}")
            shared[name] = np.ascontiguousarray(value, dtype=float)
        self.check(shared)
        return replace(self, shared_data=shared)

    def build(
        self,
        initial_point: Callable[[int], np.ndarray] | None = None,
        chain_draws: int | None = None,
    ):
        """nutpie's model (:func:`nutpie.compiled_pyfunc.from_pyfunc`) on the data in
        hand; each chain starts at ``initial_point(seed)``, by default
        :attr:`initial_point`. ``chain_draws``: the draws per chain, tuning
        included, that ``nutpie.sample`` will take (see the module docstring)."""
        from nutpie.compiled_pyfunc import from_pyfunc

        data, make_logp, chain_expand = self.shared_data, self.make_logp, self.make_expand
        hold = chain_draws is not None and _GILSTATE is not None

        def make_expand(seed1, seed2, chain):
            return _ChainExpand(chain_expand(), chain_draws) if hold else chain_expand()

        return from_pyfunc(
            self.ndim,
            lambda: make_logp(**data),
            make_expand,
            [np.dtype(np.float64)] * len(self.names),
            list(self.shapes),
            list(self.names),
            make_initial_point_fn=initial_point or self.initial_point,
        )


def _gilstate_api():
    try:
        ensure, release = ctypes.pythonapi.PyGILState_Ensure, ctypes.pythonapi.PyGILState_Release
    except AttributeError:  # not CPython
        return None
    ensure.restype, release.argtypes = ctypes.c_int, [ctypes.c_int]
    return ensure, release


_GILSTATE = _gilstate_api()


class _ChainExpand:
    """One chain's ``expand``, which also holds the chain's thread state from the
    chain's first draw to its last (``draws``, tuning included).

    nutpie calls ``expand`` once per draw, with the GIL, in the chain's thread.
    At the first draw ``PyGILState_Ensure`` takes one more hold of the thread's
    state, so it outlives nutpie's calls; at the last draw, in the same thread,
    ``PyGILState_Release`` gives it back, and the thread state ends with
    nutpie's call as before. A chain that stops early keeps its thread state.
    """

    def __init__(self, expand: Callable[[np.ndarray], dict], draws: int):
        self.expand, self.draws, self.done, self.held = expand, int(draws), 0, None

    def __call__(self, z: np.ndarray) -> dict:
        self.done += 1
        if self.done == 1:
            self.held = threading.get_ident(), _GILSTATE[0]()
        if self.done == self.draws and self.held and self.held[0] == threading.get_ident():
            _GILSTATE[1](self.held[1])
            self.held = None
        return self.expand(z)


class _Expand:
    """One chain's ``z -> {name_log__: z's part, ..., name: exp(z's part), ...}`` for
    parameters ``names`` with ``shapes``, in that order. The values are views of
    two buffers of its own, refilled at every call (nutpie copies them at once)."""

    def __init__(self, names, shapes):
        sizes = [int(np.prod(s)) for s in shapes]
        self.z, self.e = np.empty(sum(sizes)), np.empty(sum(sizes))
        ends = np.cumsum(sizes)
        parts = [slice(e - s, e) for e, s in zip(ends, sizes, strict=True)]
        views = list(zip(names, parts, shapes, strict=True))
        self.out = {f"{n}_log__": self.z[p].reshape(s) for n, p, s in views}
        self.out.update({n: self.e[p].reshape(s) for n, p, s in views})

    def __call__(self, z: np.ndarray) -> dict:
        np.copyto(self.z, z)
        np.exp(z, out=self.e)
        return self.out


@numba.njit(nogil=True, cache=True)
def _logp(X, y, prm, grad, z):
    """:func:`log_density` with the Jacobian at ``z`` (:func:`nuts_value`)."""
    value, g = log_density(z, X, y, prm, True)
    return nuts_value(value, g, grad)


@numba.njit(nogil=True, cache=True, inline="always")
def nuts_value(value, g, grad):
    """What nutpie takes from a density's ``(value, g)``: the gradient copied into the
    chain's ``grad``, and ``(-inf, 0)`` where either is not finite (a rejected point)."""
    finite = np.isfinite(value)
    for k in range(grad.shape[0]):
        grad[k] = g[k]
        finite = finite and np.isfinite(g[k])
    if not finite:
        grad[:] = 0.0
        return -np.inf, grad
    return value, grad


def _chain_logp(X, y, *, prm, k):
    return partial(_logp, X, y, prm, np.zeros(k))


def _check_xy(data: dict) -> None:
    X, y = data["X"], data["y"]
    if X.ndim != 2 or y.shape != (len(X),):
        raise ValueError(f"X must be (n, d) and y (n,); got {X.shape} and {y.shape}")


def density_model(names: list[str], sizes: list[int], prm: np.ndarray, initial_point) -> NutsModel:
    """The NUTS model of a component GP, on data ``X`` (n, d) and ``y`` (n,).

    Parameters
    ----------
    names : the log-scale parameters in order, e.g. ``["ls", "eta", "sigma"]``
    sizes : their sizes, e.g. ``[d, 1, 1]``
    prm : (13,) the density's constants (:func:`~pp_decomp.components.gp.density.constants`)
    initial_point : ``seed -> (k,)`` a chain's starting point in the log space

    Stored: ``ls_log__ (d,)``, ``eta_log__``, ... and ``ls (d,)``, ``eta``, ...
    """
    k = int(sum(sizes))
    shapes = [(s,) if n == "ls" else () for n, s in zip(names, sizes, strict=True)]
    prm = np.ascontiguousarray(prm, dtype=float)
    return NutsModel(
        ndim=k,
        make_logp=partial(_chain_logp, prm=prm, k=k),
        make_expand=partial(_Expand, names, shapes),
        names=(*[f"{n}_log__" for n in names], *names),
        shapes=(*shapes, *shapes),
        shared_data={"X": np.zeros((3, sizes[0])), "y": np.zeros(3)},
        initial_point=initial_point,
        check=_check_xy,
    )
