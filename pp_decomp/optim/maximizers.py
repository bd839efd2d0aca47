"""Acquisition maximisers: exhaustive over candidate sets, multi-start or DIRECT on boxes.

Searches in lockstep
--------------------
An acquisition over GP posteriors on ``n`` observations reads every draw's
``(n, n)`` factor at each call, whatever the number of inputs (up to a few
dozen), so on many observations the reading, not the inputs, is its cost
(figures: docs/performance.md). A maximiser's local searches from several
starts are independent, so :func:`in_lockstep` runs each in a thread of its
own and answers their requests together: every round, once each search still
running has asked for its next inputs, one call of ``f`` on all of them (in
the searches' order) serves them all. Each search makes the same steps as
alone, up to the floating-point rounding of a batched call (the values of one
input can differ in the last bit with the batch around it).

Example
-------
>>> import numpy as np
>>> calls = []
>>> def f(X):
...     calls.append(len(X))
...     return (X ** 2).sum(axis=1)
>>> def search(i):
...     return lambda g: [float(g(np.full((1, 2), i + k))[0]) for k in range(3)]
>>> in_lockstep(f, [search(0), search(10)])
[[0.0, 2.0, 8.0], [200.0, 242.0, 288.0]]
>>> calls  # three rounds of two searches' requests, not six calls
[2, 2, 2]
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial

import numpy as np
from scipy import optimize

from pp_decomp.space import Box, CandidateSet
from pp_decomp.validate import SeedLike, as_generator, check_choice, check_positive_int, int_seed


class _Rounds:
    """The requests of the searches still running, answered together by ``f``."""

    def __init__(self, f: Callable, n: int):
        self.f, self.cond = f, threading.Condition()
        self.requests: dict[int, np.ndarray] = {}
        self.answers: dict[int, object] = {}
        self.running = set(range(n))
        self.stopped: BaseException | None = None

    def ask(self, i: int, X) -> np.ndarray:
        """Search ``i``'s call of ``f`` on ``X (m, d)``: waits for its round."""
        with self.cond:
            if self.stopped is not None:
                raise self.stopped
            self.requests[i] = np.asarray(X, dtype=float)
            self.cond.notify_all()
            self.cond.wait_for(lambda: i in self.answers)
            answer = self.answers.pop(i)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def done(self, i: int) -> None:
        with self.cond:
            self.running.discard(i)
            self.cond.notify_all()

    def stop(self, err: BaseException) -> None:
        """End every search with ``err`` (the caller's thread was interrupted)."""
        with self.cond:
            self.stopped = err
            self.answers.update({i: err for i in self.requests})
            self.requests.clear()
            self.cond.notify_all()

    def serve(self) -> None:
        """Answer rounds until every search has ended."""
        while True:
            with self.cond:
                self.cond.wait_for(lambda: set(self.requests) == self.running)
                if not self.running:
                    return
                order = sorted(self.requests)
                batch = [self.requests.pop(i) for i in order]
            try:
                values = np.asarray(self.f(np.vstack(batch)))
                cuts = np.cumsum([len(X) for X in batch])[:-1]
                answers = np.split(values, cuts)
            except BaseException as err:  # every search waiting raises it, then the caller
                answers = [err] * len(order)
            with self.cond:
                self.answers.update(zip(order, answers, strict=True))
                self.cond.notify_all()


def in_lockstep(f: Callable, searches: list[Callable]) -> list:
    """Run ``searches``, each a function of the batch function it is to call
    (``search(g)``, ``g`` mapping ``(m, d)`` inputs to their values like ``f``),
    with their calls of ``g`` answered together by one call of ``f`` per round
    (module docstring): their results, in order. A search's exception is raised
    once all have ended (the first search's first); an exception of ``f`` is
    raised in every search waiting for that round.
    """
    if len(searches) <= 1:
        return [search(f) for search in searches]
    rounds = _Rounds(f, len(searches))
    results: list = [None] * len(searches)

    def run(i: int) -> None:
        try:
            results[i] = searches[i](lambda X: rounds.ask(i, X))
        except BaseException as err:  # re-raised by the caller's thread
            results[i] = err
        finally:
            rounds.done(i)

    threads = [
        threading.Thread(target=run, args=(i,), name=f"pp_decomp-search-{i}", daemon=True)
        for i in range(len(searches))
    ]
    for t in threads:
        t.start()
    try:
        rounds.serve()
    except BaseException as err:  # e.g. KeyboardInterrupt: no search is left waiting
        rounds.stop(err)
        raise
    finally:
        for t in threads:
            t.join()
    for r in results:
        if isinstance(r, BaseException):
            raise r
    return results


