"""Benchmarks: many (problem, strategy, trial) runs, locally or on a Dask cluster.

Each task is one checkpointed :class:`~pp_decomp.Optimizer` run written to
``OUT/runs/PROBLEM/STRATEGY/trialNNN.nc`` when it completes (its checkpoint
``*.partial.nc`` until then), so rerunning the same command skips finished
tasks and resumes interrupted ones. Trial ``k`` uses the seed
``SeedSequence([root_seed, k])`` for the problem instance and the optimiser,
so every strategy of a trial meets the same instance and initial design, and
results do not depend on where or in which order tasks run.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import xarray as xr

from pp_decomp.validate import check_choice, check_positive_int


@dataclass(frozen=True)
class Task:
    """One run of the benchmark."""

    problem: str
    strategy: str
    trial: int
    iterations: int
    n_init: int
    inference: str
    root_seed: int
    beta_schedule: str = "default"
    additive: tuple = ()  # AdditiveSettings fields as (name, value) pairs

    @property
    def seed(self) -> int:
        return int(np.random.SeedSequence([self.root_seed, self.trial]).generate_state(1)[0])

    def path(self, out: Path) -> Path:
        """Where this task's run file lives under the benchmark folder ``out``."""
        return Path(out) / "runs" / self.problem / self.strategy / f"trial{self.trial:03d}.nc"


def run_task(task: Task, out) -> str:
    """Run (or resume, or skip) one task; returns the path of its finished results."""
    from pp_decomp._threads import pin_threads

    pin_threads()
    from pp_decomp.loop import Optimizer
    from pp_decomp.models import get_problem

    final = task.path(out)
    if final.exists():
        return str(final)
    partial = final.with_suffix(".partial.nc")
    from pp_decomp.acquisition import BetaKandasamy
    from pp_decomp.additive import AdditiveSettings
    from pp_decomp.strategies import get_strategy

    problem = get_problem(task.problem, seed=task.seed)
    beta = None
    if task.beta_schedule == "kandasamy" and get_strategy(task.strategy).surrogate != "additive":
        beta = BetaKandasamy(problem.dim)  # the papers' GP-UCB baseline: 0.2 D log 2t
    opt = Optimizer.open(
        partial,
        problem,
        strategy=task.strategy,
        n_init=task.n_init,
        inference=task.inference,
        seed=task.seed,
        beta=beta,
        additive_settings=AdditiveSettings(**dict(task.additive)),
    )
    opt.run(task.iterations)
    os.replace(partial, final)
    return str(final)


@dataclass
class BenchSpec:
    """What to run: problems × strategies × trials."""

    problems: list[str]
    strategies: list[str]
    trials: int = 30
    iterations: int = 100
    n_init: int = 5
    inference: str = "map"
    root_seed: int = 0
    name: str = "custom"
    beta_schedule: str = "default"
    additive: dict = field(default_factory=dict)
    # the summary's paired comparison: these strategies against the baseline
    # (default: the decomposed ``d-*`` strategies against GP-UCB)
    baseline: str = "gp-ucb"
    compared: list[str] | None = None
    skipped: list[tuple[str, str, str]] = field(default_factory=list)

    def __post_init__(self):
        from pp_decomp.models import PROBLEMS
        from pp_decomp.strategies import STRATEGIES

        for p in self.problems:
            check_choice(p, "problems", PROBLEMS)
        for s in self.strategies:
            check_choice(s, "strategies", STRATEGIES)
        check_choice(self.baseline, "baseline", STRATEGIES)
        for s in self.compared or ():
            check_choice(s, "compared", STRATEGIES)
        check_positive_int(self.trials, "trials")
        check_positive_int(self.n_init, "init", minimum=0 if self.inference == "fixed" else 2)
        check_positive_int(self.iterations, "iterations", minimum=self.n_init + 1)
        check_choice(self.inference, "inference", ("map", "nuts", "fixed"))
        check_choice(self.beta_schedule, "beta_schedule", ("default", "kandasamy"))
        from pp_decomp.additive import AdditiveSettings

        AdditiveSettings(**self.additive)  # validates the fields before any run

    def tasks(self) -> list[Task]:
        """Every applicable task; a strategy that cannot run on a problem with these
        settings is skipped with the reason (:func:`pp_decomp.strategies.unsupported`)."""
        from pp_decomp.models import get_problem
        from pp_decomp.strategies import unsupported

        out, self.skipped = [], []
        additive = tuple(sorted(self.additive.items()))
        for p in self.problems:
            problem = get_problem(p, seed=0)
            for s in self.strategies:
                why = unsupported(s, problem, inference=self.inference, n_init=self.n_init)
                if why is not None:
                    self.skipped.append((p, s, why))
                    continue
                out += [
                    Task(
                        p,
                        s,
                        k,
                        self.iterations,
                        self.n_init,
                        self.inference,
                        self.root_seed,
                        self.beta_schedule,
                        additive,
                    )
                    for k in range(self.trials)
                ]
        return out


