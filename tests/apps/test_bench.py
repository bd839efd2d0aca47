import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
import xarray as xr

from pp_decomp.apps.bench import BenchSpec, preset, run_bench, summary_table
from pp_decomp.models import get_problem

SPEC = dict(
    problems=["gp-sample-2d", "synthetic"],
    strategies=["gp-ucb", "random"],
    trials=2,
    iterations=6,
    n_init=3,
    root_seed=11,
)


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("local")
    return out, run_bench(BenchSpec(**SPEC), out, progress=False, log=lambda m: None)


def test_bench_layout_table_and_plot(local_run):
    out, ds = local_run
    assert ds["cumulative_regret"].dims == ("problem", "strategy", "trial", "iteration")
    assert np.all(np.isfinite(ds["cumulative_regret"]))
    table = (out / "summary.md").read_text()
    assert "| gp-sample-2d | gp-ucb | 2 |" in table and "| synthetic | random | 2 |" in table
    assert (out / "regret.png").stat().st_size > 10_000
    assert xr.load_dataset(out / "bench.nc").sizes["trial"] == 2


@pytest.mark.slow
def test_dask_local_cluster_matches_local_pool(local_run, tmp_path):
    _, local = local_run
    dask = run_bench(BenchSpec(**SPEC), tmp_path, workers=2, progress=False, log=lambda m: None)
    for v in ("cumulative_regret", "simple_regret", "objective"):
        np.testing.assert_array_equal(dask[v].values, local[v].values)


# Kills at chosen points of a bench: a real SIGKILL sent from inside the bench's own
# processes (patched by BENCH, run with `python -c`) when it reaches the point $PP_KILL
# names, or by the test once the workers have said, through files, that they are inside
# their tasks. No wall-clock timing decides where a kill lands, however busy the machine.
BENCH = textwrap.dedent(
    """
    import fcntl, multiprocessing, os, signal, sys, threading
    from pathlib import Path

    import pp_decomp.apps.cli  # pins the BLAS threads before numpy loads, as the command does
    from pp_decomp.apps.bench import execute
    from pp_decomp.loop.optimizer import Optimizer

    WHERE, _, K = os.environ["PP_KILL"].partition(":")
    K = int(K)
    BARRIER = Path(os.environ["PP_BARRIER"])
    # the patches below reach the pool's workers because they are forked from here
    assert multiprocessing.get_start_method() == "fork", multiprocessing.get_start_method()
    assert os.getpgid(0) == os.getpid(), "start me in a new session: my group may be killed"


    class BenchOS:
        # `os` of pp_decomp.apps.bench.execute: a pool of 2 workers whatever the machine, and
        # finished:K  the K-th task's results moved in place (run_task's os.replace), the
        #             bench's whole process group is killed; the lock lets no other
        #             worker's results in between, so exactly K tasks are finished
        def __getattr__(self, name):
            return getattr(os, name)

        def cpu_count(self):
            return 2

        def replace(self, src, dst):
            with open(BARRIER / "lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                os.replace(src, dst)
                finished = list(Path(dst).parents[2].glob("*/*/trial*[0-9].nc"))
                if WHERE == "finished" and len(finished) == K:
                    os.killpg(0, signal.SIGKILL)


    execute.os = BenchOS()


    # told:K  each worker, once evaluation K of its task is told (checkpointed), leaves the
    #         file worker-PID in $PP_BARRIER and stays inside the task until killed
    def tell(self, x, y, _tell=Optimizer.tell):
        _tell(self, x, y)
        if WHERE == "told" and self.n == K:
            (BARRIER / f"worker-{os.getpid()}").touch()
            threading.Event().wait(600)  # only an orphan's end if the test itself died
            os._exit(3)


    Optimizer.tell = tell
    sys.exit(pp_decomp.apps.cli.main(sys.argv[1:]))
    """
)


def _bench_env(kill: str, barrier) -> dict:
    return dict(os.environ, OPENBLAS_NUM_THREADS="1", PP_KILL=kill, PP_BARRIER=str(barrier))


