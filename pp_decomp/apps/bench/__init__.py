"""Benchmarks: many (problem, strategy, trial) runs, locally or on a Dask cluster.

:mod:`~pp_decomp.apps.bench.spec` says what runs (tasks, specs, presets),
:mod:`~pp_decomp.apps.bench.execute` runs and combines them,
:mod:`~pp_decomp.apps.bench.summary` and :mod:`~pp_decomp.apps.bench.plots` report them.
Names are imported on first use, so the command line's help stays quick.
"""

from importlib import import_module

_EXPORTS = {
    "combine": "execute",
    "run_bench": "execute",
    "run_task": "execute",
    "plot_bench": "plots",
    "PRESETS": "presets",
    "BenchSpec": "spec",
    "Task": "spec",
    "parse_list": "spec",
    "preset": "spec",
    "summarize": "summary",
    "summary_table": "summary",
    "write_report": "summary",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(import_module(f"pp_decomp.apps.bench.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'pp_decomp.apps.bench' has no attribute {name!r}")
