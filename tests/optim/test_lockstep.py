"""pp_decomp.optim.maximizers: local searches whose evaluations are batched."""

import threading

import numpy as np
import pytest

from pp_decomp.optim.maximizers import _local_search, _local_searches, in_lockstep
from pp_decomp.space import Box


def _rows(U):
    """A function computed row by row: its values do not depend on the batch."""
    return np.array([np.sin(5 * u[0]) * np.cos(3 * u[1]) - (u[2] - 0.4) ** 2 for u in U])


def test_searches_in_lockstep_make_the_steps_they_make_alone_in_fewer_calls():
    box = Box(np.zeros(3), np.ones(3))
    starts = np.random.default_rng(0).uniform(size=(6, 3))
    calls = []

    def f(U):
        calls.append(len(U))
        return _rows(U)

    alone = [_local_search(f, box, x0, 200) for x0 in starts]
    n_alone, calls[:] = len(calls), []
    together = _local_searches(f, box, starts, 200)
    for (x, v), (y, w) in zip(alone, together, strict=True):
        np.testing.assert_array_equal(x, y)
        assert v == w
    assert len(calls) < n_alone / 2 and max(calls) == 6 * 4  # d + 1 inputs per search


def test_an_error_of_the_function_or_of_a_search_reaches_the_caller_and_no_thread_is_left():
    before = threading.active_count()

    def broken(U):
        raise FloatingPointError("acquisition failed")

    with pytest.raises(FloatingPointError, match="acquisition failed"):
        in_lockstep(broken, [lambda g: g(np.zeros((1, 2))) for _ in range(3)])

    def search(i):
        def run(g):
            g(np.zeros((1, 2)))
            if i == 1:
                raise ValueError("search 1")
            return [float(g(np.ones((1, 2)))[0]) for _ in range(3)]

        return run

    with pytest.raises(ValueError, match="search 1"):
        in_lockstep(lambda U: U.sum(1), [search(i) for i in range(3)])
    assert in_lockstep(lambda U: U.sum(1), [search(0), search(2)]) == [[2.0] * 3] * 2
    assert threading.active_count() == before


def test_an_interruption_of_the_serving_thread_ends_every_search(monkeypatch):
    import pp_decomp.optim.maximizers as lockstep

    def interrupted(self):
        with self.cond:
            self.cond.wait_for(lambda: set(self.requests) == self.running)
        raise KeyboardInterrupt

    monkeypatch.setattr(lockstep._Rounds, "serve", interrupted)
    with pytest.raises(KeyboardInterrupt):
        in_lockstep(lambda U: U.sum(1), [lambda g: g(np.zeros((1, 2))) for _ in range(3)])
    assert not [t for t in threading.enumerate() if t.name.startswith("pp_decomp-search")]


@pytest.mark.parametrize("constrained", [False, True])
def test_a_looser_tolerance_stops_the_searches_sooner_near_the_same_optimum(constrained):
    """``maximize_box(ftol=...)``, L-BFGS-B's and SLSQP's alike (the default: scipy's)."""
    from pp_decomp.optim.maximizers import maximize_box

    A = np.ones((1, 3)) if constrained else None
    box = Box(np.zeros(3), np.ones(3), A=A, b=[2.5] if constrained else None)
    calls = []

    def f(U):
        calls.append(len(U))
        return _rows(U)

    x, v = maximize_box(f, box, seed=0, n_raw=64)
    n_default, calls[:] = len(calls), []
    y, w = maximize_box(f, box, seed=0, n_raw=64, ftol=1e-2)
    assert len(calls) < n_default and w == pytest.approx(v, abs=0.05)
    y, w = maximize_box(f, box, seed=0, n_raw=64, ftol=None)
    np.testing.assert_array_equal(x, y)  # None keeps the default search