@pytest.mark.slow
def test_interrupted_bench_reruns_only_missing_tasks(local_run, tmp_path):
    """The bench's process group killed as its 2nd task finishes: exactly 2 runs are
    finished; the rerun into the same folder runs the other 6 only and gives the
    results of the uninterrupted bench."""
    _, local = local_run
    out = tmp_path / "b"
    args = ["bench", "--problems", "gp-sample-2d,synthetic", "--strategies", "gp-ucb,random"]
    args += ["--trials", "2", "--iterations", "6", "--init", "3", "--seed", "11"]
    args += ["--out", str(out), "--quiet"]
    proc = subprocess.run(
        [sys.executable, "-c", BENCH, *args],
        env=_bench_env("finished:2", tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
        start_new_session=True,  # the killed process group is the bench's, not pytest's
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-3000:]
    done = sorted(out.glob("runs/*/*/trial*[0-9].nc"))
    assert len(done) == 2
    stamps = {p: p.stat().st_mtime_ns for p in done}
    messages = []
    ds = run_bench(BenchSpec(**SPEC), out, progress=False, log=messages.append)
    assert "8 task(s), 2 already done, 6 to run" in messages
    assert all(p.stat().st_mtime_ns == t for p, t in stamps.items())  # finished ones untouched
    assert not list(out.glob("runs/*/*/*.partial.nc"))  # interrupted ones resumed to the end
    for v in ("cumulative_regret", "simple_regret", "objective"):
        np.testing.assert_array_equal(ds[v].values, local[v].values)


def test_presets_and_validation():
    quick = preset("wang2019", quick=True)
    assert quick.trials == 2 and "perceived-temperature" in quick.problems
    tasks = quick.tasks()
    assert ("perceived-temperature", "d-gpucb") not in {(t.problem, t.strategy) for t in tasks}
    assert any(
        s == ("perceived-temperature", "d-gpucb") for s in ((p, s) for p, s, _ in quick.skipped)
    )
    with pytest.raises(ValueError, match="problem must be one of"):
        BenchSpec(problems=["nope"], strategies=["gp-ucb"])
    any_case = BenchSpec(
        problems=["flu"], strategies=["D-GPUCB", "Gp-Ucb"], baseline="GP-UCB", inference="MAP"
    )
    assert (any_case.strategies, any_case.baseline) == (["d-gpucb", "gp-ucb"], "gp-ucb")
    assert any_case.inference == "map"
    assert {t.strategy for t in any_case.tasks()} == {"d-gpucb", "gp-ucb"}
    with pytest.raises(ValueError, match="iterations must be >= 6"):
        BenchSpec(problems=["flu"], strategies=["gp-ucb"], iterations=3, n_init=5)
    # trial seeds depend on the root seed and the trial only
    a, b = BenchSpec(**SPEC).tasks()[0], BenchSpec(**SPEC).tasks()[2]
    assert a.seed == b.seed and a.strategy != b.strategy


def test_additive_presets_skip_what_does_not_apply():
    spec = preset("kandasamy2015", quick=True)
    assert spec.beta_schedule == "kandasamy" and spec.additive["max_group_size"] == 6
    assert {t.strategy for t in spec.tasks()} == set(spec.strategies)
    spec = preset("rolland2018", quick=True, problems=["rolland-star", "flu", "kandasamy-10-3-3"])
    spec.tasks()
    skipped = {(p, s) for p, s, _ in spec.skipped}
    assert ("flu", "g-add-gp-ucb") in skipped  # a budget-constrained box
    assert ("kandasamy-10-3-3", "g-add-gp-ucb-oracle") in skipped  # no known graph
    assert ("rolland-star", "g-add-gp-ucb-oracle") not in skipped
    with pytest.raises(ValueError, match="beta_schedule"):
        preset("rolland2018", beta_schedule="nope")
    with pytest.raises(ValueError, match="n_cyc"):
        preset("rolland2018", additive={"n_cyc": 0})


def test_summary_compares_against_the_chosen_baseline():
    final = np.array([[10.0, 12.0, 14.0], [12.0, 15.0, 15.0], [30.0, 31.0, 32.0]])  # (s, trial)
    reg = np.broadcast_to(final[None, :, :, None], (1, 3, 3, 2))
    ds = xr.Dataset(
        {
            "cumulative_regret": (("problem", "strategy", "trial", "iteration"), reg.copy()),
            "simple_regret": (("problem", "strategy", "trial", "iteration"), reg.copy()),
        },
        coords={"problem": ["p"], "strategy": ["g-add-gp-ucb", "g-add-gp-ucb-disjoint", "random"]},
    )
    table = summary_table(ds, "g-add-gp-ucb-disjoint", ["g-add-gp-ucb"])
    assert "change vs g-add-gp-ucb-disjoint" in table
    row = next(line for line in table.splitlines() if "| g-add-gp-ucb |" in line)
    assert row.count("-14.3% (-2 ± 0.58)") == 2  # cumulative and simple: paired diffs -2, -3, -1
    assert table.splitlines()[-1].endswith("|  |")  # random is not compared
    with pytest.raises(ValueError, match="baseline"):
        preset("rolland2018", baseline="nope")


def test_bench_refuses_to_mix_runs_made_with_other_settings(local_run):
    out, _ = local_run
    stamps = {p: p.stat().st_mtime_ns for p in out.glob("runs/*/*/trial*.nc")}
    quiet = dict(progress=False, log=lambda m: None)
    with pytest.raises(ValueError, match=r"was run with \{'n_init': 3\}, but .* \{'n_init': 4\}"):
        run_bench(BenchSpec(**{**SPEC, "n_init": 4}), out, **quiet)
    with pytest.raises(ValueError, match=r"\{'kernel': 'matern32'\}, but .* \{'kernel': 'se'\}"):
        run_bench(BenchSpec(**{**SPEC, "kernel": "se"}), out, **quiet)
    asked = r"\{'priors': \{\}\}, but .* \{'priors': \{'ls_family': 'lognormal'\}\}"
    with pytest.raises(ValueError, match=asked):
        run_bench(BenchSpec(**{**SPEC, "priors": {"ls_family": "lognormal"}}), out, **quiet)
    with pytest.raises(ValueError, match="holds 6 evaluations, fewer than iterations=8"):
        run_bench(BenchSpec(**{**SPEC, "iterations": 8}), out, **quiet)
    assert all(p.stat().st_mtime_ns == t for p, t in stamps.items())  # nothing touched


def test_summary_separates_the_shared_initial_design():
    # per-step regret: 2 shared initial evaluations of regret 5, then 1 vs 2 per step
    steps = np.array([[5.0, 5.0, 1.0, 1.0], [5.0, 5.0, 2.0, 2.0]])  # (strategy, iteration)
    cum = np.cumsum(steps, axis=1)
    reg = np.broadcast_to(cum[None, :, None, :], (1, 2, 3, 4)).copy()
    reg[0, :, 1] += [[0.0, 0.0, 0.5, 1.0], [0.0, 0.0, 0.0, 0.0]]  # trials differ a little
    ds = xr.Dataset(
        {
            "cumulative_regret": (("problem", "strategy", "trial", "iteration"), reg),
            "simple_regret": (("problem", "strategy", "trial", "iteration"), reg.copy()),
        },
        coords={"problem": ["p"], "strategy": ["d-gpucb", "gp-ucb"]},
        attrs={"settings": '{"n_init": 2}'},
    )
    table = summary_table(ds)
    assert "change after the 2 initial evaluations" in table
    row = next(line for line in table.splitlines() if "| d-gpucb |" in line)
    # whole run: 12.33 vs 14 (-11.9%); after the design: 2.33 vs 4 (-41.7%)
    assert "-11.9% (-1.67 ± 0.33)" in row and "-41.7% (-1.67 ± 0.33)" in row


def test_summary_command_rewrites_the_report(local_run, tmp_path, capsys):
    import shutil

    from pp_decomp.apps.cli import main

    out, _ = local_run
    shutil.copy(out / "bench.nc", tmp_path / "bench.nc")
    assert main(["summary", str(tmp_path)]) == 0
    assert (tmp_path / "summary.md").read_text() == (out / "summary.md").read_text()
    assert (tmp_path / "regret.png").stat().st_size > 10_000
    assert main(["summary", str(tmp_path / "nowhere")]) == 2
    assert "no bench.nc in" in capsys.readouterr().err


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def _wait_until(done, seconds: float, what: str) -> None:
    """Poll ``done()`` until it holds; a liveness bound only (nothing must happen first)."""
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_a_killed_bench_leaves_no_worker_running(tmp_path):
    """Both workers of the bench's pool inside a task (each says so with a file), the
    bench process is killed: its workers die with it within 10 s (PR_SET_PDEATHSIG),
    although they would otherwise have stayed in their tasks for good; the rerun
    into the same folder gives the uninterrupted bench's results."""
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    args = ["bench", "--problems", "synthetic", "--strategies", "d-gpucb,gp-ucb"]
    args += ["--trials", "2", "--iterations", "10", "--inference", "map", "--quiet"]
    args += ["--out", str(tmp_path / "b")]
    log = tmp_path / "stderr.txt"
    with log.open("w") as err:  # a file: a pipe nobody reads could fill and stall the bench
        proc = subprocess.Popen(
            [sys.executable, "-c", BENCH, *args],
            env=_bench_env("told:6", barrier),  # the first model-based step of each task told
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
        )
    workers: set[int] = set()
    try:

        def inside() -> bool:
            assert proc.poll() is None, f"bench exit {proc.returncode}: {log.read_text()[-3000:]}"
            return len(list(barrier.glob("worker-*"))) == 2

        _wait_until(inside, 300, "the workers did not reach their tasks")
        workers = {int(p.name.removeprefix("worker-")) for p in barrier.glob("worker-*")}
        found = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True)
        assert {int(p) for p in found.stdout.split()} == workers  # all of the bench's children
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=60) == -signal.SIGKILL
        _wait_until(
            lambda: not any(_running(p) for p in workers),
            10,
            f"workers {sorted(p for p in workers if _running(p))} outlived the killed bench",
        )
        assert not list(tmp_path.glob("b/runs/*/*/trial*[0-9].nc"))  # killed inside their tasks
        for again in (args, [*args[:-2], "--out", str(tmp_path / "ref")]):  # rerun, reference
            ran = subprocess.run(
                [sys.executable, "-c", BENCH, *again],
                env=_bench_env("finished:999", barrier),  # a kill point never reached
                capture_output=True,
                text=True,
                timeout=600,
                start_new_session=True,
            )
            assert ran.returncode == 0, ran.stderr[-3000:]
        rerun, ref = (xr.load_dataset(tmp_path / d / "bench.nc") for d in ("b", "ref"))
        timing = [v for v in ref.data_vars if "seconds" in v]
        xr.testing.assert_equal(rerun.drop_vars(timing), ref.drop_vars(timing))
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for pid in workers:
            if _running(pid):
                os.kill(pid, signal.SIGKILL)  # a failed test leaves no worker behind


