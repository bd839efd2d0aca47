"""Running a benchmark: every missing task, locally or on a Dask cluster, then combined.

Each task is one checkpointed :class:`~pp_decomp.Optimizer` run written to
``OUT/runs/PROBLEM/STRATEGY/trialNNN.nc`` when it completes (its checkpoint
``*.partial.nc`` until then), so rerunning the same command skips finished
tasks and resumes interrupted ones. A task's checkpoint is written at most every
:data:`SAVE_EVERY` seconds (a killed bench redoes at most that much of each
run, with the same choices): on a cheap function, writing after every step was
most of a task's time (:doc:`/performance`, "Benchmark checkpoints").
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import xarray as xr

from pp_decomp._runtime import dask_client, pin_threads, usable_cores
from pp_decomp.apps.bench.spec import BenchSpec, Task
from pp_decomp.apps.bench.summary import write_report
from pp_decomp.components import Priors
from pp_decomp.kernels import DEFAULT_KERNEL
from pp_decomp.loop import Optimizer
from pp_decomp.loop import checkpoint as ckpt
from pp_decomp.models import get_problem
from pp_decomp.results import package_versions

SAVE_EVERY = 30.0  # seconds between a task's checkpoint writes


def run_task(task: Task, out) -> str:
    """Run (or resume, or skip) one task; returns the path of its finished results."""
    pin_threads()

    final = task.path(out)
    if final.exists():
        return str(final)
    partial = final.with_suffix(".partial.nc")

    problem = get_problem(task.problem, seed=task.seed)
    opt = Optimizer.open(partial, problem, **task.optimizer_kwargs(problem))
    opt.run(task.iterations, save_every=SAVE_EVERY)
    os.replace(partial, final)
    ckpt.previous(partial).unlink(missing_ok=True)  # a finished run needs no earlier file
    return str(final)


def run_bench(
    spec: BenchSpec,
    out,
    scheduler: str | None = None,
    workers: int | None = None,
    progress: bool = True,
    log=print,
) -> xr.Dataset:
    """Run every missing task, then combine all finished runs into one Dataset.

    ``scheduler``: address of a Dask scheduler; ``workers``: size of an
    embedded Dask ``LocalCluster``; neither: a local process pool.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tasks = spec.tasks()
    for p, s, why in spec.skipped:
        log(f"skip {p}/{s}: {why}")
    _check_existing_runs(tasks, out)
    todo = [t for t in tasks if not t.path(out).exists()]
    log(f"{len(tasks)} task(s), {len(tasks) - len(todo)} already done, {len(todo)} to run")
    start = time.perf_counter()
    if todo:
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(todo), desc=f"bench {spec.name}", unit="run")
        for _ in _finished(todo, str(out), scheduler, workers):
            if bar is not None:
                bar.update()
        if bar is not None:
            bar.close()
    ds = combine(spec, out)
    ds.attrs["wall_seconds"] = time.perf_counter() - start
    ds.to_netcdf(out / "bench.nc")
    write_report(ds, out)
    return ds


