"""A run's file in pictures and a short ``report.md``: :func:`report` (``ppd.report``).

One code path serves the notebook and the command line: ``ppd.report(path, ...)``,
``pp-decomp report RUN.nc`` and ``Optimizer.report(out)`` all end in
:func:`pp_decomp.apps.report_pictures.report_of` (the pictures and ``report.md``).
:func:`report` opens the file read-only with the run's problem (:func:`open_run`):

* ``problem``: the :class:`~pp_decomp.Problem` the run was made on (one made in
  Python, given again), or a name :func:`~pp_decomp.models.get_problem` builds
  (a shipped problem or ``package.module:factory``) with the file's instance seed;
  by default the shipped problem the file names;
* ``components``: the run's component models where they are the user's own code
  (``ComponentGP.from_pymc``), as ``Optimizer.resume(path, problem, components=...)``
  takes them.

With no problem given on a run whose file names no shipped problem (one made in
Python), the report is what the file alone holds (:func:`report_from_file`): the
observations, the choices, the fit diagnostics and the regret or the best
objective so far; ``report.md`` names the posterior pictures skipped.

The module is not called ``report``: ``pp_decomp.report`` is this function, which a
submodule of that name would shadow once imported.

Example
-------
>>> import pp_decomp as ppd, tempfile
>>> from pp_decomp.models import get_problem
>>> folder = tempfile.mkdtemp()
>>> with ppd.Optimizer(get_problem("synthetic", seed=1), seed=0,
...                    checkpoint=f"{folder}/run.nc") as opt:
...     _ = opt.run(8)
>>> ppd.report(f"{folder}/run.nc").name
'report.md'
"""

from __future__ import annotations

import json
from pathlib import Path

from pp_decomp.apps.report_pictures import (
    file_notes,
    file_pictures,
    file_title,
    report_of,
    run_pictures,
    title,
    write_report,
)
from pp_decomp.loop import Optimizer
from pp_decomp.loop.checkpoint import read, stored_problem
from pp_decomp.models import PROBLEMS, get_problem
from pp_decomp.problem import Problem

__all__ = [
    "open_run",
    "report",
    "report_from_file",
    "report_of",
    "run_pictures",
    "title",
    "write_report",
]


def report(
    path,
    problem: Problem | str | None = None,
    components: dict | list | None = None,
    out=None,
) -> Path:
    """Write the pictures of the run checkpointed at ``path`` and ``report.md`` into
    folder ``out`` (default ``RUN-report`` beside the file); returns report.md's path.
    The file is read, not written.

    ``problem``: the run's problem, or the name of a shipped one or
    ``package.module:factory`` (built with the file's instance seed); default the
    shipped problem the file names, and for a run made in Python the report of the
    file alone (:func:`report_from_file`). ``components``: the run's own component
    models (a dict by name or a list), needed for ``from_pymc`` ones.

    Example: ``ppd.report("run.nc", problem, out="run-report")``.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"path {str(path)!r} is not a file (a run's checkpoint)")
    out = Path(out) if out is not None else path.with_name(path.stem + "-report")
    results = read(path)[0]
    if not results.sizes.get("iteration", 0):
        raise ValueError(f"path {str(path)!r} holds no evaluation yet: nothing to report")
    if problem is None and components is None and not names_shipped_problem(results):
        return report_from_file(path, out)
    opt = open_run(path, problem, components)
    return report_of(opt.report_view(), out, [f"Run file: {path}"])


def report_from_file(path, out) -> Path:
    """``report.md`` and the pictures the run's file at ``path`` gives without its
    problem (:func:`pp_decomp.apps.report_pictures.file_pictures`) in folder ``out``.

    Example: ``report_from_file("run.nc", "run-report")``.
    """
    results, _ = read(path)
    pictures = file_pictures(results, out)
    notes = [f"Run file: {path}", "", *file_notes(results)]
    return write_report(out, file_title(results), pictures, notes)


def names_shipped_problem(results) -> bool:
    """Whether a run's results name a shipped problem with its instance seed (so that
    :func:`run_problem` can rebuild it), not one made in Python."""
    stored = json.loads(results.attrs["settings"])
    instance = (stored.get("problem_fingerprint") or {}).get("instance")
    return stored_problem(stored) in PROBLEMS and instance is not None


def open_run(path, problem: Problem | str | None = None, components=None) -> Optimizer:
    """A read-only optimiser holding the run checkpointed at ``path`` (nothing is
    written there), with its models fitted on every observation and its next input
    pending. ``problem`` and ``components``: as :func:`report` takes them."""
    problem = run_problem(read(path)[0], problem)
    expected = {} if components is None else {"components": components}
    opt = Optimizer.resume(path, problem, read_only=True, **expected)
    # the next input to draw: the pending ones as they are, else a new choice (asking
    # for more beside pending ones needs a strategy that batches)
    if not len(opt.pending):
        opt.ask()
    return opt


def run_problem(results, problem: Problem | str | None) -> Problem:
    """The problem a stored run is opened on: ``problem`` itself, or built by
    :func:`~pp_decomp.models.get_problem` from a name (default the file's) with the
    file's instance seed (0 where it records none)."""
    if isinstance(problem, Problem):
        return problem
    if problem is not None and not isinstance(problem, str):
        raise TypeError(
            "problem must be a pp_decomp.Problem, a problem's name or "
            f"'package.module:factory'; got {type(problem).__name__} {problem!r}"
        )
    stored = json.loads(results.attrs["settings"])
    instance = (stored.get("problem_fingerprint") or {}).get("instance")
    name = problem or stored_problem(stored)
    if problem is None and name not in PROBLEMS:
        raise ValueError(
            f"problem: the run is of problem {name!r}, made in Python (not a shipped one); "
            "pass problem= (pp-decomp report --problem package.module:factory)"
        )
    return get_problem(name, seed=instance or 0)