PRESETS = {
    "wang2019": dict(
        problems=["synthetic", "flu", "perceived-temperature"],
        strategies=[
            "d-gpucb",
            "d-gpucb-lipschitz",
            "d-gpucb-mc",
            "gp-ucb",
            "ei",
            "pi",
            "gp-mi",
            "random",
        ],
        trials=30,
        iterations=100,
        n_init=5,
    ),
    "contal2014": dict(
        problems=[
            "gaussian-mixture",
            "himmelblau",
            "branin",
            "goldstein-price",
            "gp-sample-2d",
            "gp-sample-4d",
        ],
        strategies=["gp-mi", "gp-ucb", "ei"],
        trials=30,
        iterations=100,
        n_init=5,
    ),
    "kandasamy2015": dict(
        problems=["kandasamy-24-6-4"],
        strategies=["add-gp-ucb-oracle", "add-gp-ucb", "gp-ucb", "random"],
        trials=10,
        iterations=200,
        n_init=10,
        beta_schedule="kandasamy",
        additive={"n_cyc": 25, "max_group_size": 6},
    ),
    "rolland2018": dict(
        problems=["rolland-star", "rolland-grid"],
        strategies=["g-add-gp-ucb", "g-add-gp-ucb-disjoint", "g-add-gp-ucb-oracle", "random"],
        trials=10,
        iterations=300,
        n_init=10,
        additive={"n_cyc": 30, "gibbs_evals": 200},
        baseline="g-add-gp-ucb-disjoint",
        compared=["g-add-gp-ucb", "g-add-gp-ucb-oracle"],
    ),
}
QUICK = {"trials": 2, "iterations": 20}


def preset(name: str, quick: bool = False, **overrides) -> BenchSpec:
    """A paper's benchmark settings (``quick`` shrinks trials and iterations)."""
    check_choice(name, "preset", PRESETS)
    kw = dict(PRESETS[name], name=name)
    if quick:
        kw.update(QUICK)
    kw.update({k: v for k, v in overrides.items() if v is not None})
    return BenchSpec(**kw)


def _executor(scheduler: str | None, workers: int | None):
    if scheduler is None and workers is None:
        from concurrent.futures import ProcessPoolExecutor

        return ProcessPoolExecutor(max_workers=os.cpu_count() or 1), None
    from dask.distributed import Client, LocalCluster

    if scheduler is not None:
        client = Client(scheduler)
        return client, client
    cluster = LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
    )
    client = Client(cluster)
    return client, client


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
        pool, client = _executor(scheduler, workers)
        try:
            if client is not None:
                from dask.distributed import as_completed

                futures = client.map(run_task, todo, out=str(out), pure=False)
            else:
                from concurrent.futures import as_completed

                futures = [pool.submit(run_task, t, str(out)) for t in todo]
            bar = None
            if progress:
                from tqdm.auto import tqdm

                bar = tqdm(total=len(todo), desc=f"bench {spec.name}", unit="run")
            for fut in as_completed(futures):
                fut.result()
                if bar is not None:
                    bar.update()
            if bar is not None:
                bar.close()
        finally:
            if client is not None:
                cluster = getattr(client, "cluster", None)
                client.close()
                if cluster is not None:
                    cluster.close()
            else:
                pool.shutdown()
    ds = combine(spec, out)
    ds.attrs["wall_seconds"] = time.perf_counter() - start
    ds.to_netcdf(out / "bench.nc")
    write_report(ds, out)
    return ds