CHUNK = 2048
METHODS = ("auto", "lbfgs", "direct")
TOL = 1e-9  # relative distance (to the domain's extent) within which two inputs are one
# On a box, the half-width (relative to the extent, in every coordinate) of the
# neighbourhood an excluded input takes with it: an input 1e-8 away from a
# failed one is the same experiment, and a maximiser whose optimum sits in a
# failing region would otherwise step 1e-8 at a time through it (seen: a
# simulator failing on 1e-3-wide cells, asked hundreds of times in one cell)
BOX_RADIUS = 1e-3
# the dimension from which the searches climb on an acquisition's analytic gradient:
# below it one batched call of d + 1 inputs is as cheap (docs/design.md, "Gradients
# of the acquisitions")
GRADIENT_MIN_DIM = 8


def exclusion_radius(domain) -> float:
    """The relative half-width an excluded input takes with it on ``domain``: a
    tolerance on candidate sets (each candidate is its own experiment),
    :data:`BOX_RADIUS` on boxes."""
    return 10 * TOL if isinstance(domain, CandidateSet) else BOX_RADIUS


def within(X: np.ndarray, Y: np.ndarray, scale: np.ndarray, radius: float) -> np.ndarray:
    """Whether row ``i`` of ``X (m, d)`` is within ``radius × scale`` of row ``k``
    of ``Y (n, d)`` in every coordinate: (m, n) bool."""
    return np.all(np.abs(X[:, None, :] - Y[None, :, :]) / scale <= radius, axis=-1)


def is_excluded(
    X: np.ndarray, excluded: np.ndarray, scale: np.ndarray, radius: float = 10 * TOL
) -> np.ndarray:
    """Whether each row of ``X (m, d)`` is :func:`within` ``radius`` of an excluded
    input: (m,) bool."""
    if excluded is None or not len(excluded):
        return np.zeros(len(X), dtype=bool)
    return within(X, excluded, scale, radius).any(axis=1)


def maximize_candidates(acq: Callable, X: np.ndarray, chunk: int = CHUNK):
    """Exhaustive maximisation over candidates ``X (N, d)``, evaluated in chunks.

    Chunks bound memory: acquisitions build ``(S, chunk, n)`` arrays, so 10⁵
    candidates fit as easily as 10³.

    Returns
    -------
    x : (d,) array, value : float, index : int
    """
    chunk = check_positive_int(chunk, "chunk")
    vals = _finite(
        np.concatenate(
            [
                np.asarray(acq(X[start : start + chunk]), dtype=float)
                for start in range(0, len(X), chunk)
            ]
        )
    )
    i = _best(acq, X, vals)
    return X[i].copy(), float(vals[i]), i


def _best(acq: Callable, X: np.ndarray, vals: np.ndarray) -> int:
    """Index of the largest value; ties (a flat acquisition) are broken by the
    acquisition's own ``tie_break(X)`` when it has one, never at random."""
    i = int(np.argmax(vals))
    tie_break = getattr(acq, "tie_break", None)
    if tie_break is None or not np.isfinite(vals[i]):
        return i
    ties = np.flatnonzero(vals >= vals[i] - 1e-12 * max(1.0, abs(vals[i])))
    if len(ties) == 1:
        return i
    return int(ties[np.argmax(tie_break(X[ties]))])


