"""Whether the workers of an embedded Dask cluster would run the user's script again.

A worker process started by ``spawn`` or ``forkserver`` (multiprocessing's ways,
``spawn`` Dask's default) imports the script its parent was started from, as
``__mp_main__``: code at the script's top level runs again in every worker, and
an optimiser run there starts one run per worker. The usual
``if __name__ == "__main__":`` guard keeps it to the parent. The rules for what a
child imports are those of CPython's ``multiprocessing.spawn``: a script or a
module run by ``python -m`` is, a package's ``__main__`` is not. Only the
standard library is imported here.
"""

from __future__ import annotations

import ast
import os
import sys


def check_guarded_main(workers, method: str = "spawn") -> None:
    """Refuses an optimiser run about to start ``workers`` worker processes by
    ``method`` from a line of the script's top level outside an
    ``if __name__ == "__main__":`` guard, naming the script and the line, before any
    worker starts. Notebooks, interactive sessions, ``python -c``, frozen apps, a
    package's ``__main__`` and ``method="fork"`` (nothing imported again) pass, as
    does a run started elsewhere than from the script's top level."""
    main = sys.modules.get("__main__")
    name = getattr(getattr(main, "__spec__", None), "name", None) or ""
    path = getattr(main, "__file__", None)
    if method == "fork" or name == "__main__" or name.endswith(".__main__"):
        return
    if getattr(sys, "frozen", False) or not path or not os.path.isfile(path):
        return
    line = _top_level_line(main)
    if line is None:
        return
    try:
        with open(path, "rb") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return
    if guarded(tree, line):
        return
    raise RuntimeError(
        f"{path}, line {line}, runs the optimiser outside an "
        '`if __name__ == "__main__":` guard, and workers='
        f"{workers} starts worker processes that each import the script as they start, "
        "so every worker would run it again: put that code under the guard"
    )


def guarded(tree: ast.Module, line: int) -> bool:
    """Whether ``line`` of the module ``tree`` is in the body of a top-level
    ``if __name__ == "__main__":`` (either side of ``==``, or one of an ``and``'s)."""
    for node in tree.body:
        if isinstance(node, ast.If) and any(_is_main_test(n) for n in ast.walk(node.test)):
            if node.body[0].lineno <= line <= node.body[-1].end_lineno:
                return True
    return False


def _is_main_test(node) -> bool:
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
        return False
    if not isinstance(node.ops[0], ast.Eq):
        return False
    sides = [node.left, *node.comparators]
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides) and any(
        isinstance(s, ast.Constant) and s.value == "__main__" for s in sides
    )


def _top_level_line(main) -> int | None:
    """The line of the script's top level being run now (its ``<module>`` frame in
    this thread's stack), or None where the stack holds none."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "<module>" and frame.f_globals is vars(main):
            return frame.f_lineno
        frame = frame.f_back
    return None
