"""Input domains: boxes with optional linear constraints, and finite candidate sets."""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog
from scipy.stats import qmc

from pp_decomp.validate import (
    SeedLike,
    as_generator,
    check_finite,
    check_positive_int,
    check_X,
    int_seed,
)


class Box:
    """The box ``lower <= x <= upper``, optionally cut by ``A x <= b``.

    Parameters
    ----------
    lower, upper : (d,) arrays
        Or ``Box(bounds)`` with one ``(d, 2)`` array of ``(lower, upper)`` rows.
    A : (k, d) array, optional
        Linear inequality constraints ``A x <= b`` (e.g. a budget ``Σ x_i <= B``).
    b : (k,) array, optional
    """

    def __init__(self, lower, upper=None, A=None, b=None):
        if upper is None:
            bounds = np.asarray(lower, dtype=float)
            if bounds.ndim != 2 or bounds.shape[1] != 2:
                raise ValueError(
                    "Box(bounds) needs a (d, 2) array of (lower, upper) rows, or give "
                    f"Box(lower, upper); got bounds of shape {bounds.shape}"
                )
            lower, upper = bounds[:, 0], bounds[:, 1]
        lo = check_finite(np.atleast_1d(np.asarray(lower, dtype=float)), "lower")
        hi = check_finite(np.atleast_1d(np.asarray(upper, dtype=float)), "upper")
        if lo.ndim != 1 or lo.shape != hi.shape:
            raise ValueError(f"lower and upper must be (d,) arrays; got {lo.shape} and {hi.shape}")
        if lo.size == 0:
            raise ValueError("a Box needs at least one dimension; got empty lower and upper")
        if np.any(hi <= lo):
            raise ValueError(f"upper must exceed lower in every dim; got lower={lo}, upper={hi}")
        self.lower, self.upper = lo, hi
        if (A is None) != (b is None):
            raise ValueError("A and b must be given together")
        if A is not None:
            A = check_finite(np.atleast_2d(np.asarray(A, dtype=float)), "A")
            b = check_finite(np.atleast_1d(np.asarray(b, dtype=float)), "b")
            if A.shape != (b.shape[0], self.dim):
                raise ValueError(
                    f"A must have shape (k, {self.dim}) with b of shape (k,); "
                    f"got A {A.shape}, b {b.shape}"
                )
            res = linprog(np.zeros(self.dim), A_ub=A, b_ub=b, bounds=list(zip(lo, hi, strict=True)))
            if res.status != 0:
                raise ValueError(f"constraints A x <= b are infeasible within the box: b={b}")
        self.A, self.b = A, b

    @property
    def dim(self) -> int:
        return self.lower.shape[0]

    @property
    def bounds(self) -> np.ndarray:
        """``(2, d)`` array of lower and upper bounds."""
        return np.stack([self.lower, self.upper])

    @property
    def widths(self) -> np.ndarray:
        """``(d,)`` extent ``upper - lower`` in each coordinate."""
        return self.upper - self.lower

    def contains(self, X, tol: float = 1e-9) -> np.ndarray:
        """Whether each row of ``X (m, d)`` is feasible: (m,) bool."""
        X = check_X(X, "X", input_dim=self.dim)
        ok = np.all((X >= self.lower - tol) & (X <= self.upper + tol), axis=1)
        if self.A is not None:
            ok &= np.all(X @ self.A.T <= self.b + tol, axis=1)
        return ok

    def sample(self, n: int, seed: SeedLike = None, sobol: bool = True) -> np.ndarray:
        """``n`` feasible points: scrambled Sobol (or uniform), rejecting infeasible ones."""
        n = check_positive_int(n, "n")
        rng = as_generator(seed)
        out, have = [], 0
        for _ in range(200):
            m = max(2 * (n - have), 64)
            if sobol:
                sob = qmc.Sobol(self.dim, scramble=True, seed=int_seed(rng))
                U = sob.random_base2(int(np.ceil(np.log2(m))))
            else:
                U = rng.uniform(size=(m, self.dim))
            X = self.lower + U * (self.upper - self.lower)
            X = X[self.contains(X)]
            out.append(X)
            have += len(X)
            if have >= n:
                return np.concatenate(out)[:n]
        raise RuntimeError("could not sample feasible points: the feasible region is tiny")

    def __repr__(self) -> str:
        cons = "" if self.A is None else f", {self.A.shape[0]} linear constraint(s)"
        return f"Box(d={self.dim}{cons})"