def test_additive_settings_from_the_command_line_merge_over_the_preset(monkeypatch, tmp_path):
    import pp_decomp.apps.cli.bench as cli_bench
    from pp_decomp.apps.cli import main
    from pp_decomp.apps.cli.bench import parse_settings

    assert parse_settings("decomposition_search=swap, n_cyc=10", "--additive") == {
        "decomposition_search": "swap",
        "n_cyc": 10,
    }
    with pytest.raises(ValueError, match="--additive takes KEY=VALUE pairs.*'swap'"):
        parse_settings("swap", "--additive")
    seen = {}

    def fake_run(spec, out, **kw):
        seen["spec"] = spec
        raise SystemExit(0)

    monkeypatch.setattr(cli_bench, "run_bench", fake_run)
    args = ["bench", "--preset", "kandasamy2015", "--quick", "--out", str(tmp_path)]
    with pytest.raises(SystemExit):
        main([*args, "--additive", "decomposition_search=swap"])
    assert seen["spec"].additive == {
        "n_cyc": 25,
        "max_group_size": 6,
        "decomposition_search": "swap",
    }
    assert main([*args, "--additive", "decomposition_search=anneal"]) == 2  # refused up front


def test_bench_runs_with_the_kernel_and_priors_asked_for(tmp_path, capsys):
    import json

    from pp_decomp.apps.cli import main

    args = ["bench", "--problems", "gp-sample-2d", "--strategies", "gp-ucb", "--trials", "1"]
    args += ["--iterations", "5", "--init", "3", "--quiet", "--out", str(tmp_path)]
    assert main([*args, "--kernel", "matern32", "--prior", "ls_family=inverse-gamma"]) == 0
    run = xr.load_dataset(next(tmp_path.glob("runs/*/*/trial000.nc")))
    settings = json.loads(run.attrs["settings"])
    assert settings["kernel"] == "matern32"
    assert settings["priors"]["ls_family"] == "inverse-gamma"
    capsys.readouterr()
    # bad values are named before any run
    assert main([*args[:-1], str(tmp_path / "b"), "--prior", "ls_famly=x"]) == 2
    assert "--prior must be NAME=VALUE" in capsys.readouterr().err
    assert main([*args[:-1], str(tmp_path / "b"), "--prior", "ls_family=gamma"]) == 2
    assert "Priors.ls_family must be one of" in capsys.readouterr().err
    assert not (tmp_path / "b").exists()