class _Excluding:
    """An acquisition that is ``-inf`` at excluded inputs (keeps ``tie_break`` and,
    excluding too, ``screen``)."""

    def __init__(self, acq: Callable, exclude: np.ndarray, scale: np.ndarray, radius: float):
        self.acq, self.exclude, self.scale, self.radius = acq, exclude, scale, radius
        if hasattr(acq, "tie_break"):
            self.tie_break = acq.tie_break
        if hasattr(acq, "gradient_min_dim"):
            self.gradient_min_dim = acq.gradient_min_dim
        if getattr(acq, "screen", None) is not None:
            self.screen = _Excluding(acq.screen, exclude, scale, radius)

    def __call__(self, X):
        vals = np.array(self.acq(X), dtype=float)
        X = np.asarray(X, dtype=float)
        vals[is_excluded(X, self.exclude, self.scale, self.radius)] = -np.inf
        return vals

    def value_and_grad(self, X):
        if not hasattr(self.acq, "value_and_grad"):
            raise NotImplementedError(f"{type(self.acq).__name__} has no value_and_grad")
        vals, grads = self.acq.value_and_grad(X)
        vals, grads = np.array(vals, dtype=float), np.array(grads, dtype=float)
        out = is_excluded(np.asarray(X, dtype=float), self.exclude, self.scale, self.radius)
        vals[out], grads[out] = -np.inf, 0.0
        return vals, grads


def maximize_box(
    acq: Callable,
    box: Box,
    seed: SeedLike = None,
    method: str = "auto",
    n_raw: int = 1024,
    n_starts: int = 8,
    maxiter: int = 200,
    ftol: float | None = None,
):
    """Maximise ``acq`` over a box with optional linear constraints ``A x <= b``.

    ``"lbfgs"``: score ``n_raw`` scrambled-Sobol feasible points, start local
    searches from the best ``n_starts`` (L-BFGS-B without constraints, SLSQP with
    them, run in lockstep so that one call of ``acq`` serves every search's step,
    :func:`~pp_decomp.optim.maximizers.in_lockstep`) and keep the best feasible
    result. From :data:`GRADIENT_MIN_DIM` inputs on (``acq.gradient_min_dim`` where
    it has one), the searches climb on ``acq.value_and_grad`` where it answers
    (:func:`has_gradient`); otherwise on forward differences from one batched call
    (:func:`value_and_fd_gradient`).
    ``"direct"``: scipy's DIRECT on the box (constraints by an infeasibility
    penalty), polished by one local search. ``"auto"`` is ``"lbfgs"``.

    An acquisition with a ``screen``, a cheaper approximation of itself
    (:func:`~pp_decomp.acquisition.surrogate.with_screen`), is maximised on the
    screen, raw points and local searches alike; the searches' ends and the
    starts are then scored by ``acq`` itself and the best polished by one local
    search of ``acq``. The value returned is always ``acq``'s. ``ftol``: the
    searches' stopping tolerance (default scipy's: SLSQP 1e-6, L-BFGS-B 2.2e-9).

    Returns
    -------
    x : (d,) array, value : float
    """
    check_choice(method, "method", METHODS)
    rng = as_generator(seed)
    screen = getattr(acq, "screen", None) or acq
    raw = box.sample(n_raw, seed=int_seed(rng))
    vals = _finite(screen(raw))
    i = _best(screen, raw, vals)
    best_x, best_v = raw[i].copy(), float(vals[i])
    order = np.argsort(-vals)[:n_starts]
    starts = raw[np.r_[i, order[order != i]][:n_starts]]
    if method == "direct":
        x, v = _direct(screen, box, best_v)
        if v > best_v:
            best_x, best_v = x, v
        starts = best_x[None, :]  # DIRECT locates the basin; a local search polishes it
    ends = [best_x]
    from_dim = getattr(screen, "gradient_min_dim", GRADIENT_MIN_DIM)
    grad = box.dim >= from_dim and has_gradient(screen, starts[:1])
    for x, v in _local_searches(screen, box, starts, maxiter, grad, ftol):
        if v > -np.inf:  # feasible
            ends.append(x)
        if v > best_v:
            best_x, best_v = x, v
    if screen is acq:
        return best_x, best_v
    return _rescored(acq, box, np.vstack([ends, starts]), maxiter, grad, ftol)


def _rescored(acq, box: Box, candidates, maxiter: int, grad: bool, ftol: float | None):
    """The best of ``candidates`` (found on ``acq``'s screen) by ``acq`` itself,
    polished by one local search of ``acq``: ``(x, value)``."""
    full = _finite(acq(candidates))
    j = int(np.argmax(full))
    best_x, best_v = candidates[j].copy(), float(full[j])
    x, v = _local_search(_packed(acq) if grad else acq, box, best_x, maxiter, grad, ftol)
    return (x, v) if v > best_v else (best_x, best_v)


