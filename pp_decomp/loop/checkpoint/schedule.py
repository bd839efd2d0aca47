"""When a run writes its checkpoint: after every ask and tell, or at most every few seconds.

Each write rebuilds and rewrites the whole run (about a tenth of a second at 100
steps), which is nothing beside an evaluation that takes minutes and most of
the time of a benchmark on a cheap function. Inside ``Optimizer.run(...,
save_every=s)`` the checkpoint is written at most every ``s`` seconds and once
more when ``run`` returns or raises, so a killed process loses at most the last
``s`` seconds of steps; resumed, the run redoes them with the same choices (its
random state is part of the checkpoint). Asks and tells made by hand are
always written.

>>> clock = iter([0.0, 1.0, 2.0, 6.0, 7.0]).__next__
>>> schedule = SaveSchedule(clock)
>>> with schedule.every(5.0, flush=lambda: print("final write")):
...     print([schedule.due() for _ in range(4)])
[False, False, True, False]
final write
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from pp_decomp.validate import check_nonnegative


class SaveSchedule:
    """Whether a checkpoint write is due: always, or (inside :meth:`every`) once
    ``seconds`` have passed since the last one; ``clock`` gives the time in seconds."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock, self.seconds, self.last, self.skipped = clock, 0.0, 0.0, False

    def due(self) -> bool:
        """Whether to write now; a write not due is remembered for the final one."""
        if self.seconds > 0:
            now = self.clock()
            if now - self.last < self.seconds:
                self.skipped = True
                return False
            self.last = now
        self.skipped = False
        return True

    @contextmanager
    def every(self, seconds: float, flush: Callable[[], None]) -> Iterator[None]:
        """Writes at most every ``seconds`` inside the block (0: every one), then
        ``flush()`` on leaving it if a write was skipped since the last."""
        seconds = check_nonnegative(seconds, "save_every")
        self.seconds, self.last = seconds, self.clock() if seconds > 0 else 0.0
        try:
            yield
        finally:
            self.seconds = 0.0
            if self.skipped:
                flush()
