"""Several searches whose evaluations are batched: each call of ``f`` serves them all.

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

import numpy as np


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