def _die_with(parent: int) -> None:
    """Pool-worker initializer: the worker is killed when the bench process dies
    (Linux ``PR_SET_PDEATHSIG``), so a killed bench leaves no orphan running; its
    run's checkpoint is atomic, so the rerun resumes it."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)


def _finished(todo: list[Task], out: str, scheduler, workers):
    """Run the tasks on Dask (``scheduler`` or ``workers`` given) or a local process
    pool; yield as each finishes (an error is raised at once)."""
    if scheduler is None and workers is None:
        from concurrent.futures import ProcessPoolExecutor, as_completed

        workers = usable_cores()  # a process per core it may run on (taskset)
        parent = os.getpid()
        with ProcessPoolExecutor(workers, initializer=_die_with, initargs=(parent,)) as pool:
            for fut in as_completed([pool.submit(run_task, t, out) for t in todo]):
                yield fut.result()
        return
    from dask.distributed import as_completed

    with dask_client(scheduler, workers) as client:
        for fut in as_completed(client.map(run_task, todo, out=out, pure=False)):
            yield fut.result()


def _check_existing_runs(tasks: list[Task], out: Path) -> None:
    """Raise if a run already in ``out`` was made with other settings than its task.

    Run files are found by problem, strategy and trial only, so a benchmark
    rerun into the same folder with, say, another ``inference`` would otherwise
    resume or reuse runs of the old one and mix the two in one table.
    """
    for task in tasks:
        final = task.path(out)
        for path in (final, final.with_suffix(".partial.nc")):
            if not path.exists():
                continue
            run = ckpt.load(path)  # a damaged file: an error naming it, not HDF5's
            settings = json.loads(run.attrs["settings"])
            n = run.sizes.get("iteration", 0)
            want = {"inference": task.inference, "n_init": task.n_init, "seed": task.seed}
            want["correlated"] = task.correlated
            if task.inference != "fixed":  # fixed: the problem's known kernels decide
                want["kernel"] = task.kernel or DEFAULT_KERNEL
            want["priors"] = asdict(Priors(**dict(task.priors)))
            want["outcome_transform"] = task.outcome_transform
            want["copula"] = task.copula
            want["warm_start"] = task.warm_start
            want["input_warping"] = task.input_warping
            want["output_warp"] = task.output_warp
            # runs stored before these settings existed ran without them
            unset = {
                "correlated": False,
                "outcome_transform": "none",
                "copula": False,
                "warm_start": False,
                "input_warping": False,
                "output_warp": None,
            }
            got = {k: settings.get(k, unset.get(k)) for k in want}
            differ = [k for k in want if got[k] != want[k]]
            if differ:
                raise ValueError(
                    f"{path} was run with {_fields(got, differ)}, but this benchmark asks "
                    f"for {_fields(want, differ)}; give another --out (or move the old runs away)"
                )
            if path == final and n < task.iterations:
                raise ValueError(
                    f"{path} holds {n} evaluations, fewer than iterations={task.iterations}; "
                    "give another --out (or move the old runs away)"
                )


def _fields(settings: dict, keys: list[str]) -> dict:
    """``settings`` at ``keys``, the priors reduced to the fields that differ from the defaults."""
    out = {k: settings[k] for k in keys}
    if isinstance(out.get("priors"), dict):
        default = asdict(Priors())
        out["priors"] = {k: v for k, v in out["priors"].items() if default.get(k) != v}
    return out


def combine(spec: BenchSpec, out) -> xr.Dataset:
    """All finished runs as one Dataset with dims (problem, strategy, trial, iteration)."""
    shape = (len(spec.problems), len(spec.strategies), spec.trials, spec.iterations)
    arrays = {
        v: np.full(shape, np.nan)
        for v in ("regret", "cumulative_regret", "simple_regret", "objective", "ask_seconds")
    }
    for i, p in enumerate(spec.problems):
        for j, s in enumerate(spec.strategies):
            for k in range(spec.trials):
                path = Task(
                    p, s, k, spec.iterations, spec.n_init, spec.inference, spec.root_seed
                ).path(out)
                if not path.exists():
                    continue
                with xr.open_dataset(path) as run:
                    for v in arrays:
                        if v in run:
                            arrays[v][i, j, k] = run[v].values[: spec.iterations]
    dims = ("problem", "strategy", "trial", "iteration")
    ds = xr.Dataset(
        {v: (dims, a) for v, a in arrays.items()},
        coords={
            "problem": spec.problems,
            "strategy": spec.strategies,
            "trial": np.arange(spec.trials),
            "iteration": np.arange(1, spec.iterations + 1),
        },
    )
    settings = {k: v for k, v in asdict(spec).items() if k != "skipped"}

    ds.attrs.update(
        settings=json.dumps(settings), versions=json.dumps(package_versions()), preset=spec.name
    )
    return ds