class CandidateSet:
    """A finite set of candidate inputs ``X (N, d)``, e.g. a grid or weather stations."""

    def __init__(self, X, labels=None):
        self.X = check_X(X, "X")
        _, first, counts = np.unique(self.X, axis=0, return_index=True, return_counts=True)
        if np.any(counts > 1):
            i = int(first[np.argmax(counts > 1)])
            raise ValueError(
                f"X must hold distinct candidates; row {i} ({self.X[i].tolist()}) appears "
                f"{int(counts.max())} times"
            )
        self.X.setflags(write=False)
        if labels is not None and len(labels) != len(self.X):
            raise ValueError(f"labels has {len(labels)} entries but X has {len(self.X)} rows")
        self.labels = None if labels is None else np.asarray(labels)

    @property
    def dim(self) -> int:
        return self.X.shape[1]

    @property
    def size(self) -> int:
        return self.X.shape[0]

    @property
    def bounds(self) -> np.ndarray:
        lo, hi = self.X.min(0), self.X.max(0)
        hi = np.where(hi > lo, hi, lo + 1.0)
        return np.stack([lo, hi])

    @property
    def widths(self) -> np.ndarray:
        """``(d,)`` extent of the candidates in each coordinate (1 where they all agree)."""
        b = self.bounds
        return b[1] - b[0]

    def contains(self, X, tol: float = 1e-9) -> np.ndarray:
        """Whether each row of ``X`` is a candidate (to within ``tol``), ``(n,)`` bool."""
        X = check_X(X, "X", input_dim=self.dim)
        d = np.abs(X[:, None, :] - self.X[None, :, :]).max(-1)
        return d.min(1) <= tol

    def index_of(self, x) -> int:
        """Row index of the candidate equal to ``x``."""
        x = check_X(x, "x", input_dim=self.dim)[0]
        d = np.abs(self.X - x).max(1)
        i = int(np.argmin(d))
        if d[i] > 1e-9:
            raise ValueError(f"x={x} is not one of the candidates")
        return i

    def sample(self, n: int, seed: SeedLike = None, keep=None) -> np.ndarray:
        """``n`` distinct candidates drawn uniformly, ``(min(n, m), d)``, among the ``m``
        that ``keep`` marks (a ``(size,)`` bool; default all), in random order.

        Example
        -------
        >>> s = CandidateSet([[0.0], [1.0], [2.0]])
        >>> s.sample(1, seed=0, keep=[False, True, False]).tolist()
        [[1.0]]
        """
        n = check_positive_int(n, "n")
        rng = as_generator(seed)
        X = self.X if keep is None else self.X[np.asarray(keep, dtype=bool)]
        if not len(X):
            raise ValueError("keep marks no candidate to draw from")
        idx = rng.choice(len(X), size=min(n, len(X)), replace=False)
        return X[idx]

    def __repr__(self) -> str:
        return f"CandidateSet(N={self.size}, d={self.dim})"


Domain = Box | CandidateSet


def domain_points(
    domain: Domain, most: int, seed: SeedLike = None, box_points: int = 1024
) -> np.ndarray:
    """Points standing for all of ``domain`` where a function is evaluated at once,
    ``(m, d)``: a candidate set's candidates, all of them in order (drawing nothing)
    when there are at most ``most``, else ``most`` drawn by :meth:`CandidateSet.sample`;
    a box's ``box_points`` (default 1024) from :meth:`Box.sample`.

    Example
    -------
    >>> domain_points(CandidateSet([[0.0], [1.0]]), most=5).tolist()
    [[0.0], [1.0]]
    >>> domain_points(Box([0.0], [1.0]), most=5, seed=0).shape
    (1024, 1)
    """
    if isinstance(domain, CandidateSet) and domain.size <= most:
        return domain.X
    if isinstance(domain, CandidateSet):
        return domain.sample(most, seed=seed)
    return domain.sample(box_points, seed=seed)
