"""The user's own code named on the command line as ``package.module:attr``.

A module in the folder the command runs in is found without ``PYTHONPATH``, as
``python -m`` would find it: :func:`cwd_on_path` puts that folder on ``sys.path``.

Example
-------
>>> load_object("json:dumps", "--components").__name__
'dumps'
>>> load_object("json", "--components")
Traceback (most recent call last):
ValueError: --components must be 'package.module:attr'; got 'json'
"""

from __future__ import annotations

import os
import sys
from importlib import import_module


def cwd_on_path() -> bool:
    """Put the current working folder first on ``sys.path`` (once); returns True."""
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    return True


def load_object(spec: str, flag: str):
    """The object ``attr`` of module ``package.module`` named by ``spec``
    (``"package.module:attr"``), looked up with the working folder on the path;
    a ValueError naming ``flag`` and ``spec`` when it cannot be found."""
    module, _, attr = str(spec).partition(":")
    if not module or not attr.isidentifier():
        raise ValueError(f"{flag} must be 'package.module:attr'; got {spec!r}")
    cwd_on_path()
    try:
        return getattr(import_module(module), attr)
    except (ImportError, AttributeError) as err:
        raise ValueError(
            f"{flag} {spec!r}: cannot import {attr!r} from {module!r} ({err})"
        ) from err


def load_components(spec: str) -> dict | list:
    """``--components package.module:attr``: a dict (by component name) or list of
    component models, as ``Optimizer.resume(path, problem, components=...)`` takes,
    or a function of no arguments returning one."""
    models = load_object(spec, "--components")
    if callable(models) and not isinstance(models, dict | list | tuple):
        models = models()
    if not isinstance(models, dict | list | tuple):
        raise TypeError(
            f"--components {spec!r} must name a dict or list of component models; "
            f"got {type(models).__name__}"
        )
    return models
