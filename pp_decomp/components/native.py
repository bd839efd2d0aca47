"""A nutpie model of a component GP that samples :mod:`pp_decomp.components.density`.

nutpie samples a PyMC model through two C callbacks, the log density with its
gradient and the expansion of a point into the stored variables, compiled by
numba from the PyTensor graph. :class:`DensityModel` hands nutpie the same two
callbacks compiled from the hand-written density instead: no PyTensor graph to
compile (15-40 s per structure) and a cheaper gradient. The sampler, its
adaptation and its diagnostics are nutpie's, unchanged; the callbacks run
without the GIL, so chains run in parallel as they do for a PyMC model.

The data live in ``shared_data`` (``X``, ``y`` and the density's constants)
and reach the callbacks through ``user_data``, an array of their addresses and
sizes; :meth:`DensityModel.with_data` swaps them as nutpie's own models do.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numba
import numpy as np
from numba.core import cgutils
from numba.extending import intrinsic
from nutpie.compile_pymc import CompiledPyMCModel

from pp_decomp.components.density import N_CONSTANTS, log_density

# user_data: [address of X, of y, of the constants, n, d]
_U_X, _U_Y, _U_PRM, _U_N, _U_D, _U_SIZE = 0, 1, 2, 3, 4, 5

_LOGP_SIG = numba.types.int64(
    numba.types.uint64,
    numba.types.CPointer(numba.types.double),
    numba.types.CPointer(numba.types.double),
    numba.types.CPointer(numba.types.double),
    numba.types.voidptr,
)
_EXPAND_SIG = numba.types.int64(
    numba.types.uint64,
    numba.types.uint64,
    numba.types.CPointer(numba.types.double),
    numba.types.CPointer(numba.types.double),
    numba.types.voidptr,
)


@intrinsic
def _pointer(typingctx, address):
    """The integer ``address`` as a ``void*``."""
    sig = numba.types.voidptr(address)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)

    return sig, codegen


@numba.njit(nogil=True, cache=True)
def _data(user_data_):
    u = numba.carray(user_data_, (_U_SIZE,), np.uint64)
    n, d = int(u[_U_N]), int(u[_U_D])
    X = numba.carray(_pointer(u[_U_X]), (n, d), np.float64)
    y = numba.carray(_pointer(u[_U_Y]), (n,), np.float64)
    prm = numba.carray(_pointer(u[_U_PRM]), (N_CONSTANTS,), np.float64)
    return X, y, prm


@numba.cfunc(_LOGP_SIG, cache=True)
def _logp_callback(dim, x_, out_, logp_, user_data_):
    """nutpie's log-density callback: 0, or an error code nutpie reads as a
    rejected point (3: gradient not finite, 4: density not finite)."""
    x = numba.carray(x_, (dim,))
    out = numba.carray(out_, (dim,))
    logp = numba.carray(logp_, ())
    X, y, prm = _data(user_data_)
    value, grad = log_density(x, X, y, prm, True)
    logp[()] = value
    out[:] = grad
    if not np.isfinite(value):
        return 4
    for k in range(dim):
        if not np.isfinite(grad[k]):
            return 3
    return 0


@numba.cfunc(_EXPAND_SIG, cache=True)
def _expand_callback(dim, expanded, x_, out_, user_data_):
    """nutpie's expansion callback: ``(z, e^z)``, the log-scale values and ``θ``."""
    x = numba.carray(x_, (dim,))
    out = numba.carray(out_, (expanded,))
    for k in range(dim):
        out[k] = x[k]
        out[dim + k] = np.exp(x[k])
    return 0


@dataclass(frozen=True)
class DensityModel(CompiledPyMCModel):
    """A :class:`nutpie.compile_pymc.CompiledPyMCModel` whose callbacks evaluate
    :func:`~pp_decomp.components.density.log_density` (see the module docstring)."""

    def with_data(self, **updates) -> DensityModel:
        """The model on new ``X`` (n, d) and ``y`` (n,)."""
        shared = dict(self.shared_data)
        for name, value in updates.items():
            if name not in ("X", "y"):
                raise KeyError(f"DensityModel has data X and y; got {name!r}")
            shared[name] = np.ascontiguousarray(value, dtype=float)
        return dataclasses.replace(self, shared_data=shared, user_data=_user_data(shared))


def _user_data(shared: dict) -> np.ndarray:
    X, y, prm = shared["X"], shared["y"], shared["prm"]
    if X.ndim != 2 or y.shape != (len(X),):
        raise ValueError(f"X must be (n, d) and y (n,); got {X.shape} and {y.shape}")
    u = np.zeros(_U_SIZE, dtype=np.uint64)
    u[[_U_X, _U_Y, _U_PRM]] = [a.ctypes.data for a in (X, y, prm)]
    u[[_U_N, _U_D]] = X.shape
    return u


def density_model(
    names: list[str], sizes: list[int], prm: np.ndarray, initial_point
) -> DensityModel:
    """The nutpie model of a component GP.

    Parameters
    ----------
    names : the log-scale parameters in order, e.g. ``["ls", "eta", "sigma"]``
    sizes : their sizes, e.g. ``[d, 1, 1]``
    prm : (13,) the density's constants (:func:`~pp_decomp.components.density.constants`)
    initial_point : ``seed -> (k,)`` a chain's starting point in the log space
    """
    k = int(sum(sizes))
    shapes = [(s,) if n == "ls" else () for n, s in zip(names, sizes, strict=True)]
    all_names = [f"{n}_log__" for n in names] + list(names)
    all_shapes = shapes + shapes
    offsets = np.cumsum([0, *[int(np.prod(s)) for s in all_shapes]])
    slices = [slice(a, b) for a, b in zip(offsets[:-1], offsets[1:], strict=True)]
    X, y = np.zeros((3, sizes[0])), np.zeros(3)
    shared = {"X": X, "y": y, "prm": np.ascontiguousarray(prm, dtype=float)}
    return DensityModel(
        dims={},
        _n_dim=k,
        _coords={},
        _shapes=dict(zip(all_names, all_shapes, strict=True)),
        compiled_logp_func=_logp_callback,
        compiled_expand_func=_expand_callback,
        initial_point_func=initial_point,
        shared_data=shared,
        user_data=_user_data(shared),
        n_expanded=2 * k,
        shape_info=(all_names, slices, all_shapes),
        logp_func=None,
        expand_func=None,
    )