def write_report(ds: xr.Dataset, out) -> None:
    """``summary.md`` and ``regret.png`` of a combined benchmark, in folder ``out``.

    The baseline and compared strategies are the benchmark's own (its settings).
    """
    import json

    settings = json.loads(ds.attrs.get("settings", "{}"))
    table = summary_table(ds, settings.get("baseline", "gp-ucb"), settings.get("compared"))
    (Path(out) / "summary.md").write_text(table)
    plot_bench(ds, Path(out) / "regret.png")


def summarize(out) -> str:
    """Rewrite the report of the benchmark folder ``out`` from its ``bench.nc``; the table."""
    path = Path(out) / "bench.nc"
    if not path.exists():
        raise ValueError(f"no bench.nc in {str(out)!r}: run pp-decomp bench --out there first")
    ds = xr.load_dataset(path)
    write_report(ds, out)
    return (Path(out) / "summary.md").read_text()


def _check_existing_runs(tasks: list[Task], out: Path) -> None:
    """Raise if a run already in ``out`` was made with other settings than its task.

    Run files are found by problem, strategy and trial only, so a benchmark
    rerun into the same folder with, say, another ``inference`` would otherwise
    resume or reuse runs of the old one and mix the two in one table.
    """
    import json

    for task in tasks:
        final = task.path(out)
        for path in (final, final.with_suffix(".partial.nc")):
            if not path.exists():
                continue
            with xr.open_dataset(path, engine="h5netcdf") as run:
                settings = json.loads(run.attrs["settings"])
                n = run.sizes.get("iteration", 0)
            want = {"inference": task.inference, "n_init": task.n_init, "seed": task.seed}
            got = {k: settings.get(k) for k in want}
            if got != want:
                raise ValueError(
                    f"{path} was run with {got}, but this benchmark asks for {want}; "
                    "give another --out (or move the old runs away)"
                )
            if path == final and n < task.iterations:
                raise ValueError(
                    f"{path} holds {n} evaluations, fewer than iterations={task.iterations}; "
                    "give another --out (or move the old runs away)"
                )


def combine(spec: BenchSpec, out) -> xr.Dataset:
    """All finished runs as one Dataset with dims (problem, strategy, trial, iteration)."""
    from pp_decomp.results import package_versions

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
    import json

    ds.attrs.update(
        settings=json.dumps(settings), versions=json.dumps(package_versions()), preset=spec.name
    )
    return ds


def _mean_se(a: np.ndarray) -> tuple[float, float, int]:
    a = a[np.isfinite(a)]
    if len(a) == 0:
        return float("nan"), float("nan"), 0
    se = a.std(ddof=1) / np.sqrt(len(a)) if len(a) > 1 else float("nan")
    return float(a.mean()), float(se), len(a)


def _paired_change(base: np.ndarray, other: np.ndarray) -> str:
    """``other`` against ``base`` over paired trials: relative change (paired diff ± SE)."""
    ok = np.isfinite(base) & np.isfinite(other)
    if ok.sum() < 2:
        return ""
    diff = other[ok] - base[ok]
    change = other[ok].mean() / base[ok].mean() - 1
    return f"{100 * change:+.1f}% ({diff.mean():+.3g} ± {diff.std(ddof=1) / np.sqrt(ok.sum()):.2g})"