def test_summary_reports_seconds_per_model_based_step():
    dims = ("problem", "strategy", "trial", "iteration")
    reg = np.ones((1, 2, 2, 4))
    ask = np.empty((1, 2, 2, 4))
    ask[0, 0], ask[0, 1] = [9.0, 9.0, 0.2, 0.2], [9.0, 9.0, 0.1, 0.1]  # design steps excluded
    ds = xr.Dataset(
        {
            "cumulative_regret": (dims, reg),
            "simple_regret": (dims, reg.copy()),
            "ask_seconds": (dims, ask),
        },
        coords={"problem": ["p"], "strategy": ["d-gpucb-mc", "gp-ucb"]},
        attrs={"settings": '{"n_init": 2}'},
    )
    table = summary_table(ds)
    assert "seconds per step (× gp-ucb)" in table
    row = next(line for line in table.splitlines() if "| d-gpucb-mc |" in line)
    assert row.endswith("| 0.2 (× 2) |")
    assert "nan" not in table  # no regret after the design: no relative change to claim
    assert table.splitlines()[-1].endswith("| 0.1 |")
    # without the baseline the column holds seconds, and its header says so
    alone = summary_table(ds.sel(strategy=["d-gpucb-mc"]))
    assert "| seconds per step |" in alone and "×" not in alone
    untimed = ds.copy()
    untimed["ask_seconds"] = untimed["ask_seconds"].where(untimed["strategy"] != "gp-ucb")
    assert "×" not in summary_table(untimed)


