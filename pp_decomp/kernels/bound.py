"""A kernel expression on a problem's inputs: its parameters laid out in one
vector, and its value and gradient compiled by numba.

``θ (P,)`` holds every leaf's parameters in the natural scale, leaf after leaf
(the family's parameters, then ``eta``); the free ones (with a prior) are
sampled, the rest fixed. :meth:`BoundKernel.kfun` is one numba function
``(x1, x2, θ, g) -> k`` writing ``∂k/∂θ`` into ``g``, generated from the
expression's families; :meth:`BoundKernel.matrix` evaluates it batched over
draws.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numba
import numpy as np

from pp_decomp.kernels.base import ETA_ALONE, ETA_IN_SUM, Family, Kernel, Product, Stationary, Sum
from pp_decomp.kernels.families import Constant
from pp_decomp.prior import Prior

_PAIRS: dict[type, object] = {}
_KFUNS: dict[tuple, object] = {}  # kernel code (BoundKernel.kfun) -> its numba function
_BATCHED: dict[object, tuple] = {}  # kfun -> its (matrix, diag)


@dataclass(frozen=True)
class FreeParam:
    """A sampled parameter: ``name``, its slots in ``θ``, prior and transform."""

    name: str
    slots: tuple[int, ...]
    prior: Prior
    positive: bool


def leaf_pair(cls: type[Family]):
    """The numba ``pair(x1, x2, dims, th, g) -> k`` of family ``cls`` (compiled once)."""
    if cls not in _PAIRS:
        # generated source (a warped family's pair) has no file for numba's cache
        cache = cls.__module__.startswith("pp_decomp.") and not _generated(cls.pair)
        if issubclass(cls, Stationary):
            _PAIRS[cls] = _stationary_pair(cls, cache)
        else:
            _PAIRS[cls] = numba.njit(nogil=True, cache=cache, inline="always")(cls.pair)
    return _PAIRS[cls]


def _generated(fn) -> bool:
    return fn.__code__.co_filename.startswith("<")


def extra_source(cls: type[Stationary]) -> tuple[int, str, str]:
    """A stationary family's extra parameters in a generated ``pair``: their number,
    the arguments after ``r2`` and the lines writing their gradients."""
    n_extra = len(cls.params) - 1
    extra = "".join(f", th[nd + {i}]" for i in range(n_extra))
    grads = "".join(f"    g[nd + {i}] = gr[{i + 1}]\n" for i in range(n_extra))
    return n_extra, extra, grads


def _stationary_pair(cls, cache: bool):
    _, extra, grads = extra_source(cls)
    src = (
        "def pair(x1, x2, dims, th, g):\n"
        "    nd = dims.shape[0]\n"
        "    r2 = 0.0\n"
        "    for k in range(nd):\n"
        "        t = (x1[dims[k]] - x2[dims[k]]) / th[k]\n"
        "        r2 += t * t\n"
        f"    c = corr(r2{extra})\n"
        f"    gr = grad(r2{extra})\n"
        "    for k in range(nd):\n"
        "        t = (x1[dims[k]] - x2[dims[k]]) / th[k]\n"
        "        g[k] = -2.0 * gr[0] * t * t / th[k]\n"
        f"{grads}"
        "    return c\n"
    )
    env = {
        "corr": numba.njit(inline="always", cache=cache)(cls.correlation),
        "grad": numba.njit(inline="always", cache=cache)(cls.gradient),
    }
    exec(compile(src, f"<{cls.__name__} pair>", "exec"), env)
    return numba.njit(nogil=True, inline="always")(env["pair"])


class BoundKernel:
    """``kernel`` on ``input_dim`` inputs whose box has ``widths``.

    Attributes
    ----------
    theta0 : (P,) the natural-scale parameters, fixed ones filled in
    free : list of :class:`FreeParam`, in the order of the sampled vector
    names : the hyperparameters' names (``ls``, ``eta``...; ``ls_0``, ``ls_1``...
        when the expression has several leaves)
    """

    def __init__(self, kernel: Kernel, input_dim: int, widths=None, component: str = "f"):
        self.kernel, self.input_dim, self.component = kernel, int(input_dim), str(component)
        widths = np.ones(input_dim) if widths is None else np.asarray(widths, dtype=float)
        leaves = kernel.leaves()
        n_free_eta = sum(
            1 for leaf in leaves if not isinstance(leaf.values.get("eta", ETA_ALONE), float)
        )
        theta, free, self.dims, self.ranges, self.shapes = [], [], [], [], {}
        for i, leaf in enumerate(leaves):
            dims = self._dims(leaf)
            start = len(theta)
            for p in leaf.all_params():
                name = p.name if len(leaves) == 1 else f"{p.name}_{i}"
                size = p.size(len(dims))
                value = leaf.values.get(p.name)
                if value is None:
                    value = p.default_prior(len(dims))
                    if p.name == "eta" and n_free_eta > 1:
                        value = ETA_IN_SUM
                scale = 1.0
                if p.input_units:
                    w = widths[dims]
                    if not np.allclose(w, w[0]):
                        raise ValueError(
                            f"component {component!r}: {type(leaf).__name__}.{p.name} is in input "
                            f"units but its active_dims {dims.tolist()} have different widths {w}"
                        )
                    scale = 1.0 / float(w[0])
                slots = tuple(range(len(theta), len(theta) + size))
                if isinstance(value, Prior):
                    if value.is_native and value.positive != p.positive:
                        support = "positive" if p.positive else "real"
                        raise ValueError(
                            f"component {component!r}: {type(leaf).__name__}.{p.name} is {support} "
                            f"but its prior {value!r} is not"
                        )
                    prior = _scaled(value, scale) if scale != 1.0 else value
                    free.append(FreeParam(name, slots, prior, p.positive))
                    theta.extend([prior.center()] * size)
                else:
                    arr = np.broadcast_to(np.asarray(value, dtype=float), (size,)) * scale
                    if p.positive and np.any(arr <= 0):
                        raise ValueError(
                            f"component {component!r}: {type(leaf).__name__}.{p.name} must be > 0; "
                            f"got {value!r}"
                        )
                    theta.extend(arr.tolist())
                self.shapes[name] = (size,) if p.ard else ()
            self.dims.append(dims)
            self.ranges.append((start, len(theta)))
        self.leaves, self.theta0, self.free = leaves, np.array(theta), free
        self.names = [f.name for f in free]

    def _dims(self, leaf: Family) -> np.ndarray:
        if leaf.active_dims is None:
            return np.arange(self.input_dim)
        bad = [i for i in leaf.active_dims if i >= self.input_dim]
        if bad:
            raise ValueError(
                f"component {self.component!r}: {type(leaf).__name__}'s active_dims "
                f"{leaf.active_dims} exceed the problem's {self.input_dim} input dimension(s)"
            )
        return np.asarray(leaf.active_dims, dtype=np.int64)

    @property
    def n_params(self) -> int:
        return len(self.theta0)

    @cached_property
    def free_index(self) -> tuple[np.ndarray, np.ndarray]:
        """``(slots, positive)`` of the sampled vector's coordinates: (F,), (F,)."""
        slots = [s for f in self.free for s in f.slots]
        positive = [f.positive for f in self.free for _ in f.slots]
        return np.array(slots, dtype=np.int64), np.array(positive, dtype=np.bool_)

    def theta(self, values: dict) -> np.ndarray:
        """``θ (S, P)`` from the free parameters' draws by name ((S,) or (S, size))."""
        S = len(np.atleast_1d(values[self.names[0]])) if self.names else 1
        out = np.tile(self.theta0, (S, 1))
        for f in self.free:
            out[:, list(f.slots)] = np.asarray(values[f.name], dtype=float).reshape(S, -1)
        return out

    # ----------------------------------------------------------------- numba
    @cached_property
    def kfun(self):
        """``(x1 (d,), x2 (d,), θ (P,), g (P,)) -> k``, ``∂k/∂θ`` written into ``g``."""
        env, lines = {}, ["def kfun(x1, x2, th, g):"]
        for i, (leaf, dims, (a, b)) in enumerate(
            zip(self.leaves, self.dims, self.ranges, strict=True)
        ):
            env[f"pair{i}"], env[f"D{i}"] = leaf_pair(type(leaf)), dims
            e = b - 1  # eta's slot
            lines += [
                f"    c{i} = pair{i}(x1, x2, D{i}, th[{a}:{e}], g[{a}:{e}])",
                f"    a{i} = th[{e}] * th[{e}]",
                f"    for q in range({a}, {e}):",
                f"        g[q] *= a{i}",
                f"    g[{e}] = 2.0 * th[{e}] * c{i}",
                f"    k{i} = a{i} * c{i}",
            ]
        counter = iter(range(10**6))

        def emit(node) -> tuple[str, int, int]:
            if isinstance(node, Family):
                i = next(counter)
                return f"k{i}", *self.ranges[i]
            (ka, a0, a1), (kb, b0, b1) = emit(node.a), emit(node.b)
            out = f"s{a0}_{b1}"
            if isinstance(node, Sum):
                lines.append(f"    {out} = {ka} + {kb}")
            else:
                assert isinstance(node, Product)
                lines.extend(
                    [
                        f"    for q in range({a0}, {a1}):",
                        f"        g[q] *= {kb}",
                        f"    for q in range({b0}, {b1}):",
                        f"        g[q] *= {ka}",
                        f"    {out} = {ka} * {kb}",
                    ]
                )
            return out, a0, b1

        root = emit(self.kernel)[0]
        lines.append(f"    return {root}")
        source = "\n".join(lines) + "\n"
        # the code reads neither the box's widths nor the parameters' values, so
        # kernels that differ only there (a network node's refits) share it
        key = (source, tuple(type(leaf) for leaf in self.leaves), tuple(map(tuple, self.dims)))
        if key not in _KFUNS:
            exec(compile(source, "<kernel>", "exec"), env)
            _KFUNS[key] = numba.njit(nogil=True, inline="always")(env["kfun"])
        return _KFUNS[key]

    @cached_property
    def _matrix(self):
        return _batched(self.kfun)[0]

    @cached_property
    def _diag(self):
        return _batched(self.kfun)[1]

    def matrix(self, X1: np.ndarray, X2: np.ndarray, theta: np.ndarray) -> np.ndarray:
        """``k(X1, X2)`` for every row of ``θ (S, P)``: (S, n1, n2)."""
        X1 = np.ascontiguousarray(X1, dtype=float)
        X2 = np.ascontiguousarray(X2, dtype=float)
        return self._matrix(X1, X2, np.ascontiguousarray(theta, dtype=float))

    def diag(self, X: np.ndarray, theta: np.ndarray) -> np.ndarray:
        """``k(x, x)`` at each row of ``X (m, d)`` for every row of ``θ``: (S, m)."""
        X = np.ascontiguousarray(X, dtype=float)
        return self._diag(X, np.ascontiguousarray(theta, dtype=float))

    # ------------------------------------------------------------------ PyMC
    def to_pymc(self, values: dict):
        """The ``pm.gp.cov`` expression for ``values`` by hyperparameter name (PyMC
        tensors or numbers; fixed parameters are filled in)."""
        counter = iter(range(10**6))

        def build(node):
            if isinstance(node, Family):
                i = next(counter)
                a, b = self.ranges[i]
                vals, slot = {}, a
                for p in node.all_params():
                    name = p.name if len(self.leaves) == 1 else f"{p.name}_{i}"
                    size = self.shapes[name][0] if self.shapes[name] else 1
                    if name in values:
                        vals[p.name] = values[name]
                    else:
                        v = self.theta0[slot : slot + size]
                        vals[p.name] = v if self.shapes[name] else float(v[0])
                    slot += size
                cov = node.pymc_cov(self.input_dim, self.dims[i].tolist(), vals)
                if isinstance(node, Constant):  # PyMC's Constant takes no factor
                    return cov
                return vals["eta"] ** 2 * cov
            a, b = build(node.a), build(node.b)
            return a + b if isinstance(node, Sum) else a * b

        return build(self.kernel)


