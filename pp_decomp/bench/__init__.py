"""Benchmarks: many (problem, strategy, trial) runs, locally or on a Dask cluster.

:mod:`~pp_decomp.bench.spec` says what runs (tasks, specs, presets),
:mod:`~pp_decomp.bench.execute` runs and combines them,
:mod:`~pp_decomp.bench.summary` and :mod:`~pp_decomp.bench.plots` report them.
"""

from pp_decomp.bench.execute import combine, run_bench, run_task
from pp_decomp.bench.plots import plot_bench
from pp_decomp.bench.spec import PRESETS, BenchSpec, Task, parse_list, preset
from pp_decomp.bench.summary import summarize, summary_table, write_report

__all__ = [
    "PRESETS",
    "BenchSpec",
    "Task",
    "combine",
    "parse_list",
    "plot_bench",
    "preset",
    "run_bench",
    "run_task",
    "summarize",
    "summary_table",
    "write_report",
]