def test_bench_transforms_the_components_of_the_decomposed_and_network_strategies_only(
    tmp_path, capsys
):
    import json

    from pp_decomp.apps.cli import main

    spec = BenchSpec(
        problems=["flu"],
        strategies=["d-gpucb", "d-gpucb-mc", "gp-ucb"],
        trials=1,
        iterations=7,
        n_init=5,
        outcome_transform="log",
    )
    tasks = {t.strategy: t.outcome_transform for t in spec.tasks()}
    assert tasks == {"d-gpucb-mc": "log", "gp-ucb": "none"}
    network = BenchSpec(
        problems=["flu-network"], strategies=["network-ucb", "gp-ucb"], trials=1,
        iterations=16, n_init=14, outcome_transform="log",
    )  # fmt: skip
    assert {t.strategy: t.outcome_transform for t in network.tasks()} == {
        "network-ucb": "log",  # was dropped without a word before stop 91
        "gp-ucb": "none",
    }
    (why,) = [w for p, s, w in spec.skipped if s == "d-gpucb"]
    assert "linear g" in why and "'log'" in why
    with pytest.raises(ValueError, match="outcome_transform must be one of"):
        BenchSpec(problems=["flu"], strategies=["d-gpucb-mc"], outcome_transform="sqrt")
    args = ["bench", "--problems", "flu", "--strategies", "d-gpucb-mc", "--trials", "1"]
    args += ["--iterations", "7", "--init", "5", "--quiet", "--out", str(tmp_path)]
    assert main([*args, "--outcome-transform", "log"]) == 0
    run = xr.load_dataset(next(tmp_path.glob("runs/*/*/trial000.nc")))
    assert json.loads(run.attrs["settings"])["outcome_transform"] == "log"
    capsys.readouterr()
    # the same folder without the transform: refused, naming the setting
    assert main(args) == 2
    assert "{'outcome_transform': 'log'}, but" in capsys.readouterr().err