def _finite(values) -> np.ndarray:
    """Acquisition values with NaN and infinities as ``-inf`` (never chosen)."""
    values = np.asarray(values, dtype=float)
    return np.where(np.isfinite(values), values, -np.inf)


def _direct(acq: Callable, box: Box, worst: float) -> tuple[np.ndarray, float]:
    """scipy's DIRECT on the unit cube, infeasible points penalised below ``worst``."""
    lo, scale = box.lower, box.upper - box.lower

    def penalised(u):
        x = lo + u * scale
        if box.A is not None:
            viol = np.maximum(box.A @ x - box.b, 0.0).sum()
            if viol > 0:
                return abs(worst) + 1e3 * (1.0 + viol)
        return -float(acq(x[None, :])[0])

    res = optimize.direct(penalised, [(0.0, 1.0)] * box.dim, maxfun=2000 * box.dim)
    x = lo + res.x * scale
    return (x, float(-res.fun)) if box.contains(x[None])[0] else (x, -np.inf)


FD_STEP = float(np.sqrt(np.finfo(float).eps))


def value_and_fd_gradient(f: Callable, u: np.ndarray) -> tuple[float, np.ndarray]:
    """``f(u)`` and its forward-difference gradient from one call of ``f`` on the
    ``d + 1`` points ``u, u + h_i e_i`` (``h_i = sqrt(eps) max(1, |u_i|)``, taken
    backwards where a forward step would leave the unit cube).

    ``f`` maps (m, d) points to (m,) values. An acquisition over many draws costs
    about as much for ``d + 1`` points as for one, so this is about ``d + 1``
    times cheaper than differences evaluated point by point (scipy's own).
    """
    h = FD_STEP * np.maximum(1.0, np.abs(u))
    h = np.where(u + h > 1.0, -h, h)
    values = np.asarray(f(np.vstack([u, u + np.diag(h)])), dtype=float)
    with np.errstate(invalid="ignore"):  # inf - inf at an excluded input: no slope
        grad = (values[1:] - values[0]) / h
    return float(values[0]), np.where(np.isfinite(grad), grad, 0.0)


def has_gradient(acq: Callable, X: np.ndarray) -> bool:
    """Whether ``acq.value_and_grad`` answers at ``X (m, d)``: an acquisition may have the
    method and still raise ``NotImplementedError`` where one of its models has no
    input gradient (then the maximiser takes :func:`value_and_fd_gradient`)."""
    try:
        acq.value_and_grad(X)
    except (AttributeError, NotImplementedError):
        return False
    return True


def _packed(acq: Callable) -> Callable:
    """``X (m, d) -> (m, 1 + d)``: ``acq``'s values and gradients side by side, so that
    one batched call (:func:`~pp_decomp.optim.maximizers.in_lockstep`) serves both."""

    def packed(X):
        vals, grads = acq.value_and_grad(X)
        return np.column_stack([vals, grads])

    return packed


def _local_searches(
    acq: Callable, box: Box, starts, maxiter: int, grad: bool = False, ftol: float | None = None
) -> list:
    """:func:`_local_search` from each of ``starts``, L-BFGS-B's and SLSQP's alike,
    :func:`~pp_decomp.optim.maximizers.in_lockstep` (one call of ``acq`` a round serves them
    all; SLSQP is thread-safe from scipy 1.16). With ``grad``, on ``acq.value_and_grad``."""
    f = _packed(acq) if grad else acq
    return in_lockstep(
        f,
        [
            partial(_local_search, box=box, x0=x0, maxiter=maxiter, grad=grad, ftol=ftol)
            for x0 in starts
        ],
    )