def summary_table(ds: xr.Dataset, baseline: str = "gp-ucb", compared=None) -> str:
    """Markdown: final cumulative and simple regret (mean ± SE) and the change of each
    ``compared`` strategy (default: the decomposed ``d-*`` ones) against ``baseline``,
    with the paired difference over trials ± its standard error.

    With an initial design (``n_init`` in the settings) a last column compares the
    regret accrued after it: the design is shared by every strategy of a trial, so
    its regret is the same for all and dilutes the relative change of the whole run.
    """
    import json

    label = "GP-UCB" if baseline == "gp-ucb" else baseline
    n_init = int(json.loads(ds.attrs.get("settings", "{}")).get("n_init", 0))
    after = f" | change after the {n_init} initial evaluations" if n_init else ""
    lines = [
        "| problem | strategy | trials | final cumulative regret | final simple regret "
        f"| cumulative regret change vs {label} (paired diff ± SE){after} |",
        "| --- | --- | --- | --- | --- | --- |" + (" --- |" if n_init else ""),
    ]
    strategies = list(ds["strategy"].values)
    if compared is None:
        compared = [s for s in strategies if s.startswith("d-")]
    for p in ds["problem"].values:
        cum = ds["cumulative_regret"].sel(problem=p)
        final = cum.isel(iteration=-1)
        later = final - cum.isel(iteration=n_init - 1) if n_init else None
        simple = ds["simple_regret"].sel(problem=p).isel(iteration=-1)
        for s in strategies:
            m, se, k = _mean_se(final.sel(strategy=s).values)
            if k == 0:
                continue
            sm, sse, _ = _mean_se(simple.sel(strategy=s).values)
            rel = rel_after = ""
            if baseline in strategies and s != baseline and s in compared:
                rel = _paired_change(
                    final.sel(strategy=baseline).values, final.sel(strategy=s).values
                )
                if n_init:
                    rel_after = _paired_change(
                        later.sel(strategy=baseline).values, later.sel(strategy=s).values
                    )
            row = f"| {p} | {s} | {k} | {m:.4g} ± {se:.2g} | {sm:.4g} ± {sse:.2g} | {rel} |"
            lines.append(row + (f" {rel_after} |" if n_init else ""))
    return "\n".join(lines) + "\n"


def plot_bench(ds: xr.Dataset, path) -> None:
    """Cumulative and average regret with standard-error bands, one column per problem."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    probs = list(ds["problem"].values)
    fig, axes = plt.subplots(
        2, len(probs), figsize=(4.5 * len(probs), 7), squeeze=False, constrained_layout=True
    )
    it = ds["iteration"].values
    for c, p in enumerate(probs):
        for k, s in enumerate(ds["strategy"].values):
            color = f"C{k}"  # one colour per strategy across panels
            cum = ds["cumulative_regret"].sel(problem=p, strategy=s).values
            cum = cum[np.all(np.isfinite(cum), axis=1)]
            if len(cum) == 0:
                continue
            for r, arr in enumerate((cum, cum / it)):
                m = arr.mean(0)
                se = arr.std(0, ddof=1) / np.sqrt(len(arr)) if len(arr) > 1 else 0 * m
                axes[r, c].plot(it, m, label=s, color=color)
                axes[r, c].fill_between(it, m - se, m + se, alpha=0.15, color=color)
        axes[0, c].set_title(p)
        axes[0, c].set_ylabel("cumulative regret")
        axes[1, c].set_ylabel("average regret")
        axes[1, c].set_xlabel("iteration")
        axes[1, c].set_yscale("log")
        axes[0, c].legend(fontsize=8)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def parse_list(value: str | None) -> list[str] | None:
    """Split a comma-separated command-line value into names (``None`` stays ``None``)."""
    return None if value is None else [v.strip() for v in value.split(",") if v.strip()]


__all__ = ["BenchSpec", "PRESETS", "Task", "preset", "run_bench", "run_task"]