def test_bench_gives_the_copula_to_the_decomposed_and_network_strategies_only():
    spec = BenchSpec(
        problems=["synthetic"], strategies=["d-gpucb", "gp-ucb"], trials=1, copula=True
    )
    assert {t.strategy: t.copula for t in spec.tasks()} == {"d-gpucb": True, "gp-ucb": False}
    net = BenchSpec(
        problems=["alpine2-network"], strategies=["network-ucb", "ei"], trials=1, copula=True
    )  # the network's nodes: it once reached no network strategy, and ran without
    assert {t.strategy: t.copula for t in net.tasks()} == {"network-ucb": True, "ei": False}
    assert net.tasks()[0].optimizer_kwargs(get_problem("alpine2-network"))["copula"] is True
    with pytest.raises(ValueError, match="choose one"):
        BenchSpec(problems=["flu"], strategies=["d-gpucb"], copula=True, correlated=True)
    with pytest.raises(TypeError, match="copula must be True, False or None"):
        BenchSpec(problems=["flu"], strategies=["d-gpucb"], copula="false")
    with pytest.raises(ValueError, match="outcome_transform='log' needs inference 'map' or 'nuts'"):
        BenchSpec(
            problems=["flu"], strategies=["d-gpucb-mc"], inference="fixed", outcome_transform="log"
        )
    lip = BenchSpec(problems=["synthetic"], strategies=["d-gpucb-lipschitz"], copula=True)
    assert not lip.tasks() and "marginal only" in lip.skipped[0][2]


def test_bench_warps_the_inputs_of_the_component_and_composed_gps_only(tmp_path, capsys):
    import json

    from pp_decomp.apps.cli import main

    spec = BenchSpec(
        problems=["flu"], strategies=["d-gpucb", "gp-ucb", "random"], trials=1, input_warping=True
    )
    assert {t.strategy: t.input_warping for t in spec.tasks()} == {
        "d-gpucb": True,
        "gp-ucb": True,
        "random": False,
    }
    with pytest.raises(TypeError, match="input_warping must be True or False; got 'yes'"):
        BenchSpec(problems=["flu"], strategies=["random"], trials=1, input_warping="yes")
    args = ["bench", "--problems", "branin", "--strategies", "gp-ucb", "--trials", "1"]
    args += ["--iterations", "6", "--init", "5", "--quiet", "--out", str(tmp_path)]
    assert main([*args, "--input-warping"]) == 0
    run = xr.load_dataset(next(tmp_path.glob("runs/*/*/trial000.nc")))
    assert json.loads(run.attrs["settings"])["input_warping"] is True
    capsys.readouterr()
    assert main(args) == 2  # the same folder without the warp: refused, naming it
    assert "{'input_warping': True}, but" in capsys.readouterr().err


def test_the_local_pool_takes_a_process_per_core_this_process_may_run_on(monkeypatch):
    import concurrent.futures

    from pp_decomp.apps.bench import execute

    sizes = []

    class Pool(concurrent.futures.ThreadPoolExecutor):
        def __init__(self, workers, **kw):
            sizes.append(workers)
            super().__init__(workers)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Pool)
    monkeypatch.setattr(execute, "usable_cores", lambda: 1)  # as under `taskset -c 0`
    assert list(execute._finished([], "unused", None, None)) == []
    assert sizes == [1]
