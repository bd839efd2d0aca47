"""Telling the user what a long phase is doing.

* One-off phases (compiling a model: seconds to a minute, once per process)
  are logged on the ``pp_decomp`` logger, which prints INFO messages to stderr
  unless the application configured logging itself (as PyMC does).
* Per-step phases (refitting component ``f3`` by NUTS, learning a structure)
  show in the postfix of the progress bar of ``Optimizer.run(progress=True)``
  and ``pp-decomp run``.
"""

from __future__ import annotations

import contextlib
import logging
import time

log = logging.getLogger("pp_decomp")
if not logging.getLogger().handlers and not log.handlers:
    _handler = logging.StreamHandler()
    _handler.setFormatter(logging.Formatter("pp_decomp: %(message)s"))
    log.addHandler(_handler)
    log.setLevel(logging.INFO)
    log.propagate = False

_bar = None  # the active progress bar, if any


@contextlib.contextmanager
def one_off(what: str):
    """Log ``what`` (e.g. compiling a model) and how long it took."""
    log.info("%s ...", what)
    start = time.perf_counter()
    yield
    log.info("%s: done in %.1f s", what, time.perf_counter() - start)


@contextlib.contextmanager
def bar_context(bar):
    """Make ``bar`` the bar that :func:`status` writes to."""
    global _bar
    previous, _bar = _bar, bar
    try:
        yield bar
    finally:
        _bar = previous


def status(text: str) -> None:
    """Show ``text`` as the active progress bar's postfix (nothing without a bar)."""
    if _bar is not None:
        _bar.set_postfix_str(text, refresh=True)