def _local_search(
    acq: Callable, box: Box, x0, maxiter: int, grad: bool = False, ftol: float | None = None
) -> tuple[np.ndarray, float]:
    """L-BFGS-B (SLSQP under linear constraints) from ``x0`` in the unit cube, where
    steps are well conditioned; ``-inf`` when the result is not feasible. With
    ``grad``, ``acq`` is :func:`_packed` (values and analytic gradients), else
    gradients are :func:`value_and_fd_gradient`."""
    lo, scale = box.lower, box.upper - box.lower

    def neg(U):
        return -np.asarray(acq(lo + U * scale), dtype=float)

    def fun(u):
        if not grad:
            return value_and_fd_gradient(neg, u)
        out = np.asarray(acq((lo + u * scale)[None, :]), dtype=float)[0]
        if not np.isfinite(out[0]):  # an excluded input: no slope
            return np.inf, np.zeros_like(u)
        return -out[0], -np.where(np.isfinite(out[1:]), out[1:], 0.0) * scale

    u0, bounds = (x0 - lo) / scale, [(0.0, 1.0)] * box.dim
    options = {"maxiter": maxiter} | ({} if ftol is None else {"ftol": ftol})
    if box.A is not None:
        A_u, b_u = box.A * scale, box.b - box.A @ lo
        cons = [{"type": "ineq", "fun": lambda u: b_u - A_u @ u, "jac": lambda u: -A_u}]
        res = optimize.minimize(
            fun,
            u0,
            jac=True,
            method="SLSQP",
            bounds=bounds,
            constraints=cons,
            options=options,
        )
    else:
        res = optimize.minimize(
            fun, u0, jac=True, method="L-BFGS-B", bounds=bounds, options=options
        )
    x = lo + np.clip(res.x, 0.0, 1.0) * scale
    if np.isfinite(res.fun) and box.contains(x[None])[0]:
        return x, float(-res.fun)
    return x, -np.inf


def project_feasible(box: Box, x: np.ndarray) -> np.ndarray:
    """The feasible point of ``box`` closest to ``x`` (``x`` itself when feasible).

    Optimisers that enforce linear constraints only to a tolerance (BoTorch's
    ``optimize_acqf``) may return points a hair outside; this is a small
    least-squares projection (SLSQP) onto ``lower <= x <= upper``, ``A x <= b``.
    """
    x = np.clip(np.asarray(x, dtype=float), box.lower, box.upper)
    if box.contains(x[None], tol=0.0)[0]:
        return x
    scale = box.upper - box.lower
    A_u, b_u = box.A * scale, box.b - box.A @ box.lower
    u0 = (x - box.lower) / scale
    res = optimize.minimize(
        lambda u: float(np.sum((u - u0) ** 2)),
        u0,
        jac=lambda u: 2 * (u - u0),
        method="SLSQP",
        bounds=[(0.0, 1.0)] * box.dim,
        constraints=[
            {"type": "ineq", "fun": lambda u: b_u - A_u @ u - 1e-12, "jac": lambda u: -A_u}
        ],
    )
    return _pull_inside(box, box.lower + np.clip(res.x, 0.0, 1.0) * scale)


def _pull_inside(box: Box, x: np.ndarray) -> np.ndarray:
    """``x`` moved toward ``box.lower`` until ``A x <= b`` holds exactly, when SLSQP
    left it a hair outside (seen: 1.8e-9 over a budget) and ``lower`` is feasible."""
    excess = box.A @ x - box.b
    if np.all(excess <= 0) or not box.contains(box.lower[None], tol=0.0)[0]:
        return x
    step = box.A @ (x - box.lower)
    room = box.b - box.A @ box.lower
    t = np.min(np.where(excess > 0, room / np.where(step > 0, step, np.inf), 1.0))
    return box.lower + np.nextafter(t, 0.0) * (x - box.lower)


def maximize(acq: Callable, domain, seed: SeedLike = None, method: str = "auto", exclude=None):
    """Maximise ``acq`` over a :class:`CandidateSet` (exhaustive) or a :class:`Box`.

    ``exclude (k, d)``: inputs never to return (failed or pending evaluations):
    the acquisition is ``-inf`` at them (candidates) or within :data:`BOX_RADIUS`
    of them (box).
    """
    if exclude is not None and len(exclude):
        acq = _Excluding(acq, exclude, domain.widths, exclusion_radius(domain))

    if isinstance(domain, CandidateSet):
        x, v, _ = maximize_candidates(acq, domain.X)
        return x, v
    return maximize_box(acq, domain, seed=seed, method=method)
