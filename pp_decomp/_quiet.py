"""Warnings: third-party ones the user cannot act on are silenced where pp_decomp
triggers them, and pp_decomp's own point at the user's line.

* PyTensor warns that it "could not link to a BLAS installation" the first time
  it compiles C code in a pip environment (no system BLAS). Its C code then
  calls numpy's own OpenBLAS through the NumPy C-API, so for the small matrices
  of a MAP objective nothing is lost that a user could recover by installing
  anything (measured in docs/performance.md).
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings

_THIRD_PARTY = ((UserWarning, r"PyTensor could not link to a BLAS installation"),)
_PACKAGE = os.path.dirname(os.path.abspath(__file__))


@contextlib.contextmanager
def quiet_third_party():
    """Silence the third-party warnings listed above inside the ``with`` block."""
    with warnings.catch_warnings():
        for category, message in _THIRD_PARTY:
            warnings.filterwarnings("ignore", message=message, category=category)
        yield


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn`` attributed to the first caller outside pp_decomp (the user's line)."""
    frame, level = sys._getframe(1), 2  # stacklevel 2 is warn()'s caller
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