def _scaled(prior: Prior, c: float) -> Prior:
    """The prior of ``c θ`` for ``θ ~ prior`` (a scale family), ``c > 0``."""
    p, kind = dict(prior.parameters), prior.distribution
    if kind == "LogNormal":
        p["mu"] += math.log(c)
    elif kind in ("Gamma", "Exponential"):
        key = "beta" if kind == "Gamma" else "lam"
        p[key] /= c
    elif kind in ("InverseGamma", "HalfCauchy"):
        p["beta"] *= c
    elif kind == "HalfNormal":
        p["sigma"] *= c
    elif kind == "Normal":
        p["mu"] *= c
        p["sigma"] *= c
    else:
        raise ValueError(
            f"a prior on a parameter in input units must be one of LogNormal, Gamma, "
            f"InverseGamma, HalfNormal, HalfCauchy, Exponential, Normal; got {prior!r}"
        )
    return Prior(kind, **p)


def _batched(kfun) -> tuple:
    """``(matrix, diag)`` of ``kfun``, compiled once per kernel code."""
    if kfun not in _BATCHED:
        _BATCHED[kfun] = (_make_matrix(kfun), _make_diag(kfun))
    return _BATCHED[kfun]


def _make_matrix(kfun):
    @numba.njit(nogil=True)
    def matrix(X1, X2, TH):
        S, P = TH.shape
        out = np.empty((S, X1.shape[0], X2.shape[0]))
        g = np.empty(P)
        for s in range(S):
            for i in range(X1.shape[0]):
                for j in range(X2.shape[0]):
                    out[s, i, j] = kfun(X1[i], X2[j], TH[s], g)
        return out

    return matrix


def _make_diag(kfun):
    @numba.njit(nogil=True)
    def diag(X, TH):
        S, P = TH.shape
        out = np.empty((S, X.shape[0]))
        g = np.empty(P)
        for s in range(S):
            for i in range(X.shape[0]):
                out[s, i] = kfun(X[i], X[i], TH[s], g)
        return out

    return diag
